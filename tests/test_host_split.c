/*
 * The split of host-operand products across GPUs (host_split.h), replayed on the CPU.
 *
 * Arithmetic: the grid's tiles cover m x n exactly, within their bounds, for shapes from 1 to
 * past 2^31 elements; every tile belongs to exactly one GPU for 1 to 70 GPUs, in balanced
 * contiguous shares; the rows and columns a share touches; the k-cuts; each share's visiting
 * order (every tile once, growing squares where the panels stay); the lanes' device plans;
 * pageable chunks and their parts.
 *
 * The environment and tg_set_devices' checks; the BLAS fallback's CPU finishing of a C whose
 * tiles were partly written (beta applied once everywhere).
 *
 * The whole split, emulated: every orientation (both layouts, all transposes), odd shapes,
 * padded leading dimensions, beta = 0 (C poisoned with NaN, which must not come back) and
 * beta != 0, over 1, 2, 3, 5 and 8 GPUs, each visiting its tiles in its plan's order: each
 * tile's C tile and each k-cut of its A and B panels are packed in chunks of odd sizes, split
 * into parts as host threads split them, multiplied cut after cut on packed strides with one
 * fixed k order (the first cut with beta, the later ones adding), and unpacked into C.  C must
 * be bit-identical to the direct product and across GPU counts, each element written exactly
 * once, nothing outside C touched.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "host_copy.h"
#include "host_split.h"
#include "internal.h"
#include "testing.h"

/* --- Arithmetic ----------------------------------------------------------------------------- */

static void check_grid(int64_t m, int64_t n, int64_t k)
{
    const tg_tile_grid g = tg_tile_grid_of(m, n, k);
    EXPECT(g.tile_m >= 1 && g.tile_n >= 1 && g.tile_m <= TG_TILE_MAX && g.tile_n <= TG_TILE_MAX,
           "%lldx%lldx%lld: tiles %lldx%lld", (long long)m, (long long)n, (long long)k,
           (long long)g.tile_m, (long long)g.tile_n);
    EXPECT((g.rows - 1) * g.tile_m < m && g.rows * g.tile_m >= m, "%lld rows of %lld for m %lld",
           (long long)g.rows, (long long)g.tile_m, (long long)m);
    EXPECT((g.cols - 1) * g.tile_n < n && g.cols * g.tile_n >= n, "%lld cols of %lld for n %lld",
           (long long)g.cols, (long long)g.tile_n, (long long)n);
    if (g.rows > 1)
        EXPECT(g.tile_m % TG_TILE_ALIGN == 0, "tile_m %lld", (long long)g.tile_m);
    if (g.cols > 1)
        EXPECT(g.tile_n % TG_TILE_ALIGN == 0, "tile_n %lld", (long long)g.tile_n);
    /* a panel within its bound, or the tile at its smallest */
    const int64_t panel = (g.tile_m > g.tile_n ? g.tile_m : g.tile_n) * k * 4;
    EXPECT(panel <= TG_PANEL_MAX_BYTES || (g.tile_m <= TG_TILE_ALIGN && g.tile_n <= TG_TILE_ALIGN),
           "%lldx%lldx%lld: a panel of %lld bytes", (long long)m, (long long)n, (long long)k,
           (long long)panel);
    /* k-cuts: consecutive, covering k, none empty (but for k = 0), aligned but the last */
    int64_t next_k = 0, bad_cuts = 0;
    for (int64_t q = 0; q < g.k_cuts; ++q) {
        int64_t k0, k1;
        tg_k_cut_range(&g, q, &k0, &k1);
        bad_cuts += k0 != next_k || (k1 <= k0 && k > 0) || k1 - k0 > TG_K_CUT_MAX ||
                    (q + 1 < g.k_cuts && (k1 - k0) % TG_TILE_ALIGN != 0);
        next_k = k1;
    }
    EXPECT(bad_cuts == 0 && next_k == k && g.k_cuts >= 1 && g.k_cuts <= k / TG_K_CUT_MAX + 1,
           "k %lld: %lld cuts of %lld, %lld wrong, reaching %lld", (long long)k,
           (long long)g.k_cuts, (long long)g.k_cut, (long long)bad_cuts, (long long)next_k);
    /* the last tile of each row and column is the remainder, never empty */
    const tg_tile last = tg_tile_at(&g, tg_tile_count(&g) - 1);
    EXPECT(last.i0 + last.m == m && last.j0 + last.n == n && last.m > 0 && last.n > 0,
           "%lldx%lld: last tile at %lld,%lld of %lldx%lld", (long long)m, (long long)n,
           (long long)last.i0, (long long)last.j0, (long long)last.m, (long long)last.n);
}

