/*
 * Hopper's tensor memory accelerator (TMA) and shared-memory barriers (mbarrier), sm_90, as
 * small functions, so the kernel reads as C++ and the inline PTX lives in one place
 * (tests/emulated/overrides/ has its CPU twin, which checks byte counts and phase parity).
 *
 * Host:
 *   encode_tile_map(map, base, dims, strides, box[, swizzle])
 *                          fills a CUtensorMap for a rank-4 FP32 tensor (dims[0] contiguous,
 *                          strides[i] the bytes between steps of dimension i + 1, multiples of
 *                          16) read in boxes of box[] elements, stored in shared memory with the
 *                          128-byte swizzle (box[0] * 4 must be 128: rows of 32 floats, the
 *                          layout wgmma_tf32.cuh's descriptors read), or with swizzle false as
 *                          plain rows of box[0] floats (box[0] * 4 a multiple of 16: what the
 *                          consumers read through registers); elements outside dims read as
 *                          zeros.  Calls the driver's cuTensorMapEncodeTiled through
 *                          cudaGetDriverEntryPointByVersion (no -lcuda); returns cudaSuccess,
 *                          cudaErrorNotSupported when the driver lacks it, cudaErrorInvalidValue
 *                          when the driver refuses the map.
 * Device:
 *   mbarrier_init(bar, count)       a barrier whose phase completes after `count` arrivals and
 *                                   the bytes announced by expect-tx (one thread, before use;
 *                                   then fence_mbarrier_init and a block barrier)
 *   mbarrier_arrive(bar)            this thread's arrival (release: its prior accesses are
 *                                   ordered before the waiters' later ones)
 *   mbarrier_arrive_expect_tx(bar, bytes)
 *                                   arrival that also announces `bytes` of copies to land in
 *                                   the current phase
 *   mbarrier_wait(bar, parity)      waits until the phase of this parity has completed (acquire);
 *                                   a fresh barrier counts the phase of parity 1 as complete
 *   copy_async_arrive(bar)          an arrival made when this thread's cp.async copies issued
 *                                   so far have landed (async_copy.cuh; .noinc: the barrier's
 *                                   count includes it)
 *   tma_load_tile(dst, map, bar, c0, c1, c2, c3)
 *                                   copies the box at coordinates c (elements) into dst (1024-byte
 *                                   aligned; 128 for plain rows), completing its box's bytes on
 *                                   bar (out-of-bounds elements count too, as zeros)
 */
#ifndef TG_KERNELS_TMA_CUH
#define TG_KERNELS_TMA_CUH

#include <stdint.h>

#include <cuda.h> /* CUtensorMap and the encode function's types; no driver library linked */
#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define TG_TMA_UNAVAILABLE 1 /* the launcher refuses these GPUs (registry min_cc) */
#endif

inline cudaError_t encode_tile_map(CUtensorMap *map, const float *base, const uint64_t (&dims)[4],
                                   const uint64_t (&strides)[3], const uint32_t (&box)[4],
                                   bool swizzle = true)
{
    using Encode = CUresult(CUDAAPI *)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                       const cuuint64_t *, const cuuint64_t *,
                                       const cuuint32_t *, const cuuint32_t *,
                                       CUtensorMapInterleave, CUtensorMapSwizzle,
                                       CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
    static const Encode encode = [] {
        void *fn = nullptr;
        cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                             cudaEnableDefault, &found) != cudaSuccess ||
            found != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            fn = nullptr;
        }
        return reinterpret_cast<Encode>(fn);
    }();
    if (!encode)
        return cudaErrorNotSupported;
    const cuuint32_t element_strides[4] = {1, 1, 1, 1};
    const CUresult r = encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, const_cast<float *>(base),
                              dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

__device__ __forceinline__ unsigned shared_address(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mbarrier_init(uint64_t *bar, unsigned count)
{
#ifndef TG_TMA_UNAVAILABLE
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)),
                 "r"(count)
                 : "memory");
#endif
}

/* Makes the initialized barriers visible to the async proxy (TMA's complete-tx). */
__device__ __forceinline__ void fence_mbarrier_init()
{
#ifndef TG_TMA_UNAVAILABLE
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t *bar)
{
#ifndef TG_TMA_UNAVAILABLE
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar))
                 : "memory");
#endif
}

__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t *bar, unsigned bytes)
{
#ifndef TG_TMA_UNAVAILABLE
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                     shared_address(bar)),
                 "r"(bytes)
                 : "memory");
#endif
}

__device__ __forceinline__ void copy_async_arrive(uint64_t *bar)
{
#ifndef TG_TMA_UNAVAILABLE
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(
                     shared_address(bar))
                 : "memory");
#endif
}

__device__ __forceinline__ void mbarrier_wait(uint64_t *bar, unsigned parity)
{
#ifndef TG_TMA_UNAVAILABLE
    unsigned done = 0;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(shared_address(bar)), "r"(parity)
                     : "memory");
    } while (!done);
#endif
}

__device__ __forceinline__ void tma_load_tile(float *dst, const CUtensorMap *map, uint64_t *bar,
                                              int c0, int c1, int c2, int c3)
{
#ifndef TG_TMA_UNAVAILABLE
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(shared_address(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(shared_address(bar)), "r"(c0),
                 "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
#else
    (void)dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2, (void)c3;
    __trap();
#endif
}

#undef TG_TMA_UNAVAILABLE

#endif
