/*
 * Autotuning on a GPU; exit code 77 (skipped) where there is none (tg_test_need_gpu).
 *
 * With a fresh cache folder (TILEGEMM_CACHE_DIR): the first call of each key times the
 * candidates and its result, with beta != 0, matches the float64 reference (check.h: a C
 * written twice would carry beta * (alpha A B) twice over, far outside the bound) and leaves
 * everything outside C's m x n region as it was; the same call with autotuning off gives the
 * same values within the FP32 bound; a second call, a second handle and a second process (this
 * program run again with --second) take the cached choice without timing, and tg_explain says
 * so; a call on a capturing stream never times, nor one the cost model puts under 10 us; and a
 * failure of any allocation or checked CUDA call of the timing (fault injection, error.h)
 * leaves the call successful, its result right.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cuda/backend.h" /* tg_cuda_device_identity */
#include "error.h"        /* tg_fault_hook */
#include "plan/autotune.h"
#include "testing.h"
#include "tilegemm.h"

#ifndef TG_HAVE_CUDA
int main(void) { return tg_test_need_gpu("test_gpu_autotune"); }
#else
#include <cuda_runtime_api.h>

typedef struct shape {
    tg_layout layout;
    tg_op ta, tb;
    int64_t m, n, k;
    int misalign;
} shape;

/* Shapes of several kinds (square, short k, long k, thin, misaligned), each its own key, each
 * put by the H100's cost model at 16 us or more: calls under TG_AT_MIN_PREDICTED_SECONDS are
 * never timed (test_short_call). */
static const shape kShapes[] = {
    {TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 512, 512, 512, 0},
    {TG_COL_MAJOR, TG_NO_TRANS, TG_TRANS, 3000, 1400, 24, 0},
    {TG_ROW_MAJOR, TG_TRANS, TG_NO_TRANS, 96, 160, 4100, 0},
    {TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 2048, 40, 1000, 0},
    {TG_COL_MAJOR, TG_TRANS, TG_TRANS, 999, 701, 257, 1},
};
enum { kShapeCount = sizeof kShapes / sizeof kShapes[0] };

static long timed_now(void)
{
    long hits = 0, timed = 0;
    tg_at_counters(&hits, &timed);
    return timed;
}

static long hits_now(void)
{
    long hits = 0, timed = 0;
    tg_at_counters(&hits, &timed);
    return hits;
}

static tg_case case_of(const shape *s, float beta)
{
    tg_case c = {0};
    c.layout = s->layout, c.transa = s->ta, c.transb = s->tb;
    c.m = s->m, c.n = s->n, c.k = s->k;
    c.ld_pad = 3; /* padding between lines: check.c checks it is not written */
    c.alpha = 1.5f, c.beta = beta;
    c.batch = 1;
    c.misalign = s->misalign;
    c.memory = TG_CHECK_DEVICE;
    c.distribution = TG_DIST_UNIFORM;
    return c;
}

/* The explain text of s with device pointers laid out as check.c lays them (aligned or one
 * float off): whether it names a cached choice. */
static int explains_cached(tg_handle *h, const shape *s)
{
    float *d = NULL;
    if (cudaMalloc((void **)&d, 256) != cudaSuccess)
        return -1;
    const float *p = d + (s->misalign ? 1 : 0);
    const int64_t lda = tg_min_ld(s->layout, s->ta, s->m, s->k) + 3;
    const int64_t ldb = tg_min_ld(s->layout, s->tb, s->k, s->n) + 3;
    const int64_t ldc = tg_min_ld(s->layout, TG_NO_TRANS, s->m, s->n) + 3;
    char text[4096];
    const tg_status st = tg_explain(h, s->layout, s->ta, s->tb, s->m, s->n, s->k, p, lda, p, ldb,
                                    p, ldc, text, sizeof text);
    cudaFree(d);
    if (st != TG_SUCCESS)
        return -1;
    return strstr(text, "cached autotuning choice") != NULL;
}

/* Host reference-free comparison: the same call with autotuning off and on, on the same data,
 * in device memory the test owns: equal within the FP32 bound, so the tuned call wrote C once. */
