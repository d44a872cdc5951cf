/*
 * Autotuning's persistent cache: what the first call of a key measured fastest among the
 * planner's best candidates (tg_choose_ranked), remembered across processes.  Pure C, no
 * CUDA: the timing itself is the CUDA backend's (src/cuda/autotune.cu).
 *
 * Key: the GPU (model name, compute capability, SM count), the library version, the
 * normalized shape (m, n, k, batch), the operands' orientation (op(A) along k, op(B) along
 * n), the math mode and the alignment class of the pointers and leading dimensions.
 *
 * File: one per GPU model, <dir>/<model>-sm<cc>-<sms>.txt, where <dir> is TILEGEMM_CACHE_DIR,
 * else $XDG_CACHE_HOME/tilegemm, else ~/.cache/tilegemm.  Text lines:
 *
 *   # tilegemm autotune cache 1
 *   device<TAB>NVIDIA H100 80GB HBM3<TAB>90<TAB>132
 *   <version> <m> <n> <k> <batch> <a_k> <b_n> <math> <align><TAB><rung><TAB><slices><TAB><ms>
 *
 * Loaded once per process and model, on the first lookup, which also fixes the file that
 * process's stores for that model go to.  A store merges with what is on disk
 * under an flock of <file>.lock, writes a temporary file in the same folder and renames it over
 * the old one, so several processes may tune at once and a reader never sees half a file.  A
 * file with a wrong header, format version or device, or a malformed line, is ignored (and
 * replaced at the next store) with one warning per process, which tg_autotune_status returns:
 * the library prints nothing.
 */
#ifndef TG_AUTOTUNE_H
#define TG_AUTOTUNE_H

#include <stddef.h>
#include <stdint.h>

#include "../problem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_AT_FORMAT 1
/* How many candidates (tg_autotune_candidates) the first call of a key times: on the corpus's
 * held-out half, with exact times, the best of 4 is within 2% of the best entry on 89% of calls
 * in fp32, of 8 on 97%, of 12 on 98%. */
#define TG_AT_CANDIDATES 8

/* A call the cost model puts under this many seconds is left to the planner: not timed, not
 * cached (tg_autotune_shape, asked by name, still times it).  At a few microseconds neither
 * back-to-back nor event-pair timing ranks the candidates as the calls themselves run: on the
 * 40 calls of bench/results/autotune/ at 27fd950, the planner's own choice was within 2% of
 * the fastest entry on 5 of the 8 calls the model put under 10 us, autotuning on 3. */
#define TG_AT_MIN_PREDICTED_SECONDS 10e-6

/* The GPU a cache file belongs to. */
typedef struct tg_at_device {
    char name[96]; /* cudaDeviceProp.name, e.g. "NVIDIA H100 80GB HBM3" */
    int cc;        /* major * 10 + minor */
    int sms;
} tg_at_device;

typedef struct tg_at_key {
    char version[16];
    int64_t m, n, k, batch;
    int a_k, b_n; /* orientation: op(A) contiguous along k (a_cs == 1), op(B) along n */
    int math;     /* tg_math */
    int align;    /* alignment class in bytes: 16, 8 or 4 (tg_at_align_class) */
} tg_at_key;

typedef struct tg_at_entry {
    tg_at_key key;
    char rung[48]; /* a rung name of tg_algos() */
    int slices;    /* split-K slices, 1: none */
    double ms;     /* its measured median */
} tg_at_entry;

/* The largest of 16, 8, 4 bytes that divides the addresses of A, B and C and every stride of
 * the normalized problem that is not 1 (leading dimensions; batch strides when batch > 1), in
 * bytes: what decides whether a rung may use 16-byte vectors. */
int tg_at_align_class(const tg_problem *p);

/* The key of p on that device in math mode `math`, for this library version. */
void tg_at_key_make(tg_at_key *key, int math, const tg_problem *p);

/* The cache folder (TILEGEMM_CACHE_DIR, $XDG_CACHE_HOME/tilegemm, ~/.cache/tilegemm) and the
 * file of a device in it.  Return 0, or -1 when no folder can be named (no HOME). */
int tg_at_cache_dir(char *buf, size_t size);
int tg_at_cache_path(const tg_at_device *dev, char *buf, size_t size);

/* The cached choice for key on dev (loading dev's file on the first call for dev in this
 * process); 1 and *out when found, else 0. */
int tg_at_lookup(const tg_at_device *dev, const tg_at_key *key, tg_at_entry *out);

/* Remembers e for dev in this process and in dev's file (merge, atomic replace).  Returns 0,
 * or -1 when the file could not be written (the process keeps the entry; the reason goes to
 * tg_at_status). */
int tg_at_store(const tg_at_device *dev, const tg_at_entry *e);

/* A file's entries, for the tests and the CLI.  Reads path into a malloc'd array (*entries,
 * *count; free it); returns 1 when it is a valid cache of dev, 0 when there is no file, -1 when
 * it is corrupt or foreign, with why in why (NULL: not wanted). */
int tg_at_file_read(const char *path, const tg_at_device *dev, tg_at_entry **entries, int *count,
                    char *why, size_t why_size);
/* Merges entries into path under its lock (theirs first, ours replacing equal keys) and
 * replaces the file atomically.  0 on success, -1 with why. */
int tg_at_file_merge(const char *path, const tg_at_device *dev, const tg_at_entry *entries,
                     int count, char *why, size_t why_size);

/* One line on this process's cache: where it is, entries, plans that followed a cached choice
 * (calls, tg_explain and tg_choose_algo alike), keys timed, and the one warning, if a file was
 * ignored or could not be written. */
const char *tg_at_status(void);
/* The process's one warning about the cache ("" when none), copied into buf. */
void tg_at_warning(char *buf, size_t size);
/* Counts of this process: plans that followed a cached choice, and keys timed. */
void tg_at_count_hit(void);
void tg_at_count_timed(void);
void tg_at_counters(long *hits, long *timed);
/* Forgets the process's cache, counters and warning (tests). */
void tg_at_reset(void);

#ifdef __cplusplus
}
#endif

#endif
