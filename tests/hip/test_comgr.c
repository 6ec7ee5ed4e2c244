/* comgr on code objects that hipcc builds here (no GPU needed): kernels,
 * arguments and resources from the metadata, disassembly, and malformed
 * input, which must give an error and never take the process down. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hip_comgr.h"
#include "../tap.h"

#define TILE 256 /* floats in reverse_shared's __shared__ array */
#define LONG_NAME_LEN 300

/* mixed's by-value parameters, in order; the last is its output. */
static const struct {
    const char *type;
    size_t size, align;
} mixed_params[] = {
    {"char", sizeof(char), _Alignof(char)},
    {"double", sizeof(double), _Alignof(double)},
    {"short", sizeof(short), _Alignof(short)},
    {"long long", sizeof(long long), _Alignof(long long)},
    {"float *", sizeof(float *), _Alignof(float *)},
};
#define NMIXED (sizeof mixed_params / sizeof mixed_params[0])

static char long_name[LONG_NAME_LEN + 1];

static void write_source(FILE *f)
{
    fprintf(f, "#include <hip/hip_runtime.h>\n"
               "extern \"C\" __global__ void vector_add(const float *a, const float *b, float *c, int n)\n"
               "{\n"
               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "    if (i < n)\n"
               "        c[i] = a[i] + b[i];\n"
               "}\n"
               "extern \"C\" __global__ void reverse_shared(float *d, int n)\n"
               "{\n"
               "    __shared__ float tile[%d];\n"
               "    int t = threadIdx.x;\n"
               "    tile[t] = d[t];\n"
               "    __syncthreads();\n"
               "    d[t] = tile[n - 1 - t];\n"
               "}\n",
            TILE);
    fprintf(f, "extern \"C\" __global__ void mixed(");
    for (size_t i = 0; i < NMIXED; i++)
        fprintf(f, "%s%s p%zu", i ? ", " : "", mixed_params[i].type, i);
    fprintf(f, ")\n{\n    p%zu[0] = 0", NMIXED - 1);
    for (size_t i = 0; i + 1 < NMIXED; i++)
        fprintf(f, " + p%zu", i);
    /* Reading the implicit arguments makes clang list them in the metadata;
     * at -O3 it drops them from kernels that do not. */
    fprintf(f, ";\n}\n"
               "extern \"C\" __global__ void implicit_user(unsigned *out)\n"
               "{\n"
               "    out[0] = *(const unsigned *)__builtin_amdgcn_implicitarg_ptr();\n"
               "}\n"
               "extern \"C\" __global__ void %s(int *p) { p[0] = 1; }\n",
            long_name);
}

static const char *find_hipcc(char *buf, size_t cap)
{
    if (access("/usr/bin/hipcc", X_OK) == 0)
        return "/usr/bin/hipcc";
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, cap, "%.*s/hipcc", (int)n, p);
        if (n && access(buf, X_OK) == 0)
            return buf;
        p += n + (p[n] == ':');
    }
    return NULL;
}

static int build(const char *hipcc, const char *dir, const char *arch, void **code, size_t *size)
{
    char cmd[4096], path[1024];
    snprintf(cmd, sizeof cmd,
             "'%s' --offload-arch=%s --offload-device-only --no-gpu-bundle-output -O3 -c "
             "'%s/k.hip' -o '%s/k.co' > '%s/log' 2>&1",
             hipcc, arch, dir, dir, dir);
    int rc = system(cmd);
    snprintf(path, sizeof path, "%s/%s", dir, rc == 0 ? "k.co" : "log");
    char *data = NULL;
    size_t n = 0;
    if (hkc_read_file(path, &data, &n) != 0)
        return -1;
    if (rc != 0) {
        tap_diag("hipcc for %s failed:\n%s", arch, data);
        free(data);
        return -1;
    }
    *code = data;
    *size = n;
    return 0;
}

