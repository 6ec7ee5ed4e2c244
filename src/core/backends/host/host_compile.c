/* JIT on the CPU backend: the system C++ compiler builds a shared object from
 * the user's source, hipkit's HIP headers and a generated kernel table. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include "host_backend.h"
#include "host_loops.h"
#include "host_source.h"
#include "pp_text.h"
#include "process.h"
#include "hip/hipkit_host_abi.h"

/* The compiler command: HIPKIT_CXX split on blanks ("ccache g++"), else c++. */
static int compiler_words(char *buf, size_t cap, char **words, int max)
{
    const char *env = getenv("HIPKIT_CXX");
    snprintf(buf, cap, "%s", env && *env ? env : "c++");
    int n = 0;
    for (char *tok = strtok(buf, " \t"); tok && n < max; tok = strtok(NULL, " \t"))
        words[n++] = tok;
    return n;
}

/* Resolves a command name through PATH, as the shell would, to the real
 * file (its identity goes into the toolchain string). */
static int resolve_command(const char *cmd, char *out, size_t cap)
{
    char found[4096];
    if (hkc_find_program(cmd, NULL, NULL, found, sizeof found) != 0)
        return -1;
    (void)cap; /* realpath writes at most PATH_MAX, which out holds */
    return realpath(found, out) ? 0 : -1;
}

static uint64_t headers_hash(void)
{
    XXH64_state_t *st = XXH64_createState();
    XXH64_reset(st, 0);
    for (const hkc_embedded_file *f = hkc_host_headers; f->path; f++) {
        XXH64_update(st, f->path, strlen(f->path) + 1);
        XXH64_update(st, f->data, f->size);
    }
    uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h;
}

/* The compiler's identity is its own --version line plus a hash of hipkit's
 * headers. Running the compiler costs milliseconds, which a cache hit in a
 * new process cannot afford, so the line is remembered in the cache folder
 * under the compiler binary's path, size, inode and mtime. */
const char *hkc_host_toolchain(hkc_backend *be, hkc_cache *cache)
{
    host_impl *h = be->impl;
    h->cache = cache;
    if (h->toolchain_known)
        return h->toolchain;
    h->toolchain_known = 1;
    char buf[1024], *words[64];
    int n = compiler_words(buf, sizeof buf, words, 63);
    char real[4096];
    struct stat st;
    if (n == 0 || resolve_command(words[0], real, sizeof real) != 0 || stat(real, &st) != 0) {
        snprintf(h->toolchain, sizeof h->toolchain, "%s (not found)", n ? words[0] : "c++");
        return h->toolchain;
    }
    uint64_t hh = headers_hash();
    hkc_key_builder *kb = hkc_key_begin();
    hkc_key_add_str(kb, "compiler", real);
    for (int i = 1; i < n; i++)
        hkc_key_add_str(kb, "word", words[i]);
    hkc_key_add(kb, "size", &st.st_size, sizeof st.st_size);
    hkc_key_add(kb, "ino", &st.st_ino, sizeof st.st_ino);
    hkc_key_add(kb, "mtime", &st.st_mtim, sizeof st.st_mtim);
    hkc_cache_entry_id id = {.sub = "toolchains", .name = "host-cxx", .ext = "txt",
                             .key = hkc_key_end(kb)};
    hkc_strbuf warn, out;
    hkc_strbuf_init(&warn);
    hkc_strbuf_init(&out);
    void *data = NULL;
    size_t size = 0;
    char line[400] = "";
    if (hkc_cache_get(cache, &id, &data, &size, &warn) && size < sizeof line) {
        memcpy(line, data, size);
        line[size] = 0;
    } else {
        words[n] = "--version";
        words[n + 1] = NULL;
        if (hkc_run_capture(words, NULL, &out) == 0) {
            size_t len = strcspn(out.data, "\n");
            snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1),
                     out.data);
            hkc_cache_put(cache, &id, line, strlen(line), &warn);
        } else {
            snprintf(line, sizeof line, "%s (does not run)", words[0]);
        }
    }
    free(data);
    hkc_strbuf_free(&warn);
    hkc_strbuf_free(&out);
    /* "loops 6": the loop-mode transform runs (every HIPKIT_HOST_MODE but
     * fibers), and its version (host_loops*.c): its output is part of
     * every module with barriers. */
    snprintf(h->toolchain, sizeof h->toolchain, "%s; hipkit-host-abi %u hdr %08x%s", line,
             HK_HOST_ABI_VERSION, (unsigned)hh, hkc_host_fibers_forced() ? "" : " loops 6");
    return h->toolchain;
}

