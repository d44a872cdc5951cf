/* The benchmark's output: table rows, summary, run metadata and JSON; see bench_internal.h. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench_internal.h"

const char *bench_trans_name(tg_op ta, tg_op tb)
{
    static const char *const names[] = {"NN", "NT", "TN", "TT"};
    return names[(ta == TG_TRANS) * 2 + (tb == TG_TRANS)];
}

const char *bench_layout_name(tg_layout layout) { return layout == TG_ROW_MAJOR ? "row" : "col"; }

void bench_shape_text(const bench_case *c, char *buf, size_t size)
{
    snprintf(buf, size, "%lldx%lldx%lld", (long long)c->m, (long long)c->n, (long long)c->k);
}

void bench_print_header(int gpu)
{
    printf("%-18s %-5s %-6s %-14s %-12s %10s %10s %9s %9s  %s\n", "shape", "trans", "layout",
           "algo", "ran", "ms", gpu ? "TFLOP/s" : "GFLOP/s", gpu ? "vs cuBLAS" : "",
           gpu ? "vs TF32" : "", "check (worst scaled, RMS rel.)");
}

static void number_text(char *buf, size_t size, double v, const char *fmt)
{
    if (isfinite(v))
        snprintf(buf, size, fmt, v);
    else
        snprintf(buf, size, "-");
}

void bench_print_row(const result *r, int gpu)
{
    char shape[64], ms[32], rate[32], ratio[32], ratio_tf32[32], check[96];
    bench_shape_text(&r->c, shape, sizeof shape);
    number_text(ms, sizeof ms, r->median_ms, "%.3f");
    number_text(rate, sizeof rate, r->flops_per_s / (gpu ? 1e12 : 1e9), "%.2f");
    number_text(ratio, sizeof ratio, gpu ? r->ratio : NAN, "%.2fx");
    number_text(ratio_tf32, sizeof ratio_tf32, gpu ? r->ratio_tf32 : NAN, "%.2fx");
    if (!isnan(r->error.worst_scaled))
        snprintf(check, sizeof check, "%s %.3g, %.2e", r->status, r->error.worst_scaled,
                 r->error.rms);
    else
        snprintf(check, sizeof check, "%s", r->status);
    printf("%-18s %-5s %-6s %-14s %-12s %10s %10s %9s %9s  %s\n", shape,
           bench_trans_name(r->c.ta, r->c.tb), bench_layout_name(r->layout), r->algo,
           r->chosen[0] ? r->chosen : "-", ms, rate, gpu ? ratio : "", gpu ? ratio_tf32 : "",
           check);
    if (r->note[0])
        printf("%18s   note: %s\n", "", r->note);
    fflush(stdout);
}

static int timed_against_cublas(const result *r)
{
    return isfinite(r->ratio) && r->ratio > 0 && strcmp(r->status, "MISMATCH") != 0 &&
           strcmp(r->status, "ERROR") != 0;
}

/* auto's ratios to cuBLAS per suite: geometric mean, the share at >= 0.9x and >= 1.0x, the
 * worst, and the planner's host time per call. */
