/*
 * The INT8 tensor-core product of the Ozaki scheme II rung (k11_ozaki2.cu): a batch of exact
 * integer products C_z = A_z B_z, A_z (m x k) and B_z (k x n, stored n x k) both int8 and
 * K-major, C_z int32 (m x n), on Hopper's pipeline of rung 9 (TMA, mbarriers, a producer
 * warpgroup, consumer warpgroups on wgmma), both operands read by wgmma from shared memory.
 *   s8gemm_tma_wgmma_128x256x128, 4 stages, INT32 accumulators
 *
 * Tiling     block tile 128 x 256 x 128 (k in bytes: one 128-byte swizzled row of each
 *            operand a stage), 2 consumer warpgroups of 64 x 256, each 2 m64n128k32 products
 *            (wgmma_s8.cuh) per 32 of k; 384 threads, the producer warpgroup first.
 *            128 int32 accumulators a consumer thread; setmaxnreg 40 / 232 as rung 9.
 * Shared     4 stages x 48 KiB (A 16 KiB, B 32 KiB) = 192 KiB, plus the barriers.
 * Pipeline   rung 9's: a "full" mbarrier (expect-tx) and an "empty" one (a lane of each of the
 *            8 consumer warps) a stage; a warpgroup hands a stage back once the next tile's
 *            products are issued and its own are done (wgmma_wait<1>).
 * Loads      the operands lie in the workspace as rows of kp bytes (kp a multiple of 16, the
 *            bytes past k zero), and the TMA moves them as FP32 words (kp / 4 a row): it only
 *            copies bytes, and so the tensor maps, boxes and swizzle are rung 9's (tma.cuh).
 *            Boxes past m, n or kp read as zeros.
 * INT32      |a b| <= 2^14 for residues in [-128, 127], so 2^16 of k sum to at most 2^30:
 *            the kernel keeps that contract itself.  Every kChunkTiles tiles (2^16 of k) it
 *            waits for the products and reduces its accumulators modulo the batch item's
 *            modulus (C++'s %, |r| < modulus), then goes on adding: so C_z is the exact product
 *            where k <= 2^16 and a value congruent to it modulo moduli[z] beyond, which is all
 *            the CRT needs.  Modulus 0 (the bound rule's product of nonnegative leading
 *            magnitudes) cuts the sums to 2^30 instead (tg_oz2_lower_cut): a lower bound.
 * Batch      grid.z is the batch item; items at or past *active (device memory: the count the
 *            scheme chose on the device) leave at once, so the host need not wait to learn it.
 * Stores     int32 pairs (8 bytes) where both columns are inside; ldc is a multiple of 2.  Or
 *            (the moduli's products) each sum's residue in [0, m) modulo the item's modulus
 *            m, by a Barrett step, as byte pairs: a quarter of the bytes, all the CRT needs.
 * Registers  168 a thread at entry (__launch_bounds__(384, 1)), no spills, no stack (ptxas -v,
 *            nvcc 13.0); 8 IGMMA.64x128x32.S8.S8 a stage, the next stage's issued before the
 *            previous one's are waited for (WARPGROUP.DEPBAR.LE 1).
 * Measured   (ncu, H100, a9703fe, one panel of 16384^3 uniform data, bench/results/ozaki/):
 *            8.87 ms at an SM clock of 1.61 GHz (the card's own clock under this load; no
 *            clock control); tensor pipe 93% busy, L2 74% of its peak, DRAM 43%, IPC 1.19.
 *            So the product runs at the tensor cores' speed at the clock the card holds, about
 *            1.6 POP/s (the 1979 TOP/s peak is at 1.83 GHz): the L2 is not what bounds it, and
 *            clusters sharing B's tile by TMA multicast (256 operations a byte of L2 instead of
 *            171) would not make it faster.  What is left to gain is fewer products (moduli).
 *            With residues out (ncu, 26a9221): 8 moduli's products 44.3 ms at 16384^3 and 0.85
 *            at 4096^3, against 43.6 and 0.80 with INT32 out (2ca5401): the Barrett step is not
 *            overlapped with a next tile (one tile a block), +1.5% and +7%; the CRT's reads it
 *            saves are worth more (reconstruct 4.8 -> 2.5 ms at 16384^3).
 */
#ifndef TG_KERNELS_INT8_GEMM_CUH
#define TG_KERNELS_INT8_GEMM_CUH

#include <stdint.h>

#include "common.cuh"
#include "tma.cuh"
#include "wgmma_s8.cuh"

