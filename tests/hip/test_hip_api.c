/* The AMD backend through the public API, with no AMD GPU: hiprtc compiles
 * for named targets through the compile cache, the code objects are read
 * back with comgr (arguments, resources, disassembly), signatures are
 * checked against the metadata, and the backend says why it has no device.
 * Every check compares with facts computed here (C layout of the
 * parameters) or stated by the source, never with a stored answer. */
#include <stddef.h>

#include "../testutil.h"

#ifndef HK_TEST_SRC_DIR
#define HK_TEST_SRC_DIR "."
#endif

static hk_context *ctx;

/* The first line of the last error: a TAP line must stay one line. */
static const char *err1(void)
{
    static char line[512];
    snprintf(line, sizeof line, "%s", hk_errmsg(ctx));
    line[strcspn(line, "\n")] = 0;
    return line;
}

static const char *vadd_src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void vector_add(const float *a, const float *b, float *c, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "extern \"C\" __global__ void mixed(char c, double d, short s, long long q, float *out) {\n"
    "  __shared__ float tile[300];\n"
    "  tile[threadIdx.x] = c + d + s + q;\n"
    "  __syncthreads();\n"
    "  out[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];\n"
    "}\n";

static int compile(const char *target, const char *src, const char *name, void **code, size_t *size,
                   hk_code_origin *origin)
{
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = name;
    return hk_compile_for_target(ctx, "hip", target, src, &o, code, size, origin);
}

static const hk_code_kernel *find_kernel(const hk_code_info *info, int entry, const char *name)
{
    for (int k = 0; entry < info->nentries && k < info->entries[entry].nkernels; k++)
        if (!strcmp(info->entries[entry].kernels[k].name, name))
            return &info->entries[entry].kernels[k];
    return NULL;
}

/* The explicit parameters must sit where C would put them. */
static int layout_ok(const hk_code_kernel *k, const unsigned *sizes, int n)
{
    unsigned off = 0;
    int seen = 0;
    for (int a = 0; a < k->nargs; a++) {
        if (k->args[a].hidden)
            continue;
        if (seen >= n)
            return 0;
        unsigned sz = sizes[seen];
        off = (off + sz - 1) / sz * sz; /* scalars and pointers: alignment = size */
        if (k->args[a].offset != off || k->args[a].size != sz) {
            tap_diag("%s arg %d: offset %u size %u, C layout says offset %u size %u", k->name, seen,
                     k->args[a].offset, k->args[a].size, off, sz);
            return 0;
        }
        off += sz;
        seen++;
    }
    return seen == n;
}

static void test_backend_listed(void)
{
    int found = 0;
    for (int i = 0; i < hk_backend_count(ctx); i++) {
        hk_backend_info bi;
        hk_backend_get(ctx, i, &bi);
        if (strcmp(bi.name, "hip"))
            continue;
        found = 1;
        if (bi.available) {
            tap_ok(bi.device_count > 0, "the hip backend has %d AMD device(s)", bi.device_count);
        } else {
            tap_ok(strstr(bi.reason, "no AMD GPU") && strstr(bi.reason, "hipGetDeviceCount"),
                   "the hip backend is listed unavailable with its reason: %s", bi.reason);
        }
        tap_ok(strstr(bi.toolchain, "hiprtc") != NULL, "its toolchain names hiprtc: %s", bi.toolchain);
    }
    tap_ok(found, "hk_backend_get lists a hip backend");
}

static void test_vector_add(const char *target, unsigned wave)
{
    void *code = NULL;
    size_t size = 0;
    hk_code_origin origin;
    int r = compile(target, vadd_src, "vadd", &code, &size, &origin);
    if (!tap_ok(r == 0, "%s: hiprtc compiles vector_add (%s)", target, r ? err1() : "ok"))
        return;
    hk_code_info *info = NULL;
    r = hk_code_inspect(ctx, code, size, &info);
    if (tap_ok(r == 0, "%s: inspect reads it (%s)", target, r ? err1() : "ok")) {
        tap_ok(!strcmp(info->format, "amdgpu-elf") && info->nentries == 1 &&
                   !strncmp(info->entries[0].target, target, strlen(target)),
               "%s: a raw ELF for %s (%s)", target, info->entries[0].target, info->format);
        const hk_code_kernel *k = find_kernel(info, 0, "vector_add");
        const unsigned vsz[] = {8, 8, 8, 4};
        tap_ok(k && layout_ok(k, vsz, 4), "%s: vector_add's four parameters at C offsets", target);
        tap_ok(k && k->kernarg_size >= 28 && k->wavefront_size == wave && k->vgprs > 0 &&
                   k->sgprs > 0,
               "%s: kernarg %u, wavefront %u (want %u), vgprs %d, sgprs %d", target,
               k ? k->kernarg_size : 0, k ? k->wavefront_size : 0, wave, k ? k->vgprs : -1,
               k ? k->sgprs : -1);
        const hk_code_kernel *mk = find_kernel(info, 0, "mixed");
        const unsigned msz[] = {1, 8, 2, 8, 8};
        tap_ok(mk && layout_ok(mk, msz, 5), "%s: mixed (char, double, short, long long, float *) at C offsets",
               target);
        tap_ok(mk && mk->lds_bytes >= 300 * sizeof(float), "%s: mixed's LDS holds its tile (%u bytes)",
               target, mk ? mk->lds_bytes : 0);
    }
    hk_code_info_free(info);

    char *text = NULL;
    r = hk_code_disasm(ctx, code, size, "vector_add", &text);
    tap_ok(r == 0 && text && strstr(text, "vector_add") && strstr(text, "s_endpgm") &&
               !strstr(text, "mixed"),
           "%s: disassembly of vector_add has its symbol and s_endpgm, not the other kernel", target);
    free(text);
    text = NULL;
    r = hk_code_disasm(ctx, code, size, "nope", &text);
    tap_ok(r == HK_ENOTFOUND && strstr(err1(), "vector_add"),
           "%s: disassembly of an unknown kernel names those there are: %s", target, err1());
    free(text);

    r = hk_code_check_signature(ctx, code, size, "vector_add",
                                "const float *a, const float *b, float *c, int n");
    tap_ok(r == 0, "%s: the right signature passes the metadata check (%s)", target,
           r ? err1() : "ok");
    r = hk_code_check_signature(ctx, code, size, "vector_add",
                                "const float *a, const float *b, float *c, size_t n");
    tap_ok(r == HK_EARG && strstr(err1(), "'n'"),
           "%s: size_t n for int n is caught by the metadata: %s", target, err1());
    r = hk_code_check_signature(ctx, code, size, "vector_add", "const float *a, float *c, int n");
    tap_ok(r == HK_EARG && strstr(err1(), "3 parameters") && strstr(err1(), "4"),
           "%s: a missing parameter is caught: %s", target, err1());
    r = hk_code_check_signature(ctx, code, size, "mixed", "char c, float d, short s, long long q, float *out");
    tap_ok(r == HK_EARG && strstr(err1(), "'d'"),
           "%s: float for double is caught: %s", target, err1());
    free(code);
}

/* Vectors by value where hiprtc's own headers lay them out: the metadata's
 * offsets are HIP's C layout (float3 aligned to 4, double4 to 32), and the
 * signature, whose double4 the parser aligns to 16 as CUDA does, follows
 * them; a signature that misplaces a vector is caught. */
static void test_vectors(void)
{
    static const char src[] =
        "#include <hip/hip_runtime.h>\n"
        "#include <hip/hip_fp16.h>\n"
        "extern \"C\" __global__ void vecs(float a, double4 v, int n, float3 t, char c, float4 f,\n"
        "                                  __half2 h, uchar4 u, double2 q, char3 c3, float *out) {\n"
        "  out[threadIdx.x] = a + v.x + v.w + n + t.z + c + f.y + __low2float(h) + u.w + q.y + c3.z;\n"
        "}\n";
    static const char sig[] = "float a, double4 v, int n, float3 t, char c, float4 f, __half2 h, "
                              "uchar4 u, double2 q, char3 c3, float *out";
    /* a@0 v@32 n@64 t@68 c@80 f@96 h@112 u@116 q@128 c3@144 out@152 */
    static const unsigned want_off[] = {0, 32, 64, 68, 80, 96, 112, 116, 128, 144, 152};
    static const unsigned want_size[] = {4, 32, 4, 12, 1, 16, 4, 4, 16, 3, 8};
    void *code = NULL;
    size_t size = 0;
    hk_code_origin origin;
    int r = compile("gfx90a", src, "vecs", &code, &size, &origin);
    if (!tap_ok(r == 0, "gfx90a: hiprtc compiles a kernel taking vectors by value (%s)",
                r ? err1() : "ok"))
        return;
    hk_code_info *info = NULL;
    r = hk_code_inspect(ctx, code, size, &info);
    const hk_code_kernel *k = r == 0 ? find_kernel(info, 0, "vecs") : NULL;
    int good = k != NULL, seen = 0;
    for (int a = 0; k && a < k->nargs; a++) {
        if (k->args[a].hidden)
            continue;
        if (seen >= 11 || k->args[a].offset != want_off[seen] || k->args[a].size != want_size[seen]) {
            tap_diag("vecs arg %d: offset %u size %u", seen, k->args[a].offset, k->args[a].size);
            good = 0;
        }
        seen++;
    }
    tap_ok(good && seen == 11, "gfx90a: the metadata puts the vectors where HIP's C layout does "
                               "(double4 aligned to 32, float3 and char3 to their element)");
    hk_code_info_free(info);
    r = hk_code_check_signature(ctx, code, size, "vecs", sig);
    tap_ok(r == 0, "gfx90a: the signature with vectors passes the metadata check (%s)",
           r ? err1() : "ok");
    r = hk_code_check_signature(ctx, code, size, "vecs",
                                "float a, double4 v, int n, float4 t, char c, float4 f, __half2 h, "
                                "uchar4 u, double2 q, char3 c3, float *out");
    tap_ok(r == HK_EARG && strstr(err1(), "'t'"), "gfx90a: float4 for float3 is caught: %s",
           err1());
    free(code);
}

/* xnack+ and xnack- code never share a cache entry; two spellings of one
 * target id do. */
static void test_cache_keys(void)
{
    char src[512];
    snprintf(src, sizeof src,
             "#include <hip/hip_runtime.h>\n"
             "extern \"C\" __global__ void axpb(float a, const float *x, float b, float *y, int n) {\n"
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
             "  if (i < n) y[i] = a * x[i] + b; /* %llu */\n"
             "}\n",
             (unsigned long long)tu_next()); /* fresh: the first compile must be a JIT */
    void *c1 = NULL, *c2 = NULL, *c3 = NULL, *c4 = NULL;
    size_t s1 = 0, s2 = 0, s3 = 0, s4 = 0;
    hk_code_origin o1 = HK_ORIGIN_CACHE, o2 = HK_ORIGIN_CACHE, o3 = HK_ORIGIN_JIT, o4 = HK_ORIGIN_JIT;
    int r1 = compile("gfx90a:xnack+", src, "axpb", &c1, &s1, &o1);
    int r2 = compile("gfx90a:xnack-", src, "axpb", &c2, &s2, &o2);
    int r3 = compile("gfx90a:xnack+", src, "axpb", &c3, &s3, &o3);
    int r4 = compile("gfx90a:xnack-:sramecc+", src, "axpb", &c4, &s4, &o4);
    free(c4);
    c4 = NULL;
    int r5 = compile("gfx90a:sramecc+:xnack-", src, "axpb", &c4, &s4, &o4);
    tap_ok(!r1 && !r2 && !r3 && !r4 && !r5, "the xnack variants compile (%s)", err1());
    tap_ok(o1 == HK_ORIGIN_JIT && o2 == HK_ORIGIN_JIT,
           "xnack+ then xnack-: both compiled (%s, %s): their keys differ", hk_code_origin_name(o1),
           hk_code_origin_name(o2));
    tap_ok(o3 == HK_ORIGIN_CACHE && s3 == s1 && c1 && c3 && !memcmp(c1, c3, s1),
           "xnack+ again: the same code from the disk cache (%s)", hk_code_origin_name(o3));
    tap_ok(o4 == HK_ORIGIN_CACHE, "gfx90a:xnack-:sramecc+ and gfx90a:sramecc+:xnack- share one entry (%s)",
           hk_code_origin_name(o4));
    hk_code_info *i1 = NULL, *i2 = NULL;
    if (c1 && c2 && hk_code_inspect(ctx, c1, s1, &i1) == 0 && hk_code_inspect(ctx, c2, s2, &i2) == 0)
        tap_ok(strstr(i1->entries[0].target, "xnack+") && strstr(i2->entries[0].target, "xnack-"),
               "the code objects state their setting (%s, %s)", i1->entries[0].target,
               i2->entries[0].target);
    else
        tap_ok(0, "inspect the xnack variants: %s", err1());
    hk_code_info_free(i1);
    hk_code_info_free(i2);
    free(c1);
    free(c2);
    free(c3);
    free(c4);
}

static void test_errors(void)
{
    void *code = NULL;
    size_t size = 0;
    const char *bad = "#include <hip/hip_runtime.h>\n"
                      "extern \"C\" __global__ void f(int *p) {\n"
                      "  p[0] = undeclared_thing;\n"
                      "}\n";
    int r = compile("gfx90a", bad, "broken.hip", &code, &size, NULL);
    const char *msg = hk_errmsg(ctx);
    tap_ok(r == HK_ECOMPILE && strstr(msg, "broken.hip:3:") && strstr(msg, "undeclared_thing"),
           "a compile error gives the log with file and line (%s)", err1());
    tap_ok(code == NULL, "and no code");
    r = compile("gfx90a:foo+", vadd_src, "vadd", &code, &size, NULL);
    tap_ok(r == HK_EINVAL && strstr(err1(), "foo"), "an unknown feature is refused: %s",
           err1());
    r = compile("sm_90", vadd_src, "vadd", &code, &size, NULL);
    tap_ok(r == HK_EINVAL && strstr(err1(), "sm_90"), "an NVIDIA arch is no AMD target: %s",
           err1());
    /* AMD code while the CPU is the current device: named, not mis-loaded */
    int host = hk_device_find(ctx, "host"), cur = hk_device_current(ctx);
    if (compile("gfx90a", vadd_src, "vadd", &code, &size, NULL) == 0 && host >= 0 &&
        hk_device_select(ctx, host) == 0) {
        hk_module *m = NULL;
        r = hk_module_load_bytes(ctx, code, size, "vadd.co", &m);
        tap_ok(r == HK_EFORMAT && m == NULL && strstr(hk_errmsg(ctx), "hip backend") &&
                   strstr(hk_errmsg(ctx), "gfx90a"),
               "loading AMD code on the CPU device says whose code it is: %s", err1());
        hk_device_select(ctx, cur);
    } else {
        tap_ok(0, "compile and select the host device: %s", err1());
    }
    free(code);
    code = NULL;
    r = hk_compile_for_target(ctx, "rocm", "gfx90a", vadd_src, NULL, &code, &size, NULL);
    tap_ok(r == HK_ENOTFOUND && strstr(err1(), "rocm"), "an unknown backend is named: %s",
           err1());
    const char text[] = "just some text, not a code object";
    hk_code_info *info = NULL;
    r = hk_code_inspect(ctx, text, sizeof text - 1, &info);
    tap_ok(r == HK_EFORMAT && info == NULL && strstr(err1(), "text"),
           "inspecting text says what it is: %s", err1());
    unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    elf[18] = 62; /* x86-64 */
    r = hk_code_inspect(ctx, elf, sizeof elf, &info);
    tap_ok(r == HK_EFORMAT && strstr(err1(), "x86"), "an x86-64 ELF is named as such: %s",
           err1());
}

/* The core's own test kernels (tests/host_lang) and a plugin family's
 * source compile with hiprtc for both targets the issue names. */
static void test_core_kernels(void)
{
    /* (host_lang/kernels.hip is left out: it checks the CPU backend's own
     * facts, warpSize 64 and std type traits that hiprtc 5 lacks) */
    const char *files[] = {"host_lang/fibers.hip",
                           "../kernels/binary/binary.hip", "../kernels/cast/cast.hip"};
    const char *targets[] = {"gfx90a", "gfx1030"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", HK_TEST_SRC_DIR, files[f]);
        FILE *fp = fopen(path, "rb");
        char *src = NULL;
        long n = 0;
        if (fp && fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) > 0 && fseek(fp, 0, SEEK_SET) == 0 &&
            (src = calloc((size_t)n + 1, 1)) && fread(src, 1, (size_t)n, fp) != (size_t)n) {
            free(src);
            src = NULL;
        }
        if (fp)
            fclose(fp);
        if (!src) {
            tap_ok(0, "read %s", path);
            continue;
        }
        for (size_t t = 0; t < 2; t++) {
            hk_compile_options o;
            hk_compile_options_defaults(&o);
            o.name = files[f];
            void *code = NULL;
            size_t size = 0;
            int r = hk_compile_for_target(ctx, "hip", targets[t], src, &o, &code, &size, NULL);
            hk_code_info *info = NULL;
            int kernels = 0;
            if (r == 0 && hk_code_inspect(ctx, code, size, &info) == 0)
                kernels = info->entries[0].nkernels;
            if (r != 0)
                tap_diag("%s", hk_errmsg(ctx));
            tap_ok(r == 0 && kernels > 0, "%s for %s: %d kernels%s%s", files[f], targets[t], kernels, r ? ": " : "", r ? err1() : "");
            hk_code_info_free(info);
            free(code);
        }
        free(src);
    }
}

