/* Ozaki scheme II's arithmetic and its CPU emulation; see ozaki2.h. */
#include "ozaki2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const int tg_oz2_moduli[TG_OZ2_MAX_MODULI] = {TG_OZ2_MODULI};

/* log2 of 5 / 2: each operand's rounding may take 2/5 of the error bound. */
#define TG_OZ2_SHARE_LOG2 1.321928094887362

double tg_oz2_log2_product(int count)
{
    double sum = 0.0;
    for (int l = 0; l < count && l < TG_OZ2_MAX_MODULI; ++l)
        sum += log2((double)tg_oz2_moduli[l]);
    return sum;
}

int tg_oz2_moduli_needed(int64_t k, int bits_a, int bits_b)
{
    return tg_oz2_moduli_for((uint64_t)(k > 0 ? k : 1), bits_a + bits_b + 1);
}

int tg_oz2_bits_for_range(int range, int64_t k)
{
    const double bits = range + 23 + TG_OZ2_SHARE_LOG2 - log2((double)(k > 0 ? k : 1));
    const int b = (int)ceil(bits - 1e-9);
    return b < range + 2 ? range + 2 : b;
}

int tg_oz2_floor_bits(int64_t k)
{
    const int rms = k < 8192 ? 26 : 25;
    const int cross = tg_oz2_bit_length((uint64_t)(k > 0 ? k : 1)) + 2; /* k 2^-bits <= 1/4 */
    return rms > cross ? rms : cross;
}

const char *tg_oz2_rule_name(tg_oz2_rule rule)
{
    switch (rule) {
    case TG_OZ2_BY_FLOOR: return "floor";
    case TG_OZ2_BY_BOUND: return "bound";
    case TG_OZ2_BY_RANGE: return "range";
    case TG_OZ2_BY_FORCE: return "forced";
    }
    return "?";
}

int tg_oz2_range_for_moduli(int count, int64_t k)
{
    int best = -1;
    for (int range = 0; range < 256; ++range) {
        const int bits = tg_oz2_bits_for_range(range, k);
        if (bits > 62 || tg_oz2_moduli_needed(k, bits, bits) > count)
            break;
        best = range;
    }
    return best;
}

static void scan_line(const float *x, int64_t count, int64_t step, tg_oz2_line *out)
{
    tg_oz2_line l = {0, 0, 0, 0};
    for (int64_t q = 0; q < count; ++q)
        tg_oz2_line_add(&l, x[q * step]);
    *out = l;
}

/* The scheme's own product for the outputs it leaves: a float64 FMA a term in k order (each
 * float product exact in float64), so that a line left costs no accuracy beside those taken:
 * an FP32 sum's error grows with k (spread data's few left lines in FP32 raised the RMS error
 * at 16384^3 from about 2.7e-8 to 3.6e-8). */
static double fma_element(const tg_problem *p, const float *A, const float *B, int64_t i,
                          int64_t j)
{
    double acc = 0.0;
    for (int64_t q = 0; q < p->k; ++q)
        acc = fma((double)A[i * p->a_rs + q * p->a_cs], (double)B[q * p->b_rs + j * p->b_cs],
                  acc);
    return acc;
}

typedef unsigned __int128 u128;
typedef __int128 i128;

/* The buffers of one batch item's product, freed together. */
typedef struct buffers {
    tg_oz2_line *rows, *cols;
    int *take_row, *take_col, *shift_row, *shift_col;
    uint64_t *up_row, *up_col; /* leading magnitudes rounded up, summed along each line */
    uint64_t *sq_row, *sq_col; /* and their squares (Q) */
    float *least;              /* m x blocks: each row's block minima of |a| */
    int *scale_row;            /* each row's 2^scale of R */
    int8_t *block_a, *block_b; /* m x blocks, n x blocks: the block-reduced operands */
    int64_t *a_hat, *b_hat; /* m x k, k x n */
    int8_t *ra, *rb;        /* residues of one modulus: m x k, n x k (k-contiguous) */
    u128 *x;                /* m x n: the CRT sum so far */
} buffers;

static void release(buffers *b)
{
    free(b->rows), free(b->cols), free(b->take_row), free(b->take_col);
    free(b->shift_row), free(b->shift_col), free(b->up_row), free(b->up_col);
    free(b->sq_row), free(b->sq_col);
    free(b->least), free(b->scale_row), free(b->block_a), free(b->block_b);
    free(b->a_hat), free(b->b_hat);
    free(b->ra), free(b->rb), free(b->x);
    memset(b, 0, sizeof *b);
}

