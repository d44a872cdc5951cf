/*
 * The planner's cost model: a predicted time for running a normalized problem on one rung of
 * the ladder, with or without split-K, on a GPU of a given compute capability.
 *
 * For a rung with block tile BM x BN that walks k in steps of `bk`:
 *   tiles   = ceil(m / BM) * ceil(n / BN) * batch * full slices
 *   waves   = ceil(tiles / SMs), the blocks the busiest SM runs, past the first round rounded
 *             up to whole groups of the blocks an SM holds at once (tg_model_waves), over the
 *             row's `occupancy`
 *   compute = waves * (wave_us + kstep_us * ksteps), ksteps = ceil(slice_k / bk), or
 *             slice_k / bk where slice_k < bk (tg_model_ksteps)
 *   memory  = (bytes of A and B, and of C read when beta != 0) / dram_gbs
 *             + bytes of C written / (c_gbs * busy), busy = min(1, tiles / SMs): c_gbs is the
 *               rate of the rung's stores from every SM (c_wide_gbs where C's rows take 16-byte
 *               stores, tg_model_c_wide), and an SM without a block writes none
 *             + staged_bytes / dram_gbs (a rung that stages its operands in workspace first,
 *               rung 9's TF32 planes, writes them and reads them again; the planner says how
 *               many, tg_staged_bytes)
 *   time    = launch_us + max(compute, memory), or where the rung stores C in step with
 *             its arithmetic (tg_rung.phases TG_PHASES_STORES_AFTER) launch_us + C's writes +
 *             max(compute, the rest of memory), or where its passes over memory and its
 *             products run in turn (TG_PHASES_IN_TURN) launch_us + compute + memory
 *             + with a tail slice (split_k.h: k not a multiple of slice_k): launch_us + the
 *               waves of one slice's tiles over the tail's k steps (as the corpus timed it:
 *               a short tail is summed by the reduction since, and costs less)
 *             + with slices > 1: launch_us + (partials + 1 + (beta != 0)) * 4 * m * n / dram_gbs
 * A stream-K rung (one wave of blocks sharing all the k steps) has a formula of its own,
 * tg_model_stream_k_seconds.
 * wave_us, kstep_us, c_gbs and c_wide_gbs (the rates at which the rung's stores write C: what
 * sets its time when k is short) are fitted per rung and operand orientation (op(A) along k or not,
 * op(B) along n or not) from a benchmark sweep on random shapes (bench/fit_model.py); the
 * fitted rows are data, tuning/model_sm_<cc>.tsv, embedded at build time (cmake/tuning.cmake).
 *
 * The formula misses what it does not count (a rung's pipeline fill at short k, how its loads
 * coalesce in each orientation, L2 reuse between tiles), by 20% and more on many shapes.  The
 * measured correction multiplies its time by exp(c . terms), terms being a quadratic in ln m,
 * ln n, ln(k per slice) and ln slices (tg_model_correction_terms), with c fitted per rung and
 * orientation by least squares on ln(measured / formula) over the regret corpus's train half
 * (bench/fit_correction.py, tuning/model_sm_<cc>_correction.tsv).  Replayed on its held-out
 * half the planner's geometric mean regret in fp32 fell from 1.047 to 1.037.
 */
#ifndef TG_COST_MODEL_H
#define TG_COST_MODEL_H

#include <math.h>

#include "../cuda/registry.h" /* tg_phases, tg_stream_k_whole_tiles */
#include "../problem.h"
#include "split_k.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_model_rung {
    int cc;              /* compute capability, major * 10 + minor */
    const char *algo;    /* the rung's name */
    int a_k_contiguous;  /* the orientation class the row was fitted on */
    int b_n_contiguous;
    int occupancy;       /* blocks a wave, as fitted: a scale of wave_us and kstep_us alone (the
                          * blocks an SM holds are the rung's, tg_rung.blocks_per_sm) */
    int bk;              /* k a block consumes per step */
    double wave_us;      /* fixed cost of one wave of tiles: prologue, epilogue, stores */
    double kstep_us;     /* cost of one k step of one wave */
    double c_gbs;        /* how fast its stores write C, GB/s */
    double c_wide_gbs;   /* the same where C's rows take 16-byte stores (tg_model_c_wide) */
} tg_model_rung;

