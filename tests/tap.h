/* A tiny TAP emitter: ok/not ok lines, diagnostics, skips and the plan. */
#ifndef HK_TAP_H
#define HK_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static int tap_n, tap_failed;

static inline void tap_init(void) { setvbuf(stdout, NULL, _IONBF, 0); }

static inline int tap_ok(int cond, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int tap_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!cond)
        tap_failed++;
    return cond;
}

static inline void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void tap_diag(const char *fmt, ...)
{
    char text[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    /* every line a comment: a compiler log must not break the stream */
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        printf("# %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

static inline void tap_skip(const char *name, const char *reason)
{
    printf("ok %d - %s # SKIP %s\n", ++tap_n, name, reason);
}

/* Prints the plan and returns the exit status. */
static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}

#endif
