// attention.c — multi-head attention forward pass, recording every stage.
//
// Shapes in PyTorch order. B batch, Lq/Lk query/key lengths, C = d_model,
// H heads, dk/dv per-head sizes.
#include "attention.h"

#include "parallel.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void attn_weights_free(AttnWeights *w)
{
    for (int slot = 0; slot < WEIGHT_COUNT; slot++) tensor_free(attn_weight(w, slot));
}

void attn_inputs_free(AttnInputs *in)
{
    tensor_free(&in->query);
    tensor_free(&in->key);
    tensor_free(&in->value);
    tensor_free(&in->mask);
    tensor_free(&in->position_ids);
    tensor_free(&in->ids);
}

static const float *data_or_null(const Tensor *t) { return t && tensor_present(t) ? t->data : NULL; }

static float *D(Trace *tr, int i) { return tr->stages[i].t.data; }

// ---- the parameters each stage applies -------------------------------------------

const Tensor *attn_param(const AttnConfig *cfg, const AttnWeights *w, WeightSlot slot)
{
    // the exceptions to stages.h's table, all here: a bias only when the model has it
    // (RMSNorm has none), gpt-oss's sinks and learned positions only when on, tied logits
    // apply the embedding
    switch (slot) {
    case WEIGHT_NONE: return NULL;
    case WEIGHT_B_Q: case WEIGHT_B_K: case WEIGHT_B_V: if (!cfg->qkv_bias) return NULL; break;
    case WEIGHT_B_O: if (!cfg->out_bias) return NULL; break;
    case WEIGHT_FFN_B1: case WEIGHT_FFN_B2: case WEIGHT_FFN_B_GATE: if (!cfg->ffn_bias) return NULL; break;
    case WEIGHT_NORM_BIAS: case WEIGHT_FFN_NORM_BIAS: case WEIGHT_FINAL_NORM_BIAS: case WEIGHT_ENC_NORM_BIAS:
        if (cfg->norm == NORM_RMS) return NULL;
        break;
    case WEIGHT_SINKS: if (!cfg->attn_sinks) return NULL; break;
    case WEIGHT_POS_EMBED: if (cfg->positions != POS_LEARNED) return NULL; break; // sinusoidal: computed
    case WEIGHT_LM_HEAD: // a vision transformer's logits apply its classifier head
        if (cfg->n_classes > 0) slot = WEIGHT_HEAD;
        else if (cfg->tie_embeddings) slot = WEIGHT_EMBED;
        break;
    case WEIGHT_HEAD_BIAS: if (cfg->n_classes == 0) return NULL; break;
    default: break;
    }
    return attn_weight((AttnWeights *)w, slot);
}

// Every stage's weight and bias (Stage.weight / .bias, what the view and the backward pass
// read): its table row's slots as attn_param applies them, in its layer's AttnWeights (the
// model's own stages: layer 0's, which holds the model's own weights).
static void bind_params(const AttnConfig *cfg, const AttnWeights *w, Trace *tr)
{
    for (int s = 0; s < tr->n; s++) {
        Stage *st = &tr->stages[s];
        const WeightSlot ws = STAGE_INFO[st->id].weight, bs = STAGE_INFO[st->id].bias;
        const AttnWeights *lw = &w[st->layer > 0 && ws < WEIGHT_EMBED ? st->layer : 0]; // (the model's own: layer 0's)
        st->weight = attn_param(cfg, lw, ws);
        st->bias = attn_param(cfg, lw, bs);
    }
}

// One of the norms into stage dst, with its table row's γ and β: LayerNorm or RMSNorm.
static void block_norm(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int dst, int src, int rows)
{
    const StageInfo *row = &STAGE_INFO[tr->stages[dst].id];
    const float *g = data_or_null(attn_param(cfg, w, row->weight)), *b = data_or_null(attn_param(cfg, w, row->bias));
    if (cfg->norm == NORM_RMS)
        tensor_rms_norm(D(tr, dst), D(tr, src), g, rows, cfg->d_model, cfg->norm_eps);
    else
        tensor_layer_norm(D(tr, dst), D(tr, src), g, b, rows, cfg->d_model, cfg->norm_eps);
}

// (B, L, H·d) -> (B, H, L, d)
static void split_heads(float *dst, const float *src, int B, int L, int H, int d)
{
    for (int b = 0; b < B; b++)
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++)
                memcpy(dst + (((size_t)b * H + h) * L + l) * d,
                       src + ((size_t)b * L + l) * H * d + (size_t)h * d, (size_t)d * sizeof(float));
}

// (B, H, L, d) -> (B, L, H·d)
static void concat_heads(float *dst, const float *src, int B, int L, int H, int d)
{
    for (int b = 0; b < B; b++)
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++)
                memcpy(dst + ((size_t)b * L + l) * H * d + (size_t)h * d,
                       src + (((size_t)b * H + h) * L + l) * d, (size_t)d * sizeof(float));
}

// ---- positions: RoPE and ALiBi ----------------------------------------------------

double attn_alibi_slope(int h, int H)
{
    // Press et al. (2022): for H a power of two, m_h = 2^(-8(h+1)/H); otherwise the
    // slopes of the closest smaller power of two P, then every other slope of 2P.
    int P = 1;
    while (P * 2 <= H) P *= 2;
    if (h < P) return exp2(-8.0 * (h + 1) / P);
    return exp2(-8.0 * (2 * (h - P) + 1) / (2.0 * P));
}

// (B, Hh, L, d): token l of batch b, every head, turned by its position · θ_p, into dst.
static void rope_apply(float *dst, const float *src, const Trace *tr, int Hh, int d, const AttnConfig *cfg)
{
    const int B = tr->batch, L = tr->len_q;
    for (int bh = 0; bh < B * Hh; bh++)
        for (int l = 0; l < L; l++)
            attn_rope_row(dst + ((size_t)bh * L + l) * d, src + ((size_t)bh * L + l) * d, d, tr->rotary_dim,
                          trace_position(tr, bh / Hh, l), cfg->rope, trace_rope_inv(tr, tr->layer), tr->rope_att);
}

