/*
 * The tuned table's writer (`tilegemm bench --tune`, bench/tuning_writer.c) on fabricated
 * results, no GPU needed:
 *   - tg_algo_auto_margin: 1.10 for ozaki2_int8, 1.0 for every other rung and for indices out
 *     of range;
 *   - the margin: ozaki2_int8 is written only where it beats the others by 10%, with the rate
 *     it measured; auto, cuBLAS, rungs auto may not run and results that failed their check
 *     are never written;
 *   - --tune-merge with --tune-modes fp32: the fp32 rows of the cases timed replaced in place,
 *     the rows the table lacked added at its end, a row whose case had no passing result
 *     dropped, every other row and comment kept byte for byte, the merge noted above the column
 *     names;
 *   - refusals that write nothing: a missing table, a row or a header of another compute
 *     capability, a row it cannot read;
 *   - the project's tuning/sm_90.tsv with this run merged in still passes cmake/tuning.cmake.
 * It needs the rungs' descriptors: a build without nvcc links the emulated registry
 * (tests/emulated); without the rungs named here it skips.
 *
 *   test_tuning_writer SOURCE_ROOT WORK_FOLDER CMAKE
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_internal.h"
#include "testing.h"

static int rung_index(const char *name)
{
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info a;
        if (tg_algo_info_get(i, &a) == TG_SUCCESS && strcmp(a.name, name) == 0)
            return i;
    }
    return -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    const size_t got = fread(text, 1, (size_t)size, f);
    fclose(f);
    text[got] = '\0';
    return text;
}

static void spill(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void add(const bench_case *c, const char *algo, int split_k, const char *status,
                double tflops, double cublas_tflops)
{
    result *r = bench_new_result(c, algo);
    r->split_k = split_k;
    snprintf(r->status, sizeof r->status, "%s", status);
    r->flops_per_s = tflops * 1e12;
    r->cublas_flops_per_s = cublas_tflops * 1e12;
}

static const run_info *h100(void)
{
    static run_info info;
    memset(&info, 0, sizeof info);
    info.gpu = 1;
    snprintf(info.device, sizeof info.device, "NVIDIA H100 80GB HBM3");
    info.cc_major = 9;
    snprintf(info.commit, sizeof info.commit, "abc1234");
    snprintf(info.date, sizeof info.date, "2026-12-01T00:00:00Z");
    snprintf(info.command, sizeof info.command, "tilegemm bench --tune --tune-merge");
    return &info;
}

#define ROW(m, n, k, ak, bn, algo, split, math, tflops, cublas)                                  \
    "90\t" #m "\t" #n "\t" #k "\t" #ak "\t" #bn "\t" algo "\t" #split "\t" math "\t" tflops     \
    "\t" cublas "\n"
#define HEADER                                                                                    \
    "# tilegemm tuning table for NVIDIA H100 80GB HBM3 (sm_90), written by `tilegemm bench "      \
    "--tune` at commit 31e0628 on 2026-11-26T21:48:27Z. Generated: do not edit.\n"
#define COLUMNS                                                                                   \
    "# cc\tm\tn\tk\ta_k_contiguous\tb_n_contiguous\talgo\tsplit_k\tmath\ttflops\t"              \
    "cublas_tflops\n"

static const bench_case kBig = {16384, 16384, 16384, TG_NO_TRANS, TG_NO_TRANS, TG_ROW_MAJOR,
                                "squares"};
static const bench_case kMid = {8192, 8192, 8192, TG_NO_TRANS, TG_NO_TRANS, TG_ROW_MAJOR,
                                "squares"};
/* Column-major, op(B) transposed: the planner sees 2048 x 4096 x 1024, op(A) along m, op(B)
 * along n. */
static const bench_case kTurned = {4096, 2048, 1024, TG_NO_TRANS, TG_TRANS, TG_COL_MAJOR,
                                   "custom"};
static const bench_case kFailed = {2048, 2048, 2048, TG_NO_TRANS, TG_NO_TRANS, TG_ROW_MAJOR,
                                   "squares"};

