/*
 * The BLAS shims' error reports, through the library's own handlers, for every argument:
 *
 *   cblas_sgemm, column-major and row-major, NN and TT: each illegal argument alone (layout,
 *     TransA, TransB, M, N, K, lda, ldb, ldc, and NULL A, B and C where the call would read
 *     them) must be reported as "Parameter P to routine cblas_sgemm was incorrect" at the
 *     reference CBLAS position P of the caller's argument (layout 1, TransA 2, TransB 3, M 4,
 *     N 5, K 6, A 8, lda 9, B 10, ldb 11, C 13, ldc 14), followed by exit status 255, as
 *     reference CBLAS's cblas_xerbla does.  A row-major call runs as the swapped column-major
 *     one, so this checks the library's map back to the caller's positions (cblas_xerbla, in
 *     xerbla.c), which a program that supplies its own handlers never exercises.
 *   sgemm_, every argument: "Parameter P to routine SGEMM  was incorrect" at the reference
 *     xerbla's numbering (TRANSA 1, TRANSB 2, M 3, N 4, K 5, A 7, LDA 8, B 9, LDB 10, C 12,
 *     LDC 13), and sgemm_ returns.
 *   C is never written, and the first illegal argument in the reference's order wins (row-
 *   major: N before M, ldb before lda, as in the swapped call).
 *
 * cblas_xerbla exits, so each case runs in a child process (fork) with C in shared memory; the
 * parent reads the child's stderr and exit status.  Deterministic: a failure names the case,
 * and --case N runs that case alone.  Reference CBLAS up to LAPACK 3.11 (Debian 12) reports a
 * row-major illegal TransB as parameter 2; tilegemm and later references say 3.
 */
#define _GNU_SOURCE /* fork, pipe, dup2, MAP_ANONYMOUS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing.h"
#include "tilegemm_cblas.h"

enum { kM = 5, kN = 3, kK = 4, kSpace = 64 };

/* One call of either entry point: the CBLAS values for the enums (sgemm_ reads 'N'/'T'). */
typedef struct blas_call {
    int cblas, layout, transa, transb;
    int m, n, k, lda, ldb, ldc;
    float alpha;
    int null_a, null_b, null_c;
} blas_call;

typedef struct bad_argument {
    const char *name;
    int cblas_position, f77_position; /* the caller's position; 0: not in that entry */
    void (*apply)(blas_call *c);
} bad_argument;

static int stored_rows_a(const blas_call *c) /* rows of A as stored, the minimum lda */
{
    const int row = c->layout == CblasRowMajor, nota = c->transa == CblasNoTrans;
    return row ? (nota ? kK : kM) : (nota ? kM : kK);
}
static int stored_rows_b(const blas_call *c)
{
    const int row = c->layout == CblasRowMajor, notb = c->transb == CblasNoTrans;
    return row ? (notb ? kN : kK) : (notb ? kK : kN);
}

static void bad_layout(blas_call *c) { c->layout = 7; }
static void bad_transa(blas_call *c) { c->transa = 5; }
static void bad_transb(blas_call *c) { c->transb = 110; }
static void bad_m(blas_call *c) { c->m = -1; }
static void bad_n(blas_call *c) { c->n = -2; }
static void bad_k(blas_call *c) { c->k = -3; }
static void bad_a(blas_call *c) { c->null_a = 1; }
static void bad_lda(blas_call *c) { c->lda = stored_rows_a(c) - 1; }
static void bad_b(blas_call *c) { c->null_b = 1; }
static void bad_ldb(blas_call *c) { c->ldb = stored_rows_b(c) - 1; }
static void bad_c(blas_call *c) { c->null_c = 1; }
static void bad_ldc(blas_call *c) { c->ldc = (c->layout == CblasRowMajor ? kN : kM) - 1; }
/* Two at once: the reference's order decides (row-major runs the swapped call). */
static void bad_m_and_n(blas_call *c) { c->m = -1, c->n = -1; }
static void bad_lda_and_ldb(blas_call *c) { bad_lda(c), bad_ldb(c); }
static void bad_a_and_b(blas_call *c) { c->null_a = c->null_b = 1; }

