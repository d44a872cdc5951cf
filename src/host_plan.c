/*
 * What a tiled product of host operands runs (host_split.h, cuda/host_tiles.cu): the GPUs the
 * handle lets it use, and each tile's rung and split-K.  Apart from api.c, which dispatches to
 * the CUDA backend, so that the backend's calls back into planning form no cycle.
 */
#include "internal.h"

int tg_devices_of(const tg_handle *h, int *out)
{
    if (h->device_list > 0) {
        for (int i = 0; i < h->device_list; ++i)
            out[i] = h->devices[i];
        return h->device_list;
    }
    out[0] = h->device;
    return 1;
}

int tg_tile_choice(const tg_handle *h, const tg_problem *p, const tg_tile_grid *g, int64_t t,
                   int64_t q, tg_problem *tile, tg_choice *c)
{
    static _Alignas(256) float device_placeholder[1];
    const tg_tile at = tg_tile_at(g, t);
    int64_t k0, k1;
    tg_k_cut_range(g, q, &k0, &k1);
    const tg_lines a = tg_lines_of(at.m, k1 - k0, p->a_rs, p->a_cs);
    const tg_lines b = tg_lines_of(k1 - k0, at.n, p->b_rs, p->b_cs);
    /* cuts after the first add into the tile */
    *tile = (tg_problem){.m = at.m, .n = at.n, .k = k1 - k0, .alpha = p->alpha,
                         .beta = q == 0 ? p->beta : 1.0f,
                         .A = device_placeholder, .B = device_placeholder,
                         .C = device_placeholder, .ldc = at.n, .batch = 1};
    tg_packed_strides(&a, &tile->a_rs, &tile->a_cs);
    tg_packed_strides(&b, &tile->b_rs, &tile->b_cs);
    const tg_device_props dev = {.compute_capability = h->compute_capability,
                                 .sm_count = h->sm_count, .card = h->card};
    return tg_choose(&dev, h->math, h->algo, h->split_k, tile, c);
}

