/* AMD code objects read from bytes alone: no ROCm library, no GPU. The
 * bytes may come from any file a user names, so every offset and size read
 * from them is checked against the buffer before it is used. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipkit/hipkit.h"
#include "hip_codeobj.h"

#define EM_X86_64 62
#define EM_AARCH64 183
#define EM_CUDA 190
#define EM_AMDGPU 224
#define ELFOSABI_AMDGPU_HSA 64
#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define BUNDLE_MAGIC_LEN 24
#define AMDGCN_TRIPLE "amdgcn-amd-amdhsa"

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* EF_AMDGPU_MACH values (LLVM's BinaryFormat/ELF.h); gfx941 and gfx942
 * came after LLVM 15. */
static const struct { uint8_t mach; const char *name; } machs[] = {
    {0x020, "gfx600"},  {0x021, "gfx601"},  {0x03a, "gfx602"},  {0x022, "gfx700"},
    {0x023, "gfx701"},  {0x024, "gfx702"},  {0x025, "gfx703"},  {0x026, "gfx704"},
    {0x03b, "gfx705"},  {0x028, "gfx801"},  {0x029, "gfx802"},  {0x02a, "gfx803"},
    {0x03c, "gfx805"},  {0x02b, "gfx810"},  {0x02c, "gfx900"},  {0x02d, "gfx902"},
    {0x02e, "gfx904"},  {0x02f, "gfx906"},  {0x030, "gfx908"},  {0x031, "gfx909"},
    {0x03f, "gfx90a"},  {0x032, "gfx90c"},  {0x040, "gfx940"},  {0x04b, "gfx941"},
    {0x04c, "gfx942"},  {0x033, "gfx1010"}, {0x034, "gfx1011"}, {0x035, "gfx1012"},
    {0x042, "gfx1013"}, {0x036, "gfx1030"}, {0x037, "gfx1031"}, {0x038, "gfx1032"},
    {0x039, "gfx1033"}, {0x03e, "gfx1034"}, {0x03d, "gfx1035"}, {0x045, "gfx1036"},
    {0x041, "gfx1100"}, {0x046, "gfx1101"}, {0x047, "gfx1102"}, {0x044, "gfx1103"},
};

/* ------------------------------------------------------------ kinds */

/* Shorter than an ELF64 header is a truncated file, whatever it claims. */
static int is_elf(const unsigned char *d, size_t size)
{
    return size >= 64 && d[0] == 0x7f && d[1] == 'E' && d[2] == 'L' && d[3] == 'F';
}

/* e_machine in the byte order the ELF states (EI_DATA 2 is big-endian). */
static unsigned elf_machine(const unsigned char *d)
{
    return d[5] == 2 ? (unsigned)(d[18] << 8 | d[19]) : rd16(d + 18);
}

hip_code_kind hkc_hip_code_kind(const void *data, size_t size)
{
    const unsigned char *d = data;
    if (size >= BUNDLE_MAGIC_LEN && !memcmp(d, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN))
        return HIP_CODE_BUNDLE;
    if (size >= 4 && !memcmp(d, "CCOB", 4))
        return HIP_CODE_COMPRESSED_BUNDLE;
    if (!is_elf(d, size))
        return HIP_CODE_UNKNOWN;
    /* Only ELF64 AMDGPU is a code object HIP loads; ELF32 AMDGPU is R600. */
    if (d[4] == 2 && d[5] == 1 && elf_machine(d) == EM_AMDGPU)
        return HIP_CODE_ELF;
    return HIP_CODE_OTHER_ELF;
}

/* Mostly printable ASCII or UTF-8 in the first 4 KiB: source, PTX, a log. */
static int looks_like_text(const unsigned char *d, size_t size)
{
    size_t n = size < 4096 ? size : 4096;
    for (size_t i = 0; i < n; i++)
        if ((d[i] < 0x20 && d[i] != '\n' && d[i] != '\r' && d[i] != '\t' && d[i] != '\f') ||
            d[i] == 0x7f)
            return 0;
    return 1;
}

