// attention.h — multi-head attention forward pass that records every stage.
#ifndef ATTNVIZ_ATTENTION_H
#define ATTNVIZ_ATTENTION_H

#include "tensor.h"
#include "trace.h"

// The enums a lesson names, one X-macro each: X(ID, name in lesson files and --set (NULL: none),
// gloss after the name in messages, …). Reader, writer, edits and view read the names from
// these lines (attn_names.h), so they cannot disagree.
#define ATTN_ENUM_ID(id, ...) id,
#define ATTN_ENUM_ONE(id, ...) +1   // (a count apart from the enum: switches stay complete)

// MASK_CAUSAL: query i sees keys j <= i (+ Lk - Lq with AttnInputs.causal_bottom_right);
// MASK_TENSOR: an explicit 0/1 tensor broadcast to (B, Lq, Lk); MASK_KEY_PADDING: per batch b,
// keys j >= len_b are masked; MASK_SLIDING: query i sees keys j with i - W < j <= i
// (AttnInputs.window = W), and the first AttnInputs.sink_tokens keys j <= i (StreamingLLM's
// attention sinks). The names are --set's (mask=causal); a file writes the mask's own form.
#define MASK_KIND_TABLE(X)                                                                                       \
    X(MASK_NONE, "none", "") X(MASK_CAUSAL, "causal", "") X(MASK_TENSOR, NULL, "")                               \
    X(MASK_KEY_PADDING, "key_padding", "") X(MASK_SLIDING, NULL, "")
typedef enum MaskKind { MASK_KIND_TABLE(ATTN_ENUM_ID) } MaskKind;
enum { MASK_KIND_COUNT = 0 MASK_KIND_TABLE(ATTN_ENUM_ONE) };

#define ROPE_STYLE_TABLE(X)                                                                                      \
    X(ROPE_NONE, NULL, "")                                                                                       \
    X(ROPE_HALF, "half", " (Llama's rotate_half)")          /* Hugging Face Llama's: pairs (i, i + d/2) */       \
    X(ROPE_INTERLEAVED, "interleaved", " (Meta / GPT-J pairs)") /* Meta / GPT-J: pairs (2i, 2i + 1) */
typedef enum RopeStyle { ROPE_STYLE_TABLE(ATTN_ENUM_ID) } RopeStyle;
enum { ROPE_STYLE_COUNT = 0 ROPE_STYLE_TABLE(ATTN_ENUM_ONE) };

// Hugging Face's rope_scaling (transformers' modeling_rope_utils): how a model trained on
// original_max positions stretches RoPE to longer texts.
#define ROPE_SCALE_TABLE(X)                                                                                      \
    X(ROPE_SCALE_NONE, NULL, "")                                                                                 \
    X(ROPE_SCALE_LINEAR, "linear", "")   /* position interpolation: every frequency / factor */                  \
    X(ROPE_SCALE_DYNAMIC, "dynamic", "") /* dynamic NTK: a larger base once L > original_max */                  \
    X(ROPE_SCALE_YARN, "yarn", "")       /* YaRN: slow pairs interpolated, fast ones kept, cos/sin · attention factor */ \
    X(ROPE_SCALE_LLAMA3, "llama3", "")   /* Llama 3.1: long wavelengths / factor, short kept, smoothed between */
typedef enum RopeScaleType { ROPE_SCALE_TABLE(ATTN_ENUM_ID) } RopeScaleType;
enum { ROPE_SCALE_COUNT = 0 ROPE_SCALE_TABLE(ATTN_ENUM_ONE) };

typedef struct RopeScale {
    RopeScaleType type;
    float factor;                       // > 0 (the others: ≥ 1)
    int original_max;                   // original_max_position_embeddings (dynamic, yarn, llama3)
    float low_freq_factor, high_freq_factor; // llama3 (1 and 4 in Llama 3.1)
    float beta_fast, beta_slow;         // yarn (32 and 1)
    float attention_factor;             // yarn; 0: 0.1·ln(factor) + 1
} RopeScale;

