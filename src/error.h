/*
 * Error recording, the bottom layer: every other file of the library reports through here.
 * A record is the sentence tg_last_error returns and the argument position tg_last_error_arg
 * returns.  Errors with no handle to live on (tg_create, a NULL handle) go to a per-thread
 * record.
 */
#ifndef TG_ERROR_H
#define TG_ERROR_H

#include "../include/tilegemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_error {
    int arg;
    char message[512];
} tg_error;

/* The calling thread's record for errors that have no handle. */
tg_error *tg_orphan_error(void);

/* Writes the message and the argument position into err (the orphan record when err is
 * NULL) and returns status. */
tg_status tg_record(tg_error *err, tg_status status, int arg, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
