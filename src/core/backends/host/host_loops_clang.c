/* Barrier regions as loops: libclang, loaded at run time (hipkit runs
 * without it), the parse of the translation unit the C++ compiler builds,
 * and one kernel's AST as the flat tree host_loops_ast.h describes, with the
 * small queries on it (children, operators, source lines) that the
 * analysis (host_loops_uniform.c, host_loops_regions.c) asks. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_fault.h"
#include "host_loops.h"

#if HKC_HAVE_LIBCLANG
#include "host_loops_ast.h"

hkc_clang hkc_lc;
static pthread_once_t lc_once = PTHREAD_ONCE_INIT;
static char lc_status[256];
static int lc_ok;

static void lc_load(void)
{
    static const char *const names[] = {"libclang-15.so.1", "libclang-16.so.1", "libclang-17.so.1",
                                        "libclang-18.so.1", "libclang-19.so.1", "libclang-14.so.1",
                                        "libclang.so.1", "libclang.so"};
    const char *env = getenv("HIPKIT_LIBCLANG");
    void *dl = NULL;
    const char *name = NULL;
    if (env && *env) {
        dl = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        name = env;
    }
    for (size_t i = 0; !dl && !(env && *env) && i < sizeof names / sizeof *names; i++)
        if ((dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)))
            name = names[i];
    if (!dl) {
        snprintf(lc_status, sizeof lc_status, "libclang was not found (%s; install libclang-15 or "
                 "set HIPKIT_LIBCLANG)", env && *env ? env : "libclang-15.so.1 and others");
        return;
    }
#define HKC_CLANG_LOAD(f)                                                                    \
    if (!(hkc_lc.f = (__typeof__(f) *)dlsym(dl, #f))) {                                      \
        snprintf(lc_status, sizeof lc_status, "%s lacks %s", name, #f);                       \
        return;                                                                              \
    }
    HKC_CLANG_FNS(HKC_CLANG_LOAD)
#undef HKC_CLANG_LOAD
    snprintf(lc_status, sizeof lc_status, "%s", name);
    lc_ok = 1;
}

const char *hkc_host_loops_status(void)
{
    pthread_once(&lc_once, lc_load);
    return lc_status;
}

int hkc_loops_clang_ready(void)
{
    pthread_once(&lc_once, lc_load);
    return lc_ok;
}

/* ------------------------------------------------------------ the tree */

char *hkc_loops_spell(CXString s)
{
    const char *c = LC(clang_getCString)(s);
    char *r = strdup(c ? c : "");
    LC(clang_disposeString)(s);
    return r;
}

int hkc_loops_name_is(CXCursor c, const char *want)
{
    CXString s = LC(clang_getCursorSpelling)(c);
    const char *p = LC(clang_getCString)(s);
    int r = p && !strcmp(p, want);
    LC(clang_disposeString)(s);
    return r;
}

static void offsets(CXCursor c, unsigned *beg, unsigned *end, int *macro)
{
    CXSourceRange r = LC(clang_getCursorExtent)(c);
    CXSourceLocation a = LC(clang_getRangeStart)(r), b = LC(clang_getRangeEnd)(r);
    CXFile fa, fb, sa, sb;
    unsigned sa_off, sb_off;
    LC(clang_getExpansionLocation)(a, &fa, NULL, NULL, beg);
    LC(clang_getExpansionLocation)(b, &fb, NULL, NULL, end);
    LC(clang_getSpellingLocation)(a, &sa, NULL, NULL, &sa_off);
    LC(clang_getSpellingLocation)(b, &sb, NULL, NULL, &sb_off);
    *macro = sa != fa || sb != fb || sa_off != *beg || sb_off != *end ||
             !LC(clang_Location_isFromMainFile)(a) || !LC(clang_Location_isFromMainFile)(b);
}

typedef struct collect {
    lkernel *k;
    int parent, last;
} collect;

static int add_node(lkernel *k, CXCursor c, int parent)
{
    if (k->nn == k->ncap) {
        int ncap = k->ncap ? 2 * k->ncap : 256;
        lnode *nn = realloc(k->n, (size_t)ncap * sizeof *nn);
        if (!nn) {
            k->oom = 1;
            return -1;
        }
        k->n = nn;
        k->ncap = ncap;
    }
    lnode *n = &k->n[k->nn];
    memset(n, 0, sizeof *n);
    n->c = c;
    n->kind = LC(clang_getCursorKind)(c);
    offsets(c, &n->beg, &n->end, &n->macro);
    n->parent = parent;
    n->child = n->next = n->var = n->region = n->warp = n->vote = n->arg = -1;
    return k->nn++;
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    collect *st = data;
    int i = add_node(st->k, c, st->parent);
    if (i < 0)
        return CXChildVisit_Break;
    if (st->last >= 0)
        st->k->n[st->last].next = i;
    else if (st->parent >= 0)
        st->k->n[st->parent].child = i;
    st->last = i;
    collect sub = {st->k, i, -1};
    LC(clang_visitChildren)(c, visit, &sub);
    return st->k->oom ? CXChildVisit_Break : CXChildVisit_Continue;
}

