/*
 * FP32-accurate products from exact INT8 products (Ozaki scheme II): the scheme's arithmetic,
 * and the whole scheme run on the CPU as the INT8 tensor-core rung is to run it.
 *
 *   1. Scale each row of op(A) and each column of op(B) by a power of two and round to an
 *      integer of at most `bits` bits: A_hat = round(diag(2^s) op(A)), B_hat = round(op(B)
 *      diag(2^t)).  C_hat = A_hat B_hat is an exact integer.
 *   2. For each modulus m_l of a pairwise coprime set whose product M exceeds 2 max |C_hat|
 *      (a bound of it, below),
 *      take A_hat and B_hat mod m_l as INT8 (symmetric residues) and multiply them with exact
 *      INT32 sums (k cut where INT32 could overflow): C_hat mod m_l.
 *   3. Rebuild C_hat from its residues (Chinese remainder theorem) and scale back:
 *      C = alpha 2^(-s_i - t_j) C_hat + beta C, rounded to float once.  ozaki2.c rebuilds it in
 *      128-bit integers; the INT8 rung, without 128-bit products (tg_oz2_crt below), rebuilds
 *      the same integer.
 *
 * How many bits, and so how many moduli.  Rounding A's row i to bits_a bits moves each element
 * by eps_a <= d_i = 2^(e_i - bits_a - 1), where 2^(e_i - 1) <= row max < 2^e_i (likewise eps_b <=
 * d_j for B's column j), and a~ b~ - a b = eps_a b + a eps_b + eps_a eps_b.  The project's bound
 * (tg_scaled_error) allows (k + 2) 2^-23 S_ij, S_ij = sum_p |a_ip b_pj|: each operand's term may
 * take 2/5 k 2^-23 S_ij, the cross term 1/10, the final roundings the rest.  An operand's term
 * is within its share by either of two rules, output by output:
 *   range: every nonzero element is at least 2^(e_min - 1), so eps_a <= 2^(range_i - bits_a) |a|
 *     (range_i = e_max - e_min): bits_a >= range_i + 23 + log2(5/2) - log2 k, and >= range_i + 2.
 *   bound: from the lines' leading magnitudes a' = floor(|a| 2^(7 - e_i)) and b' (7 bits: int8),
 *     any lower product L_ij <= S_ij below; rounding |b| up instead gives sum_p |b_pj| <=
 *     2^(f_j - 7) U_j.  So |sum_p eps_a b| <= d_i 2^(f_j - 7) U_j, within the share where
 *     2^(6 - bits_a) U_j <= 2/5 k 2^-23 2^(14 - e_i - f_j) L_ij (tg_oz2_bound_bits, in integers).
 *   Two lower products, each an exact INT8 product in INT32 chunks (the running sum cut to 2^30
 *   between them, still a lower bound):
 *     R (block-reduced, k / TG_OZ2_BLOCK deep): in each block g of 32 along k, sum_p |a b| >=
 *       min_p |a_ip| sum_p |b_pj|.  Row i's block minima, rounded down to 7 bits against its
 *       largest block minimum (< 2^h_i), and column j's block sums of b' shifted right by 5
 *       (< 2^12 / 2^5), are int8 lower bounds: S_ij >= 2^(e_i + f_j - 14) 2^scale_i R_ij, scale_i =
 *       h_i - e_i + 5 (tg_oz2_block_floor).  On uniform data it asks 3 to 5 bits more than P.
 *     P (full, k deep): S_ij >= 2^(e_i + f_j - 14) P_ij, P_ij = sum_p a'_ip b'_pj.  It is formed
 *       only where the bits R leaves would take more moduli than the floor's
 *       (tg_oz2_product_pays): elements spread over binades leave R's block minima small.
 *     Each holds alone, so each operand takes the fewer bits of the two.
 * The cross term: sum_p |eps_a eps_b| <= k d_i d_j.  Where A's bits are by a bound, d_i <=
 * (2/5) k 2^-23 L_ij / (2^(f_j - 7) U_j) and U_j >= 64 (the column's largest element), so the
 * cross term is at most (2/5) k 2^-23 L_ij k 2^-bits_b, a tenth where k 2^-bits_b <= 1/4
 * (the floor keeps bits >= bit length of k + 2); where either rule is the range rule, its factor
 * 2^(range - bits) <= 1/4 times the other operand's share.  Each operand takes the largest over
 * the outputs of the fewer bits of the rules, and at least the floor below: a guarantee, not an
 * estimate: every element within the bound, whatever the data.  The bound rule needs R only
 * where some line's range asks more bits than the floor; elsewhere every output asks at most
 * the floor, and no lower product is formed.  A row or column whose range needs more moduli
 * than TG_OZ2_MAX_MODULI, or that holds an Inf or NaN, is left to a float64 FMA product (the
 * rung: tiles of those outputs to another rung).
 *
 * How many moduli: M > 2 max |C_hat| over the outputs taken.  With a'' = ceil(|a| 2^(7 - e_i)) (the
 * leading magnitude rounded up, <= 2^7) and bits_a >= 7, a'' 2^(bits_a - 7) is an integer at
 * least |a| 2^(bits_a - e_i), so |a_hat| <= a'' 2^(bits_a - 7); so |C_hat_ij| <= 2^(bits_a + bits_b
 * - 14) sum_p a''_ip b''_pj, and that sum is at most each of
 *   product: P_ij + U_i + U_j (a'' b'' <= a' b' + a'' + b'', as a'' - a' and b'' - b' are 0 or 1),
 *     where P_ij < 2^30 (then no chunk was cut: the sum is exact), U the rounded-up line sums;
 *   Cauchy-Schwarz: ceil(sqrt(Q_i Q_j)), Q_i = sum_p a''_ip^2, at most ceil(sqrt(max Q max Q));
 *   k 2^14.
 * W, the least of the three maxima over the outputs taken (the first only where P was formed),
 * is an exact integer (below 2^46 for k < 2^31), and the moduli are the fewest with
 * M > 2^(bits_a + bits_b - 13) W (tg_oz2_moduli_for).  That count's M usually carries more,
 * and the bits rise to all it carries (tg_oz2_take_carried_bits): W, from the leading
 * magnitudes, holds for any bits >= 7, so the count stays; and more bits never loosen the
 * bound, as d_i and d_j only shrink and each rule's inequality above holds for any bits past
 * the least it asks.  On uniform data W is about 4160 k by the product, 5670-5860 k by
 * Cauchy-Schwarz (16384 lines of k = 4096, 4096 of 16384): 8 moduli carry 26 bits up to
 * k = 4096 and 25 up to 16384 with either (6118 k allowed).  Where P is not needed for the
 * bits, forming it for W alone would pay only if it saved two moduli (W by Cauchy-Schwarz 2^15
 * times W by the product): it is not formed.
 *
 * The floor (tg_oz2_floor_bits) is for the RMS error, which the bound does not bound: measured
 * (bench/ozaki_bits.py --floors, C_hat exact and rounded as here, 96 x 96, k = 1024 to 16384) it
 * depends on the bits, not k: on full-mantissa uniform data 9.9e-8 at 23 bits, 4.2e-8 at 24,
 * 2.7-2.8e-8 at 25, 2.5-2.6e-8 at 26, against 2.5e-8 for float64's product rounded to float.
 * GEMMul8's accurate mode (8 moduli) measured 2.6e-8 at 4096^3 and 3.0e-8 at 8192^3 and 16384^3
 * (bench/results/ozaki/): so 26 bits below k = 8192, 25 from there; and from k = 2^23 the bit
 * length of k + 2, for the cross term.
 *
 * What it costs (tests/test_ozaki2.c): R asks 15 to 22 bits on uniform, line-scaled,
 * cancelling and subnormal data at k = 300 to 16384 (P: 11 to 17; blocks of 16 ask 1 bit less
 * than 32, 64 one or two more, 128 up to 29 at k = 351, past the floor), so the floor sets the
 * least bits, and 8 moduli carry them (the range rule alone: 9 to 16) in 8 INT8 products and R,
 * a 32nd of one (8 + 1 with P before).  On data spread over 2^-10..2^10 and 2^-16..2^16 R asks
 * 32 to 57 bits, and P (15 to 28) is formed too: 9 + 1/32.  The moduli carry 0 or 1 bit more a
 * side on uniform data (at k = 300 one fewer than with W by P), 3 on data spread over
 * 2^-10..2^10 (W small: few leading magnitudes are large), where the floor's bits alone left an
 * RMS error of 4.6e-8 at k = 4096 and 8.9e-8 at 16384, and all 8 carry leave 2.4e-8 and 2.6e-8
 * (float64 rounded: 2.3e-8, 2.5e-8).  Magnitudes in [1/2, 1) need no lower product (range 0 or
 * 1) but 9 moduli from k = 4096: sum |a_hat b_hat| itself passes what 8 carry.  Over
 * 2^-16..2^16 at k = 300 the bound asks 28 bits.  The worst element sits at 1e-3 to 5e-7 of the
 * bound.  A fixed 5 moduli breaks the bound (12.6x) on the 2^-10..2^10 data.
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
/* What the INT8 rung's kernels evaluate at compile time (the CRT's limbs for a count). */
#ifdef __cplusplus
#define TG_OZ2_CONSTEXPR constexpr
#else
#define TG_OZ2_CONSTEXPR
#endif

