/*
 * Emulated twin of src/cuda/kernels/wgmma_tf32.cuh (whose inline PTX cannot run on the CPU).
 * emulate.cmake copies this file into the emulated kernel tree in place of the original, so it
 * must keep the original's functions and signatures: change both together.
 *
 * Shared addresses are offsets into the launch's dynamic shared buffer, so descriptors encode
 * what the GPU's do (offset / 16 in bits 0-13, the 8-row stride / 16 in bits 32-45, the swizzle
 * mode in bits 62-63), and the products decode them as the PTX ISA describes: row r, k of a
 * slice lies at start + (r / 8) * stride + (r % 8) * 128 + 4k, with the 16-byte chunk bits
 * (4-6) of that address XORed with its bits 7-9.  So the kernel's stores into the swizzled
 * tiles and its descriptors are checked against one reading of the layout.  Each thread forms
 * its own accumulator entries, reading shared memory when it issues the product, each as the
 * H100's tensor core does (tensor_core_model.h: the top 19 bits of the operands read,
 * subnormal inputs and outputs flushed, the 8 products and the accumulator aligned and
 * truncated, the sum truncated to FP32).  fence does nothing, and the products complete at
 * once; but on the GPU the tensor core reads the _rs form's A registers until the product is
 * waited for, so the twin keeps, per thread, the registers each product read and their values,
 * grouped as committed, and when wgmma_wait retires a group it checks that they still hold
 * those values: a kernel that loads the next A into registers a product in flight still reads
 * fails here.  The _rs form takes A from the threads' registers: every thread of the
 * warpgroup deposits its fragment in the warpgroup's exchange, waits (a spin barrier of the
 * warpgroup's 128 threads) until all have, forms its entries from the PTX ISA's fragment
 * layout, and waits again until all have read, so the exchange can be reused.
 */
#ifndef TG_KERNELS_WGMMA_TF32_CUH
#define TG_KERNELS_WGMMA_TF32_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include <cstring>
#include <deque>
#include <map>
#include <vector>

#include "sw128.cuh" /* the kernel tree's own layout, checked against element() */
#include "tensor_core_model.h"

