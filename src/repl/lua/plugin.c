/* Plugins from Lua: hk.plugins() lists the families and their kernels;
 * hk.ops.FAMILY.KERNEL(...) launches one with the geometry its plugin
 * declared (an explicit-geometry kernel takes grid and block first), and
 * hk.ops.FAMILY.kernels.KERNEL is its kernel object (k:info(), k:disasm(),
 * k{grid=, block=, shared=}(...)). */
#include <string.h>

#include "hkl.h"

#define MAX_ARGS 64

/* Which plugin push_kernel and push_op list the kernels or ops of. */
typedef struct plugin_ref {
    hk_context *ctx;
    int plugin;
} plugin_ref;

static void push_kernel(lua_State *L, int k, void *ud)
{
    static const char *const geoms[] = {"explicit", "1d", "2d", "row_block", "row_warp"};
    const plugin_ref *p = ud;
    hk_plugin_kernel_info ki;
    hkl_check(L, hk_plugin_kernel_get(p->ctx, p->plugin, k, &ki));
    lua_createtable(L, 0, 4);
    hkl_set_str(L, "name", ki.name);
    hkl_set_str(L, "signature", ki.signature);
    hkl_set_str(L, "doc", ki.doc);
    hkl_set_str(L, "geometry", ki.geometry >= 0 && ki.geometry <= 4 ? geoms[ki.geometry] : "?");
}

static void push_op(lua_State *L, int o, void *ud)
{
    const plugin_ref *p = ud;
    hk_plugin_op_info oi;
    hkl_check(L, hk_plugin_op_get(p->ctx, p->plugin, o, &oi));
    lua_createtable(L, 0, 3);
    hkl_set_str(L, "name", oi.name);
    hkl_set_str(L, "usage", oi.usage);
    hkl_set_str(L, "doc", oi.doc);
}

/* One family: {name, version, description, path, error?, kernels, ops}. */
static void push_plugin(lua_State *L, int i, void *ctx)
{
    hk_plugin_info p;
    hkl_check(L, hk_plugin_get(ctx, i, &p));
    plugin_ref ref = {ctx, i};
    lua_createtable(L, 0, 7);
    hkl_set_str(L, "name", p.name);
    hkl_set_str(L, "version", p.version);
    hkl_set_str(L, "description", p.description);
    hkl_set_str(L, "path", p.path);
    if (*p.error)
        hkl_set_str(L, "error", p.error);
    hkl_push_list(L, p.nkernels, push_kernel, &ref);
    lua_setfield(L, -2, "kernels");
    hkl_push_list(L, p.nops, push_op, &ref);
    lua_setfield(L, -2, "ops");
}

static int l_plugins(lua_State *L)
{
    hk_context *ctx = hkl_ctx(L);
    hkl_push_list(L, hk_plugin_count(ctx), push_plugin, ctx);
    hkl_report(L, "plugins");
    return 1;
}

/* Drops the trailing nils of a call (arguments left out, as in Lua's own
 * functions) and returns how many arguments remain. Every form of
 * hk.ops.FAMILY.NAME(...) takes its arguments this way. */
static int drop_trailing_nils(lua_State *L)
{
    int n = lua_gettop(L);
    while (n > 0 && lua_isnil(L, n))
        n--;
    lua_settop(L, n);
    return n;
}

/* An op: upvalues are the buffer metatable (for hkl_convert_args), the
 * family, the kernel and its geometry kind. */
static int op_call(lua_State *L)
{
    const char *family = lua_tostring(L, lua_upvalueindex(2));
    const char *kernel = lua_tostring(L, lua_upvalueindex(3));
    int explicit_geom = lua_toboolean(L, lua_upvalueindex(4));
    hk_launch_config cfg = {0}, *pcfg = NULL;
    int first = 1;
    if (explicit_geom) {
        cfg.grid = hkl_check_dim3(L, 1, "grid");
        cfg.block = hkl_check_dim3(L, 2, "block");
        cfg.shared_bytes = 0;
        pcfg = &cfg;
        first = 3;
    }
    int n = drop_trailing_nils(L) - first + 1;
    if (n < 0)
        n = 0;
    if (n > MAX_ARGS)
        return luaL_error(L, "at most %d kernel arguments", MAX_ARGS);
    hk_arg args[MAX_ARGS];
    double vecs[MAX_ARGS][4];
    hk_kernel *k = NULL; /* looked up only for a table: a vector argument */
    for (int i = 0; i < n && !k; i++)
        if (lua_type(L, first + i) == LUA_TTABLE)
            hkl_check(L, hk_plugin_kernel(hkl_ctx(L), family, kernel, &k));
    hkl_convert_args(L, first, n, args, k, vecs);
    hkl_check(L, hk_plugin_launch(hkl_ctx(L), family, kernel, pcfg, args, n));
    return 0;
}

