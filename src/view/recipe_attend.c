// recipe_attend.c — attention itself: the scores Q·Kᵀ / scale (with ALiBi's position bias),
// Gemma 2's soft-capping, masking, softmax and the weighted sum of V.
// (recipe.h says what a recipe holds; each kind's whole recipe is here.)
#include "recipe.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "i18n.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

// Q·Kᵀ / scale = scores: the divisor is written on the operator when it is not 1
static void panels_scores(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    PanelSpec *k = recipe_add_stage(L, tr, v, st->operands[1], v->head, "·", READS_COL);
    if (k) {
        panel_transpose(k);
        size_t len = strlen(k->title);
        // "K (h0)" → "Kᵀ (h0)"
        const char *dot = strstr(k->title, " (");
        if (dot && len + 4 < sizeof k->title) {
            size_t at = (size_t)(dot - k->title);
            memmove(k->title + at + 3, k->title + at, len - at + 1);
            memcpy(k->title + at, "ᵀ", 3);
        } else if (len + 4 < sizeof k->title) {
            memcpy(k->title + len, "ᵀ", 4);
        }
    }
    char op[24], sc[24];
    bool bias = st->operands[2] >= 0; // ALiBi: + position_bias after the scale
    if (tr->scale == 1.0f)
        snprintf(op, sizeof op, bias ? "+" : "=");
    else
        snprintf(op, sizeof op, bias ? "/%s +" : "/%s =", recipe_scale_text(tr, sc, sizeof sc));
    if (bias) {
        recipe_mark_addend(recipe_add_stage(L, tr, v, st->operands[2], v->head, op, READS_CELL), true);
        snprintf(op, sizeof op, "=");
    }
    recipe_add_stage(L, tr, v, v->stage, v->head, op, READS_NONE);
}

// scores.masked_fill(mask == 0, fill): the score, the mask, the result
static void panels_masked(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_CELL);
    if (st->operands[1] >= 0) {
        recipe_add_stage(L, tr, v, st->operands[1], v->head, "", READS_CELL);
        recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
    } else {
        recipe_add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
    }
}

static void panels_softmax(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    PanelSpec *p = recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
    if (p) p->row_sums = true;
}

