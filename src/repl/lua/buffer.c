/* hk.buffer: buffers as Lua userdata, with element access (`b[i]`, 1-based),
 * bulk methods and the hk.alloc / hk.from / hk.mmap constructors.
 *
 * The host may not see a buffer's memory (hk_buffer_host_ptr is NULL for
 * device memory on a GPU), so every access goes through a "span": the host
 * pointer when there is one, else 1 MiB chunks downloaded or uploaded through
 * a scratch userdata (collected by Lua, so a Lua error mid-way leaks nothing).
 *
 * Numbers: floats read as Lua floats (f16/bf16 widened); integers as Lua
 * integers, u64 values above 2^63-1 wrapping to negative ones (two's
 * complement, as math.ult sees them). Writes to integer dtypes must be
 * integral and in range; u64 takes any Lua integer as its 64 bits (so a value
 * read writes back, and 0xFFFFFFFFFFFFFFFF, which Lua reads as -1, is
 * 2^64-1) and integral floats from 0 to below 2^64. Writes to float dtypes
 * round to nearest (overflow gives infinity). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "buffer.h"
#include "hkl.h"

#define TOTABLE_MAX 10000000

/* The userdata. pub comes first so that hkl_test_buffer's callers see the
 * struct of hkl.h. parent points at the userdata this one views, which the
 * user value keeps alive (userdata never move in Lua 5.4). */
typedef struct lbuf {
    hkl_buffer pub;
    struct lbuf *parent;
    hkl_pin pin; /* held by a running call: free() is refused */
} lbuf;

/* ------------------------------------------------------------ dtypes */

int is_float(hk_dtype t) { return t <= HK_F64; }
static int is_signed(hk_dtype t) { return t >= HK_I8 && t <= HK_I64; }

double hkl_load_f64(hk_dtype t, const void *p)
{
    return hk_dtype_load_f64(t, p);
}

/* Converts n elements to double; the switch sits outside the loops. */
void to_f64(hk_dtype t, const void *src, double *dst, size_t n)
{
    const unsigned char *s = src;
    size_t es = hk_dtype_size(t);
#define CONV_(type, expr)                                                   \
    for (size_t k = 0; k < n; k++) {                                        \
        type v;                                                             \
        memcpy(&v, s + k * es, sizeof v);                                   \
        dst[k] = (expr);                                                    \
    }                                                                       \
    break;
    switch (t) {
    case HK_F16: CONV_(uint16_t, hk_f16_to_f32(v))
    case HK_BF16: CONV_(uint16_t, hk_bf16_to_f32(v))
    case HK_F32: CONV_(float, v)
    case HK_F64: CONV_(double, v)
    case HK_I8: CONV_(int8_t, v)
    case HK_I16: CONV_(int16_t, v)
    case HK_I32: CONV_(int32_t, v)
    case HK_I64: CONV_(int64_t, (double)v)
    case HK_U8: CONV_(uint8_t, v)
    case HK_U16: CONV_(uint16_t, v)
    case HK_U32: CONV_(uint32_t, v)
    case HK_U64: CONV_(uint64_t, (double)v)
    default: break;
    }
#undef CONV_
}

/* Writes to float dtypes saturate, as C's conversions do: a finite value
 * beyond the dtype's range becomes infinity instead of an error. */
static void store_float(hk_dtype t, void *p, double x)
{
    if (hk_dtype_store_f64(t, p, x) == HK_ERANGE)
        hk_dtype_store_f64(t, p, copysign(INFINITY, x));
}

static void push_elem(lua_State *L, hk_dtype t, const void *p)
{
    if (is_float(t))
        lua_pushnumber(L, hkl_load_f64(t, p));
    else
        lua_pushinteger(L, (lua_Integer)hk_dtype_load_i64(t, p));
}

static const char *range_error(lua_State *L, hk_dtype t, const char *value)
{
    int64_t lo;
    uint64_t hi;
    hk_dtype_int_range(t, &lo, &hi);
    char msg[160];
    snprintf(msg, sizeof msg, "value %s out of range for %s [%lld, %llu]", value,
             hk_dtype_name(t), (long long)lo, (unsigned long long)hi);
    return lua_pushstring(L, msg);
}

/* Converts the Lua value at idx to one element of t at out. Returns NULL, or
 * an error message (pushed on the stack) naming the value and dtype. */
static const char *encode(lua_State *L, int idx, hk_dtype t, void *out)
{
    if (lua_type(L, idx) != LUA_TNUMBER)
        return lua_pushfstring(L, "expected a number for %s, got %s", hk_dtype_name(t),
                               luaL_typename(L, idx));
    int isint = lua_isinteger(L, idx);
    lua_Integer v = lua_tointeger(L, idx);
    double x = (double)lua_tonumber(L, idx);
    int rc = isint && t == HK_U64 ? hk_dtype_store_u64(t, out, (uint64_t)v)
             : isint                 ? hk_dtype_store_i64(t, out, v)
                                     : hk_dtype_store_f64(t, out, x);
    if (rc == 0)
        return NULL;
    if (is_float(t)) {
        store_float(t, out, x);
        return NULL;
    }
    if (rc == HK_EINVAL)
        return lua_pushfstring(L, "value %s is not an integer (dtype %s)",
                               lua_tostring(L, idx), hk_dtype_name(t));
    char text[64];
    if (isint)
        snprintf(text, sizeof text, "%lld", (long long)v);
    else
        snprintf(text, sizeof text, "%.17g", x);
    return range_error(L, t, text);
}

