/*
 * Planning: which backend runs a validated problem, which rung and why, and which host
 * operands travel through device memory.  The reasons are kept as text for `tilegemm explain`
 * and tg_explain.
 *
 * Rules, in order:
 *   - a forced backend or rung is obeyed, or the call fails with the reason it cannot be;
 *   - no GPU: the CPU backend;
 *   - any operand in device or managed memory: CUDA, on the handle's stream;
 *   - all operands on the host: the CPU when the work (m*n*k*batch) is under the handle's
 *     threshold or there is no product to compute (alpha or k is 0), CUDA otherwise;
 *   - on CUDA, tg_choose picks the rung and the split-K slices: the tuned table's row for
 *     exactly this call (tuning.h), else the cost model's fastest (rung, slices) among the
 *     rungs the registry admits to auto, the math mode allows and the problem suits
 *     (cost_model.h), else the highest such rung.  A single product may be cut into up to
 *     256 slices of k, each at least 128 long (1024 on 3xTF32 rungs), summed in a fixed order.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/pool.h"
#include "../cuda/backend.h"
#include "../cuda/registry.h"
#include "../internal.h"
#include "autotune.h" /* tg_at_count_hit */
#include "cost_model.h"
#include "measured.h"
#include "tuning.h"

/* Appends to buf (NUL-terminated, size bytes); text past the end is cut. */
static void vappend(char *buf, size_t size, const char *fmt, va_list ap)
{
    const size_t used = strlen(buf);
    if (used + 1 < size)
        vsnprintf(buf + used, size - used, fmt, ap);
}

static void append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(buf, size, fmt, ap);
    va_end(ap);
}

