/* Kernel parameter lists: one declaration at a time from tokens, whole lists
 * from C text, and their C struct layout in the kernarg buffer. */
#include "internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    {"__nv_bfloat16", HK_BF16, 0}, {"nv_bfloat16", HK_BF16, 0},
    /* CUDA's 8-bit floats: no dtype of their own, so their bytes */
    {"__nv_fp8_e4m3", HK_U8, 0}, {"__nv_fp8_e5m2", HK_U8, 0}, {"__nv_fp8_storage_t", HK_U8, 0},
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
        {"nv_bfloat162", HK_BF16, 0},
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

static int is_restrict(const hkc_tok *t)
{
    return hkc_tok_is(t, "__restrict__") || hkc_tok_is(t, "__restrict") || hkc_tok_is(t, "restrict");
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
static int resolve_builtin(char *const *words, int n, hk_dtype *dt, int *is_bool)
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

#define MAX_WORDS 8

/* What the tokens of one parameter say, before its type is resolved. */
typedef struct decl {
    char *words[MAX_WORDS]; /* type words as written; then the name, if no '*' */
    int nwords;
    int pointee_const, pointee_volatile;
    int nptr;               /* '*' and [] */
    int tagged;             /* words[0] is "struct X" (or union, enum, class) */
    const hkc_tok *name;    /* the name after a '*', else NULL */
} decl;

/* Why a parameter is refused: a fixed text, or one written into buf. */
typedef struct why {
    const char *text;
    char buf[256];
} why;

static void why_printf(why *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_printf(why *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->buf, sizeof(w->buf), fmt, ap);
    va_end(ap);
    w->text = w->buf;
}

static void decl_free(decl *d)
{
    for (int i = 0; i < d->nwords; i++)
        free(d->words[i]);
    d->nwords = 0;
}

/* __attribute__((...)) and kin at t[i]: the index of the group's last
 * token. */
static int skip_attribute(const hkc_tok *t, int n, int i)
{
    int depth = 0;
    while (i + 1 < n) {
        i++;
        if (hkc_tok_punct(&t[i], '('))
            depth++;
        else if (hkc_tok_punct(&t[i], ')') && --depth == 0)
            break;
    }
    return i;
}

/* One type word from t[*i]: `struct X` when tagged, else an identifier with
 * any `::` qualification, spaces dropped. Advances *i to its last token.
 * NULL when out of memory. */
static char *read_word(const hkc_tok *t, int n, int *i, int tagged)
{
    const hkc_tok *k = &t[*i];
    if (tagged) {
        size_t len = k->n + 1 + t[*i + 1].n;
        char *w = malloc(len + 1);
        if (w)
            snprintf(w, len + 1, "%.*s %.*s", (int)k->n, k->p, (int)t[*i + 1].n, t[*i + 1].p);
        (*i)++;
        return w;
    }
    size_t len = k->n;
    while (*i + 2 < n && t[*i + 1].kind == HKC_TOK_PUNCT && hkc_tok_is(&t[*i + 1], "::") &&
           t[*i + 2].kind == HKC_TOK_IDENT) {
        *i += 2;
        len = (size_t)(t[*i].p + t[*i].n - k->p);
    }
    char *w = strndup(k->p, len);
    if (!w)
        return NULL;
    /* Collapse any spacing inside "a :: b". */
    char *d = w;
    for (char *s = w; *s; s++)
        if (!isspace((unsigned char)*s))
            *d++ = *s;
    *d = 0;
    return w;
}

/* An identifier at t[i] in a declaration: a qualifier, a type word or the
 * name. Returns the index of the last token it used, or -1 when out of
 * memory; sets w->text when the identifier is misplaced. */
static int read_ident(const hkc_tok *t, int n, int i, decl *d, why *w)
{
    const hkc_tok *k = &t[i];
    if (hkc_tok_is(k, "const") || hkc_tok_is(k, "volatile")) {
        /* After a '*' it qualifies the pointer itself, which does not
         * matter to callers. */
        if (d->nptr == 0) {
            if (k->p[0] == 'c')
                d->pointee_const = 1;
            else
                d->pointee_volatile = 1;
        }
        if (d->name)
            w->text = "qualifier after the parameter name";
    } else if (is_restrict(k)) {
        /* ignored wherever it appears */
    } else if (hkc_tok_is(k, "__attribute__") || hkc_tok_is(k, "__align__") ||
               hkc_tok_is(k, "alignas") || hkc_tok_is(k, "__declspec")) {
        i = skip_attribute(t, n, i);
    } else if (hkc_tok_is(k, "struct") || hkc_tok_is(k, "union") || hkc_tok_is(k, "enum") ||
               hkc_tok_is(k, "class")) {
        if (i + 1 >= n || t[i + 1].kind != HKC_TOK_IDENT || d->nptr || d->name || d->nwords) {
            w->text = "misplaced struct/union/enum keyword";
            return i;
        }
        if (!(d->words[d->nwords] = read_word(t, n, &i, 1)))
            return -1;
        d->nwords++;
        d->tagged = 1;
    } else if (d->nptr > 0 && !d->name) {
        d->name = k;
    } else if (d->name || d->nwords == MAX_WORDS) {
        why_printf(w, "unexpected '%.*s'", (int)k->n, k->p);
    } else {
        if (!(d->words[d->nwords] = read_word(t, n, &i, 0)))
            return -1;
        d->nwords++;
    }
    return i;
}

/* Reads the tokens of one parameter into d, stopping at the first problem
 * (w->text). Returns 0 or HK_ENOMEM. */
static int read_decl(const hkc_tok *t, int n, decl *d, why *w)
{
    for (int i = 0; i < n && !w->text; i++) {
        const hkc_tok *k = &t[i];
        if (k->kind == HKC_TOK_IDENT) {
            if ((i = read_ident(t, n, i, d, w)) < 0)
                return HK_ENOMEM;
        } else if (hkc_tok_punct(k, '*')) {
            if (d->name)
                w->text = "'*' after the parameter name";
            d->nptr++;
        } else if (hkc_tok_punct(k, '[')) {
            /* float x[] and float x[4] are pointers, as in C. */
            int depth = 1;
            while (i + 1 < n && depth) {
                i++;
                if (hkc_tok_punct(&t[i], '['))
                    depth++;
                else if (hkc_tok_punct(&t[i], ']'))
                    depth--;
            }
            if (depth)
                w->text = "unbalanced '['";
            d->nptr++;
        } else if (hkc_tok_punct(k, '=')) {
            w->text = "default arguments are not supported";
        } else if (hkc_tok_punct(k, '&')) {
            w->text = "reference parameters are not supported";
        } else if (hkc_tok_punct(k, '(')) {
            w->text = "function pointer parameters are not supported";
        } else if (hkc_tok_punct(k, '.')) {
            w->text = "variadic parameters are not supported";
        } else if (hkc_tok_punct(k, '<')) {
            w->text = "template types are not supported";
        } else {
            why_printf(w, "unexpected '%.*s'", (int)k->n, k->p);
        }
    }
    return 0;
}

/* Splits the name from the type words. Without a '*', a trailing word that
 * is no C type keyword names the parameter: `unsigned n`, `size_t n`, but
 * `unsigned long`. Returns the number of type words. */
static int split_name(const decl *d, char *pname, size_t cap, why *w)
{
    int ntype = d->nwords;
    pname[0] = 0;
    if (d->name) {
        snprintf(pname, cap, "%.*s", (int)d->name->n, d->name->p);
    } else if (d->nwords >= 2 && !is_builtin_word(d->words[d->nwords - 1]) &&
               !strchr(d->words[d->nwords - 1], ' ')) {
        snprintf(pname, cap, "%s", d->words[d->nwords - 1]);
        ntype--;
    }
    if (ntype == 0)
        w->text = "missing type";
    else if (pname[0] && (is_reserved(pname) || strstr(pname, "::")))
        why_printf(w, "'%s' cannot name a parameter", pname);
    else if (d->nptr > 1)
        w->text = "pointers to pointers are not supported (pass a void * or a buffer of u64)";
    return ntype;
}

/* The type the words name: kind, dtype, is_bool and, for a vector, lanes.
 * Sets *is_void for a lone `void`; w->text when the type is refused. */
static void resolve_type(const decl *d, int ntype, const char *pname, hkc_param *out, int *lanes,
                         int *is_void, why *w)
{
    hk_dtype dt = HK_DTYPE_COUNT;
    int is_bool = 0;
    out->kind = d->nptr ? HK_PARAM_POINTER : HK_PARAM_SCALAR;
    *lanes = 1;
    int r = resolve_builtin(d->words, ntype, &dt, &is_bool);
    if (r == IS_VOID) {
        if (d->nptr == 0) {
            if (pname[0])
                w->text = "a parameter cannot have type void";
            *is_void = 1;
        }
        dt = HK_DTYPE_COUNT;
    } else if (r == BAD_COMBINATION) {
        w->text = "invalid combination of type keywords";
    } else if (r == NOT_BUILTIN) {
        const named_type *nt = ntype == 1 ? find_named(d->words[0]) : NULL;
        if (nt) {
            dt = nt->dtype;
            is_bool = nt->is_bool;
        } else if (ntype > 1) {
            size_t used = (size_t)snprintf(w->buf, sizeof(w->buf), "unknown type '");
            for (int i = 0; i < ntype && used < sizeof(w->buf); i++)
                used += (size_t)snprintf(w->buf + used, sizeof(w->buf) - used, "%s%s",
                                         i ? " " : "", d->words[i]);
            if (used < sizeof(w->buf))
                snprintf(w->buf + used, sizeof(w->buf) - used, "'");
            w->text = w->buf;
        } else if (d->nptr == 0 && !d->tagged && vector_type(d->words[0], &dt, lanes)) {
            out->kind = HK_PARAM_VECTOR;
        } else if (d->nptr == 0) {
            if (d->tagged)
                why_printf(w, "by-value struct parameters are not supported yet ('%s')",
                           d->words[0]);
            else if (!strcmp(d->words[0], "dim3"))
                w->text = "dim3 cannot be passed by value (pass its x, y and z as unsigned "
                          "parameters, or a uint3)";
            else
                why_printf(w, "unknown type '%s'", d->words[0]);
        }
        else if (!d->tagged && !vector_type(d->words[0], &dt, lanes))
            out->opaque = 1; /* a pointer to a type hipkit does not know */
        else {
            dt = HK_DTYPE_COUNT; /* a vector or tagged pointee: any buffer, as before */
            *lanes = 1;
        }
    }
    out->dtype = dt;
    out->is_const = d->nptr ? d->pointee_const : 0;
    out->is_bool = d->nptr ? 0 : is_bool;
}

/* The normalised spelling: pointee qualifiers first, the type words as
 * written, then " *". Qualifiers of the parameter itself (a scalar's const,
 * a pointer's own const) do not concern callers and are dropped. NULL when
 * out of memory. */
static char *spell_type(const decl *d, int ntype)
{
    hkc_strbuf ty;
    hkc_strbuf_init(&ty);
    if (d->nptr && d->pointee_const)
        hkc_strbuf_puts(&ty, "const ");
    if (d->nptr && d->pointee_volatile)
        hkc_strbuf_puts(&ty, "volatile ");
    for (int i = 0; i < ntype; i++) {
        if (i)
            hkc_strbuf_puts(&ty, " ");
        hkc_strbuf_puts(&ty, d->words[i]);
    }
    if (d->nptr)
        hkc_strbuf_puts(&ty, " *");
    if (ty.oom) {
        hkc_strbuf_free(&ty);
        return NULL;
    }
    return hkc_strbuf_take(&ty);
}

/* Size and alignment as a C struct member. */
static void set_size_align(hkc_param *p, int lanes, int is_void)
{
    if (p->kind == HK_PARAM_POINTER) {
        p->size = p->align = 8;
    } else if (p->kind == HK_PARAM_VECTOR) {
        /* HIP and CUDA agree up to 16 bytes: 1, 2 and 4 lanes are aligned to
         * their size, 3 lanes to the element (float3 is 12 bytes aligned to
         * 4). At 32 bytes (double4, long4, ...) CUDA stops at 16 and HIP
         * goes on to 32: 16 here, and hkc_signature_check (module.c) follows
         * a code object that says 32. */
        uint32_t esize = (uint32_t)hk_dtype_size(p->dtype);
        p->size = esize * (uint32_t)lanes;
        p->align = lanes == 3 ? esize : p->size < 16 ? p->size : 16;
    } else if (!is_void) {
        p->size = p->align = (uint32_t)(p->is_bool ? 1 : hk_dtype_size(p->dtype));
    }
}

/* The parameter's text for messages, on one line however it was spread. */
static char *param_text(const hkc_tok *t, int n)
{
    const char *a = t[0].p, *b = t[n - 1].p + t[n - 1].n;
    char *text = strndup(a, (size_t)(b - a));
    if (!text)
        return NULL;
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
    return text;
}

int hkc_param_parse(const hkc_tok *t, int n, int index, hkc_param *out, int *is_void,
                    hkc_strbuf *err)
{
    decl d = {0};
    why w = {0};
    char pname[128];
    int lanes = 1, rc = HK_ENOMEM;

    memset(out, 0, sizeof(*out));
    *is_void = 0;
    if (n == 0) {
        hkc_strbuf_printf(err, "parameter %d is empty", index);
        return HK_EINVAL;
    }
    if (read_decl(t, n, &d, &w))
        goto fail;
    int ntype = w.text ? 0 : split_name(&d, pname, sizeof(pname), &w);
    if (!w.text)
        resolve_type(&d, ntype, pname, out, &lanes, is_void, &w);
    if (w.text) {
        char *text = param_text(t, n);
        if (!text)
            goto fail;
        hkc_strbuf_printf(err, "parameter %d '%s': %s", index, text, w.text);
        free(text);
        rc = HK_EINVAL;
        goto fail;
    }
    out->type = spell_type(&d, ntype);
    out->name = strdup(pname);
    if (!out->type || !out->name)
        goto fail;
    set_size_align(out, lanes, *is_void);
    decl_free(&d);
    return 0;

fail:
    free(out->type);
    free(out->name);
    memset(out, 0, sizeof(*out));
    *is_void = 0;
    decl_free(&d);
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

/* Which way t moves the bracket depth that commas split parameters at. */
static int depth_change(const hkc_tok *t)
{
    if (t->kind != HKC_TOK_PUNCT || t->n != 1)
        return 0;
    switch (t->p[0]) {
    case '(': case '[': case '{': case '<': return 1;
    case ')': case ']': case '}': case '>': return -1;
    default: return 0;
    }
}

/* The end of the parameter starting at v[start]: the next comma outside
 * every bracket, or n. */
static int param_end(const hkc_tok *v, int n, int start)
{
    int depth = 0;
    for (int i = start; i < n; i++) {
        depth += depth_change(&v[i]);
        if (depth == 0 && hkc_tok_punct(&v[i], ','))
            return i;
    }
    return n;
}

int hkc_signature_parse_tokens(const hkc_tok *v, int n, hkc_signature *out, hkc_strbuf *err)
{
    out->params = NULL;
    out->count = 0;
    out->kernarg_size = 0;
    if (n == 0)
        return 0;
    int nparts = 0;
    for (int s = 0; s <= n; s = param_end(v, n, s) + 1)
        nparts++;
    out->params = calloc((size_t)nparts, sizeof(*out->params));
    if (!out->params)
        return HK_ENOMEM;

    for (int s = 0; s <= n;) {
        int e = param_end(v, n, s), idx = out->count + 1, is_void = 0;
        int rc = hkc_param_parse(&v[s], e - s, idx, &out->params[out->count], &is_void, err);
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
        s = e + 1;
    }
    layout(out);
    return 0;
}

int hkc_signature_parse(const char *text, hkc_signature *out, hkc_strbuf *err)
{
    hkc_tokvec tv;
    out->params = NULL;
    out->count = 0;
    out->kernarg_size = 0;
    if (!text)
        text = "";
    int rc = hkc_tokenize(text, strlen(text), NULL, NULL, &tv);
    if (rc)
        return rc;
    int first = 0, last = tv.n - 1; /* last is the HKC_TOK_EOF */
    /* Drop one pair of outer parentheses when they enclose everything. */
    if (last >= 2 && hkc_tok_punct(&tv.v[0], '(') && hkc_tok_punct(&tv.v[last - 1], ')')) {
        int depth = 0, encloses = 1;
        for (int i = 0; i < last; i++) {
            if (hkc_tok_punct(&tv.v[i], '('))
                depth++;
            else if (hkc_tok_punct(&tv.v[i], ')') && --depth == 0 && i != last - 1)
                encloses = 0;
        }
        if (encloses) {
            first = 1;
            last--;
        }
    }
    rc = hkc_signature_parse_tokens(tv.v + first, last - first, out, err);
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

