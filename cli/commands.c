/*
 * The subcommands that inspect rather than run: info (backends, the GPU, its roofline), algos
 * (the rungs of this build) and explain (the plan for a shape and why).  The other subcommands
 * live in their own files (verify.c, simulate_main.c, bench/); app/tilegemm.c dispatches.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "roofline.h"
#include "shape.h"
#include "tilegemm.h"

#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

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

int tg_info_main(int argc, char **argv)
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
    const tg_roofline roof = tg_measure_roofline();
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

int tg_algos_main(int argc, char **argv)
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

/* The roofline explain measures a plan against: on an H100 its reference figures (FFMA
 * 66.9 TFLOP/s from 132 SMs x 128 lanes x 2 x 1.98 GHz; a device-to-device copy, bytes read
 * plus written, 2.99 TB/s, as `tilegemm info` measures it); elsewhere derived from the device's
 * properties; without a GPU the H100's, said so.  Tensor-core ceilings by compute capability
 * (tg_tensor_ceilings), NAN where none is known. */
static tg_roofline explain_roofline(char *source, size_t size)
{
    tg_roofline roof = {2990.0, 66.9, NAN, NAN};
    tg_tensor_ceilings(9, 0, &roof);
    snprintf(source, size, "H100 reference figures (no GPU here): FFMA 66.9 TFLOP/s, copy "
                           "2.99 TB/s measured");
#ifdef TG_HAVE_CUDA
    int count = 0, dev = 0, clock_khz = 0, mem_khz = 0, bus_bits = 0, sms = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDevice(&dev))
        return roof;
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess)
        return roof;
    if (strstr(p.name, "H100")) {
        snprintf(source, size, "%.100s: FFMA 66.9 TFLOP/s, copy 2.99 TB/s measured", p.name);
        return roof;
    }
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
    sms = p.multiProcessorCount;
    if (clock_khz > 0 && mem_khz > 0 && bus_bits > 0) {
        /* 128 FP32 lanes per SM from Ampere on (64 before), 2 FLOPs per FFMA; DDR memory. */
        const int lanes = p.major >= 8 ? 128 : 64;
        roof = (tg_roofline){2.0 * mem_khz * 1e3 * bus_bits / 8.0 / 1e9,
                             (double)sms * lanes * 2.0 * clock_khz * 1e3 / 1e12, NAN, NAN};
        tg_tensor_ceilings(p.major, p.minor, &roof);
        snprintf(source, size, "%.100s, from its properties: %d SMs x %d lanes x 2 x %.2f GHz, "
                 "%d-bit bus at %.2f GHz", p.name, sms, lanes, clock_khz / 1e6, bus_bits,
                 mem_khz / 1e6);
    }
#endif
    return roof;
}

/* Arithmetic intensity, traffic predicted from the rung's tiling, the roofline bound at the
 * peak of the rung's own arithmetic (FFMA, 3xTF32 or TF32), and the call's speed of light in
 * math mode `math` (tg_speed_of_light_s). */
