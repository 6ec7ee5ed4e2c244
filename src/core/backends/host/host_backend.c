/* The CPU backend: always built, always available. Buffers are host memory
 * between guard pages; kernels are shared objects built by the system C++
 * compiler; a launch runs the grid on a thread pool and has finished when it
 * returns. Its files, by job: host_device.c, host_memory.c, host_module.c,
 * host_launch.c, host_compile.c and host_source.c (the compiler and the
 * generated kernel table), host_disasm.c; host_exec.c, host_fiber.c,
 * host_fault.c and host_pool.c run the blocks; host_stream.c queues work on
 * streams (a thread each) and keeps events. */
#include "host_backend.h"

const hkc_backend_ops hkc_backend_host = {
    .name = "host",
    .code_ext = "so",
    .wide_vector_align = 32,
    .probe = hkc_host_probe,
    .destroy = hkc_host_destroy,
    .device_info = hkc_host_device_info,
    .toolchain = hkc_host_toolchain,
    .buf_alloc = hkc_host_buf_alloc,
    .buf_free = hkc_host_buf_free,
    .buf_register = hkc_host_buf_register,
    .buf_unregister = hkc_host_buf_unregister,
    .buf_upload = hkc_host_buf_upload,
    .buf_download = hkc_host_buf_download,
    .buf_copy = hkc_host_buf_copy,
    .buf_fill = hkc_host_buf_fill,
    .compile = hkc_host_compile,
    .preprocess = hkc_host_preprocess,
    .module_load = hkc_host_module_load,
    .module_unload = hkc_host_module_unload,
    .module_kernels = hkc_host_module_kernels,
    .function_get = hkc_host_function_get,
    .module_global = hkc_host_module_global,
    .launch = hkc_host_launch_kernel,
    .synchronize = hkc_host_synchronize,
    .event_create = hkc_host_event_create,
    .event_destroy = hkc_host_event_destroy,
    .event_record = hkc_host_event_record,
    .event_synchronize = hkc_host_event_synchronize,
    .event_elapsed_ms = hkc_host_event_elapsed_ms,
    .target_normalize = hkc_host_target_normalize,
    .compile_target = hkc_host_compile_target,
    .disasm = hkc_host_disasm,
    /* streams */
    .stream_create = hkc_host_stream_create,
    .stream_destroy = hkc_host_stream_destroy,
    .stream_synchronize = hkc_host_stream_synchronize,
    .stream_query = hkc_host_stream_query,
    .stream_launch = hkc_host_stream_launch,
    .stream_upload = hkc_host_stream_upload,
    .stream_download = hkc_host_stream_download,
    .stream_copy = hkc_host_stream_copy,
    .stream_record = hkc_host_stream_record,
    .stream_wait_event = hkc_host_stream_wait_event,
};
