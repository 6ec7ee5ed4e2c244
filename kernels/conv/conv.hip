// conv: convolutions, pools, im2col, upsampling and strided 2-D copies over
// contiguous NCHW tensors (NCL for the 1-D forms), for f32, f64, f16 and
// bf16 (f16 and bf16 accumulate in f32, f32 in f32, f64 in f64). The
// semantics are candle's conv.cu / fill.cu and PyTorch's (docs/families/conv.md);
// the plugin's ops (plugins/conv/conv.c) check shapes and launch these.
//
// Every kernel but conv2d_T walks its outputs with a grid stride (any grid,
// any block). The 1-D ops are the 2-D kernels with a height of 1.
//
//   conv2d_T(x, w, y, n, c, h, wd, k, r, s, oh, ow, sh, sw, ph, pw, dh, dw, groups)
//       implicit GEMM: per group, Y[k][pixel] = W[k][q] X[q][pixel] with
//       q = (channel, kernel row, kernel column) gathered from x on the fly
//       (no im2col buffer); tiles of 64 output channels x 128 output pixels
//       (pixels run across the batch), block 256, grid
//       {ceil(n oh ow / 128), ceil(k / groups / 64), groups}.
//   conv2d_direct_T(same)      one output per thread step, any launch.
//   conv2d_nhwc_T(same, x n h w c, w k r s c/groups, y n oh ow k)
//       the implicit GEMM over channels-last tensors (same grid).
//   conv_transpose2d_T(x, w, y, n, c, h, wd, k, r, s, oh, ow, sh, sw, ph, pw, dh, dw, groups)
//       x n c h w, w c (k / groups) r s, y n k oh ow (output padding only
//       widens oh, ow).
//   im2col_T(x, col, n, c, h, wd, r, s, oh, ow, sh, sw, ph, pw, dh, dw)
//       col n oh ow c r s (candle's layout), zeros where the patch leaves x.
//   col2im1d_T(x, y, n, lin, c, k, lout, stride)
//       x n lin c k, y n c lout: y[l] sums x[i][kk] over i stride + kk = l.
//   avg_pool2d_T / max_pool2d_T(x, y, planes, h, wd, kh, kw, sh, sw, oh, ow)
//       no padding; max propagates NaN as PyTorch does.
//   upsample_nearest2d_T(x, y, planes, h, wd, oh, ow, sch, scw)
//       source index min(floor(dst * scale), size - 1), scale = in / out.
//   copy2d_T(src, dst, d1, d2, src_s, dst_s)  dst[i d_s + j] = src[i s_s + j].
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

