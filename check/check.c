/* One checked run of tg_sgemm; see check.h.
 *
 * The oracle here is independent of the library's own index arithmetic: elements are found
 * straight from (layout, transpose, leading dimension), never through tg_normalize, so a
 * stride bug in validation or normalization cannot hide behind a reference that shares it. */
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* A NaN with a payload nothing computes: an element still holding it was never written. */
static const uint32_t kPoisonBits = 0x7fc0bad0u;
/* A different NaN for the padding of A and B: read by mistake, it turns a result into NaN. */
static const uint32_t kPadBits = 0x7fc0fad0u;

static const char *const kDistributionNames[TG_DIST_COUNT] = {
    "uniform", "wide", "cancel", "int12", "special", "subnormal", "huge"};

const char *tg_distribution_name(tg_distribution d)
{
    return (unsigned)d < TG_DIST_COUNT ? kDistributionNames[d] : "unknown";
}

int tg_distribution_from_name(const char *name)
{
    for (int d = 0; name && d < TG_DIST_COUNT; ++d)
        if (strcmp(name, kDistributionNames[d]) == 0)
            return d;
    return -1;
}

const char *tg_check_arith_name(tg_check_arith a)
{
    return a == TG_CHECK_TF32 ? "tf32" : a == TG_CHECK_3XTF32 ? "3xtf32" : "ffma";
}

static tg_check_arith of_registry(tg_arith a)
{
    return a == TG_ARITH_TF32 ? TG_CHECK_TF32 : a == TG_ARITH_3XTF32 ? TG_CHECK_3XTF32
                                                                       : TG_CHECK_FFMA;
}

tg_check_arith tg_handle_arith(const tg_handle *h)
{
    const tg_math math = tg_get_math(h);
    if (tg_get_backend(h) == TG_BACKEND_CPU || math == TG_MATH_STRICT_FMA ||
        !tg_backend_available(TG_BACKEND_CUDA)) /* the CPU backend runs FP32 FMAs */
        return TG_CHECK_FFMA;
    const char *forced = tg_get_algo(h);
    const int auto_picks = strcmp(forced, "auto") == 0;
    /* auto: the least accurate arithmetic among the rungs it may pick in this mode. */
    tg_check_arith worst = TG_CHECK_FFMA;
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info info;
        if (tg_algo_info_get(i, &info) != TG_SUCCESS)
            continue;
        const tg_check_arith a = of_registry(info.arith);
        if (!auto_picks && strcmp(info.name, forced) == 0)
            return a;
        if (auto_picks && info.in_auto && tg_math_allows(math, info.arith) && a > worst)
            worst = a;
    }
    return worst;
}

/* --- Random numbers, counter-based: element (operand, item, row, col) has its own draw. -------- */

static uint64_t mix(uint64_t z) /* splitmix64's finalizer */
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t draw(uint64_t seed, int operand, int64_t item, int64_t r, int64_t col)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + (uint64_t)operand;
    z = mix(z + (uint64_t)item * 0xd1b54a32d192ed03ull);
    z = mix(z + (uint64_t)r * 0xaef17502108ef2d9ull);
    return mix(z + (uint64_t)col * 0x9e3779b97f4a7c15ull);
}

static double unit(uint64_t r) { return (double)(r >> 11) * 0x1.0p-53 * 2.0 - 1.0; }

enum { OPERAND_A = 1, OPERAND_B = 2, OPERAND_C = 3 };

