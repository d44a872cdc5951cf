/*
 * emulated_ozaki2: rung 11 (src/cuda/kernels/k11_ozaki2.cu), its real kernels rewritten for the
 * CPU as test_emulated_rungs.cpp describes, checked in three parts:
 *   1. i128_to_double (int128.cuh) against the host compiler's conversion, which
 *      src/ozaki/ozaki2.c uses: ties, sticky bits, every length of 1 to 127 bits, both signs.
 *   2. The INT8 product alone (int8_gemm.cuh on the wgmma s8 twin): bytes over all of
 *      [-128, 127] against exact sums, shapes that miss the 128 x 256 tile, k past the emulated
 *      build's reduction chunk (256: the result must then be congruent modulo the item's
 *      modulus), items at or past the device's count left untouched, C's padding untouched.
 *   3. The whole scheme against tg_oz2_gemm_emulated (src/ozaki/ozaki2.c) bit for bit (NaN for
 *      NaN): odd m, n, k, every transpose, k past the chunk, batches, beta = 0 over NaN and
 *      beta != 0, moduli chosen (uniform, lines scaled over 2^-60..2^60, elements spread over
 *      2^-10..2^10 and 2^-16..2^16 (the bound sets the bits), cancelling, subnormal, magnitudes
 *      in [1/2, 1) (no INT8 product of leading magnitudes)) and forced (2, 5, 16), lines with
 *      Inf or NaN and lines too wide for 16 moduli (left to FMA); C in panels of columns.  The
 *      device's moduli, bits and count of INT8 products are ozaki2.c's.
 * Usage: test_emulated_ozaki2 [--quick]; exit status 0 when all pass.
 */
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_runtime.h"

#include "cuda/kernels/int128.cuh"
#include "cuda/ozaki2_int8.h"
#include "ozaki/ozaki2.h"

namespace {

int failures = 0;

void expect(bool ok, const std::string &what)
{
    if (!ok) {
        printf("FAIL %s\n", what.c_str());
        ++failures;
    }
}

/* ---- 1. 128-bit conversion ------------------------------------------------------------- */

void check_conversion()
{
    std::mt19937_64 rng(7);
    std::vector<tg_i128> values;
    for (int bits = 1; bits <= 127; ++bits)
        for (int t = 0; t < 40; ++t) {
            tg_u128 x = ((tg_u128)rng() << 64 | rng()) >> (128 - bits);
            x |= (tg_u128)1 << (bits - 1);
            values.push_back((tg_i128)x);
        }
    for (int shift = 0; shift <= 73; ++shift) { /* 54 significant bits: ties and near ties */
        const tg_u128 odd = ((tg_u128)1 << 53) | 1, even = ((tg_u128)1 << 53) | 2;
        for (tg_u128 base : {odd, even, odd | 2, ((tg_u128)1 << 54) - 1}) {
            values.push_back((tg_i128)(base << shift));
            if (shift > 0)
                values.push_back((tg_i128)((base << shift) | 1)); /* a sticky bit far below */
        }
    }
    long bad = 0;
    for (tg_i128 v : values)
        for (tg_i128 x : {v, -v}) {
            const double want = (double)x, got = i128_to_double(x);
            bad += std::memcmp(&want, &got, sizeof want) != 0;
        }
    expect(bad == 0, "i128_to_double differs from the host's conversion on " +
                         std::to_string(bad) + " of " + std::to_string(2 * values.size()));
    printf("128-bit conversion: %zu values\n", 2 * values.size());
}

/* ---- 2. the INT8 product ----------------------------------------------------------------- */

void check_gemm(int64_t m, int64_t n, int64_t k, int items, int active)
{
    const int64_t kp = (k + 15) / 16 * 16, ldc = (n + 2) / 2 * 2 + 2; /* even, with padding */
    std::mt19937 rng((unsigned)(m * 131 + n * 17 + k));
    std::uniform_int_distribution<int> byte(-128, 127);
    std::vector<int8_t> a((size_t)(items * m * kp), 0), b((size_t)(items * n * kp), 0);
    for (int z = 0; z < items; ++z) {
        for (int64_t i = 0; i < m; ++i)
            for (int64_t q = 0; q < k; ++q)
                a[(size_t)((z * m + i) * kp + q)] = (int8_t)byte(rng);
        for (int64_t j = 0; j < n; ++j)
            for (int64_t q = 0; q < k; ++q)
                b[(size_t)((z * n + j) * kp + q)] = (int8_t)byte(rng);
    }
    const int32_t sentinel = 0x5a5a5a5a;
    std::vector<int32_t> c((size_t)(items * m * ldc), sentinel);
    const int rc = tg_int8_gemm_run(a.data(), b.data(), c.data(), m, n, kp, items, &active, ldc,
                                    nullptr);
    char what[128];
    snprintf(what, sizeof what, "int8 product %" PRId64 "x%" PRId64 "x%" PRId64 ", %d of %d items",
             m, n, k, active, items);
    expect(rc == 0, std::string(what) + ": launch returned " + std::to_string(rc));
    long wrong = 0, touched = 0;
    for (int z = 0; z < items; ++z)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
                const int32_t got = c[(size_t)((z * m + i) * ldc + j)];
                if (z >= active || j >= n) {
                    touched += got != sentinel;
                    continue;
                }
                int64_t exact = 0;
                for (int64_t q = 0; q < k; ++q)
                    exact += (int64_t)a[(size_t)((z * m + i) * kp + q)] *
                             b[(size_t)((z * n + j) * kp + q)];
                const bool ok = kp <= TG_INT8_K_CHUNK ? got == exact
                                                      : (exact - got) % tg_oz2_moduli[z] == 0;
                wrong += !ok;
            }
    expect(wrong == 0, std::string(what) + ": " + std::to_string(wrong) + " wrong outputs");
    expect(touched == 0, std::string(what) + ": " + std::to_string(touched) +
                             " outputs outside C (padding, items past the count) written");
    printf("%-4s %s%s\n", wrong || touched || rc ? "FAIL" : "ok", what,
           kp > TG_INT8_K_CHUNK ? " (congruent: k past the chunk)" : " (exact)");
}

