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

#include <stdatomic.h>
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
 * Work is dealt out dynamically: every piece of work of a product (a group of B panels to pack,
 * an A block times a column slice to multiply) has a number, counted across the whole job, and a
 * thread takes the next number from one atomic counter (its ticket) when it is ready for more.
 * A thread that is slow, or that the system deschedules (another process on its core), is left
 * less work instead of holding the others at the next barrier.  The pieces come in phases
 * separated by barriers:
 *
 *   pack B(0) | multiply(0), pack B(1) | multiply(1), pack B(2) | ... | multiply(last)
 *
 * where step s is one (jc, pc) block and B(s) goes into b_bufs[s % 2]: packing B(s + 1) needs
 * no barrier after multiply(s), since it writes the other buffer, and the barrier after it
 * ends multiply(s - 1), the last reader of the buffer B(s + 2) will overwrite.  Each phase
 * starts where the previous one's numbers end; a thread whose ticket lies past the current
 * phase keeps it for the phase it belongs to, so no number is lost or taken twice.
 *
 * Row blocks are at most MC rows; where that gives fewer than BLOCKS_PER_THREAD blocks a
 * thread, they are made smaller (down to MIN_BLOCK_PANELS micro-panels) so the counter can
 * balance, and their count is a multiple of the thread count where the rows allow; only a
 * short, wide product, too short for that, has its columns cut into slices as well (each
 * slice of a block packs the block again).
 */
enum { BLOCKS_PER_THREAD = 3, MIN_BLOCK_PANELS = 4, B_PANELS_PER_PIECE = 4 };

typedef struct work_split {
    int64_t row_panels, n_ic;     /* MR-row panels, A blocks */
    int64_t col_panels, n_slices; /* NR-column panels of the NC block, column slices */
    int64_t b_pieces;             /* pieces of B packing */
} work_split;

static work_split split_work(int64_t m, int64_t nc, int nthreads)
{
    work_split w;
    w.row_panels = (m + MR - 1) / MR;
    w.n_ic = (w.row_panels + MC / MR - 1) / (MC / MR);
    if (nthreads > 1) {
        const int64_t most = (w.row_panels + MIN_BLOCK_PANELS - 1) / MIN_BLOCK_PANELS;
        const int64_t wanted = min64((int64_t)BLOCKS_PER_THREAD * nthreads, most);
        if (w.n_ic < wanted)
            w.n_ic = wanted;
        /* a multiple of the threads, so that threads running at the same speed finish
         * together (9 blocks on 2 threads left one idle for a ninth of the time) */
        if (round_up(w.n_ic, nthreads) <= w.row_panels)
            w.n_ic = round_up(w.n_ic, nthreads);
    }
    w.col_panels = (nc + NR - 1) / NR;
    w.n_slices = nthreads > 1 && w.n_ic < 2 * nthreads
                     ? min64(w.col_panels, (2 * nthreads + w.n_ic - 1) / w.n_ic)
                     : 1;
    w.b_pieces = (w.col_panels + B_PANELS_PER_PIECE - 1) / B_PANELS_PER_PIECE;
    return w;
}

/* Start of part i of `count` near-equal parts of `total` units of `unit` (i == count: the end). */
static int64_t part_start(int64_t i, int64_t count, int64_t total, int64_t unit)
{
    return i * total / count * unit;
}

/* What the team's threads share: the problem, the packing buffers and the ticket counter. */
typedef struct job {
    const tg_problem *p;
    float *b_bufs[2], *a_bufs;
    _Atomic int64_t next_ticket;
} job;

/* One thread's place in the job: the ticket it holds (-1: none) and where its phase starts. */
typedef struct cursor {
    int64_t ticket, base;
} cursor;

/* The next piece of the current phase of `count` pieces for this thread, in *piece; 0 when the
 * phase has none left (the thread then keeps its ticket for a later phase). */
static int next_piece(job *j, cursor *c, int64_t count, int64_t *piece)
{
    if (c->ticket < 0)
        c->ticket = atomic_fetch_add_explicit(&j->next_ticket, 1, memory_order_relaxed);
    if (c->ticket >= c->base + count)
        return 0;
    *piece = c->ticket - c->base;
    c->ticket = -1;
    return 1;
}

