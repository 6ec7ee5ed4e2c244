/* Strict parses of hipkit's numeric and flag environment variables, and the
 * check at context creation (env_values.h). A value the reader cannot take
 * used to be taken as something else in silence: HIPKIT_HOST_THREADS=lots
 * ran on every core, HIPKIT_HOST_MODE=fiberz in loop mode. */
#include "env_values.h"

#include "backend.h"
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const hkc_host_mode_words[] = {[HKC_HOST_MODE_AUTO] = "auto", [HKC_HOST_MODE_LOOPS] = "loops",
                                           [HKC_HOST_MODE_FIBERS] = "fibers", NULL};

static const char *value_of(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* 1 with *out set when v is a whole decimal number in [min, max]. */
static int parse_long(const char *v, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < min || x > max)
        return 0;
    *out = x;
    return 1;
}

static const char *const flag_words[] = {"0", "off", "no", "false", "1", "on", "yes", "true", NULL};

/* 0 or 1, or -1 when v is no flag word. */
static int parse_flag(const char *v)
{
    for (int i = 0; flag_words[i]; i++)
        if (!strcasecmp(v, flag_words[i]))
            return i >= 4;
    return -1;
}

static int parse_word(const char *v, const char *const *words)
{
    for (int i = 0; words[i]; i++)
        if (!strcmp(v, words[i]))
            return i;
    return -1;
}

long hkc_env_long(const char *name, long min, long max, long dflt)
{
    const char *v = value_of(name);
    long x;
    return v && parse_long(v, min, max, &x) ? x : dflt;
}

int hkc_env_flag(const char *name, int dflt)
{
    const char *v = value_of(name);
    int f = v ? parse_flag(v) : -1;
    return f >= 0 ? f : dflt;
}

int hkc_env_word(const char *name, const char *const *words, int dflt)
{
    const char *v = value_of(name);
    int w = v ? parse_word(v, words) : -1;
    return w >= 0 ? w : dflt;
}

/* What each variable takes, for the check. HIPKIT_DEVICE is not here: a bad
 * one fails the context (context.c), as a device that does not exist does;
 * HIPKIT_CACHE and HIPKIT_CACHE_MAX are checked where the cache opens. */
typedef enum { ENV_COUNT, ENV_FLAG, ENV_WORD } env_kind;

typedef struct env_var {
    const char *name;
    env_kind kind;
    long min, max;            /* ENV_COUNT */
    const char *const *words; /* ENV_WORD */
    const char *otherwise;    /* what the reader uses instead */
} env_var;

static const env_var vars[] = {
    {"HIPKIT_HOST_THREADS", ENV_COUNT, 1, 4096, NULL, "one worker a core"},
    {"HIPKIT_HOST_STACK", ENV_COUNT, 16, 1L << 20, NULL, "128 KiB a fiber"},
    {"HIPKIT_HOST_MODE", ENV_WORD, 0, 0, hkc_host_mode_words, "auto"},
    {"HIPKIT_EARLY_START", ENV_FLAG, 0, 0, NULL, "on"},
    {"HIPKIT_PLUGIN_AOT", ENV_FLAG, 0, 0, NULL, "on"},
    {"HIPKIT_DEFER_CHECKS", ENV_FLAG, 0, 0, NULL, "the backend's default"},
    {"HIPKIT_CHECK", ENV_FLAG, 0, 0, NULL, "off"},
    {"HIPKIT_HOST_PCH", ENV_FLAG, 0, 0, NULL, "on"},
};

void hkc_env_check(const hk_context *ctx)
{
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const env_var *e = &vars[i];
        const char *v = value_of(e->name);
        long x;
        if (!v)
            continue;
        if (e->kind == ENV_COUNT && !parse_long(v, e->min, e->max, &x))
            hkc_warn(ctx, "%s=%s is not a whole number from %ld to %ld; using %s", e->name, v,
                     e->min, e->max, e->otherwise);
        else if (e->kind == ENV_FLAG && parse_flag(v) < 0)
            hkc_warn(ctx, "%s=%s is not 0 or 1 (nor off/on, no/yes, false/true); using %s", e->name,
                     v, e->otherwise);
        else if (e->kind == ENV_WORD && parse_word(v, e->words) < 0) {
            char list[128] = "";
            for (int w = 0; e->words[w]; w++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", w ? ", " : "",
                         e->words[w]);
            hkc_warn(ctx, "%s=%s is none of %s; using %s", e->name, v, list, e->otherwise);
        }
    }
}
