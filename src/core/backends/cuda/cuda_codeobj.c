/* What an NVIDIA code object holds, read without the driver: its kind, a
 * cubin's SM architecture and its kernel entry points. Pure parsing of
 * bytes that may come from anywhere (a file, the cache), so every offset is
 * bounds-checked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"

#define ELF_EM_CUDA 190
#define ELF_SHT_SYMTAB 2
#define ELF_STT_FUNC 2
/* The st_other bit NVIDIA's tools set on __global__ entry points (both nvcc
 * and NVRTC cubins); device functions kept out of line lack it. */
#define ELF_STO_CUDA_ENTRY 0x10
#define FATBIN_MAGIC 0xBA55ED50u

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* A 64-bit little-endian ELF for EM_CUDA (cubins are never anything else). */
static int is_cubin(const unsigned char *d, size_t size)
{
    return size >= 64 && d[0] == 0x7f && d[1] == 'E' && d[2] == 'L' && d[3] == 'F' && d[4] == 2 &&
           d[5] == 1 && rd16(d + 18) == ELF_EM_CUDA;
}

/* PTX text: after blank space and // or block comments, the `.version`
 * directive (every PTX file starts with it); or `.target` at the start of a
 * line in the first 64 KiB (a fragment without a version). A word such as
 * dev.target inside other text is not enough. */
static int is_ptx(const char *s, size_t size)
{
    size_t i = 0;
    while (i < size) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
            i++;
        } else if (i + 1 < size && s[i] == '/' && s[i + 1] == '/') {
            while (i < size && s[i] != '\n')
                i++;
        } else if (i + 1 < size && s[i] == '/' && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < size && !(s[i] == '*' && s[i + 1] == '/'))
                i++;
            i += 2;
        } else {
            break;
        }
    }
    if (i < size && size - i >= 8 && !memcmp(s + i, ".version", 8))
        return 1;
    size_t lim = size < 65536 ? size : 65536;
    for (size_t k = 0; k + 7 <= lim; k++) {
        if (s[k] == '\0')
            return 0; /* binary, not text */
        if (!memcmp(s + k, ".target", 7) && (k == 0 || s[k - 1] == '\n') &&
            k + 7 < size && (s[k + 7] == ' ' || s[k + 7] == '\t'))
            return 1;
    }
    return 0;
}

cuda_image_kind hkc_cuda_image_kind(const void *data, size_t size)
{
    const unsigned char *d = data;
    if (!d || size < 4)
        return CUDA_IMAGE_UNKNOWN;
    if (is_cubin(d, size))
        return CUDA_IMAGE_CUBIN;
    if (rd32(d) == FATBIN_MAGIC)
        return CUDA_IMAGE_FATBIN;
    if (is_ptx(data, size))
        return CUDA_IMAGE_PTX;
    return CUDA_IMAGE_UNKNOWN;
}

/* e_flags of a cubin, found by compiling with nvcc -cubin and NVRTC (CUDA
 * 13.0) for sm_80/86/90/90a/100/120:
 *   sm_80 0x06005004, sm_86 0x06005604, sm_90(a) 0x06005a04,
 *   sm_100 0x06006402, sm_120 0x06007802.
 * With EI_ABIVERSION (byte 8) >= 8 (CUDA 12 and later) the SM number is bits
 * 8..15; the low byte and the top bits are ABI/feature flags (the "a"
 * variants are not told apart here). Older cubins (ABI version < 8) kept
 * the SM in bits 0..7. */
int hkc_cuda_cubin_arch(const void *data, size_t size)
{
    const unsigned char *d = data;
    if (!d || !is_cubin(d, size))
        return 0;
    uint32_t flags = rd32(d + 48);
    return d[8] >= 8 ? (int)((flags >> 8) & 0xff) : (int)(flags & 0xff);
}

/* A cubin's section header table, if it lies inside the file. */
static int section_table(const unsigned char *d, size_t size, uint64_t *shoff, uint16_t *shentsize,
                         uint16_t *shnum)
{
    *shoff = rd64(d + 40);
    *shentsize = rd16(d + 58);
    *shnum = rd16(d + 60);
    return *shentsize >= 64 && *shoff <= size && (uint64_t)*shnum * *shentsize <= size - *shoff;
}

/* The section called `name` of a cubin: its bytes' offset and size, both
 * inside the file; 0 when there is none. */
