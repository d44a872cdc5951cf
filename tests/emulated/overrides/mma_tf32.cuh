/*
 * Emulated twin of src/cuda/kernels/mma_tf32.cuh (whose inline PTX cannot run on the CPU).
 * emulate.cmake copies this file into the emulated kernel tree in place of the original, so it
 * must keep the original's functions and signatures: change both together.
 *
 *   tf32_round   the same bit operations as the original (round to nearest, ties away from
 *                zero, to 10 mantissa bits)
 *   mma_tf32_16x8x8
 *                the warp-wide product, from the fragment layouts of the PTX ISA: every lane
 *                deposits its fragments in its warp's exchange, and after all 32 have, each
 *                lane forms its own four outputs, each as the H100's tensor core does
 *                (tensor_core_model.h: the top 19 bits of a and b read, subnormal inputs and
 *                outputs flushed, the 8 products and d aligned and truncated, the sum
 *                truncated to FP32), so a kernel that feeds unsplit FP32 values loses their
 *                precision here as on the GPU, and one that lets the tensor core accumulate
 *                too long gathers its truncation errors.
 *
 * Lanes run as fibers, not in lockstep, so the exchange waits with the block's barrier (twice:
 * all deposits before any read, all reads before the next deposit).  A kernel must therefore
 * call it with every thread of the block, the same number of times, which a warp-uniform
 * tensor-core loop does; and those barriers can hide a missing __syncthreads next to the
 * product, so the GPU tests stay the judge of races.
 */
#ifndef TG_KERNELS_MMA_TF32_CUH
#define TG_KERNELS_MMA_TF32_CUH

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "tensor_core_model.h"

namespace emu_mma {

struct Warp {
    float a[32][4], b[32][2];
};
inline std::vector<Warp> warps;

inline float bits_to_float(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline uint32_t float_to_bits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

} // namespace emu_mma

__device__ __forceinline__ float tf32_round(float x)
{
    const uint32_t u = emu_mma::float_to_bits(x) + 0x1000u;
    return emu_mma::bits_to_float(u & ~0x1fffu);
}

__device__ __forceinline__ void mma_tf32_16x8x8(float (&d)[4], const float (&a)[4],
                                                const float (&b)[2])
{
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned warp = tid / 32, lane = tid % 32;
    const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    if (threads % 32 != 0)
        emu::fail("mma_tf32_16x8x8: the block is not a whole number of warps", nullptr);
    if (emu_mma::warps.size() < threads / 32)
        emu_mma::warps.resize(threads / 32);
    emu_mma::Warp &w = emu_mma::warps[warp];
    std::memcpy(w.a[lane], a, sizeof w.a[lane]);
    std::memcpy(w.b[lane], b, sizeof w.b[lane]);
    __syncthreads(); /* every lane has deposited */
    /* A(r, k) lives in lane (r % 8) * 4 + k % 4, register (r / 8) + 2 * (k / 4);
     * B(k, c) in lane c * 4 + k % 4, register k / 4. */
    const unsigned g = lane / 4, t = lane % 4;
    float out[4];
    for (int e = 0; e < 4; ++e) {
        const unsigned r = g + 8 * (e / 2), c = 2 * t + e % 2;
        float row[8], col[8];
        for (unsigned k = 0; k < 8; ++k) {
            row[k] = w.a[(r % 8) * 4 + k % 4][r / 8 + 2 * (k / 4)];
            col[k] = w.b[c * 4 + k % 4][k / 4];
        }
        out[e] = tc_model::block_fma(row, col, 8, d[e]);
    }
    __syncthreads(); /* every lane has read the exchange */
    for (int e = 0; e < 4; ++e)
        d[e] = out[e];
}

#endif
