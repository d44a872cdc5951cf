/*
 * Rung 9: Hopper's own pipeline: TMA, mbarriers, a producer warp and consumer warpgroups doing
 * wgmma with A from registers and B from shared memory.
 *   sgemm_tma_wgmma3xtf32, 128x128x32, 4 stages, promotion every 32 of k ("tma_wgmma3xtf32")
 *                                                                  FP32 accuracy (3xTF32)
 *   sgemm_tma_wgmmatf32, 128x256x32, 4 stages ("tma_wgmmatf32")     TF32 mode
 *   the same on 128x128x32, 6 stages ("tma_wgmmatf32_128x128")      TF32 mode, twice the tiles
 *   the same on 64x128x32, 8 stages ("tma_wgmmatf32_64x128")        TF32 mode, four times
 *   sgemm_tma_wgmma3xtf32 on 64x128x32, 4 stages ("tma_wgmma3xtf32_64x128")
 *                                                                  FP32 accuracy, twice the tiles
 *   sgemm_tma_wgmma3xtf32 on 128x64x32, 6 stages, m64n64 products ("tma_wgmma3xtf32_128x64")
 *                                                                  FP32 accuracy, short sides
 *                                                                  <= 64
 *   the same in TF32 mode, 8 stages ("tma_wgmmatf32_128x64")       TF32 mode, short sides <= 64
 *                                                                  (forced only)
 *   both on 128x32x32, m64n32 products, where the (turned) product is at most 32 wide
 *   (kNarrowerCols): 8 stages (3xTF32), 9 (TF32); on 128x48x32, m64n48 products, where it is
 *   33 to 48 wide (kNarrowCols): 6 stages (3xTF32), 8 (TF32)
 *
 * What it adds over rung 8 (mma3xtf32): Hopper's warpgroup product (wgmma) fed by the TMA,
 * with the operands where the caller keeps them wherever the hardware allows.
 *   A            wgmma reads TF32 operands from shared memory only K-major, but takes A from
 *                registers in any layout.  One thread of the producer warpgroup copies op(A)
 *                as the caller stores it (cp.async.bulk.tensor, tma.cuh): k-contiguous in
 *                boxes of 32 k x 128 rows, rows-contiguous in four boxes of 32 rows x 32 k,
 *                both with the 128-byte swizzle.  k-contiguous with rows off 16 bytes (odd
 *                leading dimensions, 3xTF32 forms), it reads op(A) all the same as 4 classes of
 *                rows r % 4, whose rows are 16-byte multiples apart (kClassesKMajor,
 *                class_maps): plain boxes of 36 x BM / 4, each row's 32 k from float 0-3 on;
 *                the consumers take slots class by class and the stores put each slot in its
 *                row (tile_row).  Against the producer warpgroup's copies (H200, one call,
 *                bench/results/mid/classes/): 0.71-0.86x the time on thin calls with long k
 *                (2305x44x24409 139 -> 119 us; the same call with k even, read in one box, 100
 *                us), 0.86-0.97x on medium ones, 0.89-0.94x on large (4097^3 against its packed
 *                panel); 0.967 on the 58 calls of a fresh seed that ran a 3xTF32 form.  Where
 *                the TMA reads it in neither way (contiguous along m with its columns off 16
 *                bytes, or a batch stride off 16 bytes), the whole producer warpgroup copies it
 *                into the TMA's layout with 4-byte cp.async (ACopy; 3xTF32 forms), or in the
 *                128x128 form, k-contiguous, with 16-byte cp.async of the aligned chunks around
 *                each row's 32 k into lines of 36 floats; each consumer thread reads its
 *                fragment (wgmma_tf32.cuh) from the stage, conflict-free or two to a bank, and
 *                splits it into TF32 parts (tc_common.cuh's split_tf32, 3xTF32) or rounds it to
 *                nearest (TF32 mode) on the way (AFeed).  The tensor core reads A's registers
 *                until the product is waited for, so they come in two sets that take turns.
 *   B            3xTF32: a pre-pass kernel (split_into_planes) writes op(B)'s big and small
 *                TF32 parts as k-contiguous planes in the handle's workspace, O(n k) against
 *                the product's O(m n k).  TF32 mode: read in place, k-contiguous; the tensor
 *                core truncates it to TF32 (rounding it in shared memory cost a third of the
 *                speed: the shared memory's bandwidth is what the products need).
 *   feeds        choose_feed: the product is turned (C^T = op(B)^T op(A)^T) where that lets
 *                op(B) go through registers instead; where the TMA can read neither operand
 *                (strides or starts off 16 bytes), or only the shorter side's of a C twice as
 *                long as wide, the 3xTF32 forms read the one in A's place by classes or copy it
 *                themselves, and TF32 mode sends both through planes.  A product at least
 *                kPackMinCols wide (by classes: with k under kClassesPackBelowK too) has that
 *                operand packed into an aligned panel by a pre-pass (pack_lines) instead, and
 *                the TMA reads the panel: 4097^3 in 1.35 ms against 1.46-1.52 with the
 *                producer's copies, 8191x8191x2049 0.88-0.91x, 3001x2999x1999 0.87-0.95x the
 *                time (H100, bench/results/packed/).
 *   pipeline     a ring of 4 stages (3 when A too is in planes), each with a "full" mbarrier
 *                (expect-tx: the stage's bytes) and an "empty" one (a lane of each of the 8
 *                consumer warps; every consumer thread where they read A from the stage
 *                themselves); a warpgroup hands a stage back once the next tile's products
 *                are issued and the stage's own are done (wgmma_wait<1>), so the tensor core
 *                does not drain between tiles except where a partial sum is promoted.  The
 *                producer warpgroup gives its registers to the consumers (setmaxnreg 40 / 232).
 *   epilogue     from the accumulators (the staged tile where C's rows are off 32 bytes:
 *                Consumer::store); where a warpgroup's 64 rows lie inside C and beta == 0,
 *                a multiply and a store at a fixed offset an output (store_inside), against
 *                some 30 instructions with the tests of bounds and beta: on an H200 0.58x the
 *                time at TF32 8192x8192x256, 0.48x at 8192x8192x64, 0.96x at 8192^3, 3xTF32
 *                0.91x at 8192^3 (bench/results/tensor/lean-epilogue/).
 *   structure    as CUTLASS's sm90 collectives: produce (the producer warpgroup's loop of loads),
 *                Consumer::consume (the wgmma loop, promotion, stages handed back) and
 *                Consumer::store (the epilogue) over a Ring (the stages and their full and empty
 *                barriers); the producer walks the ring with a PipelineState (a tile's stage
 *                and phase), the consumers compute the same from the tile's index.  Against
 *                the one-function kernel in one H100 call: 1.001x the time over 64 entries
 *                (bench/results/rung9-structure/); the same SASS in 24 of 27 forms.
 *   schedule     a block a tile of C, in grouped order (grouped_tile<8>).  Persistent blocks
 *                (one a multiprocessor, the ring running on from tile to tile so that loads
 *                overlap the stores) measured slower: 112 against 117 TFLOP/s (3xTF32,
 *                16384^3 NT/TN/TT), 206 against 216 (TF32, 4097^3, planes), 3df41ad; the
 *                hardware's own block scheduling balances the multiprocessors better.
 *                Persistent ping-pong blocks (TF32: two consumer warpgroups taking 64x256
 *                tiles in turn, one storing while the other multiplies) were 1.05-1.3x the
 *                time at short k and 1.27x at 8192^3 (H200, bench/results/tensor/pingpong/,
 *                with the epilogue as it was before store_inside).
 *   launches     after a pass of its own (planes, a panel) the product is launched dependently
 *                (dependent_launch.cuh) and waits in wait_for_prior_grids for the pass's
 *                writes; its consumers let split-K's reduction be launched once their products
 *                are done.  H200: split calls 0.93-0.98 of their time, unsplit 0.96-1.0
 *                (bench/results/launch/).
 *   products     per 8 of k: small(A) big(B), big(A) small(B), then big(A) big(B), small
 *                ones first (TF32 mode: A B only)
 *   promotion    3xTF32: every PROMOTE tiles of 32 (k = 32, as rung 8) the tensor core starts
 *                a fresh partial sum and the finished one is added into FP32 registers: the
 *                accuracy contract of the fp32 mode (RMS error no worse than the FFMA rungs'
 *                from k = 256).  The forms at most 64 wide keep two sets of partial sums that
 *                tiles take in turn, so that one tile's products run while the last one's are
 *                promoted (Config::kPartialSets; 0.90-0.97 of the time, H200); the 64x128
 *                block alone on its SM covers its columns as two units of 64 that take turns
 *                the same way (Config::kUnitsInTurn; 0.84-0.99).  TF32 mode accumulates all
 *                of k in the tensor core, as cuBLAS's TF32 kernels do.
 *   block tile   BM = 128 (2 consumer warpgroups of 64 rows) x BN x 32, 384 threads.  BN = 128
 *                for 3xTF32: 64 partial sums + 64 FP32 sums a thread per 64 x 128, so 64 x 256
 *                a warpgroup does not fit with promotion; BN = 256 in TF32 mode (128
 *                accumulators a thread).  The _64x128 forms have one consumer warpgroup (BM =
 *                64, 256 threads, one block an SM): a product of about 1024^2 outputs has
 *                128 tiles for 132 SMs where 128x128 gives it 64, at half a block's tensor
 *                rate.  tma_wgmma3xtf32_64x128 runs two blocks an SM (2 stages each) where
 *                that takes under two thirds of the waves (two_blocks_pay): one warpgroup
 *                leaves the tensor core idle while it promotes, splits A and waits for a
 *                stage, and the other block's fills those gaps (H200: 0.81 of the time on
 *                such calls of two fresh seeds, bench/results/mid/two-blocks/).  The 128x64
 *                forms run a product at most 32 wide on 128x32 blocks (m64n32 products): a
 *                128x64 block spent half its tensor work on columns past n.  H200, against
 *                the 128x64 block in one call (bench/results/thin-h200/narrow/): 0.83-0.91 of
 *                the time on thin calls with long k (7500x28x6591 row TN at 2 slices 84 -> 75
 *                us, 24x9000x9000 column-major 135 -> 117 us), 3xTF32 and TF32 alike; 33
 *                to 48 wide on 128x48 blocks: 0.964 of the time over 40 entries
 *                (bench/results/thin-h200/narrow48/; 4874x46x16297 0.87, two long-k calls 1.02)
 *   shared       4 stages x 48 KiB (A 16 KiB, B 32 KiB: big and small parts of 128, or 256
 *                rows) = 192 KiB; with A in planes 3 x 64 KiB; with A copied along k in lines
 *                of 36 floats 4 x 50 KiB; plus the barriers.  Two blocks an SM: 96 KiB of
 *                stages each
 *   registers    168 a thread at entry (__launch_bounds__(384, 1)), then 232 for the consumers;
 *                two blocks an SM: 128, then 40 / 216; no spills (ptxas -v, nvcc 13.0)
 *   workspace    the planes of one chunk of k: n (and m, with A in planes) x kc x parts floats
 *                (per batch item that does not share its operand), kc chosen so that they fit
 *                kPlaneBudget (1 GiB), a multiple of 32.  A product whose k needs several
 *                chunks runs chunk after chunk, each adding its alpha * partial product into C
 *                (beta on the first), so every chunk boundary is one more FP32 rounding of C,
 *                like a promotion.  The backend keeps the workspace on the handle (its rung
 *                slot), grown on demand; TF32 mode in place needs none.
 * Special values: the split makes values under 2^-100 NaN (tf32_big), so no small part is
 *   subnormal and needs no scaling (the tensor core flushes subnormals); Inf, NaN and values
 *   whose big part overflows also make the tensor-core sum non-finite, and such outputs are
 *   recomputed by an FP32 FMA dot product (store_tc_result), as on rung 8.  TF32 mode in
 *   place reads FP32 subnormal inputs as zero, as the tensor core does.
 * Edges: the TMA fills box elements past m, n or k with zeros; stores are guarded; beta == 0
 *   never reads C.  Any m, n, k, strides, alignment.
 * Constraints: compute capability 9.0 and a build with sm_90a code; device workspace (the
 *   registry's workspace_bytes / launch_with_workspace).
 * Benchmark:   scripts/device_tensor.sh (the GPU tests, verify, racecheck and synccheck of the
 *              tensor-core rungs, the squares in every transpose against cuBLAS, TF32
 *              rounding against cuBLAS's)
 * Measured:    H100, against cuBLAS in the same run (3df41ad, device_tensor.sh; these kernels
 *              were its "_grid" rungs): tma_wgmma3xtf32 117-130 TFLOP/s at 4096^3 and 8192^3
 *              (2.26-2.52x SGEMM over the four transposes), 117-118 at 16384^3 (2.17-2.31x),
 *              98 at 4097^3 (2.11-2.33x; its strides sent it through planes; with A packed
 *              into a panel, 102 at 6881100, 2.29x).  A through
 *              registers gained 5-8% on planes of both (122 against 115 at 4096^3 NN, 12e8aa8).
 *              tma_wgmmatf32 343-385 TFLOP/s at 4096^3 and 8192^3 (0.83-0.95x FAST_TF32 where
 *              op(A) or op(B) is read in place; TN, both through planes, 282-356, 1.08-1.32x of
 *              cuBLAS's slower TN), 350-358 at 16384^3 (0.98-1.02x), 216 at 4097^3 (1.86x).
 *              RMS error on uniform data 4.7e-6 against cuBLAS's 2.7e-6 at 16384^3 (B
 *              truncated).  racecheck and synccheck clean on 4 shapes reaching every feed.
 *              tma_wgmmatf32_128x128 (14e308e, scripts/device_mid.sh, bench/results/mid/):
 *              0.67x FAST_TF32 at 1024^3 (tma_wgmmatf32 0.51x), 0.74x at 1000^3 (0.56x),
 *              0.63x at 2048^3 (0.89x), 0.40x at 8192x8192x256 (0.49x); on medium products
 *              1.1-2.2x cuBLAS's SGEMM where tma_wgmmatf32 has too few tiles; racecheck and
 *              synccheck clean.
 *              tma_wgmmatf32_64x128 and tma_wgmma3xtf32_64x128 (H100, dde5fb2 with them,
 *              bench/results/mid/h100-2026-11-26-64x128-*.json, beside the other forms and
 *              cuBLAS in one run): TF32 1024^3 0.0199 ms (0.89x FAST_TF32; 128x128 0.0270,
 *              0.66x), 1000^3 0.93x (0.75x), 768x768x8192 TN 0.0963 ms (the best form before
 *              0.1150), 82x4580x8903 0.204 ms (0.238); 3xTF32 1024^3 0.0396 ms (1.59x SGEMM;
 *              128x128 0.0482), 2186x408x3505 0.128 ms (1.25x; 0.151).  From 1536^3 up, and
 *              at 8192x8192x256, the larger blocks are faster.  GPU tests, verify, racecheck
 *              and synccheck clean.  The 3xTF32 form's corpus rows (57818ef, its 545 cases
 *              with k >= 256): fastest entry of the fp32 mode on 32 of them (by 1.11x); in
 *              auto, the held-out calls' planned time falls 0.3% (plan_regret).
 *              tma_wgmma3xtf32_128x64 (H100, bench/results/mid/, SET=thin device_mid.sh):
 *              2.28x SGEMM at 16384x64x16384 (128x128 1.75x), 1.44x at 16384x32x16384; with
 *              the copies of A (349d1d7), thin products with long k whose leading dimensions
 *              the TMA cannot read went from planes of both operands to 1.0-2.0x cuBLAS
 *              (30853x47x14790 NT 0.85x -> 2.02x, 3998x59x12991 TT 0.72x -> 1.27x).  GPU tests,
 *              verify, racecheck and synccheck clean on the three 3xTF32 forms.
 * Not done:    two consumer warpgroups side by side along n on 64 rows (m64n64 products, 384
 *              threads): 1.08x the time of the one-warpgroup 64x128 form (H200, 134 mid-size
 *              calls, bench/results/mid/two-blocks/); TF32's 64x128 form two blocks an SM:
 *              1.015x, so it keeps one.
 *              Two partial sums taking turns would promote without draining the tensor core,
 *              but ptxas then serializes every wgmma (C7514: a non-wgmma instruction reads
 *              accumulators before the pipeline's wait_group 0), so each promotion drains.
 *              At short k (bench/results/tensor/short-k/, H100): the 64x128 forms with two
 *              blocks an SM ran no faster than the larger forms; stores from registers by
 *              8-byte pairs made the 3xTF32 forms up to 1.45x faster at k <= 128 but the TF32
 *              128x256 form 1.24-2.08x slower (its main loop rescheduled, as with the staged
 *              epilogue).  ncu at 8192x8192x64: 12 warps an SM, no warp eligible 67% of the
 *              cycles.
 */
