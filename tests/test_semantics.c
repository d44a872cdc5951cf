/*
 * BLAS semantics through the public API, on whatever backend `auto` picks for host memory
 * (and again with the CPU backend forced): quick returns, beta = 0 never reading C,
 * alpha = 0 never reading A or B, exact small-integer results, int64 leading dimensions,
 * batches, and the checked sweep of check.c.
 */
#include <math.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "rerun.h"
#include "cpu/cpu.h"
#include "internal.h"
#include "testing.h"
#include "tilegemm.h"

static float nan_value(void) { return nanf(""); }

static void fill(float *x, int count, float scale)
{
    for (int i = 0; i < count; ++i)
        x[i] = scale * (float)((i * 37 + 11) % 17 - 8) / 8.0f;
}

static void test_quick_returns(tg_handle *h)
{
    float A[16], B[16], C[16], before[16];
    fill(A, 16, 1.0f), fill(B, 16, 2.0f), fill(C, 16, 3.0f);
    memcpy(before, C, sizeof C);
    /* m = 0 or n = 0: nothing is read or written, even with NULL operands. */
    EXPECT(tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 0, 4, 4, 1.0f, NULL, 4, NULL, 4,
                    0.0f, NULL, 4) == TG_SUCCESS, "m = 0: %s", tg_last_error(h));
    EXPECT(tg_sgemm(h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 4, 0, 4, 1.0f, NULL, 4, NULL, 4,
                    0.0f, NULL, 4) == TG_SUCCESS, "n = 0: %s", tg_last_error(h));
    /* (alpha = 0 or k = 0) and beta = 1: C stays as it is, bit for bit, NaN in A or not. */
    A[3] = nan_value();
    EXPECT(tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 4, 4, 4, 0.0f, A, 4, B, 4, 1.0f, C,
                    4) == TG_SUCCESS && memcmp(C, before, sizeof C) == 0,
           "alpha = 0, beta = 1 must leave C alone");
    EXPECT(tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 4, 4, 0, 2.0f, A, 1, B, 4, 1.0f, C,
                    4) == TG_SUCCESS && memcmp(C, before, sizeof C) == 0,
           "k = 0, beta = 1 must leave C alone");
    /* k = 0, beta != 1: C = beta * C exactly. */
    EXPECT(tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 4, 4, 0, 2.0f, A, 1, B, 4, -2.0f,
                    C, 4) == TG_SUCCESS, "k = 0: %s", tg_last_error(h));
    for (int i = 0; i < 16; ++i)
        EXPECT(C[i] == -2.0f * before[i], "k = 0, beta = -2: C[%d] = %g, wanted %g", i, C[i],
               -2.0f * before[i]);
}

static void test_nan_isolation(tg_handle *h)
{
    float A[12], B[20], C[15], before[15];
    fill(A, 12, 1.0f), fill(B, 20, -1.5f);
    /* beta = 0 never reads C: NaN and Inf already there vanish. */
    for (int i = 0; i < 15; ++i)
        C[i] = i % 2 ? nan_value() : INFINITY;
    EXPECT(tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 3, 5, 4, 1.0f, A, 4, B, 5, 0.0f, C,
                    5) == TG_SUCCESS, "beta = 0: %s", tg_last_error(h));
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j) {
            double want = 0;
            for (int p = 0; p < 4; ++p)
                want += (double)A[i * 4 + p] * B[p * 5 + j];
            EXPECT(isfinite(C[i * 5 + j]) && fabs(C[i * 5 + j] - want) <= 1e-5 * (1 + fabs(want)),
                   "beta = 0: C[%d][%d] = %g, wanted %g", i, j, C[i * 5 + j], want);
        }
    /* alpha = 0 never reads A or B: NaN there does not reach C, which becomes beta * C. */
    fill(C, 15, 1.0f);
    memcpy(before, C, sizeof C);
    for (int i = 0; i < 12; ++i)
        A[i] = nan_value();
    B[7] = INFINITY;
    EXPECT(tg_sgemm(h, TG_COL_MAJOR, TG_TRANS, TG_NO_TRANS, 5, 3, 4, 0.0f, A, 4, B, 4, 0.5f, C,
                    5) == TG_SUCCESS, "alpha = 0: %s", tg_last_error(h));
    for (int i = 0; i < 15; ++i)
        EXPECT(C[i] == 0.5f * before[i], "alpha = 0: C[%d] = %g, wanted %g", i, C[i],
               0.5f * before[i]);
    /* alpha = 0 and beta = 0: zeros, NaN in C or not. */
    C[4] = nan_value();
    EXPECT(tg_sgemm(h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 5, 3, 4, 0.0f, A, 5, B, 4, 0.0f, C,
                    5) == TG_SUCCESS, "alpha = beta = 0: %s", tg_last_error(h));
    for (int i = 0; i < 15; ++i)
        EXPECT(C[i] == 0.0f && !signbit(C[i]), "alpha = beta = 0: C[%d] = %g", i, C[i]);
}

