/* The AMD code-object reader without ROCm or a GPU: synthetic ELF headers
 * and offload bundles built in memory (well-formed, truncated, hostile),
 * the target-id rules, and, when hipcc is on PATH, real code objects and
 * bundles compiled by it. Every buffer handed to the reader is malloc'd at
 * its exact size so ASan and valgrind catch a read past its end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hipkit/hipkit.h"
#include "hip_codeobj.h"
#include "../tap.h"

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

static void put16(unsigned char *p, unsigned v) { p[0] = v & 0xff, p[1] = (v >> 8) & 0xff; }
static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (v >> (8 * i)) & 0xff;
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (v >> (8 * i)) & 0xff;
}

static unsigned char *dup_bytes(const void *data, size_t size)
{
    unsigned char *p = malloc(size ? size : 1);
    memcpy(p, data, size);
    return p;
}

/* A 64-byte ELF header: only the fields the reader looks at. */
static void make_elf(unsigned char *h, int cls, unsigned machine, unsigned type, unsigned osabi,
                     unsigned abi, uint32_t flags)
{
    memset(h, 0, 64);
    memcpy(h, "\x7f" "ELF", 4);
    h[4] = (unsigned char)cls;
    h[5] = 1;
    h[6] = 1;
    h[7] = (unsigned char)osabi;
    h[8] = (unsigned char)abi;
    put16(h + 16, type);
    put16(h + 18, machine);
    put32(h + 48, flags);
}

static unsigned char *amd_elf(uint32_t flags)
{
    unsigned char h[64];
    make_elf(h, 2, 224, 3, 64, 2, flags);
    return dup_bytes(h, 64);
}

/* ------------------------------------------------------------ bundles */

typedef struct bent {
    const char *id;
    const void *data;
    size_t size;
} bent;

/* An uncompressed bundle laid out as clang does: header, then payloads at
 * 8-byte aligned offsets, the last one ending the file. */
static unsigned char *make_bundle(const bent *e, int n, size_t *size)
{
    size_t hdr = 24 + 8, total;
    for (int i = 0; i < n; i++)
        hdr += 24 + strlen(e[i].id);
    total = hdr;
    for (int i = 0; i < n; i++)
        total = (e[i].size ? (total + 7) & ~(size_t)7 : total) + e[i].size;
    unsigned char *b = calloc(1, total ? total : 1);
    memcpy(b, "__CLANG_OFFLOAD_BUNDLE__", 24);
    put64(b + 24, (uint64_t)n);
    size_t pos = 32, data = hdr;
    for (int i = 0; i < n; i++) {
        if (e[i].size)
            data = (data + 7) & ~(size_t)7;
        put64(b + pos, data);
        put64(b + pos + 8, e[i].size);
        put64(b + pos + 16, strlen(e[i].id));
        memcpy(b + pos + 24, e[i].id, strlen(e[i].id));
        pos += 24 + strlen(e[i].id);
        if (e[i].size)
            memcpy(b + data, e[i].data, e[i].size);
        data += e[i].size;
    }
    *size = total;
    return b;
}

/* Where entry i's header (offset, size, id length, id) starts. */
static unsigned char *entry_header(unsigned char *b, int i)
{
    unsigned char *p = b + 32;
    while (i--) {
        uint64_t idlen = 0;
        for (int k = 7; k >= 0; k--)
            idlen = idlen << 8 | p[16 + k];
        p += 24 + idlen;
    }
    return p;
}

static hkc_strbuf parse_err;

/* hkc_hip_bundle_parse on an exact-size copy; *msg gets the error. */
static int parse(const void *data, size_t size, hip_bundle_entry **e, int *n, const char **msg)
{
    hkc_strbuf_clear(&parse_err);
    unsigned char *copy = dup_bytes(data, size);
    int rc = hkc_hip_bundle_parse(copy, size, e, n, &parse_err);
    free(copy);
    *msg = parse_err.data;
    return rc;
}

