/*
 * `tilegemm verify`: the ladder against the float64 reference.
 *
 * The sweep misses every tile size on purpose (1, 7, 33, 127, 4097-long thin shapes, k = 1,
 * ld > rows), runs both layouts and all four transposes, alpha/beta special values, batches,
 * misaligned pointers, and an exact mode with small integers where any order of float32
 * additions gives the same bits.  Every case poisons C and checks that the padding around it
 * did not move (see check.c).
 */
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "shape.h"

typedef struct shape {
    int64_t m, n, k;
} shape;

static const shape kFullShapes[] = {
    {1, 1, 1},    {7, 7, 7},     {33, 33, 33},  {127, 127, 127}, {1, 129, 7},
    {129, 1, 7},  {7, 33, 1},    {33, 7, 4097}, {4097, 3, 5},    {3, 4097, 33},
    {200, 130, 257}, {64, 64, 64}, {5, 5, 0},  {0, 5, 3},
};
static const shape kQuickShapes[] = {
    {1, 1, 1}, {7, 33, 1}, {33, 7, 127}, {127, 33, 65}, {3, 1025, 5}, {5, 5, 0},
};

typedef struct scalars {
    float alpha, beta;
} scalars;

static const scalars kScalars[] = {{1.0f, 0.0f}, {1.5f, -0.5f}, {0.0f, 2.0f}, {-1.0f, 1.0f}};

typedef struct tally {
    const char *name;
    int cases, failures;
    double worst;
} tally;

static uint64_t g_seed;

static void run_case(tg_handle *h, const tg_case *c, tally *t, int verbose)
{
    const uint64_t seed = g_seed++;
    tg_case_result r;
    tg_check_case(h, c, seed, &r);
    t->cases++;
    if (r.status == TG_SUCCESS && r.scaled_error > t->worst)
        t->worst = r.scaled_error;
    if (!r.passed) {
        char name[200], command[400];
        t->failures++;
        tg_case_name(c, name, sizeof name);
        tg_case_command(c, t->name, seed, command, sizeof command);
        fprintf(stderr, "FAIL %s: %s: %s\n  rerun: %s\n", t->name, name, r.detail, command);
    } else if (verbose) {
        char name[200];
        tg_case_name(c, name, sizeof name);
        printf("ok   %s: %s: scaled error %.3g\n", t->name, name, r.scaled_error);
    }
}

/* The sweep for one rung; device memory is added where the rung runs on a GPU. */
static void sweep(tg_handle *h, tally *t, int quick, int gpu)
{
    const shape *shapes = quick ? kQuickShapes : kFullShapes;
    const int shape_count = quick ? (int)(sizeof kQuickShapes / sizeof *kQuickShapes)
                                  : (int)(sizeof kFullShapes / sizeof *kFullShapes);
    const int scalar_count = quick ? 2 : (int)(sizeof kScalars / sizeof *kScalars);
    const tg_layout layouts[] = {TG_ROW_MAJOR, TG_COL_MAJOR};
    const tg_op ops[] = {TG_NO_TRANS, TG_TRANS};
    int variant = 0;
    for (int s = 0; s < shape_count; ++s)
        for (int l = 0; l < 2; ++l)
            for (int o = 0; o < 4; ++o)
                for (int a = 0; a < scalar_count; ++a, ++variant) {
                    tg_case c = {.layout = layouts[l], .transa = ops[o >> 1],
                                 .transb = ops[o & 1], .m = shapes[s].m, .n = shapes[s].n,
                                 .k = shapes[s].k, .ld_pad = variant % 2 ? 3 : 0,
                                 .alpha = kScalars[(a + s) % 4].alpha,
                                 .beta = kScalars[(a + s) % 4].beta, .batch = 1};
                    run_case(h, &c, t, 0);
                }
    /* Batches, misalignment, exactness and GPU memory kinds, on shapes off every tile. */
    for (int o = 0; o < 4; ++o) {
        const tg_op ta = ops[o >> 1], tb = ops[o & 1];
        const tg_case extra[] = {
            {TG_ROW_MAJOR, ta, tb, 33, 17, 45, 2, 1.0f, 0.5f, 3, 0, 0, 0, TG_CHECK_HOST},
            {TG_COL_MAJOR, ta, tb, 17, 33, 45, 0, -2.0f, 0.0f, 4, 1, 0, 0, TG_CHECK_HOST},
            {TG_ROW_MAJOR, ta, tb, 35, 29, 71, 1, 1.0f, 1.0f, 1, 0, 1, 0, TG_CHECK_HOST},
            {TG_COL_MAJOR, ta, tb, 65, 97, 300, 0, 1.0f, 0.0f, 1, 0, 0, 1, TG_CHECK_HOST},
            {TG_ROW_MAJOR, ta, tb, 130, 67, 129, 5, 2.0f, -1.0f, 1, 0, 1, 1, TG_CHECK_HOST},
        };
        for (size_t e = 0; e < sizeof extra / sizeof *extra; ++e) {
            tg_case c = extra[e];
            run_case(h, &c, t, 0);
            if (gpu) {
                c.memory = e % 2 ? TG_CHECK_MANAGED : TG_CHECK_DEVICE;
                run_case(h, &c, t, 0);
            }
        }
    }
}

