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

/* What of a case the suite fixes: the shape alone (the caller applies its transposes and
 * layout), the shape and transposes (the caller's layout), or everything (random cases). */
typedef enum tg_suite_fixes { TG_SUITE_SHAPE, TG_SUITE_TRANSPOSES, TG_SUITE_ALL } tg_suite_fixes;

typedef struct tg_suite_case {
    int64_t m, n, k;
    tg_op ta, tb;       /* TG_SUITE_TRANSPOSES and TG_SUITE_ALL */
    tg_layout layout;   /* TG_SUITE_ALL */
    tg_suite_fixes fixes;
    const char *suite;  /* "squares", "awkward", "transposes", "random" or "quick" */
} tg_suite_case;

/* Calls add(ctx, case) for each case of the named suite (squares, awkward, transposes,
 * random, all or quick) in order; gpu picks quick's GPU or CPU shapes; seed and count are the
 * random suite's: m, n and k log-uniform in [8, 32768], transposes and layout uniform. */
void tg_suite_cases(const char *suite, int gpu, uint64_t seed, int count,
                    void (*add)(void *ctx, const tg_suite_case *c), void *ctx);

#ifdef __cplusplus
}
#endif

#endif
