/*
 * The one internal description of a product, shared by validation's output, planning and
 * every backend.
 *
 * Whatever the caller's layout and transposes, a call is normalized to a row-major problem
 * with general strides:
 *   op(A)(i, p) = A[i * a_rs + p * a_cs]          i < m, p < k
 *   op(B)(p, j) = B[p * b_rs + j * b_cs]          p < k, j < n
 *   C(i, j)     = C[i * ldc + j]                  i < m, j < n
 * and batch item b adds b * stride_a / stride_b / stride_c to the three pointers.
 * A column-major call C = op(A) op(B) becomes the row-major C^T = op(B)^T op(A)^T, so the
 * kernels only ever see one convention and transposes cost nothing but a stride swap.
 */
#ifndef TG_PROBLEM_H
#define TG_PROBLEM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_problem {
    int64_t m, n, k;
    float alpha, beta;
    const float *A;
    int64_t a_rs, a_cs, stride_a;
    const float *B;
    int64_t b_rs, b_cs, stride_b;
    float *C;
    int64_t ldc, stride_c;
    int64_t batch;
} tg_problem;

/* The one rule for whether there is a product to compute: alpha != 0 and k > 0.  Otherwise
 * C = beta * C and A and B are never read. */
static inline int tg_has_product(float alpha, int64_t k) { return alpha != 0.0f && k > 0; }

/* 1 when the problem has no element of C to write. */
static inline int tg_problem_is_empty(const tg_problem *p)
{
    return p->m <= 0 || p->n <= 0 || p->batch <= 0;
}

#ifdef __cplusplus
}
#endif

#endif
