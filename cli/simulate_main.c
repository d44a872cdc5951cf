/*
 * `tilegemm simulate`'s command line: options, the operands' values, and the calls into the
 * walk-through (simulate.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "shape.h"
#include "simulate.h"

enum {
    MAX_PRINT_SIZE = TG_SIMULATE_MAX_PRINT,
    MAX_TILE = TG_SIMULATE_MAX_TILE,
    EXIT_OK = TG_SIMULATE_OK,
    EXIT_MISMATCH = TG_SIMULATE_MISMATCH,
    EXIT_USAGE = TG_SIMULATE_USAGE
};
static const int64_t MAX_COUNT_SIZE = TG_SIMULATE_MAX_COUNT;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static const char USAGE[] =
    "usage: tilegemm simulate [MxNxK] [options]\n"
    "  Replays the classic tiled kernel on the CPU for one output tile, phase by phase,\n"
    "  and counts the global-memory loads of the naive and the tiled kernel.\n"
    "  --m M, --n N, --k K   sizes, C = A * B with A M x K and B K x N (default 4x4x4;\n"
    "                        1..64 for the walk-through)\n"
    "  --tile T              TILE, 1..64 (default 2; the real kernels use 16 and 32)\n"
    "  --tile-row R          block row to follow, blockIdx.y (default 0)\n"
    "  --tile-col C          block column to follow, blockIdx.x (default 0)\n"
    "  --seed S              seed of the small-integer inputs in -3..3 (default 1)\n"
    "  --a v,v,...           A's M*K values, row-major, instead of seeded ones\n"
    "  --b v,v,...           B's K*N values, row-major\n"
    "  --fill-a V|count      every element of A is V, or `count`: 1, 2, 3, ... row by row\n"
    "  --fill-b V|count      the same for B\n"
    "  --svg FILE            also draw the phases of the followed tile as an SVG sheet: the\n"
    "                        tiles of A and B loaded in each phase, the zero-filled cells and\n"
    "                        the output tile's partial sums\n"
    "  --counts-only         print only the load counts (sizes up to 1048576)\n"
    "  examples: tilegemm simulate 5x3x7 --tile 2 --tile-row 2\n"
    "            tilegemm simulate 34x34x34 --tile 16 --fill-a 1 --fill-b 2   (every C is 68)\n"
    "            tilegemm simulate 4x4x4 --tile 2 --fill-a count --fill-b count --svg t.svg\n"
    "                                                                   (C[0][0] = 90)\n";

typedef struct simulate_options {
    int64_t m, n, k;
    int64_t tile, tile_row, tile_col;
    uint64_t seed;
    const char *a_text, *b_text;
    int counts_only, have_shape;
    const char *fill_a, *fill_b; /* a constant or "count" */
    const char *svg_path;
} simulate_options;

static int usage_error(const char *message, const char *detail)
{
    fprintf(stderr, "tilegemm simulate: %s%s\nrun 'tilegemm simulate --help' for the options\n",
            message, detail ? detail : "");
    return EXIT_USAGE;
}

/* --fill-a / --fill-b: a constant, or "count" for 1, 2, 3, ... row by row. */
static int fill_values(const char *option, const char *how, float *values, int64_t count)
{
    float constant = 0.0f;
    const int counting = strcmp(how, "count") == 0;
    if (!counting && tg_parse_finite_float(how, &constant) != 0) {
        fprintf(stderr, "tilegemm simulate: %s takes a finite float or 'count', got '%s'\n",
                option, how);
        return 0;
    }
    for (int64_t i = 0; i < count; i++)
        values[i] = counting ? (float)(i + 1) : constant;
    return 1;
}

