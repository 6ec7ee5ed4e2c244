/* hk.bench(fn, {warmup=, reps=, bytes=, flops=, label=, print=}): times fn
 * with device events around each call (on the CPU backend they read the
 * clock after a launch that has finished), returns and prints the median,
 * min and max milliseconds, and GB/s or TFLOP/s when bytes or flops are
 * given. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hkl.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct bench_state {
    hk_event *start, *end;
    double *times;
} bench_state;

static void bench_state_free(bench_state *st)
{
    hk_event_destroy(st->start);
    hk_event_destroy(st->end);
    free(st->times);
    st->start = st->end = NULL;
    st->times = NULL;
}

/* Frees the events and the timing array even when fn raised an error. */
static int bench_state_gc(lua_State *L)
{
    bench_state_free(lua_touserdata(L, 1));
    return 0;
}

/* Errors say hk.bench, the function the user called, and where the user
 * called it: this one is reached through tune.lua's wrapper (level 1 of
 * the call stack is the wrapper, level 2 its caller). */
static int bench_error(lua_State *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    luaL_where(L, 2);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    lua_concat(L, 2);
    return lua_error(L);
}

static lua_Number opt_number(lua_State *L, int opts, const char *field, lua_Number def)
{
    lua_getfield(L, opts, field);
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TNUMBER)
        bench_error(L, "hk.bench: option '%s' must be a number, not a %s", field, luaL_typename(L, -1));
    lua_Number v = luaL_optnumber(L, -1, def);
    lua_pop(L, 1);
    return v;
}

static int l_bench(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TFUNCTION)
        return bench_error(L, "hk.bench: expects a function (or a table of them), not a %s",
                          luaL_typename(L, 1));
    if (lua_isnoneornil(L, 2)) {
        lua_settop(L, 1);
        lua_newtable(L);
    }
    if (lua_type(L, 2) != LUA_TTABLE)
        return bench_error(L, "hk.bench: options must be a table, not a %s", luaL_typename(L, 2));
    /* unknown options: hk.bench in tune.lua refuses them, for both forms */
    lua_Number fwarmup = opt_number(L, 2, "warmup", 3), freps = opt_number(L, 2, "reps", 20);
    if (!(fwarmup >= 0 && fwarmup <= 1000000 && freps >= 1 && freps <= 1000000) ||
        fwarmup != (int)fwarmup || freps != (int)freps)
        return bench_error(L, "hk.bench: warmup must be an integer in [0, 1e6] and reps in [1, 1e6]");
    int warmup = (int)fwarmup, reps = (int)freps;
    double bytes = opt_number(L, 2, "bytes", 0), flops = opt_number(L, 2, "flops", 0);
    if (!(bytes >= 0 && flops >= 0) || isinf(bytes) || isinf(flops))
        return bench_error(L, "hk.bench: bytes and flops must be finite numbers >= 0");
    lua_getfield(L, 2, "label");
    if (!lua_isnil(L, -1) && !lua_isstring(L, -1))
        return bench_error(L, "hk.bench: option 'label' must be a string, not a %s", luaL_typename(L, -1));
    const char *label = luaL_optstring(L, -1, "bench");
    lua_getfield(L, 2, "print");
    int print = lua_isnil(L, -1) || lua_toboolean(L, -1);
    lua_pop(L, 1);

    hk_context *ctx = hkl_ctx(L);
    bench_state *st = lua_newuserdatauv(L, sizeof *st, 0);
    st->start = st->end = NULL;
    st->times = NULL;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, bench_state_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    st->times = malloc(sizeof(double) * (size_t)reps);
    if (!st->times)
        return luaL_error(L, "out of memory");
    hkl_check(L, hk_event_create(ctx, &st->start));
    hkl_check(L, hk_event_create(ctx, &st->end));

    char what[160];
    snprintf(what, sizeof what, "%s: %d runs", label, warmup + reps);
    hkl_progress_begin(what);
    for (int i = 0; i < warmup + reps; i++) {
        hk_event_record(st->start);
        lua_pushvalue(L, 1);
        if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
            hkl_progress_end();
            return lua_error(L);
        }
        hk_event_record(st->end);
        hk_event_synchronize(st->end);
        double ms;
        hkl_check(L, hk_event_elapsed_ms(st->start, st->end, &ms));
        if (i >= warmup)
            st->times[i - warmup] = ms;
    }
    hkl_progress_end();
    qsort(st->times, (size_t)reps, sizeof(double), cmp_double);
    double med = reps % 2 ? st->times[reps / 2] : (st->times[reps / 2 - 1] + st->times[reps / 2]) / 2;
    double mn = st->times[0], mx = st->times[reps - 1];

    lua_createtable(L, 0, 7);
    lua_pushstring(L, label);
    lua_setfield(L, -2, "label");
    lua_pushnumber(L, med);
    lua_setfield(L, -2, "median");
    lua_pushnumber(L, mn);
    lua_setfield(L, -2, "min");
    lua_pushnumber(L, mx);
    lua_setfield(L, -2, "max");
    lua_pushinteger(L, reps);
    lua_setfield(L, -2, "reps");
    char rate[64] = "";
    if (bytes > 0) {
        double gbps = bytes / (med * 1e-3) / 1e9;
        lua_pushnumber(L, gbps);
        lua_setfield(L, -2, "gbps");
        snprintf(rate, sizeof rate, ", %.1f GB/s", gbps);
    }
    if (flops > 0) {
        double tflops = flops / (med * 1e-3) / 1e12;
        lua_pushnumber(L, tflops);
        lua_setfield(L, -2, "tflops");
        size_t len = strlen(rate);
        snprintf(rate + len, sizeof rate - len, ", %.3f TFLOP/s", tflops);
    }
    if (print)
        printf("%s: median %.4f ms (min %.4f, max %.4f, %d runs)%s\n", label, med, mn, mx, reps, rate);
    bench_state_free(st); /* done with them; the __gc later is a no-op */
    hkl_report(L, "bench");
    return 1;
}

void hkl_bench_register(lua_State *L)
{
    lua_pushcfunction(L, l_bench);
    lua_setfield(L, -2, "bench");
}
