/*
 * CUDA backend: streams, pointer inspection, staging of host operands, and the launch of the
 * planned rung.  Every CUDA call goes through TG_CUDA_CHECK, which records the call, its error,
 * the function, file and line on the handle and returns TG_ERROR_CUDA.
 */
#include <cuda_runtime.h>

#include <algorithm>

#include "../split_k.h"
#include "backend.h"
#include "registry.h"

#define TG_CUDA_CHECK(h, expr)                                                                   \
    do {                                                                                         \
        const cudaError_t tg_err_ = (expr);                                                      \
        if (tg_err_ != cudaSuccess)                                                              \
            return tg_fail((h), TG_ERROR_CUDA, 0, "%s failed: %s (%s) in %s at %s:%d", #expr,    \
                           cudaGetErrorName(tg_err_), cudaGetErrorString(tg_err_), __func__,     \
                           __FILE__, __LINE__);                                                  \
    } while (0)

namespace {

/* Grid limits for grid.y and grid.z; larger problems are launched in slices. */
constexpr int64_t kMaxGridYZ = 65535;

enum Slot { kSlotA = 0, kSlotB = 1, kSlotC = 2, kSlotSplitK = 3 };

cudaStream_t stream_of(const tg_handle *h) { return (cudaStream_t)h->stream; }

/* Grows a workspace buffer to at least bytes; contents are not kept. */
tg_status reserve(tg_handle *h, Slot slot, size_t bytes, float **out)
{
    tg_workspace *ws = &h->workspace;
    if (ws->bytes[slot] < bytes) {
        if (ws->buffer[slot]) {
            TG_CUDA_CHECK(h, cudaStreamSynchronize(stream_of(h)));
            TG_CUDA_CHECK(h, cudaFree(ws->buffer[slot]));
            ws->buffer[slot] = nullptr;
            ws->bytes[slot] = 0;
        }
        const cudaError_t e = cudaMalloc(&ws->buffer[slot], bytes);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            ws->buffer[slot] = nullptr;
            return tg_fail(h, TG_ERROR_ALLOCATION, 0,
                           "cudaMalloc of %zu bytes of workspace failed: %s", bytes,
                           cudaGetErrorString(e));
        }
        ws->bytes[slot] = bytes;
    }
    *out = (float *)ws->buffer[slot];
    return TG_SUCCESS;
}

/*
 * A strided matrix view as lines of contiguous floats: one of the two strides of a view built
 * from a leading dimension is 1, and that direction is the line.
 */
struct Lines {
    int64_t count, length, pitch;
    explicit Lines(int64_t rows, int64_t cols, int64_t rs, int64_t cs)
        : count(cs == 1 ? rows : cols), length(cs == 1 ? cols : rows), pitch(cs == 1 ? rs : cs)
    {
    }
};

/* Copies a host operand into the workspace, packed, and points the view at the copy. */
tg_status stage_operand(tg_handle *h, Slot slot, int64_t rows, int64_t cols, int64_t batch,
                        const float **data, int64_t *rs, int64_t *cs, int64_t *stride)
{
    const Lines lines(rows, cols, *rs, *cs);
    const int64_t item = lines.count * lines.length;
    const int64_t items = *stride == 0 ? 1 : batch;
    float *device = nullptr;
    tg_status s = reserve(h, slot, (size_t)(item * items) * sizeof(float), &device);
    if (s != TG_SUCCESS)
        return s;
    const bool dense = lines.pitch == lines.length && (items == 1 || *stride == item);
    if (dense) {
        TG_CUDA_CHECK(h, cudaMemcpyAsync(device, *data, (size_t)(item * items) * sizeof(float),
                                         cudaMemcpyHostToDevice, stream_of(h)));
    } else {
        for (int64_t b = 0; b < items; ++b)
            TG_CUDA_CHECK(h, cudaMemcpy2DAsync(device + b * item, lines.length * sizeof(float),
                                               *data + b * *stride, lines.pitch * sizeof(float),
                                               lines.length * sizeof(float), lines.count,
                                               cudaMemcpyHostToDevice, stream_of(h)));
    }
    const bool row_lines = *cs == 1;
    *rs = row_lines ? lines.length : 1;
    *cs = row_lines ? 1 : lines.length;
    *stride = *stride == 0 ? 0 : item;
    *data = device;
    return TG_SUCCESS;
}

