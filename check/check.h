/*
 * One checked run of tg_sgemm: fresh random operands, a poisoned output, the float64
 * reference, and a check that nothing outside C's m x n region moved.  Shared by
 * `tilegemm verify` and the tests, so both judge a result the same way.
 */
#ifndef TG_CHECK_H
#define TG_CHECK_H

#include <stdint.h>

#include "tilegemm.h"

typedef enum tg_memory_choice {
    TG_CHECK_HOST = 0,   /* host pointers: CPU or staged through the device */
    TG_CHECK_DEVICE = 1, /* cudaMalloc'd operands (needs a GPU) */
    TG_CHECK_MANAGED = 2 /* cudaMallocManaged operands (needs a GPU) */
} tg_memory_choice;

/* What the operands hold.  Every distribution fills A, B and C (when beta reads it); the
 * padding between lines and items always holds NaN, so a read of it shows. */
typedef enum tg_distribution {
    TG_DIST_UNIFORM = 0, /* uniform in [-1, 1) */
    TG_DIST_WIDE,        /* uniform times 2^e, e uniform in [-12, 12] */
    TG_DIST_CANCEL,      /* pairs along k that cancel: sums near zero against sum |a b| */
    TG_DIST_INT12,       /* integers that need 12 bits (> TF32's 11) against -1, 0, 1: every
                          * float32 sum is exact, so FFMA arithmetic must match bit for bit */
    TG_DIST_SPECIAL,     /* uniform with Inf, -Inf and NaN sprinkled through A, B and C */
    TG_DIST_SUBNORMAL,   /* subnormal and near-FLT_MIN A and C: no flush to zero allowed */
    TG_DIST_HUGE,        /* results near FLT_MAX (2^126 and up) that do not overflow */
    TG_DIST_COUNT
} tg_distribution;

const char *tg_distribution_name(tg_distribution d);
/* Index of a name ("uniform", "wide", ...), or -1. */
int tg_distribution_from_name(const char *name);

typedef struct tg_case {
    tg_layout layout;
    tg_op transa, transb;
    int64_t m, n, k;
    int64_t ld_pad;   /* added to every leading dimension's minimum */
    float alpha, beta;
    int64_t batch;    /* 1 calls tg_sgemm, more calls tg_sgemm_strided_batched */
    int share_a;      /* batched only: stride_a = 0 */
    int misalign;     /* offset A, B and C by one float from their allocation */
    int small_ints;   /* inputs in -4..4, so every float32 sum is exact */
    tg_memory_choice memory;
    tg_distribution distribution; /* TG_DIST_UNIFORM unless set (small_ints overrides it) */
} tg_case;

/* The arithmetic a handle's products use, which sets what a result is held to:
 *   FFMA    scaled error <= 1, exact cases bit for bit, RMS within the FP32 bound;
 *   3XTF32  the same, except that >11-bit integer cases need not be bit-exact;
 *   TF32    the TF32 bounds (see tg_rms_limit and tg_check_case), reported, not FP32; an FP32
 *           subnormal input may read as zero, as the tensor core reads it. */
typedef enum tg_check_arith { TG_CHECK_FFMA = 0, TG_CHECK_3XTF32, TG_CHECK_TF32 } tg_check_arith;

const char *tg_check_arith_name(tg_check_arith a);
/* What h runs: the CPU backend and strict math are FFMA, a forced rung its registry arithmetic,
 * auto the least accurate arithmetic its math mode lets it pick. */
tg_check_arith tg_handle_arith(const tg_handle *h);

typedef struct tg_case_result {
    tg_status status;
    tg_check_arith arith;  /* what the result was held to */
    double scaled_error;   /* worst |c - ref| / ((k + 2) eps sum |alpha a b| + |beta c|);
                            * with TF32 arithmetic the unit is (k + 2) eps + 2^-9 */
    double rms;            /* RMS of |c - ref| / (sum |alpha a b| + |beta c|) over finite
                            * outputs; -1 when not measured (see tg_rms_measured) */
    double rms_limit;      /* what rms was held to */
    int exact;             /* 1 when the result had to match bit for bit */
    int64_t moved_outside; /* elements outside the m x n region that changed */
    int64_t moved_inputs;  /* elements of A or B (padding included) that changed */
    int harness;           /* 1 when the check itself could not run (memory, copies): not the
                            * library's failure */
    int refused;           /* 1 when the forced rung's constraints refuse the call
                            * (TG_ERROR_NOT_SUPPORTED, e.g. gemv8 with m and n over 8): neither
                            * a pass nor a failure */
    int passed;
    char detail[600];      /* why it failed */
} tg_case_result;

/* Runs the case on h (its backend and algo as set) with data drawn from seed. */
void tg_check_case(tg_handle *h, const tg_case *c, uint64_t seed, tg_case_result *r);

/* The RMS bound of a case: FP32 arithmetic sqrt(k + 2) * 2^-24, TF32 2^-10 + that.  Measured on
 * uniform data: float32 sums 1e-8 to 2e-8 whatever k (50 to 600 times under the bound); inputs
 * rounded to TF32 about 3.4e-4 / sqrt(k) (4.3e-5 at k = 65, 2.0e-5 at 300, 5.3e-6 at 4097),
 * above the FP32 bound for every k below about 5000, which covers every shape of the sweeps.  RMS is measured only where it means something: at least 256
 * finite outputs, k >= 1, alpha != 0, and a distribution other than integers, special values
 * and subnormals (tg_rms_measured). */
double tg_rms_limit(const tg_case *c, tg_check_arith arith);
int tg_rms_measured(const tg_case *c);

/* Holds r's RMS to max(its own limit, 1.5 * the strict FMA path's RMS on the same data), the
 * rule of `tilegemm verify`, and updates r->passed and r->detail. */
void tg_check_against_strict(const tg_case *c, tg_case_result *r, const tg_case_result *strict);

/* Whether `got`, a float32 result, agrees with `want`, the exact value in float64, within
 * `bound` (>= 0, the error a float32 evaluation may make), judging want as float32 would hold
 * it: NaN only where want is NaN, an infinity only where want is the same one or where want,
 * moved by at most bound, reaches float32's overflow threshold (FLT_MAX and half an ulp,
 * 2^128 - 2^103, from which round to nearest gives inf) with the infinity's sign; otherwise
 * |got - want| <= bound.  A finite want past FLT_MAX is thus expected as inf (or, within the
 * bound, as a float near FLT_MAX), never as any other value. */
int tg_float_agrees(float got, double want, double bound);

/* Bytes the check of c allocates (operands twice, reference, bounds); -1 when that does not fit
 * in an int64, so a tool can refuse the case before it allocates anything. */
int64_t tg_case_bytes(const tg_case *c);

/* "row NT 33x7x127 ld+3 alpha=1.5 beta=-0.5 batch 3" */
void tg_case_name(const tg_case *c, char *buf, int size);

#endif
