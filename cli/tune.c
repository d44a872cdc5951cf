/*
 * `tilegemm tune`: fills autotuning's cache (tg_autotune_shape) for shapes given or a suite's,
 * so that later calls with autotuning on (TILEGEMM_AUTOTUNE=1, tg_set_autotune,
 * tilegemm.autotune()) take the measured choice at once.  The public header alone, and the
 * tools' shape parser, argument reader and suites (check/suites.h).
 *
 *   tilegemm tune [MxNxK ...] [--suite squares|awkward|transposes|random|all|quick]
 *                 [--math fp32|strict|tf32] [--layout row|col] [--trans T[,T...]]
 *                 [--seed S] [--count N] [--list]
 */
#include "tune.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "shape.h"
#include "suites.h"
#include "tilegemm.h"

typedef struct tune_case {
    long long m, n, k;
    tg_op ta, tb;
    tg_layout layout;
    const char *suite;
} tune_case;

typedef struct tune_list {
    tune_case *cases;
    int count, cap;
    tg_op trans[4][2];
    int ntrans;
    tg_layout layout;
    int bad; /* a positional argument was refused */
} tune_list;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tilegemm tune [MxNxK ...] [--suite squares|awkward|transposes|random|all|quick]\n"
            "                     [--math fp32|strict|tf32] [--layout row|col] [--trans T[,T...]]\n"
            "                     [--seed S] [--count N] [--list]\n"
            "  times the planner's best candidates for each shape on this GPU and keeps the\n"
            "  fastest in the autotuning cache (TILEGEMM_CACHE_DIR, else $XDG_CACHE_HOME/tilegemm,\n"
            "  else ~/.cache/tilegemm), for calls made with TILEGEMM_AUTOTUNE=1 or tg_set_autotune.\n"
            "  Shapes as `tilegemm bench` names them: --suite, --seed and --count as there (the\n"
            "  random suite draws its own transposes and layouts); --trans (default NN) and\n"
            "  --layout (default row) for given shapes and the fixed suites.  Operands are dense\n"
            "  and aligned as cudaMalloc returns them.  --list prints the shapes, times nothing.\n");
}

static void add(tune_list *l, const tune_case *c)
{
    for (int i = 0; i < l->count; ++i) {
        const tune_case *o = &l->cases[i];
        if (o->m == c->m && o->n == c->n && o->k == c->k && o->ta == c->ta && o->tb == c->tb &&
            o->layout == c->layout)
            return; /* "all" repeats some shapes: tune each once */
    }
    if (l->count == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        tune_case *grown = realloc(l->cases, (size_t)l->cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "tilegemm tune: out of host memory\n");
            exit(1);
        }
        l->cases = grown;
    }
    l->cases[l->count++] = *c;
}

/* A case of a suite or a given shape, with --trans and --layout applied (check/suites.h). */
static void add_suite_case(void *ctx, const tg_suite_case *c)
{
    add(ctx, &(tune_case){c->m, c->n, c->k, c->ta, c->tb, c->layout, c->suite});
}

typedef struct shapes {
    long long (*dims)[3];
    int count;
} shapes;

static int take_shape(const char *arg, void *ctx)
{
    shapes *s = ctx;
    long long m, n, k;
    if (tg_parse_shape(arg, &m, &n, &k) != 0 || m < 1 || n < 1 || k < 1) {
        fprintf(stderr, "tilegemm tune: \"%s\" is not a shape MxNxK of positive integers\n", arg);
        return TG_ARGS_REPORTED;
    }
    s->dims[s->count][0] = m, s->dims[s->count][1] = n, s->dims[s->count][2] = k;
    ++s->count;
    return 0;
}

