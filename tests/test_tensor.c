// Unit tests of the tensor operations.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "parallel.h"
#include "tensor.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_shape_size_limits(void **state)
{
    (void)state;
    int ok[3] = {2, 3, 4};
    assert_int_equal(tensor_shape_size(3, ok, 100), 24);
    assert_int_equal(tensor_shape_size(3, ok, 23), 0);          // over the limit
    int zero[2] = {3, 0};
    assert_int_equal(tensor_shape_size(2, zero, 100), 0);       // empty dim
    int huge[4] = {1 << 30, 1 << 30, 1 << 30, 1 << 30};
    assert_int_equal(tensor_shape_size(4, huge, SIZE_MAX), 0);  // would overflow size_t
    assert_int_equal(tensor_shape_size(5, ok, 100), 0);         // rank too large
    Tensor t;
    assert_false(tensor_init(&t, 2, zero));
    assert_true(tensor_init(&t, 3, ok));
    assert_int_equal(t.size, 24);
    for (size_t i = 0; i < t.size; i++) assert_true(t.data[i] == 0.0f);
    char buf[32];
    tensor_shape_str(&t, buf, sizeof buf);
    assert_string_equal(buf, "(2,3,4)");
    tensor_free(&t);
    assert_null(t.data);
}

static void test_matmul_against_naive(void **state)
{
    (void)state;
    enum { M = 13, K = 7, N = 11 };
    float a[M * K], b[K * N], bt[N * K], c1[M * N], c2[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 37) % 19) / 7.0f - 1.0f;
    for (int i = 0; i < K * N; i++) b[i] = (float)((i * 53) % 23) / 9.0f - 1.2f;
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++) bt[n * K + k] = b[k * N + n];
    tensor_matmul(c1, a, b, M, K, N);
    tensor_matmul_bt(c2, a, bt, M, K, N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int k = 0; k < K; k++) want += (double)a[i * K + k] * (double)b[k * N + j];
            assert_float_equal(c1[i * N + j], want, 1e-5);
            assert_float_equal(c2[i * N + j], want, 1e-5);
        }
}

// Large enough for the packed-panel path, with a partial last panel: every
// output must equal the plain in-order float dot product bit for bit.
static void test_matmul_panel_path_is_exact(void **state)
{
    (void)state;
    enum { M = 37, K = 70, N = 129 };
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * N * K);
    float *c = malloc(sizeof(float) * M * N);
    assert_non_null(a), assert_non_null(b), assert_non_null(c);
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 7919) % 1013) / 97.0f - 5.0f;
    for (int i = 0; i < N * K; i++) b[i] = (float)((i * 104729) % 2003) / 301.0f - 3.0f;
    tensor_matmul_bt(c, a, b, M, K, N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0.0f;
            for (int p = 0; p < K; p++) s += a[i * K + p] * b[j * K + p];
            assert_true(c[i * N + j] == s);
        }
    free(a), free(b), free(c);
}

// Deterministic values of both signs and many magnitudes.
static float val(unsigned i, unsigned salt)
{
    unsigned long long z = (i + 1ULL) * 0x9E3779B97F4A7C15ULL ^ salt * 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 29;
    return (float)((double)(z % 20001) / 1000.0 - 10.0) * (float)(1 + z % 7);
}