#include <float.h>
#include <stdint.h>

#include <algorithm>

#include "async_copy.cuh"
#include "common.cuh"
#include "dependent_launch.cuh"
#include "named_barrier.cuh"
#include "tc_common.cuh"
#include "tma.cuh"
#include "wgmma_tf32.cuh"

namespace {

constexpr int kWarpgroup = 128;
/* A consumer warpgroup a 64 rows of the block tile: BM = 128 (two of them) or 64 (one), the
 * producer warpgroup first. */
template <int BM>
constexpr int kThreads = kWarpgroup * (1 + BM / 64);
/* 128 x 40 + 256 x 232 = 64512, what __launch_bounds__(384, 1) gives the block (168 a
 * thread): the consumers hold up to 128 accumulators a thread, the producer thread only loop
 * counters.  With BM = 64 the block's 256 threads have registers to spare. */
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
/* Two blocks an SM (BLOCKS = 2, BM = 64: 2 x 256 threads) have 32768 registers each, 128 a
 * thread: 128 x 40 + 128 x 216. */
template <int BLOCKS>
constexpr int kConsumerRegistersOf = BLOCKS == 1 ? kConsumerRegisters : 216;
/* Bytes of planes a chunk of k may take.  The emulated tests build with a small budget, so
 * that their shapes run in several chunks. */
#ifndef TG_PLANE_BUDGET
#define TG_PLANE_BUDGET (size_t(1) << 30)
#endif
constexpr size_t kPlaneBudget = TG_PLANE_BUDGET;
/* Shared memory for the ring of stages. */
constexpr size_t kStageRing = 192 * 1024;
/* ... and for each of two blocks an SM, of the 227 KiB (less 1 KiB a block the system keeps) */
template <int BLOCKS>
constexpr size_t kStageRingOf = BLOCKS == 1 ? kStageRing : 96 * 1024;

/* ---- the pre-pass ----------------------------------------------------------------------- */

/* How the pre-pass reads an operand: a float4 a thread along whichever of r and q is
 * contiguous, where the rows (or columns) start 16 bytes apart; else a float a thread. */
enum class Read { kScalar, kVecQ, kVecR };

/* Writes the TF32 parts of the rows x k operand X(r, q) = X[r * rs + q * ks] (batch item z at
 * X + z * stride) as planes: part h of (r, q) at planes[((z * PARTS + h) * rows + r) * kp + q].
 * A block moves a 32 x 32 tile through shared memory, read along whichever of r and q is
 * contiguous and written along q, 16 bytes a thread (kp and the planes' start are multiples of
 * 4 floats), so both sides coalesce.  Memory-bound: it moves (1 + PARTS) x 4 bytes an element
 * (88 us for both 4096 x 4096 operands' two planes at 2.0 TB/s, a float a thread, a9919fd). */
template <int PARTS, Read READ>
__global__ void __launch_bounds__(256) split_into_planes(const float *X, int64_t rs, int64_t ks,
                                                         int64_t stride, int64_t rows, int64_t k,
                                                         float *planes, int64_t kp)
{
    __shared__ float tile[32][33]; /* [r][q]; the pad keeps columns off one bank */
    const float *const x = X + blockIdx.z * stride;
    float *const out = planes + blockIdx.z * PARTS * rows * kp;
    const int64_t r0 = blockIdx.x * (int64_t)32;
    const int tid = threadIdx.y * 32 + threadIdx.x; /* 32 x 8 */
    const int line = tid / 8, quad = tid % 8 * 4;   /* 32 lines of 8 float4 */
    for (int64_t q0 = blockIdx.y * (int64_t)32; q0 < k; q0 += gridDim.y * (int64_t)32) {
        if (READ == Read::kScalar) {
            for (int i = threadIdx.y; i < 32; i += 8) {
                const int rr = ks == 1 ? i : threadIdx.x, qq = ks == 1 ? threadIdx.x : i;
                const int64_t r = r0 + rr, q = q0 + qq;
                tile[rr][qq] = r < rows && q < k ? x[r * rs + q * ks] : 0.0f;
            }
        } else { /* four consecutive q (kVecQ) or r (kVecR) */
            const bool along_q = READ == Read::kVecQ;
            const int rr = along_q ? line : quad, qq = along_q ? quad : line;
            const int64_t r = r0 + rr, q = q0 + qq;
            const float *const src = x + r * rs + q * ks;
            float v[4];
            if (along_q ? r < rows && q + 3 < k : q < k && r + 3 < rows) {
                const float4 f = *reinterpret_cast<const float4 *>(src);
                v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
            } else {
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    v[i] = (along_q ? r < rows && q + i < k : q < k && r + i < rows) ? src[i]
                                                                                      : 0.0f;
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
                (along_q ? tile[rr][qq + i] : tile[rr + i][qq]) = v[i];
        }
        __syncthreads();
        const int64_t r = r0 + line, q = q0 + quad;
        if (r < rows && q < k) { /* a quad past k lands in the row's padding up to kp */
            const Split4 parts = split_tf32_4(make_float4(tile[line][quad], tile[line][quad + 1],
                                                          tile[line][quad + 2],
                                                          tile[line][quad + 3]));
            /* __stwb: a float4 assignment here compiles to four 4-byte stores (nvcc 13.0) */
            __stwb(reinterpret_cast<float4 *>(out + r * kp + q), parts.big);
            if (PARTS == 2)
                __stwb(reinterpret_cast<float4 *>(out + (rows + r) * kp + q), parts.small);
        }
        __syncthreads();
    }
    let_dependents_launch();
}

/* Copies lines of `inner` contiguous floats (line l of item z at X + z * stride + l *
 * line_stride) to an aligned panel, line l of item z at P + (z * lines + l) * ld (ld a multiple of
 * 4 floats): the operand in A's place where the TMA cannot read it and the product is wide
 * enough to pay for one more pass over it (pack_pays).  A warp a line, 4 bytes a lane, so reads
 * and writes both coalesce whatever the source's alignment. */
__global__ void __launch_bounds__(256) pack_lines(const float *X, int64_t line_stride,
                                                  int64_t stride, int64_t lines, int64_t inner,
                                                  float *P, int64_t ld)
{
    const float *const x = X + blockIdx.z * stride;
    float *const out = P + blockIdx.z * lines * ld;
    const int64_t q_stop = (blockIdx.x + 1) * (int64_t)1024;
    const int64_t q_end = q_stop < inner ? q_stop : inner;
    for (int64_t l = blockIdx.y * (int64_t)8 + threadIdx.y; l < lines; l += gridDim.y * (int64_t)8)
        for (int64_t q = blockIdx.x * (int64_t)1024 + threadIdx.x; q < q_end; q += 32)
            out[l * ld + q] = x[l * line_stride + q];
    let_dependents_launch();
}

/* ---- the main kernel -------------------------------------------------------------------- */

/* Where the consumers' wgmma takes A from:
 *   kShared            the stage in shared memory (the planes: K-major, as wgmma reads TF32)
 *   kRegistersKMajor   registers, read from a K-major stage (32 k a line, like the planes)
 *   kRegistersRowsMajor registers, read from boxes of 32 rows x 32 k with the rows contiguous
 *                      (a line of the box is one k), which wgmma could not read itself
 *   kCopiedKMajor, kCopiedRowsMajor
 *                      copied by the producer warpgroup where the TMA cannot read A (a stride
 *                      or the start off 16 bytes: odd leading dimensions), instead of planes
 *                      written and read by a pre-pass: the TMA's layouts, or for the 128x128
 *                      form's k lines shifted lines of 36 floats, each row's 32 k from float
 *                      0-3 on (ACopy, a_shifted_lines)
 *   kClassesKMajor     registers, A contiguous along k where its rows are off 16 bytes, read by
 *                      the TMA all the same: rows 4 apart are 16 l bytes apart (l the leading
 *                      dimension), so each class of rows r % 4 is a tensor of its own, from its
 *                      first row's start rounded down to 16 bytes (class_maps).  A stage holds
 *                      the 4 classes' boxes of BM / 4 lines of 36 floats, each line its row's
 *                      32 k from float `shift` on (shift: the row's start past 16 bytes, one a
 *                      class); the consumers' slot s is row 4 (s % (BM / 4)) + s / (BM / 4) of
 *                      the tile (tile_row), so a warp's 16 slots are one class and its reads
 *                      fall on 32 banks, and the stores put each slot's outputs in its row
 * Through registers A is rounded to nearest TF32 on the way (the tensor core itself would
 * truncate it). */
enum class AFeed {
    kShared,
    kRegistersKMajor,
    kRegistersRowsMajor,
    kCopiedKMajor,
    kCopiedRowsMajor,
    kClassesKMajor
};

/* Whether the stage holds A as lines along k (32 k, or 36 floats in shifted lines; else boxes
 * of 32 rows x 32 k), and whether the producer warpgroup copies it (else the TMA). */
__host__ __device__ constexpr bool a_k_lines(AFeed a)
{
    return a == AFeed::kShared || a == AFeed::kRegistersKMajor || a == AFeed::kCopiedKMajor ||
           a == AFeed::kClassesKMajor;
}
__host__ __device__ constexpr bool a_copied(AFeed a)
{
    return a == AFeed::kCopiedKMajor || a == AFeed::kCopiedRowsMajor;
}

/* Whether a form's stage holds A contiguous along k as shifted lines of 36 floats: every form
 * fed by classes (kClassesKMajor), and where the producer copies A (ACopy<BM,
 * AFeed::kCopiedKMajor, true>) rather than 4 bytes at a time into the TMA's layout the 128x128
 * block, where it took 0.96-0.98 of the time; the one-warpgroup forms and 128x64 took
 * 1.02-1.07 (H200, bench/results/mid/shifted-lines/): their consumers' reads of the shifted
 * lines fall two to a bank (rows in order, each with its own shift; by classes a warp's rows
 * share one), and the copies' issue slots were not what bound them. */
__host__ __device__ constexpr bool a_shifted_lines(int bm, int bn, AFeed a)
{
    return (a == AFeed::kCopiedKMajor && bm == 128 && bn == 128) || a == AFeed::kClassesKMajor;
}

/* The tile row of the consumers' slot s of A (kClassesKMajor: class s / (BM / 4), its line s %
 * (BM / 4)); the slot itself in the other feeds. */
template <int BM, AFeed A_FEED>
__host__ __device__ constexpr int tile_row(int s)
{
    return A_FEED == AFeed::kClassesKMajor ? 4 * (s % (BM / 4)) + s / (BM / 4) : s;
}

/* Floats a stage holds of each row of A: 32 k, or 36 in shifted lines (the line's 32 k start
 * 0 to 3 floats in). */
__host__ __device__ constexpr int a_line_floats(int bm, int bn, AFeed a)
{
    return a_shifted_lines(bm, bn, a) ? kBK + 4 : kBK;
}

/* The ring where A's stage lines are 36 floats: 204 KiB for one block an SM, so that it keeps
 * its 4 stages (of 50 KiB). */
template <int BLOCKS, int BM, int BN, AFeed A_FEED>
constexpr size_t kStageRingFor =
    BLOCKS == 1 && a_shifted_lines(BM, BN, A_FEED) ? 204 * 1024 : kStageRingOf<BLOCKS>;

/* The producer warpgroup's copy of A's box of each stage (BM rows x 32 k from row i0), in the
 * layout the TMA would give it, where the TMA cannot read A.  A warp copies lines of 32 floats,
 * a thread 4 bytes of each, so the reads coalesce along A's contiguous side whatever its
 * alignment.  Thread (warp w, lane l) takes the lines w + 4i: k lines, row w + 4i at k0 + l
 * (A k-contiguous); boxes of rows, box b = i / 8 at k0 + w + 4j (j = i % 8), row 32 b + l (A
 * rows-contiguous).  Its addresses are set once a block and stepped, and its lines' swizzle
 * takes two forms (the line's index mod 8 is w or w + 4), so a copy is about three
 * instructions: the producer's issue slots are the consumers' too.  Elements past m or k, in
 * the edge tiles only, are zeros.  (The 128x128 form copies A contiguous along k as shifted
 * lines instead: ACopy<BM, AFeed::kCopiedKMajor, true> below.) */
template <int BM, AFeed A_FEED, bool SHIFTED_LINES = false>
struct ACopy {
    static constexpr bool kKLines = a_k_lines(A_FEED);
    const float *a, *first; /* the matrix (item), this thread's first element at k = 0 */
    int64_t step, k_stride; /* between its lines 4 apart (4 rows, or 4 k); A's k stride */
    int64_t k;
    int rows_in, w, lane, swizzle[2]; /* rows of the tile within m; the two swizzle forms */

    __device__ __forceinline__ ACopy(const float *a_item, const tg_problem &p, int i0, int tid)
        : a(a_item), k_stride(p.a_cs), k(p.k), rows_in(p.m - i0 < BM ? (int)(p.m - i0) : BM),
          w(tid / 32), lane(tid % 32)
    {
        first = kKLines ? a + (int64_t)(i0 + w) * p.a_rs + lane
                        : a + (int64_t)(i0 + lane) * p.a_rs + w * p.a_cs;
        step = 4 * (kKLines ? p.a_rs : p.a_cs);
        for (int h = 0; h < 2; ++h)
            swizzle[h] = 32 * w + ((((lane >> 2) ^ (w + 4 * h)) & 7) << 2) + (lane & 3);
    }

    /* the stage's box at k0: line (b, j) of the boxes of rows is line 8 b + j; the guards in
     * a loop of their own, as predicated copies would cost their issue slots everywhere */
    __device__ __forceinline__ void operator()(float *stage, int64_t k0) const
    {
        if (rows_in == BM && k0 + kBK <= k)
            lines<false>(stage, k0, kBK);
        else
            lines<true>(stage, k0, k - k0 < kBK ? (int)(k - k0) : kBK);
    }

    /* k_in: the tile's k inside the matrix.  In the boxes of rows the guards are 32-bit tests,
     * a line's k against k_in once a line and a row against rows_in: with the 64-bit sum k0 +
     * (its k) < k at each copy, ptxas branched around every copy (some 25 instructions a copy,
     * against 6 for k lines), and a tile at the edge of m took twice as long as the others;
     * 0.53-0.95 of the time on such calls (H200, bench/results/thin-h200/copied-guards/).  The
     * same tests on k lines cost them 2-7%, so they keep theirs. */
    template <bool GUARDED>
    __device__ __forceinline__ void lines(float *stage, int64_t k0, int k_in) const
    {
        constexpr int kBoxes = kKLines ? 1 : BM / 32, kSteps = kKLines ? BM / 4 : 8;
        const float *src = first + k0 * (kKLines ? 1 : k_stride);
#pragma unroll
        for (int j = 0; j < kSteps; ++j, src += step) {
            const bool k_line_in = w + 4 * j < k_in; /* boxes of rows: this line's k */
#pragma unroll
            for (int b = 0; b < kBoxes; ++b) {
                float *const dst = stage + 1024 * b + 128 * j + swizzle[j & 1];
                const float *const from = src + 32 * b; /* boxes of rows: 32 rows on */
                const bool in = !GUARDED ||
                                (kKLines ? w + 4 * j < rows_in && k0 + lane < k
                                         : k_line_in && 32 * b + lane < rows_in);
                copy_async_4_zfill(dst, in ? from : a, in);
            }
        }
    }
};

/* Floats from a line's start to its row's first k (shifted lines; class_maps's shift). */
__host__ __device__ __forceinline__ int a_shift(const float *row_start)
{
    return (int)((uintptr_t)row_start / sizeof(float) % 4);
}

/* The producer's copy of A contiguous along k where the TMA cannot read it (odd leading
 * dimensions): 16-byte copies, a row's 32 k of the stage as the 9 aligned chunks around them,
 * so that a line of 36 floats holds them from float `shift` on, shift being how far the row's
 * start lies past 16 bytes (the same for every tile: k0 is a multiple of 32).  A warp copies 3
 * rows a round (lanes 0-26: 9 chunks each), 12 rows a round for the 4 warps; rows 12 apart
 * have the same shift.  Against 4-byte copies of the swizzled lines: 9 copies a thread a tile
 * for 32, each 16 bytes.  The consumers read (row, k) at row * 36 + shift + k (a_shift).
 * Guarded tiles (the edge of m, the last k): a chunk's floats past k, and rows past m, are
 * zeros; the floats before k0 of a chunk are A's own (the row's earlier k, or the row before),
 * except at the start of the matrix itself, copied 4 bytes at a time there. */
template <int BM>
struct ACopy<BM, AFeed::kCopiedKMajor, true> {
    static constexpr int kLine = kBK + 4, kChunks = kLine / 4;
    static constexpr int kRowsPerWarp = 32 / kChunks, kRowsPerRound = 4 * kRowsPerWarp;
    static constexpr int kRounds = (BM + kRowsPerRound - 1) / kRowsPerRound;
    const float *a;          /* the matrix (item) rounded down to 16 bytes */
    const float *first;      /* this thread's chunk of its first row at k = 0 */
    int64_t round_step, k;   /* kRowsPerRound rows of A; A's k */
    int row, at, shift, rows_in; /* its first row in the tile, and that row's chunk in its line */
    bool active, last_round; /* a lane with a chunk; and a row in the last round */
    bool matrix_start;       /* its chunk of row 0 starts the matrix itself, shifted */

    __device__ __forceinline__ ACopy(const float *a_item, const tg_problem &p, int i0, int tid)
        : a(reinterpret_cast<const float *>((uintptr_t)a_item / 16 * 16)),
          round_step(kRowsPerRound * p.a_rs), k(p.k),
          row(kRowsPerWarp * (tid / 32) + tid % 32 / kChunks),
          rows_in(p.m - i0 < BM ? (int)(p.m - i0) : BM),
          active(tid % 32 < kRowsPerWarp * kChunks)
    {
        const int chunk = tid % 32 % kChunks;
        const float *const row_start = a_item + (int64_t)(i0 + row) * p.a_rs;
        shift = a_shift(row_start);
        first = row_start - shift + 4 * chunk;
        at = row * kLine + 4 * chunk;
        last_round = active && row + kRowsPerRound * (kRounds - 1) < BM;
        matrix_start = active && a_item == p.A && i0 + row == 0 && shift > 0 && chunk == 0;
    }

    __device__ __forceinline__ void operator()(float *stage, int64_t k0) const
    {
        if (!active)
            return;
        if (rows_in == BM && k0 + kLine <= k && !(matrix_start && k0 == 0))
            lines<false>(stage, k0);
        else
            lines<true>(stage, k0);
    }

    template <bool GUARDED>
    __device__ __forceinline__ void lines(float *stage, int64_t k0) const
    {
        const float *src = first + k0;
        float *const dst = stage + at;
        /* the floats of the chunk inside k (clamped: 4 at most count) */
        const int k_left = k - k0 < kLine ? (int)(k - k0) : kLine;
        const int chunk_in = k_left - at % kLine + shift;
        const int in = chunk_in < 0 ? 0 : chunk_in < 4 ? chunk_in : 4;
        const bool head = GUARDED && matrix_start && k0 == 0;
#pragma unroll
        for (int i = 0; i < kRounds; ++i, src += round_step) {
            if (i == kRounds - 1 && !last_round)
                break;
            float *const d = dst + i * kRowsPerRound * kLine;
            if (!GUARDED) {
                copy_async_16_zfill_partial(d, src, 4);
                continue;
            }
            const bool row_in = row + kRowsPerRound * i < rows_in;
            if (i == 0 && head) { /* nothing of the matrix precedes it */
                for (int f = shift; f < 4; ++f)
                    copy_async_4_zfill(d + f, src + f, row_in && f - shift < k_left);
                continue;
            }
            const int row_floats = row_in ? in : 0;
            copy_async_16_zfill_partial(d, row_floats > 0 ? src : a, row_floats);
        }
    }
};

/* Floats of one stage: A's parts (one, FP32, where A goes through registers), then B's. */
__host__ __device__ constexpr int stage_floats(int bm, int bn, bool split, AFeed a)
{
    return (a == AFeed::kShared && split ? 2 : 1) * bm * a_line_floats(bm, bn, a) +
           (split ? 2 : 1) * bn * kBK;
}

/* The tensor core's accumulators of one consumer thread (UNITS products of 64 x UNIT a
 * warpgroup, UNIT / 2 floats each) and, with promotion, the FP32 sums they are promoted into;
 * SETS sets of partial sums that tiles take in turn (Config::kPartialSets).  Without promotion
 * (PROMOTE = 0, TF32 mode) the tensor core accumulates the whole k and the sums are the
 * accumulators themselves: no second array, so 64 x 256 a warpgroup fits in registers. */
template <int UNITS, int UNIT, int PROMOTE, int SETS>
struct Accumulators {
    using Part = float[UNITS][UNIT / 2];
    Part parts[SETS];
    float sum[UNITS][UNIT / 2];
    __device__ __forceinline__ Part &part(int set) { return parts[set]; }
    __device__ __forceinline__ float (&result(int h))[UNIT / 2] { return sum[h]; }
};
template <int UNITS, int UNIT, int SETS>
struct Accumulators<UNITS, UNIT, 0, SETS> {
    using Part = float[UNITS][UNIT / 2];
    Part parts;
    __device__ __forceinline__ Part &part(int) { return parts; }
    __device__ __forceinline__ float (&result(int h))[UNIT / 2] { return parts[h]; }
};

/* The compile-time facts of one form of the kernel: its template arguments and what follows
 * from them, for the ring, the producer and the consumers alike. */
template <int BM, int BN, int STAGES, int PROMOTE, bool SPLIT, AFeed A_FEED, int BLOCKS>
struct Config {
    static constexpr int kBM = BM, kStages = STAGES, kPromote = PROMOTE;
    static constexpr bool kSplit = SPLIT;
    static constexpr AFeed kAFeed = A_FEED;
    static constexpr bool kARegisters = A_FEED != AFeed::kShared;
    static constexpr bool kACopied = a_copied(A_FEED);
    static constexpr int kParts = SPLIT ? 2 : 1;
    /* A through registers: FP32, split there */
    static constexpr int kPartsA = kARegisters ? 1 : kParts;
    /* Promoting every tile, the 64 x 128 3xTF32 block alone on its SM covers its 128 columns
     * in two units of 64 that take turns: one unit's products run while the other's are
     * promoted (the tensor core never drains between them), in the registers of one 64 x 128
     * partial sum.  H200, against one unit in one call (bench/results/mid/units-in-turn/):
     * 0.84-0.94 of the time at one block an SM; but 1.03-1.20 where a second warpgroup on the
     * SM fills the drains anyway (two blocks an SM, or the 128 x 128 block: m64n64 products
     * cost more than m64n128), and not with A in boxes of rows, as kPartialSets below. */
    static constexpr bool kUnitsInTurn =
        PROMOTE == 1 && BM == 64 && BN == 128 && BLOCKS == 1 && a_k_lines(A_FEED);
    static constexpr int kUnit = kUnitsInTurn ? 64 : BN < 128 ? BN : 128; /* a wgmma's width */
    static constexpr int kUnits = BN / kUnit;          /* m64 x kUnit products a warpgroup covers */
    /* The 128x256 TF32 block stores C from its registers whatever C's alignment (store) */
    static constexpr bool kStoresFromRegisters = BN == 256;
    /* Promoting every tile, a warpgroup of one set of partial sums waits for its products to
     * drain each tile before it adds them into the FP32 sums and issues the next tile's.  With
     * two sets the tiles take turns: tile t's products run while tile t - 1's are promoted and
     * the next tile's A is split, the same adds in the same order.  The blocks at most 64
     * wide have the registers for it (64 x 128: 64 more a thread would pass the 232).  H200,
     * against one set in one call (bench/results/thin-h200/two-sets/): 0.90-0.96 of the time
     * with A along k and on the 32-wide block, but 1.01-1.07 on the 64-wide block with A in
     * boxes of rows (its fragment reads two to a bank), which keeps one set.  The 48-wide
     * block was timed with two sets only (thin-h200/narrow48/). */
    static constexpr int kPartialSets =
        PROMOTE == 1 && (BN <= 48 || (BN == 64 && a_k_lines(A_FEED))) ? 2 : 1;
    static constexpr bool kShiftedLines = a_shifted_lines(BM, BN, A_FEED);
    static constexpr int kALine = a_line_floats(BM, BN, A_FEED); /* floats of a row of A's box */
    static constexpr int kBoxA = BM * kALine, kBoxB = BN * kBK; /* floats of one part's box */
    static constexpr int kStage = stage_floats(BM, BN, SPLIT, A_FEED);
    static constexpr int kConsumerWarps = BM / 64 * 4;
    /* The arrivals that hand a stage back: every consumer thread's where the consumers read A
     * from the stage themselves, so that each thread's reads come before its own release
     * (racecheck finds one lane's arrival for its warp unordered with the other lanes' reads);
     * else a lane of each warp, the tensor core's reads being done once waited for. */
    static constexpr int kReleasers = kARegisters ? kConsumerWarps * 32 : kConsumerWarps;
    static_assert(BM == 64 || BM == 128, "one or two consumer warpgroups of 64 rows");
    static_assert(kStage == kPartsA * kBoxA + kParts * kBoxB, "A's parts, then B's");
    static_assert(BN == 32 || BN == 48 || BN == 64 || BN == 128 || BN == 256,
                  "a warpgroup covers 64 x 32, 64 x 48, 64 x 64, 64 x 128 or 64 x 256 of C");
    static_assert(STAGES >= 2 && PROMOTE >= 0, "a ring of two stages at least");
    static_assert(PROMOTE == 0 || kUnits == 1 || kUnitsInTurn,
                  "with promotion a thread holds 64 partial sums and 64 FP32 sums per 64 x 128 "
                  "product: 64 x 256 a warpgroup would need 256 registers");
};

/* A's tensor maps, a kernel parameter: the one of its feed, or (kClassesKMajor) one for each
 * class of rows r % 4 (class_maps). */
struct AMaps {
    CUtensorMap m[4];
};

/* Where the producer is in the ring: its next k tile, in stage tile % STAGES, whose barriers
 * are in round tile / STAGES, of parity phase() (as CUTLASS's PipelineState).  The state is
 * the tile's index, from which the stage and the phase are derived, not a stage counter that
 * wraps: the loop needs the index anyway (k0), and wrapping counters (here and in the
 * consumers) changed the SASS of 25 of the 27 forms (nvcc 13.0, -19 to +29 instructions). */
template <int STAGES>
struct PipelineState {
    int64_t tile = 0;

    __device__ __forceinline__ int stage() const { return (int)(tile % STAGES); }
    __device__ __forceinline__ uint32_t phase() const { return (uint32_t)(tile / STAGES) & 1u; }
    __device__ __forceinline__ void advance() { ++tile; }
};

/* The ring of stages in shared memory and its barriers: full[s] completes when stage s has
 * landed (expect-tx: the TMA's bytes; plus an arrival of each copying thread where the
 * producer copies A), empty[s] when the consumers have handed the stage back (kReleasers). */
template <class Cfg>
struct Ring {
    float *stages;
    uint64_t *full, *empty;

    __device__ __forceinline__ explicit Ring(float *smem)
        : stages(align_shared_1024(smem)), /* each box 1024-byte aligned */
          full(reinterpret_cast<uint64_t *>(stages + Cfg::kStages * Cfg::kStage)),
          empty(full + Cfg::kStages)
    {
    }

    /* by one thread, before the block's __syncthreads() */
    __device__ __forceinline__ void init() const
    {
        for (int s = 0; s < Cfg::kStages; ++s) {
            /* the producer's arrive.expect_tx, and the copying threads' arrivals */
            mbarrier_init(&full[s], Cfg::kACopied ? 1 + kWarpgroup : 1);
            mbarrier_init(&empty[s], Cfg::kReleasers);
        }
        fence_mbarrier_init();
    }

    __device__ __forceinline__ float *stage(int s) const { return stages + s * Cfg::kStage; }
};

/* The producer warpgroup: each k tile into the next stage once the consumers have handed it
 * back.  One thread issues the TMA's copies (the others return); where the TMA cannot read A,
 * every thread copies its share of A (ACopy) and arrives on the stage's full barrier when its
 * copies have landed. */
template <class Cfg>
__device__ __forceinline__ void produce(const Ring<Cfg> &ring, const AMaps &a_maps,
                                        const CUtensorMap &b_map, const tg_problem &p, int i0,
                                        int j0, int64_t tiles, int tid)
{
    const CUtensorMap &a_map = a_maps.m[0];
    /* kClassesKMajor: the classes of rows with rows in this tile (all 4 but at the end of m);
     * an empty class's lines are left as they are, their slots' outputs never stored */
    const int classes = p.m - i0 < 4 ? (int)(p.m - i0) : 4;
    if (!Cfg::kACopied && tid != 0)
        return;
    /* Batch item z's planes; a shared operand (stride 0) has one item. */
    const int za = p.stride_a == 0 ? 0 : (int)blockIdx.z;
    const int zb = p.stride_b == 0 ? 0 : (int)blockIdx.z;
    const ACopy<Cfg::kBM, Cfg::kAFeed, Cfg::kShiftedLines> copy_a(p.A + za * p.stride_a, p, i0,
                                                                   tid);
    for (PipelineState<Cfg::kStages> state; state.tile < tiles; state.advance()) {
        const int s = state.stage();
        /* the consumers released the previous round of this stage (a fresh barrier passes
         * parity 1) */
        mbarrier_wait(&ring.empty[s], state.phase() ^ 1u);
        uint64_t *const full = &ring.full[s];
        float *const stage = ring.stage(s);
        const int k0 = (int)(state.tile * kBK);
        if (Cfg::kACopied) { /* every thread: its share of A, then its arrival when landed */
            copy_a(stage, k0);
            copy_async_arrive(full);
            if (tid != 0)
                continue;
            mbarrier_arrive_expect_tx(full, (Cfg::kStage - Cfg::kBoxA) * sizeof(float));
        } else if (Cfg::kAFeed == AFeed::kClassesKMajor) {
            mbarrier_arrive_expect_tx(
                full, (Cfg::kStage - (4 - classes) * (Cfg::kBoxA / 4)) * sizeof(float));
#pragma unroll
            for (int c = 0; c < 4; ++c)
                if (c < classes)
                    tma_load_tile(stage + c * (Cfg::kBoxA / 4), &a_maps.m[c], full, k0, i0 / 4,
                                  0, za);
        } else {
            mbarrier_arrive_expect_tx(full, Cfg::kStage * sizeof(float));
            if (Cfg::kAFeed == AFeed::kRegistersRowsMajor) /* boxes of 32 rows x 32 k */
#pragma unroll
                for (int b = 0; b < Cfg::kBM / 32; ++b)
                    tma_load_tile(stage + b * 32 * kBK, &a_map, full, i0 + 32 * b, k0, 0, za);
            else
#pragma unroll
                for (int h = 0; h < Cfg::kPartsA; ++h)
                    tma_load_tile(stage + h * Cfg::kBoxA, &a_map, full, k0, i0, h, za);
        }
#pragma unroll
        for (int h = 0; h < Cfg::kParts; ++h)
            tma_load_tile(stage + Cfg::kPartsA * Cfg::kBoxA + h * Cfg::kBoxB, &b_map, full, k0,
                          j0, h, zb);
    }
}

/* A consumer warpgroup: warpgroup `half` multiplies rows 64 half .. 64 half + 63 of the tile
 * (consume), then stores them (store).  Thread (warp w, group g, lane_t) holds the fragments
 * of wgmma_tf32.cuh.
 * The accumulators and A's two register sets are the kernel's locals, passed in, and a tile's
 * stage, phase and stage address are computed here from its index (not through Ring::stage
 * or a PipelineState): so nvcc 13.0 emits the SASS of the kernel written as one function.
 * Each of those inside consume reordered registers or address arithmetic (up to 9 more
 * instructions in a 3xTF32 form). */
template <class Cfg>
struct Consumer {
    static constexpr int kUnit = Cfg::kUnit, kUnits = Cfg::kUnits, kStages = Cfg::kStages,
                         kPromote = Cfg::kPromote;
    static constexpr int kSets = Cfg::kPartialSets;
    using Acc = Accumulators<kUnits, kUnit, kPromote, kSets>;
    using AFrag = uint32_t[kBK / 8][4];

    const Ring<Cfg> &ring;
    const int half;
    const bool releaser; /* arrives on the empty barriers (Cfg::kReleasers) */
    const int w, g, lane_t;
    int shift = 0; /* shifted lines: where this thread's rows (g, g + 8) start in theirs */

    __device__ __forceinline__ Consumer(const Ring<Cfg> &ring_, int tid)
        : ring(ring_), half((tid - kWarpgroup) / kWarpgroup),
          releaser(Cfg::kARegisters || tid % 32 == 0), w(tid / 32 % 4), g(tid % 32 / 4),
          lane_t(tid % 4)
    {
    }
    /* shifted lines: the shift of slot 64 half + 16 w + g's row of the tile at i0 of A's item
     * (its slot 8 on, 8 or 32 rows on, shares it) */
    __device__ __forceinline__ Consumer(const Ring<Cfg> &ring_, int tid, const tg_problem &p,
                                        int i0)
        : Consumer(ring_, tid)
    {
        shift = a_shift(batch_item(p).A + (int64_t)(i0 + row(64 * half + 16 * w + g)) * p.a_rs);
    }

    /* The tile row of slot s (tile_row), and the rows between slots 8 apart. */
    __device__ __forceinline__ static constexpr int row(int s)
    {
        return tile_row<Cfg::kBM, Cfg::kAFeed>(s);
    }
    static constexpr int kRows8 = row(8) - row(0);

    /* Every k tile's products into acc (its FP32 sums zero, with promotion), each stage handed
     * back once its products are done.  A's registers come in two sets that take turns: the
     * tensor core reads a tile's until its products are waited for, and up to two tiles are
     * in flight. */
    __device__ __forceinline__ void consume(Acc &acc, AFrag (&a_frags)[2],
                                            AFrag (&a_frags_small)[2], int64_t tiles) const
    {
        int64_t unreleased = -1; /* a tile whose products may still read its stage */
        if constexpr (kSets == 2 || Cfg::kUnitsInTurn) {
            /* the last tile (which waits for every product) apart from the loop, and no tile
             * taken conditionally in it, so that on every path ptxas sees which set of
             * partial sums may still be written when the other is read (else C7514: it
             * serializes the products) */
            int64_t t = 0;
            for (; t + 2 < tiles; t += 2) {
                consume_tile<kInside>(acc, unreleased, t, tiles, a_frags[0], a_frags_small[0], 0);
                consume_tile<kInside>(acc, unreleased, t + 1, tiles, a_frags[1],
                                      a_frags_small[1], kSets - 1);
            }
            if (t + 2 == tiles) {
                consume_tile<kInside>(acc, unreleased, t, tiles, a_frags[0], a_frags_small[0], 0);
                consume_tile<kFinal>(acc, unreleased, t + 1, tiles, a_frags[1], a_frags_small[1],
                                     kSets - 1);
            } else {
                consume_tile<kFinal>(acc, unreleased, t, tiles, a_frags[0], a_frags_small[0], 0);
            }
        } else {
            for (int64_t t = 0; t < tiles; t += 2) {
                consume_tile<kAnyTile>(acc, unreleased, t, tiles, a_frags[0], a_frags_small[0],
                                       0);
                if (t + 1 < tiles)
                    consume_tile<kAnyTile>(acc, unreleased, t + 1, tiles, a_frags[1],
                                           a_frags_small[1], 0);
            }
        }

        /* The last tile waited for every product; this wait, a no-op, shows the compiler that
         * no product is in flight on any path out of the loop (else it injects one, warning
         * C7517). */
        wgmma_wait<0>();
#pragma unroll
        for (int h = 0; h < kUnits; ++h)
            fence_operand(acc.result(h));
    }

    /* A partial sum, its products done and fenced, joins the FP32 sums by round-to-nearest
     * adds. */
    __device__ __forceinline__ void add_partial(Acc &acc, typename Acc::Part &part) const
    {
#pragma unroll
        for (int h = 0; h < kUnits; ++h)
#pragma unroll
            for (int i = 0; i < kUnit / 2; ++i)
                acc.result(h)[i] += part[h][i];
    }

    /* Two sets of partial sums, tile t's products issued and tile t - 1's done: tile t - 1's
     * stage goes back and its partial sum (previous) joins the FP32 sums. */
    __device__ __forceinline__ void promote_previous(Acc &acc, typename Acc::Part &previous,
                                                     int64_t unreleased, int64_t t) const
    {
#pragma unroll
        for (int h = 0; h < kUnits; ++h)
            fence_operand(previous[h]);
        if (releaser && unreleased >= 0)
            mbarrier_arrive(&ring.empty[unreleased % kStages]);
        if (t > 0)
            add_partial(acc, previous);
    }

    /* Unit h's partial sum promoted: its products done, it joins the FP32 sums. */
    __device__ __forceinline__ void promote_unit(Acc &acc, float (&unit)[kUnit / 2], int h) const
    {
        fence_operand(unit);
#pragma unroll
        for (int i = 0; i < kUnit / 2; ++i)
            acc.result(h)[i] += unit[i];
    }

    /* The products of 8 of k (slice kk) into unit h's partial sum d. */
    __device__ __forceinline__ void products(float (&d)[kUnit / 2], int h, int kk, bool accumulate,
                                             const float *a_big, const float *a_small,
                                             const float *b_big, const float *b_small,
                                             const AFrag &a_frag, const AFrag &a_frag_small) const
    {
        const uint64_t ab = smem_desc(a_big, 8 * kk);
        const uint64_t bb = smem_desc(b_big + h * kUnit * kBK, 8 * kk);
        const uint64_t bs = smem_desc(b_small + h * kUnit * kBK, 8 * kk);
        if (Cfg::kSplit && Cfg::kARegisters) { /* the small products first */
            wgmma_rs(d, a_frag_small[kk], bb, accumulate);
            wgmma_rs(d, a_frag[kk], bs, true);
        } else if (Cfg::kSplit) {
            wgmma_ss(d, smem_desc(a_small, 8 * kk), bb, accumulate);
            wgmma_ss(d, ab, bs, true);
        }
        if (Cfg::kARegisters)
            wgmma_rs(d, a_frag[kk], bb, Cfg::kSplit || accumulate);
        else
            wgmma_ss(d, ab, bb, Cfg::kSplit || accumulate);
    }

    /* Which tile consume_tile takes: one before the last, the last, or either (t + 1 ==
     * tiles tells). */
    enum Place { kInside, kFinal, kAnyTile };

    /* Tile t (stage t % STAGES, round t / STAGES): A's fragments into a_frag (and
     * a_frag_small), the tile's products issued into partial sums `set` (t % kSets), the
     * previous tile's stage handed back once its products are done; at the end of a partial
     * sum, everything waited for and the sum promoted (two sets: the previous tile's; units in
     * turn: each unit's once the other's products are issued). */
    template <Place PLACE>
    __device__ __forceinline__ void consume_tile(Acc &acc, int64_t &unreleased, int64_t t,
                                                 int64_t tiles, AFrag &a_frag,
                                                 AFrag &a_frag_small, int set) const
    {
        const int s = (int)(t % kStages);
        mbarrier_wait(&ring.full[s], (unsigned)(t / kStages) & 1u);
        const float *const stage = ring.stages + s * Cfg::kStage;
        const float *const a_big = stage + half * 64 * Cfg::kALine; /* this warpgroup's rows */
        const float *const a_small = a_big + Cfg::kBoxA;
        const float *const b_big = stage + Cfg::kPartsA * Cfg::kBoxA;
        const float *const b_small = b_big + Cfg::kBoxB;
        /* the first tile of a partial sum (of the whole sum without promotion) */
        const bool fresh = kPromote > 0 ? t % kPromote == 0 : t == 0;
        const bool final_tile = PLACE == kAnyTile ? t + 1 == tiles : PLACE == kFinal;
        const bool last = kPromote > 0 ? (t + 1) % kPromote == 0 || final_tile : final_tile;
        auto &part = acc.part(set);
        /* A in registers: the fragment of wgmma_tf32.cuh, split (3xTF32) or rounded to
         * nearest (TF32) on the way, as the pre-pass would.  From a K-major stage the warp's
         * reads fall on 32 banks; from the boxes of rows (row r in box r / 32, column r % 32
         * of line k), two to a bank. */
        if (Cfg::kARegisters)
#pragma unroll
            for (int kk = 0; kk < kBK / 8; ++kk)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int r = 64 * half + 16 * w + g + 8 * (e & 1);
                    const int kq = 8 * kk + lane_t + 4 * (e >> 1);
                    const int at = Cfg::kShiftedLines
                                       ? r * Cfg::kALine + shift + kq
                                   : a_k_lines(Cfg::kAFeed)
                                       ? sw128_offset(r, kq)
                                       : r / 32 * 32 * kBK + sw128_offset(kq, r % 32);
                    if (Cfg::kSplit) {
                        const Split parts = split_tf32(stage[at]);
                        a_frag[kk][e] = __float_as_uint(parts.big);
                        a_frag_small[kk][e] = __float_as_uint(parts.small);
                    } else {
                        a_frag[kk][e] = __float_as_uint(tf32_round(stage[at]));
                    }
                }
        wgmma_fence();
        if constexpr (Cfg::kUnitsInTurn) {
            /* unit 0's products; then the last tile's unit 1, done, is promoted and its stage
             * goes back; unit 1's products; then unit 0's promoted (the last tile: both,
             * everything waited for).  Each wait has its own path (C7514, as below). */
#pragma unroll
            for (int kk = 0; kk < kBK / 8; ++kk)
                products(part[0], 0, kk, !(fresh && kk == 0), a_big, a_small, b_big, b_small,
                         a_frag, a_frag_small);
            wgmma_commit();
            wgmma_wait<1>();
            if (releaser && unreleased >= 0)
                mbarrier_arrive(&ring.empty[unreleased % kStages]);
            if (t > 0)
                promote_unit(acc, part[1], 1);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < kBK / 8; ++kk)
                products(part[1], 1, kk, !(fresh && kk == 0), a_big, a_small, b_big, b_small,
                         a_frag, a_frag_small);
            wgmma_commit();
            if (!final_tile) {
                wgmma_wait<1>();
                promote_unit(acc, part[0], 0);
                unreleased = t;
            } else {
                wgmma_wait<0>();
                promote_unit(acc, part[0], 0);
                promote_unit(acc, part[1], 1);
                if (releaser)
                    mbarrier_arrive(&ring.empty[s]);
                unreleased = -1;
            }
        } else {
#pragma unroll
            for (int kk = 0; kk < kBK / 8; ++kk) {
                const bool accumulate = !(fresh && kk == 0);
#pragma unroll
                for (int h = 0; h < kUnits; ++h)
                    products(part[h], h, kk, accumulate, a_big, a_small, b_big, b_small, a_frag,
                             a_frag_small);
            }
            wgmma_commit();
            if constexpr (kSets == 2) {
                /* the previous tile's products are done (this one's may still run, but for
                 * the last tile's): its stage goes back and its partial sum joins the FP32
                 * sums.  Each wait has its own path, so that ptxas sees which sums may be read
                 * after it (with the paths joined it serializes every product, C7514). */
                auto &previous = acc.part(1 - set);
                if (!final_tile) {
                    wgmma_wait<1>();
                    promote_previous(acc, previous, unreleased, t);
                    unreleased = t;
                } else {
                    wgmma_wait<0>();
                    promote_previous(acc, previous, unreleased, t);
#pragma unroll
                    for (int h = 0; h < kUnits; ++h)
                        fence_operand(part[h]);
                    if (releaser)
                        mbarrier_arrive(&ring.empty[s]);
                    unreleased = -1;
                    add_partial(acc, part);
                }
            } else if (last) {
                /* every product so far is done: both stages go back, the sums may be read */
                wgmma_wait<0>();
#pragma unroll
                for (int h = 0; h < kUnits; ++h)
                    fence_operand(part[h]);
                if (releaser) {
                    if (unreleased >= 0)
                        mbarrier_arrive(&ring.empty[unreleased % kStages]);
                    mbarrier_arrive(&ring.empty[s]);
                }
                unreleased = -1;
                if (kPromote > 0)
                    add_partial(acc, part);
            } else {
                /* the previous tile's products are done (this one's may still run): its stage
                 * goes back to the producer */
                wgmma_wait<1>();
                if (releaser && unreleased >= 0)
                    mbarrier_arrive(&ring.empty[unreleased % kStages]);
                unreleased = t;
            }
        }
    }

