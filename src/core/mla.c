// mla.c — DeepSeek's attention (issue 42 items 1 and 6): multi-head latent attention (MLA,
// DeepSeek-V2/V3) and DeepSeek-V3.2's sparse attention (the lightning indexer's top-k keys).
// Shapes in PyTorch order: B batch, L tokens, C = d_model, H heads, r = kv_lora_rank, r_q =
// q_lora_rank, d_k = d_nope + d_rope, d_v.
//
// Read for it: DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts
// Language Model" (arXiv 2405.04434), section 2.1.2-2.1.3, equations (9)-(19): c_KV = W_DKV·h,
// k_C = W_UK·c_KV, v_C = W_UV·c_KV, c_Q = W_DQ·h, q_C = W_UQ·c_Q, q_R = RoPE(W_QR·c_Q),
// k_R = RoPE(W_KR·h) shared by the heads, q = [q_C; q_R], k = [k_C; k_R], and the cache holding
// c_KV and k_R only (Table 1: (d_c + d_R)·l per token against MHA's 2·n_h·d_h·l); and transformers'
// models/deepseek_v3/modeling_deepseek_v3.py (DeepseekV3Attention.forward) for the layout the
// lessons' weights follow: q_a_proj → q_a_layernorm (RMSNorm) → q_b_proj, kv_a_proj_with_mqa →
// [compressed_kv, k_pe], kv_a_layernorm (RMSNorm) → kv_b_proj, q_nope first and q_pe last in each
// head, query_states = cat(q_nope, q_pe), key_states = cat(k_nope, k_pe.expand(H)). Here W_QR is
// part of W_UQ (its last d_rope rows of each head, as q_b_proj has it), kv_a_proj_with_mqa is
// W_DKV and W_KR apart, and kv_b_proj is W_UK and W_UV apart (the paper's names). No attention
// bias (DeepSeek's attention_bias is false; the loader refuses qkv_bias).
//
// The sparse attention: DeepSeek-AI, "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with
// DeepSeek Sparse Attention" (2025), equation (1): I_{t,s} = Σ_j w_{t,j}·ReLU(q_{t,j}·k_s) over
// the indexer's heads j, then each query t attends only to the keys of its top-k I_{t,s}. The
// paper's formula as written: the released kernel's FP8 quantisation, Hadamard rotation, the
// indexer key's LayerNorm and RoPE, and its 1/√H_I scale of w are not drawn; q_I, k_I, w read the
// layer's (normed) input.
#include "attention.h"

#include <math.h>
#include <string.h>

static float *D(Trace *tr, int i) { return tr->stages[i].t.data; }

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        if ((expr) < 0) return false;                                                              \
    } while (0)

// Stage id = x·Wᵀ (rows × in -> out) with its table row's weight (no bias).
static int linear(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, StageId id, int x, int rows, int in, int out,
                  bool key)
{
    const int shape[3] = {tr->stages[x].t.shape[0], tr->stages[x].t.shape[1], out};
    const int s = trace_push_raw(tr, id, 3, shape, x, -1, -1);
    if (s < 0) return -1;
    tensor_linear(D(tr, s), D(tr, x), attn_param(cfg, w, STAGE_INFO[id].weight)->data, NULL, rows, in, out);
    tr->stages[s].key_rows = key;
    return s;
}

// DeepseekV3RMSNorm of each latent row (float32): x / √(mean(x²) + ε) · γ.
static int latent_norm(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, StageId id, int x)
{
    const Tensor *t = &tr->stages[x].t;
    const int s = trace_push_raw(tr, id, 3, t->shape, x, -1, -1);
    if (s < 0) return -1;
    const int r = t->shape[2];
    tensor_rms_norm(D(tr, s), D(tr, x), attn_param(cfg, w, STAGE_INFO[id].weight)->data, (int)(t->size / (size_t)r), r,
                    cfg->norm_eps);
    tr->stages[s].key_rows = tr->stages[x].key_rows;
    return s;
}

// (B, L, H·d) -> (B, H, L, d) into stage id.
static int split(Trace *tr, StageId id, int x, int H, int d, bool key)
{
    const Tensor *t = &tr->stages[x].t;
    const int B = t->shape[0], L = t->shape[1], shape[4] = {B, H, L, d};
    const int s = trace_push_raw(tr, id, 4, shape, x, -1, -1);
    if (s < 0) return -1;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int l = 0; l < L; l++)
                memcpy(D(tr, s) + (((size_t)b * H + h) * L + l) * d, D(tr, x) + ((size_t)b * L + l) * H * d + (size_t)h * d,
                       (size_t)d * sizeof(float));
    tr->stages[s].key_rows = key;
    return s;
}

