/*
 * `tilegemm simulate`: replays the classic tiled kernel (rungs 1 and 2) on the CPU, one phase
 * at a time, so a learner can watch shared memory fill and the partial sums grow, and counts
 * the global-memory loads of the naive and the tiled kernel exactly.  See simulate.h for the
 * model replayed.
 */
#include "simulate.h"

#include "check.h" /* tg_float_agrees */
#include "shape.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_PRINT_SIZE = TG_SIMULATE_MAX_PRINT,
    MAX_TILE = TG_SIMULATE_MAX_TILE,
    CUDA_MAX_THREADS_PER_BLOCK = 1024,
    EXIT_OK = TG_SIMULATE_OK,
    EXIT_MISMATCH = TG_SIMULATE_MISMATCH,
    EXIT_USAGE = TG_SIMULATE_USAGE
};

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void tg_count_loads(int64_t m, int64_t n, int64_t k, int tile, tg_load_counts *out)
{
    memset(out, 0, sizeof *out);
    if (tile < 1 || m < 0 || n < 0 || k < 0)
        return;

    out->m = m;
    out->n = n;
    out->k = k;
    out->tile = tile;
    out->grid_x = ceil_div(n, tile);
    out->grid_y = ceil_div(m, tile);
    out->blocks = out->grid_x * out->grid_y;
    out->threads_per_block = (int64_t)tile * tile;
    out->phases = ceil_div(k, tile);

    out->naive_loads_a = m * n * k;
    out->naive_loads_b = m * n * k;
    out->naive_loads = out->naive_loads_a + out->naive_loads_b;

    /*
     * A: thread (ty, tx) of block (by, bx) loads in phase t iff row < m and t*tile + tx < k.
     * The test ignores bx, so every block column repeats the same loads; summed over the
     * block rows the in-range rows give m, summed over the phases the in-range columns give
     * k.  Hence m * k per block column.  B is the mirror image: k * n per block row.
     */
    out->tiled_loads_a = m * k * out->grid_x;
    out->tiled_loads_b = k * n * out->grid_y;
    out->tiled_loads = out->tiled_loads_a + out->tiled_loads_b;

    /* Each operand's shared tile has tile*tile cells, written once per block and phase. */
    int64_t shared_cells_written = out->blocks * out->phases * out->threads_per_block;
    out->tiled_zero_fills_a = shared_cells_written - out->tiled_loads_a;
    out->tiled_zero_fills_b = shared_cells_written - out->tiled_loads_b;

    out->shared_bytes_per_block = 2 * out->threads_per_block * (int64_t)sizeof(float);
    out->flops = 2.0 * (double)m * (double)n * (double)k;

    if (m > 0 && n > 0) {
        out->naive_loads_per_element = 2.0 * (double)k;
        out->tiled_loads_per_element = (double)out->tiled_loads / ((double)m * (double)n);
    }
    if (out->tiled_loads > 0) {
        out->savings = (double)out->naive_loads / (double)out->tiled_loads;
        out->naive_flops_per_load = out->flops / (double)out->naive_loads;
        out->tiled_flops_per_load = out->flops / (double)out->tiled_loads;
    }
}

