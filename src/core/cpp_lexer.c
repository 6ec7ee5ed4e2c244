/* The one C++ tokenizer of the core (see cpp_lexer.h). */
#include "cpp_lexer.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "hipkit/hipkit.h"

void hkc_lex_init(hkc_lexer *lx, const char *s, size_t n)
{
    lx->p = s;
    lx->end = s + n;
    lx->line = 1;
    lx->bol = 1;
    lx->in_pp = 0;
}

void hkc_lex_init_directive(hkc_lexer *lx, const hkc_tok *directive)
{
    lx->p = directive->p + 1;
    lx->end = directive->p + directive->n;
    lx->line = directive->line;
    /* A directive holds no newline of its own: no '#' in it starts another. */
    lx->bol = 0;
    lx->in_pp = 0;
}

static int is_ident_start(int c) { return isalpha(c) || c == '_' || c == '$'; }
static int is_ident_char(int c) { return isalnum(c) || c == '_' || c == '$'; }

int hkc_is_identifier(const char *s)
{
    if (!s || !is_ident_start((unsigned char)*s))
        return 0;
    for (; *s; s++)
        if (!is_ident_char((unsigned char)*s))
            return 0;
    return 1;
}

/* Skips whitespace, comments and line splices. Inside a directive, stops at
 * the newline that ends it (and clears in_pp). */
static void lex_space(hkc_lexer *lx)
{
    while (lx->p < lx->end) {
        char c = *lx->p;
        if (c == '\\' && lx->p + 1 < lx->end &&
            (lx->p[1] == '\n' || (lx->p[1] == '\r' && lx->p + 2 < lx->end && lx->p[2] == '\n'))) {
            lx->p += lx->p[1] == '\n' ? 2 : 3;
            lx->line++;
        } else if (c == '\n') {
            if (lx->in_pp) {
                lx->in_pp = 0;
                return;
            }
            lx->p++;
            lx->line++;
            lx->bol = 1;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            lx->p++;
        } else if (c == '/' && lx->p + 1 < lx->end && lx->p[1] == '/') {
            /* Up to the newline; a splice continues the comment. */
            while (lx->p < lx->end && *lx->p != '\n') {
                if (*lx->p == '\\' && lx->p + 1 < lx->end && lx->p[1] == '\n') {
                    lx->p++;
                    lx->line++;
                }
                lx->p++;
            }
        } else if (c == '/' && lx->p + 1 < lx->end && lx->p[1] == '*') {
            lx->p += 2;
            while (lx->p < lx->end && !(*lx->p == '*' && lx->p + 1 < lx->end && lx->p[1] == '/')) {
                if (*lx->p == '\n')
                    lx->line++;
                lx->p++;
            }
            lx->p = lx->p < lx->end ? lx->p + 2 : lx->end;
        } else {
            return;
        }
    }
}

/* A quoted literal starting at the opening quote q. */
static void lex_quoted(hkc_lexer *lx, char q)
{
    lx->p++;
    while (lx->p < lx->end && *lx->p != q && *lx->p != '\n') {
        if (*lx->p == '\\' && lx->p + 1 < lx->end) {
            if (lx->p[1] == '\n')
                lx->line++;
            lx->p++;
        }
        lx->p++;
    }
    if (lx->p < lx->end && *lx->p == q)
        lx->p++;
}

/* R"delim( ... )delim" starting at the quote. */
static void lex_raw(hkc_lexer *lx)
{
    const char *d = lx->p + 1;
    const char *open = memchr(d, '(', (size_t)(lx->end - d));
    if (!open || open - d > 16) {
        lex_quoted(lx, '"');
        return;
    }
    size_t dn = (size_t)(open - d);
    const char *q = open + 1;
    for (; q < lx->end; q++) {
        if (*q == '\n')
            lx->line++;
        if (*q == ')' && (size_t)(lx->end - q) > dn + 1 && memcmp(q + 1, d, dn) == 0 &&
            q[1 + dn] == '"') {
            lx->p = q + dn + 2;
            return;
        }
    }
    lx->p = lx->end;
}

/* A directive from its '#': its tokens are lexed (a literal or a comment may
 * hide a newline) up to the newline that ends it, which stays unread. */
static void lex_directive(hkc_lexer *lx)
{
    lx->in_pp = 1;
    lx->p++; /* '#' */
    hkc_tok t;
    do
        hkc_lex_next(lx, &t);
    while (t.kind != HKC_TOK_EOF);
    lx->in_pp = 0;
}

