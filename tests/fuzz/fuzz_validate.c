/*
 * libFuzzer target for the argument validator (src/validate.c), built by scripts/sanitize.sh
 * with clang -fsanitize=fuzzer,address,undefined where clang is installed.
 *
 * The input bytes become one call of either entry point (any layout, transpose, size, leading
 * dimension, stride, batch count, alpha, beta, NULL operands).  Whatever the input: no crash and
 * no undefined behaviour in tg_validate, tg_is_quick_return and tg_normalize; an error names an
 * argument of that entry point and a non-empty message; and a call it accepts (that is not a
 * quick return) has operands whose byte spans fit in an int64, and batch items of C that share
 * no element (checked element by element where C is small enough).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int64_t take(const uint8_t **data, size_t *size)
{
    int64_t v = 0;
    const size_t n = *size < 8 ? *size : 8;
    memcpy(&v, *data, n);
    *data += n, *size -= n;
    /* Mostly small values, sometimes anything: small ones reach the deeper checks. */
    switch ((uint64_t)v & 3) {
    case 0: return (v >> 2) % 9;
    case 1: return (v >> 2) % 70 - 3;
    case 2: return v >> 2;
    default: return v;
    }
}

static int64_t span(int64_t lines, int64_t length, int64_t ld, int64_t stride, int64_t items)
{
    const __int128 s = (__int128)(items - 1) * stride + (__int128)(lines - 1) * ld + length;
    if (s * 4 > INT64_MAX)
        abort();
    return (int64_t)s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    static const float scalars[] = {0.0f, 1.0f, -1.0f, 0.5f};
    const uint8_t flags = data[0], more = data[1];
    data += 2, size -= 2;
    static float dummy[4];
    tg_call c;
    memset(&c, 0, sizeof c);
    c.batched = flags & 1;
    c.layout = (flags & 2) ? TG_ROW_MAJOR : (flags & 4) ? TG_COL_MAJOR : (tg_layout)(int)take(&data, &size);
    c.transa = (flags & 8) ? TG_TRANS : TG_NO_TRANS;
    c.transb = (flags & 16) ? TG_TRANS : (more & 1) ? (tg_op)(int)take(&data, &size) : TG_NO_TRANS;
    c.m = take(&data, &size), c.n = take(&data, &size), c.k = take(&data, &size);
    c.lda = take(&data, &size), c.ldb = take(&data, &size), c.ldc = take(&data, &size);
    c.stride_a = take(&data, &size), c.stride_b = take(&data, &size);
    c.stride_c = take(&data, &size), c.batch = c.batched ? take(&data, &size) : 1;
    c.alpha = scalars[(more >> 1) & 3], c.beta = scalars[(more >> 3) & 3];
    c.A = (more & 32) ? NULL : dummy, c.B = (more & 64) ? NULL : dummy;
    c.C = (more & 128) ? NULL : dummy;

    tg_error err;
    const tg_status s = tg_validate(&c, &err);
    if (s != TG_SUCCESS) {
        if (s != TG_ERROR_INVALID_ARGUMENT || err.arg < 1 || err.arg > (c.batched ? 18 : 14) ||
            err.message[0] == '\0')
            abort();
        return 0;
    }
    if (tg_is_quick_return(&c))
        return 0;
    tg_problem p;
    tg_normalize(&c, &p);
    /* Accepted: every operand the call touches spans less than 2^63 bytes. */
    const int64_t items = c.batched ? c.batch : 1;
    if (c.alpha != 0.0f && c.k > 0) {
        /* (rows - 1) * rs + (cols - 1) * cs + 1 elements per item: as lines of one */
        span(p.m, (p.k - 1) * p.a_cs + 1, p.a_rs, p.stride_a, p.stride_a ? items : 1);
        span(p.k, (p.n - 1) * p.b_cs + 1, p.b_rs, p.stride_b, p.stride_b ? items : 1);
    }
    const int64_t lines = c.layout == TG_ROW_MAJOR ? c.m : c.n;
    const int64_t length = c.layout == TG_ROW_MAJOR ? c.n : c.m;
    const int64_t total = span(lines, length, c.ldc, c.stride_c, items);
    /* ... and C's items share nothing. */
    if (items > 1 && total <= (1 << 16)) {
        static unsigned char seen[1 << 16];
        memset(seen, 0, (size_t)total);
        for (int64_t b = 0; b < items; ++b)
            for (int64_t i = 0; i < lines; ++i)
                for (int64_t j = 0; j < length; ++j) {
                    unsigned char *e = &seen[b * c.stride_c + i * c.ldc + j];
                    if (*e)
                        abort();
                    *e = 1;
                }
    }
    return 0;
}
