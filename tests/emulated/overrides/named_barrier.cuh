/*
 * Emulated twin of src/cuda/kernels/named_barrier.cuh: per block, 16 of the runtime's
 * SpinBarriers.  A thread that syncs yields until its generation has passed, so the others run
 * as far as they can meanwhile, and a wait that can never end is reported as a deadlock.  Keep the
 * original's functions and signatures: change both together.
 */
#ifndef TG_KERNELS_NAMED_BARRIER_CUH
#define TG_KERNELS_NAMED_BARRIER_CUH

#include <cuda_runtime.h>

namespace emu_bar {

struct Barriers {
    emu::SpinBarrier bar[16];
};
inline emu::PerBlock<Barriers> state;

inline emu::SpinBarrier &get(int id)
{
    if (id <= 0 || id >= 16)
        emu::fail("named barrier: id must be 1..15", nullptr);
    return state.get().bar[id];
}

} // namespace emu_bar

__device__ __forceinline__ void named_barrier_sync(int id, int threads)
{
    emu::SpinBarrier &b = emu_bar::get(id);
    b.wait(b.arrive(threads));
}

#endif
