/*
 * Rung 1: shared-memory tiling.  sgemm_tiled_16x16x16, sgemm_tiled_32x32x32
 *
 * What it adds over the naive rung: a TILE x TILE block stages one TILE x TILE tile of op(A)
 * and one of op(B) in shared memory per phase, so each float loaded from global memory is used
 * TILE times instead of once.  Global loads per output fall from 2k to 2k / TILE.
 *   block tile   TILE x TILE outputs, TILE x TILE threads, one output per thread
 *   k step       TILE per phase, ceil(k / TILE) phases
 *   shared       2 * TILE * TILE floats (2 KiB for TILE 16, 8 KiB for TILE 32)
 *   stages       1: a barrier after the loads, another before the next phase overwrites them
 * Edges: a load outside the matrix writes 0.0f to shared memory instead, so the partial tiles
 * of the last phase and of the right and bottom edges add nothing; the load's condition uses
 * only the element's own row and column, never whether the thread owns an output, because
 * every thread's load is read by others.  Only threads inside C store.
 * Constraints: none (any m, n, k, strides and alignment).
 * Benchmark:   tilegemm bench --algo tiled32 4096x4096x4096
 * Measured:    tiled16 8.1 TFLOP/s (0.15x cuBLAS) at 16384x16384x16384, 8.2 TFLOP/s (0.16x cuBLAS) at 8192x8192x8192, 8.0 TFLOP/s (0.18x cuBLAS) at 4097x4097x4097, 8.1 TFLOP/s (0.16x cuBLAS) at 4096x4096x4096; tiled32 8.9 TFLOP/s (0.17x cuBLAS) at 16384x16384x16384, 8.9 TFLOP/s (0.17x cuBLAS) at 8192x8192x8192, 8.6 TFLOP/s (0.19x cuBLAS) at 4097x4097x4097, 8.8 TFLOP/s (0.17x cuBLAS) at 4096x4096x4096 on NVIDIA H100 80GB HBM3, commit 81d70e4 (bench/results/nvidia-h100-80gb-hbm3-2026-11-23-81d70e4.json)
 */
#include "common.cuh"

namespace {

template <int TILE>
__global__ void sgemm_tiled(const tg_problem p)
{
    static_assert(TILE * TILE <= 1024, "a TILE x TILE block must fit the 1024-thread limit");
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t row = blockIdx.y * (int64_t)TILE + ty;
    const int64_t col = blockIdx.x * (int64_t)TILE + tx;
    const batch_item item(p);

    float acc = 0.0f;
    for (int64_t t0 = 0; t0 < p.k; t0 += TILE) {
        const int64_t a_col = t0 + tx; /* this thread's element of op(A): (row, a_col) */
        const int64_t b_row = t0 + ty; /* and of op(B): (b_row, col) */
        As[ty][tx] = row < p.m && a_col < p.k ? item.A[row * p.a_rs + a_col * p.a_cs] : 0.0f;
        Bs[ty][tx] = b_row < p.k && col < p.n ? item.B[b_row * p.b_rs + col * p.b_cs] : 0.0f;
        __syncthreads(); /* the tiles are complete */
#pragma unroll
        for (int e = 0; e < TILE; ++e)
            acc += As[ty][e] * Bs[e][tx];
        __syncthreads(); /* everyone is done reading before the next phase overwrites */
    }
    if (row < p.m && col < p.n)
        store_result(&item.C[row * p.ldc + col], acc, p.alpha, p.beta);
}

template <int TILE>
int launch_tiled(const tg_problem *p, void *stream)
{
    const dim3 block(TILE, TILE);
    const dim3 grid(ceil_div(p->n, TILE), ceil_div(p->m, TILE), (unsigned)p->batch);
    sgemm_tiled<TILE><<<grid, block, 0, (cudaStream_t)stream>>>(*p);
    return (int)cudaGetLastError();
}

const char *tiled_unsupported(const tg_problem *) { return nullptr; }

} // namespace

extern "C" const tg_rung tg_rung_tiled16 = {.name = "tiled16", .level = 1,
    .summary = "shared-memory tiles, 16x16 block, one output per thread, 2 barriers a phase",
    .block_rows = 16, .block_cols = 16, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_tiled<16>, .unsupported = tiled_unsupported};
extern "C" const tg_rung tg_rung_tiled32 = {.name = "tiled32", .level = 1,
    .summary = "shared-memory tiles, 32x32 block, one output per thread, 2 barriers a phase",
    .block_rows = 32, .block_cols = 32, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_tiled<32>, .unsupported = tiled_unsupported};
