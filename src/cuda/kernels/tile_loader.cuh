/*
 * The k-major cp.async tile loader of the warp-tiled FFMA rungs (k03_warptile.cu, k04_ffma.cu,
 * k05_skinny.cu, k07_shortk.cu), the dispatch that picks its instantiation from how op(A) and
 * op(B) sit in memory, the launch they share and their FFMA thread tile.
 *
 *   AsyncTileLoader<ROWS, BK, THREADS, K_CONTIG, VEC[, PAD]>
 *       copies one operand's ROWS x BK tile into shared memory stored k-major,
 *       S[BK][ROWS + kPad], a phase per load() call (see its comment for the three copy paths)
 *   ChainedTileLoader<ROWS, BK, THREADS, K_CONTIG, VEC>
 *       the same copies one at a time (copy(e, ...)), each operand's addresses chained in one
 *       pointer, for a loop that spreads them over a phase (rung 4's _spread entries)
 *   launch_for_copies<LAUNCH>(p, stream[, extra...])
 *       calls LAUNCH::run<A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>(p, stream[, extra...]) for the
 *       problem's layouts: op(A) along k when a_cs == 1, else along m (a_rs == 1, or general
 *       strides); op(B) along n when b_cs == 1, else along k (b_rs == 1, or general strides);
 *       16-byte copies only along m or n, the direction of the shared rows, and only where
 *       vectors_allowed (common.cuh) says so; extra (rung 4's stream-K workspace) is passed on
 *   launch_tiled<KERNEL, BM, BN, STAGES, GROUP_M, THREADS, LOAD_A, LOAD_B>(p, stream)
 *       one layout's instantiation on its grid of BM x BN tiles, with STAGES shared tiles of
 *       each operand
 *   load_fragment<N, STRIDE>(f, s)
 *       a thread's N floats of a k step from a shared tile, as runs of 4 by LDS.128
 *   ffma_outer_product(acc, af, bf), ffma_step<PIECE_M, PIECE_N>(acc, a, b)
 *       one k step of a thread's TM x TN tile: TM * TN FFMA on fragments already loaded, or
 *       load_fragment of both operands first
 *   ffma_outer_product_paired(acc, af, bf)
 *       the same FFMA in an order that lets the operand reuse caches feed them (rung 4)
 */
#ifndef TG_KERNELS_TILE_LOADER_CUH
#define TG_KERNELS_TILE_LOADER_CUH

#include <stdint.h>

#include "async_copy.cuh"
#include "common.cuh"

/*
 * Copies one operand's BK-deep tile into a k-major shared tile S[BK][ROWS + kPad] by cp.async,
 * a phase per call.  "Outer" is the operand's other index: m for op(A), n for op(B).  K_CONTIG:
 * the operand is contiguous along k (op(A) row-major, op(B) column-major); otherwise along outer
 * (or general strides on the scalar path).  VEC (only with !K_CONTIG): 16-byte copies are legal.
 * Copy e of a thread sits at (outer + e * kOuterStep, depth + e * kDepthStep) of the tile and
 * kWidth floats long along outer, so one global pointer per operand and thread suffices.
 */
