/* Kernel parameter lists: parsed from HIP source or given by the caller as C,
 * and their C struct layout in the kernarg buffer. Nothing here names a
 * vendor API. */
#ifndef HKC_SIGNATURE_H
#define HKC_SIGNATURE_H

#include <stdint.h>

#include "cpp_lexer.h"
#include "hipkit/hipkit.h"
#include "strbuf.h"

typedef struct hkc_param {
    char *name;       /* "" when unnamed */
    char *type;       /* normalised C spelling: "const float *", "uint32_t", "__half", "float4" */
    hk_param_kind kind;
    hk_dtype dtype;   /* scalar type, vector element, or pointee; HK_DTYPE_COUNT for void* and
                       * unknown pointees */
    int is_const;     /* pointee const */
    int is_bool;      /* scalar bool (dtype is HK_U8, size 1) */
    uint32_t size, align, offset;
} hkc_param;

typedef struct hkc_signature {
    hkc_param *params;
    int count;
    uint32_t kernarg_size; /* rounded up to the largest alignment, as a C struct */
} hkc_signature;

/* Parses a C parameter list such as "float a, const float *__restrict__ x,
 * size_t n" (with or without the surrounding parentheses; "" and "void" are
 * empty lists). Computes offsets with C layout. On failure returns HK_EINVAL
 * and writes into err a message naming the parameter (by position and text)
 * and what was wrong. */
int hkc_signature_parse(const char *text, hkc_signature *out, hkc_strbuf *err);
/* The same for the list held in tokens v[0..n) (no outer parentheses, no
 * HKC_TOK_EOF): what the source scanner calls on a kernel's parameters. */
int hkc_signature_parse_tokens(const hkc_tok *v, int n, hkc_signature *out, hkc_strbuf *err);
/* Parses one parameter declaration, tokens t[0..n) (no comma), the
 * `index`th (1-based, for messages) of its list, into out (free its name
 * and type). Sets *is_void for a lone `void`, which is no parameter. Returns
 * 0, HK_EINVAL with a message naming the parameter (an empty one included),
 * or HK_ENOMEM. */
int hkc_param_parse(const hkc_tok *t, int n, int index, hkc_param *out, int *is_void,
                    hkc_strbuf *err);
void hkc_signature_free(hkc_signature *s);
int hkc_signature_copy(const hkc_signature *src, hkc_signature *dst);
/* Writes "(float a, const float *x)". */
void hkc_signature_format(const hkc_signature *s, hkc_strbuf *out);

/* A vector of 32 bytes, 1, 2 or 4 lanes (double4, long4, longlong4 and the
 * unsigned ones): CUDA aligns it to 16, as the parser does, HIP to 32. */
int hkc_param_is_wide_vector(const hkc_param *p);
/* Gives every wide vector of s alignment `align` (16 or 32) and lays s out
 * again. */
void hkc_signature_align_wide_vectors(hkc_signature *s, uint32_t align);

#endif
