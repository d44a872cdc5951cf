/*
 * Validation: the reference BLAS argument checks, in its order, with messages that name the
 * argument, its value and the rule it broke.
 *
 * A row-major call is checked the way reference CBLAS checks it: as the column-major call
 * C^T = op(B)^T op(A)^T, so after the two transpose checks come n, m, k, then ldb, lda, ldc.
 * The reported positions are those of the caller's own arguments.
 */
#include <stdint.h>

#include "internal.h"

static int tg_arg_position(const tg_call *call, tg_arg arg)
{
    /* Indexed by tg_arg: where each argument sits in tg_sgemm and in the batched call. */
    static const int plain[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0, 0, 0, 0};
    static const int batched[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 14, 15, 16, 10, 13, 17, 18};
    return call->batched ? batched[arg] : plain[arg];
}

static int is_op(tg_op op) { return op == TG_NO_TRANS || op == TG_TRANS; }

/* 1 when op(X)'s rows lie along memory: X is row-major and not transposed, or column-major and
 * transposed.  The one rule behind leading-dimension checks, minimum ld and strides. */
static int rows_contiguous(tg_layout layout, tg_op op)
{
    return (layout == TG_ROW_MAJOR) != (op == TG_TRANS);
}

/* Records an invalid-argument error at the caller's position of arg. */
#define reject(call, err, arg, ...)                                                              \
    tg_record((err), TG_ERROR_INVALID_ARGUMENT, tg_arg_position((call), (arg)), __VA_ARGS__)

/* The leading-dimension rule of one operand: ld must cover a stored row (row-major) or
 * column (column-major) of the matrix as it sits in memory. */
typedef struct ld_rule {
    char name;            /* 'A', 'B', 'C' */
    int64_t ld;
    int64_t need;         /* the dimension ld must reach (before max(1, .)) */
    const char *need_name; /* "m", "n" or "k" */
    int transposed;       /* -1 for C */
} ld_rule;

static tg_status check_ld(const tg_call *call, tg_error *err, tg_arg arg, ld_rule r)
{
    const int64_t minimum = r.need > 1 ? r.need : 1;
    if (r.ld >= minimum)
        return TG_SUCCESS;
    const char *layout = call->layout == TG_ROW_MAJOR ? "row-major" : "column-major";
    const char *op = r.transposed < 0 ? "" : r.transposed ? ", transposed" : ", no transpose";
    if (r.need >= 1)
        return reject(call, err, arg, "ld%c = %lld is less than %s = %lld (%s %c%s)",
                      r.name + ('a' - 'A'), (long long)r.ld, r.need_name, (long long)r.need,
                      layout, r.name, op);
    return reject(call, err, arg, "ld%c = %lld is less than 1 (%s %c%s)", r.name + ('a' - 'A'),
                  (long long)r.ld, layout, r.name, op);
}

/* The dimension that the leading dimension of op(X) stored with this layout must cover.
 * rows x cols is op(X)'s shape; a row-major matrix needs its row length, a column-major one
 * its column length, and a transpose swaps which of the two is stored. */
static ld_rule operand_rule(const tg_call *call, char name, tg_op op, int64_t ld, int64_t rows,
                            const char *rows_name, int64_t cols, const char *cols_name)
{
    /* A stored line is a row of op(X) (length cols) or a column (length rows). */
    const int needs_cols = rows_contiguous(call->layout, op);
    ld_rule r = {name, ld, needs_cols ? cols : rows, needs_cols ? cols_name : rows_name,
                 op == TG_TRANS};
    return r;
}

static tg_status check_dimension(const tg_call *call, tg_error *err, tg_arg arg, const char *name,
                                 int64_t value)
{
    if (value >= 0)
        return TG_SUCCESS;
    return reject(call, err, arg, "%s = %lld is negative", name, (long long)value);
}

