// attention.h — multi-head attention forward pass that records every stage.
#ifndef ATTNVIZ_ATTENTION_H
#define ATTNVIZ_ATTENTION_H

#include "tensor.h"
#include "trace.h"

typedef enum MaskKind {
    MASK_NONE,
    MASK_CAUSAL,       // query i sees keys j <= i
    MASK_TENSOR,       // explicit 0/1 tensor broadcast to (B, Lq, Lk)
    MASK_KEY_PADDING,  // per batch b, keys j >= len_b are masked
} MaskKind;

typedef struct AttnConfig {
    int d_model, n_heads;
    int d_k, d_v;            // per head
    bool qkv_bias, out_bias;
    float scale;             // scores = Q·Kᵀ / scale (default sqrt(d_k))
    float mask_fill;         // -1e9, -1e10, -INFINITY, ...
    bool residual_norm;      // residual_norm = LayerNorm(output + query)
    float norm_eps;
    int ffn_hidden;          // 0 = no feed-forward block
} AttnConfig;

// PyTorch nn.Linear layout: weight (out_features, in_features), bias (out_features).
// Per-head weights are stacked along the output dimension (head h owns rows h*d .. h*d+d-1).
typedef struct AttnWeights {
    Tensor w_q, b_q;         // (H·d_k, d_model), (H·d_k)
    Tensor w_k, b_k;         // (H·d_k, d_model), (H·d_k)
    Tensor w_v, b_v;         // (H·d_v, d_model), (H·d_v)
    Tensor w_o, b_o;         // (d_model, H·d_v), (d_model)
    Tensor norm_weight, norm_bias;         // (d_model)
    Tensor ffn_w1, ffn_b1;   // (ffn_hidden, d_model), (ffn_hidden)
    Tensor ffn_w2, ffn_b2;   // (d_model, ffn_hidden), (d_model)
    Tensor ffn_norm_weight, ffn_norm_bias; // (d_model)
} AttnWeights;

typedef struct AttnInputs {
    Tensor query;            // (B, Lq, d_model)
    Tensor key;              // (B, Lk, d_model)
    Tensor value;            // (B, Lk, d_model)
    bool key_is_query, value_is_key;   // self-attention: shown once
    bool value_is_query;     // "value": "query" with a separate key (a copy of the query)
    MaskKind mask_kind;
    Tensor mask;             // (B, Lq, Lk) 0/1 when mask_kind != MASK_NONE
} AttnInputs;

void attn_weights_free(AttnWeights *w);
void attn_inputs_free(AttnInputs *in);

// Computes every stage into tr (which must be freshly initialised). Shapes must
// already be validated (the lesson loader does it); returns false only on
// allocation failure. Stages: input [key_input value_input] [mask] q_proj k_proj
// v_proj q_heads k_heads v_heads scores masked_scores attn head_out concat output
// [residual_sum residual_norm] [ffn_hidden ffn_sum ffn_out].
bool attn_forward(const AttnConfig *cfg, const AttnWeights *w, const AttnInputs *in, Trace *tr);

#endif
