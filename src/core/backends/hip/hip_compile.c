/* hiprtc for the AMD backend: HIP source to a raw AMDGPU ELF code object
 * for a full target id. hiprtc needs no GPU (only --offload-arch), so this
 * file works, and is tested, on machines without one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hiprtc.h>

#include "hip_backend.h"
#include "process.h"
#include "hip_codeobj.h"
#include "hip_comgr.h"
#include "name_expr.h"
#include "source_scan.h"

/* tools/embed.py's output: the headers ROCm 5 lacks (include/hip, the
 * standard ones), and those served on every ROCm (CUDA's names, the
 * prelude). */
extern const hkc_embedded_file hkc_hip_headers[];
extern const hkc_embedded_file hkc_hip_cuda_headers[];

/* ROCm 6 has all of HIP's fp16/bf16 API; before it hipkit supplies
 * <hip/hip_bf16.h> and <hip/hip_fp16.h> (include/hip says why). */
#define HIP_COMPAT_HEADERS_UNTIL 60000000

void hkc_hip_compile_init(hip_impl *h)
{
    int rt = 0, major = 0, minor = 0;
    hipRuntimeGetVersion(&rt);
    h->native_headers = rt >= HIP_COMPAT_HEADERS_UNTIL;
    hiprtcVersion(&major, &minor);
    /* The supplied headers' text goes into the identity: editing one must
     * not reuse code compiled with the old one. */
    uint32_t hash = 2166136261u;
    for (const hkc_embedded_file *f = hkc_hip_headers; f->path && !h->native_headers; f++)
        for (size_t i = 0; i < f->size; i++)
            hash = (hash ^ (unsigned char)f->data[i]) * 16777619u;
    for (const hkc_embedded_file *f = hkc_hip_cuda_headers; f->path; f++)
        for (size_t i = 0; i < f->size; i++)
            hash = (hash ^ (unsigned char)f->data[i]) * 16777619u;
    snprintf(h->toolchain, sizeof h->toolchain, "hiprtc %d.%d hip %d %s hdr %08x", major, minor, rt,
             hkc_hip_comgr_version(), (unsigned)hash);
}

const char *hkc_hip_toolchain(hkc_backend *be, hkc_cache *cache)
{
    (void)cache;
    return ((hip_impl *)be->impl)->toolchain;
}

int hkc_hip_target_normalize(hkc_backend *be, const char *target, char *out, size_t cap,
                             hkc_strbuf *err)
{
    (void)be;
    hip_target t;
    if (hkc_hip_target_parse(target, &t, err) != 0)
        return HK_EINVAL;
    hkc_hip_target_format(&t, out, cap);
    return 0;
}

static int rtc_failed(hkc_strbuf *log, const char *name, const char *what, hiprtcResult r)
{
    hkc_strbuf_printf(log, "compiling %s failed: %s: %s", name, what, hiprtcGetErrorString(r));
    return r == HIPRTC_ERROR_OUT_OF_MEMORY ? HK_ENOMEM : HK_EBACKEND;
}

/* The program's log, when it has one (hiprtc may report a size of 0 or 1).
 * hiprtc 5 compiles through comgr, which names the source
 * "/tmp/comgr-XXXXXX/input/CompileSource": the user's name stands in. */
static void append_log(hiprtcProgram prog, const char *name, hkc_strbuf *log)
{
    static const char tag[] = "CompileSource";
    size_t n = 0;
    if (hiprtcGetProgramLogSize(prog, &n) != HIPRTC_SUCCESS || n <= 1)
        return;
    char *text = calloc(n + 1, 1);
    if (!text || hiprtcGetProgramLog(prog, text) != HIPRTC_SUCCESS) {
        free(text);
        return;
    }
    const char *p = text, *hit;
    while ((hit = strstr(p, tag))) {
        const char *start = hit; /* back to the start of the path */
        while (start > p && start[-1] != ' ' && start[-1] != '\n' && start[-1] != '\'')
            start--;
        hkc_strbuf_append(log, p, (size_t)(start - p));
        hkc_strbuf_puts(log, name);
        p = hit + sizeof tag - 1;
    }
    hkc_strbuf_puts(log, p);
    free(text);
}

static int has_opt_level(const hkc_compile_job *job)
{
    for (int i = 0; i < job->nflags; i++)
        if (job->flags[i][0] == '-' && job->flags[i][1] == 'O')
            return 1;
    return 0;
}

