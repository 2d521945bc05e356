// recipe_grad.c — the backward view's stages (backward_trace.c appends them, stages.h's
// GRAD kinds): the targets, dL/dlogits = (p − y) / (N·T), dX = dY·W, dW = dYᵀ·X,
// dA = dO·Vᵀ, the softmax's Jacobian of one row, dS = A ⊙ (dA − rowsum(dA ⊙ A)),
// dQ = dS·K / scale and dK = dSᵀ·Q / scale, and the sums the other stages get back. Each
// names its stage after the forward one it belongs to ("∂L/∂Q"), and its tooltips work the
// sums out with the numbers on screen. recipe.h says what a recipe holds.
#include "recipe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backward.h"
#include "i18n.h"
#include "lesson.h"
#include "tensor.h"

static const Stage *op_stage(const Trace *tr, int s, int k)
{
    int o = tr->stages[s].operands[k];
    return o >= 0 ? &tr->stages[o] : NULL;
}

// A position's token as the axis writes it (a space: ␣), "?" when the lesson has none.
static const char *token_text(const View *v, int b, int l)
{
    const char *t = lesson_token_label(v->lesson, b, l);
    return !t ? "?" : strcmp(t, " ") == 0 ? "\xE2\x90\xA3" : t;
}

// The (batch, head) slice of the softmax's attn and dA a backward stage s reads (its operands
// 0 and 1), and the row its Jacobian is of; false when they are not (B, H, Lq, Lk).
typedef struct JacRow {
    const float *a, *da; // the slice's (Lq, Lk)
    int b, h, Lq, Lk, row;
} JacRow;

static bool jacobian_row(const Trace *tr, const View *v, int s, JacRow *j)
{
    const Stage *as = op_stage(tr, s, 0), *ds = op_stage(tr, s, 1);
    if (!as || !ds || as->t.rank != 4 || ds->t.rank != 4) return false;
    j->b = v->batch < as->t.shape[0] ? v->batch : 0, j->h = v->head < as->t.shape[1] ? v->head : 0;
    j->Lq = as->t.shape[2], j->Lk = as->t.shape[3];
    const size_t off = ((size_t)j->b * as->t.shape[1] + j->h) * j->Lq * j->Lk;
    j->a = as->t.data + off, j->da = ds->t.data + off;
    j->row = backward_jacobian_row(j->a, j->da, j->Lq, j->Lk);
    return true;
}

// ---- names: "∂L/∂Q", "∂L/∂W_Q", the forward stage's title --------------------------------

static const char *grad_symbol(const Trace *tr, int s)
{
    static _Thread_local char buf[4][64];
    static _Thread_local int next;
    char *out = buf[next++ & 3];
    const Stage *st = &tr->stages[s];
    int f = backward_forward_stage(tr, s);
    if (st->kind == STAGE_KIND_GRAD_WEIGHT)
        snprintf(out, sizeof buf[0], "∂L/∂%s", recipe_weight_plain(tr, st->operands[2]));
    else if (st->kind == STAGE_KIND_GRAD_PARAM && st->operands[2] >= 0)
        snprintf(out, sizeof buf[0], "∂L/∂%s", st->weight && st->weight == tr->stages[st->operands[2]].bias
                                                  ? recipe_param_symbol(tr, st->operands[2], true)
                                                  : recipe_weight_plain(tr, st->operands[2]));
    else if (f >= 0)
        snprintf(out, sizeof buf[0], "∂L/∂%s", recipe_symbol(tr, f, LANG_EN));
    else
        snprintf(out, sizeof buf[0], "%s", STAGE_INFO[st->id].symbol);
    return out;
}

// Title: "Backward · ∂L/∂Q (Q projection)"; a panel's name: its symbol.
static const char *grad_text(const Trace *tr, int s, const char *family, Lang lang)
{
    if (strcmp(family, "title") != 0) return grad_symbol(tr, s);
    static _Thread_local char buf[4][256];
    static _Thread_local int next;
    char *out = buf[next++ & 3], key[64];
    const Stage *st = &tr->stages[s];
    int f = backward_forward_stage(tr, s);
    if (st->kind == STAGE_KIND_GRAD_WEIGHT || st->kind == STAGE_KIND_GRAD_PARAM) f = st->operands[2];
    const char *args[] = {grad_symbol(tr, s), f >= 0 ? recipe_stage_text(tr, f, "name", true, lang) : ""};
    snprintf(key, sizeof key, "title.%s", STAGE_INFO[st->id].name);
    i18n_fmt(out, sizeof buf[0], lang, key, 2, args);
    return out;
}

// ---- panels ---------------------------------------------------------------------------------

