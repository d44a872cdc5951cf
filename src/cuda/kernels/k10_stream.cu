/*
 * Rung 10: thin products streamed at memory speed.  When one side of C is short (at most 8,
 * 16, 32 or 64: "stream8" .. "stream64"), the product is bound by reading the long operand
 * once, and every kernel below this rung loses bandwidth on it: the FFMA tiles transpose a
 * row-major operand into shared memory by 4-byte copies, pad the short side to 128 or 256, and
 * read the short operand as often as the long one.
 *
 * What it adds over rung 5 (skinny):
 *   - the problem is turned so the short side is n' (C^T = op(B)^T op(A)^T when m is short);
 *     L = op(A') (m' x k) is the long operand, S = op(B') (k x n', n' <= NS) the short one;
 *   - L is copied into shared memory in its own orientation by 16-byte cp.async (rows of k when
 *     L is contiguous along k, runs of rows when it is contiguous along m'), STAGES deep, so
 *     every byte of L crosses DRAM once, coalesced, with 3 x 36 KiB a block in flight;
 *   - each thread owns TM whole rows of C' (all NS columns), so a value of S read from shared
 *     memory is a broadcast to the warp and serves 32 * TM rows: shared-memory traffic is
 *     about the size of L, not NS / TN times it as in a tile kernel;
 *   - k is cut by the planner's split-K (a batch of k-slices, summed in a fixed order by the
 *     backend's reduction kernel), which fills the SMs when m' / BM is a few tiles.
 * block tile   BM = THREADS * TM rows of L (256) x all NS columns x BK = 32 of k
 * thread tile  TM (2) rows x NS columns; per 4 k: TM loads of L (LDS.128 or LDS.64) and
 *              NS broadcast LDS.128 of S, for 4 * TM * NS FFMA
 * stages       4: the copies of phase t + 3 overlap phase t
 * shared       STAGES x (L tile 256 x (32 + 4) or 32 x 256, S tile 32 x NS): 160 to 176 KiB,
 *              one block of 4 warps an SM
 * Edges: loads past m', n' or k are zero-filled (both operands, so 0 * Inf never enters a kept
 * sum); stores are guarded; beta == 0 never reads C.  Offsets are 64-bit.
 * Constraints: min(m, n) <= NS; any k, strides, transposes and alignment (4-byte copies where
 *              16-byte ones are not legal).
 * Benchmark:   tilegemm bench --algo stream32,skinny32x32,skinny128x32 23375x27x8584
 *              100000x32x512 27x23375x8584 --trans NN,TN
 * Measured:    (see bench/results/; not yet measured on a GPU)
 */
#include <stdint.h>

#include "async_copy.cuh"
#include "common.cuh"