static const char *describe_elf(const unsigned char *d)
{
    unsigned machine = elf_machine(d);
    unsigned type = d[5] == 2 ? (unsigned)(d[16] << 8 | d[17]) : rd16(d + 16);
    switch (machine) {
    case EM_AMDGPU:
        return d[4] == 2 ? "an AMDGPU ELF in big-endian byte order" : "a 32-bit AMDGPU ELF (R600)";
    case EM_CUDA:
        return "a cubin (NVIDIA code)";
    case EM_X86_64:
        return type == 3 ? "an x86-64 shared library (.so)"
               : type == 1 ? "an x86-64 object file" : "an x86-64 ELF";
    case EM_AARCH64:
        return "an AArch64 ELF";
    }
    return "an ELF for another machine";
}

const char *hkc_hip_code_describe(const void *data, size_t size)
{
    const unsigned char *d = data;
    switch (hkc_hip_code_kind(data, size)) {
    case HIP_CODE_ELF:
        return "an AMDGPU code object";
    case HIP_CODE_BUNDLE:
        return "a clang offload bundle";
    case HIP_CODE_COMPRESSED_BUNDLE:
        return "a compressed (CCOB) clang offload bundle";
    case HIP_CODE_OTHER_ELF:
        return describe_elf(d);
    case HIP_CODE_UNKNOWN:
        break;
    }
    if (size == 0)
        return "an empty file";
    if (size >= 4 && d[0] == 0x7f && !memcmp(d + 1, "ELF", 3))
        return "a truncated ELF (shorter than its 64-byte header)";
    if (size >= 4 && !memcmp(d, "BC\xc0\xde", 4))
        return "LLVM bitcode (not yet compiled to a code object)";
    if (size >= 4 && rd32(d) == 0xBA55ED50u)
        return "an NVIDIA fatbinary";
    return looks_like_text(d, size) ? "text" : "unrecognised binary data";
}

/* ------------------------------------------------------------ target ids */

static int parse_feature(const char *f, size_t n, hip_target *t, const char *id, hkc_strbuf *err)
{
    int sign = f[n - 1] == '+' || f[n - 1] == '-';
    size_t len = n - (size_t)sign;
    int *slot = len == 7 && !memcmp(f, "sramecc", 7) ? &t->sramecc
                : len == 5 && !memcmp(f, "xnack", 5) ? &t->xnack : NULL;
    if (!slot) {
        hkc_strbuf_printf(err, "target id '%s': unknown feature '%.*s' (known: sramecc, xnack)",
                          id, (int)len, f);
        return HK_EINVAL;
    }
    if (!sign) {
        hkc_strbuf_printf(err, "target id '%s': feature '%.*s' needs a '+' or '-' after its name "
                          "(%.*s+ or %.*s-)", id, (int)len, f, (int)len, f, (int)len, f);
        return HK_EINVAL;
    }
    if (*slot != -1) {
        hkc_strbuf_printf(err, "target id '%s': %.*s is given twice", id, (int)len, f);
        return HK_EINVAL;
    }
    *slot = f[len] == '+';
    return 0;
}

int hkc_hip_target_parse(const char *id, hip_target *out, hkc_strbuf *err)
{
    hip_target t = {.sramecc = -1, .xnack = -1};
    size_t n = strcspn(id, ":");
    /* gfx, a digit, then lower-case letters, digits and the inner dashes of
     * LLVM's generic targets (gfx10-3-generic). */
    int ok = n > 3 && !strncmp(id, "gfx", 3) && id[3] >= '0' && id[3] <= '9' && id[n - 1] != '-';
    for (size_t i = 3; ok && i < n; i++)
        ok = (id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'z') || id[i] == '-';
    if (!ok || n >= sizeof t.proc) {
        hkc_strbuf_printf(err, "target id '%s': processor '%.*s' is not an AMD gfx processor "
                          "name such as gfx90a or gfx1030", id, (int)n, id);
        return HK_EINVAL;
    }
    memcpy(t.proc, id, n);
    for (const char *p = id + n; *p == ':'; p += n) {
        p++;
        n = strcspn(p, ":");
        if (n == 0) {
            hkc_strbuf_printf(err, "target id '%s': empty feature after ':'", id);
            return HK_EINVAL;
        }
        int rc = parse_feature(p, n, &t, id, err);
        if (rc)
            return rc;
    }
    *out = t;
    return 0;
}

void hkc_hip_target_format(const hip_target *t, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s", t->proc,
             t->sramecc < 0 ? "" : t->sramecc ? ":sramecc+" : ":sramecc-",
             t->xnack < 0 ? "" : t->xnack ? ":xnack+" : ":xnack-");
}

