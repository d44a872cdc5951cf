/*
 * Rung 11: FP32-accurate products on the INT8 tensor cores by the Ozaki scheme II: the
 * arithmetic of src/ozaki/ozaki2.c (see ozaki2.h for the scheme and why its bits and moduli
 * meet the k-scaled error bound), run on the device step for step, so that its results are
 * ozaki2.c's bit for bit.
 *   ozaki2_int8: 10 + 11 x panels launches a batch item (20 with one panel, whose op(B) leading
 *   magnitudes P reuses; 7 + 5 x panels where the count is forced), all queued without waiting
 *   for the device:
 *     scan_lines (x2)   each row of op(A), each column of op(B): Inf/NaN, the frexp exponents
 *                       of its largest and smallest nonzero elements (a warp along a line, or
 *                       32 lines a block with 32 warps along k: near the copy rate either way)
 *     survey_lines      one block: the lines taken (no Inf/NaN, range within what 16 moduli
 *                       carry), the widest ranges, whether R is formed (a range asks more bits
 *                       than the floor); the lines' sums to 0; the lines left, listed
 *     the bound rule (ozaki2.h; not when the count is forced):
 *       to_leading      each line's leading magnitudes (tg_oz2_leading) as int8 rows of kp
 *                       bytes in the first residue plane, the sums of the rounded-up ones (U)
 *                       and of their squares (Q) per line (atomicAdd); per block of 32 (two
 *                       threads' 16 q, joined in shared memory), op(A)'s minimum of |a| (and
 *                       each row's largest, atomicMax) and op(B)'s shifted sum of leading
 *                       magnitudes as int8 rows of kr bytes in the second plane (kr: k / 32
 *                       padded to 16), a line's 8 blocks written together; 32 x 128 tiles as
 *                       to_residues', a thread 16 q of a line, one 16-byte store; op(A) once,
 *                       op(B) a panel at a time
 *       to_block_floors op(A)'s block minima as int8 rows of kr bytes (tg_oz2_block_floor) and
 *                       each row's scale
 *       s8gemm          R, their INT32 product k / 32 deep, as one item of modulus 0 (sums cut,
 *                       not reduced) in the second INT32 plane of the products; no item where
 *                       R is not formed
 *       bound_needs     4 columns a thread: the bits either operand needs for each output by R
 *                       (the fewer of its range's and its bound's; each line's sum aligned
 *                       once), block maxima by atomicMax
 *       weigh_bound     one block: the largest Q of either operand's lines; whether P pays
 *                       (tg_oz2_product_pays)
 *       to_leading      (where C has more than one panel) op(B)'s leading magnitudes again, a
 *                       panel at a time; nothing where P is not formed
 *       s8gemm          P, the INT32 product of the leading magnitudes, in the first INT32
 *                       plane of the products; no item where P is not formed
 *       bound_needs     as above by P, and each output's bound of |C_hat|
 *     choose_plan       one warp: thread 0 settles bits from the needs (the fewer of R's and
 *                       P's; or the ranges) and the floor, moduli from W (tg_oz2_magnitude,
 *                       tg_oz2_moduli_for: exact integers, as ozaki2.c), then all the bits
 *                       they carry (tg_oz2_take_carried_bits); then the CRT's constants
 *                       (tg_oz2_crt_init_*: no 128-bit division), a thread a modulus
 *     to_residues (x2)  each line times 2^(bits - e_max), rounded to an integer (int32 where
 *                       bits <= 30, else int64), and its symmetric residues modulo each chosen
 *                       modulus as int8, rows of kp bytes (k padded with zeros to 16); 32 x 128
 *                       tiles through shared memory, read along whichever side is contiguous;
 *                       a thread 16 q of a line, one 16-byte store a modulus
 *     s8gemm            int8_gemm.cuh: the products of the residues, one batch item a modulus,
 *                       128x256x128 blocks on wgmma, each sum leaving as its residue in
 *                       [0, m_l) (a byte: a quarter of INT32's); items past the chosen count
 *                       leave
 *     reconstruct (x3)  a thread a column and 16 rows of it (a kernel a class of counts, 0-8,
 *                       9-12 and 13-16 moduli, the others leave at once): the CRT without
 *                       128-bit products (ozaki2.h's tg_oz2_crt: per modulus u_l = r, its byte,
 *                       2 to 4 32x32->64-bit multiply-adds into exact sums of 32-bit limbs, q
 *                       from a 32-bit fixed-point estimate of S / M, one exact correction), the
 *                       same integer C_hat as ozaki2.c's 128-bit CRT; 2^-(s_i + t_j) alpha
 *                       C_hat (+ beta C) in double, one rounding to float.  The count, and so
 *                       the limbs, a template constant (one instance a count); the CRT's
 *                       constants in registers across the thread's rows
 *   after the panels:
 *     fma_left (x2)     the outputs of the rows left, then of the columns left (survey_lines'
 *                       lists), by float64 FMA in k order (one rounding to float), 8 lines
 *                       a block sharing the other operand's tiles; nothing where no line is
 *                       left
 * INT32 sums stay exact: int8_gemm.cuh reduces its accumulators every 2^16 of k itself.
 * Workspace: line records (16 (m + n) bytes), the plan, the survey, the lines' sums and the
 *   rows' largest block minima (16 (m + n) + 8 m), the lines left (4 (m + n)), the rows' block
 *   minima and scales (4 m (k / 32 + 1)), residues for all 16 moduli of A (16 m kp) and of one
 *   panel of B's columns (16 panel kp), and the panel's products as byte residues (16 m ldp,
 *   ldp the panel rounded up to 4; at most kProductBudget, 1 GiB: C goes panel by panel); the
 *   bound rule's leading magnitudes reuse the first plane of each operand's residues, the
 *   block-reduced operands the second, P's INT32 sums the first 4 m ldp bytes of the
 *   products and R's the next 4 m ldp: about 6.03 GiB at 16384^3; the rung's workspace_bytes
 *   (one batch item's, reused item after item).
 * Constraints: compute capability 9.0 and a build with sm_90a code; k at most where 16
 *   moduli's line range passes the host's table (about 2^31); never split along k.  In `auto`
 *   (in_auto = 1; the fp32 and tf32 modes, not strict) only within the entry's limits below (m,
 *   n and k at least 1024, its workspace at most 10 GiB) and where the planner ranks it fastest
 *   by 10% (the moduli its data needs are unseen); else when forced (tg_set_algo, --algo
 *   ozaki2_int8).
 * Registers: ptxas -v, nvcc 13.0, sm_90a: reconstruct 120, 128 and 167 (0-8, 9-12 and 13-16
 *   moduli), to_residues 78 and 80, to_leading 66 and 69 (with the blocks' minima and sums),
 *   to_block_floors 20, bound_needs 64, weigh_bound 32, fma_left 59 and 59, survey_lines 31,
 *   scan_lines 28 and 28, choose_plan 62 (thread 0's plan on a 208-byte stack frame); no spills;
 *   Choice as a __grid_constant__ (indexed by a line's range: as a plain parameter, copied to an
 *   80-byte stack frame in every thread).  reconstruct's SASS per output (a taken line, C_hat >=
 *   2^64, beta 0): 324 instructions at 9 moduli, 476 at 16 (the 128-bit CRT: 695 and 1110), about
 *   17 a modulus instead of 60 (measured before the count was a constant); powers of two by their
 *   bits (tg_pow2) instead of ldexp.
 * Benchmark: tilegemm bench 4096 8192 16384 --algo ozaki2_int8 (cuBLAS in the same run)
 * Measured: H100 80GB HBM3, 10ba615 (bench/results/ozaki/, scripts/device_ozaki.sh, GEMMul8's
 *   accurate mode with 8 moduli in the same run, median of 7): 92.1, 128.0 and 142.8 TFLOP/s at
 *   4096^3, 8192^3 and 16384^3 on uniform data (GEMMul8 67.2, 96.0, 124.6), 92.1, 118.5, 145.3
 *   on line-scaled data (67.0, 99.9, 123.6), 71.5, 108.8, 128.0 on spread data (65.6, 97.9,
 *   124.4); RMS 2.56e-8 to 2.80e-8, below GEMMul8's on every class and size; test_gpu_ozaki2 bit
 *   for bit with ozaki2.c on every case.  At 16384^3 the same kernels ran 149.2 and 147.6 on
 *   uniform and line-scaled data in the run before (686a51e: only left lines ran otherwise), and
 *   `tilegemm bench` gave 150-154 at earlier commits: a call's time moves by a few percent with
 *   what the card ran before it (bench/results/ozaki/README.md).  ncu, one call at 16384^3:
 *   uniform data 53.2 ms, of which the 8 moduli's INT8 products 45.0-45.8, R (and P's launches,
 *   which leave) 0.6, to_residues 2.5, reconstruct 2.0 (2.1 before its byte permute), to_leading
 *   1.1, bound_needs 0.9, scan_lines 0.8 (at 2ca5401: 68.6 ms); spread data 61.9 ms (P 5.8,
 *   fma_left 1.6 for 3 left lines; 72.1 with fma_left a panel at a time).  In a run of calls the
 *   card holds its power cap (about 1.8 GHz), and a call takes about 14% longer than ncu's sum.
 */
#include <math.h>
#include <stdint.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "../../ozaki/ozaki2.h"
#include "../ozaki2_int8.h"
#include "common.cuh"
#include "int128.cuh"
#include "int8_gemm.cuh"