/* The smallest x >= 0 with lo <= (a * x mod m) <= hi, for 0 <= lo <= hi < m and a >= 0, or -1
 * when there is none.  Euclid's algorithm on the modular interval: O(log m) steps. */
static int64_t first_in_interval(int64_t a, int64_t m, int64_t lo, int64_t hi)
{
    if (lo == 0)
        return 0;
    a %= m;
    if (a == 0)
        return -1;
    const int64_t x = (lo - 1) / a + 1; /* the first multiple of a at or above lo */
    if ((__int128)a * x <= hi)
        return x;
    /* No multiple of a lies in [lo, hi]: look for a wrap y, a x = lo..hi + m y, i.e.
     * m y mod a in [-hi mod a, -lo mod a]. */
    const int64_t y = first_in_interval(m % a, a, (a - hi % a) % a, (a - lo % a) % a);
    if (y < 0)
        return -1;
    const __int128 wrapped = ((__int128)m * y + lo - 1) / a + 1;
    return wrapped > INT64_MAX ? -1 : (int64_t)wrapped;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        const int64_t r = a % b;
        a = b, b = r;
    }
    return a;
}

int64_t tg_first_overlap(int64_t lines, int64_t length, int64_t ld, int64_t stride,
                         int64_t batch)
{
    if (batch < 2 || lines <= 0 || length <= 0)
        return 0;
    if (stride == 0)
        return 1;
    /* Item t starts t * stride after item 0; element (i, j) sits at i * ld + j.  Items 0 and t
     * share an element when d = t * stride = q * ld + r with 0 <= q < lines, |r| < length.
     * With last = the largest offset in an item, only d <= last can, and then q0 = d / ld is
     * below lines: they share one when d mod ld < length (q = q0), or when d mod ld > ld -
     * length and q0 + 1 < lines (q = q0 + 1, r < 0, which needs d < (lines - 1) * ld). */
    const __int128 last = (__int128)(lines - 1) * ld + (length - 1);
    if (stride > last)
        return 0;
    const __int128 t_max = last / stride < batch - 1 ? last / stride : batch - 1;
    const __int128 t_max_below = lines > 1 ? ((__int128)(lines - 1) * ld - 1) / stride : 0;
    const int64_t a = stride % ld;
    int64_t best = -1;
    /* d mod ld == 0: t = ld / gcd(a, ld). */
    const int64_t t0 = a == 0 ? 1 : ld / gcd64(a, ld);
    if (t0 <= t_max)
        best = t0;
    if (length > 1) {
        const int64_t t1 = first_in_interval(a, ld, 1, length - 1);
        if (t1 > 0 && t1 <= t_max && (best < 0 || t1 < best))
            best = t1;
        const int64_t t2 = ld - length + 1 <= ld - 1
                               ? first_in_interval(a, ld, ld - length + 1, ld - 1)
                               : -1;
        if (t2 > 0 && t2 <= t_max && t2 <= t_max_below && (best < 0 || t2 < best))
            best = t2;
    }
    return best > 0 ? best : 0;
}

/* A dimension of an operand, as the caller named it. */
typedef struct dim {
    int64_t value;
    const char *name; /* "m", "n" or "k" */
    tg_arg arg;
} dim;

/* An operand of `lines` stored lines of `length` elements, ld apart, batch items stride apart
 * (stride 0: one shared item) must span a byte range an int64 holds.  When even the smallest
 * legal ld (the line length) would not do, the dimensions are to blame, the larger of them;
 * otherwise ld is. */