__device__ inline float hkc_up(__half v) { return __half2float(v); }
__device__ inline float hkc_up(__hip_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float hkc_up(float v) { return v; }
__device__ inline double hkc_up(double v) { return v; }
__device__ inline void hkc_put(__half *p, float v) { *p = __float2half(v); }
__device__ inline void hkc_put(__hip_bfloat16 *p, float v) { *p = __float2bfloat16(v); }
__device__ inline void hkc_put(float *p, float v) { *p = v; }
__device__ inline void hkc_put(double *p, double v) { *p = v; }
template <typename T> __device__ inline T hkc_zero() { return (T)0; }
template <> __device__ inline __half hkc_zero<__half>() { return __float2half(0.0f); }
template <> __device__ inline __hip_bfloat16 hkc_zero<__hip_bfloat16>() { return __float2bfloat16(0.0f); }
// The column kernels (im2col, unfold) only move elements: they run on the
// unsigned integer of the element's size, plain copies with no class
// type's conversions (unfold_tiled's shifts become byte permutes), and
// zero is all-zero bits for every float type.
template <int N> struct hkc_raw;
template <> struct hkc_raw<2> { typedef unsigned short type; };
template <> struct hkc_raw<4> { typedef unsigned type; };
template <> struct hkc_raw<8> { typedef unsigned long long type; };
// The bytes of v (4, 8, 16 or a multiple of 16 of them) stored at p, which
// is aligned to them, as native vector stores. A store of a struct of
// elements was split into one store per element wherever the compiler
// merged it with the unaligned path's element stores (it kept their
// alignment of one element): the columns, pools and upsampling stored 2 or
// 4 bytes an instruction. On NVIDIA the vector store is spelled in PTX,
// which no pass splits (a uint4 store was split the same way).
template <int B> struct hkc_native;
template <> struct hkc_native<4> { typedef unsigned type; };
template <> struct hkc_native<8> { typedef uint2 type; };
template <> struct hkc_native<16> { typedef uint4 type; };
__device__ inline void hkc_store_native(void *p, unsigned v) { *(unsigned *)p = v; }
__device__ inline void hkc_store_native(void *p, uint2 v)
{
#ifdef __CUDA_ARCH__
    asm("st.v2.u32 [%0], {%1, %2};" : : "l"(p), "r"(v.x), "r"(v.y) : "memory");
#else
    *(uint2 *)p = v;
#endif
}
__device__ inline void hkc_store_native(void *p, uint4 v)
{
#ifdef __CUDA_ARCH__
    asm("st.v4.u32 [%0], {%1, %2, %3, %4};" : : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
#else
    *(uint4 *)p = v;
#endif
}
template <typename V> __device__ inline void hkc_store_bits(void *p, const V &v)
{
    constexpr int B = sizeof(V) > 16 ? 16 : (int)sizeof(V);
    typedef typename hkc_native<B>::type N;
#pragma unroll
    for (int i = 0; i < (int)sizeof(V) / B; i++) {
        N n;
        memcpy(&n, (const char *)&v + i * B, B);
        hkc_store_native((char *)p + i * B, n);
    }
}

// Four consecutive elements stored as one vector when p is aligned to it
// (left: how many of them lie inside the row).
template <typename T> struct alignas(4 * sizeof(T)) hkc_quad { T e[4]; };
template <typename T> __device__ inline void hkc_put4(T *p, const T *v, unsigned left)
{
    if (left >= 4 && (unsigned long long)p % sizeof(hkc_quad<T>) == 0) {
        hkc_quad<T> q;
#pragma unroll
        for (int k = 0; k < 4; k++)
            q.e[k] = v[k];
        hkc_store_bits(p, q);
    } else {
        for (unsigned k = 0; k < 4 && k < left; k++)
            p[k] = v[k];
    }
}

#define HKC_STEP(i, total)                                                                                    \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (total);                     \
         i += (long long)gridDim.x * blockDim.x)

// Row kernels (im2col, pools, upsampling): a row of the output is contiguous;
// threadIdx.x walks along it, threadIdx.y and blockIdx.x over rows, so the
// per-row index arithmetic is done once a row and any grid covers every
// row once (the op's geometry: lanes along the row, 256 / lanes rows a
// block; on the CPU one lane, a whole row an iteration).
#define HKC_ROWS(r, rows)                                                                                     \
    for (long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y; r < (rows);                          \
         r += (long long)gridDim.x * blockDim.y)

// The geometry every convolution kernel takes, in its argument order.
struct hkc_geom {
    int n, c, h, wd, k, r, s, oh, ow, sh, sw, ph, pw, dh, dw, groups;
};

#define HKC_BM 64
#define HKC_BN 128
#define HKC_BK 8

// The implicit GEMM. Thread t loads two weights (row t / 4, columns 2 (t %
// 4) + {0, 1} of the tile) and four input values (pixel column t % 128,
// rows t / 128 + 2 e) into registers for the next tile while the block
// multiplies the current one from shared memory; it then owns output
// rows 4 ty + {0..3} and columns 4 tx + {0..3}, 64 + 4 tx + {0..3} (tx = t
// % 16, ty = t / 16), so its shared reads are 4-wide and conflict-free.
// NHWC only changes where a (channel, row, column) of x lives: q then
// runs over (row, column, channel), channels fastest, like the weights.
template <typename T, typename A, bool NHWC>
__device__ void hkc_conv_tiled(const T *x, const T *w, T *y, const hkc_geom g)
{
    __shared__ __align__(16) A sa[HKC_BK][HKC_BM];
    __shared__ __align__(16) A sb[HKC_BK][HKC_BN];
    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    const int grp = blockIdx.z, cg = g.c / g.groups, kg = g.k / g.groups;
    const int rs = g.r * g.s, Q = cg * rs, ohw = g.oh * g.ow;
    const long long np = (long long)g.n * ohw, j0 = (long long)blockIdx.x * HKC_BN;
    const int m0 = blockIdx.y * HKC_BM;
    // this thread's gathered pixel
    const long long p = j0 + t % HKC_BN;
    const bool pin = p < np;
    int img = 0, bh = 0, bw = 0;
    if (pin) {
        img = (int)(p / ohw);
        int pix = (int)(p - (long long)img * ohw), yo = pix / g.ow;
        bh = yo * g.sh - g.ph, bw = (pix - yo * g.ow) * g.sw - g.pw;
    }
    const T *xb = NHWC ? x + (long long)img * g.h * g.wd * g.c + (long long)grp * cg
                       : x + ((long long)img * g.c + (long long)grp * cg) * g.h * g.wd;
    const int am = t / 4, aq = (t % 4) * 2;
    const T *wb = w + ((long long)grp * kg + m0 + am) * Q;
    const bool amin = m0 + am < kg;
    A ra[2], rb[4], acc[4][8];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            acc[i][j] = 0;
    // Each gathered row q = k0 + t / 128 + 2 e as digits (hi, mid, lo) of
    // q in the mixed radix (.., nmid, nlo): (channel, tap row, tap column)
    // for NCHW, (tap row, tap column, channel) for NHWC. They start with
    // divisions and then advance by HKC_BK with carries, so the gather
    // costs no integer division per element.
    const int nmid = NHWC ? g.s : g.r, nlo = NHWC ? cg : g.s;
    int hi[4], mid[4], lo[4];
    for (int e = 0; e < 4; e++) {
        int q = t / HKC_BN + 2 * e, rest = q / nlo;
        lo[e] = q - rest * nlo, hi[e] = rest / nmid, mid[e] = rest - hi[e] * nmid;
    }
    auto fetch = [&](int k0) {
        for (int e = 0; e < 2; e++) {
            int q = k0 + aq + e;
            ra[e] = amin && q < Q ? (A)hkc_up(wb[q]) : (A)0;
        }
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int q = k0 + t / HKC_BN + 2 * e;
            A v = 0;
            if (pin && q < Q) {
                int ci = NHWC ? lo[e] : hi[e], rr = NHWC ? hi[e] : mid[e], ss = NHWC ? mid[e] : lo[e];
                int ih = bh + rr * g.dh, iw = bw + ss * g.dw;
                if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.wd)
                    v = hkc_up(NHWC ? xb[((long long)ih * g.wd + iw) * g.c + ci]
                                    : xb[((long long)ci * g.h + ih) * g.wd + iw]);
            }
            rb[e] = v;
            lo[e] += HKC_BK;
            while (lo[e] >= nlo) {
                lo[e] -= nlo;
                if (++mid[e] == nmid)
                    mid[e] = 0, hi[e]++;
            }
        }
    };
    fetch(0);
    for (int k0 = 0; k0 < Q; k0 += HKC_BK) {
        __syncthreads();
        for (int e = 0; e < 2; e++)
            sa[aq + e][am] = ra[e];
        for (int e = 0; e < 4; e++)
            sb[t / HKC_BN + 2 * e][t % HKC_BN] = rb[e];
        __syncthreads();
        if (k0 + HKC_BK < Q)
            fetch(k0 + HKC_BK);
#pragma unroll
        for (int kk = 0; kk < HKC_BK; kk++) {
            A av[4], bv[8];
#pragma unroll
            for (int i = 0; i < 4; i++)
                av[i] = sa[kk][ty * 4 + i];
#pragma unroll
            for (int j = 0; j < 4; j++)
                bv[j] = sb[kk][tx * 4 + j], bv[4 + j] = sb[kk][64 + tx * 4 + j];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] += av[i] * bv[j];
        }
    }
    for (int j = 0; j < 8; j++) {
        long long q = j0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
        if (q >= np)
            continue;
        long long im = q / ohw, pix = q - im * ohw;
        for (int i = 0; i < 4; i++) {
            int m = m0 + ty * 4 + i;
            if (m >= kg)
                continue;
            long long ko = (long long)grp * kg + m;
            hkc_put(NHWC ? y + (im * ohw + pix) * g.k + ko : y + (im * g.k + ko) * ohw + pix, acc[i][j]);
        }
    }
}

