/*
 * `tilegemm bench`: times rungs, `auto` and cuBLAS on the same data in one process.
 *
 * GPU mode (a usable GPU): for each shape, one allocation per operand holds `sets` copies of
 * A, B and C (enough that sets * bytes >= max(--rotate-mib, 2 * L2), capped by free memory),
 * filled from a host buffer of random floats in [-1, 1].  cuBLAS (FP32, CUBLAS_DEFAULT_MATH,
 * set explicitly) runs first on set 0 and is the reference C; every algorithm is then run once
 * on set 0 with C poisoned (NaN) and compared with it (relative Frobenius error, > 1e-4 is a
 * MISMATCH), then warmed up and timed: one cudaEvent pair per run, recorded on the handle's
 * stream (cuBLAS is put on the same stream), the runs walking through the sets so no run finds
 * its operands in L2; the median is reported.
 *
 * CPU mode (no GPU): the CPU backend on host buffers, CLOCK_MONOTONIC around each call, the
 * median; checked against a float64 product of sampled rows; GFLOP/s, no cuBLAS column.
 *
 * The library never exits; this tool does, on a failed CUDA or cuBLAS call (CUDA_CHECK).
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "tilegemm.h"

#ifdef TG_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

#define MISMATCH_THRESHOLD 1e-4
#define NAIVE_SKIP_WORK (1LL << 36)  /* m*n*k above this skips "naive" unless asked */
#define DEFAULT_ROTATE_MIB 128.0
#define POOL_ELEMENTS 16777213u      /* random floats kept on the host (~64 MiB), odd length
                                        so the pattern never lines up with a matrix stride */
#define SET_ALIGN_ELEMENTS 64        /* each set starts 256-byte aligned, like cudaMalloc */
#define MIN_CLAIM_REPEATS 10

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                               */

typedef struct bench_case {
    int64_t m, n, k;
    tg_op ta, tb;
} bench_case;

typedef struct result {
    bench_case c;
    tg_layout layout;
    char algo[64];
    int split_k; /* what tg_set_split_k was given: 0 planner, 1 never, n slices */
    double median_ms, min_ms, max_ms, flops_per_s;
    double cublas_ms, cublas_flops_per_s, ratio;
    double rel_error, max_rel_error;
    int sets;
    char status[16]; /* OK, MISMATCH, UNSUPPORTED, SKIPPED, ERROR */
    char note[300];
} result;

typedef struct options {
    bench_case *cases;
    int ncases, cap;
    int have_shapes;       /* positional shapes were given */
    const char *suite;     /* NULL: none given */
    char **algos;          /* the rungs to time (cuBLAS always runs in GPU mode) */
    int nalgos;
    int algos_explicit;
    int naive_named;       /* "naive" was named in --algo: run it at any size */
    tg_op trans[4][2];
    int ntrans;
    tg_layout layout;
    int repeats, warmup;
    int warmup_given;
    double rotate_mib;
    const char *json_path;
    int save;
    const char *commit;
    int list_only; /* --list: print the cases and algorithms, run nothing */
    int splits[8]; /* --split-k values, each timed for every rung; {0} = the planner's */
    int nsplits;
    int tune;      /* --tune: write the winners to tuning/sm_<cc>.tsv */
} options;

typedef struct run_info {
    int gpu;
    char device[256];
    char slug[128];
    int cc_major, cc_minor, sm_count;
    long long l2_bytes, memory_bytes;
    int driver_version, runtime_version, cublas_version;
    char commit[256];
    int dirty; /* -1 unknown */
    char date[32];
    char day[16];
    int threads;
    char command[2048];
    double rotate_target_bytes;
} run_info;

static result *results;
static int nresults, results_cap;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tilegemm bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        die("out of host memory (%zu bytes)", bytes);
    return p;
}

