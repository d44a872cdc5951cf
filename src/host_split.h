/*
 * Products of host operands, cut into tiles of C: the pure arithmetic, kept apart
 * from the CUDA backend (host_tiles.cu) so that the CPU tests can check every case it meets
 * (test_host_split.c replays the whole split with memcpy and a CPU product).
 *
 *   the tile grid     C (m x n of the normalized problem) in tiles of at most TG_TILE_MAX
 *                     rows and columns, a pure function of m, n and k: never of the number of
 *                     GPUs, their memory or autotuning, so that each element's k-sum is the same
 *                     product on 1 GPU or on N (the tile's rung and split-K are a function of
 *                     the tile's shape too, chosen in host_tiles.cu)
 *   the assignment    GPU g of G takes tiles [T*g/G, T*(g+1)/G) in row-major order: balanced,
 *                     and each GPU's tiles share A row-panels
 *   k-cuts            a tile's product runs as products over consecutive cuts of k (of at most
 *                     TG_K_CUT_MAX), each adding into the C tile, so that the first can start
 *                     once the first cut of its panels has arrived rather than the whole
 *                     panels; the cuts are a function of k alone, like the grid
 *   the order         a GPU that holds every panel of its share visits its tiles in growing
 *                     squares (tg_share_order), so that each panel it loads brings work for the
 *                     ones already there and the copies stay ahead of the products, or, where
 *                     the GPUs share B, round by round of its column order, rows in turn
 *                     within a round; otherwise row by row
 *   panels            the rows of op(A) and the columns of op(B) a tile reads, and its tile of
 *                     C, each packed on the device as its lines (tg_lines_of) laid end to end
 *   pageable chunks   a panel from pageable memory travels in chunks of TG_BOUNCE_BYTES through
 *                     pinned bounce buffers; host threads fill a chunk in parts
 *   the lane's plan   which panels a GPU keeps on the device for the whole call (A's and B's,
 *                     else B's, when its memory holds them) and which it streams through two
 *                     slots
 */
#ifndef TG_HOST_SPLIT_H
#define TG_HOST_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "staging.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tiles of C have at most this many rows and columns; a dimension is cut into near-equal tiles,
 * multiples of TG_TILE_ALIGN but the last. */
#define TG_TILE_MAX 4096
#define TG_TILE_ALIGN 128
/* A tile is cut smaller where its A or B panel (tile x k floats) would pass this (never below
 * TG_TILE_ALIGN). */
#define TG_PANEL_MAX_BYTES ((int64_t)512 << 20)
/* A k-cut is at most this long: a 4096 x 4096 tile's cut then runs about 1.4 ms on an H100,
 * long against its launch, while a 16384-long k starts after a quarter of its panels. */
#define TG_K_CUT_MAX 4096
/* One pinned bounce buffer, and how many a GPU cycles through (several copies in flight). */
#define TG_BOUNCE_BYTES ((int64_t)16 << 20)
#define TG_BOUNCE_COUNT 4
/* A host thread's share of a chunk is at least this much. */
#define TG_FILL_PART_BYTES ((int64_t)1 << 20)
/* Device memory a GPU leaves free besides the panels (the runtime, the rung's workspace). */
#define TG_DEVICE_RESERVE_BYTES ((int64_t)512 << 20)
/* The most GPUs one call spreads over. */
#define TG_MAX_GPUS 64
/* C tiles a GPU holds at once (tg_lane_plan's c_slots): a tile's copy back and the host's part
 * of finishing it overlap the next two tiles' copies in. */
#define TG_C_SLOTS_MAX 3

typedef struct tg_tile_grid {
    int64_t m, n, k;
    int64_t tile_m, tile_n; /* every tile's size but the last row's / column's */
    int64_t rows, cols;     /* tiles down and across */
    int64_t k_cut, k_cuts;  /* every k-cut's length but the last's, and their count (>= 1) */
} tg_tile_grid;

/* The grid for an m x n x k product (m, n >= 1, k >= 0). */
tg_tile_grid tg_tile_grid_of(int64_t m, int64_t n, int64_t k);
/* The same rule with other bounds (tile_max and k_cut_max multiples of TG_TILE_ALIGN), for the
 * tests, which cut small matrices into many tiles and short k into several cuts. */
tg_tile_grid tg_tile_grid_capped(int64_t m, int64_t n, int64_t k, int64_t tile_max,
                                 int64_t panel_max_bytes, int64_t k_cut_max);
/* Cut q of k (0 <= q < g->k_cuts): [*k0, *k1). */
void tg_k_cut_range(const tg_tile_grid *g, int64_t q, int64_t *k0, int64_t *k1);
int64_t tg_tile_count(const tg_tile_grid *g);

typedef struct tg_tile {
    int64_t row, col; /* its place in the grid */
    int64_t i0, j0;   /* its first element of C */
    int64_t m, n;     /* its size */
} tg_tile;

/* Tile t, row-major in the grid (0 <= t < tg_tile_count). */
tg_tile tg_tile_at(const tg_tile_grid *g, int64_t t);