template <typename T, typename A>
__device__ void hkc_conv_direct(const T *x, const T *w, T *y, const hkc_geom g)
{
    const int cg = g.c / g.groups, kg = g.k / g.groups;
    const long long total = (long long)g.n * g.k * g.oh * g.ow;
    HKC_STEP(i, total) {
        int ox = (int)(i % g.ow), oy = (int)(i / g.ow % g.oh), ko = (int)(i / ((long long)g.ow * g.oh) % g.k);
        long long img = i / ((long long)g.ow * g.oh * g.k);
        int grp = ko / kg;
        A sum = 0;
        for (int ci = 0; ci < cg; ci++) {
            const T *xp = x + (img * g.c + (long long)grp * cg + ci) * g.h * g.wd;
            const T *wp = w + ((long long)ko * cg + ci) * g.r * g.s;
            for (int rr = 0; rr < g.r; rr++) {
                int ih = oy * g.sh - g.ph + rr * g.dh;
                if (ih < 0 || ih >= g.h)
                    continue;
                for (int ss = 0; ss < g.s; ss++) {
                    int iw = ox * g.sw - g.pw + ss * g.dw;
                    if (iw >= 0 && iw < g.wd)
                        sum += (A)hkc_up(xp[(long long)ih * g.wd + iw]) * (A)hkc_up(wp[rr * g.s + ss]);
                }
            }
        }
        hkc_put(y + i, sum);
    }
}

// Output (img, ko, oy, ox) gathers x[ci][ih][iw] w[ci][ko % kg][rr][ss]
// over the taps with ih sh + rr dh = oy + ph (likewise for columns).
template <typename T, typename A>
__device__ void hkc_conv_transpose(const T *x, const T *w, T *y, const hkc_geom g)
{
    const int cg = g.c / g.groups, kg = g.k / g.groups;
    const long long total = (long long)g.n * g.k * g.oh * g.ow;
    HKC_STEP(i, total) {
        int ox = (int)(i % g.ow), oy = (int)(i / g.ow % g.oh), ko = (int)(i / ((long long)g.ow * g.oh) % g.k);
        long long img = i / ((long long)g.ow * g.oh * g.k);
        int grp = ko / kg, kl = ko - grp * kg;
        A sum = 0;
        for (int rr = 0; rr < g.r; rr++) {
            int th = oy + g.ph - rr * g.dh;
            if (th < 0 || th % g.sh != 0 || th / g.sh >= g.h)
                continue;
            for (int ss = 0; ss < g.s; ss++) {
                int tw = ox + g.pw - ss * g.dw;
                if (tw < 0 || tw % g.sw != 0 || tw / g.sw >= g.wd)
                    continue;
                long long at = (long long)(th / g.sh) * g.wd + tw / g.sw;
                for (int ci = 0; ci < cg; ci++) {
                    long long c = (long long)grp * cg + ci;
                    sum += (A)hkc_up(x[(img * g.c + c) * g.h * g.wd + at]) *
                           (A)hkc_up(w[((c * kg + kl) * g.r + rr) * g.s + ss]);
                }
            }
        }
        hkc_put(y + i, sum);
    }
}

// im2col: row p = (img, oy, ox) of col holds c x r x s taps; each lane
// writes 4 consecutive taps (one 16-byte store when aligned), stepping the
// tap indices instead of dividing for each.
template <typename T>
__device__ void hkc_im2col(const T *x, T *col, const hkc_geom g)
{
    const long long rows = (long long)g.n * g.oh * g.ow;
    const unsigned cols = (unsigned)(g.c * g.r * g.s), rs = (unsigned)(g.r * g.s);
    HKC_ROWS(p, rows) {
        long long img = p / ((long long)g.oh * g.ow);
        int rest = (int)(p - img * g.oh * g.ow), oy = rest / g.ow, ox = rest - oy * g.ow;
        int ih0 = oy * g.sh - g.ph, iw0 = ox * g.sw - g.pw;
        const T *xi = x + img * g.c * g.h * g.wd;
        T *out = col + p * cols;
        for (unsigned j = threadIdx.x * 4; j < cols; j += blockDim.x * 4) {
            unsigned ci = j / rs, t = j - ci * rs, rr = t / g.s, ss = t - rr * g.s;
            T v[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                int ih = ih0 + (int)rr * g.dh, iw = iw0 + (int)ss * g.dw;
                v[k] = j + k < cols && ci < (unsigned)g.c && ih >= 0 && ih < g.h && iw >= 0 && iw < g.wd
                           ? xi[((long long)ci * g.h + ih) * g.wd + iw]
                           : hkc_zero<T>();
                if (++ss == (unsigned)g.s) {
                    ss = 0;
                    if (++rr == (unsigned)g.r)
                        rr = 0, ci++;
                }
            }
            hkc_put4(out + j, v, cols - j);
        }
    }
}

