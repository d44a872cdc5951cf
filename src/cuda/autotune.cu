/*
 * Autotuning's device side: the planner's best candidates (tg_autotune_candidates) timed on scratch
 * device buffers, the fastest stored in the cache (src/plan/autotune.h).
 *
 * The scratch operands have the call's shape, strides and alignment (the same address modulo
 * 256 bytes), so a rung takes the same paths on them as on the caller's.  They hold copies of the
 * caller's A and B (and of C when beta != 0: each candidate reads and writes the scratch C), so
 * the caller's C is written only by the call itself, once.  Every CUDA call is checked; scratch
 * buffers and events are released on every path.
 *
 * A call whose operands fit the L2 is timed on several sets of them, in turn, up to twice the
 * L2 in all, as the project's benchmark times it: timed on one set, every run after the first
 * finds its operands in the L2, which favours the rungs that read them most (on the H100 such
 * timings agreed with the benchmark's fastest rung within 2% on 2 of 7 calls under 20 us).
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "../plan/autotune.h"
#include "backend.h"
#include "registry.h"

#define TG_AT_CHECK(h, expr)                                                                     \
    do {                                                                                         \
        const cudaError_t tg_err_ = TG_FAULT("CUDA: " #expr) ? cudaErrorUnknown : (expr);      \
        if (tg_err_ != cudaSuccess) {                                                            \
            (void)cudaGetLastError();                                                            \
            return tg_fail((h), TG_ERROR_CUDA, 0, "autotune: %s failed: %s (%s) at %s:%d", #expr, \
                           cudaGetErrorName(tg_err_), cudaGetErrorString(tg_err_), __FILE__,     \
                           __LINE__);                                                            \
        }                                                                                        \
    } while (0)

namespace {

/* Each candidate runs for about this long per sample, in up to kSamples samples (median),
 * the candidates in turn, a round of samples at a time. */
constexpr double kSampleMs = 1.0;
constexpr int kSamples = 5;
constexpr int kMaxLaunchesPerSample = 32;
/* At most this many sets of the operands (a call of a few kilobytes would want thousands). */
constexpr int kMaxSets = 4096;

/* Elements an operand spans from its first to its last element, batch included. */
size_t span(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t stride, int64_t batch)
{
    return (size_t)((batch - 1) * stride + (rows - 1) * rs + (cols - 1) * cs + 1);
}

/* The scratch buffers and events of one timing, released by the destructor. */
struct scratch {
    void *base[3] = {nullptr, nullptr, nullptr};
    size_t stride[3] = {0, 0, 0}; /* elements from one set of an operand to the next */
    int sets = 1;
    cudaEvent_t start = nullptr, stop = nullptr;
    ~scratch()
    {
        /* Frees wait for the work queued on them; teardown cannot report, only clean up. */
        for (void *b : base)
            if (b)
                (void)cudaFree(b);
        if (start)
            (void)cudaEventDestroy(start);
        if (stop)
            (void)cudaEventDestroy(stop);
        (void)cudaGetLastError();
    }
};

/* s.sets sets of an operand of `elements` floats, each aligned as `like` is modulo 256 bytes;
 * *out: the first. */
tg_status alloc_like(tg_handle *h, scratch &s, int slot, const void *like, size_t elements,
                     float **out)
{
    const size_t offset = (uintptr_t)like % 256; /* the caller's alignment, modulo 256 bytes */
    s.stride[slot] = (elements + 63) / 64 * 64;    /* whole 256-byte steps keep the alignment */
    const size_t bytes = ((size_t)s.sets * s.stride[slot]) * sizeof(float) + 256;
    const cudaError_t e = TG_FAULT("device: autotune scratch") ? cudaErrorMemoryAllocation
                                                               : cudaMalloc(&s.base[slot], bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        s.base[slot] = nullptr;
        return tg_fail(h, TG_ERROR_ALLOCATION, 0,
                       "autotune: cudaMalloc of %zu bytes of scratch failed: %s", bytes,
                       cudaGetErrorString(e));
    }
    *out = (float *)((char *)s.base[slot] + offset);
    return TG_SUCCESS;
}

/* Sets 1 .. s.sets-1 of operand `slot` (whose first set starts at first) as copies of the
 * first, by doubling: a call of a few kilobytes has thousands of sets. */
tg_status fill_sets(tg_handle *h, const scratch &s, int slot, float *first, size_t elements,
                    cudaStream_t stream)
{
    const size_t sets = (size_t)s.sets, stride = s.stride[slot];
    for (size_t done = 1; done < sets; done *= 2) {
        const size_t more = std::min(done, sets - done);
        TG_AT_CHECK(h, cudaMemcpyAsync(first + done * stride, first,
                                       ((more - 1) * stride + elements) * sizeof(float),
                                       cudaMemcpyDeviceToDevice, stream));
    }
    return TG_SUCCESS;
}

