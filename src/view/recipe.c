// recipe.c — the table of recipes and what recipes are written with (recipe.h).
#include "recipe.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "edit.h"
#include "i18n.h"

static int imin(int a, int b) { return a < b ? a : b; }

StageName recipe_name_of(const Trace *tr, int s)
{
    if (s < 0) return (StageName){"?", "weight", "W", "bias", "b", "W"}; // absent: trace_find_near's -1
    assert(s < tr->n);
    const StageInfo *in = &STAGE_INFO[tr->stages[s].id];
    const WeightInfo *w = in->weight != WEIGHT_NONE ? &WEIGHT_INFO[in->weight] : NULL;
    const WeightInfo *b = in->bias != WEIGHT_NONE ? &WEIGHT_INFO[in->bias] : NULL;
    return (StageName){in->symbol, w ? w->name : NULL, w ? w->symbol : NULL, b ? b->name : NULL,
                       b ? b->symbol : NULL, w ? w->plain : NULL};
}

bool recipe_has_bias(const Stage *st) { return st->bias && tensor_present(st->bias); }

// The stage a panel of stage s is named after: masked_scores without a mask (in its block) is the
// scores where it is read (softmax), but keeps its name as the masking stage's result.
const char *recipe_display_name(const Trace *tr, int s, bool result)
{
    const Stage *st = &tr->stages[s];
    // a block without a mask (operand 1: none) passes its scores through: shown as "scores" (an
    // encoder–decoder's cross-attention beside its masked self-attention, a vision transformer)
    return st->kind == STAGE_KIND_MASKED && st->operands[1] < 0 && !result ? "scores" : STAGE_INFO[st->id].name;
}

static const char *stage_text(const Trace *tr, int s, const char *family, bool result, Lang lang);

// A title in a model of several layers says the layer: "Layer 1 · Softmax".
const char *recipe_stage_text(const Trace *tr, int s, const char *family, bool result, Lang lang)
{
    const char *t = stage_text(tr, s, family, result, lang);
    if (tr->n_layers <= 1 || tr->stages[s].layer < 0 || strcmp(family, "title") != 0) return t;
    static _Thread_local char buf[4][256]; // a few titles may be in use at once (a frame's badges)
    static _Thread_local int next;
    char *out = buf[next++ & 3], l[12];
    snprintf(l, sizeof l, "%d", tr->stages[s].layer);
    const char *args[] = {l, t};
    static const char *const KIND[] = {"ui.layer_title", "ui.layer_title_encoder", "ui.layer_title_decoder_self",
                                       "ui.layer_title_cross"}; // (an encoder–decoder's blocks say which attention)
    i18n_fmt(out, sizeof buf[0], lang, KIND[trace_block(tr, tr->stages[s].layer)], 2, args);
    return out;
}

static const char *stage_text(const Trace *tr, int s, const char *family, bool result, Lang lang)
{
    const StageRecipe *r = recipe_of(tr->stages[s].kind);
    if (r->text) return r->text(tr, s, family, lang);
    const char *base = STAGE_INFO[tr->stages[s].id].name;
    const char *nm = strcmp(family, "name") == 0 ? recipe_display_name(tr, s, result) : base;
    char key[64];
    if (r->narration && nm == base) {
        snprintf(key, sizeof key, "%s.%s%s", family, nm, r->narration(tr, s));
        const char *t = i18n_lookup(lang, key);
        if (t) return t;
    }
    snprintf(key, sizeof key, "%s.%s", family, nm);
    return i18n_get(lang, key);
}

PanelSpec *recipe_new_panel(Layout *L, const char *op, Reads reads)
{
    if (L->n_panels >= LAYOUT_MAX_PANELS) return NULL; // a lesson of many heads (up to 64) asks for more: skipped
    PanelSpec *p = &L->spec[L->n_panels++];
    memset(p, 0, sizeof *p);
    snprintf(p->op, sizeof p->op, "%s", op);
    p->decimals = -1;
    p->reads = reads;
    p->head = -1;
    p->edit_tensor = -1;
    return p;
}

