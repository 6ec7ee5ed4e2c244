/* The CPU backend's buffers: host memory between guard pages, so that an
 * overrun faults at once and the fault names the buffer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host_backend.h"
#include "host_fault.h"

/* ---------------------------------------------------------------- memory */

/* Start of the data is 64-byte aligned (the widest vector load) and its end
 * as close to the trailing guard page as that allows, so an overrun faults at
 * once; at most 63 bytes past the end go unnoticed. */
#define DATA_ALIGN 64

/* Checked mode (HIPKIT_CHECK=1): the bytes of a buffer's mapping that are
 * not its data (the alignment slack after its end, the start of its first
 * page before it) hold a canary, verified after every launch. Guard pages
 * catch an access at once from a page beyond the data; the canary catches
 * the writes nearer than that, which would otherwise pass silently. */
#define CANARY 0xfd

int hkc_host_checked(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("HIPKIT_CHECK");
        on = e && *e && strcmp(e, "0") != 0;
    }
    return on;
}

/* The spans of a's pages around its buffer's data. */
static void slack(const host_alloc *a, size_t page, unsigned char **lo, size_t *nlo,
                  unsigned char **hi, size_t *nhi)
{
    unsigned char *first = (unsigned char *)a->region + page;
    unsigned char *end = (unsigned char *)a->region + a->region_bytes - page;
    unsigned char *data = a->b->hptr;
    *lo = first;
    *nlo = (size_t)(data - first);
    *hi = data + a->b->bytes;
    *nhi = (size_t)(end - *hi);
}

/* Bytes from the first changed one to the last, in n bytes at p. The
 * common answer (none) comes from memcmp against canaries, a vectorised
 * compare: the check runs after every launch. */
static size_t changed(const unsigned char *p, size_t n, size_t *first)
{
    static const unsigned char ref[1024] = {[0 ... 1023] = CANARY};
    size_t same = 0;
    while (same < n) {
        size_t m = n - same < sizeof ref ? n - same : sizeof ref;
        if (memcmp(p + same, ref, m))
            break;
        same += m;
    }
    if (same == n) {
        *first = n;
        return 0;
    }
    size_t lo = n, hi = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] != CANARY) {
            lo = i < lo ? i : lo;
            hi = i + 1;
        }
    *first = lo;
    return lo < n ? hi - lo : 0;
}

static int check_canaries(host_impl *h, char *msg, size_t cap)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int bad = 0;
    for (host_alloc *a = h->allocs; a; a = a->next) {
        unsigned char *lo, *hi;
        size_t nlo, nhi, at;
        slack(a, page, &lo, &nlo, &hi, &nhi);
        size_t under = changed(lo, nlo, &at), under_at = nlo - at;
        size_t over = changed(hi, nhi, &at), over_at = at;
        if ((under || over) && !bad) {
            snprintf(msg, cap, "it wrote %zu byte%s %s a buffer of %zu %s (%zu byte%s %s it; "
                     "HIPKIT_CHECK)", under ? under : over, (under ? under : over) == 1 ? "" : "s",
                     under ? "before the start of" : "past the end of", a->b->count,
                     hk_dtype_name(a->b->dtype), under ? under_at : over_at,
                     (under ? under_at : over_at) == 1 ? "" : "s", under ? "before" : "past");
            bad = 1;
        }
        if (under || over) { /* armed again for the next launch */
            memset(lo, CANARY, nlo);
            memset(hi, CANARY, nhi);
        }
    }
    return bad;
}

int hkc_host_buf_alloc(hk_buffer *b)
{
    host_impl *h = b->dev->be->impl;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data = (b->bytes + DATA_ALIGN - 1) / DATA_ALIGN * DATA_ALIGN;
    size_t data_pages = (data + page - 1) / page * page;
    if (!data_pages)
        data_pages = page;
    size_t total = data_pages + 2 * page;
    host_alloc *a = calloc(1, sizeof *a);
    char *region = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                        -1, 0);
    if (!a || region == MAP_FAILED) {
        free(a);
        if (region != MAP_FAILED)
            munmap(region, total);
        return hkc_fail(b->ctx, HK_ENOMEM, "cannot allocate %zu bytes of %s memory", b->bytes,
                        hk_mem_mode_name(b->mode));
    }
    mprotect(region, page, PROT_NONE);
    mprotect(region + page + data_pages, page, PROT_NONE);
    char *end = region + page + data_pages;
    b->kptr = b->hptr = data ? end - data : end - DATA_ALIGN;
    a->b = b;
    a->region = region;
    a->region_bytes = total;
    if (hkc_host_checked()) {
        unsigned char *lo, *hi;
        size_t nlo, nhi;
        slack(a, page, &lo, &nlo, &hi, &nhi);
        memset(lo, CANARY, nlo);
        memset(hi, CANARY, nhi);
    }
    pthread_mutex_lock(&h->allocs_lock);
    a->next = h->allocs;
    h->allocs = a;
    pthread_mutex_unlock(&h->allocs_lock);
    b->impl = a;
    return 0;
}

void hkc_host_buf_free(hk_buffer *b)
{
    host_impl *h = b->dev->be->impl;
    pthread_mutex_lock(&h->allocs_lock);
    for (host_alloc **pp = &h->allocs; *pp; pp = &(*pp)->next) {
        if (*pp != b->impl)
            continue;
        host_alloc *a = *pp;
        *pp = a->next;
        munmap(a->region, a->region_bytes);
        free(a);
        break;
    }
    pthread_mutex_unlock(&h->allocs_lock);
}

/* ------------------------------------------------- copies that may fault */