static PanelSpec *add(Layout *L, const Trace *tr, const View *v, int s, const char *op, Reads reads, bool transposed)
{
    PanelSpec *p = recipe_add_stage(L, tr, v, s, v->head, op, reads);
    if (p && transposed) panel_transpose(p);
    if (p && s >= 0 && (tr->stages[s].kind == STAGE_KIND_GRAD_TARGET || tr->stages[s].kind == STAGE_KIND_GRAD_LOSS))
        p->col_axis = AXIS_VOCAB;
    if (p && s >= 0 && tr->stages[s].kind == STAGE_KIND_GRAD_WEIGHT) p->row_axis = AXIS_INDEX; // (out, in)
    if (p && s >= 0 && tr->stages[s].kind == STAGE_KIND_GRAD_PARAM) p->row_axis = AXIS_INDEX;
    return p;
}

static void panels_self(Layout *L, const Trace *tr, const View *v) { add(L, tr, v, v->stage, "", READS_NONE, false); }

// p − y → ∂L/∂logits
static void panels_loss(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add(L, tr, v, st->operands[0], "", READS_ROW, false);
    add(L, tr, v, st->operands[1], "−", READS_ROW, false);
    add(L, tr, v, v->stage, "→", READS_NONE, false);
}

// ∂L/∂y · W (W as PyTorch stores it, (out, in): a column of it per input dimension)
static void panels_linear(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add(L, tr, v, st->operands[0], "", READS_ROW, false);
    PanelSpec *w = recipe_add_param(L, tr, v, st->operands[1], false, "·", READS_COL);
    if (w && w->transposed) panel_transpose(w);
    if (w) snprintf(w->title, sizeof w->title, "%s", recipe_weight_plain(tr, st->operands[1]));
    add(L, tr, v, v->stage, "=", READS_NONE, false);
}

// (∂L/∂y)ᵀ · x
static void panels_weight(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    PanelSpec *dy = add(L, tr, v, st->operands[0], "", READS_ROW, true);
    if (dy) snprintf(dy->title, sizeof dy->title, "(%s)ᵀ", recipe_symbol(tr, st->operands[0], v->lang));
    add(L, tr, v, st->operands[1], "·", READS_COL, false);
    add(L, tr, v, v->stage, "=", READS_NONE, false);
}

// two operands then the result: ∂L/∂O · Vᵀ, A ⊙ ∂L/∂A, ∂L/∂S · K
static void panels_two(Layout *L, const Trace *tr, const View *v, const char *op, bool t0, bool t1)
{
    const Stage *st = &tr->stages[v->stage];
    add(L, tr, v, st->operands[0], "", READS_ROW, t0);
    add(L, tr, v, st->operands[1], op, READS_COL, t1);
    add(L, tr, v, v->stage, "=", READS_NONE, false);
}
static void panels_attn(Layout *L, const Trace *tr, const View *v) { panels_two(L, tr, v, "·", false, true); }
static void panels_softmax(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add(L, tr, v, st->operands[0], "", READS_ROW, false);
    add(L, tr, v, st->operands[1], "⊙", READS_ROW, false);
    add(L, tr, v, v->stage, "=", READS_NONE, false);
}

// The key side: (∂L/∂S)ᵀ · Q.
static bool qk_is_k(const Trace *tr, int s)
{
    const Stage *sc = op_stage(tr, s, 2);
    int f = backward_forward_stage(tr, s);
    return sc && f >= 0 && sc->operands[1] == f;
}
static void panels_qk(Layout *L, const Trace *tr, const View *v) { panels_two(L, tr, v, "·", qk_is_k(tr, v->stage), false); }

// Row r of stage s's (batch, head) slice as a column titled sym (the formula's "∂L/∂a").
static void add_row_column(Layout *L, const Trace *tr, const View *v, int s, int r, const char *op, const char *sym)
{
    PanelSpec *p = add(L, tr, v, s, op, READS_COL, false);
    if (!p) return;
    p->data += (size_t)r * (size_t)p->rs, p->rows = 1;
    p->mask = NULL, p->edit_tensor = -1;
    panel_transpose(p);
    p->col_axis = AXIS_NONE;
    snprintf(p->title, sizeof p->title, "%s", sym);
}

