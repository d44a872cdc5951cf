/* The stream-ordering test's gate (stream_gate.h): a kernel spinning on a flag in mapped host
 * memory.  It gives up after kLimitNs so that a library call that waits for the held stream
 * (which it must not) fails the test instead of hanging it. */
#include <cuda_runtime.h>

#include "stream_gate.h"

namespace {
constexpr unsigned long long kLimitNs = 20ull * 1000 * 1000 * 1000;

__device__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void wait_at_gate(const volatile int *open, volatile int *gave_up)
{
    const unsigned long long start = global_ns();
    while (!*open) {
        if (global_ns() - start > kLimitNs) {
            *gave_up = 1;
            return;
        }
        __nanosleep(1000);
    }
}
} // namespace

struct tg_stream_gate {
    volatile int *flags; /* [0] open, [1] gave up; host pointers, mapped into the device */
};

extern "C" int tg_stream_gate_create(tg_stream_gate **gate)
{
    *gate = new tg_stream_gate{};
    void *flags = nullptr;
    const cudaError_t e = cudaHostAlloc(&flags, 2 * sizeof(int), cudaHostAllocMapped);
    (*gate)->flags = static_cast<volatile int *>(flags);
    return e == cudaSuccess ? 0 : 1;
}

extern "C" int tg_stream_gate_hold(tg_stream_gate *gate, void *stream)
{
    gate->flags[0] = 0;
    gate->flags[1] = 0;
    int *device_flags = nullptr;
    cudaError_t e = cudaHostGetDevicePointer((void **)&device_flags, (void *)gate->flags, 0);
    if (e != cudaSuccess)
        return e;
    wait_at_gate<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(device_flags, device_flags + 1);
    return cudaGetLastError();
}

extern "C" void tg_stream_gate_open(tg_stream_gate *gate)
{
    __sync_synchronize();
    gate->flags[0] = 1;
    __sync_synchronize();
}

extern "C" int tg_stream_gate_gave_up(const tg_stream_gate *gate) { return gate->flags[1]; }

extern "C" void tg_stream_gate_destroy(tg_stream_gate *gate)
{
    if (!gate)
        return;
    if (gate->flags)
        cudaFreeHost((void *)gate->flags);
    delete gate;
}
