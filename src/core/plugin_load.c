/* The loader: finds hipkit-plugin-NAME.so files in the build's or the
 * install's folder and HIPKIT_PLUGIN_PATH, checks and loads them, runs their
 * init, and owns the context's entry list (families and refusals) until the
 * context ends. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h> /* ElfW: the ABI symbol's size */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "elf_exports.h"
#include "plugin_internal.h"
#include "plugin_config.h"

_Static_assert(HK_PLUGIN_ABI_MAJOR == HK_ABI_VERSION_MAJOR &&
                   HK_PLUGIN_ABI_MINOR == HK_ABI_VERSION_MINOR,
               "plugin.h and version.h disagree on the plugin ABI");

static void *grow(void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return p;
    int n = *cap ? *cap * 2 : 8;
    while (n < need)
        n *= 2;
    void *q = realloc(p, (size_t)n * elem);
    if (q)
        *cap = n;
    return q;
}

int hkc_plugin_family_push(hkc_plugins *ps, pl_family *f)
{
    pl_family **v = grow(ps->fams, &ps->capfams, ps->nfams + 1, sizeof *v);
    if (!v)
        return HK_ENOMEM;
    ps->fams = v;
    ps->fams[ps->nfams++] = f;
    return 0;
}

void hkc_plugin_family_free(hk_context *ctx, pl_family *f)
{
    for (int i = 0; i < f->nsrcs; i++) {
        if (f->srcs[i].mods)
            for (int d = 0; d < ctx->ndevices; d++)
                hk_module_free(f->srcs[i].mods[d]);
        free(f->srcs[i].mods);
        for (int j = 0; j < f->srcs[i].nimgs; j++) {
            free(f->srcs[i].imgs[j].backend);
            free(f->srcs[i].imgs[j].target);
            free(f->srcs[i].imgs[j].toolchain);
        }
        free(f->srcs[i].imgs);
        free(f->srcs[i].name);
        free(f->srcs[i].text);
    }
    for (int i = 0; i < f->nks; i++) {
        free(f->ks[i].name);
        free(f->ks[i].source);
        free(f->ks[i].signature);
        free(f->ks[i].doc);
        free(f->ks[i].ks);
    }
    for (int i = 0; i < f->nops; i++) {
        free(f->ops[i].name);
        free(f->ops[i].usage);
        free(f->ops[i].doc);
    }
    free(f->ops);
    free(f->srcs);
    free(f->ks);
    free(f->name);
    free(f->version);
    free(f->description);
    free(f->path);
    free(f->error);
    free(f);
}

/* An entry for a refused plugin or folder; takes msg. */
static void push_refusal(hkc_plugins *ps, const char *name, const char *path, char *msg)
{
    pl_family *f = calloc(1, sizeof *f);
    if (!f) {
        free(msg);
        return;
    }
    f->name = pl_dupstr(name);
    f->version = pl_dupstr("");
    f->description = pl_dupstr("");
    f->path = pl_dupstr(path);
    f->error = msg;
    if (!f->name || !f->path || !f->error || hkc_plugin_family_push(ps, f) != 0)
        hkc_plugin_family_free(ps->ctx, f);
}

static void defer(hkc_plugins *ps, const char *name, const char *path, char *refusal);

/* Records a refusal and warns. During the scan the warning comes now and
 * the entry joins the list in its place among the plugins found (defer),
 * so a listing shows them in the order the folders were read. */
