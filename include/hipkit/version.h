/* hipkit version numbers. meson reads these with cc.get_define(), so this
 * header is the one place they live. */
#ifndef HIPKIT_VERSION_H
#define HIPKIT_VERSION_H

#define HK_VERSION_MAJOR 0
#define HK_VERSION_MINOR 1
#define HK_VERSION_PATCH 0
#define HK_VERSION_STRING "0.1.0"

/* Plugin ABI: a plugin built for the same major and an older or equal minor
 * loads; anything else is refused. */
#define HK_ABI_VERSION_MAJOR 1
#define HK_ABI_VERSION_MINOR 9

/* Bumped whenever the layout of an on-disk cache entry or its key changes. */
#define HK_CACHE_FORMAT_VERSION 1

#endif
