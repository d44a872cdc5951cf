/*
 * Rung 6: m <= 8 or n <= 8, a matrix-vector product with up to 8 vectors, in FP32 FFMA.
 *
 * sgemm_gemv8 ("gemv8"):
 * The problem is turned so that the long side is m' and the short one n' <= 8 (for m <= 8,
 * C^T = op(B)^T op(A)^T); the long operand L = op(A') (m' x k) is read once, at HBM speed,
 * and the short one S = op(B') (k x 8, zero-padded) is staged in shared memory a chunk of k
 * at a time and read by every warp.  Each thread keeps 4 rows x 8 outputs in registers and
 * holds 8 16-byte loads of L in flight; the partial sums are added in shared memory at the
 * end.  Two forms, by how L sits in memory:
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

/* The problem turned so that m is the long side and n <= 8; C(i, j) is C[i * c_rs + j * c_cs]. */
struct GemvProblem {
    tg_problem p;
    int64_t c_rs, c_cs;
};

/*
 * L_K_CONTIG: op(A) (= L) is contiguous along k (a_cs == 1), else along m or general strides.
 * VEC: L may be read by 16-byte vectors along its contiguous direction.
 */
template <bool L_K_CONTIG, bool VEC>
__global__ void __launch_bounds__(kGemvThreads, 2) sgemm_gemv8(const GemvProblem g)
{
    /* along k: a warp's 4 rows, 2 steps of 128 of k a chunk; along m: a lane's 4 rows, each
     * warp 8 of k a chunk */
    constexpr int kChunk = L_K_CONTIG ? 2 * 32 * 4 : kGemvWarps * kGemvLoads;
    constexpr int kBlockRows = L_K_CONTIG ? kGemvWarps * kGemvRows : 32 * kGemvRows;
    constexpr int kShare = kChunk * kGemvShort / kGemvThreads; /* floats of S a thread stages */
    static_assert(kChunk * kGemvShort % kGemvThreads == 0 && kGemvThreads % kChunk == 0,
                  "the threads must split a chunk of S evenly");
    static_assert(!L_K_CONTIG || kGemvLoads == kGemvRows * kChunk / 128,
                  "along k, a thread's loads are its warp's rows times the chunk's steps of 128");
    /* between this thread's rows, and between the floats of a run along k */
    constexpr int kRowStep = L_K_CONTIG || VEC ? 1 : 32;
    constexpr int kFloatStep = VEC ? 1 : 32;
    __shared__ __align__(16) float s_chunk[kChunk][kGemvShort];       /* S(q, j), q in chunk */
    __shared__ float partial[kGemvWarps][kGemvRows * kGemvShort][33]; /* padded: no conflicts */

    const tg_problem &p = g.p;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const batch_item item(p);
    const int64_t row0 = blockIdx.x * (int64_t)kBlockRows;
    /* This thread's first row and first k in a chunk; rows first + r * kRowStep, r < 4 */
    const int first = L_K_CONTIG ? warp * kGemvRows : VEC ? lane * 4 : lane;
    const int k_first = L_K_CONTIG ? (VEC ? lane * 4 : lane) : warp;
    const int64_t rows_left = p.m - row0 - first;
    bool row_in[kGemvRows];
    const float *l_row[kGemvRows]; /* row r's float at k0 + k_first; read only where inside */
#pragma unroll
    for (int r = 0; r < kGemvRows; ++r) {
        row_in[r] = r * kRowStep < rows_left;
        l_row[r] = item.A + (row_in[r] ? row0 + first + r * kRowStep : 0) * p.a_rs +
                   k_first * p.a_cs;
    }
    const bool rows_all_in = row_in[kGemvRows - 1];
    const int64_t k_run = L_K_CONTIG ? 0 : kGemvWarps * p.a_cs; /* along m: between runs */

    /* This thread's share of a chunk of S: floats c < kShare at S(k0 + s_q + c * s_dq,
     * s_j + c * s_dj), consecutive threads along S's contiguous direction */
    const bool along_n = p.b_cs == 1;
    const int s_q = along_n ? tid / kGemvShort : tid % kChunk;
    const int s_j = along_n ? tid % kGemvShort : tid / kChunk;
    const int s_dq = along_n ? kGemvThreads / kGemvShort : 0;
    const int s_dj = along_n ? 0 : kGemvThreads / kChunk;
    const float *s_src = item.B + s_q * p.b_rs + s_j * p.b_cs;
    const int64_t s_step = s_dq * p.b_rs + s_dj * p.b_cs;

    float acc[kGemvRows][kGemvShort] = {};
    for (int64_t k0 = 0; k0 < p.k; k0 += kChunk) {
        const bool chunk_in = k0 + kChunk <= p.k;
        /* This chunk's runs of L, issued first so they are in flight while S is staged.
         * Along k, run i = h * 4 + r is row r at k0 + k_first + h * 128 + e * kFloatStep;
         * along m, run i is the 4 rows at k0 + warp + 8 i. */
        float x[kGemvLoads][4];
#pragma unroll
        for (int i = 0; i < kGemvLoads; ++i) {
            if (L_K_CONTIG) {
                const int r = i % kGemvRows, off = i / kGemvRows * 128;
                const float *src = l_row[r] + off;
                const int64_t k_left = p.k - (k0 + k_first + off);
                if (VEC && row_in[r] && (chunk_in || k_left >= 4)) {
                    const float4 v = __ldg(reinterpret_cast<const float4 *>(src));
                    x[i][0] = v.x, x[i][1] = v.y, x[i][2] = v.z, x[i][3] = v.w;
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        x[i][e] = row_in[r] && (chunk_in || e * kFloatStep < k_left)
                                      ? __ldg(src + e * kFloatStep)
                                      : 0.0f;
                }
            } else {
                const bool k_in = chunk_in || k0 + k_first + kGemvWarps * i < p.k;
                if (VEC && rows_all_in && k_in) {
                    const float4 v = __ldg(reinterpret_cast<const float4 *>(l_row[0] + i * k_run));
                    x[i][0] = v.x, x[i][1] = v.y, x[i][2] = v.z, x[i][3] = v.w;
                } else {
#pragma unroll
                    for (int r = 0; r < kGemvRows; ++r)
                        x[i][r] = row_in[r] && k_in
                                      ? __ldg(VEC ? l_row[0] + i * k_run + r * p.a_rs
                                                  : l_row[r] + i * k_run)
                                      : 0.0f;
                }
            }
        }
        float s_in[kShare];
#pragma unroll
        for (int c = 0; c < kShare; ++c)
            s_in[c] = s_j + c * s_dj < p.n && k0 + s_q + c * s_dq < p.k ? __ldg(s_src + c * s_step)
                                                                         : 0.0f;
        /* everyone is done with the previous chunk of S */
        __syncthreads();
#pragma unroll
        for (int c = 0; c < kShare; ++c)
            s_chunk[s_q + c * s_dq][s_j + c * s_dj] = s_in[c];
        __syncthreads();
#pragma unroll
        for (int r = 0; r < kGemvRows; ++r)
            l_row[r] += kChunk * p.a_cs;
        s_src += kChunk * p.b_rs;

        /* acc[r][j] += L(row r, q) * S(q, j) over this thread's floats of the chunk; each q's
         * S is read once, by 2 LDS.128 (a broadcast along m) */
#pragma unroll
        for (int i = 0; i < kGemvLoads; ++i) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if (L_K_CONTIG ? i % kGemvRows != 0 : e != 0)
                    continue; /* along k: the 4 rows of a step share S; along m: one q a run */
                const int q = L_K_CONTIG ? i / kGemvRows * 128 + k_first + e * kFloatStep
                                         : k_first + kGemvWarps * i;
                const float4 s0 = *reinterpret_cast<const float4 *>(&s_chunk[q][0]);
                const float4 s1 = *reinterpret_cast<const float4 *>(&s_chunk[q][4]);
                const float s[kGemvShort] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
                for (int r = 0; r < kGemvRows; ++r) {
                    const float l = L_K_CONTIG ? x[i + r][e] : x[i][r];
#pragma unroll
                    for (int j = 0; j < kGemvShort; ++j)
                        acc[r][j] += l * s[j];
                }
            }
        }
    }

    /* The partial sums: along k each lane holds a part of its warp's rows (summed over the
     * lanes), along m each warp a part of the lanes' rows (summed over the warps). */
