/*
 * Rung 7: 3xTF32 on Hopper's warpgroup tensor-core instructions (wgmma), FP32 accuracy.
 *   sgemm_wgmma3xtf32_128x128x32_wg2_s3_p32 ("wgmma3xtf32")  the default math mode's rung on
 *                                                              the H100
 *   sgemm_wgmmatf32_128x128x32_wg2_s3_p32   ("wgmmatf32")    big parts only: the TF32 mode
 *
 * What it adds over rung 6 (mma3xtf32): the products run as wgmma.m64n128k8, which read both
 * operands straight from shared memory and run asynchronously, at the rate the H100's tensor
 * cores reach only through them (mma.sync peaks near 320 TFLOP/s of TF32 there).  Because wgmma
 * reads its operands from shared memory, the split into TF32 parts happens once per block, in a
 * pass over the staged tile that writes big and small parts into the layout wgmma reads (rows
 * of 32 k, 128-byte swizzle, wgmma_tf32.cuh), transposing where the operand runs along m or n:
 * one split per value per block, where rung 6 split each value once per warp that read it.
 *   pipeline     cp.async stages raw tiles (tc_common.cuh's KTileLoader, STAGES = 3); while the
 *                tensor cores multiply tile t, the threads split tile t + 1 into the other of
 *                two split buffers
 *   promotion    every tile (32 of k) the tensor core starts a fresh partial sum (wgmma with
 *                accumulate off) and the finished one is added into FP32 registers by
 *                ordinary round-to-nearest FADDs, as in rung 6.  Small products first.
 *   block tile   BM x BN x BK = 128 x 128 x 32, 256 threads = 2 warpgroups, each 64 x 128
 *   per tile     12 wgmma.m64n128k8 a warpgroup (4 of k x 3 terms; 4 in TF32 mode); the split
 *                pass: 8 LDS.128, 32 values, 16 STS.128 a thread
 *   registers    64 FP32 sums + 64 partial sums a thread: __launch_bounds__(256, 1)
 *   shared       2 split buffers x (A, B) x (big, small) x 16 KiB + 3 stages x 32 KiB = 224 KiB
 * Special values: as rung 6, outputs whose tensor-core sum is not finite are recomputed by an
 *   FP32 FMA dot product, so Inf, NaN, values near FLT_MAX and values under 2^-100 (which the
 *   split makes NaN: the tensor core flushes subnormals) behave as on the FMA rungs.  The test
 *   for the last costs 3 instructions a value: 92.1 -> 84.6 TFLOP/s at 4096^3 and 88.6 -> 83.6
 *   at 8192^3 (bench/results/sweeps/h100-2026-11-23-call8-subnormal-rule.json); the line below
 *   was measured before it.
 * Edges: the staged tiles are zero-filled outside the matrix; stores are guarded; beta == 0
 *   never reads C.  Offsets are 64-bit.  Any m, n, k, strides, alignment.
 * Constraints: compute capability 9.0 and a build with sm_90a code (wgmma is sm_90a only).
 * Benchmark:   tilegemm bench --algo wgmma3xtf32,wgmmatf32,mma3xtf32 4096x4096x4096
 * Measured:    wgmma3xtf32 87.0 TFLOP/s (1.61x cuBLAS) at 16384x16384x16384, 88.6 TFLOP/s (1.71x cuBLAS) at 8192x8192x8192, 53.0 TFLOP/s (1.19x cuBLAS) at 4097x4097x4097, 92.1 TFLOP/s (1.77x cuBLAS) at 4096x4096x4096; wgmmatf32 129.2 TFLOP/s (2.39x cuBLAS) at 16384x16384x16384, 129.1 TFLOP/s (2.50x cuBLAS) at 8192x8192x8192, 64.2 TFLOP/s (1.44x cuBLAS) at 4097x4097x4097, 127.6 TFLOP/s (2.45x cuBLAS) at 4096x4096x4096 on NVIDIA H100 80GB HBM3, commit b39f18e (bench/results/nvidia-h100-80gb-hbm3-2026-11-23-candidates.json)
 */
#include <float.h>
#include <stdint.h>

#include <type_traits>

#include "async_copy.cuh"
#include "common.cuh"
#include "mma_tf32.cuh"
#include "named_barrier.cuh"
#include "tc_common.cuh"
#include "tile_loader.cuh"
#include "wgmma_tf32.cuh"

