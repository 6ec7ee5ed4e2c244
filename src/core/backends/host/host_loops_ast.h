/* What the files of loop mode share: libclang's functions, loaded at run
 * time (host_loops_clang.c), and one kernel's AST as a flat tree with the
 * facts the analysis (host_loops_uniform.c, host_loops_regions.c) found,
 * which host_loops_emit.c writes out and host_loops.c drives. */
#ifndef HKC_HOST_LOOPS_AST_H
#define HKC_HOST_LOOPS_AST_H

#include <clang-c/Index.h>

#include "host_loops.h"
#include "strbuf.h"

/* libclang is opened with dlopen: hipkit runs without it (kernels with
 * barriers then stay on fibers, and say why). */
#define HKC_CLANG_FNS(X)                                                                     \
    X(clang_createIndex) X(clang_disposeIndex) X(clang_parseTranslationUnit2)                 \
    X(clang_disposeTranslationUnit) X(clang_getTranslationUnitCursor) X(clang_visitChildren)  \
    X(clang_getCursorKind) X(clang_getCursorExtent) X(clang_getRangeStart) X(clang_getRangeEnd) \
    X(clang_getExpansionLocation) X(clang_getSpellingLocation) X(clang_getPresumedLocation)  \
    X(clang_Location_isFromMainFile) X(clang_Location_isInSystemHeader)                       \
    X(clang_getCursorSpelling) X(clang_getCString) X(clang_disposeString)                     \
    X(clang_getCursorReferenced) X(clang_equalCursors) X(clang_isCursorDefinition)            \
    X(clang_getCursorSemanticParent) X(clang_getCursorType) X(clang_getCanonicalType)         \
    X(clang_getTypeSpelling) X(clang_isPODType) X(clang_isConstQualifiedType)                 \
    X(clang_Cursor_getStorageClass) X(clang_getCursorDefinition) X(clang_tokenize)            \
    X(clang_getTokenSpelling) X(clang_getTokenExtent) X(clang_disposeTokens)                  \
    X(clang_getNumDiagnostics) X(clang_getDiagnostic) X(clang_getDiagnosticSeverity)          \
    X(clang_getDiagnosticSpelling) X(clang_disposeDiagnostic) X(clang_getCursorLocation)      \
    X(clang_getNullCursor) X(clang_Cursor_isNull) X(clang_Cursor_getTranslationUnit)             \
    X(clang_isExpression) X(clang_getCursorTLSKind) X(clang_getPointeeType)                  \
    X(clang_getLocationForOffset) X(clang_getFile) X(clang_saveTranslationUnit)             \
    X(clang_defaultSaveOptions) X(clang_Cursor_Evaluate) X(clang_EvalResult_getKind)              \
    X(clang_EvalResult_isUnsignedInt) X(clang_EvalResult_getAsUnsigned)                            \
    X(clang_EvalResult_getAsLongLong) X(clang_EvalResult_dispose) X(clang_getCanonicalCursor)

typedef struct hkc_clang {
#define HKC_CLANG_FIELD(f) __typeof__(f) *f;
    HKC_CLANG_FNS(HKC_CLANG_FIELD)
#undef HKC_CLANG_FIELD
} hkc_clang;

extern hkc_clang hkc_lc;
#define LC(f) (hkc_lc.f)

enum { V_LOCAL, V_HOIST, V_LOOP, V_REMAT, V_STORE };

typedef struct lnode {
    CXCursor c;
    enum CXCursorKind kind;
    unsigned beg, end; /* offsets in the translation unit (where expanded) */
    int macro;         /* begins or ends inside a macro expansion */
    int parent, child, next; /* indexes, -1 for none */
    int var;           /* DeclRefExpr/VarDecl: its lvar, -1 if none */
    int region;        /* the region it lies in, -1 for none */
    int warp;          /* CallExpr: a shuffle run as an exchange (its litem's warp), else -1 */
    int vote;          /* CallExpr: a vote run as a reduction over its warp (VOTE_*), else -1 */
    int arg;           /* such a call: the node of its value or predicate, -1 for none */
    unsigned long long mask; /* a vote: its mask (all ones for the plain forms) */
} lnode;

/* The warp votes loop mode runs: every live lane's predicate is reduced
 * into its warp's word (__hk_wb) in an exchange loop, which the
 * statement's region then reads. */
enum { VOTE_BALLOT, VOTE_ANY, VOTE_ALL, VOTE_ACTIVEMASK };

typedef struct lvar {
    int node;    /* the VarDecl or ParmDecl */
    int stmt;    /* the DeclStmt declaring it at a statement list's level, or -1 */
    int list;    /* that list, -1 */
    int region;  /* the region of that declaration, -1 */
    int kind;    /* V_* */
    int param;
    int slot;    /* V_STORE: its per-thread array */
    int init;    /* the initializer's node (after `=`), -1 */
    int init_other; /* initialised otherwise: (args) or {list} */
    int remat_ok;   /* its initialiser depends only on the thread index and uniform values */
    unsigned nmod, mod_beg[8]; /* where it is modified (the first 8) */
    char type[256]; /* V_STORE: the type, canonical spelling */
} lvar;