static const bad_argument kBad[] = {
    {"layout", 1, 0, bad_layout},
    {"TransA", 2, 1, bad_transa},
    {"TransB", 3, 2, bad_transb},
    {"M", 4, 3, bad_m},
    {"N", 5, 4, bad_n},
    {"K", 6, 5, bad_k},
    {"A = NULL", 8, 7, bad_a},
    {"lda", 9, 8, bad_lda},
    {"B = NULL", 10, 9, bad_b},
    {"ldb", 11, 10, bad_ldb},
    {"C = NULL", 13, 12, bad_c},
    {"ldc", 14, 13, bad_ldc},
    /* positions for column-major; row-major's differ and are given by row_major_winner */
    {"M and N", 4, 3, bad_m_and_n},
    {"lda and ldb", 9, 8, bad_lda_and_ldb},
    {"A and B NULL", 8, 7, bad_a_and_b},
};

/* Row-major runs SGEMM(op(B), op(A), N, M, K, ..., B, ldb, A, lda, ...): where two arguments
 * are wrong, the one the swapped call checks first is reported. */
static int row_major_winner(const bad_argument *b)
{
    if (b->apply == bad_m_and_n)
        return 5;
    if (b->apply == bad_lda_and_ldb)
        return 11;
    if (b->apply == bad_a_and_b)
        return 10;
    return b->cblas_position;
}

/* What a case is: entry, layout, transposes, bad argument; numbered in this order. */
typedef struct test_case {
    int cblas, row, trans;
    const bad_argument *bad;
} test_case;

static int case_count(void) { return 2 * 2 * 2 * (int)(sizeof kBad / sizeof *kBad); }

static test_case case_at(int index)
{
    const int per = (int)(sizeof kBad / sizeof *kBad);
    test_case t = {index / (4 * per), index / (2 * per) % 2, index / per % 2, &kBad[index % per]};
    return t;
}

/* The child: makes the call with stderr to `err_fd`, then says it returned. */
static void child_call(const blas_call *c, float *C, int err_fd)
{
    static float A[kSpace], B[kSpace];
    for (int i = 0; i < kSpace; ++i)
        A[i] = (float)(i % 3), B[i] = (float)(i % 4 - 1);
    dup2(err_fd, 2);
    const float beta = 0.5f;
    const float *pa = c->null_a ? NULL : A, *pb = c->null_b ? NULL : B;
    float *pc = c->null_c ? NULL : C;
    if (c->cblas) {
        cblas_sgemm((CBLAS_LAYOUT)c->layout, (CBLAS_TRANSPOSE)c->transa,
                    (CBLAS_TRANSPOSE)c->transb, c->m, c->n, c->k, c->alpha, pa, c->lda, pb,
                    c->ldb, beta, pc, c->ldc);
    } else {
        const char ta = c->transa == CblasNoTrans ? 'N' : c->transa == CblasTrans ? 'T' : 'X';
        const char tb = c->transb == CblasNoTrans ? 'n' : c->transb == CblasTrans ? 't' : 'Y';
        sgemm_(&ta, &tb, &c->m, &c->n, &c->k, &c->alpha, pa, &c->lda, pb, &c->ldb, &beta, pc,
               &c->ldc, 1, 1);
    }
    fprintf(stderr, "returned\n");
    fflush(stderr);
    _exit(0);
}

/* Runs the call in a child; its stderr into `out`, its exit status returned (-1: killed). */
static int run_child(const blas_call *c, float *C, char *out, size_t size)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("test_blas_errors: pipe");
        exit(1);
    }
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        perror("test_blas_errors: fork");
        exit(1);
    }
    if (pid == 0) {
        close(fds[0]);
        child_call(c, C, fds[1]);
    }
    close(fds[1]);
    size_t used = 0;
    ssize_t got;
    while (used + 1 < size && (got = read(fds[0], out + used, size - 1 - used)) > 0)
        used += (size_t)got;
    out[used] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void describe(const test_case *t, char *buf, size_t size)
{
    snprintf(buf, size, "%s %s %s, bad %s", t->cblas ? "cblas_sgemm" : "sgemm_",
             t->row ? "row-major" : "column-major", t->trans ? "TT" : "NN", t->bad->name);
}