    /* The common case of the epilogue from registers, where this warpgroup's 64 rows of the
     * tile lie inside C, rows or columns of C are contiguous and beta == 0: each output a
     * multiply and a store at a fixed offset from a pointer of its row (c_cs == 1) or its
     * column (a turned product, c_rs == 1), with no test of bounds or beta, where
     * store_tc_result takes some 30 instructions an output (at k = 256 the epilogue issued
     * most of the kernel's instructions, ncu).  Whether every output is finite is learnt on
     * the way; if one is not, the caller stores them all again its way, recomputing those (C
     * is only written: beta == 0).  Returns whether that is not needed. */
    __device__ __forceinline__ bool store_inside(Acc &acc, const tg_problem &p,
                                                 const batch_item &item, int64_t c_rs,
                                                 int64_t c_cs, int i0, int j0) const
    {
        /* the rows of this warpgroup's slots: its 64 rows, or (classes) rows across the tile */
        const int rows_end = Cfg::kAFeed == AFeed::kClassesKMajor ? Cfg::kBM : 64 * half + 64;
        if (p.beta != 0.0f || (c_cs != 1 && c_rs != 1) || i0 + rows_end > p.m ||
            j0 + kUnit * kUnits > p.n)
            return false;
        float *const c0 =
            item.C + (i0 + row(64 * half + 16 * w + g)) * c_rs + (j0 + 2 * lane_t) * c_cs;
        bool finite = true;
        if (c_cs == 1) { /* slots g and g + 8 */
            float *const c8 = c0 + kRows8 * c_rs;
#pragma unroll
            for (int h = 0; h < kUnits; ++h)
#pragma unroll
                for (int j = 0; j < kUnit / 8; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const float r = acc.result(h)[4 * j + e];
                        finite &= fabsf(r) <= FLT_MAX;
                        (e < 2 ? c0 : c8)[kUnit * h + 8 * j + e % 2] = p.alpha * r;
                    }
        } else { /* columns 2 lane_t + 8 j and the next, rows g and g + 8 of each */
#pragma unroll
            for (int h = 0; h < kUnits; ++h)
#pragma unroll
                for (int j = 0; j < kUnit / 8; ++j) {
                    float *const col = c0 + (kUnit * h + 8 * j) * c_cs;
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const float r = acc.result(h)[4 * j + e];
                        finite &= fabsf(r) <= FLT_MAX;
                        col[(e % 2) * c_cs + kRows8 * (e / 2)] = p.alpha * r;
                    }
                }
        }
        return finite;
    }

    /* The epilogue: result(h)[4j + e] is C(i0 + 64 half + 16 w + g + 8 (e / 2),
     * j0 + kUnit h + 8j + 2 lane_t + e % 2).  Where C's columns are contiguous (c_rs == 1, a
     * turned product) a warp's store writes 8 consecutive rows, 32 bytes, of each of 4
     * columns: whole sectors where C is 32-byte aligned, and it is stored from here.  Where its
     * rows are (c_cs == 1), a store writes every other float of 8 rows and the next fills the
     * gaps: harmless where each row's 32 bytes are a sector, but where rows are off 32 bytes
     * (most leading dimensions) every sector is written in four pieces.  There the tile goes
     * through the ring's shared memory, free once every consumer's products are done, and each
     * warp writes whole rows of C, 32 consecutive floats a store.  H100, against storing from
     * registers (bench/results/tensor/staged-epilogue/): at a6ad7fc, staging every tile,
     * 0.47-0.60x the time at 27182x26882x25 and 15228x7013x12 row-major (TF32 and 3xTF32), but
     * 1.03-1.27x where rows were 32-byte aligned or the product turned, hence the test; at
     * 7ddf2c2, with the test: 3xTF32 128x128 0.55-1.02x (geometric mean 0.89 over 36
     * entries), 128x64 0.71-1.02x (0.94), TF32 128x128 0.46-1.03x (0.74); but TF32 128x256
     * 1.14-1.30x on aligned calls that never stage (1024^3, 8192x8192x128, 6000x7000x200):
     * the staged code's presence, not its path, costs that form (not yet explained), so it
     * alone (two products of n128 a warpgroup) stores from registers, its SASS as before.
     * Outputs the tensor core left Inf or NaN are recomputed first, as store_tc_result does. */
    __device__ __forceinline__ void store(Acc &acc, const TurnedProblem &q, int i0, int j0) const
    {
        const tg_problem &p = q.p;
        const batch_item item(p);
        const bool whole_sectors =
            Cfg::kStoresFromRegisters || q.c_cs != 1 ||
            (q.c_rs % 8 == 0 && reinterpret_cast<uintptr_t>(item.C) % 32 == 0);
        if (whole_sectors) {
            if (store_inside(acc, p, item, q.c_rs, q.c_cs, i0, j0))
                return;
#pragma unroll
            for (int h = 0; h < kUnits; ++h)
#pragma unroll
                for (int j = 0; j < kUnit / 8; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        store_tc_result(p, item, i0 + row(64 * half + 16 * w + g + 8 * (e / 2)),
                                        j0 + kUnit * h + 8 * j + 2 * lane_t + e % 2,
                                        acc.result(h)[4 * j + e], q.c_rs, q.c_cs);
            return;
        }
        /* The staged tile: a row of C a line, pitch 8 mod 32 floats (a warp's 8-byte pairs of
         * 8 rows x 4 columns fill the 32 banks). */
        constexpr int kBM = Cfg::kBM, kBN = kUnit * kUnits;
        constexpr int kPitch = kBN % 32 == 16 ? kBN + 24 : kBN + 8; /* 8 mod 32 */
        constexpr int kThreads = Cfg::kConsumerWarps * 32;
        static_assert(kBM * kPitch <= Cfg::kStages * Cfg::kStage, "the tile must fit the ring");
        float *const tile = ring.stages;
        named_barrier_sync(1, kThreads); /* every consumer's products done: the ring is free */
#pragma unroll
        for (int h = 0; h < kUnits; ++h)
#pragma unroll
            for (int j = 0; j < kUnit / 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; e += 2) {
                    const int r = 64 * half + 16 * w + g + 4 * e, c = kUnit * h + 8 * j + 2 * lane_t;
                    *reinterpret_cast<float2 *>(tile + r * kPitch + c) = make_float2(
                        tc_result(p, item, i0 + row(r), j0 + c, acc.result(h)[4 * j + e]),
                        tc_result(p, item, i0 + row(r), j0 + c + 1, acc.result(h)[4 * j + e + 1]));
                }
        named_barrier_sync(1, kThreads);
        const int warp = (threadIdx.x - kWarpgroup) / 32, lane = threadIdx.x % 32;
        const int64_t cols_in = p.n - j0; /* of the tile's columns, inside C */
        for (int r = warp; r < kBM; r += Cfg::kConsumerWarps) { /* r: a slot */
            if (i0 + row(r) >= p.m)
                continue;
            float *const c_row = item.C + (i0 + row(r)) * q.c_rs + j0;
#pragma unroll 4
            for (int c = lane; c < kBN; c += 32)
                if (c < cols_in)
                    store_result(c_row + c, tile[r * kPitch + c], p.alpha, p.beta);
        }
    }
};