void tg_simulate_print_counts(FILE *out, int64_t m, int64_t n, int64_t k, int tile)
{
    tg_load_counts c;
    tg_count_loads(m, n, k, tile, &c);

    fprintf(out, "Global-memory reads for the whole product (m = %" PRId64 ", n = %" PRId64
                 ", k = %" PRId64 ", TILE = %d):\n", m, n, k, tile);
    fprintf(out, "  %-16s %15s %15s %16s %14s\n", "kernel", "loads of A", "loads of B", "total",
            "per C element");
    fprintf(out, "  %-16s %15" PRId64 " %15" PRId64 " %16" PRId64 " %14.2f  = 2k\n",
            "naive (rung 0)", c.naive_loads_a, c.naive_loads_b, c.naive_loads,
            c.naive_loads_per_element);
    char tiled_name[32];
    snprintf(tiled_name, sizeof tiled_name, "tiled (TILE %d)", tile);
    fprintf(out, "  %-16s %15" PRId64 " %15" PRId64 " %16" PRId64 " %14.2f  ~ 2k/TILE = %.2f\n",
            tiled_name, c.tiled_loads_a, c.tiled_loads_b, c.tiled_loads,
            c.tiled_loads_per_element, 2.0 * (double)k / tile);
    fprintf(out, "    tiled A loads = m*k*grid.x = %" PRId64 "*%" PRId64 "*%" PRId64 " = %" PRId64
                 "  (each of the %" PRId64 " block columns reads all of A)\n",
            m, k, c.grid_x, c.tiled_loads_a, c.grid_x);
    fprintf(out, "    tiled B loads = k*n*grid.y = %" PRId64 "*%" PRId64 "*%" PRId64 " = %" PRId64
                 "  (each of the %" PRId64 " block rows reads all of B)\n",
            k, n, c.grid_y, c.tiled_loads_b, c.grid_y);
    fprintf(out, "    shared-memory cells zero-filled instead of loaded: A %" PRId64 ", B %" PRId64
                 "\n", c.tiled_zero_fills_a, c.tiled_zero_fills_b);
    fprintf(out, "  savings: naive reads %" PRId64 " / %" PRId64
                 " = %.2fx as many floats as tiled\n", c.naive_loads, c.tiled_loads, c.savings);
    fprintf(out, "  shared memory per block: 2 tiles * %d*%d floats * 4 bytes = %" PRId64
                 " bytes\n", tile, tile, c.shared_bytes_per_block);
    fprintf(out, "  FLOPs per global load (2mnk / loads): naive %.2f, tiled %.2f\n",
            c.naive_flops_per_load, c.tiled_flops_per_load);
    fprintf(out, "  launch: grid %" PRId64 " x %" PRId64 " = %" PRId64 " blocks of %d x %d = %"
                 PRId64 " threads, %" PRId64 " phases each\n",
            c.grid_x, c.grid_y, c.blocks, tile, tile, c.threads_per_block, c.phases);
    if (c.threads_per_block > CUDA_MAX_THREADS_PER_BLOCK)
        fprintf(out, "  note: %" PRId64 " threads per block is over CUDA's limit of %d; the real "
                     "kernels use TILE 16 and 32\n", c.threads_per_block,
                CUDA_MAX_THREADS_PER_BLOCK);
}

/* ---------------------------------------------------------------- printing grids of values */

/* %g without the "-0" that a zero product of a negative number leaves behind. */
static void format_value(char *buf, size_t size, double v)
{
    snprintf(buf, size, "%g", v == 0.0 ? 0.0 : v);
}

/* One small matrix to draw; marks per cell: ' ' plain, '*' zero-filled, '-' hidden. */
typedef struct grid_view {
    const char *title;
    int rows, cols;
    const float *values;
    const char *marks; /* NULL: all plain */
} grid_view;

static int grid_cell_width(const grid_view *g)
{
    int width = 1;
    for (int i = 0; i < g->rows * g->cols; i++) {
        char buf[48];
        format_value(buf, sizeof buf, g->values[i]);
        int len = (int)strlen(buf);
        if (len > width)
            width = len;
    }
    return width;
}

/* Appends to a line being built; lines stay short (64 cells at most per grid). */
typedef struct line_buffer {
    char text[4096];
    size_t used;
} line_buffer;

static void append(line_buffer *line, const char *text, int pad_to)
{
    int written = snprintf(line->text + line->used, sizeof line->text - line->used, "%*s",
                           pad_to, text);
    if (written > 0)
        line->used += (size_t)written;
    if (line->used >= sizeof line->text)
        line->used = sizeof line->text - 1;
}

static void print_trimmed(FILE *out, line_buffer *line)
{
    while (line->used > 0 && line->text[line->used - 1] == ' ')
        line->used--;
    line->text[line->used] = '\0';
    fprintf(out, "%s\n", line->text);
}

