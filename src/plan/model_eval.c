/*
 * The cost model's formula (src/plan/cost_model.h) as a function bench/fit_model.py can call
 * through ctypes, so the fit and the planner predict with the same code: the formula lives in
 * cost_model.h alone.  Built as libtilegemm_model_eval.so beside the library.
 */
#include "cost_model.h"

/* An m x n x k product (batch 1) as the sweeps run it: C 256-byte aligned (as cudaMalloc
 * returns it), its rows ldc floats apart. */
static tg_problem swept_problem(long long m, long long n, long long k, long long ldc,
                                int beta_nonzero)
{
    return (tg_problem){.m = m, .n = n, .k = k, .alpha = 1.0f, .beta = beta_nonzero ? 1.0f : 0.0f,
                        .C = (float *)256, .ldc = ldc, .batch = 1};
}

/* Microseconds for an m x n x k product (batch 1) cut into `slices`, on a rung of this block
 * tile and model row, on a GPU of sm_count SMs with this launch cost and streaming rate; C
 * 256-byte aligned (as cudaMalloc returns it) with rows ldc floats apart; beta_nonzero: C is
 * read as well; staged_bytes: the rung's workspace traffic; phases (a tg_phases) and
 * blocks_per_sm: the rung's (tg_rung). */
double tg_model_eval_us(double launch_us, double dram_gbs, int occupancy, int bk, double wave_us,
                        double kstep_us, double c_gbs, double c_wide_gbs, int block_rows, int block_cols,
                        int sm_count, long long m, long long n, long long k, long long ldc,
                        int slices, int beta_nonzero, double staged_bytes,
                        int phases, int blocks_per_sm)
{
    const tg_model_device dev = {.cc = 0, .launch_us = launch_us, .dram_gbs = dram_gbs};
    const tg_model_rung row = {.occupancy = occupancy, .bk = bk, .wave_us = wave_us,
                               .kstep_us = kstep_us, .c_gbs = c_gbs,
                               .c_wide_gbs = c_wide_gbs};
    const tg_problem p = swept_problem(m, n, k, ldc, beta_nonzero);
    return 1e6 * tg_model_seconds(&dev, &row, block_rows, block_cols, sm_count, &p, slices,
                                  staged_bytes, (tg_phases)phases, blocks_per_sm, 0);
}

/* The k steps the formula counts for k on a row walking k in steps of bk (tg_model_ksteps): the
 * fit's least squares weigh its k-step cost by them. */
double tg_model_eval_ksteps(long long k, int bk) { return tg_model_ksteps((double)k, bk); }

/* The waves the formula counts for `blocks` of a rung whose SMs hold blocks_per_sm
 * (tg_model_waves). */
double tg_model_eval_waves(double blocks, int sm_count, int occupancy, int blocks_per_sm)
{
    return tg_model_waves(blocks, sm_count, occupancy, blocks_per_sm);
}

/* 1 where a swept product's C, rows ldc floats apart, takes the wide C rate (tg_model_c_wide):
 * the fit sorts the runs into the two classes by it. */
int tg_model_eval_c_wide(long long ldc)
{
    const tg_problem p = swept_problem(1, 1, 1, ldc, 0);
    return tg_model_c_wide(&p);
}
