/*
 * host_operands: products of host operands on one GPU and on all of them, in one run.
 *
 *   host_operands [--shapes 16384x16384x16384,32768x32768x8192] [--reps 3] [--xt-reps 2]
 *                 [--no-xt] [--json FILE] [--include NAME=FILE]
 *
 * Measures, in this order:
 *   - the pinned host-to-device bandwidth of each GPU alone and of all at once (cudaMemcpyAsync
 *     of 1 GiB, median of 5), and the bound it sets: the rate at which A and B would cross once
 *     at that bandwidth (the GPUs' products taken as free);
 *   - for each shape, column-major NN as sgemm_ callers pass it (alpha 1, beta 0), operands of
 *     small integers (so every product is exact and a sampled check is exact too): tilegemm
 *     from pinned and from pageable memory, on 1 GPU (tg_set_devices(h, NULL, 0)) and on all
 *     (TG_ALL_DEVICES); cublasXtSgemm on the same GPUs from the same memory;
 *   - whether C is bit-identical between 1 GPU and all, pinned and pageable.
 * Wall-clock medians (the calls return with C written), TFLOP/s, ratios.  The JSON names the
 * GPUs, their count, the commit (TILEGEMM_COMMIT, else git) and the date; --include embeds a
 * JSON file (the LD_PRELOAD drop-in run of sgemm_drop_in) under NAME.
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

/* Pinned host -> device: GB/s of GPU `only` alone (-1: all at once, their sum). */
static double h2d_bandwidth(int gpus, int only)
{
    const size_t bytes = (size_t)1 << 30;
    void *host = NULL, *dev[MAX_GPUS] = {0};
    cudaStream_t stream[MAX_GPUS] = {0};
    cuda_ok(cudaHostAlloc(&host, bytes, cudaHostAllocPortable), "cudaHostAlloc 1 GiB");
    memset(host, 1, bytes);
    const int lo = only < 0 ? 0 : only, hi = only < 0 ? gpus : only + 1;
    for (int g = lo; g < hi; ++g) {
        cuda_ok(cudaSetDevice(g), "cudaSetDevice");
        cuda_ok(cudaMalloc(&dev[g], bytes), "cudaMalloc 1 GiB");
        cuda_ok(cudaStreamCreate(&stream[g]), "cudaStreamCreate");
    }
    double t[6];
    for (int rep = 0; rep < 6; ++rep) {
        const double start = now();
        for (int g = lo; g < hi; ++g) {
            cuda_ok(cudaSetDevice(g), "cudaSetDevice");
            cuda_ok(cudaMemcpyAsync(dev[g], host, bytes, cudaMemcpyHostToDevice, stream[g]),
                    "cudaMemcpyAsync");
        }
        for (int g = lo; g < hi; ++g)
            cuda_ok(cudaStreamSynchronize(stream[g]), "cudaStreamSynchronize");
        t[rep] = now() - start;
    }
    for (int g = lo; g < hi; ++g) {
        cudaSetDevice(g);
        cudaFree(dev[g]);
        cudaStreamDestroy(stream[g]);
    }
    cudaFreeHost(host);
    cudaSetDevice(0);
    return (double)bytes * (hi - lo) / median(t + 1, 5) / 1e9;
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

static row rows[256];
static int nrows;

static double flops_of(const shape *s) { return 2.0 * (double)s->m * (double)s->n * (double)s->k; }

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
    snprintf(r->shape, sizeof r->shape, "%lldx%lldx%lld", (long long)s->m, (long long)s->n,
             (long long)s->k);
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

static void run_tilegemm(const shape *s, const operands *o, const char *memory, int gpus,
                         int all, int reps)
{
    row *r = add_row(s, "tilegemm", memory, all ? gpus : 1);
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS || tg_set_backend(h, TG_BACKEND_CUDA) != TG_SUCCESS ||
        tg_set_devices(h, NULL, all ? TG_ALL_DEVICES : 0) != TG_SUCCESS) {
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

static void run_xt(const shape *s, const operands *o, const char *memory, int gpus, int all,
                   int reps)
{
    row *r = add_row(s, "cublasXt", memory, all ? gpus : 1);
    cublasXtHandle_t xt = NULL;
    int ids[MAX_GPUS];
    for (int g = 0; g < gpus; ++g)
        ids[g] = g;
    if (cublasXtCreate(&xt) != CUBLAS_STATUS_SUCCESS ||
        cublasXtDeviceSelect(xt, all ? gpus : 1, ids) != CUBLAS_STATUS_SUCCESS) {
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

/* Everything measured so far, as JSON: written after each shape, so a run cut short by its
 * deadline still leaves the shapes it finished. */
typedef struct run_info {
    const char *json, *include;
    int gpus;
    char (*names)[256];
    const double *bw, *bound_one, *bound_all;
    double bw_all;
    const shape *shapes;
    const int *checked, *identical;
} run_info;

static void write_json(const run_info *ri, int done)
{
    const char *json = ri->json, *include = ri->include;
    const int gpus = ri->gpus;
    char (*names)[256] = ri->names;
    const double *bw = ri->bw, *bound_one = ri->bound_one, *bound_all = ri->bound_all;
    const double bw_all = ri->bw_all;
    const shape *shapes = ri->shapes;
    const int *checked = ri->checked, *identical = ri->identical;
    FILE *f = fopen(json, "w");
    if (!f)
        die("cannot write %s", json);
    char commit[128], date[32];
    commit_of(commit, sizeof commit);
    const time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(f, "{\n  \"benchmark\": \"host_operands\",\n  \"commit\": \"%s\",\n  \"date\": "
               "\"%s\",\n  \"gpu_count\": %d,\n  \"devices\": [",
            commit, date, gpus);
    for (int g = 0; g < gpus; ++g)
        fprintf(f, "%s\"%s\"", g ? ", " : "", names[g]);
    fprintf(f, "],\n  \"layout\": \"col\", \"trans\": \"NN\", \"alpha\": 1, \"beta\": 0,\n");
    fprintf(f, "  \"h2d_pinned_gbps\": [");
    for (int g = 0; g < gpus; ++g)
        fprintf(f, "%s%.2f", g ? ", " : "", bw[g]);
    fprintf(f, "],\n  \"h2d_pinned_all_gbps\": %.2f,\n  \"shapes\": [\n", bw_all);
    for (int si = 0; si < done; ++si) {
        char name[64];
        snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)shapes[si].m,
                 (long long)shapes[si].n, (long long)shapes[si].k);
        const row *one = find(name, "tilegemm", "pinned", 1);
        const row *all = find(name, "tilegemm", "pinned", gpus);
        const row *xall = find(name, "cublasXt", "pinned", gpus);
        const row *pall = find(name, "tilegemm", "pageable", gpus);
        fprintf(f, "    {\"shape\": \"%s\", \"h2d_bound_tflops_1_gpu\": ", name);
        json_number(f, bound_one[si]);
        fprintf(f, ", \"h2d_bound_tflops_all\": ");
        json_number(f, bound_all[si]);
        fprintf(f, ", \"exact_on_samples\": %s, \"bits_identical_1_vs_all\": %s,\n"
                   "     \"all_over_one\": ",
                checked[si] ? "true" : "false", identical[si] ? "true" : "false");
        json_number(f, ratio(all, one));
        fprintf(f, ", \"all_over_cublasxt\": ");
        json_number(f, ratio(all, xall));
        fprintf(f, ", \"pageable_over_pinned_all\": ");
        json_number(f, ratio(pall, all));
        fprintf(f, "}%s\n", si + 1 < done ? "," : "");
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
    printf("wrote %s\n", json);
}

int main(int argc, char **argv)
{
    shape shapes[MAX_SHAPES] = {{16384, 16384, 16384}, {32768, 32768, 8192}};
    int nshapes = 2, reps = 3, xt_reps = 2, xt = 1;
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
            nshapes = 0;
            for (const char *at = v; *at && nshapes < MAX_SHAPES;) {
                long long m, n, k;
                int used = 0;
                if (sscanf(at, "%lldx%lldx%lld%n", &m, &n, &k, &used) != 3 || m < 1 || n < 1 ||
                    k < 1)
                    die("--shapes: \"%s\" is not MxNxK,...", v);
                shapes[nshapes++] = (shape){m, n, k};
                at += used;
                if (*at == ',')
                    ++at;
                else if (*at)
                    die("--shapes: \"%s\" is not MxNxK,...", v);
            }
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
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
        printf("host_operands: no GPU found, nothing measured\n");
        return 77;
    }
    gpus = gpus > MAX_GPUS ? MAX_GPUS : gpus;
    char names[MAX_GPUS][256];
    for (int g = 0; g < gpus; ++g) {
        struct cudaDeviceProp prop;
        cuda_ok(cudaGetDeviceProperties(&prop, g), "cudaGetDeviceProperties");
        snprintf(names[g], sizeof names[g], "%s", prop.name);
    }
    double bw[MAX_GPUS];
    for (int g = 0; g < gpus; ++g) {
        bw[g] = h2d_bandwidth(gpus, g);
        printf("pinned host -> GPU %d: %.1f GB/s\n", g, bw[g]);
    }
    const double bw_all = h2d_bandwidth(gpus, -1);
    printf("pinned host -> all %d GPUs at once: %.1f GB/s\n", gpus, bw_all);

    int identical[MAX_SHAPES], checked[MAX_SHAPES];
    double bound_one[MAX_SHAPES], bound_all[MAX_SHAPES];
    const run_info ri = {json, include, gpus, names, bw, bound_one, bound_all, bw_all, shapes,
                         checked, identical};
    for (int si = 0; si < nshapes; ++si) {
        const shape *s = &shapes[si];
        const size_t a = (size_t)(s->m * s->k), b = (size_t)(s->k * s->n), c = (size_t)(s->m * s->n);
        bound_one[si] = flops_of(s) / ((double)(a + b) * 4 / (bw[0] * 1e9)) / 1e12;
        bound_all[si] = flops_of(s) / ((double)(a + b) * 4 / (bw_all * 1e9)) / 1e12;
        operands page = {malloc(a * 4), malloc(b * 4), malloc(c * 4)}, pin = {0};
        float *first = malloc(c * 4);
        if (!page.A || !page.B || !page.C || !first)
            die("out of host memory for %s", "the pageable operands");
        cuda_ok(cudaHostAlloc((void **)&pin.A, a * 4, cudaHostAllocPortable), "cudaHostAlloc A");
        cuda_ok(cudaHostAlloc((void **)&pin.B, b * 4, cudaHostAllocPortable), "cudaHostAlloc B");
        cuda_ok(cudaHostAlloc((void **)&pin.C, c * 4, cudaHostAllocPortable), "cudaHostAlloc C");
        fill(page.A, (int64_t)a, 1);
        fill(page.B, (int64_t)b, 2);
        memset(page.C, 0, c * 4);
        memcpy(pin.A, page.A, a * 4);
        memcpy(pin.B, page.B, b * 4);
        memset(pin.C, 0, c * 4);
        /* tilegemm: 1 GPU then all; C of the first pinned run kept to compare */
        run_tilegemm(s, &pin, "pinned", gpus, 0, reps);
        memcpy(first, pin.C, c * 4);
        checked[si] = check(s, pin.A, pin.B, pin.C, 200);
        int same = 1;
        if (gpus > 1) {
            memset(pin.C, 0, c * 4);
            run_tilegemm(s, &pin, "pinned", gpus, 1, reps);
            same &= memcmp(first, pin.C, c * 4) == 0;
        }
        run_tilegemm(s, &page, "pageable", gpus, 0, reps);
        same &= memcmp(first, page.C, c * 4) == 0;
        if (gpus > 1) {
            memset(page.C, 0, c * 4);
            run_tilegemm(s, &page, "pageable", gpus, 1, reps);
            same &= memcmp(first, page.C, c * 4) == 0;
        }
        identical[si] = same;
        printf("  C exact on 200 samples: %s; bit-identical 1 GPU / %d GPUs, pinned / pageable: "
               "%s\n", checked[si] ? "yes" : "NO", gpus, same ? "yes" : "NO");
        if (xt) {
            run_xt(s, &pin, "pinned", gpus, 0, xt_reps);
            if (gpus > 1)
                run_xt(s, &pin, "pinned", gpus, 1, xt_reps);
            run_xt(s, &page, "pageable", gpus, 0, xt_reps);
            if (gpus > 1)
                run_xt(s, &page, "pageable", gpus, 1, xt_reps);
        }
        free(page.A), free(page.B), free(page.C), free(first);
        cudaFreeHost(pin.A), cudaFreeHost(pin.B), cudaFreeHost(pin.C);
        if (json)
            write_json(&ri, si + 1);
    }

    /* The targets, per shape: all GPUs over one, over cublasXt, pageable over pinned. */
    printf("\n%-22s %10s %10s %10s %10s\n", "shape", "N/1 GPU", "vs Xt", "page/pin", "bits");
    for (int si = 0; si < nshapes; ++si) {
        char name[64];
        snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)shapes[si].m,
                 (long long)shapes[si].n, (long long)shapes[si].k);
        const row *one = find(name, "tilegemm", "pinned", 1), *all = find(name, "tilegemm", "pinned", gpus);
        const row *xall = find(name, "cublasXt", "pinned", gpus);
        const row *pall = find(name, "tilegemm", "pageable", gpus);
        printf("%-22s %10.2f %10.2f %10.2f %10s\n", name, ratio(all, one), ratio(all, xall),
               ratio(pall, all), identical[si] ? "same" : "DIFFER");
    }

    if (json)
        write_json(&ri, nshapes);
    return 0;
}
