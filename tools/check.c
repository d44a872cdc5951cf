/* One checked run of tg_sgemm; see check.h. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "internal.h"
#include "rng.h"

#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* A NaN with a payload nothing computes: an element still holding it was never written. */
static const uint32_t kPoisonBits = 0x7fc0bad0u;

static float random_value(uint64_t *state, int small_ints)
{
    const uint64_t r = tg_splitmix64(state);
    if (small_ints)
        return (float)((int)(r % 9) - 4);
    return (float)((double)(r >> 11) * 0x1.0p-53 * 2.0 - 1.0);
}

/* How one operand sits in memory: `lines` stored rows (row-major) or columns (column-major)
 * of `length` elements each, ld apart, items stride apart. */
typedef struct storage {
    int64_t lines, length, ld, stride, elements;
} storage;

static storage storage_of(const tg_case *c, int64_t rows, int64_t cols, int transposed)
{
    const int64_t stored_rows = transposed ? cols : rows, stored_cols = transposed ? rows : cols;
    storage s;
    s.lines = c->layout == TG_ROW_MAJOR ? stored_rows : stored_cols;
    s.length = c->layout == TG_ROW_MAJOR ? stored_cols : stored_rows;
    s.ld = (s.length > 1 ? s.length : 1) + c->ld_pad;
    /* A gap between batch items as well, so a write past an item shows. */
    s.stride = s.lines * s.ld + c->ld_pad;
    s.elements = s.stride * (c->batch > 0 ? c->batch : 1) + 1;
    return s;
}

void tg_case_name(const tg_case *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "%s %c%c %lldx%lldx%lld ld+%lld alpha=%g beta=%g%s%s%s%s",
             c->layout == TG_ROW_MAJOR ? "row" : "col", c->transa == TG_TRANS ? 'T' : 'N',
             c->transb == TG_TRANS ? 'T' : 'N', (long long)c->m, (long long)c->n,
             (long long)c->k, (long long)c->ld_pad, c->alpha, c->beta,
             c->batch > 1 ? (c->share_a ? " batch(shared A)" : " batch") : "",
             c->misalign ? " misaligned" : "", c->small_ints ? " exact" : "",
             c->memory == TG_CHECK_DEVICE    ? " device"
             : c->memory == TG_CHECK_MANAGED ? " managed"
                                             : "");
}

