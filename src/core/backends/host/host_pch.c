/* Precompiled hip_runtime.h headers: GCC's for the host compile, and
 * libclang's for loop mode's parse of the same translation unit. Parsing
 * hipkit's device header (and the C++ library headers it pulls in) is most of a small
 * module's compile; GCC reads a precompiled header instead when one that is
 * valid for the compile's options lies in hip_runtime.h.gch/, a folder GCC
 * searches (each file in it is considered; an invalid one is skipped, and
 * the text header used, so a stale or foreign one costs nothing but time).
 *
 * One is built per set of compile options (the mode's and the user's), the
 * first time a module needs it, and kept in the disk cache under a key of
 * the compiler's identity (hkc_host_toolchain: the compiler binary and
 * hipkit's header hash) and those options; each context copies the ones it
 * uses into its private include folder. With the cache off, or read-only and
 * without the entry, nothing is built (a precompiled header costs several
 * compiles to build and is worth it only when kept), nor kept when it would
 * fill more than a quarter of the cache's cap. HIPKIT_HOST_PCH=0 turns both
 * off.
 *
 * libclang's (loop mode, host_loops_clang.c) is keyed the same way plus
 * libclang's name and the user's -D/-U/-I, and embeds the headers' text:
 * the work folder it was built from is gone in the next process. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env_values.h"
#include "host_backend.h"
#include "host_loops.h"
#include "process.h"

#define PCH_FOLDER "include/hip/hip_runtime.h.gch"

static hkc_cache_key pch_key(const host_impl *h, const char *const *argv)
{
    hkc_key_builder *kb = hkc_key_begin();
    hkc_key_add_str(kb, "toolchain", h->toolchain);
    size_t wl = strlen(h->workdir);
    for (int i = 0; argv[i]; i++)
        /* the work folder is a new temporary one in every process: its
         * headers' hash is in the toolchain string instead */
        if (strncmp(argv[i], "-I", 2) || strncmp(argv[i] + 2, h->workdir, wl))
            hkc_key_add_str(kb, "arg", argv[i]);
    return hkc_key_end(kb);
}

/* A file made once per key (build writes it at tmp; 0 on success), kept
 * in the disk cache and copied into this context's work folder at path: 1
 * when path is there afterwards. Best effort: a failure leaves the caller
 * on its slower way, which says what is wrong if anything is. */
static int cached_file(host_impl *h, const hkc_cache_entry_id *id, const char *path,
                       int (*build)(void *ctx, const char *tmp), void *ctx)
{
    if (!hkc_env_flag("HIPKIT_HOST_PCH", 1) || !h->cache || !h->toolchain_known ||
        hkc_cache_mode_get(h->cache) == HKC_CACHE_OFF)
        return 0;
    if (access(path, R_OK) == 0)
        return 1; /* this context has it already */
    char hex[33], tmp[4400];
    hkc_key_hex(&id->key, hex);
    /* written or built beside, renamed into place: a half-written one must
     * never be found by a compile */
    snprintf(tmp, sizeof tmp, "%s/%s-%s.tmp", h->workdir, id->sub, hex);
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    size_t size = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int hit = fd >= 0 && hkc_cache_get_into(h->cache, id, fd, &size, &warn);
    if (fd >= 0 && (close(fd) != 0 || !hit || rename(tmp, path) != 0))
        unlink(tmp);
    if (!hit && fd >= 0 && hkc_cache_mode_get(h->cache) == HKC_CACHE_RW && build(ctx, tmp) == 0) {
        char *data = NULL;
        hkc_cache_usage u;
        /* kept only where it leaves room: a 30 MB entry in a small cache
         * would evict every module in it */
        if (hkc_read_file(tmp, &data, &size) == 0 && rename(tmp, path) == 0 &&
            hkc_cache_usage_get(h->cache, &u) == 0 && size <= u.max_bytes / 4)
            hkc_cache_put(h->cache, id, data, size, &warn);
        free(data);
    }
    unlink(tmp);
    hkc_strbuf_free(&warn);
    return access(path, R_OK) == 0;
}

typedef struct {
    host_impl *h;
    const char **argv;
    int argc;
} gch_job;

static int gch_build(void *ctx, const char *tmp)
{
    gch_job *j = ctx;
    char header[4300];
    snprintf(header, sizeof header, "%s/include/hip/hip_runtime.h", j->h->workdir);
    int a = j->argc;
    j->argv[a++] = "-x";
    j->argv[a++] = "c++-header";
    j->argv[a++] = header;
    j->argv[a++] = "-o";
    j->argv[a++] = tmp;
    j->argv[a] = NULL;
    hkc_strbuf said;
    hkc_strbuf_init(&said);
    int status = hkc_run_capture((char *const *)j->argv, NULL, &said);
    j->argv[j->argc] = NULL;
    hkc_strbuf_free(&said);
    return status == 0 ? 0 : -1;
}

static void pch_build(host_impl *h, const char **argv, int argc)
{
    hkc_cache_entry_id id = {.sub = "host-pch", .name = "hip_runtime", .ext = "gch",
                             .key = pch_key(h, argv)};
    char hex[33], dir[4200], path[4300];
    hkc_key_hex(&id.key, hex);
    snprintf(dir, sizeof dir, "%s/" PCH_FOLDER, h->workdir);
    snprintf(path, sizeof path, "%s/%s", dir, hex);
    mkdir(dir, 0700);
    gch_job j = {h, argv, argc};
    cached_file(h, &id, path, gch_build, &j);
}

/* argv: the compiler, the mode's options, -I for hipkit's headers and the
 * job's flags (argc words). Best effort: on any failure the compile goes on
 * from the text header. */
void hkc_host_pch_ensure(host_impl *h, const char *const *argv, int argc)
{
    /* the options of the compile without those of its link, which would
     * make the output a shared object instead of a precompiled header, nor
     * those that stop it early (discovery's -E shares the header) */
    const char **cargv = calloc((size_t)argc + 6, sizeof *cargv);
    if (!cargv)
        return;
    int n = 0;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "-shared") && strncmp(argv[i], "-Wl,", 4) && strcmp(argv[i], "-E") &&
            strcmp(argv[i], "-fpch-preprocess") && strcmp(argv[i], "-c"))
            cargv[n++] = argv[i];
    cargv[n] = NULL;
    pch_build(h, cargv, n);
    free(cargv);
}

typedef struct {
    const char *include;
    const char *const *flags;
    int nflags;
} loops_pch_job;

static int loops_pch_build(void *ctx, const char *tmp)
{
    const loops_pch_job *j = ctx;
    return hkc_host_loops_build_pch(j->include, j->flags, j->nflags, tmp);
}

const char *hkc_host_loops_pch(host_impl *h, const char *include, const char *const *flags,
                               int nflags, char *path, size_t cap)
{
    hkc_key_builder *kb = hkc_key_begin();
    hkc_key_add_str(kb, "toolchain", h->toolchain);
    hkc_key_add_str(kb, "libclang", hkc_host_loops_status());
    for (int i = 0; i < nflags; i++)
        hkc_key_add_str(kb, "arg", flags[i]);
    hkc_cache_entry_id id = {.sub = "loops-pch", .name = "hip_runtime", .ext = "pch",
                             .key = hkc_key_end(kb)};
    char hex[33];
    hkc_key_hex(&id.key, hex);
    snprintf(path, cap, "%s/loops-%s.pch", h->workdir, hex);
    loops_pch_job j = {include, flags, nflags};
    return cached_file(h, &id, path, loops_pch_build, &j) ? path : NULL;
}