namespace {

constexpr int kMaxModuli = TG_OZ2_MAX_MODULI;
/* The widest line range the host's tables cover: 16 moduli carry at most about
 * 38 + log2(k) / 2 (ozaki2.h), 54 at k = 2^31. */
constexpr int kMaxRange = 55;

/* Modulus l of ozaki2.h's list, a constant where l is. */
__host__ __device__ constexpr int modulus_at(int l)
{
    struct List {
        int m[kMaxModuli];
    };
    return List{{TG_OZ2_MODULI}}.m[l];
}

/* Two parts of one line's scan, as one. */
__device__ __forceinline__ void merge(tg_oz2_line &l, const tg_oz2_line &o)
{
    l.special |= o.special;
    if (!o.nonzero)
        return;
    l.e_max = l.nonzero && l.e_max > o.e_max ? l.e_max : o.e_max;
    l.e_min = l.nonzero && l.e_min < o.e_min ? l.e_min : o.e_min;
    l.nonzero = 1;
}

/* What the host decides from k alone (ozaki2.c's functions, evaluated on the host so that the
 * device repeats no floating-point formula). */
struct Choice {
    int cap;                    /* widest range of a line taken */
    int forced, forced_bits_a, forced_bits_b;
    int floor_bits;             /* tg_oz2_floor_bits */
    int8_t bits[kMaxRange + 1]; /* by a line's range: tg_oz2_bits_for_range */
};

/* What the lines and the bound rule (ozaki2.h) tell choose_plan: of the lines taken, the widest
 * range of A's rows and B's columns, and how many of each are left to FMA; whether R and P are
 * formed (each INT8 product's count of items: 1 or 0); where R is, the largest
 * tg_oz2_output_need of either operand by R (-1 for none), and where P is, by P and the largest
 * tg_oz2_output_magnitude over the outputs taken; the largest Q of either operand's lines. */
struct Survey {
    int widest[2];
    int64_t left[2];
    int reduced, product; /* R formed, P formed */
    int need_a, need_b;   /* from R */
    int full_a, full_b;   /* from P */
    unsigned long long magnitude, most_q[2];
};

/* What the device chose for one batch item, and the CRT's constants for it. */
struct DevicePlan {
    tg_oz2_crt crt; /* ozaki2.h: for the moduli chosen */
    int moduli, bits_a, bits_b, range_a, range_b;
};

/* ---- scan_lines ------------------------------------------------------------------------- */

/* Line r's element q at X[r * line_stride + q * q_stride].  ALONG_Q: 32 threads a line walk
 * along it (coalesced where q_stride is 1), 8 lines a block.  Else a thread walks one of 32
 * neighbouring lines (coalesced where line_stride is 1), and the block's 32 warps take every
 * 32nd element: a thread a whole line left 4096 lines to 16 blocks, 0.6 ms at 4096^2. */
template <bool ALONG_Q>
__global__ void __launch_bounds__(1024) scan_lines(const float *X, int64_t line_stride,
                                                   int64_t q_stride, int64_t lines, int64_t k,
                                                   tg_oz2_line *info)
{
    __shared__ tg_oz2_line part[32][32]; /* [threadIdx.y][threadIdx.x] */
    const int64_t r = ALONG_Q ? blockIdx.x * (int64_t)8 + threadIdx.y
                              : blockIdx.x * (int64_t)32 + threadIdx.x;
    tg_oz2_line l{0, 0, 0, 0};
    if (r < lines)
#pragma unroll 4
        for (int64_t q = ALONG_Q ? threadIdx.x : threadIdx.y; q < k; q += 32)
            tg_oz2_line_add(&l, X[r * line_stride + q * q_stride]);
    part[threadIdx.y][threadIdx.x] = l;
    __syncthreads();
    if ((ALONG_Q ? threadIdx.x : threadIdx.y) == 0 && r < lines) {
        for (int t = 1; t < 32; ++t)
            merge(l, ALONG_Q ? part[threadIdx.y][t] : part[t][threadIdx.x]);
        info[r] = l;
    }
}

/* ---- survey_lines, weigh_bound and choose_plan ------------------------------------------ */

/* One block of 256 threads: the lines taken, their widest ranges and whether R is formed
 * (ozaki2.c's choose()), into survey; the lines left, listed at left_lines (rows' indices from
 * 0, columns' from m, in no order); the lines' sums (count of them at sums) to 0. */
__global__ void __launch_bounds__(256) survey_lines(const tg_oz2_line *rows, int64_t m,
                                                    const tg_oz2_line *cols, int64_t n,
                                                    const __grid_constant__ Choice choice,
                                                    unsigned long long *sums, int64_t count,
                                                    int *left_lines, Survey *survey)
{
    __shared__ int widest[2][256];
    __shared__ unsigned long long left[2];
    const int tid = threadIdx.x;
    if (tid == 0)
        left[0] = left[1] = 0;
    for (int64_t e = tid; e < count; e += 256)
        sums[e] = 0;
    __syncthreads();
    int wa = 0, wb = 0;
    for (int64_t i = tid; i < m; i += 256) {
        const bool take = tg_oz2_line_taken(&rows[i], choice.cap);
        wa = take && tg_oz2_line_range(&rows[i]) > wa ? tg_oz2_line_range(&rows[i]) : wa;
        if (!take)
            left_lines[atomicAdd(&left[0], 1ull)] = (int)i;
    }
    for (int64_t j = tid; j < n; j += 256) {
        const bool take = tg_oz2_line_taken(&cols[j], choice.cap);
        wb = take && tg_oz2_line_range(&cols[j]) > wb ? tg_oz2_line_range(&cols[j]) : wb;
        if (!take)
            left_lines[m + atomicAdd(&left[1], 1ull)] = (int)j;
    }
    widest[0][tid] = wa, widest[1][tid] = wb;
    __syncthreads();
    for (int half = 128; half > 0; half /= 2) {
        if (tid < half)
            for (int x = 0; x < 2; ++x)
                widest[x][tid] = widest[x][tid] > widest[x][tid + half] ? widest[x][tid]
                                                                        : widest[x][tid + half];
        __syncthreads();
    }
    if (tid != 0)
        return;
    Survey v{};
    for (int x = 0; x < 2; ++x)
        v.widest[x] = widest[x][0], v.left[x] = (int64_t)left[x];
    v.reduced = choice.forced == 0 && v.left[0] < m && v.left[1] < n &&
                (choice.bits[v.widest[0]] > choice.floor_bits ||
                 choice.bits[v.widest[1]] > choice.floor_bits);
    v.need_a = v.need_b = v.full_a = v.full_b = -1;
    *survey = v;
}

/* After R: the largest Q of either operand's lines (qs: m rows', then n columns') into survey,
 * and whether P is formed (tg_oz2_product_pays, W by Cauchy-Schwarz), one block of 256
 * threads. */
__global__ void __launch_bounds__(256) weigh_bound(int64_t m, int64_t n, int64_t k,
                                                   const __grid_constant__ Choice choice,
                                                   const unsigned long long *qs, Survey *survey)
{
    __shared__ unsigned long long most[2][256];
    const int tid = threadIdx.x;
    unsigned long long qa = 0, qb = 0;
    for (int64_t i = tid; i < m; i += 256)
        qa = qs[i] > qa ? qs[i] : qa;
    for (int64_t j = tid; j < n; j += 256)
        qb = qs[m + j] > qb ? qs[m + j] : qb;
    most[0][tid] = qa, most[1][tid] = qb;
    __syncthreads();
    for (int half = 128; half > 0; half /= 2) {
        if (tid < half)
            for (int x = 0; x < 2; ++x)
                most[x][tid] = most[x][tid] > most[x][tid + half] ? most[x][tid] : most[x][tid + half];
        __syncthreads();
    }
    if (tid != 0)
        return;
    survey->most_q[0] = most[0][0], survey->most_q[1] = most[1][0];
    survey->product =
        survey->reduced &&
        tg_oz2_product_pays(survey->need_a, survey->need_b, choice.floor_bits,
                            tg_oz2_magnitude(k, most[0][0], most[1][0], UINT64_MAX));
}

/* The rest of ozaki2.c's choose() and the CRT's constants, one warp: thread 0 settles bits and
 * moduli (the lines' largest Q from weigh_bound, in survey; zeros where the count is forced);
 * then a thread a modulus builds the CRT's constants (the inverses by trial cost up to 256
 * steps each). */
__global__ void __launch_bounds__(32) choose_plan(int64_t m, int64_t n, int64_t k,
                                                  const Choice choice, const Survey *survey,
                                                  DevicePlan *plan)
{
    static_assert(kMaxModuli <= 32, "a thread a modulus");
    const int tid = threadIdx.x;
    __shared__ DevicePlan d;
    const int list[kMaxModuli] = {TG_OZ2_MODULI};
    if (tid == 0) {
        const Survey v = *survey;
        d = DevicePlan{};
        d.range_a = v.widest[0], d.range_b = v.widest[1];
        if (choice.forced > 0) {
            d.moduli = choice.forced;
            d.bits_a = choice.forced_bits_a, d.bits_b = choice.forced_bits_b;
        } else if (v.left[0] < m && v.left[1] < n) { /* else every output is left to FMA */
            /* without R, what the widest ranges ask (no more than the floor); with P too, the
             * fewer bits of the two bounds (either holds) */
            int need_a = v.reduced ? v.need_a
                                   : tg_oz2_output_need(choice.bits[v.widest[0]], TG_OZ2_NO_BOUND);
            int need_b = v.reduced ? v.need_b
                                   : tg_oz2_output_need(choice.bits[v.widest[1]], TG_OZ2_NO_BOUND);
            if (v.product) {
                need_a = v.full_a < need_a ? v.full_a : need_a;
                need_b = v.full_b < need_b ? v.full_b : need_b;
            }
            const tg_oz2_settled settled =
                tg_oz2_settle(k, choice.floor_bits, need_a, need_b, v.most_q[0], v.most_q[1],
                              v.product ? v.magnitude : UINT64_MAX);
            d.bits_a = settled.bits_a, d.bits_b = settled.bits_b, d.moduli = settled.moduli;
        }
        tg_oz2_crt_init_shared(&d.crt, list, d.moduli);
    }
    __syncthreads();
    if (tid < kMaxModuli)
        tg_oz2_crt_init_modulus(&d.crt, list, d.moduli, tid);
    __syncthreads();
    if (tid == 0)
        *plan = d;
}

/* ---- tiles of lines through shared memory (to_leading, to_residues) --------------------- */

/* A line's 128 floats of a tile (to_residues', to_leading's) lie in tile[line] as 32 chunks of
 * 4: chunk c (q 4c .. 4c + 3 of the tile) at chunk c ^ (c / 8 % 4) ^ (line % 8), which moves it
 * within its group of 8 (32 banks).  No pad: a row must stay a whole number of 16-byte chunks
 * for the 16-byte reads, and a pad of 4 words leaves those reads 4-way conflicted (8 threads of
 * a line read chunks 4s + j, s = 0..7, which fall on 2 groups of banks).  With the swap each 8
 * threads that share a wavefront touch 32 distinct banks: a line's 8 threads reading chunk
 * 4s + j (s's halves told apart by c / 8), a warp storing 32 consecutive q of a line (8 chunks
 * of one group), and 8 consecutive lines storing one chunk each (line % 8). */
__device__ __forceinline__ int residue_chunk(int line, int c)
{
    return c ^ ((c >> 3) & 3) ^ (line & 7);
}

/* Chunk j (of 4) of the 16 consecutive q a thread takes from 16 seg of its line. */
__device__ __forceinline__ float4 thread_chunk(const float (&tile)[32][128], int line, int seg,
                                               int j)
{
    return *reinterpret_cast<const float4 *>(&tile[line][4 * residue_chunk(line, 4 * seg + j)]);
}

/* 32 lines x 128 of k of X through registers into shared memory, for to_residues and
 * to_leading (with residue_chunk's layout): load() issues a tile's 16 reads a thread,
 * store() puts them in the tile (zeros past the lines and k).  ALONG_Q: a warp reads 32
 * consecutive q of one line at a time and stores them one by one; else a warp reads 32
 * consecutive lines at one q at a time, each thread 4 consecutive q of its line, stored as
 * one 16-byte chunk. */
template <bool ALONG_Q>
struct ResidueTileLoader {
    float v[16];