// RoPE of the last d_rope dimensions of each head row (B, Hh, L, d_k) into stage id: q_pe and
// k_pe turned (transformers' apply_rotary_pos_emb on the split-off parts), the rest copied.
static int rope_last(const AttnConfig *cfg, Trace *tr, StageId id, int x)
{
    const Tensor *t = &tr->stages[x].t;
    const int s = trace_push_raw(tr, id, 4, t->shape, x, -1, -1);
    if (s < 0) return -1;
    const int B = t->shape[0], Hh = t->shape[1], L = t->shape[2], d = t->shape[3], dr = cfg->qk_rope_head_dim;
    for (int bh = 0; bh < B * Hh; bh++)
        for (int l = 0; l < L; l++) {
            const float *src = D(tr, x) + ((size_t)bh * L + l) * d;
            float *dst = D(tr, s) + ((size_t)bh * L + l) * d;
            memcpy(dst, src, (size_t)(d - dr) * sizeof(float));
            attn_rope_row(dst + d - dr, src + d - dr, dr, dr, trace_position(tr, bh / Hh, l), cfg->rope,
                          trace_rope_inv(tr, tr->layer), tr->rope_att);
        }
    tr->stages[s].key_rows = tr->stages[x].key_rows;
    return s;
}

bool attn_mla_project(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x, AttnStages *st)
{
    const int B = tr->batch, L = tr->len_q, C = cfg->d_model, H = cfg->n_heads, dk = cfg->d_k, dv = cfg->d_v;
    const int dr = cfg->qk_rope_head_dim, dn = dk - dr, r = cfg->kv_lora_rank, rq = cfg->q_lora_rank;
    int ckv, kpe, ckvn, cq = x, qp, kp, vp, qh, kh, vh, qr, kr, cache;
    // the key side: c_KV = RMSNorm(x·W_DKVᵀ), k_R = x·W_KRᵀ (kv_a_proj_with_mqa's two parts)
    TRY(ckv = linear(cfg, w, tr, STAGE_KV_LATENT, x, B * L, C, r, true));
    TRY(kpe = linear(cfg, w, tr, STAGE_K_PE, x, B * L, C, dr, true));
    TRY(ckvn = latent_norm(cfg, w, tr, STAGE_KV_LATENT_NORM, ckv));
    // the query side: c_Q = RMSNorm(x·W_DQᵀ) (q_lora_rank 0: Q reads x itself), Q = c_Q·W_UQᵀ
    if (rq > 0) {
        TRY(cq = linear(cfg, w, tr, STAGE_Q_LATENT, x, B * L, C, rq, false));
        TRY(cq = latent_norm(cfg, w, tr, STAGE_Q_LATENT_NORM, cq));
    }
    TRY(qp = linear(cfg, w, tr, STAGE_Q_PROJ, cq, B * L, rq > 0 ? rq : C, H * dk, false));
    // K_C = c_KV·W_UKᵀ, V = c_KV·W_UVᵀ: every head's keys and values from the one latent
    TRY(kp = linear(cfg, w, tr, STAGE_K_PROJ, ckvn, B * L, r, H * dn, true));
    TRY(vp = linear(cfg, w, tr, STAGE_V_PROJ, ckvn, B * L, r, H * dv, true));
    TRY(qh = split(tr, STAGE_Q_HEADS, qp, H, dk, false));
    // k = [k_C of head h ; k_R], the same k_R in every head
    const int ks[4] = {B, H, L, dk};
    TRY(kh = trace_push_raw(tr, STAGE_K_HEADS, 4, ks, kp, kpe, -1));
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int l = 0; l < L; l++) {
                float *row = D(tr, kh) + (((size_t)b * H + h) * L + l) * dk;
                memcpy(row, D(tr, kp) + ((size_t)b * L + l) * H * dn + (size_t)h * dn, (size_t)dn * sizeof(float));
                memcpy(row + dn, D(tr, kpe) + ((size_t)b * L + l) * dr, (size_t)dr * sizeof(float));
            }
    tr->stages[kh].key_rows = true, tr->stages[kh].kind = STAGE_KIND_MLA_KEY; // (not the table's split)
    TRY(vh = split(tr, STAGE_V_HEADS, vp, H, dv, true));
    TRY(qr = rope_last(cfg, tr, STAGE_Q_ROPE, qh));
    TRY(kr = rope_last(cfg, tr, STAGE_K_ROPE, kh));
    // what the cache keeps per token: c_KV and the turned k_R (head 0's: every head has it)
    const int cs[3] = {B, L, r + dr};
    TRY(cache = trace_push_raw(tr, STAGE_LATENT_CACHE, 3, cs, ckvn, kr, -1));
    for (int b = 0; b < B; b++)
        for (int l = 0; l < L; l++) {
            float *row = D(tr, cache) + ((size_t)b * L + l) * (r + dr);
            memcpy(row, D(tr, ckvn) + ((size_t)b * L + l) * r, (size_t)r * sizeof(float));
            memcpy(row + r, D(tr, kr) + ((size_t)b * H * L + l) * dk + dn, (size_t)dr * sizeof(float));
        }
    tr->stages[cache].key_rows = true;
    st->x_q = st->x_k = x, st->q_in = qr, st->k_in = kr, st->vh = vh, st->cache = cache;
    return true;
}

