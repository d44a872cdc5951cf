/*
 * Every CUDA rung, for real, where a GPU exists; exit code 77 (skipped) where none does (see
 * tg_test_need_gpu: TILEGEMM_REQUIRE_GPU=1 makes that a failure).
 *
 * The rungs come from tg_algos(), so a rung added to the registry is covered without a change
 * here.  Each one gets: host, device and managed operands, misaligned pointers, odd leading
 * dimensions, batches, shapes that need the launcher to slice the grid, split-K; every data
 * distribution of check.h (wide range, cancellation, 12-bit integers, Inf/NaN in A, B and C,
 * subnormals, near FLT_MAX) held to its arithmetic's rule (FFMA rungs bit-exact on integers,
 * TF32 rungs to the TF32 bounds); beta = 0 with C poisoned with NaN in device and managed
 * memory (check.c uploads the poison), alpha = 0 and k = 0 in device and managed memory; and
 * the RMS rule of `tilegemm verify` against the strict FMA path on the same data.
 *
 *   test_gpu_rungs [--seed N] [--algo NAME]     every rung, or the one named ("auto" adds the
 *                                               checks of a caller's stream)
 *   test_gpu_rungs --list                       prints tg_algos(), one a line (no GPU needed)
 * CTest runs it once per name that --list printed after the build (tg_test_per_rung in
 * tests/CMakeLists.txt), the rungs side by side.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rerun.h"
#include "testing.h"
#include "tilegemm.h"

static uint64_t g_seed = 99;
static int g_cases, g_refused; /* refused: outside the forced rung's constraints */

static void check(tg_handle *h, tg_handle *strict, const char *algo, tg_case c)
{
    tg_case_result r, s;
    const uint64_t seed = g_seed++;
    tg_check_case(h, &c, seed, &r);
    if (r.refused) { /* e.g. gemv8 with m and n over 8: not run, not counted */
        ++g_refused;
        return;
    }
    if (strict && r.rms >= 0) {
        tg_check_case(strict, &c, seed, &s);
        tg_check_against_strict(&c, &r, &s);
    }
    ++g_cases;
    char name[240], command[500];
    tg_case_name(&c, name, sizeof name);
    tg_case_command(&c, algo, seed, command, sizeof command);
    EXPECT(r.passed, "%s %s: %s\n  rerun: %s", algo, name, r.detail, command);
}

