/* The benchmark's command line, suites and usage; see bench_internal.h. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "rng.h"
#include "shape.h"

static void usage(FILE *f, const char *cmd)
{
    fprintf(f,
            "usage: tilegemm %s [MxNxK ...] [options]\n"
            "\n"
            "Times tilegemm's rungs, `auto`, cuBLAS FP32 and cuBLAS FAST_TF32 on the same device\n"
            "buffers (GPU), or the CPU backend on host buffers when no GPU is found.  Progress\n"
            "goes to stderr, the table to stdout.\n"
            "\n"
            "  MxNxK ...            shapes (a single N means NxNxN)\n"
            "  --suite NAME         squares | awkward | transposes | random | all | quick\n"
            "                       (default quick when no shape is given; quick = 1024^3,\n"
            "                       2048^3 on a GPU, 256^3, 512^3, 1024^3 on the CPU; all =\n"
            "                       squares + awkward + transposes + random)\n"
            "  --seed S             seed of the random suite (default %d)\n"
            "  --count N            shapes of the random suite (default %d; 0: none, so\n"
            "                       `--suite all --count 0` is the fixed suites alone): m, n, k\n"
            "                       log-uniform in [8, 32768], transposes and layout uniform\n"
            "  --algo A[,B...]      rungs by name, from `tilegemm algos` (default: all; \"auto\" is\n"
            "                       always timed; \"naive\" is skipped when m*n*k > 2^36 unless\n"
            "                       named here)\n"
            "  --math MODE          fp32 | strict | tf32: the math mode of the `auto` entries\n"
            "                       (default fp32; forced rungs run as they are)\n"
            "  --trans T[,T...]     NN | NT | TN | TT (default NN; the transposes suite runs all)\n"
            "  --layout row|col     storage order of given shapes and fixed suites (default\n"
            "                       row; the random suite draws its own)\n"
            "  --repeats N          timed runs, median reported (default 10; fewer is noted)\n"
            "  --warmup N           untimed runs first (default 3 GPU, 1 CPU)\n"
            "  --rotate-mib N       rotate buffer sets until sets*bytes >= max(N MiB, 2*L2)\n"
            "                       (default 128)\n"
            "  --save               write JSON to bench/results/<device>-<date>.json (relative to\n"
            "                       the current directory: run it from the source tree)\n"
            "  --json FILE          write JSON to FILE\n"
            "  --commit SHA         commit to record (default $TILEGEMM_COMMIT, else git)\n"
            "  --split-k S[,S...]   time each rung with tg_set_split_k(S): 0 planner (default),\n"
            "                       1 never, n slices\n"
            "  --tune               write, per case and math mode, the fastest correct rung the\n"
            "                       mode allows to the tuning table `auto` reads (GPU only)\n"
            "  --tune-file FILE     where --tune writes (default tuning/sm_<cc>.tsv, relative to\n"
            "                       the current directory)\n"
            "  --list               print the cases and algorithms that would run, and exit\n"
            "  --help               this text\n"
            "\n"
            "Each result is checked once against float64 on %d sampled entries of C: worst scaled\n"
            "error (as `tilegemm verify` defines it, <= 1 is OK) and RMS relative error.\n"
            "Results pages: save the JSON in bench/results/, then run python3 bench/plot.py\n",
            cmd, BENCH_DEFAULT_SEED, BENCH_DEFAULT_COUNT, CHECK_SAMPLES);
}

void bench_add_case(options *o, const bench_case *c)
{
    for (int i = 0; i < o->ncases; ++i) {
        const bench_case *d = &o->cases[i];
        if (c->m == d->m && c->n == d->n && c->k == d->k && c->ta == d->ta && c->tb == d->tb &&
            c->layout == d->layout)
            return; /* "all" repeats some shapes: time each once */
    }
    if (o->ncases == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 32;
        bench_case *grown = realloc(o->cases, (size_t)o->cap * sizeof *grown);
        if (!grown)
            bench_die("out of host memory");
        o->cases = grown;
    }
    o->cases[o->ncases++] = *c;
}

/* Adds a shape of a suite once per --trans choice, in the --layout. */
static void add_shape(options *o, const char *suite, int64_t m, int64_t n, int64_t k)
{
    for (int t = 0; t < o->ntrans; ++t)
        bench_add_case(o, &(bench_case){m, n, k, o->trans[t][0], o->trans[t][1], o->layout,
                                        suite});
}