/* How one OP_<types> kernel takes a dtype-picking call: its writable
 * pointers take the first buffers (the outputs, in order), its const
 * pointers the other buffers (the inputs, in order), its size_t parameter
 * the first output's length, and its other scalars the remaining values in
 * order. */
typedef struct pick {
    hk_buffer *bufs[MAX_ARGS];
    int nbufs, scal[MAX_ARGS], nscal;
    int nout, count_param;
} pick;

/* Does kernel k take the call's buffers and values? Sets p->nout and
 * p->count_param. */
static int pick_fits(hk_kernel *k, pick *p)
{
    hk_kernel_info info;
    hk_kernel_get_info(k, &info);
    int nconst = 0, nout = 0, nother = 0;
    p->count_param = -1;
    for (int a = 0; a < info.param_count; a++) { /* the last size_t is the count */
        hk_param_info pi;
        hk_kernel_param(k, a, &pi);
        if (pi.kind == HK_PARAM_SCALAR && !strcmp(pi.type, "size_t"))
            p->count_param = a;
    }
    for (int a = 0; a < info.param_count; a++) {
        hk_param_info pi;
        hk_kernel_param(k, a, &pi);
        if (a == p->count_param)
            continue;
        if (pi.kind == HK_PARAM_POINTER && pi.is_const)
            nconst++;
        else if (pi.kind == HK_PARAM_POINTER)
            nout++;
        else
            nother++;
    }
    if (nout < 1 || nconst + nout != p->nbufs || nother != p->nscal || p->count_param < 0)
        return 0;
    int ci = nout, oi = 0;
    for (int a = 0; a < info.param_count; a++) {
        hk_param_info pi;
        hk_kernel_param(k, a, &pi);
        if (pi.kind == HK_PARAM_POINTER &&
            pi.dtype != hk_buffer_dtype(p->bufs[pi.is_const ? ci++ : oi++]))
            return 0;
    }
    p->nout = nout;
    return 1;
}

/* Launches k as p says; its outputs stay on the stack as the results. */
static int pick_launch(lua_State *L, const char *family, const char *op, hk_kernel *k, pick *p)
{
    hk_kernel_info info;
    hk_kernel_get_info(k, &info);
    hk_arg args[MAX_ARGS];
    double vecs[MAX_ARGS][4];
    int ci = p->nout, oi = 0, si = 0;
    size_t n = hk_buffer_length(p->bufs[0]);
    for (int a = 0; a < info.param_count; a++) {
        hk_param_info pi;
        hk_kernel_param(k, a, &pi);
        if (pi.kind == HK_PARAM_POINTER) {
            args[a] = hk_arg_buffer(p->bufs[pi.is_const ? ci++ : oi++]);
        } else if (a == p->count_param) {
            args[a] = hk_arg_uint(n);
        } else if (pi.kind == HK_PARAM_VECTOR) {
            int idx = p->scal[si++];
            luaL_checktype(L, idx, LUA_TTABLE);
            hkl_check_vector(L, idx, a + 1, &pi, vecs[a]);
            args[a] = hk_arg_vector(vecs[a]);
        } else {
            int idx = p->scal[si++];
            if (lua_isinteger(L, idx))
                args[a] = hk_arg_int(lua_tointeger(L, idx));
            else if (lua_type(L, idx) == LUA_TBOOLEAN)
                args[a] = hk_arg_bool(lua_toboolean(L, idx));
            else
                args[a] = hk_arg_float(luaL_checknumber(L, idx));
        }
    }
    /* One length for all: a longer input would be read only in part, which
     * is nearly always a mistaken shape, not an intent (a view says it). */
    for (int b = 1; b < p->nbufs; b++)
        if (hk_buffer_length(p->bufs[b]) != n)
            return luaL_error(L, "%s.%s: %s %d has %I elements, the first output %I: this form takes "
                                 "buffers of one length (for part of a buffer pass a view, "
                                 "b:view(dtype, offset, count))",
                              family, op, b < p->nout ? "output" : "input",
                              b < p->nout ? b + 1 : b - p->nout + 1,
                              (lua_Integer)hk_buffer_length(p->bufs[b]), (lua_Integer)n);
    hkl_check(L, hk_plugin_launch(hkl_ctx(L), family, info.name, NULL, args, info.param_count));
    lua_settop(L, p->nout); /* the outputs come first: returned, for chaining */
    return p->nout;
}

