/*
 * Products into a C of more than 2^31 elements, on every rung of tg_algos() ("auto" too), in
 * device memory: 32-bit index arithmetic anywhere in a kernel or its launcher writes the wrong
 * place or nothing.  Exit 77 (skipped) without a GPU; TILEGEMM_REQUIRE_GPU=1 makes that a failure.
 *
 * C is 65664 x 32896 (2,160,066,560 elements, 8.6 GB) with k = 32, filled with NaN first, beta
 * = 0.  A and B hold small integers, so every arithmetic (FFMA, 3xTF32, TF32) gives the float64
 * sum exactly and samples compare bit for bit: whole lines of C where line * ldc crosses 2^31,
 * the first and last lines, and random elements.  Row-major NN and column-major TN.
 *
 *   test_gpu_large [--seed N] [--algo NAME] [--samples N]
 */
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "tilegemm.h"

static uint64_t g_state = 12345; /* --seed sets it in every build; only a CUDA build draws on it */

#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>

enum { kM = 65664, kN = 32896, kK = 32 };

static long long g_checked;

static uint64_t next_random(void) /* splitmix64 */
{
    uint64_t z = (g_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct problem {
    tg_layout layout;
    tg_op transa;
    float *hostA, *hostB; /* as stored: A is m x k (NN) or k x m (TN), B k x n */
    int64_t lda, ldb, ldc;
} problem;

static double expected(const problem *p, int64_t i, int64_t j)
{
    double sum = 0.0;
    for (int64_t q = 0; q < kK; ++q) {
        const int row = p->layout == TG_ROW_MAJOR;
        /* op(A)(i, q) and B(q, j), indexed from layout, transpose and ld */
        const int64_t a_at = row ? (p->transa == TG_NO_TRANS ? i * p->lda + q : q * p->lda + i)
                                 : (p->transa == TG_NO_TRANS ? i + q * p->lda : q + i * p->lda);
        const int64_t b_at = row ? q * p->ldb + j : q + j * p->ldb;
        sum += (double)p->hostA[a_at] * (double)p->hostB[b_at];
    }
    return sum;
}

/* Element (i, j) of C as it came back, against float64. */
static void compare(const char *algo, const problem *p, int64_t i, int64_t j, float got)
{
    ++g_checked;
    const double want = expected(p, i, j);
    EXPECT((double)got == want, "%s %s: C(%lld, %lld) = %g, float64 says %g (offset %lld)", algo,
           p->layout == TG_ROW_MAJOR ? "row NN" : "col TN", (long long)i, (long long)j, got, want,
           (long long)(p->layout == TG_ROW_MAJOR ? i * p->ldc + j : i + j * p->ldc));
}

static void run(const char *algo, tg_handle *h, const problem *p, const float *A, const float *B,
                float *C, int samples)
{
    const size_t c_bytes = (size_t)kM * kN * sizeof(float);
    if (cudaMemset(C, 0xff, c_bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
        EXPECT(0, "%s: cudaMemset of C failed", algo);
        return;
    }
    tg_status s = tg_sgemm(h, p->layout, p->transa, TG_NO_TRANS, kM, kN, kK, 1.0f, A, p->lda, B,
                           p->ldb, 0.0f, C, p->ldc);
    if (s == TG_SUCCESS)
        s = tg_synchronize(h);
    /* Every rung must handle C past 2^31 wherever its constraints admit the shape; a forced
     * rung that refuses it (gemv8: m and n over 8) is not run on it. */
    if (s == TG_ERROR_NOT_SUPPORTED && strcmp(algo, "auto") != 0) {
        printf("%s: outside its constraints, not run: %s\n", algo, tg_last_error(h));
        return;
    }
    EXPECT(s == TG_SUCCESS, "%s: %s: %s", algo, tg_status_string(s), tg_last_error(h));
    if (s != TG_SUCCESS)
        return;

    /* Whole lines: the first, the last, and those around 2^31 / ldc. */
    const int row = p->layout == TG_ROW_MAJOR;
    const int64_t lines = row ? kM : kN, length = row ? kN : kM;
    const int64_t cross = ((int64_t)1 << 31) / p->ldc;
    const int64_t picks[] = {0, cross - 1, cross, cross + 1, lines - 2, lines - 1};
    float *line = malloc((size_t)length * sizeof(float));
    for (size_t t = 0; line && t < sizeof picks / sizeof *picks; ++t) {
        const int64_t l = picks[t];
        if (cudaMemcpy(line, C + l * p->ldc, (size_t)length * sizeof(float),
                       cudaMemcpyDeviceToHost) != cudaSuccess) {
            EXPECT(0, "%s: copy of line %lld failed", algo, (long long)l);
            break;
        }
        for (int64_t e = 0; e < length; ++e)
            compare(algo, p, row ? l : e, row ? e : l, line[e]);
    }
    free(line);
    for (int r = 0; r < samples; ++r) {
        const int64_t i = (int64_t)(next_random() % kM), j = (int64_t)(next_random() % kN);
        float got;
        cudaMemcpy(&got, C + (row ? i * p->ldc + j : i + j * p->ldc), sizeof got,
                   cudaMemcpyDeviceToHost);
        compare(algo, p, i, j, got);
    }
}
#endif

int main(int argc, char **argv)
{
    const char *only = NULL;
    int samples = 4096;
    for (int i = 1; i < argc; ++i) {
        if (tg_test_seed_arg(argc, argv, &i, 10, &g_state))
            continue;
        if (!strcmp(argv[i], "--algo") && i + 1 < argc) {
            only = argv[++i];
        } else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
            samples = atoi(argv[++i]);
        } else {
            return fprintf(stderr, "usage: test_gpu_large [--seed N] [--algo NAME] [--samples N]\n"),
                   2;
        }
    }
    const int need = tg_test_need_gpu("test_gpu_large");
    if (need)
        return need;
#ifdef TG_HAVE_CUDA
    printf("test_gpu_large --seed %llu: C %d x %d = %lld elements, k = %d\n",
           (unsigned long long)g_state, kM, kN, (long long)kM * kN, kK);
    float *hostA = malloc((size_t)kM * kK * sizeof(float));
    float *hostB = malloc((size_t)kK * kN * sizeof(float));
    float *A = NULL, *B = NULL, *C = NULL;
    if (!hostA || !hostB || cudaMalloc((void **)&A, (size_t)kM * kK * sizeof(float)) ||
        cudaMalloc((void **)&B, (size_t)kK * kN * sizeof(float)) ||
        cudaMalloc((void **)&C, (size_t)kM * kN * sizeof(float))) {
        printf("test_gpu_large: FAILED: cannot allocate the operands (8.7 GB of GPU memory)\n");
        return 1;
    }
    for (int64_t e = 0; e < (int64_t)kM * kK; ++e)
        hostA[e] = (float)((int)(next_random() % 9) - 4);
    for (int64_t e = 0; e < (int64_t)kK * kN; ++e)
        hostB[e] = (float)((int)(next_random() % 9) - 4);
    cudaMemcpy(A, hostA, (size_t)kM * kK * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(B, hostB, (size_t)kK * kN * sizeof(float), cudaMemcpyHostToDevice);
    /* The same stored A serves as m x k row-major NN and as k x m column-major TN (ld = k). */
    const problem shapes[] = {
        {TG_ROW_MAJOR, TG_NO_TRANS, hostA, hostB, kK, kN, kN},
        {TG_COL_MAJOR, TG_TRANS, hostA, hostB, kK, kK, kM},
    };
    int products = 0;
    for (const char *const *a = tg_algos(); *a; ++a) {
        if (only && strcmp(only, *a))
            continue;
        tg_handle *h;
        if (tg_create(&h) != TG_SUCCESS || tg_set_algo(h, *a) != TG_SUCCESS) {
            EXPECT(0, "%s: set-up: %s", *a, tg_last_error(h));
            continue;
        }
        for (int s = 0; s < 2; ++s, ++products) {
            printf("rung %s, %s\n", *a, s ? "column-major TN" : "row-major NN");
            fflush(stdout);
            run(*a, h, &shapes[s], A, B, C, samples);
        }
        tg_destroy(h);
    }
    cudaFree(A), cudaFree(B), cudaFree(C);
    free(hostA), free(hostB);
    printf("test_gpu_large: %d large products, %lld entries checked against float64\n", products,
           g_checked);
#endif
    return tg_test_result("test_gpu_large");
}