static void compare_with_untuned(const shape *s, float beta)
{
    const int64_t lda = tg_min_ld(s->layout, s->ta, s->m, s->k);
    const int64_t ldb = tg_min_ld(s->layout, s->tb, s->k, s->n);
    const int64_t ldc = tg_min_ld(s->layout, TG_NO_TRANS, s->m, s->n);
    const int64_t a_lines = s->layout == TG_ROW_MAJOR ? (s->ta == TG_NO_TRANS ? s->m : s->k)
                                                      : (s->ta == TG_NO_TRANS ? s->k : s->m);
    const int64_t b_lines = s->layout == TG_ROW_MAJOR ? (s->tb == TG_NO_TRANS ? s->k : s->n)
                                                      : (s->tb == TG_NO_TRANS ? s->n : s->k);
    const int64_t c_lines = s->layout == TG_ROW_MAJOR ? s->m : s->n;
    const size_t na = (size_t)(a_lines * lda), nb = (size_t)(b_lines * ldb),
                 nc = (size_t)(c_lines * ldc);
    float *a = malloc(na * 4), *b = malloc(nb * 4), *c0 = malloc(nc * 4), *plain = malloc(nc * 4),
          *tuned = malloc(nc * 4);
    float *da = NULL, *db = NULL, *dc = NULL;
    if (!a || !b || !c0 || !plain || !tuned || cudaMalloc((void **)&da, na * 4) ||
        cudaMalloc((void **)&db, nb * 4) || cudaMalloc((void **)&dc, nc * 4)) {
        EXPECT(0, "memory for the comparison");
        goto done;
    }
    uint64_t state = 12345;
    for (size_t i = 0; i < na; ++i)
        a[i] = (float)(((state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 40) %
                       2001) / 1000.0f - 1.0f;
    for (size_t i = 0; i < nb; ++i)
        b[i] = (float)(((state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 40) %
                       2001) / 1000.0f - 1.0f;
    for (size_t i = 0; i < nc; ++i)
        c0[i] = (float)(((state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 40) %
                        2001) / 1000.0f - 1.0f;
    cudaMemcpy(da, a, na * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, nb * 4, cudaMemcpyHostToDevice);
    tg_handle *off = NULL, *on = NULL;
    EXPECT(tg_create(&off) == TG_SUCCESS && tg_create(&on) == TG_SUCCESS &&
               tg_set_autotune(on, 1) == TG_SUCCESS && tg_get_autotune(on) == 1,
           "handles");
    for (int pass = 0; pass < 2 && off && on; ++pass) {
        tg_handle *h = pass ? on : off;
        cudaMemcpy(dc, c0, nc * 4, cudaMemcpyHostToDevice);
        const long before = timed_now();
        const tg_status st = tg_sgemm(h, s->layout, s->ta, s->tb, s->m, s->n, s->k, 1.5f, da,
                                      lda, db, ldb, beta, dc, ldc);
        EXPECT(st == TG_SUCCESS, "tg_sgemm: %s", tg_last_error(h));
        EXPECT(tg_synchronize(h) == TG_SUCCESS, "sync");
        if (pass)
            EXPECT(timed_now() == before + 1, "the first tuned call of the key timed it (%ld "
                                              "-> %ld)", before, timed_now());
        else
            EXPECT(timed_now() == before, "autotuning off times nothing");
        cudaMemcpy(pass ? tuned : plain, dc, nc * 4, cudaMemcpyDeviceToHost);
    }
    /* Each element of both within the FP32 bound of the same float64 value: twice the bound
     * apart at most.  A second write would add beta * 1.5 * (A B) to one of them. */
    int64_t bad = 0;
    const double eps = 1.0 / (1 << 24);
    for (int64_t i = 0; i < s->m; ++i)
        for (int64_t j = 0; j < s->n; ++j) {
            const size_t at = s->layout == TG_ROW_MAJOR ? (size_t)(i * ldc + j)
                                                        : (size_t)(j * ldc + i);
            double scale = fabs(beta * c0[at]);
            for (int64_t p = 0; p < s->k; ++p) {
                const int64_t ai = s->layout == TG_ROW_MAJOR
                                       ? (s->ta == TG_NO_TRANS ? i * lda + p : p * lda + i)
                                       : (s->ta == TG_NO_TRANS ? p * lda + i : i * lda + p);
                const int64_t bi = s->layout == TG_ROW_MAJOR
                                       ? (s->tb == TG_NO_TRANS ? p * ldb + j : j * ldb + p)
                                       : (s->tb == TG_NO_TRANS ? j * ldb + p : p * ldb + j);
                scale += 1.5 * fabs((double)a[ai] * b[bi]);
            }
            const double bound = 2.0 * (double)(s->k + 2) * eps * scale + 1e-30;
            bad += !(fabs((double)tuned[at] - plain[at]) <= bound);
        }
    EXPECT(bad == 0, "%lldx%lldx%lld beta %g: %lld elements differ between the tuned and the "
                     "untuned call beyond the FP32 bound",
           (long long)s->m, (long long)s->n, (long long)s->k, beta, (long long)bad);
    tg_destroy(off);
    tg_destroy(on);
done:
    cudaFree(da), cudaFree(db), cudaFree(dc);
    free(a), free(b), free(c0), free(plain), free(tuned);
}

/* A new handle with autotuning on, or NULL (a failed expectation) where it cannot be made. */
static tg_handle *autotuning_handle(void)
{
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS) {
        EXPECT(0, "tg_create: %s", tg_last_error(NULL));
        return NULL;
    }
    EXPECT(tg_set_autotune(h, 1) == TG_SUCCESS, "tg_set_autotune: %s", tg_last_error(h));
    return h;
}

/* A call on a capturing stream takes the planner's choice and times nothing. */
static void test_capture(void)
{
    tg_handle *h = NULL;
    cudaStream_t stream = NULL;
    float *d = NULL;
    const int64_t m = 768, n = 256, k = 512; /* a key no other part of the test uses */
    if (tg_create(&h) != TG_SUCCESS || cudaStreamCreate(&stream) != cudaSuccess ||
        cudaMalloc((void **)&d, (size_t)(m * k + k * n + m * n) * 4) != cudaSuccess) {
        EXPECT(0, "capture set-up");
        return;
    }
    cudaMemset(d, 0, (size_t)(m * k + k * n + m * n) * 4);
    tg_set_autotune(h, 1);
    tg_set_stream(h, stream);
    const long before = timed_now();
    EXPECT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess,
           "begin capture");
    const tg_status st = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, m, n, k, 1.0f, d, k,
                                  d + m * k, n, 0.5f, d + m * k + k * n, n);
    cudaGraph_t graph = NULL;
    EXPECT(cudaStreamEndCapture(stream, &graph) == cudaSuccess, "end capture");
    EXPECT(st == TG_SUCCESS, "the captured call: %s", tg_last_error(h));
    EXPECT(timed_now() == before, "a capturing stream timed nothing");
    if (graph) {
        cudaGraphExec_t exec = NULL;
        EXPECT(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "instantiate");
        if (exec) {
            EXPECT(cudaGraphLaunch(exec, stream) == cudaSuccess, "launch");
            EXPECT(cudaStreamSynchronize(stream) == cudaSuccess, "run the graph");
            cudaGraphExecDestroy(exec);
        }
        cudaGraphDestroy(graph);
    }
    tg_destroy(h);
    cudaStreamDestroy(stream);
    cudaFree(d);
}