static void note(tg_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(tg_plan *plan, const char *fmt, ...)
{
    if (!plan->explaining)
        return;
    va_list ap;
    va_start(ap, fmt);
    vappend(plan->why, sizeof plan->why, fmt, ap);
    va_end(ap);
}

static const char *memory_name(tg_memory kind)
{
    return kind == TG_MEMORY_DEVICE ? "device" : kind == TG_MEMORY_MANAGED ? "managed" : "host";
}

/* The shortest k auto sends to 3xTF32, per slice when split.  Measured on the H100
 * (bench/accuracy, 1024 x 1024 x k, uniform, wide-range and cancelling data): from k = 256 on
 * its RMS error is no larger than the FFMA rungs' (at k = 64, 1.8 times theirs, at 16, 1.7 to
 * 2.8 times: an error that does not shrink with k as rounding in long sums grows).  A model of
 * the tensor core's sum as truncating (bench/tc_split_model.py) puts it in the sum rather than
 * in the dropped small * small term: a fourth product would gain 2-5%. */
#define TG_3XTF32_MIN_K 256
/* The shortest slice of k a 3xTF32 rung is split into: measured on the H100, 1024^3 cut into
 * two slices of 512 on rung 9 took 1.45 times as long as unsplit (the judged run of seed
 * 20261201), while 1024 x 1024 x 65536 gains from slices of 32768.  The cost model weighs a
 * split wave by its k steps alone and would take the shorter slices. */
#define TG_3XTF32_MIN_SPLIT_SLICE 1024
/* Split-K: the shortest slice worth a partial product, and the most workspace it may take. */
#define TG_SPLIT_MIN_SLICE 128
#define TG_SPLIT_MAX_BYTES (256.0 * 1024 * 1024)

/* Why rung i cannot run p on a GPU of compute capability cc (NULL when it can). */
static const char *rung_refuses(int cc, int i, const tg_problem *p)
{
    static _Thread_local char reason[96];
    const tg_rung *rung = tg_rungs[i];
    if (cc < rung->min_cc) {
        snprintf(reason, sizeof reason, "needs compute capability %d.%d or higher",
                 rung->min_cc / 10, rung->min_cc % 10);
        return reason;
    }
    return rung->unsupported(p);
}

const char *tg_auto_refuses(const tg_device_props *dev, tg_math math, int i,
                                const tg_problem *p)
{
    if (i < 0)
        return "this build has no such rung";
    if (!tg_rungs[i]->in_auto)
        return "not yet admitted to auto (runs only when forced)";
    if (!tg_math_allows(math, tg_rungs[i]->arith))
        return math == TG_MATH_STRICT_FMA ? "not FP32 FMA arithmetic (math mode strict)"
                                          : "TF32 arithmetic, below FP32 accuracy (math mode "
                                            "fp32)";
    if (tg_rungs[i]->arith == TG_ARITH_3XTF32 && p->k < TG_3XTF32_MIN_K)
        return "k is under 256, where the 3xTF32 split's error exceeds the FFMA rungs' rounding "
               "error (measured)";
    /* a rung's own limits in auto (tg_rung.auto_min_side, auto_max_workspace: its entry says
     * why) */
    const tg_rung *rung = tg_rungs[i];
    static _Thread_local char reason[112];
    const int64_t side = rung->auto_min_side;
    if (side > 0 && (p->m < side || p->n < side || p->k < side)) {
        snprintf(reason, sizeof reason,
                 "m, n or k is under %lld, the least auto runs it on (below, it costs more than "
                 "it saves)", (long long)side);
        return reason;
    }
    if (rung->auto_max_workspace > 0.0 && rung->workspace_bytes &&
        (double)rung->workspace_bytes(p) > rung->auto_max_workspace) {
        snprintf(reason, sizeof reason, "its workspace would exceed the %.0f GiB auto lets it take",
                 rung->auto_max_workspace / (1024.0 * 1024 * 1024));
        return reason;
    }
    return rung_refuses(dev->compute_capability, i, p);
}

int tg_most_slices(int i, const tg_problem *p)
{
    if (p->batch != 1 || tg_rungs[i]->unsplit)
        return 1;
    const int64_t shortest =
        tg_rungs[i]->arith == TG_ARITH_3XTF32 ? TG_3XTF32_MIN_SPLIT_SLICE : TG_SPLIT_MIN_SLICE;
    const double by_workspace = TG_SPLIT_MAX_BYTES / (4.0 * (double)p->m * (double)p->n);
    int64_t most = p->k / shortest;
    most = most < TG_MAX_SPLIT_K ? most : TG_MAX_SPLIT_K;
    most = (double)most < by_workspace ? most : (int64_t)by_workspace;
    /* k / most rounds down to TG_SPLIT_K_ALIGN: step down until every full slice is long
     * enough. */
    while (most > 1 && tg_split_k_lengths_of(p->k, (int)most).slice_k < shortest)
        --most;
    return most > 1 ? (int)most : 1;
}

static int split_allowed(int i, const tg_problem *p, int slices)
{
    return slices == 1 || slices <= tg_most_slices(i, p);
}

/* Why the chooser may not weigh rung i: a forced rung is the only one, with its own limits
 * alone; otherwise auto's rules. */
static const char *choice_refuses(const tg_device_props *dev, tg_math math, int forced_rung,
                                  int i, const tg_problem *p)
{
    if (forced_rung >= 0)
        return i == forced_rung ? rung_refuses(dev->compute_capability, i, p) : "not forced";
    return tg_auto_refuses(dev, math, i, p);
}

/* The model's rows by registry index and orientation class (op(A) along k, op(B) along n),
 * for each model device: looked up by name once, so a choice costs no string compares. */
enum { kMaxModelDevices = 8, kMaxRungs = 64 };
static const tg_model_rung *model_rows[kMaxModelDevices][kMaxRungs][4];
static const tg_model_correction *model_corrections[kMaxModelDevices][kMaxRungs][4];
static pthread_once_t model_rows_once = PTHREAD_ONCE_INIT;

static void fill_model_rows(void)
{
    for (int d = 0; d < tg_model_device_count && d < kMaxModelDevices; ++d)
        for (int i = 0; i < tg_rung_count && i < kMaxRungs; ++i)
            for (int cls = 0; cls < 4; ++cls) {
                const tg_problem oriented = {.a_cs = cls & 2 ? 1 : 2, .b_cs = cls & 1 ? 1 : 2};
                model_rows[d][i][cls] =
                    tg_model_rung_for(&tg_model_devices[d], tg_rung_model_name(tg_rungs[i]),
                                      &oriented);
                model_corrections[d][i][cls] =
                    tg_model_correction_for(&tg_model_devices[d], tg_rung_model_name(tg_rungs[i]),
                                            &oriented);
            }
}

/* Rung i's model row for p's orientation, NULL without one, and its measured correction in
 * *correction (NULL: none). */
static const tg_model_rung *model_row(const tg_model_device *model, int i, const tg_problem *p,
                                      const tg_model_correction **correction)
{
    const tg_model_rung *row = NULL;
    const tg_model_correction *fix = NULL;
    const int d = model ? (int)(model - tg_model_devices) : -1;
    if (model && (d < 0 || d >= kMaxModelDevices || i >= kMaxRungs)) {
        row = tg_model_rung_for(model, tg_rung_model_name(tg_rungs[i]), p);
        fix = tg_model_correction_for(model, tg_rung_model_name(tg_rungs[i]), p);
    } else if (model) {
        pthread_once(&model_rows_once, fill_model_rows);
        const int cls = (p->a_cs == 1) * 2 + (p->b_cs == 1);
        row = model_rows[d][i][cls];
        fix = model_corrections[d][i][cls];
    }
    *correction = fix;
    return row;
}

/* Whether rung i runs p turned, its block's rows along n (tg_rung.turns). */
static int rung_turns(int i, const tg_problem *p)
{
    const tg_rung *r = tg_rungs[i];
    return r->turns && r->turns(p);
}

/* Rung i's block tile as it cuts p: its rows along m, or along n where it runs p turned. */
static void block_tile(int i, int turned, int *rows, int *cols)
{
    const tg_rung *r = tg_rungs[i];
    *rows = turned ? r->block_cols : r->block_rows;
    *cols = turned ? r->block_rows : r->block_cols;
}

/* The cost model's seconds for rung i (model row `row`, staging `staged` bytes, run `turned`
 * or not) on p cut into `slices`: the formula, times the row's measured correction (NULL:
 * none; the fit of that correction asks for the formula's own time so). */
static double model_seconds(const tg_model_device *model, const tg_model_rung *row,
                            const tg_model_correction *correction, int i, const tg_problem *p,
                            int sms, int slices, double staged, int turned)
{
    int rows, cols;
    block_tile(i, turned, &rows, &cols);
    const double corrected = tg_model_seconds(model, row, rows, cols, sms, p, slices, staged,
                                              tg_rungs[i]->phases, tg_rungs[i]->blocks_per_sm,
                                              tg_rungs[i]->stream_k) *
                             tg_model_correction_factor(correction, p, slices);
    const double floor = tg_model_full_wave_seconds(row, rows, cols, sms, p);
    return corrected > floor ? corrected : floor;
}

/* How full rung i's last wave is on p cut into `slices` (run `turned` or not): the full
 * slices' blocks an SM, divided by the whole rounds of one block an SM they take, as
 * tg_model_waves counts them; 1 fills every round.  Counted in the groups of blocks an SM holds
 * (tg_rung.blocks_per_sm), it did no better leaving one train seed out (strict 90.3% -> 90.1%
 * within 1.10). */
static double wave_fill(int i, const tg_problem *p, int sms, int slices, int turned)
{
    if (tg_rungs[i]->stream_k) /* one wave, every block busy to its end */
        return 1.0;
    int rows, cols;
    block_tile(i, turned, &rows, &cols);
    const double blocks = tg_model_tiles(rows, cols, p) *
                          (double)tg_split_k_lengths_of(p->k, slices).full;
    return blocks / sms / tg_model_waves(blocks, sms, 1, 1);
}

double tg_staged_bytes(int i, const tg_problem *p)
{
    const tg_rung *r = tg_rungs[i];
    return r->staged_bytes ? r->staged_bytes(p) : 0.0;
}

double tg_model_wave_fill(const tg_device_props *dev, int i, int slices, const tg_problem *p)
{
    const tg_model_device *model = tg_model_device_for(dev->compute_capability);
    const tg_model_correction *correction;
    const tg_model_rung *row = model_row(model, i, p, &correction);
    return row ? wave_fill(i, p, dev->sm_count > 0 ? dev->sm_count : 1, slices, rung_turns(i, p))
               : NAN;
}

void tg_model_block_tile(int i, const tg_problem *p, int *rows, int *cols)
{
    block_tile(i, rung_turns(i, p), rows, cols);
}

double tg_model_predict_ms(const tg_device_props *dev, int i, int slices, const tg_problem *p,
                           int formula_only)
{
    const tg_model_device *model = tg_model_device_for(dev->compute_capability);
    const tg_model_correction *correction;
    const tg_model_rung *row = model_row(model, i, p, &correction);
    if (!row)
        return NAN;
    return 1e3 * model_seconds(model, row, formula_only ? NULL : correction, i, p,
                               dev->sm_count > 0 ? dev->sm_count : 1, slices,
                               tg_staged_bytes(i, p), rung_turns(i, p));
}

/* Ranking: each (rung, slices) auto may run is scored by
 *   ALPHA * its measured log regret on the nearest timed calls (measured.h: ln(its time there /
 *           the fastest entry the mode allowed there), weighted by nearness; ln(3) where no
 *           neighbour timed it)
 *   + (1 - ALPHA) * ln(the cost model's time for it / the model's fastest candidate),
 * and the lowest score wins.  Measurements decide near timed calls; the model (its formula
 * times its measured correction, cost_model.h) orders what they did not time and follows the
 * tile and wave arithmetic between them.  ALPHA and the neighbourhood were chosen on the
 * corpus's train half alone (measured.c); with the correction, leaving out one seed at a time
 * put ALPHA at 0.6 (0.7 before it: the corrected model deserves more weight).
 * The model's term also takes RESIDUAL_WEIGHT times the model's own error at those neighbours
 * for the same (rung, slices): the weighted mean of ln(measured / predicted) there
 * (measured_log_residual), so a model that is off in one region is corrected there, while its
 * tile and wave arithmetic still tells a call from its neighbours.  Leaving out one seed of the
 * train half at a time, the residual at 0.5 and ALPHA at 0.5 put 86.9% of fp32 calls within
 * 1.10 of the best (85.8% without it), 86.3% in strict (84.5%); other weights from 0.3 to 1.0
 * gave no more.  Once the model counted waves in rounds of one block an SM (tg_model_waves),
 * ALPHA 0.4 did better left out seed by seed, the correction refitted without each seed: fp32
 * 86.3% -> 86.6% within 1.10, strict 85.7% -> 86.3% (0.3: 87.0% and 86.0%, worst 2.75; 0.6:
 * 85.5% and 84.9%); test_plan_regret --cross-validate 87.0% -> 87.6%, 86.3% -> 87.3%. */
#define ALPHA 0.4
#define RESIDUAL_WEIGHT 0.5
/* The measured term's neighbours also weigh exp(-(fill difference)^2 / (2 FILL_BANDWIDTH^2)),
 * the difference between their wave fill (wave_fill) and this call's for the same (rung,
 * slices).  Chosen from 0.1-0.5 leaving out one train seed at a time: fp32 86.9% -> 87.6% of
 * calls within 1.10, strict 86.3% -> 86.7%; held out, fp32 89.2% -> 89.7%, strict 89.2% ->
 * 89.4%.  On the model's term as well it did no better.  With the fill counted in rounds of
 * one block an SM (tg_model_waves), 0.1 and 0.3 did no better left out seed by seed either
 * (fp32 85.5% and 86.4% of calls within 1.10 against 86.3%, strict 85.8% and 85.1% against
 * 85.7%, the correction refitted without each seed). */
#define FILL_BANDWIDTH 0.2
#define UNTIMED_LOG_REGRET 1.0986 /* ln 3 */
/* Autotuning's wider list also weighs the rungs the cost model has no row for (tiled16 wins
 * some calls of a few microseconds, mmatf32 thin TF32 ones), their model term taken as this:
 * as if the model put them 35% behind its fastest.  Replayed on the corpus's held-out half,
 * the best of the first 8 of that list is within 2% of the best entry on 97% of calls in fp32,
 * against 94% for the first 8 (or 16) of the planner's own list. */
#define UNMODELLED_LOG_GAP 0.3
/* Autotuning also times the stream-K entry the model puts this far under the planner's choice
 * (tg_autotune_candidates). */
#define STREAM_K_AUTOTUNE_GAIN 0.9

enum { kMaxCandidates = 64 * TG_MEASURED_SLOTS }; /* rungs x slice counts */

/* Each measured call's log regrets by math mode: ln(time of rung i at a slot's slices / the
 * fastest entry the mode let auto use there), NAN where it was not timed or the mode forbids
 * it; [(call * 3 + mode) * width + rung * TG_MEASURED_SLOTS + slot].  Worked out once, so a
 * choice reads numbers and asks no rung anything. */
static float *regret_table;
static pthread_once_t regret_once = PTHREAD_ONCE_INIT;

static void fill_regret_table(void)
{
    const int n = tg_measured_call_count, width = tg_rung_count * TG_MEASURED_SLOTS;
    if (n == 0 || width == 0)
        return;
    float *table = malloc((size_t)n * 3 * (size_t)width * sizeof *table);
    if (!table) /* no neighbours: every candidate counts as untimed */
        return;
    for (int c = 0; c < n; ++c)
        for (int mode = 0; mode < 3; ++mode) {
            const tg_device_props dev = {.compute_capability = tg_measured_calls[c].cc};
            const tg_problem *p = tg_measured_problem(c);
            float *row = table + ((size_t)c * 3 + (size_t)mode) * (size_t)width;
            double best = INFINITY;
            for (int i = 0; i < tg_rung_count; ++i) {
                const int allowed = !tg_auto_refuses(&dev, (tg_math)mode, i, p);
                const int most = tg_most_slices(i, p);
                for (int slot = 0; slot < TG_MEASURED_SLOTS; ++slot) {
                    const int slices = tg_measured_slot_slices(slot);
                    const double ms = tg_measured_ms(c, i, slices);
                    const int counts = allowed && slices <= most && ms > 0.0;
                    row[i * TG_MEASURED_SLOTS + slot] = counts ? (float)ms : NAN;
                    if (counts && ms < best)
                        best = ms;
                }
            }
            for (int j = 0; j < width; ++j)
                row[j] = isnan(row[j]) ? NAN : (float)log(row[j] / best);
        }
    regret_table = table;
}

/* Each measured call's model error, ln(its median time on rung i at a slot's slices / what the
 * cost model predicts for it on the GPU it was timed on), NAN where it was not timed or the
 * model has no row; and its wave fill there (wave_fill), NAN without a model row.  Both
 * [call * width + rung * TG_MEASURED_SLOTS + slot], filled together. */
static float *residual_table, *fill_table;
static pthread_once_t model_tables_once = PTHREAD_ONCE_INIT;

static void fill_model_tables(void)
{
    const int n = tg_measured_call_count, width = tg_rung_count * TG_MEASURED_SLOTS;
    if (n == 0 || width == 0)
        return;
    float *residuals = malloc((size_t)n * (size_t)width * sizeof *residuals);
    float *fills = malloc((size_t)n * (size_t)width * sizeof *fills);
    if (!residuals || !fills) { /* none: the model's term is its own, neighbours unweighted */
        free(residuals), free(fills);
        return;
    }
    for (int c = 0; c < n; ++c) {
        const tg_model_device *model = tg_model_device_for(tg_measured_calls[c].cc);
        const tg_problem *p = tg_measured_problem(c);
        const int sms = tg_measured_calls[c].sms > 0 ? tg_measured_calls[c].sms : 1;
        const size_t of_call = (size_t)c * (size_t)width;
        for (int i = 0; i < tg_rung_count; ++i) {
            const tg_model_correction *correction;
            const tg_model_rung *row = model ? model_row(model, i, p, &correction) : NULL;
            const double staged = row ? tg_staged_bytes(i, p) : 0.0;
            const int turned = row ? rung_turns(i, p) : 0;
            for (int slot = 0; slot < TG_MEASURED_SLOTS; ++slot) {
                const int slices = tg_measured_slot_slices(slot);
                const double ms = tg_measured_ms(c, i, slices);
                double lr = NAN;
                if (row && ms > 0.0) {
                    const double predicted = 1e3 * model_seconds(model, row, correction, i, p, sms,
                                                                 slices, staged, turned);
                    if (predicted > 0.0)
                        lr = log(ms / predicted);
                }
                const size_t at = of_call + (size_t)(i * TG_MEASURED_SLOTS + slot);
                residuals[at] = (float)lr;
                fills[at] = row ? (float)wave_fill(i, p, sms, slices, turned) : NAN;
            }
        }
    }
    residual_table = residuals;
    fill_table = fills;
}

/* The weighted mean, over the neighbours, of a per-call table's value for rung i cut into
 * `slices` (call c's values at table + c * call_stride, TG_MEASURED_SLOTS a rung), skipping the
 * NAN ones; `none` where every one is NAN or there is no table.  Given this call's wave fill
 * for the candidate (`fill`, not NAN), a neighbour whose fill for it differs weighs less: a
 * split that ends in a full wave at one call may leave most of a wave idle at the next, and
 * its time there says little here (FILL_BANDWIDTH). */
static double neighbour_mean(const tg_neighbours *nb, const float *table, size_t call_stride,
                             int i, int slices, double none, double fill)
{
    const int slot = tg_measured_slot(slices);
    const size_t width = (size_t)tg_rung_count * TG_MEASURED_SLOTS;
    if (!isnan(fill))
        pthread_once(&model_tables_once, fill_model_tables);
    double sum = 0.0, weight = 0.0;
    const size_t at = (size_t)(i * TG_MEASURED_SLOTS + slot);
    for (int j = 0; table && slot >= 0 && j < nb->count; ++j) {
        const float x = table[(size_t)nb->call[j] * call_stride + at];
        if (isnan(x))
            continue;
        double w = nb->weight[j];
        const float theirs = !isnan(fill) && fill_table
                                 ? fill_table[(size_t)nb->call[j] * width + at]
                                 : NAN;
        if (!isnan(theirs))
            w *= exp(-(fill - theirs) * (fill - theirs) / (2.0 * FILL_BANDWIDTH * FILL_BANDWIDTH));
        sum += w * x;
        weight += w;
    }
    return weight > 0.0 ? sum / weight : none;
}

static double measured_log_residual(const tg_neighbours *nb, int i, int slices)
{
    pthread_once(&model_tables_once, fill_model_tables);
    const size_t width = (size_t)tg_rung_count * TG_MEASURED_SLOTS;
    return neighbour_mean(nb, residual_table, width, i, slices, 0.0, NAN);
}

/* The measured log regret of rung i cut into `slices` near p in math mode (see above); NAN
 * where no neighbour timed a count between the powers of two, or a stream-K rung (such a
 * choice is weighed only where it was timed: the model cannot tell a stream-K rung's cost from
 * its base entry's row alone, and put ffma128x256_spread_sk, untimed, first on the H100's
 * 101 x 429 x 24419 strict). */
static double measured_log_regret(const tg_neighbours *nb, tg_math math, int i, int slices,
                                  int forced, double fill)
{
    pthread_once(&regret_once, fill_regret_table);
    const size_t width = (size_t)tg_rung_count * TG_MEASURED_SLOTS;
    const int timed_only = (tg_split_k_fine(slices) || tg_rungs[i]->stream_k) && !forced;
    return neighbour_mean(nb, regret_table ? regret_table + (size_t)math * width : NULL, 3 * width,
                          i, slices, timed_only ? NAN : UNTIMED_LOG_REGRET, fill);
}

/* 24 bytes: the lists live on the stack of the caller's thread, kMaxCandidates long. */
typedef struct candidate {
    double seconds; /* the cost model's */
    double score;
    float fill;     /* wave_fill, NAN without a model row */
    short rung;     /* registry index, under kMaxRungs */
    short slices;   /* at most TG_MAX_SPLIT_K */
} candidate;

/* Every (rung, slices) the chooser may weigh for p, with the model's time: unsplit, then 1's
 * powers of two up to the most slices allowed (a forced split: that alone).  Returns how many.
 * Rungs without a model row are left out, unless `unmodelled` asks for them (autotuning's wider
 * list), with NAN seconds. */
static int gather(const tg_device_props *dev, tg_math math, int forced_rung, int forced_split,
                  int unmodelled, const tg_problem *p, candidate *out)
{
    const tg_model_device *model = tg_model_device_for(dev->compute_capability);
    const int sms = dev->sm_count > 0 ? dev->sm_count : 1;
    int count = 0;
    for (int i = 0; model && i < tg_rung_count; ++i) {
        const tg_model_correction *correction;
        const tg_model_rung *row = model_row(model, i, p, &correction);
        if ((!row && !unmodelled) || choice_refuses(dev, math, forced_rung, i, p))
            continue;
        const double staged = tg_staged_bytes(i, p);
        const int turned = rung_turns(i, p);
        /* The counts of tg_split_k_next up to the most slices allowed: the choices the regret
         * corpus times (score() weighs 3, 5, 6 and 7 only where the neighbours timed them), so
         * every choice the planner can make has a measured cost there.  A forced split is
         * obeyed as given: tg_set_split_k is for tuning. */
        const int most = forced_split ? forced_split : tg_most_slices(i, p);
        for (int slices = forced_split ? forced_split : 1; slices <= most && count < kMaxCandidates;
             slices = tg_split_k_next(slices))
            out[count++] = (candidate){
                .seconds = row ? model_seconds(model, row, correction, i, p, sms, slices, staged,
                                               turned)
                               : NAN,
                .fill = row ? (float)wave_fill(i, p, sms, slices, turned) : NAN,
                .rung = (short)i,
                .slices = (short)slices};
    }
    return count;
}

/* Scores the candidates (see ALPHA and RESIDUAL_WEIGHT above); one without a model row is
 * taken as UNMODELLED_LOG_GAP behind the model's fastest; a count between the powers of two
 * that no neighbour timed scores INFINITY, never chosen, unless tg_set_split_k forced the
 * slices (forced_split).  A rung with an auto margin (tg_rung.auto_margin) takes ln(margin)
 * more, ranked as if that much slower. */
static void score(const tg_device_props *dev, tg_math math, const tg_problem *p, candidate *c,
                  int count, int forced_split)
{
    tg_neighbours nb;
    tg_measured_neighbours(dev->compute_capability, dev->card, p, &nb);
    double fastest = INFINITY;
    for (int j = 0; j < count; ++j) { /* the measured term first: it says who is weighed */
        c[j].score = measured_log_regret(&nb, math, c[j].rung, c[j].slices, forced_split != 0,
                                         c[j].fill);
        if (!isnan(c[j].score) && c[j].seconds < fastest)
            fastest = c[j].seconds;
    }
    for (int j = 0; j < count; ++j)
        c[j].score = isnan(c[j].score)
                         ? INFINITY
                         : ALPHA * c[j].score +
                               (1.0 - ALPHA) * (isnan(c[j].seconds)
                                                    ? UNMODELLED_LOG_GAP
                                                    : log(c[j].seconds / fastest) +
                                                          RESIDUAL_WEIGHT *
                                                              measured_log_residual(
                                                                  &nb, c[j].rung, c[j].slices)) +
                               log(tg_rung_auto_margin(tg_rungs[c[j].rung]));
}

static int by_score(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    return (x->score > y->score) - (x->score < y->score);
}

int tg_choose_ranked(const tg_device_props *dev, tg_math math, const tg_problem *p,
                     tg_candidate *out, int max)
{
    candidate c[kMaxCandidates];
    const int count = gather(dev, math, -1, 0, 0, p, c);
    score(dev, math, p, c, count, 0);
    qsort(c, (size_t)count, sizeof *c, by_score);
    int n = 0;
    for (; n < count && n < max && !isinf(c[n].score); ++n)
        out[n] = (tg_candidate){c[n].rung, c[n].slices, c[n].seconds};
    return n;
}

int tg_autotune_candidates(const tg_device_props *dev, tg_math math, const tg_problem *p,
                           tg_candidate *out, int max)
{
    if (max < 1 || tg_choose_ranked(dev, math, p, out, 1) < 1)
        return 0;
    candidate c[kMaxCandidates];
    const int count = gather(dev, math, -1, 0, 1, p, c);
    score(dev, math, p, c, count, 0);
    qsort(c, (size_t)count, sizeof *c, by_score);
    int n = 1; /* the planner's own choice first, so timing can only improve on it */
    /* Second, the count between the powers of two that the model puts fastest for the chosen
     * rung, where it beats the choice: timing may take a count whose whole waves the corpus
     * never timed (bench/results/split-k/). */
    int fine = -1;
    for (int j = 0; j < count; ++j)
        if (c[j].rung == out[0].rung && tg_split_k_fine(c[j].slices) &&
            c[j].seconds < out[0].seconds && (fine < 0 || c[j].seconds < c[fine].seconds))
            fine = j;
    if (fine >= 0 && n < max)
        out[n++] = (tg_candidate){c[fine].rung, c[fine].slices, c[fine].seconds};
    /* Third, the stream-K entry the model puts fastest, where it beats the choice by a tenth
     * (its formula's error against the H200's stream-K calls, RMS of the log, cost_model.h):
     * timing may take an entry the corpus has not timed yet, which the planner does not weigh. */
    int streamed = -1;
    for (int j = 0; j < count; ++j)
        if (tg_rungs[c[j].rung]->stream_k && c[j].rung != out[0].rung &&
            c[j].seconds < STREAM_K_AUTOTUNE_GAIN * out[0].seconds &&
            (streamed < 0 || c[j].seconds < c[streamed].seconds))
            streamed = j;
    if (streamed >= 0 && n < max)
        out[n++] = (tg_candidate){c[streamed].rung, c[streamed].slices, c[streamed].seconds};
    for (int j = 0; j < count && n < max && !isinf(c[j].score); ++j)
        if ((c[j].rung != out[0].rung || c[j].slices != out[0].split_k) && j != fine &&
            j != streamed)
            out[n++] = (tg_candidate){c[j].rung, c[j].slices, c[j].seconds};
    return n;
}

/* What a choice depends on: the GPU, the mode, what is forced, and every field of the problem
 * but the pointers, of which only the alignment within 256 bytes (the rungs' limits ask no
 * more).  Zeroed first, so memcmp sees no stray padding. */
typedef struct choice_key {
    int cc, sms, card, math, forced_rung, forced_split, beta_zero, alpha_zero;
    unsigned align_a, align_b, align_c;
    int64_t m, n, k, a_rs, a_cs, stride_a, b_rs, b_cs, stride_b, ldc, stride_c, batch;
} choice_key;

/* The last choices of this thread, direct-mapped by a hash of the key: a program repeats its
 * shapes, and ranking costs microseconds where a lookup costs nanoseconds. */
enum { kRemembered = 64 };
static _Thread_local struct {
    int used;
    choice_key key;
    tg_choice choice;
    int found;
} remembered[kRemembered];

static int choose_uncached(const tg_device_props *dev, tg_math math, int forced_rung,
                           int forced_split, const tg_problem *p, tg_choice *out);

int tg_choose(const tg_device_props *dev, tg_math math, int forced_rung, int forced_split,
              const tg_problem *p, tg_choice *out)
{
    choice_key key;
    memset(&key, 0, sizeof key);
    key.cc = dev->compute_capability, key.sms = dev->sm_count, key.card = dev->card;
    key.math = (int)math;
    key.forced_rung = forced_rung, key.forced_split = forced_split;
    key.beta_zero = p->beta == 0.0f, key.alpha_zero = p->alpha == 0.0f;
    key.align_a = (unsigned)((uintptr_t)p->A & 255u);
    key.align_b = (unsigned)((uintptr_t)p->B & 255u);
    key.align_c = (unsigned)((uintptr_t)p->C & 255u);
    key.m = p->m, key.n = p->n, key.k = p->k, key.a_rs = p->a_rs, key.a_cs = p->a_cs;
    key.stride_a = p->stride_a, key.b_rs = p->b_rs, key.b_cs = p->b_cs;
    key.stride_b = p->stride_b, key.ldc = p->ldc, key.stride_c = p->stride_c;
    key.batch = p->batch;
    uint64_t hash = 1469598103934665603ull; /* FNV-1a */
    const unsigned char *bytes = (const unsigned char *)&key;
    for (size_t i = 0; i < sizeof key; ++i)
        hash = (hash ^ bytes[i]) * 1099511628211ull;
    const int slot = (int)(hash % kRemembered);
    if (remembered[slot].used && memcmp(&remembered[slot].key, &key, sizeof key) == 0) {
        *out = remembered[slot].choice;
        return remembered[slot].found;
    }
    const int found = choose_uncached(dev, math, forced_rung, forced_split, p, out);
    remembered[slot].used = 1;
    remembered[slot].key = key;
    remembered[slot].choice = *out;
    remembered[slot].found = found;
    return found;
}

static int choose_uncached(const tg_device_props *dev, tg_math math, int forced_rung,
                           int forced_split, const tg_problem *p, tg_choice *out)
{
    *out = (tg_choice){.rung = -1, .split_k = 1, .runner_up = -1, .runner_up_split = 1};
    /* 1. A row of the tuned table for exactly this call: the rung measured fastest, with its
     * slices; a row that let the planner split (0) gets the best-scored slices for that rung. */
    const tg_tuned *tuned =
        forced_rung >= 0 ? NULL
                         : tg_tuning_lookup(tg_tuning_table, tg_tuning_count,
                                            dev->compute_capability, (int)math, p);
    if (tuned) {
        const int i = tg_find_rung(tuned->algo);
        const int slices = forced_split ? forced_split : tuned->split_k;
        if (!tg_auto_refuses(dev, math, i, p) && (slices == 0 || forced_split ||
                                                  split_allowed(i, p, slices))) {
            candidate c[kMaxCandidates];
            const int count = slices == 0 ? gather(dev, math, i, 0, 0, p, c) : 0;
            score(dev, math, p, c, count, 0);
            qsort(c, (size_t)count, sizeof *c, by_score);
            out->rung = i;
            out->split_k = count ? c[0].slices : slices ? slices : 1;
            out->seconds = count ? c[0].seconds : 0.0;
            out->tuned = tuned;
            return 1;
        }
    }
    /* 2. Measured neighbours and the cost model: every rung auto may use, at 1 and each power
     * of two of slices allowed. */
    candidate c[kMaxCandidates];
    const int count = gather(dev, math, forced_rung, forced_split, 0, p, c);
    if (count > 0) {
        score(dev, math, p, c, count, forced_split);
        qsort(c, (size_t)count, sizeof *c, by_score);
        out->rung = c[0].rung;
        out->split_k = c[0].slices;
        out->seconds = c[0].seconds;
        out->score = c[0].score;
        for (int j = 1; j < count && !isinf(c[j].score); ++j)
            if (c[j].rung != c[0].rung) {
                out->runner_up = c[j].rung;
                out->runner_up_split = c[j].slices;
                out->runner_up_seconds = c[j].seconds;
                break;
            }
        return 1;
    }
    /* 3. No model row: the forced rung, else the highest rung auto may use. */
    for (int i = tg_rung_count - 1; i >= 0; --i)
        if (!choice_refuses(dev, math, forced_rung, i, p)) {
            out->rung = i;
            out->split_k = forced_split ? forced_split : 1;
            return 1;
        }
    return 0;
}

static tg_device_props device_of(const tg_handle *h)
{
    return (tg_device_props){.compute_capability = h->compute_capability,
                             .sm_count = h->sm_count, .card = h->card};
}

static void note_split(tg_plan *plan, const tg_problem *p, int slices)
{
    char cut[256];
    tg_split_k_describe(p, slices, cut, sizeof cut);
    note(plan, "%s", cut);
}

void tg_append_choice_reasons(const tg_choice *c, int forced, const tg_device_props *dev,
                              const tg_problem *p, char *buf, size_t size)
{
    const int cc = dev->compute_capability;
    const double flops = 2.0 * (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
    const tg_rung *rung = tg_rungs[c->rung];
    if (forced)
        append(buf, size, "rung: %s (level %d), forced by tg_set_algo: %s\n", rung->name,
               rung->level, rung->summary);
    else if (c->tuned)
        append(buf, size,
               "rung: %s (level %d), measured fastest on sm_%d for exactly this shape and "
               "orientation (tuned table: %.1f TFLOP/s there): %s\n",
               rung->name, rung->level, cc, c->tuned->tflops, rung->summary);
    else if (c->seconds > 0.0) {
        char own[160] = ""; /* whose timed calls: the card's own where it has a file */
        if (dev->card)
            snprintf(own, sizeof own, " (this card's own, %s, where it re-timed them)",
                     tg_measured_cards[dev->card]);
        append(buf, size,
               "rung: %s (level %d), ranked first by the timed calls nearest this one%s and the "
               "cost model (score %.3f, 0 being the fastest timed there; the model predicts "
               "%.1f us, %.1f TFLOP/s%s); no tuned row for exactly this call on sm_%d: %s\n",
               rung->name, rung->level, own, c->score, c->seconds * 1e6,
               flops / c->seconds / 1e12, c->split_k > 1 ? " with split-K" : "", cc,
               rung->summary);
        if (c->runner_up >= 0)
            append(buf, size, "runner-up: %s%s, the model predicts %.1f us (%.1f TFLOP/s)\n",
                   tg_rungs[c->runner_up]->name, c->runner_up_split > 1 ? " with split-K" : "",
                   c->runner_up_seconds * 1e6, flops / c->runner_up_seconds / 1e12);
    } else
        append(buf, size,
               "rung: %s (level %d), the highest rung that supports this call (no cost model for "
               "sm_%d): %s\n",
               rung->name, rung->level, cc, rung->summary);
    char cut[256];
    tg_split_k_describe(p, c->split_k, cut, sizeof cut);
    append(buf, size, "%s", cut);
}

/* The reasons for choice c in the plan's explanation (tg_append_choice_reasons). */
static void note_choice(tg_plan *plan, const tg_choice *c, int forced,
                        const tg_device_props *dev, const tg_problem *p)
{
    if (plan->explaining)
        tg_append_choice_reasons(c, forced, dev, p, plan->why, sizeof plan->why);
}

static tg_status choose_rung(tg_handle *h, const tg_problem *p, tg_plan *plan)
{
    if (h->split_k > 1 && p->batch != 1)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                       "split-K (%d slices, tg_set_split_k) needs a single product, not a "
                       "batch of %lld",
                       h->split_k, (long long)p->batch);
    const tg_device_props dev = device_of(h);
    tg_choice c;
    if (h->algo >= 0) {
        const tg_rung *rung = tg_rungs[h->algo];
        const char *reason = rung_refuses(h->compute_capability, h->algo, p);
        if (reason)
            return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "algo \"%s\" cannot run this call: %s",
                           rung->name, reason);
        if (!tg_choose(&dev, h->math, h->algo, h->split_k, p, &c))
            return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "algo \"%s\" cannot run this call",
                           rung->name);
        plan->rung = c.rung;
        plan->split_k = c.split_k;
        note_choice(plan, &c, 1, &dev, p);
        return TG_SUCCESS;
    }
    note(plan, "math mode: %s\n", tg_math_name(h->math));
    /* --- Autotuning (src/plan/autotune_use.c): a choice measured for exactly this key overrides
     * the planner while the math mode allows it; without one the call is marked for timing.
     * The only call site. --- */
    char autotune_why[512];
    int autotune_slices = 1;
    const int cached = tg_autotune_cached(h, p, plan, &autotune_slices, autotune_why,
                                          sizeof autotune_why);
    if (cached >= 0) {
        const char *refused = tg_auto_refuses(&dev, h->math, cached, p);
        if (!refused && !split_allowed(cached, p, autotune_slices))
            refused = "more slices than the planner allows";
        if (!refused) {
            plan->rung = cached;
            plan->split_k = autotune_slices;
            plan->autotuned = 1;
            tg_at_count_hit();
            note(plan, "%s", autotune_why);
            note_split(plan, p, plan->split_k);
            return TG_SUCCESS;
        }
        note(plan, "autotune: the cached choice %s is not followed (%s): the planner decides\n",
             tg_rungs[cached]->name, refused);
    }
    if (!tg_choose(&dev, h->math, -1, h->split_k, p, &c))
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "no CUDA rung supports this call");
    if (cached < 0 && plan->autotune_pending && c.seconds > 0.0 &&
        c.seconds < TG_AT_MIN_PREDICTED_SECONDS) {
        plan->autotune_pending = 0;
        note(plan, "autotune: on, but the model puts this call at %.1f us, under the %.0f us "
                   "below which timing cannot rank the candidates: the planner decides, and "
                   "nothing is cached\n",
             c.seconds * 1e6, TG_AT_MIN_PREDICTED_SECONDS * 1e6);
    } else if (cached < 0)
        note(plan, "%s", autotune_why);
    /* --- End of autotuning. --- */
    plan->rung = c.rung;
    plan->split_k = c.split_k;
    note_choice(plan, &c, 0, &dev, p);
    return TG_SUCCESS;
}

