/* CPU mode: tilegemm's CPU backend on host buffers, timed with check/timer.h. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_internal.h"
#include "timer.h"

/* Times `repeats` calls after `warmup`; returns the first failing status. */
static tg_status time_calls(tg_handle *h, const options *o, const bench_case *c, const float *A,
                            const float *B, float *C, result *r)
{
    int64_t lda, ldb, ldc;
    bench_leading_dims(c, c->layout, &lda, &ldb, &ldc);
    tg_status s = TG_SUCCESS;
    for (int w = 0; w < o->warmup && s == TG_SUCCESS; ++w)
        s = tg_sgemm(h, c->layout, c->ta, c->tb, c->m, c->n, c->k, 1.0f, A, lda, B, ldb, 0.0f,
                     C, ldc);
    double *times = bench_xmalloc((size_t)o->repeats * sizeof *times);
    for (int i = 0; i < o->repeats && s == TG_SUCCESS; ++i) {
        const double t0 = tg_now_seconds();
        s = tg_sgemm(h, c->layout, c->ta, c->tb, c->m, c->n, c->k, 1.0f, A, lda, B, ldb, 0.0f,
                     C, ldc);
        times[i] = (tg_now_seconds() - t0) * 1e3;
    }
    if (s == TG_SUCCESS) {
        bench_summarize(times, o->repeats, &r->median_ms, &r->min_ms, &r->max_ms);
        r->flops_per_s = bench_work_flops(c) / (r->median_ms * 1e-3);
    }
    free(times);
    return s;
}

static int run_case(tg_handle *h, const options *o, const bench_case *c)
{
    result *r = bench_new_result(c, "auto");
    snprintf(r->math, sizeof r->math, "%s", tg_math_name(o->math));
    const size_t na = (size_t)c->m * (size_t)c->k, nb = (size_t)c->k * (size_t)c->n,
                 nc = (size_t)c->m * (size_t)c->n;
    float *A = NULL, *B = NULL, *C = NULL;
    int ok = 1;
    /* A suite's shape too large for this machine: malloc may promise it (overcommit), and
     * filling it would get the run killed without a message. */
    if (bench_host_memory_refusal(c, r->note, sizeof r->note)) {
        snprintf(r->status, sizeof r->status, "SKIPPED");
        ok = 0; /* nothing was timed: the run must not pass for a measurement */
        goto done;
    }
    A = malloc(na * sizeof *A), B = malloc(nb * sizeof *B), C = malloc(nc * sizeof *C);
    if (!A || !B || !C) {
        snprintf(r->status, sizeof r->status, "SKIPPED");
        snprintf(r->note, sizeof r->note, "A, B and C need %.1f GiB of host memory, which "
                 "could not be allocated", (double)(na + nb + nc) * 4.0 / (1 << 30));
        ok = 0; /* nothing was timed: the run must not pass for a measurement */
        goto done;
    }
    bench_fill(A, na, 1);
    bench_fill(B, nb, 2);
    for (size_t i = 0; i < nc; ++i)
        C[i] = NAN; /* beta = 0 must overwrite every element */
    int64_t lda, ldb, ldc;
    bench_leading_dims(c, c->layout, &lda, &ldb, &ldc);
    tg_status s = tg_sgemm(h, c->layout, c->ta, c->tb, c->m, c->n, c->k, 1.0f, A, lda, B, ldb,
                           0.0f, C, ldc);
    if (s != TG_SUCCESS) {
        ok = bench_record_failure(r, h, s);
        goto done;
    }
    snprintf(r->chosen, sizeof r->chosen, "%s", tg_last_algo(h));
    r->arith = TG_ARITH_FFMA;
    bench_check(r, A, B, C);
    ok = strcmp(r->status, "OK") == 0;
    if ((s = time_calls(h, o, c, A, B, C, r)) != TG_SUCCESS)
        ok = 0, bench_record_failure(r, h, s);
done:
    bench_print_row(r, 0);
    free(A);
    free(B);
    free(C);
    return ok;
}

int bench_run_cpu(tg_handle *h, const options *o, run_info *info)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *omp = getenv("OMP_NUM_THREADS");
    info->threads = omp && atoi(omp) > 0 ? atoi(omp) : (int)(cores > 0 ? cores : 1);
    if (tg_set_backend(h, TG_BACKEND_CPU) != TG_SUCCESS || tg_set_algo(h, "auto") != TG_SUCCESS ||
        tg_set_math(h, o->math) != TG_SUCCESS) {
        fprintf(stderr, "tilegemm %s: cannot select the CPU backend: %s\n", bench_cmd,
                tg_last_error(h));
        return 0;
    }
    printf("NO GPU: tg_backend_available(TG_BACKEND_CUDA) = 0, so this times tilegemm's CPU "
           "backend on host buffers\n(no cuBLAS, no rungs; GFLOP/s). CPU: %s, %d threads.\n",
           info->device, info->threads);
    if (o->algos_explicit)
        printf("note: --algo names GPU rungs; ignored in CPU mode.\n");
    printf("commit %s, %s; %d warm-up + %d timed runs (median, CLOCK_MONOTONIC)\n\n",
           info->commit, info->date, o->warmup, o->repeats);
    bench_print_header(0);
    int ok = 1;
    for (int i = 0; i < o->ncases; ++i) {
        bench_progress(i, o->ncases, &o->cases[i]);
        ok &= run_case(h, o, &o->cases[i]);
    }
    return ok;
}
