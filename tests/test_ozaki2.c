/*
 * Ozaki scheme II on the CPU (src/ozaki/ozaki2.h): the moduli and their arithmetic, then the
 * whole scheme (INT8 residues, INT32 sums, the CRT) against the float64 reference on the data
 * classes the INT8 rung must pass: uniform, rows and columns scaled over 2^-60..2^60, elements
 * spread over 2^-10..2^10, 2^-16..2^16 and 2^-60..2^60 within a row, cancelling sums, subnormal
 * rows, Inf and NaN; every layout and transpose, padded leading dimensions, alpha and beta
 * (beta = 0 over a C of NaN), batches, k = 1024 to 16384 and a k past the INT32 chunk.  Each
 * result must be within the project's k-scaled bound (tg_scaled_error <= 1), with bits and
 * moduli chosen from the data (8 moduli on uniform, line-scaled, cancelling, subnormal and
 * narrow data, the floor setting the bits; the bound where elements spread over
 * 2^-16..2^16; no product of leading magnitudes on narrow data), then raised to all the moduli
 * carry (on data spread over 2^-10..2^10, enough to cut the RMS error against the least bits;
 * the result the scheme's at its bits, C_hat summed exactly); a fixed 5 moduli must break
 * that bound on data that needs more; the lines left to FMA as accurate as float64's product
 * rounded to float.  Prints the moduli, INT8 products and the RMS error.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "internal.h"
#include "ozaki/ozaki2.h"
#include "testing.h"

static uint64_t next(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 11;
}

/* Uniform in [-1, 1), full 24-bit mantissas. */
static float uniform(uint64_t *state) { return (float)((double)next(state) / 0x1p53 * 2.0 - 1.0); }

enum data {
    kUniform,      /* [-1, 1) */
    kScaledLines,  /* each row of op(A) times 2^u, u in [-60, 60], each column of op(B) in
                    * [-40, 40] (so that no sum passes FLT_MAX) */
    kSpread10,     /* each element times 2^u, u in [-10, 10] */
    kSpread16,     /* each element times 2^u, u in [-16, 16]: bits set by the bound */
    kSpread60,     /* op(A)'s elements times 2^u, u in [-60, 60] (op(B)'s in [-40, 40]): more
                    * than 16 moduli can carry */
    kCancelling,   /* op(A)'s row pairs x, -x against equal rows of op(B): sums near 0 */
    kSubnormal,    /* half the rows of op(A) subnormal, the others normal */
    kSpecial,      /* an Inf in one row of op(A), a NaN in one column of op(B) */
    kNarrow,       /* magnitudes in [1/2, 1): no line's range asks more than the floor */
};
static const char *const kDataName[] = {"uniform",    "scaled lines", "spread 2^10",
                                        "spread 2^16", "spread 2^60", "cancelling",
                                        "subnormal",  "special",      "narrow"};

/* The scaling classes on one line of `count` floats `step` apart: the whole line times 2^u
 * (kScaledLines), or each element (kSpread10, kSpread16; kSpread60 within +-widest), u
 * uniform. */
static void spread_line(float *x, int64_t count, int64_t step, enum data data, int widest,
                        uint64_t *seed)
{
    const int line_shift = (int)(next(seed) % (uint64_t)(2 * widest + 1)) - widest;
    for (int64_t q = 0; q < count; ++q) {
        float *v = &x[q * step];
        if (data == kScaledLines)
            *v = ldexpf(*v, line_shift);
        else if (data == kSpread10 || data == kSpread16)
            *v = ldexpf(*v, (int)(next(seed) % (data == kSpread10 ? 21 : 33)) -
                                (data == kSpread10 ? 10 : 16));
        else if (data == kSpread60)
            *v = ldexpf(*v, (int)(next(seed) % (uint64_t)(2 * widest + 1)) - widest);
        else if (data == kNarrow)
            *v = copysignf(0.5f + 0.5f * fabsf(*v), *v);
    }
}

typedef struct shape {
    tg_layout layout;
    tg_op ta, tb;
    int64_t m, n, k, batch;
    float alpha, beta;
} shape;

/* The scheme's C for one batch item at the given bits, C_hat summed exactly in 128 bits (what
 * the CRT rebuilds wherever the moduli carry it), alpha and beta as ozaki2.c applies them, into
 * out (m x n, row i at i * n); outputs of a line the scheme leaves keep out's values. */
