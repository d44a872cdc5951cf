/*
 * --tune: for each case and each math mode, the fastest rung whose arithmetic that mode allows
 * (tg_math_allows) among the results that passed the float64 check, keyed by compute
 * capability and the normalized shape the planner sees (src/problem.h), written to a tuning
 * table.  The build embeds the tuning/sm_<cc>.tsv files (cmake/tuning.cmake) and `auto` looks its calls up
 * there by the handle's math mode (src/plan/tuning.c).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "bench_internal.h"

/* The arithmetic of a result's rung ("name" or "name/kN"), or -1 for cuBLAS and auto. */
static int arith_of(const char *label)
{
    const size_t length = strcspn(label, "/");
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info a;
        if (tg_algo_info_get(i, &a) == TG_SUCCESS && strlen(a.name) == length &&
            strncmp(a.name, label, length) == 0)
            return (int)a.arith;
    }
    return -1;
}

static const result *fastest(const bench_case *c, tg_math mode)
{
    const result *best = NULL;
    for (int j = 0; j < bench_nresults; ++j) {
        const result *r = &bench_results[j];
        const int arith = arith_of(r->algo);
        const int passed = strcmp(r->status, "OK") == 0 ||
                           (mode == TG_MATH_TF32 && strcmp(r->status, "LOWPREC") == 0);
        if (memcmp(&r->c, c, sizeof *c) != 0 || !passed || arith < 0 ||
            !tg_math_allows(mode, (tg_arith)arith) || !isfinite(r->flops_per_s))
            continue;
        if (!best || r->flops_per_s > best->flops_per_s)
            best = r;
    }
    return best;
}

int bench_write_tuning(const char *path, const run_info *info, const options *o)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tilegemm %s: cannot write the tuning table %s: %s (run from the source "
                        "tree, or give --tune-file)\n", bench_cmd, path, strerror(errno));
        return 0;
    }
    fprintf(f, "# tilegemm tuning table for %s (sm_%d%d), written by `tilegemm bench --tune` "
               "at commit %s on %s. Generated: do not edit.\n",
            info->device, info->cc_major, info->cc_minor, info->commit, info->date);
    fprintf(f, "# cc\tm\tn\tk\ta_k_contiguous\tb_n_contiguous\talgo\tsplit_k\tmath\ttflops\t"
               "cublas_tflops\n");
    int rows = 0;
    for (int i = 0; i < o->ncases; ++i) {
        const bench_case *c = &o->cases[i];
        /* The planner's normalized problem is row-major: a column-major call becomes
         * C^T = op(B)^T op(A)^T, so m and n swap and so do the operands' roles.  Its first
         * factor is stored along k exactly when that factor is not transposed. */
        const int row = c->layout == TG_ROW_MAJOR;
        const long long pm = row ? c->m : c->n, pn = row ? c->n : c->m;
        const int a_k = (row ? c->ta : c->tb) == TG_NO_TRANS;
        const int b_n = (row ? c->tb : c->ta) == TG_NO_TRANS;
        for (int mode = TG_MATH_FP32; mode <= TG_MATH_TF32; ++mode) {
            const result *best = fastest(c, (tg_math)mode);
            if (!best)
                continue;
            fprintf(f, "%d\t%lld\t%lld\t%lld\t%d\t%d\t%.*s\t%d\t%s\t%.3f\t%.3f\n",
                    info->cc_major * 10 + info->cc_minor, pm, pn, (long long)c->k, a_k, b_n,
                    (int)strcspn(best->algo, "/"), best->algo, best->split_k,
                    tg_math_name((tg_math)mode), best->flops_per_s / 1e12,
                    best->cublas_flops_per_s / 1e12);
            ++rows;
        }
    }
    fclose(f);
    printf("\ntuning: %d rows written to %s (rebuild to embed them)\n", rows, path);
    return 1;
}
