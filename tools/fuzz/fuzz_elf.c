/* libFuzzer target: the ELF readers that run before anything is loaded: a
 * plugin's exports (elf_exports.c) and a host module's structure
 * (host_probe.c's check). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_exports.h"
#include "host_backend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy: ASan sees any read past the end */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    const char *names[] = {"hk_plugin_fill_abi", "hk_plugin_fill_init", "hk_host_kernels"};
    int found[3];
    hkc_elf_exports(copy, size, names, 3, found);
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    hkc_host_elf_check(copy, size, &err);
    hkc_strbuf_free(&err);
    free(copy);
    return 0;
}
