/*
 * Hopper's warpgroup matrix multiply (wgmma, sm_90a) on INT8 operands in shared memory with
 * INT32 accumulators, beside wgmma_tf32.cuh, whose fences, commit, wait, register budget and
 * descriptors it shares (tests/emulated/overrides/ has its CPU twin).
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
        "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p;\n}\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]),
          "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]),
          "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]),
          "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]),
          "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]),
          "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]),
          "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]),
          "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]),
          "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]),
          "+r"(d[55]), "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]),
          "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
        : "l"(a), "l"(b), "r"((int)accumulate)
        : "memory");
#else
    (void)d, (void)a, (void)b, (void)accumulate;
    __trap();
#endif
}

#undef TG_WGMMA_S8_UNAVAILABLE

#endif