static void panels_wsum(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    recipe_add_stage(L, tr, v, st->operands[1], v->head, "·", READS_COL);
    recipe_add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

static void formula_scores(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    assert(s >= 0 && s < tr->n); // (scene_formula's stage, checked there)
    const char *r = recipe_name_of(tr, s).sym, *q = recipe_op_sym(tr, s, 0), *k = recipe_op_sym(tr, s, 1);
    char bias[40] = "";
    if (tr->stages[s].operands[2] >= 0) snprintf(bias, sizeof bias, " + %s", recipe_op_sym(tr, s, 2));
    if (tr->scale == 1.0f)
        snprintf(out, n, "%s = %s·%sᵀ%s", r, q, k, bias);
    else if (recipe_scale_is_sqrt_dk(tr))
        snprintf(out, n, "%s = %s·%sᵀ / √d_k%s", r, q, k, bias);
    else {
        char sc[24];
        snprintf(out, n, "%s = %s·%sᵀ / %s%s", r, q, k, recipe_scale_text(tr, sc, sizeof sc), bias);
    }
}

static void formula_masked(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *r = recipe_name_of(tr, s).sym, *x = recipe_op_sym(tr, s, 0);
    if (tr->stages[s].operands[1] < 0) {
        snprintf(out, n, "%s = %s", r, x);
        return;
    }
    char f[32];
    recipe_fill_text(tr->mask_fill, f, sizeof f);
    snprintf(out, n, "%s = %s.masked_fill(mask == 0, %s)", r, x, f);
}

static void formula_softmax(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *x = recipe_name_of(tr, trace_find_near(tr, s, recipe_display_name(tr, tr->stages[s].operands[0], false))).sym;
    float sink = 0.0f;
    if (recipe_sink(tr, s, 0, &sink)) // gpt-oss: one more logit per head, its weight dropped
        snprintf(out, n, "%s = softmax([%s, sink_h], dim=−1)[…, :−1]", recipe_name_of(tr, s).sym, x);
    else
        snprintf(out, n, "%s = softmax(%s, dim=−1)", recipe_name_of(tr, s).sym, x);
}

// gpt-oss: the sink logits of the heads shown, and what they do to a row's sum
static void note_softmax(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    out[0] = '\0';
    const Tensor *w = tr->stages[s].weight;
    float sink = 0.0f;
    if (tr->masked_rows == MASKED_ROWS_ZERO && tr->mask_kind != MASK_NONE) // the convention, off its default
        i18n_fmt(out, n, lang, "fx.masked_rows_zero", 0, NULL);
    if (!recipe_sink(tr, s, 0, &sink)) return;
    char list[160] = "";
    size_t len = 0;
    for (int h = 0; h < (int)w->size && len + 40 < sizeof list; h++) {
        char x[32];
        tip_number(w->data[h], x, sizeof x);
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", h ? ", " : "", x);
    }
    const char *args[] = {list};
    const size_t used = strlen(out);
    if (used) snprintf(out + used, n - used, " ");
    i18n_fmt(out + strlen(out), n - strlen(out), lang, "fx.sinks", 1, args);
}

static const char *narration_softmax(const Trace *tr, int s)
{
    float sink = 0.0f;
    if (recipe_sink(tr, s, 0, &sink)) return "_sinks";
    return tr->masked_rows == MASKED_ROWS_ZERO && tr->mask_kind != MASK_NONE ? "_zero_rows" : "";
}

bool recipe_sink(const Trace *tr, int s, int h, float *out)
{
    const Stage *st = &tr->stages[s];
    // h: a result panel's head, -1 on a panel without heads
    if (!st->weight || STAGE_INFO[st->id].weight != WEIGHT_SINKS || h < 0 || (size_t)h >= st->weight->size) return false;
    *out = st->weight->data[h];
    return true;
}

static void formula_wsum(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s = %s·%s", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0), recipe_op_sym(tr, s, 1));
}

static void formula_pos_bias(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    if (tr->alibi_form == ALIBI_KEY) // BLOOM's form
        snprintf(out, n, "%s[h, i, j] = m_h·j", recipe_name_of(tr, s).sym);
    else
        snprintf(out, n, "%s[h, i, j] = −m_h·(i − j)", recipe_name_of(tr, s).sym);
}

static void tip_dot(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    Lang lang = cell->lang;
    float val = cell->val;
    const int *op = cell->st->operands;
    int b = cell->b, h = cell->h, row = cell->row, col = cell->col;
    const Tensor *t0 = cell->t0, *t1 = cell->t1;
    char a0[32], a1[32], a2[32];
    if (t0 && t1) {
        int dk = tip_last_dim(t0);
        const float *q = tip_row(t0, b, h, row), *k = tip_row(t1, b, trace_kv_head(tr, t1, h), col);
        snprintf(a0, sizeof a0, "%d", row), snprintf(a1, sizeof a1, "%d", col);
        recipe_scale_text(tr, a2, sizeof a2);
        const char *args[] = {a0, a1, a2};
        bool scaled = tr->scale != 1.0f;
        tip_key(o, lang, scaled ? "tip.scores" : "tip.scores_noscale", 3, args);
        if (op[2] >= 0) { // ALiBi: the position bias of this cell, added after the scale
            tip_put(o, "\n");
            tip_key(o, lang, tr->alibi_form == ALIBI_KEY ? "tip.scores_bias_key" : "tip.scores_bias", 0, NULL);
        }
        tip_put(o, scaled ? "\n= (" : "\n= ");
        tip_terms(o, lang, q, 1, k, 1, dk);
        if (scaled) {
            tip_put(o, ") / ");
            tip_put(o, a2);
        }
        if (op[2] >= 0) {
            const Tensor *pb = &tr->stages[op[2]].t;
            tip_put(o, " + ");
            tip_num(o, tip_row(pb, 0, h, row)[col], true);
        }
        tip_equals(o, val);
    }
}

static void tip_pos_bias(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    Lang lang = cell->lang;
    float val = cell->val;
    int h = cell->h, row = cell->row, col = cell->col;
    char a0[32], a1[32], a2[32];
    double m = attn_alibi_slope(h, tr->n_heads);
    char mb[32];
    tip_operand(o, (float)m, mb, sizeof mb);
    snprintf(a0, sizeof a0, "%d", row), snprintf(a1, sizeof a1, "%d", col);
    snprintf(a2, sizeof a2, "%d", h);
    const char *args[] = {a2, mb, a0, a1};
    if (tr->alibi_form == ALIBI_KEY) { // BLOOM's m·j, worked
        tip_key(o, lang, "tip.alibi_key", 4, args);
        tip_put(o, "\n= ");
        tip_put(o, mb);
        tip_put(o, "·");
        tip_put(o, a1);
        tip_equals(o, val);
        return;
    }
    tip_key(o, lang, "tip.alibi", 4, args);
    if (col > row) { // a later key: positive before the mask removes it
        tip_put(o, "\n");
        tip_key(o, lang, tr->mask_kind ? "tip.alibi_future" : "tip.alibi_future_nomask", 0, NULL);
    }
    tip_put(o, "\n= −"); // −m·(i − j), worked
    tip_put(o, mb);
    tip_put(o, "·(");
    tip_put(o, a0);
    tip_put(o, " − ");
    tip_put(o, a1);
    tip_put(o, ")");
    tip_equals(o, val);
}

static void tip_mask_fill(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    const PanelSpec *ps = cell->ps;
    Lang lang = cell->lang;
    float val = cell->val;
    bool masked = cell->masked;
    int b = cell->b, row = cell->row, col = cell->col;
    char a0[32], a1[32];
    if (!ps->mask) {
        tip_key(o, lang, "tip.nomask", 0, NULL);
    } else {
        snprintf(a0, sizeof a0, "%d,%d,%d", b, row, col);
        if (masked)
            recipe_fill_text(tr->mask_fill, a1, sizeof a1);
        else
            tip_number(val, a1, sizeof a1);
        const char *args[] = {a0, a1};
        tip_key(o, lang, masked ? "tip.masked_yes" : "tip.masked_no", 2, args);
    }
}

static void tip_softmax(TipOut *o, const TipCell *cell)
{
    Lang lang = cell->lang;
    float val = cell->val;
    int b = cell->b, h = cell->h, row = cell->row, col = cell->col;
    const Tensor *t0 = cell->t0;
    if (t0) {
        int lk = tip_last_dim(t0);
        const float *x = tip_row(t0, b, h, row);
        float mx = -INFINITY;
        for (int j = 0; j < lk; j++) // as tensor_softmax_rows: a NaN score makes the max NaN
            if (x[j] > mx || isnan(x[j])) mx = x[j];
        float sink = 0.0f;
        const bool has_sink = recipe_sink(cell->tr, (int)(cell->st - cell->tr->stages), h, &sink);
        if (has_sink && (sink > mx || isnan(sink))) mx = isnan(mx) ? mx : sink; // (tensor_softmax_rows_sink)
        tip_key(o, lang, "tip.softmax", 0, NULL);
        bool zero_row = cell->tr->masked_rows == MASKED_ROWS_ZERO; // every key masked: 0 (model.masked_rows)
        const float *r = tip_row(&cell->st->t, b, h, row);
        for (int j = 0; j < lk && zero_row; j++) zero_row = r[j] == 0.0f;
        if (zero_row) {
            tip_put(o, "\n");
            tip_key(o, lang, "tip.softmax_zero_row", 0, NULL);
            tip_equals(o, val);
            return;
        }
        if (isinf(mx) && mx < 0) {
            tip_put(o, "\n");
            tip_key(o, lang, "tip.softmax_nan", 0, NULL);
            return;
        }
        float sum = 0.0f;
        for (int j = 0; j < lk; j++) sum += tensor_expf(x[j] - mx);
        if (has_sink) { // one more term, a weight that reaches no value
            float e = tensor_expf(sink - mx);
            sum += e;
            char hb[16], sb[32], eb[32];
            snprintf(hb, sizeof hb, "%d", h), tip_number(sink, sb, sizeof sb), tip_number(e, eb, sizeof eb);
            const char *args[] = {hb, sb, eb};
            tip_put(o, "\n");
            tip_key(o, lang, "tip.softmax_sink", 3, args);
        }
        tip_put(o, "\n= exp(");
        tip_num(o, x[col], false);
        tip_put(o, " − ");
        tip_num(o, mx, true);
        tip_put(o, ") / ");
        tip_num(o, sum, false);
        tip_step(o, tensor_expf(x[col] - mx));
        tip_put(o, " / ");
        tip_num(o, sum, false);
        char vb[32];
        tip_number(val, vb, sizeof vb);
        tip_put(o, o->approx ? " ≈ " : " = ");
        tip_put(o, vb);
    }
}

static void tip_weighted_sum(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    Lang lang = cell->lang;
    float val = cell->val;
    int b = cell->b, h = cell->h, row = cell->row, col = cell->col;
    const Tensor *t0 = cell->t0, *t1 = cell->t1;
    char a0[32], a1[32];
    if (t0 && t1) {
        int lk = tip_last_dim(t0), dv = tip_last_dim(t1);
        const float *a = tip_row(t0, b, h, row), *vv = tip_row(t1, b, trace_kv_head(tr, t1, h), 0) + col;
        snprintf(a0, sizeof a0, "%d", row), snprintf(a1, sizeof a1, "%d", col);
        const char *args[] = {a0, a1};
        tip_key(o, lang, "tip.wsum", 2, args);
        tip_put(o, "\n= ");
        tip_terms(o, lang, a, 1, vv, dv, lk);
        tip_equals(o, val);
    }
}

// The scale: 1, √d_k, or the lesson's own.
static void note_scores(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)s;
    char a[32], b[32];
    if (tr->scale == 1.0f) {
        i18n_fmt(out, n, lang, "fx.scale_one", 0, NULL);
    } else if (recipe_scale_is_sqrt_dk(tr)) {
        snprintf(a, sizeof a, "%d", tr->d_k);
        recipe_scale_text(tr, b, sizeof b);
        const char *args[] = {a, b};
        i18n_fmt(out, n, lang, "fx.scale_sqrt", 2, args);
    } else if (tr->query_pre_attn_scalar > 0.0f && tr->scale == sqrtf(tr->query_pre_attn_scalar)) { // Gemma's, not √d_k
        snprintf(a, sizeof a, "%g", (double)tr->query_pre_attn_scalar);
        recipe_scale_text(tr, b, sizeof b);
        const char *args[] = {a, b};
        i18n_fmt(out, n, lang, "fx.scale_qpas", 2, args);
    } else {
        recipe_scale_text(tr, a, sizeof a);
        const char *args[] = {a};
        i18n_fmt(out, n, lang, "fx.scale_custom", 1, args);
    }
}

