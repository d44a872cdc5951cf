/*
 * Rung 2: 2D register blocking with vectorized loads.
 *   sgemm_blocktile_128x128x8_t8x8 ("blocktile128"), sgemm_blocktile_64x64x8_t8x4 ("blocktile64")
 *
 * What it adds over the tiled rungs: each thread computes a TM x TN tile of outputs held in
 * registers.  Per k step it reads TM floats of op(A) and TN floats of op(B) from shared memory
 * and does TM * TN FMAs with them, so arithmetic intensity per shared load goes from 1 FMA per
 * 2 loads (tiled) to TM*TN FMAs per (TM+TN) loads: 64 per 16 for 8x8.  Global memory is read
 * in 16-byte vectors (LDG.128) and the fragments in shared memory by LDS.128.
 *   block tile   BM x BN outputs, BK deep per phase: 128x128x8 (256 threads) or 64x64x8 (128)
 *   thread tile  TM x TN = 8x8 or 8x4, split into 4x4 pieces strided across the block tile
 *                (rows ty*4 + {0..3} and BM/2 + ty*4 + {0..3}), so the eight threads of each
 *                LDS.128 phase read 128 consecutive bytes: no bank conflicts
 *   shared       As[BK][BM + pad] k-major (op(A) transposed on the way in) and Bs[BK][BN + pad];
 *                pad = 4 floats for an operand that is contiguous along k, whose 4 values of a
 *                vector are scattered over 4 rows of the tile: it spreads those stores over
 *                all 32 banks.  128x128x8: 8 to 8.25 KiB; 64x64x8: 4 to 4.25 KiB
 *   stages       1: a barrier after the loads, another before the next phase overwrites them
 * Layouts: the launcher instantiates the kernel for how op(A) and op(B) sit in memory
 * (op(A) contiguous along k or along m, op(B) along n or along k) and for whether 16-byte
 * vectors are legal (both operands: the pointer 16-byte aligned, the stride between the
 * contiguous lines and the batch stride multiples of 4 floats).  Every transpose runs inside
 * the kernel, with no copies; misaligned pointers and odd leading dimensions take the scalar
 * instantiation, which is slower but still correct.
 * Edges: where vectors are legal, a phase whose tile lies wholly inside op(A) (or op(B)) loads
 * it by vectors; any other phase loads element by element with the tiled rung's rule (outside
 * the matrix writes 0.0f), from the same addresses into the same shared slots.
 * C is stored by 16-byte vectors where C's pointer and ldc allow and all 4 columns are inside,
 * else element by element; beta == 0 never reads C.
 * Constraints: none (any m, n, k, strides and alignment).
 * Benchmark:   tilegemm bench --algo blocktile128 4096x4096x4096
 * Measured:    blocktile64 29.9 TFLOP/s (0.57x cuBLAS) at 16384x16384x16384, 31.3 TFLOP/s (0.60x cuBLAS) at 8192x8192x8192, 30.5 TFLOP/s (0.69x cuBLAS) at 4097x4097x4097, 30.7 TFLOP/s (0.59x cuBLAS) at 4096x4096x4096; blocktile128 33.0 TFLOP/s (0.63x cuBLAS) at 16384x16384x16384, 34.8 TFLOP/s (0.67x cuBLAS) at 8192x8192x8192, 27.2 TFLOP/s (0.62x cuBLAS) at 4097x4097x4097, 36.1 TFLOP/s (0.70x cuBLAS) at 4096x4096x4096 on NVIDIA H100 80GB HBM3, commit 81d70e4 (bench/results/nvidia-h100-80gb-hbm3-2026-11-23-81d70e4.json)
 */
#include <stdint.h>

#include "common.cuh"

namespace {

/*
 * Moves one operand's BK-deep tile into a k-major shared tile S[BK][ROWS + kPad], a phase at a
 * time.  "Outer" is the operand's other index: m for op(A), n for op(B).  K_CONTIG says the
 * operand is read as contiguous along k (op(A) row-major, op(B) column-major); otherwise along
 * the outer index.  Each thread moves kVecs runs of 4 floats along the contiguous direction:
 * by one 16-byte load where the phase's tile is wholly inside the matrix and vectors are legal,
 * else element by element with 0.0f outside the matrix.  Both ways read the same addresses and
 * write the same shared slots, so the thread keeps one pointer per run for both.
 */
template <int ROWS, int BK, int THREADS, bool K_CONTIG>
struct TileLoader {
    static constexpr int kPad = K_CONTIG ? 4 : 0;
    static constexpr int kPitch = ROWS + kPad;
    static constexpr int kVecs = ROWS * BK / (THREADS * 4);
    static_assert(ROWS * BK % (THREADS * 4) == 0,
                  "the threads must split a tile evenly into runs of 4 floats (ROWS * BK must "
                  "be a multiple of 4 * threads)");
    static_assert(BK % 4 == 0 && ROWS % 4 == 0,
                  "runs of 4 floats must tile the tile's rows and its depth");
    static_assert(kPitch % 4 == 0, "shared rows must stay 16-byte aligned for LDS.128");

