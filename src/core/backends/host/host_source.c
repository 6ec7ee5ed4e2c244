/* The CPU backend's translation unit: the user's source, with shared memory
 * declarations rewritten, and the kernel table appended.
 *
 * `extern __shared__ T s[];` cannot be kept as it is: C++ has no storage that
 * is sized at launch, so the name must become a pointer to the block's
 * dynamic_shared. Doing it in the source, not with a macro, is what lets the
 * same spelling work inside a kernel and at namespace scope. The scan runs on
 * the core's C++ tokenizer (cpp_lexer.h), which skips comments, literals and
 * directives; braces tell a function body from a namespace (or extern "C")
 * block.
 *
 * `__shared__ T s[N];` in a function body is rewritten too, into a reference
 * to storage the runtime carves per block below a guard page, so that an
 * overrun faults instead of running through the module's thread_local data
 * into the process's heap. */
#include "host_source.h"
#include "name_expr.h"
#include "pp_text.h"

#include <stdlib.h>
#include <string.h>

#include "cpp_lexer.h"
#include "hipkit/hipkit.h"

#define MAX_DECL_TOKENS 64

/* Reads the tokens of a declaration after first (already in tok[0]) up to
 * its `;` (left in *semi). 0 when it is no plain declaration: an
 * initializer, a brace, a directive, or too long. */
static int read_decl(hkc_lexer *lx, hkc_tok *tok, int *ntok, hkc_tok *semi)
{
    for (;;) {
        hkc_lex_next(lx, semi);
        if (semi->kind == HKC_TOK_EOF || semi->kind == HKC_TOK_DIRECTIVE ||
            *ntok == MAX_DECL_TOKENS || hkc_tok_punct(semi, '#'))
            return 0;
        if (hkc_tok_punct(semi, ';'))
            return 1;
        if (hkc_tok_punct(semi, '{') || hkc_tok_punct(semi, '}') || hkc_tok_punct(semi, '='))
            return 0;
        tok[(*ntok)++] = *semi;
    }
}

/* Copies tok[1..ntok) to keep without __shared__ and attribute groups;
 * *shared says whether __shared__ was among them. -1 on an unclosed group. */
static int strip_decl(const hkc_tok *tok, int ntok, hkc_tok *keep, int *nkeep, int *shared)
{
    *nkeep = 0;
    *shared = 0;
    for (int k = 1; k < ntok; k++) {
        hkc_tok t = tok[k];
        if (hkc_tok_is(&t, "__shared__")) {
            *shared = 1;
            continue;
        }
        if (hkc_tok_is(&t, "__align__") || hkc_tok_is(&t, "alignas") || hkc_tok_is(&t, "__attribute__") ||
            hkc_tok_is(&t, "__declspec")) {
            if (k + 1 >= ntok || !hkc_tok_is(&tok[k + 1], "("))
                return -1;
            int depth = 0;
            for (k++; k < ntok; k++) {
                if (hkc_tok_is(&tok[k], "("))
                    depth++;
                else if (hkc_tok_is(&tok[k], ")") && --depth == 0)
                    break;
            }
            if (k >= ntok)
                return -1;
            continue;
        }
        if (hkc_tok_is(&t, "[") && k + 1 < ntok && hkc_tok_is(&tok[k + 1], "[")) { /* [[attr]] */
            int depth = 0;
            for (; k < ntok; k++) {
                if (hkc_tok_is(&tok[k], "["))
                    depth++;
                else if (hkc_tok_is(&tok[k], "]") && --depth == 0)
                    break;
            }
            if (k >= ntok)
                return -1;
            continue;
        }
        keep[(*nkeep)++] = t;
    }
    return 0;
}

/* Tries to read `extern __shared__ TYPE NAME[] DIMS;` from lx, whose last
 * token was `ext`. On success writes the replacement into out, leaves lx
 * just past the `;` and returns 1; else returns 0 (the caller restores lx)
 * and writes nothing. */
