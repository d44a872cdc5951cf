/*
 * The fast CPU path: a GotoBLAS/BLIS-style cache-blocked SGEMM in portable C.
 *
 * Loop nest (BLIS names), outermost first:
 *   jc  over n in NC columns      B block KC x NC packed once, shared by all threads (L3)
 *   pc  over k in KC              first pass applies beta, later passes accumulate
 *   ic  over m in MC rows         each thread packs its own A block MC x KC (its L2)
 *   jr  over NR columns           one packed B micro-panel KC x NR (L1)
 *   ir  over MR rows              micro-kernel: MR x NR accumulators in registers
 *
 * Blocking, chosen for AVX2 + FMA (16 ymm registers, 2 FMA pipes) and a Zen 3-sized cache
 * (32 KiB L1d and 512 KiB L2 per core, 32 MiB L3), as BLIS does for zen sgemm:
 *   MR = 6, NR = 16  12 accumulators of 8 floats + 2 B vectors + 1 broadcast = 15 registers,
 *                    enough independent FMAs (12) to hide a 4-cycle latency on 2 pipes.
 *   KC = 320         B micro-panel 320 x 16 floats = 20 KiB stays in L1 next to the streamed
 *                    7.5 KiB A micro-panel; a longer KC spreads the C tile's load and store over
 *                    more FMAs (on a noisy 2-core Zen 3 VM, 320-384 ran 5-10% faster than 256).
 *   MC = 120         A block 120 x 320 floats = 150 KiB, under a third of L2.
 *   NC = 4080        B block 320 x 4080 floats = 5 MiB, shared in L3.
 * Packing zero-pads partial micro-panels, so the micro-kernel always runs a full MR x NR tile
 * and only the store knows about edges.  Packing reads through the general strides of
 * problem.h, so every transpose and layout gets the same fast kernel.
 *
 * Portability: the kernel uses GCC/Clang vector extensions (8-float vectors), which compile
 * to AVX2 with -mavx2 -mfma / -march=native and to pairs of SSE/NEON registers elsewhere.
 * Threads: the library's own pool (pool.h), which cannot take the process down when a thread
 * cannot be created; OpenMP, where the build has it, only says how many (thread_count).
 * Benchmark: build bench/cpu_vs_openblas.c and run `cpu_vs_openblas 512 1024 2048`.
 */
#include "cpu.h"
#include "pool.h"
#include "../internal.h" /* TG_FAULT (error.h) */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* The cache blocking can be set at build time (-DTG_CPU_KC=256 ...) for tuning. */
#ifndef TG_CPU_KC
#define TG_CPU_KC 320
#endif
#ifndef TG_CPU_MC
#define TG_CPU_MC 120
#endif
#ifndef TG_CPU_NC
#define TG_CPU_NC 4080
#endif

enum {
    MR = 6,
    NR = 16,
    KC = TG_CPU_KC,
    MC = TG_CPU_MC, /* multiple of MR */
    NC = TG_CPU_NC, /* multiple of NR */
    BUF_ALIGN = 64,
};

/* Below this many multiply-adds, packing costs more than it saves. */
#define SMALL_PROBLEM_FLOPS (32 * 32 * 32)

#if defined(__GNUC__) || defined(__clang__)
#define TG_HAVE_VECTOR_EXT 1
typedef float v8f __attribute__((vector_size(32)));
#endif

/*
 * In ISO C mode (-std=c11) GCC turns off FMA contraction; the kernel needs it to reach peak,
 * and any summation order is within the error bound.  Clang contracts by default.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define TG_CONTRACT_FMA __attribute__((optimize("fp-contract=fast")))
#else
#define TG_CONTRACT_FMA
#endif

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* C = beta * C without reading C when beta == 0: the whole answer when alpha == 0 or k == 0. */
static void scale_c(float *C, int64_t ldc, int64_t m, int64_t n, float beta)
{
    for (int64_t i = 0; i < m; ++i) {
        float *row = C + i * ldc;
        if (beta == 0.0f)
            memset(row, 0, (size_t)n * sizeof(float));
        else if (beta != 1.0f)
            for (int64_t j = 0; j < n; ++j)
                row[j] *= beta;
    }
}

/* Unblocked product for tiny problems and for when the packing buffers cannot be had: the
 * float64 reference on one batch item. */
static void simple_sgemm(const tg_problem *p, const float *A, const float *B, float *C)
{
    tg_problem item = *p;
    item.A = A, item.B = B, item.C = C, item.batch = 1;
    tg_ref_sgemm(&item);
}

