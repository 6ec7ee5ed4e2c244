/* hkc-aot: compiles a HIP source ahead of time into the code object hipkit's
 * JIT would make for it, so a plugin can embed it (issue 6).
 *
 *   hkc-aot --backend host|cuda --target T --name N IN.hip -o OUT [--tag TAGFILE]
 *
 * N is the module name the plugin loader compiles under
 * ("plugin-FAMILY-SOURCE", see get_kernel in src/core/plugin.c): the name is
 * part of what the compilers see, so it must match for the image to equal
 * the JIT's. The pipeline is hk_module_compile's with default options: no
 * flags, no include folders (so no user headers join the scan), the
 * source scan, then the backend's compile slot. TAGFILE receives the
 * backend's toolchain identity (the cache's), embedded beside the image.
 *
 * host: T must be this machine's target id (uname's machine, what the host
 *       backend reports); the image is a shared object built by the system
 *       C++ compiler (HIPKIT_CXX), checked at load for HK_HOST_ABI_VERSION.
 * cuda: T is sm_XY; NVRTC needs no GPU and no driver.
 * hip:  T is an AMD target id (gfx90a, gfx90a:xnack-); hiprtc needs no GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "internal.h"
#include "signature.h"

#ifdef HKC_AOT_CUDA
#include "cuda_backend.h"
#endif
#ifdef HKC_AOT_HIP
#include "hip_backend.h"
#endif

static int usage(void)
{
    fprintf(stderr, "usage: hkc-aot --backend host|cuda|hip --target T --name N IN.hip -o OUT "
                    "[--tag TAGFILE]\n");
    return 2;
}

static int write_all(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "hkc-aot: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

/* hk_module_compile past the memory table and the disk cache, default
 * options: keep in step with it. */
static int build(hkc_backend *be, const char *target, const char *name, const char *source,
                 void **code, size_t *size, hkc_strbuf *log)
{
    hkc_source_kernel *kernels = NULL;
    int nkernels = 0;
    hkc_strbuf includes; /* gather_includes with no folders finds nothing */
    hkc_strbuf_init(&includes);
    int r = hkc_source_scan(source, includes.data, &kernels, &nkernels, log);
    if (r != 0)
        return HK_ECOMPILE;
    const char *flags[1] = {NULL};
    hkc_compile_job job = {
        .name = name, .source = source, .flags = flags, .nflags = 0,
        .kernels = kernels, .nkernels = nkernels,
    };
    r = be->ops->compile_target ? be->ops->compile_target(be, target, &job, code, size, log)
                                : be->ops->compile(be, 0, &job, code, size, log);
    hkc_source_kernels_free(kernels, nkernels);
    return r;
}

#ifdef HKC_AOT_CUDA
static const hkc_backend_ops aot_cuda_ops = {
    .name = "cuda",
    .code_ext = "cubin",
    .toolchain = hkc_cuda_toolchain,
    .compile = hkc_cuda_compile,
};
#endif

#ifdef HKC_AOT_HIP
static const hkc_backend_ops aot_hip_ops = {
    .name = "hip",
    .code_ext = "hsaco",
    .toolchain = hkc_hip_toolchain,
    .compile_target = hkc_hip_compile_target,
};
#endif

int main(int argc, char **argv)
{
    const char *backend = NULL, *target = NULL, *name = NULL, *in = NULL, *out = NULL,
               *tagfile = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "--backend") ? &backend
                            : !strcmp(a, "--target") ? &target
                            : !strcmp(a, "--name")   ? &name
                            : !strcmp(a, "-o")       ? &out
                            : !strcmp(a, "--tag")    ? &tagfile
                                                     : NULL;
        if (slot) {
            if (++i >= argc)
                return usage();
            *slot = argv[i];
        } else if (a[0] == '-' || in) {
            return usage();
        } else {
            in = a;
        }
    }
    if (!backend || !target || !name || !in || !out)
        return usage();

    char *source;
    size_t srclen;
    if (hkc_read_file(in, &source, &srclen) != 0) {
        fprintf(stderr, "hkc-aot: cannot read %s\n", in);
        return 1;
    }

    /* The host backend's toolchain() looks through its context's cache;
     * a build tool keeps out of the user's. */
    setenv("HIPKIT_CACHE", "off", 1);
    static hk_context ctx;
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    ctx.cache = hkc_cache_open(&warn);
    hkc_strbuf_free(&warn);
    hkc_backend be;
    memset(&be, 0, sizeof be);
    be.ctx = &ctx;
    hkc_strbuf_init(&be.reason);
