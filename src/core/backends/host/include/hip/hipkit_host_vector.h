/* The vector types of hipkit's CPU backend (float4, int2, ...) and dim3.
 * Included by hipkit_host_device.h. */
#ifndef __HK_HOST_VECTOR_H
#define __HK_HOST_VECTOR_H

/* ------------------------------------------------------------------------ */
/* Vector types: __hk_vec<T, N>, spelled float4 etc. Alignment follows the
 * HIP/clang vector types for N = 1, 2, 4 (N elements, so float2 8, float4 16,
 * double2 16, double4 32) and the element's for N = 3 (float3 is 12 bytes). */

template <typename _Hk_T, unsigned _Hk_N>
struct __hk_vec;

#define __HK_VEC_ALIGN_(_Hk_T, _Hk_N) ((_Hk_N) == 3 ? alignof(_Hk_T) : (_Hk_N) * sizeof(_Hk_T))

template <typename _Hk_T>
struct alignas(__HK_VEC_ALIGN_(_Hk_T, 1)) __hk_vec<_Hk_T, 1> {
    typedef _Hk_T value_type;
    _Hk_T x;
    __hk_vec() = default;
    template <typename _Hk_A, typename = std::enable_if_t<std::is_arithmetic<_Hk_A>::value>>
    constexpr __hk_vec(_Hk_A __a) : x(static_cast<_Hk_T>(__a)) {}
};

template <typename _Hk_T>
struct alignas(__HK_VEC_ALIGN_(_Hk_T, 2)) __hk_vec<_Hk_T, 2> {
    typedef _Hk_T value_type;
    _Hk_T x, y;
    __hk_vec() = default;
    template <typename _Hk_A, typename = std::enable_if_t<std::is_arithmetic<_Hk_A>::value>>
    explicit constexpr __hk_vec(_Hk_A __a) : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__a)) {}
    template <typename _Hk_A, typename _Hk_B>
    constexpr __hk_vec(_Hk_A __a, _Hk_B __b) : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__b)) {}
};

template <typename _Hk_T>
struct alignas(__HK_VEC_ALIGN_(_Hk_T, 3)) __hk_vec<_Hk_T, 3> {
    typedef _Hk_T value_type;
    _Hk_T x, y, z;
    __hk_vec() = default;
    template <typename _Hk_A, typename = std::enable_if_t<std::is_arithmetic<_Hk_A>::value>>
    explicit constexpr __hk_vec(_Hk_A __a)
        : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__a)), z(static_cast<_Hk_T>(__a)) {}
    template <typename _Hk_A, typename _Hk_B, typename _Hk_C>
    constexpr __hk_vec(_Hk_A __a, _Hk_B __b, _Hk_C __c)
        : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__b)), z(static_cast<_Hk_T>(__c)) {}
};

template <typename _Hk_T>
struct alignas(__HK_VEC_ALIGN_(_Hk_T, 4)) __hk_vec<_Hk_T, 4> {
    typedef _Hk_T value_type;
    _Hk_T x, y, z, w;
    __hk_vec() = default;
    template <typename _Hk_A, typename = std::enable_if_t<std::is_arithmetic<_Hk_A>::value>>
    explicit constexpr __hk_vec(_Hk_A __a)
        : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__a)), z(static_cast<_Hk_T>(__a)),
          w(static_cast<_Hk_T>(__a)) {}
    template <typename _Hk_A, typename _Hk_B, typename _Hk_C, typename _Hk_D>
    constexpr __hk_vec(_Hk_A __a, _Hk_B __b, _Hk_C __c, _Hk_D __d)
        : x(static_cast<_Hk_T>(__a)), y(static_cast<_Hk_T>(__b)), z(static_cast<_Hk_T>(__c)),
          w(static_cast<_Hk_T>(__d)) {}
};

template <typename _Hk_T, unsigned _Hk_N>
using HIP_vector_type = __hk_vec<_Hk_T, _Hk_N>;

