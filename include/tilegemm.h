/*
 * tilegemm: single-precision matrix multiply, C = alpha * op(A) * op(B) + beta * C.
 *
 * One public header, plain C11, no CUDA header needed to include it.
 *
 *   tg_handle *h;
 *   tg_create(&h);
 *   tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS,
 *                          m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
 *   if (s != TG_SUCCESS) fprintf(stderr, "%s\n", tg_last_error(h));
 *   tg_destroy(h);
 *
 * Pointers may be host, device or managed memory; the library asks the CUDA runtime which
 * and does the right thing.  Device and managed pointers run asynchronously on the handle's
 * stream; host pointers are staged through the device (or run on the CPU backend) and the
 * call returns when C is written.
 *
 * Semantics follow the reference BLAS: arguments are checked in its order, quick return when
 * m or n is 0 or when (alpha is 0 or k is 0) and beta is 1, beta = 0 never reads C and
 * alpha = 0 never reads A or B.  On any error nothing is written to C, with one exception: a
 * product of host operands is written back tile by tile (see tg_set_devices), and a failure
 * after some tiles were written leaves them, which its message says ("C is partly written").
 *
 * C must not share an element with A or B when they are read (alpha != 0 and k > 0): such a
 * call fails with TG_ERROR_INVALID_ARGUMENT at C's position ("C overlaps A: ...").  Operands
 * that lie in one buffer without sharing an element (blocks of one matrix, interleaved batch
 * items) are fine: the check compares the elements each one holds, not its address range.
 * The check is exact.  Where A or B has C's leading dimension it is decided in arithmetic,
 * whatever the batch count, with one exception: when its stride and C's, as a ratio p/q in
 * lowest terms, have min(p, batch_count) + min(q, batch_count) past 4M (strides far apart, on
 * spans far beyond any memory), the call is refused as undecided.  Operands that interleave
 * with C under another leading dimension are compared line by line and item by item, and
 * refused as undecided past 4M comparisons.  The message says so.
 * With alpha = 0 or k = 0, A and B are not read, so they may overlap C (as they may be NULL).
 */
#ifndef TILEGEMM_H
#define TILEGEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILEGEMM_VERSION_MAJOR 0
#define TILEGEMM_VERSION_MINOR 1
#define TILEGEMM_VERSION_PATCH 0

#if defined(_WIN32)
#define TG_API __declspec(dllexport)
#else
#define TG_API __attribute__((visibility("default")))
#endif

typedef enum tg_status {
    TG_SUCCESS = 0,
    TG_ERROR_INVALID_ARGUMENT = 1, /* an argument broke a BLAS rule; tg_last_error says which */
    TG_ERROR_INVALID_HANDLE = 2,   /* the handle is NULL or was destroyed (see tg_destroy) */
    TG_ERROR_NOT_SUPPORTED = 3,    /* the forced backend or algorithm cannot run this call */
    TG_ERROR_ALLOCATION = 4,       /* host or device memory could not be allocated */
    TG_ERROR_CUDA = 5,             /* a CUDA runtime call failed; tg_last_error has the call */
    TG_ERROR_UNKNOWN_ALGO = 6      /* tg_set_algo got a name that is not in tg_algos() */
} tg_status;

/* Same numbering as CBLAS, so the values can be passed straight through. */
typedef enum tg_layout { TG_ROW_MAJOR = 101, TG_COL_MAJOR = 102 } tg_layout;
typedef enum tg_op { TG_NO_TRANS = 111, TG_TRANS = 112 } tg_op;

typedef enum tg_backend {
    TG_BACKEND_AUTO = 0, /* CUDA when a GPU exists and the problem is worth a launch */
    TG_BACKEND_CPU = 1,
    TG_BACKEND_CUDA = 2
} tg_backend;

/* Math modes: accuracy is the contract, the kernel is the library's choice.
 *   TG_MATH_FP32        (default) FP32 accuracy: any path whose error stays within FP32's bound
 *                       and whose RMS error is no worse than the FMA rungs', with FP32's Inf,
 *                       NaN and beta = 0 semantics; tensor cores with each input split into two
 *                       TF32 parts (3xTF32) where that is faster, FFMA elsewhere.
 *   TG_MATH_STRICT_FMA  FP32 fused multiply-adds only: the classic ladder.
 *   TG_MATH_TF32        opt-in: inputs read as TF32 (10-bit mantissa: rounded to nearest, or
 *                       truncated as the tensor core reads shared memory; FP32 subnormals may
 *                       read as zero) on tensor cores.  Several times faster, with errors up to
 *                       1e3 times FP32's: not FP32 accuracy. */
