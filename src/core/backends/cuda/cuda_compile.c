/* NVRTC for the NVIDIA backend: HIP source to a cubin (SASS for the
 * device's sm_XY), with hipkit's <hip/hip_runtime.h> and friends served as
 * virtual headers. This file uses NVRTC only, never the driver, so it also
 * works (and is tested) on machines without a GPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cuda_backend.h"
#include "name_expr.h"
#include "source_scan.h"
#include "pp_text.h"
#include "process.h"

/* tools/embed.py's output for the headers in include/hip. */
extern const hkc_embedded_file hkc_cuda_headers[];

#ifndef HKC_CUDA_INCLUDE
#define HKC_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

/* Standard headers HIP code includes that NVRTC 13 does not have although
 * it provides what they declare: assert is built in. */
static const struct {
    const char *name, *text;
} std_shims[] = {
    {"cassert", "/* hipkit: assert is built into NVRTC */\n"},
    {"assert.h", "/* hipkit: assert is built into NVRTC */\n"},
};

/* FNV-1a, 32 bits: enough to tell header versions apart in cache keys. */
static uint32_t fnv1a(uint32_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

/* The rule that a 9.0 device's JIT cubins are sm_90a (jit_arch_specific)
 * goes into the hash too: cache entries made before it (plain sm_90 cubins
 * under the same target) are then not reused. */
static const char jit_rule[] = "jit: sm_90a on 9.0";

static uint32_t headers_hash(void)
{
    uint32_t h = fnv1a(2166136261u, jit_rule, sizeof jit_rule - 1);
    for (const hkc_embedded_file *f = hkc_cuda_headers; f->path; f++) {
        h = fnv1a(h, f->path, strlen(f->path) + 1);
        h = fnv1a(h, f->data, f->size);
    }
    for (size_t i = 0; i < sizeof std_shims / sizeof std_shims[0]; i++) {
        h = fnv1a(h, std_shims[i].name, strlen(std_shims[i].name) + 1);
        h = fnv1a(h, std_shims[i].text, strlen(std_shims[i].text));
    }
    return h;
}

const char *hkc_cuda_toolchain(hkc_backend *be, hkc_cache *cache)
{
    (void)cache;
    cuda_impl *ci = be->impl;
    if (ci->toolchain[0])
        return ci->toolchain;
    int major = 0, minor = 0;
    char buf[sizeof ci->toolchain];
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        snprintf(buf, sizeof buf, "nvrtc ? hdr %08x", (unsigned)headers_hash());
    else
        snprintf(buf, sizeof buf, "nvrtc %d.%d hdr %08x", major, minor, (unsigned)headers_hash());
    memcpy(ci->toolchain, buf, sizeof buf);
    return ci->toolchain;
}

/* The toolkit's include folder, for cuda_fp16.h and cuda_bf16.h (NVRTC 13
 * does not have them built in): $CUDA_HOME/include, $CUDA_PATH/include,
 * else the one hipkit was built against. Writes "" when none has them. */
static void toolkit_include(char *out, size_t cap)
{
    const char *envs[] = {"CUDA_HOME", "CUDA_PATH"};
    struct stat st;
    char probe[4200];
    for (size_t i = 0; i < 2; i++) {
        const char *v = getenv(envs[i]);
        if (!v || !*v || strlen(v) > 4096)
            continue;
        snprintf(probe, sizeof probe, "%s/include/cuda_fp16.h", v);
        if (stat(probe, &st) == 0 && (size_t)snprintf(out, cap, "%s/include", v) < cap)
            return;
    }
    snprintf(probe, sizeof probe, "%s/cuda_fp16.h", HKC_CUDA_INCLUDE);
    if (stat(probe, &st) == 0 && (size_t)snprintf(out, cap, "%s", HKC_CUDA_INCLUDE) < cap)
        return;
    out[0] = '\0';
}

/* CUDA 13 keeps libcu++ (<cuda/std/limits>, which kernel sources include)
 * in the toolkit's include/cccl: "-I<that>" where it exists, else "". */
static void toolkit_cccl(const char *incdir, char *out, size_t cap)
{
    struct stat st;
    char probe[4300];
    out[0] = '\0';
    if (!incdir[0])
        return;
    snprintf(probe, sizeof probe, "%s/cccl/cuda/std/limits", incdir);
    if (stat(probe, &st) == 0)
        snprintf(out, cap, "-I%s/cccl", incdir);
}

/* NVRTC writes `file(LINE): error: ...`; hipkit's logs (and the host
 * backend's compiler) say `file:LINE: error: ...`. Rewrites each line that
 * starts with a name, a parenthesised number and a colon. */
static void append_log(hkc_strbuf *out, const char *log)
{
    const char *p = log;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
        const char *open = NULL;
        for (const char *q = p; q < p + len && *q != ' ' && *q != '\n'; q++)
            if (*q == '(') {
                open = q;
                break;
            }
        const char *num = open ? open + 1 : NULL, *close = num;
        while (close && close < p + len && *close >= '0' && *close <= '9')
            close++;
        if (open && open > p && close > num && close + 1 < p + len && close[0] == ')' &&
            close[1] == ':') {
            hkc_strbuf_append(out, p, (size_t)(open - p));
            hkc_strbuf_puts(out, ":");
            hkc_strbuf_append(out, num, (size_t)(close - num));
            hkc_strbuf_append(out, close + 1, len - (size_t)(close + 1 - p));
        } else {
            hkc_strbuf_append(out, p, len);
        }
        p += len;
    }
}

