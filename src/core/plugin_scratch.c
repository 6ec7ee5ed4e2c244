/* Scratch memory and byte copies for host ops (plugin ABI 1.5): a scan's
 * tile states, a sort's ping-pong keys, an indexing op's out-of-range flag.
 *
 * Device allocations are slow and cuMemFree/hipFree wait for the device,
 * so scratch comes from a per-context pool of device buffers that are
 * never freed before the context: an op's request is a typed view of a
 * free pool buffer, zeroed by a memset ordered on the stream after what
 * was launched before. When the op returns its views are freed and the
 * pool buffers marked free; kernels still running then were launched
 * before any later op's memset, so stream order keeps them apart.
 *
 * An out-of-range flag is zeroed, launched on, read back as zero: still
 * zero. The pool remembers that (zero_bytes) and the next request that
 * fits skips its memset, which on a GPU is a command the device waits
 * for (about 6 us of a 54 us index_select on the H100).
 *
 * While a graph records, raw scratch (host->scratch_raw, which the op's
 * kernels write whole before reading) is a buffer of the graph's own
 * (hkc_graph_scratch), not the pool's: every replay uses it after the op
 * has returned. Zeroed scratch is refused there: it would be zero once,
 * at the recording, not on each replay. */
#include "plugin_internal.h"

/* Pool buffers are at least this big, so small requests share few. */
#define SCRATCH_MIN_BYTES ((size_t)64 << 10)

struct pl_scratch {
    hk_buffer *mem; /* u8, device memory */
    int device;
    int busy; /* handed out to the op running now */
    size_t zero_bytes; /* bytes from the start known to be zero */
};

/* The smallest free pool buffer of `device` holding `bytes`, or a new one
 * (power-of-two size); its index, or a negative error. */
static int pool_take(hk_context *ctx, int device, size_t bytes)
{
    hkc_plugins *ps = ctx->plugins;
    int best = -1;
    for (int i = 0; i < ps->nscratch; i++) {
        pl_scratch *s = &ps->scratch[i];
        if (!s->busy && s->device == device && hk_buffer_bytes(s->mem) >= bytes &&
            (best < 0 || hk_buffer_bytes(s->mem) < hk_buffer_bytes(ps->scratch[best].mem)))
            best = i;
    }
    if (best >= 0) {
        ps->scratch[best].busy = 1;
        return best;
    }
    if (ps->nscratch == ps->capscratch) {
        int cap = ps->capscratch ? 2 * ps->capscratch : 4;
        pl_scratch *grown = realloc(ps->scratch, (size_t)cap * sizeof *grown);
        if (!grown)
            return hkc_fail(ctx, HK_ENOMEM, "out of memory");
        ps->scratch = grown;
        ps->capscratch = cap;
    }
    size_t size = SCRATCH_MIN_BYTES;
    while (size < bytes && size <= SIZE_MAX / 2)
        size *= 2;
    hk_buffer *mem = NULL;
    int r = hk_buffer_alloc(ctx, size < bytes ? bytes : size, HK_U8, HK_MEM_DEVICE, &mem);
    if (r)
        return r;
    ps->scratch[ps->nscratch] = (pl_scratch){mem, device, 1, 0};
    return ps->nscratch++;
}

int hkc_plugin_scratch(hk_context *ctx, const char *dtype, size_t count, int zeroed, hkc_scratch_list *l,
                       hk_buffer **out)
{
    hk_dtype t;
    *out = NULL;
    /* zeroed scratch is zeroed as the op runs, not on each replay */
    int rr = zeroed ? hkc_graph_refuse(ctx, "host->scratch", "an op's zeroed scratch memory is zeroed as the op "
                                       "runs, not on each replay")
                    : 0;
    if (rr)
        return rr;
    if (!dtype || hk_dtype_parse(dtype, &t) != 0)
        return hkc_fail(ctx, HK_EARG, "scratch: unknown dtype '%s'", dtype ? dtype : "(null)");
    size_t es = hk_dtype_size(t);
    if (count == 0 || count > SIZE_MAX / es)
        return hkc_fail(ctx, HK_EARG, "scratch: %zu elements of %s is not a size", count, dtype);
    if (l->n == HKC_SCRATCH_MAX)
        return hkc_fail(ctx, HK_EARG, "scratch: at most %d scratch buffers per op call", HKC_SCRATCH_MAX);
    if (hk_graph_recording(ctx) && !ctx->graph_paused) {
        /* recorded: raw scratch of the graph's own, which every replay uses */
        hk_buffer *own = NULL;
        int r = hkc_graph_scratch(ctx, t, count, &own);
        if (r)
            return r;
        l->pool[l->n] = -1;
        l->read_zero[l->n] = 0;
        l->views[l->n++] = own;
        *out = own;
        return 0;
    }
    int i = pool_take(ctx, ctx->current, count * es);
    if (i < 0)
        return i;
    pl_scratch *ps = &ctx->plugins->scratch[i];
    hk_buffer *mem = ps->mem, *zero = NULL, *view = NULL;
    static const unsigned char nothing = 0;
    int r = 0;
    if (zeroed && ps->zero_bytes < count * es) {
        r = hk_buffer_view(mem, HK_U8, 0, count * es, &zero);
        if (!r)
            r = hk_buffer_fill(zero, &nothing);
        hk_buffer_free(zero);
    }
    ps->zero_bytes = 0; /* the op may write it */
    if (!r)
        r = hk_buffer_view(mem, t, 0, count, &view);
    if (r) {
        ctx->plugins->scratch[i].busy = 0;
        return r;
    }
    l->pool[l->n] = i;
    l->read_zero[l->n] = 0;
    l->views[l->n++] = view;
    *out = view;
    return 0;
}

void hkc_plugin_scratch_release(hk_context *ctx, hkc_scratch_list *l)
{
    for (int k = 0; k < l->n; k++) {
        if (l->pool[k] < 0)
            continue; /* the recording graph's own: freed with the graph */
        if (ctx->plugins && l->pool[k] < ctx->plugins->nscratch) {
            pl_scratch *ps = &ctx->plugins->scratch[l->pool[k]];
            ps->busy = 0;
            ps->zero_bytes = l->read_zero[k] ? hk_buffer_bytes(l->views[k]) : 0;
        }
        hk_buffer_free(l->views[k]);
    }
    l->n = 0;
}

void hkc_plugin_scratch_written(hkc_scratch_list *l)
{
    for (int k = 0; k < l->n; k++)
        l->read_zero[k] = 0;
}

void hkc_plugin_scratch_read(hkc_scratch_list *l, const hk_buffer *buf, size_t offset, const void *bytes,
                             size_t n)
{
    for (int k = 0; k < l->n; k++) {
        if (l->views[k] != buf || offset != 0 || n != hk_buffer_bytes(buf))
            continue;
        const unsigned char *p = bytes;
        size_t i = 0;
        while (i < n && p[i] == 0)
            i++;
        l->read_zero[k] = i == n;
    }
}

void hkc_plugin_scratch_free_all(hkc_plugins *ps)
{
    for (int i = 0; i < ps->nscratch; i++)
        hk_buffer_free(ps->scratch[i].mem);
    free(ps->scratch);
    ps->scratch = NULL;
    ps->nscratch = ps->capscratch = 0;
}
