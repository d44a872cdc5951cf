/* The table of rungs, in the order of rungs.def, which is where a new rung is listed. */
#include <string.h>

#include "registry.h"

extern "C" {
#define TG_RUNG(name) extern const tg_rung tg_rung_##name;
#include "rungs.def"
#undef TG_RUNG

const tg_rung *const tg_rungs[] = {
#define TG_RUNG(name) &tg_rung_##name,
#include "rungs.def"
#undef TG_RUNG
};
const int tg_rung_count = (int)(sizeof tg_rungs / sizeof tg_rungs[0]);

int tg_find_rung(const char *name)
{
    for (int i = 0; i < tg_rung_count; ++i)
        if (strcmp(tg_rungs[i]->name, name) == 0)
            return i;
    return -1;
}

}
