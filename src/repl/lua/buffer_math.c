/* Buffer statistics and comparison: b:stats() and b:allclose(other), which
 * read a buffer through spans and reduce it in double precision. */
#include <math.h>
#include <stdio.h>

#include "buffer.h"

static void push_stat_int(lua_State *L, hk_dtype t, uint64_t v)
{
    if (t == HK_U64 && v > (uint64_t)INT64_MAX)
        lua_pushnumber(L, (double)v); /* stats are for reading: no wraparound */
    else
        lua_pushinteger(L, (lua_Integer)v);
}

/* min, max, mean, std (population) over the finite elements, in double,
 * with the block means combined as Chan et al. do; nan and inf count the
 * others. With no finite element, min/max/mean/std are NaN. */
static int m_stats(lua_State *L)
{
    hk_buffer *b = hkl_check_buffer(L, 1);
    span s;
    span_init(L, &s, b, 0);
    size_t per = chunk_elems(s.es);
    double v[BLOCK];
    double mean = 0, m2 = 0, fmin = INFINITY, fmax = -INFINITY;
    uint64_t cnt = 0, nan = 0, inf = 0;
    int64_t imin = INT64_MAX, imax = INT64_MIN;
    uint64_t umin = UINT64_MAX, umax = 0;
    for (size_t first = 0; first < s.n; first += per) {
        size_t m = s.n - first < per ? s.n - first : per;
        const unsigned char *p = span_read(L, &s, first, m);
        for (size_t k0 = 0; k0 < m; k0 += BLOCK) {
            size_t bn = m - k0 < BLOCK ? m - k0 : BLOCK;
            const unsigned char *bp = p + k0 * s.es;
            to_f64(s.t, bp, v, bn);
            if (s.t == HK_U64) {
                for (size_t k = 0; k < bn; k++) {
                    uint64_t x = hk_dtype_load_u64(s.t, bp + k * 8);
                    umin = x < umin ? x : umin;
                    umax = x > umax ? x : umax;
                }
            } else if (!is_float(s.t)) {
                for (size_t k = 0; k < bn; k++) {
                    int64_t x = hk_dtype_load_i64(s.t, bp + k * s.es);
                    imin = x < imin ? x : imin;
                    imax = x > imax ? x : imax;
                }
            }
            double sum = 0;
            size_t c = 0;
            for (size_t k = 0; k < bn; k++) {
                double x = v[k];
                if (isnan(x)) {
                    nan++;
                } else if (isinf(x)) {
                    inf++;
                } else {
                    sum += x;
                    fmin = x < fmin ? x : fmin;
                    fmax = x > fmax ? x : fmax;
                    v[c++] = x;
                }
            }
            if (!c)
                continue;
            double bmean = sum / (double)c, bm2 = 0;
            for (size_t k = 0; k < c; k++)
                bm2 += (v[k] - bmean) * (v[k] - bmean);
            double tot = (double)cnt + (double)c, d = bmean - mean;
            mean += d * (double)c / tot;
            m2 += bm2 + d * d * (double)cnt * (double)c / tot;
            cnt += c;
        }
    }
    lua_createtable(L, 0, 7);
    if (!cnt) {
        fmin = fmax = mean = NAN;
    }
    if (cnt && s.t == HK_U64) {
        push_stat_int(L, s.t, umin);
        lua_setfield(L, -2, "min");
        push_stat_int(L, s.t, umax);
        lua_setfield(L, -2, "max");
    } else if (cnt && !is_float(s.t)) {
        lua_pushinteger(L, imin);
        lua_setfield(L, -2, "min");
        lua_pushinteger(L, imax);
        lua_setfield(L, -2, "max");
    } else {
        lua_pushnumber(L, fmin);
        lua_setfield(L, -2, "min");
        lua_pushnumber(L, fmax);
        lua_setfield(L, -2, "max");
    }
    lua_pushnumber(L, mean);
    lua_setfield(L, -2, "mean");
    lua_pushnumber(L, cnt ? sqrt(m2 / (double)cnt) : NAN);
    lua_setfield(L, -2, "std");
    lua_pushinteger(L, (lua_Integer)nan);
    lua_setfield(L, -2, "nan");
    lua_pushinteger(L, (lua_Integer)inf);
    lua_setfield(L, -2, "inf");
    lua_pushinteger(L, (lua_Integer)s.n);
    lua_setfield(L, -2, "n");
    hkl_report(L, "stats");
    return 1;
}

#define WORST 5

/* Integer elements compare exactly: i64 and u64 values beyond 2^53 collide
 * as doubles ((1 << 60) and (1 << 60) + 1 are one double), and allclose at
 * rtol = atol = 0 must still tell them apart. 128 bits hold the difference
 * of any two of them. */
