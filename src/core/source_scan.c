/* Finding the kernels in HIP source: the scanner looks for the shape
 * `__global__ ... void NAME ( ... ) {` at namespace scope (or in extern "C"
 * blocks) over the core's C++ tokens; it is not a C++ parser. */
#include "internal.h"
#include "type_alias.h"

#include <stdlib.h>
#include <string.h>

static int is_sync_name(const char *p, size_t n)
{
    static const char *const prefixes[] = {
        "__syncthreads", "__syncwarp", "__shfl", "__ballot", "__any", "__all",
        "__activemask", "__reduce_",
    };
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t k = strlen(prefixes[i]);
        if (n >= k && memcmp(p, prefixes[i], k) == 0)
            return 1;
    }
    return 0;
}

/* A directive's text is outside every kernel (a macro's body may be used
 * in any): a sync name in it marks *(int *)found. */
typedef struct directive_notes {
    int sync;        /* a sync name in a directive (a macro body) */
    int conditional; /* an #if/#ifdef/#else...: braces need not balance */
} directive_notes;

static void note_directive(const hkc_tok *directive, void *arg)
{
    directive_notes *notes = arg;
    hkc_lexer lx;
    hkc_tok t;
    hkc_lex_init_directive(&lx, directive);
    int first = 1;
    for (hkc_lex_next(&lx, &t); t.kind != HKC_TOK_EOF; hkc_lex_next(&lx, &t)) {
        if (t.kind != HKC_TOK_IDENT)
            continue;
        if (first && ((t.n >= 2 && !memcmp(t.p, "if", 2)) || (t.n >= 2 && !memcmp(t.p, "el", 2))))
            notes->conditional = 1;
        first = 0;
        if (is_sync_name(t.p, t.n))
            notes->sync = 1;
    }
}

typedef enum scope_kind { SC_OTHER, SC_EXTERN_C, SC_NAMESPACE, SC_KERNEL } scope_kind;

typedef struct scope {
    scope_kind kind;
    int kernel; /* SC_KERNEL: index in the output */
    int line;   /* of its '{' */
} scope;

/* The scan over one source's tokens. */
typedef struct scanner {
    const hkc_tok *v;
    int n;                /* tokens, the final HKC_TOK_EOF left out */
    scope *stack;         /* the open braces */
    int depth, cap;
    scope_kind pending;   /* what the next '{' opens */
    int pending_kernel;   /* with SC_KERNEL: the kernel, or -1 for a skipped one */
    hkc_source_kernel *k; /* the output */
    int nk, capk;
    char **declared_c;    /* names declared extern "C" without a body */
    int ndeclared, capdeclared;
    int outside_sync;     /* a sync name outside every kernel body */
    hkc_type_names names; /* the source's aliases and classes */
} scanner;

void hkc_source_kernels_free(hkc_source_kernel *k, int count)
{
    if (!k)
        return;
    for (int i = 0; i < count; i++) {
        free(k[i].name);
        free(k[i].unresolved);
        hkc_signature_free(&k[i].sig);
    }
    free(k);
}

static int is_decl_boundary(const hkc_tok *t)
{
    return hkc_tok_punct(t, ';') || hkc_tok_punct(t, '{') || hkc_tok_punct(t, '}');
}

/* Skips a balanced (...) group starting at v[i] == '('; returns the index of
 * the closing ')' or -1. */
static int skip_parens(const hkc_tok *v, int n, int i)
{
    int depth = 0;
    for (; i < n; i++) {
        if (hkc_tok_punct(&v[i], '('))
            depth++;
        else if (hkc_tok_punct(&v[i], ')') && --depth == 0)
            return i;
        else if (v[i].kind == HKC_TOK_EOF)
            return -1;
    }
    return -1;
}

static int push_declared(scanner *st, const hkc_tok *name)
{
    if (st->ndeclared == st->capdeclared) {
        int cap = st->capdeclared ? st->capdeclared * 2 : 8;
        char **d = realloc(st->declared_c, (size_t)cap * sizeof(*d));
        if (!d)
            return HK_ENOMEM;
        st->declared_c = d;
        st->capdeclared = cap;
    }
    char *s = strndup(name->p, name->n);
    if (!s)
        return HK_ENOMEM;
    st->declared_c[st->ndeclared++] = s;
    return 0;
}

