// backward.c — the backward pass of a language model's trace: the loss, then every stage in
// reverse, each passing its gradient to the stages it read (its operands) and to its
// weights (backward.h). The trace's operands are the graph: a stage's gradient is whole
// once every later stage has been visited.
#include "backward.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void grads_init(Grads *g) { memset(g, 0, sizeof *g); }

void grads_free(Grads *g)
{
    for (int i = 0; i < g->n; i++) tensor_free(&g->d[i]);
    free(g->d);
    for (int l = 0; l < TRACE_MAX_LAYERS; l++)
        for (int s = 0; s < WEIGHT_COUNT; s++) tensor_free(&g->dw[l][s]);
    free(g->targets);
    free(g->scratch);
    free(g->work);
    grads_init(g);
}

static bool same_shape(const Tensor *a, const Tensor *b)
{
    return !tensor_present(a) || (b && a->rank == b->rank && !memcmp(a->shape, b->shape, (size_t)a->rank * sizeof *a->shape));
}

// g ready for a backward pass over tr (weights w): an earlier result of the same shapes zeroed
// in place, anything else freed; targets with room for B·L. False when out of memory.
static bool grads_prepare(Grads *g, const Trace *tr, const AttnWeights *w)
{
    const int BL = tr->batch * tr->len_q;
    bool same = g->d && g->n == tr->n && g->n_layers == tr->n_layers && g->n_rows == BL;
    for (int i = 0; same && i < g->n; i++) same = same_shape(&g->d[i], &tr->stages[i].t);
    for (int l = 0; same && l < g->n_layers; l++)
        for (int s = 0; same && s < WEIGHT_COUNT; s++) same = same_shape(&g->dw[l][s], attn_weight((AttnWeights *)&w[l], s));
    if (!same) {
        float *scratch = g->scratch, *work = g->work;
        size_t cap = g->scratch_cap, work_cap = g->work_cap;
        g->scratch = g->work = NULL;
        grads_free(g);
        g->scratch = scratch, g->scratch_cap = cap, g->work = work, g->work_cap = work_cap;
        g->n_layers = tr->n_layers, g->n_rows = BL;
        g->targets = malloc((size_t)(BL > 0 ? BL : 1) * sizeof *g->targets);
        g->d = calloc((size_t)(tr->n > 0 ? tr->n : 1), sizeof *g->d);
        g->n = tr->n;
        return g->targets && g->d;
    }
    for (int i = 0; i < g->n; i++)
        if (tensor_present(&g->d[i])) memset(g->d[i].data, 0, g->d[i].size * sizeof *g->d[i].data);
    for (int l = 0; l < TRACE_MAX_LAYERS; l++)
        for (int s = 0; s < WEIGHT_COUNT; s++)
            if (tensor_present(&g->dw[l][s])) memset(g->dw[l][s].data, 0, g->dw[l][s].size * sizeof(float));
    g->n_targets = 0, g->loss = 0.0f;
    return true;
}

// n floats of the buffer *buf of *cap floats (kept for the next call); NULL when out of memory.
static float *grow(float **buf, size_t *cap, size_t n)
{
    if (n > *cap) {
        float *p = realloc(*buf, n * sizeof *p);
        if (!p) return NULL;
        *buf = p, *cap = n;
    }
    return *buf;
}

static float *grads_scratch(Grads *g, size_t n) { return grow(&g->scratch, &g->scratch_cap, n); }

bool backward_default_targets(const Trace *tr, int *targets, const char *file, char *err, size_t err_len)
{
    if (tr->n_classes > 0) { // (its loss would be the class's cross-entropy at [CLS]: not written yet)
        snprintf(err, err_len, "%s: image: the backward pass is written for language models only; a vision "
                 "transformer's (the class's cross-entropy) is not yet", file);
        return false;
    }
    if (tr->vocab_size <= 0 || !tr->ids) {
        snprintf(err, err_len, "%s: vocab: the backward pass needs a language model (a \"vocab\" and token ids): "
                 "its loss is the next token's cross-entropy", file);
        return false;
    }
    const int B = tr->batch, L = tr->len_q;
    const int m = trace_find(tr, "mask");
    const float *mask = tr->mask_kind == MASK_KEY_PADDING && m >= 0 ? tr->stages[m].t.data : NULL;
    int n = 0;
    for (int b = 0; b < B; b++)
        for (int l = 0; l < L; l++) {
            // the next token, unless there is none or it is padding (key l + 1 of row 0 masked)
            bool counted = l + 1 < L && !(mask && mask[(size_t)b * L * L + (size_t)(l + 1)] == 0.0f);
            targets[b * L + l] = counted ? tr->ids[b * L + l + 1] : -1;
            n += counted;
        }
    if (n == 0) {
        snprintf(err, err_len, "%s: input: the backward pass needs a position with a next token (the text has %d "
                 "token%s a row)", file, L, L == 1 ? "" : "s");
        return false;
    }
    return true;
}