/*
 * a_maps, b_map: the planes of op(A) and op(B) as rank-4 tensors (k, rows, part, batch item),
 * read in boxes of 32 x BM (A) or 32 x BN (B) x 1 x 1 (A's map the first of a_maps; all 4 its
 * classes' with kClassesKMajor).  p: the product of this chunk of k (A
 * and B at its first k, beta already 1 after the first chunk), for the epilogue's stores and
 * FMA recomputes.  One block per tile of C, in grouped order (grouped_tile<8>) on grid.x;
 * grid.z the batch item.  The first warpgroup produces (produce), the others consume and
 * store (Consumer), over the Ring's stages.
 */
template <int BM, int BN, int STAGES, int PROMOTE, bool SPLIT, AFeed A_FEED, int BLOCKS>
__global__ void __launch_bounds__(kThreads<BM>, BLOCKS)
    sgemm_tma_wgmma(const __grid_constant__ AMaps a_maps,
                    const __grid_constant__ CUtensorMap b_map, const TurnedProblem q)
{
    using Cfg = Config<BM, BN, STAGES, PROMOTE, SPLIT, A_FEED, BLOCKS>;
    const tg_problem &p = q.p;

    extern __shared__ __align__(16) float smem[];
    const Ring<Cfg> ring(smem);
    const int tid = threadIdx.x;
    if (tid == 0)
        ring.init();
    __syncthreads();
    wait_for_prior_grids(); /* the planes or panel the pass before wrote; C */

    const int64_t tiles = (p.k + kBK - 1) / kBK;
    const tile_index tile = grouped_tile<8>(blockIdx.x, (unsigned)((p.m + BM - 1) / BM),
                                            (unsigned)((p.n + BN - 1) / BN));
    const int i0 = (int)tile.m * BM, j0 = (int)tile.n * BN;

    if (tid < kWarpgroup) {
        set_max_registers<kProducerRegisters, false>();
        produce(ring, a_maps, b_map, p, i0, j0, tiles, tid);
        return;
    }
    set_max_registers<kConsumerRegistersOf<BLOCKS>, true>();
    const Consumer<Cfg> consumer =
        Cfg::kShiftedLines ? Consumer<Cfg>(ring, tid, p, i0) : Consumer<Cfg>(ring, tid);
    typename Consumer<Cfg>::Acc acc;
    if (PROMOTE > 0) /* the FP32 sums start at zero; the partial sums at each fresh tile */
#pragma unroll
        for (int h = 0; h < Cfg::kUnits; ++h)
#pragma unroll
            for (int i = 0; i < Cfg::kUnit / 2; ++i)
                acc.result(h)[i] = 0.0f;
    typename Consumer<Cfg>::AFrag a_frags[2], a_frags_small[2];
    consumer.consume(acc, a_frags, a_frags_small, tiles);
    let_dependents_launch(); /* split-K's reduction may be launched during the stores */
    consumer.store(acc, q, i0, j0);
}