/* A call the cost model puts under TG_AT_MIN_PREDICTED_SECONDS takes the planner's choice: it
 * times nothing, caches nothing, is right, and tg_explain says why. */
static void test_short_call(void)
{
    tg_handle *h = autotuning_handle();
    if (!h)
        return;
    const shape s = {TG_COL_MAJOR, TG_NO_TRANS, TG_TRANS, 40, 24, 33, 0};
    float *d = NULL;
    char text[4096] = "";
    EXPECT(cudaMalloc((void **)&d, 256) == cudaSuccess, "cudaMalloc");
    EXPECT(tg_explain(h, s.layout, s.ta, s.tb, s.m, s.n, s.k, d, s.m, d, s.n, d, s.m, text,
                      sizeof text) == TG_SUCCESS, "explain: %s", tg_last_error(h));
    cudaFree(d);
    EXPECT(strstr(text, "timing cannot rank the candidates") != NULL,
           "explain says the call is too short to time:\n%s", text);
    for (int run = 0; run < 2; ++run) {
        const tg_case c = case_of(&s, run ? 0.0f : -2.0f);
        const long before = timed_now(), hits = hits_now();
        tg_case_result r;
        tg_check_case(h, &c, 5000 + (uint64_t)run, &r);
        EXPECT(r.passed, "40x24x33, run %d: %s", run, r.detail);
        EXPECT(timed_now() == before && hits_now() == hits,
               "40x24x33, run %d: timed %ld, cached choices taken %ld", run,
               timed_now() - before, hits_now() - hits);
    }
    EXPECT(explains_cached(h, &s) == 0, "40x24x33: nothing cached");
    tg_destroy(h);
}

/* Checked runs of every shape, beta != 0, on an autotuning handle: its first call of each key
 * times, the result holds to the float64 reference. */