namespace {

constexpr int kRows = 128;                /* BM = BN */
constexpr int kOperandTile = kRows * kBK; /* floats in one operand's tile */
constexpr int kWarpgroup = 128;           /* threads */
constexpr int kProducers = 2 * kWarpgroup; /* two producer warpgroups, then two consumers */
constexpr int kThreads = kProducers + 2 * kWarpgroup;
/* Registers a thread, moved from the producers (loads and the split) to the consumers (64
 * sums and 64 partial sums): 256 x 88 + 256 x 168 = the SM's 65536 (the least for the
 * producers with no spills). */
constexpr int kProducerRegisters = 88, kConsumerRegisters = 168;
constexpr int kNBuf = 2;                  /* split buffers in the ring */
/* Named barriers: the producers among themselves, then "buffer b is full" and "is empty". */
constexpr int kProducerBarrier = 1, kFullBarrier = 2, kEmptyBarrier = 2 + kNBuf;

/* A buffer of the ring: A's tile as staged (tile_offset layout; the consumers split it in
 * registers), then B's big and small parts in wgmma's layout (TF32 mode: big parts only). */
template <bool SPLIT>
struct SplitLayout {
    static constexpr int kBuffer = (SPLIT ? 3 : 2) * kOperandTile; /* floats */
    static __device__ __forceinline__ float *a(float *buffer) { return buffer; }
    static __device__ __forceinline__ float *b_big(float *buffer) { return buffer + kOperandTile; }
    static __device__ __forceinline__ float *b_small(float *buffer)
    {
        return buffer + 2 * kOperandTile;
    }
};

/* copy_a_split_b for a B staged along n ([32][128], B_N_VEC): a thread takes column n = pt % 128
 * and the 8s of k pt / 128 and pt / 128 + 2, reading down the column (consecutive lanes,
 * consecutive banks) and writing its two chunks per 8 (the 8 rows of a quarter-warp land in 8
 * different chunks).  This is where B is transposed into k-contiguous rows. */
template <bool SPLIT>
__device__ __forceinline__ void split_b_along_n(const float *staged_b, float *buffer, int pt)
{
    using L = SplitLayout<SPLIT>;
    const int n = pt % kRows;
#pragma unroll
    for (int e = 0; e < kBK / 8 * kRows / kProducers; ++e) {
        const int k = (pt / kRows + e * (kProducers / kRows)) * 8;
        float even[4], odd[4]; /* stored positions t and t + 4 take k = 2t and 2t + 1 */
#pragma unroll
        for (int t = 0; t < 4; ++t) {
            even[t] = staged_b[(k + 2 * t) * kRows + n];
            odd[t] = staged_b[(k + 2 * t + 1) * kRows + n];
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float *const v = h ? odd : even;
            const Split4 parts = split_tf32_4(make_float4(v[0], v[1], v[2], v[3]));
            *reinterpret_cast<float4 *>(L::b_big(buffer) + sw128_offset(n, k + 4 * h)) =
                parts.big;
            if (SPLIT)
                *reinterpret_cast<float4 *>(L::b_small(buffer) + sw128_offset(n, k + 4 * h)) =
                    parts.small;
        }
    }
}

/* The producers copy A's staged tile as it is (tile_offset layout; the consumers read it into
 * registers) and split B, whose k inside each 8 they store in the order the
 * consumers' A fragments take it (k = 2t and 2t + 1 of a thread's LDS.64 are the mma's k = t
 * and t + 4): stored position t holds k = 2t, position t + 4 holds k = 2t + 1.  A thread takes
 * 8 of k (two chunks) of rows pt / 4 + 64 j. */
template <bool SPLIT, bool B_N_VEC>
__device__ __forceinline__ void copy_a_split_b(const float *staged_a, const float *staged_b,
                                               float *buffer, int pt)
{
    using L = SplitLayout<SPLIT>;
    {
        const int row = pt / 8, k = pt % 8 * 4, from = tile_offset(row, k);
#pragma unroll
        for (int j = 0; j < kRows * 8 / kProducers; ++j) {
            const int step = j * (kProducers / 8) * kBK;
            *reinterpret_cast<float4 *>(L::a(buffer) + from + step) =
                *reinterpret_cast<const float4 *>(staged_a + from + step);
        }
    }
    if constexpr (B_N_VEC) {
        split_b_along_n<SPLIT>(staged_b, buffer, pt);
    } else {
        const int row = pt / 4, k = pt % 4 * 8;
        const int lo = tile_offset(row, k), hi = tile_offset(row, k + 4);
        const int even_to = sw128_offset(row, k), odd_to = sw128_offset(row, k + 4);
#pragma unroll
        for (int j = 0; j < kRows * 4 / kProducers; ++j) {
            const int step = j * (kProducers / 4) * kBK;
            const float4 x = *reinterpret_cast<const float4 *>(staged_b + lo + step);
            const float4 y = *reinterpret_cast<const float4 *>(staged_b + hi + step);
            const float4 even = make_float4(x.x, x.z, y.x, y.z);
            const float4 odd = make_float4(x.y, x.w, y.y, y.w);
            const Split4 e = split_tf32_4(even), o = split_tf32_4(odd);
            *reinterpret_cast<float4 *>(L::b_big(buffer) + even_to + step) = e.big;
            *reinterpret_cast<float4 *>(L::b_big(buffer) + odd_to + step) = o.big;
            if (SPLIT) {
                *reinterpret_cast<float4 *>(L::b_small(buffer) + even_to + step) = e.small;
                *reinterpret_cast<float4 *>(L::b_small(buffer) + odd_to + step) = o.small;
            }
        }
    }
}

/* B_N_VEC: B runs along n and may be copied by 16-byte vectors: it is staged as it lies,
 * [32][128] (the FFMA rungs' loader), and transposed by the producers' split instead of by
 * 4-byte copies. */
template <int STAGES, bool SPLIT, bool B_N_VEC, Copy CA, Copy CB>
__global__ void __launch_bounds__(kThreads, 1) sgemm_wgmma_tf32(const tg_problem p)
{
    using L = SplitLayout<SPLIT>;
    static_assert(STAGES >= 2, "a pipeline needs at least two staging buffers");

    extern __shared__ __align__(16) float smem[];
    float *const split = align_shared_1024(smem); /* [kNBuf][L::kBuffer], 1024-byte aligned */
    float *const staged = split + kNBuf * L::kBuffer; /* [STAGES][A, B][kOperandTile] */

    const int tid = threadIdx.x;
    const int64_t i0 = blockIdx.y * (int64_t)kRows, j0 = blockIdx.x * (int64_t)kRows;
    const int64_t tiles = (p.k + kBK - 1) / kBK;
    const batch_item item(p);

    if (tid < kProducers) {
        /* Producers: stage raw tiles by cp.async, split each into the ring of split buffers. */
        set_max_registers<kProducerRegisters, false>();
        const int pt = tid;
        KTileLoader<kRows, kProducers, CA> load_a(item.A + i0 * p.a_rs, p.a_rs, p.a_cs,
                                                  p.m - i0, pt);
        using LoadB = std::conditional_t<B_N_VEC,
                                         AsyncTileLoader<kRows, kBK, kProducers, false, true>,
                                         KTileLoader<kRows, kProducers, CB>>;
        LoadB load_b(item.B + j0 * p.b_cs, p.b_cs, p.b_rs, p.n - j0, pt);
        auto staged_a = [&](int64_t t) { return staged + t % STAGES * 2 * kOperandTile; };
        auto staged_b = [&](int64_t t) { return staged_a(t) + kOperandTile; };
        /* Stages tile t; cp.async group g is always tile g (empty past the last tile). */
        auto stage = [&](int64_t t) {
            if (t < tiles) {
                load_a.load(staged_a(t), p.a_rs, p.a_cs, p.k - t * kBK);
                load_b.load(staged_b(t), p.b_cs, p.b_rs, p.k - t * kBK);
            }
            async_commit();
        };
        for (int s = 0; s < STAGES - 1; ++s)
            stage(s);
        for (int64_t t = 0; t < tiles; ++t) {
            async_wait<STAGES - 2>(); /* tile t has landed (this thread's copies)... */
            /* ...everyone's; and every producer has split tile t - 1, whose stage is next */
            named_barrier_sync(kProducerBarrier, kProducers);
            stage(t + STAGES - 1);
            const int b = (int)(t % kNBuf);
            if (t >= kNBuf) /* the consumers are done with the buffer's previous tile */
                named_barrier_sync(kEmptyBarrier + b, kThreads);
            copy_a_split_b<SPLIT, B_N_VEC>(staged_a(t), staged_b(t),
                                           split + b * L::kBuffer, pt);
            fence_async_shared(); /* the parts are visible to wgmma... */
            named_barrier_arrive(kFullBarrier + b, kThreads); /* ...once the consumers sync */
        }
        async_wait<0>();
        return;
    }

    /* Consumers: the first multiplies rows 0-63 of the block's tile, the second rows 64-127,
     * each with all 128 columns. */
    set_max_registers<kConsumerRegisters, true>();
    const int half = (tid - kProducers) / kWarpgroup;
    float sum[64] = {}, part[64];
    for (int64_t t = 0; t < tiles; ++t) {
        const int b = (int)(t % kNBuf);
        float *const buffer = split + b * L::kBuffer;
        const float *const bb = L::b_big(buffer);
        named_barrier_sync(kFullBarrier + b, kThreads);
        /* This warp's 16 rows of A as mma fragments, split in registers: rows g and g + 8,
         * k = kk + 2t and kk + 2t + 1, the mma's k = t and t + 4 (B's stored order) */
        const int r0 = half * 64 + tid / 32 % 4 * 16 + tid % 32 / 4, t2 = tid % 4 * 2;
        Split frag[kBK / 8][4];
#pragma unroll
        for (int kk = 0; kk < kBK / 8; ++kk)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float2 v = *reinterpret_cast<const float2 *>(
                    L::a(buffer) + tile_offset(r0 + 8 * h, 8 * kk + t2));
                frag[kk][h] = split_tf32(v.x);
                frag[kk][h + 2] = split_tf32(v.y);
            }
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBK / 8; ++kk) {
            const float big[4] = {frag[kk][0].big, frag[kk][1].big, frag[kk][2].big,
                                  frag[kk][3].big};
            const float small[4] = {frag[kk][0].small, frag[kk][1].small, frag[kk][2].small,
                                    frag[kk][3].small};
            if (SPLIT) { /* the small products first */
                wgmma_64x128x8_ra(part, small, smem_desc(bb, 8 * kk), kk > 0);
                wgmma_64x128x8_ra(part, big, smem_desc(L::b_small(buffer), 8 * kk), true);
            }
            wgmma_64x128x8_ra(part, big, smem_desc(bb, 8 * kk), SPLIT || kk > 0);
        }
        wgmma_commit();
        wgmma_wait<0>();
        fence_operand(part);
        if (t + kNBuf < tiles) /* the producers refill the buffer with tile t + kNBuf */
            named_barrier_arrive(kEmptyBarrier + b, kThreads);
        /* Promotion: the tile's partial sum joins the FP32 sums by round-to-nearest adds. */
#pragma unroll
        for (int i = 0; i < 64; ++i)
            sum[i] += part[i];
    }

    /* sum[4j + e] is C(i0 + 64 half + 16 w + g + 8 (e / 2), j0 + 8j + 2t + e % 2). */
    const int w = tid / 32 % 4, g = tid % 32 / 4, lane_t = tid % 4;
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
            store_tc_result(p, item, i0 + 64 * half + 16 * w + g + 8 * (e / 2),
                            j0 + 8 * j + 2 * lane_t + e % 2, sum[4 * j + e]);
}