// unfold (PyTorch's layout, the GEMM route's columns): row (img, ci, a, b)
// of col holds that tap's input at every output pixel, a shifted copy of
// rows of one input plane, so the gemm reads col as B (k x n, row-major)
// through its 16-byte loads.
template <typename T>
__device__ void hkc_unfold(const T *x, T *col, const hkc_geom g)
{
    const long long rows = (long long)g.n * g.c * g.r * g.s;
    const int pix = g.oh * g.ow, rs = g.r * g.s;
    HKC_ROWS(row, rows) {
        long long plane = row / rs; // img * c + ci
        int t = (int)(row - plane * rs), a = t / g.s, b = t - a * g.s;
        const T *xp = x + plane * g.h * g.wd;
        T *out = col + row * pix;
        const int ih0 = a * g.dh - g.ph, iw0 = b * g.dw - g.pw;
        // 4 contiguous elements a lane, one store (measured on the H100 for
        // f16: 1244 GB/s; 8 a lane 600, 4 a lane blockDim.x apart 801)
        for (int p = threadIdx.x * 4; p < pix; p += blockDim.x * 4) {
            int oy = p / g.ow, ox = p - oy * g.ow;
            T v[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                int ih = oy * g.sh + ih0, iw = ox * g.sw + iw0;
                v[k] = p + k < pix && ih >= 0 && ih < g.h && iw >= 0 && iw < g.wd ? xp[(long long)ih * g.wd + iw]
                                                                                 : hkc_zero<T>();
                if (++ox == g.ow)
                    ox = 0, oy++;
            }
            hkc_put4(out + p, v, (unsigned)(pix - p));
        }
    }
}

// Mixed-radix counters: a position (d0, d1, d2, d3) of a row-major index
// space with radices (unbounded, n1, n2, n3), advanced by a fixed step
// that was split into digits once, so a grid-stride loop finds its next
// element's coordinates with compares and subtracts instead of integer
// divisions (a digit plus a digit plus a carry stays below twice its
// radix).
struct hkc_digits {
    int d0, d1, d2, d3;
};
__device__ inline hkc_digits hkc_split(long long v, int n1, int n2, int n3)
{
    long long r3 = v / n3, r2 = r3 / n2;
    return {(int)(r2 / n1), (int)(r2 % n1), (int)(r3 % n2), (int)(v % n3)};
}
__device__ inline void hkc_advance(hkc_digits &d, const hkc_digits &by, int n1, int n2, int n3)
{
    d.d3 += by.d3;
    int c = d.d3 >= n3;
    d.d3 -= c ? n3 : 0;
    d.d2 += by.d2 + c;
    c = d.d2 >= n2;
    d.d2 -= c ? n2 : 0;
    d.d1 += by.d1 + c;
    c = d.d1 >= n1;
    d.d1 -= c ? n1 : 0;
    d.d0 += by.d0 + c;
}

// E consecutive elements stored as one vector when p is aligned to it and
// all lie before the end (left: how many do), else one by one.
template <typename T, int E> struct alignas(E * sizeof(T)) hkc_vec { T e[E]; };
template <typename T, int E> __device__ inline void hkc_putn(T *p, const hkc_vec<T, E> &v, unsigned left)
{
    if (left >= E && (unsigned long long)p % sizeof(hkc_vec<T, E>) == 0) {
        hkc_store_bits(p, v);
        return;
    }
#pragma unroll
    for (int k = 0; k < E; k++)
        if ((unsigned)k < left)
            p[k] = v.e[k];
}

// v = elements S .. S + E - 1 of the run a, b (2E elements) for the S
// that equals s: a shift by a constant in each case, which the compiler
// turns into register moves (byte permutes for 2-byte types).
template <typename T, int E, int S> struct hkc_shift {
    __device__ static inline void take(hkc_vec<T, E> &v, const hkc_vec<T, E> &a, const hkc_vec<T, E> &b, int s)
    {
        if (s != S)
            return hkc_shift<T, E, S + 1>::take(v, a, b, s);
#pragma unroll
        for (int k = 0; k < E; k++)
            v.e[k] = k + S < E ? a.e[k + S] : b.e[k + S - E];
    }
};
template <typename T, int E> struct hkc_shift<T, E, E> {
    __device__ static inline void take(hkc_vec<T, E> &, const hkc_vec<T, E> &, const hkc_vec<T, E> &, int) {}
};

// im2col through shared memory (GPUs): a block takes a tile of up to TILE
// consecutive output pixels of one output row, loads the r input rows of
// every channel that tile reads (coalesced, zeros where the padding is),
// then writes the tile's part of col, which is contiguous, with 16-byte
// stores. Dynamic shared memory: c x r x span elements, span = (TILE - 1)
// sw + (s - 1) dw + 1. Any grid (a grid stride over tiles) and any block
// shape. Both phases walk their elements with carried digits (hkc_advance)
// instead of three integer divisions a 4-element chunk and two an element
// loaded.
//
// The window's 4- and 8-byte elements are copied with cp.async on NVIDIA
// sm_80+: all of a thread's in flight at once, no registers held (f32 on
// the H100: 0.70x of the copy rate with HKC_LOADS = 4 register loads in
// flight, waited for in turn; 0.78-0.82x with cp.async and tiles of 28
// pixels; docs/families/conv-notes.md); HKC_LOADS at a time elsewhere.
// Tiles of 32 pixels measured as fast as 28, of 8 to 16 slower; blocks
// taking several tiles slower, also when copying the next tile's window
// during the current one's writes (two windows).
#define HKC_I2C_TILE 28 // plugins/conv/conv.c: I2C_TILE
// Registers: the plugin's sm_90 build of im2col_tiled_f32 uses 47, so 5
// blocks of 256 an SM; the bench's variants at 5 blocks an SM ran at 0.82x
// of the copy rate, at 4 (56 registers) 0.79x, at 6 and 7 (launch bounds
// that made them spill) 0.75x and 0.65x (scripts-lua/bench/im2col.lua).
#define HKC_I2C_OFFS 1024
#define HKC_LOADS 4

// Where a tile of im2col_tiled reads x and writes col.
struct hkc_i2c_at {
    long long xoff, row; // the image's first element of x; img * oh + oy
    int ox0, npix, ih0, iw0;
};
template <int TILE> __device__ inline hkc_i2c_at hkc_i2c_tile(long long tile, const hkc_geom &g)
{
    const int tiles_row = (g.ow + TILE - 1) / TILE;
    hkc_i2c_at a;
    a.row = tile / tiles_row;
    a.ox0 = (int)(tile - a.row * tiles_row) * TILE;
    a.npix = g.ow - a.ox0 < TILE ? g.ow - a.ox0 : TILE;
    const long long img = a.row / g.oh;
    a.ih0 = (int)(a.row - img * g.oh) * g.sh - g.ph;
    a.iw0 = a.ox0 * g.sw - g.pw;
    a.xoff = img * g.c * g.h * g.wd;
    return a;
}

