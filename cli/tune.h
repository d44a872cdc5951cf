/* `tilegemm tune` (tune.c): fills the autotuning cache for shapes or a suite.  argv[0] is
 * "tune"; returns the exit code: 0 every shape tuned, 1 a failure, 2 a usage error. */
#ifndef TG_CLI_TUNE_H
#define TG_CLI_TUNE_H

int tg_tune_main(int argc, char **argv);

#endif