static result *new_result(const bench_case *c, tg_layout layout, const char *algo)
{
    if (nresults == results_cap) {
        results_cap = results_cap ? 2 * results_cap : 64;
        result *grown = realloc(results, (size_t)results_cap * sizeof *results);
        if (!grown)
            die("out of host memory");
        results = grown;
    }
    result *r = &results[nresults++];
    memset(r, 0, sizeof *r);
    r->c = *c;
    r->layout = layout;
    snprintf(r->algo, sizeof r->algo, "%s", algo);
    r->median_ms = r->min_ms = r->max_ms = r->flops_per_s = NAN;
    r->cublas_ms = r->cublas_flops_per_s = r->ratio = NAN;
    r->rel_error = r->max_rel_error = NAN;
    r->sets = 1;
    snprintf(r->status, sizeof r->status, "ERROR");
    return r;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min and max of n >= 1 values (sorts them). */
static void summarize(double *v, int n, double *median, double *min, double *max)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    *median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    *min = v[0];
    *max = v[n - 1];
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *trans_name(tg_op ta, tg_op tb)
{
    static const char *names[4] = {"NN", "NT", "TN", "TT"};
    return names[(ta == TG_TRANS) * 2 + (tb == TG_TRANS)];
}

static const char *layout_name(tg_layout layout)
{
    return layout == TG_ROW_MAJOR ? "row" : "col";
}

static double work_flops(const bench_case *c)
{
    return 2.0 * (double)c->m * (double)c->n * (double)c->k;
}

/* Leading dimensions of dense operands for this layout and these transposes. */
static void leading_dims(const bench_case *c, tg_layout layout, int64_t *lda, int64_t *ldb,
                         int64_t *ldc)
{
    *lda = tg_min_ld(layout, c->ta, c->m, c->k);
    *ldb = tg_min_ld(layout, c->tb, c->k, c->n);
    *ldc = tg_min_ld(layout, TG_NO_TRANS, c->m, c->n);
}

/* op(X)(r, c) of a dense operand stored with leading dimension ld. */
static float op_elem(const float *X, tg_layout layout, tg_op op, int64_t ld, int64_t r, int64_t c)
{
    const int row_major_view = (layout == TG_ROW_MAJOR) != (op == TG_TRANS);
    return row_major_view ? X[r * ld + c] : X[c * ld + r];
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The host pool of random floats in [-1, 1] every operand is copied from. */
static float *random_pool(void)
{
    static float *pool;
    if (!pool) {
        pool = xmalloc((size_t)POOL_ELEMENTS * sizeof *pool);
        uint64_t state = 0x7469656c6567656dull; /* fixed: runs see the same data */
        for (size_t i = 0; i < POOL_ELEMENTS; ++i)
            pool[i] = (float)((double)(splitmix64(&state) >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    }
    return pool;
}

/* Fills count host floats from the pool, continuing at *cursor. */
static void fill_host(float *dst, size_t count, size_t *cursor)
{
    const float *pool = random_pool();
    while (count) {
        size_t chunk = POOL_ELEMENTS - *cursor;
        if (chunk > count)
            chunk = count;
        memcpy(dst, pool + *cursor, chunk * sizeof *dst);
        dst += chunk;
        count -= chunk;
        *cursor = (*cursor + chunk) % POOL_ELEMENTS;
    }
}

/* Relative Frobenius error ||C - R|| / ||R|| and max|C - R| / max|R| over count elements;
 * a non-finite element of C makes both infinite. */
static void compare(const float *C, const double *R, size_t count, double *rel, double *maxrel)
{
    double diff2 = 0.0, ref2 = 0.0, maxdiff = 0.0, maxref = 0.0;
    for (size_t i = 0; i < count; ++i) {
        const double c = C[i], r = R[i];
        if (!isfinite(c)) {
            *rel = *maxrel = INFINITY;
            return;
        }
        const double d = fabs(c - r);
        diff2 += d * d;
        ref2 += r * r;
        if (d > maxdiff)
            maxdiff = d;
        if (fabs(r) > maxref)
            maxref = fabs(r);
    }
    *rel = ref2 > 0.0 ? sqrt(diff2 / ref2) : (diff2 > 0.0 ? INFINITY : 0.0);
    *maxrel = maxref > 0.0 ? maxdiff / maxref : (maxdiff > 0.0 ? INFINITY : 0.0);
}

static void set_check_status(result *r)
{
    snprintf(r->status, sizeof r->status, "%s",
             isfinite(r->rel_error) && r->rel_error <= MISMATCH_THRESHOLD ? "OK" : "MISMATCH");
}

/* "nvidia-h100-80gb-hbm3" */
static void slugify(const char *in, char *out, size_t size)
{
    size_t n = 0;
    int dash = 0;
    for (; *in && n + 1 < size; ++in) {
        const char ch = *in;
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            if (dash && n > 0 && n + 2 < size)
                out[n++] = '-';
            out[n++] = ch;
            dash = 0;
        } else if (ch >= 'A' && ch <= 'Z') {
            if (dash && n > 0 && n + 2 < size)
                out[n++] = '-';
            out[n++] = (char)(ch - 'A' + 'a');
            dash = 0;
        } else {
            dash = 1;
        }
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, size, "unknown");
}

/* First line of a command's output, trimmed; 0 when it failed or printed nothing. */
static int command_line_output(const char *cmd, char *out, size_t size)
{
    FILE *f = popen(cmd, "r");
    if (!f)
        return 0;
    out[0] = '\0';
    const int got = fgets(out, (int)size, f) != NULL;
    const int rc = pclose(f);
    size_t len = strlen(out);
    while (len && (out[len - 1] == '\n' || out[len - 1] == '\r' || out[len - 1] == ' '))
        out[--len] = '\0';
    return got && rc == 0 && len > 0;
}

/* The repository this file was compiled from, when the compiler gave an absolute path. */
static const char *source_root(void)
{
    static char root[1024];
    static int done;
    if (!done) {
        done = 1;
        const char *file = __FILE__;
        if (file[0] == '/' && strlen(file) < sizeof root) {
            snprintf(root, sizeof root, "%s", file);
            for (int cut = 0; cut < 2; ++cut) { /* drop "/bench.c", then "/bench" */
                char *slash = strrchr(root, '/');
                if (!slash || slash == root) {
                    root[0] = '\0';
                    break;
                }
                *slash = '\0';
            }
            struct stat st;
            if (root[0] && (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)))
                root[0] = '\0';
        }
    }
    return root[0] ? root : NULL;
}

static int is_safe_path(const char *s)
{
    for (; *s; ++s)
        if (*s == '\'' || *s == '\n')
            return 0;
    return 1;
}

static void find_commit(const options *o, run_info *info)
{
    info->dirty = -1;
    const char *env = getenv("TILEGEMM_COMMIT");
    if (o->commit && *o->commit) {
        snprintf(info->commit, sizeof info->commit, "%s", o->commit);
        return;
    }
    if (env && *env) {
        snprintf(info->commit, sizeof info->commit, "%s", env);
        return;
    }
    char cmd[1200], out[256];
    const char *root = source_root();
    if (root && is_safe_path(root))
        snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse --short HEAD 2>/dev/null", root);
    else
        snprintf(cmd, sizeof cmd, "git rev-parse --short HEAD 2>/dev/null");
    if (!command_line_output(cmd, out, sizeof out)) {
        snprintf(info->commit, sizeof info->commit, "unknown");
        return;
    }
    snprintf(info->commit, sizeof info->commit, "%s", out);
    /* Tracked files changed since that commit: the numbers are not exactly that commit's. */
    if (root && is_safe_path(root))
        snprintf(cmd, sizeof cmd,
                 "git -C '%s' status --porcelain --untracked-files=no 2>/dev/null", root);
    else
        snprintf(cmd, sizeof cmd, "git status --porcelain --untracked-files=no 2>/dev/null");
    FILE *f = popen(cmd, "r");
    if (f) {
        const int any = fgets(out, sizeof out, f) != NULL;
        if (pclose(f) == 0)
            info->dirty = any;
    }
}

static void fill_dates(run_info *info)
{
    const time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(info->date, sizeof info->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    strftime(info->day, sizeof info->day, "%Y-%m-%d", &tm);
}

static void cpu_model(char *out, size_t size)
{
    snprintf(out, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                snprintf(out, size, "%s", colon);
                size_t len = strlen(out);
                while (len && (out[len - 1] == '\n' || out[len - 1] == ' '))
                    out[--len] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

/* ------------------------------------------------------------------------------------------ */
/* Options                                                                                     */

static void usage(FILE *f, const char *cmd)
{
    fprintf(f,
            "usage: tilegemm %s [MxNxK ...] [options]\n"
            "\n"
            "Times tilegemm's rungs, `auto` and cuBLAS on the same device buffers (GPU), or the\n"
            "CPU backend on host buffers when no GPU is found.\n"
            "\n"
            "  MxNxK ...            shapes (a single N means NxNxN)\n"
            "  --suite NAME         squares | awkward | transposes | all | quick (default quick\n"
            "                       when no shape is given; quick = 1024^3, 2048^3 on a GPU,\n"
            "                       256^3, 512^3, 1024^3 on the CPU)\n"
            "  --algo A[,B...]      rungs from tg_algos() (default: all, \"auto\" included;\n"
            "                       \"naive\" is skipped when m*n*k > 2^36 unless named here)\n"
            "  --trans T[,T...]     NN | NT | TN | TT (default NN; the transposes suite runs all)\n"
            "  --layout row|col     storage order (default row)\n"
            "  --repeats N          timed runs, median reported (default 10; fewer is noted)\n"
            "  --warmup N           untimed runs first (default 3 GPU, 1 CPU)\n"
            "  --rotate-mib N       rotate buffer sets until sets*bytes >= max(N MiB, 2*L2)\n"
            "                       (default 128)\n"
            "  --save               write JSON to bench/results/<device>-<date>.json\n"
            "  --json FILE          write JSON to FILE\n"
            "  --commit SHA         commit to record (default $TILEGEMM_COMMIT, else git)\n"
            "  --split-k S[,S...]   time each rung with tg_set_split_k(S): 0 planner (default),\n"
            "                       1 never, n slices\n"
            "  --tune               also write each case's fastest correct rung and split-K to\n"
            "                       tuning/sm_<cc>.tsv, the table `auto` reads (GPU only)\n"
            "  --list               print the cases and algorithms that would run, and exit\n"
            "  --help               this text\n"
            "\n"
            "Results are checked against cuBLAS (relative Frobenius error > 1e-4: MISMATCH).\n"
            "Plot and README table: python3 bench/plot.py bench/results/FILE.json\n",
            cmd);
}

static void add_case(options *o, int64_t m, int64_t n, int64_t k, tg_op ta, tg_op tb)
{
    for (int i = 0; i < o->ncases; ++i) {
        const bench_case *c = &o->cases[i];
        if (c->m == m && c->n == n && c->k == k && c->ta == ta && c->tb == tb)
            return; /* "all" repeats some shapes: time each once */
    }
    if (o->ncases == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 32;
        bench_case *grown = realloc(o->cases, (size_t)o->cap * sizeof *grown);
        if (!grown)
            die("out of host memory");
        o->cases = grown;
    }
    o->cases[o->ncases++] = (bench_case){m, n, k, ta, tb};
}

/* Adds a shape once per --trans choice. */
static void add_shape(options *o, int64_t m, int64_t n, int64_t k)
{
    for (int t = 0; t < o->ntrans; ++t)
        add_case(o, m, n, k, o->trans[t][0], o->trans[t][1]);
}

static int parse_int64(const char *s, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (errno || end == s || v <= 0)
        return 0;
    *out = v;
    return (int)(end - s);
}

/* "MxNxK" or "N". */
static int parse_shape(const char *s, int64_t dims[3])
{
    int used = parse_int64(s, &dims[0]);
    if (!used)
        return 0;
    s += used;
    if (*s == '\0') {
        dims[1] = dims[2] = dims[0];
        return 1;
    }
    for (int i = 1; i < 3; ++i) {
        if (*s != 'x' && *s != 'X')
            return 0;
        ++s;
        used = parse_int64(s, &dims[i]);
        if (!used)
            return 0;
        s += used;
    }
    return *s == '\0';
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
        die("out of host memory");
    o->algos = grown;
    o->algos[o->nalgos] = xmalloc(strlen(name) + 1);
    strcpy(o->algos[o->nalgos], name);
    o->nalgos++;
}

/* Returns 0 on success, 2 on a usage error (after printing it). */
static int parse_algos(const char *s, options *o)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "all") == 0) {
            for (const char *const *a = tg_algos(); *a; ++a)
                push_algo(o, *a);
        } else if (strcmp(tok, "cublas") == 0) {
            /* cuBLAS always runs in GPU mode: it is the reference of every ratio. */
        } else if (known_algo(tok)) {
            push_algo(o, tok);
            o->naive_named |= strcmp(tok, "naive") == 0;
        } else {
            fprintf(stderr, "tilegemm bench: unknown algo \"%s\"; known:", tok);
            for (const char *const *a = tg_algos(); *a; ++a)
                fprintf(stderr, " %s", *a);
            fprintf(stderr, " cublas\n");
            return 2;
        }
    }
    o->algos_explicit = 1;
    return 0;
}

/* "0,2,4": split-K settings to time, each 0..64, at most 8. */
static int parse_splits(const char *v, options *o)
{
    o->nsplits = 0;
    for (const char *p = v; p && *p;) {
        char *end = NULL;
        const long value = strtol(p, &end, 10);
        if (end == p || value < 0 || value > 64 || o->nsplits == 8 || (*end && *end != ',')) {
            fprintf(stderr, "tilegemm bench: --split-k takes up to 8 values 0..64, e.g. 0,2,4\n");
            return 0;
        }
        o->splits[o->nsplits++] = (int)value;
        p = *end ? end + 1 : end;
    }
    if (o->nsplits == 0) {
        fprintf(stderr, "tilegemm bench: --split-k needs a value list\n");
        return 0;
    }
    return 1;
}

static int parse_count(const char *opt, const char *value, int min, int *out)
{
    char *end = NULL;
    errno = 0;
    const long v = value ? strtol(value, &end, 10) : 0;
    if (!value || errno || end == value || *end || v < min || v > 1000000) {
        fprintf(stderr, "tilegemm bench: %s needs an integer >= %d\n", opt, min);
        return 0;
    }
    *out = (int)v;
    return 1;
}

static int parse_options(int argc, char **argv, options *o, int *exit_code)
{
    const char *cmd = argc > 0 && argv[0] ? argv[0] : "bench";
    memset(o, 0, sizeof *o);
    o->layout = TG_ROW_MAJOR;
    o->trans[0][0] = o->trans[0][1] = TG_NO_TRANS;
    o->ntrans = 1;
    o->repeats = 10;
    o->warmup = 3;
    o->rotate_mib = DEFAULT_ROTATE_MIB;
    o->nsplits = 1; /* splits[0] = 0: the planner's choice */
    const char *shapes[256];
    int nshapes = 0;
    *exit_code = 2;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout, cmd);
            *exit_code = 0;
            return 0;
        } else if (strcmp(a, "--suite") == 0) {
            if (!v || (strcmp(v, "squares") && strcmp(v, "awkward") && strcmp(v, "transposes") &&
                       strcmp(v, "all") && strcmp(v, "quick"))) {
                fprintf(stderr, "tilegemm bench: --suite takes squares, awkward, transposes, "
                                "all or quick\n");
                return 0;
            }
            o->suite = v;
            ++i;
        } else if (strcmp(a, "--algo") == 0) {
            if (!v) {
                fprintf(stderr, "tilegemm bench: --algo needs a name list\n");
                return 0;
            }
            if (parse_algos(v, o))
                return 0;
            ++i;
        } else if (strcmp(a, "--trans") == 0) {
            if (!v || !parse_trans_list(v, o)) {
                fprintf(stderr, "tilegemm bench: --trans takes NN, NT, TN or TT (comma list)\n");
                return 0;
            }
            ++i;
        } else if (strcmp(a, "--layout") == 0) {
            if (v && strcmp(v, "row") == 0)
                o->layout = TG_ROW_MAJOR;
            else if (v && strcmp(v, "col") == 0)
                o->layout = TG_COL_MAJOR;
            else {
                fprintf(stderr, "tilegemm bench: --layout takes row or col\n");
                return 0;
            }
            ++i;
        } else if (strcmp(a, "--repeats") == 0) {
            if (!parse_count(a, v, 1, &o->repeats))
                return 0;
            ++i;
        } else if (strcmp(a, "--warmup") == 0) {
            if (!parse_count(a, v, 0, &o->warmup))
                return 0;
            o->warmup_given = 1;
            ++i;
        } else if (strcmp(a, "--rotate-mib") == 0) {
            int mib = 0;
            if (!parse_count(a, v, 0, &mib))
                return 0;
            o->rotate_mib = mib;
            ++i;
        } else if (strcmp(a, "--json") == 0) {
            if (!v) {
                fprintf(stderr, "tilegemm bench: --json needs a file name\n");
                return 0;
            }
            o->json_path = v;
            ++i;
        } else if (strcmp(a, "--save") == 0) {
            o->save = 1;
        } else if (strcmp(a, "--list") == 0) {
            o->list_only = 1;
        } else if (strcmp(a, "--tune") == 0) {
            o->tune = 1;
        } else if (strcmp(a, "--split-k") == 0) {
            if (!parse_splits(v, o))
                return 0;
            ++i;
        } else if (strcmp(a, "--commit") == 0) {
            if (!v) {
                fprintf(stderr, "tilegemm bench: --commit needs a value\n");
                return 0;
            }
            o->commit = v;
            ++i;
        } else if (a[0] == '-') {
            fprintf(stderr, "tilegemm bench: unknown option %s (see --help)\n", a);
            return 0;
        } else {
            int64_t dims[3];
            if (!parse_shape(a, dims)) {
                fprintf(stderr, "tilegemm bench: \"%s\" is not a shape MxNxK of positive "
                                "integers\n", a);
                return 0;
            }
            if (nshapes == (int)(sizeof shapes / sizeof shapes[0])) {
                fprintf(stderr, "tilegemm bench: too many shapes\n");
                return 0;
            }
            shapes[nshapes++] = a;
        }
    }
    o->have_shapes = nshapes > 0;
    /* Shapes are expanded later, once the mode (GPU or CPU) picks the suite's shapes; keep
     * the positional ones here in argument order. */
    for (int s = 0; s < nshapes; ++s) {
        int64_t dims[3];
        parse_shape(shapes[s], dims);
        add_shape(o, dims[0], dims[1], dims[2]);
    }
    if (!o->algos_explicit)
        for (const char *const *a = tg_algos(); *a; ++a)
            push_algo(o, *a);
    *exit_code = 0;
    return 1;
}

