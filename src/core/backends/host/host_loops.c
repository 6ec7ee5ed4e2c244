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
 *   itself); anything else keeps the fibers;
 * - a `return` marks the thread as returned: it skips every later region. */
#include "host_loops.h"

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
static int split_kernel(const hkc_host_loops_job *job, CXCursor fn, const char *name, hkc_strbuf *ins,
                        unsigned *at, char *why, size_t cap)
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
        snprintf(global, sizeof global, "HIPKIT_HOST_MODE=fibers");
    else if (need && !hkc_loops_clang_ready())
        snprintf(global, sizeof global, "%s", hkc_host_loops_status());
    /* excludeDeclarationsFromPCH: visiting the unit's top level then reads
     * the module's own declarations only, instead of loading every one of
     * the precompiled header's (a third of the analysis' time) */
    else if (need && !(idx = LC(clang_createIndex)(1, 0)))
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

int hkc_host_loops_build_pch(const char *include, const char *const *flags, int nflags,
                             const char *out)
{
    (void)include, (void)flags, (void)nflags, (void)out;
    return -1; /* no libclang: nothing is parsed */
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