#include "../../ozaki/ozaki2.h" /* TG_OZ2_K_CHUNK, TG_OZ2_MAX_MODULI */

namespace int8_gemm {

constexpr int kWarpgroup = 128;
constexpr int kConsumerGroups = 2;
constexpr int kBM = 64 * kConsumerGroups;
constexpr int kBN = 256;
constexpr int kBK = 128; /* bytes of k a stage: one swizzled row */
constexpr int kStages = 4;
constexpr int kThreads = kWarpgroup * (1 + kConsumerGroups);
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
constexpr int kStageBytes = (kBM + kBN) * kBK;
constexpr size_t kSmem = kStages * kStageBytes + 2 * kStages * sizeof(uint64_t) + 1024;
static_assert(kSmem <= 227 * 1024, "the stages must fit the H100's 227 KiB a block");
static_assert(kBN % 128 == 0, "a warpgroup covers 64 x 128 per product");

/* Tiles between reductions of the accumulators; the emulated tests build with a smaller
 * chunk so that short sums cross it. */
#ifndef TG_INT8_K_CHUNK
#define TG_INT8_K_CHUNK TG_OZ2_K_CHUNK
#endif
constexpr int kChunkTiles = TG_INT8_K_CHUNK / kBK;
static_assert(TG_INT8_K_CHUNK % kBK == 0 && kChunkTiles >= 1 && TG_INT8_K_CHUNK <= TG_OZ2_K_CHUNK,
              "the chunk is whole tiles, at most 2^16 of k (2^16 x 2^14 fits INT32)");

/* What a launch writes: C_z(i, j) at c[z * c_stride + i * ldc + j] as INT32, or, where
 * residues is set, its residue in [0, moduli[z]) as a byte at residues[z * c_stride + i * ldc +
 * j]. */
struct Output {
    int32_t *c;
    uint8_t *residues;
    int64_t ldc, c_stride;
    int m, n;
    int64_t k_tiles;
    const int *active;                 /* batch items to compute (device memory) */
    int moduli[TG_OZ2_MAX_MODULI];     /* item z's modulus, for the reductions */
};

__global__ void __launch_bounds__(kThreads, 1)
    s8gemm_tma_wgmma_128x256x128(const __grid_constant__ CUtensorMap a_map,
                                 const __grid_constant__ CUtensorMap b_map,
                                 const __grid_constant__ Output out)
{
    constexpr int kN128 = kBN / 128;
    extern __shared__ __align__(16) float smem[];
    float *const stages = align_shared_1024(smem); /* each box 1024-byte aligned */
    uint64_t *const full = reinterpret_cast<uint64_t *>(stages + kStages * kStageBytes / 4);
    uint64_t *const empty = full + kStages;
    const int z = (int)blockIdx.z;
    if (z >= *out.active)
        return; /* every thread, before any barrier */

    const int tid = threadIdx.x;
    if (tid == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbarrier_init(&full[s], 1);
            mbarrier_init(&empty[s], kConsumerGroups * 4);
        }
        fence_mbarrier_init();
    }
    __syncthreads();

    const int64_t tiles = out.k_tiles;
    const tile_index tile = grouped_tile<8>(blockIdx.x, (unsigned)((out.m + kBM - 1) / kBM),
                                            (unsigned)((out.n + kBN - 1) / kBN));
    const int i0 = (int)tile.m * kBM, j0 = (int)tile.n * kBN;

    if (tid < kWarpgroup) {
        set_max_registers<kProducerRegisters, false>();
        if (tid != 0)
            return;
        for (int64_t t = 0; t < tiles; ++t) {
            const int s = (int)(t % kStages);
            const unsigned round = (unsigned)(t / kStages);
            mbarrier_wait(&empty[s], (round & 1u) ^ 1u);
            mbarrier_arrive_expect_tx(&full[s], kStageBytes);
            float *const stage = stages + s * (kStageBytes / 4);
            const int k0 = (int)(t * (kBK / 4)); /* in FP32 words */
            tma_load_tile(stage, &a_map, &full[s], k0, i0, z, 0);
            tma_load_tile(stage + kBM * kBK / 4, &b_map, &full[s], k0, j0, z, 0);
        }
        return;
    }

