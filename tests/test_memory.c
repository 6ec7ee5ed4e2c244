/* Memory modes on the CPU backend: managed and host buffers shared with the
 * host, a 256 MiB file mapped and summed by a kernel, a write-mode map whose
 * changes reach the file, and copy/fill/bounds checks. */
#include <fcntl.h>
#include <sys/stat.h>

#include "testutil.h"

static hk_context *ctx;
static char tmpdir[256];

static const char *kernel_src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void scale_add(float *v, float s, float t, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) v[i] = v[i] * s + t;\n"
    "}\n"
    "extern \"C\" __global__ void sum_u32(const unsigned *v, unsigned long long *total, unsigned long long n) {\n"
    "  unsigned long long acc = 0;\n"
    "  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (unsigned long long)blockDim.x * gridDim.x)\n"
    "    acc += v[i];\n"
    "  atomicAdd(total, acc);\n"
    "}\n"
    "extern \"C\" __global__ void stamp(unsigned *v, unsigned salt, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) v[i] = (unsigned)i * 2654435761u ^ salt;\n"
    "}\n";

static void test_shared_modes(hk_module *m)
{
    hk_kernel *k = NULL;
    hk_module_kernel(m, "scale_add", &k);
    const hk_mem_mode modes[] = {HK_MEM_MANAGED, HK_MEM_HOST};
    for (int mi = 0; mi < 2; mi++) {
        const int n = 5000;
        hk_buffer *b = NULL;
        int r = hk_buffer_alloc(ctx, n, HK_F32, modes[mi], &b);
        float *p = b ? hk_buffer_host_ptr(b) : NULL;
        if (!tap_ok(r == 0 && p, "%s buffer has a host pointer", hk_mem_mode_name(modes[mi])))
            continue;
        float *ref = malloc(n * 4);
        for (int i = 0; i < n; i++) /* written on the host, no copy call */
            p[i] = ref[i] = tu_uniform(-100, 100);
        float s = tu_uniform(0.5f, 2), t = tu_uniform(-1, 1);
        hk_launch_config cfg = tu_cfg((n + 255) / 256, 1, 1, 256, 1, 1, 0);
        hk_arg args[] = {hk_arg_buffer(b), hk_arg_float(s), hk_arg_float(t), hk_arg_int(n)};
        r = hk_launch(k, &cfg, args, 4);
        hk_synchronize(ctx);
        int bad = 0;
        for (int i = 0; i < n; i++) { /* a GPU may fuse the multiply-add: one rounding less */
            float want = ref[i] * s + t;
            bad += !(fabsf(p[i] - want) <= 1e-6f * (1.0f + fabsf(want)));
        }
        tap_ok(r == 0 && !bad, "%s buffer: written on the host, changed by a kernel, read on the host (%d wrong)",
               hk_mem_mode_name(modes[mi]), bad);
        hk_buffer_free(b);
        free(ref);
    }
}

static int write_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : n);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return close(fd);
}

