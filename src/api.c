/*
 * The host API: handles, the error record, and the path of one call:
 * validate -> quick return -> normalize -> plan -> run on the planned backend.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cuda/backend.h"
#include "cuda/registry.h"
#include "internal.h"
#include "plan/tuning.h" /* tg_tuned: the row a choice followed */
#include "plan/autotune.h"

/* Host calls under this much work (m*n*k*batch) stay on the CPU: the staging copies cost more
 * than the CPU needs.  Overridden by TILEGEMM_GPU_MIN_WORK. */
#define TG_DEFAULT_GPU_MIN_WORK (256LL * 256 * 256)

const char *tg_version(void) { return TG_VERSION_STRING; }

const char *tg_gpu_code(void) { return tg_cuda_code(); }

const char *tg_status_string(tg_status status)
{
    switch (status) {
    case TG_SUCCESS: return "success";
    case TG_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case TG_ERROR_INVALID_HANDLE: return "invalid handle";
    case TG_ERROR_NOT_SUPPORTED: return "not supported";
    case TG_ERROR_ALLOCATION: return "allocation failed";
    case TG_ERROR_CUDA: return "CUDA error";
    case TG_ERROR_UNKNOWN_ALGO: return "unknown algo";
    }
    return "unknown status";
}

/* --- Handle lifetime -------------------------------------------------------------------------
 * A handle is live from tg_create to tg_destroy, marked by its magic.  tg_destroy releases what
 * the handle owns and clears the mark, but keeps the struct itself among the last
 * TG_RETIRED_HANDLES destroyed, freeing only the oldest: a second tg_destroy or a later call
 * with it then reads memory the library still owns, finds no mark and is refused, instead of
 * freeing twice or using freed memory. */
enum { TG_HANDLE_LIVE = 0x74676831u /* "tgh1" */ };

static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static tg_handle *retired[TG_RETIRED_HANDLES];
static int retired_next; /* the oldest slot, the next to be reused */

static int live(const tg_handle *h) { return h && h->magic == TG_HANDLE_LIVE; }

/* Frees the retired handles when the library is unloaded, so repeated dlopen/dlclose leaks
 * nothing. */
__attribute__((destructor)) static void free_retired(void)
{
    for (int i = 0; i < TG_RETIRED_HANDLES; ++i) {
        free(retired[i]);
        retired[i] = NULL;
    }
}

const char *tg_last_error(const tg_handle *h)
{
    return live(h) ? h->error.message : tg_orphan_error()->message;
}

int tg_last_error_arg(const tg_handle *h)
{
    return live(h) ? h->error.arg : tg_orphan_error()->arg;
}

/* A NULL or dead handle: the error goes to the calling thread's record, which tg_last_error
 * of that handle returns. */
static tg_status no_handle(const tg_handle *h)
{
    if (h)
        return tg_fail(NULL, TG_ERROR_INVALID_HANDLE, 1,
                       "handle was destroyed (tg_destroy) or never made by tg_create");
    return tg_fail(NULL, TG_ERROR_INVALID_HANDLE, 0, "handle is NULL; create one with tg_create");
}

#define REQUIRE_HANDLE(h)                                                                        \
    do {                                                                                         \
        if (!live(h))                                                                            \
            return no_handle(h);                                                                 \
        (h)->error.message[0] = '\0';                                                            \
        (h)->error.arg = 0;                                                                      \
    } while (0)