    /* the reads' addresses by steps from the thread's first (as the offsets of each read, the
     * 16 64-bit offsets were held across the tiles: 100 registers) */
    __device__ __forceinline__ void load(const float *X, int64_t line_stride, int64_t q_stride,
                                         int64_t lines, int64_t k, int64_t r0, int64_t q0)
    {
        const int64_t r = r0 + (ALONG_Q ? threadIdx.y : threadIdx.x);
        const int64_t q = q0 + (ALONG_Q ? threadIdx.x : 4 * threadIdx.y);
        /* the lines and q left from the thread's first (more than -128), at most 128 wanted */
        const int lines_left = lines - r < 128 ? (int)(lines - r) : 128;
        const int q_left = k - q < 128 ? (int)(k - q) : 128;
        const int64_t outer = ALONG_Q ? 8 * line_stride : 32 * q_stride;
        const int64_t inner = ALONG_Q ? 32 * q_stride : q_stride;
        const float *row = X + r * line_stride + q * q_stride;
#pragma unroll
        for (int a = 0; a < 4; ++a) {
            const float *at = row;
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const int dr = ALONG_Q ? 8 * a : 0, dq = ALONG_Q ? 32 * b : 32 * a + b;
                v[4 * a + b] = dr < lines_left && dq < q_left ? *at : 0.0f;
                at += inner;
            }
            row += outer;
        }
    }

    __device__ __forceinline__ void store(float (&tile)[32][128]) const
    {
        /* residue_chunk with its line % 8 known (threadIdx.y < 8): 4 addresses, not 16, held
         * across a block's tiles */
        if (ALONG_Q) {
#pragma unroll
            for (int n = 0; n < 16; ++n) {
                const int a = n / 4, b = n % 4; /* line y + 8a, q 32b + x: chunk 8b + x / 4 */
                const int c = 8 * b + ((threadIdx.x / 4) ^ b ^ threadIdx.y);
                tile[threadIdx.y + 8 * a][4 * c + threadIdx.x % 4] = v[n];
            }
        } else {
#pragma unroll
            for (int g = 0; g < 4; ++g) { /* line x, chunk y + 8g */
                const int c = 8 * g + (threadIdx.y ^ g ^ (threadIdx.x % 8));
                *reinterpret_cast<float4 *>(&tile[threadIdx.x][4 * c]) =
                    make_float4(v[4 * g], v[4 * g + 1], v[4 * g + 2], v[4 * g + 3]);
            }
        }
    }
};

/* ---- the bound rule: to_leading, to_block_floors, bound_needs --------------------------- */

/* Lines (as to_residues) as their leading magnitudes (tg_oz2_leading): int8 rows of kp bytes
 * at out (zeros past k and for lines not taken); where up is set, the rounded-up ones summed
 * into up[r] and their squares into sq[r]; where least or blocks is set, for each block of 32
 * along k: for op(A) (least set) its minimum of |x| to least[r * nb + g], and the largest of a
 * thread block's into most[r] (float bits: atomicMax orders them), for op(B) (blocks set) its
 * sum of leading magnitudes shifted (TG_OZ2_BLOCK_SHIFT) to blocks[r * kr + g], zeros up to kr.
 * The tiles run to end, the larger of kp and kr blocks of 32.  Nothing where when is set and
 * *when is 0.
 * A block moves 32 lines x 128 of k at a time through shared memory as to_residues does
 * (ResidueTileLoader, residue_chunk's layout); each thread takes 16 consecutive q of a line and
 * writes their leading magnitudes in one 16-byte store (aligned as to_residues' are).  A block
 * of 32 along k is two threads' 16 q: each leaves its part (minimum or sum) in parts, and once
 * two tiles' parts are there (a line's 8 blocks; 4 where the block's last tile is alone), each
 * of the line's threads combines one block's pair and writes it: 8 consecutive values a line,
 * one 32-byte piece of op(A)'s minima (a word a block of 32, scattered over the tiles, made the
 * pass over op(A) twice as slow).  Two barriers a tile of 128 (the tile stored; the tile read
 * and the parts written), where tiles of 32 took 2 and a third every 8. */
/* 66 and 69 registers, 3 blocks an SM; bounded to 64 (4 blocks) ptxas spilled 12 bytes. */
template <bool ALONG_Q>
__global__ void __launch_bounds__(256) to_leading(const float *X, int64_t line_stride,
                                                  int64_t q_stride, int64_t lines, int64_t k,
                                                  int64_t kp, const tg_oz2_line *info, int cap,
                                                  int8_t *out, unsigned long long *up,
                                                  unsigned long long *sq, float *least,
                                                  unsigned long long *most, int8_t *blocks,
                                                  int64_t kr, const int *when)
{
    if (when != nullptr && *when == 0)
        return;
    static_assert(TG_OZ2_BLOCK == 32, "a block of k is two threads' 16 q");
    __shared__ __align__(16) float tile[32][128]; /* [line][q], chunks by residue_chunk */
    /* [line][8 t + seg]: the part of thread seg of the pair's tile t; rows of 24 words put a
     * warp's 4 lines' 8 parts on distinct banks */
    __shared__ __align__(16) float parts[32][24];
    __shared__ uint32_t ends[2][256];
    __shared__ float ends_most[256];
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const int64_t r0 = blockIdx.x * (int64_t)32;
    const int line = tid / 8, seg = tid % 8; /* the thread's q: 16 seg .. 16 seg + 15 */
    const int64_t r = r0 + line, nb = tg_oz2_blocks(k);
    tg_oz2_line l{0, 0, 0, 0};
    if (r < lines)
        l = info[r];
    const bool take = r < lines && tg_oz2_line_taken(&l, cap) && l.nonzero;
    const double scale = tg_pow2(take ? 7 - l.e_max : 0); /* tg_oz2_leading's, once a line */
    const bool reduce = least != nullptr || blocks != nullptr;
    const int64_t end = reduce && kr * TG_OZ2_BLOCK > kp ? kr * TG_OZ2_BLOCK : kp;
    /* a block's sums fit 32 bits: a thread adds 16 elements of at most 257 tiles (k < 2^31,
     * 65535 blocks along k), each up to 2^7 (its square 2^14), and a line's 8 threads together */
    uint32_t sum = 0, squares = 0;
    float row_most = 0.0f; /* the largest block minimum of the line's blocks this thread wrote */
    /* A block's tiles are consecutive, so that a line's values of R's blocks leave 8 at a time */
    const int64_t per_block = ((end + 127) / 128 + gridDim.y - 1) / gridDim.y;
    const int64_t first = blockIdx.y * per_block * 128;
    const int64_t last = end < first + per_block * 128 ? end : first + per_block * 128;
    int t = 0; /* the tile's place in its pair */
    /* the strides read afresh each tile (the barrier before: a reload), so that the 16 reads'
     * offsets are not held across the tiles (held, ALONG_Q took 128 registers) */
    __shared__ int64_t strides[2];
    if (tid == 0)
        strides[0] = line_stride, strides[1] = q_stride;
    ResidueTileLoader<ALONG_Q> next;
    if (first < last)
        next.load(X, line_stride, q_stride, lines, k, r0, first);
    for (int64_t q0 = first; q0 < last; q0 += 128) {
        next.store(tile);
        __syncthreads();
        if (q0 + 128 < last)
            next.load(X, strides[0], strides[1], lines, k, r0, q0 + 128);
        const int64_t q = q0 + 16 * seg;
        float low = INFINITY;
        int lead_sum = 0;
        if (r < lines && q < kp) { /* kp a multiple of 16: a thread's 16 q all below it */
            uint32_t packed[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float4 c = thread_chunk(tile, line, seg, j);
                const float f[4] = {c.x, c.y, c.z, c.w};
                packed[j] = 0;
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    int above = 0;
                    const int down = take ? tg_oz2_leading_scaled(f[e], scale, &above) : 0;
                    sum += (unsigned)above;
                    squares += (unsigned)(above * above);
                    packed[j] |= (uint32_t)down << (8 * e);
                    lead_sum += down;
                    low = q + 4 * j + e < k ? fminf(low, fabsf(f[e])) : low;
                }
            }
            *reinterpret_cast<uint4 *>(out + r * kp + q) =
                uint4{packed[0], packed[1], packed[2], packed[3]};
        }
        if (reduce)
            parts[line][8 * t + seg] = least != nullptr ? low : (float)lead_sum; /* < 2^11 */
        /* the tile is read: the next may be stored once all pass here; parts, written before,
         * are read below and rewritten only past the next tile's barrier */
        __syncthreads();
        if (!reduce)
            continue;
        if (t == 1 || q0 + 128 >= last) { /* the line's 8 threads write one block each */
            const int64_t g = (q0 - 128 * t) / TG_OZ2_BLOCK + seg;
            if (r < lines && seg < 4 * (t + 1)) {
                const float2 pair = *reinterpret_cast<const float2 *>(&parts[line][2 * seg]);
                const float v = least != nullptr ? fminf(pair.x, pair.y) : pair.x + pair.y;
                if (least != nullptr && g < nb)
                    least[r * nb + g] = v, row_most = fmaxf(row_most, v);
                else if (blocks != nullptr && g < kr)
                    blocks[r * kr + g] = (int8_t)((int)v >> TG_OZ2_BLOCK_SHIFT);
            }
            t = 0;
        } else {
            t = 1;
        }
    }
    if (up == nullptr && least == nullptr)
        return;
    /* a line's 8 threads together: one atomic a line a block, not a tile */
    ends[0][tid] = sum, ends[1][tid] = squares, ends_most[tid] = row_most;
    __syncthreads();
    if (seg == 0 && r < lines) {
        for (int s = 1; s < 8; ++s)
            sum += ends[0][tid + s], squares += ends[1][tid + s],
                row_most = fmaxf(row_most, ends_most[tid + s]);
        if (least != nullptr && row_most > 0.0f)
            atomicMax(&most[r], (unsigned long long)__float_as_uint(row_most));
        if (up != nullptr && sum != 0) /* squares are 0 too where sum is */
            atomicAdd(&up[r], (unsigned long long)sum),
                atomicAdd(&sq[r], (unsigned long long)squares);
    }
}