namespace {

constexpr int kStreamThreads = 128, kStreamRowsPerThread = 2;
constexpr int kStreamBM = kStreamThreads * kStreamRowsPerThread;
constexpr int kStreamBK = 32, kStreamStages = 4;

/* The problem turned so that m is the long side and n <= NS; C(i, j) is C[i * c_rs + j * c_cs]. */
struct StreamProblem {
    tg_problem p;
    int64_t c_rs, c_cs;
};

/* Shared layout of one stage.  L along k: Ls[BM][BK + 4] (rows of k; the pad of 4 puts a
 * quarter warp's 16-byte reads of 8 rows in 32 banks); L along m': Ls[BK][BM].  S: Ss[BK][NS]. */
template <int NS, bool L_K>
struct StreamTile {
    static constexpr int kLPitch = L_K ? kStreamBK + 4 : kStreamBM;
    static constexpr int kLFloats = L_K ? kStreamBM * kLPitch : kStreamBK * kLPitch;
    static constexpr int kSFloats = kStreamBK * NS;
    static constexpr int kFloats = kLFloats + kSFloats;
    static constexpr size_t kBytes = (size_t)kStreamStages * kFloats * sizeof(float);
};

/*
 * Issues one stage's copies of L (BM x BK from row row0, k k0) and of S (BK x NS) and commits
 * them as one group.  rows_left, k_left, n: what is inside the matrix from there on.  Copies
 * are spread over the threads with consecutive threads on consecutive addresses.
 */
template <int NS, bool L_K, bool L_VEC, bool S_VEC>
__device__ __forceinline__ void stream_load_stage(float *Ls, float *Ss, const float *L,
                                                  const float *S, const tg_problem &p,
                                                  int64_t rows_left, int64_t k_left)
{
    const int tid = threadIdx.x;
    /* L: along k by 16-byte runs of k (L_VEC), along m' by 16-byte runs of rows, or 4 bytes */
    constexpr int kWidth = L_VEC ? 4 : 1;
    constexpr int kRunsPerLine = (L_K ? kStreamBK : kStreamBM) / kWidth; /* a row, or a k */
    constexpr int kLCopies = kStreamBM * kStreamBK / kWidth / kStreamThreads;
    static_assert(kStreamBM * kStreamBK % (kWidth * kStreamThreads) == 0,
                  "the threads must split the L tile evenly");
#pragma unroll 4
    for (int e = 0; e < kLCopies; ++e) {
        const int c = tid + e * kStreamThreads;
        const int line = c / kRunsPerLine, run = c % kRunsPerLine * kWidth;
        const int row = L_K ? line : run, q = L_K ? run : line;
        const float *src = L + row * p.a_rs + q * p.a_cs;
        float *dst = Ls + line * StreamTile<NS, L_K>::kLPitch + run;
        if (L_VEC) {
            const int64_t along = L_K ? k_left - q : rows_left - row; /* floats inside */
            const bool other_in = L_K ? row < rows_left : q < k_left;
            const int in = other_in && along > 0 ? (along < 4 ? (int)along : 4) : 0;
            copy_async_16_zfill_partial(dst, in > 0 ? src : L, in);
        } else {
            const bool in = row < rows_left && q < k_left;
            copy_async_4_zfill(dst, in ? src : L, in);
        }
    }
    /* S: BK x NS, 16-byte runs along n' where legal, else 4 bytes with threads along k */
    constexpr int kSWidth = S_VEC ? 4 : 1;
    constexpr int kSCopies = (kStreamBK * NS / kSWidth + kStreamThreads - 1) / kStreamThreads;
    /* not unrolled: NS x TM accumulators leave few registers for 64-bit addresses */
#pragma unroll 1
    for (int e = 0; e < kSCopies; ++e) {
        const int c = tid + e * kStreamThreads;
        if (c * kSWidth >= kStreamBK * NS)
            break;
        const int q = S_VEC ? c / (NS / 4) : c % kStreamBK;
        const int j = S_VEC ? c % (NS / 4) * 4 : c / kStreamBK;
        const float *src = S + q * p.b_rs + j * p.b_cs;
        float *dst = Ss + q * NS + j;
        if (S_VEC) {
            const int64_t along = p.n - j;
            const int in = q < k_left && along > 0 ? (along < 4 ? (int)along : 4) : 0;
            copy_async_16_zfill_partial(dst, in > 0 ? src : S, in);
        } else {
            const bool in = q < k_left && j < p.n;
            copy_async_4_zfill(dst, in ? src : S, in);
        }
    }
    async_commit();
}

/*
 * L_K: L is contiguous along k (a_cs == 1), else along m' (a_rs == 1) or general strides.
 * L_VEC / S_VEC: 16-byte copies are legal for L (along its contiguous direction) / for S
 * (along n').
 */
template <int NS, bool L_K, bool L_VEC, bool S_VEC>
__global__ void __launch_bounds__(kStreamThreads, 1) sgemm_stream(const StreamProblem g)
{
    using Tile = StreamTile<NS, L_K>;
    constexpr int TM = kStreamRowsPerThread;
    static_assert(NS % 4 == 0, "S is read by 16-byte broadcasts along n'");
    static_assert(kStreamBK % 4 == 0 && kStreamStages >= 2, "k runs in groups of 4, 2+ stages");
    extern __shared__ __align__(16) float smem[];
    const tg_problem &p = g.p;
    const batch_item item(p);
    const int tid = threadIdx.x;
    const int64_t row0 = blockIdx.x * (int64_t)kStreamBM;
    const int64_t rows_left = p.m - row0;
    const float *L = item.A + row0 * p.a_rs;
    const float *S = item.B;
    const int64_t l_step = kStreamBK * p.a_cs, s_step = kStreamBK * p.b_rs;

    /* This thread's rows of the tile: tid + i * THREADS along k (a quarter warp's 16-byte reads
     * fall in 32 banks), tid * TM + i along m' (one 8-byte read of TM adjacent rows). */
    auto tile_row = [&](int i) { return L_K ? tid + i * kStreamThreads : tid * TM + i; };

    const int phases = (int)((p.k + kStreamBK - 1) / kStreamBK);
#pragma unroll
    for (int s = 0; s < kStreamStages - 1; ++s) {
        if (s < phases)
            stream_load_stage<NS, L_K, L_VEC, S_VEC>(smem + s * Tile::kFloats,
                                                     smem + s * Tile::kFloats + Tile::kLFloats,
                                                     L + s * l_step, S + s * s_step, p,
                                                     rows_left, p.k - s * kStreamBK);
        else
            async_commit(); /* empty, so that group g is always phase g */
    }

    float acc[TM][NS] = {};
    for (int t = 0; t < phases; ++t) {
        /* phase t has landed; after the barrier everyone is done with phase t - 1's buffer */
        async_wait<kStreamStages - 2>();
        __syncthreads();
        const int next = t + kStreamStages - 1;
        float *const refill = smem + next % kStreamStages * Tile::kFloats;
        if (next < phases)
            stream_load_stage<NS, L_K, L_VEC, S_VEC>(refill, refill + Tile::kLFloats,
                                                     L + next * l_step, S + next * s_step, p,
                                                     rows_left, p.k - (int64_t)next * kStreamBK);
        else
            async_commit();

        const float *const Ls = smem + t % kStreamStages * Tile::kFloats;
        const float *const Ss = Ls + Tile::kLFloats;
#pragma unroll 2
        for (int q0 = 0; q0 < kStreamBK; q0 += 4) {
            float l[TM][4]; /* rows i, k q0 .. q0 + 3 */
            if (L_K) {
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const float4 v = *reinterpret_cast<const float4 *>(
                        Ls + tile_row(i) * Tile::kLPitch + q0);
                    l[i][0] = v.x, l[i][1] = v.y, l[i][2] = v.z, l[i][3] = v.w;
                }
            } else {
                static_assert(TM == 2, "along m', a thread reads its 2 adjacent rows at once");
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const float2 v = *reinterpret_cast<const float2 *>(
                        Ls + (q0 + e) * Tile::kLPitch + tile_row(0));
                    l[0][e] = v.x, l[1][e] = v.y;
                }
            }
#pragma unroll
            for (int e = 0; e < 4; ++e)
#pragma unroll
                for (int j = 0; j < NS; j += 4) {
                    const float4 s = *reinterpret_cast<const float4 *>(Ss + (q0 + e) * NS + j);
#pragma unroll
                    for (int i = 0; i < TM; ++i) {
                        acc[i][j + 0] += l[i][e] * s.x;
                        acc[i][j + 1] += l[i][e] * s.y;
                        acc[i][j + 2] += l[i][e] * s.z;
                        acc[i][j + 3] += l[i][e] * s.w;
                    }
                }
        }
    }
    async_wait<0>(); /* only empty groups can be left; drain them before the block exits */

    float *const C = item.C;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int64_t row = row0 + tile_row(i);
        if (row >= p.m)
            continue;
