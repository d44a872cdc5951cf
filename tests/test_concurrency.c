/*
 * Concurrency: results identical, bit for bit, to serial runs of the same products.
 *
 *   CPU (everywhere): threads, each with its own handle forced onto the CPU backend, run the
 *     same list of products at once; also the BLAS entry point sgemm_ from every thread (its
 *     per-thread handle).  This is the test the ThreadSanitizer build runs.
 *   GPU (where one exists): for every rung of tg_algos(), threads with their own handles on
 *     device memory; and one thread driving several handles, each on its own CUDA stream, all
 *     queued before any is waited for.
 *
 *   test_concurrency [--threads N] [--rounds N]
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "tilegemm.h"
#include "tilegemm_cblas.h"

typedef struct product {
    tg_layout layout;
    tg_op transa, transb;
    int64_t m, n, k, batch;
    float alpha, beta;
} product;

static const product kProducts[] = {
    {TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 7, 9, 11, 1, 1.0f, 0.0f},
    {TG_COL_MAJOR, TG_TRANS, TG_NO_TRANS, 130, 67, 129, 1, 1.5f, -0.5f},
    {TG_ROW_MAJOR, TG_NO_TRANS, TG_TRANS, 200, 150, 300, 1, -1.0f, 1.0f},
    {TG_COL_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 33, 17, 45, 3, 2.0f, 0.5f},
};
enum { kProductCount = sizeof kProducts / sizeof *kProducts };

/* Operands of one product: dense, leading dimensions the minimum, items back to back. */
typedef struct operands {
    int64_t lda, ldb, ldc, sa, sb, sc;
    float *A, *B, *C0; /* host: inputs and the starting C */
} operands;

static operands g_ops[kProductCount];
static float *g_serial[kProductCount]; /* serial results, host */

static int64_t stored_ld(tg_layout layout, tg_op op, int64_t rows, int64_t cols)
{
    const int along_rows = (layout == TG_ROW_MAJOR) != (op == TG_TRANS);
    const int64_t ld = along_rows ? cols : rows;
    return ld > 1 ? ld : 1;
}

static void make_operands(void)
{
    uint32_t x = 2463534242u;
    for (int i = 0; i < kProductCount; ++i) {
        const product *p = &kProducts[i];
        operands *o = &g_ops[i];
        o->lda = stored_ld(p->layout, p->transa, p->m, p->k);
        o->ldb = stored_ld(p->layout, p->transb, p->k, p->n);
        o->ldc = stored_ld(p->layout, TG_NO_TRANS, p->m, p->n);
        o->sa = p->m * p->k, o->sb = p->k * p->n, o->sc = p->m * p->n;
        o->A = malloc((size_t)(o->sa * p->batch) * sizeof(float));
        o->B = malloc((size_t)(o->sb * p->batch) * sizeof(float));
        o->C0 = malloc((size_t)(o->sc * p->batch) * sizeof(float));
        float *all[3] = {o->A, o->B, o->C0};
        const int64_t counts[3] = {o->sa * p->batch, o->sb * p->batch, o->sc * p->batch};
        for (int t = 0; t < 3; ++t)
            for (int64_t e = 0; e < counts[t]; ++e) {
                x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                all[t][e] = (float)(x % 2001) / 1000.0f - 1.0f;
            }
    }
}

/* Runs product i on h into C (host or device, as A, B, C are). */
static tg_status run_product(tg_handle *h, int i, const float *A, const float *B, float *C)
{
    const product *p = &kProducts[i];
    const operands *o = &g_ops[i];
    if (p->batch == 1)
        return tg_sgemm(h, p->layout, p->transa, p->transb, p->m, p->n, p->k, p->alpha, A,
                        o->lda, B, o->ldb, p->beta, C, o->ldc);
    return tg_sgemm_strided_batched(h, p->layout, p->transa, p->transb, p->m, p->n, p->k,
                                    p->alpha, A, o->lda, o->sa, B, o->ldb, o->sb, p->beta, C,
                                    o->ldc, o->sc, p->batch);
}

static int g_rounds = 3;

/* --- CPU ------------------------------------------------------------------------------------- */

typedef struct worker {
    int id, mismatches, errors;
} worker;

static void *cpu_worker(void *arg)
{
    worker *w = arg;
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS || tg_set_backend(h, TG_BACKEND_CPU) != TG_SUCCESS) {
        w->errors++;
        return NULL;
    }
    for (int r = 0; r < g_rounds; ++r)
        for (int j = 0; j < kProductCount; ++j) {
            const int i = (j + w->id) % kProductCount; /* threads in different orders */
            const size_t bytes = (size_t)(g_ops[i].sc * kProducts[i].batch) * sizeof(float);
            float *C = malloc(bytes);
            memcpy(C, g_ops[i].C0, bytes);
            if (run_product(h, i, g_ops[i].A, g_ops[i].B, C) != TG_SUCCESS)
                w->errors++;
            else if (memcmp(C, g_serial[i], bytes) != 0)
                w->mismatches++;
            free(C);
        }
    tg_destroy(h);
    return NULL;
}

