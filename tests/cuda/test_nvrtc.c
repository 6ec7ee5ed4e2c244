/* The NVIDIA backend's compiler and code-object reader, without a GPU:
 * cuda_compile.c (NVRTC with hipkit's HIP headers) and cuda_codeobj.c on a
 * fake backend with sm_90 and sm_80 devices. Every kernel source of the
 * other tests (copied unchanged into tests/cuda/kernels) and of
 * tests/host_lang must compile to a cubin for both, whose architecture and
 * kernel names read back right. Links NVRTC only, never libcuda. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "source_scan.h"
#include "../tap.h"

#ifndef HKC_TEST_KERNELS_DIR
#define HKC_TEST_KERNELS_DIR "tests/cuda/kernels"
#endif
#ifndef HKC_TEST_HOST_LANG_DIR
#define HKC_TEST_HOST_LANG_DIR "tests/host_lang"
#endif

static hkc_backend be;
static cuda_impl ci;

/* The names in `__global__ ... NAME(` definitions and declarations of src,
 * deduplicated, into names (a list of NUL-separated strings). */
static int source_kernels(const char *src, char names[][64], int cap)
{
    int n = 0;
    for (const char *p = strstr(src, "__global__"); p; p = strstr(p + 1, "__global__")) {
        const char *open = strchr(p, '(');
        if (!open)
            break;
        /* __launch_bounds__(...) may come between: skip over it. */
        const char *lb = strstr(p, "__launch_bounds__");
        if (lb && lb < open) {
            const char *close = strchr(lb, ')');
            if (!close)
                break;
            open = strchr(close, '(');
            if (!open)
                break;
        }
        const char *e = open;
        while (e > p && e[-1] == ' ')
            e--;
        const char *b = e;
        while (b > p && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') ||
                         (b[-1] >= 'A' && b[-1] <= 'Z') || (b[-1] >= '0' && b[-1] <= '9')))
            b--;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(e - b), b);
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= !strcmp(names[i], name);
        if (!dup && n < cap)
            snprintf(names[n++], 64, "%s", name);
    }
    return n;
}

/* Compiles src for device dev; on success checks the cubin's kind, arch and
 * that its kernels are exactly the source's (by plain name). */
static void check_source(const char *what, const char *src, int dev)
{
    hkc_compile_job job = {.name = what, .source = src};
    void *code = NULL;
    size_t size = 0;
    hkc_strbuf log;
    hkc_strbuf_init(&log);
    int r = hkc_cuda_compile(&be, dev, &job, &code, &size, &log);
    int arch = ci.devs[dev].cc_major * 10 + ci.devs[dev].cc_minor;
    if (!tap_ok(r == 0 && code && size > 0, "%s compiles for sm_%d", what, arch)) {
        tap_diag("%s", log.data);
        hkc_strbuf_free(&log);
        return;
    }
    tap_ok(hkc_cuda_image_kind(code, size) == CUDA_IMAGE_CUBIN &&
               hkc_cuda_cubin_arch(code, size) == arch,
           "%s: a cubin for sm_%d (read %d)", what, arch, hkc_cuda_cubin_arch(code, size));
    char want[64][64];
    int nwant = source_kernels(src, want, 64);
    char **names = NULL;
    int count = 0;
    r = hkc_cuda_cubin_kernels(code, size, &names, &count);
    int found = 0;
    for (int i = 0; i < nwant; i++) {
        int hit = 0;
        char buf[256];
        for (int k = 0; k < count; k++)
        {
            hkc_plain_name(names[k], buf, sizeof buf);
            hit |= !strcmp(buf, want[i]);
        }
        if (!hit)
            tap_diag("%s: kernel %s not in the cubin", what, want[i]);
        found += hit;
    }
    tap_ok(r == 0 && count == nwant && found == nwant, "%s: the cubin lists its %d kernels (%d)",
           what, nwant, count);
    free(names);
    free(code);
    hkc_strbuf_free(&log);
}

static char *read_in(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = NULL;
    size_t len = 0;
    if (hkc_read_file(path, &text, &len) != 0) {
        tap_ok(0, "read %s", path);
        return NULL;
    }
    return text;
}

