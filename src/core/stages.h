// stages.h — the table of every stage a forward pass can record and of every
// weight slot a lesson holds: one row each, read by the forward (trace_push),
// the lesson reader and writer (JSON names, the keys "steps" and "notes" may
// use), the edits (weights.NAME), the command line (--print STAGE) and the
// view (symbols in formulas). Adding a stage is a row here, the forward code
// that fills it, its view recipe and its language keys.
//
// In the manner of llm.c's parameter table: an X-macro makes the enum and the
// const rows from the same lines, so they cannot disagree.
#ifndef ATTNVIZ_STAGES_H
#define ATTNVIZ_STAGES_H

#include <stddef.h>

// What a stage does; the view picks its recipe (panels, animation, tooltip) from it.
typedef enum StageKind {
    STAGE_KIND_INPUT,        // input, key_input, value_input
    STAGE_KIND_MASK,         // mask: (B, Lq, Lk), 1 = may attend, 0 = masked
    STAGE_KIND_PROJECTION,   // q_proj, k_proj, v_proj: x·Wᵀ + b
    STAGE_KIND_SPLIT,        // q_heads, k_heads, v_heads: (B,L,H·d) -> (B,H,L,d)
    STAGE_KIND_SCORES,       // scores = Q·Kᵀ / scale
    STAGE_KIND_MASKED,       // masked_scores = masked_fill(mask == 0, fill)
    STAGE_KIND_SOFTMAX,      // attn = softmax(masked_scores)  (values in [0,1])
    STAGE_KIND_WEIGHTED_SUM, // head_out = attn·V
    STAGE_KIND_CONCAT,       // concat: (B,H,Lq,d_v) -> (B,Lq,H·d_v)
    STAGE_KIND_OUT_PROJ,     // output = concat·W_Oᵀ + b_O
    STAGE_KIND_ADD,          // residual_sum = output + query
    STAGE_KIND_NORM,         // residual_norm, ffn_out = LayerNorm(sum)·γ + β (weight γ, bias β), or
                             // RMSNorm(sum)·γ (Trace.norm_rms); pre-norm: attn_norm (of the input), ffn_norm
    STAGE_KIND_FFN_HIDDEN,   // ffn_hidden = act(z·W1ᵀ + b1) (Trace.ffn_act: relu, gelu, gelu tanh);
                             // SwiGLU: ffn_gate = silu(z·W_gᵀ + b_g), ffn_hidden = (z·W1ᵀ + b1) ⊙ ffn_gate
    STAGE_KIND_FFN_SUM,      // ffn_sum = h·W2ᵀ + b2 + z (operands h, z)
    STAGE_KIND_ROPE,         // q_rope, k_rope: each pair of the head turned by pos·θ_i
    STAGE_KIND_POS_BIAS,     // position_bias (1, H, Lq, Lk): ALiBi's -m_h·(i - j)
    STAGE_KIND_FLASH_STAT,   // flash_max, flash_sum (B, H, Lq, n_key_blocks): running max / sum
    STAGE_KIND_FLASH_OUT,    // flash_out (B, H, Lq, d_v): acc / l, = head_out (operands head_out, flash_sum, v)
    STAGE_KIND_CACHE,        // cache_k, cache_v (B, Hkv, L, d): the K/V cache after the last step
    STAGE_KIND_DECODE,       // decode_output (B, L, C): one row per generation step, = output
                             // (operands cache_k, cache_v, output)
    STAGE_KIND_DECODE_SCORES,// decode_scores (B, H, L, L): row t is step t's one row of scores q_t·cache_kᵀ,
                             // masked as the window / sinks say; the keys after t are not in the cache
                             // yet (the fill, as the causal pass has them); operands q, cache_k, ALiBi's bias
    STAGE_KIND_DECODE_ATTN,  // decode_attn (B, H, L, L): row t = softmax of step t's scores (0 past t)
    STAGE_KIND_FLASH_P,      // flash_scale (B, H, Lq, n_key_blocks): α = e^(m_old − m_new) per tile;
                             // flash_p (B, H, Lq, Lk): P = e^(s − m_new) of each score's tile
    STAGE_KIND_FLASH_ACC,    // flash_acc (B, H, Lq, n_key_blocks·d_v): acc = acc_old·α + P_tile·V_tile
                             // after each key block (operands flash_p, v, flash_scale)
    STAGE_KIND_EMBED,        // token_embed (B, L, C): row ids[b, l] of the embedding E (weight embed)
    STAGE_KIND_POS_EMBED,    // pos_embed (B, L, C): learned rows P[l] (weight pos_embed) or sinusoidal
    STAGE_KIND_VOCAB_SOFTMAX,// probs (B, L, V): softmax(logits / temperature) over the vocabulary
    // The backward view (backward_trace.c appends them after the forward stages, step BACKWARD):
    // each "grad.NAME" is dL/d(stage NAME), same shape; "grad.LAYER.WEIGHT" a weight's gradient.
    STAGE_KIND_GRAD_TARGET,  // grad.target (B, L, V): the one-hot of each position's next token (0: not counted)
    STAGE_KIND_GRAD_LOSS,    // grad.logits = (probs − onehot) / (N·T) (operands probs, grad.target)
    STAGE_KIND_GRAD_LINEAR,  // dX = dY·W through the one linear map that read X (operand dY, weight W)
    STAGE_KIND_GRAD_WEIGHT,  // dW = dYᵀ·X of a linear map (operands dY, X)
    STAGE_KIND_GRAD_ATTN,    // dA = dO·Vᵀ (operands grad.head_out, v)
    STAGE_KIND_GRAD_JACOBIAN,// (B, H, Lk, Lk): softmax's Jacobian J = diag(a) − a·aᵀ of one row a of attn
                             // (backward_jacobian_row's; operands attn, grad.attn)
    STAGE_KIND_GRAD_SOFTMAX, // dS = A ⊙ (dA − rowsum(dA ⊙ A)) (operands attn, grad.attn)
    STAGE_KIND_GRAD_QK,      // dQ = dS·K / scale, dK = dSᵀ·Q / scale (operands grad.scores, the other side)
    STAGE_KIND_GRAD_PASS,    // any other stage's gradient: the sum its readers pass back (operands: up to 3 of them)
    STAGE_KIND_HEAD_NORM,    // q_norm, k_norm (B, H, L, d_k): QK-norm, RMSNorm of each head's row · γ (d_k);
                             // MLA's q_latent_norm, kv_latent_norm (B, L, r): of each latent row · γ (r)
    STAGE_KIND_SOFTCAP,      // capped_scores (B, H, Lq, Lk) = c·tanh(scores / c) (Gemma 2's soft-capping)
    STAGE_KIND_GATE,         // attn_gate (B, Lq, H·d_v) = σ(x·W_Gᵀ + b_G) (gated attention)
    STAGE_KIND_GATED,        // gated (B, Lq, H·d_v) = concat ⊙ attn_gate (operands concat, attn_gate)
    // multi-head latent attention (DeepSeek-V2/V3, mla.c) and DeepSeek-V3.2's sparse attention
    STAGE_KIND_MLA_KEY,      // MLA's k_heads (B, H, L, d_nope + d_rope) = cat(k_proj's head h, k_pe) (operands k_proj,
                             // k_pe): the kind mla.c gives that stage in place of its row's SPLIT
    STAGE_KIND_MLA_CACHE,    // latent_cache (B, L, r + d_rope) = cat(c_KV, the turned k_pe): what MLA caches
    STAGE_KIND_MLA_ABSORB,   // q_absorbed (B, H, L, r) = q_nope·W_UK(h) (operand q_heads, weight w_k)
    STAGE_KIND_MLA_SCORES,   // absorbed_scores (B, H, Lq, Lk) = (q_absorbed·c_KVᵀ + q_pe·k_peᵀ) / scale
                             // (operands q_absorbed, latent_cache, q_rope): = scores
    STAGE_KIND_INDEX_SCORES, // index_scores (B, Lq, Lk) = Σ_j w_j·ReLU(q_j·k) (operands index_q, index_k, index_w)
    STAGE_KIND_TOPK_MASK,    // topk_mask (B, Lq, Lk): 1 for each query's top index_topk keys the mask allows
    // linear attention and Gated DeltaNet (delta.c): a "linear_attention" layer of model.layer_types
    STAGE_KIND_LIN_L2,       // lin_q, lin_k (B, H, L, d_k): each head's q and k divided by √(Σ x² + 1e-6) (Qwen3-Next's l2norm)
    STAGE_KIND_LIN_GATE,     // lin_alpha (B, L, H) = exp(−exp(A_log)·softplus(x·W_aᵀ + dt_bias)) (lin_beta = σ(x·W_βᵀ)
                             // is a GATE)
    STAGE_KIND_LIN_STATE,    // lin_state (B, H, L, d_k·d_v): row t is S_t = α_t(I − β_t k_t k_tᵀ)S_{t−1} + β_t k_t v_tᵀ
                             // (operands lin_k, v_heads, lin_beta; the gates' lin_alpha read by name)
    STAGE_KIND_LIN_OUT,      // lin_out (B, H, L, d_v): o_t = q_t·S_t / √d_k (operands lin_q, lin_state)
    STAGE_KIND_LIN_ATTN,     // lin_attn (B, H, L, L): the matrix form's A = (q·kᵀ / √d_k) ⊙ Γ ⊙ causal (operands lin_q, lin_k)
    STAGE_KIND_LIN_U,        // lin_u (B, H, L, d_v): the pseudo-values u_t = β_t(v_t − Σ_{j<t} Γ_tj (k_t·k_j) u_j)
    STAGE_KIND_GRAD_PARAM,   // the gradient of a weight that is not a plain dYᵀ·X (its `weight`): a bias or
                             // β = Σ_r dY, γ = Σ_r dY ⊙ x̂, an embedding table's rows (the positions of
                             // each token, or each position), W₁ / W_gate = (dY ⊙ act′(u))ᵀ·x and their
                             // biases, the sink logits = −Σ_r (1 − Σa[r])·Σ(dA ⊙ a)[r] per head
                             // (operands: dY, the forward stage's input, the forward stage)
    STAGE_KIND_COUNT
} StageKind;

