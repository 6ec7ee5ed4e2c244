/* End-to-end checks of the CPU backend's HIP device header and of
 * hkc_host_source_prepare: kernels.hip goes through the same rewrite and the
 * same g++ command line as in the backend, the module is dlopen'ed and its
 * kernels run on test_runtime.cpp's runtime against CPU references. TAP.
 *
 * Usage: test_host_lang [REPO_ROOT]   (default: the current directory) */
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "host_source.h"
#include "../tap.h"
}
#include "test_runtime.h"

static std::string g_root = ".", g_tmp;

static std::string read_file(const std::string &path)
{
    std::string s;
    FILE *f = fopen(path.c_str(), "rb");
    if (!f)
        return s;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        s.append(buf, n);
    fclose(f);
    return s;
}

static bool write_file(const std::string &path, const std::string &s)
{
    FILE *f = fopen(path.c_str(), "wb");
    if (!f)
        return false;
    fwrite(s.data(), 1, s.size(), f);
    return fclose(f) == 0;
}

/* Runs a shell command; returns its status, output (stdout+stderr) in *log. */
static int run(const std::string &cmd, std::string *log)
{
    std::string full = cmd + " 2>&1";
    FILE *p = popen(full.c_str(), "r");
    if (!p)
        return -1;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        log->append(buf, n);
    return pclose(p);
}

static std::string cxx_module_cmd(const std::string &tu, const std::string &so)
{
    const char *cxx = getenv("HIPKIT_CXX");
    return std::string(cxx ? cxx : "g++") +
           " -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -Wl,-Bsymbolic -Wall -Wextra -I " +
           g_root + "/src/core/backends/host/include -x c++ " + tu + " -o " + so;
}

struct kernel_spec {
    const char *name;
    int sync;
};

/* Prepares, compiles and opens a module; NULL on failure (diagnosed). */
static void *build_module(const char *label, const std::string &name, const std::string &src,
                          const std::vector<kernel_spec> &ks, std::string *warnings)
{
    std::vector<hkc_source_kernel> kernels(ks.size());
    for (size_t i = 0; i < ks.size(); i++) {
        memset(&kernels[i], 0, sizeof kernels[i]);
        kernels[i].name = const_cast<char *>(ks[i].name);
        kernels[i].uses_sync = ks[i].sync;
    }
    hkc_strbuf out, err;
    hkc_strbuf_init(&out);
    hkc_strbuf_init(&err);
    int rc = hkc_host_source_prepare(name.c_str(), src.c_str(), kernels.data(),
                                     (int)kernels.size(), &out, &err);
    std::string tu = g_tmp + "/" + label + ".cpp", so = g_tmp + "/" + label + ".so";
    bool ok = rc == 0 && write_file(tu, out.data);
    hkc_strbuf_free(&out);
    hkc_strbuf_free(&err);
    if (!ok)
        return nullptr;
    std::string log;
    auto t0 = std::chrono::steady_clock::now();
    int st = run(cxx_module_cmd(tu, so), &log);
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    tap_diag("%s: compiled in %.2f s", label, secs);
    if (warnings)
        *warnings = log;
    if (st != 0) {
        tap_diag("compile failed:\n%s", log.c_str());
        return nullptr;
    }
    void *h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h)
        tap_diag("dlopen: %s", dlerror());
    return h;
}

/* ---- kernarg packing with C struct layout ---- */

struct args {
    std::vector<unsigned char> buf;
    std::vector<uint32_t> sizes, aligns;
    size_t max_align = 1;
    template <typename T>
    args &add(const T &v)
    {
        size_t a = alignof(T), off = (buf.size() + a - 1) / a * a;
        buf.resize(off + sizeof(T));
        memcpy(buf.data() + off, &v, sizeof(T));
        sizes.push_back(sizeof(T));
        aligns.push_back(alignof(T));
        max_align = std::max(max_align, a);
        return *this;
    }
    const void *data()
    {
        buf.resize((buf.size() + max_align - 1) / max_align * max_align);
        return buf.data();
    }
};

static const hk_host_kernel_desc *g_kernels;
static uint32_t g_nkernels;

static const hk_host_kernel_desc *kernel(const char *name)
{
    for (uint32_t i = 0; i < g_nkernels; i++)
        if (!strcmp(g_kernels[i].name, name))
            return &g_kernels[i];
    return nullptr;
}

/* Launches name with args a; checks the module's parameter table agrees with
 * what the harness packed. Returns the failure message ("" on success). */
static std::string launch(const char *name, test_dim grid, test_dim block, args &a,
                          size_t dyn = 0, int os_threads = 2, std::string *printed = nullptr)
{
    const char *only = getenv("HK_ONLY"); /* debugging: run one kernel */
    if (only && strcmp(only, name))
        return "skipped (HK_ONLY)";
    const hk_host_kernel_desc *k = kernel(name);
    if (!k)
        return std::string("no kernel ") + name;
    if (k->nparams != a.sizes.size())
        return std::string("parameter count mismatch for ") + name;
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->param_size[i] != a.sizes[i] || k->param_align[i] != a.aligns[i])
            return std::string("parameter layout mismatch for ") + name;
    return test_launch(k, grid, block, a.data(), dyn, os_threads, printed);
}

/* ---- independent references ---- */

/* Nearest representable value with p significant bits, exponent >= emin for
 * normals (subnormals below), ties to even; computed with ldexp/nearbyint in
 * double (exact for float inputs). Returns the value; the encoder below turns
 * it into bits. */
static double ref_round(double x, int p, int emin, double maxfinite, double *out)
{
    if (std::isnan(x) || std::isinf(x))
        return *out = x;
    double ax = fabs(x);
    int e;
    frexp(ax, &e); /* ax = m * 2^e, m in [0.5, 1) */
    e -= 1;        /* ax = m' * 2^e, m' in [1, 2) */
    if (e < emin)
        e = emin;
    double ulp = ldexp(1.0, e - (p - 1));
    double q = nearbyint(ax / ulp) * ulp;
    /* beyond max: round to inf if >= max + ulp/2 (ties go to even = inf) */
    double r = q > maxfinite ? INFINITY : q;
    return *out = copysign(r, x);
}

static uint16_t ref_encode(double v, int mbits, int bias)
{
    uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    uint16_t expmax = (uint16_t)((1 << (15 - mbits)) - 1);
    if (std::isinf(a))
        return sign | (uint16_t)(expmax << mbits);
    if (a == 0)
        return sign;
    int e;
    frexp(a, &e);
    e -= 1;
    if (e < 1 - bias) /* subnormal */
        return sign | (uint16_t)(a / ldexp(1.0, 1 - bias - mbits));
    double m = a / ldexp(1.0, e) - 1.0;
    return sign | (uint16_t)((e + bias) << mbits) | (uint16_t)(m * (1 << mbits));
}

static uint16_t ref_f2h(double x)
{
    double v;
    ref_round(x, 11, -14, 65504.0, &v);
    return ref_encode(v, 10, 15);
}

static uint16_t ref_f2bf(double x)
{
    double v;
    ref_round(x, 8, -126, 3.3895313892515355e38, &v);
    return ref_encode(v, 7, 127);
}

static double ref_h2d(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double s = (h & 0x8000) ? -1 : 1;
    if (e == 31)
        return m ? NAN : s * INFINITY;
    if (e == 0)
        return s * ldexp(m, -24);
    return s * ldexp(1024 + m, e - 25);
}

