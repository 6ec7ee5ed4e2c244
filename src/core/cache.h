/* The on-disk compile cache (layout in DESIGN.md and docs/cache.md).
 *
 * Key: a 128-bit XXH3 hash over everything that can change the code object.
 * Entry file: <dir>/<backend>-<target>-<toolchain-tag>/<name>-<key32hex>.<ext>,
 * holding a header (magic, format version, payload length, payload XXH3-64
 * checksum, the key) followed by the payload. Writes go to a temp file in the
 * same folder and are renamed into place; readers reject a bad header,
 * length or checksum (with a warning) and the caller recompiles. */
#ifndef HKC_CACHE_H
#define HKC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

typedef struct hkc_cache hkc_cache;

typedef struct hkc_cache_key {
    uint8_t bytes[16];
} hkc_cache_key;

/* Incremental key builder: every field is length-prefixed, so "ab"+"c" and
 * "a"+"bc" differ. */
typedef struct hkc_key_builder hkc_key_builder;
hkc_key_builder *hkc_key_begin(void);
void hkc_key_add(hkc_key_builder *kb, const char *label, const void *data, size_t n);
void hkc_key_add_str(hkc_key_builder *kb, const char *label, const char *s);
/* Finishes and frees kb. */
hkc_cache_key hkc_key_end(hkc_key_builder *kb);
/* 32 lowercase hex digits + NUL. */
void hkc_key_hex(const hkc_cache_key *k, char out[33]);

typedef enum hkc_cache_mode {
    HKC_CACHE_RW,
    HKC_CACHE_RO,
    HKC_CACHE_OFF,
    HKC_CACHE_MEMORY_ONLY, /* asked for rw/ro but the folder was refused */
} hkc_cache_mode;

/* Opens the cache as the environment says: HIPKIT_CACHE (off|ro|rw, default
 * rw), HIPKIT_CACHE_DIR, else $XDG_CACHE_HOME/hipkit, else ~/.cache/hipkit;
 * HIPKIT_CACHE_MAX (bytes, with optional K/M/G suffix; default 1G).
 * Never fails for a bad folder: a folder that cannot be created, is not a
 * directory, is owned by another user or is writable by group or others makes
 * the cache memory-only, and a warning saying which and why goes to `warn`.
 * Returns NULL only when out of memory. */
hkc_cache *hkc_cache_open(hkc_strbuf *warn);
struct stat;
/* Why a file or folder cannot be trusted with code hipkit will run or
 * load ("owned by another user", "writable by group or others"), or NULL.
 * The cache's rule; plugins also trust root's files (root_ok), since the
 * install folder is root's. */
const char *hkc_trust_problem(const struct stat *st, int root_ok);
void hkc_cache_close(hkc_cache *c);
hkc_cache_mode hkc_cache_mode_get(const hkc_cache *c);
const char *hkc_cache_mode_name(hkc_cache_mode m);
/* "" when memory-only or off. */
const char *hkc_cache_dir(const hkc_cache *c);

/* Identifies one entry. `sub` is the "<backend>-<target>-<toolchain>" folder
 * name (characters outside [A-Za-z0-9._-] are replaced by '_'; long names are
 * shortened with a hash), `name` the module name (sanitised the same way),
 * `ext` the code object extension without the dot. */
typedef struct hkc_cache_entry_id {
    const char *sub;
    const char *name;
    const char *ext;
    hkc_cache_key key;
} hkc_cache_entry_id;

/* Returns 1 and a malloc'd payload on a hit, 0 on a miss (including a bad
 * entry, which is removed and reported in `warn`), never an error: the cache
 * only ever saves time. Updates the entry's mtime (the LRU clock). c may be
 * NULL (no cache: a miss, and put stores nothing). */
int hkc_cache_get(hkc_cache *c, const hkc_cache_entry_id *id, void **data,
                  size_t *size, hkc_strbuf *warn);
/* hkc_cache_get for a large payload that goes to a file: on a hit (1) it is
 * written to fd (at its offset) without a copy in memory first, and its
 * length set in size; 0 otherwise (a write that fails: a warning, and 0;
 * fd may then hold part of it). */
int hkc_cache_get_into(hkc_cache *c, const hkc_cache_entry_id *id, int fd, size_t *size,
                       hkc_strbuf *warn);
/* Stores a payload (no-op unless mode is rw); write failures become a
 * warning. After writing, evicts least recently used entries (by mtime)
 * until the total is under the cap. */
void hkc_cache_put(hkc_cache *c, const hkc_cache_entry_id *id, const void *data,
                   size_t size, hkc_strbuf *warn);

typedef struct hkc_cache_usage {
    uint64_t entries, bytes, max_bytes;
} hkc_cache_usage;
int hkc_cache_usage_get(hkc_cache *c, hkc_cache_usage *out);
/* Removes every entry (files this cache wrote; other files are left). */
int hkc_cache_clear(hkc_cache *c, hkc_strbuf *err);
/* Evicts LRU entries until total <= max_bytes (0: the configured cap). */
int hkc_cache_prune(hkc_cache *c, uint64_t max_bytes, hkc_strbuf *err);

#endif