/* %g, but NaN prints as "nan" whatever its sign bit (glibc says "-nan"). */
void fmt_num(char *buf, size_t cap, const char *fmt, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "nan");
    else
        snprintf(buf, cap, fmt, v);
}

static void fmt_elem(char *buf, size_t cap, hk_dtype t, const void *p)
{
    switch (t) {
    case HK_F16:
    case HK_BF16: fmt_num(buf, cap, "%.4g", hkl_load_f64(t, p)); break;
    case HK_F32: fmt_num(buf, cap, "%.7g", hkl_load_f64(t, p)); break;
    case HK_F64: fmt_num(buf, cap, "%.15g", hkl_load_f64(t, p)); break;
    case HK_U64: snprintf(buf, cap, "%llu", (unsigned long long)hk_dtype_load_u64(t, p)); break;
    default:
        if (is_signed(t))
            snprintf(buf, cap, "%lld", (long long)hk_dtype_load_i64(t, p));
        else
            snprintf(buf, cap, "%llu", (unsigned long long)hk_dtype_load_u64(t, p));
        break;
    }
}

hk_dtype hkl_check_dtype(lua_State *L, int idx, const char *def)
{
    const char *name = def ? luaL_optstring(L, idx, def) : luaL_checkstring(L, idx);
    hk_dtype t;
    if (hk_dtype_parse(name, &t) == 0)
        return t;
    luaL_Buffer lb;
    luaL_buffinit(L, &lb);
    lua_pushfstring(L, "unknown dtype '%s' (", name);
    luaL_addvalue(&lb);
    for (int i = 0; i < HK_DTYPE_COUNT; i++) {
        luaL_addstring(&lb, hk_dtype_name((hk_dtype)i));
        luaL_addstring(&lb, i + 1 < HK_DTYPE_COUNT ? ", " : ")");
    }
    luaL_pushresult(&lb);
    luaL_argerror(L, idx, lua_tostring(L, -1));
    return HK_F32;
}

hk_mem_mode hkl_check_mode(lua_State *L, int idx, const char *def)
{
    const char *name = def ? luaL_optstring(L, idx, def) : luaL_checkstring(L, idx);
    hk_mem_mode m;
    if (hk_mem_mode_parse(name, &m) == 0)
        return m;
    luaL_argerror(L, idx, lua_pushfstring(L, "unknown memory mode '%s' (device, managed, host, mmap)", name));
    return HK_MEM_DEVICE;
}

/* ----------------------------------------------------------- userdata */

hkl_buffer *hkl_test_buffer(lua_State *L, int idx)
{
    return luaL_testudata(L, idx, HKL_BUFFER);
}

hk_buffer *hkl_buffer_live(lua_State *L, void *ud, int idx)
{
    lbuf *u = ud; /* a view's memory goes with the buffer it views */
    if (!u->pub.b)
        luaL_argerror(L, idx, "buffer was freed");
    if (hkl_graph_recording) /* a graph being recorded keeps what its launches take */
        hkl_graph_note(L, idx);
    for (lbuf *p = u->parent; p; p = p->parent)
        if (!p->pub.b)
            luaL_argerror(L, idx, "buffer was freed (it views a buffer that was freed)");
    return u->pub.b;
}

unsigned char *hkl_host_ptr(hk_buffer *b)
{
    return hk_buffer_mode(b) == HK_MEM_MMAP ? NULL : hk_buffer_host_ptr(b);
}

hk_buffer *hkl_check_buffer(lua_State *L, int idx)
{
    return hkl_buffer_live(L, luaL_checkudata(L, idx, HKL_BUFFER), idx);
}

hk_buffer *hkl_hold_buffer_in(lua_State *L, hkl_hold *h, void *ud, int idx)
{
    hk_buffer *b = hkl_buffer_live(L, ud, idx);
    /* Freeing a buffer a view looks into frees the view's memory too: pin
     * the whole chain. */
    for (lbuf *p = ud; p; p = p->parent)
        hkl_hold_add(h, &p->pin);
    return b;
}

hk_buffer *hkl_hold_buffer(lua_State *L, int idx, const char *call)
{
    void *ud = luaL_checkudata(L, idx, HKL_BUFFER);
    hkl_buffer_live(L, ud, idx);
    return hkl_hold_buffer_in(L, hkl_hold_new(L, idx, 1, call), ud, idx);
}

