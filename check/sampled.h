/*
 * A sampled float64 check of one dense product, for results too large for the full reference
 * of check.c: about `samples` entries of C, each recomputed in float64 straight from
 * (layout, transposes, leading dimensions), on the host.
 *
 * It reports the two measures tilegemm judges accuracy by:
 *   worst scaled error  max |c - ref| / ((k + 2) * FLT_EPSILON * bound), verify's measure,
 *                       where bound = |alpha| sum_p |a_ip b_pj| + |beta c_ij| (floored at
 *                       FLT_MIN); any correct FP32 summation order gives at most 1;
 *   RMS relative error  sqrt(mean((|c - ref| / bound)^2)), which shows precision lost by
 *                       reduced-precision arithmetic that the worst-case measure hides.
 * A NaN or Inf where the reference is finite makes both infinite.
 */
#ifndef TG_TOOLS_SAMPLED_H
#define TG_TOOLS_SAMPLED_H

#include <stdint.h>

#include "tilegemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A dense product C = alpha op(A) op(B) + beta C_in as the caller stored it. */
typedef struct tg_dense_gemm {
    tg_layout layout;
    tg_op transa, transb;
    int64_t m, n, k;
    float alpha, beta;
    const float *A;
    int64_t lda;
    const float *B;
    int64_t ldb;
    const float *C_in; /* C before the call; read only when beta != 0 */
    int64_t ldc;
} tg_dense_gemm;

typedef struct tg_sampled_error {
    double worst_scaled; /* <= 1 is FP32 accuracy */
    double rms;          /* RMS of |c - ref| / bound */
    int64_t samples;     /* entries checked */
} tg_sampled_error;

/* Checks every entry when m * n <= samples, else `samples` entries drawn from seed. */
void tg_sample_error(const tg_dense_gemm *g, const float *C, int64_t samples, uint64_t seed,
                     tg_sampled_error *out);

#ifdef __cplusplus
}
#endif

#endif
