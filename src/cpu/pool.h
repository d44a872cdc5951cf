/*
 * The CPU backend's threads: a pool created once per process and kept, grown on demand, run
 * by one caller at a time.  Where a thread cannot be created (memory or a thread limit) the
 * pool goes on with the threads it has, down to the caller alone, and says why in
 * tg_pool_describe: a call never fails, and never ends the process, for want of threads.
 * (libgomp, by contrast, exits the process with "Thread creation failed".)
 */
#ifndef TG_CPU_POOL_H
#define TG_CPU_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* The most threads a team has, the caller included: tg_team_run gives no more, whatever it is
 * asked for. */
#define TG_POOL_MAX_THREADS 256

/* The threads running one job; tid 0 is the caller. */
typedef struct tg_team {
    int size;
    int spin;                  /* wait by spinning first (size <= the cores online) */
    _Atomic int waiting;       /* threads at the barrier */
    _Atomic unsigned phase;    /* barriers passed */
    _Atomic int sleepers;      /* threads asleep on turn (after spinning) */
    pthread_mutex_t lock;
    pthread_cond_t turn;
} tg_team;

typedef void (*tg_team_fn)(void *arg, tg_team *team, int tid);

/* Runs fn(arg, team, tid) on up to `threads` threads (the caller is one; never more than
 * TG_POOL_MAX_THREADS) and returns when all have returned.  While another caller holds the pool, or with threads <= 1, fn runs on the
 * caller alone (team size 1). */
void tg_team_run(int threads, tg_team_fn fn, void *arg);

/* Every thread of the team waits here until all have arrived. */
void tg_team_barrier(tg_team *team);

/* [lo, hi): this thread's share of `count` items, in contiguous near-equal parts. */
void tg_team_share(const tg_team *team, int tid, int64_t count, int64_t *lo, int64_t *hi);

/* One line on the pool for tg_explain: its threads and, when it has fewer than were asked
 * for, why (e.g. "pthread_create: Resource temporarily unavailable"). */
void tg_pool_describe(char *buf, size_t size);

#endif
