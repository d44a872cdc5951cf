/*
 * Products of host operands, tiled over one GPU or several (the arithmetic is
 * host_split.h, the host threads host_copy.h).
 *
 * Each GPU of the handle's list (tg_set_devices) has a lane: four streams (copies in, the
 * products, copies out, copies from peers), a few events, one device allocation carved into
 * panel slots, and pinned host buffers (TG_BOUNCE_COUNT bounce buffers for pageable operands,
 * and the C tiles).
 * A lane is made on first use and kept on the handle until tg_destroy.
 *
 * One call: every GPU's share of the tiles (tg_tile_share) runs on a driving thread of its own
 * (the first on the caller's), which for each tile, in the order tg_share_order gives (where the
 * GPU holds every panel of its share: round by round of its column order, rows in turn within
 * a round, where the GPUs share B, else growing squares; otherwise row-major),
 *   1. with beta != 0, uploads the C tile;
 *   2. for each k-cut (tg_k_cut_range), uploads that cut of the tile's A panel and B panel where
 *      they are new (resident panels load once, from pinned memory with the tile four before,
 *      each cut with an event of its own; streamed ones through two slots), then queues the
 *      cut's product after them, adding into the C tile after the first (the rung and split-K
 *      tg_tile_choice gives: a function of the tile's and cut's shape, so any GPU computes a
 *      tile the same way).  Pinned memory goes by one DMA copy, pageable through the
 *      bounce buffers, a chunk at a time, host threads filling one while the DMA engine drains
 *      another;
 *   3. queues the C tile's copy back after the last cut (three C slots; a slot's earlier tile
 *      finished first), and finishes every earlier tile whose copy is done: unless it went
 *      straight into the caller's pinned C (beta = 0), scatters it from pinned memory into the
 *      caller's C with host threads.  The host waits for a copy only when its slot is needed,
 *      so that its waits hold back the copies in as little as they can.
 * Where a GPU's share is one row of tiles, its first tiles (one a C slot) go through step 2
 * together, cut by cut, so that the GPU has products to run while the first panels cross.
 * Where every GPU keeps all of B and can read the others' memory, the GPUs share B: each loads
 * from the host only the column panels it owns (tg_b_owner; its squares start at its first) and
 * copies the others, cut by cut, from their owners' memory over the GPUs' links once the owner
 * has queued them, so B crosses the host's links once, not once per GPU.
 * Slots are reused only after the work reading them is done (events), so copies for the next
 * tile overlap the product of this one.  Through pinned memory a tile reaches C whole or not at
 * all (the scatter is a host copy from a finished transfer), so a failure leaves whole tiles
 * written, which the error message counts and h->partial lists.  A copy straight into pinned C
 * (beta = 0 only, where C is never read, so any tile can be computed again) that fails may
 * leave its tile torn: the message counts such tiles as maybe written.
 *
 * Errors: every CUDA call is checked (LANE_CHECK records the call, GPU, function and line on the
 * lane); a failing lane raises a flag that stops the others at their next tile; every lane
 * drains its streams before its thread ends (no copy may still read the caller's memory after
 * the call returns), every thread is joined, and the first failing GPU's message, with what
 * became of C, is the call's.
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "../host_copy.h"
#include "../host_split.h"
#include "../plan/split_k.h"
#include "backend.h"
#include "registry.h"

namespace {

/* Device slots start 256 bytes apart at least, so a tile's operands are as aligned wherever
 * they sit (the rung choice sees the same alignment on every GPU). */
constexpr int64_t kSlotAlign = 64; /* floats */

int64_t aligned(int64_t floats) { return (floats + kSlotAlign - 1) / kSlotAlign * kSlotAlign; }

struct lane {
    int device;
    tg_handle shadow; /* the GPU, its product stream and workspace, for tg_cuda_launch_product */
    cudaStream_t in, comp, out, peer; /* peer: B panels copied from other GPUs (shared B) */
    cudaEvent_t ev_in, ev_peer, comp_done, a_free[2], b_free[2], c_free[TG_C_SLOTS_MAX],
        bounce_free[TG_BOUNCE_COUNT];
    char *dev;
    size_t dev_bytes;
    float *bounce; /* TG_BOUNCE_COUNT * TG_BOUNCE_BYTES pinned */
    float *c_host; /* pinned C tiles */
    size_t c_host_bytes;
    int next_bounce;
};

struct lanes {
    lane *by_device[TG_MAX_GPUS];
};

/* One call. */
struct call {
    const tg_problem *p;
    const tg_handle *h;
    tg_tile_grid grid;
    int gpus;
    int pinned_a, pinned_b, pinned_c; /* 1: the caller's memory is pinned (DMA reads it) */
    int direct_c;                     /* C tiles go straight into the caller's C: pinned C and
                                       * beta = 0 */
    int rung[4][2], slices[4][2];     /* by tile shape (shape_of()) and k-cut (0: every cut but
                                       * the last, 1: the last) */
    int64_t extra_bytes;              /* the largest workspace a tile's product needs */
    tg_copiers *copiers;
    std::atomic<int> stop;            /* a lane failed: the others stop at their next tile */
    unsigned char *written;           /* one a tile */
    int ids[TG_MAX_GPUS];             /* the lanes' GPUs */
    /* Shared B (share_b): every GPU loads from the host only the B panels it owns
     * (tg_b_owner) and copies the others from their owners' memory, one k-cut at a time, after
     * the owner's event for that cut.  Under lock: published (by column, the cuts its owner has
     * queued and recorded) and b_base (each lane's B slots, column j's panel in slot j). */
    int share_b;
    pthread_mutex_t lock;
    pthread_cond_t published_cv;      /* a cut was published, or stop was raised */
    int64_t *published;
    cudaEvent_t *b_ready;             /* by column and k-cut, on the owner's GPU */
    float *b_base[TG_MAX_GPUS];
};

struct lane_run {
    call *c;
    lane *l;
    int index;       /* among the call's GPUs */
    tg_lane_plan plan; /* made before the lanes start, so that they agree on sharing B */
    int64_t room;    /* the device memory the plan had */
    int fits;        /* the plan fits in it */
    tg_status status;
    tg_error error;  /* the lane's own error, before the call's message wraps it */
    int64_t written; /* tiles this lane wrote to C */
    int64_t issued;  /* tiles whose copy into the caller's C (direct_c) was queued */
    pthread_t thread;
    int threaded;
};

/* Shape class of tile t: 0 full, 1 last row, 2 last column, 3 the corner (sizes may repeat). */
int shape_of(const tg_tile_grid *g, int64_t t)
{
    const int64_t row = t / g->cols, col = t % g->cols;
    return (row == g->rows - 1 ? 1 : 0) + (col == g->cols - 1 ? 2 : 0);
}

int64_t first_of_shape(const tg_tile_grid *g, int shape)
{
    const int64_t row = shape & 1 ? g->rows - 1 : 0, col = shape & 2 ? g->cols - 1 : 0;
    return row * g->cols + col;
}

tg_status lane_fail(lane_run *r, cudaError_t e, const char *expr, const char *func, int line)
{
    (void)cudaGetLastError();
    return tg_record(&r->error, TG_ERROR_CUDA, 0, "GPU %d: %s failed: %s (%s) in %s at %s:%d",
                     r->l ? r->l->device : -1, expr, cudaGetErrorName(e), cudaGetErrorString(e),
                     func, __FILE__, line);
}

