/* test_devlib_funcs.c's value checks: the functions of the list whose
 * signature falls in a class (all-__half, all-__half2, all-float,
 * all-double) and whose name has a reference here are called by one
 * generated kernel on random inputs and compared with the reference in
 * double. */
#ifndef HK_TEST_DEVLIB_VALUES_H
#define HK_TEST_DEVLIB_VALUES_H

#define R_(name, expr)                                                                   \
    static double r_##name(double a, double b, double c)                                 \
    {                                                                                    \
        (void)a, (void)b, (void)c;                                                       \
        return expr;                                                                     \
    }
R_(sqrt, sqrt(a)) R_(rsqrt, 1 / sqrt(a)) R_(cbrt, cbrt(a)) R_(rcbrt, 1 / cbrt(a)) R_(rcp, 1 / a)
R_(sin, sin(a)) R_(cos, cos(a)) R_(tan, tan(a)) R_(asin, asin(a)) R_(acos, acos(a))
R_(atan, atan(a)) R_(sinh, sinh(a)) R_(cosh, cosh(a)) R_(tanh, tanh(a)) R_(asinh, asinh(a))
R_(acosh, acosh(a)) R_(atanh, atanh(a)) R_(sinpi, a == trunc(a) ? 0 : sin(M_PI * fmod(a, 2)))
R_(cospi, fabs(fmod(a, 2)) == 0.5 || fabs(fmod(a, 2)) == 1.5 ? 0 : cos(M_PI * fmod(a, 2)))
R_(exp, exp(a)) R_(exp2, exp2(a)) R_(exp10, pow(10, a)) R_(expm1, expm1(a)) R_(log, log(a))
R_(log2, log2(a)) R_(log10, log10(a)) R_(log1p, log1p(a)) R_(logb, logb(a)) R_(erf, erf(a))
R_(erfc, erfc(a)) R_(erfcx, exp(a * a) * erfc(a)) R_(tgamma, tgamma(a)) R_(lgamma, lgamma(a))
R_(normcdf, 0.5 * erfc(-a / sqrt(2.0))) R_(ceil, ceil(a)) R_(floor, floor(a)) R_(trunc, trunc(a))
R_(round, round(a)) R_(rint, rint(a)) R_(nearbyint, nearbyint(a)) R_(fabs, fabs(a))
R_(abs, fabs(a)) R_(neg, -a) R_(saturate, a < 0 ? 0 : a > 1 ? 1 : a) R_(j0, j0(a)) R_(j1, j1(a))
R_(y0, y0(a)) R_(y1, y1(a)) R_(add, a + b) R_(sub, a - b) R_(mul, a * b) R_(div, a / b)
R_(fdivide, a / b) R_(pow, pow(a, b)) R_(atan2, atan2(a, b)) R_(fmod, fmod(a, b))
R_(hypot, hypot(a, b)) R_(rhypot, 1 / hypot(a, b)) R_(fdim, fdim(a, b)) R_(fmax, fmax(a, b))
R_(fmin, fmin(a, b)) R_(max, fmax(a, b)) R_(min, fmin(a, b)) R_(copysign, copysign(a, b))
R_(remainder, remainder(a, b)) R_(fma, a * b + c) R_(norm3d, sqrt(a * a + b * b + c * c))
R_(rnorm3d, 1 / sqrt(a * a + b * b + c * c))
#undef R_

