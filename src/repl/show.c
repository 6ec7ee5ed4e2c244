/* How the REPL prints a table that has no __tostring of its own: nested,
 * keys sorted (the array part first, in order), long tables elided with a
 * count, on one line when that is short, else one entry per line.
 *
 * Tables are read raw: printing must never run code of the user's (an
 * __index that fails, or has effects) or loop on a cycle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "repl.h"

#define SHOW_ITEMS 20 /* entries shown before "... (N more)" */
#define SHOW_DEPTH 4  /* tables deeper print as {...} */
#define SHOW_WIDTH 72 /* a table fits on a line up to this many bytes */

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *bigger = realloc(t->s, cap);
        if (bigger == NULL)
            return; /* what fits is printed */
        t->s = bigger;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static int is_name(const char *s, size_t n)
{
    static const char *const reserved[] = {
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
        "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    };
    if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return 0;
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strcmp(s, reserved[i]) == 0)
            return 0;
    return 1;
}

static void put_quoted(text *t, const char *s, size_t n)
{
    put(t, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        char esc[8];
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            snprintf(esc, sizeof esc, "\\%c", c);
        else if (c == '\n')
            snprintf(esc, sizeof esc, "\\n");
        else if (c < 32 || c == 127)
            snprintf(esc, sizeof esc, "\\%u", c);
        else {
            put(t, s + i, 1);
            continue;
        }
        puts_(t, esc);
    }
    put(t, "\"", 1);
}

/* One key as written in a constructor: name = , [1.5] = , ["a b"] = . */
static void put_key(lua_State *L, text *t, int idx)
{
    size_t n;
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tolstring(L, idx, &n);
        if (is_name(s, n)) {
            put(t, s, n);
        } else {
            put(t, "[", 1);
            put_quoted(t, s, n);
            put(t, "]", 1);
        }
    } else {
        put(t, "[", 1);
        const char *s = luaL_tolstring(L, idx, &n);
        put(t, s, n);
        lua_pop(L, 1);
        put(t, "]", 1);
    }
    put(t, " = ", 3);
}

/* Key order: numbers ascending, then strings, then everything else. */
typedef struct key {
    int rank;
    lua_Number num;
    const char *str;
    int slot; /* index in the table of keys */
} key;

static int cmp_key(const void *a, const void *b)
{
    const key *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    if (x->rank == 0)
        return x->num < y->num ? -1 : x->num > y->num;
    if (x->rank == 1)
        return strcmp(x->str, y->str);
    return x->slot - y->slot;
}

static void show_value(lua_State *L, text *t, int idx, int depth, int indent);

/* Collects the keys of the table at idx into a new table on top of the
 * stack and a sorted array (to free). */
static key *sorted_keys(lua_State *L, int idx, int *count)
{
    int n = 0, cap = 16;
    key *keys = malloc(sizeof *keys * (size_t)cap);
    lua_newtable(L);
    int kt = lua_gettop(L);
    lua_pushnil(L);
    while (keys != NULL && lua_next(L, idx)) {
        lua_pop(L, 1);
        if (n == cap) {
            key *bigger = realloc(keys, sizeof *keys * (size_t)(cap *= 2));
            if (bigger == NULL)
                break;
            keys = bigger;
        }
        lua_pushvalue(L, -1);
        lua_rawseti(L, kt, n + 1);
        int ty = lua_type(L, -1);
        keys[n].rank = ty == LUA_TNUMBER ? 0 : ty == LUA_TSTRING ? 1 : 2;
        keys[n].num = ty == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
        keys[n].str = ty == LUA_TSTRING ? lua_tostring(L, -1) : NULL; /* kept by kt */
        keys[n].slot = n + 1;
        n++;
    }
    lua_settop(L, kt);
    if (keys != NULL)
        qsort(keys, (size_t)n, sizeof *keys, cmp_key);
    *count = keys != NULL ? n : 0;
    return keys;
}