/* d with its operands pointed at set `set` of the scratch. */
tg_problem on_set(const tg_problem &d, const scratch &s, int set)
{
    tg_problem r = d;
    r.A = (const float *)d.A + (size_t)set * s.stride[0];
    r.B = (const float *)d.B + (size_t)set * s.stride[1];
    r.C = (float *)d.C + (size_t)set * s.stride[2];
    return r;
}

/* One candidate's timing: launches per sample, samples wanted, and those taken so far. */
struct timing {
    int launches = 0, samples = 0, taken = 0;
    double times[kSamples];
};

/* Runs `launches` launches of candidate c on d, walking through the sets of s from *next on;
 * *ms: their event-timed milliseconds. */
tg_status run_launches(tg_handle *h, const scratch &s, const tg_candidate &c, const tg_problem &d,
                       int launches, int *next, float *ms)
{
    cudaStream_t stream = (cudaStream_t)h->stream;
    TG_AT_CHECK(h, cudaEventRecord(s.start, stream));
    for (int j = 0; j < launches; ++j) {
        const tg_problem on = on_set(d, s, *next);
        *next = (*next + 1) % s.sets;
        const tg_status st = tg_cuda_launch_product(h, c.rung, c.split_k, &on);
        if (st != TG_SUCCESS)
            return st;
    }
    TG_AT_CHECK(h, cudaEventRecord(s.stop, stream));
    TG_AT_CHECK(h, cudaEventSynchronize(s.stop));
    TG_AT_CHECK(h, cudaEventElapsedTime(ms, s.start, s.stop));
    return TG_SUCCESS;
}

/* A first run of candidate c, which warms it up and sizes its samples. */
tg_status size_samples(tg_handle *h, const scratch &s, const tg_candidate &c, const tg_problem &d,
                       int *next, timing *t)
{
    float first = 0.0f;
    const tg_status st = run_launches(h, s, c, d, 1, next, &first);
    if (st != TG_SUCCESS)
        return st;
    t->launches =
        std::max(1, std::min(kMaxLaunchesPerSample, (int)(kSampleMs / std::max(first, 1e-3f))));
    t->samples = first > 50.0f ? 1 : first > 10.0f ? 3 : kSamples;
    return TG_SUCCESS;
}

} // namespace

