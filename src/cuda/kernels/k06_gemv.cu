/*
 * Rung 6: m <= 8 or n <= 8, a matrix-vector product with up to 8 vectors, in FP32 FFMA.
 *
 * sgemm_gemv8_along_k and sgemm_gemv8_along_m ("gemv8"):
 * The problem is turned so that the long side is m' and the short one n' <= 8 (for m <= 8,
 * C^T = op(B)^T op(A)^T); the long operand L = op(A') (m' x k) is read once, at HBM speed,
 * and the short one S = op(B') (k x 8, zero-padded) is staged in shared memory a chunk of k
 * at a time and read by every warp.  Each thread keeps 4 rows x 8 outputs in registers and
 * holds 8 16-byte loads of L in flight; the partial sums are added in shared memory at the
 * end.  Two kernels, by how L sits in memory:
 *   along k (A' row-major, e.g. NN with n <= 8): a warp owns 4 rows of L and its lanes split
 *     k (32 lanes x 4 floats = 128 of k a step, 2 steps a chunk of 256), the block's 8 warps
 *     32 rows; the lanes' partial sums are added at the end
 *   along m' (e.g. NN with m <= 8, where L is B): a lane owns 4 rows (by one 16-byte load
 *     where legal, else 4 rows 32 apart), a warp 128 rows, and the block's 8 warps split k
 *     (warp w takes k w, w + 8, ... of each chunk of 64); the warps' partial sums are added
 *     at the end
 * block        256 threads; 32 (along k) or 128 (along m') rows of L, all of n' <= 8
 * shared       S chunk [256 or 64][8] + the partial sums [8][32][33]: 41.8 or 35.8 KiB
 * Long k with few outputs is split along k by the planner (a batch of k-slices).
 * Edges: every load carries its bounds test and zero-fills outside the matrix; beta == 0 never
 * reads C.  Offsets are 64-bit; batches on blockIdx.z (split-K runs its k-slices as a batch).
 * Constraints: min(m, n) <= 8.
 * Benchmark:   tilegemm bench --algo gemv8,skinny128x16,warptile64 65536x8x4096 16970x9x10183
 * Measured:    (not yet measured on a GPU)
 */
#include <stdint.h>

#include "common.cuh"

namespace {

constexpr int kGemvWarps = 8, kGemvThreads = 32 * kGemvWarps;
constexpr int kGemvShort = 8; /* outputs a row of L, S zero-padded to 8 columns */
constexpr int kGemvRows = 4;  /* rows of L a thread accumulates */
constexpr int kGemvLoads = 8; /* runs of 4 floats of L a thread has in flight per chunk */

/* The problem turned so that m is the long side and n <= 8 (common.cuh). */
using GemvProblem = TurnedProblem;

/* The rows of L a thread reads, first + r * ROW_STEP for r < 4, and whether each is inside. */
template <int ROW_STEP>
struct GemvRows {
    bool in[kGemvRows];
    const float *at[kGemvRows]; /* row r's float at k0 + k_first; read only where inside */
    bool all_in;

    __device__ __forceinline__ GemvRows(const tg_problem &p, const float *A, int64_t row0,
                                        int first, int k_first)
    {
        const int64_t rows_left = p.m - row0 - first;
#pragma unroll
        for (int r = 0; r < kGemvRows; ++r) {
            in[r] = r * ROW_STEP < rows_left;
            at[r] = A + (in[r] ? row0 + first + r * ROW_STEP : 0) * p.a_rs + k_first * p.a_cs;
        }
        all_in = in[kGemvRows - 1];
    }
    __device__ __forceinline__ void advance(int64_t k_step)
    {
#pragma unroll
        for (int r = 0; r < kGemvRows; ++r)
            at[r] += k_step;
    }
};

/* The short operand S, staged a chunk of CHUNK k at a time: this thread's floats c < kShare are
 * S(k0 + q + c * dq, j + c * dj), consecutive threads along S's contiguous direction. */
template <int CHUNK>
struct GemvShortStage {
    static constexpr int kShare = CHUNK * kGemvShort / kGemvThreads;
    static_assert(CHUNK * kGemvShort % kGemvThreads == 0 && kGemvThreads % CHUNK == 0,
                  "the threads must split a chunk of S evenly");
    int q, j, dq, dj;
    const float *src;
    int64_t step;