__extension__ typedef __int128 wide;

/* Element k of a block in exact form, where both sides are integers. */
typedef struct exact_block {
    wide got[BLOCK], want[BLOCK];
    unsigned char on[BLOCK]; /* 0: this element compares as doubles */
} exact_block;

static wide load_wide(hk_dtype t, const unsigned char *p)
{
    return t == HK_U64 ? (wide)hk_dtype_load_u64(t, p) : (wide)hk_dtype_load_i64(t, p);
}

typedef struct mismatch {
    size_t i;
    double got, want, excess;
} mismatch;

/* What allclose has seen so far: the tolerances, how many elements differ,
 * and the WORST ones by how far they are out of tolerance. */
typedef struct verdict {
    double rtol, atol;
    uint64_t bad;
    int nworst;
    mismatch worst[WORST];
} verdict;

/* The other side (argument 2), checked against this buffer's length n: a
 * buffer, returned; or a table or a function (NULL). *kind is its type. */
static hk_buffer *check_other(lua_State *L, size_t n, int *kind)
{
    *kind = lua_type(L, 2);
    if (*kind == LUA_TUSERDATA) {
        hk_buffer *ob = hkl_check_buffer(L, 2);
        if (hk_buffer_length(ob) != n)
            luaL_argerror(L, 2, lua_pushfstring(L, "lengths differ (this %I, other %I)",
                                                (lua_Integer)n, (lua_Integer)hk_buffer_length(ob)));
        return ob;
    }
    if (*kind == LUA_TTABLE) {
        lua_Integer tn = luaL_len(L, 2);
        if ((uint64_t)tn != n)
            luaL_argerror(L, 2, lua_pushfstring(L, "lengths differ (this %I, table %I)",
                                                (lua_Integer)n, tn));
    } else if (*kind != LUA_TFUNCTION) {
        luaL_typeerror(L, 2, "buffer, table or function");
    }
    return NULL;
}

/* want[0..bn): elements first + 1 ... of the table or the function of the
 * 1-based index at argument 2, each a number. Where ex is not NULL (this
 * buffer holds integers) a Lua integer is also kept exactly, read as u64
 * reads it back when u64 is set (values above 2^63 - 1 wrap negative). */
static void want_from_lua(lua_State *L, int kind, size_t first, double *want, size_t bn,
                          exact_block *ex, int u64)
{
    for (size_t k = 0; k < bn; k++) {
        lua_Integer idx = (lua_Integer)(first + k + 1);
        if (kind == LUA_TTABLE) {
            lua_geti(L, 2, idx);
        } else {
            lua_pushvalue(L, 2);
            lua_pushinteger(L, idx);
            lua_call(L, 1, 1);
        }
        int isnum;
        want[k] = lua_tonumberx(L, -1, &isnum);
        if (!isnum || lua_type(L, -1) != LUA_TNUMBER)
            luaL_error(L, "allclose: %s gave %s for element %I, not a number",
                       kind == LUA_TTABLE ? "the table" : "the function", luaL_typename(L, -1), idx);
        if (ex && (ex->on[k] = (unsigned char)lua_isinteger(L, -1))) {
            lua_Integer w = lua_tointeger(L, -1);
            ex->want[k] = u64 ? (wide)(uint64_t)w : (wide)w;
        }
        lua_pop(L, 1);
    }
}

/* Compares one block of bn elements starting at element first; those ex
 * marks (ex may be NULL) as integers, exactly. */
static void judge(verdict *v, const double *got, const double *want, const exact_block *ex,
                  size_t bn, size_t first)
{
    for (size_t k = 0; k < bn; k++) {
        double g = got[k], w = want[k], excess;
        if (ex && ex->on[k]) {
            wide d = ex->got[k] - ex->want[k];
            if (!d)
                continue;
            if ((excess = (double)(d < 0 ? -d : d) - v->atol - v->rtol * fabs(w)) <= 0)
                continue;
        } else if (isnan(g) || isnan(w))
            excess = INFINITY;
        else if (g == w)
            continue;
        else if (isinf(g) || isinf(w))
            excess = INFINITY;
        else if ((excess = fabs(g - w) - v->atol - v->rtol * fabs(w)) <= 0)
            continue;
        v->bad++;
        if (v->nworst == WORST && !(excess > v->worst[WORST - 1].excess))
            continue;
        int at = v->nworst < WORST ? v->nworst++ : WORST - 1;
        while (at > 0 && v->worst[at - 1].excess < excess) {
            v->worst[at] = v->worst[at - 1];
            at--;
        }
        v->worst[at] = (mismatch){first + k, g, w, excess};
    }
}

