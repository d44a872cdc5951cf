/*
 * Pieces every rung shares.  Kernels see the normalized row-major problem of problem.h:
 * op(A)(i, p) = A[i * a_rs + p * a_cs], op(B)(p, j) = B[p * b_rs + j * b_cs],
 * C(i, j) = C[i * ldc + j], batch item blockIdx.z.
 */
#ifndef TG_KERNELS_COMMON_CUH
#define TG_KERNELS_COMMON_CUH

#include <stdint.h>

#include <atomic>

#include <cuda_runtime.h>

#include "../../problem.h"
#include "../registry.h"
#include "dependent_launch.cuh"

/* Why a rung of Hopper's own instructions (wgmma, TMA) cannot run in a build without them. */
#define TG_NO_SM90A_CODE "this build has no sm_90a code (configure with TG_CUDA_ARCH including 90a)"

/* A product turned so that its short side is n: where `turn`, C^T = op(B)^T op(A)^T, so op(A)
 * and op(B) swap places and transpose (their strides swap) and C is written transposed.
 * C(i, j) of the turned problem is C[i * c_rs + j * c_cs].  For the kernels that keep a whole
 * row of C in registers (gemv8, the stream rungs). */
struct TurnedProblem {
    tg_problem p;
    int64_t c_rs, c_cs;
};

static inline TurnedProblem turned(const tg_problem &p, bool turn)
{
    TurnedProblem g{p, p.ldc, 1};
    if (turn) {
        tg_problem &q = g.p;
        q.m = p.n, q.n = p.m;
        q.A = p.B, q.a_rs = p.b_cs, q.a_cs = p.b_rs, q.stride_a = p.stride_b;
        q.B = p.A, q.b_rs = p.a_cs, q.b_cs = p.a_rs, q.stride_b = p.stride_a;
        g.c_rs = 1, g.c_cs = p.ldc;
    }
    return g;
}

/* Offsets one batch item's pointers; blockIdx.z is the item. */
struct batch_item {
    const float *A;
    const float *B;
    float *C;
    __device__ explicit batch_item(const tg_problem &p)
        : A(p.A + blockIdx.z * p.stride_a), B(p.B + blockIdx.z * p.stride_b),
          C(p.C + blockIdx.z * p.stride_c)
    {
    }
};

/* The registry's plain launch of a rung with workspace (tg_rung.workspace_bytes), which the
 * backend never calls: it calls launch_with_workspace. */
static inline int launch_needs_workspace(const tg_problem *, void *)
{
    return (int)cudaErrorInvalidValue;
}

/* Batch item z of p as a problem of its own (batch 1), for launchers that run items one at a
 * time. */
static inline tg_problem batch_item_problem(const tg_problem &p, int64_t z)
{
    tg_problem item = p;
    item.A = p.A + z * p.stride_a;
    item.B = p.B + z * p.stride_b;
    item.C = p.C + z * p.stride_c;
    item.batch = 1;
    return item;
}

/* C = alpha * acc + beta * C, where beta == 0 must not read C (it may hold NaN). */
__device__ __forceinline__ void store_result(float *c, float acc, float alpha, float beta)
{
    *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

/* store_result for 4 consecutive outputs by one 16-byte access; c must be 16-byte aligned.
 * beta == 0 must not read C. */
__device__ __forceinline__ void store_result4(float *c, float4 acc, float alpha, float beta)
{
    float4 r;
    if (beta == 0.0f) {
        r = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    } else {
        const float4 old = *reinterpret_cast<const float4 *>(c);
        r = make_float4(alpha * acc.x + beta * old.x, alpha * acc.y + beta * old.y,
                        alpha * acc.z + beta * old.z, alpha * acc.w + beta * old.w);
    }
    *reinterpret_cast<float4 *>(c) = r;
}

/* Stores r[0..3], the outputs at columns col..col+3 of a row of C whose first element is c_row
 * and which has n columns: by one 16-byte access where vec (C's pointer and ldc allow it) and
 * all 4 are inside, else element by element, the ones at n or past it skipped.  beta == 0 must
 * not read C. */
__device__ __forceinline__ void store_result_run4(float *c_row, int64_t col, int64_t n,
                                                  const float *r, float alpha, float beta,
                                                  bool vec)
{
    if (vec && col + 4 <= n) {
        store_result4(c_row + col, make_float4(r[0], r[1], r[2], r[3]), alpha, beta);
    } else {
#pragma unroll
        for (int e = 0; e < 4; ++e)
            if (col + e < n)
                store_result(c_row + col + e, r[e], alpha, beta);
    }
}

/* Stores a thread's TM x TN outputs, read as runs of 4 along m and n: acc[i][j] is
 * C(row0 + i / 4 * PIECE_M + i % 4, col0 + j / 4 * PIECE_N + j % 4).  C's pointer is formed only
 * here, so that it holds no registers during a kernel's main loop.  LET_DEPENDENTS: first lets
 * split-K's reduction, launched dependently (split_k_reduce.cuh), be launched; rung 4 leaves it
 * out, since the hint moved ptxas's register allocation in its kernels (docs/design.md). */
template <int TM, int TN, int PIECE_M, int PIECE_N, bool LET_DEPENDENTS = true>
__device__ __forceinline__ void store_thread_tile(const float (&acc)[TM][TN], const tg_problem &p,
                                                  int64_t row0, int64_t col0)
{
    if (LET_DEPENDENTS)
        let_dependents_launch();
    float *const C = batch_item(p).C;
    const bool c_vec = reinterpret_cast<uintptr_t>(C) % 16 == 0 && p.ldc % 4 == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int64_t row = row0 + i / 4 * PIECE_M + i % 4;
        if (row >= p.m)
            continue;
        float *const c_row = C + row * p.ldc;
#pragma unroll
        for (int h = 0; h < TN / 4; ++h)
            store_result_run4(c_row, col0 + h * PIECE_N, p.n, &acc[i][h * 4], p.alpha, p.beta,
                              c_vec);
    }
}

