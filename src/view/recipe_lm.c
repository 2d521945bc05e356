// recipe_lm.c — a language model's own stages: the token embedding (a row of E per
// token), the positions added to it, and the softmax over the vocabulary at a
// temperature with its extra, the next-token bars. (The sum e + p is an add, the final
// norm a norm and the logits a linear layer: recipe_linear.c's.) recipe.h says what a
// recipe holds.
#include "recipe.h"
#include "sample.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "i18n.h"
#include "lesson.h"
#include "tensor.h"

static int imin_(int a, int b) { return a < b ? a : b; }
static int imax_(int a, int b) { return a > b ? a : b; }

// The token id at position l of batch b (-1 when the trace has none).
static int token_id(const Trace *tr, int b, int l)
{
    if (!tr->ids || b < 0 || b >= tr->batch || l < 0 || l >= tr->len_q) return -1;
    return tr->ids[(size_t)b * tr->len_q + l];
}

// A (V, C) or (P, C) table as its rows (not transposed: a row is looked up).
static PanelSpec *add_table(Layout *L, const Trace *tr, const View *v, int s, AxisKind rows, const char *op)
{
    PanelSpec *p = recipe_add_param(L, tr, v, s, false, op, READS_NONE);
    if (p && p->transposed) panel_transpose(p); // (recipe_add_param shows Wᵀ, as x·Wᵀ reads)
    if (p) p->row_axis = rows, p->col_axis = AXIS_INDEX;
    return p;
}

// E (a row per vocabulary token) → e: row l is E's row of token l.
static void panels_embed(Layout *L, const Trace *tr, const View *v)
{
    add_table(L, tr, v, v->stage, AXIS_VOCAB, "");
    recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
}

// Learned: P (a row per position) → p; sinusoidal: p alone (computed, no table).
static void panels_pos_embed(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    if (st->weight) add_table(L, tr, v, v->stage, AXIS_INDEX, "");
    recipe_add_stage(L, tr, v, v->stage, v->head, st->weight ? "→" : "", READS_NONE);
}

static void formula_embed(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)tr, (void)s, (void)lang;
    snprintf(out, n, "e[l] = E[token_l]");
}

static void formula_pos_embed(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    if (tr->stages[s].weight)
        snprintf(out, n, "p[l] = P[l]");
    else
        snprintf(out, n, "p[l, 2i] = sin(l·10000^(−2i/%d)),  p[l, 2i+1] = cos(l·10000^(−2i/%d))", tr->d_model, tr->d_model);
}

static void tip_embed(TipOut *o, const TipCell *cell)
{
    const int id = token_id(cell->tr, cell->b, cell->row);
    if (id < 0) return;
    const char *tok = lesson_token_label(cell->v->lesson, cell->b, cell->row);
    char ib[16], cb[16];
    snprintf(ib, sizeof ib, "%d", id), snprintf(cb, sizeof cb, "%d", cell->col);
    const char *args[] = {tok ? tok : "?", ib, cb};
    tip_key(o, cell->lang, "tip.token_embed", 3, args);
    tip_equals(o, cell->val);
}

static void tip_pos_embed(TipOut *o, const TipCell *cell)
{
    char lb[16], cb[16];
    snprintf(lb, sizeof lb, "%d", cell->row), snprintf(cb, sizeof cb, "%d", cell->col);
    if (cell->st->weight) { // learned: a row of P
        const char *args[] = {lb, cb};
        tip_key(o, cell->lang, "tip.pos_embed_learned", 2, args);
        tip_equals(o, cell->val);
        return;
    }
    // sinusoidal: the angle l·10000^(−2i/C), then its sin (even column) or cos (odd)
    const int i2 = cell->col & ~1, C = cell->tr->d_model;
    const float div = expf((float)i2 * (float)(-log(10000.0) / C)), a = (float)cell->row * div;
    char ib[16], ab[24];
    snprintf(ib, sizeof ib, "%d", i2);
    tip_number(a, ab, sizeof ab);
    const char *args[] = {lb, ib, cell->col & 1 ? "cos" : "sin", ab};
    tip_key(o, cell->lang, "tip.pos_embed_sin", 4, args);
    tip_equals(o, cell->val);
}

// probs = softmax(logits / T): the panels of the scores' softmax, over the vocabulary.
static void panels_probs(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    recipe_add_stage(L, tr, v, v->stage, v->head, "softmax→", READS_NONE); // (T: in the formula)
}

static void formula_probs(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)s, (void)lang;
    if (tr->temperature == 1.0f)
        snprintf(out, n, "probs = softmax(logits, dim=−1)");
    else
        snprintf(out, n, "probs = softmax(logits / T, dim=−1),  T = %.4g", (double)tr->temperature);
}

