// backward.h — one training step's backward pass over a language model's forward trace:
// the cross-entropy loss over next tokens and, from the chain rule written out in C (no
// autodiff), the gradient of the loss with respect to every stage the loss depends on and
// to every weight. Read from the Trace attn_forward recorded (its stages, operands and
// borrowed weights); nothing in the trace changes.
//
// Loss: L = mean over the counted positions (b, l) of cross_entropy(logits[b, l] / T,
// targets[b, l]), T the model's temperature, as torch's F.cross_entropy(logits / T, targets,
// ignore_index) with reduction "mean". The default targets are the input shifted by one,
// targets[b, l] = ids[b, l + 1]: the last position has no next token and is not counted
// (PyTorch's logits[:, :-1] against tokens[:, 1:]); with a key-padding mask a position
// whose next token is padding is not counted either.
#ifndef ATTNVIZ_BACKWARD_H
#define ATTNVIZ_BACKWARD_H

#include <stddef.h>

#include "attention.h"
#include "trace.h"

#define GRAD_NAME_MAX 40   // "grad." + a stage name ("grad.l1.masked_scores"), or a weight's

typedef struct Grads {
    // dL/d(stage i) of the forward trace, same shape as tr->stages[i].t; empty (rank 0) for a
    // stage the loss does not depend on (the mask, position_bias, probs, the flash and decode
    // stages, which only show the same numbers another way) and for sinusoidal pos_embed (a
    // constant: nothing learns from it; torch.autograd has no gradient for it either).
    Tensor *d;
    int n;                  // = the trace's n
    // dL/dW of layer l's weight slot s (WeightSlot of stages.h; the model's own weights —
    // embed, pos_embed, final norm, lm_head — in layer 0), same shape as the weight; empty
    // for a weight the model does not have. With tied embeddings grad.model.embed sums both uses.
    Tensor dw[TRACE_MAX_LAYERS][WEIGHT_COUNT];
    int n_layers;
    int *targets;           // (B, L) the next token of each position, -1: not counted (owned)
    int n_targets;          // positions counted (the mean's divisor)
    float loss;             // the mean cross-entropy
    int n_rows;             // B·L: the positions targets has room for
    float *scratch;         // the FFN's pre-activation and RoPE's row, kept for the next call (owned)
    size_t scratch_cap;     // floats in scratch
    float *work;            // the matrix products' temporaries (backward_linear's tmp…), kept (owned)
    size_t work_cap;        // floats in work
} Grads;

void grads_init(Grads *g);
void grads_free(Grads *g);

// The default targets of a language model's trace into targets (B·L ints): the input
// shifted by one, -1 at the last position and, with a key-padding mask, where the next
// token is padding. False with one line in err (naming `file`) when the trace is not a
// language model's (no vocab) or no position has a next token.
bool backward_default_targets(const Trace *tr, int *targets, const char *file, char *err, size_t err_len);

// The backward pass: the loss and every gradient into g, from the forward trace tr computed
// with cfg and w (cfg->n_layers layers' weights). g is initialised (grads_init) or holds an
// earlier call's result: a trace of the same shapes reuses its buffers (zeroed, nothing
// allocated: a training loop's steps), others are freed and allocated again. targets (B·L,
// -1 = not counted) NULL: the default. False with one line in err naming `file` for a
// trace that is not a language model's, targets outside the vocabulary, no counted
// position, or out of memory (g then holds nothing).
bool attn_backward(const AttnConfig *cfg, const AttnWeights *w, const Trace *tr, const int *targets, Grads *g,
                   const char *file, char *err, size_t err_len);

// −log softmax(zr / T)[t] of one row of V logits, in double (the loss's term of one position).
double backward_nll(const float *zr, int V, float T, int t);

// The gradients in the order the backward pass computes them, for --dump --backward and a
// view that walks them: first every stage's in reverse ("grad.logits" … "grad.token_embed"),
// then the weights' (the model's own, "grad.model.embed", "grad.model.pos_embed" — "grad.pos_embed"
// is the stage's —, …, "grad.model.lm_head", then each layer's: "grad.w_q", or "grad.l1.w_q" in a
// model of several layers). grads_count is how many;
// grads_item k's name into name (GRAD_NAME_MAX) and its tensor; *stage: the forward stage it
// belongs to (-1 for a weight), *slot: the weight slot (-1 for a stage), *layer its layer.
int grads_count(const Grads *g);
const Tensor *grads_item(const Grads *g, const Trace *tr, int k, char *name, int *stage, int *slot, int *layer);