/* Element (r, col) of op(A) (r < m, col = p < k), op(B) (r = p < k, col < n) or C. */
static float value_of(const tg_case *c, uint64_t seed, int operand, int64_t item, int64_t r,
                      int64_t col)
{
    if (c->small_ints)
        return (float)((int)(draw(seed, operand, item, r, col) % 9) - 4);
    /* The index along k: pairs (2q, 2q + 1) cancel, and int12 alternates its roles. */
    const int64_t p = operand == OPERAND_A ? col : r;
    const uint64_t x = draw(seed, operand, item, r, col);
    switch (c->distribution) {
    case TG_DIST_WIDE:
        return (float)(unit(x) * ldexp(1.0, (int)((x >> 3) % 25) - 12));
    case TG_DIST_CANCEL:
        if (operand == OPERAND_A) /* a(i, 2q + 1) = a(i, 2q) */
            return (float)unit(draw(seed, operand, item, r, col & ~(int64_t)1));
        if (operand == OPERAND_B && (p & 1)) { /* b(2q + 1, j) = -b(2q, j) (1 + tiny) */
            const double even = (float)unit(draw(seed, operand, item, r - 1, col));
            return (float)(-even * (1.0 + unit(x) * 0x1.0p-12));
        }
        return (float)unit(x);
    case TG_DIST_INT12: {
        /* One side of each product a 12-bit odd integer, the other -1, 0 or 1, alternating
         * along k so that both A and B hold >11-bit values; C a 12-bit integer.  Every partial
         * sum of k <= 4096 terms stays below 2^24: exact in float32. */
        const int wide = operand == OPERAND_C || ((p & 1) == (operand == OPERAND_B));
        const int sign = (x >> 63) ? -1 : 1;
        return wide ? (float)(sign * (int)(2049 + 2 * ((x >> 8) % 1023)))
                    : (float)((int)(x % 3) - 1);
    }
    case TG_DIST_SPECIAL: {
        const unsigned pick = (unsigned)(x % 64);
        if (pick == 0)
            return INFINITY;
        if (pick == 1)
            return -INFINITY;
        if (pick == 2)
            return NAN;
        return (float)unit(x);
    }
    case TG_DIST_SUBNORMAL:
        if (operand == OPERAND_B)
            return (float)unit(x);
        /* Half subnormal, half within a factor 4 of FLT_MIN. */
        return (float)(unit(x) * ((x >> 4) & 1 ? 0x1.0p-127 : 0x1.0p-124));
    case TG_DIST_HUGE: {
        /* |sum| <= 2^126, |alpha|, |beta| <= 2 and |c| < 2^125: results below 2^128. */
        int kbits = 0;
        while (((int64_t)1 << kbits) < c->k && kbits < 62)
            ++kbits;
        if (operand == OPERAND_C)
            return (float)(unit(x) * 0x1.0p125);
        return (float)(unit(x) * ldexp(1.0, operand == OPERAND_A ? 63 : 63 - kbits));
    }
    default:
        return (float)unit(x);
    }
}

/* Offset of element (r, col) of op(X), X stored with this layout, transpose and ld.  Spelled
 * out case by case, the way the BLAS documentation defines it. */
static int64_t offset_op(tg_layout layout, tg_op op, int64_t ld, int64_t r, int64_t col)
{
    if (layout == TG_ROW_MAJOR)
        return op == TG_NO_TRANS ? r * ld + col  /* X(r, col) */
                                 : col * ld + r; /* X(col, r) */
    return op == TG_NO_TRANS ? r + col * ld      /* X(r, col), column-major */
                             : col + r * ld;     /* X(col, r), column-major */
}

static int64_t offset_c(tg_layout layout, int64_t ldc, int64_t i, int64_t j)
{
    return layout == TG_ROW_MAJOR ? i * ldc + j : i + j * ldc;
}

/* --- Storage --------------------------------------------------------------------------------- */

/* How one operand sits in memory: `lines` stored rows (row-major) or columns (column-major)
 * of `length` elements each, ld apart, items stride apart. */
typedef struct storage {
    int64_t lines, length, ld, stride, elements;
} storage;