    __device__ __forceinline__ GemvShortStage(const tg_problem &p, const float *B, int tid)
    {
        const bool along_n = p.b_cs == 1;
        q = along_n ? tid / kGemvShort : tid % CHUNK;
        j = along_n ? tid % kGemvShort : tid / CHUNK;
        dq = along_n ? kGemvThreads / kGemvShort : 0;
        dj = along_n ? 0 : kGemvThreads / CHUNK;
        src = B + q * p.b_rs + j * p.b_cs;
        step = dq * p.b_rs + dj * p.b_cs;
    }
    /* Reads this thread's share of the chunk at k0, then (after everyone is done with the
     * previous chunk) writes it to s_chunk, and moves on to the next chunk. */
    __device__ __forceinline__ void stage(float (*s_chunk)[kGemvShort], const tg_problem &p,
                                          int64_t k0)
    {
        float s_in[kShare];
#pragma unroll
        for (int c = 0; c < kShare; ++c)
            s_in[c] = j + c * dj < p.n && k0 + q + c * dq < p.k ? __ldg(src + c * step) : 0.0f;
        __syncthreads();
#pragma unroll
        for (int c = 0; c < kShare; ++c)
            s_chunk[q + c * dq][j + c * dj] = s_in[c];
        __syncthreads();
        src += CHUNK * p.b_rs;
    }
};

/* acc[r][j] += l[r] * S(q, j): S's row q read by 2 LDS.128 (a broadcast along m). */
__device__ __forceinline__ void gemv_fma(float (&acc)[kGemvRows][kGemvShort],
                                         const float (&l)[kGemvRows], const float *s_row)
{
    const float4 s0 = *reinterpret_cast<const float4 *>(s_row);
    const float4 s1 = *reinterpret_cast<const float4 *>(s_row + 4);
    const float s[kGemvShort] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
    for (int r = 0; r < kGemvRows; ++r)
#pragma unroll
        for (int j = 0; j < kGemvShort; ++j)
            acc[r][j] += l[r] * s[j];
}

/* The partial sums of the block, partial[warp][r * 8 + j][lane] = acc[r][j], added up and
 * stored: output o of the block's rows x 8 is (row, j), sum(row, j) its total. */
template <int BLOCK_ROWS, class SUM>
__device__ __forceinline__ void gemv_store(float (*partial)[kGemvRows * kGemvShort][33],
                                           const float (&acc)[kGemvRows][kGemvShort],
                                           const GemvProblem &g, int64_t row0, SUM sum_of)
{
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int r = 0; r < kGemvRows; ++r)
#pragma unroll
        for (int j = 0; j < kGemvShort; ++j)
            partial[warp][r * kGemvShort + j][lane] = acc[r][j];
    __syncthreads();
    const tg_problem &p = g.p;
    float *const C = batch_item(p).C;
    const bool rows_contiguous = g.c_rs == 1 && g.c_cs != 1; /* C's long side is contiguous */
    for (int o = tid; o < BLOCK_ROWS * kGemvShort; o += kGemvThreads) {
        const int row = rows_contiguous ? o % BLOCK_ROWS : o / kGemvShort;
        const int j = rows_contiguous ? o / BLOCK_ROWS : o % kGemvShort;
        const float sum = sum_of(row, j);
        if (row0 + row < p.m && j < p.n)
            store_result(C + (row0 + row) * g.c_rs + j * g.c_cs, sum, p.alpha, p.beta);
    }
}

/*
 * L along k (op(A') contiguous along k, a_cs == 1): a warp owns 4 rows of L, its lanes split
 * k, 4 floats a lane (one 16-byte load where VEC allows, else 4 floats 32 apart), 128 of k a
 * step, 2 steps a chunk of 256; the block's 8 warps 32 rows.  The lanes' partial sums are added
 * at the end.
 */
