/* Byte sizes written by people: "4096", "512M", "1.5 GiB" (size.c). One
 * grammar for HIPKIT_CACHE_MAX and the hipkit program's arguments. */
#ifndef HKC_SIZE_H
#define HKC_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Parses text as hk_size_parse documents (include/hipkit/hipkit.h): 0 and
 * *bytes set, or HK_EINVAL or HK_ERANGE with *bytes untouched and why (cap
 * bytes) saying what is wrong without quoting text: the caller names where
 * it came from. */
int hkc_size_parse(const char *text, uint64_t *bytes, char *why, size_t cap);

#endif