typedef double (*ref_fn)(double, double, double);
#define REF_(name) {#name, r_##name}
static const struct {
    const char *base;
    ref_fn f;
} refs[] = {
    REF_(sqrt), REF_(rsqrt), REF_(cbrt), REF_(rcbrt), REF_(rcp), REF_(sin), REF_(cos), REF_(tan),
    REF_(asin), REF_(acos), REF_(atan), REF_(sinh), REF_(cosh), REF_(tanh), REF_(asinh),
    REF_(acosh), REF_(atanh), REF_(sinpi), REF_(cospi), REF_(exp), REF_(exp2), REF_(exp10),
    REF_(expm1), REF_(log), REF_(log2), REF_(log10), REF_(log1p), REF_(logb), REF_(erf),
    REF_(erfc), REF_(erfcx), REF_(tgamma), REF_(lgamma), REF_(normcdf), REF_(ceil), REF_(floor),
    REF_(trunc), REF_(round), REF_(rint), REF_(nearbyint), REF_(fabs), REF_(abs), REF_(neg),
    REF_(saturate), REF_(j0), REF_(j1), REF_(y0), REF_(y1), REF_(add), REF_(sub), REF_(mul),
    REF_(div), REF_(fdivide), REF_(pow), REF_(atan2), REF_(fmod), REF_(hypot), REF_(rhypot),
    REF_(fdim), REF_(fmax), REF_(fmin), REF_(max), REF_(min), REF_(copysign), REF_(remainder),
    REF_(fma), REF_(norm3d), REF_(rnorm3d),
};
#undef REF_

static ref_fn ref_find(const char *base)
{
    for (size_t i = 0; i < sizeof refs / sizeof *refs; i++)
        if (!strcmp(refs[i].base, base))
            return refs[i].f;
    return NULL;
}

/* CUDA's SIMD-in-a-word intrinsics, from the name: __v<op><2|4>, lanes of
 * 16 or 8 bits. Written per lane from the documented meaning, in another
 * shape than the host header's, so the two check each other (and a GPU run
 * checks both against NVIDIA's). */
static int64_t simd_lane(const char *op, int bits, int64_t ua, int64_t ub)
{
    const int64_t smax = (1 << (bits - 1)) - 1, smin = -smax - 1, umax = (1 << bits) - 1;
    const int64_t sa = ua > smax ? ua - umax - 1 : ua, sb = ub > smax ? ub - umax - 1 : ub;
    const int64_t ssum = sa + sb, sdif = sa - sb;
    static const struct {
        const char *op;
        int kind;
    } ops[] = {{"abs", 0}, {"absss", 1}, {"neg", 2}, {"negss", 3}, {"absdiffs", 4}, {"sads", 4},
               {"absdiffu", 5}, {"sadu", 5}, {"add", 6}, {"addss", 7}, {"addus", 8}, {"sub", 9},
               {"subss", 10}, {"subus", 11}, {"avgs", 12}, {"avgu", 13}, {"haddu", 14},
               {"maxs", 15}, {"maxu", 16}, {"mins", 17}, {"minu", 18}};
    int kind = -1;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strcmp(op, ops[i].op))
            kind = ops[i].kind;
    switch (kind) {
    case 0: return llabs(sa);
    case 1: return llabs(sa) > smax ? smax : llabs(sa);
    case 2: return -sa;
    case 3: return -sa > smax ? smax : -sa;
    case 4: return llabs(sdif);
    case 5: return llabs(ua - ub);
    case 6: return ua + ub;
    case 7: return ssum > smax ? smax : ssum < smin ? smin : ssum;
    case 8: return ua + ub > umax ? umax : ua + ub;
    case 9: return ua - ub;
    case 10: return sdif > smax ? smax : sdif < smin ? smin : sdif;
    case 11: return ua > ub ? ua - ub : 0;
    case 12: return ssum >= 0 ? (ssum + 1) / 2 : -((1 - ssum) / 2);
    case 13: return (ua + ub + 1) / 2;
    case 14: return (ua + ub) / 2;
    case 15: return sa > sb ? sa : sb;
    case 16: return ua > ub ? ua : ub;
    case 17: return sa < sb ? sa : sb;
    case 18: return ua < ub ? ua : ub;
    default: break;
    }
    /* cmpXX / setXX; the s or u after the relation picks the signedness */
    const char *c = op + 3;
    int64_t x = c[2] == 's' ? sa : ua, y = c[2] == 's' ? sb : ub;
    int t = !strncmp(c, "eq", 2) ? ua == ub : !strncmp(c, "ne", 2) ? ua != ub
          : !strncmp(c, "ge", 2) ? x >= y : !strncmp(c, "gt", 2) ? x > y
          : !strncmp(c, "le", 2) ? x <= y : x < y;
    return !strncmp(op, "cmp", 3) ? (t ? umax : 0) : t;
}