/* Pushes a closed userdata; the caller acquires the buffer into it. */
static lbuf *new_ud(lua_State *L, int parent_idx)
{
    if (parent_idx)
        parent_idx = lua_absindex(L, parent_idx);
    lbuf *u = lua_newuserdatauv(L, sizeof *u, 1);
    u->pub.b = NULL;
    u->parent = NULL;
    u->pin = (hkl_pin){0, NULL};
    luaL_setmetatable(L, HKL_BUFFER);
    if (parent_idx) {
        u->parent = luaL_testudata(L, parent_idx, HKL_BUFFER);
        lua_pushvalue(L, parent_idx);
        lua_setiuservalue(L, -2, 1);
    }
    return u;
}

void hkl_push_buffer(lua_State *L, hk_buffer *b, int parent_idx)
{
    new_ud(L, parent_idx)->pub.b = b;
}

static int close_ud(lbuf *u)
{
    hk_buffer *b = u->pub.b;
    u->pub.b = NULL;
    return hk_buffer_free(b);
}

static int buf_gc(lua_State *L)
{
    close_ud(luaL_checkudata(L, 1, HKL_BUFFER));
    return 0;
}

/* `local b <close> = ...`: as free, but a write-back error is dropped as
 * __gc drops it (close has no result to report it in). */
static int buf_close(lua_State *L)
{
    lbuf *u = luaL_checkudata(L, 1, HKL_BUFFER);
    hkl_pin_check_free(L, &u->pin, "buffer");
    close_ud(u);
    return 0;
}

static int buf_free(lua_State *L)
{
    lbuf *u = luaL_checkudata(L, 1, HKL_BUFFER);
    hkl_pin_check_free(L, &u->pin, "buffer");
    /* Only a writable mapping's write-back can fail; say so. */
    int r = close_ud(u);
    if (r)
        return hkl_error(L, r, "free");
    return 0;
}

/* ---------------------------------------------------------------- spans */

void hkl_check_addressable(lua_State *L, hk_dtype t, const char *what)
{
    if (hk_dtype_block(t) > 1)
        luaL_error(L, "%s: %s is a block format (%d elements in %d bytes): its elements are not "
                      "addressable one by one (hk.ops.quantized.dequantize reads them, quantize writes them)",
                   what, hk_dtype_name(t), (int)hk_dtype_block(t), (int)hk_dtype_size(t));
}

/* Leaves one value (scratch or nil) on the stack. */
void span_init(lua_State *L, span *s, hk_buffer *b, int write)
{
    hkl_check_addressable(L, hk_buffer_dtype(b), "buffer");
    s->b = b;
    s->t = hk_buffer_dtype(b);
    s->es = hk_dtype_size(s->t);
    s->n = hk_buffer_length(b);
    s->host = hkl_host_ptr(b);
    s->tmp = NULL;
    /* An empty upload checks that a mapping is writable, before we touch
     * read-only pages through the host pointer. */
    if (write)
        hkl_check(L, hk_buffer_upload(b, 0, NULL, 0));
    if (s->host) {
        hkl_check(L, hk_synchronize(hkl_ctx(L))); /* see what kernels wrote */
        lua_pushnil(L);
    } else {
        s->tmp = lua_newuserdatauv(L, CHUNK_BYTES, 0);
    }
}

/* Elements per chunk, for spans of the given element sizes. */
size_t chunk_elems(size_t es) { return CHUNK_BYTES / es; }

const unsigned char *span_read(lua_State *L, span *s, size_t first, size_t n)
{
    if (s->host)
        return s->host + first * s->es;
    hkl_check(L, hk_buffer_download(s->b, first * s->es, s->tmp, n * s->es));
    return s->tmp;
}

static unsigned char *span_wbegin(span *s, size_t first)
{
    return s->host ? s->host + first * s->es : s->tmp;
}

static void span_wend(lua_State *L, span *s, size_t first, size_t n)
{
    if (!s->host)
        hkl_check(L, hk_buffer_upload(s->b, first * s->es, s->tmp, n * s->es));
}

/* One element, for b[i] and tostring: never more than that is read. */
static void read_one(lua_State *L, hk_buffer *b, size_t i, void *out)
{
    hkl_check_addressable(L, hk_buffer_dtype(b), "buffer");
    size_t es = hk_dtype_size(hk_buffer_dtype(b));
    unsigned char *host = hkl_host_ptr(b);
    if (host) {
        hkl_check(L, hk_synchronize(hkl_ctx(L)));
        memcpy(out, host + i * es, es);
    } else {
        hkl_check(L, hk_buffer_download(b, i * es, out, es));
    }
}

/* ------------------------------------------------------------ metamethods */