static void scheme_at_bits(const tg_problem *p, const float *c_in, int bits_a, int bits_b,
                           float *out)
{
    const int64_t m = p->m, n = p->n, k = p->k;
    const int cap = tg_oz2_range_for_moduli(TG_OZ2_MAX_MODULI, k);
    int64_t *a_hat = malloc(sizeof(int64_t) * (size_t)(m * k));
    int64_t *b_hat = malloc(sizeof(int64_t) * (size_t)(k * n));
    int *shift_a = malloc(sizeof(int) * (size_t)m), *shift_b = malloc(sizeof(int) * (size_t)n);
    int *take_a = malloc(sizeof(int) * (size_t)m), *take_b = malloc(sizeof(int) * (size_t)n);
    for (int side = 0; side < 2; ++side)
        for (int64_t r = 0; r < (side ? n : m); ++r) {
            const float *x = side ? p->B + r * p->b_cs : p->A + r * p->a_rs;
            const int64_t step = side ? p->b_rs : p->a_cs;
            tg_oz2_line l = {0, 0, 0, 0};
            for (int64_t q = 0; q < k; ++q)
                tg_oz2_line_add(&l, x[q * step]);
            const int shift = l.nonzero ? (side ? bits_b : bits_a) - l.e_max : 0;
            (side ? take_b : take_a)[r] = tg_oz2_line_taken(&l, cap);
            (side ? shift_b : shift_a)[r] = shift;
            for (int64_t q = 0; q < k; ++q)
                (side ? b_hat : a_hat)[r * k + q] = llrint(ldexp((double)x[q * step], shift));
        }
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            if (!take_a[i] || !take_b[j])
                continue;
            tg_oz2_i128 c_hat = 0;
            for (int64_t q = 0; q < k; ++q)
                c_hat += (tg_oz2_i128)a_hat[i * k + q] * b_hat[j * k + q];
            const double value =
                ldexp((double)c_hat, -(shift_a[i] + shift_b[j])) * (double)p->alpha;
            const double c = (double)c_in[i * p->ldc + j];
            out[i * n + j] = (float)(p->beta != 0.0f ? value + (double)p->beta * c : value);
        }
    free(a_hat), free(b_hat), free(shift_a), free(shift_b), free(take_a), free(take_b);
}

/* RMS of got's error (m x n, row i at i * ld) against ref, relative to ref's RMS. */
static double relative_rms(const float *got, int64_t ld, const double *ref, int64_t m, int64_t n)
{
    double err = 0.0, size = 0.0;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            err += pow((double)got[i * ld + j] - ref[i * n + j], 2);
            size += ref[i * n + j] * ref[i * n + j];
        }
    return sqrt(err / size);
}

/* Runs the scheme on one case and checks it; returns the worst scaled error (inf: a special
 * value mismatch or a failure), and the plan in *plan; where rms is not NULL (one batch item),
 * the RMS error relative to C's RMS, of the result (rms[0]), of float64's product rounded to
 * float (rms[1], what any float result has) and of the scheme at the least bits the plan
 * allowed (rms[2]: the guarantee's or the floor's, before the moduli's spare bits were taken);
 * the result must then be the scheme's at the plan's bits, bit for bit. */
