/* Launch: everything is checked here, before a backend sees it. */
#include <string.h>

#include "internal.h"

/* CUDA and HIP both cap kernel arguments at 4 KiB. */
#define KERNARG_MAX 4096

static int check_config(const hk_kernel *k, const hk_launch_config *cfg)
{
    hk_context *ctx = k->m->ctx;
    const hkc_device *dev = k->m->entry->dev;
    const hk_device_info *di = &dev->info;
    if (!cfg)
        return hkc_fail(ctx, HK_EINVAL, "kernel %s: launch configuration is NULL", k->name);
    const uint32_t *g = &cfg->grid.x, *b = &cfg->block.x;
    static const char axis[] = "xyz";
    for (int i = 0; i < 3; i++) {
        if (!g[i] || !b[i])
            return hkc_fail(ctx, HK_ELAUNCH, "kernel %s: %s.%c is 0; every dimension must be at least 1",
                            k->name, !g[i] ? "grid" : "block", axis[i]);
        if (b[i] > di->max_block[i])
            return hkc_fail(ctx, HK_ELAUNCH, "kernel %s: block.%c = %u exceeds the device's limit of %u",
                            k->name, axis[i], b[i], di->max_block[i]);
        if (g[i] > di->max_grid[i])
            return hkc_fail(ctx, HK_ELAUNCH, "kernel %s: grid.%c = %u exceeds the device's limit of %u",
                            k->name, axis[i], g[i], di->max_grid[i]);
    }
    uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
    uint32_t limit = k->info.max_threads_per_block < di->max_threads_per_block
                         ? k->info.max_threads_per_block : di->max_threads_per_block;
    if (threads > limit && limit < di->max_threads_per_block)
        return hkc_fail(ctx, HK_ELAUNCH,
                        "kernel %s: block (%u, %u, %u) has %llu threads; this kernel allows at most %u per "
                        "block (its __launch_bounds__, or the registers it uses; the device allows %u)",
                        k->name, b[0], b[1], b[2], (unsigned long long)threads, limit,
                        di->max_threads_per_block);
    if (threads > limit)
        return hkc_fail(ctx, HK_ELAUNCH,
                        "kernel %s: block (%u, %u, %u) has %llu threads; at most %u are allowed per block",
                        k->name, b[0], b[1], b[2], (unsigned long long)threads, limit);
    uint64_t shared = cfg->shared_bytes + (k->info.static_shared > 0 ? (uint64_t)k->info.static_shared : 0);
    if (shared > di->max_shared_per_block)
        return hkc_fail(ctx, HK_ELAUNCH,
                        "kernel %s: %zu bytes of dynamic shared memory (plus %lld static) exceed the device's %zu per block",
                        k->name, cfg->shared_bytes, (long long)(k->info.static_shared > 0 ? k->info.static_shared : 0),
                        di->max_shared_per_block);
    return 0;
}

/* The backend gets the kernel's handle and what it may need for messages
 * and pointer checks, not the core's hk_kernel. s NULL: the default stream. */
static int backend_launch(hk_stream *s, const hk_kernel *k, const hk_launch_config *cfg,
                          const void *kernarg, size_t size)
{
    const hkc_device *dev = k->m->entry->dev;
    const hkc_launch_kernel lk = {.bfn = k->bfn, .name = k->name, .sig = &k->sig, .info = &k->info};
    if (s)
        return dev->be->ops->stream_launch(s, &lk, cfg, kernarg, size);
    return dev->be->ops->launch(dev->be, dev->index, &lk, cfg, kernarg, size);
}

static int check_stream(hk_stream *s, const hk_kernel *k, const char *fn)
{
    return s ? hkc_stream_check_device(s, k->m->entry->dev, fn, "kernel") : 0;
}

/* What the last kernel before this launch may write: the recording's last
 * node, or the device's last kernel. */
static hkc_kernel_writes *writes_before(const hk_kernel *k)
{
    hk_context *ctx = k->m->ctx;
    return ctx->graph_rec ? hkc_graph_writes(ctx->graph_rec) : &k->m->entry->dev->last_writes;
}