// Every shape class of the blocked kernels (K over a block of 256, partial
// panels, row tails, one row, one column) on 1 to 7 threads, each job shared even
// when small: every output equals the plain in-order float sum bit for bit.
static void test_matmul_blocked_exact_any_threads(void **state)
{
    (void)state;
    const int shapes[][3] = {{150, 300, 70}, {7, 600, 33}, {1, 257, 16}, {61, 16, 1}, {96, 64, 48}, {13, 5, 300}};
    const int threads[] = {1, 2, 3, 4, 7};
    parallel_set_min_work(0);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int M = shapes[si][0], K = shapes[si][1], N = shapes[si][2];
        float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * N * K);
        float *bt = malloc(sizeof(float) * N * K), *bias = malloc(sizeof(float) * N);
        float *want = malloc(sizeof(float) * M * N), *want_b = malloc(sizeof(float) * M * N);
        float *c = malloc(sizeof(float) * M * N);
        assert_non_null(a), assert_non_null(b), assert_non_null(bt), assert_non_null(bias);
        assert_non_null(want), assert_non_null(want_b), assert_non_null(c);
        for (int i = 0; i < M * K; i++) a[i] = val((unsigned)i, 1);
        for (int i = 0; i < N * K; i++) bt[i] = val((unsigned)i, 2); // (N, K)
        for (int n = 0; n < N; n++)
            for (int k = 0; k < K; k++) b[k * N + n] = bt[n * K + k]; // (K, N)
        for (int n = 0; n < N; n++) bias[n] = val((unsigned)n, 3);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float s = 0.0f;
                for (int p = 0; p < K; p++) s += a[i * K + p] * bt[j * K + p];
                want[i * N + j] = s;
                want_b[i * N + j] = s + bias[j];
            }
        for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
            parallel_set_threads(threads[ti]);
            memset(c, 0xff, sizeof(float) * M * N);
            tensor_matmul_bt(c, a, bt, M, K, N);
            assert_memory_equal(c, want, sizeof(float) * M * N);
            memset(c, 0xff, sizeof(float) * M * N);
            tensor_matmul(c, a, b, M, K, N);
            assert_memory_equal(c, want, sizeof(float) * M * N);
            memset(c, 0xff, sizeof(float) * M * N);
            tensor_linear(c, a, bt, bias, M, K, N);
            assert_memory_equal(c, want_b, sizeof(float) * M * N);
        }
        free(a), free(b), free(bt), free(bias), free(want), free(want_b), free(c);
    }
    parallel_set_threads(0);
    parallel_set_min_work(PARALLEL_MIN_WORK);
}

// The softmax as a plain loop: max (NaN first), tensor_expf one value at a time,
// in-order sum, division.
static void softmax_plain(float *x, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        float *row = x + (size_t)r * cols, mx = -INFINITY, sum = 0.0f;
        for (int j = 0; j < cols; j++)
            if (row[j] > mx || isnan(row[j])) mx = row[j];
        for (int j = 0; j < cols; j++) {
            row[j] = tensor_expf(row[j] - mx);
            sum += row[j];
        }
        for (int j = 0; j < cols; j++) row[j] /= sum;
    }
}

// The vectorised softmax against the plain loop, bit for bit (NaN included):
// rows not a multiple of the group, columns not of the vector width, masked
// keys at -1e9, -1e10 and -inf, a NaN row, values near the underflow edge.
static void test_softmax_exact(void **state)
{
    (void)state;
    enum { R = 23, C = 37 };
    float x[R * C], y[R * C];
    for (int i = 0; i < R * C; i++) {
        x[i] = val((unsigned)i, 4);
        if (i % 5 == 0) x[i] = -1e9f;
        if (i % 11 == 0) x[i] = -1e10f;
        if (i % 13 == 0) x[i] = -INFINITY;
    }
    for (int j = 0; j < C; j++) x[3 * C + j] = -INFINITY;           // NaN row
    x[5 * C + 7] = NAN;                                             // a NaN score
    for (int j = 0; j < C; j++) x[7 * C + j] = -(float)j * 3.0f;     // e^-108 … : the underflow edge
    x[9 * C] = 0.0f, x[9 * C + 1] = -0.0f;                          // signed zeros
    // causal rows (keys after the 20th masked): the sum stops at the last nonzero weight;
    // with +inf among the keys the sum is NaN, and the masked tail must be NaN too (0 / NaN)
    for (int r = 11; r <= 12; r++)
        for (int j = 0; j < C; j++) x[r * C + j] = j < 20 ? val((unsigned)(r * C + j), 5) : -1e9f;
    x[12 * C + 4] = INFINITY;
    memcpy(y, x, sizeof x);
    softmax_plain(y, R, C);
    tensor_softmax_rows(x, R, C);
    assert_memory_equal(x, y, sizeof x);
    for (int j = 0; j < C; j++) assert_true(isnan(x[3 * C + j]) && isnan(x[5 * C + j]) && isnan(x[12 * C + j]));
    assert_true(x[11 * C + 30] == 0.0f && !signbit(x[11 * C + 30]) && x[11 * C + 3] > 0.0f);
}

