/*
 * Emulated twin of src/cuda/kernels/wgmma_s8.cuh (whose inline PTX cannot run on the CPU).
 * emulate.cmake copies this file into the emulated kernel tree in place of the original, so it
 * must keep the original's functions and signatures: change both together.
 *
 * Descriptors are decoded as wgmma_tf32.cuh's twin decodes them (start / 16 in bits 0-13, the
 * 8-row stride / 16 in bits 32-45, the 128-byte swizzle in bits 62-63), byte by byte: element
 * (r, k) of a slice lies at start + (r / 8) * stride + (r % 8) * 128 + k, the 16-byte chunk
 * bits (4-6) of that address XORed with its bits 7-9.  Each thread forms its own accumulator
 * entries from the fragment layout (tensor_core_model.h: s8_dot, exact, and failing the test
 * where an INT32 sum would wrap), reading shared memory when it issues the product; the
 * product completes at once, and fence, commit and wait are wgmma_tf32.cuh's twin's.
 */
#ifndef TG_KERNELS_WGMMA_S8_CUH
#define TG_KERNELS_WGMMA_S8_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "tensor_core_model.h"
#include "wgmma_tf32.cuh"

namespace emu_wgmma_s8 {

inline int8_t element(uint64_t desc, int row, int k)
{
    if ((desc >> 62) != 1)
        emu::fail("wgmma s8 twin: only the 128-byte swizzle is emulated", nullptr);
    const uint32_t start = (uint32_t)(desc & 0x3fff) << 4;
    const uint32_t stride = (uint32_t)((desc >> 32) & 0x3fff) << 4;
    uint32_t addr = start + (uint32_t)(row / 8) * stride + (uint32_t)(row % 8) * 128 + (uint32_t)k;
    addr ^= ((addr >> 7) & 7u) << 4;
    return static_cast<int8_t *>(emu_dynamic_shared())[addr];
}

} // namespace emu_wgmma_s8

__device__ __forceinline__ void fence_operand(int32_t (&)[64]) {}

__device__ __forceinline__ void wgmma_64x128x32_s8(int32_t (&d)[64], uint64_t a, uint64_t b,
                                                   bool accumulate)
{
    const unsigned tid = threadIdx.x;
    const unsigned w = tid / 32 % 4, g = tid % 32 / 4, t = tid % 4;
    /* this thread's 2 rows of A (e / 2) and 32 columns of B (j, e % 2) */
    int8_t rows[2][32], cols[16][2][32];
    for (int k = 0; k < 32; ++k) {
        for (int h = 0; h < 2; ++h)
            rows[h][k] = emu_wgmma_s8::element(a, (int)(16 * w + g + 8 * h), k);
        for (int j = 0; j < 16; ++j)
            for (int h = 0; h < 2; ++h)
                cols[j][h][k] = emu_wgmma_s8::element(b, (int)(8 * j + 2 * t + h), k);
    }
    for (int j = 0; j < 16; ++j)
        for (int e = 0; e < 4; ++e) {
            bool wrapped = false;
            d[4 * j + e] = tc_model::s8_dot(rows[e / 2], cols[j][e % 2], 32,
                                            accumulate ? d[4 * j + e] : 0, &wrapped);
            if (wrapped)
                emu::fail("wgmma s8 twin: an INT32 accumulator overflowed", &d[4 * j + e]);
        }
}

#endif
