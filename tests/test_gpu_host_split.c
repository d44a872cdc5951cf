/*
 * Products of host operands over GPUs (tg_set_devices, host_tiles.cu), on the GPU.
 *
 * On one GPU: shapes of several tiles (m or n past TG_TILE_MAX), of several k-cuts (k past
 * TG_K_CUT_MAX, the last cut shorter), odd shapes, both layouts, all transposes, padded leading
 * dimensions, beta = 0 over a C of NaN and beta != 0, from pageable and from pinned memory: C
 * exact (small integers) on sampled elements and against a float64 product, its padding
 * untouched.  On two GPUs, where there are two: every case bit-identical to one GPU (one shape
 * gives each GPU a row of tiles, which go cut by cut), with the devices in either order and with
 * TG_ALL_DEVICES; explain shows the split; a CUDA failure injected in the middle of a call returns
 * one error saying whether C is partly written, every tile either written whole and right or
 * untouched; the handle then works again.  tg_set_devices refuses bad lists naming the entry.
 *
 * Skipped (77) without a GPU; with one GPU the one-GPU part runs and the test then reports
 * skipped (a failure still fails).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testing.h"

#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

typedef struct operands {
    float *A, *B, *C, *C0;
    size_t a, b, c;
    int pinned;
} operands;

static uint64_t rng = 88172645463325252ULL;
static float small_int(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((int)(rng % 5) - 2);
}

static float *host_alloc(size_t count, int pinned)
{
#ifdef TG_HAVE_CUDA
    if (pinned) {
        void *p = NULL;
        return cudaHostAlloc(&p, count * sizeof(float), cudaHostAllocPortable) == cudaSuccess
                   ? p
                   : NULL;
    }
#endif
    (void)pinned;
    return malloc(count * sizeof(float));
}

static void host_free(float *p, int pinned)
{
#ifdef TG_HAVE_CUDA
    if (pinned) {
        cudaFreeHost(p);
        return;
    }
#endif
    (void)pinned;
    free(p);
}

typedef struct problem {
    tg_layout layout;
    tg_op ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    float beta;
} problem;

static int make(const problem *q, int pinned, operands *o)
{
    const int row = q->layout == TG_ROW_MAJOR;
    const int64_t a_lines = row ? (q->ta == TG_NO_TRANS ? q->m : q->k)
                                : (q->ta == TG_NO_TRANS ? q->k : q->m);
    const int64_t b_lines = row ? (q->tb == TG_NO_TRANS ? q->k : q->n)
                                : (q->tb == TG_NO_TRANS ? q->n : q->k);
    o->a = (size_t)(a_lines * q->lda);
    o->b = (size_t)(b_lines * q->ldb);
    o->c = (size_t)((row ? q->m : q->n) * q->ldc);
    o->pinned = pinned;
    o->A = host_alloc(o->a, pinned), o->B = host_alloc(o->b, pinned);
    o->C = host_alloc(o->c, pinned), o->C0 = malloc(o->c * sizeof(float));
    if (!o->A || !o->B || !o->C || !o->C0)
        return -1;
    for (size_t i = 0; i < o->a; ++i)
        o->A[i] = small_int();
    for (size_t i = 0; i < o->b; ++i)
        o->B[i] = small_int();
    for (size_t i = 0; i < o->c; ++i)
        o->C0[i] = q->beta == 0.0f ? NAN : small_int();
    return 0;
}

static void release(operands *o)
{
    host_free(o->A, o->pinned), host_free(o->B, o->pinned), host_free(o->C, o->pinned);
    free(o->C0);
}

static tg_status run(tg_handle *h, const problem *q, operands *o)
{
    memcpy(o->C, o->C0, o->c * sizeof(float));
    return tg_sgemm(h, q->layout, q->ta, q->tb, q->m, q->n, q->k, 1.0f, o->A, q->lda, o->B,
                    q->ldb, q->beta, o->C, q->ldc);
}

/* op(X)(i, p) of a stored matrix */
static float at(const float *X, tg_layout layout, tg_op op, int64_t ld, int64_t i, int64_t p)
{
    const int64_t r = op == TG_NO_TRANS ? i : p, c = op == TG_NO_TRANS ? p : i;
    return layout == TG_ROW_MAJOR ? X[r * ld + c] : X[c * ld + r];
}

/* Elements of C wrong (sampled, exact), and padding elements touched. */
static int64_t wrong_elements(const problem *q, const operands *o, int samples)
{
    int64_t wrong = 0;
    const int row = q->layout == TG_ROW_MAJOR;
    for (int s = 0; s < samples; ++s) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        const int64_t i = (int64_t)(rng % (uint64_t)q->m), j = (int64_t)((rng >> 32) % (uint64_t)q->n);
        const size_t e = row ? (size_t)(i * q->ldc + j) : (size_t)(j * q->ldc + i);
        double sum = q->beta == 0.0f ? 0.0 : (double)q->beta * o->C0[e];
        for (int64_t p = 0; p < q->k; ++p)
            sum += (double)at(o->A, q->layout, q->ta, q->lda, i, p) *
                   at(o->B, q->layout, q->tb, q->ldb, p, j);
        wrong += (float)sum != o->C[e];
    }
    const int64_t lines = row ? q->m : q->n, length = row ? q->n : q->m;
    for (int64_t l = 0; l < lines; ++l)
        for (int64_t x = length; x < q->ldc; ++x)
            wrong += memcmp(&o->C[l * q->ldc + x], &o->C0[l * q->ldc + x], sizeof(float)) != 0;
    return wrong;
}

