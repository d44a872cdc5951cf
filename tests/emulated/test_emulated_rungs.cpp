/*
 * emulated_rungs: every registered rung's real kernel source, run on the CPU.
 *
 * What this is.  At build time tests/emulated/emulate.cmake copies src/cuda/kernels/, the
 * registry and the headers they include into the build tree with a few textual rewrites
 * (<<<...>>> launches become calls into the emulator, reinterpret_cast becomes an
 * alignment-checking emu_cast, extern __shared__ becomes a per-launch buffer), and the host
 * compiler builds the copies against tests/emulated/cuda_runtime.h, a stand-in CUDA runtime that
 * runs each block's threads as fibers between barriers.  This driver then walks the emulated
 * registry (tg_rungs, so a new rung is tested as soon as it is listed there) and runs each
 * rung's launcher, its dispatch included, over a sweep: the 4 transpose combinations and
 * general strides, shapes that miss every tile, aligned and misaligned pointers with odd
 * leading dimensions, beta = 0 over NaN-poisoned C and beta != 0, batches with a shared A,
 * small-integer inputs whose result must match bit for bit, Inf and NaN, values that TF32
 * reads as subnormal (the tensor core flushes them), and one long sum (k = 256 of positive
 * values) whose RMS error is held to the README's criterion, max(sqrt(k + 2) 2^-24, 1.5 x the
 * RMS error of the FFMA order, one fmaf after another along k), or for TF32 rungs to TF32's
 * 2^-10 + sqrt(k + 2) 2^-24.  Each case is checked against the
 * float64 reference (tg_ref_gemm_f64, tg_scaled_error <= 1), and C's padding, the guards around
 * every buffer, and A and B must come back unchanged.  A rung with its own workspace
 * (tg_rung.workspace_bytes) gets a fenced one of exactly the size it asks for.  Every buffer
 * ends just before an inaccessible 4 MiB fence, so a read or write past the end of a matrix faults, and the fault is
 * reported with the operand and the case.  Like the real backend, it only ever
 * launches with m, n, k > 0 and alpha != 0 (the backend handles the rest itself).
 *
 * What it checks: the kernels' arithmetic, indexing, edge handling (no access outside the
 * matrices), strides, batching, beta = 0 never reading C, the alignment of every vector
 * (float2/float4) access, launch configurations within CUDA's limits, and, through the emulated
 * twin of async_copy.cuh, cp.async pipelines (copies land only at the matching wait).  Barriers: threads run as far as they can before the
 * next one moves, in forward order in some blocks and reverse order in others, so a missing or
 * misplaced __syncthreads shows up as a wrong result; a __syncthreads reached by only some of
 * the block's threads is reported.  That is a coarse race check, not a race detector: it cannot
 * see races between warps that the GPU's scheduling would expose and this order does not.
 *
 * What it is not: a GPU test.  It says nothing about speed, registers, occupancy, bank
 * conflicts, coalescing or memory-model subtleties, and it cannot run warp intrinsics
 * (__shfl_sync and friends fail the build with a message) or inline PTX (likewise: a kernel
 * header using inline PTX gets an emulated twin of the same name in tests/emulated/overrides/,
 * which the rewrite copies instead of the original).  The tensor-core twins compute as the
 * H100's tensor core does, bit for bit (tensor_core_model.h: TF32 inputs truncated, subnormals
 * flushed, each instruction's sum aligned and truncated), so a rung that lets the tensor core
 * accumulate too long, or feeds it values it flushes, fails here as on the GPU.  The GPU tests
 * remain test_gpu_rungs and `tilegemm verify`, which skip where there is no GPU.
 *
 * Usage: test_emulated_rungs [--rung NAME] [--quick] [--case N] [--verbose]
 *        test_emulated_rungs --list | --model-check | --feeds
 *   --rung NAME    only that rung          --quick    fewer and smaller shapes
 *   --case N       only case N of the sweep (as printed on failure), to reproduce it
 *   --verbose      one line per case
 *   --list         the registry's rungs, one a line (CMake makes a CTest case of each)
 *   --model-check  the tensor-core model on crafted cases where it differs from IEEE FP32
 *   --feeds        which operands rung 9 writes as TF32 planes, by the workspace it asks for
 * Exit status 0 when every case passed, 1 otherwise.  Every case's data comes from a fixed
 * seed (its case number), so a failure reproduces with the command it prints.
 */