void bench_add_random(options *o, uint64_t seed, int count)
{
    const double lo = log(8.0), hi = log(32768.0);
    uint64_t state = seed;
    for (int i = 0; i < count; ++i) {
        int64_t d[3];
        for (int j = 0; j < 3; ++j) /* tg_random_unit is in [-1, 1) */
            d[j] = (int64_t)llround(exp(lo + (hi - lo) * 0.5 * (tg_random_unit(&state) + 1.0)));
        const uint64_t pick = tg_splitmix64(&state);
        bench_add_case(o, &(bench_case){d[0], d[1], d[2], pick & 1 ? TG_TRANS : TG_NO_TRANS,
                                        pick & 2 ? TG_TRANS : TG_NO_TRANS,
                                        pick & 4 ? TG_COL_MAJOR : TG_ROW_MAJOR, "random"});
    }
}

/* Why a shape cannot be benchmarked at all (NULL when it can): every operand's bytes must
 * be a 64-bit size.  Whether it fits in memory is found out when it is allocated. */
static const char *unfit_reason(long long m, long long n, long long k)
{
    static char why[200];
    const struct { const char *name; long long rows, cols; } ops[] = {
        {"A (m*k)", m, k}, {"B (k*n)", k, n}, {"C (m*n)", m, n}};
    for (int i = 0; i < 3; ++i) {
        long long elements, bytes;
        if (__builtin_mul_overflow(ops[i].rows, ops[i].cols, &elements) ||
            __builtin_mul_overflow(elements, (long long)sizeof(float), &bytes) ||
            (unsigned long long)bytes > (unsigned long long)(SIZE_MAX / 2)) {
            snprintf(why, sizeof why, "%s has %lld x %lld floats, more bytes than a 64-bit size "
                                      "can hold", ops[i].name, ops[i].rows, ops[i].cols);
            return why;
        }
    }
    return NULL;
}

static int parse_trans_list(const char *s, options *o)
{
    o->ntrans = 0;
    while (*s) {
        const char *comma = strchr(s, ',');
        const size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (len != 2 || o->ntrans == 4)
            return 0;
        tg_op ops[2];
        for (int i = 0; i < 2; ++i) {
            if (s[i] == 'N' || s[i] == 'n')
                ops[i] = TG_NO_TRANS;
            else if (s[i] == 'T' || s[i] == 't')
                ops[i] = TG_TRANS;
            else
                return 0;
        }
        int dup = 0;
        for (int t = 0; t < o->ntrans; ++t)
            dup |= o->trans[t][0] == ops[0] && o->trans[t][1] == ops[1];
        if (!dup) {
            o->trans[o->ntrans][0] = ops[0];
            o->trans[o->ntrans][1] = ops[1];
            o->ntrans++;
        }
        s += len;
        if (*s == ',')
            ++s;
    }
    return o->ntrans > 0;
}

static int known_algo(const char *name)
{
    for (const char *const *a = tg_algos(); *a; ++a)
        if (strcmp(*a, name) == 0)
            return 1;
    return 0;
}

static void push_algo(options *o, const char *name)
{
    for (int i = 0; i < o->nalgos; ++i)
        if (strcmp(o->algos[i], name) == 0)
            return;
    char **grown = realloc(o->algos, (size_t)(o->nalgos + 1) * sizeof *grown);
    if (!grown)
        bench_die("out of host memory");
    o->algos = grown;
    o->algos[o->nalgos] = bench_xmalloc(strlen(name) + 1);
    strcpy(o->algos[o->nalgos], name);
    o->nalgos++;
}

/* Returns 1 on success, 0 on a usage error (after printing it). */
static int parse_algos(const char *s, options *o)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "all") == 0) {
            for (const char *const *a = tg_algos(); *a; ++a)
                push_algo(o, *a);
        } else if (strcmp(tok, "cublas") == 0 || strcmp(tok, "cublas_tf32") == 0) {
            /* cuBLAS always runs in GPU mode: it is the reference of every ratio. */
        } else if (known_algo(tok)) {
            push_algo(o, tok);
            o->naive_named |= strcmp(tok, "naive") == 0;
        } else {
            fprintf(stderr, "tilegemm %s: unknown algo \"%s\"; known:", o->cmd, tok);
            for (const char *const *a = tg_algos(); *a; ++a)
                fprintf(stderr, " %s", *a);
            fprintf(stderr, " cublas\n");
            return 0;
        }
    }
    o->algos_explicit = 1;
    return 1;
}

/* "0,2,4": split-K settings to time, each 0..64, at most 8. */
static int parse_splits(const char *v, options *o)
{
    o->nsplits = 0;
    for (const char *p = v; p && *p;) {
        char *end = NULL;
        const long value = strtol(p, &end, 10);
        if (end == p || value < 0 || value > 256 || o->nsplits == 8 || (*end && *end != ','))
            break;
        o->splits[o->nsplits++] = (int)value;
        p = *end ? end + 1 : end;
        if (!*p)
            return 1;
    }
    fprintf(stderr, "tilegemm %s: --split-k takes up to 8 values 0..256, e.g. 0,2,4\n", o->cmd);
    return 0;
}