static const char *describe(const problem *q, int pinned, char *buf, size_t size)
{
    snprintf(buf, size, "%s %c%c %lldx%lldx%lld ld %lld,%lld,%lld beta %g %s",
             q->layout == TG_ROW_MAJOR ? "row" : "col", q->ta == TG_TRANS ? 'T' : 'N',
             q->tb == TG_TRANS ? 'T' : 'N', (long long)q->m, (long long)q->n, (long long)q->k,
             (long long)q->lda, (long long)q->ldb, (long long)q->ldc, (double)q->beta,
             pinned ? "pinned" : "pageable");
    return buf;
}

static int gpus;

static void check_case(const problem *q, int pinned)
{
    char what[200];
    describe(q, pinned, what, sizeof what);
    operands o;
    memset(&o, 0, sizeof o);
    tg_handle *h = NULL;
    if (make(q, pinned, &o) != 0 || tg_create(&h) != TG_SUCCESS ||
        tg_set_backend(h, TG_BACKEND_CUDA) != TG_SUCCESS) {
        EXPECT(0, "%s: set-up failed", what);
        release(&o);
        tg_destroy(h);
        return;
    }
    tg_status s = run(h, q, &o);
    EXPECT(s == TG_SUCCESS, "%s, 1 GPU: %s", what, tg_last_error(h));
    const int64_t wrong = s == TG_SUCCESS ? wrong_elements(q, &o, 300) : -1;
    EXPECT(wrong == 0, "%s, 1 GPU: %lld elements wrong (sampled) or padding touched", what,
           (long long)wrong);
    float *one = malloc(o.c * sizeof(float));
    memcpy(one, o.C, o.c * sizeof(float));
    if (gpus >= 2) {
        const int orders[3][2] = {{0, 1}, {1, 0}, {0, 0}};
        for (int v = 0; v < 3; ++v) {
            s = v < 2 ? tg_set_devices(h, orders[v], 2) : tg_set_devices(h, NULL, TG_ALL_DEVICES);
            EXPECT(s == TG_SUCCESS, "%s: tg_set_devices: %s", what, tg_last_error(h));
            s = run(h, q, &o);
            EXPECT(s == TG_SUCCESS && memcmp(one, o.C, o.c * sizeof(float)) == 0,
                   "%s, devices %s: %s", what,
                   v == 0 ? "0,1" : v == 1 ? "1,0" : "all",
                   s == TG_SUCCESS ? "C differs from 1 GPU's bits" : tg_last_error(h));
        }
    }
    free(one);
    tg_destroy(h);
    release(&o);
}

static void check_arguments(void)
{
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS)
        return;
    int got[TG_MAX_DEVICES];
    EXPECT(tg_get_devices(h, got, TG_MAX_DEVICES) == 1, "default: %d GPUs",
           tg_get_devices(h, got, TG_MAX_DEVICES));
    const int bad[] = {0, 99};
    EXPECT(tg_set_devices(h, bad, 2) == TG_ERROR_INVALID_ARGUMENT &&
               strstr(tg_last_error(h), "GPU 99") != NULL,
           "GPU 99: %s", tg_last_error(h));
    const int twice[] = {0, 0};
    EXPECT(tg_set_devices(h, twice, 2) == TG_ERROR_INVALID_ARGUMENT &&
               strstr(tg_last_error(h), "twice") != NULL,
           "0,0: %s", tg_last_error(h));
    EXPECT(tg_set_devices(h, NULL, 2) == TG_ERROR_INVALID_ARGUMENT, "NULL devices accepted");
    EXPECT(tg_set_devices(h, NULL, -2) == TG_ERROR_INVALID_ARGUMENT, "count -2 accepted");
    EXPECT(tg_get_devices(h, got, TG_MAX_DEVICES) == 1, "a refused list changed the handle's");
    EXPECT(tg_set_devices(h, NULL, TG_ALL_DEVICES) == TG_SUCCESS &&
               tg_get_devices(h, got, TG_MAX_DEVICES) == gpus,
           "all: %s", tg_last_error(h));
    tg_destroy(h);
}

/* Fails the third wait for a C tile's copy, on whichever GPU gets there. */
static atomic_int waits;
static int fail_third_wait(const char *site)
{
    return strstr(site, "cudaEventSynchronize(l->c_free") != NULL &&
           atomic_fetch_add(&waits, 1) == 2;
}

