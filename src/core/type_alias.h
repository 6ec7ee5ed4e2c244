/* The type names a source defines: typedef and using aliases (resolved to
 * the tokens they stand for) and class, struct and union names. Kernel
 * discovery expands aliases in a parameter list before parsing it, so
 * `typedef float real; __global__ void k(real *v)` is checked as float *,
 * and knows which unknown words are the user's own structs. An alias counts
 * where C++ would see it: declared before, at namespace scope, in the
 * kernel's namespace or one enclosing it (function and class scopes are
 * left out). */
#ifndef HKC_TYPE_ALIAS_H
#define HKC_TYPE_ALIAS_H

#include "cpp_lexer.h"

typedef struct hkc_alias {
    const hkc_tok *name;
    const hkc_tok *type; /* its tokens */
    int ntype;
    char ns[160];        /* the namespace it is declared in, "a::b::"; "" global */
} hkc_alias;

/* A namespace body: tokens [open, close) of the stream. */
typedef struct hkc_ns_region {
    const hkc_tok *open, *close;
    char ns[160];
} hkc_ns_region;

typedef struct hkc_type_names {
    hkc_alias *aliases;
    int naliases;
    const hkc_tok **classes;
    int nclasses;
    hkc_ns_region *regions;
    int nregions;
} hkc_type_names;

/* Collects them from tokens v[0..n). 0 or HK_ENOMEM. */
int hkc_type_names_collect(const hkc_tok *v, int n, hkc_type_names *out);
void hkc_type_names_free(hkc_type_names *t);
/* Is the word p[0..len) a class, struct or union the source defines? */
int hkc_type_names_is_class(const hkc_type_names *t, const char *p, size_t len);
/* v[0..n) (a parameter list of the collected stream) with every alias
 * visible there replaced by what it stands for (to a depth of 8), into *out
 * (malloc'd, *nout tokens). 0 or HK_ENOMEM. */
int hkc_type_names_expand(const hkc_type_names *t, const hkc_tok *v, int n, hkc_tok **out,
                          int *nout);
/* As hkc_type_names_expand for tokens v[0..n) that need not be in the
 * stream (a template's parameter list with its arguments put in), seen as
 * at the stream's token `at`. */
int hkc_type_names_expand_at(const hkc_type_names *t, const hkc_tok *at, const hkc_tok *v, int n,
                             hkc_tok **out, int *nout);
/* The namespace around the stream's token `at`: "a::b::", or "". */
const char *hkc_type_names_ns_at(const hkc_type_names *t, const hkc_tok *at);

#endif
