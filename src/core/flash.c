// flash.c — FlashAttention's tiled online softmax (Dao et al. 2022), as a trace.
//
// The standard pass writes the whole (Lq, Lk) score matrix of every head and reads it
// back for the softmax. The tiled pass walks the keys one block of block_k at a time
// and keeps, per query row, only a running max m, a running sum l and a partial output
// acc (d_v numbers), rescaled whenever the max grows:
//
//     m_new = max(m_old, rowmax(S_blk))
//     l     = l_old · e^(m_old − m_new) + Σ_j e^(s_j − m_new)
//     acc   = acc   · e^(m_old − m_new) + Σ_j e^(s_j − m_new) · v_j
//     out   = acc / l                      (after the last block)
//
// The scores of a tile are computed from Q and K here (·/scale, + ALiBi's bias, the
// mask's fill), not read from the scores stage. A block whose keys are all masked with
// −∞ leaves m at −∞; then e^(s − m) is taken against 0 instead (FlashAttention's
// Check_inf), so a fully masked row ends with l = 0 and out = 0/0 = NaN, as in PyTorch.
// block_q only groups the rows into tiles for the picture; it does not change a number.
#include "attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float *D(Trace *tr, int i) { return tr->stages[i].t.data; }

static int push(Trace *tr, const char *name, StageKind kind, int rank, const int *shape, int op0, int op1, int op2)
{
    int i = trace_push(tr, name, kind, STEP_FLASH, rank, shape);
    if (i < 0) return -1;
    tr->stages[i].operands[0] = op0, tr->stages[i].operands[1] = op1, tr->stages[i].operands[2] = op2;
    return i;
}

bool attn_flash(const AttnConfig *cfg, const AttnStages *st, Trace *tr)
{
    const int B = tr->batch, H = tr->n_heads, Hkv = tr->n_kv_heads > 0 ? tr->n_kv_heads : H;
    const int Lq = tr->len_q, Lk = tr->len_k, dk = tr->d_k, dv = tr->d_v;
    const int bk = cfg->flash_block_k, nkb = (Lk + bk - 1) / bk;
    int ms[4] = {B, H, Lq, nkb}, os[4] = {B, H, Lq, dv};
    int fm, fl, fo;
    if ((fm = push(tr, "flash_max", STAGE_KIND_FLASH_STAT, 4, ms, st->q_in, st->k_in, -1)) < 0) return false;
    if ((fl = push(tr, "flash_sum", STAGE_KIND_FLASH_STAT, 4, ms, st->q_in, st->k_in, -1)) < 0) return false;
    if ((fo = push(tr, "flash_out", STAGE_KIND_FLASH_OUT, 4, os, st->head_out, fl, st->vh)) < 0) return false;
    float *acc = malloc((size_t)dv * sizeof(float)), *s = malloc((size_t)bk * sizeof(float));
    if (!acc || !s) {
        free(acc), free(s);
        return false;
    }
    const float *Q = D(tr, st->q_in), *K = D(tr, st->k_in), *V = D(tr, st->vh);
    const float *bias = st->bias >= 0 ? D(tr, st->bias) : NULL, *mask = st->mask >= 0 ? D(tr, st->mask) : NULL;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const size_t bkv = (size_t)b * Hkv + (size_t)(h / (H / Hkv));
            for (int i = 0; i < Lq; i++) {
                const float *q = Q + (((size_t)b * H + h) * Lq + i) * dk;
                float m = -INFINITY, l = 0.0f;
                memset(acc, 0, (size_t)dv * sizeof(float));
                for (int kb = 0; kb < nkb; kb++) {
                    const int j0 = kb * bk, j1 = j0 + bk < Lk ? j0 + bk : Lk;
                    // the tile's scores, as the standard pass computes them
                    float rowmax = -INFINITY;
                    for (int j = j0; j < j1; j++) {
                        const float *k = K + (bkv * Lk + j) * dk;
                        float dot = 0.0f;
                        for (int c = 0; c < dk; c++) dot += q[c] * k[c];
                        float x = dot / cfg->scale;
                        if (bias) x = x + bias[((size_t)h * Lq + i) * Lk + j];
                        if (mask && mask[((size_t)b * Lq + i) * Lk + j] == 0.0f) x = cfg->mask_fill;
                        s[j - j0] = x;
                        if (x > rowmax || isnan(x)) rowmax = isnan(rowmax) ? rowmax : x;
                    }
                    float m_new = m > rowmax || isnan(m) ? m : rowmax;
                    float ref = isinf(m_new) && m_new < 0 ? 0.0f : m_new; // Check_inf
                    float alpha = expf(m - ref);
                    l = l * alpha;
                    for (int c = 0; c < dv; c++) acc[c] = acc[c] * alpha;
                    for (int j = j0; j < j1; j++) {
                        float p = expf(s[j - j0] - ref);
                        l += p;
                        const float *v = V + (bkv * Lk + j) * dv;
                        for (int c = 0; c < dv; c++) acc[c] += p * v[c];
                    }
                    m = m_new;
                    size_t at = (((size_t)b * H + h) * Lq + i) * nkb + kb;
                    D(tr, fm)[at] = m;
                    D(tr, fl)[at] = l;
                }
                float *out = D(tr, fo) + (((size_t)b * H + h) * Lq + i) * dv;
                for (int c = 0; c < dv; c++) out[c] = acc[c] / l;
            }
        }
    free(acc), free(s);
    return true;
}