typedef struct lregion {
    int list;
    unsigned beg, end;
} lregion;

/* A statement list: the kernel body (list 0) or the body of a loop with a
 * barrier. Its items are regions and such loops, in order. */
typedef struct litem {
    int region; /* >= 0: a region */
    int loop;   /* >= 0: the ForStmt node; its body is list `body` */
    int body;
    /* >= 0: a shuffle's statement (the node): every lane's value is stored
     * first (an exchange loop), then the statement's region reads them */
    int warp;
    int call, arg; /* its CallExpr node and the node of its value or predicate (-1: none) */
    int vote;      /* a vote (VOTE_*), else -1 */
    int pred;      /* a vote's predicate: the region of its text, -1 for none */
} litem;

typedef struct llist {
    int parent;
    int nitems, cap;
    litem *items;
} llist;

typedef struct lkernel {
    const char *tu;
    CXTranslationUnit unit;
    CXFile file;
    lnode *n;
    int nn, ncap;
    lvar *v;
    int nv, vcap;
    lregion *r;
    int nr, rcap;
    llist *l;
    int nl, lcap;
    int fn, body; /* FunctionDecl and its CompoundStmt */
    int has_return;
    int nwarp; /* shuffles run as exchanges */
    int nvote; /* votes run as reductions */
    int nslots;
    int oom;
    char why[256]; /* the first reason not to split */
} lkernel;

/* host_loops_clang.c: libclang and the tree. */
int hkc_loops_clang_ready(void); /* loaded; else hkc_host_loops_status() says why */
CXTranslationUnit hkc_loops_parse(const hkc_host_loops_job *job, CXIndex idx, char *why, size_t cap);
void hkc_loops_tree(lkernel *k, CXCursor fn); /* fn's subtree into k->n; k->fn, k->body */
char *hkc_loops_spell(CXString s); /* a copy (malloc), disposing of s */
int hkc_loops_name_is(CXCursor c, const char *want);
/* The line (as #line directives number it) of an offset of the unit. */
unsigned hkc_loops_line_at(const lkernel *k, unsigned off);
/* Sets k->why (fmt with what, and node's line) unless a reason is set. */
void hkc_loops_refuse(lkernel *k, int node, const char *fmt, const char *what);
int hkc_loops_nth_child(const lkernel *k, int node, int i);
int hkc_loops_nchildren(const lkernel *k, int node);
int hkc_loops_unwrap(const lkernel *k, int node);
void hkc_loops_op_of(const lkernel *k, int node, char *out, size_t cap);

/* host_loops_uniform.c: calls, variables, uniformity. */
int hkc_loops_is_warp_name(const char *s);
int hkc_loops_fn_syncs(CXCursor fn, int depth);
const char *hkc_loops_callee(const lkernel *k, int node, char *buf, size_t cap);
int hkc_loops_is_barrier_stmt(const lkernel *k, int node);
int hkc_loops_contains_barrier(const lkernel *k, int node); /* or a shuffle or vote */
/* __shfl, _up, _down, _xor and their _sync forms; *sync says which. */
int hkc_loops_is_shfl_name(const char *s, int *sync);
/* __ballot, __any, __all (plain or _sync), __activemask: VOTE_*, or -1. */
int hkc_loops_vote_kind(const char *s, int *sync);
/* A statement split at its one warp operation, a shuffle of a variable or
 * a vote, evaluated whenever the statement runs: the CallExpr node (its
 * value or predicate in *arg, -1 for none; *vote the VOTE_* or -1 for a
 * shuffle), else -1. A _sync form whose mask is not a constant full one
 * refuses the kernel (k->why). */
int hkc_loops_warp_stmt(lkernel *k, int stmt, int *arg, int *vote);
int hkc_loops_add_var(lkernel *k, int node, int param);
int hkc_loops_type_kind(const lkernel *k, int node);
int hkc_loops_is_static(const lkernel *k, int node);
void hkc_loops_find_init(lkernel *k, lvar *v);
void hkc_loops_find_modifications(lkernel *k);
/* U_TID: may depend on the thread index too; U_LVALUE: a reference is bound
 * to it; U_INC: a loop increment, which may change loop variables. */
enum { U_TID = 1, U_LVALUE = 2, U_INC = 4 };
int hkc_loops_uniform(lkernel *k, int node, int flags);

/* host_loops_regions.c: the split and the locals across barriers. */
void hkc_loops_analyze(lkernel *k); /* sets k->why, or the regions and variables */
void hkc_loops_kernel_free(lkernel *k);
/* Writes the loop version of k (analysed, no why) for kernel `name` into out. */
void hkc_loops_emit(const lkernel *k, const char *name, const char *module, hkc_strbuf *out);

#endif