/* A file mapping faults (SIGBUS) where another process truncated the file
 * under it. Copies touching one run under a recovery point (host_fault.c)
 * and fail naming the buffer's file; other buffers copy directly. */
typedef struct copy_job {
    void *dst;
    const void *src;
    size_t bytes;
    size_t es; /* fill: the element size, the value at dst */
} copy_job;

static void do_move(void *arg)
{
    copy_job *j = arg;
    memmove(j->dst, j->src, j->bytes);
}

static void do_fill(void *arg)
{
    copy_job *j = arg;
    unsigned char *p = j->dst;
    memcpy(p, j->src, j->es);
    /* Doubling copies: a few memcpy calls for any size. */
    size_t done = j->es;
    while (done < j->bytes) {
        size_t n = done < j->bytes - done ? done : j->bytes - done;
        memcpy(p + done, p, n);
        done += n;
    }
}

static const hk_buffer *file_backed(const hk_buffer *b)
{
    while (b && b->parent)
        b = b->parent;
    return b && b->mode == HK_MEM_MMAP ? b : NULL;
}

/* Runs fn(j); b and other (may be NULL) are the buffers it touches. */
static int guarded(void (*fn)(void *), copy_job *j, const hk_buffer *b, const hk_buffer *other,
                   const char *what)
{
    const hk_buffer *fb = file_backed(b);
    if (!fb)
        fb = file_backed(other);
    if (!fb) {
        fn(j);
        return 0;
    }
    void *addr = NULL;
    int signo = hkc_fault_run(fn, j, &addr);
    if (!signo)
        return 0;
    const char *base = fb->map.base;
    long long at = (const char *)addr >= base && (const char *)addr < base + fb->map.map_bytes
                       ? (long long)((const char *)addr - base)
                       : -1;
    struct stat st;
    long long size = fstat(fb->map.fd, &st) == 0 ? (long long)st.st_size : -1;
    return hkc_fail(b->ctx, HK_EIO,
                    "%s a buffer mapped from '%s': %s at byte %lld of the mapping; the file "
                    "is now %lld bytes (truncated by another process?)",
                    what, fb->map.path ? fb->map.path : "?", hkc_fault_describe(signo), at, size);
}

int hkc_host_move(hk_buffer *b, hk_buffer *other, void *dst, const void *src, size_t bytes,
                  const char *what)
{
    copy_job j = {dst, src, bytes, 0};
    return guarded(do_move, &j, b, other, what);
}

/* The default stream's copies start after the work queued on streams. */
int hkc_host_buf_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    hkc_host_streams_drain(b->dev->be->impl);
    return hkc_host_move(b, NULL, (char *)b->hptr + offset, src, bytes, "writing");
}

int hkc_host_buf_download(hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    hkc_host_streams_drain(b->dev->be->impl);
    return hkc_host_move(b, NULL, dst, (char *)b->hptr + offset, bytes, "reading");
}

int hkc_host_buf_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                         size_t bytes)
{
    hkc_host_streams_drain(dst->dev->be->impl);
    return hkc_host_move(dst, src, (char *)dst->hptr + dst_offset, (char *)src->hptr + src_offset,
                         bytes, "copying");
}

int hkc_host_buf_fill(hk_buffer *b, const void *value)
{
    hkc_host_streams_drain(b->dev->be->impl);
    if (!b->count)
        return 0;
    copy_job j = {b->hptr, value, b->bytes, hk_dtype_size(b->dtype)};
    return guarded(do_fill, &j, b, NULL, "filling");
}

/* Names the buffer an address falls in or next to, for fault messages. An
 * address inside a buffer's guard pages belongs to that buffer; one farther
 * away is described against the nearest buffer below it, as "nearest". */
static void describe_addr(void *vh, void *addr, char *out, size_t cap)
{
    host_impl *h = vh;
    char *p = addr;
    const hk_buffer *below = NULL;
    for (host_alloc *a = h->allocs; a; a = a->next) {
        hk_buffer *b = a->b;
        char *lo = b->kptr, *hi = lo + b->bytes;
        size_t es = hk_dtype_size(b->dtype);
        if (p >= a->region && p < a->region + a->region_bytes) {
            if (p >= hi)
                snprintf(out, cap, "(%zu bytes past the end of a buffer of %zu %s, element index %zu)",
                         (size_t)(p - hi), b->count, hk_dtype_name(b->dtype), (size_t)(p - lo) / es);
            else if (p < lo)
                snprintf(out, cap, "(%zu bytes before the start of a buffer of %zu %s)",
                         (size_t)(lo - p), b->count, hk_dtype_name(b->dtype));
            return;
        }
        if (lo <= p && (!below || lo > (char *)below->kptr))
            below = b;
    }
    if ((uintptr_t)addr < 65536)
        snprintf(out, cap, "(a null or nearly null pointer)");
    else if (below)
        snprintf(out, cap, "(nearest buffer below: %zu bytes past the end of a buffer of %zu %s)",
                 (size_t)(p - ((char *)below->kptr + below->bytes)), below->count,
                 hk_dtype_name(below->dtype));
}

/* Stream threads launch while the caller allocates and frees: the list of
 * allocations is read under its lock. */
int hkc_host_check_canaries(host_impl *h, char *msg, size_t cap)
{
    pthread_mutex_lock(&h->allocs_lock);
    int bad = check_canaries(h, msg, cap);
    pthread_mutex_unlock(&h->allocs_lock);
    return bad;
}

void hkc_host_describe_addr(void *vh, void *addr, char *out, size_t cap)
{
    host_impl *h = vh;
    pthread_mutex_lock(&h->allocs_lock);
    describe_addr(vh, addr, out, cap);
    pthread_mutex_unlock(&h->allocs_lock);
}
