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
    MASK_SLIDING,      // query i sees keys j with i - W < j <= i (AttnInputs.window = W)
} MaskKind;

typedef enum RopeStyle {
    ROPE_NONE,
    ROPE_HALF,         // Hugging Face Llama's rotate_half: pairs (i, i + d/2)
    ROPE_INTERLEAVED,  // Meta / GPT-J: pairs (2i, 2i + 1)
} RopeStyle;

typedef struct AttnConfig {
    int d_model, n_heads;
    int d_k, d_v;            // per head
    bool qkv_bias, out_bias;
    float scale;             // scores = Q·Kᵀ / scale (default sqrt(d_k))
    float mask_fill;         // -1e9, -1e10, -INFINITY, ...
    bool residual_norm;      // residual_norm = LayerNorm(output + query)
    float norm_eps;
    int ffn_hidden;          // 0 = no feed-forward block
    int n_kv_heads;          // K/V heads (divides n_heads; 1 = multi-query); n_heads = classic
    RopeStyle rope;          // rotary position embedding of the split Q and K
    float rope_theta;        // its base (10000)
    bool alibi;              // scores += -m_h·(i - j) (ALiBi), before the mask
    bool decode;             // also generate token by token from a K/V cache (decode.c)
    int flash_block_q, flash_block_k; // > 0: FlashAttention's tiled online softmax (flash.c)
} AttnConfig;

// The ALiBi slope of head h of H (the paper's rule, also for H not a power of two).
double attn_alibi_slope(int h, int H);
// RoPE's inverse frequency of pair i for head size d: theta^(-2i/d), as float32.
float attn_rope_inv_freq(int i, int d, float theta);

// PyTorch nn.Linear layout: weight (out_features, in_features), bias (out_features).
// Per-head weights are stacked along the output dimension (head h owns rows h*d .. h*d+d-1).
typedef struct AttnWeights {
    Tensor w_q, b_q;         // (H·d_k, d_model), (H·d_k)
    Tensor w_k, b_k;         // (Hkv·d_k, d_model), (Hkv·d_k)   Hkv = n_kv_heads
    Tensor w_v, b_v;         // (Hkv·d_v, d_model), (Hkv·d_v)
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
    int window;              // MASK_SLIDING: W
} AttnInputs;

void attn_weights_free(AttnWeights *w);
void attn_inputs_free(AttnInputs *in);

// Computes every stage into tr (which must be freshly initialised). Shapes must
// already be validated (the lesson loader does it); returns false only on
// allocation failure. Stages: input [key_input value_input] [mask] q_proj k_proj
// v_proj q_heads k_heads v_heads [q_rope k_rope] [position_bias] scores masked_scores
// attn head_out concat output [residual_sum residual_norm] [ffn_hidden ffn_sum ffn_out].
// With n_kv_heads < n_heads, k_heads / v_heads (and k_rope) have n_kv_heads heads and
// query head h reads K/V head h / (n_heads / n_kv_heads). With flash_block_k, after
// head_out: flash_max flash_sum flash_out; with decode, at the end: cache_k cache_v
// decode_output.
bool attn_forward(const AttnConfig *cfg, const AttnWeights *w, const AttnInputs *in, Trace *tr);

// The stage indices the variants below read (-1: absent).
typedef struct AttnStages {
    int x_q, q_in, k_in, vh, bias, mask, head_out, output;
} AttnStages;

// FlashAttention's tiled online softmax (flash.c): the scores are visited one key block
// at a time per query row; the running max m, the running sum l and the rescaled partial
// output are kept, never the Lq×Lk matrix. Pushes flash_max, flash_sum (B, H, Lq, n_key_blocks)
// and flash_out (B, H, Lq, d_v). False on allocation failure.
bool attn_flash(const AttnConfig *cfg, const AttnStages *st, Trace *tr);
// Generation token by token from a K/V cache (decode.c): step t projects token t alone,
// turns its q and k to position t, appends k and v to the cache and computes one row of
// scores, softmax, attn·V and output from the cache. Pushes cache_k (B, Hkv, L, d_k),
// cache_v (B, Hkv, L, d_v) and decode_output (B, L, C). False on allocation failure.
bool attn_decode(const AttnConfig *cfg, const AttnWeights *w, const AttnStages *st, Trace *tr);
// x rotated to position pos (RoPE, one head row of d values) into y.
void attn_rope_row(float *y, const float *x, int d, int pos, RopeStyle style, float theta);
// The weight tensor of slot `slot` (a WeightSlot of stages.h: w_q, b_q, …).
Tensor *attn_weight(AttnWeights *w, int slot);
// The documented deterministic generator behind a lesson's {"init": {"seed": N}}: per
// tensor index a splitmix64 stream starting at mix(seed ^ mix(0xD1B54A32D192ED03 *
// (index+1))) (mix: splitmix64's output function), element k = mix(start + (k+1) *
// 0x9E3779B97F4A7C15); value = (2u - 1) / sqrt(fan_in), u = (x >> 40) * 2^-24. The
// streams are independent: no tensor repeats another's values.
float attn_init_value(unsigned long long seed, int tensor_index, size_t elem_index, int fan_in);

#endif
