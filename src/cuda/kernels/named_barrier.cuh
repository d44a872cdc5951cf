/*
 * Named barriers (bar.sync with an id and a thread count), for kernels whose warps play
 * different parts: a barrier among some warps only, here rung 9's consumer warpgroups once its
 * producer has left.  Id 0 is __syncthreads'; a barrier completes when `threads` threads (a
 * multiple of 32) have synced on it, and is then reusable.  tests/emulated/overrides/ has a CPU
 * twin.
 */
#ifndef TG_KERNELS_NAMED_BARRIER_CUH
#define TG_KERNELS_NAMED_BARRIER_CUH

#include <cuda_runtime.h>

__device__ __forceinline__ void named_barrier_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

#endif
