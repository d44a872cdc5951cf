/*
 * Split-K: a product whose m x n is too small to fill the GPU is cut along k into slices that
 * run as one batched launch of the chosen rung (plus one launch for a shorter last slice),
 * each writing its partial product to workspace; a reduction then forms
 * C = alpha * (sum of the partials) + beta * C.  No rung needs to know: a slice is an ordinary
 * problem with its k, its pointers moved along k, and beta = 0.  Deterministic (no atomics).
 */
#ifndef TG_SPLIT_K_H
#define TG_SPLIT_K_H

#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_split_k {
    int64_t slice_k;     /* k of each full slice, a multiple of 16 */
    tg_problem full;     /* the full slices as one batch; full.batch of them */
    tg_problem tail;     /* the remaining k % slice_k, or tail.k == 0 when there is none */
    int64_t partials;    /* full.batch + (tail.k > 0): m x n partial products in workspace */
} tg_split_k;

/* How many slices to cut p into for a GPU of sm_count SMs, when one block covers
 * block_rows x block_cols of C; 1 means do not split.  Splits only single products whose
 * tiles fill less than the GPU and whose slices keep at least 256 of k each. */
int tg_split_k_slices(const tg_problem *p, int block_rows, int block_cols, int sm_count);

/* The slices of p (batch 1) into `slices` parts writing to workspace, which must hold
 * tg_split_k_workspace(p, slices) floats. */
void tg_split_k_make(const tg_problem *p, int slices, float *workspace, tg_split_k *out);
int64_t tg_split_k_workspace(const tg_problem *p, int slices);

#ifdef __cplusplus
}
#endif

#endif
