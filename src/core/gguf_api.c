/* GGUF files: opening (a read-only mapping the header is parsed from, in
 * gguf.c), the public accessors, and tensors as buffers: a mapping of the
 * file's pages under one tensor (hk_buffer_mmap, so the backend registers
 * only those) viewed as the tensor's dtype, or a copy in another mode. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf.h"

static int new_gguf(hk_context *ctx, const char *path, hk_gguf **out)
{
    hk_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->path = strdup(path))) {
        free(g);
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    }
    g->ctx = ctx;
    *out = g;
    return 0;
}

static int finish_open(hk_gguf *g, hk_gguf **out)
{
    int r = hkc_gguf_parse(g);
    if (r) {
        hk_gguf_close(g);
        return r;
    }
    g->maps = calloc(g->nt ? (size_t)g->nt : 1, sizeof *g->maps);
    if (!g->maps) {
        hk_gguf_close(g);
        return hkc_fail(g->ctx, HK_ENOMEM, "out of memory");
    }
    *out = g;
    return 0;
}

HK_API int hk_gguf_open(hk_context *ctx, const char *path, hk_gguf **out)
{
    if (!ctx || !path || !out)
        return hkc_fail(ctx, HK_EINVAL, "hk_gguf_open: context, path or out is NULL");
    *out = NULL;
    /* O_NONBLOCK: a FIFO would block the open; it is refused by its type. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return hkc_fail(ctx, HK_EIO, "gguf '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return hkc_fail(ctx, HK_EIO, "gguf '%s': not a regular file", path);
    }
    hk_gguf *g;
    int r = new_gguf(ctx, path, &g);
    if (r) {
        close(fd);
        return r;
    }
    g->size = (uint64_t)st.st_size;
    if (g->size) {
        /* The header's pages are read through this mapping as the parser
         * reaches them; the tensor data's are never touched. */
        void *p = mmap(NULL, (size_t)g->size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            r = hkc_fail(ctx, HK_EIO, "gguf '%s': mmap: %s", path, strerror(errno));
            close(fd);
            hk_gguf_close(g);
            return r;
        }
        g->data = p;
        g->mapped = 1;
    }
    close(fd);
    return finish_open(g, out);
}

HK_API int hk_gguf_open_bytes(hk_context *ctx, const void *data, size_t size, hk_gguf **out)
{
    if (!ctx || (!data && size) || !out)
        return hkc_fail(ctx, HK_EINVAL, "hk_gguf_open_bytes: context, data or out is NULL");
    *out = NULL;
    hk_gguf *g;
    int r = new_gguf(ctx, "(memory)", &g);
    if (r)
        return r;
    g->data = data;
    g->size = size;
    return finish_open(g, out);
}

HK_API void hk_gguf_close(hk_gguf *g)
{
    if (!g)
        return;
    for (uint64_t i = 0; g->maps && i < g->nt; i++)
        hk_buffer_free(g->maps[i]);
    for (uint64_t i = 0; g->kvs && i < g->nkv; i++) {
        free(g->kvs[i].key);
        free(g->kvs[i].strings);
    }
    for (uint64_t i = 0; g->ts && i < g->nt; i++)
        free(g->ts[i].name);
    if (g->mapped)
        munmap((void *)g->data, (size_t)g->size);
    free(g->maps);
    free(g->kvs);
    free(g->ts);
    free(g->kv_order);
    free(g->t_order);
    free(g->path);
    free(g);
}

HK_API uint32_t hk_gguf_version(const hk_gguf *g) { return g->version; }
HK_API uint64_t hk_gguf_alignment(const hk_gguf *g) { return g->alignment; }
HK_API uint64_t hk_gguf_data_offset(const hk_gguf *g) { return g->data_offset; }
HK_API size_t hk_gguf_kv_count(const hk_gguf *g) { return (size_t)g->nkv; }
HK_API size_t hk_gguf_tensor_count(const hk_gguf *g) { return (size_t)g->nt; }

HK_API int hk_gguf_kv_get(const hk_gguf *g, size_t i, hk_gguf_kv *out)
{
    if (!g || !out || i >= g->nkv)
        return hkc_fail(g ? g->ctx : NULL, HK_EINVAL, "hk_gguf_kv_get: no entry %zu", i);
    const hkc_gguf_kv *kv = &g->kvs[i];
    out->key = kv->key;
    out->type = kv->type;
    out->elem_type = kv->elem;
    out->count = kv->count;
    out->data = g->data + kv->at;
    return 0;
}

HK_API int64_t hk_gguf_kv_find(const hk_gguf *g, const char *key)
{
    return g ? hkc_gguf_find(g, 1, key) : HK_EINVAL;
}

