/*
 * tilegemm's CPU path against OpenBLAS, each library in a process of its own, as an application
 * that uses one of them sees it.
 *
 *   cpu_vs_openblas [--json FILE] [--commit SHA] [--note TEXT] [--runs N] [--rounds R]
 *                   [SIZE ...]                               (default sizes 512 1024 2048)
 *
 * --note records the conditions of the run (how busy the machine was) in the JSON.
 *
 * Square row-major NN products, C = A * B (alpha 1, beta 0), random inputs in [-1, 1].
 * For each size the libraries take turns in R rounds (default 3, the order swapped each
 * round); in each round each library runs in a child process of its own, forked for it, that
 * makes one untimed warm-up call and then --runs / R timed calls back to back (--runs at least
 * 5, default 9), each timed with CLOCK_MONOTONIC.  The median of all timed calls is reported,
 * with each round's median beside it in the JSON.  Both use every core they are given:
 * tilegemm's thread pool, OpenBLAS's own threads (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS set
 * both).
 *
 * Why a process each: in one process the two libraries' idle threads share the cores.
 * OpenBLAS's threads spin for a while after each call (about 2^28 cycles, a tenth of a second,
 * by default), so a tilegemm call made within that time runs beside a spinning thread; on two
 * cores that about halved tilegemm's figures.
 *
 * tilegemm is called through its public API with the CPU backend forced (tg_set_backend).
 * OpenBLAS is opened with dlopen (TG_OPENBLAS_PATH), in its child only, and its functions
 * looked up in it alone: libtilegemm defines cblas_sgemm too, and a plain link would silently
 * time tilegemm twice.  The parent never calls either library: it makes the inputs, forks the
 * children, collects their times and results through shared memory and compares the results.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */

#include "../check/rng.h"
#include "../check/timer.h"
#include "tilegemm.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define MAX_SIZES 64
#define MAX_ROUNDS 20
#define MAX_RUNS 300

typedef struct result {
    int size;
    double tg_gflops, openblas_gflops, max_rel_diff;
    int rounds;
    double tg_round_gflops[MAX_ROUNDS], openblas_round_gflops[MAX_ROUNDS];
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

/* One untimed warm-up call, then `calls` timed calls back to back into times. */
static void time_calls(void (*gemm)(int, const float *, const float *, float *), int n,
                       const float *A, const float *B, float *C, int calls, double *times)
{
    gemm(n, A, B, C);
    for (int r = 0; r < calls; ++r) {
        double t0 = tg_now_seconds();
        gemm(n, A, B, C);
        times[r] = tg_now_seconds() - t0;
    }
}

/* What a child hands back: its times, its library's thread count, and (in C) its result. */
typedef struct child_report {
    int ok, threads;
    double times[MAX_RUNS];
} child_report;

static void *shared_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("cpu_vs_openblas: mmap");
        exit(1);
    }
    return p;
}

/*
 * Runs one library's share of a round in a child process of its own: it sets up that library
 * alone, times `calls` calls into report->times and leaves its C in C (shared memory).
 * Returns 0 when the child reported success.
 */
static int run_in_child(int openblas, int n, const float *A, const float *B, float *C,
                        int calls, child_report *report)
{
    fflush(NULL);
    report->ok = 0;
    const pid_t pid = fork();
    if (pid < 0) {
        perror("cpu_vs_openblas: fork");
        exit(1);
    }
    if (pid == 0) {
        if (openblas) {
            if (open_openblas() != 0)
                _exit(1);
            report->threads = openblas_threads();
            time_calls(run_openblas, n, A, B, C, calls, report->times);
        } else {
            if (open_tilegemm() != 0)
                _exit(1);
            report->threads = 1;
#ifdef _OPENMP
            report->threads = omp_get_max_threads();
#endif
            time_calls(run_tilegemm, n, A, B, C, calls, report->times);
        }
        report->ok = 1;
        exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        !report->ok) {
        fprintf(stderr, "cpu_vs_openblas: the %s child failed\n",
                openblas ? "OpenBLAS" : "tilegemm");
        return -1;
    }
    return 0;
}

static double median(double *times, int count)
{
    qsort(times, (size_t)count, sizeof times[0], compare_doubles);
    return count % 2 ? times[count / 2] : 0.5 * (times[count / 2 - 1] + times[count / 2]);
}

static int tg_threads_seen = 0, openblas_threads_seen = 0;

static result measure(int n, int runs, int rounds, uint64_t *seed)
{
    size_t count = (size_t)n * (size_t)n;
    float *A = xmalloc(count * sizeof(float));
    float *B = xmalloc(count * sizeof(float));
    float *C_tg = shared_alloc(count * sizeof(float));
    float *C_ob = shared_alloc(count * sizeof(float));
    child_report *report = shared_alloc(sizeof *report);
    for (size_t i = 0; i < count; ++i) {
        A[i] = (float)tg_random_unit(seed);
        B[i] = (float)tg_random_unit(seed);
    }
    double flops = 2.0 * (double)n * (double)n * (double)n;
    result r = {.size = n, .rounds = rounds};
    /*
     * The libraries take turns, so that a slow stretch of a shared or virtual machine falls on
     * both rather than on whichever ran then; which goes first alternates.
     */
    static double tg_times[MAX_RUNS * MAX_ROUNDS], ob_times[MAX_RUNS * MAX_ROUNDS];
    const int per_round = (runs + rounds - 1) / rounds;
    for (int round = 0; round < rounds; ++round) {
        for (int turn = 0; turn < 2; ++turn) {
            const int openblas = (turn + round) % 2;
            if (run_in_child(openblas, n, A, B, openblas ? C_ob : C_tg, per_round, report))
                exit(1);
            double *times = (openblas ? ob_times : tg_times) + round * per_round;
            memcpy(times, report->times, (size_t)per_round * sizeof *times);
            *(openblas ? &openblas_threads_seen : &tg_threads_seen) = report->threads;
            double sorted[MAX_RUNS];
            memcpy(sorted, times, (size_t)per_round * sizeof *times);
            const double rate = flops / median(sorted, per_round) * 1e-9;
            (openblas ? r.openblas_round_gflops : r.tg_round_gflops)[round] = rate;
        }
    }
    r.tg_gflops = flops / median(tg_times, rounds * per_round) * 1e-9;
    r.openblas_gflops = flops / median(ob_times, rounds * per_round) * 1e-9;

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
    munmap(C_tg, count * sizeof(float));
    munmap(C_ob, count * sizeof(float));
    munmap(report, sizeof *report);
    return r;
}

