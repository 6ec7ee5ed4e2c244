/* The NVIDIA backend: the CUDA driver API behind the vtable. Its files, by
 * job: cuda_device.c (contexts, faults, probe), cuda_memory.c, cuda_module.c,
 * cuda_launch.c (launches, events), cuda_compile.c (NVRTC), cuda_codeobj.c
 * (reading code objects without the driver), cuda_disasm.c. */
#include "cuda_backend.h"

__attribute__((visibility("default"))) const unsigned hkc_backend_module_abi = HKC_BACKEND_MODULE_ABI;

__attribute__((visibility("default"))) const hkc_backend_ops hkc_backend_cuda_ops = {
    .name = "cuda",
    .code_ext = "cubin",
    .wide_vector_align = 16,
    .lowers_names = 1,
    .probe = hkc_cuda_probe,
    .destroy = hkc_cuda_destroy,
    .device_info = hkc_cuda_device_info,
    .toolchain = hkc_cuda_toolchain,
    .buf_alloc = hkc_cuda_buf_alloc,
    .buf_free = hkc_cuda_buf_free,
    .buf_register = hkc_cuda_buf_register,
    .buf_unregister = hkc_cuda_buf_unregister,
    .buf_upload = hkc_cuda_buf_upload,
    .buf_download = hkc_cuda_buf_download,
    .buf_copy = hkc_cuda_buf_copy,
    .buf_fill = hkc_cuda_buf_fill,
    .compile = hkc_cuda_compile,
    .preprocess = hkc_cuda_preprocess,
    .target_normalize = hkc_cuda_target_normalize,
    .compile_target = hkc_cuda_compile_target,
    .compile_offline = hkc_cuda_compile_offline,
    .code_inspect = hkc_cuda_code_inspect,
    .image_rank = hkc_cuda_image_rank,
    .module_load = hkc_cuda_module_load,
    .module_unload = hkc_cuda_module_unload,
    .module_kernels = hkc_cuda_module_kernels,
    .function_get = hkc_cuda_function_get,
    .module_global = hkc_cuda_module_global,
    .launch = hkc_cuda_launch,
    .synchronize = hkc_cuda_synchronize,
    .event_create = hkc_cuda_event_create,
    .event_destroy = hkc_cuda_event_destroy,
    .event_record = hkc_cuda_event_record,
    .event_synchronize = hkc_cuda_event_synchronize,
    .event_elapsed_ms = hkc_cuda_event_elapsed_ms,
    .disasm = hkc_cuda_disasm,
    /* graphs */
    .graph_create = hkc_cuda_graph_create,
    .graph_launch = hkc_cuda_graph_launch,
    .graph_destroy = hkc_cuda_graph_destroy,
};
