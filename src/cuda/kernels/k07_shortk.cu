/*
 * Rung 7: short k (at most 256) and large outputs, where the cost is writing C: FP32 FFMA
 * products, or TF32 tensor-core ones for the TF32 mode, in the same blocks.
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
 *              no fragment ahead: op(A)'s 8 floats two at a time (4 LDS.64 + 2 LDS.128 a k
 *              step, the loop not unrolled), and the whole tile is staged at once so that no
 *              warp keeps its accumulators while others store.  ptxas (CUDA 13.0): 80
 *              registers; 4 bytes of spills in the one-chunk forms, 4 to 12 in the chunked
 *              ones (k > 64), none inside the product loop.
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
 *              op(A) read in pairs (FfmaProducts below; H200, bench/results/shortk/
 *              pair-loads/): at k <= 64 0.90x to 0.97x the time on 11 calls, 27182x26882x25
 *              1.253 ms (C at 2.33 TB/s, 1.52x cuBLAS), 16384x16384x16 1.35x, 4253x11166x11
 *              1.50x, 8192x8192x64 1.10x; past 64, where a layout takes them, 0.91x to 0.93x,
 *              8192x8192 at k 128 and 256 1.00x and 0.97x cuBLAS.
 *              Past 64, the loaders made anew each chunk and pairs in every layout (H200,
 *              bench/results/shortk/chunk-loaders/): 0.86x to 0.99x the time on all 17
 *              calls, 0.87x to 0.92x where both operands are copied 4 bytes at a time (row
 *              NT, column TN, rows off 16 bytes); 31687x15626x91 2.49 ms (1.02x cuBLAS, was
 *              0.89x), 8192x8192x128 row NT 1.04x (0.94x), 4785x9530x200 col TN 0.88x (0.81x).
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
 *
 * sgemm_shortk_128x128xBK_w32x64_mma ("shortk128tf32"): the TF32 mode's form, k <= 256.  The same
 * block, loads and stores, with the products on the tensor cores (Tf32Products below: 8 warps
 * as 4 (m) x 2 (n) of 32 x 64, mma.sync m16n8k8, op(A) rounded to nearest TF32, op(B)
 * truncated by the tensor core); shared pitches of 136 floats for conflict-free fragments; 64
 * accumulators at 128 registers, 2 blocks an SM (at 80 registers ptxas kept accumulators in
 * local memory inside the k loop).  Outputs that are not finite are recomputed by an FP32 FMA
 * dot product, as on rungs 8 and 9.
 * Measured:    H200, against cuBLAS TF32 in the same run (bench/results/shortk/tf32/):
 *              8192x8192x64 0.164 ms (0.65x; auto's tma_wgmmatf32 0.225 ms), 31687x15626x91
 *              0.93x (0.82x), 12007x9001x40 TN 0.86x (0.72x), 6537x10399x69 NT col 0.78x
 *              (0.66x), 1957x18192x142 NT col 1.04x (0.88x); at k <= 25 shortk128 (FFMA, 3
 *              blocks an SM) is faster, at k = 256 tma_wgmmatf32.  ncu at 8192x8192x64:
 *              latency-bound, 24% occupancy, no eligible warp 63% of the cycles.  Since rung
 *              9's epilogue lost its tests (3a8c572), tma_wgmmatf32 is faster from k = 64 on
 *              (8192x8192x64 0.108 ms, bench/results/tensor/lean-epilogue/).
 * Not kept:    (bench/results/shortk/tf32/, each a patch there) a 128 x 64 tile, 32 x 32 a warp,
 *              4 blocks an SM at 64 registers: faster at k <= 32 (16384x16384x16 0.389 ms against
 *              0.485), slower past k = 40 (8192x8192x64 0.174, 31687x15626x91 2.22 ms against
 *              1.70: op(A) read twice as often per output); k past 32 in chunks of 32 through
 *              two buffers, the next chunk's copies in flight during the products: within
 *              +-10% of one 64-deep tile, 8192x8192x256 0.391 against 0.378 ms; C stored
 *              from the accumulators by 8-byte pairs, with no stage (and with persistent
 *              blocks whose next tile's copies go out before the stores): 1.17x to 2.4x the
 *              time where C's rows are off 16 bytes, at most 5% (8%) faster where aligned.
 */