#ifdef HKC_AOT_CUDA
    cuda_impl ci;
    memset(&ci, 0, sizeof ci);
#endif
#ifdef HKC_AOT_HIP
    hip_impl hi;
    memset(&hi, 0, sizeof hi);
    char hip_target[96];
#endif
    if (!strcmp(backend, "host")) {
        be.ops = &hkc_backend_host;
        if (be.ops->probe(&be, &be.reason) < 1) {
            fprintf(stderr, "hkc-aot: the host backend is unusable: %s\n", be.reason.data);
            return 1;
        }
        hk_device_info info;
        be.ops->device_info(&be, 0, &info);
        if (strcmp(info.target, target)) {
            fprintf(stderr, "hkc-aot: host target '%s' asked, but this machine is '%s' (an "
                            "image only loads where the target id matches exactly)\n",
                    target, info.target);
            be.ops->destroy(&be);
            return 1;
        }
#ifdef HKC_AOT_CUDA
    } else if (!strcmp(backend, "cuda")) {
        int sm = 0;
        char rest = 0;
        if (sscanf(target, "sm_%d%c", &sm, &rest) != 1 || sm < 10) {
            fprintf(stderr, "hkc-aot: cuda target '%s' is not sm_XY\n", target);
            return 1;
        }
        ci.ndev = 1;
        ci.devs[0].cc_major = sm / 10;
        ci.devs[0].cc_minor = sm % 10;
        be.ops = &aot_cuda_ops;
        be.impl = &ci;
#endif
#ifdef HKC_AOT_HIP
    } else if (!strcmp(backend, "hip")) {
        be.ops = &aot_hip_ops;
        be.impl = &hi;
        hkc_hip_compile_init(&hi);
        hkc_strbuf err;
        hkc_strbuf_init(&err);
        int bad = hkc_hip_target_normalize(&be, target, hip_target, sizeof hip_target, &err);
        if (bad)
            fprintf(stderr, "hkc-aot: %s\n", err.data);
        hkc_strbuf_free(&err);
        if (bad)
            return 1;
        target = hip_target;
#endif
    } else {
        fprintf(stderr, "hkc-aot: backend '%s' is not built into this hkc-aot (host"
#ifdef HKC_AOT_CUDA
                        ", cuda"
#endif
#ifdef HKC_AOT_HIP
                        ", hip"
#endif
                        ")\n", backend);
        return 1;
    }

    void *code = NULL;
    size_t size = 0;
    hkc_strbuf log;
    hkc_strbuf_init(&log);
    int r = build(&be, target, name, source, &code, &size, &log);
    const char *tag = be.ops->toolchain(&be);
    int rc = 0;
    if (r != 0) {
        fprintf(stderr, "hkc-aot: %s (%s %s): %s\n", in, backend, target, log.data);
        rc = 1;
    } else {
        if (log.len) /* the compiler's warnings, as JIT would show them */
            fprintf(stderr, "hkc-aot: %s: compiler said:\n%s\n", in, log.data);
#ifdef HKC_AOT_CUDA
        if (be.ops == &aot_cuda_ops && hkc_cuda_cubin_arch(code, size) !=
                                           ci.devs[0].cc_major * 10 + ci.devs[0].cc_minor) {
            fprintf(stderr, "hkc-aot: %s: NVRTC made no cubin for %s\n", in, target);
            rc = 1;
        }
#endif
        if (!rc)
            rc = write_all(out, code, size);
        if (!rc && tagfile)
            rc = write_all(tagfile, tag, strlen(tag));
    }
    free(code);
    free(source);
    hkc_strbuf_free(&log);
    if (be.ops == &hkc_backend_host)
        be.ops->destroy(&be);
    hkc_strbuf_free(&be.reason);
    hkc_cache_close(ctx.cache);
    return rc;
}