template <bool VEC>
__global__ void __launch_bounds__(kGemvThreads, 2) sgemm_gemv8_along_k(const GemvProblem g)
{
    constexpr int kChunk = 2 * 32 * 4, kBlockRows = kGemvWarps * kGemvRows;
    constexpr int kFloatStep = VEC ? 1 : 32; /* between the floats of a lane's run along k */
    static_assert(kGemvLoads == kGemvRows * kChunk / 128,
                  "a thread's loads are its warp's rows times the chunk's steps of 128");
    __shared__ __align__(16) float s_chunk[kChunk][kGemvShort];       /* S(q, j), q in chunk */
    __shared__ float partial[kGemvWarps][kGemvRows * kGemvShort][33]; /* padded: no conflicts */

    const tg_problem &p = g.p;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const batch_item item(p);
    const int64_t row0 = blockIdx.x * (int64_t)kBlockRows;
    const int k_first = VEC ? lane * 4 : lane;
    GemvRows<1> rows(p, item.A, row0, warp * kGemvRows, k_first);
    GemvShortStage<kChunk> short_stage(p, item.B, tid);

    float acc[kGemvRows][kGemvShort] = {};
    for (int64_t k0 = 0; k0 < p.k; k0 += kChunk) {
        const bool chunk_in = k0 + kChunk <= p.k;
        /* This chunk's runs of L, issued first so that they are in flight while S is staged:
         * run i = h * 4 + r is row r at k0 + k_first + h * 128 + e * kFloatStep. */
        float x[kGemvLoads][4];
#pragma unroll
        for (int i = 0; i < kGemvLoads; ++i) {
            const int r = i % kGemvRows, off = i / kGemvRows * 128;
            const float *src = rows.at[r] + off;
            const int64_t k_left = p.k - (k0 + k_first + off);
            if (VEC && rows.in[r] && (chunk_in || k_left >= 4)) {
                const float4 v = __ldg(reinterpret_cast<const float4 *>(src));
                x[i][0] = v.x, x[i][1] = v.y, x[i][2] = v.z, x[i][3] = v.w;
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    x[i][e] = rows.in[r] && (chunk_in || e * kFloatStep < k_left)
                                  ? __ldg(src + e * kFloatStep)
                                  : 0.0f;
            }
        }
        short_stage.stage(s_chunk, p, k0);
        rows.advance(kChunk * p.a_cs);
        /* the 4 rows of a step share each q's S */
#pragma unroll
        for (int h = 0; h < kGemvLoads / kGemvRows; ++h)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const float l[kGemvRows] = {x[h * 4][e], x[h * 4 + 1][e], x[h * 4 + 2][e],
                                            x[h * 4 + 3][e]};
                gemv_fma(acc, l, s_chunk[h * 128 + k_first + e * kFloatStep]);
            }
    }
    /* each lane holds a part of its warp's rows: summed over the lanes */
    gemv_store<kBlockRows>(partial, acc, g, row0, [&](int row, int j) {
        const float *part = partial[row / kGemvRows][row % kGemvRows * kGemvShort + j];
        float sum = 0.0f;
        for (int l = 0; l < 32; ++l)
            sum += part[l];
        return sum;
    });
}

/*
 * L along m' (e.g. NN with m <= 8, where L is B): a lane owns 4 rows (by one 16-byte load where
 * VEC allows, else 4 rows 32 apart), a warp 128 rows, and the block's 8 warps split k (warp w
 * takes k w, w + 8, ... of each chunk of 64).  The warps' partial sums are added at the end.
 */
