/*
 * The tools' one random number generator: splitmix64, fast, seedable, the same sequence on
 * every machine.  Used by the checks (check.c), the benchmark's data and its sampling.
 */
#ifndef TG_TOOLS_RNG_H
#define TG_TOOLS_RNG_H

#include <stdint.h>

static inline uint64_t tg_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static inline double tg_random_unit(uint64_t *state)
{
    return (double)(tg_splitmix64(state) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

#endif