typedef struct tg_model_device {
    int cc;
    double launch_us;    /* a kernel's launch and drain */
    double dram_gbs;     /* the memory bandwidth streaming kernels reach, GB/s */
} tg_model_device;

/* The measured correction of one rung row (see above).  Fitted on the H100's corpus, its terms
 * read m, n and k clamped to the random suite's range, [8, 32768], and its factor is held
 * within [1/2, 2]: a shape outside that range gets the correction at the range's edge, not a
 * quadratic's extrapolation. */
enum { TG_MODEL_CORRECTION_TERMS = 12 };
typedef struct tg_model_correction {
    int cc;
    const char *algo;
    int a_k_contiguous;
    int b_n_contiguous;
    double coef[TG_MODEL_CORRECTION_TERMS];
} tg_model_correction;

/* The embedded rows (generated from tuning/model_sm_<cc>*.tsv). */
extern const tg_model_rung tg_model_rungs[];
extern const int tg_model_rung_count;
extern const tg_model_device tg_model_devices[];
extern const int tg_model_device_count;
extern const tg_model_correction tg_model_corrections[];
extern const int tg_model_correction_count;

/* The rows a GPU of compute capability cc uses: its own, else those of the highest cc below
 * it, else of the lowest above (a GPU the sweep never ran on still gets a ranking).  NULL when
 * there are none. */
const tg_model_device *tg_model_device_for(int cc);
/* The rung's row for p's orientation class on that device's cc, NULL when it has none. */
const tg_model_rung *tg_model_rung_for(const tg_model_device *dev, const char *algo,
                                       const tg_problem *p);
/* Its measured correction for p's orientation class, NULL when it has none (factor 1). */
const tg_model_correction *tg_model_correction_for(const tg_model_device *dev, const char *algo,
                                                   const tg_problem *p);

/* The correction's terms for p cut into `slices`: 1, ln m, ln n, ln k, ln slices, their squares
 * and products, k being the whole product's (bench/fit_correction.py reads them from
 * test_plan_regret --dump, so they are written here alone). */
static inline double tg_model_clamped_ln(int64_t v)
{
    const double lo = 2.0794415416798357 /* ln 8 */, hi = 10.397207708399179 /* ln 32768 */;
    const double x = log((double)(v > 0 ? v : 1));
    return x < lo ? lo : x > hi ? hi : x;
}
static inline void tg_model_correction_terms(const tg_problem *p, int slices,
                                             double terms[TG_MODEL_CORRECTION_TERMS])
{
    const double lm = tg_model_clamped_ln(p->m), ln = tg_model_clamped_ln(p->n);
    const double lk = tg_model_clamped_ln(p->k), ls = log((double)(slices > 0 ? slices : 1));
    const double per_slice = lk - ls;
    const double t[TG_MODEL_CORRECTION_TERMS] = {
        1.0, lm, ln, lk, ls, lm * lm, ln * ln, per_slice * per_slice, lm * ln, lm * per_slice,
        ln * per_slice, ls * ls};
    for (int i = 0; i < TG_MODEL_CORRECTION_TERMS; ++i)
        terms[i] = t[i];
}
static inline double tg_model_correction_factor(const tg_model_correction *c, const tg_problem *p,
                                                int slices)
{
    if (!c)
        return 1.0;
    double terms[TG_MODEL_CORRECTION_TERMS], x = 0.0;
    tg_model_correction_terms(p, slices, terms);
    for (int i = 0; i < TG_MODEL_CORRECTION_TERMS; ++i)
        x += c->coef[i] * terms[i];
    const double bound = 0.6931471805599453; /* ln 2 */
    return exp(x < -bound ? -bound : x > bound ? bound : x);
}

static inline double tg_model_ceil_div(double a, double b) { return (double)(int64_t)((a + b - 1.0) / b); }

/* The k steps of bk a block takes over k: whole steps, a k under one step its share of one.  A
 * row's bk is fitted, not the kernel's own step (the skinny rungs' rows step 64 where the
 * kernels step 16 or 32), so a whole step charged k = 13 the work of 64.  Counted so, with the
 * launch cost of the train calls and the rows fitted at bk 64 refitted, leaving one train seed
 * out: fp32, strict and tf32 1.033 -> 1.031, 1.035 -> 1.033 and 1.034 -> 1.033, 87.8% ->
 * 88.4%, 87.8% -> 88.7% and 87.6% -> 88.2% within 1.10 (whole steps, so refitted: 87.2%,
 * 87.3% and 87.3%). */
