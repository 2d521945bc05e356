// recipe_delta.c — a "linear_attention" layer (delta.c): q and k L2-normalised, the gate α, the
// state S after each token (N steps through the tokens: recipe_loop.c), the outputs o_t = q̂_t·S_t / √d_k,
// and the matrix form that gives the same outputs: A = (q̂·k̂ᵀ / √d_k) ⊙ Γ and the pseudo-values U.
// (β = σ(x·W_βᵀ) is a gate's recipe, recipe_linear.c; A·U the weighted sum's, recipe_attend.c.)
// (recipe.h says what a recipe holds; each kind's whole recipe is here.)
#include "recipe.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "i18n.h"

#define Q(k) QUIZ_BIT(QUIZ_##k)

// The (B, L, H) gate named base ("lin_alpha", "lin_beta") of stage s's layer at token t, head h; 1 without one.
static float gate_at(const Trace *tr, int s, const char *base, int b, int t, int h)
{
    const int g = trace_find_near(tr, s, base);
    if (g < 0) return 1.0f;
    const Tensor *x = &tr->stages[g].t;
    return x->data[((size_t)b * x->shape[1] + t) * x->shape[2] + h];
}

static const Tensor *near_tensor(const Trace *tr, int s, const char *base)
{
    const int i = trace_find_near(tr, s, base);
    return i >= 0 ? &tr->stages[i].t : NULL;
}

static void put_num(TipOut *o, const char *pre, float x)
{
    tip_put(o, pre);
    tip_num(o, x, true);
}

// Γ_tj = α_{j+1}·…·α_t of head h (1 without the gate), as delta.c multiplies it.
static float decay(const Trace *tr, int s, int b, int h, int t, int j)
{
    double g = 1.0;
    for (int m = j + 1; m <= t; m++) g *= (double)gate_at(tr, s, "lin_alpha", b, m, h);
    return (float)g;
}

// ---- q̂ = q / √(Σq² + 1e-6), k̂ the same ---------------------------------------------------------

static void panels_l2(Layout *L, const Trace *tr, const View *v)
{
    recipe_add_stage(L, tr, v, tr->stages[v->stage].operands[0], v->head, "", READS_ROW);
    recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
}

static void formula_l2(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *x = recipe_op_sym(tr, s, 0);
    snprintf(out, n, "%s = %s / √(Σ %s² + 10⁻⁶)", recipe_name_of(tr, s).sym, x, x);
}

static void tip_l2(TipOut *o, const TipCell *c)
{
    if (!c->t0) return;
    const int d = tip_last_dim(c->t0);
    const float *x = tip_row(c->t0, c->b, c->h, c->row);
    float ss = 0.0f;
    for (int i = 0; i < d; i++) ss += x[i] * x[i];
    const float nrm = sqrtf(ss + 1e-6f);
    char a[32], b[32];
    tip_number(ss, a, sizeof a), tip_number(nrm, b, sizeof b);
    const char *args[] = {a, b};
    tip_key(o, c->lang, "tip.lin_l2", 2, args);
    put_num(o, "\n= ", x[c->col]);
    put_num(o, " / ", nrm);
    tip_equals(o, c->val);
}

const StageRecipe RECIPE_LIN_L2 = {
    .panels = panels_l2, .formula = formula_l2, .tip = tip_l2, .anim = ANIM_ROWS, .quiz = Q(VALUE),
    .compared = recipe_compared_op0,
};

// ---- α = exp(−exp(A_log)·softplus(x·W_aᵀ + dt_bias)), Mamba-2's decay as Qwen3-Next computes it --

static void panels_alpha(Layout *L, const Trace *tr, const View *v)
{
    recipe_add_stage(L, tr, v, tr->stages[v->stage].operands[0], v->head, "", READS_ROW);
    recipe_add_param(L, tr, v, v->stage, false, "·", READS_COL);
    recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
}

static void formula_alpha(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s = exp(−exp(A_log)·softplus(%s·W_aᵀ + dt_bias))", recipe_name_of(tr, s).sym,
             recipe_op_sym(tr, s, 0));
}