#include <float.h>
#include <stdint.h>

#include "async_copy.cuh"
#include "common.cuh"
#include "mma_tf32.cuh"
#include "tc_common.cuh"
#include "tile_loader.cuh"

namespace {

constexpr int kShortMaxK = 256;
/* the deepest tile: with C's stage 66 KiB (FFMA) or 68 KiB (TF32, pitch 136) a block */
constexpr int kShortChunk = 64;
constexpr int kTile = 128;      /* a block's tile of C is kTile x kTile */
constexpr int kThreads = 256;   /* 8 warps */
constexpr int kWarps = kThreads / 32;
constexpr int kStagePitch = kTile + 4; /* C's stage: kTile rows of kStagePitch floats */

/* threadIdx.x, read where it is used: a value the compiler cannot move out of a loop */
__device__ __forceinline__ int unhoisted_thread_index()
{
#ifdef __CUDA_ARCH__
    int t;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
    return t;
#else
    return (int)threadIdx.x;
#endif
}

/* Whether C's rows of one batch item may be stored by 16-byte vectors. */
__device__ __forceinline__ bool c_vectors(const float *C, int64_t ldc)
{
    return reinterpret_cast<uintptr_t>(C) % 16 == 0 && ldc % 4 == 0;
}

/* alpha times 4 staged floats into C by one 16-byte streaming store; c and s 16-byte aligned. */
__device__ __forceinline__ void store_scaled_vector(float *c, const float *s, float alpha)
{
    const float4 v = *reinterpret_cast<const float4 *>(s);
    __stcs(reinterpret_cast<float4 *>(c),
           make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w));
}

/* C leaves the block through shared memory, the whole tile at once (staged by the products'
 * own layout, below), so that a warp writes whole rows of C: one 16-byte streaming store a
 * lane (st.global.cs: C is written once and should not evict A and B from L2) where C's
 * pointer and ldc allow and beta == 0, else 4 coalesced element stores a lane.  Stored
 * straight from the thread tile, an ldc that is not a multiple of 4 left every lane writing 4
 * scattered floats: a third of the speed.  A stage of one warp row at a time left the later
 * parts' warps holding their accumulators while the earlier parts were stored, which spilled
 * at 80 registers.  The barrier ends the stage's writes. */