static void run_checked(tg_handle *h, int expect_timing, uint64_t seed)
{
    for (int i = 0; i < kShapeCount; ++i) {
        const tg_case c = case_of(&kShapes[i], i % 2 ? -0.75f : 0.5f);
        const long before = timed_now();
        tg_case_result r;
        tg_check_case(h, &c, seed + (uint64_t)i, &r);
        char name[240];
        tg_case_name(&c, name, sizeof name);
        EXPECT(r.passed, "%s: %s", name, r.detail);
        EXPECT(r.moved_outside == 0, "%s: %lld elements outside C changed", name,
               (long long)r.moved_outside);
        EXPECT(timed_now() - before == (expect_timing ? 1 : 0),
               "%s: %ld keys timed, expected %d", name, timed_now() - before, expect_timing);
        printf("%s: ran %s%s\n", name, tg_last_algo(h),
               expect_timing ? " (timed first)" : " (cached)");
    }
}

/* Fault injection inside the timing: from its first checked call (cudaGetDevice(&device_now),
 * src/cuda/autotune.cu) to its last (cudaStreamSynchronize(stream)), the fail_at-th site fails. */
static int g_in_window, g_window_sites, g_fail_at = -1;

static int fault_in_timing(const char *site)
{
    if (!strcmp(site, "CUDA: cudaGetDevice(&device_now)"))
        g_in_window = 1;
    int fail = 0;
    if (g_in_window)
        fail = g_window_sites++ == g_fail_at;
    if (g_in_window && !strcmp(site, "CUDA: cudaStreamSynchronize(stream)"))
        g_in_window = 0;
    return fail;
}

static void test_faults_in_timing(void)
{
    tg_handle *h = autotuning_handle();
    if (!h)
        return;
    int faults = 0;
    for (int at = 0; at < 400; ++at) {
        /* A fresh key each time (k), so that each call times: a call the model puts at 25 us
         * with a float64 reference of only 15M products, for the hundreds of keys. */
        const shape s = {TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 16, 16, 60000 + 4 * at, 0};
        const tg_case c = case_of(&s, 0.5f);
        g_in_window = 0, g_window_sites = 0, g_fail_at = at;
        tg_fault_hook = fault_in_timing;
        tg_case_result r;
        tg_check_case(h, &c, 900 + (uint64_t)at, &r);
        tg_fault_hook = NULL;
        if (g_window_sites <= at)
            break; /* the timing has fewer sites: every one has failed once */
        ++faults;
        char name[240];
        tg_case_name(&c, name, sizeof name);
        EXPECT(r.status == TG_SUCCESS && r.passed, "%s with site %d of the timing failing: %s",
               name, at, r.detail);
    }
    EXPECT(faults >= 10, "only %d sites of the timing were reached", faults);
    printf("fault injection: %d sites of the timing failed in turn, every call succeeded\n",
           faults);
    tg_destroy(h);
}

/* A corrupt cache file of this GPU: ignored with one warning, which tg_explain and
 * tg_autotune_status carry; the next timed call replaces it with a valid one. */
static void test_corrupt_cache(const char *dir)
{
    tg_at_reset();
    setenv("TILEGEMM_CACHE_DIR", dir, 1);
    tg_handle *h = NULL;
    tg_at_device dev;
    char path[4200];
    if (tg_create(&h) != TG_SUCCESS || tg_cuda_device_identity(h, &dev) != TG_SUCCESS ||
        tg_at_cache_path(&dev, path, sizeof path) != 0) {
        EXPECT(0, "set-up: %s", h ? tg_last_error(h) : tg_last_error(NULL));
        tg_destroy(h);
        return;
    }
    char command[8800];
    snprintf(command, sizeof command, "mkdir -p '%s' && printf 'not a cache\\n' > '%s'", dir,
             path);
    EXPECT(system(command) == 0, "%s", command);
    tg_set_autotune(h, 1);
    const shape s = {TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 640, 640, 640, 0};
    float *d = NULL;
    EXPECT(cudaMalloc((void **)&d, 256) == cudaSuccess, "cudaMalloc");
    char text[4096] = "";
    EXPECT(tg_explain(h, s.layout, s.ta, s.tb, s.m, s.n, s.k, d, s.k, d, s.n, d, s.n, text,
                      sizeof text) == TG_SUCCESS, "explain: %s", tg_last_error(h));
    cudaFree(d);
    EXPECT(strstr(text, "autotune: warning:") != NULL, "explain carries the warning:\n%s", text);
    const char *status = tg_autotune_status();
    EXPECT(strstr(status, "warning:") && !strstr(strstr(status, "warning:") + 1, "warning:"),
           "one warning: %s", status);
    const tg_case c = case_of(&s, 0.5f);
    tg_case_result r;
    const long before = timed_now();
    tg_check_case(h, &c, 4242, &r);
    EXPECT(r.passed && timed_now() == before + 1, "a call times and runs: %s", r.detail);
    tg_at_entry *all = NULL;
    int n = 0;
    char why[600] = "";
    EXPECT(tg_at_file_read(path, &dev, &all, &n, why, sizeof why) == 1 && n == 1,
           "the file was replaced by a valid one: %s", why);
    free(all);
    tg_destroy(h);
}

