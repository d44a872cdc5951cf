/*
 * Rung 3: warp tiling and a multi-stage cp.async pipeline.
 *   sgemm_warptile_128x128x16_w64x32_t8x8_s3 ("warptile128"), GROUP_M = 1
 * The same kernel with a block order that keeps tiles in L2:
 *   sgemm_warptile_128x128x16_w64x32_t8x8_s3_g8 ("warptile128_l2"), GROUP_M = 8
 *
 * What it adds over rung 2 (blocktile128):
 *   - warp tiling: each warp owns a 64x32 piece of the block tile and its 32 lanes an 8x8
 *     register tile inside it, so each LDS.128 of a fragment reads 128 consecutive bytes of As
 *     or 64 of Bs across the warp (no bank conflicts, the repeats broadcast) and a warp's
 *     threads share rows and columns instead of spanning the whole block tile;
 *   - asynchronous copies: global tiles go straight into shared memory by cp.async (LDGSTS),
 *     with no trip through registers, into STAGES = 3 rotating buffers, so the copies of phase
 *     t + 2 are in flight while phase t is computed.  One __syncthreads per phase instead of
 *     rung 2's two;
 *   - BK 16 instead of 8: half as many phases (barriers, waits) per FMA.
 *   block tile   BM x BN x BK = 128 x 128 x 16, 256 threads = 8 warps as 2 (m) x 4 (n)
 *   warp tile    64 x 32, lanes as 8 (m) x 4 (n)
 *   thread tile  8 x 8 as 2 x 2 pieces of 4 x 4: rows lane_m*4 + {0..3} and 32 + lane_m*4 +
 *                {0..3} of the warp tile, columns lane_n*4 + {0..3} and 16 + lane_n*4 + {0..3}.
 *                Per k step a thread does 2 + 2 LDS.128 and 64 FFMA; per phase 1024 FFMA
 *   stages       3 (template parameter): copies of phase t + STAGES - 1 overlap the math of t
 *   shared       STAGES x (As[BK][BM + padA] + Bs[BK][BN + padB]), dynamic: 48 KiB with no
 *                pad, 48.75 or 49.5 KiB with the pads below; the launcher raises the block's
 *                limit above the default 48 KiB.  Two blocks per SM on sm_80 and sm_90 (one on
 *                sm_75, whose limit is 64 KiB an SM)
 *   registers    __launch_bounds__(256, 2): at most 128 a thread, for 2 blocks an SM
 * What the _l2 variants add over warptile128 (template parameter GROUP_M, 1 for warptile128;
 * all else above is shared):
 *   - grouped block order: the blocks go on a 1-D grid (batch still in blockIdx.z) and block
 *     pid takes the tile grouped_tile<GROUP_M> (common.cuh) gives it, so that consecutive
 *     blocks sweep a group of GROUP_M = 8 tile rows column by column instead of one tile row
 *     end to end.  The blocks resident at once then cover 8 tile rows of A and about
 *     resident / 8 tile columns of B, which they share, so those tiles of A and B stay in L2
 *     between the blocks that read them instead of coming again from DRAM.  In row-major
 *     order the resident blocks (264 on an H100: 132 SMs x 2) span whole tile rows, so they
 *     read all of B for every resident / tiles_n rows of A: the same working set at
 *     n = 4096 (32 tile columns, 8 rows either way), but all of B for one row of A at
 *     n >= 32768.  The last group keeps the tiles_m % 8 rows left.  GROUP_M = 1 keeps rung
 *     4's 2-D grid and order exactly (same SASS).
 * How each operand layout is copied (op(A) and op(B) alike; "outer" is m for A, n for B):
 *   contiguous along outer, 16-byte vectors legal (pointer 16-byte aligned, leading dimension
 *     and batch stride multiples of 4): runs of 4 floats land as 4 consecutive floats of one
 *     shared row, so each is one 16-byte cp.async.cg; 2 a thread per operand per phase, a
 *     warp writes one 512-byte shared row.  A run that straddles the matrix edge copies only
 *     its floats inside (src-size 4 to 12 bytes) and zero-fills the rest: no byte outside the
 *     matrix is read.
 *   contiguous along outer, vectors not legal (misaligned pointer, odd leading dimension,
 *     general strides): 8 4-byte cp.async.ca a thread per operand per phase, consecutive lanes
 *     along outer: same shared layout, 4x the copy instructions, misaligned sectors.
 *   contiguous along k (op(A) with a_cs == 1, e.g. row-major A untransposed; op(B) with
 *     b_rs == 1): shared memory stores the tiles k-major, so the 4 floats of a global run
 *     belong to 4 different shared rows and cp.async cannot scatter them: 8 4-byte cp.async.ca
 *     a thread per operand per phase instead of 2, each with its own address and bounds test
 *     (sm_90 loop body: 1170 instructions for 1024 FFMA with both operands by vectors, 1187
 *     with one operand along k, up to 1228 with both by 4-byte copies).  A warp's copy reads
 *     4 rows x 8 consecutive k (4 whole 32-byte sectors) and writes 8 k rows x 4 columns of
 *     the shared tile, whose pitch of BM + 4 floats puts those 32 floats in 32 different
 *     banks.  A k-contiguous shared layout with 16-byte copies would trade this for fragment
 *     reads along k; not tried yet.
 * Edges: every copy carries its own bounds test and zero-fills outside the matrix (cp.async's
 * src-size 0), so partial tiles take the same path as interior ones.  C is stored by 16-byte
 * vectors where C's pointer and ldc allow and all 4 columns are inside, else element by
 * element; beta == 0 never reads C.  Offsets are 64-bit.
 * Below sm_80 async_copy.cuh turns the copies into synchronous loads and stores: correct, with
 * no overlap.
 * Constraints: none (any m, n, k, strides and alignment); GROUP_M > 1 only: a launch's
 *              ceil(m / 128) x ceil(n / 128) tiles (m sliced by the backend to at most 65535
 *              tile rows) must fit a 1-D grid, 2^31 - 1 blocks, which no realistic n exceeds.
 * Benchmark:   tilegemm bench --algo warptile128,warptile128_l2 4096x4096x4096 16384x16384x4096
 *              (both orders on the same data in one run; the wider shape is where the order
 *              should matter)
 * Measured:    warptile128_l2 45.5 TFLOP/s (0.84x cuBLAS) at 16384x16384x16384, 44.8 TFLOP/s (0.87x cuBLAS) at 8192x8192x8192, 38.6 TFLOP/s (0.87x cuBLAS) at 4097x4097x4097, 44.7 TFLOP/s (0.86x cuBLAS) at 4096x4096x4096; warptile64 41.0 TFLOP/s (0.76x cuBLAS) at 16384x16384x16384, 42.4 TFLOP/s (0.82x cuBLAS) at 8192x8192x8192, 38.0 TFLOP/s (0.85x cuBLAS) at 4097x4097x4097, 43.7 TFLOP/s (0.84x cuBLAS) at 4096x4096x4096 on NVIDIA H100 80GB HBM3, commit b39f18e (bench/results/nvidia-h100-80gb-hbm3-2026-11-23-candidates.json)
 */
