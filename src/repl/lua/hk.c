/* The `hk` table: the context, backends and devices, sync, the cache, code
 * object inspection, and the error convention every binding file shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hkl.h"
#include "file_read.h"

/* Registry key of the context userdata (its __gc destroys the context, which
 * Lua runs after every buffer and module is collected, since those hold a
 * reference to it through their metatables' registry upvalue). */
static const char ctx_key = 'c';

typedef struct hkl_context {
    hk_context *ctx;
} hkl_context;

hk_context *hkl_ctx(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &ctx_key);
    hkl_context *c = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (!c || !c->ctx)
        luaL_error(L, "hipkit context is closed");
    return c->ctx;
}

int hkl_error(lua_State *L, int rc, const char *what)
{
    const char *msg = hk_errmsg(hkl_ctx(L));
    if (what)
        return luaL_error(L, "%s: %s", what, *msg ? msg : hk_strerror(rc));
    return luaL_error(L, "%s", *msg ? msg : hk_strerror(rc));
}

void hkl_check(lua_State *L, int rc)
{
    if (rc != 0)
        hkl_error(L, rc, NULL);
}

void hkl_set_str(lua_State *L, const char *key, const char *s)
{
    lua_pushstring(L, s);
    lua_setfield(L, -2, key);
}

void hkl_set_int(lua_State *L, const char *key, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, key);
}

void hkl_set_bool(lua_State *L, const char *key, int v)
{
    lua_pushboolean(L, v);
    lua_setfield(L, -2, key);
}

void hkl_push_list(lua_State *L, int n, void (*push)(lua_State *L, int i, void *ud), void *ud)
{
    lua_createtable(L, n > 0 ? n : 0, 0);
    for (int i = 0; i < n; i++) {
        push(L, i, ud);
        lua_rawseti(L, -2, i + 1);
    }
}

static int ctx_gc(lua_State *L)
{
    hkl_context *c = lua_touserdata(L, 1);
    if (c->ctx) {
        hk_context_destroy(c->ctx);
        c->ctx = NULL;
    }
    return 0;
}

/* ------------------------------------------------------------- devices */

/* A device is a small table with a __tostring: plain data, easy to inspect. */
static void push_device(lua_State *L, int i)
{
    hk_context *ctx = hkl_ctx(L);
    hk_device_info d;
    hkl_check(L, hk_device_get(ctx, i, &d));
    lua_createtable(L, 0, 12);
    hkl_set_int(L, "id", i);
    hkl_set_str(L, "backend", d.backend);
    hkl_set_int(L, "index", d.index);
    hkl_set_str(L, "name", d.name);
    hkl_set_str(L, "target", d.target);
    hkl_set_int(L, "memory", (lua_Integer)d.total_memory);
    hkl_set_int(L, "compute_units", d.compute_units);
    hkl_set_int(L, "warp_size", d.warp_size);
    hkl_set_bool(L, "managed_memory", d.managed_memory);
    hkl_set_int(L, "max_threads_per_block", d.max_threads_per_block);
    hkl_set_int(L, "max_shared_per_block", (lua_Integer)d.max_shared_per_block);
    hkl_set_bool(L, "current", i == hk_device_current(ctx));
    luaL_setmetatable(L, HKL_DEVICE);
}

static int device_tostring(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "backend");
    lua_getfield(L, 1, "index");
    lua_getfield(L, 1, "name");
    lua_getfield(L, 1, "target");
    lua_getfield(L, 1, "memory");
    lua_getfield(L, 1, "compute_units");
    lua_getfield(L, 1, "warp_size");
    lua_getfield(L, 1, "current");
    char mem[32]; /* "79.1 GiB", not 79.103027343750 */
    hkl_format_bytes((double)lua_tointeger(L, 6), mem, sizeof mem);
    lua_pushfstring(L, "%s:%d %s (%s), %s, %d compute units, warp %d%s", lua_tostring(L, 2),
                    (int)lua_tointeger(L, 3), lua_tostring(L, 4), lua_tostring(L, 5), mem,
                    (int)lua_tointeger(L, 7), (int)lua_tointeger(L, 8),
                    lua_toboolean(L, 9) ? " [current]" : "");
    return 1;
}

static void push_device_i(lua_State *L, int i, void *ud)
{
    (void)ud;
    push_device(L, i);
}