// c = a·b as the plain in-order loop (products then sums from +0): the bits every
// product of the core must give.
static void matmul_plain(float *c, const float *a, const float *b, int m, int k, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            for (int p = 0; p < k; p++) s += a[(size_t)i * k + p] * b[(size_t)p * n + j];
            c[(size_t)i * n + j] = s;
        }
}

// tensor_matmul_zero_tail (attn·V of a causal head) skips what follows a row
// block's last nonzero weight; it must give tensor_matmul's bits in every case:
// causal rows, rows of only zeros, −0 weights, products that are −0 (a sum from +0
// stays +0), infinities and NaN in V past the cut (0·inf = NaN), any thread count.
static void test_matmul_zero_tail_exact(void **state)
{
    (void)state;
    enum { M = 101, K = 101, N = 35 };
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
    float *want = malloc(sizeof(float) * M * N), *got = malloc(sizeof(float) * M * N);
    assert_non_null(a), assert_non_null(b), assert_non_null(want), assert_non_null(got);
    for (int variant = 0; variant < 4; variant++) {
        for (int i = 0; i < M; i++)
            for (int p = 0; p < K; p++) // causal: row i weighs keys 0..i, then +0 (or −0)
                a[i * K + p] = p <= i ? (float)(val((unsigned)(i * K + p), 7) * 0.01f) : ((i + p) % 5 ? 0.0f : -0.0f);
        for (int p = 0; p < K; p++) a[17 * K + p] = 0.0f; // a row of zeros
        for (int i = 0; i < K * N; i++) b[i] = val((unsigned)i, 8);
        if (variant >= 1) { // column 3: −0 where rows 36..41 (one block) weigh (+1), +0 after: +0 both ways
            for (int p = 0; p < K; p++) {
                for (int i = 36; i < 42; i++) a[i * K + p] = p == 0 ? 1.0f : 0.0f;
                b[p * N + 3] = p == 0 ? -0.0f : 0.0f;
            }
        }
        if (variant >= 2) b[90 * N + 5] = INFINITY; // past most rows' cut: their column 5 is NaN
        if (variant == 3) b[99 * N + 6] = NAN;
        matmul_plain(want, a, b, M, K, N);
        for (int threads = 1; threads <= 2; threads++) {
            parallel_set_threads(threads);
            parallel_set_min_work(0);
            memset(got, 0xAB, sizeof(float) * M * N);
            tensor_matmul_zero_tail(got, a, b, M, K, N);
            for (int i = 0; i < M * N; i++)
                if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
                    fail_msg("variant %d, %d threads: c[%d][%d] = %g, the in-order loop gives %g", variant, threads,
                             i / N, i % N, (double)got[i], (double)want[i]);
            tensor_matmul(got, a, b, M, K, N);
            assert_memory_equal(got, want, sizeof(float) * M * N);
        }
        if (variant >= 1) assert_true(want[40 * N + 3] == 0.0f && !signbit(want[40 * N + 3]));
        if (variant >= 2) assert_true(isnan(want[20 * N + 5]));
    }
    parallel_set_threads(0);
    parallel_set_min_work(PARALLEL_MIN_WORK);
    free(a), free(b), free(want), free(got);
}

// tensor_expf (the softmax's exp, no libm: the same bits in the browser) is within
// 1 ulp of e^x rounded from double on a sweep of every 61st float in [−110, 89],
// with the edges: +0 below −110 and for −inf, +inf above 89, NaN for NaN, 1 at 0.
static void test_expf_accuracy(void **state)
{
    (void)state;
    double worst = 0.0;
    long checked = 0;
    for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 61) {
        uint32_t b = (uint32_t)bits;
        float x;
        memcpy(&x, &b, sizeof x);
        if (!(x >= -110.0f && x <= 89.0f)) continue;
        const double e = exp((double)x);
        const float ef = (float)e, y = tensor_expf(x);
        double ulp = ldexp(1.0, -149); // subnormal spacing
        if (ef >= 0x1p-126f) ulp = (double)nextafterf(ef, INFINITY) - (double)ef;
        double err = fabs((double)y - e) / ulp;
        if (err > worst) worst = err;
        checked++;
    }
    assert_true(checked > 20000000);
    assert_true(worst <= 1.0);
    assert_true(tensor_expf(0.0f) == 1.0f && tensor_expf(-0.0f) == 1.0f);
    assert_true(tensor_expf(-110.5f) == 0.0f && tensor_expf(-INFINITY) == 0.0f && !signbit(tensor_expf(-1e9f)));
    assert_true(isinf(tensor_expf(89.5f)) && isinf(tensor_expf(INFINITY)));
    assert_true(isnan(tensor_expf(NAN)));
    assert_true(tensor_expf(-103.0f) > 0.0f && tensor_expf(-103.0f) < 0x1p-126f); // subnormal, not flushed
}