/* The 0-based index of key at idx, checked against b's length. */
static size_t check_index(lua_State *L, hk_buffer *b, int idx)
{
    int isint;
    lua_Integer i = lua_tointegerx(L, idx, &isint);
    if (!isint) {
        if (lua_type(L, idx) == LUA_TNUMBER)
            luaL_error(L, "index %s is not an integer", lua_tostring(L, idx));
        luaL_error(L, "bad index (a %s): index buffers with integers 1..#buf", luaL_typename(L, idx));
    }
    size_t n = hk_buffer_length(b);
    if (i < 1 || (uint64_t)i > n)
        luaL_error(L, "index %I out of range [1, %I]", i, (lua_Integer)n);
    return (size_t)(i - 1);
}

static int buf_index(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING) {
        lua_pushvalue(L, 2);
        lua_rawget(L, lua_upvalueindex(1));
        return 1;
    }
    hk_buffer *b = hkl_check_buffer(L, 1);
    size_t i = check_index(L, b, 2);
    unsigned char v[8];
    read_one(L, b, i, v);
    push_elem(L, hk_buffer_dtype(b), v);
    return 1;
}

static int buf_newindex(lua_State *L)
{
    hk_buffer *b = hkl_check_buffer(L, 1);
    if (lua_type(L, 2) == LUA_TSTRING)
        return luaL_error(L, "cannot set field '%s' of a buffer", lua_tostring(L, 2));
    size_t i = check_index(L, b, 2);
    hk_dtype t = hk_buffer_dtype(b);
    hkl_check_addressable(L, t, "buf[i] = ...");
    size_t es = hk_dtype_size(t);
    unsigned char v[8];
    const char *err = encode(L, 3, t, v);
    if (err)
        return luaL_error(L, "buf[%I] = ...: %s", (lua_Integer)i + 1, err);
    hkl_check(L, hk_buffer_upload(b, 0, NULL, 0)); /* writable? */
    unsigned char *host = hkl_host_ptr(b);
    if (host) {
        hkl_check(L, hk_synchronize(hkl_ctx(L)));
        memcpy(host + i * es, v, es);
    } else {
        hkl_check(L, hk_buffer_upload(b, i * es, v, es));
    }
    return 0;
}

static int buf_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)hk_buffer_length(hkl_check_buffer(L, 1)));
    return 1;
}

static void push_device(lua_State *L, hk_buffer *b)
{
    hk_device_info info;
    if (hk_device_get(hkl_ctx(L), hk_buffer_device(b), &info) == 0)
        lua_pushfstring(L, "%s:%d", info.backend, info.index);
    else
        lua_pushfstring(L, "device %d", hk_buffer_device(b));
}

static int buf_tostring(lua_State *L)
{
    lbuf *u = luaL_checkudata(L, 1, HKL_BUFFER);
    int dead = !u->pub.b;
    for (lbuf *p = u->parent; p && !dead; p = p->parent)
        dead = !p->pub.b;
    if (dead) {
        lua_pushstring(L, "hk.buffer (freed)");
        return 1;
    }
    hk_buffer *b = u->pub.b;
    hk_dtype t = hk_buffer_dtype(b);
    size_t n = hk_buffer_length(b);
    luaL_Buffer lb;
    push_device(L, b);
    const char *dev = lua_tostring(L, -1);
    luaL_buffinit(L, &lb);
    char s[64];
    snprintf(s, sizeof s, "hk.buffer<%s>[%zu] %s%s on ", hk_dtype_name(t), n,
             hk_mem_mode_name(hk_buffer_mode(b)), hk_buffer_is_view(b) ? " view" : "");
    luaL_addstring(&lb, s);
    luaL_addstring(&lb, dev);
    if (hk_dtype_block(t) > 1) { /* a block format: its layout, not values */
        snprintf(s, sizeof s, " (%zu blocks of %zu elements, %zu bytes)",
                 n / hk_dtype_block(t), hk_dtype_block(t), hk_buffer_bytes(b));
        luaL_addstring(&lb, s);
        luaL_pushresult(&lb);
        return 1;
    }
    luaL_addstring(&lb, " {");
    for (size_t k = 0; k < n; k++) {
        if (n > 6 && k == 3) {
            luaL_addstring(&lb, "..., ");
            k = n - 3;
        }
        unsigned char v[8];
        read_one(L, b, k, v);
        fmt_elem(s, sizeof s, t, v);
        luaL_addstring(&lb, s);
        if (k + 1 < n)
            luaL_addstring(&lb, ", ");
    }
    luaL_addstring(&lb, "}");
    luaL_pushresult(&lb);
    return 1;
}

/* ------------------------------------------------------------- methods */

static int m_dtype(lua_State *L)
{
    lua_pushstring(L, hk_dtype_name(hk_buffer_dtype(hkl_check_buffer(L, 1))));
    return 1;
}

static int m_mode(lua_State *L)
{
    lua_pushstring(L, hk_mem_mode_name(hk_buffer_mode(hkl_check_buffer(L, 1))));
    return 1;
}

static int m_device(lua_State *L)
{
    push_device(L, hkl_check_buffer(L, 1));
    return 1;
}

static int m_bytes(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)hk_buffer_bytes(hkl_check_buffer(L, 1)));
    return 1;
}

