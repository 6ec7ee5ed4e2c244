/* The on-disk compile cache: see cache.h for the interface and DESIGN.md
 * ("Compile pipeline and cache") for the layout.
 *
 * An entry file is a 48-byte header followed by the payload:
 *   0  magic "HKCACHE\0"
 *   8  u32 format version (HK_CACHE_FORMAT_VERSION)
 *  12  u32 header size (48)
 *  16  u64 payload length
 *  24  u64 XXH3-64 of the payload
 *  32  16-byte key
 * All integers little-endian, whatever the host. */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "hipkit/hipkit.h"
#include "hipkit/version.h"
#include "size.h"

#define HDR_SIZE 48
#define DEFAULT_MAX ((uint64_t)1 << 30)
#define NAME_MAX_LEN 100 /* sub and name, after sanitising */
#define EXT_MAX_LEN 16
#define TMP_PREFIX ".tmp-"
#define STALE_TMP_SECONDS 3600

static const char magic[8] = {'H', 'K', 'C', 'A', 'C', 'H', 'E', 0};

/* ------------------------------------------------------------------ keys */

struct hkc_key_builder {
    XXH3_state_t *st;
};

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t get_le32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* A field is its length then its bytes, so that concatenations of different
 * splits never collide. */
static void key_field(XXH3_state_t *st, const void *data, size_t n)
{
    uint8_t len[8];
    put_le64(len, n);
    XXH3_128bits_update(st, len, sizeof len);
    if (n)
        XXH3_128bits_update(st, data, n);
}

hkc_key_builder *hkc_key_begin(void)
{
    hkc_key_builder *kb = malloc(sizeof *kb);
    if (!kb)
        return NULL;
    kb->st = XXH3_createState();
    if (!kb->st || XXH3_128bits_reset(kb->st) != XXH_OK) {
        XXH3_freeState(kb->st);
        free(kb);
        return NULL;
    }
    /* A format bump must change every key, even for callers who forget it. */
    uint8_t ver[4];
    put_le32(ver, HK_CACHE_FORMAT_VERSION);
    key_field(kb->st, "hipkit-cache-format", strlen("hipkit-cache-format"));
    key_field(kb->st, ver, sizeof ver);
    return kb;
}

void hkc_key_add(hkc_key_builder *kb, const char *label, const void *data, size_t n)
{
    if (!kb)
        return;
    if (!label)
        label = "";
    key_field(kb->st, label, strlen(label));
    key_field(kb->st, data, data ? n : 0);
}

void hkc_key_add_str(hkc_key_builder *kb, const char *label, const char *s)
{
    /* NULL and "" must give different keys: NULL gets a length no real
     * field can have. */
    if (!s) {
        if (!kb)
            return;
        uint8_t len[8];
        if (!label)
            label = "";
        key_field(kb->st, label, strlen(label));
        put_le64(len, UINT64_MAX);
        XXH3_128bits_update(kb->st, len, sizeof len);
        return;
    }
    hkc_key_add(kb, label, s, strlen(s));
}

hkc_cache_key hkc_key_end(hkc_key_builder *kb)
{
    hkc_cache_key k;
    memset(&k, 0, sizeof k);
    if (!kb)
        return k;
    XXH128_hash_t h = XXH3_128bits_digest(kb->st);
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, h);
    memcpy(k.bytes, canon.digest, sizeof k.bytes);
    XXH3_freeState(kb->st);
    free(kb);
    return k;
}

void hkc_key_hex(const hkc_cache_key *k, char out[33])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[k->bytes[i] >> 4];
        out[2 * i + 1] = digits[k->bytes[i] & 15];
    }
    out[32] = 0;
}

/* ----------------------------------------------------------------- cache */

typedef struct checked_sub {
    struct checked_sub *next;
    char name[];
} checked_sub;

struct hkc_cache {
    hkc_cache_mode mode;
    char *dir; /* "" unless rw or ro */
    uint64_t max_bytes;
    /* Running estimate of the entries' total size, so that a put does not
     * rescan the folder; other processes make it drift, so it is only
     * trusted to say "probably under the cap". */
    uint64_t total;
    int total_known;
    checked_sub *subs; /* subfolders already checked for owner and mode */
};

