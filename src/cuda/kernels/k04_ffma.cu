/*
 * Rung 4 (FFMA): large block tiles, 16 x 8 accumulators a thread, one block an SM, and
 * register fragments read one k step ahead: the FP32 FFMA kernel for large products.
 *   sgemm_ffma_256x128x8_w64x64_t16x8_s3_g8   ("ffma256x128")      the configuration cuBLAS
 *                                                                  uses for FP32 on sm_90
 *   sgemm_ffma_128x256x8_w64x64_t16x8_s3_g8   ("ffma128x256")      the block transposed
 *   sgemm_ffma_256x128x16_w64x64_t16x8_s3_g8  ("ffma256x128_k16")  half the barriers a k
 *   sgemm_ffma_256x128x8_w64x64_t16x8_s4_g8   ("ffma256x128_s4")   one more stage in flight
 *   sgemm_ffma_128x128x8_w64x64_t16x8_s3_g8   ("ffma128x128")      128 threads, 2 blocks an SM:
 *                                                                  twice the blocks, for
 *                                                                  medium products
 *   sgemm_ffma_128x128x8_w64x64_t16x8_s3_g8_spread  ffma128x128 and ffma128x256 with a phase's
 *   sgemm_ffma_128x256x8_w64x64_t16x8_s3_g8_spread  copies spread over its k steps ("Spread
 *     ("ffma128x128_spread", "ffma128x256_spread")  copies" below): faster with both
 *                                                   operands along k, even elsewhere
 *   sgemm_ffma_256x64x8_w64x64_t16x8_s3_g8   ("ffma256x64")       ffma128x128's 4 warps
 *   sgemm_ffma_64x256x8_w64x64_t16x8_s3_g8   ("ffma64x256")       stacked along the long side:
 *                                                                  thin and medium outputs
 *   sgemm_ffma_256x32x8_w128x32_t16x8_s3_g8  ("ffma256x32")       2 warps of 128x32 (32x128),
 *   sgemm_ffma_32x256x8_w32x128_t16x8_s3_g8  ("ffma32x256")       4 blocks an SM: outputs 17
 *                                                                  to 32 wide, long k
 *   sgemm_ffma_256x32x8_w128x32_t16x8_s3_g8_spread  the same two with spread copies, for a
 *   sgemm_ffma_32x256x8_w32x128_t16x8_s3_g8_spread  long operand along k
 *     ("ffma256x32_spread", "ffma32x256_spread")
 *   sgemm_ffma_128x128x8_..._spread, stream-K  ffma128x128_spread and ffma128x256_spread run by
 *   sgemm_ffma_128x256x8_..._spread, stream-K  stream-K ("Stream-K" below): one wave of blocks
 *     ("ffma128x128_spread_sk",                 shares all the tiles' k steps, for medium
 *      "ffma128x256_spread_sk")                 outputs whose tiles leave a wave part idle
 * All are one template (ffma_tile_product below, run by sgemm_ffma a tile a block or by
 * sgemm_ffma_stream_k), instantiated per configuration for the sweep.
 *
 * What it adds over rung 3 (warptile128, and its grouped order, warptile128_l2):
 *   - a 16 x 8 thread tile (128 accumulators) instead of 8 x 8: per k step a thread reads
 *     4 + 2 LDS.128 for 128 FFMA (rung 3: 2 + 2 for 64), so shared-memory traffic per FFMA
 *     drops by a quarter and the FFMA share of the instruction stream rises;
 *   - __launch_bounds__(THREADS, 1): up to 255 registers a thread (rung 3 is held to 128 for
 *     two blocks an SM).  One 256-thread block an SM, 8 warps: 12.5% occupancy, as cuBLAS's
 *     kernel; latency is hidden by instruction-level parallelism (128 independent FFMA a k
 *     step) rather than by warps;
 *   - double-buffered register fragments: the fragments of k step kk + 1 are read from shared
 *     memory while the FFMA of step kk run, and across phases the last step's FFMA follow the
 *     barrier and the first reads of the next phase, so no LDS latency is exposed;
 *   - fragment reads with no excess wavefronts: lanes are 4 (m) x 8 (n), lane_n = lane % 8, so
 *     each quarter-warp phase of an LDS.128 reads one 16-byte chunk of As (broadcast) and 8
 *     consecutive chunks (128 bytes, 32 banks) of Bs.  Rung 3's lanes are 8 (m) x 4 (n);
 *   - BK 8 by default (as cuBLAS; BK 16 as a variant): a 256 x 128 block tile is 12 KiB a
 *     phase, so 3 stages take 37.5 KiB of shared memory and leave most of the SM's 228 KiB to
 *     L1.
 *   block tile   BM x BN x BK (above), THREADS = (BM / 64) x (BN / 64) warps x 32
 *   warp tile    64 x 64, lanes as 4 (m) x 8 (n)
 *   thread tile  16 x 8 as 4 x 2 pieces of 4 x 4: rows lane_m * 4 + {0..3} + 16 g (g < 4) of the
 *                warp tile, columns lane_n * 4 + {0..3} + 32 h (h < 2).  Per k step 4 + 2
 *                LDS.128 and 128 FFMA a thread; per phase of BK = 8, 1024 FFMA
 *   stages       STAGES rotating shared buffers (3, or 4): the copies of phase t + STAGES - 1
 *                are issued at the start of phase t, one __syncthreads a phase
 *   shared       STAGES x (As[BK][BM + padA] + Bs[BK][BN + padB]), k-major, dynamic, through
 *                k03's loader (tile_loader.cuh): pad 4 floats for an operand copied along k
 *                (its pitch of 4 mod 32 floats spreads a warp's 8 k x 4 rows of 4-byte copies
 *                over 32 banks), none for one copied along m or n (a warp's 16-byte copies
 *                write 512 consecutive bytes).  256x128x8, 3 stages: 36 to 37.5 KiB
 *   registers    128 accumulators + 2 x (16 + 8) fragments + addresses: ptxas (CUDA 13.0,
 *                sm_90) gives every configuration and layout 255 registers, 0 bytes of spills,
 *                no stack frame.  ffma128x128's 128 threads x 255 fit twice in an SM's 64K
 * sm_90 loop body (PTX, one phase of BK = 8): 1024 fma.rn.f32 and 48 ld.shared.v4 (1:21) in
 *                1127 instructions with both operands by 16-byte copies, 1159 with op(A) along
 *                k (row-major NN), up to 1200 with both by 4-byte copies: 85-91% FFMA
 *   block order  grouped_tile<8> (common.cuh), on a 1-D grid: consecutive blocks sweep 8 tile
 *                rows column by column, so the resident blocks share A and B tiles in L2
 * How each operand layout is copied: as rung 3 (tile_loader.cuh): 16-byte cp.async.cg along m
 * or n where vectors_allowed, else 4-byte cp.async (misaligned pointers, odd leading
 * dimensions, general strides, and an operand contiguous along k, whose k-major tile is a
 * transpose of its global layout).
 * Edges: every copy carries its own bounds test and zero-fills outside the matrix, so partial
 * tiles and k not a multiple of BK take the same path as interior ones.  C is stored by 16-byte
 * vectors where C's pointer and ldc allow and all 4 columns are inside, else element by element;
 * beta == 0 never reads C.  Offsets are 64-bit; batches on blockIdx.z.
 * Below sm_80 async_copy.cuh turns the copies into synchronous loads and stores: correct, with
 * no overlap.
 * Constraints: none (any m, n, k, strides and alignment); the grouped order's 1-D grid must hold
 *              a launch's tiles, 2^31 - 1 blocks (grouped_order_unsupported, common.cuh).
 * FFMA order:  the 8-warp configurations issue a k step's FFMA in pairs of columns
 *              (ffma_outer_product_paired), which lets the operand reuse caches feed them:
 *              1-3.5% less time than row by row; ffma128x128 keeps the row order.  Against
 *              cuBLAS at 8192^3 (H100, bench/results/ffma/): ffma128x256 0.95x column-major NN,
 *              0.84x TN.  With both operands contiguous along k (column-major TN, row-major NT),
 *              the 4-byte copies' address registers are recycled for fragments within 8-40
 *              instructions, and warps wait for those copies to read them (stall_long_sb,
 *              5.7% of samples, against 0.6% in cuBLAS's kernel).
 * Spread copies (SPREAD, the _spread entries): each operand's copies of a phase are issued one by
 *              one after the FFMA of the phase's first BK / 2 k steps instead of all at its start,
 *              through one chained 64-bit pointer per operand (ChainedTileLoader, tile_loader.cuh),
 *              and the last step's barrier is taken on the last phase too.  Same shared layout,
 *              bounds tests and zero-fill; copies of phases past the end of k zero-fill the free
 *              buffer instead of being branched around. sm_90 SASS, CUDA 13.0, column-major TN
 *              (scripts/sass_loop.py "copy war": instructions from each copy to the first write of
 *              its address registers): ffma128x256 5-40 for all 12 copies, ffma128x256_spread 25
 *              for one and 43-448 for the other 11; ffma128x128 7-54, ffma128x128_spread 29-1144.
 *              The cost: 3 dummy LDS ptxas puts before each group of copies (+9 a phase), the FFMA
 *              order of ffma128x256's pairs partly lost (202 of 1024 FFMA read 3 registers, against
 *              83) and, in ffma128x128_spread, ptxas moving most of the last step's FFMA above the
 *              barrier (first fragment read 3 instructions before its use).  Registers: 240
 *              (ffma128x128_spread, against 255) and 243 (ffma128x256_spread, against 240), no
 *              spills.  Speed (H100, strict, against cuBLAS in the same run,
 *              bench/results/ffma/spread-*.json): 8192^3 column-major TN 0.94x (ffma128x256:
 *              0.83x), NN 0.95x (0.94x); 481x23964x3377 TN 0.90x (0.84x).  On the regret corpus's
 *              590 cases with min(m, n) > 64, at the same count of slices: 0.96-0.98 of the
 *              original's time with both operands along k, 0.99-1.05 in the other layouts (worst
 *              1.12 and 1.36); auto weighs both forms by their corpus and model rows.
 *              No 32-bit offsets from a uniform base: sm_90's global addresses (LDG, LDGSTS)
 *              take a 64-bit register plus an immediate only, ptxas emits no [R + UR] form
 *              for them, and none of cuBLAS's sm_90 kernels has one.
 * Thin:        ffma256x64 and ffma64x256 (H100, strict, against cuBLAS in the same run, at
 *              83398ee): 47x4311x13869 column-major NN 0.78x (the best rung before,
 *              skinny32x64 at 32 slices, 0.68x), 8609x33x12227 TT 0.82x (skinny64x32, 0.67x),
 *              but 0.50-0.66x where a mid-size output has rungs 3 to 5 at 0.60-0.82x.  On the
 *              regret corpus's 585 cases with 16 < min(m, n) <= 512 they are the fastest FFMA
 *              entry on 38, and lift the fastest entry by 0.4-1.5% a category (thin and medium,
 *              k > 256; bench/results/ffma/corpus-rows-83398ee-thin.tgz).  At about 23 TFLOP/s
 *              on 47-wide outputs they stay far from the FFMA peak: a tile of 64 columns of which
 *              47 count, and 17 tiles of 256 rows split 7 ways.
 *              ffma256x32 and ffma32x256 (H200, strict, same run as cuBLAS, bytes of the long
 *              operand a second, bench/results/thin-h200/): 32x65536x4096 and 20x65536x4096
 *              row-major NN 2.58-2.60 TB/s (1.80x cuBLAS; the best other FFMA rung, skinny32x128,
 *              2.40), 65536x17..32x4096 2.03 (1.41x; skinny64x32 1.67-1.75), 16384x32x16384 at 4
 *              slices 1.97 (0.94x; 1.77), column-major TN 2.01-2.02 (0.95x and 1.33x; 1.55-1.57).
 *              Where the long operand is along k (its 4-byte copies, 36 a phase) the form is at
 *              about 49% of the FFMA peak, where it is copied by vectors 62%.  Slower where m' is
 *              short (4000x30x20000: 1.14 against skinny64x32's 1.45 TB/s).  Their _spread
 *              forms took 0.944-0.987 of the time on the same calls (32x65536x4096 row-major NN
 *              2.75 TB/s, 1.92x cuBLAS; along k still 2.06; bench/results/thin-h200/).  No
 *              corpus or model rows yet: the planner passes all four over (nor do they reach
 *              autotuning's first 8 candidates on these calls); they run when named.
 * Stream-K:    the _sk entries (stream_k.cuh): SMs x blocks an SM blocks, each running the
 *              segments of tiles its even share of all k steps crosses; a tile shared by several
 *              is summed, in the order of its k, by the block that counts itself last.
 *              Workspace: a counter a tile (zeroed by a memset before the launch) and two tiles
 *              of floats a block.  Registers (ptxas, CUDA 13.0, sm_90a): 252-255, 8-16 bytes of
 *              stack in 3 of ffma128x128_spread_sk's 9 layouts, none elsewhere.  H200, strict,
 *              against cuBLAS in the same run, 17 medium and large calls (bench/results/ffma/
 *              stream-k-h200/): ffma128x128_spread_sk 0.86x (geomean), the fastest split-K entry
 *              of five FFMA configurations at the planner's counts 0.74x, auto 0.75x:
 *              1676x1296x1294 row-major NT 0.91x (0.64x), 1500^3 1.10x (0.72x), 828x2621x1279
 *              column-major TN 0.94x (0.64x); 512x512x8192 0.82x where 16 slices of
 *              ffma128x256_spread reach 0.90x.  On fresh seed 20261307's 200 random calls, the
 *              faster of strict auto and these two per call: mid k <= 4096 0.930x -> 0.974x,
 *              mid k > 4096 0.864x -> 0.918x, big k > 256 0.885-0.908x -> 0.906-0.925x.
 *              Auto weighs them only where the regret corpus timed them (none yet).
 * Benchmark:   tilegemm bench --algo ffma256x128,ffma128x256,ffma256x128_k16,ffma256x128_s4,
 *              ffma128x128,warptile128_l2 4096x4096x4096 8192x8192x8192 16384x16384x16384
 *              4097x4097x4097
 * Measured:    ffma128x128 46.9 TFLOP/s (0.87x cuBLAS) at 16384x16384x16384, 46.0 TFLOP/s (0.89x cuBLAS) at 8192x8192x8192, 39.8 TFLOP/s (0.89x cuBLAS) at 4097x4097x4097, 45.5 TFLOP/s (0.87x cuBLAS) at 4096x4096x4096; ffma128x256 47.8 TFLOP/s (0.88x cuBLAS) at 16384x16384x16384, 46.6 TFLOP/s (0.90x cuBLAS) at 8192x8192x8192, 37.0 TFLOP/s (0.83x cuBLAS) at 4097x4097x4097, 47.0 TFLOP/s (0.90x cuBLAS) at 4096x4096x4096 on NVIDIA H100 80GB HBM3, commit b39f18e (bench/results/nvidia-h100-80gb-hbm3-2026-11-23-candidates.json)
 */
