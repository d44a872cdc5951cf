/*
 * host_operands: products of host operands at several GPU counts of one host, in one run.
 *
 *   host_operands [--shapes 16384x16384x16384,32768x32768x8192] [--gpus 1,2,4] [--reps 3]
 *                 [--xt-reps 2] [--no-xt] [--json FILE] [--include NAME=FILE]
 *
 * --gpus lists the GPU counts to measure (default: 1 and every GPU present); a count of N runs
 * on GPUs 0 .. N-1.  Counts above the GPUs present are skipped with a message, and 1 is always
 * measured: it is the reference of the scaling and of the bit-identical check.
 *
 * Measures, in this order:
 *   - the pinned host-to-device bandwidth of each GPU alone, and of the first N GPUs at once
 *     for each count N (cudaMemcpyAsync of 1 GiB to each, median of 5), and the bound each
 *     sets: the rate at which A and B would cross once at that bandwidth (the GPUs' products
 *     taken as free); then the same GPUs copying 1 GiB each back to the host at once, and both
 *     ways at once (1 GiB in and 1 GiB back each, on two streams), and the links' bound: A and
 *     B crossing in and C back once, each way no faster than it goes alone and both together
 *     no faster than both ways at once (the host's links carry both directions of every GPU);
 *   - for each shape, column-major NN as sgemm_ callers pass it (alpha 1, beta 0), operands of
 *     small integers (so every product is exact and a sampled check is exact too): tilegemm
 *     from pinned and from pageable memory at each count (tg_set_devices with GPUs 0 .. N-1),
 *     then cublasXtSgemm on the same GPUs (cublasXtDeviceSelect) from the same memory;
 *   - whether C is bit-identical to that of 1 GPU from pinned memory at every count, pinned
 *     and pageable.
 * Wall-clock medians (the calls return with C written), TFLOP/s, ratios.  The JSON names the
 * GPUs present and their count, the counts measured, the commit (TILEGEMM_COMMIT, else git)
 * and the date; every result row has its "gpus".  Per shape, the fields named "all" (and
 * h2d_pinned_all_gbps) are those of the largest count measured, bits_identical_1_vs_all holds
 * for every count, and "by_gpus" gives each count's bound, bits and ratios (the ratios only
 * there; older files also hold the largest count's as all_over_one, all_over_cublasxt and
 * pageable_over_pinned_all, which no reader uses).  The file is
 * rewritten after every product, so a run cut short by its deadline keeps what it finished.
 * --include embeds a JSON file (the LD_PRELOAD drop-in run of sgemm_drop_in) under NAME.
 */
#define _POSIX_C_SOURCE 200809L

#include <cublasXt.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tilegemm.h"

#define MAX_SHAPES 8
#define MAX_GPUS 64
#define MAX_COUNTS 16

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *fmt, const char *what)
{
    fprintf(stderr, "host_operands: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n");
    exit(1);
}