typedef __int128 tg_oz2_i128;
typedef unsigned __int128 tg_oz2_u128;

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
 * moduli can carry); a line it leaves goes to a float64 FMA product. */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_line_taken(const tg_oz2_line *l, int cap)
{
    return !l->special && tg_oz2_line_range(l) <= cap;
}

/*
 * The bound rule's arithmetic (see above), shared with the INT8 rung.  A line's leading
 * magnitudes: |v| 2^(7 - e_max) for each element v, below 2^7, rounded down (an int8 for the
 * INT8 product; 0 for a line not taken) and up (summed along the line).  In double the scaling
 * is exact: e_max lies in [-148, 128], so the result is at least 2^-270.
 */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_leading_scaled(float v, double scale, int *up)
{
    const double x = fabs((double)v) * scale;
    const int down = (int)x;
    *up = down + (x > (double)down);
    return down;
}

/* The same with scale = 2^(7 - e_max), exactly, so that x is ldexp's (a kernel passes the power
 * of two it built once for the line: ldexp's general path was most of to_leading's work). */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_leading(float v, int e_max, int *up)
{
    return tg_oz2_leading_scaled(v, ldexp(1.0, 7 - e_max), up);
}

/* The INT8 product of the leading magnitudes in INT32 chunks of k (at most 2^16 x 127^2 each):
 * between chunks the running sum is cut to TG_OZ2_LOWER_CAP, which keeps it a lower bound of
 * the exact sum and below 2^31. */
