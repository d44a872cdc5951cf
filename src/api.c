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
#include "plan/split_k.h" /* tg_split_k_next: the counts the planner weighs */

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

_Static_assert(TG_MAX_GPUS == TG_MAX_DEVICES, "host_split.h and tilegemm.h agree on the GPUs");

/* Checks a list of GPUs for tg_set_devices and TILEGEMM_DEVICES (what names it in messages;
 * an error is reported at argument position 2, tg_set_devices' devices, or 0 for the
 * environment, err NULL) and stores it; nothing changes on an error. */
static tg_status store_devices(tg_handle *h, tg_error *err, const char *what, const int *ids,
                               int count)
{
    const int arg = err ? 2 : 0;
    const int gpus = tg_cuda_device_count();
    for (int i = 0; i < count; ++i) {
        if (ids[i] < 0 || ids[i] >= gpus || ids[i] >= TG_MAX_DEVICES)
            return tg_record(err, TG_ERROR_INVALID_ARGUMENT, arg,
                             "%s: GPU %d is not one of the %d GPU(s) found (0 .. %d)", what,
                             ids[i], gpus, gpus - 1);
        for (int j = 0; j < i; ++j)
            if (ids[j] == ids[i])
                return tg_record(err, TG_ERROR_INVALID_ARGUMENT, arg,
                                 "%s: GPU %d is named twice (entries %d and %d)", what, ids[i],
                                 j, i);
    }
    for (int i = 0; i < count; ++i)
        h->devices[i] = ids[i];
    h->device_list = count;
    return TG_SUCCESS;
}

/* TILEGEMM_DEVICES = all | 0,1,...  Without a GPU the list is only checked for its form. */
static tg_status parse_devices(tg_handle *h, const char *text)
{
    int ids[TG_MAX_DEVICES], count = 0;
    if (strcmp(text, "all") == 0) {
        const int gpus = tg_cuda_device_count();
        for (int i = 0; i < gpus && i < TG_MAX_DEVICES; ++i)
            ids[count++] = i;
        h->device_list = 0;
        return count > 1 ? store_devices(h, NULL, "TILEGEMM_DEVICES", ids, count) : TG_SUCCESS;
    }
    const char *at = text;
    for (;;) {
        char *end = NULL;
        errno = 0;
        const long id = strtol(at, &end, 10);
        if (end == at || errno || id < 0 || id >= TG_MAX_DEVICES || (*end && *end != ',') ||
            count == TG_MAX_DEVICES || *at == '+' || *at == ' ')
            return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 0,
                           "TILEGEMM_DEVICES = \"%s\" is not \"all\" or a list of GPU numbers "
                           "0 .. %d such as 0,1",
                           text, TG_MAX_DEVICES - 1);
        ids[count++] = (int)id;
        if (!*end)
            break;
        at = end + 1;
    }
    if (tg_cuda_device_count() == 0)
        return TG_SUCCESS; /* no GPU: host products run on the CPU */
    return store_devices(h, NULL, "TILEGEMM_DEVICES", ids, count);
}

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
    const char *devices = getenv("TILEGEMM_DEVICES");
    if (devices && *devices) {
        tg_status s = parse_devices(h, devices);
        if (s != TG_SUCCESS)
            return s;
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
    tg_cuda_release_tiles(h);
    free(h->partial.written);
    h->partial.written = NULL;
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

tg_status tg_set_devices(tg_handle *h, const int *devices, int count)
{
    REQUIRE_HANDLE(h);
    if (count < TG_ALL_DEVICES || count > TG_MAX_DEVICES)
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 3,
                       "count = %d is not TG_ALL_DEVICES (-1), 0 (the handle's GPU) or 1 .. %d",
                       count, TG_MAX_DEVICES);
    if (count > 0 && !devices)
        return tg_fail(h, TG_ERROR_INVALID_ARGUMENT, 2, "devices is NULL but count = %d", count);
    const int gpus = tg_cuda_device_count();
    if (gpus == 0)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "no GPU was found to spread products over");
    if (count == 0) {
        h->device_list = 0;
        return TG_SUCCESS;
    }
    if (count == TG_ALL_DEVICES) {
        int ids[TG_MAX_DEVICES];
        count = gpus < TG_MAX_DEVICES ? gpus : TG_MAX_DEVICES;
        for (int i = 0; i < count; ++i)
            ids[i] = i;
        return store_devices(h, &h->error, "TG_ALL_DEVICES", ids, count);
    }
    char what[40];
    snprintf(what, sizeof what, "devices[0 .. %d]", count - 1);
    return store_devices(h, &h->error, what, devices, count);
}