static void test_kernel_files(void)
{
    static const char *files[] = {
        "tk_axpb.hip", "tk_matmul.hip", "tk_reduce.hip", "tk_histogram.hip", "tk_index3d.hip",
        "te_errors.hip", "tm_memory.hip", "lua_01_simple_add.hip", "lua_02_matrix_mul.hip",
        "lua_03_lazy_managed.hip", "lua_04_mmap_lazy.hip", "lua_05_explore.hip",
        "lua_launch.hip", "hl_kernels_nv.hip",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *src = read_in(HKC_TEST_KERNELS_DIR, files[i]);
        for (int dev = 0; src && dev < ci.ndev; dev++)
            check_source(files[i], src, dev);
        free(src);
    }
    /* tests/host_lang: fibers.hip and byvalue.hip as they are; kernels.hip
     * asserts warpSize == 64 and uses <type_traits>, so its NVIDIA copy
     * (hl_kernels_nv.hip above) drops those static_asserts. */
    static const char *hl[] = {"fibers.hip", "byvalue.hip"};
    for (size_t i = 0; i < sizeof hl / sizeof hl[0]; i++) {
        char *src = read_in(HKC_TEST_HOST_LANG_DIR, hl[i]);
        for (int dev = 0; src && dev < ci.ndev; dev++)
            check_source(hl[i], src, dev);
        free(src);
    }
}

static int compile_fails(const char *name, const char *src, const char *const *flags, int nflags,
                         hkc_strbuf *log)
{
    hkc_compile_job job = {.name = name, .source = src, .flags = flags, .nflags = nflags};
    void *code = NULL;
    size_t size = 0;
    int r = hkc_cuda_compile(&be, 0, &job, &code, &size, log);
    free(code);
    return r;
}

static void test_errors(void)
{
    char *src = read_in(HKC_TEST_KERNELS_DIR, "te_broken.hip");
    if (!src)
        return;
    hkc_strbuf log;
    hkc_strbuf_init(&log);
    int r = compile_fails("broken.hip", src, NULL, 0, &log);
    tap_ok(r == HK_ECOMPILE && strstr(log.data, "compiling broken.hip failed:") &&
               strstr(log.data, "broken.hip:3:") && strstr(log.data, "undeclared_thing"),
           "a compile error names the file, line 3 and the identifier");
    if (r != HK_ECOMPILE || !strstr(log.data, "broken.hip:3:"))
        tap_diag("%s", log.data);
    free(src);

    hkc_strbuf_clear(&log);
    const char *src2 = "#include <hip/hip_runtime.h>\n"
                       "#include <hip/hip_fp16.h>\n"
                       "\n"
                       "extern \"C\" __global__ void k(float *y) {\n"
                       "#if HKT_VALUE != 3\n"
                       "#error HKT_VALUE is not 3\n"
                       "#endif\n"
                       "  y[0] = missing_on_line_8;\n"
                       "}\n";
    r = compile_fails("deep.hip", src2, NULL, 0, &log);
    tap_ok(r == HK_ECOMPILE && strstr(log.data, "deep.hip:6:") &&
               strstr(log.data, "HKT_VALUE is not 3"),
           "an #error after included headers keeps the user's line number (6)");
    hkc_strbuf_clear(&log);
    const char *flags[] = {"-DHKT_VALUE=3"};
    r = compile_fails("deep.hip", src2, flags, 1, &log);
    tap_ok(r == HK_ECOMPILE && !strstr(log.data, "deep.hip:6:") &&
               strstr(log.data, "deep.hip:8: error:") && strstr(log.data, "missing_on_line_8"),
           "the job's -D flags reach the compiler; the next error is on line 8");
    if (!strstr(log.data, "deep.hip:8:"))
        tap_diag("%s", log.data);
    hkc_strbuf_clear(&log);
    const char *bad[] = {"--no-such-option"};
    r = compile_fails("opt.hip", "__global__ void k(void) {}\n", bad, 1, &log);
    tap_ok(r == HK_ECOMPILE && strstr(log.data, "compiling opt.hip failed"),
           "an unknown option is a compile error (%d)", r);
    hkc_strbuf_free(&log);
}

