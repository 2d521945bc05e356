// scene.c — the stage recipes (see scene.h).
//
// One table of stage names (the symbols formulas use and the parameters a stage
// applies), one table of recipes (per StageKind: panels, formula, animation).
// Colour scales are grouped by the tensor a panel shows: a view of a tensor
// (its heads, its concatenation, its masked copy) is coloured on the scale of
// the tensor itself, over the whole batch slice, so one value has one colour.
#include "scene.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "edit.h"
#include "i18n.h"
#include "trace_ops.h"

// ---- the one table of stage names ---------------------------------------------------

// How stage s and its parameters are written (stages.h's table).
typedef struct StageName {
    const char *sym;           // its symbol in formulas
    const char *weight, *wsym; // the parameter it applies (lesson "weights" key) and its symbol (as shown: Wᵀ)
    const char *bias, *bsym;
    const char *wplain;        // the weight's symbol as PyTorch stores it, (out, in): W_Q
} StageName;

static StageName stage_name_of(const Trace *tr, int s)
{
    if (s < 0 || s >= tr->n) return (StageName){"?", "weight", "W", "bias", "b", "W"};
    const StageInfo *in = &STAGE_INFO[tr->stages[s].id];
    const WeightInfo *w = in->weight != WEIGHT_NONE ? &WEIGHT_INFO[in->weight] : NULL;
    const WeightInfo *b = in->bias != WEIGHT_NONE ? &WEIGHT_INFO[in->bias] : NULL;
    return (StageName){in->symbol, w ? w->name : NULL, w ? w->symbol : NULL, b ? b->name : NULL,
                       b ? b->symbol : NULL, w ? w->plain : NULL};
}

const char *scene_symbol(const Trace *tr, int s, Lang lang)
{
    (void)lang; // formulas are code: the same symbols in every language
    return stage_name_of(tr, s).sym;
}

const char *scene_weight_plain(const Trace *tr, int s)
{
    const char *w = stage_name_of(tr, s).wplain;
    return w ? w : "?";
}

const char *scene_param_symbol(const Trace *tr, int s, bool bias)
{
    const StageName nm = stage_name_of(tr, s);
    return (bias ? nm.bsym : nm.wsym) ? (bias ? nm.bsym : nm.wsym) : "?";
}

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

static bool has_bias(const Stage *st) { return st->bias && tensor_present(st->bias); }

// The masked copy of the scores is just "scores" in a lesson without a mask.
static bool trace_has_mask(const Trace *tr) { return tr->mask_kind != 0; }

// The stage a panel of stage s is named after: masked_scores without a mask is the
// scores where it is read (softmax), but keeps its name as the masking stage's result.
static const char *display_name(const Trace *tr, int s, bool result)
{
    const Stage *st = &tr->stages[s];
    return st->kind == STAGE_KIND_MASKED && !trace_has_mask(tr) && !result ? "scores" : st->name;
}

// ---- panels ---------------------------------------------------------------------------

static PanelSpec *new_panel(Layout *L, const char *op, Reads reads)
{
    if (L->n_panels >= LAYOUT_MAX_PANELS) return NULL;
    PanelSpec *p = &L->spec[L->n_panels++];
    memset(p, 0, sizeof *p);
    snprintf(p->op, sizeof p->op, "%s", op);
    p->decimals = -1;
    p->reads = reads;
    p->head = -1;
    return p;
}

// A slice of stage `stage` (batch v->batch, head `head`).
static PanelSpec *add_stage(Layout *L, const Trace *tr, const View *v, int stage, int head, const char *op,
                            Reads reads)
{
    if (stage < 0 || stage >= tr->n) return NULL;
    const Stage *st = &tr->stages[stage];
    if (!tensor_present(&st->t)) return NULL;
    PanelSpec *p = new_panel(L, op, reads);
    if (!p) return NULL;
    // a shared K/V head (GQA / MQA): the one query head `head` reads
    int kv = trace_kv_head(tr, &st->t, head);
    bool shared = kv != head || (st->t.rank == 4 && st->t.shape[1] < tr->n_heads);
    panel_slice(p, &st->t, v->batch, kv);
    p->stage = stage;
    if (shared) p->kv_group = tr->n_heads / st->t.shape[1];
    snprintf(p->source, sizeof p->source, "%s", st->name);
    bool key_cols = st->kind == STAGE_KIND_SCORES || st->kind == STAGE_KIND_MASKED ||
                    st->kind == STAGE_KIND_SOFTMAX || st->kind == STAGE_KIND_MASK || st->kind == STAGE_KIND_POS_BIAS;
    p->row_axis = st->key_rows ? AXIS_KEY : AXIS_QUERY;
    p->col_axis = key_cols ? AXIS_KEY : AXIS_INDEX;
    if (st->kind == STAGE_KIND_MASK) p->mask = p->data; // 0 cells get the masked look
    int mi = trace_find(tr, "mask");
    if (st->kind == STAGE_KIND_MASKED && mi >= 0) {
        PanelSpec tmp;
        panel_slice(&tmp, &tr->stages[mi].t, v->batch, 0);
        p->mask = tmp.data;
    }
    char key[48];
    snprintf(key, sizeof key, "name.%s", display_name(tr, stage, stage == v->stage));
    snprintf(p->title, sizeof p->title, "%s", i18n_get(v->lang, key));
    if (p->head >= 0) {
        size_t len = strlen(p->title);
        snprintf(p->title + len, sizeof p->title - len, shared ? " · kv%d" : " · h%d", p->head % 1000);
    }
    return p;
}