// A slice of stage `stage` (batch v->batch, head `head`).
PanelSpec *recipe_add_stage(Layout *L, const Trace *tr, const View *v, int stage, int head, const char *op,
                            Reads reads)
{
    if (stage < 0) return NULL; // absent: trace_find_near's -1 (a lesson without that stage)
    assert(stage < tr->n);
    const Stage *st = &tr->stages[stage];
    if (!tensor_present(&st->t)) return NULL;
    PanelSpec *p = recipe_new_panel(L, op, reads);
    if (!p) return NULL;
    // a shared K/V head (GQA / MQA): the one query head `head` reads
    int kv = trace_kv_head(tr, &st->t, head);
    bool shared = kv != head || (st->t.rank == 4 && st->t.shape[1] < tr->n_heads);
    panel_slice(p, &st->t, v->batch, kv);
    p->stage = stage;
    if (shared) p->kv_group = tr->n_heads / st->t.shape[1];
    snprintf(p->source, sizeof p->source, "%s", st->name);
    const StageRecipe *r = recipe_of(st->kind);
    p->row_axis = st->key_rows ? AXIS_KEY : AXIS_QUERY;
    p->col_axis = r->key_cols ? panel_key_axis(tr, st->layer) : AXIS_INDEX; // (a decoder's self-attention: the target's)
    if (st->id == STAGE_LOGITS || st->id == STAGE_PROBS) p->col_axis = AXIS_VOCAB; // a column per token of the vocab
    if (st->id == STAGE_PATCHES || st->id == STAGE_PATCH_EMBED) p->row_axis = AXIS_PATCH; // (no [CLS] yet)
    if (r->mask_look == MASK_LOOK_SELF) p->mask = p->data; // 0 cells get the masked look
    int mi = trace_find_near(tr, stage, "window_mask"); // a sliding layer's own, else the lesson's
    if (mi < 0) mi = trace_find(tr, "mask");
    if (st->kind == STAGE_KIND_MASKED && st->operands[1] >= 0) mi = st->operands[1]; // the mask it read (top-k: its own)
    if (r->mask_look == MASK_LOOK_LESSON_MASK && mi >= 0) {
        PanelSpec tmp;
        panel_slice(&tmp, &tr->stages[mi].t, v->batch, 0);
        p->mask = tmp.data;
    }
    // what the what-if lab edits through its cells: the lesson's inputs and mask are
    // its own numbers; a cell of the masked scores (B, H, Lq, Lk) stands for its mask cell
    static const struct { StageId stage; int tensor; } OWN[] = {
        {STAGE_INPUT, LT_QUERY}, {STAGE_KEY_INPUT, LT_KEY}, {STAGE_VALUE_INPUT, LT_VALUE}, {STAGE_MASK, LT_MASK}};
    for (size_t i = 0; i < sizeof OWN / sizeof OWN[0]; i++)
        if (st->id == OWN[i].stage)
            p->edit_tensor = OWN[i].tensor, p->edit_base = (size_t)(p->data - st->t.data), p->edit_rs = p->rs,
            p->edit_cs = p->cs;
    if (r->mask_look == MASK_LOOK_LESSON_MASK && st->t.rank == 4) {
        size_t Lk = (size_t)st->t.shape[3], Lq = (size_t)st->t.shape[2], H = (size_t)st->t.shape[1];
        size_t b = (size_t)(p->data - st->t.data) / (Lk * Lq * H);
        p->edit_tensor = LT_MASK, p->edit_base = b * Lq * Lk, p->edit_rs = (int)Lk, p->edit_cs = 1;
    }
    snprintf(p->title, sizeof p->title, "%s", recipe_stage_text(tr, stage, "name", stage == v->stage, v->lang));
    if (p->head >= 0) {
        size_t len = strlen(p->title);
        // "Q (h0)": the head in parentheses ("Q · h0" read as a product, like Q·Kᵀ)
        snprintf(p->title + len, sizeof p->title - len, shared ? " (kv%d)" : " (h%d)", p->head % 1000);
    }
    return p;
}

