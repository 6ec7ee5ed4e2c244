/* `hipkit compile --plugin FAMILY FILE.hip... [-o OUT.c] [--targets
 * BACKEND:TARGET,...] [--symbol NAME]`: a plugin's ahead-of-time images, in
 * one step. Each FILE is compiled for every target as the plugin loader
 * would compile it (module "plugin-FAMILY-BASENAME", default options), and
 * OUT.c (default FAMILY_images.c) gets the table of hk_plugin_image that
 * the plugin hands to hk_plugin_add_images (named hk_FAMILY_images unless
 * --symbol says otherwise), each image tagged with its source key so the
 * loader ignores it once the source changes (docs/plugins.md).
 *
 * Without --targets, the targets this hipkit was configured with
 * (HKL_AOT_TARGETS, as hipkit-plugin.pc's aot_targets says); a target whose
 * backend cannot compile here is then skipped with a note. Named targets
 * must all build. An empty list writes an empty table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aot_image.h"
#include "cli.h"
#include "file_read.h"

#ifndef HKL_AOT_TARGETS
#define HKL_AOT_TARGETS ""
#endif

#define MAX_FILES 64

#define USAGE                                                                                     \
    "usage: hipkit compile --plugin FAMILY FILE.hip... [-o OUT.c] [--targets "                    \
    "BACKEND:TARGET,...] [--symbol NAME]\n"

typedef struct plugin_job {
    const char *family, *out, *targets, *symbol;
    const char *files[MAX_FILES];
    int nfiles;
} plugin_job;

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void put_cstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* One image as a static array; entries go to the table at the end. */
static void put_image(FILE *f, int n, const unsigned char *data, size_t size)
{
    fprintf(f, "static const unsigned char image%d[] __attribute__((aligned(16))) = {", n);
    for (size_t i = 0; i < size; i++)
        fprintf(f, "%s%u", i % 24 ? "," : (i ? ",\n    " : "\n    "), data[i]);
    fputs("\n};\n", f);
}

/* Compiles every file for every target into f; the table's entries go to
 * entries (as C text). Returns the exit status. */
static int build_images(hk_context *ctx, const plugin_job *job, FILE *f, FILE *entries, int *count)
{
    int defaults = job->targets == NULL;
    const char *list = defaults ? HKL_AOT_TARGETS : job->targets;
    for (int fi = 0; fi < job->nfiles; fi++) {
        char *source = NULL;
        int e = hkl_file_read(job->files[fi], &source, NULL);
        if (e != 0) {
            fprintf(stderr, "hipkit compile: cannot read '%s': %s\n", job->files[fi], strerror(-e));
            return 1;
        }
        const char *src_name = base_name(job->files[fi]);
        char module[512];
        snprintf(module, sizeof module, "plugin-%s-%s", job->family, src_name);
        for (const char *p = list; *p;) {
            size_t len = strcspn(p, ",");
            char bt[256];
            snprintf(bt, sizeof bt, "%.*s", (int)(len < sizeof bt ? len : sizeof bt - 1), p);
            p += len + (p[len] == ',');
            char *colon = strchr(bt, ':');
            if (!bt[0])
                continue;
            if (!colon || colon == bt || !colon[1]) {
                fprintf(stderr, "hipkit compile: target '%s' is not BACKEND:TARGET (host:x86_64, "
                                "cuda:sm_90, hip:gfx90a)\n", bt);
                free(source);
                return 2;
            }
            *colon = 0;
            void *code;
            size_t size;
            char *tag;
            int r = hkl_aot_image(ctx, bt, colon + 1, module, source, &code, &size, &tag);
            if (r != 0 && defaults && (r == HK_ENOTFOUND || r == HK_EUNSUPPORTED)) {
                fprintf(stderr, "hipkit compile: note: no %s %s image of %s: %s\n", bt, colon + 1,
                        src_name, hk_errmsg(ctx));
                continue;
            }
            if (r != 0) {
                fprintf(stderr, "hipkit compile: %s (%s %s): %s\n", job->files[fi], bt, colon + 1,
                        hk_errmsg(ctx));
                free(source);
                return r == HK_EINVAL ? 2 : 1;
            }
            put_image(f, *count, code, size);
            fputs("    {", entries);
            const char *fields[] = {src_name, bt, colon + 1, tag};
            for (int i = 0; i < 4; i++) {
                put_cstr(entries, fields[i]);
                fputs(", ", entries);
            }
            fprintf(entries, "image%d, %zu},\n", *count, size);
            printf("  %s: %s %s, %zu bytes\n", src_name, bt, colon + 1, size);
            ++*count;
            free(code);
            free(tag);
        }
        free(source);
    }
    return 0;
}

