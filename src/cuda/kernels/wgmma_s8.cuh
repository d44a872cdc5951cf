/*
 * Hopper's warpgroup matrix multiply (wgmma, sm_90a) on INT8 operands in shared memory with
 * INT32 accumulators, beside wgmma_tf32.cuh, whose fences, commit, wait, register budget,
 * descriptors and accumulator operand list it shares (tests/emulated/overrides/ has its CPU
 * twin).
 *
 *   Operand tiles: ROWS x 128 bytes, a row (m of A, n of B) holding 128 consecutive k as
 *   int8 ("K-major"), rows in groups of 8 (1024 bytes), with the 128-byte swizzle: the byte
 *   layout of wgmma_tf32.cuh's tiles, so its smem_desc(tile, 8 s) is the descriptor of the k
 *   slice 32 s .. 32 s + 31 here (32 bytes in, either way).
 *
 *   wgmma_64x128x32_s8(d, a, b, accumulate)
 *                      d (+)= A * B for one warpgroup, asynchronously: A the 64 x 32 slice at
 *                      descriptor a, B the 32 x 128 slice at descriptor b (its 128 rows are
 *                      n); exact products of signed bytes, summed in INT32 (wrapping on
 *                      overflow, which the callers rule out); accumulate = false overwrites d
 *   fence_operand(d)   as wgmma_tf32.cuh's, for INT32 accumulators
 *
 * Accumulator fragment: wgmma_tf32.cuh's (warp w, g = lane / 4, t = lane % 4):
 *   d[4j + e] = D(16w + g + 8 (e / 2), 8j + 2t + e % 2), j = 0..15.
 */
#ifndef TG_KERNELS_WGMMA_S8_CUH
#define TG_KERNELS_WGMMA_S8_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "wgmma_tf32.cuh"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ != 900 || !defined(__CUDA_ARCH_FEAT_SM90_ALL))
#define TG_WGMMA_S8_UNAVAILABLE 1 /* the launcher refuses these GPUs (registry min_cc) */
#endif

__device__ __forceinline__ void fence_operand(int32_t (&d)[64])
{
#pragma unroll
    for (int i = 0; i < 64; ++i)
        asm volatile("" : "+r"(d[i])::"memory");
}

__device__ __forceinline__ void wgmma_64x128x32_s8(int32_t (&d)[64], uint64_t a, uint64_t b,
                                                   bool accumulate)
{
#ifndef TG_WGMMA_S8_UNAVAILABLE
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 " TG_WGMMA_D64_REGISTERS
        ", %64, %65, p;\n}\n"
        : TG_WGMMA_D64_OPERANDS("+r")
        : "l"(a), "l"(b), "r"((int)accumulate)
        : "memory");
#else
    (void)d, (void)a, (void)b, (void)accumulate;
    __trap();
#endif
}

#undef TG_WGMMA_S8_UNAVAILABLE

#endif
