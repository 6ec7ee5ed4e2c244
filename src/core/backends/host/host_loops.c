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
 * statements (host_loops_emit.c). This file drives it: which kernels are
 * analysed, and the translation unit with their loop versions and the modes
 * table. libclang and the tree: host_loops_clang.c; the analysis:
 * host_loops_uniform.c (calls, variables, uniformity) and
 * host_loops_regions.c (the split, the locals across barriers). What the
 * analysis proves, or refuses:
 * - barriers (__syncthreads, __syncwarp) only as statements of the body or
 *   of a `for` whose init, condition and increment read no thread index and
 *   no memory, only parameters, constants, the block's coordinates and its
 *   own loop variables, which its body does not change; anything else with a
 *   barrier inside (if, while, switch, a nested block) keeps the fibers;
 * - a warp operation at a barrier's place, the one of its statement and on
 *   a path the statement always takes: a shuffle (__shfl, _up, _down, _xor,
 *   plain or _sync) of a variable kept per thread, or a vote (__ballot,
 *   __any, __all, plain or _sync, __activemask): split there, an exchange
 *   loop storing every lane's value (or setting its predicate's bit in its
 *   warp's word) first; a _sync form's mask a constant full one;
 * - no goto or label, no lambda, no other warp operation, no block
 *   reduction (__syncthreads_count...), no call to a function of the
 *   user's that reaches a barrier; no break or continue leaving such a loop;
 * - a local that lives across a barrier is either recomputed in each region
 *   that reads it (its initialiser depends only on the thread index and
 *   uniform values, and it is never changed), hoisted before all regions
 *   (uniform and unchanged: shared memory references, block offsets), or
 *   kept per thread in an array (a plain-data scalar or array declared by
 *   itself); anything else keeps the fibers; a parameter the body changes
 *   is kept per thread the same way (each thread's own copy in HIP);
 * - a `return` marks the thread as returned: it skips every later region. */
#include "host_loops.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipkit/hipkit.h"
#include "pp_text.h"

#if HKC_HAVE_LIBCLANG
#include "host_fault.h"
#include "host_loops_ast.h"

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
        if (f->job->kernels[i].uses_sync && hkc_loops_name_is(c, f->job->kernels[i].name))
            f->fns[i] = c;
    return CXChildVisit_Continue;
}

/* Analyses kernel fn; on success appends its loop version to *ins (the
 * text to insert after the kernel's body) and returns 1, else writes why. */
/* Where `inline` can be written before kernel fn's definition (k's unit),
 * or -1: the definition is its first declaration (a later `inline` would
 * come after a use the compiler may have seen) and begins with the
 * __global__ macro or with text of the file itself (not another macro,
 * whose expansion may begin with extern "C"). */
static long inline_at(const hkc_host_loops_job *job, const lkernel *k, CXCursor fn)
{
    if (!LC(clang_equalCursors)(LC(clang_getCanonicalCursor)(fn), fn))
        return -1;
    CXSourceLocation b = LC(clang_getRangeStart)(LC(clang_getCursorExtent)(fn));
    unsigned eoff, soff;
    CXFile ef, sf;
    LC(clang_getExpansionLocation)(b, &ef, NULL, NULL, &eoff);
    LC(clang_getSpellingLocation)(b, &sf, NULL, NULL, &soff);
    if (ef != k->file || eoff >= job->tu_len)
        return -1;
    static const char g[] = "__global__";
    size_t gl = sizeof g - 1;
    int global = eoff + gl < job->tu_len && !memcmp(job->tu + eoff, g, gl) &&
                 !isalnum((unsigned char)job->tu[eoff + gl]) && job->tu[eoff + gl] != '_';
    return global || (sf == ef && soff == eoff) ? (long)eoff : -1;
}

