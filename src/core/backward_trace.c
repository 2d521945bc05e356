// backward_trace.c — the backward pass as more stages of the trace (backward.h): what the
// backward view walks. attn_backward computes every gradient; this file lays them out in
// the order the chain rule visits them, each with the operands its formula reads (stages.h's
// GRAD kinds), so that the view's recipes explain each cell from the numbers on screen.
#include "backward.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int backward_jacobian_row(const float *a, const float *da, int Lq, int Lk)
{
    int best = 0;
    float most = -1.0f;
    for (int i = 0; i < Lq; i++) {
        const float *ar = a + (size_t)i * Lk, *dr = da + (size_t)i * Lk;
        float dot = 0.0f;
        for (int j = 0; j < Lk; j++) dot += dr[j] * ar[j];
        for (int j = 0; j < Lk; j++) {
            float ds = fabsf(ar[j] * (dr[j] - dot));
            if (ds > most) most = ds, best = i; // (NaN: never larger)
        }
    }
    return best;
}

int backward_forward_stage(const Trace *tr, int s)
{
    const Stage *st = &tr->stages[s];
    if (st->step != STEP_BACKWARD || strncmp(st->name, "grad.", 5) != 0) return -1;
    int f = trace_find(tr, st->name + 5);
    return f >= 0 && tr->stages[f].step != STEP_BACKWARD ? f : -1;
}

typedef struct Ctx {
    Trace *tr;
    const AttnWeights *w;
    const Grads *g;
    int *gi;        // (n forward stages) the index of each one's gradient stage, -1: none yet
    int n_fwd;
    bool params;    // the weights' other gradients too (biases, γ, β, embeddings, W₁, sinks): GRAD_PARAM
    const char *file;
    char *err;
    size_t err_len;
} Ctx;

// Pushes a backward stage of table row id named `name` with src's shape (NULL: shape0's)
// and values (NULL: zeros) in `layer`; its index or -1 (err filled).
static int push(Ctx *c, StageId id, const char *name, const Tensor *shape0, const Tensor *src, int layer, int op0,
                int op1, int op2)
{
    const Tensor *t = src ? src : shape0;
    int shape[TENSOR_MAX_RANK], rank = t->rank;
    memcpy(shape, t->shape, sizeof shape); // (t may be a stage's: trace_push may move the stages)
    int k = c->tr->n < TRACE_MAX_STAGES ? trace_push(c->tr, id, rank, shape, op0, op1, op2) : -1;
    if (k < 0) {
        snprintf(c->err, c->err_len, "%s: the backward view needs more stages than the %d a trace holds (or out of memory)",
                 c->file, TRACE_MAX_STAGES);
        return -1;
    }
    Stage *st = &c->tr->stages[k];
    snprintf(st->name, sizeof st->name, "%s", name);
    st->layer = layer;
    if (src) memcpy(st->t.data, src->data, src->size * sizeof *src->data);
    return k;
}

// The stages after i that read it and pass a gradient back (at most 3 kept in out).
static int readers(const Ctx *c, int i, int out[3])
{
    int n = 0;
    for (int s = i + 1; s < c->n_fwd; s++) {
        const Stage *st = &c->tr->stages[s];
        if (!tensor_present(&c->g->d[s])) continue;
        for (int k = 0; k < TRACE_MAX_OPERANDS; k++)
            if (st->operands[k] == i) {
                if (n < 3) out[n] = s;
                n++;
                break;
            }
    }
    return n;
}

// The gradient stage's name of weight slot `slot` of `layer` (as grads_item names it).
static void weight_name(const Trace *tr, WeightSlot slot, int layer, char *name, size_t n)
{
    if (slot >= WEIGHT_EMBED) snprintf(name, n, "grad.model.%s", WEIGHT_INFO[slot].name);
    else if (tr->n_layers > 1) snprintf(name, n, "grad.l%d.%s", layer, WEIGHT_INFO[slot].name);
    else snprintf(name, n, "grad.%s", WEIGHT_INFO[slot].name);
}

// The gradient of a stage's weight or bias W (the layer and slot whose tensor it is, the model's
// own in layer 0's; the first with tied embeddings: E), after the stage's own gradient: the
// backward pass's (GRAD_PARAM; biases, γ, β, the embedding tables, W₁ and W_gate, the sinks). No gradient
// (a constant): nothing pushed.
static bool push_param(Ctx *c, int s, const Tensor *W)
{
    if (!W || c->gi[s] < 0) return true;
    for (int l = 0; l < c->g->n_layers; l++)
        for (int slot = 0; slot < WEIGHT_COUNT; slot++) {
            if (attn_weight((AttnWeights *)&c->w[l], slot) != W) continue;
            const Tensor *dw = &c->g->dw[l][slot];
            if (!tensor_present(dw)) return true;
            char name[STAGE_NAME_MAX];
            weight_name(c->tr, (WeightSlot)slot, slot >= WEIGHT_EMBED ? -1 : l, name, sizeof name);
            const int k = push(c, STAGE_GRAD_PARAM, name, NULL, dw, slot >= WEIGHT_EMBED ? -1 : l, c->gi[s],
                               c->tr->stages[s].operands[0], s);
            if (k < 0) return false;
            c->tr->stages[k].weight = W;
            return true;
        }
    return true;
}