// The softmax's 8-wide exp and tensor_expf give the same bits: in a row of 9, keys
// 1..7 go through the vector path and key 8 through the scalar one; with the same
// score they must get the same weight (one row per call: the row is its own span).
static void test_exp_vector_is_scalar(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 200000; i++) {
        float v = -110.0f * (float)(i * 2654435761u % 1000003u) / 1000003.0f;
        float row[9] = {0.0f, v, v, v, v, v, v, v, v};
        tensor_softmax_rows(row, 1, 9);
        if (memcmp(&row[1], &row[8], sizeof(float)) != 0) fail_msg("score %.9g: %.9g != %.9g", (double)v, (double)row[1], (double)row[8]);
    }
}

static void test_masked_fill_and_scale(void **state)
{
    (void)state;
    enum { N = 45 };
    float s[N], m[N], d[N];
    for (int i = 0; i < N; i++) s[i] = val((unsigned)i, 5), m[i] = (float)(i % 3 != 0);
    tensor_masked_fill(d, s, m, N, -1e9f);
    for (int i = 0; i < N; i++) assert_true(d[i] == (i % 3 ? s[i] : -1e9f));
    float want[N];
    for (int i = 0; i < N; i++) want[i] = s[i] / 5.656854f;
    tensor_div_scalar(s, N, 5.656854f);
    assert_memory_equal(s, want, sizeof want);
}

// Large tensors are mapped on their own: zero-filled, copyable, freed.
static void test_large_tensor(void **state)
{
    (void)state;
    int shape[2] = {700, 1000}; // 2.8 MB
    Tensor t, u;
    assert_true(tensor_init(&t, 2, shape));
    assert_true(t.mapped >= t.size * sizeof(float));
    for (size_t i = 0; i < t.size; i += 997) assert_true(t.data[i] == 0.0f);
    t.data[t.size - 1] = 3.0f;
    assert_true(tensor_copy(&u, &t));
    assert_true(u.data[u.size - 1] == 3.0f && u.data[0] == 0.0f);
    tensor_free(&t), tensor_free(&u);
    assert_null(t.data);
    // freed memory is kept for the next large tensor: handed out zeroed again by
    // tensor_init, as it is by tensor_init_raw (values unset, the memory reused)
    assert_true(tensor_init(&t, 2, shape));
    for (size_t i = 0; i < t.size; i++) t.data[i] = 7.0f;
    float *kept = t.data;
    tensor_free(&t);
    assert_true(tensor_init(&u, 2, shape));
    assert_ptr_equal(u.data, kept);
    for (size_t i = 0; i < u.size; i++)
        if (u.data[i] != 0.0f) fail_msg("value %zu of a reused mapping is %g", i, (double)u.data[i]);
    tensor_free(&u);
    int smaller[2] = {600, 1000}, tiny[2] = {100, 100};
    assert_true(tensor_init_raw(&t, 2, smaller)); // 2.4 MB fits the kept 2.8 MB mapping
    assert_ptr_equal(t.data, kept);
    assert_true(tensor_init_raw(&u, 2, tiny));     // small: malloc's
    assert_int_equal(u.mapped, 0);
    tensor_free(&t), tensor_free(&u);
    tensor_release_kept();
    assert_true(tensor_init(&t, 2, shape));
    for (size_t i = 0; i < t.size; i += 997) assert_true(t.data[i] == 0.0f);
    tensor_free(&t);
}

