/*
 * CUDA backend: streams, pointer inspection, staging of host operands, and the launch of the
 * planned rung.  Every CUDA call goes through TG_CUDA_CHECK, which records the call, its error,
 * the function, file and line on the handle and returns TG_ERROR_CUDA.
 */
#include <cuda_runtime.h>
#include <pthread.h>

#include <cstdio>
#include <cstring>

#include <algorithm>
#include <atomic>

#include "../plan/autotune.h" /* tg_at_device */
#include "../plan/measured.h" /* tg_measured_card */
#include "../plan/split_k.h"
#include "../staging.h"
#include "backend.h"
#include "kernels/common.cuh" /* store_result: the one rule for writing C */
#include "kernels/split_k_reduce.cuh"
#include "registry.h"

#define TG_CUDA_CHECK(h, expr)                                                                   \
    do {                                                                                         \
        const cudaError_t tg_err_ = TG_FAULT("CUDA: " #expr) ? cudaErrorUnknown : (expr);      \
        if (tg_err_ != cudaSuccess)                                                              \
            return tg_fail((h), TG_ERROR_CUDA, 0, "%s failed: %s (%s) in %s at %s:%d", #expr,    \
                           cudaGetErrorName(tg_err_), cudaGetErrorString(tg_err_), __func__,     \
                           __FILE__, __LINE__);                                                  \
    } while (0)

namespace {

/* Grid limits for grid.y and grid.z; larger problems are launched in slices. */
constexpr int64_t kMaxGridYZ = 65535;


cudaStream_t stream_of(const tg_handle *h) { return (cudaStream_t)h->stream; }

bool stages_any(const tg_plan *plan)
{
    return plan->stage[TG_SLOT_A] || plan->stage[TG_SLOT_B] || plan->stage[TG_SLOT_C];
}

/* The handle belongs to the GPU current at tg_create; every call must find it current. */
tg_status require_current_device(tg_handle *h)
{
    int current = 0;
    TG_CUDA_CHECK(h, cudaGetDevice(&current));
    if (current != h->device)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "the current GPU is %d but this handle belongs to GPU %d (cudaSetDevice(%d) "
                       "first, or use a handle made while GPU %d was current)",
                       current, h->device, h->device, current);
    return TG_SUCCESS;
}

/* Grows a workspace buffer to at least bytes; contents are not kept.  Freeing the old buffer
 * waits for the work that may still use it. */
tg_status reserve(tg_handle *h, tg_slot slot, size_t bytes, float **out)
{
    tg_workspace *ws = &h->workspace;
    if (ws->bytes[slot] < bytes) {
        if (ws->buffer[slot]) {
            /* Grow by half again, so a run of growing shapes reallocates rarely. */
            bytes = std::max(bytes, ws->bytes[slot] + ws->bytes[slot] / 2);
            /* cudaFree waits for all work on the device, whatever stream still reads it. */
            TG_CUDA_CHECK(h, cudaFree(ws->buffer[slot]));
            ws->buffer[slot] = nullptr;
            ws->bytes[slot] = 0;
        }
        static const char *const names[] = {
            "device: staging buffer for A", "device: staging buffer for B",
            "device: staging buffer for C", "device: split-K workspace",
            "device: workspace of the rung"};
        const cudaError_t e = TG_FAULT(names[slot]) ? cudaErrorMemoryAllocation
                                                    : cudaMalloc(&ws->buffer[slot], bytes);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            ws->buffer[slot] = nullptr;
            return tg_fail(h, TG_ERROR_ALLOCATION, 0,
                           "%s: cudaMalloc of %zu bytes failed: %s", names[slot], bytes,
                           cudaGetErrorString(e));
        }
        ws->bytes[slot] = bytes;
    }
    *out = (float *)ws->buffer[slot];
    return TG_SUCCESS;
}

/* items of `count` lines of `length` floats each: line i of item b at b * stride + i * pitch,
 * on either side.  One copy where both sides are contiguous, else one 2D copy per item. */
