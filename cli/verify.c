/*
 * `tilegemm verify`: the ladder against the float64 reference.
 *
 * The sweep misses every tile size on purpose (1, 7, 33, 127, 4097-long thin shapes, k = 1,
 * ld > rows), runs both layouts and all four transposes, alpha/beta special values, batches,
 * misaligned pointers, and an exact mode with small integers where any order of float32
 * additions gives the same bits.  Then every data distribution of check.h (wide range,
 * cancellation, 12-bit integers, Inf/NaN, subnormals, near FLT_MAX) on shapes off every tile.
 * Every case poisons C, fills the padding of A and B with NaN, and checks that nothing outside
 * C's m x n region moved (see check.c).
 *
 * Accuracy rule, per case (see check.h): scaled error <= 1 (exact cases: 0); where RMS is
 * measured, RMS <= max(sqrt(k + 2) * 2^-24, 1.5 x the strict FMA path's RMS on the same data),
 * the strict path being tg_set_math(TG_MATH_STRICT_FMA) on the same backend.  TF32 rungs are
 * held to the TF32 bounds instead (scaled-error unit (k + 2) eps + 2^-9, RMS <= 2^-10 + the FP32
 * bound) and reported beside the FP32 ones.
 */
#include "verify.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "check.h"
#include "host_memory.h"
#include "rerun.h"
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
/* The distributions run on these: at least 256 outputs each, so that RMS means something. */
static const shape kDataShapes[] = {{33, 17, 127}, {127, 33, 65}, {65, 97, 300}, {200, 130, 257}};

typedef struct scalars {
    float alpha, beta;
} scalars;

static const scalars kScalars[] = {{1.0f, 0.0f}, {1.5f, -0.5f}, {0.0f, 2.0f}, {-1.0f, 1.0f}};

/* Results of one rung on one distribution. */
typedef struct tally {
    int cases, failures, harness; /* harness: cases the check itself could not run */
    int refused;                  /* cases the rung's constraints refuse (not counted in cases) */
    double worst, rms, strict_rms; /* worst scaled error, largest RMS of the rung and strict */
} tally;

typedef struct rung_run {
    const char *name;
    tg_check_arith arith;
    tally by_data[TG_DIST_COUNT];
} rung_run;

static uint64_t g_seed;

static void run_case(tg_handle *h, tg_handle *strict, const tg_case *c, rung_run *run,
                     int verbose)
{
    const uint64_t seed = g_seed++;
    tg_case_result r, s;
    tally *t = &run->by_data[c->small_ints ? TG_DIST_UNIFORM : c->distribution];
    tg_check_case(h, c, seed, &r);
    if (r.refused) {
        t->refused++;
        return;
    }
    if (strict && r.rms >= 0) {
        tg_check_case(strict, c, seed, &s);
        tg_check_against_strict(c, &r, &s);
        if (s.rms > t->strict_rms)
            t->strict_rms = s.rms;
    }
    t->cases++;
    if (r.status == TG_SUCCESS && r.scaled_error > t->worst)
        t->worst = r.scaled_error;
    if (r.rms > t->rms)
        t->rms = r.rms;
    char name[240];
    tg_case_name(c, name, sizeof name);
    if (!r.passed) {
        char command[500];
        if (r.harness)
            t->harness++;
        else
            t->failures++;
        tg_case_command(c, run->name, seed, command, sizeof command);
        fprintf(stderr, "FAIL %s: %s: %s%s\n  rerun: %s\n", run->name, name, r.detail,
                r.harness ? " (the check could not run: not a result of the library)" : "",
                command);
    } else if (verbose) {
        char rms[64] = "not measured";
        if (r.rms >= 0)
            snprintf(rms, sizeof rms, "%.3g (limit %.3g)", r.rms, r.rms_limit);
        printf("ok   %s: %s: scaled error %.3g, RMS %s, %s arithmetic\n", run->name, name,
               r.scaled_error, rms, tg_check_arith_name(r.arith));
    }
}

