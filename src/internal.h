/*
 * Internal declarations shared by the host API, validation, planning and the backends.
 * Nothing here is part of the public contract.
 */
#ifndef TG_INTERNAL_H
#define TG_INTERNAL_H

#include "../include/tilegemm.h"
#include "error.h"
#include "host_split.h"
#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The workspace slots and the operands staged through them, named once for the planner and
 * the CUDA backend. */
typedef enum tg_slot {
    TG_SLOT_A = 0, TG_SLOT_B = 1, TG_SLOT_C = 2, /* host operands staged to the device */
    TG_SLOT_SPLIT_K = 3,                         /* split-K partial products */
    TG_SLOT_RUNG = 4,                            /* a rung's own (tg_rung.workspace_bytes) */
    TG_SLOT_COUNT = 5
} tg_slot;

/* Device buffers that host operands are staged through; grown on demand, kept for reuse. */
typedef struct tg_workspace {
    void *buffer[TG_SLOT_COUNT]; /* indexed by tg_slot */
    size_t bytes[TG_SLOT_COUNT];
    void *last_use;  /* cudaEvent_t recorded after the last asynchronous use (split-K, rung) */
} tg_workspace;

/* After a tiled product of host operands failed (host_tiles.cu): the tiles of C it wrote (one
 * byte a tile, 1: written), so that the BLAS entry points can finish C on the CPU.  written is
 * NULL when no such call failed since the last success. */
typedef struct tg_partial {
    tg_tile_grid grid;
    unsigned char *written;
} tg_partial;

struct tg_handle {
    uint32_t magic;       /* TG_HANDLE_LIVE from tg_create to tg_destroy (api.c) */
    tg_backend backend;   /* forced backend, or TG_BACKEND_AUTO */
    int algo;             /* index into the rung registry, or -1 for auto */
    int64_t gpu_min_work; /* host-memory calls with m*n*k below this run on the CPU */
    int split_k;          /* 0: planner decides; 1: never; n: n slices (tg_set_split_k) */
    int autotune;         /* time the planner's best candidates once per key (tg_set_autotune,
                           * TILEGEMM_AUTOTUNE; src/plan/autotune.h) */
    tg_math math;         /* which arithmetic auto may choose (tg_set_math, TILEGEMM_MATH) */
    void *stream;         /* cudaStream_t the calls run on: own_stream or the caller's */
    void *own_stream;     /* the stream the handle made; kept until tg_destroy */
    int stream_chosen;    /* stream is set (NULL = the legacy default stream) */
    int device;           /* the GPU current at tg_create: the handle's device */
    int sm_count;         /* its streaming multiprocessors (0 without a GPU) */
    int compute_capability; /* major * 10 + minor (0 without a GPU) */
    int card;             /* its index among the cards with corpus rows of their own
                           * (tg_measured_card), 0 for none */
    tg_workspace workspace;
    tg_error error;
    int last_rung;        /* what the last successful call ran (tg_last_algo): a registry
                           * index, TG_RAN_CPU, or TG_RAN_NOTHING */
    int explained_rung;   /* the same for the last successful tg_explain */
    int devices[TG_MAX_DEVICES]; /* the GPUs host products use (tg_set_devices,
                                  * TILEGEMM_DEVICES): devices[0 .. device_list-1] */
    int device_list;      /* 0: the handle's own GPU */
    void *tiles;          /* each GPU's buffers for tiled host products (host_tiles.cu) */
    tg_partial partial;
};

enum { TG_RAN_NOTHING = -1, TG_RAN_CPU = -2 };

/* A call as the caller made it, before normalization (see validate.c). */
typedef struct tg_call {
    tg_layout layout;
    tg_op transa, transb;
    int64_t m, n, k;
    float alpha, beta;
    const float *A;
    int64_t lda, stride_a;
    const float *B;
    int64_t ldb, stride_b;
    float *C;
    int64_t ldc, stride_c;
    int64_t batch;
    int batched; /* 1 for tg_sgemm_strided_batched: its argument numbering differs */
} tg_call;

/* Argument positions, CBLAS numbering for tg_sgemm; the batched call inserts its strides. */
typedef enum tg_arg {
    TG_ARG_LAYOUT = 1, TG_ARG_TRANSA, TG_ARG_TRANSB, TG_ARG_M, TG_ARG_N, TG_ARG_K,
    TG_ARG_ALPHA, TG_ARG_A, TG_ARG_LDA, TG_ARG_B, TG_ARG_LDB, TG_ARG_BETA, TG_ARG_C, TG_ARG_LDC,
    TG_ARG_STRIDE_A, TG_ARG_STRIDE_B, TG_ARG_STRIDE_C, TG_ARG_BATCH
} tg_arg;

