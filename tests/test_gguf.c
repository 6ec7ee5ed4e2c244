/* The GGUF reader's C API over bytes in memory (hk_gguf_open_bytes): the
 * accessors (keys by index and name, strings of an array, tensors by name),
 * tensor buffers (a copy works, a mapping of memory is refused with the
 * reason), and every truncation of a small file refused as HK_EFORMAT. The
 * file-backed path and more refusals: tests/lua/test_gguf.lua. */
#include "testutil.h"

static unsigned char file[512];
static size_t len;

static void put(const void *p, size_t n)
{
    memcpy(file + len, p, n);
    len += n;
}
static void put_u32(uint32_t v) { put(&v, 4); }
static void put_u64(uint64_t v) { put(&v, 8); }
static void put_str(const char *s)
{
    put_u64(strlen(s));
    put(s, strlen(s));
}

/* v3; keys "general.name" = "tiny", "words" = ["ab", "", "cde"]; tensors
 * "w" f32 [4] and "q" q8_0 [32], the data at 32-byte alignment. */
static void build(void)
{
    len = 0;
    put("GGUF", 4);
    put_u32(3);
    put_u64(2);
    put_u64(2);
    put_str("general.name");
    put_u32(8);
    put_str("tiny");
    put_str("words");
    put_u32(9);
    put_u32(8);
    put_u64(3);
    put_str("ab");
    put_str("");
    put_str("cde");
    put_str("w");
    put_u32(1);
    put_u64(4);
    put_u32(0);
    put_u64(0);
    put_str("q");
    put_u32(1);
    put_u64(32);
    put_u32(8);
    put_u64(32);
    len = (len + 31) / 32 * 32;
    float w[4] = {1.5f, -2, 0.25f, 8};
    put(w, sizeof w);
    len += 16; /* to the next multiple of 32 */
    for (int i = 0; i < 34; i++)
        file[len + (size_t)i] = (unsigned char)(i * 7 + 1);
    len += 34;
}

int main(void)
{
    tap_init();
    hk_context *ctx = tu_context();
    build();
    hk_gguf *g = NULL;
    int r = hk_gguf_open_bytes(ctx, file, len, &g);
    if (!tap_ok(r == 0, "a small v3 file opens (%s)", r ? hk_errmsg(ctx) : "ok")) {
        hk_context_destroy(ctx);
        return tap_done();
    }
    tap_ok(hk_gguf_version(g) == 3 && hk_gguf_kv_count(g) == 2 && hk_gguf_tensor_count(g) == 2 &&
               hk_gguf_alignment(g) == 32 && hk_gguf_data_offset(g) % 32 == 0,
           "version, counts, alignment, data offset");
    int64_t k = hk_gguf_kv_find(g, "words");
    const char *s = NULL;
    uint64_t n = 0;
    hk_gguf_kv kv;
    int good = k == 1 && hk_gguf_kv_get(g, (size_t)k, &kv) == 0 && kv.type == HK_GGUF_ARRAY &&
               kv.elem_type == HK_GGUF_STRING && kv.count == 3;
    good = good && hk_gguf_kv_string(g, 1, 2, &s, &n) == 0 && n == 3 && !memcmp(s, "cde", 3);
    good = good && hk_gguf_kv_string(g, 1, 1, &s, &n) == 0 && n == 0;
    tap_ok(good, "an array of strings by index, an empty one included");
    tap_ok(hk_gguf_kv_string(g, 1, 3, &s, &n) == HK_EINVAL && hk_gguf_kv_find(g, "nope") == HK_ENOTFOUND,
           "past the array's end and an unknown key are refused");
    tap_ok(hk_gguf_kv_string(g, 0, 0, &s, &n) == 0 && n == 4 && !memcmp(s, "tiny", 4) &&
               !strcmp(hk_gguf_type_name(HK_GGUF_STRING), "string"),
           "a string value");
    hk_gguf_tensor t;
    int64_t qi = hk_gguf_tensor_find(g, "q");
    tap_ok(qi == 1 && hk_gguf_tensor_get(g, 1, &t) == 0 && t.dtype == HK_Q8_0 && t.bytes == 34 &&
               t.elements == 32 && !strcmp(t.type_name, "q8_0") && t.offset + t.bytes == len,
           "tensor q: q8_0, 34 bytes, ending at the file's end");
    hk_buffer *b = NULL;
    r = hk_gguf_tensor_buffer(g, 1, HK_MEM_MMAP, &b);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "no file"), "bytes in memory cannot be mapped");
    r = hk_gguf_tensor_buffer(g, 0, HK_MEM_DEVICE, &b);
    float got[4] = {0};
    if (r == 0)
        hk_buffer_download(b, 0, got, sizeof got);
    tap_ok(r == 0 && hk_buffer_dtype(b) == HK_F32 && got[1] == -2 && got[3] == 8,
           "a tensor copied to a device buffer");
    hk_buffer_free(b);
    r = hk_gguf_tensor_buffer(g, 1, HK_MEM_DEVICE, &b);
    unsigned char raw[34] = {0};
    if (r == 0)
        hk_buffer_download(b, 0, raw, sizeof raw);
    tap_ok(r == 0 && hk_buffer_length(b) == 32 && !memcmp(raw, file + t.offset, 34),
           "a q8_0 tensor copied: 32 elements, its 34 bytes");
    hk_buffer_free(b);
    hk_gguf_close(g);

    int bad = 0;
    for (size_t cut = 0; cut < len; cut++) {
        g = NULL;
        r = hk_gguf_open_bytes(ctx, file, cut, &g);
        if (r != HK_EFORMAT || g) {
            tap_diag("cut at %zu: %d", cut, r);
            bad++;
            hk_gguf_close(g);
        }
    }
    tap_ok(!bad, "every truncation is HK_EFORMAT (%d were not)", bad);

    /* an f32 tensor of 2^62 x 2 elements and an f64 one of 2^61 x 4: the
     * counts fit 64 bits, their bytes (2^65, 2^66) do not */
    static const struct { uint32_t type; uint64_t ne0; } huge[] = {{0 /* f32 */, 1ull << 62}, {28 /* f64 */, 1ull << 61}};
    for (size_t i = 0; i < 2; i++) {
        len = 0;
        put("GGUF", 4);
        put_u32(3);
        put_u64(1);
        put_u64(0);
        put_str("big");
        put_u32(2);
        put_u64(huge[i].ne0);
        put_u64(i == 0 ? 2 : 4);
        put_u32(huge[i].type);
        put_u64(0);
        len = (len + 31) / 32 * 32;
        g = NULL;
        r = hk_gguf_open_bytes(ctx, file, len, &g);
        tap_ok(r == HK_EFORMAT && !g && strstr(hk_errmsg(ctx), "take more than 2^64 bytes"),
               "a tensor of %llu x %d %s elements (more than 2^64 bytes) is HK_EFORMAT: %s",
               (unsigned long long)huge[i].ne0, i == 0 ? 2 : 4, i == 0 ? "f32" : "f64", hk_errmsg(ctx));
        hk_gguf_close(g);
    }
    hk_gguf_close(NULL);
    hk_context_destroy(ctx);
    return tap_done();
}
