/*
 * What the benchmark's files share (bench_internal.h): the results of the run, the operands'
 * data, the float64 check, the progress lines and the exits on error.  It calls none of them,
 * so the driver (bench.c) sits on top of the modes (cpu.c, gpu.c), the options and the reports,
 * and they on this file.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "host_memory.h"
#include "rng.h"
#include "timer.h"

result *bench_results;
int bench_nresults;
static int results_cap;
const char *bench_cmd = "bench";

void bench_free_results(void)
{
    free(bench_results);
    bench_results = NULL;
    bench_nresults = results_cap = 0;
}

void bench_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tilegemm %s: ", bench_cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

void *bench_xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        bench_die("out of host memory (%zu bytes)", bytes);
    return p;
}

result *bench_new_result(const bench_case *c, const char *algo)
{
    if (bench_nresults == results_cap) {
        results_cap = results_cap ? 2 * results_cap : 64;
        result *grown = realloc(bench_results, (size_t)results_cap * sizeof *grown);
        if (!grown)
            bench_die("out of host memory");
        bench_results = grown;
    }
    result *r = &bench_results[bench_nresults++];
    memset(r, 0, sizeof *r);
    r->c = *c;
    r->layout = c->layout;
    snprintf(r->algo, sizeof r->algo, "%s", algo);
    r->arith = -1;
    r->median_ms = r->min_ms = r->max_ms = r->flops_per_s = NAN;
    r->cublas_ms = r->cublas_flops_per_s = r->ratio = NAN;
    r->cublas_tf32_ms = r->cublas_tf32_flops_per_s = r->ratio_tf32 = NAN;
    r->error.worst_scaled = r->error.rms = r->plan_ns = r->sol_ms = r->recheck_ms = NAN;
    snprintf(r->status, sizeof r->status, "ERROR");
    return r;
}

double bench_work_flops(const bench_case *c)
{
    return 2.0 * (double)c->m * (double)c->n * (double)c->k;
}

double bench_sol_ms(const bench_case *c, tg_math mode, const run_info *info)
{
    return 1e3 * tg_speed_of_light_s(&info->roof, mode, (double)c->m, (double)c->n,
                                     (double)c->k, NULL, NULL, NULL);
}

const char *bench_host_memory_refusal(const bench_case *c, char *buf, size_t size)
{
    const double m = (double)c->m, n = (double)c->n, k = (double)c->k;
    return tg_host_memory_refusal("A, B and C need", 4.0 * (m * k + k * n + m * n), buf, size);
}

void bench_leading_dims(const bench_case *c, tg_layout layout, int64_t *lda, int64_t *ldb,
                        int64_t *ldc)
{
    *lda = tg_min_ld(layout, c->ta, c->m, c->k);
    *ldb = tg_min_ld(layout, c->tb, c->k, c->n);
    *ldc = tg_min_ld(layout, TG_NO_TRANS, c->m, c->n);
}

void bench_fill(float *dst, size_t count, uint64_t seed)
{
    for (size_t i = 0; i < count; ++i)
        dst[i] = (float)tg_random_unit(&seed);
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_summarize(double *v, int n, double *median, double *min, double *max)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    *median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    *min = v[0];
    *max = v[n - 1];
}

void bench_check(result *r, const float *A, const float *B, const float *C)
{
    int64_t lda, ldb, ldc;
    bench_leading_dims(&r->c, r->layout, &lda, &ldb, &ldc);
    const tg_dense_gemm g = {.layout = r->layout, .transa = r->c.ta, .transb = r->c.tb,
                             .m = r->c.m, .n = r->c.n, .k = r->c.k, .alpha = 1.0f,
                             .beta = 0.0f, .A = A, .lda = lda, .B = B, .ldb = ldb,
                             .ldc = ldc};
    tg_sample_error(&g, C, CHECK_SAMPLES, 0x636865636bull, &r->error);
    const double bound = r->arith == TG_ARITH_TF32 ? TF32_BOUND_FACTOR : 1.0;
    const char *status = r->error.worst_scaled <= 1.0     ? "OK"
                         : r->error.worst_scaled <= bound ? "LOWPREC"
                                                          : "MISMATCH";
    snprintf(r->status, sizeof r->status, "%s", status);
}

void bench_progress(int i, int n, const bench_case *c)
{
    static double start;
    if (i == 0)
        start = tg_now_seconds();
    char shape[64];
    bench_shape_text(c, shape, sizeof shape);
    fprintf(stderr, "[%d/%d] %s %s %s (%.0f s elapsed)\n", i + 1, n, shape,
            bench_trans_name(c->ta, c->tb), bench_layout_name(c->layout),
            tg_now_seconds() - start);
}

int bench_record_failure(result *r, tg_handle *h, tg_status s)
{
    snprintf(r->status, sizeof r->status, "%s",
             s == TG_ERROR_NOT_SUPPORTED ? "UNSUPPORTED" : "ERROR");
    snprintf(r->note, sizeof r->note, "%s: %s", tg_status_string(s), tg_last_error(h));
    return s == TG_ERROR_NOT_SUPPORTED;
}

int bench_category(const bench_case *c)
{
    const int64_t side = c->m < c->n ? c->m : c->n;
    const int size = side <= 64 ? 0 : side <= 512 ? 1 : 2;
    const int depth = c->k <= 256 ? 0 : c->k <= 4096 ? 1 : 2;
    return size * 3 + depth;
}

const char *bench_category_name(int category)
{
    static const char *const names[BENCH_CATEGORIES] = {
        "thin, k<=256", "thin, k<=4096", "thin, k>4096", "mid, k<=256", "mid, k<=4096",
        "mid, k>4096",  "big, k<=256",   "big, k<=4096", "big, k>4096"};
    return category >= 0 && category < BENCH_CATEGORIES ? names[category] : "";
}
