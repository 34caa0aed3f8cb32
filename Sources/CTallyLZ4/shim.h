#include <lz4.h>
#include <stddef.h>
#include <stdint.h>

// One-shot SHA-256 from the BoringSSL that swift-crypto vendors and links into every Tally
// binary (its symbols carry the CCryptoBoringSSL_ prefix). Swift-crypto's `SHA256.hash`
// allocates a digest context per call, which is most of the cost of hashing a ~160-byte
// event; this entry point hashes on the stack with the same (hardware-accelerated) code.
// `EventCodec.hash` uses it; a test checks it against swift-crypto on random inputs.
uint8_t *CCryptoBoringSSL_SHA256(const uint8_t *data, size_t len, uint8_t out[32]);

// CRC-32C with the SSE 4.2 `crc32` instruction (8 bytes per instruction), for `CRC32C`;
// `tally_crc32c_hardware_available` says whether this CPU has it (on other CPUs, and on other
// architectures, Swift's table-driven code runs instead). A test checks both on random inputs.
#if defined(__x86_64__)
#include <cpuid.h>
#include <string.h>

static inline int tally_crc32c_hardware_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
static inline uint32_t tally_crc32c_hardware(uint32_t crc, const uint8_t *bytes, size_t count) {
    uint64_t state = ~crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        state = __builtin_ia32_crc32di(state, word);
        bytes += 8;
        count -= 8;
    }
    uint32_t tail = (uint32_t)state;
    while (count > 0) {
        tail = __builtin_ia32_crc32qi(tail, *bytes);
        bytes += 1;
        count -= 1;
    }
    return ~tail;
}
#else
static inline int tally_crc32c_hardware_available(void) { return 0; }
static inline uint32_t tally_crc32c_hardware(uint32_t crc, const uint8_t *bytes, size_t count) { return crc; }
#endif

// Starts writing a file's dirty pages to disk without waiting for them (Linux
// `sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)`, which Swift's Glibc module does not
// declare); 0 on success, -1 with errno otherwise, and 0 where there is no such call.
#include <unistd.h>
#include <sys/syscall.h>
static inline int tally_start_writeback(int fd) {
#if defined(__linux__) && defined(SYS_sync_file_range)
    return (int)syscall(SYS_sync_file_range, fd, (long long)0, (long long)0, 2u /* SYNC_FILE_RANGE_WRITE */);
#else
    (void)fd;
    return 0;
#endif
}
