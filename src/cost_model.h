/*
 * The planner's cost model: a predicted time for running a normalized problem on one rung of
 * the ladder, with or without split-K, on a GPU of a given compute capability.
 *
 * For a rung with block tile BM x BN that keeps `occupancy` blocks on each of the GPU's SMs and
 * walks k in steps of `bk`:
 *   tiles   = ceil(m / BM) * ceil(n / BN) * batch * slices
 *   waves   = ceil(tiles / (SMs * occupancy))
 *   compute = waves * (wave_us + kstep_us * ceil(ceil(k / slices) / bk))
 *   memory  = (bytes of A and B + bytes of C written, and read when beta != 0) / dram_gbs
 *   time    = launch_us + max(compute, memory)
 *             + with slices > 1: launch_us + (slices + 1 + (beta != 0)) * 4 * m * n / dram_gbs
 * wave_us and kstep_us are fitted per rung and operand orientation (op(A) along k or not,
 * op(B) along n or not) from a benchmark sweep on random shapes (bench/fit_model.py); the
 * fitted rows are data, tuning/model_sm_<cc>.tsv, embedded at build time (cmake/tuning.cmake).
 */
#ifndef TG_COST_MODEL_H
#define TG_COST_MODEL_H

#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_model_rung {
    int cc;              /* compute capability, major * 10 + minor */
    const char *algo;    /* the rung's name */
    int a_k_contiguous;  /* the orientation class the row was fitted on */
    int b_n_contiguous;
    int occupancy;       /* blocks resident on one SM */
    int bk;              /* k a block consumes per step */
    double wave_us;      /* fixed cost of one wave of tiles: prologue, epilogue, stores */
    double kstep_us;     /* cost of one k step of one wave */
} tg_model_rung;

typedef struct tg_model_device {
    int cc;
    double launch_us;    /* a kernel's launch and drain */
    double dram_gbs;     /* the memory bandwidth streaming kernels reach, GB/s */
} tg_model_device;

/* The embedded rows (generated from tuning/model_sm_<cc>.tsv). */
extern const tg_model_rung tg_model_rungs[];
extern const int tg_model_rung_count;
extern const tg_model_device tg_model_devices[];
extern const int tg_model_device_count;

/* The rows a GPU of compute capability cc uses: its own, else those of the highest cc below
 * it, else of the lowest above (a GPU the sweep never ran on still gets a ranking).  NULL when
 * there are none. */
const tg_model_device *tg_model_device_for(int cc);
/* The rung's row for p's orientation class on that device's cc, NULL when it has none. */
const tg_model_rung *tg_model_rung_for(const tg_model_device *dev, const char *algo,
                                       const tg_problem *p);

/* Predicted seconds for p on a rung with this block tile and model row, cut into `slices`
 * slices of k (1: not split), on a GPU with sm_count SMs. */
double tg_model_seconds(const tg_model_device *dev, const tg_model_rung *row, int block_rows,
                        int block_cols, int sm_count, const tg_problem *p, int slices);

#ifdef __cplusplus
}
#endif

#endif