int hkc_host_write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        done += (size_t)w;
    }
    return 0;
}

int hkc_host_write_file(const char *path, const char *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int e = hkc_host_write_all(fd, data, n);
    if (close(fd) != 0 && !e)
        e = -errno;
    return e;
}

/* A private folder per context: hipkit's headers under include/, compiler
 * inputs and outputs, and the names modules are loaded under. */
int hkc_host_workdir(host_impl *h, hkc_strbuf *log)
{
    if (h->workdir)
        return 0;
    char tmpl[4096];
    int e = hkc_tempdir_create("host", tmpl, sizeof tmpl);
    if (e) {
        hkc_strbuf_printf(log, "cannot create a temporary folder %s: %s", tmpl, strerror(-e));
        return HK_EIO;
    }
    h->workdir = strdup(tmpl);
    return h->workdir ? 0 : HK_ENOMEM;
}

static int ensure_headers(host_impl *h, hkc_strbuf *log)
{
    int r = hkc_host_workdir(h, log);
    if (r || h->headers_written)
        return r;
    const char *tmpl = h->workdir;
    char path[4200];
    snprintf(path, sizeof path, "%s/include", tmpl);
    mkdir(path, 0700);
    for (const hkc_embedded_file *f = hkc_host_headers; f->path; f++) {
        int e = hkc_tempdir_write(path, f->path, f->data, f->size); /* makes hip/, cuda/std/ */
        if (e) {
            hkc_strbuf_printf(log, "cannot write %s/%s: %s", path, f->path, strerror(-e));
            return HK_EIO;
        }
    }
    h->headers_written = 1;
    return 0;
}

static void early_free(struct host_early *e);

void hkc_host_compile_cleanup(host_impl *h)
{
    early_free(h->early);
    h->early = NULL;
    if (!h->workdir)
        return;
    /* Everything in it: a compile cut short may have left its files. */
    hkc_tempdir_remove(h->workdir);
    free(h->workdir);
    h->workdir = NULL;
}

static int has_opt_flag(const hkc_compile_job *job)
{
    for (int i = 0; i < job->nflags; i++)
        if (!strncmp(job->flags[i], "-O", 2))
            return 1;
    return 0;
}

/* The compiler's options for job (mode[], at most 16; returns how many):
 * those of the compile, or with preprocess those of its `-E` for kernel
 * discovery, which are the compile's own (minus the link's) so that the
 * precompiled header built for the compile is valid for it too
 * (-fpch-preprocess: GCC reads it under -E, and writes a pragma where the
 * header was). */
static int compile_mode(const hkc_compile_job *job, int preprocess, const char **mode)
{
    /* Device code has neither exceptions nor RTTI; without them the module
     * needs no libstdc++, whose loading would cost a cache hit a millisecond.
     * A kernel may take 32-byte vectors (double4) by value, and GCC then
     * notes that its ABI for passing them changed in 4.6: nothing here
     * crosses that line, the kernels and their block runners being compiled
     * together (-Wno-psabi). */
    static const char *const shared_object[] = {
        "-fPIC", "-shared", "-fvisibility=hidden", "-Wl,-Bsymbolic", "-fno-exceptions",
        "-fno-rtti", "-Wl,--as-needed", "-pthread", "-Wno-psabi", NULL};
    int nm = 0;
    if (preprocess) {
        mode[nm++] = "-E";
        mode[nm++] = "-fpch-preprocess";
    }
    mode[nm++] = "-std=c++17";
    if (!has_opt_flag(job))
        mode[nm++] = "-O3";
    for (int i = 0; shared_object[i]; i++)
        if (!preprocess || (strcmp(shared_object[i], "-shared") && strncmp(shared_object[i], "-Wl,", 4)))
            mode[nm++] = shared_object[i];
    return nm;
}

/* Runs the C++ compiler on src with the mode's options, hipkit's headers,
 * the job's flags, writing out, and reads out back (malloc'd). Its messages
 * go to log: all of them on failure, warnings on success. */
