/* The tests' one assertion macro: counts failures, reports the line, keeps going. */
#ifndef TG_TESTING_H
#define TG_TESTING_H

#include <stdio.h>

static int tg_test_failures;

#define EXPECT(cond, ...)                                                                        \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            ++tg_test_failures;                                                                  \
            fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond);                  \
            fprintf(stderr, __VA_ARGS__);                                                        \
            fputc('\n', stderr);                                                                 \
        }                                                                                        \
    } while (0)

/* Exit code for CTest: 0 passed, 1 failed. */
static inline int tg_test_result(const char *name)
{
    if (tg_test_failures)
        fprintf(stderr, "%s: %d failure(s)\n", name, tg_test_failures);
    else
        printf("%s: all passed\n", name);
    return tg_test_failures ? 1 : 0;
}

/* CTest's SKIP_RETURN_CODE: the test could not run here, which is not a pass. */
#define TG_TEST_SKIP 77

#endif
