/* The thread pool behind multi-block launches. Workers sleep on a condition
 * variable between jobs; a job is a function every participating thread
 * calls, which pulls blocks from a shared counter. */
#include "host_pool.h"

#include <pthread.h>
#include <stdlib.h>

struct hkc_host_pool {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    pthread_t *threads;
    int nworkers;
    unsigned long generation; /* bumped per job */
    int quit;
    void (*fn)(void *);
    void *arg;
    int want;    /* workers asked to join the current job */
    int joined;  /* workers that took the current job */
    int running; /* workers still inside fn */
    int busy;    /* a caller holds the pool (stream threads launch too) */
    pthread_cond_t freed;
    void (*thread_exit)(void);
};

static void *worker_main(void *vp)
{
    hkc_host_pool *p = vp;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->quit && (p->generation == seen || p->joined >= p->want))
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->quit)
            break;
        seen = p->generation;
        p->joined++;
        p->running++;
        void (*fn)(void *) = p->fn;
        void *arg = p->arg;
        pthread_mutex_unlock(&p->lock);
        fn(arg);
        pthread_mutex_lock(&p->lock);
        if (--p->running == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    if (p->thread_exit)
        p->thread_exit();
    return NULL;
}

hkc_host_pool *hkc_host_pool_create(int nthreads, void (*thread_exit)(void))
{
    hkc_host_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->thread_exit = thread_exit;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    pthread_cond_init(&p->freed, NULL);
    int n = nthreads > 1 ? nthreads - 1 : 0;
    p->threads = calloc(n ? (size_t)n : 1, sizeof *p->threads);
    if (!p->threads) {
        free(p);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0)
            break;
        p->nworkers++;
    }
    return p;
}

void hkc_host_pool_destroy(hkc_host_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->quit = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nworkers; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->freed);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    free(p);
}

int hkc_host_pool_size(const hkc_host_pool *p) { return p->nworkers + 1; }

/* Runs a job on a pool the caller holds (busy set). */
static void run_held(hkc_host_pool *p, void (*fn)(void *), void *arg, int workers)
{
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->arg = arg;
    p->want = workers;
    p->joined = 0;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    fn(arg);
    /* A worker that has not yet woken may still join: wait until every
     * worker asked has taken the job and left it. */
    pthread_mutex_lock(&p->lock);
    while (p->joined < p->want || p->running > 0)
        pthread_cond_wait(&p->done, &p->lock);
    p->want = 0;
    p->busy = 0;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

void hkc_host_pool_run(hkc_host_pool *p, void (*fn)(void *), void *arg, int want)
{
    int workers = want - 1 < p->nworkers ? want - 1 : p->nworkers;
    if (workers <= 0) {
        fn(arg);
        return;
    }
    pthread_mutex_lock(&p->lock);
    while (p->busy)
        pthread_cond_wait(&p->freed, &p->lock);
    p->busy = 1;
    pthread_mutex_unlock(&p->lock);
    run_held(p, fn, arg, workers);
}

int hkc_host_pool_try_run(hkc_host_pool *p, void (*fn)(void *), void *arg, int want)
{
    int workers = want - 1 < p->nworkers ? want - 1 : p->nworkers;
    if (workers <= 0) {
        fn(arg);
        return 0;
    }
    pthread_mutex_lock(&p->lock);
    int taken = p->busy;
    p->busy = 1;
    pthread_mutex_unlock(&p->lock);
    if (taken)
        return -1;
    run_held(p, fn, arg, workers);
    return 0;
}
