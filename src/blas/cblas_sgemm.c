/*
 * cblas_sgemm over the Fortran-ABI path, laid out as reference CBLAS lays it out, so that every
 * error is reported with the reference's number, by the same handler, in the same order:
 *
 *   column-major: TransA illegal -> cblas_xerbla(2, "cblas_sgemm", "Illegal TransA setting, %d\n")
 *                 TransB illegal -> cblas_xerbla(3, ...)
 *                 then SGEMM(TA, TB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
 *   row-major:    TransA illegal -> 2, TransB illegal -> 3 (reference CBLAS up to LAPACK 3.11,
 *                 the one in Debian 12, reports 2 here; upstream corrected it to 3),
 *                 then the swapped call SGEMM(op(B), op(A), N, M, K, alpha, B, ldb, A, lda,
 *                 beta, C, ldc), which computes C^T = op(B)^T op(A)^T in column-major, i.e. the
 *                 row-major C;
 *   any other layout -> cblas_xerbla(1, "cblas_sgemm", "Illegal layout setting, %d\n").
 * A failure of the SGEMM checks goes to xerbla_("SGEMM ", info) with CBLAS_CallFromC set (and
 * RowMajorStrg for row-major); the default xerbla_ passes info + 1 to cblas_xerbla, which maps
 * the swapped positions back (row-major M <-> N: 4 <-> 5, lda <-> ldb: 9 <-> 11).  So a
 * row-major call with lda too small is reported as parameter 9, and with several arguments
 * wrong the first in the swapped order wins: N before M, ldb before lda.
 * A program that supplies its own xerbla_ sees what the reference shows it: "SGEMM " and the
 * Fortran position in the swapped call.
 */
#include "../../include/tilegemm.h"
#include "../../include/tilegemm_cblas.h"

#include "blas_internal.h"

static int trans_char(CBLAS_TRANSPOSE t, char *c)
{
    switch ((int)t) {
    case CblasNoTrans: *c = 'N'; return 1;
    case CblasTrans: *c = 'T'; return 1;
    case CblasConjTrans: *c = 'C'; return 1;
    }
    return 0;
}

/* The reference sets both globals on entry and clears them on return; here they are set only
 * for the duration of an error report (see tg_blas_report_begin). */
static void illegal(int row_major, int info, const char *form, int value)
{
    tg_blas_report_begin(1, row_major);
    cblas_xerbla(info, "cblas_sgemm", form, value);
    tg_blas_report_end();
}

TG_API void cblas_sgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                        int M, int N, int K, float alpha, const float *A, int lda,
                        const float *B, int ldb, float beta, float *C, int ldc)
{
    if (layout != CblasColMajor && layout != CblasRowMajor) {
        illegal(0, 1, "Illegal layout setting, %d\n", (int)layout);
        return;
    }
    const int row_major = layout == CblasRowMajor;
    char ta, tb;
    if (!trans_char(TransA, &ta)) {
        illegal(row_major, 2, "Illegal TransA setting, %d\n", (int)TransA);
        return;
    }
    if (!trans_char(TransB, &tb)) {
        illegal(row_major, 3, "Illegal TransB setting, %d\n", (int)TransB);
        return;
    }
    if (row_major) /* The operands swap roles: op(B)^T is the first factor of C^T. */
        tg_blas_sgemm(tb, ta, N, M, K, alpha, B, ldb, A, lda, beta, C, ldc, 1, 1);
    else
        tg_blas_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, 1, 0);
}
