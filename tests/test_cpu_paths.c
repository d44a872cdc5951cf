/*
 * The CPU paths against the float64 oracle.
 *
 *   test_cpu_paths [--seed N]      exit 0: all passed; 1: a failure (each one printed)
 *
 * tg_cpu_sgemm (the blocked fast path) and tg_ref_sgemm are checked against tg_ref_gemm_f64
 * with tg_scaled_error <= 1 over shapes that miss every tile (MR 6, NR 16, MC 120, KC 320,
 * NC 4080 and the small-problem cut-off), all four transposes written as strides, padded leading
 * dimensions, several alpha/beta pairs and batches.  C is poisoned with NaN wherever beta == 0,
 * and everything outside the m x n results (ldc padding, gaps between batch items) must come
 * back untouched.  Then the BLAS corner rules, and an exact mode in which small-integer inputs
 * make every float sum exact, so the fast path must match the reference bit for bit.
 * Inputs come from a seed printed at the start; rerun with --seed to reproduce a failure.
 */
#define _POSIX_C_SOURCE 200809L

#include "../src/cpu/cpu.h"
#include "testing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

typedef void (*gemm_fn)(const tg_problem *);

static int failures;
static uint64_t base_seed, rng_state;

static uint64_t next_random(void)
{
    /* xorshift64*: plenty for test data, identical on every platform */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static float random_unit(void) /* uniform in [-1, 1) */
{
    return (float)((double)(next_random() >> 40) / (double)(1ULL << 24) * 2.0 - 1.0);
}

static float random_small_int(void) /* -4 .. 4 */
{
    return (float)((int)(next_random() >> 33) % 9 - 4);
}

static void *xcalloc(size_t count, size_t size)
{
    void *ptr = calloc(count ? count : 1, size);
    if (!ptr) {
        fprintf(stderr, "test_cpu_paths: out of memory\n");
        exit(1);
    }
    return ptr;
}

/* One case's description, enough to print a reproducible failure. */
typedef struct shape {
    int64_t m, n, k;
    int trans_a, trans_b;
    int64_t pad; /* added to every leading dimension */
    float alpha, beta;
    int64_t batch;
    int shared_a; /* stride_a = 0 */
    int threads;  /* 0: the default */
    const char *fn_name;
} shape;

static void print_shape(const char *what, const shape *s)
{
    printf("FAIL %s: %s m=%lld n=%lld k=%lld op=%c%c pad=%lld alpha=%g beta=%g batch=%lld%s"
           " threads=%d (--seed %llu)\n",
           what, s->fn_name, (long long)s->m, (long long)s->n, (long long)s->k,
           s->trans_a ? 'T' : 'N', s->trans_b ? 'T' : 'N', (long long)s->pad, (double)s->alpha,
           (double)s->beta, (long long)s->batch, s->shared_a ? " stride_a=0" : "", s->threads,
           (unsigned long long)base_seed);
    ++failures;
}

/* Operands laid out as the shape says, in buffers the case owns. */
typedef struct operands {
    tg_problem p;
    float *A, *B, *C, *C_in;
    size_t a_len, b_len, c_len;
} operands;

static operands make_operands(const shape *s, int small_ints)
{
    operands o;
    memset(&o, 0, sizeof o);
    tg_problem *p = &o.p;
    p->m = s->m, p->n = s->n, p->k = s->k;
    p->alpha = s->alpha, p->beta = s->beta;
    p->batch = s->batch;

    /* op(A) is m x k: stored m x lda (N) or k x lda (T) */
    int64_t lda = (s->trans_a ? s->m : s->k) + s->pad;
    int64_t a_rows = s->trans_a ? s->k : s->m;
    p->a_rs = s->trans_a ? 1 : lda;
    p->a_cs = s->trans_a ? lda : 1;
    int64_t ldb = (s->trans_b ? s->k : s->n) + s->pad;
    int64_t b_rows = s->trans_b ? s->n : s->k;
    p->b_rs = s->trans_b ? 1 : ldb;
    p->b_cs = s->trans_b ? ldb : 1;
    p->ldc = s->n + s->pad;

    /* odd gaps between batch items, so a wrong stride cannot land on valid data */
    p->stride_a = s->shared_a ? 0 : a_rows * lda + 5;
    p->stride_b = b_rows * ldb + 3;
    p->stride_c = s->m * p->ldc + 7;
    o.a_len = (size_t)(s->shared_a ? a_rows * lda : s->batch * p->stride_a);
    o.b_len = (size_t)(s->batch * p->stride_b);
    o.c_len = (size_t)(s->batch * p->stride_c);

    o.A = xcalloc(o.a_len, sizeof(float));
    o.B = xcalloc(o.b_len, sizeof(float));
    o.C = xcalloc(o.c_len, sizeof(float));
    o.C_in = xcalloc(o.c_len, sizeof(float));
    float (*gen)(void) = small_ints ? random_small_int : random_unit;
    for (size_t i = 0; i < o.a_len; ++i)
        o.A[i] = gen();
    for (size_t i = 0; i < o.b_len; ++i)
        o.B[i] = gen();
    /* C: random everywhere (padding included); the results are poisoned when beta == 0 */
    for (size_t i = 0; i < o.c_len; ++i)
        o.C_in[i] = gen();
    if (s->beta == 0.0f)
        for (int64_t b = 0; b < s->batch; ++b)
            for (int64_t i = 0; i < s->m; ++i)
                for (int64_t j = 0; j < s->n; ++j)
                    o.C_in[b * p->stride_c + i * p->ldc + j] = NAN;
    p->A = o.A, p->B = o.B, p->C = o.C;
    return o;
}

static void free_operands(operands *o)
{
    free(o->A);
    free(o->B);
    free(o->C);
    free(o->C_in);
}

static int any_nonzero(const float *x, size_t len)
{
    for (size_t i = 0; i < len; ++i)
        if (x[i] != 0.0f)
            return 1;
    return 0;
}

static int in_result(const tg_problem *p, size_t index)
{
    int64_t b = (int64_t)index / p->stride_c, rest = (int64_t)index % p->stride_c;
    return b < p->batch && rest / p->ldc < p->m && rest % p->ldc < p->n;
}

/* Every element of C outside the results must keep its bits. */
static int padding_untouched(const operands *o, const shape *s)
{
    for (size_t i = 0; i < o->c_len; ++i) {
        if (!in_result(&o->p, i) && memcmp(&o->C[i], &o->C_in[i], sizeof(float)) != 0) {
            print_shape("wrote outside the m x n result", s);
            printf("     first at C[%zu]\n", i);
            return 0;
        }
    }
    return 1;
}

static void set_threads(int threads)
{
#ifdef _OPENMP
    static int default_threads;
    if (!default_threads)
        default_threads = omp_get_max_threads();
    omp_set_num_threads(threads ? threads : default_threads);
#else
    (void)threads;
#endif
}

/* Run fn on fresh operands and judge it against the float64 oracle. */
static void check_tolerance(gemm_fn fn, shape s)
{
    operands o = make_operands(&s, 0);
    if (s.k > 0 && (!any_nonzero(o.A, o.a_len) || !any_nonzero(o.B, o.b_len))) {
        print_shape("inputs are all zero, the test proves nothing", &s);
        free_operands(&o);
        return;
    }
    size_t results = (size_t)(s.batch * s.m * s.n);
    double *ref = xcalloc(results, sizeof(double));
    double *bound = xcalloc(results, sizeof(double));
    tg_ref_gemm_f64(&o.p, o.C_in, ref, bound);

    memcpy(o.C, o.C_in, o.c_len * sizeof(float));
    set_threads(s.threads);
    fn(&o.p);
    set_threads(0);

    double err = tg_scaled_error(&o.p, o.C, ref, bound);
    if (!(err <= 1.0)) {
        print_shape("scaled error", &s);
        printf("     scaled error %g\n", err);
    } else {
        padding_untouched(&o, &s);
    }
    free(ref);
    free(bound);
    free_operands(&o);
}

/* Small integers: exact sums, so the fast path must equal the reference bit for bit. */
static void check_exact(shape s)
{
    s.fn_name = "exact tg_cpu_sgemm vs tg_ref_sgemm";
    operands o = make_operands(&s, 1);
    if (!any_nonzero(o.A, o.a_len) || !any_nonzero(o.B, o.b_len)) {
        print_shape("inputs are all zero, the test proves nothing", &s);
        free_operands(&o);
        return;
    }
    float *want = xcalloc(o.c_len, sizeof(float));
    memcpy(want, o.C_in, o.c_len * sizeof(float));
    o.p.C = want;
    tg_ref_sgemm(&o.p);
    memcpy(o.C, o.C_in, o.c_len * sizeof(float));
    o.p.C = o.C;
    tg_cpu_sgemm(&o.p);
    for (size_t i = 0; i < o.c_len; ++i) {
        if (memcmp(&o.C[i], &want[i], sizeof(float)) != 0) {
            print_shape("not bit-exact", &s);
            printf("     C[%zu] = %.9g, reference %.9g\n", i, (double)o.C[i], (double)want[i]);
            break;
        }
    }
    free(want);
    free_operands(&o);
}

/*
 * alpha == 0 or k == 0 must give beta * C exactly, reading neither A nor B (they hold NaN);
 * beta == 0 must give a NaN-free result from a NaN-filled C.
 */
static void check_corner_rules(gemm_fn fn, const char *fn_name, int64_t m, int64_t n, int64_t k)
{
    static const float betas[] = {0.0f, 1.0f, -0.5f, 2.0f};
    for (int which = 0; which < 2; ++which) {
        for (size_t bi = 0; bi < sizeof betas / sizeof betas[0]; ++bi) {
            shape s = {.m = m, .n = n, .k = which ? 0 : k, .pad = 3, .alpha = which ? 1.5f : 0.0f,
                       .beta = betas[bi], .batch = 2, .fn_name = fn_name};
            operands o = make_operands(&s, 0);
            for (size_t i = 0; i < o.a_len; ++i)
                o.A[i] = NAN;
            for (size_t i = 0; i < o.b_len; ++i)
                o.B[i] = NAN;
            memcpy(o.C, o.C_in, o.c_len * sizeof(float));
            fn(&o.p);
            for (size_t i = 0; i < o.c_len; ++i) {
                if (!in_result(&o.p, i))
                    continue;
                float want = s.beta == 0.0f ? 0.0f : s.beta * o.C_in[i];
                if (memcmp(&o.C[i], &want, sizeof want) != 0) {
                    print_shape(which ? "k = 0 is not beta * C" : "alpha = 0 is not beta * C", &s);
                    printf("     C[%zu] = %g, want %g\n", i, (double)o.C[i], (double)want);
                    break;
                }
            }
            padding_untouched(&o, &s);
            free_operands(&o);
        }
    }

    /* beta == 0 with NaN in C: make_operands has already poisoned every result */
    shape s = {.m = m, .n = n, .k = k, .pad = 3, .alpha = 1.0f, .beta = 0.0f, .batch = 1,
               .fn_name = fn_name};
    operands o = make_operands(&s, 0);
    memcpy(o.C, o.C_in, o.c_len * sizeof(float));
    fn(&o.p);
    for (size_t i = 0; i < o.c_len; ++i) {
        if (in_result(&o.p, i) && isnan(o.C[i])) {
            print_shape("beta = 0 let NaN from C through", &s);
            break;
        }
    }
    free_operands(&o);
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL);
    for (int i = 1; i < argc; ++i) {
        if (!tg_test_seed_arg(argc, argv, &i, 10, &seed)) {
            fprintf(stderr, "usage: test_cpu_paths [--seed N]\n");
            return 2;
        }
    }
    base_seed = seed;
    rng_state = seed ? seed : 1;
    printf("test_cpu_paths --seed %llu\n", (unsigned long long)seed);

    static const struct { float alpha, beta; } scalars[] = {
        {1.0f, 0.0f}, {1.5f, -0.5f}, {0.0f, 2.0f}, {-1.0f, 1.0f}};
    static const struct { int64_t batch; int shared_a; } batches[] = {{1, 0}, {3, 0}, {3, 1}};
    static const int64_t dims[] = {1, 7, 33, 127, 130};
    const int n_dims = sizeof dims / sizeof dims[0];
    int cases = 0;

    /* every shape of the cube, with each transpose and alpha/beta pair, batches in rotation */
    for (int mi = 0; mi < n_dims; ++mi)
        for (int ni = 0; ni < n_dims; ++ni)
            for (int ki = 0; ki < n_dims; ++ki)
                for (int t = 0; t < 4; ++t)
                    for (int ab = 0; ab < 4; ++ab, ++cases) {
                        shape s = {.m = dims[mi], .n = dims[ni], .k = dims[ki],
                                   .trans_a = t & 1, .trans_b = t >> 1, .pad = 3,
                                   .alpha = scalars[ab].alpha, .beta = scalars[ab].beta,
                                   .batch = batches[cases % 3].batch,
                                   .shared_a = batches[cases % 3].shared_a};
                        s.fn_name = "tg_cpu_sgemm";
                        check_tolerance(tg_cpu_sgemm, s);
                        /* the reference itself, on a quarter of the cases to save time */
                        if (cases % 4 == 0) {
                            s.fn_name = "tg_ref_sgemm";
                            check_tolerance(tg_ref_sgemm, s);
                        }
                    }

    /*
     * Long thin products and the block edges: k past KC (beta applied once across k blocks),
     * n past NC (two column blocks), m past MC, and row counts below one micro-panel per
     * thread (the column-slicing split), some on an odd thread count.
     */
    static const struct { int64_t m, n, k; int threads; } thin[] = {
        {1, 4097, 3, 0},   {4097, 1, 5, 0},  {3, 5, 4097, 0},  {130, 127, 1, 0},
        {33, 4097, 1, 0},  {1, 4097, 9, 0},  {5, 300, 40, 0},  {7, 4099, 5, 0},
        {300, 20, 515, 0}, {145, 17, 321, 0}, {290, 33, 7, 3},  {5, 300, 40, 3},
        {13, 4100, 9, 3},  {127, 130, 300, 3}, {150, 40, 513, 1},
    };
    for (size_t i = 0; i < sizeof thin / sizeof thin[0]; ++i)
        for (int t = 0; t < 4; ++t, ++cases) {
            shape s = {.m = thin[i].m, .n = thin[i].n, .k = thin[i].k, .trans_a = t & 1,
                       .trans_b = t >> 1, .pad = 3, .alpha = scalars[t].alpha,
                       .beta = scalars[t].beta, .batch = t == 3 ? 3 : 1,
                       .shared_a = t == 3, .threads = thin[i].threads,
                       .fn_name = "tg_cpu_sgemm"};
            if (s.alpha == 0.0f) /* keep the product in play for these shapes */
                s.alpha = 0.75f;
            check_tolerance(tg_cpu_sgemm, s);
        }

    check_corner_rules(tg_cpu_sgemm, "tg_cpu_sgemm", 7, 9, 5);
    check_corner_rules(tg_cpu_sgemm, "tg_cpu_sgemm", 130, 127, 300);
    check_corner_rules(tg_ref_sgemm, "tg_ref_sgemm", 7, 9, 5);
    check_corner_rules(tg_ref_sgemm, "tg_ref_sgemm", 33, 31, 40);

    static const struct { int64_t m, n, k; } exact[] = {
        {1, 1, 1}, {7, 33, 127}, {130, 127, 33}, {127, 130, 600}, {3, 5, 4097}, {145, 4099, 3},
        {64, 64, 64},
    };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; ++i)
        for (int t = 0; t < 4; ++t, ++cases)
            check_exact((shape){.m = exact[i].m, .n = exact[i].n, .k = exact[i].k,
                                .trans_a = t & 1, .trans_b = t >> 1, .pad = 3, .alpha = 1.0f,
                                .beta = (float)(t & 1), .batch = t == 2 ? 3 : 1,
                                .shared_a = 0});

    if (failures) {
        printf("test_cpu_paths: %d failure(s) in %d cases (--seed %llu)\n", failures, cases,
               (unsigned long long)seed);
        return 1;
    }
    printf("test_cpu_paths: all %d cases passed\n", cases);
    return 0;
}
