/*
 * Rung 7: short k (at most 256) and large outputs, where the cost is writing C, in FP32 FFMA.
 *
 * sgemm_shortk_128x128xBK_w64x32_t8x8 ("shortk128"): k <= 256.  A block loads a chunk of k
 * (BK deep: 32 for k <= 32, else 64; zero-filled past k) of op(A) and op(B) in one cp.async
 * group, waits once, runs the chunk's outer products, and so on to the end of k; then C goes
 * through shared memory as the whole tile, so that each warp writes whole rows: 16-byte
 * streaming stores (st.global.cs: C is written once, so it should not push A and B out of L2)
 * where C's pointer and ldc allow and beta == 0, else coalesced element stores; a tile wholly
 * inside C with beta == 0 by a loop with no test at each element.  No pipeline
 * inside a block: three blocks an SM overlap one another's loads, products and stores.
 * block tile   128 x 128, 256 threads = 8 warps as 2 (m) x 4 (n)
 * warp tile    64 x 32, lanes as 8 x 4, thread tile 8 x 8 as 2 x 2 runs of 4 (as rung 3)
 * shared       max(As[BK][128 + pad] + Bs[BK][128 + pad], C's 128 x 132 stage): 66 KiB at
 *              either depth; 3 blocks an SM (sm_90: 3 x 67 KiB of 228)
 * registers    __launch_bounds__(256, 3): 80 hold the 64 accumulators, so the products read
 *              no fragment ahead: op(A)'s 8 floats one at a time (8 LDS.32 + 2 LDS.128 a k
 *              step, the loop not unrolled), and the whole tile is staged at once so that no
 *              warp keeps its accumulators while others store.  ptxas (CUDA 13.0): no
 *              spill in the one-chunk forms; the chunked ones (k > 64), whose loaders live
 *              across the products, spill 56 to 68 bytes.
 * How each operand layout is copied: as rung 3, tile_loader.cuh.
 * Edges: every load carries its bounds test and zero-fills outside the matrix; C is stored by
 * 16-byte vectors where C's pointer and ldc allow and all 4 columns are inside, else element by
 * element; beta == 0 never reads C.  Offsets are 64-bit; batches on blockIdx.z (split-K runs
 * its k-slices as a batch).
 * Constraints: k <= 256.
 * Benchmark:   tilegemm bench --algo shortk128 27182x26882x25 16384x16384x16 4253x11166x11
 *              (scripts/device_shortk.sh: these and more, with C's write rate)
 * Measured:    H100 (bench/results/shortk/), k <= 64, the candidate that became this form
 *              (shortk128_o3) against the former one (64 deep always, 2 blocks an SM, 128
 *              registers) and cuBLAS: 27182x26882x25 1.50 ms (C at 1.95 TB/s, 1.47x cuBLAS;
 *              was 2.13 ms, 1.04x), 16384x16384x16 0.360 ms (2.99 TB/s, 1.32x; was 1.12x),
 *              4253x11166x11 1.12x (was 0.89x), 12007x9001x40 TN 1.08x (was 0.90x),
 *              2048x2048x32 1.03x (was 1.08x).  Persistent blocks (2 an SM, the next tile's
 *              copies in flight during the products and stores, C stored from registers
 *              where it allows vectors) lost to 3 blocks an SM: 1.15x to 1.18x at
 *              27182x26882x25.  As landed, in a later call on another H100: 1.71 ms (1.29x),
 *              0.375 ms (1.28x), 4253x11166x11 1.08x, cuBLAS's times unchanged: not yet
 *              explained.  Past k = 64: 4785x9530x78 TN 0.82x (ffma128x128, auto's rung there
 *              before, 0.60x), 6537x10399x69 NT col 0.82x (0.62x), 31687x15626x91 0.95x
 *              (0.86x), 1957x18192x142 TT col 0.80x (0.74x); 8192x8192 at k 128 and 256
 *              0.92x and 0.89x (ffma128x128 0.99x and 1.02x).
 *              Tiles inside C with beta == 0 stored by a loop with no test at each element
 *              (H200, bench/results/shortk/plain-row-stores/): 0.77x to 0.87x the time at
 *              k <= 40 where C's rows are off 16 bytes, 0.98x to 1.00x past k = 64;
 *              27182x26882x25 1.38 ms (1.39x cuBLAS), 16384x16384x16 1.25x, 4253x11166x11
 *              1.39x, past k = 64 0.84x to 0.91x.
 * Not kept:    C stored by the TMA engine (cp.async.bulk, a row of the stage a thread; the block
 *              leaves once its rows are read out of shared memory, before the writes land), so
 *              that one block's products would overlap another's stores: against this form in
 *              the same H100 call (bench/results/shortk/bulk-stores/) 0.98x at 27182x26882x25
 *              and 16384x16384x16, 0.90x to 1.07x elsewhere, geometric mean 1.00x.  At
 *              27182x26882x25 a tile is 1.75 us of FFMA on a whole SM and 3.0 us of C at its
 *              share of the copy rate; 340 tiles an SM of the two summed is 1.62 ms of the
 *              1.71 measured: the GPU's blocks load, multiply and store in step, and a store
 *              that does not wait has nothing to overlap while every block is storing.
 *              Blocks stepped by 120 columns so that each row of C leaves in whole 32-byte
 *              sectors (bench/results/shortk/sectors/): 1.02x the time at 27182x26882x25,
 *              1.26x at 27182x26884x25.  What rows off 16 bytes cost is instructions: ncu
 *              counts 36% more at 27182x26882x25 than at 26884 (bench/results/shortk/
 *              ncu-2026-11-28/), about 119 a row stored element by element against 39:
 *              the plain loop above cut them to about 16 and 6.
 */
