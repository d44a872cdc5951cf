/*
 * Split-K's decomposition, checked on the CPU: the slices it makes, run by the reference and
 * summed, must give the product; and the slice count follows its rules.  The GPU runs the
 * same slices through a rung (test_gpu_rungs covers that where a GPU exists).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "internal.h"
#include "plan/split_k.h"
#include "testing.h"

static float random_float(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((*state >> 40) & 0xffff) / 32768.0f - 1.0f;
}

static void check_split(tg_layout layout, tg_op ta, tg_op tb, int64_t m, int64_t n, int64_t k,
                        int slices, float alpha, float beta, uint64_t seed)
{
    const int64_t pad = 3;
    const int row = layout == TG_ROW_MAJOR;
    const int64_t lda = tg_min_ld(layout, ta, m, k) + pad;
    const int64_t ldb = tg_min_ld(layout, tb, k, n) + pad;
    const int64_t ldc = tg_min_ld(layout, TG_NO_TRANS, m, n) + pad;
    const int64_t a_lines = (row != (ta == TG_TRANS)) ? m : k;
    const int64_t b_lines = (row != (tb == TG_TRANS)) ? k : n;
    const int64_t c_lines = row ? m : n;
    float *A = malloc(sizeof(float) * (size_t)(a_lines * lda));
    float *B = malloc(sizeof(float) * (size_t)(b_lines * ldb));
    float *C = malloc(sizeof(float) * (size_t)(c_lines * ldc));
    float *C_in = malloc(sizeof(float) * (size_t)(c_lines * ldc));
    double *ref = malloc(sizeof(double) * (size_t)(m * n));
    double *bound = malloc(sizeof(double) * (size_t)(m * n));
    for (int64_t i = 0; i < a_lines * lda; ++i)
        A[i] = random_float(&seed);
    for (int64_t i = 0; i < b_lines * ldb; ++i)
        B[i] = random_float(&seed);
    for (int64_t i = 0; i < c_lines * ldc; ++i)
        C[i] = C_in[i] = random_float(&seed);

    const tg_call call = {.layout = layout, .transa = ta, .transb = tb, .m = m, .n = n, .k = k,
                          .alpha = alpha, .beta = beta, .A = A, .lda = lda, .B = B, .ldb = ldb,
                          .C = C, .ldc = ldc, .batch = 1};
    tg_problem p;
    tg_normalize(&call, &p);
    float *workspace = malloc(sizeof(float) * (size_t)tg_split_k_workspace(&p, slices));
    tg_split_k split;
    tg_split_k_make(&p, slices, workspace, &split);
    EXPECT(split.slice_k % TG_SPLIT_K_ALIGN == 0 && split.full.batch >= 1 &&
               split.full.batch * split.slice_k + split.tail.k == k,
           "slices of %lld: %lld x %lld + %lld", (long long)k, (long long)split.full.batch,
           (long long)split.slice_k, (long long)split.tail.k);
    /* The tail runs after the batch, alone: it must be short, not most of a slice. */
    EXPECT(split.full.batch >= slices && split.tail.k < (int64_t)TG_SPLIT_K_ALIGN * slices,
           "%lld in %d slices: %lld x %lld, then a tail of %lld run after them", (long long)k,
           slices, (long long)split.full.batch, (long long)split.slice_k,
           (long long)split.tail.k);
    /* A short tail is summed by the reduction, a long one runs on its own into a partial. */
    const int folds = split.tail.k > 0 && (split.tail.k <= TG_SPLIT_K_FOLD_TERMS ||
                                           (double)m * n * split.tail.k <= TG_SPLIT_K_FOLD_MOST);
    EXPECT(split.tail_folded == folds &&
               split.partials == split.full.batch + (split.tail.k > 0 && !folds) &&
               tg_split_k_workspace(&p, slices) == split.partials * m * n,
           "%lldx%lldx%lld in %d slices: tail of %lld %s, %lld partials", (long long)m,
           (long long)n, (long long)k, slices, (long long)split.tail.k,
           split.tail_folded ? "folded" : "launched", (long long)split.partials);
    tg_ref_sgemm(&split.full);
    if (split.tail.k > 0 && !split.tail_folded)
        tg_ref_sgemm(&split.tail);
    /* The reduction, as split_k_reduce.cuh orders it: lane y sums the partials y, y + 8,
     * ..., then a folded tail's terms y, y + 8, ...; the lanes' sums are added in order. */
    const tg_problem *t = &split.tail;
    for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
            float lanes[8] = {0};
            for (int64_t s = 0; s < split.partials; ++s)
                lanes[s % 8] += workspace[s * p.m * p.n + i * p.n + j];
            for (int64_t q = 0; split.tail_folded && q < t->k; ++q)
                lanes[q % 8] = fmaf(t->A[i * t->a_rs + q * t->a_cs],
                                    t->B[q * t->b_rs + j * t->b_cs], lanes[q % 8]);
            float sum = lanes[0];
            for (int y = 1; y < 8; ++y)
                sum += lanes[y];
            float *c = &p.C[i * p.ldc + j];
            *c = beta == 0.0f ? alpha * sum : alpha * sum + beta * *c;
        }
    p.C = C_in;
    tg_ref_gemm_f64(&p, C_in, ref, bound);
    p.C = C;
    const double err = tg_scaled_error(&p, C, ref, bound);
    EXPECT(err <= 1.0, "%s %c%c %lldx%lldx%lld in %d slices: scaled error %g",
           row ? "row" : "col", ta == TG_TRANS ? 'T' : 'N', tb == TG_TRANS ? 'T' : 'N',
           (long long)m, (long long)n, (long long)k, slices, err);
    free(A), free(B), free(C), free(C_in), free(ref), free(bound), free(workspace);
}

