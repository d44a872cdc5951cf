/*
 * GPU mode: tilegemm's rungs and `auto`, cuBLAS FP32 (cublasSgemm, CUBLAS_DEFAULT_MATH) and
 * cuBLAS FAST_TF32 (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32) on the same device buffers.
 * Warm-up, then `repeats` runs each between its own cudaEvent pair on one stream, the median;
 * buffer sets rotated so consecutive runs never find their operands in the L2.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "timer.h"

#ifndef TG_HAVE_CUDA

int bench_run_gpu(tg_handle *h, const options *o, run_info *info)
{
    (void)h, (void)o, (void)info;
    return 0; /* never called: without CUDA the benchmark runs in CPU mode */
}

#else

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#define SET_ALIGN_ELEMENTS 64 /* each set starts 256-byte aligned, like cudaMalloc */

#define CUDA_CHECK(call)                                                                     \
    do {                                                                                     \
        const cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess)                                                             \
            bench_die("%s failed at %s:%d: %s (%s)", #call, __FILE__, __LINE__,              \
                      cudaGetErrorString(err_), cudaGetErrorName(err_));                     \
    } while (0)

#define CUBLAS_CHECK(call)                                                                   \
    do {                                                                                     \
        const cublasStatus_t st_ = (call);                                                   \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                                    \
            bench_die("%s failed at %s:%d: cuBLAS status %d", #call, __FILE__, __LINE__,     \
                      (int)st_);                                                             \
    } while (0)

/* Who runs a timed product. */
typedef enum runner { RUN_TILEGEMM, RUN_CUBLAS, RUN_CUBLAS_TF32 } runner;

typedef struct gpu_ctx {
    tg_handle *h;
    cublasHandle_t cublas;
    cudaStream_t stream;
    cudaEvent_t *start, *stop; /* `events` pairs */
    int events;
    size_t l2_bytes;
    double rotate_target;
    const run_info *info;
} gpu_ctx;

/* Device operands of one case: `sets` copies of A, B and C, each copy `*_stride` floats from
 * the last; host copies of A and B for the float64 check. */
typedef struct gpu_bufs {
    float *A, *B, *C;
    float *host_a, *host_b, *host_c;
    size_t a_elems, b_elems, c_elems;
    size_t a_stride, b_stride, c_stride;
    int sets;
    int next; /* the set the next run uses: consecutive runs never share a set */
    int64_t lda, ldb, ldc;
} gpu_bufs;

static size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