static double run_case(const shape *s, enum data data, int forced, uint64_t seed,
                       tg_oz2_plan *plan, double *rms)
{
    const int64_t pad = 3;
    const int row = s->layout == TG_ROW_MAJOR;
    const int64_t lda = tg_min_ld(s->layout, s->ta, s->m, s->k) + pad;
    const int64_t ldb = tg_min_ld(s->layout, s->tb, s->k, s->n) + pad;
    const int64_t ldc = tg_min_ld(s->layout, TG_NO_TRANS, s->m, s->n) + pad;
    const int64_t a_lines = (row != (s->ta == TG_TRANS)) ? s->m : s->k;
    const int64_t b_lines = (row != (s->tb == TG_TRANS)) ? s->k : s->n;
    const int64_t c_lines = row ? s->m : s->n;
    const int64_t sa = a_lines * lda, sb = b_lines * ldb, sc = c_lines * ldc;
    float *A = malloc(sizeof(float) * (size_t)(sa * s->batch));
    float *B = malloc(sizeof(float) * (size_t)(sb * s->batch));
    float *C = malloc(sizeof(float) * (size_t)(sc * s->batch));
    float *C_in = malloc(sizeof(float) * (size_t)(sc * s->batch));
    double *ref = malloc(sizeof(double) * (size_t)(s->m * s->n * s->batch));
    double *bound = malloc(sizeof(double) * (size_t)(s->m * s->n * s->batch));
    float *C_fma = malloc(sizeof(float) * (size_t)(sc * s->batch));
    for (int64_t e = 0; e < sa * s->batch; ++e)
        A[e] = uniform(&seed);
    for (int64_t e = 0; e < sb * s->batch; ++e)
        B[e] = uniform(&seed);
    for (int64_t e = 0; e < sc * s->batch; ++e)
        C_in[e] = s->beta != 0.0f ? uniform(&seed) : NAN; /* beta = 0 must not read it */
    memcpy(C, C_in, sizeof(float) * (size_t)(sc * s->batch));

    const tg_call call = {.layout = s->layout, .transa = s->ta, .transb = s->tb, .m = s->m,
                          .n = s->n, .k = s->k, .alpha = s->alpha, .beta = s->beta, .A = A,
                          .lda = lda, .stride_a = sa, .B = B, .ldb = ldb, .stride_b = sb, .C = C,
                          .ldc = ldc, .stride_c = sc, .batch = s->batch, .batched = 1};
    tg_problem p;
    tg_normalize(&call, &p);
    /* Shape the data along op(A)'s rows and op(B)'s columns, the lines the scheme scales. */
    for (int64_t bi = 0; bi < s->batch; ++bi) {
        /* the normalized operands: a column-major call swaps the caller's A and B */
        float *a = (float *)p.A + bi * p.stride_a, *b = (float *)p.B + bi * p.stride_b;
        for (int64_t i = 0; i < p.m; ++i) {
            float *row = a + i * p.a_rs;
            spread_line(row, p.k, p.a_cs, data, 60, &seed);
            for (int64_t q = 0; q < p.k && i % 2; ++q) {
                if (data == kCancelling)
                    row[q * p.a_cs] = -row[q * p.a_cs - p.a_rs];
                if (data == kSubnormal) /* 2^-131 and below: subnormal floats */
                    row[q * p.a_cs] = ldexpf(row[q * p.a_cs], -130);
            }
        }
        for (int64_t j = 0; j < p.n; ++j)
            spread_line(b + j * p.b_cs, p.k, p.b_rs, data, 40, &seed);
        if (data == kSpecial) {
            a[(p.m / 2) * p.a_rs + (p.k / 3) * p.a_cs] = INFINITY;
            b[(p.k / 2) * p.b_rs + (p.n / 3) * p.b_cs] = NAN;
        }
    }

    const int rc = tg_oz2_gemm_emulated(&p, forced, plan);
    EXPECT(rc == 0, "emulation failed to allocate");
    double worst = 0.0;
    for (int64_t bi = 0; bi < s->batch; ++bi) {
        tg_problem item = p;
        item.A += bi * p.stride_a, item.B += bi * p.stride_b, item.C += bi * p.stride_c;
        item.batch = 1;
        const float *c_in = C_in + bi * sc;
        tg_ref_gemm_f64(&item, c_in, ref, bound);
        if (data == kSpecial) {
            /* Special values: the classes an FMA product gives (tg_ref_sgemm, one float
             * rounding of a float64 sum, has the same classes), and the bound elsewhere. */
            memcpy(C_fma + bi * sc, c_in, sizeof(float) * (size_t)sc);
            tg_problem fma = item;
            fma.C = C_fma + bi * sc;
            tg_ref_sgemm(&fma);
            for (int64_t i = 0; i < p.m; ++i)
                for (int64_t j = 0; j < p.n; ++j) {
                    const float got = item.C[i * p.ldc + j], want = fma.C[i * p.ldc + j];
                    if (isnan(want) || isinf(want)) {
                        if (!(isnan(got) == isnan(want) && (isnan(want) || got == want)))
                            worst = INFINITY;
                        continue;
                    }
                    if (!isfinite(got)) {
                        worst = INFINITY;
                        continue;
                    }
                    const double err = fabs((double)got - ref[i * p.n + j]) /
                                       ((double)(p.k + 2) * FLT_EPSILON *
                                        fmax(bound[i * p.n + j], FLT_MIN));
                    worst = err > worst ? err : worst;
                }
            continue;
        }
        const double e = tg_scaled_error(&item, item.C, ref, bound);
        worst = e > worst ? e : worst;
        if (rms) {
            float *alike = malloc(sizeof(float) * (size_t)(p.m * p.n));
            for (int64_t i = 0; i < p.m; ++i)
                for (int64_t j = 0; j < p.n; ++j)
                    alike[i * p.n + j] = (float)ref[i * p.n + j];
            rms[0] = relative_rms(item.C, p.ldc, ref, p.m, p.n);
            rms[1] = relative_rms(alike, p.n, ref, p.m, p.n);
            for (int64_t i = 0; i < p.m; ++i) /* outputs left to FMA: the same either way */
                memcpy(alike + i * p.n, item.C + i * p.ldc, sizeof(float) * (size_t)p.n);
            scheme_at_bits(&item, c_in, plan->bits_a, plan->bits_b, alike);
            long differ = 0;
            for (int64_t i = 0; i < p.m; ++i)
                differ += memcmp(alike + i * p.n, item.C + i * p.ldc,
                                 sizeof(float) * (size_t)p.n) != 0;
            EXPECT(differ == 0, "%ld rows differ from the scheme at bits %d/%d summed exactly: "
                   "the moduli do not carry the bits", differ, plan->bits_a, plan->bits_b);
            const int floor_bits = tg_oz2_floor_bits(p.k);
            scheme_at_bits(&item, c_in, plan->need_a > floor_bits ? plan->need_a : floor_bits,
                           plan->need_b > floor_bits ? plan->need_b : floor_bits, alike);
            rms[2] = relative_rms(alike, p.n, ref, p.m, p.n);
            free(alike);
        }
    }
    /* Nothing outside C's elements changed: the padding keeps its old values. */
    for (int64_t bi = 0; bi < s->batch; ++bi)
        for (int64_t line = 0; line < c_lines; ++line)
            for (int64_t e = (row ? s->n : s->m); e < ldc; ++e)
                if (memcmp(&C[bi * sc + line * ldc + e], &C_in[bi * sc + line * ldc + e],
                           sizeof(float)) != 0)
                    worst = INFINITY;
    free(A), free(B), free(C), free(C_in), free(ref), free(bound), free(C_fma);
    return worst;
}

