/* libFuzzer target: AMD code objects and clang offload bundles, as
 * hk.inspect, hipkit inspect and hk.load read a user's file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hip_codeobj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    hip_bundle_entry *e = NULL;
    int n = 0;
    if (hkc_hip_code_entries(copy, size, &e, &n, &err) == 0) {
        for (int i = 0; i < n; i++) {
            char target[96];
            hkc_strbuf_clear(&err);
            if (e[i].offset <= size && e[i].size <= size - e[i].offset)
                hkc_hip_elf_target(copy + e[i].offset, e[i].size, target, sizeof target, &err);
        }
        free(e);
    }
    hkc_hip_code_describe(copy, size);
    hkc_strbuf_free(&err);
    free(copy);
    return 0;
}
