/* The phases of one output tile as an SVG sheet; see tg_simulate_svg in simulate.h. */
#include <stdio.h>
#include <stdlib.h>

#include "simulate.h"

#define MARGIN 20
#define GAP 48
#define TITLE 44 /* room above each row of panels for its caption */

typedef struct panel {
    const char *name;
    int64_t rows, cols;         /* the matrix */
    int64_t padded_rows, padded_cols; /* the grid the tiles cover */
    int64_t r0, c0;             /* the highlighted TILE x TILE block */
    const char *fill;           /* its colour where it lies inside the matrix */
} panel;

static void text(FILE *f, double x, double y, double size, const char *anchor, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"%s\">%s</text>\n", x,
            y, size, anchor, s);
}

/* One panel at (x, y): the grid, the block, and per cell the value given by value(). */
static void draw_panel(FILE *f, const panel *p, int tile, double x, double y, double cell,
                       const float *values, int64_t ld, int value_cells)
{
    char label[96];
    snprintf(label, sizeof label, "%s (%lld x %lld)", p->name, (long long)p->rows,
             (long long)p->cols);
    text(f, x, y - 6, 12, "start", label);
    for (int64_t r = 0; r < p->padded_rows; ++r)
        for (int64_t c = 0; c < p->padded_cols; ++c) {
            const int inside = r < p->rows && c < p->cols;
            const int in_block = r >= p->r0 && r < p->r0 + tile && c >= p->c0 && c < p->c0 + tile;
            const char *fill = in_block ? (inside ? p->fill : "url(#zero)")
                                        : (inside ? "#ffffff" : "#f4f4f4");
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                       "stroke=\"%s\" stroke-width=\"0.5\"%s/>\n",
                    x + (double)c * cell, y + (double)r * cell, cell, cell, fill,
                    inside ? "#999999" : "#cccccc", inside ? "" : " stroke-dasharray=\"2,2\"");
            if (!in_block || cell < 16)
                continue;
            char v[32];
            if (inside && value_cells)
                snprintf(v, sizeof v, "%g", values[r * ld + c]);
            else
                snprintf(v, sizeof v, "%s", inside ? "" : "0");
            text(f, x + ((double)c + 0.5) * cell, y + ((double)r + 0.68) * cell, cell * 0.42,
                 "middle", v);
        }
    /* tile boundaries */
    for (int64_t r = 0; r <= p->padded_rows; r += tile)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
                   "stroke-width=\"1\"/>\n",
                x, y + (double)r * cell, x + (double)p->padded_cols * cell, y + (double)r * cell);
    for (int64_t c = 0; c <= p->padded_cols; c += tile)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
                   "stroke-width=\"1\"/>\n",
                x + (double)c * cell, y, x + (double)c * cell, y + (double)p->padded_rows * cell);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#d62728\" stroke-width=\"2\"/>\n",
            x + (double)p->c0 * cell, y + (double)p->r0 * cell, tile * cell, tile * cell);
}

