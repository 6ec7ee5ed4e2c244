/* Plugins that must not be trusted (issue 12, defect 5): a
 * hipkit-plugin-*.so that is no plugin is refused before its constructors
 * run; plugins and folders owned by another user, writable by group or
 * others, or inside a world-writable folder without the sticky bit are
 * refused with a warning; the plugin API refuses NULL arguments. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "testutil.h"

static hk_context *context(void)
{
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = "host";
    o.quiet = 1;
    hk_context *ctx = NULL;
    if (hk_context_create(&o, &ctx) != 0) {
        printf("Bail out! cannot create a context: %s\n", hk_errmsg(NULL));
        exit(1);
    }
    return ctx;
}

/* The entry named `name` (a plugin, or a refused folder's path): 1 and
 * *out, else 0. */
static int entry(hk_context *ctx, const char *name, hk_plugin_info *out)
{
    for (int i = 0; i < hk_plugin_count(ctx); i++)
        if (hk_plugin_get(ctx, i, out) == 0 && !strcmp(out->name, name))
            return 1;
    return 0;
}

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

static int copy_file(const char *from, const char *to, mode_t mode)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = 0;
    return ok && chmod(to, mode) == 0 ? 0 : -1;
}

static void test_exports_and_nulls(void)
{
    setenv("HIPKIT_PLUGIN_PATH", TEST_SAFETY_DIR, 1);
    unsetenv("HK_TEST_CTOR_RAN");
    hk_context *ctx = context();
    hk_plugin_info p;
    int found = entry(ctx, "ctor", &p);
    tap_ok(found && has(p.error, "exports no hk_plugin_ctor_abi"),
           "a .so that is no plugin is refused: %s", found ? p.error : "(absent)");
    tap_ok(getenv("HK_TEST_CTOR_RAN") == NULL, "... before its constructor ran");
    found = entry(ctx, "nullfam", &p);
    tap_ok(found && !(p.error && p.error[0]), "every API slot refused NULL and the plugin loaded: %s",
           found ? (p.error ? p.error : "ok") : "(absent: init saw a slot accept NULL, or crashed)");
    int r = hk_plugin_call_op(ctx, "nullfam", "poke", NULL, 0);
    tap_ok(r < 0 && has(hk_errmsg(ctx), "refused 8 of 8"), "every host slot refused NULL: %s",
           hk_errmsg(ctx));
    r = hk_plugin_call_op(ctx, "nullfam", "lost", NULL, 0);
    tap_ok(r == HK_EARG && has(hk_errmsg(ctx), "unknown dtype 'nope'"),
           "an op returning -1 after a host call failed returns that failure's code (%s): %s", hk_errname(r),
           hk_errmsg(ctx));
    hk_arg wild = hk_arg_int(0x1234567);
    r = hk_plugin_call_op(ctx, "nullfam", "wild", &wild, 1);
    tap_ok(r < 0 && has(hk_errmsg(ctx), "length 0 dtype '' overlap 0 upload 1"),
           "an integer argument asked about as a buffer is no buffer to the host (no crash): %s", hk_errmsg(ctx));
    r = hk_plugin_call_op(ctx, "nullfam", "mute", NULL, 0);
    tap_ok(r == HK_ECOMPILE && has(hk_errmsg(ctx), "nullfam.mute failed (HK_ECOMPILE) without saying why"),
           "an op failing without a message says so, not the last call's message: %s", hk_errmsg(ctx));
    hk_context_destroy(ctx);
}

/* Loads from a copy of the nullargs plugin at dir/plugins/, dir and
 * plugins given these modes; the entry for `name` says what happened. */
static void setup_case(const char *base, mode_t top, mode_t folder, mode_t file, uid_t owner,
                       int (*check)(const hk_plugin_info *, int), const char *what)
{
    char dir[512], plug[600], so[700];
    snprintf(dir, sizeof dir, "%s/top", base);
    snprintf(plug, sizeof plug, "%s/plugins", dir);
    snprintf(so, sizeof so, "%s/hipkit-plugin-nullargs.so", plug);
    mkdir(dir, 0700);
    mkdir(plug, 0700);
    if (copy_file(TEST_SAFETY_DIR "/hipkit-plugin-nullargs.so", so, file) != 0 ||
        chmod(plug, folder) != 0 || chmod(dir, top) != 0 ||
        (owner != (uid_t)-1 && chown(so, owner, (gid_t)-1) != 0)) {
        tap_ok(0, "%s: setting up %s failed: %s", what, so, strerror(errno));
        return;
    }
    setenv("HIPKIT_PLUGIN_PATH", plug, 1);
    hk_context *ctx = context();
    hk_plugin_info pf, pd;
    int fam = entry(ctx, "nullfam", &pf), ref = entry(ctx, "nullargs", &pd);
    fam = fam && !(pf.error && pf.error[0]);
    int refused_folder = entry(ctx, plug, &pd);
    const hk_plugin_info *shown = refused_folder || ref ? &pd : &pf;
    tap_ok(check(shown, fam), "%s: %s", what,
           shown->error && shown->error[0] ? shown->error : (fam ? "loaded" : "(no entry)"));
    hk_context_destroy(ctx);
    unlink(so);
    rmdir(plug);
    rmdir(dir);
}

static int loaded(const hk_plugin_info *p, int fam) { (void)p; return fam; }
static int refused_group(const hk_plugin_info *p, int fam)
{
    return !fam && has(p->error, "writable by group or others");
}
static int refused_sticky(const hk_plugin_info *p, int fam)
{
    return !fam && has(p->error, "without the sticky bit");
}
static int refused_owner(const hk_plugin_info *p, int fam)
{
    return !fam && has(p->error, "owned by another user");
}

static void test_permissions(void)
{
    char base[] = "/tmp/hk-plugin-safety-XXXXXX";
    if (!mkdtemp(base)) {
        tap_skip("plugin folder permissions", "mkdtemp failed");
        return;
    }
    setup_case(base, 0700, 0700, 0755, (uid_t)-1, loaded, "a private folder and file: loaded");
    setup_case(base, 0700, 0770, 0755, (uid_t)-1, refused_group, "a group-writable folder is refused");
    setup_case(base, 0700, 0700, 0664, (uid_t)-1, refused_group, "a group-writable plugin is refused");
    setup_case(base, 0777, 0700, 0755, (uid_t)-1, refused_sticky,
               "a folder inside a world-writable one without the sticky bit is refused");
    setup_case(base, 01777, 0700, 0755, (uid_t)-1, loaded,
               "inside a world-writable folder with the sticky bit (as /tmp): loaded");
    if (geteuid() == 0)
        setup_case(base, 0700, 0700, 0755, 12345, refused_owner,
                   "a plugin owned by another user is refused");
    else
        tap_skip("a plugin owned by another user is refused", "needs root to chown");
    rmdir(base);
}

int main(void)
{
    tap_init();
    test_exports_and_nulls();
    test_permissions();
    unsetenv("HIPKIT_PLUGIN_PATH");
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
