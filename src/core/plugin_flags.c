/* Error flags for host ops (plugin ABI 1.6): device memory an op's kernels
 * raise when they find an error only the device can see (an index out of
 * range), read back by the core instead of by the op.
 *
 * Reading a flag back as the op returns makes the host wait for the op's
 * kernels: on a GPU the next op's launch then starts from an idle device
 * (about 10 us of a 60 us index_select on the H100). So on a GPU the flags
 * are read at the next point where the host waits for the device anyway (a
 * download, hk_synchronize, a read from Lua) and the error, naming the op,
 * becomes that call's. On the CPU backend waiting costs nothing: flags are
 * read as the op returns. HIPKIT_DEFER_CHECKS=0 or 1 forces either.
 *
 * A device's flags are words of one small buffer handed out in order;
 * reading them is one download of the words used. Words read back as zero
 * are still zero, so only a raised flag costs a fill afterwards. */
#include <stdio.h>
#include <stdlib.h>

#include "env_values.h"
#include "plugin_internal.h"

#define AREA_WORDS 512
#define DATA_MAX 256

typedef struct pl_flag_check {
    size_t word, words; /* its words in the area */
    hk_buffer *view;    /* what the op's launches were given */
    hk_plugin_describe_fn describe;
    char op[128]; /* "family.op" */
    unsigned char data[DATA_MAX];
} pl_flag_check;

struct pl_flag_area {
    hk_buffer *mem; /* AREA_WORDS u64 on the device */
    size_t used;
    pl_flag_check *checks;
    int nchecks, capchecks;
};

int hkc_plugin_flags_deferred(hk_context *ctx)
{
    return hkc_env_flag("HIPKIT_DEFER_CHECKS", strcmp(hkc_current_device(ctx)->be->ops->name, "host") != 0);
}

/* The area of `device` into *out, made on first use. */
static int area_of(hk_context *ctx, int device, pl_flag_area **out)
{
    hkc_plugins *ps = ctx->plugins;
    if (device >= ps->nflags) {
        pl_flag_area *grown = realloc(ps->flags, (size_t)(device + 1) * sizeof *grown);
        if (!grown)
            return hkc_fail(ctx, HK_ENOMEM, "out of memory");
        memset(grown + ps->nflags, 0, (size_t)(device + 1 - ps->nflags) * sizeof *grown);
        ps->flags = grown;
        ps->nflags = device + 1;
    }
    pl_flag_area *a = &ps->flags[device];
    if (!a->mem) {
        static const unsigned long long zero = 0;
        hk_buffer *mem = NULL;
        int r = hk_buffer_alloc(ctx, AREA_WORDS, HK_U64, HK_MEM_DEVICE, &mem);
        if (!r)
            r = hk_buffer_fill(mem, &zero);
        if (r) {
            hk_buffer_free(mem);
            return r;
        }
        a->mem = mem;
    }
    *out = a;
    return 0;
}

int hkc_plugin_error_flag(hk_context *ctx, const char *family, const char *op, size_t words,
                          hk_plugin_describe_fn describe, const void *data, size_t data_bytes,
                          hk_buffer **out)
{
    *out = NULL;
    int r = hkc_graph_refuse(ctx, "host->error_flag", "an error flag is read back after the op");
    if (r)
        return r;
    if (words < 1 || words > 8 || !describe || data_bytes > DATA_MAX || (data_bytes && !data))
        return hkc_fail(ctx, HK_EARG, "error_flag: words must be 1 to 8, describe a function and data "
                                      "at most %d bytes (got %zu words, %zu bytes)", DATA_MAX, words,
                        data_bytes);
    pl_flag_area *a = NULL;
    r = area_of(ctx, ctx->current, &a);
    if (r)
        return r;
    if (a->used + words > AREA_WORDS && (r = hkc_plugin_flags_wait(ctx, ctx->current)) != 0)
        return r; /* full: what is there is read first */
    if (a->nchecks == a->capchecks) {
        int cap = a->capchecks ? 2 * a->capchecks : 8;
        pl_flag_check *grown = realloc(a->checks, (size_t)cap * sizeof *grown);
        if (!grown)
            return hkc_fail(ctx, HK_ENOMEM, "out of memory");
        a->checks = grown;
        a->capchecks = cap;
    }
    hk_buffer *view = NULL;
    r = hk_buffer_view(a->mem, HK_U64, a->used * sizeof(unsigned long long), words, &view);
    if (r)
        return r;
    pl_flag_check *c = &a->checks[a->nchecks++];
    memset(c, 0, sizeof *c);
    c->word = a->used;
    c->words = words;
    c->view = view;
    c->describe = describe;
    snprintf(c->op, sizeof c->op, "%s.%s", family, op);
    if (data_bytes)
        memcpy(c->data, data, data_bytes);
    a->used += words;
    *out = view;
    return 0;
}

