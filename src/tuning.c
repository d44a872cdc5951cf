/* Lookup in the tuned tables; see tuning.h. */
#include "tuning.h"

#include <math.h>
#include <stddef.h>

const tg_tuned *tg_tuning_lookup(const tg_tuned *table, int count, int cc, int math,
                                 const tg_problem *p)
{
    const tg_tuned *best = NULL;
    double best_distance = 0.0;
    for (int i = 0; i < count; ++i) {
        const tg_tuned *t = &table[i];
        if (t->cc != cc || t->math != math || t->a_k_contiguous != (p->a_cs == 1) ||
            t->b_n_contiguous != (p->b_cs == 1))
            continue;
        const double dm = fabs(log2((double)p->m / (double)t->m));
        const double dn = fabs(log2((double)p->n / (double)t->n));
        const double dk = fabs(log2((double)p->k / (double)t->k));
        if (dm > 1.0 || dn > 1.0 || dk > 1.0)
            continue; /* more than 2x away in some dimension: not evidence for this call */
        const double distance = dm + dn + dk;
        if (!best || distance < best_distance)
            best = t, best_distance = distance;
    }
    return best;
}
