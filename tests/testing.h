/* The tests' one assertion macro: counts failures, reports the line, keeps going. */
#ifndef TG_TESTING_H
#define TG_TESTING_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegemm.h"

#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#endif

static int tg_test_failures;

#define EXPECT(cond, ...)                                                                        \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            ++tg_test_failures;                                                                  \
            fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond);                  \
            fprintf(stderr, __VA_ARGS__);                                                        \
            fputc('\n', stderr);                                                                 \
        }                                                                                        \
    } while (0)

/* Exit code for CTest: 0 passed, 1 failed. */
static inline int tg_test_result(const char *name)
{
    if (tg_test_failures)
        fprintf(stderr, "%s: %d failure(s)\n", name, tg_test_failures);
    else
        printf("%s: all passed\n", name);
    return tg_test_failures ? 1 : 0;
}

/* The tests' one seed option: 1 when argv[*i] is "--seed N", which it reads into *seed, leaving *i
 * on N; 0 for anything else, for the test's own options or its usage line.  base is strtoull's:
 * 0 where the test prints its seed in hex, so that the 0x... it prints reads back; 10 where it
 * prints it in decimal. */
static inline int tg_test_seed_arg(int argc, char **argv, int *i, int base, uint64_t *seed)
{
    if (strcmp(argv[*i], "--seed") || *i + 1 >= argc)
        return 0;
    *seed = strtoull(argv[++*i], NULL, base);
    return 1;
}

/* CTest's SKIP_RETURN_CODE: the test could not run here, which is not a pass. */
#define TG_TEST_SKIP 77

/* 1 when TILEGEMM_REQUIRE_GPU is set (and not "0"): every skip for want of a GPU becomes a
 * failure, so that a broken set-up on a GPU machine cannot pass as "skipped". */
static inline int tg_test_require_gpu(void)
{
    const char *v = getenv("TILEGEMM_REQUIRE_GPU");
    return v && *v && strcmp(v, "0") != 0;
}

/* For GPU tests: 0 when a GPU is there to test; otherwise the exit code, after one line saying
 * why.  Skipped (77) only when the machine has no GPU: no device, or no NVIDIA driver at all
 * (cudaGetDeviceCount then says "insufficient driver" but libcuda cannot even be loaded).  Any
 * other CUDA error is a failure: it is a broken set-up, not a machine without a GPU.  With
 * TILEGEMM_REQUIRE_GPU=1 a skip is a failure too. */
static inline int tg_test_need_gpu(const char *name)
{
    const char *why = "this build has no CUDA backend";
#ifdef TG_HAVE_CUDA
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count > 0) {
        if (tg_backend_available(TG_BACKEND_CUDA))
            return 0;
        printf("%s: FAILED: the CUDA runtime sees %d GPU(s) but tilegemm finds none\n", name,
               count);
        return 1;
    }
    int no_gpu = e == cudaSuccess || e == cudaErrorNoDevice;
    why = "no GPU found (cudaErrorNoDevice)";
    if (e == cudaErrorInsufficientDriver) {
        void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!driver) {
            no_gpu = 1;
            why = "no NVIDIA driver found (libcuda.so.1 cannot be loaded)";
        } else {
            dlclose(driver);
        }
    }
    if (!no_gpu) {
        printf("%s: FAILED: cudaGetDeviceCount: %s (%s): a broken CUDA set-up, not a machine "
               "without a GPU\n",
               name, cudaGetErrorName(e), cudaGetErrorString(e));
        return 1;
    }
#endif
    if (tg_test_require_gpu()) {
        printf("%s: FAILED: TILEGEMM_REQUIRE_GPU is set but %s\n", name, why);
        return 1;
    }
    printf("%s: SKIPPED, %s\n", name, why);
    return TG_TEST_SKIP;
}

#endif
