/*
 * Hopper's warpgroup matrix multiply (wgmma, sm_90a) on TF32 operands in shared memory, as
 * small device functions, so the kernel reads as C++ and the inline PTX lives in one place
 * (tests/emulated/overrides/ has its CPU twin).
 *
 *   Operand tiles: ROWS x 32 floats, a row (m of A, n of B) holding 32 consecutive k (128
 *   bytes, "K-major"), rows in groups of 8 (1024 bytes), the 16-byte chunk c of row r stored at
 *   chunk c ^ (r % 8) (the 128-byte swizzle); the tile starts on a 1024-byte boundary.
 *   sw128_offset(r, k) (sw128.cuh) is the float offset of (r, k) in such a tile.
 *
 *   smem_desc(tile, kk)        the matrix descriptor of the 8-wide k slice kk / 8 of a tile
 *                              (start address, stride between 8-row groups 1024 bytes, 128-byte
 *                              swizzle); the tensor core reads the top 19 bits of each float
 *   wgmma_fence()              orders this thread's register accesses before the next wgmma
 *   wgmma_ss(d, a, b, accumulate)
 *                              d (+)= A * B for one warpgroup, asynchronously: A the 64 x 8
 *                              slice at descriptor a (its 64 rows are m), B the 8 x N slice
 *                              at descriptor b (its N rows are n), both in shared memory;
 *                              accumulate = false overwrites d.  N by the size of d: 128
 *                              (m64n128k8, 64 accumulators a thread), 64 (m64n64k8, 32),
 *                              48 (m64n48k8, 24) or 32 (m64n32k8, 16)
 *   wgmma_rs(d, a, b, accumulate)
 *                              the same with A's 64 x 8 slice in registers, 4 a thread (the
 *                              fragment below), so A may lie in shared memory in any layout
 *                              (the tensor core reads only K-major TF32 tiles); the registers
 *                              must keep their values until the product is waited for
 *   wgmma_commit()             closes the wgmma issued so far into a group
 *   wgmma_wait<N>()            waits until at most N groups are in flight; only then may d be
 *                              read or written
 *   fence_operand(d)           keeps the compiler from moving reads or writes of d across
 *                              the asynchronous product (after wgmma_wait)
 *   set_max_registers<N, UP>() moves this warpgroup's register budget to N a thread (up or down:
 *                              setmaxnreg), so warpgroups with different work share the SM's
 *                              registers unevenly
 *   fence_async_shared()       makes this thread's ordinary shared-memory stores visible to
 *                              wgmma's reads (the async proxy); a barrier must follow
 *
 * Accumulator fragment, warp w of the warpgroup, g = lane / 4, t = lane % 4, j = 0..15:
 *   d[4j] = D(16w + g, 8j + 2t)        d[4j + 1] = D(16w + g, 8j + 2t + 1)
 *   d[4j + 2] = D(16w + g + 8, 8j + 2t) d[4j + 3] = D(16w + g + 8, 8j + 2t + 1)
 * A fragment (the _rs form), the same w, g, t:
 *   a[0] = A(16w + g, t)   a[1] = A(16w + g + 8, t)   a[2] = A(16w + g, t + 4)
 *   a[3] = A(16w + g + 8, t + 4)                   (FP32 bits; the tensor core reads the top 19)
 * Every thread of the warpgroup must take part, with the same descriptors.
 */
#ifndef TG_KERNELS_WGMMA_TF32_CUH
#define TG_KERNELS_WGMMA_TF32_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "sw128.cuh"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ != 900 || !defined(__CUDA_ARCH_FEAT_SM90_ALL))
#define TG_WGMMA_UNAVAILABLE 1 /* the launcher refuses these GPUs (registry min_cc) */
#endif

/* The first 1024-byte boundary at or after p, in shared memory. */
__device__ __forceinline__ float *align_shared_1024(float *p)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(p);
    return p + (((1024u - (s & 1023u)) & 1023u) >> 2);
}