__device__ __forceinline__ void store_stage_rows(const float *stage, const tg_problem &p,
                                                 int64_t i0, int64_t j0)
{
    static_assert(kTile == 32 * 4, "a warp stores one row of the tile by 16-byte lanes");
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *const C = batch_item(p).C;
    const bool c_vec = c_vectors(C, p.ldc);
    __syncthreads();
    if (p.beta == 0.0f && i0 + kTile <= p.m && j0 + kTile <= p.n) {
        /* C only written and the whole tile inside it (every tile but the last row and column
         * of tiles): each row's stores at fixed offsets, with no test at each element and the
         * row's address one add from the last (ncu: rows tested element by element made
         * shortk128 issue-bound, bench/results/shortk/ncu-2026-11-28/) */
        const int64_t step = kWarps * p.ldc;
        if (c_vec) {
            float *c = C + (i0 + warp) * p.ldc + j0 + lane * 4;
            const float *s = stage + warp * kStagePitch + lane * 4;
#pragma unroll 4
            for (int r = warp; r < kTile; r += kWarps, c += step, s += kWarps * kStagePitch) {
                store_scaled_vector(c, s, p.alpha);
            }
        } else {
            float *c = C + (i0 + warp) * p.ldc + j0 + lane;
            const float *s = stage + warp * kStagePitch + lane;
#pragma unroll 4
            for (int r = warp; r < kTile; r += kWarps, c += step, s += kWarps * kStagePitch)
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    __stcs(c + 32 * q, p.alpha * s[32 * q]);
        }
        return;
    }
    for (int r = warp; r < kTile; r += kWarps) {
        const int64_t row = i0 + r;
        if (row >= p.m)
            break;
        float *const c_row = C + row * p.ldc + j0;
        const float *const s_row = stage + r * kStagePitch;
        if (p.beta == 0.0f && c_vec && j0 + kTile <= p.n) {
            store_scaled_vector(c_row + lane * 4, s_row + lane * 4, p.alpha);
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

/* Two floats of shared memory (8-byte aligned) by one 8-byte load that the compiler neither
 * hoists nor merges with others: at 80 registers a fragment read ahead spills. */
__device__ __forceinline__ float2 load_pair_in_place(const float *s)
{
#ifdef __CUDA_ARCH__
    float2 v;
    asm volatile("ld.volatile.shared.v2.f32 {%0, %1}, [%2];"
                 : "=f"(v.x), "=f"(v.y)
                 : "r"((unsigned)__cvta_generic_to_shared(s)));
    return v;
#else
    return *reinterpret_cast<const float2 *>(s); /* the CPU emulation checks the alignment */
#endif
}

/*
 * FP32 FMA products ("shortk128"): warp tile 64 x 32 (8 warps as 2 (m) x 4 (n)), lanes as
 * 8 x 4, thread tile 8 x 8 as 2 x 2 runs of 4 (as rung 3).  `steps` k steps from the shared
 * tiles, with no fragment of a later step read ahead (the loop is not unrolled), to stay within
 * 80 registers: op(A)'s 8 floats are read two at a time (load_pair_in_place), leaving 64
 * accumulators + 8 of op(B) + 2 of op(A) + the loop live.  Per k step 4 LDS.64 + 2 LDS.128 for
 * 64 FFMA (75-76 instructions in the loop), against 8 LDS + 2 LDS.128 (79) a float at a time;
 * by 16-byte vectors ptxas spilled 32 bytes.
 */
struct FfmaProducts {
    static constexpr int kPad = -1; /* the loaders' own pitch */
    static constexpr int kBlocksPerSm = 3; /* 80 registers */
    static constexpr int kWM = 64, kWN = 32, kTM = 8, kTN = 8;
    static constexpr int kWarpsN = kTile / kWN, kLanesM = kWM / kTM, kLanesN = kWN / kTN;
    static constexpr int kPieceM = kLanesM * 4, kPieceN = kLanesN * 4;
    static_assert(kWarps == (kTile / kWM) * kWarpsN && kLanesM * kLanesN == 32,
                  "8 warps of 32 lanes must tile the block");
    using Acc = float[kTM][kTN];

    /* where this thread's fragments start in a row of op(A)'s and of op(B)'s tile */
    static __device__ __forceinline__ int a_off(int tid)
    {
        return tid / 32 / kWarpsN * kWM + tid % 32 / kLanesN * 4;
    }
    static __device__ __forceinline__ int b_off(int tid)
    {
        return tid / 32 % kWarpsN * kWN + tid % 32 % kLanesN * 4;
    }

    template <int PITCH_A, int PITCH_B>
    static __device__ __forceinline__ void run(Acc &acc, const float *As, const float *Bs,
                                               int steps)
    {
        const int tid = threadIdx.x;
        const float *a = As + a_off(tid), *b = Bs + b_off(tid);
#pragma unroll 1
        for (; steps > 0; --steps, a += PITCH_A, b += PITCH_B) {
            float bf[kTN];
            load_fragment<kTN, kPieceN>(bf, b);
#pragma unroll
            for (int i = 0; i < kTM; i += 2) {
                const float2 x = load_pair_in_place(a + i / 4 * kPieceM + i % 4);
#pragma unroll
                for (int j = 0; j < kTN; ++j) {
                    acc[i][j] += x.x * bf[j];
                    acc[i + 1][j] += x.y * bf[j];
                }
            }
        }
    }

    /* The thread tile into C's stage, by 16-byte stores; the barrier ends the products' reads
     * of the operands that share the space. */
    static __device__ __forceinline__ void stage(const Acc &acc, float *stage, const tg_problem &,
                                                 int64_t, int64_t)
    {
        const int tid = threadIdx.x;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < kTM; ++i)
#pragma unroll
            for (int h = 0; h < kTN / 4; ++h)
                *reinterpret_cast<float4 *>(
                    &stage[(a_off(tid) + i / 4 * kPieceM + i % 4) * kStagePitch + b_off(tid) +
                           h * kPieceN]) =
                    make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2],
                                acc[i][h * 4 + 3]);
    }
};