/* Returns 0 (with the reason in note) when even one set does not fit. */
static int gpu_alloc(gpu_ctx *g, const bench_case *c, gpu_bufs *b,
                     char *note, size_t note_size)
{
    memset(b, 0, sizeof *b);
    bench_leading_dims(c, c->layout, &b->lda, &b->ldb, &b->ldc);
    b->a_elems = (size_t)c->m * (size_t)c->k;
    b->b_elems = (size_t)c->k * (size_t)c->n;
    b->c_elems = (size_t)c->m * (size_t)c->n;
    b->a_stride = round_up(b->a_elems, SET_ALIGN_ELEMENTS);
    b->b_stride = round_up(b->b_elems, SET_ALIGN_ELEMENTS);
    b->c_stride = round_up(b->c_elems, SET_ALIGN_ELEMENTS);
    const double set_bytes = (double)(b->a_stride + b->b_stride + b->c_stride) * sizeof(float);

    /* The host copies first: malloc may promise more than the machine has (overcommit), and
     * filling them would get the run killed without a message. */
    if (bench_host_memory_refusal(c, note, note_size))
        return 0;
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    /* Leave room for the library's and cuBLAS's workspaces. */
    const double reserve = 512.0 * 1024 * 1024;
    const double budget = free_bytes > reserve ? 0.9 * ((double)free_bytes - reserve) : 0.0;
    const double fit = floor(budget / set_bytes);
    if (fit < 1.0) {
        snprintf(note, note_size, "one set of A, B, C needs %.0f MiB, %.0f MiB are free",
                 set_bytes / 1048576.0, (double)free_bytes / 1048576.0);
        return 0;
    }
    b->host_a = malloc(b->a_elems * sizeof(float));
    b->host_b = malloc(b->b_elems * sizeof(float));
    b->host_c = malloc(b->c_elems * sizeof(float));
    if (!b->host_a || !b->host_b || !b->host_c) {
        free(b->host_a), free(b->host_b), free(b->host_c);
        snprintf(note, note_size, "host copies of A, B, C (%.0f MiB) could not be allocated",
                 set_bytes / 1048576.0);
        return 0;
    }
    double want = set_bytes >= g->rotate_target ? 1.0 : ceil(g->rotate_target / set_bytes);
    if (want > 65536.0)
        want = 65536.0;
    b->sets = (int)(want < fit ? want : fit);
    if (b->sets < want)
        snprintf(note, note_size, "rotation capped at %d sets by free memory (%.0f MiB wanted)",
                 b->sets, want * set_bytes / 1048576.0);

    bench_fill(b->host_a, b->a_elems, 1);
    bench_fill(b->host_b, b->b_elems, 2);
    const size_t sets = (size_t)b->sets;
    CUDA_CHECK(cudaMalloc((void **)&b->A, sets * b->a_stride * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&b->B, sets * b->b_stride * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&b->C, sets * b->c_stride * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(b->A, b->host_a, b->a_elems * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b->B, b->host_b, b->b_elems * sizeof(float), cudaMemcpyHostToDevice));
    /* The other sets by doubling on the device: tiny shapes have tens of thousands of sets. */
    for (size_t done = 1; done < sets; done *= 2) {
        const size_t more = done < sets - done ? done : sets - done;
        CUDA_CHECK(cudaMemcpy(b->A + done * b->a_stride, b->A, more * b->a_stride * sizeof(float),
                              cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaMemcpy(b->B + done * b->b_stride, b->B, more * b->b_stride * sizeof(float),
                              cudaMemcpyDeviceToDevice));
    }
    CUDA_CHECK(cudaMemset(b->C, 0, sets * b->c_stride * sizeof(float)));
    CUDA_CHECK(cudaDeviceSynchronize());
    return 1;
}

static void gpu_free(gpu_bufs *b)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(b->A));
    CUDA_CHECK(cudaFree(b->B));
    CUDA_CHECK(cudaFree(b->C));
    free(b->host_a);
    free(b->host_b);
    free(b->host_c);
    memset(b, 0, sizeof *b);
}

/* Queues one product on set `set`; returns tilegemm's status (cuBLAS failures exit). */
static tg_status gpu_gemm(gpu_ctx *g, const bench_case *c, const gpu_bufs *b,
                          int set, runner who)
{
    const float *A = b->A + (size_t)set * b->a_stride;
    const float *B = b->B + (size_t)set * b->b_stride;
    float *C = b->C + (size_t)set * b->c_stride;
    const float alpha = 1.0f, beta = 0.0f;
    if (who == RUN_TILEGEMM)
        return tg_sgemm(g->h, c->layout, c->ta, c->tb, c->m, c->n, c->k, alpha, A, b->lda, B,
                        b->ldb, beta, C, b->ldc);
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major buffer
     * read as column-major is the transpose: swap the operands, keep the ops. */
    const int row = c->layout == TG_ROW_MAJOR;
    const cublasOperation_t opa = c->ta == TG_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opb = c->tb == TG_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int m = (int)(row ? c->n : c->m), n = (int)(row ? c->m : c->n), k = (int)c->k;
    const float *X = row ? B : A, *Y = row ? A : B;
    const int ldx = (int)(row ? b->ldb : b->lda), ldy = (int)(row ? b->lda : b->ldb);
    if (who == RUN_CUBLAS)
        CUBLAS_CHECK(cublasSgemm(g->cublas, row ? opb : opa, row ? opa : opb, m, n, k, &alpha,
                                 X, ldx, Y, ldy, &beta, C, (int)b->ldc));
    else
        CUBLAS_CHECK(cublasGemmEx(g->cublas, row ? opb : opa, row ? opa : opb, m, n, k, &alpha,
                                  X, CUDA_R_32F, ldx, Y, CUDA_R_32F, ldy, &beta, C, CUDA_R_32F,
                                  (int)b->ldc, CUBLAS_COMPUTE_32F_FAST_TF32,
                                  CUBLAS_GEMM_DEFAULT));
    return TG_SUCCESS;
}