/* The sweep for one rung; device memory is added where the rung runs on a GPU. */
static void sweep(tg_handle *h, tg_handle *strict, rung_run *run, int quick, int gpu, int data)
{
    const shape *shapes = quick ? kQuickShapes : kFullShapes;
    const int shape_count = quick ? (int)(sizeof kQuickShapes / sizeof *kQuickShapes)
                                  : (int)(sizeof kFullShapes / sizeof *kFullShapes);
    const int scalar_count = quick ? 2 : (int)(sizeof kScalars / sizeof *kScalars);
    const tg_layout layouts[] = {TG_ROW_MAJOR, TG_COL_MAJOR};
    const tg_op ops[] = {TG_NO_TRANS, TG_TRANS};
    int variant = 0;
    if (data < 0 || data == TG_DIST_UNIFORM) {
        for (int s = 0; s < shape_count; ++s)
            for (int l = 0; l < 2; ++l)
                for (int o = 0; o < 4; ++o)
                    for (int a = 0; a < scalar_count; ++a, ++variant) {
                        tg_case c = {.layout = layouts[l], .transa = ops[o >> 1],
                                     .transb = ops[o & 1], .m = shapes[s].m, .n = shapes[s].n,
                                     .k = shapes[s].k, .ld_pad = variant % 2 ? 3 : 0,
                                     .alpha = kScalars[(a + s) % 4].alpha,
                                     .beta = kScalars[(a + s) % 4].beta, .batch = 1};
                        run_case(h, strict, &c, run, 0);
                    }
        /* Batches, misalignment, exactness and GPU memory kinds, on shapes off every tile. */
        for (int o = 0; o < 4; ++o) {
            const tg_op ta = ops[o >> 1], tb = ops[o & 1];
            const tg_case extra[] = {
                {TG_ROW_MAJOR, ta, tb, 33, 17, 45, 2, 1.0f, 0.5f, 3, 0, 0, 0, TG_CHECK_HOST, 0},
                {TG_COL_MAJOR, ta, tb, 17, 33, 45, 0, -2.0f, 0.0f, 4, 1, 0, 0, TG_CHECK_HOST, 0},
                {TG_ROW_MAJOR, ta, tb, 35, 29, 71, 1, 1.0f, 1.0f, 1, 0, 1, 0, TG_CHECK_HOST, 0},
                {TG_COL_MAJOR, ta, tb, 65, 97, 300, 0, 1.0f, 0.0f, 1, 0, 0, 1, TG_CHECK_HOST, 0},
                {TG_ROW_MAJOR, ta, tb, 130, 67, 129, 5, 2.0f, -1.0f, 1, 0, 1, 1, TG_CHECK_HOST,
                 0},
            };
            for (size_t e = 0; e < sizeof extra / sizeof *extra; ++e) {
                tg_case c = extra[e];
                run_case(h, strict, &c, run, 0);
                if (gpu) {
                    c.memory = e % 2 ? TG_CHECK_MANAGED : TG_CHECK_DEVICE;
                    run_case(h, strict, &c, run, 0);
                }
            }
        }
    }
    /* Every other distribution: both layouts, all transposes, beta = 0 and not, batches. */
    const int data_shapes = quick ? 2 : (int)(sizeof kDataShapes / sizeof *kDataShapes);
    for (int d = TG_DIST_UNIFORM + 1; d < TG_DIST_COUNT; ++d) {
        if (data >= 0 && data != d)
            continue;
        for (int s = 0; s < data_shapes; ++s)
            for (int l = 0; l < 2; ++l)
                for (int o = 0; o < 4; ++o, ++variant) {
                    tg_case c = {.layout = layouts[l], .transa = ops[o >> 1],
                                 .transb = ops[o & 1], .m = kDataShapes[s].m,
                                 .n = kDataShapes[s].n, .k = kDataShapes[s].k,
                                 .ld_pad = variant % 3, .alpha = variant % 2 ? 1.0f : -2.0f,
                                 .beta = variant % 4 < 2 ? 0.0f : 1.0f,
                                 .batch = o == 3 ? 2 : 1,
                                 .distribution = (tg_distribution)d};
                    if (gpu && (s + o) % 3 == 1)
                        c.memory = o % 2 ? TG_CHECK_MANAGED : TG_CHECK_DEVICE;
                    run_case(h, strict, &c, run, 0);
                }
    }
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: tilegemm verify [--quick] [--algo NAME|cpu|all] [--cpu-only|--gpu-only]\n"
            "                       [--math fp32|strict|tf32] [--data NAME|all] [--seed S]\n"
            "       one case: tilegemm verify --algo NAME --shape MxNxK [--layout row|col]\n"
            "                 [--trans NN|NT|TN|TT] [--ld-pad P] [--alpha A] [--beta B]\n"
            "                 [--batch N] [--share-a] [--misalign] [--exact]\n"
            "                 [--memory host|device|managed] [--data NAME] [--seed S]\n"
            "  --algo     a rung of `tilegemm algos`, auto, cpu (the CPU backend) or all (default)\n"
            "  --math     the math mode of the handles (default fp32; see tg_set_math)\n"
            "  --data     uniform, wide, cancel, int12, special, subnormal, huge, or all (default)\n"
            "exit: 0 all passed, 1 a case failed, 2 bad arguments, 77 skipped (no GPU;\n"
            "      1 with TILEGEMM_REQUIRE_GPU=1)\n");
}

