/*
 * The classic first test of a tiled kernel: 34 x 34 (just past a 32 x 32 tile, so the edge
 * tiles are almost empty), A all ones, B all twos: every element of C is exactly 2 * 34 = 68.
 * Runs `auto`, and every rung when a GPU is present.
 */
#include <stdio.h>

#include "tilegemm.h"

enum { N = 34 };

static int run(tg_handle *h, const char *algo)
{
    static float A[N * N], B[N * N], C[N * N];
    for (int i = 0; i < N * N; ++i)
        A[i] = 1.0f, B[i] = 2.0f, C[i] = -1.0f;
    tg_status s = tg_set_algo(h, algo);
    if (s == TG_SUCCESS)
        s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, N, N, N, 1.0f, A, N, B, N, 0.0f,
                     C, N);
    if (s == TG_ERROR_NOT_SUPPORTED && algo != tg_algos()[0]) {
        /* a rung whose shape limits exclude 34 x 34 (gemv8: m or n at most 8) */
        printf("%-8s skipped: %s\n", algo, tg_last_error(h));
        return 0;
    }
    if (s != TG_SUCCESS) {
        fprintf(stderr, "%s: %s\n", algo, tg_last_error(h));
        return 1;
    }
    int wrong = 0;
    for (int i = 0; i < N * N; ++i)
        wrong += C[i] != 68.0f;
    printf("%-8s %s (%d of %d elements are 68)\n", algo, wrong ? "FAIL" : "ok", N * N - wrong,
           N * N);
    return wrong != 0;
}

int main(void)
{
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS) {
        fprintf(stderr, "tg_create: %s\n", tg_last_error(NULL));
        return 1;
    }
    int failed = 0;
    const int gpu = tg_backend_available(TG_BACKEND_CUDA);
    for (const char *const *algo = tg_algos(); *algo; ++algo)
        if (gpu || algo == tg_algos()) /* without a GPU only "auto" (the CPU path) can run */
            failed |= run(h, *algo);
    tg_destroy(h);
    return failed;
}