// ---- the gradients' storage --------------------------------------------------------------

typedef struct Ctx {
    const AttnConfig *cfg;
    const AttnWeights *w;
    const Trace *tr;
    Grads *g;
    bool oom;
} Ctx;

static const float *X(const Ctx *c, int i) { return c->tr->stages[i].t.data; }

// Stage i's gradient, allocated (zeroed) on first use; NULL when out of memory.
static float *G(Ctx *c, int i)
{
    Tensor *d = &c->g->d[i];
    if (!tensor_present(d) && !tensor_init(d, c->tr->stages[i].t.rank, c->tr->stages[i].t.shape)) {
        c->oom = true;
        return NULL;
    }
    return d->data;
}

// The gradient of the weight tensor t (borrowed by a stage from one of the layers' weights),
// allocated on first use; NULL when t is NULL or out of memory.
static float *GW(Ctx *c, const Tensor *t)
{
    if (!t) return NULL;
    for (int l = 0; l < c->g->n_layers; l++)
        for (int s = 0; s < WEIGHT_COUNT; s++) {
            // (attn_weight only reads the address of the slot's field: the weights stay const)
            if (attn_weight((AttnWeights *)&c->w[l], s) != t) continue;
            Tensor *d = &c->g->dw[l][s];
            if (!tensor_present(d) && !tensor_init(d, t->rank, t->shape)) {
                c->oom = true;
                return NULL;
            }
            return d->data;
        }
    assert(!"a stage's weight is one of the layers' tensors");
    return NULL;
}

static void add_into(float *dst, const float *src, size_t n)
{
    if (dst) backward_add(dst, src, n);
}

// n floats of the products' temporaries; NULL (c->oom set) when out of memory.
static float *work(Ctx *c, size_t n)
{
    float *p = grow(&c->g->work, &c->g->work_cap, n);
    c->oom = c->oom || !p;
    return p;
}

// backward_linear with its temporaries.
static void linear_backward(Ctx *c, float *dx, float *dw, float *db, const float *dy, const float *x, const float *w,
                            int n, int in, int out)
{
    float *tmp = work(c, backward_linear_tmp(n, in, out));
    if (tmp) backward_linear(dx, dw, db, dy, x, w, n, in, out, tmp);
}

// ---- the loss ----------------------------------------------------------------------------

double backward_nll(const float *zr, int V, float T, int t)
{
    double mx = -INFINITY, sum = 0.0; // log-softmax in double: exact for a confident model too
    for (int v = 0; v < V; v++) mx = fmax(mx, (double)(zr[v] / T));
    for (int v = 0; v < V; v++) sum += exp((double)(zr[v] / T) - mx);
    return mx + log(sum) - (double)(zr[t] / T);
}

// L = mean of −log softmax(logits / T)[target]; dL/dlogits = (p − onehot) / (N·T).
static void loss_backward(Ctx *c, int lg, int pr)
{
    const Trace *tr = c->tr;
    const int rows = tr->batch * tr->len_q, V = tr->vocab_size;
    const float T = tr->temperature, *z = X(c, lg), *p = X(c, pr);
    float *d = G(c, lg);
    if (!d) return;
    double loss = 0.0;
    for (int r = 0; r < rows; r++) {
        const int t = c->g->targets[r];
        if (t < 0) continue;
        loss += backward_nll(z + (size_t)r * V, V, T, t);
        for (int v = 0; v < V; v++)
            d[(size_t)r * V + v] = (p[(size_t)r * V + v] - (v == t ? 1.0f : 0.0f)) / ((float)c->g->n_targets * T);
    }
    c->g->loss = (float)(loss / c->g->n_targets);
}

