/* Finding the kernels in HIP source: the scanner looks for the shape
 * `__global__ ... void NAME ( ... ) {` at namespace scope (or in extern "C"
 * blocks) over the core's C++ tokens; it is not a C++ parser. */
#include "int_expr.h"
#include "internal.h"
#include "name_expr.h"
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
    int kernel; /* SC_KERNEL: index in the output, or -1 */
    int tmpl;   /* SC_KERNEL of a template: index in the templates, or -1 */
    int line;   /* of its '{' */
} scope;

/* A kernel template: instantiated only when the user names an
 * instantiation (hkc_source_scan_instances). */
typedef struct tmpl_rec {
    char *qname;           /* "ns::reduce" */
    int tp_open, tp_close; /* the '<' and '>' of its `template <...>` */
    int open, close;       /* its parameter list's '(' and ')' */
    int lb_begin, lb_end;  /* N of its `__launch_bounds__(N, ...)`, or -1 */
    int line;
    int uses_sync;
} tmpl_rec;

/* The scan over one source's tokens. */
typedef struct scanner {
    const hkc_tok *v;
    int n;                /* tokens, the final HKC_TOK_EOF left out */
    scope *stack;         /* the open braces */
    int depth, cap;
    scope_kind pending;   /* what the next '{' opens */
    int pending_kernel;   /* with SC_KERNEL: the kernel, or -1 for a skipped one */
    int pending_tmpl;     /* with SC_KERNEL: the template, or -1 */
    tmpl_rec *tmpl;       /* the kernel templates */
    int ntmpl, captmpl;
    char **globals;       /* __device__ / __constant__ / __managed__ variables */
    int nglobals, capglobals;
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
        free(k[i].symbol);
        free(k[i].lower_as);
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
    sc->stack[sc->depth].tmpl = sc->pending_tmpl;
    sc->stack[sc->depth].line = line;
    sc->depth++;
    sc->pending = SC_OTHER;
    sc->pending_kernel = -1;
    sc->pending_tmpl = -1;
    return 0;
}

/* A sync name marks the innermost kernel body around it (a template's, for
 * all its instances), or, outside every body, all kernels. Inside a skipped
 * kernel it concerns no recorded kernel: kernels do not call each other. */
static void note_sync(scanner *sc)
{
    int d = sc->depth - 1;
    while (d >= 0 && sc->stack[d].kind != SC_KERNEL)
        d--;
    if (d < 0)
        sc->outside_sync = 1;
    else if (sc->stack[d].kernel >= 0)
        sc->k[sc->stack[d].kernel].uses_sync = 1;
    else if (sc->stack[d].tmpl >= 0)
        sc->tmpl[sc->stack[d].tmpl].uses_sync = 1;
}

/* A kernel declaration, from its `__global__`. */
typedef struct header {
    int name;     /* index of NAME in `NAME (` */
    int open;     /* its '(' */
    int close;    /* the matching ')' */
    int end;      /* the '{', ';' or '}' after it */
    int extern_c;
    int tmpl;     /* index of `template`, or -1 */
    int skip;     /* inside a body (a class, a function): not recorded */
    int start;    /* the declaration's first token */
} header;

/* Looks back to the start of the declaration at v[i] for `template` and
 * `extern "C"`, and out through the open braces. */