static double ref_bf2d(uint16_t b)
{
    int e = (b >> 7) & 255, m = b & 127;
    double s = (b & 0x8000) ? -1 : 1;
    if (e == 255)
        return m ? NAN : s * INFINITY;
    if (e == 0)
        return s * ldexp(m, -133);
    return s * ldexp(128 + m, e - 134);
}

static bool is_nan16(uint16_t v, int mbits)
{
    uint16_t expmask = (uint16_t)(((1 << (15 - mbits)) - 1) << mbits);
    return (v & expmask) == expmask && (v & ((1 << mbits) - 1));
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

template <typename T>
static std::vector<T> poisoned(size_t n)
{
    std::vector<T> v(n);
    memset(v.data(), 0xcd, n * sizeof(T));
    return v;
}

/* ---- the tests ---- */

static std::string g_kernel_src;

static int line_of(const char *marker)
{
    size_t pos = g_kernel_src.find(marker);
    if (pos == std::string::npos)
        return -1;
    int line = 1;
    for (size_t i = 0; i < pos; i++)
        line += g_kernel_src[i] == '\n';
    return line;
}

static void test_axpy()
{
    const int n = 100003;
    std::vector<float> x(n), y(n), ref(n);
    for (int i = 0; i < n; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = (float)(n - i);
        ref[i] = 3.0f * x[i] + y[i];
    }
    args a;
    a.add(3.0f).add<const float *>(x.data()).add<float *>(y.data()).add(n);
    std::string r = launch("axpy", {(n + 255) / 256, 1, 1}, {256, 1, 1}, a);
    tap_ok(r.empty() && y == ref, "axpy (loop mode, extern \"C\", declared before defined) %s",
           r.c_str());
    const unsigned m = 5000;
    std::vector<float> p(m), q(m), c = poisoned<float>(m + 64);
    for (unsigned i = 0; i < m; i++)
        p[i] = (float)i, q[i] = 1.0f / (float)(i + 1);
    args b;
    b.add<const float *>(p.data()).add<const float *>(q.data()).add<float *>(c.data()).add(m);
    r = launch("vadd", {(m + 127) / 128, 1, 1}, {128, 1, 1}, b);
    bool ok = r.empty();
    for (unsigned i = 0; i < m; i++)
        ok &= c[i] == p[i] + q[i];
    ok &= float_bits(c[m]) == 0xcdcdcdcdu; /* nothing written past n */
    tap_ok(ok, "vadd (C++ linkage, __launch_bounds__ with two arguments) %s", r.c_str());
}

static void test_index3d()
{
    test_dim grid = {3, 2, 4}, block = {4, 5, 3};
    unsigned nb = grid.x * grid.y * grid.z, nt = block.x * block.y * block.z;
    auto out = poisoned<unsigned>(8 * nb * nt);
    args a;
    a.add<unsigned *>(out.data());
    std::string r = launch("index3d", grid, block, a, 0, 3);
    bool ok = r.empty();
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++)
                for (unsigned tz = 0; tz < block.z; tz++)
                    for (unsigned ty = 0; ty < block.y; ty++)
                        for (unsigned tx = 0; tx < block.x; tx++) {
                            unsigned bl = bx + grid.x * (by + grid.y * bz);
                            unsigned tl = tx + block.x * (ty + block.y * tz);
                            const unsigned *o = &out[8 * (bl * nt + tl)];
                            ok &= o[0] == tx && o[1] == ty && o[2] == tz && o[3] == bx &&
                                  o[4] == by && o[5] == bz &&
                                  o[6] == (block.x | block.y << 8 | block.z << 16 | 1u << 24) &&
                                  o[7] == (grid.x | grid.y << 8 | grid.z << 16 | 1u << 24);
                        }
    tap_ok(ok, "3-D threadIdx/blockIdx/blockDim/gridDim, hip*_x macros, dim3 %s", r.c_str());
}

struct atomic_out {
    int isum, isub, isys;
    unsigned long long usum, umax;
    float fsum, fmin, fmax;
    double dsum, dmax;
    unsigned inc, dec, andv, orv, xorv;
    int imin, imax, cas_count, exch;
    unsigned long long ucas_count;
};

static void test_atomics()
{
    const int n = 200000, nbins = 37;
    std::mt19937 rng(42);
    std::vector<unsigned> vals(n);
    std::vector<unsigned> hist(nbins, 0), ref(nbins, 0);
    for (auto &v : vals) {
        v = rng();
        ref[v % nbins]++;
    }
    args a;
    a.add<const unsigned *>(vals.data()).add(n).add<unsigned *>(hist.data()).add(nbins);
    std::string r = launch("histogram", {(n + 63) / 64, 1, 1}, {64, 1, 1}, a, 0, 8);
    tap_ok(r.empty() && hist == ref, "atomicAdd histogram from 8 OS threads %s", r.c_str());

    const int m = 10000;
    std::vector<int> iv(m);
    for (auto &v : iv)
        v = (int)(rng() % 2001) - 1000;
    atomic_out o;
    memset(&o, 0, sizeof o);
    o.fmin = 1e30f;
    o.fmax = -1e30f;
    o.dmax = -1e300;
    o.andv = ~0u;
    o.imin = 1 << 30;
    o.imax = -(1 << 30);
    o.exch = 12345;
    args b;
    b.add<const int *>(iv.data()).add(m).add<atomic_out *>(&o);
    r = launch("atomics", {(m + 99) / 100, 1, 1}, {100, 1, 1}, b, 0, 8);
    long long isum = 0;
    unsigned long long usum = 0, umax = 0;
    int imin = 1 << 30, imax = -(1 << 30);
    unsigned xorv = 0;
    for (int i = 0; i < m; i++) {
        isum += iv[i];
        usum += (unsigned long long)(iv[i] + 1000);
        umax = std::max(umax, (unsigned long long)(iv[i] + 1000) << 33);
        imin = std::min(imin, iv[i]);
        imax = std::max(imax, iv[i]);
        xorv ^= (unsigned)i;
    }
    bool exch_ok = o.exch != 12345;
    for (int i = 0; i < m && exch_ok; i++)
        if (iv[i] == o.exch)
            break;
        else if (i == m - 1)
            exch_ok = false;
    bool ok = r.empty() && o.isum == isum && o.isub == -isum && o.isys == m && o.usum == usum &&
              o.umax == umax && o.fsum == (float)isum && o.fmin == imin * 0.5f &&
              o.fmax == imax * 0.5f && o.dsum == isum * 0.25 && o.dmax == imax &&
              o.inc == (unsigned)(m % 100) && o.dec == (unsigned)((100 - m % 100) % 100) &&
              o.andv == 0 && o.orv == ~0u && o.xorv == xorv && o.imin == imin &&
              o.imax == imax && o.cas_count == m && o.ucas_count == 2ull * m && exch_ok;
    if (!ok)
        tap_diag("isum %d/%lld inc %u dec %u fsum %g cas %d", o.isum, isum, o.inc, o.dec,
                 (double)o.fsum, o.cas_count);
    tap_ok(ok, "atomics Add Sub Min Max Inc Dec And Or Xor CAS Exch, int/uint/ull/float/double, "
           "_system/_block %s",
           r.c_str());
}

