/* libFuzzer target: the .npy reader, through hk.load_npy as a script calls
 * it. Each input is written to a file and loaded in host memory; any Lua
 * error is a refusal (fine), anything else a finding. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "hkl.h"

static lua_State *L;
static char path[] = "/tmp/hk-fuzz-npy-XXXXXX";

static void setup(void)
{
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    close(fd);
    setenv("HIPKIT_BACKEND", "host", 1);
    setenv("HIPKIT_PLUGIN_PATH", "", 1);
    L = luaL_newstate();
    luaL_openlibs(L);
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.quiet = 1;
    if (hkl_open(L, &o) != 1)
        abort();
    lua_setglobal(L, "hk");
    lua_pushstring(L, path);
    lua_setglobal(L, "PATH");
    if (luaL_loadstring(L, "local b, shape = hk.load_npy(PATH, 'host') local s = b:stats() "
                           "b:free() return s") != LUA_OK)
        abort();
    lua_setglobal(L, "RUN");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!L)
        setup();
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    lua_getglobal(L, "RUN");
    lua_pcall(L, 0, 0, 0);
    lua_settop(L, 0);
    lua_gc(L, LUA_GCCOLLECT);
    return 0;
}