/* op(A)'s block minima as int8 rows of kr bytes (tg_oz2_block_floor; zeros past the blocks and
 * for rows not taken), each row's scale to scales[r]: a thread a byte. */
__global__ void __launch_bounds__(256) to_block_floors(const float *least,
                                                       const unsigned long long *most,
                                                       const tg_oz2_line *info, int cap,
                                                       int64_t lines, int64_t k, int64_t kr,
                                                       int8_t *blocks, int *scales)
{
    const int64_t e = blockIdx.x * (int64_t)256 + threadIdx.x;
    if (e >= lines * kr)
        return;
    const int64_t r = e / kr, g = e % kr, nb = tg_oz2_blocks(k);
    const tg_oz2_line l = info[r];
    const bool take = tg_oz2_line_taken(&l, cap) && l.nonzero;
    int scale = 0;
    const int8_t v = take && g < nb ? (int8_t)tg_oz2_block_floor(least[r * nb + g],
                                                                 __uint_as_float((unsigned)most[r]),
                                                                 l.e_max, &scale)
                                    : 0;
    blocks[e] = v;
    if (g == 0)
        scales[r] = scale;
}

/* Each taken output of a panel (n columns; cols, up_cols at its first): the bits either operand
 * needs for it (tg_oz2_output_need, as ozaki2.c's bound_needs), from its lower product at
 * lower[i * ldp + j]: R (scales: its rows' scales) or P (scales null; then also its
 * tg_oz2_output_magnitude); the block's largest to survey by atomicMax.  Nothing where that
 * product is not formed.  4 neighbouring columns a thread (their products in one 16-byte load:
 * ldp is a multiple of 4), 32 x 4 columns x 8 rows a block, rows in steps of the grid.  Each
 * line's sum is aligned once (tg_oz2_align): a column's by its thread, a row's by its warp (the
 * lanes share it), so an output costs one alignment of k times its product and two compares
 * (tg_oz2_bound_bits_aligned; 64-bit divisions of the sums at every output took 1.8 ms at
 * 16384^3). */
struct NeedTerms {            /* a line's share of its outputs' needs */
    bool taken;
    int range_bits;           /* Choice.bits by its range */
    unsigned long long up;    /* U, its rounded-up leading magnitudes' sum */
    tg_oz2_aligned five_up;   /* 5 U aligned (where U > 0) */
};

__device__ __forceinline__ NeedTerms need_terms(const tg_oz2_line &l, unsigned long long up,
                                                const Choice &choice)
{
    NeedTerms t;
    t.taken = tg_oz2_line_taken(&l, choice.cap);
    t.range_bits = t.taken ? choice.bits[tg_oz2_line_range(&l)] : 0;
    t.up = up;
    t.five_up = tg_oz2_align(up != 0 ? 5 * up : 1);
    return t;
}

__global__ void __launch_bounds__(256, 4) bound_needs(int64_t m, int64_t n, int64_t k,
                                                   const tg_oz2_line *rows,
                                                   const tg_oz2_line *cols,
                                                   const unsigned long long *up_rows,
                                                   const unsigned long long *up_cols,
                                                   const __grid_constant__ Choice choice,
                                                   const int32_t *lower, const int *scales,
                                                   int64_t ldp, Survey *survey)
{
    __shared__ int best[2][256];
    __shared__ unsigned long long most[256];
    const bool full = scales == nullptr;
    if (!(full ? survey->product : survey->reduced))
        return;
    int *const need_at[2] = {full ? &survey->full_a : &survey->need_a,
                             full ? &survey->full_b : &survey->need_b};
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const int64_t j0 = (blockIdx.x * (int64_t)32 + threadIdx.x) * 4;
    int need_a = -1, need_b = -1;
    unsigned long long magnitude = 0;
    NeedTerms col[4];
    bool any = false;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const int64_t j = j0 + e;
        col[e] = need_terms(j < n ? cols[j] : tg_oz2_line{1, 0, 0, 0}, j < n ? up_cols[j] : 0,
                            choice);
        any |= col[e].taken;
    }
    const auto weigh = [&](const tg_oz2_line &l, unsigned long long up, int scale,
                           const int4 &four) {
        const NeedTerms row = need_terms(l, up, choice);
        if (!row.taken)
            return;
        const int32_t product[4] = {four.x, four.y, four.z, four.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            if (!col[e].taken)
                continue;
            /* tg_oz2_bound_bits of each operand: 0 where the other line's sum is 0, no bound
             * where the product is 0 */
            int bits_a = TG_OZ2_NO_BOUND, bits_b = TG_OZ2_NO_BOUND;
            if (product[e] > 0) {
                const tg_oz2_aligned y =
                    tg_oz2_align((unsigned long long)k * (unsigned)product[e]);
                bits_a = tg_oz2_bound_bits_aligned(y, scale, col[e].five_up);
                bits_b = tg_oz2_bound_bits_aligned(y, scale, row.five_up);
            }
            bits_a = col[e].up != 0 ? bits_a : 0;
            bits_b = row.up != 0 ? bits_b : 0;
            const int a = tg_oz2_output_need(row.range_bits, bits_a);
            const int b = tg_oz2_output_need(col[e].range_bits, bits_b);
            need_a = a > need_a ? a : need_a;
            need_b = b > need_b ? b : need_b;
            if (full) {
                const unsigned long long w =
                    tg_oz2_output_magnitude(product[e], row.up, col[e].up);
                magnitude = w > magnitude ? w : magnitude;
            }
        }
    };
    /* two rows at a time, both rows' loads issued before either is weighed: one row's at a
     * time left the pass waiting on memory (ncu: 0.23 ms a panel of 16384 x 4096, 35% of
     * DRAM's peak, 13 cycles a warp between instructions) */
    const int64_t step = gridDim.y * (int64_t)8;
    for (int64_t i = blockIdx.y * (int64_t)8 + threadIdx.y; any && i < m; i += 2 * step) {
        const bool second = i + step < m;
        const int64_t i2 = second ? i + step : i;
        const tg_oz2_line l1 = rows[i], l2 = rows[i2];
        const unsigned long long u1 = up_rows[i], u2 = up_rows[i2];
        const int s1 = full ? 0 : scales[i], s2 = full ? 0 : scales[i2];
        const int4 f1 = *reinterpret_cast<const int4 *>(lower + i * ldp + j0);
        const int4 f2 = *reinterpret_cast<const int4 *>(lower + i2 * ldp + j0);
        weigh(l1, u1, s1, f1);
        if (second)
            weigh(l2, u2, s2, f2);
    }
    best[0][tid] = need_a, best[1][tid] = need_b, most[tid] = magnitude;
    __syncthreads();
    for (int half = 128; half > 0; half /= 2) {
        if (tid < half) {
            for (int x = 0; x < 2; ++x)
                best[x][tid] = best[x][tid] > best[x][tid + half] ? best[x][tid] : best[x][tid + half];
            most[tid] = most[tid] > most[tid + half] ? most[tid] : most[tid + half];
        }
        __syncthreads();
    }
    if (tid == 0) { /* most blocks add nothing: read before the atomic */
        for (int x = 0; x < 2; ++x)
            if (best[x][0] > *need_at[x])
                atomicMax(need_at[x], best[x][0]);
        if (most[0] > survey->magnitude)
            atomicMax(&survey->magnitude, most[0]);
    }
}

/* ---- to_residues ------------------------------------------------------------------------ */

/* The symmetric residues (tg_oz2_residue) of N integers x(0) .. x(N - 1) of type Int (N a
 * multiple of 16) modulo each of the first `moduli`, as N bytes at at + l plane for modulus l,
 * in 16-byte stores (at and plane multiples of 16).  The moduli are constants: their remainders
 * are multiplies, not divisions. */
template <int N, class Int, class Value>
__device__ __forceinline__ void write_residues(Value x, int moduli, int8_t *at, int64_t plane)
{
    static_assert(N % 16 == 0, "whole 16-byte stores");
#pragma unroll
    for (int li = 0; li < kMaxModuli; ++li) {
        if (li >= moduli)
            break;
        const int mod = modulus_at(li);
        uint32_t packed[N / 4];
#pragma unroll
        for (int w = 0; w < N / 4; ++w)
            packed[w] = 0;
#pragma unroll
        for (int e = 0; e < N; ++e) {
            int res;
            if constexpr (std::is_same<Int, int>::value) {
                /* |x| <= 2^30: x + m 2^23 is in [0, 2^32) and x's class, and an unsigned
                 * remainder by a constant is a multiply-high, a shift and a multiply-add */
                const uint32_t u = (uint32_t)x(e) + ((uint32_t)mod << 23);
                res = (int)(u % (uint32_t)mod);
            } else {
                res = (int)(x(e) % mod);
                res += res < 0 ? mod : 0;
            }
            res -= res > mod - 1 - mod / 2 ? mod : 0;
            packed[e / 4] |= (uint32_t)(uint8_t)(int8_t)res << (8 * (e % 4));
        }
#pragma unroll
        for (int w = 0; w < N / 16; ++w)
            *reinterpret_cast<uint4 *>(at + li * plane + 16 * w) =
                uint4{packed[4 * w], packed[4 * w + 1], packed[4 * w + 2], packed[4 * w + 3]};
    }
}

