/*
 * sgemm_: the Fortran 77 ABI of the reference BLAS SGEMM, over tg_sgemm.
 *
 *   SUBROUTINE SGEMM(TRANSA, TRANSB, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC)
 *
 * Every argument by reference, 32-bit INTEGERs, and the lengths of the two CHARACTER arguments
 * passed by value after the last argument (size_t, as gfortran >= 8 does).  Only the first
 * character is read, compared as the reference LSAME compares: case-insensitively.
 *
 * The checks are the reference's, in its order (the first that fails wins):
 *   TRANSA not N/T/C -> 1, TRANSB not N/T/C -> 2, M < 0 -> 3, N < 0 -> 4, K < 0 -> 5,
 *   LDA < max(1, nrowa) -> 8, LDB < max(1, nrowb) -> 10, LDC < max(1, M) -> 13,
 * where nrowa is M (TRANSA = N) or K, nrowb is K (TRANSB = N) or N.  A failure calls
 * xerbla_("SGEMM ", &info, 6) and returns without touching C.  They are the library's own
 * checks (validate.c, which follows the reference), run before any handle exists, so error
 * reporting needs neither a handle nor a GPU.  Then the reference quick return: M or N is 0,
 * or (ALPHA is 0 or K is 0) and BETA is 1.
 *
 * The work goes to tg_sgemm in column-major on this thread's handle (created on first use,
 * destroyed when the thread exits), so TILEGEMM_BACKEND and TILEGEMM_GPU_MIN_WORK apply.
 * There is no way to return a runtime failure through this ABI, so when the handle cannot be
 * made or the call fails at run time (a CUDA error, an allocation failure), the CPU backend
 * computes the result directly: the caller always gets C.
 *
 * One thing the reference does not do: a NULL A, B or C that would be read is reported through
 * xerbla_ with that pointer's position (7, 9, 12) instead of crashing.
 */
#include <pthread.h>

#include "../../include/tilegemm.h"
#include "../../include/tilegemm_cblas.h"
#include "../cpu/cpu.h"
#include "../internal.h"

#include "blas_internal.h"

/* --- One handle per thread ------------------------------------------------------------------ */

static pthread_key_t handle_key;
static pthread_once_t handle_key_once = PTHREAD_ONCE_INIT;
static int handle_key_ready;
static _Thread_local int handle_failed; /* tg_create failed on this thread: do not retry */

static void destroy_handle(void *h) { tg_destroy((tg_handle *)h); }

static void make_handle_key(void)
{
    handle_key_ready = pthread_key_create(&handle_key, destroy_handle) == 0;
}

/* If the library is unloaded (dlclose), the key's destructor must not outlive its code. */
__attribute__((destructor)) static void delete_handle_key(void)
{
    if (handle_key_ready) {
        handle_key_ready = 0;
        pthread_key_delete(handle_key);
    }
}

static tg_handle *thread_handle(void)
{
    pthread_once(&handle_key_once, make_handle_key);
    if (!handle_key_ready || handle_failed)
        return NULL;
    tg_handle *h = pthread_getspecific(handle_key);
    if (h)
        return h;
    if (tg_create(&h) != TG_SUCCESS) {
        handle_failed = 1;
        return NULL;
    }
    if (pthread_setspecific(handle_key, h) != 0) {
        tg_destroy(h);
        handle_failed = 1;
        return NULL;
    }
    return h;
}

/* --- The reference checks: the library's own (validate.c), with Fortran's numbering -------- */

/* LSAME's reading of a TRANS character; anything else becomes an invalid tg_op, which
 * validation reports at that argument's position. */
static tg_op op_of(char c)
{
    if (c >= 'a' && c <= 'z')
        c = (char)(c - 'a' + 'A');
    return c == 'N' ? TG_NO_TRANS : c == 'T' || c == 'C' ? TG_TRANS : (tg_op)0;
}

/* Reference CBLAS tells its error handlers where a call came from through two globals.  They
 * are set only around a report, so successful calls never touch them, and cleared after it,
 * as reference CBLAS clears them when a call returns.  No lock is held across the handler: a
 * program's xerbla_ may leave by longjmp (R's does), and a lock it left held would block every
 * later report.  The library's own handlers read this thread's report (tg_blas_report) rather
 * than the globals, so reports on other threads at the same time cannot mix them up. */
/* The globals are written atomically: with no lock, reports on two threads may write them at
 * once, which must not be a data race on the library's side. */
static void set_globals(int from_cblas, int row_major)
{
    __atomic_store_n(&CBLAS_CallFromC, from_cblas, __ATOMIC_RELAXED);
    __atomic_store_n(&RowMajorStrg, row_major, __ATOMIC_RELAXED);
}

void tg_blas_report_begin(int from_cblas, int row_major)
{
    tg_blas_report = (tg_blas_caller){1, from_cblas, row_major};
    set_globals(from_cblas, row_major);
}

void tg_blas_report_end(void)
{
    tg_blas_report = (tg_blas_caller){0, 0, 0};
    set_globals(0, 0);
}

static void report(int info, int from_cblas, int row_major)
{
    tg_blas_report_begin(from_cblas, row_major);
    xerbla_("SGEMM ", &info, 6);
    tg_blas_report_end();
}

void tg_blas_sgemm(char transa, char transb, int m, int n, int k, float alpha, const float *A,
                   int lda, const float *B, int ldb, float beta, float *C, int ldc,
                   int from_cblas, int row_major)
{
    const tg_call call = {.layout = TG_COL_MAJOR, .transa = op_of(transa),
                          .transb = op_of(transb), .m = m, .n = n, .k = k, .alpha = alpha,
                          .beta = beta, .A = A, .lda = lda, .B = B, .ldb = ldb, .C = C,
                          .ldc = ldc, .batch = 1};
    tg_error error;
    if (tg_validate(&call, &error) != TG_SUCCESS ||
        tg_check_aliasing(&call, &error) != TG_SUCCESS) {
        /* Column-major CBLAS positions are Fortran's plus one (the layout comes first). */
        report(error.arg - 1, from_cblas, row_major);
        return;
    }
    if (tg_is_quick_return(&call))
        return;

    tg_handle *h = thread_handle();
    if (h) {
        /* Validated and not a quick return: straight to planning. */
        tg_status s = tg_run_validated(h, &call);
        /* BLAS returns with C written; managed operands run asynchronously on the GPU. */
        if (s == TG_SUCCESS)
            s = tg_synchronize(h);
        if (s == TG_SUCCESS)
            return;
    }
    /* No handle, or a runtime failure: the CPU backend needs neither a handle nor a GPU and
     * cannot fail.  A failure wrote nothing to C, or (a product of host operands over GPUs)
     * whole tiles of it, which the handle records: the CPU computes the rest, so that beta * C
     * is never applied twice. */
    tg_cpu_complete(h, &call);
}

TG_API void sgemm_(const char *transa, const char *transb, const int *m, const int *n,
                   const int *k, const float *alpha, const float *A, const int *lda,
                   const float *B, const int *ldb, const float *beta, float *C, const int *ldc,
                   size_t transa_len, size_t transb_len)
{
    (void)transa_len, (void)transb_len; /* LSAME reads the first character only */
    tg_blas_sgemm(*transa, *transb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc, 0, 0);
}
