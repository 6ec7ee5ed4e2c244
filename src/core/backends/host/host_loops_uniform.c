/* Barrier regions as loops, what is safe: the calls that reach a barrier
 * or a warp operation, the kernel's variables and where they change, and
 * whether an expression is the same in every thread of the block (a loop
 * header, a hoisted declaration) or depends only on the thread index (a
 * recomputed one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_loops.h"

#if HKC_HAVE_LIBCLANG
#include "host_loops_ast.h"

/* ----------------------------------------------------- calls and names */

static int is_barrier_name(const char *s) { return !strcmp(s, "__syncthreads") || !strcmp(s, "__syncwarp"); }

int hkc_loops_is_warp_name(const char *s)
{
    static const char *const exact[] = {"__syncthreads_count", "__syncthreads_and", "__syncthreads_or",
                                        "__ballot", "__ballot_sync", "__ballot64", "__any", "__any_sync", "__all",
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

int hkc_loops_fn_syncs(CXCursor fn, int depth)
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
        char *s = hkc_loops_spell(LC(clang_getCursorSpelling)(c));
        int hit = is_barrier_name(s) || hkc_loops_is_warp_name(s);
        free(s);
        CXCursor ref = LC(clang_getCursorReferenced)(c);
        if (hit || (!LC(clang_Cursor_isNull)(ref) &&
                    !LC(clang_Location_isInSystemHeader)(LC(clang_getCursorLocation)(ref)) &&
                    hkc_loops_fn_syncs(ref, r->depth + 1))) {
            r->found = 1;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

/* The callee's name of a CallExpr node (its spelling), in buf. */
const char *hkc_loops_callee(const lkernel *k, int node, char *buf, size_t cap)
{
    char *s = hkc_loops_spell(LC(clang_getCursorSpelling)(k->n[node].c));
    snprintf(buf, cap, "%s", s);
    free(s);
    return buf;
}

int hkc_loops_is_barrier_stmt(const lkernel *k, int node)
{
    node = hkc_loops_unwrap(k, node);
    char buf[64];
    return node >= 0 && k->n[node].kind == CXCursor_CallExpr &&
           is_barrier_name(hkc_loops_callee(k, node, buf, sizeof buf));
}

/* The last node of node's subtree (nodes are in preorder). */
static int subtree_end(const lkernel *k, int node)
{
    int last = node;
    for (int c = k->n[node].child; c >= 0; c = k->n[c].next)
        last = subtree_end(k, c);
    return last;
}

/* Whether s is name, or name followed by _sync (in *sync). */
static int is_form(const char *s, const char *name, int *sync)
{
    size_t n = strlen(name);
    if (strncmp(s, name, n) || (s[n] && strcmp(s + n, "_sync")))
        return 0;
    if (sync)
        *sync = s[n] != 0;
    return 1;
}

int hkc_loops_is_shfl_name(const char *s, int *sync)
{
    return is_form(s, "__shfl", sync) || is_form(s, "__shfl_up", sync) || is_form(s, "__shfl_down", sync) ||
           is_form(s, "__shfl_xor", sync);
}

int hkc_loops_vote_kind(const char *s, int *sync)
{
    if (sync)
        *sync = 0;
    return is_form(s, "__ballot", sync) ? VOTE_BALLOT : is_form(s, "__any", sync) ? VOTE_ANY
         : is_form(s, "__all", sync)    ? VOTE_ALL    : !strcmp(s, "__activemask") ? VOTE_ACTIVEMASK : -1;
}

int hkc_loops_contains_barrier(const lkernel *k, int node)
{
    char buf[64];
    for (int i = node, e = subtree_end(k, node); i <= e; i++)
        if (k->n[i].kind == CXCursor_CallExpr &&
            (is_barrier_name(hkc_loops_callee(k, i, buf, sizeof buf)) || hkc_loops_is_shfl_name(buf, NULL) ||
             hkc_loops_vote_kind(buf, NULL) >= 0))
            return 1;
    return 0;
}

/* The arguments of a call (its children that are no reference to the
 * function called), at most cap, in args; how many. */
static int call_args(const lkernel *k, int call, int *args, int cap)
{
    int n = 0;
    for (int c = k->n[call].child; c >= 0 && n < cap; c = k->n[c].next) {
        int u = hkc_loops_unwrap(k, c);
        if (u >= 0 && k->n[u].kind == CXCursor_DeclRefExpr && k->n[u].var < 0 &&
            LC(clang_getCursorKind)(LC(clang_getCursorReferenced)(k->n[u].c)) == CXCursor_FunctionDecl)
            continue;
        args[n++] = c;
    }
    return n;
}

/* A _sync form's mask, when it is a constant: 1 and the value in *mask. */
static int const_mask(const lkernel *k, int node, unsigned long long *mask)
{
    CXEvalResult r = LC(clang_Cursor_Evaluate)(k->n[node].c);
    if (!r)
        return 0;
    int ok = LC(clang_EvalResult_getKind)(r) == CXEval_Int;
    if (ok)
        *mask = LC(clang_EvalResult_isUnsignedInt)(r) ? LC(clang_EvalResult_getAsUnsigned)(r)
                                                      : (unsigned long long)LC(clang_EvalResult_getAsLongLong)(r);
    LC(clang_EvalResult_dispose)(r);
    return ok;
}

/* Whether the call inside statement stmt runs exactly when the statement
 * does, and its argument after whatever the statement does before it
 * only through what C++ leaves unsequenced: the way up passes no loop,
 * switch, block or lambda, and enters an if, `?:`, `&&`, `||` or `,` only
 * through its first operand (an if through its condition). */
static int unconditional(const lkernel *k, int stmt, int call)
{
    char op[8];
    for (int c = call, p = k->n[call].parent; c != stmt; c = p, p = k->n[p].parent) {
        if (p < 0)
            return 0;
        switch (k->n[p].kind) {
        case CXCursor_IfStmt: {
            unsigned e = k->n[c].end; /* the condition ends at the if's `)` */
            while (k->tu[e] == ' ' || k->tu[e] == '\t' || k->tu[e] == '\n')
                e++;
            if (k->n[p].child != c || k->tu[e] != ')')
                return 0;
            break;
        }
        case CXCursor_ConditionalOperator:
            if (k->n[p].child != c)
                return 0;
            break;
        case CXCursor_BinaryOperator:
            hkc_loops_op_of(k, p, op, sizeof op);
            if ((!strcmp(op, "&&") || !strcmp(op, "||") || !strcmp(op, ",")) && k->n[p].child != c)
                return 0;
            break;
        case CXCursor_WhileStmt: case CXCursor_DoStmt: case CXCursor_ForStmt: case CXCursor_CXXForRangeStmt:
        case CXCursor_SwitchStmt: case CXCursor_CaseStmt: case CXCursor_DefaultStmt: case CXCursor_CompoundStmt:
        case CXCursor_LambdaExpr: case CXCursor_ReturnStmt: case CXCursor_StmtExpr:
            return 0;
        default:
            break;
        }
    }
    return 1;
}

/* Whether the subtree at node reads a variable the statement stmt
 * declares (the exchange runs before the declaration). */
static int reads_own(const lkernel *k, int stmt, int node)
{
    int last = subtree_end(k, stmt);
    for (int i = node, e = subtree_end(k, node); i <= e; i++)
        if (k->n[i].kind == CXCursor_DeclRefExpr && k->n[i].var >= 0 && k->v[k->n[i].var].node > stmt &&
            k->v[k->n[i].var].node <= last)
            return 1;
    return 0;
}

/* A warp operation splits its statement's list like a barrier: every
 * lane's value (a shuffle's variable, a vote's predicate) is stored in an
 * exchange loop, then the statement runs reading them. So the statement
 * holds that one warp operation, on a path it always takes, nothing of it
 * written by a macro; a shuffle's value is a variable. */
int hkc_loops_warp_stmt(lkernel *k, int stmt, int *arg, int *vote)
{
    int s = hkc_loops_unwrap(k, stmt), call = -1, n = 0, sync = 0;
    char buf[64];
    if (s < 0 || k->n[s].macro)
        return -1;
    for (int i = s, e = subtree_end(k, s); i <= e; i++)
        if (k->n[i].kind == CXCursor_CallExpr) {
            hkc_loops_callee(k, i, buf, sizeof buf);
            if (is_barrier_name(buf) || hkc_loops_is_warp_name(buf))
                n++;
            if (hkc_loops_is_shfl_name(buf, NULL) || hkc_loops_vote_kind(buf, NULL) >= 0)
                call = i;
        }
    if (n != 1 || call < 0 || k->n[call].macro || !unconditional(k, s, call))
        return -1;
    hkc_loops_callee(k, call, buf, sizeof buf);
    *vote = hkc_loops_vote_kind(buf, &sync);
    if (*vote < 0)
        hkc_loops_is_shfl_name(buf, &sync);
    int args[3], na = call_args(k, call, args, 3), value = sync;
    unsigned long long mask = ~0ull;
    if (sync && (na < 1 || !const_mask(k, args[0], &mask) || (mask != ~0ull && mask != 0xffffffffull))) {
        hkc_loops_refuse(k, call, "%s with a mask that is not a constant full one (0xffffffff or all 64 "
                         "lanes)", buf);
        return -1;
    }
    k->n[call].mask = mask;
    *arg = *vote == VOTE_ACTIVEMASK ? -1 : na > value ? args[value] : -1;
    if (*vote != VOTE_ACTIVEMASK && (*arg < 0 || reads_own(k, stmt, *arg)))
        return -1;
    if (*vote >= 0)
        return call;
    int u = hkc_loops_unwrap(k, *arg); /* a shuffle's value: a variable */
    return u >= 0 && k->n[u].kind == CXCursor_DeclRefExpr && k->n[u].var >= 0 ? call : -1;
}

/* ---------------------------------------------------------- variables */

int hkc_loops_add_var(lkernel *k, int node, int param)
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

int hkc_loops_type_kind(const lkernel *k, int node)
{
    return LC(clang_getCursorType)(k->n[node].c).kind;
}

int hkc_loops_is_static(const lkernel *k, int node)
{
    return LC(clang_Cursor_getStorageClass)(k->n[node].c) == CX_SC_Static ||
           LC(clang_getCursorTLSKind)(k->n[node].c) != CXTLS_None;
}

/* Finds a variable's initialiser: the text after its name (and array
 * bounds) says `=` (init is then its last expression child), `;` or `,`
 * (none), or anything else (constructor arguments, a braced list). */
void hkc_loops_find_init(lkernel *k, lvar *v)
{
    CXSourceLocation l = LC(clang_getCursorLocation)(k->n[v->node].c);
    unsigned off;
    LC(clang_getExpansionLocation)(l, NULL, NULL, NULL, &off);
    char *name = hkc_loops_spell(LC(clang_getCursorSpelling)(k->n[v->node].c));
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
    int array = hkc_loops_type_kind(k, v->node) == CXType_ConstantArray;
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
        return hkc_loops_type_kind(k, p) == CXType_LValueReference || hkc_loops_type_kind(k, p) == CXType_RValueReference;
    case CXCursor_BinaryOperator:
        hkc_loops_op_of(k, p, op, sizeof op);
        return k->n[p].child == u && !strcmp(op, "=");
    case CXCursor_CompoundAssignOperator:
        return k->n[p].child == u;
    case CXCursor_UnaryOperator:
        hkc_loops_op_of(k, p, op, sizeof op);
        return !strcmp(op, "++") || !strcmp(op, "--") || !strcmp(op, "&");
    case CXCursor_VarDecl:
        return hkc_loops_type_kind(k, p) == CXType_LValueReference || hkc_loops_type_kind(k, p) == CXType_RValueReference;
    default:
        return 1;
    }
}

void hkc_loops_find_modifications(lkernel *k)
{
    for (int i = 0; i < k->nn; i++) {
        if (k->n[i].kind != CXCursor_DeclRefExpr)
            continue;
        int var = ref_var(k, i);
        k->n[i].var = var;
        if (var < 0)
            continue;
        lvar *v = &k->v[var];
        int ref = hkc_loops_type_kind(k, v->node) == CXType_LValueReference ||
                  hkc_loops_type_kind(k, v->node) == CXType_RValueReference;
        if (!ref && modifies(k, i)) {
            if (v->nmod < 8)
                v->mod_beg[v->nmod] = k->n[i].beg;
            v->nmod++;
        }
    }
}

/* --------------------------------------------------------- uniformity */

static int uniform_children(lkernel *k, int node, int flags)
{
    for (int c = k->n[node].child; c >= 0; c = k->n[c].next)
        if (!hkc_loops_uniform(k, c, flags))
            return 0;
    return 1;
}

static int loop_var_operand(lkernel *k, int node)
{
    node = hkc_loops_unwrap(k, node);
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
    char *f = hkc_loops_spell(LC(clang_getCursorSpelling)(k->n[node].c));
    int base = hkc_loops_unwrap(k, k->n[node].child);
    int tls = base >= 0 && k->n[base].kind == CXCursor_DeclRefExpr && hkc_loops_name_is(k->n[base].c, "__hk_tls");
    int r;
    if (tls)
        r = strcmp(f, "__tid") ? !strcmp(f, "__bid") || !strcmp(f, "__bdim") || !strcmp(f, "__gdim")
                               : (flags & U_TID) != 0;
    else if (base >= 0 && hkc_loops_type_kind(k, base) == CXType_Pointer)
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
    hkc_loops_callee(k, node, name, sizeof name);
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
int hkc_loops_uniform(lkernel *k, int node, int flags)
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
        hkc_loops_op_of(k, node, op, sizeof op);
        if (!strcmp(op, "++") || !strcmp(op, "--"))
            return (flags & U_INC) && loop_var_operand(k, k->n[node].child);
        if (!strcmp(op, "*"))
            return (flags & U_LVALUE) && uniform_children(k, node, keep);
        return uniform_children(k, node, keep);
    case CXCursor_BinaryOperator:
        hkc_loops_op_of(k, node, op, sizeof op);
        if (!strcmp(op, "="))
            return (flags & U_INC) && loop_var_operand(k, k->n[node].child) &&
                   hkc_loops_uniform(k, hkc_loops_nth_child(k, node, 1), keep);
        if (!strcmp(op, ","))
            return uniform_children(k, node, flags);
        return uniform_children(k, node, keep);
    case CXCursor_CompoundAssignOperator:
        return (flags & U_INC) && loop_var_operand(k, k->n[node].child) &&
               hkc_loops_uniform(k, hkc_loops_nth_child(k, node, 1), keep);
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

#endif
