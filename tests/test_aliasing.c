/*
 * C must share no element with A or B when they are read: tg_sgemm, the batched call and the
 * BLAS entry points refuse such calls at C's position and write nothing, and accept operands
 * that lie in one buffer without sharing an element (blocks of one matrix, interleaved
 * batches).  The exactness of the check is held against a brute-force comparison of the
 * element sets on random strided layouts, and batches of any count whose operands share one
 * leading dimension are decided, never refused as undecided.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "tilegemm.h"
#include "tilegemm_cblas.h"
#include "testing.h"

static int xerbla_info;
void xerbla_(const char *srname, const int *info, size_t len)
{
    (void)srname, (void)len;
    xerbla_info = *info;
}

enum { N = 8 };

static void fill(float *x, int count, unsigned seed)
{
    for (int i = 0; i < count; ++i)
        x[i] = (float)((seed + 7u * (unsigned)i) % 9u) - 4.0f;
}

/* The probe: C = A, and C = B, in both layouts; C (here A or B) must stay untouched. */
static void test_whole_alias(tg_handle *h)
{
    float A[N * N], B[N * N], keep[N * N];
    for (int layout = TG_ROW_MAJOR; layout <= TG_COL_MAJOR; ++layout) {
        for (int which = 0; which < 2; ++which) {
            fill(A, N * N, 1), fill(B, N * N, 2);
            float *C = which ? B : A;
            memcpy(keep, C, sizeof keep);
            tg_status s = tg_sgemm(h, (tg_layout)layout, TG_NO_TRANS, TG_NO_TRANS, N, N, N, 1.0f,
                                   A, N, B, N, 0.0f, C, N);
            EXPECT(s == TG_ERROR_INVALID_ARGUMENT, "status %d (%s)", s, tg_last_error(h));
            EXPECT(tg_last_error_arg(h) == 13, "position %d", tg_last_error_arg(h));
            EXPECT(strstr(tg_last_error(h), which ? "C overlaps B" : "C overlaps A"),
                   "message \"%s\"", tg_last_error(h));
            EXPECT(memcmp(keep, C, sizeof keep) == 0, "C was written after the error");
        }
    }
    /* One shared element is enough: C's last element is A's first. */
    float X[2 * N * N];
    fill(X, 2 * N * N, 3);
    tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, N, N, N, 1.0f,
                           X + N * N - 1, N, B, N, 0.0f, X, N);
    EXPECT(s == TG_ERROR_INVALID_ARGUMENT, "one shared element: status %d", s);
    /* alpha = 0 reads neither A nor B, so they may be anything, C included. */
    s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, N, N, N, 0.0f, A, N, B, N, 2.0f, A,
                 N);
    EXPECT(s == TG_SUCCESS, "alpha = 0 with C = A: status %d (%s)", s, tg_last_error(h));
}

/* Blocks of one 2N x 2N row-major matrix X: C = X12 = X11 * X22 shares no element with
 * either, though all three spans meet; the result must equal the product of copies. */
static void test_blocks_of_one_matrix(tg_handle *h)
{
    float X[4 * N * N], A[N * N], B[N * N], C[N * N];
    fill(X, 4 * N * N, 4);
    for (int i = 0; i < N; ++i) {
        memcpy(A + i * N, X + i * 2 * N, N * sizeof(float));
        memcpy(B + i * N, X + (N + i) * 2 * N + N, N * sizeof(float));
    }
    tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, N, N, N, 1.0f, A, N, B, N,
                           0.0f, C, N);
    EXPECT(s == TG_SUCCESS, "copies: status %d", s);
    s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, N, N, N, 1.0f, X, 2 * N,
                 X + N * 2 * N + N, 2 * N, 0.0f, X + N, 2 * N);
    EXPECT(s == TG_SUCCESS, "blocks of one matrix: status %d (%s)", s, tg_last_error(h));
    for (int i = 0; i < N; ++i)
        EXPECT(memcmp(X + i * 2 * N + N, C + i * N, N * sizeof(float)) == 0,
               "row %d of the block product differs from the product of copies", i);
}

/* A as the even elements of a buffer (lda = 2), C as odd ones (ldc = 2 or 4), m lines of one
 * element each: the spans meet on every line, no element is shared.  One ld is settled at
 * once whatever m; two lds are compared line by line up to 4M lines, and refused past that as
 * undecided (said so in the message). */
