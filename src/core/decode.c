// decode.c — generation token by token from a K/V cache, as a trace.
//
// A decoder that generates text does not run the whole (L, L) attention again for each
// new token: step t projects token t alone, turns its q and k to position t (RoPE),
// appends k and v to the cache and computes one row of scores (q_t against the t + 1
// cached keys), its softmax, attn·V and the output row. Done for t = 0 … L−1 this must
// give the causal pass's output again: decode_output equals output (the keys after t,
// which the causal mask removes, are simply not in the cache yet).
//
// Everything is recomputed here from the lesson's input and weights, one row at a time;
// nothing is copied from the full pass. Sums run in index order like the core's kernels.
#include "attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float *D(Trace *tr, int i) { return tr->stages[i].t.data; }

static int push(Trace *tr, const char *name, StageKind kind, int rank, const int *shape, int op0, int op1, int op2)
{
    int i = trace_push(tr, name, kind, STEP_DECODE, rank, shape);
    if (i < 0) return -1;
    tr->stages[i].operands[0] = op0, tr->stages[i].operands[1] = op1, tr->stages[i].operands[2] = op2;
    return i;
}

// y (out) = x (in) · Wᵀ + b, one row
static void linear_row(float *y, const float *x, const Tensor *w, const Tensor *b, int in, int out)
{
    for (int o = 0; o < out; o++) {
        const float *wr = w->data + (size_t)o * in;
        float s = 0.0f;
        for (int k = 0; k < in; k++) s += x[k] * wr[k];
        y[o] = b ? s + b->data[o] : s;
    }
}

bool attn_decode(const AttnConfig *cfg, const AttnWeights *w, const AttnStages *st, Trace *tr)
{
    const int B = tr->batch, L = tr->len_q, C = tr->d_model, H = tr->n_heads;
    const int Hkv = tr->n_kv_heads > 0 ? tr->n_kv_heads : H, g = H / Hkv, dk = tr->d_k, dv = tr->d_v;
    int ks[4] = {B, Hkv, L, dk}, vs[4] = {B, Hkv, L, dv}, os[3] = {B, L, C};
    int ck, cv, dout;
    if ((ck = push(tr, "cache_k", STAGE_KIND_CACHE, 4, ks, st->k_in, -1, -1)) < 0) return false;
    if ((cv = push(tr, "cache_v", STAGE_KIND_CACHE, 4, vs, st->vh, -1, -1)) < 0) return false;
    if ((dout = push(tr, "decode_output", STAGE_KIND_DECODE, 3, os, ck, cv, st->output)) < 0) return false;
    tr->stages[ck].key_rows = tr->stages[cv].key_rows = true;
    const Tensor *bq = cfg->qkv_bias ? &w->b_q : NULL, *bk = cfg->qkv_bias ? &w->b_k : NULL,
                 *bv = cfg->qkv_bias ? &w->b_v : NULL, *bo = cfg->out_bias ? &w->b_o : NULL;
    float *q = malloc((size_t)H * dk * sizeof(float)), *k = malloc((size_t)Hkv * dk * sizeof(float));
    float *v = malloc((size_t)Hkv * dv * sizeof(float)), *cat = malloc((size_t)H * dv * sizeof(float));
    float *row = malloc((size_t)L * sizeof(float)), *rot = malloc((size_t)dk * sizeof(float));
    bool ok = q && k && v && cat && row && rot;
    const float *X = D(tr, st->x_q), *mask = st->mask >= 0 ? D(tr, st->mask) : NULL;
    const float *bias = st->bias >= 0 ? D(tr, st->bias) : NULL;
    float *K = D(tr, ck), *V = D(tr, cv);
    for (int b = 0; ok && b < B; b++)
        for (int t = 0; t < L; t++) {
            // 1. the new token's q, k, v (one row each), q and k turned to position t
            const float *x = X + ((size_t)b * L + t) * C;
            linear_row(q, x, &w->w_q, bq, C, H * dk);
            linear_row(k, x, &w->w_k, bk, C, Hkv * dk);
            linear_row(v, x, &w->w_v, bv, C, Hkv * dv);
            if (cfg->rope != ROPE_NONE) {
                for (int h = 0; h < H; h++) {
                    attn_rope_row(rot, q + (size_t)h * dk, dk, t, cfg->rope, cfg->rope_theta);
                    memcpy(q + (size_t)h * dk, rot, (size_t)dk * sizeof(float));
                }
                for (int h = 0; h < Hkv; h++) {
                    attn_rope_row(rot, k + (size_t)h * dk, dk, t, cfg->rope, cfg->rope_theta);
                    memcpy(k + (size_t)h * dk, rot, (size_t)dk * sizeof(float));
                }
            }
            // 2. append k and v to the cache at position t
            for (int h = 0; h < Hkv; h++) {
                memcpy(K + (((size_t)b * Hkv + h) * L + t) * dk, k + (size_t)h * dk, (size_t)dk * sizeof(float));
                memcpy(V + (((size_t)b * Hkv + h) * L + t) * dv, v + (size_t)h * dv, (size_t)dv * sizeof(float));
            }
            // 3. per head, one row of scores over the t + 1 cached keys, softmax, attn·V
            for (int h = 0; h < H; h++) {
                const float *qh = q + (size_t)h * dk;
                const float *Kc = K + ((size_t)b * Hkv + h / g) * L * dk, *Vc = V + ((size_t)b * Hkv + h / g) * L * dv;
                for (int j = 0; j <= t; j++) {
                    float dot = 0.0f;
                    for (int c = 0; c < dk; c++) dot += qh[c] * Kc[(size_t)j * dk + c];
                    float s = dot / cfg->scale;
                    if (bias) s = s + bias[((size_t)h * L + t) * L + j];
                    if (mask && mask[((size_t)b * L + t) * L + j] == 0.0f) s = cfg->mask_fill;
                    row[j] = s;
                }
                tensor_softmax_rows(row, 1, t + 1);
                for (int c = 0; c < dv; c++) {
                    float s = 0.0f;
                    for (int j = 0; j <= t; j++) s += row[j] * Vc[(size_t)j * dv + c];
                    cat[(size_t)h * dv + c] = s;
                }
            }
            // 4. the output row
            linear_row(D(tr, dout) + ((size_t)b * L + t) * C, cat, &w->w_o, bo, H * dv, C);
        }
    free(q), free(k), free(v), free(cat), free(row), free(rot);
    return ok;
}
