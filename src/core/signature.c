/* Parameter lists (from C text or HIP source) and argument packing.
 *
 * Both the parameter parser and the source scanner run on one small lexer
 * that knows enough C++ to skip what must be skipped: comments, string and
 * character literals (raw strings included), line splices and preprocessor
 * lines. It is not a C++ parser: the scanner only looks for the shape
 * `__global__ ... void NAME ( ... ) {` at namespace scope. */
#include "internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- lexer */

typedef enum tok_kind { T_EOF, T_IDENT, T_NUM, T_STR, T_CHAR, T_PUNCT } tok_kind;

typedef struct tok {
    tok_kind kind;
    const char *p;
    size_t n;
    int line;
} tok;

typedef struct lexer {
    const char *p, *end;
    int line;
    int bol;        /* only whitespace since the last newline */
    int in_pp;      /* inside a preprocessor line */
    int skip_pp;    /* whether `#` at line start begins a directive to skip */
    int pp_sync;    /* a sync identifier appeared in a skipped directive */
} lexer;

static void lex_init(lexer *lx, const char *s, size_t n, int skip_pp)
{
    lx->p = s;
    lx->end = s + n;
    lx->line = 1;
    lx->bol = 1;
    lx->in_pp = 0;
    lx->skip_pp = skip_pp;
    lx->pp_sync = 0;
}

static int is_ident_start(int c) { return isalpha(c) || c == '_' || c == '$'; }
static int is_ident_char(int c) { return isalnum(c) || c == '_' || c == '$'; }

/* Skips whitespace, comments and line splices. Inside a directive, stops at
 * the newline that ends it (and clears in_pp). */
static void lex_space(lexer *lx)
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
static void lex_quoted(lexer *lx, char q)
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
static void lex_raw(lexer *lx)
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

static void lex_next(lexer *lx, tok *t);

/* Skips a directive, noting sync identifiers in it (a macro's body is text
 * outside every kernel). */
static void lex_skip_directive(lexer *lx)
{
    lx->in_pp = 1;
    lx->p++; /* '#' */
    tok t;
    for (;;) {
        lex_next(lx, &t);
        if (t.kind == T_EOF)
            break;
        if (t.kind == T_IDENT && is_sync_name(t.p, t.n))
            lx->pp_sync = 1;
    }
    lx->in_pp = 0;
}

/* Next token; T_EOF at the end (or, inside a directive, at its end). */
static void lex_next(lexer *lx, tok *t)
{
    for (;;) {
        lex_space(lx);
        /* Inside a directive, lex_space stops at the newline that ends it
         * (and clears in_pp): that newline is the directive's end. */
        if (lx->p >= lx->end || *lx->p == '\n') {
            t->kind = T_EOF;
            t->p = lx->p;
            t->n = 0;
            t->line = lx->line;
            return;
        }
        if (*lx->p == '#' && lx->bol && lx->skip_pp && !lx->in_pp) {
            lex_skip_directive(lx);
            continue;
        }
        break;
    }

    const char *s = lx->p;
    char c = *s;
    t->p = s;
    t->line = lx->line;
    lx->bol = 0;
    if (is_ident_start((unsigned char)c)) {
        while (lx->p < lx->end && is_ident_char((unsigned char)*lx->p))
            lx->p++;
        size_t n = (size_t)(lx->p - s);
        /* Encoding prefixes and raw strings glue to the literal. */
        if (lx->p < lx->end && (*lx->p == '"' || *lx->p == '\'')) {
            int raw = n >= 1 && s[n - 1] == 'R' && *lx->p == '"';
            int pre = (n == 1 && strchr("uUL", s[0])) || (n == 2 && memcmp(s, "u8", 2) == 0);
            int rpre = raw && (n == 1 || (n == 2 && strchr("uUL", s[0])) ||
                               (n == 3 && memcmp(s, "u8", 2) == 0));
            if (rpre) {
                lex_raw(lx);
                t->kind = T_STR;
                t->n = (size_t)(lx->p - s);
                return;
            }
            if (pre) {
                char q = *lx->p;
                lex_quoted(lx, q);
                t->kind = q == '"' ? T_STR : T_CHAR;
                t->n = (size_t)(lx->p - s);
                return;
            }
        }
        t->kind = T_IDENT;
        t->n = n;
        return;
    }
    if (isdigit((unsigned char)c) || (c == '.' && lx->p + 1 < lx->end && isdigit((unsigned char)lx->p[1]))) {
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
        t->kind = T_NUM;
        t->n = (size_t)(lx->p - s);
        return;
    }
    if (c == '"' || c == '\'') {
        lex_quoted(lx, c);
        t->kind = c == '"' ? T_STR : T_CHAR;
        t->n = (size_t)(lx->p - s);
        return;
    }
    if (c == ':' && lx->p + 1 < lx->end && lx->p[1] == ':') {
        lx->p += 2;
        t->kind = T_PUNCT;
        t->n = 2;
        return;
    }
    lx->p++;
    t->kind = T_PUNCT;
    t->n = 1;
}

static int tok_is(const tok *t, const char *s)
{
    size_t n = strlen(s);
    return t->n == n && memcmp(t->p, s, n) == 0;
}

static int tok_punct(const tok *t, char c)
{
    return t->kind == T_PUNCT && t->n == 1 && t->p[0] == c;
}

/* Tokenises text into a growable array (with a final T_EOF). */
typedef struct tokvec {
    tok *v;
    int n, cap;
    int pp_sync;
} tokvec;

static int tokenize(const char *s, size_t n, int skip_pp, tokvec *out)
{
    lexer lx;
    lex_init(&lx, s, n, skip_pp);
    out->v = NULL;
    out->n = out->cap = 0;
    for (;;) {
        if (out->n == out->cap) {
            int cap = out->cap ? out->cap * 2 : 64;
            tok *v = realloc(out->v, (size_t)cap * sizeof(*v));
            if (!v) {
                free(out->v);
                out->v = NULL;
                return HK_ENOMEM;
            }
            out->v = v;
            out->cap = cap;
        }
        tok *t = &out->v[out->n++];
        lex_next(&lx, t);
        if (t->kind == T_EOF)
            break;
    }
    out->pp_sync = lx.pp_sync;
    return 0;
}