static int m_totable(lua_State *L)
{
    hk_buffer *b = hkl_check_buffer(L, 1);
    lua_Integer n = (lua_Integer)hk_buffer_length(b);
    lua_Integer i = luaL_optinteger(L, 2, 1);
    lua_Integer j = luaL_optinteger(L, 3, n);
    luaL_argcheck(L, i >= 1 && i <= n + 1, 2,
                  lua_pushfstring(L, "start %I out of range [1, %I]", i, n));
    luaL_argcheck(L, j <= n, 3, lua_pushfstring(L, "end %I out of range [1, %I]", j, n));
    lua_Integer count = j >= i ? j - i + 1 : 0;
    if (count > TOTABLE_MAX)
        return luaL_error(L, "totable: %I elements is too many for a Lua table (at most %d); "
                             "ask for a range, e.g. b:totable(1, 1000)", count, TOTABLE_MAX);
    span s;
    span_init(L, &s, b, 0);
    lua_createtable(L, (int)count, 0);
    size_t per = chunk_elems(s.es);
    for (size_t done = 0; done < (size_t)count;) {
        size_t m = (size_t)count - done < per ? (size_t)count - done : per;
        const unsigned char *p = span_read(L, &s, (size_t)i - 1 + done, m);
        for (size_t k = 0; k < m; k++) {
            push_elem(L, s.t, p + k * s.es);
            lua_rawseti(L, -2, (lua_Integer)(done + k + 1));
        }
        done += m;
    }
    return 1;
}

static int m_fill(lua_State *L)
{
    hk_buffer *b = hkl_check_buffer(L, 1);
    unsigned char v[8];
    hkl_check_addressable(L, hk_buffer_dtype(b), "fill");
    luaL_checkany(L, 2);
    const char *err = encode(L, 2, hk_buffer_dtype(b), v);
    if (err)
        return luaL_argerror(L, 2, err);
    hkl_check(L, hk_buffer_fill(b, v));
    hkl_settop(L, 1);
    return 1;
}

static int64_t check_int_arg(lua_State *L, int idx, lua_Integer def, const char *what)
{
    if (lua_isnoneornil(L, idx))
        return def;
    int isint;
    lua_Integer v = lua_tointegerx(L, idx, &isint);
    if (!isint)
        luaL_argerror(L, idx, lua_pushfstring(L, "%s must be an integer for an integer dtype", what));
    return v;
}

static int m_iota(lua_State *L)
{
    hk_buffer *b = hkl_check_buffer(L, 1);
    hk_dtype t = hk_buffer_dtype(b);
    hkl_check_addressable(L, t, "iota");
    size_t n = hk_buffer_length(b);
    double fstart = luaL_optnumber(L, 2, 0), fstep = luaL_optnumber(L, 3, 1);
    int64_t start = 0, step = 0;
    if (!is_float(t)) {
        start = check_int_arg(L, 2, 0, "start");
        step = check_int_arg(L, 3, 1, "step");
        if (n) {
            int64_t last, lo;
            uint64_t hi;
            hk_dtype_int_range(t, &lo, &hi);
            char text[64];
            if (__builtin_mul_overflow(step, (int64_t)(n - 1), &last) ||
                __builtin_add_overflow(start, last, &last))
                return luaL_error(L, "iota: start + (n-1)*step overflows 64 bits");
            int64_t ends[2] = {start, last};
            for (int e = 0; e < 2; e++) {
                if (ends[e] < lo || (ends[e] > 0 && (uint64_t)ends[e] > hi)) {
                    snprintf(text, sizeof text, "%lld", (long long)ends[e]);
                    return luaL_error(L, "iota: %s", range_error(L, t, text));
                }
            }
        }
    }
    span s;
    span_init(L, &s, b, 1);
    size_t per = chunk_elems(s.es);
    for (size_t first = 0; first < n; first += per) {
        size_t m = n - first < per ? n - first : per;
        unsigned char *p = span_wbegin(&s, first);
        if (is_float(t)) {
            for (size_t k = 0; k < m; k++)
                store_float(t, p + k * s.es, fstart + (double)(first + k) * fstep);
        } else {
            /* In range: both ends were checked, and the values lie between. */
            for (size_t k = 0; k < m; k++)
                hk_dtype_store_i64(t, p + k * s.es,
                                   (int64_t)((uint64_t)start + (uint64_t)(first + k) * (uint64_t)step));
        }
        span_wend(L, &s, first, m);
    }
    hkl_settop(L, 1);
    return 1;
}

/* The option's value, or nil, pushed. */
static int get_opt(lua_State *L, int idx, const char *key)
{
    if (lua_isnoneornil(L, idx)) {
        lua_pushnil(L);
        return LUA_TNIL;
    }
    return lua_getfield(L, idx, key);
}