static void print_auto_by_suite(void)
{
    const char *seen[16];
    int nseen = 0;
    for (int i = 0; i < bench_nresults && nseen < 16; ++i) {
        const result *r = &bench_results[i];
        if (strcmp(r->algo, "auto") != 0)
            continue;
        int known = 0;
        for (int j = 0; j < nseen; ++j)
            known |= strcmp(seen[j], r->c.suite) == 0;
        if (!known)
            seen[nseen++] = r->c.suite;
    }
    for (int s = 0; s < nseen; ++s) {
        double logsum = 0.0, worst = INFINITY, plan_ns = 0.0;
        double sol_log = 0.0, sol_log_cublas = 0.0; /* fractions of the speed of light */
        int count = 0, at_09 = 0, at_10 = 0, planned = 0, sol_half = 0, sol_half_cublas = 0;
        char worst_shape[64] = "";
        for (int i = 0; i < bench_nresults; ++i) {
            const result *r = &bench_results[i];
            if (strcmp(r->algo, "auto") != 0 || strcmp(r->c.suite, seen[s]) != 0)
                continue;
            if (isfinite(r->plan_ns))
                plan_ns += r->plan_ns, planned++;
            if (!timed_against_cublas(r))
                continue;
            logsum += log(r->ratio);
            sol_log += log(r->sol_ms / r->median_ms);
            sol_log_cublas += log(r->sol_ms / r->cublas_ms);
            sol_half += r->sol_ms / r->median_ms >= 0.5;
            sol_half_cublas += r->sol_ms / r->cublas_ms >= 0.5;
            at_09 += r->ratio >= 0.9;
            at_10 += r->ratio >= 1.0;
            if (r->ratio < worst) {
                worst = r->ratio;
                bench_shape_text(&r->c, worst_shape, sizeof worst_shape);
            }
            count++;
        }
        if (count)
            printf("\nauto on %s: %d cases, geo-mean %.3fx, %.0f%% at >= 0.9x, %.0f%% at >= "
                   "1.0x, worst %.2fx (%s); planner %.0f ns a call",
                   seen[s], count, exp(logsum / count), 100.0 * at_09 / count,
                   100.0 * at_10 / count, worst, worst_shape, planned ? plan_ns / planned : NAN);
        if (count && isfinite(sol_log))
            printf("\nspeed of light on %s: auto at %.2f of it (geo-mean), %.0f%% of cases at "
                   ">= 0.5; cuBLAS at %.2f, %.0f%% at >= 0.5",
                   seen[s], exp(sol_log / count), 100.0 * sol_half / count,
                   exp(sol_log_cublas / count), 100.0 * sol_half_cublas / count);
    }
}

/* auto by category (bench_category): count, geometric mean against cuBLAS, share at >= 0.9x,
 * worst, and the geometric mean of the speed-of-light fraction reached by auto and by cuBLAS.
 * An overall mean hides a losing category; this table does not. */
static void print_auto_by_category(void)
{
    int any = 0;
    for (int cat = 0; cat < BENCH_CATEGORIES; ++cat) {
        double logsum = 0.0, worst = INFINITY, sol_log = 0.0, sol_log_cublas = 0.0;
        int count = 0, at_09 = 0;
        for (int i = 0; i < bench_nresults; ++i) {
            const result *r = &bench_results[i];
            if (strcmp(r->algo, "auto") != 0 || bench_category(&r->c) != cat ||
                !timed_against_cublas(r))
                continue;
            logsum += log(r->ratio);
            sol_log += log(r->sol_ms / r->median_ms);
            sol_log_cublas += log(r->sol_ms / r->cublas_ms);
            at_09 += r->ratio >= 0.9;
            worst = r->ratio < worst ? r->ratio : worst;
            count++;
        }
        if (!count)
            continue;
        if (!any++)
            printf("\nauto by category (thin: min(m,n) <= 64, mid: <= 512, big: above):\n"
                   "  %-18s %5s %9s %8s %7s  %s\n", "category", "cases", "geo-mean", ">=0.9x",
                   "worst", "speed of light: auto / cuBLAS");
        printf("  %-18s %5d %8.3fx %7.0f%% %6.2fx  %.2f / %.2f\n", bench_category_name(cat),
               count, exp(logsum / count), 100.0 * at_09 / count, worst, exp(sol_log / count),
               exp(sol_log_cublas / count));
    }
}