static void test_fp16()
{
    /* Known bit patterns. */
    struct {
        float f;
        uint16_t h, bf;
    } known[] = {
        {1.0f, 0x3c00, 0x3f80},
        {-2.0f, 0xc000, 0xc000},
        {65504.0f, 0x7bff, 0x4780},
        {65519.996f, 0x7bff, 0x4780},
        {65520.0f, 0x7c00, 0x4780}, /* half: tie between max and 2^16 goes to inf */
        {1e10f, 0x7c00, 0x5015},
        {INFINITY, 0x7c00, 0x7f80},
        {-INFINITY, 0xfc00, 0xff80},
        {-0.0f, 0x8000, 0x8000},
        {bits_float(0x33800000), 0x0001, 0x3380}, /* 2^-24, smallest half subnormal */
        {bits_float(0x33000000), 0x0000, 0x3300}, /* 2^-25: tie to even 0 */
        {bits_float(0x33000001), 0x0001, 0x3300},
        {bits_float(0x33c00000), 0x0002, 0x33c0}, /* 1.5 * 2^-24: tie to even 2 */
        {bits_float(0x38800000), 0x0400, 0x3880}, /* smallest half normal */
        {bits_float(0x387fc000), 0x03ff, 0x3880}, /* largest half subnormal */
        {1.0f + 1.0f / 2048, 0x3c00, 0x3f80},    /* tie: stays even */
        {1.0f + 3.0f / 2048, 0x3c02, 0x3f80},    /* tie: goes up to even */
        {0.333333343f, 0x3555, 0x3eab},
        {bits_float(0x3f808000), 0x3c04, 0x3f80}, /* bf16 tie to even (down) */
        {bits_float(0x3f818000), 0x3c0c, 0x3f82}, /* bf16 tie to even (up) */
        {bits_float(0x00000001), 0x0000, 0x0000}, /* smallest float subnormal */
        {bits_float(0x007fffff), 0x0000, 0x0080}, /* bf16 rounds up to smallest normal */
        {bits_float(0x7f7fffff), 0x7c00, 0x7f80}, /* FLT_MAX: bf16 overflows to inf */
        {NAN, 0x7e00, 0x7fc0},
    };
    const int nk = sizeof known / sizeof known[0];
    std::vector<float> in(nk);
    for (int i = 0; i < nk; i++)
        in[i] = known[i].f;
    auto h = poisoned<uint16_t>(nk), bf = poisoned<uint16_t>(nk);
    args a;
    a.add<const float *>(in.data()).add<unsigned short *>(h.data()).add<unsigned short *>(
        bf.data()).add(nk);
    std::string r = launch("fp16_from_float", {1, 1, 1}, {64, 1, 1}, a);
    bool ok = r.empty();
    for (int i = 0; i < nk; i++) {
        bool hn = std::isnan(known[i].f);
        bool good = hn ? is_nan16(h[i], 10) && is_nan16(bf[i], 7)
                       : h[i] == known[i].h && bf[i] == known[i].bf;
        if (!good)
            tap_diag("known %d: %a -> half %04x (want %04x) bf16 %04x (want %04x)", i,
                     (double)known[i].f, h[i], known[i].h, bf[i], known[i].bf);
        ok &= good;
    }
    tap_ok(ok, "float -> half/bf16 known patterns (ties, subnormals, overflow, NaN) %s",
           r.c_str());

    /* A sweep over float bit patterns against the ldexp/nearbyint reference. */
    const uint64_t stride = 251;
    std::vector<float> sweep;
    for (uint64_t u = 0; u < (1ull << 32); u += stride)
        sweep.push_back(bits_float((uint32_t)u));
    int ns = (int)sweep.size();
    auto sh = poisoned<uint16_t>(ns), sb = poisoned<uint16_t>(ns);
    args b;
    b.add<const float *>(sweep.data()).add<unsigned short *>(sh.data()).add<unsigned short *>(
        sb.data()).add(ns);
    r = launch("fp16_from_float", {(unsigned)(ns + 255) / 256, 1, 1}, {256, 1, 1}, b);
    long bad = 0;
    for (int i = 0; i < ns && r.empty(); i++) {
        float f = sweep[i];
        if (std::isnan(f)) {
            bad += !is_nan16(sh[i], 10) || !is_nan16(sb[i], 7) ||
                   (sh[i] & 0x8000) != (float_bits(f) >> 16 & 0x8000);
            continue;
        }
        if (sh[i] != ref_f2h(f) || sb[i] != ref_f2bf(f)) {
            if (bad < 5)
                tap_diag("sweep %a: half %04x ref %04x bf16 %04x ref %04x", (double)f, sh[i],
                         ref_f2h(f), sb[i], ref_f2bf(f));
            bad++;
        }
    }
    tap_ok(r.empty() && bad == 0, "float -> half/bf16 on %d float patterns vs reference %s", ns,
           r.c_str());

    /* double -> half/bf16 (direct, not through float). */
    std::vector<double> din = {1.0 + 1.0 / 2048 + 1e-12, 65519.999999, 65520.0,
                               ldexp(1.0, -25) * (1 + 1e-15), ldexp(1.0, -25),
                               1.0 + 1.0 / 256 + 1e-14, 1e300, -1e-300, 0.1};
    int nd = (int)din.size();
    auto dh = poisoned<uint16_t>(nd), db = poisoned<uint16_t>(nd);
    args c;
    c.add<const double *>(din.data()).add<unsigned short *>(dh.data()).add<unsigned short *>(
        db.data()).add(nd);
    r = launch("fp16_from_double", {1, 1, 1}, {64, 1, 1}, c);
    ok = r.empty();
    for (int i = 0; i < nd; i++) {
        if (dh[i] != ref_f2h(din[i]) || db[i] != ref_f2bf(din[i])) {
            tap_diag("double %a: half %04x ref %04x bf16 %04x ref %04x", din[i], dh[i],
                     ref_f2h(din[i]), db[i], ref_f2bf(din[i]));
            ok = false;
        }
    }
    tap_ok(ok, "double -> half/bf16 rounds once %s", r.c_str());

    /* Every 16-bit pattern back to float. */
    auto hf = poisoned<float>(65536), bff = poisoned<float>(65536);
    args d;
    d.add<float *>(hf.data()).add<float *>(bff.data());
    r = launch("fp16_to_float", {256, 1, 1}, {256, 1, 1}, d);
    ok = r.empty();
    for (int i = 0; i < 65536 && ok; i++) {
        double rh = ref_h2d((uint16_t)i), rb = ref_bf2d((uint16_t)i);
        bool gh = std::isnan(rh) ? std::isnan(hf[i]) : (double)hf[i] == rh &&
                                                           std::signbit(hf[i]) == std::signbit(rh);
        bool gb = std::isnan(rb) ? std::isnan(bff[i]) : (double)bff[i] == rb &&
                                                            std::signbit(bff[i]) == std::signbit(rb);
        if (!gh || !gb)
            tap_diag("pattern %04x: half %a (ref %a) bf16 %a (ref %a)", i, (double)hf[i], rh,
                     (double)bff[i], rb);
        ok &= gh && gb;
    }
    tap_ok(ok, "all 65536 half and bf16 patterns -> float exact %s", r.c_str());

    /* Operations on random halves against float arithmetic rounded by the
     * reference. */
    std::mt19937 rng(7);
    const int no = 4096;
    std::vector<uint16_t> ha(no), hb(no);
    for (int i = 0; i < no; i++) {
        do
            ha[i] = (uint16_t)rng();
        while (is_nan16(ha[i], 10));
        do
            hb[i] = (uint16_t)rng();
        while (is_nan16(hb[i], 10));
    }
    ha[0] = 0x3c00, hb[0] = 0x3c00; /* equal */
    auto ho = poisoned<uint16_t>(16 * no);
    auto fo = poisoned<float>(4 * no);
    args e;
    e.add<const unsigned short *>(ha.data()).add<const unsigned short *>(hb.data())
        .add<unsigned short *>(ho.data()).add<float *>(fo.data()).add(no);
    r = launch("fp16_ops", {no / 128, 1, 1}, {128, 1, 1}, e);
    long bad_ops = 0;
    auto same = [](uint16_t got, uint16_t want) {
        return got == want || (is_nan16(got, 10) && is_nan16(want, 10));
    };
    auto same_bf = [](uint16_t got, uint16_t want) {
        return got == want || (is_nan16(got, 7) && is_nan16(want, 7));
    };
    for (int i = 0; i < no && r.empty(); i++) {
        double x = ref_h2d(ha[i]), y = ref_h2d(hb[i]);
        const uint16_t *o = &ho[16 * i];
        uint16_t want[9] = {ref_f2h(x + y), ref_f2h(x - y), ref_f2h(x * y), ref_f2h(x / y),
                            (uint16_t)(ha[i] ^ 0x8000), (uint16_t)(ha[i] & 0x7fff),
                            ref_f2h(x * y + x),
                            (uint16_t)((x == y) | (x < y) << 1 | (x > y) << 2 | (x < y) << 3 |
                                       (x == y) << 4),
                            ref_f2h(ref_h2d(ref_f2h(x * y)) + x)};
        for (int k = 0; k < 9; k++)
            if (!same(o[k], want[k])) {
                if (bad_ops < 5)
                    tap_diag("op %d on %04x %04x: %04x want %04x", k, ha[i], hb[i], o[k],
                             want[k]);
                bad_ops++;
            }
        bool h2 = same(o[9], ref_f2h(x + 1.5)) && same(o[10], ref_f2h(y - 2.0)) &&
                  same(o[11], ref_f2h(x * 2)) && same(o[12], ref_f2h(y * 2));
        double bx = ref_bf2d(ha[i]), by = ref_bf2d(hb[i]);
        bool bfok = same_bf(o[13], ref_f2bf((float)(bx + by))) &&
                    same_bf(o[14], ref_f2bf((float)(bx * by))) &&
                    same_bf(o[15], ref_f2bf((float)(bx - by)));
        bool fok = fo[4 * i] == (float)x && fo[4 * i + 1] == (float)y &&
                   (std::isnan(fo[4 * i + 2]) ? std::isnan(x) : fo[4 * i + 2] == (float)x + 1.0f) &&
                   (std::isnan(fo[4 * i + 3]) || fo[4 * i + 3] == (float)bx * 2.0f);
        if (!h2 || !bfok || !fok) {
            if (bad_ops < 5)
                tap_diag("half2/bf16/mixed on %04x %04x: %d %d %d", ha[i], hb[i], h2, bfok, fok);
            bad_ops++;
        }
    }
    tap_ok(r.empty() && bad_ops == 0,
           "__hadd __hsub __hmul __hdiv __hneg __habs __hfma compares, half2, bf16 ops %s",
           r.c_str());
}

