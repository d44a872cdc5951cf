/*
 * A program written against the reference BLAS, to be run once linked with the reference
 * libblas alone and once with tilegemm in front of it (first on the link line, or
 * LD_PRELOAD=libtilegemm.so).  run_abi.sh compares the two transcripts: they must be identical.
 *
 *   abi_check results       exact-mode products through sgemm_ and cblas_sgemm: integer data
 *                           whose float32 sums are exact in any order, so the hash of every
 *                           output buffer (padding rows included) must match bit for bit;
 *                           then float data checked against a float64 product, and threads.
 *   abi_check case N        error case N: what the error handlers saw, and that C was not
 *                           touched; "no such case" with status 3 past the end.
 *
 * Built three ways (see CMakeLists.txt): ABI_OWN_XERBLA defines xerbla_ and cblas_xerbla here
 * (they record and return); ABI_OWN_CBLAS_XERBLA defines only cblas_xerbla; neither leaves the
 * library's handlers, which print and, for CBLAS, exit.
 *
 * TG_EXPECT=tilegemm|reference makes the program check which library really provides sgemm_ and
 * cblas_sgemm, so a link or preload that did not take effect fails instead of comparing the
 * reference with itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegemm_cblas.h"

#if defined(ABI_OWN_XERBLA)
void xerbla_(const char *srname, const int *info, size_t len)
{
    printf("  xerbla_ srname='%.*s' len=%zu info=%d CBLAS_CallFromC=%d RowMajorStrg=%d\n",
           (int)len, srname, len, *info, CBLAS_CallFromC, RowMajorStrg);
}
#endif
#if defined(ABI_OWN_XERBLA) || defined(ABI_OWN_CBLAS_XERBLA)
void cblas_xerbla(int info, const char *rout, const char *form, ...)
{
    printf("  cblas_xerbla info=%d rout='%s' form='%.*s' CBLAS_CallFromC=%d RowMajorStrg=%d\n",
           info, rout, (int)strcspn(form, "\n"), form, CBLAS_CallFromC, RowMajorStrg);
}
#endif

/* --- Which library answered ----------------------------------------------------------------- */

static int check_provider(void)
{
    const char *expect = getenv("TG_EXPECT");
    if (!expect || !*expect)
        return 0;
    const char *names[] = {"sgemm_", "cblas_sgemm"};
    for (int i = 0; i < 2; ++i) {
        void *sym = dlsym(RTLD_DEFAULT, names[i]);
        Dl_info info;
        if (!sym || !dladdr(sym, &info) || !info.dli_fname) {
            fprintf(stderr, "abi_check: cannot find who provides %s\n", names[i]);
            return 1;
        }
        const int is_tg = strstr(info.dli_fname, "tilegemm") != NULL;
        if (is_tg != (strcmp(expect, "tilegemm") == 0)) {
            fprintf(stderr, "abi_check: %s comes from %s, expected %s\n", names[i],
                    info.dli_fname, expect);
            return 1;
        }
    }
    return 0;
}

/* --- Data --------------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}
/* Integers in -3..3, never all zero for a matrix of a few elements. */
static void fill_int(float *x, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        x[i] = (float)((int)(rng() % 7) - 3);
}
static void fill_real(float *x, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        x[i] = (float)rng() / 4294967296.0f * 2.0f - 1.0f;
}

static uint64_t hash_floats(const float *x, size_t count)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < count; ++i) {
        uint32_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        if (x[i] != x[i])
            bits = 0x7fc00000u; /* one NaN pattern: only NaN-ness is compared */
        if (x[i] == 0.0f)
            bits = 0; /* -0 and +0: the sign of a zero sum depends on the order of the adds */
        for (int b = 0; b < 4; ++b) {
            h ^= (bits >> (8 * b)) & 0xffu;
            h *= 1099511628211ull;
        }
    }
    return h;
}

static int count_nan(const float *x, size_t count)
{
    int n = 0;
    for (size_t i = 0; i < count; ++i)
        n += x[i] != x[i];
    return n;
}

/* --- Exact-mode products ------------------------------------------------------------------ */

typedef struct shape {
    int m, n, k, pad; /* pad: extra leading dimension beyond the minimum */
} shape;

