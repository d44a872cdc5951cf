/* Where a small call's time goes: the GPU's work, or the host's enqueueing of it.
 *
 *   call_overhead [--parts] [--math fp32|strict|tf32] [--algo NAME] [--split-k S] [--calls N]
 *                 MxNxK[:layout[:TRANS]] ...
 *
 * --parts first times, on the host, the CUDA runtime calls a call of the library makes (each
 * repeated back to back, per call): an empty kernel's launch (<<<>>>, cudaLaunchKernel, and
 * cudaLaunchKernelEx plain and with a programmatic dependency), cudaPointerGetAttributes of
 * device and host memory, cudaGetDevice, cudaStreamIsCapturing, cudaGetLastError,
 * cudaEventRecord, cudaStreamWaitEvent.
 *
 * --algo and --split-k force the shapes after them onto a rung and a count of slices
 * (tg_set_algo, tg_set_split_k; "auto" and 0 give the planner the choice back).
 *
 * For each shape, on one handle and one stream, the same operands every call (they stay in L2,
 * unlike `tilegemm bench`'s rotating sets, so the times are the GPU's floor, not a claim):
 *   each      a cudaEvent pair around every call, median (as `tilegemm bench` times)
 *   stream    one event pair around N calls enqueued back to back, per call
 *   host      the host's wall time to enqueue those N calls, per call (no synchronisation inside)
 *   plan      the planner's host time alone (tg_choose_algo), per call
 *   graph     one call captured into a CUDA graph and replayed N times back to back, per call:
 *             the GPU's time with no host code between the call's launches
 * A call whose `host` exceeds `graph` is bound by the host: the GPU waits for its launches. */
#include "tilegemm.h"
#include "timer.h" /* tg_now_seconds */

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a call failed: its source line, the call and why, then the end of the program. */
static void fail_at(int line, const char *call, const char *why)
{
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, call, why);
    exit(1);
}
#define CHECK_CUDA(x)                                                                          \
    do {                                                                                       \
        const cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess)                                                                 \
            fail_at(__LINE__, #x, cudaGetErrorString(e_));                                     \
    } while (0)
