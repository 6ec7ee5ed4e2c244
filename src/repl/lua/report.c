/* Readable values: the short aligned reports hipkit's own result tables
 * print as (k:info() as a card, hk.bench's timing line, b:stats(), the
 * lists of devices, backends, plugins and kernels), and hkl_show, which
 * the REPL prints any other table with.
 *
 * The reports are metatables with __name and __tostring on the plain
 * tables the functions already return: fields and ipairs work as before,
 * and print() and tostring() show the report too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hkl.h"

/* ------------------------------------------------------------ reading */

static const char *field_str(lua_State *L, int t, const char *key, const char *def)
{
    lua_getfield(L, t, key);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : def;
    lua_pop(L, 1); /* the table keeps the string alive */
    return s;
}

static double field_num(lua_State *L, int t, const char *key, double def)
{
    lua_getfield(L, t, key);
    double v = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : def;
    lua_pop(L, 1);
    return v;
}

/* 1536 -> "1.5 KiB"; whole numbers of a unit print without decimals. */
void hkl_format_bytes(double n, char *out, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (n >= 1024 && u < 5) {
        n /= 1024;
        u++;
    }
    if (u == 0 || n == floor(n))
        snprintf(out, cap, "%.0f %s", n, units[u]);
    else
        snprintf(out, cap, "%.1f %s", n, units[u]);
}

/* ------------------------------------------------------------ reports */

static int kernels_tostring(lua_State *L)
{
    luaL_Buffer b;
    lua_Integer n = luaL_len(L, 1);
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "%I kernel%s%s", n, n == 1 ? "" : "s", n ? ": " : "");
    luaL_addvalue(&b);
    for (lua_Integer i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addstring(&b, ", ");
        lua_rawgeti(L, 1, i);
        luaL_addvalue(&b); /* a name is a string */
    }
    luaL_pushresult(&b);
    return 1;
}

static void card_line(luaL_Buffer *b, const char *label, const char *value)
{
    char line[320];
    snprintf(line, sizeof line, "\n  %-10s %s", label, value);
    luaL_addstring(b, line);
}

/* The parameters as "v @0 (8 B), n @8 (4 B)": where each sits in the
 * kernel's argument block. */
static void card_params(lua_State *L, char *out, size_t cap)
{
    lua_getfield(L, 1, "params");
    size_t len = 0;
    out[0] = '\0';
    lua_Integer n = lua_istable(L, -1) ? luaL_len(L, -1) : 0;
    for (lua_Integer i = 1; i <= n && len + 1 < cap; i++) {
        lua_rawgeti(L, -1, i);
        int p = lua_gettop(L);
        int w = snprintf(out + len, cap - len, "%s%s @%.0f (%.0f B)", i > 1 ? ", " : "",
                         field_str(L, p, "name", "?"), field_num(L, p, "offset", 0),
                         field_num(L, p, "size", 0));
        len += w > 0 ? (size_t)w : 0;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (len >= cap)
        out[cap - 1] = '\0';
}

static int info_tostring(lua_State *L)
{
    luaL_Buffer b;
    char v[256], params[200], sz[32];
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "kernel ");
    luaL_addstring(&b, field_str(L, 1, "name", "?"));
    luaL_addstring(&b, field_str(L, 1, "signature", ""));
    double ms = field_num(L, 1, "compile_ms", 0);
    if (ms > 0)
        snprintf(v, sizeof v, "%s (compiled in %.1f ms)", field_str(L, 1, "origin", "?"), ms);
    else
        snprintf(v, sizeof v, "%s", field_str(L, 1, "origin", "?"));
    card_line(&b, "origin", v);
    double regs = field_num(L, 1, "registers", -1);
    if (regs >= 0)
        snprintf(v, sizeof v, "%.0f", regs);
    card_line(&b, "registers", regs >= 0 ? v : "- (not reported by this backend)");
    hkl_format_bytes(field_num(L, 1, "static_shared", 0), sz, sizeof sz);
    card_line(&b, "shared", sz);
    hkl_format_bytes(field_num(L, 1, "local_bytes", 0), sz, sizeof sz);
    card_line(&b, "local", sz);
    card_params(L, params, sizeof params);
    hkl_format_bytes(field_num(L, 1, "kernarg_size", 0), sz, sizeof sz);
    snprintf(v, sizeof v, "%s%s%s", sz, params[0] ? ": " : "", params);
    card_line(&b, "arguments", v);
    lua_getfield(L, 1, "uses_barriers");
    snprintf(v, sizeof v, "up to %.0f threads%s", field_num(L, 1, "max_threads_per_block", 0),
             lua_toboolean(L, -1) ? ", uses barriers" : "");
    lua_pop(L, 1);
    card_line(&b, "block", v);
    luaL_pushresult(&b);
    return 1;
}

static int stats_tostring(lua_State *L)
{
    char line[400];
    int len = snprintf(line, sizeof line, "n %.0f  mean %.6g  std %.6g  min %.6g  max %.6g",
                       field_num(L, 1, "n", 0), field_num(L, 1, "mean", NAN), field_num(L, 1, "std", NAN),
                       field_num(L, 1, "min", NAN), field_num(L, 1, "max", NAN));
    double nan = field_num(L, 1, "nan", 0), inf = field_num(L, 1, "inf", 0);
    if ((nan > 0 || inf > 0) && len > 0 && (size_t)len < sizeof line)
        snprintf(line + len, sizeof line - (size_t)len, "  nan %.0f  inf %.0f", nan, inf);
    lua_pushstring(L, line);
    return 1;
}

