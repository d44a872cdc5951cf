/*
 * CPU backend: the float64 reference (the oracle of the tests and of `tilegemm verify`) and the
 * fast cache-blocked path used where there is no GPU or the problem is too small for a launch.
 * Both take a normalized problem (see problem.h) that has passed validation, any m, n, k >= 0,
 * and implement the full BLAS semantics: beta = 0 never reads C, alpha = 0 never reads A or B.
 */
#ifndef TG_CPU_H
#define TG_CPU_H

#include "../problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fast path: packed panels, register-tiled micro-kernel, OpenMP over all cores.  Where its
 * packing buffers cannot be allocated it falls back on a plain loop: it cannot fail (the BLAS
 * shims rely on that). */
void tg_cpu_sgemm(const tg_problem *p);
/* The same for the API: returns -1, with nothing written, where the packing buffers cannot be
 * allocated, so that the caller can report TG_ERROR_ALLOCATION. */
int tg_cpu_sgemm_checked(const tg_problem *p);

/* Reference: each dot product accumulated in float64, rounded once to float on store. */
void tg_ref_sgemm(const tg_problem *p);

/*
 * For checking: the float64 result of the product (with C_in as the old C) into ref, and the
 * magnitude |alpha| * sum_p |a_ip * b_pj| + |beta * c_ij| into bound, both dense row-major
 * m x n per batch item (item b at offset b * m * n).  C_in follows p->C's strides and is
 * only read when beta != 0.
 */
void tg_ref_gemm_f64(const tg_problem *p, const float *C_in, double *ref, double *bound);

/*
 * Worst scaled error of a float result against tg_ref_gemm_f64's output:
 * max over elements of |c - ref| / ((k + 2) * FLT_EPSILON * bound), with bound floored at
 * FLT_MIN.  Any correct float32 summation order gives at most 1; NaN returns +inf.
 * C follows p->C's strides.
 */
double tg_scaled_error(const tg_problem *p, const float *C, const double *ref,
                       const double *bound);

#ifdef __cplusplus
}
#endif

#endif