// The norm of the block (both of them): LayerNorm (mean and variance, γ and β) or RMSNorm
// (Zhang & Sennrich 2019, Llama: x / √(mean(x²) + ε) · γ, no β).
#define NORM_KIND_TABLE(X) X(NORM_LAYER, "layer", " (LayerNorm)") X(NORM_RMS, "rms", " (RMSNorm)")
typedef enum NormKind { NORM_KIND_TABLE(ATTN_ENUM_ID) } NormKind;
enum { NORM_KIND_COUNT = 0 NORM_KIND_TABLE(ATTN_ENUM_ONE) };

// The feed-forward block's non-linearity: h = act(z·W₁ᵀ + b₁), or SwiGLU (Shazeer 2020, Llama):
// h = (z·W₁ᵀ + b₁) ⊙ silu(z·W_gᵀ + b_g) (W₁ Llama's up_proj, W_g its gate_proj, W₂ down_proj).
// X(ID, name, gloss, the function a stage applies as formulas name it: SwiGLU's gate applies silu)
#define FFN_ACT_TABLE(X)                                                                                         \
    X(FFN_RELU, "relu", "", "relu")                                                                              \
    X(FFN_GELU, "gelu", "", "gelu")  /* x·Φ(x) = x/2·(1 + erf(x/√2)) (PyTorch's gelu, approximate="none") */      \
    X(FFN_GELU_TANH, "gelu_tanh", "", "gelu_tanh") /* x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (approximate="tanh", GPT-2's gelu_new) */ \
    X(FFN_SWIGLU, "swiglu", "", "silu")
typedef enum FfnAct { FFN_ACT_TABLE(ATTN_ENUM_ID) } FfnAct;
enum { FFN_ACT_COUNT = 0 FFN_ACT_TABLE(ATTN_ENUM_ONE) };

// A language model's positions added to the token embedding (RoPE is AttnConfig.rope).
#define POS_KIND_TABLE(X) X(POS_NONE, "none", "") X(POS_LEARNED, "learned", "") X(POS_SINUSOIDAL, "sinusoidal", "")
typedef enum PosKind { POS_KIND_TABLE(ATTN_ENUM_ID) } PosKind;
enum { POS_KIND_COUNT = 0 POS_KIND_TABLE(ATTN_ENUM_ONE) };

// An experiment's ablation of one head (experiment.h; not a lesson key, never saved): its
// head_out replaced, before the concat, by zeros or by its mean over every (batch, position).
typedef enum AblateKind { ABLATE_NONE, ABLATE_ZERO, ABLATE_MEAN } AblateKind;
typedef struct AttnAblation {
    AblateKind kind;
    int layer, head;         // head −1: every head of the layer (its attention's output)
} AttnAblation;
// Activation patching (experiment.h; not a lesson key, never saved): one activation of this run
// replaced by another run's, inside the forward pass: the residual stream after layer `layer` at
// position `pos` (values: B·d_model, batch b's at b·d_model), or head `head`'s output of that layer
// at `pos` (its head_out row; values: B·d_v).
typedef enum PatchKind { PATCH_NONE, PATCH_RESIDUAL, PATCH_HEAD } PatchKind;
typedef struct AttnPatch {
    PatchKind kind;
    int layer, head, pos;
    const float *values;     // borrowed
} AttnPatch;
// The attention of a layer in a local/global pattern (Gemma 2/3, gpt-oss; Hugging Face's
// config.layer_types): a sliding-window layer sees the last sliding_window keys, a full one all.
#define LAYER_TYPE_TABLE(X)                                                                                      \
    X(LAYER_FULL, "full_attention", " (every earlier key)")                                                      \
    X(LAYER_SLIDING, "sliding_attention", " (the last sliding_window keys)")                                    \
    X(LAYER_LINEAR, "linear_attention", " (a recurrent state, no softmax)")
typedef enum LayerType { LAYER_TYPE_TABLE(ATTN_ENUM_ID) } LayerType;
enum { LAYER_TYPE_COUNT = 0 LAYER_TYPE_TABLE(ATTN_ENUM_ONE) };

