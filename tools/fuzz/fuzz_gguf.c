/* libFuzzer target: the GGUF header reader (gguf.c) over bytes in memory,
 * then every accessor over what it accepted: each key, each string of each
 * array, each tensor. Refusals are fine; a read outside the input is a
 * finding (ASan sees it: the input is an exact-size copy). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hipkit/hipkit.h"

static hk_context *ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx) {
        setenv("HIPKIT_BACKEND", "host", 1);
        hk_context_options o;
        hk_context_options_defaults(&o);
        o.quiet = 1;
        o.no_plugins = 1;
        if (hk_context_create(&o, &ctx) != 0)
            abort();
    }
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    hk_gguf *g = NULL;
    if (hk_gguf_open_bytes(ctx, copy, size, &g) == 0) {
        volatile unsigned sum = 0;
        for (size_t i = 0; i < hk_gguf_kv_count(g); i++) {
            hk_gguf_kv kv;
            hk_gguf_kv_get(g, i, &kv);
            const char *s;
            uint64_t len;
            uint64_t n = kv.type == HK_GGUF_ARRAY && kv.elem_type == HK_GGUF_STRING ? kv.count : 1;
            for (uint64_t j = 0; j < n; j++)
                if (hk_gguf_kv_string(g, i, j, &s, &len) == 0 && len)
                    sum += (unsigned char)s[len - 1];
            if (kv.type != HK_GGUF_STRING && kv.type != HK_GGUF_ARRAY)
                sum += *(const unsigned char *)kv.data;
            if (hk_gguf_kv_find(g, kv.key) != (int64_t)i)
                abort(); /* keys are unique: each finds itself */
        }
        for (size_t i = 0; i < hk_gguf_tensor_count(g); i++) {
            hk_gguf_tensor t;
            hk_gguf_tensor_get(g, i, &t);
            if (t.offset + t.bytes > size || hk_gguf_tensor_find(g, t.name) != (int64_t)i)
                abort();
            if (t.bytes)
                sum += copy[t.offset] + copy[t.offset + t.bytes - 1];
        }
        (void)sum;
        hk_gguf_close(g);
    }
    free(copy);
    return 0;
}