static void free_entry(hk_code_entry *e)
{
    for (int i = 0; i < e->nkernels; i++)
        free(e->kernels[i].args);
    free(e->kernels);
    e->kernels = NULL;
    e->nkernels = 0;
}

static const hk_code_kernel *find_kernel(const hk_code_entry *e, const char *name)
{
    for (int i = 0; i < e->nkernels; i++)
        if (!strcmp(e->kernels[i].name, name))
            return &e->kernels[i];
    return NULL;
}

static int count_explicit(const hk_code_kernel *k)
{
    int n = 0;
    while (n < k->nargs && !k->args[n].hidden)
        n++;
    return n;
}

/* Hidden arguments come after the explicit ones, each "hidden_*". */
static int hidden_after(const hk_code_kernel *k, int explicit_n)
{
    uint32_t end = explicit_n ? k->args[explicit_n - 1].offset + k->args[explicit_n - 1].size : 0;
    for (int i = explicit_n; i < k->nargs; i++)
        if (!k->args[i].hidden || strncmp(k->args[i].value_kind, "hidden_", 7) ||
            k->args[i].offset < end)
            return 0;
    return 1;
}

static int vector_add_args_ok(const hk_code_kernel *k)
{
    static const uint32_t offset[] = {0, 8, 16, 24}, size[] = {8, 8, 8, 4};
    if (!k || count_explicit(k) != 4)
        return 0;
    for (int i = 0; i < 4; i++) {
        const hk_code_arg *a = &k->args[i];
        if (a->offset != offset[i] || a->size != size[i] ||
            strcmp(a->value_kind, i < 3 ? "global_buffer" : "by_value") ||
            strcmp(a->address_space, i < 3 ? "global" : "")) {
            tap_diag("vector_add arg %d: offset %u size %u kind '%s' space '%s'", i, a->offset,
                     a->size, a->value_kind, a->address_space);
            return 0;
        }
    }
    return 1;
}