static void append_grid_cell(line_buffer *line, const grid_view *g, int r, int c, int width)
{
    char buf[48];
    char mark = g->marks ? g->marks[r * g->cols + c] : ' ';
    if (mark == '-')
        snprintf(buf, sizeof buf, "-");
    else
        format_value(buf, sizeof buf, g->values[r * g->cols + c]);
    /* the mark goes after the number so digits stay aligned */
    append(line, " ", 1);
    append(line, buf, width);
    append(line, mark == '*' ? "*" : " ", 1);
}

/* Draws the grids side by side, titles on the first line. */
static void print_grids(FILE *out, const grid_view *grids, int count)
{
    int widths[4], columns[4], rows = 0;
    for (int g = 0; g < count; g++) {
        widths[g] = grid_cell_width(&grids[g]);
        int drawn = grids[g].cols * (widths[g] + 2);
        int title = (int)strlen(grids[g].title);
        columns[g] = drawn > title ? drawn : title;
        if (grids[g].rows > rows)
            rows = grids[g].rows;
    }
    for (int row = -1; row < rows; row++) {
        line_buffer line = {{0}, 0};
        append(&line, "  ", 0);
        for (int g = 0; g < count; g++) {
            const grid_view *v = &grids[g];
            size_t start = line.used;
            if (row < 0) {
                append(&line, v->title, 0);
            } else if (row < v->rows) {
                for (int c = 0; c < v->cols; c++)
                    append_grid_cell(&line, v, row, c, widths[g]);
            }
            if (g + 1 < count)
                append(&line, "", columns[g] - (int)(line.used - start) + 4);
        }
        print_trimmed(out, &line);
    }
}

/* A whole operand with lines at the tile boundaries, so the tiling is visible. */
static void print_matrix(FILE *out, const char *name, const char *shape, int64_t rows,
                         int64_t cols, const float *values, int tile)
{
    grid_view all = {name, (int)rows, (int)cols, values, NULL};
    int width = grid_cell_width(&all);
    char index[24];
    snprintf(index, sizeof index, "%" PRId64, (cols > rows ? cols : rows) - 1);
    if ((int)strlen(index) > width)
        width = (int)strlen(index);

    fprintf(out, "%s (%" PRId64 " x %" PRId64 ", %s), lines mark the %d x %d tiles:\n", name, rows,
            cols, shape, tile, tile);
    fprintf(out, "  %*s ", (int)strlen(index), "");
    for (int64_t c = 0; c < cols; c++)
        fprintf(out, "%s %*" PRId64, c > 0 && c % tile == 0 ? " |" : "", width, c);
    fputc('\n', out);
    for (int64_t r = 0; r < rows; r++) {
        if (r > 0 && r % tile == 0) {
            fprintf(out, "  %*s ", (int)strlen(index), "");
            for (int64_t c = 0; c < cols; c++)
                fprintf(out, "%s%.*s", c > 0 && c % tile == 0 ? "-+" : "", width + 1,
                        "--------------------------------");
            fputc('\n', out);
        }
        fprintf(out, "  %*" PRId64 ":", (int)strlen(index), r);
        for (int64_t c = 0; c < cols; c++) {
            char buf[48];
            format_value(buf, sizeof buf, values[r * cols + c]);
            fprintf(out, "%s %*s", c > 0 && c % tile == 0 ? " |" : "", width, buf);
        }
        fputc('\n', out);
    }
    fputc('\n', out);
}

/* ------------------------------------------------------------------- replaying the kernel */

/* Shared-memory contents of one block in one phase, loaded exactly as the kernel does. */
typedef struct block_phase {
    int tile;
    float *As, *Bs;            /* tile x tile each */
    char *a_marks, *b_marks;   /* '*' where zero-filled */
    int64_t loads_a, loads_b;  /* global loads this block made in this phase */
} block_phase;

