/* The benchmark's command line, suites and usage; see bench_internal.h. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bench_internal.h"
#include "shape.h"
#include "suites.h"

static void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: tilegemm bench [MxNxK ...] [options]\n"
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
            "  --min-timed-ms T     GPU: more timed runs, up to 200, until they add up to T ms\n"
            "                       (default 0: --repeats alone); steadies the median of\n"
            "                       calls of a few microseconds\n"
            "  --warmup N           untimed runs first (default 3 GPU, 1 CPU)\n"
            "  --rotate-mib N       rotate buffer sets until sets*bytes >= max(N MiB, 2*L2)\n"
            "                       (default 128)\n"
            "  --save               write JSON to bench/results/<device>-<date>.json (relative to\n"
            "                       the current directory: run it from the source tree)\n"
            "  --json FILE          write JSON to FILE\n"
            "  --commit SHA         commit to record (default $TILEGEMM_COMMIT, else git)\n"
            "  --split-k S[,S...]   time each rung with tg_set_split_k(S): 0 planner (default),\n"
            "                       1 never, n slices; pow2: 1 and every power of two up to\n"
            "                       the most the planner allows the rung (tg_split_k_most);\n"
            "                       planner: every count the planner may weigh, 1 to 8 then\n"
            "                       the powers of two (tg_split_k_counts); fine: its 3, 5, 6\n"
            "                       and 7 alone\n"
            "  --prune F            time no further a rung whose first timed run is F times\n"
            "                       the case's fastest so far (its one run is kept, marked\n"
            "                       pruned: a lower bound); 0 (default) times every entry\n"
            "  --recheck N          GPU: after a case's entries, time auto and the N fastest\n"
            "                       entries of each arithmetic again, in turn, 5 rounds\n"
            "                       (recheck_ms in the JSON): auto against the best entry\n"
            "                       in the same rounds (default 0: none)\n"
            "  --tune               write, per case and math mode, the fastest correct rung the\n"
            "                       mode allows to the tuning table `auto` reads (GPU only); a\n"
            "                       rung with an auto margin (tg_algo_auto_margin: ozaki2_int8\n"
            "                       1.10) must be that much faster, as the planner asks\n"
            "  --tune-file FILE     where --tune writes (default tuning/sm_<cc>.tsv, relative to\n"
            "                       the current directory)\n"
            "  --tune-merge         with --tune: replace only the rows of this run's cases (in\n"
            "                       the --tune-modes) in the existing table, keep every other\n"
            "                       row, and note the merge in its header; refused, writing\n"
            "                       nothing, when the table is missing, unreadable or of\n"
            "                       another compute capability.  Only the rungs timed are\n"
            "                       weighed: time every candidate of the mode\n"
            "  --tune-modes M[,M]   with --tune-merge: the math modes whose rows it replaces\n"
            "                       (fp32, strict, tf32; default all three)\n"
            "  --list               print the cases and algorithms that would run, and exit\n"
            "  --help               this text\n"
            "\n"
            "Each result is checked once against float64 on %d sampled entries of C: worst scaled\n"
            "error (as `tilegemm verify` defines it, <= 1 is OK) and RMS relative error.\n"
            "Results pages: save the JSON in bench/results/, then run python3 bench/plot.py\n",
            BENCH_DEFAULT_SEED, BENCH_DEFAULT_COUNT, CHECK_SAMPLES);
}

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: tilegemm run MxNxK [MxNxK ...] --algo NAME[,NAME...] [options]\n"
            "\n"
            "Times the named rungs (and `auto`) against cuBLAS FP32 and FAST_TF32 on the given\n"
            "shapes, each result checked against float64 first: `tilegemm bench` with the\n"
            "shapes and rungs named.  It takes every option of `tilegemm bench --help`, e.g.\n"
            "  --trans NN|NT|TN|TT   --layout row|col   --math fp32|strict|tf32\n"
            "  --repeats N           --split-k S[,S...] --json FILE\n");
}

static void usage(FILE *f)
{
    (strcmp(bench_cmd, "run") == 0 ? run_usage : bench_usage)(f);
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

/* --trans and --layout, for what a suite or a given shape leaves open (check/suites.h). */
static tg_suite_choices choices_of(const options *o)
{
    return (tg_suite_choices){&o->trans[0][0], o->ntrans, o->layout};
}

static void add_suite_case(void *ctx, const tg_suite_case *c)
{
    bench_add_case(ctx, &(bench_case){c->m, c->n, c->k, c->ta, c->tb, c->layout, c->suite});
}

