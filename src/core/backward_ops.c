// backward_ops.c — the chain rule of each kind of stage, one function a kind: the
// derivatives written out by hand (backward.h). The matrix products sum in float as torch's
// do; a norm's and a softmax row's reductions in double, rounded once.
#include "backward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"

size_t backward_linear_tmp(int n, int in, int out)
{
    const size_t dx = (size_t)n * in, dw = (size_t)n * out + (size_t)out * in;
    return dx > dw ? dx : dw;
}

void backward_transpose(float *dst, const float *src, int rows, int cols)
{
    enum { T = 16 }; // (tiles of 16 × 16: both sides stay in cache)
    for (int r0 = 0; r0 < rows; r0 += T)
        for (int c0 = 0; c0 < cols; c0 += T)
            for (int r = r0; r < rows && r < r0 + T; r++)
                for (int c = c0; c < cols && c < c0 + T; c++) dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
}

void backward_add(float *dst, const float *src, size_t n)
{
    for (size_t k = 0; k < n; k++) dst[k] += src[k];
}

typedef float Vec4 __attribute__((vector_size(4 * sizeof(float))));

// Rows of c += A·b with n = 4·NV columns (NV a constant after inlining: the sums stay in
// registers, 4 columns to a vector); the same products and sums in the same order as the loop.
static inline __attribute__((always_inline)) void matmul_rows4(float *c, const float *a, size_t rs, size_t cs,
                                                               const float *b, int m, int k, const int NV)
{
    for (int i = 0; i < m; i++) {
        Vec4 acc[8] = {{0}};
        for (int p = 0; p < k; p++) {
            const float ap = a[(size_t)i * rs + (size_t)p * cs];
            const Vec4 av = {ap, ap, ap, ap};
            for (int v = 0; v < NV; v++) {
                Vec4 bv;
                memcpy(&bv, b + (size_t)p * 4 * NV + 4 * v, sizeof bv);
                acc[v] += av * bv;
            }
        }
        for (int v = 0; v < NV; v++) {
            Vec4 cv;
            memcpy(&cv, c + (size_t)i * 4 * NV + 4 * v, sizeof cv);
            cv += acc[v];
            memcpy(c + (size_t)i * 4 * NV + 4 * v, &cv, sizeof cv);
        }
    }
}

void backward_matmul_add(float *c, const float *a, size_t rs, size_t cs, const float *b, int m, int k, int n,
                         float *acc)
{
    switch (n % 4 == 0 ? n / 4 : 0) { // (an attention head's widths: d_k, and short rows of keys)
    case 1: matmul_rows4(c, a, rs, cs, b, m, k, 1); return;
    case 2: matmul_rows4(c, a, rs, cs, b, m, k, 2); return;
    case 3: matmul_rows4(c, a, rs, cs, b, m, k, 3); return;
    case 4: matmul_rows4(c, a, rs, cs, b, m, k, 4); return;
    case 5: matmul_rows4(c, a, rs, cs, b, m, k, 5); return;
    case 6: matmul_rows4(c, a, rs, cs, b, m, k, 6); return;
    case 7: matmul_rows4(c, a, rs, cs, b, m, k, 7); return;
    case 8: matmul_rows4(c, a, rs, cs, b, m, k, 8); return;
    default: break;
    }
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) acc[j] = 0.0f;
        for (int p = 0; p < k; p++) { // (a row of b at a time: the n sums side by side, each in p's order)
            const float ap = a[(size_t)i * rs + (size_t)p * cs], *bp = b + (size_t)p * n;
            for (int j = 0; j < n; j++) acc[j] += ap * bp[j];
        }
        float *ci = c + (size_t)i * n;
        for (int j = 0; j < n; j++) ci[j] += acc[j];
    }
}