int tg_simulate_svg(const char *path, int64_t m, int64_t n, int64_t k, int tile,
                    int64_t tile_row, int64_t tile_col, const float *A, const float *B)
{
    if (!path || tile < 1 || m < 1 || n < 1 || k < 1 || !A || !B)
        return -1;
    const int64_t pm = (m + tile - 1) / tile * tile, pn = (n + tile - 1) / tile * tile;
    const int64_t pk = (k + tile - 1) / tile * tile, phases = pk / tile;
    if (tile_row * tile >= pm || tile_col * tile >= pn || tile_row < 0 || tile_col < 0)
        return -1;
    int64_t largest = pm > pn ? pm : pn;
    largest = largest > pk ? largest : pk;
    double cell = 240.0 / (double)largest;
    cell = cell > 30.0 ? 30.0 : cell < 4.0 ? 4.0 : cell;
    const double width_a = (double)pk * cell, width_b = (double)pn * cell;
    const double width_c = (double)pn * cell;
    const double row_height = (double)(pm > pk ? pm : pk) * cell + TITLE + 16;
    double width = 2 * MARGIN + width_a + width_b + width_c + 2 * GAP;
    width = width < 880.0 ? 880.0 : width; /* room for the captions */
    const double height = 2 * MARGIN + 40 + (double)phases * row_height;

    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    float *acc = calloc((size_t)tile * (size_t)tile, sizeof *acc);
    float *shown = calloc((size_t)pm * (size_t)pn, sizeof *shown);
    if (!acc || !shown) {
        free(acc), free(shown), fclose(f);
        return -1;
    }
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "font-family=\"sans-serif\">\n", width, height);
    fprintf(f, "<defs><pattern id=\"zero\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
               "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fde0dd\"/>"
               "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#e7298a\" stroke-width=\"2\"/>"
               "</pattern></defs>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    char title[256];
    snprintf(title, sizeof title, "C = A * B, %lldx%lldx%lld, TILE %d: block (%lld, %lld) in "
             "%lld phases. Red frame: the tile of the phase; hatched: zero-filled, no load.",
             (long long)m, (long long)n, (long long)k, tile, (long long)tile_row,
             (long long)tile_col, (long long)phases);
    text(f, MARGIN, MARGIN + 14, 14, "start", title);
    const int64_t r0 = tile_row * tile, c0 = tile_col * tile;
    for (int64_t t = 0; t < phases; ++t) {
        /* This phase's contribution to the followed tile, as the kernel accumulates it. */
        for (int ty = 0; ty < tile; ++ty)
            for (int tx = 0; tx < tile; ++tx)
                for (int p = 0; p < tile; ++p) {
                    const int64_t row = r0 + ty, col = c0 + tx, kk = t * tile + p;
                    if (row < m && col < n && kk < k)
                        acc[ty * tile + tx] += A[row * k + kk] * B[kk * n + col];
                }
        for (int ty = 0; ty < tile; ++ty)
            for (int tx = 0; tx < tile; ++tx)
                if (r0 + ty < pm && c0 + tx < pn)
                    shown[(r0 + ty) * pn + c0 + tx] = acc[ty * tile + tx];
        const double y = MARGIN + 40 + (double)t * row_height;
        char caption[400];
        snprintf(caption, sizeof caption, "phase %lld: As = A[%lld..%lld][%lld..%lld], "
                 "Bs = B[%lld..%lld][%lld..%lld]; the C tile sums k &lt; %lld: C[%lld][%lld] = %g",
                 (long long)t, (long long)r0, (long long)(r0 + tile - 1), (long long)(t * tile),
                 (long long)(t * tile + tile - 1), (long long)(t * tile),
                 (long long)(t * tile + tile - 1), (long long)c0, (long long)(c0 + tile - 1),
                 (long long)((t + 1) * tile < k ? (t + 1) * tile : k), (long long)r0,
                 (long long)c0, acc[0]);
        text(f, MARGIN, y + 14, 13, "start", caption);
        const double py = y + TITLE;
        const panel pa = {"A", m, k, pm, pk, r0, t * tile, "#9ecae1"};
        const panel pb = {"B", k, n, pk, pn, t * tile, c0, "#a1d99b"};
        const panel pc = {"C (partial sums)", m, n, pm, pn, r0, c0, "#fdd0a2"};
        draw_panel(f, &pa, tile, MARGIN, py, cell, A, k, 1);
        draw_panel(f, &pb, tile, MARGIN + width_a + GAP, py, cell, B, n, 1);
        draw_panel(f, &pc, tile, MARGIN + width_a + width_b + 2 * GAP, py, cell, shown, pn, 1);
    }
    fprintf(f, "</svg>\n");
    free(acc);
    free(shown);
    return fclose(f) == 0 ? 0 : -1;
}
