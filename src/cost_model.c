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

static double ceil_div(double a, double b) { return (double)(int64_t)((a + b - 1.0) / b); }

double tg_model_seconds(const tg_model_device *dev, const tg_model_rung *row, int block_rows,
                        int block_cols, int sm_count, const tg_problem *p, int slices)
{
    const double m = (double)p->m, n = (double)p->n, k = (double)p->k;
    const double batch = (double)p->batch, s = (double)slices;
    const double tiles = ceil_div(m, block_rows) * ceil_div(n, block_cols) * batch * s;
    const double waves = ceil_div(tiles, (double)sm_count * row->occupancy);
    const double ksteps = ceil_div(ceil_div(k, s), row->bk);
    const double compute_us = waves * (row->wave_us + row->kstep_us * ksteps);
    const double per_us = dev->dram_gbs * 1e3; /* bytes a microsecond */
    const double c_passes = slices > 1 ? s : p->beta != 0.0f ? 2.0 : 1.0;
    const double memory_us = 4.0 * batch * (m * k + k * n + c_passes * m * n) / per_us;
    double us = dev->launch_us + (compute_us > memory_us ? compute_us : memory_us);
    if (slices > 1) /* the reduction reads every partial product and writes C */
        us += dev->launch_us + 4.0 * m * n * (s + 1.0 + (p->beta != 0.0f)) / per_us;
    return us * 1e-6;
}