static void add_suite(options *o, const char *suite, int gpu)
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
            add_shape(o, 1024, 1024, 1024);
            add_shape(o, 2048, 2048, 2048);
        } else {
            add_shape(o, 256, 256, 256);
            add_shape(o, 512, 512, 512);
            add_shape(o, 1024, 1024, 1024);
        }
    }
    if (all || strcmp(suite, "squares") == 0)
        for (size_t i = 0; i < sizeof squares / sizeof squares[0]; ++i)
            add_shape(o, squares[i], squares[i], squares[i]);
    if (all || strcmp(suite, "awkward") == 0)
        for (size_t i = 0; i < sizeof awkward / sizeof awkward[0]; ++i)
            add_shape(o, awkward[i][0], awkward[i][1], awkward[i][2]);
    if (all || strcmp(suite, "transposes") == 0)
        for (int t = 0; t < 4; ++t)
            add_case(o, 4096, 4096, 4096, (t & 2) ? TG_TRANS : TG_NO_TRANS,
                     (t & 1) ? TG_TRANS : TG_NO_TRANS);
}

/* ------------------------------------------------------------------------------------------ */
/* Output: table and JSON                                                                      */

static void shape_text(const bench_case *c, char *buf, size_t size)
{
    snprintf(buf, size, "%lldx%lldx%lld", (long long)c->m, (long long)c->n, (long long)c->k);
}

static void print_table_header(int gpu)
{
    printf("%-18s %-5s %-6s %-12s %10s %10s %9s  %s\n", "shape", "trans", "layout", "algo",
           "ms", gpu ? "TFLOP/s" : "GFLOP/s", gpu ? "vs cuBLAS" : "", "check (rel. error)");
}