/* Why a shape cannot be benchmarked at all (NULL when it can): every operand's bytes must
 * be a 64-bit size, and A, B and C together fit in host memory (tg_host_memory_refusal: both
 * modes hold them on the host).  Whether the GPU has room is found out when it is allocated. */
static const char *unfit_reason(long long m, long long n, long long k)
{
    static char why[300];
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
    return bench_host_memory_refusal(&(bench_case){.m = m, .n = n, .k = k}, why, sizeof why);
}

static int parse_trans_list(const char *s, options *o)
{
    o->ntrans = 0;
    for (;;) {
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
        if (!comma)
            return 1; /* an empty item ("NN," or "NN,,NT") is refused by len != 2 above */
        s = comma + 1;
    }
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
    if (strspn(s, ",") == strlen(s)) /* "" or only commas: no name at all */
        return 0;
    o->algos_explicit = 1;
    return 1;
}

/* "0,2,4": split-K settings to time, each 0..64, at most 8. */
static int parse_splits(const char *v, options *o)
{
    o->nsplits = 0;
    o->split_counts = !strcmp(v, "pow2")      ? 1
                      : !strcmp(v, "planner") ? 2
                      : !strcmp(v, "fine")    ? 3
                                              : 0;
    if (o->split_counts) { /* per rung and case: gpu.c asks tg_split_k_counts */
        o->splits[o->nsplits++] = 1;
        return 1;
    }
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
    return 0;
}

/* Value readers of the options table (cli/args.h) that need the whole options. */
static int read_algos(const char *value, void *out) { return parse_algos(value, out) ? 0 : -1; }
static int read_trans(const char *value, void *out)
{
    return parse_trans_list(value, out) ? 0 : -1;
}
static int read_splits(const char *value, void *out) { return parse_splits(value, out) ? 0 : -1; }
/* "fp32,tf32": the bits (1 << tg_math) of the modes named, each once at most. */
static int read_modes(const char *value, void *out)
{
    unsigned *modes = out;
    *modes = 0;
    char buf[64];
    if (!*value || strlen(value) >= sizeof buf || value[strlen(value) - 1] == ',')
        return -1;
    snprintf(buf, sizeof buf, "%s", value);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        const int mode = tg_math_from_name(tok);
        if (mode < 0 || (*modes >> mode & 1u))
            return -1;
        *modes |= 1u << mode;
    }
    return *modes && !strstr(value, ",,") && value[0] != ',' ? 0 : -1;
}
static int read_nonnegative(const char *value, void *out)
{
    char *end = NULL;
    errno = 0;
    const double f = strtod(value, &end);
    if (end == value || *end || errno || !(f >= 0.0) || !isfinite(f))
        return -1;
    *(double *)out = f;
    return 0;
}

typedef struct positional_shapes {
    options *o;
    long long (*shapes)[3];
    int count;
} positional_shapes;

/* A positional argument: a shape MxNxK whose operands' sizes fit in 64 bits. */
static int take_shape(const char *a, void *ctx)
{
    positional_shapes *ps = ctx;
    long long *d = ps->shapes[ps->count];
    if (tg_parse_shape_ex(a, &d[0], &d[1], &d[2], 1) != 0 || d[0] <= 0 || d[1] <= 0 ||
        d[2] <= 0) {
        fprintf(stderr, "tilegemm %s: \"%s\" is not a shape MxNxK of positive integers\n",
                ps->o->cmd, a);
        return TG_ARGS_REPORTED;
    }
    const char *why = unfit_reason(d[0], d[1], d[2]);
    if (why) {
        fprintf(stderr, "tilegemm %s: %s cannot be run: %s\n", ps->o->cmd, a, why);
        return TG_ARGS_REPORTED;
    }
    ++ps->count;
    return 0;
}

