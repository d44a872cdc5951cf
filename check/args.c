/* The command line of every subcommand; see args.h. */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const tg_option *find(const tg_option *options, const char *name, size_t length)
{
    for (const tg_option *o = options; o && o->name; ++o)
        if (strlen(o->name) == length && strncmp(o->name, name, length) == 0)
            return o;
    return NULL;
}

int tg_args_parse(const char *cmd, int argc, char **argv, const tg_option *options,
                  int (*positional)(const char *arg, void *ctx), void *ctx,
                  void (*usage)(FILE *out))
{
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            const int taken = positional ? positional(arg, ctx) : -1;
            if (taken == 0)
                continue;
            if (taken == TG_ARGS_REPORTED)
                return 2;
            fprintf(stderr, "tilegemm %s: unexpected argument \"%s\" (see tilegemm %s --help)\n",
                    cmd, arg, cmd);
            return 2;
        }
        const char *equals = strchr(arg, '=');
        const size_t length = equals ? (size_t)(equals - arg) : strlen(arg);
        const tg_option *o = find(options, arg, length);
        if (!o) {
            fprintf(stderr, "tilegemm %s: unknown option %.*s (see tilegemm %s --help)\n", cmd,
                    (int)length, arg, cmd);
            return 2;
        }
        if (!o->parse) {
            if (equals) {
                fprintf(stderr, "tilegemm %s: %s takes no value\n", cmd, o->name);
                return 2;
            }
            *(int *)o->out = 1;
            continue;
        }
        const char *value = equals ? equals + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!value) {
            fprintf(stderr, "tilegemm %s: %s needs a value: %s\n", cmd, o->name, o->expects);
            return 2;
        }
        if (o->parse(value, o->out) != 0) {
            fprintf(stderr, "tilegemm %s: %s \"%s\": the value must be %s\n", cmd, o->name,
                    value, o->expects);
            return 2;
        }
    }
    return -1;
}

int tg_arg_name(const char *value, void *out)
{
    if (!*value)
        return -1;
    *(const char **)out = value;
    return 0;
}

int tg_arg_u64(const char *value, void *out)
{
    /* Base 10 unless "0x" says 16: strtoull's base 0 would read a leading 0 as octal, so that
     * --seed 010 ran seed 8.  Digits only after the prefix: no sign, space or second "0x". */
    const int hex = value[0] == '0' && (value[1] == 'x' || value[1] == 'X');
    const char *digits = hex ? value + 2 : value;
    if (!*digits || strspn(digits, hex ? "0123456789abcdefABCDEF" : "0123456789") !=
                        strlen(digits))
        return -1;
    char *end = NULL;
    errno = 0;
    const unsigned long long v = strtoull(digits, &end, hex ? 16 : 10);
    if (errno || *end)
        return -1;
    *(uint64_t *)out = (uint64_t)v;
    return 0;
}

int tg_parse_finite_float(const char *text, float *out)
{
    char *end = NULL;
    errno = 0;
    const float v = strtof(text, &end);
    /* ERANGE also flags underflow to a subnormal or zero, which is a value float holds */
    if (end == text || *end || !isfinite(v) || (errno == ERANGE && fabsf(v) >= 1.0f))
        return -1;
    *out = v;
    return 0;
}

int tg_arg_float(const char *value, void *out) { return tg_parse_finite_float(value, out); }

int tg_arg_layout(const char *value, void *out)
{
    if (strcmp(value, "row") && strcmp(value, "col"))
        return -1;
    *(tg_layout *)out = value[0] == 'r' ? TG_ROW_MAJOR : TG_COL_MAJOR;
    return 0;
}

int tg_arg_trans(const char *value, void *out)
{
    if (strlen(value) != 2 || !strchr("NT", value[0]) || !strchr("NT", value[1]))
        return -1;
    tg_op *ops = out;
    ops[0] = value[0] == 'T' ? TG_TRANS : TG_NO_TRANS;
    ops[1] = value[1] == 'T' ? TG_TRANS : TG_NO_TRANS;
    return 0;
}

int tg_arg_math(const char *value, void *out)
{
    const int mode = tg_math_from_name(value);
    if (mode < 0)
        return -1;
    *(int *)out = mode;
    return 0;
}

int tg_arg_int(const char *value, void *out)
{
    const tg_int_arg *a = out;
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(value, &end, 10);
    if (errno || end == value || *end || value[0] == ' ' || v < a->min || v > a->max)
        return -1;
    if (a->i64)
        *a->i64 = v;
    if (a->i32)
        *a->i32 = (int)v;
    return 0;
}

int tg_arg_choice(const char *value, void *out)
{
    const tg_choice_arg *a = out;
    for (int i = 0; a->names[i]; ++i)
        if (strcmp(value, a->names[i]) == 0) {
            *a->index = i;
            return 0;
        }
    return -1;
}