tg_status tg_make_plan(tg_handle *h, const tg_problem *p, tg_plan *plan, int explain)
{
    memset(plan, 0, sizeof *plan);
    plan->explaining = explain;
    plan->rung = -1;
    plan->split_k = 1;
    const int runs_product = tg_has_product(p->alpha, p->k);
    const char *names[TG_SLOT_SPLIT_K] = {[TG_SLOT_A] = "A", [TG_SLOT_B] = "B", [TG_SLOT_C] = "C"};
    const void *pointers[TG_SLOT_SPLIT_K] = {[TG_SLOT_A] = runs_product ? p->A : NULL,
                                             [TG_SLOT_B] = runs_product ? p->B : NULL,
                                             [TG_SLOT_C] = p->C};
    tg_memory kinds[TG_SLOT_SPLIT_K] = {TG_MEMORY_HOST, TG_MEMORY_HOST, TG_MEMORY_HOST};
    int on_device = -1; /* an operand only the GPU can read, if any */
    int off_host = 0;   /* operands in device or managed memory */
    for (int i = TG_SLOT_A; i <= TG_SLOT_C; ++i) {
        tg_status s = tg_cuda_memory_kind(h, pointers[i], &kinds[i]);
        if (s != TG_SUCCESS)
            return s;
        if (kinds[i] == TG_MEMORY_DEVICE && on_device < 0)
            on_device = i;
        off_host += kinds[i] != TG_MEMORY_HOST;
        plan->managed |= kinds[i] == TG_MEMORY_MANAGED;
    }
    const int gpus = tg_cuda_device_count();
    const double work = (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
    const int wants_cuda = h->backend == TG_BACKEND_CUDA || h->algo >= 0;

    if (h->backend == TG_BACKEND_CPU) {
        if (h->algo >= 0)
            return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                           "algo \"%s\" is a CUDA rung but the CPU backend is forced",
                           tg_rungs[h->algo]->name);
        if (on_device >= 0)
            return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0,
                           "%s is device memory, which the forced CPU backend cannot read",
                           names[on_device]);
        plan->backend = TG_BACKEND_CPU;
        note(plan, "backend: cpu, forced by tg_set_backend or TILEGEMM_BACKEND\n");
    } else if (wants_cuda && gpus == 0) {
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "%s needs a GPU and none was found",
                       h->algo >= 0 ? "the forced algo" : "the forced CUDA backend");
    } else if (wants_cuda) {
        plan->backend = TG_BACKEND_CUDA;
        note(plan, "backend: cuda, forced by %s\n",
             h->algo >= 0 ? "tg_set_algo" : "tg_set_backend or TILEGEMM_BACKEND");
    } else if (gpus == 0) {
        plan->backend = TG_BACKEND_CPU;
        note(plan, "backend: cpu, no GPU was found\n");
    } else if (off_host > 0) {
        plan->backend = TG_BACKEND_CUDA;
        note(plan, "backend: cuda, operands live in GPU-visible memory (A %s, B %s, C %s)\n",
             runs_product ? memory_name(kinds[TG_SLOT_A]) : "unread",
             runs_product ? memory_name(kinds[TG_SLOT_B]) : "unread",
             memory_name(kinds[TG_SLOT_C]));
    } else if (!runs_product) {
        plan->backend = TG_BACKEND_CPU;
        note(plan, "backend: cpu, alpha or k is 0 so only beta * C is computed, on the host\n");
    } else if (work < (double)h->gpu_min_work) {
        plan->backend = TG_BACKEND_CPU;
        note(plan,
             "backend: cpu, host operands and m*n*k*batch = %.0f is under the GPU threshold "
             "%lld (TILEGEMM_GPU_MIN_WORK)\n",
             work, (long long)h->gpu_min_work);
    } else {
        plan->backend = TG_BACKEND_CUDA;
        note(plan,
             "backend: cuda, host operands staged through device memory, m*n*k*batch = %.0f "
             "reaches the GPU threshold %lld (TILEGEMM_GPU_MIN_WORK)\n",
             work, (long long)h->gpu_min_work);
    }

    if (plan->backend == TG_BACKEND_CPU) {
        char threads[160] = "";
        if (plan->explaining)
            tg_pool_describe(threads, sizeof threads);
        note(plan, "kernel: cpu blocked (packed panels, register-tiled micro-kernel); threads: %s\n",
             threads);
        return TG_SUCCESS;
    }
    int staged = 0;
    for (int i = TG_SLOT_A; i <= TG_SLOT_C; ++i)
        staged |= plan->stage[i] = pointers[i] != NULL && kinds[i] == TG_MEMORY_HOST;
    if (staged)
        note(plan, "staging: %s%s%sthrough device memory, then synchronize\n",
             plan->stage[TG_SLOT_A] ? "A " : "", plan->stage[TG_SLOT_B] ? "B " : "",
             plan->stage[TG_SLOT_C] ? "C " : "");
    if (!runs_product) {
        note(plan, "kernel: scale C by beta (alpha or k is 0, A and B are not read)\n");
        return TG_SUCCESS;
    }
    return choose_rung(h, p, plan);
}

tg_status tg_plan_device_rung(tg_handle *h, const tg_problem *p, tg_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->backend = TG_BACKEND_CUDA;
    plan->split_k = 1;
    if (tg_cuda_device_count() == 0)
        return tg_fail(h, TG_ERROR_NOT_SUPPORTED, 0, "there is no GPU to plan for");
    return choose_rung(h, p, plan);
}