static void test_vectors()
{
    const int n = 300;
    struct alignas(16) f4 {
        float x, y, z, w;
    };
    struct alignas(16) i4 {
        int x, y, z, w;
    };
    struct alignas(16) d2 {
        double x, y;
    };
    struct u4 {
        unsigned char x, y, z, w;
    };
    std::vector<f4> va(n), vb(n), vc = poisoned<f4>(n);
    std::vector<i4> ia(n), ic = poisoned<i4>(n);
    std::vector<d2> dd = poisoned<d2>(n);
    std::vector<u4> uu = poisoned<u4>(n);
    for (int i = 0; i < n; i++) {
        va[i] = {(float)i, (float)-i, 0.5f * i, 3.0f};
        vb[i] = {1.0f, 2.0f, (float)(i % 7), -1.0f};
        ia[i] = {i, -i, i * 3, 7 - i};
    }
    args a;
    a.add<const f4 *>(va.data()).add<const f4 *>(vb.data()).add<f4 *>(vc.data())
        .add<const i4 *>(ia.data()).add<i4 *>(ic.data()).add<d2 *>(dd.data())
        .add<u4 *>(uu.data()).add(n);
    std::string r = launch("vectors", {(n + 63) / 64, 1, 1}, {64, 1, 1}, a);
    bool ok = r.empty();
    for (int i = 0; i < n && ok; i++) {
        float av[4] = {va[i].x, va[i].y, va[i].z, va[i].w};
        float bv[4] = {vb[i].x, vb[i].y, vb[i].z, vb[i].w};
        float cv[4] = {vc[i].x, vc[i].y, vc[i].z, vc[i].w};
        int iv[4] = {ia[i].x, ia[i].y, ia[i].z, ia[i].w};
        int icv[4] = {ic[i].x, ic[i].y, ic[i].z, ic[i].w};
        for (int k = 0; k < 4; k++) {
            float v = av[k] * 2.0f + bv[k] - (float)(k + 1) / 2.0f;
            v += 1.0f;
            ok &= cv[k] == 3.0f * -v;
            int w = iv[k];
            ok &= icv[k] == ((((w + 1) * w - 1) % 7) ^ (w << 1));
        }
        ok &= dd[i].x == (double)va[i].x * va[i].x + 0.5 &&
              dd[i].y == (double)va[i].y * va[i].y + 0.25;
        ok &= uu[i].x == (unsigned char)(i + 1) && uu[i].y == 2 && uu[i].z == 3 && uu[i].w == 4;
    }
    tap_ok(ok, "float4/int4/double2/uchar4 operators and make_* %s", r.c_str());

    /* Kernarg layout with mixed alignments. */
    std::vector<float> out = poisoned<float>(16);
    uint16_t half_1_5 = 0x3e00;
    struct alignas(8) f2 {
        float x, y;
    };
    args b;
    b.add<char>(-5).add(2.5).add<short>(-300).add(f4{1, 2, 3, 4}).add(77).add(half_1_5)
        .add<long long>(1LL << 40).add(f2{9.0f, 4.0f}).add<float *>(out.data());
    r = launch("params", {1, 1, 1}, {64, 1, 1}, b);
    ok = r.empty() && out[0] == -5 && out[1] == 2.5f && out[2] == -300 && out[3] == 4321 &&
         out[4] == 77 && out[5] == 1.5f && out[6] == (float)(1LL << 40) && out[7] == 5.0f &&
         out[8] == 2.0f;
    tap_ok(ok, "kernarg C struct layout (char double short float4 int __half long long float2 "
           "ptr), __constant__ %s",
           r.c_str());
}

static unsigned ref_brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
        if (x >> i & 1)
            r |= 1u << (31 - i);
    return r;
}