// The weights' gradients of forward stage s after its own gradient's: a linear map's dW = dYᵀ·X
// (push_weight) and, with c->params, the others (push_param).
static bool push_weight(Ctx *c, int s);
static bool push_params(Ctx *c, int s)
{
    const Stage *st = &c->tr->stages[s];
    const Tensor *W = st->weight, *b = st->bias;
    switch (st->kind) {
    case STAGE_KIND_PROJECTION:
    case STAGE_KIND_OUT_PROJ:
    case STAGE_KIND_FFN_SUM:
        return push_weight(c, s) && (!c->params || push_param(c, s, b));
    case STAGE_KIND_NORM:
    case STAGE_KIND_FFN_HIDDEN: // (W₁ or W_gate through the activation, then its bias)
    case STAGE_KIND_EMBED:
    case STAGE_KIND_POS_EMBED:
    case STAGE_KIND_SOFTMAX: // (attn's weight: gpt-oss's sink logits)
        return !c->params || (push_param(c, s, W) && push_param(c, s, b));
    default: return true;
    }
}

// dW = dYᵀ·X of linear stage s (X its operand 0) after its gradient's stage.
static bool push_weight(Ctx *c, int s)
{
    Trace *tr = c->tr;
    const Tensor *W = tr->stages[s].weight; // (the lesson's: stays where it is)
    const WeightSlot slot = STAGE_INFO[tr->stages[s].id].weight;
    const int x = tr->stages[s].operands[0], layer = tr->stages[s].layer;
    if (!W || slot == WEIGHT_NONE || x < 0 || c->gi[s] < 0) return true;
    char name[STAGE_NAME_MAX];
    weight_name(tr, slot, layer, name, sizeof name);
    int k = push(c, STAGE_GRAD_WEIGHT, name, W, NULL, layer, c->gi[s], x, s);
    if (k < 0) return false;
    const int out = W->shape[0], in = W->shape[1];
    const int rows = (int)(tr->stages[c->gi[s]].t.size / (size_t)out);
    tr->stages[k].weight = W;
    float *tmp = malloc(backward_linear_tmp(rows, in, out) * sizeof *tmp);
    if (!tmp) {
        snprintf(c->err, c->err_len, "%s: out of memory computing the backward view", c->file);
        return false;
    }
    backward_linear(NULL, tr->stages[k].t.data, NULL, tr->stages[c->gi[s]].t.data, tr->stages[x].t.data, W->data, rows,
                    in, out, tmp);
    free(tmp);
    return true;
}

// J = diag(a) − a·aᵀ of the row of each (batch, head) slice backward_jacobian_row picks.
static bool push_jacobian(Ctx *c, int attn)
{
    Trace *tr = c->tr;
    const Tensor *a = &tr->stages[attn].t, *da = &tr->stages[c->gi[attn]].t;
    if (a->rank != 4) return true;
    const int B = a->shape[0], H = a->shape[1], Lq = a->shape[2], Lk = a->shape[3];
    Tensor shape;
    memset(&shape, 0, sizeof shape);
    shape.rank = 4, shape.shape[0] = B, shape.shape[1] = H, shape.shape[2] = Lk, shape.shape[3] = Lk;
    char name[STAGE_NAME_MAX];
    if (tr->n_layers > 1) snprintf(name, sizeof name, "grad.l%d.jacobian", tr->stages[attn].layer);
    else snprintf(name, sizeof name, "grad.jacobian");
    int k = push(c, STAGE_GRAD_JACOBIAN, name, &shape, NULL, tr->stages[attn].layer, attn, c->gi[attn], -1);
    if (k < 0) return false;
    tr->stages[k].key_rows = true; // (a row and a column per key)
    a = &tr->stages[attn].t, da = &tr->stages[c->gi[attn]].t; // (the push may have moved the stages)
    for (int bh = 0; bh < B * H; bh++) {
        const float *as = a->data + (size_t)bh * Lq * Lk, *ds = da->data + (size_t)bh * Lq * Lk;
        const float *ar = as + (size_t)backward_jacobian_row(as, ds, Lq, Lk) * Lk;
        float *J = tr->stages[k].t.data + (size_t)bh * Lk * Lk;
        for (int j = 0; j < Lk; j++)
            for (int m = 0; m < Lk; m++) J[j * Lk + m] = (j == m ? ar[j] : 0.0f) - ar[j] * ar[m];
    }
    return true;
}