static void header_context(const scanner *sc, int i, header *h)
{
    const hkc_tok *v = sc->v;
    int in_kernel_or_other = 0;
    h->extern_c = 0;
    h->tmpl = -1;
    h->start = i;
    for (int j = i - 1; j >= 0 && !is_decl_boundary(&v[j]); j--) {
        h->start = j;
        if (hkc_tok_is(&v[j], "template"))
            h->tmpl = j;
        if (hkc_tok_is(&v[j], "extern") && v[j + 1].kind == HKC_TOK_STR &&
            hkc_tok_is(&v[j + 1], "\"C\""))
            h->extern_c = 1;
    }
    for (int d = 0; d < sc->depth; d++) {
        if (sc->stack[d].kind == SC_EXTERN_C)
            h->extern_c = 1;
        else if (sc->stack[d].kind != SC_NAMESPACE)
            in_kernel_or_other = 1;
    }
    h->skip = in_kernel_or_other;
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

/* sk's signature from parameter tokens v[0..n), seen at `at` of the stream
 * (aliases visible there are expanded). A parameter list hipkit cannot
 * describe leaves sk->unresolved saying why (below); 0 or HK_ENOMEM. */
static int kernel_signature(const scanner *sc, const hkc_tok *at, const hkc_tok *v, int n,
                            hkc_source_kernel *sk)
{
    hkc_strbuf perr;
    hkc_strbuf_init(&perr);
    hkc_tok *params = NULL;
    int nparams = 0;
    int rc = hkc_type_names_expand_at(&sc->names, at, v, n, &params, &nparams);
    if (rc == 0)
        rc = hkc_signature_parse_tokens(params, nparams, &sk->sig, &perr);
    free(params);
    if (rc == 0)
        unknown_pointee(&sc->names, &sk->sig, &perr);
    /* A parameter hipkit cannot describe leaves the kernel refused at
     * lookup, saying why, and the module's other kernels usable: a type it
     * cannot resolve (the user may state it), a pointer to pointers or a
     * default argument (a signature without them mends it), a struct or
     * class by value, dim3 or void (nothing does). */
    const char *ut = rc == HK_EINVAL ? strstr(perr.data, "unknown type '") : NULL;
    if (ut) {
        ut += strlen("unknown type '");
        sk->by_value_class = hkc_type_names_is_class(&sc->names, ut, strcspn(ut, "'"));
    }
    if (rc == HK_EINVAL) {
        if (!perr.len)
            hkc_strbuf_puts(&perr, "its parameter list cannot be read");
        rc = 0;
    }
    /* the scan goes on: nothing here fails the module */
    if (rc == 0 && perr.len) {
        /* kept, and refused at lookup unless the user gives a signature */
        hkc_signature_free(&sk->sig);
        sk->unresolved = hkc_strbuf_take(&perr);
        rc = sk->unresolved ? 0 : HK_ENOMEM;
    }
    hkc_strbuf_free(&perr);
    return rc;
}

/* A new, zeroed kernel record at the end of the output. */
static hkc_source_kernel *next_kernel(scanner *sc)
{
    if (sc->nk == sc->capk) {
        int cap = sc->capk ? sc->capk * 2 : 8;
        hkc_source_kernel *k = realloc(sc->k, (size_t)cap * sizeof(*k));
        if (!k)
            return NULL;
        sc->k = k;
        sc->capk = cap;
    }
    hkc_source_kernel *sk = &sc->k[sc->nk];
    memset(sk, 0, sizeof(*sk));
    return sk;
}

/* `ns::name` of the kernel whose name is v[at]: the namespaces around it,
 * anonymous ones left out (their names need no qualifier). */
static char *qualified_name(const scanner *sc, const hkc_tok *name)
{
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    hkc_strbuf_puts(&s, hkc_type_names_ns_at(&sc->names, name));
    hkc_strbuf_append(&s, name->p, name->n);
    return hkc_strbuf_take(&s);
}

/* The tokens [*b, *e) of N in a `__launch_bounds__(N, ...)` among
 * v[from..to); 0 when there is none. */
static int bound_tokens(const hkc_tok *v, int n, int from, int to, int *b, int *e)
{
    for (int j = from; j + 1 < to; j++) {
        if (!hkc_tok_is(&v[j], "__launch_bounds__") || !hkc_tok_punct(&v[j + 1], '('))
            continue;
        int close = skip_parens(v, n, j + 1), end = j + 2, depth = 0;
        if (close < 0)
            return 0;
        for (; end < close; end++) {
            if (hkc_tok_punct(&v[end], '('))
                depth++;
            else if (hkc_tok_punct(&v[end], ')'))
                depth--;
            else if (depth == 0 && hkc_tok_punct(&v[end], ','))
                break;
        }
        *b = j + 2;
        *e = end;
        return 1;
    }
    return 0;
}

/* N's value when the tokens are a constant (macros are expanded by then); 0
 * when they name something (a template parameter of a template not
 * instantiated by name): the compiler then checks what the scan cannot. */
static unsigned bound_value(const hkc_tok *v, int n)
{
    long long x;
    return hkc_int_expr_eval(v, n, &x) == 0 && x > 0 && x <= 0x7fffffff ? (unsigned)x : 0;
}

/* Records the kernel defined by h, declared on `line`; its body is the
 * next scope. */
static int add_kernel(scanner *sc, const header *h, int line)
{
    const hkc_tok *name = &sc->v[h->name];
    hkc_source_kernel *sk = next_kernel(sc);
    if (!sk)
        return HK_ENOMEM;
    sk->line = line;
    int lb, le;
    if (bound_tokens(sc->v, sc->n, h->start, h->open, &lb, &le))
        sk->max_threads = bound_value(&sc->v[lb], le - lb);
    sk->extern_c = h->extern_c || was_declared_c(sc, name);
    sk->name = qualified_name(sc, name);
    if (!sk->name)
        return HK_ENOMEM;
    int rc = kernel_signature(sc, &sc->v[h->open], &sc->v[h->open + 1], h->close - h->open - 1, sk);
    if (rc) {
        free(sk->name);
        return rc;
    }
    sc->nk++;
    sc->pending = SC_KERNEL;
    sc->pending_kernel = sc->nk - 1;
    return 0;
}

/* Records the kernel template defined by h (h->tmpl is `template`). */
static int add_template(scanner *sc, const header *h, int line)
{
    const hkc_tok *v = sc->v;
    int open = h->tmpl + 1, close = -1, depth = 0;
    if (open < sc->n && hkc_tok_punct(&v[open], '<'))
        for (int j = open; j < h->name && close < 0; j++) {
            if (hkc_tok_punct(&v[j], '(')) {
                j = skip_parens(v, sc->n, j);
                if (j < 0)
                    break;
            } else if (hkc_tok_punct(&v[j], '<')) {
                depth++;
            } else if (hkc_tok_punct(&v[j], '>') && --depth == 0) {
                close = j;
            }
        }
    sc->pending = SC_KERNEL;
    sc->pending_kernel = -1;
    if (close < 0) /* not a shape instantiation could use */
        return 0;
    if (sc->ntmpl == sc->captmpl) {
        int cap = sc->captmpl ? sc->captmpl * 2 : 4;
        tmpl_rec *t = realloc(sc->tmpl, (size_t)cap * sizeof(*t));
        if (!t)
            return HK_ENOMEM;
        sc->tmpl = t;
        sc->captmpl = cap;
    }
    tmpl_rec *t = &sc->tmpl[sc->ntmpl];
    *t = (tmpl_rec){.tp_open = open, .tp_close = close, .open = h->open, .close = h->close,
                    .lb_begin = -1, .lb_end = -1, .line = line};
    bound_tokens(v, sc->n, h->start, h->open, &t->lb_begin, &t->lb_end);
    t->qname = qualified_name(sc, &v[h->name]);
    if (!t->qname)
        return HK_ENOMEM;
    sc->pending_tmpl = sc->ntmpl++;
    return 0;
}

/* The declaration at v[i] == `__global__`. Returns the index of the last
 * token it used: the scan goes on with the '{', ';' or '}' that ends it. */
static int scan_kernel(scanner *sc, int i, int *rc)
{
    header h;
    header_context(sc, i, &h);
    if (!header_shape(sc, i, &h))
        return i;
    const hkc_tok *end = &sc->v[h.end];
    if (hkc_tok_punct(end, ';') || hkc_tok_punct(end, '}')) {
        if (!h.skip && h.extern_c && h.tmpl < 0)
            *rc = push_declared(sc, &sc->v[h.name]);
    } else if (h.skip) { /* the body is pushed as an ordinary scope */
        sc->pending = SC_KERNEL;
        sc->pending_kernel = -1;
    } else if (h.tmpl >= 0) {
        *rc = add_template(sc, &h, sc->v[i].line);
    } else {
        *rc = add_kernel(sc, &h, sc->v[i].line);
    }
    return h.end - 1;
}

static int push_global(scanner *sc, const hkc_tok *name)
{
    if (sc->nglobals == sc->capglobals) {
        int cap = sc->capglobals ? sc->capglobals * 2 : 8;
        char **g = realloc(sc->globals, (size_t)cap * sizeof *g);
        if (!g)
            return HK_ENOMEM;
        sc->globals = g;
        sc->capglobals = cap;
    }
    char *q = qualified_name(sc, name);
    if (!q)
        return HK_ENOMEM;
    sc->globals[sc->nglobals++] = q;
    return 0;
}

static int is_space_word(const hkc_tok *t)
{
    return hkc_tok_is(t, "__device__") || hkc_tok_is(t, "__constant__") ||
           hkc_tok_is(t, "__managed__");
}

/* v[i] is __device__, __constant__ or __managed__ at namespace scope: when
 * it begins a variable declaration (no '(' in a declarator; templates,
 * typedefs and __shared__ left out), records each declarator's name: the
 * last word before its '[', '=', '{', ',' or ';'. Returns the index of the
 * last token looked at. */
static int scan_global(scanner *sc, int i, int *rc)
{
    const hkc_tok *v = sc->v;
    if (i > 0 && is_space_word(&v[i - 1]))
        return i; /* `__device__ __constant__`: seen from the first */
    for (int j = i - 1; j >= 0 && !is_decl_boundary(&v[j]); j--)
        if (hkc_tok_is(&v[j], "template") || hkc_tok_is(&v[j], "__shared__") ||
            hkc_tok_is(&v[j], "typedef"))
            return i;
    int angle = 0, name = -1, named = 0, j;
    for (j = i + 1; j < sc->n; j++) {
        const hkc_tok *t = &v[j];
        if (angle == 0 && (hkc_tok_punct(t, '(') || hkc_tok_is(t, "__shared__") ||
                           hkc_tok_is(t, "operator")))
            return i; /* a function, or no module variable */
        if (hkc_tok_punct(t, '<')) {
            angle++;
        } else if (hkc_tok_punct(t, '>') && angle > 0) {
            angle--;
        } else if (angle > 0) {
            continue;
        } else if (t->kind == HKC_TOK_IDENT) {
            name = j;
        } else if (hkc_tok_punct(t, '[') || hkc_tok_punct(t, '=') || hkc_tok_punct(t, '{') ||
                   hkc_tok_punct(t, ',') || hkc_tok_punct(t, ';')) {
            if (!named && name >= 0 && (*rc = push_global(sc, &v[name])))
                return j;
            named = 1;
            name = -1;
            if (hkc_tok_punct(t, ';'))
                return j - 1;
            if (hkc_tok_punct(t, ','))
                named = 0;
            if (hkc_tok_punct(t, '=') || hkc_tok_punct(t, '{') || hkc_tok_punct(t, '[')) {
                /* an initializer or a bound: skipped to the ',' or ';' (or
                 * the ']') that ends it at its own level */
                int depth = hkc_tok_punct(t, '=') ? 0 : 1;
                for (j++; j < sc->n; j++) {
                    const hkc_tok *u = &v[j];
                    if (hkc_tok_punct(u, '(') || hkc_tok_punct(u, '[') || hkc_tok_punct(u, '{'))
                        depth++;
                    else if (hkc_tok_punct(u, ')') || hkc_tok_punct(u, ']') ||
                             hkc_tok_punct(u, '}'))
                        depth--;
                    if (depth < 0 || (depth == 0 && (hkc_tok_punct(u, ',') ||
                                                     hkc_tok_punct(u, ';') ||
                                                     hkc_tok_punct(u, ']') ||
                                                     hkc_tok_punct(u, '}'))))
                        break;
                }
                if (j >= sc->n)
                    return j - 1;
                if (hkc_tok_punct(&v[j], ';'))
                    return j - 1;
                if (hkc_tok_punct(&v[j], ','))
                    named = 0;
            }
        }
    }
    return j - 1;
}

/* One parameter of a `template <...>` list. */
typedef struct tparam {
    const hkc_tok *name; /* NULL for an unnamed one (`typename`) */
    int def_begin, def_end; /* its default's tokens, or -1 */
    int pack;
} tparam;

static int opens_group(const hkc_tok *t)
{
    return hkc_tok_punct(t, '<') || hkc_tok_punct(t, '(') || hkc_tok_punct(t, '[') ||
           hkc_tok_punct(t, '{');
}

static int closes_group(const hkc_tok *t)
{
    return hkc_tok_punct(t, '>') || hkc_tok_punct(t, ')') || hkc_tok_punct(t, ']') ||
           hkc_tok_punct(t, '}');
}

/* Reads one parameter from tokens [b, e) (`typename T = float`, `int N`). */
static void read_tparam(const hkc_tok *v, int b, int e, tparam *p)
{
    *p = (tparam){.name = NULL, .def_begin = -1, .def_end = -1, .pack = 0};
    int depth = 0, eq = -1;
    for (int k = b; k < e; k++) {
        if (opens_group(&v[k]))
            depth++;
        else if (closes_group(&v[k]) && depth > 0)
            depth--;
        else if (depth == 0 && eq < 0 && hkc_tok_punct(&v[k], '='))
            eq = k;
        if (k + 1 < e && hkc_tok_punct(&v[k], '.') && hkc_tok_punct(&v[k + 1], '.'))
            p->pack = 1;
    }
    int last = eq >= 0 ? eq : e;
    if (last - b >= 2 && v[last - 1].kind == HKC_TOK_IDENT)
        p->name = &v[last - 1];
    if (eq >= 0) {
        p->def_begin = eq + 1;
        p->def_end = e;
    }
}

/* The parameters of t's `template <...>`; -1 past `cap`. */
static int template_params(const scanner *sc, const tmpl_rec *t, tparam *out, int cap)
{
    const hkc_tok *v = sc->v;
    int np = 0, depth = 0, b = t->tp_open + 1;
    for (int j = b; j <= t->tp_close; j++) {
        if (j < t->tp_close && opens_group(&v[j])) {
            depth++;
        } else if (j < t->tp_close && closes_group(&v[j]) && depth > 0) {
            depth--;
        } else if (j == t->tp_close || (depth == 0 && hkc_tok_punct(&v[j], ','))) {
            if (j > b) {
                if (np == cap)
                    return -1;
                read_tparam(v, b, j, &out[np++]);
            }
            b = j + 1;
        }
    }
    return np;
}

static int push_tokens(hkc_tokvec *out, const hkc_tok *v, int n)
{
    if (out->n + n > out->cap) {
        int cap = out->cap ? out->cap : 32;
        while (cap < out->n + n)
            cap *= 2;
        hkc_tok *g = realloc(out->v, (size_t)cap * sizeof *g);
        if (!g)
            return HK_ENOMEM;
        out->v = g;
        out->cap = cap;
    }
    memcpy(out->v + out->n, v, (size_t)n * sizeof *v);
    out->n += n;
    return 0;
}

/* t's tokens [begin, end) (its parameter list, its launch bound) with each
 * template parameter replaced by its argument of e (or its default). */
static int substitute(const scanner *sc, int begin, int end, const tparam *tp, int np,
                      const hkc_name_expr *e, hkc_tokvec *out)
{
    const hkc_tok *v = sc->v;
    int rc = 0;
    for (int j = begin; j < end && !rc; j++) {
        int q = -1;
        for (int k = 0; k < np && q < 0 && v[j].kind == HKC_TOK_IDENT; k++)
            if (tp[k].name && tp[k].name->n == v[j].n && !memcmp(tp[k].name->p, v[j].p, v[j].n))
                q = k;
        if (q < 0)
            rc = push_tokens(out, &v[j], 1);
        else if (q < e->nargs)
            rc = push_tokens(out, &e->tv.v[e->arg_begin[q]], e->arg_end[q] - e->arg_begin[q]);
        else
            rc = push_tokens(out, &v[tp[q].def_begin], tp[q].def_end - tp[q].def_begin);
    }
    return rc;
}

static const tmpl_rec *find_template(const scanner *sc, const char *qname)
{
    for (int i = 0; i < sc->ntmpl; i++)
        if (!strcmp(sc->tmpl[i].qname, qname))
            return &sc->tmpl[i];
    return NULL;
}

/* Why e names nothing the source can instantiate, into err. */
static int no_such_template(const scanner *sc, const hkc_name_expr *e, hkc_strbuf *err)
{
    hkc_strbuf_printf(err, "instantiate '%s': the source has no kernel template '%s'",
                      e->normalized, e->qname);
    for (int i = 0; i < sc->ntmpl; i++)
        hkc_strbuf_printf(err, "%s%s", i ? ", " : " (its kernel templates: ",
                          sc->tmpl[i].qname);
    hkc_strbuf_puts(err, sc->ntmpl ? ")" : " (it has no kernel templates)");
    return HK_EINVAL;
}

/* e with the defaults of the parameters it leaves out written out:
 * `scale<short>` is `scale<short, 2>`. */
static char *full_expression(const scanner *sc, const hkc_name_expr *e, const tparam *tp, int np)
{
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    hkc_strbuf_printf(&s, "%s<", e->qname);
    for (int k = 0; k < np; k++) {
        if (k)
            hkc_strbuf_puts(&s, ", ");
        if (k < e->nargs)
            hkc_tokens_join(&e->tv.v[e->arg_begin[k]], e->arg_end[k] - e->arg_begin[k], &s);
        else
            hkc_tokens_join(&sc->v[tp[k].def_begin], tp[k].def_end - tp[k].def_begin, &s);
    }
    hkc_strbuf_puts(&s, ">");
    return hkc_strbuf_take(&s);
}

/* The kernel `text` names: an instantiation of a template of the source,
 * with its parameter types as the arguments make them. */
static int instantiate(scanner *sc, const char *text, hkc_strbuf *err)
{
    hkc_name_expr e;
    int rc = hkc_name_expr_parse(text, &e, err);
    if (rc)
        return rc;
    for (int i = 0; i < sc->nk; i++)
        if (!strcmp(sc->k[i].name, e.normalized))
            goto done; /* a kernel already (or named twice) */
    const tmpl_rec *t = find_template(sc, e.qname);
    if (!t) {
        rc = no_such_template(sc, &e, err);
        goto done;
    }
    tparam tp[HKC_NAME_EXPR_MAX_ARGS];
    int np = template_params(sc, t, tp, HKC_NAME_EXPR_MAX_ARGS);
    for (int k = 0; k < np && np >= 0; k++)
        if (tp[k].pack)
            np = -1;
    if (np < 0) {
        hkc_strbuf_printf(err, "instantiate '%s': template parameter packs and lists of more "
                               "than %d parameters are not instantiated by name; instantiate it "
                               "in the source with an extern \"C\" kernel that calls it",
                          e.normalized, HKC_NAME_EXPR_MAX_ARGS);
        rc = HK_EINVAL;
        goto done;
    }
    int nargs = e.nargs < 0 ? 0 : e.nargs;
    if (nargs > np || (nargs < np && tp[nargs].def_begin < 0)) {
        int needed = 0;
        while (needed < np && tp[needed].def_begin < 0)
            needed++;
        hkc_strbuf_printf(err, "instantiate '%s': %s takes %d template argument%s (%d without a "
                               "default), %d given", e.normalized, t->qname, np, np == 1 ? "" : "s",
                          needed, nargs);
        rc = HK_EINVAL;
        goto done;
    }
    hkc_tokvec params = {0}, bound = {0};
    rc = substitute(sc, t->open + 1, t->close, tp, np, &e, &params);
    if (!rc && t->lb_begin >= 0)
        rc = substitute(sc, t->lb_begin, t->lb_end, tp, np, &e, &bound);
    hkc_source_kernel *sk = rc ? NULL : next_kernel(sc);
    if (!rc && !sk)
        rc = HK_ENOMEM;
    if (!rc) {
        sk->line = t->line;
        sk->uses_sync = t->uses_sync;
        sk->max_threads = bound.n ? bound_value(bound.v, bound.n) : 0;
        sk->name = strdup(e.normalized);
        rc = sk->name ? kernel_signature(sc, &sc->v[t->open], params.v, params.n, sk) : HK_ENOMEM;
        if (rc)
            free(sk->name);
        else
            sc->nk++;
    }
    free(params.v);
    free(bound.v);
    if (!rc && nargs < np) {
        sk->lower_as = full_expression(sc, &e, tp, np);
        if (!sk->lower_as)
            rc = HK_ENOMEM; /* sk is counted: freed with the rest */
    }
done:
    hkc_name_expr_free(&e);
    return rc;
}

/* Kernels that share a name (C++ overloads): each is kept, unresolved, so
 * that a lookup by the name says what is wrong rather than pick one; the
 * backends leave them out of their kernel tables. */
static int mark_overloads(hkc_source_kernel *k, int nk)
{
    for (int i = 0; i < nk; i++) {
        int same = 0;
        for (int j = 0; j < nk; j++)
            same += !strcmp(k[i].name, k[j].name);
        if (same < 2)
            continue;
        free(k[i].unresolved);
        hkc_strbuf why;
        hkc_strbuf_init(&why);
        hkc_strbuf_printf(&why, "the source defines %d kernels named %s (overloads)", same, k[i].name);
        k[i].unresolved = hkc_strbuf_take(&why);
        if (!k[i].unresolved)
            return HK_ENOMEM;
        k[i].overloaded = 1;
        hkc_signature_free(&k[i].sig);
        memset(&k[i].sig, 0, sizeof k[i].sig);
    }
    /* last, in their order (hkc_source_launchable) */
    for (int i = 1; i < nk; i++)
        for (int j = i; j > 0 && k[j - 1].overloaded && !k[j].overloaded; j--) {
            hkc_source_kernel t = k[j];
            k[j] = k[j - 1];
            k[j - 1] = t;
        }
    return 0;
}

static int at_namespace_scope(const scanner *sc)
{
    for (int d = 0; d < sc->depth; d++)
        if (sc->stack[d].kind != SC_NAMESPACE && sc->stack[d].kind != SC_EXTERN_C)
            return 0;
    return 1;
}

static int scan_tokens(scanner *sc)
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
            i = scan_kernel(sc, i, &rc);
        } else if (is_space_word(t) && at_namespace_scope(sc)) {
            i = scan_global(sc, i, &rc);
        }
    }
    return rc;
}