/* One step's geometry: the B block op(B)[pc .. pc+kc, jc .. jc+nc] and how it is split. */
typedef struct step {
    int64_t jc, nc, pc, kc;
    work_split w;
    float *b_buf;
} step;

static void pack_b_piece(const tg_problem *p, const float *B, const step *st, int64_t piece)
{
    const int64_t hi = min64(st->w.col_panels, (piece + 1) * B_PANELS_PER_PIECE);
    for (int64_t jp = piece * B_PANELS_PER_PIECE; jp < hi; ++jp)
        pack_b_panel(p, B, st->pc, st->kc, st->jc + jp * NR, min64(NR, st->nc - jp * NR),
                     st->b_buf + jp * NR * st->kc);
}

/* A thread's packed A block: which step and block it holds. */
typedef struct a_block {
    float *buf;
    int64_t step, block;
} a_block;

static void multiply_piece(const tg_problem *p, const float *A, float *C, const step *st,
                           int64_t step_no, a_block *a, int64_t piece)
{
    const work_split *w = &st->w;
    const int64_t block = piece / w->n_slices, slice = piece % w->n_slices;
    const int64_t ic = part_start(block, w->n_ic, w->row_panels, MR);
    const int64_t mc = min64(p->m, part_start(block + 1, w->n_ic, w->row_panels, MR)) - ic;
    if (a->step != step_no || a->block != block) {
        pack_a(p, A, ic, mc, st->pc, st->kc, a->buf);
        a->step = step_no, a->block = block;
    }
    const float beta = st->pc == 0 ? p->beta : 1.0f;
    const int64_t j_lo = part_start(slice, w->n_slices, w->col_panels, NR);
    const int64_t j_hi = min64(st->nc, part_start(slice + 1, w->n_slices, w->col_panels, NR));
    for (int64_t jr = j_lo; jr < j_hi; jr += NR) {
        const float *b_panel = st->b_buf + jr * st->kc;
        for (int64_t ir = 0; ir < mc; ir += MR)
            micro_kernel(st->kc, a->buf + ir * st->kc, b_panel,
                         C + (ic + ir) * p->ldc + st->jc + jr, p->ldc, min64(MR, mc - ir),
                         min64(NR, st->nc - jr), p->alpha, beta);
    }
}

/* The steps of one batch item, in order: (jc, pc) with k in near-equal blocks of at most KC
 * (512 as 256 + 256, not 320 + 192).  Returns 0 past the last. */
static int step_at(const tg_problem *p, int64_t index, int nthreads, step *st)
{
    const int64_t k_blocks = (p->k + KC - 1) / KC;
    const int64_t kc_step = min64(KC, round_up((p->k + k_blocks - 1) / k_blocks, 8));
    const int64_t per_jc = (p->k + kc_step - 1) / kc_step;
    st->jc = index / per_jc * NC;
    if (st->jc >= p->n)
        return 0;
    st->nc = min64(NC, p->n - st->jc);
    st->pc = index % per_jc * kc_step;
    st->kc = min64(kc_step, p->k - st->pc);
    st->w = split_work(p->m, st->nc, nthreads);
    return 1;
}

/*
 * Every batch item on the calling team; called by every thread of the team.  The steps of all
 * items run as one sequence (the B buffers alternate across items too).
 */
