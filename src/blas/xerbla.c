/*
 * The BLAS error handlers, xerbla_ and cblas_xerbla, and reference CBLAS's two globals.
 *
 * Everything here is a weak definition in an object file of its own, so a program can replace
 * any of it: with the static library its strong definition simply wins (no duplicate symbol);
 * with the shared library its definition comes first in the dynamic lookup, and the shims call
 * these through the PLT, so they reach the program's version.
 *
 * The behaviour copied is that of the reference libblas as Debian ships it (LAPACK 3.11, BLAS
 * and CBLAS in one library), whose xerbla_ is CBLAS's C one, not BLAS/SRC/xerbla.f:
 *   - xerbla_ called from a Fortran-ABI call prints
 *       "Parameter 8 to routine SGEMM  was incorrect"
 *     to stderr and RETURNS (the Fortran XERBLA would print " ** On entry to SGEMM  parameter
 *     number  8 had an illegal value" and STOP; OpenBLAS prints that text and returns);
 *   - xerbla_ called while CBLAS_CallFromC is set forwards to
 *       cblas_xerbla(info + 1, "cblas_" + lower-case SRNAME, "");
 *   - cblas_xerbla maps the position back to the caller's arguments when RowMajorStrg is set
 *     (a row-major call was run as the swapped column-major one), prints
 *       "Parameter 9 to routine cblas_sgemm  was incorrect" and the message form, and exits
 *     with exit(-1) (status 255).
 * The mapping table covers every level-2/3 routine, as the reference's does: when tilegemm is
 * first on the link line or preloaded, these handlers and globals also serve the reference
 * library's other routines.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/tilegemm.h"
#include "../../include/tilegemm_cblas.h"

#include "blas_internal.h"

/* Exported under reference CBLAS's names so that a reference libblas in the same process and
 * tilegemm read and write the same two flags. */
TG_API __attribute__((weak)) int RowMajorStrg = 0;
TG_API __attribute__((weak)) int CBLAS_CallFromC = 0;

/* Set by tg_blas_report_begin (sgemm_f77.c) for the duration of a tilegemm report. */
_Thread_local tg_blas_caller tg_blas_report;

/* Where the call being reported came from: this thread's tilegemm report when one is in
 * progress (the globals may be another thread's), else the globals, as set by a reference
 * CBLAS routine whose errors these handlers also serve. */
static int called_from_c(void)
{
    return tg_blas_report.active ? tg_blas_report.from_cblas
                                 : __atomic_load_n(&CBLAS_CallFromC, __ATOMIC_RELAXED);
}

static int row_major_call(void)
{
    return tg_blas_report.active ? tg_blas_report.row_major
                                 : __atomic_load_n(&RowMajorStrg, __ATOMIC_RELAXED);
}

TG_API __attribute__((weak)) void cblas_xerbla(int info, const char *rout, const char *form, ...)
{
    if (row_major_call()) {
        /* A row-major call ran as the column-major call on the transposed problem: swap the
         * positions back to the caller's arguments. */
        if (strstr(rout, "gemm") != 0) {
            if (info == 5) info = 4;
            else if (info == 4) info = 5;
            else if (info == 11) info = 9;
            else if (info == 9) info = 11;
            /* A and B themselves: only tilegemm's NULL-pointer reports use these numbers. */
            else if (info == 10) info = 8;
            else if (info == 8) info = 10;
        } else if (strstr(rout, "symm") != 0 || strstr(rout, "hemm") != 0) {
            if (info == 5) info = 4;
            else if (info == 4) info = 5;
        } else if (strstr(rout, "trmm") != 0 || strstr(rout, "trsm") != 0) {
            if (info == 7) info = 6;
            else if (info == 6) info = 7;
        } else if (strstr(rout, "gemv") != 0) {
            if (info == 4) info = 3;
            else if (info == 3) info = 4;
        } else if (strstr(rout, "gbmv") != 0) {
            if (info == 4) info = 3;
            else if (info == 3) info = 4;
            else if (info == 6) info = 5;
            else if (info == 5) info = 6;
        } else if (strstr(rout, "ger") != 0) {
            if (info == 3) info = 2;
            else if (info == 2) info = 3;
            else if (info == 8) info = 6;
            else if (info == 6) info = 8;
        } else if ((strstr(rout, "her2") != 0 || strstr(rout, "hpr2") != 0) &&
                   strstr(rout, "her2k") == 0) {
            if (info == 8) info = 6;
            else if (info == 6) info = 8;
        }
    }
    if (info)
        fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, rout);
    va_list ap;
    va_start(ap, form);
    vfprintf(stderr, form, ap);
    va_end(ap);
    exit(-1);
}

TG_API __attribute__((weak)) void xerbla_(const char *srname, const int *info, size_t srname_len)
{
    /* The name as Fortran passed it: srname_len characters, not NUL-terminated. */
    char name[33];
    size_t len = srname_len < sizeof name - 1 ? srname_len : sizeof name - 1;
    for (size_t i = 0; i < len; ++i)
        if (srname[i] == '\0') {
            len = i;
            break;
        }
    if (called_from_c()) {
        /* "cblas_" and the first six characters lower-cased, blanks kept, as the reference. */
        char rout[6 + 7] = "cblas_";
        size_t n = len < 6 ? len : 6;
        for (size_t i = 0; i < n; ++i)
            rout[6 + i] = (char)tolower((unsigned char)srname[i]);
        rout[6 + n] = '\0';
        cblas_xerbla(*info + 1, rout, "");
        return;
    }
    memcpy(name, srname, len);
    name[len] = '\0';
    fprintf(stderr, "Parameter %d to routine %s was incorrect\n", *info, name);
}
