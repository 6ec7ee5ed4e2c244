/* Streams and events between them (hk_stream_*, hk_launch_on, the _on
 * copies, hk_event_record_on, hk_stream_wait_event) against results worked
 * out here. Nothing depends on timing: where a check needs two streams to
 * run at once, a kernel waits for a flag that only the other stream's
 * kernel (or this program) sets, with a bound so a failure ends. Faults and
 * interrupts run on the host backend only (a GPU fault resets the context:
 * tests/gpu/test_gpu_faults.c). */
#include "testutil.h"

static hk_context *ctx;
static hk_kernel *k_add, *k_twice, *k_wait, *k_set, *k_fault, *k_gate;

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void add_one(float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] += 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void twice(float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= 2.0f;\n"
    "}\n"
    /* spins until *flag is set (at most `spins` reads), then writes what it
     * saw and marks done */
    "extern \"C\" __global__ void wait_flag(volatile int *flag, int *seen, long long spins) {\n"
    "  long long k = 0;\n"
    "  while (flag[0] == 0 && k < spins) k++;\n"
    "  seen[0] = flag[0];\n"
    "  seen[1] = 1;\n"
    "}\n"
    "extern \"C\" __global__ void set_flag(volatile int *flag) { flag[0] = 1; }\n"
    /* writes past p's n elements, into the guard page after them; a
     * barrier: the block runs as fibers, so a fault knows its thread */
    "extern \"C\" __global__ void fault(int *p, int n) { __syncthreads(); p[n + threadIdx.x] = 1; }\n"
    /* waits at a barrier until *flag is set: an interrupt's safe point */
    "extern \"C\" __global__ void gate(volatile int *flag) {\n"
    "  while (flag[0] == 0) __syncthreads();\n"
    "}\n";

static int msg_has(const char *s) { return strstr(hk_errmsg(ctx), s) != NULL; }

static hk_buffer *alloc(size_t n, hk_dtype t, hk_mem_mode mode)
{
    hk_buffer *b = NULL;
    if (hk_buffer_alloc(ctx, n, t, mode, &b) != 0)
        tap_diag("alloc: %s", hk_errmsg(ctx));
    return b;
}

static int zero_i32(hk_buffer *b)
{
    int z = 0;
    return hk_buffer_fill(b, &z);
}

static int launch1(hk_stream *s, hk_kernel *k, uint32_t grid, uint32_t block, const hk_arg *a, int n)
{
    hk_launch_config c = tu_cfg(grid, 1, 1, block, 1, 1, 0);
    int r = hk_launch_on(s, k, &c, a, n);
    if (r)
        tap_diag("launch: %s", hk_errmsg(ctx));
    return r;
}

/* Work on one stream runs in the order it was queued. */
static void test_order(void)
{
    const int n = 4099;
    float *x = malloc(n * 4), *y = malloc(n * 4);
    for (int i = 0; i < n; i++)
        x[i] = (float)(i % 1000);
    hk_stream *s = NULL;
    int r = hk_stream_create(ctx, &s);
    tap_ok(r == 0 && s, "hk_stream_create (%s)", r ? hk_errmsg(ctx) : "ok");
    if (r)
        return;
    tap_ok(hk_stream_device(s) == 0, "the stream is on the current device");
    hk_buffer *b = alloc(n, HK_F32, HK_MEM_DEVICE);
    hk_arg a[] = {hk_arg_buffer(b), hk_arg_int(n)};
    uint32_t g = (n + 255) / 256;
    r = hk_buffer_upload_on(s, b, 0, x, (size_t)n * 4);
    r = r ? r : launch1(s, k_add, g, 256, a, 2);
    r = r ? r : launch1(s, k_twice, g, 256, a, 2);
    r = r ? r : launch1(s, k_add, g, 256, a, 2);
    r = r ? r : hk_buffer_download_on(s, b, 0, y, (size_t)n * 4);
    int rs = hk_stream_synchronize(s);
    tap_ok(r == 0 && rs == 0, "upload, three launches and a download queue and run (%s)",
           r || rs ? hk_errmsg(ctx) : "ok");
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += y[i] != (x[i] + 1) * 2 + 1;
    tap_ok(!bad, "(x + 1) * 2 + 1 in queue order for %d elements (%d wrong)", n, bad);
    tap_ok(hk_stream_query(s) == 0, "query says 0 once the stream is idle");

    /* The default stream starts after the work queued on streams. */
    for (int i = 0; i < 8; i++)
        r |= launch1(s, k_twice, g, 256, a, 2);
    memset(y, 0, (size_t)n * 4);
    r |= hk_buffer_download(b, 0, y, (size_t)n * 4);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += y[i] != ((x[i] + 1) * 2 + 1) * 256;
    tap_ok(r == 0 && !bad, "a plain download after queued launches sees all of them (%d wrong)", bad);
    hk_buffer_free(b);
    hk_stream_destroy(s);
    free(x);
    free(y);
}

/* Two streams run at once: wait_flag on one returns only once set_flag on
 * the other has run (bounded: a serialising runtime ends with seen 0). */
static void test_concurrency(void)
{
    hk_stream *s1 = NULL, *s2 = NULL;
    hk_stream_create(ctx, &s1);
    hk_stream_create(ctx, &s2);
    hk_buffer *flag = alloc(1, HK_I32, HK_MEM_DEVICE), *seen = alloc(2, HK_I32, HK_MEM_DEVICE);
    int r = zero_i32(flag) | zero_i32(seen);
    hk_arg wa[] = {hk_arg_buffer(flag), hk_arg_buffer(seen), hk_arg_int(tu_on_host() ? 2000000000ll : 200000000ll)};
    hk_arg sa[] = {hk_arg_buffer(flag)};
    r |= launch1(s1, k_wait, 1, 1, wa, 3);
    r |= launch1(s2, k_set, 1, 1, sa, 1);
    r |= hk_stream_synchronize(s2);
    r |= hk_stream_synchronize(s1);
    int got[2] = {-1, -1};
    hk_buffer_download(seen, 0, got, sizeof got);
    tap_ok(r == 0 && got[0] == 1 && got[1] == 1,
           "a kernel on one stream sees a flag set by a kernel on another while it runs (seen %d)", got[0]);
    hk_buffer_free(flag);
    hk_buffer_free(seen);
    hk_stream_destroy(s1);
    hk_stream_destroy(s2);
}

/* s2 waits for an event s1 records behind a gate only this program opens:
 * until then s2 stays busy, after it s2 copies what s1 wrote. */
static void test_events(void)
{
    const int n = 1000;
    hk_stream *s1 = NULL, *s2 = NULL;
    hk_stream_create(ctx, &s1);
    hk_stream_create(ctx, &s2);
    hk_event *e = NULL, *e0 = NULL, *never = NULL;
    hk_event_create(ctx, &e);
    hk_event_create(ctx, &e0);
    hk_event_create(ctx, &never);
    hk_buffer *gate = alloc(1, HK_I32, HK_MEM_HOST), *seen = alloc(2, HK_I32, HK_MEM_DEVICE);
    hk_buffer *a = alloc(n, HK_F32, HK_MEM_DEVICE), *b = alloc(n, HK_F32, HK_MEM_DEVICE);
    float zero = 0;
    int r = zero_i32(gate) | zero_i32(seen) | hk_buffer_fill(a, &zero) | hk_buffer_fill(b, &zero);
    hk_arg wa[] = {hk_arg_buffer(gate), hk_arg_buffer(seen), hk_arg_int(tu_on_host() ? 4000000000ll : 20000000ll)};
    hk_arg aa[] = {hk_arg_buffer(a), hk_arg_int(n)};
    r |= hk_stream_wait_event(s2, never); /* never recorded: no wait */
    r |= hk_event_record_on(e0, s1);
    r |= launch1(s1, k_wait, 1, 1, wa, 3);
    r |= launch1(s1, k_add, (n + 127) / 128, 128, aa, 2);
    r |= hk_event_record_on(e, s1);
    r |= hk_stream_wait_event(s2, e);
    r |= hk_buffer_copy_on(s2, b, 0, a, 0, (size_t)n * 4);
    tap_ok(r == 0, "records, waits and copies queue (%s)", r ? hk_errmsg(ctx) : "ok");
    /* Nothing on s2 can finish before the gate opens. */
    int busy = hk_stream_query(s2);
    tap_ok(busy == 1, "s2 is busy while the event it waits for is behind a closed gate (query %d)", busy);
    int one = 1;
    *(volatile int *)hk_buffer_host_ptr(gate) = one;
    r = hk_stream_synchronize(s2);
    float *y = malloc((size_t)n * 4);
    hk_buffer_download(b, 0, y, (size_t)n * 4);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += y[i] != 1.0f;
    tap_ok(r == 0 && !bad, "after the gate s2's copy has what s1 wrote before the event (%d wrong)", bad);
    r = hk_event_synchronize(e);
    double ms = -1;
    int re = hk_event_elapsed_ms(e0, e, &ms);
    tap_ok(r == 0 && re == 0 && ms >= 0, "events recorded on a stream synchronize and time (%.3f ms)", ms);
    tap_ok(hk_stream_synchronize(s1) == 0 && hk_stream_query(s1) == 0, "s1 is idle after its event");
    free(y);
    hk_buffer_free(gate);
    hk_buffer_free(seen);
    hk_buffer_free(a);
    hk_buffer_free(b);
    hk_event_destroy(e);
    hk_event_destroy(e0);
    hk_event_destroy(never);
    hk_stream_destroy(s1);
    hk_stream_destroy(s2);
}

/* Copies on a stream: host-mode (pinned) <-> device, device <-> device,
 * plain memory in and out; and the checks that come before the queue. */
static void test_copies(void)
{
    const int n = 3001;
    hk_stream *s = NULL;
    hk_stream_create(ctx, &s);
    hk_buffer *pin = alloc(n, HK_F32, HK_MEM_HOST), *pin2 = alloc(n, HK_F32, HK_MEM_HOST);
    hk_buffer *d = alloc(n, HK_F32, HK_MEM_DEVICE), *d2 = alloc(n, HK_F32, HK_MEM_DEVICE);
    float *p = hk_buffer_host_ptr(pin), *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
    for (int i = 0; i < n; i++) {
        p[i] = tu_uniform(-100, 100);
        x[i] = tu_uniform(-100, 100);
    }
    size_t bytes = (size_t)n * 4;
    hk_arg a[] = {hk_arg_buffer(d), hk_arg_int(n)};
    int r = hk_buffer_copy_on(s, d, 0, pin, 0, bytes);            /* host -> device */
    r = r ? r : launch1(s, k_add, (n + 255) / 256, 256, a, 2);
    r = r ? r : hk_buffer_copy_on(s, d2, 0, d, 0, bytes);         /* device -> device */
    r = r ? r : hk_buffer_copy_on(s, pin2, 0, d2, 0, bytes);      /* device -> host */
    r = r ? r : hk_buffer_upload_on(s, d, 4, x, bytes - 4);      /* plain memory in */
    r = r ? r : hk_buffer_download_on(s, d, 0, y, bytes);        /* and out */
    int rs = hk_stream_synchronize(s);
    tap_ok(r == 0 && rs == 0, "pinned, device and plain copies queue and run (%s)", r || rs ? hk_errmsg(ctx) : "ok");
    const float *q = hk_buffer_host_ptr(pin2);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += q[i] != p[i] + 1;
    tap_ok(!bad, "host -> device -> device -> host around a launch (%d wrong)", bad);
    bad = y[0] != p[0] + 1;
    for (int i = 1; i < n; i++)
        bad += y[i] != x[i - 1];
    tap_ok(!bad, "an upload at an offset and a download of plain memory (%d wrong)", bad);
    r = hk_buffer_copy_on(s, d, 0, d, 4, bytes - 4);
    tap_ok(r == HK_EINVAL && msg_has("overlap"), "overlapping ranges of one buffer are refused on a stream");
    r = hk_buffer_upload_on(s, d, 8, x, bytes);
    tap_ok(r == HK_EINVAL && msg_has("hk_buffer_upload_on") && msg_has("outside"),
           "a range past the end is refused before it is queued");
    tap_ok(hk_stream_synchronize(s) == 0, "refused copies leave no error on the stream");
    r = hk_buffer_copy_on(NULL, d2, 0, pin, 0, bytes);
    q = hk_buffer_host_ptr(pin);
    hk_buffer_download(d2, 0, y, bytes);
    tap_ok(r == 0 && memcmp(y, q, bytes) == 0, "a NULL stream copies on the default stream");
    free(x);
    free(y);
    hk_buffer_free(pin);
    hk_buffer_free(pin2);
    hk_buffer_free(d);
    hk_buffer_free(d2);
    hk_stream_destroy(s);
}

/* Freeing a buffer waits for the queued work that uses it. */
static void test_free_waits(void)
{
    hk_stream *s = NULL;
    hk_stream_create(ctx, &s);
    hk_buffer *flag = alloc(1, HK_I32, HK_MEM_DEVICE), *seen = alloc(2, HK_I32, HK_MEM_HOST);
    int r = zero_i32(flag) | zero_i32(seen);
    hk_arg wa[] = {hk_arg_buffer(flag), hk_arg_buffer(seen), hk_arg_int(tu_on_host() ? 5000000ll : 200000ll)};
    r |= launch1(s, k_wait, 1, 1, wa, 3);
    r |= hk_buffer_free(flag); /* the kernel still spins on it */
    const volatile int *sp = hk_buffer_host_ptr(seen);
    tap_ok(r == 0 && sp[1] == 1, "hk_buffer_free waits for the queued launch using the buffer (done %d)", sp[1]);
    tap_ok(hk_stream_synchronize(s) == 0, "the stream's work ran without an error");
    hk_buffer_free(seen);
    hk_stream_destroy(s);
}

/* A fault in a queued launch surfaces at the next sync of its stream, with
 * the kernel, block and thread; what was queued behind it is dropped. */
static void test_fault(void)
{
    hk_stream *s = NULL;
    hk_stream_create(ctx, &s);
    hk_buffer *b = alloc(64, HK_F32, HK_MEM_DEVICE), *small = alloc(1024, HK_I32, HK_MEM_DEVICE);
    float zero = 0;
    hk_buffer_fill(b, &zero);
    hk_arg fa[] = {hk_arg_buffer(small), hk_arg_int(1024)};
    hk_arg aa[] = {hk_arg_buffer(b), hk_arg_int(64)};
    int r = launch1(s, k_fault, 2, 4, fa, 2);
    r |= launch1(s, k_add, 1, 64, aa, 2);
    tap_ok(r == 0, "a launch that will fault queues without an error");
    r = hk_stream_synchronize(s);
    tap_ok(r == HK_EFAULT && msg_has("kernel fault faulted") && msg_has("past the end") &&
               msg_has("block (") && msg_has("thread (") && msg_has("dropped"),
           "the stream's sync returns the fault with kernel, block and thread: %s", hk_errmsg(ctx));
    float v = -1;
    hk_buffer_download(b, 0, &v, 4);
    tap_ok(v == 0, "the launch queued behind the fault did not run");
    tap_ok(hk_stream_synchronize(s) == 0, "the error is returned once");
    r = launch1(s, k_add, 1, 64, aa, 2);
    r |= hk_stream_synchronize(s);
    hk_buffer_download(b, 0, &v, 4);
    tap_ok(r == 0 && v == 1, "the stream runs new work after the error");
    /* hk_synchronize waits for every stream and reports their errors */
    r = launch1(s, k_fault, 1, 1, fa, 2);
    r |= hk_synchronize(ctx) != HK_EFAULT;
    tap_ok(r == 0 && msg_has("fault"), "hk_synchronize reports a stream's fault");
    tap_ok(hk_stream_query(s) == 0, "and takes it from the stream");
    hk_buffer_free(b);
    hk_buffer_free(small);
    hk_stream_destroy(s);
}

/* hk_interrupt stops a queued launch; its sync says so. */
static void test_interrupt(void)
{
    hk_stream *s = NULL;
    hk_stream_create(ctx, &s);
    hk_buffer *flag = alloc(1, HK_I32, HK_MEM_DEVICE);
    zero_i32(flag);
    hk_arg ga[] = {hk_arg_buffer(flag)};
    int r = launch1(s, k_gate, 1, 32, ga, 1);
    tap_ok(r == 0 && hk_stream_query(s) == 1, "a kernel that waits forever is queued and running");
    hk_interrupt();
    r = hk_stream_synchronize(s);
    hk_interrupt_reset();
    tap_ok(r == HK_EINTR && msg_has("gate") && msg_has("interrupted"),
           "hk_interrupt stops it; the stream's sync says so: %s", hk_errmsg(ctx));
    hk_buffer *seen = alloc(2, HK_I32, HK_MEM_DEVICE);
    zero_i32(seen);
    int one = 1;
    hk_buffer_upload(flag, 0, &one, 4);
    hk_arg wa[] = {hk_arg_buffer(flag), hk_arg_buffer(seen), hk_arg_int(1)};
    r = launch1(s, k_wait, 1, 1, wa, 3) | hk_stream_synchronize(s);
    int got[2] = {0, 0};
    hk_buffer_download(seen, 0, got, sizeof got);
    tap_ok(r == 0 && got[1] == 1, "after hk_interrupt_reset the stream runs work again");
    hk_buffer_free(flag);
    hk_buffer_free(seen);
    hk_stream_destroy(s);
}

int main(void)
{
    tap_init();
    tu_seed();
    if (!tu_have_cxx()) {
        tap_skip("streams", "no C++ compiler for the host backend");
        return tap_done();
    }
    ctx = tu_context();
    hk_module *m = NULL;
    k_add = tu_kernel(ctx, &m, src, "add_one");
    if (!tap_ok(k_add != NULL, "the test kernels compile"))
        return tap_done();
    hk_module_kernel(m, "twice", &k_twice);
    hk_module_kernel(m, "wait_flag", &k_wait);
    hk_module_kernel(m, "set_flag", &k_set);
    hk_module_kernel(m, "fault", &k_fault);
    hk_module_kernel(m, "gate", &k_gate);
    test_order();
    test_concurrency();
    test_events();
    test_copies();
    test_free_waits();
    if (tu_on_host()) {
        test_fault();
        test_interrupt();
    } else {
        tap_skip("a fault in a queued launch", "a GPU fault resets the context (tests/gpu/test_gpu_faults.c)");
        tap_skip("an interrupted queued launch", "a GPU kernel cannot be stopped");
    }
    hk_stream *left = NULL;
    hk_stream_create(ctx, &left); /* hk_context_destroy ends it */
    hk_module_free(m);
    int qr = hk_stream_query(left);
    hk_context_destroy(ctx);
    tap_ok(qr == 0, "a stream left open is idle, and hk_context_destroy ends it (ASan, valgrind: no leak)");
    return tap_done();
}