tg_status copy_lines(tg_handle *h, float *dst, int64_t dst_pitch, int64_t dst_stride,
                     const float *src, int64_t src_pitch, int64_t src_stride, int64_t items,
                     int64_t count, int64_t length, cudaMemcpyKind kind)
{
    const int64_t item = count * length;
    if (tg_copy_is_one_piece(items, count, length, dst_pitch, dst_stride, src_pitch,
                             src_stride)) {
        TG_CUDA_CHECK(h, cudaMemcpyAsync(dst, src, (size_t)(item * items) * sizeof(float), kind,
                                         stream_of(h)));
        return TG_SUCCESS;
    }
    for (int64_t b = 0; b < items; ++b)
        TG_CUDA_CHECK(h, cudaMemcpy2DAsync(dst + b * dst_stride, dst_pitch * sizeof(float),
                                           src + b * src_stride, src_pitch * sizeof(float),
                                           length * sizeof(float), count, kind, stream_of(h)));
    return TG_SUCCESS;
}

/* Copies a host operand into the workspace, packed, and points the view at the copy. */
tg_status stage_operand(tg_handle *h, tg_slot slot, int64_t rows, int64_t cols, int64_t batch,
                        const float **data, int64_t *rs, int64_t *cs, int64_t *stride)
{
    const tg_lines lines = tg_lines_of(rows, cols, *rs, *cs);
    const int64_t item = lines.count * lines.length;
    const int64_t items = *stride == 0 ? 1 : batch;
    float *device = nullptr;
    tg_status s = reserve(h, slot, (size_t)(item * items) * sizeof(float), &device);
    if (s != TG_SUCCESS ||
        (s = copy_lines(h, device, lines.length, item, *data, lines.pitch, *stride, items,
                        lines.count, lines.length, cudaMemcpyHostToDevice)))
        return s;
    tg_packed_strides(&lines, rs, cs);
    *stride = *stride == 0 ? 0 : item;
    *data = device;
    return TG_SUCCESS;
}

/* C = beta * C for the calls where alpha or k is 0; beta = 0 writes zeros without reading. */
__global__ void scale_c(const tg_problem p)
{
    const int64_t per_item = p.m * p.n;
    const int64_t total = per_item * p.batch;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t b = e / per_item, i = (e % per_item) / p.n, j = e % p.n;
        store_result(p.C + b * p.stride_c + i * p.ldc + j, 0.0f, 0.0f, p.beta);
    }
}

/* Whether this build has code the handle's GPU can run.  A build for some architectures only
 * (a native one: the GPU found at configure time) fails here with what to rebuild, not at the
 * first launch with "no kernel image".  One look per GPU and process; not a fault-injection
 * site, since later calls skip it. */
tg_status require_gpu_code(tg_handle *h)
{
    static std::atomic<int> runs[64]; /* per device: 1 once this build's code loaded there */
    const bool cached = h->device >= 0 && h->device < 64;
    if (cached && runs[h->device].load(std::memory_order_relaxed))
        return TG_SUCCESS;
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, scale_c);
    if (e == cudaSuccess) {
        if (cached)
            runs[h->device].store(1, std::memory_order_relaxed);
        return TG_SUCCESS;
    }
    (void)cudaGetLastError();
    const int cc = h->compute_capability;
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "GPU %d (compute capability %d.%d) cannot run this build of tilegemm "
                       "(GPU code: %s): rebuild it on this machine (an empty TG_CUDA_ARCH "
                       "builds for the GPU found), with -DTG_CUDA_ARCH=%d%s, or with "
                       "-DTG_CUDA_ARCH=all for any GPU",
                       h->device, cc / 10, cc % 10, tg_cuda_code(), cc, cc == 90 ? "a" : "");
    if (e == cudaErrorUnsupportedPtxVersion)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "GPU %d (compute capability %d.%d) has no binary code in this build of "
                       "tilegemm (GPU code: %s), and its driver is older than the CUDA toolkit "
                       "that made the PTX: update the driver, or rebuild with -DTG_CUDA_ARCH=%d%s",
                       h->device, cc / 10, cc % 10, tg_cuda_code(), cc, cc == 90 ? "a" : "");
    return tg_fail(h, TG_ERROR_CUDA, 0, "cudaFuncGetAttributes(scale_c) failed: %s (%s) in %s",
                   cudaGetErrorName(e), cudaGetErrorString(e), __func__);
}

