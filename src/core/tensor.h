// tensor.h — row-major float32 tensors up to rank 4, and the few operations
// multi-head attention needs. No SDL, no I/O: pure maths (IEEE, no fast-math).
#ifndef ATTNVIZ_TENSOR_H
#define ATTNVIZ_TENSOR_H

#include <stdbool.h>
#include <stddef.h>

#define TENSOR_MAX_RANK 4

typedef struct Tensor {
    int rank;                     // 0 means "empty / not present"
    int shape[TENSOR_MAX_RANK];   // PyTorch order, outermost first
    size_t size;                  // product of shape
    float *data;                  // row-major, owned
    size_t mapped;                // bytes mapped for data (large tensors), 0 when malloc'd
} Tensor;

// Allocates a zero-filled tensor (a large one, from 2 MiB, in memory of its own
// that the kernel may back with huge pages: a fraction of the page faults). Returns false on allocation failure or a
// bad shape (rank out of range, a dimension < 1, size overflow).
bool tensor_init(Tensor *t, int rank, const int *shape);
// The same, its values left unset: for a tensor whose every value is written next.
bool tensor_init_raw(Tensor *t, int rank, const int *shape);
// A tensor's memory (from 128 KiB) is kept after tensor_free for the next of about its size
// (at most 96 MiB in all); this gives it back to the system.
void tensor_release_kept(void);
void tensor_free(Tensor *t);
bool tensor_copy(Tensor *dst, const Tensor *src);
bool tensor_present(const Tensor *t);
// Element count of a shape, or 0 when it would exceed max_elems (overflow-safe).
size_t tensor_shape_size(int rank, const int *shape, size_t max_elems);
// Whether a and b have the same rank and dimensions.
bool tensor_same_shape(const Tensor *a, const Tensor *b);
// Short text like "(2,4,4)" into buf.
void tensor_shape_str(const Tensor *t, char *buf, size_t n);

// y (N, out) = x (N, in) · Wᵀ (W is (out, in), nn.Linear layout) + b (out) or no bias (b NULL).
// Blocked over rows for cache use; accumulation in float, in index order.
void tensor_linear(float *y, const float *x, const float *w, const float *b, int n, int in, int out);
// c (M, N) = a (M, K) · bᵀ where b is (N, K).
void tensor_matmul_bt(float *c, const float *a, const float *b, int m, int k, int n);
// c (M, N) = a (M, K) · b (K, N).
void tensor_matmul(float *c, const float *a, const float *b, int m, int k, int n);
// The same bits as tensor_matmul, faster when a's rows end in zeros (causal attention
// weights: row i is 0 past key i): a block of rows stops its sums after its last
// value that is not ±0 (exact: see tensor.c).
void tensor_matmul_zero_tail(float *c, const float *a, const float *b, int m, int k, int n);
// x[i] /= d for i < n (one IEEE division each).
void tensor_div_scalar(float *x, size_t n, float d);
// dst[i] = mask[i] == 0 ? fill : src[i] for i < n, as masked_fill(mask == 0, fill).
void tensor_masked_fill(float *dst, const float *src, const float *mask, size_t n, float fill);
// e^x in float32, the same bits on every machine and in the browser (no libm):
// within 2 ulp; +0 below −110, +inf above 89, NaN for NaN. The softmax uses it;
// whatever shows or recomputes a softmax value uses it too.
float tensor_expf(float x);
// The clone of the kernels (gemm, softmax, masking) that runs on this CPU: "avx512f",
// "avx2" or "default" (x86-64: target_clones picks it at load time by the same rule,
// the first the CPU supports), "simd128" in WebAssembly built with its vectors (the page), "portable" elsewhere (one plain build).
// Every clone gives the same numbers bit for bit (tests/clones_test.sh).
const char *tensor_kernels(void);
// One pass of attention's pointwise steps over n scores: s[i] = s[i] / scale
// (+ bias[i] when bias), then ms[i] = at[i] = (mask && mask[i] == 0 ? fill : s[i]):
// the same values as tensor_div_scalar, the addition and tensor_masked_fill in turn.
void tensor_scale_mask(float *s, float *ms, float *at, const float *bias, const float *mask, size_t n, float scale,
                       float fill);
// Softmax of each row of x (rows, cols) in place: subtracts the row max.
// A row whose max is -inf becomes NaN, as in PyTorch.
void tensor_softmax_rows(float *x, int rows, int cols);
// gpt-oss's softmax with a sink: each row as softmax([row, sink]) with the sink's own
// weight dropped (Hugging Face's eager_attention_forward for GptOss): the max is taken
// over the row and the sink, the sum adds e^(sink − max) after the row's terms, so a row
// sums to 1 − e^(sink − max) / sum. A row all −∞ gives 0s (the sink takes everything).
void tensor_softmax_rows_sink(float *x, int rows, int cols, float sink);
// The mean and biased variance of x[0..n) as torch.nn.LayerNorm's CPU kernel
// computes them in float32: Welford's update in 8 lanes (x[j] goes to lane j % 8
// for the first n - n % 8 values, in chunks of 16 per lane combined pairwise),
// the rest one by one, then the lanes merged into that (Chan's formula). The
// same overflows as PyTorch: a mean beyond ~1.8e19 or values 3e38 apart give NaN.
void tensor_row_moments(const float *x, int n, float *mean, float *var);
// LayerNorm over the last axis (biased variance) as PyTorch computes it:
// rstd = 1/sqrt(var + eps), y = fma(fma(x, rstd, −rstd·mean), w, b), with the
// moments above; LayerNorm of [3e38, −3e38, 3e38, −3e38] is NaN as in PyTorch.
void tensor_layer_norm(float *y, const float *x, const float *w, const float *b, int rows, int cols,
                       float eps);
// The mean of x² over n values (RMSNorm's), summed in double and rounded once to float.
float tensor_row_mean_square(const float *x, int n);
// RMSNorm over the last axis (nn.RMSNorm, Llama's LlamaRMSNorm): r = 1/sqrt(mean(x²) + eps),
// y = (x·r)·w (w NULL: 1).
void tensor_rms_norm(float *y, const float *x, const float *w, int rows, int cols, float eps);
// The FFN's non-linearities, as float32 results of the double formula: relu, gelu (erf),
// gelu with tanh (approximate="tanh") and silu (x·σ(x), SwiGLU's gate); act is an FfnAct
// of attention.h without FFN_SWIGLU (FFN_SWIGLU here: silu).
float tensor_activation(int act, float x);

#endif