static int parse_count(const options *o, const char *opt, const char *value, int min, int *out)
{
    char *end = NULL;
    errno = 0;
    const long v = value ? strtol(value, &end, 10) : 0;
    if (!value || errno || end == value || *end || v < min || v > 1000000) {
        fprintf(stderr, "tilegemm %s: %s needs an integer >= %d\n", o->cmd, opt, min);
        return 0;
    }
    *out = (int)v;
    return 1;
}

/* One option with its value (v, NULL when missing); returns 1 when it consumed v, 0 when it
 * took none, -1 on a usage error (printed). */
static int parse_option(options *o, const char *a, const char *v)
{
    static const char *const suites[] = {"squares", "awkward", "transposes", "random", "all",
                                         "quick"};
    if (strcmp(a, "--suite") == 0) {
        for (int i = 0; v && i < 6; ++i)
            if (strcmp(v, suites[i]) == 0)
                return o->suite = v, 1;
        fprintf(stderr, "tilegemm %s: --suite takes squares, awkward, transposes, random, all "
                        "or quick\n", o->cmd);
        return -1;
    }
    if (strcmp(a, "--count") == 0)
        return parse_count(o, a, v, 0, &o->count) ? 1 : -1;
    if (strcmp(a, "--seed") == 0) {
        char *end = NULL;
        errno = 0;
        const unsigned long long seed = v ? strtoull(v, &end, 0) : 0;
        if (!v || errno || end == v || *end) {
            fprintf(stderr, "tilegemm %s: --seed needs an unsigned integer\n", o->cmd);
            return -1;
        }
        o->seed = seed;
        return 1;
    }
    if (strcmp(a, "--algo") == 0)
        return v && parse_algos(v, o) ? 1 : (v ? -1 : (fprintf(stderr, "tilegemm %s: --algo "
                                                       "needs a name list\n", o->cmd), -1));
    if (strcmp(a, "--math") == 0) {
        const int mode = tg_math_from_name(v);
        if (mode < 0) {
            fprintf(stderr, "tilegemm %s: --math takes fp32, strict or tf32\n", o->cmd);
            return -1;
        }
        o->math = (tg_math)mode;
        return 1;
    }
    if (strcmp(a, "--trans") == 0) {
        if (v && parse_trans_list(v, o))
            return 1;
        fprintf(stderr, "tilegemm %s: --trans takes NN, NT, TN or TT (comma list)\n", o->cmd);
        return -1;
    }
    if (strcmp(a, "--layout") == 0) {
        if (v && (strcmp(v, "row") == 0 || strcmp(v, "col") == 0))
            return o->layout = v[0] == 'r' ? TG_ROW_MAJOR : TG_COL_MAJOR, 1;
        fprintf(stderr, "tilegemm %s: --layout takes row or col\n", o->cmd);
        return -1;
    }
    if (strcmp(a, "--repeats") == 0)
        return parse_count(o, a, v, 1, &o->repeats) ? 1 : -1;
    if (strcmp(a, "--warmup") == 0)
        return parse_count(o, a, v, 0, &o->warmup) ? (o->warmup_given = 1) : -1;
    if (strcmp(a, "--rotate-mib") == 0) {
        int mib = 0;
        if (!parse_count(o, a, v, 0, &mib))
            return -1;
        o->rotate_mib = mib;
        return 1;
    }
    if (strcmp(a, "--split-k") == 0)
        return parse_splits(v, o) ? 1 : -1;
    const char **text = strcmp(a, "--json") == 0        ? &o->json_path
                        : strcmp(a, "--commit") == 0    ? &o->commit
                        : strcmp(a, "--tune-file") == 0 ? &o->tune_path
                                                        : NULL;
    if (text) {
        if (!v) {
            fprintf(stderr, "tilegemm %s: %s needs a value\n", o->cmd, a);
            return -1;
        }
        *text = v;
        return 1;
    }
    int *flag = strcmp(a, "--save") == 0   ? &o->save
                : strcmp(a, "--list") == 0 ? &o->list_only
                : strcmp(a, "--tune") == 0 ? &o->tune
                                           : NULL;
    if (flag)
        return *flag = 1, 0;
    fprintf(stderr, "tilegemm %s: unknown option %s (see tilegemm %s --help)\n", o->cmd, a,
            o->cmd);
    return -1;
}

