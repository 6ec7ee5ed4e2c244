/* help(): the doc line and signature of a call, the methods of a buffer,
 * module or kernel (a kernel's help is its signature and, for a family's
 * kernel, the family's doc line), and the sections of the module, which
 * `hk` alone also prints. Everything comes from docs.c's entries and, for
 * kernel families, from the plugins themselves. */
#include <stdio.h>
#include <string.h>

#include "docs.h"
#include "hkl.h"

#define WRAP 78

/* ------------------------------------------------------------- entries */

/* Pushes the table whose field holds the methods of a metatable name
 * ("methods", else a table __index), or nil. */
static void push_methods(lua_State *L, const char *tname)
{
    luaL_getmetatable(L, tname);
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "methods");
        if (!lua_istable(L, -1)) {
            lua_pop(L, 1);
            lua_getfield(L, -1, "__index");
        }
        lua_remove(L, -2);
    }
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
}

/* Pushes the value an entry's name stands for (nil if there is none):
 * the hk table is the loaded module, whatever the global `hk` holds now. */
static void push_entry_value(lua_State *L, const char *name)
{
    const char *colon = strchr(name, ':');
    if (colon != NULL) {
        push_methods(L, name[0] == 'b' ? HKL_BUFFER : name[0] == 'm' ? HKL_MODULE
                        : name[0] == 'g' ? HKL_GRAPH : HKL_KERNEL);
        if (lua_istable(L, -1))
            lua_getfield(L, -1, colon + 1);
        else
            lua_pushnil(L);
        lua_remove(L, -2);
        return;
    }
    if (strncmp(name, "hk.", 3) != 0) {
        lua_getglobal(L, name);
        return;
    }
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "hk");
    lua_remove(L, -2);
    for (const char *p = name + 3; lua_istable(L, -1);) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        lua_pushlstring(L, p, n);
        lua_rawget(L, -2);
        lua_remove(L, -2);
        if (dot == NULL)
            return;
        p = dot + 1;
    }
    lua_pop(L, 1);
    lua_pushnil(L);
}

static void print_entry(const hkl_doc *d)
{
    printf("%s\n  %s\n", d->signature, d->doc);
}

/* Appends word to the text being wrapped at WRAP, after indent spaces;
 * *col is the column the text has got to. */
static void wrap_word(luaL_Buffer *b, int *col, int indent, const char *word)
{
    int n = (int)strlen(word);
    if (*col > indent && *col + 1 + n > WRAP) {
        luaL_addchar(b, '\n');
        for (*col = 0; *col < indent; (*col)++)
            luaL_addchar(b, ' ');
    }
    if (*col > indent) {
        luaL_addchar(b, ' ');
        (*col)++;
    }
    luaL_addstring(b, word);
    *col += n;
}

/* help() and `hk`: the sections with the names of their calls. Pushes the
 * text. */
static void push_overview(lua_State *L)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "hk: hipkit's module. help(hk.alloc) for a call, help(b) for the methods of a\n"
                       "buffer, module or kernel, help(hk.ops.FAMILY) for a kernel family, help(\"fill\")\n"
                       "by name.");
    for (const hkl_doc *d = hkl_docs; d->name != NULL;) {
        const char *section = d->section;
        char head[40];
        int col = snprintf(head, sizeof head, "\n  %-20s", section) - 1;
        luaL_addstring(&b, head);
        for (; d->name != NULL && strcmp(d->section, section) == 0; d++)
            wrap_word(&b, &col, 22, d->name);
    }
    luaL_pushresult(&b);
}

/* The entries of a kind of object ("b:" ...), one aligned line each. */
static void print_methods(const char *prefix)
{
    size_t plen = strlen(prefix);
    int width = 0;
    for (const hkl_doc *d = hkl_docs; d->name != NULL; d++)
        if (strncmp(d->name, prefix, plen) == 0 && (int)strlen(d->name) > width)
            width = (int)strlen(d->name);
    printf("methods:\n");
    for (const hkl_doc *d = hkl_docs; d->name != NULL; d++)
        if (strncmp(d->name, prefix, plen) == 0)
            printf("  %-*s  %s\n", width, d->name, d->doc);
}

/* ------------------------------------------------------------- families */