#include <cfloat>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_runtime.h" /* the emulator's counters */

#include "cpu/cpu.h"
#include "cuda/registry.h"
#include "fenced_buffer.h"
#include "tensor_core_model.h"

/* The tensor-core model on crafted cases (model_check.cpp). */
int emulated_model_check();
/* Which operands rung 9 writes as planes (feeds_check.cpp). */
int emulated_feeds_check();

namespace {

struct Shape {
    int64_t m, n, k;
};

/* How the case lays out memory. */
enum Layout { kNN, kNT, kTN, kTT, kGeneral }; /* row-major view: N = op(X) contiguous along
                                                 its second index (A along k, B along n) */
enum Align {
    kAligned,      /* pointers 16-byte aligned, pitches and batch strides multiples of 4 */
    kMisaligned,   /* every pointer 1 float past a 16-byte boundary, odd pitches and strides */
    kOnlyC,        /* A and B aligned, C misaligned */
    kOnlyB,        /* A and C aligned, B misaligned */
    kPointers,     /* every pointer 1 float past a 16-byte boundary, pitches and strides aligned */
    kBatchStrides, /* pointers and pitches aligned, batch strides odd */
};

/* Which of operand x's (0 A, 1 B, 2 C) pointer, pitch and batch stride are aligned. */
struct Alignment {
    bool pointer, pitch, stride;
};
Alignment alignment(Align a, int x)
{
    switch (a) {
    case kAligned: return {true, true, true};
    case kMisaligned: return {false, false, false};
    case kOnlyC: return x == 2 ? Alignment{false, false, false} : Alignment{true, true, true};
    case kOnlyB: return x == 1 ? Alignment{false, false, false} : Alignment{true, true, true};
    case kPointers: return {false, true, true};
    case kBatchStrides: return {true, true, false};
    }
    return {true, true, true};
}

/* The values of A, B and C (always non-zero, so that a dropped term shows). */
enum Data {
    kUniform,  /* uniform in [-1, 1] */
    kInts,     /* small integers: the result must be exact */
    kSpecial,  /* Inf, -Inf and NaN sprinkled through A, B and C */
    kTiny,     /* A under 2^-100 (a third of it subnormal), B as large as to make every
                  product near 2^-20: normal products from operands that TF32 reads as
                  subnormal, or whose small part it does */
    kLongSum,  /* positive, in (0, 1]: the RMS error of a long sum against the FFMA order's */
};

struct Case {
    Shape s;
    Layout layout;
    Align align;
    float alpha, beta;
    int64_t batch;
    bool share_a; /* stride_a = 0 */
    Data data = kUniform;
};

const char *layout_name(Layout l)
{
    static const char *names[] = {"NN", "NT", "TN", "TT", "general"};
    return names[l];
}

const char *align_name(Align a)
{
    static const char *names[] = {"aligned",      "misaligned",       "C-misaligned",
                                  "B-misaligned", "pointers-misaligned", "odd-batch-strides"};
    return names[a];
}

const char *data_name(Data d)
{
    static const char *names[] = {"", " exact", " Inf/NaN", " tiny", " long-sum"};
    return names[d];
}

std::string describe(const Case &c)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%" PRId64 "x%" PRId64 "x%" PRId64 " %s %s alpha %g beta %g batch %" PRId64 "%s%s",
             c.s.m, c.s.n, c.s.k, layout_name(c.layout), align_name(c.align), (double)c.alpha,
             (double)c.beta, c.batch, c.share_a ? " shared-A" : "", data_name(c.data));
    return buf;
}