static void test_cxx_linkage(void)
{
    const char *src = "#include <hip/hip_runtime.h>\n"
                      "__global__ void __launch_bounds__(256, 2) vadd(const float *a, const float *b,\n"
                      "                                               float *c, unsigned n) {\n"
                      "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "  if (i < n) c[i] = a[i] + b[i];\n"
                      "}\n"
                      "__device__ __noinline__ float twice(float v) { return 2 * v; }\n"
                      "extern \"C\" __global__ void plain(float *y) { y[0] = twice(y[1]); }\n"
                      "namespace ns { __global__ void inner(int *p) { p[0] = __lane_id(); } }\n";
    hkc_compile_job job = {.name = "cxx.hip", .source = src};
    void *code = NULL;
    size_t size = 0;
    hkc_strbuf log;
    hkc_strbuf_init(&log);
    int r = hkc_cuda_compile(&be, 0, &job, &code, &size, &log);
    if (!tap_ok(r == 0, "C++-linkage kernels compile")) {
        tap_diag("%s", log.data);
        hkc_strbuf_free(&log);
        return;
    }
    char **names = NULL;
    int count = 0;
    r = hkc_cuda_cubin_kernels(code, size, &names, &count);
    int vadd = 0, plain = 0, inner = 0;
    char buf[256];
    for (int i = 0; i < count; i++) {
        hkc_plain_name(names[i], buf, sizeof buf);
        const char *p = buf;
        vadd += !strcmp(p, "vadd") && !strncmp(names[i], "_Z4vadd", 7);
        plain += !strcmp(p, "plain") && !strcmp(names[i], "plain");
        inner += !strcmp(p, "inner") && !strncmp(names[i], "_ZN2ns5inner", 12);
    }
    tap_ok(r == 0 && count == 3 && vadd && plain && inner,
           "entries: mangled vadd kept and demangled, plain, ns::inner as inner; no device function");
    for (int i = 0; i < count; i++)
        tap_diag("entry %s", names[i]);
    free(names);
    free(code);
    hkc_strbuf_free(&log);
}

static int plain_is(const char *sym, size_t cap, const char *want)
{
    char buf[64];
    memset(buf, 'x', sizeof buf);
    hkc_plain_name(sym, buf, cap);
    if (strcmp(buf, want)) {
        tap_diag("%s gave \"%s\", want \"%s\"", sym, buf, want);
        return 0;
    }
    return 1;
}

static void test_plain_name(void)
{
    tap_ok(plain_is("_Z4vaddPKfS0_Pfj", 64, "vadd"), "_Z4vaddPKfS0_Pfj is vadd");
    tap_ok(plain_is("_Z12matmul_tiledPKfS0_Pfi", 64, "matmul_tiled"), "two-digit lengths");
    tap_ok(plain_is("_ZN2ns5innerEPi", 64, "inner"), "a nested name gives its last part");
    tap_ok(plain_is("_Z6kernelIfEvPT_", 64, "kernel"), "a template instance gives its name");
    tap_ok(plain_is("axpb", 64, "axpb"), "an unmangled name is copied");
    tap_ok(plain_is("_Z99short", 64, "_Z99short"), "a length past the end: copied as is");
    tap_ok(plain_is("_Z12matmul_tiledPKfS0_Pfi", 5, "matm"), "truncated to the buffer");
}

static void test_image_kinds(void)
{
    const unsigned char fatbin[16] = {0x50, 0xed, 0x55, 0xba, 1, 0, 0x10, 0};
    tap_ok(hkc_cuda_image_kind(fatbin, sizeof fatbin) == CUDA_IMAGE_FATBIN, "fatbin magic");
    const char *ptx = "//\n// Generated by NVIDIA NVVM Compiler\n/* x */\n.version 9.0\n.target sm_90\n";
    tap_ok(hkc_cuda_image_kind(ptx, strlen(ptx)) == CUDA_IMAGE_PTX, "PTX after comments");
    const char *ptx2 = "\n.address_size 64\n.target sm_80\n";
    tap_ok(hkc_cuda_image_kind(ptx2, strlen(ptx2)) == CUDA_IMAGE_PTX, "PTX with .target only");
    const char *junk = "hello world";
    tap_ok(hkc_cuda_image_kind(junk, strlen(junk)) == CUDA_IMAGE_UNKNOWN &&
               hkc_cuda_image_kind(junk, 2) == CUDA_IMAGE_UNKNOWN,
           "anything else is unknown");
    unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    elf[18] = 62; /* x86-64 */
    char **names = NULL;
    int count = 0;
    tap_ok(hkc_cuda_image_kind(elf, sizeof elf) == CUDA_IMAGE_UNKNOWN &&
               hkc_cuda_cubin_arch(elf, sizeof elf) == 0 &&
               hkc_cuda_cubin_kernels(elf, sizeof elf, &names, &count) == HK_EFORMAT,
           "a host ELF is not a cubin");

    /* A real cubin, truncated at every 97th byte: never a crash, and never
     * a kernel list from a cut-off symbol table. */
    const char *src = "extern \"C\" __global__ void k(int *p) { p[0] = 1; }\n";
    hkc_compile_job job = {.name = "trunc.hip", .source = src};
    void *code = NULL;
    size_t size = 0;
    hkc_strbuf log;
    hkc_strbuf_init(&log);
    if (hkc_cuda_compile(&be, 1, &job, &code, &size, &log) == 0) {
        int bad = 0;
        for (size_t cut = 0; cut < size; cut += 97) {
            unsigned char *copy = malloc(cut ? cut : 1);
            memcpy(copy, code, cut);
            int r = hkc_cuda_cubin_kernels(copy, cut, &names, &count);
            if (r == 0) {
                for (int i = 0; i < count; i++)
                    bad += strcmp(names[i], "k") != 0;
                free(names);
            }
            free(copy);
        }
        tap_ok(bad == 0, "truncated cubins are refused or read right");
    } else {
        tap_ok(0, "trunc.hip compiles: %s", log.data);
    }
    free(code);
    hkc_strbuf_free(&log);
}