// A process that forks after the pool started: the child (which has no
// workers) still shares its jobs correctly, and the parent's pool still works.
static void test_pool_survives_fork(void **state)
{
    (void)state;
    enum { M = 64, K = 300, N = 64 };
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * N * K);
    float *c1 = malloc(sizeof(float) * M * N), *c2 = malloc(sizeof(float) * M * N);
    assert_non_null(a), assert_non_null(b), assert_non_null(c1), assert_non_null(c2);
    for (int i = 0; i < M * K; i++) a[i] = val((unsigned)i, 6);
    for (int i = 0; i < N * K; i++) b[i] = val((unsigned)i, 7);
    parallel_set_threads(2);
    parallel_set_min_work(0);
    tensor_matmul_bt(c1, a, b, M, K, N); // starts the worker
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20); // a deadlock ends the child with SIGALRM
        tensor_matmul_bt(c2, a, b, M, K, N);
        int same = memcmp(c1, c2, sizeof(float) * M * N) == 0;
        free(a), free(b), free(c1), free(c2); // nothing left for valgrind's leak check in the child
        parallel_shutdown();
        _exit(same ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    memset(c2, 0, sizeof(float) * M * N);
    tensor_matmul_bt(c2, a, b, M, K, N);
    assert_memory_equal(c1, c2, sizeof(float) * M * N);
    parallel_set_threads(0);
    parallel_set_min_work(PARALLEL_MIN_WORK);
    free(a), free(b), free(c1), free(c2);
}

static void test_linear_bias(void **state)
{
    (void)state;
    // x (2, 3), W (2, 3) nn.Linear layout, b (2)
    float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 0, -1, 0.5f, 0.5f, 0.5f}, b[2] = {10, -1};
    float y[4];
    tensor_linear(y, x, w, b, 2, 3, 2);
    assert_float_equal(y[0], 1 - 3 + 10, 1e-6);
    assert_float_equal(y[1], 3 - 1, 1e-6);
    assert_float_equal(y[2], 4 - 6 + 10, 1e-6);
    assert_float_equal(y[3], 7.5 - 1, 1e-6);
    tensor_linear(y, x, w, NULL, 2, 3, 2);
    assert_float_equal(y[0], -2, 1e-6);
}

static void test_softmax_rows(void **state)
{
    (void)state;
    float x[12] = {1, 2, 3, 4,                          // ordinary
                   1000, 1001, 1002, 1003,              // large: must not overflow
                   -INFINITY, 0, -INFINITY, 1};         // masked with -inf
    tensor_softmax_rows(x, 3, 4);
    for (int r = 0; r < 3; r++) {
        float s = 0;
        for (int j = 0; j < 4; j++) {
            assert_false(isnan(x[r * 4 + j]));
            s += x[r * 4 + j];
        }
        assert_float_equal(s, 1.0, 1e-6);
    }
    assert_float_equal(x[0], x[4], 1e-6);   // shift invariance
    assert_true(x[8] == 0.0f && x[10] == 0.0f);
    assert_float_equal(x[11] / x[9], expf(1.0f), 1e-5);
}

static void test_softmax_fully_masked(void **state)
{
    (void)state;
    float inf_row[3] = {-INFINITY, -INFINITY, -INFINITY};   // PyTorch: NaN
    float big_row[3] = {-1e9f, -1e9f, -1e9f};               // PyTorch: uniform
    tensor_softmax_rows(inf_row, 1, 3);
    tensor_softmax_rows(big_row, 1, 3);
    for (int j = 0; j < 3; j++) {
        assert_true(isnan(inf_row[j]));
        assert_float_equal(big_row[j], (1.0f / 3.0f), 1e-7f);
    }
}

static void test_layer_norm(void **state)
{
    (void)state;
    float x[8] = {1, 2, 3, 4, -2, -2, 2, 2}, y[8];
    tensor_layer_norm(y, x, NULL, NULL, 2, 4, 1e-5f);
    for (int r = 0; r < 2; r++) {
        double mean = 0, var = 0;
        for (int j = 0; j < 4; j++) mean += (double)y[r * 4 + j];
        mean /= 4;
        for (int j = 0; j < 4; j++) var += ((double)y[r * 4 + j] - mean) * ((double)y[r * 4 + j] - mean);
        assert_float_equal(mean, 0.0, 1e-6);
        assert_float_equal(var / 4, 1.0, 1e-4);
    }
    float w[4] = {2, 2, 2, 2}, b[4] = {1, 1, 1, 1}, z[8];
    tensor_layer_norm(z, x, w, b, 2, 4, 1e-5f);
    for (int i = 0; i < 8; i++) assert_float_equal(z[i], 2 * y[i] + 1, 1e-6);
    // in place works
    tensor_layer_norm(x, x, NULL, NULL, 2, 4, 1e-5f);
    for (int i = 0; i < 8; i++) assert_float_equal(x[i], y[i], 0);
}

