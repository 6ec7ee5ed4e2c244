/* The compile pipeline end to end through the public API: memory table,
 * disk cache across processes, damaged entries, refused folders, and two
 * processes compiling the same source at once. Each "new process" is this
 * program run again with `child` arguments. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <xxhash.h>

#include "testutil.h"

static char self_exe[4096];
static char base[256];

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void twice(int *v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) v[i] *= 2;\n"
    "}\n";

/* Child: compile, launch, check, print "origin" and exit 0 when right. */
static int child(void)
{
    hk_context *ctx = tu_context();
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "twice";
    hk_module *m = NULL;
    hk_kernel *k = NULL;
    int r = hk_module_compile(ctx, src, &o, &m);
    if (r == 0)
        r = hk_module_kernel(m, "twice", &k);
    if (r != 0) {
        printf("error %s\n", hk_errmsg(ctx));
        return 2;
    }
    int v[100], out[100];
    for (int i = 0; i < 100; i++)
        v[i] = (int)(tu_next() % 1000);
    hk_buffer *b;
    hk_buffer_alloc(ctx, 100, HK_I32, HK_MEM_DEVICE, &b);
    hk_buffer_upload(b, 0, v, sizeof v);
    hk_launch_config cfg = tu_cfg(1, 1, 1, 128, 1, 1, 0);
    hk_arg args[] = {hk_arg_buffer(b), hk_arg_int(100)};
    r = hk_launch(k, &cfg, args, 2);
    hk_buffer_download(b, 0, out, sizeof out);
    int bad = r != 0;
    for (int i = 0; i < 100; i++)
        bad += out[i] != 2 * v[i];
    hk_kernel_info info;
    hk_kernel_get_info(k, &info);
    hk_cache_stats st;
    hk_cache_get_stats(ctx, &st);
    printf("origin %s mode %s entries %llu\n", hk_code_origin_name(info.origin), st.mode,
           (unsigned long long)st.entries);
    hk_buffer_free(b);
    hk_module_free(m);
    hk_context_destroy(ctx);
    return bad ? 3 : 0;
}

typedef struct run_result {
    int status;
    char out[4096], err[8192];
} run_result;

static void slurp(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, cap - 1);
    buf[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(path);
}

