/*
 * Argument checks: each BLAS rule, its position, the order the reference checks them in, the
 * message naming the argument, and that C is untouched after every error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "tilegemm.h"

enum { kM = 4, kN = 5, kK = 6 };
static float A[64], B[64], C[64], C_before[64];

typedef struct call {
    int layout, transa, transb;
    int64_t m, n, k, lda, ldb, ldc;
} call;

/* A legal row-major call to start each case from. */
static call legal(int layout)
{
    call c = {layout, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK, 0, 0, 0};
    c.lda = layout == TG_ROW_MAJOR ? kK : kM;
    c.ldb = layout == TG_ROW_MAJOR ? kN : kK;
    c.ldc = layout == TG_ROW_MAJOR ? kN : kM;
    return c;
}

static void expect_error(tg_handle *h, call c, int position, const char *message, int line)
{
    for (int i = 0; i < 64; ++i)
        C[i] = C_before[i] = (float)(i % 7) - 3.0f;
    const tg_status s = tg_sgemm(h, (tg_layout)c.layout, (tg_op)c.transa, (tg_op)c.transb, c.m,
                                 c.n, c.k, 1.0f, A, c.lda, B, c.ldb, 0.0f, C, c.ldc);
    EXPECT(s == TG_ERROR_INVALID_ARGUMENT, "line %d: status %d (%s)", line, s, tg_last_error(h));
    EXPECT(tg_last_error_arg(h) == position, "line %d: position %d, wanted %d (%s)", line,
           tg_last_error_arg(h), position, tg_last_error(h));
    if (message)
        EXPECT(strcmp(tg_last_error(h), message) == 0, "line %d: message \"%s\", wanted \"%s\"",
               line, tg_last_error(h), message);
    EXPECT(memcmp(C, C_before, sizeof C) == 0, "line %d: C was written after an error", line);
}