/*
 * Pack op(A)[i0 .. i0+mc, p0 .. p0+kc] as ceil(mc / MR) micro-panels, each kc columns of MR
 * consecutive rows, zero rows past mc.
 */
static void pack_a(const tg_problem *p, const float *A, int64_t i0, int64_t mc, int64_t p0,
                   int64_t kc, float *restrict dst)
{
    for (int64_t ir = 0; ir < mc; ir += MR) {
        const int64_t rows = min64(MR, mc - ir);
        const float *src = A + (i0 + ir) * p->a_rs + p0 * p->a_cs;
        if (rows == MR && p->a_rs == 1) {
            /* transposed A: each column of the panel is contiguous */
            for (int64_t q = 0; q < kc; ++q)
                memcpy(dst + q * MR, src + q * p->a_cs, MR * sizeof(float));
        } else {
            for (int64_t q = 0; q < kc; ++q) {
                for (int64_t r = 0; r < rows; ++r)
                    dst[q * MR + r] = src[r * p->a_rs + q * p->a_cs];
                for (int64_t r = rows; r < MR; ++r)
                    dst[q * MR + r] = 0.0f;
            }
        }
        dst += kc * MR;
    }
}

/* Pack one micro-panel op(B)[p0 .. p0+kc, j0 .. j0+cols] as kc rows of NR, zero past cols. */
static void pack_b_panel(const tg_problem *p, const float *B, int64_t p0, int64_t kc, int64_t j0,
                         int64_t cols, float *restrict dst)
{
    const float *src = B + p0 * p->b_rs + j0 * p->b_cs;
    if (cols == NR && p->b_cs == 1) {
        /* row-major B: each row of the panel is contiguous */
        for (int64_t q = 0; q < kc; ++q)
            memcpy(dst + q * NR, src + q * p->b_rs, NR * sizeof(float));
        return;
    }
    for (int64_t q = 0; q < kc; ++q) {
        for (int64_t j = 0; j < cols; ++j)
            dst[q * NR + j] = src[q * p->b_rs + j * p->b_cs];
        for (int64_t j = cols; j < NR; ++j)
            dst[q * NR + j] = 0.0f;
    }
}

/*
 * C[0..mr, 0..nr] = alpha * (a_panel * b_panel) + beta * C, with a_panel kc x MR and b_panel
 * kc x NR packed; beta == 0 stores without reading C.
 */
#ifdef TG_HAVE_VECTOR_EXT
/* C rows are not aligned; memcpy is the portable unaligned vector access (one vmovups). */
#define LOAD8(dst_vec, src) memcpy(&(dst_vec), (src), sizeof(v8f))
#define STORE8(dst, src_vec) memcpy((dst), &(src_vec), sizeof(v8f))

TG_CONTRACT_FMA
static void micro_kernel(int64_t kc, const float *restrict a, const float *restrict b, float *C,
                         int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta)
{
    v8f acc[MR][2];
    for (int r = 0; r < MR; ++r)
        acc[r][0] = acc[r][1] = (v8f){0};

    const v8f *bv = (const v8f *)__builtin_assume_aligned(b, BUF_ALIGN);
    /* the C tile is touched only at the end; start its (likely) misses now */
    for (int r = 0; r < MR; ++r) {
        __builtin_prefetch(C + r * ldc, 1);
        __builtin_prefetch(C + r * ldc + NR - 1, 1);
    }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 4
#endif
    for (int64_t q = 0; q < kc; ++q) {
        const v8f b0 = bv[2 * q], b1 = bv[2 * q + 1];
        for (int r = 0; r < MR; ++r) {
            const float ar = a[q * MR + r];
            acc[r][0] += ar * b0;
            acc[r][1] += ar * b1;
        }
    }

    if (mr == MR && nr == NR) {
        for (int r = 0; r < MR; ++r) {
            float *c = C + r * ldc;
            v8f c0 = alpha * acc[r][0], c1 = alpha * acc[r][1];
            if (beta != 0.0f) {
                v8f old0, old1;
                LOAD8(old0, c);
                LOAD8(old1, c + 8);
                c0 += beta * old0;
                c1 += beta * old1;
            }
            STORE8(c, c0);
            STORE8(c + 8, c1);
        }
        return;
    }
    float tile[MR][NR];
    memcpy(tile, acc, sizeof tile);
    for (int64_t r = 0; r < mr; ++r)
        for (int64_t j = 0; j < nr; ++j)
            C[r * ldc + j] = alpha * tile[r][j] + (beta != 0.0f ? beta * C[r * ldc + j] : 0.0f);
}
#else
/* Plain C for compilers without vector extensions; the loops are simple enough to vectorize. */
static void micro_kernel(int64_t kc, const float *restrict a, const float *restrict b, float *C,
                         int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta)
{
    float acc[MR][NR] = {{0}};
    for (int64_t q = 0; q < kc; ++q)
        for (int r = 0; r < MR; ++r)
            for (int j = 0; j < NR; ++j)
                acc[r][j] += a[q * MR + r] * b[q * NR + j];
    for (int64_t r = 0; r < mr; ++r)
        for (int64_t j = 0; j < nr; ++j)
            C[r * ldc + j] = alpha * acc[r][j] + (beta != 0.0f ? beta * C[r * ldc + j] : 0.0f);
}
#endif