template <int STAGES, bool SPLIT>
struct WgmmaTf32 {
    template <Copy CA, Copy CB>
    static int launch(const tg_problem *p, cudaStream_t stream)
    {
        if constexpr (CB == Copy::kOuter)
            if (vectors_allowed(p->B, p->b_cs, p->b_rs, p->stride_b))
                return instance<CA, CB, true>(p, stream);
        return instance<CA, CB, false>(p, stream);
    }

    template <Copy CA, Copy CB, bool B_N_VEC>
    static int instance(const tg_problem *p, cudaStream_t stream)
    {
        const size_t smem =
            (kNBuf * SplitLayout<SPLIT>::kBuffer + STAGES * 2 * kOperandTile) * sizeof(float) +
            1024 /* room to align the split buffers */;
        constexpr auto kernel = sgemm_wgmma_tf32<STAGES, SPLIT, B_N_VEC, CA, CB>;
        const cudaError_t e = opt_in_shared_memory<kernel>(smem);
        if (e != cudaSuccess)
            return (int)e;
        const dim3 grid(ceil_div(p->n, kRows), ceil_div(p->m, kRows), (unsigned)p->batch);
        kernel<<<grid, kThreads, smem, stream>>>(*p);
        return (int)cudaGetLastError();
    }
};

template <int STAGES, bool SPLIT>
int launch_wgmma_tf32(const tg_problem *p, void *stream)
{
    return launch_by_copies<WgmmaTf32<STAGES, SPLIT>>(p, (cudaStream_t)stream);
}