// J of the row the narration names (its title says which) times that row of ∂L/∂attn: that
// row of ∂L/∂s (the next stage's, backward_trace_append pushes it right after)
static void panels_jacobian(Layout *L, const Trace *tr, const View *v)
{
    PanelSpec *p = add(L, tr, v, v->stage, "", READS_ROW, false);
    JacRow J;
    if (!p || !jacobian_row(tr, v, v->stage, &J)) return;
    snprintf(p->title, sizeof p->title, "J: a = attn[%d]", J.row);
    add_row_column(L, tr, v, tr->stages[v->stage].operands[1], J.row, "·", "∂L/∂a");
    if (v->stage + 1 < tr->n && tr->stages[v->stage + 1].kind == STAGE_KIND_GRAD_SOFTMAX)
        add_row_column(L, tr, v, v->stage + 1, J.row, "=", "∂L/∂s");
}

static void panels_pass(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    for (int k = 0; k < TRACE_MAX_OPERANDS; k++) add(L, tr, v, st->operands[k], k ? "+" : "", READS_NONE, false);
    add(L, tr, v, v->stage, "→", READS_NONE, false);
}

// ---- formulas -------------------------------------------------------------------------------

static void formula_key(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    const Stage *st = &tr->stages[s];
    const char *s0 = st->operands[0] >= 0 ? recipe_symbol(tr, st->operands[0], lang) : "?";
    const char *s1 = st->operands[1] >= 0 ? recipe_symbol(tr, st->operands[1], lang) : "?";
    char scale[32], key[64];
    recipe_scale_text(tr, scale, sizeof scale);
    const char *wsym = st->kind == STAGE_KIND_GRAD_LINEAR ? recipe_weight_plain(tr, st->operands[1]) : s1;
    const char *args[] = {recipe_symbol(tr, s, lang), s0, wsym, scale};
    snprintf(key, sizeof key, "formula.%s%s", STAGE_INFO[st->id].name,
             st->kind == STAGE_KIND_GRAD_QK && qk_is_k(tr, s) ? "_k" : "");
    i18n_fmt(out, n, lang, key, 4, args);
}

// The loss and its divisor: N counted positions (rows of y with a 1), T.
static int counted(const Trace *tr, int s, double *loss)
{
    const Stage *st = &tr->stages[s];
    const Tensor *p = &op_stage(tr, s, 0)->t, *y = &op_stage(tr, s, 1)->t;
    const int V = y->shape[y->rank - 1], rows = (int)(y->size / (size_t)V);
    int n = 0;
    *loss = 0.0;
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < V; j++)
            if (y->data[(size_t)r * V + j] == 1.0f) n++, *loss -= log((double)p->data[(size_t)r * V + j]);
    if (n) *loss /= n;
    (void)st;
    return n;
}

static void note_loss(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    double loss;
    int N = counted(tr, s, &loss);
    char nb[16], tb[16], lb[32];
    snprintf(nb, sizeof nb, "%d", N), snprintf(tb, sizeof tb, "%.4g", (double)tr->temperature);
    snprintf(lb, sizeof lb, "%.4f", loss);
    const char *args[] = {nb, tb, lb};
    i18n_fmt(out, n, lang, "note.grad.logits", 3, args);
}

// ---- tooltips: the sums with the numbers on screen --------------------------------------------

static void tip_loss(TipOut *o, const TipCell *c)
{
    double loss;
    const int N = counted(c->tr, (int)(c->st - c->tr->stages), &loss);
    const Tensor *p = c->t0, *y = c->t1;
    if (!p || !y || !N) return;
    const int V = tip_last_dim(p);
    const float pv = tip_row(p, c->b, 0, c->row)[c->col], yv = tip_row(y, c->b, 0, c->row)[c->col];
    float ysum = 0.0f;
    for (int j = 0; j < V; j++) ysum += tip_row(y, c->b, 0, c->row)[j];
    if (ysum == 0.0f) { // no next token here: not counted
        tip_key(o, c->lang, "tip.grad.not_counted", 0, NULL);
        tip_equals(o, c->val);
        return;
    }
    char nt[32];
    const double NT = (double)N * (double)c->tr->temperature;
    snprintf(nt, sizeof nt, NT == floor(NT) ? "%.0f" : "%.6g", NT);
    const char *args[] = {nt};
    tip_key(o, c->lang, "tip.grad.logits", 1, args);
    tip_put(o, "\n= (");
    tip_num(o, pv, false);
    tip_put(o, yv == 1.0f ? " − 1) / " : " − 0) / ");
    tip_put(o, nt);
    tip_equals(o, c->val);
}