/*
 * TF32 tensor-core products ("shortk128tf32", the TF32 mode): warp tile 32 x 64 (8 warps as
 * 4 (m) x 2 (n)) as 2 x 8 mma tiles of 16 x 8 (mma.sync.m16n8k8, mma_tf32.cuh), with g = lane
 * / 4 and t = lane % 4.  Which rows and columns of the warp tile an mma tile's rows and columns
 * are is free (the staging below follows the same map), and so is which k of each 8 is the
 * fragment's t; they are chosen so that every fragment read is a vector and conflict-free with
 * a shared pitch of 8 mod 32 floats:
 *   op(A), m tile mt: its rows g and g + 8 are rows 16 mt + 2g and + 1 of the warp tile, so a
 *     thread's 2 floats at k = t (and at t + 4) are one LDS.64: 16 lanes, 32 banks;
 *   op(B), n tile j: its column g is column 4g + j (j < 4) or 32 + 4g + j - 4, so a thread's
 *     8 floats of a k are two LDS.128: 8 lanes, 8 different 16-byte chunks;
 *   so a thread's outputs are rows 16 mt + 2g (+ 1) by columns 32 h + 8t to 32 h + 8t + 7.
 * op(A) is rounded to nearest TF32 on the way (tf32_round); op(B) is read whole and truncated
 * by the tensor core, as rung 9's TF32 mode does, so the product's error is not biased twice.
 * k steps of 8: the tiles are zero-filled to the chunk's depth (32 or 64), so a k that is not a
 * multiple of 8 multiplies zeros.  64 accumulators, 4 floats of op(A) and 8 of op(B) live.
 */
struct Tf32Products {
    static constexpr int kPad = 8; /* pitch 136 = 8 mod 32 */
    /* at 80 registers (3 blocks) ptxas kept accumulators in local memory inside the k loop */
    static constexpr int kBlocksPerSm = 2;
    static constexpr int kWM = 32, kWN = 64, kTilesM = kWM / 16, kTilesN = kWN / 8;
    static constexpr int kWarpsN = kTile / kWN;
    static_assert(kWarps == (kTile / kWM) * kWarpsN, "8 warps must tile the block");
    static_assert(kTilesM == 2 && kTilesN == 8, "the fragment map above is for 2 x 8 mma tiles");
    using Acc = float[kTilesM][kTilesN][4];

    static __device__ __forceinline__ int warp_m0() { return threadIdx.x / 32 / kWarpsN * kWM; }
    static __device__ __forceinline__ int warp_n0() { return threadIdx.x / 32 % kWarpsN * kWN; }

