/* The table of rungs, lowest first.  A new rung adds its entry here and nowhere else. */
#include <string.h>

#include "registry.h"

extern "C" {
extern const tg_rung tg_rung_naive;
extern const tg_rung tg_rung_tiled16;
extern const tg_rung tg_rung_tiled32;
extern const tg_rung tg_rung_blocktile64;
extern const tg_rung tg_rung_blocktile128;
extern const tg_rung tg_rung_warptile128;
extern const tg_rung tg_rung_warptile128_l2;
extern const tg_rung tg_rung_warptile256x128_l2;
extern const tg_rung tg_rung_warptile64;
extern const tg_rung tg_rung_ffma128x128;
extern const tg_rung tg_rung_ffma128x256;
extern const tg_rung tg_rung_ffma256x128_k16;
extern const tg_rung tg_rung_ffma256x128_s4;
extern const tg_rung tg_rung_ffma256x128;
extern const tg_rung tg_rung_mma3xtf32;
extern const tg_rung tg_rung_mmatf32;
extern const tg_rung tg_rung_wgmma3xtf32;
extern const tg_rung tg_rung_wgmmatf32;
extern const tg_rung tg_rung_skinny128x16;
extern const tg_rung tg_rung_skinny128x32;
extern const tg_rung tg_rung_skinny16x128;
extern const tg_rung tg_rung_skinny32x128;
extern const tg_rung tg_rung_skinny64x32;
extern const tg_rung tg_rung_skinny32x64;
extern const tg_rung tg_rung_skinny32x32;
extern const tg_rung tg_rung_gemv8;
extern const tg_rung tg_rung_shortk128;
extern const tg_rung tg_rung_tma_wgmma3xtf32;
extern const tg_rung tg_rung_tma_wgmmatf32;
extern const tg_rung tg_rung_tma_wgmma3xtf32_p64;
extern const tg_rung tg_rung_tma_wgmmatf32_128;
extern const tg_rung tg_rung_stream8;
extern const tg_rung tg_rung_stream16;
extern const tg_rung tg_rung_stream32;
extern const tg_rung tg_rung_stream64;

const tg_rung *const tg_rungs[] = {&tg_rung_naive, &tg_rung_tiled16, &tg_rung_tiled32,
                                    &tg_rung_blocktile64, &tg_rung_blocktile128,
                                    &tg_rung_warptile64, &tg_rung_warptile128,
                                    &tg_rung_warptile128_l2, &tg_rung_warptile256x128_l2,
                                    &tg_rung_ffma128x128, &tg_rung_ffma128x256,
                                    &tg_rung_ffma256x128_k16, &tg_rung_ffma256x128_s4,
                                    &tg_rung_ffma256x128, &tg_rung_mma3xtf32, &tg_rung_mmatf32,
                                    &tg_rung_wgmma3xtf32, &tg_rung_wgmmatf32,
                                    &tg_rung_skinny128x16, &tg_rung_skinny128x32,
                                    &tg_rung_skinny16x128, &tg_rung_skinny32x128,
                                    &tg_rung_skinny64x32, &tg_rung_skinny32x64,
                                    &tg_rung_skinny32x32, &tg_rung_gemv8, &tg_rung_shortk128,
                                    &tg_rung_tma_wgmma3xtf32, &tg_rung_tma_wgmmatf32,
                                    &tg_rung_tma_wgmma3xtf32_p64, &tg_rung_tma_wgmmatf32_128,
                                    &tg_rung_stream8, &tg_rung_stream16, &tg_rung_stream32,
                                    &tg_rung_stream64};
const int tg_rung_count = (int)(sizeof tg_rungs / sizeof tg_rungs[0]);

int tg_find_rung(const char *name)
{
    for (int i = 0; i < tg_rung_count; ++i)
        if (strcmp(tg_rungs[i]->name, name) == 0)
            return i;
    return -1;
}

}