/* Poisons C of set 0 (NaN), runs once there and copies C back to the host. */
static tg_status run_set0(gpu_ctx *g, const bench_case *c, gpu_bufs *b,
                          runner who)
{
    CUDA_CHECK(cudaMemsetAsync(b->C, 0xff, b->c_elems * sizeof(float), g->stream));
    const tg_status s = gpu_gemm(g, c, b, 0, who);
    if (s == TG_SUCCESS) {
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpyAsync(b->host_c, b->C, b->c_elems * sizeof(float),
                                   cudaMemcpyDeviceToHost, g->stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(g->stream));
    return s;
}

/* `runs` runs (at most the context's events), each between its own event pair, walking through
 * the sets; their times in ms to times[].  Returns tilegemm's status of the first failing call. */
static tg_status time_runs(gpu_ctx *g, const bench_case *c, gpu_bufs *b, runner who, int runs,
                           double *times)
{
    tg_status s = TG_SUCCESS;
    for (int i = 0; i < runs && s == TG_SUCCESS; ++i) {
        CUDA_CHECK(cudaEventRecord(g->start[i], g->stream));
        s = gpu_gemm(g, c, b, b->next, who);
        CUDA_CHECK(cudaEventRecord(g->stop[i], g->stream));
        b->next = (b->next + 1) % b->sets;
    }
    CUDA_CHECK(cudaGetLastError());
    /* Every event was recorded on one stream, so the last stop completes after all others. */
    CUDA_CHECK(cudaStreamSynchronize(g->stream));
    for (int i = 0; i < runs && s == TG_SUCCESS; ++i) {
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, g->start[i], g->stop[i]));
        times[i] = ms;
    }
    return s;
}

/* Warm-up, then `repeats` timed runs, and with --min-timed-ms more until the runs add up to it
 * (a call of a few microseconds is otherwise judged on a handful of noisy launches); the median.
 * Returns tilegemm's status of the first failing call (nothing is timed then). */
static tg_status gpu_time(gpu_ctx *g, const options *o, const bench_case *c, gpu_bufs *b,
                          runner who, result *r)
{
    tg_status s = TG_SUCCESS;
    for (int w = 0; w < o->warmup && s == TG_SUCCESS; ++w) {
        s = gpu_gemm(g, c, b, b->next, who);
        b->next = (b->next + 1) % b->sets;
    }
    double *times = bench_xmalloc((size_t)g->events * sizeof *times);
    int runs = o->repeats;
    if (s == TG_SUCCESS)
        s = time_runs(g, c, b, who, runs, times);
    if (s == TG_SUCCESS && o->min_timed_ms > 0.0) {
        double sum = 0.0;
        for (int i = 0; i < runs; ++i)
            sum += times[i];
        const double each = sum / runs;
        const double want = each > 0.0 ? ceil(o->min_timed_ms / each) : (double)g->events;
        const int more = (want < g->events ? (int)want : g->events) - runs;
        if (more > 0 && (s = time_runs(g, c, b, who, more, times + runs)) == TG_SUCCESS)
            runs += more;
    }
    if (s == TG_SUCCESS) {
        bench_summarize(times, runs, &r->median_ms, &r->min_ms, &r->max_ms);
        r->timed_runs = runs;
        r->flops_per_s = bench_work_flops(c) / (r->median_ms * 1e-3);
    }
    free(times);
    return s;
}

/* The arithmetic of a rung by name (-1 when none: "cpu", "none"). */
static int arith_named(const char *name)
{
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info a;
        if (tg_algo_info_get(i, &a) == TG_SUCCESS && strcmp(a.name, name) == 0)
            return (int)a.arith;
    }
    return -1;
}