static int rewrite_dynamic_shared(hkc_lexer *lx, const hkc_tok *ext, int in_function,
                                  hkc_strbuf *out)
{
    hkc_tok tok[MAX_DECL_TOKENS], semi;
    int ntok = 0;
    tok[ntok++] = *ext;
    if (!read_decl(lx, tok, &ntok, &semi))
        return 0;
    /* The replacement ends with as many newlines as the declaration spans,
     * so that the lines after it keep their numbers. */
    int nl = semi.line - ext->line;
    /* tok[0] is `extern`. Drop it, __shared__ and attribute groups. */
    hkc_tok keep[MAX_DECL_TOKENS];
    int nkeep, shared;
    if (strip_decl(tok, ntok, keep, &nkeep, &shared) != 0)
        return 0;
    if (!shared)
        return 0;
    /* keep = TYPE... NAME [ ] DIMS... */
    int open = -1;
    for (int k = 0; k < nkeep; k++)
        if (hkc_tok_is(&keep[k], "[")) {
            open = k;
            break;
        }
    if (open < 2 || open + 1 >= nkeep || !hkc_tok_is(&keep[open + 1], "]"))
        return 0;
    hkc_tok var = keep[open - 1];
    if (var.kind != HKC_TOK_IDENT)
        return 0;
    for (int k = 0; k < open - 1; k++)
        if (hkc_tok_is(&keep[k], "(") || hkc_tok_is(&keep[k], ")") || hkc_tok_is(&keep[k], "["))
            return 0;

    hkc_strbuf type, dims;
    hkc_strbuf_init(&type);
    hkc_strbuf_init(&dims);
    for (int k = 0; k < open - 1; k++) {
        if (k)
            hkc_strbuf_puts(&type, " ");
        hkc_strbuf_append(&type, keep[k].p, keep[k].n);
    }
    for (int k = open + 2; k < nkeep; k++)
        hkc_strbuf_append(&dims, keep[k].p, keep[k].n);
    /* T *NAME, or T (*NAME)[4] for `extern __shared__ T NAME[][4];` */
    const char *lp = dims.len ? "(*" : "*", *rp = dims.len ? ")" : "";
    if (in_function) {
        hkc_strbuf_printf(out, "%s %s%.*s%s%s = (%s %s%s%s)hk_host_dynamic_shared();",
                          type.data, lp, (int)var.n, var.p, rp, dims.data, type.data, lp, rp,
                          dims.data);
        for (int k = 0; k < nl; k++)
            hkc_strbuf_puts(out, "\n");
    } else {
        /* At namespace scope a name must stay a name (a::NAME must work):
         * an empty object that acts as the array, on the same line. */
        hkc_strbuf_printf(out, "static const hk_host_shared_array<%s%s> %.*s{};", type.data,
                          dims.data, (int)var.n, var.p);
        for (int k = 0; k < nl; k++)
            hkc_strbuf_puts(out, "\n");
    }
    hkc_strbuf_free(&type);
    hkc_strbuf_free(&dims);
    return 1;
}

/* Tries to read `__shared__ TYPE NAME DIMS;` in a function body from lx,
 * whose last token was `sh` (`__shared__`), as rewrite_dynamic_shared does.
 * The variable becomes a reference to the block's storage for it, carved
 * from a region that ends at a guard page (hk_host_static_shared), instead
 * of a thread_local of the module: an overrun then faults rather than
 * corrupting the process. Several declarators, an initializer or a storage
 * class keep the thread_local spelling. */