    const float *src[kVecs]; /* run l's first float in the current phase */
    int outer[kVecs], depth[kVecs]; /* and where it sits in the tile */

    /* first: the operand's element (outer0, 0); os, ks: its strides along outer and along k */
    __device__ __forceinline__ TileLoader(const float *first, int64_t os, int64_t ks, int tid)
    {
#pragma unroll
        for (int l = 0; l < kVecs; ++l) {
            const int v = tid + l * THREADS;
            /* consecutive threads take consecutive runs along the contiguous direction, so a
             * warp's loads coalesce */
            outer[l] = K_CONTIG ? v / (BK / 4) : v % (ROWS / 4) * 4;
            depth[l] = K_CONTIG ? v % (BK / 4) * 4 : v / (ROWS / 4);
            src[l] = first + outer[l] * os + depth[l] * ks;
        }
    }

    /* Loads this phase's tile into S and steps to the next phase.  vectors: the tile is wholly
     * inside the matrix and 16-byte loads are legal; outer_left, k_left: how much of the
     * matrix is left from the tile's first element on. */
    __device__ __forceinline__ void load(float *S, bool vectors, int64_t os, int64_t ks,
                                         int64_t outer_left, int64_t k_left)
    {
#pragma unroll
        for (int l = 0; l < kVecs; ++l) {
            float4 x;
            if (vectors) {
                x = *reinterpret_cast<const float4 *>(src[l]);
            } else {
                const int64_t step = K_CONTIG ? ks : os; /* between the run's floats */
                const int o = outer[l], kk = depth[l];
                x.x = in(o, kk, 0, outer_left, k_left) ? src[l][0] : 0.0f;
                x.y = in(o, kk, 1, outer_left, k_left) ? src[l][step] : 0.0f;
                x.z = in(o, kk, 2, outer_left, k_left) ? src[l][2 * step] : 0.0f;
                x.w = in(o, kk, 3, outer_left, k_left) ? src[l][3 * step] : 0.0f;
            }
            float *dst = &S[depth[l] * kPitch + outer[l]];
            if (K_CONTIG) { /* a run along k lands in one column of 4 rows of S */
                dst[0 * kPitch] = x.x;
                dst[1 * kPitch] = x.y;
                dst[2 * kPitch] = x.z;
                dst[3 * kPitch] = x.w;
            } else { /* a run along outer is 4 consecutive floats of one row: STS.128 */
                *reinterpret_cast<float4 *>(dst) = x;
            }
            src[l] += BK * ks;
        }
    }

  private:
    /* Whether float c of the run starting at (o, kk) is inside the matrix. */
    static __device__ __forceinline__ bool in(int o, int kk, int c, int64_t outer_left,
                                              int64_t k_left)
    {
        return K_CONTIG ? o < outer_left && kk + c < k_left : o + c < outer_left && kk < k_left;
    }
};

/*
 * A_K_CONTIG: op(A) is read as contiguous along k (a_cs == 1), else along m (a_rs == 1, or
 * general strides on the scalar path).  B_N_CONTIG: op(B) contiguous along n (b_cs == 1), else
 * along k.  VEC: both operands may be read by 16-byte vectors.
 */
template <int BM, int BN, int BK, int TM, int TN, bool A_K_CONTIG, bool B_N_CONTIG, bool VEC>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), kMinBlocks<(BM / TM) * (BN / TN)>)
    sgemm_blocktile(const tg_problem p)
{
    constexpr int kThreadsX = BN / TN; /* threads along n */
    constexpr int kThreadsY = BM / TM; /* threads along m */
    constexpr int kThreads = kThreadsX * kThreadsY;
    static_assert(BM % TM == 0 && BN % TN == 0, "the thread tile must divide the block tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0,
                  "thread tile sides must be multiples of 4: fragments are read as float4");
    static_assert(kThreads % 32 == 0 && kThreads <= 1024,
                  "the block must be whole warps and at most 1024 threads");
    using LoadA = TileLoader<BM, BK, kThreads, A_K_CONTIG>;
    using LoadB = TileLoader<BN, BK, kThreads, !B_N_CONTIG>;
    __shared__ __align__(16) float As[BK * LoadA::kPitch]; /* As[k][i]: op(A) transposed */
    __shared__ __align__(16) float Bs[BK * LoadB::kPitch]; /* Bs[k][j] */

    const int tid = threadIdx.x;
    const int tx = tid % kThreadsX, ty = tid / kThreadsX;
    const int64_t i0 = blockIdx.y * (int64_t)BM, j0 = blockIdx.x * (int64_t)BN;
    const batch_item item(p);
    LoadA load_a(item.A + i0 * p.a_rs, p.a_rs, p.a_cs, tid); /* from op(A)(i0, 0) */
    LoadB load_b(item.B + j0 * p.b_cs, p.b_cs, p.b_rs, tid); /* from op(B)(0, j0) */
    const bool a_rows_inside = i0 + BM <= p.m, b_cols_inside = j0 + BN <= p.n;

    float acc[TM][TN] = {};
    for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
        const int64_t k_left = p.k - k0;
        load_a.load(As, VEC && a_rows_inside && k_left >= BK, p.a_rs, p.a_cs, p.m - i0, k_left);
        load_b.load(Bs, VEC && b_cols_inside && k_left >= BK, p.b_cs, p.b_rs, p.n - j0, k_left);
        __syncthreads(); /* the tiles are complete */

#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float af[TM], bf[TN];
#pragma unroll
            for (int g = 0; g < TM / 4; ++g) {
                const float4 v = *reinterpret_cast<const float4 *>(
                    &As[kk * LoadA::kPitch + g * 4 * kThreadsY + ty * 4]);
                af[g * 4 + 0] = v.x, af[g * 4 + 1] = v.y, af[g * 4 + 2] = v.z, af[g * 4 + 3] = v.w;
            }
#pragma unroll
            for (int g = 0; g < TN / 4; ++g) {
                const float4 v = *reinterpret_cast<const float4 *>(
                    &Bs[kk * LoadB::kPitch + g * 4 * kThreadsX + tx * 4]);
                bf[g * 4 + 0] = v.x, bf[g * 4 + 1] = v.y, bf[g * 4 + 2] = v.z, bf[g * 4 + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += af[i] * bf[j];
        }
        __syncthreads(); /* everyone is done reading before the next phase overwrites */
    }

    /* acc[i][j] is C(i0 + row(i), j0 + col(j)), with the 4x4 pieces strided as they were read. */
    const bool c_vec = reinterpret_cast<uintptr_t>(item.C) % 16 == 0 && p.ldc % 4 == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int64_t row = i0 + i / 4 * 4 * kThreadsY + ty * 4 + i % 4;
        if (row >= p.m)
            continue;
        float *c_row = item.C + row * p.ldc;
#pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
            const int64_t col = j0 + g * 4 * kThreadsX + tx * 4;
            store_result_run4(c_row, col, p.n, &acc[i][g * 4], p.alpha, p.beta, c_vec);
        }
    }
}