// The timeline: each step shows one or more stages. X(ID, name): the name is
// the step's stable English id (a lesson's "steps" and "notes" keys, i18n keys).
#define STEP_TABLE(X)                                                                                            \
    X(INPUT, "input") X(EMBED, "embed") X(NORM, "norm") X(PROJECTION, "projection") X(SPLIT, "split") X(QK_NORM, "qk_norm") X(ROPE, "rope") X(SCORES, "scores")          \
    X(MASK, "mask") X(SOFTMAX, "softmax") X(WEIGHTED_SUM, "weighted_sum") X(FLASH, "flash") X(STATE, "state")   \
    X(CONCAT, "concat") X(GATE, "gate") X(OUTPUT, "output") X(ADD_NORM, "add_norm") X(FFN, "ffn") X(DECODE, "decode")                \
    X(PREDICT, "predict") X(BACKWARD, "backward")

typedef enum StepId {
#define STEP_ENUM(id, name) STEP_##id,
    STEP_TABLE(STEP_ENUM)
#undef STEP_ENUM
    STEP_COUNT
} StepId;

// The weight slots, in the order the seeded generator numbers them (never
// reorder: a lesson's "init" weights depend on it). From WEIGHT_EMBED on, the model's
// own (a language model's embedding, final norm and unembedding): they live in layer
// 0's AttnWeights only, at the top level of "weights", seeded as tensors 1000 + k. X(ID, JSON name, field of
// AttnWeights, symbol as a formula shows it, symbol as PyTorch stores it (out, in)).
#define WEIGHT_TABLE(X)                                                                                          \
    X(W_Q, "w_q", w_q, "W_Qᵀ", "W_Q")                                                                           \
    X(B_Q, "b_q", b_q, "b_Q", "b_Q")                                                                            \
    X(W_K, "w_k", w_k, "W_Kᵀ", "W_K")                                                                           \
    X(B_K, "b_k", b_k, "b_K", "b_K")                                                                            \
    X(W_V, "w_v", w_v, "W_Vᵀ", "W_V")                                                                           \
    X(B_V, "b_v", b_v, "b_V", "b_V")                                                                            \
    X(W_O, "w_o", w_o, "W_Oᵀ", "W_O")                                                                           \
    X(B_O, "b_o", b_o, "b_O", "b_O")                                                                            \
    X(FFN_W1, "ffn_w1", ffn_w1, "W₁ᵀ", "W₁")                                                                    \
    X(FFN_B1, "ffn_b1", ffn_b1, "b₁", "b₁")                                                                     \
    X(FFN_W2, "ffn_w2", ffn_w2, "W₂ᵀ", "W₂")                                                                    \
    X(FFN_B2, "ffn_b2", ffn_b2, "b₂", "b₂")                                                                     \
    X(NORM_WEIGHT, "norm_weight", norm_weight, "γ", "γ")                                                        \
    X(NORM_BIAS, "norm_bias", norm_bias, "β", "β")                                                              \
    X(FFN_NORM_WEIGHT, "ffn_norm_weight", ffn_norm_weight, "γ", "γ")                                            \
    X(FFN_NORM_BIAS, "ffn_norm_bias", ffn_norm_bias, "β", "β")                                                  \
    X(FFN_W_GATE, "ffn_w_gate", ffn_w_gate, "W_gᵀ", "W_g")                                                      \
    X(FFN_B_GATE, "ffn_b_gate", ffn_b_gate, "b_g", "b_g")                                                      \
    X(SINKS, "sinks", sinks, "sinks", "sinks")                                                                  \
    X(Q_NORM, "q_norm", q_norm, "γ_q", "γ_q")                                                                   \
    X(K_NORM, "k_norm", k_norm, "γ_k", "γ_k")                                                                   \
    X(W_GATE, "w_gate", w_gate, "W_Gᵀ", "W_G")                                                                  \
    X(B_GATE, "b_gate", b_gate, "b_G", "b_G")                                                                   \
    X(W_DQ, "w_dq", w_dq, "W_DQᵀ", "W_DQ")                                                                      \
    X(Q_LATENT_NORM, "q_latent_norm", q_latent_norm, "γ_cQ", "γ_cQ")                                            \
    X(W_DKV, "w_dkv", w_dkv, "W_DKVᵀ", "W_DKV")                                                                 \
    X(KV_LATENT_NORM, "kv_latent_norm", kv_latent_norm, "γ_cKV", "γ_cKV")                                       \
    X(W_KR, "w_kr", w_kr, "W_KRᵀ", "W_KR")                                                                      \
    X(W_IQ, "w_iq", w_iq, "W_Iqᵀ", "W_Iq")                                                                      \
    X(W_IK, "w_ik", w_ik, "W_Ikᵀ", "W_Ik")                                                                      \
    X(W_IW, "w_iw", w_iw, "W_Iwᵀ", "W_Iw")                                                                      \
    X(W_BETA, "w_beta", w_beta, "W_βᵀ", "W_β")                                                                  \
    X(W_ALPHA, "w_alpha", w_alpha, "W_aᵀ", "W_a")                                                               \
    X(A_LOG, "a_log", a_log, "A_log", "A_log")                                                                  \
    X(DT_BIAS, "dt_bias", dt_bias, "dt_bias", "dt_bias")                                                        \
    X(EMBED, "embed", embed, "E", "E")                                                                          \
    X(POS_EMBED, "pos_embed", pos_embed, "P", "P")                                                              \
    X(FINAL_NORM_WEIGHT, "final_norm_weight", final_norm_weight, "γ", "γ")                                      \
    X(FINAL_NORM_BIAS, "final_norm_bias", final_norm_bias, "β", "β")                                            \
    X(LM_HEAD, "lm_head", lm_head, "W_Uᵀ", "W_U")                                                              \
    X(PATCH_EMBED, "patch_embed", patch_embed, "W_Pᵀ", "W_P")                                                   \
    X(PATCH_BIAS, "patch_bias", patch_bias, "b_P", "b_P")                                                       \
    X(CLS_TOKEN, "cls_token", cls_token, "[CLS]", "[CLS]")                                                      \
    X(HEAD, "head", head, "W_Hᵀ", "W_H")                                                                        \
    X(HEAD_BIAS, "head_bias", head_bias, "b_H", "b_H")                                                       \
    X(ENC_NORM_WEIGHT, "enc_norm_weight", enc_norm_weight, "γ", "γ") /* nn.Transformer's encoder.norm */         \
    X(ENC_NORM_BIAS, "enc_norm_bias", enc_norm_bias, "β", "β")

