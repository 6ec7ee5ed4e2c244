/* hk.plugins.reload(name): a rebuilt plugin loaded again in the running
 * session (hk_plugin_reload). hk.plugins stays callable as before (a
 * table whose __call is the listing), and gains reload. */
#include "hkl.h"

/* hk.plugins(...) -> the listing (upvalue 1), without the table itself. */
static int plugins_call(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_replace(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* Upvalue 1 is hk.ops. Its family tables hold the functions made for the
 * old kernels (by name: they would reach the new ones anyway, but with
 * the old kernel's launch form), so they are dropped and made again on
 * the next lookup. A function the caller kept goes on working by name, or
 * fails with hipkit's message when its kernel is gone. */
static int l_reload(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    hkl_check(L, hk_plugin_reload(hkl_ctx(L), name));
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_pushnil(L);
        lua_rawset(L, -4); /* clearing a field during traversal is allowed */
    }
    lua_pushboolean(L, 1);
    return 1;
}

void hkl_plugin_reload_register(lua_State *L)
{
    lua_createtable(L, 0, 1);
    lua_getfield(L, -2, "ops");
    lua_pushcclosure(L, l_reload, 1);
    lua_setfield(L, -2, "reload");
    lua_createtable(L, 0, 1);
    lua_getfield(L, -3, "plugins");
    lua_pushcclosure(L, plugins_call, 1);
    lua_setfield(L, -2, "__call");
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, "plugins");
}
