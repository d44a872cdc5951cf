/*
 * --tune: for each case and each math mode, the fastest rung whose arithmetic that mode allows
 * (tg_math_allows) and that `auto` may run (in_auto: a row naming another is never followed)
 * among the results that passed the float64 check, keyed by compute
 * capability and the normalized shape the planner sees (src/problem.h), written to a tuning
 * table.  The build embeds the tuning/sm_<cc>.tsv files (cmake/tuning.cmake) and `auto` looks its calls up
 * there by the handle's math mode (src/plan/tuning.c).
 *
 * A rung with an auto margin (tg_algo_auto_margin: rung 11, whose speed depends on data the
 * timing does not see) is weighed as the planner weighs it, its rate divided by the margin: it
 * is written only where it beats the others by that much, with the rate it measured.
 *
 * --tune-merge replaces, in the existing table, only the rows of the cases this run timed in
 * the modes of --tune-modes (all three by default), keeps every other row as it was and where
 * it was, adds the rows the table lacked at its end, and records the merge in a comment line
 * above the column names.  A table of another compute capability, a missing one or a row it
 * cannot read is refused before anything is written; the new table replaces the old by a
 * rename, so a failed write leaves the old one whole.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

/* The rung index of a result ("name" or "name/kN"), or -1 for cuBLAS and auto. */
static int rung_of(const char *label)
{
    const size_t length = strcspn(label, "/");
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info a;
        if (tg_algo_info_get(i, &a) == TG_SUCCESS && strlen(a.name) == length &&
            strncmp(a.name, label, length) == 0)
            return i;
    }
    return -1;
}

/* The rate a result is ranked by: its measured rate over its rung's auto margin. */
static double ranked_rate(const result *r)
{
    return r->flops_per_s / tg_algo_auto_margin(rung_of(r->algo));
}

/* The same call (bench_add_case times each once), compared field by field: a copied case's
 * padding need not match. */
static int same_case(const bench_case *x, const bench_case *y)
{
    return x->m == y->m && x->n == y->n && x->k == y->k && x->ta == y->ta && x->tb == y->tb &&
           x->layout == y->layout;
}

static const result *fastest(const bench_case *c, tg_math mode)
{
    const result *best = NULL;
    for (int j = 0; j < bench_nresults; ++j) {
        const result *r = &bench_results[j];
        const int rung = rung_of(r->algo);
        tg_algo_info a;
        const int passed = strcmp(r->status, "OK") == 0 ||
                           (mode == TG_MATH_TF32 && strcmp(r->status, "LOWPREC") == 0);
        if (!same_case(&r->c, c) || !passed || rung < 0 ||
            tg_algo_info_get(rung, &a) != TG_SUCCESS || !a.in_auto ||
            !tg_math_allows(mode, a.arith) || !isfinite(r->flops_per_s))
            continue;
        if (!best || ranked_rate(r) > ranked_rate(best))
            best = r;
    }
    return best;
}

/* A row's key: the call `auto` looks up (src/plan/tuning.c). */
typedef struct tuned_key {
    int cc;
    long long m, n, k;
    int a_k, b_n, math;
} tuned_key;

static int same_key(const tuned_key *x, const tuned_key *y)
{
    return x->cc == y->cc && x->m == y->m && x->n == y->n && x->k == y->k && x->a_k == y->a_k &&
           x->b_n == y->b_n && x->math == y->math;
}

/* A row this run writes: its key and its winner (NULL: no result passed). */
typedef struct new_row {
    tuned_key key;
    const result *best;
    int written; /* --tune-merge: already in the new table */
} new_row;

static int mode_tuned(const options *o, int mode)
{
    return !o->tune_modes || (o->tune_modes >> mode & 1u);
}

/* The rows of this run, a key once (two cases may be the same call of the planner's: a
 * column-major case and its row-major transpose), in case order, then mode order. */