/* B's owners: contiguous blocks of columns; each GPU's column order a permutation that starts
 * with its own first column and takes every owner's columns in their order, its own before
 * any other's of the same rank. */
static void check_owners(const tg_tile_grid *g, int gpus)
{
    int bad = 0;
    for (int64_t col = 0; col < g->cols; ++col) {
        const int owner = tg_b_owner(g, gpus, col);
        bad += owner < 0 || owner >= gpus || (col > 0 && owner < tg_b_owner(g, gpus, col - 1));
    }
    int64_t *columns = malloc((size_t)g->cols * sizeof(int64_t));
    int64_t *place = malloc((size_t)g->cols * sizeof(int64_t));
    for (int gpu = 0; gpu < gpus && gpu < 8; ++gpu) {
        for (int64_t col = 0; col < g->cols; ++col)
            place[col] = -1;
        tg_column_order(g, gpus, gpu, columns);
        for (int64_t i = 0; i < g->cols; ++i) {
            const int64_t col = columns[i];
            if (col < 0 || col >= g->cols || place[col] >= 0) {
                ++bad;
                continue;
            }
            place[col] = i;
        }
        for (int64_t col = 1; col < g->cols; ++col) /* an owner's columns in order */
            if (tg_b_owner(g, gpus, col) == tg_b_owner(g, gpus, col - 1))
                bad += place[col] < place[col - 1];
        if (tg_b_owner(g, gpus, columns[0]) == gpu) /* it starts with its own, where it has */
            bad += columns[0] > 0 && tg_b_owner(g, gpus, columns[0] - 1) == gpu;
        else
            for (int64_t col = 0; col < g->cols; ++col)
                bad += tg_b_owner(g, gpus, col) == gpu;
    }
    free(columns), free(place);
    EXPECT(bad == 0, "%lld columns over %d GPUs: %d wrong owners or column orders",
           (long long)g->cols, gpus, bad);
}

/* The visiting order of GPU gpu's share, resident (growing squares, or rounds of the column
 * order where B is shared) and streamed (row-major): every tile of the share once; squares: a
 * tile comes after every tile of the share that reads only panels it reads too or ones loaded
 * earlier, i.e. each tile needs at most the panels of its own row and column besides those
 * already in; shared B: rounds of tg_column_order's order (gpus places each) in turn, rows in
 * turn within a round, columns in that order within a row; row-major where streamed. */
static void check_order(const tg_tile_grid *g, int gpus, int gpu)
{
    for (int mode = 0; mode < 3; ++mode) { /* streamed, squares, rounds over shared B */
        const int resident = mode > 0, shared_b = mode == 2;
        tg_lane_plan plan;
        tg_lane_plan_make(g, gpus, gpu, resident ? (int64_t)1 << 50 : 0, 0, &plan);
        EXPECT(plan.a_resident == resident && (!resident || plan.b_resident),
               "%d of %d GPUs: a_resident %d with %s memory", gpu, gpus, plan.a_resident,
               resident ? "ample" : "no");
        const int64_t count = plan.hi - plan.lo;
        int64_t *order = malloc((size_t)(count + 1) * sizeof(int64_t));
        unsigned char *seen = calloc((size_t)(count + 1), 1);
        int64_t *columns = malloc((size_t)g->cols * sizeof(int64_t));
        int64_t *place = malloc((size_t)g->cols * sizeof(int64_t));
        tg_share_order(g, &plan, shared_b, order, columns);
        tg_column_order(g, gpus, gpu, columns);
        for (int64_t i = 0; i < g->cols; ++i)
            place[columns[i]] = i;
        int64_t wrong = 0, shell = 0, worse = 0, last = -1;
        for (int64_t i = 0; i < count; ++i) {
            const int64_t t = order[i];
            if (t < plan.lo || t >= plan.hi || seen[t - plan.lo]) {
                ++wrong;
                continue;
            }
            seen[t - plan.lo] = 1;
            const tg_tile tile = tg_tile_at(g, t);
            const int64_t rel = tile.row - plan.first_row;
            const int64_t col = place[tile.col];
            const int64_t s = rel > col ? rel : col;
            /* shared B: the round of the column order, the row, the column's place */
            const int64_t at = (col / gpus * g->rows + tile.row) * g->cols + col;
            if (shared_b)
                worse += at <= last;
            else if (resident)
                worse += s < shell; /* shells never go back */
            else
                worse += t != plan.lo + i;
            shell = s;
            last = at;
        }
        EXPECT(wrong == 0 && worse == 0,
               "%lldx%lld tiles, GPU %d of %d (%s): %lld tiles out of the share or twice, %lld "
               "out of order", (long long)g->rows, (long long)g->cols, gpu, gpus,
               shared_b ? "resident, shared B" : resident ? "resident" : "streamed",
               (long long)wrong, (long long)worse);
        free(order), free(seen), free(columns), free(place);
    }
}

