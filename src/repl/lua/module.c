/* Modules, kernels and launches from Lua: hk.compile, hk.load, m:kernel,
 * k:launch and k{grid=, block=}(...). A launch converts its arguments on the
 * C stack and allocates nothing. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hkl.h"
#include "file_read.h"

#define MAX_ARGS 64
#define WHAT_ARGS "pass a buffer, a number, a boolean, a table (a vector) or hk.null"

typedef struct hkl_module {
    hk_module *m; /* NULL once freed */
    hkl_pin pin;  /* held by a running launch: free() is refused */
} hkl_module;

typedef struct hkl_kernel {
    hk_kernel *k;
    hkl_module *owner; /* its module userdata (kept alive as user value 1); NULL for a
                        * plugin kernel, which the context keeps */
} hkl_kernel;

/* Was the kernel's module freed (m:free, or collected)? */
static int kernel_gone(const hkl_kernel *uk) { return uk->owner && !uk->owner->m; }

typedef struct hkl_launcher {
    hkl_kernel *kernel; /* kept alive as user value 1 */
    hk_launch_config cfg;
} hkl_launcher;

/* hk.u64(v): a kernel argument of 64 unsigned bits. Lua's integers are
 * signed, so 2^63 and above are negative there, and a negative integer
 * for an unsigned parameter is refused (a count of -1 is a mistake far more
 * often than a mask); v is a Lua integer taken as its bits, or a string of
 * a decimal or 0x hexadecimal number below 2^64. */
static int l_u64(lua_State *L)
{
    uint64_t v;
    if (lua_isinteger(L, 1)) {
        v = (uint64_t)lua_tointeger(L, 1);
    } else if (lua_type(L, 1) == LUA_TSTRING) {
        const char *s = lua_tostring(L, 1);
        int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
        char *end;
        errno = 0;
        /* strtoull alone would take a sign or spaces: only digits here */
        v = isxdigit((unsigned char)s[hex ? 2 : 0]) ? strtoull(s + (hex ? 2 : 0), &end, hex ? 16 : 10) : 0;
        if (!isxdigit((unsigned char)s[hex ? 2 : 0]) || errno || *end)
            return luaL_argerror(L, 1, lua_pushfstring(L, "'%s' is no decimal or 0x number below 2^64", s));
    } else {
        return luaL_argerror(L, 1, "an integer (its 64 bits) or a string of a number below 2^64");
    }
    uint64_t *u = lua_newuserdatauv(L, sizeof *u, 0);
    *u = v;
    luaL_setmetatable(L, HKL_U64);
    return 1;
}

static int u64_tostring(lua_State *L)
{
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)*(const uint64_t *)luaL_checkudata(L, 1, HKL_U64));
    lua_pushfstring(L, "hk.u64(%s)", text);
    return 1;
}

static int u64_eq(lua_State *L)
{
    const uint64_t *a = luaL_testudata(L, 1, HKL_U64), *b = luaL_testudata(L, 2, HKL_U64);
    lua_pushboolean(L, a && b && *a == *b);
    return 1;
}

/* Light userdata that stands for a null pointer argument. */
static const char null_sentinel = 0;

/* ------------------------------------------------------------- modules */

static hkl_module *check_module(lua_State *L, int idx)
{
    hkl_module *um = luaL_checkudata(L, idx, HKL_MODULE);
    if (!um->m)
        luaL_error(L, "the module was freed");
    return um;
}

/* User value 1 of a compiled module: how it was made ({source=, options=,
 * path=}, for m:reload and instantiations named later), then the modules
 * it replaced (their kernels may still be in use). */
static void push_module(lua_State *L, hk_module *m)
{
    hkl_module *um = lua_newuserdatauv(L, sizeof *um, 1);
    um->m = m;
    um->pin = (hkl_pin){0, NULL};
    luaL_setmetatable(L, HKL_MODULE);
}

/* Keeps the string on top of the stack alive in the anchor table and
 * returns a pointer to it (valid while the anchor is on the stack). */
static const char *anchor_string(lua_State *L, int anchor)
{
    lua_Integer n = (lua_Integer)lua_rawlen(L, anchor) + 1;
    lua_rawseti(L, anchor, n);
    lua_rawgeti(L, anchor, n);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    /* The compiler sees C strings: a NUL would cut the option silently. */
    if (s && strlen(s) != len)
        luaL_error(L, "hk.compile: option \"%s\" has a NUL byte at offset %d", s, (int)strlen(s));
    lua_pop(L, 1);
    return s;
}

/* opts[field]: a string or a list of strings; for defines also
 * {NAME = VALUE} pairs, which become "NAME=VALUE". */