#include <stdint.h>

#include "async_copy.cuh"
#include "common.cuh"
#include "tile_loader.cuh"

namespace {

constexpr int kShortMaxK = 256;
constexpr int kShortChunk = 64; /* the deepest tile: 66 KiB with C's stage, 3 blocks an SM */

/* Whether C's rows of one batch item may be stored by 16-byte vectors. */
__device__ __forceinline__ bool c_vectors(const float *C, int64_t ldc)
{
    return reinterpret_cast<uintptr_t>(C) % 16 == 0 && ldc % 4 == 0;
}

/* C leaves the block through shared memory, the whole tile at once, so that a warp writes whole
 * rows of C: one 16-byte streaming store a lane (st.global.cs: C is written once and should not
 * evict A and B from L2) where C's pointer and ldc allow and beta == 0, else 4 coalesced element
 * stores a lane.  Stored straight from the thread tile, an ldc that is not a multiple of 4 left
 * every lane writing 4 scattered floats: a third of the speed.  A stage of one warp row at a
 * time left the later parts' warps holding their accumulators while the earlier parts were
 * stored, which spilled at 80 registers.  stage holds BM x (BN + 4) floats; the first barrier
 * ends the products' reads of the operands that share it. */
template <int BM, int BN, int TM, int TN, int PIECE_M, int PIECE_N, int THREADS>
__device__ __forceinline__ void store_tile_by_rows(const float (&acc)[TM][TN], float *stage,
                                                   const tg_problem &p, int64_t i0, int64_t j0,
                                                   int a_off, int b_off)
{
    constexpr int kPitch = BN + 4, kWarps = THREADS / 32;
    static_assert(BN == 32 * 4, "a warp stores one row of the tile by 16-byte lanes");
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *const C = batch_item(p).C;
    const bool c_vec = c_vectors(C, p.ldc);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int h = 0; h < TN / 4; ++h)
            *reinterpret_cast<float4 *>(
                &stage[(a_off + i / 4 * PIECE_M + i % 4) * kPitch + b_off + h * PIECE_N]) =
                make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2],
                            acc[i][h * 4 + 3]);
    __syncthreads();
    if (p.beta == 0.0f && i0 + BM <= p.m && j0 + BN <= p.n) {
        /* C only written and the whole tile inside it (every tile but the last row and column
         * of tiles): each row's stores at fixed offsets, with no test at each element and the
         * row's address one add from the last (ncu: rows tested element by element made
         * shortk128 issue-bound, bench/results/shortk/ncu-2026-11-28/) */
        const int64_t step = kWarps * p.ldc;
        if (c_vec) {
            float *c = C + (i0 + warp) * p.ldc + j0 + lane * 4;
            const float *s = stage + warp * kPitch + lane * 4;
#pragma unroll 4
            for (int r = warp; r < BM; r += kWarps, c += step, s += kWarps * kPitch) {
                const float4 v = *reinterpret_cast<const float4 *>(s);
                __stcs(reinterpret_cast<float4 *>(c),
                       make_float4(p.alpha * v.x, p.alpha * v.y, p.alpha * v.z, p.alpha * v.w));
            }
        } else {
            float *c = C + (i0 + warp) * p.ldc + j0 + lane;
            const float *s = stage + warp * kPitch + lane;
#pragma unroll 4
            for (int r = warp; r < BM; r += kWarps, c += step, s += kWarps * kPitch)
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    __stcs(c + 32 * q, p.alpha * s[32 * q]);
        }
        return;
    }
    for (int r = warp; r < BM; r += kWarps) {
        const int64_t row = i0 + r;
        if (row >= p.m)
            break;
        float *const c_row = C + row * p.ldc + j0;
        const float *const s_row = stage + r * kPitch;
        if (p.beta == 0.0f && c_vec && j0 + BN <= p.n) {
            const float4 v = *reinterpret_cast<const float4 *>(s_row + lane * 4);
            __stcs(reinterpret_cast<float4 *>(c_row + lane * 4),
                   make_float4(p.alpha * v.x, p.alpha * v.y, p.alpha * v.z, p.alpha * v.w));
            continue;
        }
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int col = lane + 32 * q;
            if (j0 + col >= p.n)
                break;
            if (p.beta == 0.0f)
                __stcs(c_row + col, p.alpha * s_row[col]);
            else
                store_result(c_row + col, s_row[col], p.alpha, p.beta);
        }
    }
}