// The layer's AttnWeights fields are not in the trace; A_log and dt_bias are read back from α itself:
// the tooltip names them through the stage's weight (W_a) and recomputes z = x·W_a[h].
static void tip_alpha(TipOut *o, const TipCell *c)
{
    const Tensor *W = c->st->weight;
    if (!c->t0 || !W) return;
    const int C = W->shape[1];
    const float *x = tip_row(c->t0, c->b, 0, c->row), *w = W->data + (size_t)c->col * C;
    float z = 0.0f;
    for (int k = 0; k < C; k++) z += x[k] * w[k];
    char r[16], h[16];
    snprintf(r, sizeof r, "%d", c->row), snprintf(h, sizeof h, "%d", c->col);
    const char *args[] = {r, h};
    tip_key(o, c->lang, "tip.lin_alpha", 2, args);
    tip_put(o, "\n= ");
    tip_terms(o, c->lang, x, 1, w, 1, C);
    tip_equals(o, z);
    // −ln α = exp(A_log)·softplus(z + dt_bias): the decay this token applies, then α = exp(−that)
    const float rate = -logf(c->val);
    char a[32];
    tip_number(rate, a, sizeof a);
    const char *args2[] = {a};
    tip_put(o, "\n");
    tip_key(o, c->lang, "tip.lin_alpha_rate", 1, args2);
    put_num(o, "\n= exp(−", rate);
    tip_put(o, ")");
    tip_equals(o, c->val);
}

const StageRecipe RECIPE_LIN_GATE = {
    .panels = panels_alpha, .formula = formula_alpha, .tip = tip_alpha, .anim = ANIM_ROWS,
    .quiz = Q(SHAPE) | Q(VALUE), .scale = SCALE_PROBABILITY,
};

// ---- the state S_t, row t: the d_k × d_v matrix after token t, S[i, j] in column i·d_v + j -------

// Row t of panel p's slice folded into a rows × cols matrix, titled "SYM_t (hH)"; a row or a
// column of a matrix named by one capital (V) is its vector, named as the formula names it (v_t).
static void fold_row(PanelSpec *p, const Trace *tr, int t, int rows, int cols)
{
    if (!p) return;
    assert(rows * cols == p->cols && t >= 0 && t < p->rows);
    p->data += (size_t)t * (size_t)p->rs;
    p->rows = rows, p->cols = cols, p->rs = cols, p->cs = 1;
    p->folded = true, p->fold_row = t;
    p->row_axis = p->col_axis = AXIS_INDEX;
    const char *name = recipe_name_of(tr, p->stage).sym;
    char sym[16];
    snprintf(sym, sizeof sym, "%s", name);
    const bool vector = (rows == 1 || cols == 1) && tr->stages[p->stage].kind != STAGE_KIND_LIN_STATE;
    if (vector && sym[0] >= 'A' && sym[0] <= 'Z' && sym[1] == '\0') sym[0] = (char)(sym[0] - 'A' + 'a');
    if (p->head >= 0) snprintf(p->title, sizeof p->title, "%s_%d (h%d)", sym, t, p->head % 1000);
    else snprintf(p->title, sizeof p->title, "%s_%d", sym, t);
}

// Token t of the state's loop (N): S_{t−1} and S_t as d_k × d_v matrices, k̂_t a column, v_t a
// row, so S_t[i, j] = α_t·S_{t−1}[i, j] + k̂_t[i]·δ_t[j] reads cell by cell (tip_state).
static void panels_state_step(Layout *L, const Trace *tr, const View *v, int t)
{
    const Stage *st = &tr->stages[v->stage];
    const int dk = tr->d_k, dv = tr->d_v;
    if (t > 0) fold_row(recipe_add_stage(L, tr, v, v->stage, v->head, "", READS_CELL), tr, t - 1, dk, dv);
    fold_row(recipe_add_stage(L, tr, v, st->operands[0], v->head, t > 0 ? "," : "", READS_ROW), tr, t, dk, 1);
    fold_row(recipe_add_stage(L, tr, v, st->operands[1], v->head, ",", READS_COL), tr, t, 1, dv);
    fold_row(recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE), tr, t, dk, dv);
}

