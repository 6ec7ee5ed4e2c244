/* A fixed pool of OS threads that run one job at a time together with the
 * calling thread. */
#ifndef HKC_HOST_POOL_H
#define HKC_HOST_POOL_H

typedef struct hkc_host_pool hkc_host_pool;

/* nthreads counts the caller: nthreads - 1 workers are started. Each worker
 * calls thread_exit (if not NULL) before it ends. Returns NULL on failure. */
hkc_host_pool *hkc_host_pool_create(int nthreads, void (*thread_exit)(void));
void hkc_host_pool_destroy(hkc_host_pool *p);
int hkc_host_pool_size(const hkc_host_pool *p);
/* Runs fn(arg) on the caller and on up to `want - 1` workers at once and
 * returns when every one of them has returned. fn divides the work itself. */
void hkc_host_pool_run(hkc_host_pool *p, void (*fn)(void *), void *arg, int want);
/* As hkc_host_pool_run when no other caller holds the pool; else returns -1
 * at once without running fn (a stream thread then runs it alone). One
 * caller at a time holds the pool: hkc_host_pool_run waits for it. */
int hkc_host_pool_try_run(hkc_host_pool *p, void (*fn)(void *), void *arg, int want);

#endif