static double ref_simd(const char *name, double da, double db)
{
    uint32_t a = (uint32_t)da, b = (uint32_t)db, r = 0, sum = 0;
    size_t n = strlen(name);
    int bits = name[n - 1] == '2' ? 16 : 8;
    char op[16];
    snprintf(op, sizeof op, "%.*s", (int)(n - 4), name + 3);
    const uint32_t m = (1u << bits) - 1;
    for (int sh = 0; sh < 32; sh += bits) {
        uint32_t v = (uint32_t)simd_lane(op, bits, (a >> sh) & m, (b >> sh) & m) & m;
        r |= v << sh;
        sum += v;
    }
    return strstr(op, "sad") ? sum : r;
}

/* HIP's unsigned int intrinsics (AMD semantics), bit by bit where that is
 * the clearest statement of them. NAN: no reference (the lane-dependent
 * __mbcnt_*). */
static double ref_uint(const char *name, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint64_t hilo = ((uint64_t)b << 32) | a, r = 0;
    if (!strcmp(name, "__bitextract_u32")) {
        for (uint32_t i = 0; i < (c & 31); i++)
            r |= (uint64_t)((b & 31) + i < 32 && ((a >> ((b & 31) + i)) & 1)) << i;
        return (double)r;
    }
    if (!strcmp(name, "__bitinsert_u32")) {
        r = a;
        for (uint32_t i = 0; i < (d & 31) && (c & 31) + i < 32; i++)
            r = (r & ~(1ull << ((c & 31) + i))) | ((uint64_t)((b >> i) & 1) << ((c & 31) + i));
        return (double)r;
    }
    if (!strcmp(name, "__brev")) {
        for (int i = 0; i < 32; i++)
            r |= (uint64_t)((a >> i) & 1) << (31 - i);
        return (double)r;
    }
    if (!strcmp(name, "__byte_perm")) {
        for (int i = 0; i < 4; i++)
            r |= ((hilo >> (8 * ((c >> (4 * i)) & 7))) & 0xff) << (8 * i);
        return (double)r;
    }
    if (!strcmp(name, "__ffs"))
        return a ? __builtin_ctz(a) + 1 : 0;
    if (!strcmp(name, "__popc"))
        return __builtin_popcount(a);
    if (!strcmp(name, "__funnelshift_l") || !strcmp(name, "__funnelshift_lc")) {
        uint32_t s = name[15] == 'c' ? (c > 32 ? 32 : c) : c & 31;
        return (double)(uint32_t)((hilo << s) >> 32);
    }
    if (!strcmp(name, "__funnelshift_r") || !strcmp(name, "__funnelshift_rc")) {
        uint32_t s = name[15] == 'c' ? (c > 32 ? 32 : c) : c & 31;
        return (double)(uint32_t)(hilo >> s);
    }
    if (!strcmp(name, "__uhadd"))
        return (double)(((uint64_t)a + b) / 2);
    if (!strcmp(name, "__urhadd"))
        return (double)(((uint64_t)a + b + 1) / 2);
    if (!strcmp(name, "__umulhi"))
        return (double)(((uint64_t)a * b) >> 32);
    if (!strcmp(name, "__usad"))
        return (double)(uint32_t)((a > b ? a - b : b - a) + c);
    return NAN;
}

enum { CLASS_H, CLASS_H2, CLASS_F, CLASS_D, CLASS_V, NCLASS };
static const char *const class_names[NCLASS] = {"__half math", "__half2 math", "float math",
                                                "double math", "unsigned int intrinsics"};
static const char *const class_types[NCLASS] = {"__half", "__half2", "float", "double",
                                                "unsigned int"};


typedef struct {
    const fn_entry *e;
    int cls, sat, fast, slot;
    ref_fn ref;
} value_case;

