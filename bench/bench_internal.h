/*
 * What the benchmark's files share: the cases, the results, the options and the run's
 * metadata.  The files, by concern:
 *   bench.c          the driver: tg_bench_main
 *   results.c        what the others share: results, data, checks, progress
 *   options.c        command line, suites, usage
 *   gpu.c            GPU timing: device buffers, cudaEvent timing, cuBLAS FP32 and FAST_TF32
 *   cpu.c            CPU mode: the CPU backend on host buffers
 *   report.c         table rows, summary, run metadata, JSON
 *   tuning_writer.c  --tune: tuning/sm_<cc>.tsv
 */
#ifndef TG_BENCH_INTERNAL_H
#define TG_BENCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roofline.h"
#include "sampled.h"
#include "tilegemm.h"

#define NAIVE_SKIP_WORK (1LL << 36) /* m*n*k above this skips "naive" unless asked */
#define DEFAULT_ROTATE_MIB 128.0
#define MIN_CLAIM_REPEATS 10
#define MOST_TIMED_RUNS 200 /* --min-timed-ms adds runs up to this many */
#define BENCH_DEFAULT_SEED 1  /* --seed: the random suite's; see bench/suites.md */
#define BENCH_DEFAULT_COUNT 64 /* --count */
#define CHECK_SAMPLES 256           /* entries of C checked against float64 per result */
/* TF32 arithmetic is judged against the FP32 bound times TF32's unit roundoff over FP32's. */
#define TF32_BOUND_FACTOR 8192.0

typedef struct bench_case {
    int64_t m, n, k;
    tg_op ta, tb;
    tg_layout layout;
    const char *suite; /* the suite that named it ("random", "squares", ...; "custom") */
} bench_case;

/* The nine categories results are reported by: thin (min(m, n) <= 64), mid (<= 512) or big,
 * times k <= 256, <= 4096 or above; index size * 3 + depth. */
#define BENCH_CATEGORIES 9
int bench_category(const bench_case *c);
const char *bench_category_name(int category); /* "thin, k<=256", ... */

typedef struct result {
    bench_case c;
    tg_layout layout;
    char algo[64];      /* a rung, "auto", "cublas", "cublas_tf32", "cpu"; "/kN" for split-K */
    int split_k;        /* what tg_set_split_k was given: 0 planner, 1 never, n slices */
    int ran_split_k;    /* the slices the call ran with (split-K 0: the planner's), 0 unknown */
    char math[8];       /* the handle's math mode for tilegemm's entries, "" for cuBLAS */
    char chosen[64];    /* what the call ran (tg_last_algo): the rung auto chose */
    int arith;          /* tg_arith of what ran; -1 unknown */
    double median_ms, min_ms, max_ms, flops_per_s;
    double cublas_ms, cublas_flops_per_s, ratio;         /* against cuBLAS FP32 */
    double cublas_tf32_ms, cublas_tf32_flops_per_s, ratio_tf32; /* against FAST_TF32 */
    tg_sampled_error error;
    int sets;
    char status[16];    /* OK, LOWPREC, MISMATCH, UNSUPPORTED, SKIPPED, ERROR */
    double plan_ns;     /* auto only: host time of one planning call (tg_choose_algo) */
    double sol_ms;      /* the call's speed of light (bench_sol_ms) in its math mode; NAN: none */
    int pruned;         /* --prune: one timed run only, its time a lower bound on the median */
    int timed_runs;     /* how many runs the median is of */
    double recheck_ms;  /* --recheck: the median of its runs timed again in turn with the
                         * case's other fastest entries (NAN: not rechecked) */
    int recheck_runs;
    char note[300];
} result;

typedef struct options {
    bench_case *cases;
    int ncases, cap;
    int have_shapes;       /* positional shapes were given */
    const char *suite;     /* NULL: none given */
    char **algos;          /* the rungs to time, "auto" always among them */
    int nalgos;
    int algos_explicit;
    int naive_named;       /* "naive" was named in --algo: run it at any size */
    tg_op trans[4][2];
    int ntrans;
    tg_layout layout;      /* --layout: of positional shapes and fixed suites */
    uint64_t seed;         /* --seed: of the random suite */
    int count;             /* --count: shapes of the random suite */
    tg_math math;          /* --math: the mode of the auto entries */
    int repeats, warmup;
    double min_timed_ms;   /* --min-timed-ms: GPU runs added until the timed ones sum to this */
    int warmup_given;
    double rotate_mib;
    const char *json_path;
    int save;
    const char *commit;
    int list_only;         /* --list: print the cases and algorithms, run nothing */
    int splits[8];         /* --split-k values, each timed for every rung; {0} = the planner's */
    int nsplits;
    int split_counts;      /* --split-k pow2 (1): 1 and each power of two up to tg_split_k_most;
                            * planner (2): every count of tg_split_k_counts; fine (3): its
                            * counts between the powers of two */
    double prune;          /* --prune F: a rung entry F times slower than the case's fastest
                            * in its first timed run is not timed further (0: never) */
    int recheck;           /* --recheck N: auto and the N fastest rung entries of a case timed
                            * again, a round of each in turn (0: none) */
    int tune;              /* --tune: write the winners to a tuning table */
    const char *tune_path; /* --tune-file, else tuning/sm_<cc>.tsv under the current dir */
    int tune_merge;        /* --tune-merge: replace only this run's rows of the existing table */
    unsigned tune_modes;   /* --tune-modes: bit (1 << tg_math) of each mode written; 0: all */
    const char *cmd;       /* "bench" or "run": the name errors carry */
} options;