// As the core computes it: y = logits / T, then exp(y − max y) / Σ exp(y − max y).
static void tip_probs(TipOut *o, const TipCell *cell)
{
    const Tensor *z = cell->t0;
    if (!z) return;
    const int V = tip_last_dim(z);
    const float *row = tip_row(z, cell->b, 0, cell->row), T = cell->tr->temperature;
    float mx = -INFINITY, sum = 0.0f;
    for (int j = 0; j < V; j++)
        if (row[j] / T > mx || isnan(row[j])) mx = row[j] / T;
    for (int j = 0; j < V; j++) sum += tensor_expf(row[j] / T - mx);
    const char *tok = cell->v && cell->v->lesson ? lesson_vocab_label(cell->v->lesson, cell->col) : NULL;
    if (!tok) tok = "?";
    char tb[16];
    snprintf(tb, sizeof tb, "%.4g", (double)T);
    const char *args[] = {tok, tb};
    tip_key(o, cell->lang, T == 1.0f ? "tip.probs" : "tip.probs_t", 2, args);
    tip_put(o, "\n= exp(");
    tip_num(o, row[cell->col] / T, false);
    tip_put(o, " − ");
    tip_num(o, mx, true);
    tip_put(o, ") / ");
    tip_num(o, sum, false);
    tip_step(o, tensor_expf(row[cell->col] / T - mx));
    tip_put(o, " / ");
    tip_num(o, sum, false);
    tip_equals(o, cell->val);
}

// The next-token bars (probs' extra, right of the panels): the most likely tokens after the
// text's last position, most likely first, each as long as its probability of 1, written as
// the cells write it (two decimals: 0.00 for a tiny one). With sampling's top-k or top-p
// (sample.h) a kept token's bar is its renormalised probability (what generating draws
// from), a dropped one is marked cut.
static void extra_next_token(Layout *L, const Trace *tr, const View *v, int gap)
{
    const Tensor *t = &tr->stages[v->stage].t;
    if (tr->vocab_size <= 0 || t->rank != 3) return; // ((B, L, V): a language model's probs)
    const int bw = imin_(imax_((int)(260 * L->s), L->area.w / 4), L->area.w / 2);
    BarChart *c = &L->bars;
    c->r = (Rect){L->area.x + L->area.w - bw, L->area.y, bw, L->area.h};
    L->area.w -= bw + gap;
    const int Lq = t->shape[1], V = t->shape[2], b = v->batch < t->shape[0] ? v->batch : 0;
    const float *p = t->data + ((size_t)b * Lq + (size_t)(Lq - 1)) * V;
    char tb[16], lb[40];
    const char *last = lesson_token_label(v->lesson, b, Lq - 1);
    snprintf(lb, sizeof lb, "%s", last ? (strcmp(last, " ") == 0 ? "\xE2\x90\xA3" : last) : "?");
    snprintf(tb, sizeof tb, "%.3g", (double)tr->temperature);
    const AttnConfig *cfg = v->lesson ? &v->lesson->cfg : NULL;
    const bool sampling = cfg && V <= SAMPLE_MAX_VOCAB && sample_active(cfg);
    float kept[SAMPLE_MAX_VOCAB];
    const char *args[] = {lb, tb};
    i18n_fmt(c->title, sizeof c->title, v->lang, tr->n_classes > 0 ? "ui.class_bars" : "ui.next_after", 2, args);
    c->subtitle[0] = '\0';
    if (sampling) { // "top-k 5, top-p 0.9: kept, renormalised"
        sample_filter(p, V, cfg->top_k, cfg->top_p, kept);
        char how[64];
        sample_settings_text(cfg, how, sizeof how);
        const char *a1[] = {how};
        i18n_fmt(c->subtitle, sizeof c->subtitle, v->lang, "ui.next_kept", 1, a1);
    }
    int top[LAYOUT_MAX_BARS];
    for (int k = 0; k < LAYOUT_MAX_BARS && k < V; k++) { // the k-th largest (ties: the lower id first)
        int best = -1;
        for (int j = 0; j < V; j++) {
            bool used = false;
            for (int i = 0; i < c->n; i++) used |= top[i] == j;
            if (!used && (best < 0 || p[j] > p[best])) best = j;
        }
        top[c->n] = best;
        const char *tok = v->lesson ? lesson_vocab_label(v->lesson, best) : NULL;
        if (!tok) tok = "?";
        c->label[c->n] = strcmp(tok, " ") == 0 ? "\xE2\x90\xA3" : tok;
        const float q = sampling ? kept[best] : p[best];
        c->cut[c->n] = sampling && q == 0.0f;
        c->value[c->n] = q;
        if (c->cut[c->n]) snprintf(c->number[c->n], sizeof c->number[c->n], "%s", i18n_get(v->lang, "ui.sample_cut"));
        else snprintf(c->number[c->n], sizeof c->number[c->n], "%.2f", (double)q);
        c->n++;
    }
}

const StageRecipe RECIPE_EMBED = {
    .panels = panels_embed, .formula = formula_embed, .tip = tip_embed, .anim = ANIM_ROWS,
    .quiz = QUIZ_BIT(QUIZ_SHAPE) | QUIZ_BIT(QUIZ_VALUE),
};

const StageRecipe RECIPE_POS_EMBED = {
    .panels = panels_pos_embed, .formula = formula_pos_embed, .tip = tip_pos_embed, .anim = ANIM_ROWS,
    .quiz = QUIZ_BIT(QUIZ_VALUE),
};

// A vision transformer's probabilities are over its classes.
static const char *narration_probs(const Trace *tr, int s)
{
    (void)s;
    return tr->n_classes > 0 ? "_vision" : "";
}

const StageRecipe RECIPE_VOCAB_SOFTMAX = {
    .panels = panels_probs, .formula = formula_probs, .tip = tip_probs, .narration = narration_probs, .anim = ANIM_SOFTMAX,
    .quiz = QUIZ_BIT(QUIZ_SHAPE) | QUIZ_BIT(QUIZ_VALUE), .scale = SCALE_PROBABILITY, .extra = extra_next_token,
};