static int run_compiler(host_impl *h, const hkc_compile_job *job, const char *const *mode, int nm,
                        int pch, const char *src, const char *out, char **data, size_t *size,
                        hkc_strbuf *log)
{
    char wbuf[1024], *words[64], inc[4200];
    int nw = compiler_words(wbuf, sizeof wbuf, words, 16);
    snprintf(inc, sizeof inc, "-I%s/include", h->workdir);
    const char **argv = calloc((size_t)(nw + nm + job->nflags + 16), sizeof *argv);
    if (!argv) {
        unlink(src);
        return HK_ENOMEM;
    }
    int a = 0;
    for (int i = 0; i < nw; i++)
        argv[a++] = words[i];
    for (int i = 0; i < nm; i++)
        argv[a++] = mode[i];
    argv[a++] = inc;
    for (int i = 0; i < job->nflags; i++)
        argv[a++] = job->flags[i];
    argv[a] = NULL;
    if (pch)
        hkc_host_pch_ensure(h, argv, a);
    argv[a++] = "-x";
    argv[a++] = "c++";
    argv[a++] = src;
    argv[a++] = "-o";
    argv[a++] = out;
    argv[a] = NULL;
    /* The link: a module needs the C library, libm and libgcc's helpers
     * (the libstdc++ of device code, without exceptions or RTTI, is in its
     * headers), and reading libstdc++.so for the symbols the driver links
     * by default cost every link about 10 ms of its 25. Nothing may stay
     * undefined then: a module that does need more (operator new, a
     * library function of libstdc++, -fexceptions) fails this link and is
     * linked again with the driver's default libraries. */
    int link = 0;
    for (int i = 0; i < nm; i++)
        link |= !strcmp(mode[i], "-shared");
    int lean = a;
    if (link) {
        static const char *const libs[] = {"-nodefaultlibs", "-lc", "-lm", "-lgcc", "-Wl,--no-undefined", NULL};
        for (int i = 0; libs[i]; i++)
            argv[lean++] = libs[i];
        argv[lean] = NULL;
    }
    hkc_strbuf said;
    hkc_strbuf_init(&said);
    int status = hkc_run_capture((char *const *)argv, NULL, &said);
    if (link && status > 0 &&
        (strstr(said.data, "undefined reference") || strstr(said.data, "undefined symbol"))) {
        argv[a] = NULL;
        hkc_strbuf_clear(&said);
        status = hkc_run_capture((char *const *)argv, NULL, &said);
    }
    free(argv);
    unlink(src);
    int r = 0;
    if (status < 0) {
        hkc_strbuf_printf(log, "cannot run the C++ compiler '%s' (set HIPKIT_CXX to choose one): %s",
                          words[0], strerror(-status));
        r = HK_ECOMPILE;
    } else if (status != 0) {
        hkc_strbuf_printf(log, "compiling %s failed:\n%s", job->name, said.data);
        r = HK_ECOMPILE;
    } else {
        hkc_strbuf_append(log, said.data, said.len);
        int e = hkc_read_file(out, data, size);
        if (e) {
            hkc_strbuf_printf(log, "cannot read the compiler's output %s: %s", out, strerror(-e));
            r = HK_EIO;
        }
    }
    hkc_strbuf_free(&said);
    unlink(out);
    return r;
}

/* Where the kernel table host_source.c appended begins (its #line, the
 * last in tu), or 0. libclang's parse stops there: the analysis reads the
 * kernels only, and the table's block runners are templates whose
 * instantiation would cost the parse a third of its time. */
static size_t table_at(const hkc_strbuf *tu)
{
    static const char mark[] = "\n#line 1 \"<hipkit kernel table>\"\n";
    size_t n = sizeof mark - 1;
    for (size_t i = tu->len >= n ? tu->len - n + 1 : 0; i-- > 0;)
        if (!memcmp(tu->data + i, mark, n))
            return i + 1;
    return 0;
}

/* Loop mode's libclang parse takes about as long as kernel discovery's
 * preprocessor, which runs just before the compile and does not need it:
 * the preprocessor's call starts it on a thread of its own, on the unit
 * the compile would write from the kernels found in the source as written.
 * The compile takes the parse when its unit is that one (the same text up
 * to the kernel table, flags and precompiled header), else parses again. */
typedef struct host_early {
    pthread_t th;
    host_impl *h;
    char *name, *source, **flags;
    int nflags;
    char inc[4200], pch_path[4300];
    const char *pch;
    hkc_strbuf tu;
    size_t parse_len;
    void *index, *unit;
    int joined;
} host_early;

