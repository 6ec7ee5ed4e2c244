/* The CPU backend's translation unit: the user's source, with dynamic shared
 * memory declarations rewritten, and the kernel table appended.
 *
 * `extern __shared__ T s[];` cannot be kept as it is: C++ has no storage that
 * is sized at launch, so the name must become a pointer to the block's
 * dynamic_shared. Doing it in the source, not with a macro, is what lets the
 * same spelling work inside a kernel and at namespace scope. The scan is a
 * small tokenizer, enough to skip comments, literals and directives and to
 * tell a function body from a namespace (or extern "C") block. */
#include "host_source.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "hipkit/hipkit.h"

typedef struct span {
    const char *p;
    size_t n;
} span;

static int is_ident_start(int c) { return isalpha(c) || c == '_' || c == '$'; }
static int is_ident_char(int c) { return isalnum(c) || c == '_' || c == '$'; }

static int span_is(span t, const char *word)
{
    size_t n = strlen(word);
    return t.n == n && memcmp(t.p, word, n) == 0;
}

/* Length of the comment at s[i], or 0. Counts its newlines into *nl. */
static size_t comment_len(const char *s, size_t i, size_t len, int *nl)
{
    if (i + 1 >= len || s[i] != '/')
        return 0;
    size_t j = i + 2;
    if (s[i + 1] == '/') {
        while (j < len && s[j] != '\n') {
            if (s[j] == '\\' && j + 1 < len && s[j + 1] == '\n') {
                (*nl)++;
                j++;
            }
            j++;
        }
        return j - i;
    }
    if (s[i + 1] == '*') {
        while (j + 1 < len && !(s[j] == '*' && s[j + 1] == '/')) {
            if (s[j] == '\n')
                (*nl)++;
            j++;
        }
        return (j + 1 < len ? j + 2 : len) - i;
    }
    return 0;
}

/* Length of the quoted literal starting at s[i] (s[i] is the quote). */
static size_t quoted_len(const char *s, size_t i, size_t len, int *nl)
{
    char q = s[i];
    size_t j = i + 1;
    while (j < len && s[j] != q && s[j] != '\n') {
        if (s[j] == '\\' && j + 1 < len) {
            if (s[j + 1] == '\n')
                (*nl)++;
            j++;
        }
        j++;
    }
    return (j < len && s[j] == q ? j + 1 : j) - i;
}

/* Length of the raw string literal body starting at s[i] == '"' after an R
 * prefix: "delim( ... )delim". */
static size_t raw_len(const char *s, size_t i, size_t len, int *nl)
{
    size_t j = i + 1, d0 = j;
    while (j < len && s[j] != '(' && j - d0 < 16)
        j++;
    if (j >= len || s[j] != '(')
        return quoted_len(s, i, len, nl);
    size_t dn = j - d0;
    for (j++; j < len; j++) {
        if (s[j] == '\n')
            (*nl)++;
        if (s[j] == ')' && j + 1 + dn < len && memcmp(s + j + 1, s + d0, dn) == 0 &&
            s[j + 1 + dn] == '"')
            return j + 2 + dn - i;
    }
    return len - i;
}

/* Skips whitespace and comments; returns the number of newlines crossed. */
static int skip_blank(const char *s, size_t *i, size_t len)
{
    int nl = 0;
    for (;;) {
        if (*i >= len)
            return nl;
        char c = s[*i];
        if (c == '\n') {
            nl++;
            (*i)++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            (*i)++;
        } else if (c == '\\' && *i + 1 < len && s[*i + 1] == '\n') {
            nl++;
            *i += 2;
        } else {
            size_t n = comment_len(s, *i, len, &nl);
            if (!n)
                return nl;
            *i += n;
        }
    }
}

/* One token at s[*i] (no blanks before it): identifier, number, literal or
 * punctuator ("::" is one token). */
static span next_token(const char *s, size_t *i, size_t len, int *nl)
{
    size_t j = *i;
    if (j >= len)
        return (span){s + len, 0};
    char c = s[j];
    if (is_ident_start((unsigned char)c)) {
        while (j < len && is_ident_char((unsigned char)s[j]))
            j++;
    } else if (isdigit((unsigned char)c) ||
               (c == '.' && j + 1 < len && isdigit((unsigned char)s[j + 1]))) {
        while (j < len) {
            char d = s[j];
            if ((d == '+' || d == '-') && strchr("eEpP", s[j - 1]))
                j++;
            else if (is_ident_char((unsigned char)d) || d == '.' ||
                     (d == '\'' && j + 1 < len && isalnum((unsigned char)s[j + 1])))
                j++;
            else
                break;
        }
    } else if (c == '"' || c == '\'') {
        j += quoted_len(s, j, len, nl);
    } else if (c == ':' && j + 1 < len && s[j + 1] == ':') {
        j += 2;
    } else {
        j++;
    }
    span t = {s + *i, j - *i};
    *i = j;
    return t;
}