#include <stdint.h>

#include <type_traits>

#include "async_copy.cuh"
#include "common.cuh"
#include "stream_k.cuh"
#include "tile_loader.cuh"

namespace {

/* SPREAD: the loop issues each operand's copies one by one over a phase's k steps
 * (ChainedTileLoader), else all at the start of the phase (AsyncTileLoader). */
template <bool SPREAD, int ROWS, int BK, int THREADS, bool K_CONTIG, bool VEC>
using FfmaLoader = std::conditional_t<SPREAD, ChainedTileLoader<ROWS, BK, THREADS, K_CONTIG, VEC>,
                                      AsyncTileLoader<ROWS, BK, THREADS, K_CONTIG, VEC>>;

/* Blocks of THREADS an SM holds: at the 240-255 registers a thread ptxas gives the
 * configurations (above), four of 64 threads fit its 64K registers, two of 128, one of 256.
 * The cost model counts a launch's rounds by it (tg_rung.blocks_per_sm).  Not in the launch
 * bounds: held to 2 there, ptxas schedules the spread forms' loops differently (ffma64x256's
 * code is the same). */
template <int THREADS>
constexpr int kFfmaBlocksPerSm = THREADS <= 64 ? 4 : THREADS <= 128 ? 2 : 1;

/*
 * A_K_CONTIG: op(A) is contiguous along k (a_cs == 1), else along m (a_rs == 1, or general
 * strides).  B_N_CONTIG: op(B) contiguous along n (b_cs == 1), else along k.  A_VEC / B_VEC:
 * the operand is contiguous along m / n and may be copied by 16-byte vectors.
 */
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int GROUP_M,
          bool PAIRED, bool SPREAD, bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC,
          class EPILOGUE>
__device__ __forceinline__ void ffma_tile_product(const tg_problem &p, const tile_index *tile,
                                                  EPILOGUE epilogue)
{
    constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
    constexpr int kThreads = 32 * kWarpsM * kWarpsN;
    constexpr int kLanesM = WM / TM, kLanesN = WN / TN;
    constexpr int kPieceM = WM / (TM / 4), kPieceN = WN / (TN / 4); /* between a thread's runs */
    static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0,
                  "the thread tile is read as runs of 4 floats (LDS.128) along m and n");
    static_assert(WM % TM == 0 && WN % TN == 0 && kLanesM * kLanesN == 32,
                  "a warp's 32 lanes must tile the warp tile with thread tiles");
    static_assert(kLanesN == 4 || kLanesN == 8 || kLanesN == 16,
                  "4, 8 or 16 lanes along n (lane_n = lane % kLanesN): each quarter-warp of an "
                  "LDS.128 then reads 2 or 1 consecutive chunks of As (broadcasts) and 64 or "
                  "128 consecutive bytes of Bs, one wavefront each");
    static_assert(kThreads <= 1024, "at most 1024 threads a block");
    static_assert(BK % 2 == 0,
                  "the fragments alternate between two register buffers per k step, so a phase "
                  "must end on the second for the next phase to start on the first");
    using LoadA = FfmaLoader<SPREAD, BM, BK, kThreads, A_K_CONTIG, A_VEC>;
    using LoadB = FfmaLoader<SPREAD, BN, BK, kThreads, !B_N_CONTIG, B_VEC>;
    /* SPREAD: copy e of op(A) after the FFMA of k step e * kSpreadSteps / kCopies of the phase,
     * op(B)'s alike.  Over the first half of the phase: a copy issued in step BK - 2 would have
     * one phase to land instead of two, and over all BK - 1 steps, ptxas leaves 3 of 12 copies
     * of ffma128x256 with their address registers rewritten within 32 instructions, against 1
     * of 12 over 4 steps (scripts/sass_loop.py, both operands along k). */
    constexpr int kSpreadSteps = BK / 2;