// Passes 4-7 for one (batch, head): its slices of scores, masked_scores, attn
// and head_out, which no other head writes.
typedef struct HeadJob {
    const AttnConfig *cfg;
    Trace *tr;
    int qh, kh, vh, bias, mask, scores, capped, masked, attn, head_out; // stage indices (bias, mask, capped -1: none)
    int H, Hkv, Lq, Lk, dk, dv;
    const float *sinks; // (H) gpt-oss's sink logits, or NULL
} HeadJob;

static void head_task(void *ctx, int bh)
{
    const HeadJob *j = ctx;
    Trace *tr = j->tr;
    const int b = bh / j->H, h = bh % j->H, Lq = j->Lq, Lk = j->Lk;
    // the K/V head this query head shares (repeat_interleave / repeat_kv)
    const size_t bkv = (size_t)b * j->Hkv + (size_t)(h / (j->H / j->Hkv));
    const size_t n = (size_t)Lq * Lk;
    float *s = D(tr, j->scores) + (size_t)bh * n, *ms = D(tr, j->masked) + (size_t)bh * n;
    float *at = D(tr, j->attn) + (size_t)bh * n;
    tensor_matmul_bt(s, D(tr, j->qh) + (size_t)bh * Lq * j->dk, D(tr, j->kh) + bkv * Lk * j->dk,
                     Lq, j->dk, Lk);
    // scores / scale (+ position bias), masked_fill and the softmax's input in one pass
    const float *mask = j->mask >= 0 ? D(tr, j->mask) + (size_t)b * n : NULL;
    tensor_scale_mask(s, ms, at, j->bias >= 0 ? D(tr, j->bias) + (size_t)h * n : NULL, j->capped >= 0 ? NULL : mask, n,
                      j->cfg->scale, j->cfg->mask_fill);
    if (j->capped >= 0) // Gemma 2: c·tanh(s / c) between the scale and the mask
        attn_softcap(D(tr, j->capped) + (size_t)bh * n, ms, at, s, mask, n, j->cfg->softcap, j->cfg->mask_fill);
    if (j->sinks) tensor_softmax_rows_sink(at, Lq, Lk, j->sinks[h]); // gpt-oss: one more logit, no value
    else tensor_softmax_rows(at, Lq, Lk);
    if (mask && j->cfg->masked_rows == MASKED_ROWS_ZERO) attn_zero_masked_rows(at, mask, Lq, Lk, Lk);
    // the weights past a causal row's last key are 0: their products are skipped (exactly)
    tensor_matmul_zero_tail(D(tr, j->head_out) + (size_t)bh * Lq * j->dv, at, D(tr, j->vh) + bkv * Lk * j->dv,
                            Lq, Lk, j->dv);
}

// An experiment's ablation (AttnConfig.ablate) of head a->head of head_out (B, H, L, d), or of
// every head (a->head −1: the layer's attention): zeros, or each head's mean over every (batch,
// position), summed in double.
static void ablate_head(float *ho, const AttnAblation *a, int B, int H, int L, int d)
{
    for (int h = a->head < 0 ? 0 : a->head; h < (a->head < 0 ? H : a->head + 1); h++)
        for (int k = 0; k < d; k++) {
            double mean = 0.0;
            for (int b = 0; b < B && a->kind == ABLATE_MEAN; b++)
                for (int l = 0; l < L; l++) mean += (double)ho[(((size_t)b * H + h) * L + l) * d + k];
            mean /= (double)B * L;
            for (int b = 0; b < B; b++)
                for (int l = 0; l < L; l++) ho[(((size_t)b * H + h) * L + l) * d + k] = (float)mean;
        }
}

// ALiBi: position_bias[0, h, i, j] = -m_h·(i - j) (BLOOM's form: m_h·j), added to the scaled
// scores (its stage, or -1).
static int alibi_bias(Trace *tr, int H, int Lq, int Lk, AlibiForm form)
{
    int pb_s[4] = {1, H, Lq, Lk}, bias = trace_push(tr, STAGE_POSITION_BIAS, 4, pb_s, -1, -1, -1);
    if (bias < 0) return -1;
    float *pb = D(tr, bias);
    for (int h = 0; h < H; h++) {
        float m = (float)attn_alibi_slope(h, H);
        for (int i = 0; i < Lq; i++)
            for (int jj = 0; jj < Lk; jj++)
                pb[((size_t)h * Lq + i) * Lk + jj] = form == ALIBI_KEY ? m * (float)jj : -(m * (float)(i - jj));
    }
    return bias;
}

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        if ((expr) < 0) return false;                                                              \
    } while (0)

// Stage dst = src·Wᵀ + b (rows × in -> out) with the W and b of its table row.
static void linear_stage(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int dst, int src, int rows, int in,
                         int out)
{
    const StageInfo *row = &STAGE_INFO[tr->stages[dst].id];
    const Tensor *W = attn_param(cfg, w, row->weight), *b = attn_param(cfg, w, row->bias);
    tensor_linear(D(tr, dst), D(tr, src), W->data, b ? b->data : NULL, rows, in, out);
}