/* ---- 3. the scheme against ozaki2.c ------------------------------------------------------- */

enum Data {
    kUniform, kWideLines, kSpread, kCancel, kSpecialLines, kTooWide, kSubnormal,
    kSpread16, /* elements over 2^-16..2^16: the bound rule sets the bits */
    kNarrow,   /* magnitudes in [1/2, 1): no line's range passes the floor, P not formed */
};
const char *data_name(Data d)
{
    static const char *names[] = {"uniform",       "lines over 2^-60..2^60",
                                  "spread 2^-10..2^10", "cancelling",
                                  "Inf/NaN lines", "lines too wide (FMA)",
                                  "subnormal",     "spread 2^-16..2^16",
                                  "narrow [1/2, 1)"};
    return names[d];
}

struct Case {
    int64_t m, n, k;
    bool trans_a, trans_b;
    float alpha, beta;
    int64_t batch;
    Data data;
    int forced;
};

bool same_float(float x, float y)
{
    return std::isnan(x) ? std::isnan(y) : std::memcmp(&x, &y, sizeof x) == 0;
}

void check_scheme(const Case &c, unsigned seed)
{
    const int64_t m = c.m, n = c.n, k = c.k;
    tg_problem p{};
    p.m = m, p.n = n, p.k = k, p.alpha = c.alpha, p.beta = c.beta, p.batch = c.batch;
    if (c.trans_a)
        p.a_rs = 1, p.a_cs = m + 3;
    else
        p.a_cs = 1, p.a_rs = k + 1;
    if (c.trans_b)
        p.b_rs = 1, p.b_cs = k + 2;
    else
        p.b_cs = 1, p.b_rs = n + 3;
    p.ldc = n + 1;
    p.stride_a = (c.trans_a ? k * p.a_cs : m * p.a_rs) + 5;
    p.stride_b = (c.trans_b ? n * p.b_cs : k * p.b_rs) + 7;
    p.stride_c = m * p.ldc + 2;
    std::vector<float> A((size_t)(p.stride_a * c.batch)), B((size_t)(p.stride_b * c.batch));
    std::vector<float> C((size_t)(p.stride_c * c.batch));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::uniform_int_distribution<int> line_scale(-60, 60), spread(-10, 10), spread16(-16, 16),
        pick(0, 9);
    std::uniform_real_distribution<float> narrow(0.5f, 1.0f);
    const float nan = std::nanf("");
    for (int64_t z = 0; z < c.batch; ++z) {
        std::vector<int> row_scale((size_t)m), col_scale((size_t)n);
        for (int &s : row_scale)
            s = c.data == kWideLines ? line_scale(rng) : 0;
        for (int &s : col_scale)
            s = c.data == kWideLines ? line_scale(rng) : 0;
        for (int64_t i = 0; i < m; ++i)
            for (int64_t q = 0; q < k; ++q) {
                float v = unit(rng);
                switch (c.data) {
                case kWideLines: v = std::ldexp(v, row_scale[(size_t)i]); break;
                case kSpread: v = std::ldexp(v, spread(rng)); break;
                case kSpread16: v = std::ldexp(v, spread16(rng)); break;
                case kNarrow: v = std::copysign(narrow(rng), v); break;
                case kCancel: v = std::ldexp(1.0f, spread(rng)); break;
                case kTooWide: if (i % 3 == 1) v = std::ldexp(v, q % 2 ? 70 : -70); break;
                case kSubnormal: v = std::ldexp(v, -130); break;
                case kSpecialLines:
                    if (i % 4 == 1 && q == k / 2) v = i % 8 == 1 ? INFINITY : nan;
                    break;
                default: break;
                }
                A[(size_t)(z * p.stride_a + i * p.a_rs + q * p.a_cs)] = v;
            }
        for (int64_t q = 0; q < k; ++q)
            for (int64_t j = 0; j < n; ++j) {
                float v = unit(rng);
                switch (c.data) {
                case kWideLines: v = std::ldexp(v, col_scale[(size_t)j]); break;
                case kSpread: v = std::ldexp(v, spread(rng)); break;
                case kSpread16: v = std::ldexp(v, spread16(rng)); break;
                case kNarrow: v = std::copysign(narrow(rng), v); break;
                case kCancel: /* pairs of k that cancel but for a small part */
                    v = q % 2 == 0 ? unit(rng) : 0.0f;
                    break;
                case kSubnormal: v = std::ldexp(v, 100); break;
                case kSpecialLines:
                    if (j % 5 == 2 && q == 0) v = j % 10 == 2 ? -INFINITY : nan;
                    break;
                default: break;
                }
                B[(size_t)(z * p.stride_b + q * p.b_rs + j * p.b_cs)] = v;
            }
        if (c.data == kCancel) /* op(B)(q + 1, j) = -op(B)(q, j) (1 + 2^-20), op(A) in pairs */
            for (int64_t q = 0; q + 1 < k; q += 2) {
                for (int64_t j = 0; j < n; ++j) {
                    float *b0 = &B[(size_t)(z * p.stride_b + q * p.b_rs + j * p.b_cs)];
                    b0[p.b_rs] = -*b0 * (1.0f + 0x1p-20f);
                }
                for (int64_t i = 0; i < m; ++i) {
                    float *a0 = &A[(size_t)(z * p.stride_a + i * p.a_rs + q * p.a_cs)];
                    a0[p.a_cs] = *a0;
                }
            }
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j)
                C[(size_t)(z * p.stride_c + i * p.ldc + j)] =
                    c.beta == 0.0f ? nan : (pick(rng) == 0 && c.data == kSpecialLines ? INFINITY
                                                                                      : unit(rng));
    }
    std::vector<float> C_cpu = C;
    p.A = A.data(), p.B = B.data(), p.C = C.data();
    std::vector<char> workspace(tg_oz2_int8_workspace(&p));
    std::memset(workspace.data(), 0x3c, workspace.size()); /* nothing unwritten is read as 0 */
    const int rc = tg_oz2_int8_run(&p, nullptr, workspace.data(), c.forced);
    tg_oz2_int8_choice chosen{};
    const int rc_chosen = tg_oz2_int8_chosen(&p, workspace.data(), nullptr, &chosen);
    tg_problem q = p;
    q.C = C_cpu.data();
    tg_oz2_plan plan;
    const int rc_cpu = tg_oz2_gemm_emulated(&q, c.forced, &plan);
    long differ = 0;
    int64_t first = -1;
    for (size_t e = 0; e < C.size(); ++e)
        if (!same_float(C[e], C_cpu[e]))
            first = first < 0 ? (int64_t)e : first, ++differ;
    char what[256];
    snprintf(what, sizeof what,
             "scheme %" PRId64 "x%" PRId64 "x%" PRId64 " %c%c alpha %g beta %g batch %" PRId64
             " %s, %d moduli%s (fallback rows %" PRId64 ", cols %" PRId64 ")",
             m, n, k, c.trans_a ? 'T' : 'N', c.trans_b ? 'T' : 'N', (double)c.alpha,
             (double)c.beta, c.batch, data_name(c.data), plan.moduli,
             c.forced ? " forced" : "", plan.fallback_rows, plan.fallback_cols);
    /* the same choice as ozaki2.c's (its plan is the batch's largest: one item compared) */
    const bool same_choice = c.batch > 1 ||
                             (chosen.moduli == plan.moduli && chosen.bits_a == plan.bits_a &&
                              chosen.bits_b == plan.bits_b &&
                              chosen.int8_products == plan.int8_products &&
                              chosen.reduced_products == plan.reduced_products);
    const bool ok = rc == 0 && rc_cpu == 0 && rc_chosen == 0 && differ == 0 && same_choice;
    printf("%-4s %s, bits %d/%d, %lld + %lld/%d INT8 products\n", ok ? "ok" : "FAIL", what,
           plan.bits_a, plan.bits_b, (long long)plan.int8_products,
           (long long)plan.reduced_products, TG_OZ2_BLOCK);
    if (!ok) {
        ++failures;
        printf("     device chose %d moduli, bits %d/%d, %d + %d/%d INT8 products\n",
               chosen.moduli, chosen.bits_a, chosen.bits_b, chosen.int8_products,
               chosen.reduced_products, TG_OZ2_BLOCK);
        printf("     launch %d, CPU %d, %ld floats differ", rc, rc_cpu, differ);
        if (first >= 0)
            printf(" (first at %" PRId64 ": %a, ozaki2.c %a)", first, (double)C[(size_t)first],
                   (double)C_cpu[(size_t)first]);
        printf("\n");
    }
}

} // namespace