static int was_declared_c(const scanner *st, const hkc_tok *name)
{
    for (int i = 0; i < st->ndeclared; i++)
        if (strlen(st->declared_c[i]) == name->n &&
            memcmp(st->declared_c[i], name->p, name->n) == 0)
            return 1;
    return 0;
}

static int scan_extra_sync(const char *text)
{
    hkc_tokvec tv;
    directive_notes notes = {0};
    if (hkc_tokenize(text, strlen(text), note_directive, &notes, &tv))
        return 1; /* out of memory: stay conservative */
    int found = notes.sync;
    for (int i = 0; i < tv.n && !found; i++)
        if (tv.v[i].kind == HKC_TOK_IDENT && is_sync_name(tv.v[i].p, tv.v[i].n))
            found = 1;
    free(tv.v);
    return found;
}

static int open_brace(scanner *sc, int line)
{
    if (sc->depth == sc->cap) {
        int cap = sc->cap ? sc->cap * 2 : 16;
        scope *s = realloc(sc->stack, (size_t)cap * sizeof(*s));
        if (!s)
            return HK_ENOMEM;
        sc->stack = s;
        sc->cap = cap;
    }
    sc->stack[sc->depth].kind = sc->pending;
    sc->stack[sc->depth].kernel = sc->pending_kernel;
    sc->stack[sc->depth].line = line;
    sc->depth++;
    sc->pending = SC_OTHER;
    sc->pending_kernel = -1;
    return 0;
}

/* A sync name marks the innermost kernel body around it, or, outside every
 * body, all kernels. Inside a skipped kernel (template, namespace) it
 * concerns no recorded kernel: kernels do not call each other. */
static void note_sync(scanner *sc)
{
    int d = sc->depth - 1;
    while (d >= 0 && sc->stack[d].kind != SC_KERNEL)
        d--;
    if (d < 0)
        sc->outside_sync = 1;
    else if (sc->stack[d].kernel >= 0)
        sc->k[sc->stack[d].kernel].uses_sync = 1;
}

/* A kernel declaration, from its `__global__`. */
typedef struct header {
    int name;     /* index of NAME in `NAME (` */
    int open;     /* its '(' */
    int close;    /* the matching ')' */
    int end;      /* the '{', ';' or '}' after it */
    int extern_c;
    int skip;     /* a template, or in a namespace or a body: not recorded */
} header;

/* Looks back to the start of the declaration at v[i] for `template` and
 * `extern "C"`, and out through the open braces. */
static void header_context(const scanner *sc, int i, header *h)
{
    const hkc_tok *v = sc->v;
    int is_template = 0, in_ns = 0, in_kernel_or_other = 0;
    h->extern_c = 0;
    for (int j = i - 1; j >= 0 && !is_decl_boundary(&v[j]); j--) {
        if (hkc_tok_is(&v[j], "template"))
            is_template = 1;
        if (hkc_tok_is(&v[j], "extern") && v[j + 1].kind == HKC_TOK_STR &&
            hkc_tok_is(&v[j + 1], "\"C\""))
            h->extern_c = 1;
    }
    for (int d = 0; d < sc->depth; d++) {
        if (sc->stack[d].kind == SC_EXTERN_C)
            h->extern_c = 1;
        else if (sc->stack[d].kind == SC_NAMESPACE)
            in_ns = 1;
        else
            in_kernel_or_other = 1;
    }
    h->skip = is_template || in_ns || in_kernel_or_other;
}

/* Reads forward from v[i]: the first NAME ( that is no attribute-like
 * keyword, its parameter list, and attributes up to the '{' or ';'. Returns
 * 0 when the declaration has no such shape. */