tg_status launch_scale(tg_handle *h, const tg_problem &p)
{
    const int threads = 256;
    scale_c<<<grid_stride_blocks(p.m * p.n * p.batch, threads), threads, 0, stream_of(h)>>>(p);
    TG_CUDA_CHECK(h, cudaGetLastError());
    return TG_SUCCESS;
}

/* Under graph capture workspace cannot be allocated, and the wait for its last use and the
 * record of this one become external event nodes. */
tg_status stream_capturing(tg_handle *h, bool *capturing)
{
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    TG_CUDA_CHECK(h, cudaStreamIsCapturing(stream_of(h), &capture));
    *capturing = capture != cudaStreamCaptureStatusNone;
    return TG_SUCCESS;
}

/* Workspace on another stream may still be in use: work queued from here waits for it. */
tg_status await_workspace(tg_handle *h, bool capturing)
{
    if (h->workspace.last_use)
        TG_CUDA_CHECK(h, cudaStreamWaitEvent(stream_of(h), (cudaEvent_t)h->workspace.last_use,
                                             capturing ? cudaEventWaitExternal : 0));
    return TG_SUCCESS;
}

/* The workspace is busy until the stream gets here: its next use, on any stream, waits. */
tg_status record_workspace_use(tg_handle *h, bool capturing)
{
    if (!h->workspace.last_use) {
        cudaEvent_t event;
        TG_CUDA_CHECK(h, cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
        h->workspace.last_use = event;
    }
    TG_CUDA_CHECK(h, cudaEventRecordWithFlags((cudaEvent_t)h->workspace.last_use, stream_of(h),
                                              capturing ? cudaEventRecordExternal : 0));
    return TG_SUCCESS;
}

/* A rung with its own workspace (tg_rung.workspace_bytes): the handle's rung slot, grown on
 * demand like split-K's.  `within_split`: split-K's launch waits for the workspace and records
 * its use around the whole call, so that no event comes between the product and the reduction
 * launched dependently on it. */
tg_status launch_with_workspace(tg_handle *h, const tg_rung &rung, const tg_problem &p,
                                bool within_split)
{
    bool capturing = false;
    tg_status s = stream_capturing(h, &capturing);
    if (s != TG_SUCCESS)
        return s;
    const size_t bytes = rung.workspace_bytes(&p);
    if (capturing && h->workspace.bytes[TG_SLOT_RUNG] < bytes)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "%s needs %zu bytes of workspace, which cannot be allocated during graph "
                       "capture: run this call once before capturing",
                       rung.name, bytes);
    float *workspace = nullptr;
    if ((s = reserve(h, TG_SLOT_RUNG, bytes, &workspace)) != TG_SUCCESS ||
        (!within_split && (s = await_workspace(h, capturing)) != TG_SUCCESS))
        return s;
    TG_CUDA_CHECK(h, (cudaError_t)rung.launch_with_workspace(&p, h->stream, workspace));
    return within_split ? TG_SUCCESS : record_workspace_use(h, capturing);
}

