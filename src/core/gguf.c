/* GGUF model files (ggml's docs/gguf.md): the header parsed from a
 * read-only mapping of the file, every count, length and offset checked
 * against the bytes that are there before anything is read; the tensor
 * data is never touched here (a 4 GiB file opens as fast as a small one).
 * The public accessors and tensor buffers are in gguf_api.c. */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf.h"

#define GGUF_MAGIC 0x46554747u /* "GGUF" read little-endian */
#define GGUF_MAX_DIMS 4

/* ggml's types by number (ggml.h's enum ggml_type): name, elements per
 * block, bytes per block, hipkit's dtype (HK_U8: raw blocks). Numbers ggml
 * retired stay empty and are refused as unknown. */
static const hkc_gguf_ggml_type ggml_types[] = {
    [0] = {"f32", 1, 4, HK_F32},          [1] = {"f16", 1, 2, HK_F16},
    [2] = {"q4_0", 32, 18, HK_Q4_0},      [3] = {"q4_1", 32, 20, HK_Q4_1},
    [6] = {"q5_0", 32, 22, HK_Q5_0},      [7] = {"q5_1", 32, 24, HK_Q5_1},
    [8] = {"q8_0", 32, 34, HK_Q8_0},      [9] = {"q8_1", 32, 36, HK_Q8_1},
    [10] = {"q2_K", 256, 84, HK_Q2_K},    [11] = {"q3_K", 256, 110, HK_Q3_K},
    [12] = {"q4_K", 256, 144, HK_Q4_K},   [13] = {"q5_K", 256, 176, HK_Q5_K},
    [14] = {"q6_K", 256, 210, HK_Q6_K},   [15] = {"q8_K", 256, 292, HK_Q8_K},
    [16] = {"iq2_xxs", 256, 66, HK_U8},   [17] = {"iq2_xs", 256, 74, HK_U8},
    [18] = {"iq3_xxs", 256, 98, HK_U8},   [19] = {"iq1_s", 256, 50, HK_U8},
    [20] = {"iq4_nl", 32, 18, HK_U8},     [21] = {"iq3_s", 256, 110, HK_U8},
    [22] = {"iq2_s", 256, 82, HK_U8},     [23] = {"iq4_xs", 256, 136, HK_U8},
    [24] = {"i8", 1, 1, HK_I8},           [25] = {"i16", 1, 2, HK_I16},
    [26] = {"i32", 1, 4, HK_I32},         [27] = {"i64", 1, 8, HK_I64},
    [28] = {"f64", 1, 8, HK_F64},         [29] = {"iq1_m", 256, 56, HK_U8},
    [30] = {"bf16", 1, 2, HK_BF16},       [34] = {"tq1_0", 256, 54, HK_U8},
    [35] = {"tq2_0", 256, 66, HK_U8},     [39] = {"mxfp4", 32, 17, HK_U8},
};

const hkc_gguf_ggml_type *hkc_gguf_ggml_type_get(uint32_t t)
{
    if (t >= sizeof(ggml_types) / sizeof(ggml_types[0]) || !ggml_types[t].name)
        return NULL;
    return &ggml_types[t];
}