/* ---- the launch --------------------------------------------------------------------------- */

/* One operand as the caller stores it: rows x k, X(r, q) = X[r * row_stride + q * k_stride],
 * batch item z at X + z * stride (one item when stride is 0). */
struct RawOperand {
    const float *base;
    int64_t rows, k, row_stride, k_stride, stride, items;

    RawOperand(const float *x, int64_t rows_, int64_t k_, int64_t rs, int64_t ks, int64_t st,
               int64_t batch)
        : base(x), rows(rows_), k(k_), row_stride(rs), k_stride(ks), stride(st),
          items(st == 0 ? 1 : batch)
    {
    }
    /* The TMA reads it in place when the contiguous side (`inner`, of extent `inner_len`) is
     * unit-stride and the other's stride, the start and the batch stride are multiples of 16
     * bytes, the lines not overlapping (what the tensor map's strides allow).  Batch items may
     * overlap: split-K's slices are items a slice of k apart in one matrix, each read only
     * within its own k (the box past it reads zeros); requiring items apart had sent every
     * split call through planes of both operands, up to 4x the time of the unsplit call. */
    bool tma_readable(int64_t inner, int64_t outer, int64_t inner_len) const
    {
        return inner == 1 && outer % 4 == 0 && outer >= inner_len && outer < (int64_t(1) << 37) &&
               (uintptr_t)base % 16 == 0 && inner_len <= INT32_MAX - kBK &&
               (items == 1 || (stride > 0 && stride % 4 == 0 && stride < (int64_t(1) << 37)));
    }
    bool k_major() const { return tma_readable(k_stride, row_stride, k); }
    bool rows_major() const { return tma_readable(row_stride, k_stride, rows); }
    /* The TMA reads it as 4 classes of rows (kClassesKMajor, class_maps): contiguous along k,
     * rows 4 apart a multiple of 16 bytes apart whatever the leading dimension, the batch
     * stride a multiple of 16 bytes (so every item's rows are off 16 bytes as the first's). */
    bool k_classes() const
    {
        return k_stride == 1 && row_stride >= k && row_stride < (int64_t(1) << 35) &&
               k <= INT32_MAX - 2 * kBK &&
               (items == 1 || (stride > 0 && stride % 4 == 0 && stride < (int64_t(1) << 37)));
    }
};