static void check_gfx90a(const void *code, size_t size)
{
    hkc_strbuf err, out;
    hkc_strbuf_init(&err);
    hkc_strbuf_init(&out);
    hk_code_entry e;
    memset(&e, 0, sizeof e);
    int rc = hkc_hip_comgr_kernels(code, size, &e, &err);
    tap_ok(rc == 0 && e.nkernels == 5, "gfx90a: reads 5 kernels (rc %d, %d)%s%s", rc, e.nkernels,
           rc ? ": " : "", err.data);
    tap_ok(!strcmp(e.target, "gfx90a:sramecc+:xnack-"), "gfx90a: target '%s' without the triple",
           e.target);

    const hk_code_kernel *va = find_kernel(&e, "vector_add");
    tap_ok(va && !strcmp(va->symbol, "vector_add.kd"), "vector_add and its symbol vector_add.kd");
    tap_ok(vector_add_args_ok(va), "vector_add: 4 explicit args at 0,8,16,24 of 8,8,8,4 bytes, "
                                   "global_buffer in global, then by_value");
    tap_ok(va && hidden_after(va, 4) && va->kernarg_size >= 28 && va->kernarg_align >= 8,
           "vector_add: hidden args (%d) after them, kernarg %u bytes >= 28, align %u",
           va ? va->nargs - 4 : -1, va ? va->kernarg_size : 0, va ? va->kernarg_align : 0);
    tap_ok(va && va->wavefront_size == 64 && va->vgprs > 0 && va->sgprs > 0 && va->agprs >= 0 &&
               va->sgpr_spills == 0 && va->vgpr_spills == 0 && va->scratch_bytes == 0 &&
               va->max_flat_workgroup_size >= 256,
           "vector_add: wave64, %d vgprs, %d sgprs, %d agprs, no spills or scratch, max %u "
           "work-items",
           va ? va->vgprs : 0, va ? va->sgprs : 0, va ? va->agprs : 0,
           va ? va->max_flat_workgroup_size : 0);

    const hk_code_kernel *rs = find_kernel(&e, "reverse_shared");
    tap_ok(rs && rs->lds_bytes == TILE * sizeof(float), "reverse_shared: lds_bytes %u == %zu",
           rs ? rs->lds_bytes : 0, TILE * sizeof(float));

    const hk_code_kernel *mx = find_kernel(&e, "mixed");
    int good = mx && count_explicit(mx) == (int)NMIXED;
    size_t off = 0;
    for (size_t i = 0; good && i < NMIXED; i++) {
        off = (off + mixed_params[i].align - 1) / mixed_params[i].align * mixed_params[i].align;
        const hk_code_arg *a = &mx->args[i];
        if (a->offset != off || a->size != mixed_params[i].size ||
            strcmp(a->value_kind, i + 1 < NMIXED ? "by_value" : "global_buffer")) {
            tap_diag("mixed arg %zu (%s): offset %u want %zu, size %u", i, mixed_params[i].type,
                     a->offset, off, a->size);
            good = 0;
        }
        off += mixed_params[i].size;
    }
    tap_ok(good && mx->kernarg_size >= off, "mixed: offsets and sizes follow C layout (%zu bytes)",
           off);

    const hk_code_kernel *iu = find_kernel(&e, "implicit_user");
    tap_ok(iu && count_explicit(iu) == 1 && iu->nargs > 1 && hidden_after(iu, 1),
           "implicit_user: %d hidden args, after its pointer", iu ? iu->nargs - 1 : -1);

    const hk_code_kernel *ln = NULL;
    for (int i = 0; i < e.nkernels; i++)
        if (!strncmp(e.kernels[i].name, long_name, 32))
            ln = &e.kernels[i];
    tap_ok(ln && strlen(ln->name) == sizeof ln->name - 1 && !strncmp(ln->name, long_name, 255) &&
               strlen(ln->symbol) == sizeof ln->symbol - 1,
           "a %d-character name is truncated into name[%zu] and symbol[%zu]", LONG_NAME_LEN,
           sizeof ln->name, sizeof ln->symbol);

    rc = hkc_hip_comgr_disasm(code, size, "gfx90a:sramecc+:xnack-", NULL, &out);
    tap_ok(rc == 0 && strstr(out.data, "vector_add:") && strstr(out.data, "reverse_shared:") &&
               strstr(out.data, "mixed:") && strstr(out.data, "s_endpgm"),
           "disassembly of the whole object has every kernel and s_endpgm%s%.300s",
           rc ? ": " : "", rc ? out.data : "");

    hkc_strbuf_clear(&out);
    rc = hkc_hip_comgr_disasm(code, size, "gfx90a:sramecc+:xnack-", "vector_add", &out);
    tap_ok(rc == 0 && strstr(out.data, "vector_add") && strstr(out.data, "s_endpgm") &&
               strstr(out.data, "global_load_dword") && !strstr(out.data, "reverse_shared") &&
               !strstr(out.data, "mixed"),
           "disassembly of vector_add alone: its loads and s_endpgm, no other kernel");
    if (rc == 0)
        tap_diag("%.*s", (int)strcspn(out.data + 12, "\n"), out.data + 12); /* after "vector_add:\n" */

    char *one = hkc_strbuf_take(&out);
    rc = hkc_hip_comgr_disasm(code, size, NULL, "vector_add.kd", &out);
    tap_ok(rc == 0 && one && !strcmp(out.data, one),
           "the descriptor's name and no target (the metadata's) give the same text");
    free(one);

    hkc_strbuf_clear(&out);
    rc = hkc_hip_comgr_disasm(code, size, "gfx90a", "no_such_kernel", &out);
    tap_ok(rc == HK_ENOTFOUND && strstr(out.data, "no_such_kernel") &&
               strstr(out.data, "vector_add") && strstr(out.data, "reverse_shared"),
           "an unknown kernel: HK_ENOTFOUND listing the kernels (rc %d)", rc);
    tap_diag("%.120s", out.data);

    hkc_strbuf_clear(&out);
    rc = hkc_hip_comgr_disasm(code, size, "gfx000", NULL, &out);
    tap_ok(rc == HK_EBACKEND && strstr(out.data, "amd_comgr_create_disassembly_info"),
           "an unknown target: HK_EBACKEND naming the comgr call: %s", out.data);

    free_entry(&e);
    hkc_strbuf_free(&err);
    hkc_strbuf_free(&out);
}

