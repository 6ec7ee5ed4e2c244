/* hk.autotune, hk.peaks and hk.bench over several functions: their code is
 * tune.lua (embedded at build time), run once when the module opens; this
 * file gives it the few things only C can reach: the disk cache's records,
 * a source hash, and how a kernel's module was compiled. */
#include <stdlib.h>
#include <string.h>

#include "hkl.h"

typedef struct {
    const char *path;
    const char *data;
    size_t size;
} hkc_embedded_file;
extern const hkc_embedded_file hkl_tune_lua[];

/* record_get(kind, name, key) -> text | nil: a miss (damaged and foreign
 * records included: the library warned) is nil, not an error. */
static int tune_record_get(lua_State *L)
{
    const char *kind = luaL_checkstring(L, 1), *name = luaL_checkstring(L, 2);
    const char *key = luaL_checkstring(L, 3);
    char *text = NULL;
    size_t len = 0;
    int rc = hk_cache_record_get(hkl_ctx(L), kind, name, key, &text, &len);
    if (rc == HK_ENOTFOUND) {
        lua_pushnil(L);
        return 1;
    }
    hkl_check(L, rc);
    lua_pushlstring(L, text, len);
    free(text);
    return 1;
}

static int tune_record_put(lua_State *L)
{
    const char *kind = luaL_checkstring(L, 1), *name = luaL_checkstring(L, 2);
    const char *key = luaL_checkstring(L, 3);
    size_t len;
    const char *text = luaL_checklstring(L, 4, &len);
    hkl_check(L, hk_cache_record_put(hkl_ctx(L), kind, name, key, text, len));
    return 0;
}

/* source_key(text) -> 32 hex digits: the hash the compile cache gives a
 * source, here of a module's source with its options written before it. */
static int tune_source_key(lua_State *L)
{
    size_t len;
    const char *text = luaL_checklstring(L, 1, &len);
    luaL_argcheck(L, strlen(text) == len, 1, "no NUL bytes");
    char key[33];
    hkl_check(L, hk_plugin_source_key(text, NULL, key));
    lua_pushstring(L, key);
    return 1;
}

/* recipe(k) -> {source, options, path} | nil: a kernel's user value 1 is its
 * module (nil for a family's kernel), whose user value 1 is how hk.compile
 * made it (module.c). */
static int tune_recipe(lua_State *L)
{
    luaL_checkudata(L, 1, HKL_KERNEL);
    if (lua_getiuservalue(L, 1, 1) != LUA_TUSERDATA || !luaL_testudata(L, -1, HKL_MODULE) ||
        lua_getiuservalue(L, -1, 1) != LUA_TTABLE) {
        lua_pushnil(L);
        return 1;
    }
    return 1;
}

void hkl_tune_register(lua_State *L)
{
    static const luaL_Reg helpers[] = {
        {"record_get", tune_record_get},
        {"record_put", tune_record_put},
        {"source_key", tune_source_key},
        {"recipe", tune_recipe},
        {NULL, NULL},
    };
    const hkc_embedded_file *f = &hkl_tune_lua[0];
    if (luaL_loadbuffer(L, f->data, f->size, "=tune.lua") != LUA_OK)
        lua_error(L); /* a build that embedded broken Lua: the tests catch it */
    lua_pushvalue(L, -2); /* hk */
    luaL_newlib(L, helpers);
    lua_call(L, 2, 0);
}