static void check_shares(int64_t m, int64_t n, int64_t k)
{
    const tg_tile_grid g = tg_tile_grid_of(m, n, k);
    const int64_t tiles = tg_tile_count(&g);
    for (int gpus = 1; gpus <= 70; ++gpus) {
        int64_t next = 0, smallest = tiles, largest = 0;
        for (int gpu = 0; gpu < gpus; ++gpu) {
            int64_t lo, hi;
            tg_tile_share(&g, gpus, gpu, &lo, &hi);
            EXPECT(lo == next && hi >= lo, "%d GPUs: GPU %d has [%lld, %lld) after %lld", gpus,
                   gpu, (long long)lo, (long long)hi, (long long)next);
            next = hi;
            smallest = hi - lo < smallest ? hi - lo : smallest;
            largest = hi - lo > largest ? hi - lo : largest;
            if (tiles <= 64) { /* rows and columns touched, against a count */
                unsigned char rows[64] = {0}, cols[64] = {0};
                int64_t nr = 0, nc = 0;
                for (int64_t t = lo; t < hi; ++t) {
                    const tg_tile tile = tg_tile_at(&g, t);
                    nr += !rows[tile.row], rows[tile.row] = 1;
                    nc += !cols[tile.col], cols[tile.col] = 1;
                }
                EXPECT(tg_share_rows(&g, lo, hi) == nr && tg_share_cols(&g, lo, hi) == nc,
                       "%lldx%lld, %d GPUs, [%lld, %lld): rows %lld (counted %lld), cols %lld "
                       "(counted %lld)", (long long)m, (long long)n, gpus, (long long)lo,
                       (long long)hi, (long long)tg_share_rows(&g, lo, hi), (long long)nr,
                       (long long)tg_share_cols(&g, lo, hi), (long long)nc);
            }
        }
        if (tiles <= 4096 && gpus % 3 == 1) {
            for (int gpu = 0; gpu < gpus; ++gpu)
                check_order(&g, gpus, gpu);
            check_owners(&g, gpus);
        }
        EXPECT(next == tiles, "%d GPUs cover %lld of %lld tiles", gpus, (long long)next,
               (long long)tiles);
        EXPECT(largest - smallest <= 1, "%d GPUs: shares from %lld to %lld tiles", gpus,
               (long long)smallest, (long long)largest);
    }
}

static void check_lane_plans(void)
{
    const int64_t gib = (int64_t)1 << 30;
    const tg_tile_grid g = tg_tile_grid_of(16384, 16384, 16384);
    EXPECT(g.rows == 4 && g.cols == 4 && g.tile_m == 4096, "16384^3: %lldx%lld tiles of %lld",
           (long long)g.rows, (long long)g.cols, (long long)g.tile_m);
    tg_lane_plan p;
    /* an H100: its rows of A and all of B (1 GiB) are kept whole */
    EXPECT(tg_lane_plan_make(&g, 2, 1, 79 * gib, 0, &p) == 1 && p.a_resident && p.b_resident &&
               p.b_slots == 4 && p.a_slots == 2 && p.c_slots == 3 && p.lo == 8 && p.hi == 16 &&
               p.first_row == 2,
           "16384^3, GPU 1 of 2: resident %d %d, %lld B slots, tiles [%lld, %lld)", p.a_resident,
           p.b_resident, (long long)p.b_slots, (long long)p.lo, (long long)p.hi);
    EXPECT(p.device_bytes == (2 * 4096LL * 16384 + 3 * 4096LL * 4096 + 4 * 4096LL * 16384) * 4,
           "device bytes %lld", (long long)p.device_bytes);
    /* one GPU: all of A and B, 2 GiB, with 3 GiB; with 2.6 GiB only B; with 2 GiB neither */
    EXPECT(tg_lane_plan_make(&g, 1, 0, 3 * gib, 0, &p) == 1 && p.a_resident && p.a_slots == 4,
           "3 GiB: A not kept whole");
    EXPECT(tg_lane_plan_make(&g, 1, 0, 26 * gib / 10, 0, &p) == 1 && !p.a_resident &&
               p.a_slots == 2 && p.b_resident,
           "2.6 GiB: resident %d %d", p.a_resident, p.b_resident);
    EXPECT(tg_lane_plan_make(&g, 1, 0, 2 * gib, 0, &p) == 1 && !p.b_resident && p.b_slots == 2,
           "2 GiB: resident %d, %lld slots", p.b_resident, (long long)p.b_slots);
    EXPECT(p.device_bytes <= 2 * gib, "2 GiB: %lld bytes planned", (long long)p.device_bytes);
    /* too little for anything */
    EXPECT(tg_lane_plan_make(&g, 1, 0, gib, 0, &p) == 0, "1 GiB: said to fit");
    /* split-K's workspace counts against the room */
    EXPECT(tg_lane_plan_make(&g, 1, 0, 4 * gib, 2 * gib, &p) == 1 && !p.b_resident,
           "4 GiB with 2 of workspace: resident %d", p.b_resident);
    /* more GPUs than tiles: nothing to hold */
    const tg_tile_grid one = tg_tile_grid_of(100, 100, 100);
    EXPECT(tg_lane_plan_make(&one, 2, 0, 0, 0, &p) == 1 && p.hi == p.lo && p.device_bytes == 0,
           "an empty share plans %lld bytes", (long long)p.device_bytes);
}