template <int ROWS, int BK, int THREADS, bool K_CONTIG, bool VEC, int PAD = -1>
struct AsyncTileLoader {
    static_assert(!(K_CONTIG && VEC),
                  "16-byte copies need the operand contiguous along the shared rows (outer)");
    static constexpr int kWidth = VEC ? 4 : 1;
    /* PAD: the floats past ROWS in each shared row, where the reader needs a pitch of its own
     * (rung 7's TF32 fragments: 8); by default the FFMA rungs' 4 along k, else 0 */
    static constexpr int kPad = PAD >= 0 ? PAD : K_CONTIG ? 4 : 0;
    static constexpr int kPitch = ROWS + kPad;
    static constexpr int kTileFloats = BK * kPitch;
    static constexpr int kCopies = ROWS * BK / (THREADS * kWidth);
    /* Along outer by 4-byte copies, a shared row wider than a round of threads (256 rows, 128
     * threads: ffma256x64's op(A)) takes kSpan copies a thread side by side, THREADS floats
     * apart, then the next depth; otherwise kSpan is 1 and a round covers whole rows. */
    static constexpr int kSpan = !K_CONTIG && !VEC && ROWS > THREADS ? ROWS / THREADS : 1;
    static constexpr int kOuterStep = K_CONTIG ? THREADS / BK : 0;
    static constexpr int kDepthStep = K_CONTIG ? 0 : kSpan > 1 ? 1 : THREADS * kWidth / ROWS;
    static_assert(kPitch % 4 == 0, "shared rows must stay 16-byte aligned for LDS.128");
    static_assert(ROWS * BK % (THREADS * kWidth) == 0,
                  "the threads must split a tile evenly into copies");
    static_assert(K_CONTIG || kSpan > 1 ||
                      (ROWS % kWidth == 0 && THREADS % (ROWS / kWidth) == 0 &&
                       BK % kDepthStep == 0),
                  "along outer, a whole number of shared rows must be copied per round of "
                  "threads, and rounds must tile the depth");
    static_assert(kSpan == 1 || ROWS % THREADS == 0,
                  "a row wider than a round of threads must be a whole number of rounds");
    static_assert(!K_CONTIG || (BK % 8 == 0 && THREADS % (4 * BK) == 0 &&
                                (THREADS / 32) % (BK / 8) == 0 && ROWS % (THREADS / BK) == 0),
                  "along k, each warp copies 8 k x 4 rows: BK a multiple of 8, and the threads "
                  "must cover whole groups of 4 rows over the full depth");
    static_assert(!K_CONTIG || kPitch % 8 == 4 || PAD >= 0,
                  "along k, a shared pitch of an odd number of 16-byte chunks (4 mod 8 floats) "
                  "puts a warp's 8 k x 4 rows in 32 different banks");

    const float *src; /* copy 0's first float in the current phase */
    int outer_in;     /* how many of the tile's rows from copy 0's on lie inside the matrix,
                       * capped at ROWS (so it fits an int; <= 0 when none does) */
    int depth;        /* copy 0's depth in the tile */
    int tile_offset;  /* copy 0's float in the shared tile */

    /* first: the operand's element (outer0, 0); os, ks: its strides along outer and along k;
     * outer_left: how many rows of the matrix are left from outer0 on */
    __device__ __forceinline__ AsyncTileLoader(const float *first, int64_t os, int64_t ks,
                                               int64_t outer_left, int tid)
    {
        int outer;
        if (K_CONTIG) {
            /* lane bits 0-2 along k, 3-4 along outer; warps tile the rest */
            depth = tid % 8 + 8 * (tid / 32 % (BK / 8));
            outer = tid / 8 % 4 + 4 * (tid / (4 * BK));
        } else {
            /* consecutive threads take consecutive runs along outer */
            outer = tid % (ROWS / kWidth) * kWidth;
            depth = tid / (ROWS / kWidth);
        }
        outer_in = (int)(outer_left - outer < ROWS ? outer_left - outer : ROWS);
        src = first + outer * os + depth * ks;
        tile_offset = depth * kPitch + outer;
    }

    /* Issues this phase's copies into the shared tile S and steps to the next phase.  os, ks:
     * the strides again (re-read rather than kept in registers); k_left (> 0): how much of k
     * is left from the phase's first k on. */
    __device__ __forceinline__ void load(float *S, int64_t os, int64_t ks, int64_t k_left)
    {
        float *const dst = S + tile_offset;
        const int64_t step = K_CONTIG ? kOuterStep * os : kDepthStep * ks;
        if constexpr (kSpan > 1) { /* kSpan copies along a row, then the next depth */
#pragma unroll
            for (int e = 0; e < kCopies; ++e) {
                const int o = e % kSpan * THREADS, d = e / kSpan;
                copy_async_4_zfill(dst + d * kPitch + o, src + o * os + d * ks,
                                   depth + d < k_left && o < outer_in);
            }
            src += BK * ks;
            return;
        }
        const float *g = src;
#pragma unroll
        for (int e = 0; e < kCopies; ++e) {
            const int o = e * kOuterStep; /* relative to copy 0 */
            float *const s = dst + e * (kOuterStep + kDepthStep * kPitch);
            const bool k_in = depth + e * kDepthStep < k_left;
            if (VEC) { /* o is 0: the floats inside, 0 to 4 (a run may straddle the edge) */
                const int floats_in = outer_in < 4 ? outer_in : 4;
                copy_async_16_zfill_partial(s, g, k_in && floats_in > 0 ? floats_in : 0);
            } else {
                copy_async_4_zfill(s, g, k_in && o < outer_in);
            }
            g += step;
        }
        src += BK * ks;
    }
};

