/*
 * Measured neighbours: the train half of the regret corpus (tuning/regret_corpus_sm_<cc>.tsv,
 * bench/corpus.py), embedded at build time by cmake/measured.cmake.  For a new call the planner
 * finds the timed calls nearest it (in log m, log n, log k of the normalized problem, and its
 * operands' orientation) and asks how each (rung, slices) fared there against the fastest
 * entry the math mode allowed: measurements where they exist, the cost model between them.
 * A card with a file of its own (tuning/regret_corpus_sm_<cc>_<card>.tsv: cases of the cc's file
 * re-timed on that card) reads those cases' rows in place of the cc's file's; every other GPU
 * reads the cc's file alone.
 */
#ifndef TG_MEASURED_H
#define TG_MEASURED_H

#include "../../include/tilegemm.h"
#include "../problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_measured_call {
    int cc;              /* compute capability of the GPU it was timed on */
    int sms;             /* and its SMs (the corpus's header) */
    int card;            /* 0: the cc's own file; else its index in tg_measured_cards */
    tg_layout layout;
    tg_op transa, transb;
    int64_t m, n, k;     /* as the caller gave them, dense leading dimensions */
    int first, count;    /* its entries in tg_measured_entries */
} tg_measured_call;

typedef struct tg_measured_entry {
    const char *algo;    /* a rung's name */
    int slices;          /* split-K slices, 1: none */
    float ms;            /* median milliseconds (a lower bound where it was timed once) */
} tg_measured_entry;

extern const tg_measured_call tg_measured_calls[];
extern const int tg_measured_call_count;
extern const tg_measured_entry tg_measured_entries[];
/* The cards with files of their own, by the device name their header gives ("NVIDIA H200"),
 * from index 1; tg_measured_cards[0] is "" (the cc's own file). */
extern const char *const tg_measured_cards[];
extern const int tg_measured_card_count;

/* The card index of a GPU named device_name (cudaDeviceProp.name): the card whose name it
 * equals, else 0. */
int tg_measured_card(const char *device_name);

/* Slices are the counts the planner weighs (split_k.h: tg_split_k_next): a power of two up to
 * TG_MAX_SPLIT_K (256), kept at rung * TG_MEASURED_SLOTS + log2(slices), or 3, 5, 6 or 7, kept
 * in the four slots after those.  -1 for any other count. */
enum { TG_MEASURED_POW2_SLOTS = 9, TG_MEASURED_SLOTS = TG_MEASURED_POW2_SLOTS + 4 };
static inline int tg_measured_slot(int slices)
{
    static const signed char fine[8] = {-1, -1, -1, 9, -1, 10, 11, 12}; /* 3, 5, 6, 7 */
    if (slices < 1)
        return -1;
    if ((slices & (slices - 1)) != 0)
        return slices < 8 ? fine[slices] : -1;
    const int slot = __builtin_ctz((unsigned)slices);
    return slot < TG_MEASURED_POW2_SLOTS ? slot : -1;
}
/* The slice count a slot keeps: the inverse of tg_measured_slot. */
static inline int tg_measured_slot_slices(int slot)
{
    static const int fine[4] = {3, 5, 6, 7};
    return slot < TG_MEASURED_POW2_SLOTS ? 1 << slot : fine[slot - TG_MEASURED_POW2_SLOTS];
}

/* The measured calls nearest p on a GPU of compute capability cc and card index `card`:
 * indices and weights, nearest first. */
enum { TG_NEIGHBOURS = 8 };
typedef struct tg_neighbours {
    int count;
    int call[TG_NEIGHBOURS];
    double weight[TG_NEIGHBOURS];
} tg_neighbours;

void tg_measured_neighbours(int cc, int card, const tg_problem *p, tg_neighbours *out);

/* For the planner's tests: leaves the calls with excluded[i] != 0 out of every neighbourhood
 * from now on (NULL: none), as if they had never been timed, so that a train call can be
 * planned without its own seed's measurements (test_plan_regret --cross-validate).  The array
 * must outlive its use; not for concurrent planning. */
void tg_measured_exclude(const unsigned char *excluded);

/* Call i's normalized problem (operands as cudaMalloc returns them, alpha 1, beta 0). */
const tg_problem *tg_measured_problem(int call);
/* Its median milliseconds on rung i cut into `slices` (1: unsplit), NAN when not timed. */
double tg_measured_ms(int call, int rung, int slices);

#ifdef __cplusplus
}
#endif

#endif
