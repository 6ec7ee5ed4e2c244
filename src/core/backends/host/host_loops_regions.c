/* Barrier regions as loops, the analysis. A kernel with barriers runs each
 * GPU thread as a fiber, which costs a start and a switch per thread and
 * barrier. When every barrier sits where all threads of the block reach it
 * together (the body's top level, or the top level of `for` loops whose
 * header is the same for every thread), the kernel can instead run each
 * stretch between two barriers as a loop over the block's threads, as pocl
 * does with its work-item loops: no fibers, and code the compiler can
 * optimise across threads.
 *
 * This is decided on clang's AST of the very translation unit the C++
 * compiler builds (libclang's C API, opened at run time), and the loop
 * version is written as C++ beside the kernel, from the source ranges of its
 * statements (host_loops_emit.c). What the analysis proves, or refuses:
 * - barriers (__syncthreads, __syncwarp) only as statements of the body or
 *   of a `for` whose init, condition and increment read no thread index and
 *   no memory, only parameters, constants, the block's coordinates and its
 *   own loop variables, which its body does not change; anything else with a
 *   barrier inside (if, while, switch, a nested block) keeps the fibers;
 * - no goto or label, no lambda, no warp operation or block reduction
 *   (__shfl*, __ballot, __syncthreads_count...), no call to a function of the
 *   user's that reaches a barrier; no break or continue leaving such a loop;
 * - a local that lives across a barrier is either recomputed in each region
 *   that reads it (its initialiser depends only on the thread index and
 *   uniform values, and it is never changed), hoisted before all regions
 *   (uniform and unchanged: shared memory references, block offsets), or
 *   kept per thread in an array (a plain-data scalar or array declared by
 *   itself); anything else keeps the fibers;
 * - a `return` marks the thread as returned: it skips every later region. */
#include "host_loops.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipkit/hipkit.h"
#include "pp_text.h"

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

/* ------------------------------------------------------------ the tree */

static char *spell(CXString s)
{
    const char *c = LC(clang_getCString)(s);
    char *r = strdup(c ? c : "");
    LC(clang_disposeString)(s);
    return r;
}

static int name_is(CXCursor c, const char *want)
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
    n->child = n->next = n->var = n->region = -1;
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

unsigned hkc_loops_line_at(const lkernel *k, unsigned off)
{
    CXSourceLocation l = LC(clang_getLocationForOffset)(k->unit, k->file, off);
    CXString fn;
    unsigned line = 0;
    LC(clang_getPresumedLocation)(l, &fn, &line, NULL);
    LC(clang_disposeString)(fn);
    return line;
}

static void refuse(lkernel *k, int node, const char *fmt, const char *what)
{
    if (k->why[0])
        return;
    int len = snprintf(k->why, sizeof k->why, fmt, what);
    if (node >= 0 && len > 0 && (size_t)len < sizeof k->why)
        snprintf(k->why + len, sizeof k->why - (size_t)len, " (line %u)", hkc_loops_line_at(k, k->n[node].beg));
}

static int nth_child(const lkernel *k, int node, int i)
{
    int c = k->n[node].child;
    while (c >= 0 && i--)
        c = k->n[c].next;
    return c;
}

static int nchildren(const lkernel *k, int node)
{
    int n = 0;
    for (int c = k->n[node].child; c >= 0; c = k->n[c].next)
        n++;
    return n;
}

/* Skips the wrappers the AST puts around an expression statement. */
static int unwrap(const lkernel *k, int node)
{
    while (node >= 0 && (k->n[node].kind == CXCursor_UnexposedExpr || k->n[node].kind == CXCursor_ParenExpr) &&
           nchildren(k, node) == 1)
        node = k->n[node].child;
    return node;
}

/* --------------------------------------------------------- operators */

/* The spelling of the operator of a unary or binary operator node: for a
 * binary one the first token after its left operand, for a unary one its
 * first token, or its last when that is ++ or -- (postfix). */
static void op_of(const lkernel *k, int node, char *out, size_t cap)
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
        char *s = spell(LC(clang_getTokenSpelling)(tu, toks[i]));
        if (!binary && i == 0 && strcmp(s, "++") && strcmp(s, "--") && strcmp(s, "*") &&
            strcmp(s, "&") && strcmp(s, "-") && strcmp(s, "+") && strcmp(s, "!") && strcmp(s, "~")) {
            free(s);
            s = spell(LC(clang_getTokenSpelling)(tu, toks[nt - 1]));
        }
        snprintf(out, cap, "%s", s);
        free(s);
        break;
    }
    LC(clang_disposeTokens)(tu, toks, nt);
}

/* ----------------------------------------------------- calls and names */

static int is_barrier_name(const char *s) { return !strcmp(s, "__syncthreads") || !strcmp(s, "__syncwarp"); }

static int is_warp_name(const char *s)
{
    static const char *const exact[] = {"__syncthreads_count", "__syncthreads_and", "__syncthreads_or",
                                        "__ballot", "__ballot_sync", "__any", "__any_sync", "__all",
                                        "__all_sync", "__activemask"};
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
        if (!strcmp(s, exact[i]))
            return 1;
    return !strncmp(s, "__shfl", 6) || !strncmp(s, "__reduce_", 9);
}

/* Whether the function c (a user's, not hipkit's) reaches a barrier or a
 * warp operation through its body or the user functions it calls. */
