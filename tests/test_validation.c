/*
 * Argument checks: each BLAS rule, its position, the order the reference checks them in, the
 * message naming the argument, and that C is untouched after every error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
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
    /* stride_c = 0 is refused for what it is, every item writing one C, from a batch of 2 on
     * (the overlap rule would refuse it too, with a message that does not say so). */
    tg_status s = tg_sgemm_strided_batched(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK,
                                           1.0f, A, kK, 24, B, kN, 30, 0.0f, big, kN, 0, 2);
    EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == 17 &&
               strstr(tg_last_error(h), "every item would write the same C") != NULL,
           "stride_c = 0, batch 2: status %d position %d (%s)", s, tg_last_error_arg(h),
           tg_last_error(h));
    /* Positions of the shared arguments move in the batched call: ldb is 12, ldc 16. */
    s = tg_sgemm_strided_batched(h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK,
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
    EXPECT(tg_set_split_k(h, TG_MAX_SPLIT_K + 1) == TG_ERROR_INVALID_ARGUMENT, "split-K past the most");
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

/* Every argument of both entry points, one table: a legal call with that one argument made
 * illegal must fail with its position.  alpha and beta have no illegal value. */
typedef struct any_call {
    int layout, transa, transb;
    int64_t m, n, k, lda, stride_a, ldb, stride_b, ldc, stride_c, batch;
    int null_a, null_b, null_c;
} any_call;

typedef struct mutation {
    const char *argument;
    int plain_position, batched_position; /* 0: the argument does not exist in that call */
    void (*apply)(any_call *c);
} mutation;

static void bad_layout(any_call *c) { c->layout = 0; }
static void bad_transa(any_call *c) { c->transa = 'T'; }
static void bad_transb(any_call *c) { c->transb = -1; }
static void bad_m(any_call *c) { c->m = -1; }
static void bad_n(any_call *c) { c->n = INT64_MIN; }
static void bad_k(any_call *c) { c->k = -7; }
static void bad_a(any_call *c) { c->null_a = 1; }
static void bad_lda(any_call *c) { c->lda = c->layout == TG_ROW_MAJOR ? kK - 1 : kM - 1; }
static void bad_stride_a(any_call *c) { c->stride_a = -1; }
static void bad_b(any_call *c) { c->null_b = 1; }
static void bad_ldb(any_call *c) { c->ldb = 0; }
static void bad_stride_b(any_call *c) { c->stride_b = INT64_MIN; }
static void bad_c(any_call *c) { c->null_c = 1; }
static void bad_ldc(any_call *c) { c->ldc = c->layout == TG_ROW_MAJOR ? kN - 1 : kM - 1; }
static void bad_stride_c(any_call *c) { c->stride_c = 1; } /* items overlap */
static void bad_batch(any_call *c) { c->batch = -2; }

static const mutation kMutations[] = {
    {"layout", 1, 1, bad_layout},       {"transa", 2, 2, bad_transa},
    {"transb", 3, 3, bad_transb},       {"m", 4, 4, bad_m},
    {"n", 5, 5, bad_n},                 {"k", 6, 6, bad_k},
    {"A", 8, 8, bad_a},                 {"lda", 9, 9, bad_lda},
    {"stride_a", 0, 10, bad_stride_a},  {"B", 10, 11, bad_b},
    {"ldb", 11, 12, bad_ldb},           {"stride_b", 0, 13, bad_stride_b},
    {"C", 13, 15, bad_c},               {"ldc", 14, 16, bad_ldc},
    {"stride_c", 0, 17, bad_stride_c},  {"batch_count", 0, 18, bad_batch},
};

static void test_every_argument(tg_handle *h)
{
    static float a[512], b[512], c[512], before[512];
    for (int i = 0; i < 512; ++i)
        a[i] = b[i] = 1.0f;
    for (size_t t = 0; t < sizeof kMutations / sizeof *kMutations; ++t)
        for (int layout = TG_ROW_MAJOR; layout <= TG_COL_MAJOR; ++layout)
            for (int batched = 0; batched < 2; ++batched) {
                const mutation *mu = &kMutations[t];
                const int position = batched ? mu->batched_position : mu->plain_position;
                if (!position)
                    continue;
                const int row = layout == TG_ROW_MAJOR;
                any_call x = {layout, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK,
                              row ? kK : kM, kM * kK, row ? kN : kK, kK * kN,
                              row ? kN : kM, kM * kN, 3, 0, 0, 0};
                mu->apply(&x);
                for (int i = 0; i < 512; ++i)
                    c[i] = before[i] = (float)(i % 5);
                const float *pa = x.null_a ? NULL : a, *pb = x.null_b ? NULL : b;
                float *pc = x.null_c ? NULL : c;
                const tg_status s =
                    batched ? tg_sgemm_strided_batched(h, (tg_layout)x.layout, (tg_op)x.transa,
                                                       (tg_op)x.transb, x.m, x.n, x.k, 1.0f, pa,
                                                       x.lda, x.stride_a, pb, x.ldb, x.stride_b,
                                                       0.5f, pc, x.ldc, x.stride_c, x.batch)
                            : tg_sgemm(h, (tg_layout)x.layout, (tg_op)x.transa, (tg_op)x.transb,
                                       x.m, x.n, x.k, 1.0f, pa, x.lda, pb, x.ldb, 0.5f, pc,
                                       x.ldc);
                EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == position &&
                           tg_last_error(h)[0] != '\0',
                       "%s %s, bad %s: status %d, position %d (wanted %d): \"%s\"",
                       batched ? "tg_sgemm_strided_batched" : "tg_sgemm", row ? "row" : "col",
                       mu->argument, s, tg_last_error_arg(h), position, tg_last_error(h));
                EXPECT(memcmp(c, before, sizeof c) == 0, "bad %s: C was written", mu->argument);
            }
}