static int allocate(buffers *b, int64_t m, int64_t n, int64_t k)
{
    memset(b, 0, sizeof *b);
    b->rows = malloc(sizeof *b->rows * (size_t)m);
    b->cols = malloc(sizeof *b->cols * (size_t)n);
    b->take_row = malloc(sizeof(int) * (size_t)m);
    b->take_col = malloc(sizeof(int) * (size_t)n);
    b->shift_row = malloc(sizeof(int) * (size_t)m);
    b->shift_col = malloc(sizeof(int) * (size_t)n);
    b->up_row = malloc(sizeof(uint64_t) * (size_t)m);
    b->up_col = malloc(sizeof(uint64_t) * (size_t)n);
    b->sq_row = malloc(sizeof(uint64_t) * (size_t)m);
    b->sq_col = malloc(sizeof(uint64_t) * (size_t)n);
    b->least = malloc(sizeof(float) * (size_t)(m * tg_oz2_blocks(k)));
    b->scale_row = malloc(sizeof(int) * (size_t)m);
    b->block_a = malloc((size_t)(m * tg_oz2_blocks(k)));
    b->block_b = malloc((size_t)(n * tg_oz2_blocks(k)));
    b->a_hat = malloc(sizeof(int64_t) * (size_t)(m * k));
    b->b_hat = malloc(sizeof(int64_t) * (size_t)(k * n));
    b->ra = malloc((size_t)(m * k));
    b->rb = malloc((size_t)(k * n));
    b->x = malloc(sizeof(u128) * (size_t)(m * n));
    if (!b->rows || !b->cols || !b->take_row || !b->take_col || !b->shift_row ||
        !b->shift_col || !b->up_row || !b->up_col || !b->sq_row || !b->sq_col || !b->least ||
        !b->scale_row || !b->block_a || !b->block_b || !b->a_hat ||
        !b->b_hat || !b->ra || !b->rb || !b->x) {
        release(b);
        return -1;
    }
    return 0;
}

/* Marks which of `count` lines the scheme takes (no Inf or NaN, a range of at most cap); their
 * widest range to *range, how many it leaves to *left. */
static void take_lines(const tg_oz2_line *lines, int64_t count, int cap, int *take, int *range,
                       int64_t *left)
{
    for (int64_t i = 0; i < count; ++i) {
        take[i] = tg_oz2_line_taken(&lines[i], cap);
        if (take[i] && tg_oz2_line_range(&lines[i]) > *range)
            *range = tg_oz2_line_range(&lines[i]);
        *left += !take[i];
    }
}

/* Bits an operand can hold as a 64-bit integer: 1 to 62. */
static int clamp_bits(int bits) { return bits < 1 ? 1 : bits > 62 ? 62 : bits; }

void tg_oz2_forced_bits(int count, int64_t k, int *bits_a, int *bits_b)
{
    const int total = (int)floor(tg_oz2_log2_product(count) - 1.0 - log2((double)k) - 1e-6);
    *bits_a = clamp_bits(total / 2);
    *bits_b = clamp_bits(total - total / 2);
}

/* A line's leading magnitudes (tg_oz2_leading) to out as int8, zeros for a line not taken;
 * the sums of the rounded-up ones and of their squares to *up and *sq. */
static void to_leading(const float *x, int64_t count, int64_t step, const tg_oz2_line *l,
                       int take, int8_t *out, uint64_t *up, uint64_t *sq)
{
    uint64_t sum = 0, squares = 0;
    for (int64_t q = 0; q < count; ++q) {
        int above = 0;
        out[q] = take && l->nonzero ? (int8_t)tg_oz2_leading(x[q * step], l->e_max, &above) : 0;
        sum += (uint64_t)above;
        squares += (uint64_t)above * (uint64_t)above;
    }
    *up = sum, *sq = squares;
}

/* A row's block minima of |a| as int8 (tg_oz2_block_floor; zeros for a row not taken) to
 * out, its scale to *scale; least: room for the minima as floats. */
static void to_block_floors(const float *x, int64_t k, int64_t step, const tg_oz2_line *l,
                            int take, float *least, int8_t *out, int *scale)
{
    const int64_t blocks = tg_oz2_blocks(k);
    float most = 0.0f;
    for (int64_t g = 0; g < blocks; ++g) {
        float low = INFINITY;
        for (int64_t q = g * TG_OZ2_BLOCK; q < k && q < (g + 1) * TG_OZ2_BLOCK; ++q)
            low = fminf(low, fabsf(x[q * step]));
        least[g] = low;
        most = fmaxf(most, low);
    }
    *scale = 0;
    for (int64_t g = 0; g < blocks; ++g)
        out[g] = take && l->nonzero ? (int8_t)tg_oz2_block_floor(least[g], most, l->e_max, scale)
                                    : 0;
}

