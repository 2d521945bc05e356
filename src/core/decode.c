// decode.c — generation token by token from a K/V cache, as a trace.
//
// A decoder that generates text does not run the whole (L, L) attention again for each
// new token: step t projects token t alone, turns its q and k to position t (RoPE),
// appends k and v to the cache and computes one row of scores (q_t against the t + 1
// cached keys), its softmax, attn·V and the output row. Done for t = 0 … L−1 this must
// give the causal pass's output again: decode_output equals output (the keys after t,
// which the causal mask removes, are simply not in the cache yet).
//
// Everything is recomputed here from the lesson's input and weights; nothing is copied
// from the full pass. The projections of all steps' tokens are made in one call (a row's
// projection reads only that row: the numbers are those of one row at a time), and the
// heads run on the core's threads; a step reads only the cache rows of the steps before
// it and its own. Each step's row of scores (masked as the window says) and its softmax
// are kept (decode_scores, decode_attn): row t holds step t's, the keys after t (not in
// the cache yet) the mask's fill and 0, as the causal pass writes them.
//
// model.streaming_positions "cache" (StreamingLLM's pos_shift, mit-han-lab/streaming-llm's
// modify_llama.py): the cache holds the keys before RoPE (cache_k = k_heads); at step t the keys
// the mask keeps (the sinks, then the window: what StartRecentKVCache keeps) are turned to their
// places in the cache, 0 … n − 1, and q_t to n − 1, the place the new token takes. Once keys are
// evicted, a sink's distance to the query is no longer t − j but n − 1 − j.
#include "attention.h"

#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float *D(Trace *tr, int i) { return tr->stages[i].t.data; }

typedef struct DecodeJob {
    const AttnConfig *cfg;
    Trace *tr;
    const AttnStages *st;
    int ck, cv, ds, da;
    const float *q;          // (B, L, H·d_k): every step's query, turned to its position
    float *cat;              // (B, L, H·d_v): every step's heads side by side
    float *rows;             // per (batch, head): one row of L scores
    float *krot;             // per (batch, head): L·d_k keys turned to their cache places, d_k for q (or NULL)
    const float *sinks;      // (H) gpt-oss's sink logits, or NULL
} DecodeJob;

// One (batch, head), step by step: step t's query against the t + 1 cached keys.
static void decode_task(void *ctx, int bh)
{
    const DecodeJob *j = ctx;
    Trace *tr = j->tr;
    const AttnConfig *cfg = j->cfg;
    const int H = tr->n_heads, b = bh / H, h = bh % H;
    const int L = tr->len_q, dk = tr->d_k, dv = tr->d_v;
    const size_t kv = trace_kv_slice(tr, b, h);
    const float *Kc = D(tr, j->ck) + kv * L * dk, *Vc = D(tr, j->cv) + kv * L * dv;
    const float *bias = j->st->bias >= 0 ? D(tr, j->st->bias) + (size_t)h * L * L : NULL;
    const float *mask = j->st->mask >= 0 ? D(tr, j->st->mask) + (size_t)b * L * L : NULL;
    float *row = j->rows + (size_t)bh * L;
    for (int t = 0; t < L; t++) {
        const float *q = j->q + ((size_t)b * L + t) * H * dk + (size_t)h * dk;
        if (j->krot) { // pos_shift: the kept keys turned to their places in the cache, q to the last
            float *kr = j->krot + (size_t)bh * ((size_t)L + 1) * dk, *qr = kr + (size_t)L * dk;
            int n = 0;
            for (int k = 0; k <= t; k++)
                if (!mask || mask[(size_t)t * L + k] != 0.0f)
                    attn_rope_row(kr + (size_t)k * dk, Kc + (size_t)k * dk, dk, tr->rotary_dim, n++, cfg->rope,
                                  tr->rope_inv, tr->rope_att);
                else
                    memset(kr + (size_t)k * dk, 0, (size_t)dk * sizeof(float)); // evicted: its score is the fill
            attn_rope_row(qr, q, dk, tr->rotary_dim, n - 1, cfg->rope, tr->rope_inv, tr->rope_att);
            tensor_matmul_bt(row, qr, kr, 1, dk, t + 1);
        } else {
            tensor_matmul_bt(row, q, Kc, 1, dk, t + 1);         // q_t · cache_k[:t+1]ᵀ
        }
        tensor_div_scalar(row, (size_t)t + 1, cfg->scale);
        for (int k = 0; k <= t; k++) {
            if (bias) row[k] = row[k] + bias[(size_t)t * L + k];
            if (mask && mask[(size_t)t * L + k] == 0.0f) row[k] = cfg->mask_fill; // the sliding window
        }
        float *srow = D(tr, j->ds) + ((size_t)bh * L + t) * L, *arow = D(tr, j->da) + ((size_t)bh * L + t) * L;
        memcpy(srow, row, (size_t)(t + 1) * sizeof(float));
        if (j->sinks) tensor_softmax_rows_sink(row, 1, t + 1, j->sinks[h]); // gpt-oss's sink logit
        else tensor_softmax_rows(row, 1, t + 1);
        memcpy(arow, row, (size_t)(t + 1) * sizeof(float));
        for (int k = t + 1; k < L; k++) srow[k] = cfg->mask_fill, arow[k] = 0.0f; // not in the cache yet: as the causal mask writes them
        tensor_matmul(j->cat + ((size_t)b * L + t) * H * dv + (size_t)h * dv, row, Vc, 1, t + 1, dv);
    }
}