static void warnf(hkc_strbuf *warn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(hkc_strbuf *warn, const char *fmt, ...)
{
    if (!warn)
        return;
    /* The caller prints the buffer as one warning; one line per problem. */
    if (warn->len)
        hkc_strbuf_puts(warn, "\n");
    va_list ap;
    va_start(ap, fmt);
    hkc_strbuf_vprintf(warn, fmt, ap);
    va_end(ap);
}

const char *hkc_cache_mode_name(hkc_cache_mode m)
{
    switch (m) {
    case HKC_CACHE_RW: return "rw";
    case HKC_CACHE_RO: return "ro";
    case HKC_CACHE_OFF: return "off";
    case HKC_CACHE_MEMORY_ONLY: return "memory-only";
    }
    return "?";
}

hkc_cache_mode hkc_cache_mode_get(const hkc_cache *c) { return c->mode; }

const char *hkc_cache_dir(const hkc_cache *c) { return c->dir; }

static int on_disk(const hkc_cache *c)
{
    return c && (c->mode == HKC_CACHE_RW || c->mode == HKC_CACHE_RO);
}

static void go_memory_only(hkc_cache *c)
{
    c->mode = HKC_CACHE_MEMORY_ONLY;
    c->dir[0] = 0;
}

const char *hkc_trust_problem(const struct stat *st, int root_ok)
{
    if (st->st_uid != geteuid() && !(root_ok && st->st_uid == 0))
        return "owned by another user";
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return "writable by group or others";
    return NULL;
}

/* Why a folder cannot hold the cache, or NULL if it can. */
static const char *dir_problem(const struct stat *st)
{
    if (!S_ISDIR(st->st_mode))
        return "not a directory";
    return hkc_trust_problem(st, 0);
}

/* mkdir -p; only the folders created here get 0700 (whatever the umask):
 * existing parents such as ~/.cache are none of our business. */
static int mkdir_chain(char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        return 0;
    if (errno != ENOENT)
        return -errno;
    char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        *slash = 0;
        int r = mkdir_chain(path);
        *slash = '/';
        if (r < 0)
            return r;
    }
    if (mkdir(path, 0700) < 0) {
        if (errno == EEXIST)
            return 0;
        return -errno;
    }
    if (chmod(path, 0700) < 0)
        return -errno;
    return 0;
}

static char *default_root(void)
{
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    const char *v = getenv("HIPKIT_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (v && *v) {
        hkc_strbuf_puts(&s, v);
    } else if (xdg && xdg[0] == '/') { /* relative ones are invalid (XDG spec) */
        hkc_strbuf_printf(&s, "%s/hipkit", xdg);
    } else {
        const char *home = getenv("HOME");
        if (!home || !*home) {
            struct passwd *pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : NULL;
        }
        if (!home)
            return NULL;
        hkc_strbuf_printf(&s, "%s/.cache/hipkit", home);
    }
    /* Trailing slashes would only make paths uglier. */
    while (s.len > 1 && s.data[s.len - 1] == '/')
        s.data[--s.len] = 0;
    if (s.oom) {
        hkc_strbuf_free(&s);
        return NULL;
    }
    return hkc_strbuf_take(&s);
}