// A JSON number or "nan" / "inf" / "-inf".
static float ref_value(const cJSON *j)
{
    if (cJSON_IsNumber(j)) return (float)j->valuedouble;
    const char *s = cJSON_GetStringValue(j);
    assert_non_null(s);
    return strcmp(s, "nan") == 0 ? NAN : strcmp(s, "inf") == 0 ? INFINITY : -INFINITY;
}

static float *ref_floats(const cJSON *arr, int *n)
{
    *n = cJSON_GetArraySize(arr);
    float *v = calloc((size_t)(*n > 0 ? *n : 1), sizeof *v);
    assert_non_null(v);
    int i = 0;
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next) v[i++] = ref_value(e);
    return v;
}

// issue 15, item 8: LayerNorm equals torch.nn.LayerNorm (tests/ref/layernorm-edges.json,
// written by tests/gen_reference.py) where float32 overflows inside the kernel
// ([3e38, -3e38, 3e38, -3e38] is NaN, a constant row of 1e20 too, an alternating
// row of 1e20 gives 0) and on random rows of every length up to 1024: NaN and
// infinities at the same places, finite values within 1e-5 + 1e-4·|y|.
static void test_layer_norm_matches_torch(void **state)
{
    (void)state;
    FILE *f = fopen("tests/ref/layernorm-edges.json", "rb");
    assert_non_null(f);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    float eps = (float)cJSON_GetObjectItem(root, "eps")->valuedouble;
    int cases = 0, nan_rows = 0;
    for (const cJSON *c = cJSON_GetObjectItem(root, "cases")->child; c; c = c->next, cases++) {
        int n, ny, nw = 0, nb = 0;
        float *x = ref_floats(cJSON_GetObjectItem(c, "x"), &n);
        float *want = ref_floats(cJSON_GetObjectItem(c, "y"), &ny);
        const cJSON *jw = cJSON_GetObjectItem(c, "weight"), *jb = cJSON_GetObjectItem(c, "bias");
        float *w = jw ? ref_floats(jw, &nw) : NULL, *b = jb ? ref_floats(jb, &nb) : NULL;
        assert_int_equal(n, ny);
        float *y = calloc((size_t)n, sizeof *y);
        assert_non_null(y);
        tensor_layer_norm(y, x, w, b, 1, n, eps);
        nan_rows += isnan(want[0]);
        for (int j = 0; j < n; j++) {
            bool same = isnan(want[j]) ? isnan(y[j])
                        : isinf(want[j]) ? y[j] == want[j]
                                         : fabs((double)y[j] - (double)want[j]) <= 1e-5 + 1e-4 * fabs((double)want[j]);
            if (!same)
                fail_msg("case %d (n = %d, x[0] = %g): y[%d] = %.9g, torch gives %.9g", cases, n, (double)x[0], j,
                         (double)y[j], (double)want[j]);
        }
        free(x), free(want), free(w), free(b), free(y);
    }
    assert_true(cases >= 40 && nan_rows >= 5);
    cJSON_Delete(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_size_limits), cmocka_unit_test(test_matmul_against_naive),
        cmocka_unit_test(test_matmul_panel_path_is_exact),
        cmocka_unit_test(test_linear_bias),       cmocka_unit_test(test_softmax_rows),
        cmocka_unit_test(test_softmax_fully_masked), cmocka_unit_test(test_layer_norm),
        cmocka_unit_test(test_layer_norm_matches_torch),
        cmocka_unit_test(test_matmul_blocked_exact_any_threads), cmocka_unit_test(test_softmax_exact),
        cmocka_unit_test(test_masked_fill_and_scale), cmocka_unit_test(test_large_tensor),
        cmocka_unit_test(test_expf_accuracy),     cmocka_unit_test(test_exp_vector_is_scalar),
        cmocka_unit_test(test_matmul_zero_tail_exact),
        cmocka_unit_test(test_pool_survives_fork),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
