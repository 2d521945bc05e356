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

// The moments round every operation to float32 on its own (GCC contracts
// nothing in ISO C mode, -std=c11; clang is told so); the normalisation itself
// uses fmaf, as PyTorch's vectorised loop is compiled with fused multiply-adds
// (which shows where x·rstd and rstd·mean cancel: [1e19] * 4 gives -8.8e13).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

enum { MOMENT_LANES = 8, MOMENT_CHUNK = 16 };

// Merges the moments (n_add, m1_add, m2_add) into (*m0, *m1, *m2).
static void moments_add(long n_add, float m1_add, float m2_add, long *m0, float *m1, float *m2)
{
    long n = *m0 + n_add;
    float c = n == 0 ? 0.0f : (float)n_add / (float)n;
    float delta = m1_add - *m1;
    *m1 += c * delta;
    float t = delta * delta;
    t = t * c;
    t = t * (float)*m0;
    *m2 += m2_add + t;
    *m0 = n;
}

static void lanes_add(long n_add, const float *m1_add, const float *m2_add, long *m0, float *m1, float *m2)
{
    long m0_in = *m0;
    for (int l = 0; l < MOMENT_LANES; l++) {
        long k = m0_in;
        moments_add(n_add, m1_add[l], m2_add[l], &k, &m1[l], &m2[l]);
    }
    *m0 = m0_in + n_add;
}

void tensor_row_moments(const float *x, int n_all, float *mean, float *var)
{
    const long N = n_all, n = N / MOMENT_LANES, chunks = (n + MOMENT_CHUNK - 1) / MOMENT_CHUNK;
    // the cascade: level j holds the sum of 2^j chunks (ceil(log2(chunks)), at least 1 level)
    int depth = 1;
    while ((1L << depth) < chunks) depth++;
    enum { MAX_DEPTH = 40 };
    long m0_stk[MAX_DEPTH] = {0};
    float m1_stk[MAX_DEPTH][MOMENT_LANES] = {{0}}, m2_stk[MAX_DEPTH][MOMENT_LANES] = {{0}};
    for (long i = 0; i < chunks; i++) {
        const float *xp = x + i * MOMENT_CHUNK * MOMENT_LANES;
        long m0 = n - i * MOMENT_CHUNK < MOMENT_CHUNK ? n - i * MOMENT_CHUNK : MOMENT_CHUNK;
        float m1[MOMENT_LANES] = {0}, m2[MOMENT_LANES] = {0};
        for (long j = 0; j < m0; j++) {
            float c = 1.0f / (float)(j + 1);
            for (int l = 0; l < MOMENT_LANES; l++) {
                float xv = xp[j * MOMENT_LANES + l];
                float delta = xv - m1[l];
                m1[l] += delta * c;
                m2[l] += delta * (xv - m1[l]);
            }
        }
        lanes_add(m0, m1, m2, &m0_stk[0], m1_stk[0], m2_stk[0]);
        long mask = i + 1;
        for (int j = 1; j < depth && (mask & 1) == 0; j++) {
            lanes_add(m0_stk[j - 1], m1_stk[j - 1], m2_stk[j - 1], &m0_stk[j], m1_stk[j], m2_stk[j]);
            m0_stk[j - 1] = 0;
            memset(m1_stk[j - 1], 0, sizeof m1_stk[j - 1]);
            memset(m2_stk[j - 1], 0, sizeof m2_stk[j - 1]);
            mask >>= 1;
        }
    }
    for (int j = 1; j < depth; j++)
        lanes_add(m0_stk[j], m1_stk[j], m2_stk[j], &m0_stk[0], m1_stk[0], m2_stk[0]);
    // the values past the last full group of 8, one by one
    long m0 = 0;
    float m1 = 0.0f, m2 = 0.0f;
    for (long i = n * MOMENT_LANES; i < N; i++) {
        float delta = x[i] - m1;
        ++m0;
        m1 += delta / (float)m0;
        m2 += delta * (x[i] - m1);
    }
    // each lane merged into them, as n values
    for (int l = 0; l < MOMENT_LANES; l++) moments_add(n, m1_stk[0][l], m2_stk[0][l], &m0, &m1, &m2);
    *mean = m1;
    *var = m2 / (float)N;
}

void tensor_layer_norm(float *y, const float *x, const float *w, const float *b, int rows, int cols,
                       float eps)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        float mean, var;
        tensor_row_moments(xr, cols, &mean, &var);
        float rstd = 1.0f / sqrtf(var + eps);
        float bias = -rstd * mean;
        // PyTorch's vectorised loop is compiled with fused multiply-adds
        for (int j = 0; j < cols; j++)
            yr[j] = fmaf(fmaf(xr[j], rstd, bias), w ? w[j] : 1.0f, b ? b[j] : 0.0f);
    }
}