/* --seed: the seed of the cases (g_seed), and that one was given (*out). */
static int read_seed(const char *value, void *out)
{
    if (tg_arg_u64(value, &g_seed) != 0)
        return -1;
    *(int *)out = 1;
    return 0;
}

/* Makes a handle that runs `name`: "cpu" forces the CPU backend, anything else a rung. */
static tg_handle *make_handle(const char *name, tg_math math, int strict)
{
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS) {
        fprintf(stderr, "verify: %s\n", tg_last_error(NULL));
        return NULL;
    }
    tg_status s = tg_set_math(h, strict ? TG_MATH_STRICT_FMA : math);
    if (s == TG_SUCCESS && strcmp(name, "cpu") == 0)
        s = tg_set_backend(h, TG_BACKEND_CPU);
    else if (s == TG_SUCCESS && !strict)
        s = tg_set_algo(h, name);
    if (s != TG_SUCCESS) {
        fprintf(stderr, "verify: %s\n", tg_last_error(h));
        tg_destroy(h);
        return NULL;
    }
    return h;
}

/* Exit code for a run that needs a GPU and has none: 77 (skipped), or 1 where
 * TILEGEMM_REQUIRE_GPU says a GPU must be there (as on the device machine). */
static int no_gpu(void)
{
    const char *v = getenv("TILEGEMM_REQUIRE_GPU");
    if (v && *v && strcmp(v, "0") != 0) {
        printf("verify: TILEGEMM_REQUIRE_GPU is set: a skip is a failure\n");
        return 1;
    }
    return 77;
}

static int is_rung(const char *name)
{
    for (const char *const *a = tg_algos(); *a; ++a)
        if (strcmp(*a, name) == 0)
            return 1;
    return 0;
}