/* The sweep for one rung; the order is stable, so --case N reproduces case N. */
std::vector<Case> sweep(const tg_rung &r, bool quick)
{
    std::vector<Shape> shapes = {{1, 1, 1}, {7, 33, 5}, {33, 7, 65}};
    if (!quick) {
        shapes.push_back({129, 130, 17});
        if (r.block_rows >= 128) {
            shapes.push_back({257, 255, 33});
            /* 9 tile rows: a full group of 8 and a partial one for grouped block orders */
            shapes.push_back({1100, 260, 20});
        }
    }
    std::vector<Case> cases;
    for (int l = kNN; l <= kTT; ++l)
        for (const Shape &s : shapes)
            for (Align a : {kAligned, kMisaligned})
                for (float beta : {0.0f, -0.75f})
                    cases.push_back({s, (Layout)l, a, beta == 0.0f ? 1.25f : -1.5f, beta, 1,
                                     false});
    /* long k: 10 tiles of 32, so that pipelines wrap their rings of stages */
    for (int l = kNN; l <= kTT; ++l)
        cases.push_back({{33, 40, 300}, (Layout)l, l % 2 ? kMisaligned : kAligned,
                         l % 2 ? -1.5f : 1.25f, l % 2 ? -0.75f : 0.0f, 1, false});
    /* Thin outputs (a side of 1 to 33) and k from 1 to 1100, for the rungs made for them
     * (rungs 5 to 7): the skinny tiles' edges, gemv8's two forms and its chunks of k, shortk128's
     * k <= 256 (it refuses the rest) in chunks of 32 or 64 with a ragged last one, and its C
     * passed through shared memory as a whole tile, ragged in both */
    if (!quick && r.level >= 5 && r.level <= 7) {
        const Shape thin[] = {{9, 300, 7},   {300, 9, 33}, {1, 200, 33}, {200, 1, 1},
                              {7, 150, 300}, {150, 7, 520}, {33, 70, 1}, {3, 5, 1100},
                              {131, 261, 64}, {200, 129, 45}, {131, 140, 201},
                              {70, 200, 129}};
        for (int l = kNN; l <= kTT; ++l)
            for (const Shape &s : thin)
                for (Align a : {kAligned, kMisaligned})
                    cases.push_back({s, (Layout)l, a, a == kAligned ? 1.25f : -1.5f,
                                     a == kAligned ? 0.0f : -0.75f, 1, false});
        cases.push_back({{9, 70, 300}, kNT, kMisaligned, 1.0f, 0.5f, 3, false});
        cases.push_back({{70, 5, 40}, kTN, kAligned, 1.0f, 0.0f, 2, true});
        cases.push_back({{6, 90, 31}, kGeneral, kMisaligned, 2.0f, 1.0f, 2, false});
    }
    /* Rung 4's stream-K entries (their workspace): on the emulated GPU's 3 SMs, tiles shared
     * by 2 to 4 blocks, a block's run crossing 2 or 3 tiles, and (300 x 520) tiles run whole
     * before the shared ones */
    if (!quick && r.level == 4 && r.workspace_bytes)
        for (const Shape &s : {Shape{300, 520, 200}, Shape{200, 300, 330}})
            for (int l = kNN; l <= kTT; ++l)
                cases.push_back({s, (Layout)l, l % 2 ? kMisaligned : kAligned,
                                 l % 2 ? -1.5f : 1.25f, l % 2 ? -0.75f : 0.0f, l == kNT ? 2 : 1,
                                 false});
    /* vectors legal for the operands but not for C, and for one operand only */
    const Shape mid = quick ? Shape{33, 7, 65} : Shape{129, 130, 17};
    for (int l = kNN; l <= kTT; ++l) {
        cases.push_back({mid, (Layout)l, kOnlyC, 1.0f, 0.5f, 1, false});
        cases.push_back({mid, (Layout)l, kOnlyB, 1.0f, 0.0f, 1, false});
        cases.push_back({mid, (Layout)l, kPointers, 1.0f, 1.0f, 1, false});
        cases.push_back({mid, (Layout)l, kBatchStrides, 0.5f, 0.0f, 2, false});
    }
    /* Rung 9's 3xTF32 forms on products wide enough (n >= 2048) to pack an operand the TMA
     * cannot read into an aligned panel by a pre-pass: op(A) along k (NN) and, turned, op(B)
     * along n (TN, two items, beta != 0) */
    if (!quick && r.level == 9 && r.arith == TG_ARITH_3XTF32) {
        cases.push_back({{2051, 2049, 9}, kNN, kMisaligned, 1.25f, 0.0f, 1, false});
        cases.push_back({{2049, 2051, 9}, kTN, kMisaligned, -1.5f, -0.75f, 2, false});
    }
    /* Rung 9's 3xTF32 forms, whose tiles take turns (two sets of partial sums at most 64
     * wide, two units of 64 in the 64x128 block alone on its SM): products 70 or 120 wide
     * (both units, in 2 blocks for the emulated GPU's 3 SMs), 40 (the 48-wide block) and 20
     * (32-wide), over an odd and an even count of tiles */
    if (!quick && r.level == 9 && r.arith == TG_ARITH_3XTF32)
        for (int l = kNN; l <= kTT; ++l)
            for (const Shape &s : {Shape{70, 120, 129}, Shape{200, 40, 97}, Shape{150, 20, 160}})
                cases.push_back({s, (Layout)l, l % 2 ? kMisaligned : kAligned,
                                 l % 2 ? -1.5f : 1.25f, l % 2 ? -0.75f : 0.0f, 1, false});
    /* general strides: neither stride of op(A) or op(B) is 1 */
    cases.push_back({{37, 70, 19}, kGeneral, kAligned, 1.0f, 0.25f, 1, false});
    cases.push_back({{37, 70, 19}, kGeneral, kMisaligned, 2.0f, 0.0f, 1, false});
    /* batches, with a shared A (stride_a = 0) */
    cases.push_back({{33, 35, 9}, kNN, kAligned, 1.0f, 0.5f, 3, true});
    cases.push_back({{70, 66, 20}, kTT, kMisaligned, -1.0f, 0.0f, 3, false});
    /* exact: small integers, every product and sum exact in float */
    for (int l = kNN; l <= kTT; ++l)
        cases.push_back({quick ? Shape{33, 7, 65} : Shape{129, 130, 17}, (Layout)l,
                         l % 2 ? kMisaligned : kAligned, 1.25f, -0.75f, l == kNN ? 2 : 1, false,
                         kInts});
    /* special values: NaN and Inf in A, B and C follow IEEE arithmetic as the reference BLAS
     * does (Inf * 0 is NaN, Inf - Inf is NaN); beta = 0 still never reads C */
    for (int l = kNN; l <= kTT; ++l)
        for (float beta : {0.0f, 1.0f}) {
            cases.push_back({mid, (Layout)l, l % 2 ? kMisaligned : kAligned, 1.5f, beta,
                             l == kTT ? 2 : 1, false, kSpecial});
        }
    /* and where C's rows are 32-byte multiples (pitch 136), so that rung 9's 3xTF32 forms
     * store from their registers, not through the staged tile, beside recomputed columns */
    for (float beta : {0.0f, 1.0f})
        cases.push_back({{140, 135, 17}, kNN, kAligned, 1.5f, beta, 1, false, kSpecial});
    /* and where a 128 x 256 tile lies wholly inside C (rung 9's epilogue without tests) */
    cases.push_back({{140, 264, 17}, kNN, kAligned, 1.5f, 0.0f, 1, false, kSpecial});
    /* operands that TF32 reads as subnormal: the tensor-core rungs must treat them as
     * special (the FMA rungs compute them as any other) */
    cases.push_back({{33, 7, 65}, kNN, kAligned, 1.0f, 0.0f, 1, false, kTiny});
    cases.push_back({{33, 7, 65}, kTN, kMisaligned, 1.0f, 0.5f, 1, false, kTiny});
    /* A long sum, one block of outputs: on the tensor cores its RMS error is what the
     * promotion of partial sums into FP32 registers keeps down (positive values, so that the
     * tensor core's truncations add up rather than cancel). */
    cases.push_back({{128, 128, 256}, kNN, kAligned, 1.0f, 0.0f, 1, false, kLongSum});
    return cases;
}

