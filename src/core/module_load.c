/* Code objects the user loads (hk.load, hk_module_load_*): refused with the
 * backend they are for when that is not the current device's, then loaded
 * into the memory table like compiled code (module.c). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int foreign_code(hk_context *ctx, const void *data, size_t size)
{
    hkc_device *dev = hkc_current_device(ctx);
    for (int i = 0; i < ctx->nbackends; i++) {
        hkc_backend *be = &ctx->backends[i];
        if (be == dev->be || !be->impl || !be->ops->code_inspect)
            continue;
        hk_code_info *info = NULL;
        hkc_strbuf err;
        hkc_strbuf_init(&err);
        int r = be->ops->code_inspect(be, data, size, &info, &err);
        hkc_strbuf_free(&err);
        if (r != 0) { /* not its format, or unreadable: the current backend will say */
            hk_code_info_free(info);
            continue;
        }
        hkc_strbuf targets;
        hkc_strbuf_init(&targets);
        for (int k = 0; info && k < info->nentries; k++)
            hkc_strbuf_printf(&targets, "%s%s", k ? ", " : "", info->entries[k].target);
        hk_code_info_free(info);
        r = hkc_fail(ctx, HK_EFORMAT,
                     "this is code for the %s backend (%s), but the current device is %s:%d (%s); "
                     "select a %s device (hk.device / HIPKIT_BACKEND=%s)",
                     be->ops->name, targets.len ? targets.data : "unreadable", dev->be->ops->name,
                     dev->index, dev->info.name, be->ops->name, be->ops->name);
        hkc_strbuf_free(&targets);
        return r;
    }
    return 0;
}

_Thread_local int hkc_loading_user_code;

HK_API int hk_module_load_bytes(hk_context *ctx, const void *data, size_t size, const char *name,
                                hk_module **out)
{
    if (!ctx || !data || !out)
        return hkc_fail(ctx, HK_EINVAL, "hk_module_load_bytes: context, data or out is NULL");
    *out = NULL;
    double t0 = hkc_now_ms();
    int r = hkc_graph_refuse(ctx, "hk_module_load_bytes", "a code object loads on the host, once");
    if (r != 0)
        return r;
    r = foreign_code(ctx, data, size);
    if (r != 0)
        return r;
    hkc_modentry *e;
    hkc_loading_user_code = 1;
    r = hkc_entry_load(ctx, hkc_current_device(ctx), data, size, &e);
    hkc_loading_user_code = 0;
    if (r != 0)
        return r;
    return hkc_module_new(ctx, e, name && *name ? name : "module", HK_ORIGIN_FILE, hkc_now_ms() - t0, out);
}

HK_API int hk_module_load_file(hk_context *ctx, const char *path, hk_module **out)
{
    if (!ctx || !path || !out)
        return hkc_fail(ctx, HK_EINVAL, "hk_module_load_file: context, path or out is NULL");
    *out = NULL;
    int rr = hkc_graph_refuse(ctx, "hk_module_load_file", "a code object loads on the host, once");
    if (rr)
        return rr;
    char *data;
    size_t size;
    int e = hkc_read_file(path, &data, &size);
    if (e)
        return hkc_fail(ctx, HK_EIO, "cannot read '%s': %s", path, hkc_file_strerror(e));
    const char *base = strrchr(path, '/');
    int r = hk_module_load_bytes(ctx, data, size, base ? base + 1 : path, out);
    if (r != 0)
        hkc_fail(ctx, r, "'%s': %s", path, hk_errmsg(ctx));
    free(data);
    return r;
}