#define TG_OZ2_LOWER_CAP (1 << 30)
static inline TG_OZ2_HOST_DEVICE int32_t tg_oz2_lower_cut(int32_t sum)
{
    return sum < TG_OZ2_LOWER_CAP ? sum : TG_OZ2_LOWER_CAP;
}

/* Bit length of x > 0. */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_bit_length(uint64_t x)
{
#ifdef __CUDA_ARCH__
    return 64 - __clzll((long long)x);
#else
    return 64 - __builtin_clzll(x);
#endif
}

/* An output's bound of sum_p a''_ip b''_pj from the product (above): P_ij + U_i + U_j, or
 * UINT64_MAX where P_ij may have been cut (>= 2^30: not known exactly). */
static inline TG_OZ2_HOST_DEVICE uint64_t tg_oz2_output_magnitude(int32_t product, uint64_t up_a,
                                                                  uint64_t up_b)
{
    return product < TG_OZ2_LOWER_CAP ? (uint64_t)product + up_a + up_b : UINT64_MAX;
}

/* ceil(sqrt(x)), bit by bit: exact, the same on host and device. */
static inline TG_OZ2_HOST_DEVICE uint64_t tg_oz2_ceil_sqrt(tg_oz2_u128 x)
{
    uint64_t r = 0;
    for (int b = 63; b >= 0; --b) {
        const uint64_t t = r | (uint64_t)1 << b;
        if ((tg_oz2_u128)t * t <= x)
            r = t;
    }
    return r + ((tg_oz2_u128)r * r < x);
}

/* W (above): the least of k 2^14, Cauchy-Schwarz's from the largest Q of either operand's
 * lines, and by_product (the largest tg_oz2_output_magnitude, or UINT64_MAX where P was not
 * formed).  Q < 2^64 and k < 2^50. */
static inline TG_OZ2_HOST_DEVICE uint64_t tg_oz2_magnitude(int64_t k, uint64_t max_q_a,
                                                           uint64_t max_q_b, uint64_t by_product)
{
    uint64_t w = (uint64_t)k << 14;
    const uint64_t cauchy = tg_oz2_ceil_sqrt((tg_oz2_u128)max_q_a * max_q_b);
    w = cauchy < w ? cauchy : w;
    return by_product < w ? by_product : w;
}

/* What an output's bound cannot give: more bits than any count of moduli carries. */
enum { TG_OZ2_NO_BOUND = 255 };

/* A positive integer shifted left until its top bit is set, and the shift: x = bits >> zeros.
 * For two of them, floor(log2(y / x)) = x.zeros - y.zeros - (y.bits < x.bits), as the ratio of
 * the aligned bits lies in (1/2, 2). */
typedef struct tg_oz2_aligned {
    uint64_t bits;
    int zeros;
} tg_oz2_aligned;

static inline TG_OZ2_HOST_DEVICE tg_oz2_aligned tg_oz2_align(uint64_t x)
{
    const int zeros = 64 - tg_oz2_bit_length(x);
    const tg_oz2_aligned a = {x << zeros, zeros};
    return a;
}

