/*
 * Named barriers (bar.sync / bar.arrive with an id and a thread count), for kernels whose
 * warps play different parts: a producer announces that a buffer is full without waiting
 * (arrive), its consumers wait for it (sync), and the other way round for an empty buffer.
 * Id 0 is __syncthreads'; a barrier completes when `threads` threads (a multiple of 32) have
 * arrived or synced on it, and is then reusable.  tests/emulated/overrides/ has a CPU twin.
 */
#ifndef TG_KERNELS_NAMED_BARRIER_CUH
#define TG_KERNELS_NAMED_BARRIER_CUH

#include <cuda_runtime.h>

__device__ __forceinline__ void named_barrier_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void named_barrier_arrive(int id, int threads)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

#endif