/* Sizes in 128 bits, so that no option can overflow them; -1 in elements when it does not fit. */
static storage storage_of(const tg_case *c, int64_t rows, int64_t cols, int transposed)
{
    const int64_t stored_rows = transposed ? cols : rows, stored_cols = transposed ? rows : cols;
    storage s = {0, 0, 0, 0, -1};
    s.lines = c->layout == TG_ROW_MAJOR ? stored_rows : stored_cols;
    s.length = c->layout == TG_ROW_MAJOR ? stored_cols : stored_rows;
    const __int128 ld = (__int128)(s.length > 1 ? s.length : 1) + c->ld_pad;
    /* A gap between batch items as well, so a write past an item shows. */
    const __int128 stride = (__int128)s.lines * ld + c->ld_pad;
    const __int128 elements = stride * (c->batch > 0 ? c->batch : 1) + 1;
    if (c->ld_pad < 0 || ld > INT64_MAX / 8 || stride > INT64_MAX / 8 ||
        elements > INT64_MAX / 8)
        return s;
    s.ld = (int64_t)ld;
    s.stride = (int64_t)stride;
    s.elements = (int64_t)elements;
    return s;
}

int64_t tg_case_bytes(const tg_case *c)
{
    if (c->m < 0 || c->n < 0 || c->k < 0 || c->batch < 1 || c->ld_pad < 0)
        return -1;
    const storage sa = storage_of(c, c->m, c->k, c->transa == TG_TRANS);
    const storage sb = storage_of(c, c->k, c->n, c->transb == TG_TRANS);
    const storage sc = storage_of(c, c->m, c->n, 0);
    if (sa.elements < 0 || sb.elements < 0 || sc.elements < 0)
        return -1;
    /* Host copies and the library's view of A, B, C, the results read back, a mark per element
     * of C; the oracle itself needs no memory. */
    const __int128 bytes = ((__int128)sa.elements + sb.elements + sc.elements) * 3 *
                               (__int128)sizeof(float) +
                           sc.elements;
    return bytes > INT64_MAX ? -1 : (int64_t)bytes;
}

void tg_case_name(const tg_case *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "%s %c%c %lldx%lldx%lld ld+%lld alpha=%g beta=%g%s%s%s%s%s%s",
             c->layout == TG_ROW_MAJOR ? "row" : "col", c->transa == TG_TRANS ? 'T' : 'N',
             c->transb == TG_TRANS ? 'T' : 'N', (long long)c->m, (long long)c->n,
             (long long)c->k, (long long)c->ld_pad, c->alpha, c->beta,
             c->batch > 1 ? (c->share_a ? " batch(shared A)" : " batch") : "",
             c->misalign ? " misaligned" : "", c->small_ints ? " exact" : "",
             c->memory == TG_CHECK_DEVICE    ? " device"
             : c->memory == TG_CHECK_MANAGED ? " managed"
                                             : "",
             !c->small_ints && c->distribution ? " " : "",
             !c->small_ints && c->distribution ? tg_distribution_name(c->distribution) : "");
}

/* Operand buffers in the memory the case asks for; host copies stay for the reference. */
typedef struct operand {
    float *host;   /* what the caller's memory held before the call */
    float *base;   /* allocation the library sees (host, device or managed) */
    float *data;   /* base, or base + 1 when misaligned */
    int64_t elements;
} operand;

static int place(const tg_case *c, operand *o, char *detail, size_t detail_size)
{
    const size_t bytes = (size_t)(o->elements + 1) * sizeof(float);
    if (c->memory == TG_CHECK_HOST) {
        o->base = malloc(bytes);
        if (!o->base)
            return snprintf(detail, detail_size, "out of host memory (%zu bytes)", bytes), -1;
    } else {
#ifdef TG_HAVE_CUDA
        void *p = NULL;
        cudaError_t e = c->memory == TG_CHECK_DEVICE ? cudaMalloc(&p, bytes)
                                                     : cudaMallocManaged(&p, bytes, 1);
        if (e != cudaSuccess)
            return snprintf(detail, detail_size, "allocation of %zu bytes failed: %s", bytes,
                            cudaGetErrorString(e)),
                   -1;
        o->base = p;
#else
        return snprintf(detail, detail_size, "device memory needs a CUDA build"), -1;
#endif
    }
    o->data = o->base + (c->misalign ? 1 : 0);
    return 0;
}

