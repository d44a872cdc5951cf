/* The command line that reruns a checked case; see rerun.h. */
#include "rerun.h"

#include <stdio.h>

void tg_case_command(const tg_case *c, const char *algo, uint64_t seed, char *buf, int size)
{
    snprintf(buf, (size_t)size,
             "tilegemm verify --algo %s --layout %s --trans %c%c --shape %lldx%lldx%lld "
             "--ld-pad %lld --alpha %.9g --beta %.9g --batch %lld%s%s%s%s --data %s --seed %llu",
             algo, c->layout == TG_ROW_MAJOR ? "row" : "col", c->transa == TG_TRANS ? 'T' : 'N',
             c->transb == TG_TRANS ? 'T' : 'N', (long long)c->m, (long long)c->n,
             (long long)c->k, (long long)c->ld_pad, c->alpha, c->beta, (long long)c->batch,
             c->share_a ? " --share-a" : "", c->misalign ? " --misalign" : "",
             c->small_ints ? " --exact" : "",
             c->memory == TG_CHECK_DEVICE    ? " --memory device"
             : c->memory == TG_CHECK_MANAGED ? " --memory managed"
                                             : "",
             tg_distribution_name(c->distribution), (unsigned long long)seed);
}