inline RawOperand raw_a(const tg_problem &p)
{
    return RawOperand(p.A, p.m, p.k, p.a_rs, p.a_cs, p.stride_a, p.batch);
}
inline RawOperand raw_b(const tg_problem &p)
{
    return RawOperand(p.B, p.n, p.k, p.b_cs, p.b_rs, p.stride_b, p.batch);
}

/* How a call feeds the tensor core: where A comes from (AFeed), and whether the product is
 * turned (C^T = op(B)^T op(A)^T, common.cuh) so that op(B) takes A's place.  wgmma reads TF32
 * operands from shared memory only K-major; A (not B) may come from registers instead, in any
 * layout, and is then read by the TMA where the caller keeps it, with no pre-pass:
 *   TF32 mode     op(B) must then be K-major in place too (nothing else prepares it): op(A)
 *                 k- or rows-contiguous with op(B) k-contiguous, or turned, op(A)
 *                 k-contiguous with op(B) columns contiguous; else both go through planes
 *   3xTF32        op(B) always goes through planes (big and small), op(A) through registers
 *                 when the TMA can read it, else the product is turned when op(B) can be
 *                 read, or when both can and op(B) is the larger (the planes then cost less);
 *                 else both go through planes
 * Where the TMA can read neither operand in place but a side of each is contiguous (odd
 * leading dimensions, starts off 16 bytes), the 3xTF32 forms have the producer warpgroup copy
 * the one in A's place (kCopied*) as the TMA would have, choosing the turn as above, with no
 * planes of it.  They copy it too where one side of C is at least twice the other and only
 * the shorter side's operand is readable: the longer operand then goes through registers and
 * the planes are of the shorter one (a thin product's planes of its long operand cost more
 * than the product).  Only operands with neither side contiguous go through planes of both.
 * TF32 mode still sends such calls through planes of both. */
struct Feed {
    AFeed a;
    bool turn;
};

/* The panel pack_lines makes of the operand in A's place (turned problem q), where the producer
 * would copy it or the TMA read it by classes: its lines (rows for kCopiedKMajor and
 * kClassesKMajor, k for kCopiedRowsMajor), their length, the panel's pitch and its items. */
struct Packed {
    int64_t lines, inner, ld, items;
    Packed(const tg_problem &q, AFeed a)
    {
        const RawOperand x = raw_a(q);
        const bool k_lines = a_k_lines(a);
        lines = k_lines ? x.rows : x.k;
        inner = k_lines ? x.k : x.rows;
        ld = (inner + 3) / 4 * 4;
        items = x.items;
    }
    /* the operand's own floats, and the panel's (lines padded to ld, the panel to 256 bytes) */
    double elements() const { return (double)items * (double)lines * (double)inner; }
    int64_t floats() const { return (items * lines * ld + 63) / 64 * 64; }
};

/* Products at least this wide (n of the turned problem) have the operand that the producer
 * would copy packed into an aligned panel by a pre-pass instead, then read by the TMA: on the
 * H100, 4097^3's main kernel took 1.41 ms with the producer's copies against 1.22 ms at 4100^3
 * with the TMA (the same 33 x 33 tiles; bench/results/packed/), and the pass moves 8 m k bytes,
 * about 150 / n of a product's time at 110 TFLOP/s and the copy rate: under 8% from here. */
constexpr int64_t kPackMinCols = 2048;

/* The most bytes a packed panel may take (beside the planes' kPlaneBudget): past it the
 * producer copies A. */
constexpr size_t kPackBudget = size_t(1) << 30;

/* Read by classes (kClassesKMajor), the products this wide pack A too where k is shorter than
 * this: each row of a class's box is 144 bytes across two or three 128-byte lines of L2, and
 * the wide products read A from L2 once a column of tiles.  H200, against packing, in one call
 * (bench/results/mid/classes/): 8392x6245x446 and 23531x12939x413 column-major TN 1.18x the
 * time, 3420x7362x622 and 6533x27850x1533 row-major TT 1.06x and 1.03x; 1490x20299x2809 row-major
 * NT 0.93x and 4097^3 row-major NN 0.94x. */
constexpr int64_t kClassesPackBelowK = 2048;

/* Whether the call packs its A (above). */
inline bool pack_pays(const TurnedProblem &q, AFeed a)
{
    const bool packable =
        a_copied(a) || (a == AFeed::kClassesKMajor && q.p.k < kClassesPackBelowK);
    return packable && q.p.n >= kPackMinCols &&
           (size_t)Packed(q.p, a).floats() * sizeof(float) <= kPackBudget;
}