static void check_chunks(void)
{
    const int64_t per = TG_BOUNCE_BYTES / 4;
    const int64_t totals[] = {1, per - 1, per, per + 1, 3 * per + 7, 4096LL * 16384};
    for (size_t i = 0; i < sizeof totals / sizeof *totals; ++i) {
        const int64_t total = totals[i], chunks = tg_chunk_count(total);
        int64_t next = 0;
        for (int64_t c = 0; c < chunks; ++c) {
            int64_t e0, e1;
            tg_chunk_range(total, c, &e0, &e1);
            EXPECT(e0 == next && e1 > e0 && e1 - e0 <= per, "total %lld chunk %lld: [%lld, %lld)",
                   (long long)total, (long long)c, (long long)e0, (long long)e1);
            next = e1;
            for (int threads = 1; threads <= 33; threads += 8) {
                const int parts = tg_fill_parts(e1 - e0, threads);
                EXPECT(parts >= 1 && parts <= threads, "%d parts for %d threads", parts, threads);
                int64_t at = e0;
                for (int p = 0; p < parts; ++p) {
                    int64_t lo, hi;
                    tg_part_range(e0, e1, parts, p, &lo, &hi);
                    EXPECT(lo == at && hi >= lo, "part %d [%lld, %lld)", p, (long long)lo,
                           (long long)hi);
                    if (parts > 1)
                        EXPECT((hi - lo) * 4 >= TG_FILL_PART_BYTES / 2, "a part of %lld floats",
                               (long long)(hi - lo));
                    at = hi;
                }
                EXPECT(at == e1, "parts end at %lld, not %lld", (long long)at, (long long)e1);
            }
        }
        EXPECT(next == total, "chunks of %lld end at %lld", (long long)total, (long long)next);
    }
}

/* --- The host copy helpers: the same bytes as one thread's copy, from two posters at once -- */

typedef struct poster {
    tg_copiers *copiers;
    const float *view;
    tg_lines lines;
    float *packed, *back;
} poster;

static void *post(void *arg)
{
    poster *q = arg;
    const int64_t total = q->lines.count * q->lines.length;
    tg_copy_job job = {.unpack = 0, .dst = q->packed, .src = q->view, .lines = q->lines,
                       .e0 = 0, .e1 = total};
    tg_copy_run(q->copiers, &job);
    tg_copy_job back = {.unpack = 1, .dst = q->back, .src = q->packed, .lines = q->lines,
                        .e0 = 0, .e1 = total};
    tg_copy_run(q->copiers, &back);
    return NULL;
}

static void check_copiers(int threads)
{
    const int64_t rows = 700, cols = 3001, pitch = 3005, span = rows * pitch;
    float *view = malloc((size_t)span * 4);
    for (int64_t e = 0; e < span; ++e)
        view[e] = (float)e;
    poster q[2];
    pthread_t other;
    for (int i = 0; i < 2; ++i) {
        q[i] = (poster){.view = view, .lines = tg_lines_of(rows, cols - i, pitch, 1),
                        .packed = malloc((size_t)(rows * cols) * 4),
                        .back = calloc((size_t)span, 4)};
    }
    tg_copiers *c = tg_copiers_start(threads);
    EXPECT(threads == 0 ? c == NULL : tg_copiers_size(c) >= 1, "%d threads: group of %d",
           threads, tg_copiers_size(c));
    q[0].copiers = q[1].copiers = c;
    const int two = pthread_create(&other, NULL, post, &q[1]) == 0;
    post(&q[0]);
    if (two)
        pthread_join(other, NULL);
    else
        post(&q[1]);
    tg_copiers_stop(c);
    for (int i = 0; i < 2; ++i) {
        int wrong = 0;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < cols - i; ++j) {
                wrong += q[i].packed[r * (cols - i) + j] != view[r * pitch + j];
                wrong += q[i].back[r * pitch + j] != view[r * pitch + j];
            }
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = cols - i; j < pitch; ++j)
                wrong += q[i].back[r * pitch + j] != 0.0f;
        EXPECT(wrong == 0, "%d helpers, poster %d: %d elements wrong", threads, i, wrong);
        free(q[i].packed), free(q[i].back);
    }
    free(view);
}

