/*
 * tilegemm: the command-line tool.
 *   info      backends, the GPU and its compute capability, SMs, memory, library version
 *   verify    every rung against the float64 reference (cli/verify.c)
 *   bench     time rungs, auto and cuBLAS on the same data (bench/bench.c); `run` is an alias
 *   simulate  the tiled algorithm walked through by hand, with its load counts (cli/simulate.c)
 *   explain   the plan tg_sgemm would follow for a shape, and why
 *   algos     the rungs this build has
 * Like the tests, and unlike the library, the tool prints and exits on errors.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "bench.h"
#include "cuda/registry.h" /* the rungs, for the planner's choice on a named GPU model */
#include "internal.h"      /* tg_choose */
#include "shape.h"
#include "simulate.h"
#include "tilegemm.h"
#include "tune.h"
#include "verify.h"

#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static int usage(FILE *out)
{
    fprintf(out,
            "usage: tilegemm <command> [options]    (tilegemm <command> --help for its options)\n"
            "  info                       backends, GPU, library version\n"
            "  verify [--quick]           every rung against the float64 reference\n"
            "  bench [MxNxK ...] [--suite squares|awkward|transposes|random|all|quick]\n"
            "                             time rungs, auto and cuBLAS (FP32 and FAST_TF32)\n"
            "  run MxNxK --algo NAME      time one rung against cuBLAS\n"
            "  simulate [MxNxK] [--tile T] the tiled algorithm, step by step (--svg FILE)\n"
            "  explain MxNxK [--layout row|col] [--trans NN|NT|TN|TT] [--math MODE] [--gpu h100]\n"
            "                             the plan for a shape, why, and its roofline\n"
            "  algos                      the rungs of this build\n"
            "  tune [MxNxK ...] [--suite S] [--math M] [--layout L] [--trans T]\n"
            "                             fill the autotuning cache (TILEGEMM_AUTOTUNE=1)\n"
            "  --version                  the library version\n");
    return out == stderr ? 2 : 0;
}

static void info_usage(FILE *out)
{
    fprintf(out, "usage: tilegemm info\n  backends, the GPU and its compute capability, SMs, "
                 "memory, library version\n");
}

static void algos_usage(FILE *out)
{
    fprintf(out, "usage: tilegemm algos [--tsv]\n"
                 "  the rungs of this build: name, level, arithmetic, whether auto may pick it,\n"
                 "  lowest compute capability, summary; --tsv: name, block tile, arithmetic,\n"
                 "  tab-separated for scripts\n");
}

static int cmd_info(int argc, char **argv)
{
    const int early = tg_args_parse("info", argc, argv, NULL, NULL, NULL, info_usage);
    if (early >= 0)
        return early;
    printf("tilegemm %s\n", tg_version());
    printf("backends: cpu (%ld hardware threads)", sysconf(_SC_NPROCESSORS_ONLN));
#ifdef TG_HAVE_CUDA
    printf(", cuda (built in)\n");
    printf("GPU code: %s\n", tg_gpu_code());
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (driver == 0) {
        printf("GPU: no NVIDIA driver was found: the CPU backend runs everything\n");
        return 0;
    }
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        printf("GPU: none found (%s): the CPU backend runs everything\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "no device");
        return 0;
    }
    printf("CUDA driver %d.%d, runtime %d.%d\n", driver / 1000, driver % 1000 / 10,
           runtime / 1000, runtime % 1000 / 10);
    for (int d = 0; d < count; ++d) {
        struct cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, d) != cudaSuccess)
            continue;
        printf("GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB memory, %.0f MiB L2%s\n",
               d, p.name, p.major, p.minor, p.multiProcessorCount,
               (double)p.totalGlobalMem / (1 << 30), (double)p.l2CacheSize / (1 << 20),
               d == 0 ? " (used)" : "");
    }
    /* A handle says whether this build's code runs on the GPU (a native build runs only on
     * the kind it was made for). */
    tg_handle *h = NULL;
    if (tg_create(&h) != TG_SUCCESS) {
        printf("GPU 0 cannot be used: %s\n", tg_last_error(NULL));
        return 1;
    }
    tg_destroy(h);
    const tg_roofline roof = tg_bench_roofline();
    printf("roofline of GPU 0: copy %.0f GB/s (measured now: 256 MiB device to device, bytes "
           "read plus written); FFMA %.1f TFLOP/s (from the clock)",
           roof.copy_gbs, roof.ffma_tflops);
    if (isfinite(roof.x3tf32_tflops))
        printf("; 3xTF32 %.0f and TF32 %.0f TFLOP/s (this GPU's tensor-core ceilings)",
               roof.x3tf32_tflops, roof.tf32_tflops);
    printf("\n");
