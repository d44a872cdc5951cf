/*
 * Every CUDA rung, for real, where a GPU exists; exit code 77 (skipped) where none does.
 * Host, device and managed operands, misaligned pointers, odd leading dimensions, batches,
 * a caller's stream, shapes that need the launcher to slice the grid, and one large product.
 */
#include <string.h>

#include "check.h"
#include "testing.h"
#include "tilegemm.h"

#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static void check(tg_handle *h, const char *algo, tg_case c, uint64_t seed)
{
    tg_case_result r;
    tg_check_case(h, &c, seed, &r);
    char name[200];
    tg_case_name(&c, name, sizeof name);
    EXPECT(r.passed, "%s %s: %s", algo, name, r.detail);
}

static void test_rung(const char *algo)
{
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS || tg_set_algo(h, algo) != TG_SUCCESS) {
        EXPECT(0, "%s: setup failed: %s", algo, tg_last_error(h));
        return;
    }
    const tg_op ops[] = {TG_NO_TRANS, TG_TRANS};
    const int64_t sizes[] = {1, 7, 33, 127, 4097};
    uint64_t seed = 99;
    for (int l = 0; l < 2; ++l)
        for (int o = 0; o < 4; ++o)
            for (int s = 0; s < 5; ++s) {
                const int64_t m = sizes[s], n = sizes[(s + 2) % 5], k = sizes[(s + 3) % 5];
                /* keep the float64 reference fast: no 4097^2 outputs with k = 4097 */
                if (m * n * k > (int64_t)1 << 27)
                    continue;
                for (int memory = 0; memory < 3; ++memory) {
                    tg_case c = {.layout = l ? TG_COL_MAJOR : TG_ROW_MAJOR,
                                 .transa = ops[o >> 1], .transb = ops[o & 1], .m = m, .n = n,
                                 .k = k, .ld_pad = (s + memory) % 3, .alpha = 1.25f,
                                 .beta = memory == 1 ? 0.0f : -0.75f,
                                 .batch = memory == 2 ? 3 : 1, .share_a = o == 1,
                                 .misalign = (s + o) % 2, .small_ints = s == 2,
                                 .memory = (tg_memory_choice)memory};
                    if (c.small_ints)
                        c.alpha = 1.0f, c.beta = c.beta == 0.0f ? 0.0f : 1.0f;
                    check(h, algo, c, seed++);
                }
            }
    /* Larger than any tile by a ragged margin, off every multiple of 16 and 32. */
    check(h, algo,
          (tg_case){TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 509, 515, 517, 3, 1.0f, 0.0f, 1, 0,
                    0, 0, TG_CHECK_DEVICE},
          seed++);
    check(h, algo,
          (tg_case){TG_COL_MAJOR, TG_TRANS, TG_TRANS, 1000, 1000, 1000, 0, 1.0f, 0.5f, 1, 0, 0,
                    0, TG_CHECK_DEVICE},
          seed++);
    /* Past the grid's 65535 limit on y (rows, for blocks of up to 128 rows) and z (batch): the
     * launcher slices. */
    check(h, algo,
          (tg_case){TG_ROW_MAJOR, TG_NO_TRANS, TG_TRANS, 65535 * 128 + 77, 3, 5, 0, 1.0f, 0.0f,
                    1, 0, 0, 0, TG_CHECK_DEVICE},
          seed++);
    check(h, algo,
          (tg_case){TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 3, 2, 4, 1, 1.0f, 1.0f, 65537, 0, 0,
                    0, TG_CHECK_DEVICE},
          seed++);
    /* Split-K through this rung: forced slices (with a short tail slice), and the planner's. */
    const int slices[] = {3, 16, 0};
    for (int s = 0; s < 3; ++s) {
        EXPECT(tg_set_split_k(h, slices[s]) == TG_SUCCESS, "split-K %d: %s", slices[s],
               tg_last_error(h));
        check(h, algo,
              (tg_case){s % 2 ? TG_COL_MAJOR : TG_ROW_MAJOR, s ? TG_TRANS : TG_NO_TRANS,
                        TG_NO_TRANS, 33, 65, 1000 + 333 * s, 1, 1.5f, s ? 0.0f : -1.0f, 1, 0,
                        s == 1, 0, TG_CHECK_DEVICE},
              seed++);
    }
    tg_set_split_k(h, 0);
    tg_destroy(h);
}

#ifdef TG_HAVE_CUDA
/* Work on a caller's stream is ordered on it; tg_set_stream(NULL) returns to the default. */
static void test_caller_stream(void)
{
    tg_handle *h;
    cudaStream_t stream;
    if (tg_create(&h) != TG_SUCCESS || cudaStreamCreate(&stream) != cudaSuccess) {
        EXPECT(0, "stream setup: %s", tg_last_error(h));
        return;
    }
    EXPECT(tg_set_stream(h, stream) == TG_SUCCESS && tg_get_stream(h) == (void *)stream,
           "tg_set_stream: %s", tg_last_error(h));
    check(h, "auto+stream",
          (tg_case){TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 300, 200, 100, 1, 1.0f, 0.0f, 1, 0,
                    0, 0, TG_CHECK_DEVICE},
          7);
    EXPECT(tg_set_stream(h, NULL) == TG_SUCCESS, "tg_set_stream(NULL): %s", tg_last_error(h));
    check(h, "auto+default-stream",
          (tg_case){TG_COL_MAJOR, TG_TRANS, TG_NO_TRANS, 64, 65, 66, 0, 2.0f, 1.0f, 2, 0, 0, 0,
                    TG_CHECK_HOST},
          8);
    tg_destroy(h);
    cudaStreamDestroy(stream);
}
#endif

int main(void)
{
    if (!tg_backend_available(TG_BACKEND_CUDA)) {
        printf("test_gpu_rungs: SKIPPED, no GPU found (or no CUDA backend in this build)\n");
        return TG_TEST_SKIP;
    }
    const char *const *algos = tg_algos();
    for (const char *const *a = algos; *a; ++a) {
        printf("rung %s\n", *a);
        fflush(stdout);
        test_rung(*a);
    }
#ifdef TG_HAVE_CUDA
    test_caller_stream();
#endif
    return tg_test_result("test_gpu_rungs");
}
