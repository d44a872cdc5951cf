/*
 * CUDA backend: device and stream handling, pointer inspection, staging of host operands and
 * the launch of a planned rung.  Declared in C; built from backend.cu when nvcc is present and
 * from no_cuda.c otherwise, where every function reports that no GPU exists.
 */
#ifndef TG_CUDA_BACKEND_H
#define TG_CUDA_BACKEND_H

#include "../internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of usable GPUs (0 without a driver or device); asked once per process. */
int tg_cuda_device_count(void);

/* The GPU code this build carries and why, for tg_gpu_code (e.g. "built natively for sm_90a,
 * ..."). */
const char *tg_cuda_code(void);

/* What kind of memory ptr is; host for anything the CUDA runtime does not know. */
tg_status tg_cuda_memory_kind(tg_handle *h, const void *ptr, tg_memory *kind);

/* Binds a new handle to the current GPU: records its device, SM count, compute capability,
 * and unless the handle is forced onto the CPU, fails where the build has no code for it. */
tg_status tg_cuda_attach(tg_handle *h);
/* Gives the handle a stream of its own unless it has one (created or the caller's). */
tg_status tg_cuda_ensure_stream(tg_handle *h);
/* Moves the handle to the caller's stream, like cublasSetStream: no host synchronization;
 * the new stream only waits for the old one's use of the handle's workspace. */
tg_status tg_cuda_switch_stream(tg_handle *h, void *stream);
/* Releases the handle's stream (if it owns it) and its workspace. */
void tg_cuda_release(tg_handle *h);
tg_status tg_cuda_synchronize(tg_handle *h);

/* Runs the plan: stages host operands through the workspace, launches, copies C back.
 * Returns after C is written when anything was staged; otherwise asynchronously. */
tg_status tg_cuda_execute(tg_handle *h, const tg_problem *p, const tg_plan *plan);

/* A product of host operands cut into tiles of C over the handle's GPUs (host_tiles.cu; see
 * tg_set_devices and host_split.h): p has A, B and C in host memory and batch 1
 * (tg_runs_tiled).  Returns after C is written, or after every GPU has stopped on an error,
 * which then says whether C is partly written (and h->partial says which tiles).  Sets
 * h->last_rung on success. */
tg_status tg_cuda_execute_tiles(tg_handle *h, const tg_problem *p, const tg_plan *plan);
/* Frees what tiled host products kept on the handle (each GPU's streams and buffers). */
void tg_cuda_release_tiles(tg_handle *h);
/* Fails, as execute would, where this build has no code for the handle's GPU (h->device). */
tg_status tg_cuda_check_code(tg_handle *h);

/* Launches rung i on the device problem d, cut into `slices` along k (1: whole), on the
 * handle's stream, through its workspace: what execute does once operands are on the device. */
tg_status tg_cuda_launch_product(tg_handle *h, int rung, int slices, const tg_problem *d);

/* Autotuning's device side (autotune.cu).  The GPU's model, compute capability and SMs, for the
 * cache (looked up once per device and process). */
struct tg_at_device;
struct tg_at_entry;
tg_status tg_cuda_device_identity(tg_handle *h, struct tg_at_device *dev);
/* Times the planner's best candidates for p (tg_choose_ranked, in the handle's math mode) on
 * scratch device buffers shaped, strided and aligned as p's operands: copies of p's A and B and,
 * when beta != 0, of its C when copy_operands is set, else a constant fill.  The caller's
 * buffers are never written.  Stores the fastest in the cache and writes it to *chosen.
 * Refuses (TG_ERROR_NOT_SUPPORTED) on a capturing stream.  Errors are recorded on the handle. */
tg_status tg_cuda_autotune_measure(tg_handle *h, const tg_problem *p, int copy_operands,
                                   struct tg_at_entry *chosen);
/* The first call of a key (plan->autotune_pending): tg_cuda_autotune_measure with the caller's
 * operands, then plan->rung and plan->split_k follow the fastest.  Never fails the call: on any
 * failure the plan stays the planner's and the handle's error record is left as it was. */
void tg_cuda_autotune(tg_handle *h, const tg_problem *p, tg_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
