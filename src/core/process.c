/* External programs: finding them, running them, and the private folders
 * through which files reach them (see process.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hipkit/hipkit.h>

#include "process.h"

extern char **environ;

static int executable_in(const char *dir, size_t dirlen, const char *name, char *out, size_t cap)
{
    if (!dir || !dirlen)
        return 0;
    int n = snprintf(out, cap, "%.*s/%s", (int)dirlen, dir, name);
    return n > 0 && (size_t)n < cap && access(out, X_OK) == 0;
}

static int executable_in_any(const char *const *dirs, const char *name, char *out, size_t cap)
{
    for (int i = 0; dirs && dirs[i]; i++)
        if (executable_in(dirs[i], strlen(dirs[i]), name, out, cap))
            return 1;
    return 0;
}

int hkc_find_program(const char *name, const char *const *first, const char *const *last,
                     char *out, size_t cap)
{
    if (!name || !*name)
        return -1;
    if (strchr(name, '/')) {
        int n = snprintf(out, cap, "%s", name);
        return n > 0 && (size_t)n < cap && access(out, X_OK) == 0 ? 0 : -1;
    }
    if (executable_in_any(first, name, out, cap))
        return 0;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        if (executable_in(p, n, name, out, cap))
            return 0;
        p += n + (p[n] == ':');
    }
    return executable_in_any(last, name, out, cap) ? 0 : -1;
}

/* environ with envset added (replacing a variable of the same name). */
static char **environ_with(const char *envset)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env)
        return NULL;
    size_t klen = strcspn(envset, "="), k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], envset, klen) || environ[i][klen] != '=')
            env[k++] = environ[i];
    env[k] = (char *)envset;
    return env;
}

static void drain(int fd, hkc_strbuf *out)
{
    char buf[16384];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (out)
            hkc_strbuf_append(out, buf, (size_t)r);
    }
}

int hkc_run_capture(char *const argv[], const char *envset, hkc_strbuf *out)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -errno;
    char **env = envset ? environ_with(envset) : environ;
    if (!env) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -ENOMEM;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    if (env != environ)
        free(env);
    close(pipefd[1]);
    if (e != 0) {
        close(pipefd[0]);
        return -e;
    }
    drain(pipefd[0], out);
    close(pipefd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static const char *temp_root(void)
{
    const char *td = getenv("TMPDIR");
    return td && *td ? td : "/tmp";
}

int hkc_tempdir_create(const char *what, char *dir, size_t cap)
{
    /* The pid in the name lets hk_tempdirs_sweep tell a folder whose owner
     * was killed from one in use. */
    int n = snprintf(dir, cap, "%s/hipkit-%s-%ld-XXXXXX", temp_root(), what, (long)getpid());
    if (n < 0 || (size_t)n >= cap)
        return -ENAMETOOLONG;
    return mkdtemp(dir) ? 0 : -errno;
}

int hkc_tempdir_write(const char *dir, const char *relpath, const void *data, size_t size)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", dir, relpath);
    if (n < 0 || (size_t)n >= sizeof path)
        return -ENAMETOOLONG;
    /* the folders relpath names, one level at a time */
    for (char *s = path + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = 0;
        int bad = mkdir(path, 0700) != 0 && errno != EEXIST;
        *s = '/';
        if (bad)
            return -errno;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    const char *p = data;
    while (size) {
        ssize_t w = write(fd, p, size);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            return -e;
        }
        p += w;
        size -= (size_t)w;
    }
    return close(fd) == 0 ? 0 : -errno;
}

int hkc_tempdir_write_all(const char *dir, const hkc_embedded_file *files)
{
    for (const hkc_embedded_file *f = files; f && f->path; f++) {
        int r = hkc_tempdir_write(dir, f->path, f->data, f->size);
        if (r != 0)
            return r;
    }
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void hkc_tempdir_remove(const char *dir)
{
    if (dir && *dir)
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The pid of a name hkc_tempdir_create makes, "hipkit-WHAT-PID-XXXXXX"
 * (WHAT lower-case letters), or 0 for any other name. */
static long tempdir_owner(const char *name)
{
    if (strncmp(name, "hipkit-", 7) != 0)
        return 0;
    const char *p = name + 7, *what = p;
    while (*p >= 'a' && *p <= 'z')
        p++;
    if (p == what || *p++ != '-')
        return 0;
    char *end;
    long pid = strtol(p, &end, 10);
    if (end == p || *p < '1' || *p > '9' || *end != '-' || strlen(end + 1) != 6)
        return 0;
    return pid;
}

int hk_tempdirs_sweep(void)
{
    const char *root = temp_root();
    DIR *d = opendir(root);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid = tempdir_owner(e->d_name);
        if (pid <= 0 || pid == (long)getpid())
            continue;
        char path[4096];
        struct stat st;
        int n = snprintf(path, sizeof path, "%s/%s", root, e->d_name);
        if (n < 0 || (size_t)n >= sizeof path || lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != getuid())
            continue;
        /* EPERM means the process exists (another user's): only ESRCH is
         * proof the owner is gone. */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        hkc_tempdir_remove(path);
        removed += access(path, F_OK) != 0;
    }
    closedir(d);
    return removed;
}
