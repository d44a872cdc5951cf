/*
 * 128-bit integers to double, rounded to nearest (ties to even) as the host compiler's own
 * conversion rounds, on the host and the device alike: the Ozaki scheme II rung rebuilds its
 * products as 128-bit integers and must round them as src/ozaki/ozaki2.c does.  Plain
 * arithmetic, so the CPU tests compile this file itself.
 */
#ifndef TG_KERNELS_INT128_CUH
#define TG_KERNELS_INT128_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

typedef unsigned __int128 tg_u128;
typedef __int128 tg_i128;

__host__ __device__ __forceinline__ int leading_zeros64(uint64_t x)
{
#ifdef __CUDA_ARCH__
    return __clzll((long long)x);
#else
    return __builtin_clzll(x);
#endif
}

/* 2^e for e in [-1022, 1023], from its bits: x * tg_pow2(e) is ldexp(x, e) wherever that is
 * a normal double, exactly, without ldexp's general path (clamps and four multiplies on the
 * device). */
__host__ __device__ __forceinline__ double tg_pow2(int e)
{
    const uint64_t bits = (uint64_t)(e + 1023) << 52;
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)bits);
#else
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
#endif
}

/* The top 64 bits (64-bit conversion rounds them correctly), with every bit below them ORed
 * into their lowest: that bit lies under the rounding position, so it decides ties and no
 * more. */
__host__ __device__ __forceinline__ double u128_to_double(tg_u128 x)
{
    const uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    if (hi == 0)
        return (double)lo;
    const int s = leading_zeros64(hi);
    const uint64_t top = s ? hi << s | lo >> (64 - s) : hi;
    const uint64_t rest = s ? lo << s : lo;
    return (double)(top | (rest != 0)) * tg_pow2(64 - s); /* under 2^128: exact */
}

__host__ __device__ __forceinline__ double i128_to_double(tg_i128 x)
{
    return x < 0 ? -u128_to_double((tg_u128)0 - (tg_u128)x) : u128_to_double((tg_u128)x);
}

#endif