/* One case; returns 1 when it ran (0: the argument does not exist in that entry). */
static int run_case(int index, float *C, const char *argv0)
{
    const test_case t = case_at(index);
    if (t.cblas ? t.bad->cblas_position == 0 : t.bad->f77_position == 0)
        return 0;
    if (!t.cblas && t.row)
        return 0; /* sgemm_ is column-major only */
    const int tr = t.trans ? CblasTrans : CblasNoTrans;
    blas_call c = {t.cblas, t.row ? CblasRowMajor : CblasColMajor, tr, tr, kM, kN, kK,
                   0, 0, t.row ? kN : kM, 1.0f, 0, 0, 0};
    c.lda = stored_rows_a(&c);
    c.ldb = stored_rows_b(&c);
    t.bad->apply(&c);
    for (int i = 0; i < kSpace; ++i)
        C[i] = (float)(i % 7) - 3.0f;

    char out[1024], what[128];
    const int status = run_child(&c, C, out, sizeof out);
    describe(&t, what, sizeof what);
    const int want = t.cblas ? (t.row ? row_major_winner(t.bad) : t.bad->cblas_position)
                             : t.bad->f77_position;
    const char *routine = t.cblas ? "cblas_sgemm" : "SGEMM";
    int position = 0;
    char name[64] = "";
    const char *line = strstr(out, "Parameter ");
    const int parsed = line && sscanf(line, "Parameter %d to routine %63s", &position, name) == 2;
    const int before = tg_test_failures;
    EXPECT(parsed && position == want && strcmp(name, routine) == 0,
           "%s: reported \"%.*s\", wanted \"Parameter %d to routine %s\"", what,
           parsed ? (int)strcspn(line, "\n") : 7, parsed ? line : "nothing", want, routine);
    /* cblas_xerbla exits with status 255 (exit(-1)); xerbla_ returns and so does sgemm_. */
    EXPECT(t.cblas ? status == 255 : status == 0 && strstr(out, "returned") != NULL,
           "%s: exit status %d, output \"%s\"", what, status, out);
    int written = 0;
    for (int i = 0; i < kSpace; ++i)
        written += C[i] != (float)(i % 7) - 3.0f;
    EXPECT(written == 0, "%s: %d element(s) of C written", what, written);
    if (tg_test_failures != before)
        fprintf(stderr, "  reproduce: %s --case %d\n", argv0, index);
    return 1;
}

/* NULL operands that the call does not read are no error: A and B with alpha = 0, C with
 * m = 0 (both quick returns). */
static void test_null_not_read(float *C)
{
    const blas_call calls[] = {
        {1, CblasRowMajor, CblasNoTrans, CblasNoTrans, kM, kN, kK, kK, kN, kN, 0.0f, 1, 1, 0},
        {0, CblasColMajor, CblasTrans, CblasNoTrans, kM, kN, kK, kK, kK, kM, 0.0f, 1, 1, 0},
        {1, CblasColMajor, CblasNoTrans, CblasNoTrans, 0, kN, kK, 1, kK, 1, 1.0f, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof calls / sizeof *calls; ++i) {
        char out[1024];
        for (int e = 0; e < kSpace; ++e)
            C[e] = 2.0f;
        const int status = run_child(&calls[i], C, out, sizeof out);
        EXPECT(status == 0 && strstr(out, "returned") && !strstr(out, "Parameter"),
               "legal call %zu with NULL operands it does not read: status %d, \"%s\"", i,
               status, out);
        /* alpha = 0, beta = 0.5: C = 0.5 C; m = 0: C untouched */
        const float want = calls[i].m == 0 ? 2.0f : 1.0f;
        EXPECT(C[0] == want, "legal call %zu: C[0] = %g, wanted %g", i, (double)C[0],
               (double)want);
    }
}

int main(int argc, char **argv)
{
    int only = -1;
    if (argc == 3 && strcmp(argv[1], "--case") == 0) {
        only = atoi(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [--case N]\n", argv[0]);
        return 1;
    }
    /* C lives in shared memory: the parent checks it after a child that exited. */
    float *C = mmap(NULL, kSpace * sizeof(float), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (C == MAP_FAILED) {
        perror("test_blas_errors: mmap");
        return 1;
    }
    int ran = 0;
    for (int i = 0; i < case_count(); ++i)
        if (only < 0 || i == only)
            ran += run_case(i, C, argv[0]);
    if (only < 0)
        test_null_not_read(C);
    printf("test_blas_errors: %d error case(s) checked\n", ran);
    EXPECT(ran > 0, "no case ran");
    return tg_test_result("test_blas_errors");
}