// Passes 1b-3b of a block, on the stages x_q, x_k, x_v: [attn_norm], the projections, the
// head split and [RoPE]; fills st->x_q (what the projections read), q_in, k_in and vh.
static bool project_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x_q, int x_k, int x_v,
                            AttnStages *st)
{
    const int B = tr->batch, Lq = tr->len_q, Lk = tr->len_k;
    const int C = cfg->d_model, H = cfg->n_heads, dk = cfg->d_k, dv = cfg->d_v, Hkv = trace_kv_heads(tr);
    // pass 1b, pre-norm: attention reads the normalised input, n₁ = norm(x); the residual adds x
    // itself (self-attention, the loader's rule, or an encoder–decoder's cross-attention, whose keys
    // and values are the encoder's output as it is: nn.TransformerDecoderLayer's mha(norm2(x), memory))
    if (cfg->norm_first) {
        int xs[3] = {B, Lq, C}, x_in = x_q;
        TRY(x_q = trace_push_raw(tr, STAGE_ATTN_NORM, 3, xs, x_in, -1, -1));
        block_norm(cfg, w, tr, x_q, x_in, B * Lq);
        if (x_k == x_in) x_k = x_v = x_q;
    }

    if (cfg->kv_lora_rank > 0) return attn_mla_project(cfg, w, tr, x_q, st); // MLA (mla.c)
    st->x_k = x_k;
    const bool linear = attn_layer_type(cfg, tr->layer) == LAYER_LINEAR; // (delta.c: no QK-norm, no RoPE)

    // pass 2: projections y = x·Wᵀ + b
    int qs[3] = {B, Lq, H * dk}, ks[3] = {B, Lk, Hkv * dk}, vs[3] = {B, Lk, Hkv * dv};
    int q_proj, k_proj, v_proj;
    TRY(q_proj = trace_push_raw(tr, STAGE_Q_PROJ, 3, qs, x_q, -1, -1));
    TRY(k_proj = trace_push_raw(tr, STAGE_K_PROJ, 3, ks, x_k, -1, -1));
    TRY(v_proj = trace_push_raw(tr, STAGE_V_PROJ, 3, vs, x_v, -1, -1));
    linear_stage(cfg, w, tr, q_proj, x_q, B * Lq, C, H * dk);
    linear_stage(cfg, w, tr, k_proj, x_k, B * Lk, C, Hkv * dk);
    linear_stage(cfg, w, tr, v_proj, x_v, B * Lk, C, Hkv * dv);

    tr->stages[k_proj].key_rows = tr->stages[v_proj].key_rows = true;

    // pass 3: split heads (B, L, H·d) -> (B, H, L, d); K and V into their Hkv heads
    int qh_s[4] = {B, H, Lq, dk}, kh_s[4] = {B, Hkv, Lk, dk}, vh_s[4] = {B, Hkv, Lk, dv};
    int qh, kh, vh;
    TRY(qh = trace_push_raw(tr, STAGE_Q_HEADS, 4, qh_s, q_proj, -1, -1));
    TRY(kh = trace_push_raw(tr, STAGE_K_HEADS, 4, kh_s, k_proj, -1, -1));
    TRY(vh = trace_push_raw(tr, STAGE_V_HEADS, 4, vh_s, v_proj, -1, -1));
    split_heads(D(tr, qh), D(tr, q_proj), B, Lq, H, dk);
    split_heads(D(tr, kh), D(tr, k_proj), B, Lk, Hkv, dk);
    split_heads(D(tr, vh), D(tr, v_proj), B, Lk, Hkv, dv);

    tr->stages[kh].key_rows = tr->stages[vh].key_rows = true;
    if (cfg->qk_norm && !linear) { // pass 3a: QK-norm, each head's q and k RMS-normalised (mech.c)
        TRY(qh = attn_qk_norm(cfg, tr, STAGE_Q_NORM, qh, &w->q_norm));
        TRY(kh = attn_qk_norm(cfg, tr, STAGE_K_NORM, kh, &w->k_norm));
    }

    // pass 3b: RoPE turns each pair of Q's and K's head dimensions by pos·θ_p,
    // positions 0..L-1, so that q_i·k_j depends on i - j only through the angles
    int q_in = qh, k_in = kh;
    if (cfg->rope != ROPE_NONE && !linear) {
        TRY(q_in = trace_push(tr, STAGE_Q_ROPE, 4, qh_s, qh, -1, -1));
        TRY(k_in = trace_push(tr, STAGE_K_ROPE, 4, kh_s, kh, -1, -1));
        rope_apply(D(tr, q_in), D(tr, qh), tr, H, dk, cfg);
        rope_apply(D(tr, k_in), D(tr, kh), tr, Hkv, dk, cfg);
        tr->stages[k_in].key_rows = true;
    }
    st->x_q = x_q, st->q_in = q_in, st->k_in = k_in, st->vh = vh;
    return true;
}