static void check_failure(int gpus)
{
    const problem q = {TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 9000, 9000, 256, 9000, 256, 9001,
                       0.5f};
    operands o;
    memset(&o, 0, sizeof o);
    tg_handle *h = NULL;
    if (make(&q, 0, &o) != 0 || tg_create(&h) != TG_SUCCESS ||
        tg_set_backend(h, TG_BACKEND_CUDA) != TG_SUCCESS ||
        tg_set_devices(h, NULL, TG_ALL_DEVICES) != TG_SUCCESS) {
        EXPECT(0, "failure case: set-up failed");
        release(&o);
        tg_destroy(h);
        return;
    }
    char explain[2048], over[40];
    snprintf(over, sizeof over, "over %d GPU(s)", gpus); /* TG_ALL_DEVICES: every GPU present */
    EXPECT(tg_explain(h, q.layout, q.ta, q.tb, q.m, q.n, q.k, o.A, q.lda, o.B, q.ldb, o.C, q.ldc,
                      explain, sizeof explain) == TG_SUCCESS &&
               strstr(explain, "split:") && strstr(explain, over),
           "explain does not show the split: %s", explain);
    EXPECT(run(h, &q, &o) == TG_SUCCESS, "failure case without a fault: %s", tg_last_error(h));
    float *good = malloc(o.c * sizeof(float));
    memcpy(good, o.C, o.c * sizeof(float));
    atomic_store(&waits, 0);
    tg_fault_hook = fail_third_wait;
    const tg_status s = run(h, &q, &o);
    tg_fault_hook = NULL;
    const char *msg = tg_last_error(h);
    EXPECT(s == TG_ERROR_CUDA && strstr(msg, "GPU ") &&
               (strstr(msg, "C is partly written") || strstr(msg, "C was not written")),
           "a failed wait: status %d, \"%s\"", s, msg);
    /* each tile of C (column-major: normalized rows are C's columns) whole or untouched */
    const tg_tile_grid g = tg_tile_grid_of(q.n, q.m, q.k);
    int64_t written = 0, torn = 0;
    for (int64_t t = 0; t < tg_tile_count(&g); ++t) {
        const tg_tile tile = tg_tile_at(&g, t);
        int64_t same_new = 0, same_old = 0;
        for (int64_t i = 0; i < tile.m; ++i)
            for (int64_t j = 0; j < tile.n; ++j) {
                const size_t e = (size_t)((tile.i0 + i) * q.ldc + tile.j0 + j);
                same_new += memcmp(&o.C[e], &good[e], 4) == 0;
                same_old += memcmp(&o.C[e], &o.C0[e], 4) == 0;
            }
        written += same_new == tile.m * tile.n;
        torn += same_new != tile.m * tile.n && same_old != tile.m * tile.n;
    }
    EXPECT(torn == 0, "%lld tiles half-written after a failure", (long long)torn);
    EXPECT((written > 0) == (strstr(msg, "partly written") != NULL),
           "%lld tiles written, message \"%s\"", (long long)written, msg);
    EXPECT(run(h, &q, &o) == TG_SUCCESS && memcmp(o.C, good, o.c * sizeof(float)) == 0,
           "the call after a failure: %s", tg_last_error(h));
    free(good);
    tg_destroy(h);
    release(&o);
}

int main(void)
{
    const int need = tg_test_need_gpu("test_gpu_host_split");
    if (need)
        return need;
#ifdef TG_HAVE_CUDA
    cudaGetDeviceCount(&gpus);
#endif
    check_arguments();
    const tg_op ops[] = {TG_NO_TRANS, TG_TRANS};
    /* 4500x8200x9000 row-major: on two GPUs a row of three tiles each, three k-cuts: the first
     * tiles' cut-by-cut path (column-major products are tiled as their transposes) */
    const int64_t shapes[][3] = {{5000, 4500, 300}, {4097, 9001, 77}, {300, 200, 33},
                                 {1, 8200, 64},     {8200, 3, 129},   {4500, 300, 9000},
                                 {4500, 8200, 9000}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; ++si)
        for (int l = 0; l < 2; ++l)
            for (int ta = 0; ta < 2; ++ta)
                for (int tb = 0; tb < 2; ++tb) {
                    problem q = {l ? TG_COL_MAJOR : TG_ROW_MAJOR, ops[ta], ops[tb],
                                 shapes[si][0], shapes[si][1], shapes[si][2], 0, 0, 0,
                                 (ta + tb + l) % 2 ? 0.5f : 0.0f};
                    const int pad = (int)(si % 2) * 3;
                    q.lda = tg_min_ld(q.layout, q.ta, q.m, q.k) + pad;
                    q.ldb = tg_min_ld(q.layout, q.tb, q.k, q.n) + pad;
                    q.ldc = tg_min_ld(q.layout, TG_NO_TRANS, q.m, q.n) + pad;
                    check_case(&q, (int)((si + (size_t)ta) % 2));
                }
    if (gpus >= 2)
        check_failure(gpus);
    const int result = tg_test_result("test_gpu_host_split");
    if (result == 0 && gpus < 2) {
        printf("test_gpu_host_split: the two-GPU part skipped: %d GPU found\n", gpus);
        return TG_TEST_SKIP;
    }
    return result;
}