static const char *const type_names[HK_GGUF_TYPE_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
};
/* Bytes of a scalar of each type; 0 for string and array. */
static const uint8_t type_sizes[HK_GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *hk_gguf_type_name(hk_gguf_type t)
{
    return (unsigned)t < HK_GGUF_TYPE_COUNT ? type_names[t] : NULL;
}

/* ---------------------------------------------------------------- cursor */

/* Reads advance pos and never pass size; the first failure is recorded
 * (the message names the offset) and makes every later read fail too. */
typedef struct cursor {
    hk_gguf *g;
    uint64_t pos;
    int err;
} cursor;

static int bad(cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(cursor *c, const char *fmt, ...)
{
    if (c->err)
        return c->err;
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    va_list ap;
    va_start(ap, fmt);
    hkc_strbuf_vprintf(&s, fmt, ap);
    va_end(ap);
    c->err = hkc_fail(c->g->ctx, HK_EFORMAT, "gguf '%s': %s", c->g->path, s.data);
    hkc_strbuf_free(&s);
    return c->err;
}

static uint64_t left(const cursor *c) { return c->g->size - c->pos; }

static int need(cursor *c, uint64_t n, const char *what)
{
    if (c->err)
        return c->err;
    if (n > left(c))
        return bad(c, "truncated: %s at byte %llu needs %llu bytes, the file has %llu left", what,
                   (unsigned long long)c->pos, (unsigned long long)n, (unsigned long long)left(c));
    return 0;
}

static uint64_t get_le(cursor *c, unsigned n, const char *what)
{
    if (need(c, n, what))
        return 0;
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)c->g->data[c->pos + i] << (8 * i);
    c->pos += n;
    return v;
}

/* A string's length and start; the bytes are skipped. */
static uint64_t get_string(cursor *c, uint64_t *len, const char *what)
{
    *len = get_le(c, 8, what);
    if (!c->err && *len > left(c))
        bad(c, "%s at byte %llu is %llu bytes long, past the end of the file (%llu bytes left)",
            what, (unsigned long long)(c->pos - 8), (unsigned long long)*len,
            (unsigned long long)left(c));
    if (c->err)
        return 0;
    uint64_t at = c->pos;
    c->pos += *len;
    return at;
}

static char *dup_string(cursor *c, uint64_t at, uint64_t len)
{
    char *s = malloc((size_t)len + 1);
    if (!s) {
        c->err = hkc_fail(c->g->ctx, HK_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(s, c->g->data + at, (size_t)len);
    s[len] = 0;
    return s;
}

/* A count of items of at least `min_bytes` each cannot exceed the bytes
 * left: an absurd count fails here, before anything is allocated for it. */
static int check_count(cursor *c, uint64_t count, uint64_t min_bytes, const char *what)
{
    if (!c->err && count > left(c) / min_bytes)
        return bad(c, "%s: %llu at byte %llu cannot fit in the %llu bytes left", what,
                   (unsigned long long)count, (unsigned long long)c->pos,
                   (unsigned long long)left(c));
    return c->err;
}

/* Keys and tensor names must be unique to be found by name: an index
 * sorted by name finds a repeat next to its twin, and lookups bisect it. */
static const char *name_of(const hk_gguf *g, int kvs, size_t i)
{
    return kvs ? g->kvs[i].key : g->ts[i].name;
}

static const hk_gguf *sorting;
static int sorting_kvs;
static int by_name(const void *a, const void *b)
{
    return strcmp(name_of(sorting, sorting_kvs, *(const size_t *)a),
                  name_of(sorting, sorting_kvs, *(const size_t *)b));
}

static int sort_names(cursor *c, int kvs)
{
    hk_gguf *g = c->g;
    size_t n = kvs ? g->nkv : g->nt;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return c->err = hkc_fail(g->ctx, HK_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    /* qsort takes no context: the file is sorted under a lock */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    sorting = g;
    sorting_kvs = kvs;
    qsort(order, n, sizeof *order, by_name);
    pthread_mutex_unlock(&lock);
    *(kvs ? &g->kv_order : &g->t_order) = order;
    for (size_t i = 1; i < n; i++)
        if (!strcmp(name_of(g, kvs, order[i - 1]), name_of(g, kvs, order[i])))
            return bad(c, "%s '%s' appears twice", kvs ? "key" : "tensor name",
                       name_of(g, kvs, order[i]));
    return 0;
}

int64_t hkc_gguf_find(const hk_gguf *g, int kvs, const char *name)
{
    const size_t *order = kvs ? g->kv_order : g->t_order;
    size_t lo = 0, hi = kvs ? g->nkv : g->nt;
    while (order && name && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int d = strcmp(name, name_of(g, kvs, order[mid]));
        if (!d)
            return (int64_t)order[mid];
        if (d < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return HK_ENOTFOUND;
}

/* -------------------------------------------------------------- metadata */

static int read_array(cursor *c, hkc_gguf_kv *kv)
{
    uint32_t et = (uint32_t)get_le(c, 4, "array type");
    kv->count = get_le(c, 8, "array length");
    if (c->err)
        return c->err;
    if (et >= HK_GGUF_TYPE_COUNT || et == HK_GGUF_ARRAY)
        return bad(c, "key '%s': array of %s type %u", kv->key,
                   et == HK_GGUF_ARRAY ? "nested array" : "unknown", et);
    kv->elem = (hk_gguf_type)et;
    kv->at = c->pos;
    if (et != HK_GGUF_STRING) {
        if (check_count(c, kv->count, type_sizes[et], "array length"))
            return c->err;
        c->pos += kv->count * type_sizes[et];
        return 0;
    }
    if (check_count(c, kv->count, 8, "string array length"))
        return c->err;
    kv->strings = malloc(((size_t)kv->count ? (size_t)kv->count : 1) * sizeof *kv->strings);
    if (!kv->strings)
        return c->err = hkc_fail(c->g->ctx, HK_ENOMEM, "out of memory");
    for (uint64_t j = 0; j < kv->count && !c->err; j++) {
        uint64_t len;
        kv->strings[j] = c->pos; /* its length field: the accessor reads both */
        get_string(c, &len, "array string");
    }
    return c->err;
}

static int read_kv(cursor *c, hkc_gguf_kv *kv)
{
    uint64_t klen, kat = get_string(c, &klen, "key");
    if (c->err)
        return c->err;
    kv->key = dup_string(c, kat, klen);
    uint32_t t = (uint32_t)get_le(c, 4, "value type");
    if (c->err)
        return c->err;
    if (t >= HK_GGUF_TYPE_COUNT)
        return bad(c, "key '%s': unknown value type %u at byte %llu", kv->key, t,
                   (unsigned long long)(c->pos - 4));
    kv->type = (hk_gguf_type)t;
    kv->elem = kv->type;
    kv->count = 1;
    if (t == HK_GGUF_ARRAY)
        return read_array(c, kv);
    if (t == HK_GGUF_STRING) {
        kv->at = get_string(c, &kv->count, "string value");
        return c->err;
    }
    kv->at = c->pos;
    return need(c, type_sizes[t], "value") ? c->err : (c->pos += type_sizes[t], 0);
}

static int read_header_kvs(cursor *c)
{
    hk_gguf *g = c->g;
    /* the smallest pair: an empty key, a type and a one-byte value */
    if (check_count(c, g->nkv, 8 + 4 + 1, "metadata count"))
        return c->err;
    g->kvs = calloc((size_t)g->nkv ? (size_t)g->nkv : 1, sizeof *g->kvs);
    if (!g->kvs)
        return c->err = hkc_fail(g->ctx, HK_ENOMEM, "out of memory");
    for (size_t i = 0; i < g->nkv && !c->err; i++)
        read_kv(c, &g->kvs[i]);
    if (c->err || sort_names(c, 1))
        return c->err;
    int64_t a = hkc_gguf_find(g, 1, "general.alignment");
    if (a >= 0) {
        const hkc_gguf_kv *kv = &g->kvs[a];
        if (kv->type != HK_GGUF_U32)
            return bad(c, "general.alignment is a %s, not a u32", type_names[kv->type]);
        uint64_t v = 0;
        for (int i = 0; i < 4; i++)
            v |= (uint64_t)g->data[kv->at + (uint64_t)i] << (8 * i);
        if (v == 0 || (v & (v - 1)))
            return bad(c, "general.alignment %llu is not a power of two", (unsigned long long)v);
        g->alignment = v;
    }
    return 0;
}

/* --------------------------------------------------------------- tensors */

static int read_tensor(cursor *c, hkc_gguf_tensor *t)
{
    uint64_t nlen, nat = get_string(c, &nlen, "tensor name");
    if (c->err)
        return c->err;
    t->name = dup_string(c, nat, nlen);
    uint32_t nd = (uint32_t)get_le(c, 4, "tensor dimensions");
    if (!c->err && (nd < 1 || nd > GGUF_MAX_DIMS))
        return bad(c, "tensor '%s' has %u dimensions (1 to %d)", t->name, nd, GGUF_MAX_DIMS);
    t->ndim = (int)nd;
    t->elements = 1;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) {
        t->ne[d] = d < t->ndim ? get_le(c, 8, "tensor dimension") : 1;
        if (c->err)
            return c->err;
        if (t->ne[d] && t->elements > UINT64_MAX / t->ne[d])
            return bad(c, "tensor '%s': its element count overflows 64 bits", t->name);
        t->elements *= t->ne[d];
    }
    t->type = (uint32_t)get_le(c, 4, "tensor type");
    uint64_t rel = get_le(c, 8, "tensor offset");
    if (c->err)
        return c->err;
    const hkc_gguf_ggml_type *ty = hkc_gguf_ggml_type_get(t->type);
    if (!ty)
        return bad(c, "tensor '%s' has unknown type %u", t->name, t->type);
    if (t->ne[0] % ty->block)
        return bad(c, "tensor '%s': its rows of %llu elements are no whole number of %s blocks (%u)",
                   t->name, (unsigned long long)t->ne[0], ty->name, ty->block);
    uint64_t blocks = t->elements / ty->block;
    if (blocks > UINT64_MAX / ty->size) /* f64's 8 bytes a value: elements near 2^61 */
        return bad(c, "tensor '%s': its %llu %s elements take more than 2^64 bytes", t->name,
                   (unsigned long long)t->elements, ty->name);
    t->bytes = blocks * ty->size;
    if (rel % c->g->alignment)
        return bad(c, "tensor '%s': offset %llu is not a multiple of the alignment %llu", t->name,
                   (unsigned long long)rel, (unsigned long long)c->g->alignment);
    t->offset = rel; /* made absolute once the data section's start is known */
    return 0;
}

static int read_tensors(cursor *c)
{
    hk_gguf *g = c->g;
    /* the smallest entry: an empty name, one dimension, type and offset */
    if (check_count(c, g->nt, 8 + 4 + 8 + 4 + 8, "tensor count"))
        return c->err;
    g->ts = calloc((size_t)g->nt ? (size_t)g->nt : 1, sizeof *g->ts);
    if (!g->ts)
        return c->err = hkc_fail(g->ctx, HK_ENOMEM, "out of memory");
    for (size_t i = 0; i < g->nt && !c->err; i++)
        read_tensor(c, &g->ts[i]);
    if (c->err)
        return c->err;
    uint64_t a = g->alignment;
    g->data_offset = c->pos + (a - c->pos % a) % a;
    if (g->data_offset > g->size && g->nt)
        return bad(c, "truncated: the tensor data would start at byte %llu, the file has %llu",
                   (unsigned long long)g->data_offset, (unsigned long long)g->size);
    for (size_t i = 0; i < g->nt; i++) {
        hkc_gguf_tensor *t = &g->ts[i];
        uint64_t room = g->size > g->data_offset ? g->size - g->data_offset : 0;
        if (t->offset > room || t->bytes > room - t->offset)
            return bad(c, "tensor '%s' (%llu bytes at data offset %llu) runs past the end of the "
                          "file (%llu bytes of data)", t->name, (unsigned long long)t->bytes,
                       (unsigned long long)t->offset, (unsigned long long)room);
        t->offset += g->data_offset;
    }
    return 0;
}

int hkc_gguf_parse(hk_gguf *g)
{
    g->alignment = 32;
    cursor c = {g, 0, 0};
    uint32_t magic = (uint32_t)get_le(&c, 4, "magic");
    if (!c.err && magic != GGUF_MAGIC)
        return bad(&c, "not a GGUF file (magic %08x, want \"GGUF\")", magic);
    g->version = (uint32_t)get_le(&c, 4, "version");
    if (!c.err && (g->version & 0xffff) == 0 && g->version)
        return bad(&c, "version %u byte-swapped: a big-endian file, which this reader does not read",
                   g->version >> 24);
    if (!c.err && (g->version < 2 || g->version > 3))
        return bad(&c, "version %u (this reader reads 2 and 3)", g->version);
    g->nt = get_le(&c, 8, "tensor count");
    g->nkv = get_le(&c, 8, "metadata count");
    if (c.err || read_header_kvs(&c) || read_tensors(&c) || sort_names(&c, 0))
        return c.err;
    return 0;
}
