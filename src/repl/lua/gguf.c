/* hk.gguf(path [, opts]): a GGUF model file (hk_gguf_* in the core) as a
 * table: path, version, alignment, metadata (key -> Lua value), tensors
 * (a list of records, also indexed by name). A record's `buffer` is made on
 * first access, in opts.mode (default "mmap": the file's pages, zero copy
 * where the device reads host memory): listing a file reads no tensor data
 * and registers nothing with the device.
 *
 * The hk_gguf lives in a userdata that the table, every record's metatable
 * and every tensor buffer reference: it owns the mappings the buffers view,
 * so it is collected after the last of them. */
#include <string.h>

#include "hkl.h"

#define HKL_GGUF "hk.gguf"

typedef struct lgguf {
    hk_gguf *g;
} lgguf;

static int gguf_gc(lua_State *L)
{
    lgguf *u = luaL_checkudata(L, 1, HKL_GGUF);
    hk_gguf_close(u->g);
    u->g = NULL;
    return 0;
}

/* One scalar of type t at p, little-endian (hipkit runs on little-endian
 * machines only). A u64 is a Lua integer of the same 64 bits, as u64
 * buffer elements are: above INT64_MAX it reads negative, exactly (a
 * float would round 2^63 + 1 to 2^63). */
static void push_scalar(lua_State *L, hk_gguf_type t, const unsigned char *p)
{
    union {
        uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32;
        float f32; uint64_t u64; int64_t i64; double f64;
    } v;
    memcpy(&v, p, t == HK_GGUF_U64 || t == HK_GGUF_I64 || t == HK_GGUF_F64 ? 8
                  : t == HK_GGUF_U32 || t == HK_GGUF_I32 || t == HK_GGUF_F32 ? 4
                  : t == HK_GGUF_U16 || t == HK_GGUF_I16 ? 2 : 1);
    switch (t) {
    case HK_GGUF_U8: lua_pushinteger(L, v.u8); break;
    case HK_GGUF_I8: lua_pushinteger(L, v.i8); break;
    case HK_GGUF_U16: lua_pushinteger(L, v.u16); break;
    case HK_GGUF_I16: lua_pushinteger(L, v.i16); break;
    case HK_GGUF_U32: lua_pushinteger(L, v.u32); break;
    case HK_GGUF_I32: lua_pushinteger(L, v.i32); break;
    case HK_GGUF_F32: lua_pushnumber(L, v.f32); break;
    case HK_GGUF_BOOL: lua_pushboolean(L, v.u8 != 0); break;
    case HK_GGUF_U64: lua_pushinteger(L, (lua_Integer)v.u64); break;
    case HK_GGUF_I64: lua_pushinteger(L, v.i64); break;
    default: lua_pushnumber(L, v.f64); break;
    }
}

static void push_value(lua_State *L, const hk_gguf *g, size_t i)
{
    static const unsigned char sizes[HK_GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    hk_gguf_kv kv;
    hk_gguf_kv_get(g, i, &kv);
    const char *s;
    uint64_t len;
    if (kv.type == HK_GGUF_STRING) {
        hk_gguf_kv_string(g, i, 0, &s, &len);
        lua_pushlstring(L, s, (size_t)len);
    } else if (kv.type != HK_GGUF_ARRAY) {
        push_scalar(L, kv.type, kv.data);
    } else {
        luaL_checkstack(L, 4, "gguf array");
        lua_createtable(L, kv.count < (1u << 24) ? (int)kv.count : 0, 0);
        for (uint64_t j = 0; j < kv.count; j++) {
            if (kv.elem_type == HK_GGUF_STRING) {
                hk_gguf_kv_string(g, i, j, &s, &len);
                lua_pushlstring(L, s, (size_t)len);
            } else {
                push_scalar(L, kv.elem_type, (const unsigned char *)kv.data + j * sizes[kv.elem_type]);
            }
            lua_rawseti(L, -2, (lua_Integer)j + 1);
        }
    }
}

/* record.buffer, made on first access and kept in the record. Upvalues:
 * the lgguf userdata and the memory mode's name. */
static int record_index(lua_State *L)
{
    if (lua_type(L, 2) != LUA_TSTRING || strcmp(lua_tostring(L, 2), "buffer") != 0)
        return 0;
    lgguf *u = lua_touserdata(L, lua_upvalueindex(1));
    hk_mem_mode mode;
    hk_mem_mode_parse(lua_tostring(L, lua_upvalueindex(2)), &mode);
    lua_getfield(L, 1, "index");
    lua_Integer idx = lua_tointeger(L, -1) - 1;
    lua_pop(L, 1);
    if (!u->g || idx < 0 || (size_t)idx >= hk_gguf_tensor_count(u->g))
        return luaL_error(L, "gguf tensor record has no valid index");
    hk_buffer *b = NULL;
    hkl_check(L, hk_gguf_tensor_buffer(u->g, (size_t)idx, mode, &b));
    hkl_push_buffer(L, b, lua_upvalueindex(1)); /* the buffer keeps the file's userdata */
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, "buffer");
    return 1;
}

