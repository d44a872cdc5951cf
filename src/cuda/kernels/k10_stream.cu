/*
 * Rung 10: thin products streamed at memory speed.  When one side of C is short (at most 8,
 * 16, 32 or 64: "stream8" .. "stream64"), the product is bound by reading the long operand
 * once, and the tile kernels below this rung lose bandwidth on it: they transpose a row-major
 * operand into shared memory by 4-byte copies and pad the short side to a wide tile.
 *
 * What it adds over rung 5 (skinny) and rung 6 (gemv8, n' <= 8 only):
 *   - the problem is turned so the short side is n' (C^T = op(B)^T op(A)^T when m is short);
 *     L = op(A') (m' x k) is the long operand, S = op(B') (k x n', n' <= NS) the short one;
 *   - L is copied into shared memory in its own orientation by 16-byte cp.async (rows of k when
 *     L is contiguous along k, runs of rows when it is contiguous along m'), 4 stages deep, so
 *     every byte of L crosses DRAM once, coalesced, with 2 or 3 stages in flight;
 *   - the block spans all NS columns, so S is read by each block once and L by one block;
 *   - k is cut by the planner's split-K (a batch of k-slices, summed in a fixed order by the
 *     backend's reduction kernel), which fills the SMs when m' / BM is a few tiles.
 * block tile   BM x NS x BK (32 with L along k, 16 along m'), 128 threads as (128 / (NS / TN)) rows x (NS / TN) columns of
 *              thread tiles; BM = 128 / (NS / TN) * TM: 256 (stream8/16/32), 128 (stream64)
 * thread tile  TM x TN (4x4, 4x8, 8x8, 8x8): per 4 k, TM LDS.128 of L (4 k of a row, or 4
 *              rows of a k) and TN LDS.128 of S, for 4 * TM * TN FFMA.  Register delivery from
 *              shared memory (128 B a clock) is what bounds a thread tile: 8x8 gives one FFMA
 *              a byte; 2 rows x NS a thread (a broadcast of S to the warp) gave a quarter of
 *              that and ran at half the speed
 * stages       2 along k, 4 along m', two blocks an SM either way
 * shared       2 x (L BM x (32 + 4), S 32 x NS) or 4 x (L 16 x (BM + 4), S 16 x NS): 74 to
 *              80 KiB along k, 67 to 73 along m' (52 and 49 for stream64's BM of 128)
 * Edges: loads past m', n' or k are zero-filled (both operands, so 0 * Inf never enters a kept
 * sum); stores are guarded; beta == 0 never reads C.  Offsets are 64-bit.
 * Constraints: min(m, n) <= NS; any k, strides, transposes and alignment: an odd leading
 *              dimension still copies L by 16-byte runs, from each line's aligned-down start
 *              (LCopy::kShift); 4-byte copies only where L has no unit stride.
 * Benchmark:   tilegemm bench --algo stream32,skinny64x32 23375x27x8584 200000x16x2048
 *              --trans NN,TN,NT
 * Measured:    H100 (75f21b2, bench/results/*-thin-stream.json; copy rate 2.99 TB/s): n' <= 16
 *              at 2.5-2.8 TB/s (65536x8x4096 2.66 NN / 2.84 TN, 200000x16x2048 2.68 / 2.72,
 *              16970x9x10183 with split-K 2.0), 1.2-2.0x cuBLAS; stream32 at 1.3-2.0 TB/s and
 *              stream64 at 0.5-1.1 (FFMA-bound: 8x8 thread tiles reach about 22 TFLOP/s), where
 *              skinny64x32 and cuBLAS are faster.  The cost model seldom picks them yet: on the
 *              random suite of seed 20261201, auto ran no stream rung.
 */
#include <stdint.h>

#include "async_copy.cuh"
#include "common.cuh"

