/* Tests of the on-disk compile cache (src/core/cache.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "cache.h"
#include "hipkit/hipkit.h"
#include "tap.h"

static char base[64]; /* the mkdtemp folder everything lives in */

static hkc_cache_key key_of(const char *s)
{
    hkc_key_builder *kb = hkc_key_begin();
    hkc_key_add_str(kb, "test", s);
    return hkc_key_end(kb);
}

static hkc_cache_entry_id id_of(const char *keystr)
{
    hkc_cache_entry_id id = {"host-x86_64-gcc13", "mod", "so", key_of(keystr)};
    return id;
}

/* Where cache.c must put an entry whose sub/name/ext need no sanitising. */
static void entry_file(char *out, size_t n, const char *root, const hkc_cache_entry_id *id)
{
    char hex[33];
    hkc_key_hex(&id->key, hex);
    snprintf(out, n, "%s/%s/%s-%s.%s", root, id->sub, id->name, hex, id->ext);
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0xffffu;
}

static void set_age(const char *path, time_t seconds_ago)
{
    struct timespec t[2] = {{time(NULL) - seconds_ago, 0}, {time(NULL) - seconds_ago, 0}};
    utimensat(AT_FDCWD, path, t, 0);
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

/* Counts files in dir whose names start with prefix (NULL: entries, i.e.
 * names not starting with '.'). */
static int count_files(const char *dir, const char *prefix)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s' 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    int n = 0;
    char line[512];
    while (p && fgets(line, sizeof line, p)) {
        if (prefix ? !strncmp(line, prefix, strlen(prefix)) : line[0] != '.')
            n++;
    }
    if (p)
        pclose(p);
    return n;
}

static hkc_cache *open_at(const char *root, hkc_strbuf *warn)
{
    setenv("HIPKIT_CACHE_DIR", root, 1);
    hkc_strbuf_clear(warn);
    return hkc_cache_open(warn);
}

static void test_keys(void)
{
    hkc_key_builder *kb;
    hkc_cache_key a, b, c, d, e;

    kb = hkc_key_begin();
    hkc_key_add_str(kb, "src", "ab");
    hkc_key_add_str(kb, "opt", "c");
    a = hkc_key_end(kb);
    kb = hkc_key_begin();
    hkc_key_add_str(kb, "src", "ab");
    hkc_key_add_str(kb, "opt", "c");
    b = hkc_key_end(kb);
    kb = hkc_key_begin();
    hkc_key_add_str(kb, "src", "a");
    hkc_key_add_str(kb, "opt", "bc");
    c = hkc_key_end(kb);
    kb = hkc_key_begin();
    hkc_key_add(kb, "src", "ab", 2);
    hkc_key_add(kb, "opt", "c", 1);
    d = hkc_key_end(kb);
    kb = hkc_key_begin();
    hkc_key_add_str(kb, "src", "ab");
    hkc_key_add_str(kb, "opx", "c");
    e = hkc_key_end(kb);

    tap_ok(!memcmp(&a, &b, sizeof a), "key: same inputs give the same key");
    tap_ok(memcmp(&a, &c, sizeof a) != 0, "key: \"ab\"+\"c\" differs from \"a\"+\"bc\"");
    tap_ok(!memcmp(&a, &d, sizeof a), "key: add_str(s) equals add(s, strlen(s))");
    tap_ok(memcmp(&a, &e, sizeof a) != 0, "key: the label is part of the key");

    kb = hkc_key_begin();
    hkc_key_add_str(kb, "x", NULL);
    b = hkc_key_end(kb);
    kb = hkc_key_begin();
    hkc_key_add_str(kb, "x", "");
    c = hkc_key_end(kb);
    tap_ok(memcmp(&b, &c, sizeof b) != 0, "key: NULL and \"\" differ");

    char hex[33];
    hkc_key_hex(&a, hex);
    size_t ok = strspn(hex, "0123456789abcdef");
    tap_ok(strlen(hex) == 32 && ok == 32, "key: hex is 32 lowercase digits (%s)", hex);

    hkc_cache_key k;
    for (int i = 0; i < 16; i++)
        k.bytes[i] = (uint8_t)(i * 17);
    hkc_key_hex(&k, hex);
    tap_ok(!strcmp(hex, "00112233445566778899aabbccddeeff"), "key: hex of known bytes (%s)",
           hex);
}