int hkc_hip_compile_target(hkc_backend *be, const char *target, const hkc_compile_job *job,
                           void **code, size_t *code_size, hkc_strbuf *log)
{
    hip_impl *h = be->impl;
    const char *name = job->name && *job->name ? job->name : "kernel.hip";
    *code = NULL;
    *code_size = 0;

    enum { MAX_HEADERS = 64 };
    const char *hnames[MAX_HEADERS], *htexts[MAX_HEADERS];
    int nh = 0;
    for (const hkc_embedded_file *f = hkc_hip_cuda_headers; f->path && nh < MAX_HEADERS; f++) {
        hnames[nh] = f->path;
        htexts[nh++] = f->data;
    }
    for (const hkc_embedded_file *f = hkc_hip_headers; f->path && !h->native_headers && nh < MAX_HEADERS; f++) {
        hnames[nh] = f->path;
        htexts[nh++] = f->data;
    }
    hiprtcProgram prog;
    hiprtcResult r = hiprtcCreateProgram(&prog, job->source, name, nh, htexts, hnames);
    if (r != HIPRTC_SUCCESS)
        return rtc_failed(log, name, "hiprtcCreateProgram", r);
    /* ns::kern and reduce<float, 4> get mangled symbols: hiprtc says which */
    for (int i = 0; i < job->nkernels && job->lowered; i++)
        if (hkc_name_is_expression(job->kernels[i].name) &&
            (r = hiprtcAddNameExpression(prog, hkc_lowering_name(&job->kernels[i]))) != HIPRTC_SUCCESS) {
            hiprtcDestroyProgram(&prog);
            return rtc_failed(log, name, "hiprtcAddNameExpression", r);
        }

    char arch[128];
    snprintf(arch, sizeof arch, "--offload-arch=%s", target);
    const char **opts = malloc((size_t)(job->nflags + 8) * sizeof *opts);
    if (!opts) {
        hiprtcDestroyProgram(&prog);
        return HK_ENOMEM;
    }
    int nopt = 0;
    opts[nopt++] = arch;
    opts[nopt++] = "-std=c++17";
    opts[nopt++] = HKC_HIP_GRID_WAIT_DEFINE;
    opts[nopt++] = "-include";
    opts[nopt++] = HKC_HIP_PRELUDE;
    if (!h->native_headers) /* hiprtc 5's built-in headers lack this macro of hip_runtime.h */
        opts[nopt++] = "-DHIP_DYNAMIC_SHARED(type,var)=extern __shared__ type var[]";
    if (!has_opt_level(job))
        opts[nopt++] = "-O3";
    for (int i = 0; i < job->nflags; i++)
        opts[nopt++] = job->flags[i];
    r = hiprtcCompileProgram(prog, nopt, opts);
    free(opts);
    if (r != HIPRTC_SUCCESS) {
        hkc_strbuf_printf(log, "compiling %s for %s failed:\n", name, target);
        size_t before = log->len;
        append_log(prog, name, log);
        if (log->len == before)
            hkc_strbuf_puts(log, hiprtcGetErrorString(r));
        hiprtcDestroyProgram(&prog);
        return r == HIPRTC_ERROR_COMPILATION || r == HIPRTC_ERROR_INVALID_OPTION ? HK_ECOMPILE
                                                                                  : HK_EBACKEND;
    }
    size_t size = 0;
    r = hiprtcGetCodeSize(prog, &size);
    char *buf = r == HIPRTC_SUCCESS && size ? malloc(size) : NULL;
    if (!buf) {
        hiprtcDestroyProgram(&prog);
        return r != HIPRTC_SUCCESS ? rtc_failed(log, name, "hiprtcGetCodeSize", r) : HK_ENOMEM;
    }
    for (int i = 0; i < job->nkernels && job->lowered; i++) {
        const char *sym = NULL;
        if (hkc_name_is_expression(job->kernels[i].name) &&
            hiprtcGetLoweredName(prog, hkc_lowering_name(&job->kernels[i]), &sym) == HIPRTC_SUCCESS && sym)
            job->lowered[i] = strdup(sym);
    }
    r = hiprtcGetCode(prog, buf);
    hiprtcDestroyProgram(&prog);
    if (r != HIPRTC_SUCCESS) {
        free(buf);
        return rtc_failed(log, name, "hiprtcGetCode", r);
    }
    *code = buf;
    *code_size = size;
    return 0;
}

int hkc_hip_compile(hkc_backend *be, int dev, const hkc_compile_job *job, void **code,
                    size_t *code_size, hkc_strbuf *log)
{
    hip_impl *h = be->impl;
    if (dev < 0 || dev >= h->ndev) {
        hkc_strbuf_printf(log, "no AMD device %d", dev);
        return HK_ENODEV;
    }
    return hkc_hip_compile_target(be, h->devs[dev].target, job, code, code_size, log);
}