    extern __shared__ __align__(16) float smem[];
    /* The tile of C (given, or this block's in the grouped order for GROUP_M > 1), its
     * loaders, the prologue */
    using Block = WarpTiledBlock<BM, BN, BK, STAGES, GROUP_M, LoadA, LoadB, WM, WN, kWarpsN,
                                 kLanesN>;
    Block block = tile ? Block(smem, p, threadIdx.x, *tile) : Block(smem, p, threadIdx.x);
    float *const As = block.As, *const Bs = block.Bs; /* [STAGES][BK][pitch] each */
    const int a_off = block.a_off, b_off = block.b_off;
    const int64_t i0 = block.i0, j0 = block.j0;

    float acc[TM][TN] = {};
    float af[2][TM], bf[2][TN]; /* fragments of k steps kk (kk % 2) and kk + 1 */

    /* Phase 0 has landed (this thread's copies: STAGES - 2 groups may stay in flight) and is
     * visible after the barrier; its first fragments are read before the loop. */
    async_wait<STAGES - 2>();
    __syncthreads();
    int read = 0;                  /* buffer of phase t */
    int write = STAGES - 1;        /* buffer of phase t + STAGES - 1 */
    const float *a = As + a_off;   /* this thread's runs in phase t's As and Bs */
    const float *b = Bs + b_off;
    load_fragment<TM, kPieceM>(af[0], a);
    load_fragment<TN, kPieceN>(bf[0], b);