static void interleaved(tg_handle *h, int64_t m, int64_t ldc, int accepted)
{
    float *X = malloc(sizeof(float) * (size_t)(ldc * m)), b = 3.0f;
    if (!X) {
        EXPECT(X, "out of memory");
        return;
    }
    for (int64_t i = 0; i < ldc * m; ++i)
        X[i] = i % 2 ? -1.0f : (float)(i % 100);
    const tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, m, 1, 1, 1.0f, X, 2,
                                 &b, 1, 0.0f, X + 1, ldc);
    if (accepted) {
        EXPECT(s == TG_SUCCESS, "interleaved, m = %lld, ldc = %lld: status %d (%s)",
               (long long)m, (long long)ldc, s, tg_last_error(h));
        int64_t wrong = 0;
        for (int64_t i = 0; s == TG_SUCCESS && i < m; ++i)
            wrong += X[1 + i * ldc] != 3.0f * (float)((2 * i) % 100);
        EXPECT(!wrong, "interleaved, m = %lld, ldc = %lld: %lld wrong elements", (long long)m,
               (long long)ldc, (long long)wrong);
    } else {
        EXPECT(s == TG_ERROR_INVALID_ARGUMENT && strstr(tg_last_error(h), "interleaved"),
               "interleaved past the budget, m = %lld, ldc = %lld: status %d (%s)", (long long)m,
               (long long)ldc, s, tg_last_error(h));
    }
    free(X);
}

static void test_interleaved(tg_handle *h)
{
    interleaved(h, (1 << 22) + 1, 2, 1);
    interleaved(h, 1 << 20, 4, 1);
    interleaved(h, (1 << 22) + 1, 4, 0);
}

/* The BLAS entry points report aliasing at C's position through xerbla_ and write nothing. */
static void test_blas(void)
{
    float A[N * N], B[N * N], keep[N * N];
    fill(A, N * N, 5), fill(B, N * N, 6);
    memcpy(keep, A, sizeof keep);
    const int n = N;
    const float one = 1.0f, zero = 0.0f;
    xerbla_info = 0;
    sgemm_("N", "N", &n, &n, &n, &one, A, &n, B, &n, &zero, A, &n, 1, 1);
    EXPECT(xerbla_info == 12, "sgemm_ with C = A: xerbla_ got %d, wanted 12", xerbla_info);
    EXPECT(memcmp(keep, A, sizeof keep) == 0, "sgemm_ wrote C after the error");
    xerbla_info = 0;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, A, N, B, N, 0.0f, B,
                N);
    EXPECT(xerbla_info == 12, "cblas_sgemm with C = B: xerbla_ got %d, wanted 12", xerbla_info);
}

/* Random strided batches inside one buffer: the call is refused as aliasing exactly when the
 * element sets of C and A (or B) meet. */
static unsigned next(unsigned *state) { return *state = *state * 1103515245u + 12345u, *state >> 16; }

static void mark(unsigned char *seen, int64_t base, int64_t lines, int64_t length, int64_t ld,
                 int64_t stride, int64_t items, unsigned char bit)
{
    for (int64_t t = 0; t < items; ++t)
        for (int64_t i = 0; i < lines; ++i)
            for (int64_t j = 0; j < length; ++j)
                seen[base + t * stride + i * ld + j] |= bit;
}

