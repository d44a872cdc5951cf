/*
 * FP32-accurate products from exact INT8 products (Ozaki scheme II): the scheme's arithmetic,
 * and the whole scheme run on the CPU as the INT8 tensor-core rung is to run it.
 *
 *   1. Scale each row of op(A) and each column of op(B) by a power of two and round to an
 *      integer of at most `bits` bits: A_hat = round(diag(2^s) op(A)), B_hat = round(op(B)
 *      diag(2^t)).  C_hat = A_hat B_hat is an exact integer, |C_hat| <= k 2^(bits_a + bits_b).
 *   2. For each modulus m_l of a pairwise coprime set whose product M exceeds 2 max |C_hat|,
 *      take A_hat and B_hat mod m_l as INT8 (symmetric residues) and multiply them with exact
 *      INT32 sums (k cut where INT32 could overflow): C_hat mod m_l.
 *   3. Rebuild C_hat from its residues (Chinese remainder theorem) and scale back:
 *      C = alpha 2^(-s_i - t_j) C_hat + beta C, rounded to float once.
 *
 * How many bits, and so how many moduli.  Rounding A's row i to bits_a bits moves each nonzero
 * element by at most 2^(e_max - bits_a - 1), where 2^(e_max - 1) <= row max < 2^e_max; every
 * nonzero element is at least 2^(e_min - 1), so the product's element (i, j) moves by at most
 * 2^(range_i - bits_a) sum_p |a_ip b_pj|, range_i = e_max - e_min.  The project's error
 * bound (tg_scaled_error) allows (k + 2) 2^-23 sum_p |a_ip b_pj|; giving 0.45 k 2^-23 to each
 * operand's rounding and 2 2^-23 to the final roundings gives
 *     bits >= range + 23 + log2(1 / 0.45) - log2(k),
 * a guarantee, not an estimate: every element within the bound, whatever the data.  The bits
 * follow the widest row (column) range, the moduli follow the bits and k.  A row or column
 * whose range would need more moduli than TG_OZ2_MAX_MODULI, or that holds an Inf or NaN, is
 * left to an FP32 FMA product (the rung: tiles of those outputs to another rung).
 *
 * What the guarantee costs (tests/test_ozaki2.c, k = 300): uniform data in [-1, 1) takes 9
 * moduli, rows scaled over 2^-60..2^60 as many (the scaling is per row), elements spread over
 * 2^-10..2^10 within a row 14; the worst element then sits at a thousandth of the bound, since
 * one small element sets a row's range and rounding errors rarely add up.  A fixed 6 moduli
 * breaks the bound (2.6x) on the spread data.  Fewer moduli at the same guarantee would need a
 * tighter bound per element, or splitting a row's few small elements off.
 */
#ifndef TG_OZAKI2_H
#define TG_OZAKI2_H

#include <math.h>
#include <stdint.h>

#include "../problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Callable from the INT8 rung's kernels (k11_ozaki2.cu) as from ozaki2.c. */
#ifdef __CUDACC__
#define TG_OZ2_HOST_DEVICE __host__ __device__
#else
#define TG_OZ2_HOST_DEVICE
#endif

/* What the scheme needs to know of a row of op(A) or a column of op(B), element by element. */
typedef struct tg_oz2_line {
    int special;      /* an Inf or NaN */
    int nonzero;      /* a nonzero finite element */
    int e_max, e_min; /* frexp exponents of the largest and smallest nonzero elements */
} tg_oz2_line;

static inline TG_OZ2_HOST_DEVICE void tg_oz2_line_add(tg_oz2_line *l, float v)
{
    if (!isfinite(v)) {
        l->special = 1;
        return;
    }
    if (v == 0.0f)
        return;
    int e;
    (void)frexpf(v, &e);
    if (!l->nonzero || e > l->e_max)
        l->e_max = e;
    if (!l->nonzero || e < l->e_min)
        l->e_min = e;
    l->nonzero = 1;
}

/* The line's exponent range, which sets its bits (0 for a line of zeros). */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_line_range(const tg_oz2_line *l)
{
    return l->nonzero ? l->e_max - l->e_min : 0;
}

/* Whether the scheme takes the line: no Inf or NaN, and a range of at most cap (what the
 * moduli can carry); a line it leaves goes to an FP32 FMA product. */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_line_taken(const tg_oz2_line *l, int cap)
{
    return !l->special && tg_oz2_line_range(l) <= cap;
}

/* Sixteen pairwise coprime moduli of at most 256, largest first: their product is under
 * 2^127, so a residue set fits a signed 128-bit integer. */
enum { TG_OZ2_MAX_MODULI = 16 };
#define TG_OZ2_MODULI 256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193
extern const int tg_oz2_moduli[TG_OZ2_MAX_MODULI];

/* Products of exact INT8 residues summed in INT32: |r_a r_b| <= 2^14, so 2^16 of them fit. */
enum { TG_OZ2_K_CHUNK = 1 << 16 };

/* log2 of the product of the first `count` moduli. */
double tg_oz2_log2_product(int count);

/* The fewest moduli whose product exceeds 2 k 2^(bits_a + bits_b) (the range of C_hat), or
 * TG_OZ2_MAX_MODULI + 1 when even all of them do not. */
int tg_oz2_moduli_needed(int64_t k, int bits_a, int bits_b);

/* The bits an operand needs for the error bound above, given the widest exponent range of
 * its rows (columns) and k: at least 1. */
int tg_oz2_bits_for_range(int range, int64_t k);

/* The largest exponent range each operand may have when both get the same range and `count`
 * moduli carry the product (-1 when none fits). */
int tg_oz2_range_for_moduli(int count, int64_t k);

/* The bits of A and B when `count` moduli are forced (tests): what they allow, less k's sum,
 * split evenly, each 1 to 62. */
void tg_oz2_forced_bits(int count, int64_t k, int *bits_a, int *bits_b);

/* Symmetric residue of x modulo m: in [-floor(m / 2), m - 1 - floor(m / 2)], an int8 for any
 * m <= 256. */
static inline int8_t tg_oz2_residue(int64_t x, int m)
{
    int64_t r = x % m;
    if (r < 0)
        r += m;
    if (r > m - 1 - m / 2)
        r -= m;
    return (int8_t)r;
}

/* What the scheme chose for a product. */
typedef struct tg_oz2_plan {
    int moduli;                        /* how many of tg_oz2_moduli carry C_hat */
    int bits_a, bits_b;                /* integer bits of A's rows and B's columns */
    int range_a, range_b;              /* the widest exponent range among the rows (columns)
                                        * the scheme took */
    int64_t fallback_rows, fallback_cols; /* rows of op(A), columns of op(B) left to FMA */
} tg_oz2_plan;

/*
 * The whole scheme on the CPU, on a normalized problem (problem.h) that has passed
 * validation: residues as INT8, sums of their products in INT32 chunks of TG_OZ2_K_CHUNK, the
 * CRT in 128-bit integers, one rounding to float; the rows and columns the scheme cannot take
 * by FP32 FMA in k order.  forced_moduli > 0 uses that many moduli, splitting the bits they
 * allow evenly between the operands (for tests: a fixed count that the data's range needs
 * more than breaks the error bound); 0 chooses as above.  beta = 0 never reads C.  Fills
 * *plan; returns 0, or -1 where its buffers cannot be allocated (C untouched).
 */
int tg_oz2_gemm_emulated(const tg_problem *p, int forced_moduli, tg_oz2_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
