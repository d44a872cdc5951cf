/*
 * Stream-K: one wave of blocks shares all of a product's k steps evenly, whatever its count of
 * tiles, instead of one block a tile (a last wave that leaves SMs idle) or a fixed count of
 * slices a tile (split-K: the same waves, times the count).  Used by rung 4's _sk entries.
 *
 * The work is units: tile t's k steps of BK, tiles in the grouped order (grouped_tile).  With
 * at least two waves of tiles, all but the last one or two waves run whole, data-parallel:
 * block b takes tiles b, b + blocks, ... below dp_tiles.  The units of the tiles left are cut
 * into `blocks` even runs, block b's run [start(b), start(b + 1)), which crosses tile
 * boundaries: a block runs its run's pieces of tiles (segments) one after another.
 *
 * A tile run by one segment is stored as usual.  A tile shared by several blocks: each writes
 * its segment's partial product to a slot of the workspace, then counts itself in the tile's
 * counter; the block that counts last adds the tile's partials in the order of their k (the
 * order of their blocks), whichever block that is, and stores the tile with alpha and beta.  So
 * a result is bit for bit the same on every run on the same GPU (the cut depends on the count
 * of blocks, so on the SM count); no block ever waits for another, so nothing can deadlock
 * however few of the blocks the GPU runs at once.
 *
 * Workspace: a counter a tile (zeroed before each launch), then two slots of BM x BN floats a
 * block: a block's run holds at most one shared segment at its start (slot 2b) and one at its
 * end (slot 2b + 1); the segments between are whole tiles.
 */
#ifndef TG_KERNELS_STREAM_K_CUH
#define TG_KERNELS_STREAM_K_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "../registry.h" /* tg_stream_k_whole_tiles */
#include "common.cuh"   /* current_sm_count */

/* The fewest k steps a block's run is given: a segment costs its pipeline's fill and, when
 * shared, a partial product written and read back, which a few steps would not repay. */
constexpr uint32_t kStreamKMinSteps = 8;

/* One segment: tile `tile` (grouped order), its k steps [step0, step1). */
struct StreamKSegment {
    uint32_t tile, step0, step1;
    bool whole; /* the tile's every k step: stored directly, no partial */
    uint32_t slot; /* its partial's slot, where shared */
};

struct StreamK {
    uint32_t tiles_m, tiles_n, steps; /* tiles of C; k steps of BK a tile */
    uint32_t blocks;                  /* the launch's blocks, at most one wave */
    uint32_t dp_tiles;                /* tiles [0, dp_tiles) run whole, block b the b-th, ... */
    uint64_t units;                   /* k steps of the shared tiles, (tiles - dp_tiles) x steps */

    /* The first unit of block b's run (b <= blocks). */
    __host__ __device__ uint64_t start(uint32_t b) const { return b * units / blocks; }
    /* The block whose run holds unit u (< units): the last b with start(b) <= u. */
    __host__ __device__ uint32_t block_of(uint64_t u) const
    {
        return (uint32_t)(((u + 1) * blocks - 1) / units);
    }
    /* Blocks whose runs share shared tile t (>= dp_tiles): first .. last. */
    __host__ __device__ uint32_t first_block(uint32_t t) const
    {
        return block_of((uint64_t)(t - dp_tiles) * steps);
    }
    __host__ __device__ uint32_t last_block(uint32_t t) const
    {
        return block_of((uint64_t)(t - dp_tiles + 1) * steps - 1);
    }
    /* The slot of block b's segment of shared tile t: 2b where b's run starts in t, else 2b + 1
     * (its run's end). */
    __host__ __device__ uint32_t slot(uint32_t b, uint32_t t) const
    {
        return 2 * b + (start(b) < (uint64_t)(t - dp_tiles) * steps);
    }

    /* Block b's s-th segment; step0 == step1 past its last. */
    __host__ __device__ StreamKSegment segment(uint32_t b, uint32_t s) const
    {
        const uint32_t whole_tiles = dp_tiles > b ? (dp_tiles - b + blocks - 1) / blocks : 0;
        if (s < whole_tiles)
            return StreamKSegment{b + s * blocks, 0, steps, true, 0};
        s -= whole_tiles;
        const uint64_t u0 = start(b), u1 = start(b + 1);
        const uint64_t t = (units ? u0 / steps : 0) + s; /* shared tile, counted from dp_tiles */
        const uint64_t t_first = t * steps;
        if (u0 >= u1 || t_first >= u1)
            return StreamKSegment{0, 0, 0, false, 0};
        const uint32_t step0 = s == 0 ? (uint32_t)(u0 - t_first) : 0;
        const uint32_t step1 = u1 - t_first < steps ? (uint32_t)(u1 - t_first) : steps;
        const uint32_t tile = dp_tiles + (uint32_t)t;
        return StreamKSegment{tile, step0, step1, step0 == 0 && step1 == steps,
                              2 * b + (s > 0)};
    }
};

