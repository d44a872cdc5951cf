/*
 * The CUDA runtime, as far as the rungs' kernels need it, for running their real source on the
 * CPU (see test_emulated_rungs.cpp for what this checks and what it does not).  The rewritten
 * kernel copies include <cuda_runtime.h> and find this file first on the include path.
 *
 * Execution model: a launch runs its blocks one after another; a block runs its threads as
 * fibers on the calling thread, each until it reaches __syncthreads() or returns, in thread
 * order, then the next round.  So a thread always runs as far as it can before anyone else
 * moves: a missing barrier makes a thread read shared data that the others have not written
 * yet (or have already overwritten), deterministically rather than by chance.  Fibers switch
 * by a few instructions on x86-64 (emu_switch: the callee-saved registers and the stack
 * pointer; ucontext's swapcontext makes a system call per switch, which was most of a
 * tensor-core rung's time), by ucontext elsewhere and under the sanitizers, which follow it.
 * Alternate blocks run their threads in reverse order, to catch the race the other way round.
 *   __shared__        static: one copy per kernel instantiation, shared by the block's threads
 *                     (and left over from the previous block, as stale data)
 *   extern __shared__ rewritten to a pointer into a per-launch buffer, NaN-filled per block
 *   reinterpret_cast  rewritten to emu_cast, which fails the test on a misaligned vector access
 *   named barriers    (bar.sync / bar.arrive, through named_barrier.cuh's twin) and mbarriers
 *                     (tma.cuh's twin): a thread that waits yields round after round until the
 *                     barrier (phase) completes; a round in which every live thread waits and
 *                     none completes is a deadlock, reported
 *   warp intrinsics   compile-time error: threads do not run in lockstep warps here
 *   inline PTX        compile-time error (the rewrite turns asm(...) into EMU_INLINE_PTX(...)):
 *                     a kernel header using inline PTX gets an emulated twin in overrides/
 */
#ifndef TG_EMULATED_CUDA_RUNTIME_H
#define TG_EMULATED_CUDA_RUNTIME_H

#include <ucontext.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __constant__
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__

/* ---- types ------------------------------------------------------------------------------- */

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
struct alignas(8) float2 {
    float x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
struct alignas(8) int2 {
    int x, y;
};
struct alignas(16) int4 {
    int x, y, z, w;
};
struct alignas(16) uint4 {
    unsigned x, y, z, w;
};
inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline int2 make_int2(int x, int y) { return int2{x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }

typedef struct CUstream_st *cudaStream_t;
enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorNotSupported = 801,
};
typedef enum cudaError cudaError_t;
enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};
constexpr int warpSize = 32;

/* ---- device intrinsics that have a plain meaning on one thread ---------------------------- */