/* The overlap test of strided-batch C against brute force, on every small case. */
static void test_overlap_exact(void)
{
    static unsigned char hit[4096];
    int cases = 0;
    for (int64_t lines = 1; lines <= 4; ++lines)
        for (int64_t length = 1; length <= 5; ++length)
            for (int64_t ld = length; ld <= 9; ++ld)
                for (int64_t stride = 0; stride <= 45; ++stride)
                    for (int64_t batch = 0; batch <= 7; ++batch) {
                        memset(hit, 0, sizeof hit);
                        int64_t first = 0;
                        for (int64_t t = 0; t < batch && !first; ++t)
                            for (int64_t i = 0; i < lines; ++i)
                                for (int64_t j = 0; j < length; ++j) {
                                    const int64_t e = t * stride + i * ld + j;
                                    if (hit[e] && !first) {
                                        /* the first item t' that meets an earlier one */
                                        first = t;
                                    }
                                    hit[e] = 1;
                                }
                        const int64_t got = tg_first_overlap(lines, length, ld, stride, batch);
                        ++cases;
                        EXPECT((got > 0) == (first > 0),
                               "overlap of %lld lines of %lld, ld %lld, stride %lld, batch %lld: "
                               "got %lld, brute force says %s",
                               (long long)lines, (long long)length, (long long)ld,
                               (long long)stride, (long long)batch, (long long)got,
                               first ? "overlap" : "none");
                    }
    /* Huge values stay exact and fast: coprime strides far apart, and a wrap far away. */
    EXPECT(tg_first_overlap(1000000000, 1, 1000000000, 1000000001, INT64_MAX / 4) == 0,
           "ld + 1 apart, one column: no overlap");
    EXPECT(tg_first_overlap(3, 2, (int64_t)1 << 40, ((int64_t)1 << 40) / 3, 4) == 3,
           "three items in one line-gap, the fourth lands on line 1");
    printf("overlap test: %d cases against brute force\n", cases);
}

/* The reproducer is rejected naming stride_c; interleaved items stay legal. */
static void test_batched_overlap(tg_handle *h)
{
    static float a[900], b[900], c[1200], before[1200];
    for (int i = 0; i < 900; ++i)
        a[i] = b[i] = (float)(i % 3);
    for (int i = 0; i < 1200; ++i)
        c[i] = before[i] = 1.0f;
    tg_status s = tg_sgemm_strided_batched(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 30, 30, 30,
                                           1.0f, a, 30, 0, b, 30, 0, 1.0f, c, 30, 1, 8);
    EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == 17 &&
               strstr(tg_last_error(h), "stride_c") != NULL,
           "overlapping C items: status %d, position %d: %s", s, tg_last_error_arg(h),
           tg_last_error(h));
    EXPECT(memcmp(c, before, sizeof c) == 0, "overlapping C items: C was written");
    /* ldc = 2n, stride_c = n: two items interleave column blocks, sharing nothing. */
    s = tg_sgemm_strided_batched(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 30, 15, 30, 1.0f, a,
                                 30, 0, b, 15, 0, 0.0f, c, 30, 15, 2);
    EXPECT(s == TG_SUCCESS, "interleaved C items: %s", tg_last_error(h));
    /* Column-major, items one column apart inside ldc = m + 1 rows... they overlap. */
    s = tg_sgemm_strided_batched(h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 4, 4, 2, 1.0f, a, 4,
                                 0, b, 2, 0, 0.0f, c, 5, 5, 2);
    EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == 17,
           "column-major items one column apart: %s", tg_last_error(h));
}

