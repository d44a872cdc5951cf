#include <stdio.h>
#include <tilegemm.h>

int main(void)
{
    float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {7, 8, 9, 10, 11, 12}, C[4]; /* 2x3, 3x2, 2x2 */
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS)
        return fprintf(stderr, "%s\n", tg_last_error(NULL)), 1;
    tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 2, 2, 3, 1.0f, A, 3, B, 2,
                           0.0f, C, 2);
    if (s != TG_SUCCESS) /* a sentence naming the argument, e.g. "lda = 1 is less than k = 3 ..." */
        fprintf(stderr, "%s\n", tg_last_error(h));
    else
        printf("%g %g\n%g %g\n", C[0], C[1], C[2], C[3]); /* 58 64 / 139 154 */
    tg_destroy(h);
    return s != TG_SUCCESS;
}