template <int BM, int BN, bool SPLIT>
Feed choose_feed(const tg_problem &p)
{
    const RawOperand a = raw_a(p), b = raw_b(p);
    /* where x, in A's place with `other` in B's, comes from: the TMA reading it in place, or
     * with `copy`, the producer's copies */
    const auto feed_of = [](const RawOperand &x, const RawOperand &other, bool copy) {
        if (!SPLIT && !other.k_major())
            return AFeed::kShared;
        if (x.k_major())
            return AFeed::kRegistersKMajor;
        if (x.rows_major())
            return AFeed::kRegistersRowsMajor;
        if (!copy)
            return AFeed::kShared;
        if (x.k_stride == 1)
            return x.k_classes() ? AFeed::kClassesKMajor : AFeed::kCopiedKMajor;
        return x.row_stride == 1 ? AFeed::kCopiedRowsMajor : AFeed::kShared;
    };
    /* 3xTF32, and a block taller than wide: the longer side of C along the block's rows */
    const bool prefer_turned = (SPLIT || BN < BM) && p.n > p.m;
    /* 3xTF32 with one side of C twice the other or more: the longer side's operand in A's
     * place, copied if need be, so that the planes are of the shorter side's */
    const bool longer_in_registers = SPLIT && (p.m >= 2 * p.n || p.n >= 2 * p.m);
    /* the TMA where it can read either operand in place; else (3xTF32) the producer's copies */
    for (int round = 0; round < (SPLIT ? 2 : 1); ++round) {
        const bool copy = round == 1 || longer_in_registers;
        const AFeed straight = feed_of(a, b, copy);
        /* turned, m takes the wider tile side */
        const AFeed turned_feed = p.m <= INT32_MAX - BN ? feed_of(b, a, copy) : AFeed::kShared;
        if (straight != AFeed::kShared && !(prefer_turned && turned_feed != AFeed::kShared))
            return Feed{straight, false};
        if (turned_feed != AFeed::kShared)
            return Feed{turned_feed, true};
    }
    return Feed{AFeed::kShared, false};
}

/* Whether p runs turned: the planner counts tiles along the sides the blocks lie on. */
template <int BM, int BN, bool SPLIT>
int tma_wgmma_turns(const tg_problem *p)
{
    return choose_feed<BM, BN, SPLIT>(*p).turn ? 1 : 0;
}

/* How the planes of a problem are cut along k, and where they lie in the workspace: planes of
 * op(B) always, of op(A) where it does not go through registers. */
struct PlaneChunks {
    int64_t items_a, items_b; /* batch items with their own planes (items_a 0: no planes) */
    int64_t kc;               /* k of a chunk (the last may be shorter) */
    int64_t kp;               /* kc padded to 4 floats: TMA strides are multiples of 16 bytes */
    int parts;

    PlaneChunks(const tg_problem &p, bool split, bool plane_a)
        : items_a(!plane_a ? 0 : p.stride_a == 0 ? 1 : p.batch),
          items_b(p.stride_b == 0 ? 1 : p.batch), parts(split ? 2 : 1)
    {
        const int64_t per_k = (items_a * p.m + items_b * p.n) * parts * (int64_t)sizeof(float);
        const int64_t fit = (int64_t)kPlaneBudget / per_k / kBK * kBK;
        const int64_t whole = (p.k + kBK - 1) / kBK * kBK;
        kc = fit < kBK ? kBK : fit < whole ? fit : whole;
        kp = (kc + 3) / 4 * 4;
    }
    int64_t a_floats(const tg_problem &p) const { return items_a * parts * p.m * kp; }
    size_t bytes(const tg_problem &p) const
    {
        return (size_t)(a_floats(p) + items_b * parts * p.n * kp) * sizeof(float);
    }
};

/* Whether a call with this feed writes planes: of B always but in TF32 mode through registers. */
constexpr bool needs_planes(bool split, AFeed a) { return split || a == AFeed::kShared; }

template <int BM, int BN, bool SPLIT>
size_t tma_wgmma_workspace(const tg_problem *p)
{
    const Feed feed = choose_feed<BM, BN, SPLIT>(*p);
    if (!needs_planes(SPLIT, feed.a))
        return 0;
    const TurnedProblem q = turned(*p, feed.turn);
    const size_t packed =
        pack_pays(q, feed.a) ? (size_t)Packed(q.p, feed.a).floats() * sizeof(float) : 0;
    return packed + PlaneChunks(q.p, SPLIT, feed.a == AFeed::kShared).bytes(q.p);
}

/* The planes' bytes over the whole of k, written once and read once: the chunks that
 * tma_wgmma_workspace sizes one at a time, all of them. */
template <int BM, int BN, bool SPLIT>
double tma_wgmma_staged(const tg_problem *p)
{
    const Feed feed = choose_feed<BM, BN, SPLIT>(*p);
    if (!needs_planes(SPLIT, feed.a))
        return 0.0;
    const TurnedProblem q = turned(*p, feed.turn);
    const PlaneChunks c(q.p, SPLIT, feed.a == AFeed::kShared);
    const double packed = pack_pays(q, feed.a) ? 2.0 * Packed(q.p, feed.a).elements() : 0.0;
    return 2.0 * (double)(c.items_a * q.p.m + c.items_b * q.p.n) * c.parts * sizeof(float) *
               (double)q.p.k +
           packed * sizeof(float);
}

template <int PARTS, Read READ>
cudaError_t launch_split_as(dim3 grid, const float *X, int64_t rs, int64_t ks, int64_t stride,
                            int64_t rows, int64_t k, float *planes, int64_t kp,
                            cudaStream_t stream)
{
    split_into_planes<PARTS, READ><<<grid, dim3(32, 8), 0, stream>>>(X, rs, ks, stride, rows, k,
                                                                     planes, kp);
    return cudaGetLastError();
}

/* The planes of one operand (rows x k, X(r, q) = X[r * rs + q * ks]) for one chunk. */
template <int PARTS>
cudaError_t launch_split(const float *X, int64_t rs, int64_t ks, int64_t stride, int64_t items,
                         int64_t rows, int64_t k, float *planes, int64_t kp, cudaStream_t stream)
{
    const dim3 grid(ceil_div(rows, 32), std::min(ceil_div(k, 32), 65535u), (unsigned)items);
    /* float4 reads need every row (or column) and batch item to start on 16 bytes */
    const auto starts_aligned = [&](int64_t apart) {
        return (uintptr_t)X % 16 == 0 && apart % 4 == 0 && (items == 1 || stride % 4 == 0);
    };
    if (ks == 1 && starts_aligned(rs))
        return launch_split_as<PARTS, Read::kVecQ>(grid, X, rs, ks, stride, rows, k, planes, kp,
                                                   stream);
    if (rs == 1 && starts_aligned(ks))
        return launch_split_as<PARTS, Read::kVecR>(grid, X, rs, ks, stride, rows, k, planes, kp,
                                                   stream);
    return launch_split_as<PARTS, Read::kScalar>(grid, X, rs, ks, stride, rows, k, planes, kp,
                                                 stream);
}

/* The tensor map of one operand's planes: (k, rows, part, item), boxes of 32 x box_rows x 1 x
 * 1. */
cudaError_t plane_map(CUtensorMap *map, const float *planes, int64_t k, int64_t rows, int parts,
                      int64_t items, int64_t kp, int box_rows)
{
    const uint64_t row_bytes = (uint64_t)kp * sizeof(float);
    const uint64_t dims[4] = {(uint64_t)k, (uint64_t)rows, (uint64_t)parts, (uint64_t)items};
    const uint64_t strides[3] = {row_bytes, row_bytes * rows, row_bytes * rows * parts};
    const uint32_t box[4] = {kBK, (uint32_t)box_rows, 1, 1};
    return encode_tile_map(map, planes, dims, strides, box);
}

/* The tensor map of an operand read in place: k-major as (k, rows, 1, item) in boxes of 32 x
 * box_rows, like the planes; rows-major as (rows, k, 1, item) in boxes of 32 rows x 32 k. */
cudaError_t raw_map(CUtensorMap *map, const RawOperand &x, bool k_major, int box_rows)
{
    const int64_t inner = k_major ? x.k : x.rows, outer = k_major ? x.rows : x.k;
    const uint64_t line = (uint64_t)(k_major ? x.row_stride : x.k_stride) * sizeof(float);
    const uint64_t dims[4] = {(uint64_t)inner, (uint64_t)outer, 1, (uint64_t)x.items};
    const uint64_t strides[3] = {line, line * outer,
                                 x.items > 1 ? (uint64_t)x.stride * sizeof(float) : line * outer};
    const uint32_t box[4] = {kBK, k_major ? (uint32_t)box_rows : (uint32_t)kBK, 1, 1};
    return encode_tile_map(map, x.base, dims, strides, box);
}

/* The tensor maps of an operand contiguous along k whose rows are off 16 bytes
 * (kClassesKMajor): class c (rows c, c + 4, ...; 16 l bytes apart, l the leading dimension) as
 * (k + shift, its rows, 1, item) from its first row's start rounded down to 16 bytes, shift
 * floats before it (the row before's last, or at the matrix's start up to 3 floats of its
 * 16-byte granule, which lies in the same allocation: never used), in plain boxes of 36 x
 * BM / 4.  Past k and past the class's rows the boxes read zeros.  A class without rows (m <
 * 4) gets class 0's map; the producer loads no box of it. */
