/* Sampled float64 check; see sampled.h. */
#include "sampled.h"

#include <float.h>
#include <math.h>

#include "rng.h"

/* op(X)(r, c) of an operand stored with this layout and leading dimension. */
static double op_element(const float *X, tg_layout layout, tg_op op, int64_t ld, int64_t r,
                         int64_t c)
{
    const int rows_along_memory = (layout == TG_ROW_MAJOR) != (op == TG_TRANS);
    return rows_along_memory ? X[r * ld + c] : X[c * ld + r];
}

static int64_t c_offset(const tg_dense_gemm *g, int64_t i, int64_t j)
{
    return g->layout == TG_ROW_MAJOR ? i * g->ldc + j : j * g->ldc + i;
}

void tg_sample_error(const tg_dense_gemm *g, const float *C, int64_t samples, uint64_t seed,
                     tg_sampled_error *out)
{
    out->worst_scaled = out->rms = 0.0;
    out->samples = 0;
    if (g->m <= 0 || g->n <= 0)
        return;
    const double total = (double)g->m * (double)g->n;
    const int all = total <= (double)samples;
    const int64_t count = all ? (int64_t)total : samples;
    const double unit = (double)(g->k + 2) * FLT_EPSILON;
    double sum_sq = 0.0;
    for (int64_t s = 0; s < count; ++s) {
        int64_t i, j;
        if (all) {
            i = s / g->n, j = s % g->n;
        } else {
            i = (int64_t)(tg_splitmix64(&seed) % (uint64_t)g->m);
            j = (int64_t)(tg_splitmix64(&seed) % (uint64_t)g->n);
        }
        double ref = 0.0, bound = 0.0;
        if (g->alpha != 0.0f) {
            for (int64_t p = 0; p < g->k; ++p) {
                const double prod = op_element(g->A, g->layout, g->transa, g->lda, i, p) *
                                    op_element(g->B, g->layout, g->transb, g->ldb, p, j);
                ref += prod;
                bound += fabs(prod);
            }
            ref *= g->alpha;
            bound *= fabs((double)g->alpha);
        }
        if (g->beta != 0.0f) {
            const double old = g->C_in[c_offset(g, i, j)];
            ref += (double)g->beta * old;
            bound += fabs((double)g->beta * old);
        }
        if (bound < FLT_MIN)
            bound = FLT_MIN;
        const double got = C[c_offset(g, i, j)];
        if (!isfinite(got) && isfinite(ref)) {
            out->worst_scaled = out->rms = INFINITY;
            out->samples = s + 1;
            return;
        }
        const double relative = got == ref ? 0.0 : fabs(got - ref) / bound;
        if (relative / unit > out->worst_scaled)
            out->worst_scaled = relative / unit;
        sum_sq += relative * relative;
    }
    out->rms = sqrt(sum_sq / (double)count);
    out->samples = count;
}
