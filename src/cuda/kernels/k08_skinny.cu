/*
 * Rung 8: the shapes the large tiles waste.  Three FP32 FFMA kernels for products that a
 * 128x128 or 256x128 block tile mostly pads: an output side under 64, 8 or fewer rows or
 * columns, and k of 64 or less.
 *
 * 1. sgemm_skinny: small and skinny block tiles, named by the tile
 *      sgemm_skinny_128x16x32_w32x16_t4x4_s3   ("skinny128x16")   n 9 .. 16
 *      sgemm_skinny_128x32x16_w32x32_t8x4_s4   ("skinny128x32")   n 17 .. 32
 *      sgemm_skinny_16x128x32_w16x32_t4x4_s3   ("skinny16x128")   m 9 .. 16
 *      sgemm_skinny_32x128x16_w32x32_t4x8_s4   ("skinny32x128")   m 17 .. 32
 *      sgemm_skinny_64x32x16_w32x16_t4x4_s4    ("skinny64x32")    mid sizes, n under 64
 *      sgemm_skinny_32x64x16_w16x32_t4x4_s4    ("skinny32x64")    mid sizes, m under 64
 *      sgemm_skinny_32x32x16_w32x16_t4x4_s4    ("skinny32x32")    small m x n, long k (split-K)
 *    What it adds over rung 4 (warptile64): the same warp-tiled cp.async pipeline (k04's loader
 *    and block set-up, tile_loader.cuh) with block tiles 16 to 128 wide, warp tiles of 16 to 32
 *    and thread tiles of 4x4 to 8x4, so a product with 9 columns pads a 128x16 tile (7 of 16
 *    columns) instead of a 128x256 one (247 of 256), and a small m x n still has blocks for
 *    the SMs.  When one side is under 64 such a product is bound by reading the long operand
 *    (A for a thin n, B for a thin m), which every tile column (row) reads once.
 *    block tile   BM x BN x BK above; 128 threads (64 for 32x32), warps tile the block
 *    warp tile    WM x WN, lanes as (WM / TM) x (WN / TN) = 32
 *    thread tile  TM x TN as runs of 4 along m and n, (WM / TM) * 4 and (WN / TN) * 4 floats
 *                 apart; per k step TM / 4 + TN / 4 LDS.128 and TM * TN FFMA
 *    stages       3 (BK 32) or 4 (BK 16): the copies of phase t + STAGES - 1 overlap phase t
 *    shared       STAGES x (As[BK][BM + pad] + Bs[BK][BN + pad]), k-major, as rung 4
 * 2. sgemm_gemv8 ("gemv8"): m <= 8 or n <= 8, a matrix-vector product with up to 8 vectors.
 *    The problem is turned so that the long side is m' and the short one n' <= 8 (for m <= 8,
 *    C^T = op(B)^T op(A)^T); the long operand L = op(A') (m' x k) is read once, at HBM speed,
 *    and the short one S = op(B') (k x 8, zero-padded) is staged in shared memory a chunk of k
 *    at a time and read by every warp.  Each thread keeps 4 rows x 8 outputs in registers and
 *    holds 8 16-byte loads of L in flight; the partial sums are added in shared memory at the
 *    end.  Two forms, by how L sits in memory:
 *      along k (A' row-major, e.g. NN with n <= 8): a warp owns 4 rows of L and its lanes split
 *        k (32 lanes x 4 floats = 128 of k a step, 2 steps a chunk of 256), the block's 8 warps
 *        32 rows; the lanes' partial sums are added at the end
 *      along m' (e.g. NN with m <= 8, where L is B): a lane owns 4 rows (by one 16-byte load
 *        where legal, else 4 rows 32 apart), a warp 128 rows, and the block's 8 warps split k
 *        (warp w takes k w, w + 8, ... of each chunk of 64); the warps' partial sums are added
 *        at the end
 *    block        256 threads; 32 (along k) or 128 (along m') rows of L, all of n' <= 8
 *    shared       S chunk [256 or 64][8] + the partial sums [8][32][33]: 41.8 or 35.8 KiB
 *    Long k with few outputs is split along k by the planner (a batch of k-slices).
 * 3. sgemm_shortk_128x128_w64x32_t8x8 ("shortk128"): k <= 64, where the cost is writing C.
 *    The block loads its whole k (at most 64) of op(A) and op(B) in one cp.async group (k04's
 *    loader with BK 64, zero-filled past k), waits once, runs k rounded up to 4 steps of 8x8
 *    outer products, then passes C through shared memory, 64 rows at a time, so that each warp
 *    writes whole rows: 16-byte streaming stores (st.global.cs: C is written once, so it should
 *    not push A and B out of L2) where C's pointer and ldc allow and beta == 0, else coalesced
 *    element stores; no pipeline.
 *    block tile   128 x 128, 256 threads = 8 warps as 2 (m) x 4 (n)
 *    warp tile    64 x 32, lanes as 8 x 4, thread tile 8 x 8 as 2 x 2 runs of 4 (as rung 4)
 *    shared       As[64][128 + pad] + Bs[64][128 + pad]: 64 to 66 KiB; C's 64 x 132 stage
 *                 reuses it
 * How each operand layout is copied (sgemm_skinny, sgemm_shortk): as rung 4, tile_loader.cuh.
 * Edges: every load carries its bounds test and zero-fills outside the matrix; C is stored by
 * 16-byte vectors where C's pointer and ldc allow and all 4 columns are inside, else element by
 * element; beta == 0 never reads C.  Offsets are 64-bit; batches on blockIdx.z (split-K runs
 * its k-slices as a batch).
 * Constraints: skinny*: none (any m, n, k, strides, transposes, alignment).  gemv8: min(m, n)
 *              <= 8.  shortk128: k <= 64.
 * Benchmark:   tilegemm bench --algo skinny128x16,skinny128x32,gemv8,warptile64 16970x9x10183
 *              100000x32x512 65536x8x4096;  tilegemm bench --algo shortk128,warptile64
 *              7573x2201x8 4253x11166x11
 * Measured:    (not yet measured on a GPU)
 */