/*
 * AsyncTileLoader's copies one at a time, for a loop that spreads a phase's copies over its k steps
 * (rung 4's _spread entries): the same thread-to-copy map, shared tile and bounds tests, but src is
 * the address of the next copy to issue and moves on by one copy after each.  Why: issued as one
 * burst, each copy's address is computed into a scratch register pair that ptxas gives to a
 * fragment or the next address 3-40 instructions later, and with 4-byte copies along k (four
 * 128-byte lines each) the LSU, busy with the burst, is slow to read those operands, so the
 * overwrite waits (stall_long_scoreboard).  Spread, a few copies are in flight at a time and ptxas
 * leaves most address pairs unwritten for 40 instructions or more (k04_ffma.cu's header has the
 * figures), with no register kept per copy.  The pointer stays 64-bit (sm_90's global addressing is
 * a 64-bit register plus an immediate: no 32-bit offset from a uniform base), so any leading
 * dimension works.
 */
template <int ROWS, int BK, int THREADS, bool K_CONTIG, bool VEC>
struct ChainedTileLoader : AsyncTileLoader<ROWS, BK, THREADS, K_CONTIG, VEC> {
    using Base = AsyncTileLoader<ROWS, BK, THREADS, K_CONTIG, VEC>;
    using Base::kCopies;
    using Base::kDepthStep;
    using Base::kOuterStep;
    using Base::kPitch;
    static_assert(Base::kSpan == 1, "one copy a depth along outer: kSpan is not chained");

    __device__ __forceinline__ ChainedTileLoader(const float *first, int64_t os, int64_t ks,
                                                 int64_t outer_left, int tid)
        : Base(first, os, ks, outer_left, tid)
    {
    }

    /* Issues copy e of a phase into the shared tile S and moves src to copy e + 1, or after the
     * last copy to copy 0 of the next phase; e is a constant once the caller's loops unroll.
     * k_left: k left from the phase's first k on; <= 0 for a phase past the end, whose copies
     * then only zero-fill S (no global read), so that a loop can issue them unconditionally
     * instead of branching between its FFMA. */
    __device__ __forceinline__ void copy(int e, float *S, int64_t os, int64_t ks, int64_t k_left)
    {
        float *const s = S + this->tile_offset + e * (kOuterStep + kDepthStep * kPitch);
        const bool k_in = this->depth + e * kDepthStep < k_left;
        if (VEC) {
            const int floats_in = this->outer_in < 4 ? this->outer_in : 4;
            copy_async_16_zfill_partial(s, this->src, k_in && floats_in > 0 ? floats_in : 0);
        } else {
            copy_async_4_zfill(s, this->src, k_in && e * kOuterStep < this->outer_in);
        }
        const int64_t step = K_CONTIG ? kOuterStep * os : kDepthStep * ks;
        this->src += e < kCopies - 1 ? step : BK * ks - (kCopies - 1) * step;
    }

    /* A whole phase, back to back (the prologue's). */
    __device__ __forceinline__ void load(float *S, int64_t os, int64_t ks, int64_t k_left)
    {
#pragma unroll
        for (int e = 0; e < kCopies; ++e)
            copy(e, S, os, ks, k_left);
    }
};

/* The copy of each operand: along k (4-byte copies), along outer by vectors, or along outer
 * (or general strides) by 4-byte copies. */
enum class TileCopy { kAlongK, kOuterVec, kOuterScalar };