static void cuda_ok(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "host_operands: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}


/* --- Bandwidth ------------------------------------------------------------------------------ */

/* Which way copy_bandwidth copies. */
enum { TO_GPUS = 1, TO_HOST = 2, BOTH_WAYS = TO_GPUS | TO_HOST };

/* Pinned memory: GB/s of GPUs first .. first+count-1 copying at once (their sum), host to
 * device, device to host, or both ways (each way on a stream of its own). */
static double copy_bandwidth(int first, int count, int ways)
{
    const int to_gpus = ways & TO_GPUS, to_host = ways & TO_HOST;
    const size_t bytes = (size_t)1 << 30;
    void *host = NULL, *back[MAX_GPUS] = {0}, *dev[MAX_GPUS] = {0}, *dev_back[MAX_GPUS] = {0};
    cudaStream_t in[MAX_GPUS] = {0}, out[MAX_GPUS] = {0};
    cuda_ok(cudaHostAlloc(&host, bytes, cudaHostAllocPortable), "cudaHostAlloc 1 GiB");
    memset(host, 1, bytes);
    const int lo = first, hi = first + count;
    for (int g = lo; g < hi; ++g) {
        cuda_ok(cudaSetDevice(g), "cudaSetDevice");
        cuda_ok(cudaMalloc(&dev[g], bytes), "cudaMalloc 1 GiB");
        cuda_ok(cudaStreamCreate(&in[g]), "cudaStreamCreate");
        if (to_host) {
            cuda_ok(cudaHostAlloc(&back[g], bytes, cudaHostAllocPortable), "cudaHostAlloc 1 GiB");
            cuda_ok(cudaMalloc(&dev_back[g], bytes), "cudaMalloc 1 GiB");
            cuda_ok(cudaStreamCreate(&out[g]), "cudaStreamCreate");
        }
    }
    double t[6];
    for (int rep = 0; rep < 6; ++rep) {
        const double start = now();
        for (int g = lo; g < hi; ++g) {
            cuda_ok(cudaSetDevice(g), "cudaSetDevice");
            if (to_gpus)
                cuda_ok(cudaMemcpyAsync(dev[g], host, bytes, cudaMemcpyHostToDevice, in[g]),
                        "cudaMemcpyAsync");
            if (to_host)
                cuda_ok(cudaMemcpyAsync(back[g], dev_back[g], bytes, cudaMemcpyDeviceToHost,
                                        out[g]),
                        "cudaMemcpyAsync");
        }
        for (int g = lo; g < hi; ++g) {
            cuda_ok(cudaStreamSynchronize(in[g]), "cudaStreamSynchronize");
            if (to_host)
                cuda_ok(cudaStreamSynchronize(out[g]), "cudaStreamSynchronize");
        }
        t[rep] = now() - start;
    }
    for (int g = lo; g < hi; ++g) {
        cudaSetDevice(g);
        cudaFree(dev[g]);
        cudaStreamDestroy(in[g]);
        if (to_host) {
            cudaFreeHost(back[g]);
            cudaFree(dev_back[g]);
            cudaStreamDestroy(out[g]);
        }
    }
    cudaFreeHost(host);
    cudaSetDevice(0);
    return (double)bytes * count * (to_gpus && to_host ? 2 : 1) / median(t + 1, 5) / 1e9;
}

/* --- Products ------------------------------------------------------------------------------- */

typedef struct shape {
    int64_t m, n, k;
} shape;

typedef struct row {
    char shape[64];
    const char *library, *memory;
    int gpus;
    double median_s, tflops;
    double runs[16];
    int nruns;
    const char *error;
} row;

/* tilegemm and cublasXt, pinned and pageable, at each count of each shape */
static row rows[MAX_SHAPES * MAX_COUNTS * 4];
static int nrows;

/* What the run has measured so far, for the JSON and the closing table. */
static struct {
    int present; /* GPUs found */
    char names[MAX_GPUS][256];
    double alone_gbps[MAX_GPUS];     /* each GPU alone */
    int counts[MAX_COUNTS], ncounts; /* the GPU counts measured, ascending, 1 first */
    double at_once_gbps[MAX_COUNTS]; /* GPUs 0 .. counts[i]-1 at once */
    double back_gbps[MAX_COUNTS];      /* the same GPUs copying to the host at once */
    double both_ways_gbps[MAX_COUNTS]; /* the same, copying in and back at once (the sum) */
    shape shapes[MAX_SHAPES];
    int nshapes, done;     /* shapes asked for, shapes finished */
    int exact[MAX_SHAPES]; /* C of 1 GPU exact on sampled elements */
    /* C at counts[i] GPUs, pinned and pageable, bit for bit that of 1 GPU from pinned memory */
    int identical[MAX_SHAPES][MAX_COUNTS];
} run;

static double flops_of(const shape *s) { return 2.0 * (double)s->m * (double)s->n * (double)s->k; }

/* The bytes of A and B, which cross to the GPUs, and of C, which crosses back. */
static double in_bytes(const shape *s) { return 4.0 * (double)(s->m * s->k + s->k * s->n); }
static double back_bytes(const shape *s) { return 4.0 * (double)(s->m * s->n); }

/* TFLOP/s if A and B crossed once at `gbps` and the products took no time. */
static double copy_bound(const shape *s, double gbps)
{
    return flops_of(s) / (in_bytes(s) / (gbps * 1e9)) / 1e12;
}

/* TFLOP/s if A and B crossed in and C back once and the products took no time, at count
 * counts[ci]: no faster than A and B alone at the host-to-device rate, C alone at the
 * device-to-host rate, and all three at the both-ways rate, i.e. what the host's links allow
 * where they bound the call. */
static double link_bound(const shape *s, int ci)
{
    const double in = in_bytes(s), back = back_bytes(s);
    const double seconds = fmax(fmax(in / run.at_once_gbps[ci], back / run.back_gbps[ci]),
                                (in + back) / run.both_ways_gbps[ci]) / 1e9;
    return flops_of(s) / seconds / 1e12;
}

static void shape_name(const shape *s, char *out, size_t size)
{
    snprintf(out, size, "%lldx%lldx%lld", (long long)s->m, (long long)s->n, (long long)s->k);
}

static void fill(float *x, int64_t count, uint64_t seed)
{
    uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (int64_t i = 0; i < count; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (float)((int)(state >> 61) % 5 - 2); /* -2 .. 2 */
    }
}

/* Exact: small integers, |sums| far below 2^24.  Checks `samples` elements. */
static int check(const shape *s, const float *A, const float *B, const float *C, int samples)
{
    uint64_t state = 12345;
    for (int i = 0; i < samples; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const int64_t r = (int64_t)((state >> 20) % (uint64_t)s->m);
        const int64_t c = (int64_t)((state >> 40) % (uint64_t)s->n);
        double sum = 0.0;
        for (int64_t p = 0; p < s->k; ++p)
            sum += (double)A[r + p * s->m] * (double)B[p + c * s->k];
        if ((float)sum != C[r + c * s->m])
            return 0;
    }
    return 1;
}

typedef struct operands {
    float *A, *B, *C;
} operands;

static row *add_row(const shape *s, const char *library, const char *memory, int gpus)
{
    row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    shape_name(s, r->shape, sizeof r->shape);
    r->library = library;
    r->memory = memory;
    r->gpus = gpus;
    return r;
}

static void finish_row(row *r, const shape *s)
{
    double t[16];
    memcpy(t, r->runs, sizeof t);
    r->median_s = median(t, r->nruns);
    r->tflops = flops_of(s) / r->median_s / 1e12;
    printf("%-22s %-9s %-9s %d GPU(s): %8.3f s  %7.2f TFLOP/s\n", r->shape, r->library, r->memory,
           r->gpus, r->median_s, r->tflops);
    fflush(stdout);
}

/* tilegemm on GPUs 0 .. gpus-1 */
static void run_tilegemm(const shape *s, const operands *o, const char *memory, int gpus,
                         int reps)
{
    row *r = add_row(s, "tilegemm", memory, gpus);
    int ids[MAX_GPUS];
    for (int g = 0; g < gpus; ++g)
        ids[g] = g;
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS || tg_set_backend(h, TG_BACKEND_CUDA) != TG_SUCCESS ||
        tg_set_devices(h, ids, gpus) != TG_SUCCESS) {
        r->error = strdup(tg_last_error(h));
        fprintf(stderr, "host_operands: tilegemm set-up: %s\n", r->error);
        tg_destroy(h);
        return;
    }
    for (int rep = -1; rep < reps; ++rep) {
        const double start = now();
        const tg_status st = tg_sgemm(h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, s->m, s->n, s->k,
                                      1.0f, o->A, s->m, o->B, s->k, 0.0f, o->C, s->m);
        const double t = now() - start;
        if (st != TG_SUCCESS) {
            r->error = strdup(tg_last_error(h));
            fprintf(stderr, "host_operands: tilegemm %s %s: %s\n", r->shape, memory, r->error);
            tg_destroy(h);
            return;
        }
        if (rep >= 0)
            r->runs[r->nruns++] = t;
    }
    char explain[2048];
    if (tg_explain(h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, s->m, s->n, s->k, o->A, s->m, o->B,
                   s->k, o->C, s->m, explain, sizeof explain) == TG_SUCCESS) {
        const char *split = strstr(explain, "split:");
        if (split)
            printf("  %.*s\n", (int)strcspn(split, "\n"), split);
    }
    tg_destroy(h);
    finish_row(r, s);
}

