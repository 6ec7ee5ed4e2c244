/* Holds: what keeps a buffer or a module alive while a hipkit call uses it.
 *
 * Several calls take a buffer's memory (or a kernel's module) and then run
 * Lua code before they are done with it: an options table's __index, the
 * allclose callback, a vector argument's __index, print. That code may call
 * buf:free() or m:free(). Rather than re-checking after every line that can
 * run Lua, such a call holds the objects it uses: a hold is one
 * to-be-closed value on the call's stack that raises each object's pin
 * count and drops it when the call returns or raises, whichever way it
 * leaves. free() of a pinned object is an error naming the call, and the
 * memory stays where the call expects it.
 *
 * Launches promise not to allocate on the Lua heap, so closed holds go back
 * to a pool and are reused: a nested call takes another one. */
#include <string.h>

#include "hkl.h"

#define HOLD_META "hk.hold"
#define POOLED_CAP 128 /* pins a pooled hold has room for */

struct hkl_hold {
    int n, cap; /* pins held (0 once closed), room for */
    int pooled;
    const char *call;
    hkl_hold *next; /* a further hold once this one is full */
    lua_State *L;
    hkl_pin *pins[];
};

static int pool_key; /* registry: the list of closed pooled holds */

/* __close and __gc (upvalue 1: the pool). */
static int hold_close(lua_State *L)
{
    hkl_hold *h = lua_touserdata(L, 1);
    for (int i = 0; i < h->n; i++)
        h->pins[i]->count--;
    int was_held = h->n > 0 || h->call;
    h->n = 0;
    h->call = NULL;
    h->next = NULL;
    if (h->pooled && was_held) {
        lua_pushnil(L);
        lua_setiuservalue(L, 1, 1);
        lua_pushvalue(L, 1);
        lua_rawseti(L, lua_upvalueindex(1), (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)) + 1);
    }
    return 0;
}

static hkl_hold *new_hold(lua_State *L, int cap, int pooled, int pool)
{
    hkl_hold *h = lua_newuserdatauv(L, sizeof *h + (size_t)cap * sizeof h->pins[0], 1);
    h->n = 0;
    h->cap = cap;
    h->pooled = pooled;
    h->call = NULL;
    h->next = NULL;
    if (luaL_newmetatable(L, HOLD_META)) {
        lua_pushvalue(L, pool);
        lua_pushcclosure(L, hold_close, 1);
        lua_setfield(L, -2, "__close");
        lua_pushvalue(L, pool);
        lua_pushcclosure(L, hold_close, 1);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return h;
}

hkl_hold *hkl_hold_new(lua_State *L, int idx, int cap, const char *call)
{
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 4, "too many held values");
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &pool_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &pool_key);
    }
    int pool = lua_gettop(L);
    hkl_hold *h;
    lua_Integer n = (lua_Integer)lua_rawlen(L, pool);
    if (cap <= POOLED_CAP && n > 0) {
        lua_rawgeti(L, pool, n);
        lua_pushnil(L);
        lua_rawseti(L, pool, n);
        h = lua_touserdata(L, -1);
    } else {
        h = new_hold(L, cap <= POOLED_CAP ? POOLED_CAP : cap, cap <= POOLED_CAP, pool);
    }
    lua_remove(L, pool);
    h->call = call;
    h->L = L;
    lua_pushvalue(L, idx); /* the held object outlives the hold */
    lua_setiuservalue(L, -2, 1);
    lua_toclose(L, -1);
    return h;
}

void hkl_hold_add(hkl_hold *h, hkl_pin *p)
{
    while (h->n == h->cap) { /* full: chain another, on the same stack */
        if (!h->next)
            h->next = hkl_hold_new(h->L, -1, POOLED_CAP, h->call);
        h = h->next;
    }
    h->pins[h->n++] = p;
    p->count++;
    p->call = h->call;
}

void hkl_pin_check_free(lua_State *L, const hkl_pin *p, const char *what)
{
    if (p->count > 0)
        luaL_error(L, "%s:free(): it is in use by %s, which is still running (free it after %s "
                   "returns)", what, p->call, p->call);
}