static void test_rung(const char *algo)
{
    tg_handle *h = NULL, *strict = NULL;
    if (tg_create(&h) != TG_SUCCESS || tg_set_algo(h, algo) != TG_SUCCESS ||
        tg_create(&strict) != TG_SUCCESS || tg_set_math(strict, TG_MATH_STRICT_FMA) != TG_SUCCESS) {
        EXPECT(0, "%s: setup failed: %s", algo, tg_last_error(h));
        return;
    }
    const tg_op ops[] = {TG_NO_TRANS, TG_TRANS};
    const int64_t sizes[] = {1, 7, 33, 127, 4097};
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
                    check(h, strict, algo, c);
                }
            }

    /* Every distribution, both layouts, all transposes, all three memories, beta = 0 (C
     * poisoned) and beta = 1 (C's own Inf and NaN read). */
    for (int d = 0; d < TG_DIST_COUNT; ++d)
        for (int l = 0; l < 2; ++l)
            for (int o = 0; o < 4; ++o)
                for (int memory = 0; memory < 3; ++memory) {
                    tg_case c = {.layout = l ? TG_COL_MAJOR : TG_ROW_MAJOR,
                                 .transa = ops[o >> 1], .transb = ops[o & 1],
                                 .m = 65 + 64 * (o & 1), .n = 97 - 32 * (o >> 1),
                                 .k = 300 + 37 * memory, .ld_pad = (o + memory) % 3,
                                 .alpha = o % 2 ? -2.0f : 1.0f, .beta = (l + o) % 2 ? 1.0f : 0.0f,
                                 .batch = memory == 2 ? 2 : 1,
                                 .memory = (tg_memory_choice)memory,
                                 .distribution = (tg_distribution)d};
                    check(h, strict, algo, c);
                }

    /* beta = 0 never reads C, alpha = 0 never reads A or B, k = 0 leaves beta * C: in device
     * and managed memory (C poisoned with NaN where beta = 0). */
    for (int memory = 1; memory < 3; ++memory) {
        const struct {
            float alpha, beta;
            int64_t k;
        } quick[] = {{0.0f, 0.0f, 33}, {0.0f, 2.0f, 33}, {0.0f, -1.0f, 0},
                     {1.5f, 0.0f, 0},  {1.5f, 0.5f, 0},  {1.0f, 0.0f, 129}};
        for (size_t q = 0; q < sizeof quick / sizeof *quick; ++q)
            for (int l = 0; l < 2; ++l)
                check(h, strict, algo,
                      (tg_case){.layout = l ? TG_COL_MAJOR : TG_ROW_MAJOR,
                                .transa = TG_NO_TRANS, .transb = l ? TG_TRANS : TG_NO_TRANS,
                                .m = 130, .n = 67, .k = quick[q].k, .ld_pad = 1,
                                .alpha = quick[q].alpha, .beta = quick[q].beta,
                                .batch = 1 + (int64_t)q % 2,
                                .memory = (tg_memory_choice)memory,
                                .distribution = q % 3 ? TG_DIST_UNIFORM : TG_DIST_SPECIAL});
    }

    /* Larger than any tile by a ragged margin, off every multiple of 16 and 32. */
    check(h, strict, algo,
          (tg_case){TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 509, 515, 517, 3, 1.0f, 0.0f, 1, 0,
                    0, 0, TG_CHECK_DEVICE, TG_DIST_UNIFORM});
    check(h, strict, algo,
          (tg_case){TG_COL_MAJOR, TG_TRANS, TG_TRANS, 1000, 1000, 1000, 0, 1.0f, 0.5f, 1, 0, 0,
                    0, TG_CHECK_DEVICE, TG_DIST_UNIFORM});
    /* Past the grid's 65535 limit on y (rows, for blocks of up to 128 rows) and z (batch): the
     * launcher slices. */
    check(h, NULL, algo,
          (tg_case){TG_ROW_MAJOR, TG_NO_TRANS, TG_TRANS, 65535 * 128 + 77, 3, 5, 0, 1.0f, 0.0f,
                    1, 0, 0, 0, TG_CHECK_DEVICE, TG_DIST_UNIFORM});
    check(h, NULL, algo,
          (tg_case){TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 3, 2, 4, 1, 1.0f, 1.0f, 65537, 0, 0,
                    0, TG_CHECK_DEVICE, TG_DIST_UNIFORM});
    /* Split-K through this rung: forced slices (with a short tail slice), and the planner's. */
    const int slices[] = {3, 16, 0};
    for (int s = 0; s < 3; ++s) {
        EXPECT(tg_set_split_k(h, slices[s]) == TG_SUCCESS, "split-K %d: %s", slices[s],
               tg_last_error(h));
        check(h, strict, algo,
              (tg_case){s % 2 ? TG_COL_MAJOR : TG_ROW_MAJOR, s ? TG_TRANS : TG_NO_TRANS,
                        TG_NO_TRANS, 33, 65, 1000 + 333 * s, 1, 1.5f, s ? 0.0f : -1.0f, 1, 0,
                        s == 1, 0, TG_CHECK_DEVICE, s == 2 ? TG_DIST_SPECIAL : TG_DIST_WIDE});
    }
    tg_set_split_k(h, 0);
    tg_destroy(h);
    tg_destroy(strict);
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
    check(h, NULL, "auto+stream",
          (tg_case){TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 300, 200, 100, 1, 1.0f, 0.0f, 1, 0,
                    0, 0, TG_CHECK_DEVICE, TG_DIST_UNIFORM});
    EXPECT(tg_set_stream(h, NULL) == TG_SUCCESS, "tg_set_stream(NULL): %s", tg_last_error(h));
    check(h, NULL, "auto+default-stream",
          (tg_case){TG_COL_MAJOR, TG_TRANS, TG_NO_TRANS, 64, 65, 66, 0, 2.0f, 1.0f, 2, 0, 0, 0,
                    TG_CHECK_HOST, TG_DIST_UNIFORM});
    tg_destroy(h);
    cudaStreamDestroy(stream);
}
#endif

int main(int argc, char **argv)
{
    const char *only = NULL;
    for (int i = 1; i < argc; ++i) {
        if (tg_test_seed_arg(argc, argv, &i, 10, &g_seed))
            continue;
        if (!strcmp(argv[i], "--algo") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--list")) {
            for (const char *const *a = tg_algos(); *a; ++a)
                printf("%s\n", *a);
            return 0;
        } else
            return fprintf(stderr, "usage: test_gpu_rungs [--seed N] [--algo NAME] | --list\n"), 2;
    }
    int known = !only;
    for (const char *const *a = tg_algos(); *a; ++a)
        known |= !strcmp(*a, only ? only : "");
    if (!known)
        return fprintf(stderr, "test_gpu_rungs: --algo %s is not in tg_algos()\n", only), 1;
    const int need = tg_test_need_gpu("test_gpu_rungs");
    if (need)
        return need;
    printf("test_gpu_rungs --seed %llu%s%s\n", (unsigned long long)g_seed, only ? " --algo " : "",
           only ? only : "");
    for (const char *const *a = tg_algos(); *a; ++a) {
        if (only && strcmp(only, *a))
            continue;
        printf("rung %s\n", *a);
        fflush(stdout);
        const int cases0 = g_cases, refused0 = g_refused;
        test_rung(*a);
        EXPECT(g_cases > cases0, "%s: its constraints refused every case", *a);
        if (g_refused > refused0)
            printf("  %d case(s) outside its constraints, not run\n", g_refused - refused0);
    }
#ifdef TG_HAVE_CUDA
    if (!only || !strcmp(only, "auto"))
        test_caller_stream();
#endif
    printf("test_gpu_rungs: %d cases\n", g_cases);
    return tg_test_result("test_gpu_rungs");
}