static int nvrtc_failed(hkc_strbuf *log, const char *name, const char *what, nvrtcResult r)
{
    hkc_strbuf_printf(log, "compiling %s failed: %s: %s", name, what, nvrtcGetErrorString(r));
    return r == NVRTC_ERROR_OUT_OF_MEMORY ? HK_ENOMEM : HK_EBACKEND;
}

/* Which optional groups of hip_runtime.h the source needs (see the header).
 * Only a source that includes nothing but hipkit's hip/ headers can be
 * judged from its own text; any other include gets the whole header.
 * Comments and strings may mention a name too: that only costs time. */
#define LEAN_NEEDS_ALL (-1)
enum { USES_SHFL = 1, USES_FATOMICS = 2, USES_VECTORS = 4 };

static int is_ident(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int vector_type_name(const char *w, size_t n)
{
    static const char *const bases[] = {"char", "uchar", "short", "ushort", "int", "uint", "long",
                                        "ulong", "longlong", "ulonglong", "float", "double"};
    if (n < 2 || w[n - 1] < '1' || w[n - 1] > '4')
        return 0;
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
        if (strlen(bases[i]) == n - 1 && !strncmp(w, bases[i], n - 1))
            return 1;
    return 0;
}

static int lean_needs(const char *src)
{
    int needs = 0;
    for (const char *p = src; *p;) {
        if (*p == '#') { /* a directive: only hip/ includes keep the source lean */
            const char *q = p + 1;
            while (*q == ' ' || *q == '\t')
                q++;
            if (!strncmp(q, "include", 7)) {
                q += 7;
                while (*q == ' ' || *q == '\t')
                    q++;
                if (strncmp(q + 1, "hip/", 4))
                    return LEAN_NEEDS_ALL;
            }
        }
        if (is_ident(*p) && (p == src || !is_ident(p[-1]))) {
            const char *w = p;
            while (is_ident(*p))
                p++;
            size_t n = (size_t)(p - w);
            if (n >= 6 && !strncmp(w, "__shfl", 6))
                needs |= USES_SHFL;
            else if ((n >= 9 && !strncmp(w, "atomicMin", 9)) || (n >= 9 && !strncmp(w, "atomicMax", 9)))
                needs |= USES_FATOMICS;
            else if (vector_type_name(w, n))
                needs |= USES_VECTORS;
            continue;
        }
        p++;
    }
    return needs;
}

/* The architecture a device of compute capability `sm` gets from the JIT:
 * sm_90a on a 9.0 device, whose architecture-specific features (wgmma,
 * setmaxnreg, the tensor memory accelerator's multicast) exist on no other
 * (__CUDA_ARCH_FEAT_SM90_ALL guards them in a source); the plain sm_XY
 * elsewhere. Only 9.0 is listed: it is the one such target run here (an
 * H100); a cubin for sm_90a runs only on 9.0 devices, which is what a JIT
 * cubin is for. */
static int jit_arch_specific(int sm) { return sm == 90; }

int hkc_cuda_target_normalize(hkc_backend *be, const char *target, char *out, size_t cap,
                              hkc_strbuf *err)
{
    (void)be;
    int spec = 0, v = hkc_cuda_sm_parse(target, &spec);
    if (v < 70 || (spec && v < 90)) {
        hkc_strbuf_printf(err, "'%s' is no NVIDIA architecture (sm_70 or newer, e.g. sm_90, or "
                          "an architecture-specific sm_90a)", target);
        return HK_EINVAL;
    }
    snprintf(out, cap, "sm_%d%s", v, spec ? "a" : "");
    return 0;
}

static int compile_arch(int sm, int spec, const hkc_compile_job *job, void **code,
                        size_t *code_size, hkc_strbuf *log);

int hkc_cuda_compile(hkc_backend *be, int dev, const hkc_compile_job *job, void **code,
                     size_t *code_size, hkc_strbuf *log)
{
    cuda_impl *ci = be->impl;
    *code = NULL;
    *code_size = 0;
    if (!ci || dev < 0 || dev >= ci->ndev) {
        hkc_strbuf_printf(log, "compiling %s failed: no CUDA device %d",
                          job->name && *job->name ? job->name : "kernel.hip", dev);
        return HK_ENODEV;
    }
    int sm = ci->devs[dev].cc_major * 10 + ci->devs[dev].cc_minor;
    return compile_arch(sm, jit_arch_specific(sm), job, code, code_size, log);
}

int hkc_cuda_compile_target(hkc_backend *be, const char *target, const hkc_compile_job *job,
                            void **code, size_t *code_size, hkc_strbuf *log)
{
    (void)be;
    *code = NULL;
    *code_size = 0;
    int spec = 0, sm = hkc_cuda_sm_parse(target, &spec);
    int r = compile_arch(sm, spec, job, code, code_size, log);
    /* a cubin for another architecture would be embedded under the wrong
     * name (PTX, when the flags asked for compute_XY, is for any) */
    int got = r == 0 ? hkc_cuda_cubin_arch(*code, *code_size) : 0;
    int got_spec = r == 0 ? hkc_cuda_cubin_arch_specific(*code, *code_size) : 0;
    if (r == 0 && hkc_cuda_image_kind(*code, *code_size) == CUDA_IMAGE_CUBIN &&
        (got != sm || got_spec != spec)) {
        hkc_strbuf_printf(log, "NVRTC made a cubin for sm_%d%s, not the %s asked for", got,
                          got_spec ? "a" : "", target);
        free(*code);
        *code = NULL;
        *code_size = 0;
        r = HK_ECOMPILE;
    }
    return r;
}

/* The user's -D defines as #define lines before the source, then #line so
 * messages keep its numbering: NVRTC reads its built-in header (whose
 * templates name a parameter T) after -D options, so `-DT=float` given as
 * an option would break NVRTC itself. Leaves out empty when there are none. */
static void defines_as_lines(const hkc_compile_job *job, const char *name, hkc_strbuf *out)
{
    for (int i = 0; i < job->nflags; i++) {
        const char *d = job->flags[i];
        if (strncmp(d, "-D", 2) || !d[2])
            continue;
        size_t n = strcspn(d + 2, "=");
        hkc_strbuf_printf(out, "#define %.*s %s\n", (int)n, d + 2, d[2 + n] ? d + 3 + n : "1");
    }
    if (out->len) {
        hkc_strbuf_printf(out, "#line 1 \"%s\"\n", name);
        hkc_strbuf_puts(out, job->source);
    }
}

/* NVRTC for sm_<sm> (sm_<sm>a when spec), with no device or driver involved. */
static int compile_arch(int sm, int spec, const hkc_compile_job *job, void **code,
                        size_t *code_size, hkc_strbuf *log)
{
    const char *name = job->name && *job->name ? job->name : "kernel.hip";

    /* Virtual headers: hipkit's HIP headers, then the standard shims. */
    enum { MAX_HEADERS = 64 };
    const char *hnames[MAX_HEADERS], *htexts[MAX_HEADERS];
    int nh = 0;
    for (const hkc_embedded_file *f = hkc_cuda_headers; f->path && nh < MAX_HEADERS; f++) {
        hnames[nh] = f->path;
        htexts[nh++] = f->data;
    }
    for (size_t i = 0; i < sizeof std_shims / sizeof std_shims[0] && nh < MAX_HEADERS; i++) {
        hnames[nh] = std_shims[i].name;
        htexts[nh++] = std_shims[i].text;
    }

    nvrtcProgram prog;
    hkc_strbuf src;
    hkc_strbuf_init(&src);
    defines_as_lines(job, name, &src);
    nvrtcResult r = nvrtcCreateProgram(&prog, src.len ? src.data : job->source, name, nh, htexts,
                                       hnames);
    hkc_strbuf_free(&src);
    if (r != NVRTC_SUCCESS)
        return nvrtc_failed(log, name, "nvrtcCreateProgram", r);
    /* ns::kern and reduce<float, 4> get mangled symbols: NVRTC says which */
    for (int i = 0; i < job->nkernels && job->lowered; i++)
        if (hkc_name_is_expression(job->kernels[i].name) &&
            (r = nvrtcAddNameExpression(prog, hkc_lowering_name(&job->kernels[i]))) != NVRTC_SUCCESS) {
            nvrtcDestroyProgram(&prog);
            return nvrtc_failed(log, name, "nvrtcAddNameExpression", r);
        }

    char arch[64], incdir[4200], incopt[4210], cccl[4220];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%s", sm, spec ? "a" : "");
    toolkit_include(incdir, sizeof incdir);
    snprintf(incopt, sizeof incopt, "-I%s", incdir);
    toolkit_cccl(incdir, cccl, sizeof cccl);
    int needs = lean_needs(job->source);
    int nopt = 0, cap = 9 + (job->nflags > 0 ? job->nflags : 0);
    const char **opts = malloc((size_t)cap * sizeof *opts);
    if (!opts) {
        nvrtcDestroyProgram(&prog);
        return HK_ENOMEM;
    }
    opts[nopt++] = arch;
    opts[nopt++] = "-default-device";
    opts[nopt++] = "--std=c++17";
    if (incdir[0])
        opts[nopt++] = incopt;
    if (cccl[0])
        opts[nopt++] = cccl;
    if (needs != LEAN_NEEDS_ALL) {
        opts[nopt++] = "-D__HIPKIT_LEAN__";
        if (needs & USES_SHFL)
            opts[nopt++] = "-D__HIPKIT_USES_SHFL__";
        if (needs & USES_FATOMICS)
            opts[nopt++] = "-D__HIPKIT_USES_FATOMICS__";
        if (needs & USES_VECTORS)
            opts[nopt++] = "-D__HIPKIT_USES_VECTORS__";
    }
    for (int i = 0; i < job->nflags; i++)
        if (strncmp(job->flags[i], "-D", 2)) /* defines went into the source */
            opts[nopt++] = job->flags[i];

    r = nvrtcCompileProgram(prog, nopt, opts);
    free(opts);
    if (r != NVRTC_SUCCESS) {
        size_t lsize = 0;
        char *text = NULL;
        if (nvrtcGetProgramLogSize(prog, &lsize) == NVRTC_SUCCESS && lsize > 0 &&
            (text = malloc(lsize + 1)) && nvrtcGetProgramLog(prog, text) == NVRTC_SUCCESS) {
            text[lsize] = '\0';
        } else if (text) {
            text[0] = '\0';
        }
        hkc_strbuf_printf(log, "compiling %s failed:\n", name);
        if (text && *text)
            append_log(log, text);
        else
            hkc_strbuf_puts(log, nvrtcGetErrorString(r));
        if (!incdir[0])
            hkc_strbuf_puts(log, "\n(no CUDA toolkit include folder found: set CUDA_HOME)");
        free(text);
        nvrtcDestroyProgram(&prog);
        return r == NVRTC_ERROR_COMPILATION || r == NVRTC_ERROR_INVALID_OPTION ? HK_ECOMPILE
                                                                                : HK_EBACKEND;
    }

    /* A cubin for sm_XY; when the user's flags asked for a virtual
     * architecture (compute_XY) there is none, and the PTX is the code. */
    size_t size = 0;
    int ptx = 0;
    r = nvrtcGetCUBINSize(prog, &size);
    if (r == NVRTC_SUCCESS && size == 0) {
        ptx = 1;
        r = nvrtcGetPTXSize(prog, &size);
    }
    if (r != NVRTC_SUCCESS || size == 0) {
        nvrtcDestroyProgram(&prog);
        return nvrtc_failed(log, name, ptx ? "nvrtcGetPTXSize" : "nvrtcGetCUBINSize", r);
    }
    char *buf = malloc(size);
    if (!buf) {
        nvrtcDestroyProgram(&prog);
        return HK_ENOMEM;
    }
    for (int i = 0; i < job->nkernels && job->lowered; i++) {
        const char *sym = NULL;
        if (hkc_name_is_expression(job->kernels[i].name) &&
            nvrtcGetLoweredName(prog, hkc_lowering_name(&job->kernels[i]), &sym) == NVRTC_SUCCESS && sym)
            job->lowered[i] = strdup(sym);
    }
    r = ptx ? nvrtcGetPTX(prog, buf) : nvrtcGetCUBIN(prog, buf);
    nvrtcDestroyProgram(&prog);
    if (r != NVRTC_SUCCESS) {
        free(buf);
        return nvrtc_failed(log, name, ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN", r);
    }
    *code = buf;
    *code_size = size;
    return 0;
}

/* A line of the preprocessed text is the user's unless it comes from the
 * headers hipkit serves (dir), the toolkit's, or a system header. */
typedef struct pp_dirs {
    const char *ours, *toolkit;
} pp_dirs;

static int user_file(const char *file, int system, void *arg)
{
    const pp_dirs *d = arg;
    return !system && file[0] != '<' && strncmp(file, d->ours, strlen(d->ours)) != 0 &&
           !(d->toolkit[0] && strncmp(file, d->toolkit, strlen(d->toolkit)) == 0);
}

/* NVRTC preprocesses nothing on its own, so discovery runs the host's C++
 * preprocessor as NVRTC would see the source: hipkit's virtual headers and
 * standard headers only (-nostdinc), the toolkit's include folder, NVRTC's
 * predefined macros, the user's flags and defines. __global__ is a keyword
 * there, so it stays in the output. */
int hkc_cuda_preprocess(hkc_backend *be, int dev, const hkc_compile_job *job, hkc_strbuf *pp,
                        hkc_strbuf *log)
{
    cuda_impl *ci = be->impl;
    int sm = ci && dev >= 0 && dev < ci->ndev ? ci->devs[dev].cc_major * 10 + ci->devs[dev].cc_minor
                                              : 80; /* a named target: sm_80's view */
    char dir[4096], incdir[4200], inc[4300], tk[4300], cccl[4220], arch[48], src[4200], out[4200];
    int bad = hkc_tempdir_create("pp", dir, sizeof dir) != 0 ||
              hkc_tempdir_write_all(dir, hkc_cuda_headers) != 0;
    for (size_t i = 0; !bad && i < sizeof std_shims / sizeof std_shims[0]; i++)
        bad = hkc_tempdir_write(dir, std_shims[i].name, std_shims[i].text,
                                strlen(std_shims[i].text)) != 0;
    if (bad) {
        hkc_strbuf_puts(log, "cannot write hipkit's headers to a private temporary folder");
        hkc_tempdir_remove(dir);
        return HK_EIO;
    }
    toolkit_include(incdir, sizeof incdir);
    snprintf(inc, sizeof inc, "-I%s", dir);
    snprintf(tk, sizeof tk, "-I%s", incdir);
    toolkit_cccl(incdir, cccl, sizeof cccl);
    snprintf(arch, sizeof arch, "-D__CUDA_ARCH__=%d", sm * 10);
    /* NVRTC's version macros, which libcu++ checks against the toolkit */
    char vmaj[48] = "", vmin[48] = "", vrt[48] = "";
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS) {
        snprintf(vmaj, sizeof vmaj, "-D__CUDACC_VER_MAJOR__=%d", major);
        snprintf(vmin, sizeof vmin, "-D__CUDACC_VER_MINOR__=%d", minor);
        snprintf(vrt, sizeof vrt, "-DCUDART_VERSION=%d", major * 1000 + minor * 10);
    }
    snprintf(src, sizeof src, "%s/source.cu", dir);
    snprintf(out, sizeof out, "%s/source.ii", dir);
    hkc_strbuf text;
    hkc_strbuf_init(&text);
    hkc_pp_line_directive(&text, 1, job->name && *job->name ? job->name : "kernel.hip");
    hkc_strbuf_puts(&text, job->source);
    hkc_strbuf_puts(&text, "\n");
    int r = hkc_tempdir_write(dir, "source.cu", text.data, text.len) ? HK_EIO : 0;
    hkc_strbuf_free(&text);
    const char *cxx = getenv("HIPKIT_CXX");
    const char **argv = calloc((size_t)job->nflags + 28, sizeof *argv);
    int a = 0;
    if (!argv)
        r = HK_ENOMEM;
    if (r == 0) {
        argv[a++] = cxx && *cxx && !strchr(cxx, ' ') ? cxx : "c++";
        argv[a++] = "-E";
        argv[a++] = "-nostdinc";
        argv[a++] = "-std=c++17";
        argv[a++] = "-D__CUDACC__";
        argv[a++] = "-D__CUDACC_RTC__";
        /* NVRTC is not GCC: headers that pick a path by compiler (libcu++)
         * must take NVRTC's */
        argv[a++] = "-U__GNUC__";
        argv[a++] = "-U__GNUC_MINOR__";
        argv[a++] = "-U__GNUC_PATCHLEVEL__";
        argv[a++] = "-U__clang__";
        argv[a++] = arch;
        if (vmaj[0]) {
            argv[a++] = vmaj;
            argv[a++] = vmin;
            argv[a++] = vrt;
        }
        if (jit_arch_specific(sm)) /* what NVRTC defines for sm_90a */
            argv[a++] = "-D__CUDA_ARCH_FEAT_SM90_ALL";
        argv[a++] = inc;
        if (incdir[0])
            argv[a++] = tk;
        if (cccl[0])
            argv[a++] = cccl;
        /* the preprocessor's part of the flags only: the others are NVRTC's
         * (--use_fast_math, -arch=...), which the host compiler refuses */
        for (int i = 0; i < job->nflags; i++)
            if (hkc_pp_is_pp_flag(job->flags[i]))
                argv[a++] = job->flags[i];
        argv[a++] = "-x";
        argv[a++] = "c++";
        argv[a++] = src;
        argv[a++] = "-o";
        argv[a++] = out;
        argv[a] = NULL;
        int st = hkc_run_capture((char *const *)argv, NULL, log);
        char *data = NULL;
        if (st != 0 || hkc_read_file(out, &data, NULL) != 0) {
            hkc_strbuf_printf(log, "%spreprocessing %s for kernel discovery failed (%s, exit %d)",
                              log->len ? "\n" : "", job->name, argv[0], st);
            r = HK_ECOMPILE;
        } else {
            hkc_strbuf_clear(log);
            pp_dirs dirs = {.ours = dir, .toolkit = incdir};
            hkc_pp_filter(data, user_file, &dirs, pp);
            free(data);
        }
    }
    free(argv);
    hkc_tempdir_remove(dir);
    return r;
}