/* Lines (rows of op(A) or columns of op(B): element q of line r at X[r * line_stride +
 * q * q_stride]) as integers of `bits` bits and their residues: residue plane l at
 * out + l * lines * kp, line r's kp bytes from r * kp (zeros past k and for lines not taken).
 * A block moves 32 lines x 128 of k at a time through shared memory (ResidueTileLoader), read
 * along whichever of the two is contiguous (ALONG_Q: along q); then each thread takes 16
 * consecutive q of a line (4 16-byte reads of the tile) and writes their 16 bytes a modulus in
 * one 16-byte store: a warp's store is 4 lines' whole 128 bytes.  Aligned: the workspace's
 * parts start at multiples of 256 bytes of its base (cudaMalloc's, 256-byte aligned; Workspace
 * above), kp is a multiple of 16, so planes (l lines kp) and rows (r kp) start at multiples
 * of 16, and so does each thread's q (a tile's 128, a thread's 16; kp's tail, a multiple of 16,
 * is whole threads').  Where a block has more than one tile (TG_OZ2_RESIDUE_TILES, or k very
 * long), it reads the next while it converts this one. */
/* 78 and 80 registers as ptxas chooses, 3 blocks an SM (12 K reads in flight, 48 KiB); bounded
 * to 64 or 80 (4 or 3 blocks) ptxas spilled 32 to 40 bytes. */
template <bool ALONG_Q>
__global__ void __launch_bounds__(256)
    to_residues(const float *X, int64_t line_stride, int64_t q_stride, int64_t lines, int64_t k,
                int64_t kp, const tg_oz2_line *info, int cap, const DevicePlan *plan, bool of_a,
                int8_t *out)
{
    __shared__ __align__(16) float tile[32][128]; /* [line][q], chunks by residue_chunk */
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const int64_t r0 = blockIdx.x * (int64_t)32;
    const int line = tid / 8, seg = tid % 8; /* the thread's q: 16 seg .. 16 seg + 15 */
    const int64_t r = r0 + line, first = blockIdx.y * (int64_t)128, step = gridDim.y * (int64_t)128;
    ResidueTileLoader<ALONG_Q> next; /* the first tile's reads in flight with the plan's */
    next.load(X, line_stride, q_stride, lines, k, r0, first);
    const int moduli = plan->moduli;
    if (moduli == 0)
        return; /* every output goes to FMA */
    const int bits = of_a ? plan->bits_a : plan->bits_b;
    const tg_oz2_line l = r < lines ? info[r] : tg_oz2_line{1, 0, 0, 0};
    const bool take = tg_oz2_line_taken(&l, cap);
    /* ozaki2.c's to_integers: ldexp by the line's shift, here a multiply by the power of two
     * (exact: the shift lies in [1 - 128, 62 + 148]) */
    const double scale = tg_pow2(l.nonzero ? bits - l.e_max : 0);
    for (int64_t q0 = first; q0 < kp; q0 += step) {
        next.store(tile);
        __syncthreads();
        if (q0 + step < kp)
            next.load(X, line_stride, q_stride, lines, k, r0, q0 + step);
        const int64_t q = q0 + 16 * seg;
        if (r < lines && q < kp) { /* kp a multiple of 16: a thread's 16 q all below it */
            float f[16];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float4 c = thread_chunk(tile, line, seg, j);
                f[4 * j] = c.x, f[4 * j + 1] = c.y, f[4 * j + 2] = c.z, f[4 * j + 3] = c.w;
            }
            int8_t *const at = out + r * kp + q;
            if (bits <= 30) { /* |x| <= 2^bits: 32-bit remainders, a quarter of the work */
                int x[16];
#pragma unroll
                for (int e = 0; e < 16; ++e)
                    x[e] = take ? __double2int_rn((double)f[e] * scale) : 0;
                write_residues<16, int>([&](int e) { return x[e]; }, moduli, at, lines * kp);
            } else { /* each modulus converts afresh: 16 int64 held took 104 registers */
                write_residues<16, long long>(
                    [&](int e) { return take ? __double2ll_rn((double)f[e] * scale) : 0ll; },
                    moduli, at, lines * kp);
            }
        }
        __syncthreads();
    }
}

/* ---- reconstruct ------------------------------------------------------------------------ */

/* The rows of 4 neighbouring columns j .. j + width - 1 of C (as reconstruct below) with COUNT
 * moduli: the CRT's constants for COUNT, and so its limbs, known when compiled and held in
 * registers across the rows (read afresh from shared memory for each output, with the count a
 * variable, the CRT took 4 ms at 16384^2); a modulus's 4 residues in one 32-bit load. */
template <int COUNT>
__device__ __forceinline__ void reconstruct_columns(const tg_problem &p, int64_t j, int width,
                                                    const tg_oz2_line *rows, int cap,
                                                    const tg_oz2_line *cols,
                                                    const tg_oz2_crt &shared_crt, int bits_a,
                                                    int bits_b, const uint8_t *residues,
                                                    int64_t ldp, int64_t plane)
{
    bool take_col[4];
    int shift_col[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        const tg_oz2_line col = c < width ? cols[j + c] : tg_oz2_line{1, 0, 0, 0};
        take_col[c] = tg_oz2_line_taken(&col, cap);
        shift_col[c] = col.nonzero ? bits_b - col.e_max : 0;
    }
    /* C's 4 columns in one 16-byte access where they may be (each row's: ldc a multiple of 4) */
    const bool whole = width == 4 && take_col[0] && take_col[1] && take_col[2] && take_col[3] &&
                       p.ldc % 4 == 0 && reinterpret_cast<uintptr_t>(p.C + j) % 16 == 0;
    constexpr int kList[kMaxModuli] = {TG_OZ2_MODULI};
    constexpr int LIMBS = tg_oz2_crt_limbs(tg_oz2_crt_product(kList, COUNT));
    tg_oz2_crt crt; /* the members the count reads, each at a constant index: registers */
#pragma unroll
    for (int l = 0; l < COUNT; ++l) {
#pragma unroll
        for (int x = 0; x < LIMBS; ++x)
            crt.weight[l][x] = shared_crt.weight[l][x];
        crt.frac[l] = shared_crt.frac[l];
    }
#pragma unroll
    for (int x = 0; x < 2; ++x)
        crt.product[x] = shared_crt.product[x], crt.half[x] = shared_crt.half[x];
    if (COUNT == 0)
        return; /* every output is fma_left's */
    constexpr int N = COUNT > 0 ? COUNT : 1;
    /* row r's line and the residues of modulus l at residues + l * plane + r * ldp + j: byte c
     * of the word is column j + c's, in [0, m_l), and is u_l as it is (tg_oz2_crt_add_residue:
     * adding m_l, as for a signed product, would only move S by a multiple of M and F with it;
     * the CRT's C_hat is exact for either, so the same) */
    const auto load = [&](int64_t r, tg_oz2_line &line, uint32_t (&word)[N]) {
        line = rows[r];
        const uint8_t *const at = residues + r * ldp + j;
#pragma unroll
        for (int l = 0; l < COUNT; ++l) {
            if (width == 4) { /* ldp and j are multiples of 4 */
                word[l] = *reinterpret_cast<const uint32_t *>(at + l * plane);
            } else {
                word[l] = 0;
                for (int c = 0; c < width; ++c)
                    word[l] |= (uint32_t)at[l * plane + c] << (8 * c);
            }
        }
    };
    /* up to 8 moduli, the next row's loads in flight while this row's CRTs run (a row's
     * loads, then its arithmetic, took 2.0 ms at 16384^3, 3.2 GB through); past 8, the
     * registers that takes would spill */
    constexpr bool kAhead = COUNT <= 8;
    const int64_t step = gridDim.y * (int64_t)8;
    int64_t i = blockIdx.y * (int64_t)8 + threadIdx.y;
    tg_oz2_line row;
    uint32_t word[N];
    if (kAhead && i < p.m)
        load(i, row, word);
    for (; i < p.m; i += step) {
        tg_oz2_line next_row;
        uint32_t next_word[N];
        if (!kAhead)
            load(i, row, word);
        else if (i + step < p.m)
            load(i + step, next_row, next_word);
        const bool taken = tg_oz2_line_taken(&row, cap);
        const auto advance = [&] {
            if (!kAhead)
                return;
            row = next_row;
#pragma unroll
            for (int l = 0; l < COUNT; ++l)
                word[l] = next_word[l];
        };
        if (!taken) { /* a line the scheme leaves: fma_left's */
            advance();
            continue;
        }
        const int shift_row = row.nonzero ? bits_a - row.e_max : 0;
        double value[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            if (c >= width || !take_col[c])
                continue; /* past C, or a column the scheme leaves */
            tg_oz2_crt_sum sum = {{0, 0, 0, 0}, 0};
            /* byte c of each word, zero-extended, by one byte permute (prmt) */
#pragma unroll
            for (int l = 0; l < COUNT; ++l)
                tg_oz2_crt_add_residue(&sum, &crt, l, __byte_perm(word[l], 0u, 0x4440u + c),
                                       LIMBS);
            const tg_i128 c_hat = tg_oz2_crt_value(&sum, &crt, LIMBS);
            /* with 2 limbs C_hat fits int64, whose conversion rounds as i128_to_double does */
            const double rounded = LIMBS == 2 ? (double)(int64_t)c_hat : i128_to_double(c_hat);
            /* shifts are bits - e_max, in [1 - 128, 62 + 148]: the power of two lies in
             * [2^-420, 2^254], and multiplying by it is ldexp exactly */
            value[c] = rounded * tg_pow2(-(shift_row + shift_col[c])) * (double)p.alpha;
        }
        /* C's element: alpha C_hat, plus beta C, one rounding to float (tg_oz2_blend) */
        float *const out = p.C + i * p.ldc + j;
        if (whole) { /* 4 columns taken, 16 bytes aligned: one load of C and one store */
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (p.beta != 0.0f)
                v = *reinterpret_cast<const float4 *>(out);
            v = make_float4(tg_oz2_blend(value[0], p.beta, &v.x),
                            tg_oz2_blend(value[1], p.beta, &v.y),
                            tg_oz2_blend(value[2], p.beta, &v.z),
                            tg_oz2_blend(value[3], p.beta, &v.w));
            *reinterpret_cast<float4 *>(out) = v;
        } else {
#pragma unroll
            for (int c = 0; c < 4; ++c)
                if (c < width && take_col[c])
                    out[c] = tg_oz2_blend(value[c], p.beta, &out[c]);
        }
        advance();
    }
}

