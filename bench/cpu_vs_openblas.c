/*
 * tilegemm's CPU path against OpenBLAS, measured in the same run on the same inputs.
 *
 *   cpu_vs_openblas [--json FILE] [--commit SHA] [--runs N] [SIZE ...]   (default 512 1024 2048)
 *
 * Square row-major NN products, C = A * B (alpha 1, beta 0), random inputs in [-1, 1].
 * The two libraries alternate in 3 rounds, each warmed up and then timed --runs / 3 times
 * (--runs at least 5, default 9) with CLOCK_MONOTONIC; the median of all timed calls is
 * reported.  Both use every core they are given: tilegemm's thread pool, OpenBLAS's own
 * threads (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS set both).
 *
 * tilegemm is called through its public API with the CPU backend forced (tg_set_backend).
 * OpenBLAS is opened with dlopen (TG_OPENBLAS_PATH) and its functions looked up in it alone:
 * libtilegemm defines cblas_sgemm too, and a plain link would silently time tilegemm twice.
 */
#define _POSIX_C_SOURCE 200809L

#include "../check/rng.h"
#include "../check/timer.h"
#include "tilegemm.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define MAX_SIZES 64
#define ROUNDS 3
#define MAX_RUNS_PER_ROUND 100

typedef struct result {
    int size;
    double tg_gflops, openblas_gflops, max_rel_diff;
} result;

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *xmalloc(size_t bytes)
{
    void *ptr = malloc(bytes);
    if (!ptr) {
        fprintf(stderr, "cpu_vs_openblas: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return ptr;
}

static tg_handle *handle; /* forced onto the CPU backend */

static int open_tilegemm(void)
{
    if (tg_create(&handle) != TG_SUCCESS || tg_set_backend(handle, TG_BACKEND_CPU) != TG_SUCCESS) {
        fprintf(stderr, "cpu_vs_openblas: cannot set up tilegemm's CPU backend: %s\n",
                tg_last_error(handle));
        return -1;
    }
    return 0;
}

static void run_tilegemm(int n, const float *A, const float *B, float *C)
{
    tg_status s = tg_sgemm(handle, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, n, n, n, 1.0f, A, n,
                           B, n, 0.0f, C, n);
    if (s != TG_SUCCESS || strcmp(tg_last_algo(handle), "cpu") != 0) {
        fprintf(stderr, "cpu_vs_openblas: tg_sgemm %s (ran \"%s\"): %s\n", tg_status_string(s),
                tg_last_algo(handle), tg_last_error(handle));
        exit(1);
    }
}

typedef void (*cblas_sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE,
                               blasint, blasint, blasint, float, const float *, blasint,
                               const float *, blasint, float, float *, blasint);
static cblas_sgemm_fn openblas_sgemm;
static int (*openblas_threads)(void);

static int open_openblas(void)
{
    void *lib = dlopen(TG_OPENBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "cpu_vs_openblas: cannot open %s: %s\n", TG_OPENBLAS_PATH, dlerror());
        return -1;
    }
    openblas_sgemm = (cblas_sgemm_fn)dlsym(lib, "cblas_sgemm");
    openblas_threads = (int (*)(void))dlsym(lib, "openblas_get_num_threads");
    if (!openblas_sgemm || !openblas_threads) {
        fprintf(stderr, "cpu_vs_openblas: %s lacks cblas_sgemm or openblas_get_num_threads\n",
                TG_OPENBLAS_PATH);
        return -1;
    }
    return 0;
}

static void run_openblas(int n, const float *A, const float *B, float *C)
{
    openblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C,
                n);
}

/*
 * Append `calls` timed calls to times, after a pause and one untimed warm-up call.  The pause
 * outlasts the other library's idle threads, which spin for milliseconds (OpenMP's default wait
 * policy, OpenBLAS's own) and would otherwise steal a core from a short call.
 */
static void time_calls(void (*gemm)(int, const float *, const float *, float *), int n,
                       const float *A, const float *B, float *C, int calls, double *times)
{
    nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
    gemm(n, A, B, C);
    for (int r = 0; r < calls; ++r) {
        double t0 = tg_now_seconds();
        gemm(n, A, B, C);
        times[r] = tg_now_seconds() - t0;
    }
}

static double median(double *times, int count)
{
    qsort(times, (size_t)count, sizeof times[0], compare_doubles);
    return count % 2 ? times[count / 2] : 0.5 * (times[count / 2 - 1] + times[count / 2]);
}