namespace {

constexpr int kStreamThreads = 128;
/* k a stage and stages: L along k is copied a 128-byte line of a row a stage (16 k left it
 * at 64 bytes of 256 rows, a third slower on the H100), 2 stages so that 2 blocks fit an SM
 * (3 stages and one block ran stream32 40% slower); along m' a stage is 16 k of 1 KiB. */
template <bool L_K>
constexpr int kStreamBK = L_K ? 32 : 16;
template <bool L_K>
constexpr int kStreamStages = L_K ? 2 : 4;

/* The tiling of stream<NS>: thread tiles of TM rows x TN columns, NS / TN of them across. */
template <int NS, int TM>
struct StreamShape {
    static constexpr int kTN = NS <= 8 ? 4 : 8;
    static constexpr int kCols = NS / kTN;                 /* thread tiles across n' */
    static constexpr int kRowGroups = kStreamThreads / kCols; /* thread tiles down m' */
    static constexpr int kBM = kRowGroups * TM;
    static_assert(NS % kTN == 0 && kStreamThreads % kCols == 0 && kTN % 4 == 0 && TM % 4 == 0,
                  "thread tiles must split NS columns, and read S and L by 16-byte runs");
};

/* The problem turned so that m is the long side and n <= NS (common.cuh). */
using StreamProblem = TurnedProblem;

/* Shared layout of one stage.  L along k: Ls[BM][BK + 4] (rows of k; a pitch of 4 mod 8 floats
 * puts a quarter warp's 16-byte reads of different rows in different banks); L along m':
 * Ls[BK][BM + 4].  The 4 extra floats hold a shifted line's extra run (LCopy::kShift).
 * S: Ss[BK][NS]. */
template <int BM, int NS, bool L_K>
struct StreamTile {
    static constexpr int kLPitch = (L_K ? kStreamBK<L_K> : BM) + 4; /* a shifted line's 5th run */
    static constexpr int kLFloats = L_K ? BM * kLPitch : kStreamBK<L_K> * kLPitch;
    static constexpr int kSFloats = kStreamBK<L_K> * NS;
    static constexpr int kFloats = kLFloats + kSFloats;
    static constexpr size_t kBytes = (size_t)kStreamStages<L_K> * kFloats * sizeof(float);
};

/*
 * Issues one stage's copies of L (BM x BK from row 0 of L, k 0 of this phase) and of S (BK x NS)
 * and commits them as one group.  rows_left, k_left: what is inside the matrix from there on.
 * Consecutive threads copy consecutive addresses.
 */
/* How L is copied: 16-byte runs where its lines (rows along k, or k-lines along m') start
 * 16-byte aligned; 16-byte runs from each line's aligned-down start where they do not (an odd
 * leading dimension: most shapes), one run more a line and the line's shift (0 to 3 floats)
 * skipped when it is read; 4-byte copies where L has no unit stride at all. */
enum class LCopy { kVec, kShift, kScalar };

/* A line's shift: how many floats its first float lies past a 16-byte boundary. */
__device__ __forceinline__ int shift_of(const float *line)
{
    return (int)(reinterpret_cast<uintptr_t>(line) >> 2 & 3);
}

template <int BM, int NS, bool L_K, LCopy LC, bool S_VEC>
__device__ __forceinline__ void stream_load_stage(float *Ls, float *Ss, const float *L,
                                                  const float *S, const tg_problem &p,
                                                  int64_t rows_left, int64_t k_left)
{
    using Tile = StreamTile<BM, NS, L_K>;
    constexpr int BK = kStreamBK<L_K>;
    const int tid = threadIdx.x;
    /* L: lines (rows along k, k-lines along m') of runs along the contiguous direction */
    constexpr int kWidth = LC == LCopy::kScalar ? 1 : 4;
    constexpr int kLines = L_K ? BM : BK;
    constexpr int kRunsPerLine = (L_K ? BK : BM) / kWidth + (LC == LCopy::kShift);
    constexpr int kRuns = kLines * kRunsPerLine;
    constexpr int kLCopies = (kRuns + kStreamThreads - 1) / kStreamThreads;
    const int64_t line_stride = L_K ? p.a_rs : p.a_cs, along_stride = L_K ? p.a_cs : p.a_rs;
    const int64_t lines_left = L_K ? rows_left : k_left, along_left = L_K ? k_left : rows_left;
#pragma unroll 4
    for (int e = 0; e < kLCopies; ++e) {
        const int c = tid + e * kStreamThreads;
        if (kRuns % kStreamThreads != 0 && c >= kRuns)
            break;
        const int line = c / kRunsPerLine, run = c % kRunsPerLine * kWidth;
        const float *line_start = L + line * line_stride;
        float *dst = Ls + line * Tile::kLPitch + run;
        if (LC == LCopy::kScalar) {
            const bool in = line < lines_left && run < along_left;
            copy_async_4_zfill(dst, in ? line_start + run * along_stride : L, in);
        } else {
            /* the run's first float along the line (negative: the shift's floats before a
             * line's start, read but never used) and how many from it are inside */
            const int first = run - (LC == LCopy::kShift ? shift_of(line_start) : 0);
            const int64_t along = along_left - first;
            const int in = line < lines_left && along > 0 ? (along < 4 ? (int)along : 4) : 0;
            copy_async_16_zfill_partial(dst, in > 0 ? line_start + first : L, in);
        }
    }
    /* S: BK x NS, 16-byte runs along n' where legal, else 4 bytes with consecutive threads
     * along S's contiguous direction (n' when b_cs == 1), so a warp's copies stay coalesced */
    constexpr int kSWidth = S_VEC ? 4 : 1;
    constexpr int kSCopies = (BK * NS / kSWidth + kStreamThreads - 1) / kStreamThreads;
    const bool s_along_n = S_VEC || p.b_cs == 1;
    /* not unrolled: the accumulators leave few registers for 64-bit addresses */
#pragma unroll 1
    for (int e = 0; e < kSCopies; ++e) {
        const int c = tid + e * kStreamThreads;
        if (c * kSWidth >= BK * NS)
            break;
        const int per_q = NS / kSWidth; /* copies along n' of one k */
        const int q = s_along_n ? c / per_q : c % BK;
        const int j = s_along_n ? c % per_q * kSWidth : c / BK;
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
 * LC: how L is copied (LCopy).  S_VEC: 16-byte copies of S along n' are legal.
 */
template <int NS, int TM, bool L_K, LCopy LC, bool S_VEC>
__global__ void __launch_bounds__(kStreamThreads, 2) sgemm_stream(const StreamProblem g)
{
    using Shape = StreamShape<NS, TM>;
    constexpr int BM = Shape::kBM, TN = Shape::kTN;
    using Tile = StreamTile<BM, NS, L_K>;
    constexpr int BK = kStreamBK<L_K>, STAGES = kStreamStages<L_K>;
    static_assert(BK % 4 == 0 && STAGES >= 2, "k runs in groups of 4, 2+ stages");
    extern __shared__ __align__(16) float smem[];
    const tg_problem &p = g.p;
    const batch_item item(p);
    const int tid = threadIdx.x;
    const int group = tid / Shape::kCols, col0 = tid % Shape::kCols * TN;
    const int64_t row0 = blockIdx.x * (int64_t)BM;
    const int64_t rows_left = p.m - row0;
    const float *L = item.A + row0 * p.a_rs;
    const float *S = item.B;
    const int64_t l_step = BK * p.a_cs, s_step = BK * p.b_rs;

    /* This thread's rows of the tile: group + i * row groups along k (a quarter warp's 16-byte
     * reads fall in different banks), group * TM + i along m' (TM / 4 16-byte reads a k). */
    auto tile_row = [&](int i) { return L_K ? group + i * Shape::kRowGroups : group * TM + i; };

    const int64_t phases = (p.k + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < phases)
            stream_load_stage<BM, NS, L_K, LC, S_VEC>(
                smem + s * Tile::kFloats, smem + s * Tile::kFloats + Tile::kLFloats,
                L + s * l_step, S + s * s_step, p, rows_left, p.k - s * BK);
        else
            async_commit(); /* empty, so that group g is always phase g */
    }

    /* kShift: where each line starts in its shared copy.  A stage moves k (along k) or a
     * k-line (along m') by a multiple of 16 bytes, so a row's shift is the same in every stage,
     * and k-line q's is k_shift + q * lda, mod 4. */
    int row_shift[L_K ? TM : 1] = {};
    int k_shift = 0;
    const int k_shift_step = (int)(p.a_cs & 3);
    if (LC == LCopy::kShift) {
        if (L_K) {
#pragma unroll
            for (int i = 0; i < TM; ++i)
                row_shift[i] = shift_of(L + tile_row(i) * p.a_rs);
        } else {
            k_shift = shift_of(L);
        }
    }

    float acc[TM][TN] = {};
    for (int64_t t = 0; t < phases; ++t) {
        /* phase t has landed; after the barrier everyone is done with phase t - 1's buffer */
        async_wait<STAGES - 2>();
        __syncthreads();
        const int64_t next = t + STAGES - 1;
        float *const refill = smem + next % STAGES * Tile::kFloats;
        if (next < phases)
            stream_load_stage<BM, NS, L_K, LC, S_VEC>(
                refill, refill + Tile::kLFloats, L + next * l_step, S + next * s_step, p,
                rows_left, p.k - next * BK);
        else
            async_commit();

        const float *const Ls = smem + t % STAGES * Tile::kFloats;
        const float *const Ss = Ls + Tile::kLFloats + col0;
#pragma unroll
        for (int q0 = 0; q0 < BK; q0 += 4) {
            float l[TM][4]; /* rows i, k q0 .. q0 + 3 */
            if (LC == LCopy::kShift) { /* 4-byte reads, each line past its shift */
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        l[i][e] = L_K ? Ls[tile_row(i) * Tile::kLPitch + row_shift[i] + q0 + e]
                                      : Ls[(q0 + e) * Tile::kLPitch +
                                           ((k_shift + (q0 + e) * k_shift_step) & 3) +
                                           tile_row(i)];
            } else if (L_K) {
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const float4 v = *reinterpret_cast<const float4 *>(
                        Ls + tile_row(i) * Tile::kLPitch + q0);
                    l[i][0] = v.x, l[i][1] = v.y, l[i][2] = v.z, l[i][3] = v.w;
                }
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e)
#pragma unroll
                    for (int i = 0; i < TM; i += 4) {
                        const float4 v = *reinterpret_cast<const float4 *>(
                            Ls + (q0 + e) * Tile::kLPitch + tile_row(i));
                        l[i][e] = v.x, l[i + 1][e] = v.y, l[i + 2][e] = v.z, l[i + 3][e] = v.w;
                    }
            }
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float s[TN];
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const float4 v = *reinterpret_cast<const float4 *>(Ss + (q0 + e) * NS + j);
                    s[j] = v.x, s[j + 1] = v.y, s[j + 2] = v.z, s[j + 3] = v.w;
                }
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j)
                        acc[i][j] += l[i][e] * s[j];
            }
        }
    }
    async_wait<0>(); /* only empty groups can be left; drain them before the block exits */
    let_dependents_launch(); /* split-K's reduction, launched dependently (split_k_reduce.cuh) */

    float *const C = item.C;
    const bool c_vec = g.c_cs == 1 && g.c_rs % 4 == 0 && reinterpret_cast<uintptr_t>(C) % 16 == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int64_t row = row0 + tile_row(i);
        if (row >= p.m)
            continue;
        float *const c_row = C + row * g.c_rs;
        if (c_vec) {
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                store_result_run4(c_row, col0 + j, p.n, &acc[i][j], p.alpha, p.beta, true);
        } else {
#pragma unroll
            for (int j = 0; j < TN; ++j)
                if (col0 + j < p.n)
                    store_result(c_row + (col0 + j) * g.c_cs, acc[i][j], p.alpha, p.beta);
        }
    }
}