/* reconstruct_columns for the count chosen, of those in [LO, HI] (each compiled). */
template <int LO, int HI, int... COUNTS, class... Args>
__device__ __forceinline__ void reconstruct_counted(int count,
                                                    std::integer_sequence<int, COUNTS...>,
                                                    const Args &...args)
{
    const auto one = [&](auto counted) {
        constexpr int kCount = decltype(counted)::value;
        if constexpr (kCount >= LO && kCount <= HI)
            if (count == kCount)
                reconstruct_columns<kCount>(args...);
    };
    (one(std::integral_constant<int, COUNTS>{}), ...);
}

/* One batch item's C (p's pointers at the item): a thread 4 neighbouring columns, 128 columns
 * x 8 rows a block, rows in steps of the grid; C_hat by the CRT without 128-bit products
 * (ozaki2.h's tg_oz2_crt), rounded as ozaki2.c rounds its 128-bit integer.  residues: plane l
 * at residues + l * plane, row i at i * ldp (ldp a multiple of 4).  Only where the count
 * chosen lies in [LO, HI] (a count of the CRT's limbs: 0 to 8 moduli take 2, 9 to 12 take 3,
 * 13 to 16 take 4): one kernel for all 17 took the registers of 16 moduli, 165, and so a block
 * an SM, for 8. */
/* 2 blocks an SM for up to 8 moduli, whose next row's residues are loaded ahead: 120 registers */
template <int LO, int HI>
__global__ void __launch_bounds__(256, HI <= 8 ? 2 : 1) reconstruct(const tg_problem p, const tg_oz2_line *rows,
                                                   const tg_oz2_line *cols, int cap,
                                                   const DevicePlan *plan,
                                                   const uint8_t *residues, int64_t ldp,
                                                   int64_t plane)
{
    /* the CRT's constants: once a block into shared memory, then into each thread's registers */
    __shared__ __align__(16) tg_oz2_crt crt;
    static_assert(sizeof(tg_oz2_crt) % 4 == 0 && sizeof(tg_oz2_crt) / 4 <= 256, "one word a thread");
    const int tid = threadIdx.y * 32 + threadIdx.x;
    if (tid < (int)(sizeof(tg_oz2_crt) / 4))
        reinterpret_cast<uint32_t *>(&crt)[tid] = reinterpret_cast<const uint32_t *>(&plan->crt)[tid];
    __syncthreads();
    const int64_t j = (blockIdx.x * (int64_t)32 + threadIdx.x) * 4;
    if (j >= p.n || crt.moduli < LO || crt.moduli > HI)
        return;
    const int width = p.n - j < 4 ? (int)(p.n - j) : 4;
    /* read once: C's stores could alias plan, as far as the compiler knows */
    const int bits_a = plan->bits_a, bits_b = plan->bits_b;
    reconstruct_counted<LO, HI>(crt.moduli, std::make_integer_sequence<int, kMaxModuli + 1>{}, p,
                                j, width, rows, cap, cols, crt, bits_a, bits_b, residues, ldp,
                                plane);
}

/* The outputs of C that lie on a line the scheme leaves, each as ozaki2.c's fma_element: a
 * float64 FMA dot product in k order, alpha, beta, one rounding to float; once for the whole of
 * C after its panels (the columns' pass, run a panel at a time, read all of op(A) in each:
 * 1.9 ms a panel at 16384^3 on spread data's 3 left columns).  LEFT_ROWS: the rows left
 * (left_lines from 0) across C; else the columns left (from m), down the rows taken.  A block
 * takes 8 left lines (a warp each) x 32 outputs along them, the other operand's 32 x 32 tile of
 * k shared by the 8 through shared memory and read along whichever side is contiguous; groups
 * of 8 lines in steps of the grid.  Nothing where no such line is left.  (A thread an output,
 * reading both operands itself, took 6 ms at 16384^3 on spread data's left lines.) */
template <bool LEFT_ROWS>
__global__ void __launch_bounds__(256) fma_left(const tg_problem p,
                                                const tg_oz2_line *rows, int cap,
                                                const int *left_lines, const Survey *survey)
{
    __shared__ float line_tile[8][32];  /* [line][q] */
    __shared__ float other_tile[32][33]; /* [q][output along the line] */
    const int64_t lines = survey->left[LEFT_ROWS ? 0 : 1];
    const int *const list = left_lines + (LEFT_ROWS ? 0 : p.m);
    const int64_t along = LEFT_ROWS ? p.n : p.m; /* outputs along a line */
    /* element q of the operand that runs along the lines, and of the one that runs across */
    const float *const other = LEFT_ROWS ? p.B : p.A;
    const int64_t other_q = LEFT_ROWS ? p.b_rs : p.a_cs, other_f = LEFT_ROWS ? p.b_cs : p.a_rs;
    const int64_t f0 = blockIdx.x * (int64_t)32, f = f0 + threadIdx.x;
    const bool other_along_q = other_q == 1 || other_f != 1;
    for (int64_t g0 = blockIdx.y * (int64_t)8; g0 < lines; g0 += gridDim.y * (int64_t)8) {
        /* this warp's line: a row of op(A) or a column of op(B) */
        const int64_t g = g0 + threadIdx.y;
        const int64_t line = g < lines ? list[g] : -1;
        double acc = 0.0;
        for (int64_t q0 = 0; q0 < p.k; q0 += 32) {
            const int64_t q = q0 + threadIdx.x;
            const float *const at = LEFT_ROWS ? p.A + line * p.a_rs + q * p.a_cs
                                              : p.B + q * p.b_rs + line * p.b_cs;
            line_tile[threadIdx.y][threadIdx.x] = line >= 0 && q < p.k ? *at : 0.0f;
            for (int t = threadIdx.y; t < 32; t += 8) {
                const int tq = other_along_q ? threadIdx.x : t;
                const int tf = other_along_q ? t : threadIdx.x;
                other_tile[tq][tf] = q0 + tq < p.k && f0 + tf < along
                                         ? other[(q0 + tq) * other_q + (f0 + tf) * other_f]
                                         : 0.0f;
            }
            __syncthreads();
            const int steps = (int)(p.k - q0 < 32 ? p.k - q0 : 32);
            for (int t = 0; t < steps; ++t)
                acc = __fma_rn((double)line_tile[threadIdx.y][t],
                               (double)other_tile[t][threadIdx.x], acc);
            __syncthreads();
        }
        if (line < 0 || f >= along)
            continue;
        const int64_t i = LEFT_ROWS ? line : f, j = LEFT_ROWS ? f : line;
        if (!LEFT_ROWS && !tg_oz2_line_taken(&rows[i], cap))
            continue; /* the rows' pass wrote it */
        float *const c = p.C + i * p.ldc + j;
        *c = tg_oz2_blend(__dmul_rn((double)p.alpha, acc), p.beta, c); /* not fused */
    }
}

/* ---- the launch ------------------------------------------------------------------------- */

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* The products' residues of all moduli take 16 bytes an output: C goes in panels of columns
 * whose residues fit this, so that a large C needs no more than this (at 65536 x 32768 all at
 * once they would take 34 GB), and 256-column panels at the least.  (The emulated build sets
 * 1: panels of 256 columns, so that its tests cross panels.) */
#ifndef TG_OZ2_PRODUCT_BUDGET
#define TG_OZ2_PRODUCT_BUDGET (int64_t(1) << 30)
#endif
constexpr int64_t kProductBudget = TG_OZ2_PRODUCT_BUDGET;

/* The columns of C a panel holds: as many whole blocks of the INT8 product as the budget fits. */
int64_t panel_columns(const tg_problem &p)
{
    const int64_t fit = kProductBudget / (kMaxModuli * std::max<int64_t>(p.m, 1));
    return std::min(p.n, std::max<int64_t>(int8_gemm::kBN, fit / int8_gemm::kBN * int8_gemm::kBN));
}

/* Where each part lies in the workspace, 256-byte aligned. */
struct Workspace {
    int64_t kp, kr, panel, ldp;
    /* the lines' sums: U of m rows, then n columns; Q of them alike; the rows' largest block
     * minima */
    int64_t sum_count;
    size_t rows, cols, plan, survey, sums, left, least, scales, residues_a, residues_b, products,
        bytes;

    explicit Workspace(const tg_problem &p)
        : kp(round_up(p.k, 16)), kr(round_up(tg_oz2_blocks(p.k), 16)), panel(panel_columns(p)),
          ldp(round_up(panel, 4)), sum_count(2 * (p.m + p.n) + p.m)
    {
        size_t at = 0;
        const auto take = [&at](size_t bytes) {
            const size_t here = at;
            at += (bytes + 255) / 256 * 256;
            return here;
        };
        rows = take(sizeof(tg_oz2_line) * (size_t)p.m);
        cols = take(sizeof(tg_oz2_line) * (size_t)p.n);
        plan = take(sizeof(DevicePlan));
        survey = take(sizeof(Survey));
        sums = take(sizeof(unsigned long long) * (size_t)sum_count);
        left = take(sizeof(int) * (size_t)(p.m + p.n)); /* the lines left, listed */
        least = take(sizeof(float) * (size_t)(p.m * tg_oz2_blocks(p.k))); /* rows' block minima */
        scales = take(sizeof(int) * (size_t)p.m);                          /* and R's scales */
        /* the bound rule's leading magnitudes in plane 0, its block-reduced operands (kr <= kp)
         * in plane 1 */
        residues_a = take((size_t)(kMaxModuli * p.m * kp));
        residues_b = take((size_t)(kMaxModuli * panel * kp));
        /* the moduli's int8 residues, or P's INT32 sums in the first quarter and R's in the
         * second */
        static_assert(2 * sizeof(int32_t) <= kMaxModuli, "P's and R's INT32 sums fit");
        products = take((size_t)(kMaxModuli * p.m * ldp));
        bytes = at;
    }
};

/* The host's tables for k (forced: that many moduli), kept for the last k this thread
 * asked: building them calls ozaki2.c's functions a few thousand times. */