#pragma unroll
        for (int j = 0; j < NS; ++j)
            if (j < p.n)
                store_result(C + row * g.c_rs + j * g.c_cs, acc[i][j], p.alpha, p.beta);
    }
}

template <int NS, bool L_K, bool L_VEC, bool S_VEC>
int launch_stream_instance(const StreamProblem &g, cudaStream_t stream)
{
    constexpr auto kernel = sgemm_stream<NS, L_K, L_VEC, S_VEC>;
    constexpr size_t smem = StreamTile<NS, L_K>::kBytes;
    const cudaError_t e = opt_in_shared_memory<kernel>(smem);
    if (e != cudaSuccess)
        return (int)e;
    const dim3 grid(ceil_div(g.p.m, kStreamBM), 1, (unsigned)g.p.batch);
    kernel<<<grid, dim3(kStreamThreads), smem, stream>>>(g);
    return (int)cudaGetLastError();
}

template <int NS, bool L_K, bool L_VEC>
int launch_stream_s(const StreamProblem &g, cudaStream_t stream)
{
    const tg_problem &q = g.p;
    return vectors_allowed(q.B, q.b_cs, q.b_rs, q.stride_b)
               ? launch_stream_instance<NS, L_K, L_VEC, true>(g, stream)
               : launch_stream_instance<NS, L_K, L_VEC, false>(g, stream);
}