static void test_random_batches(tg_handle *h, int one_ld)
{
    enum { SIZE = 4096, CASES = 4000 };
    static float X[SIZE];
    static unsigned char seen[SIZE];
    unsigned state = 20261125u;
    int refused = 0, accepted = 0;
    for (int c = 0; c < CASES; ++c) {
        const int64_t m = 1 + next(&state) % 4, n = 1 + next(&state) % 4, k = 1 + next(&state) % 4;
        const int64_t batch = 1 + next(&state) % (one_ld ? 12 : 4);
        const tg_op ta = next(&state) % 2 ? TG_TRANS : TG_NO_TRANS;
        const tg_op tb = next(&state) % 2 ? TG_TRANS : TG_NO_TRANS;
        /* row-major: op(A) m x k stored as m lines of k (or k of m transposed), and so on */
        const int64_t a_lines = ta == TG_NO_TRANS ? m : k, a_len = ta == TG_NO_TRANS ? k : m;
        const int64_t b_lines = tb == TG_NO_TRANS ? k : n, b_len = tb == TG_NO_TRANS ? n : k;
        int64_t lda = a_len + next(&state) % 4, ldb = b_len + next(&state) % 4;
        int64_t ldc = n + next(&state) % 4;
        if (one_ld) { /* one ld for all three: decided in arithmetic, not line by line */
            const int64_t ab = a_len > b_len ? a_len : b_len;
            lda = ldb = ldc = (ab > n ? ab : n) + next(&state) % 4;
        }
        const int64_t c_span = (m - 1) * ldc + n;
        int64_t stride_a = next(&state) % 40, stride_b = next(&state) % 40;
        const int64_t stride_c = c_span + next(&state) % 8;
        if (one_ld && next(&state) % 3 == 0) /* equal strides: items that interleave in step */
            stride_a = stride_c;
        if (one_ld && next(&state) % 3 == 0)
            stride_b = stride_c;
        const int64_t off_a = next(&state) % 120, off_b = next(&state) % 120;
        const int64_t off_c = next(&state) % 120;
        memset(seen, 0, sizeof seen);
        mark(seen, off_a, a_lines, a_len, lda, stride_a, batch, 1);
        mark(seen, off_b, b_lines, b_len, ldb, stride_b, batch, 2);
        mark(seen, off_c, m, n, ldc, stride_c, batch, 4);
        int shared = 0;
        for (int i = 0; i < SIZE; ++i)
            shared |= (seen[i] & 4) && (seen[i] & 3);
        fill(X, SIZE, (unsigned)c);
        const tg_status s = tg_sgemm_strided_batched(
            h, TG_ROW_MAJOR, ta, tb, m, n, k, 1.0f, X + off_a, lda, stride_a, X + off_b, ldb,
            stride_b, 0.0f, X + off_c, ldc, stride_c, batch);
        const int said_shared = s == TG_ERROR_INVALID_ARGUMENT && tg_last_error_arg(h) == 15;
        EXPECT(said_shared == shared && (s == TG_SUCCESS || said_shared),
               "case %d: m %lld n %lld k %lld batch %lld lda %lld ldb %lld ldc %lld strides %lld "
               "%lld %lld offsets %lld %lld %lld: status %d (%s), elements shared: %d",
               c, (long long)m, (long long)n, (long long)k, (long long)batch, (long long)lda,
               (long long)ldb, (long long)ldc, (long long)stride_a, (long long)stride_b,
               (long long)stride_c, (long long)off_a, (long long)off_b, (long long)off_c, s,
               tg_last_error(h), shared);
        refused += said_shared, accepted += s == TG_SUCCESS;
    }
    EXPECT(refused > CASES / 10 && accepted > CASES / 10, "refused %d, accepted %d of %d",
           refused, accepted, CASES);
    printf("random batches%s: %d refused as aliasing, %d accepted\n", one_ld ? " (one ld)" : "",
           refused, accepted);
}


/* Batches whose items interleave under one leading dimension are decided whatever their
 * count: items of 2 x 1, ld 2, 4 elements apart, A's in a buffer's odd elements and C's in its
 * even ones, so that every item of A lies across one of C.  2^22 + 2 of each (past the budget
 * of a line-by-line walk), run and checked. */
static void test_one_ld_batches(tg_handle *h)
{
    const int64_t batch = ((int64_t)1 << 22) + 2;
    float *X = malloc(sizeof(float) * (size_t)(4 * batch)), b = 3.0f;
    if (!X) {
        EXPECT(X, "out of memory");
        return;
    }
    for (int64_t i = 0; i < 4 * batch; ++i)
        X[i] = i % 2 ? (float)(i % 100) : -1.0f;
    const tg_status s = tg_sgemm_strided_batched(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 2, 1,
                                                 1, 1.0f, X + 1, 2, 4, &b, 1, 0, 0.0f, X, 2, 4,
                                                 batch);
    EXPECT(s == TG_SUCCESS, "A and C interleaved element by element, batch %lld: status %d (%s)",
           (long long)batch, s, tg_last_error(h));
    int64_t wrong = 0;
    for (int64_t i = 0; s == TG_SUCCESS && i < 2 * batch; ++i)
        wrong += X[2 * i] != 3.0f * (float)((2 * i + 1) % 100);
    EXPECT(!wrong, "interleaved batch: %lld wrong elements", (long long)wrong);
    free(X);
}

/* The validator's verdict on a batched call; pointers into a small buffer stand for operands
 * far larger, which only the validator sees (nothing is read). */
static tg_status verdict(tg_call call, tg_error *err)
{
    tg_status s = tg_validate(&call, err);
    return s == TG_SUCCESS ? tg_check_aliasing(&call, err) : s;
}