hkc_cache *hkc_cache_open(hkc_strbuf *warn)
{
    hkc_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->mode = HKC_CACHE_RW;
    c->max_bytes = DEFAULT_MAX;

    const char *m = getenv("HIPKIT_CACHE");
    if (m && !strcmp(m, "off"))
        c->mode = HKC_CACHE_OFF;
    else if (m && !strcmp(m, "ro"))
        c->mode = HKC_CACHE_RO;
    else if (m && *m && strcmp(m, "rw"))
        warnf(warn, "HIPKIT_CACHE=%s is not off, ro or rw; using rw", m);

    const char *max = getenv("HIPKIT_CACHE_MAX");
    if (max && *max) {
        char why[160];
        uint64_t bytes = 0;
        if (hkc_size_parse(max, &bytes, why, sizeof why) == 0 && bytes == 0)
            snprintf(why, sizeof why, "a cap of 0 bytes would hold nothing");
        if (bytes == 0)
            warnf(warn,
                  "HIPKIT_CACHE_MAX=%s is not a size such as 1073741824, 512M or 2G (%s); "
                  "using 1G",
                  max, why);
        else
            c->max_bytes = bytes;
    }

    if (c->mode == HKC_CACHE_OFF) {
        c->dir = strdup("");
        if (!c->dir)
            goto fail;
        return c;
    }

    char *root = default_root();
    if (!root) {
        c->dir = strdup("");
        if (!c->dir)
            goto fail;
        warnf(warn, "compile cache is memory-only: no cache folder "
                    "(set HIPKIT_CACHE_DIR or HOME)");
        c->mode = HKC_CACHE_MEMORY_ONLY;
        return c;
    }
    c->dir = root;

    if (c->mode == HKC_CACHE_RW) {
        int r = mkdir_chain(c->dir);
        if (r < 0) {
            warnf(warn, "compile cache is memory-only: cannot create %s: %s", c->dir,
                  strerror(-r));
            go_memory_only(c);
            return c;
        }
    }
    struct stat st;
    if (stat(c->dir, &st) < 0) {
        /* A read-only cache that was never written is simply empty. */
        if (c->mode == HKC_CACHE_RO && errno == ENOENT)
            return c;
        warnf(warn, "compile cache is memory-only: %s: %s", c->dir, strerror(errno));
        go_memory_only(c);
        return c;
    }
    const char *why = dir_problem(&st);
    if (why) {
        warnf(warn, "compile cache is memory-only: refusing %s: %s", c->dir, why);
        go_memory_only(c);
    }
    return c;

fail:
    free(c->dir);
    free(c);
    return NULL;
}

void hkc_cache_close(hkc_cache *c)
{
    if (!c)
        return;
    while (c->subs) {
        checked_sub *n = c->subs->next;
        free(c->subs);
        c->subs = n;
    }
    free(c->dir);
    free(c);
}

/* Copies s into out as [A-Za-z0-9._-], no leading '.', at most max chars;
 * a longer name keeps its start and gets a hash of the whole, so that two
 * long names sharing a prefix stay apart. */
