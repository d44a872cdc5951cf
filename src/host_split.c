/* The split of host-operand products into tiles; see host_split.h. */
#include "host_split.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The tile size along one dimension of `extent`: at most cap, near-equal tiles. */
static int64_t tile_size(int64_t extent, int64_t cap)
{
    if (extent <= cap)
        return max64(extent, 1);
    const int64_t count = ceil_div(extent, cap);
    const int64_t size = ceil_div(ceil_div(extent, count), TG_TILE_ALIGN) * TG_TILE_ALIGN;
    return min64(size, cap);
}

tg_tile_grid tg_tile_grid_of(int64_t m, int64_t n, int64_t k)
{
    return tg_tile_grid_capped(m, n, k, TG_TILE_MAX, TG_PANEL_MAX_BYTES, TG_K_CUT_MAX);
}

tg_tile_grid tg_tile_grid_capped(int64_t m, int64_t n, int64_t k, int64_t tile_max,
                                 int64_t panel_max_bytes, int64_t k_cut_max)
{
    /* the panel bound, in whole TG_TILE_ALIGN steps, never below one step */
    int64_t cap = tile_max;
    if (k > 0) {
        const int64_t by_panel = panel_max_bytes / (int64_t)sizeof(float) / k;
        cap = min64(cap, max64(TG_TILE_ALIGN, by_panel / TG_TILE_ALIGN * TG_TILE_ALIGN));
    }
    tg_tile_grid g = {.m = m, .n = n, .k = k};
    g.tile_m = tile_size(m, cap);
    g.tile_n = tile_size(n, cap);
    g.rows = ceil_div(max64(m, 1), g.tile_m);
    g.cols = ceil_div(max64(n, 1), g.tile_n);
    /* near-equal cuts, so that the last is not a sliver */
    g.k_cut = tile_size(k, k_cut_max);
    g.k_cuts = k > 0 ? ceil_div(k, g.k_cut) : 1;
    return g;
}

void tg_k_cut_range(const tg_tile_grid *g, int64_t q, int64_t *k0, int64_t *k1)
{
    *k0 = min64(g->k, q * g->k_cut);
    *k1 = min64(g->k, *k0 + g->k_cut);
}

int64_t tg_tile_count(const tg_tile_grid *g) { return g->rows * g->cols; }

tg_tile tg_tile_at(const tg_tile_grid *g, int64_t t)
{
    tg_tile tile;
    tile.row = t / g->cols;
    tile.col = t % g->cols;
    tile.i0 = tile.row * g->tile_m;
    tile.j0 = tile.col * g->tile_n;
    tile.m = min64(g->tile_m, g->m - tile.i0);
    tile.n = min64(g->tile_n, g->n - tile.j0);
    return tile;
}

void tg_tile_share(const tg_tile_grid *g, int gpus, int gpu, int64_t *lo, int64_t *hi)
{
    const int64_t tiles = tg_tile_count(g);
    *lo = tiles * gpu / gpus;
    *hi = tiles * (gpu + 1) / gpus;
}

int64_t tg_share_rows(const tg_tile_grid *g, int64_t lo, int64_t hi)
{
    return hi <= lo ? 0 : (hi - 1) / g->cols - lo / g->cols + 1;
}

int64_t tg_share_cols(const tg_tile_grid *g, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return 0;
    const int64_t rows = tg_share_rows(g, lo, hi);
    if (rows >= 3)
        return g->cols;
    if (rows == 1)
        return hi - lo;
    /* the end of one row and the start of the next */
    return min64(g->cols, (g->cols - lo % g->cols) + ((hi - 1) % g->cols + 1));
}

int tg_lane_plan_make(const tg_tile_grid *g, int gpus, int gpu, int64_t free_bytes,
                      int64_t extra_bytes, tg_lane_plan *out)
{
    tg_lane_plan p;
    memset(&p, 0, sizeof p);
    tg_tile_share(g, gpus, gpu, &p.lo, &p.hi);
    p.gpu = gpu;
    p.gpus = gpus;
    p.first_row = p.lo / g->cols;
    p.a_panel = g->tile_m * g->k;
    p.b_panel = g->tile_n * g->k;
    p.c_tile = g->tile_m * g->tile_n;
    const int64_t rows = tg_share_rows(g, p.lo, p.hi), cols = tg_share_cols(g, p.lo, p.hi);
    p.c_slots = min64(p.hi - p.lo, TG_C_SLOTS_MAX);
    const int64_t f = (int64_t)sizeof(float);
    const int64_t room =
        free_bytes - TG_DEVICE_RESERVE_BYTES - extra_bytes - p.c_slots * p.c_tile * f;
    const int64_t streamed_a = min64(rows, 2) * p.a_panel * f;
    const int64_t whole_a = rows * p.a_panel * f, whole_b = cols * p.b_panel * f;
    p.a_resident = whole_a + whole_b <= room;
    p.a_slots = p.a_resident ? rows : min64(rows, 2);
    p.b_resident = p.a_resident || streamed_a + whole_b <= room || cols <= 2;
    p.b_slots = p.b_resident ? cols : 2;
    p.device_bytes = (p.c_slots * p.c_tile + p.a_slots * p.a_panel + p.b_slots * p.b_panel) * f;
    *out = p;
    return p.device_bytes <= free_bytes - extra_bytes || p.hi == p.lo;
}

