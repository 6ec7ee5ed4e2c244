/* The CPU backend's buffers: host memory between guard pages, so that an
 * overrun faults at once and the fault names the buffer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host_backend.h"

/* ---------------------------------------------------------------- memory */

/* Start of the data is 64-byte aligned (the widest vector load) and its end
 * as close to the trailing guard page as that allows, so an overrun faults at
 * once; at most 63 bytes past the end go unnoticed. */
#define DATA_ALIGN 64

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
    a->next = h->allocs;
    h->allocs = a;
    b->impl = a;
    return 0;
}

void hkc_host_buf_free(hk_buffer *b)
{
    host_impl *h = b->dev->be->impl;
    for (host_alloc **pp = &h->allocs; *pp; pp = &(*pp)->next) {
        if (*pp != b->impl)
            continue;
        host_alloc *a = *pp;
        *pp = a->next;
        munmap(a->region, a->region_bytes);
        free(a);
        return;
    }
}

int hkc_host_buf_upload(hk_buffer *b, size_t offset, const void *src, size_t bytes)
{
    memcpy((char *)b->hptr + offset, src, bytes);
    return 0;
}

int hkc_host_buf_download(hk_buffer *b, size_t offset, void *dst, size_t bytes)
{
    memcpy(dst, (char *)b->hptr + offset, bytes);
    return 0;
}

int hkc_host_buf_copy(hk_buffer *dst, size_t dst_offset, hk_buffer *src, size_t src_offset,
                         size_t bytes)
{
    memmove((char *)dst->hptr + dst_offset, (char *)src->hptr + src_offset, bytes);
    return 0;
}

int hkc_host_buf_fill(hk_buffer *b, const void *value)
{
    size_t es = hk_dtype_size(b->dtype);
    unsigned char *p = b->hptr;
    if (!b->count)
        return 0;
    memcpy(p, value, es);
    /* Doubling copies: a few memcpy calls for any size. */
    size_t done = es;
    while (done < b->bytes) {
        size_t n = done < b->bytes - done ? done : b->bytes - done;
        memcpy(p + done, p, n);
        done += n;
    }
    return 0;
}

/* Names the buffer an address falls in or next to, for fault messages. An
 * address inside a buffer's guard pages belongs to that buffer; one farther
 * away is described against the nearest buffer below it, as "nearest". */
void hkc_host_describe_addr(void *vh, void *addr, char *out, size_t cap)
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
