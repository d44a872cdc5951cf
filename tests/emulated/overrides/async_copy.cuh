/*
 * Emulated twin of src/cuda/kernels/async_copy.cuh (whose cp.async inline PTX cannot run on the
 * CPU).  emulate.cmake copies this file into the emulated kernel tree in place of the original,
 * so it must keep the original's functions and signatures: change both together.
 *
 * It models cp.async at its most adversarial, so that a pipeline bug shows as a wrong result
 * rather than depending on timing:
 *   - a copy is issued into the thread's open group and its destination is filled with
 *     emu::poison (NaN, or a finite value for the tensor-core rungs) at once (until the copy
 *     lands its contents are undefined: reading them early is a bug, and so is issuing into a
 *     buffer that other threads are still reading);
 *   - async_commit() closes the open group; async_wait<N>() lands this thread's oldest groups
 *     until at most N remain, and nothing else lands a copy (not __syncthreads);
 *   - the source is read only when the copy lands and only for the floats that are "in", so a
 *     read past the matrix faults in the test's fenced buffers;
 *   - alignment: the 16-byte forms need dst and src 16-byte aligned, the 4-byte form 4.
 * Copies still in flight when a block ends are dropped.
 */
#ifndef TG_KERNELS_ASYNC_COPY_CUH
#define TG_KERNELS_ASYNC_COPY_CUH

#include <cuda_runtime.h>

#include <deque>
#include <vector>

namespace emu_async {

struct Copy {
    float *dst;
    const float *src;
    int floats; /* written to dst */
    int in;     /* of which the first `in` come from src, the rest are 0.0f */
};

struct Thread {
    std::vector<Copy> open;
    std::deque<std::vector<Copy>> groups;
};

inline emu::PerBlock<std::vector<Thread>> threads;

/* This thread's queues; a new block starts them empty. */
inline Thread &me()
{
    std::vector<Thread> &all = threads.get();
    if (all.empty())
        all.resize((size_t)blockDim.x * blockDim.y * blockDim.z);
    return all[threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)];
}

inline void issue(float *dst, const float *src, int floats, int in, size_t bytes)
{
    if (reinterpret_cast<uintptr_t>(dst) % bytes != 0)
        emu::fail("cp.async destination not aligned to the copy size", dst);
    if (in > 0 && reinterpret_cast<uintptr_t>(src) % bytes != 0)
        emu::fail("cp.async source not aligned to the copy size", src);
    for (int c = 0; c < floats; ++c)
        dst[c] = emu::poison;
    me().open.push_back(Copy{dst, src, floats, in});
}

inline void land(const Copy &c)
{
    for (int i = 0; i < c.floats; ++i)
        c.dst[i] = i < c.in ? c.src[i] : 0.0f;
}

} // namespace emu_async

__device__ __forceinline__ void copy_async_16_zfill_partial(float *dst, const float *src,
                                                            int floats_in)
{
    if (floats_in < 0 || floats_in > 4)
        emu::fail("copy_async_16_zfill_partial: floats_in outside 0..4", src);
    emu_async::issue(dst, src, 4, floats_in, 16);
}

__device__ __forceinline__ void copy_async_4_zfill(float *dst, const float *src, bool in)
{
    emu_async::issue(dst, src, 1, in ? 1 : 0, 4);
}

__device__ __forceinline__ void async_commit()
{
    emu_async::Thread &t = emu_async::me();
    t.groups.push_back(std::move(t.open));
    t.open.clear();
}

template <int N>
__device__ __forceinline__ void async_wait()
{
    static_assert(N >= 0, "the number of groups left in flight cannot be negative");
    emu_async::Thread &t = emu_async::me();
    while (t.groups.size() > (size_t)N) {
        for (const emu_async::Copy &c : t.groups.front())
            emu_async::land(c);
        t.groups.pop_front();
    }
}

#endif