// ---- attention ---------------------------------------------------------------------------

// The (batch, K/V head) slice query head bh reads: repeat_interleave over the groups.
static size_t kv_of(const Trace *tr, int bh)
{
    const int H = tr->n_heads, Hkv = trace_kv_heads(tr);
    return (size_t)(bh / H) * Hkv + (size_t)((bh % H) / (H / Hkv));
}

// scores = Q·Kᵀ / scale (+ bias): dQ += dS·K / scale, dK += dSᵀ·Q / scale (K shared by a group),
// each slice's products in float (dS / scale first, then the sums in order: backward_matmul_add).
static void scores_backward(Ctx *c, int s, const float *dS)
{
    const Trace *tr = c->tr;
    const Stage *st = &tr->stages[s];
    const int qi = st->operands[0], ki = st->operands[1], Lq = tr->len_q, Lk = tr->len_k, dk = tr->d_k;
    const size_t n = (size_t)Lq * Lk;
    float *dq = G(c, qi), *dkk = G(c, ki), *gs = work(c, n + (size_t)dk);
    if (!dq || !dkk || !gs) return;
    const float *q = X(c, qi), *k = X(c, ki);
    for (int bh = 0; bh < tr->batch * tr->n_heads; bh++) {
        const size_t kv = kv_of(tr, bh);
        const float *S = dS + (size_t)bh * n;
        for (size_t e = 0; e < n; e++) gs[e] = S[e] / tr->scale;
        // dQ (Lq, d) += gs (Lq, Lk)·K (Lk, d); dK (Lk, d) += gsᵀ (Lk, Lq)·Q (Lq, d)
        backward_matmul_add(dq + (size_t)bh * Lq * dk, gs, (size_t)Lk, 1, k + kv * Lk * dk, Lq, Lk, dk, gs + n);
        backward_matmul_add(dkk + kv * Lk * dk, gs, 1, (size_t)Lk, q + (size_t)bh * Lq * dk, Lk, Lq, dk, gs + n);
    }
}

// attn = softmax(masked) (with gpt-oss's sink logit): the softmax's Jacobian, row by row.
static void attn_backward_softmax(Ctx *c, int s)
{
    const Trace *tr = c->tr;
    const Stage *st = &tr->stages[s];
    const int m = st->operands[0], Lq = tr->len_q, Lk = tr->len_k, H = tr->n_heads;
    float *dm = G(c, m);
    float *dsinks = st->weight ? GW(c, st->weight) : NULL;
    if (!dm) return;
    for (int bh = 0; bh < tr->batch * H; bh++) {
        const size_t off = (size_t)bh * Lq * Lk;
        backward_softmax(dm + off, c->g->d[s].data + off, X(c, s) + off, Lq, Lk, dsinks ? dsinks + bh % H : NULL);
    }
}

// head_out = attn·V: dA = dO·Vᵀ, dV += Aᵀ·dO (V shared by a group), in float (backward_matmul_add).
static void weighted_sum_backward(Ctx *c, int s)
{
    const Trace *tr = c->tr;
    const Stage *st = &tr->stages[s];
    const int ai = st->operands[0], vi = st->operands[1], Lq = tr->len_q, Lk = tr->len_k, dv = tr->d_v;
    const size_t n = (size_t)Lq * Lk;
    float *da = G(c, ai), *dvv = G(c, vi), *vt = work(c, (size_t)dv * Lk + (size_t)(Lk > dv ? Lk : dv));
    if (!da || !dvv || !vt) return;
    float *acc = vt + (size_t)dv * Lk;
    const float *a = X(c, ai), *v = X(c, vi), *dO = c->g->d[s].data;
    for (int bh = 0; bh < tr->batch * tr->n_heads; bh++) {
        const size_t kv = kv_of(tr, bh);
        const float *go = dO + (size_t)bh * Lq * dv;
        backward_transpose(vt, v + kv * Lk * dv, Lk, dv); // dA (Lq, Lk) += dO (Lq, dv)·Vᵀ (dv, Lk)
        backward_matmul_add(da + (size_t)bh * n, go, (size_t)dv, 1, vt, Lq, dv, Lk, acc);
        backward_matmul_add(dvv + kv * Lk * dv, a + (size_t)bh * n, 1, (size_t)Lk, go, Lk, Lq, dv, acc); // dV += Aᵀ·dO
    }
}

