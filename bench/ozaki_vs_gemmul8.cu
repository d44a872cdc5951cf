/*
 * ozaki_vs_gemmul8: FP32 products from INT8 tensor cores, tilegemm's rung 11 (`ozaki2_int8`)
 * beside GEMMul8 (github.com/RIKEN-RCCS/GEMMul8, the Ozaki scheme II with a fixed number of
 * moduli) and cuBLAS, in one process, on the same device buffers (issue 32).
 *
 * For each square size n (default 4096 8192 16384), column-major, no transposes, alpha = 1,
 * beta = 0, and each data class:
 *   uniform   A and B uniform in [-1, 1), full 24-bit mantissas
 *   lines     as uniform, then each row of A times 2^u, u a uniform integer in [-60, 60], and
 *             each column of B times 2^v, v in [-40, 40] (so that no sum passes FLT_MAX): the
 *             lines both schemes scale, wide exponent range across them
 *   spread10  as uniform, each element times 2^u, u in [-10, 10]: exponents spread within a
 *             line, where a fixed number of moduli loses the small elements' low bits
 * it runs
 *   cublas            cublasSgemm, CUBLAS_DEFAULT_MATH (FP32, no TF32): the ratio's reference,
 *                     what `tilegemm bench` calls cuBLAS FP32
 *   cublas_pedantic   cublasGemmEx with CUBLAS_COMPUTE_32F_PEDANTIC
 *   ozaki2_int8       tilegemm, tg_set_algo(h, "ozaki2_int8"): moduli chosen from the data
 *   auto              tilegemm, `auto` in the default fp32 math mode
 *   gemmul8_*         gemmul8::gemmLt<float, INT8> (the call GEMMul8's own test program makes
 *                     on CUDA) with each --gemmul8 setting MODE:MODULI, by default accu:8
 *                     (accurate mode, 8 moduli: the issue's setting), fast:7 (the SGEMM
 *                     setting of GEMMul8's README example, GEMMUL8_NUM_MOD_S=7 with
 *                     GEMMUL8_FASTMODE_S=1) and accu:7
 * Each method: C poisoned (NaN), one checked run, `warmup` runs, then `repeats` runs each
 * between its own cudaEvent pair on one stream; the median gives TFLOP/s = 2 n^3 / t.  The
 * checked run against a float64 reference made on the GPU (cublasDgemm, pedantic math, of A
 * and B converted to double): RMS relative error sqrt(sum (c - ref)^2 / sum ref^2), and each
 * element's |c - ref| / ((k + 2) 2^-23 (|A||B|)_ij), the project's k-scaled bound (|A||B| by a
 * second cublasDgemm on the absolute values): its maximum and mean, the elements past 1.  The
 * last timed run's C must equal the checked run's bit for bit ("repeatable").
 * GEMMul8's gemm synchronizes its stream between its phases (its own timers, returned as
 * phases_ms), so its event times include those host round trips, as in its own test program.
 * tilegemm's handles (and so the ozaki rung's workspace) and GEMMul8's workspace (7 GiB at
 * 16384^3 with 8 moduli) are freed after each method.
 *
 * Build (scripts/device_ozaki.sh does all of this on the device), from the project root with
 * the shared library built in build-device (`cmake --build build-device --target tilegemm`):
 *   nvcc -O2 -std=c++17 -arch=sm_90a -Iinclude bench/ozaki_vs_gemmul8.cu \
 *        -o build-device/ozaki_vs_gemmul8 -Lbuild-device -ltilegemm -lcublas \
 *        -Xlinker -rpath=$PWD/build-device
 * and with GEMMul8, whose static library (lib/libgemmul8.a of its own build, for sm_90) and
 * header lie in third_party/gemmul8, outside version control:
 *        -DHAVE_GEMMUL8 -Ithird_party/gemmul8/include third_party/gemmul8/lib/libgemmul8.a \
 *        -lcublasLt
 * The static library, not libgemmul8.so: the shared one also carries GEMMul8's hook, which
 * defines cublasSgemm, cublasDgemm and cublasGemmEx and would stand between this program's
 * cuBLAS rows (and its float64 reference) and cuBLAS.
 * Without -DHAVE_GEMMUL8 it runs cuBLAS and tilegemm and says GEMMul8 was skipped.
 * Run:
 *   ozaki_vs_gemmul8 [--data uniform,lines,spread10] [--gemmul8 accu:8,fast:7,accu:7|none]
 *                    [--methods cublas,cublas_pedantic,ozaki2_int8,auto,gemmul8]
 *                    [--warmup 2] [--repeats 7] [--seed S] [--json FILE] [SIZE ...]
 * The JSON (rewritten after each size and data class, so a cut run keeps what it finished)
 * names the device, the date, TILEGEMM_COMMIT and GEMMUL8_COMMIT from the environment (else
 * the first line of third_party/gemmul8/COMMIT), and per size, data class and method: tflops,
 * ratio to cuBLAS, rms, max_bound_ratio, within_bound.
 */
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "tilegemm.h"