static void check_gfx1030(const void *code, size_t size)
{
    hkc_strbuf err;
    hkc_strbuf_init(&err);
    hk_code_entry e;
    memset(&e, 0, sizeof e);
    int rc = hkc_hip_comgr_kernels(code, size, &e, &err);
    int wave32 = rc == 0 && e.nkernels == 5;
    for (int i = 0; wave32 && i < e.nkernels; i++)
        wave32 = e.kernels[i].wavefront_size == 32;
    tap_ok(wave32 && !strcmp(e.target, "gfx1030"), "gfx1030: 5 kernels, all wave32, target '%s'%s%s",
           e.target, rc ? ": " : "", err.data);
    const hk_code_kernel *va = find_kernel(&e, "vector_add");
    tap_ok(vector_add_args_ok(va) && va->agprs <= 0, "gfx1030: vector_add's args, no AGPRs (%d)",
           va ? va->agprs : 0);
    hkc_strbuf_clear(&err);
    rc = hkc_hip_comgr_disasm(code, size, "gfx1030", "vector_add", &err);
    tap_ok(rc == 0 && strstr(err.data, "vector_add") && strstr(err.data, "s_endpgm"),
           "gfx1030: disassembly of vector_add");
    free_entry(&e);
    hkc_strbuf_free(&err);
}

