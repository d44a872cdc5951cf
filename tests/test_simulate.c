/*
 * Tests of the `simulate` lesson (cli/simulate.c): the closed-form load counts against
 * hand-computed numbers and against a brute-force replay of the kernels' load rules, and the
 * walk-through's own check of the tiled result against the direct product.
 * Exit code 0 when everything passes, 1 otherwise; each failure is printed.
 */
#include "simulate.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define EXPECT_I64(what, got, want)                                                          \
    do {                                                                                     \
        int64_t got_ = (got), want_ = (want);                                                \
        if (got_ != want_) {                                                                 \
            printf("FAIL %s:%d: %s: %s = %" PRId64 ", want %" PRId64 "\n", __FILE__,         \
                   __LINE__, what, #got, got_, want_);                                       \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

#define EXPECT_NEAR(what, got, want)                                                         \
    do {                                                                                     \
        double got_ = (got), want_ = (want);                                                 \
        double scale_ = fabs(want_) > 1.0 ? fabs(want_) : 1.0;                               \
        if (!(fabs(got_ - want_) <= 1e-12 * scale_)) {                                       \
            printf("FAIL %s:%d: %s: %s = %.17g, want %.17g\n", __FILE__, __LINE__, what,     \
                   #got, got_, want_);                                                       \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

#define EXPECT_TRUE(what, condition)                                                         \
    do {                                                                                     \
        if (!(condition)) {                                                                  \
            printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, what, #condition);            \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

/* Every field that a hand calculation pins down. */
typedef struct expected_counts {
    int64_t grid_x, grid_y, blocks, phases;
    int64_t naive_a, naive_b, naive_total;
    int64_t tiled_a, tiled_b, tiled_total;
    int64_t zero_fills_a, zero_fills_b;
    int64_t shared_bytes;
    double tiled_per_element, savings, tiled_flops_per_load;
} expected_counts;

static void check_hand_computed(int64_t m, int64_t n, int64_t k, int tile, expected_counts w)
{
    char what[64];
    snprintf(what, sizeof what, "%" PRId64 "x%" PRId64 "x%" PRId64 " tile %d", m, n, k, tile);
    tg_load_counts c;
    tg_count_loads(m, n, k, tile, &c);
    EXPECT_I64(what, c.grid_x, w.grid_x);
    EXPECT_I64(what, c.grid_y, w.grid_y);
    EXPECT_I64(what, c.blocks, w.blocks);
    EXPECT_I64(what, c.threads_per_block, (int64_t)tile * tile);
    EXPECT_I64(what, c.phases, w.phases);
    EXPECT_I64(what, c.naive_loads_a, w.naive_a);
    EXPECT_I64(what, c.naive_loads_b, w.naive_b);
    EXPECT_I64(what, c.naive_loads, w.naive_total);
    EXPECT_I64(what, c.tiled_loads_a, w.tiled_a);
    EXPECT_I64(what, c.tiled_loads_b, w.tiled_b);
    EXPECT_I64(what, c.tiled_loads, w.tiled_total);
    EXPECT_I64(what, c.tiled_zero_fills_a, w.zero_fills_a);
    EXPECT_I64(what, c.tiled_zero_fills_b, w.zero_fills_b);
    EXPECT_I64(what, c.shared_bytes_per_block, w.shared_bytes);
    EXPECT_NEAR(what, c.naive_loads_per_element, 2.0 * (double)k);
    EXPECT_NEAR(what, c.tiled_loads_per_element, w.tiled_per_element);
    EXPECT_NEAR(what, c.savings, w.savings);
    EXPECT_NEAR(what, c.flops, 2.0 * (double)m * (double)n * (double)k);
    EXPECT_NEAR(what, c.naive_flops_per_load, 1.0);
    EXPECT_NEAR(what, c.tiled_flops_per_load, w.tiled_flops_per_load);
}

static void test_hand_computed(void)
{
    /*
     * 4x4x4, TILE 2: grid.x = ceil(4/2) = 2, grid.y = 2, 4 blocks, phases = ceil(4/2) = 2.
     * naive: 4*4*4 = 64 loads of A, 64 of B, 128 in all.
     * tiled A: block rows hold 2 + 2 = 4 rows, phases 2 + 2 = 4 columns: 4*4 = 16 per block
     *   column, 2 block columns: 32.  B likewise 4*4*2 = 32.  Total 64.
     * cells written per operand: 4 blocks * 2 phases * 4 = 32, so no zero fills.
     * per element 64/16 = 4, savings 128/64 = 2, shared 2*2*2*4 = 32 bytes, FLOPs 2*64 = 128,
     * tiled FLOPs per load 128/64 = 2.
     */
    check_hand_computed(4, 4, 4, 2, (expected_counts){2, 2, 4, 2, 64, 64, 128, 32, 32, 64, 0, 0,
                                                      32, 4.0, 2.0, 2.0});
    /*
     * 5x3x7, TILE 2: grid.x = ceil(3/2) = 2, grid.y = ceil(5/2) = 3, 6 blocks,
     * phases = ceil(7/2) = 4.
     * naive: 5*3*7 = 105 each, 210 in all.
     * tiled A: rows in block rows 2 + 2 + 1 = 5, columns in phases 2 + 2 + 2 + 1 = 7:
     *   35 per block column, 2 block columns: 70.
     * tiled B: rows in phases 7, columns in block columns 2 + 1 = 3: 21 per block row,
     *   3 block rows: 63.  Total 133.
     * cells written per operand: 6 * 4 * 4 = 96: zero fills A 96 - 70 = 26, B 96 - 63 = 33.
     * per element 133/15, savings 210/133, shared 32 bytes, tiled FLOPs per load 210/133.
     */
    check_hand_computed(5, 3, 7, 2, (expected_counts){2, 3, 6, 4, 105, 105, 210, 70, 63, 133, 26,
                                                      33, 32, 133.0 / 15.0, 210.0 / 133.0,
                                                      210.0 / 133.0});
    /*
     * 3x5x2, TILE 4: grid.x = ceil(5/4) = 2, grid.y = ceil(3/4) = 1, 2 blocks,
     * phases = ceil(2/4) = 1.
     * naive: 3*5*2 = 30 each, 60 in all.
     * tiled A: 3 rows * 2 columns = 6 per block column, 2 block columns: 12.
     * tiled B: 2 rows * (4 + 1) columns = 10 per block row, 1 block row: 10.  Total 22.
     * cells written per operand: 2 * 1 * 16 = 32: zero fills A 20, B 22.
     * per element 22/15, savings 60/22, shared 2*4*4*4 = 128 bytes, FLOPs per load 60/22.
     */
    check_hand_computed(3, 5, 2, 4, (expected_counts){2, 1, 2, 1, 30, 30, 60, 12, 10, 22, 20, 22,
                                                      128, 22.0 / 15.0, 60.0 / 22.0,
                                                      60.0 / 22.0});
    /*
     * 1x1x1, TILE 16: one block, one phase, 256 threads; only thread (0, 0) finds A[0][0]
     * and B[0][0] inside.  naive 1 + 1 = 2, tiled 1 + 1 = 2, zero fills 256 - 1 = 255 each,
     * per element 2, savings 1, shared 2*16*16*4 = 2048 bytes, FLOPs per load 2/2 = 1.
     */
    check_hand_computed(1, 1, 1, 16, (expected_counts){1, 1, 1, 1, 1, 1, 2, 1, 1, 2, 255, 255,
                                                       2048, 2.0, 1.0, 1.0});
    /*
     * 33x33x33, TILE 32: grid 2 x 2 = 4 blocks, 2 phases (the second holds one column).
     * naive: 33^3 = 35937 each, 71874 in all.
     * tiled A: 33 rows * 33 columns per block column, 2 block columns: 2178; B likewise 2178.
     *   Total 4356.
     * cells written per operand: 4 * 2 * 1024 = 8192: zero fills 8192 - 2178 = 6014 each.
     * per element 4356/1089 = 4, savings 71874/4356 = 16.5, shared 2*32*32*4 = 8192 bytes,
     * tiled FLOPs per load 71874/4356 = 16.5.
     */
    check_hand_computed(33, 33, 33, 32, (expected_counts){2, 2, 4, 2, 35937, 35937, 71874, 2178,
                                                          2178, 4356, 6014, 6014, 8192, 4.0,
                                                          16.5, 16.5});
}

static void test_large_shapes(void)
{
    tg_load_counts c;
    /* 4096^3, TILE 32: naive 2 * 2^36; tiled A = 2^12 * 2^12 * 2^7 = 2^31, B the same. */
    tg_count_loads(4096, 4096, 4096, 32, &c);
    EXPECT_I64("4096^3", c.naive_loads, INT64_C(137438953472));
    EXPECT_I64("4096^3", c.tiled_loads_a, INT64_C(2147483648));
    EXPECT_I64("4096^3", c.tiled_loads, INT64_C(4294967296));
    EXPECT_NEAR("4096^3", c.savings, 32.0);
    EXPECT_NEAR("4096^3", c.tiled_flops_per_load, 32.0);
    /* 16384^3, TILE 32: naive 2 * 2^42; tiled A = 2^14 * 2^14 * 2^9 = 2^37; zero fills 0. */
    tg_count_loads(16384, 16384, 16384, 32, &c);
    EXPECT_I64("16384^3", c.naive_loads, INT64_C(8796093022208));
    EXPECT_I64("16384^3", c.tiled_loads_b, INT64_C(137438953472));
    EXPECT_I64("16384^3", c.tiled_zero_fills_a, 0);
    EXPECT_NEAR("16384^3", c.savings, 32.0);
    /* 2^20 cubed, TILE 1: naive 2 * 2^60, the largest the CLI accepts; tiled = naive. */
    tg_count_loads(INT64_C(1) << 20, INT64_C(1) << 20, INT64_C(1) << 20, 1, &c);
    EXPECT_I64("2^20 cubed", c.naive_loads, INT64_C(1) << 61);
    EXPECT_I64("2^20 cubed", c.tiled_loads, INT64_C(1) << 61);
    EXPECT_I64("2^20 cubed", c.tiled_zero_fills_b, 0);
    /* invalid tile: all zero */
    tg_count_loads(4, 4, 4, 0, &c);
    EXPECT_I64("tile 0", c.tiled_loads + c.naive_loads + c.blocks, 0);
}

/* The kernels' load rules, thread by thread, with no algebra. */
static void brute_force_counts(int64_t m, int64_t n, int64_t k, int tile, int64_t *naive_a,
                               int64_t *naive_b, int64_t *tiled_a, int64_t *tiled_b,
                               int64_t *zero_a, int64_t *zero_b)
{
    *naive_a = *naive_b = *tiled_a = *tiled_b = *zero_a = *zero_b = 0;
    for (int64_t row = 0; row < m; row++)
        for (int64_t col = 0; col < n; col++)
            for (int64_t p = 0; p < k; p++) {
                (*naive_a)++; /* A[row][p] */
                (*naive_b)++; /* B[p][col] */
            }

    int64_t grid_x = (n + tile - 1) / tile, grid_y = (m + tile - 1) / tile;
    int64_t phases = (k + tile - 1) / tile;
    for (int64_t by = 0; by < grid_y; by++)
        for (int64_t bx = 0; bx < grid_x; bx++)
            for (int64_t t = 0; t < phases; t++)
                for (int ty = 0; ty < tile; ty++)
                    for (int tx = 0; tx < tile; tx++) {
                        int64_t row = by * tile + ty, col = bx * tile + tx;
                        if (row < m && t * tile + tx < k)
                            (*tiled_a)++;
                        else
                            (*zero_a)++;
                        if (t * tile + ty < k && col < n)
                            (*tiled_b)++;
                        else
                            (*zero_b)++;
                    }
}

static void test_against_brute_force(void)
{
    static const int64_t sizes[] = {1, 2, 7, 16, 17, 33};
    static const int tiles[] = {1, 2, 3, 4, 5, 6, 7, 8, 16, 32};
    const int size_count = (int)(sizeof sizes / sizeof sizes[0]);
    const int tile_count = (int)(sizeof tiles / sizeof tiles[0]);
    int shapes = 0;
    for (int im = 0; im < size_count; im++)
        for (int in = 0; in < size_count; in++)
            for (int ik = 0; ik < size_count; ik++)
                for (int it = 0; it < tile_count; it++) {
                    int64_t m = sizes[im], n = sizes[in], k = sizes[ik];
                    int tile = tiles[it];
                    int64_t naive_a, naive_b, tiled_a, tiled_b, zero_a, zero_b;
                    brute_force_counts(m, n, k, tile, &naive_a, &naive_b, &tiled_a, &tiled_b,
                                       &zero_a, &zero_b);
                    tg_load_counts c;
                    tg_count_loads(m, n, k, tile, &c);
                    char what[96];
                    snprintf(what, sizeof what, "brute force %" PRId64 "x%" PRId64 "x%" PRId64
                             " tile %d", m, n, k, tile);
                    int before = failures;
                    EXPECT_I64(what, c.naive_loads_a, naive_a);
                    EXPECT_I64(what, c.naive_loads_b, naive_b);
                    EXPECT_I64(what, c.tiled_loads_a, tiled_a);
                    EXPECT_I64(what, c.tiled_loads_b, tiled_b);
                    EXPECT_I64(what, c.tiled_zero_fills_a, zero_a);
                    EXPECT_I64(what, c.tiled_zero_fills_b, zero_b);
                    EXPECT_NEAR(what, c.savings,
                                (double)(naive_a + naive_b) / (double)(tiled_a + tiled_b));
                    if (failures > before)
                        return; /* one failing shape is evidence enough */
                    shapes++;
                }
    printf("brute force: %d shapes agree with the closed forms\n", shapes);
}

/* Small integers in -3..3, so every float sum is exact. */
static void fill_small_integers(float *values, int64_t count, uint32_t seed)
{
    for (int64_t i = 0; i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        values[i] = (float)((int)((seed >> 16) % 7u) - 3);
    }
}

static int64_t count_occurrences(const char *text, const char *needle)
{
    int64_t count = 0;
    for (const char *p = text; p && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        count++;
    return count;
}

/* Runs the walk-through into a temporary file; returns its status, output in *text. */
static int run_walkthrough(int64_t m, int64_t n, int64_t k, int tile, int64_t tile_row,
                           int64_t tile_col, const float *A, const float *B, char **text)
{
    FILE *out = tmpfile();
    if (!out) {
        printf("FAIL: tmpfile() failed\n");
        failures++;
        *text = NULL;
        return -1;
    }
    int status = tg_simulate_print(out, m, n, k, tile, tile_row, tile_col, A, B);
    long size = ftell(out);
    *text = calloc((size_t)(size > 0 ? size : 0) + 1, 1);
    rewind(out);
    if (*text && size > 0 && fread(*text, 1, (size_t)size, out) != (size_t)size)
        (*text)[0] = '\0';
    fclose(out);
    return status;
}

static void test_walkthrough(void)
{
    enum { MAX = 64 };
    float A[MAX * MAX], B[MAX * MAX];
    char *text;

    fill_small_integers(A, 4 * 4, 1);
    fill_small_integers(B, 4 * 4, 2);
    int status = run_walkthrough(4, 4, 4, 2, 0, 0, A, B, &text);
    EXPECT_I64("4x4x4 tile 2 walk-through", status, 0);
    EXPECT_TRUE("4x4x4 tile 2 walk-through", text && strstr(text, "Phase t = 1"));
    EXPECT_TRUE("4x4x4 tile 2 walk-through", text && !strstr(text, "MISMATCH"));
    /* the legend is the only "0*": a 4x4x4 problem in tiles of 2 zero-fills nothing */
    EXPECT_I64("4x4x4 tile 2 has no zero fills", count_occurrences(text, "0*"), 1);
    free(text);

    fill_small_integers(A, 5 * 7, 3);
    fill_small_integers(B, 7 * 3, 4);
    status = run_walkthrough(5, 3, 7, 2, 0, 0, A, B, &text);
    EXPECT_I64("5x3x7 tile 2 walk-through", status, 0);
    EXPECT_TRUE("5x3x7 tile 2 marks zero fills", text && strstr(text, "0*"));
    EXPECT_TRUE("5x3x7 tile 2 has the legend", text && strstr(text, "zero-filled"));
    free(text);

    /* every tile of some ragged shapes, including tiles wider than the matrix */
    static const int64_t shapes[][3] = {{5, 3, 7}, {7, 17, 1}, {1, 1, 1}, {33, 7, 17}};
    static const int tiles[] = {1, 2, 3, 4, 16, 32};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        fill_small_integers(A, m * k, (uint32_t)(10 + s));
        fill_small_integers(B, k * n, (uint32_t)(20 + s));
        for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
            int tile = tiles[t];
            for (int64_t by = 0; by < (m + tile - 1) / tile; by++)
                for (int64_t bx = 0; bx < (n + tile - 1) / tile; bx++) {
                    status = run_walkthrough(m, n, k, tile, by, bx, A, B, &text);
                    free(text);
                    if (status != 0) {
                        printf("FAIL: walk-through %" PRId64 "x%" PRId64 "x%" PRId64
                               " tile %d block (%" PRId64 ", %" PRId64 ") returned %d\n",
                               m, n, k, tile, by, bx, status);
                        failures++;
                    }
                }
        }
    }

    /* a NaN breaks the product, and the walk-through must say so */
    fill_small_integers(A, 4 * 4, 1);
    fill_small_integers(B, 4 * 4, 2);
    A[0] = NAN;
    status = run_walkthrough(4, 4, 4, 2, 0, 0, A, B, &text);
    EXPECT_I64("NaN input is a mismatch", status, 1);
    EXPECT_TRUE("NaN input is a mismatch", text && strstr(text, "MISMATCH"));
    free(text);

    /* An exact value past FLT_MAX rounds to inf in float32: a float result of inf is right.
     * C[0][0] = 2e76 overflows, C[0][1] = C[1][0] = 2e38 does not, C[1][1] = 2. */
    {
        const float a[4] = {1e38f, 1e38f, 1, 1}, b[4] = {1e38f, 1, 1e38f, 1};
        status = run_walkthrough(2, 2, 2, 2, 0, 0, a, b, &text);
        EXPECT_I64("an exact value past FLT_MAX stored as inf agrees", status, 0);
        EXPECT_TRUE("an exact value past FLT_MAX stored as inf agrees",
                    text && !strstr(text, "MISMATCH"));
        free(text);
    }
    /* ...but only where the exact value overflows: 1e38 * 1 + 1e38 * 1 = 2e38 is finite, so a
     * tile that sums it to inf would be wrong; here -1e38 + 3e38 = 2e38 must stay finite. */
    {
        const float a[2] = {-1e38f, 3e38f}, b[2] = {1, 1};
        status = run_walkthrough(1, 1, 2, 2, 0, 0, a, b, &text);
        EXPECT_I64("a finite sum near FLT_MAX", status, 0);
        free(text);
    }

    /* arguments outside what can be printed */
    A[0] = 1.0f;
    EXPECT_I64("tile row outside the grid", run_walkthrough(4, 4, 4, 2, 2, 0, A, B, &text), 2);
    free(text);
    EXPECT_I64("tile 0", run_walkthrough(4, 4, 4, 0, 0, 0, A, B, &text), 2);
    free(text);
    EXPECT_I64("m = 65", run_walkthrough(65, 4, 4, 2, 0, 0, A, B, &text), 2);
    free(text);
}

static void test_command_line(void)
{
    printf("command line (the 'simulate:' messages below are expected):\n");
    fflush(stdout); /* keep them after this line */
    char *bad_tile[] = {"simulate", "--tile", "65", NULL};
    EXPECT_I64("--tile 65", tg_simulate_main(3, bad_tile), 2);
    char *bad_row[] = {"simulate", "5x3x7", "--tile-row=3", NULL};
    EXPECT_I64("--tile-row 3 for m = 5", tg_simulate_main(3, bad_row), 2);
    char *too_big[] = {"simulate", "--m", "100", NULL};
    EXPECT_I64("--m 100 without --counts-only", tg_simulate_main(3, too_big), 2);
    char *short_a[] = {"simulate", "2x2x2", "--a", "1,2,3", NULL};
    EXPECT_I64("--a with 3 of 4 values", tg_simulate_main(4, short_a), 2);
    char *not_number[] = {"simulate", "--k", "four", NULL};
    EXPECT_I64("--k four", tg_simulate_main(3, not_number), 2);
    char *unknown[] = {"simulate", "--tiles", "4", NULL};
    EXPECT_I64("--tiles", tg_simulate_main(3, unknown), 2);
}

int main(void)
{
    test_hand_computed();
    test_large_shapes();
    test_against_brute_force();
    test_walkthrough();
    test_command_line();
    if (failures) {
        printf("test_simulate: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_simulate: all passed\n");
    return 0;
}