static int targets_compatible(const hip_target *code, const hip_target *dev)
{
    return !strcmp(code->proc, dev->proc) &&
           (code->sramecc < 0 || code->sramecc == dev->sramecc) &&
           (code->xnack < 0 || code->xnack == dev->xnack);
}

/* 0: code does not run on dev; else higher is closer: an exact match, then
 * code stating more of the device's features (built for this setting). */
static int rank(const hip_target *code, const hip_target *dev)
{
    if (!targets_compatible(code, dev))
        return 0;
    if (code->sramecc == dev->sramecc && code->xnack == dev->xnack)
        return 4;
    return 1 + (code->sramecc >= 0) + (code->xnack >= 0);
}

int hkc_hip_target_rank(const char *code, const char *dev)
{
    hip_target c, d;
    hkc_strbuf ignored;
    hkc_strbuf_init(&ignored);
    int r = hkc_hip_target_parse(code, &c, &ignored) || hkc_hip_target_parse(dev, &d, &ignored)
                ? 0
                : rank(&c, &d);
    hkc_strbuf_free(&ignored);
    return r;
}

int hkc_hip_image_rank(const char *code, const char *dev)
{
    int r = hkc_hip_target_rank(code, dev);
    return r ? 100 + r : 0;
}

int hkc_hip_target_compatible(const char *code, const char *dev)
{
    hip_target c, d;
    hkc_strbuf ignored;
    hkc_strbuf_init(&ignored);
    int ok = !hkc_hip_target_parse(code, &c, &ignored) &&
             !hkc_hip_target_parse(dev, &d, &ignored) && targets_compatible(&c, &d);
    hkc_strbuf_free(&ignored);
    return ok;
}

/* ------------------------------------------------------------ ELF header */

int hkc_hip_elf_target(const void *data, size_t size, char *out, size_t cap, hkc_strbuf *err)
{
    const unsigned char *d = data;
    if (hkc_hip_code_kind(data, size) != HIP_CODE_ELF) {
        hkc_strbuf_printf(err, "not an AMDGPU ELF: this is %s", hkc_hip_code_describe(data, size));
        return -1;
    }
    uint32_t flags = rd32(d + 48);
    unsigned osabi = d[7], abi = d[8], mach = flags & 0xff;
    hip_target t = {.sramecc = -1, .xnack = -1};
    for (size_t i = 0; i < sizeof machs / sizeof *machs; i++)
        if (machs[i].mach == mach)
            snprintf(t.proc, sizeof t.proc, "%s", machs[i].name);
    if (!t.proc[0]) {
        hkc_strbuf_printf(err, "AMDGPU ELF for an unknown processor: EF_AMDGPU_MACH 0x%03x%s", mach,
                          mach && mach < 0x20 ? " is an R600 GPU, which HIP does not run" : "");
        return -1;
    }
    if (osabi == ELFOSABI_AMDGPU_HSA && abi >= 2) {
        /* Code object v4+: two bits each, unsupported / any / off / on. */
        unsigned x = flags & 0x300, s = flags & 0xc00;
        t.xnack = x == 0x300 ? 1 : x == 0x200 ? 0 : -1;
        t.sramecc = s == 0xc00 ? 1 : s == 0x800 ? 0 : -1;
    } else if (osabi == ELFOSABI_AMDGPU_HSA && abi == 0) {
        t.xnack = flags & 0x01 ? 1 : -1; /* v2: only xnack, one bit */
    } else {
        /* v3 (and PAL/Mesa): one bit each; clear cannot tell off from any. */
        t.xnack = flags & 0x100 ? 1 : -1;
        t.sramecc = flags & 0x200 ? 1 : -1;
    }
    hkc_hip_target_format(&t, out, cap);
    return 0;
}

/* ------------------------------------------------------------ bundles */

/* For the device's target when the caller knows it, else "<target>". */
static void compressed_message(hkc_strbuf *err, const char *target)
{
    hkc_strbuf_printf(err, "this is a compressed (CCOB) clang offload bundle, which hipkit does "
                      "not unpack: rebuild it without compression (drop --offload-compress or "
                      "add --no-offload-compress), or with hipkit compile FILE.hip "
                      "--offload-arch %s", target ? target : "<target>");
}

/* Just past "-amdgcn-amd-amdhsa" in an entry id "<kind>-amdgcn-amd-amdhsa-
 * <env>-<target>", or NULL when the entry is for another triple. */
