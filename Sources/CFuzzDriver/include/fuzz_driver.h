#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point (`-sanitize=fuzzer` links the real one). Without libFuzzer the weak
/// fallback in fuzz_driver.c runs the callback once over each file named on the command line,
/// so a fuzz binary built normally still replays crash inputs.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
