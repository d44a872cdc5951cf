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
} tg_case;

typedef struct tg_case_result {
    tg_status status;
    double scaled_error;   /* see tg_scaled_error; <= 1 passes */
    int64_t moved_outside; /* elements outside the m x n region that changed */
    int passed;
    char detail[600];      /* why it failed */
} tg_case_result;

/* Runs the case on h (its backend and algo as set) with data drawn from seed. */
void tg_check_case(tg_handle *h, const tg_case *c, uint64_t seed, tg_case_result *r);

/* "row NT 33x7x127 ld+3 alpha=1.5 beta=-0.5 batch 3" */
void tg_case_name(const tg_case *c, char *buf, int size);

/* The command line that reruns one case, printed on failure. */
void tg_case_command(const tg_case *c, const char *algo, uint64_t seed, char *buf, int size);

#endif