/* Turns the problem so that n <= NS (C^T = op(B)^T op(A)^T where m is the short side), then
 * picks the copies for how L and S sit in memory. */
template <int NS>
int launch_stream(const tg_problem *p, void *stream_)
{
    const cudaStream_t stream = (cudaStream_t)stream_;
    StreamProblem g{*p, p->ldc, 1};
    if (p->n > NS) {
        tg_problem &q = g.p;
        q.m = p->n, q.n = p->m;
        q.A = p->B, q.a_rs = p->b_cs, q.a_cs = p->b_rs, q.stride_a = p->stride_b;
        q.B = p->A, q.b_rs = p->a_cs, q.b_cs = p->a_rs, q.stride_b = p->stride_a;
        g.c_rs = 1, g.c_cs = p->ldc;
    }
    const tg_problem &q = g.p;
    if (q.a_cs == 1)
        return vectors_allowed(q.A, q.a_cs, q.a_rs, q.stride_a)
                   ? launch_stream_s<NS, true, true>(g, stream)
                   : launch_stream_s<NS, true, false>(g, stream);
    return vectors_allowed(q.A, q.a_rs, q.a_cs, q.stride_a)
               ? launch_stream_s<NS, false, true>(g, stream)
               : launch_stream_s<NS, false, false>(g, stream);
}

template <int NS>
const char *stream_unsupported(const tg_problem *p)
{
    static const char reason[] = "the stream rungs keep a row's outputs in registers: m or n "
                                 "must be at most the rung's width (8, 16, 32 or 64)";
    return p->m > NS && p->n > NS ? reason : nullptr;
}

} // namespace

/* block_rows = block_cols = BM: the short side (<= NS) is one tile either way round, so the
 * planner counts ceil(long side / BM) tiles whichever side is long. */
#define TG_STREAM_RUNG(NS)                                                                        \
    extern "C" const tg_rung tg_rung_stream##NS = {.name = "stream" #NS, .level = 10,            \
        .summary = "min(m, n) <= " #NS ": the long operand streamed by 16-byte cp.async, 4 "     \
                   "stages, 2 rows x " #NS " outputs a thread, the short one broadcast from "   \
                   "shared memory",                                                              \
        .block_rows = kStreamBM, .block_cols = kStreamBM, .in_auto = 1,                          \
        .arith = TG_ARITH_FFMA, .launch = launch_stream<NS>,                                      \
        .unsupported = stream_unsupported<NS>};

#if TG_IN_UNIT(stream8)
TG_STREAM_RUNG(8)
#endif
#if TG_IN_UNIT(stream16)
TG_STREAM_RUNG(16)
#endif
#if TG_IN_UNIT(stream32)
TG_STREAM_RUNG(32)
#endif
#if TG_IN_UNIT(stream64)
TG_STREAM_RUNG(64)
#endif
#undef TG_STREAM_RUNG
