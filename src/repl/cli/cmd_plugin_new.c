/* `hipkit plugin new NAME [DIR]`: writes a plugin folder that builds
 * against the installed hipkit with `pkg-config hipkit-plugin` alone and
 * passes its own test as it stands: NAME.c, NAME.hip, meson.build,
 * Makefile, test_NAME.lua and README.md. The templates are
 * plugin_template/ *.in, embedded at build time by tools/embed.py, with
 * @NAME@ standing for the family's name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

typedef struct {
    const char *path;
    const char *data;
    size_t size;
} hkc_embedded_file;
extern const hkc_embedded_file hkl_plugin_templates[];

/* Which template becomes which file ("@" is the name). */
static const struct {
    const char *template, *file;
} files[] = {
    {"plugin.c.in", "@.c"},           {"plugin.hip.in", "@.hip"}, {"meson.build.in", "meson.build"},
    {"Makefile.in", "Makefile"},      {"test.lua.in", "test_@.lua"}, {"README.md.in", "README.md"},
};

static const hkc_embedded_file *template_named(const char *path)
{
    for (const hkc_embedded_file *t = hkl_plugin_templates; t->path; t++)
        if (!strcmp(t->path, path))
            return t;
    return NULL;
}

/* Writes t into dir/file with every @NAME@ replaced by name. */
static int write_template(const char *dir, const char *file, const hkc_embedded_file *t,
                          const char *name)
{
    char path[4096], fname[256];
    const char *at = strchr(file, '@');
    if (at)
        snprintf(fname, sizeof fname, "%.*s%s%s", (int)(at - file), file, name, at + 1);
    else
        snprintf(fname, sizeof fname, "%s", file);
    snprintf(path, sizeof path, "%s/%s", dir, fname);
    FILE *f = fopen(path, "wx"); /* never overwrites */
    if (!f) {
        fprintf(stderr, "hipkit plugin new: cannot create %s: %s\n", path, strerror(errno));
        return 1;
    }
    static const char mark[] = "@NAME@";
    const char *p = t->data, *end = t->data + t->size;
    while (p < end) {
        const char *m = strstr(p, mark);
        size_t n = m ? (size_t)(m - p) : (size_t)(end - p);
        fwrite(p, 1, n, f);
        if (!m)
            break;
        fputs(name, f);
        p = m + sizeof mark - 1;
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "hipkit plugin new: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    printf("  %s\n", path);
    return 0;
}

static int plugin_new(const char *name, const char *dir)
{
    int ok = name[0] && strlen(name) <= 64;
    for (const char *p = name; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
    if (!ok) {
        fprintf(stderr, "hipkit plugin new: '%s' is not a family name ([a-z0-9_]+, at most 64): it "
                        "names the file hipkit-plugin-NAME.so and the C symbols\n", name);
        return 2;
    }
    /* a folder that exists is fine: no file in it is overwritten ("wx") */
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "hipkit plugin new: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    printf("plugin '%s' in %s:\n", name, dir);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        const hkc_embedded_file *t = template_named(files[i].template);
        if (!t || write_template(dir, files[i].file, t, name) != 0)
            return 1;
    }
    printf("next: cd %s && meson setup build && meson compile -C build && meson test -C build\n"
           "      (or make && make test); PKG_CONFIG_PATH must find hipkit-plugin.pc\n", dir);
    return 0;
}

int hkl_cmd_plugin(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[2], "new"))
        return hkl_cli_bad_usage("'plugin' takes 'new NAME [DIR]', not '%s'",
                                 argc < 3 ? "" : argv[2]);
    if (argc < 4)
        return hkl_cli_bad_usage("'%s' needs a NAME", "plugin new");
    if (argc > 5)
        return hkl_cli_bad_usage("'plugin new' takes NAME [DIR]; what is '%s'?", argv[5]);
    return plugin_new(argv[3], argc == 5 ? argv[4] : argv[3]);
}
