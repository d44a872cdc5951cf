/*
 * Rung 5: the thin shapes the large tiles waste.  Small and skinny block tiles of the FP32 FFMA
 * warp-tiled pipeline, for products with an output side under 64 that a 128x128 or 256x128
 * block tile mostly pads (rungs 6 and 7 take 8 or fewer rows or columns, and k of 64 or less).
 *
 * sgemm_skinny: small and skinny block tiles, named by the tile
 *   sgemm_skinny_128x16x32_w32x16_t4x4_s3   ("skinny128x16")   n 9 .. 16
 *   sgemm_skinny_128x32x16_w32x32_t8x4_s4   ("skinny128x32")   n 17 .. 32
 *   sgemm_skinny_16x128x32_w16x32_t4x4_s3   ("skinny16x128")   m 9 .. 16
 *   sgemm_skinny_32x128x16_w32x32_t4x8_s4   ("skinny32x128")   m 17 .. 32
 *   sgemm_skinny_64x32x16_w32x16_t4x4_s4    ("skinny64x32")    mid sizes, n under 64
 *   sgemm_skinny_32x64x16_w16x32_t4x4_s4    ("skinny32x64")    mid sizes, m under 64
 *   sgemm_skinny_32x32x16_w32x16_t4x4_s4    ("skinny32x32")    small m x n, long k (split-K)
 * What it adds over rung 3 (warptile64): the same warp-tiled cp.async pipeline (k03's loader
 * and block set-up, tile_loader.cuh) with block tiles 16 to 128 wide, warp tiles of 16 to 32
 * and thread tiles of 4x4 to 8x4, so a product with 9 columns pads a 128x16 tile (7 of 16
 * columns) instead of a 128x256 one (247 of 256), and a small m x n still has blocks for
 * the SMs.  When one side is under 64 such a product is bound by reading the long operand
 * (A for a thin n, B for a thin m), which every tile column (row) reads once.
 * block tile   BM x BN x BK above; 128 threads (64 for 32x32), warps tile the block
 * warp tile    WM x WN, lanes as (WM / TM) x (WN / TN) = 32
 * thread tile  TM x TN as runs of 4 along m and n, (WM / TM) * 4 and (WN / TN) * 4 floats
 *              apart; per k step TM / 4 + TN / 4 LDS.128 and TM * TN FFMA
 * stages       3 (BK 32) or 4 (BK 16): the copies of phase t + STAGES - 1 overlap phase t
 * shared       STAGES x (As[BK][BM + pad] + Bs[BK][BN + pad]), k-major, as rung 3
 * How each operand layout is copied: as rung 3, tile_loader.cuh.
 * Edges: every load carries its bounds test and zero-fills outside the matrix; C is stored by
 * 16-byte vectors where C's pointer and ldc allow and all 4 columns are inside, else element by
 * element; beta == 0 never reads C.  Offsets are 64-bit; batches on blockIdx.z (split-K runs
 * its k-slices as a batch).
 * Constraints: none (any m, n, k, strides, transposes, alignment).
 * Benchmark:   tilegemm bench --algo skinny128x16,skinny128x32,warptile64 16970x9x10183
 *              100000x32x512
 * Measured:    skinny64x32 13.8 TFLOP/s (1.29x cuBLAS) at 200000x16x2048, 20.4 TFLOP/s (0.89x cuBLAS) at 23375x27x8584, 12.9 TFLOP/s (0.47x cuBLAS) at 27x23375x8584 in 8 slices, 26.3 TFLOP/s (0.61x cuBLAS) at 8192x64x8192 in 8 slices; skinny32x32 13.7 TFLOP/s (1.28x cuBLAS) at 200000x16x2048, 20.4 TFLOP/s (0.89x cuBLAS) at 23375x27x8584, 22.2 TFLOP/s (0.81x cuBLAS) at 27x23375x8584 in 8 slices, 25.8 TFLOP/s (0.60x cuBLAS) at 8192x64x8192 in 8 slices on NVIDIA H100 80GB HBM3, commit 75f21b2 (bench/results/nvidia-h100-80gb-hbm3-2026-11-25-thin-stream.json)
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
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, bool A_K_CONTIG,
          bool A_VEC, bool B_N_CONTIG, bool B_VEC>
__global__ void __launch_bounds__(kWarpTiledThreads<BM, BN, WM, WN>,
                                  kMinBlocks<kWarpTiledThreads<BM, BN, WM, WN>>)
    sgemm_skinny(const tg_problem p)
{
    constexpr int kThreads = kWarpTiledThreads<BM, BN, WM, WN>;
    constexpr int kWarpsN = BN / WN;
    constexpr int kLanesM = WM / TM, kLanesN = WN / TN;
    constexpr int kPieceM = kLanesM * 4, kPieceN = kLanesN * 4; /* between a thread's runs */
    static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0,
                  "the thread tile is read as runs of 4 floats (LDS.128) along m and n");
    static_assert(WM % TM == 0 && WN % TN == 0 && kLanesM * kLanesN == 32,
                  "a warp's 32 lanes must tile the warp tile with thread tiles");
    static_assert(kThreads <= 1024, "at most 1024 threads a block");
    using LoadA = AsyncTileLoader<BM, BK, kThreads, A_K_CONTIG, A_VEC>;
    using LoadB = AsyncTileLoader<BN, BK, kThreads, !B_N_CONTIG, B_VEC>;

    extern __shared__ __align__(16) float smem[];
    /* This block's tile of C (a 2-D grid), its loaders, the pipeline's prologue */
    WarpTiledBlock<BM, BN, BK, STAGES, 1, LoadA, LoadB, WM, WN, kWarpsN, kLanesN> block(
        smem, p, threadIdx.x);

    float acc[TM][TN] = {};
    int read = 0; /* buffer of phase t; phase t + STAGES - 1 goes to the one before it */
    /* Iteration t computes phase t from buffer t % STAGES; k_left = k - t * BK. */
    for (int64_t k_left = p.k; k_left > 0; k_left -= BK) {
        /* Phase t's group has landed (the newest STAGES - 2 may stay in flight); after the
         * barrier everyone's copies are visible and everyone is done with phase t - 1, whose
         * buffer is refilled next. */
        async_wait<STAGES - 2>();
        __syncthreads();
        block.refill(read == 0 ? STAGES - 1 : read - 1, k_left, p);

        const float *const a = block.As + read * LoadA::kTileFloats + block.a_off;
        const float *const b = block.Bs + read * LoadB::kTileFloats + block.b_off;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk)
            ffma_step<kPieceM, kPieceN>(acc, a + kk * LoadA::kPitch, b + kk * LoadB::kPitch);
        read = read == STAGES - 1 ? 0 : read + 1;
    }
    async_wait<0>(); /* only empty groups can be left; drain them before the block exits */

    store_thread_tile<TM, TN, kPieceM, kPieceN>(acc, p, block.i0 + block.a_off,
                                                block.j0 + block.b_off);
}