/* validate.c: the reference BLAS checks, in its order; fills err on failure. */
tg_status tg_validate(const tg_call *call, tg_error *err);
/* After tg_validate, for calls whose pointers are real (not tg_explain's placeholders): C may
 * share no element with A or B when they are read (alpha != 0 and k > 0), since the product
 * would read what it has already overwritten.  Exact where the operands' spans meet: in
 * arithmetic when they have one leading dimension (whatever the batch count), line by line
 * otherwise; refused as undecided past 4M steps (tilegemm.h says when).  Reported as
 * TG_ERROR_INVALID_ARGUMENT at C's position. */
tg_status tg_check_aliasing(const tg_call *call, tg_error *err);
/* The smallest t in 1..batch-1 such that batch items t * stride apart, each `lines` lines of
 * `length` elements ld apart (length <= ld), share an element; 0 when none do.  Exact. */
int64_t tg_first_overlap(int64_t lines, int64_t length, int64_t ld, int64_t stride,
                         int64_t batch);
/* 1 when the reference BLAS would return without touching anything. */
int tg_is_quick_return(const tg_call *call);
/* Runs a call that passed tg_validate and is not a quick return: normalize, plan, execute.
 * For entry points that validate in their own way (the BLAS shims). */
tg_status tg_run_validated(tg_handle *h, const tg_call *call);
void tg_normalize(const tg_call *call, tg_problem *problem);

/* Where a pointer lives, as far as the CUDA runtime knows. */
typedef enum tg_memory { TG_MEMORY_HOST = 0, TG_MEMORY_DEVICE, TG_MEMORY_MANAGED } tg_memory;

/* plan.c: backend, rung and staging for one normalized problem. */
typedef struct tg_plan {
    tg_backend backend; /* TG_BACKEND_CPU or TG_BACKEND_CUDA */
    int rung;           /* registry index; -1 when no product kernel runs (alpha or k is 0) */
    int stage[TG_SLOT_SPLIT_K]; /* by tg_slot: 1 where a host A, B or C goes through the device */
    int managed;        /* some operand is managed memory: the CPU must wait for the GPU */
    int explaining;     /* fill `why` (tg_explain); plain calls skip the text */
    int split_k;        /* slices of k (see split_k.h); 1 runs the product in one piece */
    int autotune_pending; /* autotuning is on and has no cached choice for this key: the call
                           * times the candidates (tg_cuda_autotune) before it runs */
    int autotuned;      /* the rung and split-K are a cached autotuning choice */
    char why[1024];
} tg_plan;

/* explain = 1 also writes the reasons into plan->why (tg_explain); calls skip that work. */
tg_status tg_make_plan(tg_handle *h, const tg_problem *p, tg_plan *plan, int explain);

/* The rung and split-K tg_make_plan would pick for p with device operands (no text). */
tg_status tg_plan_device_rung(tg_handle *h, const tg_problem *p, tg_plan *plan);

/* What the rung choice depends on, besides the math mode and the problem. */
typedef struct tg_device_props {
    int compute_capability; /* major * 10 + minor */
    int sm_count;
    int card; /* tg_measured_card of its name: whose measured rows the planner reads (0: the
               * compute capability's own) */
} tg_device_props;

/* A rung choice and the evidence for it. */
typedef struct tg_choice {
    int rung;                 /* registry index */
    int split_k;              /* slices of k, 1: not split */
    double seconds;           /* the cost model's prediction; 0 when it did not decide */
    int runner_up;            /* the model's best other rung, -1 when none */
    int runner_up_split;
    double runner_up_seconds;
    double score;             /* its ranking score (plan.c): 0 is as fast as the fastest timed */
    const struct tg_tuned *tuned; /* the tuned row followed, NULL when the model decided */
} tg_choice;

/* Bytes rung i moves through its workspace for p besides A, B and C, as the rung itself
 * counts them (tg_rung.staged_bytes: rung 9's TF32 planes, of B only or of none where it reads
 * an operand in place), for the cost model; 0 for rungs without workspace. */
double tg_staged_bytes(int rung, const tg_problem *p);

/* Why auto may not pick rung i for p in this math mode on that GPU (NULL when it may): not
 * admitted, an arithmetic the mode forbids, 3xTF32 under k = 256, or the rung's own limits. */
const char *tg_auto_refuses(const tg_device_props *dev, tg_math math, int rung,
                            const tg_problem *p);
/* The cost model's milliseconds for p on rung i cut into `slices` (NAN without a model row):
 * with its measured correction, or the formula alone (formula_only, for fitting that). */
double tg_model_predict_ms(const tg_device_props *dev, int rung, int slices, const tg_problem *p,
                           int formula_only);
/* How full the last wave of rung i is on p cut into `slices` (1: every wave full; NAN without a
 * model row), as the cost model counts waves. */