int tg_verify_main(int argc, char **argv)
{
    int quick = 0, cpu_only = 0, gpu_only = 0, single = 0, data = -1, seeded = 0;
    tg_math math = TG_MATH_FP32;
    const char *algo = "all";
    tg_case one = {.layout = TG_ROW_MAJOR, .transa = TG_NO_TRANS, .transb = TG_NO_TRANS,
                   .alpha = 1.0f, .beta = 0.0f, .batch = 1};
    g_seed = (uint64_t)time(NULL) * 1000003u;
    static const char *const memories[] = {"host", "device", "managed", NULL};
    static const char *const datas[] = {"uniform", "wide",      "cancel", "int12", "special",
                                        "subnormal", "huge", "all", NULL};
    int memory = TG_CHECK_HOST, data_index = TG_DIST_COUNT, math_mode = TG_MATH_FP32;
    tg_op trans[2] = {TG_NO_TRANS, TG_NO_TRANS};
    const char *shape_text = NULL;
    tg_choice_arg memory_arg = {memories, &memory}, data_arg = {datas, &data_index};
    tg_int_arg ld_pad = {0, INT64_MAX, &one.ld_pad, NULL}, batch = {1, INT64_MAX, &one.batch, NULL};
    const tg_option options[] = {
        {"--quick", NULL, &quick, NULL},
        {"--cpu-only", NULL, &cpu_only, NULL},
        {"--gpu-only", NULL, &gpu_only, NULL},
        {"--share-a", NULL, &one.share_a, NULL},
        {"--misalign", NULL, &one.misalign, NULL},
        {"--exact", NULL, &one.small_ints, NULL},
        {"--algo", tg_arg_name, &algo, "a rung of `tilegemm algos`, auto, cpu or all"},
        {"--seed", read_seed, &seeded, "a non-negative integer"},
        {"--shape", tg_arg_name, &shape_text, "MxNxK"},
        {"--layout", tg_arg_layout, &one.layout, "row or col"},
        {"--trans", tg_arg_trans, trans, "NN, NT, TN or TT"},
        {"--ld-pad", tg_arg_int, &ld_pad, "a non-negative integer"},
        {"--alpha", tg_arg_float, &one.alpha, "a finite float"},
        {"--beta", tg_arg_float, &one.beta, "a finite float"},
        {"--batch", tg_arg_int, &batch, "a positive integer"},
        {"--memory", tg_arg_choice, &memory_arg, "host, device or managed"},
        {"--math", tg_arg_math, &math_mode, "fp32, strict or tf32"},
        {"--data", tg_arg_choice, &data_arg,
         "uniform, wide, cancel, int12, special, subnormal, huge or all"},
        {NULL, NULL, NULL, NULL}};
    const int early = tg_args_parse("verify", argc, argv, options, NULL, NULL, usage);
    if (early >= 0)
        return early;
    one.transa = trans[0], one.transb = trans[1];
    one.memory = (tg_memory_choice)memory;
    math = (tg_math)math_mode;
    data = data_index >= TG_DIST_COUNT ? -1 : data_index;
    if (shape_text) {
        long long m, n, k;
        if (tg_parse_shape(shape_text, &m, &n, &k)) {
            fprintf(stderr, "tilegemm verify: --shape \"%s\": the value must be MxNxK\n",
                    shape_text);
            return 2;
        }
        one.m = m, one.n = n, one.k = k, single = 1;
    }
    if (single) {
        one.distribution = data < 0 ? TG_DIST_UNIFORM : (tg_distribution)data;
        if (tg_case_bytes(&one) < 0) {
            fprintf(stderr, "tilegemm verify: --shape, --ld-pad and --batch ask for more memory "
                            "than a 64-bit size holds\n");
            return 2;
        }
        /* Refused before anything is allocated: malloc may promise what the machine does not
         * have, and filling it would get the process killed without a message. */
        char why[300];
        if (tg_host_memory_refusal("the check of --shape, --ld-pad and --batch needs",
                                   (double)tg_case_bytes(&one), why, sizeof why)) {
            fprintf(stderr, "tilegemm verify: %s\n", why);
            return 2;
        }
    }
    if (strcmp(algo, "all") && strcmp(algo, "cpu") && !is_rung(algo)) {
        fprintf(stderr, "verify: algo \"%s\" is not cpu, all or one of `tilegemm algos`\n", algo);
        return 2;
    }

    const int gpu = tg_backend_available(TG_BACKEND_CUDA);
    if (gpu_only && !gpu) {
        printf("verify: no GPU found, the GPU rungs are SKIPPED\n");
        return no_gpu();
    }
    if (!gpu && one.memory != TG_CHECK_HOST) {
        printf("verify: no GPU found: --memory %s needs one, SKIPPED\n",
               one.memory == TG_CHECK_DEVICE ? "device" : "managed");
        return no_gpu();
    }
    if (!gpu && strcmp(algo, "all") && strcmp(algo, "cpu") && strcmp(algo, "auto")) {
        printf("verify: no GPU found: rung %s SKIPPED\n", algo);
        return no_gpu();
    }
    printf("verify: seed %llu%s, math %s\n", (unsigned long long)g_seed,
           seeded ? "" : " (from the clock; rerun with --seed)", tg_math_name(math));

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

    int failures = 0, harness = 0;
    static rung_run runs[64];
    for (int i = 0; i < count; ++i) {
        rung_run *run = &runs[i];
        memset(run, 0, sizeof *run);
        run->name = names[i];
        tg_handle *h = make_handle(names[i], math, 0);
        /* The strict FMA path on the same backend, for the RMS comparison.  The CPU backend
         * is strict FMA already. */
        tg_handle *strict = strcmp(names[i], "cpu") ? make_handle(names[i], math, 1) : NULL;
        if (!h || (strcmp(names[i], "cpu") && !strict)) {
            run->by_data[0].failures = 1;
            failures++;
            tg_destroy(h);
            tg_destroy(strict);
            continue;
        }
        run->arith = tg_handle_arith(h);
        if (single)
            run_case(h, strict, &one, run, 1);
        else
            sweep(h, strict, run, quick, gpu && strcmp(names[i], "cpu") != 0, data);
        int cases = 0, refused = 0;
        for (int d = 0; d < TG_DIST_COUNT; ++d) {
            failures += run->by_data[d].failures;
            harness += run->by_data[d].harness;
            cases += run->by_data[d].cases;
            refused += run->by_data[d].refused;
        }
        if (refused && !cases) { /* a rung must run some of the sweep */
            fprintf(stderr, "FAIL %s: its constraints refused every case\n", names[i]);
            run->by_data[0].failures++;
            failures++;
        } else if (refused) {
            printf("%s: %d case(s) outside its constraints, not run\n", names[i], refused);
        }
        tg_destroy(h);
        tg_destroy(strict);
    }

    printf("\n%-16s %-6s %-9s %6s %13s %10s %10s  %s\n", "rung", "arith", "data", "cases",
           "worst scaled", "RMS", "strict RMS", "result");
    for (int i = 0; i < count; ++i)
        for (int d = 0; d < TG_DIST_COUNT; ++d) {
            const tally *t = &runs[i].by_data[d];
            if (!t->cases && !t->failures)
                continue;
            const char *result = t->failures ? "FAIL" : t->harness ? "NOT RUN" : "PASS";
            char rms[32] = "-", strict[32] = "-";
            if (t->rms > 0)
                snprintf(rms, sizeof rms, "%.3g", t->rms);
            if (t->strict_rms > 0)
                snprintf(strict, sizeof strict, "%.3g", t->strict_rms);
            printf("%-16s %-6s %-9s %6d %13.3g %10s %10s  %s\n", runs[i].name,
                   tg_check_arith_name(runs[i].arith), tg_distribution_name((tg_distribution)d),
                   t->cases, t->worst, rms, strict, result);
        }
    if (!gpu && strcmp(algo, "all") == 0)
        printf("(no GPU found: the CUDA rungs were not run)\n");
    printf("scaled error = |c - ref| / ((k + 2) * FLT_EPSILON * (sum |alpha a b| + |beta c|)); "
           "pass <= 1 (exact cases: 0;\n"
           "  tf32 rungs: unit (k + 2) * FLT_EPSILON + 2^-9; 3xtf32: + 2^-21)\n"
           "RMS = RMS over outputs of |c - ref| / (sum |alpha a b| + |beta c|); pass <= "
           "max(sqrt(k + 2) * 2^-24, 1.5 * strict RMS)\n"
           "  (tf32 rungs: 2^-10 + sqrt(k + 2) * 2^-24); measured on 256+ outputs, not on "
           "int12, special, subnormal\n");
    if (harness && !failures)
        fprintf(stderr, "verify: %d case(s) could not be run here (memory or copies), see above\n",
                harness);
    return failures ? 1 : harness ? 2 : 0;
}