/*
 * Work is split into items (A block, column slice) shared out statically, so a thread's items
 * are consecutive and it repacks A only when its block changes.  Rows are dealt in whole
 * micro-panels, with the block count a multiple of the thread count, so no thread is left a
 * ragged extra block.  Only when there are too few row panels for that (a short, wide product)
 * are the columns cut into slices as well.
 */
typedef struct work_split {
    int64_t row_panels, n_ic; /* MR-row panels, A blocks */
    int64_t col_panels, n_slices; /* NR-column panels of the NC block, column slices */
} work_split;

static work_split split_work(int64_t m, int64_t nc, int nthreads)
{
    work_split w;
    w.row_panels = (m + MR - 1) / MR;
    w.n_ic = min64(w.row_panels, round_up((w.row_panels + MC / MR - 1) / (MC / MR), nthreads));
    w.col_panels = (nc + NR - 1) / NR;
    w.n_slices = w.n_ic % nthreads == 0 ? 1 : min64(w.col_panels, nthreads);
    return w;
}

/* Start of part i of `count` near-equal parts of `total` units of `unit` (i == count: the end). */
static int64_t part_start(int64_t i, int64_t count, int64_t total, int64_t unit)
{
    return i * total / count * unit;
}

/*
 * One batch item on the calling team.  Called by every thread of the team; each loop is shared
 * out in contiguous parts and followed by a barrier, as OpenMP's static `for` would be.
 */
static void blocked_item(const tg_problem *p, const float *A, const float *B, float *C,
                         float *b_buf, float *a_buf, tg_team *team, int tid)
{
    const int nthreads = team->size;
    int64_t lo, hi;
    /* k in near-equal blocks of at most KC (512 as 256 + 256, not 320 + 192) */
    const int64_t k_blocks = (p->k + KC - 1) / KC;
    const int64_t kc_step = min64(KC, round_up((p->k + k_blocks - 1) / k_blocks, 8));
    for (int64_t jc = 0; jc < p->n; jc += NC) {
        const int64_t nc = min64(NC, p->n - jc);
        const work_split w = split_work(p->m, nc, nthreads);
        for (int64_t pc = 0; pc < p->k; pc += kc_step) {
            const int64_t kc = min64(kc_step, p->k - pc);
            const float beta = pc == 0 ? p->beta : 1.0f;

            tg_team_share(team, tid, w.col_panels, &lo, &hi);
            for (int64_t jp = lo; jp < hi; ++jp)
                pack_b_panel(p, B, pc, kc, jc + jp * NR, min64(NR, nc - jp * NR),
                             b_buf + jp * NR * kc);
            tg_team_barrier(team);

            int64_t packed_block = -1;
            tg_team_share(team, tid, w.n_ic * w.n_slices, &lo, &hi);
            for (int64_t item = lo; item < hi; ++item) {
                const int64_t block = item / w.n_slices, slice = item % w.n_slices;
                const int64_t ic = part_start(block, w.n_ic, w.row_panels, MR);
                const int64_t mc = min64(p->m, part_start(block + 1, w.n_ic, w.row_panels, MR)) - ic;
                if (block != packed_block) {
                    pack_a(p, A, ic, mc, pc, kc, a_buf);
                    packed_block = block;
                }
                const int64_t j_lo = part_start(slice, w.n_slices, w.col_panels, NR);
                const int64_t j_hi = min64(nc, part_start(slice + 1, w.n_slices, w.col_panels, NR));
                for (int64_t jr = j_lo; jr < j_hi; jr += NR) {
                    const float *b_panel = b_buf + jr * kc;
                    for (int64_t ir = 0; ir < mc; ir += MR)
                        micro_kernel(kc, a_buf + ir * kc, b_panel,
                                     C + (ic + ir) * p->ldc + jc + jr, p->ldc,
                                     min64(MR, mc - ir), min64(NR, nc - jr), p->alpha, beta);
                }
            }
            tg_team_barrier(team); /* b_buf is packed again for the next pc */
        }
    }
}

