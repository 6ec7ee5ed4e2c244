/* NumPy .npy files: buf:save(path [, shape]) and hk.load_npy(path, mode).
 *
 * Format (numpy.lib.format): the magic "\x93NUMPY", a major and minor
 * version byte, the header length (2 bytes little-endian in v1.0, 4 in
 * v2.0), then a Python dict literal with 'descr', 'fortran_order' and
 * 'shape', padded with spaces and a newline so the data starts at a multiple
 * of 64 bytes. bf16 has no NumPy dtype: it is saved as '<u2', its raw bits,
 * and loads back as u16 (view it as bf16 with b:view("bf16")).
 *
 * The FILE* lives in a userdata whose __gc closes it, so a Lua error half way
 * through closes the file too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_read.h"
#include "hkl.h"

#define NPY_FILE "hk.npyfile"
#define CHUNK_BYTES ((size_t)1 << 20)
#define MAX_DIMS 32

static const char *const descrs[HK_DTYPE_COUNT] = {
    [HK_F16] = "<f2", [HK_BF16] = "<u2", [HK_F32] = "<f4", [HK_F64] = "<f8",
    [HK_I8] = "|i1",  [HK_I16] = "<i2",  [HK_I32] = "<i4", [HK_I64] = "<i8",
    [HK_U8] = "|u1",  [HK_U16] = "<u2",  [HK_U32] = "<u4", [HK_U64] = "<u8",
};

typedef struct npyfile {
    FILE *f;
} npyfile;

static int file_gc(lua_State *L)
{
    npyfile *nf = luaL_checkudata(L, 1, NPY_FILE);
    if (nf->f)
        fclose(nf->f);
    nf->f = NULL;
    return 0;
}

/* Pushes the guard, then opens; errors name the file. */
static npyfile *open_file(lua_State *L, const char *path, const char *how, const char *what)
{
    npyfile *nf = lua_newuserdatauv(L, sizeof *nf, 0);
    nf->f = NULL;
    if (luaL_newmetatable(L, NPY_FILE)) {
        lua_pushcfunction(L, file_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    if (how[0] == 'r') { /* a FIFO would block the read forever */
        int e = hkl_file_open(path, &nf->f);
        if (e)
            luaL_error(L, "%s '%s': %s", what, path, hkl_file_strerror(e));
        return nf;
    }
    nf->f = fopen(path, how);
    if (!nf->f)
        luaL_error(L, "%s '%s': %s", what, path, strerror(errno));
    return nf;
}

static int close_file(lua_State *L, npyfile *nf, const char *path, const char *what)
{
    FILE *f = nf->f;
    nf->f = NULL;
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return luaL_error(L, "%s '%s': %s", what, path, strerror(errno ? errno : EIO));
    return 0;
}

/* ------------------------------------------------------------------ save */

static int m_save(lua_State *L)
{
    const char *path = luaL_checkstring(L, 2);
    hkl_settop(L, 3);
    hk_buffer *b = hkl_hold_buffer(L, 1, "b:save"); /* the shape's __index may run Lua */
    hk_dtype t = hk_buffer_dtype(b);
    hkl_check_addressable(L, t, "save");
    size_t n = hk_buffer_length(b), bytes = hk_buffer_bytes(b);
    luaL_Buffer shape;
    luaL_buffinit(L, &shape);
    luaL_addchar(&shape, '(');
    if (lua_isnil(L, 3)) {
        lua_pushfstring(L, "%I,", (lua_Integer)n);
        luaL_addvalue(&shape);
    } else {
        luaL_checktype(L, 3, LUA_TTABLE);
        lua_Integer nd = luaL_len(L, 3);
        luaL_argcheck(L, nd >= 1 && nd <= MAX_DIMS, 3, "shape needs 1 to 32 dimensions");
        uint64_t prod = 1;
        for (lua_Integer d = 1; d <= nd; d++) {
            lua_geti(L, 3, d);
            int isint;
            lua_Integer v = lua_tointegerx(L, -1, &isint);
            lua_pop(L, 1);
            luaL_argcheck(L, isint && v >= 0, 3, "shape entries must be integers >= 0");
            prod *= (uint64_t)v;
            lua_pushfstring(L, nd == 1 ? "%I," : d < nd ? "%I, " : "%I", v);
            luaL_addvalue(&shape);
        }
        if (prod != n)
            return luaL_argerror(L, 3, lua_pushfstring(L, "shape has %I elements, the buffer %I",
                                                       (lua_Integer)prod, (lua_Integer)n));
    }
    luaL_addchar(&shape, ')');
    luaL_pushresult(&shape); /* 5 */

    char header[512];
    int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                       descrs[t], lua_tostring(L, 5));
    if (len < 0 || (size_t)len + 80 > sizeof header)
        return luaL_error(L, "save: shape too long");
    size_t total = 10 + (size_t)len + 1; /* magic..length, dict, newline */
    size_t pad = (64 - total % 64) % 64;
    memset(header + len, ' ', pad);
    header[len + (int)pad] = '\n';
    size_t hlen = (size_t)len + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};

    unsigned char *host = hkl_host_ptr(b);
    unsigned char *tmp = NULL;
    if (host)
        hkl_check(L, hk_synchronize(hkl_ctx(L)));
    else
        tmp = lua_newuserdatauv(L, CHUNK_BYTES, 0);
    npyfile *nf = open_file(L, path, "wb", "save");
    if (fwrite(pre, 1, 10, nf->f) != 10 || fwrite(header, 1, hlen, nf->f) != hlen)
        return luaL_error(L, "save '%s': %s", path, strerror(errno));
    hkl_progress_begin("saving");
    for (size_t off = 0; off < bytes;) {
        size_t m = bytes - off < CHUNK_BYTES ? bytes - off : CHUNK_BYTES;
        const unsigned char *p = host ? host + off : tmp;
        int r = host ? 0 : hk_buffer_download(b, off, tmp, m);
        if (r) {
            hkl_progress_end();
            hkl_check(L, r);
        }
        if (fwrite(p, 1, m, nf->f) != m) {
            hkl_progress_end();
            return luaL_error(L, "save '%s': %s", path, strerror(errno));
        }
        off += m;
    }
    hkl_progress_end();
    close_file(L, nf, path, "save");
    hkl_settop(L, 1);
    return 1;
}