static int rewrite_static_shared(hkc_lexer *lx, const hkc_tok *sh, int id, hkc_strbuf *out)
{
    hkc_tok tok[MAX_DECL_TOKENS], semi, keep[MAX_DECL_TOKENS];
    int ntok = 0, nkeep, shared;
    tok[ntok++] = *sh;
    if (!read_decl(lx, tok, &ntok, &semi) || strip_decl(tok, ntok, keep, &nkeep, &shared) != 0)
        return 0;
    int name = nkeep - 1;
    for (int k = 0; k < nkeep; k++)
        if (hkc_tok_is(&keep[k], "[")) {
            name = k - 1;
            break;
        }
    if (name < 1 || keep[name].kind != HKC_TOK_IDENT)
        return 0;
    static const char *const refuse[] = {",", "(", ")", "static", "extern", "typedef",
                                         "thread_local", "constexpr", "__shared__", "__constant__"};
    for (int k = 0; k < nkeep; k++)
        for (size_t r = 0; r < sizeof refuse / sizeof *refuse; r++)
            if (hkc_tok_is(&keep[k], refuse[r]))
                return 0;
    hkc_strbuf type, dims;
    hkc_strbuf_init(&type);
    hkc_strbuf_init(&dims);
    for (int k = 0; k < name; k++) {
        hkc_strbuf_append(&type, keep[k].p, keep[k].n);
        hkc_strbuf_puts(&type, " ");
    }
    for (int k = name + 1; k < nkeep; k++)
        hkc_strbuf_append(&dims, keep[k].p, keep[k].n);
    int n = (int)keep[name].n;
    const char *v = keep[name].p;
    hkc_strbuf_printf(out, "static const char __hk_shared_%d[] = \"%.*s\"; "
                      "%s(&%.*s)%s = *(%s(*)%s)hk_host_static_shared(__hk_shared_%d, "
                      "sizeof(%s%s), alignof(%s%s));",
                      id, n, v, type.data, n, v, dims.data, type.data, dims.data, id, type.data,
                      dims.data, type.data, dims.data);
    for (int k = 0; k < semi.line - sh->line; k++)
        hkc_strbuf_puts(out, "\n");
    hkc_strbuf_free(&type);
    hkc_strbuf_free(&dims);
    return 1;
}

/* Which kind of block each open brace began: a namespace or linkage block
 * ('n'), where a declaration is at namespace scope, or anything else ('o'). */
typedef struct scopes {
    char *kind;
    size_t n, cap;
    size_t in_body;   /* open 'o' braces */
    int ns_pending;   /* the next '{' opens a namespace or linkage block */
    int after_extern; /* the last token was an `extern` left as it is */
} scopes;

static int scopes_open(scopes *sc)
{
    if (sc->n == sc->cap) {
        size_t ncap = sc->cap ? 2 * sc->cap : 64;
        char *nk = realloc(sc->kind, ncap);
        if (!nk)
            return HK_ENOMEM;
        sc->kind = nk;
        sc->cap = ncap;
    }
    sc->kind[sc->n++] = sc->ns_pending ? 'n' : 'o';
    if (!sc->ns_pending)
        sc->in_body++;
    sc->ns_pending = 0;
    return 0;
}

/* Follows one token other than `extern` (t) through the block structure. */
static int scopes_see(scopes *sc, const hkc_tok *t)
{
    /* extern "C" { opens a linkage block: only a plain literal names one. */
    if (t->kind == HKC_TOK_STR && t->p[0] == '"') {
        if (sc->after_extern)
            sc->ns_pending = 1;
        sc->after_extern = 0;
        return 0;
    }
    sc->after_extern = 0;
    if (hkc_tok_is(t, "namespace")) {
        sc->ns_pending = 1;
    } else if (hkc_tok_punct(t, '{')) {
        return scopes_open(sc);
    } else if (hkc_tok_punct(t, '}')) {
        if (sc->n && sc->kind[--sc->n] == 'o')
            sc->in_body--;
        sc->ns_pending = 0;
    } else if (hkc_tok_punct(t, ';') || hkc_tok_punct(t, '(') || hkc_tok_punct(t, ')') ||
               hkc_tok_punct(t, '=')) {
        sc->ns_pending = 0;
    }
    return 0;
}

/* Whether source names one of C++17's special math functions, which
 * hip_runtime.h leaves out of libstdc++'s <cmath> (each unit would pay for
 * their templates: hipkit_host_device.h): a unit that may call one includes
 * them after the header. */
