/* Shared by the BLAS shims (hidden: not part of the library's ABI). */
#ifndef TG_BLAS_INTERNAL_H
#define TG_BLAS_INTERNAL_H

/* An error report in progress on this thread: where the failed call came from, in the terms
 * of reference CBLAS's globals.  active is 0 outside a report. */
typedef struct tg_blas_caller {
    int active, from_cblas, row_major;
} tg_blas_caller;

/* This thread's report, which the library's own xerbla_ and cblas_xerbla read instead of the
 * globals (another thread may be reporting at the same time).  Defined in xerbla.c. */
extern _Thread_local tg_blas_caller tg_blas_report;

/* Around one error report: the begin sets this thread's report and CBLAS_CallFromC and
 * RowMajorStrg for the handlers, the end clears them.  Nothing is held in between, so a
 * handler may leave by longjmp; the next report sets everything afresh. */
void tg_blas_report_begin(int from_cblas, int row_major); /* in sgemm_f77.c */
void tg_blas_report_end(void);

/* The checks and the work of sgemm_, with the caller recorded for the error handlers. */
void tg_blas_sgemm(char transa, char transb, int m, int n, int k, float alpha, const float *A,
                   int lda, const float *B, int ldb, float beta, float *C, int ldc,
                   int from_cblas, int row_major);

#endif