/* Geometric mean of the ratio to cuBLAS per algo (GPU), or the best rate (CPU). */
void bench_print_summary(const run_info *info)
{
    int mismatches = 0, errors = 0, timed = 0;
    for (int i = 0; i < bench_nresults; ++i) {
        mismatches += strcmp(bench_results[i].status, "MISMATCH") == 0;
        errors += strcmp(bench_results[i].status, "ERROR") == 0;
        timed += isfinite(bench_results[i].median_ms);
    }
    printf("summary: %d timed results on %s%s, %d mismatch%s, %d error%s", timed, info->device,
           info->gpu ? "" : " (CPU backend, no GPU)", mismatches, mismatches == 1 ? "" : "es",
           errors, errors == 1 ? "" : "s");
    if (info->gpu) {
        printf("; geo-mean vs cuBLAS:");
        for (int i = 0; i < bench_nresults; ++i) { /* algos in first-seen order */
            const char *algo = bench_results[i].algo;
            int seen = strcmp(algo, "cublas") == 0;
            for (int j = 0; j < i; ++j)
                seen |= strcmp(bench_results[j].algo, algo) == 0;
            if (seen)
                continue;
            double logsum = 0.0;
            int count = 0;
            for (int j = i; j < bench_nresults; ++j) {
                const result *r = &bench_results[j];
                if (strcmp(r->algo, algo) == 0 && timed_against_cublas(r))
                    logsum += log(r->ratio), count++;
            }
            if (count)
                printf(" %s %.2fx", algo, exp(logsum / count));
        }
        print_auto_by_suite();
        print_auto_by_category();
    } else {
        double best = 0.0;
        int at = -1;
        for (int i = 0; i < bench_nresults; ++i)
            if (isfinite(bench_results[i].flops_per_s) && bench_results[i].flops_per_s > best)
                best = bench_results[i].flops_per_s, at = i;
        if (at >= 0) {
            char shape[64];
            bench_shape_text(&bench_results[at].c, shape, sizeof shape);
            printf("; best %.1f GFLOP/s at %s", best / 1e9, shape);
        }
    }
    printf("\n");
}

void bench_version_text(int v, int cuda_style, char *buf, size_t size)
{
    if (v <= 0)
        snprintf(buf, size, "unknown");
    else if (cuda_style) /* 12080 -> 12.8 */
        snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
    else /* cuBLAS: major*10000 + minor*100 + patch */
        snprintf(buf, size, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
}

/* First line of a command's output, trimmed; 0 when it failed or printed nothing. */
static int command_line_output(const char *cmd, char *out, size_t size)
{
    FILE *f = popen(cmd, "r");
    if (!f)
        return 0;
    out[0] = '\0';
    const int got = fgets(out, (int)size, f) != NULL;
    const int rc = pclose(f);
    size_t len = strlen(out);
    while (len && (out[len - 1] == '\n' || out[len - 1] == '\r' || out[len - 1] == ' '))
        out[--len] = '\0';
    return got && rc == 0 && len > 0;
}

/* --commit, else $TILEGEMM_COMMIT, else the git checkout of the current directory. */
static void find_commit(const options *o, run_info *info)
{
    info->dirty = -1;
    const char *env = getenv("TILEGEMM_COMMIT");
    const char *given = o->commit && *o->commit ? o->commit : env && *env ? env : NULL;
    if (given) {
        snprintf(info->commit, sizeof info->commit, "%s", given);
        return;
    }
    char out[256];
    if (!command_line_output("git rev-parse --short HEAD 2>/dev/null", out, sizeof out)) {
        snprintf(info->commit, sizeof info->commit, "unknown");
        return;
    }
    snprintf(info->commit, sizeof info->commit, "%s", out);
    /* Tracked files changed since that commit: the numbers are not exactly that commit's. */
    FILE *f = popen("git status --porcelain --untracked-files=no 2>/dev/null", "r");
    if (f) {
        const int any = fgets(out, sizeof out, f) != NULL;
        if (pclose(f) == 0)
            info->dirty = any;
    }
}

static void cpu_model(char *out, size_t size)
{
    snprintf(out, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon)
            continue;
        for (++colon; *colon == ' ' || *colon == '\t';)
            ++colon;
        snprintf(out, size, "%s", colon);
        size_t len = strlen(out);
        while (len && (out[len - 1] == '\n' || out[len - 1] == ' '))
            out[--len] = '\0';
        break;
    }
    fclose(f);
}