    /* Iteration t computes phase t from buffer `read`; k_left = k - t * BK.  On entry phase t is
     * visible to the block and every thread has finished reading phase t - 1's buffer, which
     * is `write`. */
    for (int64_t k_left = p.k; k_left > 0; k_left -= BK) {
        /* phase t + STAGES - 1 into buffer `write`: here at once, or (SPREAD) after the FFMA of
         * the first kSpreadSteps k steps, copy by copy */
        [[maybe_unused]] float *const As_w = As + write * LoadA::kTileFloats;
        [[maybe_unused]] float *const Bs_w = Bs + write * LoadB::kTileFloats;
        [[maybe_unused]] const int64_t next_left = k_left - (STAGES - 1) * BK;
        if (!SPREAD)
            block.refill(write, k_left, p);
        write = read; /* phase t + STAGES goes where phase t is now */
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            if (kk < BK - 1) {
                /* step kk + 1's fragments from the same phase, while step kk's FFMA run */
                load_fragment<TM, kPieceM>(af[(kk + 1) % 2], a + (kk + 1) * LoadA::kPitch);
                load_fragment<TN, kPieceN>(bf[(kk + 1) % 2], b + (kk + 1) * LoadB::kPitch);
            } else if (SPREAD) {
                async_commit(); /* this phase's copies, one group (zero-fills past the end of k) */
            }
            /* SPREAD takes this step on the last phase too, where the fragments it reads go
             * unused: with the branch, ptxas moves most of this step's FFMA above the barrier
             * and the first reads of the next phase meet their FFMA a few instructions on. */
            if (kk == BK - 1 && (SPREAD || k_left > BK)) {
                /* Last step: move to phase t + 1 before its FFMA.  Groups committed so far are
                 * phases 0 .. t + STAGES - 1; leaving the newest STAGES - 2 in flight means
                 * phase t + 1 has landed, and after the barrier everyone's copies of it are
                 * visible and everyone has issued its last read of phase t's buffer (the next
                 * iteration refills it).  The FFMA of this step then cover the latency of the
                 * first reads of phase t + 1. */
                async_wait<STAGES - 2>();
                __syncthreads();
                read = read == STAGES - 1 ? 0 : read + 1;
                a = As + read * LoadA::kTileFloats + a_off;
                b = Bs + read * LoadB::kTileFloats + b_off;
                load_fragment<TM, kPieceM>(af[0], a);
                load_fragment<TN, kPieceN>(bf[0], b);
            }
            if (PAIRED)
                ffma_outer_product_paired(acc, af[kk % 2], bf[kk % 2]);
            else
                ffma_outer_product(acc, af[kk % 2], bf[kk % 2]);
            if constexpr (SPREAD) {
                /* unconditional: past the end of k the copies only zero-fill the free buffer,
                 * and a branch here would split the FFMA stream */
#pragma unroll
                for (int e = 0; e < LoadA::kCopies; ++e)
                    if (e * kSpreadSteps / LoadA::kCopies == kk)
                        block.load_a.copy(e, As_w, p.a_rs, p.a_cs, next_left);
#pragma unroll
                for (int e = 0; e < LoadB::kCopies; ++e)
                    if (e * kSpreadSteps / LoadB::kCopies == kk)
                        block.load_b.copy(e, Bs_w, p.b_cs, p.b_rs, next_left);
            }
        }
    }
    /* only groups of phases past the end of k can be left (empty, or SPREAD's zero-fills of a
     * free buffer); drain them before the shared tiles are left or reused */
    async_wait<0>();

    /* acc[i][j] is C(row0 + i / 4 * kPieceM + i % 4, col0 + j / 4 * kPieceN + j % 4) */
    epilogue(acc, i0 + a_off, j0 + b_off);
}

