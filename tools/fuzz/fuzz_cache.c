/* libFuzzer target: the compile cache's entry reader. Each input is written
 * as the file of one entry, then read back through hkc_cache_get, which must
 * reject (and remove) every bad one. Bytes 32..47 are set to the entry's
 * key, so inputs get past the key check to the length and checksum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

static hkc_cache *cache;
static hkc_cache_entry_id id;
static char path[4096];

static void setup(void)
{
    char dir[] = "/tmp/hk-fuzz-cache-XXXXXX";
    if (!mkdtemp(dir))
        abort();
    setenv("HIPKIT_CACHE_DIR", dir, 1);
    setenv("HIPKIT_CACHE", "rw", 1);
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    cache = hkc_cache_open(&warn);
    hkc_key_builder *kb = hkc_key_begin();
    hkc_key_add_str(kb, "fuzz", "entry");
    id = (hkc_cache_entry_id){"fuzz-sub", "entry", "co", hkc_key_end(kb)};
    hkc_cache_put(cache, &id, "seed", 4, &warn); /* makes the folder */
    hkc_strbuf_free(&warn);
    char hex[33];
    hkc_key_hex(&id.key, hex);
    snprintf(path, sizeof path, "%s/fuzz-sub/entry-%s.co", hkc_cache_dir(cache), hex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!cache)
        setup();
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    if (size >= 48)
        memcpy(copy + 32, id.key.bytes, 16);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(copy, 1, size, f);
        fclose(f);
    }
    free(copy);
    void *out = NULL;
    size_t n = 0;
    hkc_strbuf warn;
    hkc_strbuf_init(&warn);
    if (hkc_cache_get(cache, &id, &out, &n, &warn))
        free(out);
    hkc_strbuf_free(&warn);
    return 0;
}