static void load_phase(block_phase *s, int64_t m, int64_t n, int64_t k, const float *A,
                       const float *B, int64_t by, int64_t bx, int64_t t)
{
    int tile = s->tile;
    s->loads_a = s->loads_b = 0;
    for (int ty = 0; ty < tile; ty++) {
        for (int tx = 0; tx < tile; tx++) {
            int64_t row = by * tile + ty, col = bx * tile + tx;
            int64_t a_col = t * tile + tx, b_row = t * tile + ty;
            int cell = ty * tile + tx;
            /* neither test looks at whether (row, col) is inside C */
            int a_inside = row < m && a_col < k;
            int b_inside = b_row < k && col < n;
            s->As[cell] = a_inside ? A[row * k + a_col] : 0.0f;
            s->Bs[cell] = b_inside ? B[b_row * n + col] : 0.0f;
            s->a_marks[cell] = a_inside ? ' ' : '*';
            s->b_marks[cell] = b_inside ? ' ' : '*';
            s->loads_a += a_inside;
            s->loads_b += b_inside;
        }
    }
}

/* Between the two barriers: every thread adds its row of As times its column of Bs. */
static void multiply_phase(const block_phase *s, float *acc)
{
    int tile = s->tile;
    for (int ty = 0; ty < tile; ty++)
        for (int tx = 0; tx < tile; tx++)
            for (int e = 0; e < tile; e++)
                acc[ty * tile + tx] += s->As[ty * tile + e] * s->Bs[e * tile + tx];
}

/* The oracle: sum over p in double, and the magnitude that bounds its float rounding. */
static void direct_product(int64_t n, int64_t k, const float *A, const float *B,
                           int64_t i, int64_t j, double *value, double *magnitude)
{
    double sum = 0.0, abs_sum = 0.0;
    for (int64_t p = 0; p < k; p++) {
        double term = (double)A[i * k + p] * (double)B[p * n + j];
        sum += term;
        abs_sum += fabs(term);
    }
    *value = sum;
    *magnitude = abs_sum;
}

/* Any float summation order stays within this of the exact sum; small integers are exact.  The
 * sum is judged as float32 holds it: one past FLT_MAX is inf there (tg_float_agrees).  A NaN
 * input breaks the product, and the walk-through says so. */
static int agrees(float got, double want, double magnitude, int64_t k)
{
    double bound = (double)(k + 2) * FLT_EPSILON * (magnitude > FLT_MIN ? magnitude : FLT_MIN);
    return !isnan(want) && tg_float_agrees(got, want, bound);
}

static void print_term(FILE *out, float v)
{
    char buf[48];
    format_value(buf, sizeof buf, v);
    fprintf(out, v < 0 ? "(%s)" : "%s", buf);
}

/* Spells out what thread (0, 0) of the block did in this phase, for small tiles. */
static void print_thread_trace(FILE *out, const block_phase *s, float before, float after,
                               int64_t row, int64_t col)
{
    enum { MAX_TRACED_TILE = 4 };
    if (s->tile > MAX_TRACED_TILE)
        return;
    fprintf(out, "  thread (ty 0, tx 0) -> C[%" PRId64 "][%" PRId64 "]: acc = ", row, col);
    print_term(out, before);
    for (int e = 0; e < s->tile; e++) {
        fputs(" + ", out);
        print_term(out, s->As[e]);
        fputc('*', out);
        print_term(out, s->Bs[e * s->tile]);
    }
    char buf[48];
    format_value(buf, sizeof buf, after);
    fprintf(out, " = %s\n", buf);
}