// Asynchronous copies into shared memory (NVIDIA sm_80+, elements of 4 or
// 8 bytes: cp.async, zeros where !in, nothing held in registers, so all of
// a thread's copies are in flight at once); else a plain load and store.
// hkc_async_wait_all(): this thread's copies have landed.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HKC_ASYNC 1
#else
#define HKC_ASYNC 0
#endif
template <typename T> __device__ inline void hkc_copy_async(T *s, const T *p, bool in)
{
#if HKC_ASYNC
    if (sizeof(T) == 4 || sizeof(T) == 8) {
        asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %0; cp.async.ca.shared.global [a], [%1], %2, %3; }"
                     :
                     : "l"(s), "l"(p), "n"((int)sizeof(T)), "r"(in ? (int)sizeof(T) : 0)
                     : "memory");
        return;
    }
#endif
    *s = in ? *p : hkc_zero<T>();
}
__device__ inline void hkc_async_wait_all()
{
#if HKC_ASYNC
    asm volatile("cp.async.wait_all;" : : : "memory");
#endif
}

// A tile's window (c x r x span) into shared memory w, zeros in the
// padding: asynchronous copies where there are (4- and 8-byte elements on
// NVIDIA sm_80+), else HKC_LOADS loads a thread in flight, each batch
// waited for before the next (d.d0 > 0: past the window's end).
template <typename T>
__device__ inline void hkc_i2c_copy(T *w, const T *x, const hkc_geom &g, const hkc_i2c_at &a, hkc_digits d,
                                    const hkc_digits &step, int span, unsigned e0, unsigned loaded, unsigned stride)
{
    if (HKC_ASYNC && (sizeof(T) == 4 || sizeof(T) == 8)) {
#pragma unroll 1
        for (unsigned e = e0; e < loaded; e += stride) {
            int ih = a.ih0 + d.d2 * g.dh, iw = a.iw0 + d.d3;
            bool in = ih >= 0 && ih < g.h && iw >= 0 && iw < g.wd;
            hkc_copy_async(w + e, in ? x + a.xoff + ((long long)d.d1 * g.h + ih) * g.wd + iw : x, in);
            hkc_advance(d, step, g.c, g.r, span);
        }
    } else {
        for (unsigned e = e0; e < loaded; e += HKC_LOADS * stride) {
            T v[HKC_LOADS];
#pragma unroll
            for (int u = 0; u < HKC_LOADS; u++) {
                int ih = a.ih0 + d.d2 * g.dh, iw = a.iw0 + d.d3;
                bool in = d.d0 == 0 && ih >= 0 && ih < g.h && iw >= 0 && iw < g.wd;
                v[u] = in ? x[a.xoff + ((long long)d.d1 * g.h + ih) * g.wd + iw] : hkc_zero<T>();
                hkc_advance(d, step, g.c, g.r, span);
            }
#pragma unroll
            for (int u = 0; u < HKC_LOADS; u++)
                if (e + u * stride < loaded)
                    w[e + u * stride] = v[u];
        }
    }
}

// The write phase of a tile: total = npix cols elements of col from the
// window in shared memory, 4 a chunk (a 16-byte store when aligned). With
// a table (rows of at most HKC_I2C_OFFS taps, a multiple of 4), tap j's
// shared offset (ci r + rr) span + ss dw comes from it: one 16-byte table
// read and four shared reads a chunk instead of a carry chain an element
// (0.50x -> 0.62x of the copy rate on the H100). q: the thread's first
// chunk (pixel, tap) with the table, (pixel, ci, rr, ss) without.
template <typename T>
__device__ inline void hkc_i2c_write(T *out, const T *sm, const int *off, unsigned total, unsigned cols,
                                     const hkc_geom &g, int span, hkc_digits q, const hkc_digits &step, unsigned e0,
                                     unsigned stride)
{
    if (off) { // 4 taps a chunk, never across pixels
#pragma unroll 1
        for (unsigned e = e0; e < total; e += stride) {
            const hkc_vec<int, 4> o = *(const hkc_vec<int, 4> *)(off + q.d3);
            const int at = q.d0 * g.sw;
            T v[4] = {sm[o.e[0] + at], sm[o.e[1] + at], sm[o.e[2] + at], sm[o.e[3] + at]};
            hkc_put4(out + e, v, total - e);
            hkc_advance(q, step, 1, 1, (int)cols);
        }
        return;
    }
    for (unsigned e = e0; e < total; e += stride) {
        int pp = q.d0, ci = q.d1, rr = q.d2, ss = q.d3;
        T v[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            v[k] = e + k < total ? sm[(ci * g.r + rr) * span + pp * g.sw + ss * g.dw] : hkc_zero<T>();
            if (++ss == g.s) {
                ss = 0;
                if (++rr == g.r) {
                    rr = 0;
                    if (++ci == g.c)
                        ci = 0, pp++;
                }
            }
        }
        hkc_put4(out + e, v, total - e);
        hkc_advance(q, step, g.c, g.r, g.s);
    }
}