/*
 * The fewest bits of one operand that output (i, j)'s lower bound allows: the least b with
 *   2^(6 - b) other <= (2/5) k 2^-23 2^scale product,  i.e.  5 other 2^(28 - scale - b) <= k product,
 * product P_ij (scale 0) or R_ij (scale the row's, above), other the rounded-up leading
 * magnitude sum of the other operand's line (U_j for A's bits, U_i for B's).  Exact in
 * integers (other < 2^39, k product < 2^62).  0 where other is 0 (the other line is zero: this
 * operand's rounding moves nothing), TG_OZ2_NO_BOUND where product is 0.
 * In two steps, for a kernel that weighs one product against two lines' sums and one line's
 * sum against many products: tg_oz2_align(k product) and tg_oz2_align(5 other), then
 * tg_oz2_bound_bits_aligned.
 */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_bound_bits_aligned(tg_oz2_aligned k_product,
                                                               int scale,
                                                               tg_oz2_aligned five_other)
{
    /* d = floor(log2(k product / (5 other))), the largest with 5 other 2^d <= k product */
    const int d = five_other.zeros - k_product.zeros - (k_product.bits < five_other.bits);
    const int bits = 28 - scale - d;
    return bits < TG_OZ2_NO_BOUND ? bits : TG_OZ2_NO_BOUND;
}

static inline TG_OZ2_HOST_DEVICE int tg_oz2_bound_bits(int64_t k, int32_t product, int scale,
                                                       int64_t other)
{
    if (other == 0)
        return 0;
    if (product <= 0)
        return TG_OZ2_NO_BOUND;
    return tg_oz2_bound_bits_aligned(tg_oz2_align((uint64_t)k * (uint64_t)product), scale,
                                     tg_oz2_align(5 * (uint64_t)other));
}

/* The block-reduced bound (above): blocks of TG_OZ2_BLOCK along k, the last what is left;
 * op(B)'s block sums of leading magnitudes (at most 127 x 32 < 2^12) shifted right by
 * TG_OZ2_BLOCK_SHIFT into an int8. */
enum { TG_OZ2_BLOCK = 32, TG_OZ2_BLOCK_SHIFT = 5 };

static inline TG_OZ2_HOST_DEVICE int64_t tg_oz2_blocks(int64_t k)
{
    return (k + TG_OZ2_BLOCK - 1) / TG_OZ2_BLOCK;
}

/* A row's block minimum of |a| as an int8, rounded down against the row's largest block
 * minimum `most` (0 where most is 0); *scale gets the row's 2^scale of R (h - e_max + shift,
 * h the frexp exponent of most). */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_block_floor(float least, float most, int e_max,
                                                        int *scale)
{
    int h = e_max;
    if (most > 0.0f)
        (void)frexpf(most, &h);
    *scale = h - e_max + TG_OZ2_BLOCK_SHIFT;
    int up = 0;
    return most > 0.0f ? tg_oz2_leading(least, h, &up) : 0;
}

/* What one output asks of an operand's bits: the fewer of what its line's range asks
 * (range_bits: tg_oz2_bits_for_range) and its bound, times 2, plus 1 where the range set it; the
 * largest over the outputs, halved, is the operand's need, and its low bit the rule. */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_output_need(int range_bits, int bound_bits)
{
    return range_bits < bound_bits ? 2 * range_bits + 1 : 2 * bound_bits;
}

/* Sixteen pairwise coprime moduli of at most 256, largest first: their product is under
 * 2^127, so a residue set fits a signed 128-bit integer. */
enum { TG_OZ2_MAX_MODULI = 16 };
#define TG_OZ2_MODULI 256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193
extern const int tg_oz2_moduli[TG_OZ2_MAX_MODULI];

/* M, the product of the first `count` of `moduli`. */
static inline TG_OZ2_CONSTEXPR TG_OZ2_HOST_DEVICE tg_oz2_u128 tg_oz2_crt_product(const int *moduli,
                                                                                int count)
{
    tg_oz2_u128 big_m = 1;
    for (int l = 0; l < count; ++l)
        big_m *= (tg_oz2_u128)moduli[l];
    return big_m;
}

/* The fewest of tg_oz2_moduli (in order) whose product exceeds w 2^shift, exactly, or
 * TG_OZ2_MAX_MODULI + 1 when even all of them do not. */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_moduli_for(uint64_t w, int shift)
{
    const int list[TG_OZ2_MAX_MODULI] = {TG_OZ2_MODULI};
    /* the products stay below 2^127; w 2^shift is compared as what it is, or above 2^127 */
    const int wide = w != 0 && shift >= 0 && tg_oz2_bit_length(w) + shift > 127;
    const tg_oz2_u128 target = wide          ? 0
                               : shift >= 0  ? (tg_oz2_u128)w << shift
                               : shift > -64 ? (tg_oz2_u128)(w >> -shift)
                                             : 0;
    tg_oz2_u128 product = 1;
    for (int count = 1; count <= TG_OZ2_MAX_MODULI && !wide; ++count) {
        product *= (tg_oz2_u128)list[count - 1];
        if (product > target) /* an integer M exceeds w 2^shift where it exceeds its floor */
            return count;
    }
    return TG_OZ2_MAX_MODULI + 1;
}

