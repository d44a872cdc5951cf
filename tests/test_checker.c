/*
 * Tests of the checker itself (check/check.c): it must pass a result the library got right and
 * fail one it got wrong.  A finite exact value beyond float32's range rounds to inf in float32,
 * so a product that stores inf there is right; every other difference stays a failure.
 * Exit code 0 when everything passes, 1 otherwise; each failure is printed.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "tilegemm.h"

static int failures = 0;

#define EXPECT(what, condition)                                                              \
    do {                                                                                     \
        if (!(condition)) {                                                                  \
            printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, what, #condition);            \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

/* The CPU backend on one case; returns whether the checker passed it, printing why not. */
static int cpu_case_passes(const tg_case *c, uint64_t seed)
{
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS || tg_set_backend(h, TG_BACKEND_CPU) != TG_SUCCESS) {
        printf("FAIL: no CPU handle: %s\n", tg_last_error(h));
        failures++;
        tg_destroy(h);
        return 0;
    }
    tg_case_result r;
    tg_check_case(h, c, seed, &r);
    tg_destroy(h);
    char name[240];
    tg_case_name(c, name, sizeof name);
    if (!r.passed)
        printf("  %s: %s\n", name, r.detail);
    return r.passed;
}

/* `tilegemm verify --algo cpu --shape 64x64x64 --alpha 3e38`: alpha times sums of uniform
 * products passes FLT_MAX for some outputs, whose exact value rounds to inf. */
static void test_overflow_to_inf(void)
{
    for (int layout = 0; layout < 2; ++layout)
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            const tg_case c = {.layout = layout ? TG_COL_MAJOR : TG_ROW_MAJOR,
                               .transa = TG_NO_TRANS, .transb = TG_TRANS, .m = 64, .n = 64,
                               .k = 64, .alpha = 3e38f, .beta = 0.0f, .batch = 1};
            EXPECT("alpha 3e38: outputs past FLT_MAX are inf in float32",
                   cpu_case_passes(&c, seed));
            tg_case cb = c;
            cb.beta = -1.5f, cb.alpha = -3e38f, cb.batch = 2;
            EXPECT("alpha -3e38, beta -1.5, batch 2", cpu_case_passes(&cb, seed));
        }
    /* Exact integer cases overflow too: 4 * 4 * 64 * 3e38 is far past FLT_MAX. */
    const tg_case exact = {.layout = TG_ROW_MAJOR, .transa = TG_NO_TRANS, .transb = TG_NO_TRANS,
                           .m = 33, .n = 17, .k = 64, .alpha = 3e38f, .beta = 0.0f, .batch = 1,
                           .small_ints = 1};
    EXPECT("exact inputs, alpha 3e38", cpu_case_passes(&exact, 7));
}

/* The comparison itself: inf is accepted only for a value that float32 rounds to it, with its
 * sign; every other wrong value is still caught. */
static void test_float_agrees(void)
{
    const double threshold = 0x1.ffffffp+127; /* FLT_MAX + half an ulp: rounds to inf */
    const float inf = INFINITY;
    EXPECT("6e38 is inf in float32", tg_float_agrees(inf, 6e38, 1e30));
    EXPECT("-6e38 is -inf in float32", tg_float_agrees(-inf, -6e38, 1e30));
    EXPECT("2e76 is inf in float32", tg_float_agrees(inf, 2e76, 0.0));
    EXPECT("the threshold itself rounds to inf", tg_float_agrees(inf, threshold, 0.0));
    EXPECT("within the bound of the threshold, inf is right",
           tg_float_agrees(inf, threshold - 1e30, 2e31));
    EXPECT("...and so is a float near FLT_MAX", tg_float_agrees(FLT_MAX, threshold - 1e30, 2e31));
    EXPECT("the same infinity", tg_float_agrees(inf, INFINITY, 0.0));
    EXPECT("NaN where the reference is NaN", tg_float_agrees(NAN, NAN, 0.0));
    EXPECT("a finite value within the bound", tg_float_agrees(1.0f + 0x1p-23f, 1.0, 1e-6));

    EXPECT("6e38 is not -inf", !tg_float_agrees(-inf, 6e38, 1e30));
    EXPECT("6e38 is not FLT_MAX", !tg_float_agrees(FLT_MAX, 6e38, 1e30));
    EXPECT("6e38 is not NaN", !tg_float_agrees(NAN, 6e38, 1e30));
    EXPECT("2e38 does not overflow", !tg_float_agrees(inf, 2e38, 1e30));
    EXPECT("FLT_MAX does not overflow", !tg_float_agrees(inf, FLT_MAX, 0.0));
    EXPECT("just under the threshold, exactly, does not overflow",
           !tg_float_agrees(inf, threshold - 1e30, 0.0));
    EXPECT("inf is not -inf", !tg_float_agrees(-inf, INFINITY, 0.0));
    EXPECT("inf is not FLT_MAX", !tg_float_agrees(FLT_MAX, INFINITY, 1e38));
    EXPECT("NaN is not 1", !tg_float_agrees(1.0f, NAN, 1.0));
    EXPECT("1 is not NaN", !tg_float_agrees(NAN, 1.0, 1.0));
    EXPECT("a finite value outside the bound", !tg_float_agrees(1.0f + 0x1p-23f, 1.0, 1e-8));
}

int main(void)
{
    test_float_agrees();
    test_overflow_to_inf();
    if (failures) {
        printf("test_checker: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_checker: all passed\n");
    return 0;
}