static int find_section(const unsigned char *d, size_t size, const char *name, uint64_t *off, uint64_t *sz)
{
    uint64_t shoff;
    uint16_t shentsize, shnum, shstrndx = rd16(d + 62);
    if (!section_table(d, size, &shoff, &shentsize, &shnum) || shstrndx >= shnum)
        return 0;
    const unsigned char *strsh = d + shoff + (uint64_t)shstrndx * shentsize;
    uint64_t stroff = rd64(strsh + 24), strsz = rd64(strsh + 32);
    if (stroff > size || strsz > size - stroff)
        return 0;
    size_t len = strlen(name) + 1;
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *sh = d + shoff + (uint64_t)i * shentsize;
        uint32_t nm = rd32(sh);
        uint64_t o = rd64(sh + 24), z = rd64(sh + 32);
        if (nm >= strsz || strsz - nm < len || memcmp(d + stroff + nm, name, len) || o > size || z > size - o)
            continue;
        *off = o;
        *sz = z;
        return 1;
    }
    return 0;
}

/* The attribute lists of .nv.compat and .nv.info* sections: a format byte,
 * an attribute byte, then by format: 1 nothing (2 bytes in all), 2 and 3 a
 * 16-bit value (4 bytes), 4 a 16-bit size and that many bytes. The next
 * entry at *p into a (value, payload, size); 0 at the end or at a format
 * not known here (padding). */
typedef struct nv_attr {
    unsigned attr, value;     /* value: formats 2 and 3 */
    const unsigned char *pay; /* format 4: its bytes, `value` of them */
    int fmt;
} nv_attr;

static int next_attr(const unsigned char *b, uint64_t sz, uint64_t *p, nv_attr *a)
{
    if (*p + 2 > sz)
        return 0;
    const unsigned char *e = b + *p;
    a->fmt = e[0];
    a->attr = e[1];
    a->value = 0;
    a->pay = NULL;
    if (e[0] == 1) {
        *p += 2;
    } else if ((e[0] == 2 || e[0] == 3) && *p + 4 <= sz) {
        a->value = rd16(e + 2);
        *p += 4;
    } else if (e[0] == 4 && *p + 4 <= sz && rd16(e + 2) <= sz - *p - 4) {
        a->value = rd16(e + 2);
        a->pay = e + 4;
        *p += 4 + (uint64_t)a->value;
    } else {
        return 0;
    }
    return 1;
}

/* Whether a cubin is for an architecture-specific target (sm_90a): e_flags
 * do not say (above), its .nv.compat section does. Attribute 9 is 1 in
 * cubins that nvcc and NVRTC (CUDA 13.0) made for sm_90a, sm_100a and
 * sm_120a and 0 for sm_90, sm_100 and sm_100f. */
#define NV_COMPAT_ARCH_SPECIFIC 9
int hkc_cuda_cubin_arch_specific(const void *data, size_t size)
{
    const unsigned char *d = data;
    uint64_t off, sz, p = 0;
    if (!d || !is_cubin(d, size) || !find_section(d, size, ".nv.compat", &off, &sz))
        return 0;
    nv_attr a;
    while (next_attr(d + off, sz, &p, &a))
        if ((a.fmt == 2 || a.fmt == 3) && a.attr == NV_COMPAT_ARCH_SPECIFIC)
            return a.value == 1;
    return 0;
}

/* A kernel's parameters, from its .nv.info.<symbol> section, as nvcc and
 * NVRTC (CUDA 12 and 13) write it: an EIATTR_KPARAM_INFO entry (0x17,
 * format 4, 12 bytes) a parameter, holding its ordinal (16 bits at 4), its
 * offset in the parameter space (16 bits at 6) and, in bits 18-31 of the
 * word at 8, its size; where the parameters pass 4 KiB (CUDA 12.1's large
 * kernel parameters) entries 0x45 instead, the same but for the whole word
 * at 8 being the size; EIATTR_CBANK_PARAM_SIZE (0x19) the space's size.
 * Found by compiling kernels of known C layout (char, double, short, long
 * long, pointers, structs and float4 by value) and reading the sections.
 * Fills k->args (unnamed and untyped: a cubin records neither) and
 * kernarg_size; leaves nargs -1 when the section is missing or its
 * ordinals are not 0..n-1 each once. 0, or HK_ENOMEM. */