static void sanitise(const char *s, char *out, size_t max, int allow_dot)
{
    if (!s || !*s)
        s = "_";
    size_t n = strlen(s), i;
    /* max > 17 leaves room for the hash; shorter fields are just cut. */
    size_t keep = n <= max ? n : max > 17 ? max - 17 : max;
    for (i = 0; i < keep; i++) {
        char ch = s[i];
        int good = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                   (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
                   (ch == '.' && allow_dot && i > 0);
        out[i] = good ? ch : '_';
    }
    if (n > max && max > 17)
        i += (size_t)snprintf(out + i, 18, "-%016llx",
                              (unsigned long long)XXH3_64bits(s, n));
    out[i] = 0;
}

static void sub_path(const hkc_cache *c, const hkc_cache_entry_id *id, hkc_strbuf *out)
{
    char sub[NAME_MAX_LEN + 1];
    sanitise(id->sub, sub, NAME_MAX_LEN, 1);
    hkc_strbuf_printf(out, "%s/%s", c->dir, sub);
}

static void entry_path(const hkc_cache *c, const hkc_cache_entry_id *id, hkc_strbuf *out)
{
    char name[NAME_MAX_LEN + 1], ext[EXT_MAX_LEN + 1], hex[33];
    sanitise(id->name, name, NAME_MAX_LEN, 1);
    /* No dot in the extension: the name pattern finds it after the last one. */
    sanitise(id->ext, ext, EXT_MAX_LEN, 0);
    hkc_key_hex(&id->key, hex);
    sub_path(c, id, out);
    hkc_strbuf_printf(out, "/%s-%s.%s", name, hex, ext);
}

/* Checks a subfolder once per cache: 0 ok, -ENOENT absent (created first
 * when `create`), another -errno if unusable (the cache then goes
 * memory-only, with a warning). */
static int check_sub(hkc_cache *c, const char *path, int create, hkc_strbuf *warn)
{
    const char *base = path + strlen(c->dir) + 1;
    for (checked_sub *s = c->subs; s; s = s->next)
        if (!strcmp(s->name, base))
            return 0;
    if (create && mkdir(path, 0700) == 0 && chmod(path, 0700) < 0) {
        int e = errno;
        warnf(warn, "compile cache: cannot set the mode of %s: %s", path, strerror(e));
        return -e;
    }
    struct stat st;
    if (lstat(path, &st) < 0) {
        int e = errno;
        if (e == ENOENT && !create)
            return -ENOENT;
        warnf(warn, "compile cache is memory-only: %s: %s", path, strerror(e));
        go_memory_only(c);
        return -e;
    }
    const char *why = dir_problem(&st);
    if (why) {
        warnf(warn, "compile cache is memory-only: refusing %s: %s", path, why);
        go_memory_only(c);
        return -EPERM;
    }
    size_t n = strlen(base);
    checked_sub *s = malloc(sizeof *s + n + 1);
    if (s) { /* without it we only check again next time */
        memcpy(s->name, base, n + 1);
        s->next = c->subs;
        c->subs = s;
    }
    return 0;
}

static int read_full(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void total_sub(hkc_cache *c, uint64_t n)
{
    c->total = c->total > n ? c->total - n : 0;
}

/* hkc_cache_get, or with out >= 0 hkc_cache_get_into: the payload mapped
 * (a page-cache file needs no copy into fresh memory to be checked) and
 * written to out. */
static int cache_get(hkc_cache *c, const hkc_cache_entry_id *id, int out, void **data,
                     size_t *size, hkc_strbuf *warn)
{
    if (data)
        *data = NULL;
    *size = 0;
    if (!on_disk(c))
        return 0;
    int hit = 0, fd = -1;
    uint8_t *payload = NULL;
    void *map = MAP_FAILED;
    size_t map_len = 0;
    const char *bad = NULL;
    struct stat st;
    hkc_strbuf path;
    hkc_strbuf_init(&path);
    entry_path(c, id, &path);
    if (path.oom)
        goto done;
    hkc_strbuf dir;
    hkc_strbuf_init(&dir);
    sub_path(c, id, &dir);
    int r = dir.oom ? -ENOMEM : check_sub(c, dir.data, 0, warn);
    hkc_strbuf_free(&dir);
    if (r < 0)
        goto done;

    /* O_NONBLOCK: a FIFO in an entry's place must not block the compile. */
    fd = open(path.data, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        if (errno != ENOENT)
            warnf(warn, "compile cache: cannot read %s: %s", path.data, strerror(errno));
        goto done;
    }
    if (fstat(fd, &st) < 0) {
        warnf(warn, "compile cache: cannot read %s: %s", path.data, strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) { /* corrupt: removed, so the next write takes its place */
        bad = "not a regular file";
        st.st_size = 0; /* counted nowhere in the cache's total */
        goto done;
    }
    uint8_t h[HDR_SIZE];
    if (st.st_size < HDR_SIZE || read_full(fd, h, HDR_SIZE) < 0) {
        bad = "truncated header";
        goto done;
    }
    uint64_t len = get_le64(h + 16);
    if (memcmp(h, magic, sizeof magic))
        bad = "bad magic";
    else if (get_le32(h + 8) != HK_CACHE_FORMAT_VERSION)
        bad = "wrong format version";
    else if (get_le32(h + 12) != HDR_SIZE)
        bad = "wrong header size";
    else if (memcmp(h + 32, id->key.bytes, 16))
        bad = "key mismatch";
    else if (len != (uint64_t)st.st_size - HDR_SIZE)
        bad = "length disagrees with the file size (truncated)";
    if (bad)
        goto done;
    const uint8_t *bytes;
    if (out >= 0) {
        map_len = (size_t)st.st_size;
        map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (map == MAP_FAILED)
            goto done;
        bytes = (const uint8_t *)map + HDR_SIZE;
    } else {
        payload = malloc(len ? len : 1);
        if (!payload)
            goto done;
        if (read_full(fd, payload, len) < 0) {
            bad = "short read (truncated)";
            goto done;
        }
        bytes = payload;
    }
    if (XXH3_64bits(bytes, len) != get_le64(h + 24)) {
        bad = "checksum mismatch";
        goto done;
    }
    if (out >= 0 && write_full(out, bytes, len) < 0) {
        warnf(warn, "compile cache: cannot copy %s out: %s", path.data, strerror(errno));
        goto done;
    }
    /* The mtime is the LRU clock; a read-only user leaves it alone. */
    if (c->mode == HKC_CACHE_RW)
        futimens(fd, NULL);
    if (data)
        *data = payload;
    *size = len;
    payload = NULL;
    hit = 1;

done:
    if (bad) {
        if (c->mode == HKC_CACHE_RW && unlink(path.data) == 0) {
            warnf(warn, "compile cache: bad entry %s: %s; removed", path.data, bad);
            if (c->total_known)
                total_sub(c, (uint64_t)st.st_size);
        } else {
            warnf(warn, "compile cache: bad entry %s: %s; ignored", path.data, bad);
        }
    }
    if (fd >= 0)
        close(fd);
    if (map != MAP_FAILED)
        munmap(map, map_len);
    free(payload);
    hkc_strbuf_free(&path);
    return hit;
}

int hkc_cache_get(hkc_cache *c, const hkc_cache_entry_id *id, void **data,
                  size_t *size, hkc_strbuf *warn)
{
    return cache_get(c, id, -1, data, size, warn);
}

int hkc_cache_get_into(hkc_cache *c, const hkc_cache_entry_id *id, int fd, size_t *size,
                       hkc_strbuf *warn)
{
    return cache_get(c, id, fd, NULL, size, warn);
}

/* ---------------------------------------------------------------- scanning */

typedef struct scan_file {
    char *path;
    uint64_t size;
    struct timespec mtime;
} scan_file;

typedef struct scan {
    scan_file *files; /* entries */
    size_t n, cap;
    scan_file *stale; /* '.tmp-' files older than an hour */
    size_t nstale, capstale;
    uint64_t total;
} scan;

static void scan_free(scan *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->files[i].path);
    for (size_t i = 0; i < s->nstale; i++)
        free(s->stale[i].path);
    free(s->files);
    free(s->stale);
    memset(s, 0, sizeof *s);
}

static int scan_add(scan_file **v, size_t *n, size_t *cap, const char *dir,
                    const char *name, const struct stat *st)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        scan_file *p = realloc(*v, nc * sizeof *p);
        if (!p)
            return -ENOMEM;
        *v = p;
        *cap = nc;
    }
    hkc_strbuf path;
    hkc_strbuf_init(&path);
    hkc_strbuf_printf(&path, "%s/%s", dir, name);
    if (path.oom) {
        hkc_strbuf_free(&path);
        return -ENOMEM;
    }
    scan_file *f = &(*v)[(*n)++];
    f->path = hkc_strbuf_take(&path);
    f->size = (uint64_t)st->st_size;
    f->mtime = st->st_mtim;
    return 0;
}