template <int NS, int TM, bool L_K, LCopy LC, bool S_VEC>
int launch_stream_instance(const StreamProblem &g, cudaStream_t stream)
{
    constexpr int BM = StreamShape<NS, TM>::kBM;
    constexpr auto kernel = sgemm_stream<NS, TM, L_K, LC, S_VEC>;
    constexpr size_t smem = StreamTile<BM, NS, L_K>::kBytes;
    const cudaError_t e = opt_in_shared_memory<kernel>(smem);
    if (e != cudaSuccess)
        return (int)e;
    const dim3 grid(ceil_div(g.p.m, BM), 1, (unsigned)g.p.batch);
    kernel<<<grid, dim3(kStreamThreads), smem, stream>>>(g);
    return (int)cudaGetLastError();
}

template <int NS, int TM, bool L_K, LCopy LC>
int launch_stream_s(const StreamProblem &g, cudaStream_t stream)
{
    const tg_problem &q = g.p;
    return vectors_allowed(q.B, q.b_cs, q.b_rs, q.stride_b)
               ? launch_stream_instance<NS, TM, L_K, LC, true>(g, stream)
               : launch_stream_instance<NS, TM, L_K, LC, false>(g, stream);
}

/* Turns the problem so that n <= NS (C^T = op(B)^T op(A)^T where m is the short side), then
 * picks the copies for how L and S sit in memory. */