static int string_list(lua_State *L, int opts, int anchor, const char *field, const char **out,
                       int max)
{
    int n = 0, t = lua_getfield(L, opts, field);
    if (t == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (t == LUA_TSTRING) {
        out[n++] = anchor_string(L, anchor);
        return n;
    }
    if (t != LUA_TTABLE)
        luaL_error(L, "option '%s' must be a string or a list of strings", field);
    int tbl = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, tbl)) {
        if (n >= max)
            luaL_error(L, "option '%s' has more than %d entries", field, max);
        if (lua_type(L, -2) == LUA_TNUMBER) {
            if (lua_type(L, -1) != LUA_TSTRING)
                luaL_error(L, "option '%s' entry %d is not a string", field, (int)lua_tointeger(L, -2));
            lua_pushvalue(L, -1);
            out[n++] = anchor_string(L, anchor);
        } else if (!strcmp(field, "defines") && lua_type(L, -2) == LUA_TSTRING) {
            const char *key = lua_tostring(L, -2);
            if (lua_type(L, -1) == LUA_TBOOLEAN) {
                lua_pushfstring(L, "%s=%s", key, lua_toboolean(L, -1) ? "1" : "0");
                out[n++] = anchor_string(L, anchor);
            } else if (lua_type(L, -1) != LUA_TNUMBER && lua_type(L, -1) != LUA_TSTRING) {
                luaL_error(L, "defines.%s is a %s; a define's value is a string, a number or a boolean", key,
                           luaL_typename(L, -1));
            } else {
                const char *v = luaL_tolstring(L, -1, NULL);
                lua_pushfstring(L, "%s=%s", key, v);
                out[n++] = anchor_string(L, anchor);
                lua_pop(L, 1); /* luaL_tolstring's result */
            }
        } else {
            luaL_error(L, "option '%s' has a key that is not a list index", field);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return n;
}

/* The 1-based line of offset at in s. */
static size_t line_of(const char *s, size_t at)
{
    size_t line = 1;
    for (size_t i = 0; i < at; i++)
        line += s[i] == '\n';
    return line;
}

/* The source at idx as a C string: a NUL byte inside would silently cut
 * off everything after it, so it is an error naming where it is. */
static const char *check_source(lua_State *L, int idx, const char *path)
{
    size_t len;
    const char *src = lua_tolstring(L, idx, &len);
    size_t at = strlen(src);
    if (at != len)
        luaL_error(L, "hk.compile: %s%s%shas a NUL byte at offset %I (line %I); HIP source is text",
                   path ? "'" : "the source ", path ? path : "", path ? "' " : "", (lua_Integer)at,
                   (lua_Integer)line_of(src, at));
    return src;
}

/* hk.compile{path = FILE, ...}: the file's text as the source (pushed), its
 * path as the module's name (so messages name it), its folder searched for
 * includes; the table is the options. */
static const char *source_from_file(lua_State *L, const char **path, char *dir, size_t cap)
{
    lua_getfield(L, 1, "path");
    *path = luaL_checkstring(L, -1);
    char *text = NULL;
    size_t size = 0;
    int e = hkl_file_read(*path, &text, &size);
    if (e != 0)
        luaL_error(L, "hk.compile: cannot read '%s': %s", *path, hkl_file_strerror(e));
    lua_pushlstring(L, text, size);
    free(text);
    check_source(L, -1, *path);
    snprintf(dir, cap, "%s", *path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, cap, ".");
    return lua_tostring(L, -1);
}

/* One word ending in a source file's extension, with no newline, brace
 * or parenthesis: a file name given where the source goes. */
static int looks_like_path(const char *s)
{
    static const char *const exts[] = {".hip", ".cu", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cuh"};
    if (strpbrk(s, "\n{}(); ") != NULL)
        return 0;
    size_t n = strlen(s);
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strcmp(s + n - e, exts[i]) == 0)
            return 1;
    }
    return 0;
}

static int l_compile(lua_State *L)
{
    static const char *const names[] = {"name",  "flags",       "defines", "include_dirs",
                                        "cache", "instantiate", NULL};
    static const char *const file_names[] = {"path",         "name",  "flags",       "defines",
                                             "include_dirs", "cache", "instantiate", NULL};
    const char *path = NULL, *src;
    char filedir[4096];
    /* 1: source or options, 2: options, 3: the file's text, 4: anchors */
    if (lua_type(L, 1) == LUA_TTABLE) {
        hkl_settop(L, 1);
        src = source_from_file(L, &path, filedir, sizeof filedir); /* 2: path, 3: text */
        lua_pushvalue(L, 1);
        lua_replace(L, 2);
    } else {
        src = luaL_checkstring(L, 1);
        if (looks_like_path(src))
            return luaL_error(L, "hk.compile: '%s' looks like a file name, and a string is the source "
                              "itself: hk.compile{path = \"%s\"} compiles a file", src, src);
        src = check_source(L, 1, NULL);
        hkl_settop(L, 2);
        lua_pushnil(L);
    }
    hkl_check_options(L, 2, path ? file_names : names, "hk.compile");
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    const char *flags[64], *defines[64], *dirs[33], *instantiate[64];
    lua_newtable(L); /* 4: keeps every option string alive */
    if (!lua_isnil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        if (lua_getfield(L, 2, "name") != LUA_TNIL) {
            luaL_checkstring(L, -1);
            o.name = anchor_string(L, 4);
        } else {
            lua_pop(L, 1);
        }
        o.nflags = string_list(L, 2, 4, "flags", flags, 64);
        o.flags = flags;
        o.ndefines = string_list(L, 2, 4, "defines", defines, 64);
        o.defines = defines;
        o.ninclude_dirs = string_list(L, 2, 4, "include_dirs", dirs, 32);
        o.include_dirs = dirs;
        o.ninstantiate = string_list(L, 2, 4, "instantiate", instantiate, 64);
        o.instantiate = instantiate;
        lua_getfield(L, 2, "cache");
        o.no_cache = lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    if (path) {
        o.path = path;
        if (!o.name)
            o.name = path;
        lua_pushstring(L, filedir);
        dirs[o.ninclude_dirs++] = anchor_string(L, 4);
    }
    hk_context *ctx = hkl_ctx(L);
    char what[160];
    snprintf(what, sizeof what, "compiling %s", o.name ? o.name : "module");
    hk_module *m = NULL;
    hkl_progress_begin(what);
    int r = hk_module_compile(ctx, src, &o, &m);
    hkl_progress_end();
    if (r != 0)
        return hkl_compile_failed(L, r);
    push_module(L, m);
    lua_createtable(L, 0, 4); /* how it was made */
    lua_pushvalue(L, path ? 3 : 1);
    lua_setfield(L, -2, "source");
    if (!lua_isnil(L, 2)) {
        lua_pushvalue(L, 2);
        lua_setfield(L, -2, "options");
    }
    if (path) {
        lua_pushstring(L, path);
        lua_setfield(L, -2, "path");
    }
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static int l_load(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    hk_module *m = NULL;
    hkl_check(L, hk_module_load_file(hkl_ctx(L), path, &m));
    push_module(L, m);
    return 1;
}

static int module_gc(lua_State *L)
{
    hkl_module *um = luaL_checkudata(L, 1, HKL_MODULE);
    /* buffers over its variables go first: their memory is the module's */
    if (um->m && lua_getiuservalue(L, 1, 1) == LUA_TTABLE &&
        lua_getfield(L, -1, "globals") == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pop(L, 1);
            if (luaL_getmetafield(L, -1, "__close") != LUA_TNIL) {
                lua_pushvalue(L, -2);
                lua_call(L, 1, 0);
            }
        }
    }
    if (um->m) {
        hk_module_free(um->m);
        um->m = NULL;
    }
    return 0;
}

/* m:free() and <close>: refused while a launch of one of its kernels runs
 * Lua code (a vector argument's __index). */
static int module_close(lua_State *L)
{
    hkl_module *um = luaL_checkudata(L, 1, HKL_MODULE);
    hkl_pin_check_free(L, &um->pin, "module");
    return module_gc(L);
}

static int module_kernels(lua_State *L)
{
    hkl_module *um = check_module(L, 1);
    int n = hk_module_kernel_count(um->m);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, hk_module_kernel_name(um->m, i));
        lua_rawseti(L, -2, i + 1);
    }
    hkl_report(L, "kernels");
    return 1;
}