static void print_row(const result *r, int gpu)
{
    char shape[64], ms[32], rate[32], ratio[32], check[96];
    shape_text(&r->c, shape, sizeof shape);
    const double scale = gpu ? 1e12 : 1e9;
    if (isfinite(r->median_ms))
        snprintf(ms, sizeof ms, "%.3f", r->median_ms);
    else
        snprintf(ms, sizeof ms, "-");
    if (isfinite(r->flops_per_s))
        snprintf(rate, sizeof rate, "%.2f", r->flops_per_s / scale);
    else
        snprintf(rate, sizeof rate, "-");
    if (gpu && isfinite(r->ratio))
        snprintf(ratio, sizeof ratio, "%.2fx", r->ratio);
    else
        snprintf(ratio, sizeof ratio, gpu ? "-" : "");
    if (strcmp(r->algo, "cublas") == 0)
        snprintf(check, sizeof check, "reference");
    else if (isfinite(r->rel_error) || strcmp(r->status, "MISMATCH") == 0)
        snprintf(check, sizeof check, "%s %.1e", r->status, r->rel_error);
    else
        snprintf(check, sizeof check, "%s", r->status);
    printf("%-18s %-5s %-6s %-12s %10s %10s %9s  %s\n", shape, trans_name(r->c.ta, r->c.tb),
           layout_name(r->layout), r->algo, ms, rate, ratio, check);
    if (r->note[0])
        printf("%18s   note: %s\n", "", r->note);
    fflush(stdout);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        const unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double v, const char *fmt)
{
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs("null", f);
}

static void version_text(int v, int cuda_style, char *buf, size_t size)
{
    if (v <= 0)
        snprintf(buf, size, "unknown");
    else if (cuda_style) /* 12080 -> 12.8 */
        snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
    else /* cuBLAS: major*10000 + minor*100 + patch */
        snprintf(buf, size, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
}

static int make_dirs(const char *dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; ++p) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return 0;
            *p = '/';
        }
    }
    return mkdir(path, 0777) == 0 || errno == EEXIST;
}

/* bench/results/<slug>-<day>[-N].json, in the source tree when it is known. */
static void default_json_path(const run_info *info, char *out, size_t size)
{
    char dir[1100];
    const char *root = source_root();
    if (root)
        snprintf(dir, sizeof dir, "%s/bench/results", root);
    else
        snprintf(dir, sizeof dir, "bench/results");
    if (!make_dirs(dir))
        fprintf(stderr, "tilegemm bench: could not create %s: %s\n", dir, strerror(errno));
    for (int n = 1; n < 1000; ++n) {
        if (n == 1)
            snprintf(out, size, "%s/%s-%s.json", dir, info->slug, info->day);
        else
            snprintf(out, size, "%s/%s-%s-%d.json", dir, info->slug, info->day, n);
        struct stat st;
        if (stat(out, &st) != 0)
            return; /* never overwrite an earlier run of the same day */
    }
}

static int write_json(const char *path, const run_info *info, const options *o,
                      const char *suite_text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tilegemm bench: cannot write %s: %s\n", path, strerror(errno));
        return 0;
    }
    char v1[32], v2[32], v3[32];
    fprintf(f, "{\n  \"schema\": \"tilegemm-bench/1\",\n");
    fprintf(f, "  \"mode\": \"%s\",\n", info->gpu ? "gpu" : "cpu");
    fprintf(f, "  \"tilegemm_version\": ");
    json_string(f, tg_version());
    fprintf(f, ",\n  \"commit\": ");
    json_string(f, info->commit);
    fprintf(f, ",\n  \"dirty\": %s,\n",
            info->dirty < 0 ? "null" : info->dirty ? "true" : "false");
    fprintf(f, "  \"date\": \"%s\",\n", info->date);
    fprintf(f, "  \"command\": ");
    json_string(f, info->command);
    fprintf(f, ",\n  \"suite\": ");
    json_string(f, suite_text);
    fprintf(f, ",\n  \"device\": {\n    \"name\": ");
    json_string(f, info->device);
    if (info->gpu) {
        fprintf(f, ",\n    \"compute_capability\": \"%d.%d\",\n", info->cc_major,
                info->cc_minor);
        fprintf(f, "    \"sm_count\": %d,\n    \"l2_bytes\": %lld,\n    \"memory_bytes\": %lld\n",
                info->sm_count, info->l2_bytes, info->memory_bytes);
    } else {
        fprintf(f, ",\n    \"gpu\": null,\n    \"cpu_threads\": %d\n", info->threads);
    }
    fprintf(f, "  },\n");
    if (info->gpu) {
        version_text(info->driver_version, 1, v1, sizeof v1);
        version_text(info->runtime_version, 1, v2, sizeof v2);
        version_text(info->cublas_version, 0, v3, sizeof v3);
        fprintf(f, "  \"driver_version\": \"%s\",\n  \"driver_version_raw\": %d,\n", v1,
                info->driver_version);
        fprintf(f, "  \"runtime_version\": \"%s\",\n  \"runtime_version_raw\": %d,\n", v2,
                info->runtime_version);
        fprintf(f, "  \"cublas_version\": \"%s\",\n  \"cublas_version_raw\": %d,\n", v3,
                info->cublas_version);
        fprintf(f, "  \"cublas_math_mode\": \"CUBLAS_DEFAULT_MATH\",\n");
        fprintf(f, "  \"cublas_precision\": \"FP32 cublasSgemm, TF32 off (math mode set "
                   "explicitly)\",\n");
        fprintf(f, "  \"timing\": \"cudaEvent pair per run on the handle's stream (cuBLAS on "
                   "the same stream), median of repeats after warmup\",\n");
    } else {
        fprintf(f, "  \"driver_version\": null,\n  \"runtime_version\": null,\n"
                   "  \"cublas_version\": null,\n  \"cublas_math_mode\": null,\n");
        fprintf(f, "  \"no_gpu\": \"tg_backend_available(TG_BACKEND_CUDA) = 0: CPU backend "
                   "timed on host buffers, no cuBLAS\",\n");
        fprintf(f, "  \"timing\": \"CLOCK_MONOTONIC around each tg_sgemm call, median of "
                   "repeats after warmup\",\n");
    }
    fprintf(f, "  \"repeats\": %d,\n  \"warmup\": %d,\n", o->repeats, o->warmup);
    fprintf(f, "  \"repeats_enough_for_claims\": %s,\n",
            o->repeats >= MIN_CLAIM_REPEATS ? "true" : "false");
    fprintf(f, "  \"rotate_target_bytes\": %.0f,\n", info->rotate_target_bytes);
    fprintf(f, "  \"rotate_sets\": \"per result: copies of A, B, C cycled through\",\n");
    fprintf(f, "  \"alpha\": 1.0,\n  \"beta\": 0.0,\n  \"inputs\": \"uniform random in "
               "[-1, 1]\",\n");
    fprintf(f, "  \"check\": \"relative Frobenius error of C against %s; max_rel_error is "
               "max|C - R| / max|R|; rel_error > %g is MISMATCH\",\n",
            info->gpu ? "cuBLAS's C" : "a float64 product (sampled rows)", MISMATCH_THRESHOLD);
    fprintf(f, "  \"results\": [");
    for (int i = 0; i < nresults; ++i) {
        const result *r = &results[i];
        fprintf(f, "%s\n    {\"m\": %lld, \"n\": %lld, \"k\": %lld, \"trans\": \"%s\", "
                   "\"layout\": \"%s\", \"algo\": ",
                i ? "," : "", (long long)r->c.m, (long long)r->c.n, (long long)r->c.k,
                trans_name(r->c.ta, r->c.tb), layout_name(r->layout));
        json_string(f, r->algo);
        fprintf(f, ", \"split_k\": %d, \"median_ms\": ", r->split_k);
        json_number(f, r->median_ms, "%.6g");
        fprintf(f, ", \"min_ms\": ");
        json_number(f, r->min_ms, "%.6g");
        fprintf(f, ", \"max_ms\": ");
        json_number(f, r->max_ms, "%.6g");
        fprintf(f, ", \"tflops\": ");
        json_number(f, r->flops_per_s / 1e12, "%.6g");
        fprintf(f, ", \"gflops\": ");
        json_number(f, r->flops_per_s / 1e9, "%.6g");
        fprintf(f, ", \"cublas_median_ms\": ");
        json_number(f, r->cublas_ms, "%.6g");
        fprintf(f, ", \"cublas_tflops\": ");
        json_number(f, r->cublas_flops_per_s / 1e12, "%.6g");
        fprintf(f, ", \"ratio\": ");
        json_number(f, r->ratio, "%.4f");
        fprintf(f, ", \"rel_error\": ");
        json_number(f, r->rel_error, "%.3e");
        fprintf(f, ", \"max_rel_error\": ");
        json_number(f, r->max_rel_error, "%.3e");
        fprintf(f, ", \"rotate_sets\": %d, \"status\": \"%s\"", r->sets, r->status);
        if (r->note[0]) {
            fprintf(f, ", \"note\": ");
            json_string(f, r->note);
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    const int ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        fprintf(stderr, "tilegemm bench: error writing %s\n", path);
        return 0;
    }
    return 1;
}