/*
 * Raises bits_a and bits_b to all that `count` moduli carry for W = w: the largest sum with
 * M > 2^(bits_a + bits_b - 13) w, tg_oz2_moduli_for's condition (so the count stays), each at
 * least what it was and at most 62 (an int64 integer); the fewer bits rise first, then both
 * alike (an odd bit to A), as equal bits leave the least rounding error for their sum.  Exact:
 * with w of L bits and M of N, w 2^(N - L) has N bits (below 2^127).
 */
static inline TG_OZ2_HOST_DEVICE void tg_oz2_take_carried_bits(uint64_t w, int count,
                                                               int *bits_a, int *bits_b)
{
    const int list[TG_OZ2_MAX_MODULI] = {TG_OZ2_MODULI};
    if (count < 1 || count > TG_OZ2_MAX_MODULI)
        return;
    const tg_oz2_u128 big_m = tg_oz2_crt_product(list, count);
    const int m_bits = (big_m >> 64) != 0 ? 64 + tg_oz2_bit_length((uint64_t)(big_m >> 64))
                                          : tg_oz2_bit_length((uint64_t)big_m);
    int shift = 124 - 13; /* w = 0: any bits */
    if (w != 0) {
        shift = m_bits - tg_oz2_bit_length(w); /* the largest with M > w 2^shift, or one past */
        if (shift >= 0 && ((tg_oz2_u128)w << shift) >= big_m)
            --shift;
    }
    const int total = shift + 13 < 124 ? shift + 13 : 124;
    if (total <= *bits_a + *bits_b)
        return; /* the count was chosen for these bits: nothing more is carried */
    int a = total - total / 2, b = total / 2;
    if (a < *bits_a)
        a = *bits_a, b = total - a;
    else if (b < *bits_b)
        b = *bits_b, a = total - b;
    *bits_a = a, *bits_b = b;
}


/*
 * The CRT without 128-bit products (the INT8 rung's reconstruct; ozaki2.c keeps its own sum of
 * 128-bit terms reduced mod M, and the two must agree on every integer).  With the first
 * `count` moduli, M their product, inv_l the inverse of M / m_l modulo m_l and
 * e_l = (M / m_l) inv_l (< M, as inv_l < m_l):
 *   for any integers u_l = C_hat (mod m_l), S = sum_l u_l e_l = C_hat (mod M), and C_hat is
 *   S - q M for the one integer q that puts it in [h + 1 - M, h], h = floor(M / 2) (ozaki2.c's
 *   centring: x > h goes to x - M).
 * u_l is the INT32 product mod m_l plus m_l, in [1, 2 m_l - 1] (tg_oz2_crt_add), or a residue
 * in [0, m_l) as it is (tg_oz2_crt_add_residue): in [0, 2 m_l - 1] either way, so u_l < 2^9.
 * The two give S apart by sum_l m_l e_l, a multiple of M (e_l = 1 mod m_l, 0 mod the other
 * moduli), and the same C_hat below.  S is summed exactly as four sums of u_l times 32-bit
 * limbs of e_l (each under 16 2^9 2^32 = 2^45: 64-bit sums never wrap).  q is estimated from
 * F = sum_l u_l w_l, w_l = floor(e_l 2^32 / M): with f = S / M, 0 <= f - F 2^-32 <= sum_l u_l
 * 2^-32 < 2^-19 (e_l 2^32 / M - 1 < w_l <= e_l 2^32 / M).  Let g = C_hat / M in (-1/2, 1/2],
 * f = q + g, and q_est = floor(F 2^-32 + 1/2 - 2^-32).  Then F 2^-32 + 1/2 - 2^-32 <= q + g +
 * 1/2 - 2^-32 < q + 1, and > q + g + 1/2 - 2^-19 - 2^-32, which is >= q unless
 * g < -1/2 + 2^-19 + 2^-32: q_est is q, or q - 1 in that sliver only.  So D = S - q_est M is
 * C_hat (<= h), or C_hat + M (> h, and < M (1/2 + 2^-18)): D lies in [h + 1 - M, M (1/2 + 2^-18)),
 * under 2^127 in magnitude (2^63 where `limbs` is 2, M < 2^64 - 2^48).  Computed modulo 2^128
 * (2^64), the wrapped difference read as signed is D exactly, and subtracting M where D > h
 * gives C_hat.  Exact whatever the residues: no assumption on C_hat's size, so forced counts
 * too.
 */