static inline double tg_model_ksteps(double k, int bk)
{
    return k < bk ? k / bk : tg_model_ceil_div(k, bk);
}

/* The waves `blocks` take on sm_count SMs (see above), an SM holding blocks_per_sm of the rung's
 * blocks at once (tg_rung.blocks_per_sm; 0 counts as 1).  Counted as ceil(blocks / (SMs *
 * occupancy)) before, a last round of one block an SM cost a rung of 3 blocks an SM a whole
 * wave.  Counted in blocks an SM and C's rate over the busy SMs (tg_model_seconds), the
 * correction refitted: leaving one train seed of the regret corpus out at a time (its
 * correction refitted without that seed too), fp32 85.4% -> 86.3% of calls within 1.10, strict
 * 83.7% -> 85.7%; test_plan_regret --cross-validate 86.3% -> 87.0% and 85.1% -> 86.3%; held
 * out, 84.4% -> 88.9% and 82.2% -> 86.9%, geometric mean 1.036 -> 1.029 and 1.045 -> 1.036.
 * The times read as if a launch's first round spread its blocks over the SMs one at a time, so
 * that where the busiest SM gets no more than it holds they cost their share of a round, and after
 * it an SM freed its slots together and took that many of the rest at once, so that a last round
 * of whole groups costs a whole round.  Rung 4's two-block rungs show it: on the train half's
 * unsplit calls of 0.2 ms or more, ffma64x256 and ffma256x64 ran 4-13% over the share count where
 * the busiest SM took 3 or 5 blocks, 5-9% under it at 2, 4 and 6.  Counted so, the correction
 * refitted, leaving one train seed out: strict 88.8% -> 90.3% within 1.10, fp32 and tf32 as they
 * were; held out, strict 88.9% -> 90.3%, worst 1.27 -> 1.24 (32196 x 134 x 6121 column-major TN:
 * 378 blocks of ffma64x256 took 2.50 ms unsplit, 2.03 at 2 slices).  A last round costing the
 * square root of its share fits the four rungs' times closer (RMS log error after the correction
 * 0.112 -> 0.108, against 0.112 so) but planned no better (strict 90.0%). */
static inline double tg_model_waves(double blocks, int sm_count, int occupancy, int blocks_per_sm)
{
    const double per_sm = tg_model_ceil_div(blocks, sm_count);
    const double held = blocks_per_sm > 1 ? blocks_per_sm : 1;
    return (per_sm <= held ? per_sm : held * tg_model_ceil_div(per_sm, held)) / occupancy;
}

/* 1 where C's pointer, row stride and batch stride let the FFMA rungs (3, 4, 5, 7) store C 16
 * bytes at a time (store_result_run4, src/cuda/kernels/common.cuh; shortk128 also needs beta
 * == 0); elsewhere they store it element by element.  Their rows' c_wide_gbs is the rate of the
 * first, c_gbs of the second: on the train runs of skinny32x32 at k <= 32 C went at 1.1-2.8
 * TB/s with ldc a multiple of 4 floats and 0.5-0.9 TB/s without, and one rate for both planned
 * shortk128 over the skinny rungs (3763 x 328 x 13: 10.7 us against 6.75).  c_wide_gbs is
 * c_gbs times the ratio of the rung's two rates over its runs in every orientation
 * (bench/fit_model.py); with it, the correction refitted, leaving one train seed out: fp32 and
 * tf32 88.4% -> 88.5% and 88.2% -> 88.4% within 1.10, strict 1.033 -> 1.032.  Rung 9 has its
 * own alignment class (rows on 32 bytes, its staged epilogue) and the other rungs' stores do
 * not turn on it: their two rates are one. */
static inline int tg_model_c_wide(const tg_problem *p)
{
    return (uintptr_t)p->C % 16 == 0 && p->ldc % 4 == 0 && (p->batch <= 1 || p->stride_c % 4 == 0);
}