#ifdef HAVE_GEMMUL8
#include <cublasLt.h>

#include "gemmul8.hpp"
#endif

namespace {

[[noreturn]] void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ozaki_vs_gemmul8: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

#define CK(call)                                                                             \
    do {                                                                                     \
        const cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess)                                                               \
            die("%s failed at line %d: %s (%s)", #call, __LINE__, cudaGetErrorName(e_),      \
                cudaGetErrorString(e_));                                                     \
    } while (0)

#define CB(call)                                                                             \
    do {                                                                                     \
        const cublasStatus_t s_ = (call);                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                     \
            die("%s failed at line %d: cuBLAS status %d (%s)", #call, __LINE__, (int)s_,     \
                cublasGetStatusString(s_));                                                  \
    } while (0)

/* --- Data, on the device: element (operand, index) has its own counter-based draw. -------- */

enum DataClass { kUniform, kLines, kSpread10 };
const char *const kDataNames[] = {"uniform", "lines", "spread10"};

__host__ __device__ uint64_t mix64(uint64_t z) /* splitmix64's finalizer */
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__device__ uint64_t draw(uint64_t seed, uint64_t stream, uint64_t index)
{
    return mix64(mix64(seed * 0x9e3779b97f4a7c15ull + stream) + index * 0xd1b54a32d192ed03ull);
}

/* rows x cols, column-major.  operand 0 is A (lines scale its rows), 1 is B (its columns). */
__global__ void fill_kernel(float *x, int64_t rows, int64_t cols, int data, int operand,
                            uint64_t seed)
{
    const int64_t total = rows * cols;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = e % rows, j = e / rows;
        const uint64_t r = draw(seed, 2 * (uint64_t)operand, (uint64_t)e);
        /* Uniform in [-1, 1) with 53 bits, rounded once to float: 24 significant bits. */
        float v = (float)((double)(r >> 11) * 0x1.0p-53 * 2.0 - 1.0);
        if (data == kLines) {
            const int widest = operand == 0 ? 60 : 40;
            const uint64_t line = draw(seed, 2 * (uint64_t)operand + 1, operand == 0 ? i : j);
            v = ldexpf(v, (int)(line % (uint64_t)(2 * widest + 1)) - widest);
        } else if (data == kSpread10) {
            v = ldexpf(v, (int)(mix64(r) % 21) - 10);
        }
        x[e] = v;
    }
}

__global__ void widen_kernel(const float *x, double *y, size_t count, int absolute)
{
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < count;
         e += (size_t)gridDim.x * blockDim.x)
        y[e] = absolute ? fabs((double)x[e]) : (double)x[e];
}

/* --- Accuracy and repeatability, reduced on the device. ---------------------------------- */

struct Sums {
    double sq_err, sq_ref, ratio_sum;
    unsigned long long max_ratio_bits, nonfinite, over, differ;
};

struct Add {
    template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
    __device__ double operator()(double a, double b) const { return fmax(a, b); }
};

/* The block's reduction of v by op (identity 0: sums, and maxima of values >= 0); thread 0's
 * result is the block's. */
template <typename T, typename Op> __device__ T block_reduce(T v, T *shared, Op op)
{
    for (int o = 16; o > 0; o >>= 1)
        v = op(v, __shfl_down_sync(0xffffffffu, v, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads(); /* shared may still be read from a previous call */
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    T total = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w)
            total = op(total, shared[w]);
    return total;
}
template <typename T> __device__ T block_sum(T v, T *shared)
{
    return block_reduce(v, shared, Add{});
}

constexpr int kReduceThreads = 256;

__global__ void __launch_bounds__(kReduceThreads)
compare_kernel(const float *c, const double *ref, const double *mag, size_t count, double unit,
               Sums *out)
{
    __shared__ double sd[kReduceThreads / 32];
    __shared__ unsigned long long su[kReduceThreads / 32];
    double sq_err = 0.0, sq_ref = 0.0, ratio_sum = 0.0, worst = 0.0;
    unsigned long long nonfinite = 0, over = 0;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < count;
         e += (size_t)gridDim.x * blockDim.x) {
        const double r = ref[e], got = (double)c[e];
        sq_ref += r * r;
        if (!isfinite(got)) {
            ++nonfinite;
            continue;
        }
        const double d = got - r, limit = unit * mag[e];
        sq_err += d * d;
        const double ratio = limit > 0.0 ? fabs(d) / limit : (d == 0.0 ? 0.0 : INFINITY);
        ratio_sum += ratio;
        worst = fmax(worst, ratio);
        over += ratio > 1.0;
    }
    sq_err = block_sum(sq_err, sd);
    sq_ref = block_sum(sq_ref, sd);
    ratio_sum = block_sum(ratio_sum, sd);
    worst = block_reduce(worst, sd, Max{});
    nonfinite = block_sum(nonfinite, su);
    over = block_sum(over, su);
    if (threadIdx.x == 0) {
        atomicAdd(&out->sq_err, sq_err);
        atomicAdd(&out->sq_ref, sq_ref);
        atomicAdd(&out->ratio_sum, ratio_sum);
        /* Non-negative doubles order as their bit patterns. */
        atomicMax(&out->max_ratio_bits, (unsigned long long)__double_as_longlong(worst));
        atomicAdd(&out->nonfinite, nonfinite);
        atomicAdd(&out->over, over);
    }
}