/* `steps` k steps of outer products from the shared tiles, with no fragment of a later step
 * read ahead (the loop is not unrolled), to stay within 80 registers: op(A)'s 8 floats are read
 * one at a time (volatile, so that the compiler neither merges them into vectors nor hoists
 * them), leaving 64 accumulators + 8 of op(B) + 1 of op(A) + the loop live.  a and b: this
 * thread's first fragment floats of the chunk's first step; PITCH_A, PITCH_B: the tiles'
 * pitches (floats a k step). */
template <int PITCH_A, int PITCH_B, int PIECE_M, int PIECE_N, int TM, int TN>
__device__ __forceinline__ void shortk_products(float (&acc)[TM][TN], const float *a,
                                                const float *b, int steps)
{
#pragma unroll 1
    for (; steps > 0; --steps, a += PITCH_A, b += PITCH_B) {
        float bf[TN];
        load_fragment<TN, PIECE_N>(bf, b);
        const volatile float *const av = a;
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const float x = av[i / 4 * PIECE_M + i % 4];
#pragma unroll
            for (int j = 0; j < TN; ++j)
                acc[i][j] += x * bf[j];
        }
    }
}

/* The shapes of a shortk block: its threads, warps and lanes, where a thread's fragments start,
 * the loaders of a BK-deep tile and the shared memory (operands or C's stage, the larger). */
template <int BM, int BN, int WM, int WN, int TM, int TN, int BK, bool A_K_CONTIG, bool A_VEC,
          bool B_N_CONTIG, bool B_VEC>
struct ShortkShape {
    static constexpr int kThreads = kWarpTiledThreads<BM, BN, WM, WN>;
    static constexpr int kWarpsN = BN / WN;
    static constexpr int kLanesM = WM / TM, kLanesN = WN / TN;
    static constexpr int kPieceM = kLanesM * 4, kPieceN = kLanesN * 4;
    using LoadA = AsyncTileLoader<BM, BK, kThreads, A_K_CONTIG, A_VEC>;
    using LoadB = AsyncTileLoader<BN, BK, kThreads, !B_N_CONTIG, B_VEC>;
    static constexpr int kOperandFloats = LoadA::kTileFloats + LoadB::kTileFloats;
    static constexpr int kStageFloats = BM * (BN + 4);
    static constexpr int kSharedFloats =
        kOperandFloats > kStageFloats ? kOperandFloats : kStageFloats;
    static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && kLanesM * kLanesN == 32,
                  "a warp's 32 lanes must tile the warp tile with runs of 4 floats");
    static_assert(BK <= kShortChunk && BK % 4 == 0, "a chunk of k fits one tile");

    static __device__ __forceinline__ int a_off(int tid)
    {
        return tid / 32 / kWarpsN * WM + tid % 32 / kLanesN * 4;
    }
    static __device__ __forceinline__ int b_off(int tid)
    {
        return tid / 32 % kWarpsN * WN + tid % 32 % kLanesN * 4;
    }
};

/* A block a tile: k in BK-deep chunks, each loaded whole in one cp.async group (zero-filled past
 * k), waited for, and multiplied; then C through shared memory by whole rows.  The stage reuses
 * the operands' space.  CHUNKED (k > 64): more than one chunk, so the loaders live across the
 * products; else one, with the loaders gone before them: at 80 registers, keeping them cost
 * 40 to 64 bytes of stack and 5% to 20% of the speed at k <= 64 (H100, 27182x26882x25 and
 * 16384x16384x16). */
template <int BM, int BN, int WM, int WN, int TM, int TN, int BK, bool CHUNKED, bool A_K_CONTIG,
          bool A_VEC, bool B_N_CONTIG, bool B_VEC>