typedef struct tg_oz2_crt {
    uint32_t weight[TG_OZ2_MAX_MODULI][4]; /* e_l in 32-bit limbs, lowest first (first member:
                                            * 16-byte rows where the struct is 16-aligned) */
    uint32_t frac[TG_OZ2_MAX_MODULI];      /* w_l = floor(e_l 2^32 / M) */
    uint64_t product[2], half[2];          /* M and h, low 64 bits first */
    int moduli;
    int limbs; /* limbs of e_l that can be nonzero: 2 where M < 2^64 - 2^48 (then |D| < 2^63),
                * 3 where M <= 2^96, else 4 */
} tg_oz2_crt;

/* The sums of one output: S in limbs (S = sum_j limb[j] 2^(32 j)) and F. */
typedef struct tg_oz2_crt_sum {
    uint64_t limb[4], frac;
} tg_oz2_crt_sum;

/* The multiplicative inverse of a modulo m (a and m coprime), by trial: m <= 256. */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_inverse_mod(int a, int m)
{
    for (int y = 1; y < m; ++y)
        if (a * y % m == 1)
            return y;
    return 1; /* m == 1 only */
}

/* Modulus l's constants, e_l and w_l (zeros for l >= count).  Each l on its own: the device
 * builds them a thread a modulus, as the inverse by trial costs up to m_l steps. */
static inline TG_OZ2_HOST_DEVICE void tg_oz2_crt_init_modulus(tg_oz2_crt *c, const int *moduli,
                                                              int count, int l)
{
    tg_oz2_u128 e = 0;
    uint32_t w = 0;
    if (l < count) {
        const tg_oz2_u128 big_m = tg_oz2_crt_product(moduli, count);
        const int mod = moduli[l];
        tg_oz2_u128 cofactor = 1;
        int rest = 1; /* the cofactor modulo m_l */
        for (int o = 0; o < count; ++o)
            if (o != l) {
                cofactor *= (tg_oz2_u128)moduli[o];
                rest = rest * (moduli[o] % mod) % mod;
            }
        e = cofactor * (tg_oz2_u128)tg_oz2_inverse_mod(rest, mod);
        tg_oz2_u128 rem = e; /* long division of e 2^32 by M, a bit at a time: 2 rem < 2^128 */
        for (int b = 0; b < 32; ++b) {
            rem <<= 1;
            w <<= 1;
            if (rem >= big_m) {
                rem -= big_m;
                w |= 1u;
            }
        }
    }
    for (int j = 0; j < 4; ++j)
        c->weight[l][j] = (uint32_t)(e >> (32 * j));
    c->frac[l] = w;
}

/* The limbs of e_l that can be nonzero for M = big_m (tg_oz2_crt's limbs). */
static inline TG_OZ2_CONSTEXPR TG_OZ2_HOST_DEVICE int tg_oz2_crt_limbs(tg_oz2_u128 big_m)
{
    return big_m < ((tg_oz2_u128)1 << 64) - ((tg_oz2_u128)1 << 48) ? 2
           : big_m <= ((tg_oz2_u128)1 << 96)                       ? 3
                                                                   : 4;
}

/* The constants that are not a modulus's: M, h, the count and the limbs. */
static inline TG_OZ2_HOST_DEVICE void tg_oz2_crt_init_shared(tg_oz2_crt *c, const int *moduli,
                                                             int count)
{
    const tg_oz2_u128 big_m = tg_oz2_crt_product(moduli, count);
    const tg_oz2_u128 half = big_m >> 1;
    c->product[0] = (uint64_t)big_m, c->product[1] = (uint64_t)(big_m >> 64);
    c->half[0] = (uint64_t)half, c->half[1] = (uint64_t)(half >> 64);
    c->moduli = count;
    c->limbs = tg_oz2_crt_limbs(big_m);
}

/* The constants for the first `count` of `moduli` (pairwise coprime, at most 256, product under
 * 2^127).  No 128-bit division: the device builds them too. */
static inline TG_OZ2_HOST_DEVICE void tg_oz2_crt_init(tg_oz2_crt *c, const int *moduli,
                                                      int count)
{
    for (int l = 0; l < TG_OZ2_MAX_MODULI; ++l)
        tg_oz2_crt_init_modulus(c, moduli, count, l);
    tg_oz2_crt_init_shared(c, moduli, count);
}

/* Adds modulus l to the sums with u_l = u: any integer in [0, 2 m_l - 1] = C_hat (mod m_l).
 * limbs: c->limbs, or more. */
static inline TG_OZ2_HOST_DEVICE void tg_oz2_crt_add_u(tg_oz2_crt_sum *s, const tg_oz2_crt *c,
                                                       int l, uint32_t u, int limbs)
{
    for (int j = 0; j < 4; ++j)
        if (j < limbs)
            s->limb[j] += (uint64_t)u * c->weight[l][j];
    s->frac += (uint64_t)u * c->frac[l];
}