static double opt_number(lua_State *L, int idx, const char *key, double def)
{
    int type = get_opt(L, idx, key);
    double v = def;
    if (type == LUA_TNUMBER)
        v = lua_tonumber(L, -1);
    else if (type != LUA_TNIL)
        luaL_argerror(L, idx, lua_pushfstring(L, "option '%s' must be a number", key));
    lua_pop(L, 1);
    return v;
}

static lua_Integer opt_integer(lua_State *L, int idx, const char *key, lua_Integer def)
{
    int type = get_opt(L, idx, key);
    lua_Integer v = def;
    int isint = 1;
    if (type != LUA_TNIL)
        v = lua_tointegerx(L, -1, &isint);
    if (!isint || (type != LUA_TNIL && type != LUA_TNUMBER))
        luaL_argerror(L, idx, lua_pushfstring(L, "option '%s' must be an integer", key));
    lua_pop(L, 1);
    return v;
}

static int opt_bool(lua_State *L, int idx, const char *key)
{
    get_opt(L, idx, key);
    int v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

/* xoshiro256**, seeded through splitmix64: small, fast, and the same
 * sequence on every platform. */
typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

static void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1p-53; } /* [0, 1) */

static int seed_key; /* registry slot of the unseeded-call counter */

/* Unseeded calls draw seeds from a sequence kept per Lua state: successive
 * calls differ, and a script run twice sees the same data. rand returns the
 * seed it used, so any call can be replayed with {seed = ...}. */
static lua_Integer next_default_seed(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &seed_key);
    lua_Integer n = lua_tointeger(L, -1) + 1;
    lua_pop(L, 1);
    lua_pushinteger(L, n);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &seed_key);
    uint64_t x = (uint64_t)n ^ 0x5eed5eed5eed5eedu;
    return (lua_Integer)(splitmix64(&x) >> 1);
}

static int m_rand(lua_State *L)
{
    static const char *const names[] = {"seed", "dist", "lo", "hi", "mean", "std", NULL};
    hkl_settop(L, 2);
    hk_buffer *b = hkl_hold_buffer(L, 1, "b:rand"); /* the options may run Lua */
    hkl_check_options(L, 2, names, "rand");
    hk_dtype t = hk_buffer_dtype(b);
    hkl_check_addressable(L, t, "rand");
    size_t n = hk_buffer_length(b);
    lua_Integer seed;
    if (get_opt(L, 2, "seed") == LUA_TNIL)
        seed = next_default_seed(L);
    else if (!lua_isinteger(L, -1))
        return luaL_argerror(L, 2, "option 'seed' must be an integer");
    else
        seed = lua_tointeger(L, -1);
    lua_pop(L, 1);
    int dist_type = get_opt(L, 2, "dist");
    if (dist_type != LUA_TNIL && dist_type != LUA_TSTRING)
        return luaL_argerror(L, 2, "option 'dist' must be a string");
    const char *dist = dist_type == LUA_TNIL ? "uniform" : lua_tostring(L, -1);
    int normal = strcmp(dist, "normal") == 0;
    if (!normal && strcmp(dist, "uniform") != 0)
        return luaL_argerror(L, 2, lua_pushfstring(L, "unknown dist '%s' (uniform, normal)", dist));
    lua_pop(L, 1);
    /* an option of the other distribution is a mistake, not a no-op */
    static const char *const uniform_only[] = {"lo", "hi"}, *const normal_only[] = {"mean", "std"};
    for (int o = 0; o < 2; o++) {
        const char *key = normal ? uniform_only[o] : normal_only[o];
        int type = get_opt(L, 2, key);
        lua_pop(L, 1);
        if (type != LUA_TNIL)
            return luaL_argerror(L, 2, lua_pushfstring(L, "option '%s' is for dist '%s', and this is '%s'",
                                                       key, normal ? "uniform" : "normal", dist));
    }
    double lo = 0, hi = 1, mean = 0, sd = 1;
    int64_t ilo = 0, ihi = 100;
    if (is_float(t)) {
        lo = opt_number(L, 2, "lo", 0);
        hi = opt_number(L, 2, "hi", 1);
        mean = opt_number(L, 2, "mean", 0);
        sd = opt_number(L, 2, "std", 1);
        if (!normal && !(lo < hi && isfinite(hi - lo)))
            return luaL_argerror(L, 2, "need finite lo < hi");
        /* beyond the dtype's largest finite value the stores would round
         * to inf: refused, as integer dtypes refuse lo..hi past theirs */
        double top = t == HK_F16 ? 65504.0 : t == HK_BF16 ? 0x1.fep127 : t == HK_F32 ? 0x1.fffffep127 : DBL_MAX;
        if (!normal && (fabs(lo) > top || fabs(hi) > top))
            return luaL_argerror(L, 2, lua_pushfstring(L, "lo..hi (%f..%f) is outside the finite range of %s (+-%f)",
                                                       lo, hi, hk_dtype_name(t), top));
        if (normal && !(sd >= 0 && isfinite(sd) && isfinite(mean)))
            return luaL_argerror(L, 2, "need a finite mean and a finite std >= 0");
    } else {
        if (normal)
            return luaL_argerror(L, 2, lua_pushfstring(L, "dist 'normal' needs a float dtype, not %s",
                                                       hk_dtype_name(t)));
        ilo = opt_integer(L, 2, "lo", 0);
        ihi = opt_integer(L, 2, "hi", 100);
        int64_t dlo;
        uint64_t dhi;
        hk_dtype_int_range(t, &dlo, &dhi);
        if (ilo > ihi)
            return luaL_argerror(L, 2, "need lo <= hi");
        if (ilo < dlo || (ihi > 0 && (uint64_t)ihi > dhi))
            return luaL_argerror(L, 2, lua_pushfstring(L, "lo..hi (%I..%I) is outside the range of %s",
                                                       (lua_Integer)ilo, (lua_Integer)ihi,
                                                       hk_dtype_name(t)));
    }
    rng r;
    rng_seed(&r, (uint64_t)seed);
    span s;
    span_init(L, &s, b, 1);
    size_t per = chunk_elems(s.es);
    uint64_t range = (uint64_t)ihi - (uint64_t)ilo + 1; /* 0: all 2^64 values */
    uint64_t reject = range ? (0 - range) % range : 0;
    double spare = 0;
    int have_spare = 0;
    for (size_t first = 0; first < n; first += per) {
        size_t m = n - first < per ? n - first : per;
        unsigned char *p = span_wbegin(&s, first);
        for (size_t k = 0; k < m; k++) {
            unsigned char *e = p + k * s.es;
            if (!is_float(t)) {
                uint64_t x;
                do
                    x = rng_next(&r);
                while (x < reject);
                /* In [lo, hi], which was checked against the dtype. */
                hk_dtype_store_i64(t, e, (int64_t)((uint64_t)ilo + (range ? x % range : x)));
            } else if (normal) {
                double z;
                if (have_spare) {
                    z = spare;
                    have_spare = 0;
                } else { /* Box-Muller: two normals from two uniforms */
                    double u1 = (double)((rng_next(&r) >> 11) + 1) * 0x1p-53; /* (0, 1] */
                    double u2 = rng_unit(&r);
                    double rad = sqrt(-2 * log(u1));
                    z = rad * cos(2 * M_PI * u2);
                    spare = rad * sin(2 * M_PI * u2);
                    have_spare = 1;
                }
                store_float(t, e, mean + sd * z);
            } else {
                /* Rounding to the dtype may reach hi: draw again so values
                 * stay in [lo, hi) (give up after a few, for empty ranges). */
                for (int tries = 0; tries < 32; tries++) {
                    store_float(t, e, lo + (hi - lo) * rng_unit(&r));
                    if (hkl_load_f64(t, e) < hi)
                        break;
                }
            }
        }
        span_wend(L, &s, first, m);
    }
    hkl_settop(L, 1);
    lua_pushinteger(L, seed);
    return 2;
}

