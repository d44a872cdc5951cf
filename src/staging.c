/* Staging arithmetic; see staging.h. */
#include "staging.h"

tg_lines tg_lines_of(int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    tg_lines l;
    l.along_rows = cs == 1 && (rs != 1 || rows == 1);
    l.count = l.along_rows ? rows : cols;
    l.length = l.along_rows ? cols : rows;
    l.pitch = l.count == 1 ? l.length : l.along_rows ? rs : cs;
    return l;
}

void tg_packed_strides(const tg_lines *lines, int64_t *rs, int64_t *cs)
{
    *rs = lines->along_rows ? lines->length : 1;
    *cs = lines->along_rows ? 1 : lines->length;
}

int tg_copy_is_one_piece(int64_t items, int64_t count, int64_t length, int64_t dst_pitch,
                         int64_t dst_stride, int64_t src_pitch, int64_t src_stride)
{
    const int64_t item = count * length;
    return (count == 1 || (dst_pitch == length && src_pitch == length)) &&
           (items == 1 || (dst_stride == item && src_stride == item));
}
