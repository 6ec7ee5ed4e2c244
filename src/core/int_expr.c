/* A recursive-descent evaluator for the integer constant expressions of
 * kernel attributes (int_expr.h). Operators are single-character tokens
 * from cpp_lexer, so `<<` is two '<' in a row. */
#include "int_expr.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct ev {
    const hkc_tok *v;
    int n, i, bad;
} ev;

static int at(const ev *e, char c) { return e->i < e->n && hkc_tok_punct(&e->v[e->i], c); }

static int at2(const ev *e, char c)
{
    return e->i + 1 < e->n && hkc_tok_punct(&e->v[e->i], c) && hkc_tok_punct(&e->v[e->i + 1], c);
}

/* An integer literal's value, or bad. */
static long long literal(ev *e, const hkc_tok *t)
{
    char buf[72];
    size_t k = 0;
    for (size_t j = 0; j < t->n && k + 1 < sizeof buf; j++)
        if (t->p[j] != '\'')
            buf[k++] = t->p[j];
    buf[k] = 0;
    while (k > 0 && strchr("uUlLzZ", buf[k - 1]))
        buf[--k] = 0;
    int base = 10;
    const char *digits = buf;
    if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X'))
        base = 16, digits = buf + 2;
    else if (buf[0] == '0' && (buf[1] == 'b' || buf[1] == 'B'))
        base = 2, digits = buf + 2;
    else if (buf[0] == '0' && buf[1])
        base = 8, digits = buf + 1;
    char *end;
    unsigned long long u = strtoull(digits, &end, base);
    if (!*digits || *end || u > (unsigned long long)0x7fffffffffffffffLL) {
        e->bad = 1;
        return 0;
    }
    return (long long)u;
}

static long long expr_or(ev *e);

static long long unary(ev *e)
{
    if (e->bad || e->i >= e->n) {
        e->bad = 1;
        return 0;
    }
    if (at(e, '-') || at(e, '+') || at(e, '~')) {
        char op = e->v[e->i++].p[0];
        long long x = unary(e);
        if (op == '-' && x == -0x7fffffffffffffffLL - 1)
            e->bad = 1;
        return op == '-' ? (e->bad ? 0 : -x) : op == '~' ? ~x : x;
    }
    if (at(e, '(')) {
        e->i++;
        long long x = expr_or(e);
        if (!at(e, ')'))
            e->bad = 1;
        e->i++;
        return x;
    }
    const hkc_tok *t = &e->v[e->i++];
    if (t->kind != HKC_TOK_NUM || !isdigit((unsigned char)t->p[0]) || memchr(t->p, '.', t->n)) {
        e->bad = 1;
        return 0;
    }
    return literal(e, t);
}

static long long product(ev *e)
{
    long long x = unary(e);
    while (!e->bad && (at(e, '*') || at(e, '/') || at(e, '%'))) {
        char op = e->v[e->i++].p[0];
        long long y = unary(e);
        if (e->bad)
            break;
        if (op == '*') {
            if (__builtin_mul_overflow(x, y, &x))
                e->bad = 1;
        } else if (y == 0 || (x == -0x7fffffffffffffffLL - 1 && y == -1)) {
            e->bad = 1;
        } else {
            x = op == '/' ? x / y : x % y;
        }
    }
    return x;
}

static long long sum(ev *e)
{
    long long x = product(e);
    while (!e->bad && (at(e, '+') || at(e, '-'))) {
        char op = e->v[e->i++].p[0];
        long long y = product(e);
        if (!e->bad && (op == '+' ? __builtin_add_overflow(x, y, &x) : __builtin_sub_overflow(x, y, &x)))
            e->bad = 1;
    }
    return x;
}

static long long shift(ev *e)
{
    long long x = sum(e);
    while (!e->bad && (at2(e, '<') || at2(e, '>'))) {
        char op = e->v[e->i].p[0];
        e->i += 2;
        long long y = sum(e);
        if (e->bad || y < 0 || y > 62 || x < 0 || (op == '<' && (x >> (62 - y)) != 0)) {
            e->bad = 1;
            break;
        }
        x = op == '<' ? x << y : x >> y;
    }
    return x;
}

/* & ^ | (the relational operators are never in a bound) */
static long long bitwise(ev *e, int level)
{
    static const char ops[3] = {'&', '^', '|'};
    long long x = level ? bitwise(e, level - 1) : shift(e);
    while (!e->bad && at(e, ops[level]) && !at2(e, ops[level])) {
        e->i++;
        long long y = level ? bitwise(e, level - 1) : shift(e);
        x = level == 0 ? x & y : level == 1 ? x ^ y : x | y;
    }
    return x;
}

static long long expr_or(ev *e) { return bitwise(e, 2); }

int hkc_int_expr_eval(const hkc_tok *v, int n, long long *out)
{
    ev e = {v, n, 0, 0};
    long long x = expr_or(&e);
    if (e.bad || e.i != n)
        return -1;
    *out = x;
    return 0;
}
