/* Finding the kernels in HIP source: the scanner looks for the shape
 * `__global__ ... void NAME ( ... ) {` at namespace scope (or in extern "C"
 * blocks) over the core's C++ tokens; it is not a C++ parser. */
#include "internal.h"

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
static void note_directive_sync(const hkc_tok *directive, void *found)
{
    hkc_lexer lx;
    hkc_tok t;
    hkc_lex_init_directive(&lx, directive);
    for (hkc_lex_next(&lx, &t); t.kind != HKC_TOK_EOF; hkc_lex_next(&lx, &t))
        if (t.kind == HKC_TOK_IDENT && is_sync_name(t.p, t.n))
            *(int *)found = 1;
}

typedef enum scope_kind { SC_OTHER, SC_EXTERN_C, SC_NAMESPACE, SC_KERNEL } scope_kind;

typedef struct scope {
    scope_kind kind;
    int kernel; /* SC_KERNEL: index in the output */
} scope;

typedef struct scan_state {
    hkc_source_kernel *k;
    int n, cap;
    char **declared_c; /* names declared extern "C" without a body */
    int ndeclared, capdeclared;
} scan_state;

void hkc_source_kernels_free(hkc_source_kernel *k, int count)
{
    if (!k)
        return;
    for (int i = 0; i < count; i++) {
        free(k[i].name);
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

static int push_declared(scan_state *st, const hkc_tok *name)
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

static int was_declared_c(const scan_state *st, const hkc_tok *name)
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
    int found = 0;
    if (hkc_tokenize(text, strlen(text), note_directive_sync, &found, &tv))
        return 1; /* out of memory: stay conservative */
    for (int i = 0; i < tv.n && !found; i++)
        if (tv.v[i].kind == HKC_TOK_IDENT && is_sync_name(tv.v[i].p, tv.v[i].n))
            found = 1;
    free(tv.v);
    return found;
}

int hkc_source_scan(const char *src, const char *extra_text, hkc_source_kernel **out,
                    int *count, hkc_strbuf *err)
{
    hkc_tokvec tv = {0};
    scope *stack = NULL;
    int depth = 0, cap = 0;
    scan_state st = {0};
    int outside_sync = 0;
    int rc = 0;

    *out = NULL;
    *count = 0;
    if (!src)
        src = "";
    rc = hkc_tokenize(src, strlen(src), note_directive_sync, &outside_sync, &tv);
    if (rc)
        return rc;
    if (extra_text && !outside_sync)
        outside_sync = scan_extra_sync(extra_text);

    const hkc_tok *v = tv.v;
    int n = tv.n - 1; /* without the final HKC_TOK_EOF */
    scope_kind pending = SC_OTHER;
    int pending_kernel = -1;

    for (int i = 0; i < n; i++) {
        const hkc_tok *t = &v[i];

        if (hkc_tok_punct(t, '{')) {
            if (depth == cap) {
                int c2 = cap ? cap * 2 : 16;
                scope *s2 = realloc(stack, (size_t)c2 * sizeof(*s2));
                if (!s2) {
                    rc = HK_ENOMEM;
                    goto done;
                }
                stack = s2;
                cap = c2;
            }
            stack[depth].kind = pending;
            stack[depth].kernel = pending_kernel;
            depth++;
            pending = SC_OTHER;
            pending_kernel = -1;
            continue;
        }
        if (hkc_tok_punct(t, '}')) {
            if (depth > 0)
                depth--;
            pending = SC_OTHER;
            continue;
        }
        if (hkc_tok_punct(t, ';')) {
            pending = SC_OTHER;
            continue;
        }
        if (t->kind != HKC_TOK_IDENT)
            continue;

        if (is_sync_name(t->p, t->n)) {
            /* Inside a skipped kernel (template, namespace) it concerns no
             * recorded kernel: kernels do not call each other. */
            int d = depth - 1;
            while (d >= 0 && stack[d].kind != SC_KERNEL)
                d--;
            if (d < 0)
                outside_sync = 1;
            else if (stack[d].kernel >= 0)
                st.k[stack[d].kernel].uses_sync = 1;
            continue;
        }
        if (hkc_tok_is(t, "namespace")) {
            pending = SC_NAMESPACE;
            continue;
        }
        if (hkc_tok_is(t, "extern") && i + 2 < n && v[i + 1].kind == HKC_TOK_STR &&
            hkc_tok_is(&v[i + 1], "\"C\"") && hkc_tok_punct(&v[i + 2], '{')) {
            pending = SC_EXTERN_C;
            i++; /* the '{' is handled by the loop */
            continue;
        }
        if (!hkc_tok_is(t, "__global__"))
            continue;

        /* A kernel header: look back to the start of the declaration for
         * `template` and `extern "C"`. */
        int is_template = 0, extern_c = 0, in_ns = 0, in_kernel_or_other = 0;
        for (int j = i - 1; j >= 0 && !is_decl_boundary(&v[j]); j--) {
            if (hkc_tok_is(&v[j], "template"))
                is_template = 1;
            if (hkc_tok_is(&v[j], "extern") && v[j + 1].kind == HKC_TOK_STR && hkc_tok_is(&v[j + 1], "\"C\""))
                extern_c = 1;
        }
        for (int d = 0; d < depth; d++) {
            if (stack[d].kind == SC_EXTERN_C)
                extern_c = 1;
            else if (stack[d].kind == SC_NAMESPACE)
                in_ns = 1;
            else
                in_kernel_or_other = 1;
        }

        /* Forward: the first NAME ( that is no attribute-like keyword. */
        int j = i + 1, name_i = -1;
        for (; j < n; j++) {
            if (is_decl_boundary(&v[j]))
                break;
            if (hkc_tok_punct(&v[j], '(')) {
                const hkc_tok *prev = &v[j - 1];
                if (prev->kind == HKC_TOK_IDENT && !hkc_tok_is(prev, "__launch_bounds__") &&
                    !hkc_tok_is(prev, "__attribute__") && !hkc_tok_is(prev, "__declspec") &&
                    !hkc_tok_is(prev, "alignas") && !hkc_tok_is(prev, "__global__")) {
                    name_i = j - 1;
                    break;
                }
                j = skip_parens(v, n, j);
                if (j < 0)
                    break;
            }
        }
        if (name_i < 0 || j < 0)
            continue;
        int close = skip_parens(v, n, j);
        if (close < 0)
            continue;
        /* Between ')' and '{' or ';': attributes at most. */
        int k = close + 1;
        while (k < n && !is_decl_boundary(&v[k])) {
            if (hkc_tok_punct(&v[k], '(')) {
                k = skip_parens(v, n, k);
                if (k < 0)
                    break;
            }
            k++;
        }
        if (k < 0 || k >= n)
            continue;
        const hkc_tok *name = &v[name_i];
        int skip = is_template || in_ns || in_kernel_or_other;
        if (hkc_tok_punct(&v[k], ';') || hkc_tok_punct(&v[k], '}')) {
            if (!skip && extern_c && (rc = push_declared(&st, name)) != 0)
                goto done;
            i = k - 1; /* the loop handles the ';' or '}' */
            continue;
        }
        /* A definition: v[k] is '{'. */
        if (skip) {
            pending = SC_KERNEL;
            pending_kernel = -1;
            i = k - 1; /* the loop pushes the body as an ordinary scope */
            continue;
        }
        if (st.n == st.cap) {
            int c2 = st.cap ? st.cap * 2 : 8;
            hkc_source_kernel *k2 = realloc(st.k, (size_t)c2 * sizeof(*k2));
            if (!k2) {
                rc = HK_ENOMEM;
                goto done;
            }
            st.k = k2;
            st.cap = c2;
        }
        hkc_source_kernel *sk = &st.k[st.n];
        memset(sk, 0, sizeof(*sk));
        sk->line = t->line;
        sk->extern_c = extern_c || was_declared_c(&st, name);
        hkc_strbuf perr;
        hkc_strbuf_init(&perr);
        rc = hkc_signature_parse_tokens(&v[j + 1], close - j - 1, &sk->sig, &perr);
        if (rc) {
            if (rc == HK_EINVAL)
                hkc_strbuf_printf(err, "kernel '%.*s' (line %d): %s", (int)name->n, name->p,
                                  sk->line, perr.data);
            hkc_strbuf_free(&perr);
            goto done;
        }
        hkc_strbuf_free(&perr);
        sk->name = strndup(name->p, name->n);
        if (!sk->name) {
            hkc_signature_free(&sk->sig);
            rc = HK_ENOMEM;
            goto done;
        }
        st.n++;
        pending = SC_KERNEL;
        pending_kernel = st.n - 1;
        i = k - 1; /* next iteration sees the '{' */
    }

    if (outside_sync)
        for (int q = 0; q < st.n; q++)
            st.k[q].uses_sync = 1;

done:
    for (int q = 0; q < st.ndeclared; q++)
        free(st.declared_c[q]);
    free(st.declared_c);
    free(stack);
    free(tv.v);
    if (rc) {
        hkc_source_kernels_free(st.k, st.n);
        return rc;
    }
    *out = st.k;
    *count = st.n;
    return 0;
}
