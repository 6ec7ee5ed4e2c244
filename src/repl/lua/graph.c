/* hk.graph: launches recorded once and replayed (hk_graph_*).
 *
 * hk.graph(f) runs f once with the context recording: the launches it makes
 * (k:launch, launchers, hk.ops.*) are recorded, not run, and g:launch()
 * replays them. The C graph does not own its buffers and kernels, so while
 * f runs every buffer userdata a call takes (hkl_buffer_live) and every
 * kernel a launch uses is noted in a table that becomes the graph's user
 * value: Lua keeps them alive as long as the graph. A buffer freed by hand
 * (b:free()) still makes the graph refuse to launch, naming it. */
#include "hkl.h"

int hkl_graph_recording;
static const char rec_key = 'r'; /* registry: this state's table of noted values */

typedef struct lgraph {
    hk_graph *g; /* NULL until made, and once freed */
} lgraph;

void hkl_graph_note(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &rec_key) == LUA_TTABLE) {
        lua_pushvalue(L, idx);
        lua_pushboolean(L, 1);
        lua_rawset(L, -3);
    }
    lua_pop(L, 1);
}

static lgraph *check_graph(lua_State *L, int idx)
{
    lgraph *u = luaL_checkudata(L, idx, HKL_GRAPH);
    if (!u->g)
        luaL_argerror(L, idx, "graph was freed");
    return u;
}

/* Ends the recording whatever f did; f's own error wins over the end's. */
static int l_graph(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    hk_context *ctx = hkl_ctx(L);
    lgraph *u = lua_newuserdatauv(L, sizeof *u, 1); /* 2: closed until the graph is made */
    u->g = NULL;
    luaL_setmetatable(L, HKL_GRAPH);
    hkl_check(L, hk_graph_begin(ctx));
    lua_newtable(L); /* 3: what the launches use */
    lua_pushvalue(L, 3);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &rec_key);
    hkl_graph_recording++;
    lua_pushvalue(L, 1);
    int st = lua_pcall(L, 0, 0, 0);
    hkl_graph_recording--;
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &rec_key);
    hk_graph *g = NULL;
    int rc = hk_graph_end(ctx, &g);
    if (st != LUA_OK) {
        hk_graph_destroy(g);
        return lua_error(L);
    }
    hkl_check(L, rc);
    u->g = g;
    lua_pushvalue(L, 3);
    lua_setiuservalue(L, 2, 1);
    lua_settop(L, 2);
    return 1;
}

/* g:launch([n]): n replays (default 1) */
static int g_launch(lua_State *L)
{
    lgraph *u = check_graph(L, 1);
    lua_Integer n = luaL_optinteger(L, 2, 1);
    luaL_argcheck(L, n >= 0, 2, "a replay count >= 0");
    if (hkl_graph_recording) /* the recording's nodes use this graph's own scratch: keep it */
        hkl_graph_note(L, 1);
    lua_Hook before = lua_gethook(L);
    for (lua_Integer i = 0; i < n; i++) {
        hkl_check(L, hk_graph_launch(u->g));
        /* No Lua runs in this loop, so a hook set during it is a signal
         * handler's (Ctrl-C, SIGTERM: src/repl/interrupt.c): stop
         * replaying and let it fire at the caller's next instruction. */
        if (lua_gethook(L) != before)
            break;
    }
    return 0;
}

static void push_device(lua_State *L, int device)
{
    hk_device_info d;
    if (hk_device_get(hkl_ctx(L), device, &d) == 0)
        lua_pushfstring(L, "%s:%d", d.backend, d.index);
    else
        lua_pushfstring(L, "device %d", device);
}

/* g:info() -> {nodes, backend, device, replay, buffers, valid, reason, kernels} */
static int g_info(lua_State *L)
{
    lgraph *u = check_graph(L, 1);
    hk_graph_info info;
    hkl_check(L, hk_graph_get_info(u->g, &info));
    lua_createtable(L, 0, 8);
    hkl_set_int(L, "nodes", info.nodes);
    hkl_set_str(L, "backend", info.backend);
    push_device(L, info.device);
    lua_setfield(L, -2, "device");
    hkl_set_str(L, "replay", info.replay);
    hkl_set_int(L, "buffers", info.buffers);
    hkl_set_bool(L, "valid", info.valid);
    if (!info.valid) {
        hkl_set_str(L, "reason", info.invalid);
        return 1;
    }
    lua_createtable(L, info.nodes, 0);
    for (int i = 0; i < info.nodes; i++) {
        hk_graph_node_info nd;
        hkl_check(L, hk_graph_node_get(u->g, i, &nd));
        lua_pushstring(L, nd.kernel);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "kernels");
    return 1;
}

static int g_tostring(lua_State *L)
{
    lgraph *u = luaL_checkudata(L, 1, HKL_GRAPH);
    hk_graph_info info;
    if (!u->g || hk_graph_get_info(u->g, &info) != 0) {
        lua_pushstring(L, "hk.graph (freed)");
        return 1;
    }
    push_device(L, info.device);
    if (info.valid)
        lua_pushfstring(L, "hk.graph: %d launch%s on %s (%s)", info.nodes, info.nodes == 1 ? "" : "es",
                        lua_tostring(L, -1), info.replay);
    else
        lua_pushfstring(L, "hk.graph: %d launch%s on %s, invalid: %s", info.nodes,
                        info.nodes == 1 ? "" : "es", lua_tostring(L, -1), info.invalid);
    return 1;
}

/* g:free(), __gc and __close: the graph, then what it kept alive. */
static int g_free(lua_State *L)
{
    lgraph *u = luaL_checkudata(L, 1, HKL_GRAPH);
    if (u->g) {
        hk_graph_destroy(u->g);
        u->g = NULL;
        lua_pushnil(L);
        lua_setiuservalue(L, 1, 1);
    }
    return 0;
}

void hkl_graph_register(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"launch", g_launch},
        {"info", g_info},
        {"free", g_free},
        {NULL, NULL},
    };
    luaL_newmetatable(L, HKL_GRAPH);
    luaL_newlib(L, methods);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "methods");
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, g_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, g_free);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, g_free);
    lua_setfield(L, -2, "__close");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_graph);
    lua_setfield(L, -2, "graph");
}