#else
    printf("\nGPU: this build has no CUDA backend (nvcc was not found at configure time)\n");
#endif
    return 0;
}

/* `algos --tsv`: what scripts read (bench/fit_model.py): name, block tile, arithmetic. */
static int print_algos_tsv(void)
{
    printf("# name\tblock_rows\tblock_cols\tarith\tin_auto\n");
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info a;
        tg_algo_info_get(i, &a);
        printf("%s\t%d\t%d\t%s\t%d\n", a.name, a.block_rows, a.block_cols,
               tg_arith_name(a.arith), a.in_auto);
    }
    return 0;
}

static int cmd_algos(int argc, char **argv)
{
    int tsv = 0;
    const tg_option options[] = {{"--tsv", NULL, &tsv, NULL}, {NULL, NULL, NULL, NULL}};
    const int early = tg_args_parse("algos", argc, argv, options, NULL, NULL, algos_usage);
    if (early >= 0)
        return early;
    if (tsv)
        return print_algos_tsv();
    printf("%-19s %4s %-6s %-4s %-6s  %s\n", "name", "rung", "arith", "auto", "min cc",
           "summary");
    printf("%-19s %4s %-6s %-4s %-6s  %s\n", "auto", "-", "-", "-", "-",
           "picks per shape and math mode (see tilegemm explain)");
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info a;
        tg_algo_info_get(i, &a);
        char cc[16] = "any";
        if (a.min_cc > 0)
            snprintf(cc, sizeof cc, "%d.%d", a.min_cc / 10, a.min_cc % 10);
        printf("%-19s %4d %-6s %-4s %-6s  %s\n", a.name, a.level, tg_arith_name(a.arith),
               a.in_auto ? "yes" : "no", cc, a.summary);
    }
    if (tg_algo_count() == 0)
        printf("(this build has no CUDA rungs)\n");
    return 0;
}

/* The roofline of this GPU: FP32 FFMA peak and memory bandwidth.  On an H100 its figures
 * (FFMA 66.9 TFLOP/s from 132 SMs x 128 lanes x 2 x 1.98 GHz; a device-to-device copy, bytes
 * read plus written, 2.99 TB/s, as `tilegemm info` measures it); elsewhere derived from the
 * device's properties; without a GPU the H100's, said so. */
static void roofline_peaks(double *flops, double *bytes_per_s, char *source, size_t size)
{
    *flops = 66.9e12;
    *bytes_per_s = 2.99e12;
    snprintf(source, size, "H100 reference figures (no GPU here): FFMA 66.9 TFLOP/s, copy "
                           "2.99 TB/s measured");
#ifdef TG_HAVE_CUDA
    int count = 0, dev = 0, clock_khz = 0, mem_khz = 0, bus_bits = 0, sms = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDevice(&dev))
        return;
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess)
        return;
    if (strstr(p.name, "H100")) {
        snprintf(source, size, "%.100s: FFMA 66.9 TFLOP/s, copy 2.99 TB/s measured", p.name);
        return;
    }
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
    sms = p.multiProcessorCount;
    if (clock_khz > 0 && mem_khz > 0 && bus_bits > 0) {
        /* 128 FP32 lanes per SM from Ampere on (64 before), 2 FLOPs per FFMA; DDR memory. */
        const int lanes = p.major >= 8 ? 128 : 64;
        *flops = (double)sms * lanes * 2.0 * clock_khz * 1e3;
        *bytes_per_s = 2.0 * mem_khz * 1e3 * bus_bits / 8.0;
        snprintf(source, size, "%.100s, from its properties: %d SMs x %d lanes x 2 x %.2f GHz, "
                 "%d-bit bus at %.2f GHz", p.name, sms, lanes, clock_khz / 1e6, bus_bits,
                 mem_khz / 1e6);
    }
