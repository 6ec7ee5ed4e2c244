/* Aliases and class names of a token stream (see type_alias.h). */
#include "type_alias.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipkit/hipkit.h"

static int push_alias(hkc_type_names *t, const hkc_tok *name, const hkc_tok *type, int ntype,
                      const char *ns)
{
    /* `typedef struct X X;` names the class, it aliases nothing new */
    for (int i = 0; i < ntype; i++)
        if (type[i].n == name->n && !memcmp(type[i].p, name->p, name->n))
            return 0;
    hkc_alias *a = realloc(t->aliases, (size_t)(t->naliases + 1) * sizeof *a);
    if (!a)
        return HK_ENOMEM;
    t->aliases = a;
    a[t->naliases] = (hkc_alias){.name = name, .type = type, .ntype = ntype};
    snprintf(a[t->naliases].ns, sizeof a[t->naliases].ns, "%s", ns);
    t->naliases++;
    return 0;
}

static int push_class(hkc_type_names *t, const hkc_tok *name)
{
    const hkc_tok **c = realloc(t->classes, (size_t)(t->nclasses + 1) * sizeof *c);
    if (!c)
        return HK_ENOMEM;
    t->classes = c;
    c[t->nclasses++] = name;
    return 0;
}

/* typedef struct {...} NAME; names a class too */
static int typedef_struct_name(const hkc_tok *v, int n, int i, hkc_type_names *t)
{
    if (i + 2 >= n || !(hkc_tok_is(&v[i + 1], "struct") || hkc_tok_is(&v[i + 1], "union")))
        return 0;
    for (int j = i + 2, depth = 0; j < n; j++) {
        depth += hkc_tok_punct(&v[j], '{') - hkc_tok_punct(&v[j], '}');
        if (depth == 0 && hkc_tok_punct(&v[j], ';'))
            return v[j - 1].kind == HKC_TOK_IDENT ? push_class(t, &v[j - 1]) : 0;
    }
    return 0;
}

/* The ';' ending the declaration that starts at v[i], or -1 when a '(' or
 * '{' comes first (a function type, a body: not a plain alias). */
static int plain_end(const hkc_tok *v, int n, int i)
{
    for (; i < n; i++) {
        if (hkc_tok_punct(&v[i], ';'))
            return i;
        if (hkc_tok_punct(&v[i], '(') || hkc_tok_punct(&v[i], '{') || hkc_tok_punct(&v[i], '['))
            return -1;
    }
    return -1;
}

/* `typedef TYPE... NAME;` and `using NAME = TYPE...;` */
static int collect_alias(const hkc_tok *v, int n, int i, const char *ns, hkc_type_names *t)
{
    if (hkc_tok_is(&v[i], "typedef")) {
        int end = plain_end(v, n, i + 1);
        if (end > i + 2 && v[end - 1].kind == HKC_TOK_IDENT)
            return push_alias(t, &v[end - 1], &v[i + 1], end - 1 - (i + 1), ns);
    } else if (i + 3 < n && v[i + 1].kind == HKC_TOK_IDENT && hkc_tok_punct(&v[i + 2], '=')) {
        int end = plain_end(v, n, i + 3);
        if (end > i + 3)
            return push_alias(t, &v[i + 1], &v[i + 3], end - (i + 3), ns);
    }
    return 0;
}

/* The braces open at a point: namespaces (and extern "C" blocks, which
 * change no scope) are where aliases count; any other brace hides them. */
typedef struct brace {
    int is_ns;
    size_t ns_len;  /* length of the path before this brace */
    int region;     /* its region, for a namespace; -1 else */
} brace;

#define MAX_BRACES 256

typedef struct walk {
    brace st[MAX_BRACES];
    int depth, hidden; /* hidden: braces open that are not namespaces */
    char ns[160];
    int pending_ns;    /* the next '{' opens a namespace named ns_next */
    char ns_next[128];
} walk;

