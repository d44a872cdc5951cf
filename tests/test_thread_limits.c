/*
 * The CPU backend under memory pressure: with little address space left, a 512^3 product must
 * return a status (TG_SUCCESS with the right C, or TG_ERROR_ALLOCATION with C untouched) and
 * never end the process from inside the library, as libgomp's "Thread creation failed" did.
 * Each attempt runs in a child process that limits its own address space (RLIMIT_AS) to what
 * it uses plus a margin; the parent checks that the child returned from the call.  A last
 * child runs after its parent has used the pool, so the pool must start again after fork()
 * (where CUDA is not set up in that parent: CUDA cannot be used after a fork).
 *
 * Run with OMP_NUM_THREADS=4 (set by CTest) so that the product asks for threads on any
 * machine.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilegemm.h"
#include "testing.h"

enum { N = 512, RETURNED_OK = 10, RETURNED_ALLOCATION = 11, WRONG = 12 };

/* The product of A = all 1 and B = all 2 is 2N everywhere. */
static int run_product(tg_handle *h, float *A, float *B, float *C)
{
    const tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, N, N, N, 1.0f, A, N,
                                 B, N, 0.0f, C, N);
    if (s == TG_ERROR_ALLOCATION)
        return C[0] == -1.0f && C[(size_t)N * N - 1] == -1.0f ? RETURNED_ALLOCATION : WRONG;
    if (s != TG_SUCCESS)
        return WRONG;
    for (size_t i = 0; i < (size_t)N * N; ++i)
        if (C[i] != 2.0f * N)
            return WRONG;
    return RETURNED_OK;
}

static size_t address_space_in_use(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* In the child: a handle (its own, unless h is given), operands, then the limit (margin bytes
 * over what is in use), then the call.  Exits with what the call did. */
static void child(tg_handle *h, size_t margin)
{
    alarm(60); /* a hang is a failure too */
    if (!h && tg_create(&h) != TG_SUCCESS)
        _exit(WRONG + 2);
    float *A = malloc(sizeof(float) * N * N), *B = malloc(sizeof(float) * N * N);
    float *C = malloc(sizeof(float) * N * N);
    if (!A || !B || !C)
        _exit(WRONG);
    for (size_t i = 0; i < (size_t)N * N; ++i)
        A[i] = 1.0f, B[i] = 2.0f, C[i] = -1.0f;
    if (margin) {
        const size_t used = address_space_in_use();
        struct rlimit limit = {used + margin, used + margin};
        if (used == 0 || setrlimit(RLIMIT_AS, &limit) != 0)
            _exit(WRONG + 1);
    }
    _exit(run_product(h, A, B, C));
}

/* Forks a child that runs the product with `margin` to spare (on handle h, NULL: its own) and
 * checks that it returned from tg_sgemm with a status. */
static void expect_returned(tg_handle *h, size_t margin, const char *when)
{
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0)
        child(h, margin);
    int status = 0;
    EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid, "fork or waitpid failed");
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    EXPECT(code == RETURNED_OK || code == RETURNED_ALLOCATION,
           "%s, %zu KiB of address space to spare: the child %s %d instead of returning from "
           "tg_sgemm with a status",
           when, margin / 1024, WIFEXITED(status) ? "exited with" : "was killed by signal",
           WIFEXITED(status) ? code : WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    printf("%s, %6zu KiB to spare: %s\n", when, margin / 1024,
           code == RETURNED_OK            ? "TG_SUCCESS, C right"
           : code == RETURNED_ALLOCATION ? "TG_ERROR_ALLOCATION, C untouched"
                                          : "FAILED");
}

/* In a child: a handle, one unlimited product (the pool starts), then the limited calls in
 * grandchildren on that handle.  Where CUDA runs, the handle has set it up, and CUDA cannot be
 * used in a process forked after that: those calls are skipped (CPU-only machines, CI's, run
 * them).  Exits 0 when every call returned, TG_TEST_SKIP when skipped, 1 otherwise. */
static int after_a_product(void)
{
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS)
        return 1;
    if (tg_backend_available(TG_BACKEND_CUDA)) {
        printf("after the parent's product: skipped (CUDA is set up in this process, and a "
               "process forked from it cannot use CUDA)\n");
        return TG_TEST_SKIP;
    }
    float *A = malloc(sizeof(float) * N * N), *B = malloc(sizeof(float) * N * N);
    float *C = malloc(sizeof(float) * N * N);
    for (size_t i = 0; i < (size_t)N * N; ++i)
        A[i] = 1.0f, B[i] = 2.0f, C[i] = -1.0f;
    EXPECT(run_product(h, A, B, C) == RETURNED_OK, "the unlimited product is wrong");
    free(A), free(B), free(C);
    expect_returned(h, 0, "after the parent's product");
    expect_returned(h, 2 << 20, "after the parent's product");
    char plan[1024];
    if (tg_explain(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, N, N, N, NULL, N, NULL, N, NULL, N,
                   plan, sizeof plan) == TG_SUCCESS)
        printf("%s", plan);
    tg_destroy(h);
    return tg_test_result("test_thread_limits (after a product)") == 0 ? 0 : 1;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TG_SANITIZED 1 /* the sanitizers' shadow memory does not live under an RLIMIT_AS */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TG_SANITIZED 1
#endif
#endif

int main(void)
{
#ifdef TG_SANITIZED
    printf("test_thread_limits: skipped under a sanitizer (its shadow memory needs the address "
           "space this test takes away)\n");
    return TG_TEST_SKIP;
#endif
    setenv("TILEGEMM_BACKEND", "cpu", 1);
    /* The parent never calls the library, so no child inherits a CUDA set-up (CUDA cannot be
     * used after fork): each child makes its own handle.  Before the process has made any
     * thread, the pool is created under the limit. */
    const size_t margins[] = {256 << 10, 1 << 20, 2 << 20, 4 << 20, 16 << 20};
    for (size_t i = 0; i < sizeof margins / sizeof margins[0]; ++i)
        expect_returned(NULL, margins[i], "no threads yet");

    /* After a process's own pool has run: the forked child has none of its threads. */
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0)
        _exit(after_a_product());
    int status = 0;
    EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid, "fork or waitpid failed");
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    EXPECT(code == 0 || code == TG_TEST_SKIP, "the calls after a product failed (exit %d)", code);
    return tg_test_result("test_thread_limits");
}
