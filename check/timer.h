/*
 * The tools' wall-clock timer (CLOCK_MONOTONIC), for host-side timing: the benchmark's CPU
 * mode and the CLI's progress lines.  GPU work is timed with CUDA events instead.
 */
#ifndef TG_TOOLS_TIMER_H
#define TG_TOOLS_TIMER_H

#include <time.h>

static inline double tg_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
