/* Split-K is bit-reproducible: the same call, 10 times, gives the same bits, whether auto
 * splits it (small outputs with long k) or the slices are forced, on FFMA and tensor-core
 * rungs, and so does the call captured into a CUDA graph and replayed (where the reduction's
 * dependent launch, kernels/dependent_launch.cuh, becomes a programmatic edge of the graph).
 * The partial products are summed in a fixed order (kernels/split_k_reduce.cuh), never
 * by atomics.  Each result is also checked against float64 so that a stable wrong answer fails,
 * and Inf and NaN in a tail the reduction sums must give float64's classes.
 * Skips (77) without a GPU. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "sampled.h"
#include "rng.h"
#include "testing.h"

#ifdef TG_HAVE_CUDA
enum { kRepeats = 10 };

typedef struct split_case {
    int64_t m, n, k;
    const char *algo; /* "auto" or a rung */
    int slices;       /* 0: the planner's */
    tg_math math;
    const char *form; /* layout and transposes, "col TN": NULL for row-major NN */
} split_case;

static const split_case kCases[] = {
    {32, 32, 100000, "auto", 0, TG_MATH_FP32, NULL},
    {32, 32, 100000, "auto", 0, TG_MATH_STRICT_FMA, NULL},
    {12, 156, 32461, "auto", 0, TG_MATH_FP32, NULL},
    {234, 13, 23999, "auto", 0, TG_MATH_STRICT_FMA, NULL},
    {256, 256, 16384, "auto", 0, TG_MATH_FP32, NULL},
    {777, 777, 12000, "auto", 0, TG_MATH_FP32, NULL},
    {100, 90, 30000, "warptile64", 200, TG_MATH_FP32, NULL},
    {128, 128, 32768, "tma_wgmma3xtf32", 64, TG_MATH_FP32, NULL},
    {64, 64, 65536, "skinny32x32", 128, TG_MATH_FP32, NULL},
    /* rung 9 reads the slices in place where the TMA can (leading dimensions multiples of 4),
     * in each operand's orientation, with slices that end inside a k-tile of 32 (1500 and 748
     * long, tails of 4 and 12); and through planes where it cannot (k = 3001) */
    {300, 200, 3004, "tma_wgmma3xtf32", 2, TG_MATH_FP32, "row NT"},
    {300, 200, 3004, "tma_wgmma3xtf32", 4, TG_MATH_FP32, "col NN"},
    {200, 300, 3004, "tma_wgmma3xtf32", 4, TG_MATH_FP32, "col TT"},
    {200, 300, 3004, "tma_wgmma3xtf32", 2, TG_MATH_FP32, "row TN"},
    {300, 200, 3001, "tma_wgmma3xtf32", 2, TG_MATH_FP32, "row NN"},
    {300, 200, 3004, "tma_wgmmatf32", 2, TG_MATH_TF32, "row NT"},
    {200, 300, 3004, "tma_wgmmatf32_128x128", 4, TG_MATH_TF32, "col TN"},
    /* the 64x128 block: one consumer warpgroup, slices read in place and through planes */
    {300, 200, 3004, "tma_wgmmatf32_64x128", 4, TG_MATH_TF32, "row NT"},
    {200, 300, 3004, "tma_wgmma3xtf32_64x128", 2, TG_MATH_FP32, "col NN"},
    {200, 300, 3001, "tma_wgmma3xtf32_64x128", 2, TG_MATH_FP32, "row TN"},
};

/* The layout and transposes of "col TN" (row-major NN for NULL). */
static void form_of(const char *form, tg_layout *layout, tg_op *ta, tg_op *tb)
{
    *layout = form && form[0] == 'c' ? TG_COL_MAJOR : TG_ROW_MAJOR;
    *ta = form && form[4] == 'T' ? TG_TRANS : TG_NO_TRANS;
    *tb = form && form[5] == 'T' ? TG_TRANS : TG_NO_TRANS;
}

/* The call captured on the handle's stream into a graph, replayed over a poisoned C: whether
 * it gave the bits `want` (into `got`). */