static const char *amdgcn_triple_end(const char *id)
{
    const char *t = strstr(id, "-" AMDGCN_TRIPLE);
    if (!t || t == id)
        return NULL;
    t += 1 + strlen(AMDGCN_TRIPLE);
    return *t == 0 || *t == '-' ? t : NULL;
}

/* The target id of an entry: what follows the triple past its '-'
 * separators (one in old ids, two in hipv4 ones); "" for other triples. */
static const char *entry_target(const char *id)
{
    const char *t = amdgcn_triple_end(id);
    if (!t)
        return "";
    while (*t == '-')
        t++;
    return t;
}

int hkc_hip_bundle_parse(const void *data, size_t size, hip_bundle_entry **entries, int *count,
                         hkc_strbuf *err)
{
    const unsigned char *d = data;
    *entries = NULL;
    *count = 0;
    hip_code_kind kind = hkc_hip_code_kind(data, size);
    if (kind == HIP_CODE_COMPRESSED_BUNDLE) {
        compressed_message(err, NULL);
        return -1;
    }
    if (kind != HIP_CODE_BUNDLE) {
        hkc_strbuf_printf(err, "not a clang offload bundle: this is %s",
                          hkc_hip_code_describe(data, size));
        return -1;
    }
    if (size < BUNDLE_MAGIC_LEN + 8) {
        hkc_strbuf_printf(err, "truncated offload bundle: %zu bytes, its header needs %d", size,
                          BUNDLE_MAGIC_LEN + 8);
        return -1;
    }
    uint64_t n = rd64(d + BUNDLE_MAGIC_LEN);
    size_t pos = BUNDLE_MAGIC_LEN + 8;
    /* Each entry header takes at least 24 bytes: a bound before malloc. */
    if (n > (size - pos) / 24 || n > INT32_MAX) {
        hkc_strbuf_printf(err, "truncated or corrupt offload bundle: it claims %llu entries but "
                          "its %zu bytes hold at most %zu", (unsigned long long)n, size,
                          (size - pos) / 24);
        return -1;
    }
    hip_bundle_entry *e = calloc(n ? n : 1, sizeof *e);
    if (!e) {
        hkc_strbuf_puts(err, "out of memory reading an offload bundle");
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (size - pos < 24) {
            hkc_strbuf_printf(err, "truncated offload bundle: entry %llu's header runs past the "
                              "end (%zu bytes)", (unsigned long long)i, size);
            goto fail;
        }
        uint64_t off = rd64(d + pos), len = rd64(d + pos + 8), idlen = rd64(d + pos + 16);
        pos += 24;
        if (idlen > size - pos) {
            hkc_strbuf_printf(err, "truncated offload bundle: entry %llu's id (%llu bytes) runs "
                              "past the end (%zu bytes)", (unsigned long long)i,
                              (unsigned long long)idlen, size);
            goto fail;
        }
        if (idlen == 0 || idlen >= sizeof e[i].id) {
            hkc_strbuf_printf(err, "corrupt offload bundle: entry %llu's id is %llu bytes long "
                              "(1 to %zu expected)", (unsigned long long)i,
                              (unsigned long long)idlen, sizeof e[i].id - 1);
            goto fail;
        }
        for (uint64_t k = 0; k < idlen; k++)
            if (d[pos + k] < 0x20 || d[pos + k] > 0x7e) {
                hkc_strbuf_printf(err, "corrupt offload bundle: entry %llu's id is not printable "
                                  "text", (unsigned long long)i);
                goto fail;
            }
        memcpy(e[i].id, d + pos, idlen);
        pos += idlen;
        /* clang writes an empty host entry whose offset may be anything;
         * nothing is read from an empty entry, so only clamp it. */
        if (len && (off > size || len > size - off)) {
            hkc_strbuf_printf(err, "truncated or corrupt offload bundle: entry '%s' (%llu bytes "
                              "at offset %llu) runs past the end of the file (%zu bytes)",
                              e[i].id, (unsigned long long)len, (unsigned long long)off, size);
            goto fail;
        }
        e[i].offset = off < size ? off : size;
        e[i].size = len;
        /* Valid target ids are under 50 bytes: cutting a longer one keeps
         * it invalid. */
        snprintf(e[i].target, sizeof e[i].target, "%s", entry_target(e[i].id));
    }
    *entries = e;
    *count = (int)n;
    return 0;
fail:
    free(e);
    return -1;
}

