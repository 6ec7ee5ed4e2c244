/* test_devlib_funcs.c's parts: the list of HIP's device functions, the
 * coverage probe generated from it, the list of what a backend lacks and
 * why, and the value checks by signature class. */
#ifndef HK_TEST_DEVLIB_FUNCS_H
#define HK_TEST_DEVLIB_FUNCS_H

#include <ctype.h>
#include <stdarg.h>

/* ------------------------------------------------------------ growing text */

typedef struct {
    char *s;
    size_t n, cap;
} text;

static void text_addf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_addf(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->n + (size_t)k + 1 > t->cap) {
        t->cap = (t->n + (size_t)k + 1) * 2;
        t->s = realloc(t->s, t->cap);
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

static const char *memmem_find(const void *hay, size_t n, const char *needle, size_t k)
{
    const char *h = hay;
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(h + i, needle, k))
            return h + i;
    return NULL;
}

/* tests/devlib/<file>: under the source folder the build names, else
 * (a build folder carried to another machine) under the current one. */
static FILE *devlib_open(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", HK_DEVLIB_DIR, file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(path, sizeof path, "tests/devlib/%s", file);
        f = fopen(path, "rb");
    }
    return f;
}

/* ------------------------------------------------------------- the list */

enum { MAX_PARAMS = 6 };

typedef struct {
    char name[64];
    char sig[192];
    char ret[64];
    int nparams;
    char params[MAX_PARAMS][48]; /* as the probe spells them */
    int probed;                  /* every parameter type exists on all backends */
    int host_only;               /* a parameter type only the host compiler has */
} fn_entry;

typedef struct {
    fn_entry *fn;
    int n, cap;
} fn_list;

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    size_t i = 0;
    while (isspace((unsigned char)s[i]))
        i++;
    memmove(s, s + i, strlen(s + i) + 1);
}

/* The parameter types every backend has (1), the host compiler alone (2:
 * _Float16, which NVIDIA's compiler parses but cannot generate code for);
 * others (the OpenCL scope types) are not probed (0): the missing list
 * names them. */
static int known_type(const char *t)
{
    if (strstr(t, "_Float16"))
        return 2;
    static const char *const words[] = {
        "const", "unsigned", "signed", "int", "long", "short", "char", "float", "double", "bool",
        "void", "size_t", "int32_t", "uint32_t", "uint64_t", "__half", "__half2", "float2",
        "short2", "ushort2", "char4", "uchar4", "hip_bfloat16", "wchar_t", NULL};
    char buf[64];
    snprintf(buf, sizeof buf, "%s", t);
    for (char *w = strtok(buf, " *"); w; w = strtok(NULL, " *")) {
        int ok = 0;
        for (int i = 0; words[i]; i++)
            ok |= !strcmp(w, words[i]);
        if (!ok)
            return 0;
    }
    return 1;
}

/* Splits "RET name(P1, P2 = default)" into the entry's fields. */
static int parse_sig(fn_entry *e)
{
    char pat[80];
    snprintf(pat, sizeof pat, " %s(", e->name);
    const char *at = strstr(e->sig, pat);
    const char *close = strrchr(e->sig, ')');
    if (!at || !close)
        return -1;
    const char *rs = strncmp(e->sig, "template", 8) ? e->sig : strchr(e->sig, '>') + 2;
    snprintf(e->ret, sizeof e->ret, "%.*s", (int)(at - rs), rs);
    char ps[160];
    snprintf(ps, sizeof ps, "%.*s", (int)(close - (at + strlen(pat))), at + strlen(pat));
    e->probed = 1;
    e->nparams = 0;
    for (char *save = NULL, *p = strtok_r(ps, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *d = strstr(p, "= default");
        if (d)
            *d = 0;
        trim(p);
        if (strstr(p, ". . ."))
            continue; /* variadic: probed with the fixed parameters */
        if (!strcmp(p, "T"))
            p = "float";
        else if (!strcmp(p, "uint"))
            p = "unsigned int"; /* HIP's typedef */
        if (e->nparams == MAX_PARAMS)
            return -1;
        int k = known_type(p);
        e->probed &= k != 0;
        e->host_only |= k == 2;
        snprintf(e->params[e->nparams++], sizeof e->params[0], "%s", p);
    }
    return 0;
}

/* Appends the list in path to l (zeroed at first). */
static int fn_list_read(const char *file, fn_list *l)
{
    FILE *f = devlib_open(file);
    if (!f)
        return -1;
    char line[512];
    int bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *hdr = strtok(line, "\t"), *name = strtok(NULL, "\t"), *sig = strtok(NULL, "\n");
        if (!hdr || !name || !sig) {
            bad++;
            continue;
        }
        if (l->n == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 256;
            l->fn = realloc(l->fn, (size_t)l->cap * sizeof *l->fn);
        }
        fn_entry *e = &l->fn[l->n];
        memset(e, 0, sizeof *e);
        snprintf(e->name, sizeof e->name, "%s", name);
        snprintf(e->sig, sizeof e->sig, "%s", sig);
        if (parse_sig(e) != 0) {
            tap_diag("cannot parse %s", sig);
            bad++;
            continue;
        }
        l->n++;
    }
    fclose(f);
    return bad ? -1 : 0;
}

static void fn_list_free(fn_list *l) { free(l->fn); }