static void put_line_directive(hkc_strbuf *out, int line, const char *name)
{
    hkc_strbuf_printf(out, "#line %d \"", line);
    for (const char *p = name; *p; p++) {
        if (*p == '"' || *p == '\\')
            hkc_strbuf_printf(out, "\\%c", *p);
        else if ((unsigned char)*p < 0x20)
            hkc_strbuf_puts(out, "?");
        else
            hkc_strbuf_append(out, p, 1);
    }
    hkc_strbuf_puts(out, "\"\n");
}

#define MAX_DECL_TOKENS 64

/* Tries to read `extern __shared__ TYPE NAME[] DIMS;` at s[start] (the
 * `extern`). On success writes the replacement into out and returns the
 * offset just past the `;`, else returns 0 and writes nothing. */
static size_t rewrite_dynamic_shared(const char *s, size_t start, size_t len, int line,
                                     int in_function, const char *name, hkc_strbuf *out)
{
    span tok[MAX_DECL_TOKENS];
    int ntok = 0, nl = 0;
    size_t i = start;
    for (;;) {
        nl += skip_blank(s, &i, len);
        if (i >= len || ntok == MAX_DECL_TOKENS)
            return 0;
        if (s[i] == '#')
            return 0;
        span t = next_token(s, &i, len, &nl);
        if (span_is(t, ";"))
            break;
        if (span_is(t, "{") || span_is(t, "}") || span_is(t, "="))
            return 0;
        tok[ntok++] = t;
    }
    /* tok[0] is `extern`. Drop it, __shared__ and attribute groups. */
    span keep[MAX_DECL_TOKENS];
    int nkeep = 0, shared = 0;
    for (int k = 1; k < ntok; k++) {
        span t = tok[k];
        if (span_is(t, "__shared__")) {
            shared = 1;
            continue;
        }
        if (span_is(t, "__align__") || span_is(t, "alignas") || span_is(t, "__attribute__") ||
            span_is(t, "__declspec")) {
            if (k + 1 >= ntok || !span_is(tok[k + 1], "("))
                return 0;
            int depth = 0;
            for (k++; k < ntok; k++) {
                if (span_is(tok[k], "("))
                    depth++;
                else if (span_is(tok[k], ")") && --depth == 0)
                    break;
            }
            if (k >= ntok)
                return 0;
            continue;
        }
        if (span_is(t, "[") && k + 1 < ntok && span_is(tok[k + 1], "[")) { /* [[attr]] */
            int depth = 0;
            for (; k < ntok; k++) {
                if (span_is(tok[k], "["))
                    depth++;
                else if (span_is(tok[k], "]") && --depth == 0)
                    break;
            }
            if (k >= ntok)
                return 0;
            continue;
        }
        keep[nkeep++] = t;
    }
    if (!shared)
        return 0;
    /* keep = TYPE... NAME [ ] DIMS... */
    int open = -1;
    for (int k = 0; k < nkeep; k++)
        if (span_is(keep[k], "[")) {
            open = k;
            break;
        }
    if (open < 2 || open + 1 >= nkeep || !span_is(keep[open + 1], "]"))
        return 0;
    span var = keep[open - 1];
    if (!is_ident_start((unsigned char)var.p[0]))
        return 0;
    for (int k = 0; k < open - 1; k++)
        if (span_is(keep[k], "(") || span_is(keep[k], ")") || span_is(keep[k], "["))
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
        (void)line; /* same line: no #line needed */
        (void)name;
        /* At namespace scope a name must stay a name (a::NAME must work):
         * an empty object that acts as the array, on the same line. */
        hkc_strbuf_printf(out, "static const hk_host_shared_array<%s%s> %.*s{};", type.data,
                          dims.data, (int)var.n, var.p);
        for (int k = 0; k < nl; k++)
            hkc_strbuf_puts(out, "\n");
    }
    hkc_strbuf_free(&type);
    hkc_strbuf_free(&dims);
    return i;
}

static int valid_identifier(const char *p)
{
    if (!p || !is_ident_start((unsigned char)*p))
        return 0;
    for (; *p; p++)
        if (!is_ident_char((unsigned char)*p))
            return 0;
    return 1;
}