static int names_special_math(const char *source)
{
    static const char *const names[] = {
        "assoc_laguerre", "assoc_legendre", "beta", "comp_ellint_1", "comp_ellint_2",
        "comp_ellint_3", "cyl_bessel_i", "cyl_bessel_j", "cyl_bessel_k", "cyl_neumann",
        "ellint_1", "ellint_2", "ellint_3", "expint", "hermite", "laguerre", "legendre",
        "riemann_zeta", "sph_bessel", "sph_legendre", "sph_neumann", NULL};
    hkc_lexer lx;
    hkc_tok t;
    int after_scope = 0; /* the previous token was "::" */
    hkc_lex_init(&lx, source, strlen(source));
    for (hkc_lex_next(&lx, &t); t.kind != HKC_TOK_EOF; hkc_lex_next(&lx, &t)) {
        int was_scope = after_scope;
        after_scope = t.kind == HKC_TOK_PUNCT && t.n == 2 && !memcmp(t.p, "::", 2);
        if (t.kind != HKC_TOK_IDENT)
            continue;
        /* a call, or a qualified name: a kernel's variable named beta is neither */
        hkc_lexer ahead = lx;
        hkc_tok next;
        hkc_lex_next(&ahead, &next);
        if (!was_scope && !hkc_tok_punct(&next, '('))
            continue;
        size_t n = t.n;
        /* the float and long double forms: legendref, legendrel */
        for (int i = 0; names[i]; i++) {
            size_t m = strlen(names[i]);
            if ((n == m || (n == m + 1 && (t.p[m] == 'f' || t.p[m] == 'l'))) &&
                !memcmp(t.p, names[i], m))
                return 1;
        }
    }
    return 0;
}

/* Copies source into out with every dynamic shared declaration rewritten. */
static int rewrite_source(const char *source, hkc_strbuf *out)
{
    scopes sc = {0};
    hkc_lexer lx;
    hkc_tok t;
    size_t len = strlen(source), copied = 0;
    int rc = 0;
    hkc_lex_init(&lx, source, len);
    int stmt_start = 1, nstatic = 0; /* the last token ended a statement or opened a block */
    for (hkc_lex_next(&lx, &t); t.kind != HKC_TOK_EOF && !rc; hkc_lex_next(&lx, &t)) {
        if (t.kind == HKC_TOK_DIRECTIVE)
            continue;
        int ext = hkc_tok_is(&t, "extern");
        int stat = !ext && stmt_start && sc.in_body > 0 && hkc_tok_is(&t, "__shared__");
        stmt_start = hkc_tok_punct(&t, ';') || hkc_tok_punct(&t, '{') || hkc_tok_punct(&t, '}');
        if (!ext && !stat) {
            rc = scopes_see(&sc, &t);
            continue;
        }
        hkc_strbuf repl;
        hkc_strbuf_init(&repl);
        hkc_lexer before = lx;
        if (ext ? rewrite_dynamic_shared(&lx, &t, sc.in_body > 0, &repl)
                : rewrite_static_shared(&lx, &t, nstatic++, &repl)) {
            hkc_strbuf_append(out, source + copied, (size_t)(t.p - source) - copied);
            hkc_strbuf_append(out, repl.data, repl.len);
            copied = (size_t)(lx.p - source);
            sc.after_extern = 0;
            stmt_start = 1;
        } else {
            lx = before;
            sc.after_extern = ext;
            if (!ext)
                rc = scopes_see(&sc, &t);
        }
        hkc_strbuf_free(&repl);
    }
    free(sc.kind);
    hkc_strbuf_append(out, source + copied, len - copied);
    return rc;
}

/* A name discovery gives a kernel that is no identifier: `ns::kern` or a
 * template instantiation, in name_expr.h's spelling (it goes into the C++
 * table as it is, and into a string: no quote, backslash or newline). */
static int is_name_expression(const char *name)
{
    hkc_strbuf norm, err;
    hkc_strbuf_init(&norm);
    hkc_strbuf_init(&err);
    int ok = name && !strpbrk(name, "\"\\\n") && hkc_name_expr_normalize(name, &norm, &err) == 0 &&
             !strcmp(norm.data, name);
    hkc_strbuf_free(&norm);
    hkc_strbuf_free(&err);
    return ok;
}

/* The table hip_runtime.h's HK_HOST_KERNEL... macros turn into the list of
 * launchable kernels. */
