/*
 * How a host operand travels to the device: as lines of contiguous floats, packed on arrival.
 * Pure arithmetic, kept apart from the CUDA backend so the CPU tests can check every case the
 * backend's copies will meet (test_staging.c replays them with memcpy).
 */
#ifndef TG_STAGING_H
#define TG_STAGING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A strided view (rows x cols, element (r, c) at r * rs + c * cs) as `count` lines of `length`
 * contiguous floats, `pitch` apart.  One of the two strides of a view built from a leading
 * dimension is 1, and that direction is the line; when both are 1 (ld = 1) the view is a
 * single row or column, one line whatever its orientation, and pitch is its length.
 */
typedef struct tg_lines {
    int along_rows; /* each line is a row of the view */
    int64_t count, length, pitch;
} tg_lines;

tg_lines tg_lines_of(int64_t rows, int64_t cols, int64_t rs, int64_t cs);

/* Strides of the same view once packed: lines `length` apart. */
void tg_packed_strides(const tg_lines *lines, int64_t *rs, int64_t *cs);

/* 1 when `items` items of `count` lines of `length` floats, pitch and stride apart on each
 * side, are one contiguous block on both sides and move in one copy. */
int tg_copy_is_one_piece(int64_t items, int64_t count, int64_t length, int64_t dst_pitch,
                         int64_t dst_stride, int64_t src_pitch, int64_t src_stride);

#ifdef __cplusplus
}
#endif

#endif