/* Whether kernel `name` is OP_<types>: after "OP_", one or more dtype names
 * joined by '_' (add_f32, cast_f32_bf16), so that gelu picks gelu_f32 and
 * never gelu_erf_f32, which is another op. */
static int typed_form_of(const char *name, const char *op, size_t oplen)
{
    if (strncmp(name, op, oplen) || name[oplen] != '_')
        return 0;
    for (const char *t = name + oplen + 1;;) {
        const char *e = strchr(t, '_');
        size_t len = e ? (size_t)(e - t) : strlen(t);
        char word[16];
        hk_dtype dt;
        if (len == 0 || len >= sizeof word)
            return 0;
        memcpy(word, t, len);
        word[len] = '\0';
        if (hk_dtype_parse(word, &dt) != 0)
            return 0;
        if (!e)
            return 1;
        t = e + 1;
    }
}

/* hk.ops.FAMILY.OP(out..., in..., scalars...): when a family has no kernel
 * named OP but kernels OP_<types> (add_f32, cast_f32_bf16, ...), the call
 * picks the contiguous 1-D one that takes these buffers' dtypes (pick
 * above). */
static int dispatch_call(lua_State *L)
{
    const char *family = lua_tostring(L, lua_upvalueindex(2));
    const char *op = lua_tostring(L, lua_upvalueindex(3));
    hk_context *ctx = hkl_ctx(L);
    int top = drop_trailing_nils(L);
    pick p = {.nbufs = 0};
    hkl_check_buffer(L, 1);
    for (int i = 1; i <= top && p.nbufs < MAX_ARGS && p.nscal < MAX_ARGS; i++) {
        if (hkl_test_buffer(L, i))
            p.bufs[p.nbufs++] = hkl_check_buffer(L, i);
        else
            p.scal[p.nscal++] = i;
    }
    int fi = hk_plugin_find(ctx, family);
    if (fi < 0)
        return hkl_error(L, fi, NULL);
    hk_plugin_info info;
    hkl_check(L, hk_plugin_get(ctx, fi, &info));
    size_t oplen = strlen(op);
    luaL_Buffer tried;
    luaL_buffinit(L, &tried);
    for (int k = 0; k < info.nkernels; k++) {
        hk_plugin_kernel_info ki;
        hkl_check(L, hk_plugin_kernel_get(ctx, fi, k, &ki));
        if (!typed_form_of(ki.name, op, oplen) || ki.geometry != 1)
            continue;
        hk_kernel *kern;
        hkl_check(L, hk_plugin_kernel(ctx, family, ki.name, &kern));
        if (pick_fits(kern, &p))
            return pick_launch(L, family, op, kern, &p);
        luaL_addstring(&tried, luaL_bufflen(&tried) ? ", " : "");
        luaL_addstring(&tried, ki.name);
    }
    luaL_pushresult(&tried); /* the names of the kernels that did not fit; stays below */
    const char *have = lua_tostring(L, -1);
    luaL_where(L, 1); /* the script's line, as luaL_error gives */
    lua_pushfstring(L, "%s.%s: no kernel writes %s", family, op, hk_dtype_name(hk_buffer_dtype(p.bufs[0])));
    for (int b = 1; b < p.nbufs; b++)
        lua_pushfstring(L, "%s%s", b > 1 ? ", " : " from ", hk_dtype_name(hk_buffer_dtype(p.bufs[b])));
    lua_pushfstring(L, " with %d more value(s); it has: %s", p.nscal, have);
    lua_concat(L, p.nbufs + 2);
    return lua_error(L);
}