HK_API int hk_gguf_kv_string(const hk_gguf *g, size_t i, uint64_t j, const char **s, uint64_t *len)
{
    if (!g || !s || !len || i >= g->nkv)
        return hkc_fail(g ? g->ctx : NULL, HK_EINVAL, "hk_gguf_kv_string: no entry %zu", i);
    const hkc_gguf_kv *kv = &g->kvs[i];
    if (kv->type == HK_GGUF_STRING && j == 0) {
        *s = (const char *)g->data + kv->at;
        *len = kv->count;
        return 0;
    }
    if (kv->type != HK_GGUF_ARRAY || kv->elem != HK_GGUF_STRING || j >= kv->count)
        return hkc_fail(g->ctx, HK_EINVAL, "gguf key '%s' has no string %llu", kv->key,
                        (unsigned long long)j);
    /* the parser checked each length against the file */
    uint64_t at = kv->strings[j], n = 0;
    for (int b = 0; b < 8; b++)
        n |= (uint64_t)g->data[at + (uint64_t)b] << (8 * b);
    *s = (const char *)g->data + at + 8;
    *len = n;
    return 0;
}

HK_API int hk_gguf_tensor_get(const hk_gguf *g, size_t i, hk_gguf_tensor *out)
{
    if (!g || !out || i >= g->nt)
        return hkc_fail(g ? g->ctx : NULL, HK_EINVAL, "hk_gguf_tensor_get: no tensor %zu", i);
    const hkc_gguf_tensor *t = &g->ts[i];
    const hkc_gguf_ggml_type *ty = hkc_gguf_ggml_type_get(t->type);
    out->name = t->name;
    out->ggml_type = t->type;
    out->type_name = ty->name;
    out->dtype = ty->dtype;
    out->ndim = t->ndim;
    memcpy(out->shape, t->ne, sizeof out->shape);
    out->elements = t->elements;
    out->offset = t->offset;
    out->bytes = t->bytes;
    return 0;
}

HK_API int64_t hk_gguf_tensor_find(const hk_gguf *g, const char *name)
{
    return g ? hkc_gguf_find(g, 0, name) : HK_EINVAL;
}

/* The tensor's elements as its dtype counts them: raw bytes for a ggml
 * type hipkit has no dtype for. */
static size_t tensor_count(const hkc_gguf_tensor *t)
{
    const hkc_gguf_ggml_type *ty = hkc_gguf_ggml_type_get(t->type);
    return ty->dtype == HK_U8 ? (size_t)t->bytes : (size_t)t->elements;
}

static int tensor_map(hk_gguf *g, size_t i, hk_buffer **out)
{
    const hkc_gguf_tensor *t = &g->ts[i];
    const hkc_gguf_ggml_type *ty = hkc_gguf_ggml_type_get(t->type);
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t start = t->offset / page * page;
    if (!g->maps[i]) {
        if (!g->mapped)
            return hkc_fail(g->ctx, HK_EINVAL, "gguf %s: tensor '%s' cannot be mapped (no file): "
                            "ask for a copy in another memory mode", g->path, t->name);
        hk_mmap_options o;
        hk_mmap_options_defaults(&o);
        o.offset = start;
        o.length = t->offset + t->bytes - start;
        if (!o.length) /* an empty tensor still gets a (one-byte) mapping */
            o.length = g->size > start ? 1 : 0;
        int r = hk_buffer_mmap(g->ctx, g->path, HK_U8, &o, &g->maps[i]);
        if (r)
            return r;
    }
    int r = hk_buffer_view(g->maps[i], ty->dtype, (size_t)(t->offset - start), tensor_count(t), out);
    if (r) { /* a file of alignment 1 may place an f32 tensor at an odd byte: said as the tensor's */
        char why[512];
        snprintf(why, sizeof why, "%s", hk_errmsg(g->ctx));
        return hkc_fail(g->ctx, r, "gguf %s: tensor '%s' at byte %llu of the file cannot be mapped as %s (%s); "
                        "ask for a copy in device or host memory", g->path, t->name,
                        (unsigned long long)t->offset, hk_dtype_name(ty->dtype), why);
    }
    return 0;
}

HK_API int hk_gguf_tensor_buffer(hk_gguf *g, size_t i, hk_mem_mode mode, hk_buffer **out)
{
    if (!g || !out || i >= g->nt)
        return hkc_fail(g ? g->ctx : NULL, HK_EINVAL, "hk_gguf_tensor_buffer: no tensor %zu", i);
    *out = NULL;
    if (mode == HK_MEM_MMAP)
        return tensor_map(g, i, out);
    const hkc_gguf_tensor *t = &g->ts[i];
    const hkc_gguf_ggml_type *ty = hkc_gguf_ggml_type_get(t->type);
    hk_buffer *b = NULL;
    int r = hk_buffer_alloc(g->ctx, tensor_count(t), ty->dtype, mode, &b);
    if (!r)
        r = hk_buffer_upload(b, 0, g->data + t->offset, (size_t)t->bytes);
    if (r) {
        hk_buffer_free(b);
        return r;
    }
    *out = b;
    return 0;
}