/* sgemm_ from every thread: its own per-thread handle inside the library. */
static void *blas_worker(void *arg)
{
    worker *w = arg;
    const int i = 1; /* column-major, as the BLAS is */
    const product *p = &kProducts[i];
    const size_t bytes = (size_t)g_ops[i].sc * sizeof(float);
    for (int r = 0; r < g_rounds; ++r) {
        float *C = malloc(bytes);
        memcpy(C, g_ops[i].C0, bytes);
        const int m = (int)p->m, n = (int)p->n, k = (int)p->k, lda = (int)g_ops[i].lda,
                  ldb = (int)g_ops[i].ldb, ldc = (int)g_ops[i].ldc;
        sgemm_("T", "N", &m, &n, &k, &p->alpha, g_ops[i].A, &lda, g_ops[i].B, &ldb, &p->beta, C,
               &ldc, 1, 1);
        w->mismatches += memcmp(C, g_serial[i], bytes) != 0;
        free(C);
    }
    return NULL;
}

static void test_cpu_threads(int threads)
{
    tg_handle *h;
    EXPECT(tg_create(&h) == TG_SUCCESS && tg_set_backend(h, TG_BACKEND_CPU) == TG_SUCCESS,
           "serial handle: %s", tg_last_error(NULL));
    for (int i = 0; i < kProductCount; ++i) {
        const size_t bytes = (size_t)(g_ops[i].sc * kProducts[i].batch) * sizeof(float);
        g_serial[i] = malloc(bytes);
        memcpy(g_serial[i], g_ops[i].C0, bytes);
        EXPECT(run_product(h, i, g_ops[i].A, g_ops[i].B, g_serial[i]) == TG_SUCCESS,
               "serial product %d: %s", i, tg_last_error(h));
    }
    tg_destroy(h);

    pthread_t tid[64];
    worker w[64];
    for (int t = 0; t < threads; ++t) {
        w[t] = (worker){t, 0, 0};
        pthread_create(&tid[t], NULL, t % 4 == 3 ? blas_worker : cpu_worker, &w[t]);
    }
    for (int t = 0; t < threads; ++t) {
        pthread_join(tid[t], NULL);
        EXPECT(w[t].errors == 0 && w[t].mismatches == 0,
               "CPU thread %d: %d errors, %d results different from the serial run", t,
               w[t].errors, w[t].mismatches);
    }
}

/* --- GPU ------------------------------------------------------------------------------------- */
#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>

typedef struct device_ops {
    float *A, *B, *C;
} device_ops;

static int to_device(int i, device_ops *d)
{
    const product *p = &kProducts[i];
    const operands *o = &g_ops[i];
    const size_t a = (size_t)(o->sa * p->batch) * 4, b = (size_t)(o->sb * p->batch) * 4,
                 c = (size_t)(o->sc * p->batch) * 4;
    if (cudaMalloc((void **)&d->A, a) || cudaMalloc((void **)&d->B, b) ||
        cudaMalloc((void **)&d->C, c))
        return -1;
    cudaMemcpy(d->A, o->A, a, cudaMemcpyHostToDevice);
    cudaMemcpy(d->B, o->B, b, cudaMemcpyHostToDevice);
    cudaMemcpy(d->C, o->C0, c, cudaMemcpyHostToDevice);
    return 0;
}

static void free_device(device_ops *d) { cudaFree(d->A), cudaFree(d->B), cudaFree(d->C); }

static const char *g_algo;
static float *g_gpu_serial[kProductCount];