static tg_status check_span(const tg_call *c, tg_error *err, char name, tg_arg ld_arg,
                            tg_arg stride_arg, dim lines, dim length, int64_t ld, int64_t stride)
{
    const int64_t items = c->batched && stride > 0 ? c->batch : 1;
    const __int128 item = (__int128)(lines.value - 1) * ld + length.value;
    const __int128 limit = INT64_MAX / (int64_t)sizeof(float);
    if ((__int128)lines.value * length.value > limit) {
        const dim big = length.value > lines.value ? length : lines;
        const dim other = length.value > lines.value ? lines : length;
        return reject(c, err, big.arg,
                      "%s = %lld with %s = %lld gives %c more elements than an int64 byte "
                      "offset reaches",
                      big.name, (long long)big.value, other.name, (long long)other.value, name);
    }
    if (item > limit)
        return reject(c, err, ld_arg,
                      "ld%c = %lld makes %c span %lld lines of it: more bytes than int64 holds",
                      name + ('a' - 'A'), (long long)ld, name, (long long)lines.value);
    if ((__int128)(items - 1) * stride + item > limit)
        return reject(c, err, stride_arg,
                      "stride_%c = %lld with batch_count = %lld makes %c span more bytes than "
                      "int64 holds",
                      name + ('a' - 'A'), (long long)stride, (long long)c->batch, name);
    return TG_SUCCESS;
}

/* The elements an operand holds: `items` matrices `stride` apart (1 item when stride is 0),
 * each `lines` stored lines of `length` elements, ld apart. */
typedef struct extent {
    const float *base;
    int64_t lines, length, ld, stride, items;
} extent;

static extent extent_of(const float *base, int64_t lines, int64_t length, int64_t ld,
                        int64_t stride, int64_t batch)
{
    extent e = {base, lines, length, ld, stride, stride > 0 ? batch : 1};
    return e;
}

static int64_t item_span(const extent *e) { return (e->lines - 1) * e->ld + e->length; }
static int64_t span(const extent *e) { return (e->items - 1) * e->stride + item_span(e); }

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* Comparisons before overlap() gives up and answers "undecided", which is refused. */
enum { OVERLAP_BUDGET = 1 << 22, UNDECIDED = 2 };

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t lesser(int64_t a, int64_t b) { return a < b ? a : b; }

/* Where an item of x may start, relative to an item of y, for the two to share an element,
 * when both have one leading dimension ld.  Line i of x is [v + i ld, v + i ld + x.length - 1],
 * line j of y [j ld, j ld + y.length - 1]; they meet when v = q ld + r with q = j - i in
 * [-(x.lines - 1), y.lines - 1] and r in [-(x.length - 1), y.length - 1].  As lengths are at
 * most ld, that is: v in [lo, hi] (the items' spans meet) and v mod ld in the `count` residues
 * from `first` on, cyclically (all of them when count >= ld). */
typedef struct meet_set {
    int64_t lo, hi, ld, first, count;
} meet_set;

static int64_t floor_mod(int64_t a, int64_t m) { return a - floor_div(a, m) * m; }

/* (a - b) mod m for a and b in [0, m), where m may be near INT64_MAX (a single line's ld). */
static int64_t mod_sub(int64_t a, int64_t b, int64_t m) { return a >= b ? a - b : a + (m - b); }

static meet_set meet_set_of(const extent *x, const extent *y)
{
    const int64_t ld = max64(x->ld, y->ld); /* one ld, or single lines where any ld will do */
    meet_set s = {-(item_span(x) - 1), item_span(y) - 1, ld, floor_mod(1 - x->length, ld),
                  x->length + y->length - 1};
    return s;
}

static int in_meet_set(const meet_set *s, int64_t v)
{
    return v >= s->lo && v <= s->hi &&
           (s->count >= s->ld || mod_sub(floor_mod(v, s->ld), s->first, s->ld) < s->count);
}

/* Whether c + w step lies in s for some w in [w_lo, w_hi]: O(log ld), by the first w past the
 * window's start whose residue falls in the set (first_in_interval). */