/* cuBLAS in one of its two modes: checked, then timed.  Returns 1 when its C was usable. */
static int run_cublas(gpu_ctx *g, const options *o, const bench_case *c, gpu_bufs *b,
                      runner who, result *r)
{
    r->sets = b->sets;
    r->arith = who == RUN_CUBLAS ? TG_ARITH_FFMA : TG_ARITH_TF32;
    snprintf(r->chosen, sizeof r->chosen, "%s", who == RUN_CUBLAS ? "sgemm" : "fast_tf32");
    run_set0(g, c, b, who);
    bench_check(r, b->host_a, b->host_b, b->host_c);
    gpu_time(g, o, c, b, who, r);
    return strcmp(r->status, "MISMATCH") != 0;
}

/* The slices the handle's settings give this case: one planning call (tg_choose_algo). */
static tg_status planned_split(tg_handle *h, const bench_case *c, const gpu_bufs *d, int *split)
{
    const char *algo = NULL;
    return tg_choose_algo(h, c->layout, c->ta, c->tb, c->m, c->n, c->k, d->lda, d->ldb, d->ldc,
                          &algo, split);
}

/* Host time of one planning call for this case (tg_choose_algo: validation, normalization and
 * the rung choice), the mean of many; NAN when it fails.  *split_out: the slices it chose. */
static double planner_ns(tg_handle *h, const bench_case *c, const gpu_bufs *d, int *split_out)
{
    enum { CALLS = 2000 };
    int split = 0;
    const double start = tg_now_seconds();
    for (int i = 0; i < CALLS; ++i)
        if (planned_split(h, c, d, &split) != TG_SUCCESS)
            return NAN;
    const double ns = (tg_now_seconds() - start) * 1e9 / CALLS;
    *split_out = split;
    return ns;
}

/* --prune spares runs no shorter than this: below it the timed runs cost little. */
#define PRUNE_MIN_MS 0.5

/* The math mode an entry runs in: auto's is the run's, a forced rung's fp32 (it runs as it is). */
static tg_math entry_math(const options *o, const char *algo)
{
    return strcmp(algo, "auto") == 0 ? o->math : TG_MATH_FP32;
}

/* Sets the handle to run entry `algo` (a rung or auto) with `split` (tg_set_split_k). */
static tg_status select_entry(gpu_ctx *g, const options *o, const char *algo, int split)
{
    tg_status s = tg_set_algo(g->h, algo);
    if (s == TG_SUCCESS)
        s = tg_set_split_k(g->h, split);
    if (s == TG_SUCCESS)
        s = tg_set_math(g->h, entry_math(o, algo));
    return s;
}

/* One tilegemm entry (a rung or auto, with a split-K setting); returns 1 when it passed.
 * *fastest_ms: the case's fastest median so far, which --prune compares against and this
 * entry may lower. */
