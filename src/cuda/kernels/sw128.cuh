/*
 * The 128-byte swizzled layout of a wgmma operand tile (wgmma_tf32.cuh): ROWS x 32 floats, a
 * row holding 32 consecutive k, the 16-byte chunk c of row r stored at chunk c ^ (r % 8).
 * Plain arithmetic, apart from the inline PTX, so the CPU emulation compiles this file itself
 * and its wgmma twin checks the kernel's stores against the descriptor's reading of the layout.
 */
#ifndef TG_KERNELS_SW128_CUH
#define TG_KERNELS_SW128_CUH

#include <cuda_runtime.h>

/* The float offset of (row, k) in a swizzled tile. */
__host__ __device__ __forceinline__ int sw128_offset(int row, int k)
{
    return row * 32 + ((((k >> 2) ^ row) & 7) << 2) + (k & 3);
}

#endif