void tg_case_command(const tg_case *c, const char *algo, uint64_t seed, char *buf, int size)
{
    snprintf(buf, (size_t)size,
             "tilegemm verify --algo %s --layout %s --trans %c%c --shape %lldx%lldx%lld "
             "--ld-pad %lld --alpha %g --beta %g --batch %lld%s%s%s%s --seed %llu",
             algo, c->layout == TG_ROW_MAJOR ? "row" : "col", c->transa == TG_TRANS ? 'T' : 'N',
             c->transb == TG_TRANS ? 'T' : 'N', (long long)c->m, (long long)c->n,
             (long long)c->k, (long long)c->ld_pad, c->alpha, c->beta, (long long)c->batch,
             c->share_a ? " --share-a" : "", c->misalign ? " --misalign" : "",
             c->small_ints ? " --exact" : "",
             c->memory == TG_CHECK_DEVICE    ? " --memory device"
             : c->memory == TG_CHECK_MANAGED ? " --memory managed"
                                             : "",
             (unsigned long long)seed);
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
            return snprintf(detail, detail_size, "out of host memory"), -1;
    } else {
#ifdef TG_HAVE_CUDA
        void *p = NULL;
        cudaError_t e = c->memory == TG_CHECK_DEVICE ? cudaMalloc(&p, bytes)
                                                     : cudaMallocManaged(&p, bytes, 1);
        if (e != cudaSuccess)
            return snprintf(detail, detail_size, "allocation failed: %s", cudaGetErrorString(e)),
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

void tg_check_case(tg_handle *h, const tg_case *c, uint64_t seed, tg_case_result *r)
{
    memset(r, 0, sizeof *r);
    r->scaled_error = INFINITY;
    const storage sa = storage_of(c, c->m, c->k, c->transa == TG_TRANS);
    const storage sb = storage_of(c, c->k, c->n, c->transb == TG_TRANS);
    const storage sc = storage_of(c, c->m, c->n, 0);
    const int64_t stride_a = c->share_a ? 0 : sa.stride;
    operand ops[3] = {{.elements = sa.elements}, {.elements = sb.elements},
                      {.elements = sc.elements}};
    float *result = malloc((size_t)sc.elements * sizeof(float));
    const int64_t outputs = c->m * c->n * (c->batch > 0 ? c->batch : 1);
    double *ref = malloc((size_t)(outputs > 0 ? outputs : 1) * sizeof(double));
    double *bound = malloc((size_t)(outputs > 0 ? outputs : 1) * sizeof(double));
    unsigned char *inside = calloc((size_t)sc.elements, 1);
    int ok = result && ref && bound && inside;
    for (int i = 0; i < 3 && ok; ++i)
        ok = (ops[i].host = malloc((size_t)ops[i].elements * sizeof(float))) != NULL &&
             place(c, &ops[i], r->detail, sizeof r->detail) == 0;
    if (!ok) {
        if (!r->detail[0])
            snprintf(r->detail, sizeof r->detail, "out of host memory");
        goto done;
    }

    /* Fresh operands, never all zero; C random when beta reads it, else poisoned. */
    uint64_t state = seed;
    int nonzero = 0;
    for (int i = 0; i < 2; ++i)
        for (int64_t e = 0; e < ops[i].elements; ++e)
            nonzero |= (ops[i].host[e] = random_value(&state, c->small_ints)) != 0.0f;
    for (int64_t e = 0; e < sc.elements; ++e) {
        if (c->beta != 0.0f)
            ops[2].host[e] = random_value(&state, c->small_ints);
        else
            memcpy(&ops[2].host[e], &kPoisonBits, sizeof kPoisonBits);
    }
    if (!nonzero && c->m * c->n * c->k > 0) {
        snprintf(r->detail, sizeof r->detail, "generated operands are all zero (seed %llu)",
                 (unsigned long long)seed);
        goto done;
    }
    for (int i = 0; i < 3; ++i)
        if (upload(c, &ops[i]) != 0) {
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
        snprintf(r->detail, sizeof r->detail, "%s: %s", tg_status_string(r->status),
                 tg_last_error(h));
        goto done;
    }
    if (download(c, &ops[2], result) != 0) {
        snprintf(r->detail, sizeof r->detail, "copy of C from the device failed");
        goto done;
    }

    /* The reference sees the same call on the host copies. */
    const tg_call call = {.layout = c->layout, .transa = c->transa, .transb = c->transb,
                          .m = c->m, .n = c->n, .k = c->k, .alpha = c->alpha, .beta = c->beta,
                          .A = ops[0].host, .lda = sa.ld, .stride_a = stride_a,
                          .B = ops[1].host, .ldb = sb.ld, .stride_b = sb.stride,
                          .C = ops[2].host, .ldc = sc.ld, .stride_c = sc.stride,
                          .batch = c->batch, .batched = c->batch != 1};
    tg_problem p;
    tg_normalize(&call, &p);
    tg_ref_gemm_f64(&p, ops[2].host, ref, bound);
    p.C = result;
    r->scaled_error = outputs > 0 ? tg_scaled_error(&p, result, ref, bound) : 0.0;

    for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t i = 0; i < p.m; ++i)
            for (int64_t j = 0; j < p.n; ++j)
                inside[b * p.stride_c + i * p.ldc + j] = 1;
    for (int64_t e = 0; e < sc.elements; ++e)
        if (!inside[e] && memcmp(&result[e], &ops[2].host[e], sizeof(float)) != 0)
            ++r->moved_outside;

    const double limit = c->small_ints ? 0.0 : 1.0;
    r->passed = r->scaled_error <= limit && r->moved_outside == 0;
    if (!r->passed)
        snprintf(r->detail, sizeof r->detail,
                 "scaled error %.3g (limit %g), %lld elements outside C changed",
                 r->scaled_error, limit, (long long)r->moved_outside);
done:
    for (int i = 0; i < 3; ++i)
        release(c, &ops[i]);
    free(result);
    free(ref);
    free(bound);
    free(inside);
}