/* The block tiles of p's outputs, every item of its batch: one slice of k's blocks. */
static inline double tg_model_tiles(int block_rows, int block_cols, const tg_problem *p)
{
    return tg_model_ceil_div((double)p->m, block_rows) * tg_model_ceil_div((double)p->n, block_cols) *
           (double)p->batch;
}

/* A stream-K rung (tg_rung.stream_k; the schedule: src/cuda/kernels/stream_k.cuh), never split:
 * SMs x blocks_per_sm blocks share the k steps of all tiles but the whole waves run before
 * them, so an SM's blocks take the rounds of whole tiles, then their even share of the rest,
 * each piece of a tile paying the row's wave_us.  A tile shared by several blocks costs its
 * pieces' partials written and read back (at the streaming rate: an upper bound, they mostly
 * stay in L2), and the block that sums it reads them alone after its own work, at an SM's share
 * of three times the streaming rate (L2): on an H200, 630x247x6904 (10 tiles of 128x128 in 27
 * pieces each) ran 0.095 ms where the formula without that term said 0.066.  The counters'
 * memset is a launch of its own.  The row's rates are those of the entry it runs a tile at a
 * time (tg_rung.model_as). */
static inline double tg_model_stream_k_seconds(const tg_model_device *dev,
                                               const tg_model_rung *row, int block_rows,
                                               int block_cols, int sm_count,
                                               const tg_problem *p, int blocks_per_sm)
{
    const double m = (double)p->m, n = (double)p->n, k = (double)p->k;
    const double batch = (double)p->batch;
    const double per_us = dev->dram_gbs * 1e3; /* bytes a microsecond */
    const double held = blocks_per_sm > 1 ? blocks_per_sm : 1;
    const double blocks = (double)sm_count * held;
    const double tiles = tg_model_tiles(block_rows, block_cols, p) / batch; /* an item's */
    const double ksteps = tg_model_ksteps(k, row->bk);
    const double whole_rounds =
        (double)(tg_stream_k_whole_tiles((uint64_t)tiles, (uint64_t)blocks) / (uint64_t)blocks);
    const double shared = tiles - whole_rounds * blocks;
    const double share = shared * ksteps / blocks; /* k steps a block */
    const double pieces = share >= ksteps ? ceil(share / ksteps) + 1.0 : 2.0;
    const int cut = share < ksteps * shared; /* some tile is shared */
    const double tile_bytes = 4.0 * block_rows * block_cols;
    const double tile_pieces = (blocks + shared) / shared; /* of a shared tile, about */
    const double summing_us = cut ? tile_pieces * tile_bytes / (3.0 * per_us / sm_count) : 0.0;
    const double compute_us =
        batch * ((held / row->occupancy) *
                     (whole_rounds * (row->wave_us + row->kstep_us * ksteps) +
                      pieces * row->wave_us + row->kstep_us * share) +
                 summing_us);
    const double partials_us = cut ? batch * 2.0 * tile_bytes * (blocks + shared) / per_us : 0.0;
    const double c_gbs = tg_model_c_wide(p) ? row->c_wide_gbs : row->c_gbs;
    const double memory_us = 4.0 * batch * (m * k + k * n + (p->beta != 0.0f) * m * n) / per_us +
                             4.0 * batch * m * n / (c_gbs * 1e3) + partials_us;
    const double us = 2.0 * dev->launch_us * batch + /* the memset and the kernel */
                      (compute_us > memory_us ? compute_us : memory_us);
    return us * 1e-6;
}

/* Predicted seconds for p on a rung with this block tile and model row, cut into `slices`
 * slices of k (1: not split), on a GPU with sm_count SMs, moving staged_bytes through
 * workspace besides; phases: how its arithmetic and its memory traffic meet in time
 * (tg_rung.phases); blocks_per_sm: the rung's (tg_model_waves); stream_k: the rung runs by
 * stream-K (tg_rung.stream_k), timed by tg_model_stream_k_seconds instead.  Inline: the
 * planner weighs up to a few hundred (rung, slices) pairs a call, and what does not depend on
 * the slices is hoisted out of its loop. */