int64_t round_up4(int64_t x) { return (x + 3) / 4 * 4; }
/* A pitch or batch stride of at least `len`: aligned keeps a multiple of 4 with a gap, else odd. */
int64_t pitch(int64_t len, bool aligned) { return aligned ? round_up4(len + 1) : len + (len % 2 ? 2 : 1); }

struct Result {
    bool ok;
    double error;
    std::string why;
    double rms = -1.0; /* long sums only */
};

/* The RMS over C of |c - ref| / bound (bound: sum |alpha a b|, as `tilegemm verify` measures
 * it), for the rung's result C and for the FFMA order (one fmaf after another along k, as
 * every FFMA rung's thread sums), and the README's limit for the rung's arithmetic.  For
 * problems with beta = 0. */
struct RmsCheck {
    double rms, ffma, limit;
};
RmsCheck rms_check(const tg_problem &p, tg_arith arith, const float *A, const float *B,
                   const float *C, const std::vector<double> &ref,
                   const std::vector<double> &bound)
{
    if (p.beta != 0.0f) {
        fprintf(stderr, "internal: rms_check takes beta = 0\n");
        exit(1);
    }
    double sum_sq = 0.0, ffma_sq = 0.0;
    long outputs = 0;
    for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t i = 0; i < p.m; ++i)
            for (int64_t j = 0; j < p.n; ++j) {
                const size_t at = (size_t)((b * p.m + i) * p.n + j);
                float acc = 0.0f;
                for (int64_t q = 0; q < p.k; ++q)
                    acc = std::fma(A[b * p.stride_a + i * p.a_rs + q * p.a_cs],
                                   B[b * p.stride_b + q * p.b_rs + j * p.b_cs], acc);
                const float ffma = p.alpha * acc;
                const double scale = bound[at] > 0.0 ? bound[at] : 1.0;
                const double e = ((double)C[b * p.stride_c + i * p.ldc + j] - ref[at]) / scale;
                const double f = ((double)ffma - ref[at]) / scale;
                sum_sq += e * e, ffma_sq += f * f, ++outputs;
            }
    RmsCheck r;
    r.rms = std::sqrt(sum_sq / (double)outputs);
    r.ffma = std::sqrt(ffma_sq / (double)outputs);
    const double fp32 = std::sqrt((double)p.k + 2.0) * 0x1.0p-24;
    r.limit = arith == TG_ARITH_TF32 ? 0x1.0p-10 + fp32 : std::fmax(fp32, 1.5 * r.ffma);
    return r;
}

