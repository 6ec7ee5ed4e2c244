/* Streams and events from Lua: hk.stream() -> s with s:launch, s:copy,
 * s:record, s:wait, s:sync, s:query; hk.event() -> e with e:record,
 * e:sync, e:elapsed. Code that never makes a stream is unchanged: k:launch
 * and the buffer methods use the default stream, which waits for the
 * streams' queued work first.
 *
 * Queued work keeps using buffers after the call that queued it returned:
 * the library makes freeing a buffer (b:free(), or the collector) wait
 * for the queued work of its device, so nothing here pins them. */
#include "hkl.h"

typedef struct lstream {
    hk_stream *s; /* NULL once freed */
} lstream;

typedef struct levent {
    hk_event *e; /* NULL once freed */
} levent;

static hk_stream *check_stream(lua_State *L, int idx)
{
    lstream *u = luaL_checkudata(L, idx, HKL_STREAM);
    if (!u->s)
        luaL_error(L, "the stream was freed");
    return u->s;
}

static hk_event *check_event(lua_State *L, int idx)
{
    levent *u = luaL_checkudata(L, idx, HKL_EVENT);
    if (!u->e)
        luaL_error(L, "the event was freed");
    return u->e;
}

static int l_stream(lua_State *L)
{
    lstream *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->s = NULL; /* closed until made: a failure leaves nothing to free */
    luaL_setmetatable(L, HKL_STREAM);
    hkl_check(L, hk_stream_create(hkl_ctx(L), &u->s));
    return 1;
}

static hk_event *new_event(lua_State *L)
{
    levent *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->e = NULL;
    luaL_setmetatable(L, HKL_EVENT);
    hkl_check(L, hk_event_create(hkl_ctx(L), &u->e));
    return u->e;
}

static int l_event(lua_State *L)
{
    new_event(L);
    return 1;
}

/* s:free(), __close and __gc: waits for the stream's work first. */
static int stream_close(lua_State *L)
{
    lstream *u = luaL_checkudata(L, 1, HKL_STREAM);
    hk_stream_destroy(u->s);
    u->s = NULL;
    return 0;
}

static int stream_sync(lua_State *L)
{
    hkl_check(L, hk_stream_synchronize(check_stream(L, 1)));
    lua_settop(L, 1);
    return 1;
}

/* true when all queued work has run, false while some runs; an error of
 * that work is raised. */
static int stream_query(lua_State *L)
{
    int r = hk_stream_query(check_stream(L, 1));
    if (r < 0)
        hkl_check(L, r);
    lua_pushboolean(L, r == 0);
    return 1;
}

/* s:launch(k, grid, block, ...): upvalue 1 is the buffer metatable, as
 * hkl_launch_on asks. */
static int stream_launch(lua_State *L)
{
    hk_stream *s = check_stream(L, 1);
    hkl_launch_on(L, s, 2);
    lua_settop(L, 1);
    return 1;
}

/* s:copy(dst, src): as dst:copy(src), queued on s. */
static int stream_copy(lua_State *L)
{
    hk_stream *s = check_stream(L, 1);
    hk_buffer *dst = hkl_check_buffer(L, 2);
    hk_buffer *src = hkl_check_buffer(L, 3);
    size_t db = hk_buffer_bytes(dst), sb = hk_buffer_bytes(src);
    if (db != sb)
        return luaL_argerror(L, 3, lua_pushfstring(L, "source has %I bytes, the destination %I",
                                                   (lua_Integer)sb, (lua_Integer)db));
    hkl_check(L, hk_buffer_copy_on(s, dst, 0, src, 0, db));
    lua_settop(L, 1);
    return 1;
}

/* s:record([e]) -> e: a new event unless one is given. */
static int stream_record(lua_State *L)
{
    hk_stream *s = check_stream(L, 1);
    hk_event *e = lua_isnoneornil(L, 2) ? new_event(L) : check_event(L, 2);
    if (!lua_isnoneornil(L, 2))
        lua_pushvalue(L, 2);
    hkl_check(L, hk_event_record_on(e, s));
    return 1;
}

static int stream_wait(lua_State *L)
{
    hk_stream *s = check_stream(L, 1);
    hkl_check(L, hk_stream_wait_event(s, check_event(L, 2)));
    lua_settop(L, 1);
    return 1;
}

static int stream_tostring(lua_State *L)
{
    lstream *u = luaL_checkudata(L, 1, HKL_STREAM);
    if (!u->s) {
        lua_pushliteral(L, "hk.stream (freed)");
        return 1;
    }
    hk_device_info info;
    int dev = hk_stream_device(u->s);
    int r = hk_device_get(hkl_ctx(L), dev, &info);
    lua_pushfstring(L, "hk.stream on %s:%d", r == 0 ? info.backend : "?", r == 0 ? info.index : dev);
    return 1;
}

static int event_close(lua_State *L)
{
    levent *u = luaL_checkudata(L, 1, HKL_EVENT);
    hk_event_destroy(u->e);
    u->e = NULL;
    return 0;
}

/* e:record(): on the default stream. */
static int event_record(lua_State *L)
{
    hkl_check(L, hk_event_record(check_event(L, 1)));
    lua_settop(L, 1);
    return 1;
}

static int event_sync(lua_State *L)
{
    hkl_check(L, hk_event_synchronize(check_event(L, 1)));
    lua_settop(L, 1);
    return 1;
}

/* e:elapsed(later) -> milliseconds from e to later. */
static int event_elapsed(lua_State *L)
{
    double ms = 0;
    hkl_check(L, hk_event_elapsed_ms(check_event(L, 1), check_event(L, 2), &ms));
    lua_pushnumber(L, ms);
    return 1;
}

static int event_tostring(lua_State *L)
{
    levent *u = luaL_checkudata(L, 1, HKL_EVENT);
    lua_pushstring(L, u->e ? "hk.event" : "hk.event (freed)");
    return 1;
}

static const luaL_Reg stream_methods[] = {
    {"launch", stream_launch}, {"copy", stream_copy}, {"record", stream_record},
    {"wait", stream_wait},     {"sync", stream_sync}, {"query", stream_query},
    {"free", stream_close},    {NULL, NULL},
};

static const luaL_Reg event_methods[] = {
    {"record", event_record}, {"sync", event_sync}, {"elapsed", event_elapsed},
    {"free", event_close},    {NULL, NULL},
};

/* A metatable with methods as __index (and as `methods`, for the REPL's
 * completion), __gc and __close sharing close, and __tostring. */
static void new_metatable(lua_State *L, const char *name, const luaL_Reg *methods,
                          lua_CFunction close, lua_CFunction tostring)
{
    luaL_newmetatable(L, name);
    lua_createtable(L, 0, 8);
    luaL_getmetatable(L, HKL_BUFFER); /* upvalue 1 of every method: s:launch needs it */
    luaL_setfuncs(L, methods, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "methods");
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, close);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
}

void hkl_stream_register(lua_State *L)
{
    new_metatable(L, HKL_STREAM, stream_methods, stream_close, stream_tostring);
    new_metatable(L, HKL_EVENT, event_methods, event_close, event_tostring);
    lua_pushcfunction(L, l_stream);
    lua_setfield(L, -2, "stream");
    lua_pushcfunction(L, l_event);
    lua_setfield(L, -2, "event");
}