// Passes 4-7 of a block, one (batch, head) at a time: each head's scores, masking, softmax
// and weighted sum are done together while its rows are in cache, the heads shared among
// the core's threads (parallel.h); then [the flash stages]. Reads st->q_in, k_in, vh and
// mask; fills st->bias, masked and head_out.
static bool heads_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, AttnStages *st)
{
    const int B = tr->batch, Lq = tr->len_q, Lk = tr->len_k;
    const int H = cfg->n_heads, dk = cfg->d_k, dv = cfg->d_v, Hkv = trace_kv_heads(tr);
    // pass 4: scores = Q·Kᵀ / scale, (B, H, Lq, Lk)
    int sc_s[4] = {B, H, Lq, Lk};
    int scores, capped = -1, masked, attn, head_out, bias = -1, mask = st->mask;
    if (cfg->alibi) TRY(bias = alibi_bias(tr, H, Lq, Lk, cfg->alibi_form));
    TRY(scores = trace_push_raw(tr, STAGE_SCORES, 4, sc_s, st->q_in, st->k_in, bias));
    if (cfg->kv_lora_rank > 0) TRY(attn_mla_absorb(cfg, w, tr, st)); // the absorbed form's scores, = scores
    if (cfg->index_topk > 0) TRY(mask = attn_dsa_mask(cfg, w, tr, st->x_q, st->x_k, mask)); // the indexer's top-k
    if (cfg->softcap > 0.0f) TRY(capped = trace_push_raw(tr, STAGE_CAPPED_SCORES, 4, sc_s, scores, -1, -1));
    // pass 5: masked_fill(mask == 0, fill); the mask broadcasts over heads (a sliding layer's: its own window)
    if (attn_layer_type(cfg, tr->layer) == LAYER_SLIDING) TRY(mask = attn_layer_mask(cfg, tr, mask));
    TRY(masked = trace_push_raw(tr, STAGE_MASKED_SCORES, 4, sc_s, capped >= 0 ? capped : scores, mask, -1));
    // pass 6: softmax over keys (gpt-oss: with each head's sink logit, the stage's weight)
    TRY(attn = trace_push_raw(tr, STAGE_ATTN, 4, sc_s, masked, -1, -1));
    // pass 7: head_out = attn·V, (B, H, Lq, dv)
    int ho_s[4] = {B, H, Lq, dv};
    TRY(head_out = trace_push_raw(tr, STAGE_HEAD_OUT, 4, ho_s, attn, st->vh, -1));
    const Tensor *sinks = attn_param(cfg, w, STAGE_INFO[STAGE_ATTN].weight);
    HeadJob job = {cfg, tr, st->q_in, st->k_in, st->vh, bias, mask, scores, capped, masked, attn, head_out,
                   H, Hkv, Lq, Lk, dk, dv, sinks ? sinks->data : NULL};
    parallel_for(B * H, (double)Lq * Lk * (dk + dv) * B * H, head_task, &job);
    if (cfg->ablate.kind != ABLATE_NONE && cfg->ablate.layer == tr->layer)
        ablate_head(D(tr, head_out), &cfg->ablate, B, H, Lq, dv);
    const AttnPatch *pt = &cfg->patch;
    if (pt->kind == PATCH_HEAD && pt->layer == tr->layer) // activation patching: another run's head_out row
        for (int b = 0; b < B; b++)
            memcpy(D(tr, head_out) + (((size_t)b * H + pt->head) * Lq + pt->pos) * dv, pt->values + (size_t)b * dv,
                   (size_t)dv * sizeof(float));
    st->bias = bias, st->mask = mask, st->masked = masked, st->head_out = head_out;
    // FlashAttention: the same head_out again, tile by tile with an online softmax
    return cfg->flash_block_k <= 0 || attn_flash(cfg, st, tr);
}

// Passes 8-9 of a block: concat = the heads side by side, output = concat·W_Oᵀ + b_O.
// Reads st->head_out; fills st->output. gate: with model.attn_gate (a full layer's; a linear one has none).
static bool out_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, AttnStages *st, bool gate)
{
    const int B = tr->batch, Lq = tr->len_q, C = cfg->d_model, H = cfg->n_heads, dv = cfg->d_v;
    // pass 8: concat heads (B, H, Lq, dv) -> (B, Lq, H·dv)
    int cc_s[3] = {B, Lq, H * dv}, out_s[3] = {B, Lq, C}, concat;
    TRY(concat = trace_push_raw(tr, STAGE_CONCAT, 3, cc_s, st->head_out, -1, -1));
    concat_heads(D(tr, concat), D(tr, st->head_out), B, Lq, H, dv);
    if (cfg->attn_gate && gate) TRY(concat = attn_gate_forward(cfg, w, tr, st->x_q, concat)); // W_O reads the gated heads
    // pass 9: output projection, (B, Lq, C)
    TRY(st->output = trace_push_raw(tr, STAGE_OUTPUT, 3, out_s, concat, -1, -1));
    linear_stage(cfg, w, tr, st->output, concat, B * Lq, H * dv, C);
    return true;
}

// The position-wise feed-forward block on stage x: [ffn_norm] [ffn_gate] ffn_hidden ffn_sum
// [ffn_out]; *out: its last stage.
static bool ffn_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x, int *out)
{
    const int B = tr->batch, Lq = tr->len_q, C = cfg->d_model, F = cfg->ffn_hidden;
    int hs[3] = {B, Lq, F}, out_s[3] = {B, Lq, C};
    int fn = x, fg = -1, fh, fs, fo;
    if (cfg->norm_first) { // n₂ = norm(s), the FFN's input; s is added back
        TRY(fn = trace_push_raw(tr, STAGE_FFN_NORM, 3, out_s, x, -1, -1));
        block_norm(cfg, w, tr, fn, x, B * Lq);
    }
    if (cfg->ffn_act == FFN_SWIGLU) { // g = silu(n·W_gᵀ + b_g)
        TRY(fg = trace_push_raw(tr, STAGE_FFN_GATE, 3, hs, fn, -1, -1));
        linear_stage(cfg, w, tr, fg, fn, B * Lq, C, F);
        for (size_t i = 0; i < tr->stages[fg].t.size; i++) D(tr, fg)[i] = tensor_activation(FFN_SWIGLU, D(tr, fg)[i]);
    }
    // h = act(n·W₁ᵀ + b₁), or (n·W₁ᵀ + b₁) ⊙ g
    TRY(fh = trace_push_raw(tr, STAGE_FFN_HIDDEN, 3, hs, fn, fg, -1));
    linear_stage(cfg, w, tr, fh, fn, B * Lq, C, F);
    float *h = D(tr, fh);
    if (fg >= 0)
        for (size_t i = 0; i < tr->stages[fh].t.size; i++) h[i] *= D(tr, fg)[i];
    else
        for (size_t i = 0; i < tr->stages[fh].t.size; i++) h[i] = tensor_activation((int)cfg->ffn_act, h[i]);
    // f = h·W₂ᵀ + b₂ + (the FFN's input: z post-norm, s pre-norm)
    TRY(fs = trace_push_raw(tr, STAGE_FFN_SUM, 3, out_s, fh, x, -1));
    linear_stage(cfg, w, tr, fs, fh, B * Lq, F, C);
    float *y = D(tr, fs);
    for (size_t i = 0; i < tr->stages[fs].t.size; i++) y[i] += D(tr, x)[i];
    *out = fs;
    if (!cfg->norm_first) {
        TRY(fo = trace_push_raw(tr, STAGE_FFN_OUT, 3, out_s, fs, -1, -1));
        block_norm(cfg, w, tr, fo, fs, B * Lq);
        *out = fo;
    }
    return true;
}