static void push_kernel(lua_State *L, int module_idx, hk_kernel *k)
{
    hkl_module *um = lua_touserdata(L, module_idx);
    hkl_kernel *uk = lua_newuserdatauv(L, sizeof *uk, 1);
    uk->k = k;
    uk->owner = um;
    lua_pushvalue(L, module_idx);
    lua_setiuservalue(L, -2, 1);
    luaL_setmetatable(L, HKL_KERNEL);
}

void hkl_push_plugin_kernel(lua_State *L, hk_kernel *k)
{
    hkl_kernel *uk = lua_newuserdatauv(L, sizeof *uk, 1);
    uk->k = k;
    uk->owner = NULL;
    luaL_setmetatable(L, HKL_KERNEL);
}

/* Pushes a compile of module 1's source with its options and `extra`
 * (when not NULL) added to their instantiate list: l_compile's arguments
 * as its recipe (user value 1) says. Returns 0 when module 1 has no recipe
 * (it was loaded, not compiled), pushing nothing. */
static int compile_again(lua_State *L, const char *extra)
{
    if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        return 0;
    }
    int recipe = lua_gettop(L);
    lua_pushcfunction(L, l_compile);
    int path = lua_getfield(L, recipe, "path") != LUA_TNIL;
    lua_pop(L, 1);
    if (!path)
        lua_getfield(L, recipe, "source");
    lua_newtable(L); /* the options, copied */
    int opts = lua_gettop(L);
    if (lua_getfield(L, recipe, "options") == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pushvalue(L, -2);
            lua_insert(L, -2);
            lua_settable(L, opts);
        }
    }
    lua_pop(L, 1);
    if (extra) {
        lua_newtable(L);
        int t = lua_getfield(L, opts, "instantiate"), n = 0;
        if (t == LUA_TSTRING) {
            lua_rawseti(L, -2, ++n);
        } else {
            for (int i = 1; t == LUA_TTABLE && lua_rawgeti(L, -1, i) == LUA_TSTRING; i++)
                lua_rawseti(L, -3, ++n);
            lua_pop(L, t == LUA_TTABLE ? 2 : 1);
        }
        lua_pushstring(L, extra);
        lua_rawseti(L, -2, ++n);
        lua_setfield(L, opts, "instantiate");
    }
    lua_call(L, path ? 1 : 2, 1);
    lua_remove(L, recipe);
    return 1;
}

/* module 1's kernel `name`, pushed. A template instantiation the module
 * was not compiled with (`reduce<float, 128>`) is compiled now, as CuPy
 * compiles a name expression: the source again, the name added to its
 * instantiate list; the new module is kept in the recipe's `instances`. */
static void push_module_kernel(lua_State *L, const char *name, const char *sig)
{
    hkl_module *um = check_module(L, 1);
    hk_kernel *k = NULL;
    int r = sig ? hk_module_kernel_sig(um->m, name, sig, &k) : hk_module_kernel(um->m, name, &k);
    if (r == HK_ENOTFOUND && strchr(name, '<') && lua_getiuservalue(L, 1, 1) == LUA_TTABLE) {
        int recipe = lua_gettop(L);
        if (lua_getfield(L, recipe, "instances") != LUA_TTABLE) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -1);
            lua_setfield(L, recipe, "instances");
        }
        if (lua_getfield(L, -1, name) == LUA_TNIL) {
            lua_pop(L, 1);
            compile_again(L, name);
            lua_pushvalue(L, -1);
            lua_setfield(L, -3, name);
        }
        hkl_module *inst = check_module(L, -1);
        hkl_check(L, sig ? hk_module_kernel_sig(inst->m, name, sig, &k)
                         : hk_module_kernel(inst->m, name, &k));
        push_kernel(L, lua_gettop(L), k);
        return;
    }
    hkl_check(L, r);
    push_kernel(L, 1, k);
}