/* A column's block sums of its leading magnitudes (lead, k of them), shifted into int8. */
static void to_block_sums(const int8_t *lead, int64_t k, int8_t *out)
{
    for (int64_t g = 0; g < tg_oz2_blocks(k); ++g) {
        int sum = 0;
        for (int64_t q = g * TG_OZ2_BLOCK; q < k && q < (g + 1) * TG_OZ2_BLOCK; ++q)
            sum += lead[q];
        out[g] = (int8_t)(sum >> TG_OZ2_BLOCK_SHIFT);
    }
}

/* The bound rule (ozaki2.h) from a lower product of sum_p |a b|: the block-reduced R (reduced:
 * b->block_a, b->block_b, tg_oz2_blocks(k) long, each row's scale) or the full P (b->ra,
 * b->rb, k long), an INT8 product in INT32 chunks as the rung sums it; each taken output's
 * need of either operand, the largest to *need_a and *need_b (tg_oz2_output_need's form), and
 * from P the largest tg_oz2_output_magnitude to *magnitude. */
static void bound_needs(const tg_problem *p, buffers *b, int reduced, int *need_a, int *need_b,
                        uint64_t *magnitude)
{
    const int64_t m = p->m, n = p->n, k = p->k, len = reduced ? tg_oz2_blocks(k) : k;
    const int8_t *const xa = reduced ? b->block_a : b->ra, *const xb = reduced ? b->block_b : b->rb;
    for (int64_t i = 0; i < m; ++i) {
        if (!b->take_row[i])
            continue;
        const int row_range_bits = tg_oz2_bits_for_range(tg_oz2_line_range(&b->rows[i]), k);
        const int scale = reduced ? b->scale_row[i] : 0;
        for (int64_t j = 0; j < n; ++j) {
            if (!b->take_col[j])
                continue;
            const int8_t *ra = xa + i * len, *rb = xb + j * len;
            int32_t lower = 0;
            for (int64_t q0 = 0; q0 < len; q0 += TG_OZ2_K_CHUNK) {
                const int64_t q1 = q0 + TG_OZ2_K_CHUNK < len ? q0 + TG_OZ2_K_CHUNK : len;
                if (q0 > 0)
                    lower = tg_oz2_lower_cut(lower);
                for (int64_t q = q0; q < q1; ++q)
                    lower += (int32_t)ra[q] * (int32_t)rb[q];
            }
            const int a = tg_oz2_output_need(
                row_range_bits, tg_oz2_bound_bits(k, lower, scale, (int64_t)b->up_col[j]));
            const int c = tg_oz2_output_need(
                tg_oz2_bits_for_range(tg_oz2_line_range(&b->cols[j]), k),
                tg_oz2_bound_bits(k, lower, scale, (int64_t)b->up_row[i]));
            *need_a = a > *need_a ? a : *need_a;
            *need_b = c > *need_b ? c : *need_b;
            if (!reduced) {
                const uint64_t w = tg_oz2_output_magnitude(lower, b->up_row[i], b->up_col[j]);
                *magnitude = w > *magnitude ? w : *magnitude;
            }
        }
    }
}

static uint64_t largest(const uint64_t *x, int64_t count)
{
    uint64_t most = 0;
    for (int64_t e = 0; e < count; ++e)
        most = x[e] > most ? x[e] : most;
    return most;
}