static void test_bundles(void)
{
    unsigned char *e90a = amd_elf(0x23f), *e1030 = amd_elf(0x036), *e906 = amd_elf(0x42f);
    const bent ents[] = {
        {"host-x86_64-unknown-linux", NULL, 0},
        {"hipv4-amdgcn-amd-amdhsa--gfx1030", e1030, 64},
        {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", e90a, 64},
        {"hip-amdgcn-amd-amdhsa-gfx906", e906, 64},
        {"openmp-amdgcn-amd-amdhsa--gfx90a", e90a, 64},
        {"host-x86_64-unknown-linux-gnu", "hostcode", 8},
    };
    size_t size;
    unsigned char *b = make_bundle(ents, 6, &size);
    hip_bundle_entry *e = NULL;
    int n;
    const char *msg;

    int rc = parse(b, size, &e, &n, &msg);
    tap_ok(rc == 0 && n == 6, "a 6-entry bundle parses (%s)", rc ? msg : "ok");
    if (rc == 0 && n == 6) {
        static const char *targets[] = {"", "gfx1030", "gfx90a:xnack-", "gfx906", "gfx90a", ""};
        int ok = 1;
        for (int i = 0; i < 6; i++) {
            ok &= !strcmp(e[i].id, ents[i].id) && !strcmp(e[i].target, targets[i]) &&
                  e[i].size == ents[i].size;
            ok &= !e[i].size || !memcmp(b + e[i].offset, ents[i].data, e[i].size);
            if (!ok)
                tap_diag("entry %d: id '%s' target '%s' size %zu", i, e[i].id, e[i].target,
                         e[i].size);
        }
        tap_ok(ok, "ids, targets (new, old, openmp and host ids), offsets and sizes read back");
    }
    free(e);

    /* code_entries keeps the amdgcn ones, in file order. */
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    rc = hkc_hip_code_entries(b, size, &e, &n, &err);
    tap_ok(rc == 0 && n == 4 && !strcmp(e[0].target, "gfx1030") && !strcmp(e[3].target, "gfx90a"),
           "code_entries keeps the 4 amdgcn entries (%s)", rc ? err.data : "ok");
    free(e);
    hkc_strbuf_clear(&err);

    /* Every cut of the file short of its end is refused, never over-read. */
    int all_fail = 1, all_msg = 1;
    for (size_t cut = 0; cut < size; cut++) {
        all_fail &= parse(b, cut, &e, &n, &msg) == -1 && e == NULL;
        all_msg &= msg[0] != 0;
    }
    tap_ok(all_fail && all_msg, "all %zu truncations fail with a message", size);
    parse(b, 40, &e, &n, &msg);
    tap_ok(contains(msg, "truncated"), "a cut header says truncated: %s", msg);
    parse(b, size - 1, &e, &n, &msg);
    tap_ok(contains(msg, "past the end") && contains(msg, "host-x86_64-unknown-linux-gnu"),
           "a cut payload names the entry: %s", msg);

    /* Hostile headers. */
    unsigned char *h = dup_bytes(b, size);
    put64(entry_header(h, 2), size + 8);
    rc = parse(h, size, &e, &n, &msg);
    tap_ok(rc == -1 && contains(msg, "gfx90a:xnack-") && contains(msg, "past the end"),
           "an offset past the end: %s", msg);
    memcpy(h, b, size);
    put64(entry_header(h, 2) + 8, UINT64_MAX - 8);
    rc = parse(h, size, &e, &n, &msg);
    tap_ok(rc == -1 && contains(msg, "past the end"), "a size that wraps around: %s", msg);
    memcpy(h, b, size);
    put64(h + 24, (uint64_t)1 << 40);
    rc = parse(h, size, &e, &n, &msg);
    tap_ok(rc == -1 && contains(msg, "claims 1099511627776 entries"), "a huge entry count: %s",
           msg);
    memcpy(h, b, size);
    put64(entry_header(h, 1) + 16, UINT64_MAX);
    rc = parse(h, size, &e, &n, &msg);
    tap_ok(rc == -1 && contains(msg, "entry 1's id"), "a huge id length: %s", msg);
    memcpy(h, b, size);
    put64(entry_header(h, 0), UINT64_MAX);
    rc = parse(h, size, &e, &n, &msg);
    tap_ok(rc == 0 && n == 6, "an empty entry's offset is never read (%s)", rc ? msg : "ok");
    free(e);
    memcpy(h, b, size);
    entry_header(h, 1)[24] = 0;
    rc = parse(h, size, &e, &n, &msg);
    tap_ok(rc == -1 && contains(msg, "printable"), "a NUL in an id: %s", msg);
    free(h);

    /* A bundle with only a host entry holds no code object. */
    unsigned char *hb = make_bundle(ents, 1, &size);
    rc = hkc_hip_code_entries(hb, size, &e, &n, &err);
    tap_ok(rc == -1 && contains(err.data, "no AMDGPU code object") &&
               contains(err.data, "host-x86_64-unknown-linux"),
           "a host-only bundle: %s", err.data);
    hkc_strbuf_clear(&err);
    free(hb);

    /* Picking: exact first even when listed later, then compatible. */
    unsigned char *exact = amd_elf(0xe3f);
    const bent pick_ents[] = {
        {"host-x86_64-unknown-linux", NULL, 0},
        {"hipv4-amdgcn-amd-amdhsa--gfx90a", e90a, 64},
        {"hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", exact, 64},
        {"hipv4-amdgcn-amd-amdhsa--gfx1030", e1030, 64},
    };
    unsigned char *pb = make_bundle(pick_ents, 4, &size);
    const void *elf;
    size_t elf_size;
    char picked[96];
    rc = hkc_hip_pick(pb, size, "gfx90a:sramecc+:xnack-", &elf, &elf_size, picked, sizeof picked,
                      &err);
    tap_ok(rc == 0 && !strcmp(picked, "gfx90a:sramecc+:xnack-") && elf_size == 64 &&
               !memcmp(elf, exact, 64),
           "pick prefers the exact match listed second (%s)", rc ? err.data : picked);
    hkc_strbuf_clear(&err);
    rc = hkc_hip_pick(pb, size, "gfx90a:sramecc-:xnack+", &elf, &elf_size, picked, sizeof picked,
                      &err);
    tap_ok(rc == 0 && !strcmp(picked, "gfx90a"), "pick falls back to the compatible gfx90a (%s)",
           rc ? err.data : picked);
    hkc_strbuf_clear(&err);
    rc = hkc_hip_pick(pb, size, "gfx1100", &elf, &elf_size, picked, sizeof picked, &err);
    tap_ok(rc == -1 && contains(err.data, "gfx90a, gfx90a:sramecc+:xnack-, gfx1030") &&
               contains(err.data, "hipkit compile FILE.hip --offload-arch gfx1100"),
           "pick fails for gfx1100: %s", err.data);
    hkc_strbuf_clear(&err);
    rc = hkc_hip_pick(pb, size, "gfx90a:xnack", &elf, &elf_size, picked, sizeof picked, &err);
    tap_ok(rc == -1 && contains(err.data, "xnack"), "a bad device target: %s", err.data);
    hkc_strbuf_clear(&err);
    free(pb);

    /* An amdgcn entry that holds bitcode (built with -fgpu-rdc). */
    const bent bc_ents[] = {{"hipv4-amdgcn-amd-amdhsa--gfx90a", "BC\xc0\xde\x35\x14\x00\x00", 8}};
    unsigned char *bb = make_bundle(bc_ents, 1, &size);
    rc = hkc_hip_pick(bb, size, "gfx90a:sramecc+:xnack-", &elf, &elf_size, NULL, 0, &err);
    tap_ok(rc == -1 && contains(err.data, "bitcode"), "a bitcode entry is named: %s", err.data);
    hkc_strbuf_clear(&err);
    free(bb);

    /* A compressed bundle is recognised and refused with the way out. */
    unsigned char ccob[32] = "CCOB\x01\x00\x01\x00";
    unsigned char *cc = dup_bytes(ccob, sizeof ccob);
    tap_ok(hkc_hip_code_kind(cc, sizeof ccob) == HIP_CODE_COMPRESSED_BUNDLE, "CCOB kind");
    rc = parse(cc, sizeof ccob, &e, &n, &msg);
    tap_ok(rc == -1 && contains(msg, "compressed (CCOB)") && contains(msg, "does not unpack"),
           "bundle_parse on CCOB: %s", msg);
    rc = hkc_hip_code_entries(cc, sizeof ccob, &e, &n, &err);
    tap_ok(rc == -1 && contains(err.data, "--no-offload-compress"), "code_entries on CCOB");
    hkc_strbuf_clear(&err);
    rc = hkc_hip_pick(cc, sizeof ccob, "gfx90a:xnack-:sramecc+", &elf, &elf_size, NULL, 0, &err);
    tap_ok(rc == -1 && contains(err.data, "--no-offload-compress") &&
               contains(err.data, "hipkit compile FILE.hip --offload-arch gfx90a:sramecc+:xnack-"),
           "pick on CCOB says how to rebuild: %s", err.data);
    hkc_strbuf_clear(&err);
    free(cc);

    /* Random corruption, mostly of the headers: any answer but a crash,
     * a read past the end (ASan, valgrind) or a pointer outside the file. */
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int inside = 1;
    free(b);
    b = make_bundle(ents, 6, &size);
    for (int round = 0; round < 3000; round++) {
        unsigned char *m = dup_bytes(b, size);
        for (int k = 0; k < 1 + round % 4; k++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            m[24 + rng % (round % 3 ? 400 : size - 24)] ^= (unsigned char)(rng >> 32 | 1);
        }
        elf = NULL;
        if (hkc_hip_pick(m, size, "gfx90a:sramecc+:xnack-", &elf, &elf_size, picked,
                         sizeof picked, &err) == 0)
            inside &= (const unsigned char *)elf >= m && elf_size <= size &&
                      (size_t)((const unsigned char *)elf - m) <= size - elf_size;
        if (hkc_hip_code_entries(m, size, &e, &n, &err) == 0)
            for (int i = 0; i < n; i++)
                inside &= e[i].offset <= size && e[i].size <= size - e[i].offset;
        free(e);
        hkc_strbuf_clear(&err);
        free(m);
    }
    tap_ok(inside, "3000 random corruptions give answers inside the file");

    hkc_strbuf_free(&err);
    free(b);
    free(exact);
    free(e90a);
    free(e1030);
    free(e906);
}

/* ------------------------------------------------------------ kinds */

static void test_kinds(void)
{
    unsigned char h[64];
    struct {
        int cls;
        unsigned machine, type;
        hip_code_kind kind;
        const char *describe;
    } elfs[] = {
        {2, 224, 3, HIP_CODE_ELF, "an AMDGPU code object"},
        {2, 62, 3, HIP_CODE_OTHER_ELF, "an x86-64 shared library (.so)"},
        {2, 190, 2, HIP_CODE_OTHER_ELF, "a cubin (NVIDIA code)"},
        {1, 224, 1, HIP_CODE_OTHER_ELF, "a 32-bit AMDGPU ELF (R600)"},
    };
    for (size_t i = 0; i < sizeof elfs / sizeof *elfs; i++) {
        make_elf(h, elfs[i].cls, elfs[i].machine, elfs[i].type, 64, 2, 0x3f);
        unsigned char *p = dup_bytes(h, 64);
        const char *d = hkc_hip_code_describe(p, 64);
        tap_ok(hkc_hip_code_kind(p, 64) == elfs[i].kind && !strcmp(d, elfs[i].describe),
               "ELF class %d machine %u: %s", elfs[i].cls, elfs[i].machine, d);
        free(p);
    }
    struct {
        const char *bytes;
        size_t size;
        const char *describe;
    } other[] = {
        {"__global__ void k(float *x) {}\n", 31, "text"},
        {"", 0, "an empty file"},
        {"\x7f" "ELF\x02\x01", 6, "a truncated ELF"},
        {"BC\xc0\xde", 4, "LLVM bitcode"},
        {"\x01\x02\x03\x00\xff", 5, "unrecognised binary data"},
        {"__CLANG_OFFLOAD_BUNDLE__", 24, "a clang offload bundle"},
    };
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        unsigned char *p = dup_bytes(other[i].bytes, other[i].size);
        const char *d = hkc_hip_code_describe(p, other[i].size);
        tap_ok(contains(d, other[i].describe), "%zu bytes described as %s", other[i].size, d);
        free(p);
    }

    /* What code_entries says about something that is not AMD code. */
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    hip_bundle_entry *e;
    int n;
    make_elf(h, 2, 190, 2, 0, 0, 0x5a);
    unsigned char *p = dup_bytes(h, 64);
    int rc = hkc_hip_code_entries(p, 64, &e, &n, &err);
    tap_ok(rc == -1 && contains(err.data, "this is a cubin (NVIDIA code), not an AMD code object"),
           "a cubin: %s", err.data);
    hkc_strbuf_clear(&err);
    free(p);
    const void *elf;
    size_t elf_size;
    p = dup_bytes("__global__ void k() {}\n", 23);
    rc = hkc_hip_pick(p, 23, "gfx90a", &elf, &elf_size, NULL, 0, &err);
    tap_ok(rc == -1 && contains(err.data, "this is text, not an AMD code object"), "text: %s",
           err.data);
    free(p);
    hkc_strbuf_free(&err);
}