static void refuse(hkc_plugins *ps, const char *name, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void refuse(hkc_plugins *ps, const char *name, const char *path, const char *fmt, ...)
{
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    va_list ap;
    va_start(ap, fmt);
    hkc_strbuf_vprintf(&msg, fmt, ap);
    va_end(ap);
    hkc_warn(ps->ctx, "plugin %s: %s", name, msg.data);
    if (ps->scanning)
        defer(ps, name, path, hkc_strbuf_take(&msg));
    else
        push_refusal(ps, name, path, hkc_strbuf_take(&msg));
    hkc_strbuf_free(&msg);
}

/* ---------------------------------------------------------- the loader */

/* Why path (a plugin or a folder of them) may not be trusted, or NULL: the
 * cache's rules (hkc_trust_problem, root's files allowed), and no
 * world-writable parent without the sticky bit (anyone could rename path
 * away and put another in its place). */
static const char *untrusted(const char *path, char *why, size_t cap)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return NULL; /* gone: the caller's open says so */
    const char *p = (st.st_mode & S_IWOTH) ? "world-writable" : hkc_trust_problem(&st, 1);
    if (p) {
        snprintf(why, cap, "%s is %s", path, p);
        return why;
    }
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    while (slash && slash > parent && slash[1] == 0) { /* "dir/" */
        *slash = 0;
        slash = strrchr(parent, '/');
    }
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else
        slash[slash == parent] = 0; /* "/x" keeps "/" */
    if (stat(parent, &st) == 0 && (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
        snprintf(why, cap, "%s lies in %s, which is world-writable without the sticky bit", path,
                 parent);
        return why;
    }
    return NULL;
}

/* Reads the file's dynamic symbols before dlopen, which runs the object's
 * constructors whether or not it is a plugin: 0 when it exports both
 * symbols, else -1 with the reason in why. */
static int exports_entry(const char *path, const char *name, char *why, size_t cap)
{
    char abi[128], init[128];
    snprintf(abi, sizeof abi, "hk_plugin_%s_abi", name);
    snprintf(init, sizeof init, "hk_plugin_%s_init", name);
    const char *names[] = {abi, init};
    int found[2] = {0, 0};
    char *data = NULL;
    size_t size = 0;
    int e = hkc_read_file(path, &data, &size);
    if (e) {
        snprintf(why, cap, "cannot be read: %s", hkc_file_strerror(e));
        return -1;
    }
    int r = hkc_elf_exports(data, size, names, 2, found);
    free(data);
    if (r == HKC_ELF_NOT_ELF)
        snprintf(why, cap, "is not a 64-bit ELF shared object; not loaded");
    else if (r)
        snprintf(why, cap, "has no readable dynamic symbol table; not loaded");
    else if (!found[0] || !found[1])
        snprintf(why, cap, "exports no %s and %s (read from the file; not loaded, so its "
                           "constructors did not run)", abi, init);
    return r || !found[0] || !found[1] ? -1 : 0;
}

/* 1 the first time a real path is met: a folder listed twice, or a plugin
 * reached through a link as well, loads once. */
static int first_sight(hkc_plugins *ps, const char *path)
{
    char *real = realpath(path, NULL);
    if (!real)
        return 0;
    for (int i = 0; i < ps->nseen; i++)
        if (!strcmp(ps->seen[i], real)) {
            free(real);
            return 0;
        }
    char **seen = realloc(ps->seen, (size_t)(ps->nseen + 1) * sizeof *seen);
    if (!seen) {
        free(real);
        return 0;
    }
    ps->seen = seen;
    ps->seen[ps->nseen++] = real;
    return 1;
}

/* Drops what a failed init registered: a half-made family is worse than
 * none. Entries before `first` are other plugins'. */
static void drop_families(hkc_plugins *ps, const pl_session *s, int first)
{
    int w = first;
    for (int i = first; i < ps->nfams; i++) {
        if (ps->fams[i]->owner == s)
            hkc_plugin_family_free(ps->ctx, ps->fams[i]);
        else
            ps->fams[w++] = ps->fams[i];
    }
    ps->nfams = w;
}

/* Runs init with a session of its own, kept until the context ends (a
 * plugin may keep the table). 0, or nonzero with the reason in why when
 * init fails or registers nothing; then nothing it registered stays. */
int hkc_plugin_run_init(hkc_plugins *ps, hk_plugin_init_fn *init, unsigned abi_minor, const char *name,
                        const char *path, hkc_strbuf *why)
{
    pl_session *s = calloc(1, sizeof *s);
    pl_session **sv = grow(ps->sess, &ps->capsess, ps->nsess + 1, sizeof *sv);
    if (!s || !sv) {
        free(s);
        if (sv)
            ps->sess = sv;
        hkc_strbuf_puts(why, "out of memory");
        return HK_ENOMEM;
    }
    ps->sess = sv;
    ps->sess[ps->nsess++] = s;
    hkc_plugin_api_fill(&s->api);
    s->owner = ps;
    s->abi_minor = abi_minor;
    s->plugin = pl_dupstr(name);
    hkc_strbuf_init(&s->err);
    int first = ps->nfams;
    s->open = 1;
    int r = init(&s->api);
    s->open = 0;
    int nfam = 0;
    for (int i = first; i < ps->nfams; i++)
        if (ps->fams[i]->owner == s)
            nfam++;
    if (r == 0 && nfam == 0) {
        r = -1;
        s->open = 1;
        s->api.error(&s->api, "registered no family");
        s->open = 0;
    }
    if (r != 0) {
        drop_families(ps, s, first);
        hkc_strbuf_printf(why, "init failed (%d): %s", r,
                          s->err.len ? s->err.data : "no reason given");
        return r;
    }
    if (s->err.len) /* errors it said but chose to survive */
        hkc_warn(ps->ctx, "plugin %s: %s", name, s->err.data);
    for (int i = first; i < ps->nfams; i++)
        if (ps->fams[i]->owner == s) {
            free(ps->fams[i]->path);
            ps->fams[i]->path = pl_dupstr(path);
        }
    return 0;
}

/* dlopens file (path itself, or a copy of it: plugin_reload.c), once its
 * dynamic symbols read from the file show hk_plugin_NAME_abi and _init
 * (else no constructor of it runs), and checks that it exports them for an ABI this hipkit
 * takes (same major, minor not newer). The init function, or NULL with
 * the reason in why. The handle is never closed: a plugin may keep state,
 * and its text is cheap. */
hk_plugin_init_fn *hkc_plugin_open(const char *file, const char *name, hkc_strbuf *why, unsigned *abi_minor)
{
    char bad[PATH_MAX + 200];
    if (exports_entry(file, name, bad, sizeof bad)) {
        hkc_strbuf_puts(why, bad);
        return NULL;
    }
    void *dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        hkc_strbuf_printf(why, "cannot be loaded: %s", dlerror());
        return NULL;
    }
    char abi_name[128], sym[128];
    snprintf(abi_name, sizeof abi_name, "hk_plugin_%s_abi", name);
    const unsigned *abi = dlsym(dl, abi_name);
    snprintf(sym, sizeof sym, "hk_plugin_%s_init", name);
    hk_plugin_init_fn *init = (hk_plugin_init_fn *)dlsym(dl, sym);
    if (!abi || !init) {
        hkc_strbuf_printf(why, "exports no hk_plugin_%s_abi and hk_plugin_%s_init", name, name);
        return NULL;
    }
    /* A symbol of that name with another shape (a 1-byte variable) would
     * be read past its end: the dynamic symbol table says its size (the
     * entry found for the address must be this symbol, not an alias). */
    Dl_info where;
    const ElfW(Sym) *entry = NULL;
    if (dladdr1(abi, &where, (void **)&entry, RTLD_DL_SYMENT) && entry && where.dli_sname &&
        !strcmp(where.dli_sname, abi_name) && entry->st_size != 2 * sizeof *abi) {
        hkc_strbuf_printf(why, "hk_plugin_%s_abi is %zu byte%s, not an ABI version (const unsigned [2], "
                          "as HK_PLUGIN_DEFINE declares it)", name, (size_t)entry->st_size,
                          entry->st_size == 1 ? "" : "s");
        return NULL;
    }
    if (abi[0] != HK_PLUGIN_ABI_MAJOR || abi[1] > HK_PLUGIN_ABI_MINOR) {
        hkc_strbuf_printf(why,
                          "plugin '%s' was built for plugin ABI %u.%u; this hipkit has ABI %u.%u",
                          name, abi[0], abi[1], HK_PLUGIN_ABI_MAJOR, HK_PLUGIN_ABI_MINOR);
        return NULL;
    }
    *abi_minor = abi[1];
    return init;
}