/* m:kernel(name [, signature]) */
static int module_kernel(lua_State *L)
{
    const char *name = luaL_checkstring(L, 2);
    const char *sig = luaL_optstring(L, 3, NULL);
    push_module_kernel(L, name, sig);
    return 1;
}

/* m:global(name [, dtype = "f32"]): a buffer over the module variable (a
 * __device__ or __constant__ variable of the source), as CuPy's get_global.
 * It keeps the module alive; freeing the module frees it first (its memory
 * is the module's). */
static int module_global(lua_State *L)
{
    hkl_module *um = check_module(L, 1);
    const char *name = luaL_checkstring(L, 2);
    hk_dtype dt = hkl_check_dtype(L, 3, "f32");
    hk_buffer *b = NULL;
    hkl_check(L, hk_module_global(um->m, name, dt, &b));
    hkl_push_buffer(L, b, 1);
    int buf = lua_gettop(L);
    /* remembered (weakly) so that m:free() can free it first */
    if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, 1, 1);
    }
    if (lua_getfield(L, -1, "globals") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "globals");
    }
    lua_pushvalue(L, buf);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    hkl_settop(L, buf);
    return 1;
}

/* m:reload(): compiles the module's file again (with its headers, options
 * and instantiations) and makes it the module's code. Kernels taken before
 * keep the code they had (their module is kept); take them again for the
 * new. Returns whether the file's text changed. */
static int module_reload(lua_State *L)
{
    hkl_module *um = check_module(L, 1);
    int path = lua_getiuservalue(L, 1, 1) == LUA_TTABLE &&
               lua_getfield(L, -1, "path") == LUA_TSTRING;
    if (!path)
        return luaL_error(L, "m:reload: module '%s' was not compiled from a file "
                             "(hk.compile{path = ...}); compile the new source instead",
                          hk_module_name(um->m));
    lua_pop(L, 2);
    compile_again(L, NULL);
    int fresh_idx = lua_gettop(L);
    hkl_module *fresh = check_module(L, fresh_idx);
    hk_module *old = um->m;
    um->m = fresh->m;
    fresh->m = old; /* the old code, kept while its kernels may run */
    lua_getiuservalue(L, 1, 1);
    int old_recipe = lua_gettop(L);
    lua_getiuservalue(L, fresh_idx, 1);
    int new_recipe = lua_gettop(L);
    lua_getfield(L, old_recipe, "source");
    lua_getfield(L, new_recipe, "source");
    int changed = !lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (lua_getfield(L, old_recipe, "retired") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
    }
    lua_pushvalue(L, fresh_idx);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    lua_setfield(L, new_recipe, "retired");
    lua_pushvalue(L, new_recipe);
    lua_setiuservalue(L, 1, 1);
    lua_pushboolean(L, changed);
    return 1;
}

static int module_tostring(lua_State *L)
{
    hkl_module *um = luaL_checkudata(L, 1, HKL_MODULE);
    if (!um->m) {
        lua_pushliteral(L, "hk.module (freed)");
        return 1;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "hk.module '%s': ", hk_module_name(um->m));
    luaL_addvalue(&b);
    int n = hk_module_kernel_count(um->m);
    for (int i = 0; i < n; i++) {
        if (i)
            luaL_addstring(&b, ", ");
        luaL_addstring(&b, hk_module_kernel_name(um->m, i));
    }
    luaL_pushresult(&b);
    return 1;
}

/* m.name is the module's name; m.<kernel> is the kernel of that name;
 * otherwise the method. A name that is none of these is an error listing
 * the kernels, not a silent nil. */
static int module_index(lua_State *L)
{
    hkl_module *um = check_module(L, 1);
    const char *key = luaL_checkstring(L, 2);
    lua_getfield(L, lua_upvalueindex(1), key);
    if (!lua_isnil(L, -1))
        return 1;
    lua_pop(L, 1);
    if (!strcmp(key, "name")) {
        lua_pushstring(L, hk_module_name(um->m));
        return 1;
    }
    (void)um;
    push_module_kernel(L, key, NULL);
    return 1;
}

/* ------------------------------------------------------------- kernels */

static hkl_kernel *check_kernel(lua_State *L, int idx)
{
    hkl_kernel *uk = luaL_checkudata(L, idx, HKL_KERNEL);
    if (kernel_gone(uk))
        luaL_error(L, "the kernel's module was freed");
    return uk;
}

