/* The reduce family on the CPU backend next to plain C loops doing the same
 * work on the same number of threads (issue 13: >= 0.7x for the
 * reductions). Row sum, max and argmax of a rows x cols f32 matrix and the
 * sum of a whole buffer, random data, median of 7 after a warm-up; every
 * result checked against the C loop's.
 *   bench-reduce-host [rows cols [n]]
 * The worker count is the host backend's (HIPKIT_HOST_THREADS, default:
 * the online CPUs); the C loops use as many pthreads, rows split evenly,
 * each a -O2 loop over its rows. */
#include <hipkit/hipkit.h>

#include "bench_util.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPS 7

static hk_context *ctx;

static void die(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, hk_errmsg(ctx));
    exit(1);
}

typedef enum { OP_SUM, OP_MAX, OP_ARGMAX } op_kind;

typedef struct {
    const float *x;
    size_t rows, cols, r0, r1;
    op_kind op;
    float *out;
    long long *idx;
} c_job;

/* The plain loops: one row at a time, as one would write them. */
static void *c_rows(void *p)
{
    c_job *j = p;
    for (size_t r = j->r0; r < j->r1; r++) {
        const float *row = j->x + r * j->cols;
        if (j->op == OP_SUM) {
            float s = 0;
            for (size_t c = 0; c < j->cols; c++)
                s += row[c];
            j->out[r] = s;
        } else {
            float m = row[0];
            size_t at = 0;
            for (size_t c = 1; c < j->cols; c++)
                if (row[c] > m) {
                    m = row[c];
                    at = c;
                }
            if (j->op == OP_MAX)
                j->out[r] = m;
            else
                j->idx[r] = (long long)at;
        }
    }
    return NULL;
}

static double c_time(int threads, c_job base)
{
    pthread_t th[64];
    c_job jobs[64];
    double t0 = now_us();
    for (int i = 0; i < threads; i++) {
        jobs[i] = base;
        jobs[i].r0 = base.rows * (size_t)i / (size_t)threads;
        jobs[i].r1 = base.rows * (size_t)(i + 1) / (size_t)threads;
        pthread_create(&th[i], NULL, c_rows, &jobs[i]);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    return now_us() - t0;
}

static double op_time(const char *op, hk_arg *args, int nargs)
{
    double t0 = now_us();
    if (hk_plugin_call_op(ctx, "reduce", op, args, nargs) || hk_synchronize(ctx))
        die(op);
    return now_us() - t0;
}

static int workers(void)
{
    const char *env = getenv("HIPKIT_HOST_THREADS");
    long n = env ? atol(env) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

int main(int argc, char **argv)
{
    size_t rows = argc > 2 ? strtoul(argv[1], NULL, 10) : 4096;
    size_t cols = argc > 2 ? strtoul(argv[2], NULL, 10) : 4096;
    size_t n1 = argc > 3 ? strtoul(argv[3], NULL, 10) : (size_t)1 << 26;
    hk_context_options o;
    hk_context_options_defaults(&o);
    o.backend = "host";
    if (hk_context_create(&o, &ctx))
        die("context");
    hk_buffer *x, *out, *idx, *whole, *one;
    if (hk_buffer_alloc(ctx, rows * cols, HK_F32, HK_MEM_DEVICE, &x) ||
        hk_buffer_alloc(ctx, rows, HK_F32, HK_MEM_DEVICE, &out) ||
        hk_buffer_alloc(ctx, rows, HK_I64, HK_MEM_DEVICE, &idx) ||
        hk_buffer_alloc(ctx, n1, HK_F32, HK_MEM_DEVICE, &whole) ||
        hk_buffer_alloc(ctx, 1, HK_F32, HK_MEM_DEVICE, &one))
        die("alloc");
    float *xv = hk_buffer_host_ptr(x), *wv = hk_buffer_host_ptr(whole);
    srand(7);
    for (size_t i = 0; i < rows * cols; i++)
        xv[i] = (float)rand() / RAND_MAX * 4 - 2;
    for (size_t i = 0; i < n1; i++)
        wv[i] = (float)rand() / RAND_MAX * 2 - 1;
    float *ref = malloc(rows * sizeof *ref);
    long long *refi = malloc(rows * sizeof *refi);
    int threads = workers();
    printf("reduce on the CPU backend, %zu x %zu f32 rows and %zu f32 whole, %d threads\n", rows, cols, n1,
           threads);
    printf("  %-10s %10s %9s   %10s %9s   %s\n", "op", "hipkit ms", "GB/s", "C loop ms", "GB/s", "hipkit / C");
    static const char *const names[] = {"sum", "max", "argmax"};
    for (int op = OP_SUM; op <= OP_ARGMAX; op++) {
        hk_arg args[3] = {hk_arg_buffer(op == OP_ARGMAX ? idx : out), hk_arg_buffer(x),
                          hk_arg_int((long long)cols)};
        c_job job = {xv, rows, cols, 0, 0, (op_kind)op, ref, refi};
        double th[REPS], tc[REPS];
        op_time(names[op], args, 3);
        c_time(threads, job);
        for (int r = 0; r < REPS; r++) {
            th[r] = op_time(names[op], args, 3);
            tc[r] = c_time(threads, job);
        }
        int bad = 0;
        for (size_t r = 0; r < rows; r++) {
            if (op == OP_ARGMAX)
                bad += ((long long *)hk_buffer_host_ptr(idx))[r] != refi[r];
            else
                bad += fabsf(((float *)hk_buffer_host_ptr(out))[r] - ref[r]) > 1e-3f * (1 + fabsf(ref[r]));
        }
        double bytes = 4.0 * rows * cols, mh = median(th, REPS), mc = median(tc, REPS);
        printf("  %-10s %10.3f %9.2f   %10.3f %9.2f   %.2fx%s\n", names[op], mh / 1e3, bytes / mh / 1e3,
               mc / 1e3, bytes / mc / 1e3, mc / mh, bad ? "  WRONG RESULT" : "");
    }
    /* the whole buffer: n1 split over the threads as rows of n1 / threads */
    hk_arg wargs[2] = {hk_arg_buffer(one), hk_arg_buffer(whole)};
    float part[64];
    c_job job = {wv, (size_t)threads, n1 / (size_t)threads, 0, 0, OP_SUM, part, NULL};
    double th[REPS], tc[REPS];
    op_time("sum", wargs, 2);
    for (int r = 0; r < REPS; r++) {
        th[r] = op_time("sum", wargs, 2);
        tc[r] = c_time(threads, job);
    }
    double total = 0;
    for (int i = 0; i < threads; i++)
        total += part[i];
    for (size_t i = n1 / (size_t)threads * (size_t)threads; i < n1; i++)
        total += wv[i];
    float got = *(float *)hk_buffer_host_ptr(one);
    double bytes = 4.0 * n1, mh = median(th, REPS), mc = median(tc, REPS);
    printf("  %-10s %10.3f %9.2f   %10.3f %9.2f   %.2fx%s\n", "sum (all)", mh / 1e3, bytes / mh / 1e3, mc / 1e3,
           bytes / mc / 1e3, mc / mh, fabs(got - total) > 1e-3 * (1 + fabs(total)) ? "  WRONG RESULT" : "");
    hk_buffer_free(x);
    hk_buffer_free(out);
    hk_buffer_free(idx);
    hk_buffer_free(whole);
    hk_buffer_free(one);
    free(ref);
    free(refi);
    hk_context_destroy(ctx);
    return 0;
}