/* Kernels named by expression (a namespaced kernel, template
 * instantiations, one with a default written out as discovery does): NVRTC
 * lowers each to a symbol the cubin has, and they differ. */
static void test_name_expressions(void)
{
    static const char src[] =
        "#include <hip/hip_runtime.h>\n"
        "namespace ops {\n"
        "template <typename T, int S = 2> __global__ void scale(const T *x, T *y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * (T)S; }\n"
        "__global__ void neg(const float *x, float *y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = -x[i]; }\n"
        "}\n";
    hkc_source_kernel k[3] = {{.name = "ops::scale<double, 3>"},
                              {.name = "ops::scale<short>", .lower_as = "ops::scale<short, 2>"},
                              {.name = "ops::neg"}};
    char *lowered[3] = {0};
    hkc_compile_job job = {.name = "names", .source = src, .kernels = k, .nkernels = 3,
                           .lowered = lowered};
    void *code = NULL;
    size_t size = 0;
    hkc_strbuf log;
    hkc_strbuf_init(&log);
    int r = hkc_cuda_compile(&be, 0, &job, &code, &size, &log);
    tap_ok(r == 0 && lowered[0] && lowered[1] && lowered[2] && strcmp(lowered[0], lowered[1]) &&
               !strcmp(lowered[2], "_ZN3ops3negEPKfPfi"),
           "NVRTC lowers ops::scale<double, 3>, ops::scale<short> and ops::neg to distinct "
           "symbols (%s, %s, %s)%s%s", lowered[0] ? lowered[0] : "-", lowered[1] ? lowered[1] : "-",
           lowered[2] ? lowered[2] : "-", r ? ": " : "", r ? log.data : "");
    char **names = NULL;
    int count = 0, found = 0;
    if (r == 0 && hkc_cuda_cubin_kernels(code, size, &names, &count) == 0)
        for (int i = 0; i < count; i++)
            for (int j = 0; j < 3; j++)
                found += lowered[j] && !strcmp(names[i], lowered[j]);
    tap_ok(found == 3 && count == 3, "the cubin holds exactly those three symbols (%d of %d)", found,
           count);
    free(names);
    for (int j = 0; j < 3; j++)
        free(lowered[j]);
    free(code);
    hkc_strbuf_free(&log);
}

/* hk_code_info_free's work, as hkc_cuda_code_inspect allocated it (no
 * libhipkit here) */
static void free_info(hk_code_info *info)
{
    for (int k = 0; k < info->entries[0].nkernels; k++)
        free(info->entries[0].kernels[k].args);
    free(info->entries[0].kernels);
    free(info->entries);
    free(info);
}

/* A cubin's parameters (.nv.info): offsets and sizes as C lays out the
 * parameters, for scalars of every size, pointers, a struct and a float4
 * by value, none at all, a template's instance, and a struct past 4 KiB
 * (CUDA 12.1's large parameters, another attribute). */