/* An identifier, or a literal glued to its encoding prefix (u8"", LR"()"). */
static void lex_word(hkc_lexer *lx, hkc_tok *t)
{
    const char *s = t->p;
    while (lx->p < lx->end && is_ident_char((unsigned char)*lx->p))
        lx->p++;
    size_t n = (size_t)(lx->p - s);
    t->kind = HKC_TOK_IDENT;
    if (lx->p < lx->end && (*lx->p == '"' || *lx->p == '\'')) {
        int raw = n >= 1 && s[n - 1] == 'R' && *lx->p == '"';
        int pre = (n == 1 && strchr("uUL", s[0])) || (n == 2 && memcmp(s, "u8", 2) == 0);
        int rpre = raw && (n == 1 || (n == 2 && strchr("uUL", s[0])) ||
                           (n == 3 && memcmp(s, "u8", 2) == 0));
        if (rpre) {
            lex_raw(lx);
            t->kind = HKC_TOK_STR;
        } else if (pre) {
            char q = *lx->p;
            lex_quoted(lx, q);
            t->kind = q == '"' ? HKC_TOK_STR : HKC_TOK_CHAR;
        }
    }
    t->n = (size_t)(lx->p - s);
}

/* A pp-number: digits, letters, '.', signs after an exponent, and the
 * digit separator '. */
static void lex_number(hkc_lexer *lx, hkc_tok *t)
{
    lx->p++;
    while (lx->p < lx->end) {
        char d = *lx->p;
        if ((d == '+' || d == '-') && strchr("eEpP", lx->p[-1]))
            lx->p++;
        else if (is_ident_char((unsigned char)d) || d == '.' ||
                 (d == '\'' && lx->p + 1 < lx->end && isalnum((unsigned char)lx->p[1])))
            lx->p++;
        else
            break;
    }
    t->kind = HKC_TOK_NUM;
    t->n = (size_t)(lx->p - t->p);
}

void hkc_lex_next(hkc_lexer *lx, hkc_tok *t)
{
    lex_space(lx);
    t->p = lx->p;
    t->line = lx->line;
    /* Inside a directive, lex_space stops at the newline that ends it (and
     * clears in_pp): that newline is the directive's end. */
    if (lx->p >= lx->end || *lx->p == '\n') {
        t->kind = HKC_TOK_EOF;
        t->n = 0;
        return;
    }
    char c = *lx->p;
    if (c == '#' && lx->bol && !lx->in_pp) {
        lex_directive(lx);
        t->kind = HKC_TOK_DIRECTIVE;
        t->n = (size_t)(lx->p - t->p);
        return;
    }
    lx->bol = 0;
    if (is_ident_start((unsigned char)c)) {
        lex_word(lx, t);
    } else if (isdigit((unsigned char)c) ||
               (c == '.' && lx->p + 1 < lx->end && isdigit((unsigned char)lx->p[1]))) {
        lex_number(lx, t);
    } else if (c == '"' || c == '\'') {
        lex_quoted(lx, c);
        t->kind = c == '"' ? HKC_TOK_STR : HKC_TOK_CHAR;
        t->n = (size_t)(lx->p - t->p);
    } else {
        lx->p += c == ':' && lx->p + 1 < lx->end && lx->p[1] == ':' ? 2 : 1;
        t->kind = HKC_TOK_PUNCT;
        t->n = (size_t)(lx->p - t->p);
    }
}

int hkc_tok_is(const hkc_tok *t, const char *s)
{
    size_t n = strlen(s);
    return t->n == n && memcmp(t->p, s, n) == 0;
}

int hkc_tok_punct(const hkc_tok *t, char c)
{
    return t->kind == HKC_TOK_PUNCT && t->n == 1 && t->p[0] == c;
}

int hkc_tokenize(const char *s, size_t n, hkc_directive_fn *on_directive, void *ctx,
                 hkc_tokvec *out)
{
    hkc_lexer lx;
    hkc_lex_init(&lx, s, n);
    out->v = NULL;
    out->n = out->cap = 0;
    for (;;) {
        if (out->n == out->cap) {
            int cap = out->cap ? out->cap * 2 : 64;
            hkc_tok *v = realloc(out->v, (size_t)cap * sizeof(*v));
            if (!v) {
                free(out->v);
                out->v = NULL;
                out->n = out->cap = 0;
                return HK_ENOMEM;
            }
            out->v = v;
            out->cap = cap;
        }
        hkc_tok *t = &out->v[out->n];
        hkc_lex_next(&lx, t);
        if (t->kind == HKC_TOK_DIRECTIVE) {
            if (on_directive)
                on_directive(t, ctx);
            continue;
        }
        out->n++;
        if (t->kind == HKC_TOK_EOF)
            return 0;
    }
}