static new_row *rows_of_run(const run_info *info, const options *o, int *count)
{
    new_row *rows = bench_xmalloc((size_t)(3 * o->ncases + 1) * sizeof *rows);
    int n = 0;
    for (int i = 0; i < o->ncases; ++i) {
        const bench_case *c = &o->cases[i];
        /* The planner's normalized problem is row-major: a column-major call becomes
         * C^T = op(B)^T op(A)^T, so m and n swap and so do the operands' roles.  Its first
         * factor is stored along k exactly when that factor is not transposed. */
        const int row = c->layout == TG_ROW_MAJOR;
        for (int mode = TG_MATH_FP32; mode <= TG_MATH_TF32; ++mode) {
            if (!mode_tuned(o, mode))
                continue;
            const tuned_key key = {info->cc_major * 10 + info->cc_minor,
                                   row ? c->m : c->n,
                                   row ? c->n : c->m,
                                   (long long)c->k,
                                   (row ? c->ta : c->tb) == TG_NO_TRANS,
                                   (row ? c->tb : c->ta) == TG_NO_TRANS,
                                   mode};
            int seen = 0;
            for (int j = 0; j < n && !seen; ++j)
                seen = same_key(&rows[j].key, &key);
            if (!seen)
                rows[n++] = (new_row){key, fastest(c, (tg_math)mode), 0};
        }
    }
    *count = n;
    return rows;
}

static void print_row(FILE *f, const new_row *r)
{
    const result *b = r->best;
    fprintf(f, "%d\t%lld\t%lld\t%lld\t%d\t%d\t%.*s\t%d\t%s\t%.3f\t%.3f\n", r->key.cc, r->key.m,
            r->key.n, r->key.k, r->key.a_k, r->key.b_n, (int)strcspn(b->algo, "/"), b->algo,
            b->split_k, tg_math_name((tg_math)r->key.math), b->flops_per_s / 1e12,
            b->cublas_flops_per_s / 1e12);
}

void bench_tuning_path(const options *o, const run_info *info, char *out, size_t size)
{
    if (o->tune_path)
        snprintf(out, size, "%s", o->tune_path);
    else
        snprintf(out, size, "tuning/sm_%d%d.tsv", info->cc_major, info->cc_minor);
}

/* The whole of a file, NUL-terminated, or NULL (errno set). */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t size = 0, cap = 4096;
    char *text = bench_xmalloc(cap);
    for (size_t got; (got = fread(text + size, 1, cap - size - 1, f)) > 0;) {
        size += got;
        if (size + 1 == cap) {
            cap *= 2;
            char *grown = realloc(text, cap);
            if (!grown)
                bench_die("out of host memory");
            text = grown;
        }
    }
    const int failed = ferror(f);
    fclose(f);
    if (failed) {
        free(text);
        errno = EIO;
        return NULL;
    }
    text[size] = '\0';
    return text;
}

/* Copies the line at *at (without its newline or a carriage return) into buf, moves *at past
 * it, and returns its length in the text (longer than buf can hold: it was cut). */
static size_t next_line(const char **at, char *buf, size_t size)
{
    const char *line = *at;
    const size_t length = strcspn(line, "\n");
    snprintf(buf, size, "%.*s", (int)(length < size ? length : size - 1), line);
    buf[strcspn(buf, "\r")] = '\0';
    *at = line + length + (line[length] == '\n');
    return length;
}

/* Reads a row of a tuned table (a line without its newline) into *key; returns 0 and says why
 * in why when it is not one: 11 tab-separated fields, the key's counts, flags and math mode. */
static int parse_row(const char *line, tuned_key *key, char *why, size_t size)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", line);
    char *field[11];
    int count = 0;
    for (char *p = buf; p; ++count) {
        char *tab = strchr(p, '\t');
        if (tab)
            *tab = '\0';
        if (count < 11)
            field[count] = p;
        p = tab ? tab + 1 : NULL;
    }
    if (count != 11) {
        snprintf(why, size, "a row has 11 tab-separated fields, not %d", count);
        return 0;
    }
    long long v[6]; /* cc m n k a_k_contiguous b_n_contiguous */
    for (int i = 0; i < 6; ++i) {
        char *end = NULL;
        errno = 0;
        v[i] = strtoll(field[i], &end, 10);
        if (end == field[i] || *end || errno || v[i] < 0 || (i >= 4 && v[i] > 1)) {
            snprintf(why, size, "field %d \"%s\" is not %s", i, field[i],
                     i >= 4 ? "0 or 1" : "a count");
            return 0;
        }
    }
    const int math = tg_math_from_name(field[8]);
    if (math < 0) {
        snprintf(why, size, "math \"%s\" is not fp32, strict or tf32", field[8]);
        return 0;
    }
    *key = (tuned_key){(int)v[0], v[1], v[2], v[3], (int)v[4], (int)v[5], math};
    return 1;
}