/* One tile of C a block, in the grouped order. */
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int GROUP_M,
          bool PAIRED, bool SPREAD, bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1) sgemm_ffma(const tg_problem p)
{
    ffma_tile_product<BM, BN, BK, WM, WN, TM, TN, STAGES, GROUP_M, PAIRED, SPREAD, A_K_CONTIG,
                      A_VEC, B_N_CONTIG, B_VEC>(
        p, nullptr, [&](float(&acc)[TM][TN], int64_t row0, int64_t col0) {
            store_thread_tile<TM, TN, WM / (TM / 4), WN / (TN / 4), false>(acc, p, row0, col0);
        });
}

/* Stream-K (stream_k.cuh): one wave of blocks, each running its segments of tiles in turn. */
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int GROUP_M,
          bool PAIRED, bool SPREAD, bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
    sgemm_ffma_stream_k(const tg_problem p, const StreamK s, float *partials, unsigned *counters)
{
    constexpr int kThreads = (BM / WM) * (BN / WN) * 32;
    for (uint32_t seg = 0;; ++seg) {
        const StreamKSegment g = s.segment(blockIdx.x, seg);
        if (g.step0 >= g.step1)
            break;
        /* the segment as a product of its own: k steps [step0, step1) of the tile */
        tg_problem q = p;
        const int64_t k0 = (int64_t)g.step0 * BK, k1 = (int64_t)g.step1 * BK;
        q.A = p.A + k0 * p.a_cs;
        q.B = p.B + k0 * p.b_rs;
        q.k = (k1 < p.k ? k1 : p.k) - k0;
        const tile_index tile = grouped_tile<GROUP_M>(g.tile, s.tiles_m, s.tiles_n);
        ffma_tile_product<BM, BN, BK, WM, WN, TM, TN, STAGES, GROUP_M, PAIRED, SPREAD,
                          A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>(
            q, &tile, [&](float(&acc)[TM][TN], int64_t row0, int64_t col0) {
                if (g.whole || stream_k_share<kThreads>(acc, s, g, partials, counters, BM * BN))
                    store_thread_tile<TM, TN, WM / (TM / 4), WN / (TN / 4), false>(acc, p, row0,
                                                                                  col0);
            });
        __syncthreads(); /* every thread is done with the shared tiles before the next segment's
                          * prologue refills them */
    }
}