static void print_roofline(long long m, long long n, long long k, const char *algo, tg_math math)
{
    tg_algo_info rung = {0};
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info a;
        if (tg_algo_info_get(i, &a) == TG_SUCCESS && !strcmp(a.name, algo))
            rung = a;
    }
    const int block_rows = rung.block_rows, block_cols = rung.block_cols;
    if (block_rows <= 0 || block_cols <= 0 || m <= 0 || n <= 0 || k <= 0)
        return;
    const double flops = 2.0 * (double)m * (double)n * (double)k;
    const double ideal = 4.0 * ((double)m * k + (double)k * n + (double)m * n);
    /* Each block column re-reads A, each block row re-reads B; C is written once. */
    const double col_tiles = (double)((n + block_cols - 1) / block_cols);
    const double row_tiles = (double)((m + block_rows - 1) / block_rows);
    const double traffic = 4.0 * ((double)m * k * col_tiles + (double)k * n * row_tiles +
                                  (double)m * n);
    char source[256];
    const tg_roofline roof = explain_roofline(source, sizeof source);
    const double bandwidth = roof.copy_gbs * 1e9;
    const double peak = tg_arith_peak_tflops(&roof, rung.arith) * 1e12;
    const double intensity = flops / traffic;
    const char *arith = tg_arith_name(rung.arith);
    printf("roofline of %s (%d x %d block tile, %s arithmetic):\n", algo, block_rows, block_cols,
           arith);
    printf("  arithmetic intensity: %.1f FLOP/byte at compulsory traffic (%.3g MB), %.1f "
           "FLOP/byte with the tiling's traffic\n", flops / ideal, ideal / 1e6, intensity);
    printf("  global traffic predicted from the tiling: A read %.0f times, B %.0f times, C "
           "written once: %.3g MB (L2 hits make the DRAM share smaller)\n",
           col_tiles, row_tiles, traffic / 1e6);
    if (isfinite(peak)) {
        const double bound = intensity * bandwidth < peak ? intensity * bandwidth : peak;
        printf("  roofline bound: %.1f TFLOP/s (%s-bound; %s peak %.1f TFLOP/s, ridge at %.1f "
               "FLOP/byte)\n", bound / 1e12, intensity * bandwidth < peak ? "memory" : "compute",
               arith, peak / 1e12, peak / bandwidth);
    } else {
        printf("  roofline bound: unknown: no %s ceiling is known for this GPU\n", arith);
    }
    printf("  peaks: %s", source);
    if (isfinite(roof.x3tf32_tflops))
        printf("; tensor cores 3xTF32 %.0f, TF32 %.0f TFLOP/s", roof.x3tf32_tflops,
               roof.tf32_tflops);
    printf("\n");
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
    fprintf(out, "usage: tilegemm explain MxNxK|N [--layout row|col] [--trans NN|NT|TN|TT]\n"
                 "                          [--algo NAME] [--math fp32|strict|tf32] [--gpu h100]\n"
                 "  the plan tg_sgemm would follow for host operands of this shape (N: NxNxN) and\n"
                 "  why; the rung the planner picks for device operands on this GPU, or on the\n"
                 "  --gpu model where there is none (default h100), and why: the tuned table's\n"
                 "  measured speed where it has a row for the call, else the cost model's\n"
                 "  prediction and runner-up; and for that rung its arithmetic intensity,\n"
                 "  predicted traffic and roofline bound at its arithmetic's peak\n");
}

/* The GPU models explain can plan for without one: what the planner's tuned table and cost
 * model know (tuning/). */
typedef struct gpu_model {
    const char *name;
    int compute_capability, sm_count;
    const char *description;
} gpu_model;
static const gpu_model kGpuModels[] = {{"h100", 90, 132, "an H100 (sm_90, 132 SMs)"}};
static const char *const kGpuModelNames[] = {"h100", NULL};

typedef struct explain_shape {
    long long m, n, k;
} explain_shape;

static int take_shape(const char *arg, void *ctx)
{
    explain_shape *s = ctx;
    if (s->m >= 0)
        return -1; /* one shape only */
    if (tg_parse_shape_ex(arg, &s->m, &s->n, &s->k, 1) == 0) /* N: NxNxN, as bench takes it */
        return 0;
    s->m = -1;
    fprintf(stderr, "tilegemm explain: \"%s\" is not a shape MxNxK or N\n", arg);
    return TG_ARGS_REPORTED;
}

/* Each line of text, indented. */
static void print_indented(const char *text)
{
    for (const char *line = text; *line;) {
        const size_t length = strcspn(line, "\n");
        printf("  %.*s\n", (int)length, line);
        line += length + (line[length] == '\n');
    }
}

int tg_explain_main(int argc, char **argv)
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
        /* The planner's choice and its reasons through the public API: this machine's GPU
         * (compute capability 0), else the named model's. */
        const int gpu = tg_backend_available(TG_BACKEND_CUDA);
        const gpu_model *model = &kGpuModels[model_index];
        const char *where = gpu ? "this GPU" : model->description;
        const char *gpu_algo = NULL;
        int split = 1;
        char why[2048];
        if (tg_explain_gpu(h, gpu ? 0 : model->compute_capability, model->sm_count, layout, ta,
                           tb, m, n, k, lda, ldb, ldc, &gpu_algo, &split, why,
                           sizeof why) == TG_SUCCESS) {
            printf("with device operands on %s%s, the planner would run %s%s%s:\n", where,
                   gpu ? "" : " (no GPU here: the model of one)", gpu_algo,
                   split > 1 ? " with split-K" : "", strcmp(algo, "auto") ? " (forced)" : "");
            print_indented(why);
            chosen = gpu_algo;
        } else {
            printf("on %s, %s\n", where,
                   tg_algo_count() == 0 ? "nothing: this build has no CUDA rungs"
                                        : tg_last_error(h));
            chosen = NULL;
        }
    }
    if (chosen && strcmp(chosen, "cpu") && strcmp(chosen, "none"))
        print_roofline(m, n, k, chosen, tg_get_math(h));
    tg_destroy(h);
    return 0;
}