// Adds src into dst, (B, L, H·d) -> (B, H, L, d) when to_heads, else back: the gradient of
// concat (to head_out) and of a split (to its projection).
static void heads_add(float *dst, const float *src, int B, int L, int H, int d, bool to_heads)
{
    for (int b = 0; b < B; b++)
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                const size_t flat = ((size_t)b * L + l) * H * d + (size_t)h * d, head = (((size_t)b * H + h) * L + l) * d;
                const float *from = src + (to_heads ? flat : head);
                float *to = dst + (to_heads ? head : flat);
                for (int e = 0; e < d; e++) to[e] += from[e];
            }
}

// RoPE turns each pair by +angle: its transpose turns the gradient back by −angle.
static void rope_backward(Ctx *c, int s)
{
    const Trace *tr = c->tr;
    const Stage *st = &tr->stages[s];
    const int src = st->operands[0], Hh = st->t.shape[1], L = st->t.shape[2], d = st->t.shape[3];
    float *dx = G(c, src), *row = grads_scratch(c->g, (size_t)d);
    if (!dx || !row) {
        c->oom = c->oom || !row;
        return;
    }
    for (int bh = 0; bh < tr->batch * Hh; bh++)
        for (int l = 0; l < L; l++) {
            const size_t off = ((size_t)bh * L + l) * d;
            attn_rope_row(row, c->g->d[s].data + off, d, tr->rotary_dim, -trace_position(tr, bh / Hh, l),
                          (RopeStyle)tr->rope, tr->rope_inv, tr->rope_att);
            add_into(dx + off, row, (size_t)d);
        }
}

// ---- the feed-forward block and the other stages with weights ------------------------------

// The pre-activation u = x·Wᵀ + b of FFN stage s (not recorded: recomputed), into the scratch.
static float *ffn_pre(Ctx *c, const Stage *st, int rows, int in, int out)
{
    float *u = grads_scratch(c->g, (size_t)rows * out);
    if (!u) {
        c->oom = true;
        return NULL;
    }
    tensor_linear(u, X(c, st->operands[0]), st->weight->data, st->bias ? st->bias->data : NULL, rows, in, out);
    return u;
}

// ffn_gate g = silu(a); ffn_hidden h = act(u), or SwiGLU's h = u ⊙ g; then u (a) = x·Wᵀ + b.
static void ffn_backward(Ctx *c, int s, int rows, int C)
{
    const Stage *st = &c->tr->stages[s];
    const int F = st->t.shape[2], gate = st->id == STAGE_FFN_HIDDEN ? st->operands[1] : -1;
    float *u = ffn_pre(c, st, rows, C, F), *dg = gate >= 0 ? G(c, gate) : NULL;
    if (!u || (gate >= 0 && !dg)) return;
    const float *dh = c->g->d[s].data;
    for (size_t k = 0; k < (size_t)rows * F; k++) {
        if (gate >= 0) { // d(u ⊙ g): du = dh ⊙ g, dg += dh ⊙ u
            dg[k] += dh[k] * u[k];
            u[k] = dh[k] * X(c, gate)[k];
        } else { // the gate itself is silu; the hidden layer the model's activation
            u[k] = dh[k] * backward_activation(st->id == STAGE_FFN_GATE ? FFN_SWIGLU : c->tr->ffn_act, u[k]);
        }
    }
    const int x = st->operands[0];
    linear_backward(c, G(c, x), GW(c, st->weight), GW(c, st->bias), u, X(c, x), st->weight->data, rows, C, F);
}

// token_embed = E[ids]: each row's gradient goes to its token's row of E; pos_embed's
// learned rows P[l] gather every batch's row l (sinusoidal positions have no weight).
static void embed_backward(Ctx *c, int s, int C)
{
    const Trace *tr = c->tr;
    const Stage *st = &tr->stages[s];
    float *dw = GW(c, st->weight);
    if (!dw) return;
    for (int r = 0; r < tr->batch * tr->len_q; r++) {
        const int row = st->id == STAGE_TOKEN_EMBED ? tr->ids[r] : r % tr->len_q;
        add_into(dw + (size_t)row * C, c->g->d[s].data + (size_t)r * C, (size_t)C);
    }
}