typedef struct reach {
    int depth, found;
} reach;

static enum CXChildVisitResult reach_visit(CXCursor c, CXCursor parent, CXClientData data);

static int fn_syncs(CXCursor fn, int depth)
{
    CXCursor def = LC(clang_getCursorDefinition)(fn);
    if (LC(clang_Cursor_isNull)(def))
        return 0;
    if (depth > 8)
        return 1; /* deep or recursive: not proven */
    reach r = {depth, 0};
    LC(clang_visitChildren)(def, reach_visit, &r);
    return r.found;
}

static enum CXChildVisitResult reach_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    reach *r = data;
    if (LC(clang_getCursorKind)(c) == CXCursor_CallExpr) {
        char *s = spell(LC(clang_getCursorSpelling)(c));
        int hit = is_barrier_name(s) || is_warp_name(s);
        free(s);
        CXCursor ref = LC(clang_getCursorReferenced)(c);
        if (hit || (!LC(clang_Cursor_isNull)(ref) &&
                    !LC(clang_Location_isInSystemHeader)(LC(clang_getCursorLocation)(ref)) &&
                    fn_syncs(ref, r->depth + 1))) {
            r->found = 1;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

/* The callee's name of a CallExpr node (its spelling), in buf. */
static const char *callee(const lkernel *k, int node, char *buf, size_t cap)
{
    char *s = spell(LC(clang_getCursorSpelling)(k->n[node].c));
    snprintf(buf, cap, "%s", s);
    free(s);
    return buf;
}

static int is_barrier_stmt(const lkernel *k, int node)
{
    node = unwrap(k, node);
    char buf[64];
    return node >= 0 && k->n[node].kind == CXCursor_CallExpr &&
           is_barrier_name(callee(k, node, buf, sizeof buf));
}

/* The last node of node's subtree (nodes are in preorder). */
static int subtree_end(const lkernel *k, int node)
{
    int last = node;
    for (int c = k->n[node].child; c >= 0; c = k->n[c].next)
        last = subtree_end(k, c);
    return last;
}

static int contains_barrier(const lkernel *k, int node)
{
    char buf[64];
    for (int i = node, e = subtree_end(k, node); i <= e; i++)
        if (k->n[i].kind == CXCursor_CallExpr && is_barrier_name(callee(k, i, buf, sizeof buf)))
            return 1;
    return 0;
}


/* ---------------------------------------------------------- variables */

static int add_var(lkernel *k, int node, int param)
{
    if (k->nv == k->vcap) {
        int ncap = k->vcap ? 2 * k->vcap : 32;
        lvar *nv = realloc(k->v, (size_t)ncap * sizeof *nv);
        if (!nv) {
            k->oom = 1;
            return -1;
        }
        k->v = nv;
        k->vcap = ncap;
    }
    lvar *v = &k->v[k->nv];
    memset(v, 0, sizeof *v);
    v->node = node;
    v->stmt = v->list = v->region = v->init = v->slot = -1;
    v->kind = V_LOCAL;
    v->param = param;
    k->n[node].var = k->nv;
    return k->nv++;
}

static int type_kind(const lkernel *k, int node)
{
    return LC(clang_getCursorType)(k->n[node].c).kind;
}

static int is_static(const lkernel *k, int node)
{
    return LC(clang_Cursor_getStorageClass)(k->n[node].c) == CX_SC_Static ||
           LC(clang_getCursorTLSKind)(k->n[node].c) != CXTLS_None;
}

/* Finds a variable's initialiser: the text after its name (and array
 * bounds) says `=` (init is then its last expression child), `;` or `,`
 * (none), or anything else (constructor arguments, a braced list). */
static void find_init(lkernel *k, lvar *v)
{
    CXSourceLocation l = LC(clang_getCursorLocation)(k->n[v->node].c);
    unsigned off;
    LC(clang_getExpansionLocation)(l, NULL, NULL, NULL, &off);
    char *name = spell(LC(clang_getCursorSpelling)(k->n[v->node].c));
    const char *p = k->tu + off + strlen(name);
    free(name);
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    while (*p == '[' || *p == ')') { /* array bounds, the `)` of T (&name)[N] */
        if (*p == ')') {
            p++;
            while (*p == ' ' || *p == '\t' || *p == '\n')
                p++;
            continue;
        }
        int depth = 0;
        for (; *p; p++)
            if (*p == '[')
                depth++;
            else if (*p == ']' && --depth == 0)
                break;
        if (*p)
            p++;
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
    }
    if (*p == ';' || *p == ',' || !*p)
        return;
    if (*p != '=' || p[1] == '=') {
        v->init_other = 1;
        return;
    }
    unsigned eq = (unsigned)(p - k->tu);
    for (int c = k->n[v->node].child; c >= 0; c = k->n[c].next)
        if (LC(clang_isExpression)(k->n[c].kind) && k->n[c].beg > eq)
            v->init = c;
    if (v->init < 0)
        v->init_other = 1;
}

static int ref_var(lkernel *k, int node)
{
    CXCursor ref = LC(clang_getCursorReferenced)(k->n[node].c);
    if (LC(clang_Cursor_isNull)(ref))
        return -1;
    for (int i = 0; i < k->nv; i++)
        if (LC(clang_equalCursors)(k->n[k->v[i].node].c, ref))
            return i;
    return -1;
}

/* Where a variable is changed: assigned, incremented, its address taken,
 * bound to a reference or passed to a call (by reference, as far as can be
 * seen), or an element of it when it is an array. A reference itself is
 * never rebound. */
static int modifies(lkernel *k, int u)
{
    const lvar *v = &k->v[k->n[u].var];
    int array = type_kind(k, v->node) == CXType_ConstantArray;
    int p = k->n[u].parent;
    for (;;) {
        if (p < 0)
            return 0;
        enum CXCursorKind pk = k->n[p].kind;
        if (pk == CXCursor_ParenExpr || (pk == CXCursor_MemberRefExpr && k->n[p].child == u) ||
            (array && pk == CXCursor_ArraySubscriptExpr && k->n[p].child == u)) {
            u = p;
            p = k->n[p].parent;
            continue;
        }
        break;
    }
    enum CXCursorKind pk = k->n[p].kind;
    char op[8];
    switch (pk) {
    case CXCursor_UnexposedExpr: case CXCursor_ConditionalOperator: case CXCursor_InitListExpr:
    case CXCursor_ReturnStmt: case CXCursor_IfStmt: case CXCursor_WhileStmt: case CXCursor_ForStmt:
    case CXCursor_DoStmt: case CXCursor_SwitchStmt: case CXCursor_CaseStmt: case CXCursor_CompoundStmt:
        return 0;
    case CXCursor_ArraySubscriptExpr:
        return 0; /* an index, or a pointer's value */
    case CXCursor_CStyleCastExpr: case CXCursor_CXXStaticCastExpr: case CXCursor_CXXFunctionalCastExpr:
        return type_kind(k, p) == CXType_LValueReference || type_kind(k, p) == CXType_RValueReference;
    case CXCursor_BinaryOperator:
        op_of(k, p, op, sizeof op);
        return k->n[p].child == u && !strcmp(op, "=");
    case CXCursor_CompoundAssignOperator:
        return k->n[p].child == u;
    case CXCursor_UnaryOperator:
        op_of(k, p, op, sizeof op);
        return !strcmp(op, "++") || !strcmp(op, "--") || !strcmp(op, "&");
    case CXCursor_VarDecl:
        return type_kind(k, p) == CXType_LValueReference || type_kind(k, p) == CXType_RValueReference;
    default:
        return 1;
    }
}

static void find_modifications(lkernel *k)
{
    for (int i = 0; i < k->nn; i++) {
        if (k->n[i].kind != CXCursor_DeclRefExpr)
            continue;
        int var = ref_var(k, i);
        k->n[i].var = var;
        if (var < 0)
            continue;
        lvar *v = &k->v[var];
        int ref = type_kind(k, v->node) == CXType_LValueReference ||
                  type_kind(k, v->node) == CXType_RValueReference;
        if (!ref && modifies(k, i)) {
            if (v->nmod < 8)
                v->mod_beg[v->nmod] = k->n[i].beg;
            v->nmod++;
        }
    }
}

/* --------------------------------------------------------- uniformity */

enum { U_TID = 1, U_LVALUE = 2, U_INC = 4 };

static int uniform(lkernel *k, int node, int flags);

static int uniform_children(lkernel *k, int node, int flags)
{
    for (int c = k->n[node].child; c >= 0; c = k->n[c].next)
        if (!uniform(k, c, flags))
            return 0;
    return 1;
}

static int loop_var_operand(lkernel *k, int node)
{
    node = unwrap(k, node);
    return node >= 0 && k->n[node].kind == CXCursor_DeclRefExpr && k->n[node].var >= 0 &&
           k->v[k->n[node].var].kind == V_LOOP;
}

static int uniform_ref(lkernel *k, int node, int flags)
{
    int var = k->n[node].var;
    if (var >= 0) {
        const lvar *v = &k->v[var];
        return v->kind == V_HOIST || v->kind == V_LOOP || (v->param && !v->nmod) ||
               ((flags & U_TID) && v->remat_ok);
    }
    CXCursor ref = LC(clang_getCursorReferenced)(k->n[node].c);
    enum CXCursorKind rk = LC(clang_getCursorKind)(ref);
    if (rk == CXCursor_EnumConstantDecl || rk == CXCursor_FunctionDecl)
        return 1;
    if (rk == CXCursor_VarDecl) { /* a constant of the module */
        enum CXCursorKind pk = LC(clang_getCursorKind)(LC(clang_getCursorSemanticParent)(ref));
        return pk != CXCursor_FunctionDecl && LC(clang_isConstQualifiedType)(LC(clang_getCursorType)(ref));
    }
    return 0;
}

/* threadIdx, blockIdx, blockDim, gridDim are members of hipkit's per-thread
 * state __hk_tls (hipkit_host_device.h): all but __tid are the block's. */
static int uniform_member(lkernel *k, int node, int flags)
{
    char *f = spell(LC(clang_getCursorSpelling)(k->n[node].c));
    int base = unwrap(k, k->n[node].child);
    int tls = base >= 0 && k->n[base].kind == CXCursor_DeclRefExpr && name_is(k->n[base].c, "__hk_tls");
    int r;
    if (tls)
        r = strcmp(f, "__tid") ? !strcmp(f, "__bid") || !strcmp(f, "__bdim") || !strcmp(f, "__gdim")
                               : (flags & U_TID) != 0;
    else if (base >= 0 && type_kind(k, base) == CXType_Pointer)
        r = 0; /* a read of memory */
    else
        r = uniform_children(k, node, flags & U_TID);
    free(f);
    return r;
}

static int uniform_call(lkernel *k, int node, int flags)
{
    static const char *const pure[] = {"min", "max", "umin", "umax", "hk_host_static_shared",
                                       "hk_host_dynamic_shared"};
    static const char *const tid[] = {"__hk_linear_tid", "__lane_id"};
    char name[64];
    callee(k, node, name, sizeof name);
    for (size_t i = 0; i < sizeof tid / sizeof *tid; i++)
        if (!strcmp(name, tid[i]))
            return (flags & U_TID) && uniform_children(k, node, flags & U_TID);
    for (size_t i = 0; i < sizeof pure / sizeof *pure; i++)
        if (!strcmp(name, pure[i]))
            return uniform_children(k, node, flags & U_TID);
    return 0;
}

/* Whether the expression at node has the same value in every thread of the
 * block and reads no memory (or, with U_TID, depends only on the thread
 * index besides). U_LVALUE: a reference is bound to it (*p then reads
 * nothing); U_INC: a loop increment, which may change loop variables. */
static int uniform(lkernel *k, int node, int flags)
{
    char op[8];
    int keep = flags & U_TID;
    switch (k->n[node].kind) {
    case CXCursor_IntegerLiteral: case CXCursor_FloatingLiteral: case CXCursor_CharacterLiteral:
    case CXCursor_StringLiteral: case CXCursor_CXXBoolLiteralExpr: case CXCursor_CXXNullPtrLiteralExpr:
    case CXCursor_TypeRef: case CXCursor_TemplateRef: case CXCursor_NamespaceRef: case CXCursor_UnaryExpr:
        return 1;
    case CXCursor_DeclRefExpr:
        return uniform_ref(k, node, flags);
    case CXCursor_MemberRefExpr:
        return uniform_member(k, node, flags);
    case CXCursor_CallExpr:
        return uniform_call(k, node, flags);
    case CXCursor_UnaryOperator:
        op_of(k, node, op, sizeof op);
        if (!strcmp(op, "++") || !strcmp(op, "--"))
            return (flags & U_INC) && loop_var_operand(k, k->n[node].child);
        if (!strcmp(op, "*"))
            return (flags & U_LVALUE) && uniform_children(k, node, keep);
        return uniform_children(k, node, keep);
    case CXCursor_BinaryOperator:
        op_of(k, node, op, sizeof op);
        if (!strcmp(op, "="))
            return (flags & U_INC) && loop_var_operand(k, k->n[node].child) &&
                   uniform(k, nth_child(k, node, 1), keep);
        if (!strcmp(op, ","))
            return uniform_children(k, node, flags);
        return uniform_children(k, node, keep);
    case CXCursor_CompoundAssignOperator:
        return (flags & U_INC) && loop_var_operand(k, k->n[node].child) &&
               uniform(k, nth_child(k, node, 1), keep);
    case CXCursor_ParenExpr: case CXCursor_UnexposedExpr: case CXCursor_CStyleCastExpr:
    case CXCursor_CXXStaticCastExpr: case CXCursor_CXXFunctionalCastExpr: case CXCursor_CXXConstCastExpr:
    case CXCursor_CXXReinterpretCastExpr:
        return uniform_children(k, node, flags);
    case CXCursor_ConditionalOperator: case CXCursor_InitListExpr:
        return uniform_children(k, node, keep);
    default:
        return 0;
    }
}

/* ------------------------------------------------------ statement lists */

static int grow_list(lkernel *k, int parent)
{
    if (k->nl == k->lcap) {
        int ncap = k->lcap ? 2 * k->lcap : 8;
        llist *nl = realloc(k->l, (size_t)ncap * sizeof *nl);
        if (!nl) {
            k->oom = 1;
            return -1;
        }
        k->l = nl;
        k->lcap = ncap;
    }
    k->l[k->nl] = (llist){.parent = parent};
    return k->nl++;
}

static void add_item(lkernel *k, int list, litem it)
{
    llist *l = &k->l[list];
    if (l->nitems == l->cap) {
        int ncap = l->cap ? 2 * l->cap : 8;
        litem *ni = realloc(l->items, (size_t)ncap * sizeof *ni);
        if (!ni) {
            k->oom = 1;
            return;
        }
        l->items = ni;
        l->cap = ncap;
    }
    l->items[l->nitems++] = it;
}

static int open_region(lkernel *k, int list, unsigned beg)
{
    if (k->nr == k->rcap) {
        int ncap = k->rcap ? 2 * k->rcap : 16;
        lregion *nr = realloc(k->r, (size_t)ncap * sizeof *nr);
        if (!nr) {
            k->oom = 1;
            return -1;
        }
        k->r = nr;
        k->rcap = ncap;
    }
    k->r[k->nr] = (lregion){list, beg, beg};
    add_item(k, list, (litem){.region = k->nr, .loop = -1, .body = -1});
    return k->nr++;
}

static const char *construct(enum CXCursorKind kind)
{
    switch (kind) {
    case CXCursor_IfStmt: return "an if";
    case CXCursor_WhileStmt: return "a while loop";
    case CXCursor_DoStmt: return "a do loop";
    case CXCursor_SwitchStmt: return "a switch";
    case CXCursor_CompoundStmt: return "a nested block";
    case CXCursor_ForStmt: return "a for loop";
    case CXCursor_CXXForRangeStmt: return "a range for loop";
    default: return "an expression";
    }
}

/* A declaration at the kernel body's level whose variables are the same in
 * every thread and never change is run once, before every region. */
static int hoistable(lkernel *k, int stmt)
{
    int any = 0;
    for (int c = k->n[stmt].child; c >= 0; c = k->n[c].next) {
        if (k->n[c].kind != CXCursor_VarDecl)
            return 0;
        lvar *v = &k->v[k->n[c].var];
        any = 1;
        if (is_static(k, c))
            continue;
        int ref = type_kind(k, c) == CXType_LValueReference;
        if (v->init < 0 || v->nmod || !uniform(k, v->init, ref ? U_LVALUE : 0))
            return 0;
    }
    return any;
}

static void analyze_list(lkernel *k, int list, int first, unsigned end);

/* A for loop with a barrier in its body: its header must be the block's. */
static void analyze_for(lkernel *k, int list, int f)
{
    int nc = nchildren(k, f), body = nth_child(k, f, nc - 1);
    unsigned semi[2] = {0, 0};
    int ns = 0, depth = 0;
    for (unsigned p = k->n[f].beg; p < k->n[body].beg && ns < 2; p++) {
        char ch = k->tu[p];
        depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
        if (ch == ';' && depth == 1)
            semi[ns++] = p;
    }
    if (ns < 2 || k->n[f].macro) {
        refuse(k, f, "a barrier inside %s written by a macro", "a for loop");
        return;
    }
    int cond = -1, inc = -1;
    for (int i = 0; i < nc - 1; i++) {
        int c = nth_child(k, f, i);
        if (k->n[c].beg < semi[0]) {
            if (k->n[c].kind != CXCursor_DeclStmt) {
                refuse(k, c, "a for loop with a barrier whose init %s", "is no declaration");
                return;
            }
            for (int d = k->n[c].child; d >= 0; d = k->n[d].next) {
                lvar *v = k->n[d].var >= 0 ? &k->v[k->n[d].var] : NULL;
                if (!v || v->init < 0 || !uniform(k, v->init, 0)) {
                    refuse(k, d, "a for loop with a barrier whose init %s", "may differ between threads");
                    return;
                }
                v->kind = V_LOOP;
            }
        } else if (k->n[c].beg < semi[1]) {
            cond = c;
        } else {
            inc = c;
        }
    }
    if (cond < 0 || !uniform(k, cond, 0) || (inc >= 0 && !uniform(k, inc, U_INC))) {
        refuse(k, f, "a for loop with a barrier whose %s may differ between threads (or read memory)",
               cond < 0 ? "missing condition" : "condition or increment");
        return;
    }
    for (int i = 0; i < k->nv; i++) /* its loop variables change in the increment only */
        if (k->v[i].kind == V_LOOP && k->n[k->v[i].node].beg > k->n[f].beg &&
            k->n[k->v[i].node].beg < semi[0])
            for (unsigned m = 0; m < k->v[i].nmod && m < 8; m++)
                if (k->v[i].mod_beg[m] < semi[1] || k->v[i].mod_beg[m] >= k->n[body].beg || k->v[i].nmod > 8) {
                    refuse(k, f, "a for loop with a barrier whose variable %s", "changes in its body");
                    return;
                }
    int inner = grow_list(k, list);
    if (inner < 0)
        return;
    add_item(k, list, (litem){.region = -1, .loop = f, .body = inner});
    if (k->n[body].kind == CXCursor_CompoundStmt) {
        if (k->n[body].macro) {
            refuse(k, body, "a loop body from %s", "a macro");
            return;
        }
        analyze_list(k, inner, k->n[body].child, k->n[body].end - 1);
    } else {
        k->n[body].next = -1; /* it is the last child anyway */
        analyze_list(k, inner, body, k->n[body].end);
    }
}

/* Splits the statements first, first->next, ... of a list (ending at
 * offset end) at its barriers and loops with barriers. */
static void analyze_list(lkernel *k, int list, int first, unsigned end)
{
    int cur = -1;
    for (int s = first; s >= 0 && !k->why[0] && !k->oom; s = k->n[s].next) {
        int barrier = is_barrier_stmt(k, s);
        if (barrier || contains_barrier(k, s)) {
            if (cur >= 0)
                k->r[cur].end = k->n[s].beg;
            cur = -1;
            if (barrier)
                continue;
            if (k->n[s].kind != CXCursor_ForStmt) {
                refuse(k, s, "a barrier inside %s", construct(k->n[s].kind));
                return;
            }
            analyze_for(k, list, s);
            continue;
        }
        if (cur < 0 && (cur = open_region(k, list, k->n[s].beg)) < 0)
            return;
        if (k->n[s].kind != CXCursor_DeclStmt)
            continue;
        int hoist = list == 0 && hoistable(k, s);
        for (int d = k->n[s].child; d >= 0; d = k->n[d].next)
            if (k->n[d].kind == CXCursor_VarDecl && k->n[d].var >= 0) {
                lvar *v = &k->v[k->n[d].var];
                v->stmt = s;
                v->list = list;
                v->region = cur;
                v->kind = hoist ? V_HOIST : V_LOCAL;
            }
    }
    if (cur >= 0)
        k->r[cur].end = end;
}

/* ------------------------------------------------- the whole kernel */

static void refuse_constructs(lkernel *k)
{
    char name[128];
    for (int i = k->body; i < k->nn && !k->why[0]; i++) {
        switch (k->n[i].kind) {
        case CXCursor_GotoStmt: case CXCursor_IndirectGotoStmt: case CXCursor_LabelStmt:
            refuse(k, i, "%s in the kernel", "a goto or label");
            break;
        case CXCursor_LambdaExpr:
            refuse(k, i, "%s in the kernel", "a lambda");
            break;
        case CXCursor_CallExpr: {
            callee(k, i, name, sizeof name);
            if (is_warp_name(name)) {
                refuse(k, i, "a warp operation or block reduction (%s)", name);
                break;
            }
            CXCursor ref = LC(clang_getCursorReferenced)(k->n[i].c);
            if (!LC(clang_Cursor_isNull)(ref) &&
                !LC(clang_Location_isInSystemHeader)(LC(clang_getCursorLocation)(ref)) &&
                fn_syncs(ref, 0))
                refuse(k, i, "a call to %s, which reaches a barrier or warp operation", name);
            break;
        }
        case CXCursor_BreakStmt: case CXCursor_ContinueStmt: {
            int p = k->n[i].parent;
            while (p >= 0 && k->n[p].kind != CXCursor_ForStmt && k->n[p].kind != CXCursor_WhileStmt &&
                   k->n[p].kind != CXCursor_DoStmt && k->n[p].kind != CXCursor_CXXForRangeStmt &&
                   !(k->n[p].kind == CXCursor_SwitchStmt && k->n[i].kind == CXCursor_BreakStmt))
                p = k->n[p].parent;
            if (p >= 0 && k->n[p].kind == CXCursor_ForStmt && contains_barrier(k, p))
                refuse(k, i, "%s in a loop with a barrier", "a break or continue");
            break;
        }
        case CXCursor_ReturnStmt:
            if (k->n[i].macro)
                refuse(k, i, "a return written by %s", "a macro");
            k->has_return = 1;
            break;
        default:
            break;
        }
    }
}

/* The region each node lies in (regions are disjoint stretches of text). */
static void place_nodes(lkernel *k)
{
    for (int i = k->body; i < k->nn; i++)
        for (int r = 0; r < k->nr; r++)
            if (k->n[i].beg >= k->r[r].beg && k->n[i].beg < k->r[r].end) {
                k->n[i].region = r;
                break;
            }
}

/* Locals that live across a barrier: recomputed, or kept per thread. */
static void classify_locals(lkernel *k)
{
    for (int i = 0; i < k->nv; i++) { /* declaration order */
        lvar *v = &k->v[i];
        if (v->kind == V_LOCAL && v->list >= 0 && v->init >= 0 && !v->nmod &&
            type_kind(k, v->node) != CXType_ConstantArray && type_kind(k, v->node) != CXType_LValueReference)
            v->remat_ok = uniform(k, v->init, U_TID);
        /* a declaration is recomputed whole: `int tx = ..., ty = ...;` */
        if (v->stmt >= 0 && !v->remat_ok)
            for (int j = 0; j < i; j++)
                if (k->v[j].stmt == v->stmt)
                    k->v[j].remat_ok = 0;
        if (v->remat_ok)
            for (int j = 0; j < i; j++)
                if (k->v[j].stmt == v->stmt && !k->v[j].remat_ok)
                    v->remat_ok = 0;
    }
    for (int i = k->body; i < k->nn && !k->why[0]; i++) {
        int var = k->n[i].var;
        if (k->n[i].kind != CXCursor_DeclRefExpr || var < 0)
            continue;
        lvar *v = &k->v[var];
        if (v->list < 0 || v->kind != V_LOCAL || k->n[i].region == v->region)
            continue;
        char *name = spell(LC(clang_getCursorSpelling)(k->n[v->node].c));
        if (v->remat_ok) {
            v->kind = V_REMAT;
        } else {
            CXType t = LC(clang_getCanonicalType)(LC(clang_getCursorType)(k->n[v->node].c));
            char *ts = spell(LC(clang_getTypeSpelling)(t));
            int array = t.kind == CXType_ConstantArray;
            if (nchildren(k, v->stmt) != 1 || k->n[v->stmt].macro || v->init_other ||
                (array && v->init >= 0) || (v->init >= 0 && k->n[v->init].macro) ||
                t.kind == CXType_LValueReference || t.kind == CXType_RValueReference ||
                !LC(clang_isPODType)(t) || strchr(ts, '(') || strlen(ts) >= sizeof v->type)
                refuse(k, v->node, "%s lives across a barrier and cannot be kept per thread", name);
            else {
                snprintf(v->type, sizeof v->type, "%s", ts);
                v->kind = V_STORE;
                v->slot = k->nslots++;
            }
            free(ts);
        }
        free(name);
    }
    for (int i = k->body; i < k->nn && !k->why[0]; i++)
        if (k->n[i].kind == CXCursor_DeclRefExpr && k->n[i].var >= 0 &&
            k->v[k->n[i].var].kind == V_STORE && k->n[i].macro)
            refuse(k, i, "a variable that lives across a barrier used inside %s", "a macro");
}

static void analyze(lkernel *k)
{
    for (int i = 0; i < k->nn; i++)
        if (k->n[i].kind == CXCursor_ParmDecl || k->n[i].kind == CXCursor_VarDecl)
            add_var(k, i, k->n[i].kind == CXCursor_ParmDecl);
    for (int i = 0; i < k->nv; i++)
        if (!k->v[i].param)
            find_init(k, &k->v[i]);
    find_modifications(k);
    if (k->n[k->body].macro) {
        refuse(k, k->body, "the kernel's body comes from %s", "a macro");
        return;
    }
    refuse_constructs(k);
    if (k->why[0] || k->oom || grow_list(k, -1) != 0)
        return;
    analyze_list(k, 0, k->n[k->body].child, k->n[k->body].end - 1);
    if (k->why[0] || k->oom)
        return;
    place_nodes(k);
    classify_locals(k);
}

static void kernel_free(lkernel *k)
{
    for (int i = 0; i < k->nl; i++)
        free(k->l[i].items);
    free(k->l);
    free(k->n);
    free(k->v);
    free(k->r);
}

/* -------------------------------------------------------------- parse */

typedef struct found {
    const hkc_host_loops_job *job;
    CXCursor *fns; /* per kernel: its definition, or a null cursor */
} found;

static enum CXChildVisitResult top_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    found *f = data;
    if (LC(clang_getCursorKind)(c) == CXCursor_LinkageSpec ||
        LC(clang_getCursorKind)(c) == CXCursor_UnexposedDecl) /* extern "C" */
        return CXChildVisit_Recurse;
    if (LC(clang_getCursorKind)(c) != CXCursor_FunctionDecl || !LC(clang_isCursorDefinition)(c) ||
        !LC(clang_Location_isFromMainFile)(LC(clang_getCursorLocation)(c)))
        return CXChildVisit_Continue;
    for (int i = 0; i < f->job->nkernels; i++)
        if (f->job->kernels[i].uses_sync && name_is(c, f->job->kernels[i].name))
            f->fns[i] = c;
    return CXChildVisit_Continue;
}

static CXTranslationUnit parse(const hkc_host_loops_job *job, CXIndex idx, char *why, size_t cap)
{
    const char **argv = calloc((size_t)job->nflags + 8, sizeof *argv);
    if (!argv) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    int a = 0;
    argv[a++] = "-x";
    argv[a++] = "c++";
    argv[a++] = "-std=c++17";
    argv[a++] = "-isystem";
    argv[a++] = job->include;
    argv[a++] = "-w";
    for (int i = 0; i < job->nflags; i++) {
        const char *f = job->flags[i];
        if (strncmp(f, "-D", 2) && strncmp(f, "-U", 2) && strncmp(f, "-I", 2))
            continue;
        argv[a++] = f;
        if (!f[2] && i + 1 < job->nflags) /* -D NAME */
            argv[a++] = job->flags[++i];
    }
    struct CXUnsavedFile file = {"hipkit-loops.cpp", job->tu, (unsigned long)job->tu_len};
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
            char *s = spell(LC(clang_getDiagnosticSpelling)(d));
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

/* Analyses kernel fn; on success appends its loop version to *ins (the
 * text to insert after the kernel's body) and returns 1, else writes why. */
static int split_kernel(const hkc_host_loops_job *job, CXCursor fn, const char *name, hkc_strbuf *ins,
                        unsigned *at, char *why, size_t cap)
{
    lkernel k;
    memset(&k, 0, sizeof k);
    k.tu = job->tu;
    k.unit = LC(clang_Cursor_getTranslationUnit)(fn);
    k.file = LC(clang_getFile)(k.unit, "hipkit-loops.cpp");
    k.fn = add_node(&k, fn, -1);
    if (k.fn >= 0) {
        collect st = {&k, k.fn, -1};
        LC(clang_visitChildren)(fn, visit, &st);
    }
    k.body = -1;
    for (int c = k.fn >= 0 ? k.n[k.fn].child : -1; c >= 0; c = k.n[c].next)
        if (k.n[c].kind == CXCursor_CompoundStmt)
            k.body = c;
    CXSourceLocation nl = LC(clang_getCursorLocation)(fn);
    unsigned eoff, soff;
    CXFile ef, sf;
    LC(clang_getExpansionLocation)(nl, &ef, NULL, NULL, &eoff);
    LC(clang_getSpellingLocation)(nl, &sf, NULL, NULL, &soff);
    if (k.oom)
        snprintf(k.why, sizeof k.why, "out of memory");
    else if (ef != sf || eoff != soff || ef != k.file)
        snprintf(k.why, sizeof k.why, "a kernel whose name comes from a macro");
    else if (k.body < 0)
        snprintf(k.why, sizeof k.why, "no body found");
    else
        analyze(&k);
    int ok = !k.why[0] && !k.oom;
    if (ok) {
        hkc_loops_emit(&k, name, job->name, ins);
        *at = k.n[k.body].end;
    } else {
        snprintf(why, cap, "%s", k.oom ? "out of memory" : k.why);
    }
    kernel_free(&k);
    return ok;
}

static void put_escaped(hkc_strbuf *out, const char *s)
{
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            hkc_strbuf_printf(out, "\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            hkc_strbuf_append(out, s, 1);
}

typedef struct insertion {
    unsigned at;
    hkc_strbuf text;
} insertion;

static int cmp_ins(const void *a, const void *b)
{
    unsigned x = ((const insertion *)a)->at, y = ((const insertion *)b)->at;
    return x < y ? -1 : x > y;
}

int hkc_host_loops_apply(const hkc_host_loops_job *job, hkc_strbuf *out)
{
    int n = job->nkernels, need = 0;
    for (int i = 0; i < n; i++)
        need |= job->kernels[i].uses_sync;
    char (*why)[256] = calloc((size_t)(n ? n : 1), sizeof *why);
    insertion *ins = calloc((size_t)(n ? n : 1), sizeof *ins);
    CXCursor *fns = calloc((size_t)(n ? n : 1), sizeof *fns);
    int *loops = calloc((size_t)(n ? n : 1), sizeof *loops);
    if (!why || !ins || !fns || !loops) {
        free(why), free(ins), free(fns), free(loops);
        return HK_ENOMEM;
    }
    int nins = 0;
    char global[256] = "";
    CXIndex idx = NULL;
    CXTranslationUnit tu = NULL;
    if (need && job->off)
        snprintf(global, sizeof global, "loop mode is off (HIPKIT_HOST_MODE=loops turns it on)");
    else if (need && !(pthread_once(&lc_once, lc_load), lc_ok))
        snprintf(global, sizeof global, "%s", lc_status);
    else if (need && !(idx = LC(clang_createIndex)(0, 0)))
        snprintf(global, sizeof global, "libclang cannot create an index");
    else if (need)
        tu = parse(job, idx, global, sizeof global);
    if (tu) {
        for (int i = 0; i < n; i++)
            fns[i] = LC(clang_getNullCursor)();
        found f = {job, fns};
        LC(clang_visitChildren)(LC(clang_getTranslationUnitCursor)(tu), top_visit, &f);
        for (int i = 0; i < n; i++) {
            if (!job->kernels[i].uses_sync)
                continue;
            if (LC(clang_Cursor_isNull)(fns[i]) || !hkc_is_identifier(job->kernels[i].name)) {
                snprintf(why[i], sizeof why[i], "a template, namespaced or macro-made kernel");
                continue;
            }
            hkc_strbuf_init(&ins[nins].text);
            loops[i] = split_kernel(job, fns[i], job->kernels[i].name, &ins[nins].text, &ins[nins].at,
                                    why[i], sizeof why[i]);
            if (loops[i])
                nins++;
            else
                hkc_strbuf_free(&ins[nins].text);
        }
        LC(clang_disposeTranslationUnit)(tu);
    }
    if (idx)
        LC(clang_disposeIndex)(idx);
    qsort(ins, (size_t)nins, sizeof *ins, cmp_ins);
    size_t copied = 0;
    for (int i = 0; i < nins; i++) {
        hkc_strbuf_append(out, job->tu + copied, ins[i].at - copied);
        hkc_strbuf_append(out, ins[i].text.data, ins[i].text.len);
        copied = ins[i].at;
        hkc_strbuf_free(&ins[i].text);
    }
    hkc_strbuf_append(out, job->tu + copied, job->tu_len - copied);
    hkc_strbuf_puts(out, "\n");
    for (int i = 0; i < n; i++)
        if (loops[i])
            hkc_strbuf_printf(out, "HK_HOST_LOOPS(%s)\n", job->kernels[i].name);
    hkc_strbuf_puts(out, "HK_HOST_MODES_BEGIN\n");
    for (int i = 0; i < n; i++) {
        if (loops[i]) {
            hkc_strbuf_printf(out, "HK_HOST_MODE_LOOPS(%s)\n", job->kernels[i].name);
            continue;
        }
        hkc_strbuf_puts(out, "HK_HOST_MODE_FIBERS(\"");
        put_escaped(out, !job->kernels[i].uses_sync ? "" : global[0] ? global : why[i]);
        hkc_strbuf_puts(out, "\")\n");
    }
    hkc_strbuf_puts(out, "HK_HOST_MODES_END\n");
    free(why), free(ins), free(fns), free(loops);
    return out->oom ? HK_ENOMEM : 0;
}

#else /* no clang-c/Index.h when hipkit was built */

const char *hkc_host_loops_status(void)
{
    return "hipkit was built without libclang's header (clang-c/Index.h, Debian libclang-15-dev)";
}

int hkc_host_loops_apply(const hkc_host_loops_job *job, hkc_strbuf *out)
{
    hkc_strbuf_append(out, job->tu, job->tu_len);
    hkc_strbuf_puts(out, "\nHK_HOST_MODES_BEGIN\n");
    for (int i = 0; i < job->nkernels; i++)
        hkc_strbuf_printf(out, "HK_HOST_MODE_FIBERS(\"%s\")\n",
                          job->kernels[i].uses_sync ? hkc_host_loops_status() : "");
    hkc_strbuf_puts(out, "HK_HOST_MODES_END\n");
    return out->oom ? HK_ENOMEM : 0;
}
#endif