/* The class of e and the reference its name maps to, or -1. Names lose
 * HIP's decorations: __hadd_sat -> add (saturated), h2sqrt -> sqrt,
 * __fadd_rn -> add, __fmaf_rz -> fma, sinf -> sin, __dsqrt_rn -> sqrt. */
static int value_classify(const fn_entry *e, value_case *c)
{
    int cls = -1;
    for (int k = 0; k < NCLASS; k++)
        if (!strcmp(e->ret, class_types[k]))
            cls = k;
    if (cls < 0 || e->nparams < 1 || !e->probed || e->host_only)
        return -1;
    for (int j = 0; j < e->nparams; j++)
        if (strcmp(e->params[j], class_types[cls]))
            return -1;
    char b[64];
    snprintf(b, sizeof b, "%s", e->name);
    memset(c, 0, sizeof *c);
    size_t n = strlen(b);
    if (n > 4 && !strcmp(b + n - 4, "_sat"))
        b[n -= 4] = 0, c->sat = 1;
    if (n > 3 && b[n - 3] == '_' && b[n - 2] == 'r')
        b[n -= 3] = 0;
    const char *s = b;
    c->fast = !strncmp(s, "__", 2) && cls == CLASS_F;
    if (!strncmp(s, "__", 2))
        s += 2;
    int h2_prefix = cls == CLASS_H2 && !strncmp(s, "h2", 2);
    if (h2_prefix)
        s += 2;
    else if (cls == CLASS_H || cls == CLASS_H2)
        s += *s == 'h';
    char base[64];
    snprintf(base, sizeof base, "%s", s);
    n = strlen(base);
    if (cls == CLASS_H2 && !h2_prefix && n > 1 && base[n - 1] == '2')
        base[--n] = 0;
    if (cls == CLASS_F && n > 1 && base[n - 1] == 'f')
        base[--n] = 0;
    c->ref = ref_find(base);
    if (!c->ref && (base[0] == 'f' || base[0] == 'd'))
        c->ref = ref_find(base + 1);
    c->e = e;
    c->cls = cls;
    if (cls == CLASS_V) { /* CUDA's __v<op><2|4>, or one ref_uint knows */
        char last = e->name[strlen(e->name) - 1];
        if (!strncmp(e->name, "__v", 3) && (last == '2' || last == '4'))
            return 0;
        return isnan(ref_uint(e->name, 0, 0, 0, 0)) ? -1 : 0;
    }
    return c->ref ? 0 : -1;
}

/* The kernel: thread i computes every case on inputs in[k * n + i]. */
static char *values_source(const value_case *vc, int nc)
{
    text t = {0};
    text_addf(&t, "#include <hip/hip_runtime.h>\n#include <hip/hip_fp16.h>\n"
                  "__global__ void devlib_vals(double *out, const double *in, int n)\n{\n"
                  "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n"
                  "#define A(k) in[(k) * n + i]\n"
                  "#define H(k) __float2half((float)A(k))\n"
                  "#define H2(k) __floats2half2_rn((float)A(k), (float)A((k) + 3))\n");
    for (int j = 0; j < nc; j++) {
        const value_case *c = &vc[j];
        static const char *const arg[NCLASS] = {"H(%d)", "H2(%d)", "(float)A(%d)", "A(%d)",
                                                "(unsigned int)A(%d + 6)"};
        text_addf(&t, "    { auto r = %s(", c->e->name);
        for (int k = 0; k < c->e->nparams; k++) {
            text_addf(&t, k ? ", " : "");
            text_addf(&t, arg[c->cls], k);
        }
        if (c->cls == CLASS_H)
            text_addf(&t, "); out[%d * n + i] = (double)__half2float(r); }\n", c->slot);
        else if (c->cls == CLASS_H2)
            text_addf(&t, "); out[%d * n + i] = (double)__low2float(r); "
                          "out[%d * n + i] = (double)__high2float(r); }\n",
                      c->slot, c->slot + 1);
        else
            text_addf(&t, "); out[%d * n + i] = (double)r; }\n", c->slot);
    }
    text_addf(&t, "}\n");
    return t.s;
}