cudaError_t class_maps(AMaps *maps, const RawOperand &x, int box_rows)
{
    for (int c = 0; c < 4; ++c) {
        const int64_t first = c < x.rows ? c : 0;
        const float *const start = x.base + first * x.row_stride;
        const int shift = a_shift(start);
        const uint64_t line = 4 * (uint64_t)x.row_stride * sizeof(float);
        const uint64_t rows = (uint64_t)((x.rows - first + 3) / 4);
        const uint64_t dims[4] = {(uint64_t)(x.k + shift), rows, 1, (uint64_t)x.items};
        const uint64_t strides[3] = {line, line * rows,
                                     x.items > 1 ? (uint64_t)x.stride * sizeof(float)
                                                 : line * rows};
        const uint32_t box[4] = {kBK + 4, (uint32_t)box_rows / 4, 1, 1};
        const cudaError_t e = encode_tile_map(&maps->m[c], start - shift, dims, strides, box,
                                              false);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* The tensor map of one operand of a chunk: its planes, written now, or the operand in place
 * (k-major or rows-major). */
template <int PARTS>
cudaError_t chunk_map(CUtensorMap *map, bool planes_of_it, const RawOperand &x, bool k_major,
                      float *planes, int64_t kp, int box_rows, cudaStream_t stream)
{
    if (!planes_of_it)
        return raw_map(map, x, k_major, box_rows);
    const cudaError_t e = launch_split<PARTS>(x.base, x.row_stride, x.k_stride, x.stride,
                                              x.items, x.rows, x.k, planes, kp, stream);
    return e ? e : plane_map(map, planes, x.k, x.rows, PARTS, x.items, kp, box_rows);
}

/* One feed's launches: the product in chunks of k where planes are written (each chunk's
 * planes, then its product adding into C, beta on the first), else in one launch. */
template <int BM, int BN, int PROMOTE, bool SPLIT, int BLOCKS, AFeed A_FEED>
int launch_feed(const TurnedProblem &q, cudaStream_t stream, float *workspace,
                bool after_pass = false)
{
    constexpr int kParts = SPLIT ? 2 : 1;
    constexpr bool kPlaneA = A_FEED == AFeed::kShared, kPlaneB = needs_planes(SPLIT, A_FEED);
    /* as many stages as the ring holds (192 KiB: 3 of 3xTF32 planes, 4 where A is one FP32
     * box; two blocks an SM: 96 KiB each) */
    constexpr size_t kStageBytes = stage_floats(BM, BN, SPLIT, A_FEED) * sizeof(float);
    constexpr int kStages = (int)(kStageRingFor<BLOCKS, BM, BN, A_FEED> / kStageBytes);
    constexpr auto kernel = sgemm_tma_wgmma<BM, BN, kStages, PROMOTE, SPLIT, A_FEED, BLOCKS>;
    constexpr size_t kSmem = kStages * kStageBytes + 2 * kStages * sizeof(uint64_t) +
                             1024 /* room to align the stages */;
    static_assert(kSmem <= 227 * 1024, "the stages must fit the H100's 227 KiB a block");
    static_assert(BLOCKS == 1 || (BM == 64 && BLOCKS * (kSmem + 1024) <= 228 * 1024),
                  "two blocks an SM: 256 threads and half the shared memory each");
    cudaError_t e = opt_in_shared_memory<kernel>(kSmem);
    if (e != cudaSuccess)
        return (int)e;
    const tg_problem &p = q.p;
    const PlaneChunks chunks(p, SPLIT, kPlaneA);
    const int64_t kc = kPlaneB ? chunks.kc : p.k;
    float *const planes_a = workspace;
    float *const planes_b = workspace + chunks.a_floats(p);
    const dim3 grid(ceil_div(p.m, BM) * ceil_div(p.n, BN), 1, (unsigned)p.batch);
    for (int64_t k0 = 0; k0 < p.k; k0 += kc) {
        TurnedProblem chunk = q;
        chunk.p.k = std::min(kc, p.k - k0);
        chunk.p.A = p.A + k0 * p.a_cs;
        chunk.p.B = p.B + k0 * p.b_rs;
        chunk.p.beta = k0 == 0 ? p.beta : 1.0f; /* later chunks add into C */
        AMaps a_maps{}; /* unused where the producer copies A */
        CUtensorMap b_map;
        if ((A_FEED == AFeed::kClassesKMajor && (e = class_maps(&a_maps, raw_a(chunk.p), BM))) ||
            (!a_copied(A_FEED) && A_FEED != AFeed::kClassesKMajor &&
             (e = chunk_map<kParts>(&a_maps.m[0], kPlaneA, raw_a(chunk.p),
                                    A_FEED == AFeed::kRegistersKMajor, planes_a, chunks.kp, BM,
                                    stream))) ||
            (e = chunk_map<kParts>(&b_map, kPlaneB, raw_b(chunk.p), true, planes_b, chunks.kp,
                                   BN, stream)))
            return (int)e;
        /* after a pass of this call's (planes, a panel): launched dependently on it */
        if (after_pass || kPlaneB || (kPlaneA && !a_copied(A_FEED)))
            e = launch_dependent(kernel, grid, dim3(kThreads<BM>), kSmem, stream, a_maps, b_map,
                                 chunk);
        else
            kernel<<<grid, kThreads<BM>, kSmem, stream>>>(a_maps, b_map, chunk);
        if (e != cudaSuccess || (e = cudaGetLastError()) != cudaSuccess)
            return (int)e;
    }
    return (int)cudaSuccess;
}

/* Packs the operand in A's place (pack_lines) at the workspace's start and runs the product on
 * the panel, read by the TMA, with the planes after it. */
template <int BM, int BN, int PROMOTE, bool SPLIT, int BLOCKS, AFeed PANEL_FEED>
int launch_packed(TurnedProblem q, AFeed copied, cudaStream_t stream, float *workspace)
{
    const Packed panel(q.p, copied);
    const RawOperand x = raw_a(q.p);
    const bool k_lines = a_k_lines(copied);
    const dim3 grid(ceil_div(panel.inner, 1024),
                    std::min(ceil_div(panel.lines, 8), 65535u), (unsigned)panel.items);
    pack_lines<<<grid, dim3(32, 8), 0, stream>>>(x.base, k_lines ? x.row_stride : x.k_stride,
                                                  x.stride, panel.lines, panel.inner, workspace,
                                                  panel.ld);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return (int)e;
    q.p.A = workspace;
    q.p.a_rs = k_lines ? panel.ld : 1;
    q.p.a_cs = k_lines ? 1 : panel.ld;
    q.p.stride_a = panel.items > 1 ? panel.lines * panel.ld : 0;
    return launch_feed<BM, BN, PROMOTE, SPLIT, BLOCKS, PANEL_FEED>(q, stream,
                                                                  workspace + panel.floats(), true);
}

/* Whether a launch of `blocks` blocks of a 64-row form runs sooner two an SM (2 stages each)
 * than one (4 stages): a wave of two an SM took about 1.5 times one of one an SM, so two pay
 * where they take fewer than two thirds of the waves.  H200, tma_wgmma3xtf32_64x128 both ways
 * at the same split on 199 calls of two fresh seeds (bench/results/mid/two-blocks/): 0.813
 * of the time on the 111 this sends to two an SM (worst 1.06); on the 88 it keeps at one, two
 * would have taken 1.01. */
inline bool two_blocks_pay(int64_t blocks, int64_t sms)
{
    const int64_t one = (blocks + sms - 1) / sms, two = (blocks + 2 * sms - 1) / (2 * sms);
    return blocks > sms && 3 * two < 2 * one;
}

/* The launches of p, turned as its feed says (q), BLOCKS blocks an SM. */
template <int BM, int BN, int PROMOTE, bool SPLIT, int BLOCKS>
int launch_fed(const Feed &feed, const TurnedProblem &q, cudaStream_t stream, float *planes)
{
    if constexpr (SPLIT) /* choose_feed copies A for 3xTF32 only */
        if (pack_pays(q, feed.a))
            return a_k_lines(feed.a)
                       ? launch_packed<BM, BN, PROMOTE, SPLIT, BLOCKS,
                                       AFeed::kRegistersKMajor>(q, feed.a, stream, planes)
                       : launch_packed<BM, BN, PROMOTE, SPLIT, BLOCKS,
                                       AFeed::kRegistersRowsMajor>(q, feed.a, stream, planes);
    switch (feed.a) {
    case AFeed::kRegistersKMajor:
        return launch_feed<BM, BN, PROMOTE, SPLIT, BLOCKS, AFeed::kRegistersKMajor>(q, stream,
                                                                                    planes);
    case AFeed::kRegistersRowsMajor:
        return launch_feed<BM, BN, PROMOTE, SPLIT, BLOCKS, AFeed::kRegistersRowsMajor>(q, stream,
                                                                                       planes);
    case AFeed::kCopiedKMajor:
        if constexpr (SPLIT)
            return launch_feed<BM, BN, PROMOTE, SPLIT, BLOCKS, AFeed::kCopiedKMajor>(q, stream,
                                                                                    planes);
        return (int)cudaErrorInvalidValue;
    case AFeed::kCopiedRowsMajor:
        if constexpr (SPLIT)
            return launch_feed<BM, BN, PROMOTE, SPLIT, BLOCKS, AFeed::kCopiedRowsMajor>(q, stream,
                                                                                       planes);
        return (int)cudaErrorInvalidValue;
    case AFeed::kClassesKMajor:
        if constexpr (SPLIT)
            return launch_feed<BM, BN, PROMOTE, SPLIT, BLOCKS, AFeed::kClassesKMajor>(q, stream,
                                                                                     planes);
        return (int)cudaErrorInvalidValue;
    default:
        return launch_feed<BM, BN, PROMOTE, SPLIT, BLOCKS, AFeed::kShared>(q, stream, planes);
    }
}

/* The block widths a 64-wide form runs a product of n (turned) at most kNarrowCols or
 * kNarrowerCols wide on: 48 or 32 (m64n48 or m64n32 products), for 64 would spend a quarter or
 * half of the tensor core's work on columns past n.  Its tiles are the same (one column of
 * them), its feed and workspace too, so the planner sees one entry. */
constexpr int64_t kNarrowCols = 48, kNarrowerCols = 32;
template <int BN>
constexpr bool has_narrow_form = BN == 64;

/* A registry entry's launch: its feed chosen once, then BLOCKS blocks an SM, or with BLOCKS = 0
 * one or two, by the waves they take (two_blocks_pay). */
template <int BM, int BN, int PROMOTE, bool SPLIT, int BLOCKS>
int launch_tma_wgmma(const tg_problem *p, void *stream_arg, void *workspace)
{
    const cudaStream_t stream = (cudaStream_t)stream_arg;
    float *const planes = static_cast<float *>(workspace);
    const Feed feed = choose_feed<BM, BN, SPLIT>(*p);
    const TurnedProblem q = turned(*p, feed.turn);
    if constexpr (has_narrow_form<BN> && BLOCKS == 1) {
        if (q.p.n <= kNarrowerCols)
            return launch_fed<BM, kNarrowerCols, PROMOTE, SPLIT, 1>(feed, q, stream, planes);
        if (q.p.n <= kNarrowCols)
            return launch_fed<BM, kNarrowCols, PROMOTE, SPLIT, 1>(feed, q, stream, planes);
    }
    if constexpr (BLOCKS == 0)
        return two_blocks_pay((int64_t)ceil_div(q.p.m, BM) * ceil_div(q.p.n, BN) * q.p.batch,
                              current_sm_count())
                   ? launch_fed<BM, BN, PROMOTE, SPLIT, 2>(feed, q, stream, planes)
                   : launch_fed<BM, BN, PROMOTE, SPLIT, 1>(feed, q, stream, planes);
    else
        return launch_fed<BM, BN, PROMOTE, SPLIT, BLOCKS>(feed, q, stream, planes);
}

template <int BM, int BN>
const char *tma_wgmma_unsupported(const tg_problem *p)
{
#ifdef TG_BUILD_SM90A
    if (p->m > INT32_MAX - BM || p->n > INT32_MAX - BN)
        return "m or n is too large for the TMA's 32-bit coordinates";
    if ((p->m + BM - 1) / BM * ((p->n + BN - 1) / BN) > INT32_MAX)
        return "the grouped block order puts a launch's tiles on a 1-D grid of at most 2^31 - 1 "
               "blocks: m x n is too large for that";
    return nullptr;
#else
    (void)p;
    return TG_NO_SM90A_CODE;
#endif
}

/* A registry entry of this file: its block (BM x BN), whether it splits its inputs into TF32
 * parts (3xTF32, promoting every 32 of k) or keeps the big parts alone (TF32 mode), and its
 * blocks an SM (0: one or two, by two_blocks_pay), from which its arithmetic, limits,
 * workspace and launch all follow. */
template <int BM, int BN, bool SPLIT, int BLOCKS = 1>
constexpr tg_rung rung9(const char *name, const char *summary, int in_auto)
{
    return tg_rung{.name = name, .level = 9, .summary = summary, .block_rows = BM,
                   .block_cols = BN, .in_auto = in_auto,
                   .arith = SPLIT ? TG_ARITH_3XTF32 : TG_ARITH_TF32, .min_cc = 90,
                   .launch = launch_needs_workspace, .unsupported = tma_wgmma_unsupported<BM, BN>,
                   .workspace_bytes = tma_wgmma_workspace<BM, BN, SPLIT>,
                   .staged_bytes = tma_wgmma_staged<BM, BN, SPLIT>,
                   .turns = tma_wgmma_turns<BM, BN, SPLIT>,
                   .launch_with_workspace = launch_tma_wgmma<BM, BN, SPLIT ? 1 : 0, SPLIT, BLOCKS>};
}

} // namespace

extern "C" const tg_rung tg_rung_tma_wgmma3xtf32 = rung9<128, 128, true>("tma_wgmma3xtf32",
    "3xTF32 at FP32 accuracy on Hopper's own pipeline: TMA into a 4-stage mbarrier ring, a "
    "producer warpgroup, 2 consumer warpgroups on wgmma, one operand read in place and split "
    "into TF32 parts in registers, the other's TF32 planes made once (k-major) and read from "
    "shared memory (strides the TMA cannot read: both in planes, 3 stages), 128x128x32 block, "
    "FP32 promotion every 32 of k",
    1);

extern "C" const tg_rung tg_rung_tma_wgmmatf32 = rung9<128, 256, false>("tma_wgmmatf32",
    "tma_wgmma3xtf32 without the small parts and without promotion, 128x256x32 block, 4 stages: "
    "TF32 inputs (opt-in TF32 math mode, below FP32 accuracy)",
    1);

extern "C" const tg_rung tg_rung_tma_wgmmatf32_128x128 = rung9<128, 128, false>(
    "tma_wgmmatf32_128x128",
    "tma_wgmmatf32 on the 128x128x32 block of tma_wgmma3xtf32 (6 stages): twice the tiles, for "
    "TF32 products too small to fill 132 SMs with 128x256",
    1);

extern "C" const tg_rung tg_rung_tma_wgmmatf32_64x128 = rung9<64, 128, false>(
    "tma_wgmmatf32_64x128",
    "tma_wgmmatf32 on a 64x128x32 block (one consumer warpgroup, 8 stages): four times the "
    "tiles of 128x256, for TF32 products of about 1024^2 outputs",
    1);

extern "C" const tg_rung tg_rung_tma_wgmma3xtf32_64x128 = rung9<64, 128, true, 0>(
    "tma_wgmma3xtf32_64x128",
    "tma_wgmma3xtf32 on a 64x128x32 block (one consumer warpgroup; 4 stages, its two units of "
    "64 promoted in turn, or 2 stages and two blocks an SM where that takes fewer waves): twice "
    "the tiles, for FP32-accurate products too small to fill 132 SMs with 128x128",
    1);

extern "C" const tg_rung tg_rung_tma_wgmma3xtf32_128x64 = rung9<128, 64, true>(
    "tma_wgmma3xtf32_128x64",
    "tma_wgmma3xtf32 on a 128x64x32 block (m64n64 products, 6 stages): for FP32-accurate "
    "products with a short side of 64 or less, which a 128-wide tile would mostly waste; of "
    "48 or 32 or less on a 128x48x32 or 128x32x32 block (m64n48 or m64n32 products, 6 or 8 "
    "stages); two sets of partial sums in turn",
    1);

extern "C" const tg_rung tg_rung_tma_wgmmatf32_128x64 = rung9<128, 64, false>(
    "tma_wgmmatf32_128x64",
    "tma_wgmmatf32 on a 128x64x32 block (m64n64 products, 8 stages): TF32 products with a short "
    "side of 64 or less; of 48 or 32 or less on a 128x48x32 or 128x32x32 block (m64n48 or "
    "m64n32 products, 8 or 9 stages)",
    0);
