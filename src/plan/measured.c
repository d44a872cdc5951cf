/* Measured neighbours; see measured.h. */
#include "measured.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda/registry.h"
#include "../internal.h"

/* Distance: squared differences of ln m, ln n, and ln k at half weight (k changes the rung
 * ranking more slowly), plus this much for another orientation of the operands; weight
 * exp(-d / (2 h^2)) with h = 1.0.  Chosen, with plan.c's ALPHA and the 8 neighbours, by
 * leaving out one seed of the train half at a time, by coordinate descent over the neighbour
 * count, h, the k weight, the orientation distance and ALPHA (after the short calls were
 * re-timed: geometric mean regret 1.045 there in fp32, 85% of calls within 1.10; every other
 * setting tried, no better).  A distance for each leading dimension (op(A)'s, op(B)'s, C's)
 * whose 16-byte alignment differs from the call's, weighed 0.5 to 4, did no better left out
 * seed by seed either: fp32 86% within 1.10 at every weight, strict 86% -> 84-85%. */
#define K_WEIGHT 0.5
#define ORIENTATION_DISTANCE 2.0
#define BANDWIDTH 1.0

typedef struct measured {
    tg_problem problem;
    double ln_m, ln_n, ln_k;
    float *ms; /* [rung * TG_MEASURED_SLOTS + log2(slices)], NAN where not timed */
    unsigned retimed_on; /* a cc's own call: bit c set where card c has it in its file */
} measured;

static measured *calls;
static pthread_once_t calls_once = PTHREAD_ONCE_INIT;
static const unsigned char *excluded_calls; /* tg_measured_exclude */

void tg_measured_exclude(const unsigned char *excluded) { excluded_calls = excluded; }

static void load_calls(void)
{
    const int n = tg_measured_call_count, width = tg_rung_count * TG_MEASURED_SLOTS;
    calls = calloc((size_t)(n > 0 ? n : 1), sizeof *calls);
    float *ms = malloc((size_t)(n > 0 ? n : 1) * (size_t)(width > 0 ? width : 1) * sizeof *ms);
    if (!calls || !ms) { /* no neighbours: the cost model alone ranks the rungs */
        free(calls), free(ms);
        calls = NULL;
        return;
    }
    for (int i = 0; i < n; ++i) {
        const tg_measured_call *c = &tg_measured_calls[i];
        static _Alignas(256) float placeholder[1];
        const tg_call call = {.layout = c->layout, .transa = c->transa, .transb = c->transb,
                              .m = c->m, .n = c->n, .k = c->k, .alpha = 1.0f, .beta = 0.0f,
                              .A = placeholder, .B = placeholder, .C = placeholder,
                              .lda = tg_min_ld(c->layout, c->transa, c->m, c->k),
                              .ldb = tg_min_ld(c->layout, c->transb, c->k, c->n),
                              .ldc = tg_min_ld(c->layout, TG_NO_TRANS, c->m, c->n), .batch = 1};
        measured *m = &calls[i];
        tg_normalize(&call, &m->problem);
        m->ln_m = log((double)m->problem.m);
        m->ln_n = log((double)m->problem.n);
        m->ln_k = log((double)m->problem.k);
        m->ms = ms + (size_t)i * (size_t)width;
        for (int j = 0; j < width; ++j)
            m->ms[j] = NAN;
        for (int e = c->first; e < c->first + c->count; ++e) {
            const tg_measured_entry *x = &tg_measured_entries[e];
            const int rung = tg_find_rung(x->algo), slot = tg_measured_slot(x->slices);
            if (rung >= 0 && slot >= 0) /* a rung this build lacks: plan_regret says so */
                m->ms[rung * TG_MEASURED_SLOTS + slot] = x->ms;
        }
    }
    for (int i = 0; i < n; ++i) { /* which cards' files re-timed each of the cc's own calls */
        const tg_measured_call *c = &tg_measured_calls[i];
        if (c->card == 0 || c->card >= 32)
            continue;
        for (int j = 0; j < n; ++j) {
            const tg_measured_call *o = &tg_measured_calls[j];
            if (o->card == 0 && o->cc == c->cc && o->layout == c->layout &&
                o->transa == c->transa && o->transb == c->transb && o->m == c->m &&
                o->n == c->n && o->k == c->k)
                calls[j].retimed_on |= 1u << c->card;
        }
    }
}

int tg_measured_card(const char *device_name)
{
    for (int c = 1; device_name && c < tg_measured_card_count; ++c)
        if (strcmp(device_name, tg_measured_cards[c]) == 0)
            return c;
    return 0;
}

/* Whether call i is one the planner reads on a GPU of cc and card. */
static int read_on(int i, int cc, int card)
{
    const tg_measured_call *c = &tg_measured_calls[i];
    if (c->cc != cc || (excluded_calls && excluded_calls[i]))
        return 0;
    if (c->card != 0) /* a card's own row: that card's alone */
        return c->card == card;
    return card == 0 || card >= 32 || !(calls[i].retimed_on & (1u << card));
}

void tg_measured_neighbours(int cc, int card, const tg_problem *p, tg_neighbours *out)
{
    pthread_once(&calls_once, load_calls);
    out->count = 0;
    if (!calls)
        return;
    const double ln_m = log((double)p->m), ln_n = log((double)p->n), ln_k = log((double)p->k);
    double distance[TG_NEIGHBOURS];
    for (int i = 0; i < tg_measured_call_count; ++i) {
        const measured *c = &calls[i];
        if (!read_on(i, cc, card))
            continue;
        const double dm = ln_m - c->ln_m, dn = ln_n - c->ln_n, dk = ln_k - c->ln_k;
        const int same = (c->problem.a_cs == 1) == (p->a_cs == 1) &&
                         (c->problem.b_cs == 1) == (p->b_cs == 1);
        const double d = dm * dm + dn * dn + K_WEIGHT * dk * dk +
                         (same ? 0.0 : ORIENTATION_DISTANCE);
        /* insertion into the nearest TG_NEIGHBOURS, nearest first */
        int at = out->count < TG_NEIGHBOURS ? out->count : TG_NEIGHBOURS;
        if (at == TG_NEIGHBOURS && d >= distance[TG_NEIGHBOURS - 1])
            continue;
        if (at == TG_NEIGHBOURS)
            --at;
        while (at > 0 && distance[at - 1] > d) {
            distance[at] = distance[at - 1];
            out->call[at] = out->call[at - 1];
            --at;
        }
        distance[at] = d;
        out->call[at] = i;
        if (out->count < TG_NEIGHBOURS)
            ++out->count;
    }
    for (int j = 0; j < out->count; ++j)
        out->weight[j] = exp(-distance[j] / (2.0 * BANDWIDTH * BANDWIDTH));
}

const tg_problem *tg_measured_problem(int call) { return &calls[call].problem; }

double tg_measured_ms(int call, int rung, int slices)
{
    const int slot = tg_measured_slot(slices);
    return slot < 0 || rung < 0 || rung >= tg_rung_count ? NAN
                                                        : calls[call].ms[rung * TG_MEASURED_SLOTS + slot];
}