/* Reads the environment's defaults for a new handle; a value it cannot parse is an error. */
static tg_status read_environment(tg_handle *h)
{
    const char *backend = getenv("TILEGEMM_BACKEND");
    if (backend && *backend) {
        if (strcmp(backend, "auto") == 0)
            h->backend = TG_BACKEND_AUTO;
        else if (strcmp(backend, "cpu") == 0)
            h->backend = TG_BACKEND_CPU;
        else if (strcmp(backend, "cuda") == 0)
            h->backend = TG_BACKEND_CUDA;
        else
            return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 0,
                           "TILEGEMM_BACKEND = \"%s\" is not one of auto, cpu, cuda", backend);
    }
    const char *math = getenv("TILEGEMM_MATH");
    if (math && *math) {
        const int mode = tg_math_from_name(math);
        if (mode < 0)
            return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 0,
                           "TILEGEMM_MATH = \"%s\" is not one of fp32, strict, tf32", math);
        h->math = (tg_math)mode;
    }
    const char *autotune = getenv("TILEGEMM_AUTOTUNE");
    if (autotune && *autotune) {
        if (strcmp(autotune, "0") && strcmp(autotune, "1"))
            return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 0,
                           "TILEGEMM_AUTOTUNE = \"%s\" is not 0 or 1", autotune);
        h->autotune = autotune[0] == '1';
    }
    const char *min_work = getenv("TILEGEMM_GPU_MIN_WORK");
    if (min_work && *min_work) {
        char *end = NULL;
        errno = 0;
        const long long value = strtoll(min_work, &end, 10);
        if (errno || *end || value < 0)
            return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 0,
                           "TILEGEMM_GPU_MIN_WORK = \"%s\" is not a non-negative integer",
                           min_work);
        h->gpu_min_work = value;
    }
    return TG_SUCCESS;
}

tg_status tg_create(tg_handle **handle)
{
    if (!handle)
        return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 1, "handle is NULL: pass &your_handle");
    *handle = NULL;
    tg_handle *h = TG_FAULT("host: handle") ? NULL : calloc(1, sizeof *h);
    if (!h)
        return tg_fail(NULL, TG_ERROR_ALLOCATION, 0, "host: handle: could not allocate one");
    h->magic = TG_HANDLE_LIVE;
    h->backend = TG_BACKEND_AUTO;
    h->algo = -1;
    h->gpu_min_work = TG_DEFAULT_GPU_MIN_WORK;
    h->math = TG_MATH_FP32;
    h->last_rung = h->explained_rung = TG_RAN_NOTHING;
    tg_status s = read_environment(h);
    if (s == TG_SUCCESS && tg_cuda_device_count() > 0)
        s = tg_cuda_attach(h);
    /* A handle forced onto the CPU never touches the GPU, so it makes no CUDA context. */
    if (s == TG_SUCCESS && h->backend != TG_BACKEND_CPU)
        s = tg_cuda_ensure_stream(h);
    if (s != TG_SUCCESS) {
        if (h->error.message[0]) /* a CUDA failure recorded on the half-made handle */
            *tg_orphan_error() = h->error;
        free(h);
        return s;
    }
    *handle = h;
    return TG_SUCCESS;
}

tg_status tg_destroy(tg_handle *h)
{
    /* The mark is cleared under the lock: of two threads destroying one handle, one wins. */
    pthread_mutex_lock(&retired_lock);
    const int was_live = live(h);
    if (was_live)
        h->magic = 0;
    pthread_mutex_unlock(&retired_lock);
    if (!was_live)
        return no_handle(h);
    tg_cuda_release(h);
    pthread_mutex_lock(&retired_lock);
    tg_handle *oldest = retired[retired_next];
    retired[retired_next] = h;
    retired_next = (retired_next + 1) % TG_RETIRED_HANDLES;
    pthread_mutex_unlock(&retired_lock);
    free(oldest);
    return TG_SUCCESS;
}

tg_status tg_set_stream(tg_handle *h, void *cuda_stream)
{
    REQUIRE_HANDLE(h);
    if (tg_cuda_device_count() == 0)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 2, "a stream was given but no GPU was found");
    return tg_cuda_switch_stream(h, cuda_stream);
}

void *tg_get_stream(const tg_handle *h) { return live(h) ? h->stream : NULL; }

tg_status tg_synchronize(tg_handle *h)
{
    REQUIRE_HANDLE(h);
    return tg_cuda_synchronize(h);
}

int tg_backend_available(tg_backend backend)
{
    switch (backend) {
    case TG_BACKEND_AUTO:
    case TG_BACKEND_CPU: return 1;
    case TG_BACKEND_CUDA: return tg_cuda_device_count() > 0;
    }
    return 0;
}

