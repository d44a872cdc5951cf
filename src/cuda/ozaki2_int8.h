/*
 * Entry points of the Ozaki scheme II rung (kernels/k11_ozaki2.cu) beyond its registry entry,
 * for the tests that hold it to the CPU emulation of the scheme (src/ozaki/ozaki2.c).
 */
#ifndef TG_CUDA_OZAKI2_INT8_H
#define TG_CUDA_OZAKI2_INT8_H

#include <stddef.h>
#include <stdint.h>

#include "../problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device workspace of tg_oz2_int8_run for p (the rung's workspace_bytes). */
size_t tg_oz2_int8_workspace(const tg_problem *p);

/* The scheme on the device for p (device pointers, the registry's launch contract), through
 * workspace of tg_oz2_int8_workspace(p) bytes: forced_moduli as tg_oz2_gemm_emulated's (0:
 * chosen from the data).  Returns the cudaError_t of the launches. */
int tg_oz2_int8_run(const tg_problem *p, void *stream, void *workspace, int forced_moduli);

/* What the device chose for the last batch item tg_oz2_int8_run ran through workspace (for
 * p), copied back once the stream's work is done: as tg_oz2_plan's moduli, bits_a, bits_b,
 * int8_products and reduced_products (of that item).  Returns the cudaError_t of the copy. */
typedef struct tg_oz2_int8_choice {
    int moduli, bits_a, bits_b, int8_products, reduced_products;
} tg_oz2_int8_choice;
int tg_oz2_int8_chosen(const tg_problem *p, const void *workspace, void *stream,
                       tg_oz2_int8_choice *out);

/* The INT8 product alone (kernels/int8_gemm.cuh): C_z = A_z B_z for z < *active (device) of
 * `items` <= TG_OZ2_MAX_MODULI, A_z at a + z m kp, B_z at b + z n kp (rows of kp bytes, kp a
 * multiple of 16, the bytes past k zero), C_z at c + z m ldc (ldc even); reduced modulo
 * tg_oz2_moduli[z] every 2^16 of k. */
int tg_int8_gemm_run(const int8_t *a, const int8_t *b, int32_t *c, int64_t m, int64_t n,
                     int64_t kp, int items, const int *active, int64_t ldc, void *stream);

#ifdef __cplusplus
}
#endif

#endif
