// recipe_linear.c — x·Wᵀ + b and what follows it: the Q/K/V projections, W_O, the feed-forward
// block's two layers, the residual sum and LayerNorm; QK-norm (an RMSNorm of each head's rows)
// and gated attention's gate σ(x·W_Gᵀ + b_G) and its product with the heads.
// (recipe.h says what a recipe holds; each kind's whole recipe is here.)
#include "recipe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"

// The FFN's non-linearity at stage s (an FFN_HIDDEN stage): FFN_RELU, FFN_GELU, FFN_GELU_TANH,
// FFN_SWIGLU for SwiGLU's gate g = silu(…), or ACT_GATED for SwiGLU's h = (…) ⊙ g.
enum { ACT_GATED = -1, ACT_SIGMOID = -2 };
static int act_of(const Trace *tr, const Stage *st)
{
    if (tr->ffn_act != FFN_SWIGLU) return tr->ffn_act;
    return st->operands[1] >= 0 ? ACT_GATED : FFN_SWIGLU;
}
// the function each applies as formulas name it (attention.h's FFN_ACT_TABLE: SwiGLU's gate is silu)
#define ACT_FUNCTION(id, name, gloss, function) [id] = function,
static const char *const ACT_NAMES[] = {FFN_ACT_TABLE(ACT_FUNCTION)};
#undef ACT_FUNCTION

bool recipe_activate(const Trace *tr, int s, double *x)
{
    if (!tr || s < 0 || s >= tr->n) return false;
    const Stage *st = &tr->stages[s];
    if (st->kind != STAGE_KIND_FFN_HIDDEN || act_of(tr, st) == ACT_GATED) return false;
    *x = tensor_activation(act_of(tr, st), (float)*x);
    return true;
}

// x·Wᵀ + b = y (projections, W_O, the FFN's first layer; SwiGLU's (x·W₁ᵀ + b₁) ⊙ g = h)
static void panels_linear(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    recipe_add_param(L, tr, v, v->stage, false, "·", READS_COL);
    // a bias is coloured on its layer's result scale (b₁ too, before relu: as b₂ on f's)
    if (recipe_has_bias(st)) recipe_mark_addend(recipe_add_param(L, tr, v, v->stage, true, "+", READS_COL), true);
    char op[16] = "=";
    if (st->kind == STAGE_KIND_GATE) snprintf(op, sizeof op, "σ→");
    if (st->kind == STAGE_KIND_FFN_HIDDEN) {
        int act = act_of(tr, st);
        if (act == ACT_GATED)
            recipe_add_stage(L, tr, v, st->operands[1], v->head, "⊙", READS_CELL);
        else
            snprintf(op, sizeof op, "%s→", ACT_NAMES[act]);
    }
    recipe_add_stage(L, tr, v, v->stage, v->head, op, READS_NONE);
}

