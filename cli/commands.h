/*
 * The CLI's inspecting subcommands (commands.c).  Each takes argv[0] as its name and returns
 * the process exit code: 0 done, 1 a failure, 2 a usage error.
 */
#ifndef TG_CLI_COMMANDS_H
#define TG_CLI_COMMANDS_H

/* `tilegemm info`: backends, the GPU and its compute capability, SMs, memory, roofline. */
int tg_info_main(int argc, char **argv);
/* `tilegemm algos [--tsv]`: the rungs of this build. */
int tg_algos_main(int argc, char **argv);
/* `tilegemm explain MxNxK ...`: the plan tg_sgemm would follow for a shape, and why. */
int tg_explain_main(int argc, char **argv);

#endif
