/*
 * Rung 8: tensor cores at FP32 accuracy, each input split into two TF32 parts (3xTF32).
 *   sgemm_mma3xtf32_128x128x32_w32x64_s4_p32 ("mma3xtf32")  the default math mode's rung
 *   sgemm_mmatf32_128x128x32_w32x64_s4_p32   ("mmatf32")    the same kernel, big parts only:
 *                                                            the opt-in TF32 mode
 *
 * What it adds over the FFMA rungs: the multiply-adds run on the tensor cores
 * (mma.sync.m16n8k8 TF32, mma_tf32.cuh), which do TF32 products several times faster than the
 * FMA units do FP32 ones.  TF32 keeps 10 mantissa bits, so alone it breaks FP32's error bound;
 * with x = big + small, big = tf32(x), small = tf32(x - big), the product
 *     a * b  ~  a_small * b_big + a_big * b_small + a_big * b_big
 * drops only a_small * b_small (|.| <= 2^-22 |a b|) and the rounding of the smalls
 * (<= 2^-23 |x|), FP32-class errors, for three tensor-core products.  The split is done in
 * registers on each fragment as it is read from shared memory (5 integer and FP32
 * instructions a value, tf32_round, and 3 more for the special-value test): no extra pass over
 * memory.
 *   promotion    the tensor core's own accumulation does not round to nearest, and its error
 *                grows with k.  So it accumulates only PROMOTE = 32 values of k (a tile) from
 *                zero; then that partial sum is added into FP32 registers with an ordinary
 *                round-to-nearest FADD.  Small products go first at every k step, so they are
 *                not lost against the big ones.  Measured on the H100 (bench/accuracy), every
 *                32 makes the RMS error smaller than the FFMA rungs' from k = 256 on; every
 *                256, or never, leaves it larger.
 *   block tile   BM x BN x BK = 128 x 128 x 32, 256 threads = 8 warps as 4 (m) x 2 (n)
 *   warp tile    32 x 64 = 2 x 8 mma tiles of 16 x 8; per k step of 8 a warp reads 4 + 8
 *                LDS.64, splits 8 + 16 values and issues 48 mma (16 with one term in TF32
 *                mode).  32 x 64 rather than 64 x 32 halves the splits per mma: a value of A
 *                serves 8 mma tiles, one of B 2.
 *   registers    64 tensor-core accumulators + 64 promoted sums a thread:
 *                __launch_bounds__(256, 1), one block an SM
 *   shared       both operands stored k-contiguous, [rows][32] floats per stage, the 16-byte
 *                chunks of a row permuted by the row (swizzle below) so that fragment reads,
 *                16-byte copies along k and 4-byte copies along m or n all hit 32 different
 *                banks; STAGES = 4 rotating buffers of 32 KiB (128 KiB), dynamic
 *   k order      inside each 8 of k, a thread's two values k = t and t + 4 of the fragment are
 *                stored side by side, so one LDS.64 reads both (A and B use the same order,
 *                and the order of k does not change the product)
 * How each operand is copied into its k-contiguous tile:
 *   along k, 16-byte vectors legal: 16-byte cp.async.cg (4 a thread per operand per stage)
 *   along k, vectors not legal: 4-byte cp.async, a warp per row of 32 k (16 a thread)
 *   along m or n, or general strides: 4-byte cp.async, a warp per 8 rows x 4 k (16 a thread):
 *     the transpose happens in the copy
 * Special values: Inf and NaN break the split (Inf - Inf is NaN), and so does a value near
 *   FLT_MAX whose big part rounds to Inf; the tensor core flushes subnormal operands, so values
 *   under 2^-100 in magnitude are made NaN by the split (tf32_big, tc_common.cuh).  All of
 *   these make the tensor-core sum of every output they touch Inf or NaN, and finite inputs
 *   never do unless the true result overflows.  So the epilogue recomputes each output whose
 *   sum is not finite as an FP32 FMA dot product from global memory, and special values then
 *   behave exactly as on the FMA rungs; finite data pays one comparison per output.
 * Edges: every copy carries its bounds test and zero-fills outside the matrix; stores are
 *   guarded; beta == 0 never reads C.  Offsets are 64-bit.  Any m, n, k, strides, alignment.
 * Constraints: compute capability 8.0 or higher (registry min_cc).
 * Benchmark:   tilegemm bench --algo mma3xtf32,mmatf32,warptile128 4096x4096x4096
 * Measured:    mma3xtf32 53.6 TFLOP/s (0.99x cuBLAS) at 16384x16384x16384, 53.2 TFLOP/s (1.03x cuBLAS) at 8192x8192x8192, 44.7 TFLOP/s (1.00x cuBLAS) at 4097x4097x4097, 52.2 TFLOP/s (1.00x cuBLAS) at 4096x4096x4096 on NVIDIA H100 80GB HBM3, commit b39f18e (bench/results/nvidia-h100-80gb-hbm3-2026-11-23-candidates.json)
 * Not kept:    smaller blocks for medium products: 64x64 (4 warps of 32x32, 3 blocks an SM,
 *              156-166 registers) and 64x128 (2 blocks),
 *              timed on the H100 at e66e395 on the corpus's 533 cases with min(m, n) > 64
 *              (bench/results/mid/): fastest of the fp32 mode's entries on 10 of them, a
 *              geometric-mean gain of 0.5% on medium outputs; at 2435x194x2049 TT 0.70x
 *              cuBLAS at best (cuBLAS's FFMA kernel 27 TFLOP/s).  The TF32 form of 64x64 gained
 *              1-2% in the TF32 mode's medium categories and lost on the squares (1024^3: 0.38x
 *              FAST_TF32, tma_wgmmatf32 0.54x).
 */