#endif
}

/* Arithmetic intensity, traffic predicted from the rung's tiling, the roofline bound, and the
 * call's speed of light in math mode `math` (tg_speed_of_light_s, with the H100's tensor-core
 * ceilings on an H100, the FFMA peak elsewhere). */
static void print_roofline(long long m, long long n, long long k, const char *algo, tg_math math)
{
    int block_rows = 0, block_cols = 0;
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info a;
        if (tg_algo_info_get(i, &a) == TG_SUCCESS && !strcmp(a.name, algo))
            block_rows = a.block_rows, block_cols = a.block_cols;
    }
    if (block_rows <= 0 || block_cols <= 0 || m <= 0 || n <= 0 || k <= 0)
        return;
    const double flops = 2.0 * (double)m * (double)n * (double)k;
    const double ideal = 4.0 * ((double)m * k + (double)k * n + (double)m * n);
    /* Each block column re-reads A, each block row re-reads B; C is written once. */
    const double col_tiles = (double)((n + block_cols - 1) / block_cols);
    const double row_tiles = (double)((m + block_rows - 1) / block_rows);
    const double traffic = 4.0 * ((double)m * k * col_tiles + (double)k * n * row_tiles +
                                  (double)m * n);
    double peak = 0.0, bandwidth = 0.0;
    char source[256];
    roofline_peaks(&peak, &bandwidth, source, sizeof source);
    const double intensity = flops / traffic;
    const double bound = intensity * bandwidth < peak ? intensity * bandwidth : peak;
    printf("roofline of %s (%d x %d block tile):\n", algo, block_rows, block_cols);
    printf("  arithmetic intensity: %.1f FLOP/byte at compulsory traffic (%.3g MB), %.1f "
           "FLOP/byte with the tiling's traffic\n", flops / ideal, ideal / 1e6, intensity);
    printf("  global traffic predicted from the tiling: A read %.0f times, B %.0f times, C "
           "written once: %.3g MB (L2 hits make the DRAM share smaller)\n",
           col_tiles, row_tiles, traffic / 1e6);
    printf("  roofline bound: %.1f TFLOP/s (%s-bound; ridge at %.1f FLOP/byte)\n", bound / 1e12,
           intensity * bandwidth < peak ? "memory" : "compute", peak / bandwidth);
    printf("  peaks: %s\n", source);
    tg_roofline roof = {bandwidth / 1e9, peak / 1e12, NAN, NAN};
    if (strstr(source, "H100"))
        tg_tensor_ceilings(9, 0, &roof);
    double compute_s = 0.0, memory_s = 0.0, mode_peak = 0.0;
    const double sol_s = tg_speed_of_light_s(&roof, math, (double)m, (double)n, (double)k,
                                             &compute_s, &memory_s, &mode_peak);
    const char *bound_by = sol_s > compute_s && sol_s > memory_s ? "launch"
                           : compute_s > memory_s               ? "arithmetic"
                                                                : "memory";
    printf("  speed of light in math mode %s: %.1f us (%s-bound: %.1f us of arithmetic at %.0f "
           "TFLOP/s, %.1f us of compulsory traffic); a plan's predicted time over it is its gap\n",
           tg_math_name(math), sol_s * 1e6, bound_by, compute_s * 1e6, mode_peak,
           memory_s * 1e6);
}

