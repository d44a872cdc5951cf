/*
 * The staging arithmetic of the CUDA backend (staging.h), replayed on the CPU: every host
 * operand and C, in every orientation, with ld = 1, single rows and columns, batches with
 * shared, dense and gapped items, is moved the way backend.cu moves it (one copy, or one 2D
 * copy per item with cudaMemcpy2D's rule that the width fits both pitches) and must arrive
 * packed and exact, and come back to C touching nothing else.
 */
#include <stdlib.h>
#include <string.h>

#include "staging.h"
#include "testing.h"

/* backend.cu's copy_lines, with memcpy for the CUDA copies. */
static void copy_lines(float *dst, int64_t dst_pitch, int64_t dst_stride, const float *src,
                       int64_t src_pitch, int64_t src_stride, int64_t items, int64_t count,
                       int64_t length, const char *what)
{
    const int64_t item = count * length;
    if (tg_copy_is_one_piece(items, count, length, dst_pitch, dst_stride, src_pitch,
                             src_stride)) {
        memmove(dst, src, (size_t)(item * items) * sizeof(float));
        return;
    }
    EXPECT(length <= dst_pitch && length <= src_pitch,
           "%s: cudaMemcpy2D would refuse width %lld with pitches %lld and %lld", what,
           (long long)length, (long long)dst_pitch, (long long)src_pitch);
    for (int64_t b = 0; b < items; ++b)
        for (int64_t i = 0; i < count; ++i)
            memcpy(dst + b * dst_stride + i * dst_pitch, src + b * src_stride + i * src_pitch,
                   (size_t)length * sizeof(float));
}

/* A rows x cols view with strides (rs, cs), batch items `stride` apart, staged and compared. */
static void check_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t stride,
                          int64_t batch)
{
    char what[160];
    snprintf(what, sizeof what, "%lldx%lld rs %lld cs %lld stride %lld batch %lld",
             (long long)rows, (long long)cols, (long long)rs, (long long)cs, (long long)stride,
             (long long)batch);
    const int64_t span = (rows - 1) * rs + (cols - 1) * cs + 1 + (batch - 1) * stride;
    float *host = malloc((size_t)span * sizeof(float));
    for (int64_t e = 0; e < span; ++e)
        host[e] = (float)e;
    const tg_lines lines = tg_lines_of(rows, cols, rs, cs);
    const int64_t item = lines.count * lines.length;
    const int64_t items = stride == 0 ? 1 : batch;
    EXPECT(item == rows * cols, "%s: %lld lines of %lld for a %lld-element view", what,
           (long long)lines.count, (long long)lines.length, (long long)(rows * cols));
    float *device = malloc((size_t)(item * items) * sizeof(float));
    copy_lines(device, lines.length, item, host, lines.pitch, stride, items, lines.count,
               lines.length, what);
    int64_t prs, pcs;
    tg_packed_strides(&lines, &prs, &pcs);
    const int64_t packed_stride = stride == 0 ? 0 : item;
    int wrong = 0;
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c)
                wrong += device[b * packed_stride + r * prs + c * pcs] !=
                         host[b * stride + r * rs + c * cs];
    EXPECT(wrong == 0, "%s: %d elements differ after staging", what, wrong);
    free(host);
    free(device);
}

/* C (m x n, row-major with ldc, items stride_c apart) to packed and back. */
static void check_c(int64_t m, int64_t n, int64_t ldc, int64_t stride_c, int64_t batch)
{
    char what[160];
    snprintf(what, sizeof what, "C %lldx%lld ldc %lld stride %lld batch %lld", (long long)m,
             (long long)n, (long long)ldc, (long long)stride_c, (long long)batch);
    const int64_t span = (batch - 1) * stride_c + (m - 1) * ldc + n + 3;
    float *host = malloc((size_t)span * sizeof(float)), *before = malloc((size_t)span * 4);
    float *device = malloc((size_t)(m * n * batch) * sizeof(float));
    for (int64_t e = 0; e < span; ++e)
        host[e] = before[e] = (float)e;
    copy_lines(device, n, m * n, host, ldc, stride_c, batch, m, n, what);
    for (int64_t e = 0; e < m * n * batch; ++e)
        device[e] = -device[e] - 1.0f; /* the "kernel" */
    copy_lines(host, ldc, stride_c, device, n, m * n, batch, m, n, what);
    int wrong = 0;
    unsigned char *inside = calloc((size_t)span, 1);
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                const int64_t e = b * stride_c + i * ldc + j;
                inside[e] = 1;
                wrong += host[e] != -before[e] - 1.0f;
            }
    for (int64_t e = 0; e < span; ++e)
        wrong += !inside[e] && host[e] != before[e];
    EXPECT(wrong == 0, "%s: %d elements wrong after the round trip", what, wrong);
    free(host), free(before), free(device), free(inside);
}

int main(void)
{
    const int64_t dims[] = {1, 2, 7, 33};
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
            const int64_t rows = dims[r], cols = dims[c];
            for (int pad = 0; pad < 2; ++pad)
                for (int batch = 1; batch <= 3; batch += 2) {
                    /* along rows (ld >= cols) and along columns (ld >= rows) */
                    const int64_t ld_rows = cols + pad, ld_cols = rows + pad;
                    const int64_t item_rows = rows * ld_rows, item_cols = cols * ld_cols;
                    check_operand(rows, cols, ld_rows, 1, item_rows, batch);
                    check_operand(rows, cols, 1, ld_cols, item_cols, batch);
                    check_operand(rows, cols, ld_rows, 1, 0, batch);
                    check_operand(rows, cols, 1, ld_cols, item_cols + 5, batch);
                    check_c(rows, cols, cols + pad, rows * (cols + pad) + pad, batch);
                }
            /* ld = 1: only a single row (along rows) or a single column can have it. */
            if (rows == 1)
                check_operand(1, cols, 1, 1, cols, 2);
            if (cols == 1)
                check_operand(rows, 1, 1, 1, rows, 2);
        }
    check_c(3, 2, 4, 2, 2); /* interleaved items: item b is columns 2b..2b+1 */
    check_c(1, 5, 9, 5, 3); /* single rows packed side by side */
    return tg_test_result("test_staging");
}
