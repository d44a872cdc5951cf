/* The rung choice as a contract, on the CPU: what `auto` would run on an H100 (132 SMs,
 * compute capability 9.0) for a few hundred seeded random calls, single and batched, of every
 * layout and transpose, in each math mode.  tg_choose is a pure function of the GPU's properties, the
 * math mode and the problem, so no GPU is needed to hold it to:
 *   - strict names only FFMA rungs; fp32 never TF32; tf32 only where the mode is tf32;
 *   - the chosen rung can run the call and auto may use it (admitted, compute capability,
 *     3xTF32 only from k = 256 on, per slice);
 *   - split-K only for single products, slices of at least 128 of k (256 on 3xTF32), workspace
 *     bounded, bit-reproducible order (the backend's reduction);
 *   - a tuned row for exactly the call is followed;
 *   - otherwise the choice is the best-ranked candidate (tg_choose_ranked: measured neighbours
 *     and the cost model), at a count of slices the planner weighs: 1, a power of two, or 3, 5,
 *     6 or 7 where the regret corpus timed that count. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "plan/cost_model.h"
#include "cuda/registry.h"
#include "internal.h"
#include "rng.h"
#include "testing.h"
#include "plan/measured.h"
#include "plan/split_k.h"
#include "plan/tuning.h"

static const tg_device_props kH100 = {.compute_capability = 90, .sm_count = 132};

static tg_problem random_problem(uint64_t *seed, int64_t *m, int64_t *n, int64_t *k)
{
    int64_t d[3];
    for (int j = 0; j < 3; ++j)
        d[j] = (int64_t)llround(exp(log(1.0) + (log(65536.0) - log(1.0)) * 0.5 *
                                                   (tg_random_unit(seed) + 1.0)));
    const uint64_t pick = tg_splitmix64(seed);
    const tg_call call = {.layout = pick & 4 ? TG_COL_MAJOR : TG_ROW_MAJOR,
                          .transa = pick & 1 ? TG_TRANS : TG_NO_TRANS,
                          .transb = pick & 2 ? TG_TRANS : TG_NO_TRANS,
                          .m = d[0], .n = d[1], .k = d[2], .alpha = 1.0f, .beta = pick & 8 ? 0.5f : 0.0f,
                          .A = (const float *)256, .B = (const float *)512, .C = (float *)1024,
                          .batch = 1};
    tg_call c = call;
    if (pick & 16) { /* a strided batch of 2 to 8 dense items: never split along k */
        c.batched = 1;
        c.batch = 2 + (int64_t)((pick >> 8) % 7);
        c.stride_a = c.m * c.k;
        c.stride_b = c.k * c.n;
        c.stride_c = c.m * c.n;
    }
    c.lda = tg_min_ld(c.layout, c.transa, c.m, c.k);
    c.ldb = tg_min_ld(c.layout, c.transb, c.k, c.n);
    c.ldc = tg_min_ld(c.layout, TG_NO_TRANS, c.m, c.n);
    tg_problem p;
    tg_normalize(&c, &p);
    *m = d[0], *n = d[1], *k = d[2];
    return p;
}

static void check_contract(tg_math math, const tg_problem *p, const tg_choice *c,
                           const char *what)
{
    const tg_rung *r = tg_rungs[c->rung];
    const tg_arith arith = r->arith;
    EXPECT(tg_math_allows(math, arith), "%s: %s (%s) in math mode %s", what, r->name,
           tg_arith_name(arith), tg_math_name(math));
    if (math == TG_MATH_STRICT_FMA)
        EXPECT(arith == TG_ARITH_FFMA, "%s: strict ran %s", what, r->name);
    if (math != TG_MATH_TF32)
        EXPECT(arith != TG_ARITH_TF32, "%s: TF32 rung %s outside tf32 mode", what, r->name);
    EXPECT(r->in_auto, "%s: %s is not admitted to auto", what, r->name);
    EXPECT(r->unsupported(p) == NULL, "%s: %s cannot run it: %s", what, r->name,
           r->unsupported(p));
    EXPECT(kH100.compute_capability >= r->min_cc, "%s: %s needs cc %d", what, r->name, r->min_cc);
    EXPECT(c->split_k >= 1 && c->split_k <= TG_MAX_SPLIT_K, "%s: %d slices", what, c->split_k);
    const int64_t slice = (p->k + c->split_k - 1) / c->split_k;
    if (arith == TG_ARITH_3XTF32) /* k >= 256; split, full slices of at least 1024 */
        EXPECT(c->split_k > 1 ? tg_split_k_lengths_of(p->k, c->split_k).slice_k >= 1024
                              : p->k >= 256,
               "%s: 3xTF32 on %d slices of k = %lld", what, c->split_k, (long long)slice);
    if (c->split_k > 1) {
        EXPECT(p->batch == 1, "%s: a batch split", what);
        EXPECT(slice >= 128, "%s: a slice of k = %lld", what, (long long)slice);
        EXPECT(4.0 * c->split_k * (double)p->m * (double)p->n <= 256.0 * 1024 * 1024,
               "%s: %d slices of %lld x %lld", what, c->split_k, (long long)p->m,
               (long long)p->n);
    }
}