// masked_scores = masked_fill(mask == 0, fill): the filled scores pass no gradient.
static void masked_backward(Ctx *c, int s)
{
    const Trace *tr = c->tr;
    const Stage *st = &tr->stages[s];
    float *ds = G(c, st->operands[0]);
    if (!ds) return;
    const size_t n = (size_t)tr->len_q * tr->len_k;
    const float *mask = st->operands[1] >= 0 ? X(c, st->operands[1]) : NULL, *d = c->g->d[s].data;
    for (int bh = 0; bh < tr->batch * tr->n_heads; bh++) {
        float *dsh = ds + (size_t)bh * n;
        const float *dh = d + (size_t)bh * n, *mk = mask ? mask + (size_t)(bh / tr->n_heads) * n : NULL;
        if (!mk) {
            backward_add(dsh, dh, n);
            continue;
        }
        for (size_t k = 0; k < n; k++) dsh[k] = mk[k] != 0.0f ? dsh[k] + dh[k] : dsh[k]; // (a select: vectorised)
    }
}

// Stage s's gradient (whole: every later stage has passed its share) to its operands and weights.
static void stage_backward(Ctx *c, int s)
{
    const Trace *tr = c->tr;
    const Stage *st = &tr->stages[s];
    const float *d = c->g->d[s].data;
    const int rank = st->t.rank, last = st->t.shape[rank - 1];
    const int rows = (int)(st->t.size / (size_t)last), op0 = st->operands[0], op1 = st->operands[1];
    switch (st->kind) {
    case STAGE_KIND_EMBED:
    case STAGE_KIND_POS_EMBED:
        if (st->weight) embed_backward(c, s, last);
        break;
    case STAGE_KIND_ADD: // residual_sum, embedding: both terms (sinusoidal positions learn nothing: none)
        add_into(G(c, op0), d, st->t.size);
        if (tr->stages[op1].id != STAGE_POS_EMBED || tr->stages[op1].weight) add_into(G(c, op1), d, st->t.size);
        break;
    case STAGE_KIND_NORM:
        if (G(c, op0))
            backward_norm(G(c, op0), GW(c, st->weight), GW(c, st->bias), d, X(c, op0),
                          st->weight ? st->weight->data : NULL, rows, last, tr->norm_eps, tr->norm_rms);
        break;
    case STAGE_KIND_PROJECTION:
    case STAGE_KIND_OUT_PROJ: { // q/k/v_proj, output, logits: y = x·Wᵀ + b
        const int in = tr->stages[op0].t.shape[tr->stages[op0].t.rank - 1];
        linear_backward(c, G(c, op0), GW(c, st->weight), GW(c, st->bias), d, X(c, op0), st->weight->data, rows, in,
                        last);
        break;
    }
    case STAGE_KIND_SPLIT:
        if (G(c, op0)) heads_add(G(c, op0), d, tr->batch, st->t.shape[2], st->t.shape[1], last, false);
        break;
    case STAGE_KIND_CONCAT:
        if (G(c, op0)) heads_add(G(c, op0), d, tr->batch, tr->len_q, tr->n_heads, tr->d_v, true);
        break;
    case STAGE_KIND_ROPE: rope_backward(c, s); break;
    case STAGE_KIND_SCORES: scores_backward(c, s, d); break;
    case STAGE_KIND_MASKED: masked_backward(c, s); break;
    case STAGE_KIND_SOFTMAX: attn_backward_softmax(c, s); break;
    case STAGE_KIND_WEIGHTED_SUM: weighted_sum_backward(c, s); break;
    case STAGE_KIND_FFN_HIDDEN: ffn_backward(c, s, rows, tr->d_model); break;
    case STAGE_KIND_FFN_SUM: { // f = h·W₂ᵀ + b₂ + x
        add_into(G(c, op1), d, st->t.size);
        const int F = tr->stages[op0].t.shape[2];
        linear_backward(c, G(c, op0), GW(c, st->weight), GW(c, st->bias), d, X(c, op0), st->weight->data, rows, F, last);
        break;
    }
    default: break; // probs (the loss starts at the logits); nothing else carries a gradient
    }
}