static int header_shape(const scanner *sc, int i, header *h)
{
    const hkc_tok *v = sc->v;
    int n = sc->n, j = i + 1;
    h->name = -1;
    for (; j < n; j++) {
        if (is_decl_boundary(&v[j]))
            break;
        if (hkc_tok_punct(&v[j], '(')) {
            const hkc_tok *prev = &v[j - 1];
            if (prev->kind == HKC_TOK_IDENT && !hkc_tok_is(prev, "__launch_bounds__") &&
                !hkc_tok_is(prev, "__attribute__") && !hkc_tok_is(prev, "__declspec") &&
                !hkc_tok_is(prev, "alignas") && !hkc_tok_is(prev, "__global__")) {
                h->name = j - 1;
                break;
            }
            j = skip_parens(v, n, j);
            if (j < 0)
                break;
        }
    }
    if (h->name < 0 || j < 0)
        return 0;
    h->open = j;
    h->close = skip_parens(v, n, j);
    if (h->close < 0)
        return 0;
    /* Between ')' and '{' or ';': attributes at most. */
    int k = h->close + 1;
    while (k < n && !is_decl_boundary(&v[k])) {
        if (hkc_tok_punct(&v[k], '(')) {
            k = skip_parens(v, n, k);
            if (k < 0)
                break;
        }
        k++;
    }
    if (k < 0 || k >= n)
        return 0;
    h->end = k;
    return 1;
}

/* A pointer parameter whose pointee is no type hipkit knows (C's, HIP's,
 * void) nor a struct of the source: a typedef hipkit could not follow or a
 * template parameter. Passing it unchecked could write float bits into a
 * byte buffer, so it is said in why (left empty when all are known). */
static void unknown_pointee(const hkc_type_names *names, const hkc_signature *sig, hkc_strbuf *why)
{
    for (int i = 0; i < sig->count && !why->len; i++) {
        const hkc_param *p = &sig->params[i];
        if (!p->opaque)
            continue;
        const char *w = p->type;
        for (int again = 1; again;) {
            again = 0;
            static const char *const quals[] = {"const ", "volatile ", "struct ", "class ",
                                                "union ", "enum "};
            for (size_t q = 0; q < sizeof quals / sizeof *quals; q++)
                if (!strncmp(w, quals[q], strlen(quals[q]))) {
                    w += strlen(quals[q]);
                    again = 1;
                }
        }
        size_t len = strcspn(w, " *");
        if ((len == 4 && !strncmp(w, "void", 4)) || hkc_type_names_is_class(names, w, len) ||
            strncmp(p->type, "struct ", 7) == 0)
            continue;
        hkc_strbuf_printf(why, "parameter %d '%s' points to '%.*s', a type hipkit cannot resolve "
                               "to a C type", i + 1, p->name[0] ? p->name : "(unnamed)",
                          (int)len, w);
    }
}

/* Records the kernel defined by h, declared on `line`; its body is the
 * next scope. */
static int add_kernel(scanner *sc, const header *h, int line, hkc_strbuf *err)
{
    const hkc_tok *name = &sc->v[h->name];
    if (sc->nk == sc->capk) {
        int cap = sc->capk ? sc->capk * 2 : 8;
        hkc_source_kernel *k = realloc(sc->k, (size_t)cap * sizeof(*k));
        if (!k)
            return HK_ENOMEM;
        sc->k = k;
        sc->capk = cap;
    }
    hkc_source_kernel *sk = &sc->k[sc->nk];
    memset(sk, 0, sizeof(*sk));
    sk->line = line;
    sk->extern_c = h->extern_c || was_declared_c(sc, name);
    hkc_strbuf perr;
    hkc_strbuf_init(&perr);
    hkc_tok *params = NULL;
    int nparams = 0;
    int rc = hkc_type_names_expand(&sc->names, &sc->v[h->open + 1], h->close - h->open - 1,
                                   &params, &nparams);
    if (rc == 0)
        rc = hkc_signature_parse_tokens(params, nparams, &sk->sig, &perr);
    free(params);
    if (rc == 0)
        unknown_pointee(&sc->names, &sk->sig, &perr);
    /* a type hipkit cannot resolve is the user's to state; other mistakes
     * (dim3 by value, void parameters) no signature could mend */
    if (rc == HK_EINVAL && (strstr(perr.data, "unknown type") || strstr(perr.data, "template")))
        rc = 0;
    if (rc == HK_EINVAL)
        hkc_strbuf_printf(err, "kernel '%.*s' (line %d): %s", (int)name->n, name->p, sk->line,
                          perr.data);
    if (rc == 0 && perr.len) {
        /* kept, and refused at lookup unless the user gives a signature */
        hkc_signature_free(&sk->sig);
        sk->unresolved = hkc_strbuf_take(&perr);
        rc = sk->unresolved ? 0 : HK_ENOMEM;
    }
    hkc_strbuf_free(&perr);
    if (rc)
        return rc;
    sk->name = strndup(name->p, name->n);
    if (!sk->name) {
        hkc_signature_free(&sk->sig);
        return HK_ENOMEM;
    }
    sc->nk++;
    sc->pending = SC_KERNEL;
    sc->pending_kernel = sc->nk - 1;
    return 0;
}

