/*
 * The CPU backend's thread pool (see pool.h).  Workers sleep on a condition variable until the
 * job number changes, run the job if their tid is inside the team, and report back.  One
 * caller at a time holds the pool (a trylock: a concurrent caller runs on its own thread
 * rather than wait).  After fork() the child has no workers and starts again from none.
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

enum { MAX_WORKERS = TG_POOL_MAX_THREADS - 1 };

static struct {
    pthread_mutex_t use;  /* held by the caller whose job runs */
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t wake, done;
    int workers;          /* threads created, tids 1 .. workers */
    int closed;           /* the destructor has run: no workers, no new ones */
    int quit;             /* workers return (set by the destructor) */
    pthread_t threads[MAX_WORKERS]; /* tid t is threads[t - 1], joined by the destructor */
    unsigned long job;    /* changes when a job starts */
    unsigned long born;   /* the job number a worker created now has already seen */
    int running;          /* workers still in the current job */
    tg_team_fn fn;
    void *arg;
    tg_team team;
    char note[160];       /* why the pool has fewer threads than asked, "" when it has not */
} pool = {.use = PTHREAD_MUTEX_INITIALIZER, .lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER,
          .team = {.lock = PTHREAD_MUTEX_INITIALIZER, .turn = PTHREAD_COND_INITIALIZER}};

static void *worker(void *tid_ptr)
{
    const int tid = (int)(intptr_t)tid_ptr;
    pthread_mutex_lock(&pool.lock);
    unsigned long seen = pool.born;
    for (;;) {
        while (pool.job == seen && !pool.quit)
            pthread_cond_wait(&pool.wake, &pool.lock);
        if (pool.quit)
            break;
        seen = pool.job;
        if (tid >= pool.team.size)
            continue;
        pthread_mutex_unlock(&pool.lock);
        pool.fn(pool.arg, &pool.team, tid);
        pthread_mutex_lock(&pool.lock);
        if (--pool.running == 0)
            pthread_cond_signal(&pool.done);
    }
    pthread_mutex_unlock(&pool.lock);
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
    pool.quit = 1;
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

/* A team of one never waits at a barrier, so it needs no lock. */
static void team_reset(tg_team *team, int size)
{
    team->size = size;
    team->waiting = 0;
    team->phase = 0;
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
    pool.fn = fn, pool.arg = arg;
    pool.running = size - 1;
    ++pool.job;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    fn(arg, &pool.team, 0);

    pthread_mutex_lock(&pool.lock);
    while (pool.running > 0)
        pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool.use);
    return;

alone:;
    tg_team one;
    team_reset(&one, 1);
    fn(arg, &one, 0);
}

void tg_team_barrier(tg_team *team)
{
    if (team->size <= 1)
        return;
    pthread_mutex_lock(&team->lock);
    const unsigned phase = team->phase;
    if (++team->waiting == team->size) {
        team->waiting = 0;
        ++team->phase;
        pthread_cond_broadcast(&team->turn);
    } else {
        while (team->phase == phase)
            pthread_cond_wait(&team->turn, &team->lock);
    }
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