static int run_tilegemm(gpu_ctx *g, const options *o, const bench_case *c, gpu_bufs *b,
                        const char *algo, int split, double *fastest_ms, result *r)
{
    r->split_k = split;
    r->sets = b->sets;
    const int is_auto = strcmp(algo, "auto") == 0;
    snprintf(r->math, sizeof r->math, "%s", tg_math_name(entry_math(o, algo)));
    if (bench_skips_naive(o, c, algo)) {
        snprintf(r->status, sizeof r->status, "SKIPPED");
        snprintf(r->note, sizeof r->note,
                 "naive skipped: m*n*k > 2^36 (ask for it with --algo naive)");
        return 1;
    }
    tg_status s = select_entry(g, o, algo, split);
    if (s == TG_SUCCESS)
        s = run_set0(g, c, b, RUN_TILEGEMM);
    if (s != TG_SUCCESS)
        return bench_record_failure(r, g->h, s);
    snprintf(r->chosen, sizeof r->chosen, "%s", tg_last_algo(g->h));
    r->arith = arith_named(r->chosen);
    r->ran_split_k = split > 0 ? split : 0;
    if (is_auto)
        r->plan_ns = planner_ns(g->h, c, b, &r->ran_split_k);
    else if (split == 0 && /* a rung left to the planner's count of slices: say which it ran */
             planned_split(g->h, c, b, &r->ran_split_k) != TG_SUCCESS)
        r->ran_split_k = 0;
    bench_check(r, b->host_a, b->host_b, b->host_c);
    const int passed = strcmp(r->status, "MISMATCH") != 0;
    if (o->prune > 0.0 && !is_auto) { /* one timed run first: hopeless entries stop there */
        options once = *o;
        once.warmup = 0;
        once.repeats = 1;
        once.min_timed_ms = 0.0;
        if ((s = gpu_time(g, &once, c, b, RUN_TILEGEMM, r)) != TG_SUCCESS)
            return bench_record_failure(r, g->h, s), 0;
        if (r->median_ms > PRUNE_MIN_MS && r->median_ms > o->prune * *fastest_ms) {
            r->pruned = 1;
            snprintf(r->note, sizeof r->note, "pruned: one timed run, over %g times the "
                     "case's fastest (%.4g ms)", o->prune, *fastest_ms);
            return passed;
        }
    }
    if ((s = gpu_time(g, o, c, b, RUN_TILEGEMM, r)) != TG_SUCCESS)
        return bench_record_failure(r, g->h, s), 0;
    if (r->median_ms < *fastest_ms)
        *fastest_ms = r->median_ms;
    return passed;
}

/* --recheck's rounds: each rechecked entry runs a warm-up and a round of timed runs, then the
 * next entry, RECHECK_ROUNDS times over, so that a drift of clocks or of the L2 falls on all
 * of them alike.  In a run at 8017fd0 with auto first in every round, auto ran 4% slower than
 * the same rung forced, rechecked beside it, on 3 of 5 calls of 5 to 15 ms (and alike in the
 * sweep): the order now turns round by round. */
#define RECHECK_ROUNDS 5

/* Whether result i is an entry of case c that --recheck may time again: a rung timed in full. */
static int recheckable(const result *r, const bench_case *c)
{
    return memcmp(&r->c, c, sizeof *c) == 0 && strcmp(r->algo, "cublas") != 0 &&
           strcmp(r->algo, "cublas_tf32") != 0 && !r->pruned && isfinite(r->median_ms) &&
           (strcmp(r->status, "OK") == 0 || strcmp(r->status, "LOWPREC") == 0);
}

/* --recheck N: the case's auto entry and the N fastest rung entries of each arithmetic (so the
 * fastest entry every math mode allows is among them) timed again in turn, RECHECK_ROUNDS
 * rounds; the median of those runs is the entry's recheck_ms.  The fastest of a hundred
 * entries each timed once is flattered by its own noise, and the sweep's minutes give clocks
 * time to drift: comparing auto with the best entry in the same rounds answers both. */
