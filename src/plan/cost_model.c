/* The planner's cost model; see cost_model.h. */
#include "cost_model.h"

#include <stddef.h>
#include <string.h>

const tg_model_device *tg_model_device_for(int cc)
{
    const tg_model_device *below = NULL, *above = NULL;
    for (int i = 0; i < tg_model_device_count; ++i) {
        const tg_model_device *d = &tg_model_devices[i];
        if (d->cc == cc)
            return d;
        if (d->cc < cc && (!below || d->cc > below->cc))
            below = d;
        if (d->cc > cc && (!above || d->cc < above->cc))
            above = d;
    }
    return below ? below : above;
}

/* Whether a row keyed (cc, algo, a_k, b_n) is the one of `name` for p's orientation class on
 * dev: the key rung and correction rows share. */
static int row_is(int cc, const char *algo, int a_k, int b_n, const tg_model_device *dev,
                  const char *name, const tg_problem *p)
{
    return cc == dev->cc && a_k == (p->a_cs == 1) && b_n == (p->b_cs == 1) &&
           strcmp(algo, name) == 0;
}

const tg_model_rung *tg_model_rung_for(const tg_model_device *dev, const char *algo,
                                       const tg_problem *p)
{
    for (int i = 0; dev && i < tg_model_rung_count; ++i) {
        const tg_model_rung *r = &tg_model_rungs[i];
        if (row_is(r->cc, r->algo, r->a_k_contiguous, r->b_n_contiguous, dev, algo, p))
            return r;
    }
    return NULL;
}

const tg_model_correction *tg_model_correction_for(const tg_model_device *dev, const char *algo,
                                                   const tg_problem *p)
{
    for (int i = 0; dev && i < tg_model_correction_count; ++i) {
        const tg_model_correction *c = &tg_model_corrections[i];
        if (row_is(c->cc, c->algo, c->a_k_contiguous, c->b_n_contiguous, dev, algo, p))
            return c;
    }
    return NULL;
}