static void expect_verdict(tg_call call, int shares, const char *what)
{
    tg_error err;
    const tg_status s = verdict(call, &err);
    if (shares)
        EXPECT(s == TG_ERROR_INVALID_ARGUMENT && strstr(err.message, "share elements"),
               "%s: status %d (%s), wanted \"share elements\"", what, s, err.message);
    else
        EXPECT(s == TG_SUCCESS, "%s: status %d (%s)", what, s, err.message);
}

static void test_huge_one_ld_batches(void)
{
    static float X[64], B[1];
    const int64_t huge = (int64_t)1 << 40;
    alarm(60); /* an item-by-item walk of 2^40 items would never end */
    /* 1 x 1 items, ld 1: C in the even elements. */
    tg_call c = {.layout = TG_ROW_MAJOR, .transa = TG_NO_TRANS, .transb = TG_NO_TRANS, .m = 1,
                 .n = 1, .k = 1, .alpha = 1.0f, .beta = 0.0f, .A = X + 1, .lda = 1,
                 .stride_a = 2, .B = B, .ldb = 1, .stride_b = 0, .C = X, .ldc = 1,
                 .stride_c = 2, .batch = huge, .batched = 1};
    expect_verdict(c, 0, "A odd, C even, 2^40 items");
    c.m = 2, c.lda = c.ldc = 2, c.stride_a = c.stride_c = 4;
    expect_verdict(c, 0, "items of 2 x 1 across each other, 2^40 items");
    c.m = 1, c.lda = c.ldc = 1, c.stride_a = c.stride_c = 2;
    c.A = X + 2;
    expect_verdict(c, 1, "A even from the second, C even");
    c.A = X + 2, c.stride_a = c.stride_c = 4;
    expect_verdict(c, 0, "stride 4, A two after C: item spans never meet");
    c.A = X + 1, c.stride_a = 4, c.stride_c = 2;
    expect_verdict(c, 0, "A every fourth from 1, C even: different strides");
    c.A = X + 8, c.stride_a = 6;
    expect_verdict(c, 1, "A every sixth from 8, C even");
    c.A = X + 3, c.stride_a = 6, c.stride_c = 4;
    expect_verdict(c, 0, "A every sixth from 3 (odd), C every fourth");
    c.A = X + 2, c.stride_a = 6, c.stride_c = 4;
    expect_verdict(c, 1, "A every sixth from 2 meets C every fourth at 14");
    /* Single rows, whose ld may be anything: INT64_MAX must not overflow the arithmetic. */
    static float B4[4];
    c.m = 1, c.n = c.k = 2, c.lda = c.ldc = INT64_MAX, c.B = B4, c.ldb = 2, c.stride_b = 0;
    c.A = X + 2, c.stride_a = c.stride_c = 4;
    expect_verdict(c, 0, "rows of 2 every 4, ld INT64_MAX, A two after C");
    c.A = X + 1;
    expect_verdict(c, 1, "rows of 2 every 4, ld INT64_MAX, A one after C");
    c.A = X + 3, c.stride_a = 0;
    expect_verdict(c, 1, "one row of A across C's first two items, ld INT64_MAX");
    /* Rows of 2 in an ld of 4, items every 3 rows: A's and B's in columns 0-1, C's in 2-3. */
    tg_call r = {.layout = TG_ROW_MAJOR, .transa = TG_NO_TRANS, .transb = TG_NO_TRANS, .m = 3,
                 .n = 2, .k = 2, .alpha = 1.0f, .beta = 0.0f, .A = X, .lda = 4,
                 .stride_a = 12, .B = X, .ldb = 4, .stride_b = 12, .C = X + 2, .ldc = 4,
                 .stride_c = 12, .batch = huge, .batched = 1};
    expect_verdict(r, 0, "row blocks side by side, 2^40 items of each");
    r.C = X + 1;
    expect_verdict(r, 1, "C's first column over A's second");
    r.C = X + 2, r.stride_c = 13;
    expect_verdict(r, 1, "C's items drift a column each into A's");
    r.stride_c = 16;
    expect_verdict(r, 0, "C's items every 4 rows stay in columns 2-3");
    alarm(0);
}

int main(void)
{
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS) {
        fprintf(stderr, "tg_create failed\n");
        return 1;
    }
    tg_set_backend(h, TG_BACKEND_CPU);
    test_whole_alias(h);
    test_blocks_of_one_matrix(h);
    test_interleaved(h);
    test_blas();
    test_random_batches(h, 0);
    test_random_batches(h, 1);
    test_one_ld_batches(h);
    test_huge_one_ld_batches();
    tg_destroy(h);
    return tg_test_result("test_aliasing");
}