/* Adds modulus l to the sums with its residue r in [0, m_l) (= C_hat mod m_l) as u_l = r, as
 * the INT8 rung's byte residues come: no m_l added, which a signed INT32 product needs
 * (tg_oz2_crt_add) and a residue does not (above: u_l in [0, 2 m_l - 1]).  limbs: c->limbs, or
 * more. */
static inline TG_OZ2_HOST_DEVICE void tg_oz2_crt_add_residue(tg_oz2_crt_sum *s,
                                                             const tg_oz2_crt *c, int l,
                                                             uint32_t r, int limbs)
{
    tg_oz2_crt_add_u(s, c, l, r, limbs);
}

/* Adds modulus l (m_l = mod) to the sums: product is any integer = C_hat (mod m_l), such as
 * the INT32 product of the residues (u_l = its remainder plus m_l).  limbs: c->limbs, or
 * more. */
static inline TG_OZ2_HOST_DEVICE void tg_oz2_crt_add(tg_oz2_crt_sum *s, const tg_oz2_crt *c,
                                                     int l, int mod, int32_t product, int limbs)
{
    tg_oz2_crt_add_u(s, c, l, (uint32_t)(product % mod + mod), limbs);
}

/* C_hat in [h + 1 - M, h], exactly, from the sums of every chosen modulus. */
static inline TG_OZ2_HOST_DEVICE tg_oz2_i128 tg_oz2_crt_value(const tg_oz2_crt_sum *s,
                                                             const tg_oz2_crt *c, int limbs)
{
    /* q_est = floor(F 2^-32 + 1/2 - 2^-32): F < 2^45, so q_est < 2^14 */
    const uint32_t q = (uint32_t)((s->frac + 0x7fffffffu) >> 32);
    if (limbs <= 2) { /* M < 2^64 - 2^48: |D| < 2^63, all modulo 2^64 */
        const uint64_t m = c->product[0];
        uint64_t d = s->limb[0] + (s->limb[1] << 32) - (uint64_t)q * m;
        if ((int64_t)d > (int64_t)c->half[0])
            d -= m;
        return (int64_t)d;
    }
    const tg_oz2_u128 m = (tg_oz2_u128)c->product[1] << 64 | c->product[0];
    const tg_oz2_u128 h = (tg_oz2_u128)c->half[1] << 64 | c->half[0];
    tg_oz2_u128 sum = s->limb[0] + ((tg_oz2_u128)s->limb[1] << 32) +
                      ((tg_oz2_u128)s->limb[2] << 64);
    if (limbs > 3)
        sum += (tg_oz2_u128)s->limb[3] << 96;
    tg_oz2_u128 d = sum - (tg_oz2_u128)q * m; /* modulo 2^128 */
    /* D > h by the sign of D - (h + 1), in [-M, M / 2): cheaper than a 128-bit compare */
    if ((int64_t)((uint64_t)((d - h - 1) >> 64)) >= 0)
        d -= m;
    return (tg_oz2_i128)d;
}

/* An output of C from value = alpha times its product in double (the CRT's C_hat scaled back,
 * or a left line's float64 sum): plus beta C, one rounding to float.  beta C is exact in double
 * (24 x 24 bits), so a fused or a separate add rounds the same.  *c is read only where beta != 0
 * (beta = 0 never reads C). */
static inline TG_OZ2_HOST_DEVICE float tg_oz2_blend(double value, float beta, const float *c)
{
    return (float)(beta != 0.0f ? value + (double)beta * (double)*c : value);
}

/* Products of exact INT8 residues summed in INT32: |r_a r_b| <= 2^14, so 2^16 of them fit. */
enum { TG_OZ2_K_CHUNK = 1 << 16 };

/* log2 of the product of the first `count` moduli. */
double tg_oz2_log2_product(int count);

/* The fewest moduli whose product exceeds 2 k 2^(bits_a + bits_b) (W = k 2^14 above), or
 * TG_OZ2_MAX_MODULI + 1 when even all of them do not. */
int tg_oz2_moduli_needed(int64_t k, int bits_a, int bits_b);

/* The bits a line of exponent range `range` needs by the range rule (above) for k: at least
 * range + 2, so that its rounding moves no element by more than a quarter. */
int tg_oz2_bits_for_range(int range, int64_t k);

/* The floor on each operand's bits for k (above): the RMS error's, and the cross term's. */
int tg_oz2_floor_bits(int64_t k);

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

/* What set an operand's bits. */
typedef enum tg_oz2_rule {
    TG_OZ2_BY_FLOOR, /* the accuracy floor: the guarantee needed no more */
    TG_OZ2_BY_BOUND, /* an output's lower bound of sum_p |a_ip b_pj| */
    TG_OZ2_BY_RANGE, /* a line's exponent range, where it asked less than the bound */
    TG_OZ2_BY_FORCE  /* a forced count of moduli (no guarantee) */
} tg_oz2_rule;

