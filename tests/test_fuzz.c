/*
 * Deterministic random-argument test of every entry point: tg_sgemm, tg_sgemm_strided_batched,
 * tg_explain, sgemm_ and cblas_sgemm.
 *
 * Each call starts from random legal arguments (both layouts, all transposes, m, n, k in 0..9,
 * leading dimensions with padding, strides with gaps or 0 for shared A and B, batch 0..4,
 * alpha and beta among 0, 1, -1 and random values); about a third then get exactly one argument
 * made illegal (every argument that can be: enums, negative sizes, small and huge leading
 * dimensions, negative and overlapping strides, NULL operands, spans past int64).
 *   valid calls:   status success; C against a float64 product indexed straight from (layout,
 *                  transpose, ld); everything around C (guards, ld padding, gaps between
 *                  items) and all of A and B bit for bit unchanged;
 *   invalid calls: status TG_ERROR_INVALID_ARGUMENT, the argument's position (tg_last_error_arg;
 *                  for the BLAS shims the INFO their error handlers receive), a non-empty
 *                  message, and C with its guards untouched.
 * C sits between guard zones of NaN with a payload no computation makes.
 *
 *   test_fuzz [--calls N] [--seed S]     (defaults 100000 and 1; TG_FUZZ_CALLS also sets N)
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "tilegemm.h"
#include "tilegemm_cblas.h"

enum { kGuard = 64, kSpace = 4096 };
static const uint32_t kGuardBits = 0x7fc0dead;

static uint64_t g_state;

static uint64_t next(void) /* splitmix64 */
{
    uint64_t z = (g_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t below(int64_t n) { return (int64_t)(next() % (uint64_t)n); }

static float random_value(void) { return (float)below(2001) / 1000.0f - 1.0f; }

/* --- The BLAS error handlers: recorded, not fatal (the library's are weak). ------------------- */

static int g_xerbla_info, g_cblas_info, g_handler_calls;

void xerbla_(const char *srname, const int *info, size_t len)
{
    (void)srname, (void)len;
    g_xerbla_info = *info;
    ++g_handler_calls;
}

void cblas_xerbla(int info, const char *rout, const char *form, ...)
{
    (void)rout, (void)form;
    g_cblas_info = info;
    ++g_handler_calls;
}

/* --- One call -------------------------------------------------------------------------------- */

enum entry { TG_SGEMM, TG_BATCHED, TG_EXPLAIN, F77_SGEMM, CBLAS_SGEMM, ENTRY_COUNT };
static const char *const kEntryNames[] = {"tg_sgemm", "tg_sgemm_strided_batched", "tg_explain",
                                          "sgemm_", "cblas_sgemm"};

typedef struct args {
    int layout, transa, transb;
    int64_t m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c, batch;
    float alpha, beta;
    int null_a, null_b, null_c;
} args;

static int rows_along(int layout, int op) { return (layout == TG_ROW_MAJOR) != (op == TG_TRANS); }

static int64_t min_ld(int layout, int op, int64_t rows, int64_t cols)
{
    const int64_t need = rows_along(layout, op) ? cols : rows;
    return need > 1 ? need : 1;
}

/* Elements one item of op(X) (rows x cols) spans with this ld. */
static int64_t item_span(int layout, int op, int64_t rows, int64_t cols, int64_t ld)
{
    if (rows == 0 || cols == 0)
        return 0;
    const int along = rows_along(layout, op);
    const int64_t lines = along ? rows : cols, length = along ? cols : rows;
    return (lines - 1) * ld + length;
}

static args random_legal(int entry)
{
    args a;
    memset(&a, 0, sizeof a);
    a.layout = entry == F77_SGEMM || below(2) ? TG_COL_MAJOR : TG_ROW_MAJOR;
    a.transa = below(2) ? TG_TRANS : TG_NO_TRANS;
    a.transb = below(2) ? TG_TRANS : TG_NO_TRANS;
    a.m = below(10), a.n = below(10), a.k = below(10);
    a.lda = min_ld(a.layout, a.transa, a.m, a.k) + (below(3) ? 0 : below(4));
    a.ldb = min_ld(a.layout, a.transb, a.k, a.n) + (below(3) ? 0 : below(4));
    a.ldc = min_ld(a.layout, TG_NO_TRANS, a.m, a.n) + (below(3) ? 0 : below(4));
    a.batch = entry == TG_BATCHED ? below(5) : 1;
    const int64_t span_a = item_span(a.layout, a.transa, a.m, a.k, a.lda);
    const int64_t span_b = item_span(a.layout, a.transb, a.k, a.n, a.ldb);
    const int64_t span_c = item_span(a.layout, TG_NO_TRANS, a.m, a.n, a.ldc);
    a.stride_a = below(4) ? span_a + below(3) : 0;
    a.stride_b = below(4) ? span_b + below(3) : 0;
    a.stride_c = span_c + below(3);
    const float scalars[] = {0.0f, 1.0f, -1.0f, 0.5f};
    a.alpha = below(3) ? random_value() * 2.0f : scalars[below(4)];
    a.beta = below(3) ? random_value() * 2.0f : scalars[below(4)];
    return a;
}

static int quick(const args *a)
{
    return a->m == 0 || a->n == 0 || a->batch == 0 ||
           ((a->alpha == 0.0f || a->k == 0) && a->beta == 1.0f);
}

/* Makes the product read A, B and C, so that a NULL one is an error. */
static void make_full(args *a, int entry)
{
    if (a->m == 0) a->m = 3;
    if (a->n == 0) a->n = 2;
    if (a->k == 0) a->k = 4;
    if (a->batch == 0) a->batch = entry == TG_BATCHED ? 2 : 1;
    a->alpha = 1.5f, a->beta = 0.5f;
    a->lda = min_ld(a->layout, a->transa, a->m, a->k);
    a->ldb = min_ld(a->layout, a->transb, a->k, a->n);
    a->ldc = min_ld(a->layout, TG_NO_TRANS, a->m, a->n);
    a->stride_a = item_span(a->layout, a->transa, a->m, a->k, a->lda);
    a->stride_b = item_span(a->layout, a->transb, a->k, a->n, a->ldb);
    a->stride_c = item_span(a->layout, TG_NO_TRANS, a->m, a->n, a->ldc);
}

/* Positions in tg_sgemm's (CBLAS) numbering and in the batched call's. */
enum { P_LAYOUT = 1, P_TRANSA, P_TRANSB, P_M, P_N, P_K, P_ALPHA, P_A, P_LDA, P_B, P_LDB, P_BETA,
       P_C, P_LDC, P_STRIDE_A, P_STRIDE_B, P_STRIDE_C, P_BATCH };

static int batched_position(int p)
{
    static const int map[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 14, 15, 16, 10, 13, 17, 18};
    return map[p];
}

/* Breaks exactly one argument; returns its position (tg numbering), or 0 if none applies. */
static int break_one(args *a, int entry)
{
    const int batched = entry == TG_BATCHED;
    for (int tries = 0; tries < 8; ++tries) {
        const int p = 1 + (int)below(batched ? 18 : 14);
        switch (p) {
        case P_LAYOUT:
            if (entry == F77_SGEMM) continue;
            a->layout = below(2) ? 0 : 103 + (int)below(100);
            return p;
        case P_TRANSA: a->transa = below(2) ? 110 : 'x'; return p;
        case P_TRANSB: /* 113 is CblasConjTrans: legal for cblas_sgemm */
            a->transb = below(2) && entry != CBLAS_SGEMM ? 113 : -1;
            return p;
        case P_M: a->m = -1 - below(1000); return p;
        case P_N: a->n = below(2) ? -1 : INT32_MIN; return p;
        case P_K: a->k = -1 - below(3); return p;
        case P_A:
        case P_B:
        case P_C:
            if (entry == TG_EXPLAIN) continue; /* NULL stands for host memory there */
            make_full(a, entry);
            if (p == P_A) a->null_a = 1;
            if (p == P_B) a->null_b = 1;
            if (p == P_C) a->null_c = 1;
            return p;
        case P_LDA:
        case P_LDB:
        case P_LDC: {
            int64_t *ld = p == P_LDA ? &a->lda : p == P_LDB ? &a->ldb : &a->ldc;
            const int64_t need = p == P_LDA ? min_ld(a->layout, a->transa, a->m, a->k)
                               : p == P_LDB ? min_ld(a->layout, a->transb, a->k, a->n)
                                            : min_ld(a->layout, TG_NO_TRANS, a->m, a->n);
            if (below(4) == 0 && entry != F77_SGEMM && entry != CBLAS_SGEMM &&
                entry != TG_EXPLAIN && p != P_LDC) {
                /* legal but past int64 once multiplied out: needs the operand read, with at
                 * least two stored lines (rows of op(X) when they lie along memory) */
                if (rows_along(a->layout, p == P_LDA ? a->transa : a->transb)) {
                    if (p == P_LDA) a->m = 3; else a->k = 4;
                } else {
                    if (p == P_LDA) a->k = 4; else a->n = 3;
                }
                make_full(a, entry);
                a->stride_a = a->stride_b = 0;
                *ld = INT64_MAX / 2;
                return p;
            }
            *ld = need - 1 - below(3);
            return p;
        }
        case P_ALPHA:
        case P_BETA: continue;
        case P_STRIDE_A: a->stride_a = -1 - below(5); return p;
        case P_STRIDE_B: a->stride_b = INT64_MIN; return p;
        case P_STRIDE_C:
            if (below(2)) {
                a->stride_c = -3;
                return p;
            }
            /* overlapping items: m, n >= 2, two items one element apart */
            if (a->m < 2) a->m = 2;
            if (a->n < 2) a->n = 2;
            a->lda = min_ld(a->layout, a->transa, a->m, a->k);
            a->ldb = min_ld(a->layout, a->transb, a->k, a->n);
            a->ldc = min_ld(a->layout, TG_NO_TRANS, a->m, a->n);
            a->stride_a = item_span(a->layout, a->transa, a->m, a->k, a->lda);
            a->stride_b = item_span(a->layout, a->transb, a->k, a->n, a->ldb);
            a->batch = 2 + below(3);
            a->stride_c = 1;
            return p;
        case P_BATCH:
            if (below(2)) {
                a->batch = -1 - below(3);
                return p;
            }
            /* a span past int64: reported at the first operand it overflows, A */
            make_full(a, entry);
            a->batch = (int64_t)1 << 62;
            return P_STRIDE_A;
        }
    }
    return 0;
}

/* --- Buffers and the float64 check ------------------------------------------------------------ */

static float g_A[kSpace], g_B[kSpace], g_C[kSpace + 2 * kGuard], g_before[kSpace + 2 * kGuard];
static float g_A0[kSpace], g_B0[kSpace];

static int64_t offset_op(int layout, int op, int64_t ld, int64_t r, int64_t c)
{
    if (layout == TG_ROW_MAJOR)
        return op == TG_NO_TRANS ? r * ld + c : c * ld + r;
    return op == TG_NO_TRANS ? r + c * ld : c + r * ld;
}

static long long g_valid, g_invalid, g_checked_outputs;

static void check_valid(const char *entry, const args *a, uint64_t seed)
{
    float *C = g_C + kGuard;
    const int64_t items = a->batch;
    unsigned char inside[kSpace];
    memset(inside, 0, sizeof inside);
    const double unit = (double)(a->k + 2) * FLT_EPSILON;
    for (int64_t b = 0; b < items && !quick(a); ++b)
        for (int64_t i = 0; i < a->m; ++i)
            for (int64_t j = 0; j < a->n; ++j) {
                double sum = 0.0, mag = 0.0;
                if (a->alpha != 0.0f)
                    for (int64_t p = 0; p < a->k; ++p) {
                        const double prod =
                            (double)g_A0[b * a->stride_a +
                                         offset_op(a->layout, a->transa, a->lda, i, p)] *
                            (double)g_B0[b * a->stride_b +
                                         offset_op(a->layout, a->transb, a->ldb, p, j)];
                        sum += prod;
                        mag += fabs(prod);
                    }
                const int64_t at = b * a->stride_c + offset_op(a->layout, TG_NO_TRANS, a->ldc, i, j);
                double want = (double)a->alpha * sum;
                mag *= fabs((double)a->alpha);
                if (a->beta != 0.0f) {
                    want += (double)a->beta * (double)g_before[kGuard + at];
                    mag += fabs((double)a->beta * (double)g_before[kGuard + at]);
                }
                inside[at] = 1;
                ++g_checked_outputs;
                const double got = C[at];
                EXPECT(fabs(got - want) <= unit * fmax(mag, FLT_MIN),
                       "%s seed %llu: C(%lld, %lld) item %lld = %.9g, float64 %.9g", entry,
                       (unsigned long long)seed, (long long)i, (long long)j, (long long)b, got,
                       want);
            }
    for (int64_t e = -kGuard; e < kSpace + kGuard; ++e)
        if ((e < 0 || e >= kSpace || !inside[e]) &&
            memcmp(&g_C[kGuard + e], &g_before[kGuard + e], sizeof(float)) != 0) {
            EXPECT(0, "%s seed %llu: C[%lld] outside the product changed", entry,
                   (unsigned long long)seed, (long long)e);
            break;
        }
    EXPECT(memcmp(g_A, g_A0, sizeof g_A) == 0 && memcmp(g_B, g_B0, sizeof g_B) == 0,
           "%s seed %llu: A or B changed", entry, (unsigned long long)seed);
}

/* The INFO sgemm_'s handler receives for a bad argument at tg position p of a column-major
 * call, and cblas_sgemm's (Fortran INFO through xerbla_, or cblas_xerbla's own for the enums). */
static int fortran_info(int p) { return p - 1; }

static int cblas_row_major_info(int p)
{
    switch (p) { /* row-major runs as the swapped column-major call */
    case P_M: return 4;
    case P_N: return 3;
    case P_K: return 5;
    case P_A: return 9;
    case P_LDA: return 10;
    case P_B: return 7;
    case P_LDB: return 8;
    default: return p - 1;
    }
}

static tg_handle *g_handle;

static int one_call(uint64_t seed)
{
    g_state = seed * 0x2545f4914f6cdd1dull + 1;
    const int entry = (int)below(ENTRY_COUNT);
    args a = random_legal(entry);
    int bad = 0;
    if (below(3) == 0)
        bad = break_one(&a, entry);
    /* The BLAS shims take int sizes: keep the call representable. */
    if ((entry == F77_SGEMM || entry == CBLAS_SGEMM) &&
        (a.m < INT32_MIN || a.n < INT32_MIN || a.k < INT32_MIN || a.lda > INT32_MAX ||
         a.ldb > INT32_MAX || a.ldc > INT32_MAX))
        return 0;

    for (int e = 0; e < kSpace; ++e)
        g_A0[e] = g_A[e] = random_value(), g_B0[e] = g_B[e] = random_value();
    for (int e = 0; e < kSpace + 2 * kGuard; ++e) {
        if (e < kGuard || e >= kSpace + kGuard || below(8) == 0)
            memcpy(&g_before[e], &kGuardBits, sizeof(float));
        else
            g_before[e] = random_value();
    }
    /* Where beta reads C the m x n entries must be numbers; beta = 0 leaves some NaN in. */
    if (a.beta != 0.0f)
        for (int e = kGuard; e < kSpace + kGuard; ++e)
            if (isnan(g_before[e]))
                g_before[e] = 0.25f;
    memcpy(g_C, g_before, sizeof g_C);

    const float *A = a.null_a ? NULL : g_A, *B = a.null_b ? NULL : g_B;
    float *C = a.null_c ? NULL : g_C + kGuard;
    tg_status s = TG_SUCCESS;
    int position = 0;
    g_xerbla_info = g_cblas_info = g_handler_calls = 0;
    char plan[2048];
    switch (entry) {
    case TG_SGEMM:
        s = tg_sgemm(g_handle, (tg_layout)a.layout, (tg_op)a.transa, (tg_op)a.transb, a.m, a.n,
                     a.k, a.alpha, A, a.lda, B, a.ldb, a.beta, C, a.ldc);
        position = tg_last_error_arg(g_handle);
        break;
    case TG_BATCHED:
        s = tg_sgemm_strided_batched(g_handle, (tg_layout)a.layout, (tg_op)a.transa,
                                     (tg_op)a.transb, a.m, a.n, a.k, a.alpha, A, a.lda,
                                     a.stride_a, B, a.ldb, a.stride_b, a.beta, C, a.ldc,
                                     a.stride_c, a.batch);
        position = tg_last_error_arg(g_handle);
        break;
    case TG_EXPLAIN:
        s = tg_explain(g_handle, (tg_layout)a.layout, (tg_op)a.transa, (tg_op)a.transb, a.m, a.n,
                       a.k, A, a.lda, B, a.ldb, C, a.ldc, plan, sizeof plan);
        position = tg_last_error_arg(g_handle);
        EXPECT(s != TG_SUCCESS || plan[0] != '\0', "tg_explain seed %llu: empty plan",
               (unsigned long long)seed);
        break;
    case F77_SGEMM: {
        const char ta = a.transa == TG_TRANS ? 'T' : a.transa == TG_NO_TRANS ? 'N' : 'Q';
        const char tb = a.transb == TG_TRANS ? 't' : a.transb == TG_NO_TRANS ? 'n' : '?';
        const int m = (int)a.m, n = (int)a.n, k = (int)a.k, lda = (int)a.lda, ldb = (int)a.ldb,
                  ldc = (int)a.ldc;
        sgemm_(&ta, &tb, &m, &n, &k, &a.alpha, A, &lda, B, &ldb, &a.beta, C, &ldc, 1, 1);
        position = g_xerbla_info;
        break;
    }
    case CBLAS_SGEMM:
        cblas_sgemm((CBLAS_LAYOUT)a.layout, (CBLAS_TRANSPOSE)a.transa, (CBLAS_TRANSPOSE)a.transb,
                    (int)a.m, (int)a.n, (int)a.k, a.alpha, A, (int)a.lda, B, (int)a.ldb, a.beta,
                    C, (int)a.ldc);
        position = g_cblas_info ? g_cblas_info : g_xerbla_info;
        break;
    }

    if (!bad) {
        ++g_valid;
        const int blas = entry == F77_SGEMM || entry == CBLAS_SGEMM;
        EXPECT(blas ? g_handler_calls == 0 : s == TG_SUCCESS,
               "%s seed %llu: a legal call failed: status %d, position %d: %s",
               kEntryNames[entry], (unsigned long long)seed, s, position,
               tg_last_error(g_handle));
        if (entry != TG_EXPLAIN && (blas ? g_handler_calls == 0 : s == TG_SUCCESS))
            check_valid(kEntryNames[entry], &a, seed);
        return 1;
    }
    ++g_invalid;
    int want = entry == TG_BATCHED ? batched_position(bad) : bad;
    if (entry == F77_SGEMM)
        want = fortran_info(bad);
    if (entry == CBLAS_SGEMM) {
        if (bad <= P_TRANSB)
            want = bad; /* cblas_xerbla's own numbering */
        else
            want = a.layout == TG_ROW_MAJOR ? cblas_row_major_info(bad) : fortran_info(bad);
    }
    if (entry == F77_SGEMM || entry == CBLAS_SGEMM) {
        EXPECT(g_handler_calls == 1 && position == want,
               "%s seed %llu: bad argument %d: handler called %d times with %d, wanted %d",
               kEntryNames[entry], (unsigned long long)seed, bad, g_handler_calls, position, want);
    } else {
        EXPECT(s == TG_ERROR_INVALID_ARGUMENT && position == want &&
                   tg_last_error(g_handle)[0] != '\0',
               "%s seed %llu: bad argument %d: status %d, position %d (wanted %d): \"%s\"",
               kEntryNames[entry], (unsigned long long)seed, bad, s, position, want,
               tg_last_error(g_handle));
    }
    EXPECT(memcmp(g_C, g_before, sizeof g_C) == 0, "%s seed %llu: C or its guards written after "
           "an error", kEntryNames[entry], (unsigned long long)seed);
    EXPECT(memcmp(g_A, g_A0, sizeof g_A) == 0 && memcmp(g_B, g_B0, sizeof g_B) == 0,
           "%s seed %llu: A or B changed", kEntryNames[entry], (unsigned long long)seed);
    return 1;
}

int main(int argc, char **argv)
{
    long long calls = 100000;
    uint64_t seed = 1;
    const char *one = NULL;
    const char *env = getenv("TG_FUZZ_CALLS");
    if (env && *env)
        calls = atoll(env);
    for (int i = 1; i < argc; ++i) {
        if (tg_test_seed_arg(argc, argv, &i, 10, &seed))
            continue;
        if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--one") && i + 1 < argc)
            one = argv[++i];
        else
            return fprintf(stderr, "usage: test_fuzz [--calls N] [--seed S] [--one CALL_SEED]\n"),
                   2;
    }
    if (tg_create(&g_handle) != TG_SUCCESS)
        return fprintf(stderr, "tg_create: %s\n", tg_last_error(NULL)), 1;
    if (one) { /* rerun the one call a failure names by its seed */
        one_call(strtoull(one, NULL, 10));
        tg_destroy(g_handle);
        return tg_test_result("test_fuzz");
    }
    printf("test_fuzz --seed %llu --calls %lld (a failure names its call: rerun it with --one)\n",
           (unsigned long long)seed, calls);
    long long made = 0;
    for (uint64_t c = 0; made < calls && tg_test_failures < 20; ++c)
        made += one_call(seed * 1000003ull + c);
    tg_destroy(g_handle);
    printf("test_fuzz: %lld calls: %lld legal (%lld outputs checked against float64), %lld with "
           "one illegal argument\n",
           g_valid + g_invalid, g_valid, g_checked_outputs, g_invalid);
    return tg_test_result("test_fuzz");
}