static int bench_tostring(lua_State *L)
{
    char line[400];
    int len = snprintf(line, sizeof line, "%s: median %.4f ms (min %.4f, max %.4f, %.0f runs)",
                       field_str(L, 1, "label", "bench"), field_num(L, 1, "median", NAN),
                       field_num(L, 1, "min", NAN), field_num(L, 1, "max", NAN), field_num(L, 1, "reps", 0));
    double gbps = field_num(L, 1, "gbps", -1), tflops = field_num(L, 1, "tflops", -1);
    if (gbps >= 0 && len > 0 && (size_t)len < sizeof line)
        len += snprintf(line + len, sizeof line - (size_t)len, ", %.1f GB/s", gbps);
    if (tflops >= 0 && len > 0 && (size_t)len < sizeof line)
        snprintf(line + len, sizeof line - (size_t)len, ", %.3f TFLOP/s", tflops);
    lua_pushstring(L, line);
    return 1;
}

/* A list report: a header, then one line per item that row() writes
 * (the item at the top of the stack), names padded to the longest. */
static int list_report(lua_State *L, const char *one, const char *many,
                       void (*row)(lua_State *, int, int, char *, size_t))
{
    lua_Integer n = luaL_len(L, 1);
    int width = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, 1, i);
        int w = lua_istable(L, -1) ? (int)strlen(field_str(L, lua_gettop(L), "name", "")) : 0;
        width = w > width ? w : width;
        lua_pop(L, 1);
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "%I %s", n, n == 1 ? one : many);
    luaL_addvalue(&b);
    for (lua_Integer i = 1; i <= n; i++) {
        char line[512];
        lua_rawgeti(L, 1, i);
        if (lua_istable(L, -1))
            row(L, lua_gettop(L), width, line, sizeof line);
        else
            snprintf(line, sizeof line, "?");
        lua_pop(L, 1);
        luaL_addstring(&b, "\n  ");
        luaL_addstring(&b, line);
    }
    luaL_pushresult(&b);
    return 1;
}

static void device_row(lua_State *L, int t, int width, char *out, size_t cap)
{
    (void)width;
    size_t len;
    const char *s = luaL_tolstring(L, t, &len); /* the device's own one line */
    snprintf(out, cap, "%.0f  %s", field_num(L, t, "id", 0) + 1, s);
    lua_pop(L, 1);
}

static void backend_row(lua_State *L, int t, int width, char *out, size_t cap)
{
    lua_getfield(L, t, "available");
    int ok = lua_toboolean(L, -1);
    lua_pop(L, 1);
    const char *tool = field_str(L, t, "toolchain", "");
    if (ok)
        snprintf(out, cap, "%-*s  %.0f device(s)%s%s", width, field_str(L, t, "name", "?"),
                 field_num(L, t, "devices", 0), tool[0] ? ", " : "", tool);
    else
        snprintf(out, cap, "%-*s  unavailable: %s", width, field_str(L, t, "name", "?"),
                 field_str(L, t, "reason", "?"));
}

static void plugin_row(lua_State *L, int t, int width, char *out, size_t cap)
{
    lua_getfield(L, t, "kernels");
    lua_Integer nk = lua_istable(L, -1) ? luaL_len(L, -1) : 0;
    lua_getfield(L, t, "ops");
    lua_Integer no = lua_istable(L, -1) ? luaL_len(L, -1) : 0;
    lua_pop(L, 2);
    const char *err = field_str(L, t, "error", NULL);
    snprintf(out, cap, "%-*s  %-8s %3d kernels %2d ops  %s", width, field_str(L, t, "name", "?"),
             field_str(L, t, "version", ""), (int)nk, (int)no,
             err ? err : field_str(L, t, "description", ""));
}

static int devices_tostring(lua_State *L) { return list_report(L, "device", "devices", device_row); }
static int backends_tostring(lua_State *L) { return list_report(L, "backend", "backends", backend_row); }
static int plugins_tostring(lua_State *L)
{
    return list_report(L, "kernel family", "kernel families", plugin_row);
}

static const struct {
    const char *kind;
    lua_CFunction tostring;
} kinds[] = {
    {"kernels", kernels_tostring}, {"kernel_info", info_tostring}, {"stats", stats_tostring},
    {"bench", bench_tostring},     {"devices", devices_tostring},  {"backends", backends_tostring},
    {"plugins", plugins_tostring},
};

void hkl_report(lua_State *L, const char *kind)
{
    char name[64];
    snprintf(name, sizeof name, "hk.%s", kind);
    luaL_setmetatable(L, name);
}

void hkl_report_register(lua_State *L)
{
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        lua_pushfstring(L, "hk.%s", kinds[i].kind);
        luaL_newmetatable(L, lua_tostring(L, -1));
        lua_pushcfunction(L, kinds[i].tostring);
        lua_setfield(L, -2, "__tostring");
        lua_pop(L, 2);
    }
}