extern "C" {

tg_status tg_cuda_autotune_measure(tg_handle *h, const tg_problem *p, int copy_operands,
                                   struct tg_at_entry *chosen)
{
    /* (device_now and the stream synchronize below: the first and last checked calls of a
     * timing, whose names test_gpu_autotune's fault injection looks for.) */
    int device_now = -1;
    TG_AT_CHECK(h, cudaGetDevice(&device_now));
    if (device_now != h->device)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "autotune: the current GPU is %d but this handle belongs to GPU %d",
                       device_now, h->device);
    tg_status st = tg_cuda_ensure_stream(h);
    if (st != TG_SUCCESS)
        return st;
    cudaStream_t stream = (cudaStream_t)h->stream;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    TG_AT_CHECK(h, cudaStreamIsCapturing(stream, &capture));
    if (capture != cudaStreamCaptureStatusNone)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "autotune: the stream is capturing a graph: nothing is timed");
    tg_at_device dev;
    if ((st = tg_cuda_device_identity(h, &dev)) != TG_SUCCESS)
        return st;
    const tg_device_props props = {h->compute_capability, h->sm_count, h->card};
    tg_candidate candidates[TG_AT_CANDIDATES];
    const int count = tg_autotune_candidates(&props, h->math, p, candidates, TG_AT_CANDIDATES);
    if (count == 0)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "autotune: the planner has no candidate for this call");

    const size_t a = span(p->m, p->k, p->a_rs, p->a_cs, p->stride_a, p->batch);
    const size_t b = span(p->k, p->n, p->b_rs, p->b_cs, p->stride_b, p->batch);
    const size_t c = span(p->m, p->n, p->ldc, 1, p->stride_c, p->batch);
    /* Leave the application at least as much memory as the scratch takes. */
    size_t free_bytes = 0, total_bytes = 0;
    TG_AT_CHECK(h, cudaMemGetInfo(&free_bytes, &total_bytes));
    const double need = ((double)a + (double)b + (double)c) * sizeof(float) + 768.0;
    if (need > 0.5 * (double)free_bytes)
        return tg_fail(h, TG_ERROR_ALLOCATION, 0,
                       "autotune: the scratch operands (%.0f MiB) would take over half the "
                       "GPU's free memory (%.0f MiB)",
                       need / (1 << 20), (double)free_bytes / (1 << 20));

    scratch s;
    /* Sets enough to span twice the L2, as long as they take under half the free memory. */
    int l2_bytes = 0;
    TG_AT_CHECK(h, cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, h->device));
    const double set_bytes = need - 768.0;
    const double want = std::ceil(2.0 * l2_bytes / set_bytes);
    const double fit = std::floor(0.5 * (double)free_bytes / (need + 3 * 256.0));
    s.sets = (int)std::max(1.0, std::min({want, fit, (double)kMaxSets}));
    tg_problem d = *p;
    float *sa = nullptr, *sb = nullptr, *sc = nullptr;
    if ((st = alloc_like(h, s, 0, p->A, a, &sa)) != TG_SUCCESS ||
        (st = alloc_like(h, s, 1, p->B, b, &sb)) != TG_SUCCESS ||
        (st = alloc_like(h, s, 2, p->C, c, &sc)) != TG_SUCCESS)
        return st;
    /* The copies are queued on the handle's stream: after the work that made the operands. */
    if (copy_operands) {
        TG_AT_CHECK(h, cudaMemcpyAsync(sa, p->A, a * sizeof(float), cudaMemcpyDefault, stream));
        TG_AT_CHECK(h, cudaMemcpyAsync(sb, p->B, b * sizeof(float), cudaMemcpyDefault, stream));
    } else {
        /* 0x3c3c3c3c: about 0.0115 in every element, finite whatever the sums. */
        TG_AT_CHECK(h, cudaMemsetAsync(sa, 0x3c, a * sizeof(float), stream));
        TG_AT_CHECK(h, cudaMemsetAsync(sb, 0x3c, b * sizeof(float), stream));
    }
    if (copy_operands && p->beta != 0.0f)
        TG_AT_CHECK(h, cudaMemcpyAsync(sc, p->C, c * sizeof(float), cudaMemcpyDefault, stream));
    else
        TG_AT_CHECK(h, cudaMemsetAsync(sc, 0, c * sizeof(float), stream));
    if ((st = fill_sets(h, s, 0, sa, a, stream)) != TG_SUCCESS ||
        (st = fill_sets(h, s, 1, sb, b, stream)) != TG_SUCCESS ||
        (st = fill_sets(h, s, 2, sc, c, stream)) != TG_SUCCESS)
        return st;
    d.A = sa;
    d.B = sb;
    d.C = sc;
    TG_AT_CHECK(h, cudaEventCreate(&s.start));
    TG_AT_CHECK(h, cudaEventCreate(&s.stop));

    /* The candidates take their samples in turn, a round at a time, so that a drift of the
     * clocks or of the L2 while they are timed falls on all of them alike, not on whichever
     * was timed last; each keeps the median of its own. */
    timing timings[TG_AT_CANDIDATES]; /* count <= TG_AT_CANDIDATES: nothing to allocate */
    int next = 0, rounds = 0;
    tg_status last = TG_SUCCESS;
    for (int i = 0; i < count; ++i) {
        const tg_status t = size_samples(h, s, candidates[i], d, &next, &timings[i]);
        if (t != TG_SUCCESS) {
            last = t; /* a candidate that cannot run is left out */
            timings[i].samples = 0;
        }
        rounds = std::max(rounds, timings[i].samples);
    }
    for (int round = 0; round < rounds; ++round)
        for (int i = 0; i < count; ++i) {
            timing &t = timings[i];
            if (t.taken >= t.samples)
                continue;
            float elapsed = 0.0f;
            const tg_status r = run_launches(h, s, candidates[i], d, t.launches, &next, &elapsed);
            if (r != TG_SUCCESS) {
                last = r;
                t.samples = t.taken = 0; /* one that fails a sample is left out too */
                continue;
            }
            t.times[t.taken++] = elapsed / t.launches;
        }
    int best = -1;
    double best_ms = 0.0;
    for (int i = 0; i < count; ++i) {
        timing &t = timings[i];
        if (t.taken == 0)
            continue;
        std::sort(t.times, t.times + t.taken);
        const double ms = t.times[t.taken / 2];
        if (best < 0 || ms < best_ms)
            best = i, best_ms = ms;
    }
    if (best < 0)
        return last != TG_SUCCESS ? last
                                  : tg_fail(h, TG_ERROR_CUDA, 0, "autotune: nothing was timed");
    /* The scratch is freed by s's destructor; cudaFree waits for the queued runs. */
    TG_AT_CHECK(h, cudaStreamSynchronize(stream));

    tg_at_entry e;
    memset(&e, 0, sizeof e);
    tg_at_key_make(&e.key, (int)h->math, p);
    snprintf(e.rung, sizeof e.rung, "%s", tg_rungs[candidates[best].rung]->name);
    e.slices = candidates[best].split_k;
    e.ms = best_ms;
    (void)tg_at_store(&dev, &e); /* a file that cannot be written is tg_autotune_status's */
    tg_at_count_timed();
    *chosen = e;
    return TG_SUCCESS;
}

void tg_cuda_autotune(tg_handle *h, const tg_problem *p, tg_plan *plan)
{
    const tg_error saved = h->error;
    tg_at_entry chosen;
    if (tg_cuda_autotune_measure(h, p, 1, &chosen) == TG_SUCCESS) {
        const int i = tg_find_rung(chosen.rung);
        if (i >= 0) {
            plan->rung = i;
            plan->split_k = chosen.slices;
            plan->autotuned = 1;
        }
    }
    plan->autotune_pending = 0;
    h->error = saved; /* a timing failure is not the call's: it runs the planner's choice */
    (void)cudaGetLastError();
}

} // extern "C"