/* --- The split, emulated -------------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static float small_int(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    const int r = (int)(rng >> 59) - 16;
    return (float)(r + (r >= 0)) * 0.375f; /* -16..16 without 0: operands are never zero */
}

/* Packs a view in chunks of `chunk` floats, each cut into `parts` parts, as the staging does. */
static void pack(float *dst, const float *src, int64_t rows, int64_t cols, int64_t rs,
                 int64_t cs, int64_t chunk, int parts, int64_t *prs, int64_t *pcs)
{
    const tg_lines l = tg_lines_of(rows, cols, rs, cs);
    const int64_t total = l.count * l.length;
    for (int64_t e0 = 0; e0 < total; e0 += chunk) {
        const int64_t e1 = e0 + chunk < total ? e0 + chunk : total;
        for (int p = 0; p < parts; ++p) {
            int64_t lo, hi;
            tg_part_range(e0, e1, parts, p, &lo, &hi);
            tg_pack_range(dst + lo, src, &l, lo, hi);
        }
    }
    tg_packed_strides(&l, prs, pcs);
}

static void unpack(float *dst, const float *packed, int64_t rows, int64_t cols, int64_t ld,
                   int64_t chunk, int parts)
{
    const tg_lines l = tg_lines_of(rows, cols, ld, 1);
    const int64_t total = l.count * l.length;
    for (int64_t e0 = 0; e0 < total; e0 += chunk) {
        const int64_t e1 = e0 + chunk < total ? e0 + chunk : total;
        for (int p = parts - 1; p >= 0; --p) { /* parts finish in any order */
            int64_t lo, hi;
            tg_part_range(e0, e1, parts, p, &lo, &hi);
            tg_unpack_range(dst, packed + lo, &l, lo, hi);
        }
    }
}

/* C(i, j) = alpha * sum_p A(i, p) B(p, j) [+ beta C(i, j)], k in order, as one tile's rung does
 * on any GPU: the same sum wherever the tile runs. */
static void product(int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t a_rs,
                    int64_t a_cs, const float *B, int64_t b_rs, int64_t b_cs, float beta,
                    float *C, int64_t ldc)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (int64_t p = 0; p < k; ++p)
                acc = fmaf(A[i * a_rs + p * a_cs], B[p * b_rs + j * b_cs], acc);
            float *c = &C[i * ldc + j];
            *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
        }
}

/* The split of p over `gpus` GPUs, each tile staged as host_tiles.cu stages it.  owner (the
 * layout of C) gets the tile's number + 1 where it writes. */
static void emulate(const tg_problem *p, const tg_tile_grid *g, int gpus, float *C, float *owner,
                    int64_t chunk, int parts, int resident)
{
    float *a = malloc((size_t)(g->tile_m * p->k + 1) * sizeof(float));
    float *b = malloc((size_t)(g->tile_n * p->k + 1) * sizeof(float));
    float *c = malloc((size_t)(g->tile_m * g->tile_n) * sizeof(float));
    float *mark = malloc((size_t)(g->tile_m * g->tile_n) * sizeof(float));
    int64_t *order = malloc((size_t)(tg_tile_count(g) + 1) * sizeof(int64_t));
    int64_t *columns = malloc((size_t)g->cols * sizeof(int64_t));
    for (int gpu = 0; gpu < gpus; ++gpu) {
        tg_lane_plan plan;
        tg_lane_plan_make(g, gpus, gpu, resident ? (int64_t)1 << 50 : 0, 0, &plan);
        tg_share_order(g, &plan, resident && gpus > 1, order, columns); /* B shared over GPUs */
        for (int64_t i = 0; i < plan.hi - plan.lo; ++i) {
            const int64_t t = order[i];
            const tg_tile tile = tg_tile_at(g, t);
            int64_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
            float *c_at = C + tile.i0 * p->ldc + tile.j0;
            if (p->beta != 0.0f) {
                pack(c, c_at, tile.m, tile.n, p->ldc, 1, chunk, parts, &c_rs, &c_cs);
                EXPECT(c_rs == tile.n && c_cs == 1, "a packed C tile has rows %lld, %lld apart",
                       (long long)c_rs, (long long)c_cs);
            } else {
                for (int64_t e = 0; e < tile.m * tile.n; ++e)
                    c[e] = NAN; /* the device's C slot holds an earlier tile: never read */
            }
            for (int64_t q = 0; q < g->k_cuts; ++q) {
                int64_t k0, k1;
                tg_k_cut_range(g, q, &k0, &k1);
                float *a_cut = a + tile.m * k0, *b_cut = b + tile.n * k0;
                pack(a_cut, p->A + tile.i0 * p->a_rs + k0 * p->a_cs, tile.m, k1 - k0, p->a_rs,
                     p->a_cs, chunk, parts, &a_rs, &a_cs);
                pack(b_cut, p->B + k0 * p->b_rs + tile.j0 * p->b_cs, k1 - k0, tile.n, p->b_rs,
                     p->b_cs, chunk, parts, &b_rs, &b_cs);
                product(tile.m, tile.n, k1 - k0, p->alpha, a_cut, a_rs, a_cs, b_cut, b_rs, b_cs,
                        q == 0 ? p->beta : 1.0f, c, tile.n);
            }
            unpack(c_at, c, tile.m, tile.n, p->ldc, chunk, parts);
            for (int64_t e = 0; e < tile.m * tile.n; ++e)
                mark[e] = (float)(t + 1);
            /* an element already marked is written twice: the count below shows it */
            unpack(owner + tile.i0 * p->ldc + tile.j0, mark, tile.m, tile.n, p->ldc, chunk,
                   parts);
        }
    }
    free(a), free(b), free(c), free(mark), free(order), free(columns);
}

