/* Barrier regions as loops: the loop-mode versions of a module's kernels,
 * written from clang's AST of the translation unit (host_loops.c), and the
 * table saying how each kernel runs (hk_host_kernel_modes). */
#ifndef HKC_HOST_LOOPS_H
#define HKC_HOST_LOOPS_H

#include "source_scan.h"
#include "strbuf.h"

typedef struct hkc_host_loops_job {
    const char *name;     /* the module's name, for #line */
    const char *tu;       /* the translation unit host_source.c wrote */
    size_t tu_len;
    size_t parse_len; /* what libclang parses: tu without the kernel table (0: all) */
    const char *include;  /* hipkit's header folder */
    const char *const *flags; /* the user's flags: -D, -U, -I are passed on */
    int nflags;
    const struct hkc_source_kernel *kernels; /* in kernel table order */
    int nkernels;
    int off; /* loop mode is off: only the modes table, saying so */
    const char *pch; /* libclang's precompiled hip_runtime.h for these flags, or NULL */
    /* a parse of tu made beforehand (hkc_host_loops_parse_early), taken over
     * and disposed of by hkc_host_loops_apply; NULL: it parses */
    void *pre_index, *pre_unit;
} hkc_host_loops_job;

/* Parses job's unit as hkc_host_loops_apply would (libclang's index and
 * unit into *index and *unit, both NULL when it cannot): kernel discovery's
 * preprocessor runs meanwhile (host_compile.c). Any thread. */
void hkc_host_loops_parse_early(const hkc_host_loops_job *job, void **index, void **unit);
/* Disposes of what hkc_host_loops_parse_early made. */
void hkc_host_loops_parse_free(void *index, void *unit);

/* Writes into out the translation unit with a loop-mode version after each
 * kernel the transform can prove safe, and the modes table at the end
 * (every kernel: its loop version, or why it has none). Never fails for a
 * kernel it cannot split: that kernel keeps its fibers and the reason. 0,
 * or HK_ENOMEM. */
int hkc_host_loops_apply(const hkc_host_loops_job *job, hkc_strbuf *out);

/* Writes at out libclang's precompiled hip_runtime.h (from the folder
 * include, with the user's -D/-U/-I among flags), the headers' text
 * embedded so that it outlives that folder. 0, or -1 (libclang missing, a
 * parse or save failure). */
int hkc_host_loops_build_pch(const char *include, const char *const *flags, int nflags,
                             const char *out);

/* "libclang-15.so.1", or why loop mode is unavailable ("not found ..."). */
const char *hkc_host_loops_status(void);

#endif