void tg_share_order(const tg_tile_grid *g, const tg_lane_plan *p, int shared_b, int64_t *order,
                    int64_t *columns)
{
    int64_t n = 0;
    if (!p->a_resident) {
        for (int64_t t = p->lo; t < p->hi; ++t)
            order[n++] = t;
        return;
    }
    tg_column_order(g, p->gpus, p->gpu, columns);
    const int64_t r0 = p->first_row, last_row = p->hi > p->lo ? (p->hi - 1) / g->cols : r0;
    if (shared_b) { /* rows in turn over each round of the column order */
        for (int64_t c0 = 0; c0 < g->cols; c0 += p->gpus)
            for (int64_t r = r0; r <= last_row; ++r)
                for (int64_t c = c0; c < c0 + p->gpus && c < g->cols; ++c) {
                    const int64_t t = r * g->cols + columns[c];
                    if (t >= p->lo && t < p->hi)
                        order[n++] = t;
                }
        return;
    }
    const int64_t shells = max64(last_row - r0 + 1, g->cols);
    for (int64_t s = 0; s < shells; ++s) {
        if (s < g->cols) /* column s above row r0 + s */
            for (int64_t r = r0; r < r0 + s && r <= last_row; ++r) {
                const int64_t t = r * g->cols + columns[s];
                if (t >= p->lo && t < p->hi)
                    order[n++] = t;
            }
        if (r0 + s <= last_row) /* row r0 + s up to column s */
            for (int64_t c = 0; c <= s && c < g->cols; ++c) {
                const int64_t t = (r0 + s) * g->cols + columns[c];
                if (t >= p->lo && t < p->hi)
                    order[n++] = t;
            }
    }
}

/* The first column owner o owns (its block ends where o + 1's starts). */
static int64_t first_owned(const tg_tile_grid *g, int gpus, int64_t o)
{
    return (o * g->cols + gpus - 1) / gpus;
}

void tg_column_order(const tg_tile_grid *g, int gpus, int gpu, int64_t *columns)
{
    int64_t n = 0;
    for (int64_t rank = 0; n < g->cols; ++rank)
        for (int64_t i = 0; i < gpus; ++i) {
            const int64_t owner = (gpu + i) % gpus;
            const int64_t col = first_owned(g, gpus, owner) + rank;
            if (col < first_owned(g, gpus, owner + 1))
                columns[n++] = col;
        }
}

int tg_b_owner(const tg_tile_grid *g, int gpus, int64_t col)
{
    return (int)(col * gpus / g->cols);
}

int64_t tg_chunk_count(int64_t total)
{
    return ceil_div(total, TG_BOUNCE_BYTES / (int64_t)sizeof(float));
}

void tg_chunk_range(int64_t total, int64_t chunk, int64_t *e0, int64_t *e1)
{
    const int64_t per = TG_BOUNCE_BYTES / (int64_t)sizeof(float);
    *e0 = chunk * per;
    *e1 = min64(total, *e0 + per);
}

int tg_fill_parts(int64_t floats, int threads)
{
    const int64_t by_size = floats * (int64_t)sizeof(float) / TG_FILL_PART_BYTES;
    return (int)max64(1, min64(by_size, max64(threads, 1)));
}

void tg_part_range(int64_t e0, int64_t e1, int parts, int part, int64_t *lo, int64_t *hi)
{
    const int64_t len = e1 - e0;
    *lo = e0 + len * part / parts;
    *hi = e0 + len * (part + 1) / parts;
}

/* Copies len floats with stores that bypass the cache where the CPU has them (x86's SSE2):
 * what is written here is read next by a DMA engine (pinned staging) or by the caller much
 * later (C), and an ordinary store first reads its line into the cache, half again as much
 * traffic through the host's memory, which bounds pageable staging.  The caller fences. */
static void copy_line(float *dst, const float *src, int64_t len)
{
#if defined(__SSE2__)
    if (len >= 1024) {
        for (; ((uintptr_t)dst & 15) != 0; --len)
            *dst++ = *src++;
        int64_t i = 0;
        for (; i + 16 <= len; i += 16) {
            const __m128 x0 = _mm_loadu_ps(src + i), x1 = _mm_loadu_ps(src + i + 4);
            const __m128 x2 = _mm_loadu_ps(src + i + 8), x3 = _mm_loadu_ps(src + i + 12);
            _mm_stream_ps(dst + i, x0);
            _mm_stream_ps(dst + i + 4, x1);
            _mm_stream_ps(dst + i + 8, x2);
            _mm_stream_ps(dst + i + 12, x3);
        }
        memcpy(dst + i, src + i, (size_t)(len - i) * sizeof(float));
        return;
    }
#endif
    memcpy(dst, src, (size_t)len * sizeof(float));
}

/* Walks the lines that packed elements [e0, e1) cross: dst_or_src packed, the view at view. */
static void move_range(float *packed_dst, const float *packed_src, float *view_dst,
                       const float *view_src, const tg_lines *l, int64_t e0, int64_t e1)
{
    int64_t e = e0;
    while (e < e1) {
        const int64_t line = e / l->length, offset = e % l->length;
        const int64_t len = min64(l->length - offset, e1 - e);
        const int64_t at = line * l->pitch + offset;
        if (packed_dst)
            copy_line(packed_dst + (e - e0), view_src + at, len);
        else
            copy_line(view_dst + at, packed_src + (e - e0), len);
        e += len;
    }
#if defined(__SSE2__)
    _mm_sfence(); /* the streamed stores are seen before whoever is told the range is done */
#endif
}

void tg_pack_range(float *dst, const float *src, const tg_lines *lines, int64_t e0, int64_t e1)
{
    move_range(dst, NULL, NULL, src, lines, e0, e1);
}

void tg_unpack_range(float *dst, const float *packed, const tg_lines *lines, int64_t e0,
                     int64_t e1)
{
    move_range(NULL, packed, dst, NULL, lines, e0, e1);
}