static result measure(int n, int runs, uint64_t *seed)
{
    size_t count = (size_t)n * (size_t)n;
    float *A = xmalloc(count * sizeof(float));
    float *B = xmalloc(count * sizeof(float));
    float *C_tg = xmalloc(count * sizeof(float));
    float *C_ob = xmalloc(count * sizeof(float));
    for (size_t i = 0; i < count; ++i) {
        A[i] = (float)tg_random_unit(seed);
        B[i] = (float)tg_random_unit(seed);
    }
    double flops = 2.0 * (double)n * (double)n * (double)n;
    result r = {.size = n};
    /*
     * The libraries take turns in ROUNDS phases, so that a slow stretch of a shared or virtual
     * machine falls on both rather than on whichever ran then.
     */
    double tg_times[ROUNDS * MAX_RUNS_PER_ROUND], ob_times[ROUNDS * MAX_RUNS_PER_ROUND];
    int per_round = (runs + ROUNDS - 1) / ROUNDS;
    for (int round = 0; round < ROUNDS; ++round) {
        time_calls(run_tilegemm, n, A, B, C_tg, per_round, tg_times + round * per_round);
        time_calls(run_openblas, n, A, B, C_ob, per_round, ob_times + round * per_round);
    }
    r.tg_gflops = flops / median(tg_times, ROUNDS * per_round) * 1e-9;
    r.openblas_gflops = flops / median(ob_times, ROUNDS * per_round) * 1e-9;

    /* a fast wrong answer is no result: compare the two outputs */
    double worst = 0.0;
    for (size_t i = 0; i < count; ++i) {
        double diff = fabs((double)C_tg[i] - (double)C_ob[i]) / (fabs((double)C_ob[i]) + 1.0);
        if (!(diff <= worst))
            worst = diff;
    }
    r.max_rel_diff = worst;
    free(A);
    free(B);
    free(C_tg);
    free(C_ob);
    return r;
}

/* A JSON string literal body: the commit comes from the command line. */
static void put_json_string(FILE *f, const char *text)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)text; *c; ++c) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

/* The processor's name from /proc/cpuinfo, for the results file. */
static const char *cpu_model(void)
{
    static char model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return model;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(model, sizeof model, "%s", colon + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    fclose(f);
    return model;
}

static int write_json(const char *path, const char *commit, int threads, const result *res,
                      int count)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    char date[64];
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    fprintf(f, "{\n  \"host\": ");
    put_json_string(f, host);
    fprintf(f, ",\n  \"date\": \"%s\",\n  \"commit\": ", date);
    put_json_string(f, commit);
    fprintf(f, ",\n  \"cpu\": ");
    put_json_string(f, cpu_model());
    fprintf(f, ",\n  \"cores_online\": %ld,\n", sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(f, "  \"benchmark\": \"cpu_vs_openblas\",\n  \"layout\": \"row-major NN\",\n");
    fprintf(f, "  \"threads\": %d,\n  \"openblas_threads\": %d,\n  \"results\": [\n", threads,
            openblas_threads());
    for (int i = 0; i < count; ++i) {
        fprintf(f,
                "    {\"size\": %d, \"tilegemm_gflops\": %.2f, \"openblas_gflops\": %.2f, "
                "\"ratio\": %.3f, \"max_rel_diff\": ",
                res[i].size, res[i].tg_gflops, res[i].openblas_gflops,
                res[i].tg_gflops / res[i].openblas_gflops);
        /* JSON has no NaN or infinity */
        if (isfinite(res[i].max_rel_diff))
            fprintf(f, "%.3g}", res[i].max_rel_diff);
        else
            fprintf(f, "null}");
        fprintf(f, "%s\n", i + 1 < count ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) != 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: cpu_vs_openblas [--json FILE] [--commit SHA] [--runs N] [SIZE ...]\n");
}

int main(int argc, char **argv)
{
    const char *json_path = NULL, *commit = "unknown";
    int runs = 9, sizes[MAX_SIZES], n_sizes = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json_path = argv[++i];
        } else if (!strcmp(argv[i], "--commit") && i + 1 < argc) {
            commit = argv[++i];
        } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
            runs = atoi(argv[++i]);
            if (runs < 5 || runs > ROUNDS * MAX_RUNS_PER_ROUND) {
                fprintf(stderr, "cpu_vs_openblas: --runs must be 5..%d\n",
                        ROUNDS * MAX_RUNS_PER_ROUND);
                return 2;
            }
        } else if (argv[i][0] != '-' && n_sizes < MAX_SIZES && atoi(argv[i]) > 0) {
            sizes[n_sizes++] = atoi(argv[i]);
        } else {
            usage();
            return 2;
        }
    }
    if (n_sizes == 0) {
        sizes[0] = 512, sizes[1] = 1024, sizes[2] = 2048;
        n_sizes = 3;
    }

    if (open_tilegemm() != 0 || open_openblas() != 0)
        return 1;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    printf("tilegemm CPU vs OpenBLAS, row-major NN, alpha 1 beta 0, median of %d runs "
           "in %d alternating rounds\n",
           (runs + ROUNDS - 1) / ROUNDS * ROUNDS, ROUNDS);
    printf("tilegemm threads: %d, OpenBLAS threads: %d\n", threads, openblas_threads());
    printf("%8s %16s %16s %8s %14s\n", "size", "tilegemm GFLOP/s", "OpenBLAS GFLOP/s", "ratio",
           "max rel diff");

    result res[MAX_SIZES];
    uint64_t seed = 12345u;
    int bad = 0;
    for (int i = 0; i < n_sizes; ++i) {
        res[i] = measure(sizes[i], runs, &seed);
        printf("%8d %16.1f %16.1f %8.2f %14.2g\n", res[i].size, res[i].tg_gflops,
               res[i].openblas_gflops, res[i].tg_gflops / res[i].openblas_gflops,
               res[i].max_rel_diff);
        fflush(stdout);
        /* sums of n products of values in [-1, 1]: both results carry errors ~ n * eps */
        if (!(res[i].max_rel_diff <= 1e-7 * res[i].size + 1e-5)) {
            fprintf(stderr, "cpu_vs_openblas: results differ at size %d\n", res[i].size);
            bad = 1;
        }
    }
    if (json_path && write_json(json_path, commit, threads, res, n_sizes))
        return 1;
    return bad;
}
