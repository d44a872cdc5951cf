/*
 * The CPU backend's thread pool (see pool.h).  Workers wait until the job number changes, run
 * the job if their tid is inside the team, and report back.  One caller at a time holds the
 * pool (a trylock: a concurrent caller runs on its own thread rather than wait).  After fork()
 * the child has no workers and starts again from none.
 *
 * Waiting: a worker waiting for the next job, a thread at a barrier and the caller waiting for
 * its workers first spin (TG_POOL_JOB_SPIN_NS for the next job, TG_POOL_SPIN_NS for the rest),
 * then sleep on a condition variable.  Waking a sleeping thread costs tens of microseconds
 * (more on a virtual machine, where the idle vCPU halts), which a 512^3 product, about a
 * millisecond on two cores, would pay at its start and at each of its barriers; a program
 * calling products back to back finds its workers still spinning.  The spins are short: on a
 * loaded machine a spinning thread holds a core the thread it waits for may need (half a
 * millisecond cost a third of the speed at 512 with the load average at 7 on two cores), and
 * a spinning thread yields the core (sched_yield) every 64 pauses, as OpenBLAS's threads do,
 * so that a thread waiting for its turn there can run.  Threads spin only where the team fits
 * the cores online.
 *
 * Unloading: the library's destructor (at dlclose, or at exit) stops the workers and joins
 * them, so that none is left in code about to be unmapped.  It waits only for idle workers:
 * where a product is running (another thread of a process that is exiting) it leaves them,
 * since waiting could block the exit forever and exit ends them anyway.  After it, every
 * product runs on its caller alone.
 */
#include "pool.h"

#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

enum { MAX_WORKERS = TG_POOL_MAX_THREADS - 1 };
#define JOB_SIZE_BITS 16
#define JOB_SIZE_MASK ((1UL << JOB_SIZE_BITS) - 1)

/* How long a waiting thread spins before it sleeps: at a barrier and for the workers to finish
 * (where the others are at work on the same product), and for the next job. */
#ifndef TG_POOL_SPIN_NS
#define TG_POOL_SPIN_NS 50000L
#endif
#ifndef TG_POOL_JOB_SPIN_NS
#define TG_POOL_JOB_SPIN_NS 200000L
#endif

static struct {
    pthread_mutex_t use;  /* held by the caller whose job runs */
    pthread_mutex_t lock; /* guards everything below but the atomics */
    pthread_cond_t wake, done;
    int workers;          /* threads created, tids 1 .. workers */
    int closed;           /* the destructor has run: no workers, no new ones */
    _Atomic int quit;     /* workers return (set by the destructor) */
    pthread_t threads[MAX_WORKERS]; /* tid t is threads[t - 1], joined by the destructor */
    /* changes when a job starts: (job count << 16) | team size, one word, so that a worker
     * outside the team learns so without reading the team (which the next job may be setting
     * up already); fn, arg and the team are set before it changes */
    _Atomic unsigned long job;
    unsigned long born;   /* the job number a worker created now has already seen */
    _Atomic int sleepers; /* workers asleep on wake */
    _Atomic int running;  /* workers still in the current job */
    _Atomic int spin;     /* workers spin for the next job: the pool fits the cores */
    tg_team_fn fn;
    void *arg;
    tg_team team;
    char note[160];       /* why the pool has fewer threads than asked, "" when it has not */
} pool = {.use = PTHREAD_MUTEX_INITIALIZER, .lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER,
          .team = {.lock = PTHREAD_MUTEX_INITIALIZER, .turn = PTHREAD_COND_INITIALIZER}};

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Spins until *value != old (returns 1) or for TG_POOL_JOB_SPIN_NS (returns 0). */
static int spin_while_equal_ul(_Atomic unsigned long *value, unsigned long old, _Atomic int *quit)
{
    const long long until = now_ns() + TG_POOL_JOB_SPIN_NS;
    do {
        for (int i = 0; i < 64; ++i) {
            if (atomic_load_explicit(value, memory_order_acquire) != old ||
                atomic_load_explicit(quit, memory_order_relaxed))
                return 1;
            cpu_relax();
        }
        sched_yield();
    } while (now_ns() < until);
    return 0;
}