// Σ a[k·as]·b[k·bs] over n terms, as the cells write them, then the result.
static void tip_dot(TipOut *o, const TipCell *c, const char *key, const float *a, int as, const float *b, int bs, int n,
                    float div)
{
    char rb[16], cb[16], db[32];
    snprintf(rb, sizeof rb, "%d", c->row), snprintf(cb, sizeof cb, "%d", c->col);
    recipe_scale_text(c->tr, db, sizeof db);
    const char *args[] = {rb, cb, db};
    tip_key(o, c->lang, key, 3, args);
    tip_put(o, div != 1.0f ? "\n= (" : "\n= ");
    tip_terms(o, c->lang, a, as, b, bs, n);
    if (div != 1.0f) {
        tip_put(o, ") / ");
        tip_put(o, db);
    }
    tip_equals(o, c->val);
}

static void tip_linear(TipOut *o, const TipCell *c)
{
    const Tensor *W = c->st->weight;
    if (!c->t0 || !W) return;
    const int out = W->shape[0], in = W->shape[1];
    tip_dot(o, c, "tip.grad.linear", tip_row(c->t0, c->b, 0, c->row), 1, W->data + c->col, in, out, 1.0f);
}

// dW[o, i] = Σ over every position r (all batches) of dY[r, o]·X[r, i]
static void tip_weight(TipOut *o, const TipCell *c)
{
    const Tensor *W = c->st->weight;
    if (!c->t0 || !c->t1 || !W) return;
    const int out = W->shape[0], in = W->shape[1], rows = (int)(c->t0->size / (size_t)out);
    tip_dot(o, c, "tip.grad.weight", c->t0->data + c->row, out, c->t1->data + c->col, in, rows, 1.0f);
}

static void tip_attn(TipOut *o, const TipCell *c)
{
    if (!c->t0 || !c->t1) return;
    const int h = trace_kv_head(c->tr, c->t1, c->h), dv = tip_last_dim(c->t1);
    tip_dot(o, c, "tip.grad.attn", tip_row(c->t0, c->b, c->h, c->row), 1, tip_row(c->t1, c->b, h, c->col), 1, dv, 1.0f);
}

static void tip_qk(TipOut *o, const TipCell *c)
{
    const Trace *tr = c->tr;
    if (!c->t0 || !c->t1 || tr->n_kv_heads != tr->n_heads) return; // (a GQA group's sum: its value only)
    const int s = (int)(c->st - tr->stages), Lk = tip_last_dim(c->t0), d = tip_last_dim(c->t1);
    if (qk_is_k(tr, s)) { // dK[j, c] = Σ_i dS[i, j]·Q[i, c] / scale
        const float *ds = tip_row(c->t0, c->b, c->h, 0), *q = tip_row(c->t1, c->b, c->h, 0);
        tip_dot(o, c, "tip.grad.qk_k", ds + c->row, Lk, q + c->col, d, c->t0->shape[2], tr->scale);
    } else {
        tip_dot(o, c, "tip.grad.qk", tip_row(c->t0, c->b, c->h, c->row), 1, tip_row(c->t1, c->b, c->h, 0) + c->col, d, Lk,
                tr->scale);
    }
}

// a_j·(δ_jk − a_k) of the row the Jacobian is of
static void tip_jacobian(TipOut *o, const TipCell *c)
{
    if (!c->t0 || !c->t1) return;
    const int Lq = c->t0->shape[2], Lk = tip_last_dim(c->t0);
    const float *a = tip_row(c->t0, c->b, c->h, 0), *da = tip_row(c->t1, c->b, c->h, 0);
    const float *ar = a + (size_t)backward_jacobian_row(a, da, Lq, Lk) * Lk;
    char jb[16], kb[16];
    snprintf(jb, sizeof jb, "%d", c->row), snprintf(kb, sizeof kb, "%d", c->col);
    const char *args[] = {jb, kb};
    tip_key(o, c->lang, "tip.grad.jacobian", 2, args);
    tip_put(o, "\n= ");
    tip_num(o, ar[c->row], false);
    tip_put(o, c->row == c->col ? "×(1 − " : "×(0 − ");
    tip_num(o, ar[c->col], false);
    tip_put(o, ")");
    tip_equals(o, c->val);
}

// dS[i, j] = a_ij·(dA_ij − Σ_k dA_ik·a_ik): the row's sum first, then the cell
static void tip_softmax(TipOut *o, const TipCell *c)
{
    if (!c->t0 || !c->t1) return;
    const int Lk = tip_last_dim(c->t0);
    const float *a = tip_row(c->t0, c->b, c->h, c->row), *da = tip_row(c->t1, c->b, c->h, c->row);
    float dot = 0.0f;
    for (int k = 0; k < Lk; k++) dot += da[k] * a[k];
    char rb[16], cb[16];
    snprintf(rb, sizeof rb, "%d", c->row), snprintf(cb, sizeof cb, "%d", c->col);
    const char *args[] = {rb, cb};
    tip_key(o, c->lang, "tip.grad.rowsum", 2, args);
    tip_put(o, "\n= ");
    tip_terms(o, c->lang, da, 1, a, 1, Lk);
    tip_equals(o, dot);
    tip_put(o, "\n");
    tip_key(o, c->lang, "tip.grad.softmax", 2, args);
    tip_put(o, "\n= ");
    tip_num(o, a[c->col], false);
    tip_put(o, "×(");
    tip_num(o, da[c->col], false);
    tip_put(o, " − ");
    tip_num(o, dot, true);
    tip_put(o, ")");
    tip_equals(o, c->val);
}

