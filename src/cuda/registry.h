/*
 * The rung registry: every CUDA kernel of the ladder, in one table that the library's planner,
 * the CLI, the tests and the benchmark all read.  Plain C, so C code can walk it; when the
 * library is built without CUDA the table is empty.
 */
#ifndef TG_REGISTRY_H
#define TG_REGISTRY_H

#include <stddef.h>

#include "../../include/tilegemm.h" /* tg_arith */
#include "../problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a rung's loads, arithmetic and stores meet in time, for the cost model (tg_model_seconds). */
typedef enum tg_phases {
    TG_PHASES_OVERLAP = 0,      /* C's writes overlap the arithmetic of other blocks */
    TG_PHASES_STORES_AFTER = 1, /* the blocks load, multiply and store C in step, so C's writes
                                 * overlap no arithmetic (rung 7) */
    TG_PHASES_IN_TURN = 2,      /* passes over memory, then the products, then more passes, each
                                 * its own launches (rung 11): nothing overlaps */
} tg_phases;

typedef struct tg_rung {
    const char *name;    /* what tg_set_algo and the CLI take, e.g. "tiled32" */
    int level;           /* its rung: the number of its kernel file (k00_naive.cu: 0) */
    const char *summary; /* one line: its tiling and what it adds over the rung below */
    int block_rows;      /* rows of C one block covers: the launcher keeps grid.y in range */
    int block_cols;      /* columns of C one block covers: planning counts tiles with both */
    int in_auto;         /* 1 if `auto` may pick it.  A rung joins only after it has passed
                          * the GPU tests on a device; a forced algo may run any rung */
    tg_arith arith;      /* FFMA, 3xTF32 or TF32: which math modes auto may use it in */
    int min_cc;          /* lowest compute capability it runs on (major * 10 + minor), 0: any */
    /* Queues the kernel on a cudaStream_t; returns the cudaError_t of the launch.  The problem
     * has m, n, k > 0, alpha != 0, device pointers, m <= 65535 * block_rows, batch <= 65535. */
    int (*launch)(const tg_problem *p, void *stream);
    /* NULL when the rung can run p, else the reason it cannot (shape or alignment). */
    const char *(*unsupported)(const tg_problem *p);
    /* Rungs that run through device workspace (NULL for the rest): the bytes p needs, and the
     * launch that takes them, called instead of `launch` (same contract, plus a device buffer
     * of at least workspace_bytes(p) bytes that stays the rung's until the stream has run
     * what it queued). */
    size_t (*workspace_bytes)(const tg_problem *p);
    /* Bytes the rung moves through that workspace for p, each written once and read once
     * (its TF32 planes): what the cost model adds to the memory traffic.  NULL: none. */
    double (*staged_bytes)(const tg_problem *p);
    /* Whether the kernel runs p turned (C^T = op(B)^T op(A)^T), its block's rows then lying
     * along n: the planner counts tiles the way the kernel cuts them.  NULL: never turned. */
    int (*turns)(const tg_problem *p);
    /* How its phases meet in time (tg_phases; 0: overlapping). */
    tg_phases phases;
    int (*launch_with_workspace)(const tg_problem *p, void *stream, void *workspace);
    /* Blocks of the kernel one SM holds at once, where the cost model counts a launch's rounds
     * in groups of them (tg_model_waves); 0: in rounds of one block an SM.  Rung 4 sets it from
     * its registers a thread (kFfmaBlocksPerSm).  warptile's 2, counted so, planned worse
     * leaving one train seed out (strict 90.3% -> 89.6% within 1.10) and shortk128's 3 no
     * better (strict 90.1%, tf32 88.2% -> 88.4%), so they stay 0. */
    int blocks_per_sm;
    /* Auto ranks it as if this much slower than measured or predicted (0: 1, as measured): the
     * planner's score (src/plan/plan.c) and the tuned table's writer (`tilegemm bench --tune`,
     * through tg_algo_auto_margin), so a rung whose speed depends on data the measurements did
     * not see is picked only where it wins by this much. */
    double auto_margin;
    /* Auto's limits of its own, past its arithmetic's (0: none): auto runs it only where m, n
     * and k are all at least auto_min_side and its workspace_bytes is at most
     * auto_max_workspace; unsplit: never split along k, in auto or forced (each slice would
     * repeat what the whole product does once).  The rung's entry says why. */
    int64_t auto_min_side;
    double auto_max_workspace;
    int unsplit;
    /* Runs by stream-K (rung 4's _sk entries, stream_k.cuh): one wave of blocks shares all the
     * tiles' k steps, which the cost model counts so (tg_model_seconds), with the model row and
     * correction of model_as, the entry whose kernel it runs a tile at a time. */
    int stream_k;
    const char *model_as;
} tg_rung;

/* The tiles a stream-K launch of `blocks` blocks runs whole, before the blocks share the rest:
 * all but the last one or two waves, where there are two or more (so no block's run crosses
 * more than three tiles).  The kernels' schedule (stream_k.cuh) and the cost model
 * (tg_model_stream_k_seconds) both count so. */
static inline uint64_t tg_stream_k_whole_tiles(uint64_t tiles, uint64_t blocks)
{
    return tiles >= 2 * blocks ? (tiles / blocks - 1) * blocks : 0;
}

/* The name of the rung whose model row and correction rung r's predictions use: its own, or
 * model_as. */
static inline const char *tg_rung_model_name(const tg_rung *r)
{
    return r->model_as ? r->model_as : r->name;
}

/* tg_rung.auto_margin as a factor: 1 when unset. */
static inline double tg_rung_auto_margin(const tg_rung *r)
{
    return r->auto_margin > 0.0 ? r->auto_margin : 1.0;
}

/* A kernel file may guard each of its entries with `#if TG_IN_UNIT(name)` ... `#endif`.  The
 * build (cmake/kernel_units.cmake) then compiles that file once per name, each time with
 * TG_SPLIT_UNIT and TG_UNIT_<name> defined, so that a unit instantiates only the templates of
 * its own entries and the entries of one heavy file compile in parallel.  Compiled whole (the
 * emulated tests, an unsplit file), every entry is defined.  An undefined TG_UNIT_<name> is 0
 * in #if. */
#ifdef TG_SPLIT_UNIT
#define TG_IN_UNIT(name) TG_UNIT_##name
#else
#define TG_IN_UNIT(name) 1
#endif

extern const tg_rung *const tg_rungs[];
extern const int tg_rung_count;

/* Index of the rung with this name, or -1. */
int tg_find_rung(const char *name);

#ifdef __cplusplus
}
#endif

#endif