static void put_kernel_table(const struct hkc_source_kernel *kernels, int nkernels,
                             hkc_strbuf *out)
{
    hkc_strbuf_puts(out, "\n");
    hkc_pp_line_directive(out, 1, "<hipkit kernel table>");
    for (int k = 0; k < nkernels; k++) {
        int sync = kernels[k].uses_sync ? 1 : 0;
        if (hkc_is_identifier(kernels[k].name))
            hkc_strbuf_printf(out, "HK_HOST_KERNEL(%s, %d)\n", kernels[k].name, sync);
        else /* ns::kern, reduce<float, 4>: the C++ names it, the string is its name */
            hkc_strbuf_printf(out, "HK_HOST_KERNEL_AS(__hk_expr_%d, %d, %s)\n", k, sync,
                              kernels[k].name);
    }
    hkc_strbuf_puts(out, "HK_HOST_KERNEL_TABLE_BEGIN\n");
    for (int k = 0; k < nkernels; k++)
        if (hkc_is_identifier(kernels[k].name))
            hkc_strbuf_printf(out, "HK_HOST_KERNEL_ENTRY(%s)\n", kernels[k].name);
        else
            hkc_strbuf_printf(out, "HK_HOST_KERNEL_ENTRY_AS(__hk_expr_%d, \"%s\")\n", k,
                              kernels[k].name);
    hkc_strbuf_printf(out, "HK_HOST_KERNEL_TABLE_END(%d)\n", nkernels);
    /* __launch_bounds__, which the compile erases (hipkit_host_device.h):
     * the scan's values, so a launch past one fails as on a GPU */
    hkc_strbuf_puts(out, "HK_HOST_KERNEL_BOUNDS_BEGIN");
    for (int k = 0; k < nkernels; k++)
        hkc_strbuf_printf(out, " %uu,", kernels[k].max_threads);
    hkc_strbuf_puts(out, " HK_HOST_KERNEL_BOUNDS_END\n");
}

/* The module variables, by name, address and size (hk_module_global). */
static void put_global_table(const char *const *globals, int nglobals, hkc_strbuf *out)
{
    hkc_strbuf_puts(out, "HK_HOST_GLOBALS_BEGIN\n");
    for (int g = 0; g < nglobals; g++)
        hkc_strbuf_printf(out, "HK_HOST_GLOBAL(\"%s\", %s)\n", globals[g], globals[g]);
    hkc_strbuf_puts(out, "HK_HOST_GLOBALS_END\n");
}

int hkc_host_source_prepare(const char *name, const char *source,
                            const struct hkc_source_kernel *kernels, int nkernels,
                            const char *const *globals, int nglobals, hkc_strbuf *out,
                            hkc_strbuf *err)
{
    if (!name || !source || !out || nkernels < 0 || (nkernels && !kernels)) {
        if (err)
            hkc_strbuf_puts(err, "hkc_host_source_prepare: invalid arguments");
        return HK_EINVAL;
    }
    for (int k = 0; k < nkernels; k++)
        if (!hkc_is_identifier(kernels[k].name) && !is_name_expression(kernels[k].name)) {
            if (err)
                hkc_strbuf_printf(err, "%s: kernel %d has no valid name (\"%s\")", name, k,
                                  kernels[k].name ? kernels[k].name : "(null)");
            return HK_EINVAL;
        }

    hkc_strbuf_puts(out, "#include <hip/hip_runtime.h>\n");
    if (names_special_math(source))
        hkc_strbuf_puts(out, "#if defined(__GLIBCXX__) && __has_include(<bits/specfun.h>)\n"
                             "#define _GLIBCXX_USE_STD_SPEC_FUNCS 1\n#include <bits/specfun.h>\n#endif\n");
    hkc_pp_line_directive(out, 1, name);
    int rc = rewrite_source(source, out);
    if (rc)
        return rc;
    for (int g = 0; g < nglobals; g++)
        if (!hkc_is_identifier(globals[g]) && !is_name_expression(globals[g])) {
            if (err)
                hkc_strbuf_printf(err, "%s: module variable %d has no valid name", name, g);
            return HK_EINVAL;
        }
    put_kernel_table(kernels, nkernels, out);
    put_global_table(globals, nglobals, out);
    if (out->oom) {
        if (err)
            hkc_strbuf_puts(err, "out of memory writing the host translation unit");
        return HK_ENOMEM;
    }
    return 0;
}