static void *gpu_worker(void *arg)
{
    worker *w = arg;
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS || tg_set_algo(h, g_algo) != TG_SUCCESS) {
        w->errors++;
        return NULL;
    }
    for (int r = 0; r < g_rounds; ++r)
        for (int j = 0; j < kProductCount; ++j) {
            const int i = (j + w->id) % kProductCount;
            const size_t bytes = (size_t)(g_ops[i].sc * kProducts[i].batch) * sizeof(float);
            device_ops d;
            float *C = malloc(bytes);
            if (to_device(i, &d) != 0 || run_product(h, i, d.A, d.B, d.C) != TG_SUCCESS ||
                tg_synchronize(h) != TG_SUCCESS ||
                cudaMemcpy(C, d.C, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
                w->errors++;
            else if (memcmp(C, g_gpu_serial[i], bytes) != 0)
                w->mismatches++;
            free_device(&d);
            free(C);
        }
    tg_destroy(h);
    return NULL;
}

static void test_gpu(const char *algo, int threads)
{
    g_algo = algo;
    tg_handle *h;
    EXPECT(tg_create(&h) == TG_SUCCESS && tg_set_algo(h, algo) == TG_SUCCESS, "%s: %s", algo,
           tg_last_error(h));
    int refused = -1; /* a product this rung's shape limits refuse (gemv8: m or n <= 8) */
    for (int i = 0; i < kProductCount; ++i) {
        const size_t bytes = (size_t)(g_ops[i].sc * kProducts[i].batch) * sizeof(float);
        device_ops d;
        g_gpu_serial[i] = malloc(bytes);
        EXPECT(to_device(i, &d) == 0, "%s: device operands", algo);
        const tg_status s = run_product(h, i, d.A, d.B, d.C);
        if (s == TG_ERROR_NOT_SUPPORTED && strcmp(algo, "auto") != 0)
            refused = refused < 0 ? i : refused;
        else
            EXPECT(s == TG_SUCCESS && tg_synchronize(h) == TG_SUCCESS &&
                       cudaMemcpy(g_gpu_serial[i], d.C, bytes, cudaMemcpyDeviceToHost) ==
                           cudaSuccess,
                   "%s serial product %d: %s", algo, i, tg_last_error(h));
        free_device(&d);
    }
    if (refused >= 0) {
        printf("  %s skipped: it cannot run product %d (%s)\n", algo, refused, tg_last_error(h));
        for (int i = 0; i < kProductCount; ++i)
            free(g_gpu_serial[i]);
        tg_destroy(h);
        return;
    }

    /* Threads, each with its own handle. */
    pthread_t tid[64];
    worker w[64];
    for (int t = 0; t < threads; ++t) {
        w[t] = (worker){t, 0, 0};
        pthread_create(&tid[t], NULL, gpu_worker, &w[t]);
    }
    for (int t = 0; t < threads; ++t) {
        pthread_join(tid[t], NULL);
        EXPECT(w[t].errors == 0 && w[t].mismatches == 0,
               "%s: GPU thread %d: %d errors, %d results different from the serial run", algo, t,
               w[t].errors, w[t].mismatches);
    }

    /* One thread, a handle per stream, everything queued before anything is waited for. */
    enum { kStreams = 4 };
    tg_handle *hs[kStreams];
    cudaStream_t streams[kStreams];
    device_ops d[kStreams][kProductCount];
    for (int s = 0; s < kStreams; ++s) {
        EXPECT(tg_create(&hs[s]) == TG_SUCCESS && tg_set_algo(hs[s], algo) == TG_SUCCESS &&
                   cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking) == cudaSuccess &&
                   tg_set_stream(hs[s], streams[s]) == TG_SUCCESS,
               "%s: stream %d set-up", algo, s);
        for (int i = 0; i < kProductCount; ++i)
            EXPECT(to_device(i, &d[s][i]) == 0, "%s: device operands", algo);
    }
    for (int i = 0; i < kProductCount; ++i)
        for (int s = 0; s < kStreams; ++s)
            EXPECT(run_product(hs[s], i, d[s][i].A, d[s][i].B, d[s][i].C) == TG_SUCCESS,
                   "%s: stream %d product %d: %s", algo, s, i, tg_last_error(hs[s]));
    for (int s = 0; s < kStreams; ++s) {
        EXPECT(tg_synchronize(hs[s]) == TG_SUCCESS, "%s: stream %d: %s", algo, s,
               tg_last_error(hs[s]));
        for (int i = 0; i < kProductCount; ++i) {
            const size_t bytes = (size_t)(g_ops[i].sc * kProducts[i].batch) * sizeof(float);
            float *C = malloc(bytes);
            cudaMemcpy(C, d[s][i].C, bytes, cudaMemcpyDeviceToHost);
            EXPECT(memcmp(C, g_gpu_serial[i], bytes) == 0,
                   "%s: stream %d product %d differs from the serial run", algo, s, i);
            free(C);
            free_device(&d[s][i]);
        }
        tg_destroy(hs[s]);
        cudaStreamDestroy(streams[s]);
    }
    for (int i = 0; i < kProductCount; ++i)
        free(g_gpu_serial[i]);
    tg_destroy(h);
}
#endif

int main(int argc, char **argv)
{
    int threads = 8;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            g_rounds = atoi(argv[++i]);
        else
            return fprintf(stderr, "usage: test_concurrency [--threads N] [--rounds N]\n"), 2;
    }
    if (threads < 1 || threads > 64)
        threads = 8;
    make_operands();
    test_cpu_threads(threads);
    printf("test_concurrency: CPU, %d threads x %d rounds: done\n", threads, g_rounds);
#ifdef TG_HAVE_CUDA
    if (tg_backend_available(TG_BACKEND_CUDA)) {
        for (const char *const *a = tg_algos(); *a; ++a) {
            printf("rung %s\n", *a);
            fflush(stdout);
            test_gpu(*a, threads < 4 ? threads : 4);
        }
    }
#endif
    if (!tg_backend_available(TG_BACKEND_CUDA)) {
        if (tg_test_require_gpu()) {
            EXPECT(0, "TILEGEMM_REQUIRE_GPU is set but the GPU half could not run: no GPU");
        } else {
            printf("test_concurrency: no GPU: the GPU half (threads and streams) was not run\n");
        }
    }
    for (int i = 0; i < kProductCount; ++i)
        free(g_serial[i]), free(g_ops[i].A), free(g_ops[i].B), free(g_ops[i].C0);
    return tg_test_result("test_concurrency");
}