static void check_split(tg_layout layout, tg_op ta, tg_op tb, int64_t m, int64_t n, int64_t k,
                        int pad, float beta)
{
    char what[200];
    snprintf(what, sizeof what, "%s %c%c %lldx%lldx%lld pad %d beta %g",
             layout == TG_ROW_MAJOR ? "row" : "col", ta == TG_TRANS ? 'T' : 'N',
             tb == TG_TRANS ? 'T' : 'N', (long long)m, (long long)n, (long long)k, pad,
             (double)beta);
    /* stored sizes of op(A) (m x k), op(B) (k x n), C (m x n) */
    const int row = layout == TG_ROW_MAJOR;
    const int64_t a_lines = (row ? (ta == TG_NO_TRANS ? m : k) : (ta == TG_NO_TRANS ? k : m));
    const int64_t b_lines = (row ? (tb == TG_NO_TRANS ? k : n) : (tb == TG_NO_TRANS ? n : k));
    const int64_t c_lines = row ? m : n;
    const int64_t lda = tg_min_ld(layout, ta, m, k) + pad;
    const int64_t ldb = tg_min_ld(layout, tb, k, n) + pad;
    const int64_t ldc = tg_min_ld(layout, TG_NO_TRANS, m, n) + pad;
    const size_t a_size = (size_t)(a_lines * lda), b_size = (size_t)(b_lines * ldb);
    const size_t c_size = (size_t)(c_lines * ldc);
    float *A = malloc(a_size * 4), *B = malloc(b_size * 4), *C0 = malloc(c_size * 4);
    float *ref = malloc(c_size * 4), *got = malloc(c_size * 4), *first = malloc(c_size * 4);
    float *owner = malloc(c_size * 4);
    int nonzero = 0;
    for (size_t e = 0; e < a_size; ++e)
        nonzero += (A[e] = small_int()) != 0.0f;
    for (size_t e = 0; e < b_size; ++e)
        B[e] = small_int();
    for (size_t e = 0; e < c_size; ++e)
        C0[e] = beta == 0.0f ? NAN : small_int();
    EXPECT(nonzero > 0, "%s: A is all zero", what);
    const float alpha = 0.75f;
    tg_call call = {.layout = layout, .transa = ta, .transb = tb, .m = m, .n = n, .k = k,
                    .alpha = alpha, .beta = beta, .A = A, .lda = lda, .B = B, .ldb = ldb,
                    .C = ref, .ldc = ldc, .batch = 1};
    tg_problem p;
    memcpy(ref, C0, c_size * 4);
    tg_normalize(&call, &p);
    product(p.m, p.n, p.k, p.alpha, p.A, p.a_rs, p.a_cs, p.B, p.b_rs, p.b_cs, p.beta, p.C, p.ldc);
    /* small caps: many tiles, panel-bound cuts at larger k, k-cuts of 128 */
    const tg_tile_grid g = tg_tile_grid_capped(p.m, p.n, p.k, 128, 128 * 40 * 4, 128);
    const int gpu_counts[] = {1, 2, 3, 5, 8};
    for (int gi = 0; gi < 5; ++gi) {
        const int gpus = gpu_counts[gi];
        memcpy(got, C0, c_size * 4);
        memset(owner, 0, c_size * 4);
        call.C = got;
        tg_normalize(&call, &p);
        const int64_t chunk = 37 + 91 * gi; /* chunks that cross lines anywhere */
        emulate(&p, &g, gpus, got, owner, chunk, 1 + gi, gi % 2 == 0);
        int wrong = 0, nan = 0, twice = 0, outside = 0;
        int64_t written = 0;
        for (size_t e = 0; e < c_size; ++e) {
            const int64_t line = (int64_t)e / ldc, at = (int64_t)e % ldc;
            const int in_c = at < (row ? n : m);
            (void)line;
            if (!in_c) {
                outside += owner[e] != 0.0f || memcmp(&got[e], &C0[e], 4) != 0;
                continue;
            }
            written += owner[e] != 0.0f;
            wrong += memcmp(&got[e], &ref[e], 4) != 0;
            nan += isnan(got[e]);
        }
        /* each tile's mark was written over its own elements only: count per tile */
        int64_t *per_tile = calloc((size_t)tg_tile_count(&g) + 1, sizeof *per_tile);
        for (size_t e = 0; e < c_size; ++e)
            if (owner[e] != 0.0f)
                ++per_tile[(int64_t)owner[e] - 1];
        for (int64_t t = 0; t < tg_tile_count(&g); ++t) {
            const tg_tile tile = tg_tile_at(&g, t);
            twice += per_tile[t] != tile.m * tile.n;
        }
        free(per_tile);
        EXPECT(written == m * n && twice == 0 && outside == 0,
               "%s, %d GPUs: %lld of %lld elements written, %d tiles with elements not their own, "
               "%d elements outside C touched", what, gpus, (long long)written,
               (long long)(m * n), twice, outside);
        EXPECT(wrong == 0 && nan == 0, "%s, %d GPUs (%lldx%lld tiles): %d elements differ from "
               "the direct product's bits, %d NaN", what, gpus, (long long)g.rows,
               (long long)g.cols, wrong, nan);
        if (gi == 0)
            memcpy(first, got, c_size * 4);
        else
            EXPECT(memcmp(first, got, c_size * 4) == 0, "%s: %d GPUs differ from 1 GPU", what,
                   gpus);
    }
    free(A), free(B), free(C0), free(ref), free(got), free(first), free(owner);
}