// ---- Gemma 2's soft-capping: c·tanh(s / c), each score squeezed into (−c, c) ----------------

static void panels_softcap(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_CELL);
    char op[64], c[24];
    snprintf(c, sizeof c, "%g", (double)tr->softcap);
    snprintf(op, sizeof op, "%s·tanh(·/%s) =", c, c);
    recipe_add_stage(L, tr, v, v->stage, v->head, op, READS_NONE);
}

static void formula_softcap(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s = c·tanh(%s / c)", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0));
}

static void note_softcap(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)s;
    char c[24];
    snprintf(c, sizeof c, "%g", (double)tr->softcap);
    const char *args[] = {c};
    i18n_fmt(out, n, lang, "fx.softcap", 1, args);
}

static void tip_softcap(TipOut *o, const TipCell *cell)
{
    if (!cell->t0) return;
    const float s = tip_row(cell->t0, cell->b, cell->h, cell->row)[cell->col], c = cell->tr->softcap;
    tip_put(o, "= ");
    tip_num(o, c, false);
    tip_put(o, " × tanh(");
    tip_num(o, s, false);
    tip_put(o, " / ");
    tip_num(o, c, false);
    tip_put(o, ")");
    tip_step(o, c);
    tip_put(o, " × ");
    tip_num(o, tanhf(s / c), true);
    tip_equals(o, cell->val);
}