/* A host-side op of the family (upvalues: buffer metatable, family, op).
 * An op takes numbers, booleans and buffers; trailing nils are arguments
 * left out, as in Lua's own functions, and a nil before a value is refused
 * by position. A table of integers (a shape, strides, dims) arrives as its
 * length followed by its elements, read raw, so no Lua code runs while
 * arguments are converted. */
static int host_op_call(lua_State *L)
{
    int n = drop_trailing_nils(L), flat = 0, tables = 0;
    for (int i = 1; i <= n; i++)
        if (lua_isnil(L, i))
            return luaL_error(L, "%s.%s: argument %d is nil; leave an optional argument out "
                                 "instead of passing nil before others",
                              lua_tostring(L, lua_upvalueindex(2)), lua_tostring(L, lua_upvalueindex(3)),
                              i);
    for (int i = 1; i <= n && !tables; i++)
        tables = lua_type(L, i) == LUA_TTABLE;
    int first = 1; /* without tables (the common call) the arguments convert in place */
    if (tables)
        luaL_checkstack(L, MAX_ARGS + 2, "op arguments");
    for (int i = 1; i <= n && tables; i++) {
        if (lua_type(L, i) != LUA_TTABLE) {
            lua_pushvalue(L, i);
            flat++;
            continue;
        }
        lua_Integer len = (lua_Integer)lua_rawlen(L, i);
        if (flat + 1 + len > MAX_ARGS)
            return luaL_error(L, "at most %d arguments (tables count their length and elements)",
                              MAX_ARGS);
        lua_pushinteger(L, len);
        for (lua_Integer e = 1; e <= len; e++) {
            lua_rawgeti(L, i, e);
            int isint;
            lua_Integer v = lua_tointegerx(L, -1, &isint); /* 4.0 (from a /) is 4 */
            if (lua_type(L, -1) != LUA_TNUMBER || !isint)
                return luaL_error(L, "argument %d: element %d of the table is %s, not an integer", i,
                                  (int)e, lua_type(L, -1) == LUA_TNUMBER ? "a fraction" : luaL_typename(L, -1));
            lua_pop(L, 1);
            lua_pushinteger(L, v);
        }
        flat += 1 + (int)len;
    }
    if (tables) {
        n = flat;
        first = lua_gettop(L) - n + 1;
    }
    if (n > MAX_ARGS)
        return luaL_error(L, "at most %d arguments", MAX_ARGS);
    /* A float with an integer value (cols = #x / rows is 7.0 in Lua 5.4)
     * reaches the op as that integer, as a kernel launch takes it; an op
     * reading a number takes integers too. */
    for (int i = first; i < first + n; i++) {
        lua_Integer v;
        if (lua_type(L, i) == LUA_TNUMBER && !lua_isinteger(L, i) && lua_numbertointeger(lua_tonumber(L, i), &v) &&
            (lua_Number)v == lua_tonumber(L, i)) {
            lua_pushinteger(L, v);
            lua_replace(L, i);
        }
    }
    hk_arg args[MAX_ARGS];
    hkl_convert_args(L, first, n, args, NULL, NULL);
    hkl_check(L, hk_plugin_call_op(hkl_ctx(L), lua_tostring(L, lua_upvalueindex(2)),
                                   lua_tostring(L, lua_upvalueindex(3)), args, n));
    return 0;
}

/* hk.ops.FAMILY.kernels.NAME: the kernel object (as hk.compile's modules
 * give), compiled on first access and kept in the kernels table (upvalue 1
 * is the family). */
static int kernels_index(lua_State *L)
{
    const char *name = luaL_checkstring(L, 2);
    hk_kernel *k;
    hkl_check(L, hk_plugin_kernel(hkl_ctx(L), lua_tostring(L, lua_upvalueindex(1)), name, &k));
    hkl_push_plugin_kernel(L, k);
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, name);
    return 1;
}