void bench_fill_run_info(const options *o, int argc, char **argv, run_info *info)
{
    int pos = snprintf(info->command, sizeof info->command, "tilegemm");
    for (int i = 0; i < argc && pos < (int)sizeof info->command; ++i)
        pos += snprintf(info->command + pos, sizeof info->command - (size_t)pos, " %s", argv[i]);
    find_commit(o, info);
    const time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(info->date, sizeof info->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    strftime(info->day, sizeof info->day, "%Y-%m-%d", &tm);
    if (!info->gpu)
        cpu_model(info->device, sizeof info->device);
}

/* "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3" */
static void slugify(const char *in, char *out, size_t size)
{
    size_t n = 0;
    int dash = 0;
    for (; *in && n + 2 < size; ++in) {
        const char ch = *in >= 'A' && *in <= 'Z' ? (char)(*in - 'A' + 'a') : *in;
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            if (dash && n > 0)
                out[n++] = '-';
            out[n++] = ch;
            dash = 0;
        } else {
            dash = 1;
        }
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, size, "unknown");
}

void bench_slug(run_info *info)
{
    char slug[100];
    slugify(info->device, slug, sizeof slug);
    snprintf(info->slug, sizeof info->slug, "%s%s", info->gpu ? "" : "cpu-", slug);
}

static int make_dirs(const char *dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; ++p) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return 0;
            *p = '/';
        }
    }
    return mkdir(path, 0777) == 0 || errno == EEXIST;
}