/* Chooses bits and moduli for one batch item (see ozaki2.h) and marks the lines taken. */
static void choose(const tg_problem *p, const float *A, const float *B, int forced, buffers *b,
                   tg_oz2_plan *item)
{
    memset(item, 0, sizeof *item);
    const int64_t m = p->m, n = p->n, k = p->k;
    const int cap = forced > 0 ? 1 << 30 : tg_oz2_range_for_moduli(TG_OZ2_MAX_MODULI, k);
    take_lines(b->rows, m, cap, b->take_row, &item->range_a, &item->fallback_rows);
    take_lines(b->cols, n, cap, b->take_col, &item->range_b, &item->fallback_cols);
    if (forced > 0) {
        item->moduli = forced;
        tg_oz2_forced_bits(forced, k, &item->bits_a, &item->bits_b);
        item->rule_a = item->rule_b = TG_OZ2_BY_FORCE;
        item->int8_products = forced;
        return;
    }
    if (item->fallback_rows == m || item->fallback_cols == n)
        return; /* every output is left to FMA: no integer product at all */
    for (int64_t i = 0; i < m; ++i)
        to_leading(A + i * p->a_rs, k, p->a_cs, &b->rows[i], b->take_row[i], b->ra + i * k,
                   &b->up_row[i], &b->sq_row[i]);
    for (int64_t j = 0; j < n; ++j)
        to_leading(B + j * p->b_cs, k, p->b_rs, &b->cols[j], b->take_col[j], b->rb + j * k,
                   &b->up_col[j], &b->sq_col[j]);
    /* The widest ranges' bits: what any output asks at most, by the range rule.  Only where
     * they pass the floor can the bound rule lower the bits: then R is formed, and P where the
     * bits R leaves would take more moduli than the floor's. */
    const int floor_bits = tg_oz2_floor_bits(k);
    int need_a = tg_oz2_output_need(tg_oz2_bits_for_range(item->range_a, k), TG_OZ2_NO_BOUND);
    int need_b = tg_oz2_output_need(tg_oz2_bits_for_range(item->range_b, k), TG_OZ2_NO_BOUND);
    const uint64_t max_q_a = largest(b->sq_row, m), max_q_b = largest(b->sq_col, n);
    const uint64_t cauchy = tg_oz2_magnitude(k, max_q_a, max_q_b, UINT64_MAX);
    uint64_t by_product = UINT64_MAX;
    int form_product = 0;
    if (need_a / 2 > floor_bits || need_b / 2 > floor_bits) {
        for (int64_t i = 0; i < m; ++i)
            to_block_floors(A + i * p->a_rs, k, p->a_cs, &b->rows[i], b->take_row[i],
                            b->least, b->block_a + i * tg_oz2_blocks(k), &b->scale_row[i]);
        for (int64_t j = 0; j < n; ++j)
            to_block_sums(b->rb + j * k, k, b->block_b + j * tg_oz2_blocks(k));
        need_a = need_b = -1;
        bound_needs(p, b, 1, &need_a, &need_b, &by_product);
        item->reduced_products = 1;
        form_product = tg_oz2_product_pays(need_a, need_b, floor_bits, cauchy);
        if (form_product) {
            int full_a = -1, full_b = -1;
            by_product = 0;
            bound_needs(p, b, 0, &full_a, &full_b, &by_product);
            need_a = full_a < need_a ? full_a : need_a; /* either bound holds: the fewer bits */
            need_b = full_b < need_b ? full_b : need_b;
        }
    }
    const tg_oz2_settled settled =
        tg_oz2_settle(k, floor_bits, need_a, need_b, max_q_a, max_q_b, by_product);
    item->need_a = settled.need_a, item->need_b = settled.need_b;
    item->bits_a = settled.bits_a, item->bits_b = settled.bits_b;
    item->rule_a = settled.rule_a, item->rule_b = settled.rule_b;
    item->moduli = settled.moduli;
    item->int8_products = item->moduli + form_product;
}

/* A line of `count` floats, `step` apart, as integers of `bits` bits (zeros when the scheme
 * leaves it: take 0) to out; returns the power of two it was scaled by. */
static int to_integers(const float *x, int64_t count, int64_t step, const tg_oz2_line *l,
                       int take, int bits, int64_t *out)
{
    const int shift = l->nonzero ? bits - l->e_max : 0;
    for (int64_t q = 0; q < count; ++q)
        out[q] = take ? llrint(ldexp((double)x[q * step], shift)) : 0;
    return shift;
}