/* The load average (1 minute), for the record of how quiet the machine was. */
static double load_average(void)
{
    double load = -1.0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1.0;
        fclose(f);
    }
    return load;
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

static void put_rounds(FILE *f, const char *name, const double *rates, int rounds)
{
    fprintf(f, ", \"%s\": [", name);
    for (int i = 0; i < rounds; ++i)
        fprintf(f, "%s%.2f", i ? ", " : "", rates[i]);
    fputc(']', f);
}

static int write_json(const char *path, const char *commit, const char *note, int runs,
                      int rounds,
                      double load_start, double load_end, const result *res, int count)
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
    fprintf(f, "  \"method\": \"each library in a process of its own, %d alternating rounds of "
               "a warm-up call and %d timed calls back to back; the median of all timed calls\",\n",
            rounds, runs / rounds);
    if (note) {
        fprintf(f, "  \"note\": ");
        put_json_string(f, note);
        fprintf(f, ",\n");
    }
    fprintf(f, "  \"load_average_1min\": {\"start\": %.2f, \"end\": %.2f},\n", load_start,
            load_end);
    fprintf(f, "  \"threads\": %d,\n  \"openblas_threads\": %d,\n  \"results\": [\n",
            tg_threads_seen, openblas_threads_seen);
    for (int i = 0; i < count; ++i) {
        fprintf(f,
                "    {\"size\": %d, \"tilegemm_gflops\": %.2f, \"openblas_gflops\": %.2f, "
                "\"ratio\": %.3f, \"max_rel_diff\": ",
                res[i].size, res[i].tg_gflops, res[i].openblas_gflops,
                res[i].tg_gflops / res[i].openblas_gflops);
        /* JSON has no NaN or infinity */
        if (isfinite(res[i].max_rel_diff))
            fprintf(f, "%.3g", res[i].max_rel_diff);
        else
            fprintf(f, "null");
        put_rounds(f, "tilegemm_round_gflops", res[i].tg_round_gflops, res[i].rounds);
        put_rounds(f, "openblas_round_gflops", res[i].openblas_round_gflops, res[i].rounds);
        fprintf(f, "}%s\n", i + 1 < count ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) != 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: cpu_vs_openblas [--json FILE] [--commit SHA] [--note TEXT] "
                    "[--runs N] [--rounds R] [SIZE ...]\n");
}

int main(int argc, char **argv)
{
    const char *json_path = NULL, *commit = "unknown", *note = NULL;
    int runs = 9, rounds = 3, sizes[MAX_SIZES], n_sizes = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json_path = argv[++i];
        } else if (!strcmp(argv[i], "--commit") && i + 1 < argc) {
            commit = argv[++i];
        } else if (!strcmp(argv[i], "--note") && i + 1 < argc) {
            note = argv[++i];
        } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (argv[i][0] != '-' && n_sizes < MAX_SIZES && atoi(argv[i]) > 0) {
            sizes[n_sizes++] = atoi(argv[i]);
        } else {
            usage();
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "cpu_vs_openblas: --rounds must be 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    if (runs < 5 || (runs + rounds - 1) / rounds > MAX_RUNS) {
        fprintf(stderr, "cpu_vs_openblas: --runs must be 5..%d\n", MAX_RUNS * rounds);
        return 2;
    }
    runs = (runs + rounds - 1) / rounds * rounds;
    if (n_sizes == 0) {
        sizes[0] = 512, sizes[1] = 1024, sizes[2] = 2048;
        n_sizes = 3;
    }

    const double load_start = load_average();
    printf("tilegemm CPU vs OpenBLAS, row-major NN, alpha 1 beta 0, median of %d runs in %d "
           "alternating rounds, each library in a process of its own\n", runs, rounds);
    printf("%8s %16s %16s %8s %14s\n", "size", "tilegemm GFLOP/s", "OpenBLAS GFLOP/s", "ratio",
           "max rel diff");

    result res[MAX_SIZES];
    uint64_t seed = 12345u;
    int bad = 0;
    for (int i = 0; i < n_sizes; ++i) {
        res[i] = measure(sizes[i], runs, rounds, &seed);
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
    const double load_end = load_average();
    printf("tilegemm threads: %d, OpenBLAS threads: %d; load average (1 min) %.2f at the start, "
           "%.2f at the end\n", tg_threads_seen, openblas_threads_seen, load_start, load_end);
    if (json_path &&
        write_json(json_path, commit, note, runs, rounds, load_start, load_end, res, n_sizes))
        return 1;
    return bad;
}