static void one_f77(char ta, char tb, shape s, float alpha, float beta, int poison)
{
    const int nota = ta == 'N' || ta == 'n', notb = tb == 'N' || tb == 'n';
    const int ra = nota ? s.m : s.k, ca = nota ? s.k : s.m;
    const int rb = notb ? s.k : s.n, cb = notb ? s.n : s.k;
    const int lda = (ra > 1 ? ra : 1) + s.pad, ldb = (rb > 1 ? rb : 1) + s.pad;
    const int ldc = (s.m > 1 ? s.m : 1) + s.pad;
    const size_t na = (size_t)lda * (ca > 0 ? ca : 1), nb = (size_t)ldb * (cb > 0 ? cb : 1);
    const size_t nc = (size_t)ldc * (s.n > 0 ? s.n : 1);
    float *A = calloc(na, sizeof *A), *B = calloc(nb, sizeof *B), *C = calloc(nc, sizeof *C);
    fill_int(A, na), fill_int(B, nb), fill_int(C, nc);
    if (poison & 1) /* alpha = 0 must not read A */
        for (size_t i = 0; i < na; ++i) A[i] = NAN;
    if (poison & 2) /* beta = 0 must not read C */
        for (size_t i = 0; i < nc; ++i) C[i] = NAN;
    sgemm_(&ta, &tb, &s.m, &s.n, &s.k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
    printf("sgemm_ %c%c m=%d n=%d k=%d lda=%d ldb=%d ldc=%d alpha=%g beta=%g poison=%d: "
           "hash=%016llx nan=%d\n",
           ta, tb, s.m, s.n, s.k, lda, ldb, ldc, alpha, beta, poison,
           (unsigned long long)hash_floats(C, nc), count_nan(C, nc));
    free(A), free(B), free(C);
}

static void one_cblas(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, shape s,
                      float alpha, float beta)
{
    const int row = layout == CblasRowMajor;
    const int nota = ta == CblasNoTrans, notb = tb == CblasNoTrans;
    /* Stored dimensions of op(A) (m x k) and op(B) (k x n): lines x line length. */
    const int a_len = row ? (nota ? s.k : s.m) : (nota ? s.m : s.k);
    const int a_lines = row ? (nota ? s.m : s.k) : (nota ? s.k : s.m);
    const int b_len = row ? (notb ? s.n : s.k) : (notb ? s.k : s.n);
    const int b_lines = row ? (notb ? s.k : s.n) : (notb ? s.n : s.k);
    const int c_len = row ? s.n : s.m, c_lines = row ? s.m : s.n;
    const int lda = (a_len > 1 ? a_len : 1) + s.pad, ldb = (b_len > 1 ? b_len : 1) + s.pad;
    const int ldc = (c_len > 1 ? c_len : 1) + s.pad;
    const size_t na = (size_t)lda * (a_lines > 0 ? a_lines : 1);
    const size_t nb = (size_t)ldb * (b_lines > 0 ? b_lines : 1);
    const size_t nc = (size_t)ldc * (c_lines > 0 ? c_lines : 1);
    float *A = calloc(na, sizeof *A), *B = calloc(nb, sizeof *B), *C = calloc(nc, sizeof *C);
    fill_int(A, na), fill_int(B, nb), fill_int(C, nc);
    cblas_sgemm(layout, ta, tb, s.m, s.n, s.k, alpha, A, lda, B, ldb, beta, C, ldc);
    printf("cblas_sgemm %s %d %d m=%d n=%d k=%d lda=%d ldb=%d ldc=%d alpha=%g beta=%g: "
           "hash=%016llx\n",
           row ? "row" : "col", (int)ta, (int)tb, s.m, s.n, s.k, lda, ldb, ldc, alpha, beta,
           (unsigned long long)hash_floats(C, nc));
    free(A), free(B), free(C);
}

/* Float data against a float64 product: the transcript only says whether it was within
 * a k-scaled tolerance, since two correct libraries may round differently. */
static int real_check(int m, int n, int k, char ta, char tb)
{
    const int nota = ta == 'N', notb = tb == 'N';
    const int lda = nota ? m : k, ldb = notb ? k : n, ldc = m;
    float *A = malloc(sizeof *A * (size_t)m * k), *B = malloc(sizeof *B * (size_t)k * n);
    float *C = malloc(sizeof *C * (size_t)m * n), *C0 = malloc(sizeof *C0 * (size_t)m * n);
    fill_real(A, (size_t)m * k), fill_real(B, (size_t)k * n), fill_real(C, (size_t)m * n);
    memcpy(C0, C, sizeof *C * (size_t)m * n);
    const float alpha = 1.25f, beta = -0.75f;
    sgemm_(&ta, &tb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
    double worst = 0.0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double sum = 0.0, mag = 0.0;
            for (int l = 0; l < k; ++l) {
                const double a = nota ? A[i + (size_t)l * lda] : A[l + (size_t)i * lda];
                const double b = notb ? B[l + (size_t)j * ldb] : B[j + (size_t)l * ldb];
                sum += a * b, mag += fabs(a * b);
            }
            const double want = alpha * sum + beta * (double)C0[i + (size_t)j * ldc];
            const double scale = fabs(alpha) * mag + fabs(beta * C0[i + (size_t)j * ldc]) + 1e-30;
            const double err = fabs(C[i + (size_t)j * ldc] - want) / scale;
            if (err > worst)
                worst = err;
        }
    const double tol = 2.0 * (k + 2) * 5.96e-8; /* float32 rounding, growing with k */
    printf("float product %dx%dx%d %c%c: %s\n", m, n, k, ta, tb,
           worst <= tol ? "within float32 rounding of float64" : "OUT OF TOLERANCE");
    if (worst > tol)
        fprintf(stderr, "worst relative error %g > %g\n", worst, tol);
    free(A), free(B), free(C), free(C0);
    return worst <= tol;
}

static void *thread_body(void *arg)
{
    int *ok = arg;
    for (int rep = 0; rep < 3; ++rep) {
        const int m = 37, n = 29, k = 41;
        float A[37 * 41], B[41 * 29], C[37 * 29];
        for (int i = 0; i < m * k; ++i) A[i] = (float)(i % 5 - 2);
        for (int i = 0; i < k * n; ++i) B[i] = (float)(i % 3 - 1);
        const float one = 1.0f, zero = 0.0f;
        sgemm_("N", "N", &m, &n, &k, &one, A, &m, B, &k, &zero, C, &m, 1, 1);
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
                float want = 0.0f;
                for (int l = 0; l < k; ++l) want += A[i + l * m] * B[l + j * k];
                if (C[i + j * m] != want) *ok = 0;
            }
    }
    return NULL;
}

