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

#ifdef __cplusplus
extern "C" {
#endif

/* argv[0] is the subcommand ("bench" or "run"); returns the process exit code:
 * 0 all results OK, 1 a mismatch or a failed call, 2 a usage error. */
int tg_bench_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