static void test_cubin_params(void)
{
    static const char src[] =
        "#include <hip/hip_runtime.h>\n"
        "struct P { double a; int b; char c; };\n"
        "struct Big { float v[5000]; };\n"
        "extern \"C\" __global__ void mixed(char c, double d, short s, long long q, float *out, P p, float4 v,\n"
        "                                   int tail) { out[0] = c + d + s + q + p.a + v.x + tail; }\n"
        "extern \"C\" __global__ void none() {}\n"
        "extern \"C\" __global__ void big(float *y, Big b, int n) { y[0] = b.v[n]; }\n"
        "template <typename T> __global__ void scale(T *y, T a, int n) { y[0] = a * (T)n; }\n"
        "template __global__ void scale<double>(double *, double, int);\n";
    static const struct {
        const char *name;
        int n;
        unsigned off[8], size[8], space;
    } want[] = {
        {"mixed", 8, {0, 8, 16, 24, 32, 40, 64, 80}, {1, 8, 2, 8, 8, 16, 16, 4}, 84},
        {"none", 0, {0}, {0}, 0},
        {"big", 3, {0, 8, 20008}, {8, 20000, 4}, 20012},
        {"scale", 3, {0, 8, 16}, {8, 8, 4}, 20},
    };
    hkc_compile_job job = {.name = "params.hip", .source = src};
    hkc_strbuf log;
    hkc_strbuf_init(&log);
    void *code = NULL;
    size_t size = 0;
    int r = hkc_cuda_compile_target(&be, "sm_90", &job, &code, &size, &log);
    if (!tap_ok(r == 0, "kernels of known parameter layout compile for sm_90%s%s", r ? ": " : "", log.data)) {
        hkc_strbuf_free(&log);
        return;
    }
    hk_code_info *info = NULL;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    int ri = hkc_cuda_code_inspect(&be, code, size, &info, &err);
    if (tap_ok(ri == 0 && info->nentries == 1, "inspect reads the cubin (%s)", ri ? err.data : "ok")) {
        for (size_t w = 0; w < sizeof want / sizeof *want; w++) {
            const hk_code_kernel *k = NULL;
            for (int i = 0; i < info->entries[0].nkernels; i++)
                if (!strcmp(info->entries[0].kernels[i].name, want[w].name))
                    k = &info->entries[0].kernels[i];
            int ok = k && k->nargs == want[w].n && k->kernarg_size == want[w].space;
            for (int i = 0; ok && i < want[w].n; i++)
                ok = k->args[i].offset == want[w].off[i] && k->args[i].size == want[w].size[i] && !k->args[i].hidden;
            tap_ok(ok, "%s: %d parameters at their C offsets, %u bytes in all (read %d, %u)", want[w].name,
                   want[w].n, want[w].space, k ? k->nargs : -2, k ? k->kernarg_size : 0);
        }
        free_info(info);
    }
    /* a section cut short: its parameters are unknown (-1), never half read */
    unsigned char *cut = malloc(size);
    memcpy(cut, code, size);
    size_t hits = 0;
    for (size_t i = 0; i + 4 <= size; i++)
        if (cut[i] == 4 && (cut[i + 1] == 0x17 || cut[i + 1] == 0x45) && cut[i + 2] == 12 && cut[i + 3] == 0) {
            cut[i + 2] = 0xff; /* a size past the section's end */
            hits++;
        }
    info = NULL;
    ri = hkc_cuda_code_inspect(&be, cut, size, &info, &err);
    int unknown = ri == 0;
    for (int i = 0; unknown && i < info->entries[0].nkernels; i++)
        unknown = info->entries[0].kernels[i].nargs == (strcmp(info->entries[0].kernels[i].name, "none") ? -1 : 0);
    tap_ok(hits > 0 && unknown, "entries whose size runs past the section: parameters unknown, not misread (%zu)",
           hits);
    if (ri == 0)
        free_info(info);
    free(cut);
    hkc_strbuf_free(&err);
    hkc_strbuf_free(&log);
    free(code);
}

/* sm_90a, Hopper's architecture-specific target: a named compile makes an
 * sm_90a cubin (wgmma compiles only there, under the feature macro), a
 * 9.0 device's JIT does too, an 8.0 device's does not; the cubin says
 * which (.nv.compat), inspect names it, and the names are checked. */