/* Writes OUT.c through a temporary file renamed into place, so a failed
 * run never leaves a half table for the build to compile. */
static int write_table(const plugin_job *job)
{
    char tmp[4096], sym[256];
    snprintf(tmp, sizeof tmp, "%s.tmp", job->out);
    snprintf(sym, sizeof sym, "hk_%s_images", job->family);
    const char *symbol = job->symbol ? job->symbol : sym;
    FILE *f = fopen(tmp, "w"), *entries = tmpfile();
    if (!f || !entries) {
        fprintf(stderr, "hipkit compile: cannot write %s: %s\n", tmp, strerror(errno));
        if (f)
            fclose(f);
        if (entries)
            fclose(entries);
        return 1;
    }
    fprintf(f, "/* generated by `hipkit compile --plugin %s`; do not edit */\n"
               "#include <hipkit/plugin.h>\n", job->family);
    char why[1024];
    hk_context *ctx = hkl_aot_context(why, sizeof why);
    int count = 0, rc = 1;
    if (!ctx)
        fprintf(stderr, "hipkit compile: no hipkit context: %s\n", why);
    else
        rc = build_images(ctx, job, f, entries, &count);
    hk_context_destroy(ctx);
    fprintf(f, "extern const hk_plugin_image %s[];\nconst hk_plugin_image %s[] = {\n", symbol,
            symbol);
    rewind(entries);
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, entries)) > 0;)
        fwrite(buf, 1, n, f);
    fputs("    {NULL, NULL, NULL, NULL, NULL, 0}\n};\n", f);
    fclose(entries);
    if (fclose(f) != 0 && rc == 0) {
        fprintf(stderr, "hipkit compile: cannot write %s: %s\n", tmp, strerror(errno));
        rc = 1;
    }
    if (rc == 0 && rename(tmp, job->out) != 0) {
        fprintf(stderr, "hipkit compile: cannot write %s: %s\n", job->out, strerror(errno));
        rc = 1;
    }
    if (rc != 0)
        unlink(tmp);
    else
        printf("wrote %s: %d image%s (%s)\n", job->out, count, count == 1 ? "" : "s", symbol);
    return rc;
}

static int valid_name(const char *n)
{
    if (!n[0] || strlen(n) > 64)
        return 0;
    for (; *n; n++)
        if (!((*n >= 'a' && *n <= 'z') || (*n >= '0' && *n <= '9') || *n == '_'))
            return 0;
    return 1;
}

int hkl_cmd_compile_plugin(int argc, char **argv)
{
    plugin_job job;
    memset(&job, 0, sizeof job);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "--plugin")    ? &job.family
                            : !strcmp(a, "-o")        ? &job.out
                            : !strcmp(a, "--targets") ? &job.targets
                            : !strcmp(a, "--symbol")  ? &job.symbol
                                                      : NULL;
        if (slot && i + 1 >= argc) {
            fprintf(stderr, "hipkit compile: '%s' needs a value\n%s", a, USAGE);
            return 2;
        }
        if (slot)
            *slot = argv[++i];
        else if (a[0] == '-') {
            fprintf(stderr, "hipkit compile: unknown option '%s' with --plugin\n%s", a, USAGE);
            return 2;
        } else if (job.nfiles == MAX_FILES) {
            fprintf(stderr, "hipkit compile: more than %d sources\n", MAX_FILES);
            return 2;
        } else
            job.files[job.nfiles++] = a;
    }
    if (!job.family || !job.nfiles) {
        fputs(USAGE, stderr);
        return 2;
    }
    if (!valid_name(job.family)) {
        fprintf(stderr, "hipkit compile: family '%s' is not [a-z0-9_]+\n", job.family);
        return 2;
    }
    char out[512];
    if (!job.out) {
        snprintf(out, sizeof out, "%s_images.c", job.family);
        job.out = out;
    }
    /* a source is named by its file's base name, which must be unique */
    for (int i = 0; i < job.nfiles; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(base_name(job.files[i]), base_name(job.files[j]))) {
                fprintf(stderr, "hipkit compile: '%s' and '%s' would both be source '%s'\n",
                        job.files[j], job.files[i], base_name(job.files[i]));
                return 2;
            }
    for (int i = 0; i < job.nfiles; i++)
        if (access(job.files[i], R_OK) != 0) {
            fprintf(stderr, "hipkit compile: cannot read '%s': %s\n", job.files[i],
                    strerror(errno));
            return 1;
        }
    return write_table(&job);
}