static int second_process(void)
{
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS) {
        fprintf(stderr, "second process: %s\n", tg_last_error(NULL));
        return 1;
    }
    EXPECT(tg_get_autotune(h) == 1, "TILEGEMM_AUTOTUNE=1 turns it on for new handles");
    for (int i = 0; i < kShapeCount; ++i)
        EXPECT(explains_cached(h, &kShapes[i]) == 1, "second process, shape %d: explain names "
                                                     "the cached choice", i);
    run_checked(h, 0, 700);
    EXPECT(timed_now() == 0, "the second process timed nothing: %s", tg_autotune_status());
    EXPECT(hits_now() >= kShapeCount, "it took cached choices: %s", tg_autotune_status());
    printf("second process: %s\n", tg_autotune_status());
    tg_destroy(h);
    return tg_test_result("test_gpu_autotune --second");
}

int main(int argc, char **argv)
{
    const int skip = tg_test_need_gpu("test_gpu_autotune");
    if (skip)
        return skip;
    if (argc > 1 && !strcmp(argv[1], "--second"))
        return second_process();

    char dir[128];
    snprintf(dir, sizeof dir, "/tmp/tilegemm-gpu-autotune-%d", (int)getpid());
    setenv("TILEGEMM_CACHE_DIR", dir, 1);
    unsetenv("TILEGEMM_AUTOTUNE");

    tg_handle *h = NULL, *second = NULL;
    if (tg_create(&h) != TG_SUCCESS || tg_create(&second) != TG_SUCCESS) {
        EXPECT(0, "tg_create: %s", tg_last_error(NULL));
        return tg_test_result("test_gpu_autotune");
    }
    EXPECT(tg_get_autotune(h) == 0, "off by default");
    EXPECT(tg_set_autotune(h, 1) == TG_SUCCESS && tg_get_autotune(h) == 1, "tg_set_autotune");
    EXPECT(tg_set_autotune(NULL, 1) == TG_ERROR_INVALID_HANDLE, "a NULL handle");
    for (int i = 0; i < kShapeCount; ++i)
        EXPECT(explains_cached(h, &kShapes[i]) == 0, "shape %d: nothing cached yet", i);

    run_checked(h, 1, 100);  /* the first call of each key times */
    run_checked(h, 0, 200);  /* the next ones take the cached choice */
    tg_set_autotune(second, 1);
    for (int i = 0; i < kShapeCount; ++i)
        EXPECT(explains_cached(second, &kShapes[i]) == 1, "a second handle: shape %d cached", i);
    run_checked(second, 0, 300);

    /* A handle with autotuning off ignores the cache. */
    tg_set_autotune(second, 0);
    EXPECT(explains_cached(second, &kShapes[0]) == 0, "autotuning off: the planner");

    /* The same values with and without autotuning, C written once (fresh keys: other betas
     * do not change the key, so other shapes). */
    const shape fresh[] = {{TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 640, 384, 1000, 0},
                           {TG_COL_MAJOR, TG_TRANS, TG_NO_TRANS, 8000, 600, 40, 0}};
    compare_with_untuned(&fresh[0], 0.5f);
    compare_with_untuned(&fresh[1], 1.0f);
    test_capture();
    test_short_call();
    test_faults_in_timing();

    /* The file a second process reads. */
    char path[4200];
    snprintf(path, sizeof path, "%s", tg_autotune_status());
    EXPECT(strstr(path, dir) != NULL && !strstr(path, "warning"), "status: %s", path);
    printf("%s\n", tg_autotune_status());
    tg_destroy(h);
    tg_destroy(second);

    char command[1024];
    snprintf(command, sizeof command, "TILEGEMM_AUTOTUNE=1 '%s' --second", argv[0]);
    const int status = system(command);
    EXPECT(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "the second process (%s) failed: %d", command, status);

    char corrupt_dir[200];
    snprintf(corrupt_dir, sizeof corrupt_dir, "%s/corrupt", dir);
    test_corrupt_cache(corrupt_dir);

    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (!tg_test_failures && system(command) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tg_test_result("test_gpu_autotune");
}
#endif