template <class LAUNCH, TileCopy CA, class... EXTRA>
int launch_for_copies_b(const tg_problem *p, cudaStream_t stream, TileCopy cb, EXTRA... extra)
{
    constexpr bool a_k = CA == TileCopy::kAlongK, a_vec = CA == TileCopy::kOuterVec;
    switch (cb) {
    case TileCopy::kAlongK:
        return LAUNCH::template run<a_k, a_vec, false, false>(p, stream, extra...);
    case TileCopy::kOuterVec:
        return LAUNCH::template run<a_k, a_vec, true, true>(p, stream, extra...);
    default:
        return LAUNCH::template run<a_k, a_vec, true, false>(p, stream, extra...);
    }
}

/* Picks the instantiation for how op(A) and op(B) sit in memory and whether vectors are legal:
 * LAUNCH::run<A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>(p, stream).  A_K_CONTIG: op(A) is
 * contiguous along k (a_cs == 1), else along m (a_rs == 1, or general strides).  B_N_CONTIG:
 * op(B) contiguous along n (b_cs == 1), else along k.  A_VEC / B_VEC: the operand is contiguous
 * along m / n and may be copied by 16-byte vectors. */
template <class LAUNCH, class... EXTRA>
int launch_for_copies(const tg_problem *p, cudaStream_t stream, EXTRA... extra)
{
    const TileCopy ca = p->a_cs == 1 ? TileCopy::kAlongK
                        : vectors_allowed(p->A, p->a_rs, p->a_cs, p->stride_a)
                            ? TileCopy::kOuterVec
                            : TileCopy::kOuterScalar;
    const TileCopy cb = p->b_cs != 1 ? TileCopy::kAlongK
                        : vectors_allowed(p->B, p->b_cs, p->b_rs, p->stride_b)
                            ? TileCopy::kOuterVec
                            : TileCopy::kOuterScalar;
    switch (ca) {
    case TileCopy::kAlongK:
        return launch_for_copies_b<LAUNCH, TileCopy::kAlongK>(p, stream, cb, extra...);
    case TileCopy::kOuterVec:
        return launch_for_copies_b<LAUNCH, TileCopy::kOuterVec>(p, stream, cb, extra...);
    default:
        return launch_for_copies_b<LAUNCH, TileCopy::kOuterScalar>(p, stream, cb, extra...);
    }
}

/* Reads a fragment of N floats, N / 4 runs of 4 consecutive floats STRIDE floats apart, by
 * N / 4 16-byte shared loads; s is 16-byte aligned. */
template <int N, int STRIDE>
__device__ __forceinline__ void load_fragment(float (&f)[N], const float *s)
{
#pragma unroll
    for (int g = 0; g < N / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4 *>(s + g * STRIDE);
        f[g * 4 + 0] = v.x, f[g * 4 + 1] = v.y, f[g * 4 + 2] = v.z, f[g * 4 + 3] = v.w;
    }
}

/* Threads of a block of (BM / WM) x (BN / WN) warps. */
template <int BM, int BN, int WM, int WN>
constexpr int kWarpTiledThreads = (BM / WM) * (BN / WN) * 32;

/* One k step of a thread's TM x TN tile: acc[i][j] += af[i] * bf[j], TM * TN FFMA. */
template <int TM, int TN>
__device__ __forceinline__ void ffma_outer_product(float (&acc)[TM][TN], const float (&af)[TM],
                                                   const float (&bf)[TN])
{
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] += af[i] * bf[j];
}

/* The same products in pairs of columns: for columns 2c and 2c + 1, the rows in turn (down for
 * even c, up for odd), each row's two products back to back.  Consecutive FFMA then share af[i]
 * in one operand slot and alternate between bf[2c] and bf[2c + 1], which sit in different
 * register banks (consecutive registers of one LDS.128), in the other, so the operand reuse
 * caches can feed both and fewer FFMA read two or three registers from the file.  Each
 * accumulator still sums its products in k order: the results are bit for bit those of
 * ffma_outer_product.  Why (rung 4, H100, Nsight Compute at 8192^3): with the row-by-row order,
 * warps waiting on register reads at dispatch (stall_dispatch) took 10.0% of the samples, 4.6%
 * in cuBLAS's kernel of the same tiling, whose FFMA mostly read the accumulator alone.  ptxas
 * keeps part of this order: 92 of the loop's 1024 FFMA read three registers, against 176. */