// One block: attention (with its variants), the residual and norms, the feed-forward, on
// the stages x_q, x_k, x_v (the model's input, or the previous layer's output), recording
// into tr->layer. *out: the block's output (its last stage before the decode loop).
static bool layer_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x_q, int x_k, int x_v,
                          int mask, int *out)
{
    AttnStages ast = {.mask = mask, .bias = -1, .output = -1, .x_k = -1, .scores = -1, .cache = -1};
    const bool linear = attn_layer_type(cfg, tr->layer) == LAYER_LINEAR; // a recurrent state in place of softmax
    if (!project_forward(cfg, w, tr, x_q, x_k, x_v, &ast) ||
        !(linear ? attn_linear_forward(cfg, w, tr, ast.x_q, &ast) : heads_forward(cfg, w, tr, &ast)) ||
        !out_forward(cfg, w, tr, &ast, !linear))
        return false;

    // pass 10: the residual connection and the norms, and the position-wise feed-forward
    // block. Post-norm (nn.TransformerEncoderLayer's default): z = norm(x + output), then
    // y = norm(z + ffn(z)), each norm recorded as two stages (the sum, then the norm).
    // Pre-norm (Llama, GPT-2): s = x + output, then y = s + ffn(norm(s)), no final norm.
    const int B = tr->batch, Lq = tr->len_q;
    int out_s[3] = {B, Lq, cfg->d_model}, x = ast.output;
    if (cfg->residual_norm) {
        int rs, rn;
        TRY(rs = trace_push(tr, STAGE_RESIDUAL_SUM, 3, out_s, ast.output, x_q, -1));
        float *sum = D(tr, rs);
        for (size_t i = 0; i < tr->stages[rs].t.size; i++) sum[i] = D(tr, ast.output)[i] + D(tr, x_q)[i];
        x = rs;
        if (!cfg->norm_first) {
            TRY(rn = trace_push(tr, STAGE_RESIDUAL_NORM, 3, out_s, rs, -1, -1));
            block_norm(cfg, w, tr, rn, rs, B * Lq);
            x = rn;
        }
    }
    if (cfg->ffn_hidden > 0 && !ffn_forward(cfg, w, tr, x, &x)) return false;
    *out = x;
    // generation token by token from the K/V cache: decode_output must equal output
    return !cfg->decode || attn_decode(cfg, w, &ast, tr);
}

// An encoder–decoder (nn.Transformer): the encoder's blocks over the source x_src (input.key), its
// final norm enc_norm (encoder.norm: the memory, in the last encoder block), then each decoder
// layer as two blocks over the target x_tgt (input.query): causal self-attention (its own mask, no
// FFN), and cross-attention to the memory with the FFN; final_norm (decoder.norm) the model's own
// last stage. tr->len_q / len_k are each block's while it runs, the cross-attention's after.
static bool encdec_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x_tgt, int x_src)
{
    const int B = tr->batch, Lt = tr->len_q, Ls = tr->len_k, C = cfg->d_model;
    const int E = cfg->n_layers - 2 * cfg->decoder_layers, NL = cfg->n_layers;
    AttnConfig self = *cfg;
    self.ffn_hidden = 0; // nn.TransformerDecoderLayer: the FFN comes after the cross-attention
    tr->encoder_blocks = E, tr->mask_kind = MASK_CAUSAL, tr->causal_offset = 0;
    int x = x_src, mem, y = x_tgt, out, mask, ms[3] = {B, Lt, Lt}, src_s[3] = {B, Ls, C}, tgt_s[3] = {B, Lt, C};
    tr->len_q = tr->len_k = Ls;
    for (int l = 0; l < E; l++, x = out)
        if ((tr->layer = l), !layer_forward(cfg, &w[l], tr, x, x, x, -1, &out)) return false;
    TRY(mem = trace_push_raw(tr, STAGE_ENC_NORM, 3, src_s, x, -1, -1)); // the memory every cross-attention reads
    block_norm(cfg, w, tr, mem, x, B * Ls);
    for (int l = E; l < NL; l += 2) {
        tr->layer = l, tr->len_q = tr->len_k = Lt;
        TRY(mask = trace_push(tr, STAGE_MASK, 3, ms, -1, -1, -1)); // generate_square_subsequent_mask, as 0/1
        for (int b = 0; b < B; b++)
            for (int i = 0; i < Lt; i++)
                for (int j = 0; j <= i; j++) D(tr, mask)[((size_t)b * Lt + i) * Lt + j] = 1.0f;
        if (!layer_forward(&self, &w[l], tr, y, y, y, mask, &y)) return false;
        tr->layer = l + 1, tr->len_k = Ls;
        if (!layer_forward(cfg, &w[l + 1], tr, y, mem, mem, -1, &y)) return false;
    }
    int fn;
    tr->layer = -1; // decoder.norm: the model's own last stage, as a language model's final_norm
    TRY(fn = trace_push_raw(tr, STAGE_FINAL_NORM, 3, tgt_s, y, -1, -1));
    block_norm(cfg, w, tr, fn, y, B * Lt);
    for (int s = 0; s < tr->n; s++) { // an encoder block's rows are the source's, a decoder self-attention's the target's
        TraceBlock k = trace_block(tr, tr->stages[s].layer);
        if (k == BLOCK_ENCODER) tr->stages[s].key_rows = true;
        if (k == BLOCK_DECODER_SELF) tr->stages[s].key_rows = false;
    }
    return true;
}