// ALiBi: each head's slope.
static void note_pos_bias(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)s;
    char m[160] = "";
    size_t len = 0;
    for (int h = 0; h < tr->n_heads && h < 8 && len + 16 < sizeof m; h++)
        len += (size_t)snprintf(m + len, sizeof m - len, "%s%.4g", h ? ", " : "", attn_alibi_slope(h, tr->n_heads));
    if (tr->n_heads > 8) snprintf(m + len, sizeof m - len, ", …");
    const char *args[] = {m};
    i18n_fmt(out, n, lang, tr->alibi_form == ALIBI_KEY ? "fx.alibi_key" : "fx.alibi", 1, args);
}

// A lesson without a mask: the masking step changes nothing. The conventions off their default:
// a window of W + 1 keys, torch.finfo(float32).min as the fill.
static void note_masked(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    out[0] = '\0';
    if (tr->stages[s].operands[1] < 0) {
        i18n_fmt(out, n, lang, "fx.no_mask", 0, NULL);
        return;
    }
    bool windowed = tr->window > 0;
    for (int l = 0; l < tr->n_layers && l < TRACE_MAX_LAYERS; l++) windowed = windowed || tr->layer_sliding[l];
    if (windowed && tr->window_conv == WINDOW_FLASH) i18n_fmt(out, n, lang, "fx.window_flash", 0, NULL);
    if (tr->mask_fill == -FLT_MAX) {
        const size_t used = strlen(out);
        if (used) snprintf(out + used, n - used, " ");
        i18n_fmt(out + strlen(out), n - strlen(out), lang, "fx.fill_finfo", 0, NULL);
    }
}