static void check_moduli(void)
{
    for (int a = 0; a < TG_OZ2_MAX_MODULI; ++a) {
        EXPECT(tg_oz2_moduli[a] >= 2 && tg_oz2_moduli[a] <= 256, "modulus %d", tg_oz2_moduli[a]);
        for (int b = a + 1; b < TG_OZ2_MAX_MODULI; ++b) {
            int x = tg_oz2_moduli[a], y = tg_oz2_moduli[b];
            while (y) {
                const int t = x % y;
                x = y, y = t;
            }
            EXPECT(x == 1, "moduli %d and %d share %d", tg_oz2_moduli[a], tg_oz2_moduli[b], x);
        }
    }
    EXPECT(tg_oz2_log2_product(TG_OZ2_MAX_MODULI) < 127.0, "the product must fit 127 bits");
    for (int m = 2; m <= 256; ++m)
        for (int64_t x = -70000; x <= 70000; x += 37) {
            const int r = tg_oz2_residue(x, m);
            EXPECT(r >= -128 && r <= 127 && ((x - r) % m) == 0, "residue of %lld mod %d: %d",
                   (long long)x, m, r);
        }
    /* ceil(sqrt(x)) exactly, squares and their neighbours up to 2^126 */
    uint64_t seed = 5;
    for (int t = 0; t < 2000; ++t) {
        const uint64_t r = next(&seed) >> (t % 53);
        const tg_oz2_u128 sq = (tg_oz2_u128)r * r;
        EXPECT(tg_oz2_ceil_sqrt(sq) == r && tg_oz2_ceil_sqrt(sq + 1) == r + 1 &&
                   (r < 2 || tg_oz2_ceil_sqrt(sq - 1) == r),
               "ceil sqrt around %llu^2", (unsigned long long)r);
    }
    EXPECT(tg_oz2_moduli_for(0, 100) == 1 && tg_oz2_moduli_for(255, 0) == 1 &&
               tg_oz2_moduli_for(256, 0) == 2 && tg_oz2_moduli_for(511, -1) == 1 &&
               tg_oz2_moduli_for(1, 127) == TG_OZ2_MAX_MODULI + 1,
           "tg_oz2_moduli_for at its edges");
    /* The bits a count carries (tg_oz2_take_carried_bits): the count stays, one bit more would
     * not fit it (or both are at 62), neither operand loses a bit, and one that rises ends at
     * most level with the other (A a bit above). */
    for (int t = 0; t < 20000; ++t) {
        const uint64_t w = t % 97 == 0 ? 0 : next(&seed) >> (next(&seed) % 53);
        const int a0 = 7 + (int)(next(&seed) % 40), b0 = 7 + (int)(next(&seed) % 40);
        const int count = tg_oz2_moduli_for(w, a0 + b0 - 13);
        if (count > TG_OZ2_MAX_MODULI)
            continue;
        int a = a0, b = b0;
        tg_oz2_take_carried_bits(w, count, &a, &b);
        EXPECT(a >= a0 && b >= b0 && a <= 62 && b <= 62 &&
                   tg_oz2_moduli_for(w, a + b - 13) == count &&
                   (a + b == 124 || tg_oz2_moduli_for(w, a + b + 1 - 13) > count) &&
                   (a == a0 || a <= b + 1) && (b == b0 || b <= a),
               "w %llu, %d moduli for bits %d/%d: %d/%d", (unsigned long long)w, count, a0, b0,
               a, b);
    }
    /* More range or more k never needs fewer bits or moduli. */
    for (int64_t k = 1; k <= (1 << 20); k *= 4) {
        int last_bits = 0, last_moduli = 0;
        for (int range = 0; range < 40; ++range) {
            const int bits = tg_oz2_bits_for_range(range, k);
            const int moduli = tg_oz2_moduli_needed(k, bits, bits);
            EXPECT(bits >= last_bits && moduli >= last_moduli, "k %lld range %d", (long long)k,
                   range);
            last_bits = bits, last_moduli = moduli;
        }
        /* the exact count against log2 of the products, away from their edges */
        for (int bits = 0; bits <= 120; bits += 7) {
            const double need = 1.0 + log2((double)k) + bits;
            int by_log = 1;
            while (by_log <= TG_OZ2_MAX_MODULI && tg_oz2_log2_product(by_log) <= need)
                ++by_log;
            const int exact = tg_oz2_moduli_needed(k, bits, 0);
            EXPECT(exact == by_log || fabs(tg_oz2_log2_product(exact) - need) < 1e-9,
                   "k %lld bits %d: %d moduli, by log2 %d", (long long)k, bits, exact, by_log);
        }
        const int cap = tg_oz2_range_for_moduli(TG_OZ2_MAX_MODULI, k);
        EXPECT(cap > 0, "k %lld: no range fits 16 moduli", (long long)k);
        const int bits = tg_oz2_bits_for_range(cap, k);
        EXPECT(tg_oz2_moduli_needed(k, bits, bits) <= TG_OZ2_MAX_MODULI, "k %lld", (long long)k);
    }
}

/* C_hat as ozaki2.c rebuilds it: sum of ((r_l inv_l) mod m_l) (M / m_l), reduced mod M as it
 * goes, centred (x > M / 2 goes to x - M). */
