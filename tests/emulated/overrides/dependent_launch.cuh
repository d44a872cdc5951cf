/*
 * Emulated twin of src/cuda/kernels/dependent_launch.cuh (programmatic dependent launch):
 * emulate.cmake copies this file into the emulated kernel tree in place of the original, so it
 * must keep the original's functions and signatures: change both together.  Launches run when
 * made, one after another, so the grid before has always finished: the waits and hints do
 * nothing, and a dependent launch is a plain one.
 */
#ifndef TG_KERNELS_DEPENDENT_LAUNCH_CUH
#define TG_KERNELS_DEPENDENT_LAUNCH_CUH

#include <cuda_runtime.h>

#include <utility>

inline void wait_for_prior_grids() {}

inline void let_dependents_launch() {}

template <class... Params, class... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                             cudaStream_t stream, Args &&...args)
{
    kernel->*emu_config(grid, block, smem, stream)(std::forward<Args>(args)...);
    return cudaPeekAtLastError();
}

#endif