static int spin_while_equal_u(_Atomic unsigned *value, unsigned old)
{
    const long long until = now_ns() + TG_POOL_SPIN_NS;
    do {
        for (int i = 0; i < 64; ++i) {
            if (atomic_load_explicit(value, memory_order_acquire) != old)
                return 1;
            cpu_relax();
        }
        sched_yield();
    } while (now_ns() < until);
    return 0;
}

static int spin_while_positive(_Atomic int *value)
{
    const long long until = now_ns() + TG_POOL_SPIN_NS;
    do {
        for (int i = 0; i < 64; ++i) {
            if (atomic_load_explicit(value, memory_order_acquire) <= 0)
                return 1;
            cpu_relax();
        }
        sched_yield();
    } while (now_ns() < until);
    return 0;
}

static void *worker(void *tid_ptr)
{
    const int tid = (int)(intptr_t)tid_ptr;
    pthread_mutex_lock(&pool.lock);
    unsigned long seen = pool.born;
    pthread_mutex_unlock(&pool.lock);
    for (;;) {
        if (!atomic_load_explicit(&pool.spin, memory_order_relaxed) ||
            !spin_while_equal_ul(&pool.job, seen, &pool.quit)) {
            /* asleep: the caller, which bumps job under the lock, sees sleepers and wakes us */
            pthread_mutex_lock(&pool.lock);
            atomic_fetch_add(&pool.sleepers, 1);
            while (atomic_load(&pool.job) == seen && !atomic_load(&pool.quit))
                pthread_cond_wait(&pool.wake, &pool.lock);
            atomic_fetch_sub(&pool.sleepers, 1);
            pthread_mutex_unlock(&pool.lock);
        }
        if (atomic_load(&pool.quit))
            break;
        seen = atomic_load(&pool.job);
        if (tid >= (int)(seen & JOB_SIZE_MASK))
            continue;
        pool.fn(pool.arg, &pool.team, tid);
        if (atomic_fetch_sub(&pool.running, 1) == 1) {
            pthread_mutex_lock(&pool.lock);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.lock);
        }
    }
    return NULL;
}

/* At dlclose (and at exit): the workers return and are joined while the code they run is still
 * mapped.  Only when no product holds the pool: then every worker is idle, waiting for a job. */
__attribute__((destructor)) static void stop_workers(void)
{
    if (pthread_mutex_trylock(&pool.use) != 0) {
        /* a product is running on another thread (the process is exiting under it): leave its
         * workers be, but let no later product start the pool again */
        pthread_mutex_lock(&pool.lock);
        pool.closed = 1;
        pthread_mutex_unlock(&pool.lock);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    pool.closed = 1;
    atomic_store(&pool.quit, 1);
    const int workers = pool.workers;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    for (int t = 0; t < workers; ++t)
        pthread_join(pool.threads[t], NULL);
    pthread_mutex_lock(&pool.lock);
    pool.workers = 0;
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool.use);
}

/* fork() copies the pool's state but not its threads: the child starts with none. */
static void fork_prepare(void) { pthread_mutex_lock(&pool.use), pthread_mutex_lock(&pool.lock); }
static void fork_parent(void) { pthread_mutex_unlock(&pool.lock), pthread_mutex_unlock(&pool.use); }
static void fork_child(void)
{
    pool.workers = 0;
    atomic_store(&pool.sleepers, 0);
    fork_parent();
}
static void register_fork(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

/* Creates workers until there are `wanted`; on the first failure keeps what it has and notes
 * why.  Called with pool.lock held. */
static void grow(int wanted)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_fork);
    pool.born = pool.job;
    while (pool.workers < wanted) {
        /* joinable: the destructor joins them */
        const int err = pthread_create(&pool.threads[pool.workers], NULL, worker,
                                       (void *)(intptr_t)(pool.workers + 1));
        if (err) {
            snprintf(pool.note, sizeof pool.note,
                     "%d of %d threads: pthread_create: %s", pool.workers + 1, wanted + 1,
                     strerror(err));
            return;
        }
        ++pool.workers;
    }
    pool.note[0] = '\0';
}

