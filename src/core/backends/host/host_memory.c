/* The CPU backend's buffers: host memory between guard pages, so that an
 * overrun faults at once and the fault names the buffer. */
#include <signal.h> /* SIGBUS, in fault descriptions */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env_values.h"
#include "host_backend.h"
#include "internal.h" /* hkc_host_guarded, declared for context.c */
#include "host_fault.h"

/* ---------------------------------------------------------------- memory */

/* Start of the data is 64-byte aligned (the widest vector load) and its end
 * as close to the trailing guard page as that allows, so an overrun faults at
 * once; at most 63 bytes past the end go unnoticed. */
#define DATA_ALIGN 64

/* Checked mode (HIPKIT_CHECK=1, hk_check_mode): a checked buffer's data
 * ends at its trailing guard page itself wherever its size allows (its
 * start aligned to the largest power of two dividing its size, 16 to 64
 * bytes: the 16 the vector loads of kernels need, so a size that is not a
 * multiple of 16 keeps under 16 bytes of slack). The bytes of its mapping
 * that are not data (that slack, the start of its first page before the
 * data) hold a canary, verified after every launch. Guard pages catch an
 * access at once from a page beyond the data; the canary catches the writes
 * nearer than that, which would otherwise pass silently. */
#define CANARY 0xfd
#define CHECKED_MIN_ALIGN 16

/* Process-wide, as hk_interrupt: -1 until HIPKIT_CHECK is read. */
static atomic_int checked_mode = -1;

int hkc_host_checked(void)
{
    int on = atomic_load(&checked_mode);
    if (on < 0) {
        int want = hkc_env_flag("HIPKIT_CHECK", 0);
        atomic_compare_exchange_strong(&checked_mode, &on, want);
        on = atomic_load(&checked_mode);
    }
    return on;
}