/* A grid or block: a number, or {x, y, z} / {x=, y=, z=}. */
hk_dim3 hkl_check_dim3(lua_State *L, int idx, const char *what)
{
    hk_dim3 d = {1, 1, 1};
    uint32_t *v = &d.x;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        lua_Integer n;
        if (!lua_isinteger(L, idx) || (n = lua_tointeger(L, idx)) < 1 || n > 0xffffffffll)
            luaL_error(L, "%s must be a positive integer or {x, y, z}", what);
        d.x = (uint32_t)lua_tointeger(L, idx);
        return d;
    }
    if (!lua_istable(L, idx))
        luaL_error(L, "%s must be a number or a table {x, y, z}, got %s", what, luaL_typename(L, idx));
    static const char *names[] = {"x", "y", "z"};
    /* every key is a position 1-3 or x, y, z: a typo (Y, yy) or a 4th
     * dimension is an error, not a dimension of 1 */
    idx = lua_absindex(L, idx);
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
        int known = 0;
        if (lua_type(L, -2) == LUA_TNUMBER) {
            lua_Integer k = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
            known = k >= 1 && k <= 3;
        } else if (lua_type(L, -2) == LUA_TSTRING) {
            const char *k = lua_tostring(L, -2);
            known = !strcmp(k, "x") || !strcmp(k, "y") || !strcmp(k, "z");
        }
        if (!known) {
            if (lua_type(L, -2) == LUA_TSTRING)
                luaL_error(L, "%s has a field '%s'; its fields are x, y and z (or {x, y, z})", what,
                           lua_tostring(L, -2));
            luaL_error(L, "%s has more than 3 dimensions or a key that is no dimension ({x, y, z})", what);
        }
    }
    for (int i = 0; i < 3; i++) {
        int t = lua_geti(L, idx, i + 1);
        if (t == LUA_TNIL) {
            lua_pop(L, 1);
            t = lua_getfield(L, idx, names[i]);
        }
        if (t != LUA_TNIL) {
            int ok;
            lua_Integer n = lua_tointegerx(L, -1, &ok);
            if (!ok || n < 1 || n > 0xffffffffll)
                luaL_error(L, "%s.%s must be a positive integer", what, names[i]);
            v[i] = (uint32_t)n;
        }
        lua_pop(L, 1);
    }
    return d;
}

/* Raises "kernel argument N 'name' (type): <fmt>" for vector argument argn. */
static int vector_error(lua_State *L, int argn, const hk_param_info *p, const char *fmt, ...)
{
    luaL_where(L, 1);
    if (p->name[0])
        lua_pushfstring(L, "kernel argument %d '%s' (%s): ", argn, p->name, p->type);
    else
        lua_pushfstring(L, "kernel argument %d (%s): ", argn, p->type);
    va_list ap;
    va_start(ap, fmt);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    lua_concat(L, 3);
    return lua_error(L);
}