// A language model's first stages: token_embed = E[ids], [pos_embed, embedding = e + p]; the
// stage layer 0 reads into *x (-1 on allocation failure).
static int embed_forward(const AttnConfig *cfg, const AttnWeights *w, const AttnInputs *in, Trace *tr)
{
    const int B = tr->batch, L = tr->len_q, C = cfg->d_model;
    int s3[3] = {B, L, C}, te, pe, x;
    tr->vocab_size = cfg->vocab_size, tr->pos_kind = (int)cfg->positions, tr->temperature = cfg->temperature;
    tr->tied = cfg->tie_embeddings;
    if (!(tr->ids = malloc((size_t)B * L * sizeof(int)))) return -1;
    for (int r = 0; r < B * L; r++) tr->ids[r] = (int)in->ids.data[r];
    if ((te = trace_push_raw(tr, STAGE_TOKEN_EMBED, 3, s3, -1, -1, -1)) < 0) return -1;
    for (int r = 0; r < B * L; r++)
        memcpy(D(tr, te) + (size_t)r * C, w->embed.data + (size_t)in->ids.data[r] * C, (size_t)C * sizeof(float));
    if (cfg->positions == POS_NONE) return te;
    if ((pe = trace_push_raw(tr, STAGE_POS_EMBED, 3, s3, -1, -1, -1)) < 0) return -1;
    float *p = D(tr, pe);
    for (int b = 0; b < B; b++)
        for (int l = 0; l < L; l++) {
            float *row = p + ((size_t)b * L + l) * C;
            if (cfg->positions == POS_LEARNED) {
                memcpy(row, w->pos_embed.data + (size_t)l * C, (size_t)C * sizeof(float));
                continue;
            }
            // sinusoidal (Vaswani et al. 2017), as the Annotated Transformer computes it in
            // float32: div_i = exp(2i·(−ln 10000 / C)), sin(l·div_i) and cos(l·div_i)
            for (int i = 0; 2 * i < C; i++) {
                float div = expf((float)(2 * i) * (float)(-log(10000.0) / C)), a = (float)l * div;
                row[2 * i] = sinf(a);
                if (2 * i + 1 < C) row[2 * i + 1] = cosf(a);
            }
        }
    if ((x = trace_push_raw(tr, STAGE_EMBEDDING, 3, s3, te, pe, -1)) < 0) return -1;
    for (size_t i = 0; i < tr->stages[x].t.size; i++) D(tr, x)[i] = D(tr, te)[i] + p[i];
    return x;
}

// A vision transformer's first stages (Dosovitskiy et al. 2020, "An Image is Worth 16x16 Words",
// eq. 1; timm's PatchEmbed is a Conv2d of kernel and stride p): patches (B, N, p²) = each p × p
// patch of the image, in raster order, flattened row by row; patch_embed (B, N, C) = patches·W_Pᵀ
// + b_P; cls_concat (B, N + 1, C) = [CLS] row, then patch_embed; pos_embed (B, N + 1, C) the
// learned rows P; embedding = cls_concat + pos_embed. Returns the stage layer 0 reads (-1: memory).
static int vision_embed_forward(const AttnConfig *cfg, const AttnWeights *w, const AttnInputs *in, Trace *tr)
{
    const int B = tr->batch, L = tr->len_q, C = cfg->d_model, p = cfg->patch_size, N = L - 1, Ww = cfg->image_w;
    const int cols = Ww / p;
    int sp[3] = {B, N, p * p}, se[3] = {B, N, C}, s3[3] = {B, L, C}, pt, pe, ct, po, x;
    tr->vocab_size = cfg->n_classes, tr->n_classes = cfg->n_classes, tr->patch = p;
    tr->pos_kind = (int)POS_LEARNED, tr->temperature = 1.0f;
    if ((pt = trace_push_raw(tr, STAGE_PATCHES, 3, sp, -1, -1, -1)) < 0) return -1;
    for (int b = 0; b < B; b++)
        for (int n = 0; n < N; n++)
            for (int i = 0; i < p; i++)
                for (int j = 0; j < p; j++)
                    D(tr, pt)[(((size_t)b * N + n) * p + i) * p + j] =
                        in->query.data[((size_t)b * cfg->image_h + (n / cols) * p + i) * Ww + (n % cols) * p + j];
    if ((pe = trace_push_raw(tr, STAGE_PATCH_EMBED, 3, se, pt, -1, -1)) < 0) return -1;
    linear_stage(cfg, w, tr, pe, pt, B * N, p * p, C);
    if ((ct = trace_push_raw(tr, STAGE_CLS_CONCAT, 3, s3, pe, -1, -1)) < 0) return -1;
    for (int b = 0; b < B; b++) {
        memcpy(D(tr, ct) + (size_t)b * L * C, w->cls_token.data, (size_t)C * sizeof(float));
        memcpy(D(tr, ct) + ((size_t)b * L + 1) * C, D(tr, pe) + (size_t)b * N * C, (size_t)N * C * sizeof(float));
    }
    if ((po = trace_push_raw(tr, STAGE_POS_EMBED, 3, s3, -1, -1, -1)) < 0) return -1;
    for (int b = 0; b < B; b++) memcpy(D(tr, po) + (size_t)b * L * C, w->pos_embed.data, (size_t)L * C * sizeof(float));
    if ((x = trace_push_raw(tr, STAGE_EMBEDDING, 3, s3, ct, po, -1)) < 0) return -1;
    for (size_t i = 0; i < tr->stages[x].t.size; i++) D(tr, x)[i] = D(tr, ct)[i] + D(tr, po)[i];
    return x;
}

