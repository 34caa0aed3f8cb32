#include "fuzz_driver.h"
#include <stdio.h>
#include <stdlib.h>

// Used only when libFuzzer is not linked in (a plain build): replay the named files.
__attribute__((weak)) int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size)) {
    for (int i = 1; i < *argc; i++) {
        FILE *file = fopen((*argv)[i], "rb");
        if (!file) { fprintf(stderr, "cannot open %s\n", (*argv)[i]); return 1; }
        fseek(file, 0, SEEK_END);
        long size = ftell(file);
        fseek(file, 0, SEEK_SET);
        uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
        size_t read = fread(data, 1, (size_t)size, file);
        fclose(file);
        callback(data, read);
        free(data);
        printf("replayed %s (%zu bytes)\n", (*argv)[i], read);
    }
    return 0;
}