static const char *narration_scores(const Trace *tr, int s)
{
    if (tr->stages[s].operands[2] >= 0) return tr->alibi_form == ALIBI_KEY ? "_alibi_key" : "_alibi";
    return tr->scale == 1.0f ? "_noscale" : "";
}

static const char *narration_pos_bias(const Trace *tr, int s)
{
    (void)s;
    return tr->alibi_form == ALIBI_KEY ? "_key" : "";
}

static const char *narration_masked(const Trace *tr, int s)
{
    if (tr->stages[s].operands[1] < 0) return tr->encoder_blocks > 0 ? "_none_encdec" : "_none"; // (its decoder has one)
    if (isinf(tr->mask_fill)) return "_neginf";
    return tr->mask_fill > -1e4f ? "_small" : "";
}

// ---- the derivation strip: a score's dot product, a softmax row --------------------------

static int deriv_width_scores(const Trace *tr, int s) { return tr->stages[tr->stages[s].operands[0]].t.shape[3]; }

static bool derive_scores(const Layout *L, const Trace *tr, const View *v, int row, int col, Derivation *d)
{
    const Stage *st = &tr->stages[v->stage];
    const PanelSpec *res = &L->spec[L->result_panel];
    int n = deriv_width_scores(tr, v->stage);
    char b[64];
    if (col < 0 || col >= res->cols) col = 0; // -1: a row being computed (render.c's computing_cell)
    d->col = col;
    const Tensor *q = &tr->stages[st->operands[0]].t, *k = &tr->stages[st->operands[1]].t;
    int b0 = imin(imax(v->batch, 0), q->shape[0] - 1), h = res->head < 0 ? 0 : res->head;
    const float *qr = q->data + (((size_t)b0 * (size_t)q->shape[1] + (size_t)h) * (size_t)q->shape[2] + (size_t)row) * (size_t)n;
    const int hk = trace_kv_head(tr, k, h); // the K head this query head reads (GQA / MQA)
    const float *kr = k->data + (((size_t)b0 * (size_t)k->shape[1] + (size_t)hk) * (size_t)k->shape[2] + (size_t)col) * (size_t)n;
    recipe_deriv_title(d, v, res, row, col);
    const char *qs = recipe_symbol(tr, st->operands[0], v->lang), *ks = recipe_symbol(tr, st->operands[1], v->lang);
    snprintf(b, sizeof b, "%s%d", qs[0] == 'Q' ? "q" : qs, row);
    DerivLine *l = recipe_deriv_line(d, b, n);
    memcpy(l->v, qr, (size_t)n * sizeof(float));
    snprintf(b, sizeof b, "%s%d", ks[0] == 'K' ? "k" : ks, col);
    l = recipe_deriv_line(d, b, n);
    memcpy(l->v, kr, (size_t)n * sizeof(float));
    l = recipe_deriv_line(d, "×", n);
    recipe_deriv_rel(l, DERIV_PRODUCT, 0, 1, 0, 0.0);
    float sum = 0.0f;
    for (int i = 0; i < n; i++) l->v[i] = qr[i] * kr[i], sum += l->v[i];
    l = recipe_deriv_line(d, "Σ", 1);
    l->v[0] = sum;
    recipe_deriv_rel(l, DERIV_SUM, 2, 0, 0, 0.0);
    // a constant on a label: 6 significant digits, so what follows from it adds up
    char sc[24];
    double scale = strtod(recipe_scale_text(tr, sc, sizeof sc), NULL);
    if (st->operands[2] >= 0) { // ALiBi: ÷ scale, then + the position bias (its value on the label)
        const Tensor *pb = &tr->stages[st->operands[2]].t;
        float bias = pb->data[((size_t)h * (size_t)pb->shape[2] + (size_t)row) * (size_t)pb->shape[3] + (size_t)col];
        if (tr->scale != 1.0f) {
            snprintf(b, sizeof b, "÷ %s", sc);
            l = recipe_deriv_line(d, b, 1);
            l->v[0] = sum / tr->scale;
            recipe_deriv_rel(l, DERIV_DIV_K, 3, 0, 0, scale);
            snprintf(b, sizeof b, "+ bias %.6g =", (double)(bias == 0.0f ? 0.0f : bias)); // (never "-0")
            l = recipe_deriv_line(d, b, 1);
            recipe_deriv_rel(l, DERIV_ADD_K, 4, 0, 0, strtod(b + strlen("+ bias "), NULL));
        } else {
            l = recipe_deriv_line(d, "+ bias", 1);
            l->v[0] = bias;
            l = recipe_deriv_line(d, "=", 1);
            recipe_deriv_rel(l, DERIV_ADD, 3, 4, 0, 0.0);
        }
    } else if (tr->scale != 1.0f) {
        snprintf(b, sizeof b, "÷ %s", sc);
        l = recipe_deriv_line(d, b, 1);
        recipe_deriv_rel(l, DERIV_DIV_K, 3, 0, 0, scale);
    } else {
        l = recipe_deriv_line(d, "=", 1);
        recipe_deriv_rel(l, DERIV_ADD_K, 3, 0, 0, 0.0);
    }
    l->v[0] = panel_value(res, row, col);
    l->result = true;
    return true;
}