static int results(void)
{
    const shape shapes[] = {{1, 1, 1, 0}, {7, 5, 3, 0}, {33, 17, 40, 3}, {130, 77, 129, 1},
                            {4, 6, 0, 0}, {0, 4, 3, 0}, {5, 0, 3, 2}};
    const float alphas[] = {1.0f, -0.5f, 0.0f}, betas[] = {0.0f, 1.0f, -1.5f};
    const char *ops = "NTCnt";
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; ++s)
        for (int a = 0; a < 5; ++a)
            for (int b = 0; b < 5; ++b)
                for (int x = 0; x < 3; ++x)
                    for (int y = 0; y < 3; ++y)
                        if ((a + b + x + y) % 3 == 0 || s < 2)
                            one_f77(ops[a], ops[b], shapes[s], alphas[x], betas[y], 0);
    /* NaN semantics: alpha = 0 never reads A; beta = 0 never reads C. */
    one_f77('N', 'N', shapes[2], 0.0f, 2.0f, 1);
    one_f77('N', 'N', shapes[2], 0.0f, 1.0f, 1);
    one_f77('T', 'N', shapes[2], 1.0f, 0.0f, 2);
    one_f77('N', 'T', shapes[2], 0.0f, 0.0f, 3);

    const CBLAS_TRANSPOSE tr[] = {CblasNoTrans, CblasTrans, CblasConjTrans};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; ++s)
        for (int l = 0; l < 2; ++l)
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b)
                    one_cblas(l ? CblasRowMajor : CblasColMajor, tr[a], tr[b], shapes[s],
                              (a + b) % 2 ? -0.5f : 2.0f, s % 2 ? 0.0f : 0.25f);

    int ok = real_check(300, 280, 310, 'N', 'N') & real_check(65, 129, 257, 'T', 'N') &
             real_check(1, 300, 1000, 'N', 'T') & real_check(200, 3, 513, 'T', 'T');

    int thread_ok[4] = {1, 1, 1, 1};
    pthread_t t[4];
    for (int i = 0; i < 4; ++i) pthread_create(&t[i], NULL, thread_body, &thread_ok[i]);
    for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
    const int threads = thread_ok[0] && thread_ok[1] && thread_ok[2] && thread_ok[3];
    printf("4 threads: %s\n", threads ? "exact" : "WRONG");
    return ok && threads ? 0 : 1;
}