/* Why the table at path cannot take a merge of this run's rows (NULL when it can): it must
 * exist, every row must read, and all must be of this run's compute capability, as must the
 * device its first line names. */
static const char *merge_refusal(const char *path, const char *text, const run_info *info,
                                 char *why, size_t size)
{
    const int cc = info->cc_major * 10 + info->cc_minor;
    if (!text) {
        snprintf(why, size, "--tune-merge: cannot read the tuning table %s: %s (a merge needs "
                            "the table it adds to; --tune without --tune-merge writes a new one)",
                 path, strerror(errno));
        return why;
    }
    int number = 0;
    for (const char *line = text; *line;) {
        char buf[1024];
        const size_t length = next_line(&line, buf, sizeof buf);
        ++number;
        const char *sm =
            strncmp(buf, "# tilegemm tuning table", 23) == 0 ? strstr(buf, "(sm_") : NULL;
        if (sm && strtol(sm + 4, NULL, 10) != cc) {
            snprintf(why, size, "--tune-merge: %s:%d names another device (%.*s), not this "
                                "run's sm_%d: a table holds one compute capability's rows",
                     path, number, (int)strcspn(sm + 1, ")"), sm + 1, cc);
            return why;
        }
        if (buf[0] != '#' && strspn(buf, " \t") != strlen(buf)) {
            tuned_key key;
            char reason[200];
            if (length >= sizeof buf || !parse_row(buf, &key, reason, sizeof reason)) {
                snprintf(why, size, "--tune-merge: %s:%d: %s", path, number,
                         length >= sizeof buf ? "a line too long for a row" : reason);
                return why;
            }
            if (key.cc != cc) {
                snprintf(why, size, "--tune-merge: %s:%d is a row of sm_%d, not this run's "
                                    "sm_%d: a table holds one compute capability's rows",
                         path, number, key.cc, cc);
                return why;
            }
        }
    }
    return NULL;
}

/* The table at path for a merge (the caller frees it), or NULL once merge_refusal's reason is
 * said on stderr. */
static char *read_mergeable(const char *path, const run_info *info)
{
    char *text = read_text(path);
    char why[1400];
    const char *refused = merge_refusal(path, text, info, why, sizeof why);
    if (!refused)
        return text;
    fprintf(stderr, "tilegemm %s: %s; nothing written\n", bench_cmd, refused);
    free(text);
    return NULL;
}

int bench_tuning_mergeable(const char *path, const run_info *info)
{
    char *text = read_mergeable(path, info);
    const int mergeable = text != NULL;
    free(text);
    return mergeable;
}

static void modes_text(const options *o, char *out, size_t size)
{
    out[0] = '\0';
    for (int mode = TG_MATH_FP32; mode <= TG_MATH_TF32; ++mode)
        if (mode_tuned(o, mode))
            snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? "," : "",
                     tg_math_name((tg_math)mode));
}

/* What a merge records in the table's header. */
typedef struct merge_note {
    const run_info *info;
    const options *o;
    const char *modes, *dirty;
} merge_note;

static void print_merge_note(FILE *f, const merge_note *n)
{
    fprintf(f, "# merged at commit %s%s on %s on %s: the %s rows of the %d case(s) timed by `%s`\n",
            n->info->commit, n->dirty, n->info->date, n->info->device, n->modes, n->o->ncases,
            n->info->command);
}