typedef enum tg_math {
    TG_MATH_FP32 = 0,
    TG_MATH_STRICT_FMA = 1,
    TG_MATH_TF32 = 2
} tg_math;

/* The arithmetic a rung does, which decides the math modes `auto` may use it in. */
typedef enum tg_arith {
    TG_ARITH_FFMA = 0, /* FP32 fused multiply-adds: every mode */
    TG_ARITH_3XTF32,   /* tensor cores, each input split into two TF32 parts: fp32 and tf32 */
    TG_ARITH_TF32,     /* tensor cores, inputs rounded to TF32: the tf32 mode only */
    TG_ARITH_INT8      /* INT8 tensor cores at FP32 accuracy (Ozaki scheme II): fp32 and tf32 */
} tg_arith;

typedef struct tg_handle tg_handle;

/* Version string, e.g. "0.1.0". */
TG_API const char *tg_version(void);

/* Creates a handle: its workspace, its error message and, when a GPU exists, its own CUDA
 * stream (a blocking one, so it is ordered after work on the legacy default stream).  The
 * handle belongs to the GPU current at creation: make one per GPU, and call it with that GPU
 * current.  A handle forced onto the CPU (TILEGEMM_BACKEND=cpu) creates no CUDA context.
 * One handle per thread. */
TG_API tg_status tg_create(tg_handle **handle);

/* Releases the handle; from then on it is dead.  A dead handle is refused, not used: a second
 * tg_destroy, or any other call with it, returns TG_ERROR_INVALID_HANDLE and touches nothing
 * (tg_last_error of it then says so, and the getters answer as for NULL).  That holds while
 * fewer than TG_RETIRED_HANDLES other handles have been destroyed since: the library keeps
 * that many dead handles' memory, and past that the oldest goes back to the allocator, after
 * which using it is undefined, as with any freed pointer.  NULL gives
 * TG_ERROR_INVALID_HANDLE. */
#define TG_RETIRED_HANDLES 64
TG_API tg_status tg_destroy(tg_handle *handle);

/* Runs later calls on this cudaStream_t (NULL means the legacy default stream), like
 * cublasSetStream: it does not wait for work already queued on the old stream (the library
 * orders its own workspace between the two).  The handle does not own a stream it is given;
 * its own stream (what tg_get_stream returned before) stays valid until tg_destroy. */
TG_API tg_status tg_set_stream(tg_handle *handle, void *cuda_stream);
TG_API void *tg_get_stream(const tg_handle *handle);

/* Waits until the work this handle queued on its current stream has finished.  After
 * tg_set_stream, work queued on the earlier stream is the caller's to wait for. */
TG_API tg_status tg_synchronize(tg_handle *handle);

/* The GPU code this library carries and why, e.g. "built natively for sm_90a, the GPU found at
 * configure time (...)" or "portable: sm_75 sm_80 sm_90a, PTX compute_90 (any GPU from compute
 * capability 7.5 on)"; "none (built without nvcc)" without the CUDA backend.  On a GPU this code cannot run, tg_create
 * fails with TG_ERROR_NOT_SUPPORTED and a message saying how to rebuild. */
TG_API const char *tg_gpu_code(void);

/* 1 if the backend can run in this process (for CUDA: a usable GPU was found). */
TG_API int tg_backend_available(tg_backend backend);
TG_API tg_status tg_set_backend(tg_handle *handle, tg_backend backend);
/* The backend tg_set_backend (or TILEGEMM_BACKEND) forced, or TG_BACKEND_AUTO. */
TG_API tg_backend tg_get_backend(const tg_handle *handle);

