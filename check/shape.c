/* The MxNxK parser; see shape.h. */
#include "shape.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

/* One non-negative integer at *s; advances *s past it. */
static int parse_dimension(const char **s, long long *out)
{
    if (!isdigit((unsigned char)**s))
        return -1; /* no sign, no space */
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(*s, &end, 10);
    if (errno)
        return -1;
    *out = v;
    *s = end;
    return 0;
}

int tg_parse_shape_ex(const char *text, long long *m, long long *n, long long *k, int allow_cube)
{
    if (!text)
        return -1;
    const char *s = text;
    long long *dims[3] = {m, n, k};
    if (parse_dimension(&s, m) != 0)
        return -1;
    if (*s == '\0' && allow_cube) {
        *n = *k = *m;
        return 0;
    }
    for (int i = 1; i < 3; ++i) {
        if (*s != 'x' && *s != 'X')
            return -1;
        ++s;
        if (parse_dimension(&s, dims[i]) != 0)
            return -1;
    }
    return *s == '\0' ? 0 : -1;
}

int tg_parse_shape(const char *text, long long *m, long long *n, long long *k)
{
    return tg_parse_shape_ex(text, m, n, k, 0);
}
