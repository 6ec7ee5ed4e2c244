/* Error codes, names and the per-context, per-thread detail message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

HK_API const char *hk_errname(int err)
{
    switch (err) {
    case HK_OK:
        return "HK_OK";
#define HK_ERRNAME_CASE_(name, num, text) \
    case -(num):                          \
        return "HK_E" #name;
        HK_ERROR_MAP(HK_ERRNAME_CASE_)
#undef HK_ERRNAME_CASE_
    }
    return "HK_E?";
}

HK_API const char *hk_strerror(int err)
{
    switch (err) {
    case HK_OK:
        return "success";
#define HK_STRERROR_CASE_(name, num, text) \
    case -(num):                           \
        return text;
        HK_ERROR_MAP(HK_STRERROR_CASE_)
#undef HK_STRERROR_CASE_
    }
    return "unknown error";
}

/* Failures of hk_context_create have no context to hang their message on. */
static _Thread_local char *nocontext_msg;

static void free_msg(void *p) { free(p); }

/* The code of the calling thread's last failure, so that a caller that
 * only learns "it failed" (a plugin op returning -1 after host->fail) can
 * return the code that goes with the message. */
static _Thread_local int last_code;

int hkc_last_fail_code(void) { return last_code; }

void hkc_last_fail_reset(void) { last_code = 0; }

void hkc_errkey_create(hk_context *ctx)
{
    pthread_key_create(&ctx->errkey, free_msg);
}

void hkc_errkey_delete(hk_context *ctx)
{
    free(pthread_getspecific(ctx->errkey));
    pthread_setspecific(ctx->errkey, NULL);
    pthread_key_delete(ctx->errkey);
}

int hkc_vfail(const hk_context *ctx, int code, const char *fmt, va_list ap)
{
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    hkc_strbuf_vprintf(&s, fmt, ap);
    char *msg = hkc_strbuf_take(&s);
    last_code = code;
    if (ctx) {
        free(pthread_getspecific(ctx->errkey));
        pthread_setspecific(ctx->errkey, msg);
    } else {
        free(nocontext_msg);
        nocontext_msg = msg;
    }
    return code;
}

int hkc_fail(const hk_context *ctx, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hkc_vfail(ctx, code, fmt, ap);
    va_end(ap);
    return code;
}

HK_API const char *hk_errmsg(const hk_context *ctx)
{
    const char *m = ctx ? pthread_getspecific(ctx->errkey) : nocontext_msg;
    return m ? m : "";
}

void hkc_warn(const hk_context *ctx, const char *fmt, ...)
{
    if (ctx && ctx->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("hipkit: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

double hkc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