/* Blocks per SM the register budget is sized for: at most 128 registers a thread, so two
 * 256-thread blocks (or four of 128) fit the SM's 64K registers. */
template <int THREADS>
constexpr int kMinBlocks = 65536 / (THREADS * 128);

static inline unsigned ceil_div(int64_t a, int64_t b) { return (unsigned)((a + b - 1) / b); }

/* The current GPU's SMs (1 where the runtime cannot say, its error cleared). */
static inline int current_sm_count()
{
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        sms <= 0) {
        (void)cudaGetLastError();
        sms = 1;
    }
    return sms;
}

/* Blocks for a grid-stride loop over `elements`, `per_block` a block a pass: at most 65535. */
static inline unsigned grid_stride_blocks(int64_t elements, int per_block)
{
    const int64_t blocks = (elements + per_block - 1) / per_block;
    return (unsigned)(blocks < 65535 ? blocks : 65535);
}

/* A block's tile of C: row m, column n of the grid of tiles. */
struct tile_index {
    unsigned m, n;
};

/* Grouped rasterization, the block order that keeps tiles in L2: maps the linear block index
 * pid (< tiles_m * tiles_n) to a tile so that consecutive indices sweep a group of GROUP_M tile
 * rows column by column (tile rows 0..GROUP_M-1 of column 0, then of column 1, ...; then the
 * next group).  Blocks that run together then share a few tile columns of B and GROUP_M tile
 * rows of A, instead of one row of A and every column of B.  The last group has the
 * tiles_m % GROUP_M rows left when GROUP_M does not divide tiles_m.  A bijection onto
 * [0, tiles_m) x [0, tiles_n); GROUP_M = 1 is row-major order (pid = m * tiles_n + n).  All
 * products stay below tiles_m * tiles_n, which the caller keeps within 32 bits (a 1-D grid's
 * limit is 2^31 - 1 anyway). */
template <int GROUP_M>
__host__ __device__ __forceinline__ tile_index grouped_tile(unsigned pid, unsigned tiles_m,
                                                            unsigned tiles_n)
{
    static_assert(GROUP_M >= 1, "a group holds at least one row of tiles");
    constexpr unsigned kGroup = GROUP_M;
    const unsigned group_tiles = (tiles_m < kGroup ? tiles_m : kGroup) * tiles_n; /* full group */
    const unsigned group = pid / group_tiles, in_group = pid % group_tiles;
    const unsigned first_m = group * kGroup;
    const unsigned rows = tiles_m - first_m < kGroup ? tiles_m - first_m : kGroup; /* this one */
    return tile_index{first_m + in_group % rows, in_group / rows};
}

/* The registry's `unsupported` check of a rung with the grouped order: every tiling constraint
 * of the FFMA rungs is compile-time and their 4-byte copies cover any shape, stride and
 * alignment, so the one limit is the grouped order's 1-D grid, one block per tile of a launch,
 * at most 2^31 - 1 (the backend launches at most 65535 tile rows at a time).  GROUP_M = 1 keeps
 * a 2-D grid and has no such limit. */
template <int BM, int BN, int GROUP_M>
const char *grouped_order_unsupported(const tg_problem *p)
{
    const int64_t tiles_m = (p->m + BM - 1) / BM < 65535 ? (p->m + BM - 1) / BM : 65535;
    if (GROUP_M > 1 && tiles_m * ((p->n + BN - 1) / BN) > INT32_MAX)
        return "the grouped block order puts a launch's tiles on a 1-D grid of at most 2^31 - 1 "
               "blocks: n is too large for that";
    return nullptr;
}

/* Lets KERNEL use more than the default 48 KiB of dynamic shared memory a block, as a kernel
 * must opt in to: once per device, remembered per kernel in a bit per device (beyond 64
 * devices, set on every launch). */
template <auto KERNEL>
cudaError_t opt_in_shared_memory(size_t bytes)
{
    if (bytes <= 48 * 1024)
        return cudaSuccess;
    static std::atomic<uint64_t> opted_in{0};
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    const uint64_t bit = device < 64 ? uint64_t(1) << device : 0;
    if (e == cudaSuccess && !(opted_in.load(std::memory_order_relaxed) & bit)) {
        e = cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
        if (e == cudaSuccess)
            opted_in.fetch_or(bit, std::memory_order_relaxed);
    }
    return e;
}

/* Whether an operand may be read by 16-byte vectors along its contiguous direction: unit
 * stride there, the pointer 16-byte aligned, the stride between the contiguous lines and the
 * batch stride multiples of 4 floats. */
static inline bool vectors_allowed(const float *base, int64_t unit_stride, int64_t pitch,
                                   int64_t batch_stride)
{
    return unit_stride == 1 && pitch % 4 == 0 && batch_stride % 4 == 0 &&
           reinterpret_cast<uintptr_t>(base) % 16 == 0;
}

#endif
