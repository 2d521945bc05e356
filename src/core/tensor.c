// tensor.c — row-major float32 tensor operations (see tensor.h).
#include "tensor.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t tensor_shape_size(int rank, const int *shape, size_t max_elems)
{
    if (rank < 1 || rank > TENSOR_MAX_RANK) return 0;
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 1) return 0;
        if ((size_t)shape[i] > max_elems / n) return 0;   // n * shape[i] > max_elems
        n *= (size_t)shape[i];
    }
    return n;
}

bool tensor_init(Tensor *t, int rank, const int *shape)
{
    memset(t, 0, sizeof *t);
    size_t n = tensor_shape_size(rank, shape, SIZE_MAX / sizeof(float));
    if (n == 0) return false;
    t->data = calloc(n, sizeof(float));
    if (!t->data) return false;
    t->rank = rank;
    memcpy(t->shape, shape, (size_t)rank * sizeof(int));
    t->size = n;
    return true;
}

void tensor_free(Tensor *t)
{
    free(t->data);
    memset(t, 0, sizeof *t);
}

bool tensor_copy(Tensor *dst, const Tensor *src)
{
    if (!tensor_init(dst, src->rank, src->shape)) return false;
    memcpy(dst->data, src->data, src->size * sizeof(float));
    return true;
}

bool tensor_present(const Tensor *t) { return t->rank > 0 && t->data != NULL; }

void tensor_shape_str(const Tensor *t, char *buf, size_t n)
{
    size_t used = 0;
    used += (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < t->rank && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? ",%d" : "%d", t->shape[i]);
    if (used < n) snprintf(buf + used, n - used, ")");
}

// Matrix products keep every output's sum in index order (p = 0, 1, ..., K-1),
// exactly like a plain dot product, so results do not depend on the blocking;
// speed comes from running the independent output columns side by side, which
// the compiler vectorises without any reassociation (no -ffast-math).
enum { PANEL = 64 };   // output columns computed together

static void matmul_bt_naive(float *c, const float *a, const float *b, int m, int k, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            const float *ai = a + (size_t)i * k, *bj = b + (size_t)j * k;
            float s = 0.0f;
            for (int p = 0; p < k; p++) s += ai[p] * bj[p];
            c[(size_t)i * n + j] = s;
        }
}

void tensor_matmul_bt(float *c, const float *a, const float *b, int m, int k, int n)
{
    // c (M, N) = a (M, K) · bᵀ, b (N, K)
    if ((long)m * n * k < 4096) {   // tiny: packing costs more than it saves
        matmul_bt_naive(c, a, b, m, k, n);
        return;
    }
    float *panel = malloc((size_t)k * PANEL * sizeof(float));   // bᵀ[:, j0:j0+PANEL], (K, PANEL)
    if (!panel) {
        matmul_bt_naive(c, a, b, m, k, n);
        return;
    }
    for (int j0 = 0; j0 < n; j0 += PANEL) {
        int jn = n - j0 < PANEL ? n - j0 : PANEL;
        for (int p = 0; p < k; p++) {
            float *row = panel + (size_t)p * PANEL;
            for (int jj = 0; jj < jn; jj++) row[jj] = b[(size_t)(j0 + jj) * k + p];
            for (int jj = jn; jj < PANEL; jj++) row[jj] = 0.0f;
        }
        for (int i = 0; i < m; i++) {
            const float *ai = a + (size_t)i * k;
            float acc[PANEL] = {0};
            for (int p = 0; p < k; p++) {
                const float aip = ai[p], *row = panel + (size_t)p * PANEL;
                for (int jj = 0; jj < PANEL; jj++) acc[jj] += aip * row[jj];
            }
            memcpy(c + (size_t)i * n + j0, acc, (size_t)jn * sizeof(float));
        }
    }
    free(panel);
}

void tensor_matmul(float *c, const float *a, const float *b, int m, int k, int n)
{
    // c (M, N) = a (M, K) · b (K, N): row i accumulates a[i,p]·b[p,:] for p in order.
    for (int i = 0; i < m; i++) {
        float *ci = c + (size_t)i * n;
        for (int j = 0; j < n; j++) ci[j] = 0.0f;
        const float *ai = a + (size_t)i * k;
        for (int p = 0; p < k; p++) {
            const float aip = ai[p], *bp = b + (size_t)p * n;
            for (int j = 0; j < n; j++) ci[j] += aip * bp[j];
        }
    }
}

void tensor_linear(float *y, const float *x, const float *w, const float *b, int n, int in, int out)
{
    tensor_matmul_bt(y, x, w, n, in, out);
    if (b) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < out; j++) y[(size_t)i * out + j] += b[j];
    }
}

void tensor_softmax_rows(float *x, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        float *row = x + (size_t)r * cols;
        float mx = -INFINITY;
        for (int j = 0; j < cols; j++)
            if (row[j] > mx || isnan(row[j])) mx = row[j];
        // max = -inf: exp(-inf - -inf) = exp(nan) = nan, as PyTorch gives.
        float sum = 0.0f;
        for (int j = 0; j < cols; j++) {
            row[j] = expf(row[j] - mx);
            sum += row[j];
        }
        for (int j = 0; j < cols; j++) row[j] /= sum;
    }
}

void tensor_layer_norm(float *y, const float *x, const float *w, const float *b, int rows, int cols,
                       float eps)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        float mean = 0.0f;
        for (int j = 0; j < cols; j++) mean += xr[j];
        mean /= (float)cols;
        float var = 0.0f;
        for (int j = 0; j < cols; j++) {
            float d = xr[j] - mean;
            var += d * d;
        }
        var /= (float)cols;
        float inv = 1.0f / sqrtf(var + eps);
        for (int j = 0; j < cols; j++) {
            float v = (xr[j] - mean) * inv;
            yr[j] = v * (w ? w[j] : 1.0f) + (b ? b[j] : 0.0f);
        }
    }
}
