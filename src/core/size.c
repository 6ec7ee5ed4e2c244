/* Byte sizes written by people, for HIPKIT_CACHE_MAX and the hipkit
 * program (`hipkit cache prune 512M`).
 *
 * Units are powers of 1024 only. "KB", "MB", ... are refused rather than
 * guessed: half the tools that print them mean 1000, the other half 1024,
 * and a cache cap 7% off is a surprise nobody asks for. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "size.h"

/* The unit after the number: its power of 1024 (0 for bytes), or -1 with
 * the reason in why. A unit ends the text. */
static int unit_shift(const char *u, char *why, size_t cap)
{
    static const char letters[] = "KMGT";
    if (*u == '\0' || ((*u == 'b' || *u == 'B') && u[1] == '\0'))
        return 0;
    char c = (char)(*u >= 'a' && *u <= 'z' ? *u - 'a' + 'A' : *u);
    const char *p = c ? strchr(letters, c) : NULL;
    if (p != NULL) {
        int shift = 10 * (int)(p - letters + 1);
        if (u[1] == '\0')
            return shift;
        if ((u[1] == 'i' || u[1] == 'I') && (u[2] == 'b' || u[2] == 'B') && u[3] == '\0')
            return shift;
        if ((u[1] == 'b' || u[1] == 'B') && u[2] == '\0') {
            snprintf(why, cap, "'%s' is ambiguous (1000 or 1024?): write %c or %ciB for 1024", u, c, c);
            return -1;
        }
    }
    snprintf(why, cap, "unknown unit '%s' (B, or K, M, G, T alone or with iB: powers of 1024)", u);
    return -1;
}

int hkc_size_parse(const char *text, uint64_t *bytes, char *why, size_t cap)
{
    if (text == NULL || *text == '\0') {
        snprintf(why, cap, "empty");
        return HK_EINVAL;
    }
    if (*text < '0' || *text > '9') {
        snprintf(why, cap, "a size starts with a digit");
        return HK_EINVAL;
    }
    /* The whole part exactly, in integers: doubles lose bytes past 2^53. */
    uint64_t whole = 0;
    int overflow = 0;
    const char *s = text;
    for (; *s >= '0' && *s <= '9'; s++) {
        overflow |= whole > (UINT64_MAX - (uint64_t)(*s - '0')) / 10;
        whole = whole * 10 + (uint64_t)(*s - '0');
    }
    const char *frac = NULL, *frac_end = NULL;
    if (*s == '.') {
        frac = ++s;
        while (*s >= '0' && *s <= '9')
            s++;
        frac_end = s;
        if (frac == frac_end) {
            snprintf(why, cap, "a digit must follow the '.'");
            return HK_EINVAL;
        }
    }
    while (*s == ' ' || *s == '\t')
        s++;
    int shift = unit_shift(s, why, cap);
    if (shift < 0)
        return HK_EINVAL;
    if (frac != NULL && shift == 0) {
        snprintf(why, cap, "a fraction of a byte");
        return HK_EINVAL;
    }
    /* The bytes of the fraction, rounded down, in integers (no strtod: it
     * reads the locale's decimal point): 0.d1d2..dk * 2^shift by Horner's
     * rule from the last digit, where flooring at every step floors the
     * whole. */
    uint64_t part = 0;
    for (const char *d = frac_end; frac != NULL && d > frac;) {
        d--;
        part = (((uint64_t)(*d - '0') << shift) + part) / 10;
    }
    /* part < 2^shift, so the sum fits whenever the whole part does. */
    if (overflow || whole > (UINT64_MAX >> shift)) {
        snprintf(why, cap, "more than 2^64 - 1 bytes");
        return HK_ERANGE;
    }
    *bytes = (whole << shift) + part;
    return 0;
}

HK_API int hk_size_parse(const char *text, uint64_t *bytes)
{
    char why[160];
    if (bytes == NULL)
        return hkc_fail(NULL, HK_EINVAL, "hk_size_parse: bytes is NULL");
    int rc = hkc_size_parse(text, bytes, why, sizeof why);
    if (rc != 0)
        return hkc_fail(NULL, rc, "bad size '%s': %s", text ? text : "(null)", why);
    return 0;
}