// The weight (shown transposed, as in x·Wᵀ) or the bias of stage `stage`;
// γ and β of a LayerNorm. Vectors are one row.
PanelSpec *recipe_add_param(Layout *L, const Trace *tr, const View *v, int stage, bool bias, const char *op,
                            Reads reads)
{
    const Stage *st = &tr->stages[stage];
    const Tensor *t = bias ? st->bias : st->weight;
    if (!t || !tensor_present(t) || t->rank < 1 || t->rank > 2) return NULL;
    PanelSpec *p = recipe_new_panel(L, op, reads);
    if (!p) return NULL;
    panel_slice(p, t, 0, 0);
    p->stage = stage;
    p->is_weight = true;
    p->is_bias = bias;
    p->vector = t->rank == 1;
    WeightSlot slot = bias ? STAGE_INFO[st->id].bias : STAGE_INFO[st->id].weight;
    if (st->id == STAGE_LOGITS && tr->tied) slot = WEIGHT_EMBED; // tied: the unembedding is E itself
    if (slot != WEIGHT_NONE) // the lab edits the lesson's weight itself (transposed below with the panel)
        p->edit_tensor = LT_WEIGHT0 + (st->layer > 0 ? st->layer : 0) * LESSON_N_WEIGHTS + (int)slot, p->edit_base = 0,
        p->edit_rs = p->rs, p->edit_cs = p->cs;
    const StageName nm = recipe_name_of(tr, stage);
    if (tr->n_layers > 1 && st->layer >= 0) // a layer's own weight: "l1.w_q", as its stages are named
        snprintf(p->source, sizeof p->source, "l%d.%s", st->layer, bias ? nm.bias : nm.weight);
    else
        snprintf(p->source, sizeof p->source, "%s", bias ? nm.bias : nm.weight);
    snprintf(p->title, sizeof p->title, "%s", bias ? nm.bsym : nm.wsym);
    p->row_axis = p->vector ? AXIS_NONE : AXIS_INDEX;
    p->col_axis = AXIS_INDEX;
    if (st->id == STAGE_LOGITS) p->row_axis = AXIS_VOCAB; // W_U (V, C): a row per token; Wᵀ a column
    if (!p->vector) panel_transpose(p); // (out, in) → Wᵀ (in, out): x·Wᵀ reads as row · column
    // a vector goes under the parameter before it when their columns match (b under
    // Wᵀ, β under γ): every term stays on screen without taking width
    const PanelSpec *prev = L->n_panels >= 2 ? &L->spec[L->n_panels - 2] : NULL;
    p->stacked = p->vector && prev && prev->is_weight && !prev->stacked && prev->cols == p->cols;
    (void)v;
    return p;
}

// A term added into the result (its colours on the result's scale); a relu's bias is
// not (relu comes after the sum: the result does not hold it).
int recipe_compared_op0(const Trace *tr, int stage) { return tr->stages[stage].operands[0]; }
int recipe_compared_op1(const Trace *tr, int stage) { return tr->stages[stage].operands[1]; }

void recipe_mark_addend(PanelSpec *p, bool yes)
{
    if (p) p->addend = yes;
}

void recipe_panels_self(Layout *L, const Trace *tr, const View *v)
{
    recipe_add_stage(L, tr, v, v->stage, v->head, "", READS_NONE);
}

// The per-head panels of split / concat: at most LAYOUT_MAX_HEAD_PANELS heads, the
// run of them (aligned to a multiple of that) that holds the selected head.
// The heads of a per-head stage: n_heads, or n_kv_heads for grouped K and V.
int recipe_heads_of(const Trace *tr, int stage)
{
    const Tensor *t = &tr->stages[stage].t;
    int H = tr->n_heads > 0 ? tr->n_heads : 1;
    return t->rank == 4 && t->shape[1] < H && t->shape[1] > 0 ? t->shape[1] : H;
}

void recipe_add_head_panels(Layout *L, const Trace *tr, const View *v, int stage, const char *op_first, Reads reads)
{
    int H = recipe_heads_of(tr, stage), nh = imin(H, LAYOUT_MAX_HEAD_PANELS), Hq = tr->n_heads > 0 ? tr->n_heads : 1;
    bool shared = H < Hq;
    int g = Hq / H, sel = trace_kv_head(tr, &tr->stages[stage].t, v->head);
    int k0 = imin(sel / nh * nh, H - nh);
    for (int k = k0; k < k0 + nh; k++) {
        // add_stage maps a query head to its K/V head: ask for the first query head of group k
        PanelSpec *q = recipe_add_stage(L, tr, v, stage, shared ? k * g : k, k == k0 ? op_first : "", reads);
        if (!q) continue;
        char hb[16], lo[16], hi[16];
        snprintf(hb, sizeof hb, "%d", k), snprintf(lo, sizeof lo, "%d", k * g), snprintf(hi, sizeof hi, "%d", k * g + g - 1);
        const char *args[] = {hb, lo, hi};
        // a shared head says which query heads read it
        i18n_fmt(q->title, sizeof q->title, v->lang, !shared ? "name.head" : g == 1 ? "name.kv_head_one" : "name.kv_head",
                 shared ? 3 : 1, args);
    }
}

const char *recipe_op_sym(const Trace *tr, int s, int k)
{
    assert(s >= 0 && s < tr->n && k >= 0 && k < TRACE_MAX_OPERANDS); // a formula's own stage (scene_formula checks)
    return recipe_name_of(tr, tr->stages[s].operands[k]).sym;
}

const char *recipe_scale_text(const Trace *tr, char *buf, size_t n)
{
    snprintf(buf, n, "%.6g", (double)tr->scale);
    return buf;
}

