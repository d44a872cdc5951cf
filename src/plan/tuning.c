/* Lookup in the tuned tables; see tuning.h. */
#include "tuning.h"

#include <stddef.h>

const tg_tuned *tg_tuning_lookup(const tg_tuned *table, int count, int cc, int math,
                                 const tg_problem *p)
{
    for (int i = 0; i < count; ++i) {
        const tg_tuned *t = &table[i];
        if (t->cc != cc || t->math != math || t->a_k_contiguous != (p->a_cs == 1) ||
            t->b_n_contiguous != (p->b_cs == 1))
            continue;
        if (t->m == p->m && t->n == p->n && t->k == p->k)
            return t;
    }
    return NULL;
}
