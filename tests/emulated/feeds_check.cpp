/* test_emulated_rungs --feeds: which operands rung 9 writes as TF32 planes, read off the
 * workspace it asks for.  Its kernel's own sums are checked by emulated_tma_wgmma*; this pins
 * down what the pre-pass costs: TF32 mode reads both operands in place wherever the TMA can
 * (no workspace at all), and 3xTF32 writes planes of one operand only (the TMA or the
 * producer's copies read the other in place), so a change that sends
 * those calls back through planes of both fails here rather than only in the benchmark. */
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "cuda/registry.h"
#include "plan/split_k.h"

namespace {

const tg_rung *rung_named(const char *name)
{
    for (int i = 0; i < tg_rung_count; ++i)
        if (!strcmp(tg_rungs[i]->name, name))
            return tg_rungs[i];
    return nullptr;
}

/* Row-major storage, as the backend hands problems down: op(A) m x k, op(B) k x n, each
 * transposed or not, leading dimensions `ld` wider than the matrix by `pad`.  The operands
 * are never read (workspace_bytes only looks at strides and alignment), so they point at
 * 16-byte aligned addresses, or one float past one when `misaligned`. */
tg_problem problem(int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b, int64_t pad,
                   bool misaligned)
{
    tg_problem p{};
    p.m = m, p.n = n, p.k = k, p.alpha = 1.0f, p.batch = 1;
    const uintptr_t base = (uintptr_t)1 << 20;
    p.A = reinterpret_cast<const float *>(base + (misaligned ? 4 : 0));
    p.B = reinterpret_cast<const float *>(base + (misaligned ? 4 : 0));
    const int64_t lda = (trans_a ? m : k) + pad, ldb = (trans_b ? k : n) + pad;
    p.a_rs = trans_a ? 1 : lda, p.a_cs = trans_a ? lda : 1;
    p.b_rs = trans_b ? 1 : ldb, p.b_cs = trans_b ? ldb : 1;
    p.ldc = n;
    return p;
}

/* p with op(A) (k-contiguous) `lda` floats apart, or starting one float past 16 bytes. */
tg_problem with_lda(tg_problem p, int64_t lda)
{
    p.a_rs = lda;
    return p;
}
tg_problem with_a_offset(tg_problem p)
{
    p.A += 1;
    return p;
}

/* Split-K's first launch for p in two slices: a batch of two items a slice of k apart. */
tg_problem sliced(const tg_problem &p)
{
    tg_split_k split;
    tg_split_k_make(&p, 2, reinterpret_cast<float *>((uintptr_t)1 << 24), &split);
    return split.full;
}

} // namespace

int emulated_feeds_check()
{
    const tg_rung *tf32 = rung_named("tma_wgmmatf32"), *split = rung_named("tma_wgmma3xtf32");
    if (!tf32 || !split) {
        fprintf(stderr, "feeds: rung 9 is not in the registry\n");
        return 1;
    }
    /* k a multiple of 32 (no padding of the planes), and planes of both small enough for one
     * chunk of the emulated build's 96 KiB budget (TG_PLANE_BUDGET) */
    const int64_t m = 48, n = 32, k = 64;
    const size_t plane = (size_t)k * sizeof(float); /* one row of one part */
    struct Case {
        const char *what;
        const tg_rung *rung;
        tg_problem p;
        size_t bytes;
    };
    const Case cases[] = {
        {"TF32, op(A) k-contiguous, op(B) columns contiguous (turned): in place",
         tf32, problem(m, n, k, false, false, 4, false), 0},
        {"TF32, op(A) rows contiguous, op(B) k-contiguous: in place",
         tf32, problem(m, n, k, true, true, 4, false), 0},
        {"TF32, op(A) and op(B) k-contiguous: in place", tf32, problem(m, n, k, false, true, 0, false), 0},
        {"TF32, op(A) and op(B) rows contiguous: planes of both",
         tf32, problem(m, n, k, true, false, 0, false), (m + n) * plane},
        {"TF32, odd leading dimensions: planes of both",
         tf32, problem(m, n, k, false, false, 1, false), (m + n) * plane},
        {"TF32, a misaligned start: planes of both",
         tf32, problem(m, n, k, false, true, 0, true), (m + n) * plane},
        {"3xTF32, op(A) k-contiguous, m > n: B's two planes only",
         split, problem(m, n, k, false, false, 4, false), 2 * n * plane},
        {"3xTF32, op(A) rows contiguous: B's two planes only",
         split, problem(m, n, k, true, false, 0, false), 2 * n * plane},
        {"3xTF32, op(B) the wider and in place (turned): A's two planes only",
         split, problem(n, m, k, false, false, 4, false), 2 * n * plane},
        /* the TMA cannot read A: the producer copies it, with no planes of it */
        {"3xTF32, odd leading dimensions: B's two planes only (A copied)",
         split, problem(m, n, k, false, false, 1, false), 2 * n * plane},
        {"3xTF32, a misaligned start: B's two planes only (A copied)",
         split, problem(m, n, k, true, true, 0, true), 2 * n * plane},
        {"3xTF32, odd leading dimensions, op(B) the wider: turned, A's two planes only",
         split, problem(n, m, k, true, false, 1, false), 2 * n * plane},
        /* only the shorter side's operand readable: the longer copied, planes of the shorter */
        {"3xTF32, m = 3n, A's leading dimension odd: A copied, B's two planes only",
         split, with_lda(problem(3 * n, n, k, false, false, 0, false), k + 1), 2 * n * plane},
        {"3xTF32, m = 3n, A's start off 16 bytes: A copied, B's two planes only",
         split, with_a_offset(problem(3 * n, n, k, true, false, 0, false)), 2 * n * plane},
        {"3xTF32, m = 1.5n, A's leading dimension odd: turned, A's two planes (the TMA)",
         split, with_lda(problem(m, n, k, false, false, 0, false), k + 1), 2 * m * plane},
        /* split-K's slices overlap in memory, and the TMA still reads them in place */
        {"TF32 in two k-slices, op(A) and op(B) k-contiguous: in place",
         tf32, sliced(problem(m, n, k, false, true, 0, false)), 0},
        {"TF32 in two k-slices, op(A) rows contiguous, op(B) k-contiguous: in place",
         tf32, sliced(problem(m, n, k, true, true, 4, false)), 0},
        {"3xTF32 in two k-slices, op(A) k-contiguous: B's two planes (each slice's) only",
         split, sliced(problem(m, n, k, false, false, 4, false)), 2 * n * plane},
        {"3xTF32 in two k-slices, op(A) rows contiguous: B's two planes only",
         split, sliced(problem(m, n, k, true, false, 0, false)), 2 * n * plane},
    };
    int failed = 0;
    for (const Case &c : cases) {
        const size_t got = c.rung->workspace_bytes(&c.p);
        const bool ok = got == c.bytes;
        failed += !ok;
        printf("%-4s %-72s %zu bytes%s\n", ok ? "ok" : "FAIL", c.what, got,
               ok ? "" : " (expected other)");
        if (!ok)
            printf("     expected %zu bytes\n", c.bytes);
    }
    printf("feeds: %d of %zu cases as expected\n", (int)(sizeof cases / sizeof cases[0]) - failed,
           sizeof cases / sizeof cases[0]);
    return failed ? 1 : 0;
}
