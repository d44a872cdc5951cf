/*
 * Where a ring of STAGES buffers guarded by mbarriers (tma.cuh) stands, for the producer and
 * the consumers of a warp-specialized kernel (k09_tma_wgmma.cu): the stage of the current
 * tile and the parity of its phase, which flips each time the ring wraps.  Tile t lies in
 * stage t % STAGES with parity (t / STAGES) % 2; advance() moves to tile t + 1.
 *
 *   consumer: mbarrier_wait(&full[s.stage], s.phase)        tile t has landed
 *   producer: mbarrier_wait(&empty[s.stage], s.phase ^ 1)   the consumers released tile
 *             t - STAGES (a fresh barrier counts the phase of parity 1 as complete)
 *
 * Plain C++ with no inline PTX, so the CPU emulation (tests/emulated/) uses it as it is.
 */
#ifndef TG_KERNELS_PIPELINE_CUH
#define TG_KERNELS_PIPELINE_CUH

#include <cuda_runtime.h>

template <int STAGES>
struct PipelineState {
    static_assert(STAGES >= 1, "a ring of one stage at least");
    int stage = 0;
    unsigned phase = 0;

    __device__ __forceinline__ void advance()
    {
        if (++stage == STAGES) {
            stage = 0;
            phase ^= 1u;
        }
    }
};

#endif