int tg_get_devices(const tg_handle *h, int *devices, int max)
{
    if (!live(h) || tg_cuda_device_count() == 0)
        return 0;
    int ids[TG_MAX_DEVICES];
    const int count = tg_devices_of(h, ids);
    for (int i = 0; i < count && i < max && devices; ++i)
        devices[i] = ids[i];
    return count;
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

double tg_algo_auto_margin(int index)
{
    return index >= 0 && index < tg_rung_count ? tg_rung_auto_margin(tg_rungs[index]) : 1.0;
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

int tg_runs_tiled(const tg_problem *p, const tg_plan *plan)
{
    return plan->backend == TG_BACKEND_CUDA && plan->rung >= 0 && p->batch == 1 &&
           plan->stage[TG_SLOT_A] && plan->stage[TG_SLOT_B] && plan->stage[TG_SLOT_C];
}

void tg_cpu_complete(tg_handle *h, const tg_call *call)
{
    tg_problem p;
    tg_normalize(call, &p);
    if (!h || !h->partial.written || h->partial.grid.m != p.m || h->partial.grid.n != p.n ||
        h->partial.grid.k != p.k) {
        tg_cpu_sgemm(&p);
        return;
    }
    const tg_tile_grid *g = &h->partial.grid;
    for (int64_t t = 0; t < tg_tile_count(g); ++t) {
        if (h->partial.written[t])
            continue;
        const tg_tile at = tg_tile_at(g, t);
        tg_problem q = p;
        q.m = at.m;
        q.n = at.n;
        q.A = p.A + at.i0 * p.a_rs;
        q.B = p.B + at.j0 * p.b_cs;
        q.C = p.C + at.i0 * p.ldc + at.j0;
        tg_cpu_sgemm(&q);
    }
}

tg_status tg_run_validated(tg_handle *h, const tg_call *call)
{
    tg_problem p;
    tg_plan plan;
    tg_normalize(call, &p);
    free(h->partial.written);
    h->partial.written = NULL;
    tg_status s = tg_make_plan(h, &p, &plan, 0);
    if (s != TG_SUCCESS)
        return s;
    if (tg_runs_tiled(&p, &plan)) {
        /* sets h->last_rung (the first tile's rung) on success */
        return tg_cuda_execute_tiles(h, &p, &plan);
    }
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
                                .sm_count = h->sm_count, .card = h->card};
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
    tg_append_choice_reasons(&c, h->algo >= 0, &dev, &p, buf, buf_size);
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

tg_status tg_split_k_counts(const char *algo, int64_t m, int64_t n, int64_t k, int *counts,
                            int max, int *count)
{
    if (!counts || !count || max < 1)
        return tg_fail(NULL, TG_ERROR_INVALID_ARGUMENT, 0, "%s",
                       !counts ? "counts is NULL" : !count ? "count is NULL" : "max is below 1");
    int most = 1;
    const tg_status s = tg_split_k_most(algo, m, n, k, &most);
    if (s != TG_SUCCESS)
        return s;
    *count = 0;
    for (int slices = 1; slices <= most && *count < max; slices = tg_split_k_next(slices))
        counts[(*count)++] = slices;
    return TG_SUCCESS;
}

/* The split of a host product for tg_explain: the tiles, the GPUs and their shares, and each
 * distinct tile shape's rung.  The rung named by the lines above is the whole product's; the
 * tiles run their own (h->explained_rung becomes the first tile's). */
static tg_status explain_tiles(tg_handle *h, const tg_problem *p, char *buf, size_t size)
{
    const tg_tile_grid g = tg_tile_grid_of(p->m, p->n, p->k);
    int ids[TG_MAX_DEVICES];
    const int gpus = tg_devices_of(h, ids);
    size_t used = 0;
#define ADD(...)                                                                                 \
    do {                                                                                         \
        if (used < size)                                                                         \
            used += (size_t)snprintf(buf + used, size - used, __VA_ARGS__);                      \
    } while (0)
    ADD("split: host operands, so C is cut into %lldx%lld tiles of %lldx%lld (%lld tiles, "
        "the last row and column the remainder) over %d GPU(s):",
        (long long)g.rows, (long long)g.cols, (long long)g.tile_m, (long long)g.tile_n,
        (long long)tg_tile_count(&g), gpus);
    for (int i = 0; i < gpus; ++i) {
        int64_t lo, hi;
        tg_tile_share(&g, gpus, i, &lo, &hi);
        if (hi > lo)
            ADD(" GPU %d tiles %lld..%lld%s", ids[i], (long long)lo, (long long)hi - 1,
                i + 1 < gpus ? ";" : "");
        else
            ADD(" GPU %d none%s", ids[i], i + 1 < gpus ? ";" : "");
    }
    ADD("\n");
    /* the distinct shapes: full, last row, last column, corner */
    const int64_t firsts[4] = {0, (g.rows - 1) * g.cols, g.cols - 1, tg_tile_count(&g) - 1};
    int64_t seen_m[4], seen_n[4];
    int seen = 0;
    for (int i = 0; i < 4; ++i) {
        const tg_tile at = tg_tile_at(&g, firsts[i]);
        int dup = 0;
        for (int j = 0; j < seen; ++j)
            dup |= seen_m[j] == at.m && seen_n[j] == at.n;
        if (dup)
            continue;
        seen_m[seen] = at.m, seen_n[seen] = at.n, ++seen;
        /* the first k-cut, and the last where it is shorter */
        const int64_t last_cut = g.k_cuts - 1;
        const int shapes = last_cut > 0 && p->k - last_cut * g.k_cut != g.k_cut ? 2 : 1;
        for (int cut_shape = 0; cut_shape < shapes; ++cut_shape) {
            const int64_t q = cut_shape == 0 ? 0 : last_cut;
            tg_problem tile;
            tg_choice c;
            if (!tg_tile_choice(h, p, &g, firsts[i], q, &tile, &c))
                return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                               "%s cannot run a %lldx%lldx%lld tile of this product",
                               h->algo >= 0 ? "the forced algo" : "no CUDA rung of this build",
                               (long long)at.m, (long long)at.n, (long long)tile.k);
            if (i == 0 && q == 0)
                h->explained_rung = c.rung;
            ADD("tile %lldx%lldx%lld%s: rung %s, split-K %d (the same on every GPU)\n",
                (long long)at.m, (long long)at.n, (long long)tile.k,
                shapes == 1 ? "" : q == 0 ? " (k-cuts but the last)" : " (the last k-cut)",
                tg_rungs[c.rung]->name, c.split_k);
        }
    }
    if (g.k_cuts > 1)
        ADD("k-cuts: each tile's product runs over %lld cuts of k of %lld (the last %lld), each "
            "adding into the tile, so that it starts once the first cut of its panels is in\n",
            (long long)g.k_cuts, (long long)g.k_cut,
            (long long)(p->k - (g.k_cuts - 1) * g.k_cut));
    ADD("staging: each GPU loads the A row-panels and B column-panels of its tiles once where "
        "its memory holds them (then visiting its tiles in growing squares; GPUs that each keep "
        "all of B and can read each other's memory load only the B panels they own and copy the "
        "rest from their owners); pinned host memory by DMA, pageable through %d pinned bounce "
        "buffers of %lld MiB a GPU filled by host threads; each C tile back through pinned "
        "memory (by DMA straight into a pinned C when beta = 0)\n",
        TG_BOUNCE_COUNT, (long long)(TG_BOUNCE_BYTES >> 20));
#undef ADD
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
    if (tg_runs_tiled(&p, &plan)) {
        const size_t used = strlen(buf);
        if ((s = explain_tiles(h, &p, buf + used, buf_size - used)) != TG_SUCCESS)
            return s;
    }
    return TG_SUCCESS;
}
