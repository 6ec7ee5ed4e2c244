/* The CUDA driver, opened at probe time (dlopen of libcuda.so.1) instead of
 * linked: the module then loads on a machine with no NVIDIA driver, where
 * NVRTC and nvcc still compile for named architectures (hk_compile_for_target,
 * hipkit compile --cuda-arch, the plugins' build-time images), as the hip
 * module does without an AMD GPU. Every file of the backend includes this
 * after <cuda.h>: calls keep their CUDA names and go through the table. */
#ifndef HKC_CUDA_DRIVER_H
#define HKC_CUDA_DRIVER_H

#include <cuda.h>

#include "strbuf.h"

/* The entry points the backend calls, by their exported names (cuda.h maps
 * cuMemAlloc to cuMemAlloc_v2 and so on). */
#define HKC_CUDA_DRIVER_FNS(X) \
    X(cuCtxGetCurrent) \
    X(cuCtxSetCurrent) \
    X(cuCtxSynchronize) \
    X(cuDeviceGet) \
    X(cuDeviceGetAttribute) \
    X(cuDeviceGetCount) \
    X(cuDeviceGetName) \
    X(cuDevicePrimaryCtxRelease_v2) \
    X(cuDevicePrimaryCtxReset_v2) \
    X(cuDevicePrimaryCtxRetain) \
    X(cuDeviceTotalMem_v2) \
    X(cuEventCreate) \
    X(cuEventDestroy_v2) \
    X(cuEventElapsedTime_v2) \
    X(cuEventRecord) \
    X(cuEventSynchronize) \
    X(cuFuncGetAttribute) \
    X(cuFuncGetName) \
    X(cuFuncGetParamInfo) \
    X(cuFuncLoad) \
    X(cuFuncSetAttribute) \
    X(cuGetErrorName) \
    X(cuGetErrorString) \
    X(cuInit) \
    X(cuLaunchKernel) \
    X(cuLaunchKernelEx) \
    X(cuMemAllocManaged) \
    X(cuMemAlloc_v2) \
    X(cuMemFreeHost) \
    X(cuMemFree_v2) \
    X(cuMemHostAlloc) \
    X(cuMemHostGetDevicePointer_v2) \
    X(cuMemHostRegister_v2) \
    X(cuMemHostUnregister) \
    X(cuMemcpyDtoD_v2) \
    X(cuMemcpyDtoH_v2) \
    X(cuMemcpyHtoD_v2) \
    X(cuMemcpyAsync) \
    X(cuMemcpyDtoHAsync_v2) \
    X(cuMemcpyHtoDAsync_v2) \
    X(cuMemsetD16_v2) \
    X(cuMemsetD32_v2) \
    X(cuMemsetD8_v2) \
    X(cuModuleEnumerateFunctions) \
    X(cuModuleGetFunction) \
    X(cuModuleGetFunctionCount) \
    X(cuModuleGetGlobal_v2) \
    X(cuModuleLoadDataEx) \
    X(cuModuleUnload) \
    X(cuStreamCreate) \
    X(cuStreamDestroy_v2) \
    X(cuStreamQuery) \
    X(cuStreamSynchronize) \
    X(cuStreamWaitEvent)

/* graphs (cuda_graph.c) */
#define HKC_CUDA_GRAPH_FNS(X) \
    X(cuGraphAddDependencies_v2) \
    X(cuGraphAddKernelNode_v2) \
    X(cuGraphCreate) \
    X(cuGraphDestroy) \
    X(cuGraphExecDestroy) \
    X(cuGraphInstantiateWithFlags) \
    X(cuGraphLaunch)

typedef struct hkc_cuda_driver {
#define HKC_CUDA_FIELD(fn) __typeof__(fn) *fn;
    HKC_CUDA_DRIVER_FNS(HKC_CUDA_FIELD)
    HKC_CUDA_GRAPH_FNS(HKC_CUDA_FIELD)
#undef HKC_CUDA_FIELD
} hkc_cuda_driver;

extern hkc_cuda_driver hkc_cu;

/* Opens the driver once (thread-safe). 0, or -1 with the reason in why
 * ("libcuda.so.1: cannot open shared object file ..."). */
int hkc_cuda_driver_open(hkc_strbuf *why);