/* ------------------------------------------------------------ ELF targets */

static void test_elf_targets(void)
{
    static const struct {
        unsigned osabi, abi;
        uint32_t flags;
        const char *want; /* NULL: an error containing `why` */
        const char *why;
    } cases[] = {
        {64, 2, 0x53f, "gfx90a", NULL},                    /* v4 xnack any, sramecc any */
        {64, 2, 0xe3f, "gfx90a:sramecc+:xnack-", NULL},    /* v4 sramecc on, xnack off */
        {64, 3, 0xa3f, "gfx90a:sramecc-:xnack-", NULL},    /* v5 */
        {64, 2, 0x33f, "gfx90a:xnack+", NULL},             /* sramecc unsupported */
        {64, 2, 0x036, "gfx1030", NULL},                   /* both unsupported */
        {64, 2, 0xd4c, "gfx942:sramecc+", NULL},
        {64, 2, 0x14b, "gfx941", NULL},
        {64, 2, 0x540, "gfx940", NULL},
        {64, 2, 0x020, "gfx600", NULL},
        {64, 2, 0x032, "gfx90c", NULL},
        {64, 2, 0x042, "gfx1013", NULL},
        {64, 2, 0x044, "gfx1103", NULL},
        {64, 2, 0x047, "gfx1102", NULL},
        {64, 1, 0x33f, "gfx90a:sramecc+:xnack+", NULL},    /* v3: set is on */
        {64, 1, 0x02f, "gfx906", NULL},                    /* v3: clear is any */
        {64, 1, 0x230, "gfx908:sramecc+", NULL},
        {64, 2, 0x0ff, NULL, "0x0ff"},
        {64, 2, 0x027, NULL, "unknown processor"},
        {64, 2, 0x001, NULL, "R600"},
    };
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned char h[64];
        char out[96] = "";
        make_elf(h, 2, 224, 3, cases[i].osabi, cases[i].abi, cases[i].flags);
        unsigned char *p = dup_bytes(h, 64);
        int rc = hkc_hip_elf_target(p, 64, out, sizeof out, &err);
        if (cases[i].want)
            tap_ok(rc == 0 && !strcmp(out, cases[i].want), "e_flags 0x%03x abi %u reads %s (%s)",
                   cases[i].flags, cases[i].abi, cases[i].want, rc ? err.data : out);
        else
            tap_ok(rc == -1 && contains(err.data, cases[i].why), "e_flags 0x%03x: %s",
                   cases[i].flags, err.data);
        hkc_strbuf_clear(&err);
        free(p);
    }

    unsigned char h[64];
    char out[96];
    make_elf(h, 2, 224, 3, 64, 2, 0x53f);
    unsigned char *p = dup_bytes(h, 40);
    int rc = hkc_hip_elf_target(p, 40, out, sizeof out, &err);
    tap_ok(rc == -1 && contains(err.data, "truncated"), "a 40-byte AMDGPU ELF: %s", err.data);
    hkc_strbuf_clear(&err);
    free(p);
    make_elf(h, 2, 62, 3, 0, 0, 0);
    p = dup_bytes(h, 64);
    rc = hkc_hip_elf_target(p, 64, out, sizeof out, &err);
    tap_ok(rc == -1 && contains(err.data, "x86-64"), "an x86-64 ELF: %s", err.data);
    hkc_strbuf_clear(&err);
    free(p);

    /* A raw ELF is one entry with id "", and pick hands back all of it. */
    p = amd_elf(0x53f);
    hip_bundle_entry *e;
    int n;
    rc = hkc_hip_code_entries(p, 64, &e, &n, &err);
    tap_ok(rc == 0 && n == 1 && !e[0].id[0] && !strcmp(e[0].target, "gfx90a") && e[0].size == 64,
           "code_entries of a raw ELF (%s)", rc ? err.data : "ok");
    free(e);
    const void *elf;
    size_t elf_size;
    rc = hkc_hip_pick(p, 64, "gfx90a:sramecc-:xnack+", &elf, &elf_size, NULL, 0, &err);
    tap_ok(rc == 0 && elf == p && elf_size == 64, "pick on a raw gfx90a ELF (%s)",
           rc ? err.data : "ok");
    free(p);
    hkc_strbuf_free(&err);
}