#include <stdint.h>

#include "async_copy.cuh"
#include "common.cuh"
#include "tile_loader.cuh"

namespace {

/* ---- 1. skinny block tiles ------------------------------------------------------------------ */

template <int BM, int BN, int WM, int WN>
constexpr int kSkinnyThreads = (BM / WM) * (BN / WN) * 32;

/*
 * A_K_CONTIG: op(A) is contiguous along k (a_cs == 1), else along m (a_rs == 1, or general
 * strides).  B_N_CONTIG: op(B) contiguous along n (b_cs == 1), else along k.  A_VEC / B_VEC:
 * the operand is contiguous along m / n and may be copied by 16-byte vectors.
 */
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, bool A_K_CONTIG,
          bool A_VEC, bool B_N_CONTIG, bool B_VEC>
__global__ void __launch_bounds__(kSkinnyThreads<BM, BN, WM, WN>,
                                  kMinBlocks<kSkinnyThreads<BM, BN, WM, WN>>)
    sgemm_skinny(const tg_problem p)
{
    constexpr int kThreads = kSkinnyThreads<BM, BN, WM, WN>;
    constexpr int kWarpsN = BN / WN;
    constexpr int kLanesM = WM / TM, kLanesN = WN / TN;
    constexpr int kPieceM = kLanesM * 4, kPieceN = kLanesN * 4; /* between a thread's runs */
    static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0,
                  "the thread tile is read as runs of 4 floats (LDS.128) along m and n");
    static_assert(WM % TM == 0 && WN % TN == 0 && kLanesM * kLanesN == 32,
                  "a warp's 32 lanes must tile the warp tile with thread tiles");
    static_assert(kThreads <= 1024, "at most 1024 threads a block");
    using LoadA = AsyncTileLoader<BM, BK, kThreads, A_K_CONTIG, A_VEC>;
    using LoadB = AsyncTileLoader<BN, BK, kThreads, !B_N_CONTIG, B_VEC>;

    extern __shared__ __align__(16) float smem[];
    /* This block's tile of C (a 2-D grid), its loaders, the pipeline's prologue */
    WarpTiledBlock<BM, BN, BK, STAGES, 1, LoadA, LoadB, WM, WN, kWarpsN, kLanesN> block(
        smem, p, threadIdx.x);

    float acc[TM][TN] = {};
    int read = 0; /* buffer of phase t; phase t + STAGES - 1 goes to the one before it */
    /* Iteration t computes phase t from buffer t % STAGES; k_left = k - t * BK. */
    for (int64_t k_left = p.k; k_left > 0; k_left -= BK) {
        /* Phase t's group has landed (the newest STAGES - 2 may stay in flight); after the
         * barrier everyone's copies are visible and everyone is done with phase t - 1, whose
         * buffer is refilled next. */
        async_wait<STAGES - 2>();
        __syncthreads();
        block.refill(read == 0 ? STAGES - 1 : read - 1, k_left, p);

        const float *const a = block.As + read * LoadA::kTileFloats + block.a_off;
        const float *const b = block.Bs + read * LoadB::kTileFloats + block.b_off;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float af[TM], bf[TN];
            load_fragment<TM, kPieceM>(af, a + kk * LoadA::kPitch);
            load_fragment<TN, kPieceN>(bf, b + kk * LoadB::kPitch);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += af[i] * bf[j];
        }
        read = read == STAGES - 1 ? 0 : read + 1;
    }
    async_wait<0>(); /* only empty groups can be left; drain them before the block exits */

    store_thread_tile<TM, TN, kPieceM, kPieceN>(acc, p, block.i0 + block.a_off,
                                                block.j0 + block.b_off);
}