/* What the scheme chose for a product. */
typedef struct tg_oz2_plan {
    int moduli;                        /* how many of tg_oz2_moduli carry C_hat */
    int bits_a, bits_b;                /* integer bits of A's rows and B's columns: all that
                                        * the moduli carry */
    int need_a, need_b;                /* the bits the guarantee asked (the floor aside) */
    tg_oz2_rule rule_a, rule_b;        /* what set the least bits, the moduli's count */
    int range_a, range_b;              /* the widest exponent range among the rows (columns)
                                        * the scheme took */
    int64_t fallback_rows, fallback_cols; /* rows of op(A), columns of op(B) left to FMA */
    int64_t int8_products;             /* over the batch: the moduli's, and P's where formed */
    int64_t reduced_products;          /* over the batch: R's where formed (each k / 32 deep) */
} tg_oz2_plan;

/* The rule's name, for reports. */
const char *tg_oz2_rule_name(tg_oz2_rule rule);

/* The least bits and the rule of an operand from its need (the largest tg_oz2_output_need over
 * the outputs taken, or -1 where none) and the floor. */
static inline TG_OZ2_HOST_DEVICE void tg_oz2_settle_bits(int largest_need, int floor_bits,
                                                         int *need, int *bits, tg_oz2_rule *rule)
{
    *need = largest_need < 0 ? 0 : largest_need / 2;
    *bits = *need > floor_bits ? *need : floor_bits;
    *rule = *need <= floor_bits ? TG_OZ2_BY_FLOOR
            : largest_need % 2  ? TG_OZ2_BY_RANGE
                                : TG_OZ2_BY_BOUND;
}

/* What the rest of the choice settles, the same on the CPU (ozaki2.c) and the device
 * (k11_ozaki2.cu's choose_plan). */
typedef struct tg_oz2_settled {
    int need_a, need_b, bits_a, bits_b, moduli;
    tg_oz2_rule rule_a, rule_b;
} tg_oz2_settled;

/* Each operand's least bits from its need and the floor (tg_oz2_settle_bits), the moduli from W
 * (tg_oz2_magnitude of the lines' largest Q and, where P was formed, its bound: by_product, else
 * UINT64_MAX), then all the bits those moduli carry (tg_oz2_take_carried_bits). */
static inline TG_OZ2_HOST_DEVICE tg_oz2_settled tg_oz2_settle(int64_t k, int floor_bits,
                                                             int need_a, int need_b,
                                                             uint64_t max_q_a, uint64_t max_q_b,
                                                             uint64_t by_product)
{
    tg_oz2_settled s;
    tg_oz2_settle_bits(need_a, floor_bits, &s.need_a, &s.bits_a, &s.rule_a);
    tg_oz2_settle_bits(need_b, floor_bits, &s.need_b, &s.bits_b, &s.rule_b);
    const uint64_t w = tg_oz2_magnitude(k, max_q_a, max_q_b, by_product);
    s.moduli = tg_oz2_moduli_for(w, s.bits_a + s.bits_b - 13);
    tg_oz2_take_carried_bits(w, s.moduli, &s.bits_a, &s.bits_b);
    return s;
}

/* Whether P is formed after R (see above): where the bits R leaves (needs as
 * tg_oz2_settle_bits takes them) need more moduli, with W by Cauchy-Schwarz (cauchy), than the
 * floor's bits, the least P could give. */
static inline TG_OZ2_HOST_DEVICE int tg_oz2_product_pays(int need_a, int need_b, int floor_bits,
                                                         uint64_t cauchy)
{
    int least, bits_a, bits_b;
    tg_oz2_rule rule;
    tg_oz2_settle_bits(need_a, floor_bits, &least, &bits_a, &rule);
    tg_oz2_settle_bits(need_b, floor_bits, &least, &bits_b, &rule);
    return tg_oz2_moduli_for(cauchy, bits_a + bits_b - 13) >
           tg_oz2_moduli_for(cauchy, 2 * floor_bits - 13);
}

/*
 * The whole scheme on the CPU, on a normalized problem (problem.h) that has passed
 * validation: residues as INT8, sums of their products in INT32 chunks of TG_OZ2_K_CHUNK, the
 * CRT in 128-bit integers, one rounding to float; the rows and columns the scheme cannot take
 * by float64 FMA in k order.  forced_moduli > 0 uses that many moduli, splitting the bits they
 * allow evenly between the operands (for tests: a fixed count that the data's range needs
 * more than breaks the error bound); 0 chooses as above.  beta = 0 never reads C.  Fills
 * *plan; returns 0, or -1 where its buffers cannot be allocated (C untouched).
 */
int tg_oz2_gemm_emulated(const tg_problem *p, int forced_moduli, tg_oz2_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