#define LANE_CHECK(r, expr)                                                                      \
    do {                                                                                         \
        const cudaError_t tg_err_ = TG_FAULT("CUDA: " #expr) ? cudaErrorUnknown : (expr);      \
        if (tg_err_ != cudaSuccess)                                                              \
            return lane_fail((r), tg_err_, #expr, __func__, __LINE__);                           \
    } while (0)

/* Work queued on `stream` from here waits for `event`'s last record. */
tg_status wait_for(lane_run *r, cudaStream_t stream, cudaEvent_t event)
{
    LANE_CHECK(r, cudaStreamWaitEvent(stream, event, 0));
    return TG_SUCCESS;
}

/* `event` marks what `stream` holds now. */
tg_status record(lane_run *r, cudaEvent_t event, cudaStream_t stream)
{
    LANE_CHECK(r, cudaEventRecord(event, stream));
    return TG_SUCCESS;
}

/* Frees one lane; the lane's GPU must be current. */
void lane_free(lane *l)
{
    for (cudaStream_t s : {l->in, l->comp, l->out, l->peer})
        if (s)
            (void)cudaStreamSynchronize(s);
    tg_cuda_release(&l->shadow); /* its workspace and event; its stream is l->comp, ours */
    if (l->dev)
        (void)cudaFree(l->dev);
    if (l->bounce)
        (void)cudaFreeHost(l->bounce);
    if (l->c_host)
        (void)cudaFreeHost(l->c_host);
    cudaEvent_t *events[] = {&l->ev_in, &l->ev_peer, &l->comp_done, &l->a_free[0],
                             &l->a_free[1], &l->b_free[0], &l->b_free[1]};
    for (cudaEvent_t *e : events)
        if (*e)
            (void)cudaEventDestroy(*e);
    for (cudaEvent_t e : l->c_free)
        if (e)
            (void)cudaEventDestroy(e);
    for (cudaEvent_t e : l->bounce_free)
        if (e)
            (void)cudaEventDestroy(e);
    for (cudaStream_t s : {l->in, l->comp, l->out, l->peer})
        if (s)
            (void)cudaStreamDestroy(s);
    (void)cudaGetLastError();
    free(l);
}

/* Streams, events and the shadow handle of a lane, each made once (a failure leaves the lane
 * as far as it got, and the next call goes on from there).  The lane's GPU is current. */
tg_status lane_ready(lane_run *r, const tg_handle *h)
{
    lane *l = r->l;
    for (cudaStream_t *s : {&l->in, &l->comp, &l->out, &l->peer})
        if (!*s)
            LANE_CHECK(r, cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    cudaEvent_t *events[] = {&l->ev_in, &l->ev_peer, &l->comp_done, &l->a_free[0],
                             &l->a_free[1], &l->b_free[0], &l->b_free[1]};
    for (cudaEvent_t *e : events)
        if (!*e)
            LANE_CHECK(r, cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    for (cudaEvent_t &e : l->c_free)
        if (!e)
            LANE_CHECK(r, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (cudaEvent_t &e : l->bounce_free)
        if (!e)
            LANE_CHECK(r, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    if (!l->shadow.stream_chosen) {
        tg_handle *s = &l->shadow;
        s->device = l->device;
        s->math = h->math;
        LANE_CHECK(r, cudaDeviceGetAttribute(&s->sm_count, cudaDevAttrMultiProcessorCount,
                                             l->device));
        int major = 0, minor = 0;
        LANE_CHECK(r, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                             l->device));
        LANE_CHECK(r, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                                             l->device));
        s->compute_capability = major * 10 + minor;
        s->stream = l->comp;
        s->own_stream = nullptr;
        s->stream_chosen = 1;
    }
    const tg_status code = tg_cuda_check_code(&l->shadow);
    if (code != TG_SUCCESS)
        r->error = l->shadow.error;
    return code;
}

/* Grows a pinned host buffer; contents not kept. */
tg_status pinned(lane_run *r, float **buffer, size_t *have, size_t bytes, const char *site)
{
    if (*have >= bytes)
        return TG_SUCCESS;
    if (*buffer) {
        LANE_CHECK(r, cudaFreeHost(*buffer));
        *buffer = nullptr;
        *have = 0;
    }
    void *p = nullptr;
    const cudaError_t e = TG_FAULT(site) ? cudaErrorMemoryAllocation
                                         : cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return tg_record(&r->error, TG_ERROR_ALLOCATION, 0,
                         "GPU %d: %s: cudaHostAlloc of %zu bytes failed: %s", r->l->device, site,
                         bytes, cudaGetErrorString(e));
    }
    *buffer = (float *)p;
    *have = bytes;
    return TG_SUCCESS;
}

/* Copies a view of the caller's host memory (rows x cols, strides rs, cs) to dst on the
 * device, packed: pinned memory by DMA, pageable through the bounce buffers. */
tg_status upload(lane_run *r, float *dst, const float *src, int64_t rows, int64_t cols,
                 int64_t rs, int64_t cs, int is_pinned)
{
    lane *l = r->l;
    const tg_lines lines = tg_lines_of(rows, cols, rs, cs);
    const int64_t total = lines.count * lines.length;
    if (is_pinned) {
        if (lines.count == 1 || lines.pitch == lines.length)
            LANE_CHECK(r, cudaMemcpyAsync(dst, src, (size_t)total * sizeof(float),
                                          cudaMemcpyHostToDevice, l->in));
        else
            LANE_CHECK(r, cudaMemcpy2DAsync(dst, (size_t)lines.length * sizeof(float), src,
                                            (size_t)lines.pitch * sizeof(float),
                                            (size_t)lines.length * sizeof(float),
                                            (size_t)lines.count, cudaMemcpyHostToDevice, l->in));
        return TG_SUCCESS;
    }
    const int64_t per = TG_BOUNCE_BYTES / (int64_t)sizeof(float);
    for (int64_t chunk = 0; chunk < tg_chunk_count(total); ++chunk) {
        if (r->c->stop.load(std::memory_order_relaxed))
            return TG_SUCCESS; /* another lane failed; the caller stops at the next tile */
        int64_t e0, e1;
        tg_chunk_range(total, chunk, &e0, &e1);
        const int b = l->next_bounce;
        l->next_bounce = (b + 1) % TG_BOUNCE_COUNT;
        float *bounce = l->bounce + (int64_t)b * per;
        /* the copy that last read this buffer is done */
        LANE_CHECK(r, cudaEventSynchronize(l->bounce_free[b]));
        tg_copy_job job;
        memset(&job, 0, sizeof job);
        job.dst = bounce;
        job.src = src;
        job.lines = lines;
        job.e0 = e0;
        job.e1 = e1;
        tg_copy_run(r->c->copiers, &job);
        LANE_CHECK(r, cudaMemcpyAsync(dst + e0, bounce, (size_t)(e1 - e0) * sizeof(float),
                                      cudaMemcpyHostToDevice, l->in));
        LANE_CHECK(r, cudaEventRecord(l->bounce_free[b], l->in));
    }
    return TG_SUCCESS;
}

/* Tile t's C, back in pinned slot `slot`: waits for its copy, scatters it into the caller's C
 * and counts it written. */
tg_status finish_tile(lane_run *r, int64_t t, int slot, const tg_lane_plan &plan)
{
    lane *l = r->l;
    const tg_problem *p = r->c->p;
    const tg_tile tile = tg_tile_at(&r->c->grid, t);
    LANE_CHECK(r, cudaEventSynchronize(l->c_free[slot]));
    if (r->c->direct_c) {
        r->c->written[t] = 1;
        ++r->written;
        return TG_SUCCESS;
    }
    const tg_lines lines = tg_lines_of(tile.m, tile.n, p->ldc, 1);
    tg_copy_job job;
    memset(&job, 0, sizeof job);
    job.unpack = 1;
    job.dst = p->C + tile.i0 * p->ldc + tile.j0;
    job.src = l->c_host + slot * aligned(plan.c_tile);
    job.lines = lines;
    job.e0 = 0;
    job.e1 = lines.count * lines.length;
    tg_copy_run(r->c->copiers, &job);
    r->c->written[t] = 1;
    ++r->written;
    return TG_SUCCESS;
}

/* Events made for one call and destroyed with it: the timeline's (TILEGEMM_HOST_TIMELINE set:
 * each tile's copies in, product and copy back, written to stderr when the lane ends, to see
 * where a call's time goes) and the resident panels' (each cut of each panel loaded from the
 * host, so that a product waits for its own panels and not for those loaded ahead of it). */
struct call_events {
    std::vector<cudaEvent_t> events;
    tg_status make(lane_run *r, size_t count, unsigned flags)
    {
        events.assign(count, nullptr);
        for (cudaEvent_t &e : events)
            LANE_CHECK(r, cudaEventCreateWithFlags(&e, flags));
        return TG_SUCCESS;
    }
    ~call_events()
    {
        for (cudaEvent_t e : events)
            if (e)
                (void)cudaEventDestroy(e);
    }
};

/* Cut q of tile column col's B panel from the host into its slot (base dst), on `in`. */
tg_status upload_b_cut(lane_run *r, float *dst, int64_t col, int64_t q)
{
    const call *c = r->c;
    const tg_problem *p = c->p;
    const tg_tile tile = tg_tile_at(&c->grid, col); /* row 0's tile of that column: j0 and n */
    int64_t k0, k1;
    tg_k_cut_range(&c->grid, q, &k0, &k1);
    return upload(r, dst + tile.n * k0, p->B + k0 * p->b_rs + tile.j0 * p->b_cs, k1 - k0,
                  tile.n, p->b_rs, p->b_cs, c->pinned_b);
}

/* Shared B: cut q of column col's panel (slot base dst), loaded from the host by its owner, this
 * lane; then the cut's event recorded and published to the others. */
tg_status load_own_b_cut(lane_run *r, float *dst, int64_t col, int64_t q)
{
    call *c = r->c;
    const tg_tile_grid *g = &c->grid;
    const tg_status s = upload_b_cut(r, dst, col, q);
    if (s != TG_SUCCESS)
        return s;
    LANE_CHECK(r, cudaEventRecord(c->b_ready[col * g->k_cuts + q], r->l->in));
    pthread_mutex_lock(&c->lock);
    c->published[col] = q + 1;
    pthread_cond_broadcast(&c->published_cv);
    pthread_mutex_unlock(&c->lock);
    return TG_SUCCESS;
}

/* Shared B: every column this lane owns and has not loaded yet, whole, before it waits on
 * another lane's: a lane that waits has published all it owns, so no two wait on each other. */
tg_status load_own_b_rest(lane_run *r, float *B_slots, int64_t b_slot, int64_t *b_at)
{
    const tg_tile_grid *g = &r->c->grid;
    for (int64_t col = 0; col < g->cols; ++col) {
        if (tg_b_owner(g, r->c->gpus, col) != r->index || b_at[col] >= 0)
            continue;
        b_at[col] = col;
        for (int64_t q = 0; q < g->k_cuts; ++q) {
            const tg_status s = load_own_b_cut(r, B_slots + col * b_slot, col, q);
            if (s != TG_SUCCESS)
                return s;
        }
    }
    return TG_SUCCESS;
}

/* How long a lane waits for a peer's cut before loading its own columns ahead: under one
 * panel's copy in (256 MB, about 8 ms), and the lane's GPU is busy with the tiles it has queued
 * meanwhile. */
constexpr long kPeerPatienceMs = 5;

/* How many tiles ahead a lane loads resident panels from pinned memory (lane_tiles). */
constexpr int64_t kLoadAheadTiles = 4;

/* With c->lock held: until cut q of column col is published or stop is raised, or until
 * `deadline` (CLOCK_MONOTONIC) where one is given. */
void wait_published(call *c, int64_t col, int64_t q, const timespec *deadline)
{
    while (c->published[col] <= q && !c->stop.load()) {
        if (!deadline)
            pthread_cond_wait(&c->published_cv, &c->lock);
        else if (pthread_cond_timedwait(&c->published_cv, &c->lock, deadline) == ETIMEDOUT)
            return;
    }
}

/* Shared B: cut q of column col's panel copied into its slot from its owner's GPU, on the peer
 * stream after the owner's copy in of it.  A lane about to wait for an owner first loads every
 * column it owns itself.  Returns with nothing queued when another lane failed first. */
tg_status copy_peer_b_cut(lane_run *r, float *B_slots, int64_t b_slot, int64_t *b_at,
                          int64_t col, int64_t q)
{
    call *c = r->c;
    const tg_tile_grid *g = &c->grid;
    const int owner = tg_b_owner(g, c->gpus, col);
    const tg_tile tile = tg_tile_at(g, col);
    int64_t k0, k1;
    tg_k_cut_range(g, q, &k0, &k1);
    pthread_mutex_lock(&c->lock);
    /* The owner's thread publishes its first cuts as it starts, but may start later than this
     * one (lane 0 runs on the caller's thread, the others on threads made after it).  Loading
     * this lane's own columns at once would queue a panel from the host ahead of the peer copy,
     * and the copy waits for it: on two H100s and on two H200s at 16384^3, GPU 0's second tile
     * then waited 8.4 ms on half the calls (60.0 ms against 52.4).  So wait a while first; the
     * deadline keeps the rule below (load your own before waiting on another's) deadlock-free. */
    timespec patience;
    clock_gettime(CLOCK_MONOTONIC, &patience);
    patience.tv_nsec += kPeerPatienceMs * 1000000L;
    patience.tv_sec += patience.tv_nsec / 1000000000L;
    patience.tv_nsec %= 1000000000L;
    wait_published(c, col, q, &patience);
    const bool waits = c->published[col] <= q;
    pthread_mutex_unlock(&c->lock);
    if (waits) {
        const tg_status s = load_own_b_rest(r, B_slots, b_slot, b_at);
        if (s != TG_SUCCESS)
            return s;
    }
    pthread_mutex_lock(&c->lock);
    wait_published(c, col, q, nullptr);
    const bool ready = c->published[col] > q;
    const float *from = ready ? c->b_base[owner] + col * b_slot + tile.n * k0 : nullptr;
    const cudaEvent_t event = ready ? c->b_ready[col * g->k_cuts + q] : nullptr;
    pthread_mutex_unlock(&c->lock);
    if (!ready)
        return TG_SUCCESS;
    LANE_CHECK(r, cudaStreamWaitEvent(r->l->peer, event, 0));
    LANE_CHECK(r, cudaMemcpyPeerAsync(B_slots + col * b_slot + tile.n * k0, r->l->device, from,
                                      c->ids[owner], (size_t)(tile.n * (k1 - k0)) * sizeof(float),
                                      r->l->peer));
    return TG_SUCCESS;
}

/* The lane's share of the tiles, with its GPU current. */
tg_status lane_tiles(lane_run *r)
{
    call *c = r->c;
    lane *l = r->l;
    const tg_problem *p = c->p;
    const tg_tile_grid *g = &c->grid;
    tg_status s = lane_ready(r, c->h);
    if (s != TG_SUCCESS)
        return s;

    const tg_lane_plan &plan = r->plan;
    if (!r->fits)
        return tg_record(&r->error, TG_ERROR_ALLOCATION, 0,
                         "GPU %d: device: panels of tiled host products: %lld MiB needed "
                         "(tiles of %lldx%lld, k = %lld), %lld MiB free",
                         l->device, (long long)(plan.device_bytes >> 20), (long long)g->tile_m,
                         (long long)g->tile_n, (long long)g->k, (long long)(r->room >> 20));
    if (plan.hi == plan.lo)
        return TG_SUCCESS;
    const int64_t a_slot = aligned(plan.a_panel), b_slot = aligned(plan.b_panel);
    const int64_t c_slot = aligned(plan.c_tile);
    const size_t need = (size_t)((plan.a_slots * a_slot + plan.b_slots * b_slot +
                                  plan.c_slots * c_slot) * (int64_t)sizeof(float));
    if (l->dev_bytes < need) {
        if (l->dev) {
            LANE_CHECK(r, cudaFree(l->dev)); /* waits for the work that used it */
            l->dev = nullptr;
            l->dev_bytes = 0;
        }
        static const char site[] = "device: panels of tiled host products";
        void *d = nullptr;
        const cudaError_t e = TG_FAULT(site) ? cudaErrorMemoryAllocation : cudaMalloc(&d, need);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return tg_record(&r->error, TG_ERROR_ALLOCATION, 0,
                             "GPU %d: %s: cudaMalloc of %zu bytes failed: %s", l->device, site,
                             need, cudaGetErrorString(e));
        }
        l->dev = (char *)d;
        l->dev_bytes = need;
    }
    float *const A_slots = (float *)l->dev;
    float *const B_slots = A_slots + plan.a_slots * a_slot;
    float *const C_slots = B_slots + plan.b_slots * b_slot;
    if (!(c->pinned_a && c->pinned_b && (c->pinned_c || p->beta == 0.0f))) {
        size_t have = l->bounce ? (size_t)(TG_BOUNCE_COUNT * TG_BOUNCE_BYTES) : 0;
        if ((s = pinned(r, &l->bounce, &have, (size_t)(TG_BOUNCE_COUNT * TG_BOUNCE_BYTES),
                        "host: pinned bounce buffers")) != TG_SUCCESS)
            return s;
    }
    if (!c->direct_c && (s = pinned(r, &l->c_host, &l->c_host_bytes,
                                    (size_t)(plan.c_slots * c_slot * (int64_t)sizeof(float)),
                                    "host: pinned C tiles")) != TG_SUCCESS)
        return s;

    if (c->share_b) {
        for (int64_t col = 0; col < g->cols; ++col)
            if (tg_b_owner(g, c->gpus, col) == r->index)
                for (int64_t q = 0; q < g->k_cuts; ++q)
                    LANE_CHECK(r, cudaEventCreateWithFlags(&c->b_ready[col * g->k_cuts + q],
                                                           cudaEventDisableTiming));
        pthread_mutex_lock(&c->lock);
        c->b_base[r->index] = B_slots;
        pthread_mutex_unlock(&c->lock);
    }

    /* The visiting order, and where each resident panel sits once loaded (-1: not yet). */
    const int64_t count = plan.hi - plan.lo;
    const int64_t entries = count + g->rows + 2 * g->cols;
    int64_t *order = (int64_t *)(TG_FAULT("host: tile order")
                                     ? nullptr
                                     : malloc((size_t)entries * sizeof(int64_t)));
    if (!order)
        return tg_record(&r->error, TG_ERROR_ALLOCATION, 0,
                         "GPU %d: host: tile order: could not allocate %lld entries", l->device,
                         (long long)entries);
    const std::unique_ptr<int64_t, decltype(&free)> order_owner(order, &free);
    int64_t *const a_at = order + count, *const b_at = a_at + g->rows;
    int64_t *const columns = b_at + g->cols;
    for (int64_t i = 0; i < g->rows + g->cols; ++i)
        a_at[i] = -1;
    tg_share_order(g, &plan, c->share_b, order, columns);

    int64_t row = -1, a_loaded = 0, b_loaded = 0;
    int a_cur = 1;
    /* A tile is finished (its C waited for and scattered) as soon as its copy back is done, and
     * at the latest just before a later tile's copy back reuses its C slot: the host waits only
     * then, so that its waiting holds back the next tiles' copies in as little as it can. */
    int64_t seq = 0, finished = 0, ended = 0; /* begun, finished, and with C's copy back queued */
    call_events times; /* the lane's start, then three a tile (resident panels: "in" is when
                        * its last cut's product may start, the panels loaded ahead of it) */
    if (getenv("TILEGEMM_HOST_TIMELINE")) {
        if ((s = times.make(r, (size_t)(1 + 3 * count), cudaEventDefault)) != TG_SUCCESS)
            return s;
        LANE_CHECK(r, cudaEventRecord(times.events[0], l->in));
    }
    /* Resident panels: an event for each cut of each A and B slot a lane loads (shared B: its
     * own columns have the call's, c->b_ready), then one for each C slot's copy in (beta != 0),
     * so that a product waits for exactly what it reads. */
    call_events loaded;
    const int64_t b_evented = c->share_b ? 0 : plan.b_slots;
    if (plan.a_resident &&
        (s = loaded.make(r, (size_t)((plan.a_slots + b_evented) * g->k_cuts + plan.c_slots),
                         cudaEventDisableTiming)) != TG_SUCCESS)
        return s;
    auto a_loaded_ev = [&](int64_t index, int64_t q) {
        return loaded.events[(size_t)(index * g->k_cuts + q)];
    };
    auto b_loaded_ev = [&](int64_t index, int64_t q) {
        return loaded.events[(size_t)((plan.a_slots + index) * g->k_cuts + q)];
    };
    auto c_loaded_ev = [&](int cs) {
        return loaded.events[(size_t)((plan.a_slots + b_evented) * g->k_cuts + cs)];
    };
    /* A tile's panels and C slot, fixed when it begins. */
    struct tile_run {
        int64_t seq, t;
        tg_tile tile;
        float *a_dst, *b_dst, *c_dst;
        int64_t a_index, b_index; /* resident: the panels' slots */
        bool a_new, b_new, b_peer;
        int a_cur, b_cur, cs;
    };
    /* Resident panels: the slot of tile row `row`'s A panel, of tile column `col`'s B panel,
     * taken the first time it is asked for (*fresh: now, so the panel is still to load). */
    auto a_slot_of = [&](int64_t row, bool *fresh) {
        int64_t &at = a_at[row];
        *fresh = at < 0;
        if (*fresh)
            at = a_loaded++;
        return at;
    };
    auto b_slot_of = [&](int64_t col, bool *fresh) {
        int64_t &at = b_at[col];
        *fresh = at < 0;
        if (*fresh)
            at = c->share_b ? col : b_loaded++;
        return at;
    };
    /* Shared B: tile column col is another lane's, copied from its owner's GPU. */
    auto peer_column = [&](int64_t col) {
        return c->share_b && tg_b_owner(g, c->gpus, col) != r->index;
    };
    /* Begins tile seq: its slots, whether its panels are to be loaded, and with beta != 0 its
     * C tile's copy in. */
    auto begin = [&](int64_t at_seq, tile_run &tr) -> tg_status {
        tr.seq = at_seq;
        tr.t = order[at_seq];
        tr.tile = tg_tile_at(g, tr.t);
        tr.a_new = tr.b_new = false;
        if (plan.a_resident) {
            tr.a_index = a_slot_of(tr.tile.row, &tr.a_new);
            tr.a_dst = A_slots + tr.a_index * a_slot;
        } else {
            tr.a_new = tr.tile.row != row;
            if (tr.a_new) {
                a_cur ^= 1;
                row = tr.tile.row;
                if (tg_status e = wait_for(r, l->in, l->a_free[a_cur]))
                    return e;
            }
            tr.a_dst = A_slots + a_cur * a_slot;
        }
        tr.a_cur = a_cur;
        tr.b_cur = (int)(at_seq & 1);
        tr.b_peer = peer_column(tr.tile.col);
        if (plan.b_resident) {
            tr.b_index = b_slot_of(tr.tile.col, &tr.b_new);
            tr.b_dst = B_slots + tr.b_index * b_slot;
        } else {
            tr.b_new = true;
            tr.b_dst = B_slots + tr.b_cur * b_slot;
            if (tg_status e = wait_for(r, l->in, l->b_free[tr.b_cur]))
                return e;
        }
        tr.cs = (int)(at_seq % plan.c_slots);
        tr.c_dst = C_slots + tr.cs * c_slot;
        if (p->beta != 0.0f) {
            const tg_tile &tile = tr.tile;
            if (tg_status e = wait_for(r, l->in, l->c_free[tr.cs]))
                return e;
            const tg_status e = upload(r, tr.c_dst, p->C + tile.i0 * p->ldc + tile.j0, tile.m,
                                       tile.n, p->ldc, 1, c->pinned_c);
            return e == TG_SUCCESS && plan.a_resident ? record(r, c_loaded_ev(tr.cs), l->in) : e;
        }
        return TG_SUCCESS;
    };
    /* Cut q of the A panel of tile row `tile.row` into `dst`; resident, into slot `index`, with
     * that cut's event. */
    auto load_a_cut = [&](const tg_tile &tile, float *dst, int64_t index, int64_t q) {
        int64_t k0, k1;
        tg_k_cut_range(g, q, &k0, &k1);
        const tg_status e = upload(r, dst + tile.m * k0, p->A + tile.i0 * p->a_rs + k0 * p->a_cs,
                                   tile.m, k1 - k0, p->a_rs, p->a_cs, c->pinned_a);
        return e == TG_SUCCESS && plan.a_resident ? record(r, a_loaded_ev(index, q), l->in) : e;
    };
    /* Cut q of the B panel of tile column `col` into `dst` from the host (shared B: this lane
     * owns it, and publishes the cut); resident, into slot `index`, with that cut's event. */
    auto load_b_cut = [&](int64_t col, float *dst, int64_t index, int64_t q) {
        if (c->share_b)
            return load_own_b_cut(r, dst, col, q);
        const tg_status e = upload_b_cut(r, dst, col, q);
        return e == TG_SUCCESS && plan.a_resident ? record(r, b_loaded_ev(index, q), l->in) : e;
    };
    /* Cut q of a begun tile's A panel, where the tile loads it. */
    auto cut_of_a = [&](const tile_run &tr, int64_t q) -> tg_status {
        return tr.a_new ? load_a_cut(tr.tile, tr.a_dst, tr.a_index, q) : TG_SUCCESS;
    };
    /* Cut q of a begun tile once its A cut is queued: that cut of its new B panel, then the
     * cut's product after both. */
    auto cut = [&](const tile_run &tr, int64_t q) -> tg_status {
        const tg_tile &tile = tr.tile;
        int64_t k0, k1;
        tg_k_cut_range(g, q, &k0, &k1);
        tg_status e = TG_SUCCESS;
        /* A peer's column: the cut's product waits for A's cut (streamed A: what `in` holds
         * now) and for the peer copy, not for the lane's own columns that copy_peer_b_cut may
         * queue on `in` before it waits for the owner: waiting for those had held the product
         * back by a whole panel's copy (8 ms of a 52 ms call on two H100s, timeline). */
        const bool peer_cut = tr.b_new && tr.b_peer;
        if (peer_cut && !plan.a_resident && (e = record(r, l->ev_in, l->in)) != TG_SUCCESS)
            return e;
        if (peer_cut)
            e = copy_peer_b_cut(r, B_slots, b_slot, b_at, tile.col, q);
        else if (tr.b_new)
            e = load_b_cut(tile.col, tr.b_dst, tr.b_index, q);
        if (e != TG_SUCCESS || c->stop.load(std::memory_order_relaxed))
            return e;
        if (plan.a_resident) { /* the cut's own panels (and C's copy in), whenever they loaded */
            LANE_CHECK(r, cudaStreamWaitEvent(l->comp, a_loaded_ev(tr.a_index, q), 0));
            /* a peer's column: its copy's event below, or the earlier product that waited for it */
            if (!tr.b_peer)
                LANE_CHECK(r, cudaStreamWaitEvent(
                                  l->comp,
                                  c->share_b ? c->b_ready[tile.col * g->k_cuts + q]
                                             : b_loaded_ev(tr.b_index, q),
                                  0));
            if (q == 0 && p->beta != 0.0f)
                LANE_CHECK(r, cudaStreamWaitEvent(l->comp, c_loaded_ev(tr.cs), 0));
        } else {
            if (!peer_cut)
                LANE_CHECK(r, cudaEventRecord(l->ev_in, l->in));
            LANE_CHECK(r, cudaStreamWaitEvent(l->comp, l->ev_in, 0));
        }
        if (peer_cut) {
            LANE_CHECK(r, cudaEventRecord(l->ev_peer, l->peer));
            LANE_CHECK(r, cudaStreamWaitEvent(l->comp, l->ev_peer, 0));
        }
        if (q == 0)
            LANE_CHECK(r, cudaStreamWaitEvent(l->comp, l->c_free[tr.cs], 0));
        if (plan.a_resident && !times.events.empty() && q == g->k_cuts - 1) /* after every wait */
            LANE_CHECK(r, cudaEventRecord(times.events[(size_t)(1 + 3 * tr.seq)], l->comp));
        /* the cut's product on packed panels, as tg_tile_choice planned it */
        const int shape = shape_of(g, tr.t), last = q == g->k_cuts - 1 && q > 0;
        const tg_lines a = tg_lines_of(tile.m, k1 - k0, p->a_rs, p->a_cs);
        const tg_lines b = tg_lines_of(k1 - k0, tile.n, p->b_rs, p->b_cs);
        tg_problem d;
        memset(&d, 0, sizeof d);
        d.m = tile.m;
        d.n = tile.n;
        d.k = k1 - k0;
        d.alpha = p->alpha;
        d.beta = q == 0 ? p->beta : 1.0f;
        d.A = tr.a_dst + tile.m * k0;
        tg_packed_strides(&a, &d.a_rs, &d.a_cs);
        d.B = tr.b_dst + tile.n * k0;
        tg_packed_strides(&b, &d.b_rs, &d.b_cs);
        d.C = tr.c_dst;
        d.ldc = tile.n;
        d.batch = 1;
        const tg_status launched = tg_cuda_launch_product(&l->shadow, c->rung[shape][last],
                                                          c->slices[shape][last], &d);
        if (launched != TG_SUCCESS) {
            r->error = l->shadow.error;
            char tail[sizeof r->error.message];
            snprintf(tail, sizeof tail, "%s", l->shadow.error.message);
            tg_record(&r->error, launched, 0, "GPU %d: %s", l->device, tail);
        }
        return launched;
    };
    /* Finishes the tiles whose C is back (all those before `upto` whether back or not). */
    auto finish_done = [&](int64_t upto) -> tg_status {
        while (finished < ended) {
            const int slot = (int)(finished % plan.c_slots);
            if (finished >= upto) {
                const cudaError_t back = cudaEventQuery(l->c_free[slot]);
                if (back == cudaErrorNotReady)
                    break;
                if (back != cudaSuccess)
                    return lane_fail(r, back, "cudaEventQuery(l->c_free[slot])", __func__,
                                     __LINE__);
            }
            if (tg_status e = finish_tile(r, order[finished], slot, plan))
                return e;
            ++finished;
        }
        return TG_SUCCESS;
    };
    /* Ends tile seq once every cut is queued: C back into its slot, once the tile that used the
     * slot before is finished; the panels' slots free again after it. */
    auto end = [&](int64_t at_seq, const tile_run &tr) -> tg_status {
        const tg_tile &tile = tr.tile;
        if (tg_status e = finish_done(at_seq - plan.c_slots + 1))
            return e;
        if (!times.events.empty() && !plan.a_resident)
            LANE_CHECK(r, cudaEventRecord(times.events[(size_t)(1 + 3 * at_seq)], l->in));
        if (!plan.a_resident)
            LANE_CHECK(r, cudaEventRecord(l->a_free[tr.a_cur], l->comp));
        if (!plan.b_resident)
            LANE_CHECK(r, cudaEventRecord(l->b_free[tr.b_cur], l->comp));
        LANE_CHECK(r, cudaEventRecord(l->comp_done, l->comp));
        if (!times.events.empty())
            LANE_CHECK(r, cudaEventRecord(times.events[(size_t)(2 + 3 * at_seq)], l->comp));
        LANE_CHECK(r, cudaStreamWaitEvent(l->out, l->comp_done, 0));
        if (c->direct_c) {
            const tg_lines lines = tg_lines_of(tile.m, tile.n, p->ldc, 1);
            float *to = p->C + tile.i0 * p->ldc + tile.j0;
            ++r->issued;
            if (lines.count == 1 || lines.pitch == lines.length)
                LANE_CHECK(r, cudaMemcpyAsync(to, tr.c_dst,
                                              (size_t)(tile.m * tile.n) * sizeof(float),
                                              cudaMemcpyDeviceToHost, l->out));
            else
                LANE_CHECK(r, cudaMemcpy2DAsync(to, (size_t)lines.pitch * sizeof(float),
                                                tr.c_dst, (size_t)lines.length * sizeof(float),
                                                (size_t)lines.length * sizeof(float),
                                                (size_t)lines.count, cudaMemcpyDeviceToHost,
                                                l->out));
        } else {
            LANE_CHECK(r, cudaMemcpyAsync(l->c_host + tr.cs * c_slot, tr.c_dst,
                                          (size_t)(tile.m * tile.n) * sizeof(float),
                                          cudaMemcpyDeviceToHost, l->out));
        }
        LANE_CHECK(r, cudaEventRecord(l->c_free[tr.cs], l->out));
        if (!times.events.empty())
            LANE_CHECK(r, cudaEventRecord(times.events[(size_t)(3 + 3 * at_seq)], l->out));
        ++ended;
        return finish_done(0);
    };

    /* Resident panels from pinned memory load ahead: with each tile, the panels the next
     * kLoadAheadTiles tiles read from the host that are not loaded yet, in the order they are
     * first read (their products wait for their own events, not for these).  Loaded only when a
     * tile begins, a panel crossed while the GPU sat idle: on four H200s at 32768x32768x8192
     * (two rows of eight tiles a GPU), a new A row and a column of its own left the products
     * idle for 3.9 and 4.7 ms of a 51 ms call (timeline).  Pageable operands are not loaded
     * ahead: the lane's own thread stages them, and would hold back the next tile's products. */
    const bool load_ahead = plan.a_resident && c->pinned_a && c->pinned_b;
    int64_t ahead = 0; /* tiles whose panels are loaded or queued */
    auto load_through = [&](int64_t last) -> tg_status {
        for (; ahead <= last && ahead < count; ++ahead) {
            const tg_tile tile = tg_tile_at(g, order[ahead]);
            bool fresh;
            const int64_t at = a_slot_of(tile.row, &fresh);
            for (int64_t q = 0; fresh && q < g->k_cuts; ++q)
                if (tg_status e = load_a_cut(tile, A_slots + at * a_slot, at, q))
                    return e;
            if (peer_column(tile.col)) /* copied when its first tile begins */
                continue;
            const int64_t bt = b_slot_of(tile.col, &fresh);
            for (int64_t q = 0; fresh && q < g->k_cuts; ++q)
                if (tg_status e = load_b_cut(tile.col, B_slots + bt * b_slot, bt, q))
                    return e;
        }
        return TG_SUCCESS;
    };

    /* Where the lane's share is one row of tiles, its first tiles, up to one a C slot, go cut
     * by cut: each cut of all of them before the next, so the GPU multiplies the cuts already in
     * while the next cuts of A and B cross from the host, where tile by tile it waits for a whole
     * tile's panels before its second product.  At 16384^3 on four H200s (a row of four tiles
     * a GPU) a call took 30.2 ms against 34.3.  Not on shares of several rows, where the first
     * tiles span two rows: on one and two GPUs the same calls took 99.1 and 56.5 ms against
     * 96.6 and 52.5 (bench/results/multi-gpu/first-cuts), nor over shared B, whose rounds put
     * the first tiles of a share of several rows in one row: on four H200s 32768x32768x8192
     * took 45.4-46.8 ms cut by cut against 44.9-45.6 (bench/results/multi-gpu/rounds).  B must
     * be resident.  In the last round each ends as soon as its last product is queued, so that
     * its C goes back while the others multiply: 34.8 ms against 36.9 for a row of four tiles a
     * GPU on two H200s (bench/results/multi-gpu/last-round). */
    const int64_t group =
        g->k_cuts > 1 && plan.b_resident && tg_share_rows(g, plan.lo, plan.hi) == 1
            ? plan.c_slots /* at most the share's tiles */
            : 1;
    if (group > 1) {
        tile_run first[TG_C_SLOTS_MAX];
        for (; seq < group && s == TG_SUCCESS; ++seq)
            s = begin(seq, first[seq]);
        /* in each round, the lane's own columns before its peers' (so a lane that waits for a
         * peer's cut has published that cut of every column it is loading), and tiles of one
         * column in order (the first loads the cut, the later ones follow it on `comp`); the
         * cuts of A first, as a tile of a peer's column may be the one loading its row */
        int64_t ending = 0; /* the next of them to end, in their order */
        bool last_cut_in[TG_C_SLOTS_MAX] = {};
        for (int64_t q = 0; q < g->k_cuts && s == TG_SUCCESS; ++q) {
            for (int64_t i = 0; i < group && s == TG_SUCCESS; ++i)
                s = cut_of_a(first[i], q);
            for (int peers = 0; peers < 2; ++peers)
                for (int64_t i = 0; i < group && s == TG_SUCCESS; ++i)
                    if (first[i].b_peer == (peers == 1) &&
                        !c->stop.load(std::memory_order_relaxed)) {
                        s = cut(first[i], q);
                        /* in their order: end() takes C slots in turn */
                        last_cut_in[i] = q == g->k_cuts - 1;
                        while (s == TG_SUCCESS && ending < group && last_cut_in[ending] &&
                               !c->stop.load(std::memory_order_relaxed)) {
                            s = end(ending, first[ending]);
                            ++ending;
                        }
                    }
        }
        if (s == TG_SUCCESS && load_ahead && !c->stop.load(std::memory_order_relaxed))
            s = load_through(group - 1 + kLoadAheadTiles);
    }
    for (; seq < count && s == TG_SUCCESS; ++seq) {
        if (c->stop.load(std::memory_order_relaxed))
            break;
        tile_run tr;
        s = begin(seq, tr);
        for (int64_t q = 0; q < g->k_cuts && s == TG_SUCCESS; ++q)
            if (!c->stop.load(std::memory_order_relaxed) && (s = cut_of_a(tr, q)) == TG_SUCCESS)
                s = cut(tr, q);
        if (s == TG_SUCCESS && load_ahead && !c->stop.load(std::memory_order_relaxed))
            s = load_through(seq + kLoadAheadTiles);
        if (s == TG_SUCCESS && !c->stop.load(std::memory_order_relaxed))
            s = end(seq, tr);
    }
    /* the tiles queued but not yet finished */
    for (; s == TG_SUCCESS && finished < ended && !c->stop.load(std::memory_order_relaxed);
         ++finished)
        s = finish_tile(r, order[finished], (int)(finished % plan.c_slots), plan);
    if (s == TG_SUCCESS) {
        LANE_CHECK(r, cudaStreamSynchronize(l->in));
        LANE_CHECK(r, cudaStreamSynchronize(l->comp));
        LANE_CHECK(r, cudaStreamSynchronize(l->out));
        LANE_CHECK(r, cudaStreamSynchronize(l->peer));
        for (int64_t i = 0; i < ended && !times.events.empty(); ++i) {
            float ms[3] = {0.0f, 0.0f, 0.0f};
            for (int j = 0; j < 3; ++j)
                LANE_CHECK(r, cudaEventElapsedTime(&ms[j], times.events[0],
                                                   times.events[(size_t)(1 + j + 3 * i)]));
            const tg_tile tile = tg_tile_at(g, order[i]);
            fprintf(stderr, "tilegemm timeline: GPU %d tile %lld (%lld,%lld): in %.2f ms, "
                    "product %.2f ms, back %.2f ms\n", l->device, (long long)i,
                    (long long)tile.row, (long long)tile.col, ms[0], ms[1], ms[2]);
        }
    }
    return s;
}

/* Runs the lane's share with its GPU current, then leaves nothing in flight. */
void run_lane(lane_run *r)
{
    int before = -1;
    const cudaError_t got = cudaGetDevice(&before);
    const cudaError_t set = got == cudaSuccess ? cudaSetDevice(r->l->device) : got;
    if (set != cudaSuccess) {
        r->status = lane_fail(r, set, got != cudaSuccess ? "cudaGetDevice" : "cudaSetDevice",
                              __func__, __LINE__);
    } else {
        r->status = lane_tiles(r);
        if (r->status != TG_SUCCESS) {
            /* stop the others (waking any that wait for a shared panel), and let no copy of this
             * lane read host memory after return */
            r->c->stop.store(1);
            pthread_mutex_lock(&r->c->lock);
            pthread_cond_broadcast(&r->c->published_cv);
            pthread_mutex_unlock(&r->c->lock);
            for (cudaStream_t s : {r->l->in, r->l->comp, r->l->out, r->l->peer})
                if (s)
                    (void)cudaStreamSynchronize(s);
            (void)cudaGetLastError();
        }
    }
    if (got == cudaSuccess && before != r->l->device)
        (void)cudaSetDevice(before);
}

void *lane_thread(void *arg)
{
    run_lane((lane_run *)arg);
    return nullptr;
}

/* 1 when every element of the view at ptr is pinned host memory (its first and last). */
tg_status is_pinned(tg_handle *h, const float *first, const float *last, int *out)
{
    *out = 0;
    for (const float *ptr : {first, last}) {
        cudaPointerAttributes attr;
        const cudaError_t e = cudaPointerGetAttributes(&attr, ptr);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return TG_SUCCESS;
        }
        if (attr.type != cudaMemoryTypeHost)
            return TG_SUCCESS;
    }
    *out = 1;
    (void)h;
    return TG_SUCCESS;
}

/* Host copy threads: TILEGEMM_HOST_THREADS, else the cores less one per GPU (their driving
 * threads copy too), at most 16 a GPU: pageable staging is bound by the host's memory
 * bandwidth, which one thread's memcpy is far from. */
int copy_threads(int gpus)
{
    const char *env = getenv("TILEGEMM_HOST_THREADS");
    if (env && *env) {
        char *end = nullptr;
        const long v = strtol(env, &end, 10);
        if (end != env && !*end && v >= 0)
            return (int)std::min<long>(v, 1024);
    }
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const long spare = (cores > 0 ? cores : 1) - gpus;
    return (int)std::max<long>(0, std::min<long>(spare, 16L * gpus));
}

/* Each lane's plan, from its GPU's free memory (what the lane holds already counts as free),
 * and whether the lanes share B: every lane keeps all of B and reads every column of it, and
 * every GPU can reach every other's memory (peer access is then enabled, for the process, as
 * a copy engine needs it to read a peer's memory directly). */
tg_status plan_lanes(tg_handle *h, call *c, lane_run *runs)
{
    int before = -1, failed_gpu = -1;
    const char *failed = "cudaGetDevice";
    cudaError_t e = cudaGetDevice(&before);
    c->share_b = c->gpus > 1;
    for (int i = 0; i < c->gpus && e == cudaSuccess; ++i) {
        size_t free_bytes = 0, total_bytes = 0;
        failed_gpu = c->ids[i];
        failed = "cudaSetDevice";
        if ((e = cudaSetDevice(c->ids[i])) != cudaSuccess)
            break;
        failed = "cudaMemGetInfo";
        if ((e = TG_FAULT("CUDA: cudaMemGetInfo") ? cudaErrorUnknown
                                                   : cudaMemGetInfo(&free_bytes, &total_bytes)) !=
            cudaSuccess)
            break;
        lane_run &r = runs[i];
        r.room = (int64_t)free_bytes + (int64_t)r.l->dev_bytes;
        r.fits = tg_lane_plan_make(&c->grid, c->gpus, i, r.room, c->extra_bytes, &r.plan);
        c->share_b = c->share_b && r.fits && r.plan.b_resident &&
                     tg_share_cols(&c->grid, r.plan.lo, r.plan.hi) == c->grid.cols;
    }
    for (int i = 0; i < c->gpus && c->share_b && e == cudaSuccess; ++i)
        for (int j = 0; j < c->gpus && c->share_b; ++j) {
            if (i == j)
                continue;
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, c->ids[i], c->ids[j]) != cudaSuccess || !can) {
                c->share_b = 0;
                continue;
            }
            const cudaError_t enabled = cudaSetDevice(c->ids[i]) == cudaSuccess
                                            ? cudaDeviceEnablePeerAccess(c->ids[j], 0)
                                            : cudaErrorInvalidDevice;
            if (enabled != cudaSuccess && enabled != cudaErrorPeerAccessAlreadyEnabled)
                c->share_b = 0; /* then each GPU loads all of B itself, as without peers */
        }
    (void)cudaGetLastError(); /* "already enabled" and refused peers are not the call's errors */
    if (before >= 0)
        (void)cudaSetDevice(before);
    if (e != cudaSuccess)
        return tg_fail(h, TG_ERROR_CUDA, 0,
                       "planning tiled host products: %s on GPU %d failed: %s (%s); C was not "
                       "written",
                       failed, failed_gpu, cudaGetErrorName(e), cudaGetErrorString(e));
    if (!c->share_b)
        return TG_SUCCESS;
    const int64_t cuts = c->grid.cols * c->grid.k_cuts;
    c->published = (int64_t *)(TG_FAULT("host: shared B table")
                                   ? nullptr
                                   : calloc((size_t)c->grid.cols, sizeof(int64_t)));
    c->b_ready = (cudaEvent_t *)(c->published ? calloc((size_t)cuts, sizeof(cudaEvent_t))
                                              : nullptr);
    if (!c->b_ready)
        return tg_fail(h, TG_ERROR_ALLOCATION, 0,
                       "host: shared B table: could not allocate %lld entries; C was not "
                       "written",
                       (long long)cuts);
    return TG_SUCCESS;
}