/* --- The API around the split, without a GPU where there is none ------------------------ */

static void check_environment(void)
{
    const int gpu = tg_backend_available(TG_BACKEND_CUDA);
    const char *bad[] = {"0,x", "-1", "1,,2", "64", "al", " 0", "+1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        setenv("TILEGEMM_DEVICES", bad[i], 1);
        tg_handle *h = NULL;
        const tg_status s = tg_create(&h);
        EXPECT(s == TG_ERROR_INVALID_ARGUMENT && h == NULL &&
                   strstr(tg_last_error(NULL), "TILEGEMM_DEVICES") != NULL,
               "TILEGEMM_DEVICES=\"%s\": status %d, \"%s\"", bad[i], s, tg_last_error(NULL));
        tg_destroy(h);
    }
    const char *good[] = {"all", "0"};
    for (size_t i = 0; i < sizeof good / sizeof *good; ++i) {
        setenv("TILEGEMM_DEVICES", good[i], 1);
        tg_handle *h = NULL;
        EXPECT(tg_create(&h) == TG_SUCCESS, "TILEGEMM_DEVICES=%s: %s", good[i],
               tg_last_error(NULL));
        tg_destroy(h);
    }
    unsetenv("TILEGEMM_DEVICES");
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS)
        return;
    int ids[TG_MAX_DEVICES];
    if (!gpu) {
        EXPECT(tg_set_devices(h, NULL, TG_ALL_DEVICES) == TG_ERROR_NOT_SUPPORTED,
               "tg_set_devices without a GPU: %s", tg_last_error(h));
        EXPECT(tg_get_devices(h, ids, TG_MAX_DEVICES) == 0, "GPUs listed without a GPU");
    }
    EXPECT(tg_set_devices(h, NULL, 65) == TG_ERROR_INVALID_ARGUMENT &&
               tg_last_error_arg(h) == 3 && strstr(tg_last_error(h), "count = 65"),
           "count 65: %s", tg_last_error(h));
    EXPECT(tg_set_devices(NULL, NULL, 0) == TG_ERROR_INVALID_HANDLE, "NULL handle accepted");
    tg_destroy(h);
}

/* The BLAS entry points' fallback after a tiled call failed: the CPU computes only the tiles
 * not written, so beta * C is applied once everywhere. */