template <typename T, int TILE = HKC_I2C_TILE>
__device__ void hkc_im2col_tiled(const T *x, T *col, const hkc_geom g)
{
    extern __shared__ __align__(16) unsigned char hkc_i2c_dyn[];
    __shared__ __align__(16) int hkc_i2c_off[HKC_I2C_OFFS];
    T *sm = (T *)hkc_i2c_dyn;
    const int span = (TILE - 1) * g.sw + (g.s - 1) * g.dw + 1;
    const unsigned cols = (unsigned)(g.c * g.r * g.s), loaded = (unsigned)(g.c * g.r * span);
    const unsigned tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
    // load phase: element (-, ci, rr, i) of c x r x span
    const hkc_digits ld0 = hkc_split(tid, g.c, g.r, span), ldstep = hkc_split(nt, g.c, g.r, span);
    const bool table = cols <= HKC_I2C_OFFS && cols % 4 == 0;
    for (unsigned j = tid; table && j < cols; j += nt) {
        int ci = (int)j / (g.r * g.s), t = (int)j - ci * g.r * g.s, rr = t / g.s;
        hkc_i2c_off[j] = (ci * g.r + rr) * span + (t - rr * g.s) * g.dw;
    }
    // write phase: chunk start (pixel, tap) with the table, else (pixel, ci, rr, ss)
    const hkc_digits q0 = table ? hkc_split(4ll * tid, 1, 1, (int)cols) : hkc_split(4ll * tid, g.c, g.r, g.s);
    const hkc_digits qstep = table ? hkc_split(4ll * nt, 1, 1, (int)cols) : hkc_split(4ll * nt, g.c, g.r, g.s);
    const long long tiles = (long long)g.n * g.oh * ((g.ow + TILE - 1) / TILE);
    for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const hkc_i2c_at a = hkc_i2c_tile<TILE>(tile, g);
        __syncthreads(); // the previous tile's reads are done
        hkc_i2c_copy(sm, x, g, a, ld0, ldstep, span, tid, loaded, nt);
        hkc_async_wait_all();
        __syncthreads();
        hkc_i2c_write(col + (a.row * g.ow + a.ox0) * cols, sm, table ? hkc_i2c_off : (const int *)0,
                      (unsigned)a.npix * cols, cols, g, span, q0, qstep, tid * 4, nt * 4);
    }
}

// unfold through shared memory (GPUs; the GEMM route's columns): a block
// takes one input plane (img, ci) at a time, copies the window its taps
// read, the plane with its padding (hp = (oh - 1) sh + (r - 1) dh + 1 rows
// of wp = (ow - 1) sw + (s - 1) dw + 1, zeros outside x), into shared
// memory at a row pitch of wp rounded up to E (16 bytes), then writes the
// plane's r s rows of oh ow pixels, one contiguous run of col, 16 bytes
// (E elements) a lane. With stride 1 along w and rows of a multiple of E
// pixels, a chunk is E consecutive window elements at a shift of (b dw) %
// E: two 16-byte shared reads and a constant shift (hkc_shift) instead of
// E shared reads with their index arithmetic; otherwise element by
// element. Positions are carried digits (hkc_advance).
// Dynamic shared memory: (hp pitch + E) elements; any grid and block shape.
template <typename T>
__device__ void hkc_unfold_tiled(const T *x, T *col, const hkc_geom g)
{
    constexpr int E = 16 / sizeof(T);
    extern __shared__ __align__(16) unsigned char hkc_unf_dyn[];
    T *sm = (T *)hkc_unf_dyn;
    const int hp = (g.oh - 1) * g.sh + (g.r - 1) * g.dh + 1, wp = (g.ow - 1) * g.sw + (g.s - 1) * g.dw + 1;
    const int pitch = (wp + E - 1) / E * E, rs = g.r * g.s, pix = g.oh * g.ow;
    const unsigned tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
    const unsigned window = (unsigned)(hp * pitch + E), total = (unsigned)(rs * pix);
    const bool fast = g.sw == 1 && g.ow % E == 0 && (unsigned long long)col % 16 == 0;
    // load: (past the rows, -, iy, ix) of hp x pitch; write: chunk start (a, b, oy, ox)
    const hkc_digits ld0 = hkc_split(tid, 1, hp, pitch), ldstep = hkc_split(nt, 1, hp, pitch);
    const hkc_digits st0 = hkc_split((long long)E * tid, g.s, g.oh, g.ow);
    const hkc_digits ststep = hkc_split((long long)E * nt, g.s, g.oh, g.ow);
    const long long planes = (long long)g.n * g.c;
    for (long long plane = blockIdx.x; plane < planes; plane += gridDim.x) {
        const T *xp = x + plane * g.h * g.wd;
        __syncthreads(); // the previous plane's reads are done
        hkc_digits d = ld0;
        for (unsigned e = tid; e < window; e += HKC_LOADS * nt) { // HKC_LOADS loads in flight
            T v[HKC_LOADS];
#pragma unroll
            for (int u = 0; u < HKC_LOADS; u++) {
                int ih = d.d2 - g.ph, iw = d.d3 - g.pw;
                bool in = d.d0 == 0 && d.d3 < wp && ih >= 0 && ih < g.h && iw >= 0 && iw < g.wd;
                v[u] = in ? xp[(long long)ih * g.wd + iw] : hkc_zero<T>();
                hkc_advance(d, ldstep, 1, hp, pitch);
            }
#pragma unroll
            for (int u = 0; u < HKC_LOADS; u++)
                if (e + u * nt < window)
                    sm[e + u * nt] = v[u];
        }
        __syncthreads();
        T *out = col + plane * total;
        hkc_digits q = st0;
        for (unsigned e = tid * E; e < total; e += nt * E) {
            int a = q.d0, b = q.d1, oy = q.d2, ox = q.d3;
            hkc_advance(q, ststep, g.s, g.oh, g.ow);
            hkc_vec<T, E> v;
            if (fast) {
                int src = (oy * g.sh + a * g.dh) * pitch + ox + b * g.dw, base = src & ~(E - 1);
                const hkc_vec<T, E> *run = (const hkc_vec<T, E> *)(sm + base);
                const hkc_vec<T, E> lo = run[0], hi = run[1]; // two 16-byte reads into registers
                hkc_shift<T, E, 0>::take(v, lo, hi, src - base);
                hkc_store_bits(out + e, v);
                continue;
            }
#pragma unroll
            for (int k = 0; k < E; k++) {
                v.e[k] = e + k < total ? sm[(oy * g.sh + a * g.dh) * pitch + ox * g.sw + b * g.dw] : hkc_zero<T>();
                if (++ox == g.ow) {
                    ox = 0;
                    if (++oy == g.oh) {
                        oy = 0;
                        if (++b == g.s)
                            b = 0, a++;
                    }
                }
            }
            hkc_putn<T, E>(out + e, v, total - e);
        }
    }
}

