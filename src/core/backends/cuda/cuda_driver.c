/* Opens libcuda.so.1 and fills the table every cu* call of the backend goes
 * through (see cuda_driver.h). Never closed: the table lives as long as the
 * process, like the module itself. */
#define HKC_CUDA_DRIVER_LOADER
#include "cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

hkc_cuda_driver hkc_cu;

#define HKC_STR(x) #x
#define HKC_XSTR(x) HKC_STR(x)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[1024];

static void open_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(failure, sizeof failure, "no NVIDIA driver: %s", dlerror());
        return;
    }
    /* fn is already the exported name (cuMemAlloc_v2) when X expands */
#define HKC_CUDA_LOAD(fn)                                                                         \
    if (!failure[0] && !(*(void **)&hkc_cu.fn = dlsym(h, HKC_XSTR(fn))))                          \
        snprintf(failure, sizeof failure,                                                         \
                 "the NVIDIA driver (libcuda.so.1) lacks %s: it is older than this hipkit's "     \
                 "CUDA toolkit", HKC_XSTR(fn));
    HKC_CUDA_DRIVER_FNS(HKC_CUDA_LOAD)
    HKC_CUDA_GRAPH_FNS(HKC_CUDA_LOAD)
#undef HKC_CUDA_LOAD
}

int hkc_cuda_driver_open(hkc_strbuf *why)
{
    pthread_once(&once, open_driver);
    if (!failure[0])
        return 0;
    hkc_strbuf_puts(why, failure);
    return -1;
}