/* The tiles GPU `gpu` of `gpus` computes: [*lo, *hi), maybe empty when there are more GPUs
 * than tiles. */
void tg_tile_share(const tg_tile_grid *g, int gpus, int gpu, int64_t *lo, int64_t *hi);

/* Distinct tile rows and tile columns among tiles [lo, hi). */
int64_t tg_share_rows(const tg_tile_grid *g, int64_t lo, int64_t hi);
int64_t tg_share_cols(const tg_tile_grid *g, int64_t lo, int64_t hi);

/* What one GPU holds on the device for its tiles [lo, hi).  All counts in floats. */
typedef struct tg_lane_plan {
    int64_t lo, hi;
    int gpu, gpus;                    /* which GPU of how many */
    int64_t first_row;                /* the grid row of tile lo */
    int64_t a_panel, b_panel, c_tile; /* floats in one A panel, B panel, C tile */
    int64_t a_slots;                  /* A panels held: every row's (a_resident), else 1 (one
                                       * tile row) or 2 (the next loads while the last is read) */
    int a_resident;                   /* 1: every A panel it reads is loaded once and kept; then
                                       * B is kept too, and tg_share_order visits the tiles
                                       * in squares or rows */
    int64_t b_slots;                  /* B panels held */
    int b_resident;                   /* 1: every B panel it reads is loaded once and kept
                                       * (b_slots of them); 0: streamed through 2 slots */
    int64_t c_slots;                  /* C tiles on the device (and pinned on the host): up to
                                       * TG_C_SLOTS_MAX */
    int64_t device_bytes;             /* all of it */
} tg_lane_plan;

/* The plan for GPU `gpu` of `gpus` with `free_bytes` of device memory and `extra_bytes` the
 * tiles' products need besides (split-K's workspace).  Within free_bytes -
 * TG_DEVICE_RESERVE_BYTES - extra_bytes: A and B kept whole where both fit, else B where it
 * fits, else both streamed.  Returns 0 when even streaming does not fit (the plan is still
 * filled, streamed); 1 otherwise. */
int tg_lane_plan_make(const tg_tile_grid *g, int gpus, int gpu, int64_t free_bytes,
                      int64_t extra_bytes, tg_lane_plan *out);

/* The order in which the lane visits its tiles: order[0 .. hi - lo) gets tile numbers.  With A
 * and B resident, over the columns in the order tg_column_order gives: where the GPUs share B
 * (shared_b), round by round of that order (its places [gpus r, gpus (r + 1)): each owner's r-th
 * column), and in a round row by row: a peer's column costs the host's links nothing, so the
 * first tiles need only the first row's A panel and the GPU's own first column from the host,
 * the next rows only their A panels, and the GPUs' second columns are not wanted until every
 * row has had the first ones; else growing squares from the share's first row: with c a
 * column's place in that order, shell s holds the tiles whose max(row - first_row, c) is s,
 * column c = s's first (they need only B's new panel), then row first_row + s's.  Otherwise
 * row-major.  columns: scratch of g->cols entries. */
void tg_share_order(const tg_tile_grid *g, const tg_lane_plan *p, int shared_b, int64_t *order,
                    int64_t *columns);

/* GPU gpu's order of the tile columns, into columns[0 .. g->cols): where GPUs share B, each
 * owner's first column, its own first, then each owner's second, and so on, so that it works
 * on a panel a peer has loaded while its own next one comes in, and each GPU loads the columns
 * it owns before those it waits for from the others. */
void tg_column_order(const tg_tile_grid *g, int gpus, int gpu, int64_t *columns);

/* Where GPUs share B panels (each loads from the host only the columns it owns and copies the
 * rest from their owners' memory): the GPU of `gpus` that owns tile column col, in contiguous
 * blocks of columns. */
int tg_b_owner(const tg_tile_grid *g, int gpus, int64_t col);

/* A panel or tile as the device holds it: `lines` packed end to end, lines.count *
 * lines.length floats.  The host side of a view (rows x cols, strides rs, cs) starting at
 * `src`. */

/* Pageable chunks: chunk c of a packed view of `total` floats covers [*e0, *e1). */
int64_t tg_chunk_count(int64_t total);
void tg_chunk_range(int64_t total, int64_t chunk, int64_t *e0, int64_t *e1);

/* How many parts `threads` host threads cut a chunk of `floats` into (each at least
 * TG_FILL_PART_BYTES; 1 part for a small chunk), and part p's range within [e0, e1). */
int tg_fill_parts(int64_t floats, int threads);
void tg_part_range(int64_t e0, int64_t e1, int parts, int part, int64_t *lo, int64_t *hi);

/* Copies packed elements [e0, e1) of the view from the host view at src (lines `pitch`
 * apart) to dst (the packed buffer's element e0 lands at dst[0]). */
void tg_pack_range(float *dst, const float *src, const tg_lines *lines, int64_t e0, int64_t e1);
/* The reverse: packed elements [e0, e1), read from packed[0..], written into the view at dst. */
void tg_unpack_range(float *dst, const float *packed, const tg_lines *lines, int64_t e0,
                     int64_t e1);

#ifdef __cplusplus
}
#endif

#endif
