/*
 * A thread count far past the pool's: run with OMP_NUM_THREADS=1000000 (set by CTest), CPU
 * products must succeed with the right answer.  The pool runs at most TG_POOL_MAX_THREADS
 * threads, so the packing buffers must be sized by the threads a product actually uses, not by
 * the count asked for (a million A blocks made a 64^3 product fail with TG_ERROR_ALLOCATION,
 * and sgemm_ fall back on its plain loop).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegemm.h"
#include "testing.h"

/* C = A * B with A[i][p] = (i + p) % 3 - 1 and B[p][j] = (p + 2 j) % 5 - 2: small integers,
 * so every float sum is exact and any order gives the same C. */
static void check_product(tg_handle *h, int64_t m, int64_t n, int64_t k)
{
    float *A = malloc(sizeof(float) * (size_t)(m * k)), *B = malloc(sizeof(float) * (size_t)(k * n));
    float *C = malloc(sizeof(float) * (size_t)(m * n));
    if (!A || !B || !C) {
        EXPECT(0, "operands of %lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
        free(A), free(B), free(C);
        return;
    }
    for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p)
            A[i * k + p] = (float)((i + p) % 3 - 1);
    for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j)
            B[p * n + j] = (float)((p + 2 * j) % 5 - 2);
    for (int64_t i = 0; i < m * n; ++i)
        C[i] = -7.0f;
    const tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, m, n, k, 1.0f, A, k,
                                 B, n, 0.0f, C, n);
    EXPECT(s == TG_SUCCESS, "%lldx%lldx%lld: %s (%s)", (long long)m, (long long)n, (long long)k,
           tg_status_string(s), tg_last_error(h));
    if (s == TG_SUCCESS) {
        int64_t wrong = 0;
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double want = 0.0;
                for (int64_t p = 0; p < k; ++p)
                    want += (double)A[i * k + p] * (double)B[p * n + j];
                wrong += C[i * n + j] != (float)want;
            }
        EXPECT(wrong == 0, "%lldx%lldx%lld: %lld wrong elements", (long long)m, (long long)n,
               (long long)k, (long long)wrong);
    }
    free(A), free(B), free(C);
}

int main(void)
{
    const char *asked = getenv("OMP_NUM_THREADS");
    printf("OMP_NUM_THREADS=%s\n", asked ? asked : "(unset)");
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS || tg_set_backend(h, TG_BACKEND_CPU) != TG_SUCCESS) {
        fprintf(stderr, "cannot set up the CPU backend\n");
        return 1;
    }
    /* the size the finding named, ragged sizes, and one large enough for every thread the
     * pool has */
    check_product(h, 64, 64, 64);
    check_product(h, 67, 45, 130);
    check_product(h, 300, 200, 100);
    check_product(h, 512, 512, 512);
    tg_destroy(h);
    return tg_test_result("test_thread_request");
}