static void recheck_case(gpu_ctx *g, const options *o, const bench_case *c, gpu_bufs *b)
{
    /* auto at each --split-k value, and --recheck's most (64) of each arithmetic */
    int picked[sizeof o->splits / sizeof o->splits[0] + 4 * 64], npicked = 0;
    char *taken = calloc((size_t)bench_nresults + 1, 1);
    if (!taken)
        bench_die("out of host memory");
    for (int i = 0; i < bench_nresults; ++i)
        if (recheckable(&bench_results[i], c) && strncmp(bench_results[i].algo, "auto", 4) == 0)
            picked[npicked++] = i, taken[i] = 1; /* auto, and auto/kN of --split-k lists */
    for (int arith = TG_ARITH_FFMA; arith <= TG_ARITH_INT8; ++arith)
        for (int n = 0; n < o->recheck; ++n) { /* the n-th fastest of this arithmetic */
            int best = -1;
            for (int i = 0; i < bench_nresults; ++i) {
                const result *r = &bench_results[i];
                if (!taken[i] && recheckable(r, c) && strncmp(r->algo, "auto", 4) != 0 &&
                    r->arith == arith &&
                    (best < 0 || r->median_ms < bench_results[best].median_ms))
                    best = i;
            }
            if (best >= 0)
                picked[npicked++] = best, taken[best] = 1;
        }
    free(taken);
    if (npicked == 0)
        return;
    const int per_round = MOST_TIMED_RUNS / RECHECK_ROUNDS < g->events
                              ? MOST_TIMED_RUNS / RECHECK_ROUNDS : g->events;
    double *times = bench_xmalloc((size_t)npicked * RECHECK_ROUNDS * per_round * sizeof *times);
    int *count = calloc((size_t)npicked, sizeof *count);
    if (!count)
        bench_die("out of host memory");
    for (int round = 0; round < RECHECK_ROUNDS; ++round)
        for (int turn = 0; turn < npicked; ++turn) {
            /* each round starts one entry later: no entry always follows the same one */
            const int q = (turn + round) % npicked;
            const result *r = &bench_results[picked[q]];
            char rung[64]; /* the label less its "/kN" */
            snprintf(rung, sizeof rung, "%.*s", (int)strcspn(r->algo, "/"), r->algo);
            if (select_entry(g, o, rung, r->split_k) != TG_SUCCESS)
                bench_die("--recheck %s: %s", r->algo, tg_last_error(g->h));
            /* as many runs a round as the entry's share of --min-timed-ms asks, at least
             * --repeats / RECHECK_ROUNDS */
            const double want = o->min_timed_ms / RECHECK_ROUNDS / r->median_ms;
            int runs = (o->repeats + RECHECK_ROUNDS - 1) / RECHECK_ROUNDS;
            if (want > runs)
                runs = want < per_round ? (int)ceil(want) : per_round;
            if (gpu_gemm(g, c, b, b->next, RUN_TILEGEMM) != TG_SUCCESS) /* warm-up */
                bench_die("--recheck %s: %s", r->algo, tg_last_error(g->h));
            b->next = (b->next + 1) % b->sets;
            double *mine = times + (size_t)q * RECHECK_ROUNDS * per_round;
            if (time_runs(g, c, b, RUN_TILEGEMM, runs, mine + count[q]) != TG_SUCCESS)
                bench_die("--recheck %s: %s", r->algo, tg_last_error(g->h));
            count[q] += runs;
        }
    for (int q = 0; q < npicked; ++q) {
        result *r = &bench_results[picked[q]];
        double lo, hi;
        bench_summarize(times + (size_t)q * RECHECK_ROUNDS * per_round, count[q], &r->recheck_ms,
                        &lo, &hi);
        r->recheck_runs = count[q];
    }
    free(count);
    free(times);
}

/* The math mode an entry's speed of light is taken in: auto's and cuBLAS SGEMM's are the run's
 * mode (so cuBLAS is measured against what fp32 mode may reach), cuBLAS FAST_TF32's is tf32,
 * and a forced rung's follows its arithmetic. */
static tg_math sol_mode(const options *o, const result *r)
{
    if (strcmp(r->algo, "cublas_tf32") == 0)
        return TG_MATH_TF32;
    if (strcmp(r->algo, "cublas") == 0 || strncmp(r->algo, "auto", 4) == 0)
        return o->math;
    return r->arith == TG_ARITH_3XTF32 || r->arith == TG_ARITH_INT8 ? TG_MATH_FP32
           : r->arith == TG_ARITH_TF32 ? TG_MATH_TF32
                                       : TG_MATH_STRICT_FMA;
}