// ---- the backward view (backward_trace.c) --------------------------------------------------
// Appends the backward pass to a language model's forward trace tr (attn_forward's, with cfg
// and w) as stages of step STEP_BACKWARD, in the order the chain rule visits them: the targets'
// one-hot ("grad.target"), dL/dlogits ("grad.logits"), then every forward stage the loss depends
// on in reverse ("grad." + its name, = Grads.d), each linear map's weight gradient dW = dYᵀ·X
// after its output's ("grad.lm_head", "grad.l1.w_q"), every other weight's (biases, γ, β, W₁ and
// W_gate, the embedding tables, gpt-oss's sink logits: GRAD_PARAM, the backward pass's own values) and before
// the softmax's dS the Jacobian of one row ("grad.jacobian"). Each reads its operands as
// stages.h's GRAD kinds say, so a view explains it from the numbers on screen. targets as
// attn_backward's. False with one line in err naming `file` (attn_backward's reasons, too many
// stages, out of memory); tr then holds its forward stages only.
bool backward_trace_append(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, const int *targets,
                           const char *file, char *err, size_t err_len);
// The query row of one (Lq, Lk) slice whose softmax Jacobian the view shows: the row of
// a = attn whose dS = a ⊙ (dA − rowsum(dA ⊙ a)) has the largest |value| (the first on a tie).
int backward_jacobian_row(const float *a, const float *da, int Lq, int Lk);
// The forward stage a backward stage s explains ("grad.l1.attn" → "l1.attn"; -1: none, a
// weight's gradient or the targets).
int backward_forward_stage(const Trace *tr, int s);

// ---- the chain rule of each kind of stage (backward_ops.c) --------------------------------
// y = x·Wᵀ + b over n rows (in → out): dx += dy·W (dx NULL: skipped), dW += dyᵀ·x, db += Σ dy
// (dW, db NULL: skipped). The products are tensor_matmul's (blocked, vectorised; each sum in
// index order: dW's over the rows in turn, dx's over the outputs), computed in tmp, room for
// backward_linear_tmp(n, in, out) floats, then added.
void backward_linear(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w, int n,
                     int in, int out, float *tmp);
size_t backward_linear_tmp(int n, int in, int out);
// c (m, n) += A·b for small products (an attention head's): A's element (i, p) at a[i·rs + p·cs]
// (rs = k, cs = 1: a (m, k); rs = 1, cs = m: the transpose of a (k, m)), b (k, n). Each sum from
// 0 in p's order, as tensor_matmul's, then added; acc: room for n floats.
void backward_matmul_add(float *c, const float *a, size_t rs, size_t cs, const float *b, int m, int k, int n,
                         float *acc);
// dst (cols, rows) = srcᵀ, src (rows, cols).
void backward_transpose(float *dst, const float *src, int rows, int cols);
// dst[k] += src[k], k < n.
void backward_add(float *dst, const float *src, size_t n);
// LayerNorm (rms false) or RMSNorm (rms) of x over rows of C with γ (NULL: 1): dx += …,
// dγ += Σ dy·x̂, dβ += Σ dy (dgamma, dbeta NULL: skipped).
void backward_norm(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x, const float *gamma,
                   int rows, int C, float eps, bool rms);
// a = softmax(s) over rows of n: ds = a ⊙ (da − rowsum(da ⊙ a)) (written, not added). With
// sink (non-NULL) the softmax had one more logit per row whose weight 1 − Σa is dropped:
// *sink += −(1 − Σa)·rowsum(da ⊙ a).
void backward_softmax(float *ds, const float *da, const float *a, int rows, int n, float *sink);
// The derivative of the FFN's activation act (FfnAct; FFN_SWIGLU: silu) at u.
float backward_activation(int act, float u);

#endif