int hkc_host_source_prepare(const char *name, const char *source,
                            const struct hkc_source_kernel *kernels, int nkernels,
                            hkc_strbuf *out, hkc_strbuf *err)
{
    if (!name || !source || !out || nkernels < 0 || (nkernels && !kernels)) {
        if (err)
            hkc_strbuf_puts(err, "hkc_host_source_prepare: invalid arguments");
        return HK_EINVAL;
    }
    for (int k = 0; k < nkernels; k++)
        if (!valid_identifier(kernels[k].name)) {
            if (err)
                hkc_strbuf_printf(err, "%s: kernel %d has no valid name (\"%s\")", name, k,
                                  kernels[k].name ? kernels[k].name : "(null)");
            return HK_EINVAL;
        }

    hkc_strbuf_puts(out, "#include <hip/hip_runtime.h>\n");
    put_line_directive(out, 1, name);

    /* Brace kinds: 'n' namespace or linkage block, 'o' anything else. */
    char *braces = NULL;
    size_t nbraces = 0, cap = 0, in_body = 0; /* in_body counts 'o' braces */
    int ns_pending = 0, after_extern = 0;
    const char *s = source;
    size_t len = strlen(source), i = 0, copied = 0;
    int line = 1, at_bol = 1;

    while (i < len) {
        char c = s[i];
        if (c == '\n') {
            line++;
            at_bol = 1;
            i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            i++;
            continue;
        }
        int nl = 0;
        size_t n = comment_len(s, i, len, &nl);
        if (n) {
            i += n;
            line += nl;
            continue;
        }
        if (c == '#' && at_bol) { /* a directive, with its continuation lines */
            while (i < len && s[i] != '\n') {
                if (s[i] == '\\' && i + 1 < len && s[i + 1] == '\n') {
                    line++;
                    i++;
                } else if (s[i] == '/' && (n = comment_len(s, i, len, &nl))) {
                    i += n - 1;
                }
                i++;
            }
            continue;
        }
        at_bol = 0;
        size_t tstart = i;
        span t = next_token(s, &i, len, &nl);
        /* Raw strings: the prefix was read as an identifier. */
        if (i < len && s[i] == '"' && t.n <= 3 && t.p[t.n - 1] == 'R' &&
            (span_is(t, "R") || span_is(t, "LR") || span_is(t, "uR") || span_is(t, "UR") ||
             span_is(t, "u8R"))) {
            i += raw_len(s, i, len, &nl);
            line += nl;
            continue;
        }
        line += nl;
        if (t.p[0] == '"') {
            if (after_extern)
                ns_pending = 1; /* extern "C" { */
            after_extern = 0;
            continue;
        }
        after_extern = 0;
        if (span_is(t, "extern")) {
            hkc_strbuf repl;
            hkc_strbuf_init(&repl);
            size_t end = rewrite_dynamic_shared(s, tstart, len, line, in_body > 0, name, &repl);
            if (end) {
                hkc_strbuf_append(out, s + copied, tstart - copied);
                hkc_strbuf_append(out, repl.data, repl.len);
                for (size_t k = tstart; k < end; k++)
                    if (s[k] == '\n')
                        line++;
                i = copied = end;
                hkc_strbuf_free(&repl);
                continue;
            }
            hkc_strbuf_free(&repl);
            after_extern = 1;
        } else if (span_is(t, "namespace")) {
            ns_pending = 1;
        } else if (span_is(t, "{")) {
            if (nbraces == cap) {
                size_t ncap = cap ? 2 * cap : 64;
                char *nb = realloc(braces, ncap);
                if (!nb) {
                    free(braces);
                    return HK_ENOMEM;
                }
                braces = nb;
                cap = ncap;
            }
            braces[nbraces++] = ns_pending ? 'n' : 'o';
            if (!ns_pending)
                in_body++;
            ns_pending = 0;
        } else if (span_is(t, "}")) {
            if (nbraces && braces[--nbraces] == 'o')
                in_body--;
            ns_pending = 0;
        } else if (span_is(t, ";") || span_is(t, "(") || span_is(t, ")") || span_is(t, "=")) {
            ns_pending = 0;
        }
    }
    free(braces);
    hkc_strbuf_append(out, s + copied, len - copied);

    hkc_strbuf_puts(out, "\n");
    put_line_directive(out, 1, "<hipkit kernel table>");
    for (int k = 0; k < nkernels; k++)
        hkc_strbuf_printf(out, "HK_HOST_KERNEL(%s, %d)\n", kernels[k].name,
                          kernels[k].uses_sync ? 1 : 0);
    hkc_strbuf_puts(out, "HK_HOST_KERNEL_TABLE_BEGIN\n");
    for (int k = 0; k < nkernels; k++)
        hkc_strbuf_printf(out, "HK_HOST_KERNEL_ENTRY(%s)\n", kernels[k].name);
    hkc_strbuf_printf(out, "HK_HOST_KERNEL_TABLE_END(%d)\n", nkernels);
    if (out->oom) {
        if (err)
            hkc_strbuf_puts(err, "out of memory writing the host translation unit");
        return HK_ENOMEM;
    }
    return 0;
}