// h·W₂ᵀ + b₂ + z = f
static void panels_ffn_sum(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    recipe_add_param(L, tr, v, v->stage, false, "·", READS_COL);
    if (recipe_has_bias(st)) recipe_mark_addend(recipe_add_param(L, tr, v, v->stage, true, "+", READS_COL), true);
    recipe_mark_addend(recipe_add_stage(L, tr, v, st->operands[1], v->head, "+", READS_CELL), true);
    recipe_add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

// output + x = s
static void panels_add(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_mark_addend(recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_CELL), true);
    recipe_mark_addend(recipe_add_stage(L, tr, v, st->operands[1], v->head, "+", READS_CELL), true);
    recipe_add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

// s → LayerNorm(s)·γ + β = z, or RMS(s)·γ = z
static void panels_norm(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    char op[24]; // "LN(s)·": the normalised sum, times γ
    snprintf(op, sizeof op, "%s(%s)·", tr->norm_rms ? "RMS" : "LN", recipe_symbol(tr, st->operands[0], v->lang));
    recipe_add_param(L, tr, v, v->stage, false, op, READS_COL);
    if (recipe_has_bias(st)) recipe_mark_addend(recipe_add_param(L, tr, v, v->stage, true, "+", READS_COL), true);
    recipe_add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

static void formula_linear(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Stage *st = &tr->stages[s];
    const StageName nm = recipe_name_of(tr, s);
    char b[32] = "";
    if (recipe_has_bias(st)) snprintf(b, sizeof b, " + %s", nm.bsym);
    if (st->kind == STAGE_KIND_GATE)
        snprintf(out, n, "%s = σ(%s·%s%s)", nm.sym, recipe_op_sym(tr, s, 0), nm.wsym, b);
    else if (st->kind == STAGE_KIND_FFN_HIDDEN && act_of(tr, st) == ACT_GATED)
        snprintf(out, n, "%s = (%s·%s%s) ⊙ %s", nm.sym, recipe_op_sym(tr, s, 0), nm.wsym, b, recipe_op_sym(tr, s, 1));
    else if (st->kind == STAGE_KIND_FFN_HIDDEN)
        snprintf(out, n, "%s = %s(%s·%s%s)", nm.sym, ACT_NAMES[act_of(tr, st)], recipe_op_sym(tr, s, 0), nm.wsym, b);
    else if (st->kind == STAGE_KIND_FFN_SUM)
        snprintf(out, n, "%s = %s·%s%s + %s", nm.sym, recipe_op_sym(tr, s, 0), nm.wsym, b, recipe_op_sym(tr, s, 1));
    else
        snprintf(out, n, "%s = %s·%s%s", nm.sym, recipe_op_sym(tr, s, 0), nm.wsym, b);
}

static void formula_add(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s = %s + %s", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0), recipe_op_sym(tr, s, 1));
}

static void formula_norm(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *x = recipe_op_sym(tr, s, 0);
    if (tr->norm_rms)
        snprintf(out, n, "%s = RMSNorm(%s) = %s / √(mean(%s²) + ε) · γ", recipe_name_of(tr, s).sym, x, x, x);
    else
        snprintf(out, n, "%s = LayerNorm(%s) = (%s − mean) / √(var + ε) · γ + β", recipe_name_of(tr, s).sym, x, x);
}

// x·Wᵀ + b for output feature c of row r; returns the pre-activation sum.
// Σₖ x[r,k]·W[c,k] + b[c] term by term, and a residual term z[r,c] when z is given
// (its symbol zsym); returns the sum.
static float tip_linear(TipOut *o, Lang lang, const Trace *tr, const Tensor *x, const Stage *st, int b, int r, int c,
                        const char *zsym, const float *z)
{
    const Tensor *W = st->weight;
    int in = W->shape[1];
    const float *xr = tip_row(x, b, 0, r), *wr = W->data + (size_t)c * (size_t)in;
    char rb[16], cb[16];
    snprintf(rb, sizeof rb, "%d", r), snprintf(cb, sizeof cb, "%d", c);
    int s = (int)(st - tr->stages);
    const char *args[] = {rb, cb, recipe_symbol(tr, st->operands[0], lang), recipe_weight_plain(tr, s),
                          recipe_param_symbol(tr, s, true)};
    bool bias = st->bias && tensor_present(st->bias);
    tip_key(o, lang, bias ? "tip.linear" : "tip.linear_nobias", 5, args);
    if (z) {
        char e[64];
        snprintf(e, sizeof e, " + %s[%d,%d]", zsym, r, c);
        tip_put(o, e);
    }
    tip_put(o, "\n= ");
    tip_terms(o, lang, xr, 1, wr, 1, in);
    float sum = 0.0f;
    for (int k = 0; k < in; k++) sum += xr[k] * wr[k];
    if (bias) {
        tip_put(o, " + ");
        tip_num(o, st->bias->data[c], true);
        sum += st->bias->data[c];
    }
    if (z) {
        tip_put(o, " + ");
        tip_num(o, *z, true);
        sum += *z;
    }
    tip_equals(o, sum);
    return sum;
}

static void tip_linear_cell(TipOut *o, const TipCell *cell)
{
    if (cell->t0 && cell->st->weight)
        tip_linear(o, cell->lang, cell->tr, cell->t0, cell->st, cell->b, cell->row, cell->col, NULL, NULL);
}

static void tip_linear_relu(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    const Stage *st = cell->st;
    Lang lang = cell->lang;
    float val = cell->val;
    int b = cell->b, row = cell->row, col = cell->col;
    const Tensor *t0 = cell->t0;
    char a0[32], a1[32];
    if (t0 && st->weight) {
        float s = tip_linear(o, lang, tr, t0, st, b, row, col, NULL, NULL);
        tip_number(s, a0, sizeof a0), tip_number(val, a1, sizeof a1);
        tip_put(o, "\n");
        int act = st->kind == STAGE_KIND_GATE ? ACT_SIGMOID : act_of(tr, st);
        if (act == ACT_SIGMOID) { // gated attention's gate: σ(s) = 1 / (1 + exp(−s)), s with the sum's decimals
            char x[32], nx[32];
            tip_operand(o, s, x, sizeof x), tip_operand(o, -s, nx, sizeof nx);
            const char *args[] = {x, nx};
            tip_key(o, lang, "tip.sigmoid", 2, args);
            tip_equals(o, val);
        } else if (act == ACT_GATED) { // (the sum) ⊙ g[row, col], as a product of the two as written
            const Tensor *g = &tr->stages[st->operands[1]].t;
            char r[16], c[16], x[32], y[32];
            snprintf(r, sizeof r, "%d", row), snprintf(c, sizeof c, "%d", col);
            tip_operand(o, s, x, sizeof x), tip_operand(o, tip_row(g, b, 0, row)[col], y, sizeof y);
            const char *args[] = {r, c, x, y};
            tip_key(o, lang, "tip.gated", 4, args);
            tip_equals(o, val);
        } else if (act == FFN_RELU) {
            const char *args[] = {a0, a1};
            tip_key(o, lang, "tip.relu", 2, args);
        } else {
            const char *args[] = {ACT_NAMES[act], a0, a1};
            tip_key(o, lang, "tip.act", 3, args);
        }
    }
}

static void tip_linear_residual(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    const Stage *st = cell->st;
    Lang lang = cell->lang;
    float val = cell->val;
    const int *op = cell->st->operands;
    int b = cell->b, row = cell->row, col = cell->col;
    const Tensor *t0 = cell->t0, *t1 = cell->t1;
    if (t0 && t1 && st->weight) {
        (void)val; // h·W₂ᵀ + b₂ + z, term by term
        const float *zr = tip_row(t1, b, 0, row);
        tip_linear(o, lang, tr, t0, st, b, row, col, recipe_symbol(tr, op[1], lang), &zr[col]);
    }
}

static void tip_add(TipOut *o, const TipCell *cell)
{
    int b = cell->b, row = cell->row, col = cell->col;
    const Tensor *t0 = cell->t0, *t1 = cell->t1;
    if (t0 && t1) {
        tip_put(o, "= ");
        tip_num(o, tip_row(t0, b, 0, row)[col], false);
        tip_put(o, " + ");
        tip_num(o, tip_row(t1, b, 0, row)[col], true);
        tip_equals(o, cell->val);
    }
}

static void tip_norm_cell(TipOut *o, const TipCell *cell)
{
    const Tensor *x = cell->t0;
    if (x && cell->tr->norm_rms)
        tip_rms_norm(o, cell->lang, tip_row(x, cell->b, 0, cell->row), tip_last_dim(x), cell->col, cell->st,
                     cell->tr->norm_eps, cell->val);
    else if (x)
        tip_norm(o, cell->lang, tip_row(x, cell->b, 0, cell->row), tip_last_dim(x), cell->col, cell->st,
                 cell->tr->norm_eps, cell->val);
}

// LayerNorm: its ε.
static void note_norm(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)s;
    char a[32];
    snprintf(a, sizeof a, "%g", (double)tr->norm_eps);
    const char *args[] = {a};
    i18n_fmt(out, n, lang, "fx.eps", 1, args);
}

// A projection without a bias says so.
static const char *narration_linear(const Trace *tr, int s)
{
    const StageId id = tr->stages[s].id;
    if (id == STAGE_KV_LATENT || id == STAGE_K_PE || id == STAGE_Q_LATENT || id == STAGE_INDEX_Q || id == STAGE_INDEX_K ||
        id == STAGE_INDEX_W)
        return ""; // (DeepSeek's: never a bias)
    if (tr->mla_rank > 0 && (id == STAGE_Q_PROJ || id == STAGE_K_PROJ || id == STAGE_V_PROJ)) return "_mla";
    if (tr->n_classes > 0 && id == STAGE_LOGITS) return "_vision"; // a vision transformer's classifier head
    return recipe_has_bias(&tr->stages[s]) ? "" : "_nobias";
}

// The FFN's hidden layer by its non-linearity (SwiGLU's gate is its own stage, ffn_gate).
static const char *narration_ffn_hidden(const Trace *tr, int s)
{
    static const char *const suffix[] = {"", "_gelu", "_gelu_tanh", ""};
    int act = act_of(tr, &tr->stages[s]);
    return act == ACT_GATED ? "_swiglu" : suffix[act];
}

// RMSNorm's narration, name and title; pre-norm's residual sums.
static const char *narration_norm(const Trace *tr, int s)
{
    if (tr->n_classes > 0 && tr->stages[s].id == STAGE_FINAL_NORM && !tr->norm_rms) return "_vision"; // ViT's
    if (tr->encoder_blocks > 0 && tr->stages[s].id == STAGE_FINAL_NORM) return "_encdec"; // nn.Transformer's decoder.norm
    return tr->norm_rms ? "_rms" : "";
}

static const char *narration_prenorm(const Trace *tr, int s)
{
    (void)s;
    return tr->norm_first ? "_prenorm" : "";
}

static const char *narration_ffn_sum(const Trace *tr, int s)
{
    return tr->norm_first ? "_prenorm" : recipe_has_bias(&tr->stages[s]) ? "" : "_nobias";
}

// LayerNorm's strip: the row, its mean and variance, the normalised row, · γ + β.
static int deriv_width_norm(const Trace *tr, int s)
{
    const Stage *st = &tr->stages[s];
    return st->t.shape[st->t.rank - 1];
}

static bool derive_norm(const Layout *L, const Trace *tr, const View *v, int row, int col, Derivation *d)
{
    (void)col;
    const Stage *st = &tr->stages[v->stage];
    const PanelSpec *res = &L->spec[L->result_panel];
    int n = deriv_width_norm(tr, v->stage);
    char b[64];
    // the mean and variance exactly as tensor_layer_norm (PyTorch) computes them
    const PanelSpec *x = &L->input; // (the whole stage's, also when a split shows the result alone)
    float rowv[1024], mean = 0.0f, var = 0.0f;
    if (n > 1024) return false;
    for (int j = 0; j < n; j++) rowv[j] = panel_value(x, row, j);
    if (tr->norm_rms || st->kind == STAGE_KIND_HEAD_NORM) { // x, mean(x²), x / √(mean(x²) + ε), · γ
        float ms = tensor_row_mean_square(rowv, n), r = 1.0f / sqrtf(ms + tr->norm_eps);
        const char *xs = recipe_symbol(tr, st->operands[0], v->lang);
        recipe_deriv_title(d, v, res, row, -1);
        DerivLine *l = recipe_deriv_line(d, xs, n);
        for (int j = 0; j < n; j++) l->v[j] = rowv[j];
        snprintf(b, sizeof b, "mean(%s²)", xs);
        l = recipe_deriv_line(d, b, 1);
        l->v[0] = ms;
        recipe_deriv_rel(l, DERIV_MEANSQ, 0, 0, 0, 0.0);
        snprintf(b, sizeof b, "%s / √(mean(%s²) + ε)", xs, xs);
        l = recipe_deriv_line(d, b, n);
        recipe_deriv_rel(l, DERIV_RMS, 0, 1, 0, (double)tr->norm_eps);
        for (int j = 0; j < n; j++) l->v[j] = rowv[j] * r;
        snprintf(b, sizeof b, "· γ = %s", recipe_symbol(tr, v->stage, v->lang));
        l = recipe_deriv_line(d, b, n);
        for (int j = 0; j < n; j++) l->v[j] = panel_value(res, row, j);
        l->result = true;
        return true;
    }
    tensor_row_moments(rowv, n, &mean, &var);
    float inv = 1.0f / sqrtf(var + tr->norm_eps);
    const char *xs = recipe_symbol(tr, st->operands[0], v->lang);
    recipe_deriv_title(d, v, res, row, -1);
    DerivLine *l = recipe_deriv_line(d, xs, n);
    for (int j = 0; j < n; j++) l->v[j] = panel_value(x, row, j);
    l = recipe_deriv_line(d, "mean", 1);
    l->v[0] = mean;
    recipe_deriv_rel(l, DERIV_MEAN, 0, 0, 0, 0.0);
    l = recipe_deriv_line(d, "var", 1);
    l->v[0] = var;
    recipe_deriv_rel(l, DERIV_VAR, 0, 1, 0, 0.0);
    snprintf(b, sizeof b, "(%s − mean) / √(var + ε)", xs);
    l = recipe_deriv_line(d, b, n);
    recipe_deriv_rel(l, DERIV_NORM, 0, 1, 2, (double)tr->norm_eps);
    for (int j = 0; j < n; j++) l->v[j] = (panel_value(x, row, j) - mean) * inv;
    snprintf(b, sizeof b, "· γ + β = %s", recipe_symbol(tr, v->stage, v->lang));
    l = recipe_deriv_line(d, b, n);
    for (int j = 0; j < n; j++) l->v[j] = panel_value(res, row, j);
    l->result = true;
    return true;
}

#define Q(k) QUIZ_BIT(QUIZ_##k)

const StageRecipe RECIPE_PROJECTION = {
    .panels = panels_linear, .formula = formula_linear, .tip = tip_linear_cell, .narration = narration_linear,
    .anim = ANIM_ROWS, .quiz = Q(SHAPE) | Q(VALUE),
};

const StageRecipe RECIPE_OUT_PROJ = {
    .panels = panels_linear, .formula = formula_linear, .tip = tip_linear_cell, .narration = narration_linear,
    .anim = ANIM_ROWS, .quiz = Q(VALUE),
};

const StageRecipe RECIPE_FFN_HIDDEN = {
    .panels = panels_linear, .formula = formula_linear, .tip = tip_linear_relu, .narration = narration_ffn_hidden,
    .anim = ANIM_ROWS,
    .quiz = Q(SHAPE) | Q(VALUE),
};

const StageRecipe RECIPE_FFN_SUM = {
    .panels = panels_ffn_sum, .formula = formula_linear, .tip = tip_linear_residual, .narration = narration_ffn_sum,
    .anim = ANIM_ROWS,
    .quiz = Q(VALUE),
};

const StageRecipe RECIPE_ADD = {
    .panels = panels_add, .formula = formula_add, .tip = tip_add, .narration = narration_prenorm, .anim = ANIM_ROWS,
    .quiz = Q(VALUE),
};

// ---- QK-norm: each head's row of q (k) RMS-normalised over d_k, times γ_q (γ_k) -----------

static void panels_head_norm(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    char op[24];
    snprintf(op, sizeof op, "RMS(%s)·", recipe_symbol(tr, st->operands[0], v->lang));
    recipe_add_param(L, tr, v, v->stage, false, op, READS_COL);
    recipe_add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

static void formula_head_norm(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *x = recipe_op_sym(tr, s, 0);
    snprintf(out, n, "%s = RMSNorm(%s) = %s / √(mean(%s²) + ε) · %s", recipe_name_of(tr, s).sym, x, x, x,
             recipe_param_symbol(tr, s, false));
}

static void tip_head_norm(TipOut *o, const TipCell *c)
{
    const Tensor *x = c->t0;
    if (x) tip_rms_norm(o, c->lang, tip_row(x, c->b, trace_kv_head(c->tr, x, c->h), c->row), tip_last_dim(x), c->col,
                        c->st, c->tr->norm_eps, c->val);
}

// ---- gated attention: the heads' concat times the gate, cell by cell ----------------------

static void panels_gated(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_CELL);
    recipe_add_stage(L, tr, v, st->operands[1], v->head, "⊙", READS_CELL);
    recipe_add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

static void formula_gated(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s = %s ⊙ %s", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0), recipe_op_sym(tr, s, 1));
}

static void tip_gated(TipOut *o, const TipCell *c)
{
    if (!c->t0 || !c->t1) return;
    tip_put(o, "= ");
    tip_num(o, tip_row(c->t0, c->b, 0, c->row)[c->col], false);
    tip_put(o, " × ");
    tip_num(o, tip_row(c->t1, c->b, 0, c->row)[c->col], true);
    tip_equals(o, c->val);
}

const StageRecipe RECIPE_HEAD_NORM = {
    .panels = panels_head_norm, .formula = formula_head_norm, .note = note_norm, .tip = tip_head_norm,
    .deriv_width = deriv_width_norm, .derive = derive_norm, .anim = ANIM_ROWS, .quiz = Q(VALUE), .norm_affine = true,
};

// the gate's values lie in (0, 1): the probabilities' scale
const StageRecipe RECIPE_GATE = {
    .panels = panels_linear, .formula = formula_linear, .tip = tip_linear_relu, .anim = ANIM_ROWS,
    .quiz = Q(SHAPE) | Q(VALUE), .scale = SCALE_PROBABILITY,
};

const StageRecipe RECIPE_GATED = {
    .panels = panels_gated, .formula = formula_gated, .tip = tip_gated, .anim = ANIM_ROWS, .quiz = Q(VALUE),
    .compared = recipe_compared_op0,
};

const StageRecipe RECIPE_NORM = {
    .panels = panels_norm, .formula = formula_norm, .note = note_norm, .tip = tip_norm_cell, .narration = narration_norm,
    .deriv_width = deriv_width_norm, .derive = derive_norm, .anim = ANIM_ROWS, .quiz = Q(VALUE),
    .norm_affine = true,
};