/* Leading dimensions past 2^31 elements: A is a sparse mapping whose pages are only touched
 * where the product reads, so the test needs no 8 GiB of memory. */
static void test_int64_leading_dimension(tg_handle *h)
{
    const int64_t lda = (1LL << 31) + 7;
    const size_t bytes = (size_t)(2 * lda + 8) * sizeof(float);
    float *A = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
    if (A == MAP_FAILED) {
        printf("int64 leading dimension: mmap of %zu bytes refused, case not run\n", bytes);
        return;
    }
    /* A is 2 x 2 column-major with lda = 2^31 + 7, so its second column starts past 2^31. */
    A[0] = 1.0f, A[1] = 2.0f, A[lda] = 3.0f, A[lda + 1] = 4.0f;
    const float B[4] = {1.0f, 10.0f, 100.0f, 1000.0f}; /* 2x2 column-major */
    float C[4] = {0};
    EXPECT(tg_sgemm(h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 2, 2, 2, 1.0f, A, lda, B, 2, 0.0f,
                    C, 2) == TG_SUCCESS, "lda = 2^31 + 7: %s", tg_last_error(h));
    /* C = A * B: column j of C = A * B(:, j). */
    const float want[4] = {1 + 30, 2 + 40, 100 + 3000, 200 + 4000};
    for (int i = 0; i < 4; ++i)
        EXPECT(C[i] == want[i], "lda = 2^31 + 7: C[%d] = %g, wanted %g", i, C[i], want[i]);
    munmap(A, bytes);
}

/* Batch items may interleave: item b's C is columns 2b..2b+1 of one 3 x 4 row-major matrix. */
static void test_interleaved_batch(tg_handle *h)
{
    float A[2 * 12], B[8], C[12];
    fill(A, 24, 1.0f), fill(B, 8, -0.5f);
    for (int i = 0; i < 12; ++i)
        C[i] = nan_value();
    EXPECT(tg_sgemm_strided_batched(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 3, 2, 4, 1.0f, A,
                                    4, 12, B, 2, 0, 0.0f, C, 4, 2, 2) == TG_SUCCESS,
           "interleaved batch: %s", tg_last_error(h));
    for (int b = 0; b < 2; ++b)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 2; ++j) {
                double want = 0;
                for (int p = 0; p < 4; ++p)
                    want += (double)A[b * 12 + i * 4 + p] * B[p * 2 + j];
                const float got = C[i * 4 + 2 * b + j];
                EXPECT(fabs(got - want) <= 1e-5 * (1 + fabs(want)),
                       "interleaved item %d: C[%d][%d] = %g, wanted %g", b, i, j, got, want);
            }
}