// ---- narration from the numbers: whose score rises ---------------------------------------------

static const char *story_softmax(const Trace *tr, const View *v, char *buf, size_t n)
{
    JacRow J;
    if (!jacobian_row(tr, v, v->stage, &J)) return NULL;
    const size_t off = (size_t)(J.a - op_stage(tr, v->stage, 0)->t.data);
    const float *row = tr->stages[v->stage].t.data + off + (size_t)J.row * J.Lk, *ar = J.a + (size_t)J.row * J.Lk;
    int lo = 0, hi = 0;
    for (int j = 1; j < J.Lk; j++) {
        if (row[j] < row[lo]) lo = j;
        if (row[j] > row[hi]) hi = j;
    }
    char hb[16], rb[16], jb[16], kb[16], g1[32], g2[32], w1[32];
    snprintf(hb, sizeof hb, "%d", J.h), snprintf(rb, sizeof rb, "%d", J.row);
    snprintf(jb, sizeof jb, "%d", lo), snprintf(kb, sizeof kb, "%d", hi);
    tip_number(row[lo], g1, sizeof g1), tip_number(row[hi], g2, sizeof g2), tip_number(ar[lo], w1, sizeof w1);
    const char *args[] = {hb, rb, token_text(v, J.b, J.row), jb, token_text(v, J.b, lo), g1, w1, kb, g2};
    i18n_fmt(buf, n, v->lang, row[lo] < 0.0f ? "narr.grad.softmax" : "narr.grad.softmax_none", 9, args);
    return buf;
}

// Which row the Jacobian is of, then what it is.
static const char *story_jacobian(const Trace *tr, const View *v, char *buf, size_t n)
{
    JacRow J;
    if (!jacobian_row(tr, v, v->stage, &J)) return NULL;
    char hb[16], rb[16];
    snprintf(hb, sizeof hb, "%d", J.h), snprintf(rb, sizeof rb, "%d", J.row);
    const char *args[] = {hb, rb, token_text(v, J.b, J.row)};
    i18n_fmt(buf, n, v->lang, "narr.grad.jacobian", 3, args);
    return buf;
}

static const char *story_loss(const Trace *tr, const View *v, char *buf, size_t n)
{
    double loss;
    const int N = counted(tr, v->stage, &loss);
    char nb[16], lb[32];
    snprintf(nb, sizeof nb, "%d", N), snprintf(lb, sizeof lb, "%.4f", loss);
    const char *args[] = {lb, nb};
    i18n_fmt(buf, n, v->lang, "narr.grad.logits", 2, args);
    return buf;
}

// ---- the other weights' gradients (GRAD_PARAM): sums of the rows of ∂L/∂y ----------------------

typedef enum ParamKind { PARAM_BIAS, PARAM_GAMMA, PARAM_TOKENS, PARAM_POSITIONS, PARAM_ACT_W, PARAM_ACT_B, PARAM_SINK } ParamKind;
static const char *const PARAM_KEY[] = {"bias", "gamma", "tokens", "positions", "act_w", "act_b", "sink"};

// Which sum a GRAD_PARAM stage s is, from the forward stage whose weight it is (its operand 2).
static ParamKind param_kind(const Trace *tr, int s)
{
    const Stage *st = &tr->stages[s], *f = op_stage(tr, s, 2);
    if (!f) return PARAM_BIAS;
    const bool bias = st->weight == f->bias;
    switch (f->kind) {
    case STAGE_KIND_EMBED: return PARAM_TOKENS;
    case STAGE_KIND_POS_EMBED: return PARAM_POSITIONS;
    case STAGE_KIND_NORM: return bias ? PARAM_BIAS : PARAM_GAMMA;
    case STAGE_KIND_FFN_HIDDEN: return bias ? PARAM_ACT_B : PARAM_ACT_W;
    case STAGE_KIND_SOFTMAX: return PARAM_SINK; // (gpt-oss's sink logits, attn's weight)
    default: return PARAM_BIAS;
    }
}