/* Checks the whole of C, every block replayed silently, and the load counts one by one. */
static int replay_all_blocks(FILE *out, int64_t m, int64_t n, int64_t k, int tile,
                             const float *A, const float *B, block_phase *s, float *acc)
{
    tg_load_counts want;
    tg_count_loads(m, n, k, tile, &want);
    int64_t loads_a = 0, loads_b = 0, mismatches = 0;

    for (int64_t by = 0; by < want.grid_y; by++) {
        for (int64_t bx = 0; bx < want.grid_x; bx++) {
            memset(acc, 0, sizeof(float) * (size_t)tile * (size_t)tile);
            for (int64_t t = 0; t < want.phases; t++) {
                load_phase(s, m, n, k, A, B, by, bx, t);
                loads_a += s->loads_a;
                loads_b += s->loads_b;
                multiply_phase(s, acc);
            }
            for (int ty = 0; ty < tile; ty++) {
                for (int tx = 0; tx < tile; tx++) {
                    int64_t row = by * tile + ty, col = bx * tile + tx;
                    if (row >= m || col >= n)
                        continue; /* only threads inside C store */
                    double value, magnitude;
                    direct_product(n, k, A, B, row, col, &value, &magnitude);
                    if (!agrees(acc[ty * tile + tx], value, magnitude, k))
                        mismatches++;
                }
            }
        }
    }

    fprintf(out, "Replay of every block (%" PRId64 "): %" PRId64 " of %" PRId64
                 " elements of C equal the direct product: %s\n",
            want.blocks, m * n - mismatches, m * n, mismatches ? "MISMATCH" : "OK");
    int counts_agree = loads_a == want.tiled_loads_a && loads_b == want.tiled_loads_b;
    fprintf(out, "Loads counted one by one in the replay: A %" PRId64 ", B %" PRId64
                 "; closed forms give A %" PRId64 ", B %" PRId64 ": %s\n\n",
            loads_a, loads_b, want.tiled_loads_a, want.tiled_loads_b,
            counts_agree ? "OK" : "MISMATCH");
    return mismatches == 0 && counts_agree;
}

