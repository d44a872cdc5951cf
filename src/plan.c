/*
 * Planning: which backend runs a validated problem, which rung and why, and which host
 * operands travel through device memory.  The reasons are kept as text for `tilegemm explain`
 * and tg_explain.
 *
 * Rules, in order:
 *   - a forced backend or rung is obeyed, or the call fails with the reason it cannot be;
 *   - no GPU: the CPU backend;
 *   - any operand in device or managed memory: CUDA, on the handle's stream;
 *   - all operands on the host: the CPU when the work (m*n*k*batch) is under the handle's
 *     threshold or there is no product to compute (alpha or k is 0), CUDA otherwise;
 *   - on CUDA, `auto` takes the tuned table's rung for the nearest measured shape on this
 *     compute capability and math mode (tuning.h); else the first rung of the preference list
 *     for the shape (preferred_rungs, from the H100 measurements in bench/results/) that the
 *     registry admits to auto, the math mode allows and the problem suits; else the highest
 *     such rung of the ladder;
 *   - a single product whose tiles leave SMs idle and whose k is long is split along k
 *     (split_k.h), whichever rung runs it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuda/backend.h"
#include "cuda/registry.h"
#include "internal.h"
#include "split_k.h"
#include "tuning.h"

static void note(tg_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(tg_plan *plan, const char *fmt, ...)
{
    if (!plan->explaining)
        return;
    const size_t used = strlen(plan->why);
    if (used + 1 >= sizeof plan->why)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plan->why + used, sizeof plan->why - used, fmt, ap);
    va_end(ap);
}

static const char *memory_name(tg_memory kind)
{
    return kind == TG_MEMORY_DEVICE ? "device" : kind == TG_MEMORY_MANAGED ? "managed" : "host";
}

/* The shortest k auto sends to 3xTF32.  Measured on the H100 (bench/accuracy, 1024 x 1024 x k,
 * uniform, wide-range and cancelling data): from k = 256 on its RMS error is no larger than the
 * FFMA rungs' (at k = 64, 1.8 times theirs, at 16, 1.7 to 2.8 times: the dropped small * small
 * term does not shrink with k as rounding in long sums grows). */
#define TG_3XTF32_MIN_K 256

/* Why rung i cannot run p on this handle's GPU (NULL when it can). */
static const char *rung_refuses(const tg_handle *h, int i, const tg_problem *p)
{
    static _Thread_local char reason[96];
    const tg_rung *rung = tg_rungs[i];
    if (h->compute_capability < rung->min_cc) {
        snprintf(reason, sizeof reason, "needs compute capability %d.%d or higher",
                 rung->min_cc / 10, rung->min_cc % 10);
        return reason;
    }
    return rung->unsupported(p);
}

/* Why auto may not pick rung i for p (NULL when it may). */
static const char *auto_refuses(const tg_handle *h, int i, const tg_problem *p)
{
    if (i < 0)
        return "this build has no such rung";
    if (!tg_rungs[i]->in_auto)
        return "not yet admitted to auto (runs only when forced)";
    if (!tg_math_allows(h->math, tg_rungs[i]->arith))
        return h->math == TG_MATH_STRICT_FMA ? "not FP32 FMA arithmetic (math mode strict)"
                                             : "TF32 arithmetic, below FP32 accuracy (math "
                                               "mode fp32)";
    if (tg_rungs[i]->arith == TG_ARITH_3XTF32 && p->k < TG_3XTF32_MIN_K)
        return "k is under 256, where the 3xTF32 split's error exceeds the FFMA rungs' rounding "
               "error (measured)";
    return rung_refuses(h, i, p);
}

/* Where the tuned table has no row near the call: the rungs measured fastest on the H100
 * (bench/results/) for this kind of shape, best first.  Products of fewer than about one wave
 * of 128 x 128 tiles run on the small-tile FFMA rung, which fills the SMs; larger ones on tensor
 * cores where the math mode allows (3xTF32 from k = 256 on, see auto_refuses), else on the
 * large-tile FFMA rungs.  Names this build lacks, or auto may not use, are passed over. */
static const char *const *preferred_rungs(const tg_handle *h, const tg_problem *p)
{
    static const char *const small[] = {"warptile64", "warptile128_l2", NULL};
    static const char *const large[] = {"wgmma3xtf32", "wgmmatf32", "mma3xtf32", "mmatf32",
                                        "ffma128x256", "warptile128_l2", NULL};
    static const char *const large_tf32[] = {"wgmmatf32", "mmatf32", "wgmma3xtf32",
                                             "mma3xtf32", "ffma128x256", "warptile128_l2", NULL};
    const double tiles = (double)((p->m + 127) / 128) * (double)((p->n + 127) / 128) *
                         (double)p->batch;
    if (tiles < (h->sm_count > 0 ? h->sm_count : 132))
        return small;
    return h->math == TG_MATH_TF32 ? large_tf32 : large;
}

