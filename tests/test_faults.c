/*
 * Fault injection through the library's test-only hook (tg_fault_hook, error.h): every
 * allocation site a call reaches, and every CUDA call it checks, is made to fail in turn.
 *
 *   allocation sites (host, device workspace, staging): the call returns TG_ERROR_ALLOCATION
 *     with a message naming the site, C (and its padding) is untouched;
 *   CUDA calls (GPU only): the call returns TG_ERROR_CUDA with a message naming the call;
 *   after either, the next call on the same handle succeeds with the right result.
 *
 * The sites are not listed here: a first run of each call records the ones it reaches, so a new
 * site is covered as soon as a call reaches it.  The CPU configurations run everywhere; the GPU
 * ones (staging, device memory, split-K) where a GPU exists.  Prints the number of faults.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testing.h"
#include "tilegemm.h"

#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

enum { kMaxSites = 512 };
static const char *g_sites[kMaxSites];
static int g_hits, g_fail_at = -1;

static int hook(const char *site)
{
    const int index = g_hits++;
    if (index < kMaxSites)
        g_sites[index] = site;
    return index == g_fail_at;
}

typedef struct config {
    const char *name;
    tg_backend backend;
    int device;   /* operands in device memory */
    int split_k;  /* tg_set_split_k */
    int64_t m, n, k;
    const char *algo; /* a forced rung (NULL: auto); skipped where the GPU cannot run it */
} config;

/* Row-major C = A B with small integers (exact in any order), C with a guard row after it. */
typedef struct buffers {
    float *A, *B, *C;        /* what the library sees (host or device) */
    float *hostA, *hostB, *hostC, *expected;
    int64_t c_elements;
} buffers;

static void copy_to(const config *c, float *dst, const float *src, int64_t count)
{
#ifdef TG_HAVE_CUDA
    if (c->device) {
        cudaMemcpy(dst, src, (size_t)count * sizeof(float), cudaMemcpyHostToDevice);
        return;
    }
#endif
    (void)c;
    memcpy(dst, src, (size_t)count * sizeof(float));
}

static void copy_from(const config *c, float *dst, const float *src, int64_t count)
{
#ifdef TG_HAVE_CUDA
    if (c->device) {
        cudaMemcpy(dst, src, (size_t)count * sizeof(float), cudaMemcpyDeviceToHost);
        return;
    }
#endif
    (void)c;
    memcpy(dst, src, (size_t)count * sizeof(float));
}

static float *alloc_for(const config *c, int64_t count)
{
#ifdef TG_HAVE_CUDA
    if (c->device) {
        void *p = NULL;
        return cudaMalloc(&p, (size_t)count * sizeof(float)) == cudaSuccess ? p : NULL;
    }
#endif
    (void)c;
    return malloc((size_t)count * sizeof(float));
}

static void free_for(const config *c, float *p)
{
#ifdef TG_HAVE_CUDA
    if (c->device) {
        cudaFree(p);
        return;
    }
#endif
    (void)c;
    free(p);
}

static int make_buffers(const config *c, buffers *b)
{
    b->c_elements = c->m * c->n + c->n; /* one guard row */
    b->hostA = malloc((size_t)(c->m * c->k) * sizeof(float));
    b->hostB = malloc((size_t)(c->k * c->n) * sizeof(float));
    b->hostC = malloc((size_t)b->c_elements * sizeof(float));
    b->expected = malloc((size_t)b->c_elements * sizeof(float));
    b->A = alloc_for(c, c->m * c->k);
    b->B = alloc_for(c, c->k * c->n);
    b->C = alloc_for(c, b->c_elements);
    if (!b->hostA || !b->hostB || !b->hostC || !b->expected || !b->A || !b->B || !b->C)
        return -1;
    for (int64_t i = 0; i < c->m * c->k; ++i)
        b->hostA[i] = (float)((i * 7 + 3) % 9 - 4);
    for (int64_t i = 0; i < c->k * c->n; ++i)
        b->hostB[i] = (float)((i * 5 + 1) % 7 - 3);
    for (int64_t i = 0; i < b->c_elements; ++i)
        b->hostC[i] = (float)(i % 11) - 5.0f;
    copy_to(c, b->A, b->hostA, c->m * c->k);
    copy_to(c, b->B, b->hostB, c->k * c->n);
    /* C = 1 * A B + 1 * C, in double (exact for these integers). */
    memcpy(b->expected, b->hostC, (size_t)b->c_elements * sizeof(float));
    for (int64_t i = 0; i < c->m; ++i)
        for (int64_t j = 0; j < c->n; ++j) {
            double sum = b->hostC[i * c->n + j];
            for (int64_t p = 0; p < c->k; ++p)
                sum += (double)b->hostA[i * c->k + p] * b->hostB[p * c->n + j];
            b->expected[i * c->n + j] = (float)sum;
        }
    return 0;
}

static void free_buffers(const config *c, buffers *b)
{
    free(b->hostA), free(b->hostB), free(b->hostC), free(b->expected);
    free_for(c, b->A), free_for(c, b->B), free_for(c, b->C);
}

static tg_status call(tg_handle *h, const config *c, buffers *b)
{
    copy_to(c, b->C, b->hostC, b->c_elements);
    tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, c->m, c->n, c->k, 1.0f,
                           b->A, c->k, b->B, c->n, 1.0f, b->C, c->n);
    if (s == TG_SUCCESS)
        s = tg_synchronize(h);
    return s;
}