/* Launches the rung over slices that keep grid.y and grid.z inside their limits. */
tg_status launch_rung(tg_handle *h, const tg_rung &rung, const tg_problem &p,
                      bool within_split = false)
{
    const int64_t max_rows = kMaxGridYZ * rung.block_rows;
    for (int64_t b0 = 0; b0 < p.batch; b0 += kMaxGridYZ) {
        for (int64_t r0 = 0; r0 < p.m; r0 += max_rows) {
            tg_problem slice = p;
            slice.batch = std::min(kMaxGridYZ, p.batch - b0);
            slice.m = std::min(max_rows, p.m - r0);
            slice.A = p.A + b0 * p.stride_a + r0 * p.a_rs;
            slice.B = p.B + b0 * p.stride_b;
            slice.C = p.C + b0 * p.stride_c + r0 * p.ldc;
            if (rung.workspace_bytes) {
                const tg_status s = launch_with_workspace(h, rung, slice, within_split);
                if (s != TG_SUCCESS)
                    return s;
            } else {
                TG_CUDA_CHECK(h, (cudaError_t)rung.launch(&slice, h->stream));
            }
        }
    }
    return TG_SUCCESS;
}

/* The product cut along k: the rung runs the slices into workspace, then they are summed. */
tg_status launch_split_k(tg_handle *h, const tg_rung &rung, const tg_problem &p, int slices)
{
    bool capturing = false;
    tg_status s = stream_capturing(h, &capturing);
    if (s != TG_SUCCESS)
        return s;
    const size_t bytes = (size_t)tg_split_k_workspace(&p, slices) * sizeof(float);
    if (capturing && h->workspace.bytes[TG_SLOT_SPLIT_K] < bytes)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "split-K needs %zu bytes of workspace, which cannot be allocated during "
                       "graph capture: run this call once before capturing, or tg_set_split_k(1)",
                       bytes);
    float *workspace = nullptr;
    if ((s = reserve(h, TG_SLOT_SPLIT_K, bytes, &workspace)) != TG_SUCCESS ||
        (s = await_workspace(h, capturing)) != TG_SUCCESS)
        return s;
    tg_split_k split;
    tg_split_k_make(&p, slices, workspace, &split);
    if ((s = launch_rung(h, rung, split.full, true)) != TG_SUCCESS)
        return s;
    tg_problem folded = split.tail;
    if (!split.tail_folded) {
        folded.k = 0;
        if (split.tail.k > 0 && (s = launch_rung(h, rung, split.tail, true)) != TG_SUCCESS)
            return s;
    }
    TG_CUDA_CHECK(h, split_k_reduce::launch_reduce_split_k(p, workspace, split.partials, folded,
                                                           h->compute_capability >= 90,
                                                           stream_of(h)));
    return record_workspace_use(h, capturing);
}

} // namespace

extern "C" {

int tg_cuda_device_count(void)
{
    static const int count = [] {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess) {
            (void)cudaGetLastError(); /* no driver or no device: the CPU backend takes over */
            n = 0;
        }
        return n;
    }();
    return count;
}

tg_status tg_cuda_attach(tg_handle *h)
{
    int major = 0, minor = 0;
    TG_CUDA_CHECK(h, cudaGetDevice(&h->device));
    TG_CUDA_CHECK(h, cudaDeviceGetAttribute(&h->sm_count, cudaDevAttrMultiProcessorCount,
                                            h->device));
    TG_CUDA_CHECK(h, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                            h->device));
    TG_CUDA_CHECK(h, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                                            h->device));
    h->compute_capability = major * 10 + minor;
    /* the card whose own corpus rows the planner reads, by the GPU's name (asked only where
     * some card has rows: cudaGetDeviceProperties is slow) */
    if (tg_measured_card_count > 1) {
        tg_at_device identity;
        const tg_status named = tg_cuda_device_identity(h, &identity);
        if (named != TG_SUCCESS)
            return named;
        h->card = tg_measured_card(identity.name);
    }
    /* A handle forced onto the CPU makes no CUDA context; execute checks before any launch. */
    return h->backend == TG_BACKEND_CPU ? TG_SUCCESS : require_gpu_code(h);
}

/* TG_CUDA_CODE comes from the build (cmake/cuda_arch.cmake). */
const char *tg_cuda_code(void) { return TG_CUDA_CODE; }