void hkc_loops_tree(lkernel *k, CXCursor fn)
{
    k->fn = add_node(k, fn, -1);
    if (k->fn >= 0) {
        collect st = {k, k->fn, -1};
        LC(clang_visitChildren)(fn, visit, &st);
    }
    k->body = -1;
    for (int c = k->fn >= 0 ? k->n[k->fn].child : -1; c >= 0; c = k->n[c].next)
        if (k->n[c].kind == CXCursor_CompoundStmt)
            k->body = c;
}

unsigned hkc_loops_line_at(const lkernel *k, unsigned off)
{
    CXSourceLocation l = LC(clang_getLocationForOffset)(k->unit, k->file, off);
    CXString fn;
    unsigned line = 0;
    LC(clang_getPresumedLocation)(l, &fn, &line, NULL);
    LC(clang_disposeString)(fn);
    return line;
}

void hkc_loops_refuse(lkernel *k, int node, const char *fmt, const char *what)
{
    if (k->why[0])
        return;
    int len = snprintf(k->why, sizeof k->why, fmt, what);
    if (node >= 0 && len > 0 && (size_t)len < sizeof k->why)
        snprintf(k->why + len, sizeof k->why - (size_t)len, " (line %u)", hkc_loops_line_at(k, k->n[node].beg));
}

int hkc_loops_nth_child(const lkernel *k, int node, int i)
{
    int c = k->n[node].child;
    while (c >= 0 && i--)
        c = k->n[c].next;
    return c;
}

int hkc_loops_nchildren(const lkernel *k, int node)
{
    int n = 0;
    for (int c = k->n[node].child; c >= 0; c = k->n[c].next)
        n++;
    return n;
}

/* Skips the wrappers the AST puts around an expression statement. */
int hkc_loops_unwrap(const lkernel *k, int node)
{
    while (node >= 0 && (k->n[node].kind == CXCursor_UnexposedExpr || k->n[node].kind == CXCursor_ParenExpr) &&
           hkc_loops_nchildren(k, node) == 1)
        node = k->n[node].child;
    return node;
}

/* --------------------------------------------------------- operators */

/* The spelling of the operator of a unary or binary operator node: for a
 * binary one the first token after its left operand, for a unary one its
 * first token, or its last when that is ++ or -- (postfix). */
void hkc_loops_op_of(const lkernel *k, int node, char *out, size_t cap)
{
    out[0] = 0;
    CXTranslationUnit tu = LC(clang_Cursor_getTranslationUnit)(k->n[node].c);
    CXToken *toks;
    unsigned nt;
    LC(clang_tokenize)(tu, LC(clang_getCursorExtent)(k->n[node].c), &toks, &nt);
    if (!nt)
        return;
    int binary = k->n[node].kind != CXCursor_UnaryOperator;
    unsigned after = binary && k->n[node].child >= 0 ? k->n[k->n[node].child].end : 0;
    for (unsigned i = 0; i < nt; i++) {
        CXSourceLocation l = LC(clang_getRangeStart)(LC(clang_getTokenExtent)(tu, toks[i]));
        unsigned off;
        LC(clang_getExpansionLocation)(l, NULL, NULL, NULL, &off);
        if (binary && off < after)
            continue;
        char *s = hkc_loops_spell(LC(clang_getTokenSpelling)(tu, toks[i]));
        if (!binary && i == 0 && strcmp(s, "++") && strcmp(s, "--") && strcmp(s, "*") &&
            strcmp(s, "&") && strcmp(s, "-") && strcmp(s, "+") && strcmp(s, "!") && strcmp(s, "~")) {
            free(s);
            s = hkc_loops_spell(LC(clang_getTokenSpelling)(tu, toks[nt - 1]));
        }
        snprintf(out, cap, "%s", s);
        free(s);
        break;
    }
    LC(clang_disposeTokens)(tu, toks, nt);
}


/* ---------------------------------------------------------- parsing */

/* The arguments of a parse: the language, hipkit's headers and the user's
 * -D/-U/-I (argv has room for nflags + 12 words); the count. */