double tg_model_wave_fill(const tg_device_props *dev, int rung, int slices, const tg_problem *p);
/* Rung i's block tile as the cost model cuts p: its rows along m, or along n where the rung runs
 * p turned (tg_rung.turns); bench/fit_model.py fits the rows with it (test_plan_regret --dump). */
void tg_model_block_tile(int rung, const tg_problem *p, int *rows, int *cols);
/* The most slices of k the planner may cut p into on rung i (1: none): a single product, every
 * slice at least TG_SPLIT_MIN_SLICE long (TG_3XTF32_MIN_SPLIT_SLICE on 3xTF32 rungs), bounded
 * workspace.  It weighs 1 and each power of two up to this. */
int tg_most_slices(int rung, const tg_problem *p);

/* The rung and split-K for p: a pure function of the GPU's properties, the math mode, a
 * forced rung (-1: auto) or split (0: choose) and the normalized problem, so the CPU tests
 * can ask what auto would run on an H100.  In order: a tuned row for exactly this call (same
 * GPU, math mode, shape and orientation); else the cost model's fastest (rung, slices) among
 * the rungs auto may use (cost_model.h); else the highest rung auto may use.  Returns 0 when
 * no rung can run p. */
int tg_choose(const tg_device_props *dev, tg_math math, int forced_rung, int forced_split,
              const tg_problem *p, tg_choice *out);

/* One (rung, slices) the planner weighs, with the cost model's seconds for it. */
typedef struct tg_candidate {
    int rung, split_k;
    double seconds;
} tg_candidate;

/* The planner's best `max` candidates for p in this math mode, best first, as tg_choose ranks
 * them (the tuned table aside): what an autotuner times.  Returns how many. */
int tg_choose_ranked(const tg_device_props *dev, tg_math math, const tg_problem *p,
                     tg_candidate *out, int max);

/* What autotuning times for p, at most `max`: the ranking's first (tg_choose's choice where no
 * tuned row decides) first; then, where the cost model puts it faster than that choice, the
 * same rung at the count of 3, 5, 6 or 7 slices it puts fastest (timed or not in the corpus);
 * then the ranking widened to the rungs the cost model has no row for (their seconds NAN),
 * best first.
 * Returns how many (0: no rung can run p). */
int tg_autotune_candidates(const tg_device_props *dev, tg_math math, const tg_problem *p,
                           tg_candidate *out, int max);

/* autotune_use.c: the one place plan.c asks autotuning (choose_rung).  When the handle autotunes
 * and p is eligible (auto rung, split-K not forced, no operand staged), looks p's key up in the
 * cache: returns the cached rung (its slices in *slices), for choose_rung to follow when the math
 * mode allows it; else -1, after marking plan->autotune_pending when the key has no entry yet.
 * why gets a line for tg_explain ("" when autotuning is off). */
int tg_autotune_cached(tg_handle *h, const tg_problem *p, tg_plan *plan, int *slices,
                       char *why, size_t why_size);

/* Appends to buf (size bytes, NUL-terminated) why c was chosen for p, as explain gives it:
 * forced, a tuned row, the ranking (with the model's prediction and the runner-up) or the
 * highest rung, on the GPU dev (its compute capability, and the card whose own timed calls
 * ranked it); then its split-K (tg_split_k_describe). */
void tg_append_choice_reasons(const tg_choice *c, int forced, const tg_device_props *dev,
                              const tg_problem *p, char *buf, size_t size);

/* Host products cut into tiles of C (host_split.h, host_tiles.cu).  1 when the plan runs p
 * that way: a product (not a batch) with A, B and C all staged from host memory. */
int tg_runs_tiled(const tg_problem *p, const tg_plan *plan);
/* The GPUs the handle's host products use, into out (TG_MAX_DEVICES); returns how many. */
int tg_devices_of(const tg_handle *h, int *out);
/* The product of tile `t` over k-cut `q` as the device runs it: its shape, packed panels at
 * aligned placeholder pointers (the real ones are as aligned), and the planner's rung and
 * split-K for it with the handle's settings on the handle's GPU: a function of the tile's and
 * the cut's shape alone.  Returns 0 when no rung can run it. */
int tg_tile_choice(const tg_handle *h, const tg_problem *p, const tg_tile_grid *g, int64_t t,
                   int64_t q, tg_problem *tile, tg_choice *c);
/* After tg_run_validated failed: C as the CPU backend computes it, where the GPUs did not write
 * it (all of C unless a tiled call left tiles written; see tg_partial).  h may be NULL. */
void tg_cpu_complete(tg_handle *h, const tg_call *call);

/* Records an error on the handle (the per-thread record when h is NULL) and returns status. */
#define tg_fail(h, status, arg, ...) tg_record(tg_error_of(h), (status), (arg), __VA_ARGS__)
static inline tg_error *tg_error_of(tg_handle *h) { return h ? &h->error : tg_orphan_error(); }



#ifdef __cplusplus
}
#endif

#endif