/* The launch of each layout's instantiation, for launch_for_copies (tile_loader.cuh). */
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
struct SkinnyLaunch {
    template <bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
    static int run(const tg_problem *p, cudaStream_t stream)
    {
        constexpr int kThreads = kSkinnyThreads<BM, BN, WM, WN>;
        using LoadA = AsyncTileLoader<BM, BK, kThreads, A_K_CONTIG, A_VEC>;
        using LoadB = AsyncTileLoader<BN, BK, kThreads, !B_N_CONTIG, B_VEC>;
        const size_t smem = STAGES * (LoadA::kTileFloats + LoadB::kTileFloats) * sizeof(float);
        constexpr auto kernel = sgemm_skinny<BM, BN, BK, WM, WN, TM, TN, STAGES, A_K_CONTIG,
                                             A_VEC, B_N_CONTIG, B_VEC>;
        const cudaError_t e = opt_in_shared_memory<kernel>(smem);
        if (e != cudaSuccess)
            return (int)e;
        const dim3 grid(ceil_div(p->n, BN), ceil_div(p->m, BM), (unsigned)p->batch);
        kernel<<<grid, dim3(kThreads), smem, stream>>>(*p);
        return (int)cudaGetLastError();
    }
};

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
int launch_skinny(const tg_problem *p, void *stream)
{
    return launch_for_copies<SkinnyLaunch<BM, BN, BK, WM, WN, TM, TN, STAGES>>(
        p, (cudaStream_t)stream);
}

/* Every tiling constraint is compile-time and the 4-byte copies cover any shape, stride and
 * alignment on a 2-D grid (the backend keeps grid.y in range), so nothing is refused. */
const char *skinny_unsupported(const tg_problem *) { return nullptr; }

/* ---- 2. gemv8: 8 or fewer outputs a row ----------------------------------------------------- */

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

/* Not a template: built in the gemv8 unit alone (cmake/kernel_units.cmake), which then is the
 * only one to instantiate sgemm_gemv8. */
#if TG_IN_UNIT(gemv8)
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
#endif

/* ---- 3. shortk128: k <= 64, bound by writing C ---------------------------------------------- */

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
__global__ void __launch_bounds__(kSkinnyThreads<BM, BN, WM, WN>, 2)
    sgemm_shortk(const tg_problem p)
{
    constexpr int kThreads = kSkinnyThreads<BM, BN, WM, WN>;
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
        for (int kk = k0; kk < k0 + 4; ++kk) {
            float af[TM], bf[TN];
            load_fragment<TM, kPieceM>(af, As + kk * LoadA::kPitch + a_off);
            load_fragment<TN, kPieceN>(bf, Bs + kk * LoadB::kPitch + b_off);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += af[i] * bf[j];
        }
    }
    store_tile_by_rows<BM, BN, WM, WN, TM, TN, kPieceM, kPieceN, kThreads>(acc, smem, p, i0, j0,
                                                                          a_off, b_off);
}

template <int BM, int BN, int WM, int WN, int TM, int TN>
struct ShortkLaunch {
    template <bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
    static int run(const tg_problem *p, cudaStream_t stream)
    {
        constexpr int kThreads = kSkinnyThreads<BM, BN, WM, WN>;
        using LoadA = AsyncTileLoader<BM, kShortMaxK, kThreads, A_K_CONTIG, A_VEC>;
        using LoadB = AsyncTileLoader<BN, kShortMaxK, kThreads, !B_N_CONTIG, B_VEC>;
        const size_t smem = (LoadA::kTileFloats + LoadB::kTileFloats) * sizeof(float);
        constexpr auto kernel =
            sgemm_shortk<BM, BN, WM, WN, TM, TN, A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>;
        const cudaError_t e = opt_in_shared_memory<kernel>(smem);
        if (e != cudaSuccess)
            return (int)e;
        if (p->k > kShortMaxK)
            return (int)cudaErrorInvalidValue; /* shortk_unsupported refuses these */
        const dim3 grid(ceil_div(p->n, BN), ceil_div(p->m, BM), (unsigned)p->batch);
        kernel<<<grid, dim3(kThreads), smem, stream>>>(*p);
        return (int)cudaGetLastError();
    }
};

