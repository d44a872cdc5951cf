/*
 * The H100's TF32 tensor-core arithmetic, bit for bit, as the emulated twins of mma_tf32.cuh
 * and wgmma_tf32.cuh use it (and test_emulated_rungs checks it on crafted cases).
 *
 * Source: the bit-accurate model of Khattak and Mikaitis, "Accurate Models of NVIDIA Tensor
 * Cores" (arXiv:2512.07004, 2025), as published in github.com/north-numerical-computing/
 * MATLAB-tensor-core (models/H100TC.m with models/tools/Generic_BFMA_TC.m and GEMM.m), which
 * they validated against the H100 on 10^5 random inputs per format; and Fasi, Higham,
 * Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores" (PeerJ Comput. Sci. 7:e330,
 * 2021) for subnormals: their suite finds TF32 subnormal inputs and subnormal outputs flushed,
 * and so did this project's first H100 run of the subnormal data (commit 7906907).
 *
 * One instruction with k = 8 (mma.m16n8k8, wgmma.m64n128k8) forms each output as one block
 * fused multiply-add, d = c + sum of 8 products, in these steps:
 *   1. inputs: the tensor core reads the top 19 bits of a and b (sign, exponent, 10 mantissa
 *      bits): the low 13 bits are dropped, a truncation, not a rounding (the model rounds its
 *      inputs to TF32 toward zero).  A TF32 input with a zero exponent field (subnormal) is
 *      read as zero.  c, the FP32 accumulator, is read whole, subnormal or not.
 *   2. products: exact (11 x 11 significand bits).  Zero products take no part in what follows.
 *   3. alignment: all nonzero products and c are aligned to one exponent E, the largest of
 *      c's exponent and the products' exponents ea + eb (before normalization, so a product
 *      in [2, 4) x 2^E counts as 2^E), keeping neab = 2 bits beyond FP32's 23 fraction bits:
 *      every term is truncated toward zero to a multiple of 2^(E - 25).  No sticky bit, no
 *      rounding: the bits shifted out are lost.
 *   4. the aligned terms are added exactly (the model's fixed-point sum).
 *   5. normalization and the final rounding: the sum is truncated (toward zero) to FP32's 24
 *      bits.  A result under 2^-126 in magnitude is flushed to zero; one of 2^128 or more is
 *      Inf.
 * Inf and NaN: a NaN operand or product (Inf x 0) or infinities of both signs give NaN; other
 * infinities give that infinity (as the model's GEMM.m and IEEE arithmetic do).
 *
 * What this changes against IEEE FP32 arithmetic: the partial sum c is truncated at every
 * instruction, so the error of a long accumulation in the tensor core grows with the number of
 * instructions and has a bias toward zero, where round-to-nearest FADDs keep it small and
 * unbiased.  That is why the 3xTF32 rungs promote the tensor core's partial sum into FP32
 * registers every 32 of k, and why values that TF32 reads as subnormal are special to them.
 */
#ifndef TG_EMULATED_TENSOR_CORE_MODEL_H
#define TG_EMULATED_TENSOR_CORE_MODEL_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tc_model {

constexpr int kExtraAlignmentBits = 2; /* neab of the H100's TF32 block FMA */