/* The checked sweep: random operands, poisoned C, untouched padding, float64 reference. */
static void test_checked_cases(tg_handle *h, const char *backend)
{
    const int64_t sizes[] = {1, 7, 33, 127};
    const tg_op ops[] = {TG_NO_TRANS, TG_TRANS};
    uint64_t seed = 1234;
    for (int l = 0; l < 2; ++l)
        for (int o = 0; o < 4; ++o)
            for (int s = 0; s < 4; ++s) {
                tg_case c = {.layout = l ? TG_COL_MAJOR : TG_ROW_MAJOR, .transa = ops[o >> 1],
                             .transb = ops[o & 1], .m = sizes[s], .n = sizes[(s + 1) % 4],
                             .k = sizes[(s + 2) % 4], .ld_pad = s % 2 ? 3 : 0,
                             .alpha = s == 3 ? -1.0f : 1.5f, .beta = s % 2 ? 0.0f : -0.5f,
                             .batch = o == 3 ? 3 : 1, .share_a = s == 1};
                tg_case_result r;
                tg_check_case(h, &c, seed++, &r);
                char name[200];
                tg_case_name(&c, name, sizeof name);
                EXPECT(r.passed, "%s %s: %s", backend, name, r.detail);
                c.small_ints = 1;
                c.alpha = 2.0f, c.beta = s % 2 ? 0.0f : 1.0f;
                tg_check_case(h, &c, seed++, &r);
                tg_case_name(&c, name, sizeof name);
                EXPECT(r.passed && r.scaled_error == 0.0, "%s %s (bit for bit): %s", backend,
                       name, r.detail);
            }
}

static int g_packing_allocations;

static int count_site(const char *site)
{
    g_packing_allocations += strcmp(site, "host: CPU packing buffers") == 0;
    return 0; /* counts, never fails */
}

/* The same checks on shapes above the CPU path's small-problem cut (32^3), so the blocked,
 * packed path runs (the allocation of its packing buffers proves it), with every data
 * distribution: wide range, cancellation, 12-bit integers (bit-exact on the CPU), Inf/NaN in
 * A, B and C with alpha != 0, subnormals, and results near FLT_MAX. */
static void test_checked_blocked(tg_handle *h, const char *backend)
{
    const struct {
        int64_t m, n, k;
    } shapes[] = {{130, 67, 129}, {200, 150, 300}, {33, 257, 65}};
    const tg_op ops[] = {TG_NO_TRANS, TG_TRANS};
    uint64_t seed = 4321;
    g_packing_allocations = 0;
    tg_fault_hook = count_site;
    for (int d = 0; d < TG_DIST_COUNT; ++d)
        for (int l = 0; l < 2; ++l)
            for (int o = 0; o < 4; ++o) {
                const int s = (d + o) % 3;
                tg_case c = {.layout = l ? TG_COL_MAJOR : TG_ROW_MAJOR, .transa = ops[o >> 1],
                             .transb = ops[o & 1], .m = shapes[s].m, .n = shapes[s].n,
                             .k = shapes[s].k, .ld_pad = o % 2 ? 2 : 0,
                             .alpha = o == 3 ? -2.0f : 1.0f, .beta = (l + o) % 2 ? 1.0f : 0.0f,
                             .batch = o == 2 ? 2 : 1, .distribution = (tg_distribution)d};
                tg_case_result r;
                const uint64_t this_seed = seed++;
                tg_check_case(h, &c, this_seed, &r);
                char name[240], command[500];
                tg_case_name(&c, name, sizeof name);
                tg_case_command(&c, "cpu", this_seed, command, sizeof command);
                EXPECT(r.passed, "%s %s: %s\n  rerun: %s", backend, name, r.detail, command);
                if (d == TG_DIST_INT12)
                    EXPECT(r.exact && r.scaled_error == 0.0, "%s %s: not bit-exact", backend,
                           name);
            }
    tg_fault_hook = NULL;
    EXPECT(g_packing_allocations > 0,
           "%s: the checked sweep never reached the CPU's blocked path", backend);
}

int main(void)
{
    const tg_backend backends[] = {TG_BACKEND_AUTO, TG_BACKEND_CPU};
    for (int b = 0; b < 2; ++b) {
        tg_handle *h;
        if (tg_create(&h) != TG_SUCCESS || tg_set_backend(h, backends[b]) != TG_SUCCESS)
            return fprintf(stderr, "setup: %s\n", tg_last_error(NULL)), 1;
        test_quick_returns(h);
        test_nan_isolation(h);
        test_int64_leading_dimension(h);
        test_interleaved_batch(h);
        test_checked_cases(h, b ? "cpu" : "auto");
        if (b == 1 || !tg_backend_available(TG_BACKEND_CUDA))
            test_checked_blocked(h, b ? "cpu" : "auto");
        tg_destroy(h);
    }
    return tg_test_result("test_semantics");
}