static int l_devices(lua_State *L)
{
    hkl_push_list(L, hk_device_count(hkl_ctx(L)), push_device_i, NULL);
    hkl_report(L, "devices");
    return 1;
}

/* hk.device() → the current device; hk.device(i | "cuda:0" | "host") selects
 * one (i is 1-based, as the list hk.devices() returns) and returns it. */
static int l_device(lua_State *L)
{
    hk_context *ctx = hkl_ctx(L);
    if (!lua_isnoneornil(L, 1)) {
        int idx;
        if (lua_type(L, 1) == LUA_TNUMBER) {
            lua_Integer i = luaL_checkinteger(L, 1);
            if (i < 1 || i > hk_device_count(ctx))
                return luaL_argerror(L, 1, lua_pushfstring(L, "device %d does not exist (1..%d)",
                                                           (int)i, hk_device_count(ctx)));
            idx = (int)i - 1;
        } else {
            idx = hk_device_find(ctx, luaL_checkstring(L, 1));
            if (idx < 0)
                return hkl_error(L, idx, NULL);
        }
        hkl_check(L, hk_device_select(ctx, idx));
    }
    push_device(L, hk_device_current(ctx));
    return 1;
}

static void push_backend(lua_State *L, int i, void *ctx)
{
    hk_backend_info b;
    hkl_check(L, hk_backend_get(ctx, i, &b));
    lua_createtable(L, 0, 5);
    hkl_set_str(L, "name", b.name);
    hkl_set_bool(L, "available", b.available);
    hkl_set_str(L, "reason", b.reason);
    hkl_set_str(L, "toolchain", b.toolchain);
    hkl_set_int(L, "devices", b.device_count);
}

static int l_backends(lua_State *L)
{
    hk_context *ctx = hkl_ctx(L);
    hkl_push_list(L, hk_backend_count(ctx), push_backend, ctx);
    hkl_report(L, "backends");
    return 1;
}

/* Edits (insert, delete, substitute, swap two neighbours) from a to b,
 * capped: names are short and only "near" (<= 2) matters. */
static int edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 31 || m > 31)
        return 99;
    int d[32][32];
    for (size_t i = 0; i <= n; i++)
        for (size_t j = 0; j <= m; j++) {
            if (!i || !j) {
                d[i][j] = (int)(i + j);
                continue;
            }
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            int v = sub < del ? sub : del;
            v = v < ins ? v : ins;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

/* The known name nearest to key, if near enough to be a typo of it (a
 * prefix counts: `define` for `defines`), else NULL. */
static const char *nearest_name(const char *key, const char *const *names)
{
    const char *best = NULL;
    int bestd = 3;
    size_t kn = strlen(key);
    for (const char *const *k = names; *k; k++) {
        int d = edit_distance(key, *k);
        if (kn >= 3 && !strncmp(*k, key, kn))
            d = d < 1 ? d : 1;
        if (d < bestd && d <= (int)kn / 2 + 1) {
            bestd = d;
            best = *k;
        }
    }
    return best;
}

void hkl_check_options(lua_State *L, int idx, const char *const *names, const char *fn)
{
    if (lua_isnoneornil(L, idx))
        return;
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int known = 0;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (const char *const *k = names; *k && !known; k++)
                known = strcmp(*k, lua_tostring(L, -1)) == 0;
        if (!known) {
            luaL_Buffer lb;
            luaL_buffinit(L, &lb);
            for (const char *const *k = names; *k; k++) {
                luaL_addstring(&lb, *k);
                if (k[1])
                    luaL_addstring(&lb, ", ");
            }
            luaL_pushresult(&lb);
            const char *key = luaL_tolstring(L, -2, NULL);
            const char *near = lua_type(L, -3) == LUA_TSTRING ? nearest_name(key, names) : NULL;
            luaL_argerror(L, idx, lua_pushfstring(L, "%s: unknown option '%s' (%s%s%sknown: %s)", fn,
                                                  key, near ? "did you mean '" : "",
                                                  near ? near : "", near ? "'? " : "",
                                                  lua_tostring(L, -2)));
        }
    }
}

/* Seconds on a monotonic clock, for timing from scripts (os.clock is CPU
 * time, which misses time spent waiting for a GPU). */
static int l_clock(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
    return 1;
}