/* "<name>-<32 lowercase hex>.<ext>", ext without a dot, name not hidden. */
static int entry_name(const char *name)
{
    if (name[0] == '.')
        return 0;
    const char *dot = strrchr(name, '.');
    if (!dot || !dot[1] || dot - name < 34 || dot[-33] != '-')
        return 0;
    for (const char *p = dot - 32; p < dot; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    return 1;
}

static int has_magic(int dfd, const char *name)
{
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    char m[sizeof magic];
    int ok = read_full(fd, m, sizeof m) == 0 && !memcmp(m, magic, sizeof m);
    close(fd);
    return ok;
}

static int scan_sub(scan *s, const char *dir, time_t now)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -errno;
    int dfd = dirfd(d), r = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        int entry = entry_name(e->d_name);
        int tmp = !strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX));
        if (!entry && !tmp)
            continue;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
            continue;
        if (entry && has_magic(dfd, e->d_name)) {
            if (scan_add(&s->files, &s->n, &s->cap, dir, e->d_name, &st) < 0)
                r = -ENOMEM;
            else
                s->total += (uint64_t)st.st_size;
        } else if (tmp && now - st.st_mtime > STALE_TMP_SECONDS) {
            if (scan_add(&s->stale, &s->nstale, &s->capstale, dir, e->d_name, &st) < 0)
                r = -ENOMEM;
        }
    }
    closedir(d);
    return r;
}