static int split_kernel(const hkc_host_loops_job *job, CXCursor fn, const char *name, hkc_strbuf *ins,
                        unsigned *at, long *inl, char *why, size_t cap)
{
    lkernel k;
    memset(&k, 0, sizeof k);
    k.tu = job->tu;
    k.unit = LC(clang_Cursor_getTranslationUnit)(fn);
    k.file = LC(clang_getFile)(k.unit, "hipkit-loops.cpp");
    hkc_loops_tree(&k, fn);
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
        hkc_loops_analyze(&k);
    int ok = !k.why[0] && !k.oom;
    if (ok) {
        hkc_loops_emit(&k, name, job->name, ins);
        *at = k.n[k.body].end;
        *inl = job->parse_len ? inline_at(job, &k, fn) : -1; /* the table is where parse_len says */
    } else {
        snprintf(why, cap, "%s", k.oom ? "out of memory" : k.why);
    }
    hkc_loops_kernel_free(&k);
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

void hkc_host_loops_parse_early(const hkc_host_loops_job *job, void **index, void **unit)
{
    char why[256];
    CXIndex idx = hkc_loops_clang_ready() ? LC(clang_createIndex)(1, 0) : NULL;
    CXTranslationUnit tu = NULL;
    if (idx) {
        hkc_fault_reclaim(); /* clang_createIndex installed LLVM's crash handlers */
        tu = hkc_loops_parse(job, idx, why, sizeof why);
    }
    if (!tu && idx) {
        LC(clang_disposeIndex)(idx);
        idx = NULL;
    }
    *index = idx;
    *unit = tu;
}

void hkc_host_loops_parse_free(void *index, void *unit)
{
    if (unit)
        LC(clang_disposeTranslationUnit)(unit);
    if (index)
        LC(clang_disposeIndex)(index);
}

/* s as a C string literal, a piece per line of it. */
static void put_literal(hkc_strbuf *out, const char *s, size_t n)
{
    hkc_strbuf_puts(out, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            hkc_strbuf_puts(out, i + 1 < n ? "\\n\"\n\"" : "\\n");
        else if (c == '"' || c == '\\')
            hkc_strbuf_printf(out, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f)
            hkc_strbuf_append(out, s + i, 1);
        else
            hkc_strbuf_printf(out, "\\%03o", c);
    }
    hkc_strbuf_puts(out, "\"");
}

/* The module without loop versions (job->tu and a modes table of fibers
 * only) and the user's flags, for the fibers copies of the kernels split
 * without one (hipkit_host_loops.h, HK_HOST_FIBERS_UNIT). */
static void put_fibers_unit(const hkc_host_loops_job *job, hkc_strbuf *out)
{
    hkc_strbuf unit, flags;
    hkc_strbuf_init(&unit);
    hkc_strbuf_init(&flags);
    hkc_strbuf_append(&unit, job->tu, job->tu_len);
    hkc_strbuf_puts(&unit, "\nHK_HOST_MODES_BEGIN\n");
    for (int i = 0; i < job->nkernels; i++)
        hkc_strbuf_printf(&unit, "HK_HOST_MODE_FIBERS(\"%s\")\n",
                          job->kernels[i].uses_sync ? "HIPKIT_HOST_MODE=fibers" : "");
    hkc_strbuf_puts(&unit, "HK_HOST_MODES_END\n");
    for (int i = 0; i < job->nflags; i++)
        hkc_strbuf_append(&flags, job->flags[i], strlen(job->flags[i]) + 1);
    hkc_strbuf_puts(out, "HK_HOST_FIBERS_UNIT(\n");
    put_literal(out, unit.data, unit.len);
    hkc_strbuf_puts(out, ",\n");
    put_literal(out, flags.data, flags.len);
    hkc_strbuf_puts(out, ")\n");
    hkc_strbuf_free(&unit);
    hkc_strbuf_free(&flags);
}

/* The kernel table's lines (text, n bytes) to out, with the entry of each
 * kernel split without a fibers copy (split[i]) running its loop version
 * (HK_HOST_KERNEL_SPLIT); a split[i] whose line is not found is cleared. */
static void put_table(const hkc_host_loops_job *job, const char *text, size_t n, int *split,
                      hkc_strbuf *out)
{
    int *seen = calloc((size_t)job->nkernels + 1, sizeof *seen);
    while (n > 0) {
        const char *nl = memchr(text, '\n', n);
        size_t len = nl ? (size_t)(nl - text) + 1 : n;
        int done = 0;
        for (int i = 0; seen && i < job->nkernels && !done; i++) {
            const char *k = job->kernels[i].name;
            size_t kl = strlen(k);
            if (!split[i] || len != kl + 19 + (nl != NULL) || memcmp(text, "HK_HOST_KERNEL(", 15) ||
                memcmp(text + 15, k, kl) || memcmp(text + 15 + kl, ", 1)", 4))
                continue;
            hkc_strbuf_printf(out, "HK_HOST_KERNEL_SPLIT(%s)%s", k, nl ? "\n" : "");
            seen[i] = done = 1;
        }
        if (!done)
            hkc_strbuf_append(out, text, len);
        text += len;
        n -= len;
    }
    for (int i = 0; i < job->nkernels; i++)
        if (!seen || !seen[i])
            split[i] = 0;
    free(seen);
}

int hkc_host_loops_apply(const hkc_host_loops_job *job, hkc_strbuf *out)
{
    int n = job->nkernels, need = 0;
    for (int i = 0; i < n; i++)
        need |= job->kernels[i].uses_sync;
    size_t m = (size_t)(n ? n : 1);
    char (*why)[256] = calloc(m, sizeof *why);
    insertion *ins = calloc(2 * m, sizeof *ins);
    CXCursor *fns = calloc(m, sizeof *fns);
    int *loops = calloc(m, sizeof *loops), *split = calloc(m, sizeof *split);
    if (!why || !ins || !fns || !loops || !split) {
        free(why), free(ins), free(fns), free(loops), free(split);
        return HK_ENOMEM;
    }
    int nins = 0;
    char global[256] = "";
    CXIndex idx = NULL;
    CXTranslationUnit tu = NULL;
    if (need && job->off)
        snprintf(global, sizeof global, "HIPKIT_HOST_MODE=fibers");
    else if (need && !hkc_loops_clang_ready())
        snprintf(global, sizeof global, "%s", hkc_host_loops_status());
    /* excludeDeclarationsFromPCH: visiting the unit's top level then reads
     * the module's own declarations only, instead of loading every one of
     * the precompiled header's (a third of the analysis' time) */
    else if (need && job->pre_unit) {
        idx = job->pre_index;
        tu = job->pre_unit;
    } else if (need && !(idx = LC(clang_createIndex)(1, 0)))
        snprintf(global, sizeof global, "libclang cannot create an index");
    else if (need) {
        hkc_fault_reclaim(); /* clang_createIndex installed LLVM's crash handlers */
        tu = hkc_loops_parse(job, idx, global, sizeof global);
    }
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
            long inl = -1;
            loops[i] = split_kernel(job, fns[i], job->kernels[i].name, &ins[nins].text, &ins[nins].at,
                                    &inl, why[i], sizeof why[i]);
            if (!loops[i]) {
                hkc_strbuf_free(&ins[nins].text);
                continue;
            }
            nins++;
            /* The kernel itself `inline`: with its table entry running the
             * loop version, nothing calls it and the compiler emits no
             * code for it (a fibers copy costs a compile as much as its
             * loop version: docs/RESULTS.md) */
            if (inl >= 0) {
                ins[nins].at = (unsigned)inl;
                hkc_strbuf_init(&ins[nins].text);
                hkc_strbuf_puts(&ins[nins].text, "inline ");
                nins++;
                split[i] = 1;
            }
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
    size_t table = job->parse_len > copied ? job->parse_len : job->tu_len;
    hkc_strbuf_append(out, job->tu + copied, table - copied);
    put_table(job, job->tu + table, job->tu_len - table, split, out);
    hkc_strbuf_puts(out, "\n");
    int nsplit = 0;
    for (int i = 0; i < n; i++) {
        nsplit += split[i];
        if (loops[i] && !split[i])
            hkc_strbuf_printf(out, "HK_HOST_LOOPS(%s)\n", job->kernels[i].name);
    }
    hkc_strbuf_puts(out, "HK_HOST_MODES_BEGIN\n");
    for (int i = 0; i < n; i++) {
        if (loops[i]) {
            hkc_strbuf_printf(out, "HK_HOST_MODE_%s(%s)\n", split[i] ? "SPLIT" : "LOOPS",
                              job->kernels[i].name);
            continue;
        }
        hkc_strbuf_puts(out, "HK_HOST_MODE_FIBERS(\"");
        put_escaped(out, !job->kernels[i].uses_sync ? "" : global[0] ? global : why[i]);
        hkc_strbuf_puts(out, "\")\n");
    }
    hkc_strbuf_puts(out, "HK_HOST_MODES_END\n");
    if (nsplit)
        put_fibers_unit(job, out);
    free(why), free(ins), free(fns), free(loops), free(split);
    return out->oom ? HK_ENOMEM : 0;
}

#else /* no clang-c/Index.h when hipkit was built */

const char *hkc_host_loops_status(void)
{
    return "hipkit was built without libclang's header (clang-c/Index.h, Debian libclang-15-dev)";
}

int hkc_host_loops_build_pch(const char *include, const char *const *flags, int nflags,
                             const char *out)
{
    (void)include, (void)flags, (void)nflags, (void)out;
    return -1; /* no libclang: nothing is parsed */
}

void hkc_host_loops_parse_early(const hkc_host_loops_job *job, void **index, void **unit)
{
    (void)job;
    *index = *unit = NULL;
}

void hkc_host_loops_parse_free(void *index, void *unit)
{
    (void)index, (void)unit;
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