#include <float.h>
#include <stdint.h>

#include "async_copy.cuh"
#include "common.cuh"
#include "mma_tf32.cuh"
#include "tc_common.cuh"

namespace {

/*
 * SPLIT: 3xTF32 (else TF32, big parts only).  PROMOTE: k accumulated by the tensor core before
 * the partial sum joins the FP32 registers, a multiple of 32.  CA, CB: how op(A) and op(B) are
 * copied (KTileLoader).
 */
template <int BM, int BN, int WM, int WN, int STAGES, int PROMOTE, bool SPLIT, Copy CA, Copy CB>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1) sgemm_mma_tf32(const tg_problem p)
{
    constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN, kThreads = 32 * kWarpsM * kWarpsN;
    constexpr int kTilesM = WM / 16, kTilesN = WN / 8; /* mma tiles a warp */
    constexpr int kPromoteTiles = PROMOTE / kBK;
    static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
    static_assert(WM % 16 == 0 && WN % 8 == 0, "a warp tile is a grid of 16 x 8 mma tiles");
    static_assert(PROMOTE % kBK == 0 && PROMOTE > 0,
                  "promotion happens between shared tiles: PROMOTE is a multiple of 32");
    static_assert(STAGES >= 2, "a pipeline needs at least two shared buffers");
    using LoadA = KTileLoader<BM, kThreads, CA>;
    using LoadB = KTileLoader<BN, kThreads, CB>;
    constexpr int kTileA = BM * kBK, kTileB = BN * kBK;

    extern __shared__ __align__(16) float smem[];
    float *const As = smem;                  /* [STAGES][BM][32], swizzled */
    float *const Bs = smem + STAGES * kTileA; /* [STAGES][BN][32], swizzled */

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;
    const int wm0 = warp / kWarpsN * WM, wn0 = warp % kWarpsN * WN;

    const int64_t i0 = blockIdx.y * (int64_t)BM, j0 = blockIdx.x * (int64_t)BN;
    const batch_item item(p);
    LoadA load_a(item.A + i0 * p.a_rs, p.a_rs, p.a_cs, p.m - i0, tid); /* op(A)(i0, 0) on */
    LoadB load_b(item.B + j0 * p.b_cs, p.b_cs, p.b_rs, p.n - j0, tid); /* op(B)(0, j0) on */

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s * kBK < p.k) {
            load_a.load(As + s * kTileA, p.a_rs, p.a_cs, p.k - s * kBK);
            load_b.load(Bs + s * kTileB, p.b_cs, p.b_rs, p.k - s * kBK);
        }
        async_commit();
    }

    float sum[kTilesM][kTilesN][4] = {}; /* promoted FP32 sums */
    float part[kTilesM][kTilesN][4] = {}; /* the tensor core's, since the last promotion */
    int read = 0, tiles_since_promotion = 0;
    for (int64_t k_left = p.k; k_left > 0; k_left -= kBK) {
        async_wait<STAGES - 2>();
        __syncthreads();
        const int64_t next_left = k_left - (STAGES - 1) * kBK;
        if (next_left > 0) {
            const int write = read == 0 ? STAGES - 1 : read - 1;
            load_a.load(As + write * kTileA, p.a_rs, p.a_cs, next_left);
            load_b.load(Bs + write * kTileB, p.b_cs, p.b_rs, next_left);
        }
        async_commit();

        const float *const a_tile = As + read * kTileA;
        const float *const b_tile = Bs + read * kTileB;
#pragma unroll
        for (int kk = 0; kk < kBK; kk += 8) {
            /* Thread t holds k = kk + 2t and kk + 2t + 1 of each row: the mma's k = t and t + 4
             * (the same pairing for A and B, so the product is unchanged). */
            Split a[kTilesM][4], b[kTilesN][2];
#pragma unroll
            for (int mt = 0; mt < kTilesM; ++mt) {
#pragma unroll
                for (int h = 0; h < 2; ++h) { /* rows g and g + 8 */
                    const float2 v = *reinterpret_cast<const float2 *>(
                        &a_tile[tile_offset(wm0 + mt * 16 + h * 8 + g, kk + 2 * t)]);
                    a[mt][h] = split_tf32(v.x);
                    a[mt][h + 2] = split_tf32(v.y);
                }
            }
#pragma unroll
            for (int nt = 0; nt < kTilesN; ++nt) {
                const float2 v = *reinterpret_cast<const float2 *>(
                    &b_tile[tile_offset(wn0 + nt * 8 + g, kk + 2 * t)]);
                b[nt][0] = split_tf32(v.x);
                b[nt][1] = split_tf32(v.y);
            }
#pragma unroll
            for (int mt = 0; mt < kTilesM; ++mt) {
                const float a_big[4] = {a[mt][0].big, a[mt][1].big, a[mt][2].big, a[mt][3].big};
                const float a_small[4] = {a[mt][0].small, a[mt][1].small, a[mt][2].small,
                                          a[mt][3].small};
#pragma unroll
                for (int nt = 0; nt < kTilesN; ++nt) {
                    const float b_big[2] = {b[nt][0].big, b[nt][1].big};
                    const float b_small[2] = {b[nt][0].small, b[nt][1].small};
                    if (SPLIT) { /* the small products first */
                        mma_tf32_16x8x8(part[mt][nt], a_small, b_big);
                        mma_tf32_16x8x8(part[mt][nt], a_big, b_small);
                    }
                    mma_tf32_16x8x8(part[mt][nt], a_big, b_big);
                }
            }
        }
        read = read == STAGES - 1 ? 0 : read + 1;
        if (++tiles_since_promotion == kPromoteTiles || k_left <= kBK) {
            tiles_since_promotion = 0;
            float *const s = &sum[0][0][0], *const q = &part[0][0][0];
#pragma unroll
            for (int i = 0; i < kTilesM * kTilesN * 4; ++i) {
                s[i] += q[i];
                q[i] = 0.0f;
            }
        }
    }
    async_wait<0>();

    /* sum[mt][nt][e] is C(i0 + wm0 + mt * 16 + g + 8 * (e / 2), j0 + wn0 + nt * 8 + 2t + e % 2). */