// ∂L/∂u[r, o] of FFN stage f from dh = ∂L/∂f (its pre-activation u = x·Wᵀ + b recomputed, the sums in
// order as the forward's): dh·act′(u), SwiGLU's value path dh·g (the gate g on screen), as backward.c.
static float param_du(const Trace *tr, const Stage *f, const float *dh, int r, int o)
{
    const Tensor *x = &tr->stages[f->operands[0]].t;
    const int F = tip_last_dim(&f->t), C = tip_last_dim(x);
    const float g = dh[(size_t)r * F + o];
    if (f->id == STAGE_FFN_HIDDEN && f->operands[1] >= 0) return g * tr->stages[f->operands[1]].t.data[(size_t)r * F + o];
    const float *xr = x->data + (size_t)r * C, *w = f->weight->data + (size_t)o * C;
    float u = 0.0f;
    for (int i = 0; i < C; i++) u += xr[i] * w[i];
    if (f->bias) u += f->bias->data[o];
    return g * backward_activation(f->id == STAGE_FFN_GATE ? FFN_SWIGLU : tr->ffn_act, u);
}

// x̂[r, j] of a norm's input row (LayerNorm: (x − mean)·rstd; RMSNorm: x·rstd), in double as backward_norm.
static float param_xhat(const Trace *tr, const float *xr, int C, int j)
{
    double mean = 0.0, ms = 0.0;
    for (int k = 0; k < C; k++) mean += (double)xr[k];
    mean = tr->norm_rms ? 0.0 : mean / C;
    for (int k = 0; k < C; k++) ms += ((double)xr[k] - mean) * ((double)xr[k] - mean);
    return (float)(((double)xr[j] - mean) / sqrt(ms / C + (double)tr->norm_eps));
}

// The sink logit of head h: a term per row r of every text, (Σa[r] − 1)·Σ(dA ⊙ a)[r] (minus the sink's
// weight 1 − Σa[r], times the row's rank-one term), both in double as backward_softmax sums them.
static int param_sink_terms(const Stage *dy, const Stage *f, int h, float *a, float *b)
{
    const Tensor *A = &f->t, *dA = &dy->t;
    if (A->rank != 4 || dA->size != A->size || h >= A->shape[1]) return 0;
    const int B = A->shape[0], H = A->shape[1], Lq = A->shape[2], Lk = A->shape[3];
    int n = 0;
    for (int bb = 0; bb < B; bb++)
        for (int r = 0; r < Lq; r++, n++) {
            const size_t off = (((size_t)bb * H + h) * Lq + r) * Lk;
            double dot = 0.0, sum = 0.0;
            for (int j = 0; j < Lk; j++) dot += (double)dA->data[off + j] * (double)A->data[off + j], sum += (double)A->data[off + j];
            if (n < TIP_MAX_TERMS) a[n] = (float)(sum - 1.0), b[n] = (float)dot;
        }
    return n;
}

// The terms of cell (row, col) of GRAD_PARAM stage s: a[k] (times b[k] when b is given; NULL:
// a plain sum), the first TIP_MAX_TERMS of them written, how many in all returned.
static int param_terms(const Trace *tr, int s, int row, int col, float *a, float *b, bool *product)
{
    const Stage *f = op_stage(tr, s, 2), *dy = op_stage(tr, s, 0), *x = op_stage(tr, s, 1);
    const ParamKind k = param_kind(tr, s);
    if (k == PARAM_SINK) return *product = true, param_sink_terms(dy, f, col, a, b);
    const int C = tip_last_dim(&dy->t), rows = (int)(dy->t.size / (size_t)C);
    const int Cx = x ? tip_last_dim(&x->t) : 0;
    int n = 0;
    *product = k == PARAM_GAMMA || k == PARAM_ACT_W;
    for (int r = 0; r < rows; r++) {
        if (k == PARAM_TOKENS && (!tr->ids || tr->ids[r] != row)) continue;
        if (k == PARAM_POSITIONS && r % tr->len_q != row) continue;
        if (n < TIP_MAX_TERMS) {
            const int j = k == PARAM_ACT_W ? row : col; // (W₁'s row o: the hidden unit)
            a[n] = k == PARAM_ACT_W || k == PARAM_ACT_B ? param_du(tr, f, dy->t.data, r, j) : dy->t.data[(size_t)r * C + j];
            if (k == PARAM_GAMMA) b[n] = param_xhat(tr, x->t.data + (size_t)r * Cx, Cx, col);
            if (k == PARAM_ACT_W) b[n] = x->t.data[(size_t)r * Cx + col];
        }
        n++;
    }
    return n;
}