/* Geometric mean of the ratio per algo (GPU), or the best rate (CPU). */
static void print_summary(const run_info *info)
{
    int mismatches = 0, errors = 0, timed = 0;
    for (int i = 0; i < nresults; ++i) {
        mismatches += strcmp(results[i].status, "MISMATCH") == 0;
        errors += strcmp(results[i].status, "ERROR") == 0;
        timed += isfinite(results[i].median_ms);
    }
    printf("summary: %d timed results on %s%s, %d mismatch%s, %d error%s", timed, info->device,
           info->gpu ? "" : " (CPU backend, no GPU)", mismatches, mismatches == 1 ? "" : "es",
           errors, errors == 1 ? "" : "s");
    if (info->gpu) {
        printf("; geo-mean vs cuBLAS:");
        /* Algos in first-seen order. */
        for (int i = 0; i < nresults; ++i) {
            const char *algo = results[i].algo;
            if (strcmp(algo, "cublas") == 0)
                continue;
            int seen = 0;
            for (int j = 0; j < i; ++j)
                seen |= strcmp(results[j].algo, algo) == 0;
            if (seen)
                continue;
            double logsum = 0.0;
            int count = 0;
            for (int j = i; j < nresults; ++j)
                if (strcmp(results[j].algo, algo) == 0 && isfinite(results[j].ratio) &&
                    results[j].ratio > 0 && strcmp(results[j].status, "OK") == 0) {
                    logsum += log(results[j].ratio);
                    count++;
                }
            if (count)
                printf(" %s %.2fx", algo, exp(logsum / count));
        }
    } else {
        double best = 0.0;
        int at = -1;
        for (int i = 0; i < nresults; ++i)
            if (isfinite(results[i].flops_per_s) && results[i].flops_per_s > best) {
                best = results[i].flops_per_s;
                at = i;
            }
        if (at >= 0) {
            char shape[64];
            shape_text(&results[at].c, shape, sizeof shape);
            printf("; best %.1f GFLOP/s at %s", best / 1e9, shape);
        }
    }
    printf("\n");
}

/* ------------------------------------------------------------------------------------------ */
/* CPU mode                                                                                    */

/* Rows of C the CPU check recomputes in float64: all when the work is small, else 32. */
static int64_t cpu_check_rows(const bench_case *c)
{
    const double work = (double)c->m * (double)c->n * (double)c->k;
    return work <= (double)(1LL << 27) || c->m <= 32 ? c->m : 32;
}

/* Float64 product of up to 32 evenly spread rows of C (all rows when the work is small). */
static void cpu_reference_rows(const bench_case *c, tg_layout layout, const float *A,
                               int64_t lda, const float *B, int64_t ldb, int64_t *rows,
                               int *nrows, double *ref)
{
    const int64_t m = c->m, n = c->n, k = c->k;
    const int all = cpu_check_rows(c) == m;
    *nrows = (int)cpu_check_rows(c);
    for (int r = 0; r < *nrows; ++r)
        rows[r] = all ? r : (int64_t)((double)r * (double)(m - 1) / 31.0 + 0.5);
    for (int r = 0; r < *nrows; ++r) {
        double *out = ref + (size_t)r * (size_t)n;
        for (int64_t j = 0; j < n; ++j)
            out[j] = 0.0;
        for (int64_t p = 0; p < k; ++p) {
            const double a = op_elem(A, layout, c->ta, lda, rows[r], p);
            for (int64_t j = 0; j < n; ++j)
                out[j] += a * (double)op_elem(B, layout, c->tb, ldb, p, j);
        }
    }
}

static int run_cpu_case(tg_handle *h, const options *o, const bench_case *c)
{
    const int64_t m = c->m, n = c->n, k = c->k;
    int64_t lda, ldb, ldc;
    leading_dims(c, o->layout, &lda, &ldb, &ldc);
    result *r = new_result(c, o->layout, "cpu");
    const size_t na = (size_t)m * (size_t)k, nb = (size_t)k * (size_t)n,
                 nc = (size_t)m * (size_t)n;
    float *A = xmalloc(na * sizeof *A), *B = xmalloc(nb * sizeof *B),
          *C = xmalloc(nc * sizeof *C);
    size_t cursor = 0;
    fill_host(A, na, &cursor);
    fill_host(B, nb, &cursor);
    for (size_t i = 0; i < nc; ++i)
        C[i] = NAN; /* beta = 0 must overwrite every element */

    int ok = 1;
    tg_status s = tg_sgemm(h, o->layout, c->ta, c->tb, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C,
                           ldc);
    if (s != TG_SUCCESS) {
        snprintf(r->status, sizeof r->status, "%s",
                 s == TG_ERROR_NOT_SUPPORTED ? "UNSUPPORTED" : "ERROR");
        snprintf(r->note, sizeof r->note, "%s: %s", tg_status_string(s), tg_last_error(h));
        ok = s == TG_ERROR_NOT_SUPPORTED;
        goto done;
    }
    {
        int64_t *rows = xmalloc(sizeof(int64_t) * (size_t)(m < 32 ? 32 : m));
        int nrows = 0;
        const int64_t max_rows = cpu_check_rows(c);
        double *ref = xmalloc((size_t)max_rows * (size_t)n * sizeof *ref);
        float *got = xmalloc((size_t)max_rows * (size_t)n * sizeof *got);
        cpu_reference_rows(c, o->layout, A, lda, B, ldb, rows, &nrows, ref);
        for (int i = 0; i < nrows; ++i) /* C is dense: row i at i * ldc (row) or column i */
            for (int64_t j = 0; j < n; ++j)
                got[(size_t)i * (size_t)n + (size_t)j] =
                    o->layout == TG_ROW_MAJOR ? C[rows[i] * ldc + j] : C[j * ldc + rows[i]];
        compare(got, ref, (size_t)nrows * (size_t)n, &r->rel_error, &r->max_rel_error);
        set_check_status(r);
        if (nrows < m)
            snprintf(r->note, sizeof r->note, "checked %d sampled rows against float64",
                     nrows);
        free(rows);
        free(ref);
        free(got);
    }
    ok = strcmp(r->status, "OK") == 0;

    for (int w = 0; w < o->warmup; ++w)
        if ((s = tg_sgemm(h, o->layout, c->ta, c->tb, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C,
                          ldc)) != TG_SUCCESS)
            break;
    double *times = xmalloc((size_t)o->repeats * sizeof *times);
    for (int i = 0; i < o->repeats && s == TG_SUCCESS; ++i) {
        const double t0 = now_seconds();
        s = tg_sgemm(h, o->layout, c->ta, c->tb, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
        times[i] = (now_seconds() - t0) * 1e3;
    }
    if (s != TG_SUCCESS) {
        snprintf(r->status, sizeof r->status, "ERROR");
        snprintf(r->note, sizeof r->note, "%s: %s", tg_status_string(s), tg_last_error(h));
        ok = 0;
    } else {
        summarize(times, o->repeats, &r->median_ms, &r->min_ms, &r->max_ms);
        r->flops_per_s = work_flops(c) / (r->median_ms * 1e-3);
    }
    free(times);
done:
    print_row(r, 0);
    free(A);
    free(B);
    free(C);
    return ok;
}

/* ------------------------------------------------------------------------------------------ */
/* GPU mode                                                                                    */

#ifdef TG_HAVE_CUDA

#define CUDA_CHECK(call)                                                                     \
    do {                                                                                     \
        const cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess)                                                             \
            die("%s failed at %s:%d: %s (%s)", #call, __FILE__, __LINE__,                    \
                cudaGetErrorString(err_), cudaGetErrorName(err_));                           \
    } while (0)