static tg_oz2_i128 crt_reference(const int32_t *products, int count)
{
    tg_oz2_u128 big_m = 1, x = 0;
    for (int l = 0; l < count; ++l)
        big_m *= (tg_oz2_u128)tg_oz2_moduli[l];
    for (int l = 0; l < count; ++l) {
        const int mod = tg_oz2_moduli[l];
        const tg_oz2_u128 cofactor = big_m / (tg_oz2_u128)mod;
        int inverse = 1;
        for (int y = 1; y < mod; ++y)
            if ((int)(cofactor % (tg_oz2_u128)mod) * y % mod == 1) {
                inverse = y;
                break;
            }
        const int r = (products[l] % mod + mod) % mod;
        x += (tg_oz2_u128)(r * inverse % mod) * cofactor;
        if (x >= big_m)
            x -= big_m;
    }
    return x > big_m / 2 ? -(tg_oz2_i128)(big_m - x) : (tg_oz2_i128)x;
}

static tg_oz2_u128 next128(uint64_t *state)
{
    return (tg_oz2_u128)next(state) << 75 ^ (tg_oz2_u128)next(state) << 30 ^ next(state);
}

/* The INT8 rung's CRT (tg_oz2_crt_*) against the 128-bit one and the integer itself, for every
 * count of moduli: C_hat at 0, +-1, the ends of [h + 1 - M, h], where its estimate of q is
 * closest to wrong (C_hat / M within 2^-19 of +-1/2), near +-2^32, 2^63, 2^64, 2^96, and at
 * random over the range, both uniform and log-uniform; each residue as INT32 products give it,
 * any integer of its class (small, random, near INT32's ends). */
/* tg_oz2_bound_bits (through tg_oz2_align and tg_oz2_bound_bits_aligned) against its
 * definition: the least b with 5 other 2^(28 - scale - b) <= k product, found by walking the
 * power of two in 128-bit integers; products and sums at and beside powers of two, and random. */
static int bound_bits_by_definition(int64_t k, int32_t product, int scale, int64_t other)
{
    if (other == 0)
        return 0;
    if (product <= 0)
        return TG_OZ2_NO_BOUND;
    const tg_oz2_u128 x = 5 * (tg_oz2_u128)other, y = (tg_oz2_u128)k * (tg_oz2_u128)product;
    int d = -64; /* x 2^-64 <= y: y >= 1 and x < 2^64; shifts of 64 stay in 128 bits */
    for (int t = -64; t <= 64; ++t) {
        const int holds = t >= 0 ? (x << t) <= y : x <= (y << -t);
        if (holds)
            d = t;
    }
    const int bits = 28 - scale - d;
    return bits < TG_OZ2_NO_BOUND ? bits : TG_OZ2_NO_BOUND;
}

static void check_bound_bits(void)
{
    uint64_t seed = 20261128;
    int checked = 0, wrong = 0;
    for (int trial = 0; trial < 200000; ++trial) {
        int64_t k = 1 + (int64_t)(next(&seed) % ((uint64_t)1 << (1 + next(&seed) % 31)));
        int32_t product = (int32_t)(next(&seed) % ((uint64_t)1 << (next(&seed) % 31)));
        int64_t other = (int64_t)(next(&seed) % ((uint64_t)1 << (next(&seed) % 40)));
        const int scale = (int)(next(&seed) % 41) - 20;
        if (trial % 4 == 1) { /* at and beside a power of two of the ratio */
            const int s = (int)(next(&seed) % 30);
            product = (int32_t)((1 << s) + (int)(next(&seed) % 3) - 1);
            other = (int64_t)((k * (int64_t)(product > 0 ? product : 1)) >> (next(&seed) % 20)) /
                    5 + (int64_t)(next(&seed) % 3) - 1;
            if (other < 0)
                other = 0;
        }
        if (trial % 4 == 2)
            product = -product;
        const int got = tg_oz2_bound_bits(k, product, scale, other);
        const int want = bound_bits_by_definition(k, product, scale, other);
        ++checked;
        if (got != want && wrong++ < 5)
            EXPECT(0, "tg_oz2_bound_bits(k %lld, product %d, scale %d, other %lld) = %d, by "
                   "its definition %d", (long long)k, product, scale, (long long)other, got,
                   want);
    }
    EXPECT(wrong == 0, "tg_oz2_bound_bits: %d of %d wrong", wrong, checked);
}