static void test_mmap_sum(hk_module *m)
{
    hk_kernel *k = NULL;
    hk_module_kernel(m, "sum_u32", &k);
    const size_t bytes = 256u << 20, n = bytes / 4;
    unsigned *data = malloc(bytes);
    unsigned long long ref = 0;
    for (size_t i = 0; i < n; i++) {
        data[i] = (unsigned)(tu_next() >> 40);
        ref += data[i];
    }
    char path[512];
    snprintf(path, sizeof path, "%s/big.bin", tmpdir);
    if (!tap_ok(write_file(path, data, bytes) == 0, "wrote a 256 MiB file")) {
        free(data);
        return;
    }
    free(data);
    hk_buffer *b = NULL, *total = NULL;
    int r = hk_buffer_mmap(ctx, path, HK_U32, NULL, &b);
    tap_ok(r == 0 && hk_buffer_length(b) == n && hk_buffer_mode(b) == HK_MEM_MMAP,
           "the file maps as %zu u32 elements (%s)", n, r ? hk_errmsg(ctx) : "ok");
    if (r)
        return;
    hk_buffer_alloc(ctx, 1, HK_U64, HK_MEM_DEVICE, &total);
    unsigned long long zero = 0, got = 0;
    hk_buffer_fill(total, &zero);
    hk_launch_config cfg = tu_cfg(256, 1, 1, 256, 1, 1, 0);
    hk_arg args[] = {hk_arg_buffer(b), hk_arg_buffer(total), hk_arg_uint(n)};
    r = hk_launch(k, &cfg, args, 3);
    hk_buffer_download(total, 0, &got, 8);
    tap_ok(r == 0 && got == ref, "a kernel sums the mapped file: %llu (CPU %llu)", got, ref);

    unsigned one = 1;
    r = hk_buffer_upload(b, 0, &one, 4);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "read-only"), "a read-only map refuses an upload");
    hk_kernel *stamp = NULL;
    hk_module_kernel(m, "stamp", &stamp);
    if (tu_on_host()) { /* on a GPU the fault resets the context: tests/gpu covers it */
        hk_arg sargs[] = {hk_arg_buffer(b), hk_arg_uint(1), hk_arg_int(16)};
        hk_launch_config c16 = tu_cfg(1, 1, 1, 16, 1, 1, 0);
        r = hk_launch(stamp, &c16, sargs, 3);
        tap_ok(r == HK_EFAULT, "a kernel writing to a read-only map faults cleanly (%s)", hk_errmsg(ctx));
    }

    hk_mmap_options o;
    hk_mmap_options_defaults(&o);
    o.offset = 4096 * 3;
    o.length = 4096;
    hk_buffer *part = NULL;
    r = hk_buffer_mmap(ctx, path, HK_U32, &o, &part);
    unsigned firsts[2] = {0, 0}, expect[2];
    if (r == 0)
        hk_buffer_download(part, 0, firsts, 8);
    int fd = open(path, O_RDONLY);
    pread(fd, expect, 8, 4096 * 3);
    close(fd);
    tap_ok(r == 0 && hk_buffer_length(part) == 1024 && !memcmp(firsts, expect, 8),
           "a map at an offset sees the file's bytes at that offset");
    hk_buffer_free(part);
    o.offset = 100;
    r = hk_buffer_mmap(ctx, path, HK_U32, &o, &part);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "page size"), "an unaligned offset is refused with the reason");
    o.offset = 0;
    o.length = bytes + 4096;
    r = hk_buffer_mmap(ctx, path, HK_U32, &o, &part);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "past the end"), "a length past the end of the file is refused");
    hk_buffer_free(b);
    hk_buffer_free(total);
    unlink(path);
}

static void test_mmap_write(hk_module *m)
{
    hk_kernel *k = NULL;
    hk_module_kernel(m, "stamp", &k);
    char path[512];
    snprintf(path, sizeof path, "%s/rw.bin", tmpdir);
    const int n = 300000;
    hk_mmap_options o;
    hk_mmap_options_defaults(&o);
    o.writable = 1;
    o.create = 1;
    o.length = (uint64_t)n * 4;
    hk_buffer *b = NULL;
    int r = hk_buffer_mmap(ctx, path, HK_U32, &o, &b);
    if (!tap_ok(r == 0, "a writable map creates the file (%s)", r ? hk_errmsg(ctx) : "ok"))
        return;
    unsigned salt = (unsigned)tu_next();
    hk_arg args[] = {hk_arg_buffer(b), hk_arg_uint(salt), hk_arg_int(n)};
    hk_launch_config cfg = tu_cfg((n + 255) / 256, 1, 1, 256, 1, 1, 0);
    r = hk_launch(k, &cfg, args, 3);
    int s = hk_buffer_sync(b);
    unsigned *file = malloc((size_t)n * 4);
    int fd = open(path, O_RDONLY);
    ssize_t got = read(fd, file, (size_t)n * 4);
    close(fd);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += file[i] != ((unsigned)i * 2654435761u ^ salt);
    tap_ok(r == 0 && s == 0 && got == n * 4 && !bad, "a kernel's writes are in the file after sync (%d wrong)", bad);
    unsigned seven = 7;
    hk_buffer_upload(b, 4, &seven, 4);
    r = hk_buffer_free(b);
    fd = open(path, O_RDONLY);
    unsigned v = 0;
    pread(fd, &v, 4, 4);
    close(fd);
    tap_ok(r == 0 && v == 7, "an upload to a writable map is in the file after free");
    unlink(path);
    free(file);
}

