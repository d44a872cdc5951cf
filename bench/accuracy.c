/*
 * accuracy: how the error of each rung grows with k, against a float64 reference, on the same
 * data for every rung.  This is the measurement behind the math modes: a rung may serve the
 * default FP32 mode only if its RMS error is no larger than the FMA rungs'.
 *
 *   accuracy [--size N] [--k K,K,...] [--algo A,B,...] [--samples S] [--seed X] [--json FILE]
 *
 * For each k and each data distribution (uniform in [-1, 1]; wide: uniform times 2^e, e uniform
 * in [-12, 12]; cancel: rows of A with alternating signs over equal magnitudes, so sums are
 * near zero), C = A B with N x N x k, row-major, host operands, each rung forced by name.  On S
 * sampled entries:
 *   worst scaled error  |c - ref| / ((k + 2) FLT_EPSILON sum|a b|)   (FP32 accuracy: <= 1)
 *   RMS relative error  sqrt(mean((|c - ref| / sum|a b|)^2))
 * Public API only.  Exit status 0 when every run completed (no threshold: this measures).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "tilegemm.h"

static uint64_t rng_state;
static double uniform(void) { return tg_random_unit(&rng_state); } /* in [-1, 1) */

enum { DIST_UNIFORM, DIST_WIDE, DIST_CANCEL, DIST_COUNT };
static const char *const dist_names[] = {"uniform", "wide", "cancel"};

static float draw(int dist, int64_t index)
{
    switch (dist) {
    case DIST_WIDE: return (float)(uniform() * ldexp(1.0, (int)floor((uniform() + 1.0) * 12.5) - 12));
    case DIST_CANCEL: { /* equal magnitudes in pairs of opposite sign */
        static double last;
        if (index % 2 == 0)
            last = 0.5 + 0.5 * fabs(uniform());
        return (float)(index % 2 ? -last * (1.0 + 1e-3 * uniform()) : last);
    }
    default: return (float)uniform();
    }
}

static int split_list(char *arg, char **items, int max)
{
    int n = 0;
    for (char *s = strtok(arg, ","); s && n < max; s = strtok(NULL, ","))
        items[n++] = s;
    return n;
}