/* C between the caller's rows of ldc and the workspace's packed rows of n, each way. */
tg_status copy_c(tg_handle *h, float *dst, int64_t dst_ld, int64_t dst_stride, const float *src,
                 int64_t src_ld, int64_t src_stride, const tg_problem &p, cudaMemcpyKind kind)
{
    for (int64_t b = 0; b < p.batch; ++b)
        TG_CUDA_CHECK(h, cudaMemcpy2DAsync(dst + b * dst_stride, dst_ld * sizeof(float),
                                           src + b * src_stride, src_ld * sizeof(float),
                                           p.n * sizeof(float), p.m, kind, stream_of(h)));
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
        float *c = p.C + b * p.stride_c + i * p.ldc + j;
        *c = p.beta == 0.0f ? 0.0f : p.beta * *c;
    }
}

tg_status launch_scale(tg_handle *h, const tg_problem &p)
{
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((p.m * p.n * p.batch + threads - 1) / threads, 65535);
    scale_c<<<(unsigned)blocks, threads, 0, stream_of(h)>>>(p);
    TG_CUDA_CHECK(h, cudaGetLastError());
    return TG_SUCCESS;
}

/* Split-K's last step: C = alpha * (sum of the partial products) + beta * C. */
__global__ void reduce_split_k(const tg_problem p, const float *partials, int64_t count)
{
    const int64_t per_item = p.m * p.n;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < per_item;
         e += (int64_t)gridDim.x * blockDim.x) {
        float sum = 0.0f;
        for (int64_t s = 0; s < count; ++s)
            sum += partials[s * per_item + e];
        float *c = p.C + (e / p.n) * p.ldc + e % p.n;
        *c = p.beta == 0.0f ? p.alpha * sum : p.alpha * sum + p.beta * *c;
    }
}

/* Launches the rung over slices that keep grid.y and grid.z inside their limits. */
tg_status launch_rung(tg_handle *h, const tg_rung &rung, const tg_problem &p)
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
            TG_CUDA_CHECK(h, (cudaError_t)rung.launch(&slice, h->stream));
        }
    }
    return TG_SUCCESS;
}

/* The product cut along k: the rung runs the slices into workspace, then they are summed. */
tg_status launch_split_k(tg_handle *h, const tg_rung &rung, const tg_problem &p, int slices)
{
    float *workspace = nullptr;
    tg_status s = reserve(h, kSlotSplitK,
                          (size_t)tg_split_k_workspace(&p, slices) * sizeof(float), &workspace);
    if (s != TG_SUCCESS)
        return s;
    tg_split_k split;
    tg_split_k_make(&p, slices, workspace, &split);
    if ((s = launch_rung(h, rung, split.full)) != TG_SUCCESS)
        return s;
    if (split.tail.k > 0 && (s = launch_rung(h, rung, split.tail)) != TG_SUCCESS)
        return s;
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((p.m * p.n + threads - 1) / threads, 65535);
    reduce_split_k<<<(unsigned)blocks, threads, 0, stream_of(h)>>>(p, workspace, split.partials);
    TG_CUDA_CHECK(h, cudaGetLastError());
    return TG_SUCCESS;
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

int tg_cuda_sm_count(void)
{
    static const int count = [] {
        int device = 0, sms = 0;
        if (tg_cuda_device_count() == 0 || cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
            (void)cudaGetLastError(); /* planning goes on without split-K */
            sms = 0;
        }
        return sms;
    }();
    return count;
}

int tg_cuda_compute_capability(void)
{
    static const int cc = [] {
        int device = 0, major = 0, minor = 0;
        if (tg_cuda_device_count() == 0 || cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) !=
                cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) !=
                cudaSuccess) {
            (void)cudaGetLastError(); /* planning goes on without the tuned tables */
            return 0;
        }
        return major * 10 + minor;
    }();
    return cc;
}