#define CUBLAS_CHECK(call)                                                                   \
    do {                                                                                     \
        const cublasStatus_t st_ = (call);                                                   \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                                    \
            die("%s failed at %s:%d: cuBLAS status %d", #call, __FILE__, __LINE__, (int)st_); \
    } while (0)

typedef struct gpu_ctx {
    tg_handle *h;
    cublasHandle_t cublas;
    cudaStream_t stream;
    cudaEvent_t *start, *stop;
    int nevents;
    size_t l2_bytes;
    double rotate_target;
} gpu_ctx;

/* Device operands of one shape: `sets` copies of A, B and C, each copy `*_stride` floats from
 * the last (rounded up to 256 bytes). */
typedef struct gpu_bufs {
    float *A, *B, *C;
    size_t a_elems, b_elems, c_elems;
    size_t a_stride, b_stride, c_stride;
    int sets;
    int next; /* the set the next run uses: consecutive runs never share a set */
    int64_t lda, ldb, ldc;
} gpu_bufs;

static size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

static void fill_device(float *dst, size_t count, size_t *cursor)
{
    const float *pool = random_pool();
    while (count) {
        size_t chunk = POOL_ELEMENTS - *cursor;
        if (chunk > count)
            chunk = count;
        CUDA_CHECK(cudaMemcpy(dst, pool + *cursor, chunk * sizeof *dst, cudaMemcpyHostToDevice));
        dst += chunk;
        count -= chunk;
        *cursor = (*cursor + chunk) % POOL_ELEMENTS;
    }
}

/* Returns 0 (with the reason in note) when even one set does not fit. */
static int gpu_alloc(gpu_ctx *g, const bench_case *c, tg_layout layout, gpu_bufs *b,
                     char *note, size_t note_size)
{
    memset(b, 0, sizeof *b);
    leading_dims(c, layout, &b->lda, &b->ldb, &b->ldc);
    b->a_elems = (size_t)c->m * (size_t)c->k;
    b->b_elems = (size_t)c->k * (size_t)c->n;
    b->c_elems = (size_t)c->m * (size_t)c->n;
    b->a_stride = round_up(b->a_elems, SET_ALIGN_ELEMENTS);
    b->b_stride = round_up(b->b_elems, SET_ALIGN_ELEMENTS);
    b->c_stride = round_up(b->c_elems, SET_ALIGN_ELEMENTS);
    const double set_bytes = (double)(b->a_stride + b->b_stride + b->c_stride) * sizeof(float);

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
    double want = set_bytes >= g->rotate_target ? 1.0 : ceil(g->rotate_target / set_bytes);
    if (want > 65536.0)
        want = 65536.0;
    b->sets = (int)(want < fit ? want : fit);
    if (b->sets < want)
        snprintf(note, note_size, "rotation capped at %d sets by free memory (%.0f MiB wanted)",
                 b->sets, want * set_bytes / 1048576.0);

    const size_t sets = (size_t)b->sets;
    CUDA_CHECK(cudaMalloc((void **)&b->A, sets * b->a_stride * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&b->B, sets * b->b_stride * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&b->C, sets * b->c_stride * sizeof(float)));
    size_t cursor = 0;
    for (size_t s = 0; s < sets; ++s) {
        fill_device(b->A + s * b->a_stride, b->a_elems, &cursor);
        fill_device(b->B + s * b->b_stride, b->b_elems, &cursor);
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
    memset(b, 0, sizeof *b);
}

/* Queues one product on set `set` with cuBLAS (algo NULL) or tilegemm; returns tg's status. */
static tg_status gpu_gemm(gpu_ctx *g, const bench_case *c, tg_layout layout, const gpu_bufs *b,
                          int set, int use_cublas)
{
    const float *A = b->A + (size_t)set * b->a_stride;
    const float *B = b->B + (size_t)set * b->b_stride;
    float *C = b->C + (size_t)set * b->c_stride;
    const float alpha = 1.0f, beta = 0.0f;
    if (!use_cublas)
        return tg_sgemm(g->h, layout, c->ta, c->tb, c->m, c->n, c->k, alpha, A, b->lda, B,
                        b->ldb, beta, C, b->ldc);
    const cublasOperation_t opa = c->ta == TG_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opb = c->tb == TG_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (layout == TG_COL_MAJOR) {
        CUBLAS_CHECK(cublasSgemm(g->cublas, opa, opb, (int)c->m, (int)c->n, (int)c->k, &alpha,
                                 A, (int)b->lda, B, (int)b->ldb, &beta, C, (int)b->ldc));
    } else {
        /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major
         * buffer read as column-major is the transpose: swap the operands, keep the ops. */
        CUBLAS_CHECK(cublasSgemm(g->cublas, opb, opa, (int)c->n, (int)c->m, (int)c->k, &alpha,
                                 B, (int)b->ldb, A, (int)b->lda, &beta, C, (int)b->ldc));
    }
    return TG_SUCCESS;
}

/* Poisons C of set 0 (NaN), runs once there and copies C back to host. */
static tg_status gpu_run_set0(gpu_ctx *g, const bench_case *c, tg_layout layout,
                              const gpu_bufs *b, int use_cublas, float *host_c)
{
    CUDA_CHECK(cudaMemsetAsync(b->C, 0xff, b->c_elems * sizeof(float), g->stream));
    const tg_status s = gpu_gemm(g, c, layout, b, 0, use_cublas);
    if (s != TG_SUCCESS) {
        CUDA_CHECK(cudaStreamSynchronize(g->stream));
        return s;
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpyAsync(host_c, b->C, b->c_elems * sizeof(float), cudaMemcpyDeviceToHost,
                               g->stream));
    CUDA_CHECK(cudaStreamSynchronize(g->stream));
    return TG_SUCCESS;
}

/* Warm-up, then `repeats` runs each between its own event pair, walking through the sets.
 * Returns tg's status of the first failing call (nothing is timed then). */
static tg_status gpu_time(gpu_ctx *g, const options *o, const bench_case *c, gpu_bufs *b,
                          int use_cublas, result *r)
{
    tg_status s = TG_SUCCESS;
    for (int w = 0; w < o->warmup && s == TG_SUCCESS; ++w) {
        s = gpu_gemm(g, c, o->layout, b, b->next, use_cublas);
        b->next = (b->next + 1) % b->sets;
    }
    for (int i = 0; i < o->repeats && s == TG_SUCCESS; ++i) {
        CUDA_CHECK(cudaEventRecord(g->start[i], g->stream));
        s = gpu_gemm(g, c, o->layout, b, b->next, use_cublas);
        CUDA_CHECK(cudaEventRecord(g->stop[i], g->stream));
        b->next = (b->next + 1) % b->sets;
    }
    CUDA_CHECK(cudaGetLastError());
    /* Every event was recorded on one stream, so the last stop completes after all others. */
    CUDA_CHECK(cudaStreamSynchronize(g->stream));
    if (s != TG_SUCCESS)
        return s;
    double *times = xmalloc((size_t)o->repeats * sizeof *times);
    for (int i = 0; i < o->repeats; ++i) {
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, g->start[i], g->stop[i]));
        times[i] = ms;
    }
    summarize(times, o->repeats, &r->median_ms, &r->min_ms, &r->max_ms);
    r->flops_per_s = work_flops(c) / (r->median_ms * 1e-3);
    free(times);
    return TG_SUCCESS;
}