tg_status tg_set_backend(tg_handle *h, tg_backend backend)
{
    REQUIRE_HANDLE(h);
    if (backend != TG_BACKEND_AUTO && backend != TG_BACKEND_CPU && backend != TG_BACKEND_CUDA)
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 2,
                       "backend = %d is not TG_BACKEND_AUTO, TG_BACKEND_CPU or TG_BACKEND_CUDA",
                       (int)backend);
    if (!tg_backend_available(backend))
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 2,
                       "backend = TG_BACKEND_CUDA but no GPU was found");
    h->backend = backend;
    return backend == TG_BACKEND_CPU ? TG_SUCCESS : tg_cuda_ensure_stream(h);
}

tg_status tg_set_split_k(tg_handle *h, int slices)
{
    REQUIRE_HANDLE(h);
    if (slices < 0 || slices > TG_MAX_SPLIT_K)
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 2,
                       "slices = %d is not 0 (auto), 1 (never) or 2..%d", slices, TG_MAX_SPLIT_K);
    h->split_k = slices;
    return TG_SUCCESS;
}

tg_status tg_set_math(tg_handle *h, tg_math mode)
{
    REQUIRE_HANDLE(h);
    if ((unsigned)mode > TG_MATH_TF32)
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 2,
                       "mode = %d is not TG_MATH_FP32, TG_MATH_STRICT_FMA or TG_MATH_TF32",
                       (int)mode);
    h->math = mode;
    return TG_SUCCESS;
}

tg_math tg_get_math(const tg_handle *h) { return live(h) ? h->math : TG_MATH_FP32; }

tg_status tg_set_autotune(tg_handle *h, int on)
{
    REQUIRE_HANDLE(h);
    h->autotune = on != 0;
    return TG_SUCCESS;
}

int tg_get_autotune(const tg_handle *h) { return live(h) ? h->autotune : 0; }

const char *tg_autotune_status(void) { return tg_at_status(); }

tg_backend tg_get_backend(const tg_handle *h) { return live(h) ? h->backend : TG_BACKEND_AUTO; }

const char *tg_get_algo(const tg_handle *h)
{
    return live(h) && h->algo >= 0 ? tg_rungs[h->algo]->name : "auto";
}

int tg_algo_count(void) { return tg_rung_count; }

tg_status tg_algo_info_get(int index, tg_algo_info *info)
{
    if (!info)
        return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 2, "info is NULL");
    if (index < 0 || index >= tg_rung_count)
        return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 1,
                       "index = %d is not in 0 .. tg_algo_count() - 1 = %d", index,
                       tg_rung_count - 1);
    const tg_rung *r = tg_rungs[index];
    *info = (tg_algo_info){.name = r->name, .level = r->level, .summary = r->summary,
                           .block_rows = r->block_rows, .block_cols = r->block_cols,
                           .in_auto = r->in_auto, .arith = r->arith, .min_cc = r->min_cc};
    return TG_SUCCESS;
}

static const char *ran_name(int ran)
{
    return ran == TG_RAN_NOTHING ? "none" : ran == TG_RAN_CPU ? "cpu" : tg_rungs[ran]->name;
}

const char *tg_last_algo(const tg_handle *h) { return live(h) ? ran_name(h->last_rung) : "none"; }

const char *tg_explained_algo(const tg_handle *h)
{
    return live(h) ? ran_name(h->explained_rung) : "none";
}

static const char *algo_names[64];
static pthread_once_t algo_names_once = PTHREAD_ONCE_INIT;

static void fill_algo_names(void)
{
    int n = 0;
    algo_names[n++] = "auto";
    for (int i = 0; i < tg_rung_count && n < 63; ++i)
        algo_names[n++] = tg_rungs[i]->name;
    algo_names[n] = NULL;
}

const char *const *tg_algos(void)
{
    pthread_once(&algo_names_once, fill_algo_names);
    return algo_names;
}