/* ------------------------------------------------------------ target ids */

static void test_targets(void)
{
    static const struct {
        const char *id;
        const char *canon; /* NULL: HK_EINVAL with `why` in the message */
        const char *why;
    } parses[] = {
        {"gfx90a", "gfx90a", NULL},
        {"gfx1030", "gfx1030", NULL},
        {"gfx90a:xnack+", "gfx90a:xnack+", NULL},
        {"gfx90a:xnack-:sramecc+", "gfx90a:sramecc+:xnack-", NULL},
        {"gfx942:sramecc+:xnack+", "gfx942:sramecc+:xnack+", NULL},
        {"gfx10-3-generic", "gfx10-3-generic", NULL},
        {"gfx90a:foo+", NULL, "unknown feature 'foo'"},
        {"gfx90a:xnack", NULL, "needs a '+' or '-'"},
        {"gfx90a:xnack+:xnack-", NULL, "given twice"},
        {"gfx90a:sramecc+:sramecc+", NULL, "given twice"},
        {"gfx90a:", NULL, "empty feature"},
        {"gfx90a::xnack+", NULL, "empty feature"},
        {"gfx90a:+", NULL, "unknown feature ''"},
        {"", NULL, "not an AMD gfx processor"},
        {"gfx", NULL, "not an AMD gfx processor"},
        {"sm_80", NULL, "'sm_80'"},
        {"GFX90A", NULL, "not an AMD gfx processor"},
        {"gfx90a-", NULL, "not an AMD gfx processor"},
        {"gfx9000000000000000000000000000000", NULL, "not an AMD gfx processor"},
    };
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    for (size_t i = 0; i < sizeof parses / sizeof *parses; i++) {
        hip_target t;
        char out[96] = "";
        int rc = hkc_hip_target_parse(parses[i].id, &t, &err);
        if (rc == 0)
            hkc_hip_target_format(&t, out, sizeof out);
        if (parses[i].canon)
            tap_ok(rc == 0 && !strcmp(out, parses[i].canon), "'%s' -> '%s' (%s)", parses[i].id,
                   parses[i].canon, rc ? err.data : out);
        else
            tap_ok(rc == HK_EINVAL && contains(err.data, parses[i].why) &&
                       contains(err.data, parses[i].id),
                   "'%s' refused: %s", parses[i].id, err.data);
        hkc_strbuf_clear(&err);
    }
    hkc_strbuf_free(&err);

    hip_target t = {"gfx90a", 1, 0};
    char small[8];
    hkc_hip_target_format(&t, small, sizeof small);
    tap_ok(!strcmp(small, "gfx90a:"), "format truncates to its buffer ('%s')", small);

    static const struct {
        const char *code, *dev;
        int want;
    } compat[] = {
        {"gfx90a", "gfx90a:sramecc+:xnack-", 1},
        {"gfx90a:xnack-", "gfx90a:sramecc+:xnack-", 1},
        {"gfx90a:xnack+", "gfx90a:sramecc+:xnack-", 0},
        {"gfx90a:sramecc-", "gfx90a:sramecc+:xnack-", 0},
        {"gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-", 1},
        {"gfx90a:sramecc+:xnack-", "gfx90a:xnack-:sramecc+", 1},
        {"gfx90a:xnack+", "gfx90a:sramecc+:xnack+", 1},
        {"gfx908", "gfx90a:sramecc+:xnack-", 0},
        {"gfx1030", "gfx1030", 1},
        {"gfx1030:xnack+", "gfx1030", 0},
        {"gfx90a:foo+", "gfx90a:sramecc+:xnack-", 0},
        {"gfx90a", "gfx90a:xnack", 0},
    };
    for (size_t i = 0; i < sizeof compat / sizeof *compat; i++)
        tap_ok(hkc_hip_target_compatible(compat[i].code, compat[i].dev) == compat[i].want,
               "code %s on device %s: %s", compat[i].code, compat[i].dev,
               compat[i].want ? "compatible" : "incompatible");
}