// The tied unembedding's share of ∂L/∂E (grad.model.lm_head's stage), or -1.
static int tied_share(const Trace *tr, int s)
{
    if (!tr->tied || param_kind(tr, s) != PARAM_TOKENS) return -1;
    const int k = trace_find(tr, "grad.model.lm_head");
    return k >= 0 && tr->stages[k].t.size == tr->stages[s].t.size ? k : -1;
}

static void panels_param(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    const ParamKind k = param_kind(tr, v->stage);
    const Reads reads = k == PARAM_SINK ? READS_NONE : READS_COL; // (a sink reads every cell of its head's)
    PanelSpec *dy = add(L, tr, v, st->operands[0], "", reads, k == PARAM_ACT_W);
    if (dy && k == PARAM_ACT_W) snprintf(dy->title, sizeof dy->title, "(%s)ᵀ", recipe_symbol(tr, st->operands[0], v->lang));
    if (k == PARAM_GAMMA || k == PARAM_ACT_W) add(L, tr, v, st->operands[1], k == PARAM_GAMMA ? "⊙" : "·", READS_COL, false);
    if (k == PARAM_SINK) add(L, tr, v, st->operands[2], "⊙", READS_NONE, false); // (attn itself)
    const bool eq = k == PARAM_GAMMA || k == PARAM_ACT_W || k == PARAM_SINK;
    PanelSpec *r = add(L, tr, v, v->stage, eq ? "=" : "→", READS_NONE, false);
    if (r && k == PARAM_TOKENS) r->row_axis = AXIS_VOCAB; // (E: a row per token, as W_U's)
}

static void formula_param(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    const Stage *st = &tr->stages[s];
    char key[64];
    const char *args[] = {recipe_symbol(tr, s, lang), st->operands[0] >= 0 ? recipe_symbol(tr, st->operands[0], lang) : "?",
                          st->operands[param_kind(tr, s) == PARAM_SINK ? 2 : 1] >= 0
                              ? recipe_symbol(tr, st->operands[param_kind(tr, s) == PARAM_SINK ? 2 : 1], lang) : "?",
                          tied_share(tr, s) >= 0 ? recipe_symbol(tr, tied_share(tr, s), lang) : ""};
    snprintf(key, sizeof key, "formula.grad.param_%s%s", PARAM_KEY[param_kind(tr, s)], tied_share(tr, s) >= 0 ? "_tied" : "");
    i18n_fmt(out, n, lang, key, 4, args);
}

static void tip_param(TipOut *o, const TipCell *c)
{
    const Trace *tr = c->tr;
    const int s = (int)(c->st - tr->stages), tied = tied_share(tr, s);
    if (!c->t0 || op_stage(tr, s, 2) == NULL) return;
    const ParamKind k = param_kind(tr, s);
    float a[TIP_MAX_TERMS], b[TIP_MAX_TERMS];
    bool product;
    const int n = param_terms(tr, s, c->row, c->col, a, b, &product);
    char rb[16], cb[16], nb[16], key[48];
    snprintf(rb, sizeof rb, "%d", c->row), snprintf(cb, sizeof cb, "%d", c->col), snprintf(nb, sizeof nb, "%d", n);
    const bool one_index = k == PARAM_BIAS || k == PARAM_GAMMA || k == PARAM_ACT_B || k == PARAM_SINK;
    const char *args[] = {recipe_symbol(tr, s, c->lang), one_index ? cb : rb, cb, nb};
    snprintf(key, sizeof key, "tip.grad.param_%s", PARAM_KEY[k]);
    tip_key(o, c->lang, key, 4, args);
    tip_put(o, "\n= ");
    if (n == 0) tip_put(o, "0");
    for (int t = 0; t < n && t < TIP_MAX_TERMS; t++) {
        if (t) tip_put(o, " + ");
        tip_num(o, a[t], true);
        if (product) tip_put(o, "×"), tip_num(o, b[t], true);
    }
    if (n > TIP_MAX_TERMS) {
        const char *targs[] = {nb};
        tip_put(o, " + ");
        tip_key(o, c->lang, "tip.terms", 1, targs);
    }
    if (tied >= 0) { // (tied: E is the unembedding too; its dW = dYᵀ·X is added)
        tip_put(o, " + ");
        tip_num(o, tr->stages[tied].t.data[(size_t)c->row * tip_last_dim(&c->st->t) + c->col], true);
    }
    tip_equals(o, c->val);
}