// Conventions (issue 41): where real code differs on one small rule. Each is a model key with its
// default first (model_keys.h), shown in the formula note when it is not the default.
// The sliding window's W: W keys counting the query's own (i − W < j ≤ i: transformers' Mistral
// and Gemma sliding_window), or W keys before it and its own, W + 1 (i − W ≤ j ≤ i:
// FlashAttention's window_size = (W, 0)). Both the mask's window and a sliding layer's.
#define WINDOW_CONV_TABLE(X)                                                                                     \
    X(WINDOW_INCLUSIVE, "inclusive", " (W keys with the query's own: i − W < j ≤ i)")                             \
    X(WINDOW_FLASH, "flash", " (W + 1 keys: i − W ≤ j ≤ i, FlashAttention's window_size = (W, 0))")
typedef enum WindowConv { WINDOW_CONV_TABLE(ATTN_ENUM_ID) } WindowConv;
enum { WINDOW_CONV_COUNT = 0 WINDOW_CONV_TABLE(ATTN_ENUM_ONE) };
// A query row whose every key is masked: the softmax's own result (NaN with a −∞ fill, as
// PyTorch ≤ 2.4's softmax; uniform with a finite one), or zeros (FlashAttention, and SDPA ≥ 2.5's
// _safe_softmax), so its head_out row is 0.
#define MASKED_ROWS_TABLE(X)                                                                                     \
    X(MASKED_ROWS_SOFTMAX, "softmax", " (NaN with -inf as PyTorch <= 2.4, uniform with a finite fill)")           \
    X(MASKED_ROWS_ZERO, "zero", " (zeros, as FlashAttention and SDPA >= 2.5)")
typedef enum MaskedRows { MASKED_ROWS_TABLE(ATTN_ENUM_ID) } MaskedRows;
enum { MASKED_ROWS_COUNT = 0 MASKED_ROWS_TABLE(ATTN_ENUM_ONE) };
// ALiBi's bias: −m·(i − j) (the paper's), or m·j (BLOOM's build_alibi_tensor): each row moved by
// the constant m·i, so the same softmax from other scores.
#define ALIBI_FORM_TABLE(X)                                                                                      \
    X(ALIBI_RELATIVE, "relative", " (-m·(i - j), the paper's)")                                                   \
    X(ALIBI_KEY, "key", " (m·j, BLOOM's: the same softmax)")
typedef enum AlibiForm { ALIBI_FORM_TABLE(ATTN_ENUM_ID) } AlibiForm;
enum { ALIBI_FORM_COUNT = 0 ALIBI_FORM_TABLE(ATTN_ENUM_ONE) };
// FlashAttention's accumulator (model.flash): FlashAttention-2's (Dao 2023: acc unnormalised,
// divided by l once after the last block) or FlashAttention-1's (Dao et al. 2022, Algorithm 1: the
// output normalised after every block, each tile's P against its own max). flash.c.
#define FLASH_ACC_TABLE(X)                                                                                       \
    X(FLASH_ACC_FA2, "fa2", " (FlashAttention-2: divided by l once, at the end)")                                 \
    X(FLASH_ACC_FA1, "fa1", " (FlashAttention-1: the output rescaled and normalised every block)")
typedef enum FlashAcc { FLASH_ACC_TABLE(ATTN_ENUM_ID) } FlashAcc;
enum { FLASH_ACC_COUNT = 0 FLASH_ACC_TABLE(ATTN_ENUM_ONE) };
// The positions RoPE gives a decoding step's cache (model.decode with a sliding window and its
// StreamingLLM sinks): each token's own position (its place in the text), or its place within
// the cache as mit-han-lab/streaming-llm's pos_shift code does: the cache keeps the keys before
// RoPE and turns the kept ones (sinks, then the window) to 0, 1, … n − 1 at every step, the
// query to n − 1. decode.c.
#define STREAM_POS_TABLE(X)                                                                                      \
    X(STREAM_POS_TEXT, "text", " (each token's own position in the text)")                                        \
    X(STREAM_POS_CACHE, "cache", " (re-indexed within the cache, the keys turned again at every step: StreamingLLM's pos_shift)")