#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_KPARAM_INFO_LARGE 0x45
#define EIATTR_CBANK_PARAM_SIZE 0x19
static int is_kparam(const nv_attr *a)
{
    return (a->attr == EIATTR_KPARAM_INFO || a->attr == EIATTR_KPARAM_INFO_LARGE) && a->pay && a->value >= 12;
}
static int kernel_params(const unsigned char *d, size_t size, const char *symbol, hk_code_kernel *k)
{
    k->nargs = -1;
    char sec[300];
    uint64_t off, sz, p;
    nv_attr a;
    if ((size_t)snprintf(sec, sizeof sec, ".nv.info.%s", symbol) >= sizeof sec ||
        !find_section(d, size, sec, &off, &sz))
        return 0;
    int n = 0;
    uint32_t end = 0, space = 0;
    for (p = 0; next_attr(d + off, sz, &p, &a);) {
        if (is_kparam(&a)) {
            unsigned ord = rd16(a.pay + 4);
            if (ord >= 4096)
                return 0;
            if ((int)ord + 1 > n)
                n = (int)ord + 1;
        } else if (a.attr == EIATTR_CBANK_PARAM_SIZE && (a.fmt == 2 || a.fmt == 3)) {
            space = a.value;
        }
    }
    for (; p < sz; p++) /* stopped before the end on more than padding: malformed */
        if (d[off + p])
            return 0;
    hk_code_arg *args = calloc(n ? (size_t)n : 1, sizeof *args);
    unsigned char *seen = calloc(n ? (size_t)n : 1, 1);
    if (!args || !seen) {
        free(args);
        free(seen);
        return HK_ENOMEM;
    }
    int ok = 1;
    for (p = 0; ok && next_attr(d + off, sz, &p, &a);) {
        if (!is_kparam(&a))
            continue;
        unsigned ord = rd16(a.pay + 4);
        hk_code_arg *g = &args[ord];
        ok = !seen[ord];
        seen[ord] = 1;
        g->offset = rd16(a.pay + 6);
        g->size = a.attr == EIATTR_KPARAM_INFO ? rd32(a.pay + 8) >> 18 : rd32(a.pay + 8);
        ok = ok && g->size <= 65536;
        if (g->offset + g->size > end)
            end = g->offset + g->size;
    }
    for (int i = 0; ok && i < n; i++)
        ok = seen[i];
    free(seen);
    if (!ok) {
        free(args);
        return 0;
    }
    k->args = args;
    k->nargs = n;
    k->kernarg_size = space > end ? space : end;
    return 0;
}

int hkc_cuda_cubin_kernels(const void *data, size_t size, char ***names, int *count)
{
    const unsigned char *d = data;
    *names = NULL;
    *count = 0;
    if (!d || !is_cubin(d, size))
        return HK_EFORMAT;
    uint64_t shoff;
    uint16_t shentsize, shnum;
    if (!section_table(d, size, &shoff, &shentsize, &shnum))
        return HK_EFORMAT;
    /* Two passes over the symbol tables: count and size, then copy. */
    size_t total = 0;
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        char **out = NULL;
        char *text = NULL;
        if (pass == 1) {
            out = malloc((size_t)n * sizeof *out + total + 1);
            if (!out)
                return HK_ENOMEM;
            text = (char *)(out + n);
            n = 0;
        }
        for (unsigned i = 0; i < shnum; i++) {
            const unsigned char *sh = d + shoff + (uint64_t)i * shentsize;
            if (rd32(sh + 4) != ELF_SHT_SYMTAB)
                continue;
            uint64_t off = rd64(sh + 24), sz = rd64(sh + 32), entsize = rd64(sh + 56);
            uint32_t link = rd32(sh + 40);
            if (entsize < 24 || off > size || sz > size - off || link >= shnum)
                return free(out), HK_EFORMAT;
            const unsigned char *strsh = d + shoff + (uint64_t)link * shentsize;
            uint64_t stroff = rd64(strsh + 24), strsz = rd64(strsh + 32);
            if (stroff > size || strsz > size - stroff)
                return free(out), HK_EFORMAT;
            const char *strtab = (const char *)d + stroff;
            for (uint64_t s = 0; s + entsize <= sz; s += entsize) {
                const unsigned char *sym = d + off + s;
                uint32_t nameoff = rd32(sym);
                unsigned char info = sym[4], other = sym[5];
                if ((info & 0xf) != ELF_STT_FUNC || !(other & ELF_STO_CUDA_ENTRY) ||
                    nameoff >= strsz)
                    continue;
                const char *name = strtab + nameoff;
                size_t len = strnlen(name, strsz - nameoff);
                if (len == 0 || len == strsz - nameoff)
                    continue; /* empty or not terminated inside the table */
                if (pass == 0) {
                    total += len + 1;
                } else {
                    memcpy(text, name, len + 1);
                    out[n] = text;
                    text += len + 1;
                }
                n++;
            }
        }
        if (pass == 1) {
            *names = out;
            *count = n;
        }
    }
    return 0;
}