/* tg_split_k_counts: 1, then each count up to 8, then the powers of two, up to the most the
 * rung allows; arguments checked. */
static void check_counts(void)
{
    const char *algo = NULL; /* a rung of this build (the CPU-only build has none) */
    for (const char *const *name = tg_algos(); *name && !algo; ++name)
        if (!strcmp(*name, "ffma128x128"))
            algo = *name;
    const int64_t ks[] = {64, 700, 1500, 5000, 40000, 1 << 20};
    for (int i = 0; algo && i < 6; ++i) {
        int most = 0, counts[32], n = 0;
        EXPECT(tg_split_k_most(algo, 300, 200, ks[i], &most) == TG_SUCCESS, "most");
        EXPECT(tg_split_k_counts(algo, 300, 200, ks[i], counts, 32, &n) == TG_SUCCESS,
               "counts: %s", tg_last_error(NULL));
        int want = 1, j = 0;
        for (; want <= most; want = want < 8 ? want + 1 : want * 2, ++j)
            EXPECT(j < n && counts[j] == want, "k %lld: count %d is %d, not %d", (long long)ks[i],
                   j, j < n ? counts[j] : -1, want);
        EXPECT(n == j, "k %lld: %d counts, not %d (most %d)", (long long)ks[i], n, j, most);
        if (most >= 3) {
            EXPECT(tg_split_k_counts(algo, 300, 200, ks[i], counts, 2, &n) == TG_SUCCESS &&
                       n == 2 && counts[1] == 2,
                   "k %lld: room for 2 holds the first 2", (long long)ks[i]);
        }
    }
    int counts[4], n = 0;
    EXPECT(tg_split_k_counts("no-such-rung", 8, 8, 8, counts, 4, &n) ==
               TG_ERROR_INVALID_ARGUMENT, "an unknown rung");
    EXPECT(tg_split_k_counts(algo, 8, 8, 8, NULL, 4, &n) == TG_ERROR_INVALID_ARGUMENT,
           "NULL counts");
    EXPECT(tg_split_k_counts(algo, 8, 8, 8, counts, 0, &n) == TG_ERROR_INVALID_ARGUMENT,
           "room for none");
    EXPECT(tg_split_k_counts(algo, 0, 8, 8, counts, 4, &n) == TG_ERROR_INVALID_ARGUMENT,
           "m = 0");
}

int main(void)
{
    check_counts();
    const tg_op ops[] = {TG_NO_TRANS, TG_TRANS};
    uint64_t seed = 42;
    for (int l = 0; l < 2; ++l)
        for (int o = 0; o < 4; ++o) {
            const tg_layout layout = l ? TG_COL_MAJOR : TG_ROW_MAJOR;
            check_split(layout, ops[o >> 1], ops[o & 1], 7, 33, 1023, 3, 1.5f, 0.0f, seed++);
            check_split(layout, ops[o >> 1], ops[o & 1], 33, 5, 512, 2, 1.0f, -0.5f, seed++);
            check_split(layout, ops[o >> 1], ops[o & 1], 17, 19, 4097, 16, -1.0f, 1.0f, seed++);
        }
    /* a tail of 31 under 600 x 600 outputs: too many terms to fold, it runs on its own */
    check_split(TG_COL_MAJOR, TG_TRANS, TG_NO_TRANS, 600, 600, 831, 8, 1.0f, 0.5f, seed++);
    /* a tail of 7 under 800 x 760 outputs (4.3 million terms): folded, at most 8 an output */
    check_split(TG_ROW_MAJOR, TG_NO_TRANS, TG_TRANS, 800, 760, 87, 2, 1.0f, 0.0f, seed++);
    return tg_test_result("test_split_k");
}