bool recipe_scale_is_sqrt_dk(const Trace *tr)
{
    float sq = sqrtf((float)tr->d_k);
    return fabsf(tr->scale - sq) < 1e-5f * sq;
}

DerivLine *recipe_deriv_line(Derivation *d, const char *label, int n)
{
    DerivLine *l = &d->line[d->n_lines++];
    memset(l, 0, sizeof *l);
    snprintf(l->label, sizeof l->label, "%s", label);
    l->n = n;
    return l;
}

void recipe_deriv_rel(DerivLine *l, DerivRel rel, int a, int b, int c, double k)
{
    l->rel = rel, l->a = a, l->b = b, l->c = c, l->k = k;
}

// "attn (h0), row 2" / "scores (h0), cell [2, 3]"
void recipe_deriv_title(Derivation *d, const View *v, const PanelSpec *res, int row, int col)
{
    char a[16], b[16];
    snprintf(a, sizeof a, "%d", row), snprintf(b, sizeof b, "%d", col);
    const char *args[] = {res->title, a, b};
    i18n_fmt(d->title, sizeof d->title, v->lang, col < 0 ? "deriv.row" : "deriv.cell", 3, args);
}

const char *recipe_symbol(const Trace *tr, int s, Lang lang)
{
    (void)lang; // formulas are code: the same symbols in every language
    const StageRecipe *r = s >= 0 ? recipe_of(tr->stages[s].kind) : NULL;
    return r && r->symbol ? r->symbol(tr, s) : recipe_name_of(tr, s).sym;
}

const char *recipe_weight_plain(const Trace *tr, int s)
{
    const char *w = recipe_name_of(tr, s).wplain;
    return w ? w : "?";
}

const char *recipe_param_symbol(const Trace *tr, int s, bool bias)
{
    const StageName nm = recipe_name_of(tr, s);
    return (bias ? nm.bsym : nm.wsym) ? (bias ? nm.bsym : nm.wsym) : "?";
}

// "−1e9", "−∞": the fill as the lesson writes it
void recipe_fill_text(float f, char *buf, size_t n)
{
    if (isinf(f)) {
        snprintf(buf, n, f < 0 ? "−∞" : "∞");
        return;
    }
    // %g, with the exponent written as a lesson writes it: -1e+09 → −1e9, -3.5 → −3.5; a fill
    // beyond ±1e11 (float32's lowest, as transformers' GPT-2 fills) to one significant digit,
    // −3e38, so the cells that print it keep it within their width as they do −1e10
    char t[40];
    snprintf(t, sizeof t, fabsf(f) >= 1e11f ? "%.0e" : "%g", (double)f);
    char *e = strchr(t, 'e');
    if (e) {
        int ex = 0;
        sscanf(e + 1, "%d", &ex);
        snprintf(e, sizeof t - (size_t)(e - t), "e%d", ex);
    }
    snprintf(buf, n, "%s%s", t[0] == '-' ? "−" : "", t[0] == '-' ? t + 1 : t);
}

const float *recipe_key_padding_row(const Trace *tr, int b, int *n_keys)
{
    *n_keys = 0;
    if (tr->mask_kind != MASK_KEY_PADDING) return NULL;
    int mi = trace_find(tr, "mask");
    if (mi < 0) return NULL;
    const Tensor *m = &tr->stages[mi].t; // (B, Lq, Lk): row 0 of batch b
    if (b < 0 || b >= m->shape[0]) return NULL; // the view's batch (any lesson's, the lab's too)
    *n_keys = m->shape[2];
    return m->data + (size_t)b * (size_t)m->shape[1] * (size_t)m->shape[2];
}

bool recipe_key_is_padding(const Trace *tr, int b, int j)
{
    int n;
    const float *row = recipe_key_padding_row(tr, b, &n);
    return row && j >= 0 && j < n && row[j] == 0.0f; // j: a key axis of any panel (the lab sets padding on any lesson)
}

// ---- the table: each stage kind's recipe ---------------------------------------------