/* "gfx90a, gfx1030" for a message. */
static void list_targets(hkc_strbuf *s, const hip_bundle_entry *e, int n)
{
    for (int i = 0; i < n; i++)
        hkc_strbuf_printf(s, "%s%s", i ? ", " : "", e[i].target[0] ? e[i].target : e[i].id);
}

int hkc_hip_code_entries(const void *data, size_t size, hip_bundle_entry **entries, int *count,
                         hkc_strbuf *err)
{
    *entries = NULL;
    *count = 0;
    switch (hkc_hip_code_kind(data, size)) {
    case HIP_CODE_ELF: {
        hip_bundle_entry *e = calloc(1, sizeof *e);
        if (!e) {
            hkc_strbuf_puts(err, "out of memory");
            return -1;
        }
        if (hkc_hip_elf_target(data, size, e->target, sizeof e->target, err)) {
            free(e);
            return -1;
        }
        e->size = size;
        *entries = e;
        *count = 1;
        return 0;
    }
    case HIP_CODE_BUNDLE:
        break;
    case HIP_CODE_COMPRESSED_BUNDLE:
        compressed_message(err, NULL);
        return -1;
    case HIP_CODE_OTHER_ELF:
    case HIP_CODE_UNKNOWN:
        hkc_strbuf_printf(err, "this is %s, not an AMD code object",
                          hkc_hip_code_describe(data, size));
        return -1;
    }
    hip_bundle_entry *all;
    int n, kept = 0;
    if (hkc_hip_bundle_parse(data, size, &all, &n, err))
        return -1;
    for (int i = 0; i < n; i++)
        if (amdgcn_triple_end(all[i].id))
            all[kept++] = all[i];
    if (!kept) {
        hkc_strbuf_puts(err, "the offload bundle holds no AMDGPU code object; its entries: ");
        for (int i = 0; i < n; i++)
            hkc_strbuf_printf(err, "%s%s", i ? ", " : "", all[i].id);
        if (!n)
            hkc_strbuf_puts(err, "none");
        free(all);
        return -1;
    }
    *entries = all;
    *count = kept;
    return 0;
}

int hkc_hip_pick(const void *data, size_t size, const char *dev_target, const void **elf,
                 size_t *elf_size, char *picked, size_t picked_cap, hkc_strbuf *err)
{
    hip_target dev, code;
    char want[96];
    hip_bundle_entry *e;
    int n, best = -1, best_score = -1;
    hkc_strbuf ignored;
    if (hkc_hip_target_parse(dev_target, &dev, err))
        return -1;
    hkc_hip_target_format(&dev, want, sizeof want);
    if (hkc_hip_code_kind(data, size) == HIP_CODE_COMPRESSED_BUNDLE) {
        compressed_message(err, want);
        return -1;
    }
    if (hkc_hip_code_entries(data, size, &e, &n, err))
        return -1;
    hkc_strbuf_init(&ignored);
    /* Exact first; among compatible ones, the one stating most features
     * (it was built for this setting), then the first in the file. */
    for (int i = 0; i < n; i++) {
        if (hkc_hip_target_parse(e[i].target, &code, &ignored))
            continue;
        int score = rank(&code, &dev);
        if (score > 0 && score > best_score) {
            best = i;
            best_score = score;
        }
    }
    hkc_strbuf_free(&ignored);
    if (best < 0) {
        hkc_strbuf_printf(err, "no code object in this file runs on a %s device: it holds ", want);
        list_targets(err, e, n);
        hkc_strbuf_printf(err, " (a match needs processor %s, and xnack/sramecc either left out "
                          "or equal to the device's). Rebuild it for this device: hipkit compile "
                          "FILE.hip --offload-arch %s", dev.proc, want);
        free(e);
        return -1;
    }
    const unsigned char *d = data;
    const void *p = d + e[best].offset;
    if (hkc_hip_code_kind(p, e[best].size) != HIP_CODE_ELF) {
        hkc_strbuf_printf(err, "the bundle entry '%s' for %s is %s, not an AMDGPU ELF code object",
                          e[best].id, e[best].target, hkc_hip_code_describe(p, e[best].size));
        free(e);
        return -1;
    }
    *elf = p;
    *elf_size = e[best].size;
    if (picked && picked_cap)
        snprintf(picked, picked_cap, "%s", e[best].target);
    free(e);
    return 0;
}