static tg_status choose_rung(tg_handle *h, const tg_problem *p, tg_plan *plan)
{
    if (h->algo >= 0) {
        const tg_rung *rung = tg_rungs[h->algo];
        const char *reason = rung_refuses(h, h->algo, p);
        if (reason)
            return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "algo \"%s\" cannot run this call: %s",
                           rung->name, reason);
        plan->rung = h->algo;
        note(plan, "rung: %s (level %d), forced by tg_set_algo: %s\n", rung->name, rung->level,
             rung->summary);
        return TG_SUCCESS;
    }
    note(plan, "math mode: %s\n", tg_math_name(h->math));
    const int cc = h->compute_capability;
    const tg_tuned *tuned = tg_tuning_lookup(tg_tuning_table, tg_tuning_count, cc,
                                             (int)h->math, p);
    if (tuned) {
        const int i = tg_find_rung(tuned->algo);
        const char *reason = auto_refuses(h, i, p);
        if (!reason) {
            plan->rung = i;
            plan->tuned_split_k = tuned->split_k;
            note(plan,
                 "rung: %s (level %d), the fastest measured on sm_%d for %lldx%lldx%lld, the "
                 "nearest tuned shape (%.1f TFLOP/s there): %s\n",
                 tg_rungs[i]->name, tg_rungs[i]->level, cc, (long long)tuned->m,
                 (long long)tuned->n, (long long)tuned->k, tuned->tflops, tg_rungs[i]->summary);
            return TG_SUCCESS;
        }
        note(plan, "tuned table names %s for this shape, not used: %s\n", tuned->algo, reason);
    }
    const char *const *preferred = preferred_rungs(h, p);
    for (; *preferred; ++preferred) {
        const int i = tg_find_rung(*preferred);
        if (auto_refuses(h, i, p))
            continue;
        plan->rung = i;
        note(plan, "rung: %s (level %d), preferred for this shape (measured): %s\n",
             tg_rungs[i]->name, tg_rungs[i]->level, tg_rungs[i]->summary);
        return TG_SUCCESS;
    }
    for (int i = tg_rung_count - 1; i >= 0; --i) {
        const char *reason = auto_refuses(h, i, p);
        if (reason) {
            note(plan, "skipped %s: %s\n", tg_rungs[i]->name, reason);
            continue;
        }
        plan->rung = i;
        note(plan, "rung: %s (level %d), the highest rung that supports this call: %s\n",
             tg_rungs[i]->name, tg_rungs[i]->level, tg_rungs[i]->summary);
        return TG_SUCCESS;
    }
    return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "no CUDA rung supports this call");
}

/* Split-K: forced by tg_set_split_k, else the tuned table's, else the rule of split_k.h. */
static tg_status choose_split_k(tg_handle *h, const tg_problem *p, tg_plan *plan)
{
    if (h->split_k > 1 && p->batch != 1)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "split-K (%d slices, tg_set_split_k) needs a single product, not a "
                       "batch of %lld",
                       h->split_k, (long long)p->batch);
    const int requested = h->split_k ? h->split_k : p->batch == 1 ? plan->tuned_split_k : 0;
    if (requested >= 1) {
        plan->split_k = requested;
        if (requested > 1)
            note(plan, "split-K: %d slices along k, %s\n", requested,
                 h->split_k ? "forced by tg_set_split_k" : "as tuned");
        return TG_SUCCESS;
    }
    const tg_rung *rung = tg_rungs[plan->rung];
    const int sms = h->sm_count;
    plan->split_k = tg_split_k_slices(p, rung->block_rows, rung->block_cols, sms);
    if (plan->split_k > 1)
        note(plan,
             "split-K: %d slices along k, because %lld x %lld in %d x %d tiles leaves most of "
             "the %d SMs idle; the partial products are summed by a reduction kernel\n",
             plan->split_k, (long long)p->m, (long long)p->n, rung->block_rows,
             rung->block_cols, sms);
    return TG_SUCCESS;
}