/* cublasXt on GPUs 0 .. gpus-1 */
static void run_xt(const shape *s, const operands *o, const char *memory, int gpus, int reps)
{
    row *r = add_row(s, "cublasXt", memory, gpus);
    cublasXtHandle_t xt = NULL;
    int ids[MAX_GPUS];
    for (int g = 0; g < gpus; ++g)
        ids[g] = g;
    if (cublasXtCreate(&xt) != CUBLAS_STATUS_SUCCESS ||
        cublasXtDeviceSelect(xt, gpus, ids) != CUBLAS_STATUS_SUCCESS) {
        r->error = "cublasXtCreate or cublasXtDeviceSelect failed";
        fprintf(stderr, "host_operands: %s\n", r->error);
        if (xt)
            cublasXtDestroy(xt);
        return;
    }
    const float alpha = 1.0f, beta = 0.0f;
    for (int rep = -1; rep < reps; ++rep) {
        const double start = now();
        const cublasStatus_t st = cublasXtSgemm(xt, CUBLAS_OP_N, CUBLAS_OP_N, (size_t)s->m,
                                                (size_t)s->n, (size_t)s->k, &alpha, o->A,
                                                (size_t)s->m, o->B, (size_t)s->k, &beta, o->C,
                                                (size_t)s->m);
        const double t = now() - start;
        if (st != CUBLAS_STATUS_SUCCESS) {
            r->error = "cublasXtSgemm failed";
            fprintf(stderr, "host_operands: cublasXtSgemm %s %s: status %d\n", r->shape, memory,
                    (int)st);
            cublasXtDestroy(xt);
            return;
        }
        if (rep >= 0)
            r->runs[r->nruns++] = t;
    }
    cublasXtDestroy(xt);
    finish_row(r, s);
}