typedef enum StreamPos { STREAM_POS_TABLE(ATTN_ENUM_ID) } StreamPos;
enum { STREAM_POS_COUNT = 0 STREAM_POS_TABLE(ATTN_ENUM_ONE) };

// A "linear_attention" layer's recurrence (delta.c; Qwen3-Next's linear layers, Yang et al.,
// "Gated Delta Networks", ICLR 2025): the state S (d_k × d_v per head) after token t, with q̂, k̂
// L2-normalised: Gated DeltaNet S_t = α_t(I − β_t k̂_t k̂_tᵀ)S_{t−1} + β_t k̂_t v_tᵀ; DeltaNet the
// same with α = 1; plain linear attention S_t = S_{t−1} + k̂_t v_tᵀ. The output o_t = q̂_t·S_t / √d_k.
#define LINEAR_RULE_TABLE(X)                                                                                     \
    X(LINEAR_GATED_DELTA, "gated_delta", " (Gated DeltaNet)")                                                    \
    X(LINEAR_DELTA, "delta", " (DeltaNet, no gate)")                                                              \
    X(LINEAR_PLAIN, "linear", " (S += k·vᵀ)")
typedef enum LinearRule { LINEAR_RULE_TABLE(ATTN_ENUM_ID) } LinearRule;
enum { LINEAR_RULE_COUNT = 0 LINEAR_RULE_TABLE(ATTN_ENUM_ONE) };
// Which of the two equal forms gives a linear layer's output: the recurrence token by token
// (lin_out), or the masked matrix form (lin_parallel = lin_attn·lin_u): --compare
// set:model.linear_form=parallel shows them equal to float32's rounding.
#define LINEAR_FORM_TABLE(X)                                                                                     \
    X(LINEAR_RECURRENT, "recurrent", " (the state, token by token)")                                              \
    X(LINEAR_PARALLEL, "parallel", " (the matrix form A·U)")
typedef enum LinearForm { LINEAR_FORM_TABLE(ATTN_ENUM_ID) } LinearForm;
enum { LINEAR_FORM_COUNT = 0 LINEAR_FORM_TABLE(ATTN_ENUM_ONE) };

