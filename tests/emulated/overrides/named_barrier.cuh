/*
 * Emulated twin of src/cuda/kernels/named_barrier.cuh: per block, 16 barriers counting
 * arrivals; a barrier that reaches its thread count resets and starts a new generation.  A
 * thread that syncs yields (emu_spin) until its generation has passed, so the others run as far
 * as they can meanwhile, and a wait that can never end is reported as a deadlock.  Keep the
 * original's functions and signatures: change both together.
 */
#ifndef TG_KERNELS_NAMED_BARRIER_CUH
#define TG_KERNELS_NAMED_BARRIER_CUH

#include <cuda_runtime.h>

namespace emu_bar {

struct Barrier {
    int arrived = 0, threads = 0;
    unsigned generation = 0;
};

struct State {
    long launch = -1;
    uint3 block{~0u, ~0u, ~0u};
    Barrier bars[16];
};
inline State state;

/* This block's barriers; a new block (or launch) starts them fresh. */
inline Barrier &get(int id, int threads)
{
    if (state.launch != emu::launches || state.block.x != blockIdx.x ||
        state.block.y != blockIdx.y || state.block.z != blockIdx.z) {
        state = State{};
        state.launch = emu::launches;
        state.block = blockIdx;
    }
    if (id <= 0 || id >= 16 || threads <= 0 || threads % 32 != 0)
        emu::fail("named barrier: id must be 1..15 and the count a positive multiple of 32",
                  nullptr);
    Barrier &b = state.bars[id];
    if (b.arrived > 0 && b.threads != threads)
        emu::fail("named barrier: arrivals disagree on the thread count", nullptr);
    b.threads = threads;
    return b;
}

/* Arrives; returns the generation this arrival belongs to. */
inline unsigned arrive(int id, int threads)
{
    Barrier &b = get(id, threads);
    const unsigned g = b.generation;
    if (++b.arrived == threads) {
        b.arrived = 0;
        ++b.generation;
        ++emu::named_barrier_completions;
    }
    return g;
}

} // namespace emu_bar

__device__ __forceinline__ void named_barrier_sync(int id, int threads)
{
    const unsigned g = emu_bar::arrive(id, threads);
    while (emu_bar::state.bars[id].generation == g)
        emu_spin();
}

__device__ __forceinline__ void named_barrier_arrive(int id, int threads)
{
    emu_bar::arrive(id, threads);
}

#endif
