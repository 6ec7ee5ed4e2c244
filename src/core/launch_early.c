/* Early start (HK_LAUNCH_EARLY_START): whether a launch may begin while the
 * kernel before it still runs. The kernel promises to call hk_grid_wait()
 * before it touches memory, except the buffers named in early_reads, which
 * it reads before. Those are safe only if the kernel before cannot write
 * them, so the core remembers what each kernel may write: the memory of the
 * buffers it took as non-const pointers. Whether the work before was a
 * kernel at all (a copy or an event between them orders them fully) is the
 * backend's to know, and so is whether the device can start early. */
#include <stdlib.h>
#include <string.h>

#include "env_values.h"
#include "internal.h"

/* The allocation a buffer's memory belongs to: a view's parent's. */
static const hk_buffer *root_of(const hk_buffer *b)
{
    while (b->parent)
        b = b->parent;
    return b;
}

/* Whether a parameter may lead the kernel to memory hipkit cannot name: a
 * pointer to a struct or to a type hipkit does not know, either of which
 * may hold pointers. (Signatures refuse pointers to pointers; an address
 * stored in a buffer of integers is not seen: docs/early-start.md.) */
static int hides_pointers(const hkc_param *p)
{
    if (p->kind != HK_PARAM_POINTER)
        return 0;
    return p->opaque || strstr(p->type, "struct ") || strstr(p->type, "union ") || strstr(p->type, "class ");
}

/* HIPKIT_EARLY_START=0 turns early start off for the process: to time a
 * chain both ways, or to rule it out when a result looks wrong. */
static int early_allowed(void)
{
    static int allowed = -1;
    if (allowed < 0) {
        allowed = hkc_env_flag("HIPKIT_EARLY_START", 1);
    }
    return allowed;
}

void hkc_writes_note(hkc_kernel_writes *w, const void *stream, const hkc_signature *sig, const hk_arg *args,
                     int nargs)
{
    memset(w, 0, sizeof *w);
    w->valid = 1;
    w->stream = stream;
    if (!args) { /* a packed launch: its pointers are bytes */
        w->unknown = 1;
        return;
    }
    for (int i = 0; i < sig->count && i < nargs; i++) {
        const hkc_param *p = &sig->params[i];
        if (hides_pointers(p)) {
            w->unknown = 1;
            return;
        }
        if (p->kind != HK_PARAM_POINTER || p->is_const || args[i].kind != HK_ARG_BUFFER || !args[i].v.buf)
            continue;
        if (w->n == HKC_WRITES_MAX) {
            w->unknown = 1;
            return;
        }
        const hk_buffer *r = root_of(args[i].v.buf);
        w->lo[w->n] = (uintptr_t)r->kptr;
        w->hi[w->n] = (uintptr_t)r->kptr + r->bytes;
        w->n++;
    }
}

void hkc_writes_forget(hkc_kernel_writes *w)
{
    memset(w, 0, sizeof *w);
    w->valid = 1;
    w->unknown = 1;
}

int hkc_early_flags(hk_context *ctx, const char *kernel, const hkc_kernel_writes *prev, const void *stream,
                    const hk_launch_config *cfg, const hk_arg *args, int nargs, uint32_t *flags)
{
    *flags = cfg->flags;
    if (cfg->flags & ~HK_LAUNCH_EARLY_START)
        return hkc_fail(ctx, HK_EINVAL, "kernel %s: unknown launch flags 0x%x", kernel,
                        (unsigned)(cfg->flags & ~HK_LAUNCH_EARLY_START));
    if (!cfg->early_reads)
        ;
    else if (!(cfg->flags & HK_LAUNCH_EARLY_START))
        return hkc_fail(ctx, HK_EINVAL, "kernel %s: early_reads is set without HK_LAUNCH_EARLY_START", kernel);
    else if (!args)
        return hkc_fail(ctx, HK_EINVAL, "kernel %s: early_reads needs buffer arguments; a packed launch has none",
                        kernel);
    for (int i = 0; i < 32 && cfg->early_reads; i++) /* (every launch passes here) */
        if ((cfg->early_reads >> i & 1) && (i >= nargs || args[i].kind != HK_ARG_BUFFER || !args[i].v.buf))
            return hkc_fail(ctx, HK_EINVAL, "kernel %s: early_reads bit %d names argument %d, which is not a buffer",
                            kernel, i, i + 1);
    if (!(cfg->flags & HK_LAUNCH_EARLY_START))
        return 0;
    if (!early_allowed()) {
        *flags &= ~HK_LAUNCH_EARLY_START;
        return 0;
    }
    if (!prev->valid)
        return 0; /* nothing ran before it that hipkit knows of: nothing to overlap */
    if (prev->stream != stream) {
        *flags &= ~HK_LAUNCH_EARLY_START; /* the kernel before it is another stream's */
        return 0;
    }
    for (int i = 0; i < 32 && cfg->early_reads; i++) {
        if (!(cfg->early_reads >> i & 1))
            continue;
        const hk_buffer *r = root_of(args[i].v.buf);
        uintptr_t lo = (uintptr_t)r->kptr, hi = lo + r->bytes;
        /* a module's __device__ variable: its kernels write it unnamed */
        int clash = prev->unknown || r->borrowed;
        for (int j = 0; j < prev->n && !clash; j++)
            clash = hkc_ranges_meet(lo, hi - lo, prev->lo[j], prev->hi[j] - prev->lo[j]);
        if (clash) {
            *flags &= ~HK_LAUNCH_EARLY_START;
            return 0;
        }
    }
    return 0;
}