__global__ void __launch_bounds__(kReduceThreads)
differ_kernel(const float *a, const float *b, size_t count, Sums *out)
{
    __shared__ unsigned long long su[kReduceThreads / 32];
    unsigned long long differ = 0;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < count;
         e += (size_t)gridDim.x * blockDim.x)
        differ += __float_as_uint(a[e]) != __float_as_uint(b[e]);
    differ = block_sum(differ, su);
    if (threadIdx.x == 0)
        atomicAdd(&out->differ, differ);
}

int grid_for(size_t count, int sms)
{
    const size_t blocks = (count + kReduceThreads - 1) / kReduceThreads;
    return (int)std::min<size_t>(blocks, (size_t)sms * 8);
}

/* --- Methods. ----------------------------------------------------------------------------- */

enum Kind { kCublas, kCublasPedantic, kOzaki2, kAuto, kGemmul8 };

struct Method {
    Kind kind;
    std::string name;
    unsigned moduli = 0; /* GEMMul8 */
    bool fast = false;
};

struct Result {
    int64_t n = 0;
    std::string data, method, status = "ok", algo;
    double ms = NAN, ms_min = NAN, tflops = NAN, ratio = NAN;
    double rms = NAN, max_ratio = NAN, mean_ratio = NAN;
    unsigned long long nonfinite = 0, over = 0, differ = 0;
    bool checked = false;
    int moduli = 0, fast = -1;
    std::vector<double> phases_ms; /* GEMMul8's four phases, medians */
};

struct Options {
    std::vector<int64_t> sizes;
    std::vector<int> data;
    std::vector<Method> methods;
    int warmup = 2, repeats = 7;
    uint64_t seed = 20261126;
    std::string json;
};

struct Device {
    cudaDeviceProp prop;
    int sms = 0;
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;     /* the cuBLAS rows, default math */
    cublasHandle_t ref_blas = nullptr; /* the float64 reference, pedantic math */
#ifdef HAVE_GEMMUL8
    cublasLtHandle_t lt = nullptr;
#endif
};

struct Buffers {
    int64_t n = 0;
    float *A = nullptr, *B = nullptr, *C = nullptr, *Ccheck = nullptr;
    double *ref = nullptr, *mag = nullptr;
    Sums *sums = nullptr; /* device */
};

/* Per-method state, made before the checked run and released after the timed ones. */
struct Live {
    tg_handle *h = nullptr;
    void *work = nullptr;
    std::vector<std::vector<double>> phases; /* GEMMul8's timers of the timed runs, ns */
};

void tg_check(tg_handle *h, tg_status s, const char *what)
{
    if (s != TG_SUCCESS)
        die("%s: %s: %s", what, tg_status_string(s), h ? tg_last_error(h) : "");
}

/* Makes what the method needs; returns "" or why it cannot run. */
std::string setup(const Method &m, const Device &d, const Buffers &b, Live &live)
{
    if (m.kind == kOzaki2 || m.kind == kAuto) {
        tg_check(nullptr, tg_create(&live.h), "tg_create");
        tg_check(live.h, tg_set_backend(live.h, TG_BACKEND_CUDA), "tg_set_backend(CUDA)");
        tg_check(live.h, tg_set_stream(live.h, d.stream), "tg_set_stream");
        tg_check(live.h, tg_set_math(live.h, TG_MATH_FP32), "tg_set_math(fp32)");
        const tg_status s = tg_set_algo(live.h, m.kind == kOzaki2 ? "ozaki2_int8" : "auto");
        if (s != TG_SUCCESS)
            return std::string("tg_set_algo: ") + tg_status_string(s) + ": " +
                   tg_last_error(live.h);
    }
#ifdef HAVE_GEMMUL8
    if (m.kind == kGemmul8) {
        const size_t bytes = gemmul8::workSize<false, gemmul8::Backend::INT8>(
            (size_t)b.n, (size_t)b.n, (size_t)b.n, m.moduli);
        size_t free_bytes = 0, total = 0;
        CK(cudaMemGetInfo(&free_bytes, &total));
        if (bytes > free_bytes)
            return "workspace of " + std::to_string(bytes >> 20) + " MiB, " +
                   std::to_string(free_bytes >> 20) + " MiB free";
        CK(cudaMalloc(&live.work, bytes));
    }
#else
    (void)b;
#endif
    return "";
}

void teardown(Live &live)
{
    CK(cudaDeviceSynchronize());
    if (live.h)
        tg_check(nullptr, tg_destroy(live.h), "tg_destroy");
    if (live.work)
        CK(cudaFree(live.work));
    live = Live();
}