/* --------------------------------------------------------- type tables */

typedef struct named_type {
    const char *name;
    hk_dtype dtype;
    int is_bool;
} named_type;

/* Typedef names and single-word types; C keyword combinations (unsigned
 * long, signed char, ...) are resolved by resolve_builtin. LP64. */
static const named_type named_types[] = {
    {"int8_t", HK_I8, 0},        {"int16_t", HK_I16, 0},     {"int32_t", HK_I32, 0},
    {"int64_t", HK_I64, 0},      {"uint8_t", HK_U8, 0},      {"uint16_t", HK_U16, 0},
    {"uint32_t", HK_U32, 0},     {"uint64_t", HK_U64, 0},    {"size_t", HK_U64, 0},
    {"ssize_t", HK_I64, 0},      {"ptrdiff_t", HK_I64, 0},   {"intptr_t", HK_I64, 0},
    {"uintptr_t", HK_U64, 0},    {"half", HK_F16, 0},        {"__half", HK_F16, 0},
    {"_Float16", HK_F16, 0},     {"__fp16", HK_F16, 0},      {"hip_bfloat16", HK_BF16, 0},
    {"__hip_bfloat16", HK_BF16, 0}, {"__bf16", HK_BF16, 0},  {"bfloat16", HK_BF16, 0},
    {"bool", HK_U8, 1},          {"_Bool", HK_U8, 1},
};

static const named_type *find_named(const char *w)
{
    for (size_t i = 0; i < sizeof(named_types) / sizeof(named_types[0]); i++)
        if (strcmp(named_types[i].name, w) == 0)
            return &named_types[i];
    return NULL;
}

/* HIP/CUDA vector types by value: float4, uchar2, __half2, ... Sets the
 * element type and the lane count. long and ulong are 64-bit, as the scalar
 * long is here (LP64). dim3 is no vector type here: it is refused apart. */
static int vector_type(const char *w, hk_dtype *dt, int *lanes)
{
    static const named_type bases[] = {
        {"char", HK_I8, 0},        {"uchar", HK_U8, 0},      {"short", HK_I16, 0},
        {"ushort", HK_U16, 0},     {"int", HK_I32, 0},       {"uint", HK_U32, 0},
        {"long", HK_I64, 0},       {"ulong", HK_U64, 0},     {"longlong", HK_I64, 0},
        {"ulonglong", HK_U64, 0},  {"float", HK_F32, 0},     {"double", HK_F64, 0},
    };
    static const named_type pairs[] = {
        {"half2", HK_F16, 0},           {"__half2", HK_F16, 0},
        {"__hip_bfloat162", HK_BF16, 0}, {"__nv_bfloat162", HK_BF16, 0},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
        if (strcmp(w, pairs[i].name) == 0) {
            *dt = pairs[i].dtype;
            *lanes = 2;
            return 1;
        }
    size_t n = strlen(w);
    if (n < 2 || w[n - 1] < '1' || w[n - 1] > '4')
        return 0;
    for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++)
        if (strlen(bases[i].name) == n - 1 && memcmp(w, bases[i].name, n - 1) == 0) {
            *dt = bases[i].dtype;
            *lanes = w[n - 1] - '0';
            return 1;
        }
    return 0;
}

static int is_builtin_word(const char *w)
{
    static const char *const kw[] = {
        "signed", "unsigned", "char", "short", "int", "long", "float", "double",
        "bool", "_Bool", "void",
    };
    for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
        if (strcmp(w, kw[i]) == 0)
            return 1;
    return 0;
}

static int is_restrict(const tok *t)
{
    return tok_is(t, "__restrict__") || tok_is(t, "__restrict") || tok_is(t, "restrict");
}

/* Words that can never name a parameter. */
static int is_reserved(const char *w)
{
    static const char *const kw[] = {
        "const", "volatile", "struct", "union", "enum", "class", "typename",
        "static", "extern", "register", "auto", "inline", "template", "return",
        "if", "else", "for", "while", "do", "switch", "case", "default",
        "sizeof", "operator", "new", "delete", "this", "true", "false",
    };
    if (is_builtin_word(w))
        return 1;
    for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
        if (strcmp(w, kw[i]) == 0)
            return 1;
    return 0;
}

enum { RESOLVED, NOT_BUILTIN, BAD_COMBINATION, IS_VOID };

/* Resolves a combination of C keywords (in any order, as C allows). */
static int resolve_builtin(char **words, int n, hk_dtype *dt, int *is_bool)
{
    int sgn = 0, uns = 0, chr = 0, shrt = 0, in = 0, lng = 0, flt = 0, dbl = 0, bl = 0, vd = 0;
    for (int i = 0; i < n; i++) {
        const char *w = words[i];
        if (!strcmp(w, "signed")) sgn++;
        else if (!strcmp(w, "unsigned")) uns++;
        else if (!strcmp(w, "char")) chr++;
        else if (!strcmp(w, "short")) shrt++;
        else if (!strcmp(w, "int")) in++;
        else if (!strcmp(w, "long")) lng++;
        else if (!strcmp(w, "float")) flt++;
        else if (!strcmp(w, "double")) dbl++;
        else if (!strcmp(w, "bool") || !strcmp(w, "_Bool")) bl++;
        else if (!strcmp(w, "void")) vd++;
        else return NOT_BUILTIN;
    }
    *is_bool = 0;
    int sign_words = sgn + uns;
    if (sgn > 1 || uns > 1 || (sgn && uns) || chr > 1 || shrt > 1 || in > 1 || lng > 2 ||
        flt > 1 || dbl > 1 || bl > 1 || vd > 1)
        return BAD_COMBINATION;
    if (vd)
        return n == 1 ? IS_VOID : BAD_COMBINATION;
    if (bl) {
        if (n != 1)
            return BAD_COMBINATION;
        *dt = HK_U8;
        *is_bool = 1;
        return RESOLVED;
    }
    if (flt || dbl) {
        if (n != 1) /* long double included: not a kernel argument type here */
            return BAD_COMBINATION;
        *dt = flt ? HK_F32 : HK_F64;
        return RESOLVED;
    }
    if (chr) {
        if (shrt || in || lng)
            return BAD_COMBINATION;
        *dt = uns ? HK_U8 : HK_I8;
        return RESOLVED;
    }
    if (shrt) {
        if (lng)
            return BAD_COMBINATION;
        *dt = uns ? HK_U16 : HK_I16;
        return RESOLVED;
    }
    if (!lng && !in && !sign_words)
        return BAD_COMBINATION;
    if (lng)
        *dt = uns ? HK_U64 : HK_I64;
    else
        *dt = uns ? HK_U32 : HK_I32;
    return RESOLVED;
}

