// delta.c — a "linear_attention" layer of model.layer_types: linear attention, DeltaNet and
// Gated DeltaNet (Qwen3-Next's hybrid layers), a recurrent state in place of the softmax.
//
// Written from Yang, Kautz & Hatamizadeh, "Gated Delta Networks: Improving Mamba2 with Delta Rule"
// (ICLR 2025), eq. (10): S_t = S_{t−1}(α_t(I − β_t k_t k_tᵀ)) + β_t v_t k_tᵀ, o_t = S_t q_t, with S
// (d_v × d_k) acting on column vectors; and checked against the orientation of transformers'
// models/qwen3_next/modeling_qwen3_next.py (torch_recurrent_gated_delta_rule and
// Qwen3NextGatedDeltaNet.forward), which keeps the transpose, S (d_k × d_v) per head:
//   state = state * g_t.exp(); kv_mem = (state * k_t[..., None]).sum(-2)
//   delta = (v_t − kv_mem) * beta_t; state = state + k_t[..., None] * delta[..., None, :]
//   out_t = (state * q_t[..., None]).sum(-2)
// with q and k L2-normalised (use_qk_l2norm_in_kernel, x·rsqrt(Σx² + 1e-6)), q times 1/√d_k,
// beta = sigmoid(b), g = −exp(A_log)·softplus(a + dt_bias). Here the same in rows:
//   S_t = α_t(I − β_t k_t k_tᵀ)S_{t−1} + β_t k_t v_tᵀ,  o_t = (q_t / √d_k)·S_t.
// Not included (refused by their absence: no key takes them): Qwen3-Next's short causal
// convolution of q, k and v (conv1d, kernel 4, then SiLU) and its output norm and gate
// (RMSNormGated: RMSNorm(o)·silu(z)); model.attn_gate's sigmoid gate is the full layers' only.
//
// The matrix ("parallel") form (the paper's §2.2 / §3.3 WY / UT form, fla's chunk kernels in one
// chunk): with Γ_tj = α_{j+1}·…·α_t (1 when j = t), S_t = Σ_{j≤t} Γ_tj k_j u_jᵀ where the
// pseudo-values are u_t = β_t(v_t − Σ_{j<t} Γ_tj (k_t·k_j) u_j) (linear attention: u_t = v_t), so
// o_t = Σ_{j≤t} A_tj u_j with A = (q·kᵀ / √d_k) ⊙ Γ, 0 above the diagonal: a masked "attention"
// matrix without a softmax. Shapes in PyTorch order.
#include "attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float *D(Trace *tr, int i) { return tr->stages[i].t.data; }

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        if ((expr) < 0) return false;                                                              \
    } while (0)

// (B, H, L, d) rows divided by their L2 norm, as Qwen3-Next's l2norm: x·rsqrt(Σx² + 1e-6).
static int l2_stage(Trace *tr, StageId id, int src)
{
    const Tensor *x = &tr->stages[src].t;
    const int s = trace_push_raw(tr, id, 4, x->shape, src, -1, -1);
    if (s < 0) return -1;
    const int d = x->shape[3];
    for (size_t r = 0; r < x->size / (size_t)d; r++) {
        const float *a = D(tr, src) + r * d;
        float ss = 0.0f;
        for (int i = 0; i < d; i++) ss += a[i] * a[i];
        const float inv = 1.0f / sqrtf(ss + 1e-6f);
        for (int i = 0; i < d; i++) D(tr, s)[r * d + i] = a[i] * inv;
    }
    tr->stages[s].key_rows = id == STAGE_LIN_K;
    return s;
}

// torch.nn.functional.softplus (β 1, threshold 20), in float32.
static float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

// lin_beta = σ(x·W_βᵀ) or lin_alpha = exp(−exp(A_log)·softplus(x·W_aᵀ + dt_bias)), (B, L, H).
static int gate_stage(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, StageId id, int x)
{
    const int B = tr->batch, L = tr->len_q, H = cfg->n_heads, sh[3] = {B, L, H};
    const int s = trace_push_raw(tr, id, 3, sh, x, -1, -1);
    if (s < 0) return -1;
    const bool beta = id == STAGE_LIN_BETA;
    tensor_linear(D(tr, s), D(tr, x), (beta ? w->w_beta : w->w_alpha).data, NULL, B * L, cfg->d_model, H);
    float *g = D(tr, s);
    for (int r = 0; r < B * L; r++)
        for (int h = 0; h < H; h++) {
            float *v = &g[(size_t)r * H + h];
            *v = beta ? 1.0f / (1.0f + expf(-*v)) : expf(-expf(w->a_log.data[h]) * softplus(*v + w->dt_bias.data[h]));
        }
    return s;
}

