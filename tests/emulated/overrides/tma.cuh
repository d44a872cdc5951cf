/*
 * Emulated twin of src/cuda/kernels/tma.cuh (TMA and mbarrier inline PTX, and the driver's
 * tensor-map encoder).  emulate.cmake copies this file into the emulated kernel tree in place
 * of the original, so it must keep the original's functions and signatures: change both
 * together.
 *
 * CUtensorMap holds what the encoder was given, checked as the driver checks it (16-byte
 * aligned base and strides, strides that do not overlap the dimension below, boxes of 1..256
 * elements, 128-byte rows for the 128-byte swizzle, rows of whole 16 bytes without it).  An
 * mbarrier is a record kept beside shared memory, keyed by its address, fresh for every block:
 *   - a phase completes when its pending arrivals reach 0 and the bytes announced by
 *     expect-tx have all landed; then the phase number goes up and the arrivals are re-armed;
 *   - mbarrier_wait(bar, parity) returns once the phase number's parity differs from `parity`
 *     (a fresh barrier passes a wait for parity 1), else the thread yields;
 *   - a TMA copy writes a finite poison (not NaN, which the tensor-core rungs' special-value
 *     path would recompute correctly) over its box at once and lands only when a thread waits
 *     on its barrier: so data read before the wait, or a stage refilled while others still
 *     read it, shows in the result;
 *   - landing more bytes than expect-tx announced, arrivals past the count, a barrier used
 *     before init, or a destination that is not 1024-byte aligned (128 without the swizzle)
 *     abort the test with a message; too few bytes or arrivals leave the phase open, and the
 *     waiters' yields end in the runtime's deadlock report (a round in which every live thread
 *     waits and no barrier's state changes).
 * copy_async_arrive takes the thread's cp.async copies (async_copy.cuh's twin) off its queues:
 * their destinations hold the finite poison too, and they land, with the arrival they carry,
 * when a thread waits on the barrier.
 * Elements of the box outside the tensor's dimensions land as zeros, and their bytes count,
 * as on the GPU.  The box lands as rows of 128 bytes with the 128-byte swizzle (16-byte chunk
 * c of row r at chunk c ^ (r % 8)), the layout wgmma_tf32.cuh's descriptors read; without it
 * as plain rows of box[0] floats.
 */
#ifndef TG_KERNELS_TMA_CUH
#define TG_KERNELS_TMA_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <vector>

#include "async_copy.cuh"

struct CUtensorMap {
    const float *base;
    uint64_t dims[4];
    uint64_t strides[3]; /* bytes between steps of dimensions 1, 2, 3 */
    uint32_t box[4];
    bool swizzle; /* the 128-byte swizzle, else plain rows of box[0] floats */
};

inline cudaError_t encode_tile_map(CUtensorMap *map, const float *base, const uint64_t (&dims)[4],
                                   const uint64_t (&strides)[3], const uint32_t (&box)[4],
                                   bool swizzle = true)
{
    bool ok = reinterpret_cast<uintptr_t>(base) % 16 == 0 &&
              (swizzle ? box[0] * 4 == 128 : box[0] * 4 % 16 == 0);
    uint64_t below = dims[0] * 4; /* bytes spanned by the dimension below */
    for (int i = 0; i < 4; ++i) {
        ok = ok && dims[i] >= 1 && dims[i] <= (1ull << 32) && box[i] >= 1 && box[i] <= 256;
        if (i < 3) {
            ok = ok && strides[i] % 16 == 0 && strides[i] < (1ull << 40) && strides[i] >= below;
            below = strides[i] * dims[i + 1];
        }
    }
    if (!ok)
        return cudaErrorInvalidValue;
    map->base = base;
    std::memcpy(map->dims, dims, sizeof map->dims);
    std::memcpy(map->strides, strides, sizeof map->strides);
    std::memcpy(map->box, box, sizeof map->box);
    map->swizzle = swizzle;
    return cudaSuccess;
}