#include <stdint.h>

#include "async_copy.cuh"
#include "common.cuh"
#include "tile_loader.cuh"

namespace {

/*
 * A_K_CONTIG: op(A) is contiguous along k (a_cs == 1), else along m (a_rs == 1, or general
 * strides).  B_N_CONTIG: op(B) contiguous along n (b_cs == 1), else along k.  A_VEC / B_VEC:
 * the operand is contiguous along m / n and may be copied by 16-byte vectors.
 */
template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GROUP_M, bool A_K_CONTIG,
          bool A_VEC, bool B_N_CONTIG, bool B_VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32,
                                  kMinBlocks<(BM / WM) * (BN / WN) * 32>)
    sgemm_warptile(const tg_problem p)
{
    constexpr int kTM = 8, kTN = 8;           /* thread tile, as 2 x 2 pieces of 4 x 4 */
    constexpr int kWarpsN = BN / WN, kWarpsM = BM / WM;
    constexpr int kThreads = 32 * kWarpsM * kWarpsN;
    constexpr int kLanesN = WN / kTN, kLanesM = WM / kTM;
    static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
    static_assert(WM % kTM == 0 && WN % kTN == 0 && kLanesM * kLanesN == 32,
                  "a warp's 32 lanes must tile the warp tile with 8 x 8 thread tiles");
    static_assert(kLanesM * 4 * 4 == 128,
                  "the lanes along m must read 128 consecutive bytes of As per piece, which "
                  "makes the A fragment loads conflict-free");
    static_assert(kThreads <= 1024, "at most 1024 threads a block");
    using LoadA = AsyncTileLoader<BM, BK, kThreads, A_K_CONTIG, A_VEC>;
    using LoadB = AsyncTileLoader<BN, BK, kThreads, !B_N_CONTIG, B_VEC>;

    extern __shared__ __align__(16) float smem[];
    /* This block's tile of C (the grouped order for GROUP_M > 1), its loaders, the prologue */
    WarpTiledBlock<BM, BN, BK, STAGES, GROUP_M, LoadA, LoadB, WM, WN, kWarpsN, kLanesN> block(
        smem, p, threadIdx.x);
    float *const As = block.As, *const Bs = block.Bs; /* [STAGES][BK][pitch] each */
    const int a_off = block.a_off, b_off = block.b_off;
    const int64_t i0 = block.i0, j0 = block.j0;

    float acc[kTM][kTN] = {};
    int read = 0; /* buffer of phase t; phase t + STAGES - 1 goes to the one before it */
    /* Iteration t computes phase t from buffer t % STAGES; k_left = k - t * BK. */
    for (int64_t k_left = p.k; k_left > 0; k_left -= BK) {
        /* Groups committed so far: phases 0 .. t + STAGES - 2.  Leaving the newest STAGES - 2
         * in flight means phase t's group has landed (this thread's copies)... */
        async_wait<STAGES - 2>();
        /* ...and after the barrier everyone's copies of phase t are visible, and everyone has
         * finished computing phase t - 1, whose buffer is the one refilled next. */
        __syncthreads();
        block.refill(read == 0 ? STAGES - 1 : read - 1, k_left, p);

        const float *const a = As + read * LoadA::kTileFloats + a_off;
        const float *const b = Bs + read * LoadB::kTileFloats + b_off;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk)
            ffma_step<WM / 2, WN / 2>(acc, a + kk * LoadA::kPitch, b + kk * LoadB::kPitch);
        read = read == STAGES - 1 ? 0 : read + 1;
    }
    async_wait<0>(); /* only empty groups can be left; drain them before the block exits */

    /* acc[i][j] is C(i0 + a_off + i / 4 * WM / 2 + i % 4, j0 + b_off + j / 4 * WN / 2 + j % 4) */
    store_thread_tile<kTM, kTN, WM / 2, WN / 2>(acc, p, i0 + a_off, j0 + b_off);
}