/* Pushes false, the report {count, worst = {{i, got, want, err}...},
 * message} and the message. */
static int push_report(lua_State *L, const verdict *v, size_t n)
{
    lua_pushboolean(L, 0);
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)v->bad);
    lua_setfield(L, -2, "count");
    lua_createtable(L, v->nworst, 0);
    char line[160];
    snprintf(line, sizeof line, "%llu of %zu elements differ (rtol %g, atol %g); worst:",
             (unsigned long long)v->bad, n, v->rtol, v->atol);
    lua_pushstring(L, line);
    for (int w = 0; w < v->nworst; w++) {
        const mismatch *m = &v->worst[w];
        lua_createtable(L, 0, 4);
        lua_pushinteger(L, (lua_Integer)m->i + 1);
        lua_setfield(L, -2, "i");
        lua_pushnumber(L, m->got);
        lua_setfield(L, -2, "got");
        lua_pushnumber(L, m->want);
        lua_setfield(L, -2, "want");
        lua_pushnumber(L, fabs(m->got - m->want));
        lua_setfield(L, -2, "err");
        lua_rawseti(L, -3, w + 1);
        char g[32], x[32];
        fmt_num(g, sizeof g, "%.9g", m->got);
        fmt_num(x, sizeof x, "%.9g", m->want);
        snprintf(line, sizeof line, "%s [%zu] got %s want %s", w ? "," : "", m->i + 1, g, x);
        lua_pushstring(L, line);
        lua_concat(L, 2);
    }
    /* stack: false, report, worst, message */
    lua_pushvalue(L, -1);
    lua_setfield(L, -4, "message");
    lua_rotate(L, -2, 1);
    lua_setfield(L, -3, "worst");
    return 3;
}

/* allclose(other, rtol, atol): |got - want| <= atol + rtol * |want| for every
 * element, as numpy.allclose; NaN never matches, equal infinities do. other
 * is a buffer, a table or a function of the 1-based index. */
static int m_allclose(lua_State *L)
{
    hk_buffer *b = hkl_check_buffer(L, 1);
    size_t n = hk_buffer_length(b);
    verdict v = {.rtol = luaL_optnumber(L, 3, 1e-5), .atol = luaL_optnumber(L, 4, 1e-8)};
    luaL_argcheck(L, v.rtol >= 0, 3, "rtol must be >= 0");
    luaL_argcheck(L, v.atol >= 0, 4, "atol must be >= 0");
    int kind;
    hk_buffer *ob = check_other(L, n, &kind);
    hkl_settop(L, 4);
    /* The callback, or the table's __index, runs Lua: hold both sides. */
    hkl_hold_buffer(L, 1, "b:allclose");
    if (ob)
        hkl_hold_buffer(L, 2, "b:allclose");
    span s, os;
    span_init(L, &s, b, 0);
    size_t per = chunk_elems(s.es);
    if (ob) {
        span_init(L, &os, ob, 0);
        per = chunk_elems(s.es > os.es ? s.es : os.es);
    }
    double got[BLOCK], want[BLOCK];
    int ints = !is_float(s.t) && (!ob || !is_float(os.t));
    exact_block *ex = ints ? lua_newuserdatauv(L, sizeof *ex, 0) : NULL;
    for (size_t first = 0; first < n; first += per) {
        size_t m = n - first < per ? n - first : per;
        const unsigned char *p = span_read(L, &s, first, m);
        const unsigned char *op = ob ? span_read(L, &os, first, m) : NULL;
        for (size_t k0 = 0; k0 < m; k0 += BLOCK) {
            size_t bn = m - k0 < BLOCK ? m - k0 : BLOCK;
            to_f64(s.t, p + k0 * s.es, got, bn);
            if (ob)
                to_f64(os.t, op + k0 * os.es, want, bn);
            else
                want_from_lua(L, kind, first + k0, want, bn, ex, s.t == HK_U64);
            for (size_t k = 0; ex && k < bn; k++) {
                ex->got[k] = load_wide(s.t, p + (k0 + k) * s.es);
                if (ob) {
                    ex->want[k] = load_wide(os.t, op + (k0 + k) * os.es);
                    ex->on[k] = 1;
                }
            }
            judge(&v, got, want, ex, bn, first + k0);
        }
    }
    if (!v.bad) {
        lua_pushboolean(L, 1);
        return 1;
    }
    return push_report(L, &v, n);
}

void hkl_buffer_math_register(lua_State *L)
{
    lua_pushcfunction(L, m_stats);
    lua_setfield(L, -2, "stats");
    lua_pushcfunction(L, m_allclose);
    lua_setfield(L, -2, "allclose");
}
