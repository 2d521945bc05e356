// backward_ops.c — the chain rule of each kind of stage, one function a kind: the
// derivatives written out by hand (backward.h). The matrix products sum in float as torch's
// do; a norm's and a softmax row's reductions in double, rounded once.
#include "backward.h"

#include <math.h>
#include <stdlib.h>

void backward_linear(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w, int n,
                     int in, int out)
{
    for (int r = 0; r < n; r++) {
        const float *g = dy + (size_t)r * out, *xr = x + (size_t)r * in;
        if (dx) { // dx[r, i] += Σ_o dy[r, o]·W[o, i], W's rows in turn (contiguous: vectorised)
            float *d = dx + (size_t)r * in;
            for (int o = 0; o < out; o++) {
                const float go = g[o], *wo = w + (size_t)o * in;
                if (go == 0.0f) continue;
                for (int i = 0; i < in; i++) d[i] += go * wo[i];
            }
        }
        if (db)
            for (int o = 0; o < out; o++) db[o] += g[o];
        if (dw) // dW[o, i] += dy[r, o]·x[r, i] (the rows summed in turn: float, as the batch's order)
            for (int o = 0; o < out; o++) {
                if (g[o] == 0.0f) continue;
                float *wo = dw + (size_t)o * in;
                for (int i = 0; i < in; i++) wo[i] += g[o] * xr[i];
            }
    }
}

bool backward_norm(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x, const float *gamma,
                   int rows, int C, float eps, bool rms)
{
    double *xhat = malloc((size_t)C * sizeof *xhat), *dn = malloc((size_t)C * sizeof *dn);
    if (!xhat || !dn) {
        free(xhat), free(dn);
        return false;
    }
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * C, *g = dy + (size_t)r * C;
        double mean = 0.0, ms = 0.0;
        for (int j = 0; j < C; j++) mean += (double)xr[j];
        mean = rms ? 0.0 : mean / C;
        for (int j = 0; j < C; j++) ms += ((double)xr[j] - mean) * ((double)xr[j] - mean);
        const double rstd = 1.0 / sqrt(ms / C + (double)eps);
        double m1 = 0.0, m2 = 0.0; // mean(dn), mean(dn·x̂)
        for (int j = 0; j < C; j++) {
            xhat[j] = ((double)xr[j] - mean) * rstd;
            dn[j] = (double)g[j] * (double)(gamma ? gamma[j] : 1.0f);
            m1 += dn[j], m2 += dn[j] * xhat[j];
            if (dgamma) dgamma[j] += (float)((double)g[j] * xhat[j]);
            if (dbeta) dbeta[j] += g[j];
        }
        m1 = rms ? 0.0 : m1 / C, m2 /= C;
        // LayerNorm: dx = rstd·(dn − mean(dn) − x̂·mean(dn·x̂)); RMSNorm the same without the mean
        float *d = dx + (size_t)r * C;
        for (int j = 0; j < C; j++) d[j] += (float)(rstd * (dn[j] - m1 - xhat[j] * m2));
    }
    free(xhat), free(dn);
    return true;
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
