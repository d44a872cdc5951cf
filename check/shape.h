/*
 * The one MxNxK parser of the command-line tool (bench, run, verify, explain, simulate).
 */
#ifndef TG_TOOLS_SHAPE_H
#define TG_TOOLS_SHAPE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Parses "MxNxK" (x or X), each a non-negative decimal integer that fits in int64; a single
 * "N" means NxNxN when allow_cube is set.  Returns 0 on success, -1 otherwise (the outputs are
 * then unspecified).  Callers that need positive sizes check that themselves. */
int tg_parse_shape_ex(const char *text, long long *m, long long *n, long long *k,
                      int allow_cube);

/* "MxNxK" only: tg_parse_shape_ex(text, m, n, k, 0). */
int tg_parse_shape(const char *text, long long *m, long long *n, long long *k);

#ifdef __cplusplus
}
#endif

#endif