tg_status tg_set_algo(tg_handle *h, const char *name)
{
    REQUIRE_HANDLE(h);
    if (!name)
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 2, "name is NULL");
    if (strcmp(name, "auto") == 0) {
        h->algo = -1;
        return TG_SUCCESS;
    }
    const int rung = tg_find_rung(name);
    if (rung < 0)
        return tg_fail(h, TG_ERROR_UNKNOWN_ALGO, 2,
                       "algo \"%s\" is not one of tg_algos()%s", name,
                       tg_rung_count == 0 ? " (this build has no CUDA rungs)" : "");
    h->algo = rung;
    return TG_SUCCESS;
}

tg_status tg_run_validated(tg_handle *h, const tg_call *call)
{
    tg_problem p;
    tg_plan plan;
    tg_normalize(call, &p);
    tg_status s = tg_make_plan(h, &p, &plan, 0);
    if (s != TG_SUCCESS)
        return s;
    if (plan.backend == TG_BACKEND_CUDA) {
        /* Autotuning's first call of a key: the candidates are timed on scratch buffers and
         * the fastest runs below; any failure leaves the planner's choice. */
        if (plan.autotune_pending)
            tg_cuda_autotune(h, &p, &plan);
        s = tg_cuda_execute(h, &p, &plan);
        if (s == TG_SUCCESS)
            h->last_rung = plan.rung >= 0 ? plan.rung : TG_RAN_NOTHING;
        return s;
    }
    /* Managed memory may still be written by work queued on the handle's stream. */
    if (plan.managed && (s = tg_cuda_synchronize(h)) != TG_SUCCESS)
        return s;
    if (tg_cpu_sgemm_checked(&p) != 0)
        return tg_fail(h, TG_ERROR_ALLOCATION, 0,
                       "host: CPU packing buffers: could not be allocated; C was not written");
    h->last_rung = tg_has_product(p.alpha, p.k) ? TG_RAN_CPU : TG_RAN_NOTHING;
    return TG_SUCCESS;
}

static tg_status run(tg_handle *h, const tg_call *call)
{
    REQUIRE_HANDLE(h);
    tg_status s = tg_validate(call, &h->error);
    if (s == TG_SUCCESS)
        s = tg_check_aliasing(call, &h->error);
    if (s != TG_SUCCESS)
        return s;
    if (tg_is_quick_return(call)) {
        h->last_rung = TG_RAN_NOTHING;
        return TG_SUCCESS;
    }
    return tg_run_validated(h, call);
}

tg_status tg_sgemm(tg_handle *h, tg_layout layout, tg_op transa, tg_op transb, int64_t m,
                   int64_t n, int64_t k, float alpha, const float *A, int64_t lda, const float *B,
                   int64_t ldb, float beta, float *C, int64_t ldc)
{
    const tg_call call = {.layout = layout, .transa = transa, .transb = transb,
                          .m = m, .n = n, .k = k, .alpha = alpha, .beta = beta,
                          .A = A, .lda = lda, .B = B, .ldb = ldb, .C = C, .ldc = ldc,
                          .batch = 1, .batched = 0};
    return run(h, &call);
}

tg_status tg_sgemm_strided_batched(tg_handle *h, tg_layout layout, tg_op transa, tg_op transb,
                                   int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                                   int64_t lda, int64_t stride_a, const float *B, int64_t ldb,
                                   int64_t stride_b, float beta, float *C, int64_t ldc,
                                   int64_t stride_c, int64_t batch_count)
{
    const tg_call call = {.layout = layout, .transa = transa, .transb = transb,
                          .m = m, .n = n, .k = k, .alpha = alpha, .beta = beta,
                          .A = A, .lda = lda, .stride_a = stride_a,
                          .B = B, .ldb = ldb, .stride_b = stride_b,
                          .C = C, .ldc = ldc, .stride_c = stride_c,
                          .batch = batch_count, .batched = 1};
    return run(h, &call);
}

/* A plain product of device operands for the planning entry points (tg_choose_algo,
 * tg_explain_gpu, tg_autotune_shape): operands as cudaMalloc returns them, aligned and never
 * read, alpha 1, beta 0; validated as tg_sgemm validates. */
