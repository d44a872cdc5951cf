/*
 * emulated_split_k_reduce: split-K's reductions (src/cuda/kernels/split_k_reduce.cuh), their
 * real kernels rewritten for the CPU (emulate.cmake), against the order split_k_reduce.cuh
 * states, computed here in plain C++: lane y sums the partials y, y + 8, ... from 0, then the
 * folded tail's terms y, y + 8, ... (fmaf); the lanes' sums are added in lane order; then
 * C = alpha * sum + beta * C, C never read where beta = 0.  Both forms must give those bits
 * exactly (NaN for NaN): both forms directly on 1 to 20 partials, and launch_reduce_split_k,
 * whichever it picks (the few form past 8 partials on 64K outputs and more), on 1 to 20,
 * launched dependently (dependent_launch.cuh's twin) on even counts and plainly on odd ones.
 * Partials are wide-ranged and cancelling, with signed zeros and a few Inf and NaN; tails of 0
 * to 19 terms; C with a padded leading dimension (its padding must stay as it was) and an
 * output count that is not a multiple of a block's (the row past C must stay as it was too).
 * Exit status 0 when every case matches.
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cuda_runtime.h"

#include "cuda/kernels/split_k_reduce.cuh" /* the rewritten copy (GEN) */

namespace {

using namespace split_k_reduce;

std::mt19937_64 rng(20261129);

float draw()
{
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    const int scale = (int)(rng() % 17) - 8;
    switch (rng() % 64) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return INFINITY;
    case 3: return NAN;
    default: return (float)std::ldexp(unit(rng), scale);
    }
}

struct Case {
    int64_t m, n, count, tail_k;
    float alpha, beta;
};

/* The order of split_k_reduce.cuh, on the host. */
void expected(const tg_problem &p, const std::vector<float> &partials, int64_t count,
              const tg_problem &tail, std::vector<float> &c)
{
    for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
            float total = 0.0f;
            for (int y = 0; y < kReduceLanes; ++y) {
                float lane = 0.0f;
                for (int64_t s = y; s < count; s += kReduceLanes)
                    lane += partials[s * p.m * p.n + i * p.n + j];
                for (int64_t q = y; q < tail.k; q += kReduceLanes)
                    lane = fmaf(tail.A[i * tail.a_rs + q * tail.a_cs],
                                tail.B[q * tail.b_rs + j * tail.b_cs], lane);
                total = y == 0 ? lane : total + lane;
            }
            float &out = c[i * p.ldc + j];
            out = p.beta == 0.0f ? p.alpha * total : p.alpha * total + p.beta * out;
        }
}

bool same_bits(float a, float b)
{
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

enum Form { kFew, kLanes, kPicked };
const char *const kFormName[] = {"reduce_split_k_few", "reduce_split_k_lanes",
                                 "launch_reduce_split_k"};

int run(const Case &c, Form form)
{
    const int64_t ldc = c.n + 3, per_item = c.m * c.n;
    std::vector<float> partials(c.count * per_item);
    for (float &x : partials)
        x = draw();
    /* the tail: op(A) m x tail_k row-major, op(B) tail_k x n column-major (k-contiguous) */
    std::vector<float> a(c.m * c.tail_k + 1), b(c.tail_k * c.n + 1);
    for (float &x : a)
        x = draw();
    for (float &x : b)
        x = draw();
    std::vector<float> c_in((c.m + 1) * ldc); /* a row past C: nothing may write there */
    for (float &x : c_in) /* beta = 0 must not read C: NaN there would show */
        x = c.beta == 0.0f ? NAN : draw();
    tg_problem p{};
    p.m = c.m, p.n = c.n, p.k = c.count, p.batch = 1;
    p.alpha = c.alpha, p.beta = c.beta, p.ldc = ldc;
    tg_problem tail{};
    tail.m = c.m, tail.n = c.n, tail.k = c.tail_k, tail.batch = 1;
    tail.A = a.data(), tail.a_rs = c.tail_k, tail.a_cs = 1;
    tail.B = b.data(), tail.b_rs = 1, tail.b_cs = c.tail_k;

    std::vector<float> want = c_in, got = c_in;
    expected(p, partials, c.count, tail, want);
    p.C = got.data();
    if (form == kFew)
        reduce_split_k_few->*emu_config(grid_stride_blocks(per_item, kFewThreads),
                                        kFewThreads)(p, partials.data(), c.count, tail);
    else if (form == kLanes)
        reduce_split_k_lanes->*emu_config(grid_stride_blocks(per_item, 32),
                                          dim3(32, kReduceLanes))(p, partials.data(), c.count,
                                                                  tail);
    int bad = 0;
    if (form == kPicked && launch_reduce_split_k(p, partials.data(), c.count, tail,
                                                   c.count % 2 == 0, 0) != cudaSuccess)
        bad++, std::printf("  launch_reduce_split_k failed\n");

    for (int64_t i = 0; i < (c.m + 1) * ldc; ++i)
        if (!same_bits(got[i], want[i]) && bad++ < 3)
            std::printf("  %s %lldx%lld, %lld partials, tail %lld, beta %g: element %lld "
                        "(row %lld, column %lld) %a, expected %a\n",
                        kFormName[form], (long long)c.m, (long long)c.n, (long long)c.count,
                        (long long)c.tail_k, c.beta, (long long)i, (long long)(i / ldc),
                        (long long)(i % ldc), got[i], want[i]);
    return bad != 0;
}

} // namespace

int main()
{
    const Case cases[] = {
        {37, 29, 1, 0, 1.0f, 0.0f},   {37, 29, 2, 0, 1.0f, 0.0f},  {37, 29, 2, 7, -2.0f, 0.5f},
        {19, 45, 3, 11, 1.0f, 0.0f},  {64, 8, 4, 0, 0.5f, 1.0f},   {9, 301, 5, 19, 1.0f, 0.0f},
        {33, 33, 6, 3, 3.0f, -1.0f},  {40, 17, 7, 12, 1.0f, 0.0f}, {23, 31, 8, 0, 1.0f, 2.0f},
        {23, 31, 8, 15, -1.0f, 0.0f}, {600, 1, 2, 4, 1.0f, 0.0f},  {1, 777, 8, 9, 1.0f, 1.0f},
    };
    const Case many[] = {
        {21, 13, 9, 0, 1.0f, 0.0f},    {21, 13, 17, 5, 2.0f, 1.0f}, {5, 70, 20, 19, 1.0f, 0.0f},
        {257, 256, 9, 0, 1.0f, 0.0f}, {256, 257, 12, 5, -1.0f, 0.5f},
    };
    int failed = 0, run_count = 0;
    for (const Case &c : cases)
        for (Form f : {kFew, kLanes, kPicked}) {
            failed += run(c, f);
            ++run_count;
        }
    for (const Case &c : many)
        for (Form f : {kFew, kLanes, kPicked}) {
            failed += run(c, f);
            ++run_count;
        }
    std::printf("emulated_split_k_reduce: %d of %d runs gave the stated order's bits\n",
                run_count - failed, run_count);
    return failed != 0;
}