#pragma unroll
    for (int r = 0; r < kGemvRows; ++r)
#pragma unroll
        for (int j = 0; j < kGemvShort; ++j)
            partial[warp][r * kGemvShort + j][lane] = acc[r][j];
    __syncthreads();
    float *const C = item.C;
    const bool rows_contiguous = g.c_rs == 1 && g.c_cs != 1; /* C's long side is contiguous */
    for (int o = tid; o < kBlockRows * kGemvShort; o += kGemvThreads) {
        const int row = rows_contiguous ? o % kBlockRows : o / kGemvShort;
        const int j = rows_contiguous ? o / kBlockRows : o % kGemvShort;
        float sum = 0.0f;
        if (L_K_CONTIG) {
            const float *part = partial[row / kGemvRows][row % kGemvRows * kGemvShort + j];
            for (int l = 0; l < 32; ++l)
                sum += part[l];
        } else {
            /* row = lane * 4 + r (VEC) or r * 32 + lane */
            const int r = VEC ? row % 4 : row / 32, l = VEC ? row / 4 : row % 32;
            for (int w = 0; w < kGemvWarps; ++w)
                sum += partial[w][r * kGemvShort + j][l];
        }
        if (row0 + row < p.m && j < p.n)
            store_result(C + (row0 + row) * g.c_rs + j * g.c_cs, sum, p.alpha, p.beta);
    }
}

template <bool L_K_CONTIG, bool VEC>
int launch_gemv8_instance(const GemvProblem &g, cudaStream_t stream)
{
    constexpr int kBlockRows = L_K_CONTIG ? kGemvWarps * kGemvRows : 32 * kGemvRows;
    const dim3 grid(ceil_div(g.p.m, kBlockRows), 1, (unsigned)g.p.batch);
    sgemm_gemv8<L_K_CONTIG, VEC><<<grid, dim3(kGemvThreads), 0, stream>>>(g);
    return (int)cudaGetLastError();
}

/* Turns the problem so that n <= 8 (C^T = op(B)^T op(A)^T where m is the short side), then
 * picks the form for how the long operand sits in memory. */
int launch_gemv8(const tg_problem *p, void *stream_)
{
    const cudaStream_t stream = (cudaStream_t)stream_;
    GemvProblem g{*p, p->ldc, 1};
    if (p->n > kGemvShort || (p->m <= kGemvShort && p->m < p->n)) {
        tg_problem &q = g.p;
        q.m = p->n, q.n = p->m;
        q.A = p->B, q.a_rs = p->b_cs, q.a_cs = p->b_rs, q.stride_a = p->stride_b;
        q.B = p->A, q.b_rs = p->a_cs, q.b_cs = p->a_rs, q.stride_b = p->stride_a;
        g.c_rs = 1, g.c_cs = p->ldc;
    }
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
    .arith = TG_ARITH_FFMA, .launch = launch_gemv8, .unsupported = gemv8_unsupported};