static tg_status placeholder_call(tg_handle *h, tg_layout layout, tg_op transa, tg_op transb,
                                  int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                                  int64_t ldc, tg_call *call)
{
    static _Alignas(256) float device_placeholder[1];
    float *const x = device_placeholder;
    *call = (tg_call){.layout = layout, .transa = transa, .transb = transb, .m = m, .n = n,
                      .k = k, .alpha = 1.0f, .beta = 0.0f, .A = x, .lda = lda, .B = x,
                      .ldb = ldb, .C = x, .ldc = ldc, .batch = 1, .batched = 0};
    return tg_validate(call, &h->error);
}

tg_status tg_choose_algo(tg_handle *h, tg_layout layout, tg_op transa, tg_op transb, int64_t m,
                         int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                         const char **algo, int *split_k)
{
    REQUIRE_HANDLE(h);
    if (!algo || !split_k)
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 0, "%s is NULL", algo ? "split_k" : "algo");
    tg_call call;
    tg_status s = placeholder_call(h, layout, transa, transb, m, n, k, lda, ldb, ldc, &call);
    if (s != TG_SUCCESS)
        return s;
    *algo = "none";
    *split_k = 1;
    if (tg_is_quick_return(&call))
        return TG_SUCCESS;
    tg_problem p;
    tg_plan plan;
    tg_normalize(&call, &p);
    if ((s = tg_plan_device_rung(h, &p, &plan)) != TG_SUCCESS)
        return s;
    *algo = ran_name(plan.rung);
    *split_k = plan.split_k;
    return TG_SUCCESS;
}

/* The planner's choice for p on dev with the handle's settings: the one call of tg_choose here. */
static int choose_for(const tg_handle *h, const tg_device_props *dev, const tg_problem *p,
                      tg_choice *c)
{
    return tg_choose(dev, h->math, h->algo, h->split_k, p, c);
}

tg_status tg_explain_gpu(tg_handle *h, int compute_capability, int sm_count, tg_layout layout,
                         tg_op transa, tg_op transb, int64_t m, int64_t n, int64_t k,
                         int64_t lda, int64_t ldb, int64_t ldc, const char **algo, int *split_k,
                         char *buf, size_t buf_size)
{
    REQUIRE_HANDLE(h);
    if (!algo || !split_k || !buf || buf_size == 0)
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 0, "%s",
                       !algo ? "algo is NULL" : !split_k ? "split_k is NULL"
                                                         : "buf is NULL or buf_size is 0");
    buf[0] = '\0';
    *algo = "none";
    *split_k = 1;
    if (compute_capability < 0 || (compute_capability > 0 && sm_count <= 0))
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 0,
                       "compute_capability = %d, sm_count = %d: a GPU has a compute capability "
                       "of at least 10 (1.0) and at least one SM (0 for the handle's own GPU)",
                       compute_capability, sm_count);
    tg_call call;
    tg_status s = placeholder_call(h, layout, transa, transb, m, n, k, lda, ldb, ldc, &call);
    if (s != TG_SUCCESS)
        return s;
    if (tg_is_quick_return(&call) || !tg_has_product(call.alpha, call.k)) {
        snprintf(buf, buf_size, "no product to compute (m, n or k is 0): no rung runs\n");
        return TG_SUCCESS;
    }
    if (tg_rung_count == 0)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "this build has no CUDA rungs");
    tg_device_props dev = {.compute_capability = compute_capability, .sm_count = sm_count};
    if (compute_capability == 0) {
        /* A handle forced onto the CPU at tg_create never learned its GPU. */
        if (tg_cuda_device_count() == 0 || h->compute_capability <= 0)
            return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                           "there is no GPU to plan for: name a compute capability");
        dev = (tg_device_props){.compute_capability = h->compute_capability,
                                .sm_count = h->sm_count};
    }
    tg_problem p;
    tg_normalize(&call, &p);
    tg_choice c;
    if (!choose_for(h, &dev, &p, &c))
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "%s on sm_%d",
                       h->algo >= 0 ? "the forced algo cannot run this call"
                                    : "no CUDA rung of this build supports this call",
                       dev.compute_capability);
    *algo = tg_rungs[c.rung]->name;
    *split_k = c.split_k;
    tg_append_choice_reasons(&c, h->algo >= 0, dev.compute_capability,
                             2.0 * (double)m * (double)n * (double)k, buf, buf_size);
    return TG_SUCCESS;
}