static void test_intrinsics()
{
    const int n = 2000;
    std::mt19937_64 rng(99);
    std::vector<unsigned> u(2 * n);
    std::vector<unsigned long long> w(2 * n);
    for (int i = 0; i < 2 * n; i++) {
        unsigned long long r = rng();
        int kind = i % 5;
        u[i] = kind == 0 ? 0 : kind == 1 ? (unsigned)r >> (r % 32) : (unsigned)r;
        w[i] = kind == 0 ? 0 : kind == 2 ? r >> (r % 64) : r;
    }
    u[2] = 0x80000000u, u[3] = 0xffffffffu;
    auto o32 = poisoned<unsigned>(12 * n);
    auto o64 = poisoned<unsigned long long>(4 * n);
    args a;
    a.add<const unsigned *>(u.data()).add<const unsigned long long *>(w.data())
        .add<unsigned *>(o32.data()).add<unsigned long long *>(o64.data()).add(n);
    std::string r = launch("intrinsics", {(n + 127) / 128, 1, 1}, {128, 1, 1}, a);
    long bad = 0;
    for (int i = 0; i < n && r.empty(); i++) {
        unsigned x = u[2 * i], y = u[2 * i + 1];
        unsigned long long p = w[2 * i], q = w[2 * i + 1];
        unsigned ref[12];
        int pop = 0, clz = 32, ffs = 0;
        for (int k = 0; k < 32; k++)
            pop += x >> k & 1;
        for (int k = 31; k >= 0; k--)
            if (x >> k & 1) {
                clz = 31 - k;
                break;
            }
        for (int k = 0; k < 32; k++)
            if (x >> k & 1) {
                ffs = k + 1;
                break;
            }
        auto s24 = [](unsigned v) {
            long long t = v & 0xffffff;
            return t >= 0x800000 ? t - 0x1000000 : t;
        };
        ref[0] = pop;
        ref[1] = clz;
        ref[2] = ffs;
        ref[3] = ref_brev(x);
        ref[4] = (unsigned)(unsigned long long)(s24(x) * s24(y));
        ref[5] = (x & 0xffffff) * (y & 0xffffff);
        ref[6] = (unsigned)(((long long)(int)x * (int)y) >> 32);
        ref[7] = (unsigned)(((unsigned long long)x * y) >> 32);
        int pop64 = 0, clz64 = 64, ffs64 = 0;
        for (int k = 0; k < 64; k++)
            pop64 += p >> k & 1;
        for (int k = 63; k >= 0; k--)
            if (p >> k & 1) {
                clz64 = 63 - k;
                break;
            }
        for (int k = 0; k < 64; k++)
            if (p >> k & 1) {
                ffs64 = k + 1;
                break;
            }
        ref[8] = pop64;
        ref[9] = clz64;
        ref[10] = ffs64;
        ref[11] = (unsigned)std::min((int)x, (int)y) + std::max(x, y);
        unsigned long long brev64 = ((unsigned long long)ref_brev((unsigned)p) << 32) |
                                    ref_brev((unsigned)(p >> 32));
        unsigned long long r64[4] = {
            brev64, (unsigned long long)(long long)(((__int128)(long long)p * (long long)q) >> 64),
            (unsigned long long)(((unsigned __int128)p * q) >> 64),
            std::min(p, q) ^ (unsigned long long)std::max((long long)p, (long long)q)};
        for (int k = 0; k < 12; k++)
            if (o32[12 * i + k] != ref[k]) {
                if (bad++ < 5)
                    tap_diag("intrinsic %d on %08x %08x: %08x want %08x", k, x, y, o32[12 * i + k],
                             ref[k]);
            }
        for (int k = 0; k < 4; k++)
            if (o64[4 * i + k] != r64[k]) {
                if (bad++ < 5)
                    tap_diag("intrinsic64 %d: %llx want %llx", k, o64[4 * i + k], r64[k]);
            }
    }
    tap_ok(r.empty() && bad == 0,
           "__popc __clz __ffs __brev __mul24 __umul24 __mulhi __umulhi (ll forms, min/max) %s",
           r.c_str());
}

static void test_math()
{
    const int n = 1000, K = 32;
    std::vector<float> in(n);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-20.0f, 20.0f);
    for (auto &x : in)
        x = dist(rng);
    in[0] = 2.5f, in[1] = -2.5f, in[2] = 0.5f, in[3] = NAN, in[4] = INFINITY, in[5] = -0.0f;
    auto out = poisoned<float>(K * n);
    args a;
    a.add<const float *>(in.data()).add<float *>(out.data()).add(n);
    std::string r = launch("mathf", {(n + 127) / 128, 1, 1}, {128, 1, 1}, a);
    long bad = 0;
    for (int i = 0; i < n && r.empty(); i++) {
        float x = in[i];
        float s, c;
        sincosf(x, &s, &c);
        float ref[K] = {
            sinf(x), cosf(x), expf(x), logf(fabsf(x) + 1.0f), powf(fabsf(x), 0.75f),
            sqrtf(fabsf(x)), 1.0f / sqrtf(fabsf(x) + 1.0f), tanhf(x), erff(x),
            floorf(x) + ceilf(x) * 2 + truncf(x) * 4 + roundf(x) * 8,
            fminf(x, 0.5f) + fmaxf(x, -0.5f), fminf(1.0f, x) + fmaxf(x, 0.25f),
            expf(x) + logf(fabsf(x) + 2.0f), sinf(x) + cosf(x) + powf(2.0f, x),
            x / 3.0f + 1.0f / (x + 100.0f), sqrtf(fabsf(x)) + fmaf(x, x, 1.0f) + fmaf(x, 2.0f, 1.0f),
            x > 0 ? (x < 1 ? x : 1.0f) : 0.0f,
            (float)((int)nearbyintf(x) * 1000 + (int)x * 100 + (int)floorf(x) * 10 +
                    (int)ceilf(x)),
            x + x,
            (float)((std::isnan(x) ? 1 : 0) + (std::isinf(x) ? 2 : 0) + (std::isfinite(x) ? 4 : 0)),
            (float)sin((double)x), (float)exp((double)x * 0.5),
            (float)(fmin((double)x, 2.0) + fmax(0.0, (double)x)), x,
            atan2f(x, 2.0f) + hypotf(x, 3.0f) + cbrtf(x),
            log2f(fabsf(x) + 1.0f) + exp2f(x * 0.1f) + log10f(fabsf(x) + 1.0f),
            fmodf(x, 1.5f) + copysignf(2.0f, x), (float)(int)nearbyint((double)x), s + c,
            (float)lrintf(x), 3 + fabsf(-x), 64.0f};
        for (int k = 0; k < K; k++) {
            float g = out[K * i + k];
            bool nan_ok = std::isnan(ref[k]) && std::isnan(g);
            /* Integer conversions of NaN/inf are undefined: skip those slots. */
            bool skip = !std::isfinite(x) && (k == 17 || k == 27 || k == 29);
            if (!skip && !nan_ok && float_bits(g) != float_bits(ref[k])) {
                if (bad++ < 8)
                    tap_diag("math slot %d at x=%a: %a want %a", k, (double)x, (double)g,
                             (double)ref[k]);
            }
        }
    }
    tap_ok(r.empty() && bad == 0, "float/double math, fast variants, conversions, min/max, "
           "isnan/isinf/isfinite match libm %s",
           r.c_str());
}