static void test_margin_api(int ozaki)
{
    EXPECT(fabs(tg_algo_auto_margin(ozaki) - 1.10) < 1e-12, "ozaki2_int8's margin %g",
           tg_algo_auto_margin(ozaki));
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info a;
        tg_algo_info_get(i, &a);
        EXPECT(i == ozaki || tg_algo_auto_margin(i) == 1.0, "%s has margin %g", a.name,
               tg_algo_auto_margin(i));
    }
    EXPECT(tg_algo_auto_margin(-1) == 1.0, "index -1: %g", tg_algo_auto_margin(-1));
    EXPECT(tg_algo_auto_margin(tg_algo_count()) == 1.0, "index count: %g",
           tg_algo_auto_margin(tg_algo_count()));
}

/* A whole table: the margin decides the fp32 rows. */
static void test_full(const char *work)
{
    bench_free_results();
    add(&kBig, "tma_wgmma3xtf32", 1, "OK", 117.096, 54.128);
    add(&kBig, "ozaki2_int8", 1, "OK", 125.0, 54.128); /* 6.8% ahead: not enough */
    add(&kBig, "ozaki2_int8", 1, "MISMATCH", 300.0, 54.128);
    add(&kBig, "auto", 0, "OK", 400.0, 54.128);
    add(&kBig, "ffma128x256", 0, "OK", 49.455, 54.128);
    add(&kBig, "tma_wgmmatf32", 1, "LOWPREC", 339.535, 54.128);
    add(&kBig, "tma_wgmmatf32_128x64", 1, "LOWPREC", 400.0, 54.128); /* not in auto */
    add(&kMid, "tma_wgmma3xtf32", 0, "OK", 128.283, 51.986);
    add(&kMid, "ozaki2_int8", 1, "OK", 150.0, 51.986); /* 17% ahead */
    add(&kMid, "ffma128x256", 1, "OK", 48.327, 51.986);
    add(&kTurned, "tma_wgmma3xtf32/k2", 2, "OK", 100.0, 40.0);
    add(&kTurned, "ozaki2_int8", 1, "OK", 110.5, 40.0); /* 10.5% ahead */
    add(&kTurned, "ffma128x128", 1, "OK", 30.0, 40.0);
    bench_case cases[] = {kBig, kMid, kTurned};
    options o;
    memset(&o, 0, sizeof o);
    o.cases = cases;
    o.ncases = 3;
    o.tune = 1;
    char path[1200];
    snprintf(path, sizeof path, "%s/full.tsv", work);
    EXPECT(bench_write_tuning(path, h100(), &o) == 1, "the whole table written");
    char *got = slurp(path);
    const char *want =
        "# tilegemm tuning table for NVIDIA H100 80GB HBM3 (sm_90), written by `tilegemm bench "
        "--tune` at commit abc1234 on 2026-12-01T00:00:00Z. Generated: do not edit.\n" COLUMNS
        ROW(16384, 16384, 16384, 1, 1, "tma_wgmma3xtf32", 1, "fp32", "117.096", "54.128")
        ROW(16384, 16384, 16384, 1, 1, "ffma128x256", 0, "strict", "49.455", "54.128")
        ROW(16384, 16384, 16384, 1, 1, "tma_wgmmatf32", 1, "tf32", "339.535", "54.128")
        ROW(8192, 8192, 8192, 1, 1, "ozaki2_int8", 1, "fp32", "150.000", "51.986")
        ROW(8192, 8192, 8192, 1, 1, "ffma128x256", 1, "strict", "48.327", "51.986")
        ROW(8192, 8192, 8192, 1, 1, "ozaki2_int8", 1, "tf32", "150.000", "51.986")
        ROW(2048, 4096, 1024, 0, 1, "ozaki2_int8", 1, "fp32", "110.500", "40.000")
        ROW(2048, 4096, 1024, 0, 1, "ffma128x128", 1, "strict", "30.000", "40.000")
        ROW(2048, 4096, 1024, 0, 1, "ozaki2_int8", 1, "tf32", "110.500", "40.000");
    EXPECT(got && strcmp(got, want) == 0, "the whole table:\n%s\nwanted:\n%s", got ? got : "",
           want);
    free(got);
}