inline uint32_t bits_of(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float float_of(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

/* What the tensor core reads of a TF32 operand: the top 19 bits, subnormals as zero. */
inline float tf32_input(float x)
{
    uint32_t u = bits_of(x) & ~0x1fffu;
    if ((u & 0x7f800000u) == 0)
        u &= 0x80000000u;
    return float_of(u);
}

/* m 2^shift, truncated toward zero where shift < 0 (the bits shifted out are lost). */
inline int64_t shifted(int64_t m, int shift)
{
    return shift >= 0 ? m << shift : shift > -63 ? m >> -shift : 0;
}

/* c + the products when an operand or c is Inf or NaN: IEEE's rules for the special ones. */
inline float special_sum(const float *a, const float *b, int n, float c)
{
    bool nan = std::isnan(c), pos_inf = c == INFINITY, neg_inf = c == -INFINITY;
    for (int i = 0; i < n; ++i) {
        const float x = tf32_input(a[i]), y = tf32_input(b[i]);
        if (std::isnan(x) || std::isnan(y) || (std::isinf(x) && y == 0.0f) ||
            (std::isinf(y) && x == 0.0f))
            nan = true;
        else if (std::isinf(x) || std::isinf(y))
            (std::signbit(x) != std::signbit(y) ? neg_inf : pos_inf) = true;
    }
    return nan || (pos_inf && neg_inf) ? NAN : pos_inf ? INFINITY : -INFINITY;
}

/*
 * d = c + sum_i a[i] * b[i], i < n (n <= 8), as one TF32 block FMA of the H100 (steps above),
 * in fixed point: every term becomes an integer number of units 2^(E - 25).
 */
inline float block_fma(const float *a, const float *b, int n, float c)
{
    struct Product {
        int64_t m; /* signed: the two 11-bit significands' product, 22 bits */
        int e;     /* ea + eb: |product| = |m| 2^(e - 20) */
    } product[8];
    int terms = 0, top = INT32_MIN;
    const uint32_t uc = bits_of(c), c_field = uc >> 23 & 0xffu;
    bool special = c_field == 0xffu;
    for (int i = 0; i < n; ++i) {
        const uint32_t x = bits_of(a[i]), y = bits_of(b[i]);
        const uint32_t fx = x >> 23 & 0xffu, fy = y >> 23 & 0xffu;
        if (fx == 0xffu || fy == 0xffu) {
            special = true;
            continue;
        }
        if (fx == 0 || fy == 0)
            continue; /* zero, or subnormal and flushed: no term */
        /* the top 19 bits: 10 fraction bits and the implicit one */
        const int64_t m = (int64_t)((x >> 13 & 0x3ffu) | 0x400u) * ((y >> 13 & 0x3ffu) | 0x400u);
        const int e = (int)fx + (int)fy - 254;
        product[terms++] = Product{(x ^ y) >> 31 ? -m : m, e};
        top = e > top ? e : top;
    }
    if (special)
        return special_sum(a, b, n, c);

    /* c: |c| = mc 2^(ec - 23), subnormal c with ec = -126 (read whole, never flushed) */
    const int64_t mc = (int64_t)(uc & 0x7fffffu) | (c_field ? 0x800000 : 0);
    const int ec = c_field ? (int)c_field - 127 : -126;
    if (mc != 0)
        top = ec > top ? ec : top;
    if (terms == 0 && mc == 0)
        return 0.0f;

    /* Alignment to the largest exponent, each term truncated, then the exact sum. */
    const int lsb = top - 23 - kExtraAlignmentBits; /* the unit's exponent */
    const int64_t tc = shifted(mc, ec - 23 - lsb);
    int64_t sum = uc >> 31 ? -tc : tc;
    for (int i = 0; i < terms; ++i) {
        const int64_t t = shifted(product[i].m < 0 ? -product[i].m : product[i].m,
                                  product[i].e - 20 - lsb);
        sum += product[i].m < 0 ? -t : t;
    }

    /* Normalization, truncation to 24 bits, flush of subnormal results, overflow. */
    if (sum == 0)
        return 0.0f;
    const uint32_t sign = sum < 0 ? 0x80000000u : 0u;
    uint64_t m = sum < 0 ? -(uint64_t)sum : (uint64_t)sum;
    const int top_bit = 63 - __builtin_clzll(m);
    const int e = lsb + top_bit; /* the result's exponent */
    m = top_bit > 23 ? m >> (top_bit - 23) : m << (23 - top_bit);
    if (e < -126)
        return float_of(sign); /* flushed */
    if (e > 127)
        return float_of(sign | 0x7f800000u);
    return float_of(sign | (uint32_t)(e + 127) << 23 | ((uint32_t)m & 0x7fffffu));
}

/*
 * The INT8 product (wgmma .s32.s8.s8, mma .s32.s8.s8): c + sum_i a[i] b[i] over signed bytes,
 * exact, in INT32.  The PTX ISA has the sum wrap modulo 2^32 where it leaves INT32 (no
 * .satfinite); *wrapped says whether it did, which the twins treat as a kernel's error.
 */
inline int32_t s8_dot(const int8_t *a, const int8_t *b, int n, int32_t c, bool *wrapped)
{
    int64_t sum = c;
    for (int i = 0; i < n; ++i)
        sum += (int32_t)a[i] * (int32_t)b[i];
    *wrapped = sum < INT32_MIN || sum > INT32_MAX;
    return (int32_t)(uint32_t)(uint64_t)sum;
}

} // namespace tc_model

#endif
