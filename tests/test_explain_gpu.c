/*
 * Tests of tg_explain_gpu, the public entry point `tilegemm explain` asks for the rung a GPU
 * of given compute capability and SM count would run, and why.  Runs without a GPU: a build
 * with CUDA rungs plans for the H100's model (sm_90, 132 SMs); a build without them must say
 * so.  Exit code 0 when everything passes, 1 otherwise; each failure is printed.
 */
#include <stdio.h>
#include <string.h>

#include "tilegemm.h"
#include "plan/tuning.h"

static int failures = 0;

#define EXPECT(what, condition)                                                              \
    do {                                                                                     \
        if (!(condition)) {                                                                  \
            printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, what, #condition);            \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

static int is_rung(const char *name)
{
    for (const char *const *a = tg_algos(); *a; ++a)
        if (strcmp(*a, name) == 0 && strcmp(name, "auto") != 0)
            return 1;
    return 0;
}

/* Row-major NN m x n x k with the tightest leading dimensions, on sm_90 with 132 SMs. */
static tg_status explain_h100(tg_handle *h, int64_t m, int64_t n, int64_t k, const char **algo,
                              int *split, char *why, size_t size)
{
    return tg_explain_gpu(h, 90, 132, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, m, n, k,
                          tg_min_ld(TG_ROW_MAJOR, TG_NO_TRANS, m, k),
                          tg_min_ld(TG_ROW_MAJOR, TG_NO_TRANS, k, n),
                          tg_min_ld(TG_ROW_MAJOR, TG_NO_TRANS, m, n), algo, split, why, size);
}

int main(void)
{
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS) {
        printf("FAIL: tg_create: %s\n", tg_last_error(NULL));
        return 1;
    }
    const char *algo = NULL;
    int split = 0;
    char why[2048];

    /* Argument errors, named as tg_sgemm names them. */
    EXPECT("lda under k", tg_explain_gpu(h, 90, 132, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 64,
                                         64, 64, 63, 64, 64, &algo, &split, why, sizeof why) ==
                              TG_ERROR_INVALID_ARGUMENT &&
                              strstr(tg_last_error(h), "lda"));
    EXPECT("NULL algo", tg_explain_gpu(h, 90, 132, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 8, 8,
                                       8, 8, 8, 8, NULL, &split, why, sizeof why) ==
                            TG_ERROR_INVALID_ARGUMENT);
    EXPECT("no buffer", explain_h100(h, 8, 8, 8, &algo, &split, why, 0) ==
                            TG_ERROR_INVALID_ARGUMENT);
    EXPECT("a negative compute capability",
           tg_explain_gpu(h, -1, 132, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 8, 8, 8, 8, 8, 8,
                          &algo, &split, why, sizeof why) == TG_ERROR_INVALID_ARGUMENT &&
               strstr(tg_last_error(h), "compute_capability"));
    /* k = 0: nothing to compute, no rung, on any build. */
    EXPECT("k = 0", explain_h100(h, 8, 8, 0, &algo, &split, why, sizeof why) == TG_SUCCESS &&
                        strcmp(algo, "none") == 0 && split == 1 && why[0]);

    if (tg_algo_count() == 0) {
        EXPECT("a build without rungs says so",
               explain_h100(h, 512, 512, 512, &algo, &split, why, sizeof why) ==
                       TG_ERROR_NOT_SUPPORTED &&
                   strstr(tg_last_error(h), "no CUDA rungs") && strcmp(algo, "none") == 0);
    } else {
        /* The cost model decides a shape without a tuned row, with its prediction. */
        EXPECT("4096x4000x3000 strict", tg_set_math(h, TG_MATH_STRICT_FMA) == TG_SUCCESS &&
                                            explain_h100(h, 4096, 4000, 3000, &algo, &split, why,
                                                         sizeof why) == TG_SUCCESS);
        EXPECT("4096x4000x3000 strict names a rung", algo && is_rung(algo) && split >= 1);
        EXPECT("4096x4000x3000 strict: the cost model's reason",
               strstr(why, "rung: ") && strstr(why, algo) &&
                   strstr(why, "ranked first by the timed calls nearest this one and the cost model"));
        /* The tuned row of 1024^3 row-major NN fp32 on sm_90 decides, with its speed. */
        EXPECT("1024^3 fp32", tg_set_math(h, TG_MATH_FP32) == TG_SUCCESS &&
                                  explain_h100(h, 1024, 1024, 1024, &algo, &split, why,
                                               sizeof why) == TG_SUCCESS);
        char tuned[64] = "(no fp32 row for 1024^3 on sm_90)";
        for (int i = 0; i < tg_tuning_count; ++i) {
            const tg_tuned *row = &tg_tuning_table[i];
            if (row->cc == 90 && row->m == 1024 && row->n == 1024 && row->k == 1024 &&
                row->a_k_contiguous && row->b_n_contiguous && row->math == TG_MATH_FP32)
                snprintf(tuned, sizeof tuned, "tuned table: %.1f TFLOP/s", row->tflops);
        }
        EXPECT("1024^3 fp32: the tuned row and its speed", strstr(why, tuned));
        /* A forced rung is obeyed and said to be. */
        EXPECT("forced ffma128x128", tg_set_algo(h, "ffma128x128") == TG_SUCCESS &&
                                         explain_h100(h, 4096, 4000, 3000, &algo, &split, why,
                                                      sizeof why) == TG_SUCCESS &&
                                         strcmp(algo, "ffma128x128") == 0 &&
                                         strstr(why, "forced by tg_set_algo"));
        tg_set_algo(h, "auto");
    }
    /* Compute capability 0 plans for the handle's GPU: refused without one. */
    if (!tg_backend_available(TG_BACKEND_CUDA))
        EXPECT("this GPU, without one",
               tg_explain_gpu(h, 0, 0, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 64, 64, 64, 64,
                              64, 64, &algo, &split, why, sizeof why) == TG_ERROR_NOT_SUPPORTED);
    tg_destroy(h);
    if (failures) {
        printf("test_explain_gpu: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_explain_gpu: all passed\n");
    return 0;
}