tg_status tg_cuda_memory_kind(tg_handle *h, const void *ptr, tg_memory *kind)
{
    *kind = TG_MEMORY_HOST;
    if (ptr == nullptr || tg_cuda_device_count() == 0)
        return TG_SUCCESS;
    cudaPointerAttributes attr;
    const cudaError_t e = cudaPointerGetAttributes(&attr, ptr);
    if (e == cudaErrorInvalidValue) {
        (void)cudaGetLastError(); /* runtimes before 11 say this of plain host memory */
        return TG_SUCCESS;
    }
    TG_CUDA_CHECK(h, e); /* e.g. a sticky error: guessing "host" could dereference device memory */
    if (attr.type == cudaMemoryTypeDevice && attr.device != h->device)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "an operand is memory of GPU %d but this handle belongs to GPU %d (make "
                       "that GPU current before tg_create: one handle per GPU)",
                       attr.device, h->device);
    if (attr.type == cudaMemoryTypeDevice)
        *kind = TG_MEMORY_DEVICE;
    else if (attr.type == cudaMemoryTypeManaged)
        *kind = TG_MEMORY_MANAGED;
    return TG_SUCCESS;
}

tg_status tg_cuda_ensure_stream(tg_handle *h)
{
    if (h->stream_chosen || tg_cuda_device_count() == 0)
        return TG_SUCCESS;
    const tg_status status = require_current_device(h);
    if (status != TG_SUCCESS)
        return status;
    /* A blocking stream: ordered after work on the legacy default stream, where callers
     * commonly prepare their inputs (cudaMemcpy). */
    cudaStream_t s;
    TG_CUDA_CHECK(h, cudaStreamCreate(&s));
    h->own_stream = h->stream = s;
    h->stream_chosen = 1;
    return TG_SUCCESS;
}

tg_status tg_cuda_switch_stream(tg_handle *h, void *stream)
{
    /* Nothing waits here (like cublasSetStream); the handle's own stream stays alive until
     * tg_destroy, so a caller may switch back to what tg_get_stream returned. */
    h->stream = stream;
    h->stream_chosen = 1;
    return TG_SUCCESS;
}

void tg_cuda_release(tg_handle *h)
{
    if (tg_cuda_device_count() == 0)
        return;
    /* Teardown cannot report failures; the handle is going away either way.  Only the
     * handle's own stream and event are waited on: a caller's stream may be gone already, and
     * cudaFree waits for any work still reading the workspace. */
    if (h->own_stream)
        (void)cudaStreamSynchronize((cudaStream_t)h->own_stream);
    if (h->workspace.last_use)
        (void)cudaEventSynchronize((cudaEvent_t)h->workspace.last_use);
    for (void *&buffer : h->workspace.buffer) {
        if (buffer)
            (void)cudaFree(buffer);
        buffer = nullptr;
    }
    if (h->workspace.last_use)
        (void)cudaEventDestroy((cudaEvent_t)h->workspace.last_use);
    h->workspace.last_use = nullptr;
    if (h->own_stream)
        (void)cudaStreamDestroy((cudaStream_t)h->own_stream);
    h->own_stream = h->stream = nullptr;
    h->stream_chosen = 0;
    (void)cudaGetLastError();
}

tg_status tg_cuda_synchronize(tg_handle *h)
{
    if (h->stream_chosen) /* no stream yet: nothing was queued */
        TG_CUDA_CHECK(h, cudaStreamSynchronize(stream_of(h)));
    return TG_SUCCESS;
}

static tg_status execute(tg_handle *h, const tg_problem *p, const tg_plan *plan);

