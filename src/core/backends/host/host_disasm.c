/* Disassembly on the CPU backend: objdump over the module's shared object,
 * keeping the functions that belong to one kernel (its own body and the
 * generated block runner it is inlined into). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_backend.h"
#include "process.h"

/* Does the demangled symbol name the kernel (as a whole word)? */
static int names_kernel(const char *sym, size_t len, const char *kernel)
{
    size_t k = strlen(kernel);
    for (size_t i = 0; i + k <= len; i++) {
        if (strncmp(sym + i, kernel, k))
            continue;
        char before = i ? sym[i - 1] : ' ', after = i + k < len ? sym[i + k] : ' ';
        int word = !(before == '_' || (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
                     (before >= '0' && before <= '9')) &&
                   !(after == '_' || (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') ||
                     (after >= '0' && after <= '9'));
        if (word)
            return 1;
    }
    return 0;
}

int hkc_host_disasm(hkc_backend *be, const void *code, size_t size, const char *kernel,
                    hkc_strbuf *out)
{
    host_impl *h = be->impl;
    int r = hkc_host_workdir(h, out);
    if (r)
        return r;
    char path[4200];
    snprintf(path, sizeof path, "%s/disasm-%u.so", h->workdir, h->serial++);
    int e = hkc_host_write_file(path, code, size);
    if (e) {
        hkc_strbuf_printf(out, "cannot write %s: %s", path, strerror(-e));
        return HK_EIO;
    }
    char *argv[] = {"objdump", "-d", "-C", "--no-show-raw-insn", path, NULL};
    hkc_strbuf all;
    hkc_strbuf_init(&all);
    int status = hkc_run_capture(argv, NULL, &all);
    unlink(path);
    if (status != 0) {
        hkc_strbuf_clear(out);
        hkc_strbuf_printf(out, status < 0 ? "cannot run objdump (binutils) to disassemble: %s"
                                          : "objdump failed: %s",
                          status < 0 ? strerror(-status) : all.data);
        hkc_strbuf_free(&all);
        return HK_EUNSUPPORTED;
    }
    /* Functions start with "ADDR <symbol>:" and end at a blank line. */
    int keep = 0, found = 0;
    for (char *line = all.data; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *lt = memchr(line, '<', len);
        if (lt && len > 2 && line[len - 1] == ':' && line[len - 2] == '>' && line[0] != ' ') {
            keep = names_kernel(lt + 1, (size_t)(line + len - 2 - (lt + 1)), kernel);
            found += keep;
        }
        if (keep)
            hkc_strbuf_append(out, line, len + (nl ? 1 : 0));
        if (len == 0)
            keep = 0;
        line = nl ? nl + 1 : NULL;
    }
    hkc_strbuf_free(&all);
    if (!found) {
        hkc_strbuf_printf(out, "objdump shows no function for kernel %s", kernel);
        return HK_ENOTFOUND;
    }
    return 0;
}
