/*
 * A program's own xerbla_ that leaves by longjmp, as R's does (through error()): the library
 * must hold nothing across the handler, so that the next bad call, from this thread or any
 * other, reaches the handler again instead of blocking.  Each bad call here must come back
 * through the handler; an alarm turns a hang into a failure (SIGALRM kills the test).
 *
 * Also: the reference CBLAS globals seen by the handler belong to the report in progress,
 * even after an earlier report was left by longjmp.
 */
#include <pthread.h>
#include <setjmp.h>
#include <unistd.h>

#include "testing.h"
#include "tilegemm_cblas.h"

static _Thread_local jmp_buf *escape;
static _Thread_local int handler_info, handler_from_c, handler_row_major;
static int threads_at_once; /* the globals are then any thread's: not read */

void xerbla_(const char *srname, const int *info, size_t len)
{
    (void)srname, (void)len;
    handler_info = *info;
    if (!threads_at_once) {
        handler_from_c = CBLAS_CallFromC;
        handler_row_major = RowMajorStrg;
    }
    if (escape)
        longjmp(*escape, 1);
}

/* One bad sgemm_ (lda = 0, parameter 8): 1 when xerbla_ was reached and left by longjmp. */
static int bad_f77_call(void)
{
    jmp_buf here;
    volatile int escaped = 0;
    handler_info = 0;
    if (setjmp(here) == 0) {
        escape = &here;
        const int n = 2, zero_ld = 0;
        const float one = 1.0f;
        float A[4] = {0}, B[4] = {0}, C[4] = {0};
        sgemm_("N", "N", &n, &n, &n, &one, A, &zero_ld, B, &n, &one, C, &n, 1, 1);
    } else {
        escaped = 1;
    }
    escape = NULL;
    return escaped && handler_info == 8;
}

/* One bad row-major cblas_sgemm (ldb = 1 < n = 2: parameter 11, reported to xerbla_ as the
 * swapped call's ldb-turned-lda, Fortran position 8). */
static int bad_cblas_call(void)
{
    jmp_buf here;
    volatile int escaped = 0;
    handler_info = 0;
    if (setjmp(here) == 0) {
        escape = &here;
        float A[4] = {0}, B[4] = {0}, C[4] = {0};
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, A, 2, B, 1, 1.0f,
                    C, 2);
    } else {
        escaped = 1;
    }
    escape = NULL;
    return escaped && handler_info == 8 && handler_from_c == 1 && handler_row_major == 1;
}

/* The cblas call above, counting only its escape and position. */
static int bad_cblas_call_info(void)
{
    bad_cblas_call();
    return handler_info == 8;
}

static void *other_thread(void *arg)
{
    int *ok = arg;
    *ok = bad_f77_call() && handler_from_c == 0 && handler_row_major == 0 && bad_cblas_call();
    return NULL;
}

enum { kBadCalls = 500 };

static void *many_bad_calls(void *arg)
{
    int *escaped = arg;
    for (int i = 0; i < kBadCalls; ++i)
        *escaped += i % 2 ? bad_f77_call() : bad_cblas_call_info();
    return NULL;
}

int main(void)
{
    alarm(30); /* a report lock left held blocks the next bad call forever */
    EXPECT(bad_f77_call(), "first bad sgemm_: handler info %d", handler_info);
    EXPECT(bad_f77_call(), "second bad sgemm_, same thread: handler info %d", handler_info);
    EXPECT(bad_cblas_call(), "bad cblas_sgemm after two escapes: info %d, CallFromC %d, "
           "RowMajor %d", handler_info, handler_from_c, handler_row_major);
    /* Left by longjmp, the cblas report must not leave its globals to the next report. */
    EXPECT(bad_f77_call() && handler_from_c == 0 && handler_row_major == 0,
           "bad sgemm_ after an escaped cblas report: info %d, CallFromC %d, RowMajor %d",
           handler_info, handler_from_c, handler_row_major);
    int ok = 0;
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, other_thread, &ok) == 0, "pthread_create");
    pthread_join(t, NULL);
    EXPECT(ok, "bad calls from another thread after escapes on this one");

    /* Bad calls on several threads at once, each escaping: none may wait on another. */
    threads_at_once = 1;
    enum { kThreads = 4 };
    pthread_t many[kThreads];
    int escaped[kThreads] = {0};
    for (int i = 0; i < kThreads; ++i)
        EXPECT(pthread_create(&many[i], NULL, many_bad_calls, &escaped[i]) == 0, "pthread_create");
    for (int i = 0; i < kThreads; ++i) {
        pthread_join(many[i], NULL);
        EXPECT(escaped[i] == kBadCalls, "thread %d: %d of %d bad calls came back through "
               "xerbla_", i, escaped[i], kBadCalls);
    }

    /* The library still computes after all that. */
    const int n = 2;
    const float one = 1.0f, zero = 0.0f;
    float A[4] = {1, 2, 3, 4}, B[4] = {1, 0, 0, 1}, C[4] = {0};
    sgemm_("N", "N", &n, &n, &n, &one, A, &n, B, &n, &zero, C, &n, 1, 1);
    EXPECT(C[0] == 1 && C[1] == 2 && C[2] == 3 && C[3] == 4, "product after the escapes");
    return tg_test_result("test_blas_longjmp");
}
