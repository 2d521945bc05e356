// tensor.c — row-major float32 tensor operations (see tensor.h).
#define _DEFAULT_SOURCE // MAP_ANONYMOUS, MADV_HUGEPAGE
#include "tensor.h"

#include "tensor_simd.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

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

// A tensor from 128 KiB is mapped on its own; from 2 MiB (the scores of a long
// lesson) aligned to 2 MiB and marked for transparent huge pages: its first touch
// then costs one page fault per 2 MiB instead of 512, a third of the L = 256
// forward pass before. Fresh mappings are zero-filled, as calloc's memory.
#define HUGE_BYTES ((size_t)2 << 20)
// From this size a tensor has a mapping of its own (kept after it is freed, below).
#define OWN_MAP_BYTES ((size_t)128 << 10)

// Freed mappings are kept for the next tensors of about their size (up to 32, at
// most KEEP_BYTES in all): a forward pass run again (every edit, every bench round)
// then finds its stages' memory mapped and backed already, instead of fresh
// mappings whose every page the kernel zeroes on first touch (with malloc's memory,
// which glibc maps and unmaps from 128 KiB, a third of the L = 256 forward pass:
// 6.8 ms → 4.5 ms on one thread). Guarded by a mutex: tensors are freed on any thread.
#if defined(__linux__) && defined(MADV_HUGEPAGE)
#include <pthread.h>
enum { KEEP_MAX = 32 };
#define KEEP_BYTES ((size_t)96 << 20)
static pthread_mutex_t keep_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { char *p; size_t len; } keep[KEEP_MAX];
static int keep_n;
static size_t keep_total;

// A kept mapping of len to len·2 bytes, or NULL.
static char *keep_take(size_t len, size_t *got)
{
    char *p = NULL;
    pthread_mutex_lock(&keep_mu);
    int best = -1;
    for (int i = 0; i < keep_n; i++)
        if (keep[i].len >= len && keep[i].len / 2 <= len && (best < 0 || keep[i].len <= keep[best].len))
            best = i; // the smallest that fits, the last freed of those (warm in cache)
    if (best >= 0) {
        p = keep[best].p, *got = keep[best].len;
        keep_total -= keep[best].len;
        keep[best] = keep[--keep_n];
    }
    pthread_mutex_unlock(&keep_mu);
    return p;
}

// Keeps p (len bytes) for later, or unmaps it (the oldest kept go first).
static void keep_put(char *p, size_t len)
{
    char *drop[KEEP_MAX + 1];
    size_t drop_len[KEEP_MAX + 1];
    int nd = 0;
    pthread_mutex_lock(&keep_mu);
    if (len > KEEP_BYTES) {
        drop[nd] = p, drop_len[nd++] = len;
    } else {
        while (keep_n > 0 && (keep_n == KEEP_MAX || keep_total + len > KEEP_BYTES)) {
            drop[nd] = keep[0].p, drop_len[nd++] = keep[0].len;
            keep_total -= keep[0].len;
            memmove(keep, keep + 1, (size_t)(--keep_n) * sizeof keep[0]);
        }
        keep[keep_n].p = p, keep[keep_n++].len = len;
        keep_total += len;
    }
    pthread_mutex_unlock(&keep_mu);
    for (int i = 0; i < nd; i++) munmap(drop[i], drop_len[i]);
}

void tensor_release_kept(void)
{
    pthread_mutex_lock(&keep_mu);
    for (int i = 0; i < keep_n; i++) munmap(keep[i].p, keep[i].len);
    keep_n = 0, keep_total = 0;
    pthread_mutex_unlock(&keep_mu);
}