/* Tolerance per class, relative plus absolute: half 1e-3; float 2e-6
 * (rounding-mode variants are a unit off; NVIDIA's library is within a few
 * units) or 5e-3 for the fast intrinsics (__tanf near pi/2); double 1e-13.
 * The absolute part is for results near a zero of the function (j0, y0,
 * lgamma near 1), where the GPU libraries promise an absolute error. */
static int value_close(const value_case *c, double got, double want)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    static const double rel[NCLASS] = {1e-3, 1e-3, 2e-6, 1e-13, 0};
    static const double abs_[NCLASS] = {1e-4, 1e-4, 2e-6, 1e-14, 0};
    double r = c->fast ? 5e-3 : rel[c->cls], a = c->fast ? 1e-5 : abs_[c->cls];
    if (!(fabs(got - want) <= r * fabs(want) + a))
        return 0;
    /* float in a direction: on the right side of the reference, which in
     * double is exact for + - * and within 2^-52 for the rest (the inputs
     * are positive, so _rz is _rd) */
    size_t n = strlen(c->e->name);
    if (c->cls != CLASS_F || n < 4 || c->e->name[n - 3] != '_' || c->e->name[n - 2] != 'r')
        return 1;
    double slack = fabs(want) * 0x1p-52;
    char d = c->e->name[n - 1];
    return d == 'n' || (d == 'u' ? got >= want - slack : got <= want + slack);
}

/* Inputs k/256, k in [13, 1023]: exact in half and float, in [0.05, 4). */
static void values_check(const value_case *vc, int nc, const double *in, const double *out, int n)
{
    int bad[NCLASS] = {0}, tested[NCLASS] = {0}, shown = 0;
    for (int j = 0; j < nc; j++) {
        const value_case *c = &vc[j];
        int lanes = c->cls == CLASS_H2 ? 2 : 1, fails = 0;
        tested[c->cls]++;
        for (int lane = 0; lane < lanes; lane++)
            for (int i = 0; i < n; i++) {
                double a = in[0 * n + i + 3 * n * lane], b = in[1 * n + i + 3 * n * lane],
                       cc = in[2 * n + i + 3 * n * lane];
                double want = c->cls != CLASS_V ? c->ref(a, b, cc)
                              : !strncmp(c->e->name, "__v", 3)
                                  ? ref_simd(c->e->name, in[6 * n + i], in[7 * n + i])
                                  : ref_uint(c->e->name, (uint32_t)in[6 * n + i], (uint32_t)in[7 * n + i],
                                             (uint32_t)in[8 * n + i], (uint32_t)in[9 * n + i]);
                if (c->cls == CLASS_H || c->cls == CLASS_H2) /* the result is a half */
                    want = fabs(want) > 65520 ? copysign(INFINITY, want) : want;
                if (c->sat)
                    want = want < 0 ? 0 : want > 1 ? 1 : want;
                double got = out[(c->slot + lane) * n + i];
                if (!value_close(c, got, want) && fails++ == 0 && shown++ < 20)
                    tap_diag("%s(%g, %g, %g) = %.9g, want %.9g", c->e->sig, a, b, cc, got, want);
            }
        bad[c->cls] += fails != 0;
    }
    for (int k = 0; k < NCLASS; k++)
        tap_ok(tested[k] > 0 && bad[k] == 0, "%s on %s: %d functions of the list on %d random inputs, "
               "%d off the double reference", class_names[k], tu_backend(), tested[k], n, bad[k]);
}

