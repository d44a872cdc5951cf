/* Uses both the native API and the BLAS entry points of an installed tilegemm. */
#include <stdio.h>

#include <tilegemm.h>
#include <tilegemm_cblas.h>

int main(void)
{
    const float A[6] = {1, 2, 3, 4, 5, 6};    /* 2x3 row-major */
    const float B[6] = {7, 8, 9, 10, 11, 12}; /* 3x2 row-major */
    float C[4] = {0}, D[4] = {0};
    tg_handle *h;
    if (tg_create(&h) != TG_SUCCESS) {
        fprintf(stderr, "tg_create: %s\n", tg_last_error(NULL));
        return 1;
    }
    if (tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 2, 2, 3, 1.0f, A, 3, B, 2, 0.0f, C,
                 2) != TG_SUCCESS) {
        fprintf(stderr, "tg_sgemm: %s\n", tg_last_error(h));
        return 1;
    }
    tg_destroy(h);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 1.0f, A, 3, B, 2, 0.0f, D, 2);
    printf("tilegemm %s: %g %g %g %g\n", tg_version(), C[0], C[1], C[2], C[3]);
    for (int i = 0; i < 4; ++i)
        if (C[i] != D[i] || C[0] != 58 || C[1] != 64 || C[2] != 139 || C[3] != 154) {
            fprintf(stderr, "wrong result\n");
            return 1;
        }
    return 0;
}