// The weight (shown transposed, as in x·Wᵀ) or the bias of stage `stage`;
// γ and β of a LayerNorm. Vectors are one row.
static PanelSpec *add_param(Layout *L, const Trace *tr, const View *v, int stage, bool bias, const char *op,
                            Reads reads)
{
    const Stage *st = &tr->stages[stage];
    const Tensor *t = bias ? st->bias : st->weight;
    if (!t || !tensor_present(t) || t->rank < 1 || t->rank > 2) return NULL;
    PanelSpec *p = new_panel(L, op, reads);
    if (!p) return NULL;
    panel_slice(p, t, 0, 0);
    p->stage = stage;
    p->is_weight = true;
    p->is_bias = bias;
    p->vector = t->rank == 1;
    const StageName nm = stage_name_of(tr, stage);
    snprintf(p->source, sizeof p->source, "%s", bias ? nm.bias : nm.weight);
    snprintf(p->title, sizeof p->title, "%s", bias ? nm.bsym : nm.wsym);
    p->row_axis = p->vector ? AXIS_NONE : AXIS_INDEX;
    p->col_axis = AXIS_INDEX;
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
static void mark_addend(PanelSpec *p, bool yes)
{
    if (p) p->addend = yes;
}

static void panels_self(Layout *L, const Trace *tr, const View *v)
{
    add_stage(L, tr, v, v->stage, v->head, "", READS_NONE);
}

// x·Wᵀ + b = y (projections, W_O, the FFN's first layer)
static void panels_linear(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    add_param(L, tr, v, v->stage, false, "·", READS_COL);
    if (has_bias(st)) mark_addend(add_param(L, tr, v, v->stage, true, "+", READS_COL), st->kind != STAGE_KIND_FFN_HIDDEN);
    add_stage(L, tr, v, v->stage, v->head, st->kind == STAGE_KIND_FFN_HIDDEN ? "relu→" : "=", READS_NONE);
}

// h·W₂ᵀ + b₂ + z = f
static void panels_ffn_sum(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    add_param(L, tr, v, v->stage, false, "·", READS_COL);
    if (has_bias(st)) mark_addend(add_param(L, tr, v, v->stage, true, "+", READS_COL), true);
    mark_addend(add_stage(L, tr, v, st->operands[1], v->head, "+", READS_CELL), true);
    add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

// output + x = s
static void panels_add(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    mark_addend(add_stage(L, tr, v, st->operands[0], v->head, "", READS_CELL), true);
    mark_addend(add_stage(L, tr, v, st->operands[1], v->head, "+", READS_CELL), true);
    add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

// s → LayerNorm(s)·γ + β = z
static void panels_norm(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    char op[16]; // "LN(s)·": the normalised sum, times γ
    snprintf(op, sizeof op, "LN(%s)·", scene_symbol(tr, st->operands[0], v->lang));
    add_param(L, tr, v, v->stage, false, op, READS_COL);
    mark_addend(add_param(L, tr, v, v->stage, true, "+", READS_COL), true);
    add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

// The per-head panels of split / concat: at most LAYOUT_MAX_HEAD_PANELS heads, the
// run of them (aligned to a multiple of that) that holds the selected head.
// The heads of a per-head stage: n_heads, or n_kv_heads for grouped K and V.
static int heads_of(const Trace *tr, int stage)
{
    const Tensor *t = &tr->stages[stage].t;
    int H = tr->n_heads > 0 ? tr->n_heads : 1;
    return t->rank == 4 && t->shape[1] < H && t->shape[1] > 0 ? t->shape[1] : H;
}

static void add_head_panels(Layout *L, const Trace *tr, const View *v, int stage, const char *op_first, Reads reads)
{
    int H = heads_of(tr, stage), nh = imin(H, LAYOUT_MAX_HEAD_PANELS), Hq = tr->n_heads > 0 ? tr->n_heads : 1;
    bool shared = H < Hq;
    int g = Hq / H, sel = trace_kv_head(tr, &tr->stages[stage].t, v->head);
    int k0 = imin(sel / nh * nh, H - nh);
    for (int k = k0; k < k0 + nh; k++) {
        // add_stage maps a query head to its K/V head: ask for the first query head of group k
        PanelSpec *q = add_stage(L, tr, v, stage, shared ? k * g : k, k == k0 ? op_first : "", reads);
        if (!q) continue;
        char hb[16], lo[16], hi[16];
        snprintf(hb, sizeof hb, "%d", k), snprintf(lo, sizeof lo, "%d", k * g), snprintf(hi, sizeof hi, "%d", k * g + g - 1);
        const char *args[] = {hb, lo, hi};
        // a shared head says which query heads read it
        i18n_fmt(q->title, sizeof q->title, v->lang, !shared ? "name.head" : g == 1 ? "name.kv_head_one" : "name.kv_head",
                 shared ? 3 : 1, args);
    }
}

static void panels_split(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    int H = heads_of(tr, v->stage);
    PanelSpec *p = add_stage(L, tr, v, st->operands[0], v->head, "", READS_HEAD_SRC);
    if (p) {
        p->head_blocks = H;
        p->block_cols = p->cols / H;
        if (H < tr->n_heads) p->kv_group = tr->n_heads / H;
    }
    add_head_panels(L, tr, v, v->stage, "→", READS_NONE);
}

static void panels_concat(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    int H = tr->n_heads > 0 ? tr->n_heads : 1;
    add_head_panels(L, tr, v, st->operands[0], "", READS_HEAD_DST);
    PanelSpec *p = add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
    if (p) {
        p->head_blocks = H;
        p->block_cols = p->cols / H;
    }
}

// Q·Kᵀ / scale = scores: the divisor is written on the operator when it is not 1
static void panels_scores(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    PanelSpec *k = add_stage(L, tr, v, st->operands[1], v->head, "·", READS_COL);
    if (k) {
        panel_transpose(k);
        size_t len = strlen(k->title);
        // "K · h0" → "Kᵀ · h0"
        const char *dot = strstr(k->title, " · ");
        if (dot && len + 4 < sizeof k->title) {
            size_t at = (size_t)(dot - k->title);
            memmove(k->title + at + 3, k->title + at, len - at + 1);
            memcpy(k->title + at, "ᵀ", 3);
        } else if (len + 4 < sizeof k->title) {
            memcpy(k->title + len, "ᵀ", 4);
        }
    }
    char op[24];
    bool bias = st->operands[2] >= 0; // ALiBi: + position_bias after the scale
    if (tr->scale == 1.0f)
        snprintf(op, sizeof op, bias ? "+" : "=");
    else
        snprintf(op, sizeof op, bias ? "/%.3g +" : "/%.3g =", (double)tr->scale);
    if (bias) {
        mark_addend(add_stage(L, tr, v, st->operands[2], v->head, op, READS_CELL), true);
        snprintf(op, sizeof op, "=");
    }
    add_stage(L, tr, v, v->stage, v->head, op, READS_NONE);
}

// masked scores → m (or l) per key block: the tiles of each row, visited in order
static void panels_flash_stat(Layout *L, const Trace *tr, const View *v)
{
    PanelSpec *s = add_stage(L, tr, v, trace_find(tr, "masked_scores"), v->head, "", READS_TILE);
    if (s) s->tile_rows = tr->flash_block_q, s->tile_cols = tr->flash_block_k;
    PanelSpec *p = add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
    // m = −∞ while every key so far is masked with −∞: drawn as masked, not as a colour
    if (p) p->neg_inf_masked = true;
}

// flash_out = head_out (operand 0), decode_output = output (operand 2): the same numbers
static void panels_equal(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add_stage(L, tr, v, st->kind == STAGE_KIND_FLASH_OUT ? st->operands[0] : st->operands[2], v->head, "", READS_CELL);
    add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

// Q·cos + rotate(Q)·sin = Q_rot: each position's row turned pair by pair
static void panels_rope(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
}

// scores.masked_fill(mask == 0, fill): the score, the mask, the result
static void panels_masked(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add_stage(L, tr, v, st->operands[0], v->head, "", READS_CELL);
    if (st->operands[1] >= 0) {
        add_stage(L, tr, v, st->operands[1], v->head, "", READS_CELL);
        add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
    } else {
        add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
    }
}

static void panels_softmax(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    PanelSpec *p = add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
    if (p) p->row_sums = true;
}

static void panels_wsum(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    add_stage(L, tr, v, st->operands[1], v->head, "·", READS_COL);
    add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

// ---- formulas -------------------------------------------------------------------------

static const char *op_sym(const Trace *tr, int s, int k)
{
    return s >= 0 && s < tr->n ? stage_name_of(tr, tr->stages[s].operands[k]).sym : "?";
}

static void formula_named(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    char key[48];
    snprintf(key, sizeof key, "formula.%s", tr->stages[s].name);
    const char *fx = i18n_lookup(LANG_EN, key); // formulas are code: the same in every language
    (void)lang;
    snprintf(out, n, "%s", fx ? fx : stage_name_of(tr, s).sym);
}

static void formula_linear(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Stage *st = &tr->stages[s];
    const StageName nm = stage_name_of(tr, s);
    char b[32] = "";
    if (has_bias(st)) snprintf(b, sizeof b, " + %s", nm.bsym);
    if (st->kind == STAGE_KIND_FFN_HIDDEN)
        snprintf(out, n, "%s = relu(%s·%s%s)", nm.sym, op_sym(tr, s, 0), nm.wsym, b);
    else if (st->kind == STAGE_KIND_FFN_SUM)
        snprintf(out, n, "%s = %s·%s%s + %s", nm.sym, op_sym(tr, s, 0), nm.wsym, b, op_sym(tr, s, 1));
    else
        snprintf(out, n, "%s = %s·%s%s", nm.sym, op_sym(tr, s, 0), nm.wsym, b);
}

static void formula_add(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s = %s + %s", stage_name_of(tr, s).sym, op_sym(tr, s, 0), op_sym(tr, s, 1));
}

static void formula_norm(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *x = op_sym(tr, s, 0);
    snprintf(out, n, "%s = LayerNorm(%s) = (%s − mean) / √(var + ε) · γ + β", stage_name_of(tr, s).sym, x, x);
}

static void formula_split(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Tensor *t = &tr->stages[s].t; // (B, H, L, d)
    snprintf(out, n, "%s = %s.view(%d, %d, %d, %d).transpose(1, 2)", stage_name_of(tr, s).sym, op_sym(tr, s, 0),
             t->shape[0], t->shape[2], t->shape[1], t->shape[3]);
}

static void formula_concat(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Tensor *t = &tr->stages[s].t; // (B, L, H·d)
    snprintf(out, n, "%s = %s.transpose(1, 2).reshape(%d, %d, %d)", stage_name_of(tr, s).sym, op_sym(tr, s, 0),
             t->shape[0], t->shape[1], t->shape[2]);
}

static bool scale_is_sqrt_dk(const Trace *tr)
{
    float sq = sqrtf((float)tr->d_k);
    return fabsf(tr->scale - sq) < 1e-5f * sq;
}

static void formula_scores(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    if (s < 0 || s >= tr->n) {
        if (n) out[0] = '\0';
        return;
    }
    const char *r = stage_name_of(tr, s).sym, *q = op_sym(tr, s, 0), *k = op_sym(tr, s, 1);
    char bias[40] = "";
    if (tr->stages[s].operands[2] >= 0) snprintf(bias, sizeof bias, " + %s", op_sym(tr, s, 2));
    if (tr->scale == 1.0f)
        snprintf(out, n, "%s = %s·%sᵀ%s", r, q, k, bias);
    else if (scale_is_sqrt_dk(tr))
        snprintf(out, n, "%s = %s·%sᵀ / √d_k%s", r, q, k, bias);
    else
        snprintf(out, n, "%s = %s·%sᵀ / %g%s", r, q, k, (double)tr->scale, bias);
}

static void formula_rope(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *r = stage_name_of(tr, s).sym, *x = op_sym(tr, s, 0);
    snprintf(out, n, "%s = %s·cos + %s(%s)·sin", r, x,
             tr->rope == ROPE_HALF ? "rotate_half" : "rotate_every_two", x);
}

static void formula_flash(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Stage *st = &tr->stages[s];
    if (st->kind == STAGE_KIND_FLASH_OUT)
        snprintf(out, n, "flash_out = acc / l = head_out");
    else if (!strcmp(st->name, "flash_max"))
        snprintf(out, n, "m = max(m_old, rowmax(S_tile))");
    else
        snprintf(out, n, "l = l_old·e^(m_old − m) + Σ e^(S_tile − m)");
}

static void formula_decode(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Stage *st = &tr->stages[s];
    if (st->kind == STAGE_KIND_DECODE) {
        // the keys step t reads: all cached ones, or the last W of them (sliding window)
        const char *span = tr->mask_kind == MASK_SLIDING ? "t−W+1:t+1" : ":t+1";
        snprintf(out, n, "decode_output[:, t] = softmax(q_t·cache_k[%s]ᵀ / s%s)·cache_v[%s]·W_Oᵀ", span,
                 tr->alibi ? " + bias_t" : "", span);
    } else
        snprintf(out, n, "%s = cat(%s, %s_t) for t = 0 … %d", st->name, st->name, st->name[6] == 'k' ? "k" : "v",
                 st->t.shape[2] - 1);
}

static void formula_pos_bias(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s[h, i, j] = −m_h·(i − j)", stage_name_of(tr, s).sym);
}

// "−1e9", "−∞": the fill as the lesson writes it
void scene_fill_text(float f, char *buf, size_t n)
{
    if (isinf(f)) {
        snprintf(buf, n, f < 0 ? "−∞" : "∞");
        return;
    }
    // %g, with the exponent written as a lesson writes it: -1e+09 → −1e9, -3.5 → −3.5
    char t[40];
    snprintf(t, sizeof t, "%g", (double)f);
    char *e = strchr(t, 'e');
    if (e) {
        int ex = 0;
        sscanf(e + 1, "%d", &ex);
        snprintf(e, sizeof t - (size_t)(e - t), "e%d", ex);
    }
    snprintf(buf, n, "%s%s", t[0] == '-' ? "−" : "", t[0] == '-' ? t + 1 : t);
}

static void formula_masked(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *r = stage_name_of(tr, s).sym, *x = op_sym(tr, s, 0);
    if (tr->stages[s].operands[1] < 0) {
        snprintf(out, n, "%s = %s", r, x);
        return;
    }
    char f[32];
    scene_fill_text(tr->mask_fill, f, sizeof f);
    snprintf(out, n, "%s = %s.masked_fill(mask == 0, %s)", r, x, f);
}

static void formula_softmax(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *x = stage_name_of(tr, trace_find(tr, display_name(tr, tr->stages[s].operands[0], false))).sym;
    snprintf(out, n, "%s = softmax(%s, dim=−1)", stage_name_of(tr, s).sym, x);
}

static void formula_wsum(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s = %s·%s", stage_name_of(tr, s).sym, op_sym(tr, s, 0), op_sym(tr, s, 1));
}

// ---- the recipe table -----------------------------------------------------------------

// What each kind asks in the study mode (quiz.h): the shape where a stage changes it,
// a value where a cell is computed, the mask's cells, the softmax's argmax and row sum,
// the head a concat column comes from.
#define Q(k) QUIZ_BIT(QUIZ_##k)
static const StageRecipe RECIPES[STAGE_KIND_COUNT] = {
    [STAGE_KIND_INPUT] = {panels_self, formula_named, ANIM_FADE, TIP_NONE, 0},
    [STAGE_KIND_MASK] = {panels_self, formula_named, ANIM_FADE, TIP_NONE, 0},
    [STAGE_KIND_PROJECTION] = {panels_linear, formula_linear, ANIM_ROWS, TIP_LINEAR, Q(SHAPE) | Q(VALUE)},
    [STAGE_KIND_SPLIT] = {panels_split, formula_split, ANIM_SPLIT, TIP_COPY_SPLIT, Q(SHAPE)},
    [STAGE_KIND_SCORES] = {panels_scores, formula_scores, ANIM_CELLS, TIP_DOT, Q(SHAPE) | Q(VALUE)},
    [STAGE_KIND_MASKED] = {panels_masked, formula_masked, ANIM_MASK, TIP_MASK_FILL, Q(MASKED)},
    [STAGE_KIND_SOFTMAX] = {panels_softmax, formula_softmax, ANIM_SOFTMAX, TIP_SOFTMAX,
                            Q(MASKED) | Q(ARGMAX) | Q(SUM) | Q(VALUE)},
    [STAGE_KIND_WEIGHTED_SUM] = {panels_wsum, formula_wsum, ANIM_ROWS, TIP_WEIGHTED_SUM, Q(SHAPE) | Q(VALUE)},
    [STAGE_KIND_CONCAT] = {panels_concat, formula_concat, ANIM_CONCAT, TIP_COPY_CONCAT, Q(SOURCE) | Q(SHAPE)},
    [STAGE_KIND_OUT_PROJ] = {panels_linear, formula_linear, ANIM_ROWS, TIP_LINEAR, Q(VALUE)},
    [STAGE_KIND_ADD] = {panels_add, formula_add, ANIM_ROWS, TIP_ADD, Q(VALUE)},
    [STAGE_KIND_NORM] = {panels_norm, formula_norm, ANIM_ROWS, TIP_NORM, Q(VALUE)},
    [STAGE_KIND_FFN_HIDDEN] = {panels_linear, formula_linear, ANIM_ROWS, TIP_LINEAR_RELU, Q(SHAPE) | Q(VALUE)},
    [STAGE_KIND_FFN_SUM] = {panels_ffn_sum, formula_linear, ANIM_ROWS, TIP_LINEAR_RESIDUAL, Q(VALUE)},
    [STAGE_KIND_ROPE] = {panels_rope, formula_rope, ANIM_ROWS, TIP_ROPE, Q(VALUE)},
    [STAGE_KIND_FLASH_STAT] = {panels_flash_stat, formula_flash, ANIM_CELLS, TIP_FLASH, 0},
    [STAGE_KIND_FLASH_OUT] = {panels_equal, formula_flash, ANIM_ROWS, TIP_EQUAL, Q(VALUE)},
    [STAGE_KIND_CACHE] = {panels_self, formula_decode, ANIM_ROWS, TIP_CACHE, 0},
    [STAGE_KIND_DECODE] = {panels_equal, formula_decode, ANIM_ROWS, TIP_EQUAL, Q(VALUE)},
    [STAGE_KIND_POS_BIAS] = {panels_self, formula_pos_bias, ANIM_FADE, TIP_POS_BIAS, 0}, // (1, H, Lq, Lk): no batch to ask about
};
#undef Q

const StageRecipe *scene_recipe(StageKind k)
{
    return (unsigned)k < STAGE_KIND_COUNT && RECIPES[k].panels ? &RECIPES[k] : &RECIPES[STAGE_KIND_INPUT];
}

void scene_formula(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    if (n) out[0] = '\0';
    if (s < 0 || s >= tr->n) return;
    scene_recipe(tr->stages[s].kind)->formula(tr, s, lang, out, n);
}

// The numbers a formula uses, as a note after it.
static void formula_note(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    const Stage *st = &tr->stages[s];
    char a[32], b[32];
    if (n) out[0] = '\0';
    if (st->kind == STAGE_KIND_SCORES) {
        if (tr->scale == 1.0f) {
            i18n_fmt(out, n, lang, "fx.scale_one", 0, NULL);
        } else if (scale_is_sqrt_dk(tr)) {
            snprintf(a, sizeof a, "%d", tr->d_k);
            snprintf(b, sizeof b, "%.3f", (double)tr->scale);
            const char *args[] = {a, b};
            i18n_fmt(out, n, lang, "fx.scale_sqrt", 2, args);
        } else {
            snprintf(a, sizeof a, "%g", (double)tr->scale);
            const char *args[] = {a};
            i18n_fmt(out, n, lang, "fx.scale_custom", 1, args);
        }
    } else if (st->kind == STAGE_KIND_SPLIT && st->t.shape[1] < tr->n_heads && st->t.shape[1] > 0) {
        // GQA / MQA: how many query heads share a K/V head, and what the K/V cache saves
        char c[16], d[16];
        snprintf(a, sizeof a, "%d", st->t.shape[1]), snprintf(b, sizeof b, "%d", tr->n_heads);
        snprintf(c, sizeof c, "%d", tr->n_heads / st->t.shape[1]);
        snprintf(d, sizeof d, "%d", 100 - 100 * st->t.shape[1] / tr->n_heads);
        const char *args[] = {a, b, c, d};
        i18n_fmt(out, n, lang, "fx.gqa", 4, args);
    } else if (st->kind == STAGE_KIND_FLASH_STAT || st->kind == STAGE_KIND_FLASH_OUT) {
        // what each way writes to memory: the Lq×Lk matrix, or the tiles' outputs and m, l
        char c[24], d[24], e[24], f[24];
        long long full = (long long)tr->batch * tr->n_heads * tr->len_q * tr->len_k;
        long long tiled = (long long)tr->batch * tr->n_heads * tr->len_q * (tr->d_v + 2);
        snprintf(a, sizeof a, "%d", tr->flash_block_q), snprintf(b, sizeof b, "%d", tr->flash_block_k);
        snprintf(c, sizeof c, "%d", (tr->len_q + tr->flash_block_q - 1) / imax(tr->flash_block_q, 1) *
                                        ((tr->len_k + tr->flash_block_k - 1) / imax(tr->flash_block_k, 1)));
        snprintf(d, sizeof d, "%lld", full), snprintf(e, sizeof e, "%lld", tiled);
        snprintf(f, sizeof f, "%d", tr->len_k);
        const char *args[] = {a, b, c, d, e, f};
        i18n_fmt(out, n, lang, st->kind == STAGE_KIND_FLASH_OUT ? "fx.flash_memory" : "fx.flash_tiles", 6, args);
    } else if (st->kind == STAGE_KIND_CACHE) {
        snprintf(a, sizeof a, "%d", st->t.shape[1]), snprintf(b, sizeof b, "%d", tr->n_heads);
        const char *args[] = {a, b};
        i18n_fmt(out, n, lang, "fx.cache", 2, args);
    } else if (st->kind == STAGE_KIND_ROPE) {
        // which columns turn together, and how fast: "(0,2) 1, (1,3) 0.01"
        char t[32], pairs[96] = "";
        snprintf(t, sizeof t, "%g", (double)tr->rope_theta);
        int d = st->t.shape[3], half = d / 2;
        size_t len = 0;
        for (int p = 0; p < half && p < 3 && len + 32 < sizeof pairs; p++)
            len += (size_t)snprintf(pairs + len, sizeof pairs - len, "%s(%d,%d) %.3g", p ? ", " : "",
                                    tr->rope == ROPE_HALF ? p : 2 * p, tr->rope == ROPE_HALF ? p + half : 2 * p + 1,
                                    (double)attn_rope_inv_freq(p, d, tr->rope_theta));
        if (half > 3) snprintf(pairs + len, sizeof pairs - len, ", …");
        const char *args[] = {t, pairs};
        i18n_fmt(out, n, lang, "fx.rope", 2, args);
    } else if (st->kind == STAGE_KIND_POS_BIAS) {
        char m[160] = "";
        size_t len = 0;
        for (int h = 0; h < tr->n_heads && h < 8 && len + 16 < sizeof m; h++)
            len += (size_t)snprintf(m + len, sizeof m - len, "%s%.4g", h ? ", " : "", attn_alibi_slope(h, tr->n_heads));
        if (tr->n_heads > 8) snprintf(m + len, sizeof m - len, ", …");
        const char *args[] = {m};
        i18n_fmt(out, n, lang, "fx.alibi", 1, args);
    } else if (st->kind == STAGE_KIND_MASKED && st->operands[1] < 0) {
        i18n_fmt(out, n, lang, "fx.no_mask", 0, NULL);
    } else if (st->kind == STAGE_KIND_NORM) {
        snprintf(a, sizeof a, "%g", (double)tr->norm_eps);
        const char *args[] = {a};
        i18n_fmt(out, n, lang, "fx.eps", 1, args);
    }
}

// ---- colour scales ----------------------------------------------------------------------

// The tensor a panel's colours are measured on: a stage's own tensor, or for a
// view of another tensor (split heads, concat, masked scores) that tensor.
static int scale_root(const Trace *tr, int s)
{
    const Stage *st = &tr->stages[s];
    bool view = st->kind == STAGE_KIND_SPLIT || st->kind == STAGE_KIND_CONCAT || st->kind == STAGE_KIND_MASKED;
    return view && st->operands[0] >= 0 ? st->operands[0] : s;
}

// The largest finite |value| (and smallest positive value) of t's batch-b slice (all heads).
static void slice_range(const Tensor *t, int b, bool whole, float *absmax, float *minpos)
{
    size_t per = t->rank >= 3 && !whole ? t->size / (size_t)t->shape[0] : t->size;
    size_t off = t->rank >= 3 && !whole ? (size_t)imin(imax(b, 0), t->shape[0] - 1) * per : 0;
    float m = 0.0f, mp = INFINITY;
    for (size_t i = 0; i < per; i++) {
        float x = t->data[off + i];
        if (!isfinite(x)) continue;
        float a = fabsf(x);
        if (a > m) m = a;
        if (x > 0.0f && x < mp) mp = x;
    }
    *absmax = m, *minpos = mp;
}

bool scene_log_probs(const Trace *tr, const View *v)
{
    if (v->prob_scale == PROB_SCALE_LINEAR) return false;
    if (v->prob_scale == PROB_SCALE_LOG) return true;
    return tr->len_k > 32; // auto: long rows of near-uniform weights show structure on a log scale
}

// Is name one of the comma-separated names of a legend label ("b_Q, Q" has "Q")?
static bool label_has(const char *label, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = label;;) {
        if (!strncmp(p, name, n) && (p[n] == '\0' || p[n] == ',')) return true;
        if (!(p = strstr(p, ", "))) return false;
        p += 2;
    }
}

static bool st_is_norm(const Trace *tr, int s) { return tr->stages[s].kind == STAGE_KIND_NORM; }

static void build_groups(Layout *L, const Trace *tr, const View *v)
{
    // each panel's tensor (a view's root; an addend takes the result's) and its range
    // over the whole tensor, every batch: switching batch does not change what a colour means
    const void *key[LAYOUT_MAX_PANELS];
    float amax[LAYOUT_MAX_PANELS], mpos[LAYOUT_MAX_PANELS];
    int kind_of[LAYOUT_MAX_PANELS];
    for (int i = 0; i < L->n_panels; i++) {
        const PanelSpec *p = &L->spec[i];
        const Stage *st = &tr->stages[p->stage];
        PanelSpec *pw = &L->spec[i];
        if (p->is_weight) { // parameters are small: measured here
            key[i] = p->is_bias ? st->bias : st->weight;
            slice_range(key[i], 0, true, &amax[i], &mpos[i]);
            kind_of[i] = STAGE_KIND_INPUT;
            pw->num_max = amax[i];
        } else {            // stage tensors: measured once by the core, per batch
            const Stage *rs = &tr->stages[scale_root(tr, p->stage)];
            key[i] = &rs->t;
            int B = rs->t.rank >= 3 ? imin(rs->t.shape[0], TRACE_MAX_BATCH) : 1;
            kind_of[i] = (int)rs->kind;
            if (!tr->has_stats) { // a trace straight from attn_forward: measured here, every frame
                slice_range(&rs->t, 0, true, &amax[i], &mpos[i]);
                float bm, bp;
                slice_range(&rs->t, v->batch, false, &bm, &bp);
                pw->num_max = bm;
                continue;
            }
            amax[i] = 0.0f, mpos[i] = INFINITY;
            for (int b = 0; b < B; b++) amax[i] = fmaxf(amax[i], rs->absmax[b]), mpos[i] = fminf(mpos[i], rs->minpos[b]);
            pw->num_max = rs->absmax[imin(imax(v->batch, 0), B - 1)];
        }
    }
    int r = L->result_panel;
    for (int i = 0; i < L->n_panels; i++)
        if (L->spec[i].addend && r >= 0) key[i] = key[r];
    L->n_groups = 0;
    const void *gkey[LAYOUT_MAX_PANELS];
    for (int i = 0; i < L->n_panels; i++) {
        PanelSpec *p = &L->spec[i];
        int g = 0;
        while (g < L->n_groups && gkey[g] != key[i]) g++;
        // a panel's base name (its title without the head) joins the group's label
        char base[64];
        if (p->is_weight) {
            snprintf(base, sizeof base, "%s", p->title);
        } else {
            char k[48];
            snprintf(k, sizeof k, "name.%s", display_name(tr, p->stage, p->result));
            snprintf(base, sizeof base, "%s", i18n_get(v->lang, k));
        }
        if (g == L->n_groups) {
            gkey[g] = key[i];
            ScaleGroup *G = &L->group[L->n_groups++];
            memset(G, 0, sizeof *G);
            snprintf(G->label, sizeof G->label, "%s", base);
            G->scale.palette = v->palette;
            // its range covers every panel coloured with it; a result the study mode
            // hides does not count (its range would tell of its values) unless it is alone
            float m = 0.0f, mp = INFINITY;
            int kind = kind_of[i];
            bool shown = false;
            for (int j = 0; j < L->n_panels; j++) shown |= key[j] == key[i] && !(v->hide_result && L->spec[j].result);
            for (int j = 0; j < L->n_panels; j++)
                if (key[j] == key[i] && (!shown || !(v->hide_result && L->spec[j].result)))
                    m = fmaxf(m, amax[j]), mp = fminf(mp, mpos[j]);
            if (v->delta) { // differences: one diverging scale around 0 per tensor
                float a = m > 0.0f ? m : 1.0f;
                G->scale.lo = -a, G->scale.hi = a;
                char d[sizeof G->label];
                snprintf(d, sizeof d, "Δ %s", G->label);
                snprintf(G->label, sizeof G->label, "%s", d);
            } else if (kind == STAGE_KIND_MASK) {
                G->mask01 = true;
                G->scale.sequential = true;
                G->scale.lo = 0.0f, G->scale.hi = 1.0f;
            } else if (kind == STAGE_KIND_SOFTMAX) {
                G->scale.sequential = true;
                G->scale.hi = 1.0f;
                G->scale.log = scene_log_probs(tr, v);
                if (G->scale.log) {
                    float lo = isfinite(mp) ? powf(10.0f, floorf(log10f(mp))) : 1e-3f;
                    G->scale.lo = fminf(fmaxf(lo, 1e-6f), 0.1f);
                } else {
                    G->scale.lo = 0.0f;
                }
            } else if (p->is_weight && !p->is_bias && st_is_norm(tr, p->stage)) {
                // γ scales each feature: 1 (no change) is white, deviations from it coloured
                float a = 0.0f;
                const Tensor *gt = key[i];
                for (size_t k = 0; k < gt->size; k++)
                    if (isfinite(gt->data[k])) a = fmaxf(a, fabsf(gt->data[k] - 1.0f));
                if (!(a > 0.0f)) a = 1.0f;
                G->scale.mid = 1.0f, G->scale.lo = 1.0f - a, G->scale.hi = 1.0f + a;
            } else {
                float a = m > 0.0f ? m : 1.0f;
                G->scale.lo = -a, G->scale.hi = a;
            }
        } else if (!label_has(L->group[g].label, base)) {
            ScaleGroup *G = &L->group[g];
            size_t len = strlen(G->label);
            if (len + strlen(base) + 3 < sizeof G->label) snprintf(G->label + len, sizeof G->label - len, ", %s", base);
        }
        p->group = g;
        p->scale = L->group[g].scale;
        // which special looks occur (the legend shows their swatches): only where they can
        // (a mask, NaN somewhere in the batch slice), and only until both are found
        const Stage *ds = &tr->stages[p->stage];
        int bb = ds->t.rank >= 3 ? imin(imax(v->batch, 0), ds->t.shape[0] - 1) : 0;
        bool nan_possible = p->is_weight || !tr->has_stats || ds->any_nan[bb];
        for (int rr = 0; rr < p->rows && (p->mask || p->neg_inf_masked || nan_possible); rr++) {
            for (int c = 0; c < p->cols; c++) {
                if ((p->mask && p->mask[(size_t)rr * (size_t)p->cols + (size_t)c] == 0.0f) ||
                    (p->neg_inf_masked && isinf(panel_value(p, rr, c)) && panel_value(p, rr, c) < 0)) {
                    p->any_masked = true;
                    continue;
                }
                if (nan_possible && isnan(panel_value(p, rr, c))) p->any_nan = true;
            }
            if ((p->any_masked || !(p->mask || p->neg_inf_masked)) && (p->any_nan || !nan_possible)) break;
        }
    }
}

// ---- the what-if lab: marks of changed cells, edit targets --------------------------------

// Points each panel at the same slice of the original lesson's trace (v->ref).
static void set_refs(Layout *L, const Trace *tr, const View *v)
{
    for (int i = 0; i < L->n_panels; i++) {
        PanelSpec *p = &L->spec[i];
        const Stage *st = &tr->stages[p->stage];
        int ri = trace_find(v->ref, st->name);
        const Stage *rs = ri >= 0 ? &v->ref->stages[ri] : NULL;
        const Tensor *mine = p->is_weight ? (p->is_bias ? st->bias : st->weight) : &st->t;
        const Tensor *theirs = !rs ? NULL : p->is_weight ? (p->is_bias ? rs->bias : rs->weight) : &rs->t;
        if (theirs && tensor_present(theirs) && theirs->size == mine->size)
            p->ref = theirs->data + (p->data - mine->data);
        else if (!rs && st->kind == STAGE_KIND_MASK)
            p->ref_one = true;
        else
            continue;
        for (int r = 0; r < p->rows && !p->any_changed; r++)
            for (int c = 0; c < p->cols && !p->any_changed; c++) p->any_changed = scene_cell_changed(p, r, c);
    }
}

bool scene_cell_changed(const PanelSpec *ps, int row, int col)
{
    if (!ps->ref && !ps->ref_one) return false;
    float was = ps->ref_one ? 1.0f : ps->ref[(size_t)row * (size_t)ps->rs + (size_t)col * (size_t)ps->cs];
    return trace_value_changed(was, panel_value(ps, row, col));
}

bool scene_edit_target(const Layout *L, const Trace *tr, const View *v, int p, int row, int col, int *tensor,
                       size_t *index)
{
    if (p < 0 || p >= L->n_panels || v->delta) return false;
    const PanelSpec *ps = &L->spec[p];
    if (row < 0 || col < 0 || row >= ps->rows || col >= ps->cols) return false;
    const Stage *st = &tr->stages[ps->stage];
    const float *cell = ps->data + (size_t)row * (size_t)ps->rs + (size_t)col * (size_t)ps->cs;
    if (ps->is_weight) {
        const Tensor *t = ps->is_bias ? st->bias : st->weight;
        int k = lesson_tensor_find(ps->source);
        if (!t || k < LT_WEIGHT0) return false;
        *tensor = k, *index = (size_t)(cell - t->data);
        return true;
    }
    size_t off = (size_t)(cell - st->t.data);
    static const struct { const char *stage; int tensor; } INPUTS[] = {
        {"input", LT_QUERY}, {"key_input", LT_KEY}, {"value_input", LT_VALUE}, {"mask", LT_MASK}};
    for (size_t i = 0; i < sizeof INPUTS / sizeof INPUTS[0]; i++)
        if (strcmp(st->name, INPUTS[i].stage) == 0) {
            *tensor = INPUTS[i].tensor, *index = off;
            return true;
        }
    if (st->kind == STAGE_KIND_MASKED && st->t.rank == 4) { // (B, H, Lq, Lk) → mask (B, Lq, Lk)
        size_t Lk = (size_t)st->t.shape[3], Lq = (size_t)st->t.shape[2], H = (size_t)st->t.shape[1];
        size_t j = off % Lk, i = off / Lk % Lq, b = off / (Lk * Lq * H);
        *tensor = LT_MASK, *index = (b * Lq + i) * Lk + j;
        return true;
    }
    return false;
}

void scene_build(Layout *L, const Trace *tr, const View *v)
{
    L->n_panels = 0;
    L->result_panel = -1;
    L->n_groups = 0;
    L->formula[0] = L->formula_note[0] = '\0';
    if (v->stage < 0 || v->stage >= tr->n) return;
    const Stage *st = &tr->stages[v->stage];
    scene_recipe(st->kind)->panels(L, tr, v);
    for (int i = 0; i < L->n_panels; i++) {
        PanelSpec *q = &L->spec[i];
        if (v->delta) { // a difference is a number everywhere (no masked look), and the
            q->mask = NULL; // operands' differences do not combine by the stage's operators
            q->op[0] = '\0';
        }
        q->result = !q->is_weight && q->stage == v->stage;
        if (q->result && (L->result_panel < 0 || q->head == v->head)) L->result_panel = i;
        q->shown_rows = q->rows;
        q->shown_cols = q->cols;
    }
    build_groups(L, tr, v);
    if (v->ref && !v->delta) set_refs(L, tr, v);
    scene_formula(tr, v->stage, v->lang, L->formula, sizeof L->formula);
    formula_note(tr, v->stage, v->lang, L->formula_note, sizeof L->formula_note);
    // what the frame leaves out or colours unusually, said next to the formula
    char extra[120] = "", a[16], b[16], c[16];
    int H = tr->n_heads, nh = imin(H, LAYOUT_MAX_HEAD_PANELS);
    AnimKind anim = scene_recipe(st->kind)->anim;
    if ((anim == ANIM_SPLIT || anim == ANIM_CONCAT) && H > nh) {
        int k0 = imin(v->head / nh * nh, H - nh);
        snprintf(a, sizeof a, "%d", k0), snprintf(b, sizeof b, "%d", k0 + nh - 1), snprintf(c, sizeof c, "%d", H);
        const char *args[] = {a, b, c};
        i18n_fmt(extra, sizeof extra, v->lang, "fx.heads_shown", 3, args);
    } else if (st->kind == STAGE_KIND_SOFTMAX && scene_log_probs(tr, v)) {
        i18n_fmt(extra, sizeof extra, v->lang, "fx.log_scale", 0, NULL);
    }
    if (v->delta) { // "Δscores = scores(edited) − scores(original)", the stage's formula beside it
        char was[sizeof L->formula + 4];
        snprintf(was, sizeof was, "(%s)", L->formula);
        const char *sym = scene_symbol(tr, v->stage, v->lang), *args[] = {sym};
        i18n_fmt(L->formula, sizeof L->formula, v->lang, "fx.delta", 1, args);
        snprintf(L->formula_note, sizeof L->formula_note, "%s", was);
    }
    if (extra[0]) {
        size_t len = strlen(L->formula_note);
        snprintf(L->formula_note + len, sizeof L->formula_note - len, "%s%s", len ? "  " : "", extra);
    }
}

// ---- highlight rules --------------------------------------------------------------------

bool scene_highlight(const Layout *L, int r, int row, int col, int p, Highlight *out)
{
    if (r < 0 || r >= L->n_panels || p < 0 || p >= L->n_panels || p == r) return false;
    const PanelSpec *res = &L->spec[r], *ps = &L->spec[p];
    if (!res->result) return false;
    switch (ps->reads) {
    case READS_ROW:
        if (row >= ps->rows) return false;
        *out = (Highlight){row, -1, 1};
        return true;
    case READS_COL:
        if (col >= ps->cols) return false;
        *out = (Highlight){ps->vector ? 0 : -1, col, 1};
        return true;
    case READS_CELL:
        if (row >= ps->rows || col >= ps->cols) return false;
        *out = (Highlight){row, col, 1};
        return true;
    case READS_HEAD_SRC: {
        int c = res->head * res->cols + col;
        if (res->head < 0 || row >= ps->rows || c >= ps->cols) return false;
        *out = (Highlight){row, c, 1};
        return true;
    }
    case READS_TILE: { // one query row of a key block: what a running max / sum cell has seen last
        int bk = ps->tile_cols, c0 = col * bk;
        if (bk <= 0 || row >= ps->rows || c0 >= ps->cols) return false;
        *out = (Highlight){row, c0, imin(bk, ps->cols - c0)};
        return true;
    }
    case READS_HEAD_DST:
        if (ps->cols <= 0 || col / ps->cols != ps->head || row >= ps->rows) return false;
        *out = (Highlight){row, col % ps->cols, 1};
        return true;
    default:
        return false;
    }
}

// ---- key padding ------------------------------------------------------------------------

bool scene_key_is_padding(const Trace *tr, int b, int j)
{
    if (tr->mask_kind != MASK_KEY_PADDING) return false;
    int mi = trace_find(tr, "mask");
    if (mi < 0) return false;
    const Tensor *m = &tr->stages[mi].t; // (B, Lq, Lk)
    if (b < 0 || b >= m->shape[0] || j < 0 || j >= m->shape[2]) return false;
    return m->data[(size_t)b * (size_t)m->shape[1] * (size_t)m->shape[2] + (size_t)j] == 0.0f;
}

// ---- description ------------------------------------------------------------------------

const char *scene_scale_name(const ScaleGroup *g)
{
    if (g->mask01) return "mask";
    if (g->scale.sequential) return g->scale.log ? "log" : "sequential";
    return "diverging";
}

static void put(char *out, size_t n, size_t *len, const char *s)
{
    if (*len + 1 >= n) return;
    size_t k = strlen(s);
    if (k > n - 1 - *len) k = n - 1 - *len;
    memcpy(out + *len, s, k);
    *len += k;
    out[*len] = '\0';
}

static void num_text(float x, char *buf, size_t n)
{
    if (fabsf(x) != 0.0f && (fabsf(x) < 0.01f || fabsf(x) >= 1e5f))
        snprintf(buf, n, "%.2g", (double)x);
    else
        snprintf(buf, n, "%.2f", (double)x);
}

void scene_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n)
{
    size_t len = 0;
    if (n) out[0] = '\0';
    if (v->stage < 0 || v->stage >= tr->n) return;
    const Stage *st = &tr->stages[v->stage];
    char key[48], line[400], a[96], b[32], c[32], d[32];
    snprintf(key, sizeof key, "title.%s", st->name);
    snprintf(a, sizeof a, "%d", v->batch);
    snprintf(b, sizeof b, "%d", v->head);
    const char *args0[] = {i18n_get(v->lang, key), L->formula, a, b};
    i18n_fmt(line, sizeof line, v->lang, stage_has_heads(st) || st->kind == STAGE_KIND_CONCAT ? "alt.intro_head" : "alt.intro",
             4, args0);
    put(out, n, &len, line);
    const char *sep = v->lang == LANG_ZH ? "" : " "; // between sentences: a space, none in Chinese
    for (int i = 0; i < L->n_panels; i++) {
        const PanelSpec *p = &L->spec[i];
        const ScaleGroup *g = &L->group[p->group];
        snprintf(a, sizeof a, "%d×%d", p->rows, p->cols);
        num_text(g->scale.lo, b, sizeof b);
        num_text(g->scale.hi, c, sizeof c);
        snprintf(d, sizeof d, "%d", i + 1);
        const char *args[] = {p->title, a, b, c, d};
        i18n_fmt(line, sizeof line, v->lang,
                 g->mask01 ? "alt.panel_mask" : p->result ? "alt.panel_result" : "alt.panel", 5, args);
        put(out, n, &len, sep);
        put(out, n, &len, line);
    }
    // masked cells filled with the fill (the mask's own zeros are described with its panel)
    bool masked = false, nan = false;
    for (int i = 0; i < L->n_panels; i++) {
        masked |= L->spec[i].any_masked && !L->group[L->spec[i].group].mask01;
        nan |= L->spec[i].any_nan;
    }
    if (masked) {
        scene_fill_text(tr->mask_fill, a, sizeof a);
        const char *args[] = {a};
        i18n_fmt(line, sizeof line, v->lang, "alt.masked", 1, args);
        put(out, n, &len, sep);
        put(out, n, &len, line);
    }
    if (nan) {
        put(out, n, &len, sep);
        put(out, n, &len, i18n_get(v->lang, "alt.nan"));
    }
}

// The generic narration that is true for this lesson: without a bias, without
// scaling, with no mask, with −∞ or a small fill (a suffix of its narr.* key).
static const char *narration_variant(const Trace *tr, int s)
{
    const Stage *st = &tr->stages[s];
    switch (st->kind) {
    case STAGE_KIND_PROJECTION:
    case STAGE_KIND_OUT_PROJ:
        return has_bias(st) ? "" : "_nobias";
    case STAGE_KIND_SCORES:
        if (st->operands[2] >= 0) return "_alibi";
        return tr->scale == 1.0f ? "_noscale" : "";
    case STAGE_KIND_SPLIT:
        return st->t.shape[1] < tr->n_heads ? (st->t.shape[1] == 1 ? "_mqa" : "_gqa") : "";
    case STAGE_KIND_MASK:
        return tr->mask_kind == MASK_SLIDING ? "_sliding" : "";
    case STAGE_KIND_MASKED:
        if (st->operands[1] < 0) return "_none";
        if (isinf(tr->mask_fill)) return "_neginf";
        return tr->mask_fill > -1e4f ? "_small" : "";
    default:
        return "";
    }
}

const char *scene_step_key(const Trace *tr, StepId step, char *buf, size_t n)
{
    // the scores step is labelled by what it computes: QKᵀ/√dₖ, QKᵀ/s or QKᵀ
    const char *suffix = "";
    if (step == STEP_SCORES)
        suffix = tr->scale == 1.0f ? "_noscale" : !scale_is_sqrt_dk(tr) ? "_custom" : tr->alibi ? "_alibi" : "";
    snprintf(buf, n, "step.%s%s", step_name(step), suffix);
    return buf;
}

const char *scene_narration(const Trace *tr, const View *v, char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    if (v->stage < 0 || v->stage >= tr->n) return buf;
    const Stage *st = &tr->stages[v->stage];
    if (v->delta) {
        i18n_fmt(buf, n, v->lang, "narr.delta", 0, NULL);
        return buf;
    }
    // an edited lesson: the lesson's own text was written about the original numbers,
    // so the narration is the generated one, true for the numbers on screen
    const Lesson *ls = v->edited ? NULL : v->lesson;
    const char *text = ls ? lesson_step_text(ls, st->name, v->lang) : NULL;
    if (!text && ls) text = lesson_step_text(ls, step_name(st->step), v->lang);
    if (text) return text;
    char key[64], a[16], b[16], c[16], d[16], e[16];
    snprintf(key, sizeof key, "narr.%s%s", st->name, narration_variant(tr, v->stage));
    snprintf(a, sizeof a, "%d", st->kind == STAGE_KIND_SPLIT && st->operands[0] >= 0 ? tr->stages[st->operands[0]].t.shape[2]
                                                                                     : tr->d_model);
    snprintf(b, sizeof b, "%d", tr->n_heads);
    snprintf(c, sizeof c, "%d", st->t.rank == 4 ? st->t.shape[3] : tr->d_k);
    // {4}: the K/V heads; {5}: the sliding window (or the query heads sharing a K/V head)
    snprintf(d, sizeof d, "%d", tr->n_kv_heads > 0 ? tr->n_kv_heads : tr->n_heads);
    snprintf(e, sizeof e, "%d", st->kind == STAGE_KIND_MASK ? tr->window
                                : tr->n_heads / (tr->n_kv_heads > 0 ? tr->n_kv_heads : tr->n_heads));
    const char *args[] = {a, b, c, d, e};
    i18n_fmt(buf, n, v->lang, key, 5, args);
    return buf;
}

// ---- derivations ------------------------------------------------------------------------

static int deriv_width(const Trace *tr, int s)
{
    const Stage *st = &tr->stages[s];
    switch (st->kind) {
    case STAGE_KIND_SOFTMAX: return tr->len_k;
    case STAGE_KIND_SCORES: return tr->stages[st->operands[0]].t.shape[3];
    case STAGE_KIND_NORM: return st->t.shape[st->t.rank - 1];
    default: return 0;
    }
}

bool scene_has_derivation(const Trace *tr, int s)
{
    if (s < 0 || s >= tr->n) return false;
    int w = deriv_width(tr, s);
    // long sequences keep their room for the heatmaps (the tooltip still derives a cell)
    return w > 0 && w <= SCENE_DERIV_MAX_VALUES && tr->len_q <= 32 && tr->len_k <= 32;
}

static DerivLine *deriv_line(Derivation *d, const char *label, int n)
{
    DerivLine *l = &d->line[d->n_lines++];
    memset(l, 0, sizeof *l);
    snprintf(l->label, sizeof l->label, "%s", label);
    l->n = n;
    return l;
}

// "attn · h0, row 2" / "scores · h0, cell [2, 3]"
static void deriv_title(Derivation *d, const View *v, const PanelSpec *res, int row, int col)
{
    char a[16], b[16];
    snprintf(a, sizeof a, "%d", row), snprintf(b, sizeof b, "%d", col);
    const char *args[] = {res->title, a, b};
    i18n_fmt(d->title, sizeof d->title, v->lang, col < 0 ? "deriv.row" : "deriv.cell", 3, args);
}

bool scene_derivation(const Layout *L, const Trace *tr, const View *v, int row, int col, Derivation *d)
{
    memset(d, 0, sizeof *d);
    if (v->delta || !scene_has_derivation(tr, v->stage) || L->result_panel < 0) return false;
    const Stage *st = &tr->stages[v->stage];
    const PanelSpec *res = &L->spec[L->result_panel];
    if (row < 0 || row >= res->rows) return false;
    int n = deriv_width(tr, v->stage);
    d->row = row, d->col = -1;
    char b[64];
    if (st->kind == STAGE_KIND_SOFTMAX) {
        // the same steps, in the same order, as tensor_softmax_rows
        const PanelSpec *x = &L->spec[0];
        float mx = -INFINITY, sum = 0.0f;
        for (int j = 0; j < n; j++)
            if (panel_value(x, row, j) > mx || isnan(panel_value(x, row, j))) mx = panel_value(x, row, j);
        deriv_title(d, v, res, row, -1);
        // the row named as its panel is: scores (or masked_scores)
        const char *xs = stage_name_of(tr, trace_find(tr, display_name(tr, st->operands[0], false))).sym;
        DerivLine *l = deriv_line(d, xs, n);
        for (int j = 0; j < n; j++) l->v[j] = panel_value(x, row, j);
        deriv_line(d, "max", 1)->v[0] = mx;
        snprintf(b, sizeof b, "%s − max", xs);
        l = deriv_line(d, b, n);
        for (int j = 0; j < n; j++) l->v[j] = panel_value(x, row, j) - mx;
        snprintf(b, sizeof b, "exp(%s − max)", xs);
        l = deriv_line(d, b, n);
        for (int j = 0; j < n; j++) l->v[j] = expf(panel_value(x, row, j) - mx), sum += l->v[j];
        deriv_line(d, "Σ", 1)->v[0] = sum;
        snprintf(b, sizeof b, "÷ Σ = %s", scene_symbol(tr, v->stage, v->lang));
        l = deriv_line(d, b, n);
        for (int j = 0; j < n; j++) l->v[j] = panel_value(res, row, j);
        l->result = true;
        return true;
    }
    if (st->kind == STAGE_KIND_SCORES) {
        if (col < 0 || col >= res->cols) col = 0;
        d->col = col;
        const Tensor *q = &tr->stages[st->operands[0]].t, *k = &tr->stages[st->operands[1]].t;
        int b0 = imin(imax(v->batch, 0), q->shape[0] - 1), h = res->head < 0 ? 0 : res->head;
        const float *qr = q->data + (((size_t)b0 * (size_t)q->shape[1] + (size_t)h) * (size_t)q->shape[2] + (size_t)row) * (size_t)n;
        const int hk = trace_kv_head(tr, k, h); // the K head this query head reads (GQA / MQA)
        const float *kr = k->data + (((size_t)b0 * (size_t)k->shape[1] + (size_t)hk) * (size_t)k->shape[2] + (size_t)col) * (size_t)n;
        deriv_title(d, v, res, row, col);
        const char *qs = scene_symbol(tr, st->operands[0], v->lang), *ks = scene_symbol(tr, st->operands[1], v->lang);
        snprintf(b, sizeof b, "%s%d", qs[0] == 'Q' ? "q" : qs, row);
        DerivLine *l = deriv_line(d, b, n);
        memcpy(l->v, qr, (size_t)n * sizeof(float));
        snprintf(b, sizeof b, "%s%d", ks[0] == 'K' ? "k" : ks, col);
        l = deriv_line(d, b, n);
        memcpy(l->v, kr, (size_t)n * sizeof(float));
        l = deriv_line(d, "×", n);
        float sum = 0.0f;
        for (int i = 0; i < n; i++) l->v[i] = qr[i] * kr[i], sum += l->v[i];
        deriv_line(d, "Σ", 1)->v[0] = sum;
        if (st->operands[2] >= 0) { // ALiBi: ÷ scale, then + the position bias (its value on the label)
            const Tensor *pb = &tr->stages[st->operands[2]].t;
            float bias = pb->data[((size_t)h * (size_t)pb->shape[2] + (size_t)row) * (size_t)pb->shape[3] + (size_t)col];
            if (tr->scale != 1.0f) {
                snprintf(b, sizeof b, "÷ %.4g", (double)tr->scale);
                deriv_line(d, b, 1)->v[0] = sum / tr->scale;
                snprintf(b, sizeof b, "+ bias %.4g =", (double)bias);
            } else {
                deriv_line(d, "+ bias", 1)->v[0] = bias;
                snprintf(b, sizeof b, "=");
            }
            l = deriv_line(d, b, 1);
        } else if (tr->scale != 1.0f) {
            snprintf(b, sizeof b, "÷ %.4g", (double)tr->scale);
            l = deriv_line(d, b, 1);
        } else {
            l = deriv_line(d, "=", 1);
        }
        l->v[0] = panel_value(res, row, col);
        l->result = true;
        return true;
    }
    if (st->kind == STAGE_KIND_NORM) {
        // the mean and variance exactly as tensor_layer_norm (PyTorch) computes them
        const PanelSpec *x = &L->spec[0];
        float rowv[1024], mean = 0.0f, var = 0.0f;
        if (n > 1024) return false;
        for (int j = 0; j < n; j++) rowv[j] = panel_value(x, row, j);
        tensor_row_moments(rowv, n, &mean, &var);
        float inv = 1.0f / sqrtf(var + tr->norm_eps);
        const char *xs = scene_symbol(tr, st->operands[0], v->lang);
        deriv_title(d, v, res, row, -1);
        DerivLine *l = deriv_line(d, xs, n);
        for (int j = 0; j < n; j++) l->v[j] = panel_value(x, row, j);
        deriv_line(d, "mean", 1)->v[0] = mean;
        deriv_line(d, "var", 1)->v[0] = var;
        snprintf(b, sizeof b, "(%s − mean) / √(var + ε)", xs);
        l = deriv_line(d, b, n);
        for (int j = 0; j < n; j++) l->v[j] = (panel_value(x, row, j) - mean) * inv;
        snprintf(b, sizeof b, "· γ + β = %s", scene_symbol(tr, v->stage, v->lang));
        l = deriv_line(d, b, n);
        for (int j = 0; j < n; j++) l->v[j] = panel_value(res, row, j);
        l->result = true;
        return true;
    }
    return false;
}

int scene_derivation_row(const Layout *L)
{
    if (L->result_panel < 0) return 0;
    const PanelSpec *res = &L->spec[L->result_panel];
    for (int r = 0; r < res->rows; r++)
        for (int c = 0; c < res->cols; c++)
            if (isnan(panel_value(res, r, c))) return r;
    return 0;
}
