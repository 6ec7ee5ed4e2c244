/* The GGUF reader's structures, shared by gguf.c (the header), gguf_api.c
 * (the public accessors and tensor buffers). */
#ifndef HKC_GGUF_H
#define HKC_GGUF_H

#include "internal.h"

typedef struct hkc_gguf_ggml_type {
    const char *name;
    unsigned block, size; /* elements per block, bytes per block */
    hk_dtype dtype;
} hkc_gguf_ggml_type;

typedef struct hkc_gguf_kv {
    char *key;
    hk_gguf_type type, elem;
    uint64_t count;
    uint64_t at;       /* the value's (or the array's first element's) file offset */
    uint64_t *strings; /* an array of strings: each element's length field offset */
} hkc_gguf_kv;

typedef struct hkc_gguf_tensor {
    char *name;
    uint32_t type;
    int ndim;
    uint64_t ne[4];
    uint64_t elements, offset, bytes; /* offset from the start of the file */
} hkc_gguf_tensor;

struct hk_gguf {
    hk_context *ctx;
    char *path;                /* "(memory)" for hk_gguf_open_bytes */
    const unsigned char *data; /* the file's bytes */
    uint64_t size;
    int mapped;                /* data is our mapping of path */
    uint32_t version;
    uint64_t alignment, data_offset;
    hkc_gguf_kv *kvs;
    uint64_t nkv;
    hkc_gguf_tensor *ts;
    uint64_t nt;
    size_t *kv_order, *t_order; /* indices sorted by name */
    hk_buffer **maps;           /* per tensor: the pages of the file under it, mapped on first use */
};

/* ggml's type t, or NULL for a number it does not (or no longer) use. */
const hkc_gguf_ggml_type *hkc_gguf_ggml_type_get(uint32_t t);
/* Parses g->data (g->ctx, path, data, size set); 0 or HK_EFORMAT/HK_ENOMEM. */
int hkc_gguf_parse(hk_gguf *g);
/* Index of a key (kvs nonzero) or tensor by name, or HK_ENOTFOUND. */
int64_t hkc_gguf_find(const hk_gguf *g, int kvs, const char *name);

#endif
