/* The benchmark's suites; see suites.h. */
#include "suites.h"

#include <math.h>
#include <string.h>

#include "rng.h"

void tg_suite_shape(const char *suite, int64_t m, int64_t n, int64_t k,
                    const tg_suite_choices *choices,
                    void (*add)(void *ctx, const tg_suite_case *c), void *ctx)
{
    for (int t = 0; t < choices->ntrans; ++t)
        add(ctx, &(tg_suite_case){m, n, k, choices->trans[2 * t], choices->trans[2 * t + 1],
                                  choices->layout, suite});
}

void tg_suite_cases(const char *suite, int gpu, uint64_t seed, int count,
                    const tg_suite_choices *choices,
                    void (*add)(void *ctx, const tg_suite_case *c), void *ctx)
{
    static const int64_t squares[] = {1024, 2048, 4096, 4097, 8192, 16384};
    static const int64_t awkward[][3] = {
        {1000, 1000, 1000},   {4097, 4097, 4097},    {8192, 8192, 64},
        {127, 8191, 1023},    {65536, 64, 4096},     {8192, 8192, 256},
        {3000, 5000, 700},    {16384, 128, 16384},   {1024, 1024, 65536},
        {64, 65536, 4096}};
    const int all = strcmp(suite, "all") == 0;
    if (strcmp(suite, "quick") == 0) {
        static const int64_t on_gpu[] = {1024, 2048}, on_cpu[] = {256, 512, 1024};
        const int64_t *sizes = gpu ? on_gpu : on_cpu;
        for (int i = 0; i < (gpu ? 2 : 3); ++i)
            tg_suite_shape("quick", sizes[i], sizes[i], sizes[i], choices, add, ctx);
    }
    if (all || strcmp(suite, "squares") == 0)
        for (size_t i = 0; i < sizeof squares / sizeof squares[0]; ++i)
            tg_suite_shape("squares", squares[i], squares[i], squares[i], choices, add, ctx);
    if (all || strcmp(suite, "awkward") == 0)
        for (size_t i = 0; i < sizeof awkward / sizeof awkward[0]; ++i)
            tg_suite_shape("awkward", awkward[i][0], awkward[i][1], awkward[i][2], choices, add,
                           ctx);
    if (all || strcmp(suite, "transposes") == 0)
        for (int t = 0; t < 4; ++t)
            add(ctx, &(tg_suite_case){4096, 4096, 4096, (t & 2) ? TG_TRANS : TG_NO_TRANS,
                                      (t & 1) ? TG_TRANS : TG_NO_TRANS, choices->layout,
                                      "transposes"});
    if (all || strcmp(suite, "random") == 0) {
        const double lo = log(8.0), hi = log(32768.0);
        uint64_t state = seed;
        for (int i = 0; i < count; ++i) {
            int64_t d[3];
            for (int j = 0; j < 3; ++j) /* tg_random_unit is in [-1, 1) */
                d[j] = (int64_t)llround(exp(lo + (hi - lo) * 0.5 * (tg_random_unit(&state) + 1.0)));
            const uint64_t pick = tg_splitmix64(&state);
            add(ctx, &(tg_suite_case){d[0], d[1], d[2], pick & 1 ? TG_TRANS : TG_NO_TRANS,
                                      pick & 2 ? TG_TRANS : TG_NO_TRANS,
                                      pick & 4 ? TG_COL_MAJOR : TG_ROW_MAJOR, "random"});
        }
    }
}