static void test_arch_specific(void)
{
    static const char src[] =
        "#include <hip/hip_runtime.h>\n"
        "extern \"C\" __global__ void feat(int *y) {\n"
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        "  asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
        "  y[0] = 90;\n"
        "#else\n"
        "  y[0] = 1;\n"
        "#endif\n"
        "}\n";
    hkc_compile_job job = {.name = "feat.hip", .source = src};
    char norm[32];
    hkc_strbuf log;
    hkc_strbuf_init(&log);
    tap_ok(hkc_cuda_target_normalize(&be, "sm_90a", norm, sizeof norm, &log) == 0 &&
               !strcmp(norm, "sm_90a"),
           "sm_90a is a target (%s)", norm);
    tap_ok(hkc_cuda_target_normalize(&be, "sm_80a", norm, sizeof norm, &log) == HK_EINVAL &&
               hkc_cuda_target_normalize(&be, "sm_90b", norm, sizeof norm, &log) == HK_EINVAL,
           "sm_80a and sm_90b are not");
    hkc_strbuf_clear(&log);
    void *code = NULL;
    size_t size = 0;
    int r = hkc_cuda_compile_target(&be, "sm_90a", &job, &code, &size, &log);
    if (tap_ok(r == 0, "a wgmma kernel compiles for sm_90a%s%s", r ? ": " : "", log.data)) {
        hk_code_info *info = NULL;
        hkc_strbuf err;
        hkc_strbuf_init(&err);
        int ri = hkc_cuda_code_inspect(&be, code, size, &info, &err);
        tap_ok(hkc_cuda_cubin_arch(code, size) == 90 && hkc_cuda_cubin_arch_specific(code, size) == 1 &&
                   ri == 0 && !strcmp(info->entries[0].target, "sm_90a"),
               "its cubin reads as sm_90a (%s)", ri == 0 ? info->entries[0].target : err.data);
        if (ri == 0)
            free_info(info);
        hkc_strbuf_free(&err);
    }
    free(code);
    code = NULL;
    hkc_strbuf_clear(&log);
    r = hkc_cuda_compile_target(&be, "sm_90", &job, &code, &size, &log);
    tap_ok(r == 0 && hkc_cuda_cubin_arch(code, size) == 90 && hkc_cuda_cubin_arch_specific(code, size) == 0,
           "for sm_90 the cubin is plain sm_90 (the feature macro is not defined)");
    free(code);
    code = NULL;
    r = hkc_cuda_compile(&be, 0, &job, &code, &size, &log);
    tap_ok(r == 0 && hkc_cuda_cubin_arch_specific(code, size) == 1, "the JIT for a 9.0 device makes sm_90a");
    free(code);
    code = NULL;
    r = hkc_cuda_compile(&be, 1, &job, &code, &size, &log);
    tap_ok(r == 0 && hkc_cuda_cubin_arch(code, size) == 80 && hkc_cuda_cubin_arch_specific(code, size) == 0,
           "the JIT for an 8.0 device makes plain sm_80");
    free(code);
    hkc_strbuf_free(&log);
    tap_ok(hkc_cuda_image_rank("sm_90a", "sm_90") > 1000 && hkc_cuda_image_rank("sm_90a", "sm_80") == 0 &&
               hkc_cuda_image_rank("sm_90a", "sm_100") == 0 && hkc_cuda_image_rank("sm_90", "sm_90a") == 0,
           "an sm_90a image ranks above the exact name on sm_90 and fits nothing else");
}

int main(void)
{
    tap_init();
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
        tap_skip("cuda-nvrtc", "NVRTC does not initialise");
        return tap_done();
    }
    ci.ndev = 2;
    ci.devs[0].cc_major = 9;
    ci.devs[0].cc_minor = 0;
    ci.devs[1].cc_major = 8;
    ci.devs[1].cc_minor = 0;
    be.impl = &ci;
    hkc_strbuf_init(&be.reason);

    const char *tc = hkc_cuda_toolchain(&be, NULL);
    char want[32];
    snprintf(want, sizeof want, "nvrtc %d.%d hdr ", major, minor);
    tap_ok(!strncmp(tc, want, strlen(want)) && strlen(tc) == strlen(want) + 8 &&
               hkc_cuda_toolchain(&be, NULL) == tc,
           "toolchain is \"%s\"", tc);
    /* A quick probe: if even the trivial compile fails (no builtins
     * library, say), the rest is skipped rather than failed. */
    hkc_compile_job job = {.name = "probe.hip", .source = "__global__ void k(void) {}\n"};
    void *code = NULL;
    size_t size = 0;
    hkc_strbuf log;
    hkc_strbuf_init(&log);
    int r = hkc_cuda_compile(&be, 0, &job, &code, &size, &log);
    free(code);
    if (r == HK_EBACKEND) {
        tap_skip("cuda-nvrtc compiles", log.data);
        hkc_strbuf_free(&log);
        return tap_done();
    }
    hkc_strbuf_free(&log);
    test_plain_name();
    test_image_kinds();
    test_kernel_files();
    test_cxx_linkage();
    test_name_expressions();
    test_arch_specific();
    test_cubin_params();
    test_errors();
    return tap_done();
}