/* The cores online, read once. */
static int cores_online(void)
{
    static _Atomic int cores;
    int c = atomic_load_explicit(&cores, memory_order_relaxed);
    if (c == 0) {
        const long online = sysconf(_SC_NPROCESSORS_ONLN);
        c = online > 0 ? (int)online : 1;
        atomic_store_explicit(&cores, c, memory_order_relaxed);
    }
    return c;
}

/* A team of one never waits at a barrier, so it needs no lock. */
static void team_reset(tg_team *team, int size)
{
    team->size = size;
    team->spin = size <= cores_online();
    atomic_store_explicit(&team->waiting, 0, memory_order_relaxed);
    atomic_store_explicit(&team->phase, 0, memory_order_relaxed);
    atomic_store_explicit(&team->sleepers, 0, memory_order_relaxed);
}

void tg_team_run(int threads, tg_team_fn fn, void *arg)
{
    if (threads > MAX_WORKERS + 1)
        threads = MAX_WORKERS + 1;
    if (threads <= 1 || pthread_mutex_trylock(&pool.use) != 0)
        goto alone;
    pthread_mutex_lock(&pool.lock);
    if (pool.closed) {
        pthread_mutex_unlock(&pool.lock);
        pthread_mutex_unlock(&pool.use);
        goto alone;
    }
    grow(threads - 1);
    const int size = pool.workers + 1 < threads ? pool.workers + 1 : threads;
    team_reset(&pool.team, size);
    atomic_store_explicit(&pool.spin, pool.workers + 1 <= cores_online(), memory_order_relaxed);
    pool.fn = fn, pool.arg = arg;
    atomic_store(&pool.running, size - 1);
    /* publishes fn, arg and the team to spinning workers */
    const unsigned long job = atomic_load(&pool.job);
    atomic_store(&pool.job, ((job >> JOB_SIZE_BITS) + 1) << JOB_SIZE_BITS | (unsigned long)size);
    if (atomic_load(&pool.sleepers) > 0)
        pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    fn(arg, &pool.team, 0);

    if (!pool.team.spin || !spin_while_positive(&pool.running)) {
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.running) > 0)
            pthread_cond_wait(&pool.done, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
    }
    pthread_mutex_unlock(&pool.use);
    return;

alone:;
    tg_team one;
    team_reset(&one, 1);
    fn(arg, &one, 0);
}

/*
 * The last thread to arrive starts the next phase; the others spin on the phase, then sleep.
 * A sleeper counts itself in sleepers before it reads the phase, and the last thread bumps
 * the phase before it reads sleepers (both sequentially consistent): either the sleeper sees
 * the new phase, or the last thread sees the sleeper and broadcasts under the lock.
 */
void tg_team_barrier(tg_team *team)
{
    if (team->size <= 1)
        return;
    const unsigned phase = atomic_load(&team->phase);
    if (atomic_fetch_add(&team->waiting, 1) + 1 == team->size) {
        atomic_store(&team->waiting, 0);
        atomic_fetch_add(&team->phase, 1);
        if (atomic_load(&team->sleepers) > 0) {
            pthread_mutex_lock(&team->lock);
            pthread_cond_broadcast(&team->turn);
            pthread_mutex_unlock(&team->lock);
        }
        return;
    }
    if (team->spin && spin_while_equal_u(&team->phase, phase))
        return;
    pthread_mutex_lock(&team->lock);
    atomic_fetch_add(&team->sleepers, 1);
    while (atomic_load(&team->phase) == phase)
        pthread_cond_wait(&team->turn, &team->lock);
    atomic_fetch_sub(&team->sleepers, 1);
    pthread_mutex_unlock(&team->lock);
}

void tg_team_share(const tg_team *team, int tid, int64_t count, int64_t *lo, int64_t *hi)
{
    *lo = count * tid / team->size;
    *hi = count * (tid + 1) / team->size;
}

void tg_pool_describe(char *buf, size_t size)
{
    pthread_mutex_lock(&pool.lock);
    if (pool.note[0])
        snprintf(buf, size, "%s", pool.note);
    else if (pool.workers == 0)
        snprintf(buf, size, "the library's pool, started by the first multithreaded product");
    else
        snprintf(buf, size, "the library's pool: the caller and %d worker(s)", pool.workers);
    pthread_mutex_unlock(&pool.lock);
}