static inline double tg_model_seconds(const tg_model_device *dev, const tg_model_rung *row, int block_rows,
                        int block_cols, int sm_count, const tg_problem *p, int slices,
                        double staged_bytes, tg_phases phases, int blocks_per_sm, int stream_k)
{
    if (stream_k)
        return tg_model_stream_k_seconds(dev, row, block_rows, block_cols, sm_count, p,
                                         blocks_per_sm);
    const double m = (double)p->m, n = (double)p->n, k = (double)p->k;
    const double batch = (double)p->batch;
    /* split: `full` slices of slice_k in one launch, then the tail's launch (split_k.h) */
    const tg_split_k_lengths cut = tg_split_k_lengths_of(p->k, slices);
    const double full = (double)cut.full, partials = full + (cut.tail > 0);
    const double per_slice = tg_model_tiles(block_rows, block_cols, p);
    const double waves = tg_model_waves(per_slice * full, sm_count, row->occupancy, blocks_per_sm);
    const double ksteps = tg_model_ksteps((double)cut.slice_k, row->bk);
    const double compute_us = waves * (row->wave_us + row->kstep_us * ksteps);
    const double per_us = dev->dram_gbs * 1e3; /* bytes a microsecond */
    const double c_reads = slices == 1 && p->beta != 0.0f ? 1.0 : 0.0;
    /* the SMs with a block write C; fewer than all reach that share of c_gbs (shortk128's 90
     * blocks of 3763 x 328 x 13 took 10.7 us, 5.8 of launch and C at 0.68 of its rate) */
    const double busy = per_slice * full < sm_count ? per_slice * full / sm_count : 1.0;
    const double c_gbs = tg_model_c_wide(p) ? row->c_wide_gbs : row->c_gbs;
    const double c_writes_us = 4.0 * batch * partials * m * n / (c_gbs * 1e3 * busy);
    const double streamed_us = /* the rest, at the streaming rate */
        4.0 * batch * (m * k + k * n + c_reads * m * n) / per_us + staged_bytes / per_us;
    double us = dev->launch_us;
    /* Rung 7's blocks load, multiply and store in step (k07_shortk.cu), so C's writes add to
     * its arithmetic: its 205 x 28481 x 45 (C's rows odd) took 45.3 us, which the formula put
     * at 25.6 us overlapping them and puts at 42.1 adding them.  Added, with the row as it was
     * and the correction refitted, the corrected model's error on rung 7's train entries fell
     * from 0.127 to 0.110 (RMS of the log), on its held-out ones from 0.177 to 0.149. */
    if (phases == TG_PHASES_STORES_AFTER)
        us += c_writes_us + (compute_us > streamed_us ? compute_us : streamed_us);
    else if (phases == TG_PHASES_IN_TURN) /* rung 11: its passes, then its products, then more */
        us += compute_us + streamed_us + c_writes_us;
    else
        us += compute_us > streamed_us + c_writes_us ? compute_us : streamed_us + c_writes_us;
    if (cut.tail > 0) /* the tail runs after the batch: its own launch and waves */
        us += dev->launch_us + tg_model_waves(per_slice, sm_count, row->occupancy, blocks_per_sm) *
                                   (row->wave_us + row->kstep_us * tg_model_ksteps((double)cut.tail, row->bk));
    if (slices > 1) /* the reduction reads every partial product and writes C */
        us += dev->launch_us + 4.0 * m * n * (partials + 1.0 + (p->beta != 0.0f)) / per_us;
    return us * 1e-6;
}

/* The least time the measured correction may bring p to on this rung: its arithmetic at the
 * rate of the row's full waves, every SM busy with `occupancy` blocks, each k step in kstep_us.
 * The correction is a quadratic fitted where the corpus has calls; at the corners of the
 * range (31689x21030x17673) it can promise more than the rung ever ran (warptile64 at 70
 * TFLOP/s, over the FFMA peak; it ran 37), and a planner believing that picks it. */
static inline double tg_model_full_wave_seconds(const tg_model_rung *row, int block_rows,
                                                int block_cols, int sm_count, const tg_problem *p)
{
    const double per_step = (double)sm_count * row->occupancy * block_rows * block_cols * row->bk;
    return row->kstep_us * 1e-6 * (double)p->m * (double)p->n * (double)p->k * (double)p->batch /
           per_step;
}

#ifdef __cplusplus
}
#endif

#endif