static int faults;

static tg_handle *fresh_handle(const config *c)
{
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS || tg_set_backend(h, c->backend) != TG_SUCCESS ||
        tg_set_split_k(h, c->split_k) != TG_SUCCESS ||
        (c->algo && tg_set_algo(h, c->algo) != TG_SUCCESS)) {
        EXPECT(0, "%s: handle set-up failed: %s", c->name, tg_last_error(h));
        tg_destroy(h);
        return NULL;
    }
    return h;
}

static void run_config(const config *c)
{
    buffers b;
    memset(&b, 0, sizeof b);
    tg_handle *h = fresh_handle(c);
    if (!h || make_buffers(c, &b) != 0) {
        EXPECT(0, "%s: set-up failed", c->name);
        tg_destroy(h);
        return;
    }
    float *got = malloc((size_t)b.c_elements * sizeof(float));

    /* The sites the first call on a new handle reaches (it allocates its workspace). */
    g_hits = 0, g_fail_at = -1;
    tg_fault_hook = hook;
    tg_status s = call(h, c, &b);
    tg_fault_hook = NULL;
    tg_destroy(h);
    if (c->algo && s == TG_ERROR_NOT_SUPPORTED) {
        printf("%s: not run (this GPU cannot run %s)\n", c->name, c->algo);
        free(got);
        free_buffers(c, &b);
        return;
    }
    const int sites = g_hits < kMaxSites ? g_hits : kMaxSites;
    EXPECT(s == TG_SUCCESS, "%s: the call without faults failed", c->name);
    EXPECT(sites > 0, "%s: the call reached no allocation site or CUDA call", c->name);

    for (int i = 0; i < sites; ++i) {
        if (!(h = fresh_handle(c)))
            break;
        g_hits = 0, g_fail_at = i;
        tg_fault_hook = hook;
        s = call(h, c, &b);
        tg_fault_hook = NULL;
        if (g_hits <= i) { /* this run took another path */
            tg_destroy(h);
            continue;
        }
        ++faults;
        const char *site = g_sites[i];
        const int cuda = strncmp(site, "CUDA: ", 6) == 0;
        copy_from(c, got, b.C, b.c_elements);
        EXPECT(s == (cuda ? TG_ERROR_CUDA : TG_ERROR_ALLOCATION),
               "%s, fault at \"%s\": status %d (%s)", c->name, site, s, tg_last_error(h));
        /* The message names what failed: the site for allocations, the call for CUDA. */
        EXPECT(strstr(tg_last_error(h), cuda ? site + 6 : site) != NULL,
               "%s, fault at \"%s\": message \"%s\" does not name it", c->name, site,
               tg_last_error(h));
        if (!cuda)
            EXPECT(memcmp(got, b.hostC, (size_t)b.c_elements * sizeof(float)) == 0,
                   "%s, fault at \"%s\": C was written", c->name, site);
        /* The same handle goes on working. */
        s = call(h, c, &b);
        copy_from(c, got, b.C, b.c_elements);
        EXPECT(s == TG_SUCCESS &&
                   memcmp(got, b.expected, (size_t)b.c_elements * sizeof(float)) == 0,
               "%s: the call after a fault at \"%s\": %s", c->name, site,
               s == TG_SUCCESS ? "wrong result" : tg_last_error(h));
        tg_destroy(h);
    }
    printf("%s: %d sites\n", c->name, sites);
    free(got);
    free_buffers(c, &b);
}

int main(void)
{
    /* tg_create itself. */
    g_hits = 0, g_fail_at = 0;
    tg_fault_hook = hook;
    tg_handle *h = NULL;
    const tg_status s = tg_create(&h);
    tg_fault_hook = NULL;
    EXPECT(s == TG_ERROR_ALLOCATION && h == NULL && strstr(tg_last_error(NULL), "host: handle"),
           "tg_create with its allocation failing: %d, %s", s, tg_last_error(NULL));
    faults += g_hits > 0;

    const config cpu[] = {
        {"cpu blocked", TG_BACKEND_CPU, 0, 0, 150, 170, 190, NULL},
    };
    for (size_t i = 0; i < sizeof cpu / sizeof *cpu; ++i)
        run_config(&cpu[i]);
    if (tg_backend_available(TG_BACKEND_CUDA)) {
        const config gpu[] = {
            {"cuda host (staged)", TG_BACKEND_CUDA, 0, 1, 300, 200, 100, NULL},
            {"cuda device", TG_BACKEND_CUDA, 1, 1, 300, 200, 100, NULL},
            {"cuda device split-K", TG_BACKEND_CUDA, 1, 4, 64, 64, 2000, NULL},
            {"cuda host split-K", TG_BACKEND_CUDA, 0, 4, 64, 64, 2000, NULL},
            /* a rung with its own device workspace (rung 9's TF32 planes) */
            {"cuda device tma_wgmma3xtf32", TG_BACKEND_CUDA, 1, 1, 300, 200, 100,
             "tma_wgmma3xtf32"},
        };
        for (size_t i = 0; i < sizeof gpu / sizeof *gpu; ++i)
            run_config(&gpu[i]);
    } else {
        printf("test_faults: no GPU: the device workspace, staging and CUDA call faults were "
               "not injected\n");
    }
    printf("test_faults: %d faults injected\n", faults);
    return tg_test_result("test_faults");
}
