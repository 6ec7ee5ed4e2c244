/* A buffer mapped from a file (hk_buffer_mmap) whose file another process
 * truncates: every copy that touches the lost pages fails naming the file,
 * or (a GPU copy made before the truncation) still succeeds; none raises
 * SIGBUS. On the CPU backend the copies are hipkit's own (host_memory.c);
 * on the GPU backends the pages of a mapping the runtime will not register
 * go through this thread (gpu_common.c, hkc_gpu_map_move): the device copy
 * made at mmap time, and its write-back on sync and free, which SIGBUSed
 * inside the driver before. Files are made in the current folder (the build
 * folder, on disk: a writable ext4 mapping cannot be registered, which is
 * the case under test on a GPU). Runs on HIPKIT_TEST_BACKEND. */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../testutil.h"

#define N (256 * 1024) /* floats: 1 MiB, 256 pages */

/* Truncates path to `bytes` from another process, as the defect has it. */
static int truncate_elsewhere(const char *path, off_t bytes)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(truncate(path, bytes) == 0 ? 0 : 1);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* r is 0, or HK_EIO naming the file; on the CPU backend only the error. */
static void check_outcome(hk_context *ctx, int r, int must_fail, const char *path, const char *what)
{
    const char *msg = r ? hk_errmsg(ctx) : "";
    int named = r == HK_EIO && strstr(msg, path) != NULL;
    tap_ok(must_fail ? named : r == 0 || named, "%s: %s", what,
           r == 0 ? "succeeded (a device copy made before the truncation)" : msg);
}

static void write_file(const char *path, const float *v)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(v, sizeof *v, N, f) != N)
        printf("Bail out! cannot write %s\n", path);
    if (f)
        fclose(f);
}

int main(void)
{
    tap_init();
    hk_context *ctx = tu_context();
    int host = tu_on_host();
    char dir[] = "./hk-mmap-XXXXXX", ro[64], rw[64];
    if (!mkdtemp(dir)) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    snprintf(ro, sizeof ro, "%s/ro.bin", dir);
    snprintf(rw, sizeof rw, "%s/rw.bin", dir);
    static float v[N], back[N];
    for (int i = 0; i < N; i++)
        v[i] = (float)i;
    write_file(ro, v);

    /* a read-only mapping, truncated to its first page */
    hk_buffer *map = NULL, *dev = NULL;
    int r = hk_buffer_mmap(ctx, ro, HK_F32, NULL, &map);
    tap_ok(r == 0, "a 1 MiB file maps (%s)", r ? hk_errmsg(ctx) : "ok");
    hk_buffer_alloc(ctx, N, HK_F32, HK_MEM_DEVICE, &dev);
    tap_ok(truncate_elsewhere(ro, 4096) == 0, "another process truncates the file to 4096 bytes");
    if (map && dev) {
        check_outcome(ctx, hk_buffer_copy(dev, 0, map, 0, sizeof v), host, ro,
                      "copying the mapping to device memory");
        check_outcome(ctx, hk_buffer_download(map, 0, back, sizeof back), host, ro,
                      "downloading the mapping");
        r = hk_buffer_download(map, 0, back, 4096);
        tap_ok(r == 0 && back[0] == 0.0f && back[1023] == 1023.0f,
               "its first page, still in the file, reads (%s)", r ? hk_errmsg(ctx) : "ok");
        tap_ok(hk_buffer_free(map) == 0, "the buffer frees");
    }

    /* a writable mapping: written, synced, truncated, written again, synced */
    write_file(rw, v);
    hk_mmap_options o;
    hk_mmap_options_defaults(&o);
    o.writable = 1;
    map = NULL;
    r = hk_buffer_mmap(ctx, rw, HK_F32, &o, &map);
    tap_ok(r == 0, "a writable 1 MiB mapping (%s)", r ? hk_errmsg(ctx) : "ok");
    if (map) {
        for (int i = 0; i < N; i++)
            back[i] = (float)-i;
        r = hk_buffer_upload(map, 0, back, sizeof back);
        if (r == 0)
            r = hk_buffer_sync(map);
        tap_ok(r == 0, "written and synced while the file is whole (%s)", r ? hk_errmsg(ctx) : "ok");
        tap_ok(truncate_elsewhere(rw, 4096) == 0, "another process truncates it to 4096 bytes");
        check_outcome(ctx, hk_buffer_upload(map, 0, v, sizeof v), host, rw, "writing the mapping");
        r = hk_buffer_copy(map, 0, dev, 0, sizeof v); /* a device write: the staged copy is dirty */
        check_outcome(ctx, r, host, rw, "copying device memory into the mapping");
        check_outcome(ctx, hk_buffer_sync(map), 0, rw,
                      "syncing it (on a GPU: the device copy written back)");
        hk_buffer_free(map); /* the last write-back warns, never SIGBUS */
        tap_ok(1, "the buffer frees; the process goes on");
    }

    /* the session goes on */
    for (int i = 0; i < N; i++)
        v[i] = (float)(3 * i);
    r = dev ? hk_buffer_upload(dev, 0, v, sizeof v) : -1;
    if (r == 0)
        r = hk_buffer_download(dev, 0, back, sizeof back);
    tap_ok(r == 0 && !memcmp(v, back, sizeof v), "device memory still round-trips (%s)",
           r ? hk_errmsg(ctx) : "ok");
    hk_buffer_free(dev);
    unlink(ro);
    unlink(rw);
    rmdir(dir);
    hk_context_destroy(ctx);
    return tap_done();
}