#define CHECK_TG(h, x)                                                                         \
    do {                                                                                       \
        if ((x) != TG_SUCCESS)                                                                 \
            fail_at(__LINE__, #x, tg_last_error(h));                                           \
    } while (0)

static int by_value(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

typedef struct {
    long m, n, k;
    tg_layout layout;
    tg_op ta, tb;
    long lda, ldb, ldc;
    float *A, *B, *C;
} shape;

__global__ void empty_kernel() {}

/* Per call, the host's time of `what` done `n` times back to back. */
#define HOST_TIME(label, n, what)                                                              \
    do {                                                                                       \
        const double t0_ = tg_now_seconds();                                                   \
        for (int i_ = 0; i_ < (n); ++i_) {                                                     \
            what;                                                                              \
        }                                                                                      \
        printf("  %-44s %7.3f us\n", label, 1e6 * (tg_now_seconds() - t0_) / (n));            \
    } while (0)

static void time_parts(cudaStream_t stream)
{
    const int n = 5000;
    float *device = NULL;
    CHECK_CUDA(cudaMalloc((void **)&device, 1 << 20));
    float *host = (float *)malloc(1 << 20);
    cudaPointerAttributes attr;
    cudaStreamCaptureStatus capture;
    int current = 0;
    cudaEvent_t event;
    CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    cudaLaunchAttribute dependent[1];
    dependent[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(1);
    config.blockDim = dim3(32);
    config.stream = stream;
    config.attrs = dependent;
    config.numAttrs = 1;
    printf("host time of the runtime's calls, each repeated %d times:\n", n);
    for (int round = 0; round < 2; ++round) {
        HOST_TIME("empty kernel<<<1, 32, 0, stream>>>", n, (empty_kernel<<<1, 32, 0, stream>>>()));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        HOST_TIME("empty kernel by cudaLaunchKernelEx, dependent", n,
                  CHECK_CUDA(cudaLaunchKernelEx(&config, empty_kernel)));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        config.numAttrs = 0;
        HOST_TIME("empty kernel by cudaLaunchKernelEx, plain", n,
                  CHECK_CUDA(cudaLaunchKernelEx(&config, empty_kernel)));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        config.numAttrs = 1;
        HOST_TIME("empty kernel by cudaLaunchKernel", n,
                  CHECK_CUDA(cudaLaunchKernel((const void *)empty_kernel, dim3(1), dim3(32), NULL,
                                              0, stream)));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        HOST_TIME("empty kernel<<<1, 32, 0, stream>>> again", n,
                  (empty_kernel<<<1, 32, 0, stream>>>()));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        HOST_TIME("cudaPointerGetAttributes, device memory", n,
                  CHECK_CUDA(cudaPointerGetAttributes(&attr, device)));
        HOST_TIME("cudaPointerGetAttributes, malloc'd memory", n,
                  CHECK_CUDA(cudaPointerGetAttributes(&attr, host)));
        HOST_TIME("cudaGetDevice", n, CHECK_CUDA(cudaGetDevice(&current)));
        HOST_TIME("cudaStreamIsCapturing", n, CHECK_CUDA(cudaStreamIsCapturing(stream, &capture)));
        HOST_TIME("cudaGetLastError", n, CHECK_CUDA(cudaGetLastError()));
        HOST_TIME("cudaEventRecord", n, CHECK_CUDA(cudaEventRecord(event, stream)));
        HOST_TIME("cudaStreamWaitEvent (same stream)", n,
                  CHECK_CUDA(cudaStreamWaitEvent(stream, event, 0)));
        CHECK_CUDA(cudaStreamSynchronize(stream));
    }
    CHECK_CUDA(cudaEventDestroy(event));
    CHECK_CUDA(cudaFree(device));
    free(host);
}

static tg_status call(tg_handle *h, const shape *s)
{
    return tg_sgemm(h, s->layout, s->ta, s->tb, s->m, s->n, s->k, 1.0f, s->A, s->lda, s->B,
                    s->ldb, 0.0f, s->C, s->ldc);
}

static int parse(const char *arg, shape *s)
{
    char layout[8] = "col", trans[4] = "NN";
    memset(s, 0, sizeof *s);
    if (sscanf(arg, "%ldx%ldx%ld:%7[a-z]:%3[NT]", &s->m, &s->n, &s->k, layout, trans) < 3)
        return 0;
    s->layout = strcmp(layout, "row") == 0 ? TG_ROW_MAJOR : TG_COL_MAJOR;
    s->ta = trans[0] == 'T' ? TG_TRANS : TG_NO_TRANS;
    s->tb = trans[1] == 'T' ? TG_TRANS : TG_NO_TRANS;
    /* tg_min_ld takes op(X)'s shape: A is m x k, B k x n */
    s->lda = tg_min_ld(s->layout, s->ta, s->m, s->k);
    s->ldb = tg_min_ld(s->layout, s->tb, s->k, s->n);
    s->ldc = tg_min_ld(s->layout, TG_NO_TRANS, s->m, s->n);
    CHECK_CUDA(cudaMalloc((void **)&s->A, sizeof(float) * s->m * s->k));
    CHECK_CUDA(cudaMalloc((void **)&s->B, sizeof(float) * s->k * s->n));
    CHECK_CUDA(cudaMalloc((void **)&s->C, sizeof(float) * s->m * s->n));
    CHECK_CUDA(cudaMemset(s->A, 0, sizeof(float) * s->m * s->k));
    CHECK_CUDA(cudaMemset(s->B, 0, sizeof(float) * s->k * s->n));
    return 1;
}

int main(int argc, char **argv)
{
    tg_math math = TG_MATH_FP32;
    int calls = 200;
    tg_handle *h = NULL;
    CHECK_TG(h, tg_create(&h));
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_TG(h, tg_set_stream(h, stream));
    CHECK_TG(h, tg_set_backend(h, TG_BACKEND_CUDA));
    cudaEvent_t start, stop, *each = NULL;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    printf("%-22s %-8s %-26s %9s %9s %9s %9s %9s\n", "shape", "math", "ran", "each_us",
           "stream_us", "host_us", "plan_us", "graph_us");
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--math") == 0 && i + 1 < argc) {
            math = (tg_math)tg_math_from_name(argv[++i]);
            continue;
        }
        if (strcmp(argv[i], "--parts") == 0) {
            time_parts(stream);
            continue;
        }
        if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc) {
            CHECK_TG(h, tg_set_algo(h, argv[++i]));
            continue;
        }
        if (strcmp(argv[i], "--split-k") == 0 && i + 1 < argc) {
            CHECK_TG(h, tg_set_split_k(h, atoi(argv[++i])));
            continue;
        }
        if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
            calls = atoi(argv[++i]);
            continue;
        }
        shape s;
        if (!parse(argv[i], &s)) {
            fprintf(stderr, "call_overhead: cannot read shape '%s'\n", argv[i]);
            return 2;
        }
        CHECK_TG(h, tg_set_math(h, math));
        each = (cudaEvent_t *)realloc(each, sizeof(cudaEvent_t) * 2 * calls);
        for (int e = 0; e < 2 * calls; ++e)
            CHECK_CUDA(cudaEventCreate(&each[e]));
        for (int w = 0; w < 20; ++w)
            CHECK_TG(h, call(h, &s));
        CHECK_CUDA(cudaStreamSynchronize(stream));

        for (int c = 0; c < calls; ++c) {
            CHECK_CUDA(cudaEventRecord(each[2 * c], stream));
            CHECK_TG(h, call(h, &s));
            CHECK_CUDA(cudaEventRecord(each[2 * c + 1], stream));
        }
        CHECK_CUDA(cudaStreamSynchronize(stream));
        float *ms = (float *)malloc(sizeof(float) * calls);
        for (int c = 0; c < calls; ++c)
            CHECK_CUDA(cudaEventElapsedTime(&ms[c], each[2 * c], each[2 * c + 1]));
        qsort(ms, calls, sizeof *ms, by_value);
        const double each_us = 1e3 * ms[calls / 2];

        CHECK_CUDA(cudaEventRecord(start, stream));
        const double t0 = tg_now_seconds();
        for (int c = 0; c < calls; ++c)
            CHECK_TG(h, call(h, &s));
        const double host_us = 1e6 * (tg_now_seconds() - t0) / calls;
        CHECK_CUDA(cudaEventRecord(stop, stream));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        float total = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&total, start, stop));
        const double stream_us = 1e3 * total / calls;

        const char *algo = NULL;
        int slices = 0;
        const double p0 = tg_now_seconds();
        for (int c = 0; c < calls; ++c)
            CHECK_TG(h, tg_choose_algo(h, s.layout, s.ta, s.tb, s.m, s.n, s.k, s.lda, s.ldb,
                                       s.ldc, &algo, &slices));
        const double plan_us = 1e6 * (tg_now_seconds() - p0) / calls;

        double graph_us = -1.0;
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        const tg_status captured = call(h, &s);
        CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
        if (captured == TG_SUCCESS && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
            for (int w = 0; w < 5; ++w)
                CHECK_CUDA(cudaGraphLaunch(exec, stream));
            CHECK_CUDA(cudaEventRecord(start, stream));
            for (int c = 0; c < calls; ++c)
                CHECK_CUDA(cudaGraphLaunch(exec, stream));
            CHECK_CUDA(cudaEventRecord(stop, stream));
            CHECK_CUDA(cudaStreamSynchronize(stream));
            CHECK_CUDA(cudaEventElapsedTime(&total, start, stop));
            graph_us = 1e3 * total / calls;
            CHECK_CUDA(cudaGraphExecDestroy(exec));
        }
        CHECK_CUDA(cudaGraphDestroy(graph));
        char ran[64];
        snprintf(ran, sizeof ran, "%s/%d", algo, slices);
        printf("%-22s %-8s %-26s %9.2f %9.2f %9.2f %9.2f %9.2f\n", argv[i], tg_math_name(math),
               ran, each_us, stream_us, host_us, plan_us, graph_us);
        fflush(stdout);
        free(ms);
        for (int e = 0; e < 2 * calls; ++e)
            CHECK_CUDA(cudaEventDestroy(each[e]));
        CHECK_CUDA(cudaFree(s.A));
        CHECK_CUDA(cudaFree(s.B));
        CHECK_CUDA(cudaFree(s.C));
    }
    free(each);
    tg_destroy(h);
    return 0;
}