/* The launch of each layout's instantiation, for launch_for_copies (tile_loader.cuh).  A
 * _spread entry spreads its copies only where each operand's are one a depth (kSpan 1): where a
 * shared row is wider than a round of threads (4-byte copies along outer, as ffma256x32's op(A)
 * where vectors are not allowed) it runs its base form, since there a phase's 32 copies held
 * at the start or spread took ffma256x32_spread and ffma32x256_spread to 36-144 bytes of spills
 * (ptxas, CUDA 13.0) where the base forms have none. */
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int GROUP_M,
          bool PAIRED, bool SPREAD>
struct FfmaLaunch {
    template <bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
    static int run(const tg_problem *p, cudaStream_t stream)
    {
        constexpr int kThreads = kWarpTiledThreads<BM, BN, WM, WN>;
        constexpr bool kSpread =
            SPREAD && AsyncTileLoader<BM, BK, kThreads, A_K_CONTIG, A_VEC>::kSpan == 1 &&
            AsyncTileLoader<BN, BK, kThreads, !B_N_CONTIG, B_VEC>::kSpan == 1;
        return launch_tiled<sgemm_ffma<BM, BN, BK, WM, WN, TM, TN, STAGES, GROUP_M, PAIRED,
                                       kSpread, A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>,
                            BM, BN, STAGES, GROUP_M, kThreads,
                            FfmaLoader<kSpread, BM, BK, kThreads, A_K_CONTIG, A_VEC>,
                            FfmaLoader<kSpread, BN, BK, kThreads, !B_N_CONTIG, B_VEC>>(p, stream);
    }
};

/* The same instantiation as FfmaLaunch's, run by stream-K: the counters zeroed, then one wave
 * of blocks over the schedule, a launch per batch item (the items share the workspace, in the
 * stream's order). */
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int GROUP_M,
          bool PAIRED, bool SPREAD>
struct FfmaStreamKLaunch {
    template <bool A_K_CONTIG, bool A_VEC, bool B_N_CONTIG, bool B_VEC>
    static int run(const tg_problem *p, cudaStream_t stream, float *workspace)
    {
        constexpr int kThreads = kWarpTiledThreads<BM, BN, WM, WN>;
        constexpr bool kSpread =
            SPREAD && AsyncTileLoader<BM, BK, kThreads, A_K_CONTIG, A_VEC>::kSpan == 1 &&
            AsyncTileLoader<BN, BK, kThreads, !B_N_CONTIG, B_VEC>::kSpan == 1;
        using LoadA = FfmaLoader<kSpread, BM, BK, kThreads, A_K_CONTIG, A_VEC>;
        using LoadB = FfmaLoader<kSpread, BN, BK, kThreads, !B_N_CONTIG, B_VEC>;
        constexpr auto kKernel =
            sgemm_ffma_stream_k<BM, BN, BK, WM, WN, TM, TN, STAGES, GROUP_M, PAIRED, kSpread,
                                A_K_CONTIG, A_VEC, B_N_CONTIG, B_VEC>;
        const size_t smem = STAGES * (LoadA::kTileFloats + LoadB::kTileFloats) * sizeof(float);
        cudaError_t e = opt_in_shared_memory<kKernel>(smem);
        if (e != cudaSuccess)
            return (int)e;
        const StreamK s = stream_k_schedule(
            ceil_div(p->m, BM), ceil_div(p->n, BN), ceil_div(p->k, BK),
            stream_k_slots(kFfmaBlocksPerSm<kThreads>));
        const uint64_t tiles = (uint64_t)s.tiles_m * s.tiles_n;
        unsigned *const counters = reinterpret_cast<unsigned *>(workspace);
        float *const partials = workspace + stream_k_counter_bytes(tiles) / sizeof(float);
        for (int64_t b = 0; b < p->batch; ++b) {
            if ((e = cudaMemsetAsync(counters, 0, tiles * sizeof(unsigned), stream)) !=
                cudaSuccess)
                return (int)e;
            kKernel<<<s.blocks, kThreads, smem, stream>>>(batch_item_problem(*p, b), s, partials,
                                                          counters);
            if ((e = cudaGetLastError()) != cudaSuccess)
                return (int)e;
        }
        return (int)cudaSuccess;
    }
};

/* PAIRED: the FFMA of a k step in pairs of columns (ffma_outer_product_paired), else row by row
 * (the header's "FFMA order" says which configurations pair, and why).  SPREAD: the copies of a
 * phase spread over its k steps (the _spread entries). */
constexpr int kFfmaGroupM = 8; /* tile rows a group of the grouped block order sweeps */

template <int BM, int BN, int BK, int STAGES, bool PAIRED, bool SPREAD, int WM, int WN>
int launch_ffma(const tg_problem *p, void *stream)
{
    return launch_for_copies<
        FfmaLaunch<BM, BN, BK, WM, WN, 16, 8, STAGES, kFfmaGroupM, PAIRED, SPREAD>>(
        p, (cudaStream_t)stream);
}

