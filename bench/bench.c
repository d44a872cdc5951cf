/*
 * `tilegemm bench` (and `tilegemm run`): the driver.  Options, timing, reports and the tuning
 * writer live in the files bench_internal.h lists, and what they share in results.c.
 *
 * GPU mode: every requested rung, `auto` (in the --math mode), cuBLAS FP32 and cuBLAS
 * FAST_TF32 on the same device buffers in one process; warm-up, then the median of per-run
 * cudaEvent times, buffers rotated so the working set exceeds the L2.
 * CPU mode (no GPU): the CPU backend on host buffers, CLOCK_MONOTONIC around each call.
 * Every result is checked once, before it is timed, against float64 on sampled entries of C
 * (check/sampled.h).  bench/suites.md describes the suites and the method.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

static void list_cases(const options *o, int gpu)
{
    printf("%s mode, %d cases, math %s; algorithms:%s", gpu ? "GPU" : "CPU", o->ncases,
           tg_math_name(o->math),
           gpu ? " cublas cublas_tf32" : " cpu");
    for (int i = 0; gpu && i < o->nalgos; ++i)
        printf(" %s", o->algos[i]);
    printf("\n");
    for (int i = 0; i < o->ncases; ++i) {
        char shape[64];
        bench_shape_text(&o->cases[i], shape, sizeof shape);
        printf("  %-18s %s %s %-9s%s\n", shape, bench_trans_name(o->cases[i].ta, o->cases[i].tb),
               bench_layout_name(o->cases[i].layout), o->cases[i].suite,
               gpu && bench_skips_naive(o, &o->cases[i], "naive") ? "  (naive skipped)" : "");
    }
}

int tg_bench_main(int argc, char **argv)
{
    options o;
    int code = 0;
    if (!bench_parse_options(argc, argv, &o, &code))
        return code;

    run_info info;
    memset(&info, 0, sizeof info);
    info.gpu = tg_backend_available(TG_BACKEND_CUDA);
#ifndef TG_HAVE_CUDA
    info.gpu = 0; /* built without CUDA: no cuBLAS to compare with */
#endif
    if (!o.warmup_given && !info.gpu)
        o.warmup = 1;

    /* Shapes: the suite's first (quick by default when no shape is given), then positional. */
    const char *suite = o.suite ? o.suite : (o.have_shapes ? NULL : "quick");
    if (suite) {
        const int positional = o.ncases;
        bench_case *given = NULL;
        if (positional) {
            given = bench_xmalloc((size_t)positional * sizeof *given);
            memcpy(given, o.cases, (size_t)positional * sizeof *given);
        }
        o.ncases = 0;
        bench_add_suite(&o, suite, info.gpu);
        for (int i = 0; i < positional; ++i)
            bench_add_case(&o, &given[i]);
        free(given);
    }
    char suite_text[64];
    snprintf(suite_text, sizeof suite_text, "%s%s", suite ? suite : "custom",
             suite && o.have_shapes ? "+custom" : "");

    if (o.list_only) {
        list_cases(&o, info.gpu);
        bench_free_options(&o);
        return 0;
    }

    bench_fill_run_info(&o, argc, argv, &info);
    if (o.repeats < MIN_CLAIM_REPEATS)
        printf("note: --repeats %d is under %d: fine for a look, not for a timed claim.\n",
               o.repeats, MIN_CLAIM_REPEATS);
    if (!info.gpu && suite && strcmp(suite, "quick") != 0)
        printf("note: suite \"%s\" was made for GPUs; on the CPU its large shapes can take "
               "minutes each.\n", suite);

    tg_handle *h = NULL;
    tg_status s = tg_create(&h);
    if (s != TG_SUCCESS) {
        fprintf(stderr, "tilegemm %s: tg_create: %s: %s\n", bench_cmd, tg_status_string(s),
                tg_last_error(NULL));
        bench_free_options(&o);
        return 1;
    }
    const int ok_runs = info.gpu ? bench_run_gpu(h, &o, &info) : bench_run_cpu(h, &o, &info);
    int ok = ok_runs;
    tg_destroy(h);

    bench_slug(&info);
    printf("\n");
    bench_print_summary(&info);

    char path[1400];
    const char *json = o.json_path;
    if (!json && o.save) {
        bench_default_json_path(&info, path, sizeof path);
        json = path;
    }
    if (json) {
        if (bench_write_json(json, &info, &o, suite_text))
            printf("wrote %s\n", json);
        else
            ok = 0;
    }
    bench_free_options(&o);
    bench_free_results();
    return ok ? 0 : 1;
}