static int m_copy(lua_State *L)
{
    hk_buffer *dst = hkl_check_buffer(L, 1);
    hk_buffer *src = hkl_check_buffer(L, 2);
    size_t db = hk_buffer_bytes(dst), sb = hk_buffer_bytes(src);
    if (db != sb)
        return luaL_argerror(L, 2, lua_pushfstring(L, "source has %I bytes, this buffer %I",
                                                   (lua_Integer)sb, (lua_Integer)db));
    hkl_check(L, hk_buffer_copy(dst, 0, src, 0, db));
    hkl_settop(L, 1);
    return 1;
}

static int m_clone(lua_State *L)
{
    hk_buffer *b = hkl_check_buffer(L, 1);
    hk_mem_mode mode = lua_isnoneornil(L, 2) ? hk_buffer_mode(b) : hkl_check_mode(L, 2, NULL);
    if (mode == HK_MEM_MMAP)
        return luaL_argerror(L, 2, "cannot clone into an mmap buffer; pass a mode (device, managed, host)");
    lbuf *u = new_ud(L, 0);
    hkl_check(L, hk_buffer_alloc(hkl_ctx(L), hk_buffer_length(b), hk_buffer_dtype(b), mode, &u->pub.b));
    hkl_check(L, hk_buffer_copy(u->pub.b, 0, b, 0, hk_buffer_bytes(b)));
    return 1;
}

/* view(dtype, offset, count): offset in bytes, count (default: as many as
 * fit) in elements of the new dtype; as many as fit of a block dtype are
 * its whole blocks' elements (a block's size is its bytes). */
