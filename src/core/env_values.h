/* The environment variables hipkit reads as a number or a flag, parsed
 * strictly and in one place: a reader and the check a context makes at
 * creation (which warns about a value it cannot take) agree on what a value
 * means. */
#ifndef HKC_ENV_VALUES_H
#define HKC_ENV_VALUES_H

struct hk_context;

/* name's value as a whole decimal number in [min, max]; dflt when it is
 * unset, empty, or anything else (the context's check said so). */
long hkc_env_long(const char *name, long min, long max, long dflt);

/* name's value as a flag: 1 for 1/on/yes/true, 0 for 0/off/no/false; dflt
 * when unset, empty or anything else. */
int hkc_env_flag(const char *name, int dflt);

/* name's value as one of words (NULL-terminated): its index; dflt when
 * unset, empty or none of them. */
int hkc_env_word(const char *name, const char *const *words, int dflt);

/* Warns (hkc_warn) about each of hipkit's variables set to a value its
 * reader cannot take, saying what the reader uses instead. */
void hkc_env_check(const struct hk_context *ctx);

/* HIPKIT_HOST_MODE's words, in the order hkc_env_word numbers them. */
extern const char *const hkc_host_mode_words[];
enum { HKC_HOST_MODE_AUTO, HKC_HOST_MODE_LOOPS, HKC_HOST_MODE_FIBERS };

#endif