// The gradient stage of forward stage i, its kind from the one stage that reads it (several:
// their sum, GRAD_PASS); a softmax's input gets its Jacobian first, a linear map's output
// its weight's gradient after.
static bool push_stage(Ctx *c, int i)
{
    Trace *tr = c->tr;
    int rd[3], nr = readers(c, i, rd);
    StageId id = STAGE_GRAD_STAGE;
    int op[3] = {nr > 0 ? c->gi[rd[0]] : -1, nr > 1 ? c->gi[rd[1]] : -1, nr > 2 ? c->gi[rd[2]] : -1};
    const Stage *r = nr == 1 ? &tr->stages[rd[0]] : NULL;
    if (r && r->kind == STAGE_KIND_SOFTMAX) {
        if (!push_jacobian(c, rd[0])) return false;
        id = STAGE_GRAD_SOFTMAX, op[0] = rd[0], op[1] = c->gi[rd[0]], op[2] = -1;
    } else if (r && r->kind == STAGE_KIND_WEIGHTED_SUM && r->operands[0] == i) {
        id = STAGE_GRAD_ATTN, op[0] = c->gi[rd[0]], op[1] = r->operands[1], op[2] = -1;
    } else if (r && r->kind == STAGE_KIND_SCORES && (r->operands[0] == i || r->operands[1] == i)) {
        id = STAGE_GRAD_QK, op[0] = c->gi[rd[0]], op[1] = r->operands[r->operands[0] == i ? 1 : 0], op[2] = rd[0];
    } else if (r && r->weight && r->operands[0] == i &&
               (r->kind == STAGE_KIND_PROJECTION || r->kind == STAGE_KIND_OUT_PROJ || r->kind == STAGE_KIND_FFN_SUM)) {
        id = STAGE_GRAD_LINEAR, op[0] = c->gi[rd[0]], op[1] = rd[0], op[2] = -1;
    }
    char name[STAGE_NAME_MAX + 8]; // (a stage's name is at most 16 bytes: "l7.residual_norm")
    snprintf(name, sizeof name, "grad.%s", tr->stages[i].name);
    int k = push(c, id, name, NULL, &c->g->d[i], tr->stages[i].layer, op[0], op[1], op[2]);
    if (k < 0) return false;
    if (id == STAGE_GRAD_LINEAR) tr->stages[k].weight = tr->stages[rd[0]].weight;
    tr->stages[k].key_rows = tr->stages[i].key_rows;
    c->gi[i] = k;
    return push_params(c, i);
}

// The targets as a one-hot (B, L, V) and dL/dlogits, then the unembedding's gradient.
static bool push_loss(Ctx *c, int logits, int probs)
{
    Trace *tr = c->tr;
    const int V = tr->stages[logits].t.shape[tr->stages[logits].t.rank - 1];
    int tk = push(c, STAGE_GRAD_TARGET, "grad.target", &tr->stages[logits].t, NULL, -1, probs, -1, -1);
    if (tk < 0) return false;
    for (int r = 0; r < c->g->n_rows; r++)
        if (c->g->targets[r] >= 0) tr->stages[tk].t.data[(size_t)r * V + c->g->targets[r]] = 1.0f;
    int k = push(c, STAGE_GRAD_LOGITS, "grad.logits", NULL, &c->g->d[logits], -1, probs, tk, -1);
    if (k < 0) return false;
    c->gi[logits] = k;
    return push_params(c, logits);
}

// The backward view's stages after the n_fwd forward ones (with the other weights' gradients
// when params); false (tr back to its forward stages) with err filled.
static bool append_all(Ctx *c, int logits, int probs)
{
    Trace *tr = c->tr;
    for (int i = 0; i < c->n_fwd; i++) c->gi[i] = -1;
    const int layer = tr->layer;
    tr->layer = -1;
    bool ok = push_loss(c, logits, probs);
    for (int i = c->n_fwd - 1; ok && i >= 0; i--)
        if (i != logits && tensor_present(&c->g->d[i])) ok = push_stage(c, i);
    tr->layer = layer;
    if (!ok) { // back to the forward stages alone
        for (int i = c->n_fwd; i < tr->n; i++) tensor_free(&tr->stages[i].t);
        tr->n = c->n_fwd;
    }
    return ok;
}

bool backward_trace_append(const AttnConfig *cfg, const AttnWeights *w, Trace *tr, const int *targets,
                           const char *file, char *err, size_t err_len)
{
    Grads g;
    grads_init(&g);
    if (!attn_backward(cfg, w, tr, targets, &g, file, err, err_len)) return false;
    const int n_fwd = tr->n, logits = trace_find(tr, "logits"), probs = trace_find(tr, "probs");
    int *gi = malloc((size_t)n_fwd * sizeof *gi);
    Ctx c = {tr, w, &g, gi, n_fwd, true, file, err, err_len};
    // room for every stage it may push (the targets, dL/dlogits, then at most a Jacobian, a
    // gradient and two weights' per forward stage): no stage moves while it runs
    const int most = n_fwd + 2 + 4 * n_fwd;
    bool ok = gi && logits >= 0 && probs >= 0 && trace_reserve(tr, most < TRACE_MAX_STAGES ? most : TRACE_MAX_STAGES);
    if (!ok) snprintf(err, err_len, "%s: out of memory computing the backward view", file);
    ok = ok && append_all(&c, logits, probs);
    if (!ok && gi && tr->n == n_fwd && c.params) { // (a model too big for them all: without the other weights')
        c.params = false;
        ok = append_all(&c, logits, probs);
    }
    free(gi);
    grads_free(&g);
    return ok;
}
