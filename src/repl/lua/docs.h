/* The `hk` API's reference entries (docs.c), which help() prints and
 * docs/lua-api.md's reference is generated from. */
#ifndef HKL_DOCS_H
#define HKL_DOCS_H

typedef struct hkl_doc {
    const char *section;
    const char *name;      /* "hk.alloc", "hk.cache.dir", "b:fill" (buffer),
                            * "m:kernels" (module), "k:launch" (kernel), "help" */
    const char *signature;
    const char *doc;       /* one line */
} hkl_doc;

/* Ends with an entry whose name is NULL. */
extern const hkl_doc hkl_docs[];

#endif