static int run_gpu_case(gpu_ctx *g, const options *o, const bench_case *c)
{
    char note[300] = "";
    int ok = 1;
    const int64_t big = INT_MAX;
    int64_t lda, ldb, ldc;
    leading_dims(c, o->layout, &lda, &ldb, &ldc);
    if (c->m > big || c->n > big || c->k > big || lda > big || ldb > big || ldc > big) {
        result *r = new_result(c, o->layout, "cublas");
        snprintf(r->note, sizeof r->note, "a dimension exceeds cublasSgemm's int range");
        print_row(r, 1);
        return 0;
    }
    gpu_bufs b;
    if (!gpu_alloc(g, c, o->layout, &b, note, sizeof note)) {
        result *r = new_result(c, o->layout, "cublas");
        snprintf(r->note, sizeof r->note, "%s", note);
        print_row(r, 1);
        return 0;
    }

    /* The reference: cuBLAS's C on set 0. */
    float *host_c = xmalloc(b.c_elems * sizeof *host_c);
    double *ref = xmalloc(b.c_elems * sizeof *ref);
    gpu_run_set0(g, c, o->layout, &b, 1, host_c);
    int ref_finite = 1;
    for (size_t i = 0; i < b.c_elems; ++i) {
        ref[i] = host_c[i];
        ref_finite &= isfinite(host_c[i]) != 0;
    }

    result *cr = new_result(c, o->layout, "cublas");
    cr->sets = b.sets;
    snprintf(cr->note, sizeof cr->note, "%s", note);
    if (!ref_finite) {
        snprintf(cr->status, sizeof cr->status, "ERROR");
        snprintf(cr->note, sizeof cr->note, "cuBLAS's C has a non-finite element");
        print_row(cr, 1);
        ok = 0;
        goto done;
    }
    gpu_time(g, o, c, &b, 1, cr);
    cr->cublas_ms = cr->median_ms;
    cr->cublas_flops_per_s = cr->flops_per_s;
    cr->ratio = 1.0;
    cr->rel_error = cr->max_rel_error = 0.0;
    snprintf(cr->status, sizeof cr->status, "OK");
    const double cublas_ms = cr->median_ms, cublas_rate = cr->flops_per_s;
    print_row(cr, 1);

    for (int run = 0; run < o->nalgos * o->nsplits; ++run) {
        const char *algo = o->algos[run / o->nsplits];
        const int split = o->splits[run % o->nsplits];
        char label[64];
        if (split == 0)
            snprintf(label, sizeof label, "%s", algo);
        else
            snprintf(label, sizeof label, "%s/k%d", algo, split);
        result *r = new_result(c, o->layout, label);
        r->split_k = split;
        r->sets = b.sets;
        r->cublas_ms = cublas_ms;
        r->cublas_flops_per_s = cublas_rate;
        if (strcmp(algo, "naive") == 0 && !o->naive_named &&
            (double)c->m * (double)c->n * (double)c->k > (double)NAIVE_SKIP_WORK) {
            snprintf(r->status, sizeof r->status, "SKIPPED");
            snprintf(r->note, sizeof r->note,
                     "naive skipped: m*n*k > 2^36 (ask for it with --algo naive)");
            print_row(r, 1);
            continue;
        }
        tg_status s = tg_set_algo(g->h, algo);
        if (s == TG_SUCCESS)
            s = tg_set_split_k(g->h, split);
        if (s == TG_SUCCESS)
            s = gpu_run_set0(g, c, o->layout, &b, 0, host_c);
        if (s != TG_SUCCESS) {
            snprintf(r->status, sizeof r->status, "%s",
                     s == TG_ERROR_NOT_SUPPORTED ? "UNSUPPORTED" : "ERROR");
            snprintf(r->note, sizeof r->note, "%s: %s", tg_status_string(s),
                     tg_last_error(g->h));
            ok &= s == TG_ERROR_NOT_SUPPORTED;
            print_row(r, 1);
            continue;
        }
        compare(host_c, ref, b.c_elems, &r->rel_error, &r->max_rel_error);
        set_check_status(r);
        const int matched = strcmp(r->status, "OK") == 0;
        s = gpu_time(g, o, c, &b, 0, r);
        if (s != TG_SUCCESS) {
            snprintf(r->status, sizeof r->status, "ERROR");
            snprintf(r->note, sizeof r->note, "%s: %s", tg_status_string(s),
                     tg_last_error(g->h));
            ok = 0;
        } else {
            r->ratio = cublas_ms / r->median_ms; /* = its TFLOP/s over cuBLAS's */
            ok &= matched;
        }
        print_row(r, 1);
    }
    if (tg_set_algo(g->h, "auto") != TG_SUCCESS || tg_set_split_k(g->h, 0) != TG_SUCCESS)
        die("restoring auto: %s", tg_last_error(g->h));
done:
    free(host_c);
    free(ref);
    gpu_free(&b);
    return ok;
}