// The absorbed form (DeepSeek-V2 §2.1.2: "W_UK can be absorbed into W_UQ"): q_A = q_nope·W_UK(h)
// (B, H, L, r), then scores = (q_A·c_KVᵀ + q_pe·k_Rᵀ) / scale straight from the cache, no K_C.
int attn_mla_absorb(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, const AttnStages *st)
{
    const int B = tr->batch, Lq = tr->len_q, Lk = tr->len_k, H = cfg->n_heads, dk = cfg->d_k;
    const int dr = cfg->qk_rope_head_dim, dn = dk - dr, r = cfg->kv_lora_rank;
    const int qa_s[4] = {B, H, Lq, r}, sc_s[4] = {B, H, Lq, Lk};
    const int qa = trace_push_raw(tr, STAGE_Q_ABSORBED, 4, qa_s, st->q_in, -1, -1);
    if (qa < 0) return -1;
    const float *uk = w->w_k.data; // (H·d_nope, r)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < Lq; i++) {
                const float *q = D(tr, st->q_in) + (((size_t)b * H + h) * Lq + i) * dk;
                float *o = D(tr, qa) + (((size_t)b * H + h) * Lq + i) * r;
                for (int c = 0; c < r; c++) {
                    float acc = 0.0f;
                    for (int j = 0; j < dn; j++) acc += q[j] * uk[((size_t)h * dn + j) * r + c];
                    o[c] = acc;
                }
            }
    const int as = trace_push_raw(tr, STAGE_ABSORBED_SCORES, 4, sc_s, qa, st->cache, st->q_in);
    if (as < 0) return -1;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < Lq; i++) {
                const float *q = D(tr, st->q_in) + (((size_t)b * H + h) * Lq + i) * dk + dn;
                const float *a = D(tr, qa) + (((size_t)b * H + h) * Lq + i) * r;
                for (int j = 0; j < Lk; j++) {
                    const float *c = D(tr, st->cache) + ((size_t)b * Lk + j) * (r + dr);
                    float sl = 0.0f, sr = 0.0f;
                    for (int k = 0; k < r; k++) sl += a[k] * c[k];
                    for (int k = 0; k < dr; k++) sr += q[k] * c[r + k];
                    D(tr, as)[(((size_t)b * H + h) * Lq + i) * Lk + j] = (sl + sr) / cfg->scale;
                }
            }
    return as;
}

int attn_dsa_mask(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x_q, int x_k, int mask)
{
    const int B = tr->batch, Lq = tr->len_q, Lk = tr->len_k, C = cfg->d_model;
    const int HI = cfg->index_n_heads, dI = cfg->index_head_dim, K = cfg->index_topk;
    int iq, ik, iw, is, tm;
    if ((iq = linear(cfg, w, tr, STAGE_INDEX_Q, x_q, B * Lq, C, HI * dI, false)) < 0 ||
        (ik = linear(cfg, w, tr, STAGE_INDEX_K, x_k, B * Lk, C, dI, true)) < 0 ||
        (iw = linear(cfg, w, tr, STAGE_INDEX_W, x_q, B * Lq, C, HI, false)) < 0)
        return -1;
    const int ms[3] = {B, Lq, Lk};
    if ((is = trace_push_raw(tr, STAGE_INDEX_SCORES, 3, ms, iq, ik, iw)) < 0) return -1;
    if ((tm = trace_push(tr, STAGE_TOPK_MASK, 3, ms, is, mask, -1)) < 0) return -1;
    const float *m = mask >= 0 ? D(tr, mask) : NULL;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < Lq; i++) {
            const size_t row = ((size_t)b * Lq + i) * Lk;
            float *I = D(tr, is) + row, *sel = D(tr, tm) + row;
            for (int j = 0; j < Lk; j++) {
                const float *q = D(tr, iq) + ((size_t)b * Lq + i) * HI * dI, *k = D(tr, ik) + ((size_t)b * Lk + j) * dI;
                const float *wt = D(tr, iw) + ((size_t)b * Lq + i) * HI;
                float acc = 0.0f;
                for (int h = 0; h < HI; h++) {
                    float dot = 0.0f;
                    for (int d = 0; d < dI; d++) dot += q[h * dI + d] * k[d];
                    acc += wt[h] * (dot > 0.0f ? dot : 0.0f);
                }
                I[j] = m && m[row + j] == 0.0f ? -INFINITY : acc; // (as V3.2's index_score += mask: not a candidate)
            }
            // the top K of the keys the mask allows (ties: the earlier key), the rest 0
            for (int n = 0; n < K; n++) {
                int best = -1;
                for (int j = 0; j < Lk; j++)
                    if (sel[j] == 0.0f && !(m && m[row + j] == 0.0f) && (best < 0 || I[j] > I[best])) best = j;
                if (best < 0) break;
                sel[best] = 1.0f;
            }
        }
    return tm;
}