/* Memory spans no int64 offset reaches are refused, naming the argument (no UB on the way). */
static void test_span_overflow(tg_handle *h)
{
    static float a[64], b[64], c[64];
    tg_status s = tg_sgemm_strided_batched(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 2, 2, 2,
                                           1.0f, a, 2, 4, b, 2, 4, 0.0f, c, 2, 4,
                                           (int64_t)1 << 62);
    EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == 10 &&
               strstr(tg_last_error(h), "int64") != NULL,
           "batch 2^62, stride 4: status %d position %d: %s", s, tg_last_error_arg(h),
           tg_last_error(h));
    s = tg_sgemm(h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 3, 3, 3, 1.0f, a, INT64_MAX / 2, b,
                 3, 0.0f, c, 3);
    EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == 9, "lda near 2^62: %s",
           tg_last_error(h));
    s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 3, 3, 3, 1.0f, a, 3, b, 3, 0.0f, c,
                 INT64_MAX);
    EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == 14, "ldc = INT64_MAX: %s",
           tg_last_error(h));
    /* A dimension no legal ld could store is blamed on the dimension, not on an ld that is
     * the smallest legal one (tg_explain too, where the caller gave no ld at all). */
    const int64_t big = (int64_t)1 << 62;
    const struct {
        tg_layout layout;
        int64_t m, n, k;
        int position;
        const char *name;
        float alpha;
    } dims[] = {{TG_ROW_MAJOR, big, 1, 1, 4, "m = ", 1.0f}, {TG_COL_MAJOR, big, 1, 1, 4, "m = ", 1.0f},
                {TG_ROW_MAJOR, 1, big, 1, 5, "n = ", 1.0f}, {TG_COL_MAJOR, 1, big, 1, 5, "n = ", 1.0f},
                {TG_ROW_MAJOR, 1, 1, big, 6, "k = ", 1.0f}, {TG_COL_MAJOR, 1, 1, big, 6, "k = ", 1.0f},
                {TG_ROW_MAJOR, big, 1, 1, 4, "m = ", 0.0f}, {TG_COL_MAJOR, 1, big, 1, 5, "n = ", 0.0f},
                {TG_ROW_MAJOR, 3037000500, 3037000500, 1, 4, "m = ", 1.0f}};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; ++i) {
        const tg_layout l = dims[i].layout;
        const int64_t m = dims[i].m, n = dims[i].n, k = dims[i].k;
        const int64_t lda = tg_min_ld(l, TG_NO_TRANS, m, k), ldb = tg_min_ld(l, TG_NO_TRANS, k, n);
        const int64_t ldc = tg_min_ld(l, TG_NO_TRANS, m, n);
        s = tg_sgemm(h, l, TG_NO_TRANS, TG_NO_TRANS, m, n, k, dims[i].alpha, a, lda, b, ldb, 0.0f,
                     c, ldc);
        EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == dims[i].position &&
                   strncmp(tg_last_error(h), dims[i].name, 4) == 0,
               "%lldx%lldx%lld, %s, alpha %g: status %d position %d: %s", (long long)m,
               (long long)n, (long long)k, l == TG_ROW_MAJOR ? "row" : "col",
               (double)dims[i].alpha, s, tg_last_error_arg(h), tg_last_error(h));
        if (dims[i].alpha == 0.0f)
            continue;
        char buf[256];
        s = tg_explain(h, l, TG_NO_TRANS, TG_NO_TRANS, m, n, k, NULL, lda, NULL, ldb, NULL, ldc,
                       buf, sizeof buf);
        EXPECT(s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == dims[i].position &&
                   strncmp(tg_last_error(h), dims[i].name, 4) == 0,
               "explain %lldx%lldx%lld, %s: status %d position %d: %s", (long long)m,
               (long long)n, (long long)k, l == TG_ROW_MAJOR ? "row" : "col", s,
               tg_last_error_arg(h), tg_last_error(h));
    }
    /* alpha = 0 never reads A: its span does not matter. */
    s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 3, 3, 3, 0.0f, NULL, INT64_MAX, NULL,
                 3, 0.0f, c, 3);
    EXPECT(s == TG_SUCCESS, "alpha = 0 with a huge lda: %s", tg_last_error(h));
    /* batch_count = 0 is a quick return, whatever the strides. */
    s = tg_sgemm_strided_batched(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 2, 2, 2, 1.0f, NULL,
                                 2, 4, NULL, 2, 4, 0.0f, NULL, 2, 4, 0);
    EXPECT(s == TG_SUCCESS, "batch_count = 0: %s", tg_last_error(h));
}

int main(void)
{
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS)
        return fprintf(stderr, "tg_create: %s\n", tg_last_error(NULL)), 1;
    test_plain(h);
    test_batched(h);
    test_every_argument(h);
    test_batched_overlap(h);
    test_span_overflow(h);
    tg_destroy(h);
    test_overlap_exact();
    test_handles();
    return tg_test_result("test_validation");
}