/* Queues one product; returns "" or tilegemm's error. */
std::string launch(const Method &m, const Device &d, const Buffers &b, Live &live)
{
    const int64_t n = b.n;
    const float one = 1.0f, zero = 0.0f;
    switch (m.kind) {
    case kCublas:
        CB(cublasSgemm(d.blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, b.A,
                       (int)n, b.B, (int)n, &zero, b.C, (int)n));
        break;
    case kCublasPedantic:
        CB(cublasGemmEx(d.blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, b.A,
                        CUDA_R_32F, (int)n, b.B, CUDA_R_32F, (int)n, &zero, b.C, CUDA_R_32F,
                        (int)n, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT));
        break;
    case kOzaki2:
    case kAuto: {
        const tg_status s = tg_sgemm(live.h, TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, n, n, n,
                                     1.0f, b.A, n, b.B, n, 0.0f, b.C, n);
        if (s != TG_SUCCESS)
            return std::string("tg_sgemm: ") + tg_status_string(s) + ": " +
                   tg_last_error(live.h);
        break;
    }
    case kGemmul8:
#ifdef HAVE_GEMMUL8
        live.phases.push_back(gemmul8::gemmLt<float, gemmul8::Backend::INT8>(
            d.lt, CUBLAS_OP_N, CUBLAS_OP_N, (size_t)n, (size_t)n, (size_t)n, &one, b.A,
            (size_t)n, b.B, (size_t)n, &zero, b.C, (size_t)n, m.moduli, m.fast, live.work,
            nullptr, nullptr, false, false, false, false, d.stream));
#endif
        break;
    }
    CK(cudaGetLastError());
    return "";
}

Sums read_sums(const Buffers &b)
{
    Sums s;
    CK(cudaMemcpy(&s, b.sums, sizeof s, cudaMemcpyDeviceToHost));
    return s;
}

void run_method(const Method &m, const Device &d, const Options &o, const Buffers &b,
                Result &r)
{
    const size_t count = (size_t)b.n * (size_t)b.n;
    r.moduli = (int)m.moduli;
    r.fast = m.kind == kGemmul8 ? (int)m.fast : -1;
    Live live;
    const std::string why = setup(m, d, b, live);
    if (!why.empty()) {
        r.status = "skipped: " + why;
        teardown(live);
        return;
    }
    /* The checked run, on poisoned C. */
    CK(cudaMemsetAsync(b.C, 0xff, count * sizeof(float), d.stream));
    std::string err = launch(m, d, b, live);
    if (!err.empty()) {
        r.status = "failed: " + err;
        teardown(live);
        return;
    }
    CK(cudaStreamSynchronize(d.stream));
    CK(cudaGetLastError());
    if (live.h)
        r.algo = tg_last_algo(live.h);
    CK(cudaMemsetAsync(b.sums, 0, sizeof(Sums), d.stream));
    const double unit = ((double)b.n + 2.0) * 0x1.0p-23;
    compare_kernel<<<grid_for(count, d.sms), kReduceThreads, 0, d.stream>>>(b.C, b.ref, b.mag,
                                                                            count, unit, b.sums);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(b.Ccheck, b.C, count * sizeof(float), cudaMemcpyDeviceToDevice,
                       d.stream));
    CK(cudaStreamSynchronize(d.stream));
    const Sums s = read_sums(b);
    r.checked = true;
    r.nonfinite = s.nonfinite;
    r.over = s.over;
    double worst;
    memcpy(&worst, &s.max_ratio_bits, sizeof worst);
    r.max_ratio = s.nonfinite ? INFINITY : worst;
    r.rms = s.nonfinite ? NAN : sqrt(s.sq_err / s.sq_ref);
    r.mean_ratio = s.ratio_sum / (double)(count - s.nonfinite);

    /* Warm-up, then the timed runs. */
    for (int i = 0; i < o.warmup && err.empty(); ++i)
        err = launch(m, d, b, live);
    std::vector<cudaEvent_t> start(o.repeats), stop(o.repeats);
    for (int i = 0; i < o.repeats; ++i) {
        CK(cudaEventCreate(&start[i]));
        CK(cudaEventCreate(&stop[i]));
    }
    live.phases.clear();
    for (int i = 0; i < o.repeats && err.empty(); ++i) {
        CK(cudaEventRecord(start[i], d.stream));
        err = launch(m, d, b, live);
        CK(cudaEventRecord(stop[i], d.stream));
    }
    CK(cudaStreamSynchronize(d.stream));
    CK(cudaGetLastError());
    if (!err.empty()) {
        r.status = "failed in the timed runs: " + err;
    } else {
        std::vector<float> ms(o.repeats);
        for (int i = 0; i < o.repeats; ++i)
            CK(cudaEventElapsedTime(&ms[i], start[i], stop[i]));
        std::sort(ms.begin(), ms.end());
        const int h = o.repeats / 2;
        r.ms = o.repeats % 2 ? ms[h] : 0.5 * ((double)ms[h - 1] + ms[h]);
        r.ms_min = ms[0];
        r.tflops = 2.0 * (double)b.n * (double)b.n * (double)b.n / (r.ms * 1e-3) * 1e-12;
        /* The last timed run's C against the checked run's, bit for bit. */
        differ_kernel<<<grid_for(count, d.sms), kReduceThreads, 0, d.stream>>>(b.C, b.Ccheck,
                                                                               count, b.sums);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(d.stream));
        r.differ = read_sums(b).differ;
        if (!live.phases.empty()) {
            for (size_t p = 0; p < live.phases[0].size(); ++p) {
                std::vector<double> v;
                for (const auto &run : live.phases)
                    v.push_back(p < run.size() ? run[p] * 1e-6 : NAN);
                std::sort(v.begin(), v.end());
                const size_t mid = v.size() / 2;
                r.phases_ms.push_back(v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]));
            }
        }
    }
    for (int i = 0; i < o.repeats; ++i) {
        CK(cudaEventDestroy(start[i]));
        CK(cudaEventDestroy(stop[i]));
    }
    teardown(live);
}