// The recurrence of one (batch, head): S (d_k × d_v) after each token into state (L, d_k·d_v), row t
// from row t − 1 (zeros before token 0), column by column (column j of S_t reads column j of S_{t−1}
// only); the outputs into out (L, d_v). q, k (L, d_k) normalised, v (L, d_v); beta, alpha: token t's
// at [t·H] (NULL: none, α = 1).
static void recur(const AttnConfig *cfg, float *state, float *out, const float *q, const float *k, const float *v,
                  const float *beta, const float *alpha, int H, int L, int dk, int dv)
{
    const float scale = 1.0f / sqrtf((float)dk);
    const size_t n = (size_t)dk * dv;
    for (int t = 0; t < L; t++) {
        const float *kt = k + (size_t)t * dk, *vt = v + (size_t)t * dv, *prev = t > 0 ? state + (t - 1) * n : NULL;
        float *S = state + t * n;
        for (size_t i = 0; i < n; i++) S[i] = prev ? (alpha ? prev[i] * alpha[(size_t)t * H] : prev[i]) : 0.0f;
        for (int j = 0; j < dv; j++) {
            float d = vt[j];
            if (cfg->linear_rule != LINEAR_PLAIN) { // the delta rule: β(v − kᵀS), what k already recalls removed
                float m = 0.0f;
                for (int i = 0; i < dk; i++) m += S[i * dv + j] * kt[i];
                d = (vt[j] - m) * beta[(size_t)t * H];
            }
            for (int i = 0; i < dk; i++) S[i * dv + j] += kt[i] * d;
        }
        for (int j = 0; j < dv; j++) {
            float o = 0.0f;
            for (int i = 0; i < dk; i++) o += S[i * dv + j] * (q[(size_t)t * dk + i] * scale);
            out[(size_t)t * dv + j] = o;
        }
    }
}

// The matrix form of one (batch, head): A (L, L) and the pseudo-values U (L, d_v), then A·U.
static void parallel(const AttnConfig *cfg, float *A, float *U, float *O, const float *q, const float *k,
                     const float *v, const float *beta, const float *alpha, int H, int L, int dk, int dv)
{
    const float scale = 1.0f / sqrtf((float)dk);
    for (int t = 0; t < L; t++) {
        double gam = 1.0; // Γ_tj = α_{j+1}·…·α_t, j from t down
        for (int j = t; j >= 0; j--) {
            if (j < t && alpha) gam *= (double)alpha[(size_t)(j + 1) * H];
            float dot = 0.0f, kk = 0.0f;
            for (int i = 0; i < dk; i++) {
                dot += (q[(size_t)t * dk + i] * scale) * k[(size_t)j * dk + i];
                kk += k[(size_t)t * dk + i] * k[(size_t)j * dk + i];
            }
            A[(size_t)t * L + j] = dot * (float)gam;
            if (j < t && cfg->linear_rule != LINEAR_PLAIN) // the earlier pseudo-values' share of k_t
                for (int c = 0; c < dv; c++) O[(size_t)t * dv + c] += (float)gam * kk * U[(size_t)j * dv + c];
        }
        for (int j = t + 1; j < L; j++) A[(size_t)t * L + j] = 0.0f;
        for (int c = 0; c < dv; c++) { // (O held Σ_j Γ_tj (k_t·k_j) u_j)
            const float vt = v[(size_t)t * dv + c];
            U[(size_t)t * dv + c] = cfg->linear_rule == LINEAR_PLAIN ? vt : beta[(size_t)t * H] * (vt - O[(size_t)t * dv + c]);
        }
    }
    for (int t = 0; t < L; t++)
        for (int c = 0; c < dv; c++) {
            float o = 0.0f;
            for (int j = 0; j <= t; j++) o += A[(size_t)t * L + j] * U[(size_t)j * dv + c];
            O[(size_t)t * dv + c] = o;
        }
}

bool attn_linear_forward(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, int x, AttnStages *st)
{
    const int B = tr->batch, L = tr->len_q, H = cfg->n_heads, dk = cfg->d_k, dv = cfg->d_v;
    int q, k, beta = -1, alpha = -1, state, out, A, U, par;
    TRY(q = l2_stage(tr, STAGE_LIN_Q, st->q_in));
    TRY(k = l2_stage(tr, STAGE_LIN_K, st->k_in));
    if (cfg->linear_rule != LINEAR_PLAIN) TRY(beta = gate_stage(cfg, w, tr, STAGE_LIN_BETA, x));
    if (cfg->linear_rule == LINEAR_GATED_DELTA) TRY(alpha = gate_stage(cfg, w, tr, STAGE_LIN_ALPHA, x));
    const int ss[4] = {B, H, L, dk * dv}, os[4] = {B, H, L, dv}, as[4] = {B, H, L, L};
    TRY(state = trace_push_raw(tr, STAGE_LIN_STATE, 4, ss, k, st->vh, beta));
    TRY(out = trace_push_raw(tr, STAGE_LIN_OUT, 4, os, q, state, -1));
    TRY(A = trace_push_raw(tr, STAGE_LIN_ATTN, 4, as, q, k, -1));
    TRY(U = trace_push_raw(tr, STAGE_LIN_U, 4, os, k, st->vh, beta));
    TRY(par = trace_push(tr, STAGE_LIN_PARALLEL, 4, os, A, U, -1)); // (zeroed: it accumulates first)
    tr->stages[state].key_rows = tr->stages[U].key_rows = true;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const size_t bh = (size_t)b * H + h;
            const float *qh = D(tr, q) + bh * L * dk, *kh = D(tr, k) + bh * L * dk, *vh = D(tr, st->vh) + bh * L * dv;
            const float *be = beta >= 0 ? D(tr, beta) + (size_t)b * L * H + h : NULL;
            const float *al = alpha >= 0 ? D(tr, alpha) + (size_t)b * L * H + h : NULL;
            recur(cfg, D(tr, state) + bh * L * dk * dv, D(tr, out) + bh * L * dv, qh, kh, vh, be, al, H, L, dk, dv);
            parallel(cfg, D(tr, A) + bh * L * L, D(tr, U) + bh * L * dv, D(tr, par) + bh * L * dv, qh, kh, vh, be, al,
                     H, L, dk, dv);
        }
    st->head_out = cfg->linear_form == LINEAR_PARALLEL ? par : out;
    return true;
}