/* Comma- or space-separated floats; the count must be exactly `expected`. */
static int parse_values(const char *option, const char *text, int64_t expected,
                        const char *what, float *values)
{
    int64_t count = 0;
    const char *p = text;
    for (;;) {
        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        const size_t length = strcspn(p, ", \t");
        char item[64];
        float v = 0.0f;
        snprintf(item, sizeof item, "%.*s", (int)length, p);
        if (length >= sizeof item || tg_parse_finite_float(item, &v) != 0) {
            fprintf(stderr, "tilegemm simulate: %s: '%s' is not a finite float\n", option, item);
            return 0;
        }
        const char *end = p + length;
        if (count < expected)
            values[count] = v;
        count++;
        p = end;
    }
    if (count != expected) {
        fprintf(stderr, "tilegemm simulate: %s has %" PRId64 " values; %s, so it needs %" PRId64
                        " (row-major)\n", option, count, what, expected);
        return 0;
    }
    return 1;
}

/* Small integers make every float sum exact, so the check is bit for bit. */
static void fill_seeded(float *values, int64_t count, uint32_t *state)
{
    for (int64_t i = 0; i < count; i++) {
        *state = *state * 1103515245u + 12345u; /* the classic ANSI C LCG */
        values[i] = (float)((int)((*state >> 16) % 7u) - 3);
    }
}

static void usage(FILE *out) { fputs(USAGE, out); }

/* The positional shape MxNxK, once. */
static int take_shape(const char *text, void *ctx)
{
    simulate_options *o = ctx;
    long long m, n, k;
    if (o->have_shape || tg_parse_shape(text, &m, &n, &k) != 0) {
        fprintf(stderr, "tilegemm simulate: unexpected argument '%s' (a shape is written MxNxK, "
                        "e.g. 5x3x7)\n", text);
        return TG_ARGS_REPORTED;
    }
    o->m = m, o->n = n, o->k = k, o->have_shape = 1;
    return 0;
}

/* Returns -1 when the command should go on, else its exit code. */
static int parse_options(int argc, char **argv, simulate_options *o)
{
    tg_int_arg m = {INT64_MIN, INT64_MAX, &o->m, NULL}, n = {INT64_MIN, INT64_MAX, &o->n, NULL},
               k = {INT64_MIN, INT64_MAX, &o->k, NULL},
               tile = {INT64_MIN, INT64_MAX, &o->tile, NULL},
               row = {INT64_MIN, INT64_MAX, &o->tile_row, NULL},
               col = {INT64_MIN, INT64_MAX, &o->tile_col, NULL};
    const tg_option options[] = {
        {"--m", tg_arg_int, &m, "a whole number"},
        {"--n", tg_arg_int, &n, "a whole number"},
        {"--k", tg_arg_int, &k, "a whole number"},
        {"--tile", tg_arg_int, &tile, "a whole number"},
        {"--tile-row", tg_arg_int, &row, "a whole number"},
        {"--tile-col", tg_arg_int, &col, "a whole number"},
        {"--seed", tg_arg_u64, &o->seed, "a non-negative whole number"},
        {"--a", tg_arg_name, &o->a_text, "A's values, v,v,..."},
        {"--b", tg_arg_name, &o->b_text, "B's values, v,v,..."},
        {"--fill-a", tg_arg_name, &o->fill_a, "a finite float or count"},
        {"--fill-b", tg_arg_name, &o->fill_b, "a finite float or count"},
        {"--svg", tg_arg_name, &o->svg_path, "a file name"},
        {"--counts-only", NULL, &o->counts_only, NULL},
        {NULL, NULL, NULL, NULL}};
    return tg_args_parse("simulate", argc, argv, options, take_shape, o, usage);
}

static int check_size(const char *name, int64_t size, int64_t limit, int counts_only)
{
    if (size >= 1 && size <= limit)
        return 1;
    char detail[160];
    if (!counts_only && size > limit && size <= MAX_COUNT_SIZE)
        snprintf(detail, sizeof detail, " is %" PRId64 "; the walk-through prints sizes 1..%"
                 PRId64 " (add --counts-only for the load counts alone)", size, limit);
    else
        snprintf(detail, sizeof detail, " is %" PRId64 "; it must be between 1 and %" PRId64,
                 size, limit);
    usage_error(name, detail);
    return 0;
}