typedef struct AttnConfig {
    int n_layers;            // blocks in a row, each reading the one before (0 or 1: one)
    int d_model, n_heads;
    int d_k, d_v;            // per head
    bool qkv_bias, out_bias;
    float scale;             // scores = Q·Kᵀ / scale (default sqrt(d_k))
    float mask_fill;         // -1e9, -1e10, -INFINITY, ...
    bool residual_norm;      // residual_norm = LayerNorm(output + query)
    float norm_eps;
    NormKind norm;           // LayerNorm or RMSNorm
    bool norm_first;         // pre-norm (Llama, GPT-2, norm_first=True): s = x + attn(norm(x)),
                             // y = s + ffn(norm(s)); post-norm: z = norm(x + attn(x)), y = norm(z + ffn(z))
    int ffn_hidden;          // 0 = no feed-forward block
    FfnAct ffn_act;
    bool ffn_bias;           // b₁, b₂ (and b_g) present (Llama: none)
    int n_kv_heads;          // K/V heads (divides n_heads; 1 = multi-query); n_heads = classic
    RopeStyle rope;          // rotary position embedding of the split Q and K
    float rope_theta;        // its base (10000)
    RopeScale rope_scale;    // rope_scaling (type ROPE_SCALE_NONE: none)
    int rotary_dim;          // RoPE turns the first rotary_dim of d_k dimensions, the rest pass
                             // (GPT-J's rotary_dim, partial_rotary_factor·d_k); 0 = all d_k
    bool alibi;              // scores += -m_h·(i - j) (ALiBi), before the mask
    bool decode;             // also generate token by token from a K/V cache (decode.c)
    bool attn_sinks;         // gpt-oss: each head's learned sink logit joins its softmax as one more
                             // key without a value (weights.sinks): softmax over [scores, sink], the
                             // sink's column dropped, so a row sums to less than 1
    int flash_block_q, flash_block_k; // > 0: FlashAttention's tiled online softmax (flash.c)
    // the attention of 2026's model cards (mech.c; each off by default)
    float query_pre_attn_scalar; // Gemma 2/3: scores scaled by 1/√scalar instead of 1/√d_k (0: off)
    bool qk_norm;            // Qwen3, Gemma 3: RMSNorm of each head's q and k over d_k (weights q_norm,
                             // k_norm: γ of size d_k; norm_eps), after the split, before RoPE
    float softcap;           // Gemma 2's attn_logit_softcapping c: scores = c·tanh(scores / c), after the
                             // scale (and ALiBi's bias), before the mask (0: off)
    bool attn_gate;          // gated attention (Qwen3-Next): concat ⊙ σ(x·W_Gᵀ + b_G), x the layer's
                             // (normed) input, before W_O (weights w_gate, b_gate with qkv_bias)
    int n_layer_types;       // layer_types: a pattern of LayerType repeated over the layers (0: none)
    unsigned char layer_types[TRACE_MAX_LAYERS];
    int sliding_window;      // its sliding layers: query i sees keys i − W < j ≤ i (causal) (0: none)
    float rope_local_theta;  // Gemma 3's rope_local_base_freq: RoPE's base in the sliding layers (0: rope.theta)
    // multi-head latent attention (DeepSeek-V2/V3, mla.c; kv_lora_rank 0: off): K and V up-projected per
    // head from c_KV = RMSNorm(x·W_DKVᵀ) of rank kv_lora_rank, Q from c_Q = RMSNorm(x·W_DQᵀ) of rank
    // q_lora_rank (0: Q = x·W_Qᵀ), d_k = qk_nope_head_dim + qk_rope_head_dim, the last qk_rope_head_dim
    // of each q turned by RoPE and the key's shared across heads (k_pe = RoPE(x·W_KRᵀ))
    int q_lora_rank, kv_lora_rank, qk_rope_head_dim;
    // DeepSeek sparse attention (V3.2's lightning indexer, mla.c; index_topk 0: off): index_n_heads
    // heads of index_head_dim score every key, Σ_j w_j·ReLU(q_j·k), and each query keeps its top-k
    int index_n_heads, index_head_dim, index_topk;
    // a language model (vocab_size > 0): token ids in, embedding, the layers, the final
    // norm, logits over the vocabulary and their softmax at a temperature
    int vocab_size;
    // a vision transformer (n_classes > 0; Dosovitskiy et al. 2020, "An Image is Worth 16x16 Words"):
    // an image_h × image_w image cut into (image_h / patch)·(image_w / patch) patches of patch × patch
    // pixels, each flattened and embedded (x·W_Pᵀ + b_P), a learned [CLS] row prepended, learned
    // positions, the layers, the final norm, and the [CLS] row through the head (W_H, b_H) to
    // n_classes logits and their softmax (the lesson's "image"; input.image (B, image_h, image_w))
    int n_classes, image_h, image_w, patch_size;
    PosKind positions;
    int max_positions;       // learned positions: rows of pos_embed (≥ L)
    bool final_norm;         // the norm (model.norm, norm_eps) of the last layer's output
    bool tie_embeddings;     // logits = x·Eᵀ (no lm_head)
    float temperature;       // probs = softmax(logits / temperature)
    AttnAblation ablate;     // an experiment's (kind ABLATE_NONE: none)
    AttnPatch patch;         // an experiment's (kind PATCH_NONE: none)
    WindowConv window_conv;  // the conventions above (each 0: its default)
    MaskedRows masked_rows;
    AlibiForm alibi_form;
    FlashAcc flash_acc;
    StreamPos stream_pos;
    // the next token (sample.h): top-k (0: off), top-p (1: off)
    int top_k;
    float top_p;
    // an encoder–decoder (nn.Transformer; 0: none): the last 2·decoder_layers of the n_layers blocks are
    // the decoder, each of its layers two blocks: causal self-attention over the target (input.query),
    // then cross-attention to the encoder's output with the FFN; the first n_layers − 2·decoder_layers
    // blocks are the encoder over the source (input.key). encoder.norm and decoder.norm end each stack.
    int decoder_layers;
    LinearRule linear_rule;  // the "linear_attention" layers' recurrence (delta.c)
    LinearForm linear_form;  // … and the form their output comes from
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
    Tensor ffn_w_gate, ffn_b_gate; // SwiGLU's gate: (ffn_hidden, d_model), (ffn_hidden)
    Tensor sinks;            // (n_heads): gpt-oss's learned sink logit per head (model.attn_sinks)
    Tensor q_norm, k_norm;   // (d_k): QK-norm's γ (model.qk_norm)
    Tensor w_gate, b_gate;   // (H·d_v, d_model), (H·d_v): gated attention (model.attn_gate)
    // MLA: W_DQ (r_q, d_model), its norm's γ (r_q), W_DKV (r, d_model), γ (r), W_KR (d_rope, d_model);
    // with it w_q is W_UQ (H·d_k, r_q), w_k W_UK (H·d_nope, r), w_v W_UV (H·d_v, r)
    Tensor w_dq, q_latent_norm, w_dkv, kv_latent_norm, w_kr;
    // the sparse attention's indexer: W_Iq (H_I·d_I, d_model), W_Ik (d_I, d_model), W_Iw (H_I, d_model)
    Tensor w_iq, w_ik, w_iw;
    // a "linear_attention" layer (Qwen3-Next's in_proj_ba, A_log, dt_bias): β = σ(x·W_βᵀ) with W_β (H, d_model);
    // α = exp(−exp(A_log)·softplus(x·W_aᵀ + dt_bias)) with W_a (H, d_model), A_log (H), dt_bias (H)
    Tensor w_beta, w_alpha, a_log, dt_bias;
    // a language model's own (layer 0's AttnWeights only): embedding (V, C), learned positions
    // (P, C), the final norm's γ and β (C), the unembedding (V, C) unless tied to embed
    Tensor embed, pos_embed, final_norm_weight, final_norm_bias, lm_head;
    // a vision transformer's own (layer 0's): the patch embedding W_P (C, p²) and b_P (C), the
    // [CLS] row (C), the classifier head W_H (K, C) and b_H (K); pos_embed is (N + 1, C)
    Tensor patch_embed, patch_bias, cls_token, head, head_bias;
    // an encoder–decoder's (model.decoder_layers, layer 0's only): the encoder's final norm (nn.Transformer's
    // encoder.norm; the decoder's, decoder.norm, is final_norm_weight / bias)
    Tensor enc_norm_weight, enc_norm_bias;
} AttnWeights;


