/*
 * Rung 7: k <= 64, where the cost is writing C, in FP32 FFMA.
 *
 * sgemm_shortk_128x128_w64x32_t8x8 ("shortk128"): k <= 64, where the cost is writing C.
 * The block loads its whole k (at most 64) of op(A) and op(B) in one cp.async group (k03's
 * loader with BK 64, zero-filled past k), waits once, runs k rounded up to 4 steps of 8x8
 * outer products, then passes C through shared memory, 64 rows at a time, so that each warp
 * writes whole rows: 16-byte streaming stores (st.global.cs: C is written once, so it should
 * not push A and B out of L2) where C's pointer and ldc allow and beta == 0, else coalesced
 * element stores; no pipeline.
 * block tile   128 x 128, 256 threads = 8 warps as 2 (m) x 4 (n)
 * warp tile    64 x 32, lanes as 8 x 4, thread tile 8 x 8 as 2 x 2 runs of 4 (as rung 3)
 * shared       As[64][128 + pad] + Bs[64][128 + pad]: 64 to 66 KiB; C's 64 x 132 stage
 *              reuses it
 * How each operand layout is copied: as rung 3, tile_loader.cuh.
 * Edges: every load carries its bounds test and zero-fills outside the matrix; C is stored by
 * 16-byte vectors where C's pointer and ldc allow and all 4 columns are inside, else element by
 * element; beta == 0 never reads C.  Offsets are 64-bit; batches on blockIdx.z (split-K runs
 * its k-slices as a batch).
 * Constraints: k <= 64.
 * Benchmark:   tilegemm bench --algo shortk128,warptile64 7573x2201x8 4253x11166x11
 * Measured:    (not yet measured on a GPU)
 */
#include <stdint.h>

#include "async_copy.cuh"
#include "common.cuh"
#include "tile_loader.cuh"

namespace {

constexpr int kShortMaxK = 64;

/* C leaves the block through shared memory, one warp row of the block tile (WM rows) at a time,
 * so that a warp writes whole rows of C: one 16-byte streaming store a lane (st.global.cs: C is
 * written once and should not evict A and B from L2) where C's pointer and ldc allow and
 * beta == 0, else 4 coalesced element stores a lane.  Stored straight from the thread tile, an
 * ldc that is not a multiple of 4 left every lane writing 4 scattered floats: a third of the
 * speed.  stage holds WM x (BN + 4) floats; the caller has finished with shared memory. */
template <int BM, int BN, int WM, int WN, int TM, int TN, int PIECE_M, int PIECE_N, int THREADS>
__device__ __forceinline__ void store_tile_by_rows(const float (&acc)[TM][TN], float *stage,
                                                   const tg_problem &p, int64_t i0, int64_t j0,
                                                   int a_off, int b_off)
{
    constexpr int kPitch = BN + 4, kWarps = THREADS / 32, kWarpsN = BN / WN;
    static_assert(BN == 32 * 4, "a warp stores one row of the tile by 16-byte lanes");
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *const C = batch_item(p).C;
    const bool c_vec = reinterpret_cast<uintptr_t>(C) % 16 == 0 && p.ldc % 4 == 0;
    for (int part = 0; part < BM / WM; ++part) {
        __syncthreads(); /* the tile's operands, or the previous part, are no longer read */
        if (warp / kWarpsN == part)
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int h = 0; h < TN / 4; ++h)
                    *reinterpret_cast<float4 *>(
                        &stage[(a_off - part * WM + i / 4 * PIECE_M + i % 4) * kPitch + b_off +
                               h * PIECE_N]) =
                        make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2],
                                    acc[i][h * 4 + 3]);
        __syncthreads();
        for (int r = warp; r < WM; r += kWarps) {
            const int64_t row = i0 + part * WM + r;
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
}

template <int BM, int BN, int WM, int WN, int TM, int TN, bool A_K_CONTIG, bool A_VEC,
          bool B_N_CONTIG, bool B_VEC>