Result run_case(const tg_rung &r, const Case &c, unsigned seed)
{
    /* A value no case's data produces: read before its copy lands, it shows in the result
     * even where a NaN would be recomputed away (cuda_runtime.h, emu::poison). */
    emu::poison = r.arith == TG_ARITH_FFMA ? std::nanf("") : 0x1.5p+9f;
    const int64_t m = c.s.m, n = c.s.n, k = c.s.k;
    const Alignment al_a = alignment(c.align, 0), al_b = alignment(c.align, 1),
                    al_c = alignment(c.align, 2);
    tg_problem p{};
    p.m = m, p.n = n, p.k = k, p.alpha = c.alpha, p.beta = c.beta, p.batch = c.batch;
    switch (c.layout) {
    case kNN: case kNT: p.a_cs = 1, p.a_rs = pitch(k, al_a.pitch); break;
    case kTN: case kTT: p.a_rs = 1, p.a_cs = pitch(m, al_a.pitch); break;
    case kGeneral: p.a_cs = 2, p.a_rs = 2 * k + (al_a.pitch ? 3 : 1); break;
    }
    switch (c.layout) {
    case kNN: case kTN: p.b_cs = 1, p.b_rs = pitch(n, al_b.pitch); break;
    case kNT: case kTT: p.b_rs = 1, p.b_cs = pitch(k, al_b.pitch); break;
    case kGeneral: p.b_cs = 2, p.b_rs = 2 * n + (al_b.pitch ? 3 : 1); break;
    }
    p.ldc = pitch(n, al_c.pitch);
    const int64_t span_a = (m - 1) * p.a_rs + (k - 1) * p.a_cs + 1;
    const int64_t span_b = (k - 1) * p.b_rs + (n - 1) * p.b_cs + 1;
    const int64_t span_c = (m - 1) * p.ldc + n;
    p.stride_a = c.share_a ? 0 : pitch(span_a, al_a.stride);
    p.stride_b = pitch(span_b, al_b.stride);
    p.stride_c = pitch(span_c, al_c.stride);
    const int64_t items_a = c.share_a ? 1 : c.batch;
    const float nan = std::nanf("");
    const float sentinel = -12345.5f;
    Buffer A(0, "A", (items_a - 1) * p.stride_a + span_a, al_a.pointer ? 0 : 1, nan);
    Buffer B(1, "B", (c.batch - 1) * p.stride_b + span_b, al_b.pointer ? 0 : 1, nan);
    Buffer C(2, "C", (c.batch - 1) * p.stride_c + span_c, al_c.pointer ? 0 : 1, sentinel);

    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> real(-1.0f, 1.0f), positive(0.0f, 1.0f);
    std::uniform_int_distribution<int> small(-3, 3);
    std::uniform_int_distribution<int> pick(0, 63);
    enum Operand { kA, kB, kC };
    /* kTiny: op(A)(i, q) = u 2^-s(q) and op(B)(q, j) = v 2^(s(q) - 20), s(q) in [100, 137) */
    auto tiny_scale = [](int64_t q) { return 100 + (int)(q * 7 % 37); };
    auto value = [&](Operand x, int64_t q) {
        if (c.data == kSpecial) {
            const int which = pick(rng);
            if (which == 0) return INFINITY;
            if (which == 1) return -INFINITY;
            if (which == 2) return nan;
        }
        for (;;) { /* operands are non-zero, so a dropped term always shows */
            float v = 0.0f;
            switch (c.data) {
            case kInts: v = (float)small(rng); break;
            case kLongSum: v = positive(rng); break;
            case kTiny:
                v = std::ldexp(real(rng), x == kA   ? -tiny_scale(q)
                                          : x == kB ? tiny_scale(q) - 20
                                                    : -20);
                break;
            default: v = real(rng); break;
            }
            if (v != 0.0f)
                return v;
        }
    };
    for (int64_t b = 0; b < items_a; ++b)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t q = 0; q < k; ++q)
                A.view[b * p.stride_a + i * p.a_rs + q * p.a_cs] = value(kA, q);
    for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t q = 0; q < k; ++q)
            for (int64_t j = 0; j < n; ++j)
                B.view[b * p.stride_b + q * p.b_rs + j * p.b_cs] = value(kB, q);
    std::vector<char> inside(C.total, 0);
    for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                float *e = &C.view[b * p.stride_c + i * p.ldc + j];
                *e = c.beta == 0.0f ? nan : value(kC, 0);
                inside[(size_t)(e - C.base)] = 1;
            }
    p.A = A.view, p.B = B.view, p.C = C.view;

    Result res{true, 0.0, ""};
    if (const char *why = r.unsupported ? r.unsupported(&p) : nullptr) {
        res.why = std::string("refused: ") + why;
        return res;
    }
    /* the backend's slicing contract (launch_rung in backend.cu) */
    if (m > 65535 * (int64_t)r.block_rows || c.batch > 65535) {
        fprintf(stderr, "internal: case outside the launch contract\n");
        exit(1);
    }

    const std::vector<float> a0 = A.snapshot(), b0 = B.snapshot(), c0 = C.snapshot();
    std::vector<double> ref((size_t)(m * n * c.batch)), bound(ref.size());
    tg_ref_gemm_f64(&p, C.view, ref.data(), bound.data());

    const long divergent0 = emu::divergent_barriers;
    int rc;
    if (r.workspace_bytes) {
        /* fenced like the operands, and filled with a finite value, so that a read of
         * workspace nothing wrote shows in the result (NaN would only send the outputs to the
         * tensor-core rungs' FMA recompute) */
        const size_t bytes = r.workspace_bytes(&p);
        Buffer workspace(3, "the workspace", (int64_t)(bytes / sizeof(float)), 0, 4097.0f);
        rc = r.launch_with_workspace(&p, nullptr, workspace.view);
    } else {
        rc = r.launch(&p, nullptr);
    }

    auto fail = [&](const std::string &why) {
        res.ok = false;
        res.why += (res.why.empty() ? "" : "; ") + why;
    };
    if (rc != 0)
        fail("launch returned " + std::to_string(rc));
    if (emu::divergent_barriers != divergent0)
        fail("__syncthreads reached by only some threads of a block");
    if (c.data == kSpecial) {
        /* NaN where the reference has NaN, the same infinity where it has one, the rest
         * scaled as usual (on a copy with the special outputs set to the reference's). */
        long mismatched = 0;
        std::vector<float> finite(C.view, C.view + (c.batch - 1) * p.stride_c + span_c);
        for (int64_t b = 0; b < c.batch; ++b)
            for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                    const double want = ref[(size_t)((b * m + i) * n + j)];
                    float &got = finite[(size_t)(b * p.stride_c + i * p.ldc + j)];
                    if (std::isnan(want) || std::isinf(want) || std::isnan(got) ||
                        std::isinf(got)) {
                        mismatched += std::isnan(want) ? !std::isnan(got) : (double)got != want;
                        got = 0.0f;
                        ref[(size_t)((b * m + i) * n + j)] = 0.0;
                    }
                }
        if (mismatched)
            fail(std::to_string(mismatched) + " special value(s) differ from the reference");
        tg_problem q = p;
        q.C = finite.data();
        res.error = tg_scaled_error(&q, finite.data(), ref.data(), bound.data());
    } else {
        res.error = tg_scaled_error(&p, C.view, ref.data(), bound.data());
        if (r.arith == TG_ARITH_TF32 && c.data == kTiny) {
            /* TF32 mode may read FP32 subnormals as zero, as the tensor core does (its direct
             * forms have no pre-pass to catch them): held to the nearer of the two readings */
            std::vector<float> a_flushed = a0, b_flushed = b0;
            for (std::vector<float> *v : {&a_flushed, &b_flushed})
                for (float &x : *v)
                    if (std::fabs(x) < FLT_MIN)
                        x = 0.0f;
            tg_problem q = p;
            q.A = a_flushed.data() + (A.view - A.base);
            q.B = b_flushed.data() + (B.view - B.base);
            std::vector<double> ref_flushed(ref.size()), bound_flushed(ref.size());
            tg_ref_gemm_f64(&q, c0.data() + (C.view - C.base), ref_flushed.data(),
                            bound_flushed.data());
            res.error = std::fmin(res.error, tg_scaled_error(&p, C.view, ref_flushed.data(),
                                                             bound_flushed.data()));
        }
    }
    /* TF32 rungs round their inputs to 11 significant bits instead of 24: their bound is
     * FP32's scaled by 2^13, the ratio of the two unit roundoffs. */
    const double limit = r.arith == TG_ARITH_TF32 ? 8192.0 : 1.0;
    if (!(res.error <= limit)) {
        char buf[64];
        snprintf(buf, sizeof buf, "scaled error %.3g", res.error);
        fail(buf);
    } else if (c.data == kInts && res.error != 0.0) {
        fail("small-integer case not exact");
    }
    if (c.data == kLongSum) {
        const RmsCheck rms = rms_check(p, r.arith, A.view, B.view, C.view, ref, bound);
        res.rms = rms.rms;
        if (!(rms.rms <= rms.limit)) {
            char buf[160];
            snprintf(buf, sizeof buf, "RMS relative error %.3g above %.3g (the FFMA order's: %.3g)",
                     rms.rms, rms.limit, rms.ffma);
            fail(buf);
        }
    }
    long changed = 0;
    int64_t first = -1;
    for (size_t e = 0; e < C.total; ++e)
        if (!inside[e] && memcmp(&C.base[e], &c0[e], sizeof(float)) != 0)
            first = first < 0 ? (int64_t)e : first, ++changed;
    if (changed)
        fail(std::to_string(changed) + " float(s) of C's padding or guards changed (first at " +
             std::to_string(first - (int64_t)(C.view - C.base)) + " from C)");
    if (!A.same_as(a0))
        fail("A changed");
    if (!B.same_as(b0))
        fail("B changed");
    if (!res.ok && m * n * c.batch <= 64) { /* keep the evidence of a small case */
        for (int64_t b = 0; b < c.batch; ++b)
            for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j)
                    fprintf(stderr, "    C[%" PRId64 "](%" PRId64 ",%" PRId64 ") = %.9g, want %.9g\n", b, i, j,
                            (double)C.view[b * p.stride_c + i * p.ldc + j],
                            ref[(size_t)((b * m + i) * n + j)]);
    }
    return res;
}