static int m_view(lua_State *L)
{
    hk_buffer *b = hkl_check_buffer(L, 1);
    hk_dtype t = hkl_check_dtype(L, 2, hk_dtype_name(hk_buffer_dtype(b)));
    lua_Integer off = luaL_optinteger(L, 3, 0);
    size_t bytes = hk_buffer_bytes(b), es = hk_dtype_size(t);
    luaL_argcheck(L, off >= 0 && (uint64_t)off <= bytes, 3,
                  lua_pushfstring(L, "byte offset %I out of range [0, %I]", off, (lua_Integer)bytes));
    lua_Integer count = luaL_optinteger(L, 4, (lua_Integer)((bytes - (size_t)off) / es * hk_dtype_block(t)));
    luaL_argcheck(L, count >= 0, 4, "count must be >= 0");
    lbuf *u = new_ud(L, 1);
    hkl_check(L, hk_buffer_view(b, t, (size_t)off, (size_t)count, &u->pub.b));
    return 1;
}

/* ---------------------------------------------------------- constructors */

static size_t check_count(lua_State *L, int idx)
{
    lua_Integer n = luaL_checkinteger(L, idx);
    luaL_argcheck(L, n >= 0, idx, "length must be >= 0");
    return (size_t)n;
}

static int l_alloc(lua_State *L)
{
    size_t n = check_count(L, 1);
    hk_dtype t = hkl_check_dtype(L, 2, "f32");
    hk_mem_mode mode = hkl_check_mode(L, 3, "device");
    lbuf *u = new_ud(L, 0);
    hkl_check(L, hk_buffer_alloc(hkl_ctx(L), n, t, mode, &u->pub.b));
    return 1;
}

static int l_from(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    hk_dtype t = hkl_check_dtype(L, 2, "f32");
    hk_mem_mode mode = hkl_check_mode(L, 3, "device");
    lua_Integer len = luaL_len(L, 1);
    hkl_settop(L, 3);
    lbuf *u = new_ud(L, 0);
    hkl_check(L, hk_buffer_alloc(hkl_ctx(L), (size_t)len, t, mode, &u->pub.b));
    span s;
    span_init(L, &s, u->pub.b, 1);
    size_t per = chunk_elems(s.es);
    for (size_t first = 0; first < (size_t)len; first += per) {
        size_t m = (size_t)len - first < per ? (size_t)len - first : per;
        unsigned char *p = span_wbegin(&s, first);
        for (size_t k = 0; k < m; k++) {
            lua_geti(L, 1, (lua_Integer)(first + k + 1));
            const char *err = encode(L, -1, t, p + k * s.es);
            if (err)
                return luaL_argerror(L, 1, lua_pushfstring(L, "element %I: %s",
                                                           (lua_Integer)(first + k + 1), err));
            lua_pop(L, 1);
        }
        span_wend(L, &s, first, m);
    }
    lua_pop(L, 1); /* the span's scratch */
    return 1;
}

static int l_mmap(lua_State *L)
{
    static const char *const names[] = {"write", "create", "offset", "length", NULL};
    const char *path = luaL_checkstring(L, 1);
    hk_dtype t = hkl_check_dtype(L, 2, "u8");
    hkl_check_options(L, 3, names, "mmap");
    hk_mmap_options o;
    hk_mmap_options_defaults(&o);
    o.writable = opt_bool(L, 3, "write");
    o.create = opt_bool(L, 3, "create");
    lua_Integer off = opt_integer(L, 3, "offset", 0), len = opt_integer(L, 3, "length", 0);
    luaL_argcheck(L, off >= 0 && len >= 0, 3, "offset and length must be >= 0");
    luaL_argcheck(L, !o.create || o.writable, 3, "create needs write = true");
    o.offset = (uint64_t)off;
    o.length = (uint64_t)len;
    lbuf *u = new_ud(L, 0);
    hkl_progress_begin(lua_pushfstring(L, "mapping %s", path));
    int r = hk_buffer_mmap(hkl_ctx(L), path, t, &o, &u->pub.b);
    hkl_progress_end();
    lua_pop(L, 1);
    hkl_check(L, r);
    return 1;
}

void hkl_buffer_register(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"totable", m_totable}, {"fill", m_fill},   {"iota", m_iota},     {"rand", m_rand},
        {"copy", m_copy},       {"clone", m_clone}, {"view", m_view},     {"free", buf_free},
        {"dtype", m_dtype},     {"mode", m_mode},   {"device", m_device}, {"bytes", m_bytes},
        {NULL, NULL},
    };
    static const luaL_Reg meta[] = {
        {"__newindex", buf_newindex}, {"__len", buf_len}, {"__tostring", buf_tostring},
        {"__gc", buf_gc},             {"__close", buf_close}, {NULL, NULL},
    };
    static const luaL_Reg ctors[] = {
        {"alloc", l_alloc}, {"from", l_from}, {"mmap", l_mmap}, {"load_npy", hkl_npy_load}, {NULL, NULL},
    };
    luaL_newmetatable(L, HKL_BUFFER);
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, methods);
    hkl_buffer_math_register(L);
    hkl_npy_register(L);
    hkl_plot_register(L);
    /* __index is a function (for b[i]); `methods` lets completion list them. */
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "methods");
    lua_pushcclosure(L, buf_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_setfuncs(L, ctors, 0);
}
