/*
 * The float64 reference: the oracle of the tests and of `tilegemm verify`.
 *
 * Deliberately plain triple loops, so that it is obviously right rather than fast.  Every
 * dot product is accumulated in double and rounded to float once, on store.  The BLAS rules
 * that a fast path can get wrong are spelled out here first:
 *   - beta == 0 never reads C (NaN or garbage in C must not leak into the result);
 *   - alpha == 0 or k == 0 never reads A or B (the result is beta * C, or 0 when beta == 0).
 */
#include "cpu.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

/* The double-precision value of sum_p op(A)(i, p) * op(B)(p, j); also sum_p |a * b| if asked. */
static double dot_f64(const tg_problem *p, const float *A, const float *B, int64_t i, int64_t j,
                      double *abs_sum)
{
    double sum = 0.0, mag = 0.0;
    for (int64_t q = 0; q < p->k; ++q) {
        double prod = (double)A[i * p->a_rs + q * p->a_cs] * (double)B[q * p->b_rs + j * p->b_cs];
        sum += prod;
        mag += fabs(prod);
    }
    if (abs_sum)
        *abs_sum = mag;
    return sum;
}

/* Element (i, j) of batch item b in float64: alpha * (A B)_ij + beta * c_ij, with C_in's old
 * value c; also its magnitude |alpha| sum |a b| + |beta c|.  Reads only what BLAS allows. */
static double reference_element(const tg_problem *p, const float *C_in, int64_t b, int64_t i,
                                int64_t j, double *magnitude)
{
    double value = 0.0, mag = 0.0;
    const int product = tg_has_product(p->alpha, p->k);
    if (product) {
        double abs_sum;
        value = (double)p->alpha *
                dot_f64(p, p->A + b * p->stride_a, p->B + b * p->stride_b, i, j, &abs_sum);
        mag = fabs((double)p->alpha) * abs_sum;
    }
    if (p->beta != 0.0f) {
        const double bc = (double)p->beta * (double)C_in[b * p->stride_c + i * p->ldc + j];
        /* Without a product the result is beta * C itself: 0.0 + bc would turn a -0 into +0. */
        value = product ? value + bc : bc;
        mag += fabs(bc);
    }
    *magnitude = mag;
    return value;
}

void tg_ref_sgemm(const tg_problem *p)
{
    double magnitude;
    for (int64_t b = 0; b < p->batch; ++b)
        for (int64_t i = 0; i < p->m; ++i)
            for (int64_t j = 0; j < p->n; ++j)
                p->C[b * p->stride_c + i * p->ldc + j] =
                    (float)reference_element(p, p->C, b, i, j, &magnitude);
}

void tg_ref_gemm_f64(const tg_problem *p, const float *C_in, double *ref, double *bound)
{
    for (int64_t b = 0; b < p->batch; ++b)
        for (int64_t i = 0; i < p->m; ++i)
            for (int64_t j = 0; j < p->n; ++j) {
                const int64_t out = (b * p->m + i) * p->n + j;
                ref[out] = reference_element(p, C_in, b, i, j, &bound[out]);
            }
}

double tg_scaled_error(const tg_problem *p, const float *C, const double *ref,
                       const double *bound)
{
    if (tg_problem_is_empty(p))
        return 0.0;
    /* (k + 2) * eps covers any float32 summation order plus the alpha and beta roundings. */
    const double unit = (double)(p->k + 2) * FLT_EPSILON;
    double worst = 0.0;
    for (int64_t b = 0; b < p->batch; ++b) {
        const float *c = C + b * p->stride_c;
        const double *r = ref + b * p->m * p->n;
        const double *bd = bound + b * p->m * p->n;
        for (int64_t i = 0; i < p->m; ++i) {
            for (int64_t j = 0; j < p->n; ++j) {
                double got = (double)c[i * p->ldc + j];
                double want = r[i * p->n + j];
                if (isnan(got) || isnan(want))
                    return INFINITY;
                if (got == want) /* also covers matching infinities */
                    continue;
                double scale = fmax(bd[i * p->n + j], FLT_MIN);
                double err = fabs(got - want) / (unit * scale);
                if (!(err <= worst))
                    worst = err;
            }
        }
    }
    return worst;
}