static void test_plain(tg_handle *h)
{
    for (int i = 0; i < 64; ++i)
        A[i] = B[i] = 1.0f + (float)i / 64.0f;
    for (int layout = TG_ROW_MAJOR; layout <= TG_COL_MAJOR; ++layout) {
        const int row = layout == TG_ROW_MAJOR;
        call c = legal(layout);
        c.layout = 99, expect_error(h, c, 1, NULL, __LINE__);
        c = legal(layout), c.transa = 0, expect_error(h, c, 2, NULL, __LINE__);
        c = legal(layout), c.transb = 113, expect_error(h, c, 3, NULL, __LINE__);
        c = legal(layout), c.m = -1, expect_error(h, c, 4, "m = -1 is negative", __LINE__);
        c = legal(layout), c.n = -2, expect_error(h, c, 5, "n = -2 is negative", __LINE__);
        c = legal(layout), c.k = -3, expect_error(h, c, 6, "k = -3 is negative", __LINE__);
        c = legal(layout), --c.lda, expect_error(h, c, 9, NULL, __LINE__);
        c = legal(layout), --c.ldb, expect_error(h, c, 11, NULL, __LINE__);
        c = legal(layout), --c.ldc, expect_error(h, c, 14, NULL, __LINE__);
        /* Several wrong at once: the first in the reference's order wins.  Row-major calls
         * are checked as the swapped column-major call, as reference CBLAS does. */
        c = legal(layout), c.m = -1, c.n = -1;
        expect_error(h, c, row ? 5 : 4, NULL, __LINE__);
        c = legal(layout), --c.lda, --c.ldb;
        expect_error(h, c, row ? 11 : 9, NULL, __LINE__);
        c = legal(layout), c.transa = 7, c.m = -1;
        expect_error(h, c, 2, NULL, __LINE__);
        c = legal(layout), c.k = -1, --c.ldc;
        expect_error(h, c, 6, NULL, __LINE__);
        /* Transposes change which stored dimension each ld must cover. */
        c = legal(layout), c.transa = TG_TRANS, c.lda = row ? kM : kK;
        EXPECT(tg_sgemm(h, c.layout, c.transa, c.transb, c.m, c.n, c.k, 1.0f, A, c.lda, B, c.ldb,
                        0.0f, C, c.ldc) == TG_SUCCESS, "transposed A with ld %lld: %s",
               (long long)c.lda, tg_last_error(h));
        --c.lda, expect_error(h, c, 9, NULL, __LINE__);
        c = legal(layout), c.transb = TG_TRANS, c.ldb = row ? kK : kN;
        --c.ldb, expect_error(h, c, 11, NULL, __LINE__);
    }
    /* The message names the argument, its value and the rule. */
    call c = legal(TG_ROW_MAJOR);
    c.k = 5, c.lda = 3;
    expect_error(h, c, 9, "lda = 3 is less than k = 5 (row-major A, no transpose)", __LINE__);
    c = legal(TG_COL_MAJOR), c.transb = TG_TRANS, c.ldb = 4;
    expect_error(h, c, 11, "ldb = 4 is less than n = 5 (column-major B, transposed)", __LINE__);
    c = legal(TG_ROW_MAJOR), c.n = 0, c.ldc = 0;
    expect_error(h, c, 14, "ldc = 0 is less than 1 (row-major C)", __LINE__);
    /* Leading dimensions are checked before the quick return, as the reference does. */
    c = legal(TG_COL_MAJOR), c.m = 0, c.ldc = 0, c.lda = 0;
    expect_error(h, c, 9, NULL, __LINE__);
    /* A NULL that would be read is an error naming it; one that would not is fine. */
    EXPECT(tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK, 1.0f, NULL, kK, B,
                    kN, 0.0f, C, kN) == TG_ERROR_INVALID_ARGUMENT &&
               tg_last_error_arg(h) == 8,
           "NULL A: %s", tg_last_error(h));
    EXPECT(tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK, 1.0f, A, kK, B, kN,
                    0.0f, NULL, kN) == TG_ERROR_INVALID_ARGUMENT &&
               tg_last_error_arg(h) == 13,
           "NULL C: %s", tg_last_error(h));
    EXPECT(tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK, 0.0f, NULL, kK, NULL,
                    kN, 0.0f, C, kN) == TG_SUCCESS,
           "alpha = 0 never reads A or B, so NULL is allowed: %s", tg_last_error(h));
    EXPECT(tg_last_error(h)[0] == '\0', "a success clears the message: \"%s\"",
           tg_last_error(h));
}

static void test_batched(tg_handle *h)
{
    float big[256];
    for (int i = 0; i < 256; ++i)
        big[i] = (float)i;
    const struct {
        int64_t stride_a, stride_b, stride_c, batch;
        int position;
    } cases[] = {
        {-1, 30, 20, 2, 10}, {24, -1, 20, 2, 13}, {24, 30, 0, 2, 17}, {24, 30, -20, 2, 17},
        {24, 30, 20, -1, 18},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        float before[256];
        memcpy(before, big, sizeof big);
        /* Row-major 4x5 C: one item is 4 * 5 = 20 elements. */
        const tg_status s = tg_sgemm_strided_batched(
            h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK, 1.0f, A, kK,
            cases[i].stride_a, B, kN, cases[i].stride_b, 0.0f, big, kN, cases[i].stride_c,
            cases[i].batch);
        EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == cases[i].position,
               "batched case %zu: status %d position %d (%s)", i, s, tg_last_error_arg(h),
               tg_last_error(h));
        EXPECT(memcmp(before, big, sizeof big) == 0, "batched case %zu wrote C", i);
    }
    /* Positions of the shared arguments move in the batched call: ldb is 12, ldc 16. */
    tg_status s = tg_sgemm_strided_batched(h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK,
                                           1.0f, A, kM, 0, B, kK - 1, 0, 0.0f, big, kM, 20, 2);
    EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == 12, "ldb: %d (%s)",
           tg_last_error_arg(h), tg_last_error(h));
    s = tg_sgemm_strided_batched(h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK, 1.0f, A,
                                 kM, 0, B, kK, 0, 0.0f, big, kM - 1, 20, 2);
    EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == 16, "ldc: %d (%s)",
           tg_last_error_arg(h), tg_last_error(h));
}