struct Summary {
    const char *name;
    int cases = 0, passed = 0, failed = 0, refused = 0;
    double worst = 0.0, rms = -1.0; /* rms: the long sum's */
    long vectors = 0;
    double seconds = 0.0;
};

} // namespace

int main(int argc, char **argv)
{
    const char *only = nullptr;
    bool quick = false, verbose = false;
    long only_case = -1;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--rung") && i + 1 < argc) {
            only = argv[++i];
        } else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
            only_case = strtol(argv[++i], nullptr, 10);
        } else if (!strcmp(argv[i], "--quick")) {
            quick = true;
        } else if (!strcmp(argv[i], "--verbose")) {
            verbose = true;
        } else if (!strcmp(argv[i], "--list")) {
            for (int r = 0; r < tg_rung_count; ++r)
                printf("%s\n", tg_rungs[r]->name);
            return tg_rung_count > 0 ? 0 : 1;
        } else if (!strcmp(argv[i], "--model-check")) {
            return emulated_model_check();
        } else if (!strcmp(argv[i], "--feeds")) {
            return emulated_feeds_check();
        } else {
            fprintf(stderr,
                    "usage: %s [--rung NAME] [--quick] [--case N] [--verbose] | --list | "
                    "--model-check | --feeds\n",
                    argv[0]);
            return 1;
        }
    }
    if (tg_rung_count == 0) {
        fprintf(stderr, "test_emulated_rungs: the emulated registry is empty\n");
        return 1;
    }
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
    bool found = only == nullptr;
    std::vector<Summary> table;
    for (int ri = 0; ri < tg_rung_count; ++ri) {
        const tg_rung &r = *tg_rungs[ri];
        if (only && strcmp(only, r.name) != 0)
            continue;
        found = true;
        Summary s;
        s.name = r.name;
        const long vectors0 = emu::vector_casts;
        const auto t0 = std::chrono::steady_clock::now();
        const std::vector<Case> cases = sweep(r, quick);
        for (size_t ci = 0; ci < cases.size(); ++ci) {
            if (only_case >= 0 && (long)ci != only_case)
                continue;
            const Case &c = cases[ci];
            const std::string what = std::string(r.name) + " case " + std::to_string(ci) + ": " +
                                     describe(c);
            emu::context = what.c_str();
            const Result res = run_case(r, c, 1000u + (unsigned)ci);
            ++s.cases;
            /* A refusal is neither a pass nor a failure: counted apart, and a rung that
             * refuses everything fails. */
            if (!res.why.empty() && res.ok)
                ++s.refused;
            else if (!res.ok)
                ++s.failed;
            else
                ++s.passed;
            if (res.error > s.worst || std::isnan(res.error))
                s.worst = res.error;
            if (res.rms >= 0.0)
                s.rms = res.rms;
            if (!res.ok || verbose)
                printf("%-4s %s  (error %.3g)%s%s\n", res.ok ? "ok" : "FAIL", what.c_str(),
                       res.error, res.why.empty() ? "" : "  ", res.why.c_str());
            if (!res.ok)
                printf("     reproduce: %s --rung %s --case %zu%s\n", argv[0], r.name, ci,
                       quick ? " --quick" : "");
            fflush(stdout);
        }
        s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        s.vectors = emu::vector_casts - vectors0;
        table.push_back(s);
    }
    emu::context = "";
    if (!found) {
        fprintf(stderr, "test_emulated_rungs: no rung named %s in the registry\n", only);
        return 1;
    }

    int failed = 0;
    printf("\n%-18s %6s %6s %8s %12s %9s %10s %8s  %s\n", "rung", "cases", "passed", "refused",
           "worst error", "long RMS", "vector ops", "seconds", "result");
    for (const Summary &s : table) {
        const bool none = s.passed == 0 && only_case < 0;
        char rms[16] = "-";
        if (s.rms >= 0.0)
            snprintf(rms, sizeof rms, "%.3g", s.rms);
        printf("%-18s %6d %6d %8d %12.4f %9s %10ld %8.2f  %s\n", s.name, s.cases, s.passed,
               s.refused, s.worst, rms, s.vectors, s.seconds,
               s.failed ? "FAIL" : none ? "FAIL (refused every case)" : "PASS");
        failed += s.failed + (none ? 1 : 0);
    }
    printf("(worst error: scaled against the float64 reference, <= 1 passes; long RMS: the long "
           "sum's RMS relative error; vector ops: checked 8/16-byte casts)\n");
    if (failed) {
        printf("test_emulated_rungs: %d case(s) failed\n", failed);
        return 1;
    }
    printf("test_emulated_rungs: all passed\n");
    return 0;
}