/* Named once per device and process: cudaGetDeviceProperties is slow. */
tg_status tg_cuda_device_identity(tg_handle *h, struct tg_at_device *dev)
{
    static tg_at_device known[64];
    static int filled[64];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    const bool cached = h->device >= 0 && h->device < 64;
    pthread_mutex_lock(&lock);
    if (cached && filled[h->device]) {
        *dev = known[h->device];
        pthread_mutex_unlock(&lock);
        return TG_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    cudaDeviceProp props;
    TG_CUDA_CHECK(h, cudaGetDeviceProperties(&props, h->device));
    tg_at_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", props.name);
    d.cc = h->compute_capability;
    d.sms = h->sm_count;
    pthread_mutex_lock(&lock);
    if (cached) {
        known[h->device] = d;
        filled[h->device] = 1;
    }
    pthread_mutex_unlock(&lock);
    *dev = d;
    return TG_SUCCESS;
}

tg_status tg_cuda_check_code(tg_handle *h) { return require_gpu_code(h); }

tg_status tg_cuda_launch_product(tg_handle *h, int rung, int slices, const tg_problem *d)
{
    return slices > 1 ? launch_split_k(h, *tg_rungs[rung], *d, slices)
                      : launch_rung(h, *tg_rungs[rung], *d);
}

tg_status tg_cuda_execute(tg_handle *h, const tg_problem *p, const tg_plan *plan)
{
    const tg_status s = execute(h, p, plan);
    /* A failure after host copies were queued must not return while they still read the
     * caller's memory (pinned host memory is copied truly asynchronously). */
    if (s != TG_SUCCESS && h->stream_chosen &&
        stages_any(plan)) {
        (void)cudaStreamSynchronize(stream_of(h));
        (void)cudaGetLastError();
    }
    return s;
}

static tg_status execute(tg_handle *h, const tg_problem *p, const tg_plan *plan)
{
    tg_status s = require_current_device(h);
    if (s != TG_SUCCESS || (s = require_gpu_code(h)) != TG_SUCCESS)
        return s;
    /* An earlier, unrelated failure left in the runtime must not be blamed on this call's
     * launches, which read the last error to check themselves. */
    (void)cudaGetLastError();
    if ((s = tg_cuda_ensure_stream(h)) != TG_SUCCESS)
        return s;
    tg_problem d = *p; /* the problem as the device sees it */
    const bool runs_product = plan->rung >= 0;
    if (runs_product && plan->stage[TG_SLOT_A] &&
        (s = stage_operand(h, TG_SLOT_A, p->m, p->k, p->batch, &d.A, &d.a_rs, &d.a_cs,
                           &d.stride_a)))
        return s;
    if (runs_product && plan->stage[TG_SLOT_B] &&
        (s = stage_operand(h, TG_SLOT_B, p->k, p->n, p->batch, &d.B, &d.b_rs, &d.b_cs,
                           &d.stride_b)))
        return s;
    if (plan->stage[TG_SLOT_C]) {
        float *device_c = nullptr;
        if ((s = reserve(h, TG_SLOT_C, (size_t)(p->m * p->n * p->batch) * sizeof(float),
                         &device_c)))
            return s;
        d.C = device_c;
        d.ldc = p->n;
        d.stride_c = p->m * p->n;
        /* beta = 0 never reads C, so it is not even copied. */
        if (p->beta != 0.0f &&
            (s = copy_lines(h, d.C, d.ldc, d.stride_c, p->C, p->ldc, p->stride_c, p->batch,
                            p->m, p->n, cudaMemcpyHostToDevice)))
            return s;
    }

    if (!runs_product)
        s = launch_scale(h, d);
    else
        s = tg_cuda_launch_product(h, plan->rung, plan->split_k, &d);
    if (s != TG_SUCCESS)
        return s;

    if (plan->stage[TG_SLOT_C] &&
        (s = copy_lines(h, p->C, p->ldc, p->stride_c, d.C, d.ldc, d.stride_c, p->batch, p->m,
                        p->n, cudaMemcpyDeviceToHost)))
        return s;
    if (stages_any(plan))
        TG_CUDA_CHECK(h, cudaStreamSynchronize(stream_of(h)));
    return TG_SUCCESS;
}

} // extern "C"