template <int TM, int TN>
__device__ __forceinline__ void ffma_outer_product_paired(float (&acc)[TM][TN],
                                                          const float (&af)[TM],
                                                          const float (&bf)[TN])
{
    static_assert(TN % 2 == 0, "columns are taken in pairs");
#pragma unroll
    for (int c = 0; c < TN / 2; ++c)
#pragma unroll
        for (int r = 0; r < TM; ++r) {
            const int i = c % 2 ? TM - 1 - r : r;
            acc[i][2 * c] += af[i] * bf[2 * c];
            acc[i][2 * c + 1] += af[i] * bf[2 * c + 1];
        }
}

/* The same, with the fragments read first: TM floats of op(A) at a (runs of 4, PIECE_M apart)
 * and TN of op(B) at b (PIECE_N apart), of one k step of the shared tiles. */
template <int PIECE_M, int PIECE_N, int TM, int TN>
__device__ __forceinline__ void ffma_step(float (&acc)[TM][TN], const float *a, const float *b)
{
    float af[TM], bf[TN];
    load_fragment<TM, PIECE_M>(af, a);
    load_fragment<TN, PIECE_N>(bf, b);
    ffma_outer_product(acc, af, bf);
}

/* The launch the warp-tiled FFMA families share, for one layout's instantiation KERNEL: STAGES
 * tiles of LOAD_A and of LOAD_B in dynamic shared memory, a block of THREADS per BM x BN tile
 * of C and batch item, on a 2-D grid, or for GROUP_M > 1 a 1-D grid that the kernel maps to the
 * grouped order (block_tile). */
template <auto KERNEL, int BM, int BN, int STAGES, int GROUP_M, int THREADS, class LOAD_A,
          class LOAD_B>
int launch_tiled(const tg_problem *p, cudaStream_t stream)
{
    const size_t smem = STAGES * (LOAD_A::kTileFloats + LOAD_B::kTileFloats) * sizeof(float);
    const cudaError_t e = opt_in_shared_memory<KERNEL>(smem);
    if (e != cudaSuccess)
        return (int)e;
    if (GROUP_M > 1 && (p->m + BM - 1) / BM * ((p->n + BN - 1) / BN) > INT32_MAX)
        return (int)cudaErrorInvalidConfiguration; /* grouped_order_unsupported refuses these */
    const unsigned tiles_m = ceil_div(p->m, BM), tiles_n = ceil_div(p->n, BN);
    const dim3 grid = GROUP_M > 1 ? dim3(tiles_m * tiles_n, 1, (unsigned)p->batch)
                                  : dim3(tiles_n, tiles_m, (unsigned)p->batch);
    KERNEL<<<grid, dim3(THREADS), smem, stream>>>(*p);
    return (int)cudaGetLastError();
}

/* The block's tile of C: (blockIdx.y, blockIdx.x) of a 2-D grid for GROUP_M == 1, else the tile
 * grouped_tile gives block blockIdx.x of a 1-D grid (consecutive blocks sweep GROUP_M tile rows
 * column by column, so the tiles of A and B they share stay in L2). */
template <int BM, int BN, int GROUP_M>
__device__ __forceinline__ tile_index block_tile(const tg_problem &p)
{
    if (GROUP_M == 1)
        return tile_index{blockIdx.y, blockIdx.x};
    return grouped_tile<GROUP_M>(blockIdx.x, (unsigned)((p.m + BM - 1) / BM),
                                 (unsigned)((p.n + BN - 1) / BN));
}

/* The pipeline's prologue: phases 0 .. STAGES-2 into buffers 0 .. STAGES-2 of As and Bs, one
 * commit group each (empty groups where k has fewer phases, so that group g is always phase g). */
