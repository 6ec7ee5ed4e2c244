/* Barrier regions as loops, the split: the kernel's statement lists cut
 * at their barriers into regions (and `for` loops with barriers, whose
 * bodies are lists of their own), the constructs that keep the fibers, and
 * the locals that live across a barrier: recomputed, hoisted or kept per
 * thread. host_loops.c says what the analysis proves as a whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_loops.h"

#if HKC_HAVE_LIBCLANG
#include "host_loops_ast.h"

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
    add_item(k, list, (litem){.region = k->nr, .loop = -1, .body = -1, .warp = -1, .vote = -1, .pred = -1});
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
        if (hkc_loops_is_static(k, c))
            continue;
        int ref = hkc_loops_type_kind(k, c) == CXType_LValueReference;
        if (v->init < 0 || v->nmod || !hkc_loops_uniform(k, v->init, ref ? U_LVALUE : 0))
            return 0;
    }
    return any;
}

static void analyze_list(lkernel *k, int list, int first, unsigned end);

/* What node's subtree reaches: 0 a barrier, else only shuffles (1) or
 * also votes (2). */
static int only_warp(const lkernel *k, int node)
{
    char buf[64];
    int r = 1;
    for (int i = node; i < k->nn && k->n[i].beg < k->n[node].end; i++) {
        if (k->n[i].kind != CXCursor_CallExpr)
            continue;
        hkc_loops_callee(k, i, buf, sizeof buf);
        if (hkc_loops_vote_kind(buf, NULL) >= 0)
            r = 2;
        else if (!hkc_loops_is_shfl_name(buf, NULL) && hkc_loops_contains_barrier(k, i))
            return 0;
    }
    return r;
}

/* A region of its own for a vote's predicate: the exchange loop's text,
 * inside the statement's (place_nodes gives its nodes the lower index). */
static int pred_region(lkernel *k, int list, int arg)
{
    if (arg < 0)
        return -1;
    int item = k->l[list].nitems, r = open_region(k, list, k->n[arg].beg);
    if (r >= 0) {
        k->r[r].end = k->n[arg].end;
        k->l[list].nitems = item; /* run by the exchange, not as an item */
    }
    return r;
}