template <int BM, int BN, int WM, int WN, int TM, int TN>
int launch_shortk(const tg_problem *p, void *stream)
{
    return launch_for_copies<ShortkLaunch<BM, BN, WM, WN, TM, TN>>(p, (cudaStream_t)stream);
}

const char *shortk_unsupported(const tg_problem *p)
{
    if (p->k > kShortMaxK)
        return "shortk128 loads the whole of k into shared memory at once: k must be at most 64";
    return nullptr;
}

} // namespace

/* Level 8: FFMA rungs for the shapes the large tiles waste (see the header). */
#define TG_SKINNY_RUNG(NAME, BM, BN, BK, WM, WN, TM, TN, STAGES, SUMMARY)                         \
    extern "C" const tg_rung tg_rung_##NAME = {.name = #NAME, .level = 8, .summary = SUMMARY,    \
        .block_rows = BM, .block_cols = BN, .in_auto = 1, .arith = TG_ARITH_FFMA,                \
        .launch = launch_skinny<BM, BN, BK, WM, WN, TM, TN, STAGES>,                             \
        .unsupported = skinny_unsupported};

#if TG_IN_UNIT(skinny128x16)
TG_SKINNY_RUNG(skinny128x16, 128, 16, 32, 32, 16, 4, 4, 3,
               "128x16x32 block of 4 warps (32x16, 4x4 a thread), 3-stage cp.async: n of 9 to 16")
#endif
#if TG_IN_UNIT(skinny128x32)
TG_SKINNY_RUNG(skinny128x32, 128, 32, 16, 32, 32, 8, 4, 4,
               "128x32x16 block of 4 warps (32x32, 8x4 a thread), 4-stage cp.async: n of 17 to "
               "32")
#endif
#if TG_IN_UNIT(skinny16x128)
TG_SKINNY_RUNG(skinny16x128, 16, 128, 32, 16, 32, 4, 4, 3,
               "16x128x32 block of 4 warps (16x32, 4x4 a thread), 3-stage cp.async: m of 9 to 16")
#endif
#if TG_IN_UNIT(skinny32x128)
TG_SKINNY_RUNG(skinny32x128, 32, 128, 16, 32, 32, 4, 8, 4,
               "32x128x16 block of 4 warps (32x32, 4x8 a thread), 4-stage cp.async: m of 17 to "
               "32")
#endif
#if TG_IN_UNIT(skinny64x32)
TG_SKINNY_RUNG(skinny64x32, 64, 32, 16, 32, 16, 4, 4, 4,
               "64x32x16 block of 4 warps (32x16, 4x4 a thread), 4-stage cp.async: n under 64")
#endif
#if TG_IN_UNIT(skinny32x64)
TG_SKINNY_RUNG(skinny32x64, 32, 64, 16, 16, 32, 4, 4, 4,
               "32x64x16 block of 4 warps (16x32, 4x4 a thread), 4-stage cp.async: m under 64")
#endif
#if TG_IN_UNIT(skinny32x32)
TG_SKINNY_RUNG(skinny32x32, 32, 32, 16, 32, 16, 4, 4, 4,
               "32x32x16 block of 2 warps (32x16, 4x4 a thread), 4-stage cp.async: small m x n")
#endif
#undef TG_SKINNY_RUNG

#if TG_IN_UNIT(gemv8)
extern "C" const tg_rung tg_rung_gemv8 = {.name = "gemv8", .level = 8,
    .summary = "m or n <= 8: the long operand read once by 16-byte loads, 4 rows x 8 outputs a "
               "thread, the short one staged in shared memory",
    .block_rows = kGemvWarps * kGemvRows, .block_cols = kGemvShort, .in_auto = 1,
    .arith = TG_ARITH_FFMA, .launch = launch_gemv8, .unsupported = gemv8_unsupported};
#endif

#if TG_IN_UNIT(shortk128)
extern "C" const tg_rung tg_rung_shortk128 = {.name = "shortk128", .level = 8,
    .summary = "k <= 64: a 128x128 block loads all of k at once, 8x8 a thread, C through "
               "shared memory by whole rows",
    .block_rows = 128, .block_cols = 128, .in_auto = 1, .arith = TG_ARITH_FFMA,
    .launch = launch_shortk<128, 128, 64, 32, 8, 8>, .unsupported = shortk_unsupported};
#endif
