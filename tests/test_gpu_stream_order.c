/*
 * Stream ordering, as the README and tilegemm.h promise it, on device operands:
 *   own        the handle's own stream is ordered after the legacy default stream: work queued
 *              there (a long kernel, then an async write of A and C) finishes before tg_sgemm
 *              reads A and C, with no tg_set_stream and no synchronization by the caller;
 *   user       after tg_set_stream(user stream), the call runs on that stream, in its order
 *              (the user stream is non-blocking, so only that order can make the result right);
 *   legacy     tg_set_stream(NULL) means the legacy default stream;
 *   per-thread tg_set_stream(cudaStreamPerThread), the per-thread default stream as a stream
 *              like any other.
 * Without tg_set_stream nothing is promised about a per-thread default stream (the handle's
 * own stream is ordered after the legacy one only), so that is not tested.
 *
 * The "long kernel" waits at a gate that the host opens only after tg_sgemm has returned
 * (stream_gate.cu), so the call is queued while A still holds its old values, whatever the
 * timing; a stream that does not wait reads the old A and C and fails the float64 check of the
 * new ones.  Nothing is timed: the gate gives up after 20 s only so that a call which waits for
 * the held stream (it must queue and return) fails instead of hanging.  Skips (77) without a GPU.
 *
 *   test_gpu_stream_order [--seed N] [--case NAME]
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "sampled.h"
#include "testing.h"

#ifdef TG_HAVE_CUDA
#include "stream_gate.h"

typedef struct stream_mode {
    const char *name;
    int set_stream;     /* 0: the handle's own stream, never tg_set_stream */
    cudaStream_t given; /* what tg_set_stream is given (NULL: the legacy default stream) */
    cudaStream_t queue; /* where the caller queues the gate and the writes; NULL: a new
                         * non-blocking stream, which is also `given` */
} stream_mode;

typedef struct shape {
    int64_t m, n, k;
} shape;

/* A plain product, and one with a long k that auto splits along k on an H100 (workspace,
 * batched slices, then the reduction: every launch must be on the ordered stream). */
static const shape kShapes[] = {{300, 200, 500}, {32, 32, 100000}};
static const float kAlpha = 1.5f, kBeta = 0.5f;

static void fill(float *x, size_t count, uint64_t *seed)
{
    for (size_t i = 0; i < count; ++i)
        x[i] = (float)tg_random_unit(seed);
}

#define CUDA_OK(call) ((call) == cudaSuccess)

