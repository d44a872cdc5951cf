/*
 * The CUDA backend of a build without nvcc: no GPU exists and every pointer is host memory.
 * The planner never sends work here because the device count is 0.  Its empty registry is
 * no_rungs.c, apart, so that the planner's tests can link the emulated one instead
 * (tests/emulated/CMakeLists.txt).
 */
#include <stddef.h>

#include "backend.h"
#include "registry.h"

int tg_cuda_device_count(void) { return 0; }

const char *tg_cuda_code(void) { return "none (built without nvcc)"; }


tg_status tg_cuda_memory_kind(tg_handle *h, const void *ptr, tg_memory *kind)
{
    (void)h, (void)ptr;
    *kind = TG_MEMORY_HOST;
    return TG_SUCCESS;
}

tg_status tg_cuda_attach(tg_handle *h)
{
    (void)h;
    return TG_SUCCESS;
}

tg_status tg_cuda_ensure_stream(tg_handle *h)
{
    (void)h;
    return TG_SUCCESS;
}

/* Never reached: tg_set_stream refuses a stream when no GPU exists. */
tg_status tg_cuda_switch_stream(tg_handle *h, void *stream)
{
    (void)h, (void)stream;
    return TG_SUCCESS;
}

void tg_cuda_release(tg_handle *h) { (void)h; }

tg_status tg_cuda_synchronize(tg_handle *h)
{
    (void)h;
    return TG_SUCCESS;
}

tg_status tg_cuda_execute(tg_handle *h, const tg_problem *p, const tg_plan *plan)
{
    (void)p, (void)plan;
    return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "this build of tilegemm has no CUDA backend");
}

tg_status tg_cuda_launch_product(tg_handle *h, int rung, int slices, const tg_problem *d)
{
    (void)rung, (void)slices, (void)d;
    return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "this build of tilegemm has no CUDA backend");
}

tg_status tg_cuda_device_identity(tg_handle *h, struct tg_at_device *dev)
{
    (void)dev;
    return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "this build of tilegemm has no CUDA backend");
}

tg_status tg_cuda_autotune_measure(tg_handle *h, const tg_problem *p, int copy_operands,
                                   struct tg_at_entry *chosen)
{
    (void)p, (void)copy_operands, (void)chosen;
    return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "this build of tilegemm has no CUDA backend");
}

void tg_cuda_autotune(tg_handle *h, const tg_problem *p, tg_plan *plan)
{
    (void)h, (void)p, (void)plan;
}

tg_status tg_cuda_execute_tiles(tg_handle *h, const tg_problem *p, const tg_plan *plan)
{
    (void)p, (void)plan;
    return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "this build of tilegemm has no CUDA backend");
}

void tg_cuda_release_tiles(tg_handle *h) { (void)h; }

tg_status tg_cuda_check_code(tg_handle *h)
{
    return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "this build of tilegemm has no CUDA backend");
}
