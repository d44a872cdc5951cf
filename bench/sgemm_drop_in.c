/*
 * sgemm_drop_in: a plain program that knows nothing of tilegemm.  It calls the Fortran BLAS
 * sgemm_ on N x N x N column-major host matrices (malloc'ed: pageable) and times it; linked
 * against the reference libblas, it is run with LD_PRELOAD=libtilegemm.so (and, to spread it
 * over the GPUs, TILEGEMM_DEVICES=all) to time tilegemm as a drop-in BLAS.
 *
 *   sgemm_drop_in [N [REPS]]      (default 16384, 3)
 *
 * Prints one JSON object: n, the seconds of each timed call (after one warm-up), the median
 * and TFLOP/s, TILEGEMM_DEVICES as it was set, and whether C is exact on sampled elements
 * (small-integer operands).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
            const float *beta, float *C, const int *ldc);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 16384;
    const int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 1 || reps < 1 || reps > 15) {
        fprintf(stderr, "usage: sgemm_drop_in [N [REPS]] (N >= 1, REPS 1..15)\n");
        return 2;
    }
    const size_t count = (size_t)n * (size_t)n;
    float *A = malloc(count * sizeof(float)), *B = malloc(count * sizeof(float));
    float *C = malloc(count * sizeof(float));
    if (!A || !B || !C) {
        fprintf(stderr, "sgemm_drop_in: out of memory for N = %d\n", n);
        return 1;
    }
    uint64_t s = 1;
    for (size_t i = 0; i < count; ++i) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        A[i] = (float)((int)(s >> 61) % 5 - 2);
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        B[i] = (float)((int)(s >> 61) % 5 - 2);
    }
    const float one = 1.0f, zero = 0.0f;
    double t[16];
    for (int rep = -1; rep < reps; ++rep) {
        const double start = now();
        sgemm_("N", "N", &n, &n, &n, &one, A, &n, B, &n, &zero, C, &n);
        if (rep >= 0)
            t[rep] = now() - start;
    }
    /* exact check of a few elements */
    int exact = 1;
    for (int i = 0; i < 64; ++i) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        const size_t r = (size_t)(s >> 33) % (size_t)n, c = (size_t)(s >> 13) % (size_t)n;
        double sum = 0.0;
        for (size_t p = 0; p < (size_t)n; ++p)
            sum += (double)A[r + p * (size_t)n] * (double)B[p + c * (size_t)n];
        exact &= (float)sum == C[r + c * (size_t)n];
    }
    for (int i = 1; i < reps; ++i) /* insertion sort for the median */
        for (int j = i; j > 0 && t[j] < t[j - 1]; --j) {
            const double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    const double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    const char *devices = getenv("TILEGEMM_DEVICES");
    const char *preload = getenv("LD_PRELOAD");
    printf("{\"program\": \"sgemm_drop_in\", \"n\": %d, \"TILEGEMM_DEVICES\": \"%s\", "
           "\"LD_PRELOAD\": \"%s\", \"median_s\": %.6f, \"tflops\": %.3f, \"exact_on_samples\": "
           "%s, \"runs_s\": [",
           n, devices ? devices : "", preload ? preload : "", med,
           2.0 * (double)n * n * n / med / 1e12, exact ? "true" : "false");
    for (int i = 0; i < reps; ++i)
        printf("%s%.6f", i ? ", " : "", t[i]);
    printf("]}\n");
    free(A), free(B), free(C);
    return exact ? 0 : 1;
}