template <typename _Hk_T, unsigned _Hk_N, typename _Hk_F>
constexpr __hk_vec<_Hk_T, _Hk_N> __hk_vec_map(__hk_vec<_Hk_T, _Hk_N> __a, const __hk_vec<_Hk_T, _Hk_N> &__b,
                                            _Hk_F __f)
{
    __a.x = static_cast<_Hk_T>(__f(__a.x, __b.x));
    if constexpr (_Hk_N > 1)
        __a.y = static_cast<_Hk_T>(__f(__a.y, __b.y));
    if constexpr (_Hk_N > 2)
        __a.z = static_cast<_Hk_T>(__f(__a.z, __b.z));
    if constexpr (_Hk_N > 3)
        __a.w = static_cast<_Hk_T>(__f(__a.w, __b.w));
    return __a;
}

template <typename _Hk_S>
using __hk_if_scalar = std::enable_if_t<std::is_arithmetic<_Hk_S>::value, int>;

#define __HK_VEC_BINOP_(op, cond)                                                 \
    template <typename _Hk_T, unsigned _Hk_N, std::enable_if_t<cond, int> = 0>               \
    constexpr __hk_vec<_Hk_T, _Hk_N> operator op(const __hk_vec<_Hk_T, _Hk_N> &__a,              \
                                            const __hk_vec<_Hk_T, _Hk_N> &__b)              \
    {                                                                                \
        return __hk_vec_map(__a, __b, [](_Hk_T __u, _Hk_T __v) { return __u op __v; });               \
    }                                                                                \
    template <typename _Hk_T, unsigned _Hk_N, typename _Hk_S, __hk_if_scalar<_Hk_S> = 0,          \
              std::enable_if_t<cond, int> = 0>                                       \
    constexpr __hk_vec<_Hk_T, _Hk_N> operator op(const __hk_vec<_Hk_T, _Hk_N> &__a, _Hk_S __s)         \
    {                                                                                \
        return __a op __hk_vec<_Hk_T, _Hk_N>(static_cast<_Hk_T>(__s));                            \
    }                                                                                \
    template <typename _Hk_T, unsigned _Hk_N, typename _Hk_S, __hk_if_scalar<_Hk_S> = 0,          \
              std::enable_if_t<cond, int> = 0>                                       \
    constexpr __hk_vec<_Hk_T, _Hk_N> operator op(_Hk_S __s, const __hk_vec<_Hk_T, _Hk_N> &__a)         \
    {                                                                                \
        return __hk_vec<_Hk_T, _Hk_N>(static_cast<_Hk_T>(__s)) op __a;                            \
    }                                                                                \
    template <typename _Hk_T, unsigned _Hk_N, typename _Hk_S, std::enable_if_t<cond, int> = 0>   \
    constexpr __hk_vec<_Hk_T, _Hk_N> &operator op##=(__hk_vec<_Hk_T, _Hk_N> &__a, const _Hk_S &__s)    \
    {                                                                                \
        return __a = __a op __s;                                                           \
    }

__HK_VEC_BINOP_(+, true)
__HK_VEC_BINOP_(-, true)
__HK_VEC_BINOP_(*, true)
__HK_VEC_BINOP_(/, true)
__HK_VEC_BINOP_(%, std::is_integral<_Hk_T>::value)
__HK_VEC_BINOP_(&, std::is_integral<_Hk_T>::value)
__HK_VEC_BINOP_(|, std::is_integral<_Hk_T>::value)
__HK_VEC_BINOP_(^, std::is_integral<_Hk_T>::value)
__HK_VEC_BINOP_(<<, std::is_integral<_Hk_T>::value)
__HK_VEC_BINOP_(>>, std::is_integral<_Hk_T>::value)
#undef __HK_VEC_BINOP_