static int progression_meets(const meet_set *s, int64_t c, int64_t step, int64_t w_lo,
                             int64_t w_hi)
{
    if (w_lo > w_hi)
        return 0;
    if (step < 0) { /* w -> -w */
        const int64_t lo = w_lo;
        step = -step, w_lo = -w_hi, w_hi = -lo;
    }
    if (step == 0)
        return in_meet_set(s, c);
    /* The w that put c + w step inside [lo, hi]; c and the window lie within the operands'
     * spans, so nothing here overflows. */
    const int64_t a = max64(-floor_div(c - s->lo, step), w_lo);
    const int64_t b = lesser(floor_div(s->hi - c, step), w_hi);
    if (a > b)
        return 0;
    if (s->count >= s->ld)
        return 1;
    /* The smallest x >= 0 with (c + (a + x) step) mod ld in the residues: (x step) mod ld in
     * [lo, lo + count - 1], which wraps past ld - 1 (and so holds 0) or not. */
    const int64_t lo = mod_sub(s->first, floor_mod(c + a * step, s->ld), s->ld);
    const int64_t x = s->count - 1 >= s->ld - lo
                          ? 0
                          : first_in_interval(step % s->ld, s->ld, lo, lo + s->count - 1);
    return x >= 0 && x <= b - a;
}

/* overlap() for operands with one ld (or single lines): exact, in arithmetic.  Item t of x
 * starts D(t, u) = d + t x.stride - u y.stride after item u of y.  With one item on either
 * side that is one progression.  Otherwise D(t + P, u + Q) = D(t, u) for P = y.stride / g and
 * Q = x.stride / g (g their gcd), so every pair of items comes down to one with t < P or
 * u < Q: a progression for each such t (over every u) and each such u (over every t).  Equal
 * strides take two; only strides whose reduced ratio has terms past the budget are
 * undecided. */
static int overlap_one_ld(const extent *x, const extent *y, int64_t d)
{
    const meet_set s = meet_set_of(x, y);
    if (y->items == 1)
        return progression_meets(&s, d, x->stride, 0, x->items - 1);
    if (x->items == 1)
        return progression_meets(&s, d, -y->stride, 0, y->items - 1);
    const int64_t g = gcd64(x->stride, y->stride);
    const int64_t ts = lesser(x->items, y->stride / g), us = lesser(y->items, x->stride / g);
    if (ts + us > OVERLAP_BUDGET)
        return UNDECIDED;
    for (int64_t t = 0; t < ts; ++t)
        if (progression_meets(&s, d + t * x->stride, -y->stride, 0, y->items - 1))
            return 1;
    for (int64_t u = 0; u < us; ++u)
        if (progression_meets(&s, d - u * y->stride, x->stride, 0, x->items - 1))
            return 1;
    return 0;
}

/* Whether one item of x, starting d elements after one item of y, shares an element with it,
 * for operands with different lds: each line of the side with fewer is compared, against the
 * budget. */
static int items_meet(int64_t d, const extent *x, const extent *y, int64_t *budget)
{
    if (x->lines > y->lines) {
        const extent *swap = x;
        x = y, y = swap, d = -d;
    }
    for (int64_t i = 0; i < x->lines; ++i) {
        if (--*budget < 0)
            return UNDECIDED;
        const int64_t lo = d + i * x->ld, hi = lo + x->length - 1;
        const int64_t j0 = max64(floor_div(lo - y->length, y->ld) + 1, 0);
        const int64_t j1 = lesser(floor_div(hi, y->ld), y->lines - 1);
        if (j0 <= j1)
            return 1;
    }
    return 0;
}

/* 1 when some item of x shares an element with some item of y, x starting d elements after y
 * (UNDECIDED past the budget).  One ld is settled in arithmetic; otherwise only items whose
 * spans meet are compared, and every item of x visited counts against the budget too. */