static void gpu_info(run_info *info)
{
    int dev = 0, v = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    snprintf(info->device, sizeof info->device, "%s", prop.name);
    CUDA_CHECK(cudaDeviceGetAttribute(&info->cc_major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&info->cc_minor, cudaDevAttrComputeCapabilityMinor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&info->sm_count, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, dev));
    info->l2_bytes = v;
    info->memory_bytes = (long long)prop.totalGlobalMem;
    CUDA_CHECK(cudaDriverGetVersion(&info->driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
}

/*
 * --tune: each case's fastest correct rung and split-K setting, keyed by compute capability
 * and the normalized shape the planner sees (problem.h), into tuning/sm_<cc>.tsv.  The build
 * embeds those files (cmake/tuning.cmake) and `auto` looks its calls up there (src/tuning.c).
 */
static int write_tuning(const run_info *info, const options *o)
{
    const char *root = source_root();
    char dir[1100], path[1200];
    snprintf(dir, sizeof dir, "%s/tuning", root ? root : ".");
    snprintf(path, sizeof path, "%s/sm_%d%d.tsv", dir, info->cc_major, info->cc_minor);
    FILE *f = make_dirs(dir) ? fopen(path, "w") : NULL;
    if (!f) {
        fprintf(stderr, "tilegemm bench: cannot write %s: %s\n", path, strerror(errno));
        return 0;
    }
    fprintf(f, "# tilegemm tuning table for %s (sm_%d%d), written by `tilegemm bench --tune` "
               "at commit %s on %s. Generated: do not edit.\n",
            info->device, info->cc_major, info->cc_minor, info->commit, info->date);
    fprintf(f, "# cc\tm\tn\tk\ta_k_contiguous\tb_n_contiguous\talgo\tsplit_k\ttflops\t"
               "cublas_tflops\n");
    int rows = 0;
    for (int i = 0; i < o->ncases; ++i) {
        const bench_case *c = &o->cases[i];
        const result *best = NULL;
        for (int j = 0; j < nresults; ++j) {
            const result *r = &results[j];
            if (memcmp(&r->c, c, sizeof *c) != 0 || r->layout != o->layout ||
                strcmp(r->status, "OK") != 0 || strcmp(r->algo, "cublas") == 0 ||
                strncmp(r->algo, "auto", 4) == 0)
                continue;
            if (!best || r->flops_per_s > best->flops_per_s)
                best = r;
        }
        if (!best)
            continue;
        /* The planner's normalized problem is row-major: a column-major call becomes
         * C^T = op(B)^T op(A)^T, so m and n swap and so do the operands' roles.  Its first
         * factor is stored along k exactly when that factor is not transposed. */
        const int row = o->layout == TG_ROW_MAJOR;
        const long long pm = row ? c->m : c->n, pn = row ? c->n : c->m;
        const int a_k = (row ? c->ta : c->tb) == TG_NO_TRANS;
        const int b_n = (row ? c->tb : c->ta) == TG_NO_TRANS;
        const int name_length = (int)strcspn(best->algo, "/");
        fprintf(f, "%d\t%lld\t%lld\t%lld\t%d\t%d\t%.*s\t%d\t%.3f\t%.3f\n",
                info->cc_major * 10 + info->cc_minor, pm, pn, (long long)c->k, a_k, b_n,
                name_length, best->algo,
                best->split_k, best->flops_per_s / 1e12, best->cublas_flops_per_s / 1e12);
        ++rows;
    }
    fclose(f);
    printf("\ntuning: %d rows written to %s (rebuild to embed them)\n", rows, path);
    return 1;
}

static int run_gpu(tg_handle *h, const options *o, run_info *info)
{
    gpu_ctx g;
    memset(&g, 0, sizeof g);
    g.h = h;
    gpu_info(info);
    if (tg_set_backend(h, TG_BACKEND_CUDA) != TG_SUCCESS)
        die("tg_set_backend(CUDA): %s", tg_last_error(h));
    g.stream = (cudaStream_t)tg_get_stream(h);
    CUBLAS_CHECK(cublasCreate(&g.cublas));
    CUBLAS_CHECK(cublasSetStream(g.cublas, g.stream));
    /* FP32 FFMA: no TF32, no reduced-precision shortcuts.  The default, set explicitly. */
    CUBLAS_CHECK(cublasSetMathMode(g.cublas, CUBLAS_DEFAULT_MATH));
    CUBLAS_CHECK(cublasSetPointerMode(g.cublas, CUBLAS_POINTER_MODE_HOST));
    CUBLAS_CHECK(cublasGetVersion(g.cublas, &info->cublas_version));
    g.l2_bytes = (size_t)info->l2_bytes;
    g.rotate_target = o->rotate_mib * 1048576.0;
    if (g.rotate_target < 2.0 * (double)g.l2_bytes)
        g.rotate_target = 2.0 * (double)g.l2_bytes;
    info->rotate_target_bytes = g.rotate_target;
    g.nevents = o->repeats;
    g.start = xmalloc((size_t)g.nevents * sizeof *g.start);
    g.stop = xmalloc((size_t)g.nevents * sizeof *g.stop);
    for (int i = 0; i < g.nevents; ++i) {
        CUDA_CHECK(cudaEventCreate(&g.start[i]));
        CUDA_CHECK(cudaEventCreate(&g.stop[i]));
    }

    char v1[32], v2[32], v3[32];
    version_text(info->driver_version, 1, v1, sizeof v1);
    version_text(info->runtime_version, 1, v2, sizeof v2);
    version_text(info->cublas_version, 0, v3, sizeof v3);
    printf("device: %s (sm_%d%d, %d SMs, L2 %.0f MiB), driver %s, runtime %s, cuBLAS %s\n",
           info->device, info->cc_major, info->cc_minor, info->sm_count,
           (double)info->l2_bytes / 1048576.0, v1, v2, v3);
    printf("commit %s, %s; %d warm-up + %d timed runs (median, cudaEvent), buffers rotated to "
           ">= %.0f MiB, cuBLAS FP32 (CUBLAS_DEFAULT_MATH, no TF32)\n\n",
           info->commit, info->date, o->warmup, o->repeats, g.rotate_target / 1048576.0);
    print_table_header(1);

    int ok = 1;
    for (int i = 0; i < o->ncases; ++i)
        ok &= run_gpu_case(&g, o, &o->cases[i]);
    if (o->tune)
        ok &= write_tuning(info, o);

    for (int i = 0; i < g.nevents; ++i) {
        CUDA_CHECK(cudaEventDestroy(g.start[i]));
        CUDA_CHECK(cudaEventDestroy(g.stop[i]));
    }
    free(g.start);
    free(g.stop);
    CUBLAS_CHECK(cublasDestroy(g.cublas));
    return ok;
}

#endif /* TG_HAVE_CUDA */

static int run_cpu(tg_handle *h, const options *o, run_info *info)
{
    cpu_model(info->device, sizeof info->device);
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *omp = getenv("OMP_NUM_THREADS");
    info->threads = omp && atoi(omp) > 0 ? atoi(omp) : (int)(cores > 0 ? cores : 1);
    if (tg_set_backend(h, TG_BACKEND_CPU) != TG_SUCCESS ||
        tg_set_algo(h, "auto") != TG_SUCCESS) {
        fprintf(stderr, "tilegemm bench: cannot select the CPU backend: %s\n",
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
    print_table_header(0);
    int ok = 1;
    for (int i = 0; i < o->ncases; ++i)
        ok &= run_cpu_case(h, o, &o->cases[i]);
    return ok;
}

/* ------------------------------------------------------------------------------------------ */

int tg_bench_main(int argc, char **argv)
{
    options o;
    int code = 0;
    if (!parse_options(argc, argv, &o, &code))
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
            given = xmalloc((size_t)positional * sizeof *given);
            memcpy(given, o.cases, (size_t)positional * sizeof *given);
        }
        o.ncases = 0;
        add_suite(&o, suite, info.gpu);
        for (int i = 0; i < positional; ++i)
            add_case(&o, given[i].m, given[i].n, given[i].k, given[i].ta, given[i].tb);
        free(given);
    }
    char suite_text[64];
    snprintf(suite_text, sizeof suite_text, "%s%s", suite ? suite : "custom",
             suite && o.have_shapes ? "+custom" : "");

    if (o.list_only) {
        printf("%s mode, %d cases, layout %s; algorithms:%s", info.gpu ? "GPU" : "CPU",
               o.ncases, layout_name(o.layout), info.gpu ? " cublas" : " cpu");
        for (int i = 0; info.gpu && i < o.nalgos; ++i)
            printf(" %s", o.algos[i]);
        printf("\n");
        for (int i = 0; i < o.ncases; ++i) {
            char shape[64];
            shape_text(&o.cases[i], shape, sizeof shape);
            const int skip_naive = info.gpu && !o.naive_named &&
                                   (double)o.cases[i].m * (double)o.cases[i].n *
                                           (double)o.cases[i].k > (double)NAIVE_SKIP_WORK;
            printf("  %-18s %s%s\n", shape, trans_name(o.cases[i].ta, o.cases[i].tb),
                   skip_naive ? "  (naive skipped)" : "");
        }
        for (int i = 0; i < o.nalgos; ++i)
            free(o.algos[i]);
        free(o.algos);
        free(o.cases);
        return 0;
    }

    int pos = snprintf(info.command, sizeof info.command, "tilegemm");
    for (int i = 0; i < argc && pos < (int)sizeof info.command; ++i)
        pos += snprintf(info.command + pos, sizeof info.command - (size_t)pos, " %s", argv[i]);
    find_commit(&o, &info);
    fill_dates(&info);

    if (o.repeats < MIN_CLAIM_REPEATS)
        printf("note: --repeats %d is under %d: fine for a look, not for a timed claim.\n",
               o.repeats, MIN_CLAIM_REPEATS);
    if (!info.gpu && suite && strcmp(suite, "quick") != 0)
        printf("note: suite \"%s\" was made for GPUs; on the CPU its large shapes can take "
               "minutes each.\n", suite);

    tg_handle *h = NULL;
    tg_status s = tg_create(&h);
    if (s != TG_SUCCESS) {
        fprintf(stderr, "tilegemm bench: tg_create: %s: %s\n", tg_status_string(s),
                tg_last_error(NULL));
        return 1;
    }
    int ok;
#ifdef TG_HAVE_CUDA
    if (info.gpu)
        ok = run_gpu(h, &o, &info);
    else
#endif
        ok = run_cpu(h, &o, &info);
    tg_destroy(h);

    if (info.gpu)
        slugify(info.device, info.slug, sizeof info.slug);
    else {
        char cpu_slug[100];
        slugify(info.device, cpu_slug, sizeof cpu_slug);
        snprintf(info.slug, sizeof info.slug, "cpu-%s", cpu_slug);
    }
    printf("\n");
    print_summary(&info);

    char path[1400];
    const char *json = o.json_path;
    if (!json && o.save) {
        default_json_path(&info, path, sizeof path);
        json = path;
    }
    if (json) {
        if (write_json(json, &info, &o, suite_text))
            printf("wrote %s\n", json);
        else
            ok = 0;
    }

    for (int i = 0; i < o.nalgos; ++i)
        free(o.algos[i]);
    free(o.algos);
    free(o.cases);
    free(results);
    results = NULL;
    nresults = results_cap = 0;
    return ok ? 0 : 1;
}