static int open_brace(walk *w, hkc_type_names *t, const hkc_tok *at)
{
    brace b = {.is_ns = w->pending_ns, .ns_len = strlen(w->ns), .region = -1};
    if (b.is_ns && !w->hidden) {
        size_t len = strlen(w->ns);
        if (w->ns_next[0])
            snprintf(w->ns + len, sizeof w->ns - len, "%s::", w->ns_next);
        hkc_ns_region *r = realloc(t->regions, (size_t)(t->nregions + 1) * sizeof *r);
        if (!r)
            return HK_ENOMEM;
        t->regions = r;
        r[t->nregions] = (hkc_ns_region){.open = at, .close = NULL};
        snprintf(r[t->nregions].ns, sizeof r[t->nregions].ns, "%s", w->ns);
        b.region = t->nregions++;
    } else if (!b.is_ns) {
        w->hidden++;
    }
    if (w->depth < MAX_BRACES)
        w->st[w->depth] = b;
    w->depth++;
    w->pending_ns = 0;
    return 0;
}

static void close_brace(walk *w, hkc_type_names *t, const hkc_tok *at)
{
    if (w->depth == 0)
        return;
    w->depth--;
    if (w->depth >= MAX_BRACES)
        return;
    brace b = w->st[w->depth];
    if (!b.is_ns && w->hidden > 0)
        w->hidden--;
    if (b.region >= 0)
        t->regions[b.region].close = at;
    w->ns[b.ns_len] = 0;
}

int hkc_type_names_collect(const hkc_tok *v, int n, hkc_type_names *out)
{
    memset(out, 0, sizeof *out);
    walk *w = calloc(1, sizeof *w);
    if (!w)
        return HK_ENOMEM;
    int r = 0;
    for (int i = 0; i < n && !r; i++) {
        const hkc_tok *x = &v[i];
        if (hkc_tok_punct(x, '{')) {
            r = open_brace(w, out, x);
        } else if (hkc_tok_punct(x, '}')) {
            close_brace(w, out, x);
        } else if (hkc_tok_punct(x, ';') || hkc_tok_punct(x, '=')) {
            w->pending_ns = 0; /* `namespace fs = a::b;`, `using namespace a;` open nothing */
        } else if (hkc_tok_is(x, "namespace")) {
            w->pending_ns = 1;
            w->ns_next[0] = 0;
            /* `namespace a`, or C++17's `namespace a::b` */
            size_t len = 0;
            for (int j = i + 1; j < n && len < sizeof w->ns_next &&
                                (v[j].kind == HKC_TOK_IDENT || hkc_tok_is(&v[j], "::"));
                 j++)
                len += (size_t)snprintf(w->ns_next + len, sizeof w->ns_next - len, "%.*s",
                                        (int)v[j].n, v[j].p);
        } else if (hkc_tok_is(x, "extern") && i + 2 < n && v[i + 1].kind == HKC_TOK_STR &&
                   hkc_tok_punct(&v[i + 2], '{')) {
            w->pending_ns = 1; /* extern "C" { } changes no scope */
            w->ns_next[0] = 0;
        } else if (x->kind != HKC_TOK_IDENT) {
            continue;
        } else if ((hkc_tok_is(x, "typedef") || hkc_tok_is(x, "using")) && !w->hidden) {
            r = collect_alias(v, n, i, w->ns, out);
            if (!r && hkc_tok_is(x, "typedef"))
                r = typedef_struct_name(v, n, i, out);
        } else if ((hkc_tok_is(x, "struct") || hkc_tok_is(x, "class") || hkc_tok_is(x, "union")) &&
                   i + 1 < n && v[i + 1].kind == HKC_TOK_IDENT) {
            r = push_class(out, &v[i + 1]);
        }
    }
    free(w);
    return r;
}

void hkc_type_names_free(hkc_type_names *t)
{
    free(t->aliases);
    free(t->classes);
    free(t->regions);
    memset(t, 0, sizeof *t);
}