/* ------------------------------------------------------------------ load */

/* A cursor over the header's dict literal. */
typedef struct parser {
    const char *s, *end;
} parser;

static void skip_ws(parser *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

static int accept(parser *p, char c)
{
    skip_ws(p);
    if (p->s < p->end && *p->s == c) {
        p->s++;
        return 1;
    }
    return 0;
}

/* A quoted string into out; 0 if there is none. */
static int parse_str(parser *p, char *out, size_t cap)
{
    skip_ws(p);
    if (p->s >= p->end || (*p->s != '\'' && *p->s != '"'))
        return 0;
    char q = *p->s++;
    size_t k = 0;
    while (p->s < p->end && *p->s != q) {
        if (k + 1 < cap)
            out[k++] = *p->s;
        p->s++;
    }
    out[k] = 0;
    if (p->s >= p->end)
        return 0;
    p->s++;
    return 1;
}

static int parse_word(parser *p, const char *w)
{
    skip_ws(p);
    size_t n = strlen(w);
    if ((size_t)(p->end - p->s) >= n && memcmp(p->s, w, n) == 0) {
        p->s += n;
        return 1;
    }
    return 0;
}

/* (), (n,) or (a, b, ...); Python 2 files may write 3L. */
static int parse_shape(parser *p, uint64_t *dims, int *nd)
{
    *nd = 0;
    if (!accept(p, '('))
        return 0;
    for (;;) {
        if (accept(p, ')'))
            return 1;
        skip_ws(p);
        if (p->s >= p->end || *p->s < '0' || *p->s > '9' || *nd == MAX_DIMS)
            return 0;
        uint64_t v = 0;
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
            if (v > (UINT64_MAX - 9) / 10)
                return 0;
            v = v * 10 + (uint64_t)(*p->s++ - '0');
        }
        if (p->s < p->end && (*p->s == 'L' || *p->s == 'l'))
            p->s++;
        dims[(*nd)++] = v;
        if (!accept(p, ',')) {
            return accept(p, ')');
        }
    }
}