/* The declaration at v[i] == `__global__`. Returns the index of the last
 * token it used: the scan goes on with the '{', ';' or '}' that ends it. */
static int scan_kernel(scanner *sc, int i, int *rc, hkc_strbuf *err)
{
    header h;
    header_context(sc, i, &h);
    if (!header_shape(sc, i, &h))
        return i;
    const hkc_tok *end = &sc->v[h.end];
    if (hkc_tok_punct(end, ';') || hkc_tok_punct(end, '}')) {
        if (!h.skip && h.extern_c)
            *rc = push_declared(sc, &sc->v[h.name]);
    } else if (h.skip) { /* the body is pushed as an ordinary scope */
        sc->pending = SC_KERNEL;
        sc->pending_kernel = -1;
    } else {
        *rc = add_kernel(sc, &h, sc->v[i].line, err);
    }
    return h.end - 1;
}

static int scan_tokens(scanner *sc, hkc_strbuf *err)
{
    const hkc_tok *v = sc->v;
    int rc = 0;
    for (int i = 0; i < sc->n && !rc; i++) {
        const hkc_tok *t = &v[i];
        if (hkc_tok_punct(t, '{')) {
            rc = open_brace(sc, t->line);
        } else if (hkc_tok_punct(t, '}')) {
            if (sc->depth > 0)
                sc->depth--;
            sc->pending = SC_OTHER;
        } else if (hkc_tok_punct(t, ';')) {
            sc->pending = SC_OTHER;
        } else if (t->kind != HKC_TOK_IDENT) {
            continue;
        } else if (is_sync_name(t->p, t->n)) {
            note_sync(sc);
        } else if (hkc_tok_is(t, "namespace")) {
            sc->pending = SC_NAMESPACE;
        } else if (hkc_tok_is(t, "extern") && i + 2 < sc->n && v[i + 1].kind == HKC_TOK_STR &&
                   hkc_tok_is(&v[i + 1], "\"C\"") && hkc_tok_punct(&v[i + 2], '{')) {
            sc->pending = SC_EXTERN_C;
            i++; /* the '{' is handled by the loop */
        } else if (hkc_tok_is(t, "__global__")) {
            i = scan_kernel(sc, i, &rc, err);
        }
    }
    return rc;
}

int hkc_source_scan(const char *src, const char *extra_text, hkc_source_kernel **out,
                    int *count, hkc_strbuf *err)
{
    hkc_tokvec tv;
    scanner sc = {0};
    *out = NULL;
    *count = 0;
    if (!src)
        src = "";
    directive_notes notes = {0};
    int rc = hkc_tokenize(src, strlen(src), note_directive, &notes, &tv);
    if (rc)
        return rc;
    sc.outside_sync = notes.sync;
    if (extra_text && !sc.outside_sync)
        sc.outside_sync = scan_extra_sync(extra_text);

    sc.v = tv.v;
    sc.n = tv.n - 1;
    rc = hkc_type_names_collect(sc.v, sc.n, &sc.names);
    sc.pending = SC_OTHER;
    sc.pending_kernel = -1;
    if (!rc)
        rc = scan_tokens(&sc, err);
    /* Said here, in the user's words: the compiler would report it inside
     * the code appended after the source (the host kernel table). */
    if (!rc && sc.depth > 0 && !notes.conditional) {
        hkc_strbuf_printf(err, "the '{' at (line %d) is never closed: the source ends inside it",
                          sc.stack[sc.depth - 1].line);
        rc = HK_EINVAL;
    }
    if (!rc && sc.outside_sync)
        for (int q = 0; q < sc.nk; q++)
            sc.k[q].uses_sync = 1;

    for (int q = 0; q < sc.ndeclared; q++)
        free(sc.declared_c[q]);
    free(sc.declared_c);
    free(sc.stack);
    hkc_type_names_free(&sc.names);
    free(tv.v);
    if (rc) {
        hkc_source_kernels_free(sc.k, sc.nk);
        return rc;
    }
    *out = sc.k;
    *count = sc.nk;
    return 0;
}