const Choice &choice_for(int64_t k, int forced)
{
    thread_local Choice cached;
    thread_local int64_t cached_k = -1;
    thread_local int cached_forced = -1;
    if (k == cached_k && forced == cached_forced)
        return cached;
    Choice &c = cached;
    c = Choice{};
    c.forced = forced;
    if (forced > 0) {
        c.cap = 1 << 30;
        tg_oz2_forced_bits(forced, k, &c.forced_bits_a, &c.forced_bits_b);
    } else {
        c.cap = tg_oz2_range_for_moduli(kMaxModuli, k);
        c.floor_bits = tg_oz2_floor_bits(k);
        for (int r = 0; r <= c.cap && r <= kMaxRange; ++r)
            c.bits[r] = (int8_t)tg_oz2_bits_for_range(r, k);
    }
    cached_k = k, cached_forced = forced;
    return c;
}

/* scan_lines for lines of X (element q of line r at X[r * line_stride + q * q_stride]). */
cudaError_t launch_scan(const float *X, int64_t line_stride, int64_t q_stride, int64_t lines,
                        int64_t k, tg_oz2_line *info, cudaStream_t stream)
{
    if (q_stride == 1 || line_stride != 1)
        scan_lines<true><<<ceil_div(lines, 8), dim3(32, 8), 0, stream>>>(X, line_stride,
                                                                         q_stride, lines, k, info);
    else
        scan_lines<false><<<ceil_div(lines, 32), dim3(32, 32), 0, stream>>>(
            X, line_stride, q_stride, lines, k, info);
    return cudaGetLastError();
}

/* A kernel of tiles of 32 lines x `width` of k through shared memory (to_leading's and
 * to_residues': 128), its form (ALONG_Q) by how X's lines lie:
 * launch(std::bool_constant<ALONG_Q>, grid).  About `tiles_per_block` tiles a block (each reads
 * its next tile while it works on one), and TG_OZ2_LEAST_BLOCKS blocks at least.  (The
 * emulated build sets 1, so that its small tests take several tiles a block.) */
#ifndef TG_OZ2_LEAST_BLOCKS
#define TG_OZ2_LEAST_BLOCKS 2048
#endif
template <class Launch>
cudaError_t launch_line_tiles(int64_t line_stride, int64_t q_stride, int64_t lines, int64_t kp,
                              int64_t width, int64_t tiles_per_block, Launch launch)
{
    const int64_t line_blocks = ceil_div(lines, 32), tiles = ceil_div(kp, width);
    const int64_t along = std::max<int64_t>(ceil_div(tiles, tiles_per_block),
                                            ceil_div(TG_OZ2_LEAST_BLOCKS, line_blocks));
    const dim3 grid((unsigned)line_blocks, (unsigned)std::min<int64_t>({along, tiles, 65535}));
    if (q_stride == 1 || line_stride != 1)
        launch(std::true_type{}, grid);
    else
        launch(std::false_type{}, grid);
    return cudaGetLastError();
}

/* to_leading's arguments past the leading magnitudes' */
struct LeadingExtras {
    unsigned long long *up, *sq;
    float *least;
    unsigned long long *most;
    int8_t *blocks;
    int64_t kr;
    const int *when;
};

/* to_leading's tiles a block: 2 (a line's 8 blocks of R, one 32-byte piece; 256 of k, the
 * bytes 8 tiles of 32 took before the tiles were 128 wide).  The emulated build sets 3, so that
 * a block writes both a whole pair and a lone tile's 4 blocks. */
#ifndef TG_OZ2_LEADING_TILES
#define TG_OZ2_LEADING_TILES 2
#endif

cudaError_t launch_leading(const float *X, int64_t line_stride, int64_t q_stride, int64_t lines,
                           int64_t k, int64_t kp, const tg_oz2_line *info, int cap, int8_t *out,
                           const LeadingExtras &x, cudaStream_t stream)
{
    /* the tiles to_leading runs to: the block-reduced rows may pass kp (kr blocks of 32) */
    const int64_t end = std::max(kp, x.least || x.blocks ? x.kr * TG_OZ2_BLOCK : 0);
    /* 32 lines x 128 of k a tile (a thread's 16 leading magnitudes, one store), consecutive
     * tiles a block; each block adds its lines' sums atomically (a tile of 32 x 32 a block,
     * 16384 lines x 512 tiles, queued 16 M atomics on 32 K addresses) */
    return launch_line_tiles(line_stride, q_stride, lines, end, 128, TG_OZ2_LEADING_TILES,
                             [&](auto along_q, dim3 grid) {
        to_leading<decltype(along_q)::value><<<grid, dim3(32, 8), 0, stream>>>(
            X, line_stride, q_stride, lines, k, kp, info, cap, out, x.up, x.sq, x.least, x.most,
            x.blocks, x.kr, x.when);
    });
}

/* The bound rule's passes (ozaki2.h): leading magnitudes of op(A) and, panel by panel, of
 * op(B) (in the first residue planes) with their lines' sums; where survey says R is formed,
 * the block-reduced operands (in the second residue planes), their INT8 product R (INT32, in
 * the products' second quarter) and each output's need reduced into survey; then whether P
 * pays (weigh_bound), and where it does, P (INT32, in the products' first quarter; op(B)'s
 * leading magnitudes again where C has more than one panel) and each output's need and
 * magnitude. */
cudaError_t bound_pass(const tg_problem &p, const Workspace &w, char *base, const Choice &choice,
                       cudaStream_t stream)
{
    const tg_oz2_line *const rows = reinterpret_cast<const tg_oz2_line *>(base + w.rows);
    const tg_oz2_line *const cols = reinterpret_cast<const tg_oz2_line *>(base + w.cols);
    Survey *const survey = reinterpret_cast<Survey *>(base + w.survey);
    unsigned long long *const up_rows = reinterpret_cast<unsigned long long *>(base + w.sums);
    unsigned long long *const up_cols = up_rows + p.m;
    unsigned long long *const sq_rows = up_cols + p.n, *const sq_cols = sq_rows + p.m;
    unsigned long long *const most = sq_cols + p.n;
    float *const least = reinterpret_cast<float *>(base + w.least);
    int *const scales = reinterpret_cast<int *>(base + w.scales);
    int8_t *const lead_a = reinterpret_cast<int8_t *>(base + w.residues_a);
    int8_t *const lead_b = reinterpret_cast<int8_t *>(base + w.residues_b);
    int8_t *const block_a = lead_a + p.m * w.kp, *const block_b = lead_b + w.panel * w.kp;
    int32_t *const lower = reinterpret_cast<int32_t *>(base + w.products);
    int32_t *const reduced = lower + p.m * w.ldp;
    static const int kCut[1] = {0}; /* int8_gemm.cuh: modulus 0 cuts the sums */
    cudaError_t e;
    if ((e = launch_leading(p.A, p.a_rs, p.a_cs, p.m, p.k, w.kp, rows, choice.cap, lead_a,
                            {up_rows, sq_rows, least, most, nullptr, w.kr, nullptr}, stream)) !=
        cudaSuccess)
        return e;
    to_block_floors<<<ceil_div(p.m * w.kr, 256), 256, 0, stream>>>(least, most, rows, choice.cap,
                                                                   p.m, p.k, w.kr, block_a,
                                                                   scales);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    const bool panels = w.panel < p.n;
    for (int pass = 0; pass < 2; ++pass) { /* R, then P */
        if (pass == 1) {
            weigh_bound<<<1, 256, 0, stream>>>(p.m, p.n, p.k, choice, sq_rows, survey);
            if ((e = cudaGetLastError()) != cudaSuccess)
                return e;
        }
        for (int64_t j0 = 0; j0 < p.n; j0 += w.panel) {
            const int64_t n = std::min(w.panel, p.n - j0);
            const LeadingExtras first = {up_cols + j0, sq_cols + j0, nullptr, nullptr, block_b,
                                         w.kr, nullptr};
            const LeadingExtras again = {nullptr, nullptr, nullptr, nullptr, nullptr, 0,
                                         &survey->product};
            if ((pass == 0 || panels) &&
                (e = launch_leading(p.B + j0 * p.b_cs, p.b_cs, p.b_rs, n, p.k, w.kp, cols + j0,
                                    choice.cap, lead_b, pass == 0 ? first : again, stream)) !=
                    cudaSuccess)
                return e;
            if ((e = pass == 0 ? int8_gemm::launch(block_a, block_b, reduced, p.m, n, w.kr, 1,
                                                   &survey->reduced, kCut, w.ldp, p.m * w.ldp,
                                                   stream)
                               : int8_gemm::launch(lead_a, lead_b, lower, p.m, n, w.kp, 1,
                                                   &survey->product, kCut, w.ldp, p.m * w.ldp,
                                                   stream)) != cudaSuccess)
                return e;
            /* 4 columns and 16 rows a thread: its block's reduction at every output took 0.5 ms
             * a panel of 16384 x 2048 */
            const dim3 grid(ceil_div(n, 128), std::min(ceil_div(p.m, 8 * 16), 65535u));
            bound_needs<<<grid, dim3(32, 8), 0, stream>>>(
                p.m, n, p.k, rows, cols + j0, up_rows, up_cols + j0, choice,
                pass == 0 ? reduced : lower, pass == 0 ? scales : nullptr, w.ldp, survey);
            if ((e = cudaGetLastError()) != cudaSuccess)
                return e;
        }
    }
    return cudaSuccess;
}

/* to_residues' tiles a block: one (at 32 x 32, 8 in turn took 3.6 ms at 16384^2 where one took
 * 2.1, before a block read its next tile while it worked on one).  The emulated build sets 2,
 * so that a block's next tile is exercised. */
#ifndef TG_OZ2_RESIDUE_TILES
#define TG_OZ2_RESIDUE_TILES 1
#endif

cudaError_t launch_residues(const float *X, int64_t line_stride, int64_t q_stride, int64_t lines,
                            int64_t k, int64_t kp, const tg_oz2_line *info, int cap,
                            const DevicePlan *plan, bool of_a, int8_t *out, cudaStream_t stream)
{
    /* 32 lines x 128 of k a tile (a thread's 16 bytes a modulus, one store) */
    return launch_line_tiles(line_stride, q_stride, lines, kp, 128, TG_OZ2_RESIDUE_TILES,
                             [&](auto along_q, dim3 grid) {
        to_residues<decltype(along_q)::value><<<grid, dim3(32, 8), 0, stream>>>(
            X, line_stride, q_stride, lines, k, kp, info, cap, plan, of_a, out);
    });
}

