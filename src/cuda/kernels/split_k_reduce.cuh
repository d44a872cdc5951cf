/*
 * Split-K's last step (split_k.h): C = alpha * (sum of the partial products) + beta * C, the
 * partials m x n floats each, back to back in workspace; where the tail is folded
 * (tail.k > 0), each output also adds its tail's few terms from op(A) and op(B).
 *
 * The order of the sum is fixed, so a result is bit for bit the same on every run: lane y of
 * kReduceLanes sums the partials y, y + kReduceLanes, ... in order, starting from 0, then the
 * tail's terms y, y + kReduceLanes, ... (fmaf); the lanes' sums are added in lane order.  Two
 * kernels keep that order:
 *   reduce_split_k_lanes  a block of 32 outputs x kReduceLanes threads, a thread a lane: for
 *                         many partials over few outputs (hundreds of slices of a 32 x 32 C),
 *                         whose lanes then run in parallel;
 *   reduce_split_k_few    a thread an output, its lanes in registers, its loads issued a
 *                         round at a time: up to 8 partials, or any count over 64K outputs
 *                         or more.  The lanes form left 7 of a block's 8 rows of threads
 *                         idle at 2 slices, each thread one load in flight, and 32 outputs a
 *                         block (43068 blocks at 343 x 4018).  On an H200 (ncu) it took 47 us
 *                         for 2 slices of 343 x 4018 (the bytes take 6 at the copy rate), and
 *                         the tail of 4 its own launch of 27 more; this form 23.6 with the tail
 *                         folded (split_k.h).  4 slices of 239 x 998 with a folded tail of 6:
 *                         13.6 us, 8.1 in a form of this one with 5 blocks an SM.  Split calls
 *                         in all: 0.91 of their time (bench/results/split-k/reduce/).
 * launch_reduce_split_k picks the form; both give the same bits (tests/emulated).  On sm_90
 * it launches it dependently on the product (dependent_launch.cuh), which waits in
 * wait_for_prior_grids before reading a partial.
 */
#ifndef TG_KERNELS_SPLIT_K_REDUCE_CUH
#define TG_KERNELS_SPLIT_K_REDUCE_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "../../problem.h"
#include "common.cuh"
#include "dependent_launch.cuh"