static int deriv_width_softmax(const Trace *tr, int s)
{
    float sink = 0.0f; // (the stage's own keys: an encoder–decoder's blocks have their own lengths)
    return tr->stages[s].t.shape[tr->stages[s].t.rank - 1] + (recipe_sink(tr, s, 0, &sink) ? 1 : 0); // gpt-oss: the sink's logit last
}

// The same steps, in the same order, as tensor_softmax_rows.
static bool derive_softmax(const Layout *L, const Trace *tr, const View *v, int row, int col, Derivation *d)
{
    (void)col;
    const Stage *st = &tr->stages[v->stage];
    const PanelSpec *res = &L->spec[L->result_panel];
    // gpt-oss: the head's sink logit is one more value after the row's, up to Σ
    float sink = 0.0f;
    const bool has_sink = recipe_sink(tr, v->stage, res->head, &sink);
    const int nr = st->t.shape[st->t.rank - 1], n = nr + (has_sink ? 1 : 0); // (the stage's keys)
    char b[64];
    const PanelSpec *x = &L->input; // (the whole stage's, also when a split shows the result alone)
    float xv[SCENE_DERIV_MAX_VALUES + 1], mx = -INFINITY, sum = 0.0f;
    if (n > SCENE_DERIV_MAX_VALUES) return false;
    for (int j = 0; j < n; j++) {
        xv[j] = j < nr ? panel_value(x, row, j) : sink;
        if (xv[j] > mx || isnan(xv[j])) mx = xv[j];
    }
    recipe_deriv_title(d, v, res, row, -1);
    // the row named as its panel is: scores (or masked_scores)
    const char *xs = recipe_name_of(tr, trace_find_near(tr, st->operands[0], recipe_display_name(tr, st->operands[0], false))).sym;
    char x0[64];
    snprintf(x0, sizeof x0, has_sink ? "%s, sink" : "%s", xs);
    DerivLine *l = recipe_deriv_line(d, x0, n);
    for (int j = 0; j < n; j++) l->v[j] = xv[j];
    l = recipe_deriv_line(d, "max", 1);
    l->v[0] = mx;
    recipe_deriv_rel(l, DERIV_MAX, 0, 0, 0, 0.0);
    snprintf(b, sizeof b, "%s − max", xs);
    l = recipe_deriv_line(d, b, n);
    recipe_deriv_rel(l, DERIV_SUB, 0, 1, 0, 0.0);
    for (int j = 0; j < n; j++) l->v[j] = xv[j] - mx;
    snprintf(b, sizeof b, "exp(%s − max)", xs);
    l = recipe_deriv_line(d, b, n);
    recipe_deriv_rel(l, DERIV_EXP, 2, 0, 0, 0.0);
    for (int j = 0; j < n; j++) l->v[j] = tensor_expf(xv[j] - mx), sum += l->v[j];
    l = recipe_deriv_line(d, "Σ", 1);
    l->v[0] = sum;
    recipe_deriv_rel(l, DERIV_SUM, 3, 0, 0, 0.0);
    bool zero_row = tr->masked_rows == MASKED_ROWS_ZERO; // model.masked_rows "zero": a fully masked row is 0
    for (int j = 0; j < nr && zero_row; j++) zero_row = panel_value(res, row, j) == 0.0f;
    if (zero_row) {
        const char *args[] = {recipe_symbol(tr, v->stage, v->lang)};
        i18n_fmt(b, sizeof b, v->lang, "deriv.zero_row", 1, args);
    } else {
        snprintf(b, sizeof b, "÷ Σ = %s", recipe_symbol(tr, v->stage, v->lang));
    }
    l = recipe_deriv_line(d, b, nr);
    if (!zero_row) recipe_deriv_rel(l, DERIV_DIV, 3, 4, 0, 0.0);
    for (int j = 0; j < nr; j++) l->v[j] = panel_value(res, row, j);
    l->result = true;
    return true;
}