/* The GPUs a product of host operands may use.  Such a call (A, B and C all in host memory,
 * one product, not a batch) cuts C into tiles and streams the panels of A and B each tile reads
 * to the GPUs through pinned buffers, several copies in flight while the tiles run; pageable
 * memory is copied into those buffers by several host threads.  Each GPU computes a contiguous
 * share of the tiles and C is written back tile by tile.  The tiles, and each tile's rung and
 * split-K, depend on the shape alone (planned for the handle's GPU), so the result is the same
 * bit for bit on one GPU or on several of the handle's GPU model.  Calls with an operand in
 * device or managed memory, and batches, run on the handle's GPU as before.
 *
 * devices[0 .. count-1] are distinct CUDA device numbers (less than TG_MAX_DEVICES);
 * count = TG_ALL_DEVICES takes every GPU (devices is then ignored), count = 0 goes back to the
 * default, the handle's own GPU.  TILEGEMM_DEVICES = all | 0,1,... sets the same at tg_create
 * (the BLAS entry points' handles read it too).  TG_ERROR_INVALID_ARGUMENT names the bad entry;
 * TG_ERROR_NOT_SUPPORTED without a GPU.
 *
 * When one GPU fails, the call returns its error (the message names the GPU) after every GPU
 * has stopped.  Tiles already written stay written: the message then says "C is partly
 * written" and how many tiles were; otherwise it says C was not written.
 *
 * The handle keeps each GPU's buffers (device panels, pinned bounce buffers) between calls,
 * until tg_destroy.  TILEGEMM_HOST_THREADS sets the host copy threads (default: the cores
 * online less one per GPU, at most 16 a GPU).  With TILEGEMM_HOST_TIMELINE set, each GPU
 * writes to stderr when its share is done when each of its tiles' copies in, product and copy
 * back ended, in ms from its start. */
#define TG_MAX_DEVICES 64
#define TG_ALL_DEVICES (-1)
TG_API tg_status tg_set_devices(tg_handle *handle, const int *devices, int count);
/* Writes up to max of the GPUs host products use into devices and returns how many there are
 * (the handle's own GPU alone by default; 0 without a GPU or for a bad handle). */
TG_API int tg_get_devices(const tg_handle *handle, int *devices, int max);

/* Forces a kernel rung by name ("auto" restores the per-shape choice).
 * tg_algos() returns a NULL-terminated list of the names, "auto" first. */
TG_API tg_status tg_set_algo(tg_handle *handle, const char *name);
/* The rung tg_set_algo forced, or "auto". */
TG_API const char *tg_get_algo(const tg_handle *handle);
TG_API const char *const *tg_algos(void);

/* The handle's math mode (TG_MATH_FP32 unless TILEGEMM_MATH = fp32 | strict | tf32 says
 * otherwise at tg_create).  tg_math_name gives the names the environment, the CLI and Python
 * take; tg_math_from_name parses them (-1 for an unknown name). */
TG_API tg_status tg_set_math(tg_handle *handle, tg_math mode);
TG_API tg_math tg_get_math(const tg_handle *handle);
TG_API const char *tg_math_name(tg_math mode);
TG_API int tg_math_from_name(const char *name);

/* Introspection, for tools that list, plan or time the rungs (the CLI, the benchmark).
 *
 * tg_algo_count() is the number of rungs this build has (0 without CUDA); tg_algo_info fills
 * *info for rung index 0 .. count-1, lowest rung first (the same order as tg_algos() after
 * "auto").  The strings are static. */
typedef struct tg_algo_info {
    const char *name;    /* what tg_set_algo takes, e.g. "tiled32" */
    int level;           /* its rung: the number of its kernel file (k00_naive.cu: 0) */
    const char *summary; /* one line: its tiling and what it adds over the rung below */
    int block_rows;      /* rows of C one thread block covers */
    int block_cols;      /* columns of C one thread block covers */
    int in_auto;         /* 1 if `auto` may pick it */
    tg_arith arith;      /* its arithmetic, which decides the math modes that may use it */
    int min_cc;          /* lowest compute capability it runs on, major * 10 + minor (80 for
                          * 8.0); 0: any the build targets */
} tg_algo_info;

TG_API int tg_algo_count(void);
TG_API tg_status tg_algo_info_get(int index, tg_algo_info *info);
/* How much slower than measured or predicted `auto` ranks rung `index` (0 .. count-1): 1.0 for
 * most; more for a rung whose speed depends on data that measurements do not see (rung 11,
 * ozaki2_int8: 1.10), which then runs only where it wins by that much.  Tools that write what
 * `auto` runs (`tilegemm bench --tune`) apply the same factor.  1.0 for an index out of range. */
TG_API double tg_algo_auto_margin(int index);
/* "ffma", "3xtf32", "tf32". */
TG_API const char *tg_arith_name(tg_arith arith);
/* 1 when math mode `mode` lets `auto` run arithmetic `arith` (strict: FFMA; fp32: FFMA and
 * 3xTF32; tf32: any). */
TG_API int tg_math_allows(tg_math mode, tg_arith arith);

/* What the handle's last successful tg_sgemm or tg_sgemm_strided_batched ran: a rung name from
 * tg_algos(), "cpu" for the CPU backend, or "none" (a quick return, a beta * C scale, or no
 * call yet).  Lets a caller see which rung `auto` chose. */
