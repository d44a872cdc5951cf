/*
 * TF32 tensor-core instructions (sm_80 and up) as tiny device functions, so the kernels read
 * as C++ and the inline PTX lives in one place (tests/emulated/overrides/ has its CPU twin).
 *
 *   tf32_round(x)          x rounded to TF32 (10-bit mantissa, FP32's exponent), to nearest
 *                          with ties away from zero, as cvt.rna.tf32.f32 does for finite x, by
 *                          two integer instructions (add half of the dropped range to the
 *                          magnitude's bits, clear the low 13): a value that rounds past
 *                          FLT_MAX becomes Inf, Inf stays Inf, and a NaN whose payload lies in
 *                          the low bits may become Inf (callers treat any non-finite result as
 *                          special anyway)
 *   mma_tf32_16x8x8(d, a, b)
 *                          d += a * b for one warp: a 16x8 tile of A (row), an 8x8 tile of B
 *                          (col), a 16x8 tile of D in FP32 (mma.sync.aligned.m16n8k8).  The
 *                          tensor core reads the top 19 bits of a and b.
 *
 * Fragments, with g = lane / 4 and t = lane % 4 (PTX ISA, "Matrix fragments for mma.m16n8k8"):
 *   a[0] = A(g, t)      a[1] = A(g + 8, t)     a[2] = A(g, t + 4)     a[3] = A(g + 8, t + 4)
 *   b[0] = B(t, g)      b[1] = B(t + 4, g)
 *   d[0] = D(g, 2t)     d[1] = D(g, 2t + 1)    d[2] = D(g + 8, 2t)    d[3] = D(g + 8, 2t + 1)
 * Every lane of the warp must call it together (it is a warp-wide instruction).
 */
#ifndef TG_KERNELS_MMA_TF32_CUH
#define TG_KERNELS_MMA_TF32_CUH

#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define TG_MMA_TF32_UNAVAILABLE 1 /* the launcher refuses these GPUs (registry min_cc) */
#endif

__device__ __forceinline__ float tf32_round(float x)
{
    return __uint_as_float((__float_as_uint(x) + 0x1000u) & ~0x1fffu);
}

__device__ __forceinline__ void mma_tf32_16x8x8(float (&d)[4], const float (&a)[4],
                                                const float (&b)[2])
{
#ifndef TG_MMA_TF32_UNAVAILABLE
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),
          "r"(__float_as_uint(a[3])), "r"(__float_as_uint(b[0])), "r"(__float_as_uint(b[1])));
#else
    (void)d, (void)a, (void)b;
    __trap();
#endif
}

#undef TG_MMA_TF32_UNAVAILABLE

#endif