static int upload(const tg_case *c, operand *o)
{
#ifdef TG_HAVE_CUDA
    /* A pageable cudaMemcpy may return before its DMA lands: wait, so no stream of the
     * library can see the operands half written. */
    if (c->memory != TG_CHECK_HOST)
        return cudaMemcpy(o->data, o->host, (size_t)o->elements * sizeof(float),
                          cudaMemcpyDefault) == cudaSuccess &&
                       cudaDeviceSynchronize() == cudaSuccess
                   ? 0
                   : -1;
#endif
    (void)c;
    memcpy(o->data, o->host, (size_t)o->elements * sizeof(float));
    return 0;
}

static int download(const tg_case *c, const operand *o, float *out)
{
#ifdef TG_HAVE_CUDA
    if (c->memory != TG_CHECK_HOST)
        return cudaMemcpy(out, o->data, (size_t)o->elements * sizeof(float),
                          cudaMemcpyDefault) == cudaSuccess ? 0 : -1;
#endif
    (void)c;
    memcpy(out, o->data, (size_t)o->elements * sizeof(float));
    return 0;
}

static void release(const tg_case *c, operand *o)
{
    free(o->host);
    if (c->memory == TG_CHECK_HOST)
        free(o->base);
#ifdef TG_HAVE_CUDA
    else if (o->base)
        cudaFree(o->base);
#endif
}

/* --- The float64 oracle ------------------------------------------------------------------------ */

typedef struct oracle {
    const tg_case *c;
    const float *A, *B, *C; /* the host copies, as the caller's memory held them */
    storage sa, sb, sc;
    int64_t stride_a;
} oracle;

/* alpha * sum op(A)(i, p) op(B)(p, j) + beta * c(i, j) in float64, IEEE all the way (Inf * 0 is
 * NaN, as in the reference BLAS), and its magnitude sum |alpha a b| + |beta c|.  Reads A and B
 * only when alpha != 0 and k > 0, C only when beta != 0. */
static double input_value(float x, int flush_subnormals)
{
    return flush_subnormals && fabsf(x) < FLT_MIN ? 0.0 : (double)x;
}

static double oracle_element(const oracle *o, int64_t b, int64_t i, int64_t j,
                             int flush_subnormals, double *magnitude)
{
    const tg_case *c = o->c;
    double value = 0.0, mag = 0.0;
    if (c->alpha != 0.0f && c->k > 0) {
        const float *A = o->A + b * o->stride_a, *B = o->B + b * o->sb.stride;
        double sum = 0.0, abs_sum = 0.0;
        for (int64_t p = 0; p < c->k; ++p) {
            const double prod =
                input_value(A[offset_op(c->layout, c->transa, o->sa.ld, i, p)], flush_subnormals) *
                input_value(B[offset_op(c->layout, c->transb, o->sb.ld, p, j)], flush_subnormals);
            sum += prod;
            abs_sum += fabs(prod);
        }
        value = (double)c->alpha * sum;
        mag = fabs((double)c->alpha) * abs_sum;
    }
    if (c->beta != 0.0f) {
        const double bc =
            (double)c->beta * (double)o->C[b * o->sc.stride + offset_c(c->layout, o->sc.ld, i, j)];
        value += bc;
        mag += fabs(bc);
    }
    *magnitude = mag;
    return value;
}

/* Where round to nearest leaves float32's range: FLT_MAX plus half its ulp. */
static const double kFloatOverflow = 0x1.ffffffp+127;

int tg_float_agrees(float got, double want, double bound)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(got) && !isinf(want)) /* float32 holds want as inf if want may reach the threshold */
        return (got > 0) == (want > 0) && fabs(want) + bound >= kFloatOverflow;
    if (isinf(want) || isinf(got))
        return (double)got == want;
    return fabs((double)got - want) <= bound;
}

double tg_rms_limit(const tg_case *c, tg_check_arith arith)
{
    const double fp32 = sqrt((double)c->k + 2.0) * 0x1.0p-24;
    return arith == TG_CHECK_TF32 ? 0x1.0p-10 + fp32 : fp32;
}