/* The launch of each layout's instantiation, for launch_for_copies (tile_loader.cuh).  For
 * GROUP_M > 1 one block per tile along x, the kernel finds its tile (grouped_tile). */
template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GROUP_M>
struct WarptileLaunch {
    template <bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
    static int run(const tg_problem *p, cudaStream_t stream)
    {
        constexpr int kThreads = kWarpTiledThreads<BM, BN, WM, WN>;
        return launch_tiled<sgemm_warptile<BM, BN, BK, WM, WN, STAGES, GROUP_M, A_K_CONTIG,
                                           A_VEC, B_N_CONTIG, B_VEC>,
                            BM, BN, STAGES, GROUP_M, kThreads,
                            AsyncTileLoader<BM, BK, kThreads, A_K_CONTIG, A_VEC>,
                            AsyncTileLoader<BN, BK, kThreads, !B_N_CONTIG, B_VEC>>(p, stream);
    }
};

/* Picks the instantiation for how op(A) and op(B) sit in memory and whether vectors are legal
 * (launch_for_copies). */
template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GROUP_M>
int launch_warptile(const tg_problem *p, void *stream)
{
    return launch_for_copies<WarptileLaunch<BM, BN, BK, WM, WN, STAGES, GROUP_M>>(
        p, (cudaStream_t)stream);
}

} // namespace

#if TG_IN_UNIT(warptile128)
extern "C" const tg_rung tg_rung_warptile128 = {.name = "warptile128", .level = 3,
    .summary = "128x128x16 block, 64x32 warp tiles, 8x8 per thread, 3-stage cp.async pipeline",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_warptile<128, 128, 16, 64, 32, 3, 1>,
    .unsupported = grouped_order_unsupported<128, 128, 1>};
#endif

#if TG_IN_UNIT(warptile128_l2)
extern "C" const tg_rung tg_rung_warptile128_l2 = {.name = "warptile128_l2", .level = 3,
    .summary = "warptile128 + grouped block order (8 tile rows, column by column): shared A/B "
               "tiles stay in L2",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_warptile<128, 128, 16, 64, 32, 3, 8>,
    .unsupported = grouped_order_unsupported<128, 128, 8>};
#endif

/* Variants of the same kernel for the tuned table (bench --tune picks per shape): a larger
 * block tile for large products, a smaller one that fills the SMs on thin ones. */
#if TG_IN_UNIT(warptile256x128_l2)
extern "C" const tg_rung tg_rung_warptile256x128_l2 = {.name = "warptile256x128_l2", .level = 3,
    .summary = "warptile128_l2 with a 256x128x16 block of 16 warps (512 threads): half the "
               "loads of B per FFMA",
    .block_rows = 256, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_warptile<256, 128, 16, 64, 32, 3, 8>,
    .unsupported = grouped_order_unsupported<256, 128, 8>};
#endif

#if TG_IN_UNIT(warptile64)
extern "C" const tg_rung tg_rung_warptile64 = {.name = "warptile64", .level = 3,
    .summary = "warptile128 with a 64x64x16 block of 2 warps: 4x the blocks, for thin and "
               "small products",
    .block_rows = 64, .block_cols = 64, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_warptile<64, 64, 16, 64, 32, 3, 1>,
    .unsupported = grouped_order_unsupported<64, 64, 1>};
#endif