#ifndef HKC_CUDA_DRIVER_LOADER
#define cuCtxGetCurrent (*hkc_cu.cuCtxGetCurrent)
#define cuCtxSetCurrent (*hkc_cu.cuCtxSetCurrent)
#define cuCtxSynchronize (*hkc_cu.cuCtxSynchronize)
#define cuDeviceGet (*hkc_cu.cuDeviceGet)
#define cuDeviceGetAttribute (*hkc_cu.cuDeviceGetAttribute)
#define cuDeviceGetCount (*hkc_cu.cuDeviceGetCount)
#define cuDeviceGetName (*hkc_cu.cuDeviceGetName)
#define cuDevicePrimaryCtxRelease_v2 (*hkc_cu.cuDevicePrimaryCtxRelease_v2)
#define cuDevicePrimaryCtxReset_v2 (*hkc_cu.cuDevicePrimaryCtxReset_v2)
#define cuDevicePrimaryCtxRetain (*hkc_cu.cuDevicePrimaryCtxRetain)
#define cuDeviceTotalMem_v2 (*hkc_cu.cuDeviceTotalMem_v2)
#define cuEventCreate (*hkc_cu.cuEventCreate)
#define cuEventDestroy_v2 (*hkc_cu.cuEventDestroy_v2)
#define cuEventElapsedTime_v2 (*hkc_cu.cuEventElapsedTime_v2)
#define cuEventRecord (*hkc_cu.cuEventRecord)
#define cuEventSynchronize (*hkc_cu.cuEventSynchronize)
#define cuFuncGetAttribute (*hkc_cu.cuFuncGetAttribute)
#define cuFuncGetName (*hkc_cu.cuFuncGetName)
#define cuFuncGetParamInfo (*hkc_cu.cuFuncGetParamInfo)
#define cuFuncLoad (*hkc_cu.cuFuncLoad)
#define cuFuncSetAttribute (*hkc_cu.cuFuncSetAttribute)
#define cuGetErrorName (*hkc_cu.cuGetErrorName)
#define cuGetErrorString (*hkc_cu.cuGetErrorString)
#define cuInit (*hkc_cu.cuInit)
#define cuLaunchKernel (*hkc_cu.cuLaunchKernel)
#define cuLaunchKernelEx (*hkc_cu.cuLaunchKernelEx)
#define cuMemAllocManaged (*hkc_cu.cuMemAllocManaged)
#define cuMemAlloc_v2 (*hkc_cu.cuMemAlloc_v2)
#define cuMemFreeHost (*hkc_cu.cuMemFreeHost)
#define cuMemFree_v2 (*hkc_cu.cuMemFree_v2)
#define cuMemHostAlloc (*hkc_cu.cuMemHostAlloc)
#define cuMemHostGetDevicePointer_v2 (*hkc_cu.cuMemHostGetDevicePointer_v2)
#define cuMemHostRegister_v2 (*hkc_cu.cuMemHostRegister_v2)
#define cuMemHostUnregister (*hkc_cu.cuMemHostUnregister)
#define cuMemcpyDtoD_v2 (*hkc_cu.cuMemcpyDtoD_v2)
#define cuMemcpyDtoH_v2 (*hkc_cu.cuMemcpyDtoH_v2)
#define cuMemcpyHtoD_v2 (*hkc_cu.cuMemcpyHtoD_v2)
#define cuMemcpyAsync (*hkc_cu.cuMemcpyAsync)
#define cuMemcpyDtoHAsync_v2 (*hkc_cu.cuMemcpyDtoHAsync_v2)
#define cuMemcpyHtoDAsync_v2 (*hkc_cu.cuMemcpyHtoDAsync_v2)
#define cuMemsetD16_v2 (*hkc_cu.cuMemsetD16_v2)
#define cuMemsetD32_v2 (*hkc_cu.cuMemsetD32_v2)
#define cuMemsetD8_v2 (*hkc_cu.cuMemsetD8_v2)
#define cuModuleEnumerateFunctions (*hkc_cu.cuModuleEnumerateFunctions)
#define cuModuleGetFunction (*hkc_cu.cuModuleGetFunction)
#define cuModuleGetFunctionCount (*hkc_cu.cuModuleGetFunctionCount)
#define cuModuleGetGlobal_v2 (*hkc_cu.cuModuleGetGlobal_v2)
#define cuModuleLoadDataEx (*hkc_cu.cuModuleLoadDataEx)
#define cuModuleUnload (*hkc_cu.cuModuleUnload)
#define cuStreamCreate (*hkc_cu.cuStreamCreate)
#define cuStreamDestroy_v2 (*hkc_cu.cuStreamDestroy_v2)
#define cuStreamQuery (*hkc_cu.cuStreamQuery)
#define cuStreamSynchronize (*hkc_cu.cuStreamSynchronize)
#define cuStreamWaitEvent (*hkc_cu.cuStreamWaitEvent)
/* graphs */
#define cuGraphAddDependencies_v2 (*hkc_cu.cuGraphAddDependencies_v2)
#define cuGraphAddKernelNode_v2 (*hkc_cu.cuGraphAddKernelNode_v2)
#define cuGraphCreate (*hkc_cu.cuGraphCreate)
#define cuGraphDestroy (*hkc_cu.cuGraphDestroy)
#define cuGraphExecDestroy (*hkc_cu.cuGraphExecDestroy)
#define cuGraphInstantiateWithFlags (*hkc_cu.cuGraphInstantiateWithFlags)
#define cuGraphLaunch (*hkc_cu.cuGraphLaunch)
#endif

#endif