TG_API const char *tg_last_algo(const tg_handle *handle);

/* What tg_sgemm would run for this call with device operands on the handle's GPU: *algo, a
 * rung name from tg_algos(), and *split_k, the slices of k it would be cut into (1: none).
 * Follows the handle's settings (algo, math mode, split-K); nothing is read or launched, so a
 * call costs the planner's host time alone.  TG_ERROR_NOT_SUPPORTED where there is no GPU. */
TG_API tg_status tg_choose_algo(tg_handle *handle, tg_layout layout, tg_op transa, tg_op transb,
                                int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                                int64_t ldc, const char **algo, int *split_k);

/* Why tg_sgemm would run what it runs for this call with device operands on a GPU of compute
 * capability `compute_capability` (major * 10 + minor: 90 for an H100) with `sm_count` SMs,
 * whether or not one is present: the planner's own choice, from the tuned table's row for
 * exactly this call, else the cost model's fastest rung and split-K, else the highest rung that
 * can run it.  compute_capability 0 plans for the handle's GPU (TG_ERROR_NOT_SUPPORTED without
 * one; sm_count is then ignored).  Follows the handle's algo, math mode and split-K; nothing is
 * read or launched.  Writes the rung's name (from tg_algos()) to *algo, its slices of k to
 * *split_k (1: none), and into buf (always NUL-terminated) the reasons, one a line: the rung,
 * and the tuned row's measured TFLOP/s or the cost model's predicted time and runner-up.  A
 * call with no product (k is 0) gets "none".  TG_ERROR_NOT_SUPPORTED when no rung of this
 * build can run the call (a build without CUDA has none); argument errors as tg_sgemm's. */
TG_API tg_status tg_explain_gpu(tg_handle *handle, int compute_capability, int sm_count,
                                tg_layout layout, tg_op transa, tg_op transb, int64_t m,
                                int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                                const char **algo, int *split_k, char *buf, size_t buf_size);

/* What the handle's last successful tg_explain planned, in the same terms as tg_last_algo. */
TG_API const char *tg_explained_algo(const tg_handle *handle);

/* The smallest legal leading dimension of op(X), a rows x cols matrix stored with this
 * layout: the length of a stored row (row-major) or column (column-major), at least 1. */
TG_API int64_t tg_min_ld(tg_layout layout, tg_op op, int64_t rows, int64_t cols);

/* Split-K for single products: 0 lets the planner decide (the default), 1 never splits, and
 * n in 2..TG_MAX_SPLIT_K cuts k into n slices run as a batch and summed in a fixed order, so
 * results repeat bit for bit (see tg_explain).  For tuning. */
#define TG_MAX_SPLIT_K 256
TG_API tg_status tg_set_split_k(tg_handle *handle, int slices);

/* The most slices `auto` would cut a single m x n x k product into on the rung named algo (1:
 * it would not split it there): every slice of k at least the rung's shortest (128 of k, 1024 on
 * 3xTF32 rungs), the partial products within 256 MiB of workspace.  The planner weighs the
 * counts tg_split_k_counts lists, all up to this.
 * TG_ERROR_INVALID_ARGUMENT (recorded for tg_last_error(NULL)) for a name that is not a rung of
 * this build or a size below 1. */
TG_API tg_status tg_split_k_most(const char *algo, int64_t m, int64_t n, int64_t k, int *most);

/* The slice counts the planner may weigh for this product on the rung named algo, ascending, into
 * counts (room for max; *count gets how many): 1, each count up to 8, then the powers of two, up
 * to tg_split_k_most.  A tuner that times these has timed every choice the planner can make;
 * the planner weighs 3, 5, 6 and 7 only where its measured calls timed them.  Errors as
 * tg_split_k_most, and TG_ERROR_INVALID_ARGUMENT for a NULL counts or count or max below 1. */
TG_API tg_status tg_split_k_counts(const char *algo, int64_t m, int64_t n, int64_t k, int *counts,
                                   int max, int *count);