/* A kernel template instantiated by name expression and a kernel in a
 * namespace: hiprtc lowers both (their symbols are mangled) and the
 * metadata lays out the parameters the arguments give. */
static void test_templates(const char *target)
{
    static const char src[] =
        "#include <hip/hip_runtime.h>\n"
        "namespace ops {\n"
        "template <typename T, int S = 2> __global__ void scale(const T *x, T *y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * (T)S; }\n"
        "__global__ void neg(const float *x, float *y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = -x[i]; }\n"
        "}\n";
    const char *inst[] = {"ops::scale<double, 3>", "ops::scale<short>"};
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "tmpl";
    o.instantiate = inst;
    o.ninstantiate = 2;
    void *code = NULL;
    size_t size = 0;
    int r = hk_compile_for_target(ctx, "hip", target, src, &o, &code, &size, NULL);
    if (!tap_ok(r == 0, "%s: hiprtc compiles two instantiations and a namespaced kernel (%s)",
                target, r ? err1() : "ok"))
        return;
    hk_code_info *info = NULL;
    r = hk_code_inspect(ctx, code, size, &info);
    const hk_code_kernel *d = NULL, *sh = NULL, *ng = NULL;
    for (int k = 0; r == 0 && k < info->entries[0].nkernels; k++) {
        const hk_code_kernel *x = &info->entries[0].kernels[k];
        if (!strncmp(x->symbol, "_ZN3ops5scaleIdLi3EEEv", 22))
            d = x;
        else if (!strncmp(x->symbol, "_ZN3ops5scaleIsLi2EEEv", 22))
            sh = x;
        else if (!strncmp(x->symbol, "_ZN3ops3negE", 12))
            ng = x;
    }
    const unsigned ptrs[] = {8, 8, 4};
    tap_ok(d && sh && ng && layout_ok(d, ptrs, 3) && layout_ok(sh, ptrs, 3) && layout_ok(ng, ptrs, 3),
           "%s: ops::scale<double, 3>, ops::scale<short> (default S = 2) and ops::neg are in the "
           "code object under their mangled symbols (named as the source names them), parameters at C offsets",
           target);
    hk_code_info_free(info);
    free(code);
    /* kernels a macro makes are found in the source as the AMD compiler
     * preprocesses it: a template the macro defines can be instantiated */
    static const char macro_src[] =
        "#include <hip/hip_runtime.h>\n"
        "#define SCALER(NS, F) namespace NS { template <typename T> __global__ void scale(T *y, int n) { \\\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] *= (T)F; } }\n"
        "SCALER(twice, 2)\n"
        "#if 0\n"
        "SCALER(never, 3)\n"
        "#endif\n";
    const char *minst[] = {"twice::scale<float>"};
    o.instantiate = minst;
    o.ninstantiate = 1;
    r = hk_compile_for_target(ctx, "hip", target, macro_src, &o, &code, &size, NULL);
    int found = 0;
    if (r == 0 && hk_code_inspect(ctx, code, size, &info) == 0) {
        for (int k = 0; k < info->entries[0].nkernels; k++)
            found += !strncmp(info->entries[0].kernels[k].symbol, "_ZN5twice5scaleIfEEvPT_i", 24) &&
                     !strcmp(info->entries[0].kernels[k].name, "scale");
        hk_code_info_free(info);
    }
    free(code);
    tap_ok(r == 0 && found == 1,
           "%s: a kernel template made by a macro is found in the preprocessed source and "
           "instantiated (%s)", target, r ? err1() : "ok");
    const char *never[] = {"never::scale<float>"};
    o.instantiate = never;
    r = hk_compile_for_target(ctx, "hip", target, macro_src, &o, &code, &size, NULL);
    tap_ok(r != 0 && strstr(err1(), "no kernel template 'never::scale'"),
           "%s: one under #if 0 is not there: %s", target, err1());
    const char *bad[] = {"ops::scale<float, 1, 2>"};
    o.instantiate = bad;
    o.ninstantiate = 1;
    r = hk_compile_for_target(ctx, "hip", target, src, &o, &code, &size, NULL);
    tap_ok(r != 0 && strstr(err1(), "takes 2 template arguments"),
           "%s: three arguments for two parameters are refused before hiprtc: %s", target, err1());
}