typedef struct run_info {
    int gpu;
    char device[256];
    char slug[128];
    int cc_major, cc_minor, sm_count;
    long long l2_bytes, memory_bytes;
    int driver_version, runtime_version, cublas_version;
    char commit[256];
    int dirty; /* -1 unknown */
    char date[32];
    char day[16];
    int threads;
    char command[2048];
    double rotate_target_bytes;
    tg_roofline roof; /* GPU: measured at the start of the run (tg_measure_roofline) */
} run_info;

/* results.c: the results of this run, in order, and shared helpers. */
extern result *bench_results;
extern int bench_nresults;
extern const char *bench_cmd; /* the subcommand name, for messages */
void bench_free_results(void);
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *bench_xmalloc(size_t bytes);
result *bench_new_result(const bench_case *c, const char *algo);
double bench_work_flops(const bench_case *c);
/* The speed of light of case c in math mode `mode` on the run's roofline (tg_speed_of_light_s),
 * milliseconds. */
double bench_sol_ms(const bench_case *c, tg_math mode, const run_info *info);
/* NULL when the host buffers of case c (A, B and C: CPU mode's operands, GPU mode's host
 * copies) fit in host memory, else why not, in buf (tg_host_memory_refusal). */
const char *bench_host_memory_refusal(const bench_case *c, char *buf, size_t size);
void bench_leading_dims(const bench_case *c, tg_layout layout, int64_t *lda, int64_t *ldb,
                        int64_t *ldc);
/* Host operands of a case, uniform in [-1, 1], the same on every run. */
void bench_fill(float *dst, size_t count, uint64_t seed);
/* Median, min and max of n values (sorts v). */
void bench_summarize(double *v, int n, double *median, double *min, double *max);
/* Checks C (host, dense, from A and B as stored) against float64 and sets the status. */
void bench_check(result *r, const float *A, const float *B, const float *C);
/* The stderr progress line of case i of n. */
void bench_progress(int i, int n, const bench_case *c);
/* Records a failed tilegemm call on r; returns 1 when it only refused the case. */
int bench_record_failure(result *r, tg_handle *h, tg_status s);

/* options.c */
int bench_parse_options(int argc, char **argv, options *o, int *exit_code);
void bench_add_suite(options *o, const char *suite, int gpu);
void bench_add_case(options *o, const bench_case *c);
void bench_free_options(options *o);
int bench_skips_naive(const options *o, const bench_case *c, const char *algo);

/* report.c */
const char *bench_trans_name(tg_op ta, tg_op tb);
const char *bench_layout_name(tg_layout layout);
void bench_shape_text(const bench_case *c, char *buf, size_t size);
void bench_print_header(int gpu);
void bench_print_row(const result *r, int gpu);
void bench_print_summary(const run_info *info);
void bench_version_text(int v, int cuda_style, char *buf, size_t size);
void bench_fill_run_info(const options *o, int argc, char **argv, run_info *info);
void bench_slug(run_info *info);
int bench_write_json(const char *path, const run_info *info, const options *o,
                     const char *suite_text);
void bench_default_json_path(const run_info *info, char *out, size_t size);

/* cpu.c and gpu.c: return 1 when every result was OK */
int bench_run_cpu(tg_handle *h, const options *o, run_info *info);
int bench_run_gpu(tg_handle *h, const options *o, run_info *info);

/* tuning_writer.c: the table --tune writes (--tune-file, else tuning/sm_<cc>.tsv); whether
 * --tune-merge may merge into path (else it says why on stderr), asked before the timing so
 * that a refused merge costs no run; writes path (o->tune_merge: merges into it), returning 1
 * on success. */
void bench_tuning_path(const options *o, const run_info *info, char *out, size_t size);
int bench_tuning_mergeable(const char *path, const run_info *info);
int bench_write_tuning(const char *path, const run_info *info, const options *o);

#endif