int main(int argc, char **argv)
{
    int64_t size = 1024;
    char ks_arg[256] = "16,64,256,1024,4096,16384";
    char algos_arg[512] = "warptile128_l2,mma3xtf32,tma_wgmma3xtf32,mmatf32";
    int samples = 512;
    uint64_t seed = 2026;
    const char *json_path = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            printf("usage: accuracy [--size N] [--k K,...] [--algo A,...] [--samples S] "
                   "[--seed X] [--json FILE]\n");
            return 0;
        }
        if (!v) {
            fprintf(stderr, "accuracy: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--size")) size = atoll(v);
        else if (!strcmp(a, "--k")) snprintf(ks_arg, sizeof ks_arg, "%s", v);
        else if (!strcmp(a, "--algo")) snprintf(algos_arg, sizeof algos_arg, "%s", v);
        else if (!strcmp(a, "--samples")) samples = atoi(v);
        else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--json")) json_path = v;
        else {
            fprintf(stderr, "accuracy: unknown option %s\n", a);
            return 2;
        }
        ++i;
    }
    if (size < 1 || samples < 1) {
        fprintf(stderr, "accuracy: --size and --samples must be positive\n");
        return 2;
    }
    char *k_items[32], *algo_items[32];
    const int nk = split_list(ks_arg, k_items, 32), na = split_list(algos_arg, algo_items, 32);
    if (!tg_backend_available(TG_BACKEND_CUDA)) {
        printf("accuracy: SKIPPED, no GPU\n");
        return 77;
    }
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS) {
        fprintf(stderr, "accuracy: %s\n", tg_last_error(NULL));
        return 1;
    }
    FILE *json = json_path ? fopen(json_path, "w") : NULL;
    if (json)
        fprintf(json, "{\"seed\": %llu, \"size\": %lld, \"results\": [\n",
                (unsigned long long)seed, (long long)size);
    int first_json = 1, failures = 0;
    printf("%-8s %6s %-20s %12s %12s\n", "data", "k", "algo", "worst", "rms");
    for (int ik = 0; ik < nk; ++ik) {
        const int64_t k = atoll(k_items[ik]);
        const int64_t m = size, n = size;
        float *A = malloc(sizeof(float) * (size_t)(m * k));
        float *B = malloc(sizeof(float) * (size_t)(k * n));
        float *C = malloc(sizeof(float) * (size_t)(m * n));
        int64_t *rows = malloc(sizeof(int64_t) * (size_t)samples);
        int64_t *cols = malloc(sizeof(int64_t) * (size_t)samples);
        double *ref = malloc(sizeof(double) * (size_t)samples);
        double *mag = malloc(sizeof(double) * (size_t)samples);
        if (!A || !B || !C || !rows || !cols || !ref || !mag) {
            fprintf(stderr, "accuracy: out of host memory at k = %lld\n", (long long)k);
            return 1;
        }
        for (int dist = 0; dist < DIST_COUNT; ++dist) {
            rng_state = seed + (uint64_t)k * 131 + (uint64_t)dist;
            for (int64_t i = 0; i < m * k; ++i)
                A[i] = draw(dist, i);
            for (int64_t i = 0; i < k * n; ++i)
                B[i] = dist == DIST_CANCEL ? (float)(0.5 + 0.5 * fabs(uniform())) : draw(dist, i);
            for (int s = 0; s < samples; ++s) {
                rows[s] = (int64_t)((uniform() + 1.0) * 0.5 * (double)m) % m;
                cols[s] = (int64_t)((uniform() + 1.0) * 0.5 * (double)n) % n;
                double r = 0.0, a = 0.0;
                for (int64_t p = 0; p < k; ++p) {
                    const double prod = (double)A[rows[s] * k + p] * (double)B[p * n + cols[s]];
                    r += prod, a += fabs(prod);
                }
                ref[s] = r, mag[s] = a;
            }
            for (int ia = 0; ia < na; ++ia) {
                for (int64_t i = 0; i < m * n; ++i)
                    C[i] = NAN;
                tg_status st = tg_set_algo(h, algo_items[ia]);
                if (st == TG_SUCCESS)
                    st = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, m, n, k, 1.0f, A, k,
                                  B, n, 0.0f, C, n);
                if (st != TG_SUCCESS) {
                    printf("%-8s %6lld %-20s failed: %s\n", dist_names[dist], (long long)k,
                           algo_items[ia], tg_last_error(h));
                    ++failures;
                    continue;
                }
                double worst = 0.0, sq = 0.0;
                for (int s = 0; s < samples; ++s) {
                    const double c = C[rows[s] * n + cols[s]];
                    const double err = fabs(c - ref[s]);
                    const double scaled = err / ((double)(k + 2) * FLT_EPSILON * mag[s]);
                    worst = isnan(scaled) || scaled > worst ? scaled : worst;
                    sq += (err / mag[s]) * (err / mag[s]);
                }
                const double rms = sqrt(sq / samples);
                printf("%-8s %6lld %-20s %12.3g %12.3g\n", dist_names[dist], (long long)k,
                       algo_items[ia], worst, rms);
                if (json)
                    fprintf(json,
                            "%s  {\"data\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, "
                            "\"algo\": \"%s\", \"worst_scaled\": %.6g, \"rms_relative\": %.6g}",
                            first_json ? "" : ",\n", dist_names[dist], (long long)m,
                            (long long)n, (long long)k, algo_items[ia], worst, rms);
                first_json = 0;
            }
        }
        free(A), free(B), free(C), free(rows), free(cols), free(ref), free(mag);
    }
    if (json) {
        fprintf(json, "\n]}\n");
        fclose(json);
    }
    tg_destroy(h);
    return failures ? 1 : 0;
}
