/* The AMD backend's disassembly: comgr's, of each entry of a code object
 * or bundle that holds the kernel. Needs no device. */
#include <stdlib.h>

#include "hip_backend.h"
#include "hip_codeobj.h"
#include "hip_comgr.h"

int hkc_hip_disasm(hkc_backend *be, const void *code, size_t size, const char *kernel,
                   hkc_strbuf *out)
{
    (void)be;
    hip_bundle_entry *ents = NULL;
    int n = 0, r = hkc_hip_entries_of(code, size, &ents, &n, out);
    if (r != 0)
        return r;
    int found = 0;
    hkc_strbuf part;
    hkc_strbuf_init(&part);
    for (int i = 0; i < n; i++) {
        hkc_strbuf_clear(&part);
        int ri = hkc_hip_comgr_disasm((const char *)code + ents[i].offset, ents[i].size,
                                      ents[i].target, kernel, &part);
        if (ri == HK_ENOTFOUND && n > 1)
            continue; /* a bundle entry without the kernel: the others may have it */
        if (ri != 0) {
            hkc_strbuf_clear(out);
            hkc_strbuf_puts(out, part.data);
            r = ri;
            break;
        }
        if (n > 1)
            hkc_strbuf_printf(out, "; ---- bundle entry %s (%s)\n", ents[i].id, ents[i].target);
        hkc_strbuf_puts(out, part.data);
        found++;
    }
    if (r == 0 && !found) {
        hkc_strbuf_printf(out, "no entry of the bundle has a kernel '%s'", kernel ? kernel : "");
        r = HK_ENOTFOUND;
    }
    hkc_strbuf_free(&part);
    free(ents);
    return r;
}
