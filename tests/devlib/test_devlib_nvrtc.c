/* tests/devlib's kernel sources through the NVIDIA backend's compiler
 * (cuda_compile.c: NVRTC with hipkit's virtual headers) for sm_90, on a fake
 * device: no GPU and no libcuda needed. Running them on a GPU is
 * test_devlib and test_devlib_funcs with HIPKIT_TEST_BACKEND=cuda. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "../tap.h"

#ifndef HK_DEVLIB_DIR
#define HK_DEVLIB_DIR "tests/devlib"
#endif

static hkc_backend be;
static cuda_impl ci;

static void compile_file(const char *file, const char *const *flags, int nflags)
{
    char path[1024], *src = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s", HK_DEVLIB_DIR, file);
    if (hkc_read_file(path, &src, &len) != 0) {
        tap_ok(0, "read %s", path);
        return;
    }
    hkc_compile_job job = {.name = file, .source = src, .flags = flags, .nflags = nflags};
    void *code = NULL;
    size_t size = 0;
    hkc_strbuf log;
    hkc_strbuf_init(&log);
    int r = hkc_cuda_compile(&be, 0, &job, &code, &size, &log);
    if (!tap_ok(r == 0 && size > 0, "%s%s%s compiles with NVRTC for sm_90", file,
                nflags ? " " : "", nflags ? flags[0] : ""))
        tap_diag("%s", log.data);
    free(code);
    free(src);
    hkc_strbuf_free(&log);
}

int main(int argc, char **argv)
{
    tap_init();
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
        tap_skip("devlib-nvrtc", "NVRTC does not initialise");
        return tap_done();
    }
    ci.ndev = 1;
    ci.devs[0].cc_major = 9;
    ci.devs[0].cc_minor = 0;
    be.impl = &ci;
    hkc_strbuf_init(&be.reason);
    compile_file("std_headers.hip", NULL, 0);
    compile_file("cuda_source.cu", NULL, 0);
    /* a user's short macros reach none of hipkit's names, nor NVRTC's own
     * built-in header (whose templates name a parameter T: defines reach
     * NVRTC as #define lines after it) */
    const char *upper[] = {"-DT=float", "-DN=8", "-DA=1", "-DB=2", "-DC=3", "-DD=4", "-DE=5",
                           "-DF=6", "-DH=7", "-DI=8", "-DK=9", "-DS=10", "-DV=11", "-DP=12"};
    /* (std_headers.hip names template parameters T itself) */
    compile_file("std_headers.hip", upper + 1, (int)(sizeof upper / sizeof *upper) - 1);
    compile_file("cuda_source.cu", upper, (int)(sizeof upper / sizeof *upper));
    /* the rest: files named on the command line (meson lists them) */
    for (int i = 1; i < argc; i++)
        compile_file(argv[i], NULL, 0);
    hkc_strbuf_free(&be.reason);
    return tap_done();
}