static void explain_usage(FILE *out)
{
    fprintf(out, "usage: tilegemm explain MxNxK [--layout row|col] [--trans NN|NT|TN|TT]\n"
                 "                        [--algo NAME] [--math fp32|strict|tf32] [--gpu h100]\n"
                 "  the plan tg_sgemm would follow for host operands of this shape and why; the\n"
                 "  rung the planner picks for device operands on this GPU, or on the --gpu\n"
                 "  model where there is none (default h100); and for that rung its arithmetic\n"
                 "  intensity, predicted traffic, roofline bound and the tuned table's speed\n");
}

/* The GPU models explain can plan for without one: what the planner's tuned table and cost
 * model know (tuning/). */
typedef struct gpu_model {
    const char *name;
    tg_device_props props;
    const char *description;
} gpu_model;
static const gpu_model kGpuModels[] = {
    {"h100", {.compute_capability = 90, .sm_count = 132}, "an H100 (sm_90, 132 SMs)"}};
static const char *const kGpuModelNames[] = {"h100", NULL};

typedef struct explain_shape {
    long long m, n, k;
} explain_shape;

static int take_shape(const char *arg, void *ctx)
{
    explain_shape *s = ctx;
    if (s->m >= 0)
        return -1; /* one shape only */
    if (tg_parse_shape(arg, &s->m, &s->n, &s->k) == 0)
        return 0;
    s->m = -1;
    fprintf(stderr, "tilegemm explain: \"%s\" is not a shape MxNxK\n", arg);
    return TG_ARGS_REPORTED;
}

/* What auto (or the forced rung) would run on the GPU model for device operands: the
 * planner's own choice (tg_choose).  Returns the rung's name, NULL when none can run it. */
static const char *choose_on_model(tg_handle *h, const gpu_model *model, const char *algo,
                                   const tg_call *call, int *split_k)
{
    tg_problem p;
    tg_normalize(call, &p);
    const int forced = strcmp(algo, "auto") ? tg_find_rung(algo) : -1;
    tg_choice c;
    if (!tg_choose(&model->props, tg_get_math(h), forced, 0, &p, &c))
        return NULL;
    *split_k = c.split_k;
    return tg_rungs[c.rung]->name;
}

