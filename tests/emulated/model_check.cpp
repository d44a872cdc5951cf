/* test_emulated_rungs --model-check: the tensor-core model (tensor_core_model.h) on crafted
 * cases where it differs from IEEE FP32. */
#include <cmath>
#include <cstdio>
#include <cstring>

#include "tensor_core_model.h"

/*
 * The tensor-core model on crafted cases, each with the H100's answer and whether it differs
 * from IEEE FP32's (the exact c + sum of products rounded once to nearest): the accumulation
 * cases show truncation where round-to-nearest rounds up.
 */
int emulated_model_check()
{
    struct Crafted {
        const char *what;
        float a[8], b[8];
        float c;
        float tensor_core; /* what the H100 returns */
        bool differs;      /* from the exact result rounded to nearest FP32 */
    };
    const float q = 0x1.8p-13f; /* q e = 1.5 x 2^-26 = 0.1875 ulp(1): under the last extra bit */
    const float e = 0x1p-13f;
    const Crafted cases[] = {
        {"the sum is truncated to 24 bits: 1 + 0.75 ulp is 1", {0x1.8p-12f}, {0x1p-12f}, 1.0f,
         1.0f, true},
        {"truncation is toward zero: -1 - 0.75 ulp is -1", {0x1.8p-12f}, {-0x1p-12f}, -1.0f,
         -1.0f, true},
        {"products are aligned to the largest exponent with 2 bits beyond FP32's, the rest "
         "cut off: 1 + 8 x 0.1875 ulp is 1",
         {q, q, q, q, q, q, q, q}, {e, e, e, e, e, e, e, e}, 1.0f, 1.0f, true},
        {"what the 2 extra bits hold is summed: 1 + 4 x 0.25 ulp is 1 + 1 ulp",
         {0x1p-12f, 0x1p-12f, 0x1p-12f, 0x1p-12f}, {e, e, e, e}, 1.0f, 0x1.000002p0f, false},
        {"inputs lose their low 13 bits, truncated: (1 + 2^-11 + 2^-12) x 1 is 1",
         {0x1.0018p0f}, {1.0f}, 0.0f, 1.0f, true},
        {"a subnormal input is read as zero: 2^-127 x 2^100 is 0", {0x1p-127f}, {0x1p100f}, 0.0f,
         0.0f, true},
        {"a subnormal result is flushed: 2^-70 x 2^-60 is 0", {0x1p-70f}, {0x1p-60f}, 0.0f, 0.0f,
         true},
        {"the accumulator is read whole: 2^-127 + 2^-100 x 2^-26 is 1.5 x 2^-126",
         {0x1p-100f}, {0x1p-26f}, 0x1p-127f, 0x1.8p-126f, false},
        {"Inf x 0 is NaN", {INFINITY}, {0.0f}, 1.0f, NAN, false},
    };
    int failed = 0;
    for (const Crafted &t : cases) {
        double exact = (double)t.c; /* exact for these cases */
        for (int i = 0; i < 8; ++i)
            exact += (double)t.a[i] * (double)t.b[i];
        const float nearest = (float)exact;
        const float got = tc_model::block_fma(t.a, t.b, 8, t.c);
        auto same = [](float x, float y) {
            return std::isnan(x) ? std::isnan(y) : std::memcmp(&x, &y, sizeof x) == 0;
        };
        const bool ok = same(got, t.tensor_core) && !same(got, nearest) == t.differs;
        printf("%-4s %s: %a (round to nearest: %a)\n", ok ? "ok" : "FAIL", t.what, (double)got,
               (double)nearest);
        failed += !ok;
    }
    printf(failed ? "test_emulated_rungs --model-check: %d case(s) failed\n"
                  : "test_emulated_rungs --model-check: all passed\n",
           failed);
    return failed ? 1 : 0;
}