int tg_simulate_main(int argc, char **argv)
{
    simulate_options o = {.m = 4, .n = 4, .k = 4, .tile = 2, .seed = 1};
    const int early = parse_options(argc, argv, &o);
    if (early >= 0)
        return early;

    int64_t size_limit = o.counts_only ? MAX_COUNT_SIZE : MAX_PRINT_SIZE;
    if (!check_size("m", o.m, size_limit, o.counts_only) ||
        !check_size("n", o.n, size_limit, o.counts_only) ||
        !check_size("k", o.k, size_limit, o.counts_only))
        return EXIT_USAGE;
    if (o.tile < 1 || o.tile > MAX_TILE) {
        char detail[64];
        snprintf(detail, sizeof detail, " (got %" PRId64 ")", o.tile);
        return usage_error("--tile must be between 1 and 64", detail);
    }
    int tile = (int)o.tile;

    if (o.counts_only) {
        tg_simulate_print_counts(stdout, o.m, o.n, o.k, tile);
        return EXIT_OK;
    }

    int64_t block_rows = ceil_div(o.m, tile), block_cols = ceil_div(o.n, tile);
    if (o.tile_row < 0 || o.tile_row >= block_rows) {
        char detail[160];
        snprintf(detail, sizeof detail, "--tile-row %" PRId64 " is outside the grid: m = %" PRId64
                 " with TILE %d gives %" PRId64 " block rows (0..%" PRId64 ")", o.tile_row, o.m,
                 tile, block_rows, block_rows - 1);
        return usage_error(detail, NULL);
    }
    if (o.tile_col < 0 || o.tile_col >= block_cols) {
        char detail[160];
        snprintf(detail, sizeof detail, "--tile-col %" PRId64 " is outside the grid: n = %" PRId64
                 " with TILE %d gives %" PRId64 " block columns (0..%" PRId64 ")", o.tile_col,
                 o.n, tile, block_cols, block_cols - 1);
        return usage_error(detail, NULL);
    }

    float *A = malloc(sizeof(float) * (size_t)(o.m * o.k));
    float *B = malloc(sizeof(float) * (size_t)(o.k * o.n));
    if (!A || !B) {
        free(A);
        free(B);
        fprintf(stderr, "tilegemm simulate: out of memory\n");
        return EXIT_USAGE;
    }
    /* A first, then B, from one stream: a seed always gives the same pair */
    uint32_t state = (uint32_t)o.seed;
    fill_seeded(A, o.m * o.k, &state);
    fill_seeded(B, o.k * o.n, &state);

    int status = EXIT_OK;
    char what[96];
    snprintf(what, sizeof what, "A is m x k = %" PRId64 " x %" PRId64, o.m, o.k);
    if (o.a_text && !parse_values("--a", o.a_text, o.m * o.k, what, A))
        status = EXIT_USAGE;
    snprintf(what, sizeof what, "B is k x n = %" PRId64 " x %" PRId64, o.k, o.n);
    if (status == EXIT_OK && o.b_text && !parse_values("--b", o.b_text, o.k * o.n, what, B))
        status = EXIT_USAGE;
    if (status == EXIT_OK && o.fill_a && !fill_values("--fill-a", o.fill_a, A, o.m * o.k))
        status = EXIT_USAGE;
    if (status == EXIT_OK && o.fill_b && !fill_values("--fill-b", o.fill_b, B, o.k * o.n))
        status = EXIT_USAGE;

    if (status == EXIT_USAGE)
        fputs("run 'tilegemm simulate --help' for the options\n", stderr);
    if (status == EXIT_OK)
        status = tg_simulate_print(stdout, o.m, o.n, o.k, tile, o.tile_row, o.tile_col, A, B);
    if (status == EXIT_OK && o.svg_path) {
        if (tg_simulate_svg(o.svg_path, o.m, o.n, o.k, tile, o.tile_row, o.tile_col, A, B) == 0)
            printf("\nwrote %s: the phases of tile (%" PRId64 ", %" PRId64 ")\n", o.svg_path,
                   o.tile_row, o.tile_col);
        else
            status = EXIT_MISMATCH,
            fprintf(stderr, "tilegemm simulate: cannot write %s\n", o.svg_path);
    }
    free(A);
    free(B);
    return status;
}