tg_status tg_cuda_memory_kind(tg_handle *h, const void *ptr, tg_memory *kind)
{
    (void)h;
    *kind = TG_MEMORY_HOST;
    if (ptr == nullptr || tg_cuda_device_count() == 0)
        return TG_SUCCESS;
    cudaPointerAttributes attr;
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        (void)cudaGetLastError(); /* memory the runtime never saw: plain host memory */
        return TG_SUCCESS;
    }
    if (attr.type == cudaMemoryTypeDevice)
        *kind = TG_MEMORY_DEVICE;
    else if (attr.type == cudaMemoryTypeManaged)
        *kind = TG_MEMORY_MANAGED;
    return TG_SUCCESS;
}

tg_status tg_cuda_create_stream(tg_handle *h)
{
    cudaStream_t s;
    TG_CUDA_CHECK(h, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    h->stream = s;
    h->owns_stream = 1;
    return TG_SUCCESS;
}

void tg_cuda_release(tg_handle *h)
{
    if (tg_cuda_device_count() == 0)
        return;
    /* Teardown cannot report failures; the handle is going away either way. */
    (void)cudaStreamSynchronize(stream_of(h));
    for (void *&buffer : h->workspace.buffer) {
        if (buffer)
            (void)cudaFree(buffer);
        buffer = nullptr;
    }
    if (h->owns_stream && h->stream)
        (void)cudaStreamDestroy(stream_of(h));
    h->stream = nullptr;
    h->owns_stream = 0;
    (void)cudaGetLastError();
}

tg_status tg_cuda_synchronize(tg_handle *h)
{
    if (tg_cuda_device_count() > 0)
        TG_CUDA_CHECK(h, cudaStreamSynchronize(stream_of(h)));
    return TG_SUCCESS;
}

tg_status tg_cuda_execute(tg_handle *h, const tg_problem *p, const tg_plan *plan)
{
    tg_problem d = *p; /* the problem as the device sees it */
    tg_status s;
    const bool runs_product = plan->rung >= 0;
    if (runs_product && plan->stage[kSlotA] &&
        (s = stage_operand(h, kSlotA, p->m, p->k, p->batch, &d.A, &d.a_rs, &d.a_cs,
                           &d.stride_a)))
        return s;
    if (runs_product && plan->stage[kSlotB] &&
        (s = stage_operand(h, kSlotB, p->k, p->n, p->batch, &d.B, &d.b_rs, &d.b_cs,
                           &d.stride_b)))
        return s;
    if (plan->stage[kSlotC]) {
        float *device_c = nullptr;
        if ((s = reserve(h, kSlotC, (size_t)(p->m * p->n * p->batch) * sizeof(float),
                         &device_c)))
            return s;
        d.C = device_c;
        d.ldc = p->n;
        d.stride_c = p->m * p->n;
        /* beta = 0 never reads C, so it is not even copied. */
        if (p->beta != 0.0f &&
            (s = copy_c(h, d.C, d.ldc, d.stride_c, p->C, p->ldc, p->stride_c, *p,
                        cudaMemcpyHostToDevice)))
            return s;
    }

    if (!runs_product)
        s = launch_scale(h, d);
    else if (plan->split_k > 1)
        s = launch_split_k(h, *tg_rungs[plan->rung], d, plan->split_k);
    else
        s = launch_rung(h, *tg_rungs[plan->rung], d);
    if (s != TG_SUCCESS)
        return s;

    if (plan->stage[kSlotC] &&
        (s = copy_c(h, p->C, p->ldc, p->stride_c, d.C, d.ldc, d.stride_c, *p,
                    cudaMemcpyDeviceToHost)))
        return s;
    if (plan->stage[kSlotA] || plan->stage[kSlotB] || plan->stage[kSlotC])
        TG_CUDA_CHECK(h, cudaStreamSynchronize(stream_of(h)));
    return TG_SUCCESS;
}

} // extern "C"