static void test_printf_and_failures()
{
    std::string printed;
    const int n = 500;
    args a;
    a.add(n);
    std::string r = launch("printer", {(n + 63) / 64, 1, 1}, {64, 1, 1}, a, 0, 4, &printed);
    std::vector<int> seen(n, 0);
    bool ok = r.empty();
    size_t pos = 0;
    int lines = 0;
    while (ok && pos < printed.size()) {
        size_t e = printed.find('\n', pos);
        if (e == std::string::npos) {
            ok = false;
            break;
        }
        std::string line = printed.substr(pos, e - pos);
        int i;
        unsigned b, t;
        char tail[64];
        if (sscanf(line.c_str(), "line %d of block %u thread %u: %63s", &i, &b, &t, tail) != 4 ||
            i < 0 || i >= n || b * 64 + t != (unsigned)i ||
            strcmp(tail, "abcdefghijklmnopqrstuvwxyz"))
            ok = false;
        else
            seen[i]++;
        lines++;
        pos = e + 1;
    }
    for (int i = 0; i < n; i++)
        ok &= seen[i] == 1;
    tap_ok(ok && lines == n, "device printf: one whole line per call from 4 OS threads %s",
           r.c_str());

    args b;
    b.add(5);
    r = launch("asserter", {2, 1, 1}, {8, 1, 1}, b);
    char want[128];
    snprintf(want, sizeof want, "assertion failed: n < 0 at kernels.hip:%d in ",
             line_of("ASSERT_LINE"));
    tap_ok(r.find(want) == 0 && r.find("asserter") != std::string::npos,
           "assert after <cassert> reports through rt->fail: \"%s\"", r.c_str());

    const char *what[] = {"__trap()", "abort()", "abort()"};
    for (int which = 0; which < 3; which++) {
        args c;
        c.add(which);
        r = launch("trapper", {3, 1, 1}, {8, 1, 1}, c);
        tap_ok(r.find(what[which]) == 0 && r.find("block (1,0,0), thread (3,0,0)") !=
                                                std::string::npos,
               "%s ends the launch: \"%s\"", which == 2 ? "std::abort()" : what[which], r.c_str());
    }

    std::vector<float> x(64);
    args d;
    d.add<float *>(x.data());
    r = launch("loop_sync", {1, 1, 1}, {64, 1, 1}, d);
    tap_ok(r.find("kernel loop_sync reached __syncthreads in loop mode") == 0,
           "barrier in loop mode fails the launch: \"%s\"", r.c_str());

    args e;
    e.add(10);
    r = launch("fiber_assert", {1, 1, 1}, {32, 1, 1}, e);
    tap_ok(r.find("assertion failed: threadIdx.x < (unsigned)n at kernels.hip:") == 0,
           "assert on a fiber: \"%s\"", r.c_str());
}

static void test_fibers()
{
    const int n = 10000, bs = 256, nb = (n + bs - 1) / bs;
    std::vector<float> in(n);
    for (int i = 0; i < n; i++)
        in[i] = (float)(i % 17);
    auto out = poisoned<float>(nb);
    args a;
    a.add<const float *>(in.data()).add<float *>(out.data()).add(n);
    std::string r = launch("reduce_dyn", {nb, 1, 1}, {bs, 1, 1}, a, bs * sizeof(float), 2);
    bool ok = r.empty();
    for (int b = 0; b < nb; b++) {
        float s = 0;
        for (int i = b * bs; i < std::min(n, (b + 1) * bs); i++)
            s += in[i];
        ok &= out[b] == s;
    }
    tap_ok(ok, "block reduction, extern __shared__ inside the kernel, __syncthreads %s",
           r.c_str());

    auto out2 = poisoned<float>(2 * nb);
    args b;
    b.add<const float *>(in.data()).add<float *>(out2.data()).add(n);
    r = launch("reduce_ns", {nb, 1, 1}, {bs, 1, 1}, b, bs * sizeof(float), 2);
    ok = r.empty();
    for (int k = 0; k < nb; k++) {
        float s = 0;
        for (int i = k * bs; i < std::min(n, (k + 1) * bs); i++)
            s += in[i];
        ok &= out2[2 * k] == s && out2[2 * k + 1] == bs * (bs - 1) / 2;
    }
    tap_ok(ok, "extern __shared__ and __shared__ at namespace scope %s", r.c_str());

    std::vector<double> din(n);
    for (int i = 0; i < n; i++)
        din[i] = i * 0.5;
    auto dout = poisoned<double>(nb);
    args c;
    c.add<const double *>(din.data()).add<double *>(dout.data()).add(n);
    r = launch("reduce_macro", {nb, 1, 1}, {bs, 1, 1}, c, bs * sizeof(double), 2);
    ok = r.empty();
    for (int k = 0; k < nb; k++) {
        double s = 0;
        for (int i = k * bs; i < std::min(n, (k + 1) * bs); i++)
            s += din[i];
        ok &= dout[k] == s;
    }
    tap_ok(ok, "HIP_DYNAMIC_SHARED %s", r.c_str());

    /* Warp reduction: integers in float, so the sums are exact. */
    const int wb = 192, wn = wb * 5;
    std::vector<float> win(wn);
    for (int i = 0; i < wn; i++)
        win[i] = (float)(i % 13);
    auto wout = poisoned<float>(5), xout = poisoned<float>(wn);
    args d;
    d.add<const float *>(win.data()).add<float *>(wout.data()).add<float *>(xout.data());
    r = launch("warp_reduce", {5, 1, 1}, {wb, 1, 1}, d, 0, 2);
    ok = r.empty();
    for (int k = 0; k < 5; k++) {
        float s = 0;
        for (int i = k * wb; i < (k + 1) * wb; i++)
            s += win[i];
        ok &= wout[k] == s;
        for (int wv = 0; wv < wb / 64; wv++) {
            float ws = 0;
            for (int l = 0; l < 64; l++)
                ws += win[k * wb + wv * 64 + l];
            for (int l = 0; l < 64; l++)
                ok &= xout[k * wb + wv * 64 + l] == ws;
        }
    }
    tap_ok(ok, "warp reduction with __shfl_down and __shfl_xor_sync %s", r.c_str());

    /* Shuffle semantics with sub-group widths and a partial last warp. */
    for (int width : {64, 16, 8}) {
        const int bsz = 100;
        auto so = poisoned<long long>(12 * bsz * 2);
        args e;
        e.add<long long *>(so.data()).add(width);
        r = launch("shfl_semantics", {2, 1, 1}, {bsz, 1, 1}, e, 0, 2);
        ok = r.empty();
        for (int blk = 0; blk < 2 && ok; blk++)
            for (int t = 0; t < bsz; t++) {
                int lane = t % 64, wbase = t - lane;
                int live = std::min(64, bsz - wbase);
                auto get = [&](int src, long long own, long long (*val)(int)) {
                    return src >= 0 && src < live ? val(src) : own;
                };
                int base = lane & ~(width - 1);
                int s0 = (3 & (width - 1)) + base;
                int s1 = lane - 5 < base ? lane : lane - 5;
                int s2 = (lane & (width - 1)) + 5 >= width ? lane : lane + 5;
                int s3 = (lane ^ 9) >= ((lane + width) & ~(width - 1)) ? lane : lane ^ 9;
                int s4 = ((lane + 7) & (width - 1)) + base;
                int s5 = (lane & (width - 1)) + 1 >= width ? lane : lane + 1;
                int s6 = lane - 2 < base ? lane : lane - 2;
                unsigned long long ballot = 0, active = 0;
                for (int l = 0; l < live; l++) {
                    active |= 1ull << l;
                    if (l % 3 == 0)
                        ballot |= 1ull << l;
                }
                long long want[12] = {
                    get(s0, lane * 10, [](int l) { return (long long)l * 10; }),
                    get(s1, lane, [](int l) { return (long long)l; }),
                    get(s2, lane, [](int l) { return (long long)l; }),
                    get(s3, lane, [](int l) { return (long long)l; }),
                    get(s4, 2 * lane + 1, [](int l) { return (long long)(2 * l + 1); }),
                    get(s5, lane, [](int l) { return (long long)l; }),
                    get(s6, lane, [](int l) { return (long long)l; }),
                    (long long)ballot,
                    (live > 40) | 1 << 1 | (live <= 10) << 2 | (live > 70) << 3,
                    (long long)active,
                    lane,
                    (long long)(active & 0xffffffffull)};
                const long long *o = &so[12 * (blk * bsz + t)];
                for (int k = 0; k < 12; k++)
                    if (o[k] != want[k]) {
                        tap_diag("width %d thread %d slot %d: %lld want %lld", width, t, k, o[k],
                                 want[k]);
                        ok = false;
                    }
            }
        tap_ok(ok, "__shfl/_up/_down/_xor (int unsigned float double long long), __ballot, "
               "__any/__all, __activemask, width %d, partial warp %s",
               width, r.c_str());
    }

    const int eb = 130;
    auto eo = poisoned<unsigned long long>(3 * eb);
    args f;
    f.add<unsigned long long *>(eo.data());
    r = launch("early_exit", {1, 1, 1}, {eb, 1, 1}, f, 0, 1);
    ok = r.empty();
    for (int t = 0; t < eb && ok; t++) {
        if (t % 3 == 0)
            continue;
        int w = t / 64;
        unsigned long long act = 0;
        for (int l = 0; l < 64 && w * 64 + l < eb; l++)
            if ((w * 64 + l) % 3)
                act |= 1ull << l;
        unsigned lane0 = (unsigned)w * 64, from = lane0 % 3 ? lane0 : (unsigned)t;
        ok &= eo[t] == 0 && eo[eb + t] == act && eo[2 * eb + t] == from;
    }
    tap_ok(ok, "returned lanes leave __ballot/__activemask and __shfl gives own value %s",
           r.c_str());

    const int N = 70;
    std::vector<float> A(N * N), B(N * N);
    auto C = poisoned<float>(N * N);
    for (int i = 0; i < N * N; i++) {
        A[i] = (float)(i % 7) - 3;
        B[i] = (float)(i % 5) - 2;
    }
    args g;
    g.add<const float *>(A.data()).add<const float *>(B.data()).add<float *>(C.data()).add(N);
    r = launch("matmul_tiled", {(N + 15) / 16, (N + 15) / 16, 1}, {16, 16, 1}, g, 0, 2);
    ok = r.empty();
    for (int i = 0; i < N && ok; i++)
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int k = 0; k < N; k++)
                s += A[i * N + k] * B[k * N + j];
            ok &= C[i * N + j] == s;
        }
    tap_ok(ok, "tiled matmul, static __shared__ tiles, 2-D grid and block %s", r.c_str());

    auto so = poisoned<int>(4 * 3);
    args h;
    h.add<int *>(so.data());
    r = launch("sync_count", {3, 1, 1}, {200, 1, 1}, h, 0, 2);
    ok = r.empty();
    for (int b2 = 0; b2 < 3; b2++)
        ok &= so[4 * b2] == 67 && so[4 * b2 + 1] == 1 && so[4 * b2 + 2] == 1 &&
              so[4 * b2 + 3] == 200;
    tap_ok(ok, "__syncthreads_count/_and/_or %s", r.c_str());
}

