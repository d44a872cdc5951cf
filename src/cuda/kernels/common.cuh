/*
 * Pieces every rung shares.  Kernels see the normalized row-major problem of problem.h:
 * op(A)(i, p) = A[i * a_rs + p * a_cs], op(B)(p, j) = B[p * b_rs + j * b_cs],
 * C(i, j) = C[i * ldc + j], batch item blockIdx.z.
 */
#ifndef TG_KERNELS_COMMON_CUH
#define TG_KERNELS_COMMON_CUH

#include <cuda_runtime.h>

#include "../../problem.h"
#include "../registry.h"

/* Offsets one batch item's pointers; blockIdx.z is the item. */
struct batch_item {
    const float *A;
    const float *B;
    float *C;
    __device__ explicit batch_item(const tg_problem &p)
        : A(p.A + blockIdx.z * p.stride_a), B(p.B + blockIdx.z * p.stride_b),
          C(p.C + blockIdx.z * p.stride_c)
    {
    }
};

/* C = alpha * acc + beta * C, where beta == 0 must not read C (it may hold NaN). */
__device__ __forceinline__ void store_result(float *c, float acc, float alpha, float beta)
{
    *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

/* store_result for 4 consecutive outputs by one 16-byte access; c must be 16-byte aligned.
 * beta == 0 must not read C. */
__device__ __forceinline__ void store_result4(float *c, float4 acc, float alpha, float beta)
{
    float4 r;
    if (beta == 0.0f) {
        r = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    } else {
        const float4 old = *reinterpret_cast<const float4 *>(c);
        r = make_float4(alpha * acc.x + beta * old.x, alpha * acc.y + beta * old.y,
                        alpha * acc.z + beta * old.z, alpha * acc.w + beta * old.w);
    }
    *reinterpret_cast<float4 *>(c) = r;
}

static inline unsigned ceil_div(int64_t a, int64_t b) { return (unsigned)((a + b - 1) / b); }

#endif
