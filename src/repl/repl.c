/* The read-eval-print loop and the protected calls that keep a session
 * alive through errors. Lines come from line_edit.c, whatever reads them.
 *
 * Structure follows Lua's own interpreter: a line is first tried as
 * `return <line>` so expressions print, then as a statement; a syntax error
 * at <eof> means the chunk goes on, so another line is read and the whole is
 * compiled again (a `[[ ... ]]` kernel source spans lines that way). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "lua/hkl.h"
#include "interrupt.h"
#include "line_edit.h"
#include "repl.h"

#define PROMPT "hk> "
#define PROMPT_MORE ">> "

/* ------------------------------------------------------- protected calls */

/* hipkit's errors are strings that already say what went wrong and where;
 * a traceback after each would bury them in the REPL. Anything else (an
 * error table, nil) is unexpected and gets the traceback to find it. */
static int msghandler(lua_State *L)
{
    int always = lua_toboolean(L, lua_upvalueindex(1));
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        else
            msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
        luaL_traceback(L, L, msg, 1);
        return 1;
    }
    if (always)
        luaL_traceback(L, L, msg, 1);
    return 1;
}

int hkr_call(lua_State *L, int narg, int nres, int traceback)
{
    int base = lua_gettop(L) - narg;
    lua_pushboolean(L, traceback);
    lua_pushcclosure(L, msghandler, 1);
    lua_insert(L, base);
    int status = lua_pcall(L, narg, nres, base);
    lua_remove(L, base);
    return status;
}

void hkr_report(lua_State *L, const char *prefix)
{
    const char *msg = lua_tostring(L, -1);
    if (msg == NULL)
        msg = "(error object is not a string)";
    fprintf(stderr, "%s%s\n", prefix, msg);
    fflush(stderr);
    lua_pop(L, 1);
}

/* Prints its arguments with tostring, tables readably (hkr_show), tab
 * separated. Called protected, as a __tostring metamethod may fail. */
static int print_values(lua_State *L)
{
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
        size_t len;
        hkr_show(L, i);
        const char *s = lua_tolstring(L, -1, &len);
        if (i > 1)
            fputc('\t', stdout);
        fwrite(s, 1, len, stdout);
        lua_pop(L, 1);
    }
    fputc('\n', stdout);
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------------ loop */

/* Lua's parser reports a chunk cut short as an error "near <eof>". */
static int incomplete(lua_State *L)
{
    size_t len;
    const char *msg = lua_tolstring(L, -1, &len);
    return msg != NULL && len >= 5 && strcmp(msg + len - 5, "<eof>") == 0;
}

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r')
            return 0;
    return 1;
}

static char *join_lines(char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = realloc(a, la + lb + 2);
    if (s == NULL) {
        free(a);
        return NULL;
    }
    s[la] = '\n';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

/* Reads lines until one is not blank; a Ctrl-C there just gives a fresh
 * prompt. NULL at the end of input. */
static char *read_first(void)
{
    char *text = hkl_line_read(PROMPT);
    while (text != NULL && is_blank(text)) {
        hkl_line_interrupted();
        hkl_line_free(text);
        text = hkl_line_read(PROMPT);
    }
    return text;
}

/* Reads one entry: returns the text typed (to free) with its compiled
 * chunk or its error message on the stack and *status set, or NULL at end
 * of input with nothing pushed. A Ctrl-C at a continuation prompt drops
 * the chunk begun and starts over. */
static char *read_entry(lua_State *L, int *status)
{
again:;
    char *text = read_first();
    if (text == NULL)
        return NULL;

    char *ret = malloc(strlen(text) + sizeof "return ");
    if (ret != NULL) {
        strcpy(ret, "return ");
        strcat(ret, text);
        *status = luaL_loadbuffer(L, ret, strlen(ret), "=stdin");
        free(ret);
        if (*status == LUA_OK)
            return text;
        lua_pop(L, 1);
    }
    for (;;) {
        *status = luaL_loadbuffer(L, text, strlen(text), "=stdin");
        if (*status != LUA_ERRSYNTAX || !incomplete(L))
            return text;
        char *more = hkl_line_read(PROMPT_MORE);
        if (more == NULL)
            return text; /* input ended inside a chunk: report the error */
        lua_pop(L, 1);
        if (hkl_line_interrupted()) {
            hkl_line_free(more);
            free(text);
            goto again;
        }
        text = join_lines(text, more);
        hkl_line_free(more);
        if (text == NULL) {
            lua_pushliteral(L, "out of memory");
            *status = LUA_ERRMEM;
            return strdup("");
        }
    }
}

static void banner(lua_State *L)
{
    hk_context *ctx = hkl_ctx(L);
    hk_device_info d;
    if (ctx != NULL && hk_device_get(ctx, hk_device_current(ctx), &d) == 0)
        printf("hipkit %s (%s) on %s:%d %s (%s) \xe2\x80\x94 Ctrl-D to quit\n", HK_VERSION_STRING,
               LUA_VERSION, d.backend, d.index, d.name, d.target);
    else
        printf("hipkit %s (%s) \xe2\x80\x94 Ctrl-D to quit\n", HK_VERSION_STRING, LUA_VERSION);
    fflush(stdout);
}

void hkr_repl(lua_State *L, int quiet)
{
    int tty = isatty(STDIN_FILENO);
    hkl_line_init(L, tty);
    if (!quiet && tty)
        banner(L);

    int top = lua_gettop(L);
    int status;
    char *text;
    while ((text = read_entry(L, &status)) != NULL) {
        hkl_line_save(text);
        free(text);
        hki_begin(L);
        if (status == LUA_OK)
            status = hkr_call(L, 0, LUA_MULTRET, 0);
        if (status == LUA_OK) {
            int n = lua_gettop(L) - top;
            if (n > 0) {
                luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
                lua_pushcfunction(L, print_values);
                lua_insert(L, top + 1);
                status = hkr_call(L, n, 0, 0);
            }
        }
        int interrupted = hki_end(L);
        const char *msg = status != LUA_OK ? lua_tostring(L, -1) : NULL;
        if (status != LUA_OK && interrupted && msg != NULL && strstr(msg, "interrupted") == NULL) {
            /* a compiler that the Ctrl-C ended fails with a log that says little */
            lua_pushfstring(L, "%s\n(interrupted)", msg);
            lua_remove(L, -2);
        }
        if (status != LUA_OK)
            hkr_report(L, "");
        else if (interrupted) /* no Lua ran after the call the Ctrl-C came in */
            fputs("(interrupted: the call ran to its end)\n", stderr);
        lua_settop(L, top);
        if (hki_quit_signal())
            break;
    }
    hkl_line_end();
}