typedef enum WeightSlot {
    WEIGHT_NONE = -1,
#define WEIGHT_ENUM(id, json, field, sym, plain) WEIGHT_##id,
    WEIGHT_TABLE(WEIGHT_ENUM)
#undef WEIGHT_ENUM
    WEIGHT_COUNT
} WeightSlot;

// Every stage. X(ID, name, kind, step, symbol in formulas, weight slot, bias slot).
#define STAGE_TABLE(X)                                                                                           \
    X(INPUT, "input", INPUT, INPUT, "x", NONE, NONE)                                                             \
    X(KEY_INPUT, "key_input", INPUT, INPUT, "key", NONE, NONE)                                                   \
    X(VALUE_INPUT, "value_input", INPUT, INPUT, "value", NONE, NONE)                                             \
    X(MASK, "mask", MASK, INPUT, "mask", NONE, NONE)                                                             \
    X(PATCHES, "patches", INPUT, INPUT, "x", NONE, NONE)                                                         \
    X(PATCH_EMBED, "patch_embed", PROJECTION, EMBED, "e", PATCH_EMBED, PATCH_BIAS)                              \
    X(CLS_CONCAT, "cls_concat", INPUT, EMBED, "t", CLS_TOKEN, NONE)                                             \
    X(TOKEN_EMBED, "token_embed", EMBED, EMBED, "e", EMBED, NONE)                                               \
    X(POS_EMBED, "pos_embed", POS_EMBED, EMBED, "p", POS_EMBED, NONE)                                           \
    X(EMBEDDING, "embedding", ADD, EMBED, "x", NONE, NONE)                                                       \
    X(ATTN_NORM, "attn_norm", NORM, NORM, "n₁", NORM_WEIGHT, NORM_BIAS)                                          \
    X(KV_LATENT, "kv_latent", PROJECTION, PROJECTION, "c_KV", W_DKV, NONE)                                     \
    X(KV_LATENT_NORM, "kv_latent_norm", HEAD_NORM, PROJECTION, "ĉ_KV", KV_LATENT_NORM, NONE)                \
    X(K_PE, "k_pe", PROJECTION, PROJECTION, "k_R", W_KR, NONE)                                                 \
    X(Q_LATENT, "q_latent", PROJECTION, PROJECTION, "c_Q", W_DQ, NONE)                                         \
    X(Q_LATENT_NORM, "q_latent_norm", HEAD_NORM, PROJECTION, "ĉ_Q", Q_LATENT_NORM, NONE)                     \
    X(Q_PROJ, "q_proj", PROJECTION, PROJECTION, "Q", W_Q, B_Q)                                                   \
    X(K_PROJ, "k_proj", PROJECTION, PROJECTION, "K", W_K, B_K)                                                   \
    X(V_PROJ, "v_proj", PROJECTION, PROJECTION, "V", W_V, B_V)                                                   \
    X(Q_HEADS, "q_heads", SPLIT, SPLIT, "Q", NONE, NONE)                                                         \
    X(K_HEADS, "k_heads", SPLIT, SPLIT, "K", NONE, NONE)                                                         \
    X(V_HEADS, "v_heads", SPLIT, SPLIT, "V", NONE, NONE)                                                         \
    X(Q_NORM, "q_norm", HEAD_NORM, QK_NORM, "Q_n", Q_NORM, NONE)                                               \
    X(K_NORM, "k_norm", HEAD_NORM, QK_NORM, "K_n", K_NORM, NONE)                                               \
    X(Q_ROPE, "q_rope", ROPE, ROPE, "Q_rot", NONE, NONE)                                                         \
    X(K_ROPE, "k_rope", ROPE, ROPE, "K_rot", NONE, NONE)                                                         \
    X(LATENT_CACHE, "latent_cache", MLA_CACHE, ROPE, "cache", NONE, NONE)                                      \
    X(POSITION_BIAS, "position_bias", POS_BIAS, SCORES, "position_bias", NONE, NONE)                             \
    X(SCORES, "scores", SCORES, SCORES, "scores", NONE, NONE)                                                    \
    X(Q_ABSORBED, "q_absorbed", MLA_ABSORB, SCORES, "q_A", W_K, NONE)                                          \
    X(ABSORBED_SCORES, "absorbed_scores", MLA_SCORES, SCORES, "scores_A", NONE, NONE)                          \
    X(INDEX_Q, "index_q", PROJECTION, SCORES, "q_I", W_IQ, NONE)                                               \
    X(INDEX_K, "index_k", PROJECTION, SCORES, "k_I", W_IK, NONE)                                               \
    X(INDEX_W, "index_w", PROJECTION, SCORES, "w_I", W_IW, NONE)                                               \
    X(INDEX_SCORES, "index_scores", INDEX_SCORES, SCORES, "I", NONE, NONE)                                     \
    X(TOPK_MASK, "topk_mask", TOPK_MASK, MASK, "mask_k", NONE, NONE)                                                \
    X(CAPPED_SCORES, "capped_scores", SOFTCAP, SCORES, "capped", NONE, NONE)                                   \
    X(WINDOW_MASK, "window_mask", MASK, MASK, "mask_W", NONE, NONE)                                             \
    X(MASKED_SCORES, "masked_scores", MASKED, MASK, "masked_scores", NONE, NONE)                                 \
    X(ATTN, "attn", SOFTMAX, SOFTMAX, "attn", SINKS, NONE)                                                       \
    X(HEAD_OUT, "head_out", WEIGHTED_SUM, WEIGHTED_SUM, "head_out", NONE, NONE)                                  \
    X(FLASH_MAX, "flash_max", FLASH_STAT, FLASH, "m", NONE, NONE)                                                \
    X(FLASH_SCALE, "flash_scale", FLASH_P,    FLASH, "α", NONE, NONE)                                            \
    X(FLASH_P, "flash_p", FLASH_P, FLASH, "P", NONE, NONE)                                                    \
    X(FLASH_SUM, "flash_sum", FLASH_STAT, FLASH, "l", NONE, NONE)                                                \
    X(FLASH_ACC, "flash_acc", FLASH_ACC, FLASH, "acc", NONE, NONE)                                              \
    X(FLASH_OUT, "flash_out", FLASH_OUT, FLASH, "flash_out", NONE, NONE)                                         \
    X(LIN_Q, "lin_q", LIN_L2, STATE, "q̂", NONE, NONE)                                                           \
    X(LIN_K, "lin_k", LIN_L2, STATE, "k̂", NONE, NONE)                                                           \
    X(LIN_BETA, "lin_beta", GATE, STATE, "β", W_BETA, NONE)                                                     \
    X(LIN_ALPHA, "lin_alpha", LIN_GATE, STATE, "α", W_ALPHA, NONE)                                              \
    X(LIN_STATE, "lin_state", LIN_STATE, STATE, "S", NONE, NONE)                                                \
    X(LIN_OUT, "lin_out", LIN_OUT, STATE, "o", NONE, NONE)                                                      \
    X(LIN_ATTN, "lin_attn", LIN_ATTN, STATE, "A", NONE, NONE)                                                   \
    X(LIN_U, "lin_u", LIN_U, STATE, "U", NONE, NONE)                                                            \
    X(LIN_PARALLEL, "lin_parallel", WEIGHTED_SUM, STATE, "o_A", NONE, NONE)                                     \
    X(CONCAT, "concat", CONCAT, CONCAT, "concat", NONE, NONE)                                                    \
    X(ATTN_GATE, "attn_gate", GATE, GATE, "G", W_GATE, B_GATE)                                                 \
    X(GATED, "gated", GATED, GATE, "gated", NONE, NONE)                                                         \
    X(OUTPUT, "output", OUT_PROJ, OUTPUT, "output", W_O, B_O)                                                    \
    X(RESIDUAL_SUM, "residual_sum", ADD, ADD_NORM, "s", NONE, NONE)                                              \
    X(RESIDUAL_NORM, "residual_norm", NORM, ADD_NORM, "z", NORM_WEIGHT, NORM_BIAS)                               \
    X(FFN_NORM, "ffn_norm", NORM, FFN, "n₂", FFN_NORM_WEIGHT, FFN_NORM_BIAS)                                     \
    X(FFN_GATE, "ffn_gate", FFN_HIDDEN, FFN, "g", FFN_W_GATE, FFN_B_GATE)                                        \
    X(FFN_HIDDEN, "ffn_hidden", FFN_HIDDEN, FFN, "h", FFN_W1, FFN_B1)                                            \
    X(FFN_SUM, "ffn_sum", FFN_SUM, FFN, "f", FFN_W2, FFN_B2)                                                     \
    X(FFN_OUT, "ffn_out", NORM, FFN, "y", FFN_NORM_WEIGHT, FFN_NORM_BIAS)                                        \
    X(CACHE_K, "cache_k", CACHE, DECODE, "cache_k", NONE, NONE)                                                  \
    X(CACHE_V, "cache_v", CACHE, DECODE, "cache_v", NONE, NONE)                                                  \
    X(DECODE_SCORES, "decode_scores", DECODE_SCORES, DECODE, "s_t", NONE, NONE)                                    \
    X(DECODE_ATTN, "decode_attn", DECODE_ATTN, DECODE, "a_t", SINKS, NONE)                                     \
    X(DECODE_OUTPUT, "decode_output", DECODE, DECODE, "decode_output", NONE, NONE)                               \
    X(ENC_NORM, "enc_norm", NORM, FFN, "m", ENC_NORM_WEIGHT, ENC_NORM_BIAS)                                       \
    X(FINAL_NORM, "final_norm", NORM, PREDICT, "h", FINAL_NORM_WEIGHT, FINAL_NORM_BIAS)                           \
    X(CLS_OUT, "cls_out", INPUT, PREDICT, "h_CLS", NONE, NONE)                                                   \
    X(LOGITS, "logits", PROJECTION, PREDICT, "logits", LM_HEAD, HEAD_BIAS)                                       \
    X(PROBS, "probs", VOCAB_SOFTMAX, PREDICT, "probs", NONE, NONE)                                               \
    X(GRAD_TARGET, "grad.target", GRAD_TARGET, BACKWARD, "y", NONE, NONE)                                        \
    X(GRAD_LOGITS, "grad.logits", GRAD_LOSS, BACKWARD, "∂L/∂logits", NONE, NONE)                                 \
    X(GRAD_LINEAR, "grad.linear", GRAD_LINEAR, BACKWARD, "∂L/∂x", NONE, NONE)                                    \
    X(GRAD_WEIGHT, "grad.weight", GRAD_WEIGHT, BACKWARD, "∂L/∂W", NONE, NONE)                                    \
    X(GRAD_ATTN, "grad.attn", GRAD_ATTN, BACKWARD, "∂L/∂attn", NONE, NONE)                                       \
    X(GRAD_JACOBIAN, "grad.jacobian", GRAD_JACOBIAN, BACKWARD, "J", NONE, NONE)                                  \
    X(GRAD_SOFTMAX, "grad.softmax", GRAD_SOFTMAX, BACKWARD, "∂L/∂S", NONE, NONE)                                 \
    X(GRAD_QK, "grad.qk", GRAD_QK, BACKWARD, "∂L/∂Q", NONE, NONE)                                                \
    X(GRAD_STAGE, "grad.stage", GRAD_PASS, BACKWARD, "∂L/∂x", NONE, NONE)                                       \
    X(GRAD_PARAM, "grad.param", GRAD_PARAM, BACKWARD, "∂L/∂θ", NONE, NONE)

typedef enum StageId {
#define STAGE_ENUM(id, name, kind, step, sym, w, b) STAGE_##id,
    STAGE_TABLE(STAGE_ENUM)
#undef STAGE_ENUM
    STAGE_ID_COUNT
} StageId;

typedef struct StageInfo {
    const char *name;     // "q_proj": --dump, --print, a lesson's "steps" keys
    StageKind kind;
    StepId step;
    const char *symbol;   // in formulas: "Q"
    WeightSlot weight, bias; // the parameters it applies (WEIGHT_NONE: none)
} StageInfo;

typedef struct WeightInfo {
    const char *name;     // the lesson's "weights" key: "w_q" (its Tensor: lesson_weight)
    const char *symbol;   // as a formula shows it: "W_Qᵀ"
    const char *plain;    // as PyTorch stores it, (out, in): "W_Q"
} WeightInfo;

extern const StageInfo STAGE_INFO[STAGE_ID_COUNT];
extern const WeightInfo WEIGHT_INFO[WEIGHT_COUNT];
extern const char *const STEP_NAMES[STEP_COUNT];

// The stage (weight slot) with this name, or -1.
int stage_id_of(const char *name);
int weight_slot_of(const char *name);

#endif
