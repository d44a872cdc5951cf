/* Host copy helpers; see host_copy.h. */
#include "host_copy.h"

#include <pthread.h>
#include <stdlib.h>

enum { MAX_JOBS = TG_MAX_GPUS };

struct tg_copiers {
    pthread_mutex_t lock;
    pthread_cond_t work;     /* a job was posted, or quit */
    pthread_cond_t finished; /* a part of some job finished */
    int quit;
    tg_copy_job *jobs[MAX_JOBS]; /* posted jobs with parts left to take */
    int threads;
    pthread_t thread[];
};

static void run_part(tg_copy_job *job, int part)
{
    int64_t lo, hi;
    tg_part_range(job->e0, job->e1, job->parts, part, &lo, &hi);
    if (hi <= lo)
        return;
    if (job->unpack)
        tg_unpack_range(job->dst, job->src + (lo - job->e0), &job->lines, lo, hi);
    else
        tg_pack_range(job->dst + (lo - job->e0), job->src, &job->lines, lo, hi);
}

/* A posted job with a part left, or NULL.  Under the lock. */
static tg_copy_job *job_with_work(tg_copiers *c)
{
    for (int i = 0; i < MAX_JOBS; ++i)
        if (c->jobs[i] && c->jobs[i]->next < c->jobs[i]->parts)
            return c->jobs[i];
    return NULL;
}

/* Takes and runs one part of job; the lock is held on entry and on return. */
static void take_part(tg_copiers *c, tg_copy_job *job)
{
    const int part = job->next++;
    pthread_mutex_unlock(&c->lock);
    run_part(job, part);
    pthread_mutex_lock(&c->lock);
    if (++job->done == job->parts)
        pthread_cond_broadcast(&c->finished);
}

static void *helper(void *arg)
{
    tg_copiers *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        tg_copy_job *job = job_with_work(c);
        if (job) {
            take_part(c, job);
            continue;
        }
        if (c->quit)
            break;
        pthread_cond_wait(&c->work, &c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

tg_copiers *tg_copiers_start(int threads)
{
    if (threads <= 0)
        return NULL;
    tg_copiers *c = calloc(1, sizeof *c + (size_t)threads * sizeof(pthread_t));
    if (!c)
        return NULL;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    if (pthread_cond_init(&c->work, NULL) != 0) {
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
    }
    if (pthread_cond_init(&c->finished, NULL) != 0) {
        pthread_cond_destroy(&c->work);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
    }
    /* The group goes on with the threads it could make; the posters do the rest. */
    while (c->threads < threads && pthread_create(&c->thread[c->threads], NULL, helper, c) == 0)
        ++c->threads;
    return c;
}

int tg_copiers_size(const tg_copiers *c) { return c ? c->threads : 0; }

void tg_copy_run(tg_copiers *c, tg_copy_job *job)
{
    job->parts = tg_fill_parts(job->e1 - job->e0, 1 + tg_copiers_size(c));
    job->next = job->done = 0;
    if (!c || job->parts == 1) {
        for (int p = 0; p < job->parts; ++p)
            run_part(job, p);
        job->next = job->done = job->parts;
        return;
    }
    pthread_mutex_lock(&c->lock);
    int slot = -1;
    for (int i = 0; i < MAX_JOBS && slot < 0; ++i)
        if (!c->jobs[i])
            slot = i;
    if (slot >= 0) {
        c->jobs[slot] = job;
        pthread_cond_broadcast(&c->work);
    }
    /* No free slot (more posters than GPUs: never): the poster runs every part itself. */
    while (job->next < job->parts)
        take_part(c, job);
    while (job->done < job->parts)
        pthread_cond_wait(&c->finished, &c->lock);
    if (slot >= 0)
        c->jobs[slot] = NULL;
    pthread_mutex_unlock(&c->lock);
}

void tg_copiers_stop(tg_copiers *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->quit = 1;
    pthread_cond_broadcast(&c->work);
    pthread_mutex_unlock(&c->lock);
    for (int t = 0; t < c->threads; ++t)
        pthread_join(c->thread[t], NULL);
    pthread_cond_destroy(&c->finished);
    pthread_cond_destroy(&c->work);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
