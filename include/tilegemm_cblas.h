/*
 * tilegemm's BLAS entry points: the Fortran-ABI sgemm_, cblas_sgemm and their error handlers.
 *
 * Programs written against the reference BLAS need no header from tilegemm at all: put
 * -ltilegemm before -lblas on the link line (or LD_PRELOAD=libtilegemm.so) and their existing
 * calls land here.  This header is for C code that wants the declarations without a system
 * cblas.h.  It is an alternative to cblas.h, not a companion: if you need both, include cblas.h
 * FIRST; this header then declares only what cblas.h does not (the F77 symbols), so the two never
 * disagree about a prototype.  Including cblas.h after this header is an error (the enum
 * constants would be defined twice).
 *
 * Integers are 32-bit (the LP64 ABI of the reference BLAS, Debian's libblas and OpenBLAS).
 * Pointers are host memory; small problems run on the CPU, large ones on the GPU when one exists
 * (TILEGEMM_BACKEND, TILEGEMM_GPU_MIN_WORK: see docs/blas_python_install.md).
 *
 * BLAS forbids C to overlap A or B, and the reference computes a wrong C when it does.  Here a
 * C that shares an element with A or B, when they are read (alpha != 0 and k > 0), is reported
 * through xerbla_ at C's position (12; 13 through cblas_sgemm) and left untouched.
 */
#ifndef TILEGEMM_CBLAS_H
#define TILEGEMM_CBLAS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(CBLAS_H) && !defined(__CBLAS_H) && !defined(__MKL_CBLAS_H__)
#define TILEGEMM_CBLAS_OWN_ENUMS 1
/* The CBLAS values: 101/102, 111/112/113 (ConjTrans means Trans for real matrices). */
typedef enum CBLAS_LAYOUT { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_LAYOUT;
typedef enum CBLAS_TRANSPOSE {
    CblasNoTrans = 111,
    CblasTrans = 112,
    CblasConjTrans = 113
} CBLAS_TRANSPOSE;
typedef CBLAS_LAYOUT CBLAS_ORDER; /* the older name */

/* C = alpha * op(A) * op(B) + beta * C.  Errors are reported as reference CBLAS reports them:
 * an illegal layout or transpose goes to cblas_xerbla(1, 2 or 3, "cblas_sgemm", ...); the other
 * checks are those of the column-major sgemm_ it calls (for row-major: on the swapped problem
 * C^T = op(B)^T op(A)^T), whose xerbla_ hands them to cblas_xerbla with the position + 1;
 * cblas_xerbla maps them back to the caller's row-major arguments, prints
 * "Parameter N to routine cblas_sgemm  was incorrect" and exits with status 255 (exit(-1)). */
void cblas_sgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB, int M,
                 int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                 float beta, float *C, int ldc);

/* The CBLAS error handler.  Weak: define your own to replace it (it then receives the raw
 * position, and RowMajorStrg tells whether the call was row-major, as in reference CBLAS). */
void cblas_xerbla(int info, const char *rout, const char *form, ...);
#endif

/* Fortran SGEMM: every argument by reference, the two CHARACTER lengths hidden at the end
 * (gfortran >= 8 passes them as size_t).  TRANSA/TRANSB: 'N'/'n', 'T'/'t' or 'C'/'c'.
 * On an illegal argument it calls xerbla_("SGEMM ", &info, 6) with the reference positions
 * (TRANSA 1, TRANSB 2, M 3, N 4, K 5, LDA 8, LDB 10, LDC 13), checked in the reference order,
 * and returns without touching C. */
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
            const float *beta, float *C, const int *ldc, size_t transa_len, size_t transb_len);

/* The Fortran error handler.  Weak and in its own object file: a program that defines xerbla_
 * (in C with this signature, or as SUBROUTINE XERBLA(SRNAME, INFO) in Fortran) gets its own
 * called.  The default behaves like the one in Debian's reference libblas (the CBLAS xerbla):
 * when called from cblas_* it forwards to cblas_xerbla(info + 1, "cblas_<name>", ""); otherwise
 * it prints "Parameter INFO to routine SRNAME was incorrect" to stderr and returns. */
void xerbla_(const char *srname, const int *info, size_t srname_len);

/* Reference CBLAS's globals, shared with any reference CBLAS loaded in the same process so that
 * its cblas_* calls and tilegemm's handlers agree on them. */
extern int RowMajorStrg;
extern int CBLAS_CallFromC;

#ifdef __cplusplus
}
#endif

#endif /* TILEGEMM_CBLAS_H */
