/*
 * Unloading the library after multithreaded CPU products: a program that dlopen()s it, runs
 * products on the CPU backend's thread pool and dlclose()s it, several times over, must run
 * and exit cleanly.  The pool's workers must be gone before the library's code is unmapped:
 * a worker left sleeping in it crashes when it wakes (at the next dlopen, or at exit).
 *
 *   test_unload LIBRARY [RUNS [CYCLES]]
 *
 * RUNS processes (forked before the library is ever loaded, so each starts clean) each load,
 * use and unload LIBRARY CYCLES times and then exit; every one must exit 0.  A crash shows as
 * a signal, a hang as the alarm's SIGALRM.  This program does not link the library: it knows
 * it only through dlopen, as Python's ctypes or a plugin host does.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilegemm.h"

enum { N = 192, PRODUCTS = 4 };

typedef tg_status (*create_fn)(tg_handle **);
typedef tg_status (*destroy_fn)(tg_handle *);
typedef tg_status (*set_backend_fn)(tg_handle *, tg_backend);
typedef tg_status (*sgemm_fn)(tg_handle *, tg_layout, tg_op, tg_op, int64_t,
                              int64_t, int64_t, float, const float *, int64_t, const float *,
                              int64_t, float, float *, int64_t);

/* Threads in this process now. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    int count = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        count += e->d_name[0] != '.';
    closedir(d);
    return count;
}

/* One load, use and unload.  Returns 0, or a code saying what went wrong (the child's exit). */
static int cycle(const char *path, float *A, float *B, float *C, int *most_threads)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 3;
    }
    create_fn create = (create_fn)dlsym(lib, "tg_create");
    destroy_fn destroy = (destroy_fn)dlsym(lib, "tg_destroy");
    set_backend_fn set_backend = (set_backend_fn)dlsym(lib, "tg_set_backend");
    sgemm_fn sgemm = (sgemm_fn)dlsym(lib, "tg_sgemm");
    if (!create || !destroy || !set_backend || !sgemm) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return 4;
    }
    tg_handle *h = NULL;
    if (create(&h) != TG_SUCCESS || set_backend(h, TG_BACKEND_CPU) != TG_SUCCESS)
        return 5;
    for (int r = 0; r < PRODUCTS; ++r) {
        if (sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, N, N, N, 1.0f, A, N, B, N, 0.0f, C,
                  N) != TG_SUCCESS)
            return 6;
        for (size_t i = 0; i < (size_t)N * N; ++i)
            if (C[i] != 2.0f * N)
                return 7;
        const int threads = thread_count();
        if (threads > *most_threads)
            *most_threads = threads;
    }
    destroy(h);
    if (dlclose(lib) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 8;
    }
    /* still loaded: nothing was unmapped, and the test would test nothing */
    void *again = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (again) {
        dlclose(again);
        fprintf(stderr, "the library stayed loaded after dlclose\n");
        return 9;
    }
    return 0;
}

static void child(const char *path, int cycles)
{
    alarm(30); /* a hang is a failure too (a clean run takes about a second) */
    float *A = malloc(sizeof(float) * N * N), *B = malloc(sizeof(float) * N * N);
    float *C = malloc(sizeof(float) * N * N);
    if (!A || !B || !C)
        _exit(2);
    for (size_t i = 0; i < (size_t)N * N; ++i)
        A[i] = 1.0f, B[i] = 2.0f;
    int most_threads = 0;
    for (int c = 0; c < cycles; ++c) {
        const int status = cycle(path, A, B, C, &most_threads);
        if (status)
            _exit(status);
    }
    /* the products ran on more than one thread, or the pool was never tested */
    if (most_threads < 2) {
        fprintf(stderr, "the products ran on %d thread(s)\n", most_threads);
        _exit(10);
    }
    free(A), free(B), free(C);
    exit(0); /* a full exit, with the libraries' destructors and the process's teardown */
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_unload LIBRARY [RUNS [CYCLES]]\n");
        return 2;
    }
    const int runs = argc > 2 ? atoi(argv[2]) : 20, cycles = argc > 3 ? atoi(argv[3]) : 4;
    /* a multithreaded product on any machine (read when OpenMP's runtime loads) */
    setenv("OMP_NUM_THREADS", "4", 0);
    int failed = 0;
    for (int r = 0; r < runs; ++r) {
        fflush(NULL);
        const pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0)
            child(argv[1], cycles);
        int status = 0;
        if (waitpid(pid, &status, 0) != pid) {
            perror("waitpid");
            return 1;
        }
        if (WIFSIGNALED(status)) {
            fprintf(stderr, "run %d: killed by signal %d (%s)\n", r + 1, WTERMSIG(status),
                    strsignal(WTERMSIG(status)));
            ++failed;
        } else if (WEXITSTATUS(status) != 0) {
            fprintf(stderr, "run %d: exit %d\n", r + 1, WEXITSTATUS(status));
            ++failed;
        }
    }
    if (failed) {
        fprintf(stderr, "test_unload: %d of %d runs (%d load/unload cycles each) failed\n", failed,
                runs, cycles);
        return 1;
    }
    printf("test_unload: %d runs of %d load/unload cycles, all clean\n", runs, cycles);
    return 0;
}