static void blocked_items(void *arg, tg_team *team, int tid);

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
    job *j = arg;
    const tg_problem *p = j->p;
    a_block a = {j->a_bufs + (int64_t)tid * a_buf_floats(p), -1, -1};
    cursor c = {-1, 0};
    step prev = {0}, cur = {0}; /* steps s - 1 and s */
    const float *prev_A = NULL, *cur_A = NULL, *cur_B = NULL;
    float *prev_C = NULL, *cur_C = NULL;
    int64_t item = 0, index = 0, step_no = 0, piece;
    for (;;) {
        /* step s: the next (jc, pc) of this batch item, else the first of the next item */
        int more = 0;
        for (; item < p->batch; ++item, index = 0)
            if (step_at(p, index, team->size, &cur)) {
                more = 1;
                break;
            }
        if (more) {
            cur_A = p->A + item * p->stride_a;
            cur_B = p->B + item * p->stride_b;
            cur_C = p->C + item * p->stride_c;
            cur.b_buf = j->b_bufs[step_no % 2];
        }
        /* the phase: multiply(s - 1) and pack B(s) */
        const int64_t multiplies = step_no > 0 ? prev.w.n_ic * prev.w.n_slices : 0;
        const int64_t packs = more ? cur.w.b_pieces : 0;
        while (next_piece(j, &c, multiplies + packs, &piece)) {
            if (piece < multiplies)
                multiply_piece(p, prev_A, prev_C, &prev, step_no - 1, &a, piece);
            else
                pack_b_piece(p, cur_B, &cur, piece - multiplies);
        }
        c.base += multiplies + packs;
        if (!more)
            return; /* that was multiply(last): tg_team_run waits for every thread */
        tg_team_barrier(team); /* B(s) packed; multiply(s - 1) done, so B(s + 1) may overwrite
                                  B(s - 1) */
        prev = cur, prev_A = cur_A, prev_C = cur_C;
        ++step_no, ++index;
    }
}

/*
 * The packing buffers, kept from one product to the next: allocating them anew each time costs
 * page faults (glibc maps a block of a megabyte or more afresh at first, and returns it at
 * free), which at 512^3 are a good part of a millisecond's product.  One spare block is kept,
 * taken with an atomic exchange so that concurrent callers never share it (a caller that finds
 * none allocates its own), and freed when the library is unloaded or the process exits; a
 * very large block is not kept.  A block starts with a header holding its size in floats.
 */
enum { HEADER_FLOATS = BUF_ALIGN / sizeof(float) };
static _Atomic(float *) spare_block;

static float *take_block(int64_t count)
{
    if (TG_FAULT("host: CPU packing buffers"))
        return NULL;
    float *block = atomic_exchange(&spare_block, NULL);
    int64_t have;
    if (block) {
        memcpy(&have, block, sizeof have);
        if (have >= count)
            return block + HEADER_FLOATS;
        free(block);
    }
    const size_t bytes = (size_t)round_up((count + HEADER_FLOATS) * (int64_t)sizeof(float),
                                          BUF_ALIGN);
    block = aligned_alloc(BUF_ALIGN, bytes);
    if (!block)
        return NULL;
    memcpy(block, &count, sizeof count);
    return block + HEADER_FLOATS;
}

/* Blocks above this many floats (64 MiB; a product on a hundred threads or more) are freed. */
#define SPARE_MAX_FLOATS ((int64_t)16 << 20)

static void give_back(float *data)
{
    float *block = data - HEADER_FLOATS;
    int64_t count;
    memcpy(&count, block, sizeof count);
    if (count > SPARE_MAX_FLOATS)
        free(block);
    else
        free(atomic_exchange(&spare_block, block)); /* keep the newest */
}

__attribute__((destructor)) static void free_spare_block(void)
{
    free(atomic_exchange(&spare_block, NULL));
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
    job j = {.p = p};
    atomic_init(&j.next_ticket, 0);
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
    /* two B blocks: B(s + 1) is packed while B(s) is read */
    const int64_t b_floats = kc_max * round_up(min64(NC, p->n), NR);
    float *bufs = take_block(2 * b_floats + (int64_t)threads * a_buf_floats(p));
    if (!bufs) {
        if (may_fail)
            return -1;
        for (int64_t b = 0; b < p->batch; ++b)
            simple_sgemm(p, p->A + b * p->stride_a, p->B + b * p->stride_b, p->C + b * p->stride_c);
        return 0;
    }

    j.b_bufs[0] = bufs, j.b_bufs[1] = bufs + b_floats;
    j.a_bufs = bufs + 2 * b_floats;
    tg_team_run(threads, blocked_items, &j);
    give_back(bufs);
    return 0;
}
