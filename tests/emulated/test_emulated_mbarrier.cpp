/*
 * test_emulated_mbarrier: the emulated TMA and mbarrier twin (overrides/tma.cuh) catches the
 * protocol errors a pipeline like rung 9's can make, and passes the right protocol.
 *
 * A small kernel runs rung 9's hand-off: thread 0 (the producer) fills a ring of 2 stages with
 * TMA copies of 8 boxes of 32 x 8 floats from a 60 x 28 tensor (past its edges), each
 * stage with a "full" barrier (1 arrival + expect-tx bytes) and an "empty" one (one arrival a
 * consumer warp); 2 consumer warps wait on full by phase parity, check every element of the box
 * (out-of-bounds ones must be 0) and release the stage.  Each scenario runs in a forked child,
 * because the emulator ends the process on a failure:
 *   ok           the right protocol: must pass
 *   parity       the consumers wait on the wrong parity of full: they read a box before it
 *                lands (the twin's poison), or wait forever
 *   count        one consumer warp never releases: deadlock
 *   bytes-short  expect-tx announces a box more than is copied: deadlock
 *   bytes-over   expect-tx announces a box less: "completed more bytes" abort
 *   no-empty     the producer refills a stage without waiting for its release: a second
 *                expect-tx arrival in one phase, or the consumers read a refilled box
 * Exit status 0 when every scenario ended as it must.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <cuda_runtime.h>

#include "overrides/tma.cuh"

namespace {

enum Fault { kNone, kParity, kCount, kBytesShort, kBytesOver, kNoEmpty };

/* the tensor: 60 rows of 28 floats, a pitch of 48; the boxes (32 x 8) pass both its edges */
constexpr int kStages = 2, kBoxes = 8, kRows = 60, kCols = 28, kPitch = 48, kBoxRows = 8;
constexpr int kBoxFloats = 32 * kBoxRows;
constexpr unsigned kBoxBytes = kBoxFloats * sizeof(float);

int mismatches;

void pipeline(const __grid_constant__ CUtensorMap map, Fault fault)
{
    float *const stages = static_cast<float *>(emu_dynamic_shared()); /* 1024-byte boxes */
    uint64_t *const full = reinterpret_cast<uint64_t *>(stages + kStages * kBoxFloats * 4);
    uint64_t *const empty = full + kStages;
    const int tid = threadIdx.x;
    if (tid == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbarrier_init(&full[s], 1);
            mbarrier_init(&empty[s], 2);
        }
        fence_mbarrier_init();
    }
    __syncthreads();
    if (tid < 32) {
        if (tid != 0)
            return;
        for (int t = 0; t < kBoxes; ++t) {
            const int s = t % kStages;
            if (fault != kNoEmpty)
                mbarrier_wait(&empty[s], ((unsigned)(t / kStages) & 1u) ^ 1u);
            const unsigned bytes = fault == kBytesShort  ? 2 * kBoxBytes
                                   : fault == kBytesOver ? 0
                                                          : kBoxBytes;
            mbarrier_arrive_expect_tx(&full[s], bytes);
            tma_load_tile(stages + s * kBoxFloats * 4, &map, &full[s], 0, t * kBoxRows, 0, 0);
        }
        return;
    }
    const int warp = tid / 32 - 1, lane = tid % 32;
    for (int t = 0; t < kBoxes; ++t) {
        const int s = t % kStages;
        const unsigned parity = (unsigned)(t / kStages) & 1u;
        mbarrier_wait(&full[s], fault == kParity ? parity ^ 1u : parity);
        const float *box = stages + s * kBoxFloats * 4;
        for (int r = warp; r < kBoxRows; r += 2) { /* row r of the box, 128 bytes swizzled */
            const int at = r * 32 + (((lane >> 2) ^ (r & 7)) << 2) + (lane & 3);
            const int row = t * kBoxRows + r;
            const float want = row < kRows && lane < kCols ? (float)(row * 100 + lane) : 0.0f;
            mismatches += box[at] != want;
        }
        if (lane == 0 && !(fault == kCount && warp == 1))
            mbarrier_arrive(&empty[s]);
    }
}

int run(Fault fault)
{
    alignas(16) static float data[kRows * kPitch];
    for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kPitch; ++c)
            data[r * kPitch + c] = (float)(r * 100 + c);
    CUtensorMap map;
    const uint64_t dims[4] = {kCols, kRows, 1, 1};
    const uint64_t strides[3] = {kPitch * 4, kPitch * 4 * kRows, kPitch * 4 * kRows};
    const uint32_t box[4] = {32, kBoxRows, 1, 1};
    if (encode_tile_map(&map, data, dims, strides, box) != cudaSuccess) {
        fprintf(stderr, "encode_tile_map refused a valid map\n");
        return 1;
    }
    const size_t smem = kStages * kBoxFloats * 4 * sizeof(float) + 2 * kStages * sizeof(uint64_t);
    pipeline->*emu_config(dim3(1), dim3(96), smem)(map, fault);
    if (mismatches) {
        fprintf(stderr, "%d elements of the boxes read wrong\n", mismatches);
        return 1;
    }
    return 0;
}

} // namespace

int main()
{
    struct Scenario {
        const char *name;
        Fault fault;
        const char *expect; /* one of these '|'-separated words in the child's stderr; nullptr:
                               it must pass */
    } const scenarios[] = {
        {"ok", kNone, nullptr},
        {"parity", kParity, "read wrong|deadlock"},
        {"count", kCount, "deadlock"},
        {"bytes-short", kBytesShort, "deadlock"},
        {"bytes-over", kBytesOver, "more bytes than expect-tx"},
        {"no-empty", kNoEmpty, "read wrong|more arrivals"},
    };
    int failed = 0;
    for (const Scenario &sc : scenarios) {
        int out[2];
        if (pipe(out) != 0)
            return 1;
        fflush(stdout);
        const pid_t child = fork();
        if (child == 0) {
            close(out[0]);
            dup2(out[1], 2);
            _exit(run(sc.fault));
        }
        close(out[1]);
        std::string text;
        char buf[512];
        for (ssize_t got; (got = read(out[0], buf, sizeof buf)) > 0;)
            text.append(buf, (size_t)got);
        close(out[0]);
        int status = 0;
        waitpid(child, &status, 0);
        const bool passed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        bool named = false; /* the child's stderr names one of the expected failures */
        for (const char *w = sc.expect; w && *w;) {
            const char *bar = strchr(w, '|');
            const std::string word(w, bar ? (size_t)(bar - w) : strlen(w));
            named = named || text.find(word) != std::string::npos;
            w = bar ? bar + 1 : nullptr;
        }
        const bool ok = sc.expect ? !passed && named : passed;
        printf("%-12s %s: %s", sc.name, ok ? "as expected" : "WRONG",
               passed ? "passed\n" : text.empty() ? "failed\n" : text.c_str());
        failed += !ok;
    }
    printf(failed ? "test_emulated_mbarrier: %d scenario(s) ended wrongly\n"
                  : "test_emulated_mbarrier: all scenarios ended as they must\n",
           failed);
    return failed ? 1 : 0;
}
