/*
 * The roofline a call's speed is measured against: what `tilegemm info` and `tilegemm explain`
 * print and what `tilegemm bench` reports each result's speed-of-light fraction by.  Shared by
 * the CLI (cli/) and the benchmark (bench/), which do not include each other.
 */
#ifndef TG_TOOLS_ROOFLINE_H
#define TG_TOOLS_ROOFLINE_H

#include "tilegemm.h" /* tg_math, tg_arith */

#ifdef __cplusplus
extern "C" {
#endif

/* The device-to-device copy rate (GB/s, bytes read plus written), the FFMA peak from the clock,
 * and the tensor-core ceilings known for the GPU (TFLOP/s); NAN where none is known. */
typedef struct tg_roofline {
    double copy_gbs, ffma_tflops, x3tf32_tflops, tf32_tflops;
} tg_roofline;

/* The roofline of the current GPU, its copy rate measured now (2 x 256 MiB, the median of 9
 * copies); all NAN without a GPU or in a build without CUDA. */
tg_roofline tg_measure_roofline(void);

/* The tensor-core ceilings known for compute capability major.minor, into roof (left as they
 * are where none is known): on the H100 (9.0), 3xTF32 135 TFLOP/s, at three TF32 products
 * (405) per product. */
void tg_tensor_ceilings(int major, int minor, tg_roofline *roof);

/* The peak of arithmetic `arith` on roof, TFLOP/s: FFMA's, or the tensor-core ceiling of
 * 3xTF32 or TF32 (NAN where the roofline has none). */
double tg_arith_peak_tflops(const tg_roofline *roof, tg_arith arith);

/* The speed of light of an m x n x k product in math mode `mode`, seconds: the longest of its
 * flops at the mode's peak (3xTF32's for fp32, TF32's for tf32, FFMA's for strict and where
 * no tensor-core ceiling is known), its compulsory bytes (A and B read, C written once) at
 * the copy rate, and a 5 us launch floor.  *compute_s, *memory_s, *peak_tflops (each may be
 * NULL) get the first two and the peak used.  NAN where the roofline lacks a figure. */
double tg_speed_of_light_s(const tg_roofline *roof, tg_math mode, double m, double n, double k,
                           double *compute_s, double *memory_s, double *peak_tflops);

#ifdef __cplusplus
}
#endif

#endif