static int overlap(const extent *x, const extent *y, int64_t d)
{
    if (x->ld == y->ld || (x->lines == 1 && y->lines == 1))
        return overlap_one_ld(x, y, d);
    int64_t budget = OVERLAP_BUDGET;
    const int64_t xs = item_span(x), ys = item_span(y);
    for (int64_t t = 0; t < x->items; ++t) {
        if (--budget < 0)
            return UNDECIDED;
        const int64_t dt = d + t * x->stride;
        int64_t u0 = 0, u1 = 0;
        if (y->items > 1) {
            u0 = max64(floor_div(dt - ys, y->stride) + 1, 0);
            u1 = lesser(floor_div(dt + xs - 1, y->stride), y->items - 1);
        }
        for (int64_t u = u0; u <= u1; ++u) {
            const int64_t du = dt - u * y->stride; /* item t of x relative to item u of y */
            if (du >= ys || du + xs <= 0)
                continue;
            const int met = budget < 0 ? UNDECIDED : items_meet(du, x, y, &budget);
            if (met)
                return met;
        }
    }
    return 0;
}

/* 1 when operand x (A or B) shares an element with C, 0 when not, UNDECIDED.  Spans that do
 * not meet settle it at once; a byte offset that is not a whole number of floats, where they
 * do, counts as sharing. */
static int shares_elements(const extent *x, const extent *c)
{
    const intptr_t bytes = (intptr_t)x->base - (intptr_t)c->base;
    const __int128 x_end = (__int128)bytes + (__int128)span(x) * (int64_t)sizeof(float);
    if (x_end <= 0 || bytes >= (__int128)span(c) * (int64_t)sizeof(float))
        return 0;
    if (bytes % (intptr_t)sizeof(float) != 0)
        return 1;
    return overlap(x, c, (int64_t)(bytes / (intptr_t)sizeof(float)));
}

tg_status tg_check_aliasing(const tg_call *c, tg_error *err)
{
    if (tg_is_quick_return(c) || !tg_has_product(c->alpha, c->k))
        return TG_SUCCESS;
    const int a_rows = rows_contiguous(c->layout, c->transa);
    const int b_rows = rows_contiguous(c->layout, c->transb);
    const int64_t batch = c->batched ? c->batch : 1;
    const int row = c->layout == TG_ROW_MAJOR;
    const extent C = extent_of(c->C, row ? c->m : c->n, row ? c->n : c->m, c->ldc,
                               c->batched ? c->stride_c : 0, batch);
    const extent A = extent_of(c->A, a_rows ? c->m : c->k, a_rows ? c->k : c->m, c->lda,
                               c->batched ? c->stride_a : 0, batch);
    const extent B = extent_of(c->B, b_rows ? c->k : c->n, b_rows ? c->n : c->k, c->ldb,
                               c->batched ? c->stride_b : 0, batch);
    int shared = shares_elements(&A, &C);
    const char *which = "A";
    if (!shared)
        shared = shares_elements(&B, &C), which = "B";
    if (shared == UNDECIDED)
        return reject(c, err, TG_ARG_C,
                      "C overlaps %s's memory in more interleaved lines than are checked: "
                      "refused in case they share elements (pass a copy of %s)",
                      which, which);
    if (shared)
        return reject(c, err, TG_ARG_C,
                      "C overlaps %s: they share elements, and C may not alias an operand that "
                      "is read (pass a copy of %s)",
                      which, which);
    return TG_SUCCESS;
}