/* --- Output. ------------------------------------------------------------------------------ */

std::string jstr(const std::string &s)
{
    std::string o = "\"";
    for (const char ch : s) {
        const unsigned char c = (unsigned char)ch;
        if (c == '"' || c == '\\') {
            o += '\\';
            o += ch;
        } else if (c < 0x20) {
            char buf[8];
            snprintf(buf, sizeof buf, "\\u%04x", c);
            o += buf;
        } else {
            o += ch;
        }
    }
    return o + "\"";
}

std::string jnum(double v, const char *fmt = "%.6g")
{
    if (!std::isfinite(v))
        return "null";
    char buf[64];
    snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

std::string first_line(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return "";
    char buf[256] = {0};
    if (!fgets(buf, sizeof buf, f))
        buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\r\n")] = 0;
    return buf;
}

struct Run {
    std::string device, date, tilegemm_commit, gemmul8_commit;
    int cc = 0, sms = 0, driver = 0, runtime = 0, cublas = 0;
    double memory_gib = 0.0;
    bool gemmul8 = false;
};

void write_json(const Options &o, const Run &run, const std::vector<Result> &results, bool done)
{
    if (o.json.empty())
        return;
    const std::string tmp = o.json + ".tmp";
    FILE *f = fopen(tmp.c_str(), "w");
    if (!f)
        die("cannot write %s", tmp.c_str());
    fprintf(f, "{\n  \"tool\": \"bench/ozaki_vs_gemmul8.cu\",\n");
    fprintf(f, "  \"device\": %s,\n  \"compute_capability\": %d,\n  \"sms\": %d,\n",
            jstr(run.device).c_str(), run.cc, run.sms);
    fprintf(f, "  \"memory_gib\": %.1f,\n  \"driver\": %d,\n  \"runtime\": %d,\n", run.memory_gib,
            run.driver, run.runtime);
    fprintf(f, "  \"cublas\": %d,\n  \"date\": %s,\n", run.cublas, jstr(run.date).c_str());
    fprintf(f, "  \"tilegemm_commit\": %s,\n  \"tilegemm_version\": %s,\n",
            jstr(run.tilegemm_commit).c_str(), jstr(tg_version()).c_str());
    fprintf(f, "  \"tilegemm_gpu_code\": %s,\n", jstr(tg_gpu_code()).c_str());
    fprintf(f, "  \"gemmul8\": %s,\n  \"gemmul8_commit\": %s,\n",
            run.gemmul8 ? "\"built in\"" : "\"skipped (built without it)\"",
            jstr(run.gemmul8_commit).c_str());
    fprintf(f, "  \"gemmul8_entry\": \"gemmul8::gemmLt<float, Backend::INT8>\",\n");
    fprintf(f, "  \"layout\": \"column-major NN, alpha 1, beta 0\",\n");
    fprintf(f, "  \"warmup\": %d,\n  \"repeats\": %d,\n  \"seed\": %" PRIu64 ",\n", o.warmup,
            o.repeats, o.seed);
    fprintf(f, "  \"timing\": \"ms: median of the timed runs, each between its own cudaEvent "
               "pair on one stream; tflops = 2 n^3 / ms\",\n");
    fprintf(f, "  \"bound\": \"|c - ref| <= (k + 2) 2^-23 (|A||B|)_ij\",\n");
    /* Settings that would change what cuBLAS or tilegemm run, where set. */
    static const char *const vars[] = {"NVIDIA_TF32_OVERRIDE", "CUBLAS_EMULATE_SINGLE_PRECISION",
                                       "CUBLAS_EMULATION_STRATEGY", "CUBLAS_WORKSPACE_CONFIG",
                                       "TILEGEMM_MATH", "TILEGEMM_BACKEND", "TILEGEMM_AUTOTUNE",
                                       "CUDA_VISIBLE_DEVICES"};
    fprintf(f, "  \"environment\": {");
    int listed = 0;
    for (const char *v : vars)
        if (const char *value = getenv(v))
            fprintf(f, "%s%s: %s", listed++ ? ", " : "", jstr(v).c_str(), jstr(value).c_str());
    fprintf(f, "},\n");
    fprintf(f, "  \"complete\": %s,\n  \"results\": [", done ? "true" : "false");
    for (size_t i = 0; i < results.size(); ++i) {
        const Result &r = results[i];
        fprintf(f, "%s\n    {\"m\": %" PRId64 ", \"n\": %" PRId64 ", \"k\": %" PRId64, i ? "," : "",
                r.n, r.n, r.n);
        fprintf(f, ", \"data\": %s, \"method\": %s, \"status\": %s", jstr(r.data).c_str(),
                jstr(r.method).c_str(), jstr(r.status).c_str());
        if (!r.algo.empty())
            fprintf(f, ", \"algo\": %s", jstr(r.algo).c_str());
        if (r.fast >= 0)
            fprintf(f, ", \"moduli\": %d, \"fastmode\": %s", r.moduli, r.fast ? "true" : "false");
        fprintf(f, ", \"ms\": %s, \"ms_min\": %s, \"tflops\": %s, \"ratio_cublas\": %s",
                jnum(r.ms).c_str(), jnum(r.ms_min).c_str(), jnum(r.tflops, "%.2f").c_str(),
                jnum(r.ratio, "%.3f").c_str());
        if (r.checked) {
            fprintf(f, ", \"rms\": %s, \"max_bound_ratio\": %s, \"mean_bound_ratio\": %s",
                    jnum(r.rms, "%.4g").c_str(),
                    std::isinf(r.max_ratio) ? "\"inf\"" : jnum(r.max_ratio, "%.4g").c_str(),
                    jnum(r.mean_ratio, "%.4g").c_str());
            fprintf(f, ", \"within_bound\": %s, \"over_bound\": %llu, \"nonfinite\": %llu",
                    r.over == 0 && r.nonfinite == 0 ? "true" : "false", r.over, r.nonfinite);
        }
        if (std::isfinite(r.ms))
            fprintf(f, ", \"repeatable\": %s, \"differ\": %llu", r.differ ? "false" : "true",
                    r.differ);
        if (!r.phases_ms.empty()) {
            static const char *const names[] = {"scaling", "int8_gemm", "mod", "inverse_scaling"};
            fprintf(f, ", \"phases_ms\": {");
            for (size_t p = 0; p < r.phases_ms.size(); ++p)
                fprintf(f, "%s\"%s\": %s", p ? ", " : "", p < 4 ? names[p] : "other",
                        jnum(r.phases_ms[p]).c_str());
            fprintf(f, "}");
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    if (fclose(f) != 0 || rename(tmp.c_str(), o.json.c_str()) != 0)
        die("cannot write %s", o.json.c_str());
}

void print_row(const Result &r)
{
    char acc[96] = "";
    if (r.checked)
        snprintf(acc, sizeof acc, "%10.3g %11.3g %6s", r.rms, r.max_ratio,
                 r.over == 0 && r.nonfinite == 0 ? "yes" : "NO");
    if (std::isfinite(r.ms))
        printf("%6" PRId64 " %-9s %-17s %8.2f %8.3f %8.2fx %s%s%s\n", r.n, r.data.c_str(),
               r.method.c_str(), r.tflops, r.ms, r.ratio, acc, r.differ ? "  not repeatable" : "",
               r.algo.empty() || r.algo == r.method ? "" : ("  (" + r.algo + ")").c_str());
    else
        printf("%6" PRId64 " %-9s %-17s %s %s\n", r.n, r.data.c_str(), r.method.c_str(),
               r.status.c_str(), acc);
    fflush(stdout);
}

/* --- Options. ----------------------------------------------------------------------------- */

std::vector<std::string> split(const std::string &s)
{
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= s.size()) {
        const size_t comma = s.find(',', at);
        const std::string part = s.substr(at, comma == std::string::npos ? std::string::npos
                                                                          : comma - at);
        if (!part.empty())
            out.push_back(part);
        if (comma == std::string::npos)
            break;
        at = comma + 1;
    }
    return out;
}

void usage(int code)
{
    fprintf(code ? stderr : stdout,
            "usage: ozaki_vs_gemmul8 [--data uniform,lines,spread10]\n"
            "         [--gemmul8 accu:8,fast:7,accu:7|none]\n"
            "         [--methods cublas,cublas_pedantic,ozaki2_int8,auto,gemmul8]\n"
            "         [--warmup N] [--repeats N] [--seed S] [--json FILE] [SIZE ...]\n");
    exit(code);
}

Options parse(int argc, char **argv)
{
    Options o;
    std::string data = "uniform,lines,spread10", gemmul8 = "accu:8,fast:7,accu:7";
    std::string methods = "cublas,cublas_pedantic,ozaki2_int8,auto,gemmul8";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage(2);
            return argv[++i];
        };
        if (a == "--data")
            data = value();
        else if (a == "--gemmul8")
            gemmul8 = value();
        else if (a == "--methods")
            methods = value();
        else if (a == "--warmup")
            o.warmup = atoi(value().c_str());
        else if (a == "--repeats")
            o.repeats = atoi(value().c_str());
        else if (a == "--seed")
            o.seed = strtoull(value().c_str(), nullptr, 10);
        else if (a == "--json")
            o.json = value();
        else if (a == "-h" || a == "--help")
            usage(0);
        else if (!a.empty() && a[0] != '-' && atoll(a.c_str()) > 0)
            o.sizes.push_back(atoll(a.c_str()));
        else
            usage(2);
    }
    if (o.sizes.empty())
        o.sizes = {4096, 8192, 16384};
    for (const int64_t n : o.sizes)
        if (n > 46340) /* cuBLAS's int dimensions and n^2 elements per matrix */
            die("size %" PRId64 " is too large", n);
    if (o.warmup < 0 || o.repeats < 1)
        die("--warmup must be >= 0 and --repeats >= 1");
    for (const std::string &d : split(data)) {
        int found = -1;
        for (int c = 0; c < 3; ++c)
            if (d == kDataNames[c])
                found = c;
        if (found < 0)
            die("unknown data class %s (uniform, lines, spread10)", d.c_str());
        o.data.push_back(found);
    }
    for (const std::string &m : split(methods)) {
        if (m == "cublas")
            o.methods.push_back({kCublas, "cublas"});
        else if (m == "cublas_pedantic")
            o.methods.push_back({kCublasPedantic, "cublas_pedantic"});
        else if (m == "ozaki2_int8")
            o.methods.push_back({kOzaki2, "ozaki2_int8"});
        else if (m == "auto")
            o.methods.push_back({kAuto, "auto"});
        else if (m == "gemmul8") {
            if (gemmul8 == "none")
                continue;
            for (const std::string &g : split(gemmul8)) {
                const size_t colon = g.find(':');
                const std::string mode = g.substr(0, colon);
                const int moduli = colon == std::string::npos ? 0 : atoi(g.c_str() + colon + 1);
                if ((mode != "accu" && mode != "fast") || moduli < 2 || moduli > 13)
                    die("--gemmul8 takes accu:N or fast:N, N in 2..13 (FP32), not %s", g.c_str());
                Method x{kGemmul8, "gemmul8_" + mode + std::to_string(moduli)};
                x.moduli = (unsigned)moduli;
                x.fast = mode == "fast";
                o.methods.push_back(x);
            }
        } else {
            die("unknown method %s", m.c_str());
        }
    }
    return o;
}

} // namespace