/* ------------------------------------------------------------ hipcc */

static char tmpdir[4096];

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    int rc = system(cmd);
    if (rc) {
        char *log;
        size_t len;
        char path[4200];
        snprintf(path, sizeof path, "%s/log", tmpdir);
        tap_diag("failed (%d): %s", rc, cmd);
        if (hkc_read_file(path, &log, &len) == 0) {
            tap_diag("%s", log);
            free(log);
        }
    }
    return rc;
}

/* Compiles k.hip in tmpdir with `args`, into `out`; returns its bytes. */
static char *hipcc(const char *args, const char *out, size_t *len)
{
    char *data = NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", tmpdir, out);
    if (sh("cd '%s' && hipcc %s >log 2>&1", tmpdir, args) || hkc_read_file(path, &data, len))
        return NULL;
    return data;
}

static void test_hipcc(void)
{
    static const char *names[] = {
        "raw gfx90a ELF reads back gfx90a",
        "raw gfx90a:sramecc+:xnack- ELF reads back exactly that",
        "two-target bundle parses",
        "each bundle entry is an ELF whose header matches its id",
        "pick for gfx90a:sramecc+:xnack- takes the gfx90a entry",
        "pick for gfx908:sramecc+:xnack- fails naming both targets and the rebuild",
    };
    const int npoints = (int)(sizeof names / sizeof *names);
    const char *why = NULL;
    const char *base = getenv("TMPDIR");
    if (system("command -v hipcc >/dev/null 2>&1") != 0)
        why = "hipcc is not on PATH";
    else {
        snprintf(tmpdir, sizeof tmpdir, "%s/hk_codeobj_XXXXXX", base && *base ? base : "/tmp");
        static char reason[4200];
        snprintf(reason, sizeof reason, "cannot make a temporary folder like %s", tmpdir);
        if (strchr(tmpdir, '\'') || !mkdtemp(tmpdir))
            why = reason;
    }
    if (why) {
        for (int i = 0; i < npoints; i++)
            tap_skip(names[i], why);
        return;
    }

    char path[4200];
    snprintf(path, sizeof path, "%s/k.hip", tmpdir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("#include <hip/hip_runtime.h>\n"
              "__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\n", f);
        fclose(f);
    }
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    char target[96];
    size_t len;
    static const struct {
        const char *arch, *want;
    } raw[] = {{"gfx90a", "gfx90a"}, {"gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-"}};
    for (int i = 0; i < 2; i++) {
        char args[256];
        snprintf(args, sizeof args, "--offload-arch=%s --offload-device-only "
                 "--no-gpu-bundle-output -c k.hip -o k.co", raw[i].arch);
        char *co = hipcc(args, "k.co", &len);
        int rc = co ? hkc_hip_elf_target(co, len, target, sizeof target, &err) : -1;
        tap_ok(rc == 0 && !strcmp(target, raw[i].want), "%s (%s)", names[i],
               co ? (rc ? err.data : target) : "hipcc failed");
        hkc_strbuf_clear(&err);
        free(co);
    }

    char *b = hipcc("--offload-arch=gfx90a --offload-arch=gfx1030 --offload-device-only -c k.hip "
                    "-o k.bundle", "k.bundle", &len);
    hip_bundle_entry *e = NULL;
    int n = 0, rc = b ? hkc_hip_bundle_parse(b, len, &e, &n, &err) : -1;
    tap_ok(rc == 0 && n >= 2, "%s (%d entries%s%s)", names[2], n, rc ? ": " : "", err.data);
    int amd = 0, match = 1;
    for (int i = 0; rc == 0 && i < n; i++) {
        tap_diag("entry '%s' target '%s', %zu bytes at %zu", e[i].id, e[i].target, e[i].size,
                 e[i].offset);
        if (!e[i].target[0])
            continue;
        amd++;
        hkc_strbuf_clear(&err);
        int trc = hkc_hip_elf_target(b + e[i].offset, e[i].size, target, sizeof target, &err);
        match &= trc == 0 && !strcmp(target, e[i].target);
        if (trc || strcmp(target, e[i].target))
            tap_diag("entry %s: header says %s", e[i].target, trc ? err.data : target);
    }
    tap_ok(rc == 0 && amd == 2 && match, "%s", names[3]);
    free(e);
    hkc_strbuf_clear(&err);

    const void *elf = NULL;
    size_t elf_size = 0;
    char picked[96] = "";
    rc = b ? hkc_hip_pick(b, len, "gfx90a:sramecc+:xnack-", &elf, &elf_size, picked,
                          sizeof picked, &err) : -1;
    tap_ok(rc == 0 && !strcmp(picked, "gfx90a") &&
               hkc_hip_elf_target(elf, elf_size, target, sizeof target, &err) == 0 &&
               !strcmp(target, "gfx90a"),
           "%s (%s)", names[4], rc ? err.data : picked);
    hkc_strbuf_clear(&err);
    rc = b ? hkc_hip_pick(b, len, "gfx908:sramecc+:xnack-", &elf, &elf_size, picked,
                          sizeof picked, &err) : 0;
    tap_ok(rc == -1 && contains(err.data, "gfx90a") && contains(err.data, "gfx1030") &&
               contains(err.data, "gfx908") && contains(err.data, "hipkit compile"),
           "%s: %s", names[5], err.data);
    free(b);
    hkc_strbuf_free(&err);

    sh("rm -f '%s'/k.hip '%s'/k.co", tmpdir, tmpdir);
    sh("rm -f '%s'/k.bundle '%s'/log", tmpdir, tmpdir);
    if (rmdir(tmpdir))
        tap_diag("could not remove %s", tmpdir);
}

int main(void)
{
    tap_init();
    hkc_strbuf_init(&parse_err);
    test_kinds();
    test_elf_targets();
    test_targets();
    test_bundles();
    test_hipcc();
    hkc_strbuf_free(&parse_err);
    return tap_done();
}
