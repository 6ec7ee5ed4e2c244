/* Finding the kernels in HIP source text: their names, parameter lists,
 * lines, linkage and whether they may synchronise. */
#ifndef HKC_SOURCE_SCAN_H
#define HKC_SOURCE_SCAN_H

#include "signature.h"
#include "strbuf.h"

/* One __global__ function found in source text. */
typedef struct hkc_source_kernel {
    char *name;        /* `kern`, `ns::kern` or an instantiation `ns::reduce<float, 256>`
                        * (name_expr.h's spelling) */
    char *lower_as;    /* an instantiation with its default arguments written out, given
                        * to compilers that lower names (hiprtc 5 lowers no other), or
                        * NULL: the name */
    char *symbol;      /* the compiler's symbol for name when it mangles it (set after
                        * the compile by backends that say so), or NULL */
    hkc_signature sig;
    int line;          /* 1-based line of the declaration */
    int extern_c;      /* declared extern "C" (its symbol name is unmangled) */
    int uses_sync;     /* may reach a barrier or warp operation: see below */
    char *unresolved;  /* why its parameter types are unknown (sig empty), or NULL */
    int by_value_class; /* unresolved: a struct or class by value, which no signature
                         * describes (launches pass scalars, vectors and pointers) */
    int overloaded;    /* unresolved: another kernel of the source has the same name;
                        * no backend's table or name lookup can tell them apart */
    unsigned max_threads; /* `__launch_bounds__(N, ...)`'s N where the scan can evaluate
                           * it (a constant once macros are expanded), else 0 */
} hkc_source_kernel;

/* Finds the __global__ function definitions in HIP source (comments, string
 * literals and preprocessor lines are skipped). A kernel in a namespace is
 * named `ns::kern`; a kernel template is listed only as the instantiations
 * hkc_source_scan_instances is asked for. uses_sync is conservative: set when the kernel's body, or any
 * text outside every __global__ body (device helpers, macros), mentions
 * __syncthreads, __syncwarp, a __shfl*, __ballot, __any, __all, __activemask
 * or __reduce_*; `extra_text` (headers the source includes, may be NULL) is
 * scanned as outside text too. typedef and using aliases of the source are
 * resolved in parameter lists (type_alias.h). A kernel whose pointer
 * parameter names a pointee type that is neither C's, HIP's, nor a struct of
 * the source is kept with `unresolved` saying why: it needs a signature from
 * the user. Returns 0, HK_ENOMEM, or HK_EINVAL with a message naming the
 * kernel and line when a parameter list does not parse. */
int hkc_source_scan(const char *src, const char *extra_text,
                    hkc_source_kernel **out, int *count, hkc_strbuf *err);
/* As hkc_source_scan, and each of `instantiate_names` (`reduce<float, 256>`,
 * `ns::scale<double>`) added as a kernel whose parameter types are its
 * template's with the arguments (or defaults) put in (a name that is no
 * template of the source, or whose arguments do not fit, fails with
 * HK_EINVAL saying so); and the module variables the source defines at
 * namespace scope (__device__, __constant__, __managed__; by qualified
 * name, malloc'd strings) into *globals when it is not NULL. */
int hkc_source_scan_all(const char *src, const char *extra_text,
                        const char *const *instantiate_names, int ninstantiate,
                        hkc_source_kernel **out, int *count, char ***globals, int *nglobals,
                        hkc_strbuf *err);
void hkc_source_globals_free(char **globals, int count);

/* The name a compiler that lowers names is given for k. */
static inline const char *hkc_lowering_name(const hkc_source_kernel *k)
{
    return k->lower_as ? k->lower_as : k->name;
}
/* How many of a scan's kernels a backend compiles into its kernel table:
 * the scan puts the overloaded ones last. */
static inline int hkc_source_launchable(const hkc_source_kernel *k, int count)
{
    while (count > 0 && k[count - 1].overloaded)
        count--;
    return count;
}

void hkc_source_kernels_free(hkc_source_kernel *k, int count);

#endif
