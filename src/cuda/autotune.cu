/*
 * Autotuning's device side: the planner's best candidates (tg_autotune_candidates) timed on scratch
 * device buffers, the fastest stored in the cache (src/plan/autotune.h).
 *
 * The scratch operands have the call's shape, strides and alignment (the same address modulo
 * 256 bytes), so a rung takes the same paths on them as on the caller's.  They hold copies of the
 * caller's A and B (and of C when beta != 0: each candidate reads and writes the scratch C), so
 * the caller's C is written only by the call itself, once.  Every CUDA call is checked; scratch
 * buffers and events are released on every path.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

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

/* Each candidate runs for about this long per sample, in up to kSamples samples (median). */
constexpr double kSampleMs = 1.0;
constexpr int kSamples = 5;
constexpr int kMaxLaunchesPerSample = 32;

/* Elements an operand spans from its first to its last element, batch included. */
size_t span(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t stride, int64_t batch)
{
    return (size_t)((batch - 1) * stride + (rows - 1) * rs + (cols - 1) * cs + 1);
}

/* The scratch buffers and events of one timing, released by the destructor. */
struct scratch {
    void *base[3] = {nullptr, nullptr, nullptr};
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

tg_status alloc_like(tg_handle *h, scratch &s, int slot, const void *like, size_t elements,
                     float **out)
{
    const size_t offset = (uintptr_t)like % 256; /* the caller's alignment, modulo 256 bytes */
    const cudaError_t e = TG_FAULT("device: autotune scratch")
                              ? cudaErrorMemoryAllocation
                              : cudaMalloc(&s.base[slot], elements * sizeof(float) + 256);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        s.base[slot] = nullptr;
        return tg_fail(h, TG_ERROR_ALLOCATION, 0,
                       "autotune: cudaMalloc of %zu bytes of scratch failed: %s",
                       elements * sizeof(float) + 256, cudaGetErrorString(e));
    }
    *out = (float *)((char *)s.base[slot] + offset);
    return TG_SUCCESS;
}

/* Milliseconds of one run of candidate c on d: the median of the samples. */
tg_status time_one(tg_handle *h, const scratch &s, const tg_candidate &c, const tg_problem &d,
                   double *ms)
{
    cudaStream_t stream = (cudaStream_t)h->stream;
    /* A first run: warms up, and sizes the samples. */
    TG_AT_CHECK(h, cudaEventRecord(s.start, stream));
    tg_status st = tg_cuda_launch_product(h, c.rung, c.split_k, &d);
    if (st != TG_SUCCESS)
        return st;
    TG_AT_CHECK(h, cudaEventRecord(s.stop, stream));
    TG_AT_CHECK(h, cudaEventSynchronize(s.stop));
    float first = 0.0f;
    TG_AT_CHECK(h, cudaEventElapsedTime(&first, s.start, s.stop));
    const int launches =
        std::max(1, std::min(kMaxLaunchesPerSample, (int)(kSampleMs / std::max(first, 1e-3f))));
    const int samples = first > 50.0f ? 1 : first > 10.0f ? 3 : kSamples;
    double times[kSamples];
    for (int i = 0; i < samples; ++i) {
        TG_AT_CHECK(h, cudaEventRecord(s.start, stream));
        for (int j = 0; j < launches; ++j)
            if ((st = tg_cuda_launch_product(h, c.rung, c.split_k, &d)) != TG_SUCCESS)
                return st;
        TG_AT_CHECK(h, cudaEventRecord(s.stop, stream));
        TG_AT_CHECK(h, cudaEventSynchronize(s.stop));
        float elapsed = 0.0f;
        TG_AT_CHECK(h, cudaEventElapsedTime(&elapsed, s.start, s.stop));
        times[i] = elapsed / launches;
    }
    std::sort(times, times + samples);
    *ms = times[samples / 2];
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
    const tg_device_props props = {h->compute_capability, h->sm_count};
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
    d.A = sa;
    d.B = sb;
    d.C = sc;
    TG_AT_CHECK(h, cudaEventCreate(&s.start));
    TG_AT_CHECK(h, cudaEventCreate(&s.stop));

    int best = -1;
    double best_ms = 0.0;
    tg_status last = TG_SUCCESS;
    for (int i = 0; i < count; ++i) {
        double ms = 0.0;
        const tg_status t = time_one(h, s, candidates[i], d, &ms);
        if (t != TG_SUCCESS) {
            last = t; /* a candidate that cannot run is left out */
            continue;
        }
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