__global__ void __launch_bounds__(kWarpTiledThreads<BM, BN, WM, WN>, 3)
    sgemm_shortk(const tg_problem p)
{
    using S = ShortkShape<BM, BN, WM, WN, TM, TN, BK, A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>;
    using LoadA = typename S::LoadA;
    using LoadB = typename S::LoadB;

    extern __shared__ __align__(16) float smem[];
    float *const As = smem, *const Bs = smem + LoadA::kTileFloats; /* [BK][pitch] each */
    const int tid = threadIdx.x;
    const int64_t i0 = blockIdx.y * (int64_t)BM, j0 = blockIdx.x * (int64_t)BN;
    float acc[TM][TN] = {};
    if constexpr (CHUNKED) {
        const batch_item item(p);
        LoadA load_a(item.A + i0 * p.a_rs, p.a_rs, p.a_cs, p.m - i0, tid);
        LoadB load_b(item.B + j0 * p.b_cs, p.b_cs, p.b_rs, p.n - j0, tid);
#pragma unroll 1
        for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
            if (k0 > 0)
                __syncthreads(); /* the previous chunk's products are done with the tiles */
            load_a.load(As, p.a_rs, p.a_cs, p.k - k0); /* the chunk, zeros past k */
            load_b.load(Bs, p.b_cs, p.b_rs, p.k - k0);
            async_commit();
            async_wait<0>();
            __syncthreads();
            shortk_products<LoadA::kPitch, LoadB::kPitch, S::kPieceM, S::kPieceN>(
                acc, As + S::a_off(tid), Bs + S::b_off(tid), (int)(p.k - k0 < BK ? p.k - k0 : BK));
        }
    } else {
        {
            const batch_item item(p);
            LoadA load_a(item.A + i0 * p.a_rs, p.a_rs, p.a_cs, p.m - i0, tid);
            LoadB load_b(item.B + j0 * p.b_cs, p.b_cs, p.b_rs, p.n - j0, tid);
            load_a.load(As, p.a_rs, p.a_cs, p.k); /* the whole k, zeros past it */
            load_b.load(Bs, p.b_cs, p.b_rs, p.k);
            async_commit();
        }
        async_wait<0>();
        __syncthreads();
        shortk_products<LoadA::kPitch, LoadB::kPitch, S::kPieceM, S::kPieceN>(
            acc, As + S::a_off(tid), Bs + S::b_off(tid), (int)p.k);
    }
    store_tile_by_rows<BM, BN, TM, TN, S::kPieceM, S::kPieceN, S::kThreads>(
        acc, smem, p, i0, j0, S::a_off(tid), S::b_off(tid));
}

/* The launch of each layout's instantiation, for launch_for_copies (tile_loader.cuh): a block
 * per tile of C and batch item on a 2-D grid. */
template <int BM, int BN, int WM, int WN, int TM, int TN, int BK, bool CHUNKED>
struct ShortkLaunch {
    template <bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
    static int run(const tg_problem *p, cudaStream_t stream)
    {
        using S = ShortkShape<BM, BN, WM, WN, TM, TN, BK, A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>;
        constexpr auto kernel = sgemm_shortk<BM, BN, WM, WN, TM, TN, BK, CHUNKED, A_K_CONTIG,
                                             A_VEC, B_N_CONTIG, B_VEC>;
        const size_t smem = S::kSharedFloats * sizeof(float);
        const cudaError_t e = opt_in_shared_memory<kernel>(smem);
        if (e != cudaSuccess)
            return (int)e;
        const dim3 grid(ceil_div(p->n, BN), ceil_div(p->m, BM), (unsigned)p->batch);
        kernel<<<grid, dim3(S::kThreads), smem, stream>>>(*p);
        return (int)cudaGetLastError();
    }
};

/* The tile's depth follows k: 32 for k <= 32 (half the copies, zero-fills included), else 64,
 * in chunks past 64. */
template <int BM, int BN, int WM, int WN, int TM, int TN>
int launch_shortk(const tg_problem *p, void *stream)
{
    if (p->k > kShortMaxK)
        return (int)cudaErrorInvalidValue; /* shortk_unsupported refuses these */
    if (p->k <= kShortChunk / 2)
        return launch_for_copies<ShortkLaunch<BM, BN, WM, WN, TM, TN, kShortChunk / 2, false>>(
            p, (cudaStream_t)stream);
    if (p->k <= kShortChunk)
        return launch_for_copies<ShortkLaunch<BM, BN, WM, WN, TM, TN, kShortChunk, false>>(
            p, (cudaStream_t)stream);
    return launch_for_copies<ShortkLaunch<BM, BN, WM, WN, TM, TN, kShortChunk, true>>(
        p, (cudaStream_t)stream);
}

const char *shortk_unsupported(const tg_problem *p)
{
    if (p->k > kShortMaxK)
        return "shortk128 is for short k, where writing C is the cost: k must be at most 256";
    return nullptr;
}

} // namespace

extern "C" const tg_rung tg_rung_shortk128 = {.name = "shortk128", .level = 7,
    .summary = "k <= 256: a 128x128 block loads k in chunks of 32 or 64, 8x8 a thread at 80 "
               "registers (3 blocks an SM), C through shared memory by whole rows",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_shortk<128, 128, 64, 32, 8, 8>, .unsupported = shortk_unsupported,
    .phases = TG_PHASES_STORES_AFTER};