// The causal mask's alignment as a lesson names it ({"causal": "bottom_right"}), indexed by
// AttnInputs.causal_bottom_right.
#define CAUSAL_ALIGN_TABLE(X)                                                                                    \
    X(CAUSAL_TOP_LEFT, "top_left", " (query i sees keys j <= i, as PyTorch's SDPA)")                             \
    X(CAUSAL_BOTTOM_RIGHT, "bottom_right", " (j <= i + Lk - Lq, as FlashAttention >= 2.1)")
typedef enum CausalAlign { CAUSAL_ALIGN_TABLE(ATTN_ENUM_ID) } CausalAlign;
enum { CAUSAL_ALIGN_COUNT = 0 CAUSAL_ALIGN_TABLE(ATTN_ENUM_ONE) };

typedef struct AttnInputs {
    Tensor query;            // (B, Lq, d_model); a vision transformer's images (B, image_h, image_w)
    Tensor key;              // (B, Lk, d_model)
    Tensor value;            // (B, Lk, d_model)
    bool key_is_query, value_is_key;   // self-attention: shown once
    bool value_is_query;     // "value": "query" with a separate key (a copy of the query)
    MaskKind mask_kind;
    Tensor mask;             // (B, Lq, Lk) 0/1 when mask_kind != MASK_NONE
    int window;              // MASK_SLIDING: W
    int sink_tokens;         // MASK_SLIDING: the first S tokens stay visible (StreamingLLM), 0: none
    // MASK_CAUSAL aligned bottom-right (FlashAttention ≥ 2.1): query i sees keys
    // j ≤ i + Lk − Lq, so the last query sees every key; top-left (false, PyTorch's
    // SDPA is_causal): j ≤ i. The same mask when Lq = Lk. (Its names: CAUSAL_ALIGN_TABLE.)
    bool causal_bottom_right;
    Tensor ids;              // a language model's input: (B, L) token ids (whole floats); query is empty
    Tensor position_ids;     // (B, L) RoPE's position of each token (Hugging Face's position_ids:
                             // after a prompt of P tokens P, P+1, …; left padding shifts a row);
                             // absent: 0 … L−1
} AttnInputs;