/* A for loop with a barrier in its body: its header must be the block's. */
static void analyze_for(lkernel *k, int list, int f)
{
    int nc = hkc_loops_nchildren(k, f), body = hkc_loops_nth_child(k, f, nc - 1);
    unsigned semi[2] = {0, 0};
    int ns = 0, depth = 0;
    for (unsigned p = k->n[f].beg; p < k->n[body].beg && ns < 2; p++) {
        char ch = k->tu[p];
        depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
        if (ch == ';' && depth == 1)
            semi[ns++] = p;
    }
    if (ns < 2 || k->n[f].macro) {
        hkc_loops_refuse(k, f, "a barrier inside %s written by a macro", "a for loop");
        return;
    }
    int cond = -1, inc = -1;
    for (int i = 0; i < nc - 1; i++) {
        int c = hkc_loops_nth_child(k, f, i);
        if (k->n[c].beg < semi[0]) {
            if (k->n[c].kind != CXCursor_DeclStmt) {
                hkc_loops_refuse(k, c, "a for loop with a barrier whose init %s", "is no declaration");
                return;
            }
            for (int d = k->n[c].child; d >= 0; d = k->n[d].next) {
                lvar *v = k->n[d].var >= 0 ? &k->v[k->n[d].var] : NULL;
                if (!v || v->init < 0 || !hkc_loops_uniform(k, v->init, 0)) {
                    hkc_loops_refuse(k, d, "a for loop with a barrier whose init %s", "may differ between threads");
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
    if (cond < 0 || !hkc_loops_uniform(k, cond, 0) || (inc >= 0 && !hkc_loops_uniform(k, inc, U_INC))) {
        hkc_loops_refuse(k, f, "a for loop with a barrier whose %s may differ between threads (or read memory)",
               cond < 0 ? "missing condition" : "condition or increment");
        return;
    }
    for (int i = 0; i < k->nv; i++) /* its loop variables change in the increment only */
        if (k->v[i].kind == V_LOOP && k->n[k->v[i].node].beg > k->n[f].beg &&
            k->n[k->v[i].node].beg < semi[0])
            for (unsigned m = 0; m < k->v[i].nmod && m < 8; m++)
                if (k->v[i].mod_beg[m] < semi[1] || k->v[i].mod_beg[m] >= k->n[body].beg || k->v[i].nmod > 8) {
                    hkc_loops_refuse(k, f, "a for loop with a barrier whose variable %s", "changes in its body");
                    return;
                }
    int inner = grow_list(k, list);
    if (inner < 0)
        return;
    add_item(k, list, (litem){.region = -1, .loop = f, .body = inner, .warp = -1, .vote = -1, .pred = -1});
    if (k->n[body].kind == CXCursor_CompoundStmt) {
        if (k->n[body].macro) {
            hkc_loops_refuse(k, body, "a loop body from %s", "a macro");
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
        int barrier = hkc_loops_is_barrier_stmt(k, s), arg = -1, vote = -1;
        int call = barrier ? -1 : hkc_loops_warp_stmt(k, s, &arg, &vote);
        if (k->why[0])
            return;
        if (call >= 0) { /* the exchange, then a region that starts with s */
            if (cur >= 0)
                k->r[cur].end = k->n[s].beg;
            int pred = vote >= 0 ? pred_region(k, list, arg) : -1;
            add_item(k, list, (litem){.region = -1, .loop = -1, .body = -1, .warp = s, .call = call, .arg = arg,
                                      .vote = vote, .pred = pred});
            k->n[call].arg = arg;
            if (vote >= 0) {
                k->n[call].vote = vote;
                k->nvote++;
            } else {
                k->n[call].warp = k->nwarp++;
            }
            if (k->oom || (cur = open_region(k, list, k->n[s].beg)) < 0)
                return;
        } else if (barrier || hkc_loops_contains_barrier(k, s)) {
            if (cur >= 0)
                k->r[cur].end = k->n[s].beg;
            cur = -1;
            if (barrier)
                continue;
            if (k->n[s].kind != CXCursor_ForStmt) {
                int w = only_warp(k, s);
                if (w)
                    hkc_loops_refuse(k, s, w == 1 ? "a warp shuffle in %s it cannot split (one shuffle of a "
                                     "variable, on a path its statement always takes, at the top level or in "
                                     "a uniform for loop)" : "a warp vote in %s it cannot split (one vote, on "
                                     "a path its statement always takes, at the top level or in a uniform for "
                                     "loop)", construct(k->n[s].kind));
                else
                    hkc_loops_refuse(k, s, "a barrier inside %s", construct(k->n[s].kind));
                return;
            }
            analyze_for(k, list, s);
            continue;
        } else if (cur < 0 && (cur = open_region(k, list, k->n[s].beg)) < 0) {
            return;
        }
        if (k->n[s].kind != CXCursor_DeclStmt)
            continue;
        int hoist = list == 0 && call < 0 && hoistable(k, s);
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
            hkc_loops_refuse(k, i, "%s in the kernel", "a goto or label");
            break;
        case CXCursor_LambdaExpr:
            hkc_loops_refuse(k, i, "%s in the kernel", "a lambda");
            break;
        case CXCursor_CallExpr: {
            hkc_loops_callee(k, i, name, sizeof name);
            if (hkc_loops_is_warp_name(name)) { /* shuffles and votes: analyze_list */
                if (!hkc_loops_is_shfl_name(name, NULL) && hkc_loops_vote_kind(name, NULL) < 0)
                    hkc_loops_refuse(k, i, "a warp operation or block reduction (%s)", name);
                break;
            }
            CXCursor ref = LC(clang_getCursorReferenced)(k->n[i].c);
            if (!LC(clang_Cursor_isNull)(ref) &&
                !LC(clang_Location_isInSystemHeader)(LC(clang_getCursorLocation)(ref)) &&
                hkc_loops_fn_syncs(ref, 0))
                hkc_loops_refuse(k, i, "a call to %s, which reaches a barrier or warp operation", name);
            break;
        }
        case CXCursor_BreakStmt: case CXCursor_ContinueStmt: {
            int p = k->n[i].parent;
            while (p >= 0 && k->n[p].kind != CXCursor_ForStmt && k->n[p].kind != CXCursor_WhileStmt &&
                   k->n[p].kind != CXCursor_DoStmt && k->n[p].kind != CXCursor_CXXForRangeStmt &&
                   !(k->n[p].kind == CXCursor_SwitchStmt && k->n[i].kind == CXCursor_BreakStmt))
                p = k->n[p].parent;
            if (p >= 0 && k->n[p].kind == CXCursor_ForStmt && hkc_loops_contains_barrier(k, p))
                hkc_loops_refuse(k, i, "%s in a loop with a barrier", "a break or continue");
            break;
        }
        case CXCursor_ReturnStmt:
            if (k->n[i].macro)
                hkc_loops_refuse(k, i, "a return written by %s", "a macro");
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
            hkc_loops_type_kind(k, v->node) != CXType_ConstantArray && hkc_loops_type_kind(k, v->node) != CXType_LValueReference)
            v->remat_ok = hkc_loops_uniform(k, v->init, U_TID);
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
        char *name = hkc_loops_spell(LC(clang_getCursorSpelling)(k->n[v->node].c));
        if (v->remat_ok) {
            v->kind = V_REMAT;
        } else {
            CXType t = LC(clang_getCanonicalType)(LC(clang_getCursorType)(k->n[v->node].c));
            char *ts = hkc_loops_spell(LC(clang_getTypeSpelling)(t));
            int array = t.kind == CXType_ConstantArray;
            if (hkc_loops_nchildren(k, v->stmt) != 1 || k->n[v->stmt].macro || v->init_other ||
                (array && v->init >= 0) || (v->init >= 0 && k->n[v->init].macro) ||
                t.kind == CXType_LValueReference || t.kind == CXType_RValueReference ||
                !LC(clang_isPODType)(t) || strchr(ts, '(') || strlen(ts) >= sizeof v->type)
                hkc_loops_refuse(k, v->node, "%s lives across a barrier and cannot be kept per thread", name);
            else {
                snprintf(v->type, sizeof v->type, "%s", ts);
                v->kind = V_STORE;
                v->slot = k->nslots++;
            }
            free(ts);
        }
        free(name);
    }
    /* A parameter the body changes (`x += blockIdx.x * n`) is each thread's
     * own copy: a region's loop over the threads would change it once per
     * thread. Kept per thread, filled from the argument before the first
     * region (hkc_loops_emit). */
    for (int i = 0; i < k->nv && !k->why[0]; i++) {
        lvar *v = &k->v[i];
        if (!v->param || !v->nmod)
            continue;
        CXType t = LC(clang_getCanonicalType)(LC(clang_getCursorType)(k->n[v->node].c));
        char *ts = hkc_loops_spell(LC(clang_getTypeSpelling)(t));
        if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference || !LC(clang_isPODType)(t) ||
            strchr(ts, '(') || strlen(ts) >= sizeof v->type) {
            char *name = hkc_loops_spell(LC(clang_getCursorSpelling)(k->n[v->node].c));
            hkc_loops_refuse(k, v->node, "parameter %s is changed and cannot be kept per thread", name);
            free(name);
        } else {
            snprintf(v->type, sizeof v->type, "%s", ts);
            v->kind = V_STORE;
            v->slot = k->nslots++;
        }
        free(ts);
    }
    for (int i = k->body; i < k->nn && !k->why[0]; i++)
        if (k->n[i].kind == CXCursor_DeclRefExpr && k->n[i].var >= 0 &&
            k->v[k->n[i].var].kind == V_STORE && k->n[i].macro)
            hkc_loops_refuse(k, i, "a variable that lives across a barrier used inside %s", "a macro");
}

void hkc_loops_analyze(lkernel *k)
{
    for (int i = 0; i < k->nn; i++)
        if (k->n[i].kind == CXCursor_ParmDecl || k->n[i].kind == CXCursor_VarDecl)
            hkc_loops_add_var(k, i, k->n[i].kind == CXCursor_ParmDecl);
    for (int i = 0; i < k->nv; i++)
        if (!k->v[i].param)
            hkc_loops_find_init(k, &k->v[i]);
    hkc_loops_find_modifications(k);
    if (k->n[k->body].macro) {
        hkc_loops_refuse(k, k->body, "the kernel's body comes from %s", "a macro");
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
    for (int l = 0; l < k->nl && !k->why[0]; l++)
        for (int i = 0; i < k->l[l].nitems; i++) {
            const litem *it = &k->l[l].items[i];
            int u = it->warp >= 0 && it->vote < 0 ? hkc_loops_unwrap(k, it->arg) : -1;
            if (u >= 0 && k->v[k->n[u].var].kind != V_STORE)
                hkc_loops_refuse(k, it->call, "a warp shuffle of %s, which is not kept per thread",
                                 "a variable");
        }
}

void hkc_loops_kernel_free(lkernel *k)
{
    for (int i = 0; i < k->nl; i++)
        free(k->l[i].items);
    free(k->l);
    free(k->n);
    free(k->v);
    free(k->r);
}

#endif