/* --- Error cases -------------------------------------------------------------------------- */

typedef struct bad_call {
    int cblas;       /* 0: sgemm_ (ta, tb chars); 1: cblas_sgemm (layout, ta, tb values) */
    int layout, ta, tb;
    int m, n, k, lda, ldb, ldc;
    const char *what;
} bad_call;

#define F(ta, tb, m, n, k, lda, ldb, ldc, what) {0, 0, ta, tb, m, n, k, lda, ldb, ldc, what}
#define COL 102
#define ROW 101
#define CB(lay, ta, tb, m, n, k, lda, ldb, ldc, what)                                          \
    {1, lay, ta, tb, m, n, k, lda, ldb, ldc, what}

static const bad_call cases[] = {
    F('N', 'N', 2, 3, 4, 2, 4, 2, "valid call (control)"),
    F('X', 'N', 2, 3, 4, 2, 4, 2, "TRANSA illegal"),
    F('N', 'Y', 2, 3, 4, 2, 4, 2, "TRANSB illegal"),
    F('x', 'y', -1, -1, -1, 0, 0, 0, "everything illegal: TRANSA first"),
    F('n', 'Z', -1, 3, 4, 0, 4, 2, "TRANSB before M"),
    F('t', 'c', -1, -1, 4, 4, 4, 0, "lower case accepted; M before N"),
    F('N', 'N', 2, -1, -1, 2, 0, 2, "N before K"),
    F('N', 'N', 2, 3, -1, 2, 1, 2, "K"),
    F('N', 'N', 5, 3, 4, 4, 4, 5, "LDA < M"),
    F('T', 'N', 5, 3, 4, 3, 4, 5, "LDA < K (transposed A)"),
    F('N', 'N', 5, 3, 4, 5, 3, 5, "LDB < K"),
    F('N', 'T', 5, 3, 4, 5, 2, 5, "LDB < N (transposed B)"),
    F('N', 'N', 5, 3, 4, 5, 4, 4, "LDC < M"),
    F('N', 'N', 5, 3, 4, 1, 1, 1, "LDA before LDB before LDC"),
    F('N', 'N', 0, 3, 4, 0, 4, 0, "LDA = 0 with M = 0: checked before the quick return"),
    F('N', 'N', 0, 0, 0, 1, 1, 0, "LDC = 0 with M = N = 0"),
    F('X', 'N', 0, 0, 0, 1, 1, 1, "TRANSA illegal on a quick-return shape"),
    F('T', 'N', 3, 3, 0, 0, 1, 3, "LDA = 0 < max(1, K = 0)"),
    CB(7, 111, 111, 2, 3, 4, 2, 4, 2, "layout illegal"),
    CB(7, 5, 5, -1, -1, -1, 0, 0, 0, "layout before everything"),
    CB(COL, 5, 111, 2, 3, 4, 2, 4, 2, "col TransA illegal"),
    CB(COL, 111, 114, 2, 3, 4, 2, 4, 2, "col TransB illegal"),
    CB(COL, 110, 110, 2, 3, 4, 2, 4, 2, "col both illegal: TransA"),
    CB(COL, 111, 111, -1, 3, 4, 2, 4, 2, "col M"),
    CB(COL, 111, 111, 2, -1, 4, 2, 4, 2, "col N"),
    CB(COL, 111, 111, 2, 3, -1, 2, 4, 2, "col K"),
    CB(COL, 111, 111, 5, 3, 4, 4, 4, 5, "col lda"),
    CB(COL, 112, 111, 5, 3, 4, 3, 4, 5, "col lda, TransA"),
    CB(COL, 111, 111, 5, 3, 4, 5, 3, 5, "col ldb"),
    CB(COL, 111, 113, 5, 3, 4, 5, 2, 5, "col ldb, ConjTrans B"),
    CB(COL, 111, 111, 5, 3, 4, 5, 4, 4, "col ldc"),
    CB(ROW, 5, 111, 2, 3, 4, 4, 3, 3, "row TransA illegal"),
    CB(ROW, 111, 5, 2, 3, 4, 4, 3, 3, "row TransB illegal (known: LAPACK <= 3.11 says 2)"),
    CB(ROW, 5, 5, 2, 3, 4, 4, 3, 3, "row both illegal: TransA"),
    CB(ROW, 111, 111, -1, 3, 4, 4, 3, 3, "row M"),
    CB(ROW, 111, 111, 2, -1, 4, 4, 3, 3, "row N"),
    CB(ROW, 111, 111, -1, -1, 4, 4, 3, 3, "row M and N: N wins (swapped call)"),
    CB(ROW, 111, 111, -1, 3, -1, 4, 3, 3, "row M and K: M wins"),
    CB(ROW, 111, 111, 2, 3, -1, 4, 3, 3, "row K"),
    CB(ROW, 111, 111, 2, 3, 4, 3, 3, 3, "row lda < K"),
    CB(ROW, 112, 111, 5, 3, 4, 4, 3, 3, "row lda < M (TransA)"),
    CB(ROW, 111, 111, 2, 3, 4, 4, 2, 3, "row ldb < N"),
    CB(ROW, 111, 112, 2, 3, 4, 4, 3, 3, "row ldb < K (TransB)"),
    CB(ROW, 111, 111, 2, 3, 4, 3, 2, 3, "row lda and ldb: ldb wins (swapped call)"),
    CB(ROW, 111, 111, 2, 3, 4, 4, 3, 2, "row ldc < N"),
    CB(ROW, 111, 111, 2, 3, 4, 3, 3, 2, "row lda and ldc: lda wins"),
    CB(ROW, 113, 113, 0, 0, 0, 0, 0, 0, "row all ld 0 with M = N = K = 0: ldb first"),
    CB(ROW, 111, 111, 2, 3, 4, 4, 3, 3, "row valid call (control)"),
};