template <typename _Hk_T, unsigned _Hk_N>
constexpr __hk_vec<_Hk_T, _Hk_N> operator-(const __hk_vec<_Hk_T, _Hk_N> &__a)
{
    return __hk_vec_map(__a, __a, [](_Hk_T __u, _Hk_T) { return -__u; });
}
template <typename _Hk_T, unsigned _Hk_N>
constexpr __hk_vec<_Hk_T, _Hk_N> operator+(const __hk_vec<_Hk_T, _Hk_N> &__a)
{
    return __a;
}
template <typename _Hk_T, unsigned _Hk_N, std::enable_if_t<std::is_integral<_Hk_T>::value, int> = 0>
constexpr __hk_vec<_Hk_T, _Hk_N> operator~(const __hk_vec<_Hk_T, _Hk_N> &__a)
{
    return __hk_vec_map(__a, __a, [](_Hk_T __u, _Hk_T) { return ~__u; });
}
template <typename _Hk_T, unsigned _Hk_N>
constexpr bool operator==(const __hk_vec<_Hk_T, _Hk_N> &__a, const __hk_vec<_Hk_T, _Hk_N> &__b)
{
    bool __eq = __a.x == __b.x;
    if constexpr (_Hk_N > 1)
        __eq = __eq && __a.y == __b.y;
    if constexpr (_Hk_N > 2)
        __eq = __eq && __a.z == __b.z;
    if constexpr (_Hk_N > 3)
        __eq = __eq && __a.w == __b.w;
    return __eq;
}
template <typename _Hk_T, unsigned _Hk_N>
constexpr bool operator!=(const __hk_vec<_Hk_T, _Hk_N> &__a, const __hk_vec<_Hk_T, _Hk_N> &__b)
{
    return !(__a == __b);
}

/* make_*: members set one by one, not through the constructor templates,
 * which these non-template functions would otherwise have GCC instantiate
 * at the end of every unit (hipkit_host_device.h). */
#define __HK_VEC_TYPES_(name, _Hk_T)                                                   \
    typedef __hk_vec<_Hk_T, 1> name##1;                                                \
    typedef __hk_vec<_Hk_T, 2> name##2;                                                \
    typedef __hk_vec<_Hk_T, 3> name##3;                                                \
    typedef __hk_vec<_Hk_T, 4> name##4;                                                \
    static inline constexpr name##1 make_##name##1(_Hk_T x)                            \
    {                                                                                 \
        name##1 __v{};                                                                \
        __v.x = x;                                                                    \
        return __v;                                                                   \
    }                                                                                 \
    static inline constexpr name##2 make_##name##2(_Hk_T x, _Hk_T y)                   \
    {                                                                                 \
        name##2 __v{};                                                                \
        __v.x = x;                                                                    \
        __v.y = y;                                                                    \
        return __v;                                                                   \
    }                                                                                 \
    static inline constexpr name##3 make_##name##3(_Hk_T x, _Hk_T y, _Hk_T z)            \
    {                                                                                 \
        name##3 __v{};                                                                \
        __v.x = x;                                                                    \
        __v.y = y;                                                                    \
        __v.z = z;                                                                    \
        return __v;                                                                   \
    }                                                                                 \
    static inline constexpr name##4 make_##name##4(_Hk_T x, _Hk_T y, _Hk_T z, _Hk_T w)   \
    {                                                                                 \
        name##4 __v{};                                                                \
        __v.x = x;                                                                    \
        __v.y = y;                                                                    \
        __v.z = z;                                                                    \
        __v.w = w;                                                                    \
        return __v;                                                                   \
    }

__HK_VEC_TYPES_(char, char)
__HK_VEC_TYPES_(uchar, unsigned char)
__HK_VEC_TYPES_(short, short)
__HK_VEC_TYPES_(ushort, unsigned short)
__HK_VEC_TYPES_(int, int)
__HK_VEC_TYPES_(uint, unsigned int)
__HK_VEC_TYPES_(long, long)
__HK_VEC_TYPES_(ulong, unsigned long)
__HK_VEC_TYPES_(longlong, long long)
__HK_VEC_TYPES_(ulonglong, unsigned long long)
__HK_VEC_TYPES_(float, float)
__HK_VEC_TYPES_(double, double)
#undef __HK_VEC_TYPES_

struct dim3 {
    uint32_t x, y, z;
    constexpr dim3(uint32_t __x_ = 1, uint32_t __y_ = 1, uint32_t __z_ = 1) : x(__x_), y(__y_), z(__z_) {}
    constexpr dim3(const uint3 &__v) : x(__v.x), y(__v.y), z(__v.z) {}
    constexpr operator uint3() const { return make_uint3(x, y, z); }
};

#endif