static void test_copy_fill(void)
{
    const int n = 1000;
    hk_buffer *a, *b;
    hk_buffer_alloc(ctx, n, HK_I16, HK_MEM_DEVICE, &a);
    hk_buffer_alloc(ctx, n, HK_I16, HK_MEM_DEVICE, &b);
    int16_t v = -1234, out[1000], src[1000];
    for (int i = 0; i < n; i++)
        src[i] = (int16_t)tu_next();
    hk_buffer_fill(a, &v);
    hk_buffer_download(a, 0, out, sizeof out);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += out[i] != v;
    tap_ok(!bad, "fill writes the value into every i16 element");
    hk_buffer_upload(b, 0, src, sizeof src);
    int r = hk_buffer_copy(a, 10, b, 20, 100);
    hk_buffer_download(a, 0, out, sizeof out);
    tap_ok(r == 0 && !memcmp(out + 5, src + 10, 100) && out[4] == v && out[55] == v,
           "copy moves exactly the byte range asked for");
    r = hk_buffer_copy(a, 1990, b, 0, 20);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "outside the buffer"), "a copy past the end is refused");
    r = hk_buffer_download(a, 0, out, 2001);
    tap_ok(r == HK_EINVAL, "a download past the end is refused");
    hk_buffer_free(a);
    hk_buffer_free(b);
}

static void test_views(hk_module *m)
{
    const int n = 4096;
    hk_buffer *f = NULL, *u = NULL, *part = NULL, *bad = NULL;
    hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &f);
    float *src = malloc(n * 4);
    for (int i = 0; i < n; i++)
        src[i] = tu_uniform(-1e6f, 1e6f);
    hk_buffer_upload(f, 0, src, n * 4);
    int r = hk_buffer_view(f, HK_U32, 0, n, &u);
    uint32_t *bits = malloc(n * 4);
    if (r == 0)
        hk_buffer_download(u, 0, bits, n * 4);
    tap_ok(r == 0 && hk_buffer_is_view(u) && !memcmp(bits, src, n * 4),
           "a u32 view of an f32 buffer reads the same bits");
    /* a kernel through a view of the second half changes only that half */
    r = hk_buffer_view(f, HK_F32, n / 2 * 4, n / 2, &part);
    hk_kernel *k = NULL;
    hk_module_kernel(m, "scale_add", &k);
    hk_launch_config cfg = tu_cfg(n / 2 / 256, 1, 1, 256, 1, 1, 0);
    hk_arg args[] = {hk_arg_buffer(part), hk_arg_float(2), hk_arg_float(1), hk_arg_int(n / 2)};
    int lr = r == 0 ? hk_launch(k, &cfg, args, 4) : r;
    float *out = malloc(n * 4);
    hk_buffer_download(f, 0, out, n * 4);
    int wrong = 0;
    for (int i = 0; i < n; i++) {
        float want = i < n / 2 ? src[i] : src[i] * 2 + 1;
        wrong += i < n / 2 ? out[i] != want : !(fabsf(out[i] - want) <= 1e-6f * (1.0f + fabsf(want)));
    }
    tap_ok(lr == 0 && !wrong, "a kernel launched on a view writes through to the parent (%d wrong)", wrong);
    /* a view of a view counts its offset from the view it is given */
    hk_buffer *vv = NULL;
    r = hk_buffer_view(part, HK_U32, 8, 4, &vv);
    uint32_t got4[4] = {0};
    if (r == 0)
        hk_buffer_download(vv, 0, got4, sizeof got4);
    float expect4[4];
    hk_buffer_download(f, (size_t)(n / 2) * 4 + 8, expect4, sizeof expect4);
    tap_ok(r == 0 && !memcmp(got4, expect4, sizeof got4), "a view of a view starts at its own offset");
    /* hk_buffer_overlap: shared bytes, not shared parents */
    hk_buffer *first = NULL, *empty = NULL, *other = NULL;
    hk_buffer_view(f, HK_F32, 0, n / 2, &first);
    hk_buffer_view(f, HK_U8, 100, 0, &empty);
    hk_buffer_alloc(ctx, n, HK_F32, HK_MEM_DEVICE, &other);
    tap_ok(hk_buffer_overlap(f, f) && hk_buffer_overlap(f, part) && hk_buffer_overlap(u, part) &&
               hk_buffer_overlap(vv, part) && hk_buffer_overlap(first, u),
           "overlap: a buffer with itself, a view with its parent, views whose ranges meet");
    tap_ok(!hk_buffer_overlap(first, part) && !hk_buffer_overlap(first, vv) && !hk_buffer_overlap(f, other) &&
               !hk_buffer_overlap(empty, f) && !hk_buffer_overlap(NULL, f),
           "no overlap: adjacent halves, another allocation, an empty view, NULL");
    hk_buffer_free(first);
    hk_buffer_free(empty);
    hk_buffer_free(other);
    hk_buffer_free(vv);
    r = hk_buffer_view(f, HK_F64, 4, 10, &bad);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "multiple"), "a misaligned view offset is refused");
    r = hk_buffer_view(f, HK_F64, 0, n, &bad);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "the buffer has"), "a view past the end is refused");
    hk_buffer_free(part);
    hk_buffer_free(u);
    hk_buffer_free(f);
    free(src);
    free(bits);
    free(out);
}