template <typename T, typename A>
__device__ void hkc_col2im1d(const T *x, T *y, int n, int lin, int c, int k, int lout, int stride)
{
    const long long total = (long long)n * c * lout;
    HKC_STEP(i, total) {
        int l = (int)(i % lout), ci = (int)(i / lout % c);
        long long img = i / ((long long)lout * c);
        A sum = 0;
        // taps kk = l - il stride in [0, k): il from ceil((l - k + 1) / stride)
        int lo = l - k + 1 > 0 ? (int)(((long long)l - k + stride) / stride) : 0, hi = l / stride;
        for (int il = lo; il <= hi && il < lin; il++)
            sum += (A)hkc_up(x[((img * lin + il) * c + ci) * k + (l - il * stride)]);
        hkc_put(y + i, sum);
    }
}

template <typename T> struct hkc_is_f32 { static const bool v = false; };
template <> struct hkc_is_f32<float> { static const bool v = true; };

// A max with NaN propagating (the first NaN met stays).
__device__ inline float hkc_max_nan(float m, float u) { return (u > m || u != u) ? (m != m ? m : u) : m; }

// The f32 2x2 stride-2 pool of 4 outputs from 16-byte loads: the lane's
// 8 inputs of each of the two rows are two float4 (rows of a multiple of
// 4 elements, x aligned), in the same order the general loop adds them.
template <bool MAX> __device__ inline void hkc_pool2x2_f32(const float *xr, int wd, int c, float *v)
{
    const float4 *p0 = (const float4 *)(const void *)(xr + 2 * c);
    const float4 *p1 = (const float4 *)(const void *)(xr + wd + 2 * c);
    const float4 a0 = p0[0], a1 = p0[1], b0 = p1[0], b1 = p1[1];
    const float in[4][4] = {{a0.x, a0.y, b0.x, b0.y}, {a0.z, a0.w, b0.z, b0.w},
                            {a1.x, a1.y, b1.x, b1.y}, {a1.z, a1.w, b1.z, b1.w}};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        float acc = MAX ? in[k][0] : 0.0f;
#pragma unroll
        for (int j = 0; j < 4; j++)
            acc = MAX ? hkc_max_nan(acc, in[k][j]) : acc + in[k][j];
        v[k] = MAX ? acc : acc / 4.0f;
    }
}

// Pools: row (plane, oy) of y from rows oy * sh .. + kh of the plane, 4
// outputs a lane (a row kernel, like im2col below); f32 2x2 windows of
// stride 2 on rows of a multiple of 4 take 16-byte loads (their scalar
// loads, strided by 2, left half of each sector to a later instruction).
template <typename T, typename A, bool MAX>
__device__ void hkc_pool(const T *x, T *y, long long planes, int h, int wd, int kh, int kw, int sh, int sw, int oh,
                         int ow)
{
    const bool quad = hkc_is_f32<T>::v && kh == 2 && kw == 2 && sh == 2 && sw == 2 && wd % 4 == 0 &&
                      (unsigned long long)x % 16 == 0;
    HKC_ROWS(r, planes * oh) {
        long long plane = r / oh;
        int oy = (int)(r - plane * oh);
        const T *xr = x + (plane * h + (long long)oy * sh) * wd;
        T *yr = y + r * ow;
        for (int c = threadIdx.x * 4; c < ow; c += blockDim.x * 4) {
            T v[4];
            if (quad && c + 4 <= ow) {
                float f[4];
                hkc_pool2x2_f32<MAX>((const float *)(const void *)xr, wd, c, f);
#pragma unroll
                for (int k = 0; k < 4; k++)
                    hkc_put(&v[k], f[k]);
                hkc_put4(yr + c, v, 4);
                continue;
            }
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const T *xp = xr + (long long)(c + k < ow ? c + k : 0) * sw;
                A acc = MAX ? (A)hkc_up(xp[0]) : (A)0;
                for (int a = 0; a < kh; a++)
                    for (int b = 0; b < kw; b++) {
                        A u = hkc_up(xp[(long long)a * wd + b]);
                        if (!MAX)
                            acc += u;
                        else if (u > acc || u != u)
                            acc = acc != acc ? acc : u;
                    }
                hkc_put(&v[k], MAX ? acc : acc / (A)(kh * kw));
            }
            hkc_put4(yr + c, v, (unsigned)(ow - c));
        }
    }
}

// Nearest upsampling: row (plane, oy) of y reads row ih of the plane.
template <typename T>
__device__ void hkc_upsample(const T *x, T *y, long long planes, int h, int wd, int oh, int ow, double sch,
                             double scw)
{
    HKC_ROWS(r, planes * oh) {
        long long plane = r / oh;
        int oy = (int)(r - plane * oh), ih = (int)floor(oy * sch);
        ih = ih < h - 1 ? ih : h - 1;
        const T *xr = x + (plane * h + ih) * wd;
        T *yr = y + r * ow;
        for (int c = threadIdx.x * 4; c < ow; c += blockDim.x * 4) {
            T v[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                int iw = (int)floor((c + k) * scw);
                v[k] = c + k < ow ? xr[iw < wd - 1 ? iw : wd - 1] : hkc_zero<T>();
            }
            hkc_put4(yr + c, v, (unsigned)(ow - c));
        }
    }
}

template <typename T>
__device__ void hkc_copy2d(const T *src, T *dst, int d1, int d2, long long ss, long long ds)
{
    const long long total = (long long)d1 * d2;
    HKC_STEP(i, total) {
        long long a = i / d2, b = i - a * d2;
        dst[a * ds + b] = src[a * ss + b];
    }
}