/* luaL_error never returns (it longjmps), but is not declared so: saying it
 * here lets the steps of hkl_npy_load call fail as a statement. */
static _Noreturn void fail(lua_State *L, const char *path, const char *msg)
{
    luaL_error(L, "load_npy '%s': %s", path, msg);
    abort();
}

/* Native-order descrs ('=') are this machine's order, little-endian on
 * every machine hipkit runs on. */
static int descr_dtype(const char *d, hk_dtype *out)
{
    if (strlen(d) < 3)
        return -1;
    char order = d[0];
    const char *kind = d + 1;
    for (int i = 0; i < HK_DTYPE_COUNT; i++) {
        if (i == HK_BF16 || !descrs[i]) /* no .npy type for bf16 and the block formats */
            continue;
        if (strcmp(kind, descrs[i] + 1) != 0)
            continue;
        size_t es = hk_dtype_size((hk_dtype)i);
        if (order == '<' || order == '=' || (es == 1 && (order == '|' || order == '>'))) {
            *out = (hk_dtype)i;
            return 0;
        }
        return order == '>' ? -2 : -1;
    }
    return -1;
}

/* Reads the magic, the version and the header dict's text, which it
 * leaves on the stack (a userdata) and returns, NUL-terminated. */
static char *read_header(lua_State *L, npyfile *nf, const char *path, size_t *len)
{
    unsigned char pre[12];
    if (fread(pre, 1, 10, nf->f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
        fail(L, path, "not a .npy file (no \\x93NUMPY magic)");
    size_t hlen;
    int major = pre[6], minor = pre[7];
    if (major == 1) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if (major == 2) {
        if (fread(pre + 10, 1, 2, nf->f) != 2)
            fail(L, path, "truncated header");
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else {
        fail(L, path, lua_pushfstring(L, "format version %d.%d is not supported (1.0 and 2.0 are)",
                                      major, minor));
    }
    if (hlen > ((size_t)1 << 24))
        fail(L, path, "header is implausibly long");
    char *h = lua_newuserdatauv(L, hlen + 1, 0);
    if (fread(h, 1, hlen, nf->f) != hlen)
        fail(L, path, "truncated header");
    h[hlen] = 0;
    *len = hlen;
    return h;
}

/* What the header dict says, checked. */
typedef struct npy_header {
    hk_dtype dtype;
    int nd;
    uint64_t dims[MAX_DIMS];
    uint64_t n; /* elements */
} npy_header;

/* The dict's three keys, in any order: descr, fortran_order, shape. */
static void parse_dict(lua_State *L, const char *path, const char *h, size_t hlen, char *descr,
                       size_t descr_cap, int *fortran, npy_header *out)
{
    parser p = {h, h + hlen};
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!accept(&p, '{'))
        fail(L, path, "header is not a dict");
    while (!accept(&p, '}')) {
        char key[32];
        if (!parse_str(&p, key, sizeof key) || !accept(&p, ':'))
            fail(L, path, lua_pushfstring(L, "cannot parse header: %s", h));
        if (strcmp(key, "descr") == 0) {
            if (!parse_str(&p, descr, descr_cap))
                fail(L, path, lua_pushfstring(L, "'descr' is not a simple dtype string "
                                                 "(structured dtypes are not supported): %s", h));
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (parse_word(&p, "True"))
                *fortran = 1;
            else if (!parse_word(&p, "False"))
                fail(L, path, "'fortran_order' is neither True nor False");
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (!parse_shape(&p, out->dims, &out->nd))
                fail(L, path, lua_pushfstring(L, "cannot parse 'shape' in %s", h));
            have_shape = 1;
        } else {
            fail(L, path, lua_pushfstring(L, "unexpected key '%s' in the header", key));
        }
        if (accept(&p, ','))
            continue;
        if (accept(&p, '}'))
            break;
        fail(L, path, lua_pushfstring(L, "cannot parse header: %s", h));
    }
    if (!have_descr || !have_order || !have_shape)
        fail(L, path, "header lacks 'descr', 'fortran_order' or 'shape'");
}

/* Parses the header text and checks that hipkit can hold what it says: a
 * supported dtype, a shape that fits, C order. */
static void parse_header(lua_State *L, const char *path, const char *h, size_t hlen, npy_header *out)
{
    char descr[64] = "";
    int fortran = 0;
    out->nd = 0;
    parse_dict(L, path, h, hlen, descr, sizeof descr, &fortran, out);
    int r = descr_dtype(descr, &out->dtype);
    if (r == -2)
        fail(L, path, lua_pushfstring(L, "big-endian data ('%s') is not supported", descr));
    if (r)
        fail(L, path, lua_pushfstring(L, "unsupported dtype '%s' (supported: <f2 <f4 <f8 "
                                         "|i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8)", descr));
    uint64_t n = 1;
    int big_dims = 0;
    for (int d = 0; d < out->nd; d++) {
        if (out->dims[d] && n > UINT64_MAX / out->dims[d])
            fail(L, path, "shape overflows");
        n *= out->dims[d];
        big_dims += out->dims[d] > 1;
    }
    /* Fortran order is C order when at most one dimension exceeds 1. */
    if (fortran && big_dims > 1)
        fail(L, path, "Fortran-order (column-major) arrays are not supported; "
                      "save with numpy.ascontiguousarray");
    if (n > SIZE_MAX / hk_dtype_size(out->dtype))
        fail(L, path, "shape overflows");
    out->n = n;
}

/* The data after the header into b, in chunks through a staging block
 * (pushed here) when b has no host pointer. */
static void read_data(lua_State *L, npyfile *nf, const char *path, hk_buffer *b, size_t bytes)
{
    unsigned char *host = hkl_host_ptr(b);
    unsigned char *tmp = host ? NULL : lua_newuserdatauv(L, CHUNK_BYTES, 0);
    if (host)
        hkl_check(L, hk_synchronize(hkl_ctx(L)));
    hkl_progress_begin("loading");
    for (size_t off = 0; off < bytes;) {
        size_t m = bytes - off < CHUNK_BYTES ? bytes - off : CHUNK_BYTES;
        size_t got = fread(host ? host + off : tmp, 1, m, nf->f);
        if (got != m) {
            hkl_progress_end();
            fail(L, path, lua_pushfstring(L, "truncated: the shape needs %I bytes of data, "
                                             "the file has %I", (lua_Integer)bytes,
                                          (lua_Integer)(off + got)));
        }
        if (!host) {
            int rc = hk_buffer_upload(b, off, tmp, m);
            if (rc) {
                hkl_progress_end();
                hkl_check(L, rc);
            }
        }
        off += m;
    }
    hkl_progress_end();
}

int hkl_npy_load(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    hk_mem_mode mode = hkl_check_mode(L, 2, "device");
    hkl_settop(L, 2);
    npyfile *nf = open_file(L, path, "rb", "load_npy"); /* 3 */
    size_t hlen;
    const char *h = read_header(L, nf, path, &hlen); /* 4 */
    npy_header hd;
    parse_header(L, path, h, hlen, &hd);

    hk_buffer *b = NULL;
    hkl_check(L, hk_buffer_alloc(hkl_ctx(L), (size_t)hd.n, hd.dtype, mode, &b));
    hkl_push_buffer(L, b, 0); /* 5 */
    read_data(L, nf, path, b, (size_t)hd.n * hk_dtype_size(hd.dtype));
    close_file(L, nf, path, "load_npy");
    hkl_settop(L, 5);
    lua_createtable(L, hd.nd, 0);
    for (int d = 0; d < hd.nd; d++) {
        lua_pushinteger(L, (lua_Integer)hd.dims[d]);
        lua_rawseti(L, -2, d + 1);
    }
    return 2;
}

void hkl_npy_register(lua_State *L)
{
    lua_pushcfunction(L, m_save);
    lua_setfield(L, -2, "save");
}