void attn_weights_free(AttnWeights *w);
void attn_inputs_free(AttnInputs *in);

// Computes every stage into tr (which must be freshly initialised), w holding
// cfg->n_layers layers' weights (one when n_layers ≤ 1). With several layers the
// stages below are recorded per layer, named "l{l}." + name, layer l > 0 reading
// layer l − 1's output (ffn_out, ffn_sum, residual_norm, residual_sum or output: the
// block's last); input and mask come once, first. Shapes must
// already be validated (the lesson loader does it); returns false only on
// allocation failure. Stages: input [key_input value_input] [mask] q_proj k_proj
// v_proj q_heads k_heads v_heads [q_rope k_rope] [position_bias] scores masked_scores
// attn head_out concat output [residual_sum residual_norm] [ffn_hidden ffn_sum ffn_out];
// pre-norm: input [mask] attn_norm q_proj … output residual_sum [ffn_norm ffn_hidden ffn_sum];
// SwiGLU: ffn_gate before ffn_hidden.
// With n_kv_heads < n_heads, k_heads / v_heads (and k_rope) have n_kv_heads heads and
// query head h reads K/V head h / (n_heads / n_kv_heads). With flash_block_k, after
// head_out: flash_max flash_sum flash_out; with decode, at the end: cache_k cache_v
// decode_output.
bool attn_forward(const AttnConfig *cfg, const AttnWeights *w, const AttnInputs *in, Trace *tr);

// The stage indices the variants below read (-1: absent).
typedef struct AttnStages {
    int x_q, q_in, k_in, vh, bias, mask, masked, head_out, output;
    int x_k, scores, cache; // the key side's input, the scores, MLA's latent_cache (-1: none)
} AttnStages;