#pragma unroll
    for (int mt = 0; mt < kTilesM; ++mt)
#pragma unroll
        for (int nt = 0; nt < kTilesN; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                store_tc_result(p, item, i0 + wm0 + mt * 16 + g + 8 * (e / 2),
                                j0 + wn0 + nt * 8 + 2 * t + e % 2, sum[mt][nt][e]);
}

template <int BM, int BN, int WM, int WN, int STAGES, int PROMOTE, bool SPLIT, Copy CA, Copy CB>
int launch_instance(const tg_problem *p, cudaStream_t stream)
{
    const size_t smem = (size_t)STAGES * (BM + BN) * kBK * sizeof(float);
    constexpr auto kernel = sgemm_mma_tf32<BM, BN, WM, WN, STAGES, PROMOTE, SPLIT, CA, CB>;
    const cudaError_t e = opt_in_shared_memory<kernel>(smem);
    if (e != cudaSuccess)
        return (int)e;
    const dim3 block((BM / WM) * (BN / WN) * 32);
    const dim3 grid(ceil_div(p->n, BN), ceil_div(p->m, BM), (unsigned)p->batch);
    kernel<<<grid, block, smem, stream>>>(*p);
    return (int)cudaGetLastError();
}

/* The kernel's instance for the copies each operand needs (tc_common.cuh's dispatch). */
template <int BM, int BN, int WM, int WN, int STAGES, int PROMOTE, bool SPLIT>
struct MmaTf32 {
    template <Copy CA, Copy CB>
    static int launch(const tg_problem *p, cudaStream_t stream)
    {
        return launch_instance<BM, BN, WM, WN, STAGES, PROMOTE, SPLIT, CA, CB>(p, stream);
    }
};

template <int BM, int BN, int WM, int WN, int STAGES, int PROMOTE, bool SPLIT>
int launch_mma_tf32(const tg_problem *p, void *stream)
{
    using Kernel = MmaTf32<BM, BN, WM, WN, STAGES, PROMOTE, SPLIT>;
    return launch_by_copies<Kernel>(p, (cudaStream_t)stream);
}

/* Every tiling constraint is compile-time; the 4-byte copies cover any stride and alignment. */
const char *mma_tf32_unsupported(const tg_problem *) { return nullptr; }

} // namespace

#if TG_IN_UNIT(mma3xtf32)
extern "C" const tg_rung tg_rung_mma3xtf32 = {.name = "mma3xtf32", .level = 8,
    .summary = "tensor cores at FP32 accuracy: inputs split into two TF32 parts (3 mma.sync "
               "m16n8k8), 128x128x32 block, 32x64 warp tiles, 4-stage cp.async, FP32 "
               "promotion every 32 of k",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_3XTF32, .min_cc = 80,
    .launch = launch_mma_tf32<128, 128, 32, 64, 4, 32, true>, .unsupported = mma_tf32_unsupported};
#endif

#if TG_IN_UNIT(mmatf32)
extern "C" const tg_rung tg_rung_mmatf32 = {.name = "mmatf32", .level = 8,
    .summary = "mma3xtf32 without the small parts: TF32 inputs (opt-in TF32 math mode, below "
               "FP32 accuracy)",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_TF32, .min_cc = 80,
    .launch = launch_mma_tf32<128, 128, 32, 64, 4, 32, false>, .unsupported = mma_tf32_unsupported};
#endif