/* A family's kernel or op by name: its signature and doc. 1 if found. */
static int print_family_member(lua_State *L, const char *family, const char *name)
{
    hk_context *ctx = hkl_ctx(L);
    int fi = hk_plugin_find(ctx, family);
    hk_plugin_info p;
    if (fi < 0 || hk_plugin_get(ctx, fi, &p) != 0)
        return 0;
    size_t len = strlen(name);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    int variants = 0, col = 4;
    for (int k = 0; k < p.nkernels; k++) {
        hk_plugin_kernel_info ki;
        if (hk_plugin_kernel_get(ctx, fi, k, &ki) != 0)
            continue;
        if (strcmp(ki.name, name) == 0) {
            luaL_pushresult(&b);
            lua_pop(L, 1);
            printf("hk.ops.%s.%s(%s)\n  %s\n", family, ki.name, ki.signature, ki.doc);
            return 1;
        }
        /* OP without a type suffix picks one of the contiguous OP_<types>,
         * as plugin.c's dispatcher does */
        if (strncmp(ki.name, name, len) == 0 && ki.name[len] == '_' && ki.geometry == 1 &&
            strstr(ki.name, "_strided") == NULL) {
            wrap_word(&b, &col, 4, ki.name);
            variants++;
        }
    }
    luaL_pushresult(&b);
    if (variants)
        printf("hk.ops.%s.%s(out, inputs..., values...) -> out\n  the kernel of %s whose "
               "pointer parameters take the buffers' dtypes, one of:\n    %s\n",
               family, name, family, lua_tostring(L, -1));
    lua_pop(L, 1);
    if (variants)
        return 1;
    for (int o = 0; o < p.nops; o++) {
        hk_plugin_op_info oi;
        if (hk_plugin_op_get(ctx, fi, o, &oi) == 0 && strcmp(oi.name, name) == 0) {
            printf("hk.ops.%s.%s(%s)\n  %s\n", family, oi.name, oi.usage, oi.doc);
            return 1;
        }
    }
    return 0;
}

static void print_family(lua_State *L, const char *family)
{
    hk_context *ctx = hkl_ctx(L);
    int fi = hk_plugin_find(ctx, family);
    hk_plugin_info p;
    if (fi < 0 || hk_plugin_get(ctx, fi, &p) != 0) {
        printf("no kernel family '%s'\n", family);
        return;
    }
    printf("hk.ops.%s (%s %s): %s\n", family, p.name, p.version, p.description);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "  kernels:");
    int col = 10;
    for (int k = 0; k < p.nkernels; k++) {
        hk_plugin_kernel_info ki;
        if (hk_plugin_kernel_get(ctx, fi, k, &ki) == 0)
            wrap_word(&b, &col, 4, ki.name);
    }
    luaL_pushresult(&b);
    printf("%s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    for (int o = 0; o < p.nops; o++) {
        hk_plugin_op_info oi;
        if (hk_plugin_op_get(ctx, fi, o, &oi) == 0)
            printf("  op %s(%s): %s\n", oi.name, oi.usage, oi.doc);
    }
}

/* A function made by hk.ops.FAMILY.NAME (kept in the family's table once
 * made): its family and name pushed, 1; else 0 with nothing pushed. */