void recipe_panels_scores(Layout *L, const Trace *tr, const View *v) { panels_scores(L, tr, v); }
void recipe_tip_dot(TipOut *o, const TipCell *c) { tip_dot(o, c); }
void recipe_panels_softmax(Layout *L, const Trace *tr, const View *v) { panels_softmax(L, tr, v); }
void recipe_tip_softmax(TipOut *o, const TipCell *c) { tip_softmax(o, c); }
int recipe_deriv_width_softmax(const Trace *tr, int s) { return deriv_width_softmax(tr, s); }
bool recipe_derive_softmax(const Layout *L, const Trace *tr, const View *v, int row, int col, Derivation *d)
{
    return derive_softmax(L, tr, v, row, col, d);
}

#define Q(k) QUIZ_BIT(QUIZ_##k)

const StageRecipe RECIPE_SCORES = {
    .panels = panels_scores, .formula = formula_scores, .note = note_scores, .tip = tip_dot,
    .deriv_width = deriv_width_scores, .derive = derive_scores, .narration = narration_scores, .anim = ANIM_CELLS,
    .quiz = Q(SHAPE) | Q(VALUE), .key_cols = true,
};

const StageRecipe RECIPE_SOFTCAP = {
    .panels = panels_softcap, .formula = formula_softcap, .note = note_softcap, .tip = tip_softcap, .anim = ANIM_FADE,
    .quiz = Q(VALUE), .key_cols = true, .compared = recipe_compared_op0,
};

// (1, H, Lq, Lk): no batch to ask about
const StageRecipe RECIPE_POS_BIAS = {
    .panels = recipe_panels_self, .formula = formula_pos_bias, .note = note_pos_bias, .tip = tip_pos_bias,
    .narration = narration_pos_bias,
    .anim = ANIM_FADE, .key_cols = true,
};

const StageRecipe RECIPE_MASKED = {
    .panels = panels_masked, .formula = formula_masked, .note = note_masked, .tip = tip_mask_fill,
    .narration = narration_masked, .anim = ANIM_MASK, .quiz = Q(MASKED), .key_cols = true,
    .mask_look = MASK_LOOK_LESSON_MASK, .view_of_operand = true,
};

const StageRecipe RECIPE_SOFTMAX = {
    .panels = panels_softmax, .formula = formula_softmax, .note = note_softmax, .tip = tip_softmax,
    .deriv_width = deriv_width_softmax, .derive = derive_softmax, .narration = narration_softmax, .anim = ANIM_SOFTMAX, .quiz = Q(MASKED) | Q(ARGMAX) | Q(SUM) | Q(VALUE),
    .key_cols = true, .scale = SCALE_PROBABILITY, .extra = recipe_extra_cls_attention, // (a vision transformer's)
};

const StageRecipe RECIPE_WEIGHTED_SUM = {
    .panels = panels_wsum, .formula = formula_wsum, .tip = tip_weighted_sum, .anim = ANIM_ROWS,
    .quiz = Q(SHAPE) | Q(VALUE), .compared = recipe_compared_op1, // V: a one-hot row copies one of its rows
};