static int usage(void)
{
    fprintf(stderr,
            "usage: tilegemm verify [--quick] [--algo NAME|cpu|all] [--cpu-only|--gpu-only]\n"
            "       one case: tilegemm verify --algo NAME --shape MxNxK [--layout row|col]\n"
            "                 [--trans NN|NT|TN|TT] [--ld-pad P] [--alpha A] [--beta B]\n"
            "                 [--batch N] [--share-a] [--misalign] [--exact]\n"
            "                 [--memory host|device|managed] [--seed S]\n");
    return 2;
}

/* Sets the handle up to run `name`: "cpu" forces the CPU backend, anything else a rung. */
static int select_algo(tg_handle *h, const char *name)
{
    tg_status s = strcmp(name, "cpu") == 0 ? tg_set_backend(h, TG_BACKEND_CPU)
                                           : tg_set_algo(h, name);
    if (s != TG_SUCCESS) {
        fprintf(stderr, "verify: %s\n", tg_last_error(h));
        return -1;
    }
    return 0;
}

int tg_verify_main(int argc, char **argv)
{
    int quick = 0, cpu_only = 0, gpu_only = 0, single = 0;
    const char *algo = "all";
    tg_case one = {.layout = TG_ROW_MAJOR, .transa = TG_NO_TRANS, .transb = TG_NO_TRANS,
                   .alpha = 1.0f, .beta = 0.0f, .batch = 1};
    g_seed = (uint64_t)time(NULL) * 1000003u;
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        long long m, n, k;
        if (!strcmp(arg, "--quick")) quick = 1;
        else if (!strcmp(arg, "--cpu-only")) cpu_only = 1;
        else if (!strcmp(arg, "--gpu-only")) gpu_only = 1;
        else if (!strcmp(arg, "--share-a")) one.share_a = 1;
        else if (!strcmp(arg, "--misalign")) one.misalign = 1;
        else if (!strcmp(arg, "--exact")) one.small_ints = 1;
        else if (!value) return fprintf(stderr, "verify: %s needs a value\n", arg), usage();
        else if (++i, !strcmp(arg, "--algo")) algo = value;
        else if (!strcmp(arg, "--seed")) g_seed = strtoull(value, NULL, 10);
        else if (!strcmp(arg, "--shape")) {
            if (tg_parse_shape(value, &m, &n, &k))
                return fprintf(stderr, "verify: --shape %s is not MxNxK\n", value), 2;
            one.m = m, one.n = n, one.k = k, single = 1;
        } else if (!strcmp(arg, "--layout")) {
            if (strcmp(value, "row") && strcmp(value, "col"))
                return fprintf(stderr, "verify: --layout %s is not row or col\n", value), 2;
            one.layout = value[0] == 'r' ? TG_ROW_MAJOR : TG_COL_MAJOR;
        } else if (!strcmp(arg, "--trans")) {
            if (strlen(value) != 2 || !strchr("NT", value[0]) || !strchr("NT", value[1]))
                return fprintf(stderr, "verify: --trans %s is not NN, NT, TN or TT\n", value), 2;
            one.transa = value[0] == 'T' ? TG_TRANS : TG_NO_TRANS;
            one.transb = value[1] == 'T' ? TG_TRANS : TG_NO_TRANS;
        } else if (!strcmp(arg, "--ld-pad")) one.ld_pad = atoll(value);
        else if (!strcmp(arg, "--alpha")) one.alpha = strtof(value, NULL);
        else if (!strcmp(arg, "--beta")) one.beta = strtof(value, NULL);
        else if (!strcmp(arg, "--batch")) one.batch = atoll(value);
        else if (!strcmp(arg, "--memory")) {
            if (!strcmp(value, "host")) one.memory = TG_CHECK_HOST;
            else if (!strcmp(value, "device")) one.memory = TG_CHECK_DEVICE;
            else if (!strcmp(value, "managed")) one.memory = TG_CHECK_MANAGED;
            else return fprintf(stderr, "verify: --memory %s is not host, device or managed\n",
                                value), 2;
        } else return fprintf(stderr, "verify: unknown option %s\n", arg), usage();
    }
    if (one.ld_pad < 0 || one.batch < 1)
        return fprintf(stderr, "verify: --ld-pad must be >= 0 and --batch >= 1\n"), 2;

    const int gpu = tg_backend_available(TG_BACKEND_CUDA);
    if (gpu_only && !gpu) {
        printf("verify: no GPU found, the GPU rungs are SKIPPED\n");
        return 77;
    }
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS)
        return fprintf(stderr, "verify: %s\n", tg_last_error(NULL)), 1;

    /* The list of what to verify: the CPU path, then every rung of the ladder. */
    const char *names[64];
    int count = 0;
    if (strcmp(algo, "all") != 0) {
        names[count++] = algo;
    } else {
        if (!gpu_only)
            names[count++] = "cpu";
        for (const char *const *a = tg_algos(); *a && count < 63; ++a)
            if (strcmp(*a, "auto") != 0 && !cpu_only && gpu)
                names[count++] = *a;
    }

    int failures = 0;
    tally tallies[64];
    for (int i = 0; i < count; ++i) {
        tally *t = &tallies[i];
        *t = (tally){names[i], 0, 0, 0.0};
        tg_destroy(h);
        if (tg_create(&h) != TG_SUCCESS || select_algo(h, names[i]) != 0) {
            t->failures = 1;
            failures++;
            continue;
        }
        if (single)
            run_case(h, &one, t, 1);
        else
            sweep(h, t, quick, gpu && strcmp(names[i], "cpu") != 0);
        failures += t->failures;
    }
    tg_destroy(h);

    printf("\n%-10s %7s %20s  %s\n", "rung", "cases", "worst scaled error", "result");
    for (int i = 0; i < count; ++i)
        printf("%-10s %7d %20.3g  %s\n", tallies[i].name, tallies[i].cases, tallies[i].worst,
               tallies[i].failures ? "FAIL" : "PASS");
    if (!gpu && strcmp(algo, "all") == 0)
        printf("(no GPU found: the CUDA rungs were not run)\n");
    printf("scaled error = |c - ref| / ((k + 2) * FLT_EPSILON * sum |alpha a b| + |beta c|); "
           "pass <= 1 (exact cases: 0)\n");
    return failures ? 1 : 0;
}
