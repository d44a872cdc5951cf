/* Error recording and the test-only fault hook; see error.h. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

tg_fault_fn tg_fault_hook = NULL;

static _Thread_local tg_error orphan_error;

tg_error *tg_orphan_error(void) { return &orphan_error; }

tg_status tg_record(tg_error *err, tg_status status, int arg, const char *fmt, ...)
{
    if (!err)
        err = &orphan_error;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->arg = arg;
    return status;
}
