/*
 * The handle contract of tilegemm.h: a handle passed to tg_destroy is dead.  A second
 * tg_destroy, or any other call with it, returns TG_ERROR_INVALID_HANDLE and touches nothing
 * (no double free, no use of freed memory: this test runs under ASan too), as long as fewer than
 * TG_RETIRED_HANDLES handles have been destroyed since.  NULL is refused as before.
 */
#include "testing.h"

enum { kN = 4 };

static int is_invalid_handle(tg_status s, const tg_handle *h)
{
    return s == TG_ERROR_INVALID_HANDLE && strstr(tg_last_error(h), "destroyed") != NULL;
}

static void test_second_destroy(void)
{
    tg_handle *h;
    EXPECT(tg_create(&h) == TG_SUCCESS, "tg_create: %s", tg_last_error(NULL));
    EXPECT(tg_destroy(h) == TG_SUCCESS, "first tg_destroy");
    const tg_status s = tg_destroy(h);
    EXPECT(is_invalid_handle(s, NULL), "second tg_destroy: status %d (%s)", s,
           tg_last_error(NULL));
    EXPECT(tg_last_error_arg(h) == 1, "second tg_destroy: position %d", tg_last_error_arg(h));
    EXPECT(tg_destroy(NULL) == TG_ERROR_INVALID_HANDLE, "tg_destroy(NULL)");
}

static void test_use_after_destroy(void)
{
    float A[kN * kN], B[kN * kN], C[kN * kN], keep[kN * kN];
    for (int i = 0; i < kN * kN; ++i)
        A[i] = (float)i, B[i] = 1.0f, C[i] = keep[i] = -7.0f;
    tg_handle *h;
    EXPECT(tg_create(&h) == TG_SUCCESS, "tg_create: %s", tg_last_error(NULL));
    EXPECT(tg_set_backend(h, TG_BACKEND_CPU) == TG_SUCCESS, "tg_set_backend");
    EXPECT(tg_set_algo(h, "auto") == TG_SUCCESS, "tg_set_algo");
    tg_destroy(h);

    tg_status s = tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kN, kN, kN, 1.0f, A, kN,
                           B, kN, 0.0f, C, kN);
    EXPECT(is_invalid_handle(s, h), "tg_sgemm after tg_destroy: status %d (%s)", s,
           tg_last_error(h));
    EXPECT(memcmp(C, keep, sizeof C) == 0, "tg_sgemm after tg_destroy wrote C");
    s = tg_sgemm_strided_batched(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kN, kN, kN, 1.0f, A,
                                 kN, 0, B, kN, 0, 0.0f, C, kN, 0, 1);
    EXPECT(is_invalid_handle(s, h), "batched call after tg_destroy: status %d", s);
    EXPECT(is_invalid_handle(tg_set_backend(h, TG_BACKEND_CPU), h), "tg_set_backend");
    EXPECT(is_invalid_handle(tg_set_algo(h, "auto"), h), "tg_set_algo");
    EXPECT(is_invalid_handle(tg_set_math(h, TG_MATH_FP32), h), "tg_set_math");
    EXPECT(is_invalid_handle(tg_set_split_k(h, 1), h), "tg_set_split_k");
    EXPECT(is_invalid_handle(tg_set_stream(h, NULL), h), "tg_set_stream");
    EXPECT(is_invalid_handle(tg_synchronize(h), h), "tg_synchronize");
    char buf[256];
    EXPECT(is_invalid_handle(tg_explain(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kN, kN, kN,
                                        NULL, kN, NULL, kN, NULL, kN, buf, sizeof buf),
                             h),
           "tg_explain");
    const char *algo;
    int split;
    EXPECT(is_invalid_handle(tg_choose_algo(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, kN, kN, kN,
                                            kN, kN, kN, &algo, &split),
                             h),
           "tg_choose_algo");
    /* The getters answer as for NULL. */
    EXPECT(strcmp(tg_get_algo(h), "auto") == 0, "tg_get_algo: %s", tg_get_algo(h));
    EXPECT(strcmp(tg_last_algo(h), "none") == 0, "tg_last_algo: %s", tg_last_algo(h));
    EXPECT(strcmp(tg_explained_algo(h), "none") == 0, "tg_explained_algo");
    EXPECT(tg_get_backend(h) == TG_BACKEND_AUTO, "tg_get_backend");
    EXPECT(tg_get_math(h) == TG_MATH_FP32, "tg_get_math");
    EXPECT(tg_get_stream(h) == NULL, "tg_get_stream");
}

/* Handles made and destroyed around each other: the live ones keep working, every dead one is
 * refused, however many there are up to the documented number. */
static void test_many(void)
{
    enum { kCount = TG_RETIRED_HANDLES };
    static tg_handle *dead[kCount];
    tg_handle *live;
    EXPECT(tg_create(&live) == TG_SUCCESS, "tg_create");
    tg_set_backend(live, TG_BACKEND_CPU);
    for (int i = 0; i < kCount; ++i) {
        EXPECT(tg_create(&dead[i]) == TG_SUCCESS, "tg_create %d", i);
        EXPECT(tg_destroy(dead[i]) == TG_SUCCESS, "tg_destroy %d", i);
    }
    int refused = 0;
    for (int i = 0; i < kCount; ++i)
        refused += tg_destroy(dead[i]) == TG_ERROR_INVALID_HANDLE;
    EXPECT(refused == kCount, "%d of %d dead handles refused by tg_destroy", refused, kCount);
    float A[1] = {2.0f}, B[1] = {3.0f}, C[1] = {0.0f};
    const tg_status s = tg_sgemm(live, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 1, 1, 1, 1.0f, A,
                                 1, B, 1, 0.0f, C, 1);
    EXPECT(s == TG_SUCCESS && C[0] == 6.0f, "live handle among dead ones: status %d, C %g", s,
           (double)C[0]);
    EXPECT(tg_destroy(live) == TG_SUCCESS, "tg_destroy of the live one");
}

int main(void)
{
    test_second_destroy();
    test_use_after_destroy();
    test_many();
    return tg_test_result("test_handles");
}
