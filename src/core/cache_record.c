/* Small text records in the disk cache (hk_cache_record_get/put): what
 * hipkit's tools measured once and keep per device, such as hk.autotune's
 * winners and hk.peaks' rates. They go through the compile cache's own
 * entry code (cache.c), so they follow its rules: header and checksum,
 * temp file and rename, ownership and mode checks, the size cap, and
 * hk_cache_clear removes them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The payload is the key, a NUL, then the text: the key is hashed into the
 * file name and the header too, and the copy in the payload lets a reader
 * say which key a record it refuses was written for. */
static hkc_cache_entry_id record_id(const char *kind, const char *name, const char *key,
                                    char *entry_name, size_t cap)
{
    hkc_key_builder *kb = hkc_key_begin();
    hkc_key_add_str(kb, "record-kind", kind);
    hkc_key_add_str(kb, "record-key", key);
    snprintf(entry_name, cap, "%s-%s", kind, name);
    return (hkc_cache_entry_id){.sub = "records", .name = entry_name, .ext = "txt",
                                .key = hkc_key_end(kb)};
}

static int record_args(const hk_context *ctx, const char *kind, const char *name, const char *key,
                       const void *text)
{
    if (!ctx || !kind || !*kind || !name || !key || !text)
        return hkc_fail(ctx, HK_EINVAL, "hk_cache_record: kind, name, key and text are required");
    return 0;
}

HK_API int hk_cache_record_get(hk_context *ctx, const char *kind, const char *name, const char *key,
                               char **text, size_t *len)
{
    int r = record_args(ctx, kind, name, key, text);
    if (r != 0)
        return r;
    *text = NULL;
    if (len)
        *len = 0;
    char entry_name[256];
    hkc_cache_entry_id id = record_id(kind, name, key, entry_name, sizeof entry_name);
    void *data = NULL;
    size_t size = 0;
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    int hit = hkc_cache_get(ctx->cache, &id, &data, &size, &warn);
    if (warn.len) /* a damaged entry: the cache removed it (rw) or left it (ro) */
        hkc_warn(ctx, "%s", warn.data);
    hkc_strbuf_free(&warn);
    size_t klen = strlen(key);
    if (hit && (size <= klen || memcmp(data, key, klen) != 0 || ((char *)data)[klen] != 0)) {
        hkc_warn(ctx, "cache record %s/%s: written for another key; ignored", kind, entry_name);
        hit = 0;
    }
    if (!hit) {
        free(data);
        return hkc_fail(ctx, HK_ENOTFOUND, "no cache record %s for this key", entry_name);
    }
    size_t n = size - klen - 1;
    char *out = malloc(n + 1);
    if (!out) {
        free(data);
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    }
    memcpy(out, (char *)data + klen + 1, n);
    out[n] = 0;
    free(data);
    *text = out;
    if (len)
        *len = n;
    return 0;
}

HK_API int hk_cache_record_put(hk_context *ctx, const char *kind, const char *name, const char *key,
                               const char *text, size_t len)
{
    int r = record_args(ctx, kind, name, key, text);
    if (r != 0)
        return r;
    char entry_name[256];
    hkc_cache_entry_id id = record_id(kind, name, key, entry_name, sizeof entry_name);
    size_t klen = strlen(key);
    char *payload = malloc(klen + 1 + len);
    if (!payload)
        return hkc_fail(ctx, HK_ENOMEM, "out of memory");
    memcpy(payload, key, klen + 1);
    memcpy(payload + klen + 1, text, len);
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    hkc_cache_put(ctx->cache, &id, payload, klen + 1 + len, &warn);
    if (warn.len)
        hkc_warn(ctx, "%s", warn.data);
    hkc_strbuf_free(&warn);
    free(payload);
    return 0;
}