/* vadd over 2^26 floats, all blocks on one OS thread, vs a plain C loop. */
static void __attribute__((noinline)) plain_vadd(const float *a, const float *b, float *c,
                                                 unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}

static void test_perf()
{
    if (getenv("HK_SKIP_PERF")) {
        tap_skip("vadd speed vs plain loop", "HK_SKIP_PERF set");
        return;
    }
    /* Blocks are run straight through run_block, as one worker of the real
     * runtime would, so the test runtime's own bookkeeping is not timed. */
    const hk_host_kernel_desc *k = kernel("vadd");
    const unsigned n = 1u << 26, bs = 256;
    std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.0f);
    args x;
    x.add<const float *>(a.data()).add<const float *>(b.data()).add<float *>(c.data()).add(n);
    const void *ka = x.data();
    hk_host_runtime rt;
    memset(&rt, 0, sizeof rt);
    rt.size = sizeof rt;
    hk_host_block blk;
    memset(&blk, 0, sizeof blk);
    blk.dim = {bs, 1, 1};
    blk.grid = {n / bs, 1, 1};
    blk.nthreads = bs;
    blk.kernel = "vadd";
    double best_k = 1e9, best_p = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        auto t0 = std::chrono::steady_clock::now();
        for (unsigned i = 0; i < n / bs; i++) {
            blk.idx = {i, 0, 0};
            k->run_block(&rt, &blk, ka);
        }
        auto t1 = std::chrono::steady_clock::now();
        plain_vadd(a.data(), b.data(), c.data(), n);
        auto t2 = std::chrono::steady_clock::now();
        best_k = std::min(best_k, std::chrono::duration<double>(t1 - t0).count());
        best_p = std::min(best_p, std::chrono::duration<double>(t2 - t1).count());
    }
    bool r_ok = c[n - 1] == 3.0f;
    double ratio = best_p / best_k;
    tap_diag("vadd 2^26: kernel %.1f ms, plain loop %.1f ms, speed ratio %.2f", best_k * 1e3,
             best_p * 1e3, ratio);
    tap_ok(r_ok && ratio >= 0.8, "loop-mode vadd within 0.8x of a plain C loop (%.2f)",
           ratio);
}