static int replay_matches(tg_handle *h, tg_layout layout, tg_op ta, tg_op tb, const split_case *c,
                          const float *dA, int64_t lda, const float *dB, int64_t ldb, float *dC,
                          int64_t ldc, const float *want, float *got)
{
    const size_t bytes = (size_t)(c->m * c->n) * sizeof(float);
    cudaStream_t stream = (cudaStream_t)tg_get_stream(h);
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    if (cudaMemset(dC, 0xff, bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
        cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
        return 0;
    const tg_status s =
        tg_sgemm(h, layout, ta, tb, c->m, c->n, c->k, 1.0f, dA, lda, dB, ldb, 0.0f, dC, ldc);
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    int ok = s == TG_SUCCESS && ended == cudaSuccess &&
             cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess &&
             cudaGraphLaunch(exec, stream) == cudaSuccess &&
             cudaStreamSynchronize(stream) == cudaSuccess &&
             cudaMemcpy(got, dC, bytes, cudaMemcpyDeviceToHost) == cudaSuccess &&
             memcmp(want, got, bytes) == 0;
    if (s != TG_SUCCESS)
        printf("  the captured call: %s\n", tg_last_error(h));
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return ok;
}

static int run_case(tg_handle *h, const split_case *c, uint64_t *seed)
{
    const size_t a_n = (size_t)(c->m * c->k), b_n = (size_t)(c->k * c->n), c_n = (size_t)(c->m * c->n);
    float *host = malloc((a_n + b_n + 2 * c_n) * sizeof(float));
    float *dev = NULL;
    if (!host || cudaMalloc((void **)&dev, (a_n + b_n + c_n) * sizeof(float)) != cudaSuccess) {
        free(host);
        EXPECT(0, "allocating %lldx%lldx%lld", (long long)c->m, (long long)c->n, (long long)c->k);
        return 0;
    }
    float *A = host, *B = host + a_n, *first = B + b_n, *again = first + c_n;
    for (size_t i = 0; i < a_n + b_n; ++i) /* wide-ranged and cancelling */
        host[i] = (float)(tg_random_unit(seed) * ldexp(1.0, (int)(tg_splitmix64(seed) % 9) - 4));
    cudaMemcpy(dev, host, (a_n + b_n) * sizeof(float), cudaMemcpyHostToDevice);
    float *dA = dev, *dB = dev + a_n, *dC = dB + b_n;
    tg_layout layout;
    tg_op ta, tb;
    form_of(c->form, &layout, &ta, &tb);
    /* dense operands */
    const int64_t lda = tg_min_ld(layout, ta, c->m, c->k), ldb = tg_min_ld(layout, tb, c->k, c->n),
                  ldc = tg_min_ld(layout, TG_NO_TRANS, c->m, c->n);
    int identical = 1;
    const char *ran = "";
    tg_status s = tg_set_algo(h, c->algo);
    if (s == TG_SUCCESS)
        s = tg_set_split_k(h, c->slices);
    if (s == TG_SUCCESS)
        s = tg_set_math(h, c->math);
    for (int r = 0; r < kRepeats && s == TG_SUCCESS; ++r) {
        cudaMemset(dC, 0xff, c_n * sizeof(float)); /* NaN: an unwritten element shows */
        s = tg_sgemm(h, layout, ta, tb, c->m, c->n, c->k, 1.0f, dA, lda, dB, ldb, 0.0f, dC, ldc);
        if (s == TG_SUCCESS && tg_synchronize(h) == TG_SUCCESS) {
            ran = tg_last_algo(h);
            cudaMemcpy(r ? again : first, dC, c_n * sizeof(float), cudaMemcpyDeviceToHost);
            if (r)
                identical &= memcmp(first, again, c_n * sizeof(float)) == 0;
        }
    }
    const int replayed = s == TG_SUCCESS && replay_matches(h, layout, ta, tb, c, dA, lda, dB, ldb,
                                                           dC, ldc, first, again);
    char explain[2048] = "";
    tg_explain(h, layout, ta, tb, c->m, c->n, c->k, dA, lda, dB, ldb, dC, ldc, explain,
               sizeof explain);
    const int split = strstr(explain, "split-K") != NULL;
    EXPECT(s == TG_SUCCESS, "%s %lldx%lldx%lld: %s", c->algo, (long long)c->m, (long long)c->n,
           (long long)c->k, tg_last_error(h));
    EXPECT(identical, "%s (ran %s) %lldx%lldx%lld: results differ between runs", c->algo, ran,
           (long long)c->m, (long long)c->n, (long long)c->k);
    EXPECT(replayed, "%s (ran %s) %lldx%lldx%lld: the call replayed from a CUDA graph differs",
           c->algo, ran, (long long)c->m, (long long)c->n, (long long)c->k);
    EXPECT(split, "%s %lldx%lldx%lld was not split:\n%s", c->algo, (long long)c->m,
           (long long)c->n, (long long)c->k, explain);
    /* Against float64, sampled: reproducible must also mean right. */
    const tg_dense_gemm g = {.layout = layout, .transa = ta, .transb = tb, .m = c->m, .n = c->n,
                             .k = c->k, .alpha = 1.0f, .beta = 0.0f, .A = A, .lda = lda, .B = B,
                             .ldb = ldb, .ldc = ldc};
    tg_sampled_error e;
    tg_sample_error(&g, first, 512, 0x73706c6974ull, &e);
    /* TF32 mode is held to the check's TF32 unit, (k + 2) eps + 2^-9 (check.c), in FP32's */
    const double limit =
        c->math == TG_MATH_TF32 ? 1.0 + 0x1.0p-9 / ((double)(c->k + 2) * FLT_EPSILON) : 1.0;
    EXPECT(e.worst_scaled <= limit, "%s (ran %s) %lldx%lldx%lld: worst scaled error %.3g", c->algo,
           ran, (long long)c->m, (long long)c->n, (long long)c->k, e.worst_scaled);
    printf("  %-12s %-6s %-6s %6lldx%-5lldx%-6lld ran %-12s %s, %s, worst scaled error %.3g\n",
           c->algo, tg_math_name(c->math), c->form ? c->form : "row NN", (long long)c->m,
           (long long)c->n, (long long)c->k, ran, identical ? "bit-identical x10" : "DIFFERS",
           replayed ? "graph replay identical" : "GRAPH REPLAY DIFFERS", e.worst_scaled);
    cudaFree(dev);
    free(host);
    return 1;
}

/* Inf and NaN in the last few k, which the reduction sums itself where the tail is short
 * (split_k.h), and in the first slice: each output's class (finite, Inf, NaN) must be its
 * float64 sum's, and explain must say where the tail went. */
static void run_special_tail(tg_handle *h, const char *algo, tg_math math, uint64_t *seed)
{
    enum { kM = 100, kN = 90, kK = 30001, kSlices = 8 }; /* slices of 3748, a tail of 17 */
    const size_t a_n = (size_t)kM * kK, b_n = (size_t)kK * kN, c_n = (size_t)kM * kN;
    float *host = malloc((a_n + b_n + c_n) * sizeof(float));
    float *dev = NULL;
    if (!host || cudaMalloc((void **)&dev, (a_n + b_n + c_n) * sizeof(float)) != cudaSuccess) {
        free(host);
        EXPECT(0, "allocating the special-value case");
        return;
    }
    float *A = host, *B = host + a_n, *C = B + b_n;
    for (size_t i = 0; i < a_n + b_n; ++i)
        host[i] = (float)tg_random_unit(seed);
    A[3 * (size_t)kK + kK - 1] = INFINITY;            /* row 3: Inf in the tail */
    A[7 * (size_t)kK + 0] = INFINITY;                 /* row 7: Inf in the first slice, */
    A[7 * (size_t)kK + kK - 2] = -INFINITY;           /* -Inf in the tail: NaN or Inf */
    B[(size_t)(kK - 3) * kN + 5] = NAN;               /* column 5: NaN in the tail */
    B[(size_t)(kK / 2) * kN + 11] = INFINITY;         /* column 11: Inf in a full slice */
    cudaMemcpy(dev, host, (a_n + b_n) * sizeof(float), cudaMemcpyHostToDevice);
    float *dC = dev + a_n + b_n;
    cudaMemset(dC, 0xff, c_n * sizeof(float));
    tg_status s = tg_set_algo(h, algo);
    if (s == TG_SUCCESS)
        s = tg_set_split_k(h, kSlices);
    if (s == TG_SUCCESS)
        s = tg_set_math(h, math);
    if (s == TG_SUCCESS)
        s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK, 1.0f, dev, kK,
                     dev + a_n, kN, 0.0f, dC, kN);
    if (s == TG_SUCCESS)
        s = tg_synchronize(h);
    cudaMemcpy(C, dC, c_n * sizeof(float), cudaMemcpyDeviceToHost);
    char explain[2048] = "";
    tg_explain(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kM, kN, kK, dev, kK, dev + a_n, kN, dC,
               kN, explain, sizeof explain);
    EXPECT(s == TG_SUCCESS, "%s special tail: %s", algo, tg_last_error(h));
    EXPECT(strstr(explain, "then 17 more summed by the reduction itself") != NULL,
           "%s special tail: explain does not say the tail of 17 is folded:\n%s", algo, explain);
    int wrong = 0;
    for (int i = 0; i < kM && s == TG_SUCCESS; ++i)
        for (int j = 0; j < kN; ++j) {
            if (i != 3 && i != 7 && j != 5 && j != 11 && (i * 31 + j) % 17)
                continue; /* the special rows and columns, and a sample of the rest */
            double sum = 0.0;
            for (int64_t q = 0; q < kK; ++q)
                sum += (double)A[i * (size_t)kK + q] * (double)B[q * kN + j];
            const float got = C[i * kN + j];
            const int same = isnan(sum) ? isnan(got)
                             : isinf(sum) ? isinf(got) && (sum > 0) == (got > 0)
                                          : isfinite(got);
            if (!same && wrong++ < 4)
                fprintf(stderr, "  %s: C(%d, %d) = %g where the float64 sum is %g\n", algo, i,
                        j, got, sum);
        }
    EXPECT(!wrong, "%s special tail: %d outputs of the wrong class", algo, wrong);
    printf("  %-12s %-6s special values in the folded tail: %s\n", algo, tg_math_name(math),
           wrong || s != TG_SUCCESS ? "WRONG" : "classes as float64's");
    cudaFree(dev);
    free(host);
}
#endif

int main(int argc, char **argv)
{
    uint64_t seed = 0x5eedull;
    for (int i = 1; i < argc; ++i) {
        if (!tg_test_seed_arg(argc, argv, &i, 0, &seed))
            return fprintf(stderr, "usage: test_gpu_split_k [--seed N]\n"), 2;
    }
    const int need = tg_test_need_gpu("test_gpu_split_k");
    if (need)
        return need;
#ifdef TG_HAVE_CUDA
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS)
        return fprintf(stderr, "tg_create: %s\n", tg_last_error(NULL)), 1;
    const uint64_t first_seed = seed;
    printf("test_gpu_split_k --seed %#llx\n", (unsigned long long)seed);
    for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; ++i)
        run_case(h, &kCases[i], &seed);
    run_special_tail(h, "skinny32x32", TG_MATH_FP32, &seed);
    run_special_tail(h, "tma_wgmma3xtf32_64x128", TG_MATH_FP32, &seed);
    run_special_tail(h, "tma_wgmmatf32_64x128", TG_MATH_TF32, &seed);
    tg_destroy(h);
    if (tg_test_failures)
        fprintf(stderr, "reproduce: %s --seed %#llx\n", argv[0], (unsigned long long)first_seed);
#else
    (void)argv;
#endif
    return tg_test_result("test_gpu_split_k");
}
