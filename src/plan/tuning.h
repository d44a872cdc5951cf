/*
 * Tuned tables: what `tilegemm bench --tune` measured fastest on a GPU, per compute capability
 * and normalized shape.  They are data (tuning/sm_<cc>.tsv), embedded at build time by
 * cmake/tuning.cmake; `auto` looks a call up here before it falls back to its rule.
 * A row is itself a correctness check on that device: the tuner keeps only results that
 * passed the float64 check, and for each math mode only rungs whose arithmetic it allows.
 */
#ifndef TG_TUNING_H
#define TG_TUNING_H

#include "../problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_tuned {
    int cc;                /* compute capability, major * 10 + minor */
    int64_t m, n, k;       /* the normalized problem's shape */
    int a_k_contiguous;    /* op(A) stored along k (a_cs == 1) */
    int b_n_contiguous;    /* op(B) stored along n (b_cs == 1) */
    const char *algo;      /* the rung's name */
    int split_k;           /* 0: the planner's rule, 1: none, n: n slices */
    int math;              /* the tg_math mode the row was tuned for (0, fp32, by default) */
    double tflops;         /* its measured speed, 0 when the row does not say */
} tg_tuned;

/* The embedded rows of every tuning table file (generated). */
extern const tg_tuned tg_tuning_table[];
extern const int tg_tuning_count;

/* The row measured for exactly p's shape and operand orientation on a GPU of this compute
 * capability, for this math mode; else NULL.  Shapes between rows are the cost model's
 * (cost_model.h): a row is evidence for its own shape only. */
const tg_tuned *tg_tuning_lookup(const tg_tuned *table, int count, int cc, int math,
                                 const tg_problem *p);

#ifdef __cplusplus
}
#endif

#endif