bool attn_backward(const AttnConfig *cfg, const AttnWeights *w, const Trace *tr, const int *targets, Grads *g,
                   const char *file, char *err, size_t err_len)
{
    const int BL = tr->batch * tr->len_q, lg = trace_find(tr, "logits"), pr = trace_find(tr, "probs");
    const char *mech = cfg->qk_norm ? "qk_norm" : cfg->softcap > 0.0f ? "attn_logit_softcapping"
                     : cfg->attn_gate ? "attn_gate" : cfg->n_layer_types > 0 ? "layer_types"
                     : cfg->kv_lora_rank > 0 ? "kv_lora_rank" : cfg->index_topk > 0 ? "index_topk" : NULL;
    if (tr->vocab_size <= 0 || !tr->ids) return backward_default_targets(tr, NULL, file, err, err_len); // (says why)
    if (mech) { // (their stages have no chain rule written yet: refused, not a wrong gradient)
        snprintf(err, err_len, "%s: model.%s: the backward pass does not cover it yet; expected a model without it "
                 "for --backward and --step", file, mech);
        return false;
    }
    if (!grads_prepare(g, tr, w)) goto oom;
    if (!targets) {
        if (!backward_default_targets(tr, g->targets, file, err, err_len)) goto fail;
    } else if (tr->vocab_size <= 0 || lg < 0 || pr < 0) {
        backward_default_targets(tr, g->targets, file, err, err_len); // (says why)
        goto fail;
    } else {
        memcpy(g->targets, targets, (size_t)BL * sizeof *g->targets);
    }
    for (int r = 0; r < BL; r++) {
        if (g->targets[r] < -1 || g->targets[r] >= tr->vocab_size) {
            snprintf(err, err_len, "%s: targets[%d][%d]: %d is not a token id (0..%d, or -1: not counted)", file,
                     r / tr->len_q, r % tr->len_q, g->targets[r], tr->vocab_size - 1);
            goto fail;
        }
        g->n_targets += g->targets[r] >= 0;
    }
    if (g->n_targets == 0) {
        snprintf(err, err_len, "%s: targets: no position has a target (all -1)", file);
        goto fail;
    }
    Ctx c = {cfg, w, tr, g, false};
    loss_backward(&c, lg, pr);
    for (int s = tr->n - 1; s >= 0 && !c.oom; s--)
        if (tensor_present(&g->d[s])) stage_backward(&c, s);
    if (!c.oom) return true;
oom:
    snprintf(err, err_len, "%s: out of memory computing the backward pass", file);
fail:
    grads_free(g);
    return false;
}

// ---- the gradients in order --------------------------------------------------------------

static int item_at(const Grads *g, int k, int *stage, int *slot, int *layer)
{
    for (int s = g->n - 1; s >= 0; s--)
        if (tensor_present(&g->d[s]) && k-- == 0) return *stage = s, *slot = -1, *layer = -1, 0;
    for (int pass = 0; pass < 2; pass++) // the model's own weights (layer 0's), then each layer's
        for (int l = 0; l < (pass ? g->n_layers : 1); l++)
            for (int s = pass ? 0 : WEIGHT_EMBED; s < (pass ? WEIGHT_EMBED : WEIGHT_COUNT); s++)
                if (tensor_present(&g->dw[l][s]) && k-- == 0) return *stage = -1, *slot = s, *layer = l, 0;
    return -1;
}

int grads_count(const Grads *g)
{
    int n = 0, st, sl, ly;
    while (item_at(g, n, &st, &sl, &ly) == 0) n++;
    return n;
}

const Tensor *grads_item(const Grads *g, const Trace *tr, int k, char *name, int *stage, int *slot, int *layer)
{
    if (item_at(g, k, stage, slot, layer) < 0) return NULL;
    if (*stage >= 0) {
        *layer = tr->stages[*stage].layer;
        snprintf(name, GRAD_NAME_MAX, "grad.%s", tr->stages[*stage].name);
        return &g->d[*stage];
    }
    if (*slot >= WEIGHT_EMBED) // (not "grad.pos_embed": that is the pos_embed stage's)
        snprintf(name, GRAD_NAME_MAX, "grad.model.%s", WEIGHT_INFO[*slot].name);
    else if (g->n_layers > 1)
        snprintf(name, GRAD_NAME_MAX, "grad.l%d.%s", *layer, WEIGHT_INFO[*slot].name);
    else
        snprintf(name, GRAD_NAME_MAX, "grad.%s", WEIGHT_INFO[*slot].name);
    return &g->dw[*layer][*slot];
}