int main(int argc, char **argv)
{
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--quick")) {
            quick = true;
        } else {
            fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
            return 1;
        }
    }
    check_conversion();

    check_gemm(1, 1, 16, 1, 1);
    check_gemm(130, 257, 96, 3, 2);
    check_gemm(7, 300, 600, 2, 2); /* past the chunk: reductions */
    if (!quick)
        check_gemm(129, 33, 1000, 16, 16);

    std::vector<Case> cases = {
        {1, 1, 1, false, false, 1.25f, 0.0f, 1, kUniform, 0},
        {7, 5, 33, false, false, 1.25f, 0.0f, 1, kUniform, 0},
        {7, 5, 33, true, true, -1.5f, -0.75f, 1, kUniform, 0},
        {33, 65, 300, false, true, 1.0f, 0.0f, 1, kUniform, 0}, /* k past the chunk */
        {33, 65, 300, true, false, -1.5f, 0.5f, 1, kWideLines, 0},
        {31, 17, 77, false, false, 1.0f, 0.0f, 1, kSpread, 0},
        {31, 17, 77, true, true, 2.0f, 1.0f, 1, kCancel, 0},
        {29, 23, 41, false, true, 1.0f, 1.0f, 1, kSpecialLines, 0},
        {29, 23, 41, true, false, 1.0f, 0.0f, 1, kSpecialLines, 0},
        {21, 19, 35, false, false, 1.0f, 0.0f, 1, kTooWide, 0},
        {9, 11, 13, true, false, 1.0f, 0.25f, 1, kSubnormal, 0},
        {13, 9, 45, false, false, 0.5f, 0.0f, 2, kWideLines, 0},
        {29, 37, 200, false, true, 1.0f, 0.0f, 1, kSpread16, 0}, /* bits by the bound */
        {35, 27, 150, true, false, 1.0f, 0.5f, 1, kNarrow, 0},   /* P not formed */
        {13, 9, 45, false, false, 1.0f, 0.0f, 1, kUniform, 2},
        {13, 9, 45, true, true, 1.0f, -0.5f, 1, kSpread, 5},
        {13, 9, 45, false, true, 1.0f, 0.0f, 1, kWideLines, 16},
        /* C in panels of 256 columns (the emulated build's product budget): lines of the
         * second panel left to FMA, beta, a batch */
        {5, 300, 20, false, true, 1.0f, 0.5f, 2, kSpecialLines, 0},
    };
    if (!quick) {
        cases.push_back({130, 260, 17, false, false, 1.0f, 0.0f, 1, kUniform, 0});
        cases.push_back({129, 257, 260, true, true, -1.0f, 0.5f, 1, kSpread, 0});
        /* to_leading: 8 tiles of 128 along k (R's rows, 1024, past kp), 3 a block: a block
         * writes a pair's 8 blocks of R and then a lone tile's 4; either orientation */
        cases.push_back({37, 45, 1000, true, false, 1.0f, 0.0f, 1, kUniform, 0});
        cases.push_back({45, 37, 700, false, true, 1.0f, 0.0f, 1, kSpread, 0});
    }
    for (size_t i = 0; i < cases.size(); ++i)
        check_scheme(cases[i], 2000u + (unsigned)i);

    printf(failures ? "test_emulated_ozaki2: %d check(s) failed\n"
                    : "test_emulated_ozaki2: all passed\n",
           failures);
    return failures ? 1 : 0;
}