    template <int PITCH_A, int PITCH_B>
    static __device__ __forceinline__ void run(Acc &acc, const float *As, const float *Bs,
                                               int steps)
    {
        static_assert(PITCH_A % 32 == 8 && PITCH_B % 32 == 8,
                      "the fragment reads are conflict-free at a pitch of 8 mod 32 floats");
        const int g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
        const float *a = As + t * PITCH_A + warp_m0() + 2 * g;
        const float *b = Bs + t * PITCH_B + warp_n0() + 4 * g;
#pragma unroll 1
        for (int k8 = (steps + 7) / 8; k8 > 0; --k8, a += 8 * PITCH_A, b += 8 * PITCH_B) {
#pragma unroll
            for (int mt = 0; mt < kTilesM; ++mt) {
                const float2 lo = *reinterpret_cast<const float2 *>(a + 16 * mt);
                const float2 hi = *reinterpret_cast<const float2 *>(a + 4 * PITCH_A + 16 * mt);
                const float af[4] = {tf32_round(lo.x), tf32_round(lo.y), tf32_round(hi.x),
                                     tf32_round(hi.y)};
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const float4 bl = *reinterpret_cast<const float4 *>(b + 32 * h);
                    const float4 bh = *reinterpret_cast<const float4 *>(b + 4 * PITCH_B + 32 * h);
                    const float b0[4] = {bl.x, bl.y, bl.z, bl.w}, b1[4] = {bh.x, bh.y, bh.z, bh.w};
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        const float bf[2] = {b0[j], b1[j]};
                        mma_tf32_16x8x8(acc[mt][4 * h + j], af, bf);
                    }
                }
            }
        }
    }

    /* The mma tiles into C's stage by 16-byte stores, each output that is not finite (Inf or
     * NaN among its inputs) recomputed first by an FP32 FMA dot product (tc_result), so that
     * special values behave as on the FMA rungs; the barrier ends the products' reads. */
    static __device__ __forceinline__ void stage(Acc &acc, float *stage, const tg_problem &p,
                                                 int64_t i0, int64_t j0)
    {
        const int g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
        const batch_item item(p);
#pragma unroll
        for (int mt = 0; mt < kTilesM; ++mt)
#pragma unroll
            for (int j = 0; j < kTilesN; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    acc[mt][j][e] = tc_result(
                        p, item, i0 + warp_m0() + 16 * mt + 2 * g + e / 2,
                        j0 + warp_n0() + 32 * (j / 4) + 8 * t + 4 * (e % 2) + j % 4,
                        acc[mt][j][e]);
        __syncthreads();
#pragma unroll
        for (int mt = 0; mt < kTilesM; ++mt)
#pragma unroll
            for (int r = 0; r < 2; ++r)
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int half = 0; half < 2; ++half) {
                        const int e = 2 * r + half;
                        *reinterpret_cast<float4 *>(
                            &stage[(warp_m0() + 16 * mt + 2 * g + r) * kStagePitch + warp_n0() +
                                   32 * h + 8 * t + 4 * half]) =
                            make_float4(acc[mt][4 * h][e], acc[mt][4 * h + 1][e],
                                        acc[mt][4 * h + 2][e], acc[mt][4 * h + 3][e]);
                    }
    }
};

/* The loaders of a BK-deep tile of each operand and the shared memory (operands or C's stage,
 * the larger). */
template <class PRODUCTS, int BK, bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
struct ShortkShape {
    using LoadA = AsyncTileLoader<kTile, BK, kThreads, A_K_CONTIG, A_VEC, PRODUCTS::kPad>;
    using LoadB = AsyncTileLoader<kTile, BK, kThreads, !B_N_CONTIG, B_VEC, PRODUCTS::kPad>;
    static constexpr int kOperandFloats = LoadA::kTileFloats + LoadB::kTileFloats;
    static constexpr int kStageFloats = kTile * kStagePitch;
    static constexpr int kSharedFloats =
        kOperandFloats > kStageFloats ? kOperandFloats : kStageFloats;
    static_assert(BK <= kShortChunk && BK % 8 == 0, "a chunk of k fits one tile");
};

/* A block a tile: k in BK-deep chunks, each loaded whole in one cp.async group (zero-filled past
 * k), waited for, and multiplied; then C through shared memory by whole rows.  The stage reuses
 * the operands' space.  CHUNKED (k > 64): more than one chunk, the loaders made anew for each
 * from the chunk's first k, so that none of their registers lives across the products; else
 * one.  At 80 registers, loaders kept across the products cost 40 to 64 bytes of stack and 5%
 * to 20% of the speed at k <= 64 (H100, 27182x26882x25 and 16384x16384x16), and past 64, kept
 * across the chunks, 56 to 72 bytes of spills and 0.88-0.99 of the speed (H200,
 * bench/results/shortk/chunk-loaders/). */
template <class PRODUCTS, int BK, bool CHUNKED, bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG,
          bool B_VEC>