int tg_rms_measured(const tg_case *c)
{
    return !c->small_ints && c->alpha != 0.0f && c->k >= 1 &&
           (__int128)c->m * c->n * c->batch >= 256 &&
           (c->distribution == TG_DIST_UNIFORM || c->distribution == TG_DIST_WIDE ||
            c->distribution == TG_DIST_CANCEL || c->distribution == TG_DIST_HUGE);
}

void tg_check_against_strict(const tg_case *c, tg_case_result *r, const tg_case_result *strict)
{
    if (r->status != TG_SUCCESS || r->harness || r->rms < 0 || !strict || strict->rms < 0)
        return;
    const double limit = fmax(tg_rms_limit(c, r->arith), 1.5 * strict->rms);
    r->rms_limit = limit;
    if (r->rms <= limit || r->arith == TG_CHECK_TF32)
        return; /* TF32 keeps its own limit: it is reported beside FP32, not held to it */
    if (r->passed)
        snprintf(r->detail, sizeof r->detail,
                 "RMS relative error %.3g is above max(%.3g, 1.5 x the strict FMA path's %.3g)",
                 r->rms, tg_rms_limit(c, r->arith), strict->rms);
    r->passed = 0;
}

void tg_check_case(tg_handle *h, const tg_case *c_in, uint64_t seed, tg_case_result *r)
{
    memset(r, 0, sizeof *r);
    r->scaled_error = INFINITY;
    r->rms = -1.0;
    r->status = TG_SUCCESS;
    r->arith = tg_handle_arith(h);
    tg_case cc = *c_in;
    const tg_case *c = &cc;
    if (c->small_ints)
        cc.distribution = TG_DIST_UNIFORM;
    if (cc.distribution == TG_DIST_INT12) {
        /* Scalars that keep integer sums exact: 0, +-1 and +-2. */
        if (cc.alpha != 0.0f && fabsf(cc.alpha) != 1.0f && fabsf(cc.alpha) != 2.0f)
            cc.alpha = cc.alpha < 0 ? -1.0f : 1.0f;
        if (cc.beta != 0.0f && fabsf(cc.beta) != 1.0f)
            cc.beta = cc.beta < 0 ? -1.0f : 1.0f;
    }
    if (cc.distribution == TG_DIST_HUGE) {
        cc.alpha = fmaxf(-2.0f, fminf(2.0f, cc.alpha));
        cc.beta = fmaxf(-2.0f, fminf(2.0f, cc.beta));
    }
    r->exact = c->small_ints || (c->distribution == TG_DIST_INT12 && r->arith == TG_CHECK_FFMA);

    const int64_t bytes = tg_case_bytes(c);
    const storage sa = storage_of(c, c->m, c->k, c->transa == TG_TRANS);
    const storage sb = storage_of(c, c->k, c->n, c->transb == TG_TRANS);
    const storage sc = storage_of(c, c->m, c->n, 0);
    operand ops[3] = {{.elements = sa.elements}, {.elements = sb.elements},
                      {.elements = sc.elements}};
    float *result = NULL, *inputs_after = NULL;
    unsigned char *inside = NULL;
    if (bytes < 0 || (uint64_t)bytes > SIZE_MAX / 2) {
        r->harness = 1;
        snprintf(r->detail, sizeof r->detail, "the case's buffers do not fit in memory sizes");
        goto done;
    }
    const int64_t stride_a = c->share_a ? 0 : sa.stride;
    const int64_t outputs = c->m * c->n * c->batch;
    const int64_t biggest = sa.elements > sb.elements ? sa.elements : sb.elements;
    result = malloc((size_t)sc.elements * sizeof(float));
    inputs_after = malloc((size_t)biggest * sizeof(float));
    inside = calloc((size_t)sc.elements, 1);
    int ok = result && inputs_after && inside;
    for (int i = 0; i < 3 && ok; ++i)
        ok = (ops[i].host = malloc((size_t)ops[i].elements * sizeof(float))) != NULL &&
             place(c, &ops[i], r->detail, sizeof r->detail) == 0;
    if (!ok) {
        r->harness = 1;
        if (!r->detail[0])
            snprintf(r->detail, sizeof r->detail, "out of host memory (%lld bytes needed)",
                     (long long)bytes);
        goto done;
    }

    /* Padding holds NaN; the matrices their distribution; C the poison when beta = 0. */
    for (int i = 0; i < 3; ++i)
        for (int64_t e = 0; e < ops[i].elements; ++e)
            memcpy(&ops[i].host[e], i == 2 && c->beta == 0.0f ? &kPoisonBits : &kPadBits, 4);
    int nonzero = 0;
    for (int64_t b = 0; b < (c->share_a ? 1 : c->batch); ++b)
        for (int64_t i = 0; i < c->m; ++i)
            for (int64_t p = 0; p < c->k; ++p)
                nonzero |= (ops[0].host[b * sa.stride +
                                        offset_op(c->layout, c->transa, sa.ld, i, p)] =
                                value_of(c, seed, OPERAND_A, b, i, p)) != 0.0f;
    for (int64_t b = 0; b < c->batch; ++b)
        for (int64_t p = 0; p < c->k; ++p)
            for (int64_t j = 0; j < c->n; ++j)
                ops[1].host[b * sb.stride + offset_op(c->layout, c->transb, sb.ld, p, j)] =
                    value_of(c, seed, OPERAND_B, b, p, j);
    if (c->beta != 0.0f)
        for (int64_t b = 0; b < c->batch; ++b)
            for (int64_t i = 0; i < c->m; ++i)
                for (int64_t j = 0; j < c->n; ++j)
                    ops[2].host[b * sc.stride + offset_c(c->layout, sc.ld, i, j)] =
                        value_of(c, seed, OPERAND_C, b, i, j);
    if (!nonzero && c->m > 0 && c->n > 0 && c->k > 0 && c->alpha != 0.0f) {
        snprintf(r->detail, sizeof r->detail, "generated operands are all zero (seed %llu)",
                 (unsigned long long)seed);
        r->harness = 1;
        goto done;
    }
    for (int i = 0; i < 3; ++i)
        if (upload(c, &ops[i]) != 0) {
            r->harness = 1;
            snprintf(r->detail, sizeof r->detail, "copy of operands to the device failed");
            goto done;
        }

    if (c->batch == 1)
        r->status = tg_sgemm(h, c->layout, c->transa, c->transb, c->m, c->n, c->k, c->alpha,
                             ops[0].data, sa.ld, ops[1].data, sb.ld, c->beta, ops[2].data, sc.ld);
    else
        r->status = tg_sgemm_strided_batched(h, c->layout, c->transa, c->transb, c->m, c->n,
                                             c->k, c->alpha, ops[0].data, sa.ld, stride_a,
                                             ops[1].data, sb.ld, sb.stride, c->beta, ops[2].data,
                                             sc.ld, sc.stride, c->batch);
    if (r->status == TG_SUCCESS)
        r->status = tg_synchronize(h);
    if (r->status != TG_SUCCESS) {
        r->refused = r->status == TG_ERROR_NOT_SUPPORTED && strcmp(tg_get_algo(h), "auto") != 0;
        snprintf(r->detail, sizeof r->detail, "%s: %s", tg_status_string(r->status),
                 tg_last_error(h));
        goto done;
    }
    if (download(c, &ops[2], result) != 0) {
        r->harness = 1;
        snprintf(r->detail, sizeof r->detail, "copy of C from the device failed");
        goto done;
    }
    /* A and B, padding included, must come back bit for bit. */
    for (int i = 0; i < 2; ++i) {
        if (download(c, &ops[i], inputs_after) != 0) {
            r->harness = 1;
            snprintf(r->detail, sizeof r->detail, "copy of A or B from the device failed");
            goto done;
        }
        for (int64_t e = 0; e < ops[i].elements; ++e)
            r->moved_inputs += memcmp(&inputs_after[e], &ops[i].host[e], sizeof(float)) != 0;
    }

    /* The oracle, and the comparison. */
    const oracle o = {c, ops[0].host, ops[1].host, ops[2].host, sa, sb, sc, stride_a};
    /* TF32 reads 10 bits of mantissa; 3xTF32 drops the small x small product and the tensor
     * core truncates each small part to TF32, about 2^-21 of each product whatever k, which
     * rules at k of a few (auto uses 3xTF32 from k = 256, where FP32's own rounding is larger). */
    const double eps_units = (double)(c->k + 2) * FLT_EPSILON +
                             (r->arith == TG_CHECK_TF32     ? 0x1.0p-9
                              : r->arith == TG_CHECK_3XTF32 ? 0x1.0p-21
                                                            : 0.0);
    double worst = 0.0, sum_sq = 0.0;
    int64_t measured = 0, special_mismatch = 0;
    for (int64_t b = 0; b < c->batch; ++b)
        for (int64_t i = 0; i < c->m; ++i)
            for (int64_t j = 0; j < c->n; ++j) {
                const int64_t at = b * sc.stride + offset_c(c->layout, sc.ld, i, j);
                double mag;
                const double want = oracle_element(&o, b, i, j, 0, &mag);
                const double got = (double)result[at];
                inside[at] = 1;
                if (isnan(want) || isnan(got) || isinf(want) || isinf(got)) {
                    /* NaN where the reference has NaN, the same infinity where it has one, and
                     * an infinity where the reference, finite in float64, rounds to one in
                     * float32: compared as float32 holds it, within this case's limit. */
                    const double limit = r->exact ? 0.0 : 1.0;
                    const int same = tg_float_agrees(result[at], want,
                                                     limit * eps_units * fmax(mag, FLT_MIN));
                    special_mismatch += !same;
                    if (!same)
                        worst = INFINITY;
                    continue;
                }
                double err = fabs(got - want);
                if (r->arith == TG_CHECK_TF32 && err > eps_units * fmax(mag, FLT_MIN)) {
                    /* TF32 mode may read FP32 subnormals as zero, as the tensor core does */
                    double flushed_mag;
                    err = fmin(err, fabs(got - oracle_element(&o, b, i, j, 1, &flushed_mag)));
                }
                if (mag > 0.0) {
                    sum_sq += (err / mag) * (err / mag);
                    ++measured;
                }
                if (got == want)
                    continue;
                const double scale = fmax(mag, FLT_MIN);
                if (!(err / (eps_units * scale) <= worst))
                    worst = err / (eps_units * scale);
            }
    r->scaled_error = outputs > 0 ? worst : 0.0;
    if (tg_rms_measured(c)) {
        r->rms = measured ? sqrt(sum_sq / (double)measured) : 0.0;
        r->rms_limit = tg_rms_limit(c, r->arith);
    }

    for (int64_t e = 0; e < sc.elements; ++e)
        if (!inside[e] && memcmp(&result[e], &ops[2].host[e], sizeof(float)) != 0)
            ++r->moved_outside;

    const double limit = r->exact ? 0.0 : 1.0;
    const int rms_ok = r->rms < 0 || r->rms <= r->rms_limit;
    r->passed = r->scaled_error <= limit && rms_ok && r->moved_outside == 0 &&
                r->moved_inputs == 0;
    if (!r->passed)
        snprintf(r->detail, sizeof r->detail,
                 "scaled error %.3g (limit %g, %s), %lld special values differ, RMS %.3g (limit "
                 "%.3g), %lld elements outside C changed, %lld elements of A or B changed",
                 r->scaled_error, limit, tg_check_arith_name(r->arith),
                 (long long)special_mismatch, r->rms, r->rms_limit,
                 (long long)r->moved_outside, (long long)r->moved_inputs);
done:
    for (int i = 0; i < 3; ++i)
        release(c, &ops[i]);
    free(result);
    free(inputs_after);
    free(inside);
}
