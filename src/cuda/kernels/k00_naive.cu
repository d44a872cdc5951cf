/*
 * Rung 0: naive.  sgemm_naive_32x8
 *
 * One thread per element of C computes its whole dot product straight from global memory.
 *   block tile   32 x 8 outputs (threadIdx.x along the columns of C, so a warp's loads of B and
 *                its stores to C touch consecutive addresses and coalesce)
 *   thread tile  1 x 1
 *   stages       none: no shared memory, no reuse; every output reads 2k floats
 * Constraints: none (any m, n, k, strides and alignment).
 * Benchmark:   tilegemm bench --algo naive 4096x4096x4096
 * Measured:    naive 3.0 TFLOP/s (0.06x cuBLAS) at 4096x4096x4096, 4.7 TFLOP/s (0.09x cuBLAS) at 2048x2048x2048, 3.7 TFLOP/s (0.11x cuBLAS) at 1024x1024x1024, 3.7 TFLOP/s (0.11x cuBLAS) at 1000x1000x1000 on NVIDIA H100 80GB HBM3, commit 81d70e4 (bench/results/nvidia-h100-80gb-hbm3-2026-11-23-81d70e4.json)
 */
#include "common.cuh"

namespace {

constexpr int kBlockX = 32; /* threads along n */
constexpr int kBlockY = 8;  /* threads along m */

__global__ void sgemm_naive(const tg_problem p)
{
    const int64_t col = blockIdx.x * (int64_t)kBlockX + threadIdx.x;
    const int64_t row = blockIdx.y * (int64_t)kBlockY + threadIdx.y;
    if (row >= p.m || col >= p.n)
        return;
    const batch_item item(p);
    float acc = 0.0f;
    for (int64_t i = 0; i < p.k; ++i)
        acc += item.A[row * p.a_rs + i * p.a_cs] * item.B[i * p.b_rs + col * p.b_cs];
    store_result(&item.C[row * p.ldc + col], acc, p.alpha, p.beta);
}

int launch_naive(const tg_problem *p, void *stream)
{
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(ceil_div(p->n, kBlockX), ceil_div(p->m, kBlockY), (unsigned)p->batch);
    sgemm_naive<<<grid, block, 0, (cudaStream_t)stream>>>(*p);
    return (int)cudaGetLastError();
}

const char *naive_unsupported(const tg_problem *) { return nullptr; }

} // namespace

extern "C" const tg_rung tg_rung_naive = {.name = "naive", .level = 0,
    .summary = "one thread per output, dot product from global memory (32x8 threads)",
    .block_rows = kBlockY, .block_cols = kBlockX, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_naive, .unsupported = naive_unsupported};