static const row *find(const char *shape_name, const char *library, const char *memory, int gpus)
{
    for (int i = 0; i < nrows; ++i)
        if (!strcmp(rows[i].shape, shape_name) && !strcmp(rows[i].library, library) &&
            !strcmp(rows[i].memory, memory) && rows[i].gpus == gpus && !rows[i].error)
            return &rows[i];
    return NULL;
}

static double ratio(const row *a, const row *b) { return a && b ? a->tflops / b->tflops : NAN; }

/* The ratios of one shape at one count: tilegemm pinned over 1 GPU, over cublasXt (pinned, the
 * same GPUs), and pageable over pinned. */
typedef struct ratios {
    double over_one, over_xt, page_over_pin;
} ratios;

static ratios ratios_at(const char *name, int gpus)
{
    const row *pin = find(name, "tilegemm", "pinned", gpus);
    return (ratios){ratio(pin, find(name, "tilegemm", "pinned", 1)),
                    ratio(pin, find(name, "cublasXt", "pinned", gpus)),
                    ratio(find(name, "tilegemm", "pageable", gpus), pin)};
}

static int identical_at_every_count(int si)
{
    int same = 1;
    for (int ci = 0; ci < run.ncounts; ++ci)
        same &= run.identical[si][ci];
    return same;
}

static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "null");
}