static int launch_args(hk_stream *s, hk_kernel *k, const hk_launch_config *cfg_in, const hk_arg *args,
                       int nargs)
{
    hk_context *ctx = k->m->ctx;
    int r = check_config(k, cfg_in);
    if (r)
        return r;
    if (nargs && !args)
        return hkc_fail(ctx, HK_EINVAL, "kernel %s: args is NULL", k->name);
    hkc_kernel_writes *before = writes_before(k);
    hk_launch_config cfg[1] = {*cfg_in};
    if ((r = hkc_early_flags(ctx, k->name, before, s, cfg_in, args, nargs, &cfg->flags)) != 0)
        return r;
    if (k->sig.kernarg_size > KERNARG_MAX)
        return hkc_fail(ctx, HK_EARG, "kernel %s: its parameters take %u bytes; at most %d are allowed",
                        k->name, k->sig.kernarg_size, KERNARG_MAX);
    _Alignas(16) unsigned char kernarg[KERNARG_MAX];
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    r = hkc_signature_pack(&k->sig, k->name, args, nargs, k->m->entry->dev - ctx->devices, kernarg, &err);
    if (r != 0) {
        hkc_fail(ctx, HK_EARG, "%s", err.data);
        hkc_strbuf_free(&err);
        return HK_EARG;
    }
    hkc_strbuf_free(&err);
    if (ctx->graph_rec) /* a graph replays on the default stream: record only its launches */
        r = s ? hkc_graph_refuse(ctx, "hk_launch_on", "a launch on a stream")
              : hkc_graph_capture(k, cfg, kernarg, k->sig.kernarg_size, args, nargs);
    else
        r = backend_launch(s, k, cfg, kernarg, k->sig.kernarg_size);
    if (!r)
        hkc_writes_note(before, s, &k->sig, args, nargs);
    return r;
}

HK_API int hk_launch(hk_kernel *k, const hk_launch_config *cfg, const hk_arg *args, int nargs)
{
    if (!k)
        return hkc_fail(NULL, HK_EINVAL, "hk_launch: kernel is NULL");
    return launch_args(NULL, k, cfg, args, nargs);
}

HK_API int hk_launch_on(hk_stream *s, hk_kernel *k, const hk_launch_config *cfg, const hk_arg *args,
                        int nargs)
{
    if (!k)
        return hkc_fail(s ? s->ctx : NULL, HK_EINVAL, "hk_launch_on: kernel is NULL");
    int r = check_stream(s, k, "hk_launch_on");
    return r ? r : launch_args(s, k, cfg, args, nargs);
}

static int launch_packed(hk_stream *s, hk_kernel *k, const hk_launch_config *cfg_in, const void *kernarg,
                         size_t size)
{
    int r = check_config(k, cfg_in);
    if (r)
        return r;
    hkc_kernel_writes *before = writes_before(k);
    hk_launch_config cfg[1] = {*cfg_in};
    if ((r = hkc_early_flags(k->m->ctx, k->name, before, s, cfg_in, NULL, 0, &cfg->flags)) != 0)
        return r;
    if (size != k->sig.kernarg_size || (size && !kernarg))
        return hkc_fail(k->m->ctx, HK_EARG, "kernel %s: packed arguments are %zu bytes, its parameters take %u",
                        k->name, size, k->sig.kernarg_size);
    if (k->m->ctx->graph_rec) /* its pointers are bytes here: no buffers to remember */
        r = s ? hkc_graph_refuse(k->m->ctx, "hk_launch_packed_on", "a launch on a stream")
              : hkc_graph_capture(k, cfg, kernarg, size, NULL, 0);
    else
        r = backend_launch(s, k, cfg, kernarg, size);
    if (!r)
        hkc_writes_note(before, s, &k->sig, NULL, 0);
    return r;
}

HK_API int hk_launch_packed(hk_kernel *k, const hk_launch_config *cfg, const void *kernarg,
                            size_t size)
{
    if (!k)
        return hkc_fail(NULL, HK_EINVAL, "hk_launch_packed: kernel is NULL");
    return launch_packed(NULL, k, cfg, kernarg, size);
}

HK_API int hk_launch_packed_on(hk_stream *s, hk_kernel *k, const hk_launch_config *cfg,
                               const void *kernarg, size_t size)
{
    if (!k)
        return hkc_fail(s ? s->ctx : NULL, HK_EINVAL, "hk_launch_packed_on: kernel is NULL");
    int r = check_stream(s, k, "hk_launch_packed_on");
    return r ? r : launch_packed(s, k, cfg, kernarg, size);
}