int main(int argc, char **argv)
{
    const Options o = parse(argc, argv);
    Run run;
#ifdef HAVE_GEMMUL8
    run.gemmul8 = true;
#endif
    const char *env = getenv("TILEGEMM_COMMIT");
    run.tilegemm_commit = env && *env ? env : "unknown";
    env = getenv("GEMMUL8_COMMIT");
    run.gemmul8_commit = env && *env ? env : first_line("third_party/gemmul8/COMMIT");
    if (run.gemmul8_commit.empty())
        run.gemmul8_commit = "unknown";
    char date[32];
    const time_t now = time(nullptr);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    run.date = date;

    Device d;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&d.prop, dev));
    d.sms = d.prop.multiProcessorCount;
    run.device = d.prop.name;
    run.cc = d.prop.major * 10 + d.prop.minor;
    run.sms = d.sms;
    run.memory_gib = (double)d.prop.totalGlobalMem / 1073741824.0;
    CK(cudaDriverGetVersion(&run.driver));
    CK(cudaRuntimeGetVersion(&run.runtime));
    CK(cudaStreamCreate(&d.stream));
    CB(cublasCreate(&d.blas));
    CB(cublasSetStream(d.blas, d.stream));
    CB(cublasSetMathMode(d.blas, CUBLAS_DEFAULT_MATH));
    CB(cublasSetPointerMode(d.blas, CUBLAS_POINTER_MODE_HOST));
    CB(cublasGetVersion(d.blas, &run.cublas));
    CB(cublasCreate(&d.ref_blas));
    CB(cublasSetStream(d.ref_blas, d.stream));
    CB(cublasSetMathMode(d.ref_blas, CUBLAS_PEDANTIC_MATH));