/* How many threads a call may use: OpenMP's answer where the build has it (OMP_NUM_THREADS,
 * omp_set_num_threads), else OMP_NUM_THREADS or every online core. */
static int thread_count(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    const char *env = getenv("OMP_NUM_THREADS");
    const long cores = env && atoi(env) > 0 ? atoi(env) : sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)cores : 1;
#endif
}

/* What the team's threads share: the problem and, on the blocked path, the packing buffers. */
typedef struct job {
    const tg_problem *p;
    float *b_buf, *a_bufs;
} job;

/* Small items are independent (validation keeps their C apart): a share of them each. */
static void small_items(void *arg, tg_team *team, int tid)
{
    const tg_problem *p = ((const job *)arg)->p;
    int64_t lo, hi;
    tg_team_share(team, tid, p->batch, &lo, &hi);
    for (int64_t b = lo; b < hi; ++b)
        simple_sgemm(p, p->A + b * p->stride_a, p->B + b * p->stride_b, p->C + b * p->stride_c);
}

/* Floats of one thread's packed A block: the even split never gives a block more than MC / MR
 * row panels, nor more than the product has. */
static int64_t a_buf_floats(const tg_problem *p)
{
    return round_up(min64(MC, round_up(p->m, MR)) * min64(KC, p->k), BUF_ALIGN / sizeof(float));
}

static void blocked_items(void *arg, tg_team *team, int tid)
{
    const job *j = arg;
    const tg_problem *p = j->p;
    float *a_buf = j->a_bufs + (int64_t)tid * a_buf_floats(p);
    for (int64_t b = 0; b < p->batch; ++b)
        blocked_item(p, p->A + b * p->stride_a, p->B + b * p->stride_b, p->C + b * p->stride_c,
                     j->b_buf, a_buf, team, tid);
}

static float *alloc_floats(int64_t count)
{
    size_t bytes = (size_t)round_up(count * (int64_t)sizeof(float), BUF_ALIGN);
    return TG_FAULT("host: CPU packing buffers") ? NULL : aligned_alloc(BUF_ALIGN, bytes);
}

static int cpu_sgemm(const tg_problem *p, int may_fail);

void tg_cpu_sgemm(const tg_problem *p) { (void)cpu_sgemm(p, 0); }

int tg_cpu_sgemm_checked(const tg_problem *p) { return cpu_sgemm(p, 1); }

static int cpu_sgemm(const tg_problem *p, int may_fail)
{
    if (tg_problem_is_empty(p))
        return 0;
    if (!tg_has_product(p->alpha, p->k)) {
        for (int64_t b = 0; b < p->batch; ++b)
            scale_c(p->C + b * p->stride_c, p->ldc, p->m, p->n, p->beta);
        return 0;
    }
    job j = {p, NULL, NULL};
    /* the pool's limit, not what was asked (OMP_NUM_THREADS may say a million) */
    int threads = thread_count() < TG_POOL_MAX_THREADS ? thread_count() : TG_POOL_MAX_THREADS;
    if ((double)p->m * (double)p->n * (double)p->k < SMALL_PROBLEM_FLOPS) {
        tg_team_run(p->batch > 1 ? threads : 1, small_items, &j);
        return 0;
    }
    /* no more threads than there are MR x NR tiles of C: a thread past those has no work */
    const int64_t tiles = (p->m + MR - 1) / MR * ((p->n + NR - 1) / NR);
    if (tiles < threads)
        threads = (int)tiles;

    /* one A block for each thread the team can have (tg_team_run gives at most `threads`) */
    const int64_t kc_max = min64(KC, p->k);
    float *b_buf = alloc_floats(kc_max * round_up(min64(NC, p->n), NR));
    float *a_bufs = alloc_floats((int64_t)threads * a_buf_floats(p));
    if (!b_buf || !a_bufs) {
        free(b_buf);
        free(a_bufs);
        if (may_fail)
            return -1;
        for (int64_t b = 0; b < p->batch; ++b)
            simple_sgemm(p, p->A + b * p->stride_a, p->B + b * p->stride_b, p->C + b * p->stride_c);
        return 0;
    }

    j.b_buf = b_buf, j.a_bufs = a_bufs;
    tg_team_run(threads, blocked_items, &j);
    free(b_buf);
    free(a_bufs);
    return 0;
}
