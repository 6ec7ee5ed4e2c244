/* A failed compile's message as the user reads it: the compiler's lines
 * about the user's source, without the notes about hipkit's own headers
 * (the candidates of an overloaded intrinsic, the macros that generate
 * them), which can run to hundreds of lines in the private folder. */
#include <stdlib.h>
#include <string.h>

#include "hkl.h"

/* A location in hipkit's headers or its generated wrapper: they live in a
 * folder named hipkit-... (the host backend's, the offline compilers') or
 * are named hipkit_*.h (the GPU backends' embedded headers). */
static int internal_location(const char *line, size_t n)
{
    const char *p = line, *end = line + n;
    while (p < end && *p == ' ')
        p++;
    static const char *const leads[] = {"In file included from ", "from "};
    for (size_t i = 0; i < sizeof leads / sizeof *leads; i++)
        if ((size_t)(end - p) > strlen(leads[i]) && strncmp(p, leads[i], strlen(leads[i])) == 0)
            p += strlen(leads[i]);
    const char *colon = memchr(p, ':', (size_t)(end - p));
    if (colon == NULL || colon == p)
        return -1; /* not a location */
    for (const char *q = p; q + 7 <= colon; q++)
        if (strncmp(q, "hipkit-", 7) == 0 || strncmp(q, "hipkit_", 7) == 0)
            return 1;
    return 0;
}

/* A line of source the compiler quotes under a location ("  553 |  ...",
 * "      |  ^~~~"): it goes with that location. */
static int quoted_source(const char *line, size_t n)
{
    size_t i = 0;
    while (i < n && line[i] == ' ')
        i++;
    while (i < n && line[i] >= '0' && line[i] <= '9')
        i++;
    while (i < n && line[i] == ' ')
        i++;
    return i < n && line[i] == '|';
}

/* Pushes msg without the lines about hipkit's headers, and a count of them.
 * When no line is left that names the user's own error (all of it is in
 * hipkit's headers), pushes msg whole. */
static void push_trimmed(lua_State *L, const char *msg)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    int dropping = 0, dropped = 0, user_errors = 0;
    for (const char *p = msg; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        int where = quoted_source(p, n) ? -1 : internal_location(p, n);
        if (where >= 0)
            dropping = where;
        else if (!quoted_source(p, n))
            dropping = 0;
        if (dropping) {
            dropped++;
        } else {
            luaL_addlstring(&b, p, n + (nl != NULL));
            user_errors += where == 0 && memmem(p, n, "error", 5) != NULL;
        }
        p += n + (nl != NULL);
    }
    luaL_pushresult(&b);
    if (dropped == 0 || user_errors == 0) {
        lua_pop(L, 1);
        lua_pushstring(L, msg);
        return;
    }
    size_t len;
    const char *kept = lua_tolstring(L, -1, &len);
    lua_pushfstring(L, "%s%s(%d lines about hipkit's own headers left out; HIPKIT_FULL_LOG=1 keeps them)",
                    kept, len && kept[len - 1] != '\n' ? "\n" : "", dropped);
    lua_remove(L, -2);
}

int hkl_compile_failed(lua_State *L, int rc)
{
    const char *msg = hk_errmsg(hkl_ctx(L));
    const char *full = getenv("HIPKIT_FULL_LOG");
    if (rc != HK_ECOMPILE || !*msg || (full && *full && strcmp(full, "0") != 0))
        return hkl_error(L, rc, NULL);
    luaL_where(L, 1);
    push_trimmed(L, msg);
    lua_concat(L, 2);
    return lua_error(L);
}