void hkl_check_vector(lua_State *L, int idx, int argn, const hk_param_info *p, double *out)
{
    static const char *const lane_names[] = {"x", "y", "z", "w"};
    static const char *const lists[] = {"", "x", "x, y", "x, y, z", "x, y, z, w"};
    size_t esize = hk_dtype_size(p->dtype);
    int lanes = esize ? (int)(p->size / esize) : 0;
    if (lanes < 1 || lanes > 4)
        vector_error(L, argn, p, "a vector of %d lanes cannot be passed", lanes);
    int by_position = lua_geti(L, idx, 1) != LUA_TNIL;
    lua_pop(L, 1);
    for (int l = 0; l < lanes; l++) {
        int t = by_position ? lua_geti(L, idx, l + 1) : lua_getfield(L, idx, lane_names[l]);
        if (t == LUA_TNIL) {
            if (by_position)
                vector_error(L, argn, p, "expects %d numbers {%s}, got a table of %d", lanes,
                             lists[lanes], l);
            vector_error(L, argn, p, "lane %s is missing (expects {%s}, by position or by "
                         "name)", lane_names[l], lists[lanes]);
        }
        if (t != LUA_TNUMBER)
            vector_error(L, argn, p, "lane %s is a %s, expects a number", lane_names[l],
                         luaL_typename(L, -1));
        if (lua_isinteger(L, -1)) {
            /* Lanes travel as doubles: an integer beyond 2^53 might not. */
            lua_Integer v = lua_tointeger(L, -1);
            double d = (double)v;
            if (d >= 9223372036854775808.0 || (lua_Integer)d != v)
                vector_error(L, argn, p, "lane %s: %I is not exactly representable as a double",
                             lane_names[l], v);
        }
        out[l] = lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
    if (by_position) {
        int more = lua_geti(L, idx, lanes + 1) != LUA_TNIL;
        lua_pop(L, 1);
        if (more)
            vector_error(L, argn, p, "expects %d numbers {%s}, got a table of %d", lanes,
                         lists[lanes], (int)lua_rawlen(L, idx));
    } else {
        for (int l = lanes; l < 4; l++) {
            int more = lua_getfield(L, idx, lane_names[l]) != LUA_TNIL;
            lua_pop(L, 1);
            if (more)
                vector_error(L, argn, p, "has no lane %s (expects {%s})", lane_names[l],
                             lists[lanes]);
        }
    }
}

/* Converts Lua values [first, first+n) to hk_args. nil is refused: a null
 * pointer must be meant (hk.null). */
void hkl_convert_args(lua_State *L, int first, int n, hk_arg *args, hk_kernel *k,
                      double (*vecs)[4])
{
    /* Only a table (a vector's lanes) runs Lua code while arguments are
     * converted; then every buffer converted is held until the call ends,
     * so that code cannot free memory already packed. */
    int runs_lua = 0;
    for (int i = 0; i < n && !runs_lua; i++)
        runs_lua = lua_type(L, first + i) == LUA_TTABLE;
    hkl_hold *hold = NULL;
    for (int i = 0; i < n; i++) {
        int idx = first + i;
        switch (lua_type(L, idx)) {
        case LUA_TTABLE: {
            if (!k)
                luaL_error(L, "kernel argument %d is a table; only a kernel's vector parameters "
                           "take one", i + 1);
            hk_kernel_info info;
            hk_kernel_get_info(k, &info);
            if (i >= info.param_count) {
                args[i] = hk_arg_null(); /* hk_launch reports the argument count */
                break;
            }
            hk_param_info p;
            hk_kernel_param(k, i, &p);
            if (p.kind != HK_PARAM_VECTOR)
                luaL_error(L, "kernel argument %d is a table, but its parameter %s%s%s(%s) is no "
                           "vector", i + 1, p.name[0] ? "'" : "", p.name, p.name[0] ? "' " : "",
                           p.type);
            hkl_check_vector(L, idx, i + 1, &p, vecs[i]);
            args[i] = hk_arg_vector(vecs[i]);
            break;
        }
        case LUA_TNUMBER:
            args[i] = lua_isinteger(L, idx) ? hk_arg_int(lua_tointeger(L, idx))
                                            : hk_arg_float(lua_tonumber(L, idx));
            break;
        case LUA_TBOOLEAN:
            args[i] = hk_arg_bool(lua_toboolean(L, idx));
            break;
        case LUA_TLIGHTUSERDATA:
            if (lua_touserdata(L, idx) == &null_sentinel) {
                args[i] = hk_arg_null();
                break;
            }
            luaL_error(L, "kernel argument %d is a light userdata; " WHAT_ARGS, i + 1);
            break;
        case LUA_TUSERDATA: {
            /* the buffer metatable is upvalue 1 of the launch functions: a
             * comparison instead of a registry lookup per argument */
            int is_buf = 0;
            if (lua_getmetatable(L, idx)) {
                is_buf = lua_rawequal(L, -1, lua_upvalueindex(1));
                lua_pop(L, 1);
            }
            if (!is_buf) {
                const uint64_t *u = luaL_testudata(L, idx, HKL_U64);
                if (u) { /* hk.u64(v): 64 bits, for an unsigned parameter past 2^63 */
                    args[i] = hk_arg_uint(*u);
                    break;
                }
                luaL_error(L, "kernel argument %d is a %s; " WHAT_ARGS, i + 1,
                           luaL_typename(L, idx));
            }
            /* Held when a table argument's __index may run Lua (see
             * do_launch); a plain launch pays nothing for it. */
            void *ud = lua_touserdata(L, idx);
            if (runs_lua && !hold)
                hold = hkl_hold_new(L, idx, n, "k:launch");
            args[i] = hk_arg_buffer(hold ? hkl_hold_buffer_in(L, hold, ud, idx)
                                         : hkl_buffer_live(L, ud, idx));
            break;
        }
        case LUA_TNIL:
            luaL_error(L, "kernel argument %d is nil (a typo? pass hk.null for a null pointer)", i + 1);
            break;
        default:
            luaL_error(L, "kernel argument %d is a %s; " WHAT_ARGS, i + 1, luaL_typename(L, idx));
        }
    }
}

/* owner: the stack index of the kernel's userdata or launcher's; s: the
 * stream, NULL for the default one. */
static int do_launch(lua_State *L, hkl_kernel *uk, const hk_launch_config *cfg, int first,
                     int owner, hk_stream *s)
{
    hk_kernel *k = uk->k;
    int n = lua_gettop(L) - first + 1;
    if (n > MAX_ARGS)
        return luaL_error(L, "at most %d kernel arguments", MAX_ARGS);
    for (int i = 0; i < n; i++)
        if (lua_type(L, first + i) == LUA_TTABLE) { /* Lua runs: hold the module */
            hkl_hold_add(hkl_hold_new(L, owner, 1, "k:launch"), &uk->owner->pin);
            break;
        }
    hk_arg args[MAX_ARGS];
    double vecs[MAX_ARGS][4];
    hkl_convert_args(L, first, n, args, k, vecs);
    if (hkl_graph_recording) /* the graph keeps the kernel (and its module) alive */
        hkl_graph_note(L, owner);
    hkl_check(L, s ? hk_launch_on(s, k, cfg, args, n) : hk_launch(k, cfg, args, n));
    return 0;
}

/* k:launch(grid, block, ...) */
static int kernel_launch(lua_State *L)
{
    /* upvalue 2 is the kernel metatable: no registry lookup on this path */
    hkl_kernel *uk = NULL;
    if (lua_type(L, 1) == LUA_TUSERDATA && lua_getmetatable(L, 1)) {
        if (lua_rawequal(L, -1, lua_upvalueindex(2)))
            uk = lua_touserdata(L, 1);
        lua_pop(L, 1);
    }
    if (!uk)
        uk = check_kernel(L, 1); /* raises the usual argument error */
    if (kernel_gone(uk))
        return luaL_error(L, "the kernel's module was freed");
    hk_launch_config cfg = {0};
    cfg.grid = hkl_check_dim3(L, 2, "grid");
    cfg.block = hkl_check_dim3(L, 3, "block");
    cfg.shared_bytes = 0;
    return do_launch(L, uk, &cfg, 4, 1, NULL);
}

int hkl_launch_on(lua_State *L, hk_stream *s, int kidx)
{
    /* s:launch(launcher, args...): the launcher's configuration, early
     * start included */
    hkl_launcher *ul = luaL_testudata(L, kidx, HKL_LAUNCHER);
    if (ul) {
        if (kernel_gone(ul->kernel))
            return luaL_error(L, "the kernel's module was freed");
        return do_launch(L, ul->kernel, &ul->cfg, kidx + 1, kidx, s);
    }
    hkl_kernel *uk = check_kernel(L, kidx);
    if (kernel_gone(uk))
        return luaL_error(L, "the kernel's module was freed");
    hk_launch_config cfg = {hkl_check_dim3(L, kidx + 1, "grid"), hkl_check_dim3(L, kidx + 2, "block"), 0, 0, 0};
    return do_launch(L, uk, &cfg, kidx + 3, kidx, s);
}

/* k{grid=, block=, shared=, early=} → a launcher; launcher(...) launches.
 * k({grid=, ...}, args...) launches at once (PyCUDA's and CuPy's order:
 * the configuration, then the arguments), rather than returning a launcher
 * and dropping the arguments. early = true: HK_LAUNCH_EARLY_START (the
 * kernel calls hk_grid_wait() before touching memory the kernel before it
 * may write). */
static int kernel_call(lua_State *L)
{
    static const char *const names[] = {"grid", "block", "shared", "early", NULL};
    check_kernel(L, 1);
    if (lua_type(L, 2) != LUA_TTABLE)
        return luaL_error(L, "a kernel is called with its launch configuration first: k{grid = g, block = b}(args...), "
                             "k({grid = g, block = b}, args...) or k:launch(grid, block, args...); got a %s",
                          luaL_typename(L, 2));
    hkl_check_options(L, 2, names, "launch configuration");
    hk_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    if (lua_getfield(L, 2, "grid") == LUA_TNIL)
        return luaL_error(L, "launch configuration needs grid=");
    cfg.grid = hkl_check_dim3(L, -1, "grid");
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "block") == LUA_TNIL)
        return luaL_error(L, "launch configuration needs block=");
    cfg.block = hkl_check_dim3(L, -1, "block");
    lua_pop(L, 1);
    lua_getfield(L, 2, "shared");
    lua_Integer shared = luaL_optinteger(L, -1, 0);
    if (shared < 0)
        return luaL_error(L, "shared= must be a byte count >= 0");
    cfg.shared_bytes = (size_t)shared;
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "early") != LUA_TNIL && !lua_isboolean(L, -1))
        return luaL_error(L, "early= must be true or false");
    cfg.flags = lua_toboolean(L, -1) ? HK_LAUNCH_EARLY_START : 0;
    lua_pop(L, 1);
    if (lua_gettop(L) > 2) {
        hkl_kernel *uk = lua_touserdata(L, 1);
        if (kernel_gone(uk))
            return luaL_error(L, "the kernel's module was freed");
        return do_launch(L, uk, &cfg, 3, 1, NULL);
    }
    hkl_launcher *ul = lua_newuserdatauv(L, sizeof *ul, 1);
    ul->kernel = lua_touserdata(L, 1);
    ul->cfg = cfg;
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    luaL_setmetatable(L, HKL_LAUNCHER);
    return 1;
}