static void test_handles(void)
{
    EXPECT(tg_sgemm(NULL, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 1, 1, 1, 1.0f, A, 1, B, 1,
                    0.0f, C, 1) == TG_ERROR_INVALID_HANDLE,
           "NULL handle");
    EXPECT(strstr(tg_last_error(NULL), "handle") != NULL, "message: %s", tg_last_error(NULL));
    EXPECT(tg_create(NULL) == TG_ERROR_INVALID_ARGUMENT, "tg_create(NULL)");

    tg_handle *h = NULL;
    setenv("TILEGEMM_BACKEND", "gpu-please", 1);
    EXPECT(tg_create(&h) == TG_ERROR_INVALID_ARGUMENT && h == NULL, "bad TILEGEMM_BACKEND");
    EXPECT(strstr(tg_last_error(NULL), "TILEGEMM_BACKEND") != NULL, "message: %s",
           tg_last_error(NULL));
    unsetenv("TILEGEMM_BACKEND");
    setenv("TILEGEMM_GPU_MIN_WORK", "12abc", 1);
    EXPECT(tg_create(&h) == TG_ERROR_INVALID_ARGUMENT, "bad TILEGEMM_GPU_MIN_WORK");
    unsetenv("TILEGEMM_GPU_MIN_WORK");

    EXPECT(tg_create(&h) == TG_SUCCESS, "tg_create: %s", tg_last_error(NULL));
    EXPECT(tg_set_algo(h, "fastest-ever") == TG_ERROR_UNKNOWN_ALGO, "unknown algo accepted");
    EXPECT(strstr(tg_last_error(h), "fastest-ever") != NULL, "message: %s", tg_last_error(h));
    EXPECT(tg_set_algo(h, "auto") == TG_SUCCESS, "auto: %s", tg_last_error(h));
    EXPECT(tg_set_backend(h, (tg_backend)42) == TG_ERROR_INVALID_ARGUMENT, "backend 42");
    EXPECT(tg_set_split_k(h, -1) == TG_ERROR_INVALID_ARGUMENT &&
               strstr(tg_last_error(h), "slices = -1") != NULL,
           "split-K -1: %s", tg_last_error(h));
    EXPECT(tg_set_split_k(h, 65) == TG_ERROR_INVALID_ARGUMENT, "split-K 65");
    EXPECT(tg_set_split_k(h, 4) == TG_SUCCESS && tg_set_split_k(h, 0) == TG_SUCCESS,
           "split-K 4 then auto: %s", tg_last_error(h));
    const char *const *algos = tg_algos();
    EXPECT(algos[0] && strcmp(algos[0], "auto") == 0, "tg_algos() starts with auto");
    for (const char *const *a = algos; *a; ++a)
        EXPECT(tg_set_algo(h, *a) == TG_SUCCESS, "algo %s from tg_algos(): %s", *a,
               tg_last_error(h));
    EXPECT(strcmp(tg_status_string(TG_ERROR_INVALID_ARGUMENT), "invalid argument") == 0,
           "status string");
    char plan[1024];
    EXPECT(tg_explain(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 4, 5, 6, NULL, 3, NULL, 5, NULL,
                      5, plan, sizeof plan) == TG_ERROR_INVALID_ARGUMENT &&
               tg_last_error_arg(h) == 9,
           "explain validates like tg_sgemm: %s", tg_last_error(h));
    tg_set_algo(h, "auto");
    EXPECT(tg_explain(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 4, 5, 6, NULL, 6, NULL, 5, NULL,
                      5, plan, sizeof plan) == TG_SUCCESS &&
               strstr(plan, "backend:") != NULL,
           "explain: %s / %s", tg_last_error(h), plan);
    tg_destroy(h);
}

int main(void)
{
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS)
        return fprintf(stderr, "tg_create: %s\n", tg_last_error(NULL)), 1;
    test_plain(h);
    test_batched(h);
    tg_destroy(h);
    test_handles();
    return tg_test_result("test_validation");
}
