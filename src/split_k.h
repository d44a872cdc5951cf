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

/* The slices of p (batch 1) into `slices` parts writing to workspace, which must hold
 * tg_split_k_workspace(p, slices) floats. */
void tg_split_k_make(const tg_problem *p, int slices, float *workspace, tg_split_k *out);
int64_t tg_split_k_workspace(const tg_problem *p, int slices);

#ifdef __cplusplus
}
#endif

#endif
