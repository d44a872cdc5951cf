/*
 * Where the planner meets autotuning (autotune.h): plan.c's choose_rung asks tg_autotune_cached
 * once, and a measured choice for exactly this key overrides the planner.  choose_rung follows a
 * cached choice only while the math mode lets auto use its rung with those slices
 * (tg_auto_refuses), so the mode's accuracy contract never depends on the cache's contents.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../cuda/backend.h"
#include "../cuda/registry.h"
#include "../internal.h"
#include "autotune.h"

/* why's sentence, written only for tg_explain: formatted on every call, it was host time that
 * every cached call of a few microseconds paid. */
static void reason(const tg_plan *plan, char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void reason(const tg_plan *plan, char *why, size_t size, const char *fmt, ...)
{
    if (!plan->explaining)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
}

int tg_autotune_cached(tg_handle *h, const tg_problem *p, tg_plan *plan, int *slices,
                       char *why, size_t why_size)
{
    why[0] = '\0';
    plan->autotune_pending = 0;
    plan->autotuned = 0;
    if (!h->autotune)
        return -1;
    if (h->split_k != 0) {
        reason(plan, why, why_size, "autotune: on, but split-K is forced (tg_set_split_k): not "
                                "autotuned\n");
        return -1;
    }
    if (plan->stage[TG_SLOT_A] || plan->stage[TG_SLOT_B] || plan->stage[TG_SLOT_C]) {
        reason(plan, why, why_size, "autotune: on, but only calls whose operands are all in GPU "
                                "memory are autotuned (host operands are staged)\n");
        return -1;
    }
    tg_at_device dev;
    /* Asking the device's name is not an error of this call. */
    const tg_error saved = h->error;
    if (tg_cuda_device_identity(h, &dev) != TG_SUCCESS) {
        h->error = saved;
        return -1;
    }
    tg_at_key key;
    tg_at_key_make(&key, (int)h->math, p);
    tg_at_entry e;
    const int found = tg_at_lookup(&dev, &key, &e);
    if (plan->explaining) { /* the cache's one warning, where tg_explain shows it */
        char warning[400];
        tg_at_warning(warning, sizeof warning);
        if (warning[0]) {
            reason(plan, why, why_size, "autotune: warning: %s\n", warning);
            const size_t used = strlen(why);
            why += used, why_size -= used;
        }
    }
    if (!found) {
        plan->autotune_pending = 1;
        reason(plan, why, why_size, "autotune: no measured choice for this key yet (%s, %d-byte "
                                "alignment class): a call times the planner's best %d "
                                "candidates first\n", dev.name, key.align, TG_AT_CANDIDATES);
        return -1;
    }
    const int i = tg_find_rung(e.rung);
    if (i < 0) {
        reason(plan, why, why_size, "autotune: the cached choice %s is not a rung of this build: "
                                "the planner decides\n", e.rung);
        return -1;
    }
    *slices = e.slices;
    const tg_rung *rung = tg_rungs[i];
    reason(plan, why, why_size, "rung: %s (level %d), a cached autotuning choice: measured fastest "
                            "of the planner's best %d candidates on this %s for exactly this "
                            "key (%.3f ms): %s\n",
             rung->name, rung->level, TG_AT_CANDIDATES, dev.name, e.ms, rung->summary);
    return i;
}