// A language model's last stages: [final_norm], logits = x·W_Uᵀ, probs = softmax(logits / T).
// A vision transformer's: final_norm of every row (as timm's ViT), cls_out (B, 1, C) its [CLS]
// row, logits (B, 1, K) = cls_out·W_Hᵀ + b_H, probs their softmax.
static bool predict_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x)
{
    const bool vis = cfg->n_classes > 0;
    const int B = tr->batch, L = tr->len_q, C = cfg->d_model, V = vis ? cfg->n_classes : cfg->vocab_size;
    const int Lo = vis ? 1 : L; // the rows the head reads
    int s3[3] = {B, L, C}, sv[3] = {B, Lo, V}, lg, pr;
    if (cfg->final_norm) {
        int fn;
        TRY(fn = trace_push_raw(tr, STAGE_FINAL_NORM, 3, s3, x, -1, -1));
        block_norm(cfg, w, tr, fn, x, B * L);
        x = fn;
    }
    if (vis) {
        int co, s1[3] = {B, 1, C};
        TRY(co = trace_push_raw(tr, STAGE_CLS_OUT, 3, s1, x, -1, -1));
        for (int b = 0; b < B; b++)
            memcpy(D(tr, co) + (size_t)b * C, D(tr, x) + (size_t)b * L * C, (size_t)C * sizeof(float));
        x = co;
    }
    TRY(lg = trace_push_raw(tr, STAGE_LOGITS, 3, sv, x, -1, -1)); // tied: W_U is E; vision: W_H (attn_param)
    linear_stage(cfg, w, tr, lg, x, B * Lo, C, V);
    TRY(pr = trace_push_raw(tr, STAGE_PROBS, 3, sv, lg, -1, -1));
    const float *z = D(tr, lg);
    float *p = D(tr, pr);
    for (size_t i = 0; i < tr->stages[pr].t.size; i++) p[i] = z[i] / cfg->temperature;
    tensor_softmax_rows(p, B * Lo, V);
    return true;
}

// The mechanisms' facts the views explain, and the sliding layers' RoPE frequencies (Gemma 3:
// rope_local_base_freq, without the global layers' scaling). False on allocation failure.
static bool mech_trace(const AttnConfig *cfg, Trace *tr, int longest)
{
    tr->softcap = cfg->softcap, tr->query_pre_attn_scalar = cfg->query_pre_attn_scalar;
    tr->qk_norm = cfg->qk_norm, tr->attn_gate = cfg->attn_gate, tr->sliding_window = cfg->sliding_window;
    tr->mla_rank = cfg->kv_lora_rank, tr->mla_q_rank = cfg->q_lora_rank;
    tr->mla_rope = cfg->kv_lora_rank > 0 ? cfg->qk_rope_head_dim : 0;
    tr->index_heads = cfg->index_n_heads, tr->index_dim = cfg->index_head_dim, tr->index_topk = cfg->index_topk;
    for (int l = 0; l < TRACE_MAX_LAYERS; l++) {
        tr->layer_sliding[l] = attn_layer_type(cfg, l) == LAYER_SLIDING;
        tr->layer_linear[l] = attn_layer_type(cfg, l) == LAYER_LINEAR;
    }
    tr->linear_rule = (int)cfg->linear_rule, tr->linear_form = (int)cfg->linear_form;
    if (cfg->rope == ROPE_NONE || cfg->rope_local_theta <= 0.0f) return true;
    AttnConfig local = *cfg;
    local.rope_theta = cfg->rope_local_theta, local.rope_scale.type = ROPE_SCALE_NONE;
    tr->rope_theta_local = cfg->rope_local_theta;
    if (!(tr->rope_inv_local = malloc((size_t)(tr->rotary_dim / 2 + 1) * sizeof(float)))) return false;
    attn_rope_freqs(&local, tr->rotary_dim, longest, tr->rope_inv_local);
    return true;
}