#define HKC_GEOM_ARGS                                                                                         \
    int n, int c, int h, int wd, int k, int r, int s, int oh, int ow, int sh, int sw, int ph, int pw, int dh,  \
        int dw, int groups
#define HKC_GEOM {n, c, h, wd, k, r, s, oh, ow, sh, sw, ph, pw, dh, dw, groups}

// The column kernels' element type: the unsigned integer of T's size.
#define HKC_RAW(T) hkc_raw<sizeof(T)>::type

#define HKC_DTYPE(t, T, A)                                                                                    \
    extern "C" __global__ void __launch_bounds__(256) conv2d_##t(const T *x, const T *w, T *y, HKC_GEOM_ARGS) \
    {                                                                                                         \
        hkc_conv_tiled<T, A, false>(x, w, y, hkc_geom HKC_GEOM);                                              \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(256)                                                         \
        conv2d_nhwc_##t(const T *x, const T *w, T *y, HKC_GEOM_ARGS)                                          \
    {                                                                                                         \
        hkc_conv_tiled<T, A, true>(x, w, y, hkc_geom HKC_GEOM);                                               \
    }                                                                                                         \
    extern "C" __global__ void conv2d_direct_##t(const T *x, const T *w, T *y, HKC_GEOM_ARGS)                 \
    {                                                                                                         \
        hkc_conv_direct<T, A>(x, w, y, hkc_geom HKC_GEOM);                                                    \
    }                                                                                                         \
    extern "C" __global__ void conv_transpose2d_##t(const T *x, const T *w, T *y, HKC_GEOM_ARGS)              \
    {                                                                                                         \
        hkc_conv_transpose<T, A>(x, w, y, hkc_geom HKC_GEOM);                                                 \
    }                                                                                                         \
    extern "C" __global__ void im2col_##t(const T *x, T *col, int n, int c, int h, int wd, int r, int s,      \
                                          int oh, int ow, int sh, int sw, int ph, int pw, int dh, int dw)     \
    {                                                                                                         \
        hkc_im2col<HKC_RAW(T)>((const HKC_RAW(T) *)x, (HKC_RAW(T) *)col,                                      \
                           hkc_geom{n, c, h, wd, 0, r, s, oh, ow, sh, sw, ph, pw, dh, dw, 1});                \
    }                                                                                                         \
    extern "C" __global__ void unfold_##t(const T *x, T *col, int n, int c, int h, int wd, int r, int s,      \
                                          int oh, int ow, int sh, int sw, int ph, int pw, int dh, int dw)     \
    {                                                                                                         \
        hkc_unfold<HKC_RAW(T)>((const HKC_RAW(T) *)x, (HKC_RAW(T) *)col,                                      \
                           hkc_geom{n, c, h, wd, 0, r, s, oh, ow, sh, sw, ph, pw, dh, dw, 1});                \
    }                                                                                                         \
    extern "C" __global__ void unfold_tiled_##t(const T *x, T *col, int n, int c, int h, int wd, int r, int s,\
                                                int oh, int ow, int sh, int sw, int ph, int pw, int dh, int dw)\
    {                                                                                                         \
        hkc_unfold_tiled<HKC_RAW(T)>((const HKC_RAW(T) *)x, (HKC_RAW(T) *)col,                                \
                           hkc_geom{n, c, h, wd, 0, r, s, oh, ow, sh, sw, ph, pw, dh, dw, 1});                \
    }                                                                                                         \
    extern "C" __global__ void im2col_tiled_##t(const T *x, T *col, int n, int c, int h, int wd, int r, int s,\
                                                int oh, int ow, int sh, int sw, int ph, int pw, int dh, int dw)\
    {                                                                                                         \
        hkc_im2col_tiled<HKC_RAW(T)>((const HKC_RAW(T) *)x, (HKC_RAW(T) *)col,                                \
                           hkc_geom{n, c, h, wd, 0, r, s, oh, ow, sh, sw, ph, pw, dh, dw, 1});                \
    }                                                                                                         \
    extern "C" __global__ void col2im1d_##t(const T *x, T *y, int n, int lin, int c, int k, int lout,         \
                                            int stride)                                                       \
    {                                                                                                         \
        hkc_col2im1d<T, A>(x, y, n, lin, c, k, lout, stride);                                                 \
    }                                                                                                         \
    extern "C" __global__ void avg_pool2d_##t(const T *x, T *y, long long planes, int h, int wd, int kh,      \
                                              int kw, int sh, int sw, int oh, int ow)                         \
    {                                                                                                         \
        hkc_pool<T, A, false>(x, y, planes, h, wd, kh, kw, sh, sw, oh, ow);                                   \
    }                                                                                                         \
    extern "C" __global__ void max_pool2d_##t(const T *x, T *y, long long planes, int h, int wd, int kh,      \
                                              int kw, int sh, int sw, int oh, int ow)                         \
    {                                                                                                         \
        hkc_pool<T, A, true>(x, y, planes, h, wd, kh, kw, sh, sw, oh, ow);                                    \
    }                                                                                                         \
    extern "C" __global__ void upsample_nearest2d_##t(const T *x, T *y, long long planes, int h, int wd,      \
                                                      int oh, int ow, double sch, double scw)                 \
    {                                                                                                         \
        hkc_upsample<T>(x, y, planes, h, wd, oh, ow, sch, scw);                                               \
    }                                                                                                         \
    extern "C" __global__ void copy2d_##t(const T *src, T *dst, int d1, int d2, long long ss, long long ds)   \
    {                                                                                                         \
        hkc_copy2d<T>(src, dst, d1, d2, ss, ds);                                                              \
    }

// A bench that compiles variants of the device functions above defines
// HKC_FUNCTIONS_ONLY (scripts-lua/bench/im2col.lua): its compile then skips
// the plugin's kernels.
#ifndef HKC_FUNCTIONS_ONLY
HKC_DTYPE(f32, float, float)
HKC_DTYPE(f64, double, double)
HKC_DTYPE(f16, __half, float)
HKC_DTYPE(bf16, __hip_bfloat16, float)
#endif
