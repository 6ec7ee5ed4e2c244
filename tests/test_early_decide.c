/* Early start's decision (launch_early.c): a launch asking for
 * HK_LAUNCH_EARLY_START keeps it only where the buffers it reads before
 * hk_grid_wait() cannot be written by the kernel before it on the same
 * stream; malformed requests are errors naming the argument. Buffers here
 * are bare structs: only their addresses and sizes matter. */
#include <string.h>

#include "internal.h"
#include "tap.h"

static hkc_signature sig_of(const char *text)
{
    hkc_signature s;
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    memset(&s, 0, sizeof s);
    if (hkc_signature_parse(text, &s, &err) != 0)
        tap_diag("parse %s: %s", text, err.data);
    hkc_strbuf_free(&err);
    return s;
}

static hk_buffer buffer_at(uintptr_t addr, size_t bytes)
{
    hk_buffer b;
    memset(&b, 0, sizeof b);
    b.kptr = (void *)addr;
    b.bytes = bytes;
    b.count = bytes / 4;
    b.dtype = HK_F32;
    return b;
}

/* the flags a launch reading `early` (bit mask over args) gets after prev */
static uint32_t decide(const hkc_kernel_writes *prev, const void *stream, const hk_arg *args, int nargs,
                       uint32_t early, int *rc)
{
    hk_launch_config cfg = {{1, 1, 1}, {64, 1, 1}, 0, HK_LAUNCH_EARLY_START, early};
    uint32_t flags = 0xdead;
    *rc = hkc_early_flags(NULL, "k", prev, stream, &cfg, args, nargs, &flags);
    return flags;
}

