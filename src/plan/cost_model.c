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

const tg_model_rung *tg_model_rung_for(const tg_model_device *dev, const char *algo,
                                       const tg_problem *p)
{
    if (!dev)
        return NULL;
    const int a_k = p->a_cs == 1, b_n = p->b_cs == 1;
    for (int i = 0; i < tg_model_rung_count; ++i) {
        const tg_model_rung *r = &tg_model_rungs[i];
        if (r->cc == dev->cc && r->a_k_contiguous == a_k && r->b_n_contiguous == b_n &&
            strcmp(r->algo, algo) == 0)
            return r;
    }
    return NULL;
}

const tg_model_correction *tg_model_correction_for(const tg_model_device *dev, const char *algo,
                                                   const tg_problem *p)
{
    if (!dev)
        return NULL;
    const int a_k = p->a_cs == 1, b_n = p->b_cs == 1;
    for (int i = 0; i < tg_model_correction_count; ++i) {
        const tg_model_correction *c = &tg_model_corrections[i];
        if (c->cc == dev->cc && c->a_k_contiguous == a_k && c->b_n_contiguous == b_n &&
            strcmp(c->algo, algo) == 0)
            return c;
    }
    return NULL;
}