/* A q4_0 buffer holds whole 18-byte blocks of 32 elements; a view of raw
 * bytes as q4_0 needs the blocks' 2-byte alignment, not an 18-byte one. */
static void test_quantized_buffers(void)
{
    hk_buffer *q = NULL, *raw = NULL, *v = NULL;
    int r = hk_buffer_alloc(ctx, 64, HK_Q4_0, HK_MEM_DEVICE, &q);
    tap_ok(r == 0 && hk_buffer_length(q) == 64 && hk_buffer_bytes(q) == 36,
           "64 q4_0 elements are two blocks, 36 bytes");
    hk_buffer_free(q);
    r = hk_buffer_alloc(ctx, 33, HK_Q4_0, HK_MEM_DEVICE, &q);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "whole number of q4_0 blocks"),
           "a q4_0 length that is no whole number of blocks is refused");
    hk_buffer_alloc(ctx, 1000, HK_U8, HK_MEM_DEVICE, &raw);
    r = hk_buffer_view(raw, HK_Q6_K, 2, 768, &v);
    tap_ok(r == 0 && hk_buffer_bytes(v) == 630 && hk_buffer_length(v) == 768,
           "a q6_K view of raw bytes at an even offset");
    hk_buffer_free(v);
    r = hk_buffer_view(raw, HK_Q8_0, 1, 32, &v);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "alignment"), "an odd q8_0 view offset is refused");
    r = hk_buffer_view(raw, HK_Q8_K, 0, 1024, &v);
    tap_ok(r == HK_EINVAL && strstr(hk_errmsg(ctx), "the buffer has"), "a q8_K view past the end is refused");
    hk_buffer_free(raw);
}

int main(void)
{
    tap_init();
    if (!tu_have_cxx()) {
        tap_skip("memory modes", "no C++ compiler (c++ or HIPKIT_CXX) on PATH");
        return tap_done();
    }
    tu_seed();
    snprintf(tmpdir, sizeof tmpdir, "%s/hk-mem-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    ctx = tu_context();
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "memory";
    hk_module *m = NULL;
    int r = hk_module_compile(ctx, kernel_src, &o, &m);
    if (tap_ok(r == 0, "test module compiles (%s)", r ? hk_errmsg(ctx) : "ok")) {
        test_shared_modes(m);
        test_mmap_sum(m);
        test_mmap_write(m);
        test_views(m);
        hk_module_free(m);
    }
    test_copy_fill();
    test_quantized_buffers();
    hk_context_destroy(ctx);
    rmdir(tmpdir);
    return tap_done();
}