static void early_free(struct host_early *e)
{
    if (!e)
        return;
    if (!e->joined)
        pthread_join(e->th, NULL);
    hkc_host_loops_parse_free(e->index, e->unit);
    for (int i = 0; i < e->nflags; i++)
        free(e->flags[i]);
    free(e->flags);
    free(e->name);
    free(e->source);
    hkc_strbuf_free(&e->tu);
    free(e);
}

static size_t table_at(const hkc_strbuf *tu);

static void *early_run(void *arg)
{
    host_early *e = arg;
    hkc_source_kernel *k = NULL;
    char **g = NULL;
    int nk = 0, all = 0, ng = 0, sync = 0;
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    if (hkc_source_scan_all(e->source, NULL, NULL, 0, &k, &nk, &g, &ng, &msg) == 0) {
        all = nk;
        nk = hkc_source_launchable(k, nk);
        for (int i = 0; i < nk; i++)
            sync |= k[i].uses_sync;
        if (sync && hkc_host_source_prepare(e->name, e->source, k, nk, (const char *const *)g, ng,
                                            &e->tu, &msg) == 0 && !e->tu.oom) {
            e->parse_len = table_at(&e->tu);
            const char *const *fl = (const char *const *)e->flags;
            e->pch = hkc_host_loops_pch(e->h, e->inc, fl, e->nflags, e->pch_path, sizeof e->pch_path);
            hkc_host_loops_job lj = {e->name, e->tu.data, e->tu.len, e->parse_len, e->inc, fl,
                                     e->nflags, k, nk, 0, e->pch, NULL, NULL};
            hkc_host_loops_parse_early(&lj, &e->index, &e->unit);
        }
    }
    hkc_source_kernels_free(k, all);
    hkc_source_globals_free(g, ng);
    hkc_strbuf_free(&msg);
    return NULL;
}

/* Starts the parse for job beside its preprocessor (see host_early). */
static void early_start(host_impl *h, const hkc_compile_job *job)
{
    early_free(h->early);
    h->early = NULL;
    if (hkc_host_fibers_forced())
        return;
    host_early *e = calloc(1, sizeof *e);
    if (!e)
        return;
    e->h = h;
    hkc_strbuf_init(&e->tu);
    snprintf(e->inc, sizeof e->inc, "%s/include", h->workdir);
    e->name = strdup(job->name);
    e->source = strdup(job->source);
    e->flags = calloc((size_t)job->nflags + 1, sizeof *e->flags);
    int ok = e->name && e->source && e->flags;
    for (int i = 0; ok && i < job->nflags; i++, e->nflags++)
        ok = (e->flags[i] = strdup(job->flags[i])) != NULL;
    if (!ok || pthread_create(&e->th, NULL, early_run, e) != 0) {
        e->joined = 1; /* no thread to wait for */
        early_free(e);
        return;
    }
    h->early = e;
}

/* The early parse (joined), when it parsed lj's unit with lj's flags and
 * precompiled header: handed to lj. */
static void early_take(host_early *e, hkc_host_loops_job *lj)
{
    if (!e)
        return;
    int same = e->unit && e->parse_len && e->parse_len == lj->parse_len &&
               !memcmp(e->tu.data, lj->tu, e->parse_len) && e->nflags == lj->nflags &&
               !(e->pch ? !lj->pch || strcmp(e->pch, lj->pch) : lj->pch != NULL);
    for (int i = 0; same && i < e->nflags; i++)
        same = !strcmp(e->flags[i], lj->flags[i]);
    if (same) {
        lj->pre_index = e->index;
        lj->pre_unit = e->unit;
        e->index = e->unit = NULL;
    }
}