static void show_table(lua_State *L, text *t, int idx, int depth, int indent)
{
    int n;
    key *keys = sorted_keys(L, idx, &n);
    int kt = lua_gettop(L);
    lua_Integer seq = (lua_Integer)lua_rawlen(L, idx);
    int shown = n < SHOW_ITEMS ? n : SHOW_ITEMS;
    text *items = calloc((size_t)(shown > 0 ? shown : 1), sizeof *items);
    char *bare = calloc((size_t)(shown > 0 ? shown : 1), 1);
    size_t total = 0;
    int multiline = 0;
    for (int i = 0; items != NULL && bare != NULL && i < shown; i++) {
        lua_rawgeti(L, kt, keys[i].slot);
        /* the array part 1..#t is written without its keys */
        bare[i] = keys[i].rank == 0 && lua_isinteger(L, -1) && lua_tointeger(L, -1) == i + 1 && i < seq;
        if (!bare[i])
            put_key(L, &items[i], lua_gettop(L));
        lua_rawget(L, idx);
        show_value(L, &items[i], lua_gettop(L), depth + 1, indent + 2);
        lua_pop(L, 1);
        total += items[i].len + 2;
        multiline |= items[i].s != NULL && strchr(items[i].s, '\n') != NULL;
    }
    multiline |= total + (size_t)indent > SHOW_WIDTH;
    char more[48] = "";
    if (n > shown)
        snprintf(more, sizeof more, "... (%d more)", n - shown);
    put(t, "{", 1);
    size_t col = 0; /* where the line being written has got to */
    for (int i = 0; items != NULL && i <= shown; i++) {
        const char *s = i < shown ? items[i].s : more;
        if (s == NULL || s[0] == '\0')
            continue;
        size_t len = strlen(s);
        /* array items share lines, as many as fit; a keyed entry, the
         * count of those left out or a nested multi-line one stand alone */
        int pack = i < shown && bare[i] && col > 0 && i > 0 && bare[i - 1] &&
                   col + len + 2 <= SHOW_WIDTH && strchr(s, '\n') == NULL;
        if (multiline && !pack) {
            put(t, "\n", 1);
            for (int k = 0; k < indent + 2; k++)
                put(t, " ", 1);
            col = (size_t)indent + 2;
        } else if (i > 0) {
            put(t, " ", 1);
            col++;
        }
        puts_(t, s);
        col += len + 1;
        if (i < shown - 1 || (i == shown - 1 && more[0]))
            put(t, ",", 1);
    }
    if (multiline) {
        put(t, "\n", 1);
        for (int k = 0; k < indent; k++)
            put(t, " ", 1);
    }
    put(t, "}", 1);
    for (int i = 0; items != NULL && i < shown; i++)
        free(items[i].s);
    free(items);
    free(bare);
    free(keys);
    lua_settop(L, kt - 1);
}

/* Tables being printed, so a cycle prints as <cycle>: the registry's
 * table at this key, table -> true. */
static const char seen_key = 0;

static void show_value(lua_State *L, text *t, int idx, int depth, int indent)
{
    size_t n;
    if (!lua_checkstack(L, 8)) {
        puts_(t, "...");
        return;
    }
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tolstring(L, idx, &n);
        put_quoted(t, s, n);
        return;
    }
    if (lua_type(L, idx) != LUA_TTABLE || luaL_getmetafield(L, idx, "__tostring") != LUA_TNIL ||
        luaL_getmetafield(L, idx, "__name") != LUA_TNIL) {
        if (lua_type(L, idx) == LUA_TTABLE)
            lua_pop(L, 1); /* the metafield: a table that prints itself does so */
        const char *s = luaL_tolstring(L, idx, &n);
        put(t, s, n);
        lua_pop(L, 1);
        return;
    }
    lua_rawgetp(L, LUA_REGISTRYINDEX, &seen_key);
    int seen = lua_gettop(L);
    lua_pushvalue(L, idx);
    if (lua_rawget(L, seen) != LUA_TNIL) {
        puts_(t, "<cycle>");
    } else if (depth >= SHOW_DEPTH) {
        puts_(t, "{...}");
    } else {
        lua_pushvalue(L, idx);
        lua_pushboolean(L, 1);
        lua_rawset(L, seen);
        show_table(L, t, idx, depth, indent);
        lua_pushvalue(L, idx);
        lua_pushnil(L);
        lua_rawset(L, seen);
    }
    lua_settop(L, seen - 1);
}

const char *hkr_show(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE || luaL_getmetafield(L, idx, "__tostring") ||
        luaL_getmetafield(L, idx, "__name")) {
        if (lua_type(L, idx) == LUA_TTABLE)
            lua_pop(L, 1);
        return luaL_tolstring(L, idx, NULL);
    }
    lua_newtable(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &seen_key);
    text t = {NULL, 0, 0};
    show_value(L, &t, idx, 0, 0);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &seen_key);
    lua_pushstring(L, t.s != NULL ? t.s : "{}");
    free(t.s);
    return lua_tostring(L, -1);
}