/* The schedule of a tiles_m x tiles_n grid of tiles with `steps` k steps each, on at most
 * `slots` blocks at once (SMs x blocks an SM). */
static inline StreamK stream_k_schedule(uint32_t tiles_m, uint32_t tiles_n, uint32_t steps,
                                        uint32_t slots)
{
    StreamK s{tiles_m, tiles_n, steps, slots > 0 ? slots : 1, 0, 0};
    const uint64_t tiles = (uint64_t)tiles_m * tiles_n;
    s.dp_tiles = (uint32_t)tg_stream_k_whole_tiles(tiles, s.blocks);
    s.units = (tiles - s.dp_tiles) * steps;
    const uint64_t most = s.units / kStreamKMinSteps;
    if (s.dp_tiles == 0 && most < s.blocks)
        s.blocks = most > 0 ? (uint32_t)most : 1;
    return s;
}

/* The workspace of a schedule with tiles of tile_floats floats: the counters (rounded up to
 * 256 bytes, so the slots stay aligned for float4), then two slots a block. */
static inline size_t stream_k_counter_bytes(uint64_t tiles)
{
    return (size_t)((tiles * sizeof(unsigned) + 255) / 256 * 256);
}
static inline size_t stream_k_workspace_bytes(uint64_t tiles, uint32_t slots, int tile_floats)
{
    return stream_k_counter_bytes(tiles) + (size_t)2 * slots * (size_t)tile_floats * sizeof(float);
}

/* SMs of the current GPU times blocks an SM: the most blocks of a launch that run at once. */
static inline uint32_t stream_k_slots(int blocks_per_sm)
{
    return (uint32_t)current_sm_count() * (uint32_t)(blocks_per_sm > 0 ? blocks_per_sm : 1);
}

/* A thread's TM x TN accumulators to and from a slot, as float4s laid out so that a warp's
 * accesses are consecutive: run r of thread tid at slot + (r * THREADS + tid) * 4. */
template <int THREADS, int TM, int TN>
__device__ __forceinline__ void stream_k_write_partial(const float (&acc)[TM][TN], float *slot)
{
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int h = 0; h < TN / 4; ++h)
            *reinterpret_cast<float4 *>(slot + ((i * (TN / 4) + h) * THREADS + threadIdx.x) * 4) =
                make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2],
                            acc[i][h * 4 + 3]);
}

/* Adds a slot's partial (written by blocks on other SMs: read through L2, __ldcg). */
template <int THREADS, int TM, int TN>
__device__ __forceinline__ void stream_k_add_partial(float (&acc)[TM][TN], const float *slot)
{
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int h = 0; h < TN / 4; ++h) {
            const float4 v = __ldcg(reinterpret_cast<const float4 *>(
                slot + ((i * (TN / 4) + h) * THREADS + threadIdx.x) * 4));
            acc[i][h * 4] += v.x, acc[i][h * 4 + 1] += v.y;
            acc[i][h * 4 + 2] += v.z, acc[i][h * 4 + 3] += v.w;
        }
}

/* A shared segment's end: writes this block's partial of tile g.tile, counts it, and where it
 * is the tile's last, leaves the tile's sum in acc, its partials added in the order of their k,
 * and returns true (the caller stores it).  Block-uniform; every thread must call it. */
template <int THREADS, int TM, int TN>
__device__ __forceinline__ bool stream_k_share(float (&acc)[TM][TN], const StreamK &s,
                                               const StreamKSegment &g, float *partials,
                                               unsigned *counters, int tile_floats)
{
    __shared__ unsigned last;
    stream_k_write_partial<THREADS>(acc, partials + (size_t)g.slot * tile_floats);
    __threadfence(); /* the partial is visible device-wide before the count says so */
    __syncthreads();
    const uint32_t first = s.first_block(g.tile), final_block = s.last_block(g.tile);
    if (threadIdx.x == 0)
        last = atomicAdd(&counters[g.tile], 1u) == final_block - first;
    __syncthreads();
    const bool sums = last != 0;
    if (sums) {
        __threadfence(); /* the other blocks' partials, counted before ours, are visible */
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                acc[i][j] = 0.0f;
        for (uint32_t b = first; b <= final_block; ++b)
            stream_k_add_partial<THREADS>(acc, partials + (size_t)s.slot(b, g.tile) * tile_floats);
    }
    return sums;
}

#endif