template <int BM, int BN, int BK, int STAGES, bool PAIRED, bool SPREAD, int WM, int WN>
int launch_ffma_stream_k(const tg_problem *p, void *stream, void *workspace)
{
    return launch_for_copies<
        FfmaStreamKLaunch<BM, BN, BK, WM, WN, 16, 8, STAGES, kFfmaGroupM, PAIRED, SPREAD>>(
        p, (cudaStream_t)stream, static_cast<float *>(workspace));
}

/* A stream-K entry's workspace (stream_k.cuh): a counter a tile, two tiles a block. */
template <int BM, int BN, int THREADS>
size_t ffma_stream_k_workspace(const tg_problem *p)
{
    return stream_k_workspace_bytes((uint64_t)ceil_div(p->m, BM) * ceil_div(p->n, BN),
                                    stream_k_slots(kFfmaBlocksPerSm<THREADS>), BM * BN);
}

/* Why a stream-K entry cannot run p (NULL: it can): it counts tiles and k steps in 32 bits. */
template <int BM, int BN, int BK>
const char *stream_k_unsupported(const tg_problem *p)
{
    if ((p->m + BM - 1) / BM * ((p->n + BN - 1) / BN) > UINT32_MAX ||
        (p->k + BK - 1) / BK > UINT32_MAX)
        return "stream-K counts the tiles of C and the k steps in 32 bits: the product is too "
               "large for that";
    return nullptr;
}

/* A registry entry of this file: its block (BM x BN x BK), stages, FFMA order and warp tile
 * (WM x WN of 16x8 thread tiles), from which its tile, launch and limits follow. */
template <int BM, int BN, int BK, int STAGES, bool PAIRED, bool SPREAD = false, int WM = 64,
          int WN = 64>
constexpr tg_rung ffma_rung(const char *name, const char *summary)
{
    return tg_rung{.name = name, .level = 4, .summary = summary, .block_rows = BM,
                   .block_cols = BN, .in_auto = 1, .arith = TG_ARITH_FFMA,
                   .launch = launch_ffma<BM, BN, BK, STAGES, PAIRED, SPREAD, WM, WN>,
                   .unsupported = grouped_order_unsupported<BM, BN, kFfmaGroupM>,
                   .blocks_per_sm = kFfmaBlocksPerSm<kWarpTiledThreads<BM, BN, WM, WN>>};
}

/* The configuration of entry `base` run by stream-K: one wave of blocks over all the k steps,
 * through workspace; never split along k on top (it is its own split).  The cost model reads
 * base's row (tg_rung.model_as) with stream-K's schedule; auto weighs it where the regret
 * corpus timed it. */
template <int BM, int BN, int BK, int STAGES, bool PAIRED, bool SPREAD = false, int WM = 64,
          int WN = 64>
constexpr tg_rung ffma_stream_k_rung(const char *name, const char *base, const char *summary)
{
    constexpr int kThreads = kWarpTiledThreads<BM, BN, WM, WN>;
    return tg_rung{.name = name, .level = 4, .summary = summary, .block_rows = BM,
                   .block_cols = BN, .in_auto = 1, .arith = TG_ARITH_FFMA,
                   .launch = launch_needs_workspace,
                   .unsupported = stream_k_unsupported<BM, BN, BK>,
                   .workspace_bytes = ffma_stream_k_workspace<BM, BN, kThreads>,
                   .launch_with_workspace =
                       launch_ffma_stream_k<BM, BN, BK, STAGES, PAIRED, SPREAD, WM, WN>,
                   .blocks_per_sm = kFfmaBlocksPerSm<kThreads>, .unsplit = 1,
                   .stream_k = 1, .model_as = base};
}

} // namespace

/* Level 4: the top of the FFMA ladder for large products (warptile128_l2's arithmetic and
 * grouped order).  The registry lists ffma256x128 last of these, so
 * that without a tuned entry auto's highest FFMA rung is the cuBLAS-shaped one.  Variants of
 * one kernel for the tuned table (bench --tune picks per shape). */
#if TG_IN_UNIT(ffma128x128)
extern "C" const tg_rung tg_rung_ffma128x128 = ffma_rung<128, 128, 8, 3, false>("ffma128x128",
    "ffma256x128 on a 128x128x8 block of 4 warps (128 threads): two blocks an SM, "
    "twice the blocks for medium products");
#endif

#if TG_IN_UNIT(ffma128x256)
extern "C" const tg_rung tg_rung_ffma128x256 = ffma_rung<128, 256, 8, 3, true>("ffma128x256",
    "ffma256x128 with the block transposed: 128x256x8, 8 warps");
#endif

#if TG_IN_UNIT(ffma256x128_k16)
extern "C" const tg_rung tg_rung_ffma256x128_k16 = ffma_rung<256, 128, 16, 3, true>(
    "ffma256x128_k16",
    "ffma256x128 with BK 16: half the barriers and waits per FFMA, 75 KiB of shared "
    "memory");
#endif

#if TG_IN_UNIT(ffma256x128_s4)
extern "C" const tg_rung tg_rung_ffma256x128_s4 = ffma_rung<256, 128, 8, 4, true>("ffma256x128_s4",
    "ffma256x128 with 4 stages: three phases of copies in flight");
#endif