/* --trans NN,TT: up to 4 transposes. */
static int read_trans(const char *value, void *out)
{
    tune_list *l = out;
    l->ntrans = 0;
    char text[64];
    if (snprintf(text, sizeof text, "%s", value) >= (int)sizeof text)
        return -1;
    for (char *save = NULL, *t = strtok_r(text, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (l->ntrans == 4 || tg_arg_trans(t, l->trans[l->ntrans]) != 0)
            return -1;
        ++l->ntrans;
    }
    return l->ntrans > 0 ? 0 : -1;
}

static const char *trans_name(tg_op ta, tg_op tb)
{
    static const char *const names[] = {"NN", "NT", "TN", "TT"};
    return names[(ta == TG_TRANS) * 2 + (tb == TG_TRANS)];
}

int tg_tune_main(int argc, char **argv)
{
    static const char *const suites[] = {"squares", "awkward", "transposes", "random", "all",
                                         "quick", NULL};
    tune_list l = {.ntrans = 1, .layout = TG_ROW_MAJOR};
    l.trans[0][0] = l.trans[0][1] = TG_NO_TRANS;
    int suite = -1, math = TG_MATH_FP32, count = 64, list = 0;
    uint64_t seed = 1;
    tg_choice_arg suite_arg = {suites, &suite};
    tg_int_arg count_arg = {0, 1000000, NULL, &count};
    const tg_option options[] = {
        {"--suite", tg_arg_choice, &suite_arg,
         "squares, awkward, transposes, random, all or quick"},
        {"--math", tg_arg_math, &math, "fp32, strict or tf32"},
        {"--layout", tg_arg_layout, &l.layout, "row or col"},
        {"--trans", read_trans, &l, "NN, NT, TN or TT, comma-separated"},
        {"--seed", tg_arg_u64, &seed, "an unsigned integer"},
        {"--count", tg_arg_int, &count_arg, "an integer 0..1000000"},
        {"--list", NULL, &list, NULL},
        {NULL, NULL, NULL, NULL}};
    shapes given = {malloc((size_t)(argc > 0 ? argc : 1) * sizeof *given.dims), 0};
    if (!given.dims)
        return fprintf(stderr, "tilegemm tune: out of host memory\n"), 1;
    const int early = tg_args_parse("tune", argc, argv, options, take_shape, &given, usage);
    if (early >= 0) {
        free(given.dims);
        return early;
    }
    const tg_suite_choices choices = {&l.trans[0][0], l.ntrans, l.layout};
    for (int s = 0; s < given.count; ++s)
        tg_suite_shape("custom", given.dims[s][0], given.dims[s][1], given.dims[s][2],
                       &choices, add_suite_case, &l);
    free(given.dims);
    if (suite >= 0)
        tg_suite_cases(suites[suite], 1, seed, count, &choices, add_suite_case, &l);
    if (l.count == 0) {
        fprintf(stderr, "tilegemm tune: no shape: give MxNxK or --suite (see tilegemm tune "
                        "--help)\n");
        free(l.cases);
        return 2;
    }
    if (list) {
        for (int i = 0; i < l.count; ++i) {
            const tune_case *c = &l.cases[i];
            printf("%lldx%lldx%lld %s %s %s\n", c->m, c->n, c->k, trans_name(c->ta, c->tb),
                   c->layout == TG_ROW_MAJOR ? "row" : "col", c->suite);
        }
        free(l.cases);
        return 0;
    }
    if (!tg_backend_available(TG_BACKEND_CUDA)) {
        fprintf(stderr, "tilegemm tune: no GPU here (%s): nothing to time\n", tg_gpu_code());
        free(l.cases);
        return 1;
    }
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS || tg_set_math(h, (tg_math)math) != TG_SUCCESS) {
        fprintf(stderr, "tilegemm tune: %s\n", h ? tg_last_error(h) : tg_last_error(NULL));
        tg_destroy(h);
        free(l.cases);
        return 1;
    }
    printf("tuning %d shape%s in math mode %s\n", l.count, l.count == 1 ? "" : "s",
           tg_math_name((tg_math)math));
    int failed = 0;
    for (int i = 0; i < l.count; ++i) {
        const tune_case *c = &l.cases[i];
        const int64_t lda = tg_min_ld(c->layout, c->ta, c->m, c->k);
        const int64_t ldb = tg_min_ld(c->layout, c->tb, c->k, c->n);
        const int64_t ldc = tg_min_ld(c->layout, TG_NO_TRANS, c->m, c->n);
        const char *algo = NULL;
        int split = 1;
        double ms = 0.0;
        printf("%lldx%lldx%lld %s %s: ", c->m, c->n, c->k, trans_name(c->ta, c->tb),
               c->layout == TG_ROW_MAJOR ? "row" : "col");
        fflush(stdout);
        const tg_status s = tg_autotune_shape(h, c->layout, c->ta, c->tb, c->m, c->n, c->k, lda,
                                              ldb, ldc, &algo, &split, &ms);
        if (s != TG_SUCCESS) {
            printf("not tuned: %s: %s\n", tg_status_string(s), tg_last_error(h));
            failed = 1;
            continue;
        }
        printf("%s%s, %.4f ms (%.1f TFLOP/s)\n", algo, split > 1 ? " with split-K" : "", ms,
               ms > 0.0 ? 2.0 * (double)c->m * (double)c->n * (double)c->k / (ms * 1e9) : 0.0);
        if (split > 1)
            printf("  split-K: %d slices\n", split);
    }
    printf("%s\n", tg_autotune_status());
    tg_destroy(h);
    free(l.cases);
    return failed;
}