int hkc_type_names_is_class(const hkc_type_names *t, const char *p, size_t len)
{
    for (int i = 0; i < t->nclasses; i++)
        if (t->classes[i]->n == len && !memcmp(t->classes[i]->p, p, len))
            return 1;
    return 0;
}

/* The namespace of the point `at` of the stream: the innermost region. */
const char *hkc_type_names_ns_at(const hkc_type_names *t, const hkc_tok *at)
{
    const char *ns = "";
    size_t best = 0;
    for (int i = 0; i < t->nregions; i++) {
        const hkc_ns_region *r = &t->regions[i];
        if (r->open < at && (!r->close || at < r->close) && strlen(r->ns) >= best) {
            ns = r->ns;
            best = strlen(r->ns);
        }
    }
    return ns;
}

/* The alias a token names as seen at `at` (declared before it, in its
 * namespace or an enclosing one; the innermost, then the last); NULL when
 * none. */
static const hkc_alias *find_alias(const hkc_type_names *t, const hkc_tok *w, const hkc_tok *at,
                                   const char *ns)
{
    if (w->kind != HKC_TOK_IDENT)
        return NULL;
    const hkc_alias *best = NULL;
    for (int i = 0; i < t->naliases; i++) {
        const hkc_alias *a = &t->aliases[i];
        size_t len = strlen(a->ns);
        if (a->name >= at || a->name->n != w->n || memcmp(a->name->p, w->p, w->n) ||
            strncmp(a->ns, ns, len))
            continue;
        if (!best || len >= strlen(best->ns))
            best = a;
    }
    return best;
}

/* One round of expansion; *changed says whether any alias was replaced. */
static int expand_once(const hkc_type_names *t, const hkc_tok *at, const char *ns,
                       const hkc_tok *v, int n, hkc_tok **out, int *nout, int *changed)
{
    int cap = n;
    for (int i = 0; i < n; i++) {
        const hkc_alias *a = find_alias(t, &v[i], at, ns);
        cap += a ? a->ntype : 0;
    }
    hkc_tok *o = malloc((size_t)(cap ? cap : 1) * sizeof *o);
    if (!o)
        return HK_ENOMEM;
    int k = 0;
    *changed = 0;
    for (int i = 0; i < n; i++) {
        /* a qualified name (ns::real) is someone else's: leave it */
        const hkc_alias *a =
            i > 0 && hkc_tok_is(&v[i - 1], "::") ? NULL : find_alias(t, &v[i], at, ns);
        int is_param_name = i + 1 == n || hkc_tok_punct(&v[i + 1], ',');
        if (a && !is_param_name) {
            for (int j = 0; j < a->ntype; j++)
                o[k++] = a->type[j];
            *changed = 1;
        } else {
            o[k++] = v[i];
        }
    }
    *out = o;
    *nout = k;
    return 0;
}

int hkc_type_names_expand(const hkc_type_names *t, const hkc_tok *v, int n, hkc_tok **out,
                          int *nout)
{
    /* where the list stands: aliases declared after it are not seen, and
     * its namespace decides which are */
    return hkc_type_names_expand_at(t, v, v, n, out, nout);
}

int hkc_type_names_expand_at(const hkc_type_names *t, const hkc_tok *at, const hkc_tok *v, int n,
                             hkc_tok **out, int *nout)
{
    hkc_tok *cur = malloc((size_t)(n ? n : 1) * sizeof *cur);
    if (!cur)
        return HK_ENOMEM;
    const char *ns = hkc_type_names_ns_at(t, at);
    memcpy(cur, v, (size_t)n * sizeof *cur);
    int ncur = n, changed = 1;
    for (int depth = 0; depth < 8 && changed; depth++) {
        hkc_tok *next;
        int nnext;
        if (expand_once(t, at, ns, cur, ncur, &next, &nnext, &changed) != 0) {
            free(cur);
            return HK_ENOMEM;
        }
        free(cur);
        cur = next;
        ncur = nnext;
    }
    *out = cur;
    *nout = ncur;
    return 0;
}