static int compile_locked(hkc_backend *be, const hkc_compile_job *job, void **code,
                          size_t *code_size, hkc_strbuf *log)
{
    host_impl *h = be->impl;
    /* the parse started beside the preprocessor, finished before anything
     * here touches the files it reads (the precompiled header's copy) */
    host_early *early = h->early;
    h->early = NULL;
    if (early) {
        pthread_join(early->th, NULL);
        early->joined = 1;
    }
    int r = ensure_headers(h, log);
    if (r) {
        early_free(early);
        return r;
    }
    hkc_strbuf tu, err;
    hkc_strbuf_init(&tu);
    hkc_strbuf_init(&err);
    r = hkc_host_source_prepare(job->name, job->source, job->kernels, job->nkernels,
                                job->globals, job->nglobals, &tu, &err);
    if (r != 0) {
        hkc_strbuf_printf(log, "%s: %s", job->name, err.data);
        hkc_strbuf_free(&tu);
        hkc_strbuf_free(&err);
        early_free(early);
        return HK_ECOMPILE;
    }
    hkc_strbuf_free(&err);
    /* The loop versions of kernels with barriers, and how each runs. */
    char inc[4200];
    snprintf(inc, sizeof inc, "%s/include", h->workdir);
    /* On unless HIPKIT_HOST_MODE=fibers (then nothing is parsed). */
    hkc_host_loops_job lj = {job->name, tu.data, tu.len, table_at(&tu), inc, (const char *const *)job->flags,
                             job->nflags, job->kernels, job->nkernels, hkc_host_fibers_forced(), NULL,
                             NULL, NULL};
    int parse = 0;
    for (int i = 0; i < job->nkernels; i++)
        parse |= job->kernels[i].uses_sync;
    char lpch[4300];
    if (parse && !lj.off) /* (without libclang: none is built, nothing parsed) */
        lj.pch = hkc_host_loops_pch(h, inc, lj.flags, lj.nflags, lpch, sizeof lpch);
    if (parse && !lj.off)
        early_take(early, &lj);
    early_free(early);
    hkc_strbuf full;
    hkc_strbuf_init(&full);
    r = hkc_host_loops_apply(&lj, &full);
    hkc_strbuf_free(&tu);
    if (r != 0) {
        hkc_strbuf_free(&full);
        return r;
    }
    tu = full;
    unsigned serial = h->serial++;
    char src[4200], out[4200];
    snprintf(src, sizeof src, "%s/m%u-%d.cpp", h->workdir, serial, (int)getpid());
    snprintf(out, sizeof out, "%s/m%u-%d.so", h->workdir, serial, (int)getpid());
    int e = hkc_host_write_file(src, tu.data, tu.len);
    hkc_strbuf_free(&tu);
    if (e) {
        hkc_strbuf_printf(log, "cannot write %s: %s", src, strerror(-e));
        return HK_EIO;
    }

    const char *mode[16];
    int nm = compile_mode(job, 0, mode);
    char *data;
    size_t size;
    r = run_compiler(h, job, mode, nm, 1, src, out, &data, &size, log);
    if (r != 0)
        return r;
    *code = data;
    *code_size = size;
    return 0;
}

int hkc_host_compile(hkc_backend *be, int dev, const hkc_compile_job *job, void **code,
                     size_t *code_size, hkc_strbuf *log)
{
    (void)dev;
    host_impl *h = be->impl;
    pthread_mutex_lock(&h->compile_lock);
    int r = compile_locked(be, job, code, code_size, log);
    pthread_mutex_unlock(&h->compile_lock);
    return r;
}

int hkc_host_compile_unit(hkc_backend *be, const char *unit, const char *flags, void **code,
                          size_t *code_size, hkc_strbuf *log)
{
    host_impl *h = be->impl;
    int nflags = 0;
    for (const char *f = flags; *f; f += strlen(f) + 1)
        nflags++;
    const char **fv = calloc((size_t)nflags + 1, sizeof *fv);
    if (!fv)
        return HK_ENOMEM;
    pthread_mutex_lock(&h->compile_lock);
    hkc_key_builder *kb = hkc_key_begin();
    hkc_key_add_str(kb, "toolchain", hkc_host_toolchain(be, h->cache));
    hkc_key_add_str(kb, "unit", unit);
    nflags = 0;
    for (const char *f = flags; *f; f += strlen(f) + 1) {
        fv[nflags++] = f;
        hkc_key_add_str(kb, "flag", f);
    }
    hkc_cache_entry_id id = {.sub = "host-fibers", .name = "fibers-copy", .ext = "so",
                             .key = hkc_key_end(kb)};
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    int r = 0;
    if (!hkc_cache_get(h->cache, &id, code, code_size, &warn)) {
        hkc_compile_job job = {.name = "fibers copy", .source = unit, .flags = fv, .nflags = nflags};
        r = ensure_headers(h, log);
        unsigned serial = h->serial++;
        char src[4200], out[4200];
        if (r == 0) {
            snprintf(src, sizeof src, "%s/f%u-%d.cpp", h->workdir, serial, (int)getpid());
            snprintf(out, sizeof out, "%s/f%u-%d.so", h->workdir, serial, (int)getpid());
            int e = hkc_host_write_file(src, unit, strlen(unit));
            if (e) {
                hkc_strbuf_printf(log, "cannot write %s: %s", src, strerror(-e));
                r = HK_EIO;
            }
        }
        if (r == 0) {
            const char *mode[16];
            int nm = compile_mode(&job, 0, mode);
            r = run_compiler(h, &job, mode, nm, 1, src, out, (char **)code, code_size, log);
        }
        if (r == 0)
            hkc_cache_put(h->cache, &id, *code, *code_size, &warn);
    }
    pthread_mutex_unlock(&h->compile_lock);
    hkc_strbuf_free(&warn);
    free(fv);
    return r;
}

