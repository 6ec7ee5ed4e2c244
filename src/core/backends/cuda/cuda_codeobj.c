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

/* Whether a cubin is for an architecture-specific target (sm_90a): e_flags
 * do not say (above), its .nv.compat section does. Its entries are a format
 * byte, an attribute byte and a value: formats 2 and 3 a 16-bit value
 * (4 bytes in all), 4 a 16-bit size and that many bytes, 1 none (2 bytes).
 * Attribute 9 is 1 in cubins that nvcc and NVRTC (CUDA 13.0) made for
 * sm_90a, sm_100a and sm_120a and 0 for sm_90, sm_100 and sm_100f. */
#define NV_COMPAT_ARCH_SPECIFIC 9
int hkc_cuda_cubin_arch_specific(const void *data, size_t size)
{
    const unsigned char *d = data;
    if (!d || !is_cubin(d, size))
        return 0;
    uint64_t shoff;
    uint16_t shentsize, shnum, shstrndx = rd16(d + 62);
    if (!section_table(d, size, &shoff, &shentsize, &shnum) || shstrndx >= shnum)
        return 0;
    const unsigned char *strsh = d + shoff + (uint64_t)shstrndx * shentsize;
    uint64_t stroff = rd64(strsh + 24), strsz = rd64(strsh + 32);
    if (stroff > size || strsz > size - stroff)
        return 0;
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *sh = d + shoff + (uint64_t)i * shentsize;
        uint32_t name = rd32(sh);
        uint64_t off = rd64(sh + 24), sz = rd64(sh + 32);
        if (name >= strsz || strsz - name < sizeof ".nv.compat" ||
            memcmp(d + stroff + name, ".nv.compat", sizeof ".nv.compat") || off > size ||
            sz > size - off)
            continue;
        for (uint64_t p = 0; p + 2 <= sz;) {
            const unsigned char *e = d + off + p;
            if (e[0] == 1) {
                p += 2;
            } else if ((e[0] == 2 || e[0] == 3) && p + 4 <= sz) {
                if (e[1] == NV_COMPAT_ARCH_SPECIFIC)
                    return rd16(e + 2) == 1;
                p += 4;
            } else if (e[0] == 4 && p + 4 <= sz) {
                p += 4 + (uint64_t)rd16(e + 2);
            } else {
                break; /* padding at the end, or a format not known here */
            }
        }
    }
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
        /* what a cubin's symbol table does not say */
        k->sgprs = k->vgprs = k->agprs = k->sgpr_spills = k->vgpr_spills = -1;
        k->wavefront_size = 32;
    }
    free(names);
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