/* One call of `mode` on shape `sh`, checked against float64 of the operands written last. */
static void run_case(tg_handle *h, tg_stream_gate *gate, const stream_mode *mode, shape sh,
                     uint64_t run_seed, uint64_t seed, const char *argv0)
{
    const int64_t m = sh.m, n = sh.n, k = sh.k;
    const size_t a_n = (size_t)(m * k), b_n = (size_t)(k * n), c_n = (size_t)(m * n);
    float *host = malloc((2 * a_n + b_n + 3 * c_n) * sizeof(float));
    float *old_a = host, *new_a = old_a + a_n, *B = new_a + a_n, *old_c = B + b_n,
          *new_c = old_c + c_n, *result = new_c + c_n;
    float *dev = NULL;
    cudaStream_t user = NULL;
    char label[160];
    snprintf(label, sizeof label, "%s stream, %lldx%lldx%lld", mode->name, (long long)m,
             (long long)n, (long long)k);
    const int failures0 = tg_test_failures;
    if (!host || !CUDA_OK(cudaMalloc((void **)&dev, (2 * a_n + b_n + 2 * c_n) * sizeof(float)))) {
        EXPECT(0, "%s: allocation failed", label);
        goto done;
    }
    uint64_t state = seed;
    fill(host, 2 * a_n + b_n + 2 * c_n, &state);
    float *dA = dev, *dA_new = dA + a_n, *dB = dA_new + a_n, *dC = dB + b_n, *dC_new = dC + c_n;
    if (!CUDA_OK(cudaMemcpy(dev, host, (2 * a_n + b_n + 2 * c_n) * sizeof(float),
                            cudaMemcpyHostToDevice))) {
        EXPECT(0, "%s: upload failed", label);
        goto done;
    }
    cudaStream_t queue = mode->queue, given = mode->given;
    if (!queue) {
        if (!CUDA_OK(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking))) {
            EXPECT(0, "%s: cudaStreamCreateWithFlags failed", label);
            goto done;
        }
        queue = given = user;
    }
    void *own = tg_get_stream(h);
    if (mode->set_stream && tg_set_stream(h, given) != TG_SUCCESS) {
        EXPECT(0, "%s: tg_set_stream: %s", label, tg_last_error(h));
        goto done;
    }

    /* Warm-up: the same call and the gate once, so that no kernel is loaded (which may wait
     * for the device) while the gate holds a stream. */
    tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, m, n, k, kAlpha, dA, k, dB,
                           n, kBeta, dC, n);
    if (s == TG_SUCCESS)
        s = tg_synchronize(h);
    int e = tg_stream_gate_hold(gate, queue);
    tg_stream_gate_open(gate);
    if (s != TG_SUCCESS || e || !CUDA_OK(cudaDeviceSynchronize()) ||
        !CUDA_OK(cudaMemcpy(dC, old_c, c_n * sizeof(float), cudaMemcpyHostToDevice))) {
        EXPECT(0, "%s: warm-up failed: %s (gate launch %d)", label, tg_last_error(h), e);
        goto restore;
    }

    /* The caller's order: a long kernel, then the new A and C, all asynchronous. */
    e = tg_stream_gate_hold(gate, queue);
    const int queued = !e &&
        CUDA_OK(cudaMemcpyAsync(dA, dA_new, a_n * sizeof(float), cudaMemcpyDeviceToDevice, queue)) &&
        CUDA_OK(cudaMemcpyAsync(dC, dC_new, c_n * sizeof(float), cudaMemcpyDeviceToDevice, queue));
    s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, m, n, k, kAlpha, dA, k, dB, n, kBeta,
                 dC, n);
    const int still_held = cudaStreamQuery(queue) == cudaErrorNotReady;
    tg_stream_gate_open(gate);
    if (s == TG_SUCCESS)
        s = tg_synchronize(h);
    const int synced = CUDA_OK(cudaDeviceSynchronize()) &&
                       CUDA_OK(cudaMemcpy(result, dC, c_n * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT(queued && synced, "%s: queueing the caller's work or reading C failed (gate %d)",
           label, e);
    EXPECT(s == TG_SUCCESS, "%s: tg_sgemm: %s", label, tg_last_error(h));
    EXPECT(!tg_stream_gate_gave_up(gate) && still_held,
           "%s: the caller's stream was no longer held when tg_sgemm returned (the call "
           "waited for it, or the gate gave up): the order was not tested",
           label);

    /* Against float64 of the NEW operands, every entry. */
    const tg_dense_gemm g = {.layout = TG_ROW_MAJOR, .transa = TG_NO_TRANS,
                             .transb = TG_NO_TRANS, .m = m, .n = n, .k = k, .alpha = kAlpha,
                             .beta = kBeta, .A = new_a, .lda = k, .B = B, .ldb = n,
                             .C_in = new_c, .ldc = n};
    tg_sampled_error now, before;
    tg_sample_error(&g, result, (int64_t)c_n, seed, &now);
    tg_dense_gemm stale = g;
    stale.A = old_a;
    stale.C_in = old_c;
    tg_sample_error(&stale, result, (int64_t)c_n, seed, &before);
    EXPECT(now.worst_scaled <= 1.0,
           "%s (ran %s): worst scaled error %.3g against the new A and C%s", label,
           tg_last_algo(h), now.worst_scaled,
           before.worst_scaled <= 1.0 ? " (it matches the OLD ones: the call did not wait)" : "");
    printf("  %-40s ran %-14s worst scaled error %.3g\n", label, tg_last_algo(h), now.worst_scaled);

restore:
    if (mode->set_stream && tg_set_stream(h, own) != TG_SUCCESS)
        EXPECT(0, "%s: tg_set_stream back: %s", label, tg_last_error(h));
done:
    if (tg_test_failures != failures0)
        fprintf(stderr, "  reproduce: %s --seed %llu --case %s\n", argv0,
                (unsigned long long)run_seed, mode->name);
    cudaDeviceSynchronize();
    if (user)
        cudaStreamDestroy(user);
    cudaFree(dev);
    free(host);
}
#endif

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    const char *only = NULL;
    for (int i = 1; i < argc; ++i) {
        if (tg_test_seed_arg(argc, argv, &i, 10, &seed))
            continue;
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only = argv[++i];
        else
            return fprintf(stderr, "usage: test_gpu_stream_order [--seed N] [--case NAME]\n"), 2;
    }
    /* Every kernel loaded when the context is made: a lazy load while the gate holds a stream
     * may wait for the device, which waits for the gate. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    const int need = tg_test_need_gpu("test_gpu_stream_order");
    if (need)
        return need;
#ifdef TG_HAVE_CUDA
    printf("test_gpu_stream_order --seed %llu\n", (unsigned long long)seed);
    const stream_mode modes[] = {
        {"own", 0, NULL, cudaStreamLegacy},
        {"user", 1, NULL, NULL},
        {"legacy", 1, NULL, cudaStreamLegacy},
        {"per-thread", 1, cudaStreamPerThread, cudaStreamPerThread},
    };
    tg_handle *h = NULL;
    tg_stream_gate *gate = NULL;
    if (tg_create(&h) != TG_SUCCESS || tg_stream_gate_create(&gate)) {
        fprintf(stderr, "setup: %s\n", tg_last_error(h));
        return 1;
    }
    int ran = 0;
    for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; ++mi) {
        if (only && strcmp(only, modes[mi].name))
            continue;
        for (size_t si = 0; si < sizeof kShapes / sizeof kShapes[0]; ++si, ++ran)
            run_case(h, gate, &modes[mi], kShapes[si], seed, seed + si, argv[0]);
    }
    EXPECT(ran > 0, "no case named %s", only ? only : "");
    tg_stream_gate_destroy(gate);
    tg_destroy(h);
#endif
    return tg_test_result("test_gpu_stream_order");
}
