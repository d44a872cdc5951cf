/*
 * The benchmark's suites (bench/suites.md), named once for `tilegemm bench` and `tilegemm tune`:
 * a cache tuned on a suite covers exactly what the benchmark times.
 */
#ifndef TG_SUITES_H
#define TG_SUITES_H

#include <stdint.h>

#include "tilegemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A case to run, every field decided. */
typedef struct tg_suite_case {
    int64_t m, n, k;
    tg_op ta, tb;
    tg_layout layout;
    const char *suite;  /* "squares", "awkward", "transposes", "random", "quick" or the caller's */
} tg_suite_case;

/* What the caller decides where a suite does not: a shape runs once for each of the ntrans
 * pairs (op(A), op(B)) in trans[2 * t], trans[2 * t + 1], in layout; the transposes suite's
 * cases take layout; random cases decide both themselves. */
typedef struct tg_suite_choices {
    const tg_op *trans;
    int ntrans;
    tg_layout layout;
} tg_suite_choices;

/* Calls add(ctx, case) for each case of the named suite (squares, awkward, transposes,
 * random, all or quick) in order; gpu picks quick's GPU or CPU shapes; seed and count are the
 * random suite's: m, n and k log-uniform in [8, 32768], transposes and layout uniform. */
void tg_suite_cases(const char *suite, int gpu, uint64_t seed, int count,
                    const tg_suite_choices *choices,
                    void (*add)(void *ctx, const tg_suite_case *c), void *ctx);

/* Calls add(ctx, case) for the shape m x n x k (of `suite`, e.g. "custom") once for each of the
 * choices' transposes, in its layout. */
void tg_suite_shape(const char *suite, int64_t m, int64_t n, int64_t k,
                    const tg_suite_choices *choices,
                    void (*add)(void *ctx, const tg_suite_case *c), void *ctx);

#ifdef __cplusplus
}
#endif

#endif