/* A plugin's constructors and init run in a forked child before this
 * process runs them: 0 when the child ended as it chose to (whatever init
 * returned: the real load says why it failed), else -1 with the reason in
 * why: a signal, or an exit init did not choose (a sanitizer's report). The child
 * is killed after PROBE_SECONDS, as a stuck init would hang the command.
 * The child says through a pipe that init returned before it exits: a tool
 * watching the process (valgrind's leak check on the memory of the threads a
 * fork leaves behind) may change the exit status of a child that did fine. */
#define PROBE_SECONDS 20
#define PROBE_REFUSED 97
static int probe_in_child(hkc_plugins *ps, const char *path, const char *name, hkc_strbuf *why)
{
    int said[2];
    if (pipe2(said, O_CLOEXEC) != 0) {
        hkc_strbuf_printf(why, "cannot try its init in a child process: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(said[0]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) { /* its messages come again from the real load */
            dup2(null, 1);
            dup2(null, 2);
        }
        hkc_strbuf w;
        hkc_strbuf_init(&w);
        unsigned minor = 0;
        hk_plugin_init_fn *init = hkc_plugin_open(path, name, &w, &minor);
        /* 0 or PROBE_REFUSED, never what a crash handler exits with (a
         * sanitizer's report ends in exit(1), not in the signal) */
        unsigned char chose =
            init && hkc_plugin_run_init(ps, init, minor, name, path, &w) == 0 ? 0 : PROBE_REFUSED;
        if (write(said[1], &chose, 1) != 1)
            _exit(PROBE_REFUSED);
        _exit(chose);
    }
    close(said[1]);
    if (pid < 0) {
        close(said[0]);
        hkc_strbuf_printf(why, "cannot try its init in a child process: %s", strerror(errno));
        return -1;
    }
    int status = 0;
    struct timespec tick = {0, 2000000};
    for (long waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited++) {
        if (waited > PROBE_SECONDS * 500L) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            close(said[0]);
            hkc_strbuf_printf(why, "its init did not finish in %d s in a child process", PROBE_SECONDS);
            return -1;
        }
        nanosleep(&tick, NULL);
    }
    unsigned char chose = 0;
    ssize_t got;
    while ((got = read(said[0], &chose, 1)) < 0 && errno == EINTR)
        ;
    close(said[0]);
    if (WIFSIGNALED(status)) {
        hkc_strbuf_printf(why, "its init crashed a child process (%s)", strsignal(WTERMSIG(status)));
        return -1;
    }
    if (got != 1 && WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != PROBE_REFUSED) {
        hkc_strbuf_printf(why, "its init crashed a child process (exit status %d)", WEXITSTATUS(status));
        return -1;
    }
    return 0;
}

