/* hk_size_parse: the one grammar of byte sizes (HIPKIT_CACHE_MAX and
 * `hipkit cache prune MAX`), through the public API only. */
#include <stdint.h>
#include <string.h>

#include "hipkit/hipkit.h"
#include "tap.h"

#define KIB ((uint64_t)1 << 10)
#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
#define TIB ((uint64_t)1 << 40)

static void accepts(const char *text, uint64_t want)
{
    uint64_t got = 12345;
    int rc = hk_size_parse(text, &got);
    tap_ok(rc == 0 && got == want, "'%s' is %llu bytes (rc %d, got %llu)", text,
           (unsigned long long)want, rc, (unsigned long long)got);
}

/* A refusal leaves *bytes alone and says why in hk_errmsg(NULL): HK_ERANGE
 * for too many bytes, else HK_EINVAL. */
static void refuses(const char *text, const char *why)
{
    uint64_t got = 12345;
    int rc = hk_size_parse(text, &got);
    const char *msg = hk_errmsg(NULL);
    int want = strcmp(why, "2^64") == 0 ? HK_ERANGE : HK_EINVAL;
    int ok = rc == want && got == 12345 && strstr(msg, why) != NULL;
    tap_ok(ok, "'%s' refused: %s", text ? text : "(null)", msg);
    if (!ok)
        tap_diag("rc %d, bytes %llu, wanted a message with \"%s\"", rc, (unsigned long long)got, why);
}

int main(void)
{
    tap_init();

    /* Both former grammars: the cache's digits with K, M or G... */
    accepts("4096", 4096);
    accepts("0", 0);
    accepts("12K", 12 * KIB);
    accepts("3m", 3 * MIB);
    accepts("2G", 2 * GIB);
    /* ...and the program's fractions, T and the iB spellings. */
    accepts("1.5G", 3 * GIB / 2);
    accepts("512MiB", 512 * MIB);
    accepts("2 GiB", 2 * GIB);
    accepts("1t", TIB);
    accepts("64kib", 64 * KIB);
    accepts("100B", 100);
    accepts("0.5K", 512);
    /* A fraction is rounded down to whole bytes, exactly. */
    accepts("0.3K", 307);
    accepts("1.0009765625K", 1025);
    accepts("18446744073709551615", UINT64_MAX);
    accepts("16777215.999999999999T", UINT64_MAX - 1);
    accepts("16777215.9999999999999999999999T", UINT64_MAX);

    refuses(NULL, "empty");
    refuses("", "empty");
    refuses("lots", "starts with a digit");
    refuses("-5", "starts with a digit");
    refuses(" 5", "starts with a digit");
    refuses(".5G", "starts with a digit");
    refuses("12Q", "unknown unit 'Q'");
    refuses("5Kx", "unknown unit 'Kx'");
    refuses("12KB", "ambiguous");
    refuses("2.5 GB", "ambiguous");
    refuses("2.5", "a fraction of a byte");
    refuses("3.5B", "a fraction of a byte");
    refuses("1.G", "a digit must follow");
    refuses("18446744073709551616", "2^64");
    refuses("99999999999999999999G", "2^64");
    refuses("16777216T", "2^64");
    refuses("12Q", "bad size '12Q'");

    uint64_t *none = NULL;
    tap_ok(hk_size_parse("1K", none) == HK_EINVAL, "a NULL result pointer is HK_EINVAL");
    return tap_done();
}
