/* `hipkit inspect model.gguf`: a GGUF file's header, metadata and tensor
 * list (hk_gguf_*), reading no tensor data: it lists a multi-GiB model at
 * once. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "inspect.h"

int hkl_is_gguf(const char *path)
{
    /* O_NONBLOCK and regular files only: a FIFO must not hang the peek (the
     * code object path then refuses it with its own message). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    char magic[4] = {0};
    int yes = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, magic, 4) == 4 &&
              !memcmp(magic, "GGUF", 4);
    close(fd);
    return yes;
}

/* One value, short: strings quoted (cut at 60 bytes), arrays by type and
 * length, numbers as the file has them. */
static void print_value(const hk_gguf *g, size_t i, const hk_gguf_kv *kv)
{
    const char *s;
    uint64_t len;
    if (kv->type == HK_GGUF_ARRAY) {
        printf("[%" PRIu64 " x %s]", kv->count, hk_gguf_type_name(kv->elem_type));
        return;
    }
    if (kv->type == HK_GGUF_STRING) {
        hk_gguf_kv_string(g, i, 0, &s, &len);
        printf("\"%.*s%s\"", (int)(len > 60 ? 60 : len), s, len > 60 ? "..." : "");
        return;
    }
    union {
        uint8_t b[8]; int8_t i8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
        float f; uint64_t u64; int64_t i64; double d;
    } v;
    static const unsigned char sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    memcpy(v.b, kv->data, sizes[kv->type]);
    switch (kv->type) {
    case HK_GGUF_U8: printf("%u", v.b[0]); break;
    case HK_GGUF_I8: printf("%d", v.i8); break;
    case HK_GGUF_U16: printf("%u", v.u16); break;
    case HK_GGUF_I16: printf("%d", v.i16); break;
    case HK_GGUF_U32: printf("%" PRIu32, v.u32); break;
    case HK_GGUF_I32: printf("%" PRId32, v.i32); break;
    case HK_GGUF_F32: printf("%g", v.f); break;
    case HK_GGUF_BOOL: printf("%s", v.b[0] ? "true" : "false"); break;
    case HK_GGUF_U64: printf("%" PRIu64, v.u64); break;
    case HK_GGUF_I64: printf("%" PRId64, v.i64); break;
    default: printf("%g", v.d); break;
    }
}

int hkl_inspect_gguf(const char *path)
{
    char why[1024] = "";
    hk_context *ctx = hkl_inspect_context(why, sizeof why);
    if (!ctx) {
        fprintf(stderr, "hipkit inspect: no hipkit context: %s\n", why);
        return 1;
    }
    hk_gguf *g = NULL;
    if (hk_gguf_open(ctx, path, &g) != 0) {
        fprintf(stderr, "hipkit inspect: %s\n", hk_errmsg(ctx));
        hk_context_destroy(ctx);
        return 1;
    }
    size_t nkv = hk_gguf_kv_count(g), nt = hk_gguf_tensor_count(g);
    printf("%s: GGUF v%u, %zu metadata keys, %zu tensors, data from byte %" PRIu64
           " (alignment %" PRIu64 ")\n", path, hk_gguf_version(g), nkv, nt,
           hk_gguf_data_offset(g), hk_gguf_alignment(g));
    for (size_t i = 0; i < nkv; i++) {
        hk_gguf_kv kv;
        hk_gguf_kv_get(g, i, &kv);
        printf("  %-40s %-6s ", kv.key, hk_gguf_type_name(kv.type));
        print_value(g, i, &kv);
        putchar('\n');
    }
    uint64_t total = 0;
    printf("  %4s  %-40s %-8s %-24s %14s %14s\n", "#", "tensor", "type", "shape", "bytes", "offset");
    for (size_t i = 0; i < nt; i++) {
        hk_gguf_tensor t;
        hk_gguf_tensor_get(g, i, &t);
        char shape[96] = "";
        size_t at = 0;
        for (int d = 0; d < t.ndim && at < sizeof shape; d++)
            at += (size_t)snprintf(shape + at, sizeof shape - at, d ? " x %" PRIu64 : "%" PRIu64,
                                   t.shape[d]);
        printf("  %4zu  %-40s %-8s %-24s %14" PRIu64 " %14" PRIu64 "\n", i, t.name, t.type_name,
               shape, t.bytes, t.offset);
        total += t.bytes;
    }
    printf("  %zu tensors, %" PRIu64 " bytes of tensor data\n", nt, total);
    hk_gguf_close(g);
    hk_context_destroy(ctx);
    return 0;
}