    set_max_registers<kConsumerRegisters, true>();
    const int half = (tid - kWarpgroup) / kWarpgroup;
    const bool releaser = tid % 32 == 0;
    const int w = tid / 32 % 4, g = tid % 32 / 4, lane_t = tid % 4;
    int32_t acc[kN128][64];
#pragma unroll
    for (int h = 0; h < kN128; ++h)
#pragma unroll
        for (int i = 0; i < 64; ++i)
            acc[h][i] = 0;
    const int modulus = out.moduli[z];
    int64_t unreleased = -1;
    for (int64_t t = 0; t < tiles; ++t) {
        const int s = (int)(t % kStages);
        mbarrier_wait(&full[s], (unsigned)(t / kStages) & 1u);
        const float *const stage = stages + s * (kStageBytes / 4);
        const float *const a_rows = stage + half * 64 * kBK / 4; /* this warpgroup's 64 rows */
        const float *const b_rows = stage + kBM * kBK / 4;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBK / 32; ++kk) {
            const uint64_t ad = smem_desc(a_rows, 8 * kk); /* 32 bytes: 8 words */
#pragma unroll
            for (int h = 0; h < kN128; ++h)
                wgmma_64x128x32_s8(acc[h], ad, smem_desc(b_rows + h * 128 * kBK / 4, 8 * kk),
                                   true);
        }
        wgmma_commit();
        const bool reduce = (t + 1) % kChunkTiles == 0 && t + 1 < tiles;
        if (reduce) {
            /* every product so far is done: both stages go back, the sums are reduced */
            wgmma_wait<0>();
#pragma unroll
            for (int h = 0; h < kN128; ++h)
                fence_operand(acc[h]);
            if (releaser) {
                if (unreleased >= 0)
                    mbarrier_arrive(&empty[unreleased % kStages]);
                mbarrier_arrive(&empty[s]);
            }
            unreleased = -1;
            if (modulus != 0) {
#pragma unroll
                for (int h = 0; h < kN128; ++h)
#pragma unroll
                    for (int i = 0; i < 64; ++i)
                        acc[h][i] %= modulus;
            } else { /* the leading magnitudes' product: a lower bound, cut (ozaki2.h) */
#pragma unroll
                for (int h = 0; h < kN128; ++h)
#pragma unroll
                    for (int i = 0; i < 64; ++i)
                        acc[h][i] = tg_oz2_lower_cut(acc[h][i]);
            }
        } else {
            wgmma_wait<1>();
            if (releaser && unreleased >= 0)
                mbarrier_arrive(&empty[unreleased % kStages]);
            unreleased = t;
        }
    }
    wgmma_wait<0>();
#pragma unroll
    for (int h = 0; h < kN128; ++h)
        fence_operand(acc[h]);

    /* acc[h][4j + e] is C(i0 + 64 half + 16 w + g + 8 (e / 2), j0 + 128 h + 8 j + 2 t + e % 2):
     * store(i, col, x, y) for each pair C(i, col) = x, C(i, col + 1) = y inside C (col + 1 may
     * not be) */
    const auto each_pair = [&](auto store) {
#pragma unroll
        for (int h = 0; h < kN128; ++h)
#pragma unroll
            for (int j = 0; j < 16; ++j)
#pragma unroll
                for (int e = 0; e < 4; e += 2) {
                    const int i = i0 + 64 * half + 16 * w + g + 8 * (e / 2);
                    const int col = j0 + 128 * h + 8 * j + 2 * lane_t;
                    if (i < out.m && col < out.n)
                        store(i, col, acc[h][4 * j + e], acc[h][4 * j + e + 1]);
                }
    };
    if (out.residues != nullptr) {
        /* A quarter of the INT32 bytes, and the CRT's reads with them.  Barrett: u = x + m 2^23
         * is x's class in [0, 2^32) (|x| < 2^30 + m), q = floor(u floor(2^32 / m) / 2^32) is
         * floor(u / m) or one less, so u - q m lies in [0, 2 m). */
        const uint32_t magic = (uint32_t)((uint64_t(1) << 32) / (uint32_t)modulus);
        const uint32_t bias = (uint32_t)modulus << 23, mod = (uint32_t)modulus;
        const auto residue = [&](int32_t x) {
            const uint32_t u = (uint32_t)x + bias;
            const uint32_t q = (uint32_t)(((uint64_t)u * magic) >> 32);
            int r = (int)(u - q * mod);
            r -= r >= modulus ? modulus : 0;
            return (uint32_t)r;
        };
        uint8_t *const res = out.residues + z * out.c_stride;
        each_pair([&](int i, int col, int32_t x, int32_t y) {
            uint8_t *const at = res + (int64_t)i * out.ldc + col;
            if (col + 1 < out.n)
                *reinterpret_cast<uint16_t *>(at) = (uint16_t)(residue(x) | residue(y) << 8);
            else
                *at = (uint8_t)residue(x);
        });
        return;
    }
    int32_t *const c = out.c + z * out.c_stride;
    each_pair([&](int i, int col, int32_t x, int32_t y) {
        int32_t *const at = c + (int64_t)i * out.ldc + col;
        if (col + 1 < out.n)
            *reinterpret_cast<int2 *>(at) = make_int2(x, y);
        else
            *at = x;
    });
}