/* One batch item: A, B, C its operands. */
static void run_item(const tg_problem *p, const float *A, const float *B, float *C, int forced,
                     buffers *b, tg_oz2_plan *item)
{
    const int64_t m = p->m, n = p->n, k = p->k;
    for (int64_t i = 0; i < m; ++i)
        scan_line(A + i * p->a_rs, k, p->a_cs, &b->rows[i]);
    for (int64_t j = 0; j < n; ++j)
        scan_line(B + j * p->b_cs, k, p->b_rs, &b->cols[j]);
    choose(p, A, B, forced, b, item);

    /* 1. Scaled integers: row i of op(A) times 2^(bits_a - e_max), rounded to nearest; the
     * columns of op(B) alike. */
    for (int64_t i = 0; i < m; ++i)
        b->shift_row[i] = to_integers(A + i * p->a_rs, k, p->a_cs, &b->rows[i], b->take_row[i],
                                      item->bits_a, b->a_hat + i * k);
    for (int64_t j = 0; j < n; ++j)
        b->shift_col[j] = to_integers(B + j * p->b_cs, k, p->b_rs, &b->cols[j], b->take_col[j],
                                      item->bits_b, b->b_hat + j * k);

    /* 2. Per modulus: INT8 residues, INT32 sums of their products, the CRT term added. */
    u128 M = 1;
    for (int l = 0; l < item->moduli; ++l)
        M *= (u128)tg_oz2_moduli[l];
    memset(b->x, 0, sizeof(u128) * (size_t)(m * n));
    for (int l = 0; l < item->moduli; ++l) {
        const int mod = tg_oz2_moduli[l];
        const u128 m_l = M / (u128)mod;
        const int inv = tg_oz2_inverse_mod((int)(m_l % (u128)mod), mod);
        for (int64_t e = 0; e < m * k; ++e)
            b->ra[e] = tg_oz2_residue(b->a_hat[e], mod);
        for (int64_t e = 0; e < n * k; ++e)
            b->rb[e] = tg_oz2_residue(b->b_hat[e], mod);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                const int8_t *ra = b->ra + i * k, *rb = b->rb + j * k;
                int64_t residue = 0;
                for (int64_t q0 = 0; q0 < k; q0 += TG_OZ2_K_CHUNK) {
                    const int64_t q1 = q0 + TG_OZ2_K_CHUNK < k ? q0 + TG_OZ2_K_CHUNK : k;
                    int32_t sum = 0; /* what the tensor core accumulates, exactly */
                    for (int64_t q = q0; q < q1; ++q)
                        sum += (int32_t)ra[q] * (int32_t)rb[q];
                    residue = (residue + sum) % mod;
                }
                residue = ((residue % mod) + mod) % mod;
                const u128 term = (u128)((residue * inv) % mod) * m_l;
                u128 *x = &b->x[i * n + j];
                *x += term; /* both under M < 2^127: no overflow */
                if (*x >= M)
                    *x -= M;
            }
    }

    /* 3. C_hat in (-M/2, M/2], scaled back, alpha and beta, one rounding; the lines left out
     * by FMA. */
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            float *c = &C[i * p->ldc + j];
            if (!b->take_row[i] || !b->take_col[j]) { /* alpha, beta and one rounding alike */
                *c = tg_oz2_blend((double)p->alpha * fma_element(p, A, B, i, j), p->beta, c);
                continue;
            }
            const u128 x = b->x[i * n + j];
            const i128 c_hat = x > M / 2 ? -(i128)(M - x) : (i128)x;
            const double value =
                ldexp((double)c_hat, -(b->shift_row[i] + b->shift_col[j])) * (double)p->alpha;
            *c = tg_oz2_blend(value, p->beta, c);
        }
}

int tg_oz2_gemm_emulated(const tg_problem *p, int forced_moduli, tg_oz2_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (tg_problem_is_empty(p))
        return 0;
    if (!tg_has_product(p->alpha, p->k)) { /* C = beta C; beta = 0 never reads C */
        for (int64_t bi = 0; bi < p->batch; ++bi)
            for (int64_t i = 0; i < p->m; ++i)
                for (int64_t j = 0; j < p->n; ++j) {
                    float *c = &p->C[bi * p->stride_c + i * p->ldc + j];
                    *c = p->beta != 0.0f ? p->beta * *c : 0.0f;
                }
        return 0;
    }
    buffers b;
    if (allocate(&b, p->m, p->n, p->k) != 0)
        return -1;
    for (int64_t bi = 0; bi < p->batch; ++bi) {
        tg_oz2_plan item;
        run_item(p, p->A + bi * p->stride_a, p->B + bi * p->stride_b, p->C + bi * p->stride_c,
                 forced_moduli, &b, &item);
        plan->fallback_rows += item.fallback_rows;
        plan->fallback_cols += item.fallback_cols;
        plan->int8_products += item.int8_products;
        plan->reduced_products += item.reduced_products;
        if (item.moduli > plan->moduli) { /* the batch item that needed the most */
            plan->moduli = item.moduli;
            plan->bits_a = item.bits_a, plan->bits_b = item.bits_b;
            plan->need_a = item.need_a, plan->need_b = item.need_b;
            plan->rule_a = item.rule_a, plan->rule_b = item.rule_b;
            plan->range_a = item.range_a, plan->range_b = item.range_b;
        }
    }
    release(&b);
    return 0;
}
