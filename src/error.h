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

/* Test-only fault injection.  When set, every allocation site of the library (host, device
 * workspace, staging) and every CUDA call checked by the backend first asks the hook, with a
 * name for the site ("host: CPU packing buffers", "device: staging buffer for A", "CUDA:
 * cudaMemcpyAsync(...)"); a non-zero answer makes the site fail as if memory had run out or
 * the call had failed.  NULL (always, outside the tests) costs one load per site. */
typedef int (*tg_fault_fn)(const char *site);
extern tg_fault_fn tg_fault_hook;
#define TG_FAULT(site) (tg_fault_hook != NULL && tg_fault_hook(site))

#ifdef __cplusplus
}
#endif

#endif