/* A CUDA source as it is (candle's and ggml's idioms): CUDA's fp8 and
 * libcu++ headers, __vsubss4 and __dp4a, the 16-bit atomicCAS, atomicAdd
 * on a half, a bfloat16 shuffle, min() of a coordinate, assert and __trap
 * without an include, and no #include <hip/hip_runtime.h>. The same source
 * runs on the CPU backend (tests/lua/test_cuda_sources.lua); here both AMD
 * compilers must take it. */
static const char cuda_style_src[] =
    "#include \"cuda_fp16.h\"\n"
    "#include \"cuda_bf16.h\"\n"
    "#include \"cuda_fp8.h\"\n"
    "#include <cuda/std/limits>\n"
    "extern \"C\" __global__ void cuda_style(const int *a, int *o, __half *h, unsigned short *u,\n"
    "                                       __nv_bfloat16 *b, unsigned char *f8) {\n"
    "  int i = threadIdx.x;\n"
    "  o[i] = __dp4a((int)__vsubss4(a[i], 0x08080808), a[i], 0) + cuda::std::numeric_limits<int>::max();\n"
    "  atomicCAS(u, (unsigned short)i, (unsigned short)(i + 1));\n"
    "  atomicAdd(h, __float2half(1.0f));\n"
    "  atomicCAS(u, 0, 1); /* literals convert, as in CUDA */\n"
    "  atomicAdd(h, 1.0f);\n"
    "  atomicMax((long long *)o, (long)i);\n"
    "  b[i] = __shfl_xor_sync(0xffffffffu, b[i], 1, 32);\n"
    "  f8[i] = __nv_fp8_e4m3((float)o[i]).__x ^ __nv_cvt_float_to_fp8(1.5f, __NV_NOSAT, __NV_E5M2);\n"
    "  assert(i < 1024);\n"
    "  if (min(5u, blockDim.x) == 0) __trap();\n"
    "}\n";