/* Runs both readers on bytes: return codes into rc[2], messages into msg. */
static void read_both(const void *data, size_t size, int rc[2], hkc_strbuf *msg)
{
    hk_code_entry e;
    hkc_strbuf text;
    memset(&e, 0, sizeof e);
    hkc_strbuf_init(&text);
    hkc_strbuf_clear(msg);
    rc[0] = hkc_hip_comgr_kernels(data, size, &e, msg);
    free_entry(&e);
    rc[1] = hkc_hip_comgr_disasm(data, size, "gfx90a", NULL, &text);
    hkc_strbuf_printf(msg, " | %s", rc[1] ? text.data : "disassembled");
    hkc_strbuf_free(&text);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rng_next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Corrupted copies of a real object, in a child: comgr 2.4 exits or traps
 * on some, which these readers must keep it from seeing. */
static void check_mutations(const unsigned char *code, size_t size, int count)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        unsigned char *m = malloc(size);
        hkc_strbuf msg;
        hkc_strbuf_init(&msg);
        for (int i = 0; m && i < count; i++) {
            memcpy(m, code, size);
            for (int j = 0, n = 1 + (int)(rng_next() % 16); j < n; j++)
                m[rng_next() % size] = (unsigned char)rng_next();
            int rc[2];
            read_both(m, i % 8 ? size : rng_next() % size, rc, &msg);
            if (rc[0] > 0 || rc[1] > 0 || (rc[0] < 0 && msg.data[0] == ' '))
                _exit(2);
        }
        free(m);
        hkc_strbuf_free(&msg);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "%d corrupted copies: errors, no crash (%s %d)", count,
           WIFSIGNALED(status) ? "signal" : "exit",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static void check_bad_objects(const unsigned char *code, size_t size)
{
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    int rc[2];

    /* One value of the metadata made a 6-entry map: comgr 2.4 alone dies
     * of SIGILL reading it. Disassembly does not need the metadata. */
    static const char key[] = "\xab.agpr_count";
    unsigned char *bad = malloc(size);
    const unsigned char *at = memmem(code, size, key, sizeof key - 1);
    if (bad && at && at[sizeof key - 1] == 0) {
        memcpy(bad, code, size);
        bad[at - code + sizeof key - 1] = 0x86;
        read_both(bad, size, rc, &msg);
        tap_ok(rc[0] == HK_EFORMAT && rc[1] == 0 && strstr(msg.data, "msgpack"),
               "malformed metadata msgpack: HK_EFORMAT, no trap: %s", msg.data);
    } else
        tap_ok(0, "the code object has an .agpr_count of 0 to corrupt");

    read_both(code, size / 2, rc, &msg);
    tap_ok(rc[0] < 0 && rc[1] < 0, "half a code object: errors (rc %d, %d): %s", rc[0], rc[1],
           msg.data);
    read_both(code, 100, rc, &msg);
    tap_ok(rc[0] < 0 && rc[1] < 0, "its first 100 bytes: errors: %s", msg.data);
    free(bad);
    hkc_strbuf_free(&msg);
    check_mutations(code, size, 300);
}

static void check_garbage(void)
{
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    int rc[2];
    read_both(NULL, 0, rc, &msg);
    tap_ok(rc[0] == HK_EFORMAT && rc[1] == HK_EFORMAT, "no bytes: HK_EFORMAT: %s", msg.data);

    unsigned char noise[4096];
    for (size_t i = 0; i < sizeof noise; i++)
        noise[i] = (unsigned char)rng_next();
    read_both(noise, sizeof noise, rc, &msg);
    tap_ok(rc[0] == HK_EFORMAT && rc[1] == HK_EFORMAT && strstr(msg.data, "not an ELF"),
           "random bytes: HK_EFORMAT: %s", msg.data);

    /* comgr's own whole-object disassembly calls exit(1) on this. */
    char *self = NULL;
    size_t n = 0;
    if (hkc_read_file("/proc/self/exe", &self, &n) == 0) {
        read_both(self, n, rc, &msg);
        tap_ok(rc[0] == HK_EFORMAT && rc[1] == HK_EFORMAT && strstr(msg.data, "machine"),
               "a host ELF: HK_EFORMAT: %s", msg.data);
    } else
        tap_skip("a host ELF", "cannot read /proc/self/exe");
    free(self);
    hkc_strbuf_free(&msg);
}

int main(void)
{
    tap_init();
    const char *version = hkc_hip_comgr_version();
    unsigned major = 0, minor = 0;
    tap_ok(sscanf(version, "comgr %u.%u", &major, &minor) == 2 && major >= 2,
           "version '%s'", version);
    check_garbage();

    for (int i = 0; i < LONG_NAME_LEN; i++)
        long_name[i] = "long_kernel_name_"[i % 17];
    char hipcc_buf[1024], dir[] = "/tmp/hk-comgr-XXXXXX", path[1100];
    const char *hipcc = find_hipcc(hipcc_buf, sizeof hipcc_buf);
    if (!hipcc) {
        tap_skip("kernels from hipcc", "hipcc not found");
        return tap_done();
    }
    if (!mkdtemp(dir)) {
        tap_ok(0, "mkdtemp %s", dir);
        return tap_done();
    }
    snprintf(path, sizeof path, "%s/k.hip", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        write_source(f);
        fclose(f);
    }
    void *code = NULL;
    size_t size = 0;
    if (tap_ok(f && build(hipcc, dir, "gfx90a:sramecc+:xnack-", &code, &size) == 0,
               "hipcc builds the kernels for gfx90a:sramecc+:xnack-")) {
        check_gfx90a(code, size);
        check_bad_objects(code, size);
    }
    free(code);
    code = NULL;
    if (tap_ok(f && build(hipcc, dir, "gfx1030", &code, &size) == 0, "hipcc builds them for gfx1030"))
        check_gfx1030(code, size);
    free(code);
    static const char *const files[] = {"k.hip", "k.co", "log"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    return tap_done();
}