/* The first raised check's message into msg ("family.op: ..." when read
 * later, the description alone as the op returns: the op's own error
 * prefix follows). */
static void describe_raised(const pl_flag_area *a, const unsigned long long *w, const hk_plugin_host *host,
                            const hk_plugin_call *call, hkc_strbuf *msg)
{
    int raised = 0;
    for (int i = 0; i < a->nchecks; i++) {
        const pl_flag_check *c = &a->checks[i];
        int up = 0;
        for (size_t k = 0; k < c->words; k++)
            up |= w[c->word + k] != 0;
        if (!up || raised++)
            continue;
        char text[512] = "";
        c->describe(host, call, w + c->word, c->data, text, sizeof text);
        text[sizeof text - 1] = 0;
        if (call)
            hkc_strbuf_printf(msg, "%s", text);
        else
            hkc_strbuf_printf(msg, "%s (an earlier call; its kernels found this on the device): %s", c->op,
                              text[0] ? text : "error flag raised");
    }
    if (raised > 1)
        hkc_strbuf_printf(msg, " (and %d more call%s with a raised flag since the last wait)", raised - 1,
                          raised > 2 ? "s" : "");
}

int hkc_plugin_flags_read(hk_context *ctx, int device, const hk_plugin_host *host,
                          const hk_plugin_call *call, hkc_strbuf *msg)
{
    hkc_plugins *ps = ctx->plugins;
    if (!ps || device >= ps->nflags || ps->reading_flags)
        return 0;
    pl_flag_area *a = &ps->flags[device];
    if (!a->nchecks)
        return 0;
    ps->reading_flags = 1;
    unsigned long long w[AREA_WORDS];
    int r = hk_buffer_download(a->mem, 0, w, a->used * sizeof w[0]);
    int raised = 0;
    if (!r) {
        for (size_t i = 0; i < a->used; i++)
            raised |= w[i] != 0;
        if (raised) {
            describe_raised(a, w, host, call, msg);
            static const unsigned long long zero = 0;
            hk_buffer *used = NULL;
            r = hk_buffer_view(a->mem, HK_U64, 0, a->used, &used);
            if (!r)
                r = hk_buffer_fill(used, &zero);
            hk_buffer_free(used);
        }
    }
    for (int i = 0; i < a->nchecks; i++)
        hk_buffer_free(a->checks[i].view);
    a->nchecks = 0;
    a->used = 0;
    ps->reading_flags = 0;
    return r ? r : raised;
}

int hkc_plugin_flags_wait(hk_context *ctx, int device)
{
    hkc_plugins *ps = ctx->plugins;
    if (!ps || device >= ps->nflags || !ps->flags[device].nchecks || ps->reading_flags)
        return 0;
    hkc_strbuf m;
    hkc_strbuf_init(&m);
    int r = hkc_plugin_flags_read(ctx, device, NULL, NULL, &m);
    if (r > 0)
        r = hkc_fail(ctx, HK_EARG, "%s", m.data);
    hkc_strbuf_free(&m);
    return r;
}

void hkc_plugin_flags_free_all(hkc_plugins *ps)
{
    for (int d = 0; d < ps->nflags; d++) {
        pl_flag_area *a = &ps->flags[d];
        for (int i = 0; i < a->nchecks; i++)
            hk_buffer_free(a->checks[i].view);
        free(a->checks);
        hk_buffer_free(a->mem);
    }
    free(ps->flags);
    ps->flags = NULL;
    ps->nflags = 0;
}
