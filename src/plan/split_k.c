/* Split-K decomposition; see split_k.h. */
#include "split_k.h"

#include <stdio.h>

/* The m x n partial products of p's cut l: one a full slice, one more for a tail run as a
 * launch of its own (a folded tail adds its terms in the reduction). */
static int64_t partials_of(const tg_problem *p, tg_split_k_lengths l)
{
    return l.full + (l.tail > 0 && !tg_split_k_tail_folds(p, l));
}

int64_t tg_split_k_workspace(const tg_problem *p, int slices)
{
    return partials_of(p, tg_split_k_lengths_of(p->k, slices)) * p->m * p->n;
}

void tg_split_k_make(const tg_problem *p, int slices, float *workspace, tg_split_k *out)
{
    const tg_split_k_lengths l = tg_split_k_lengths_of(p->k, slices);
    const int64_t slice_k = l.slice_k, full = l.full;
    out->slice_k = slice_k;

    /* Slice s reads op(A)'s columns and op(B)'s rows s*slice_k onwards: a batch stride. */
    tg_problem f = *p;
    f.k = slice_k;
    f.alpha = 1.0f;
    f.beta = 0.0f;
    f.stride_a = slice_k * p->a_cs;
    f.stride_b = slice_k * p->b_rs;
    f.C = workspace;
    f.ldc = p->n;
    f.stride_c = p->m * p->n;
    f.batch = full;
    out->full = f;

    tg_problem t = f;
    t.k = p->k - full * slice_k;
    t.A = p->A + full * slice_k * p->a_cs;
    t.B = p->B + full * slice_k * p->b_rs;
    t.C = workspace + full * p->m * p->n;
    t.batch = 1;
    t.stride_a = t.stride_b = t.stride_c = 0;
    out->tail = t;
    out->tail_folded = tg_split_k_tail_folds(p, l);
    out->partials = partials_of(p, l);
}

void tg_split_k_describe(const tg_problem *p, int slices, char *buf, size_t size)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    if (slices <= 1)
        return;
    const tg_split_k_lengths l = tg_split_k_lengths_of(p->k, slices);
    char tail[96] = "";
    if (l.tail > 0)
        snprintf(tail, sizeof tail, ", then %lld more %s", (long long)l.tail,
                 tg_split_k_tail_folds(p, l) ? "summed by the reduction itself"
                                                  : "in a launch after them");
    snprintf(buf, size,
             "split-K: %lld slices of %lld along k%s, summed in a fixed order by a reduction "
             "kernel (bit-reproducible)\n",
             (long long)l.full, (long long)l.slice_k, tail);
}