namespace emu_wgmma {

inline char *shared_base() { return static_cast<char *>(emu_dynamic_shared()); }
inline uint32_t shared_offset(const void *p)
{
    return (uint32_t)(static_cast<const char *>(p) - shared_base());
}

inline float element(uint64_t desc, int row, int k)
{
    if ((desc >> 62) != 1)
        emu::fail("wgmma twin: only the 128-byte swizzle is emulated", nullptr);
    const uint32_t start = (uint32_t)(desc & 0x3fff) << 4;
    const uint32_t stride = (uint32_t)((desc >> 32) & 0x3fff) << 4;
    uint32_t addr = start + (uint32_t)(row / 8) * stride + (uint32_t)(row % 8) * 128 + 4u * k;
    addr ^= ((addr >> 7) & 7u) << 4;
    float f;
    std::memcpy(&f, shared_base() + addr, sizeof f);
    return f;
}

/* The _rs form's exchange of one warpgroup: its threads' A fragments. */
struct Exchange {
    emu::SpinBarrier deposited, read;
    uint32_t a[128][4];
};
inline emu::PerBlock<std::map<unsigned, Exchange>> exchanges;

/* One thread's _rs reads: the registers and the values read, in open and committed groups. */
struct RegisterRead {
    const uint32_t *registers;
    uint32_t values[4];
};
struct ThreadReads {
    std::vector<RegisterRead> open;
    std::deque<std::vector<RegisterRead>> committed;
};
inline emu::PerBlock<std::map<unsigned, ThreadReads>> register_reads;

inline float bits_to_float(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

} // namespace emu_wgmma

__device__ __forceinline__ float *align_shared_1024(float *p)
{
    const uint32_t s = emu_wgmma::shared_offset(p);
    return p + (((1024u - (s & 1023u)) & 1023u) >> 2);
}

__device__ __forceinline__ uint64_t smem_desc(const float *tile, int kk)
{
    const uint32_t s = emu_wgmma::shared_offset(tile);
    if (s % 1024 != 0)
        emu::fail("wgmma twin: a swizzled tile must start on a 1024-byte boundary", tile);
    const uint32_t a = s + (uint32_t)kk * 4u;
    return (uint64_t)((a & 0x3ffffu) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 |
           (uint64_t)1 << 62;
}

__device__ __forceinline__ void wgmma_fence() {}
__device__ __forceinline__ void wgmma_commit()
{
    emu_wgmma::ThreadReads &r = emu_wgmma::register_reads.get()[threadIdx.x];
    r.committed.push_back(std::move(r.open));
    r.open.clear();
}
template <int N>
__device__ __forceinline__ void wgmma_wait()
{
    emu_wgmma::ThreadReads &r = emu_wgmma::register_reads.get()[threadIdx.x];
    while (r.committed.size() > (size_t)N) {
        for (const emu_wgmma::RegisterRead &read : r.committed.front())
            if (std::memcmp(read.registers, read.values, sizeof read.values) != 0)
                emu::fail("wgmma twin: A's registers were written while a product that reads "
                          "them was in flight (before the wgmma_wait that retires it)",
                          read.registers);
        r.committed.pop_front();
    }
}
__device__ __forceinline__ void fence_async_shared() {}
template <int N, bool UP>
__device__ __forceinline__ void set_max_registers()
{
    static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes 24..256 in steps of 8");
}
template <int N>
__device__ __forceinline__ void fence_operand(float (&)[N]) {}

/* A and B in shared memory: each thread forms its entries from both descriptors.  N: the
 * width of B's slice (128, 64, 48 or 32), N / 2 accumulators a thread. */
template <int N>
__device__ __forceinline__ void wgmma_64xNx8_ss(float (&d)[N / 2], uint64_t a, uint64_t b,
                                                bool accumulate)
{
    const unsigned tid = threadIdx.x;
    const unsigned w = tid / 32 % 4, g = tid % 32 / 4, t = tid % 4;
    for (int j = 0; j < N / 8; ++j)
        for (int e = 0; e < 4; ++e) {
            const int r = (int)(16 * w + g + 8 * (e / 2)), c = (int)(8 * j + 2 * t + e % 2);
            float row[8], col[8];
            for (int k = 0; k < 8; ++k)
                row[k] = emu_wgmma::element(a, r, k), col[k] = emu_wgmma::element(b, c, k);
            d[4 * j + e] = tc_model::block_fma(row, col, 8, accumulate ? d[4 * j + e] : 0.0f);
        }
}

/* A in the threads' registers (the fragment of wgmma_tf32.cuh), B in shared memory. */
template <int N>
__device__ __forceinline__ void wgmma_64xNx8_rs(float (&d)[N / 2], const uint32_t (&a)[4],
                                                uint64_t b, bool accumulate)
{
    const unsigned tid = threadIdx.x;
    const unsigned w = tid / 32 % 4, g = tid % 32 / 4, t = tid % 4;
    emu_wgmma::RegisterRead read{a, {a[0], a[1], a[2], a[3]}};
    emu_wgmma::register_reads.get()[tid].open.push_back(read);
    emu_wgmma::Exchange &x = emu_wgmma::exchanges.get()[tid / 128];
    std::memcpy(x.a[tid % 128], a, sizeof x.a[0]);
    x.deposited.wait(x.deposited.arrive(128));
    /* A(r, k) of warp w lives in thread 32 w + (r % 8) * 4 + k % 4, register r / 8 + 2 (k / 4) */
    for (int j = 0; j < N / 8; ++j)
        for (int e = 0; e < 4; ++e) {
            const unsigned r = g + 8 * (e / 2);
            const int c = (int)(8 * j + 2 * t + e % 2);
            float row[8], col[8];
            for (unsigned k = 0; k < 8; ++k) {
                row[k] = emu_wgmma::bits_to_float(x.a[32 * w + (r % 8) * 4 + k % 4][r / 8 + 2 * (k / 4)]);
                col[k] = emu_wgmma::element(b, c, (int)k);
            }
            d[4 * j + e] = tc_model::block_fma(row, col, 8, accumulate ? d[4 * j + e] : 0.0f);
        }
    x.read.wait(x.read.arrive(128));
}

/* The kernel's names: the product's width by the size of d (64 accumulators: n128, 32: n64,
 * 24: n48, 16: n32). */
template <int ACC>
__device__ __forceinline__ void wgmma_ss(float (&d)[ACC], uint64_t a, uint64_t b, bool accumulate)
{
    wgmma_64xNx8_ss<2 * ACC>(d, a, b, accumulate);
}
template <int ACC>
__device__ __forceinline__ void wgmma_rs(float (&d)[ACC], const uint32_t (&a)[4], uint64_t b,
                                         bool accumulate)
{
    wgmma_64xNx8_rs<2 * ACC>(d, a, b, accumulate);
}

#endif