/* The host compiles for this machine only: a shared object loads only where
 * the target id (uname's machine) is the same. */
int hkc_host_target_normalize(hkc_backend *be, const char *target, char *out, size_t cap,
                              hkc_strbuf *err)
{
    host_impl *h = be->impl;
    if (strcmp(target, h->arch)) {
        hkc_strbuf_printf(err, "host target '%s' asked, but this machine is '%s' (a host code "
                               "object only loads where the target id matches exactly)",
                          target, h->arch);
        return HK_EINVAL;
    }
    snprintf(out, cap, "%s", h->arch);
    return 0;
}

int hkc_host_compile_target(hkc_backend *be, const char *target, const hkc_compile_job *job,
                            void **code, size_t *code_size, hkc_strbuf *log)
{
    (void)target; /* normalised: this machine's */
    return hkc_host_compile(be, 0, job, code, code_size, log);
}

/* A line of the preprocessed text is the user's unless it comes from a
 * system header, hipkit's own headers or the compiler's built-ins. */
static int user_file(const char *file, int system, void *arg)
{
    const char *ours = arg;
    return !system && file[0] != '<' && strncmp(file, ours, strlen(ours)) != 0;
}

/* The source preprocessed as the compile will see it (same headers, flags
 * and defines), with __HIPKIT_DISCOVER__ so that __global__ survives, cut
 * down to the user's lines: what kernel discovery scans. */
static int preprocess_locked(host_impl *h, const hkc_compile_job *job, hkc_strbuf *pp,
                             hkc_strbuf *log);

int hkc_host_preprocess(hkc_backend *be, int dev, const hkc_compile_job *job, hkc_strbuf *pp,
                        hkc_strbuf *log)
{
    (void)dev;
    host_impl *h = be->impl;
    pthread_mutex_lock(&h->compile_lock);
    int r = preprocess_locked(h, job, pp, log);
    pthread_mutex_unlock(&h->compile_lock);
    return r;
}

static int preprocess_locked(host_impl *h, const hkc_compile_job *job, hkc_strbuf *pp,
                             hkc_strbuf *log)
{
    int r = ensure_headers(h, log);
    if (r)
        return r;
    early_start(h, job);
    unsigned serial = h->serial++;
    char src[4200], out[4200], ours[4200];
    snprintf(src, sizeof src, "%s/p%u-%d.cpp", h->workdir, serial, (int)getpid());
    snprintf(out, sizeof out, "%s/p%u-%d.ii", h->workdir, serial, (int)getpid());
    snprintf(ours, sizeof ours, "%s/include/", h->workdir);
    hkc_strbuf tu;
    hkc_strbuf_init(&tu);
    /* The header as the compile sees it (so its precompiled form serves),
     * then the words discovery looks for made words again, as the header
     * leaves them under __HIPKIT_DISCOVER__. */
    hkc_strbuf_puts(&tu, "#include <hip/hip_runtime.h>\n#undef __global__\n#undef __device__\n"
                         "#undef __constant__\n#undef __managed__\n#undef __launch_bounds__\n"
                         "#define __HIPKIT_DISCOVER__ 1\n");
    hkc_pp_line_directive(&tu, 1, job->name);
    hkc_strbuf_puts(&tu, job->source);
    hkc_strbuf_puts(&tu, "\n");
    int e = hkc_host_write_file(src, tu.data, tu.len);
    hkc_strbuf_free(&tu);
    if (e) {
        hkc_strbuf_printf(log, "cannot write %s: %s", src, strerror(-e));
        return HK_EIO;
    }
    const char *mode[16];
    int nm = compile_mode(job, 1, mode);
    char *text = NULL;
    r = run_compiler(h, job, mode, nm, 1, src, out, &text, NULL, log);
    if (r != 0)
        return r;
    hkc_strbuf_clear(log); /* a preprocessor's warnings come again from the compile */
    hkc_pp_filter(text, user_file, ours, pp);
    free(text);
    return pp->oom ? HK_ENOMEM : 0;
}