template <int STAGES, int BK, class LOAD_A, class LOAD_B>
__device__ __forceinline__ void pipeline_prologue(LOAD_A &load_a, LOAD_B &load_b, float *As,
                                                  float *Bs, const tg_problem &p)
{
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s * BK < p.k) {
            load_a.load(As + s * LOAD_A::kTileFloats, p.a_rs, p.a_cs, p.k - s * BK);
            load_b.load(Bs + s * LOAD_B::kTileFloats, p.b_cs, p.b_rs, p.k - s * BK);
        }
        async_commit();
    }
}

/* What a warp-tiled FFMA block (rungs 3, 4 and 5) sets up before its main loop: its tile of C
 * (block_tile), the shared tiles (STAGES of op(A), then STAGES of op(B), k-major), where this
 * thread reads its fragments (a_off, b_off: warps WARPS_N to a row, lanes LANES_N to a row of
 * the warp tile, 4 floats apart), the two loaders, and the pipeline's prologue. */
template <int BM, int BN, int BK, int STAGES, int GROUP_M, class LOAD_A, class LOAD_B, int WM,
          int WN, int WARPS_N, int LANES_N>
struct WarpTiledBlock {
    static_assert(STAGES >= 2, "a pipeline needs at least two shared buffers");
    static_assert(GROUP_M >= 1, "a group of the block order holds at least one row of tiles");
    float *As, *Bs;
    int a_off, b_off;
    int64_t i0, j0; /* the tile's first row and column of C */
    LOAD_A load_a;  /* from op(A)(i0, 0) on */
    LOAD_B load_b;  /* from op(B)(0, j0) on */

    __device__ __forceinline__ WarpTiledBlock(float *smem, const tg_problem &p, int tid)
        : As(smem), Bs(smem + STAGES * LOAD_A::kTileFloats),
          a_off(tid / 32 / WARPS_N * WM + tid % 32 / LANES_N * 4),
          b_off(tid / 32 % WARPS_N * WN + tid % 32 % LANES_N * 4),
          i0(block_tile<BM, BN, GROUP_M>(p).m * (int64_t)BM),
          j0(block_tile<BM, BN, GROUP_M>(p).n * (int64_t)BN),
          load_a(batch_item(p).A + i0 * p.a_rs, p.a_rs, p.a_cs, p.m - i0, tid),
          load_b(batch_item(p).B + j0 * p.b_cs, p.b_cs, p.b_rs, p.n - j0, tid)
    {
        pipeline_prologue<STAGES, BK>(load_a, load_b, As, Bs, p);
    }

    /* The same for a given tile (rung 4's stream-K blocks run several).  The constructor above
     * keeps initializers of its own: delegating to this one moved the tile's arithmetic ahead
     * of the kernel's parameter loads in the PTX of every warp-tiled rung (rungs 3 to 5). */
    __device__ __forceinline__ WarpTiledBlock(float *smem, const tg_problem &p, int tid,
                                              tile_index tile)
        : As(smem), Bs(smem + STAGES * LOAD_A::kTileFloats),
          a_off(tid / 32 / WARPS_N * WM + tid % 32 / LANES_N * 4),
          b_off(tid / 32 % WARPS_N * WN + tid % 32 % LANES_N * 4), i0(tile.m * (int64_t)BM),
          j0(tile.n * (int64_t)BN),
          load_a(batch_item(p).A + i0 * p.a_rs, p.a_rs, p.a_cs, p.m - i0, tid),
          load_b(batch_item(p).B + j0 * p.b_cs, p.b_cs, p.b_rs, p.n - j0, tid)
    {
        pipeline_prologue<STAGES, BK>(load_a, load_b, As, Bs, p);
    }

    /* Issues the copies of phase t + STAGES - 1 into buffer `write` (none past the end of k)
     * and commits them as one group, possibly empty, so that group g is always phase g.
     * k_left: k left from phase t's first k on. */
    __device__ __forceinline__ void refill(int write, int64_t k_left, const tg_problem &p)
    {
        const int64_t next_left = k_left - (STAGES - 1) * BK;
        if (next_left > 0) {
            load_a.load(As + write * LOAD_A::kTileFloats, p.a_rs, p.a_cs, next_left);
            load_b.load(Bs + write * LOAD_B::kTileFloats, p.b_cs, p.b_rs, next_left);
        }
        async_commit();
    }
};

#endif