int main(void)
{
    tap_init();
    /* kernel before: writes y (non-const), reads x (const) */
    hkc_signature before = sig_of("float *y, const float *x, int n");
    hk_buffer w = buffer_at(0x100000, 4096), x = buffer_at(0x200000, 4096), y = buffer_at(0x300000, 4096);
    hk_buffer yview = buffer_at(0x300800, 1024), wview = buffer_at(0x100400, 256);
    yview.parent = &y;
    wview.parent = &w;
    hk_arg prev_args[] = {hk_arg_buffer(&y), hk_arg_buffer(&x), hk_arg_int(1024)};
    hkc_kernel_writes prev;
    hkc_writes_note(&prev, NULL, &before, prev_args, 3);
    tap_ok(prev.valid && !prev.unknown && prev.n == 1 && prev.lo[0] == 0x300000 && prev.hi[0] == 0x301000,
           "the kernel before may write y's allocation only (x is const)");

    int rc;
    hk_arg mv_w[] = {hk_arg_buffer(&w), hk_arg_buffer(&x), hk_arg_buffer(&y)};
    tap_ok(decide(&prev, NULL, mv_w, 3, 1u, &rc) == HK_LAUNCH_EARLY_START && rc == 0,
           "reading w early after a kernel that wrote y: early start kept");
    hk_arg mv_y[] = {hk_arg_buffer(&y), hk_arg_buffer(&x), hk_arg_buffer(&w)};
    tap_ok(decide(&prev, NULL, mv_y, 3, 1u, &rc) == 0 && rc == 0,
           "reading y early after a kernel that wrote y: early start dropped");
    hk_arg mv_view[] = {hk_arg_buffer(&yview), hk_arg_buffer(&x), hk_arg_buffer(&w)};
    tap_ok(decide(&prev, NULL, mv_view, 3, 1u, &rc) == 0 && rc == 0,
           "reading a view of y early: dropped (a view shares its parent's memory)");
    tap_ok(decide(&prev, NULL, mv_y, 3, 2u, &rc) == HK_LAUNCH_EARLY_START && rc == 0,
           "reading only x early (const before): kept, whatever the later arguments are");
    tap_ok(decide(&prev, NULL, mv_y, 3, 0u, &rc) == HK_LAUNCH_EARLY_START && rc == 0,
           "reading nothing early: kept");
    int other_stream;
    tap_ok(decide(&prev, &other_stream, mv_w, 3, 1u, &rc) == 0 && rc == 0,
           "the kernel before ran on another stream: dropped");

    /* the kernel before wrote through a view of w: w's whole allocation */
    hk_arg via_view[] = {hk_arg_buffer(&wview), hk_arg_buffer(&x), hk_arg_int(64)};
    hkc_kernel_writes pv;
    hkc_writes_note(&pv, NULL, &before, via_view, 3);
    tap_ok(decide(&pv, NULL, mv_w, 3, 1u, &rc) == 0, "the kernel before wrote a view of w: reading w early dropped");

    hkc_kernel_writes packed;
    hkc_writes_note(&packed, NULL, &before, NULL, 0);
    tap_ok(packed.unknown && decide(&packed, NULL, mv_w, 3, 1u, &rc) == 0,
           "the kernel before was launched packed (its pointers unknown): dropped");
    tap_ok(decide(&packed, NULL, mv_w, 3, 0u, &rc) == HK_LAUNCH_EARLY_START,
           "... but a kernel that reads nothing early still starts early");

    static const char *const hiding[] = {"struct Params *p, const float *x", "const Params *p, const float *x",
                                         "class C *p, const float *x", "const union U *p, const float *x"};
    for (int i = 0; i < 4; i++) {
        hkc_signature opaque = sig_of(hiding[i]);
        hk_arg op_args[] = {hk_arg_buffer(&y), hk_arg_buffer(&x)};
        hkc_kernel_writes po;
        hkc_writes_note(&po, NULL, &opaque, op_args, 2);
        tap_ok(po.unknown, "a kernel taking (%s) may write anything", hiding[i]);
        hkc_signature_free(&opaque);
    }

    hkc_signature many = sig_of("float *a, float *b, float *c, float *d, float *e, float *f, float *g, float *h, "
                                "float *i");
    hk_buffer bufs[9];
    hk_arg many_args[9];
    for (int i = 0; i < 9; i++) {
        bufs[i] = buffer_at(0x1000000 + 0x10000 * (uintptr_t)i, 4096);
        many_args[i] = hk_arg_buffer(&bufs[i]);
    }
    hkc_kernel_writes pm;
    hkc_writes_note(&pm, NULL, &many, many_args, 9);
    tap_ok(pm.unknown, "more written buffers than the record holds: unknown");
    hkc_writes_note(&pm, NULL, &many, many_args, 8);
    tap_ok(!pm.unknown && pm.n == 8 && decide(&pm, NULL, mv_w, 3, 1u, &rc) == HK_LAUNCH_EARLY_START,
           "eight written buffers, none of them w: kept");

    hk_buffer var = buffer_at(0x5000000, 4);
    var.borrowed = 1; /* a module's __device__ variable (hk_module_global) */
    hk_arg mv_var[] = {hk_arg_buffer(&var), hk_arg_buffer(&x), hk_arg_buffer(&y)};
    tap_ok(decide(&prev, NULL, mv_var, 3, 1u, &rc) == 0 && rc == 0,
           "reading a module variable early: dropped (its module's kernels write it unnamed)");

    hkc_kernel_writes none;
    memset(&none, 0, sizeof none);
    tap_ok(decide(&none, NULL, mv_y, 3, 1u, &rc) == HK_LAUNCH_EARLY_START, "no kernel before: kept");
    hkc_writes_forget(&none);
    tap_ok(decide(&none, NULL, mv_w, 3, 1u, &rc) == 0, "after a graph replay (forgotten): dropped");

    /* malformed requests */
    hk_arg mixed[] = {hk_arg_buffer(&w), hk_arg_int(3)};
    decide(&prev, NULL, mixed, 2, 2u, &rc);
    tap_ok(rc == HK_EINVAL && strstr(hk_errmsg(NULL), "bit 1 names argument 2, which is not a buffer"),
           "early_reads naming an integer argument: HK_EINVAL naming it (%s)", hk_errmsg(NULL));
    decide(&prev, NULL, mixed, 2, 1u << 5, &rc);
    tap_ok(rc == HK_EINVAL && strstr(hk_errmsg(NULL), "argument 6"), "early_reads past the arguments: HK_EINVAL");
    hk_launch_config cfg = {{1, 1, 1}, {64, 1, 1}, 0, 0, 1u};
    uint32_t fl;
    rc = hkc_early_flags(NULL, "k", &prev, NULL, &cfg, mv_w, 3, &fl);
    tap_ok(rc == HK_EINVAL && strstr(hk_errmsg(NULL), "without HK_LAUNCH_EARLY_START"),
           "early_reads without the flag: HK_EINVAL");
    cfg.flags = 0x10;
    cfg.early_reads = 0;
    rc = hkc_early_flags(NULL, "k", &prev, NULL, &cfg, mv_w, 3, &fl);
    tap_ok(rc == HK_EINVAL && strstr(hk_errmsg(NULL), "unknown launch flags 0x10"), "an unknown flag: HK_EINVAL");
    cfg.flags = HK_LAUNCH_EARLY_START;
    cfg.early_reads = 1;
    rc = hkc_early_flags(NULL, "k", &prev, NULL, &cfg, NULL, 0, &fl);
    tap_ok(rc == HK_EINVAL && strstr(hk_errmsg(NULL), "packed launch"), "early_reads on a packed launch: HK_EINVAL");
    cfg.flags = 0;
    cfg.early_reads = 0;
    rc = hkc_early_flags(NULL, "k", &prev, NULL, &cfg, mv_y, 3, &fl);
    tap_ok(rc == 0 && fl == 0, "no flags: nothing to decide");

    hkc_signature_free(&before);
    hkc_signature_free(&many);
    return tap_done();
}