template <int NS, int TM>
int launch_stream(const tg_problem *p, void *stream_)
{
    const cudaStream_t stream = (cudaStream_t)stream_;
    const StreamProblem g = turned(*p, p->n > NS);
    const tg_problem &q = g.p;
    if (q.a_cs == 1)
        return vectors_allowed(q.A, q.a_cs, q.a_rs, q.stride_a)
                   ? launch_stream_s<NS, TM, true, LCopy::kVec>(g, stream)
                   : launch_stream_s<NS, TM, true, LCopy::kShift>(g, stream);
    if (q.a_rs == 1)
        return vectors_allowed(q.A, q.a_rs, q.a_cs, q.stride_a)
                   ? launch_stream_s<NS, TM, false, LCopy::kVec>(g, stream)
                   : launch_stream_s<NS, TM, false, LCopy::kShift>(g, stream);
    return launch_stream_s<NS, TM, false, LCopy::kScalar>(g, stream);
}

template <int NS>
const char *stream_unsupported(const tg_problem *p)
{
    static const char reason[] = "the stream rungs span the short side in one block: m or n "
                                 "must be at most the rung's width (8, 16, 32 or 64)";
    return p->m > NS && p->n > NS ? reason : nullptr;
}

} // namespace

/* block_rows = block_cols = BM: the short side (<= NS <= BM) is one tile either way round, so
 * the planner counts ceil(long side / BM) tiles whichever side is long. */
#define TG_STREAM_RUNG(NS, TM, TN)                                                                  \
    extern "C" const tg_rung tg_rung_stream##NS = {.name = "stream" #NS, .level = 10,            \
        .summary = "min(m, n) <= " #NS ": the long operand streamed by 16-byte cp.async, 4 "     \
                   "stages, " #TM "x" #TN " a thread, 2 blocks an SM",                                 \
        .block_rows = StreamShape<NS, TM>::kBM, .block_cols = StreamShape<NS, TM>::kBM,         \
        .in_auto = 1, .arith = TG_ARITH_FFMA, .launch = launch_stream<NS, TM>,                   \
        .unsupported = stream_unsupported<NS>};

#if TG_IN_UNIT(stream8)
TG_STREAM_RUNG(8, 4, 4)
#endif
#if TG_IN_UNIT(stream16)
TG_STREAM_RUNG(16, 4, 8)
#endif
#if TG_IN_UNIT(stream32)
TG_STREAM_RUNG(32, 8, 8)
#endif
#if TG_IN_UNIT(stream64)
TG_STREAM_RUNG(64, 8, 8)
#endif
#undef TG_STREAM_RUNG
