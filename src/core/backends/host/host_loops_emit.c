/* Barrier regions as loops, the output: the loop version of a kernel that
 * host_loops.c analysed, written as C++ after the kernel's body, from the
 * source ranges of its statements. #line directives keep every message and
 * assert citing the user's lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_loops.h"

#if HKC_HAVE_LIBCLANG
#include "host_loops_ast.h"
#include "pp_text.h"

typedef struct sub {
    unsigned beg, end;
    char text[96];
} sub;

typedef struct subs {
    sub *s;
    int n, cap;
} subs;

static void add_sub(subs *ss, unsigned beg, unsigned end, const char *text)
{
    if (ss->n == ss->cap) {
        int ncap = ss->cap ? 2 * ss->cap : 16;
        sub *ns = realloc(ss->s, (size_t)ncap * sizeof *ns);
        if (!ns)
            return; /* the emitted text then fails to compile: no silent change */
        ss->s = ns;
        ss->cap = ncap;
    }
    sub *s = &ss->s[ss->n++];
    s->beg = beg;
    s->end = end;
    snprintf(s->text, sizeof s->text, "%s", text);
}

static int cmp_sub(const void *a, const void *b)
{
    unsigned x = ((const sub *)a)->beg, y = ((const sub *)b)->beg;
    return x < y ? -1 : x > y;
}

static void put_line(const lkernel *k, unsigned off, const char *module, hkc_strbuf *out)
{
    hkc_strbuf_puts(out, "\n");
    hkc_pp_line_directive(out, (int)hkc_loops_line_at(k, off), module);
}

/* tu[beg, end) with the substitutions applied; a replaced stretch keeps
 * its newlines, so the lines after it keep their numbers. */
static void put_text(const lkernel *k, unsigned beg, unsigned end, const subs *ss, hkc_strbuf *out)
{
    unsigned p = beg;
    for (int i = 0; ss && i < ss->n; i++) {
        const sub *s = &ss->s[i];
        if (s->beg < p || s->end > end)
            continue;
        hkc_strbuf_append(out, k->tu + p, s->beg - p);
        hkc_strbuf_puts(out, s->text);
        for (unsigned q = s->beg; q < s->end; q++)
            if (k->tu[q] == '\n')
                hkc_strbuf_puts(out, "\n");
        p = s->end;
    }
    hkc_strbuf_append(out, k->tu + p, end - p);
}

/* A declaration statement as written, ending with its `;`. */
static void put_decl(const lkernel *k, int stmt, int unused, const char *module, hkc_strbuf *out)
{
    const lnode *d = &k->n[stmt];
    put_line(k, d->beg, module, out);
    if (unused) /* a recomputed `int tx = ..., ty = ...;` may not need both */
        hkc_strbuf_puts(out, "[[maybe_unused]] ");
    put_text(k, d->beg, d->end, NULL, out);
    if (d->end == d->beg || k->tu[d->end - 1] != ';')
        hkc_strbuf_puts(out, ";");
}

/* Whether a declaration statement declares a variable recomputed in
 * later regions. */
static int remat_stmt(const lkernel *k, int stmt)
{
    for (int c = k->n[stmt].child; c >= 0; c = k->n[c].next)
        if (k->n[c].var >= 0 && k->v[k->n[c].var].kind == V_REMAT)
            return 1;
    return 0;
}

/* What region r's text needs changed: hoisted declarations removed,
 * variables kept per thread turned into their arrays, returns into a mark
 * and a jump to the region's next thread. */
