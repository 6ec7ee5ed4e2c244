// The C and C++ standard headers device code includes, on every backend
// (tests/devlib/test_devlib.c checks the values out[] gets).
#include <hip/hip_runtime.h>
#include <stdint.h>
#include <cstdint>
#include <stddef.h>
#include <cstddef>
#include <stdlib.h>
#include <cstdlib>
#include <math.h>
#include <cmath>
#include <limits.h>
#include <climits>
#include <float.h>
#include <cfloat>
#include <limits>
#include <type_traits>
#include <assert.h>
#include <cassert>

static_assert(sizeof(int8_t) == 1 && sizeof(int16_t) == 2 && sizeof(int32_t) == 4 &&
                  sizeof(int64_t) == 8 && sizeof(uint64_t) == 8 && sizeof(uintptr_t) == 8,
              "fixed-width types");
static_assert(sizeof(size_t) == 8 && sizeof(ptrdiff_t) == 8 && sizeof(std::size_t) == 8,
              "size_t, ptrdiff_t");
static_assert(std::is_same<std::int32_t, int32_t>::value, "std::int32_t");
static_assert(INT_MAX == 2147483647 && UINT_MAX == 4294967295u && CHAR_BIT == 8 &&
                  LLONG_MAX == 9223372036854775807LL && SHRT_MIN == -32768,
              "limits.h");
static_assert(INT32_MIN == -2147483647 - 1 && UINT16_MAX == 65535 && SIZE_MAX == UINT64_MAX,
              "stdint.h limits");
static_assert(std::numeric_limits<int>::max() == INT_MAX &&
                  std::numeric_limits<int>::min() == INT_MIN &&
                  std::numeric_limits<unsigned char>::max() == 255 &&
                  std::numeric_limits<long long>::lowest() == LLONG_MIN &&
                  std::numeric_limits<unsigned>::digits == 32 &&
                  std::numeric_limits<int>::digits10 == 9 &&
                  std::numeric_limits<bool>::max() && std::numeric_limits<int64_t>::is_signed &&
                  !std::numeric_limits<uint64_t>::is_signed,
              "numeric_limits of the integers");
static_assert(std::numeric_limits<float>::max() == FLT_MAX &&
                  std::numeric_limits<float>::min() == FLT_MIN &&
                  std::numeric_limits<float>::epsilon() == FLT_EPSILON &&
                  std::numeric_limits<float>::lowest() == -FLT_MAX &&
                  std::numeric_limits<float>::denorm_min() == FLT_TRUE_MIN &&
                  std::numeric_limits<double>::max() == DBL_MAX &&
                  std::numeric_limits<double>::min() == DBL_MIN &&
                  std::numeric_limits<double>::epsilon() == DBL_EPSILON &&
                  std::numeric_limits<double>::digits == DBL_MANT_DIG &&
                  std::numeric_limits<float>::max_exponent10 == FLT_MAX_10_EXP &&
                  std::numeric_limits<double>::min_exponent10 == DBL_MIN_10_EXP &&
                  std::numeric_limits<float>::has_infinity && std::numeric_limits<double>::is_iec559,
              "numeric_limits of float and double against float.h");
static_assert(std::numeric_limits<float>::infinity() > FLT_MAX &&
                  std::numeric_limits<double>::infinity() > DBL_MAX,
              "infinity");
struct pod {
    float a;
    int b;
};

static_assert(std::is_integral<int>::value && std::is_integral<const unsigned char>::value &&
                  !std::is_integral<float>::value && std::is_floating_point<double>::value &&
                  std::is_arithmetic<long>::value && std::is_signed<int>::value &&
                  std::is_unsigned<unsigned>::value && !std::is_unsigned<int>::value &&
                  std::is_pointer<float *>::value && std::is_const<const int>::value &&
                  std::is_same_v<std::remove_cv_t<const volatile int>, int> &&
                  std::is_same_v<std::remove_reference_t<int &&>, int> &&
                  std::is_same_v<std::conditional_t<true, int, float>, int> &&
                  std::is_same_v<std::make_unsigned_t<int>, unsigned> &&
                  std::is_same_v<std::decay_t<const int (&)[3]>, const int *> &&
                  std::is_same_v<std::common_type_t<int, float>, float> &&
                  std::is_trivially_copyable_v<pod> && std::is_void_v<void> && std::is_scalar_v<int *>,
              "type_traits");

template <typename T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
__device__ T twice(T v)
{
    return v + v;
}
template <typename T, std::enable_if_t<std::is_integral<T>::value, int> = 0>
__device__ T twice(T v)
{
    return v * 2;
}

// out[0..]: values the test checks; x = 2.0 from the host.
extern "C" __global__ void std_headers(double *out, const double *in)
{
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    double x = in[0];
    float xf = (float)x;
    assert(x == 2.0);
    int i = 0;
    out[i++] = std::sqrt(x);                    // 0: 1.41421356...
    out[i++] = std::sqrt(xf);                   // 1: float overload
    out[i++] = std::pow(x, 10.0);               // 2: 1024
    out[i++] = std::fabs(-x) + std::abs(-3);    // 3: 5
    out[i++] = (double)std::abs(-7LL) + labs(-1L); // 4: 8
    out[i++] = std::exp(std::log(x));           // 5: 2
    out[i++] = std::isnan(std::numeric_limits<double>::quiet_NaN()) ? 1 : 0; // 6: 1
    out[i++] = std::isinf(std::numeric_limits<float>::infinity()) ? 1 : 0;   // 7: 1
    out[i++] = std::fpclassify(std::numeric_limits<float>::denorm_min()) == FP_SUBNORMAL; // 8
    out[i++] = std::isnormal(x) && !std::isnormal(0.0); // 9: 1
    out[i++] = std::isgreater(x, 1.0) && !std::isless(NAN, 1.0f); // 10: 1
    out[i++] = std::fma(x, 3.0, 1.0);           // 11: 7
    out[i++] = twice(x) + twice(3);             // 12: 10
    out[i++] = (double)INT64_MAX;               // 13
    out[i++] = (double)std::numeric_limits<uint32_t>::max(); // 14
    out[i++] = M_PI;                            // 15
    out[i++] = std::floor(-x / 3.0) + std::round(2.5) + std::trunc(-1.5); // 16: -1 + 3 - 1 = 1
    out[i++] = HUGE_VAL > DBL_MAX;              // 17: 1
    out[i++] = (double)offsetof(float4, z);     // 18: 8
    int *p = (int *)malloc(sizeof(int));
    if (p) {
        *p = 42;
        out[i] = *p;                            // 19: 42 (device malloc)
        free(p);
    }
    i++;
    out[i++] = (double)(std::numeric_limits<int8_t>::min() + CHAR_MAX); // 20: -1
    out[i++] = std::hypot(3.0, 4.0) + std::fmax(1.0f, 2.0f); // 21: 7
}