static void panels_state(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    const int t = v->loop;
    if (st->kind == STAGE_KIND_LIN_STATE && t >= 0 && t < recipe_loop_steps(tr, v->stage)) { // N: token t
        panels_state_step(L, tr, v, t);
        return;
    }
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    recipe_add_stage(L, tr, v, st->operands[1], v->head, ",", READS_ROW);
    recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
}

// (the indices as subscript characters, "Sₜ₋₁": no TeX braces on screen)
static void formula_state(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *S = recipe_name_of(tr, s).sym;
    if (tr->linear_rule == LINEAR_PLAIN)
        snprintf(out, n, "%sₜ = %sₜ₋₁ + k̂ₜ·vₜᵀ", S, S);
    else if (tr->linear_rule == LINEAR_DELTA)
        snprintf(out, n, "%sₜ = (I − βₜ k̂ₜ k̂ₜᵀ)·%sₜ₋₁ + βₜ k̂ₜ·vₜᵀ", S, S);
    else
        snprintf(out, n, "%sₜ = αₜ(I − βₜ k̂ₜ k̂ₜᵀ)·%sₜ₋₁ + βₜ k̂ₜ·vₜᵀ", S, S);
}

static void note_state(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)s;
    char a[16], b[16];
    snprintf(a, sizeof a, "%d", tr->d_k), snprintf(b, sizeof b, "%d", tr->d_v);
    const char *args[] = {a, b};
    i18n_fmt(out, n, lang, "fx.lin_state", 2, args);
}

static void tip_state(TipOut *o, const TipCell *c)
{
    const Tensor *k = c->t0, *v = c->t1, *S = &c->st->t;
    if (!k || !v) return;
    const int dk = tip_last_dim(k), dv = tip_last_dim(v), t = c->row, i = c->col / dv, j = c->col % dv;
    const int s = (int)(c->st - c->tr->stages);
    const float *kt = tip_row(k, c->b, c->h, t), *prev = t > 0 ? tip_row(S, c->b, c->h, t - 1) : NULL;
    const float a = gate_at(c->tr, s, "lin_alpha", c->b, t, c->h), vt = tip_row(v, c->b, c->h, t)[j];
    const float p = prev ? prev[i * dv + j] * a : 0.0f;
    char ti[16], ii[16], ji[16], pi[16];
    snprintf(ti, sizeof ti, "%d", t), snprintf(ii, sizeof ii, "%d", i), snprintf(ji, sizeof ji, "%d", j);
    snprintf(pi, sizeof pi, "%d", t - 1); // (S_−1 = 0: before the first token)
    const char *args[] = {ti, ii, ji, pi};
    if (c->tr->linear_rule == LINEAR_PLAIN) {
        tip_key(o, c->lang, "tip.lin_state_plain", 4, args);
        put_num(o, "\n= ", p), put_num(o, " + ", kt[i]), put_num(o, " × ", vt);
        tip_equals(o, c->val);
        return;
    }
    // δ[j] = β(v[j] − Σ_m k[m]·αS_{t−1}[m, j]): what k̂_t already recalls, taken from v and scaled by β
    float recall = 0.0f;
    for (int m = 0; m < dk && prev; m++) recall += prev[m * dv + j] * a * kt[m];
    const float beta = gate_at(c->tr, s, "lin_beta", c->b, t, c->h), d = (vt - recall) * beta;
    tip_key(o, c->lang, c->tr->linear_rule == LINEAR_DELTA ? "tip.lin_state_delta" : "tip.lin_state", 4, args);
    tip_put(o, "\n");
    tip_key(o, c->lang, "tip.lin_delta", 1, args + 2);
    put_num(o, "\n= ", beta), put_num(o, " × (", vt), put_num(o, " − ", recall), tip_put(o, ")");
    tip_equals(o, d);
    // S_t[i, j] = α_t·S_{t−1}[i, j] + k̂_t[i]·δ[j]: the previous cell as shown, times the gate
    if (prev && c->tr->linear_rule == LINEAR_GATED_DELTA) put_num(o, "\n= ", a), put_num(o, " × ", prev[i * dv + j]);
    else put_num(o, "\n= ", p);
    put_num(o, " + ", kt[i]), put_num(o, " × ", d);
    tip_equals(o, c->val);
}