/* Autotuning, off by default (on for new handles when TILEGEMM_AUTOTUNE=1).  When on, the first
 * call of a key times the planner's best few candidates (rung and split-K; only those the
 * handle's math mode allows, so the mode's accuracy contract holds whatever is chosen) and every
 * later call of that key, in any process, runs the fastest.  The key: the GPU (model, compute
 * capability, SMs), the library version, the normalized shape m, n, k and batch count, the
 * operands' orientation (layout and transposes), the math mode, and the alignment class of
 * the pointers and leading dimensions (16, 8 or 4 bytes).
 *
 * The candidates run on scratch device buffers the size of the call's operands (copies of A,
 * B and, when beta != 0, of C), so the caller's C is written once, by the call itself.  That
 * first call is slower (it runs each candidate a few times and waits for them) and needs the
 * scratch memory; should timing fail in any way, the call runs the planner's choice and does
 * not fail.  Not autotuned, planned as usual: calls with a host operand (staged through the
 * device), a forced rung (tg_set_algo) or forced split-K (tg_set_split_k), calls the cost model
 * puts under 10 microseconds (timing cannot rank candidates that short; tg_autotune_shape
 * still times them when asked), and calls on a stream that is capturing a graph (a cached
 * choice is still used there).
 *
 * The choices are kept in a text file per GPU model under TILEGEMM_CACHE_DIR, else
 * $XDG_CACHE_HOME/tilegemm, else ~/.cache/tilegemm, read once per process and replaced
 * atomically (safe with several processes).  tg_explain says when a cached choice is used. */
TG_API tg_status tg_set_autotune(tg_handle *handle, int on);
TG_API int tg_get_autotune(const tg_handle *handle);

/* One line on this process's autotuning cache: the file, entries known, plans that followed a
 * cached choice (calls and tg_explain alike), keys timed, and the warning when a cache file was ignored (corrupt, another format version or
 * another GPU's; it is replaced at the next store) or could not be written.  The library never
 * prints: this is where such warnings go, once per process. */
TG_API const char *tg_autotune_status(void);

/* Times the candidates for this shape now, in the handle's math mode, on scratch device buffers
 * (operands as cudaMalloc returns them, these leading dimensions, alpha = 1, beta = 0), and
 * stores the fastest in the cache, replacing an older measurement, whether or not the handle
 * autotunes and whatever rung or split-K it forces (`tilegemm tune` fills the cache this way).
 * Writes the chosen rung, its slices and its measured milliseconds (each may be NULL).
 * Arguments are checked as tg_sgemm checks them; TG_ERROR_INVALID_ARGUMENT also for a shape
 * with no product (m, n or k is 0), TG_ERROR_NOT_SUPPORTED without a GPU or with no rung for
 * the call, TG_ERROR_CUDA or TG_ERROR_ALLOCATION when timing failed. */
TG_API tg_status tg_autotune_shape(tg_handle *handle, tg_layout layout, tg_op transa,
                                   tg_op transb, int64_t m, int64_t n, int64_t k, int64_t lda,
                                   int64_t ldb, int64_t ldc, const char **algo, int *split_k,
                                   double *ms);

TG_API tg_status tg_sgemm(tg_handle *handle, tg_layout layout, tg_op transa, tg_op transb,
                          int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                          int64_t ldc);

/* batch_count independent products; matrix i of A starts at A + i * stride_a (likewise B, C).
 * stride_a or stride_b may be 0 to share one operand across the batch. */
TG_API tg_status tg_sgemm_strided_batched(tg_handle *handle, tg_layout layout, tg_op transa,
                                          tg_op transb, int64_t m, int64_t n, int64_t k,
                                          float alpha, const float *A, int64_t lda,
                                          int64_t stride_a, const float *B, int64_t ldb,
                                          int64_t stride_b, float beta, float *C, int64_t ldc,
                                          int64_t stride_c, int64_t batch_count);

/* Writes into buf (always NUL-terminated) the plan tg_sgemm would follow for this call and
 * why: backend, rung and its parameters.  Pointers are only inspected, never read; NULL ones
 * stand for host memory.  Argument errors are reported as tg_sgemm would number them. */
TG_API tg_status tg_explain(tg_handle *handle, tg_layout layout, tg_op transa, tg_op transb,
                            int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                            const float *B, int64_t ldb, const float *C, int64_t ldc, char *buf,
                            size_t buf_size);

TG_API const char *tg_status_string(tg_status status);

/* The last error on this handle as a sentence naming the argument and the rule it broke,
 * e.g. "lda = 3 is less than k = 5 (row-major A, no transpose)"; "" after a success. */
TG_API const char *tg_last_error(const tg_handle *handle);

/* Position of the offending argument in CBLAS numbering (layout 1, transa 2, ..., ldc 14,
 * batch arguments after), 0 when the last error was not about one argument. */
TG_API int tg_last_error_arg(const tg_handle *handle);

#ifdef __cplusplus
}
#endif

#endif /* TILEGEMM_H */
