/* Shared by the BLAS shims (hidden: not part of the library's ABI). */
#ifndef TG_BLAS_INTERNAL_H
#define TG_BLAS_INTERNAL_H

/* The reference CBLAS globals as they were before an error report began. */
typedef struct tg_blas_caller {
    int from_cblas, row_major;
} tg_blas_caller;

/* Sets CBLAS_CallFromC and RowMajorStrg for one error report, under a lock; the end restores
 * them.  Defined in sgemm_f77.c. */
tg_blas_caller tg_blas_report_begin(int from_cblas, int row_major);
void tg_blas_report_end(tg_blas_caller saved);

/* The checks and the work of sgemm_, with the caller recorded for the error handlers. */
void tg_blas_sgemm(char transa, char transb, int m, int n, int k, float alpha, const float *A,
                   int lda, const float *B, int ldb, float beta, float *C, int ldc,
                   int from_cblas, int row_major);

#endif