// The state's size against a K/V cache's after the same tokens, and the gate's range.
static const char *story_state(const Trace *tr, const View *v, char *buf, size_t n)
{
    char L[16], st[16], all[16], H[16], kv[16];
    snprintf(L, sizeof L, "%d", tr->len_q), snprintf(st, sizeof st, "%d", tr->d_k * tr->d_v);
    snprintf(all, sizeof all, "%d", tr->n_heads * tr->d_k * tr->d_v), snprintf(H, sizeof H, "%d", tr->n_heads);
    snprintf(kv, sizeof kv, "%d", tr->len_q * tr->n_heads * (tr->d_k + tr->d_v));
    const char *args[] = {L, st, all, H, kv};
    i18n_fmt(buf, n, v->lang, "story.lin_state", 5, args);
    return buf;
}

const StageRecipe RECIPE_LIN_STATE = {
    .panels = panels_state, .formula = formula_state, .note = note_state, .tip = tip_state, .anim = ANIM_ROWS,
    .quiz = Q(SHAPE) | Q(VALUE), .story = story_state,
};

// ---- o_t = q̂_t·S_t / √d_k ---------------------------------------------------------------------

static void formula_out(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s_t = %s_t·%s_t / √d_k", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0),
             recipe_op_sym(tr, s, 1));
}

static void tip_lin_out(TipOut *o, const TipCell *c)
{
    if (!c->t0 || !c->t1) return;
    const int dk = tip_last_dim(c->t0), dv = tip_last_dim(c->t1) / dk;
    const float *q = tip_row(c->t0, c->b, c->h, c->row), *S = tip_row(c->t1, c->b, c->h, c->row) + c->col;
    char t[16], j[16];
    snprintf(t, sizeof t, "%d", c->row), snprintf(j, sizeof j, "%d", c->col);
    const char *args[] = {t, j};
    tip_key(o, c->lang, "tip.lin_out", 2, args);
    tip_put(o, "\n= (");
    tip_terms(o, c->lang, q, 1, S, dv, dk);
    put_num(o, ") / ", sqrtf((float)dk));
    tip_equals(o, c->val);
}

// The outputs, and the matrix form's largest difference from them.
static const char *story_out(const Trace *tr, const View *v, char *buf, size_t n)
{
    const Tensor *o = &tr->stages[v->stage].t, *par = near_tensor(tr, v->stage, "lin_parallel");
    float worst = 0.0f;
    for (size_t i = 0; par && i < o->size && i < par->size; i++) worst = fmaxf(worst, fabsf(o->data[i] - par->data[i]));
    char a[32];
    snprintf(a, sizeof a, "%.1e", (double)worst);
    const char *args[] = {a};
    i18n_fmt(buf, n, v->lang, "story.lin_out", 1, args);
    return buf;
}

const StageRecipe RECIPE_LIN_OUT = {
    .panels = panels_state, .formula = formula_out, .tip = tip_lin_out, .anim = ANIM_ROWS, .quiz = Q(SHAPE) | Q(VALUE),
    .story = story_out,
};

// ---- the matrix form: A = (q̂·k̂ᵀ / √d_k) ⊙ Γ, 0 above the diagonal ------------------------------

static void panels_attn(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    PanelSpec *k = recipe_add_stage(L, tr, v, st->operands[1], v->head, "·", READS_COL);
    if (k) k->transposed = true;
    recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
}

static void formula_attn(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    if (tr->linear_rule == LINEAR_GATED_DELTA)
        snprintf(out, n, "%s = (%s·%sᵀ / √d_k) ⊙ Γ,  Γₜⱼ = αⱼ₊₁⋯αₜ (j ≤ t), 0 after", recipe_name_of(tr, s).sym,
                 recipe_op_sym(tr, s, 0), recipe_op_sym(tr, s, 1));
    else
        snprintf(out, n, "%s = (%s·%sᵀ / √d_k) ⊙ causal", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0),
                 recipe_op_sym(tr, s, 1));
}