__device__ __forceinline__ uint64_t smem_desc(const float *tile, int kk)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(tile) + (unsigned)kk * 4u;
    return (uint64_t)((s & 0x3ffffu) >> 4) | (uint64_t)1 << 16 /* unused with swizzling */ |
           (uint64_t)(1024 >> 4) << 32 | (uint64_t)1 << 62 /* 128-byte swizzle */;
}

__device__ __forceinline__ void wgmma_fence()
{
#ifndef TG_WGMMA_UNAVAILABLE
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit()
{
#ifndef TG_WGMMA_UNAVAILABLE
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void wgmma_wait()
{
#ifndef TG_WGMMA_UNAVAILABLE
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

template <int N>
__device__ __forceinline__ void fence_operand(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

template <int N, bool UP>
__device__ __forceinline__ void set_max_registers()
{
    static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes 24..256 in steps of 8");
#ifndef TG_WGMMA_UNAVAILABLE
    if (UP)
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
    else
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

__device__ __forceinline__ void fence_async_shared()
{
#ifndef TG_WGMMA_UNAVAILABLE
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/* A 64-register accumulator as asm operands, each with constraint c ("+f" FP32, "+r" INT32),
 * and its register list, %0 .. %63: every m64n128 wgmma's (wgmma_s8.cuh's too). */
#define TG_WGMMA_D64_OPERANDS(c)                                                                   \
    c(d[0]), c(d[1]), c(d[2]), c(d[3]), c(d[4]), c(d[5]), c(d[6]), c(d[7]), c(d[8]), c(d[9]),      \
        c(d[10]), c(d[11]), c(d[12]), c(d[13]), c(d[14]), c(d[15]), c(d[16]), c(d[17]), c(d[18]),  \
        c(d[19]), c(d[20]), c(d[21]), c(d[22]), c(d[23]), c(d[24]), c(d[25]), c(d[26]), c(d[27]),  \
        c(d[28]), c(d[29]), c(d[30]), c(d[31]), c(d[32]), c(d[33]), c(d[34]), c(d[35]), c(d[36]),  \
        c(d[37]), c(d[38]), c(d[39]), c(d[40]), c(d[41]), c(d[42]), c(d[43]), c(d[44]), c(d[45]),  \
        c(d[46]), c(d[47]), c(d[48]), c(d[49]), c(d[50]), c(d[51]), c(d[52]), c(d[53]), c(d[54]),  \
        c(d[55]), c(d[56]), c(d[57]), c(d[58]), c(d[59]), c(d[60]), c(d[61]), c(d[62]), c(d[63])
#define TG_WGMMA_D64_REGISTERS                                                                   \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                    \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "           \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "           \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

/* wgmma_ss and wgmma_rs for an accumulator of ACC floats a thread (m64nN, N = 2 ACC), whose
 * operands and register list are D_OPERANDS and D_REGISTERS (%0 .. ACC - 1); A0 .. A5: the
 * numbers of the operands after it, as strings (_ss: A's and B's descriptors and the
 * predicate's; _rs: A's 4 registers, B's descriptor and the predicate's). */
#ifndef TG_WGMMA_UNAVAILABLE
#define TG_WGMMA_TF32_ISSUE(...) asm volatile(__VA_ARGS__)
#else
#define TG_WGMMA_TF32_ISSUE(...) __trap()
#endif
#define TG_WGMMA_TF32_FORMS(N, ACC, D_OPERANDS, D_REGISTERS, A0, A1, A2, A3, A4, A5)              \
    __device__ __forceinline__ void wgmma_ss(float (&d)[ACC], uint64_t a, uint64_t b,            \
                                             bool accumulate)                                    \
    {                                                                                            \
        TG_WGMMA_TF32_ISSUE("{\n.reg .pred p;\nsetp.ne.b32 p, %" A2 ", 0;\n"                     \
                            "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 "          \
                            D_REGISTERS ", %" A0 ", %" A1 ", p, 1, 1;\n}\n"                       \
                            : D_OPERANDS("+f")                                                   \
                            : "l"(a), "l"(b), "r"((int)accumulate)                               \
                            : "memory");                                                         \
        (void)d, (void)a, (void)b, (void)accumulate;                                             \
    }                                                                                            \
    __device__ __forceinline__ void wgmma_rs(float (&d)[ACC], const uint32_t (&a)[4], uint64_t b, \
                                             bool accumulate)                                    \
    {                                                                                            \
        TG_WGMMA_TF32_ISSUE("{\n.reg .pred p;\nsetp.ne.b32 p, %" A5 ", 0;\n"                     \
                            "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 "          \
                            D_REGISTERS ", {%" A0 ", %" A1 ", %" A2 ", %" A3 "}, %" A4            \
                            ", p, 1, 1;\n}\n"                                                     \
                            : D_OPERANDS("+f")                                                   \
                            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b),                \
                              "r"((int)accumulate)                                               \
                            : "memory");                                                         \
        (void)d, (void)a, (void)b, (void)accumulate;                                             \
    }

TG_WGMMA_TF32_FORMS(128, 64, TG_WGMMA_D64_OPERANDS, TG_WGMMA_D64_REGISTERS, "64", "65", "66", "67",
                    "68", "69")

/* The m64n64 forms: d holds 32 accumulators a thread, the fragment above for j = 0..7. */
#define TG_WGMMA_D32_OPERANDS(c)                                                                   \
    c(d[0]), c(d[1]), c(d[2]), c(d[3]), c(d[4]), c(d[5]), c(d[6]), c(d[7]), c(d[8]), c(d[9]),      \
        c(d[10]), c(d[11]), c(d[12]), c(d[13]), c(d[14]), c(d[15]), c(d[16]), c(d[17]), c(d[18]),  \
        c(d[19]), c(d[20]), c(d[21]), c(d[22]), c(d[23]), c(d[24]), c(d[25]), c(d[26]), c(d[27]),  \
        c(d[28]), c(d[29]), c(d[30]), c(d[31])
#define TG_WGMMA_D32_REGISTERS                                                                   \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                    \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"

TG_WGMMA_TF32_FORMS(64, 32, TG_WGMMA_D32_OPERANDS, TG_WGMMA_D32_REGISTERS, "32", "33", "34", "35",
                    "36", "37")

/* The m64n48 forms: d holds 24 accumulators a thread, the fragment above for j = 0..5. */
#define TG_WGMMA_D24_OPERANDS(c)                                                                   \
    c(d[0]), c(d[1]), c(d[2]), c(d[3]), c(d[4]), c(d[5]), c(d[6]), c(d[7]), c(d[8]), c(d[9]),      \
        c(d[10]), c(d[11]), c(d[12]), c(d[13]), c(d[14]), c(d[15]), c(d[16]), c(d[17]), c(d[18]),  \
        c(d[19]), c(d[20]), c(d[21]), c(d[22]), c(d[23])
#define TG_WGMMA_D24_REGISTERS                                                                   \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                    \
    "%16, %17, %18, %19, %20, %21, %22, %23}"

TG_WGMMA_TF32_FORMS(48, 24, TG_WGMMA_D24_OPERANDS, TG_WGMMA_D24_REGISTERS, "24", "25", "26", "27",
                    "28", "29")

/* The m64n32 forms: d holds 16 accumulators a thread, the fragment above for j = 0..3. */
#define TG_WGMMA_D16_OPERANDS(c)                                                                   \
    c(d[0]), c(d[1]), c(d[2]), c(d[3]), c(d[4]), c(d[5]), c(d[6]), c(d[7]), c(d[8]), c(d[9]),      \
        c(d[10]), c(d[11]), c(d[12]), c(d[13]), c(d[14]), c(d[15])
#define TG_WGMMA_D16_REGISTERS                                                                   \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"

TG_WGMMA_TF32_FORMS(32, 16, TG_WGMMA_D16_OPERANDS, TG_WGMMA_D16_REGISTERS, "16", "17", "18", "19",
                    "20", "21")

#undef TG_WGMMA_TF32_FORMS
#undef TG_WGMMA_TF32_ISSUE
#undef TG_WGMMA_UNAVAILABLE

#endif