static int l_sync(lua_State *L)
{
    hkl_check(L, hk_synchronize(hkl_ctx(L)));
    return 0;
}

/* hk.check([on]) -> was: checked mode (hk_check_mode) for the buffers
 * allocated after it; no argument only asks. */
static int l_check(lua_State *L)
{
    int on = -1;
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TBOOLEAN);
        on = lua_toboolean(L, 1);
    }
    lua_pushboolean(L, hk_check_mode(on));
    return 1;
}

/* --------------------------------------------------------------- cache */

static int l_cache_dir(lua_State *L)
{
    hk_cache_stats s;
    hkl_check(L, hk_cache_get_stats(hkl_ctx(L), &s));
    if (s.dir[0])
        lua_pushstring(L, s.dir);
    else
        lua_pushnil(L);
    return 1;
}

static int l_cache_stats(lua_State *L)
{
    hk_cache_stats s;
    hkl_check(L, hk_cache_get_stats(hkl_ctx(L), &s));
    lua_createtable(L, 0, 5);
    lua_pushstring(L, s.dir);
    lua_setfield(L, -2, "dir");
    lua_pushstring(L, s.mode);
    lua_setfield(L, -2, "mode");
    lua_pushinteger(L, (lua_Integer)s.entries);
    lua_setfield(L, -2, "entries");
    lua_pushinteger(L, (lua_Integer)s.bytes);
    lua_setfield(L, -2, "bytes");
    lua_pushinteger(L, (lua_Integer)s.max_bytes);
    lua_setfield(L, -2, "max_bytes");
    return 1;
}

static int l_cache_clear(lua_State *L)
{
    hkl_check(L, hk_cache_clear(hkl_ctx(L)));
    return 0;
}

static int l_cache_prune(lua_State *L)
{
    lua_Integer max = luaL_optinteger(L, 1, 0);
    luaL_argcheck(L, max >= 0, 1, "a size in bytes, 0 for the configured cap");
    hkl_check(L, hk_cache_prune(hkl_ctx(L), (uint64_t)max));
    return 0;
}

/* ------------------------------------------------------ code objects */

/* Sets t[key] = s on the table on top, leaving the field nil for "". */
static void set_string(lua_State *L, const char *key, const char *s)
{
    if (s[0])
        hkl_set_str(L, key, s);
}

/* A cubin's kernels: names and, where its .nv.info states them, the
 * parameters' offsets and sizes; the fields it does not hold stay nil
 * rather than reading as zeros. */
static void push_code_kernel(lua_State *L, const hk_code_kernel *k, int cubin)
{
    lua_createtable(L, 0, 14);
    set_string(L, "name", k->name);
    set_string(L, "symbol", k->symbol);
    hkl_set_int(L, "wavefront", k->wavefront_size);
    if (k->nargs < 0)
        return;
    lua_createtable(L, k->nargs, 0);
    for (int i = 0; i < k->nargs; i++) {
        const hk_code_arg *a = &k->args[i];
        lua_createtable(L, 0, 7);
        set_string(L, "name", a->name);
        set_string(L, "type", a->type_name);
        hkl_set_int(L, "offset", a->offset);
        hkl_set_int(L, "size", a->size);
        set_string(L, "kind", a->value_kind);
        set_string(L, "space", a->address_space);
        hkl_set_bool(L, "hidden", a->hidden);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "args");
    hkl_set_int(L, "kernarg_size", k->kernarg_size);
    if (cubin)
        return;
    hkl_set_int(L, "kernarg_align", k->kernarg_align);
    /* -1 (the code object does not say) stays nil */
    const struct { const char *key; int v; } counts[] = {
        {"sgprs", k->sgprs}, {"vgprs", k->vgprs}, {"agprs", k->agprs},
        {"sgpr_spills", k->sgpr_spills}, {"vgpr_spills", k->vgpr_spills},
    };
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        if (counts[i].v >= 0)
            hkl_set_int(L, counts[i].key, counts[i].v);
    hkl_set_int(L, "lds", k->lds_bytes);
    hkl_set_int(L, "scratch", k->scratch_bytes);
    hkl_set_int(L, "max_workgroup", k->max_flat_workgroup_size);
}