/* The tensor map of `items` operands of rows x kp bytes (kp a multiple of 16), item z at
 * base + z * rows * kp, read as FP32 words in boxes of 32 words x box_rows rows. */
inline cudaError_t residue_map(CUtensorMap *map, const int8_t *base, int64_t rows, int64_t kp,
                               int items, int box_rows)
{
    const uint64_t dims[4] = {(uint64_t)kp / 4, (uint64_t)rows, (uint64_t)items, 1};
    const uint64_t strides[3] = {(uint64_t)kp, (uint64_t)(rows * kp),
                                 (uint64_t)(rows * kp) * (uint64_t)items};
    const uint32_t box[4] = {kBK / 4, (uint32_t)box_rows, 1, 1};
    return encode_tile_map(map, reinterpret_cast<const float *>(base), dims, strides, box);
}

/* The shape limits of a launch, or NULL: the TMA's 32-bit coordinates and the 1-D grid. */
inline const char *unsupported(int64_t m, int64_t n, int64_t kp)
{
    if (m > INT32_MAX - kBM || n > INT32_MAX - kBN || kp / 4 > INT32_MAX - kBK)
        return "m, n or k is too large for the TMA's 32-bit coordinates";
    if ((m + kBM - 1) / kBM * ((n + kBN - 1) / kBN) > INT32_MAX)
        return "the grouped block order puts a launch's tiles on a 1-D grid of at most 2^31 - 1 "
               "blocks: m x n is too large for that";
    return nullptr;
}

/* C_z = A_z B_z for z < *active of `items` (A_z at a + z m kp, B_z at b + z n kp, rows of kp
 * bytes, kp a multiple of 16 and the bytes past k zero), written as `out` says (its c or
 * residues, ldc and c_stride set; ldc even and the base 8-byte aligned).  moduli[z]: the
 * modulus of item z's reductions (where kp > 2^16) and residues. */
inline cudaError_t launch(const int8_t *a, const int8_t *b, Output out, int64_t m, int64_t n,
                          int64_t kp, int items, const int *active, const int *moduli,
                          cudaStream_t stream)
{
    cudaError_t e = opt_in_shared_memory<s8gemm_tma_wgmma_128x256x128>(kSmem);
    if (e != cudaSuccess)
        return e;
    CUtensorMap a_map, b_map;
    if ((e = residue_map(&a_map, a, m, kp, items, kBM)) != cudaSuccess ||
        (e = residue_map(&b_map, b, n, kp, items, kBN)) != cudaSuccess)
        return e;
    out.m = (int)m, out.n = (int)n, out.k_tiles = (kp + kBK - 1) / kBK, out.active = active;
    for (int z = 0; z < items && z < TG_OZ2_MAX_MODULI; ++z)
        out.moduli[z] = moduli[z];
    const dim3 grid(ceil_div(m, kBM) * ceil_div(n, kBN), 1, (unsigned)items);
    s8gemm_tma_wgmma_128x256x128<<<grid, kThreads, kSmem, stream>>>(a_map, b_map, out);
    return cudaGetLastError();
}

/* INT32 products C_z at c + z c_stride. */
inline cudaError_t launch(const int8_t *a, const int8_t *b, int32_t *c, int64_t m, int64_t n,
                          int64_t kp, int items, const int *active, const int *moduli,
                          int64_t ldc, int64_t c_stride, cudaStream_t stream)
{
    Output out{};
    out.c = c, out.ldc = ldc, out.c_stride = c_stride;
    return launch(a, b, out, m, n, kp, items, active, moduli, stream);
}

/* The products' residues in [0, moduli[z]), as bytes at r + z r_stride. */
inline cudaError_t launch_as_residues(const int8_t *a, const int8_t *b, uint8_t *r, int64_t m,
                                      int64_t n, int64_t kp, int items, const int *active,
                                      const int *moduli, int64_t ldr, int64_t r_stride,
                                      cudaStream_t stream)
{
    Output out{};
    out.residues = r, out.ldc = ldr, out.c_stride = r_stride;
    return launch(a, b, out, m, n, kp, items, active, moduli, stream);
}

} // namespace int8_gemm

#endif