int tg_simulate_print(FILE *out, int64_t m, int64_t n, int64_t k, int tile, int64_t tile_row,
                      int64_t tile_col, const float *A, const float *B)
{
    if (m < 1 || n < 1 || k < 1 || m > MAX_PRINT_SIZE || n > MAX_PRINT_SIZE ||
        k > MAX_PRINT_SIZE || tile < 1 || tile > MAX_TILE || !A || !B)
        return EXIT_USAGE;
    tg_load_counts counts;
    tg_count_loads(m, n, k, tile, &counts);
    if (tile_row < 0 || tile_row >= counts.grid_y || tile_col < 0 || tile_col >= counts.grid_x)
        return EXIT_USAGE;

    size_t cells = (size_t)tile * (size_t)tile;
    float *buffers = calloc(4 * cells, sizeof(float));
    char *marks = malloc(3 * cells);
    if (!buffers || !marks) {
        free(buffers);
        free(marks);
        fprintf(out, "simulate: out of memory\n");
        return EXIT_USAGE;
    }
    block_phase s = {tile, buffers, buffers + cells, marks, marks + cells, 0, 0};
    float *acc = buffers + 2 * cells;
    float *expected = buffers + 3 * cells;
    char *acc_marks = marks + 2 * cells;

    int64_t row0 = tile_row * tile, col0 = tile_col * tile;
    fprintf(out, "Classic tiled SGEMM, C = A * B, row-major: A is %" PRId64 " x %" PRId64
                 ", B is %" PRId64 " x %" PRId64 ", TILE = %d.\n", m, k, k, n, tile);
    fprintf(out, "Grid of %" PRId64 " x %" PRId64 " blocks (grid.x = ceil(n/TILE), grid.y = "
                 "ceil(m/TILE)), %d x %d threads each, one C element per thread;\n"
                 "k is walked in ceil(k/TILE) = %" PRId64 " phase(s).\n\n",
            counts.grid_x, counts.grid_y, tile, tile, counts.phases);
    print_matrix(out, "A", "m x k", m, k, A, tile);
    print_matrix(out, "B", "k x n", k, n, B, tile);

    fprintf(out, "Following block (blockIdx.y %" PRId64 ", blockIdx.x %" PRId64 "): C rows %"
                 PRId64 "..%" PRId64 ", columns %" PRId64 "..%" PRId64 ".\n",
            tile_row, tile_col, row0, row0 + tile - 1, col0, col0 + tile - 1);
    fprintf(out, "Legend: 0* = zero-filled, the cell lies outside the matrix, no global load;\n"
                 "        -  = thread outside C: it still loads its As/Bs cells for the others,\n"
                 "             but never stores.\n\n");

    for (int ty = 0; ty < tile; ty++)
        for (int tx = 0; tx < tile; tx++)
            acc_marks[ty * tile + tx] = (row0 + ty < m && col0 + tx < n) ? ' ' : '-';

    for (int64_t t = 0; t < counts.phases; t++) {
        int64_t k0 = t * tile, k1 = k0 + tile - 1;
        fprintf(out, "Phase t = %" PRId64 " (of 0..%" PRId64 "): k = %" PRId64 "..%" PRId64, t,
                counts.phases - 1, k0, k1);
        if (k1 >= k)
            fprintf(out, " (k = %" PRId64 ", so k >= %" PRId64 " is zero-filled)", k, k);
        fputc('\n', out);

        float before = acc[0];
        load_phase(&s, m, n, k, A, B, tile_row, tile_col, t);
        multiply_phase(&s, acc);

        char as_title[96], bs_title[96], acc_title[64];
        snprintf(as_title, sizeof as_title, "As = A[%" PRId64 "..%" PRId64 "][%" PRId64 "..%"
                 PRId64 "]", row0, row0 + tile - 1, k0, k1);
        snprintf(bs_title, sizeof bs_title, "Bs = B[%" PRId64 "..%" PRId64 "][%" PRId64 "..%"
                 PRId64 "]", k0, k1, col0, col0 + tile - 1);
        snprintf(acc_title, sizeof acc_title, "C tile after phase %" PRId64, t);
        grid_view grids[3] = {
            {as_title, tile, tile, s.As, s.a_marks},
            {bs_title, tile, tile, s.Bs, s.b_marks},
            {acc_title, tile, tile, acc, acc_marks},
        };
        /* three wide tiles side by side would not fit a terminal */
        if (tile <= 8) {
            print_grids(out, grids, 3);
        } else {
            for (int g = 0; g < 3; g++)
                print_grids(out, &grids[g], 1);
        }
        fprintf(out, "  loads this phase: A %" PRId64 ", B %" PRId64 " (zero-filled: A %" PRId64
                     ", B %" PRId64 ")\n", s.loads_a, s.loads_b, (int64_t)cells - s.loads_a,
                (int64_t)cells - s.loads_b);
        print_thread_trace(out, &s, before, acc[0], row0, col0);
        fputc('\n', out);
    }

    int64_t checked = 0, tile_mismatches = 0;
    for (int ty = 0; ty < tile; ty++) {
        for (int tx = 0; tx < tile; tx++) {
            int64_t row = row0 + ty, col = col0 + tx;
            if (row >= m || col >= n)
                continue;
            double value, magnitude;
            direct_product(n, k, A, B, row, col, &value, &magnitude);
            expected[ty * tile + tx] = (float)value;
            checked++;
            if (!agrees(acc[ty * tile + tx], value, magnitude, k)) {
                tile_mismatches++;
                fprintf(out, "  C[%" PRId64 "][%" PRId64 "] = %.9g but the direct product is "
                             "%.17g: MISMATCH\n", row, col, acc[ty * tile + tx], value);
            }
        }
    }
    grid_view final_grids[2] = {
        {"stored C tile", tile, tile, acc, acc_marks},
        {"direct product sum_p A[i][p]*B[p][j]", tile, tile, expected, acc_marks},
    };
    fprintf(out, "After the last phase the threads inside C store:\n");
    print_grids(out, final_grids, tile <= 8 ? 2 : 1);
    if (tile > 8)
        print_grids(out, &final_grids[1], 1);
    fprintf(out, "Check of this tile: %" PRId64 " of %" PRId64 " stored elements equal the direct "
                 "product: %s\n\n", checked - tile_mismatches, checked,
            tile_mismatches ? "MISMATCH" : "OK");

    int all_agree = replay_all_blocks(out, m, n, k, tile, A, B, &s, acc);
    tg_simulate_print_counts(out, m, n, k, tile);

    free(buffers);
    free(marks);
    return (tile_mismatches == 0 && all_agree) ? EXIT_OK : EXIT_MISMATCH;
}