static void push_tensor(lua_State *L, const hk_gguf *g, size_t i, int meta)
{
    hk_gguf_tensor t;
    hk_gguf_tensor_get(g, i, &t);
    lua_createtable(L, 0, 10);
    hkl_set_str(L, "name", t.name);
    hkl_set_int(L, "index", (lua_Integer)i + 1);
    hkl_set_str(L, "type", t.type_name);
    hkl_set_str(L, "dtype", hk_dtype_name(t.dtype));
    lua_createtable(L, t.ndim, 0);
    for (int d = 0; d < t.ndim; d++) {
        lua_pushinteger(L, (lua_Integer)t.shape[d]);
        lua_rawseti(L, -2, d + 1);
    }
    lua_setfield(L, -2, "shape");
    hkl_set_int(L, "elements", (lua_Integer)t.elements);
    hkl_set_int(L, "offset", (lua_Integer)t.offset);
    hkl_set_int(L, "bytes", (lua_Integer)t.bytes);
    lua_pushvalue(L, meta);
    lua_setmetatable(L, -2);
}

static int gguf_tostring(lua_State *L)
{
    lua_getfield(L, 1, "tensors");
    lua_Integer nt = luaL_len(L, -1);
    lua_getfield(L, 1, "path");
    lua_getfield(L, 1, "version");
    lua_pushfstring(L, "hk.gguf '%s' (v%d, %d tensors)", lua_tostring(L, -2),
                    (int)lua_tointeger(L, -1), (int)nt);
    return 1;
}

static int l_gguf(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    static const char *const keys[] = {"mode", NULL};
    hkl_check_options(L, 2, keys, "hk.gguf");
    const char *mode_name = "mmap";
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "mode");
        hk_mem_mode m;
        if (!lua_isnil(L, -1) && (!lua_isstring(L, -1) || hk_mem_mode_parse(lua_tostring(L, -1), &m) != 0))
            return luaL_argerror(L, 2, lua_pushfstring(L, "option 'mode': unknown memory mode '%s' (device, managed, "
                                                          "host, mmap)", luaL_tolstring(L, -1, NULL)));
        if (!lua_isnil(L, -1))
            mode_name = hk_mem_mode_name(m);
    }
    lua_settop(L, 1);
    lgguf *u = lua_newuserdatauv(L, sizeof *u, 0); /* 2 */
    u->g = NULL;
    luaL_setmetatable(L, HKL_GGUF);
    hkl_check(L, hk_gguf_open(hkl_ctx(L), path, &u->g));
    hk_gguf *g = u->g;

    lua_createtable(L, 0, 2); /* 3: the records' metatable */
    lua_pushvalue(L, 2);
    lua_pushstring(L, mode_name);
    lua_pushcclosure(L, record_index, 2);
    lua_setfield(L, -2, "__index");

    lua_createtable(L, 0, 6); /* 4: the result */
    hkl_set_str(L, "path", path);
    hkl_set_int(L, "version", hk_gguf_version(g));
    hkl_set_int(L, "alignment", (lua_Integer)hk_gguf_alignment(g));
    hkl_set_int(L, "data_offset", (lua_Integer)hk_gguf_data_offset(g));
    hkl_set_str(L, "mode", mode_name);
    lua_pushvalue(L, 2);
    lua_setfield(L, -2, "handle");
    size_t nkv = hk_gguf_kv_count(g), nt = hk_gguf_tensor_count(g);
    lua_createtable(L, 0, (int)(nkv < 65536 ? nkv : 0));
    for (size_t i = 0; i < nkv; i++) {
        hk_gguf_kv kv;
        hk_gguf_kv_get(g, i, &kv);
        push_value(L, g, i);
        lua_setfield(L, -2, kv.key);
    }
    lua_setfield(L, -2, "metadata");
    lua_createtable(L, (int)(nt < 65536 ? nt : 0), (int)(nt < 65536 ? nt : 0));
    for (size_t i = 0; i < nt; i++) {
        push_tensor(L, g, i, 3);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, (lua_Integer)i + 1);
        lua_getfield(L, -1, "name");
        lua_insert(L, -2);
        lua_rawset(L, -3); /* tensors[name] = record */
    }
    lua_setfield(L, -2, "tensors");
    luaL_setmetatable(L, HKL_GGUF ".file");
    return 1;
}

void hkl_gguf_register(lua_State *L)
{
    luaL_newmetatable(L, HKL_GGUF);
    lua_pushcfunction(L, gguf_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, HKL_GGUF ".file");
    lua_pushcfunction(L, gguf_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_gguf);
    lua_setfield(L, -2, "gguf");
}