static void tip_attn(TipOut *o, const TipCell *c)
{
    if (!c->t0 || !c->t1) return;
    const int dk = tip_last_dim(c->t0), t = c->row, j = c->col;
    if (j > t) {
        tip_key(o, c->lang, "tip.lin_later", 0, NULL);
        return;
    }
    const int s = (int)(c->st - c->tr->stages);
    const float g = decay(c->tr, s, c->b, c->h, t, j);
    char ti[16], ji[16];
    snprintf(ti, sizeof ti, "%d", t), snprintf(ji, sizeof ji, "%d", j);
    const char *args[] = {ti, ji};
    tip_key(o, c->lang, c->tr->linear_rule == LINEAR_GATED_DELTA ? "tip.lin_attn" : "tip.lin_attn_nogate", 2, args);
    tip_put(o, "\n= (");
    tip_terms(o, c->lang, tip_row(c->t0, c->b, c->h, t), 1, tip_row(c->t1, c->b, c->h, j), 1, dk);
    put_num(o, ") / ", sqrtf((float)dk));
    if (c->tr->linear_rule == LINEAR_GATED_DELTA) put_num(o, " × ", g);
    tip_equals(o, c->val);
}

const StageRecipe RECIPE_LIN_ATTN = {
    .panels = panels_attn, .formula = formula_attn, .tip = tip_attn, .anim = ANIM_ROWS, .quiz = Q(SHAPE) | Q(VALUE),
    .key_cols = true,
};

// ---- the pseudo-values u_t = β_t(v_t − Σ_{j<t} Γ_tj (k̂_t·k̂_j) u_j) -------------------------------

static void formula_u(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *u = recipe_name_of(tr, s).sym;
    if (tr->linear_rule == LINEAR_PLAIN) snprintf(out, n, "%sₜ = vₜ", u);
    else snprintf(out, n, "%sₜ = βₜ(vₜ − Σⱼ₌₀ᵗ⁻¹ %s(k̂ₜ·k̂ⱼ) %sⱼ)", u, tr->linear_rule == LINEAR_GATED_DELTA ? "Γₜⱼ" : "", u);
}

static void tip_u(TipOut *o, const TipCell *c)
{
    if (!c->t0 || !c->t1) return;
    const int dk = tip_last_dim(c->t0), dv = tip_last_dim(c->t1), t = c->row, col = c->col;
    const float vt = tip_row(c->t1, c->b, c->h, t)[col];
    char ti[16], ci[16];
    snprintf(ti, sizeof ti, "%d", t), snprintf(ci, sizeof ci, "%d", col);
    const char *args[] = {ti, ci};
    if (c->tr->linear_rule == LINEAR_PLAIN) {
        tip_key(o, c->lang, "tip.lin_u_plain", 2, args);
        return;
    }
    const int s = (int)(c->st - c->tr->stages);
    const float *kt = tip_row(c->t0, c->b, c->h, t);
    float r = 0.0f;
    for (int j = 0; j < t; j++) {
        const float *kj = tip_row(c->t0, c->b, c->h, j);
        float kk = 0.0f;
        for (int i = 0; i < dk; i++) kk += kt[i] * kj[i];
        r += decay(c->tr, s, c->b, c->h, t, j) * kk * tip_row(&c->st->t, c->b, c->h, j)[col];
    }
    (void)dv;
    tip_key(o, c->lang, "tip.lin_u", 2, args);
    put_num(o, "\n= ", gate_at(c->tr, s, "lin_beta", c->b, t, c->h));
    put_num(o, " × (", vt), put_num(o, " − ", r), tip_put(o, ")");
    tip_equals(o, c->val);
}

const StageRecipe RECIPE_LIN_U = {
    .panels = panels_state, .formula = formula_u, .tip = tip_u, .anim = ANIM_ROWS, .quiz = Q(SHAPE) | Q(VALUE),
};