/* Whether `slices` is one of tg_split_k_counts for rung i on p: 1 to 8, then the powers of
 * two, within the rung's limit. */
static int listed_split(int i, int slices, const tg_problem *p)
{
    return tg_measured_slot(slices) >= 0 && (slices == 1 || slices <= tg_most_slices(i, p));
}

/* Whether rung i cut into `slices` is a count the planner weighs for p: a listed one, and a
 * count between the powers of two only where a measured call timed it (plan.c's score). */
static int weighed_split(int i, int slices, const tg_problem *p)
{
    if (!listed_split(i, slices, p))
        return 0;
    if (!tg_split_k_fine(slices))
        return 1;
    for (int c = 0; c < tg_measured_call_count; ++c)
        if (tg_measured_ms(c, i, slices) > 0.0)
            return 1;
    return 0;
}

/* No tuned row: the choice is the best-ranked candidate (measured neighbours and the cost
 * model, plan.c), cut into a count of slices the planner weighs, and the model has a time for
 * it. */
static void check_ranked_first(tg_math math, const tg_problem *p, const tg_choice *c,
                               const char *what)
{
    tg_candidate first;
    EXPECT(tg_choose_ranked(&kH100, math, p, &first, 1) == 1, "%s: nothing ranked", what);
    EXPECT(first.rung == c->rung && first.split_k == c->split_k,
           "%s: chose %s/%d, the best-ranked is %s/%d", what, tg_rungs[c->rung]->name,
           c->split_k, tg_rungs[first.rung]->name, first.split_k);
    EXPECT(c->seconds > 0.0, "%s: the model did not decide", what);
    EXPECT(weighed_split(c->rung, c->split_k, p),
           "%s: %d slices, not a count the planner weighs within %d", what, c->split_k,
           tg_most_slices(c->rung, p));
}

/* What autotuning times: the planner's own choice first, then distinct candidates the mode
 * allows, each at a count of slices the planner weighs.  Returns how many have
 * no model row (the widening past the planner's list). */
static int g_fine_candidates; /* autotuning's second candidates at 3, 5, 6 or 7 slices */

static int check_autotune_candidates(tg_math math, const tg_problem *p, const tg_choice *c,
                                     const char *what)
{
    tg_candidate list[8];
    const int n = tg_autotune_candidates(&kH100, math, p, list, 8);
    EXPECT(n >= 1 && n <= 8, "%s: %d autotune candidates", what, n);
    if (n < 1)
        return 0;
    EXPECT(list[0].rung == c->rung && list[0].split_k == c->split_k,
           "%s: autotuning times %s/%d first, the planner chose %s/%d", what,
           tg_rungs[list[0].rung]->name, list[0].split_k, tg_rungs[c->rung]->name, c->split_k);
    int unmodelled = 0;
    for (int j = 0; j < n; ++j) {
        const tg_candidate *x = &list[j];
        EXPECT(!tg_auto_refuses(&kH100, math, x->rung, p), "%s: candidate %s refused: %s", what,
               tg_rungs[x->rung]->name, tg_auto_refuses(&kH100, math, x->rung, p));
        /* the second may be the first's rung at a count between the powers of two that the
         * model puts faster, timed in the corpus or not */
        const int fine_second = j == 1 && x->rung == list[0].rung &&
                                tg_split_k_fine(x->split_k) &&
                                listed_split(x->rung, x->split_k, p) &&
                                x->seconds < list[0].seconds;
        g_fine_candidates += fine_second;
        EXPECT(fine_second || weighed_split(x->rung, x->split_k, p), "%s: candidate %s/%d", what,
               tg_rungs[x->rung]->name, x->split_k);
        for (int i = 0; i < j; ++i)
            EXPECT(list[i].rung != x->rung || list[i].split_k != x->split_k,
                   "%s: %s/%d listed twice", what, tg_rungs[x->rung]->name, x->split_k);
        unmodelled += isnan(x->seconds);
    }
    return unmodelled;
}

