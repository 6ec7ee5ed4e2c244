/* The NVIDIA backend's disassembly: cuobjdump's SASS for cubins and
 * fatbins, the entry's own text for PTX. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_backend.h"
#include "process.h"

/* ------------------------------------------------------------------ disasm */


static int ident_char(char ch)
{
    return ch == '_' || ch == '$' || ch == '.' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9');
}

static int names_kernel(const char *sym, const char *kernel)
{
    char plain[256];
    if (!strcmp(sym, kernel))
        return 1;
    hkc_plain_name(sym, plain, sizeof plain);
    return !strcmp(plain, kernel);
}

/* PTX has no SASS before the driver compiles it: show the kernel's PTX,
 * from its `.entry` line to the closing brace at the start of a line. */
static int ptx_entry(const char *ptx, const char *kernel, hkc_strbuf *out)
{
    for (const char *p = ptx; (p = strstr(p, ".entry")); p += 6) {
        const char *s = p + 6;
        if (*s != ' ' && *s != '\t')
            continue;
        while (*s == ' ' || *s == '\t')
            s++;
        const char *e = s;
        while (ident_char(*e))
            e++;
        char sym[512];
        if (e == s || (size_t)(e - s) >= sizeof sym)
            continue;
        memcpy(sym, s, (size_t)(e - s));
        sym[e - s] = 0;
        if (!names_kernel(sym, kernel))
            continue;
        const char *start = p;
        while (start > ptx && start[-1] != '\n')
            start--;
        const char *end = strstr(p, "\n}");
        end = end ? end + 2 : p + strlen(p);
        hkc_strbuf_printf(out, "// PTX of %s (the driver compiles it at load; for SASS load a cubin)\n", sym);
        hkc_strbuf_append(out, start, (size_t)(end - start));
        hkc_strbuf_puts(out, "\n");
        return 0;
    }
    hkc_strbuf_printf(out, "the PTX has no entry for kernel %s", kernel);
    return HK_ENOTFOUND;
}

/* Keeps the "Function : SYMBOL" sections of cuobjdump's output whose
 * symbol is the kernel (filtering here rather than with -fun, which wants
 * the exact symbol), with the "code for sm_XX" line above them. */
static int filter_sass(const char *all, const char *kernel, hkc_strbuf *out)
{
    int keep = 0, found = 0;
    const char *arch = NULL;
    size_t arch_len = 0;
    for (const char *line = all; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *t = line;
        while (t < line + len && (*t == ' ' || *t == '\t'))
            t++;
        if (!strncmp(t, "code for ", 9)) {
            arch = t;
            arch_len = (size_t)(line + len - t);
            keep = 0;
        } else if (!strncmp(t, "Function : ", 11)) {
            char sym[512];
            size_t n = (size_t)(line + len - (t + 11));
            while (n && (t[11 + n - 1] == ' ' || t[11 + n - 1] == '\r'))
                n--;
            keep = 0;
            if (n < sizeof sym) {
                memcpy(sym, t + 11, n);
                sym[n] = 0;
                keep = names_kernel(sym, kernel);
            }
            if (keep) {
                if (arch)
                    hkc_strbuf_printf(out, "%.*s\n", (int)arch_len, arch);
                found++;
            }
        } else if (!strncmp(t, "..........", 10)) {
            if (keep)
                hkc_strbuf_append(out, line, len + (nl ? 1 : 0));
            keep = 0;
            line = nl ? nl + 1 : NULL;
            continue;
        }
        if (keep)
            hkc_strbuf_append(out, line, len + (nl ? 1 : 0));
        line = nl ? nl + 1 : NULL;
    }
    return found;
}

int hkc_cuda_disasm(hkc_backend *be, const void *code, size_t size, const char *kernel,
                       hkc_strbuf *out)
{
    (void)be;
    cuda_image_kind kind = hkc_cuda_image_kind(code, size);
    if (kind == CUDA_IMAGE_UNKNOWN) {
        hkc_strbuf_puts(out, "not a cubin, PTX or fatbin");
        return HK_EFORMAT;
    }
    if (kind == CUDA_IMAGE_PTX) {
        char *text = malloc(size + 1);
        if (!text) {
            hkc_strbuf_puts(out, "out of memory");
            return HK_ENOMEM;
        }
        memcpy(text, code, size);
        text[size] = 0;
        int r = ptx_entry(text, kernel, out);
        free(text);
        return r;
    }
    char tool[4096];
    if (hkc_cuda_find_tool("cuobjdump", tool, sizeof tool) != 0) {
        hkc_strbuf_puts(out, "cuobjdump not found (install the CUDA toolkit or put it on PATH)");
        return HK_EUNSUPPORTED;
    }
    const char *tmpdir = getenv("TMPDIR");
    char path[4200];
    snprintf(path, sizeof path, "%s/hipkit-disasm-XXXXXX.%s", tmpdir && *tmpdir ? tmpdir : "/tmp",
             kind == CUDA_IMAGE_CUBIN ? "cubin" : "fatbin");
    int fd = mkstemps(path, kind == CUDA_IMAGE_CUBIN ? 6 : 7);
    if (fd < 0) {
        hkc_strbuf_printf(out, "cannot create a temporary file for cuobjdump: %s", strerror(errno));
        return HK_EIO;
    }
    const char *p = code;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, p + done, size - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            hkc_strbuf_printf(out, "writing %s: %s", path, strerror(errno));
            close(fd);
            unlink(path);
            return HK_EIO;
        }
        done += (size_t)w;
    }
    close(fd);
    char *argv[] = {tool, "-sass", path, NULL};
    hkc_strbuf all;
    hkc_strbuf_init(&all);
    int status = hkc_run_capture(argv, NULL, &all);
    unlink(path);
    int r = 0;
    if (status != 0) {
        hkc_strbuf_printf(out, status < 0 ? "cannot run %s: %s" : "%s failed: %s", tool,
                          status < 0 ? strerror(-status) : all.data);
        r = HK_EUNSUPPORTED;
    } else if (!filter_sass(all.data, kernel, out)) {
        hkc_strbuf_clear(out);
        hkc_strbuf_printf(out, "cuobjdump shows no function for kernel %s", kernel);
        r = HK_ENOTFOUND;
    }
    hkc_strbuf_free(&all);
    return r;
}