/* bench/results/<slug>-<day>[-N].json under the current directory, never overwriting. */
void bench_default_json_path(const run_info *info, char *out, size_t size)
{
    const char *dir = "bench/results";
    if (!make_dirs(dir))
        fprintf(stderr, "tilegemm %s: could not create %s: %s\n", bench_cmd, dir,
                strerror(errno));
    for (int n = 1; n < 1000; ++n) {
        if (n == 1)
            snprintf(out, size, "%s/%s-%s.json", dir, info->slug, info->day);
        else
            snprintf(out, size, "%s/%s-%s-%d.json", dir, info->slug, info->day, n);
        struct stat st;
        if (stat(out, &st) != 0)
            return;
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        const unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* A number, null when it is not finite. */
static void json_number(FILE *f, double v, const char *fmt)
{
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs("null", f);
}

/* ", \"key\": value" with null for a non-finite number. */
static void json_field(FILE *f, const char *key, double v, const char *fmt)
{
    fprintf(f, ", \"%s\": ", key);
    json_number(f, v, fmt);
}

static void json_text_field(FILE *f, const char *key, const char *v)
{
    fprintf(f, ", \"%s\": ", key);
    json_string(f, v);
}

static void write_result(FILE *f, const result *r)
{
    fprintf(f, "{\"m\": %lld, \"n\": %lld, \"k\": %lld", (long long)r->c.m, (long long)r->c.n,
            (long long)r->c.k);
    json_text_field(f, "trans", bench_trans_name(r->c.ta, r->c.tb));
    json_text_field(f, "layout", bench_layout_name(r->layout));
    json_text_field(f, "suite", r->c.suite);
    json_text_field(f, "category", bench_category_name(bench_category(&r->c)));
    json_text_field(f, "algo", r->algo);
    json_text_field(f, "math", r->math);
    json_text_field(f, "ran", r->chosen);
    json_text_field(f, "arith", r->arith >= 0 ? tg_arith_name((tg_arith)r->arith) : "");
    fprintf(f, ", \"split_k\": %d, \"ran_split_k\": %d", r->split_k, r->ran_split_k);
    if (r->pruned)
        fprintf(f, ", \"pruned\": true");
    if (r->timed_runs > 0)
        fprintf(f, ", \"timed_runs\": %d", r->timed_runs);
    json_field(f, "median_ms", r->median_ms, "%.6g");
    if (r->recheck_runs > 0) {
        json_field(f, "recheck_ms", r->recheck_ms, "%.6g");
        fprintf(f, ", \"recheck_runs\": %d", r->recheck_runs);
    }
    json_field(f, "min_ms", r->min_ms, "%.6g");
    json_field(f, "max_ms", r->max_ms, "%.6g");
    json_field(f, "tflops", r->flops_per_s / 1e12, "%.6g");
    json_field(f, "gflops", r->flops_per_s / 1e9, "%.6g");
    json_field(f, "cublas_median_ms", r->cublas_ms, "%.6g");
    json_field(f, "cublas_tflops", r->cublas_flops_per_s / 1e12, "%.6g");
    json_field(f, "ratio", r->ratio, "%.4f");
    json_field(f, "cublas_tf32_median_ms", r->cublas_tf32_ms, "%.6g");
    json_field(f, "cublas_tf32_tflops", r->cublas_tf32_flops_per_s / 1e12, "%.6g");
    json_field(f, "ratio_tf32", r->ratio_tf32, "%.4f");
    json_field(f, "worst_scaled_error", r->error.worst_scaled, "%.4g");
    json_field(f, "rms_rel_error", r->error.rms, "%.4g");
    json_field(f, "plan_ns", r->plan_ns, "%.1f");
    json_field(f, "sol_ms", r->sol_ms, "%.6g");
    json_field(f, "sol_fraction", r->sol_ms / r->median_ms, "%.4f");
    fprintf(f, ", \"error_samples\": %lld, \"rotate_sets\": %d", (long long)r->error.samples,
            r->sets);
    json_text_field(f, "status", r->status);
    if (r->note[0])
        json_text_field(f, "note", r->note);
    fprintf(f, "}");
}

static void write_environment(FILE *f, const run_info *info)
{
    fprintf(f, "  \"device\": {\n    \"name\": ");
    json_string(f, info->device);
    if (info->gpu)
        fprintf(f, ",\n    \"compute_capability\": \"%d.%d\",\n    \"sm_count\": %d,\n"
                   "    \"l2_bytes\": %lld,\n    \"memory_bytes\": %lld\n  },\n",
                info->cc_major, info->cc_minor, info->sm_count, info->l2_bytes,
                info->memory_bytes);
    else
        fprintf(f, ",\n    \"gpu\": null,\n    \"cpu_threads\": %d\n  },\n", info->threads);
    if (!info->gpu) {
        fprintf(f, "  \"driver_version\": null,\n  \"runtime_version\": null,\n"
                   "  \"cublas_version\": null,\n");
        fprintf(f, "  \"no_gpu\": \"tg_backend_available(TG_BACKEND_CUDA) = 0: CPU backend "
                   "timed on host buffers, no cuBLAS\",\n");
        fprintf(f, "  \"timing\": \"CLOCK_MONOTONIC around each tg_sgemm call, median of "
                   "repeats after warmup\",\n");
        return;
    }
    char v1[32], v2[32], v3[32];
    bench_version_text(info->driver_version, 1, v1, sizeof v1);
    bench_version_text(info->runtime_version, 1, v2, sizeof v2);
    bench_version_text(info->cublas_version, 0, v3, sizeof v3);
    fprintf(f, "  \"driver_version\": \"%s\",\n  \"driver_version_raw\": %d,\n", v1,
            info->driver_version);
    fprintf(f, "  \"runtime_version\": \"%s\",\n  \"runtime_version_raw\": %d,\n", v2,
            info->runtime_version);
    fprintf(f, "  \"cublas_version\": \"%s\",\n  \"cublas_version_raw\": %d,\n", v3,
            info->cublas_version);
    fprintf(f, "  \"cublas\": \"algo cublas: cublasSgemm, CUBLAS_DEFAULT_MATH (FP32 FFMA); algo "
               "cublas_tf32: cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32\",\n");
    fprintf(f, "  \"timing\": \"cudaEvent pair per run on the handle's stream (cuBLAS on the "
               "same stream), median of repeats after warmup\",\n");
    fprintf(f, "  \"copy_gbs\": ");
    json_number(f, info->roof.copy_gbs, "%.0f");
    fprintf(f, ",\n  \"peak_tflops\": {\"ffma\": ");
    json_number(f, info->roof.ffma_tflops, "%.1f");
    fprintf(f, ", \"3xtf32\": ");
    json_number(f, info->roof.x3tf32_tflops, "%.1f");
    fprintf(f, ", \"tf32\": ");
    json_number(f, info->roof.tf32_tflops, "%.1f");
    fprintf(f, "},\n  \"sol\": \"sol_ms: max(2mnk / the peak of the entry's math mode (3xtf32 "
               "for fp32, ffma for strict, tf32), 4(mk + kn + mn) bytes / copy_gbs, 5 us); "
               "sol_fraction = sol_ms / median_ms\",\n");
}

int bench_write_json(const char *path, const run_info *info, const options *o,
                     const char *suite_text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tilegemm %s: cannot write %s: %s\n", bench_cmd, path, strerror(errno));
        return 0;
    }
    fprintf(f, "{\n  \"schema\": \"tilegemm-bench/2\",\n");
    fprintf(f, "  \"mode\": \"%s\",\n  \"tilegemm_version\": ", info->gpu ? "gpu" : "cpu");
    json_string(f, tg_version());
    fprintf(f, ",\n  \"commit\": ");
    json_string(f, info->commit);
    fprintf(f, ",\n  \"dirty\": %s,\n", info->dirty < 0 ? "null" : info->dirty ? "true" : "false");
    fprintf(f, "  \"date\": \"%s\",\n  \"command\": ", info->date);
    json_string(f, info->command);
    fprintf(f, ",\n  \"suite\": ");
    json_string(f, suite_text);
    fprintf(f, ",\n  \"random_seed\": %llu,\n  \"random_count\": %d", (unsigned long long)o->seed,
            o->count);
    fprintf(f, ",\n  \"math\": \"%s\",\n", tg_math_name(o->math));
    write_environment(f, info);
    fprintf(f, "  \"repeats\": %d,\n  \"warmup\": %d,\n", o->repeats, o->warmup);
    fprintf(f, "  \"min_timed_ms\": %g,\n", o->min_timed_ms);
    fprintf(f, "  \"repeats_enough_for_claims\": %s,\n",
            o->repeats >= MIN_CLAIM_REPEATS ? "true" : "false");
    fprintf(f, "  \"rotate_target_bytes\": %.0f,\n", info->rotate_target_bytes);
    fprintf(f, "  \"alpha\": 1.0,\n  \"beta\": 0.0,\n  \"inputs\": \"uniform random in "
               "[-1, 1]\",\n");
    fprintf(f, "  \"check\": \"float64 on %d sampled entries of C, copied back to the host: "
               "worst_scaled_error = max |c - ref| / ((k + 2) FLT_EPSILON sum|a b|) as tilegemm "
               "verify defines it (OK <= 1; TF32 arithmetic LOWPREC <= %g), rms_rel_error = "
               "RMS of |c - ref| / sum|a b|\",\n",
            CHECK_SAMPLES, TF32_BOUND_FACTOR);
    fprintf(f, "  \"results\": [");
    for (int i = 0; i < bench_nresults; ++i) {
        fprintf(f, "%s\n    ", i ? "," : "");
        write_result(f, &bench_results[i]);
    }
    fprintf(f, "\n  ]\n}\n");
    const int ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        fprintf(stderr, "tilegemm %s: error writing %s\n", bench_cmd, path);
        return 0;
    }
    return 1;
}