/* The re-tune of the next device run: fp32 alone, merged. */
static options merge_run(bench_case *cases)
{
    bench_free_results();
    add(&kBig, "tma_wgmma3xtf32", 1, "OK", 117.5, 54.0);
    add(&kBig, "tma_wgmma3xtf32_64x128", 1, "OK", 110.0, 54.0);
    add(&kBig, "ozaki2_int8", 1, "OK", 154.0, 54.0);
    add(&kBig, "ffma128x256", 1, "OK", 49.0, 54.0);
    add(&kMid, "tma_wgmma3xtf32", 0, "OK", 128.0, 52.0);
    add(&kMid, "ozaki2_int8", 1, "OK", 139.0, 52.0); /* 8.6% ahead: 3xTF32 stays */
    add(&kFailed, "tma_wgmma3xtf32", 1, "MISMATCH", 100.0, 50.0);
    add(&kFailed, "ozaki2_int8", 1, "UNSUPPORTED", NAN, 50.0);
    cases[0] = kBig;
    cases[1] = kMid;
    cases[2] = kFailed;
    options o;
    memset(&o, 0, sizeof o);
    o.cases = cases;
    o.ncases = 3;
    o.tune = 1;
    o.tune_merge = 1;
    o.tune_modes = 1u << TG_MATH_FP32;
    return o;
}

static void test_merge(const char *work)
{
    bench_case cases[3];
    const options o = merge_run(cases);
    char path[1200];
    snprintf(path, sizeof path, "%s/merged.tsv", work);
    spill(path, HEADER "# an older note\n" COLUMNS
                ROW(1024, 1024, 1024, 1, 1, "tma_wgmma3xtf32_64x128", 0, "fp32", "54.186", "34.257")
                ROW(16384, 16384, 16384, 1, 1, "tma_wgmma3xtf32", 1, "fp32", "117.096", "54.128")
                ROW(16384, 16384, 16384, 1, 1, "ffma128x256", 0, "strict", "49.455", "54.128")
                ROW(2048, 2048, 2048, 1, 1, "tma_wgmma3xtf32", 1, "fp32", "103.864", "50.941")
                ROW(2048, 2048, 2048, 1, 1, "ffma128x256", 0, "strict", "47.892", "50.941")
                ROW(16384, 16384, 16384, 1, 1, "tma_wgmmatf32", 1, "tf32", "339.535", "54.128"));
    EXPECT(bench_tuning_mergeable(path, h100()), "a table of sm_90 takes a merge");
    EXPECT(bench_write_tuning(path, h100(), &o) == 1, "merged");
    char *got = slurp(path);
    const char *want =
        HEADER "# an older note\n"
        "# merged at commit abc1234 on 2026-12-01T00:00:00Z on NVIDIA H100 80GB HBM3: the fp32 "
        "rows of the 3 case(s) timed by `tilegemm bench --tune --tune-merge`\n" COLUMNS
        ROW(1024, 1024, 1024, 1, 1, "tma_wgmma3xtf32_64x128", 0, "fp32", "54.186", "34.257")
        ROW(16384, 16384, 16384, 1, 1, "ozaki2_int8", 1, "fp32", "154.000", "54.000")
        ROW(16384, 16384, 16384, 1, 1, "ffma128x256", 0, "strict", "49.455", "54.128")
        ROW(2048, 2048, 2048, 1, 1, "ffma128x256", 0, "strict", "47.892", "50.941")
        ROW(16384, 16384, 16384, 1, 1, "tma_wgmmatf32", 1, "tf32", "339.535", "54.128")
        ROW(8192, 8192, 8192, 1, 1, "tma_wgmma3xtf32", 0, "fp32", "128.000", "52.000");
    EXPECT(got && strcmp(got, want) == 0, "the merged table:\n%s\nwanted:\n%s", got ? got : "",
           want);
    free(got);
    char temporary[1300];
    snprintf(temporary, sizeof temporary, "%s.new", path);
    EXPECT(!exists(temporary), "%s left behind", temporary);
}

/* Each refused merge writes nothing: the file as it was, no new file beside it. */
static void expect_refused(const char *work, const char *name, const char *text)
{
    bench_case cases[3];
    const options o = merge_run(cases);
    char path[1200], temporary[1300];
    snprintf(path, sizeof path, "%s/%s", work, name);
    snprintf(temporary, sizeof temporary, "%s.new", path);
    remove(path);
    if (text)
        spill(path, text);
    EXPECT(!bench_tuning_mergeable(path, h100()), "%s: the merge check passed it", name);
    EXPECT(bench_write_tuning(path, h100(), &o) == 0, "%s: merged", name);
    char *got = slurp(path);
    EXPECT(text ? got && strcmp(got, text) == 0 : !got, "%s: the file changed", name);
    EXPECT(!exists(temporary), "%s: a new file written", name);
    free(got);
}