static void test_source_rewrite()
{
    const char *src =
        "#include <hip/hip_runtime.h>\n"                                      /* 1 */
        "extern __shared__ __align__(16) float\n"                             /* 2 */
        "    gbuf[];  // namespace scope, over two lines\n"                   /* 3 */
        "// extern __shared__ float not_me[];\n"                              /* 4 */
        "const char *str = \"extern __shared__ float not_me2[];\";\n"         /* 5 */
        "const char *raw = R\"x(extern __shared__ float not_me3[];)x\";\n"    /* 6 */
        "__global__ void k(float *o) {\n"                                     /* 7 */
        "    extern __shared__ float sdyn[]; extern __shared__ alignas(8) unsigned char raw8[];\n"
        "    extern __shared__ float grid2[][4];\n"                           /* 9 */
        "    o[0] = sdyn[0] + gbuf[0] + raw8[0] + grid2[1][2];\n"             /* 10 */
        "    undeclared_on_line_11 = 1;\n"                                    /* 11 */
        "}\n"                                                                 /* 12 */
        "namespace a { extern __shared__ int nsa[]; }\n"                      /* 13 */
        "extern \"C\" { extern __shared__ double ecd[]; }\n"                  /* 14 */
        "/* a comment\n"                                                      /* 15 */
        "   extern __shared__ float not_me4[]; */ int after = undeclared_on_line_16;\n"
        "#define M extern __shared__ float not_me5[];\n"                      /* 17 */
        "int last = undeclared_on_line_18;\n";                                /* 18 */
    hkc_source_kernel ks[1];
    memset(ks, 0, sizeof ks);
    ks[0].name = const_cast<char *>("k");
    hkc_strbuf out, err;
    hkc_strbuf_init(&out);
    hkc_strbuf_init(&err);
    int rc = hkc_host_source_prepare("user/dir/my \"file\".hip", src, ks, 1, &out, &err);
    std::string tu = rc == 0 ? out.data : "";
    hkc_strbuf_free(&out);
    tap_ok(rc == 0, "hkc_host_source_prepare returns 0");
    bool text_ok =
        tu.find("float *sdyn = (float *)hk_host_dynamic_shared();") != std::string::npos &&
        tu.find("unsigned char *raw8 = (unsigned char *)hk_host_dynamic_shared();") !=
            std::string::npos &&
        tu.find("float (*grid2)[4] = (float (*)[4])hk_host_dynamic_shared();") !=
            std::string::npos &&
        tu.find("\n#define gbuf ((float *)hk_host_dynamic_shared())\n#line 3 ") !=
            std::string::npos &&
        tu.find("\n#define nsa ((int *)hk_host_dynamic_shared())\n") != std::string::npos &&
        tu.find("\n#define ecd ((double *)hk_host_dynamic_shared())\n") != std::string::npos &&
        tu.find("not_me[]") != std::string::npos && tu.find("not_me2[]") != std::string::npos &&
        tu.find("not_me3[]") != std::string::npos && tu.find("not_me4[]") != std::string::npos &&
        tu.find("not_me5[]") != std::string::npos &&
        tu.find("#line 1 \"user/dir/my \\\"file\\\".hip\"\n") != std::string::npos &&
        tu.find("HK_HOST_KERNEL(k, 0)\nHK_HOST_KERNEL_TABLE_BEGIN\nHK_HOST_KERNEL_ENTRY(k)\n"
                "HK_HOST_KERNEL_TABLE_END(1)\n") != std::string::npos;
    if (!text_ok)
        tap_diag("translation unit:\n%s", tu.c_str());
    tap_ok(text_ok, "extern __shared__ rewritten in functions, namespaces and extern \"C\" blocks; "
           "comments, strings, raw strings and directives untouched");

    std::string path = g_tmp + "/lines.cpp", log;
    write_file(path, tu);
    const char *cxx = getenv("HIPKIT_CXX");
    run(std::string(cxx ? cxx : "g++") + " -std=c++17 -fsyntax-only -I " + g_root +
            "/src/core/backends/host/include -x c++ " + path,
        &log);
    bool lines_ok = log.find("my \"file\".hip:11:") != std::string::npos &&
                    log.find("my \"file\".hip:16:") != std::string::npos &&
                    log.find("my \"file\".hip:18:") != std::string::npos &&
                    log.find("undeclared_on_line_11") != std::string::npos;
    /* No other errors: the rewritten declarations themselves compile. */
    size_t errors = 0;
    for (size_t p = log.find("error:"); p != std::string::npos; p = log.find("error:", p + 1))
        errors++;
    if (!lines_ok || errors != 3)
        tap_diag("compiler said:\n%s", log.c_str());
    tap_ok(lines_ok && errors == 3, "compile errors cite the user's file and line numbers");

    hkc_strbuf_init(&out);
    hkc_strbuf_clear(&err);
    rc = hkc_host_source_prepare(nullptr, src, ks, 1, &out, &err);
    tap_ok(rc == HK_EINVAL, "NULL name gives HK_EINVAL");
    ks[0].name = const_cast<char *>("1bad name");
    hkc_strbuf_clear(&err);
    rc = hkc_host_source_prepare("x.hip", src, ks, 1, &out, &err);
    tap_ok(rc == HK_EINVAL && strstr(err.data, "1bad name"),
           "a kernel name that is not an identifier gives HK_EINVAL: %s", err.data);
    hkc_strbuf_free(&out);
    hkc_strbuf_free(&err);
}

int main(int argc, char **argv)
{
    tap_init();
    if (argc > 1)
        g_root = argv[1];
    char tmpl[] = "/tmp/hk_host_lang_XXXXXX";
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        return 1;
    }
    g_tmp = tmpl;

    test_source_rewrite();

    g_kernel_src = read_file(g_root + "/tests/host_lang/kernels.hip");
    std::vector<kernel_spec> ks = {
        {"axpy", 0},        {"vadd", 0},         {"index3d", 0},       {"histogram", 0},
        {"atomics", 0},     {"fp16_from_float", 0}, {"fp16_from_double", 0},
        {"fp16_to_float", 0}, {"fp16_ops", 0},   {"vectors", 0},       {"params", 0},
        {"intrinsics", 0},  {"mathf", 0},        {"printer", 0},       {"asserter", 0},
        {"trapper", 0},     {"loop_sync", 0},    {"reduce_dyn", 1},    {"reduce_ns", 1},
        {"reduce_macro", 1}, {"warp_reduce", 1}, {"shfl_semantics", 1}, {"early_exit", 1},
        {"matmul_tiled", 1}, {"sync_count", 1},  {"fiber_assert", 1},
    };
    std::string warnings;
    void *h = g_kernel_src.empty()
                  ? nullptr
                  : build_module("kernels", "kernels.hip", g_kernel_src, ks, &warnings);
    tap_ok(h != nullptr, "kernels.hip compiles as a module and loads");
    if (!warnings.empty())
        tap_diag("compiler output:\n%s", warnings.c_str());
    tap_ok(h && warnings.empty(), "no warnings with -Wall -Wextra");
    if (!h)
        return tap_done();
    auto abi = static_cast<const uint32_t *>(dlsym(h, "hk_host_module_abi"));
    auto count = static_cast<const uint32_t *>(dlsym(h, "hk_host_kernel_count"));
    g_kernels = static_cast<const hk_host_kernel_desc *>(dlsym(h, "hk_host_kernels"));
    bool table_ok = abi && *abi == HK_HOST_ABI_VERSION && count && *count == ks.size() &&
                    g_kernels;
    for (size_t i = 0; table_ok && i < ks.size(); i++)
        table_ok = !strcmp(g_kernels[i].name, ks[i].name) &&
                   g_kernels[i].uses_sync == (uint32_t)ks[i].sync;
    tap_ok(table_ok, "module exports hk_host_module_abi, hk_host_kernel_count, hk_host_kernels");
    /* dlsym on a handle also searches the module's dependencies (libc has
     * abort): the symbol must not come from the module itself. */
    Dl_info self, info;
    bool hidden = dladdr(g_kernels, &self) != 0;
    for (const char *sym : {"abort", "__assert_fail", "axpy", "hk_host_tls", "__expf"}) {
        void *p = dlsym(h, sym);
        if (p && dladdr(p, &info) && info.dli_fbase == self.dli_fbase) {
            tap_diag("module exports %s", sym);
            hidden = false;
        }
    }
    tap_ok(hidden, "abort, __assert_fail, kernels and the module's state stay hidden");
    if (!table_ok)
        return tap_done();
    g_nkernels = *count;

    test_axpy();
    test_index3d();
    test_atomics();
    test_fp16();
    test_vectors();
    test_intrinsics();
    test_math();
    test_printf_and_failures();
    test_fibers();
    test_perf();

    std::string log;
    run("rm -rf " + g_tmp, &log);
    return tap_done();
}
