/* The roofline; see roofline.h. */
#include "roofline.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

void tg_tensor_ceilings(int major, int minor, tg_roofline *roof)
{
    if (major == 9 && minor == 0)
        roof->x3tf32_tflops = 135.0, roof->tf32_tflops = 405.0;
}

double tg_arith_peak_tflops(const tg_roofline *roof, tg_arith arith)
{
    return arith == TG_ARITH_3XTF32 ? roof->x3tf32_tflops
           : arith == TG_ARITH_TF32 ? roof->tf32_tflops
                                    : roof->ffma_tflops;
}

double tg_speed_of_light_s(const tg_roofline *roof, tg_math mode, double m, double n, double k,
                           double *compute_s, double *memory_s, double *peak_tflops)
{
    const double peak = mode == TG_MATH_FP32 && isfinite(roof->x3tf32_tflops) ? roof->x3tf32_tflops
                        : mode == TG_MATH_TF32 && isfinite(roof->tf32_tflops)  ? roof->tf32_tflops
                                                                              : roof->ffma_tflops;
    const double compute = 2.0 * m * n * k / (peak * 1e12);
    const double memory = 4.0 * (m * k + k * n + m * n) / (roof->copy_gbs * 1e9);
    if (compute_s)
        *compute_s = compute;
    if (memory_s)
        *memory_s = memory;
    if (peak_tflops)
        *peak_tflops = peak;
    double s = 5e-6;
    if (compute > s)
        s = compute;
    if (memory > s)
        s = memory;
    return isfinite(peak) && isfinite(roof->copy_gbs) ? s : NAN;
}

#ifndef TG_HAVE_CUDA

tg_roofline tg_measure_roofline(void) { return (tg_roofline){NAN, NAN, NAN, NAN}; }

#else

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The device-to-device copy rate, GB/s of bytes read plus written: 2 x 256 MiB, larger than
 * any L2, the median of 9 copies after 2 warm-ups.  NAN when the memory is not there or a
 * copy fails. */
static double copy_rate_gbs(void)
{
    enum { RUNS = 9 };
    const size_t bytes = (size_t)256 << 20;
    void *src = NULL, *dst = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    double ms[RUNS], rate = NAN;
    int ok = cudaMalloc(&src, bytes) == cudaSuccess && cudaMalloc(&dst, bytes) == cudaSuccess &&
             cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess &&
             cudaMemset(src, 0x3f, bytes) == cudaSuccess;
    for (int i = -2; i < RUNS && ok; ++i) {
        float t = 0.0f;
        ok = cudaEventRecord(start, 0) == cudaSuccess &&
             cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0) == cudaSuccess &&
             cudaEventRecord(stop, 0) == cudaSuccess && cudaEventSynchronize(stop) == cudaSuccess &&
             cudaEventElapsedTime(&t, start, stop) == cudaSuccess;
        if (i >= 0)
            ms[i] = t;
    }
    if (ok) {
        qsort(ms, RUNS, sizeof ms[0], by_value);
        rate = 2.0 * (double)bytes / (ms[RUNS / 2] * 1e6);
    }
    (void)cudaGetLastError(); /* a failure here leaves nothing for the caller's next call */
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    cudaFree(src);
    cudaFree(dst);
    return rate;
}

tg_roofline tg_measure_roofline(void)
{
    tg_roofline roof = {NAN, NAN, NAN, NAN};
    int dev = 0, clock_khz = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return roof;
    }
    /* 128 FP32 lanes an SM from sm_80 on (64 below), an FFMA being 2 flops */
    roof.ffma_tflops =
        prop.multiProcessorCount * (prop.major >= 8 ? 128.0 : 64.0) * 2.0 * clock_khz * 1e3 / 1e12;
    tg_tensor_ceilings(prop.major, prop.minor, &roof);
    roof.copy_gbs = copy_rate_gbs();
    return roof;
}

#endif