template <bool VEC>
__global__ void __launch_bounds__(kGemvThreads, 2) sgemm_gemv8_along_m(const GemvProblem g)
{
    constexpr int kChunk = kGemvWarps * kGemvLoads, kBlockRows = 32 * kGemvRows;
    __shared__ __align__(16) float s_chunk[kChunk][kGemvShort];       /* S(q, j), q in chunk */
    __shared__ float partial[kGemvWarps][kGemvRows * kGemvShort][33]; /* padded: no conflicts */

    const tg_problem &p = g.p;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const batch_item item(p);
    const int64_t row0 = blockIdx.x * (int64_t)kBlockRows;
    const int k_first = warp;
    GemvRows<VEC ? 1 : 32> rows(p, item.A, row0, VEC ? lane * 4 : lane, k_first);
    GemvShortStage<kChunk> short_stage(p, item.B, tid);
    const int64_t k_run = kGemvWarps * p.a_cs; /* between a thread's runs */

    float acc[kGemvRows][kGemvShort] = {};
    for (int64_t k0 = 0; k0 < p.k; k0 += kChunk) {
        const bool chunk_in = k0 + kChunk <= p.k;
        /* This chunk's runs of L, issued first so that they are in flight while S is staged:
         * run i is the 4 rows at k0 + warp + 8 i. */
        float x[kGemvLoads][4];
#pragma unroll
        for (int i = 0; i < kGemvLoads; ++i) {
            const bool k_in = chunk_in || k0 + k_first + kGemvWarps * i < p.k;
            if (VEC && rows.all_in && k_in) {
                const float4 v = __ldg(reinterpret_cast<const float4 *>(rows.at[0] + i * k_run));
                x[i][0] = v.x, x[i][1] = v.y, x[i][2] = v.z, x[i][3] = v.w;
            } else {
#pragma unroll
                for (int r = 0; r < kGemvRows; ++r)
                    x[i][r] = rows.in[r] && k_in
                                  ? __ldg(VEC ? rows.at[0] + i * k_run + r * p.a_rs
                                              : rows.at[r] + i * k_run)
                                  : 0.0f;
            }
        }
        short_stage.stage(s_chunk, p, k0);
        rows.advance(kChunk * p.a_cs);
        /* one q a run */
#pragma unroll
        for (int i = 0; i < kGemvLoads; ++i)
            gemv_fma(acc, x[i], s_chunk[k_first + kGemvWarps * i]);
    }
    /* each warp holds a part of the lanes' rows: summed over the warps; row = lane * 4 + r
     * (VEC) or r * 32 + lane */
    gemv_store<kBlockRows>(partial, acc, g, row0, [&](int row, int j) {
        const int r = VEC ? row % 4 : row / 32, l = VEC ? row / 4 : row % 32;
        float sum = 0.0f;
        for (int w = 0; w < kGemvWarps; ++w)
            sum += partial[w][r * kGemvShort + j][l];
        return sum;
    });
}

template <bool L_K_CONTIG, bool VEC>
int launch_gemv8_instance(const GemvProblem &g, cudaStream_t stream)
{
    constexpr int kBlockRows = L_K_CONTIG ? kGemvWarps * kGemvRows : 32 * kGemvRows;
    const dim3 grid(ceil_div(g.p.m, kBlockRows), 1, (unsigned)g.p.batch);
    if (L_K_CONTIG)
        sgemm_gemv8_along_k<VEC><<<grid, dim3(kGemvThreads), 0, stream>>>(g);
    else
        sgemm_gemv8_along_m<VEC><<<grid, dim3(kGemvThreads), 0, stream>>>(g);
    return (int)cudaGetLastError();
}

/* Whether the problem is turned so that n <= 8 (C^T = op(B)^T op(A)^T where m is the short
 * side); the planner counts tiles by it too. */
int gemv8_turns(const tg_problem *p)
{
    return p->n > kGemvShort || (p->m <= kGemvShort && p->m < p->n);
}

/* Turns the problem as gemv8_turns says, then picks the form for how the long operand sits in
 * memory. */
int launch_gemv8(const tg_problem *p, void *stream_)
{
    const cudaStream_t stream = (cudaStream_t)stream_;
    const GemvProblem g = turned(*p, gemv8_turns(p));
    const tg_problem &q = g.p;
    if (q.a_cs == 1)
        return vectors_allowed(q.A, q.a_cs, q.a_rs, q.stride_a)
                   ? launch_gemv8_instance<true, true>(g, stream)
                   : launch_gemv8_instance<true, false>(g, stream);
    return vectors_allowed(q.A, q.a_rs, q.a_cs, q.stride_a)
               ? launch_gemv8_instance<false, true>(g, stream)
               : launch_gemv8_instance<false, false>(g, stream);
}

const char *gemv8_unsupported(const tg_problem *p)
{
    if (p->m > kGemvShort && p->n > kGemvShort)
        return "gemv8 keeps a row's outputs in registers: m or n must be at most 8";
    return nullptr;
}

} // namespace

extern "C" const tg_rung tg_rung_gemv8 = {.name = "gemv8", .level = 6,
    .summary = "m or n <= 8: the long operand read once by 16-byte loads, 4 rows x 8 outputs a "
               "thread, the short one staged in shared memory",
    .block_rows = kGemvWarps * kGemvRows, .block_cols = kGemvShort, .in_auto = 1,
    .arith = TG_ARITH_FFMA, .launch = launch_gemv8, .unsupported = gemv8_unsupported,
    .turns = gemv8_turns};