static void check_crt(void)
{
    uint64_t seed = 20261127;
    long long checked = 0;
    for (int count = 1; count <= TG_OZ2_MAX_MODULI; ++count) {
        tg_oz2_crt crt;
        tg_oz2_crt_init(&crt, tg_oz2_moduli, count);
        tg_oz2_u128 big_m = 1;
        for (int l = 0; l < count; ++l)
            big_m *= (tg_oz2_u128)tg_oz2_moduli[l];
        const tg_oz2_i128 hi = (tg_oz2_i128)(big_m / 2), lo = hi + 1 - (tg_oz2_i128)big_m;
        EXPECT(crt.limbs >= 2 && crt.limbs <= 4 &&
                   (crt.limbs == 4 || big_m <= (tg_oz2_u128)1 << (32 * crt.limbs)) &&
                   (crt.limbs > 2 || big_m < ((tg_oz2_u128)1 << 64) - ((tg_oz2_u128)1 << 48)),
               "%d moduli: %d limbs", count, crt.limbs);
        enum { kFixed = 14, kRandom = 3000 };
        const tg_oz2_i128 edge = (tg_oz2_i128)(big_m >> 19);
        const tg_oz2_i128 fixed[kFixed] = {0, 1, -1, hi, lo, hi - 1, lo + 1, hi - edge, lo + edge,
                                           (tg_oz2_i128)1 << 32, (tg_oz2_i128)1 << 63,
                                           (tg_oz2_i128)1 << 64, (tg_oz2_i128)1 << 96, hi / 3};
        for (int v = 0; v < kFixed * 16 + kRandom; ++v) {
            tg_oz2_i128 x;
            if (v < kFixed * 16) { /* each fixed point, both signs, offsets -3..4 */
                x = fixed[v / 16] * (v % 2 ? -1 : 1) + (v / 2 % 8 - 3);
            } else if (v % 2) { /* uniform over [lo, hi] */
                x = (tg_oz2_i128)(next128(&seed) % big_m) + lo;
            } else { /* a random number of bits */
                const int bits = (int)(next(&seed) % 128);
                x = (tg_oz2_i128)(next128(&seed) >> (127 - bits)) * (next(&seed) % 2 ? -1 : 1);
            }
            if (x < lo || x > hi)
                continue;
            int32_t products[TG_OZ2_MAX_MODULI];
            for (int l = 0; l < count; ++l) {
                const int mod = tg_oz2_moduli[l];
                const int32_t r = (int32_t)(x % mod); /* in (-mod, mod) */
                const int64_t most = (INT32_MAX - mod) / mod, pick = (int64_t)(next(&seed) % 4);
                const int64_t j = pick == 0   ? 0
                                  : pick == 1 ? (int64_t)(next(&seed) % (uint64_t)(2 * most + 1)) - most
                                  : pick == 2 ? most
                                              : -most;
                products[l] = (int32_t)(r + j * mod);
            }
            tg_oz2_crt_sum sum = {{0, 0, 0, 0}, 0};
            for (int l = 0; l < count; ++l)
                tg_oz2_crt_add(&sum, &crt, l, tg_oz2_moduli[l], products[l], crt.limbs);
            const tg_oz2_i128 got = tg_oz2_crt_value(&sum, &crt, crt.limbs);
            /* 4 limbs whatever the count: what a caller may pass, also exact */
            tg_oz2_crt_sum wide = {{0, 0, 0, 0}, 0};
            for (int l = 0; l < count; ++l)
                tg_oz2_crt_add(&wide, &crt, l, tg_oz2_moduli[l], products[l], 4);
            const tg_oz2_i128 got_wide = tg_oz2_crt_value(&wide, &crt, 4);
            /* the residues in [0, m_l) as they are (the INT8 rung's bytes), no m_l added */
            tg_oz2_crt_sum raw = {{0, 0, 0, 0}, 0};
            for (int l = 0; l < count; ++l) {
                const int mod = tg_oz2_moduli[l];
                const uint32_t r = (uint32_t)((products[l] % mod + mod) % mod);
                tg_oz2_crt_add_residue(&raw, &crt, l, r, crt.limbs);
            }
            const tg_oz2_i128 got_raw = tg_oz2_crt_value(&raw, &crt, crt.limbs);
            const tg_oz2_i128 ref = crt_reference(products, count);
            EXPECT(got == x && got_wide == x && got_raw == x && ref == x,
                   "%d moduli, C_hat %.17g (case %d): crt %.17g, 4 limbs %.17g, residues %.17g, "
                   "128-bit %.17g",
                   count, (double)x, v, (double)got, (double)got_wide, (double)got_raw,
                   (double)ref);
            ++checked;
        }
    }
    printf("  CRT without 128-bit products: %lld values over 1..%d moduli\n", checked,
           TG_OZ2_MAX_MODULI);
}