void backward_linear(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w, int n,
                     int in, int out, float *tmp)
{
    if (dx) { // dx += dy·W: (n, out)·(out, in), each sum over o in order, then added
        tensor_matmul(tmp, dy, w, n, out, in);
        backward_add(dx, tmp, (size_t)n * in);
    }
    if (db)
        for (int r = 0; r < n; r++) // (the rows summed in turn, as dW's)
            for (int o = 0; o < out; o++) db[o] += dy[(size_t)r * out + o];
    if (dw) { // dW += dyᵀ·x: (out, n)·(n, in), each sum over the rows in turn (float, the batch's order)
        float *dyt = tmp, *prod = tmp + (size_t)n * out;
        backward_transpose(dyt, dy, n, out);
        tensor_matmul(prod, dyt, x, out, n, in);
        backward_add(dw, prod, (size_t)out * in);
    }
}

void backward_norm(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x, const float *gamma,
                   int rows, int C, float eps, bool rms)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * C, *g = dy + (size_t)r * C;
        double mean = 0.0, ms = 0.0;
        for (int j = 0; j < C; j++) mean += (double)xr[j];
        mean = rms ? 0.0 : mean / C;
        for (int j = 0; j < C; j++) ms += ((double)xr[j] - mean) * ((double)xr[j] - mean);
        const double rstd = 1.0 / sqrt(ms / C + (double)eps);
        double m1 = 0.0, m2 = 0.0; // mean(dn), mean(dn·x̂), with x̂ = (x − mean)·rstd and dn = dy·γ
        for (int j = 0; j < C; j++) {
            const double xhat = ((double)xr[j] - mean) * rstd, dn = (double)g[j] * (double)(gamma ? gamma[j] : 1.0f);
            m1 += dn, m2 += dn * xhat;
            if (dgamma) dgamma[j] += (float)((double)g[j] * xhat);
            if (dbeta) dbeta[j] += g[j];
        }
        m1 = rms ? 0.0 : m1 / C, m2 /= C;
        // LayerNorm: dx = rstd·(dn − mean(dn) − x̂·mean(dn·x̂)); RMSNorm the same without the mean
        float *d = dx + (size_t)r * C;
        for (int j = 0; j < C; j++) {
            const double xhat = ((double)xr[j] - mean) * rstd, dn = (double)g[j] * (double)(gamma ? gamma[j] : 1.0f);
            d[j] += (float)(rstd * (dn - m1 - xhat * m2));
        }
    }
}

void backward_softmax(float *ds, const float *da, const float *a, int rows, int n, float *sink)
{
    double dsink = 0.0;
    for (int r = 0; r < rows; r++) {
        const float *ar = a + (size_t)r * n, *gr = da + (size_t)r * n;
        double dot = 0.0, sum = 0.0; // rowsum(da ⊙ a): the Jacobian's rank-one term
        for (int j = 0; j < n; j++) dot += (double)gr[j] * (double)ar[j], sum += (double)ar[j];
        float *d = ds + (size_t)r * n;
        for (int j = 0; j < n; j++) d[j] = (float)((double)ar[j] * ((double)gr[j] - dot));
        if (sink) dsink -= (1.0 - sum) * dot;
    }
    if (sink) *sink += (float)dsink;
}

float backward_activation(int act, float uf)
{
    const double u = uf;
    switch (act) {
    case FFN_RELU: return uf > 0.0f ? 1.0f : 0.0f;
    case FFN_GELU: // Φ(u) + u·φ(u)
        return (float)(0.5 * (1.0 + erf(u * 0.70710678118654752440)) +
                       u * exp(-0.5 * u * u) * 0.39894228040143267794);
    case FFN_GELU_TANH: {
        const double k = 0.79788456080286535588, t = tanh(k * (u + 0.044715 * u * u * u));
        return (float)(0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * u * u));
    }
    default: { // silu: σ(u)·(1 + u·(1 − σ(u)))
        const double s = 1.0 / (1.0 + exp(-u));
        return (float)(s * (1.0 + u * (1.0 - s)));
    }
    }
}