// The component that moves most, which way, and over how many positions it was summed.
static const char *story_param(const Trace *tr, const View *v, char *buf, size_t n)
{
    const Stage *st = &tr->stages[v->stage];
    const Tensor *t = &st->t;
    if (!tensor_present(t) || st->operands[0] < 0) return NULL;
    size_t best = 0;
    for (size_t i = 1; i < t->size; i++)
        if (fabsf(t->data[i]) > fabsf(t->data[best])) best = i; // (NaN: never larger)
    const int C = tip_last_dim(t), row = (int)(best / (size_t)C), col = (int)(best % (size_t)C);
    float a[TIP_MAX_TERMS], b[TIP_MAX_TERMS];
    bool product;
    const int terms = param_terms(tr, v->stage, t->rank > 1 ? row : 0, col, a, b, &product);
    const ParamKind k = param_kind(tr, v->stage);
    char cell[48], val[32], nb[16], key[48];
    if (t->rank > 1) snprintf(cell, sizeof cell, "[%d, %d]", row, col);
    else snprintf(cell, sizeof cell, "[%d]", col);
    tip_number(t->data[best], val, sizeof val);
    snprintf(nb, sizeof nb, "%d", terms);
    const char *tok = k == PARAM_TOKENS && v->lesson ? lesson_vocab_label(v->lesson, row) : NULL;
    if (!tok) tok = "";
    const char *args[] = {grad_symbol(tr, v->stage), cell, val, nb,
                          i18n_get(v->lang, t->data[best] < 0.0f ? "narr.grad.param_up" : "narr.grad.param_down"), tok};
    snprintf(key, sizeof key, "narr.grad.param_%s", PARAM_KEY[k]);
    i18n_fmt(buf, n, v->lang, key, 6, args);
    return buf;
}

#define GRAD_QUIZ (QUIZ_BIT(QUIZ_VALUE) | QUIZ_BIT(QUIZ_SHAPE))
#define GRAD_RECIPE(...) {.text = grad_text, .symbol = grad_symbol, __VA_ARGS__}

const StageRecipe RECIPE_GRAD_TARGET = GRAD_RECIPE(.panels = panels_self, .formula = formula_key, .anim = ANIM_FADE,
                                                   .scale = SCALE_PROBABILITY, .quiz = QUIZ_BIT(QUIZ_SHAPE));
const StageRecipe RECIPE_GRAD_LOSS = GRAD_RECIPE(.quiz = GRAD_QUIZ, .panels = panels_loss, .formula = formula_key, .note = note_loss,
                                                 .tip = tip_loss, .anim = ANIM_ROWS, .story = story_loss);
const StageRecipe RECIPE_GRAD_LINEAR = GRAD_RECIPE(.quiz = GRAD_QUIZ, .panels = panels_linear, .formula = formula_key, .tip = tip_linear,
                                                   .anim = ANIM_ROWS);
const StageRecipe RECIPE_GRAD_WEIGHT = GRAD_RECIPE(.quiz = GRAD_QUIZ, .panels = panels_weight, .formula = formula_key, .tip = tip_weight,
                                                   .anim = ANIM_CELLS);
const StageRecipe RECIPE_GRAD_ATTN = GRAD_RECIPE(.quiz = GRAD_QUIZ, .panels = panels_attn, .formula = formula_key, .tip = tip_attn,
                                                 .anim = ANIM_CELLS, .key_cols = true);
const StageRecipe RECIPE_GRAD_JACOBIAN = GRAD_RECIPE(.quiz = GRAD_QUIZ, .panels = panels_jacobian, .formula = formula_key,
                                                     .tip = tip_jacobian, .anim = ANIM_FADE, .key_cols = true,
                                                     .story = story_jacobian);
const StageRecipe RECIPE_GRAD_SOFTMAX = GRAD_RECIPE(.quiz = GRAD_QUIZ | QUIZ_BIT(QUIZ_RISES), .panels = panels_softmax, .formula = formula_key, .tip = tip_softmax,
                                                    .anim = ANIM_ROWS, .key_cols = true, .story = story_softmax);
const StageRecipe RECIPE_GRAD_QK = GRAD_RECIPE(.quiz = GRAD_QUIZ, .panels = panels_qk, .formula = formula_key, .tip = tip_qk,
                                               .anim = ANIM_CELLS);
const StageRecipe RECIPE_GRAD_PASS = GRAD_RECIPE(.quiz = GRAD_QUIZ, .panels = panels_pass, .formula = formula_key, .anim = ANIM_FADE);
// (no quiz questions of their own: the lesson's 40 would end before the softmax's "which key rises")
const StageRecipe RECIPE_GRAD_PARAM = GRAD_RECIPE(.quiz = 0, .panels = panels_param, .formula = formula_param, .tip = tip_param,
                                                  .anim = ANIM_CELLS, .story = story_param);
