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
    /* The INT8 product: exact at its extremes (32 x (-128)^2 = 2^19), and a sum past INT32
     * reported as wrapped. */
    {
        int8_t a[32], b[32];
        for (int i = 0; i < 32; ++i)
            a[i] = -128, b[i] = (int8_t)(i % 2 ? -128 : 127);
        bool wrapped = true;
        const int32_t got = tc_model::s8_dot(a, b, 32, -7, &wrapped);
        const bool ok = got == -7 + 16 * 16384 - 16 * 16256 && !wrapped;
        printf("%-4s s8: 16 x (-128)^2 + 16 x (-128 x 127) - 7 is %d, exactly\n",
               ok ? "ok" : "FAIL", got);
        failed += !ok;
        for (int i = 0; i < 32; ++i)
            b[i] = -128;
        tc_model::s8_dot(a, b, 32, INT32_MAX - 1000, &wrapped);
        printf("%-4s s8: a sum past INT32 is reported\n", wrapped ? "ok" : "FAIL");
        failed += !wrapped;
    }
    printf(failed ? "test_emulated_rungs --model-check: %d case(s) failed\n"
                  : "test_emulated_rungs --model-check: all passed\n",
           failed);
    return failed ? 1 : 0;
}
