/*
 * The `tilegemm simulate` lesson: a step-by-step CPU replay of the classic tiled kernel
 * (rungs 1 and 2) for one output tile, and exact counts of the global-memory loads that the
 * naive kernel (rung 0) and the tiled kernel really perform.
 *
 * The model replayed (row-major C = A * B, A m x k, B k x n):
 *   grid.x = ceil(n / TILE), grid.y = ceil(m / TILE), TILE x TILE threads per block, one C
 *   element per thread, k walked in ceil(k / TILE) phases.  In phase t thread (ty, tx) of block
 *   (by, bx), row = by*TILE + ty, col = bx*TILE + tx, loads
 *     As[ty][tx] = A[row][t*TILE + tx]   if row < m and t*TILE + tx < k, else 0 (no load)
 *     Bs[ty][tx] = B[t*TILE + ty][col]   if t*TILE + ty < k and col < n, else 0 (no load)
 *   whether or not (row, col) lies inside C; only threads inside C store.
 *   The naive kernel runs one thread per element inside C, each loading A[row][p] and
 *   B[p][col] for every p < k.
 *
 * Tools code: it prints, and the CLI turns the return values into exit codes.
 */
#ifndef TG_SIMULATE_H
#define TG_SIMULATE_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exact global-memory float loads of one C = A * B (m x k times k x n) with a given TILE. */
typedef struct tg_load_counts {
    int64_t m, n, k;
    int tile;

    /* launch shape of the tiled kernel */
    int64_t grid_x;            /* ceil(n / tile): block columns */
    int64_t grid_y;            /* ceil(m / tile): block rows */
    int64_t blocks;            /* grid_x * grid_y */
    int64_t threads_per_block; /* tile * tile */
    int64_t phases;            /* ceil(k / tile) */

    /* naive kernel (rung 0): m*n threads, each loads k floats of A and k of B */
    int64_t naive_loads_a;             /* m * n * k */
    int64_t naive_loads_b;             /* m * n * k */
    int64_t naive_loads;               /* 2 * m * n * k */
    double naive_loads_per_element;    /* 2k */

    /* tiled kernel: every block column re-reads all of A, every block row all of B */
    int64_t tiled_loads_a;             /* m * k * grid_x */
    int64_t tiled_loads_b;             /* k * n * grid_y */
    int64_t tiled_loads;
    int64_t tiled_zero_fills_a;        /* As cells set to 0 without a load (outside A) */
    int64_t tiled_zero_fills_b;        /* Bs cells set to 0 without a load (outside B) */
    double tiled_loads_per_element;    /* tiled_loads / (m * n), about 2k / tile */

    double savings;                    /* naive_loads / tiled_loads */
    int64_t shared_bytes_per_block;    /* 2 * tile * tile * sizeof(float) */
    double flops;                      /* 2 * m * n * k */
    double naive_flops_per_load;       /* flops / naive_loads, always 1 */
    double tiled_flops_per_load;       /* flops / tiled_loads, about tile */
} tg_load_counts;

/* The walk-through's limits and the exit codes of `tilegemm simulate`. */
enum {
    TG_SIMULATE_MAX_PRINT = 64, /* larger matrices do not fit a terminal */
    TG_SIMULATE_MAX_TILE = 64,
    TG_SIMULATE_OK = 0,
    TG_SIMULATE_MISMATCH = 1,
    TG_SIMULATE_USAGE = 2
};
/* Sizes for --counts-only: keeps every count of tg_count_loads exact in int64. */
#define TG_SIMULATE_MAX_COUNT (INT64_C(1) << 20)

/*
 * Fills *out with the closed-form counts.  Sizes of 0 give zero loads and zero ratios;
 * tile < 1 (or a negative size) zeroes the whole struct.  Exact in int64 while
 * (m + tile) * (n + tile) * (k + tile) stays below 2^62, e.g. every size up to 2^20.
 */
void tg_count_loads(int64_t m, int64_t n, int64_t k, int tile, tg_load_counts *out);

/* Prints the load-count table of tg_count_loads, with the formulas, to out. */
void tg_simulate_print_counts(FILE *out, int64_t m, int64_t n, int64_t k, int tile);

/*
 * Prints the lesson: the operands, then for output tile (tile_row, tile_col) -- blockIdx.y and
 * blockIdx.x -- each phase's As and Bs as loaded into shared memory (zero-filled cells marked
 * "0*") and the tile's partial sums, the final tile checked against the direct product, a
 * silent replay of every block that checks all of C and counts loads one by one, and the
 * load-count table.  A is row-major m x k, B row-major k x n.
 * Returns 0 when every value and count agrees, 1 on a mismatch, 2 on invalid arguments
 * (sizes 1..64, tile 1..64, tile_row < ceil(m/tile), tile_col < ceil(n/tile)).
 */
int tg_simulate_print(FILE *out, int64_t m, int64_t n, int64_t k, int tile, int64_t tile_row,
                      int64_t tile_col, const float *A, const float *B);

/*
 * Draws the phases of output tile (tile_row, tile_col) as one SVG sheet at path: per phase a
 * row of three panels -- A with the TILE x TILE block loaded into As, B with the block loaded
 * into Bs (cells outside the matrix, zero-filled without a load, hatched), and C with the
 * tile's partial sums after that phase.  Same model and arguments as tg_simulate_print.
 * Returns 0 on success, -1 when the file cannot be written or the arguments are invalid.
 */
int tg_simulate_svg(const char *path, int64_t m, int64_t n, int64_t k, int tile,
                    int64_t tile_row, int64_t tile_col, const float *A, const float *B);

/*
 * `tilegemm simulate [MxNxK] [--m M] [--n N] [--k K] [--tile T] [--tile-row R] [--tile-col C]
 *                    [--seed S] [--a v,v,...] [--b v,v,...] [--fill-a V|count]
 *                    [--fill-b V|count] [--svg FILE] [--counts-only]`
 * argv[0] is the subcommand's name ("simulate") and is skipped.  Defaults: 4x4x4, TILE 2,
 * tile (0, 0), seed 1, inputs small integers in -3..3 from a seeded LCG.
 * Returns the process exit code: 0 success, 1 mismatch, 2 usage error.
 */
int tg_simulate_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
