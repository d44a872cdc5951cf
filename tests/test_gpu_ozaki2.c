/* Rung 11 (ozaki2_int8, forced: auto never picks it) on the GPU, through tg_sgemm on device
 * pointers: every output within the k-scaled bound of the float64 reference, and bit for bit
 * what the CPU emulation of the scheme (src/ozaki/ozaki2.c) gives (NaN for NaN), on uniform,
 * wide-ranged (rows and columns scaled over 2^-40..2^40, elements spread over 2^-10..2^10),
 * cancelling and Inf/NaN data, odd shapes, both transposes of each operand, beta = 0 over a
 * NaN C and beta != 0, and one k past 2^16 (the INT8 sums' reduction).  Skips (77) without a
 * GPU. */
#include <math.h>
#include <stdint.h>

#include "cpu/cpu.h"
#include "ozaki/ozaki2.h"
#include "rng.h"
#include "testing.h"

#ifdef TG_HAVE_CUDA
enum Data { kUniform, kWide, kCancel, kSpecial };
static const char *const kDataNames[] = {"uniform", "wide-range", "cancelling", "Inf/NaN"};

typedef struct ozaki_case {
    int64_t m, n, k;
    tg_op ta, tb;
    float alpha, beta;
    enum Data data;
} ozaki_case;

static const ozaki_case kCases[] = {
    {1, 1, 1, TG_NO_TRANS, TG_NO_TRANS, 1.0f, 0.0f, kUniform},
    {77, 127, 300, TG_NO_TRANS, TG_NO_TRANS, 1.25f, 0.0f, kUniform},
    {509, 260, 1000, TG_TRANS, TG_NO_TRANS, -1.5f, 0.75f, kUniform},
    {300, 301, 777, TG_NO_TRANS, TG_TRANS, 1.0f, 0.0f, kWide},
    {129, 513, 2049, TG_TRANS, TG_TRANS, 2.0f, -1.0f, kWide},
    {256, 255, 1024, TG_NO_TRANS, TG_NO_TRANS, 1.0f, 0.0f, kCancel},
    {200, 190, 333, TG_TRANS, TG_NO_TRANS, 1.0f, 1.0f, kSpecial},
    {96, 64, 70001, TG_NO_TRANS, TG_TRANS, 1.0f, 0.0f, kUniform}, /* k past 2^16 */
};

static float value(enum Data d, int64_t line, uint64_t *seed)
{
    const float u = (float)tg_random_unit(seed);
    switch (d) {
    case kWide: /* each line of A scaled apart, elements spread */
        return ldexpf(u, (int)(line * 37 % 81) - 40 + (int)(tg_splitmix64(seed) % 21) - 10);
    case kSpecial:
        if (tg_splitmix64(seed) % 97 == 0)
            return tg_splitmix64(seed) % 2 ? INFINITY : NAN;
        return u;
    default: return u;
    }
}

static int same_float(float x, float y)
{
    return isnan(x) ? isnan(y) : memcmp(&x, &y, sizeof x) == 0;
}