namespace split_k_reduce {

constexpr int kReduceLanes = 8;

/* Element e's row and column in an item of n columns: by 32-bit division where the item's
 * elements allow, since the 64-bit one is a long routine and every lane of a folded tail needs
 * it (in each of 8 lanes it cost 19656 x 121 x 2465 in 3 slices 10% of its time, H200). */
__device__ __forceinline__ void element_place(int64_t e, int64_t n, int64_t per_item,
                                              int64_t *row, int64_t *col)
{
    if (per_item <= UINT32_MAX) {
        const uint32_t r = (uint32_t)e / (uint32_t)n;
        *row = r, *col = (uint32_t)e - r * (uint32_t)n;
    } else {
        *row = e / n, *col = e % n;
    }
}

/* As many blocks an SM as its threads allow (8 on sm_80 and sm_90, 2048 threads; fewer
 * elsewhere): its loads are what hides their latency, and at 40 registers (6 blocks) 777 x 777
 * x 12000 in 8 slices took 4% longer (H200).  The bound holds it to 32 without spills. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900)
constexpr int kBlocksPerSM = 8;
#else
constexpr int kBlocksPerSM = 1024 / (32 * kReduceLanes);
#endif

/* A block takes 32 consecutive outputs (threadIdx.x, so each partial is read in 128-byte
 * lines); its row of threads threadIdx.y is lane y; row 0 adds the lanes' sums. */
__global__ void __launch_bounds__(32 * kReduceLanes, kBlocksPerSM)
    reduce_split_k_lanes(const tg_problem p, const float *partials, int64_t count,
                         const tg_problem tail)
{
    __shared__ float lane_sums[kReduceLanes][32];
    wait_for_prior_grids();
    const int64_t per_item = p.m * p.n;
    for (int64_t base = blockIdx.x * (int64_t)32; base < per_item; base += gridDim.x * (int64_t)32) {
        const int64_t e = base + threadIdx.x;
        float sum = 0.0f;
        int64_t row = 0, col = 0;
        if (e < per_item) {
            for (int64_t s = threadIdx.y; s < count; s += kReduceLanes)
                sum += partials[s * per_item + e];
            if (tail.k > 0 || threadIdx.y == 0)
                element_place(e, p.n, per_item, &row, &col);
            const float *const a = tail.A + row * tail.a_rs;
            const float *const b = tail.B + col * tail.b_cs;
            for (int64_t q = threadIdx.y; q < tail.k; q += kReduceLanes)
                sum = fmaf(a[q * tail.a_cs], b[q * tail.b_rs], sum);
        }
        lane_sums[threadIdx.y][threadIdx.x] = sum;
        __syncthreads();
        if (threadIdx.y == 0 && e < per_item) {
            float total = lane_sums[0][threadIdx.x];
            for (int y = 1; y < kReduceLanes; ++y)
                total += lane_sums[y][threadIdx.x];
            store_result(p.C + row * p.ldc + col, total, p.alpha, p.beta);
        }
        __syncthreads();
    }
}

/* A thread an output, its lanes in registers: the first 8 partials read at once (lane y's
 * first), then the rest and a folded tail's terms 4 at a time (4 lanes' next ones), every load
 * of a round issued before its first add.  6 blocks an SM: 40 registers and no spills (at 32,
 * 8 blocks, ptxas spilled 56 bytes; reading the rest 8 at a time spilled at 40). */
constexpr int kFewThreads = 256;
__global__ void __launch_bounds__(kFewThreads, 6)
    reduce_split_k_few(const tg_problem p, const float *partials, int64_t count,
                       const tg_problem tail)
{
    wait_for_prior_grids();
    const int64_t per_item = p.m * p.n;
    for (int64_t e = blockIdx.x * (int64_t)kFewThreads + threadIdx.x; e < per_item;
         e += gridDim.x * (int64_t)kFewThreads) {
        float lane[kReduceLanes];
#pragma unroll
        for (int y = 0; y < kReduceLanes; ++y) /* the first 8 partials, all in flight */
            lane[y] = y < count ? partials[y * per_item + e] : 0.0f;
#pragma unroll
        for (int y = 0; y < kReduceLanes; ++y)
            lane[y] = 0.0f + lane[y];
        for (int64_t s0 = kReduceLanes; s0 < count; s0 += kReduceLanes) /* 4 lanes at a time */
#pragma unroll
            for (int half = 0; half < kReduceLanes; half += kReduceLanes / 2) {
                float part[kReduceLanes / 2];
#pragma unroll
                for (int y = 0; y < kReduceLanes / 2; ++y) {
                    const int64_t s = s0 + half + y;
                    part[y] = s < count ? partials[s * per_item + e] : 0.0f;
                }
#pragma unroll
                for (int y = 0; y < kReduceLanes / 2; ++y) /* + 0 past the count: never -0 */
                    lane[half + y] += part[y];
            }
        int64_t row, col;
        element_place(e, p.n, per_item, &row, &col);
        const float *const a = tail.A + row * tail.a_rs;
        const float *const b = tail.B + col * tail.b_cs;
        for (int64_t q0 = 0; q0 < tail.k; q0 += kReduceLanes) {
#pragma unroll
            for (int half = 0; half < kReduceLanes; half += kReduceLanes / 2) {
                float ta[kReduceLanes / 2], tb[kReduceLanes / 2];
#pragma unroll
                for (int y = 0; y < kReduceLanes / 2; ++y) {
                    const int64_t q = q0 + half + y < tail.k ? q0 + half + y : q0;
                    ta[y] = a[q * tail.a_cs], tb[y] = b[q * tail.b_rs];
                }
#pragma unroll
                for (int y = 0; y < kReduceLanes / 2; ++y)
                    if (q0 + half + y < tail.k) /* fmaf(0, 0, -0) would be +0 */
                        lane[half + y] = fmaf(ta[y], tb[y], lane[half + y]);
            }
        }
        float total = lane[0];
#pragma unroll
        for (int y = 1; y < kReduceLanes; ++y)
            total += lane[y];
        store_result(p.C + row * p.ldc + col, total, p.alpha, p.beta);
    }
}

/* Past 8 partials the lanes form runs its lanes in parallel, which a small C needs (hundreds of
 * slices of 32 x 32 outputs); from this many outputs a thread each fills the GPU. */
constexpr int64_t kFewLeastOutputs = 64 * 1024;

/* The reduction of p's `count` partials at `partials` (and its folded tail: tail.k 0 for
 * none), on `stream`; `dependent`: launched dependently on the kernel before it (sm_90). */
inline cudaError_t launch_reduce_split_k(const tg_problem &p, const float *partials,
                                         int64_t count, const tg_problem &tail, bool dependent,
                                         cudaStream_t stream)
{
    const int64_t per_item = p.m * p.n;
    const bool few = count <= kReduceLanes || per_item >= kFewLeastOutputs;
    const dim3 grid = few ? grid_stride_blocks(per_item, kFewThreads)
                          : grid_stride_blocks(per_item, 32);
    const dim3 block = few ? dim3(kFewThreads) : dim3(32, kReduceLanes);
    const auto kernel = few ? reduce_split_k_few : reduce_split_k_lanes;
    if (dependent)
        return launch_dependent(kernel, grid, block, 0, stream, p, partials, count, tail);
    kernel<<<grid, block, 0, stream>>>(p, partials, count, tail);
    return cudaGetLastError();
}

} // namespace split_k_reduce

#endif