int hkc_source_scan(const char *src, const char *extra_text, hkc_source_kernel **out,
                    int *count, hkc_strbuf *err)
{
    return hkc_source_scan_all(src, extra_text, NULL, 0, out, count, NULL, NULL, err);
}

void hkc_source_globals_free(char **globals, int count)
{
    for (int i = 0; globals && i < count; i++)
        free(globals[i]);
    free(globals);
}

int hkc_source_scan_all(const char *src, const char *extra_text,
                        const char *const *instantiate_names, int ninstantiate,
                        hkc_source_kernel **out, int *count, char ***globals, int *nglobals,
                        hkc_strbuf *err)
{
    if (globals) {
        *globals = NULL;
        *nglobals = 0;
    }
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
    sc.pending_tmpl = -1;
    if (!rc)
        rc = scan_tokens(&sc);
    for (int i = 0; !rc && i < ninstantiate; i++)
        rc = instantiate(&sc, instantiate_names[i], err);
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
    /* Text as written may hold both branches of an #if: a name twice is
     * then no overload. */
    if (!rc && !notes.conditional)
        rc = mark_overloads(sc.k, sc.nk);

    if (!rc && globals) {
        *globals = sc.globals;
        *nglobals = sc.nglobals;
        sc.globals = NULL;
        sc.nglobals = 0;
    }
    hkc_source_globals_free(sc.globals, sc.nglobals);
    for (int q = 0; q < sc.ntmpl; q++)
        free(sc.tmpl[q].qname);
    free(sc.tmpl);
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
