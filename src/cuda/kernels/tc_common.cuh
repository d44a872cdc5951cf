/*
 * Pieces the tensor-core rungs share (k08_mma_tf32.cu, k09_tma_wgmma.cu):
 *   - the staging tile: an operand's rows (m for op(A), n for op(B)) x 32 of k in shared
 *     memory, k-contiguous and swizzled (tile_offset), filled by cp.async whatever the
 *     operand's layout (KTileLoader, which transposes in the copy where the operand runs along
 *     its rows), so a kernel reads every layout the same way;
 *   - the 3xTF32 split of a value, and the FP32 FMA dot product that recomputes outputs whose
 *     tensor-core sum is not finite (Inf or NaN among their inputs);
 *   - the dispatch from an operand's strides and alignment to the copy it needs.
 */
#ifndef TG_KERNELS_TC_COMMON_CUH
#define TG_KERNELS_TC_COMMON_CUH

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "async_copy.cuh"
#include "common.cuh"
#include "mma_tf32.cuh"

namespace {

constexpr int kBK = 32; /* k per shared tile: one 128-byte row of floats per m or n */

/* Float offset of (row, k) in a [rows][32] tile: the 16-byte chunk k / 4 of a row moves to
 * chunk (k / 4) ^ swz(row).  swz takes 8 different values over any 8 aligned consecutive rows
 * (so 4-byte copies of 8 rows x 4 k hit 32 banks), and over 4 aligned rows it XORs with
 * 0, 2, 4, 6 (+1), keeping chunk pairs together (so the LDS.64 of 4 rows x 2 chunks of a
 * fragment read hit 32 banks); a row's 8 chunks stay a permutation of its 128 bytes (16-byte
 * copies of a row hit 32 banks). */
__host__ __device__ __forceinline__ int tile_offset(int row, int k)
{
    const int swz = ((row & 3) << 1) ^ ((row >> 2) & 1);
    return row * kBK + (((k >> 2) ^ swz) << 2) + (k & 3);
}

enum class Copy { kAlongKVec, kAlongK, kOuter };

/*
 * Copies one operand's ROWS x 32 tile (rows along m for op(A), n for op(B)) into a k-contiguous
 * shared tile, a stage per call.  os, ks: the operand's strides along its rows and along k.
 * Copy e of a thread sits row_step(e) rows and k_step(e) k after copy 0, so one global
 * pointer per operand and thread suffices.
 */
template <int ROWS, int THREADS, Copy COPY>
struct KTileLoader {
    static constexpr int kWarps = THREADS / 32;
    static constexpr int kRowBlocks = ROWS / 8; /* kOuter: blocks of 8 rows along the rows */
    static constexpr int kCopies = COPY == Copy::kAlongKVec ? ROWS * 8 / THREADS : ROWS / kWarps;
    static_assert(ROWS % 8 == 0 && THREADS % 32 == 0, "whole warps and groups of 8 rows");
    static_assert(COPY != Copy::kAlongKVec || (ROWS * 8) % THREADS == 0,
                  "the threads must split the tile's 16-byte chunks evenly");
    static_assert(COPY == Copy::kAlongKVec || ROWS % kWarps == 0,
                  "the warps must split the tile's rows (or its 8 x 4 blocks) evenly");
    static_assert(COPY != Copy::kOuter || kRowBlocks % kWarps == 0 || kWarps % kRowBlocks == 0,
                  "along the rows, the warps' 8 x 4 blocks must fall on whole columns of blocks");

    const float *src; /* copy 0's float at the stage's first k */
    int row, k;       /* copy 0's place in the tile */
    int rows_in;      /* rows of the matrix from copy 0's row on, capped at ROWS */

    __device__ __forceinline__ KTileLoader(const float *first, int64_t os, int64_t ks,
                                           int64_t rows_left, int tid)
    {
        const int warp = tid / 32, lane = tid % 32;
        if (COPY == Copy::kAlongKVec) { /* 8 threads a row, a 16-byte chunk each */
            row = tid / 8, k = tid % 8 * 4;
        } else if (COPY == Copy::kAlongK) { /* a warp a row, a float of k each */
            row = warp, k = lane;
        } else { /* a warp a block of 8 rows x 4 k; blocks go down the rows first */
            row = warp % kRowBlocks * 8 + lane % 8;
            k = warp / kRowBlocks * 4 + lane / 8;
        }
        rows_in = (int)(rows_left - row < ROWS ? rows_left - row : ROWS);
        src = first + row * os + k * ks;
    }

    static __device__ __forceinline__ int row_step(int e)
    {
        if (COPY == Copy::kAlongKVec)
            return e * (THREADS / 8);
        if (COPY == Copy::kAlongK)
            return e * kWarps;
        return (e * kWarps) % kRowBlocks * 8;
    }
    static __device__ __forceinline__ int k_step(int e)
    {
        return COPY == Copy::kOuter ? (e * kWarps) / kRowBlocks * 4 : 0;
    }