static void test_round_trip(const char *root)
{
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    tap_diag("random seed %u", seed);
    srand(seed);

    umask(0); /* the modes must not depend on it */
    hkc_cache *c = open_at(root, &warn);
    tap_ok(c && hkc_cache_mode_get(c) == HKC_CACHE_RW && warn.len == 0,
           "open: rw, no warning (%s)", warn.data);
    tap_ok(!strcmp(hkc_cache_dir(c), root), "open: dir is HIPKIT_CACHE_DIR");

    size_t n = 50000;
    uint8_t *payload = malloc(n);
    for (size_t i = 0; i < n; i++)
        payload[i] = (uint8_t)rand();
    hkc_cache_entry_id id = id_of("round trip");
    hkc_cache_put(c, &id, payload, n, &warn);
    tap_ok(warn.len == 0, "put: no warning (%s)", warn.data);

    void *data;
    size_t size;
    int hit = hkc_cache_get(c, &id, &data, &size, &warn);
    tap_ok(hit == 1 && size == n && data && !memcmp(data, payload, n) && warn.len == 0,
           "get: round-trips %zu random bytes", n);
    free(data);

    char path[512], sub[512];
    entry_file(path, sizeof path, root, &id);
    snprintf(sub, sizeof sub, "%s/%s", root, id.sub);
    tap_ok(exists(path), "entry file is <root>/<sub>/<name>-<hex>.<ext>");
    tap_ok(mode_of(root) == 0700, "root folder created 0700 (%o)", mode_of(root));
    tap_ok(mode_of(sub) == 0700, "subfolder created 0700 (%o)", mode_of(sub));
    tap_ok(mode_of(path) == 0600, "entry file 0600 (%o)", mode_of(path));
    struct stat st;
    tap_ok(stat(path, &st) == 0 && st.st_size == (off_t)(n + 48),
           "entry file is a 48-byte header plus the payload");
    umask(022);

    hkc_cache_entry_id unknown = id_of("never stored");
    hit = hkc_cache_get(c, &unknown, &data, &size, &warn);
    tap_ok(hit == 0 && data == NULL && size == 0 && warn.len == 0, "get: unknown key misses");

    /* Same key, other name: a different file. */
    hkc_cache_entry_id other = id;
    other.name = "other";
    hit = hkc_cache_get(c, &other, &data, &size, &warn);
    tap_ok(hit == 0, "get: the module name is part of the entry");

    /* Names are sanitised and long ones shortened. */
    char longname[400];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    hkc_cache_entry_id odd = {"hip-gfx90a:sramecc+:xnack-", longname,
                              "a.very.long.extension.indeed", id.key};
    hkc_cache_put(c, &odd, "x", 1, &warn);
    hit = hkc_cache_get(c, &odd, &data, &size, &warn);
    tap_ok(hit == 1 && size == 1 && warn.len == 0, "odd names: round trip");
    free(data);
    snprintf(sub, sizeof sub, "%s/hip-gfx90a_sramecc__xnack-", root);
    tap_ok(mode_of(sub) == 0700 && count_files(sub, NULL) == 1,
           "odd names: ':' and '+' become '_' in the subfolder");
    /* 100 chars of name (83 kept + '-' + 16 hex), '-', key, '.', 16 of ext */
    char odd_path[1024], hex[33];
    hkc_key_hex(&id.key, hex);
    snprintf(odd_path, sizeof odd_path, "%s/%.83s-%016llx-%s.a_very_long_exte", sub,
             longname, (unsigned long long)XXH3_64bits(longname, strlen(longname)), hex);
    tap_ok(exists(odd_path), "odd names: long name shortened with a hash, ext cut, "
                             "no dot in ext");

    hkc_cache_entry_id empty = id_of("empty payload");
    hkc_cache_put(c, &empty, NULL, 0, &warn);
    hit = hkc_cache_get(c, &empty, &data, &size, &warn);
    tap_ok(hit == 1 && size == 0 && warn.len == 0, "empty payload: round trip");
    free(data);
    hkc_strbuf_clear(&warn);

    /* Repeated hits keep returning the same payload (speed is the
     * benchmark's business: tools/bench_host.c diskhit). */
    int hits = 0;
    for (int i = 0; i < 50; i++) {
        hits += hkc_cache_get(c, &id, &data, &size, &warn) == 1 && size == n &&
                !memcmp(data, payload, n);
        free(data);
    }
    tap_ok(hits == 50, "50 repeated hits return the same payload");

    hkc_cache_usage u;
    int r = hkc_cache_usage_get(c, &u);
    tap_ok(r == 0 && u.entries == 3 &&
               u.bytes == (n + 48) + (1 + 48) + 48 && u.max_bytes == (uint64_t)1 << 30,
           "usage: 3 entries, %llu bytes, cap 1 GiB", (unsigned long long)u.bytes);

    free(payload);
    hkc_cache_close(c);
    hkc_strbuf_free(&warn);
}