int hkc_cuda_sm_parse(const char *t, int *spec)
{
    int dummy;
    int *sp = spec ? spec : &dummy;
    *sp = 0;
    if (strncmp(t, "sm_", 3) || t[3] < '0' || t[3] > '9')
        return 0;
    char *end;
    long v = strtol(t + 3, &end, 10);
    if (end[0] == 'a' && end[1] == '\0') {
        *sp = 1;
        end++;
    }
    if (*end || v < 10 || v > 9999) {
        *sp = 0;
        return 0;
    }
    return (int)v;
}

/* A cubin runs on devices of its major architecture with an equal or
 * higher minor; the closest minor ranks highest. An architecture-specific
 * cubin (sm_90a) runs on that architecture only (its features exist on no
 * other), and there it ranks above the exact plain one (1000, the core's
 * score for an identical name): it is what the JIT would make for the
 * device. */
int hkc_cuda_image_rank(const char *target, const char *dev)
{
    int ts, ds, t = hkc_cuda_sm_parse(target, &ts), d = hkc_cuda_sm_parse(dev, &ds);
    if (!t || !d || ds)
        return 0;
    if (ts)
        return t == d ? 1001 : 0;
    return t / 10 == d / 10 && t % 10 <= d % 10 ? 100 + t % 10 : 0;
}

static int inspect_cubin(const void *code, size_t size, hk_code_info *info, hkc_strbuf *err)
{
    char **names = NULL;
    int count = 0;
    int r = hkc_cuda_cubin_kernels(code, size, &names, &count);
    if (r != 0) {
        hkc_strbuf_puts(err, r == HK_ENOMEM ? "out of memory" : "a cubin whose symbol tables "
                                                               "cannot be read");
        return r;
    }
    hk_code_entry *e = calloc(1, sizeof *e);
    hk_code_kernel *ks = calloc(count ? (size_t)count : 1, sizeof *ks);
    if (!e || !ks) {
        free(e);
        free(ks);
        free(names);
        return HK_ENOMEM;
    }
    snprintf(e->target, sizeof e->target, "sm_%d%s", hkc_cuda_cubin_arch(code, size),
             hkc_cuda_cubin_arch_specific(code, size) ? "a" : "");
    e->size = size;
    for (int i = 0; i < count; i++) {
        hk_code_kernel *k = &ks[i];
        hkc_plain_name(names[i], k->name, sizeof k->name);
        snprintf(k->symbol, sizeof k->symbol, "%s", names[i]);
        /* what a cubin does not say */
        k->sgprs = k->vgprs = k->agprs = k->sgpr_spills = k->vgpr_spills = -1;
        k->wavefront_size = 32;
        if (r == 0)
            r = kernel_params(code, size, names[i], k);
    }
    free(names);
    if (r != 0) {
        for (int i = 0; i < count; i++)
            free(ks[i].args);
        free(ks);
        free(e);
        return r;
    }
    e->nkernels = count;
    e->kernels = ks;
    info->entries = e;
    info->nentries = 1;
    snprintf(info->format, sizeof info->format, "cubin");
    return 0;
}

int hkc_cuda_code_inspect(hkc_backend *be, const void *code, size_t size, hk_code_info **out,
                          hkc_strbuf *err)
{
    (void)be;
    cuda_image_kind kind = hkc_cuda_image_kind(code, size);
    if (kind == CUDA_IMAGE_UNKNOWN) {
        hkc_strbuf_puts(err, "not a cubin, fatbin or PTX");
        return HK_EFORMAT;
    }
    hk_code_info *info = calloc(1, sizeof *info);
    if (!info)
        return HK_ENOMEM;
    int r = 0;
    if (kind == CUDA_IMAGE_CUBIN)
        r = inspect_cubin(code, size, info, err);
    else /* the driver picks a fatbin's or PTX's code at load: named, not opened */
        snprintf(info->format, sizeof info->format, kind == CUDA_IMAGE_FATBIN ? "fatbin" : "ptx");
    if (r != 0) {
        free(info);
        return r;
    }
    *out = info;
    return 0;
}