tg_status tg_validate(const tg_call *c, tg_error *err)
{
    tg_status s;
    err->arg = 0;
    err->message[0] = '\0';
    if (c->layout != TG_ROW_MAJOR && c->layout != TG_COL_MAJOR)
        return reject(c, err, TG_ARG_LAYOUT,
                      "layout = %d is neither TG_ROW_MAJOR (101) nor TG_COL_MAJOR (102)",
                      (int)c->layout);
    if (!is_op(c->transa))
        return reject(c, err, TG_ARG_TRANSA,
                      "transa = %d is neither TG_NO_TRANS (111) nor TG_TRANS (112)",
                      (int)c->transa);
    if (!is_op(c->transb))
        return reject(c, err, TG_ARG_TRANSB,
                      "transb = %d is neither TG_NO_TRANS (111) nor TG_TRANS (112)",
                      (int)c->transb);

    const ld_rule rule_a = operand_rule(c, 'A', c->transa, c->lda, c->m, "m", c->k, "k");
    const ld_rule rule_b = operand_rule(c, 'B', c->transb, c->ldb, c->k, "k", c->n, "n");
    const ld_rule rule_c = {'C', c->ldc, c->layout == TG_ROW_MAJOR ? c->n : c->m,
                            c->layout == TG_ROW_MAJOR ? "n" : "m", -1};
    /* Reference CBLAS swaps the operands for row-major, and so the order of the checks:
     * column-major checks m, n, k, lda, ldb; row-major n, m, k, ldb, lda. */
    const int swapped = c->layout == TG_ROW_MAJOR;
    if ((s = check_dimension(c, err, swapped ? TG_ARG_N : TG_ARG_M, swapped ? "n" : "m",
                             swapped ? c->n : c->m)) ||
        (s = check_dimension(c, err, swapped ? TG_ARG_M : TG_ARG_N, swapped ? "m" : "n",
                             swapped ? c->m : c->n)) ||
        (s = check_dimension(c, err, TG_ARG_K, "k", c->k)) ||
        (s = check_ld(c, err, swapped ? TG_ARG_LDB : TG_ARG_LDA, swapped ? rule_b : rule_a)) ||
        (s = check_ld(c, err, swapped ? TG_ARG_LDA : TG_ARG_LDB, swapped ? rule_a : rule_b)))
        return s;
    if ((s = check_ld(c, err, TG_ARG_LDC, rule_c)))
        return s;

    if (c->batched) {
        if (c->stride_a < 0)
            return reject(c, err, TG_ARG_STRIDE_A, "stride_a = %lld is negative",
                          (long long)c->stride_a);
        if (c->stride_b < 0)
            return reject(c, err, TG_ARG_STRIDE_B, "stride_b = %lld is negative",
                          (long long)c->stride_b);
        if (c->stride_c < 0)
            return reject(c, err, TG_ARG_STRIDE_C, "stride_c = %lld is negative",
                          (long long)c->stride_c);
        if (c->stride_c == 0 && c->batch > 1 && c->m > 0 && c->n > 0)
            return reject(c, err, TG_ARG_STRIDE_C,
                          "stride_c = 0 with batch_count = %lld: every item would write the "
                          "same C",
                          (long long)c->batch);
        if (c->batch < 0)
            return reject(c, err, TG_ARG_BATCH, "batch_count = %lld is negative",
                          (long long)c->batch);
        /* Items may interleave (ldc = 2n with stride_c = n is legal), but two that share an
         * element of C would race. */
        const int64_t lines = c->layout == TG_ROW_MAJOR ? c->m : c->n;
        const int64_t length = c->layout == TG_ROW_MAJOR ? c->n : c->m;
        const int64_t t = tg_first_overlap(lines, length, c->ldc, c->stride_c, c->batch);
        if (t > 0)
            return reject(c, err, TG_ARG_STRIDE_C,
                          "stride_c = %lld makes C items %lld apart share elements (%s C with "
                          "%lld %s of %lld, ldc = %lld): they would race",
                          (long long)c->stride_c, (long long)t,
                          c->layout == TG_ROW_MAJOR ? "row-major" : "column-major",
                          (long long)lines, c->layout == TG_ROW_MAJOR ? "rows" : "columns",
                          (long long)length, (long long)c->ldc);
    }

    if (tg_is_quick_return(c))
        return TG_SUCCESS;
    /* Beyond the reference BLAS: a NULL that would be dereferenced is an error, not a crash. */
    const int reads_ab = tg_has_product(c->alpha, c->k);
    /* ... and so is memory no int64 offset can reach: every address computed inside the library
     * is an int64 element offset, and its byte count must fit as well. */
    const dim m = {c->m, "m", TG_ARG_M}, n = {c->n, "n", TG_ARG_N}, k = {c->k, "k", TG_ARG_K};
    if (reads_ab) {
        const int a_rows = rows_contiguous(c->layout, c->transa);
        const int b_rows = rows_contiguous(c->layout, c->transb);
        if ((s = check_span(c, err, 'A', TG_ARG_LDA, TG_ARG_STRIDE_A, a_rows ? m : k,
                            a_rows ? k : m, c->lda, c->stride_a)) ||
            (s = check_span(c, err, 'B', TG_ARG_LDB, TG_ARG_STRIDE_B, b_rows ? k : n,
                            b_rows ? n : k, c->ldb, c->stride_b)))
            return s;
    }
    if ((s = check_span(c, err, 'C', TG_ARG_LDC, TG_ARG_STRIDE_C,
                        c->layout == TG_ROW_MAJOR ? m : n, c->layout == TG_ROW_MAJOR ? n : m,
                        c->ldc, c->stride_c)))
        return s;
    if (reads_ab && c->A == NULL)
        return reject(c, err, TG_ARG_A, "A is NULL but alpha != 0 and k = %lld > 0",
                      (long long)c->k);
    if (reads_ab && c->B == NULL)
        return reject(c, err, TG_ARG_B, "B is NULL but alpha != 0 and k = %lld > 0",
                      (long long)c->k);
    if (c->C == NULL)
        return reject(c, err, TG_ARG_C, "C is NULL but m = %lld and n = %lld are not 0",
                      (long long)c->m, (long long)c->n);
    return TG_SUCCESS;
}