/* Stores a fresh entry, damages it with `damage`, and checks that get misses,
 * warns naming the file and `why`, and removes it. */
static void check_bad(hkc_cache *c, const char *root, const char *what, const char *why,
                      void (*damage)(const char *path, int fd))
{
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    hkc_cache_entry_id id = id_of(what);
    char payload[1000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (char)(i * 7);
    hkc_cache_put(c, &id, payload, sizeof payload, &warn);
    char path[512];
    entry_file(path, sizeof path, root, &id);
    int fd = open(path, O_RDWR);
    damage(path, fd);
    if (fd >= 0)
        close(fd);
    void *data = (void *)1;
    size_t size = 1;
    int hit = hkc_cache_get(c, &id, &data, &size, &warn);
    tap_ok(hit == 0 && data == NULL && size == 0, "%s: get misses", what);
    tap_ok(strstr(warn.data, path) && strstr(warn.data, why),
           "%s: warning names the file and '%s' (%s)", what, why, warn.data);
    tap_ok(!exists(path), "%s: entry removed", what);
    hkc_strbuf_free(&warn);
}

static void truncate_it(const char *path, int fd)
{
    (void)path;
    struct stat st;
    fstat(fd, &st);
    if (ftruncate(fd, st.st_size - 10) < 0)
        perror("ftruncate");
}

static void poke(int fd, off_t at)
{
    uint8_t b;
    if (pread(fd, &b, 1, at) == 1) {
        b ^= 0x40;
        if (pwrite(fd, &b, 1, at) != 1)
            perror("pwrite");
    }
}

static void flip_payload(const char *path, int fd)
{
    (void)path;
    poke(fd, 48 + 500);
}

static void flip_version(const char *path, int fd)
{
    (void)path;
    poke(fd, 8);
}

static void flip_magic(const char *path, int fd)
{
    (void)path;
    poke(fd, 1);
}

static void flip_key(const char *path, int fd)
{
    (void)path;
    poke(fd, 40);
}

static void short_header(const char *path, int fd)
{
    (void)path;
    if (ftruncate(fd, 20) < 0)
        perror("ftruncate");
}

static void test_bad_entries(const char *root)
{
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    hkc_cache *c = open_at(root, &warn);
    check_bad(c, root, "truncated entry", "truncated", truncate_it);
    check_bad(c, root, "flipped payload byte", "checksum", flip_payload);
    check_bad(c, root, "flipped header version", "version", flip_version);
    check_bad(c, root, "flipped magic", "magic", flip_magic);
    check_bad(c, root, "flipped key", "key", flip_key);
    check_bad(c, root, "short header", "truncated", short_header);
    hkc_cache_close(c);
    hkc_strbuf_free(&warn);
}

static void test_refused(void)
{
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    char root[256], path[512];
    void *data;
    size_t size;
    hkc_cache_entry_id id = id_of("refused");

    snprintf(root, sizeof root, "%s/open", base);
    mkdir(root, 0700);
    chmod(root, 0777);
    hkc_cache *c = open_at(root, &warn);
    tap_ok(hkc_cache_mode_get(c) == HKC_CACHE_MEMORY_ONLY && !strcmp(hkc_cache_dir(c), ""),
           "0777 folder: memory-only");
    tap_ok(strstr(warn.data, root) && strstr(warn.data, "writable by group or others"),
           "0777 folder: warning names the folder and why (%s)", warn.data);
    hkc_strbuf_clear(&warn);
    hkc_cache_put(c, &id, "abc", 3, &warn);
    tap_ok(count_files(root, "") == 0 && warn.len == 0, "memory-only: put writes nothing");
    tap_ok(hkc_cache_get(c, &id, &data, &size, &warn) == 0, "memory-only: get misses");
    tap_ok(!strcmp(hkc_cache_mode_name(hkc_cache_mode_get(c)), "memory-only"),
           "mode name is memory-only");
    hkc_cache_close(c);

    /* A subfolder writable by others is refused when first used. */
    snprintf(root, sizeof root, "%s/opensub", base);
    mkdir(root, 0700);
    snprintf(path, sizeof path, "%s/%s", root, id.sub);
    mkdir(path, 0777);
    chmod(path, 0777);
    c = open_at(root, &warn);
    hkc_cache_put(c, &id, "abc", 3, &warn);
    tap_ok(hkc_cache_mode_get(c) == HKC_CACHE_MEMORY_ONLY && strstr(warn.data, path) &&
               count_files(path, "") == 0,
           "0777 subfolder: memory-only, warning names it (%s)", warn.data);
    hkc_cache_close(c);

    snprintf(root, sizeof root, "%s/plainfile", base);
    write_file(root, "x", 1);
    c = open_at(root, &warn);
    tap_ok(hkc_cache_mode_get(c) == HKC_CACHE_MEMORY_ONLY && strstr(warn.data, root) &&
               strstr(warn.data, "not a directory"),
           "root is a file: memory-only (%s)", warn.data);
    hkc_cache_close(c);

    snprintf(path, sizeof path, "%s/below", root);
    c = open_at(path, &warn);
    tap_ok(hkc_cache_mode_get(c) == HKC_CACHE_MEMORY_ONLY && strstr(warn.data, path) &&
               strstr(warn.data, "cannot create"),
           "root cannot be created: memory-only (%s)", warn.data);
    hkc_cache_close(c);

    if (geteuid() == 0) {
        snprintf(root, sizeof root, "%s/nobody", base);
        mkdir(root, 0700);
        if (chown(root, 65534, 65534) < 0)
            perror("chown");
        c = open_at(root, &warn);
        tap_ok(hkc_cache_mode_get(c) == HKC_CACHE_MEMORY_ONLY && strstr(warn.data, root) &&
                   strstr(warn.data, "owned by another user"),
               "folder of uid 65534: memory-only (%s)", warn.data);
        hkc_cache_close(c);
    } else {
        tap_skip("folder owned by another user: memory-only", "needs root to chown");
    }
    hkc_strbuf_free(&warn);
}

static void test_env(const char *root)
{
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    hkc_cache_usage u;
    void *data;
    size_t size;
    char path[512];
    hkc_cache_entry_id id = id_of("round trip"), fresh = id_of("written while ro");

    setenv("HIPKIT_CACHE", "off", 1);
    char offroot[256];
    snprintf(offroot, sizeof offroot, "%s/off", base);
    hkc_cache *c = open_at(offroot, &warn);
    hkc_cache_put(c, &id, "abc", 3, &warn);
    tap_ok(hkc_cache_mode_get(c) == HKC_CACHE_OFF && warn.len == 0 &&
               !strcmp(hkc_cache_dir(c), "") && !exists(offroot),
           "HIPKIT_CACHE=off: mode off, no warning, nothing created");
    tap_ok(hkc_cache_get(c, &id, &data, &size, &warn) == 0, "off: get misses");
    hkc_cache_close(c);
    c = open_at(root, &warn);
    tap_ok(hkc_cache_get(c, &id, &data, &size, &warn) == 0,
           "off: get misses even with the entry on disk");
    hkc_cache_close(c);

    setenv("HIPKIT_CACHE", "ro", 1);
    c = open_at(root, &warn);
    entry_file(path, sizeof path, root, &id);
    set_age(path, 1000);
    struct stat before, after;
    stat(path, &before);
    int hit = hkc_cache_get(c, &id, &data, &size, &warn);
    free(data);
    stat(path, &after);
    tap_ok(hkc_cache_mode_get(c) == HKC_CACHE_RO && hit == 1 && warn.len == 0,
           "HIPKIT_CACHE=ro: get hits");
    tap_ok(before.st_mtime == after.st_mtime, "ro: get leaves the mtime alone");
    hkc_cache_put(c, &fresh, "abc", 3, &warn);
    entry_file(path, sizeof path, root, &fresh);
    tap_ok(!exists(path) && warn.len == 0, "ro: put writes nothing");
    hkc_strbuf_clear(&warn);
    tap_ok(hkc_cache_clear(c, &warn) == HK_ESTATE && warn.len > 0, "ro: clear refused");
    hkc_cache_close(c);
    c = open_at(offroot, &warn);
    tap_ok(hkc_cache_mode_get(c) == HKC_CACHE_RO && warn.len == 0 && !exists(offroot) &&
               hkc_cache_get(c, &id, &data, &size, &warn) == 0,
           "ro with no folder: empty, nothing created, no warning");
    hkc_cache_close(c);

    setenv("HIPKIT_CACHE", "sometimes", 1);
    c = open_at(root, &warn);
    tap_ok(hkc_cache_mode_get(c) == HKC_CACHE_RW && strstr(warn.data, "HIPKIT_CACHE"),
           "HIPKIT_CACHE=sometimes: warning, rw (%s)", warn.data);
    hkc_cache_close(c);
    setenv("HIPKIT_CACHE", "rw", 1);

    static const struct {
        const char *v;
        uint64_t want;
        int warns;
    } sizes[] = {
        {"4096", 4096, 0},
        {"12K", 12288, 0},
        {"3m", 3 << 20, 0},
        {"2G", (uint64_t)2 << 30, 0},
        {"lots", (uint64_t)1 << 30, 1},
        {"12KB", (uint64_t)1 << 30, 1},
        {"0", (uint64_t)1 << 30, 1},
        {"-5", (uint64_t)1 << 30, 1},
        {"99999999999999999999G", (uint64_t)1 << 30, 1},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        setenv("HIPKIT_CACHE_MAX", sizes[i].v, 1);
        c = open_at(root, &warn);
        hkc_cache_usage_get(c, &u);
        int warned = strstr(warn.data, "HIPKIT_CACHE_MAX") != NULL;
        tap_ok(u.max_bytes == sizes[i].want && warned == sizes[i].warns,
               "HIPKIT_CACHE_MAX=%s: cap %llu%s", sizes[i].v,
               (unsigned long long)u.max_bytes, sizes[i].warns ? ", warning" : "");
        hkc_cache_close(c);
    }
    unsetenv("HIPKIT_CACHE_MAX");
    unsetenv("HIPKIT_CACHE");

    /* Fallbacks when HIPKIT_CACHE_DIR is unset. */
    unsetenv("HIPKIT_CACHE_DIR");
    char xdg[256], want[300];
    snprintf(xdg, sizeof xdg, "%s/xdg", base);
    setenv("XDG_CACHE_HOME", xdg, 1);
    snprintf(want, sizeof want, "%s/hipkit", xdg);
    hkc_strbuf_clear(&warn);
    c = hkc_cache_open(&warn);
    tap_ok(!strcmp(hkc_cache_dir(c), want) && mode_of(want) == 0700 && mode_of(xdg) == 0700,
           "XDG_CACHE_HOME/hipkit, created 0700 (%s)", hkc_cache_dir(c));
    hkc_cache_close(c);
    unsetenv("XDG_CACHE_HOME");
    char home[256];
    snprintf(home, sizeof home, "%s/home", base);
    setenv("HOME", home, 1);
    snprintf(want, sizeof want, "%s/.cache/hipkit", home);
    c = hkc_cache_open(&warn);
    tap_ok(!strcmp(hkc_cache_dir(c), want) && warn.len == 0, "~/.cache/hipkit (%s)",
           hkc_cache_dir(c));
    hkc_cache_close(c);

    /* No HOME: the password database; ro so nothing is created there. */
    unsetenv("HOME");
    setenv("HIPKIT_CACHE", "ro", 1);
    struct passwd *pw = getpwuid(getuid());
    snprintf(want, sizeof want, "%s/.cache/hipkit", pw ? pw->pw_dir : "?");
    c = hkc_cache_open(&warn);
    tap_ok(!strcmp(hkc_cache_dir(c), want), "HOME unset: getpwuid's home (%s)",
           hkc_cache_dir(c));
    hkc_cache_close(c);
    unsetenv("HIPKIT_CACHE");
    hkc_strbuf_free(&warn);
}

static void test_lru(void)
{
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    char root[256], pa[512], pb[512], pc[512], pd[512], pe[512], pbig[512];
    snprintf(root, sizeof root, "%s/lru", base);
    /* Three entries of 1000 + 48 bytes fit, a fourth does not. */
    setenv("HIPKIT_CACHE_MAX", "3144", 1);
    hkc_cache *c = open_at(root, &warn);
    unsetenv("HIPKIT_CACHE_MAX");
    char payload[1000] = {0};
    hkc_cache_entry_id a = id_of("A"), b = id_of("B"), cc = id_of("C"), d = id_of("D"),
                       e = id_of("E"), big = id_of("big");
    hkc_cache_put(c, &a, payload, sizeof payload, &warn);
    hkc_cache_put(c, &b, payload, sizeof payload, &warn);
    hkc_cache_put(c, &cc, payload, sizeof payload, &warn);
    entry_file(pa, sizeof pa, root, &a);
    entry_file(pb, sizeof pb, root, &b);
    entry_file(pc, sizeof pc, root, &cc);
    entry_file(pd, sizeof pd, root, &d);
    entry_file(pe, sizeof pe, root, &e);
    entry_file(pbig, sizeof pbig, root, &big);
    tap_ok(exists(pa) && exists(pb) && exists(pc) && warn.len == 0,
           "lru: three entries fit the cap");
    /* mtimes a second apart, so the order does not hang on clock grain. */
    set_age(pa, 300);
    set_age(pb, 200);
    set_age(pc, 100);
    void *data;
    size_t size;
    tap_ok(hkc_cache_get(c, &a, &data, &size, &warn) == 1, "lru: get A (bumps it)");
    free(data);
    hkc_cache_put(c, &d, payload, sizeof payload, &warn);
    tap_ok(exists(pa) && !exists(pb) && exists(pc) && exists(pd),
           "lru: adding D evicts B, the least recently used, not A");
    set_age(pd, 50);
    hkc_cache_put(c, &e, payload, sizeof payload, &warn);
    tap_ok(exists(pa) && !exists(pc) && exists(pd) && exists(pe),
           "lru: adding E evicts C");
    hkc_cache_usage u;
    tap_ok(hkc_cache_usage_get(c, &u) == 0 && u.entries == 3 && u.bytes == 3144 &&
               u.max_bytes == 3144,
           "lru: usage 3 entries, 3144 bytes, cap 3144");

    char *huge = calloc(1, 5000);
    hkc_cache_put(c, &big, huge, 5000, &warn);
    free(huge);
    tap_ok(!exists(pbig) && exists(pa) && exists(pd) && exists(pe),
           "lru: an entry over the cap alone is dropped, the others stay");

    tap_ok(hkc_cache_prune(c, 1048, &warn) == 0 && !exists(pa) && !exists(pd) && exists(pe),
           "prune to one entry's worth keeps only the newest");
    hkc_cache_close(c);
    hkc_strbuf_free(&warn);
}

static void test_clear(const char *root)
{
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    hkc_cache *c = open_at(root, &warn);
    hkc_cache_entry_id id = id_of("to clear");
    hkc_cache_put(c, &id, "abc", 3, &warn);
    char sub[512], foreign[600], nomagic[600], oldtmp[600], newtmp[600];
    snprintf(sub, sizeof sub, "%s/%s", root, id.sub);
    snprintf(foreign, sizeof foreign, "%s/notes.txt", sub);
    snprintf(nomagic, sizeof nomagic, "%s/x-00112233445566778899aabbccddeeff.so", sub);
    snprintf(oldtmp, sizeof oldtmp, "%s/.tmp-old", sub);
    snprintf(newtmp, sizeof newtmp, "%s/.tmp-new", sub);
    write_file(foreign, "mine", 4);
    write_file(nomagic, "not a cache entry at all, no magic", 34);
    write_file(oldtmp, "x", 1);
    write_file(newtmp, "x", 1);
    set_age(oldtmp, 7200);

    hkc_cache_usage u;
    hkc_cache_usage_get(c, &u);
    /* round trip, odd names, empty, and this one */
    tap_ok(u.entries == 4, "clear: %llu entries before", (unsigned long long)u.entries);
    tap_ok(hkc_cache_clear(c, &warn) == 0 && warn.len == 0, "clear: returns 0");
    tap_ok(hkc_cache_usage_get(c, &u) == 0 && u.entries == 0 && u.bytes == 0,
           "clear: no entries left");
    tap_ok(exists(foreign) && exists(nomagic), "clear: leaves foreign files alone");
    tap_ok(!exists(oldtmp) && exists(newtmp), "clear: removes only stale temp files");
    unlink(newtmp);
    hkc_cache_close(c);
    hkc_strbuf_free(&warn);
}

/* Two processes store the same entry 200 times each; readers in between
 * must only ever see a whole entry. */
static void test_concurrent(void)
{
    char root[256], sub[512];
    snprintf(root, sizeof root, "%s/race", base);
    setenv("HIPKIT_CACHE_DIR", root, 1);
    hkc_cache_entry_id id = id_of("raced");
    snprintf(sub, sizeof sub, "%s/%s", root, id.sub);
    static uint8_t payload[20000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 31 + 7);

    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            hkc_strbuf warn;
            hkc_strbuf_init(&warn);
            hkc_cache *c = hkc_cache_open(&warn);
            int bad = 0;
            for (int i = 0; i < 200; i++) {
                void *data;
                size_t size;
                hkc_cache_put(c, &id, payload, sizeof payload, &warn);
                if (hkc_cache_get(c, &id, &data, &size, &warn) &&
                    (size != sizeof payload || memcmp(data, payload, size)))
                    bad++;
                free(data);
            }
            if (warn.len) {
                fprintf(stderr, "child warning: %s\n", warn.data);
                bad++;
            }
            hkc_cache_close(c);
            hkc_strbuf_free(&warn);
            fflush(NULL);
            _exit(bad ? 1 : 0);
        }
    }
    int ok = 1;
    for (int k = 0; k < 2; k++) {
        int status;
        if (waitpid(kids[k], &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            ok = 0;
    }
    tap_ok(ok, "race: both writers saw only whole entries, no warnings");
    tap_ok(count_files(sub, NULL) == 1 && count_files(sub, ".tmp-") == 0,
           "race: exactly one entry, no .tmp- leftovers");
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    hkc_cache *c = hkc_cache_open(&warn);
    void *data;
    size_t size;
    int hit = hkc_cache_get(c, &id, &data, &size, &warn);
    tap_ok(hit && size == sizeof payload && !memcmp(data, payload, size) && warn.len == 0,
           "race: the final entry is valid");
    free(data);
    hkc_cache_close(c);
    hkc_strbuf_free(&warn);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int main(void)
{
    tap_init();
    snprintf(base, sizeof base, "/tmp/hkcache-test-XXXXXX");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    tap_diag("working in %s", base);
    unsetenv("HIPKIT_CACHE");
    unsetenv("HIPKIT_CACHE_MAX");
    char root[256];
    /* Below base, so the test also sees hipkit create the folder. */
    snprintf(root, sizeof root, "%s/cache", base);

    test_keys();
    test_round_trip(root);
    test_bad_entries(root);
    test_refused();
    test_env(root);
    test_lru();
    test_clear(root);
    test_concurrent();

    nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