    /* Issues this stage's copies into S and moves on by 32 of k.  k_left (> 0): k left from
     * the stage's first k on. */
    __device__ __forceinline__ void load(float *S, int64_t os, int64_t ks, int64_t k_left)
    {
#pragma unroll
        for (int e = 0; e < kCopies; ++e) {
            const int r = row_step(e), dk = k_step(e);
            const float *g = src + r * os + dk * ks;
            const bool row_in = r < rows_in;
            const int64_t k_in = k_left - (k + dk);
            float *const s = S + tile_offset(row + r, k + dk);
            if (COPY == Copy::kAlongKVec)
                copy_async_16_zfill_partial(s, g, !row_in || k_in <= 0 ? 0
                                                  : k_in < 4      ? (int)k_in
                                                                  : 4);
            else
                copy_async_4_zfill(s, g, row_in && k_in > 0);
        }
        src += kBK * ks;
    }
};

/* x = big + small, each a TF32 value (big = tf32(x), small = tf32(x - big)). */
struct Split {
    float big, small;
};
/* The big part of x.  A value under 2^-100 in magnitude (subnormals included) is special, as
 * Inf and NaN are: the tensor core flushes subnormal operands, and such a value's small part
 * would be one.  It becomes NaN here, so every output it touches is recomputed by the FP32 FMA
 * path of the epilogue (fma_dot).  From 2^-100 up, a small part flushed to zero loses at most
 * 2^-126, under 2^-26 of the value. */
__device__ __forceinline__ float tf32_big(float x)
{
    return fabsf(x) < 0x1p-100f && x != 0.0f ? NAN : tf32_round(x);
}

__device__ __forceinline__ Split split_tf32(float x)
{
    const float big = tf32_big(x);
    return Split{big, tf32_round(x - big)};
}

/* split_tf32 of four values at once, for 16-byte shared-memory stores. */
struct Split4 {
    float4 big, small;
};
__device__ __forceinline__ Split4 split_tf32_4(float4 v)
{
    const Split x = split_tf32(v.x), y = split_tf32(v.y), z = split_tf32(v.z),
                w = split_tf32(v.w);
    return Split4{make_float4(x.big, y.big, z.big, w.big),
                  make_float4(x.small, y.small, z.small, w.small)};
}

/* Stores output (row, col) of the tensor-core sum r: guarded against the matrix's edges, and
 * recomputed as an FP32 FMA dot product of row `row` of op(A) and column `col` of op(B) when r is
 * not finite (special values in that row or column), so special values behave exactly as on
 * the FMA rungs.  beta == 0 never reads C. */
__device__ __noinline__ float fma_dot(const float *a, int64_t a_cs, const float *b, int64_t b_rs,
                                      int64_t k)
{
    float sum = 0.0f;
    for (int64_t p = 0; p < k; ++p)
        sum = fmaf(a[p * a_cs], b[p * b_rs], sum);
    return sum;
}

/* C(row, col) at C[row * c_rs + col * c_cs]: a turned problem (common.cuh) writes C transposed. */
__device__ __forceinline__ void store_tc_result(const tg_problem &p, const batch_item &item,
                                                int64_t row, int64_t col, float r, int64_t c_rs,
                                                int64_t c_cs)
{
    if (row >= p.m || col >= p.n)
        return;
    if (!(fabsf(r) <= FLT_MAX)) /* Inf or NaN: redo it the FMA rungs' way */
        r = fma_dot(item.A + row * p.a_rs, p.a_cs, item.B + col * p.b_cs, p.b_rs, p.k);
    store_result(item.C + row * c_rs + col * c_cs, r, p.alpha, p.beta);
}
/* The same result, for an epilogue that stages it before storing (rung 9): r, or its FMA
 * recompute where not finite and inside C. */
__device__ __forceinline__ float tc_result(const tg_problem &p, const batch_item &item,
                                          int64_t row, int64_t col, float r)
{
    if (!(fabsf(r) <= FLT_MAX) && row < p.m && col < p.n)
        r = fma_dot(item.A + row * p.a_rs, p.a_cs, item.B + col * p.b_cs, p.b_rs, p.k);
    return r;
}
__device__ __forceinline__ void store_tc_result(const tg_problem &p, const batch_item &item,
                                                int64_t row, int64_t col, float r)
{
    store_tc_result(p, item, row, col, r, p.ldc, 1);
}

/* How an operand is copied: along k by vectors where legal, along k by floats, else along its
 * rows (the transpose happens in the copy).  k_stride, row_stride: the operand's strides. */
inline Copy copy_for(const float *base, int64_t k_stride, int64_t row_stride,
                            int64_t batch_stride)
{
    if (k_stride != 1)
        return Copy::kOuter;
    return vectors_allowed(base, k_stride, row_stride, batch_stride) ? Copy::kAlongKVec
                                                                     : Copy::kAlongK;
}

/* Runs KERNEL::launch<CA, CB> for the copies op(A) and op(B) need. */
template <class KERNEL, Copy CA>
int launch_with_b(const tg_problem *p, cudaStream_t stream, Copy cb)
{
    switch (cb) {
    case Copy::kAlongKVec: return KERNEL::template launch<CA, Copy::kAlongKVec>(p, stream);
    case Copy::kAlongK: return KERNEL::template launch<CA, Copy::kAlongK>(p, stream);
    default: return KERNEL::template launch<CA, Copy::kOuter>(p, stream);
    }
}

template <class KERNEL>
int launch_by_copies(const tg_problem *p, cudaStream_t stream)
{
    const Copy cb = copy_for(p->B, p->b_rs, p->b_cs, p->stride_b);
    switch (copy_for(p->A, p->a_cs, p->a_rs, p->stride_a)) {
    case Copy::kAlongKVec: return launch_with_b<KERNEL, Copy::kAlongKVec>(p, stream, cb);
    case Copy::kAlongK: return launch_with_b<KERNEL, Copy::kAlongK>(p, stream, cb);
    default: return launch_with_b<KERNEL, Copy::kOuter>(p, stream, cb);
    }
}

} // namespace

#endif
