/* libFuzzer target: the checks hip_comgr.c runs on an AMDGPU ELF before
 * comgr reads its metadata (ELF headers, every metadata note's msgpack),
 * and comgr's metadata reader on what passes them, as hk.inspect and
 * hk.load read a user's code object. comgr 2.4 traps (SIGILL) or exits on
 * some malformed input: whatever the checks let through must read cleanly,
 * so a crash here is a gap in the checks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hip_comgr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    hk_code_entry entry;
    memset(&entry, 0, sizeof entry);
    if (hkc_hip_comgr_kernels(copy, size, &entry, &err) == 0) {
        for (int i = 0; i < entry.nkernels; i++)
            free(entry.kernels[i].args);
        free(entry.kernels);
    }
    hkc_strbuf_free(&err);
    free(copy);
    return 0;
}