__global__ void __launch_bounds__(kThreads, PRODUCTS::kBlocksPerSm) sgemm_shortk(const tg_problem p)
{
    using S = ShortkShape<PRODUCTS, BK, A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>;
    using LoadA = typename S::LoadA;
    using LoadB = typename S::LoadB;

    extern __shared__ __align__(16) float smem[];
    float *const As = smem, *const Bs = smem + LoadA::kTileFloats; /* [BK][pitch] each */
    const int tid = threadIdx.x;
    const int64_t i0 = blockIdx.y * (int64_t)kTile, j0 = blockIdx.x * (int64_t)kTile;
    typename PRODUCTS::Acc acc = {};
    if constexpr (CHUNKED) {
#pragma unroll 1
        for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
            if (k0 > 0)
                __syncthreads(); /* the previous chunk's products are done with the tiles */
            {
                const int t = unhoisted_thread_index();
                const batch_item item(p);
                LoadA load_a(item.A + i0 * p.a_rs + k0 * p.a_cs, p.a_rs, p.a_cs, p.m - i0, t);
                LoadB load_b(item.B + j0 * p.b_cs + k0 * p.b_rs, p.b_cs, p.b_rs, p.n - j0, t);
                load_a.load(As, p.a_rs, p.a_cs, p.k - k0); /* the chunk, zeros past k */
                load_b.load(Bs, p.b_cs, p.b_rs, p.k - k0);
                async_commit();
            }
            async_wait<0>();
            __syncthreads();
            PRODUCTS::template run<LoadA::kPitch, LoadB::kPitch>(
                acc, As, Bs, (int)(p.k - k0 < BK ? p.k - k0 : BK));
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
        PRODUCTS::template run<LoadA::kPitch, LoadB::kPitch>(acc, As, Bs, (int)p.k);
    }
    PRODUCTS::stage(acc, smem, p, i0, j0);
    store_stage_rows(smem, p, i0, j0);
}

/* The launch of each layout's instantiation, for launch_for_copies (tile_loader.cuh): a block
 * per tile of C and batch item on a 2-D grid. */
template <class PRODUCTS, int BK, bool CHUNKED>
struct ShortkLaunch {
    template <bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
    static int run(const tg_problem *p, cudaStream_t stream)
    {
        using S = ShortkShape<PRODUCTS, BK, A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>;
        constexpr auto kernel =
            sgemm_shortk<PRODUCTS, BK, CHUNKED, A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>;
        const size_t smem = S::kSharedFloats * sizeof(float);
        const cudaError_t e = opt_in_shared_memory<kernel>(smem);
        if (e != cudaSuccess)
            return (int)e;
        const dim3 grid(ceil_div(p->n, kTile), ceil_div(p->m, kTile), (unsigned)p->batch);
        kernel<<<grid, dim3(kThreads), smem, stream>>>(*p);
        return (int)cudaGetLastError();
    }
};

/* The tile's depth follows k: 32 for k <= 32 (half the copies, zero-fills included), else 64,
 * in chunks past 64. */
template <class PRODUCTS>
int launch_shortk(const tg_problem *p, void *stream)
{
    if (p->k > kShortMaxK)
        return (int)cudaErrorInvalidValue; /* shortk_unsupported refuses these */
    if (p->k <= kShortChunk / 2)
        return launch_for_copies<ShortkLaunch<PRODUCTS, kShortChunk / 2, false>>(
            p, (cudaStream_t)stream);
    if (p->k <= kShortChunk)
        return launch_for_copies<ShortkLaunch<PRODUCTS, kShortChunk, false>>(
            p, (cudaStream_t)stream);
    return launch_for_copies<ShortkLaunch<PRODUCTS, kShortChunk, true>>(p, (cudaStream_t)stream);
}

const char *shortk_unsupported(const tg_problem *p)
{
    if (p->k > kShortMaxK)
        return "the short-k rungs are for short k, where writing C is the cost: k must be at "
               "most 256";
    return nullptr;
}

} // namespace

#if TG_IN_UNIT(shortk128)
extern "C" const tg_rung tg_rung_shortk128 = {.name = "shortk128", .level = 7,
    .summary = "k <= 256: a 128x128 block loads k in chunks of 32 or 64, 8x8 a thread at 80 "
               "registers (3 blocks an SM), C through shared memory by whole rows",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_shortk<FfmaProducts>, .unsupported = shortk_unsupported,
    .phases = TG_PHASES_STORES_AFTER};
#endif

#if TG_IN_UNIT(shortk128tf32)
extern "C" const tg_rung tg_rung_shortk128tf32 = {.name = "shortk128tf32", .level = 7,
    .summary = "TF32 mode, k <= 256: shortk128's blocks with TF32 tensor-core products "
               "(mma.sync m16n8k8, a 32x64 warp tile)",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_TF32,
    .min_cc = 80, .launch = launch_shortk<Tf32Products>, .unsupported = shortk_unsupported,
    .phases = TG_PHASES_STORES_AFTER};
#endif
