/*
 * The `tilegemm verify` command line that reruns one checked case, which the CLI and the tests
 * print on failure.  It lives with the CLI, whose options it spells; the checking library
 * (check/) knows nothing of the command line.
 */
#ifndef TG_RERUN_H
#define TG_RERUN_H

#include <stdint.h>

#include "check.h"

void tg_case_command(const tg_case *c, const char *algo, uint64_t seed, char *buf, int size);

#endif
