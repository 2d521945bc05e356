// mech.c — the attention of 2026's model cards, each a few stages of a layer (issue 42):
// QK-norm (Qwen3, Gemma 3), logit soft-capping (Gemma 2), gated attention (Qwen3-Next) and the
// sliding layers of a local/global pattern (Gemma 2/3). Gemma's query_pre_attn_scalar is only
// a scale (model_keys.c's default of model.scale). Shapes in PyTorch order.
#include "attention.h"

#include <math.h>
#include <string.h>

static float *D(Trace *tr, int i) { return tr->stages[i].t.data; }

LayerType attn_layer_type(const AttnConfig *cfg, int l)
{
    return cfg->n_layer_types > 0 ? (LayerType)cfg->layer_types[l % cfg->n_layer_types] : LAYER_FULL;
}

// QK-norm as Qwen3's attention (transformers' models/qwen3/modeling_qwen3.py, Qwen3Attention.forward):
//   query_states = self.q_norm(self.q_proj(hidden_states).view(hidden_shape)).transpose(1, 2)
// with q_norm = Qwen3RMSNorm(head_dim): x / √(mean(x²) over head_dim + ε) · γ, in float32; the same
// for k; RoPE turns the normed heads. (Gemma 3 writes γ as 1 + w; OLMo 2 normalises all heads'
// q_proj together, before the split: neither is this stage.) hs (B, Hh, L, d_k) -> (B, Hh, L, d_k).
int attn_qk_norm(const AttnConfig *cfg, Trace *tr, StageId id, int hs, const Tensor *g)
{
    const Tensor *x = &tr->stages[hs].t;
    const int s = trace_push_raw(tr, id, 4, x->shape, hs, -1, -1);
    if (s < 0) return -1;
    tr->stages[s].weight = g;
    tr->stages[s].key_rows = tr->stages[hs].key_rows;
    const int d = x->shape[3];
    tensor_rms_norm(D(tr, s), tr->stages[hs].t.data, g->data, (int)(x->size / (size_t)d), d, cfg->norm_eps);
    return s;
}

// Gemma 2's soft-capping (transformers' models/gemma2/modeling_gemma2.py, eager_attention_forward):
//   attn_weights = attn_weights / softcap; attn_weights = torch.tanh(attn_weights); attn_weights *= softcap
// on the scaled scores, then the causal mask is added. tanh in double, rounded once to float (as
// tensor.c's GELU): the float tanhf of glibc and of the page's libc differ in the last bit for some
// scores (the page's --dump of qk-norm-softcap differed from the desktop's in 6 stages); the double
// one rounds to the same float on both.
void attn_softcap(float *cap, float *ms, float *at, const float *s, const float *mask, size_t n, float c, float fill)
{
    for (size_t i = 0; i < n; i++) {
        const float v = (float)tanh((double)(s[i] / c)) * c;
        cap[i] = v;
        ms[i] = at[i] = mask && mask[i] == 0.0f ? fill : v;
    }
}

void attn_zero_masked_rows(float *x, const float *mask, int rows, int cols, int width)
{
    for (int i = 0; i < rows; i++) {
        int seen = 0;
        for (int j = 0; j < cols && !seen; j++) seen = mask[(size_t)i * cols + j] != 0.0f;
        if (!seen) memset(x + (size_t)i * width, 0, (size_t)width * sizeof(float));
    }
}

// A sliding layer's mask: the model's causal mask (B, Lq, Lk) with the keys j ≤ i − W also
// masked, as Gemma 2's sliding_window_mask (keys more than W − 1 positions back are out);
// with model.window_convention "flash", j < i − W (W + 1 keys).
int attn_layer_mask(const AttnConfig *cfg, Trace *tr, int mask)
{
    const Tensor *m = &tr->stages[mask].t;
    const int s = trace_push_raw(tr, STAGE_WINDOW_MASK, 3, m->shape, mask, -1, -1);
    if (s < 0) return -1;
    const int B = m->shape[0], Lq = m->shape[1], Lk = m->shape[2], W = cfg->sliding_window;
    const int off = Lk - Lq - (cfg->window_conv == WINDOW_FLASH); // (self-attention: 0)
    float *o = D(tr, s);
    for (int b = 0; b < B; b++)
        for (int i = 0; i < Lq; i++)
            for (int j = 0; j < Lk; j++) {
                const size_t k = ((size_t)b * Lq + i) * Lk + j;
                o[k] = j > i + off - W ? tr->stages[mask].t.data[k] : 0.0f;
            }
    return s;
}

// Gated attention as Qwen3-Next (transformers' models/qwen3_next/modeling_qwen3_next.py,
// Qwen3NextAttention.forward):
//   query_states, gate = torch.chunk(self.q_proj(hidden_states).view(*input_shape, -1, self.head_dim * 2), 2, dim=-1)
//   gate = gate.reshape(*input_shape, -1)
//   ...
//   attn_output = attn_output.reshape(*input_shape, -1).contiguous()
//   attn_output = attn_output * torch.sigmoid(gate)
//   attn_output = self.o_proj(attn_output)
// and Qiu et al., "Gated Attention for Large Language Models" (2025), its elementwise gate after
// SDPA (G1): here the gate's rows of q_proj are their own weight W_G (H·d_v, C), b_G with qkv_bias.
// x (B, Lq, C), concat (B, Lq, H·d_v) -> attn_gate = σ(x·W_Gᵀ + b_G), gated = concat ⊙ attn_gate.
int attn_gate_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x, int concat)
{
    const Tensor *c = &tr->stages[concat].t;
    const int rows = c->shape[0] * c->shape[1], n = c->shape[2];
    int g = trace_push_raw(tr, STAGE_ATTN_GATE, 3, c->shape, x, -1, -1), gated;
    if (g < 0) return -1;
    const Tensor *b = cfg->qkv_bias ? &w->b_gate : NULL;
    tr->stages[g].weight = &w->w_gate, tr->stages[g].bias = b;
    tensor_linear(D(tr, g), D(tr, x), w->w_gate.data, b ? b->data : NULL, rows, cfg->d_model, n);
    float *gv = D(tr, g);
    for (size_t i = 0; i < c->size; i++) gv[i] = 1.0f / (1.0f + expf(-gv[i])); // torch.sigmoid in float32
    if ((gated = trace_push_raw(tr, STAGE_GATED, 3, c->shape, concat, g, -1)) < 0) return -1;
    for (size_t i = 0; i < c->size; i++) D(tr, gated)[i] = D(tr, concat)[i] * gv[i];
    return gated;
}