/* Starts a child with HIPKIT_CACHE_DIR=dir; returns its pid. */
static pid_t spawn_child(const char *dir, const char *cache_mode, int idx)
{
    pid_t pid = fork();
    if (pid == 0) {
        char o[512], e[512];
        snprintf(o, sizeof o, "%s/out%d", base, idx);
        snprintf(e, sizeof e, "%s/err%d", base, idx);
        int fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fo, 1);
        dup2(fe, 2);
        setenv("HIPKIT_CACHE_DIR", dir, 1);
        if (cache_mode)
            setenv("HIPKIT_CACHE", cache_mode, 1);
        else
            unsetenv("HIPKIT_CACHE");
        execl(self_exe, self_exe, "child", (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void collect(pid_t pid, int idx, run_result *r)
{
    int st;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    char o[512], e[512];
    snprintf(o, sizeof o, "%s/out%d", base, idx);
    snprintf(e, sizeof e, "%s/err%d", base, idx);
    slurp(o, r->out, sizeof r->out);
    r->out[strcspn(r->out, "\n")] = 0; /* one line, so it can sit in a TAP test name */
    slurp(e, r->err, sizeof r->err);
    for (char *c = r->err; *c; c++)
        if (*c == '\n')
            *c = ' ';
}

static void run(const char *dir, const char *mode, run_result *r)
{
    collect(spawn_child(dir, mode, 0), 0, r);
}

/* The one .so entry in dir's backend subfolder (not the toolchain one). */
static int find_entry(const char *dir, char *out, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "find '%s' -name 'twice-*.so' -type f", dir);
    FILE *p = popen(cmd, "r");
    int n = 0;
    char line[1024];
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        snprintf(out, cap, "%s", line);
        n++;
    }
    if (p)
        pclose(p);
    return n;
}

static void test_memory_table(void)
{
    hk_context *ctx = tu_context();
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "twice";
    hk_module *m1 = NULL, *m2 = NULL;
    hk_kernel *k1 = NULL, *k2 = NULL;
    hk_module_compile(ctx, src, &o, &m1);
    hk_module_compile(ctx, src, &o, &m2);
    hk_module_kernel(m1, "twice", &k1);
    hk_module_kernel(m2, "twice", &k2);
    hk_kernel_info i2;
    hk_kernel_get_info(k2, &i2);
    tap_ok(m1 && m2 && i2.origin == HK_ORIGIN_MEMORY,
           "the same source compiled twice in one context comes from the memory table (%s)",
           hk_code_origin_name(i2.origin));
    hk_module_free(m1);
    hk_module_free(m2);
    hk_context_destroy(ctx);
}

static void test_disk(void)
{
    char dir[512], entry[1024];
    snprintf(dir, sizeof dir, "%s/cache", base);
    run_result r;
    run(dir, NULL, &r);
    tap_ok(r.status == 0 && strstr(r.out, "origin jit"), "cold: compiled by the JIT and right (%s)", r.out);
    run(dir, NULL, &r);
    tap_ok(r.status == 0 && strstr(r.out, "origin cache"), "a new process hits the disk cache (%s)", r.out);
    int n = find_entry(dir, entry, sizeof entry);
    struct stat st;
    stat(entry, &st);
    tap_ok(n == 1 && (st.st_mode & 0777) == 0600, "one entry, mode 0600 (%o)", st.st_mode & 0777);

    truncate(entry, st.st_size / 2);
    run(dir, NULL, &r);
    tap_ok(r.status == 0 && strstr(r.out, "origin jit") && strstr(r.err, "warning"),
           "a truncated entry is detected, warned about and recompiled");
    tap_diag("warning was: %.200s", r.err);

    find_entry(dir, entry, sizeof entry);
    int fd = open(entry, O_RDWR);
    off_t size = lseek(fd, 0, SEEK_END);
    unsigned char c;
    pread(fd, &c, 1, size - 100);
    c ^= 0x01;
    pwrite(fd, &c, 1, size - 100);
    close(fd);
    run(dir, NULL, &r);
    tap_ok(r.status == 0 && strstr(r.out, "origin jit") && strstr(r.err, "checksum"),
           "an entry with one flipped byte is detected (checksum), warned about and recompiled");
    run(dir, NULL, &r);
    tap_ok(r.status == 0 && strstr(r.out, "origin cache"), "the rewritten entry is a hit again");

    /* Whole, checksummed and not loadable: the payload replaced by bytes
     * that are no shared object, the header's length and XXH3 made to
     * match. Before, every later compile of the source failed. */
    find_entry(dir, entry, sizeof entry);
    fd = open(entry, O_RDWR);
    unsigned char junk[4096], le[8];
    memset(junk, 'j', sizeof junk);
    uint64_t len = sizeof junk, sum = XXH3_64bits(junk, sizeof junk);
    for (int b = 0; b < 8; b++)
        le[b] = (unsigned char)(len >> (8 * b));
    pwrite(fd, le, 8, 16);
    for (int b = 0; b < 8; b++)
        le[b] = (unsigned char)(sum >> (8 * b));
    pwrite(fd, le, 8, 24);
    pwrite(fd, junk, sizeof junk, 48);
    ftruncate(fd, 48 + (off_t)sizeof junk);
    close(fd);
    run(dir, NULL, &r);
    tap_ok(r.status == 0 && strstr(r.out, "origin jit") && strstr(r.err, "would not load"),
           "a checksummed entry that does not load is warned about and recompiled (%.160s)", r.err);
    run(dir, NULL, &r);
    tap_ok(r.status == 0 && strstr(r.out, "origin cache"), "and the recompiled code is stored over it");

    run(dir, "off", &r);
    tap_ok(r.status == 0 && strstr(r.out, "origin jit") && strstr(r.out, "mode off"),
           "HIPKIT_CACHE=off compiles without the disk");
}

static void test_refused(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/open", base);
    mkdir(dir, 0777);
    chmod(dir, 0777);
    run_result r;
    run(dir, NULL, &r);
    tap_ok(r.status == 0 && strstr(r.out, "memory-only") && strstr(r.err, dir),
           "a world-writable cache folder: memory-only, with a warning naming it");
    if (geteuid() == 0) {
        snprintf(dir, sizeof dir, "%s/foreign", base);
        mkdir(dir, 0700);
        chown(dir, 65534, 65534);
        run(dir, NULL, &r);
        tap_ok(r.status == 0 && strstr(r.out, "memory-only") && strstr(r.err, "owned"),
               "a cache folder owned by another user: memory-only, with a warning (%.120s)", r.err);
    } else {
        tap_skip("foreign-owned cache folder", "needs root to chown a folder to another user");
    }
}

static void test_concurrent(void)
{
    char dir[512], entry[1024];
    snprintf(dir, sizeof dir, "%s/race", base);
    pid_t a = spawn_child(dir, NULL, 1), b = spawn_child(dir, NULL, 2);
    run_result ra, rb;
    collect(a, 1, &ra);
    collect(b, 2, &rb);
    int n = find_entry(dir, entry, sizeof entry);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "find '%s' -name '.tmp-*' | grep -q .", dir);
    int leftovers = system(cmd) == 0;
    run_result rc;
    run(dir, NULL, &rc);
    tap_ok(ra.status == 0 && rb.status == 0 && n == 1 && !leftovers && strstr(rc.out, "origin cache"),
           "two processes compiling at once leave one valid entry (%d entries, leftovers %d)", n, leftovers);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child();
    tap_init();
    if (!tu_have_cxx()) {
        tap_skip("compile pipeline", "no C++ compiler (c++ or HIPKIT_CXX) on PATH");
        return tap_done();
    }
    tu_seed();
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    self_exe[n > 0 ? n : 0] = 0;
    snprintf(base, sizeof base, "%s/hk-pipe-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(base)) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    char cache[600];
    snprintf(cache, sizeof cache, "%s/table", base);
    setenv("HIPKIT_CACHE_DIR", cache, 1);
    test_memory_table();
    test_disk();
    test_refused();
    test_concurrent();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    system(cmd);
    return tap_done();
}