static void region_subs(const lkernel *k, int r, subs *ss)
{
    char t[96];
    for (int i = k->body; i < k->nn; i++) {
        const lnode *n = &k->n[i];
        if (n->region != r)
            continue;
        if (n->kind == CXCursor_CallExpr && n->warp >= 0) {
            /* __shfl_xor_sync(mask, v, ...) -> __hk_lw_xor<T>(__hk_w, ..., ...) */
            const lnode *a = &k->n[n->arg];
            char name[32];
            hkc_loops_callee(k, i, name, sizeof name);
            char *sync = strstr(name + 6, "_sync");
            if (sync)
                *sync = 0;
            const lvar *v = &k->v[k->n[hkc_loops_unwrap(k, n->arg)].var];
            snprintf(t, sizeof t, "__hk_lw%s<__hk_T%d>(__hk_w, __hk_t, __hk_n, __hk_ret", name + 6, v->slot);
            add_sub(ss, n->beg, a->end, t);
        } else if (n->kind == CXCursor_CallExpr && n->vote >= 0) {
            static const char *const fn[] = {"ballot", "any", "all", "activemask"};
            snprintf(t, sizeof t, "__hk_lv_%s(__hk_wb, __hk_t, %#llxull)", fn[n->vote], n->mask);
            add_sub(ss, n->beg, n->end, t);
        } else if (n->kind == CXCursor_ReturnStmt) {
            snprintf(t, sizeof t, "do { __hk_ret[__hk_t] = 1; goto __hk_next_%d; } while (0)", r);
            add_sub(ss, n->beg, n->beg + 6, t);
        } else if (n->kind == CXCursor_DeclRefExpr && n->var >= 0 && k->v[n->var].kind == V_STORE) {
            snprintf(t, sizeof t, "__hk_v%d[__hk_t]", k->v[n->var].slot);
            add_sub(ss, n->beg, n->end, t);
        } else if (n->kind == CXCursor_VarDecl && n->var >= 0 && k->v[n->var].stmt >= 0) {
            const lvar *v = &k->v[n->var];
            const lnode *d = &k->n[v->stmt];
            if (v->kind == V_HOIST && n->parent == v->stmt && d->child == i)
                add_sub(ss, d->beg, d->end, "");
            else if (v->kind == V_STORE && v->init >= 0) {
                snprintf(t, sizeof t, "__hk_v%d[__hk_t] = ", v->slot);
                add_sub(ss, d->beg, k->n[v->init].beg, t);
            } else if (v->kind == V_STORE) {
                add_sub(ss, d->beg, d->end, ";");
            } else if (d->child == i && remat_stmt(k, v->stmt)) {
                /* recomputed where it is read: here it may be unread (-Wextra) */
                add_sub(ss, d->beg, d->beg, "[[maybe_unused]] ");
            }
        }
    }
    if (ss->n > 1) /* ss->s is NULL while empty */
        qsort(ss->s, (size_t)ss->n, sizeof *ss->s, cmp_sub);
}

/* The declarations region r recomputes: the recomputable variables it
 * reads that were declared in an earlier region, and the ones their
 * initialisers read, in declaration order. */
static void put_remat(const lkernel *k, int r, const char *module, hkc_strbuf *out)
{
    char *need = calloc((size_t)k->nv + 1, 1);
    if (!need)
        return;
    for (int i = k->body; i < k->nn; i++)
        if (k->n[i].region == r && k->n[i].kind == CXCursor_DeclRefExpr && k->n[i].var >= 0 &&
            k->v[k->n[i].var].kind == V_REMAT && k->v[k->n[i].var].region != r)
            need[k->n[i].var] = 1;
    for (int v = k->nv - 1; v >= 0; v--) {
        if (!need[v])
            continue;
        for (int i = k->v[v].stmt; i < k->nn && k->n[i].beg < k->n[k->v[v].stmt].end; i++)
            if (k->n[i].kind == CXCursor_DeclRefExpr && k->n[i].var >= 0 && k->v[k->n[i].var].remat_ok &&
                k->v[k->n[i].var].region != r)
                need[k->n[i].var] = 1;
    }
    for (int v = 0, last = -1; v < k->nv; v++)
        if (need[v] && k->v[v].stmt != last) {
            last = k->v[v].stmt;
            put_decl(k, last, 1, module, out);
        }
    free(need);
}

/* A vote's exchange: every live lane's predicate (negated for __all,
 * which asks whether no lane's is zero) into its warp's word of __hk_wb. */
static void put_vote(const lkernel *k, const litem *it, const char *module, hkc_strbuf *out)
{
    hkc_strbuf_puts(out, "\nmemset(__hk_wb, 0, (__hk_n + HK_HOST_WARP_SIZE - 1) / HK_HOST_WARP_SIZE * "
                         "sizeof(uint64_t));\n__HK_REGION_BEGIN {");
    if (it->pred >= 0) {
        const lregion *r = &k->r[it->pred];
        subs ss = {0};
        region_subs(k, it->pred, &ss);
        put_remat(k, it->pred, module, out);
        hkc_strbuf_printf(out, "\n__hk_lv_put(__hk_wb, __hk_t, %s__hk_lv_pred(", it->vote == VOTE_ALL ? "!" : "");
        put_line(k, r->beg, module, out);
        put_text(k, r->beg, r->end, &ss, out);
        hkc_strbuf_puts(out, "));");
        free(ss.s);
    } else {
        hkc_strbuf_puts(out, " __hk_lv_put(__hk_wb, __hk_t, true);");
    }
    hkc_strbuf_printf(out, "\n} __HK_REGION_END(__hk_next_v%d)", it->call); /* a node: unique */
}