/* ------------------------------------------------------ parameter parse */

static char *dup_n(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

#define MAX_WORDS 8

/* Parses one parameter from tokens t[0..n). `text` is its source text for
 * messages. Returns 0, HK_EINVAL (message in err) or HK_ENOMEM. Sets *is_void
 * for a lone `void`. */
static int parse_param(const tok *t, int n, int index, const char *text, hkc_param *out,
                       int *is_void, hkc_strbuf *err)
{
    char *words[MAX_WORDS];
    int nwords = 0;
    int pointee_const = 0, pointee_volatile = 0, nptr = 0, tagged = 0;
    const tok *name = NULL;
    const char *why = NULL;
    char whybuf[256];
    int rc = HK_EINVAL;

    memset(out, 0, sizeof(*out));
    *is_void = 0;

    for (int i = 0; i < n && !why; i++) {
        const tok *k = &t[i];
        if (k->kind == T_IDENT) {
            if (tok_is(k, "const") || tok_is(k, "volatile")) {
                /* After a '*' it qualifies the pointer itself, which does not
                 * matter to callers. */
                if (nptr == 0) {
                    if (k->p[0] == 'c')
                        pointee_const = 1;
                    else
                        pointee_volatile = 1;
                }
                if (name)
                    why = "qualifier after the parameter name";
            } else if (is_restrict(k)) {
                /* ignored wherever it appears */
            } else if (tok_is(k, "__attribute__") || tok_is(k, "__align__") ||
                       tok_is(k, "alignas") || tok_is(k, "__declspec")) {
                int depth = 0;
                while (i + 1 < n) {
                    i++;
                    if (tok_punct(&t[i], '('))
                        depth++;
                    else if (tok_punct(&t[i], ')') && --depth == 0)
                        break;
                }
            } else if (tok_is(k, "struct") || tok_is(k, "union") || tok_is(k, "enum") ||
                       tok_is(k, "class")) {
                if (i + 1 >= n || t[i + 1].kind != T_IDENT || nptr || name || nwords) {
                    why = "misplaced struct/union/enum keyword";
                    break;
                }
                size_t len = k->n + 1 + t[i + 1].n;
                char *w = malloc(len + 1);
                if (!w) {
                    rc = HK_ENOMEM;
                    goto fail;
                }
                snprintf(w, len + 1, "%.*s %.*s", (int)k->n, k->p, (int)t[i + 1].n, t[i + 1].p);
                words[nwords++] = w;
                tagged = 1;
                i++;
            } else if (nptr > 0) {
                if (name) {
                    snprintf(whybuf, sizeof(whybuf), "unexpected '%.*s'", (int)k->n, k->p);
                    why = whybuf;
                } else {
                    name = k;
                }
            } else if (name || nwords == MAX_WORDS) {
                snprintf(whybuf, sizeof(whybuf), "unexpected '%.*s'", (int)k->n, k->p);
                why = whybuf;
            } else {
                /* A qualified name (ns::type) stays one word. */
                size_t len = k->n;
                while (i + 2 < n && t[i + 1].kind == T_PUNCT && tok_is(&t[i + 1], "::") &&
                       t[i + 2].kind == T_IDENT) {
                    i += 2;
                    len = (size_t)(t[i].p + t[i].n - k->p);
                }
                char *w = dup_n(k->p, len);
                if (!w) {
                    rc = HK_ENOMEM;
                    goto fail;
                }
                /* Collapse any spacing inside "a :: b". */
                char *d = w;
                for (char *s = w; *s; s++)
                    if (!isspace((unsigned char)*s))
                        *d++ = *s;
                *d = 0;
                words[nwords++] = w;
            }
        } else if (tok_punct(k, '*')) {
            if (name)
                why = "'*' after the parameter name";
            nptr++;
        } else if (tok_punct(k, '[')) {
            /* float x[] and float x[4] are pointers, as in C. */
            int depth = 1;
            while (i + 1 < n && depth) {
                i++;
                if (tok_punct(&t[i], '['))
                    depth++;
                else if (tok_punct(&t[i], ']'))
                    depth--;
            }
            if (depth)
                why = "unbalanced '['";
            nptr++;
        } else if (tok_punct(k, '=')) {
            why = "default arguments are not supported";
        } else if (tok_punct(k, '&')) {
            why = "reference parameters are not supported";
        } else if (tok_punct(k, '(')) {
            why = "function pointer parameters are not supported";
        } else if (tok_punct(k, '.')) {
            why = "variadic parameters are not supported";
        } else if (tok_punct(k, '<')) {
            why = "template types are not supported";
        } else {
            snprintf(whybuf, sizeof(whybuf), "unexpected '%.*s'", (int)k->n, k->p);
            why = whybuf;
        }
    }
    if (why)
        goto bad;

    /* Without a '*', a trailing word that is no C type keyword names the
     * parameter: `unsigned n`, `size_t n`, but `unsigned long`. */
    int ntype = nwords;
    char pname[128] = "";
    if (name) {
        snprintf(pname, sizeof(pname), "%.*s", (int)name->n, name->p);
    } else if (nwords >= 2 && !is_builtin_word(words[nwords - 1]) &&
               !strchr(words[nwords - 1], ' ')) {
        snprintf(pname, sizeof(pname), "%s", words[nwords - 1]);
        ntype--;
    }
    if (ntype == 0) {
        why = "missing type";
        goto bad;
    }
    if (pname[0] && (is_reserved(pname) || strstr(pname, "::"))) {
        snprintf(whybuf, sizeof(whybuf), "'%s' cannot name a parameter", pname);
        why = whybuf;
        goto bad;
    }
    if (nptr > 1) {
        why = "pointers to pointers are not supported (pass a void * or a buffer of u64)";
        goto bad;
    }

    hk_dtype dt = HK_DTYPE_COUNT;
    hk_param_kind kind = nptr ? HK_PARAM_POINTER : HK_PARAM_SCALAR;
    int is_bool = 0, lanes = 1;
    int r = resolve_builtin(words, ntype, &dt, &is_bool);
    if (r == IS_VOID) {
        if (nptr == 0) {
            if (pname[0]) {
                why = "a parameter cannot have type void";
                goto bad;
            }
            *is_void = 1;
        }
        dt = HK_DTYPE_COUNT;
    } else if (r == BAD_COMBINATION) {
        why = "invalid combination of type keywords";
        goto bad;
    } else if (r == NOT_BUILTIN) {
        const named_type *nt = ntype == 1 ? find_named(words[0]) : NULL;
        if (nt) {
            dt = nt->dtype;
            is_bool = nt->is_bool;
        } else if (ntype > 1) {
            size_t used = (size_t)snprintf(whybuf, sizeof(whybuf), "unknown type '");
            for (int i = 0; i < ntype && used < sizeof(whybuf); i++)
                used += (size_t)snprintf(whybuf + used, sizeof(whybuf) - used, "%s%s",
                                         i ? " " : "", words[i]);
            if (used < sizeof(whybuf))
                snprintf(whybuf + used, sizeof(whybuf) - used, "'");
            why = whybuf;
            goto bad;
        } else if (nptr == 0 && !tagged && vector_type(words[0], &dt, &lanes)) {
            kind = HK_PARAM_VECTOR;
        } else if (nptr == 0) {
            if (tagged)
                snprintf(whybuf, sizeof(whybuf),
                         "by-value struct parameters are not supported yet ('%s')", words[0]);
            else if (!strcmp(words[0], "dim3"))
                snprintf(whybuf, sizeof(whybuf),
                         "dim3 cannot be passed by value (pass its x, y and z as unsigned "
                         "parameters, or a uint3)");
            else
                snprintf(whybuf, sizeof(whybuf), "unknown type '%s'", words[0]);
            why = whybuf;
            goto bad;
        }
        /* else: an opaque pointer to a user type */
    }

    /* The normalised spelling: pointee qualifiers first, the type words as
     * written, then " *". Qualifiers of the parameter itself (a scalar's
     * const, a pointer's own const) do not concern callers and are dropped. */
    hkc_strbuf ty;
    hkc_strbuf_init(&ty);
    if (nptr && pointee_const)
        hkc_strbuf_puts(&ty, "const ");
    if (nptr && pointee_volatile)
        hkc_strbuf_puts(&ty, "volatile ");
    for (int i = 0; i < ntype; i++) {
        if (i)
            hkc_strbuf_puts(&ty, " ");
        hkc_strbuf_puts(&ty, words[i]);
    }
    if (nptr)
        hkc_strbuf_puts(&ty, " *");
    if (ty.oom) {
        hkc_strbuf_free(&ty);
        rc = HK_ENOMEM;
        goto fail;
    }
    out->type = hkc_strbuf_take(&ty);
    out->name = strdup(pname);
    if (!out->type || !out->name) {
        free(out->type);
        free(out->name);
        out->type = out->name = NULL;
        rc = HK_ENOMEM;
        goto fail;
    }
    out->kind = kind;
    out->dtype = dt;
    out->is_const = nptr ? pointee_const : 0;
    out->is_bool = nptr ? 0 : is_bool;
    if (nptr) {
        out->size = out->align = 8;
    } else if (kind == HK_PARAM_VECTOR) {
        /* HIP and CUDA agree up to 16 bytes: 1, 2 and 4 lanes are aligned to
         * their size, 3 lanes to the element (float3 is 12 bytes aligned to
         * 4). At 32 bytes (double4, long4, ...) CUDA stops at 16 and HIP
         * goes on to 32: 16 here, and hkc_signature_check (module.c) follows
         * a code object that says 32. */
        uint32_t esize = (uint32_t)hk_dtype_size(dt);
        out->size = esize * (uint32_t)lanes;
        out->align = lanes == 3 ? esize : out->size < 16 ? out->size : 16;
    } else if (!*is_void) {
        out->size = out->align = (uint32_t)(is_bool ? 1 : hk_dtype_size(dt));
    }
    rc = 0;
    goto fail;

bad:
    hkc_strbuf_printf(err, "parameter %d '%s': %s", index, text, why);
    rc = HK_EINVAL;
fail:
    for (int i = 0; i < nwords; i++)
        free(words[i]);
    return rc;
}

static uint32_t align_up(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

static void layout(hkc_signature *s)
{
    uint32_t off = 0, maxa = 1;
    for (int i = 0; i < s->count; i++) {
        hkc_param *p = &s->params[i];
        off = align_up(off, p->align);
        p->offset = off;
        off += p->size;
        if (p->align > maxa)
            maxa = p->align;
    }
    s->kernarg_size = s->count ? align_up(off, maxa) : 0;
}

int hkc_param_is_wide_vector(const hkc_param *p)
{
    return p->kind == HK_PARAM_VECTOR && p->size == 32; /* 3 lanes never make 32 bytes */
}

void hkc_signature_align_wide_vectors(hkc_signature *s, uint32_t align)
{
    if (!align) /* a backend that states none: the parser's (CUDA's 16) */
        return;
    for (int i = 0; i < s->count; i++)
        if (hkc_param_is_wide_vector(&s->params[i]))
            s->params[i].align = align;
    layout(s);
}

void hkc_signature_free(hkc_signature *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->count; i++) {
        free(s->params[i].name);
        free(s->params[i].type);
    }
    free(s->params);
    s->params = NULL;
    s->count = 0;
    s->kernarg_size = 0;
}

/* Parses the parameter list held in tokens v[0..n) (no outer parentheses);
 * `src` is the text the tokens point into, for messages. */
static int parse_tokens(const tok *v, int n, hkc_signature *out, hkc_strbuf *err)
{
    out->params = NULL;
    out->count = 0;
    out->kernarg_size = 0;
    if (n == 0)
        return 0;

    /* Split at top-level commas. */
    int nparts = 1, depth = 0;
    for (int i = 0; i < n; i++) {
        if (v[i].kind != T_PUNCT)
            continue;
        if (tok_punct(&v[i], '(') || tok_punct(&v[i], '[') || tok_punct(&v[i], '{') ||
            tok_punct(&v[i], '<'))
            depth++;
        else if (tok_punct(&v[i], ')') || tok_punct(&v[i], ']') || tok_punct(&v[i], '}') ||
                 tok_punct(&v[i], '>'))
            depth--;
        else if (tok_punct(&v[i], ',') && depth == 0)
            nparts++;
    }
    out->params = calloc((size_t)nparts, sizeof(*out->params));
    if (!out->params)
        return HK_ENOMEM;

    int start = 0;
    depth = 0;
    for (int i = 0; i <= n; i++) {
        if (i < n && v[i].kind == T_PUNCT) {
            if (tok_punct(&v[i], '(') || tok_punct(&v[i], '[') || tok_punct(&v[i], '{') ||
                tok_punct(&v[i], '<'))
                depth++;
            else if (tok_punct(&v[i], ')') || tok_punct(&v[i], ']') || tok_punct(&v[i], '}') ||
                     tok_punct(&v[i], '>'))
                depth--;
        }
        if (i < n && !(tok_punct(&v[i], ',') && depth == 0))
            continue;
        int idx = out->count + 1;
        if (i == start) {
            hkc_strbuf_printf(err, "parameter %d is empty", idx);
            hkc_signature_free(out);
            return HK_EINVAL;
        }
        const char *a = v[start].p, *b = v[i - 1].p + v[i - 1].n;
        char *text = dup_n(a, (size_t)(b - a));
        if (!text) {
            hkc_signature_free(out);
            return HK_ENOMEM;
        }
        /* One line in messages, however the list was spread out. */
        char *d = text;
        for (const char *q = text; *q; q++) {
            if (isspace((unsigned char)*q)) {
                if (d > text && d[-1] != ' ')
                    *d++ = ' ';
            } else {
                *d++ = *q;
            }
        }
        *d = 0;
        int is_void = 0;
        int rc = parse_param(&v[start], i - start, idx, text, &out->params[out->count], &is_void,
                             err);
        free(text);
        if (rc) {
            hkc_signature_free(out);
            return rc;
        }
        out->count++;
        if (is_void) {
            if (nparts != 1) {
                hkc_strbuf_printf(err, "parameter %d 'void': void is only valid as the whole "
                                  "parameter list", idx);
                hkc_signature_free(out);
                return HK_EINVAL;
            }
            hkc_signature_free(out);
            return 0;
        }
        start = i + 1;
    }
    layout(out);
    return 0;
}

int hkc_signature_parse(const char *text, hkc_signature *out, hkc_strbuf *err)
{
    tokvec tv;
    out->params = NULL;
    out->count = 0;
    out->kernarg_size = 0;
    if (!text)
        text = "";
    int rc = tokenize(text, strlen(text), 1, &tv);
    if (rc)
        return rc;
    int first = 0, last = tv.n - 1; /* last is the T_EOF */
    /* Drop one pair of outer parentheses when they enclose everything. */
    if (last >= 2 && tok_punct(&tv.v[0], '(') && tok_punct(&tv.v[last - 1], ')')) {
        int depth = 0, encloses = 1;
        for (int i = 0; i < last; i++) {
            if (tok_punct(&tv.v[i], '('))
                depth++;
            else if (tok_punct(&tv.v[i], ')') && --depth == 0 && i != last - 1)
                encloses = 0;
        }
        if (encloses) {
            first = 1;
            last--;
        }
    }
    rc = parse_tokens(tv.v + first, last - first, out, err);
    free(tv.v);
    return rc;
}

int hkc_signature_copy(const hkc_signature *src, hkc_signature *dst)
{
    dst->params = NULL;
    dst->count = 0;
    dst->kernarg_size = src->kernarg_size;
    if (src->count == 0)
        return 0;
    dst->params = calloc((size_t)src->count, sizeof(*dst->params));
    if (!dst->params)
        return HK_ENOMEM;
    for (int i = 0; i < src->count; i++) {
        hkc_param *d = &dst->params[i];
        *d = src->params[i];
        d->name = strdup(src->params[i].name);
        d->type = strdup(src->params[i].type);
        dst->count = i + 1;
        if (!d->name || !d->type) {
            hkc_signature_free(dst);
            return HK_ENOMEM;
        }
    }
    return 0;
}

static void format_param(const hkc_param *p, hkc_strbuf *out)
{
    hkc_strbuf_puts(out, p->type);
    if (p->name[0]) {
        if (p->kind != HK_PARAM_POINTER)
            hkc_strbuf_puts(out, " ");
        hkc_strbuf_puts(out, p->name);
    }
}

void hkc_signature_format(const hkc_signature *s, hkc_strbuf *out)
{
    hkc_strbuf_puts(out, "(");
    for (int i = 0; i < s->count; i++) {
        if (i)
            hkc_strbuf_puts(out, ", ");
        format_param(&s->params[i], out);
    }
    hkc_strbuf_puts(out, ")");
}

/* --------------------------------------------------------- source scan */

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

static int is_decl_boundary(const tok *t)
{
    return tok_punct(t, ';') || tok_punct(t, '{') || tok_punct(t, '}');
}

/* Skips a balanced (...) group starting at v[i] == '('; returns the index of
 * the closing ')' or -1. */
static int skip_parens(const tok *v, int n, int i)
{
    int depth = 0;
    for (; i < n; i++) {
        if (tok_punct(&v[i], '('))
            depth++;
        else if (tok_punct(&v[i], ')') && --depth == 0)
            return i;
        else if (v[i].kind == T_EOF)
            return -1;
    }
    return -1;
}

static int push_declared(scan_state *st, const tok *name)
{
    if (st->ndeclared == st->capdeclared) {
        int cap = st->capdeclared ? st->capdeclared * 2 : 8;
        char **d = realloc(st->declared_c, (size_t)cap * sizeof(*d));
        if (!d)
            return HK_ENOMEM;
        st->declared_c = d;
        st->capdeclared = cap;
    }
    char *s = dup_n(name->p, name->n);
    if (!s)
        return HK_ENOMEM;
    st->declared_c[st->ndeclared++] = s;
    return 0;
}

static int was_declared_c(const scan_state *st, const tok *name)
{
    for (int i = 0; i < st->ndeclared; i++)
        if (strlen(st->declared_c[i]) == name->n &&
            memcmp(st->declared_c[i], name->p, name->n) == 0)
            return 1;
    return 0;
}

static int scan_extra_sync(const char *text)
{
    tokvec tv;
    if (tokenize(text, strlen(text), 1, &tv))
        return 1; /* out of memory: stay conservative */
    int found = tv.pp_sync;
    for (int i = 0; i < tv.n && !found; i++)
        if (tv.v[i].kind == T_IDENT && is_sync_name(tv.v[i].p, tv.v[i].n))
            found = 1;
    free(tv.v);
    return found;
}

int hkc_source_scan(const char *src, const char *extra_text, hkc_source_kernel **out,
                    int *count, hkc_strbuf *err)
{
    tokvec tv = {0};
    scope *stack = NULL;
    int depth = 0, cap = 0;
    scan_state st = {0};
    int outside_sync = 0;
    int rc = 0;

    *out = NULL;
    *count = 0;
    if (!src)
        src = "";
    rc = tokenize(src, strlen(src), 1, &tv);
    if (rc)
        return rc;
    outside_sync = tv.pp_sync;
    if (extra_text && !outside_sync)
        outside_sync = scan_extra_sync(extra_text);

    const tok *v = tv.v;
    int n = tv.n - 1; /* without the final T_EOF */
    scope_kind pending = SC_OTHER;
    int pending_kernel = -1;

    for (int i = 0; i < n; i++) {
        const tok *t = &v[i];

        if (tok_punct(t, '{')) {
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
        if (tok_punct(t, '}')) {
            if (depth > 0)
                depth--;
            pending = SC_OTHER;
            continue;
        }
        if (tok_punct(t, ';')) {
            pending = SC_OTHER;
            continue;
        }
        if (t->kind != T_IDENT)
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
        if (tok_is(t, "namespace")) {
            pending = SC_NAMESPACE;
            continue;
        }
        if (tok_is(t, "extern") && i + 2 < n && v[i + 1].kind == T_STR &&
            tok_is(&v[i + 1], "\"C\"") && tok_punct(&v[i + 2], '{')) {
            pending = SC_EXTERN_C;
            i++; /* the '{' is handled by the loop */
            continue;
        }
        if (!tok_is(t, "__global__"))
            continue;

        /* A kernel header: look back to the start of the declaration for
         * `template` and `extern "C"`. */
        int is_template = 0, extern_c = 0, in_ns = 0, in_kernel_or_other = 0;
        for (int j = i - 1; j >= 0 && !is_decl_boundary(&v[j]); j--) {
            if (tok_is(&v[j], "template"))
                is_template = 1;
            if (tok_is(&v[j], "extern") && v[j + 1].kind == T_STR && tok_is(&v[j + 1], "\"C\""))
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
            if (tok_punct(&v[j], '(')) {
                const tok *prev = &v[j - 1];
                if (prev->kind == T_IDENT && !tok_is(prev, "__launch_bounds__") &&
                    !tok_is(prev, "__attribute__") && !tok_is(prev, "__declspec") &&
                    !tok_is(prev, "alignas") && !tok_is(prev, "__global__")) {
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
            if (tok_punct(&v[k], '(')) {
                k = skip_parens(v, n, k);
                if (k < 0)
                    break;
            }
            k++;
        }
        if (k < 0 || k >= n)
            continue;
        const tok *name = &v[name_i];
        int skip = is_template || in_ns || in_kernel_or_other;
        if (tok_punct(&v[k], ';') || tok_punct(&v[k], '}')) {
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
        rc = parse_tokens(&v[j + 1], close - j - 1, &sk->sig, &perr);
        if (rc) {
            if (rc == HK_EINVAL)
                hkc_strbuf_printf(err, "kernel '%.*s' (line %d): %s", (int)name->n, name->p,
                                  sk->line, perr.data);
            hkc_strbuf_free(&perr);
            goto done;
        }
        hkc_strbuf_free(&perr);
        sk->name = dup_n(name->p, name->n);
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

/* -------------------------------------------------------------- packing */

static void describe(hkc_strbuf *err, const char *kernel, int i, const hkc_param *p)
{
    if (kernel && kernel[0])
        hkc_strbuf_printf(err, "%s: ", kernel);
    if (p->name[0])
        hkc_strbuf_printf(err, "parameter %d '%s' (%s) ", i + 1, p->name, p->type);
    else
        hkc_strbuf_printf(err, "parameter %d (%s) ", i + 1, p->type);
}

static const char *arg_kind_text(const hk_arg *a)
{
    switch (a->kind) {
    case HK_ARG_INT:
    case HK_ARG_UINT:
    case HK_ARG_FLOAT: return "a number";
    case HK_ARG_BOOL: return "a boolean";
    case HK_ARG_BUFFER: return "a buffer";
    case HK_ARG_NULL: return "a null pointer";
    case HK_ARG_VECTOR: return "a vector";
    }
    return "an unknown argument kind";
}

/* Prints the argument's value for a message. */
static void arg_value_text(hkc_strbuf *s, const hk_arg *a)
{
    switch (a->kind) {
    case HK_ARG_INT: hkc_strbuf_printf(s, "%" PRId64, a->v.i); break;
    case HK_ARG_UINT: hkc_strbuf_printf(s, "%" PRIu64, a->v.u); break;
    case HK_ARG_FLOAT: {
        /* The shortest spelling that reads back as the same double. */
        char buf[40];
        if (a->v.f == floor(a->v.f) && fabs(a->v.f) < 1e16) {
            hkc_strbuf_printf(s, "%.0f", a->v.f);
            break;
        }
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof(buf), "%.*g", prec, a->v.f);
            if (strtod(buf, NULL) == a->v.f || isnan(a->v.f))
                break;
        }
        hkc_strbuf_puts(s, buf);
        break;
    }
    case HK_ARG_BOOL: hkc_strbuf_puts(s, a->v.i ? "true" : "false"); break;
    default: hkc_strbuf_puts(s, arg_kind_text(a)); break;
    }
}

static int is_int_dtype(hk_dtype d)
{
    return d >= HK_I8 && d <= HK_U64;
}

static int is_unsigned_dtype(hk_dtype d)
{
    return d >= HK_U8 && d <= HK_U64;
}

static void int_range(hk_dtype d, int64_t *lo, uint64_t *hi)
{
    unsigned bits = (unsigned)hk_dtype_size(d) * 8;
    if (is_unsigned_dtype(d)) {
        *lo = 0;
        *hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    } else {
        *lo = bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
        *hi = (UINT64_C(1) << (bits - 1)) - 1;
    }
}

static void store_int(void *dst, hk_dtype d, uint64_t bits)
{
    switch (hk_dtype_size(d)) {
    case 1: { uint8_t x = (uint8_t)bits; memcpy(dst, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)bits; memcpy(dst, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)bits; memcpy(dst, &x, 4); break; }
    default: memcpy(dst, &bits, 8); break;
    }
}

/* Where a number goes, for messages: parameter `index` of `kernel`, and for
 * a vector the lane (-1 for a scalar parameter). */
typedef struct slot {
    const char *kernel;
    const hkc_param *p;
    int index, lane;
} slot;

static void describe_slot(hkc_strbuf *err, const slot *at)
{
    describe(err, at->kernel, at->index, at->p);
    if (at->lane >= 0)
        hkc_strbuf_printf(err, "lane %c: ", "xyzw"[at->lane]);
}

/* Converts a number (INT, UINT, FLOAT or BOOL) to the parameter's type at
 * dst: a scalar parameter's value, or one lane of a vector parameter (whose
 * dtype is its element type), with the same rules for both. */
static int convert_number(const slot *at, const hk_arg *a, void *dst, hkc_strbuf *err)
{
    const hkc_param *p = at->p;
    if (p->is_bool) {
        int ok = a->kind == HK_ARG_BOOL || (a->kind == HK_ARG_INT && (a->v.i == 0 || a->v.i == 1)) ||
                 (a->kind == HK_ARG_UINT && a->v.u <= 1);
        if (!ok) {
            describe_slot(err, at);
            hkc_strbuf_puts(err, "got ");
            arg_value_text(err, a);
            hkc_strbuf_puts(err, ", expects a boolean (true, false, 0 or 1)");
            return HK_EARG;
        }
        uint8_t b = a->kind == HK_ARG_UINT ? a->v.u != 0 : a->v.i != 0;
        memcpy(dst, &b, 1);
        return 0;
    }

    hk_dtype d = p->dtype;
    if (is_int_dtype(d)) {
        /* The value as a sign and either a negative int64 or a uint64. */
        int negative = 0, in_range = 1;
        int64_t sv = 0, lo;
        uint64_t uv = 0, hi;
        int_range(d, &lo, &hi);
        switch (a->kind) {
        case HK_ARG_INT:
            negative = a->v.i < 0;
            sv = a->v.i;
            uv = (uint64_t)a->v.i;
            break;
        case HK_ARG_BOOL: uv = a->v.i != 0; break;
        case HK_ARG_UINT: uv = a->v.u; break;
        default: {
            double f = a->v.f;
            if (!isfinite(f) || f != floor(f)) {
                describe_slot(err, at);
                hkc_strbuf_puts(err, "got ");
                arg_value_text(err, a);
                hkc_strbuf_puts(err, ", expects an integer");
                return HK_EARG;
            }
            /* 2^63 and 2^64 are exact doubles; compare before converting. */
            if (f < 0) {
                negative = 1;
                if (f < -9223372036854775808.0)
                    in_range = 0;
                else
                    sv = (int64_t)f;
            } else if (f >= 18446744073709551616.0) {
                in_range = 0;
            } else {
                uv = (uint64_t)f;
            }
            break;
        }
        }
        if (in_range)
            in_range = negative ? sv >= lo : uv <= hi;
        if (!in_range) {
            describe_slot(err, at);
            hkc_strbuf_puts(err, "value ");
            arg_value_text(err, a);
            hkc_strbuf_printf(err, " out of range [%" PRId64 ", %" PRIu64 "]", lo, hi);
            return HK_EARG;
        }
        store_int(dst, d, negative ? (uint64_t)sv : uv);
        return 0;
    }

    /* Floating point parameters. */
    double f;
    switch (a->kind) {
    case HK_ARG_INT: f = (double)a->v.i; break;
    case HK_ARG_UINT: f = (double)a->v.u; break;
    case HK_ARG_BOOL: f = a->v.i != 0; break;
    default: f = a->v.f; break;
    }
    if (d == HK_F64) {
        memcpy(dst, &f, 8);
        return 0;
    }
    float g = (float)f;
    int overflow = isinf(g) && !isinf(f);
    uint16_t h = 0;
    double maxv = 3.4028234663852886e38;
    if (d == HK_F16) {
        h = hkc_f32_to_f16(g);
        /* Through float, a double just under f16's rounding edge (65520) can
         * round up to it and on to infinity: it belongs to the largest f16. */
        if ((h & 0x7fff) == 0x7c00 && fabs(f) < 65520.0)
            h = (uint16_t)((h & 0x8000) | 0x7bff);
        overflow = overflow || ((h & 0x7fff) == 0x7c00 && !isinf(f));
        maxv = 65504.0;
    } else if (d == HK_BF16) {
        h = hkc_f32_to_bf16(g);
        overflow = overflow || ((h & 0x7fff) == 0x7f80 && !isinf(f));
        maxv = 3.3895313892515355e38;
    }
    if (overflow) {
        describe_slot(err, at);
        hkc_strbuf_puts(err, "value ");
        arg_value_text(err, a);
        hkc_strbuf_printf(err, " out of range [%.8g, %.8g]", -maxv, maxv);
        return HK_EARG;
    }
    if (d == HK_F32)
        memcpy(dst, &g, 4);
    else
        memcpy(dst, &h, 2);
    return 0;
}

static int pack_scalar(const hkc_param *p, const hk_arg *a, void *dst, const char *kernel, int i,
                       hkc_strbuf *err)
{
    if (a->kind == HK_ARG_BUFFER || a->kind == HK_ARG_NULL || a->kind == HK_ARG_VECTOR) {
        describe(err, kernel, i, p);
        hkc_strbuf_printf(err, "got %s, expects %s", arg_kind_text(a),
                          p->is_bool ? "a boolean" : "a number");
        return HK_EARG;
    }
    if (a->kind != HK_ARG_INT && a->kind != HK_ARG_UINT && a->kind != HK_ARG_FLOAT &&
        a->kind != HK_ARG_BOOL) {
        describe(err, kernel, i, p);
        hkc_strbuf_printf(err, "got an argument of unknown kind %d", (int)a->kind);
        return HK_EARG;
    }
    const slot at = {kernel, p, i, -1};
    return convert_number(&at, a, dst, err);
}

/* Each lane is a double, converted as a scalar of the element type. */
static int pack_vector(const hkc_param *p, const hk_arg *a, void *dst, const char *kernel, int i,
                       hkc_strbuf *err)
{
    static const char *const fields[] = {"", "x", "x, y", "x, y, z", "x, y, z, w"};
    size_t esize = hk_dtype_size(p->dtype);
    int lanes = (int)(p->size / esize);
    if (a->kind != HK_ARG_VECTOR || !a->v.vec) {
        describe(err, kernel, i, p);
        if (a->kind == HK_ARG_VECTOR) {
            hkc_strbuf_puts(err, "got a vector whose values pointer is NULL");
        } else {
            hkc_strbuf_puts(err, "got ");
            arg_value_text(err, a);
        }
        hkc_strbuf_printf(err, ", expects a vector of %d numbers (a table {%s} in Lua)", lanes,
                          fields[lanes]);
        return HK_EARG;
    }
    for (int l = 0; l < lanes; l++) {
        const slot at = {kernel, p, i, l};
        const hk_arg v = hk_arg_float(a->v.vec[l]);
        int rc = convert_number(&at, &v, (unsigned char *)dst + (size_t)l * esize, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int pack_pointer(const hkc_param *p, const hk_arg *a, int device, void *dst,
                        const char *kernel, int i, hkc_strbuf *err)
{
    uint64_t addr = 0;
    if (a->kind == HK_ARG_NULL) {
        memcpy(dst, &addr, 8);
        return 0;
    }
    if (a->kind != HK_ARG_BUFFER) {
        describe(err, kernel, i, p);
        hkc_strbuf_puts(err, "got ");
        arg_value_text(err, a);
        if (p->dtype == HK_DTYPE_COUNT)
            hkc_strbuf_puts(err, ", expects a buffer");
        else
            hkc_strbuf_printf(err, ", expects a buffer of %s", hk_dtype_name(p->dtype));
        return HK_EARG;
    }
    const hk_buffer *b = a->v.buf;
    if (!b) {
        describe(err, kernel, i, p);
        hkc_strbuf_puts(err, "got a NULL hk_buffer pointer; use hk_arg_null() to pass a null "
                        "pointer deliberately");
        return HK_EARG;
    }
    hk_dtype bd = hk_buffer_dtype(b);
    if (p->dtype != HK_DTYPE_COUNT && bd != p->dtype) {
        describe(err, kernel, i, p);
        const char *bn = hk_dtype_name(bd);
        hkc_strbuf_printf(err, "expects a buffer of %s, got a buffer of %s",
                          hk_dtype_name(p->dtype), bn ? bn : "?");
        return HK_EARG;
    }
    int bdev = hk_buffer_device(b);
    if (bdev != device) {
        describe(err, kernel, i, p);
        hkc_strbuf_printf(err, "got a buffer on device %d, but the kernel runs on device %d",
                          bdev, device);
        return HK_EARG;
    }
    addr = (uint64_t)(uintptr_t)b->kptr;
    memcpy(dst, &addr, 8);
    return 0;
}

int hkc_signature_pack(const hkc_signature *sig, const char *kernel, const hk_arg *args,
                       int nargs, int device, void *kernarg, hkc_strbuf *err)
{
    if (nargs != sig->count) {
        if (kernel && kernel[0])
            hkc_strbuf_printf(err, "%s: ", kernel);
        hkc_strbuf_printf(err, "expects %d argument%s ", sig->count, sig->count == 1 ? "" : "s");
        hkc_signature_format(sig, err);
        hkc_strbuf_printf(err, ", got %d", nargs);
        return HK_EARG;
    }
    if (sig->kernarg_size)
        memset(kernarg, 0, sig->kernarg_size);
    for (int i = 0; i < sig->count; i++) {
        const hkc_param *p = &sig->params[i];
        unsigned char *dst = (unsigned char *)kernarg + p->offset;
        int rc;
        switch (p->kind) {
        case HK_PARAM_POINTER: rc = pack_pointer(p, &args[i], device, dst, kernel, i, err); break;
        case HK_PARAM_VECTOR: rc = pack_vector(p, &args[i], dst, kernel, i, err); break;
        default: rc = pack_scalar(p, &args[i], dst, kernel, i, err); break;
        }
        if (rc)
            return rc;
    }
    return 0;
}