static int run_case(int index)
{
    if (index < 0 || index >= (int)(sizeof cases / sizeof *cases)) {
        printf("no such case\n");
        return 3;
    }
    const bad_call *c = &cases[index];
    float A[64], B[64], C[64];
    for (int i = 0; i < 64; ++i) A[i] = (float)(i % 3), B[i] = (float)(i % 4), C[i] = -7.0f;
    const float alpha = 1.0f, beta = 0.0f;
    printf("case %d: %s\n", index, c->what);
    fflush(stdout);
    if (c->cblas) {
        cblas_sgemm((CBLAS_LAYOUT)c->layout, (CBLAS_TRANSPOSE)c->ta, (CBLAS_TRANSPOSE)c->tb, c->m,
                    c->n, c->k, alpha, A, c->lda, B, c->ldb, beta, C, c->ldc);
    } else {
        const char ta = (char)c->ta, tb = (char)c->tb;
        sgemm_(&ta, &tb, &c->m, &c->n, &c->k, &alpha, A, &c->lda, B, &c->ldb, &beta, C, &c->ldc,
               1, 1);
    }
    int touched = 0;
    for (int i = 0; i < 64; ++i)
        touched += C[i] != -7.0f;
    printf("  returned; C %s (hash %016llx)\n", touched ? "written" : "untouched",
           (unsigned long long)hash_floats(C, 64));
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (check_provider())
        return 1;
    if (argc >= 2 && strcmp(argv[1], "results") == 0)
        return results();
    if (argc >= 3 && strcmp(argv[1], "case") == 0)
        return run_case(atoi(argv[2]));
    fprintf(stderr, "usage: %s results | case N\n", argv[0]);
    return 2;
}