bool attn_decode(const AttnConfig *cfg, const AttnWeights *w, const AttnStages *st, Trace *tr)
{
    const int B = tr->batch, L = tr->len_q, C = tr->d_model, H = tr->n_heads;
    const int Hkv = trace_kv_heads(tr), dk = tr->d_k, dv = tr->d_v;
    int ks[4] = {B, Hkv, L, dk}, vs[4] = {B, Hkv, L, dv}, os[3] = {B, L, C}, ss[4] = {B, H, L, L};
    int ck, cv, ds, da, dout;
    if ((ck = trace_push(tr, STAGE_CACHE_K, 4, ks, st->k_in, -1, -1)) < 0) return false;
    if ((cv = trace_push(tr, STAGE_CACHE_V, 4, vs, st->vh, -1, -1)) < 0) return false;
    if ((ds = trace_push(tr, STAGE_DECODE_SCORES, 4, ss, st->q_in, ck, st->bias)) < 0) return false;
    if ((da = trace_push(tr, STAGE_DECODE_ATTN, 4, ss, ds, cv, -1)) < 0) return false;
    if ((dout = trace_push(tr, STAGE_DECODE_OUTPUT, 3, os, ck, cv, st->output)) < 0) return false;
    tr->stages[ck].key_rows = tr->stages[cv].key_rows = true;
    const Tensor *bq = attn_param(cfg, w, WEIGHT_B_Q), *bk = attn_param(cfg, w, WEIGHT_B_K),
                 *bv = attn_param(cfg, w, WEIGHT_B_V), *bo = attn_param(cfg, w, WEIGHT_B_O);
    const Tensor *sinks = attn_param(cfg, w, STAGE_INFO[STAGE_DECODE_ATTN].weight);
    const size_t BL = (size_t)B * L;
    float *q = malloc(BL * H * dk * sizeof(float)), *k = malloc(BL * Hkv * dk * sizeof(float));
    float *v = malloc(BL * Hkv * dv * sizeof(float)), *cat = malloc(BL * H * dv * sizeof(float));
    float *rows = malloc((size_t)B * H * L * sizeof(float)), *rot = malloc((size_t)dk * sizeof(float));
    const bool shift = cfg->stream_pos == STREAM_POS_CACHE && cfg->rope != ROPE_NONE; // pos_shift
    float *krot = shift ? malloc((size_t)B * H * ((size_t)L + 1) * dk * sizeof(float)) : NULL;
    bool ok = q && k && v && cat && rows && rot && (!shift || krot);
    if (ok) {
        // 1. each step's new token alone: q_t, k_t, v_t = x_t·Wᵀ + b. A row's projection reads
        // only that row, so the B·L steps' rows are computed in one call (the same numbers)
        const float *X = D(tr, st->x_q);
        tensor_linear(q, X, w->w_q.data, bq ? bq->data : NULL, (int)BL, C, H * dk);
        tensor_linear(k, X, w->w_k.data, bk ? bk->data : NULL, (int)BL, C, Hkv * dk);
        tensor_linear(v, X, w->w_v.data, bv ? bv->data : NULL, (int)BL, C, Hkv * dv);
        // 2. q_t and k_t turned to position t; k_t and v_t appended to the cache at row t
        float *K = D(tr, ck), *V = D(tr, cv);
        for (int b = 0; b < B; b++)
            for (int t = 0; t < L; t++) {
                float *qt = q + ((size_t)b * L + t) * H * dk;
                const float *kt = k + ((size_t)b * L + t) * Hkv * dk, *vt = v + ((size_t)b * L + t) * Hkv * dv;
                if (cfg->rope != ROPE_NONE && !shift) // (pos_shift: turned at each step, decode_task)
                    for (int h = 0; h < H; h++) {
                        attn_rope_row(rot, qt + (size_t)h * dk, dk, tr->rotary_dim, trace_position(tr, b, t), cfg->rope,
                                      tr->rope_inv, tr->rope_att);
                        memcpy(qt + (size_t)h * dk, rot, (size_t)dk * sizeof(float));
                    }
                for (int h = 0; h < Hkv; h++) {
                    float *dst = K + (((size_t)b * Hkv + h) * L + t) * dk;
                    if (cfg->rope != ROPE_NONE && !shift)
                        attn_rope_row(dst, kt + (size_t)h * dk, dk, tr->rotary_dim, trace_position(tr, b, t), cfg->rope,
                                      tr->rope_inv, tr->rope_att);
                    else
                        memcpy(dst, kt + (size_t)h * dk, (size_t)dk * sizeof(float));
                    memcpy(V + (((size_t)b * Hkv + h) * L + t) * dv, vt + (size_t)h * dv, (size_t)dv * sizeof(float));
                }
            }
        // 3. step by step, per head: one row of scores against the cache so far, softmax,
        // attn·V. Step t reads cache rows 0..t only, which steps 0..t wrote.
        DecodeJob job = {cfg, tr, st, ck, cv, ds, da, q, cat, rows, krot, sinks ? sinks->data : NULL};
        parallel_for(B * H, (double)B * H * L * L * (dk + dv) / 2, decode_task, &job);
        // 4. each step's output row: its heads side by side, · W_Oᵀ + b_O
        tensor_linear(D(tr, dout), cat, w->w_o.data, bo ? bo->data : NULL, (int)BL, H * dv, C);
    }
    free(q), free(k), free(v), free(cat), free(rows), free(rot), free(krot);
    return ok;
}
