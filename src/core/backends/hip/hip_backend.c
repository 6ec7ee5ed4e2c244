/* The AMD ROCm backend: devices, memory in every mode, code objects, launch
 * and events through the HIP runtime. Its files, by job: hip_device.c,
 * hip_memory.c, hip_module.c, hip_launch.c, hip_stream.c, hip_compile.c (hiprtc),
 * hip_inspect.c and hip_disasm.c (code objects, no device needed), with
 * hip_codeobj.c and hip_comgr.c reading code objects. */
#include "hip_backend.h"
#include "hip_codeobj.h"

/* ----------------------------------------------------------- the module */

__attribute__((visibility("default"))) const unsigned hkc_backend_module_abi = HKC_BACKEND_MODULE_ABI;

__attribute__((visibility("default"))) const hkc_backend_ops hkc_backend_hip_ops = {
    .name = "hip",
    .code_ext = "hsaco",
    .wide_vector_align = 32,
    .lowers_names = 1,
    .probe = hkc_hip_probe,
    .destroy = hkc_hip_destroy,
    .device_info = hkc_hip_device_info,
    .toolchain = hkc_hip_toolchain,
    .buf_alloc = hkc_hip_buf_alloc,
    .buf_free = hkc_hip_buf_free,
    .buf_register = hkc_hip_buf_register,
    .buf_unregister = hkc_hip_buf_unregister,
    .buf_upload = hkc_hip_buf_upload,
    .buf_download = hkc_hip_buf_download,
    .buf_copy = hkc_hip_buf_copy,
    .buf_fill = hkc_hip_buf_fill,
    .compile = hkc_hip_compile,
    .module_load = hkc_hip_module_load,
    .module_unload = hkc_hip_module_unload,
    .module_kernels = hkc_hip_module_kernels,
    .function_get = hkc_hip_function_get,
    .module_global = hkc_hip_module_global,
    .launch = hkc_hip_launch,
    .synchronize = hkc_hip_synchronize,
    .event_create = hkc_hip_event_create,
    .event_destroy = hkc_hip_event_destroy,
    .event_record = hkc_hip_event_record,
    .event_synchronize = hkc_hip_event_synchronize,
    .event_elapsed_ms = hkc_hip_event_elapsed_ms,
    .image_rank = hkc_hip_image_rank,
    .disasm = hkc_hip_disasm,
    .target_normalize = hkc_hip_target_normalize,
    .compile_target = hkc_hip_compile_target,
    .compile_offline = hkc_hip_compile_offline,
    .preprocess = hkc_hip_preprocess,
    .code_inspect = hkc_hip_code_inspect,
    .code_extract = hkc_hip_code_extract,
    /* graphs */
    .graph_create = hkc_hip_graph_create,
    .graph_launch = hkc_hip_graph_launch,
    .graph_destroy = hkc_hip_graph_destroy,
    /* streams */
    .stream_create = hkc_hip_stream_create,
    .stream_destroy = hkc_hip_stream_destroy,
    .stream_synchronize = hkc_hip_stream_synchronize,
    .stream_query = hkc_hip_stream_query,
    .stream_launch = hkc_hip_stream_launch,
    .stream_upload = hkc_hip_stream_upload,
    .stream_download = hkc_hip_stream_download,
    .stream_copy = hkc_hip_stream_copy,
    .stream_record = hkc_hip_stream_record,
    .stream_wait_event = hkc_hip_stream_wait_event,
};