#if TG_IN_UNIT(ffma256x128)
extern "C" const tg_rung tg_rung_ffma256x128 = ffma_rung<256, 128, 8, 3, true>("ffma256x128",
    "256x128x8 block of 8 warps, 64x64 warp tiles, 16x8 per thread (255 registers, "
    "one block an SM), fragments read a k step ahead, 3-stage cp.async, grouped order");
#endif

/* Thin outputs: one side of C of 33 to 64 (a 64-wide tile wastes at most half) with long k.
 * The same 64x64 warp tiles and 16x8 thread tiles, 4 warps stacked along the long side: two
 * blocks an SM, as ffma128x128.  The narrow FFMA rungs below (skinny, stream) use 4x4 to 8x8
 * thread tiles and stay near a third of the FFMA peak. */
#if TG_IN_UNIT(ffma256x64)
extern "C" const tg_rung tg_rung_ffma256x64 = ffma_rung<256, 64, 8, 3, false>("ffma256x64",
    "ffma128x128's warps stacked along m: a 256x64x8 block of 4 warps, two blocks an "
    "SM, for products with n of 64 or less");
#endif

#if TG_IN_UNIT(ffma64x256)
extern "C" const tg_rung tg_rung_ffma64x256 = ffma_rung<64, 256, 8, 3, false>("ffma64x256",
    "ffma128x128's warps side by side along n: a 64x256x8 block of 4 warps, two "
    "blocks an SM, for products with m of 64 or less");
#endif

/* Outputs 17 to 32 wide: the same 16x8 thread tiles in warp tiles of 128x32 (lanes 8 along m
 * by 4 along n) or 32x128 (2 by 16), two warps a block and four blocks an SM, where the skinny
 * and stream rungs' 4x4 to 8x8 thread tiles stay near a third of the FFMA peak (H200: 1.67-1.77
 * TB/s of the long operand, bench/results/thin-h200/). */
#if TG_IN_UNIT(ffma256x32)
extern "C" const tg_rung tg_rung_ffma256x32 =
    ffma_rung<256, 32, 8, 3, false, false, 128, 32>("ffma256x32",
    "16x8 thread tiles in two 128x32 warp tiles: a 256x32x8 block of 2 warps, four blocks an "
    "SM, for products with n of 32 or less and long k");
#endif

#if TG_IN_UNIT(ffma32x256)
extern "C" const tg_rung tg_rung_ffma32x256 =
    ffma_rung<32, 256, 8, 3, false, false, 32, 128>("ffma32x256",
    "16x8 thread tiles in two 32x128 warp tiles: a 32x256x8 block of 2 warps, four blocks an "
    "SM, for products with m of 32 or less and long k");
#endif

/* ffma256x32 and ffma32x256 with each operand's copies spread over a phase's k steps (as the
 * two below): where the long operand runs along k, its 32 four-byte copies a thread a phase. */
#if TG_IN_UNIT(ffma256x32_spread)
extern "C" const tg_rung tg_rung_ffma256x32_spread =
    ffma_rung<256, 32, 8, 3, false, true, 128, 32>("ffma256x32_spread",
    "ffma256x32 with a phase's copies spread over its k steps, each operand's addresses "
    "chained in one register pair");
#endif

#if TG_IN_UNIT(ffma32x256_spread)
extern "C" const tg_rung tg_rung_ffma32x256_spread =
    ffma_rung<32, 256, 8, 3, false, true, 32, 128>("ffma32x256_spread",
    "ffma32x256 with a phase's copies spread over its k steps, each operand's addresses "
    "chained in one register pair");
#endif

/* ffma128x128 and ffma128x256 with each operand's copies spread over a phase's k steps through
 * one chained pointer (ChainedTileLoader): auto's choice mostly with both operands along k. */
#if TG_IN_UNIT(ffma128x128_spread)
extern "C" const tg_rung tg_rung_ffma128x128_spread = ffma_rung<128, 128, 8, 3, false, true>(
    "ffma128x128_spread",
    "ffma128x128 with a phase's copies spread over its k steps, each operand's "
    "addresses chained in one register pair");
#endif

#if TG_IN_UNIT(ffma128x256_spread)
extern "C" const tg_rung tg_rung_ffma128x256_spread = ffma_rung<128, 256, 8, 3, true, true>(
    "ffma128x256_spread",
    "ffma128x256 with a phase's copies spread over its k steps, each operand's "
    "addresses chained in one register pair");
#endif

/* ffma128x128_spread and ffma128x256_spread run by stream-K (stream_k.cuh): medium outputs,
 * whose few tiles leave most of a wave idle, keep every SM busy to the end. */
#if TG_IN_UNIT(ffma128x128_spread_sk)
extern "C" const tg_rung tg_rung_ffma128x128_spread_sk =
    ffma_stream_k_rung<128, 128, 8, 3, false, true>("ffma128x128_spread_sk", "ffma128x128_spread",
    "ffma128x128_spread by stream-K: one wave of blocks shares all the tiles' k steps, shared "
    "tiles summed in a fixed order");
#endif

#if TG_IN_UNIT(ffma128x256_spread_sk)
extern "C" const tg_rung tg_rung_ffma128x256_spread_sk =
    ffma_stream_k_rung<128, 256, 8, 3, true, true>("ffma128x256_spread_sk", "ffma128x256_spread",
    "ffma128x256_spread by stream-K: one wave of blocks shares all the tiles' k steps, shared "
    "tiles summed in a fixed order");
#endif