static int run_case(gpu_ctx *g, const options *o, const bench_case *c)
{
    char note[300] = "";
    int64_t lda, ldb, ldc;
    bench_leading_dims(c, c->layout, &lda, &ldb, &ldc);
    gpu_bufs b;
    const int64_t big = 2147483647;
    if (c->m > big || c->n > big || c->k > big || lda > big || ldb > big || ldc > big)
        snprintf(note, sizeof note, "a dimension exceeds cuBLAS's int range");
    else if (gpu_alloc(g, c, &b, note, sizeof note)) {
        int ok = 1;
        result *cr = bench_new_result(c, "cublas");
        snprintf(cr->note, sizeof cr->note, "%s", note);
        ok &= run_cublas(g, o, c, &b, RUN_CUBLAS, cr);
        const double cublas_ms = cr->median_ms, cublas_rate = cr->flops_per_s;
        result *tr = bench_new_result(c, "cublas_tf32");
        run_cublas(g, o, c, &b, RUN_CUBLAS_TF32, tr);
        const double tf32_ms = tr->median_ms, tf32_rate = tr->flops_per_s;
        double fastest_ms = cublas_ms; /* --prune's yardstick until a rung is faster */
        for (int a = 0; a < o->nalgos; ++a) {
            const char *algo = o->algos[a];
            int splits[16], nsplits = 0;
            if (o->split_counts && strcmp(algo, "auto") != 0) {
                int counts[16], ncounts = 0;
                if (tg_split_k_counts(algo, c->m, c->n, c->k, counts, 16, &ncounts) != TG_SUCCESS)
                    bench_die("tg_split_k_counts(%s): %s", algo, tg_last_error(NULL));
                for (int i = 0; i < ncounts; ++i) { /* pow2 and fine: one kind alone */
                    const int pow2 = (counts[i] & (counts[i] - 1)) == 0;
                    if (o->split_counts == 2 || pow2 == (o->split_counts == 1))
                        splits[nsplits++] = counts[i];
                }
            } else if (o->split_counts) {
                splits[nsplits++] = 0; /* auto: the planner's choice */
            } else {
                for (int i = 0; i < o->nsplits; ++i)
                    splits[nsplits++] = o->splits[i];
            }
            for (int i = 0; i < nsplits; ++i) {
                char label[64];
                snprintf(label, sizeof label, splits[i] ? "%s/k%d" : "%s", algo, splits[i]);
                result *r = bench_new_result(c, label);
                ok &= run_tilegemm(g, o, c, &b, algo, splits[i], &fastest_ms, r);
            }
        }
        if (o->recheck > 0)
            recheck_case(g, o, c, &b);
        /* Every entry of this case is measured against both cuBLAS modes of the same run. */
        for (int i = 0; i < bench_nresults; ++i) {
            result *r = &bench_results[i];
            if (memcmp(&r->c, c, sizeof *c) != 0)
                continue;
            r->cublas_ms = cublas_ms, r->cublas_flops_per_s = cublas_rate;
            r->cublas_tf32_ms = tf32_ms, r->cublas_tf32_flops_per_s = tf32_rate;
            r->ratio = cublas_ms / r->median_ms;
            r->ratio_tf32 = tf32_ms / r->median_ms;
            r->sol_ms = bench_sol_ms(c, sol_mode(o, r), g->info);
            bench_print_row(r, 1);
        }
        if (tg_set_algo(g->h, "auto") != TG_SUCCESS || tg_set_split_k(g->h, 0) != TG_SUCCESS)
            bench_die("restoring auto: %s", tg_last_error(g->h));
        gpu_free(&b);
        return ok;
    }
    result *r = bench_new_result(c, "cublas");
    snprintf(r->status, sizeof r->status, "SKIPPED");
    snprintf(r->note, sizeof r->note, "%s", note);
    bench_print_row(r, 1);
    return 0; /* nothing was timed: the run must not pass for a measurement */
}