template <class T> inline T __ldg(const T *p) { return *p; }
template <class T> inline T __ldcg(const T *p) { return *p; } /* a load through L2 */
template <class T> inline void __stcs(T *p, T v) { *p = v; } /* a streaming store */
template <class T> inline void __stwb(T *p, T v) { *p = v; } /* a plain store, one instruction */
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline long long __double2ll_rn(double x) { return std::llrint(x); }
inline int __double2int_rn(double x) { return (int)std::lrint(x); }
inline unsigned __float_as_uint(float f)
{
    unsigned u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
inline float __uint_as_float(unsigned u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
/* prmt.b32 in its default mode: the 8 bytes of {y, x} (x's lowest first) numbered 0 to 7;
 * result byte n is the byte that s's nibble n selects by its low 3 bits, or, where the
 * nibble's top bit is set, that byte's sign bit repeated over all 8 bits.  s's upper 16 bits
 * are not read. */
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    const unsigned long long bytes = (unsigned long long)y << 32 | x;
    unsigned r = 0;
    for (int n = 0; n < 4; ++n) {
        const unsigned nibble = s >> (4 * n) & 15u;
        unsigned b = (unsigned)(bytes >> (8 * (nibble & 7u))) & 255u;
        if (nibble & 8u)
            b = b & 128u ? 255u : 0u;
        r |= b << (8 * n);
    }
    return r;
}

/* Warp intrinsics need lockstep warps, which fibers are not: refuse at compile time. */
template <class... T> struct emu_always_false : std::false_type {};
#define EMU_NO_WARP_INTRINSIC(name)                                                              \
    template <class... T> inline unsigned name(T...)                                             \
    {                                                                                            \
        static_assert(emu_always_false<T...>::value,                                             \
                      "CPU emulation: warp intrinsic " #name " is not emulated (the threads of "  \
                      "a block run as fibers, not lockstep warps); give the helper that uses it " \
                      "an emulated twin in tests/emulated/overrides/");                          \
        return 0;                                                                                \
    }
/* Atomics: one thread runs at a time, so a plain read-modify-write is atomic. */
inline int atomicMax(int *at, int v)
{
    const int old = *at;
    *at = v > old ? v : old;
    return old;
}
inline unsigned long long atomicMax(unsigned long long *at, unsigned long long v)
{
    const unsigned long long old = *at;
    *at = v > old ? v : old;
    return old;
}
template <class T> inline T atomicAdd(T *at, T v)
{
    const T old = *at;
    *at = old + v;
    return old;
}
/* Blocks run one after another, so every write is visible to the next block: a fence only
 * keeps the compiler from moving memory accesses across it. */
inline void __threadfence() { __asm__ __volatile__("" ::: "memory"); }

EMU_NO_WARP_INTRINSIC(__shfl_sync)
EMU_NO_WARP_INTRINSIC(__shfl_up_sync)
EMU_NO_WARP_INTRINSIC(__shfl_down_sync)
EMU_NO_WARP_INTRINSIC(__shfl_xor_sync)
EMU_NO_WARP_INTRINSIC(__ballot_sync)
EMU_NO_WARP_INTRINSIC(__any_sync)
EMU_NO_WARP_INTRINSIC(__all_sync)
EMU_NO_WARP_INTRINSIC(__match_any_sync)
EMU_NO_WARP_INTRINSIC(__activemask)
EMU_NO_WARP_INTRINSIC(__syncwarp)
#undef EMU_NO_WARP_INTRINSIC

/* The rewrite turns every asm(...) / asm volatile(...) of a kernel source into this. */
#define EMU_INLINE_PTX(...)                                                                      \
    static_assert(sizeof(char) == 0,                                                             \
                  "CPU emulation: inline PTX cannot run on the CPU; give the header that wraps " \
                  "it an emulated twin of the same name in tests/emulated/overrides/")

/* ---- emulator state ---------------------------------------------------------------------- */

namespace emu {

/* What the test is running, printed with any abort from inside a kernel. */
inline const char *context = "";
/* What shared memory holds at a block's start and a cp.async destination until its copy lands:
 * NaN, which every later sum keeps, unless the test sets a finite value for rungs that would
 * repair a NaN (the tensor-core rungs recompute each output that is not finite from global
 * memory, so an early read would leave no trace). */
inline float poison = __builtin_nanf("");
/* Casts to a pointer (or reference) of an 8- or 16-byte vector type that were checked. */
inline long vector_casts;
/* Launches, and blocks where some threads returned while others waited at a barrier
 * (__syncthreads in divergent code: undefined behaviour on a GPU). */
inline long launches, divergent_barriers;
inline long named_barrier_completions; /* counted by SpinBarrier */
/* Other changes of barrier state that may let a waiter go on (mbarrier arrivals, copies
 * issued or landed), counted by the twins: a round without any is a deadlock. */
inline long barrier_progress;
inline long block_runs; /* blocks run so far: twins keep per-block state keyed by it */
inline cudaError_t last_error = cudaSuccess;

[[noreturn]] inline void fail(const char *what, const void *where)
{
    fprintf(stderr, "EMULATION ABORT: %s (address %p) while running: %s\n", what, where, context);
    fflush(stderr);
    std::_Exit(1); /* a failure, never a pass; no core file */
}

template <class P> inline void check_alignment(const void *ptr)
{
    if constexpr (!std::is_void_v<P> && alignof(P) > 4) {
        ++vector_casts;
        if (reinterpret_cast<uintptr_t>(ptr) % alignof(P) != 0)
            fail(alignof(P) == 16 ? "misaligned 16-byte vector access" : "misaligned vector access",
                 ptr);
    }
}

/* ---- fibers: the threads of one block ---------------------------------------------------- */

constexpr size_t kStackBytes = 128 * 1024;

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#if defined(__has_feature)
#if !__has_feature(address_sanitizer) && !__has_feature(thread_sanitizer)
#define EMU_FAST_SWITCH 1
#endif
#else
#define EMU_FAST_SWITCH 1
#endif
#endif

#ifdef EMU_FAST_SWITCH
/* Saves the callee-saved registers on this stack and its pointer in *save, then continues on
 * the stack `load` (saved the same way, or prepared by start_stack) and returns there. */
[[gnu::naked, gnu::noinline, gnu::noipa]] inline void emu_switch(void ** /*save*/, void * /*load*/)
{
    __asm__("pushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\t"
            "pushq %r15\n\tmovq %rsp, (%rdi)\n\tmovq %rsi, %rsp\n\tpopq %r15\n\t"
            "popq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n\tret");
}
#endif

struct Fiber {
#ifdef EMU_FAST_SWITCH
    void *sp;
#else
    ucontext_t ctx;
#endif
    std::unique_ptr<char[]> stack;
    bool done;
    bool spinning; /* yielded while waiting on a named barrier, not at __syncthreads */
};

struct Block {
#ifdef EMU_FAST_SWITCH
    void *scheduler;
#else
    ucontext_t scheduler;
#endif
    std::vector<Fiber> fibers;
    Fiber *current = nullptr;
    void (*body)(void *) = nullptr;
    void *body_arg = nullptr;
    std::vector<float> dynamic_shared; /* extern __shared__, NaN-filled for each block */
};
inline Block block;

} // namespace emu

inline uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

namespace emu {

#ifdef EMU_FAST_SWITCH
[[noreturn]] inline void fiber_entry()
{
    block.body(block.body_arg);
    block.current->done = true;
    void *finished;
    emu_switch(&finished, block.scheduler); /* never resumed */
    __builtin_unreachable();
}

/* A fresh fiber's stack as emu_switch leaves a suspended one: six saved registers (zero), then
 * fiber_entry as the return address, entered with the stack aligned as after a call. */
inline void start_stack(Fiber &f)
{
    uintptr_t top = (reinterpret_cast<uintptr_t>(f.stack.get()) + kStackBytes) & ~(uintptr_t)15;
    void **sp = reinterpret_cast<void **>(top - 8); /* fiber_entry's own return address */
    *sp = nullptr;
    *--sp = reinterpret_cast<void *>(&fiber_entry);
    for (int r = 0; r < 6; ++r)
        *--sp = nullptr;
    f.sp = sp;
}

/* The scheduler runs fiber f until it yields or finishes. */
inline void resume(Fiber &f) { emu_switch(&block.scheduler, f.sp); }
/* The running fiber f gives the scheduler its turn. */
inline void yield(Fiber &f) { emu_switch(&f.sp, block.scheduler); }
#else
inline void fiber_entry()
{
    block.body(block.body_arg);
    block.current->done = true; /* returns to the scheduler through uc_link */
}

inline void start_stack(Fiber &f)
{
    if (getcontext(&f.ctx) != 0)
        fail("getcontext failed", nullptr);
    f.ctx.uc_stack.ss_sp = f.stack.get();
    f.ctx.uc_stack.ss_size = kStackBytes;
    f.ctx.uc_link = &block.scheduler;
    makecontext(&f.ctx, fiber_entry, 0);
}

inline void resume(Fiber &f)
{
    if (swapcontext(&block.scheduler, &f.ctx) != 0)
        fail("swapcontext failed", nullptr);
}
inline void yield(Fiber &f)
{
    if (swapcontext(&f.ctx, &block.scheduler) != 0)
        fail("swapcontext failed", nullptr);
}
#endif

/* Runs one block: every thread as a fiber, round by round between barriers. */
inline void run_block(unsigned threads, bool reverse)
{
    ++block_runs;
    if (block.fibers.size() < threads)
        block.fibers.resize(threads);
    for (unsigned t = 0; t < threads; ++t) {
        Fiber &f = block.fibers[t];
        if (!f.stack)
            f.stack.reset(new char[kStackBytes]);
        start_stack(f);
        f.done = false;
        f.spinning = false;
    }
    if (!block.dynamic_shared.empty())
        std::fill(block.dynamic_shared.begin(), block.dynamic_shared.end(), emu::poison);
    const dim3 b = blockDim;
    unsigned live = threads;
    while (live > 0) {
        unsigned waiting = 0, exited = 0, spinning = 0;
        const long completions = named_barrier_completions, progress = barrier_progress;
        for (unsigned i = 0; i < threads; ++i) {
            const unsigned t = reverse ? threads - 1 - i : i;
            Fiber &f = block.fibers[t];
            if (f.done)
                continue;
            threadIdx = uint3{t % b.x, t / b.x % b.y, t / (b.x * b.y)};
            block.current = &f;
            resume(f);
            if (f.done)
                ++exited, --live;
            else if (f.spinning)
                ++spinning;
            else
                ++waiting;
            f.spinning = false;
        }
        if (waiting > 0 && exited > 0)
            ++divergent_barriers;
        if (live > 0 && spinning == live && named_barrier_completions == completions &&
            barrier_progress == progress)
            fail("deadlock: every live thread waits on a named barrier or an mbarrier phase that "
                 "cannot complete (a wrong parity, arrival count or expect-tx byte count?)",
                 nullptr);
    }
    block.current = nullptr;
}

} // namespace emu

inline void __syncthreads()
{
    emu::Fiber *f = emu::block.current;
    if (!f)
        emu::fail("__syncthreads outside a kernel", nullptr);
    emu::yield(*f);
    __asm__ __volatile__("" ::: "memory"); /* shared memory changed under us */
}

/* Gives the other threads a turn while this one waits on a named barrier. */
inline void emu_spin()
{
    emu::Fiber *f = emu::block.current;
    if (!f)
        emu::fail("named barrier outside a kernel", nullptr);
    f->spinning = true;
    emu::yield(*f);
    __asm__ __volatile__("" ::: "memory");
}

namespace emu {

/* A barrier for `count` threads whose waiters yield (emu_spin) until it completes, then starts
 * a new generation: the twins' named barriers and warpgroup exchanges. */
struct SpinBarrier {
    int arrived = 0, count = 0;
    unsigned generation = 0;

    /* Arrives; returns the generation this arrival belongs to. */
    unsigned arrive(int threads)
    {
        if (arrived > 0 && count != threads)
            fail("barrier: arrivals disagree on the thread count", nullptr);
        count = threads;
        const unsigned g = generation;
        if (++arrived == threads) {
            arrived = 0;
            ++generation;
            ++named_barrier_completions;
        }
        return g;
    }
    void wait(unsigned g) const
    {
        while (generation == g)
            emu_spin();
    }
};

/* Per-block state of a twin: T, made fresh for every block run. */
template <class T>
struct PerBlock {
    long run = -1;
    T value;
    T &get()
    {
        if (run != block_runs) {
            value = T{};
            run = block_runs;
        }
        return value;
    }
};

} // namespace emu

inline void *emu_dynamic_shared() { return emu::block.dynamic_shared.data(); }

/* reinterpret_cast, checking the alignment of vector accesses (x86 would forgive them). */
template <class T, class U> inline T emu_cast(U &&from)
{
    if constexpr (std::is_pointer_v<T> && std::is_pointer_v<std::remove_reference_t<U>>) {
        emu::check_alignment<std::remove_cv_t<std::remove_pointer_t<T>>>(
            reinterpret_cast<const void *>(from));
    } else if constexpr (std::is_lvalue_reference_v<T>) {
        emu::check_alignment<std::remove_cv_t<std::remove_reference_t<T>>>(
            reinterpret_cast<const void *>(&from));
    }
    return reinterpret_cast<T>(from);
}

/* ---- launches: kernel<<<grid, block, smem, stream>>>(args) is rewritten to
 *      kernel ->* emu_config(grid, block, smem, stream)(args) ---------------------------------- */

namespace emu {

template <class... A> struct Bound;

struct Config {
    dim3 grid, block;
    size_t dynamic_shared;
    template <class... A> Bound<std::decay_t<A>...> operator()(A &&...args) const
    {
        return Bound<std::decay_t<A>...>{*this, std::tuple<std::decay_t<A>...>(std::forward<A>(args)...)};
    }
};

template <class... A> struct Bound {
    Config config;
    std::tuple<A...> args;
};

template <class Call> void launch(const Config &c, Call &call)
{
    ++launches;
    const unsigned threads = c.block.x * c.block.y * c.block.z;
    if (threads == 0 || threads > 1024 || c.block.x > 1024 || c.block.y > 1024 ||
        c.block.z > 64 || c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0 ||
        c.grid.y > 65535 || c.grid.z > 65535 || c.grid.x > 2147483647u ||
        c.dynamic_shared > 227 * 1024) {
        last_error = cudaErrorInvalidConfiguration;
        return;
    }
    block.dynamic_shared.assign((c.dynamic_shared + sizeof(float) - 1) / sizeof(float), 0.0f);
    block.body = [](void *arg) { (*static_cast<Call *>(arg))(); };
    block.body_arg = &call;
    gridDim = c.grid, blockDim = c.block;
    for (unsigned bz = 0; bz < c.grid.z; ++bz)
        for (unsigned by = 0; by < c.grid.y; ++by)
            for (unsigned bx = 0; bx < c.grid.x; ++bx) {
                blockIdx = uint3{bx, by, bz};
                run_block(threads, ((bx + by + bz + launches) & 1) != 0);
            }
}

} // namespace emu

inline emu::Config emu_config(dim3 grid, dim3 block, size_t dynamic_shared = 0,
                              cudaStream_t = nullptr)
{
    return emu::Config{grid, block, dynamic_shared};
}

template <class... P, class... A> void operator->*(void (*kernel)(P...), emu::Bound<A...> &&bound)
{
    auto call = [&] {
        /* each thread gets its own copy of the arguments, converted to the parameter types */
        std::apply([&](const A &...a) { kernel(a...); }, bound.args);
    };
    emu::launch(bound.config, call);
}

/* ---- host API ---------------------------------------------------------------------------- */

inline cudaError_t cudaGetLastError()
{
    const cudaError_t e = emu::last_error;
    emu::last_error = cudaSuccess;
    return e;
}
inline cudaError_t cudaPeekAtLastError() { return emu::last_error; }
inline const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaSuccess ? "no error" : "emulated launch error";
}
template <class F> inline cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int)
{
    return cudaSuccess;
}

/* Launches run when made: a copy is a memcpy, a stream always idle. */
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                      cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind,
                                   cudaStream_t = nullptr)
{
    std::memcpy(dst, src, bytes);
    return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t = nullptr)
{
    std::memset(dst, value, bytes);
    return cudaSuccess;
}

/* One emulated device. */
inline cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}
/* Its SMs: few, so that a stream-K wave of blocks shares tiles even on the sweep's small
 * shapes. */
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
inline cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int)
{
    *value = attr == cudaDevAttrMultiProcessorCount ? 3 : 0;
    return cudaSuccess;
}

#endif