int bench_parse_options(int argc, char **argv, options *o, int *exit_code)
{
    static const char *const suites[] = {"squares", "awkward", "transposes", "random", "all",
                                         "quick", NULL};
    memset(o, 0, sizeof *o);
    o->cmd = argc > 0 && argv[0] ? argv[0] : "bench";
    bench_cmd = o->cmd;
    o->layout = TG_ROW_MAJOR;
    o->seed = BENCH_DEFAULT_SEED;
    o->count = BENCH_DEFAULT_COUNT;
    o->trans[0][0] = o->trans[0][1] = TG_NO_TRANS;
    o->ntrans = 1;
    o->repeats = 10;
    o->nsplits = 1; /* splits[0] = 0: the planner's choice */
    int suite = -1, math = TG_MATH_FP32, warmup = -1, rotate_mib = DEFAULT_ROTATE_MIB;
    tg_choice_arg suite_arg = {suites, &suite};
    tg_int_arg count = {0, 1000000, NULL, &o->count}, repeats = {1, 1000000, NULL, &o->repeats},
               warmups = {0, 1000000, NULL, &warmup}, rotate = {0, 1000000, NULL, &rotate_mib},
               recheck = {0, 64, NULL, &o->recheck};
    const tg_option table[] = {
        {"--suite", tg_arg_choice, &suite_arg,
         "squares, awkward, transposes, random, all or quick"},
        {"--count", tg_arg_int, &count, "an integer 0..1000000"},
        {"--seed", tg_arg_u64, &o->seed, "an unsigned integer"},
        {"--algo", read_algos, o, "rungs of `tilegemm algos`, all or cublas, comma-separated"},
        {"--math", tg_arg_math, &math, "fp32, strict or tf32"},
        {"--trans", read_trans, o, "NN, NT, TN or TT, comma-separated"},
        {"--layout", tg_arg_layout, &o->layout, "row or col"},
        {"--repeats", tg_arg_int, &repeats, "an integer 1..1000000"},
        {"--warmup", tg_arg_int, &warmups, "an integer 0..1000000"},
        {"--rotate-mib", tg_arg_int, &rotate, "an integer 0..1000000"},
        {"--split-k", read_splits, o, "up to 8 values 0..256, comma-separated, e.g. 0,2,4, pow2, planner or fine"},
        {"--prune", read_nonnegative, &o->prune, "a number >= 0"},
        {"--min-timed-ms", read_nonnegative, &o->min_timed_ms, "a number >= 0"},
        {"--recheck", tg_arg_int, &recheck, "an integer 0..64"},
        {"--json", tg_arg_name, &o->json_path, "a file name"},
        {"--commit", tg_arg_name, &o->commit, "a commit"},
        {"--tune-file", tg_arg_name, &o->tune_path, "a file name"},
        {"--tune-modes", read_modes, &o->tune_modes, "fp32, strict or tf32, comma-separated"},
        {"--save", NULL, &o->save, NULL},
        {"--list", NULL, &o->list_only, NULL},
        {"--tune", NULL, &o->tune, NULL},
        {"--tune-merge", NULL, &o->tune_merge, NULL},
        {NULL, NULL, NULL, NULL}};
    positional_shapes ps = {o, bench_xmalloc((size_t)(argc > 0 ? argc : 1) * sizeof *ps.shapes),
                            0};
    *exit_code = tg_args_parse(o->cmd, argc, argv, table, take_shape, &ps, usage);
    if (*exit_code >= 0) {
        free(ps.shapes);
        bench_free_options(o);
        return 0;
    }
    /* A merge only with --tune; the modes only in a merge (a table written whole has every
     * mode's rows, which a table of some modes would drop). */
    const char *needs = o->tune_merge && !o->tune         ? "--tune-merge needs --tune"
                        : o->tune_modes && !o->tune_merge ? "--tune-modes needs --tune-merge"
                                                          : NULL;
    if (needs) {
        fprintf(stderr, "tilegemm %s: %s\n", o->cmd, needs);
        free(ps.shapes);
        bench_free_options(o);
        *exit_code = 2;
        return 0;
    }
    o->suite = suite >= 0 ? suites[suite] : NULL;
    o->math = (tg_math)math;
    o->warmup_given = warmup >= 0;
    o->warmup = warmup >= 0 ? warmup : 3;
    o->rotate_mib = rotate_mib;
    o->have_shapes = ps.count > 0;
    /* Shapes are expanded later, once the mode (GPU or CPU) picks the suite's shapes; keep
     * the positional ones here in argument order. */
    const tg_suite_choices choices = choices_of(o);
    for (int s = 0; s < ps.count; ++s)
        tg_suite_shape("custom", ps.shapes[s][0], ps.shapes[s][1], ps.shapes[s][2], &choices,
                       add_suite_case, o);
    free(ps.shapes);
    if (!o->algos_explicit)
        for (const char *const *a = tg_algos(); *a; ++a)
            push_algo(o, *a);
    push_algo(o, "auto"); /* every table has auto */
    *exit_code = 0;
    return 1;
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
    const tg_suite_choices choices = choices_of(o);
    tg_suite_cases(suite, gpu, o->seed, o->count, &choices, add_suite_case, o);
}
