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
// Every number of the loop is recorded, tile by tile: m and l after each key block
// (flash_max, flash_sum), the rescale α = e^(m_old − m_new) (flash_scale), the tile's
// P = e^(s − m_new) (flash_p: each score belongs to exactly one tile, so P is Lq × Lk)
// and acc after each key block (flash_acc, d_v numbers per block).
//
// The scores of a tile are computed from Q and K here (·/scale, + ALiBi's bias, the
// mask's fill), not read from the scores stage. A block whose keys are all masked with
// −∞ leaves m at −∞; then e^(s − m) is taken against 0 instead (FlashAttention's
// Check_inf), so a fully masked row ends with l = 0 and out = 0/0 = NaN, as in PyTorch.
// A tile is block_q query rows × block_k keys: its scores and its p·V are one matrix
// product each; every row keeps its own m, l and acc, so block_q changes no number.
//
// model.flash_accumulator "fa1": FlashAttention-1's Algorithm 1 (Dao et al. 2022) instead, which
// keeps the output normalised after every block: the tile's P̃ = e^(S − m̃) against its own row
// max m̃, l̃ = Σ P̃, m_new = max(m, m̃), l_new = e^(m − m_new)·l + e^(m̃ − m_new)·l̃ and
//     O = (l·e^(m − m_new)·O + e^(m̃ − m_new)·P̃·V) / l_new
// (flash_p holds P̃, flash_acc O after each block; O stays 0 while no key was seen, l_new = 0).
#include "attention.h"

#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float *D(Trace *tr, int i) { return tr->stages[i].t.data; }

typedef struct FlashJob {
    const AttnConfig *cfg;
    Trace *tr;
    const AttnStages *st;
    int fm, fs, fp, fl, fa, fo, nkb, bq, bk;   // bq, bk: the tile, at most Lq × Lk
    float *scratch;                // per (batch, head): bq·bk scores, bq·d_v acc and p·V, bq m and l
} FlashJob;

// One (batch, head), tile by tile: a block of bq query rows against each block of bk keys
// in turn. Each row keeps its own m, l and acc; the tile only shares the matrix products.
static void flash_task(void *ctx, int bh)
{
    const FlashJob *j = ctx;
    Trace *tr = j->tr;
    const AttnConfig *cfg = j->cfg;
    const int H = tr->n_heads, b = bh / H, h = bh % H;
    const int Lq = tr->len_q, Lk = tr->len_k, dk = tr->d_k, dv = tr->d_v, bq = j->bq, bk = j->bk, nkb = j->nkb;
    const size_t bkv = trace_kv_slice(tr, b, h);
    const float *K = D(tr, j->st->k_in) + bkv * Lk * dk, *V = D(tr, j->st->vh) + bkv * Lk * dv;
    const float *bias = j->st->bias >= 0 ? D(tr, j->st->bias) + (size_t)h * Lq * Lk : NULL;
    const float *mask = j->st->mask >= 0 ? D(tr, j->st->mask) + (size_t)b * Lq * Lk : NULL;
    float *S = j->scratch + (size_t)bh * ((size_t)bq * bk + 2 * (size_t)bq * dv + 5 * (size_t)bq);
    float *acc = S + (size_t)bq * bk, *pv = acc + (size_t)bq * dv, *M = pv + (size_t)bq * dv, *Ls = M + bq;
    float *keep = Ls + bq, *beta = keep + bq, *lnew = beta + bq; // FA1: l·α, e^(m̃ − m_new), l_new per row
    const bool fa1 = cfg->flash_acc == FLASH_ACC_FA1;
    for (int i0 = 0; i0 < Lq; i0 += bq) {
        const int nq = i0 + bq < Lq ? bq : Lq - i0;
        const float *Q = D(tr, j->st->q_in) + ((size_t)bh * Lq + i0) * dk;
        for (int r = 0; r < nq; r++) M[r] = -INFINITY, Ls[r] = 0.0f;
        memset(acc, 0, (size_t)nq * dv * sizeof(float));
        for (int kb = 0; kb < nkb; kb++) {
            const int j0 = kb * bk, nb = j0 + bk < Lk ? bk : Lk - j0;
            // the tile's scores, as the standard pass computes them: q·kᵀ / scale + bias, the fill
            tensor_matmul_bt(S, Q, K + (size_t)j0 * dk, nq, dk, nb);
            tensor_div_scalar(S, (size_t)nq * nb, cfg->scale);
            for (int r = 0; r < nq; r++) {
                const int i = i0 + r;
                float *s = S + (size_t)r * nb, rowmax = -INFINITY;
                for (int c = 0; c < nb; c++) {
                    if (bias) s[c] = s[c] + bias[(size_t)i * Lk + j0 + c];
                    if (mask && mask[(size_t)i * Lk + j0 + c] == 0.0f) s[c] = cfg->mask_fill;
                    if (s[c] > rowmax || isnan(s[c])) rowmax = isnan(rowmax) ? rowmax : s[c];
                }
                float m = M[r], m_new = m > rowmax || isnan(m) ? m : rowmax;
                float ref = isinf(m_new) && m_new < 0 ? 0.0f : m_new; // Check_inf
                float alpha = tensor_expf(m - ref), l = Ls[r] * alpha;
                if (fa1) { // the tile against its own max m̃, then scaled to m_new
                    const float tref = isinf(rowmax) && rowmax < 0 ? 0.0f : rowmax, bt = tensor_expf(rowmax - ref);
                    float lt = 0.0f;
                    for (int c = 0; c < nb; c++) {
                        s[c] = tensor_expf(s[c] - tref);
                        lt += s[c];
                    }
                    keep[r] = l, beta[r] = bt, l = l + bt * lt, lnew[r] = l;
                } else {
                    for (int c = 0; c < dv; c++) acc[(size_t)r * dv + c] = acc[(size_t)r * dv + c] * alpha;
                    for (int c = 0; c < nb; c++) {
                        s[c] = tensor_expf(s[c] - ref);
                        l += s[c];
                    }
                }
                M[r] = m_new, Ls[r] = l;
                size_t at = ((size_t)bh * Lq + i) * nkb + kb;
                D(tr, j->fm)[at] = m_new;
                D(tr, j->fs)[at] = alpha;
                D(tr, j->fl)[at] = l;
                memcpy(D(tr, j->fp) + ((size_t)bh * Lq + i) * Lk + j0, s, (size_t)nb * sizeof(float));
            }
            tensor_matmul(pv, S, V + (size_t)j0 * dv, nq, nb, dv); // Σ_j e^(s_j − m)·v_j, per row
            if (fa1) // O = (l·α·O + e^(m̃ − m_new)·P̃·V) / l_new, 0 until a key is seen
                for (int r = 0; r < nq; r++)
                    for (int c = 0; c < dv; c++) {
                        float *o = acc + (size_t)r * dv + c;
                        *o = lnew[r] > 0.0f ? (keep[r] * *o + beta[r] * pv[(size_t)r * dv + c]) / lnew[r] : 0.0f;
                    }
            else
                for (size_t c = 0; c < (size_t)nq * dv; c++) acc[c] += pv[c];
            for (int r = 0; r < nq; r++)
                memcpy(D(tr, j->fa) + (((size_t)bh * Lq + i0 + r) * nkb + kb) * dv, acc + (size_t)r * dv,
                       (size_t)dv * sizeof(float));
        }
        for (int r = 0; r < nq; r++) {
            float *out = D(tr, j->fo) + ((size_t)bh * Lq + i0 + r) * dv;
            for (int c = 0; c < dv; c++) // (FA1: O already normalised; a row that saw no key 0/0 as FA2's)
                out[c] = fa1 && Ls[r] > 0.0f ? acc[(size_t)r * dv + c] : acc[(size_t)r * dv + c] / Ls[r];
            if (mask && cfg->masked_rows == MASKED_ROWS_ZERO) attn_zero_masked_rows(out, mask + (size_t)(i0 + r) * Lk, 1, Lk, dv);
        }
    }
}