/* Writes the table into f: a new one, or (merge) text with this run's rows merged in. */
static void write_table(FILE *f, const char *text, new_row *rows, int count,
                        const run_info *info, const options *o, int counts[4])
{
    counts[0] = counts[1] = counts[2] = counts[3] = 0; /* replaced, added, dropped, kept */
    const char *dirty = info->dirty > 0 ? " (tracked files changed)" : "";
    if (!text) {
        fprintf(f, "# tilegemm tuning table for %s (sm_%d%d), written by `tilegemm bench --tune` "
                   "at commit %s%s on %s. Generated: do not edit.\n",
                info->device, info->cc_major, info->cc_minor, info->commit, dirty, info->date);
        fprintf(f, "# cc\tm\tn\tk\ta_k_contiguous\tb_n_contiguous\talgo\tsplit_k\tmath\ttflops\t"
                   "cublas_tflops\n");
        for (int i = 0; i < count; ++i)
            if (rows[i].best) {
                print_row(f, &rows[i]);
                ++counts[1];
            }
        return;
    }
    char modes[32];
    modes_text(o, modes, sizeof modes);
    const merge_note note = {info, o, modes, dirty};
    int recorded = 0;
    for (const char *line = text; *line;) {
        const char *const whole = line; /* written back as it was where it is kept */
        char buf[1024];
        const size_t length = next_line(&line, buf, sizeof buf); /* merge_refusal read it */
        const int comment = buf[0] == '#', blank = strspn(buf, " \t") == strlen(buf);
        tuned_key key;
        char reason[200];
        const int is_row = !comment && !blank && parse_row(buf, &key, reason, sizeof reason);
        if (!recorded && (is_row || strncmp(buf, "# cc\t", 5) == 0)) {
            print_merge_note(f, &note); /* above the column names (or the first row) */
            recorded = 1;
        }
        int replaced = 0;
        for (int i = 0; is_row && i < count && !replaced; ++i) {
            if (!same_key(&rows[i].key, &key))
                continue;
            replaced = 1;
            if (rows[i].best && !rows[i].written) {
                print_row(f, &rows[i]);
                rows[i].written = 1;
                ++counts[0];
                printf("tuning: replaced %s by %.*s, split-K %d, %.3f TFLOP/s\n", buf,
                       (int)strcspn(rows[i].best->algo, "/"), rows[i].best->algo,
                       rows[i].best->split_k, rows[i].best->flops_per_s / 1e12);
            } else if (!rows[i].best) {
                ++counts[2];
                printf("tuning: dropped %s: no result of this run passed in its mode\n", buf);
            }
        }
        if (!replaced) {
            fprintf(f, "%.*s\n", (int)length, whole);
            counts[3] += is_row;
        }
    }
    if (!recorded)
        print_merge_note(f, &note);
    for (int i = 0; i < count; ++i)
        if (rows[i].best && !rows[i].written) {
            print_row(f, &rows[i]);
            rows[i].written = 1;
            ++counts[1];
        }
}

int bench_write_tuning(const char *path, const run_info *info, const options *o)
{
    char *text = NULL;
    if (o->tune_merge && !(text = read_mergeable(path, info)))
        return 0;
    /* A new file beside the old, renamed over it once whole. */
    char temporary[1400];
    snprintf(temporary, sizeof temporary, "%s.new", path);
    FILE *f = fopen(temporary, "w");
    if (!f) {
        fprintf(stderr, "tilegemm %s: cannot write the tuning table %s: %s (run from the source "
                        "tree, or give --tune-file)\n", bench_cmd, temporary, strerror(errno));
        free(text);
        return 0;
    }
    int count = 0, counts[4];
    new_row *rows = rows_of_run(info, o, &count);
    write_table(f, text, rows, count, info, o, counts);
    free(rows);
    free(text);
    const int failed = ferror(f) | (fclose(f) != 0);
    if (failed || rename(temporary, path) != 0) {
        fprintf(stderr, "tilegemm %s: cannot write the tuning table %s: %s\n", bench_cmd,
                failed ? temporary : path, strerror(errno));
        remove(temporary);
        return 0;
    }
    if (o->tune_merge)
        printf("\ntuning: merged into %s: %d rows replaced, %d added, %d dropped, %d kept "
               "(rebuild to embed them)\n", path, counts[0], counts[1], counts[2], counts[3]);
    else
        printf("\ntuning: %d rows written to %s (rebuild to embed them)\n", counts[1], path);
    return 1;
}
