// HIP's bit and lane intrinsics that no signature class of the list covers
// (64-bit operands, lane-dependent results), and the directed conversions
// at their edges, on known values. test_devlib_funcs runs it on one block
// of 64 threads and checks the values in the comments (warpSize lanes).
#include <hip/hip_runtime.h>

__global__ void bits_extras(double *out, const double *in)
{
    const unsigned long long m = 0x16ull; // bits 1, 2, 4
    // every lane's rank among all lanes is its lane number
    int wrong = __mbcnt_hi(0xffffffffu, __mbcnt_lo(0xffffffffu, 0)) != __lane_id();
    unsigned long long all = __ballot64(1);
    wrong += __popcll(__ballot64(wrong)) != 0;
    unsigned int lane = __lane_id();
    unsigned long long full = warpSize == 64 ? ~0ull : 0xffffffffull;
    wrong += __lanemask_lt() != ((1ull << lane) - 1);
    wrong += __lanemask_eq() != (1ull << lane);
    wrong += __lanemask_gt() != ((full << 1 << lane) & full);
    if (threadIdx.x != 0)
        return;
    out[0] = wrong;                                  // 0
    out[1] = (double)(all == full);                  // 1
    out[2] = __fns64(m, 0, 1);                       // 1
    out[3] = __fns64(m, 0, 3);                       // 4
    out[4] = __fns64(m, 0, 4);                       // -1
    out[5] = __fns64(m, 4, -2);                      // 2
    out[6] = __fns64(m, 3, 0);                       // -1
    out[7] = __fns32(m, 2, 0);                       // 2
    out[8] = (double)__bitextract_u64(0xf0f0f0f0f0f0f0f0ull, 4, 8);  // 15
    out[9] = (double)__bitextract_u64(0xf0f0f0f0f0f0f0f0ull, 60, 4); // 15
    out[10] = (double)__bitinsert_u64(0, 0xffull, 40, 4);            // 0xf0000000000
    out[11] = amd_mixed_dot(make_short2(3, -4), make_short2(5, 6), 10, false); // 1
    out[12] = amd_mixed_dot(0x77777777, 0x77777777, 2147483647, true);        // 2147483647
    out[13] = amd_mixed_dot(0xffffffffu, 0xffffffffu, 0u, false);              // 1800
    out[14] = amd_mixed_dot(make_char4(-1, 2, -3, 4), make_char4(5, 6, 7, 8), 0, false); // 18
    out[15] = __ull2float_rd(~0ull);                 // 2^64 - 2^40
    out[16] = __ull2float_ru(~0ull);                 // 2^64
    out[17] = __double2float_rz(in[0]);              // 1 (in[0] = 1 + 2^-30)
    out[18] = __double2float_ru(in[0]);              // 1 + 2^-23
    out[19] = __fdiv_rd(1.0f, 3.0f) < __fdiv_ru(1.0f, 3.0f); // 1
}