/* A plugin file found by the scan, loaded when first needed; or a refusal
 * the scan made (refusal set), listed in its place. */
typedef struct pl_pending {
    char *name, *path, *refusal;
    int loaded; /* tried already (loaded or refused): never again */
} pl_pending;

static void defer(hkc_plugins *ps, const char *name, const char *path, char *refusal)
{
    pl_pending *v = grow(ps->pending, &ps->cappending, ps->npending + 1, sizeof *v);
    if (v)
        ps->pending = v;
    char *n = v ? pl_dupstr(name) : NULL, *p = v ? pl_dupstr(path) : NULL;
    if (!n || !p) {
        free(n);
        free(p);
        free(refusal);
        return;
    }
    v[ps->npending++] = (pl_pending){n, p, refusal, 0};
}

/* One hipkit-plugin-NAME.so, found by the scan: checked for trust now (a
 * refusal warns at start, as before), its init run when its family is
 * first needed (load_pending), so that a plugin whose init crashes takes
 * down only the sessions that use it. */
static void load_file(hkc_plugins *ps, const char *path, const char *name)
{
    char bad[PATH_MAX + 200];
    if (untrusted(path, bad, sizeof bad)) {
        refuse(ps, name, path, "%s; refused", bad);
        return;
    }
    if (first_sight(ps, path))
        defer(ps, name, path, NULL);
}

/* Checked (exports named after NAME, ABI major equal and minor not newer;
 * with probe, its init survived a child first) before its init runs. */
static void load_pending(hkc_plugins *ps, pl_pending *p)
{
    if (p->loaded)
        return;
    p->loaded = 1;
    if (p->refusal) {
        push_refusal(ps, p->name, p->path, p->refusal);
        p->refusal = NULL;
        return;
    }
    hkc_strbuf why;
    hkc_strbuf_init(&why);
    if (ps->probe && probe_in_child(ps, p->path, p->name, &why) != 0) {
        refuse(ps, p->name, p->path, "%s", why.data);
        hkc_strbuf_free(&why);
        return;
    }
    unsigned minor = 0;
    hk_plugin_init_fn *init = hkc_plugin_open(p->path, p->name, &why, &minor);
    if (!init || hkc_plugin_run_init(ps, init, minor, p->name, p->path, &why) != 0)
        refuse(ps, p->name, p->path, "%s", why.data);
    hkc_strbuf_free(&why);
}

void hkc_plugins_load_all(hkc_plugins *ps)
{
    /* by index: an init may not add files, but the list is ps's */
    for (int i = 0; ps && i < ps->npending; i++)
        load_pending(ps, &ps->pending[i]);
}