/* hk.ops.FAMILY.kernels, kept in the family table. */
static int push_kernels_table(lua_State *L, const char *family)
{
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushstring(L, family);
    lua_pushcclosure(L, kernels_index, 1);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, "kernels");
    return 1;
}

/* hk.ops.FAMILY.KERNEL: made on first access and kept in the family table. */
static int family_index(lua_State *L)
{
    const char *kernel = luaL_checkstring(L, 2);
    lua_getfield(L, 1, "__family");
    const char *family = lua_tostring(L, -1);
    if (!strcmp(kernel, "kernels"))
        return push_kernels_table(L, family);
    hk_context *ctx = hkl_ctx(L);
    int fi = hk_plugin_find(ctx, family);
    if (fi < 0)
        return hkl_error(L, fi, NULL);
    hk_plugin_info p;
    hkl_check(L, hk_plugin_get(ctx, fi, &p));
    for (int o = 0; o < p.nops; o++) { /* a host-side op of that name */
        hk_plugin_op_info oi;
        if (hk_plugin_op_get(ctx, fi, o, &oi) == 0 && !strcmp(oi.name, kernel)) {
            luaL_getmetatable(L, HKL_BUFFER);
            lua_pushstring(L, family);
            lua_pushvalue(L, 2);
            lua_pushcclosure(L, host_op_call, 3);
            lua_pushvalue(L, -1);
            lua_setfield(L, 1, kernel);
            return 1;
        }
    }
    int geom = -1;
    for (int k = 0; k < p.nkernels; k++) {
        hk_plugin_kernel_info ki;
        hkl_check(L, hk_plugin_kernel_get(ctx, fi, k, &ki));
        if (!strcmp(ki.name, kernel))
            geom = ki.geometry;
    }
    if (geom < 0) {
        /* OP without a type suffix: a dispatcher over OP_<types>, if any */
        size_t len = strlen(kernel);
        for (int k = 0; k < p.nkernels; k++) {
            hk_plugin_kernel_info ki;
            hkl_check(L, hk_plugin_kernel_get(ctx, fi, k, &ki));
            if (typed_form_of(ki.name, kernel, len)) {
                luaL_getmetatable(L, HKL_BUFFER);
                lua_pushstring(L, family);
                lua_pushvalue(L, 2);
                lua_pushcclosure(L, dispatch_call, 3);
                lua_pushvalue(L, -1);
                lua_setfield(L, 1, kernel);
                return 1;
            }
        }
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

/* __complete of hk.ops: the families' names, loaded or not. */
static int ops_complete(lua_State *L)
{
    hk_context *ctx = hkl_ctx(L);
    int n = hk_plugin_count(ctx);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        hk_plugin_info p;
        if (hk_plugin_get(ctx, i, &p) == 0) {
            lua_pushstring(L, p.name);
            lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
        }
    }
    return 1;
}

/* __complete of hk.ops.FAMILY: its kernels, its ops and the OP names that
 * pick a kernel by dtype (add for add_f32, ...), before any is used. */
static int family_complete(lua_State *L)
{
    hk_context *ctx = hkl_ctx(L);
    lua_getfield(L, 1, "__family");
    int fi = hk_plugin_find(ctx, luaL_checkstring(L, -1));
    hk_plugin_info p;
    lua_newtable(L);
    if (fi < 0 || hk_plugin_get(ctx, fi, &p) != 0)
        return 1;
    for (int k = 0; k < p.nkernels; k++) {
        hk_plugin_kernel_info ki;
        if (hk_plugin_kernel_get(ctx, fi, k, &ki) != 0)
            continue;
        lua_pushstring(L, ki.name);
        lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
        const char *us = strchr(ki.name, '_');
        if (us != NULL) {
            lua_pushlstring(L, ki.name, (size_t)(us - ki.name));
            lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
        }
    }
    for (int o = 0; o < p.nops; o++) {
        hk_plugin_op_info oi;
        if (hk_plugin_op_get(ctx, fi, o, &oi) == 0) {
            lua_pushstring(L, oi.name);
            lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
        }
    }
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
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, family_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, family_complete);
    lua_setfield(L, -2, "__complete");
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
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, ops_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, ops_complete); /* the REPL completes hk.ops. with them */
    lua_setfield(L, -2, "__complete");
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, "ops");
}