static void check_cpu_complete(void)
{
    const int64_t m = 300, n = 260, k = 40, ldc = 303;
    float *A = malloc((size_t)(m * k) * 4), *B = malloc((size_t)(k * n) * 4);
    float *C0 = malloc((size_t)(n * ldc) * 4), *C = malloc((size_t)(n * ldc) * 4);
    float *ref = malloc((size_t)(n * ldc) * 4);
    for (int64_t e = 0; e < m * k; ++e)
        A[e] = small_int();
    for (int64_t e = 0; e < k * n; ++e)
        B[e] = small_int();
    for (int64_t e = 0; e < n * ldc; ++e)
        C0[e] = small_int();
    /* column-major, as sgemm_ passes it */
    const tg_call call = {.layout = TG_COL_MAJOR, .transa = TG_NO_TRANS, .transb = TG_NO_TRANS,
                          .m = m, .n = n, .k = k, .alpha = 1.0f, .beta = 0.5f, .A = A, .lda = m,
                          .B = B, .ldb = k, .C = ref, .ldc = ldc, .batch = 1};
    memcpy(ref, C0, (size_t)(n * ldc) * 4);
    tg_cpu_complete(NULL, &call);
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS || tg_set_backend(h, TG_BACKEND_CPU) != TG_SUCCESS)
        return;
    tg_problem p;
    tg_normalize(&call, &p);
    /* a failed tiled call that wrote tiles 0 and 2 of a 3 x 3 grid of 128 */
    h->partial.grid = tg_tile_grid_capped(p.m, p.n, p.k, 128, (int64_t)1 << 30, TG_K_CUT_MAX);
    EXPECT(tg_tile_count(&h->partial.grid) == 9, "%lld tiles",
           (long long)tg_tile_count(&h->partial.grid));
    h->partial.written = calloc(9, 1);
    h->partial.written[0] = h->partial.written[2] = 1;
    memcpy(C, C0, (size_t)(n * ldc) * 4);
    for (int t = 0; t <= 2; t += 2) { /* those tiles hold their result already */
        const tg_tile at = tg_tile_at(&h->partial.grid, t);
        for (int64_t i = 0; i < at.m; ++i)
            memcpy(C + (at.i0 + i) * ldc + at.j0, ref + (at.i0 + i) * ldc + at.j0,
                   (size_t)at.n * 4);
    }
    tg_call mine = call;
    mine.C = C;
    tg_cpu_complete(h, &mine);
    EXPECT(memcmp(C, ref, (size_t)(n * ldc) * 4) == 0,
           "the CPU finishing a partly written C differs from the whole product");
    tg_destroy(h);
    free(A), free(B), free(C0), free(C), free(ref);
}

int main(void)
{
    check_environment();
    check_cpu_complete();
    const int64_t big[] = {1, 127, 128, 4095, 4096, 4097, 5000, 8192, 16384, 32768, 100003,
                           3037000500LL};
    const int64_t ks[] = {0, 1, 8192, 16384, 1 << 20, (int64_t)1 << 26};
    for (size_t i = 0; i < sizeof big / sizeof *big; ++i)
        for (size_t j = 0; j < sizeof big / sizeof *big; j += 3)
            for (size_t q = 0; q < sizeof ks / sizeof *ks; ++q) {
                check_grid(big[i], big[j], ks[q]);
                if (big[i] <= 100003 && big[j] <= 100003)
                    check_shares(big[i], big[j], ks[q]);
            }
    const tg_tile_grid wide = tg_tile_grid_of(32768, 32768, 8192);
    EXPECT(wide.rows == 8 && wide.cols == 8 && wide.tile_m == 4096,
           "32768x32768x8192: %lldx%lld tiles", (long long)wide.rows, (long long)wide.cols);
    check_lane_plans();
    check_chunks();
    for (int threads = 0; threads <= 5; threads += 1)
        check_copiers(threads);

    const int64_t dims[][3] = {{1, 1, 1}, {7, 300, 5}, {300, 7, 33}, {129, 257, 1},
                               {257, 385, 77}, {385, 129, 130}, {65, 200, 300}};
    const tg_op ops[] = {TG_NO_TRANS, TG_TRANS};
    for (int l = 0; l < 2; ++l)
        for (int ta = 0; ta < 2; ++ta)
            for (int tb = 0; tb < 2; ++tb)
                for (size_t s = 0; s < sizeof dims / sizeof *dims; ++s)
                    for (int pad = 0; pad <= 3; pad += 3)
                        for (int b = 0; b < 2; ++b)
                            check_split(l ? TG_COL_MAJOR : TG_ROW_MAJOR, ops[ta], ops[tb],
                                        dims[s][0], dims[s][1], dims[s][2], pad,
                                        b ? 0.5f : 0.0f);
    return tg_test_result("test_host_split");
}