static int find_in_ops(lua_State *L, int fn)
{
    int base = lua_gettop(L);
    push_entry_value(L, "hk.ops");
    int ops = base + 1;
    if (!lua_istable(L, ops)) {
        lua_settop(L, base);
        return 0;
    }
    lua_pushnil(L);
    while (lua_next(L, ops)) { /* family name, family table */
        if (lua_istable(L, -1) && lua_type(L, -2) == LUA_TSTRING) {
            lua_pushnil(L);
            while (lua_next(L, -2)) { /* name, value */
                if (lua_rawequal(L, -1, fn) && lua_type(L, -2) == LUA_TSTRING) {
                    lua_copy(L, -4, base + 1);
                    lua_copy(L, -2, base + 2);
                    lua_settop(L, base + 2);
                    return 1;
                }
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    lua_settop(L, base);
    return 0;
}

/* A kernel's help: its signature, and the doc of the family kernel of the
 * same name when there is one. */
static void print_kernel(lua_State *L, int idx)
{
    const char *s = luaL_tolstring(L, idx, NULL); /* "hk.kernel NAME(SIG)" */
    const char *name = strncmp(s, "hk.kernel ", 10) == 0 ? s + 10 : s;
    printf("%s\n", name);
    const char *paren = strchr(name, '(');
    size_t len = paren ? (size_t)(paren - name) : strlen(name);
    hk_context *ctx = hkl_ctx(L);
    for (int i = 0; i < hk_plugin_count(ctx); i++) {
        hk_plugin_info p;
        if (hk_plugin_get(ctx, i, &p) != 0)
            continue;
        for (int k = 0; k < p.nkernels; k++) {
            hk_plugin_kernel_info ki;
            /* the same name and parameters: a kernel of the family, not
             * one of the user's that happens to share its name */
            if (hk_plugin_kernel_get(ctx, i, k, &ki) == 0 && strlen(ki.name) == len &&
                strncmp(ki.name, name, len) == 0 && paren != NULL &&
                strncmp(paren + 1, ki.signature, strlen(ki.signature)) == 0 &&
                strcmp(paren + 1 + strlen(ki.signature), ")") == 0)
                printf("  %s (kernel family %s)\n", ki.doc, p.name);
        }
    }
    lua_pop(L, 1);
    print_methods("k:");
}

/* ------------------------------------------------------------- help() */

static int by_value(lua_State *L)
{
    for (const hkl_doc *d = hkl_docs; d->name != NULL; d++) {
        push_entry_value(L, d->name);
        int same = lua_rawequal(L, -1, 1);
        lua_pop(L, 1);
        if (same) {
            print_entry(d);
            return 1;
        }
    }
    return 0;
}

static int by_name(const char *want)
{
    int found = 0;
    for (const hkl_doc *d = hkl_docs; d->name != NULL; d++) {
        const char *last = strrchr(d->name, '.');
        const char *colon = strrchr(d->name, ':');
        last = colon > last ? colon : last;
        if (strcmp(d->name, want) == 0 || (last != NULL && strcmp(last + 1, want) == 0)) {
            print_entry(d);
            found = 1;
        }
    }
    return found;
}

static void help_object(lua_State *L)
{
    if (luaL_testudata(L, 1, HKL_BUFFER) != NULL || luaL_testudata(L, 1, HKL_MODULE) != NULL) {
        printf("%s\n", luaL_tolstring(L, 1, NULL));
        print_methods(luaL_testudata(L, 1, HKL_BUFFER) != NULL ? "b:" : "m:");
    } else if (luaL_testudata(L, 1, HKL_KERNEL) != NULL) {
        print_kernel(L, 1);
    } else if (luaL_testudata(L, 1, HKL_GRAPH) != NULL) {
        printf("%s\n", luaL_tolstring(L, 1, NULL));
        print_methods("g:");
    } else {
        printf("no help for %s; help() lists what there is\n", luaL_tolstring(L, 1, NULL));
    }
}

static int l_help(lua_State *L)
{
    lua_settop(L, 1);
    push_entry_value(L, "hk.ops");
    int is_ops = lua_rawequal(L, 1, 2);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "hk");
    int is_hk = lua_rawequal(L, 1, -1);
    lua_settop(L, 1);
    if (lua_isnoneornil(L, 1) || is_hk) {
        push_overview(L);
        printf("%s\n", lua_tostring(L, -1));
    } else if (is_ops) {
        push_entry_value(L, "hk.plugins");
        lua_call(L, 0, 1);
        printf("%s\nhelp(hk.ops.FAMILY) for one of them\n", luaL_tolstring(L, -1, NULL));
    } else if (lua_type(L, 1) == LUA_TSTRING) {
        if (!by_name(lua_tostring(L, 1)))
            printf("no call named '%s'; help() lists them\n", lua_tostring(L, 1));
    } else if (lua_type(L, 1) == LUA_TFUNCTION) {
        if (!by_value(L) &&
            !(find_in_ops(L, 1) && print_family_member(L, lua_tostring(L, -2), lua_tostring(L, -1))))
            printf("no help for this function; help() lists hipkit's\n");
    } else if (lua_type(L, 1) == LUA_TTABLE &&
               (lua_pushliteral(L, "__family"), lua_rawget(L, 1) == LUA_TSTRING)) {
        print_family(L, lua_tostring(L, -1));
    } else {
        lua_settop(L, 1);
        help_object(L);
    }
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------ hk.docs */

/* A markdown table cell: | would end it. */
static void add_cell(luaL_Buffer *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            luaL_addchar(b, '\\');
        luaL_addchar(b, *s);
    }
}

static int l_docs(lua_State *L)
{
    if (lua_isnoneornil(L, 1)) {
        lua_newtable(L);
        for (int i = 0; hkl_docs[i].name != NULL; i++) {
            lua_createtable(L, 0, 4);
            hkl_set_str(L, "section", hkl_docs[i].section);
            hkl_set_str(L, "name", hkl_docs[i].name);
            hkl_set_str(L, "signature", hkl_docs[i].signature);
            hkl_set_str(L, "doc", hkl_docs[i].doc);
            lua_rawseti(L, -2, i + 1);
        }
        return 1;
    }
    luaL_argcheck(L, strcmp(luaL_checkstring(L, 1), "markdown") == 0, 1, "\"markdown\" or nothing");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    const char *section = "";
    for (const hkl_doc *d = hkl_docs; d->name != NULL; d++) {
        if (strcmp(d->section, section) != 0) {
            section = d->section;
            luaL_addstring(&b, d == hkl_docs ? "" : "\n");
            luaL_addstring(&b, "### ");
            luaL_addstring(&b, section);
            luaL_addstring(&b, "\n\n| call | does |\n| --- | --- |\n");
        }
        luaL_addstring(&b, "| `");
        add_cell(&b, d->signature);
        luaL_addstring(&b, "` | ");
        add_cell(&b, d->doc);
        luaL_addstring(&b, " |\n");
    }
    luaL_pushresult(&b);
    return 1;
}

static int hk_tostring(lua_State *L)
{
    push_overview(L);
    return 1;
}

void hkl_help_register(lua_State *L)
{
    lua_pushcfunction(L, l_docs);
    lua_setfield(L, -2, "docs");
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, hk_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_setmetatable(L, -2);
    lua_pushcfunction(L, l_help);
    lua_setglobal(L, "help");
}