/* ------------------------------------------------------ the coverage probe */

/* One constexpr check per overload: the call with exactly these argument
 * types resolves (made dependent on a template parameter, so a missing name
 * or an ambiguity is a substitution failure, not an error). A call without
 * arguments cannot depend on one: such names get a fallback template NAME()
 * returning __hkt_none in a namespace the probe sees too, which loses to
 * any real declaration (a non-template wins a tie). The results are bytes behind "HKCOV:", which the
 * kernel copies out and a cubin keeps. */
static char *probe_source(const fn_list *l)
{
    text t = {0};
    text_addf(&t, "#include <hip/hip_runtime.h>\n#include <hip/hip_fp16.h>\n"
                  "#include <hip/hip_bf16.h>\n#include <stdint.h>\n#include <stddef.h>\n"
                  "struct __hkt_none {};\n"
                  "template <typename _T> struct __hkt_real { static constexpr bool v = true; };\n"
                  "template <> struct __hkt_real<__hkt_none> { static constexpr bool v = false; };\n"
                  "template <typename _D, typename _T> struct __hkt_dep { typedef _T type; };\n"
                  "template <typename _T> __device__ _T __hkt_val();\n"
                  "#define __HKT_ARG(_T) __hkt_val<typename __hkt_dep<_D, _T>::type>()\n");
    text_addf(&t, "namespace __hkt_fb {\n");
    for (int i = 0; i < l->n; i++)
        if (l->fn[i].probed && l->fn[i].nparams == 0 && (i == 0 || strcmp(l->fn[i - 1].name, l->fn[i].name)))
            text_addf(&t, "template <typename _X = void> __device__ __hkt_none %s();\n", l->fn[i].name);
    text_addf(&t, "}\nnamespace __hkt_probe {\nusing namespace __hkt_fb;\n");
    for (int i = 0; i < l->n; i++) {
        const fn_entry *e = &l->fn[i];
        if (!e->probed)
            continue;
        if (e->host_only)
            text_addf(&t, "#ifndef __HIPKIT_HOST__\n"
                          "template <typename _D> __device__ constexpr bool __hkt_p%d(int) { return false; }\n"
                          "#else\n", i);
        if (e->nparams == 0) {
            text_addf(&t, "template <typename _D> __device__ constexpr bool __hkt_p%d(int) "
                          "{ return __hkt_real<decltype(%s())>::v; }\n", i, e->name);
            continue;
        }
        text_addf(&t, "template <typename _D> __device__ constexpr auto __hkt_p%d(int) -> decltype(%s(",
                  i, e->name);
        for (int j = 0; j < e->nparams; j++)
            text_addf(&t, "%s__HKT_ARG(%s)", j ? ", " : "", e->params[j]);
        text_addf(&t, "), true) { return true; }\n"
                      "template <typename _D> __device__ constexpr bool __hkt_p%d(...) { return false; }\n",
                  i);
        if (e->host_only)
            text_addf(&t, "#endif\n");
    }
    text_addf(&t, "}\nusing namespace __hkt_probe;\n"
                  "__device__ const char __hkt_cov[] = {'H', 'K', 'C', 'O', 'V', ':',\n");
    for (int i = 0; i < l->n; i++)
        if (l->fn[i].probed)
            text_addf(&t, "__hkt_p%d<void>(0) ? '1' : '0',\n", i);
        else
            text_addf(&t, "'0',\n");
    text_addf(&t, "0};\n__global__ void devlib_cov(int *out, int n)\n{\n"
                  "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "    if (i < n)\n        out[i] = __hkt_cov[6 + i];\n}\n");
    return t.s;
}

/* ----------------------------------------------- what a backend lacks, why */

typedef struct {
    char backend[8]; /* host, cuda, or * for both */
    char sig[192];
    char why[240];
} missing_entry;

typedef struct {
    missing_entry *m;
    int n;
} missing_list;

static int missing_read(const char *file, missing_list *ml)
{
    memset(ml, 0, sizeof *ml);
    FILE *f = devlib_open(file);
    if (!f)
        return -1;
    char line[640];
    int cap = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *b = strtok(line, "\t"), *sig = strtok(NULL, "\t"), *why = strtok(NULL, "\n");
        if (!b || !sig || !why || strlen(why) < 8) { /* a reason, not a placeholder */
            bad++;
            continue;
        }
        if (ml->n == cap) {
            cap = cap ? cap * 2 : 64;
            ml->m = realloc(ml->m, (size_t)cap * sizeof *ml->m);
        }
        missing_entry *m = &ml->m[ml->n++];
        snprintf(m->backend, sizeof m->backend, "%s", b);
        snprintf(m->sig, sizeof m->sig, "%s", sig);
        snprintf(m->why, sizeof m->why, "%s", why);
    }
    fclose(f);
    return bad ? -1 : 0;
}

static const char *missing_reason(const missing_list *ml, const char *backend, const char *sig)
{
    for (int i = 0; i < ml->n; i++)
        if (!strcmp(ml->m[i].sig, sig) && (!strcmp(ml->m[i].backend, "*") || !strcmp(ml->m[i].backend, backend)))
            return ml->m[i].why;
    return NULL;
}

static void missing_free(missing_list *ml) { free(ml->m); }

#include "devlib_values.h"

#endif
