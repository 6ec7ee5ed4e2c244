#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void hkc_strbuf_init(hkc_strbuf *s)
{
    static char empty[1];
    s->data = empty;
    s->len = s->cap = 0;
    s->oom = 0;
}

void hkc_strbuf_free(hkc_strbuf *s)
{
    if (s->cap)
        free(s->data);
    hkc_strbuf_init(s);
}

void hkc_strbuf_clear(hkc_strbuf *s)
{
    s->len = 0;
    if (s->cap)
        s->data[0] = 0;
}

static int reserve(hkc_strbuf *s, size_t extra)
{
    if (s->len + extra + 1 <= s->cap)
        return 1;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < s->len + extra + 1)
        cap *= 2;
    char *p = s->cap ? realloc(s->data, cap) : malloc(cap);
    if (!p) {
        s->oom = 1;
        return 0;
    }
    if (!s->cap)
        p[0] = 0;
    s->data = p;
    s->cap = cap;
    return 1;
}

void hkc_strbuf_append(hkc_strbuf *s, const char *data, size_t n)
{
    if (!reserve(s, n))
        return;
    memcpy(s->data + s->len, data, n);
    s->len += n;
    s->data[s->len] = 0;
}

void hkc_strbuf_puts(hkc_strbuf *s, const char *str)
{
    hkc_strbuf_append(s, str, strlen(str));
}

void hkc_strbuf_vprintf(hkc_strbuf *s, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !reserve(s, (size_t)n))
        return;
    vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
    s->len += (size_t)n;
}

void hkc_strbuf_printf(hkc_strbuf *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hkc_strbuf_vprintf(s, fmt, ap);
    va_end(ap);
}

const char *hkc_file_strerror(int e)
{
    return e == HKC_ENOTREG ? "not a regular file (a FIFO, a socket or a device)" : strerror(-e);
}

char *hkc_strbuf_take(hkc_strbuf *s)
{
    char *p = s->cap ? s->data : strdup("");
    hkc_strbuf_init(s);
    return p;
}

int hkc_read_file(const char *path, char **out, size_t *len)
{
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer
     * forever. The type is checked on the descriptor; a regular file
     * ignores the flag. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return S_ISDIR(st.st_mode) ? -EISDIR : HKC_ENOTREG;
    }
    size_t cap = (size_t)st.st_size;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return -ENOMEM;
    }
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    *out = buf;
    if (len)
        *len = got;
    return 0;
}
