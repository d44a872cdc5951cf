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
    return ldexp((double)(top | (rest != 0)), 64 - s);
}

__host__ __device__ __forceinline__ double i128_to_double(tg_i128 x)
{
    return x < 0 ? -u128_to_double((tg_u128)0 - (tg_u128)x) : u128_to_double((tg_u128)x);
}

#endif