/* One batch item (p's pointers at it). */
cudaError_t run_item(const tg_problem &p, const Workspace &w, char *base, const Choice &choice,
                     cudaStream_t stream)
{
    tg_oz2_line *const rows = reinterpret_cast<tg_oz2_line *>(base + w.rows);
    tg_oz2_line *const cols = reinterpret_cast<tg_oz2_line *>(base + w.cols);
    DevicePlan *const plan = reinterpret_cast<DevicePlan *>(base + w.plan);
    Survey *const survey = reinterpret_cast<Survey *>(base + w.survey);
    unsigned long long *const sums = reinterpret_cast<unsigned long long *>(base + w.sums);
    int *const left_lines = reinterpret_cast<int *>(base + w.left);
    int8_t *const res_a = reinterpret_cast<int8_t *>(base + w.residues_a);
    int8_t *const res_b = reinterpret_cast<int8_t *>(base + w.residues_b);
    uint8_t *const products = reinterpret_cast<uint8_t *>(base + w.products);
    cudaError_t e;
    if ((e = launch_scan(p.A, p.a_rs, p.a_cs, p.m, p.k, rows, stream)) != cudaSuccess ||
        (e = launch_scan(p.B, p.b_cs, p.b_rs, p.n, p.k, cols, stream)) != cudaSuccess)
        return e;
    survey_lines<<<1, 256, 0, stream>>>(rows, p.m, cols, p.n, choice, sums, w.sum_count,
                                        left_lines, survey);
    if ((e = cudaGetLastError()) != cudaSuccess ||
        (choice.forced == 0 && (e = bound_pass(p, w, base, choice, stream)) != cudaSuccess))
        return e;
    choose_plan<<<1, 32, 0, stream>>>(p.m, p.n, p.k, choice, survey, plan);
    if ((e = cudaGetLastError()) != cudaSuccess ||
        (e = launch_residues(p.A, p.a_rs, p.a_cs, p.m, p.k, w.kp, rows, choice.cap, plan, true,
                             res_a, stream)) != cudaSuccess)
        return e;
    for (int64_t j0 = 0; j0 < p.n; j0 += w.panel) {
        tg_problem part = p; /* columns j0 .. j0 + part.n - 1 of C */
        part.n = std::min(w.panel, p.n - j0);
        part.B = p.B + j0 * p.b_cs;
        part.C = p.C + j0;
        if ((e = launch_residues(part.B, p.b_cs, p.b_rs, part.n, p.k, w.kp, cols + j0,
                                 choice.cap, plan, false, res_b, stream)) != cudaSuccess ||
            (e = int8_gemm::launch_as_residues(res_a, res_b, products, p.m, part.n, w.kp,
                                               kMaxModuli, &plan->moduli, tg_oz2_moduli, w.ldp,
                                               p.m * w.ldp, stream)) != cudaSuccess)
            return e;
        /* 4 columns and 16 rows a thread, for the CRT's constants it loads */
        const dim3 grid(ceil_div(part.n, 128), std::min(ceil_div(p.m, 8 * 16), 65535u));
        /* a kernel a class of counts: the one the count falls in does the work, the others leave
         * at once */
        for (const auto kernel : {reconstruct<0, 8>, reconstruct<9, 12>, reconstruct<13, 16>})
            kernel<<<grid, dim3(32, 8), 0, stream>>>(part, rows, cols + j0, choice.cap, plan,
                                                     products, w.ldp, p.m * w.ldp);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
    }
    /* 8 groups of 8 lines in y: few blocks to leave at once where none is left */
    fma_left<true><<<dim3(ceil_div(p.n, 32), 8), dim3(32, 8), 0, stream>>>(p, rows, choice.cap,
                                                                         left_lines, survey);
    fma_left<false><<<dim3(ceil_div(p.m, 32), 8), dim3(32, 8), 0, stream>>>(p, rows, choice.cap,
                                                                          left_lines, survey);
    return cudaGetLastError();
}

int run(const tg_problem *p, void *stream, void *workspace, int forced)
{
    const Workspace w(*p);
    const Choice &choice = choice_for(p->k, forced);
    for (int64_t z = 0; z < p->batch; ++z) {
        const cudaError_t e = run_item(batch_item_problem(*p, z), w,
                                       static_cast<char *>(workspace), choice,
                                       (cudaStream_t)stream);
        if (e != cudaSuccess)
            return (int)e;
    }
    return (int)cudaSuccess;
}

size_t workspace_bytes(const tg_problem *p) { return Workspace(*p).bytes; }

/* Residues of the operands and of the products, written and read: with all 16 moduli, the
 * most. */
/* What the cost model counts past reading op(A) and op(B) once and writing C (tg_rung's
 * staged_bytes; its phases TG_PHASES_IN_TURN: these add to the products' time): the lines read
 * twice more (to_leading, to_residues), their leading magnitudes and residues written, R's INT32
 * written and read, the products' byte residues written and read.  The moduli are the count
 * uniform data takes up to k = 2^14 (the regret corpus's data): an estimate, not a bound. */
double staged_bytes(const tg_problem *p)
{
    constexpr double kTypicalModuli = 8;
    const double kp = (double)round_up(p->k, 16), m = (double)p->m, n = (double)p->n;
    const double lines = (m + n) * (8.0 * (double)p->k + (1.0 + kTypicalModuli) * kp);
    return (double)p->batch * (lines + m * n * (8.0 + 2.0 * kTypicalModuli));
}

int launch_with_workspace(const tg_problem *p, void *stream, void *workspace)
{
    return run(p, stream, workspace, 0);
}

const char *ozaki2_unsupported(const tg_problem *p)
{
#ifdef TG_BUILD_SM90A
    if (const char *why = int8_gemm::unsupported(p->m, p->n, round_up(p->k, 16)))
        return why;
    if (choice_for(p->k, 0).cap > kMaxRange)
        return "k is too large for the scheme's tables of line ranges";
    return nullptr;
#else
    (void)p;
    return TG_NO_SM90A_CODE;
#endif
}

} // namespace

extern "C" size_t tg_oz2_int8_workspace(const tg_problem *p) { return workspace_bytes(p); }

extern "C" int tg_oz2_int8_run(const tg_problem *p, void *stream, void *workspace,
                               int forced_moduli)
{
    return run(p, stream, workspace, forced_moduli);
}

extern "C" int tg_oz2_int8_chosen(const tg_problem *p, const void *workspace, void *stream,
                                  tg_oz2_int8_choice *out)
{
    const Workspace w(*p);
    const char *const base = static_cast<const char *>(workspace);
    DevicePlan plan;
    Survey survey;
    const cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e;
    if ((e = cudaMemcpyAsync(&plan, base + w.plan, sizeof plan, cudaMemcpyDeviceToHost, s)) !=
            cudaSuccess ||
        (e = cudaMemcpyAsync(&survey, base + w.survey, sizeof survey, cudaMemcpyDeviceToHost,
                             s)) != cudaSuccess ||
        (e = cudaStreamSynchronize(s)) != cudaSuccess)
        return (int)e;
    out->moduli = plan.moduli, out->bits_a = plan.bits_a, out->bits_b = plan.bits_b;
    out->int8_products = plan.moduli + survey.product;
    out->reduced_products = survey.reduced;
    return (int)cudaSuccess;
}

extern "C" int tg_int8_gemm_run(const int8_t *a, const int8_t *b, int32_t *c, int64_t m,
                                int64_t n, int64_t kp, int items, const int *active, int64_t ldc,
                                void *stream)
{
    return (int)int8_gemm::launch(a, b, c, m, n, kp, items, active, tg_oz2_moduli, ldc, m * ldc,
                                  (cudaStream_t)stream);
}

extern "C" const tg_rung tg_rung_ozaki2_int8 = {.name = "ozaki2_int8", .level = 11,
    .summary = "FP32 accuracy on the INT8 tensor cores (Ozaki scheme II): lines scaled by "
               "powers of two to integers, their residues modulo up to 16 moduli as int8, "
               "products by TMA + wgmma (128x256x128 block, 4 stages) left as byte residues, "
               "the CRT in 32-bit limbs, one rounding; lines with Inf, NaN or too wide a range "
               "by float64 FMA; in auto only where ranked 10% ahead",
    .block_rows = int8_gemm::kBM, .block_cols = int8_gemm::kBN, .in_auto = 1,
    .arith = TG_ARITH_INT8, .min_cc = 90, .launch = launch_needs_workspace,
    .unsupported = ozaki2_unsupported, .workspace_bytes = workspace_bytes,
    .staged_bytes = staged_bytes, .phases = TG_PHASES_IN_TURN,
    .launch_with_workspace = launch_with_workspace,
    /* Its speed depends on its data, which auto cannot see: the regret corpus and the tuned
     * table time uniform data, which takes the fewest moduli (8 at k <= 2^14); lines with wide
     * ranges take more (up to 16) and lines with Inf or NaN go to an FMA path.  Measured at
     * 105a6e4, spread data ran 1.26, 1.21 and 1.17 times slower than uniform at 4096^3, 8192^3
     * and 16384^3.  So auto ranks it 10% slower than measured or predicted. */
    .auto_margin = 1.10,
    /* Its passes over the operands (staged_bytes) and its ~25 launches cost more than its 8
     * INT8 products save over 3xTF32 unless 1/m + 1/n < about 0.5e-3 and k > about 1000.  The
     * regret corpus times it on exactly these cases (RETIME_ALL_AT_LEAST=1024,ozaki2_int8
     * scripts/device_corpus.sh), so the planner never picks an entry the corpus lacks. */
    .auto_min_side = 1024,
    /* An eighth of the smallest sm_90 part's 80 GB (6.03 GiB at 16384^3, 8.1 GiB on the
     * corpus's largest case): the handle keeps the slot once grown, and a failed cudaMalloc of
     * it fails the call (TG_ERROR_ALLOCATION). */
    .auto_max_workspace = 10.0 * 1024 * 1024 * 1024,
    /* each slice would repeat the passes over the operands and the launches */
    .unsplit = 1};
