/*
 * Host threads that move panels between the caller's memory and pinned bounce buffers, for
 * products of host operands (host_tiles.cu).  A copy from pageable memory runs at one
 * thread's memcpy speed; several threads reach the host's memory bandwidth.
 *
 * A group of helper threads lives for one call.  Each GPU's driving thread posts a job (a
 * range of packed elements to pack or unpack, cut into parts), takes parts of it itself and
 * returns when every part is done; helpers take parts of any posted job.  Since the poster
 * works on its own job, a job always finishes, with helpers or without (a group that could
 * start no thread, or none at all: NULL).  Plain C and pthreads, so the CPU tests run it.
 */
#ifndef TG_HOST_COPY_H
#define TG_HOST_COPY_H

#include <stdint.h>

#include "host_split.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_copy_job {
    int unpack;          /* 0: view (src) -> packed (dst); 1: packed (src) -> view (dst) */
    float *dst;
    const float *src;    /* the packed side holds elements e0.. from its first float */
    tg_lines lines;      /* the view's lines */
    int64_t e0, e1;      /* packed elements to move */
    int parts;           /* set by tg_copy_run */
    int next, done;      /* parts taken and finished (under the group's lock) */
} tg_copy_job;

typedef struct tg_copiers tg_copiers;

/* Starts a group of up to `threads` helpers (fewer where a thread cannot be made).  NULL when
 * threads <= 0 or nothing could be allocated: jobs then run on their poster alone. */
tg_copiers *tg_copiers_start(int threads);
/* The helpers the group has (0 for NULL). */
int tg_copiers_size(const tg_copiers *c);
/* Runs the job (its parts from tg_fill_parts over the helpers and the caller) and returns when
 * it is done.  Any number of threads may post jobs at once. */
void tg_copy_run(tg_copiers *c, tg_copy_job *job);
/* Stops and joins the helpers, frees the group.  NULL is fine. */
void tg_copiers_stop(tg_copiers *c);

#ifdef __cplusplus
}
#endif

#endif