tg_status tg_autotune_shape(tg_handle *h, tg_layout layout, tg_op transa, tg_op transb,
                            int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                            int64_t ldc, const char **algo, int *split_k, double *ms)
{
    REQUIRE_HANDLE(h);
    tg_call call;
    tg_status s = placeholder_call(h, layout, transa, transb, m, n, k, lda, ldb, ldc, &call);
    if (s != TG_SUCCESS)
        return s;
    if (tg_is_quick_return(&call) || k == 0)
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 0,
                       "%lldx%lldx%lld has no product to time", (long long)m, (long long)n,
                       (long long)k);
    if (tg_cuda_device_count() == 0)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "there is no GPU to tune for");
    tg_problem p;
    tg_normalize(&call, &p);
    tg_at_entry chosen;
    if ((s = tg_cuda_autotune_measure(h, &p, 0, &chosen)) != TG_SUCCESS)
        return s;
    if (algo)
        *algo = tg_rungs[tg_find_rung(chosen.rung)]->name; /* static, unlike chosen's copy */
    if (split_k)
        *split_k = chosen.slices;
    if (ms)
        *ms = chosen.ms;
    return TG_SUCCESS;
}

tg_status tg_split_k_most(const char *algo, int64_t m, int64_t n, int64_t k, int *most)
{
    const int rung = algo ? tg_find_rung(algo) : -1;
    if (rung < 0 || !most)
        return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 0, "%s",
                       !most ? "most is NULL" : "algo is not a rung of this build (tg_algos)");
    if (m < 1 || n < 1 || k < 1)
        return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 0,
                       "m = %lld, n = %lld, k = %lld: each must be at least 1", (long long)m,
                       (long long)n, (long long)k);
    const tg_problem p = {.m = m, .n = n, .k = k, .batch = 1};
    *most = tg_most_slices(rung, &p);
    return TG_SUCCESS;
}

tg_status tg_explain(tg_handle *h, tg_layout layout, tg_op transa, tg_op transb, int64_t m,
                     int64_t n, int64_t k, const float *A, int64_t lda, const float *B,
                     int64_t ldb, const float *C, int64_t ldc, char *buf, size_t buf_size)
{
    REQUIRE_HANDLE(h);
    if (!buf || buf_size == 0)
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 14, "buf is NULL or buf_size is 0");
    buf[0] = '\0';
    /* alpha = 1, beta = 0: the plan of a plain product of these operands.  A missing pointer
     * stands for host memory. */
    static float host_placeholder;
    const tg_call call = {.layout = layout, .transa = transa, .transb = transb,
                          .m = m, .n = n, .k = k, .alpha = 1.0f, .beta = 0.0f,
                          .A = A ? A : &host_placeholder, .lda = lda,
                          .B = B ? B : &host_placeholder, .ldb = ldb,
                          .C = C ? (float *)C : &host_placeholder, .ldc = ldc,
                          .batch = 1, .batched = 0};
    tg_status s = tg_validate(&call, &h->error);
    if (s != TG_SUCCESS)
        return s;
    if (tg_is_quick_return(&call)) {
        h->explained_rung = TG_RAN_NOTHING;
        snprintf(buf, buf_size, "quick return: m or n is 0, nothing is computed or written\n");
        return TG_SUCCESS;
    }
    tg_problem p;
    tg_plan plan;
    tg_normalize(&call, &p);
    if ((s = tg_make_plan(h, &p, &plan, 1)) != TG_SUCCESS)
        return s;
    h->explained_rung = plan.backend == TG_BACKEND_CPU ? TG_RAN_CPU : plan.rung;
    snprintf(buf, buf_size, "%s", plan.why);
    return TG_SUCCESS;
}