int bench_parse_options(int argc, char **argv, options *o, int *exit_code)
{
    memset(o, 0, sizeof *o);
    o->cmd = argc > 0 && argv[0] ? argv[0] : "bench";
    bench_cmd = o->cmd;
    o->layout = TG_ROW_MAJOR;
    o->seed = BENCH_DEFAULT_SEED;
    o->count = BENCH_DEFAULT_COUNT;
    o->math = TG_MATH_FP32;
    o->trans[0][0] = o->trans[0][1] = TG_NO_TRANS;
    o->ntrans = 1;
    o->repeats = 10;
    o->warmup = 3;
    o->rotate_mib = DEFAULT_ROTATE_MIB;
    o->nsplits = 1; /* splits[0] = 0: the planner's choice */
    long long (*shapes)[3] = bench_xmalloc((size_t)(argc > 0 ? argc : 1) * sizeof *shapes);
    int nshapes = 0;
    *exit_code = 2;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout, o->cmd);
            *exit_code = 0;
            goto fail;
        }
        if (a[0] == '-') {
            const int used = parse_option(o, a, i + 1 < argc ? argv[i + 1] : NULL);
            if (used < 0)
                goto fail;
            i += used;
            continue;
        }
        long long *d = shapes[nshapes];
        if (tg_parse_shape_ex(a, &d[0], &d[1], &d[2], 1) != 0 || d[0] <= 0 || d[1] <= 0 ||
            d[2] <= 0) {
            fprintf(stderr, "tilegemm %s: \"%s\" is not a shape MxNxK of positive integers\n",
                    o->cmd, a);
            goto fail;
        }
        const char *why = unfit_reason(d[0], d[1], d[2]);
        if (why) {
            fprintf(stderr, "tilegemm %s: %s cannot be run: %s\n", o->cmd, a, why);
            goto fail;
        }
        ++nshapes;
    }
    o->have_shapes = nshapes > 0;
    /* Shapes are expanded later, once the mode (GPU or CPU) picks the suite's shapes; keep
     * the positional ones here in argument order. */
    for (int s = 0; s < nshapes; ++s)
        add_shape(o, "custom", shapes[s][0], shapes[s][1], shapes[s][2]);
    free(shapes);
    if (!o->algos_explicit)
        for (const char *const *a = tg_algos(); *a; ++a)
            push_algo(o, *a);
    push_algo(o, "auto"); /* every table has auto */
    *exit_code = 0;
    return 1;
fail:
    free(shapes);
    bench_free_options(o);
    return 0;
}

void bench_free_options(options *o)
{
    for (int i = 0; i < o->nalgos; ++i)
        free(o->algos[i]);
    free(o->algos);
    free(o->cases);
    o->algos = NULL;
    o->cases = NULL;
    o->nalgos = o->ncases = 0;
}

int bench_skips_naive(const options *o, const bench_case *c, const char *algo)
{
    return strcmp(algo, "naive") == 0 && !o->naive_named &&
           (double)c->m * (double)c->n * (double)c->k > (double)NAIVE_SKIP_WORK;
}

void bench_add_suite(options *o, const char *suite, int gpu)
{
    static const int64_t squares[] = {1024, 2048, 4096, 4097, 8192, 16384};
    static const int64_t awkward[][3] = {
        {1000, 1000, 1000},   {4097, 4097, 4097},    {8192, 8192, 64},
        {127, 8191, 1023},    {65536, 64, 4096},     {8192, 8192, 256},
        {3000, 5000, 700},    {16384, 128, 16384},   {1024, 1024, 65536},
        {64, 65536, 4096}};
    const int all = strcmp(suite, "all") == 0;
    if (strcmp(suite, "quick") == 0) {
        if (gpu) {
            add_shape(o, "quick", 1024, 1024, 1024);
            add_shape(o, "quick", 2048, 2048, 2048);
        } else {
            add_shape(o, "quick", 256, 256, 256);
            add_shape(o, "quick", 512, 512, 512);
            add_shape(o, "quick", 1024, 1024, 1024);
        }
    }
    if (all || strcmp(suite, "squares") == 0)
        for (size_t i = 0; i < sizeof squares / sizeof squares[0]; ++i)
            add_shape(o, "squares", squares[i], squares[i], squares[i]);
    if (all || strcmp(suite, "awkward") == 0)
        for (size_t i = 0; i < sizeof awkward / sizeof awkward[0]; ++i)
            add_shape(o, "awkward", awkward[i][0], awkward[i][1], awkward[i][2]);
    if (all || strcmp(suite, "transposes") == 0)
        for (int t = 0; t < 4; ++t)
            bench_add_case(o, &(bench_case){4096, 4096, 4096, (t & 2) ? TG_TRANS : TG_NO_TRANS,
                                            (t & 1) ? TG_TRANS : TG_NO_TRANS, o->layout,
                                            "transposes"});
    if (all || strcmp(suite, "random") == 0)
        bench_add_random(o, o->seed, o->count);
}
