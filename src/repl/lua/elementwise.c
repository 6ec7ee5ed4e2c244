/* Arithmetic on buffers: b1 + b2, b - 1, 2 * b, b1 / b2 make a new buffer;
 * b:add(x), b:sub(x), b:mul(x), b:div(x) work in place and return b. The
 * kernels are the binary family's (hk.ops.binary.add ...), so a user can
 * compare two results without writing one. A number stands for a buffer
 * filled with it. */
#include <string.h>

#include "hkl.h"

/* Pushes the operand at idx as a buffer like `like`: a buffer as it is, a
 * number as a new buffer filled with it. */
static hk_buffer *operand(lua_State *L, int idx, hk_buffer *like, const char *what)
{
    if (hkl_test_buffer(L, idx) != NULL) {
        lua_pushvalue(L, idx);
        return hkl_check_buffer(L, idx);
    }
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s: expects buffers or numbers, got %s", what, luaL_typename(L, idx));
    hk_dtype t = hk_buffer_dtype(like);
    unsigned char value[16];
    int rc = lua_isinteger(L, idx) ? hk_dtype_store_i64(t, value, lua_tointeger(L, idx))
                                   : hk_dtype_store_f64(t, value, lua_tonumber(L, idx));
    if (rc != 0)
        luaL_error(L, "%s: %s does not fit %s", what, lua_tostring(L, idx), hk_dtype_name(t));
    hk_buffer *b = NULL;
    hk_mem_mode mode = hk_buffer_mode(like) == HK_MEM_MMAP ? HK_MEM_DEVICE : hk_buffer_mode(like);
    hkl_check(L, hk_buffer_alloc(hkl_ctx(L), hk_buffer_length(like), t, mode, &b));
    hkl_push_buffer(L, b, 0);
    hkl_check(L, hk_buffer_fill(b, value));
    return b;
}

/* out = x OP y through hk.ops.binary.OP; in_place: out is argument 1. */
static int arith(lua_State *L, const char *op, int in_place)
{
    char what[32];
    snprintf(what, sizeof what, in_place ? "b:%s" : "buffer %s", op);
    lua_settop(L, 2);
    int first = hkl_test_buffer(L, 1) != NULL ? 1 : 2;
    hk_buffer *like = hkl_check_buffer(L, in_place ? 1 : first);
    hk_buffer *x = operand(L, 1, like, what); /* 3 */
    hk_buffer *y = operand(L, 2, like, what); /* 4 */
    if (hk_buffer_length(x) != hk_buffer_length(y))
        return luaL_error(L, "%s: the buffers' lengths differ (%d and %d)", what,
                          (int)hk_buffer_length(x), (int)hk_buffer_length(y));
    if (hk_buffer_dtype(x) != hk_buffer_dtype(y))
        return luaL_error(L, "%s: the buffers' dtypes differ (%s and %s): hk.ops.cast converts one", what,
                          hk_dtype_name(hk_buffer_dtype(x)), hk_dtype_name(hk_buffer_dtype(y)));
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "hk");
    lua_getfield(L, -1, "ops");
    lua_getfield(L, -1, "binary"); /* an error saying why if the family is missing */
    lua_getfield(L, -1, op);
    if (in_place) {
        lua_pushvalue(L, 1);
    } else {
        hk_buffer *out = NULL;
        hk_mem_mode mode = hk_buffer_mode(like) == HK_MEM_MMAP ? HK_MEM_DEVICE : hk_buffer_mode(like);
        hkl_check(L, hk_buffer_alloc(hkl_ctx(L), hk_buffer_length(like), hk_buffer_dtype(like), mode, &out));
        hkl_push_buffer(L, out, 0);
    }
    lua_pushvalue(L, -1);
    lua_insert(L, -3); /* out stays below the call */
    lua_pushvalue(L, 3);
    lua_pushvalue(L, 4);
    /* the op's errors (no kernel for the dtype, a fault) are raised where
     * the script wrote the operator: its line first, as luaL_error gives */
    if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
        if (lua_type(L, -1) == LUA_TSTRING) {
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
        }
        return lua_error(L);
    }
    return 1;
}

static int l_add(lua_State *L) { return arith(L, "add", 0); }
static int l_sub(lua_State *L) { return arith(L, "sub", 0); }
static int l_mul(lua_State *L) { return arith(L, "mul", 0); }
static int l_div(lua_State *L) { return arith(L, "div", 0); }
static int m_add(lua_State *L) { return arith(L, "add", 1); }
static int m_sub(lua_State *L) { return arith(L, "sub", 1); }
static int m_mul(lua_State *L) { return arith(L, "mul", 1); }
static int m_div(lua_State *L) { return arith(L, "div", 1); }

void hkl_elementwise_register(lua_State *L)
{
    static const luaL_Reg metamethods[] = {
        {"__add", l_add}, {"__sub", l_sub}, {"__mul", l_mul}, {"__div", l_div}, {NULL, NULL},
    };
    static const luaL_Reg methods[] = {
        {"add", m_add}, {"sub", m_sub}, {"mul", m_mul}, {"div", m_div}, {NULL, NULL},
    };
    luaL_getmetatable(L, HKL_BUFFER);
    luaL_setfuncs(L, metamethods, 0);
    lua_getfield(L, -1, "methods");
    luaL_setfuncs(L, methods, 0);
    lua_pop(L, 2);
}