template <int BM, int BN, int BK, int TM, int TN, bool A_K_CONTIG, bool B_N_CONTIG, bool VEC>
int launch_instance(const tg_problem *p, cudaStream_t stream)
{
    const dim3 block((BM / TM) * (BN / TN));
    const dim3 grid(ceil_div(p->n, BN), ceil_div(p->m, BM), (unsigned)p->batch);
    const auto kernel = sgemm_blocktile<BM, BN, BK, TM, TN, A_K_CONTIG, B_N_CONTIG, VEC>;
    kernel<<<grid, block, 0, stream>>>(*p);
    return (int)cudaGetLastError();
}

template <int BM, int BN, int BK, int TM, int TN, bool A_K_CONTIG, bool B_N_CONTIG>
int launch_layout(const tg_problem *p, cudaStream_t stream, bool vec)
{
    return vec ? launch_instance<BM, BN, BK, TM, TN, A_K_CONTIG, B_N_CONTIG, true>(p, stream)
               : launch_instance<BM, BN, BK, TM, TN, A_K_CONTIG, B_N_CONTIG, false>(p, stream);
}

/* Picks the instantiation for how op(A) and op(B) sit in memory and whether vectors are legal. */
template <int BM, int BN, int BK, int TM, int TN>
int launch_blocktile(const tg_problem *p, void *stream_)
{
    const cudaStream_t stream = (cudaStream_t)stream_;
    const bool a_k = p->a_cs == 1; /* else a_rs == 1, or general strides (scalar loads) */
    const bool b_n = p->b_cs == 1; /* else b_rs == 1, or general strides */
    const bool vec = vectors_allowed(p->A, a_k ? p->a_cs : p->a_rs, a_k ? p->a_rs : p->a_cs,
                                     p->stride_a) &&
                     vectors_allowed(p->B, b_n ? p->b_cs : p->b_rs, b_n ? p->b_rs : p->b_cs,
                                     p->stride_b);
    if (a_k)
        return b_n ? launch_layout<BM, BN, BK, TM, TN, true, true>(p, stream, vec)
                   : launch_layout<BM, BN, BK, TM, TN, true, false>(p, stream, vec);
    return b_n ? launch_layout<BM, BN, BK, TM, TN, false, true>(p, stream, vec)
               : launch_layout<BM, BN, BK, TM, TN, false, false>(p, stream, vec);
}

/* Every tiling constraint is compile-time (the static_asserts above); the scalar instantiation
 * covers any shape, stride and alignment, so no problem is refused. */
const char *blocktile_unsupported(const tg_problem *) { return nullptr; }

} // namespace

extern "C" const tg_rung tg_rung_blocktile64 = {.name = "blocktile64", .level = 2,
    .summary = "64x64x8 block, 8x4 outputs per thread in registers, 128-bit global and shared "
               "loads",
    .block_rows = 64, .block_cols = 64, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_blocktile<64, 64, 8, 8, 4>, .unsupported = blocktile_unsupported};
extern "C" const tg_rung tg_rung_blocktile128 = {.name = "blocktile128", .level = 2,
    .summary = "128x128x8 block, 8x8 outputs per thread in registers, 128-bit global and shared "
               "loads",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_blocktile<128, 128, 8, 8, 8>, .unsupported = blocktile_unsupported};