static void put_list(const lkernel *k, int list, const char *module, hkc_strbuf *out)
{
    const llist *l = &k->l[list];
    for (int i = 0; i < l->nitems; i++) {
        const litem *it = &l->items[i];
        if (it->region >= 0) {
            const lregion *r = &k->r[it->region];
            subs ss = {0};
            region_subs(k, it->region, &ss);
            hkc_strbuf_puts(out, "\n__HK_REGION_BEGIN {");
            put_remat(k, it->region, module, out);
            put_line(k, r->beg, module, out);
            put_text(k, r->beg, r->end, &ss, out);
            unsigned e = r->end;
            while (e > r->beg && (k->tu[e - 1] == ' ' || k->tu[e - 1] == '\n' || k->tu[e - 1] == '\t'))
                e--;
            if (e > r->beg && k->tu[e - 1] != ';' && k->tu[e - 1] != '}')
                hkc_strbuf_puts(out, ";"); /* a loop's body without braces ends before its `;` */
            hkc_strbuf_printf(out, "\n} __HK_REGION_END(__hk_next_%d)", it->region);
            free(ss.s);
        } else if (it->vote >= 0) {
            put_vote(k, it, module, out);
        } else if (it->warp >= 0) {
            const lvar *v = &k->v[k->n[hkc_loops_unwrap(k, it->arg)].var];
            hkc_strbuf_printf(out, "\n__HK_REGION_BEGIN { __hk_w[__hk_t] = __hk_lw_bits(__hk_v%d[__hk_t]); "
                              "} __HK_REGION_END(__hk_next_w%d)", v->slot, k->n[it->call].warp);
        } else {
            const lnode *f = &k->n[it->loop];
            int nc = 0, body = -1;
            for (int c = f->child; c >= 0; c = k->n[c].next, nc++)
                body = c;
            put_line(k, f->beg, module, out);
            put_text(k, f->beg, k->n[body].beg, NULL, out);
            hkc_strbuf_puts(out, " {\n__hk_s.__rt->loop_poll();");
            put_list(k, it->body, module, out);
            hkc_strbuf_puts(out, "\n}");
        }
    }
}

void hkc_loops_emit(const lkernel *k, const char *name, const char *module, hkc_strbuf *out)
{
    CXSourceLocation nl = LC(clang_getCursorLocation)(k->n[k->fn].c);
    unsigned name_at;
    LC(clang_getExpansionLocation)(nl, NULL, NULL, NULL, &name_at);
    const lnode *body = &k->n[k->body];
    hkc_strbuf_printf(out, "\nstatic void __hk_loops_%s", name);
    put_text(k, name_at + (unsigned)strlen(name), body->beg, NULL, out);
    hkc_strbuf_puts(out, "{\n");
    for (int i = 0; i < k->nv; i++)
        if (k->v[i].kind == V_STORE)
            hkc_strbuf_printf(out, "using __hk_T%d = std::remove_cv_t<%s>;\n", k->v[i].slot, k->v[i].type);
    hkc_strbuf_puts(out, "__HK_LOOPS_BEGIN(0");
    for (int s = 0; s < k->nslots; s++)
        hkc_strbuf_printf(out, " + __hk_loop_span(sizeof(__hk_T%d), __hk_n)", s);
    if (k->nwarp)
        hkc_strbuf_puts(out, " + __hk_loop_span(8, __hk_n)");
    if (k->nvote)
        hkc_strbuf_puts(out, " + __hk_loop_span(8, __hk_n)");
    hkc_strbuf_printf(out, "%s);\n", k->has_return ? " + __hk_loop_span(1, __hk_n)" : "");
    for (int s = 0; s < k->nslots; s++)
        hkc_strbuf_printf(out, "__hk_T%d *__hk_v%d = __hk_m.__take<__hk_T%d>();\n", s, s, s);
    if (k->nwarp) /* each lane's value at a shuffle */
        hkc_strbuf_puts(out, "uint64_t *__hk_w = __hk_m.__take<uint64_t>();\n");
    if (k->nvote) /* each warp's vote */
        hkc_strbuf_puts(out, "uint64_t *__hk_wb = __hk_m.__take<uint64_t>();\n");
    if (k->has_return)
        hkc_strbuf_puts(out, "unsigned char *__hk_ret = __hk_m.__take<unsigned char>();\n"
                             "memset(__hk_ret, 0, __hk_n);\n");
    else
        hkc_strbuf_puts(out, "unsigned char *const __hk_ret = nullptr;\n");
    for (int i = 0, last = -1; i < k->nv; i++)
        if (k->v[i].kind == V_HOIST && k->v[i].stmt != last) {
            last = k->v[i].stmt;
            put_decl(k, last, 1, module, out);
        }
    for (int i = 0; i < k->nv; i++) /* a changed parameter: each thread's copy of the argument */
        if (k->v[i].param && k->v[i].kind == V_STORE) {
            char *pn = hkc_loops_spell(LC(clang_getCursorSpelling)(k->n[k->v[i].node].c));
            hkc_strbuf_printf(out, "\n__HK_REGION_BEGIN { __hk_v%d[__hk_t] = %s; } __HK_REGION_END(__hk_next_p%d)",
                              k->v[i].slot, pn, i);
            free(pn);
        }
    put_list(k, 0, module, out);
    hkc_strbuf_puts(out, "\n}\n");
    hkc_pp_line_directive(out, (int)hkc_loops_line_at(k, body->end - 1), module);
}
#endif