bool attn_forward(const AttnConfig *cfg, const AttnWeights *w, const AttnInputs *in, Trace *tr)
{
    const bool lm = cfg->vocab_size > 0; // a language model: token ids in (query empty)
    const bool vis = cfg->n_classes > 0;  // a vision transformer: images in (query (B, image_h, image_w))
    const int n_patches = vis ? (cfg->image_h / cfg->patch_size) * (cfg->image_w / cfg->patch_size) : 0;
    const int B = lm ? in->ids.shape[0] : in->query.shape[0],
              Lq = lm ? in->ids.shape[1] : vis ? n_patches + 1 : in->query.shape[1],
              Lk = lm || vis ? Lq : in->key.shape[1];
    const int C = cfg->d_model, H = cfg->n_heads, dk = cfg->d_k, dv = cfg->d_v;
    const int Hkv = cfg->n_kv_heads > 0 ? cfg->n_kv_heads : H;
    tr->batch = B, tr->len_q = Lq, tr->len_k = Lk, tr->d_model = C;
    tr->n_heads = H, tr->d_k = dk, tr->d_v = dv;
    tr->scale = cfg->scale, tr->mask_fill = cfg->mask_fill, tr->norm_eps = cfg->norm_eps;
    tr->mask_kind = (int)in->mask_kind;
    tr->n_kv_heads = Hkv, tr->rope = (int)cfg->rope, tr->rope_theta = cfg->rope_theta;
    tr->alibi = cfg->alibi, tr->window = in->mask_kind == MASK_SLIDING ? in->window : 0;
    tr->sink_tokens = in->mask_kind == MASK_SLIDING ? in->sink_tokens : 0;
    tr->causal_offset = in->mask_kind == MASK_CAUSAL && in->causal_bottom_right ? Lk - Lq : 0;
    tr->window_conv = (int)cfg->window_conv, tr->masked_rows = (int)cfg->masked_rows, tr->alibi_form = (int)cfg->alibi_form;
    tr->flash_acc = (int)cfg->flash_acc, tr->stream_pos = (int)cfg->stream_pos;
    tr->rotary_dim = cfg->rope == ROPE_NONE ? 0 : cfg->kv_lora_rank > 0 ? cfg->qk_rope_head_dim // MLA: its last d_rope
                   : cfg->rotary_dim > 0 ? cfg->rotary_dim : dk;
    int longest = Lq; // the largest position + 1 (dynamic NTK's sequence length)
    if (cfg->rope != ROPE_NONE) {
        if (tensor_present(&in->position_ids)) { // RoPE's positions, the trace's own copy
            tr->positions = malloc((size_t)B * Lq * sizeof(int));
            if (!tr->positions) return false;
            for (size_t i = 0; i < (size_t)B * Lq; i++) {
                tr->positions[i] = (int)in->position_ids.data[i];
                if (tr->positions[i] + 1 > longest) longest = tr->positions[i] + 1;
            }
        }
        tr->rope_inv = malloc((size_t)(tr->rotary_dim / 2 + 1) * sizeof(float));
        if (!tr->rope_inv) return false;
        tr->rope_att = attn_rope_freqs(cfg, tr->rotary_dim, longest, tr->rope_inv);
    }
    tr->flash_block_q = cfg->flash_block_q, tr->flash_block_k = cfg->flash_block_k;
    tr->ablate_kind = (int)cfg->ablate.kind, tr->ablate_layer = cfg->ablate.layer, tr->ablate_head = cfg->ablate.head;
    if (!mech_trace(cfg, tr, longest)) return false;
    tr->norm_rms = cfg->norm == NORM_RMS, tr->norm_first = cfg->norm_first, tr->ffn_act = (int)cfg->ffn_act;
    const int n_layers = cfg->n_layers > 1 ? cfg->n_layers : 1;
    tr->n_layers = n_layers;
    tr->layer = -1;
    // every stage the model can record, before the first: no stage moves while it runs
    if (!trace_reserve(tr, 6 + n_layers * STAGE_ID_COUNT)) return false;

    // pass 1: the inputs, as given
    int x_q, x_k, x_v, mask = -1;
    if (lm) { // a language model's input is its embedding
        TRY(x_q = embed_forward(cfg, w, in, tr));
    } else if (vis) { // a vision transformer's: its patches' embedding
        TRY(x_q = vision_embed_forward(cfg, w, in, tr));
    } else {
        TRY(x_q = trace_push(tr, STAGE_INPUT, 3, in->query.shape, -1, -1, -1));
        memcpy(D(tr, x_q), in->query.data, in->query.size * sizeof(float));
    }
    x_k = x_q;
    if (!lm && !vis && !in->key_is_query) {
        TRY(x_k = trace_push(tr, STAGE_KEY_INPUT, 3, in->key.shape, -1,
                       -1, -1));
        memcpy(D(tr, x_k), in->key.data, in->key.size * sizeof(float));
    }
    x_v = x_k;
    if (!lm && !vis && !in->value_is_key) {
        TRY(x_v = trace_push(tr, STAGE_VALUE_INPUT, 3,
                       in->value.shape, -1, -1, -1));
        memcpy(D(tr, x_v), in->value.data, in->value.size * sizeof(float));
    }
    if (in->mask_kind != MASK_NONE) {
        int ms[3] = {B, Lq, Lk};
        TRY(mask = trace_push(tr, STAGE_MASK, 3, ms, -1, -1, -1));
        memcpy(D(tr, mask), in->mask.data, in->mask.size * sizeof(float));
        if (in->mask_kind == MASK_SLIDING && cfg->window_conv == WINDOW_FLASH) // one more key: j = i − W
            for (int b = 0; b < B; b++)
                for (int i = in->window; i < Lq; i++) D(tr, mask)[((size_t)b * Lq + i) * Lk + i - in->window] = 1.0f;
    }

    if (x_k != x_q) tr->stages[x_k].key_rows = true;
    if (x_v != x_q) tr->stages[x_v].key_rows = true;
    if (cfg->decoder_layers > 0) { // an encoder–decoder: the source is input.key, the target input.query
        if (!encdec_forward(cfg, w, tr, x_q, x_k)) return false;
        bind_params(cfg, w, tr);
        return true;
    }

    // the layers, each reading the one before (several layers: self-attention only, the
    // loader's rule); the model's own stages (input, mask) have no layer
    for (int l = 0; l < n_layers; l++) {
        tr->layer = l;
        int out;
        if (!layer_forward(cfg, &w[l], tr, x_q, x_k, x_v, mask, &out)) return false;
        if (cfg->patch.kind == PATCH_RESIDUAL && cfg->patch.layer == l) // activation patching: another run's residual
            for (int b = 0; b < B; b++)
                memcpy(D(tr, out) + ((size_t)b * Lq + cfg->patch.pos) * C, cfg->patch.values + (size_t)b * C,
                       (size_t)C * sizeof(float));
        x_q = x_k = x_v = out;
    }
    tr->layer = -1;
    if ((lm || vis) && !predict_forward(cfg, w, tr, x_q)) return false;
    bind_params(cfg, w, tr);
    return true;
}

// ---- the weights by slot (stages.h), and the seeded generator ----------------------

Tensor *attn_weight(AttnWeights *w, int slot)
{
    switch (slot) {
#define WEIGHT_FIELD(id, json, field, sym, plain) \
    case WEIGHT_##id: return &w->field;
        WEIGHT_TABLE(WEIGHT_FIELD)
#undef WEIGHT_FIELD
    }
    assert(!"a weight slot of stages.h");
    return NULL;
}

// splitmix64's output function (Steele, Lea & Flood 2014).
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float attn_init_value(unsigned long long seed, int tensor_index, size_t elem_index, int fan_in)
{
    // Each tensor its own stream: a start drawn by hashing the seed with the tensor's
    // index, then splitmix64's steps from there. (Starting at seed ^ G·(index + 1) and
    // stepping by G made stream t's element k stream t + 1's element k − 1: b_q repeated w_k.)
    const uint64_t G = 0x9E3779B97F4A7C15ull;
    uint64_t start = mix64((uint64_t)seed ^ mix64(0xD1B54A32D192ED03ull * (uint64_t)(tensor_index + 1)));
    uint64_t z = mix64(start + (elem_index + 1) * G);
    double u = (double)(z >> 40) * (1.0 / 16777216.0);
    return (float)((2.0 * u - 1.0) / sqrt((double)fan_in));
}