/* wgmma exists only in sm_90a code, which the build makes when TG_CUDA_ARCH names 90a. */
const char *wgmma_tf32_unsupported(const tg_problem *)
{
#ifdef TG_BUILD_SM90A
    return nullptr;
#else
    return "this build has no sm_90a code (configure with TG_CUDA_ARCH including 90a)";
#endif
}

} // namespace

#if TG_IN_UNIT(wgmma3xtf32)
extern "C" const tg_rung tg_rung_wgmma3xtf32 = {.name = "wgmma3xtf32", .level = 7,
    .summary = "tensor cores at FP32 accuracy on Hopper: wgmma.m64n128k8 with A's TF32 parts in "
               "registers and B's split once per block into wgmma's swizzled layout by two "
               "producer warpgroups, 128x128x32 block, FP32 promotion every 32 of k",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_3XTF32, .min_cc = 90,
    .launch = launch_wgmma_tf32<3, true>, .unsupported = wgmma_tf32_unsupported};
#endif

#if TG_IN_UNIT(wgmmatf32)
extern "C" const tg_rung tg_rung_wgmmatf32 = {.name = "wgmmatf32", .level = 7,
    .summary = "wgmma3xtf32 without the small parts: TF32 inputs (opt-in TF32 math mode, below "
               "FP32 accuracy)",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_TF32, .min_cc = 90,
    .launch = launch_wgmma_tf32<3, false>, .unsupported = wgmma_tf32_unsupported};
#endif