/* The launch of each layout's instantiation, for launch_for_copies (tile_loader.cuh). */
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
struct SkinnyLaunch {
    template <bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
    static int run(const tg_problem *p, cudaStream_t stream)
    {
        constexpr int kThreads = kWarpTiledThreads<BM, BN, WM, WN>;
        return launch_tiled<sgemm_skinny<BM, BN, BK, WM, WN, TM, TN, STAGES, A_K_CONTIG, A_VEC,
                                         B_N_CONTIG, B_VEC>,
                            BM, BN, STAGES, 1, kThreads,
                            AsyncTileLoader<BM, BK, kThreads, A_K_CONTIG, A_VEC>,
                            AsyncTileLoader<BN, BK, kThreads, !B_N_CONTIG, B_VEC>>(p, stream);
    }
};

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
int launch_skinny(const tg_problem *p, void *stream)
{
    return launch_for_copies<SkinnyLaunch<BM, BN, BK, WM, WN, TM, TN, STAGES>>(
        p, (cudaStream_t)stream);
}

/* Every tiling constraint is compile-time and the 4-byte copies cover any shape, stride and
 * alignment on a 2-D grid (the backend keeps grid.y in range), so nothing is refused. */
const char *skinny_unsupported(const tg_problem *) { return nullptr; }

} // namespace

/* Level 5: FFMA rungs for the thin shapes the large tiles waste (see the header). */
#define TG_SKINNY_RUNG(NAME, BM, BN, BK, WM, WN, TM, TN, STAGES, SUMMARY)                         \
    extern "C" const tg_rung tg_rung_##NAME = {.name = #NAME, .level = 5, .summary = SUMMARY,    \
        .block_rows = BM, .block_cols = BN, .in_auto = 1, .arith = TG_ARITH_FFMA,                \
        .launch = launch_skinny<BM, BN, BK, WM, WN, TM, TN, STAGES>,                             \
        .unsupported = skinny_unsupported};

#if TG_IN_UNIT(skinny128x16)
TG_SKINNY_RUNG(skinny128x16, 128, 16, 32, 32, 16, 4, 4, 3,
               "128x16x32 block of 4 warps (32x16, 4x4 a thread), 3-stage cp.async: n of 9 to 16")
#endif
#if TG_IN_UNIT(skinny128x32)
TG_SKINNY_RUNG(skinny128x32, 128, 32, 16, 32, 32, 8, 4, 4,
               "128x32x16 block of 4 warps (32x32, 8x4 a thread), 4-stage cp.async: n of 17 to "
               "32")
#endif
#if TG_IN_UNIT(skinny16x128)
TG_SKINNY_RUNG(skinny16x128, 16, 128, 32, 16, 32, 4, 4, 3,
               "16x128x32 block of 4 warps (16x32, 4x4 a thread), 3-stage cp.async: m of 9 to 16")
#endif
#if TG_IN_UNIT(skinny32x128)
TG_SKINNY_RUNG(skinny32x128, 32, 128, 16, 32, 32, 4, 8, 4,
               "32x128x16 block of 4 warps (32x32, 4x8 a thread), 4-stage cp.async: m of 17 to "
               "32")
#endif
#if TG_IN_UNIT(skinny64x32)
TG_SKINNY_RUNG(skinny64x32, 64, 32, 16, 32, 16, 4, 4, 4,
               "64x32x16 block of 4 warps (32x16, 4x4 a thread), 4-stage cp.async: n under 64")
#endif
#if TG_IN_UNIT(skinny32x64)
TG_SKINNY_RUNG(skinny32x64, 32, 64, 16, 16, 32, 4, 4, 4,
               "32x64x16 block of 4 warps (16x32, 4x4 a thread), 4-stage cp.async: m under 64")
#endif
#if TG_IN_UNIT(skinny32x32)
TG_SKINNY_RUNG(skinny32x32, 32, 32, 16, 32, 16, 4, 4, 4,
               "32x32x16 block of 2 warps (32x16, 4x4 a thread), 4-stage cp.async: small m x n")
#endif
#undef TG_SKINNY_RUNG