static int launcher_call(lua_State *L)
{
    hkl_launcher *ul = luaL_checkudata(L, 1, HKL_LAUNCHER);
    if (kernel_gone(ul->kernel))
        return luaL_error(L, "the kernel's module was freed");
    return do_launch(L, ul->kernel, &ul->cfg, 2, 1, NULL);
}

static int launcher_tostring(lua_State *L)
{
    hkl_launcher *ul = luaL_checkudata(L, 1, HKL_LAUNCHER);
    lua_pushfstring(L, "hk.launcher %s grid {%d, %d, %d} block {%d, %d, %d} shared %d%s",
                    !kernel_gone(ul->kernel) ? hk_kernel_name(ul->kernel->k) : "(freed)",
                    (int)ul->cfg.grid.x, (int)ul->cfg.grid.y, (int)ul->cfg.grid.z,
                    (int)ul->cfg.block.x, (int)ul->cfg.block.y, (int)ul->cfg.block.z,
                    (int)ul->cfg.shared_bytes, ul->cfg.flags & HK_LAUNCH_EARLY_START ? " early" : "");
    return 1;
}

static void set_int_or_nil(lua_State *L, const char *field, int64_t v)
{
    if (v < 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, (lua_Integer)v);
    lua_setfield(L, -2, field);
}