/* Lists the entries of every subfolder we own; a folder that is not ours
 * (or is writable by others) is skipped, never emptied. Returns 0 or the
 * last -errno; what could be listed is in s either way. */
static int scan_all(hkc_cache *c, scan *s)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir(c->dir);
    if (!d)
        return errno == ENOENT ? 0 : -errno;
    time_t now = time(NULL);
    int dfd = dirfd(d), r = 0;
    struct dirent *e;
    hkc_strbuf sub;
    hkc_strbuf_init(&sub);
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || dir_problem(&st))
            continue;
        hkc_strbuf_clear(&sub);
        hkc_strbuf_printf(&sub, "%s/%s", c->dir, e->d_name);
        int er = sub.oom ? -ENOMEM : scan_sub(s, sub.data, now);
        if (er < 0)
            r = er;
    }
    hkc_strbuf_free(&sub);
    closedir(d);
    c->total = s->total;
    c->total_known = 1;
    return r;
}

static int older(const void *a, const void *b)
{
    const scan_file *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Removes the oldest entries until the total is <= cap, sparing `keep`
 * unless it alone is over the cap. Returns the number of failed removals;
 * ENOENT is not a failure (another process got there first). */
static int evict(hkc_cache *c, scan *s, uint64_t cap, const char *keep, hkc_strbuf *msg)
{
    int failed = 0;
    if (s->n) /* an empty scan has no array at all */
        qsort(s->files, s->n, sizeof *s->files, older);
    /* An entry too big for the cap on its own goes at once, and alone: it
     * must not flush everything else on its way out. */
    for (size_t i = 0; keep && i < s->n; i++) {
        if (strcmp(s->files[i].path, keep))
            continue;
        if (s->files[i].size > cap && unlink(s->files[i].path) == 0)
            s->total -= s->files[i].size;
        break;
    }
    for (size_t i = 0; i < s->n && s->total > cap; i++) {
        scan_file *f = &s->files[i];
        if (keep && !strcmp(f->path, keep))
            continue;
        if (unlink(f->path) < 0 && errno != ENOENT) {
            warnf(msg, "compile cache: cannot remove %s: %s", f->path, strerror(errno));
            failed++;
            continue;
        }
        s->total -= f->size;
    }
    c->total = s->total;
    return failed;
}

static void remove_stale(scan *s)
{
    for (size_t i = 0; i < s->nstale; i++)
        unlink(s->stale[i].path);
}

void hkc_cache_put(hkc_cache *c, const hkc_cache_entry_id *id, const void *data,
                   size_t size, hkc_strbuf *warn)
{
    if (!c || c->mode != HKC_CACHE_RW)
        return;
    int fd = -1;
    hkc_strbuf dir, path, tmp;
    hkc_strbuf_init(&dir);
    hkc_strbuf_init(&path);
    hkc_strbuf_init(&tmp);
    sub_path(c, id, &dir);
    entry_path(c, id, &path);
    hkc_strbuf_printf(&tmp, "%s/" TMP_PREFIX "XXXXXX", dir.data);
    if (dir.oom || path.oom || tmp.oom)
        goto done;
    if (check_sub(c, dir.data, 1, warn) < 0)
        goto done;

    uint8_t h[HDR_SIZE];
    memcpy(h, magic, sizeof magic);
    put_le32(h + 8, HK_CACHE_FORMAT_VERSION);
    put_le32(h + 12, HDR_SIZE);
    put_le64(h + 16, size);
    put_le64(h + 24, XXH3_64bits(data, size));
    memcpy(h + 32, id->key.bytes, 16);

    /* The entry only ever appears complete under its final name: rename()
     * replaces it atomically, so concurrent writers leave one whole file. */
    fd = mkostemp(tmp.data, O_CLOEXEC);
    if (fd < 0) {
        warnf(warn, "compile cache: cannot create a file in %s: %s", dir.data,
              strerror(errno));
        goto done;
    }
    if (fchmod(fd, 0600) < 0 || write_full(fd, h, sizeof h) < 0 ||
        write_full(fd, data, size) < 0) {
        warnf(warn, "compile cache: cannot write %s: %s", tmp.data, strerror(errno));
        goto fail_tmp;
    }
    if (close(fd) < 0) {
        fd = -1;
        warnf(warn, "compile cache: cannot write %s: %s", tmp.data, strerror(errno));
        goto fail_tmp;
    }
    fd = -1;

    if (!c->total_known) {
        scan s;
        scan_all(c, &s); /* a partial scan still gives an estimate */
        scan_free(&s);
    }
    struct stat old;
    uint64_t old_size = lstat(path.data, &old) == 0 ? (uint64_t)old.st_size : 0;
    if (rename(tmp.data, path.data) < 0) {
        warnf(warn, "compile cache: cannot rename %s to %s: %s", tmp.data, path.data,
              strerror(errno));
        goto fail_tmp;
    }
    total_sub(c, old_size);
    c->total += HDR_SIZE + (uint64_t)size;

    if (c->total > c->max_bytes) {
        /* The estimate may be stale (other processes): count again. */
        scan s;
        if (scan_all(c, &s) == 0 || s.n)
            evict(c, &s, c->max_bytes, path.data, warn);
        scan_free(&s);
    }
    goto done;

fail_tmp:
    if (fd >= 0)
        close(fd);
    unlink(tmp.data);
done:
    hkc_strbuf_free(&dir);
    hkc_strbuf_free(&path);
    hkc_strbuf_free(&tmp);
}

int hkc_cache_usage_get(hkc_cache *c, hkc_cache_usage *out)
{
    memset(out, 0, sizeof *out);
    out->max_bytes = c->max_bytes;
    if (!on_disk(c))
        return 0;
    scan s;
    int r = scan_all(c, &s);
    out->entries = s.n;
    out->bytes = s.total;
    scan_free(&s);
    return r < 0 ? HK_EIO : 0;
}

/* Shared by clear (cap 0, nothing kept) and prune. */
static int remove_entries(hkc_cache *c, uint64_t cap, int all, hkc_strbuf *err)
{
    if (!on_disk(c))
        return 0;
    if (c->mode == HKC_CACHE_RO) {
        if (err)
            hkc_strbuf_puts(err, "the compile cache is read-only (HIPKIT_CACHE=ro)");
        return HK_ESTATE;
    }
    scan s;
    int r = 0, e = scan_all(c, &s);
    if (e < 0) {
        warnf(err, "compile cache: cannot list all of %s: %s", c->dir, strerror(-e));
        r = HK_EIO;
    }
    if (all) {
        for (size_t i = 0; i < s.n; i++) {
            if (unlink(s.files[i].path) < 0 && errno != ENOENT) {
                warnf(err, "compile cache: cannot remove %s: %s", s.files[i].path,
                      strerror(errno));
                r = HK_EIO;
            } else {
                s.total -= s.files[i].size;
            }
        }
        c->total = s.total;
    } else if (evict(c, &s, cap, NULL, err)) {
        r = HK_EIO;
    }
    remove_stale(&s);
    scan_free(&s);
    return r;
}

int hkc_cache_clear(hkc_cache *c, hkc_strbuf *err)
{
    return remove_entries(c, 0, 1, err);
}

int hkc_cache_prune(hkc_cache *c, uint64_t max_bytes, hkc_strbuf *err)
{
    return remove_entries(c, max_bytes ? max_bytes : c->max_bytes, 0, err);
}
