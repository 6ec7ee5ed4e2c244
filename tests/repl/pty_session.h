/* The REPL in a real terminal, for the tests that drive it: hipkit runs on a
 * pseudo-terminal (forkpty), the test types keys and reads the screen, as a
 * person would. Escape sequences and carriage returns are stripped from
 * what the terminal shows. Static functions, as tap.h's: each test program
 * includes it once. */
#ifndef HK_PTY_SESSION_H
#define HK_PTY_SESSION_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tap.h"

#define TIMEOUT_MS 30000

static const char *hipkit;
static char tmp[256];

typedef struct session {
    pid_t pid;
    int fd;
    char screen[1 << 16]; /* what the terminal showed, escapes stripped */
    size_t len, mark;
    int esc;              /* inside an escape sequence: 1 after ESC, 2 in CSI, 3 in OSC */
    int eof;
} session;

static inline long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* Keeps what a reader sees: no \r, no terminal control sequences. */
static inline void take(session *s, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        switch (s->esc) {
        case 1:
            s->esc = c == '[' ? 2 : c == ']' ? 3 : 0;
            continue;
        case 2:
            if (c >= 0x40 && c <= 0x7e)
                s->esc = 0;
            continue;
        case 3:
            if (c == 7 || c == '\\')
                s->esc = 0;
            continue;
        default:
            break;
        }
        if (c == 0x1b) {
            s->esc = 1;
            continue;
        }
        if (c == '\r' || c == 7)
            continue;
        if (s->len + 1 < sizeof s->screen)
            s->screen[s->len++] = (char)c;
    }
    s->screen[s->len] = '\0';
}

/* Reads whatever comes within ms; returns 0 at end of output. */
static inline int pump(session *s, int ms)
{
    struct pollfd p = {.fd = s->fd, .events = POLLIN};
    if (s->eof || poll(&p, 1, ms) <= 0)
        return !s->eof;
    char buf[4096];
    ssize_t n = read(s->fd, buf, sizeof buf);
    if (n <= 0) { /* EIO once the child has closed the terminal */
        s->eof = 1;
        return 0;
    }
    take(s, buf, (size_t)n);
    return 1;
}

/* Waits until the screen since the mark ends with tail (or contains it
 * when anywhere). Returns the text since the mark and moves the mark. */
static const char *wait_for(session *s, const char *tail, int anywhere)
{
    static char got[1 << 16];
    long end = now_ms() + TIMEOUT_MS;
    size_t tl = strlen(tail);
    for (;;) {
        const char *since = s->screen + s->mark;
        size_t n = s->len - s->mark;
        int found = anywhere ? strstr(since, tail) != NULL
                             : n >= tl && memcmp(since + n - tl, tail, tl) == 0;
        long left = end - now_ms();
        if (found || left <= 0 || s->eof) {
            if (!found)
                tap_diag("timed out waiting for \"%s\"", tail);
            snprintf(got, sizeof got, "%s", since);
            s->mark = s->len;
            return got;
        }
        pump(s, (int)(left < 100 ? left : 100));
    }
}

static inline void type(session *s, const char *keys)
{
    size_t n = strlen(keys);
    while (n > 0) {
        ssize_t w = write(s->fd, keys, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        keys += w;
        n -= (size_t)w;
    }
}

static inline void show(const char *what, const char *text)
{
    tap_diag("%s:", what);
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        tap_diag("  |%.*s|", len, p);
        p += len + (nl != NULL);
    }
}

/* Types line, Enter, and checks the screen up to the next prompt. */
static inline int exchange(session *s, const char *line, const char *want, const char *name)
{
    type(s, line);
    type(s, "\r");
    size_t n = strlen(want);
    const char *got = wait_for(s, n >= 3 && strcmp(want + n - 3, ">> ") == 0 ? ">> " : "hk> ", 0);
    int ok = strcmp(got, want) == 0;
    tap_ok(ok, "%s", name);
    if (!ok) {
        show("expected", want);
        show("got", got);
    }
    return ok;
}

/* Starts hipkit with up to two options (opt2 may be NULL). */
static inline void start2(session *s, const char *opt, const char *opt2)
{
    memset(s, 0, sizeof *s);
    struct winsize ws = {.ws_row = 40, .ws_col = 200};
    s->pid = forkpty(&s->fd, NULL, NULL, &ws);
    if (s->pid < 0) {
        perror("forkpty");
        exit(1);
    }
    if (s->pid == 0) {
        char path[300];
        snprintf(path, sizeof path, "%s/home", tmp);
        setenv("HOME", path, 1);
        snprintf(path, sizeof path, "%s/state", tmp);
        setenv("XDG_STATE_HOME", path, 1);
        setenv("TERM", "xterm", 1);
        setenv("INPUTRC", "/dev/null", 1); /* no personal key bindings */
        unsetenv("HIPKIT_BACKEND");
        unsetenv("HIPKIT_DEVICE");
        execl(hipkit, hipkit, opt, opt2, (char *)NULL);
        _exit(127);
    }
}

static inline void start(session *s, const char *opt) { start2(s, opt, NULL); }

/* Sends Ctrl-D, reads to the end and returns the exit status (-1: hung). */
static inline int finish(session *s, const char **rest)
{
    type(s, "\x04");
    long end = now_ms() + TIMEOUT_MS;
    while (!s->eof && now_ms() < end)
        pump(s, 100);
    *rest = s->screen + s->mark;
    int status;
    for (;;) {
        pid_t r = waitpid(s->pid, &status, WNOHANG);
        if (r == s->pid)
            break;
        if (now_ms() >= end) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &status, 0);
            close(s->fd);
            return -1;
        }
        usleep(10000);
    }
    close(s->fd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline int has_readline(void)
{
    char cmd[600], line[256];
    snprintf(cmd, sizeof cmd, "'%s' --version", hipkit);
    FILE *p = popen(cmd, "r");
    int found = 0;
    if (p == NULL)
        return 0;
    while (fgets(line, sizeof line, p))
        if (strncmp(line, "line editing: readline", 22) == 0)
            found = 1;
    pclose(p);
    return found;
}

static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static inline int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return 1;
    return 0;
}

#endif