static void test_refusals(const char *work)
{
    expect_refused(work, "missing.tsv", NULL);
    expect_refused(work, "sm_80_row.tsv",
                   HEADER COLUMNS
                   ROW(1024, 1024, 1024, 1, 1, "tma_wgmma3xtf32", 0, "fp32", "54.186", "34.257")
                   "80\t1024\t1024\t1024\t1\t1\tblocktile64\t0\tfp32\t10.0\t12.0\n");
    expect_refused(work, "sm_80_header.tsv",
                   "# tilegemm tuning table for NVIDIA A100 (sm_80), written by `tilegemm bench "
                   "--tune` at commit 1 on 2026. Generated: do not edit.\n" COLUMNS);
    expect_refused(work, "short_row.tsv",
                   HEADER COLUMNS "90\t1024\t1024\t1024\t1\t1\ttma_wgmma3xtf32\t0\tfp32\t54.186\n");
    expect_refused(work, "bad_math.tsv",
                   HEADER COLUMNS
                   ROW(1024, 1024, 1024, 1, 1, "tma_wgmma3xtf32", 0, "fast", "54.186", "34.257"));
}

/* The project's table with the run merged in, read by cmake/tuning.cmake as the build reads
 * it. */
static void test_project_table(const char *source, const char *work, const char *cmake)
{
    char path[1400], command[6000];
    snprintf(command, sizeof command, "rm -rf '%s/tree' && mkdir -p '%s/tree/tuning' "
             "'%s/tree/src/cuda' && cp '%s/tuning/sm_90.tsv' '%s/tree/tuning/' && cp "
             "'%s/src/cuda/rungs.def' '%s/tree/src/cuda/'",
             work, work, work, source, work, source, work);
    EXPECT(system(command) == 0, "%s", command);
    snprintf(path, sizeof path, "%s/tree/tuning/sm_90.tsv", work);
    char *before = slurp(path);
    int rows_before = 0;
    for (const char *p = before; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
        rows_before += *p != '#' && *p != '\n';
    free(before);
    bench_case cases[3];
    options o = merge_run(cases);
    o.ncases = 2; /* 16384^3 and 8192^3, both in the table */
    EXPECT(bench_write_tuning(path, h100(), &o) == 1, "merged into the project's table");
    snprintf(command, sizeof command,
             "cd '%s/tree' && '%s' -DPROJECT_SOURCE_DIR='%s/tree' -DTG_GENERATED_DIR='%s/tree/"
             "generated' -P '%s/cmake/tuning.cmake' > '%s/tree/cmake.out' 2>&1",
             work, cmake, work, work, source, work);
    EXPECT(system(command) == 0, "tuning.cmake refused the merged table: %s", command);
    snprintf(path, sizeof path, "%s/tree/cmake.out", work);
    char *out = slurp(path), expected[64];
    snprintf(expected, sizeof expected, " %d tuned rows from 1 file", rows_before);
    EXPECT(out && strstr(out, expected), "tuning.cmake said:\n%s\nwanted%s", out ? out : "",
           expected);
    free(out);
    snprintf(path, sizeof path, "%s/tree/generated/tuning_table.c", work);
    char *table = slurp(path);
    EXPECT(table && strstr(table, "{90, 16384, 16384, 16384, 1, 1, \"ozaki2_int8\", 1, 0, 154.000}"),
           "the embedded table lacks the merged row:\n%s", table ? table : "");
    free(table);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_tuning_writer SOURCE_ROOT WORK_FOLDER CMAKE\n");
        return 1;
    }
    const int ozaki = rung_index("ozaki2_int8");
    if (ozaki < 0 || rung_index("tma_wgmma3xtf32") < 0 || rung_index("tma_wgmmatf32") < 0 ||
        rung_index("ffma128x256") < 0 || rung_index("ffma128x128") < 0 ||
        rung_index("tma_wgmmatf32_128x64") < 0) {
        printf("test_tuning_writer: skipped: this build has not the rungs it names\n");
        return TG_TEST_SKIP;
    }
    const char *work = argv[2];
    mkdir(work, 0777);
    test_margin_api(ozaki);
    test_full(work);
    test_merge(work);
    test_refusals(work);
    test_project_table(argv[1], work, argv[3]);
    bench_free_results();
    return tg_test_result("test_tuning_writer");
}
