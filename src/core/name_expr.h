/* Kernel names as C++ writes them: `ns::kern` and template instantiations
 * `ns::reduce<float, 256>` (what NVRTC and hiprtc call name expressions).
 * One spelling is kept for each (the normalised form below), so a name the
 * user types, the one discovery records and the one a compiler is given
 * compare as strings. */
#ifndef HKC_NAME_EXPR_H
#define HKC_NAME_EXPR_H

#include "cpp_lexer.h"
#include "strbuf.h"

#define HKC_NAME_EXPR_MAX_ARGS 32

/* A name expression split into its parts. */
typedef struct hkc_name_expr {
    hkc_tokvec tv;    /* its tokens (into the text it was parsed from) */
    int name_end;     /* tokens [0, name_end) are the qualified name */
    int nargs;        /* -1: no template argument list */
    int arg_begin[HKC_NAME_EXPR_MAX_ARGS], arg_end[HKC_NAME_EXPR_MAX_ARGS];
    char *qname;      /* "ns::reduce" */
    char *normalized; /* "ns::reduce<float, 256>" */
} hkc_name_expr;

/* Parses `a::b::name` or `a::b::name<arg, ...>`; the text must outlive e.
 * Returns 0, HK_ENOMEM, or HK_EINVAL with the reason in err. */
int hkc_name_expr_parse(const char *text, hkc_name_expr *e, hkc_strbuf *err);
void hkc_name_expr_free(hkc_name_expr *e);

/* Tokens v[0..n) in the normalised spelling: one space between two words
 * (`unsigned int`), none around `::`, `<`, `>`, `*`, `&`, `(` or `)`, ", "
 * after a comma. */
void hkc_tokens_join(const hkc_tok *v, int n, hkc_strbuf *out);

/* The normalised spelling of a name the user gave; a plain identifier comes
 * back as it is. 0, HK_ENOMEM, or HK_EINVAL (not a name) with err said. */
int hkc_name_expr_normalize(const char *text, hkc_strbuf *out, hkc_strbuf *err);

/* Whether a kernel name is more than an identifier: a qualified name or a
 * template instantiation, which a compiler mangles. */
int hkc_name_is_expression(const char *name);

/* The function name of a kernel symbol: "scale" for "_Z5scalePfi", the
 * last part of a nested one; anything else (extern "C" names) as it is.
 * Writes at most cap bytes into out, NUL-terminated. */
void hkc_plain_name(const char *symbol, char *out, size_t cap);

#endif