int main(void)
{
    check_moduli();
    check_crt();
    check_bound_bits();
    const tg_op ops[2] = {TG_NO_TRANS, TG_TRANS};
    uint64_t seed = 20261126;
    int shown = 0;
    for (int data = kUniform; data <= kNarrow; ++data)
        for (int layout = 0; layout < 2; ++layout)
            for (int t = 0; t < 4; ++t) {
                const shape s = {layout ? TG_COL_MAJOR : TG_ROW_MAJOR, ops[t / 2], ops[t % 2],
                                 37 + 5 * t, 29 + 3 * layout, 300 + 17 * t, 1 + (t == 3),
                                 t == 1 ? -1.5f : 1.0f, t == 2 ? 0.75f : 0.0f};
                tg_oz2_plan plan;
                const double worst = run_case(&s, (enum data)data, 0, seed++, &plan, NULL);
                EXPECT(worst <= 1.0, "%s, %s %c%c %lldx%lldx%lld: scaled error %g (moduli %d, "
                       "bits %d/%d, fallback rows %lld cols %lld)", kDataName[data],
                       layout ? "col" : "row", t / 2 ? 'T' : 'N', t % 2 ? 'T' : 'N',
                       (long long)s.m, (long long)s.n, (long long)s.k, worst, plan.moduli,
                       plan.bits_a, plan.bits_b, (long long)plan.fallback_rows,
                       (long long)plan.fallback_cols);
                if (layout == 0 && t == 0 && shown++ < 9)
                    printf("  %-13s k %lld: %d moduli, %lld + %lld/%d INT8 products, bits %d/%d (%s/%s, "
                           "need %d/%d), range %d/%d, fallback rows %lld, cols %lld, worst scaled "
                           "error %.3g\n",
                           kDataName[data], (long long)s.k, plan.moduli,
                           (long long)plan.int8_products, (long long)plan.reduced_products,
                           TG_OZ2_BLOCK, plan.bits_a, plan.bits_b, tg_oz2_rule_name(plan.rule_a),
                           tg_oz2_rule_name(plan.rule_b), plan.need_a, plan.need_b,
                           plan.range_a, plan.range_b, (long long)plan.fallback_rows,
                           (long long)plan.fallback_cols, worst);
                switch (data) {
                case kUniform:
                case kScaledLines:
                case kCancelling:
                case kSpread10: /* the bound, not the range of 2^20, sets its bits */
                    EXPECT(plan.fallback_rows == 0 && plan.fallback_cols == 0 &&
                               plan.moduli <= 8,
                           "%s: every line taken by at most 8 moduli (%d, %lld rows left)",
                           kDataName[data], plan.moduli, (long long)plan.fallback_rows);
                    break;
                case kSpread16: /* more bits than the floor, fewer than the range asks (a
                                 * line or two past what 16 moduli carry left to FMA) */
                    EXPECT(plan.rule_a != TG_OZ2_BY_RANGE && plan.rule_b != TG_OZ2_BY_RANGE &&
                               (plan.need_a >= 26 || plan.need_b >= 26),
                           "spread 2^16: bits by %s/%s (need %d/%d)",
                           tg_oz2_rule_name(plan.rule_a), tg_oz2_rule_name(plan.rule_b),
                           plan.need_a, plan.need_b);
                    break;
                case kSpread60: /* every row and column: the caller's m and n, either way */
                    EXPECT(plan.fallback_rows + plan.fallback_cols == (s.m + s.n) * s.batch,
                           "spread 2^60: all lines left (%lld rows, %lld columns)",
                           (long long)plan.fallback_rows, (long long)plan.fallback_cols);
                    break;
                case kNarrow:
                    EXPECT(plan.moduli == 8 && plan.int8_products == 8 * s.batch &&
                               plan.reduced_products == 0,
                           "narrow: 8 moduli, no product of leading magnitudes (%d, %lld)",
                           plan.moduli, (long long)plan.int8_products);
                    break;
                case kSpecial:
                    EXPECT(plan.fallback_rows >= s.batch && plan.fallback_cols >= s.batch,
                           "special: the Inf row and NaN column left to FMA (%lld rows, %lld "
                           "columns)", (long long)plan.fallback_rows,
                           (long long)plan.fallback_cols);
                    break;
                default: break;
                }
            }

    /* k = 1024 to 16384: the moduli the bound rule chooses (and the range rule alone would),
     * every element within the bound on each data class, and the RMS error on full-mantissa
     * uniform, line-scaled and spread data beside a correctly rounded float result's and the
     * scheme's at the least bits. */
    const enum data long_classes[] = {kUniform,    kScaledLines, kSpread10, kSpread16,
                                      kCancelling, kSubnormal,   kNarrow};
    for (int64_t k = 1024; k <= 16384; k *= 2)
        for (size_t d = 0; d < sizeof long_classes / sizeof long_classes[0]; ++d) {
            const enum data data = long_classes[d];
            const int every_k = data == kUniform || data == kScaledLines;
            const int rms_class = every_k || data == kSpread10;
            if (!every_k && k != 4096 && k != 16384)
                continue;
            const shape s = {TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 24, 20, k, 1, 1.0f, 0.0f};
            tg_oz2_plan plan;
            double rms[3];
            const double worst = run_case(&s, data, 0, 500 + (uint64_t)(k + d), &plan, rms);
            const int floor_bits = tg_oz2_floor_bits(k);
            const int least_a = plan.need_a > floor_bits ? plan.need_a : floor_bits;
            const int least_b = plan.need_b > floor_bits ? plan.need_b : floor_bits;
            const int by_range = tg_oz2_moduli_needed(
                k, tg_oz2_bits_for_range(plan.range_a, k), tg_oz2_bits_for_range(plan.range_b, k));
            EXPECT(worst <= 1.0 &&
                       (data == kSpread16 || (plan.fallback_rows == 0 && plan.fallback_cols == 0)),
                   "%s k %lld: scaled error %g, %lld rows and %lld columns left", kDataName[data],
                   (long long)k, worst, (long long)plan.fallback_rows,
                   (long long)plan.fallback_cols);
            /* The floor's bits in 8 moduli (ozaki2.h: W by the product or by Cauchy-Schwarz),
             * R formed where a range passes the floor, P only on spread data (R's block minima
             * are small there); on narrow data (mean magnitude 3/4) sum_p |a_hat b_hat| itself
             * needs 9 from k = 4096 (about 0.56 k 2^52), with neither. */
            const int moduli = data == kNarrow && k >= 4096 ? 9 : 8;
            const int spread = data == kSpread10 || data == kSpread16;
            EXPECT(plan.moduli == moduli && plan.rule_a == TG_OZ2_BY_FLOOR &&
                       plan.rule_b == TG_OZ2_BY_FLOOR &&
                       plan.int8_products == moduli + spread &&
                       plan.reduced_products == (data != kNarrow),
                   "%s k %lld: %d moduli, %lld + %lld / %d INT8 products, bits by %s/%s",
                   kDataName[data], (long long)k, plan.moduli, (long long)plan.int8_products,
                   (long long)plan.reduced_products, TG_OZ2_BLOCK,
                   tg_oz2_rule_name(plan.rule_a), tg_oz2_rule_name(plan.rule_b));
            /* The moduli's spare bits taken: never fewer than the least, and on spread data
             * (few large leading magnitudes: a small W) enough more to cut the RMS error. */
            EXPECT(plan.bits_a >= least_a && plan.bits_b >= least_b &&
                       (data != kSpread10 || (plan.bits_a + plan.bits_b >= least_a + least_b + 4 &&
                                              rms[0] < 0.75 * rms[2])),
                   "%s k %lld: bits %d/%d from %d/%d, RMS %.3e (%.3e at the least bits)",
                   kDataName[data], (long long)k, plan.bits_a, plan.bits_b, least_a, least_b,
                   rms[0], rms[2]);
            printf("  %-13s k %5lld: %2d moduli (range rule: %2d), %2lld + %lld/%d INT8 products, "
                   "bits %d/%d (least %d/%d: %s/%s), worst scaled error %.3g",
                   kDataName[data], (long long)k, plan.moduli, by_range,
                   (long long)plan.int8_products, (long long)plan.reduced_products, TG_OZ2_BLOCK,
                   plan.bits_a, plan.bits_b, least_a, least_b,
                   tg_oz2_rule_name(plan.rule_a), tg_oz2_rule_name(plan.rule_b), worst);
            if (rms_class)
                printf(", RMS %.3e (least bits %.3e, float64 rounded %.3e)", rms[0], rms[2],
                       rms[1]);
            printf("\n");
        }

    /* A fixed count of 5 moduli, as a scheme with a fixed count would use, breaks the bound on
     * data whose range needs more; the count chosen from the data does not. */
    const shape wide = {TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 24, 20, 256, 1, 1.0f, 0.0f};
    tg_oz2_plan plan;
    const double fixed = run_case(&wide, kSpread10, 5, 77, &plan, NULL);
    EXPECT(fixed > 1.0, "5 moduli on elements over 2^-10..2^10: scaled error %g (should fail)",
           fixed);
    const double chosen = run_case(&wide, kSpread10, 0, 77, &plan, NULL);
    EXPECT(chosen <= 1.0, "chosen moduli (%d): scaled error %g", plan.moduli, chosen);
    printf("  5 moduli fixed on spread 2^10: worst scaled error %.3g; %d chosen: %.3g\n", fixed,
           plan.moduli, chosen);

    /* The lines left go to a float64 sum rounded once, as the CRT's outputs: where every line
     * is left (elements over 2^-60..2^60) at k = 16384, the RMS error is a float rounding's,
     * float64's own product rounded to float (an FP32 sum in k order left 16 times
     * that, and on spread data a few such lines lifted the whole product's RMS error). */
    const shape all_left = {TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 24, 20, 16384, 1, 1.0f, 0.0f};
    double left_rms[3];
    const double left_worst = run_case(&all_left, kSpread60, 0, 4242, &plan, left_rms);
    EXPECT(left_worst <= 1.0 && plan.fallback_rows + plan.fallback_cols == 44 &&
               left_rms[0] <= 1.05 * left_rms[1],
           "every line left, k 16384: scaled error %g, %lld + %lld lines left, RMS %.3e "
           "(float64 rounded %.3e)", left_worst, (long long)plan.fallback_rows,
           (long long)plan.fallback_cols, left_rms[0], left_rms[1]);
    printf("  every line left (spread 2^60), k 16384: RMS %.3e, float64 rounded %.3e\n",
           left_rms[0], left_rms[1]);

    /* k past one INT32 chunk: the sums are cut where INT32 could overflow. */
    const shape long_k = {TG_ROW_MAJOR, TG_NO_TRANS, TG_TRANS, 2, 3, TG_OZ2_K_CHUNK + 4461, 1,
                          1.0f, 0.0f};
    const double long_worst = run_case(&long_k, kUniform, 0, 99, &plan, NULL);
    EXPECT(long_worst <= 1.0, "k %d: scaled error %g", TG_OZ2_K_CHUNK + 4461, long_worst);

    /* alpha = 0 reads neither A nor B: C = beta C, and beta = 0 writes zeros over NaN. */
    float c[4] = {NAN, NAN, NAN, NAN};
    tg_problem none = {.m = 2, .n = 2, .k = 5, .alpha = 0.0f, .beta = 0.0f, .A = NULL,
                       .B = NULL, .C = c, .ldc = 2, .batch = 1};
    EXPECT(tg_oz2_gemm_emulated(&none, 0, &plan) == 0 && c[0] == 0.0f && c[3] == 0.0f,
           "alpha = 0, beta = 0");
    return tg_test_result("test_ozaki2");
}
