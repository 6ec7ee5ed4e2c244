/* What buffer.c shares with buffer_math.c, and no other file: element
 * conversions and spans. The rest of the binding sees buffers through
 * hkl.h. */
#ifndef HKL_BUFFER_H
#define HKL_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "hkl.h"

#define CHUNK_BYTES ((size_t)1 << 20)
#define BLOCK 2048 /* elements converted to double at a time, on the stack */

/* Elements of dtype t (buffer.c). */
int is_float(hk_dtype t);
/* Converts n elements to double. */
void to_f64(hk_dtype t, const void *src, double *dst, size_t n);
/* %g, but NaN prints as "nan" whatever its sign bit. */
void fmt_num(char *buf, size_t cap, const char *fmt, double v);

/* A buffer's elements seen from the host, a chunk at a time: its memory
 * when the host can see it, else CHUNK_BYTES of scratch downloaded or
 * uploaded (buffer.c). */
typedef struct span {
    hk_buffer *b;
    hk_dtype t;
    size_t es, n;
    unsigned char *host; /* the buffer's memory, or NULL */
    unsigned char *tmp;  /* CHUNK_BYTES of scratch when host is NULL */
} span;

/* Leaves one value (scratch or nil) on the stack. */
void span_init(lua_State *L, span *s, hk_buffer *b, int write);
/* Elements per chunk, for spans of the given element sizes. */
size_t chunk_elems(size_t es);
/* Elements [first, first + n) of a chunk, readable until the next call. */
const unsigned char *span_read(lua_State *L, span *s, size_t first, size_t n);

/* Adds the methods stats and allclose to the method table on top of the
 * stack (buffer_math.c). */
void hkl_buffer_math_register(lua_State *L);

#endif
