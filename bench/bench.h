/*
 * The benchmark driver behind `tilegemm bench` (and `tilegemm run`).
 *
 *   tilegemm bench [MxNxK ...] [--suite squares|awkward|transposes|all|quick]
 *                  [--algo NAME[,NAME...]] [--math fp32|strict|tf32] [--trans NN|NT|TN|TT[,...]]
 *                  [--layout row|col] [--repeats N] [--warmup N] [--rotate-mib N] [--save]
 *                  [--json FILE] [--commit SHA] [--split-k S,...] [--tune [--tune-file FILE]]
 *
 * With a GPU: every requested rung, `auto`, cuBLAS FP32 and cuBLAS FAST_TF32 are timed on the
 * same device buffers in one process (warm-up, then the median of per-run cudaEvent times,
 * buffers rotated so the working set exceeds the L2), each checked once against float64 on
 * sampled entries of C before it is timed.
 * Without a GPU: the CPU backend on host buffers, timed with CLOCK_MONOTONIC, GFLOP/s.
 * bench/suites.md describes the suites and the timing method.
 */
#ifndef TG_BENCH_H
#define TG_BENCH_H

#include "tilegemm.h" /* tg_math */

#ifdef __cplusplus
extern "C" {
#endif

/* argv[0] is the subcommand ("bench" or "run"); returns the process exit code:
 * 0 all results OK, 1 a mismatch or a failed call, 2 a usage error. */
int tg_bench_main(int argc, char **argv);

/* The roofline of the current GPU, what a call's speed of light is measured against: the
 * device-to-device copy rate measured now (GB/s, bytes read plus written), the FFMA peak from
 * the clock, and the tensor-core ceilings known for it (TFLOP/s; NAN where none is known or
 * without a GPU). */
typedef struct tg_roofline {
    double copy_gbs, ffma_tflops, x3tf32_tflops, tf32_tflops;
} tg_roofline;
tg_roofline tg_bench_roofline(void);
/* The tensor-core ceilings known for compute capability major.minor, into roof (left as they
 * are where none is known): on the H100 (9.0), 3xTF32 135 TFLOP/s, at three TF32 products
 * (405) per product. */
void tg_tensor_ceilings(int major, int minor, tg_roofline *roof);
/* The speed of light of an m x n x k product in math mode `mode`, seconds: the longest of its
 * flops at the mode's peak (3xTF32's for fp32, TF32's for tf32, FFMA's for strict and where
 * no tensor-core ceiling is known), its compulsory bytes (A and B read, C written once) at
 * the copy rate, and a 5 us launch floor.  *compute_s, *memory_s, *peak_tflops (each may be
 * NULL) get the first two and the peak used.  NAN where the roofline lacks a figure. */
double tg_speed_of_light_s(const tg_roofline *roof, tg_math mode, double m, double n, double k,
                           double *compute_s, double *memory_s, double *peak_tflops);

#ifdef __cplusplus
}
#endif

#endif