tg_status tg_make_plan(tg_handle *h, const tg_problem *p, tg_plan *plan, int explain)
{
    memset(plan, 0, sizeof *plan);
    plan->explaining = explain;
    plan->rung = -1;
    plan->split_k = 1;
    const int runs_product = tg_has_product(p->alpha, p->k);
    const char *names[TG_SLOT_SPLIT_K] = {[TG_SLOT_A] = "A", [TG_SLOT_B] = "B", [TG_SLOT_C] = "C"};
    const void *pointers[TG_SLOT_SPLIT_K] = {[TG_SLOT_A] = runs_product ? p->A : NULL,
                                             [TG_SLOT_B] = runs_product ? p->B : NULL,
                                             [TG_SLOT_C] = p->C};
    tg_memory kinds[TG_SLOT_SPLIT_K] = {TG_MEMORY_HOST, TG_MEMORY_HOST, TG_MEMORY_HOST};
    int on_device = -1; /* an operand only the GPU can read, if any */
    int off_host = 0;   /* operands in device or managed memory */
    for (int i = TG_SLOT_A; i <= TG_SLOT_C; ++i) {
        tg_status s = tg_cuda_memory_kind(h, pointers[i], &kinds[i]);
        if (s != TG_SUCCESS)
            return s;
        if (kinds[i] == TG_MEMORY_DEVICE && on_device < 0)
            on_device = i;
        off_host += kinds[i] != TG_MEMORY_HOST;
        plan->managed |= kinds[i] == TG_MEMORY_MANAGED;
    }
    const int gpus = tg_cuda_device_count();
    const double work = (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
    const int wants_cuda = h->backend == TG_BACKEND_CUDA || h->algo >= 0;

    if (h->backend == TG_BACKEND_CPU) {
        if (h->algo >= 0)
            return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                           "algo \"%s\" is a CUDA rung but the CPU backend is forced",
                           tg_rungs[h->algo]->name);
        if (on_device >= 0)
            return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                           "%s is device memory, which the forced CPU backend cannot read",
                           names[on_device]);
        plan->backend = TG_BACKEND_CPU;
        note(plan, "backend: cpu, forced by tg_set_backend or TILEGEMM_BACKEND\n");
    } else if (wants_cuda && gpus == 0) {
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "%s needs a GPU and none was found",
                       h->algo >= 0 ? "the forced algo" : "the forced CUDA backend");
    } else if (wants_cuda) {
        plan->backend = TG_BACKEND_CUDA;
        note(plan, "backend: cuda, forced by %s\n",
             h->algo >= 0 ? "tg_set_algo" : "tg_set_backend or TILEGEMM_BACKEND");
    } else if (gpus == 0) {
        plan->backend = TG_BACKEND_CPU;
        note(plan, "backend: cpu, no GPU was found\n");
    } else if (off_host > 0) {
        plan->backend = TG_BACKEND_CUDA;
        note(plan, "backend: cuda, operands live in GPU-visible memory (A %s, B %s, C %s)\n",
             runs_product ? memory_name(kinds[TG_SLOT_A]) : "unread",
             runs_product ? memory_name(kinds[TG_SLOT_B]) : "unread",
             memory_name(kinds[TG_SLOT_C]));
    } else if (!runs_product) {
        plan->backend = TG_BACKEND_CPU;
        note(plan, "backend: cpu, alpha or k is 0 so only beta * C is computed, on the host\n");
    } else if (work < (double)h->gpu_min_work) {
        plan->backend = TG_BACKEND_CPU;
        note(plan,
             "backend: cpu, host operands and m*n*k*batch = %.0f is under the GPU threshold "
             "%lld (TILEGEMM_GPU_MIN_WORK)\n",
             work, (long long)h->gpu_min_work);
    } else {
        plan->backend = TG_BACKEND_CUDA;
        note(plan,
             "backend: cuda, host operands staged through device memory, m*n*k*batch = %.0f "
             "reaches the GPU threshold %lld (TILEGEMM_GPU_MIN_WORK)\n",
             work, (long long)h->gpu_min_work);
    }

    if (plan->backend == TG_BACKEND_CPU) {
        note(plan, "kernel: cpu blocked (packed panels, register-tiled micro-kernel, OpenMP)\n");
        return TG_SUCCESS;
    }
    int staged = 0;
    for (int i = TG_SLOT_A; i <= TG_SLOT_C; ++i)
        staged |= plan->stage[i] = pointers[i] != NULL && kinds[i] == TG_MEMORY_HOST;
    if (staged)
        note(plan, "staging: %s%s%sthrough device memory, then synchronize\n",
             plan->stage[TG_SLOT_A] ? "A " : "", plan->stage[TG_SLOT_B] ? "B " : "",
             plan->stage[TG_SLOT_C] ? "C " : "");
    if (!runs_product) {
        note(plan, "kernel: scale C by beta (alpha or k is 0, A and B are not read)\n");
        return TG_SUCCESS;
    }
    tg_status s = choose_rung(h, p, plan);
    if (s != TG_SUCCESS)
        return s;
    return choose_split_k(h, p, plan);
}
