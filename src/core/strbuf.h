/* A growable, always NUL-terminated string: compile logs, error messages,
 * generated source. Allocation failure leaves it truncated and sets oom. */
#ifndef HKC_STRBUF_H
#define HKC_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct hkc_strbuf {
    char *data; /* never NULL after init */
    size_t len, cap;
    int oom;
} hkc_strbuf;

void hkc_strbuf_init(hkc_strbuf *s);
void hkc_strbuf_free(hkc_strbuf *s);
void hkc_strbuf_clear(hkc_strbuf *s);
void hkc_strbuf_append(hkc_strbuf *s, const char *data, size_t n);
void hkc_strbuf_puts(hkc_strbuf *s, const char *str);
void hkc_strbuf_printf(hkc_strbuf *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void hkc_strbuf_vprintf(hkc_strbuf *s, const char *fmt, va_list ap);
/* Hands the string to the caller (who frees it) and resets s. */
char *hkc_strbuf_take(hkc_strbuf *s);

/* The error for a path that is no regular file nor directory (a FIFO, a
 * socket, a device): reading one could block forever or never end. */
#define HKC_ENOTREG (-0x4000)

/* Reads a whole regular file, without blocking on a FIFO; returns 0 or
 * -errno (-EISDIR, HKC_ENOTREG). *out is NUL-terminated. */
int hkc_read_file(const char *path, char **out, size_t *len);
/* The message for an error of hkc_read_file. */
const char *hkc_file_strerror(int e);

#endif
