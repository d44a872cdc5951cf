/*
 * Hopper's programmatic dependent launch, for a call's second and later kernels.
 *
 * A call of several kernels (rung 9's planes then its product; a split product then its
 * reduction) otherwise pays, at each boundary, for the whole first grid to drain and flush
 * before the next is even launched.  Launched with launch_dependent, the next grid is launched
 * once every block of the one before has called let_dependents_launch (or exited); its blocks
 * set up what needs no memory (barriers, shared memory) and then wait in wait_for_prior_grids
 * until the grid before has finished and its writes are visible.
 *
 *   wait_for_prior_grids()    every thread of a dependently launched kernel calls it before
 *                             its first read or write of global memory (the grid before may
 *                             still read what this one writes); a no-op where the kernel was
 *                             launched plainly, and before sm_90
 *   let_dependents_launch()   a hint that the grid after may be launched; any point is safe,
 *                             since the one after waits for this grid's end all the same
 *   launch_dependent(kernel, grid, block, smem, stream, args...)
 *                             kernel<<<grid, block, smem, stream>>>(args...) with the
 *                             dependency made programmatic (cudaLaunchKernelEx); before sm_90
 *                             the attribute does nothing and the launch is a plain one
 */
#ifndef TG_KERNELS_DEPENDENT_LAUNCH_CUH
#define TG_KERNELS_DEPENDENT_LAUNCH_CUH

#include <cuda_runtime.h>

#include <utility>

__device__ __forceinline__ void wait_for_prior_grids()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void let_dependents_launch()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

template <class... Params, class... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                             cudaStream_t stream, Args &&...args)
{
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

#endif