HK_API int hk_check_mode(int on)
{
    int was = hkc_host_checked();
    if (on >= 0)
        atomic_store(&checked_mode, on ? 1 : 0);
    return was;
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
    static const unsigned char ref[1024] __attribute__((aligned(64))) = {[0 ... 1023] = CANARY};
    size_t same = 0;
    /* A short span here ends at the guard page: memcmp's vector loads take
     * a slow path there (near a microsecond a launch), a byte loop does not. */
    if (n < 64)
        while (same < n && p[same] == CANARY)
            same++;
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

/* ", argument NAME" when a pointer argument of the launch (sig over
 * kernarg, either may be NULL) points into a's mapping: the name a user
 * knows the buffer by. */
static void argument_of(const host_alloc *a, const hkc_signature *sig, const void *kernarg,
                        char *out, size_t cap, char **ptr, size_t *esize)
{
    out[0] = 0;
    if (ptr)
        *ptr = NULL, *esize = 0;
    for (int i = 0; sig && kernarg && i < sig->count; i++) {
        const hkc_param *p = &sig->params[i];
        if (p->kind != HK_PARAM_POINTER)
            continue;
        char *v;
        memcpy(&v, (const char *)kernarg + p->offset, sizeof v);
        if (v >= a->region && v < a->region + a->region_bytes) {
            if (ptr) /* where the argument points (a view: a GGUF tensor) and its element's size */
                *ptr = v, *esize = p->dtype == HK_DTYPE_COUNT ? 0 : hk_dtype_size(p->dtype);
            if (p->name && *p->name)
                snprintf(out, cap, ", argument %s", p->name);
            else
                snprintf(out, cap, ", argument %d", i + 1);
            return;
        }
    }
}

static int check_canaries(host_impl *h, const hkc_signature *sig, const void *kernarg,
                          char *msg, size_t cap)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int bad = 0;
    for (host_alloc *a = h->allocs; a; a = a->next) {
        if (!a->checked)
            continue;
        unsigned char *lo, *hi;
        size_t nlo, nhi, at;
        slack(a, page, &lo, &nlo, &hi, &nhi);
        size_t under = changed(lo, nlo, &at), under_at = nlo - at;
        size_t over = changed(hi, nhi, &at), over_at = at;
        if ((under || over) && !bad) {
            char arg[96];
            argument_of(a, sig, kernarg, arg, sizeof arg, NULL, NULL);
            snprintf(msg, cap, "it wrote %zu byte%s %s a buffer of %zu %s%s (%zu byte%s %s it; "
                     "checked mode)", under ? under : over, (under ? under : over) == 1 ? "" : "s",
                     under ? "before the start of" : "past the end of", a->b->count,
                     hk_dtype_name(a->b->dtype), arg, under ? under_at : over_at,
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

/* Where b's data starts in a mapping of data_pages after its first guard
 * page: 64-byte aligned as close to the end as that allows; checked, 16 to
 * 64 (see CHECKED_MIN_ALIGN). */
static size_t data_align(const hk_buffer *b, int checked)
{
    if (!checked)
        return DATA_ALIGN;
    size_t align = CHECKED_MIN_ALIGN;
    while (align < DATA_ALIGN && b->bytes % (align * 2) == 0)
        align *= 2;
    return align;
}

/* Puts a on the list that fault messages and checked mode walk. */
static void remember(host_impl *h, host_alloc *a)
{
    pthread_mutex_lock(&h->allocs_lock);
    a->next = h->allocs;
    h->allocs = a;
    h->nchecked += a->checked;
    pthread_mutex_unlock(&h->allocs_lock);
}

int hkc_host_buf_alloc(hk_buffer *b)
{
    host_impl *h = b->dev->be->impl;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int checked = hkc_host_checked();
    size_t align = data_align(b, checked);
    size_t data = (b->bytes + align - 1) / align * align;
    size_t data_pages = (data + page - 1) / page * page;
    if (!data_pages)
        data_pages = page;
    size_t total = data_pages + 2 * page;
    /* The mapping reserves no memory (a sparse buffer costs only what is
     * touched), so mmap takes any size: refuse what the machine could not
     * hold, as a GPU refuses more than its memory, rather than let the
     * first fill bring the out-of-memory killer to the session. */
    uint64_t ram = b->dev->info.total_memory;
    if (ram && b->bytes > ram)
        return hkc_fail(b->ctx, HK_ENOMEM, "cannot allocate %zu bytes of %s memory: more than the "
                        "%llu bytes of memory this machine has (the CPU backend's device memory)",
                        b->bytes, hk_mem_mode_name(b->mode), (unsigned long long)ram);
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
    b->kptr = b->hptr = data ? end - data : end - align;
    a->b = b;
    a->region = region;
    a->region_bytes = total;
    a->checked = checked;
    if (checked) {
        unsigned char *lo, *hi;
        size_t nlo, nhi;
        slack(a, page, &lo, &nlo, &hi, &nhi);
        memset(lo, CANARY, nlo);
        memset(hi, CANARY, nhi);
    }
    remember(h, a);
    b->impl = a;
    return 0;
}

/* Takes b's entry off the list and frees it, unmapping what is hipkit's. */
static void forget(hk_buffer *b)
{
    host_impl *h = b->dev->be->impl;
    pthread_mutex_lock(&h->allocs_lock);
    for (host_alloc **pp = &h->allocs; *pp; pp = &(*pp)->next) {
        if (*pp != b->impl)
            continue;
        host_alloc *a = *pp;
        *pp = a->next;
        h->nchecked -= a->checked;
        if (!a->mapped)
            munmap(a->region, a->region_bytes);
        free(a);
        break;
    }
    pthread_mutex_unlock(&h->allocs_lock);
}

void hkc_host_buf_free(hk_buffer *b) { forget(b); }

/* An mmap-mode buffer (buffer.c maps the file): listed beside the
 * allocations so that a fault in or just past it names it and its file,
 * not the nearest allocation. */
int hkc_host_buf_register(hk_buffer *b)
{
    host_impl *h = b->dev->be->impl;
    host_alloc *a = calloc(1, sizeof *a);
    if (!a)
        return hkc_fail(b->ctx, HK_ENOMEM, "out of memory");
    a->b = b;
    a->region = b->map.base;
    a->region_bytes = b->map.map_bytes;
    a->mapped = 1;
    remember(h, a);
    b->impl = a;
    return 0;
}

void hkc_host_buf_unregister(hk_buffer *b) { forget(b); }

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

/* Runs fn(arg); b and other (may be NULL) are the buffers it touches. The
 * GPU backends run their copies of a mapping's pages through it too
 * (hkc_backend.guarded). */
int hkc_host_guarded(const hk_buffer *b, const hk_buffer *other, void (*fn)(void *), void *arg,
                     const char *what)
{
    const hk_buffer *fb = file_backed(b);
    if (!fb)
        fb = file_backed(other);
    if (!fb) {
        fn(arg);
        return 0;
    }
    void *addr = NULL;
    int signo = hkc_fault_run(fn, arg, &addr);
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

static int guarded(void (*fn)(void *), copy_job *j, const hk_buffer *b, const hk_buffer *other,
                   const char *what)
{
    return hkc_host_guarded(b, other, fn, j, what);
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
 * address inside a buffer's guard pages belongs to that buffer, and so does
 * the page after a file mapping (which has no guard page: the next thing
 * there may be another buffer's leading guard page). Of several such, one
 * the launch passed is preferred, then the one whose data is nearer. One
 * farther away is described against the nearest buffer below it, as
 * "nearest". The buffer's argument name comes with it when the launch
 * passed it. signo tells a write into a read-only mapping (SIGSEGV) from a
 * read past a file cut short under its mapping (SIGBUS). */
static void describe_addr(void *vd, void *addr, int signo, char *out, size_t cap)
{
    const hkc_host_describe *d = vd;
    char *p = addr;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const hk_buffer *below = NULL;
    const host_alloc *at = NULL;
    size_t at_gap = SIZE_MAX;
    int at_passed = 0;
    char arg[96], at_arg[96] = "";
    char *arg_ptr = NULL, *at_ptr = NULL;
    size_t arg_es = 0, at_es = 0;
    for (host_alloc *a = d->h->allocs; a; a = a->next) {
        const hk_buffer *b = a->b;
        char *lo = b->kptr, *hi = lo + b->bytes;
        int near = p >= a->region && p < a->region + a->region_bytes;
        if (a->mapped) { /* its last page, rounded up, then one more */
            size_t span = (a->region_bytes + page - 1) / page * page + page;
            near = p >= a->region && (size_t)(p - a->region) < span;
        }
        if (!near) {
            if (lo <= p && (!below || lo > (char *)below->kptr))
                below = b;
            continue;
        }
        size_t gap = p < lo ? (size_t)(lo - p) : p >= hi ? (size_t)(p - hi) : 0;
        argument_of(a, d->sig, d->kernarg, arg, sizeof arg, &arg_ptr, &arg_es);
        int passed = arg[0] != 0;
        if (!at || passed > at_passed || (passed == at_passed && gap < at_gap)) {
            at = a;
            at_gap = gap;
            at_passed = passed;
            memcpy(at_arg, arg, sizeof at_arg);
            at_ptr = arg_ptr, at_es = arg_es;
        }
    }
    if (at) {
        const hk_buffer *b = at->b;
        char *lo = b->kptr, *hi = lo + b->bytes;
        size_t es = hk_dtype_size(b->dtype);
        /* an argument that points into the mapping past its start is a view
         * of it (a GGUF tensor): the element counts from the argument */
        int view = at_ptr && at_ptr != lo && at_ptr <= p && at_es;
        char what[96];
        if (view)
            snprintf(what, sizeof what, "memory");
        else
            snprintf(what, sizeof what, "a buffer of %zu %s", b->count, hk_dtype_name(b->dtype));
        if (at->mapped && p >= lo && p < hi)
            snprintf(out, cap, "(inside %s mapped %sfrom %s%s, element index %zu%s)", what,
                     b->map.writable ? "" : "read-only ", b->map.path, at_arg,
                     view ? (size_t)(p - at_ptr) / at_es : (size_t)(p - lo) / es,
                     signo == SIGBUS ? ": the file is now shorter than its mapping"
                     : b->map.writable ? ""
                                       : ": kernels may read it; write to a copy (b:clone()), or map the "
                                         "file writable (hk.mmap(path, dtype, {write = true}))");
        else if (p >= hi)
            snprintf(out, cap, "(%zu bytes past the end of a buffer of %zu %s%s, element index %zu)",
                     (size_t)(p - hi), b->count, hk_dtype_name(b->dtype), at_arg, (size_t)(p - lo) / es);
        else if (p < lo)
            snprintf(out, cap, "(%zu bytes before the start of a buffer of %zu %s%s)", (size_t)(lo - p),
                     b->count, hk_dtype_name(b->dtype), at_arg);
    } else if ((uintptr_t)addr < 65536) {
        snprintf(out, cap, "(a null or nearly null pointer)");
    } else if (below) {
        snprintf(out, cap, "(nearest buffer below: %zu bytes past the end of a buffer of %zu %s)",
                 (size_t)(p - ((char *)below->kptr + below->bytes)), below->count,
                 hk_dtype_name(below->dtype));
    }
}

/* Stream threads launch while the caller allocates and frees: the list of
 * allocations is read under its lock. */
int hkc_host_check_canaries(host_impl *h, const hkc_signature *sig, const void *kernarg,
                            char *msg, size_t cap)
{
    pthread_mutex_lock(&h->allocs_lock);
    int bad = check_canaries(h, sig, kernarg, msg, cap);
    pthread_mutex_unlock(&h->allocs_lock);
    return bad;
}

void hkc_host_describe_addr(void *vd, void *addr, int signo, char *out, size_t cap)
{
    host_impl *h = ((const hkc_host_describe *)vd)->h;
    pthread_mutex_lock(&h->allocs_lock);
    describe_addr(vd, addr, signo, out, cap);
    pthread_mutex_unlock(&h->allocs_lock);
}
