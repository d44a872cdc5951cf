/*
 * tilegemm: the command-line tool.
 *   info      backends, the GPU and its compute capability, SMs, memory, library version
 *   verify    every rung against the float64 reference (tools/verify.c)
 *   bench     time rungs, auto and cuBLAS on the same data (bench/bench.c); `run` is an alias
 *   simulate  the tiled algorithm walked through by hand, with its load counts (tools/simulate.c)
 *   explain   the plan tg_sgemm would follow for a shape, and why
 *   algos     the rungs this build has
 * Like the tests, and unlike the library, the tool prints and exits on errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "shape.h"
#include "simulate.h"
#include "tilegemm.h"
#include "verify.h"

#ifdef TG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static int usage(FILE *out)
{
    fprintf(out,
            "usage: tilegemm <command> [options]\n"
            "  info                       backends, GPU, library version\n"
            "  verify [--quick]           every rung against the float64 reference\n"
            "  bench [MxNxK ...]          time rungs and cuBLAS (see: tilegemm bench --help)\n"
            "  run MxNxK --algo NAME      time one rung against cuBLAS\n"
            "  simulate [MxNxK] [--tile T] the tiled algorithm, step by step\n"
            "  explain MxNxK [--layout row|col] [--trans NN|NT|TN|TT]\n"
            "                             the plan for a shape and why\n"
            "  algos                      the rungs of this build\n");
    return out == stderr ? 2 : 0;
}

static int cmd_info(void)
{
    printf("tilegemm %s\n", tg_version());
    printf("backends: cpu (%ld hardware threads)", sysconf(_SC_NPROCESSORS_ONLN));
#ifdef TG_HAVE_CUDA
    printf(", cuda (built in)\n");
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        printf("GPU: none found (%s): the CPU backend runs everything\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "no device");
        return 0;
    }
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
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
#else
    printf("\nGPU: this build has no CUDA backend (nvcc was not found at configure time)\n");
#endif
    return 0;
}

static int cmd_algos(void)
{
    printf("%-14s %4s %-6s %-4s  %s\n", "name", "rung", "arith", "auto", "summary");
    printf("%-14s %4s %-6s %-4s  %s\n", "auto", "-", "-", "-",
           "picks per shape and math mode (see tilegemm explain)");
    for (int i = 0; i < tg_algo_count(); ++i) {
        tg_algo_info a;
        tg_algo_info_get(i, &a);
        printf("%-14s %4d %-6s %-4s  %s\n", a.name, a.level, tg_arith_name(a.arith),
               a.in_auto ? "yes" : "no", a.summary);
    }
    if (tg_algo_count() == 0)
        printf("(this build has no CUDA rungs)\n");
    return 0;
}

static int cmd_explain(int argc, char **argv)
{
    long long m = -1, n = -1, k = -1;
    tg_layout layout = TG_ROW_MAJOR;
    tg_op ta = TG_NO_TRANS, tb = TG_NO_TRANS;
    const char *algo = "auto";
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--layout") && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "row") && strcmp(v, "col"))
                return fprintf(stderr, "explain: --layout %s is not row or col\n", v), 2;
            layout = v[0] == 'r' ? TG_ROW_MAJOR : TG_COL_MAJOR;
        } else if (!strcmp(argv[i], "--trans") && i + 1 < argc) {
            const char *v = argv[++i];
            if (strlen(v) != 2 || !strchr("NT", v[0]) || !strchr("NT", v[1]))
                return fprintf(stderr, "explain: --trans %s is not NN, NT, TN or TT\n", v), 2;
            ta = v[0] == 'T' ? TG_TRANS : TG_NO_TRANS;
            tb = v[1] == 'T' ? TG_TRANS : TG_NO_TRANS;
        } else if (!strcmp(argv[i], "--algo") && i + 1 < argc) {
            algo = argv[++i];
        } else if (tg_parse_shape(argv[i], &m, &n, &k) != 0) {
            return fprintf(stderr, "explain: %s is not a shape MxNxK or a known option\n",
                           argv[i]),
                   2;
        }
    }
    if (m < 0)
        return fprintf(stderr, "usage: tilegemm explain MxNxK [--layout row|col] "
                               "[--trans NN|NT|TN|TT] [--algo NAME]\n"),
               2;
    /* Tightest legal leading dimensions for this layout and these transposes. */
    const int row = layout == TG_ROW_MAJOR;
    const int64_t lda = tg_min_ld(layout, ta, m, k), ldb = tg_min_ld(layout, tb, k, n);
    const int64_t ldc = tg_min_ld(layout, TG_NO_TRANS, m, n);
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS)
        return fprintf(stderr, "explain: %s\n", tg_last_error(NULL)), 1;
    char plan[2048];
    tg_status s = tg_set_algo(h, algo);
    if (s == TG_SUCCESS)
        s = tg_explain(h, layout, ta, tb, m, n, k, NULL, lda, NULL, ldb, NULL, ldc, plan,
                       sizeof plan);
    if (s != TG_SUCCESS) {
        fprintf(stderr, "explain: %s: %s\n", tg_status_string(s), tg_last_error(h));
        tg_destroy(h);
        return 1;
    }
    printf("%lldx%lldx%lld, %s-major, %c%c, host operands:\n%s", m, n, k, row ? "row" : "column",
           ta == TG_TRANS ? 'T' : 'N', tb == TG_TRANS ? 'T' : 'N', plan);
    tg_destroy(h);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info")) return cmd_info();
    if (!strcmp(cmd, "verify")) return tg_verify_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench") || !strcmp(cmd, "run")) return tg_bench_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "simulate")) return tg_simulate_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "explain")) return cmd_explain(argc - 1, argv + 1);
    if (!strcmp(cmd, "algos")) return cmd_algos();
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) return usage(stdout);
    fprintf(stderr, "tilegemm: unknown command \"%s\"\n", cmd);
    return usage(stderr);
}