static void gpu_info(run_info *info)
{
    int dev = 0, v = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    snprintf(info->device, sizeof info->device, "%s", prop.name);
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, dev));
    info->l2_bytes = v;
    info->memory_bytes = (long long)prop.totalGlobalMem;
    CUDA_CHECK(cudaDriverGetVersion(&info->driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
    info->roof = tg_measure_roofline();
}

static void print_banner(const options *o, const run_info *info, double rotate_target)
{
    char v1[32], v2[32], v3[32];
    bench_version_text(info->driver_version, 1, v1, sizeof v1);
    bench_version_text(info->runtime_version, 1, v2, sizeof v2);
    bench_version_text(info->cublas_version, 0, v3, sizeof v3);
    printf("device: %s (sm_%d%d, %d SMs, L2 %.0f MiB), driver %s, runtime %s, cuBLAS %s\n",
           info->device, info->cc_major, info->cc_minor, info->sm_count,
           (double)info->l2_bytes / 1048576.0, v1, v2, v3);
    printf("commit %s, %s; %d warm-up + %d timed runs (median, cudaEvent), buffers rotated to "
           ">= %.0f MiB; auto in math mode %s; cuBLAS FP32 (CUBLAS_DEFAULT_MATH) and FAST_TF32\n\n",
           info->commit, info->date, o->warmup, o->repeats, rotate_target / 1048576.0,
           tg_math_name(o->math));
}

int bench_run_gpu(tg_handle *h, const options *o, run_info *info)
{
    gpu_ctx g;
    memset(&g, 0, sizeof g);
    g.h = h;
    g.info = info;
    gpu_info(info);
    char tune_path[1200];
    bench_tuning_path(o, info, tune_path, sizeof tune_path);
    if (o->tune && o->tune_merge && !bench_tuning_mergeable(tune_path, info))
        exit(1); /* refused before any timing: no table, no JSON written */
    if (tg_set_backend(h, TG_BACKEND_CUDA) != TG_SUCCESS)
        bench_die("tg_set_backend(CUDA): %s", tg_last_error(h));
    g.stream = (cudaStream_t)tg_get_stream(h);
    CUBLAS_CHECK(cublasCreate(&g.cublas));
    CUBLAS_CHECK(cublasSetStream(g.cublas, g.stream));
    /* FP32 FFMA for cublasSgemm; FAST_TF32 is asked for per call through cublasGemmEx. */
    CUBLAS_CHECK(cublasSetMathMode(g.cublas, CUBLAS_DEFAULT_MATH));
    CUBLAS_CHECK(cublasSetPointerMode(g.cublas, CUBLAS_POINTER_MODE_HOST));
    CUBLAS_CHECK(cublasGetVersion(g.cublas, &info->cublas_version));
    g.l2_bytes = (size_t)info->l2_bytes;
    g.rotate_target = o->rotate_mib * 1048576.0;
    if (g.rotate_target < 2.0 * (double)g.l2_bytes)
        g.rotate_target = 2.0 * (double)g.l2_bytes;
    info->rotate_target_bytes = g.rotate_target;
    /* --min-timed-ms adds runs up to MOST_TIMED_RUNS, never fewer than --repeats */
    g.events = o->min_timed_ms > 0.0 && o->repeats < MOST_TIMED_RUNS ? MOST_TIMED_RUNS
                                                                     : o->repeats;
    g.start = bench_xmalloc((size_t)g.events * sizeof *g.start);
    g.stop = bench_xmalloc((size_t)g.events * sizeof *g.stop);
    for (int i = 0; i < g.events; ++i) {
        CUDA_CHECK(cudaEventCreate(&g.start[i]));
        CUDA_CHECK(cudaEventCreate(&g.stop[i]));
    }
    print_banner(o, info, g.rotate_target);
    bench_print_header(1);

    int ok = 1;
    for (int i = 0; i < o->ncases; ++i) {
        bench_progress(i, o->ncases, &o->cases[i]);
        ok &= run_case(&g, o, &o->cases[i]);
    }
    if (o->tune) {
        char path[1200];
        bench_tuning_path(o, info, path, sizeof path);
        ok &= bench_write_tuning(path, info, o);
    }
    for (int i = 0; i < g.events; ++i) {
        CUDA_CHECK(cudaEventDestroy(g.start[i]));
        CUDA_CHECK(cudaEventDestroy(g.stop[i]));
    }
    free(g.start);
    free(g.stop);
    CUBLAS_CHECK(cublasDestroy(g.cublas));
    return ok;
}

#endif /* TG_HAVE_CUDA */