int tg_is_quick_return(const tg_call *c)
{
    return c->m == 0 || c->n == 0 || c->batch == 0 ||
           ((c->alpha == 0.0f || c->k == 0) && c->beta == 1.0f);
}

int64_t tg_min_ld(tg_layout layout, tg_op op, int64_t rows, int64_t cols)
{
    const int64_t stored = rows_contiguous(layout, op) ? cols : rows;
    return stored > 1 ? stored : 1;
}

/* Strides of element (r, c) of op(X), where X is stored with this layout and ld. */
static void op_strides(tg_layout layout, tg_op op, int64_t ld, int64_t *rs, int64_t *cs)
{
    const int along_rows = rows_contiguous(layout, op);
    *rs = along_rows ? ld : 1;
    *cs = along_rows ? 1 : ld;
}

void tg_normalize(const tg_call *c, tg_problem *p)
{
    int64_t a_rs, a_cs, b_rs, b_cs;
    op_strides(c->layout, c->transa, c->lda, &a_rs, &a_cs);
    op_strides(c->layout, c->transb, c->ldb, &b_rs, &b_cs);
    p->k = c->k;
    p->alpha = c->alpha;
    p->beta = c->beta;
    p->C = c->C;
    p->ldc = c->ldc;
    p->batch = c->batched ? c->batch : 1;
    p->stride_c = c->batched ? c->stride_c : 0;
    const int64_t stride_a = c->batched ? c->stride_a : 0;
    const int64_t stride_b = c->batched ? c->stride_b : 0;
    if (c->layout == TG_ROW_MAJOR) {
        p->m = c->m, p->n = c->n;
        p->A = c->A, p->a_rs = a_rs, p->a_cs = a_cs, p->stride_a = stride_a;
        p->B = c->B, p->b_rs = b_rs, p->b_cs = b_cs, p->stride_b = stride_b;
    } else {
        /* C^T = op(B)^T op(A)^T: transposing a view swaps its strides. */
        p->m = c->n, p->n = c->m;
        p->A = c->B, p->a_rs = b_cs, p->a_cs = b_rs, p->stride_a = stride_b;
        p->B = c->A, p->b_rs = a_cs, p->b_cs = a_rs, p->stride_b = stride_a;
    }
}