static int cmd_explain(int argc, char **argv)
{
    explain_shape shape = {-1, -1, -1};
    tg_layout layout = TG_ROW_MAJOR;
    tg_op trans[2] = {TG_NO_TRANS, TG_NO_TRANS};
    const char *algo = "auto";
    int math = -1, model_index = 0;
    tg_choice_arg model_arg = {kGpuModelNames, &model_index};
    const tg_option options[] = {
        {"--layout", tg_arg_layout, &layout, "row or col"},
        {"--trans", tg_arg_trans, trans, "NN, NT, TN or TT"},
        {"--algo", tg_arg_name, &algo, "a rung of `tilegemm algos` or auto"},
        {"--math", tg_arg_math, &math, "fp32, strict or tf32"},
        {"--gpu", tg_arg_choice, &model_arg, "h100"},
        {NULL, NULL, NULL, NULL}};
    const int early = tg_args_parse("explain", argc, argv, options, take_shape, &shape,
                                    explain_usage);
    if (early >= 0)
        return early;
    if (shape.m < 0)
        return explain_usage(stderr), 2;
    const long long m = shape.m, n = shape.n, k = shape.k;
    const tg_op ta = trans[0], tb = trans[1];
    /* Tightest legal leading dimensions for this layout and these transposes. */
    const int row = layout == TG_ROW_MAJOR;
    const int64_t lda = tg_min_ld(layout, ta, m, k), ldb = tg_min_ld(layout, tb, k, n);
    const int64_t ldc = tg_min_ld(layout, TG_NO_TRANS, m, n);
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS)
        return fprintf(stderr, "tilegemm explain: %s\n", tg_last_error(NULL)), 1;
    char plan[2048];
    tg_status s = tg_set_algo(h, algo);
    if (s == TG_SUCCESS && math >= 0)
        s = tg_set_math(h, (tg_math)math);
    if (s == TG_SUCCESS)
        s = tg_explain(h, layout, ta, tb, m, n, k, NULL, lda, NULL, ldb, NULL, ldc, plan,
                       sizeof plan);
    if (s != TG_SUCCESS) {
        fprintf(stderr, "tilegemm explain: %s: %s\n", tg_status_string(s), tg_last_error(h));
        tg_destroy(h);
        return 1;
    }
    printf("%lldx%lldx%lld, %s-major, %c%c, host operands, math mode %s:\n%s", m, n, k,
           row ? "row" : "column", ta == TG_TRANS ? 'T' : 'N', tb == TG_TRANS ? 'T' : 'N',
           tg_math_name(tg_get_math(h)), plan);
    /* Where the plan runs on the CPU (or computes no product), what a GPU would run for device
     * operands, from the planner: this machine's GPU, else the named model. */
    const char *chosen = tg_explained_algo(h);
    if ((!strcmp(chosen, "cpu") || !strcmp(chosen, "none")) && m > 0 && n > 0 && k > 0) {
        int split = 1;
        static _Alignas(256) float placeholder[1];
        const tg_call call = {.layout = layout, .transa = ta, .transb = tb, .m = m, .n = n,
                              .k = k, .alpha = 1.0f, .A = placeholder, .lda = lda,
                              .B = placeholder, .ldb = ldb, .C = placeholder, .ldc = ldc,
                              .batch = 1};
        const char *where = "this GPU";
        if (tg_backend_available(TG_BACKEND_CUDA)) {
            const char *gpu_algo = NULL;
            if (tg_choose_algo(h, layout, ta, tb, m, n, k, lda, ldb, ldc, &gpu_algo, &split) !=
                TG_SUCCESS)
                gpu_algo = NULL;
            chosen = gpu_algo;
        } else {
            where = kGpuModels[model_index].description;
            chosen = choose_on_model(h, &kGpuModels[model_index], algo, &call, &split);
        }
        if (chosen)
            printf("with device operands on %s%s, the planner would run %s%s%s\n", where,
                   tg_backend_available(TG_BACKEND_CUDA) ? "" : " (no GPU here: the model of one)",
                   chosen, split > 1 ? " with split-K" : "",
                   strcmp(algo, "auto") ? " (forced)" : "");
        else
            printf("on %s, %s\n", where,
                   tg_algo_count() == 0 ? "nothing: this build has no CUDA rungs"
                                        : "no rung of this build can run it");
    }
    if (chosen && strcmp(chosen, "cpu") && strcmp(chosen, "none"))
        print_roofline(m, n, k, chosen, tg_get_math(h));
    tg_destroy(h);
    return 0;
}

static int run_command(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "verify")) return tg_verify_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench") || !strcmp(cmd, "run")) return tg_bench_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "simulate")) return tg_simulate_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "explain")) return cmd_explain(argc - 1, argv + 1);
    if (!strcmp(cmd, "algos")) return cmd_algos(argc - 1, argv + 1);
    if (!strcmp(cmd, "tune")) return tg_tune_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        if (argc > 2)
            return fprintf(stderr, "tilegemm %s: unexpected argument \"%s\"\n", cmd, argv[2]), 2;
        return printf("tilegemm %s\n", tg_version()), 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        if (argc > 2)
            return fprintf(stderr, "tilegemm %s: unexpected argument \"%s\"\n", cmd, argv[2]), 2;
        return usage(stdout);
    }
    fprintf(stderr, "tilegemm: unknown command \"%s\"\n", cmd);
    return usage(stderr);
}

/* The command's exit code, unless what it printed could not be written (a full disk, a closed
 * pipe): then 1, so that a script never takes a truncated output for a whole one. */
int main(int argc, char **argv)
{
    int status = run_command(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tilegemm: cannot write the output: %s\n", strerror(errno));
        if (status == 0)
            status = 1;
    }
    return status;
}