__global__ void __launch_bounds__(kWarpTiledThreads<BM, BN, WM, WN>, 2)
    sgemm_shortk(const tg_problem p)
{
    constexpr int kThreads = kWarpTiledThreads<BM, BN, WM, WN>;
    constexpr int kWarpsN = BN / WN;
    constexpr int kLanesM = WM / TM, kLanesN = WN / TN;
    constexpr int kPieceM = kLanesM * 4, kPieceN = kLanesN * 4;
    static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && kLanesM * kLanesN == 32,
                  "a warp's 32 lanes must tile the warp tile with runs of 4 floats");
    static_assert(kShortMaxK % 4 == 0, "k steps run in groups of 4 (the tile is zero past k)");
    static_assert(WM * (BN + 4) <= 2 * kShortMaxK * BN, "C's staging fits the operands' space");
    using LoadA = AsyncTileLoader<BM, kShortMaxK, kThreads, A_K_CONTIG, A_VEC>;
    using LoadB = AsyncTileLoader<BN, kShortMaxK, kThreads, !B_N_CONTIG, B_VEC>;

    extern __shared__ __align__(16) float smem[];
    float *const As = smem, *const Bs = smem + LoadA::kTileFloats; /* [32][pitch] each */
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t i0 = blockIdx.y * (int64_t)BM, j0 = blockIdx.x * (int64_t)BN;
    {
        const batch_item item(p);
        LoadA load_a(item.A + i0 * p.a_rs, p.a_rs, p.a_cs, p.m - i0, tid);
        LoadB load_b(item.B + j0 * p.b_cs, p.b_cs, p.b_rs, p.n - j0, tid);
        load_a.load(As, p.a_rs, p.a_cs, p.k); /* the whole k, zeros past it */
        load_b.load(Bs, p.b_cs, p.b_rs, p.k);
        async_commit();
    }
    const int a_off = warp / kWarpsN * WM + lane / kLanesN * 4;
    const int b_off = warp % kWarpsN * WN + lane % kLanesN * 4;
    async_wait<0>();
    __syncthreads();

    float acc[TM][TN] = {};
    const int steps = (int)p.k; /* <= kShortMaxK: the launcher refuses more */
    for (int k0 = 0; k0 < steps; k0 += 4) {
#pragma unroll
        for (int kk = k0; kk < k0 + 4; ++kk)
            ffma_step<kPieceM, kPieceN>(acc, As + kk * LoadA::kPitch + a_off,
                                        Bs + kk * LoadB::kPitch + b_off);
    }
    store_tile_by_rows<BM, BN, WM, WN, TM, TN, kPieceM, kPieceN, kThreads>(acc, smem, p, i0, j0,
                                                                          a_off, b_off);
}

/* The launch of each layout's instantiation, for launch_for_copies (tile_loader.cuh): one stage
 * holding the whole of k. */
template <int BM, int BN, int WM, int WN, int TM, int TN>
struct ShortkLaunch {
    template <bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
    static int run(const tg_problem *p, cudaStream_t stream)
    {
        constexpr int kThreads = kWarpTiledThreads<BM, BN, WM, WN>;
        return launch_tiled<
            sgemm_shortk<BM, BN, WM, WN, TM, TN, A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>, BM, BN,
            1, 1, kThreads, AsyncTileLoader<BM, kShortMaxK, kThreads, A_K_CONTIG, A_VEC>,
            AsyncTileLoader<BN, kShortMaxK, kThreads, !B_N_CONTIG, B_VEC>>(p, stream);
    }
};

template <int BM, int BN, int WM, int WN, int TM, int TN>
int launch_shortk(const tg_problem *p, void *stream)
{
    if (p->k > kShortMaxK)
        return (int)cudaErrorInvalidValue; /* shortk_unsupported refuses these */
    return launch_for_copies<ShortkLaunch<BM, BN, WM, WN, TM, TN>>(p, (cudaStream_t)stream);
}

const char *shortk_unsupported(const tg_problem *p)
{
    if (p->k > kShortMaxK)
        return "shortk128 loads the whole of k into shared memory at once: k must be at most 64";
    return nullptr;
}

} // namespace

extern "C" const tg_rung tg_rung_shortk128 = {.name = "shortk128", .level = 7,
    .summary = "k <= 64: a 128x128 block loads all of k at once, 8x8 a thread, C through "
               "shared memory by whole rows",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_shortk<128, 128, 64, 32, 8, 8>, .unsupported = shortk_unsupported};
