/*
 * Split-K: a product whose m x n is too small to fill the GPU is cut along k into slices that
 * run as one batched launch of the chosen rung (plus one launch for a shorter last slice),
 * each writing its partial product to workspace; a reduction then forms
 * C = alpha * (sum of the partials) + beta * C.  No rung needs to know: a slice is an ordinary
 * problem with its k, its pointers moved along k, and beta = 0.  Deterministic (no atomics).
 */
#ifndef TG_SPLIT_K_H
#define TG_SPLIT_K_H

#include <stddef.h>

#include "../problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A slice's k is a multiple of this: batch strides along k stay 16-byte aligned wherever the
 * operand's are, for the rungs' vector loads. */
#define TG_SPLIT_K_ALIGN 4

/* How k is cut: `full` slices of slice_k, run as one batched launch, then a tail of the rest
 * in a second launch on the same stream, after the first.  slice_k is k / slices rounded
 * down, not up: the tail is then under TG_SPLIT_K_ALIGN * slices long, where rounding up
 * would leave a tail nearly a whole slice long that runs alone after the batch and doubles
 * the time. */
typedef struct tg_split_k_lengths {
    int64_t slice_k, full, tail;
} tg_split_k_lengths;

static inline tg_split_k_lengths tg_split_k_lengths_of(int64_t k, int slices)
{
    if (slices <= 1) { /* not split: one slice of the whole k */
        const tg_split_k_lengths whole = {k, 1, 0};
        return whole;
    }
    int64_t slice_k = k / slices / TG_SPLIT_K_ALIGN * TG_SPLIT_K_ALIGN;
    if (slice_k < TG_SPLIT_K_ALIGN)
        slice_k = TG_SPLIT_K_ALIGN;
    const tg_split_k_lengths l = {slice_k, k / slice_k, k % slice_k};
    return l;
}

/* The slice counts the planner weighs, in order: 1, each count up to TG_SPLIT_K_FINE, then the
 * powers of two.  The counts between the powers of two let tiles x slices fill whole waves: a
 * product of 36 tiles on an H100 with room for 264 blocks of ffma128x128 runs 7 slices (252
 * blocks) in one wave where 8 (288) take two; 227x2300x11645 row-major NT ran 0.368 ms at 7
 * against 0.598 at 8 and 0.431 at 32 (bench/results/split-k/). */
#define TG_SPLIT_K_FINE 8
static inline int tg_split_k_next(int slices)
{
    return slices < TG_SPLIT_K_FINE ? slices + 1 : slices * 2;
}
/* Whether a count lies between the powers of two (3, 5, 6 or 7 of those weighed). */
static inline int tg_split_k_fine(int slices) { return (slices & (slices - 1)) != 0; }

/* A tail is summed by the reduction itself, each output's few terms read from op(A) and op(B),
 * instead of running as a launch of its own after the batch, where it has at most
 * TG_SPLIT_K_FOLD_TERMS terms an output (one round of the reduction's lanes) or at most
 * TG_SPLIT_K_FOLD_MOST products (m x n x its k).  A launch waits for the batch to drain and
 * writes a partial of all of C that the reduction reads again: rung 9's (its planes, its ring,
 * one block an SM) took 7-10 us where the batch took 15-50 (H200, 154x174x11511 and
 * 156x176x11512 at 16 and 32 slices), 27 us at 343 x 4018 with a tail of 4 (H200, ncu); an
 * FFMA rung's about 3 us at small outputs.  Past one round a term costs about a microsecond a
 * million: at 350 x 350 x 31 (3.8 million) a skinny rung's own launch costs as much, rung 9's
 * and ffma128x128's 20% of the call more (bench/results/split-k/tail-fold/). */
#define TG_SPLIT_K_FOLD_TERMS 8
#define TG_SPLIT_K_FOLD_MOST (4.0 * 1024 * 1024)

typedef struct tg_split_k {
    int64_t slice_k;     /* k of each full slice, a multiple of TG_SPLIT_K_ALIGN */
    tg_problem full;     /* the full slices as one batch; full.batch of them */
    tg_problem tail;     /* the remaining k % slice_k, or tail.k == 0 when there is none */
    int tail_folded;     /* the reduction sums the tail's terms (tg_split_k_tail_folds): no launch */
    int64_t partials;    /* full.batch, + 1 for a tail run as a launch: m x n partial products in
                          * workspace */
} tg_split_k;

/* Whether p's tail, of the cut l (tg_split_k_lengths_of), is summed by the reduction (see
 * above).  An unsplit cut has no tail. */
static inline int tg_split_k_tail_folds(const tg_problem *p, tg_split_k_lengths l)
{
    return l.tail > 0 && (l.tail <= TG_SPLIT_K_FOLD_TERMS ||
                          (double)p->m * (double)p->n * (double)l.tail <= TG_SPLIT_K_FOLD_MOST);
}

/* What `tilegemm explain` says of p cut into `slices`: the slices, the tail and where it is
 * summed, the fixed order (empty for slices <= 1). */
void tg_split_k_describe(const tg_problem *p, int slices, char *buf, size_t size);

/* The slices of p (batch 1) into `slices` parts writing to workspace, which must hold
 * tg_split_k_workspace(p, slices) floats. */
void tg_split_k_make(const tg_problem *p, int slices, float *workspace, tg_split_k *out);
int64_t tg_split_k_workspace(const tg_problem *p, int slices);

#ifdef __cplusplus
}
#endif

#endif