// FlashAttention's tiled online softmax (flash.c): the scores are visited one key block
// at a time per query row; the running max m, the running sum l and the rescaled partial
// output are kept, never the Lq×Lk matrix. Pushes flash_max, flash_scale, flash_sum
// (B, H, Lq, n_key_blocks), flash_p (B, H, Lq, Lk), flash_acc (B, H, Lq, n_key_blocks·d_v)
// and flash_out (B, H, Lq, d_v): every number of the loop, tile by tile. False on
// allocation failure.
bool attn_flash(const AttnConfig *cfg, const AttnStages *st, Trace *tr);
// Generation token by token from a K/V cache (decode.c): step t projects token t alone,
// turns its q and k to position t, appends k and v to the cache and computes one row of
// scores, softmax, attn·V and output from the cache. Pushes cache_k (B, Hkv, L, d_k),
// cache_v (B, Hkv, L, d_v), decode_scores and decode_attn (B, H, L, L: row t is step t's,
// the fill and 0 past t) and decode_output (B, L, C). False on allocation failure.
bool attn_decode(const AttnConfig *cfg, const AttnWeights *w, const AttnStages *st, Trace *tr);
// The layer type of layer l (layer_types repeated; LAYER_FULL without a pattern).
LayerType attn_layer_type(const AttnConfig *cfg, int l);
// The mechanisms of mech.c, each recording its stages (index, or -1 on allocation failure):
// QK-norm of the split heads hs (B, Hh, L, d_k) into stage id (Q_NORM / K_NORM) with γ g;
int attn_qk_norm(const AttnConfig *cfg, Trace *tr, StageId id, int hs, const Tensor *g);
// a sliding layer's own mask window_mask (B, Lq, Lk): the causal mask within the last sliding_window keys;
int attn_layer_mask(const AttnConfig *cfg, Trace *tr, int mask);
// the gate σ(x·W_Gᵀ + b_G) of input x (B, Lq, C) and the gated heads concat ⊙ gate (B, Lq, H·d_v).
int attn_gate_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x, int concat);
// Multi-head latent attention (mla.c) in place of the projections, the split and RoPE: fills
// st->q_in, k_in, vh from the stage x (B, L, C); false on allocation failure.
bool attn_mla_project(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x, AttnStages *st);
// Its absorbed form: q_absorbed and absorbed_scores (= scores) from st's stages (-1: allocation failure).
int attn_mla_absorb(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, const AttnStages *st);
// DeepSeek sparse attention: index_q, index_k, index_w, index_scores and topk_mask (the mask the
// softmax then reads: each query's top index_topk keys that mask allows) from x_q, x_k; its index.
int attn_dsa_mask(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x_q, int x_k, int mask);
// A "linear_attention" layer (delta.c) in place of the scores, the softmax and attn·V: from st->q_in, k_in
// (the split heads) and vh, lin_q, lin_k, [lin_beta, lin_alpha,] lin_state, lin_out and the matrix form
// lin_attn, lin_u, lin_parallel; st->head_out is the output model.linear_form names. x: the layer's input.
bool attn_linear_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x, AttnStages *st);
// Soft-capping of n scores s (scaled, with any bias) into cap, then the mask into ms and at
// (the softmax's input), as tensor_scale_mask without a cap: c·tanh(s / c) (Gemma 2).
void attn_softcap(float *cap, float *ms, float *at, const float *s, const float *mask, size_t n, float c, float fill);
// model.masked_rows "zero": each of the rows rows (width values each) whose mask row (cols
// values, 0 masked) masks every key set to 0.
void attn_zero_masked_rows(float *x, const float *mask, int rows, int cols, int width);
// RoPE's frequencies for the first rot dimensions of a head (rope.c): inv[p] for p < rot/2,
// theta^(−2p/rot) changed by cfg->rope_scale (dynamic NTK reads seq_len: the largest
// position + 1); returns the factor cos and sin are multiplied by (YaRN's, else 1).
float attn_rope_freqs(const AttnConfig *cfg, int rot, int seq_len, float *inv);
// x rotated to position pos (RoPE, one head row of d values) into y: the first rot
// values turn in pairs ((p, p + rot/2) for ROPE_HALF, (2p, 2p+1) interleaved) by
// pos·inv[p] (cos and sin times att), the values from rot on are copied (partial rotary).
void attn_rope_row(float *y, const float *x, int d, int rot, int pos, RopeStyle style, const float *inv, float att);
// The weight tensor of slot `slot` (a WeightSlot of stages.h: w_q, b_q, …).
Tensor *attn_weight(AttnWeights *w, int slot);
// The tensor the model applies for slot `slot`, or NULL when cfg turns it off: a bias
// without qkv_bias / out_bias / ffn_bias, a norm's β under RMSNorm, the sinks without
// attn_sinks, pos_embed without learned positions; lm_head is the embedding when tied.
// attn_forward computes each stage with its table row's (stages.h) and records them
// in Stage.weight / .bias: the exceptions to the table are stated there, once.
const Tensor *attn_param(const AttnConfig *cfg, const AttnWeights *w, WeightSlot slot);
// The documented deterministic generator behind a lesson's {"init": {"seed": N}}: per
// tensor index a splitmix64 stream starting at mix(seed ^ mix(0xD1B54A32D192ED03 *
// (index+1))) (mix: splitmix64's output function), element k = mix(start + (k+1) *
// 0x9E3779B97F4A7C15); value = (2u - 1) / sqrt(fan_in), u = (x >> 40) * 2^-24. The
// streams are independent: no tensor repeats another's values.
float attn_init_value(unsigned long long seed, int tensor_index, size_t elem_index, int fan_in);

#endif
