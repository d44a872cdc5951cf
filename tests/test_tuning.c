/* The tuned-table lookup: exactly the measured shape, same GPU, math mode and operand
 * orientation (shapes between rows are the cost model's); and the embedded table is well
 * formed. */
#include <string.h>

#include "testing.h"
#include "tilegemm.h"
#include "plan/tuning.h"

static const tg_tuned kTable[] = {
    {90, 4096, 4096, 4096, 1, 1, "warptile128", 0, TG_MATH_FP32, 0},
    {90, 1024, 1024, 1024, 1, 1, "blocktile64", 0, TG_MATH_FP32, 0},
    {90, 1024, 1024, 65536, 1, 1, "warptile128", 4, TG_MATH_FP32, 0},
    {90, 4096, 4096, 4096, 0, 1, "blocktile128", 0, TG_MATH_FP32, 0},
    {80, 4096, 4096, 4096, 1, 1, "tiled32", 0, TG_MATH_FP32, 0},
    {90, 4096, 4096, 4096, 1, 1, "tf32rung", 0, TG_MATH_TF32, 0},
    {90, 4096, 4096, 4096, 1, 1, "blocktile64", 0, TG_MATH_STRICT_FMA, 0},
};
static const int kCount = (int)(sizeof kTable / sizeof kTable[0]);

static const char *lookup_math(int math, int cc, int64_t m, int64_t n, int64_t k, int a_k,
                               int b_n)
{
    const tg_problem p = {.m = m, .n = n, .k = k, .a_rs = a_k ? k : 1, .a_cs = a_k ? 1 : m,
                          .b_rs = b_n ? n : 1, .b_cs = b_n ? 1 : k, .batch = 1};
    const tg_tuned *t = tg_tuning_lookup(kTable, kCount, cc, math, &p);
    return t ? t->algo : "(none)";
}

static const char *lookup(int cc, int64_t m, int64_t n, int64_t k, int a_k, int b_n)
{
    return lookup_math(TG_MATH_FP32, cc, m, n, k, a_k, b_n);
}

#define EXPECT_ALGO(want, ...)                                                                    \
    do {                                                                                          \
        const char *got = lookup(__VA_ARGS__);                                                    \
        EXPECT(strcmp(got, want) == 0, "lookup(%s) gave %s, wanted %s", #__VA_ARGS__, got, want); \
    } while (0)

int main(void)
{
    EXPECT_ALGO("warptile128", 90, 4096, 4096, 4096, 1, 1);  /* exact */
    EXPECT_ALGO("(none)", 90, 4096, 4096, 4095, 1, 1);       /* one off in k: not this row */
    EXPECT_ALGO("(none)", 90, 4097, 4096, 4096, 1, 1);       /* nor in m */
    EXPECT_ALGO("(none)", 90, 4096, 2048, 4096, 1, 1);       /* nor 2x away in n */
    EXPECT_ALGO("blocktile64", 90, 1024, 1024, 1024, 1, 1);
    EXPECT_ALGO("warptile128", 90, 1024, 1024, 65536, 1, 1); /* the long-k row */
    EXPECT_ALGO("blocktile128", 90, 4096, 4096, 4096, 0, 1); /* orientation is part of the key */
    EXPECT_ALGO("tiled32", 80, 4096, 4096, 4096, 1, 1);      /* and so is the GPU */
    EXPECT_ALGO("(none)", 75, 4096, 4096, 4096, 1, 1);
    EXPECT_ALGO("(none)", 90, 127, 8191, 1023, 1, 1);        /* 8x from every row in m */
    EXPECT_ALGO("(none)", 90, 4096, 4096, 4096, 0, 0);
    /* The math mode is part of the key. */
    EXPECT(strcmp(lookup_math(TG_MATH_TF32, 90, 4096, 4096, 4096, 1, 1), "tf32rung") == 0,
           "tf32 row");
    EXPECT(strcmp(lookup_math(TG_MATH_STRICT_FMA, 90, 4096, 4096, 4096, 1, 1), "blocktile64") == 0,
           "strict row");
    const tg_problem p = {.m = 64, .n = 64, .k = 64, .a_cs = 1, .b_cs = 1, .batch = 1};
    EXPECT(tg_tuning_lookup(kTable, 0, 90, 0, &p) == NULL, "empty table");
    /* The embedded table: every row names a shape and an algo. */
    for (int i = 0; i < tg_tuning_count; ++i)
        EXPECT(tg_tuning_table[i].m > 0 && tg_tuning_table[i].n > 0 &&
                   tg_tuning_table[i].k > 0 && tg_tuning_table[i].algo[0],
               "embedded row %d is malformed", i);
    return tg_test_result("test_tuning");
}