static void run_case(tg_handle *h, const ozaki_case *c, uint64_t *seed)
{
    const int64_t m = c->m, n = c->n, k = c->k;
    const int64_t lda = c->ta == TG_NO_TRANS ? k : m, ldb = c->tb == TG_NO_TRANS ? n : k;
    const size_t a_n = (size_t)(m * k), b_n = (size_t)(k * n), c_n = (size_t)(m * n);
    float *host = malloc((a_n + b_n + 3 * c_n) * sizeof(float));
    double *ref = malloc(2 * c_n * sizeof(double));
    float *dev = NULL;
    if (!host || !ref ||
        cudaMalloc((void **)&dev, (a_n + b_n + c_n) * sizeof(float)) != cudaSuccess) {
        EXPECT(0, "allocating %lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
        free(host), free(ref);
        return;
    }
    float *A = host, *B = A + a_n, *C0 = B + b_n, *got = C0 + c_n, *emulated = got + c_n;
    for (size_t i = 0; i < a_n; ++i) /* the line of op(A): row i / lda when not transposed */
        A[i] = value(c->data, c->ta == TG_NO_TRANS ? (int64_t)i / lda : (int64_t)i % lda, seed);
    for (size_t i = 0; i < b_n; ++i)
        B[i] = value(c->data == kWide ? kUniform : c->data, 0, seed);
    /* cancelling: op(A)(i, q + 1) = op(A)(i, q), op(B)(q + 1, j) = -op(B)(q, j) (1 + 2^-20) */
    if (c->data == kCancel)
        for (int64_t q = 0; q + 1 < k; q += 2) {
            for (int64_t i = 0; i < m; ++i) {
                const int64_t at = c->ta == TG_NO_TRANS ? i * lda + q : q * lda + i;
                A[c->ta == TG_NO_TRANS ? at + 1 : at + lda] = A[at];
            }
            for (int64_t j = 0; j < n; ++j) {
                const int64_t at = c->tb == TG_NO_TRANS ? q * ldb + j : j * ldb + q;
                B[c->tb == TG_NO_TRANS ? at + ldb : at + 1] = -B[at] * (1.0f + 0x1p-20f);
            }
        }
    for (size_t i = 0; i < c_n; ++i)
        C0[i] = c->beta == 0.0f ? NAN : (float)tg_random_unit(seed);
    float *dA = dev, *dB = dA + a_n, *dC = dB + b_n;
    cudaMemcpy(dev, host, (a_n + b_n + c_n) * sizeof(float), cudaMemcpyHostToDevice);
    tg_status s = tg_set_algo(h, "ozaki2_int8");
    if (s == TG_SUCCESS)
        s = tg_sgemm(h, TG_ROW_MAJOR, c->ta, c->tb, m, n, k, c->alpha, dA, lda, dB, ldb, c->beta,
                     dC, n);
    if (s == TG_SUCCESS)
        s = tg_synchronize(h);
    const char *ran = s == TG_SUCCESS ? tg_last_algo(h) : "";
    cudaMemcpy(got, dC, c_n * sizeof(float), cudaMemcpyDeviceToHost);
    EXPECT(s == TG_SUCCESS && strcmp(ran, "ozaki2_int8") == 0, "%lldx%lldx%lld %s: %s (ran %s)",
           (long long)m, (long long)n, (long long)k, kDataNames[c->data], tg_last_error(h), ran);

    /* The normalized problem (problem.h) of the call, for the CPU emulation and float64. */
    tg_problem p = {.m = m, .n = n, .k = k, .alpha = c->alpha, .beta = c->beta, .A = A,
                    .a_rs = c->ta == TG_NO_TRANS ? lda : 1, .a_cs = c->ta == TG_NO_TRANS ? 1 : lda,
                    .B = B, .b_rs = c->tb == TG_NO_TRANS ? ldb : 1,
                    .b_cs = c->tb == TG_NO_TRANS ? 1 : ldb, .C = emulated, .ldc = n, .batch = 1};
    memcpy(emulated, C0, c_n * sizeof(float));
    tg_oz2_plan plan;
    EXPECT(tg_oz2_gemm_emulated(&p, 0, &plan) == 0, "the CPU emulation could not allocate");
    long differ = 0;
    for (size_t i = 0; i < c_n; ++i)
        differ += !same_float(got[i], emulated[i]);
    EXPECT(differ == 0, "%lldx%lldx%lld %s: %ld outputs differ from ozaki2.c's", (long long)m,
           (long long)n, (long long)k, kDataNames[c->data], differ);

    /* Against float64: specials where the reference has them, the rest within the bound. */
    double *bound = ref + c_n;
    tg_ref_gemm_f64(&p, C0, ref, bound);
    long special_mismatch = 0;
    for (size_t i = 0; i < c_n; ++i)
        if (!isfinite(ref[i]) || !isfinite(got[i])) {
            special_mismatch += isnan(ref[i]) ? !isnan(got[i]) : (double)got[i] != ref[i];
            got[i] = 0.0f, ref[i] = 0.0, bound[i] = 1.0;
        }
    p.C = got;
    const double error = tg_scaled_error(&p, got, ref, bound);
    EXPECT(special_mismatch == 0, "%lldx%lldx%lld %s: %ld special values differ from float64's",
           (long long)m, (long long)n, (long long)k, kDataNames[c->data], special_mismatch);
    EXPECT(error <= 1.0, "%lldx%lldx%lld %s: scaled error %.3g", (long long)m, (long long)n,
           (long long)k, kDataNames[c->data], error);
    printf("  %5lldx%-5lldx%-6lld %c%c %-10s %2d moduli, FMA rows %lld cols %lld: scaled error "
           "%.3g, %s\n",
           (long long)m, (long long)n, (long long)k, c->ta == TG_NO_TRANS ? 'N' : 'T',
           c->tb == TG_NO_TRANS ? 'N' : 'T', kDataNames[c->data], plan.moduli,
           (long long)plan.fallback_rows, (long long)plan.fallback_cols, error,
           differ ? "DIFFERS from ozaki2.c" : "ozaki2.c's bits");
    cudaFree(dev);
    free(host), free(ref);
}
#endif

int main(int argc, char **argv)
{
    uint64_t seed = 0x0a2a1ull;
    for (int i = 1; i < argc; ++i) {
        if (!tg_test_seed_arg(argc, argv, &i, 0, &seed))
            return fprintf(stderr, "usage: test_gpu_ozaki2 [--seed N]\n"), 2;
    }
    const int need = tg_test_need_gpu("test_gpu_ozaki2");
    if (need)
        return need;
#ifdef TG_HAVE_CUDA
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS)
        return fprintf(stderr, "tg_create: %s\n", tg_last_error(NULL)), 1;
    const uint64_t first_seed = seed;
    printf("test_gpu_ozaki2 --seed %#llx\n", (unsigned long long)seed);
    for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; ++i)
        run_case(h, &kCases[i], &seed);
    tg_destroy(h);
    if (tg_test_failures)
        fprintf(stderr, "reproduce: %s --seed %#llx\n", argv[0], (unsigned long long)first_seed);
#else
    (void)argv, (void)seed;
#endif
    return tg_test_result("test_gpu_ozaki2");
}