// zero: fill with 0.0f (a fresh mapping is zero already; a kept one is cleared).
static float *alloc_large(size_t bytes, size_t *mapped, bool zero)
{
    size_t len = (bytes + 4095) & ~(size_t)4095;
    if (len > SIZE_MAX - HUGE_BYTES) return NULL;
    size_t got;
    char *k = keep_take(len, &got);
    if (k) {
        if (zero) memset(k, 0, bytes);
        *mapped = got;
        return (float *)k;
    }
    if (len < HUGE_BYTES) {
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
        *mapped = len;
        return (float *)p;
    }
    char *p = mmap(NULL, len + HUGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    char *a = (char *)(((uintptr_t)p + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
    if (a > p) munmap(p, (size_t)(a - p));
    size_t tail = (size_t)(p + len + HUGE_BYTES - (a + len));
    if (tail) munmap(a + len, tail);
    madvise(a, len, MADV_HUGEPAGE); // advice only: without huge pages it still works
    *mapped = len;
    return (float *)a;
}
#else
void tensor_release_kept(void) {}

static float *alloc_large(size_t bytes, size_t *mapped, bool zero)
{
    (void)mapped;
    return zero ? calloc(bytes / sizeof(float), sizeof(float)) : malloc(bytes);
}
#endif

static bool init(Tensor *t, int rank, const int *shape, bool zero)
{
    memset(t, 0, sizeof *t);
    size_t n = tensor_shape_size(rank, shape, SIZE_MAX / sizeof(float));
    if (n == 0) return false;
    t->data = n * sizeof(float) >= OWN_MAP_BYTES ? alloc_large(n * sizeof(float), &t->mapped, zero)
                                              : zero ? calloc(n, sizeof(float)) : malloc(n * sizeof(float));
    if (!t->data) return false;
    t->rank = rank;
    memcpy(t->shape, shape, (size_t)rank * sizeof(int));
    t->size = n;
    return true;
}

bool tensor_init(Tensor *t, int rank, const int *shape) { return init(t, rank, shape, true); }

bool tensor_init_raw(Tensor *t, int rank, const int *shape) { return init(t, rank, shape, false); }

void tensor_free(Tensor *t)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (t->mapped)
        keep_put((char *)t->data, t->mapped);
    else
#endif
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

bool tensor_same_shape(const Tensor *a, const Tensor *b)
{
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

void tensor_shape_str(const Tensor *t, char *buf, size_t n)
{
    size_t used = 0;
    used += (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < t->rank && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? ",%d" : "%d", t->shape[i]);
    if (used < n) snprintf(buf + used, n - used, ")");
}

// The row's max as the loop `if (x > mx || isnan(x)) mx = x` finds it: the
// first NaN when there is one, else the largest value (which of +0 and -0
// when they tie does not matter: x - (+0) and x - (-0) have the same expf).
// NR lanes compare side by side (inlined into each clone of the softmax).
static inline __attribute__((always_inline)) float row_max(const float *x, int n)
{
    Vec8 m0 = {0}, m1 = {0};
    Vec8i nan = {0};
    m0 -= INFINITY, m1 -= INFINITY;
    int j = 0;
    for (; j + 16 <= n; j += 16) {
        Vec8 v0, v1;
        memcpy(&v0, x + j, sizeof v0);
        memcpy(&v1, x + j + 8, sizeof v1);
        const Vec8i gt0 = v0 > m0, gt1 = v1 > m1;
        nan |= (v0 != v0) | (v1 != v1);
        m0 = (Vec8)(((Vec8i)v0 & gt0) | ((Vec8i)m0 & ~gt0));
        m1 = (Vec8)(((Vec8i)v1 & gt1) | ((Vec8i)m1 & ~gt1));
    }
    float mx = -INFINITY;
    bool any_nan = false;
    for (int l = 0; l < 8; l++) {
        if (m0[l] > mx) mx = m0[l];
        if (m1[l] > mx) mx = m1[l];
        any_nan |= nan[l] != 0;
    }
    for (; j < n; j++) {
        if (x[j] > mx) mx = x[j];
        any_nan |= isnan(x[j]);
    }
    if (any_nan)
        for (j = 0; j < n; j++)
            if (isnan(x[j])) return x[j];
    return mx;
}

// Whether all 8 values are below −110 (a pointer: a vector argument would change the ABI).
static inline __attribute__((always_inline)) bool all8_below(const Vec8 *d)
{
    const Vec8i v = *d < -110.0f;
    unsigned long long q[4];
    memcpy(q, &v, sizeof q);
    return (q[0] & q[1] & q[2] & q[3]) == ~0ull;
}

// (The clones are static, behind plain functions: clang cannot clone a function
// that tensor.h declares without the attribute.)
KERNEL_CLONES static void div_scalar(float *x, size_t n, float d)
{
    for (size_t i = 0; i < n; i++) x[i] /= d;
}

void tensor_div_scalar(float *x, size_t n, float d) { div_scalar(x, n, d); }

KERNEL_CLONES static void masked_fill(float *dst, const float *src, const float *mask, size_t n, float fill)
{
    for (size_t i = 0; i < n; i++) dst[i] = mask[i] == 0.0f ? fill : src[i];
}

void tensor_masked_fill(float *dst, const float *src, const float *mask, size_t n, float fill)
{
    masked_fill(dst, src, mask, n, fill);
}

// exp of 8 floats, the same bits on every machine: only IEEE float and integer
// operations (no libm, no fused multiply-add), after Cephes' expf (Moshier 1984):
// n = round(x·log2 e) by adding and subtracting 1.5·2^23; r = x − n·ln 2 in two
// parts (n·C1 is exact: C1 has 9 significant bits); e^r by its degree-7 polynomial;
// then × 2^⌊n/2⌋ × 2^(n−⌊n/2⌋), two normal powers of two, so a subnormal result is
// rounded once. Within 2 ulp of e^x (PyTorch's Sleef expf is within 1: far below
// the 1e-5 the tests allow); below −110 it is +0, above 89 +inf, NaN stays NaN.
// The steps exp8 and exp1 share, on a Vec8 or a float (the same operations in the
// same order, so the same bits): n = round(x·log2 e) by adding and subtracting
// 1.5·2^23, r = x − n·ln 2 in two parts, y = e^r by Cephes' polynomial.
#define EXP_REDUCE_POLY(T, x, n, y)                                                               \
    const T n = ((x) * 1.44269504088896341f + 12582912.0f) - 12582912.0f;                        \
    T y;                                                                                          \
    do {                                                                                          \
        T r_ = (x) - n * 0.693359375f;                                                            \
        r_ = r_ - n * -2.12194440e-4f;                                                            \
        T p_ = 1.9875691500e-4f * r_ + 1.3981999507e-3f;                                          \
        p_ = p_ * r_ + 8.3334519073e-3f;                                                          \
        p_ = p_ * r_ + 4.1665795894e-2f;                                                          \
        p_ = p_ * r_ + 1.6666665459e-1f;                                                          \
        p_ = p_ * r_ + 5.0000001201e-1f;                                                          \
        y = p_ * (r_ * r_) + r_ + 1.0f;                                                           \
    } while (0)

static inline __attribute__((always_inline)) void exp8(Vec8 *out, const Vec8 *in)
{
    const Vec8 x = *in;
    const Vec8i nan = x != x, lo = x < -110.0f, hi = x > 89.0f;
    const Vec8 zero = {0};
    Vec8 xc = (Vec8)((Vec8i)x & ~(nan | lo | hi)); // NaN and the clamped lanes compute e^0
    EXP_REDUCE_POLY(Vec8, xc, n, y);
    const Vec8i ni = __builtin_convertvector(n, Vec8i), n1 = ni >> 1, n2 = ni - n1;
    y = y * (Vec8)((n1 + 127) << 23);
    y = y * (Vec8)((n2 + 127) << 23);
    const Vec8 inf = zero + INFINITY;
    y = (Vec8)(((Vec8i)y & ~(lo | hi | nan)) | ((Vec8i)inf & hi) | ((Vec8i)x & nan));
    *out = y;
}

// exp8's steps on one value (the same operations, so the same bits: the tests check).
static float exp1(float x)
{
    const bool nan = x != x, lo = x < -110.0f, hi = x > 89.0f;
    if (nan) return x;
    if (lo) return 0.0f;
    if (hi) return INFINITY;
    EXP_REDUCE_POLY(float, x, n, y);
    const int ni = (int)n, n1 = ni >> 1, n2 = ni - n1;
    const uint32_t b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    y = y * s1;
    return y * s2;
}

float tensor_expf(float x) { return exp1(x); }

const char *tensor_kernels(void)
{
#if defined(__x86_64__) && defined(TENSOR_DEFAULT_ONLY)
    return "default"; // (bench_core_default: built with the default clone only)
#endif
#if defined(__x86_64__) && defined(__has_attribute) && !defined(TENSOR_DEFAULT_ONLY)
#if __has_attribute(target_clones)
    // the order of KERNEL_CLONES' list: GCC's resolver takes the first one supported
    __builtin_cpu_init();
#ifndef TENSOR_AVX2_AT_MOST
    if (__builtin_cpu_supports("avx512f")) return "avx512f";
#endif
    if (__builtin_cpu_supports("avx2")) return "avx2";
    return "default";
#endif
#endif
#if defined(__wasm_simd128__)
    return "simd128"; // WebAssembly with its 128-bit vectors (the page: -msimd128)
#endif
    return "portable";
}

KERNEL_CLONES static void scale_mask(float *s, float *ms, float *at, const float *bias, const float *mask,
                                    size_t n, float scale, float fill)
{
    for (size_t i = 0; i < n; i++) {
        float v = s[i] / scale;
        if (bias) v = v + bias[i];
        s[i] = v;
        v = mask && mask[i] == 0.0f ? fill : v;
        ms[i] = v;
        at[i] = v;
    }
}

void tensor_scale_mask(float *s, float *ms, float *at, const float *bias, const float *mask, size_t n, float scale,
                       float fill)
{
    scale_mask(s, ms, at, bias, mask, n, scale, fill);
}

// Softmax rows. A group of rows (4, or more when rows are short: at least 128
// values) is one span of memory: each row's values become x − its max, then the
// whole span goes through exp8, 8 values at a time whatever row they belong to
// (8 that are all masked, x − max < −110 as −1e9 − max, are 0 without it; the
// last few through exp1, the same bits). Each row's sum is its own chain of
// additions in index order; 4 rows' chains interleave, so the adder waits on none.
KERNEL_CLONES static void softmax_rows(float *x, int rows, int cols)
{
    enum { G = 4, SPAN = 128 };
    const int group = cols >= SPAN / G ? G : (SPAN + cols - 1) / cols;
    for (int r0 = 0; r0 < rows; r0 += group) {
        const int g = rows - r0 < group ? rows - r0 : group;
        float *span = x + (size_t)r0 * cols;
        for (int r = 0; r < g; r++) {
            float *row = span + (size_t)r * cols;
            // max = -inf: exp(-inf - -inf) = exp(nan) = nan, as PyTorch gives.
            const float mx = row_max(row, cols);
            for (int j = 0; j < cols; j++) row[j] -= mx;
        }
        const size_t n = (size_t)g * cols;
        size_t j = 0;
        for (; j + 8 <= n; j += 8) {
            Vec8 d, e;
            memcpy(&d, span + j, sizeof d);
            if (all8_below(&d))
                e = (Vec8){0};
            else
                exp8(&e, &d);
            memcpy(span + j, &e, sizeof e);
        }
        for (; j < n; j++) span[j] = exp1(span[j]);
        // A row's values after its last nonzero one (a causal row's masked keys) are +0:
        // adding +0 changes no sum (the sums start at +0), and +0 / sum stays +0 unless the
        // sum is NaN (then the whole row is divided: NaN, as PyTorch gives).
        for (int q = 0; q < g; q += G) {
            float *row[G];
            int end[G], most = 0;
            float sum[G] = {0.0f, 0.0f, 0.0f, 0.0f};
            const int h = g - q < G ? g - q : G;
            for (int r = 0; r < h; r++) {
                row[r] = span + (size_t)(q + r) * cols;
                end[r] = last_nonzero(row[r], 0, cols);
                if (end[r] > most) most = end[r];
            }
            if (h == G) {
                for (int c = 0; c < most; c++)
                    for (int r = 0; r < G; r++) sum[r] += row[r][c];
            } else {
                for (int r = 0; r < h; r++)
                    for (int c = 0; c < end[r]; c++) sum[r] += row[r][c];
            }
            for (int r = 0; r < h; r++) {
                const int stop = isnan(sum[r]) ? cols : end[r];
                for (int c = 0; c < stop; c++) row[r][c] /= sum[r];
            }
        }
    }
}

void tensor_softmax_rows(float *x, int rows, int cols) { softmax_rows(x, rows, cols); }

void tensor_softmax_rows_sink(float *x, int rows, int cols, float sink)
{
    for (int r = 0; r < rows; r++) {
        float *row = x + (size_t)r * cols, mx = row_max(row, cols), sum = 0.0f;
        if (sink > mx || isnan(sink)) mx = isnan(mx) ? mx : sink;
        for (int j = 0; j < cols; j++) sum += row[j] = exp1(row[j] - mx);
        sum += exp1(sink - mx);
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

float tensor_row_mean_square(const float *x, int n)
{
    double s = 0.0;
    for (int j = 0; j < n; j++) s += (double)x[j] * (double)x[j];
    return (float)(s / n);
}

void tensor_rms_norm(float *y, const float *x, const float *w, int rows, int cols, float eps)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        float rstd = 1.0f / sqrtf(tensor_row_mean_square(xr, cols) + eps);
        for (int j = 0; j < cols; j++) yr[j] = xr[j] * rstd * (w ? w[j] : 1.0f);
    }
}

float tensor_activation(int act, float xf)
{
    const double x = xf;
    switch (act) {
    case 0: return xf < 0.0f ? 0.0f : xf;                                   // relu (NaN stays NaN)
    case 1: return (float)(0.5 * x * (1.0 + erf(x * 0.70710678118654752440))); // gelu
    case 2: return (float)(0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x))));
    default: return (float)(x / (1.0 + exp(-x)));                            // silu
    }
}