static int values_launch(hk_context *c, const char *src, const double *in, double *out, int n,
                         int slots)
{
    hk_module *m = NULL;
    hk_kernel *k = tu_kernel(c, &m, src, "devlib_vals");
    hk_buffer *dout = NULL, *din = NULL;
    int r = k ? 0 : -1;
    if (r == 0)
        r = hk_buffer_alloc(c, (size_t)(n * slots), HK_F64, HK_MEM_DEVICE, &dout);
    if (r == 0)
        r = hk_buffer_alloc(c, (size_t)(10 * n), HK_F64, HK_MEM_DEVICE, &din);
    if (r == 0)
        r = hk_buffer_upload(din, 0, in, (size_t)(10 * n) * sizeof *in);
    hk_launch_config cfg = tu_cfg((uint32_t)n / 64, 1, 1, 64, 1, 1, 0);
    hk_arg args[] = {hk_arg_buffer(dout), hk_arg_buffer(din), hk_arg_int(n)};
    if (r == 0)
        r = hk_launch(k, &cfg, args, 3);
    if (r == 0)
        r = hk_synchronize(c);
    if (r == 0)
        r = hk_buffer_download(dout, 0, out, (size_t)(n * slots) * sizeof *out);
    if (r != 0 && k)
        tap_diag("devlib_vals: %s", hk_errmsg(c));
    if (din)
        hk_buffer_free(din);
    if (dout)
        hk_buffer_free(dout);
    hk_module_free(m);
    return r;
}

/* The cases among the overloads a backend has (a missing one is the
 * coverage check's business; which those are, the probe said: found[]). */
static int values_cases(const fn_list *l, const char *found, value_case *vc, int *slots)
{
    int nc = 0;
    *slots = 0;
    for (int i = 0; i < l->n; i++)
        if (found[i] && value_classify(&l->fn[i], &vc[nc]) == 0) {
            vc[nc].slot = *slots;
            *slots += vc[nc].cls == CLASS_H2 ? 2 : 1;
            nc++;
        }
    return nc;
}

/* The same generated kernel through NVRTC for sm_90, compile only. */
static void values_compile_cuda(hk_context *c, const fn_list *l, const char *found)
{
    value_case *vc = calloc((size_t)l->n, sizeof *vc);
    int slots, nc = values_cases(l, found, vc, &slots);
    char *src = values_source(vc, nc);
    hk_compile_options o;
    hk_compile_options_defaults(&o);
    o.name = "devlib_vals.hip";
    void *code = NULL;
    size_t size = 0;
    hk_code_origin origin;
    int r = hk_compile_for_target(c, "cuda", "sm_90", src, &o, &code, &size, &origin);
    if (!tap_ok(r == 0 && size > 0, "the kernel calling %d functions of the list compiles for cuda sm_90", nc))
        tap_diag("%s", hk_errmsg(c));
    free(code);
    free(src);
    free(vc);
}

static void values_run(hk_context *c, const fn_list *l, const char *found)
{
    enum { N = 256 };
    value_case *vc = calloc((size_t)l->n, sizeof *vc);
    int slots, nc = values_cases(l, found, vc, &slots);
    double *in = malloc(10 * N * sizeof *in), *out = malloc((size_t)(slots * N) * sizeof *out);
    for (int i = 0; i < 6 * N; i++)
        in[i] = (double)(13 + tu_next() % 1011) / 256.0;
    /* words for the SIMD class: random bytes, a third of them the edges */
    static const uint8_t edge[] = {0x00, 0x01, 0x7f, 0x80, 0x81, 0xfe, 0xff};
    for (int i = 6 * N; i < 8 * N; i++) {
        uint32_t w = 0;
        for (int k = 0; k < 4; k++) {
            uint64_t x = tu_next();
            w |= (uint32_t)(x % 3 == 0 ? edge[(x >> 8) % sizeof edge] : (uint8_t)(x >> 16)) << (8 * k);
        }
        in[i] = w;
    }
    /* and for offsets, widths and shift counts: 0 to 40 */
    for (int i = 8 * N; i < 10 * N; i++)
        in[i] = (double)(tu_next() % 41);
    for (int i = 0; i < slots * N; i++)
        out[i] = NAN;
    char *src = values_source(vc, nc);
    if (tap_ok(values_launch(c, src, in, out, N, slots) == 0,
               "a kernel calling %d functions of the list compiles and runs on %s", nc, tu_backend()))
        values_check(vc, nc, in, out, N);
    free(src);
    free(in);
    free(out);
    free(vc);
}

#endif
