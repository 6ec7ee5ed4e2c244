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

/* Reads a whole file; returns 0 or -errno. *out is NUL-terminated. */
int hkc_read_file(const char *path, char **out, size_t *len);

#endif