bool attn_flash(const AttnConfig *cfg, const AttnStages *st, Trace *tr)
{
    const int B = tr->batch, H = tr->n_heads, Lq = tr->len_q, Lk = tr->len_k, dk = tr->d_k, dv = tr->d_v;
    const int bk = cfg->flash_block_k, nkb = (Lk + bk - 1) / bk;
    int ms[4] = {B, H, Lq, nkb}, os[4] = {B, H, Lq, dv}, ps[4] = {B, H, Lq, Lk}, as[4] = {B, H, Lq, nkb * dv};
    int fm, fs, fp, fl, fa, fo;
    if ((fm = trace_push(tr, STAGE_FLASH_MAX, 4, ms, st->q_in, st->k_in, -1)) < 0) return false;
    if ((fs = trace_push(tr, STAGE_FLASH_SCALE, 4, ms, fm, -1, -1)) < 0) return false;
    if ((fp = trace_push(tr, STAGE_FLASH_P, 4, ps, st->masked, fm, -1)) < 0) return false;
    if ((fl = trace_push(tr, STAGE_FLASH_SUM, 4, ms, st->q_in, st->k_in, -1)) < 0) return false;
    if ((fa = trace_push(tr, STAGE_FLASH_ACC, 4, as, fp, st->vh, fs)) < 0) return false;
    if ((fo = trace_push(tr, STAGE_FLASH_OUT, 4, os, st->head_out, fl, st->vh)) < 0) return false;
    const int bqc = cfg->flash_block_q < Lq ? cfg->flash_block_q : Lq, bkc = bk < Lk ? bk : Lk;
    float *scratch = malloc((size_t)B * H * ((size_t)bqc * bkc + 2 * (size_t)bqc * dv + 5 * (size_t)bqc) * sizeof(float));
    if (!scratch) return false;
    FlashJob job = {cfg, tr, st, fm, fs, fp, fl, fa, fo, nkb, bqc, bkc, scratch};
    // the (batch, head) pairs are independent: shared among the core's threads
    parallel_for(B * H, (double)B * H * Lq * Lk * (dk + dv), flash_task, &job);
    free(scratch);
    return true;
}
