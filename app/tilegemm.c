/*
 * tilegemm: the command-line tool's entry point, which hands each subcommand to the folder that
 * implements it.  It sits above cli/ and bench/, so that neither includes the other.
 *   info      backends, the GPU and its compute capability, SMs, memory, library version
 *   verify    every rung against the float64 reference (cli/verify.c)
 *   bench     time rungs, auto and cuBLAS on the same data (bench/bench.c); `run` is an alias
 *   simulate  the tiled algorithm walked through by hand, with its load counts (cli/simulate.c)
 *   explain   the plan tg_sgemm would follow for a shape, and why (cli/commands.c)
 *   algos     the rungs this build has (cli/commands.c)
 *   tune      fill the autotuning cache for shapes or a suite (cli/tune.c)
 * Like the tests, and unlike the library, the tool prints and exits on errors.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "commands.h"
#include "simulate.h"
#include "tilegemm.h"
#include "tune.h"
#include "verify.h"

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
            "  explain MxNxK|N [--layout row|col] [--trans NN|NT|TN|TT] [--math MODE]\n"
            "                  [--gpu h100]\n"
            "                             the plan for a shape, why, and its roofline\n"
            "  algos                      the rungs of this build\n"
            "  tune [MxNxK ...] [--suite S] [--math M] [--layout L] [--trans T]\n"
            "                             fill the autotuning cache (TILEGEMM_AUTOTUNE=1)\n"
            "  --version                  the library version\n");
    return out == stderr ? 2 : 0;
}

static int run_command(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info")) return tg_info_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "verify")) return tg_verify_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench") || !strcmp(cmd, "run")) return tg_bench_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "simulate")) return tg_simulate_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "tune")) return tg_tune_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "explain")) return tg_explain_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "algos")) return tg_algos_main(argc - 1, argv + 1);
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