int hkc_plugin_need(hkc_plugins *ps, const char *name)
{
    int i = hkc_plugin_family_index(ps, name);
    if (i >= 0 || !ps || !name)
        return i;
    for (int j = 0; j < ps->npending; j++)
        if (!ps->pending[j].loaded && !strcmp(ps->pending[j].name, name)) {
            load_pending(ps, &ps->pending[j]);
            if ((i = hkc_plugin_family_index(ps, name)) >= 0)
                return i;
            break;
        }
    hkc_plugins_load_all(ps);
    return hkc_plugin_family_index(ps, name);
}

static int plugin_file_name(const char *file, char *name, size_t cap)
{
    static const char pre[] = "hipkit-plugin-", suf[] = ".so";
    size_t n = strlen(file), np = sizeof pre - 1, ns = sizeof suf - 1;
    if (n <= np + ns || strncmp(file, pre, np) || strcmp(file + n - ns, suf))
        return 0;
    size_t len = n - np - ns;
    if (len >= cap)
        return 0;
    memcpy(name, file + np, len);
    name[len] = 0;
    return hkc_plugin_valid_name(name);
}

static int skip_entry(const struct dirent *e) { return e->d_name[0] != '.'; }

/* A folder: its hipkit-plugin-*.so files and those of its subfolders
 * (one level: the build tree has plugins/NAME/hipkit-plugin-NAME.so). */
static void scan_folder(hkc_plugins *ps, const char *dir, int depth)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    char why[PATH_MAX + 200];
    if (untrusted(dir, why, sizeof why)) {
        refuse(ps, dir, dir, "folder %s; its plugins are not loaded", why);
        return;
    }
    struct dirent **list = NULL;
    int n = scandir(dir, &list, skip_entry, alphasort);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX], name[80];
        snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name);
        if (plugin_file_name(list[i]->d_name, name, sizeof name))
            load_file(ps, path, name);
        else if (depth == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            scan_folder(ps, path, 1);
        free(list[i]);
    }
    free(list);
}

/* The build's folder counts only when this libhipkit is the build tree's. */
static int in_build_tree(void)
{
    Dl_info info;
    if (!dladdr((void *)in_build_tree, &info) || !info.dli_fname)
        return 0;
    char *self = realpath(info.dli_fname, NULL), *core = realpath(HKC_CORE_BUILD_DIR, NULL);
    int yes = 0;
    if (self && core) {
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        yes = !strcmp(self, core);
    }
    free(self);
    free(core);
    return yes;
}

void hkc_plugins_load(hk_context *ctx, int probe)
{
    hkc_plugins *ps = calloc(1, sizeof *ps);
    if (!ps)
        return;
    ps->ctx = ctx;
    ps->probe = probe;
    ctx->plugins = ps;
    ps->scanning = 1;
    if (in_build_tree())
        scan_folder(ps, HKC_PLUGIN_BUILD_DIR, 0);
    else
        scan_folder(ps, HKC_PLUGIN_INSTALL_DIR, 0);
    const char *env = getenv("HIPKIT_PLUGIN_PATH");
    if (env && *env) {
        char *copy = strdup(env), *save = NULL;
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save))
            scan_folder(ps, d, 0);
        free(copy);
    }
    ps->scanning = 0;
}

void hkc_plugins_unload(hk_context *ctx)
{
    hkc_plugins *ps = ctx->plugins;
    if (!ps)
        return;
    hkc_plugin_scratch_free_all(ps);
    hkc_plugin_flags_free_all(ps);
    for (int i = 0; i < ps->nfams; i++)
        hkc_plugin_family_free(ctx, ps->fams[i]);
    for (int i = 0; i < ps->nretired; i++)
        hkc_plugin_family_free(ctx, ps->retired[i]);
    free(ps->retired);
    for (int i = 0; i < ps->nsess; i++) {
        hkc_strbuf_free(&ps->sess[i]->err);
        free(ps->sess[i]->plugin);
        free(ps->sess[i]);
    }
    for (int i = 0; i < ps->nseen; i++)
        free(ps->seen[i]);
    for (int i = 0; i < ps->npending; i++) {
        free(ps->pending[i].name);
        free(ps->pending[i].path);
        free(ps->pending[i].refusal);
    }
    free(ps->pending);
    free(ps->seen);
    free(ps->fams);
    free(ps->sess);
    free(ps);
    ctx->plugins = NULL;
}
