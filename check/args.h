/*
 * The command line of every subcommand (the CLI's in cli/, the benchmark's in bench/), parsed
 * one way: a table of options, each with the function that reads its value, and the arguments
 * that are not options handed to the subcommand.  Values are read whole and strictly: "12x" is not a number, "NN," is not a
 * transpose, an empty string is no name.
 *
 *   static const tg_option options[] = {
 *       {"--layout", tg_arg_layout, &layout, "row or col"},
 *       {"--quick", NULL, &quick, NULL},          (a flag: sets the int to 1)
 *       {NULL}};
 *   const int done = tg_args_parse("explain", argc, argv, options, take_shape, &shape, usage);
 *   if (done >= 0) return done;
 *
 * "--name VALUE" and "--name=VALUE" are the same; "--help" and "-h" print the usage.
 */
#ifndef TG_TOOLS_ARGS_H
#define TG_TOOLS_ARGS_H

#include <stdint.h>
#include <stdio.h>

#include "tilegemm.h"

typedef struct tg_option {
    const char *name;                        /* "--layout" */
    int (*parse)(const char *value, void *out); /* 0 when value is good; NULL: a flag */
    void *out;                               /* where parse writes; for a flag an int set to 1 */
    const char *expects;                     /* what the value must be, for the error message */
} tg_option;

/* What positional returns for an argument it refused after printing why. */
#define TG_ARGS_REPORTED (-2)

/* Parses argv[1 .. argc - 1] against options (ended by a NULL name; NULL: none).  An argument
 * that is not an option goes to positional(arg, ctx), which returns 0 when it takes it, -1
 * when it does not, TG_ARGS_REPORTED when it refused it and said why (NULL: none is taken).  Returns -1 when the subcommand should go on, else its exit code: 0 after printing
 * the usage to stdout for --help, 2 after printing an error ("tilegemm CMD: ...") to stderr. */
int tg_args_parse(const char *cmd, int argc, char **argv, const tg_option *options,
                  int (*positional)(const char *arg, void *ctx), void *ctx,
                  void (*usage)(FILE *out));

/* Value readers, for tg_option.parse.  Each returns 0 and writes *out on a good value, -1
 * otherwise, writing nothing. */
int tg_arg_name(const char *value, void *out);   /* const char *: any non-empty text */
int tg_arg_u64(const char *value, void *out);    /* uint64_t: decimal or 0x hexadecimal */
int tg_arg_float(const char *value, void *out);  /* float: finite in single precision */
int tg_arg_layout(const char *value, void *out); /* tg_layout: row or col */
int tg_arg_trans(const char *value, void *out);  /* tg_op[2]: NN, NT, TN or TT */
int tg_arg_math(const char *value, void *out);   /* int: fp32, strict or tf32 (a tg_math) */

/* An integer in [min, max], written to i64 or i32 (whichever is not NULL). */
typedef struct tg_int_arg {
    int64_t min, max;
    int64_t *i64;
    int *i32;
} tg_int_arg;
int tg_arg_int(const char *value, void *out); /* out: a tg_int_arg */

/* One of a list of names, its index written to *index. */
typedef struct tg_choice_arg {
    const char *const *names; /* ended by NULL */
    int *index;
} tg_choice_arg;
int tg_arg_choice(const char *value, void *out); /* out: a tg_choice_arg */

/* A finite single-precision float read whole from text (strtof's syntax), or -1. */
int tg_parse_finite_float(const char *text, float *out);

#endif
