/* Kernel name expressions: parsing and the one spelling they are compared
 * in (name_expr.h). */
#include "name_expr.h"

#include <stdlib.h>
#include <string.h>

#include "hipkit/hipkit.h"

static int is_word(const hkc_tok *t)
{
    return t->kind == HKC_TOK_IDENT || t->kind == HKC_TOK_NUM || t->kind == HKC_TOK_STR ||
           t->kind == HKC_TOK_CHAR;
}

void hkc_tokens_join(const hkc_tok *v, int n, hkc_strbuf *out)
{
    for (int i = 0; i < n; i++) {
        if (i > 0 && is_word(&v[i - 1]) && is_word(&v[i]))
            hkc_strbuf_puts(out, " ");
        hkc_strbuf_append(out, v[i].p, v[i].n);
        if (hkc_tok_punct(&v[i], ',') && i + 1 < n)
            hkc_strbuf_puts(out, " ");
    }
}

int hkc_name_is_expression(const char *name)
{
    return name && strpbrk(name, ":<") != NULL;
}

void hkc_name_expr_free(hkc_name_expr *e)
{
    free(e->tv.v);
    free(e->qname);
    free(e->normalized);
    memset(e, 0, sizeof *e);
}

/* The template arguments from v[i] == '<' to its '>'; returns the index of
 * the '>' or -1. */
static int split_args(hkc_name_expr *e, int i, hkc_strbuf *err)
{
    const hkc_tok *v = e->tv.v;
    int n = e->tv.n - 1, depth = 0, begin = i + 1;
    e->nargs = 0;
    for (int j = i + 1; j < n; j++) {
        const hkc_tok *t = &v[j];
        if (hkc_tok_punct(t, '<') || hkc_tok_punct(t, '(') || hkc_tok_punct(t, '[') ||
            hkc_tok_punct(t, '{')) {
            depth++;
        } else if ((hkc_tok_punct(t, ')') || hkc_tok_punct(t, ']') || hkc_tok_punct(t, '}')) &&
                   depth > 0) {
            depth--;
        } else if (hkc_tok_punct(t, '>') && depth > 0) {
            depth--;
        } else if (depth == 0 && (hkc_tok_punct(t, ',') || hkc_tok_punct(t, '>'))) {
            if (j == begin && !(hkc_tok_punct(t, '>') && e->nargs == 0)) {
                hkc_strbuf_puts(err, "an empty template argument");
                return -1;
            }
            if (j > begin) {
                if (e->nargs == HKC_NAME_EXPR_MAX_ARGS) {
                    hkc_strbuf_printf(err, "more than %d template arguments",
                                      HKC_NAME_EXPR_MAX_ARGS);
                    return -1;
                }
                e->arg_begin[e->nargs] = begin;
                e->arg_end[e->nargs++] = j;
            }
            begin = j + 1;
            if (hkc_tok_punct(t, '>'))
                return j;
        }
    }
    hkc_strbuf_puts(err, "the template argument list has no closing '>'");
    return -1;
}

int hkc_name_expr_parse(const char *text, hkc_name_expr *e, hkc_strbuf *err)
{
    memset(e, 0, sizeof *e);
    e->nargs = -1;
    int r = hkc_tokenize(text, strlen(text), NULL, NULL, &e->tv);
    if (r)
        return r;
    const hkc_tok *v = e->tv.v;
    int n = e->tv.n - 1, i = 0;
    if (i < n && hkc_tok_is(&v[i], "::"))
        i++;
    while (i < n && v[i].kind == HKC_TOK_IDENT) {
        i++;
        if (i + 1 < n && hkc_tok_is(&v[i], "::") && v[i + 1].kind == HKC_TOK_IDENT)
            i++;
        else
            break;
    }
    e->name_end = i;
    int bad = i == 0 || v[i - 1].kind != HKC_TOK_IDENT;
    if (!bad && i < n && hkc_tok_punct(&v[i], '<')) {
        hkc_strbuf why;
        hkc_strbuf_init(&why);
        i = split_args(e, i, &why);
        if (i < 0) {
            hkc_strbuf_printf(err, "'%s': %s", text, why.data);
            hkc_strbuf_free(&why);
            hkc_name_expr_free(e);
            return HK_EINVAL;
        }
        hkc_strbuf_free(&why);
        i++;
    }
    if (bad || i != n) {
        hkc_strbuf_printf(err, "'%s' is not a kernel name: expected name, ns::name or "
                               "name<template arguments>", text);
        hkc_name_expr_free(e);
        return HK_EINVAL;
    }
    hkc_strbuf s;
    hkc_strbuf_init(&s);
    int skip = hkc_tok_is(&v[0], "::"); /* ::name is name */
    hkc_tokens_join(v + skip, e->name_end - skip, &s);
    e->qname = hkc_strbuf_take(&s);
    hkc_strbuf_init(&s);
    hkc_tokens_join(v + skip, n - skip, &s);
    e->normalized = hkc_strbuf_take(&s);
    if (!e->qname || !e->normalized) {
        hkc_name_expr_free(e);
        return HK_ENOMEM;
    }
    return 0;
}

int hkc_name_expr_normalize(const char *text, hkc_strbuf *out, hkc_strbuf *err)
{
    if (hkc_is_identifier(text)) {
        hkc_strbuf_puts(out, text);
        return out->oom ? HK_ENOMEM : 0;
    }
    hkc_name_expr e;
    int r = hkc_name_expr_parse(text, &e, err);
    if (r)
        return r;
    hkc_strbuf_puts(out, e.normalized);
    hkc_name_expr_free(&e);
    return out->oom ? HK_ENOMEM : 0;
}

/* Itanium-mangled kernel symbols, enough to find a kernel by the name
 * written in its source (the name hkc_source_scan reports): `_Z<len><name>...`
 * gives name; a nested name `_ZN<len><ns>...<len><name>E...` gives its last
 * part (the function's own name). Anything else, extern "C" names included,
 * is copied as is. out is always NUL-terminated (truncated to cap - 1). */
void hkc_plain_name(const char *symbol, char *out, size_t cap)
{
    if (!out || cap == 0)
        return;
    out[0] = '\0';
    if (!symbol)
        return;
    const char *name = symbol;
    size_t name_len = strlen(symbol);
    if (!strncmp(symbol, "_Z", 2)) {
        const char *p = symbol + 2;
        int nested = *p == 'N';
        if (nested)
            p++;
        const char *last = NULL;
        size_t last_len = 0;
        while (*p >= '1' && *p <= '9') {
            size_t len = 0;
            while (*p >= '0' && *p <= '9' && len <= 4096)
                len = len * 10 + (size_t)(*p++ - '0');
            if (len > 4096 || strnlen(p, len) < len) {
                last = NULL;
                break;
            }
            last = p;
            last_len = len;
            p += len;
            if (!nested)
                break;
        }
        if (last && (!nested || *p == 'E' || *p == 'I')) {
            name = last;
            name_len = last_len;
        }
    }
    if (name_len >= cap)
        name_len = cap - 1;
    memcpy(out, name, name_len);
    out[name_len] = '\0';
}