int main(int argc, char **argv)
{
    uint64_t seed = 0x706c616eull;
    for (int i = 1; i < argc; ++i) {
        if (!tg_test_seed_arg(argc, argv, &i, 0, &seed))
            return fprintf(stderr, "usage: test_plan [--seed N]\n"), 2;
    }
    if (tg_rung_count == 0) {
        printf("test_plan: this build has no CUDA rungs (no nvcc): skipped\n");
        return TG_TEST_SKIP;
    }
    const uint64_t first_seed = seed;
    printf("test_plan --seed %#llx\n", (unsigned long long)seed);
    int splits = 0, tensor = 0, unmodelled = 0;
    for (int i = 0; i < 400; ++i) {
        int64_t m, n, k;
        const tg_problem p = random_problem(&seed, &m, &n, &k);
        for (int mode = TG_MATH_FP32; mode <= TG_MATH_TF32; ++mode) {
            char what[160];
            snprintf(what, sizeof what, "case %d, %lldx%lldx%lld (normalized), math %s", i,
                     (long long)p.m, (long long)p.n, (long long)p.k, tg_math_name((tg_math)mode));
            tg_choice c;
            EXPECT(tg_choose(&kH100, (tg_math)mode, -1, 0, &p, &c), "%s: no choice", what);
            if (c.rung < 0)
                continue;
            check_contract((tg_math)mode, &p, &c, what);
            if (!c.tuned) {
                check_ranked_first((tg_math)mode, &p, &c, what);
                unmodelled += check_autotune_candidates((tg_math)mode, &p, &c, what);
            }
            splits += c.split_k > 1;
            tensor += tg_rungs[c.rung]->arith != TG_ARITH_FFMA;
        }
    }
    /* The sample reaches the cases the rules are about. */
    EXPECT(splits > 0, "no random call was split");
    EXPECT(tensor > 0, "no random call ran on tensor cores");
    EXPECT(unmodelled > 0, "autotuning never weighed a rung without a model row");
    EXPECT(g_fine_candidates > 0, "autotuning never timed a count between the powers of two");

    /* A tuned row is followed for exactly its call (and, by tg_tuning_lookup, only then). */
    int followed = 0;
    for (int i = 0; i < tg_tuning_count; ++i) {
        const tg_tuned *t = &tg_tuning_table[i];
        if (t->cc != kH100.compute_capability)
            continue;
        const tg_problem p = {.m = t->m, .n = t->n, .k = t->k, .a_rs = t->a_k_contiguous ? t->k : 1,
                              .a_cs = t->a_k_contiguous ? 1 : t->m,
                              .b_rs = t->b_n_contiguous ? t->n : 1,
                              .b_cs = t->b_n_contiguous ? 1 : t->k, .ldc = t->n, .batch = 1,
                              .alpha = 1.0f, .A = (const float *)256, .B = (const float *)512,
                              .C = (float *)1024};
        tg_choice c;
        const int rung = tg_find_rung(t->algo);
        /* a row auto cannot follow is a stale or wrong row, not one to skip */
        EXPECT(rung >= 0 && tg_rungs[rung]->in_auto, "tuned row %d (%lldx%lldx%lld %s) names a "
               "rung auto may not run", i, (long long)t->m, (long long)t->n, (long long)t->k,
               t->algo);
        if (rung < 0 || !tg_rungs[rung]->in_auto)
            continue;
        EXPECT(tg_choose(&kH100, (tg_math)t->math, -1, 0, &p, &c) && c.tuned == t &&
                   c.rung == rung,
               "tuned row %d (%lldx%lldx%lld %s) not followed: ran %s", i, (long long)t->m,
               (long long)t->n, (long long)t->k, t->algo, c.rung >= 0 ? tg_rungs[c.rung]->name : "-");
        /* Its slices as measured; a row measured with the planner's slices (0) gets the
         * best-ranked slices for that rung: a count the planner weighs. */
        if (t->split_k > 0)
            EXPECT(c.split_k == t->split_k, "tuned row %d: %d slices, not its %d", i, c.split_k,
                   t->split_k);
        else
            EXPECT(weighed_split(rung, c.split_k, &p),
                   "tuned row %d (%lldx%lldx%lld %s): %d slices", i, (long long)t->m,
                   (long long)t->n, (long long)t->k, t->algo, c.split_k);
        followed++;
    }
    printf("test_plan: 400 random calls x 3 modes (%d split, %d on tensor cores, %d unmodelled "
           "and %d fine-split autotune candidates), %d tuned rows\n",
           splits, tensor, unmodelled, g_fine_candidates, followed);

    /* Each rung's own limits in auto (tg_rung.auto_min_side, auto_max_workspace, unsplit), as
     * its entry states them: a side one under the least is refused in every mode, the least
     * is not refused for it, a workspace past the most is refused, and an unsplit rung is
     * never split. */
    int limited = 0;
    for (int i = 0; i < tg_rung_count; ++i) {
        const tg_rung *r = tg_rungs[i];
        const int64_t side = r->auto_min_side > 0 ? r->auto_min_side : 4096;
        tg_problem sq = {.m = side, .n = side, .k = side, .a_rs = side, .a_cs = 1, .b_rs = side,
                         .b_cs = 1, .ldc = side, .batch = 1, .alpha = 1.0f,
                         .A = (const float *)256, .B = (const float *)512, .C = (float *)1024};
        if (r->unsplit) {
            sq.k = 1 << 20;
            EXPECT(tg_most_slices(i, &sq) == 1, "%s is unsplit, yet may take %d slices", r->name,
                   tg_most_slices(i, &sq));
            sq.k = side;
        }
        if (!r->in_auto || r->auto_min_side <= 0)
            continue;
        for (int mode = TG_MATH_FP32; mode <= TG_MATH_TF32; ++mode) {
            if (!tg_math_allows((tg_math)mode, r->arith))
                continue;
            const char *at_least = tg_auto_refuses(&kH100, (tg_math)mode, i, &sq);
            EXPECT(!at_least || !strstr(at_least, "the least auto runs it on"),
                   "%s refused at its least side %lld: %s", r->name, (long long)side, at_least);
            for (int d = 0; d < 3; ++d) {
                tg_problem under = sq;
                *(d == 0 ? &under.m : d == 1 ? &under.n : &under.k) = side - 1;
                const char *why = tg_auto_refuses(&kH100, (tg_math)mode, i, &under);
                EXPECT(why && strstr(why, "the least auto runs it on"),
                       "%s: %s one under its least side %lld not refused for it (%s)", r->name,
                       d == 0 ? "m" : d == 1 ? "n" : "k", (long long)side, why ? why : "allowed");
            }
            if (r->auto_max_workspace > 0.0 && r->workspace_bytes) {
                tg_problem big = sq;
                big.m = big.n = big.k = big.ldc = big.a_rs = big.b_rs = 1 << 17;
                EXPECT((double)r->workspace_bytes(&big) > r->auto_max_workspace,
                       "%s: %lld^3 takes no more than its auto workspace", r->name,
                       (long long)big.m);
                const char *why = tg_auto_refuses(&kH100, (tg_math)mode, i, &big);
                EXPECT(why && strstr(why, "workspace"), "%s: a workspace of %.1f GiB allowed (%s)",
                       r->name, (double)r->workspace_bytes(&big) / (1 << 30), why ? why : "-");
            }
            limited++;
        }
    }
    printf("test_plan: rungs' own auto limits held in %d rung-mode pairs\n", limited);

    /* The shapes that need many slices: 32x32x100000 fills the SMs. */
    const tg_problem thin = {.m = 32, .n = 32, .k = 100000, .a_rs = 100000, .a_cs = 1,
                             .b_rs = 32, .b_cs = 1, .ldc = 32, .batch = 1, .alpha = 1.0f,
                             .A = (const float *)256, .B = (const float *)512, .C = (float *)1024};
    tg_choice c;
    EXPECT(tg_choose(&kH100, TG_MATH_STRICT_FMA, -1, 0, &thin, &c) && c.split_k >= 32,
           "32x32x100000 split into %d slices, wanted enough blocks for 132 SMs", c.split_k);
    /* The same as a batch of 2: split-K is for single products only. */
    tg_problem pair = thin;
    pair.batch = 2;
    pair.stride_a = 32 * 100000;
    pair.stride_b = 100000 * 32;
    pair.stride_c = 32 * 32;
    for (int mode = TG_MATH_FP32; mode <= TG_MATH_TF32; ++mode)
        EXPECT(tg_choose(&kH100, (tg_math)mode, -1, 0, &pair, &c) && c.split_k == 1,
               "a batch of two 32x32x100000 products split into %d slices (math %s)", c.split_k,
               tg_math_name((tg_math)mode));
    /* Stream-K entries, which the corpus has not timed: never the planner's choice, but
     * autotuning times the one the model puts fastest where it beats the choice by a tenth
     * (1676x1296x1294 row-major NT: 84 tiles of ffma128x256 on 132 SMs, the formula's stream-K
     * time 0.72 of the best split entry's). */
    const tg_problem medium = {.m = 1676, .n = 1296, .k = 1294, .a_rs = 1294, .a_cs = 1,
                               .b_rs = 1, .b_cs = 1294, .ldc = 1296, .batch = 1, .alpha = 1.0f,
                               .A = (const float *)256, .B = (const float *)512,
                               .C = (float *)1024};
    EXPECT(tg_choose(&kH100, TG_MATH_STRICT_FMA, -1, 0, &medium, &c) &&
               !tg_rungs[c.rung]->stream_k,
           "1676x1296x1294 strict: the planner chose %s, which the corpus never timed",
           tg_rungs[c.rung]->name);
    {
        tg_candidate list[8];
        const int n = tg_autotune_candidates(&kH100, TG_MATH_STRICT_FMA, &medium, list, 8);
        int streamed = 0;
        for (int j = 0; j < n; ++j)
            streamed += tg_rungs[list[j].rung]->stream_k && list[j].split_k == 1;
        EXPECT(streamed == 1, "1676x1296x1294 strict: %d stream-K entries among autotuning's "
                              "%d candidates, wanted 1", streamed, n);
    }
    /* Where the tiles fill many waves, stream-K runs all but the last one or two whole, and
     * its formula must come to about its base entry's unsplit time (8192^3: 4096 tiles of
     * 128 x 128 on 264 slots), not a time of its own. */
    {
        const tg_problem square = {.m = 8192, .n = 8192, .k = 8192, .a_rs = 8192, .a_cs = 1,
                                   .b_rs = 8192, .b_cs = 1, .ldc = 8192, .batch = 1,
                                   .alpha = 1.0f, .A = (const float *)256,
                                   .B = (const float *)512, .C = (float *)1024};
        const int sk = tg_find_rung("ffma128x128_spread_sk");
        const int base = tg_find_rung("ffma128x128_spread");
        const double ratio = tg_model_predict_ms(&kH100, sk, 1, &square, 1) /
                             tg_model_predict_ms(&kH100, base, 1, &square, 1);
        EXPECT(sk >= 0 && base >= 0 && ratio > 0.9 && ratio < 1.1,
               "8192^3: stream-K's formula %.3f times its base entry's unsplit", ratio);
    }
    /* A card with rows of its own reads them in place of the H100's for the same calls, and
     * only it: each such call's own row is its nearest neighbour there (distance 0), the H100's
     * row of it never one; on an H100 the reverse. */
    int card_calls = 0;
    for (int i = 0; i < tg_measured_call_count; ++i) {
        const tg_measured_call *own = &tg_measured_calls[i];
        if (own->card == 0)
            continue;
        EXPECT(tg_measured_card(tg_measured_cards[own->card]) == own->card,
               "card %d (\"%s\") not found by its name", own->card, tg_measured_cards[own->card]);
        const tg_problem *p = tg_measured_problem(i);
        for (int card = 0; card <= own->card; card += own->card) {
            tg_neighbours nb;
            tg_measured_neighbours(own->cc, card, p, &nb);
            for (int j = 0; j < nb.count; ++j) {
                const tg_measured_call *x = &tg_measured_calls[nb.call[j]];
                const int same = x->layout == own->layout && x->transa == own->transa &&
                                 x->transb == own->transb && x->m == own->m && x->n == own->n &&
                                 x->k == own->k;
                EXPECT(x->card == card || x->card == 0, "card %d read card %d's row", card,
                       x->card);
                EXPECT(!same || x->card == card,
                       "%lldx%lldx%lld: card %d read the %s row of a call its file re-timed",
                       (long long)own->m, (long long)own->n, (long long)own->k, card,
                       x->card ? "card's" : "H100's");
                EXPECT(j > 0 || same, "%lldx%lldx%lld on card %d: its own row is not the nearest",
                       (long long)own->m, (long long)own->n, (long long)own->k, card);
            }
        }
        card_calls++;
    }
    EXPECT(tg_measured_card("no such GPU") == 0 && tg_measured_card(NULL) == 0,
           "an unknown GPU name matched a card");
    printf("test_plan: %d calls of cards' own files read in place of the H100's\n", card_calls);
    if (tg_test_failures)
        fprintf(stderr, "reproduce: %s --seed %#llx\n", argv[0], (unsigned long long)first_seed);
    return tg_test_result("test_plan");
}
