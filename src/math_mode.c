/*
 * The math modes and arithmetics by name, and which arithmetic each mode admits: leaf functions
 * that the API (src/api.c) and the planner (src/plan/) both use.
 */
#include <string.h>

#include "../include/tilegemm.h"

static const char *const math_names[] = {"fp32", "strict", "tf32"};

const char *tg_math_name(tg_math mode)
{
    return (unsigned)mode < 3 ? math_names[mode] : "unknown";
}

int tg_math_from_name(const char *name)
{
    for (int i = 0; name && i < 3; ++i)
        if (strcmp(name, math_names[i]) == 0)
            return i;
    return -1;
}

int tg_math_allows(tg_math mode, tg_arith arith)
{
    switch (mode) {
    case TG_MATH_STRICT_FMA: return arith == TG_ARITH_FFMA;
    case TG_MATH_FP32: return arith != TG_ARITH_TF32;
    case TG_MATH_TF32: return 1;
    }
    return 0;
}

const char *tg_arith_name(tg_arith arith)
{
    switch (arith) {
    case TG_ARITH_FFMA: return "ffma";
    case TG_ARITH_3XTF32: return "3xtf32";
    case TG_ARITH_TF32: return "tf32";
    case TG_ARITH_INT8: return "int8";
    }
    return "unknown";
}