static void commit_of(char *out, size_t size)
{
    const char *env = getenv("TILEGEMM_COMMIT");
    snprintf(out, size, "unknown");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return;
    }
    FILE *p = popen("git rev-parse --short HEAD 2>/dev/null", "r");
    if (!p)
        return;
    char line[128];
    if (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        if (*line)
            snprintf(out, size, "%s", line);
    }
    pclose(p);
}

/* A bandwidth at each GPU count measured, as JSON objects {"gpus", "gbps"} (the list's body). */
static void write_by_count(FILE *f, const double *gbps)
{
    for (int ci = 0; ci < run.ncounts; ++ci)
        fprintf(f, "%s{\"gpus\": %d, \"gbps\": %.2f}", ci ? ", " : "", run.counts[ci],
                gbps[ci]);
}

/* Everything measured so far, as JSON (see the top of this file). */
static void write_json(const char *json, const char *include)
{
    FILE *f = fopen(json, "w");
    if (!f)
        die("cannot write %s", json);
    char commit[128], date[32];
    commit_of(commit, sizeof commit);
    const time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const int largest = run.ncounts - 1;
    fprintf(f, "{\n  \"benchmark\": \"host_operands\",\n  \"commit\": \"%s\",\n  \"date\": "
               "\"%s\",\n  \"gpu_count\": %d,\n  \"gpu_counts\": [",
            commit, date, run.present);
    for (int ci = 0; ci < run.ncounts; ++ci)
        fprintf(f, "%s%d", ci ? ", " : "", run.counts[ci]);
    fprintf(f, "],\n  \"devices\": [");
    for (int g = 0; g < run.present; ++g)
        fprintf(f, "%s\"%s\"", g ? ", " : "", run.names[g]);
    fprintf(f, "],\n  \"layout\": \"col\", \"trans\": \"NN\", \"alpha\": 1, \"beta\": 0,\n");
    fprintf(f, "  \"h2d_pinned_gbps\": [");
    for (int g = 0; g < run.present; ++g)
        fprintf(f, "%s%.2f", g ? ", " : "", run.alone_gbps[g]);
    fprintf(f, "],\n  \"h2d_pinned_all_gbps\": %.2f,\n  \"h2d_pinned_at_once\": [",
            run.at_once_gbps[largest]);
    write_by_count(f, run.at_once_gbps);
    fprintf(f, "],\n  \"d2h_pinned_at_once\": [");
    write_by_count(f, run.back_gbps);
    fprintf(f, "],\n  \"pinned_both_ways_at_once\": [");
    write_by_count(f, run.both_ways_gbps);
    fprintf(f, "],\n  \"shapes\": [\n");
    for (int si = 0; si < run.done; ++si) {
        const shape *s = &run.shapes[si];
        char name[64];
        shape_name(s, name, sizeof name);
        fprintf(f, "    {\"shape\": \"%s\", \"h2d_bound_tflops_1_gpu\": ", name);
        json_number(f, copy_bound(s, run.at_once_gbps[0]));
        fprintf(f, ", \"h2d_bound_tflops_all\": ");
        json_number(f, copy_bound(s, run.at_once_gbps[largest]));
        fprintf(f, ", \"exact_on_samples\": %s, \"bits_identical_1_vs_all\": %s,\n"
                   "     \"by_gpus\": [",
                run.exact[si] ? "true" : "false", identical_at_every_count(si) ? "true" : "false");
        for (int ci = 0; ci < run.ncounts; ++ci) {
            const ratios at = ratios_at(name, run.counts[ci]);
            fprintf(f, "%s\n       {\"gpus\": %d, \"h2d_bound_tflops\": ", ci ? "," : "",
                    run.counts[ci]);
            json_number(f, copy_bound(s, run.at_once_gbps[ci]));
            fprintf(f, ", \"link_bound_tflops\": ");
            json_number(f, link_bound(s, ci));
            fprintf(f, ", \"bits_identical_to_1_gpu\": %s, \"over_one\": ",
                    run.identical[si][ci] ? "true" : "false");
            json_number(f, at.over_one);
            fprintf(f, ", \"over_cublasxt\": ");
            json_number(f, at.over_xt);
            fprintf(f, ", \"pageable_over_pinned\": ");
            json_number(f, at.page_over_pin);
            fprintf(f, "}");
        }
        fprintf(f, "]}%s\n", si + 1 < run.done ? "," : "");
    }
    fprintf(f, "  ],\n  \"results\": [\n");
    for (int i = 0; i < nrows; ++i) {
        const row *r = &rows[i];
        fprintf(f, "    {\"shape\": \"%s\", \"library\": \"%s\", \"memory\": \"%s\", "
                   "\"gpus\": %d, ",
                r->shape, r->library, r->memory, r->gpus);
        if (r->error) {
            fprintf(f, "\"error\": \"");
            for (const char *e = r->error; *e; ++e)
                fputs(*e == '"' ? "\\\"" : *e == '\\' ? "\\\\" : (char[]){*e, 0}, f);
            fprintf(f, "\"}%s\n", i + 1 < nrows ? "," : "");
            continue;
        }
        fprintf(f, "\"median_s\": %.6f, \"tflops\": %.3f, \"runs_s\": [", r->median_s,
                r->tflops);
        for (int j = 0; j < r->nruns; ++j)
            fprintf(f, "%s%.6f", j ? ", " : "", r->runs[j]);
        fprintf(f, "]}%s\n", i + 1 < nrows ? "," : "");
    }
    fprintf(f, "  ]");
    if (include) {
        const char *eq = strchr(include, '=');
        FILE *in = eq ? fopen(eq + 1, "r") : NULL;
        if (in) {
            fprintf(f, ",\n  \"%.*s\": ", (int)(eq - include), include);
            char buf[4096];
            size_t got;
            while ((got = fread(buf, 1, sizeof buf, in)) > 0)
                fwrite(buf, 1, got, f);
            fclose(in);
        } else {
            fprintf(stderr, "host_operands: --include %s: not read\n", include);
        }
    }
    fprintf(f, "\n}\n");
    if (fclose(f) != 0)
        die("could not finish %s", json);
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* --gpus LIST into counts[]; returns how many. */
static int parse_counts(const char *list, int *counts)
{
    int n = 0;
    for (const char *at = list; *at;) {
        char *end = NULL;
        const long count = strtol(at, &end, 10);
        if (end == at || count < 1 || count > MAX_GPUS || (*end && *end != ','))
            die("--gpus: \"%s\" is not a list of GPU counts such as 1,2,4", list);
        if (n == MAX_COUNTS)
            die("--gpus: \"%s\" names more counts than this program keeps", list);
        counts[n++] = (int)count;
        at = *end ? end + 1 : end;
    }
    if (n == 0)
        die("--gpus: \"%s\" is not a list of GPU counts such as 1,2,4", list);
    return n;
}

/* The counts to measure, into run.counts: those asked for that this host has, 1 included,
 * ascending, each once. */
static void settle_counts(const int *asked, int nasked)
{
    int counts[MAX_COUNTS + 1], n = 0, has_one = 0;
    for (int i = 0; i < nasked; ++i) {
        if (asked[i] > run.present) {
            printf("host_operands: %d GPUs asked for, %d present: skipped\n", asked[i],
                   run.present);
            continue;
        }
        has_one |= asked[i] == 1;
        counts[n++] = asked[i];
    }
    if (!has_one) {
        printf("host_operands: 1 GPU added, the reference of the scaling and of the bits\n");
        counts[n++] = 1;
    }
    qsort(counts, (size_t)n, sizeof *counts, cmp_int);
    run.ncounts = 0;
    for (int i = 0; i < n; ++i)
        if (run.ncounts == 0 || counts[i] != run.counts[run.ncounts - 1])
            run.counts[run.ncounts++] = counts[i];
}

int main(int argc, char **argv)
{
    run.shapes[0] = (shape){16384, 16384, 16384};
    run.shapes[1] = (shape){32768, 32768, 8192};
    run.nshapes = 2;
    int reps = 3, xt_reps = 2, xt = 1, asked[MAX_COUNTS], nasked = 0;
    const char *json = NULL, *include = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-xt")) {
            xt = 0;
            continue;
        }
        if (!v)
            die("%s needs a value (see the comment at the top of bench/host_operands.c)", a);
        ++i;
        if (!strcmp(a, "--shapes")) {
            run.nshapes = 0;
            for (const char *at = v; *at && run.nshapes < MAX_SHAPES;) {
                long long m, n, k;
                int used = 0;
                if (sscanf(at, "%lldx%lldx%lld%n", &m, &n, &k, &used) != 3 || m < 1 || n < 1 ||
                    k < 1)
                    die("--shapes: \"%s\" is not MxNxK,...", v);
                run.shapes[run.nshapes++] = (shape){m, n, k};
                at += used;
                if (*at == ',')
                    ++at;
                else if (*at)
                    die("--shapes: \"%s\" is not MxNxK,...", v);
            }
        } else if (!strcmp(a, "--gpus")) {
            nasked = parse_counts(v, asked);
        } else if (!strcmp(a, "--reps")) {
            reps = atoi(v);
            if (reps < 1 || reps > 15)
                die("--reps %s: 1 .. 15", v);
        } else if (!strcmp(a, "--xt-reps")) {
            xt_reps = atoi(v);
            if (xt_reps < 1 || xt_reps > 15)
                die("--xt-reps %s: 1 .. 15", v);
        } else if (!strcmp(a, "--json")) {
            json = v;
        } else if (!strcmp(a, "--include")) {
            include = v;
        } else {
            die("unknown option %s", a);
        }
    }
    int present = 0;
    if (cudaGetDeviceCount(&present) != cudaSuccess || present < 1) {
        printf("host_operands: no GPU found, nothing measured\n");
        return 77;
    }
    run.present = present > MAX_GPUS ? MAX_GPUS : present;
    if (nasked == 0) {
        asked[nasked++] = 1;
        asked[nasked++] = run.present;
    }
    settle_counts(asked, nasked);
    for (int g = 0; g < run.present; ++g) {
        struct cudaDeviceProp prop;
        cuda_ok(cudaGetDeviceProperties(&prop, g), "cudaGetDeviceProperties");
        snprintf(run.names[g], sizeof run.names[g], "%s", prop.name);
    }
    for (int g = 0; g < run.present; ++g) {
        run.alone_gbps[g] = copy_bandwidth(g, 1, TO_GPUS);
        printf("pinned host -> GPU %d: %.1f GB/s\n", g, run.alone_gbps[g]);
    }
    for (int ci = 0; ci < run.ncounts; ++ci) {
        const int n = run.counts[ci];
        run.at_once_gbps[ci] = n == 1 ? run.alone_gbps[0] : copy_bandwidth(0, n, TO_GPUS);
        if (n > 1)
            printf("pinned host -> GPUs 0 .. %d at once: %.1f GB/s\n", n - 1,
                   run.at_once_gbps[ci]);
        run.back_gbps[ci] = copy_bandwidth(0, n, TO_HOST);
        printf("pinned GPUs 0 .. %d -> host at once: %.1f GB/s\n", n - 1, run.back_gbps[ci]);
        run.both_ways_gbps[ci] = copy_bandwidth(0, n, BOTH_WAYS);
        printf("pinned host <-> GPUs 0 .. %d, both ways at once: %.1f GB/s\n", n - 1,
               run.both_ways_gbps[ci]);
    }
    if (json)
        write_json(json, include);

    for (int si = 0; si < run.nshapes; ++si) {
        const shape *s = &run.shapes[si];
        const size_t a = (size_t)(s->m * s->k), b = (size_t)(s->k * s->n), c = (size_t)(s->m * s->n);
        operands page = {malloc(a * 4), malloc(b * 4), malloc(c * 4)}, pin = {0};
        float *first = malloc(c * 4);
        if (!page.A || !page.B || !page.C || !first)
            die("out of host memory for %s", "the pageable operands");
        cuda_ok(cudaHostAlloc((void **)&pin.A, a * 4, cudaHostAllocPortable), "cudaHostAlloc A");
        cuda_ok(cudaHostAlloc((void **)&pin.B, b * 4, cudaHostAllocPortable), "cudaHostAlloc B");
        cuda_ok(cudaHostAlloc((void **)&pin.C, c * 4, cudaHostAllocPortable), "cudaHostAlloc C");
        fill(page.A, (int64_t)a, 1);
        fill(page.B, (int64_t)b, 2);
        memcpy(pin.A, page.A, a * 4);
        memcpy(pin.B, page.B, b * 4);
        /* tilegemm, pinned then pageable, at each count; C cleared before each count, so that
         * what is compared is what that count wrote, against 1 GPU's pinned C */
        for (int ci = 0; ci < run.ncounts; ++ci) {
            memset(pin.C, 0, c * 4);
            run_tilegemm(s, &pin, "pinned", run.counts[ci], reps);
            if (ci == 0) {
                memcpy(first, pin.C, c * 4);
                run.exact[si] = check(s, pin.A, pin.B, pin.C, 200);
            }
            run.identical[si][ci] = memcmp(first, pin.C, c * 4) == 0;
            if (json)
                write_json(json, include);
        }
        for (int ci = 0; ci < run.ncounts; ++ci) {
            memset(page.C, 0, c * 4);
            run_tilegemm(s, &page, "pageable", run.counts[ci], reps);
            run.identical[si][ci] &= memcmp(first, page.C, c * 4) == 0;
            if (json)
                write_json(json, include);
        }
        printf("  C exact on 200 samples: %s; bit-identical to 1 GPU at every count, pinned and "
               "pageable: %s\n",
               run.exact[si] ? "yes" : "NO", identical_at_every_count(si) ? "yes" : "NO");
        for (int mi = 0; xt && mi < 2; ++mi)
            for (int ci = 0; ci < run.ncounts; ++ci) {
                run_xt(s, mi ? &page : &pin, mi ? "pageable" : "pinned", run.counts[ci],
                       xt_reps);
                if (json)
                    write_json(json, include);
            }
        free(page.A), free(page.B), free(page.C), free(first);
        cudaFreeHost(pin.A), cudaFreeHost(pin.B), cudaFreeHost(pin.C);
        run.done = si + 1;
        if (json)
            write_json(json, include);
    }

    /* The targets, per shape and count: over 1 GPU, over cublasXt on the same GPUs, pageable
     * over pinned, the bound of the copies, and the bits against 1 GPU. */
    printf("\n%-22s %5s %10s %10s %10s %12s %12s %8s\n", "shape", "GPUs", "N/1 GPU", "vs Xt",
           "page/pin", "bound TF/s", "links TF/s", "bits");
    for (int si = 0; si < run.nshapes; ++si) {
        char name[64];
        shape_name(&run.shapes[si], name, sizeof name);
        for (int ci = 0; ci < run.ncounts; ++ci) {
            const ratios at = ratios_at(name, run.counts[ci]);
            printf("%-22s %5d %10.2f %10.2f %10.2f %12.1f %12.1f %8s\n", name, run.counts[ci],
                   at.over_one, at.over_xt, at.page_over_pin,
                   copy_bound(&run.shapes[si], run.at_once_gbps[ci]),
                   link_bound(&run.shapes[si], ci),
                   run.identical[si][ci] ? "same" : "DIFFER");
        }
    }
    if (json)
        printf("wrote %s\n", json);
    return 0;
}