static void push_code_info(lua_State *L, const hk_code_info *info)
{
    lua_createtable(L, 0, 2);
    set_string(L, "format", info->format);
    lua_createtable(L, info->nentries, 0);
    for (int i = 0; i < info->nentries; i++) {
        const hk_code_entry *e = &info->entries[i];
        lua_createtable(L, 0, 5);
        set_string(L, "id", e->id);
        set_string(L, "target", e->target);
        hkl_set_int(L, "offset", (lua_Integer)e->offset);
        hkl_set_int(L, "size", (lua_Integer)e->size);
        lua_createtable(L, e->nkernels, 0);
        for (int k = 0; k < e->nkernels; k++) {
            push_code_kernel(L, &e->kernels[k], !strcmp(info->format, "cubin"));
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "kernels");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "entries");
}

static int push_code_info_p(lua_State *L)
{
    push_code_info(L, lua_touserdata(L, 1));
    return 1;
}

/* hk.inspect(path) or hk.inspect{bytes = s}: a code object described with
 * no device. A string is always a path, so bytes never pass for one. */
static int l_inspect(lua_State *L)
{
    hk_context *ctx = hkl_ctx(L);
    const char *bytes = NULL;
    size_t size = 0;
    char *file = NULL;
    if (lua_type(L, 1) == LUA_TTABLE) {
        if (lua_getfield(L, 1, "bytes") != LUA_TSTRING)
            return luaL_argerror(L, 1, "a table needs bytes = <string>: the code object's contents");
        bytes = lua_tolstring(L, -1, &size);
    } else {
        const char *path = luaL_checkstring(L, 1);
        int r = hkl_file_read(path, &file, &size);
        if (r != 0)
            return luaL_error(L, "hk.inspect: cannot read '%s': %s", path, hkl_file_strerror(r));
        bytes = file;
    }
    hk_code_info *info = NULL;
    int rc = hk_code_inspect(ctx, bytes, size, &info);
    free(file);
    if (rc != 0)
        return hkl_error(L, rc, NULL);
    /* a table built under a Lua error would leak info: build it protected */
    lua_pushcfunction(L, push_code_info_p);
    lua_pushlightuserdata(L, info);
    rc = lua_pcall(L, 1, 1, 0);
    hk_code_info_free(info);
    if (rc != LUA_OK)
        return lua_error(L);
    return 1;
}

static const luaL_Reg cache_fns[] = {
    {"dir", l_cache_dir},
    {"stats", l_cache_stats},
    {"clear", l_cache_clear},
    {"prune", l_cache_prune},
    {NULL, NULL},
};

static const luaL_Reg hk_fns[] = {
    {"backends", l_backends},
    {"devices", l_devices},
    {"device", l_device},
    {"sync", l_sync},
    {"check", l_check},
    {"clock", l_clock},
    {"inspect", l_inspect},
    {NULL, NULL},
};

int hkl_open(lua_State *L, const hk_context_options *opts)
{
    hk_context *ctx = NULL;
    if (hk_context_create(opts, &ctx) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, hk_errmsg(NULL));
        return 2;
    }
    hkl_context *c = lua_newuserdatauv(L, sizeof *c, 0);
    c->ctx = ctx;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, ctx_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &ctx_key);

    luaL_newmetatable(L, HKL_DEVICE);
    lua_pushcfunction(L, device_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    luaL_newlib(L, hk_fns);
    luaL_newlib(L, cache_fns);
    lua_setfield(L, -2, "cache");
    lua_pushstring(L, HK_VERSION_STRING);
    lua_setfield(L, -2, "version");
    hkl_buffer_register(L);
    hkl_module_register(L);
    hkl_bench_register(L);
    hkl_plugin_register(L);
    hkl_plugin_reload_register(L);
    hkl_report_register(L);
    hkl_elementwise_register(L);
    hkl_gguf_register(L);
    hkl_graph_register(L);
    hkl_help_register(L);
    hkl_tune_register(L);
    hkl_stream_register(L);
    return 1;
}

void hkl_set_code_target(lua_State *L, const hk_module *m)
{
    const void *code = NULL;
    size_t size = 0;
    hk_code_info *ci = NULL;
    if (hk_module_code(m, &code, &size) != 0 || hk_code_inspect(hkl_ctx(L), code, size, &ci) != 0)
        return;
    if (ci->nentries == 1)
        hkl_set_str(L, "target", ci->entries[0].target);
    hk_code_info_free(ci);
}