namespace emu_tma {

constexpr float kPoison = 12345.0f; /* what a box holds until its copy lands */

struct Copy {
    float *dst;
    CUtensorMap map; /* a copy: the issuing thread's kernel parameters may be gone at landing */
    int c[4];
};

struct Barrier {
    int count = 0, pending = 0;
    long long tx = 0;  /* bytes announced and not landed yet */
    unsigned phase = 0;
    std::vector<Copy> copies; /* issued, not landed */
    /* cp.async copies of the arrivals copy_async_arrive made, each landing with its arrival */
    std::vector<std::vector<emu_async::Copy>> arrivals;
};

inline emu::PerBlock<std::map<const void *, Barrier>> barriers;

inline Barrier &get(const uint64_t *bar)
{
    auto &all = barriers.get();
    auto it = all.find(bar);
    if (it == all.end())
        emu::fail("mbarrier used before mbarrier_init", bar);
    return it->second;
}

inline uint64_t box_bytes(const CUtensorMap &m)
{
    return 4ull * m.box[0] * m.box[1] * m.box[2] * m.box[3];
}

/* Writes the box: row R (the box's elements beyond its first dimension, in order) at byte
 * 4 box[0] R, with the 128-byte swizzle its 16-byte chunks swizzled. */
inline void write_box(const Copy &cp, bool poison)
{
    const CUtensorMap &m = cp.map;
    char *const dst = reinterpret_cast<char *>(cp.dst);
    uint64_t row = 0;
    for (uint32_t e3 = 0; e3 < m.box[3]; ++e3)
        for (uint32_t e2 = 0; e2 < m.box[2]; ++e2)
            for (uint32_t e1 = 0; e1 < m.box[1]; ++e1, ++row)
                for (uint32_t e0 = 0; e0 < m.box[0]; ++e0) {
                    const int64_t x[4] = {(int64_t)cp.c[0] + e0, (int64_t)cp.c[1] + e1,
                                          (int64_t)cp.c[2] + e2, (int64_t)cp.c[3] + e3};
                    float v = kPoison;
                    if (!poison) {
                        bool in = true;
                        for (int i = 0; i < 4; ++i)
                            in = in && x[i] >= 0 && (uint64_t)x[i] < m.dims[i];
                        v = 0.0f;
                        if (in) {
                            const char *src = reinterpret_cast<const char *>(m.base) + 4 * x[0] +
                                              x[1] * m.strides[0] + x[2] * m.strides[1] +
                                              x[3] * m.strides[2];
                            std::memcpy(&v, src, sizeof v);
                        }
                    }
                    uint64_t at = row * 4 * m.box[0] + 4 * e0;
                    if (m.swizzle)
                        at ^= ((at >> 7) & 7u) << 4;
                    std::memcpy(dst + at, &v, sizeof v);
                }
}

inline void complete_if_done(Barrier &b)
{
    if (b.pending == 0 && b.tx == 0 && b.copies.empty() && b.arrivals.empty()) {
        ++b.phase;
        b.pending = b.count;
    }
}

inline void arrive(const uint64_t *bar, unsigned bytes)
{
    Barrier &b = get(bar);
    ++emu::barrier_progress;
    b.tx += bytes;
    if (--b.pending < 0)
        emu::fail("mbarrier: more arrivals than its count in one phase", bar);
    complete_if_done(b);
}

} // namespace emu_tma

__device__ __forceinline__ void mbarrier_init(uint64_t *bar, unsigned count)
{
    if (reinterpret_cast<uintptr_t>(bar) % 8 != 0)
        emu::fail("mbarrier not 8-byte aligned", bar);
    if (count == 0)
        emu::fail("mbarrier_init with a count of 0", bar);
    emu_tma::Barrier &b = emu_tma::barriers.get()[bar];
    b = emu_tma::Barrier{};
    b.count = b.pending = (int)count;
}

__device__ __forceinline__ void fence_mbarrier_init() {}

__device__ __forceinline__ void mbarrier_arrive(uint64_t *bar) { emu_tma::arrive(bar, 0); }

__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t *bar, unsigned bytes)
{
    emu_tma::arrive(bar, bytes);
}

__device__ __forceinline__ void mbarrier_wait(uint64_t *bar, unsigned parity)
{
    if (parity > 1)
        emu::fail("mbarrier_wait: parity must be 0 or 1", bar);
    for (;;) {
        emu_tma::Barrier &b = emu_tma::get(bar);
        if (!b.copies.empty())
            ++emu::barrier_progress;
        for (const emu_tma::Copy &c : b.copies) { /* the copies land now, as late as possible */
            emu_tma::write_box(c, false);
            b.tx -= (long long)emu_tma::box_bytes(c.map);
            if (b.tx < 0)
                emu::fail("mbarrier: TMA copies completed more bytes than expect-tx announced",
                          bar);
        }
        b.copies.clear();
        std::vector<std::vector<emu_async::Copy>> arrivals;
        arrivals.swap(b.arrivals);
        for (const std::vector<emu_async::Copy> &copies : arrivals) {
            ++emu::barrier_progress;
            for (const emu_async::Copy &c : copies)
                emu_async::land(c);
            if (--b.pending < 0)
                emu::fail("mbarrier: more arrivals than its count in one phase", bar);
        }
        emu_tma::complete_if_done(b);
        if ((b.phase & 1u) != parity)
            return;
        emu_spin();
    }
}

__device__ __forceinline__ void copy_async_arrive(uint64_t *bar)
{
    emu_tma::Barrier &b = emu_tma::get(bar);
    emu_async::Thread &me = emu_async::me();
    std::vector<emu_async::Copy> copies = std::move(me.open);
    me.open.clear();
    for (std::vector<emu_async::Copy> &group : me.groups)
        copies.insert(copies.end(), group.begin(), group.end());
    me.groups.clear();
    for (const emu_async::Copy &c : copies)
        for (int i = 0; i < c.floats; ++i)
            c.dst[i] = emu_tma::kPoison;
    b.arrivals.push_back(std::move(copies));
    ++emu::barrier_progress;
}

__device__ __forceinline__ void tma_load_tile(float *dst, const CUtensorMap *map, uint64_t *bar,
                                              int c0, int c1, int c2, int c3)
{
    const ptrdiff_t offset = reinterpret_cast<char *>(dst) -
                             static_cast<char *>(emu_dynamic_shared()); /* shared address */
    if (offset % (map->swizzle ? 1024 : 128) != 0)
        emu::fail(map->swizzle ? "TMA destination not 1024-byte aligned (128-byte swizzle)"
                               : "TMA destination not 128-byte aligned",
                  dst);
    const emu_tma::Copy c{dst, *map, {c0, c1, c2, c3}};
    emu_tma::write_box(c, true);
    emu_tma::get(bar).copies.push_back(c);
    ++emu::barrier_progress;
}

#endif
