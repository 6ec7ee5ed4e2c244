/* AMD code objects read without ROCm: clang offload bundles, the target id
 * an AMDGPU ELF header states, target-id syntax and the compatibility rule
 * the HIP runtime applies when it picks a code object for a device. Used by
 * the backend (loading, inspection) and by tests, with no GPU and no comgr. */
#ifndef HKC_HIP_CODEOBJ_H
#define HKC_HIP_CODEOBJ_H

#include <stddef.h>

#include "hipkit/hipkit.h"
#include "strbuf.h"

typedef enum hip_code_kind {
    HIP_CODE_ELF,               /* a raw AMDGPU ELF code object */
    HIP_CODE_BUNDLE,            /* "__CLANG_OFFLOAD_BUNDLE__" */
    HIP_CODE_COMPRESSED_BUNDLE, /* "CCOB": clang's compressed bundle */
    HIP_CODE_OTHER_ELF,         /* an ELF for another machine (host .so, cubin) */
    HIP_CODE_UNKNOWN,
} hip_code_kind;

hip_code_kind hkc_hip_code_kind(const void *data, size_t size);
/* A short description of what the bytes are, for messages:
 * "an AMDGPU code object", "an x86-64 ELF", "a cubin", "text", ... */
const char *hkc_hip_code_describe(const void *data, size_t size);

/* Target ids: "gfx90a", "gfx90a:xnack+", "gfx90a:sramecc-:xnack+". A feature
 * left out means "any" (the code runs with either setting). */
typedef struct hip_target {
    char proc[32]; /* "gfx90a" */
    int sramecc;   /* -1 any, 0 off, 1 on */
    int xnack;     /* -1 any, 0 off, 1 on */
} hip_target;

/* Parses a target id; HK_EINVAL with a message naming what is wrong (an
 * unknown feature, a feature given twice, a processor that is not gfxNNN). */
int hkc_hip_target_parse(const char *id, hip_target *out, hkc_strbuf *err);
/* Canonical spelling: processor, then sramecc, then xnack, as LLVM orders
 * them ("gfx90a:sramecc+:xnack-"). */
void hkc_hip_target_format(const hip_target *t, char *out, size_t cap);
/* 1 when code built for target id `code` runs on a device whose full target
 * id is `dev`: same processor, and each feature either "any" in the code or
 * equal to the device's. 0 when not, or when either id does not parse. */
int hkc_hip_target_compatible(const char *code, const char *dev);

/* How well code for `code` fits a device `dev`: 0 not at all (or an id does
 * not parse), else higher is closer: 4 the same settings, else 1 plus the
 * number of features the code states. Picking and plugin images use it. */
int hkc_hip_target_rank(const char *code, const char *dev);
/* The backend's image_rank slot: the HIP runtime's rule (target_rank),
 * ranked above 100 so every compatible image orders the same way. */
int hkc_hip_image_rank(const char *code, const char *dev);

/* The target id an AMDGPU ELF states in its header (EF_AMDGPU_MACH and the
 * code object v4+ xnack/sramecc bits), e.g. "gfx90a:sramecc+:xnack-", or
 * "gfx906" with features "any". -1 with the reason in err when the bytes are
 * not an AMDGPU ELF or the processor is unknown to this table. */
int hkc_hip_elf_target(const void *data, size_t size, char *out, size_t cap, hkc_strbuf *err);

/* One entry of an offload bundle. */
typedef struct hip_bundle_entry {
    char id[256];     /* "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "host-x86_64-unknown-linux" */
    char target[96];  /* the target id part of an amdgcn entry; "" for others */
    size_t offset, size;
} hip_bundle_entry;

/* Parses an uncompressed bundle, checking every offset and size against
 * `size`. *entries is malloc'd (all entries, host ones included). -1 with
 * the reason in err (truncated, not a bundle, compressed). */
int hkc_hip_bundle_parse(const void *data, size_t size, hip_bundle_entry **entries, int *count,
                         hkc_strbuf *err);

/* The AMDGPU code objects in data, raw ELF or bundle: one entry for an ELF
 * (id "", target from its header), the amdgcn entries of a bundle. *entries
 * is malloc'd. -1 with the reason in err, which for a compressed bundle says
 * to rebuild without compression (clang's --no-offload-compress). */
int hkc_hip_code_entries(const void *data, size_t size, hip_bundle_entry **entries, int *count,
                         hkc_strbuf *err);

/* Picks the code object for a device with full target id dev_target: an
 * exact target match first, then a compatible one. *elf and *elf_size point
 * into data; picked (may be NULL) gets the entry's target id as the file
 * spells it. On failure
 * returns -1 with a message in err saying which targets the file holds,
 * which one the device needs, and the command that rebuilds it:
 * "hipkit compile FILE.hip --offload-arch gfx90a:sramecc+:xnack-". */
int hkc_hip_pick(const void *data, size_t size, const char *dev_target, const void **elf,
                 size_t *elf_size, char *picked, size_t picked_cap, hkc_strbuf *err);

#endif
