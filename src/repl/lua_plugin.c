/* Plugins from Lua: hk.plugins() lists the families and their kernels;
 * hk.ops.FAMILY.KERNEL(...) launches one with the geometry its plugin
 * declared (an explicit-geometry kernel takes grid and block first). */
#include <string.h>

#include "hkl.h"

#define MAX_ARGS 64

static int l_plugins(lua_State *L)
{
    hk_context *ctx = hkl_ctx(L);
    int n = hk_plugin_count(ctx);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        hk_plugin_info p;
        hkl_check(L, hk_plugin_get(ctx, i, &p));
        lua_createtable(L, 0, 6);
        lua_pushstring(L, p.name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, p.version);
        lua_setfield(L, -2, "version");
        lua_pushstring(L, p.description);
        lua_setfield(L, -2, "description");
        lua_pushstring(L, p.path);
        lua_setfield(L, -2, "path");
        if (*p.error) {
            lua_pushstring(L, p.error);
            lua_setfield(L, -2, "error");
        }
        lua_createtable(L, p.nkernels, 0);
        for (int k = 0; k < p.nkernels; k++) {
            hk_plugin_kernel_info ki;
            hkl_check(L, hk_plugin_kernel_get(ctx, i, k, &ki));
            lua_createtable(L, 0, 4);
            lua_pushstring(L, ki.name);
            lua_setfield(L, -2, "name");
            lua_pushstring(L, ki.signature);
            lua_setfield(L, -2, "signature");
            lua_pushstring(L, ki.doc);
            lua_setfield(L, -2, "doc");
            static const char *const geoms[] = {"explicit", "1d", "2d"};
            lua_pushstring(L, ki.geometry >= 0 && ki.geometry <= 2 ? geoms[ki.geometry] : "?");
            lua_setfield(L, -2, "geometry");
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "kernels");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* An op: upvalues are the buffer metatable (for hkl_convert_args), the
 * family, the kernel and its geometry kind. */
static int op_call(lua_State *L)
{
    const char *family = lua_tostring(L, lua_upvalueindex(2));
    const char *kernel = lua_tostring(L, lua_upvalueindex(3));
    int explicit_geom = lua_toboolean(L, lua_upvalueindex(4));
    hk_launch_config cfg, *pcfg = NULL;
    int first = 1;
    if (explicit_geom) {
        cfg.grid = hkl_check_dim3(L, 1, "grid");
        cfg.block = hkl_check_dim3(L, 2, "block");
        cfg.shared_bytes = 0;
        pcfg = &cfg;
        first = 3;
    }
    int n = lua_gettop(L) - first + 1;
    if (n < 0)
        n = 0;
    if (n > MAX_ARGS)
        return luaL_error(L, "at most %d kernel arguments", MAX_ARGS);
    hk_arg args[MAX_ARGS];
    hkl_convert_args(L, first, n, args);
    hkl_check(L, hk_plugin_launch(hkl_ctx(L), family, kernel, pcfg, args, n));
    return 0;
}

/* hk.ops.FAMILY.KERNEL: made on first access and kept in the family table. */
static int family_index(lua_State *L)
{
    const char *kernel = luaL_checkstring(L, 2);
    lua_getfield(L, 1, "__family");
    const char *family = lua_tostring(L, -1);
    hk_context *ctx = hkl_ctx(L);
    int fi = hk_plugin_find(ctx, family);
    if (fi < 0)
        return hkl_error(L, fi, NULL);
    hk_plugin_info p;
    hkl_check(L, hk_plugin_get(ctx, fi, &p));
    int geom = -1;
    for (int k = 0; k < p.nkernels; k++) {
        hk_plugin_kernel_info ki;
        hkl_check(L, hk_plugin_kernel_get(ctx, fi, k, &ki));
        if (!strcmp(ki.name, kernel))
            geom = ki.geometry;
    }
    if (geom < 0) {
        hk_kernel *k;
        return hkl_error(L, hk_plugin_kernel(ctx, family, kernel, &k), NULL); /* names the kernels */
    }
    luaL_getmetatable(L, HKL_BUFFER);
    lua_pushstring(L, family);
    lua_pushvalue(L, 2);
    lua_pushboolean(L, geom == 0);
    lua_pushcclosure(L, op_call, 4);
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, kernel);
    return 1;
}

static int ops_index(lua_State *L)
{
    const char *family = luaL_checkstring(L, 2);
    int fi = hk_plugin_find(hkl_ctx(L), family);
    if (fi < 0)
        return hkl_error(L, fi, NULL);
    lua_createtable(L, 0, 4);
    lua_pushstring(L, family);
    lua_setfield(L, -2, "__family");
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, family_index);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, family);
    return 1;
}

void hkl_plugin_register(lua_State *L)
{
    lua_pushcfunction(L, l_plugins);
    lua_setfield(L, -2, "plugins");
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, ops_index);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, "ops");
}
