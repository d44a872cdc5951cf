/*
 * The registry of a build without nvcc: no rung.  A file of its own, so that a static link with
 * the emulated registry (tests/emulated: the same rungs, built by the host compiler) leaves it
 * out and the planner's tests plan for real rungs without nvcc.
 */
#include <stddef.h>

#include "registry.h"

const tg_rung *const tg_rungs[1] = {NULL};
const int tg_rung_count = 0;

int tg_find_rung(const char *name)
{
    (void)name;
    return -1;
}
