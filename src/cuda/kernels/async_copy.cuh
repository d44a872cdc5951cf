/*
 * Asynchronous global-to-shared copies (cp.async, sm_80 and up) as tiny device functions,
 * so a kernel's pipeline reads as C++ and the inline PTX lives in one place.
 *
 *   copy_async_16_zfill_partial(dst, src, n)
 *                                      16 bytes, cp.async.cg (bypasses L1, lands in L2 and
 *                                      shared memory), the first n floats from src and zeros
 *                                      after them; dst and src 16-byte aligned
 *   copy_async_4_zfill(dst, src, in)   4 bytes, cp.async.ca (through L1: the sizes below 16
 *                                      have no .cg form); dst and src 4-byte aligned
 *   async_commit()                     closes this thread's copies issued since the last
 *                                      commit into one group
 *   async_wait<N>()                    waits until at most N of this thread's groups are still
 *                                      in flight
 *
 * Floats not copied (n < 4, or in == false) are written as zeros (the src-size operand), so
 * edge tiles need no second code path; src is then never read past what is copied.
 * Completion is per thread: after async_wait a thread sees its own copies; a __syncthreads()
 * is still needed before other threads read them.
 *
 * Below sm_80 the copies are plain synchronous loads and shared stores (with the same zero
 * fill) and commit/wait do nothing: a pipeline written for cp.async stays correct there, it
 * just stops overlapping the loads with the math.
 */
#ifndef TG_KERNELS_ASYNC_COPY_CUH
#define TG_KERNELS_ASYNC_COPY_CUH

#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TG_HAVE_CP_ASYNC 1
#else
#define TG_HAVE_CP_ASYNC 0
#endif

/* The 16-byte copy of a run that may straddle the matrix edge: its first floats_in floats (0 to
 * 4) are copied, the rest of the 16 bytes zero-filled, nothing past them read. */
__device__ __forceinline__ void copy_async_16_zfill_partial(float *dst, const float *src,
                                                            int floats_in)
{
#if TG_HAVE_CP_ASYNC
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src),
                 "r"(floats_in * 4)
                 : "memory");
#else
    if (floats_in >= 4) {
        *reinterpret_cast<float4 *>(dst) = *reinterpret_cast<const float4 *>(src);
    } else {
        for (int c = 0; c < 4; ++c)
            dst[c] = c < floats_in ? src[c] : 0.0f;
    }
#endif
}

__device__ __forceinline__ void copy_async_4_zfill(float *dst, const float *src, bool in)
{
#if TG_HAVE_CP_ASYNC
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src),
                 "r"(in ? 4 : 0)
                 : "memory");
#else
    *dst = in ? *src : 0.0f;
#endif
}

__device__ __forceinline__ void async_commit()
{
#if TG_HAVE_CP_ASYNC
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void async_wait()
{
    static_assert(N >= 0, "the number of groups left in flight cannot be negative");
#if TG_HAVE_CP_ASYNC
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

#undef TG_HAVE_CP_ASYNC

#endif