/* What sharing B left: the owners' events (destroyed once every lane has queued its waits) and
 * the tables. */
void release_sharing(call *c)
{
    if (c->b_ready)
        for (int64_t i = 0; i < c->grid.cols * c->grid.k_cuts; ++i)
            if (c->b_ready[i])
                (void)cudaEventDestroy(c->b_ready[i]);
    (void)cudaGetLastError();
    free(c->b_ready);
    free(c->published);
    c->b_ready = nullptr;
    c->published = nullptr;
}

} // namespace

extern "C" {

tg_status tg_cuda_execute_tiles(tg_handle *h, const tg_problem *p, const tg_plan *plan)
{
    (void)plan;
    call c;
    c.p = p;
    c.h = h;
    c.grid = tg_tile_grid_of(p->m, p->n, p->k);
    c.copiers = nullptr;
    c.stop.store(0);
    c.extra_bytes = 0;
    c.share_b = 0;
    c.published = nullptr;
    c.b_ready = nullptr;
    int ids[TG_MAX_DEVICES];
    c.gpus = tg_devices_of(h, ids);
    for (int i = 0; i < c.gpus; ++i)
        c.ids[i] = ids[i];
    const int64_t tiles = tg_tile_count(&c.grid);

    /* Each tile shape's and k-cut's rung and split-K, the same on every GPU. */
    for (int shape = 0; shape < 4; ++shape)
        for (int last = 0; last < 2; ++last) {
            tg_problem d;
            tg_choice choice;
            if (!tg_tile_choice(h, p, &c.grid, first_of_shape(&c.grid, shape),
                                last ? c.grid.k_cuts - 1 : 0, &d, &choice))
                return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                               "%s cannot run a %lldx%lldx%lld tile of this product; C was not "
                               "written",
                               h->algo >= 0 ? "the forced algo" : "no CUDA rung of this build",
                               (long long)d.m, (long long)d.n, (long long)d.k);
            c.rung[shape][last] = choice.rung;
            c.slices[shape][last] = choice.split_k;
            int64_t extra = 0;
            if (choice.split_k > 1)
                extra += tg_split_k_workspace(&d, choice.split_k) * (int64_t)sizeof(float);
            const tg_rung *rung = tg_rungs[choice.rung];
            if (rung->workspace_bytes)
                extra += (int64_t)rung->workspace_bytes(&d);
            c.extra_bytes = std::max(c.extra_bytes, extra);
        }

    tg_status s = is_pinned(h, p->A, p->A + (p->m - 1) * p->a_rs + (p->k - 1) * p->a_cs,
                            &c.pinned_a);
    if (s == TG_SUCCESS)
        s = is_pinned(h, p->B, p->B + (p->k - 1) * p->b_rs + (p->n - 1) * p->b_cs, &c.pinned_b);
    if (s == TG_SUCCESS)
        s = is_pinned(h, p->C, p->C + (p->m - 1) * p->ldc + (p->n - 1), &c.pinned_c);
    if (s != TG_SUCCESS)
        return s;
    c.direct_c = c.pinned_c && p->beta == 0.0f;

    lanes *all = (lanes *)h->tiles;
    if (!all) {
        all = (lanes *)(TG_FAULT("host: tiled host product lanes") ? nullptr
                                                                    : calloc(1, sizeof *all));
        if (!all)
            return tg_fail(h, TG_ERROR_ALLOCATION, 0,
                           "host: tiled host product lanes: could not allocate; C was not "
                           "written");
        h->tiles = all;
    }
    lane_run *runs = (lane_run *)(TG_FAULT("host: tiled host product runs")
                                      ? nullptr
                                      : calloc((size_t)c.gpus, sizeof(lane_run)));
    c.written = (unsigned char *)(runs ? calloc((size_t)tiles, 1) : nullptr);
    if (!runs || !c.written) {
        free(runs);
        free(c.written);
        return tg_fail(h, TG_ERROR_ALLOCATION, 0,
                       "host: tiled host product runs: could not allocate; C was not written");
    }
    for (int i = 0; i < c.gpus; ++i) {
        lane *&l = all->by_device[ids[i]];
        if (!l) {
            l = (lane *)(TG_FAULT("host: tiled host product lane") ? nullptr
                                                                   : calloc(1, sizeof(lane)));
            if (!l) {
                free(runs);
                free(c.written);
                return tg_fail(h, TG_ERROR_ALLOCATION, 0,
                               "host: tiled host product lane: could not allocate; C was not "
                               "written");
            }
            l->device = ids[i];
        }
        runs[i].c = &c;
        runs[i].l = l;
        runs[i].index = i;
    }
    if ((s = plan_lanes(h, &c, runs)) != TG_SUCCESS) {
        release_sharing(&c);
        free(runs);
        free(c.written);
        return s;
    }
    pthread_mutex_init(&c.lock, nullptr);
    pthread_condattr_t monotonic; /* copy_peer_b_cut's deadline is on CLOCK_MONOTONIC */
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&c.published_cv, &monotonic);
    pthread_condattr_destroy(&monotonic);
    /* Host threads where the host copies enough to be worth them: C back, pageable panels. */
    const double host_bytes = (double)p->m * (double)p->n * 4.0 *
                                  ((c.direct_c ? 0.0 : 1.0) + (p->beta != 0.0f && !c.pinned_c)) +
                              (c.pinned_a ? 0.0 : (double)p->m * (double)p->k * 4.0) +
                              (c.pinned_b ? 0.0 : (double)p->k * (double)p->n * 4.0);
    if (host_bytes >= 64.0 * (1 << 20))
        c.copiers = tg_copiers_start(copy_threads(c.gpus));

    /* Lanes 1.. on threads of their own (where one cannot be made, on this thread after lane 0),
     * lane 0 on this one. */
    for (int i = 1; i < c.gpus; ++i)
        runs[i].threaded = pthread_create(&runs[i].thread, nullptr, lane_thread, &runs[i]) == 0;
    run_lane(&runs[0]);
    for (int i = 1; i < c.gpus; ++i) {
        if (runs[i].threaded)
            pthread_join(runs[i].thread, nullptr);
        else
            run_lane(&runs[i]);
    }
    tg_copiers_stop(c.copiers);
    release_sharing(&c);
    pthread_cond_destroy(&c.published_cv);
    pthread_mutex_destroy(&c.lock);

    int64_t written = 0, torn = 0;
    int failed = -1;
    for (int i = 0; i < c.gpus; ++i) {
        written += runs[i].written;
        torn += runs[i].issued - (c.direct_c ? runs[i].written : 0);
        if (failed < 0 && runs[i].status != TG_SUCCESS)
            failed = i;
    }
    if (failed < 0) {
        h->last_rung = c.rung[0][0];
        free(c.written);
        free(runs);
        return TG_SUCCESS;
    }
    const lane_run &f = runs[failed];
    if (written > 0 || torn > 0) {
        s = tg_fail(h, f.status, 0,
                    "%.330s; C is partly written: %lld of %lld tiles of %lldx%lld (and %lld "
                    "more may be)",
                    f.error.message, (long long)written, (long long)tiles,
                    (long long)c.grid.tile_m, (long long)c.grid.tile_n, (long long)torn);
        h->partial.grid = c.grid;
        h->partial.written = c.written; /* the handle's now */
    } else {
        s = tg_fail(h, f.status, 0, "%.440s; C was not written", f.error.message);
        free(c.written);
    }
    free(runs);
    return s;
}

void tg_cuda_release_tiles(tg_handle *h)
{
    lanes *all = (lanes *)h->tiles;
    if (!all)
        return;
    int before = -1;
    const bool known = cudaGetDevice(&before) == cudaSuccess;
    for (lane *&l : all->by_device) {
        if (!l)
            continue;
        if (cudaSetDevice(l->device) == cudaSuccess)
            lane_free(l);
        else
            free(l); /* its GPU is gone; the driver reclaims what it held */
        l = nullptr;
    }
    if (known)
        (void)cudaSetDevice(before);
    (void)cudaGetLastError();
    free(all);
    h->tiles = nullptr;
}

} // extern "C"