static int kernel_info(lua_State *L)
{
    hkl_kernel *uk = check_kernel(L, 1);
    hk_kernel_info info;
    hkl_check(L, hk_kernel_get_info(uk->k, &info));
    lua_createtable(L, 0, 12);
    lua_pushstring(L, info.name);
    lua_setfield(L, -2, "name");
    char sig[1024];
    hk_kernel_signature(uk->k, sig, sizeof sig);
    lua_pushstring(L, sig);
    lua_setfield(L, -2, "signature");
    lua_createtable(L, info.param_count, 0);
    for (int i = 0; i < info.param_count; i++) {
        hk_param_info p;
        hkl_check(L, hk_kernel_param(uk->k, i, &p));
        static const char *const kinds[] = {"scalar", "pointer", "vector"};
        lua_createtable(L, 0, 8);
        lua_pushstring(L, p.name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, p.type);
        lua_setfield(L, -2, "type");
        lua_pushstring(L, (unsigned)p.kind < 3 ? kinds[p.kind] : "?");
        lua_setfield(L, -2, "kind");
        if (p.dtype != HK_DTYPE_COUNT && !p.is_bool) { /* a bool is u8 underneath */
            lua_pushstring(L, hk_dtype_name(p.dtype));
            lua_setfield(L, -2, "dtype");
        }
        if (p.kind == HK_PARAM_VECTOR) {
            lua_pushinteger(L, (lua_Integer)(p.size / hk_dtype_size(p.dtype)));
            lua_setfield(L, -2, "lanes");
        }
        lua_pushinteger(L, p.size);
        lua_setfield(L, -2, "size");
        lua_pushinteger(L, p.align);
        lua_setfield(L, -2, "align");
        lua_pushinteger(L, p.offset);
        lua_setfield(L, -2, "offset");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "params");
    lua_pushinteger(L, info.kernarg_size);
    lua_setfield(L, -2, "kernarg_size");
    lua_pushinteger(L, info.max_threads_per_block);
    lua_setfield(L, -2, "max_threads_per_block");
    set_int_or_nil(L, "registers", info.registers);
    set_int_or_nil(L, "static_shared", info.static_shared);
    set_int_or_nil(L, "local_bytes", info.local_bytes);
    lua_pushstring(L, hk_code_origin_name(info.origin));
    lua_setfield(L, -2, "origin");
    if (uk->owner && uk->owner->m)
        hkl_set_code_target(L, uk->owner->m);
    lua_pushnumber(L, info.compile_ms);
    lua_setfield(L, -2, "compile_ms");
    lua_pushboolean(L, info.uses_barriers);
    lua_setfield(L, -2, "uses_barriers");
    const char *why = NULL, *mode = hk_kernel_exec_mode(uk->k, &why);
    if (mode) {
        lua_pushstring(L, mode);
        lua_setfield(L, -2, "mode");
        if (why && *why) {
            lua_pushstring(L, why);
            lua_setfield(L, -2, "mode_reason");
        }
    }
    hkl_report(L, "kernel_info");
    return 1;
}

static int kernel_disasm(lua_State *L)
{
    hkl_kernel *uk = check_kernel(L, 1);
    char *text = NULL;
    hkl_check(L, hk_kernel_disasm(uk->k, &text));
    lua_pushstring(L, text);
    free(text);
    return 1;
}

static int kernel_tostring(lua_State *L)
{
    hkl_kernel *uk = luaL_checkudata(L, 1, HKL_KERNEL);
    if (kernel_gone(uk)) {
        lua_pushliteral(L, "hk.kernel (module freed)");
        return 1;
    }
    char sig[1024];
    hk_kernel_signature(uk->k, sig, sizeof sig);
    lua_pushfstring(L, "hk.kernel %s%s", hk_kernel_name(uk->k), sig);
    return 1;
}

/* m:save(path): the code object, for hk.load later. */
static int module_save(lua_State *L)
{
    hkl_module *um = check_module(L, 1);
    const char *path = luaL_checkstring(L, 2);
    const void *data;
    size_t size;
    hkl_check(L, hk_module_code(um->m, &data, &size));
    FILE *f = fopen(path, "wb");
    if (!f)
        return luaL_error(L, "cannot write '%s': %s", path, strerror(errno));
    size_t w = fwrite(data, 1, size, f);
    int bad = fclose(f) != 0 || w != size;
    if (bad)
        return luaL_error(L, "writing '%s' failed: %s", path, strerror(errno));
    lua_pushinteger(L, (lua_Integer)size);
    return 1;
}

static const luaL_Reg module_methods[] = {
    {"save", module_save},
    {"kernels", module_kernels},
    {"kernel", module_kernel},
    {"reload", module_reload},
    {"global", module_global},
    {"free", module_close},
    {NULL, NULL},
};

static const luaL_Reg kernel_methods[] = {
    {"launch", kernel_launch},
    {"info", kernel_info},
    {"disasm", kernel_disasm},
    {NULL, NULL},
};

void hkl_module_register(lua_State *L)
{
    luaL_newmetatable(L, HKL_MODULE);
    luaL_newlib(L, module_methods);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "methods"); /* for the REPL's completion */
    lua_pushcclosure(L, module_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, module_kernels); /* the REPL completes m. with them */
    lua_setfield(L, -2, "__complete");
    lua_pushcfunction(L, module_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, module_close);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, module_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    luaL_newmetatable(L, HKL_KERNEL);
    lua_createtable(L, 0, 3);
    luaL_getmetatable(L, HKL_BUFFER);
    lua_pushvalue(L, -3); /* the kernel metatable */
    luaL_setfuncs(L, kernel_methods, 2);
    lua_setfield(L, -2, "__index");
    luaL_getmetatable(L, HKL_BUFFER); /* upvalue 1 of do_launch's callers */
    lua_pushcclosure(L, kernel_call, 1);
    lua_setfield(L, -2, "__call");
    lua_pushcfunction(L, kernel_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    luaL_newmetatable(L, HKL_LAUNCHER);
    luaL_getmetatable(L, HKL_BUFFER);
    lua_pushcclosure(L, launcher_call, 1);
    lua_setfield(L, -2, "__call");
    lua_pushcfunction(L, launcher_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    lua_pushcfunction(L, l_compile);
    lua_setfield(L, -2, "compile");
    lua_pushcfunction(L, l_load);
    lua_setfield(L, -2, "load");
    lua_pushlightuserdata(L, (void *)&null_sentinel);
    lua_setfield(L, -2, "null");
    static const luaL_Reg u64_meta[] = {{"__tostring", u64_tostring}, {"__eq", u64_eq}, {NULL, NULL}};
    luaL_newmetatable(L, HKL_U64);
    luaL_setfuncs(L, u64_meta, 0);
    lua_pop(L, 1);
    lua_pushcfunction(L, l_u64);
    lua_setfield(L, -2, "u64");
}