static const StageRecipe *const RECIPES[STAGE_KIND_COUNT] = {
    [STAGE_KIND_INPUT] = &RECIPE_INPUT,
    [STAGE_KIND_MASK] = &RECIPE_MASK,
    [STAGE_KIND_PROJECTION] = &RECIPE_PROJECTION,
    [STAGE_KIND_SPLIT] = &RECIPE_SPLIT,
    [STAGE_KIND_SCORES] = &RECIPE_SCORES,
    [STAGE_KIND_MASKED] = &RECIPE_MASKED,
    [STAGE_KIND_SOFTMAX] = &RECIPE_SOFTMAX,
    [STAGE_KIND_WEIGHTED_SUM] = &RECIPE_WEIGHTED_SUM,
    [STAGE_KIND_CONCAT] = &RECIPE_CONCAT,
    [STAGE_KIND_OUT_PROJ] = &RECIPE_OUT_PROJ,
    [STAGE_KIND_ADD] = &RECIPE_ADD,
    [STAGE_KIND_NORM] = &RECIPE_NORM,
    [STAGE_KIND_FFN_HIDDEN] = &RECIPE_FFN_HIDDEN,
    [STAGE_KIND_FFN_SUM] = &RECIPE_FFN_SUM,
    [STAGE_KIND_ROPE] = &RECIPE_ROPE,
    [STAGE_KIND_POS_BIAS] = &RECIPE_POS_BIAS,
    [STAGE_KIND_FLASH_STAT] = &RECIPE_FLASH_STAT,
    [STAGE_KIND_FLASH_OUT] = &RECIPE_FLASH_OUT,
    [STAGE_KIND_CACHE] = &RECIPE_CACHE,
    [STAGE_KIND_DECODE] = &RECIPE_DECODE,
    [STAGE_KIND_DECODE_SCORES] = &RECIPE_DECODE_SCORES,
    [STAGE_KIND_DECODE_ATTN] = &RECIPE_DECODE_ATTN,
    [STAGE_KIND_FLASH_P] = &RECIPE_FLASH_P,
    [STAGE_KIND_FLASH_ACC] = &RECIPE_FLASH_ACC,
    [STAGE_KIND_EMBED] = &RECIPE_EMBED,
    [STAGE_KIND_POS_EMBED] = &RECIPE_POS_EMBED,
    [STAGE_KIND_VOCAB_SOFTMAX] = &RECIPE_VOCAB_SOFTMAX,
    [STAGE_KIND_GRAD_TARGET] = &RECIPE_GRAD_TARGET,
    [STAGE_KIND_GRAD_LOSS] = &RECIPE_GRAD_LOSS,
    [STAGE_KIND_GRAD_LINEAR] = &RECIPE_GRAD_LINEAR,
    [STAGE_KIND_GRAD_WEIGHT] = &RECIPE_GRAD_WEIGHT,
    [STAGE_KIND_GRAD_ATTN] = &RECIPE_GRAD_ATTN,
    [STAGE_KIND_GRAD_JACOBIAN] = &RECIPE_GRAD_JACOBIAN,
    [STAGE_KIND_GRAD_SOFTMAX] = &RECIPE_GRAD_SOFTMAX,
    [STAGE_KIND_GRAD_QK] = &RECIPE_GRAD_QK,
    [STAGE_KIND_GRAD_PASS] = &RECIPE_GRAD_PASS,
    [STAGE_KIND_GRAD_PARAM] = &RECIPE_GRAD_PARAM,
    [STAGE_KIND_HEAD_NORM] = &RECIPE_HEAD_NORM,
    [STAGE_KIND_SOFTCAP] = &RECIPE_SOFTCAP,
    [STAGE_KIND_GATE] = &RECIPE_GATE,
    [STAGE_KIND_GATED] = &RECIPE_GATED,
    [STAGE_KIND_MLA_KEY] = &RECIPE_MLA_KEY,
    [STAGE_KIND_MLA_CACHE] = &RECIPE_MLA_CACHE,
    [STAGE_KIND_MLA_ABSORB] = &RECIPE_MLA_ABSORB,
    [STAGE_KIND_MLA_SCORES] = &RECIPE_MLA_SCORES,
    [STAGE_KIND_INDEX_SCORES] = &RECIPE_INDEX_SCORES,
    [STAGE_KIND_TOPK_MASK] = &RECIPE_TOPK_MASK,
    [STAGE_KIND_LIN_L2] = &RECIPE_LIN_L2,
    [STAGE_KIND_LIN_GATE] = &RECIPE_LIN_GATE,
    [STAGE_KIND_LIN_STATE] = &RECIPE_LIN_STATE,
    [STAGE_KIND_LIN_OUT] = &RECIPE_LIN_OUT,
    [STAGE_KIND_LIN_ATTN] = &RECIPE_LIN_ATTN,
    [STAGE_KIND_LIN_U] = &RECIPE_LIN_U,
};

const StageRecipe *recipe_of(StageKind k)
{
    assert((unsigned)k < STAGE_KIND_COUNT && RECIPES[k]); // every kind has its row (test_scene checks)
    return (unsigned)k < STAGE_KIND_COUNT && RECIPES[k] ? RECIPES[k] : &RECIPE_INPUT;
}