static void test_cuda_source(const char *target)
{
    void *code = NULL;
    size_t size = 0;
    int r = compile(target, cuda_style_src, "cuda_style.cu", &code, &size, NULL);
    tap_ok(r == 0, "%s: hiprtc compiles a CUDA source as it is (fp8, cuda/std, dp4a, 16-bit CAS) (%s)",
           target, r ? err1() : "ok");
    hk_code_info *info = NULL;
    if (r == 0 && hk_code_inspect(ctx, code, size, &info) == 0)
        tap_ok(find_kernel(info, 0, "cuda_style") != NULL, "%s: its kernel is in the code object", target);
    else
        tap_ok(0, "%s: its kernel is in the code object (%s)", target, r ? "not compiled" : err1());
    hk_code_info_free(info);
    free(code);
    code = NULL;
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "cuda_style.cu";
    r = hk_compile_offline(ctx, "hip", target, cuda_style_src, &o, &code, &size);
    if (r == HK_ENOTFOUND)
        tap_skip("hipcc takes the same source", "no AMD offline compiler here");
    else
        tap_ok(r == 0, "%s: hipcc (hipkit compile) takes the same source (%s)", target,
               r ? err1() : "ok");
    free(code);
}

int main(void)
{
    tap_init();
    tu_seed();
    hk_context_options opt;
    hk_context_options_defaults(&opt);
    opt.quiet = 1;
    if (hk_context_create(&opt, &ctx) != 0) {
        printf("1..0 # SKIP no context: %s\n", hk_errmsg(NULL));
        return 0;
    }
    int loaded = 0;
    for (int i = 0; i < hk_backend_count(ctx); i++) {
        hk_backend_info bi;
        hk_backend_get(ctx, i, &bi);
        if (!strcmp(bi.name, "hip") && bi.toolchain && *bi.toolchain)
            loaded = 1;
        else if (!strcmp(bi.name, "hip"))
            tap_diag("hip backend: %s", bi.reason);
    }
    if (!loaded) {
        printf("1..0 # SKIP the hip backend module is not built or cannot load (ROCm absent)\n");
        hk_context_destroy(ctx);
        return 0;
    }
    test_backend_listed();
    test_vector_add("gfx90a", 64);
    test_vector_add("gfx1030", 32);
    test_templates("gfx90a");
    test_vectors();
    test_cache_keys();
    test_errors();
    test_core_kernels();
    test_cuda_source("gfx90a");
    hk_context_destroy(ctx);
    return tap_done();
}