#ifdef HAVE_GEMMUL8
    CB(cublasLtCreate(&d.lt));
#endif

    printf("%s (cc %d.%d, %d SMs, %.0f GiB), driver %d, runtime %d, cuBLAS %d\n",
           run.device.c_str(), d.prop.major, d.prop.minor, d.sms, run.memory_gib, run.driver,
           run.runtime, run.cublas);
    printf("tilegemm %s, commit %s, %s\n", tg_version(), run.tilegemm_commit.c_str(),
           tg_gpu_code());
    if (run.gemmul8)
        printf("GEMMul8 commit %s, gemmul8::gemmLt<float, INT8>\n", run.gemmul8_commit.c_str());
    else
        printf("GEMMul8: skipped (built without it: no third_party/gemmul8 at build time)\n");
    printf("warm-up %d, median of %d timed runs; bound: (k + 2) 2^-23 (|A||B|)_ij\n\n",
           o.warmup, o.repeats);
    printf("%6s %-9s %-17s %8s %8s %9s %10s %11s %6s\n", "n", "data", "method", "TFLOP/s", "ms",
           "x cuBLAS", "rms rel", "max/bound", "within");

    std::vector<Result> results;
    write_json(o, run, results, false);
    for (const int64_t n : o.sizes) {
        const size_t count = (size_t)n * (size_t)n;
        Buffers b;
        b.n = n;
        const size_t fbytes = count * sizeof(float), dbytes = count * sizeof(double);
        size_t free_bytes = 0, total = 0;
        CK(cudaMemGetInfo(&free_bytes, &total));
        if (4 * fbytes + 4 * dbytes > free_bytes) {
            Result r;
            r.n = n;
            r.data = "all";
            r.method = "all";
            r.status = "skipped: buffers need " + std::to_string((4 * fbytes + 4 * dbytes) >> 20) +
                       " MiB, " + std::to_string(free_bytes >> 20) + " MiB free";
            print_row(r);
            results.push_back(r);
            continue;
        }
        CK(cudaMalloc(&b.A, fbytes));
        CK(cudaMalloc(&b.B, fbytes));
        CK(cudaMalloc(&b.C, fbytes));
        CK(cudaMalloc(&b.Ccheck, fbytes));
        CK(cudaMalloc(&b.ref, dbytes));
        CK(cudaMalloc(&b.mag, dbytes));
        CK(cudaMalloc(&b.sums, sizeof(Sums)));
        for (const int data : o.data) {
            const int grid = grid_for(count, d.sms);
            const uint64_t seed = mix64(o.seed + 0x1000 * (uint64_t)data + (uint64_t)n);
            fill_kernel<<<grid, kReduceThreads, 0, d.stream>>>(b.A, n, n, data, 0, seed);
            CK(cudaGetLastError());
            fill_kernel<<<grid, kReduceThreads, 0, d.stream>>>(b.B, n, n, data, 1, seed);
            CK(cudaGetLastError());
            /* The float64 reference and |A||B|: A and B widened into two temporaries. */
            double *Ad = nullptr, *Bd = nullptr;
            CK(cudaMalloc(&Ad, dbytes));
            CK(cudaMalloc(&Bd, dbytes));
            const double one = 1.0, zero = 0.0;
            for (int absolute = 0; absolute < 2; ++absolute) {
                widen_kernel<<<grid, kReduceThreads, 0, d.stream>>>(b.A, Ad, count, absolute);
                CK(cudaGetLastError());
                widen_kernel<<<grid, kReduceThreads, 0, d.stream>>>(b.B, Bd, count, absolute);
                CK(cudaGetLastError());
                CB(cublasDgemm(d.ref_blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one,
                               Ad, (int)n, Bd, (int)n, &zero, absolute ? b.mag : b.ref, (int)n));
            }
            CK(cudaStreamSynchronize(d.stream));
            CK(cudaFree(Ad));
            CK(cudaFree(Bd));

            const size_t first = results.size();
            for (const Method &m : o.methods) {
                Result r;
                r.n = n;
                r.data = kDataNames[data];
                r.method = m.name;
#ifndef HAVE_GEMMUL8
                if (m.kind == kGemmul8) {
                    r.status = "skipped: built without GEMMul8";
                    r.moduli = (int)m.moduli;
                    r.fast = (int)m.fast;
                    results.push_back(r);
                    continue;
                }
#endif
                run_method(m, d, o, b, r);
                results.push_back(r);
            }
            /* Ratios to cuBLAS FP32 (cublasSgemm) of this size and class. */
            double base = NAN;
            for (size_t i = first; i < results.size(); ++i)
                if (results[i].method == "cublas")
                    base = results[i].tflops;
            for (size_t i = first; i < results.size(); ++i) {
                results[i].ratio = results[i].tflops / base;
                print_row(results[i]);
            }
            write_json(o, run, results, false);
        }
        CK(cudaFree(b.A));
        CK(cudaFree(b.B));
        CK(cudaFree(b.C));
        CK(cudaFree(b.Ccheck));
        CK(cudaFree(b.ref));
        CK(cudaFree(b.mag));
        CK(cudaFree(b.sums));
        printf("\n");
    }
    write_json(o, run, results, true);
#ifdef HAVE_GEMMUL8
    CB(cublasLtDestroy(d.lt));
#endif
    CB(cublasDestroy(d.blas));
    CB(cublasDestroy(d.ref_blas));
    CK(cudaStreamDestroy(d.stream));
    return 0;
}
