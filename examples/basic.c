/* The smallest complete use of tilegemm: C = A * B for 2x3 times 3x2, row-major. */
#include <stdio.h>

#include "tilegemm.h"

int main(void)
{
    const float A[6] = {1, 2, 3, 4, 5, 6};       /* 2 x 3 */
    const float B[6] = {7, 8, 9, 10, 11, 12};    /* 3 x 2 */
    float C[4];                                  /* 2 x 2 */
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS)
        return fprintf(stderr, "%s\n", tg_last_error(NULL)), 1;
    tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 2, 2, 3, 1.0f, A, 3, B, 2,
                           0.0f, C, 2);
    if (s != TG_SUCCESS)
        fprintf(stderr, "tg_sgemm: %s\n", tg_last_error(h));
    else
        printf("%g %g\n%g %g\n", C[0], C[1], C[2], C[3]); /* 58 64 / 139 154 */
    tg_destroy(h);
    return s != TG_SUCCESS;
}