static int parse_args(const char **argv, const char *include, const char *const *flags, int nflags)
{
    int a = 0;
    argv[a++] = "-x";
    argv[a++] = "c++";
    argv[a++] = "-std=c++17";
    argv[a++] = "-isystem";
    argv[a++] = include;
    argv[a++] = "-w";
    for (int i = 0; i < nflags; i++) {
        const char *f = flags[i];
        if (strncmp(f, "-D", 2) && strncmp(f, "-U", 2) && strncmp(f, "-I", 2))
            continue;
        argv[a++] = f;
        if (!f[2] && i + 1 < nflags) /* -D NAME */
            argv[a++] = flags[++i];
    }
    return a;
}

int hkc_host_loops_build_pch(const char *include, const char *const *flags, int nflags,
                             const char *out)
{
    if (!hkc_loops_clang_ready())
        return -1;
    const char **argv = calloc((size_t)nflags + 12, sizeof *argv);
    CXIndex idx = argv ? LC(clang_createIndex)(0, 0) : NULL;
    if (!idx) {
        free(argv);
        return -1;
    }
    hkc_fault_reclaim(); /* clang_createIndex installed LLVM's crash handlers */
    int a = parse_args(argv, include, flags, nflags);
    argv[1] = "c++-header";
    /* the headers' text goes into the file: the folder include is a
     * temporary one, gone when a later process reads this */
    argv[a++] = "-Xclang";
    argv[a++] = "-fmodules-embed-all-files";
    char header[4300];
    snprintf(header, sizeof header, "%s/hip/hip_runtime.h", include);
    CXTranslationUnit tu = NULL;
    enum CXErrorCode e = LC(clang_parseTranslationUnit2)(
        idx, header, argv, a, NULL, 0, CXTranslationUnit_ForSerialization | CXTranslationUnit_Incomplete,
        &tu);
    int r = -1;
    if (e == CXError_Success && tu) {
        int bad = 0;
        for (unsigned i = 0; i < LC(clang_getNumDiagnostics)(tu); i++) {
            CXDiagnostic d = LC(clang_getDiagnostic)(tu, i);
            bad |= LC(clang_getDiagnosticSeverity)(d) >= CXDiagnostic_Error;
            LC(clang_disposeDiagnostic)(d);
        }
        if (!bad && LC(clang_saveTranslationUnit)(tu, out, LC(clang_defaultSaveOptions)(tu)) == 0)
            r = 0;
        LC(clang_disposeTranslationUnit)(tu);
    }
    LC(clang_disposeIndex)(idx);
    free(argv);
    return r;
}

static CXTranslationUnit parse_with(const hkc_host_loops_job *job, CXIndex idx, const char *pch,
                                    char *why, size_t cap)
{
    const char **argv = calloc((size_t)job->nflags + 12, sizeof *argv);
    if (!argv) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    int a = parse_args(argv, job->include, job->flags, job->nflags);
    if (pch) {
        argv[a++] = "-include-pch";
        argv[a++] = pch;
    }
    struct CXUnsavedFile file = {"hipkit-loops.cpp", job->tu,
                                 (unsigned long)(job->parse_len ? job->parse_len : job->tu_len)};
    CXTranslationUnit tu = NULL;
    enum CXErrorCode e = LC(clang_parseTranslationUnit2)(idx, "hipkit-loops.cpp", argv, a, &file, 1,
                                                         CXTranslationUnit_None, &tu);
    free(argv);
    if (e != CXError_Success || !tu) {
        snprintf(why, cap, "clang could not parse the module (error %d)", (int)e);
        return NULL;
    }
    for (unsigned i = 0; i < LC(clang_getNumDiagnostics)(tu); i++) {
        CXDiagnostic d = LC(clang_getDiagnostic)(tu, i);
        int bad = LC(clang_getDiagnosticSeverity)(d) >= CXDiagnostic_Error;
        if (bad) {
            char *s = hkc_loops_spell(LC(clang_getDiagnosticSpelling)(d));
            snprintf(why, cap, "clang does not accept the module: %s", s);
            free(s);
        }
        LC(clang_disposeDiagnostic)(d);
        if (bad) {
            LC(clang_disposeTranslationUnit)(tu);
            return NULL;
        }
    }
    return tu;
}

CXTranslationUnit hkc_loops_parse(const hkc_host_loops_job *job, CXIndex idx, char *why, size_t cap)
{
    /* the precompiled header saves most of the parse; a damaged or foreign
     * one is a failed parse, and the text header is parsed instead */
    CXTranslationUnit tu = job->pch ? parse_with(job, idx, job->pch, why, cap) : NULL;
    return tu ? tu : parse_with(job, idx, NULL, why, cap);
}

#endif
