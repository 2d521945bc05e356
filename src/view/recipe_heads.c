// recipe_heads.c — the head axis: splitting Q, K and V into heads (GQA / MQA: fewer K/V
// heads), rotating them (RoPE), and concatenating the heads' outputs.
// (recipe.h says what a recipe holds; each kind's whole recipe is here.)
#include "recipe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "i18n.h"

static void panels_split(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    int H = recipe_heads_of(tr, v->stage);
    PanelSpec *p = recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_HEAD_SRC);
    if (p) {
        p->head_blocks = H;
        p->block_cols = p->cols / H;
        if (H < tr->n_heads) p->kv_group = tr->n_heads / H;
    }
    recipe_add_head_panels(L, tr, v, v->stage, "→", READS_NONE);
}

static void panels_concat(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    int H = tr->n_heads > 0 ? tr->n_heads : 1;
    recipe_add_head_panels(L, tr, v, st->operands[0], "", READS_HEAD_DST);
    PanelSpec *p = recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
    if (p) {
        p->head_blocks = H;
        p->block_cols = p->cols / H;
    }
}

// Q·cos + rotate(Q)·sin = Q_rot: each position's row turned pair by pair
static void panels_rope(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
}

static void formula_split(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Tensor *t = &tr->stages[s].t; // (B, H, L, d)
    snprintf(out, n, "%s = %s.view(%d, %d, %d, %d).transpose(1, 2)", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0),
             t->shape[0], t->shape[2], t->shape[1], t->shape[3]);
}

static void formula_concat(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Tensor *t = &tr->stages[s].t; // (B, L, H·d)
    snprintf(out, n, "%s = %s.transpose(1, 2).reshape(%d, %d, %d)", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0),
             t->shape[0], t->shape[1], t->shape[2]);
}

static void formula_rope(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const char *r = recipe_name_of(tr, s).sym, *x = recipe_op_sym(tr, s, 0);
    snprintf(out, n, "%s = %s·cos + %s(%s)·sin", r, x,
             tr->rope == ROPE_HALF ? "rotate_half" : "rotate_every_two", x);
}

// A dimension RoPE does not turn (past rot of partial rotary, MLA's content part before n): it passes.
static void tip_rope_pass(TipOut *o, const TipCell *cell, const char *key, int n, float x)
{
    char a0[32], rd[16];
    snprintf(a0, sizeof a0, "%d", cell->col), snprintf(rd, sizeof rd, "%d", n);
    const char *args[] = {recipe_symbol(cell->tr, cell->st->operands[0], cell->lang), a0, rd};
    tip_key(o, cell->lang, key, 3, args);
    tip_put(o, "\n");
    tip_step(o, x);
    tip_equals(o, cell->val);
}

static void tip_rope(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    const PanelSpec *ps = cell->ps;
    Lang lang = cell->lang;
    float val = cell->val;
    const int *op = cell->st->operands;
    int b = cell->b, h = cell->h, row = cell->row, col = cell->col;
    const Tensor *t0 = cell->t0;
    char a0[32], a1[32];
    if (t0 && ps->head >= 0) {
        // token row, dimension col: which pair, turned by which angle (at the token's position)
        int d = tip_last_dim(t0), rot = tr->rotary_dim > 0 && tr->rotary_dim < d ? tr->rotary_dim : d, half = rot / 2;
        const float *x = tip_row(t0, b, h, row);
        if (tr->mla_rope > 0) { // MLA: the last rot dimensions turn (q_R, k_R), the first d − rot pass
            const int off = d - rot;
            if (col < off) {
                tip_rope_pass(o, cell, "tip.rope_pass_mla", off, x[col]);
                return;
            }
            x += off, col -= off;
        }
        if (col >= rot) { // partial rotary: past the turned dimensions, the value passes
            tip_rope_pass(o, cell, "tip.rope_pass", rot, x[col]);
            return;
        }
        bool halves = tr->rope == ROPE_HALF;
        int pair = halves ? col % half : col / 2;
        bool first = halves ? col < half : col % 2 == 0;
        int partner = halves ? (first ? col + half : col - half) : (first ? col + 1 : col - 1);
        float inv = tr->rope_inv ? tr->rope_inv[pair] : attn_rope_inv_freq(pair, rot, tr->rope_theta);
        const int pos = trace_position(tr, b, row);
        const float att = tr->rope_inv ? tr->rope_att : 1.0f;
        float ang = (float)pos * inv, c = cosf(ang), sn = sinf(ang);
        if (att != 1.0f) c = c * att, sn = sn * att; // YaRN: cos and sin times its attention factor
        char ab[32], cb[32], sb[32], pb[16], rb[16], ib[32];
        tip_operand(o, ang, ab, sizeof ab), tip_operand(o, c, cb, sizeof cb), tip_operand(o, sn, sb, sizeof sb);
        // θ_p with ⌈log10(2·pos)⌉ more decimals, so that position · θ_p as written is
        // within half the last shown decimal of the angle as written (13 · 0.13 is not)
        int digits = 0;
        for (long p = 2L * pos - 1; p >= 1 && digits < 8; p /= 10) digits++;
        if (digits)
            tip_number_dec(inv, o->dec + digits, ib, sizeof ib);
        else
            tip_operand(o, inv, ib, sizeof ib);
        snprintf(pb, sizeof pb, "%d", pair), snprintf(rb, sizeof rb, "%d", pos);
        char fb[32];
        tip_operand(o, att, fb, sizeof fb);
        const char *args[] = {rb, pb, ib, ab, cb, sb, fb};
        tip_key(o, lang, att != 1.0f ? "tip.rope_yarn" : "tip.rope", 7, args);
        const int shown = tr->mla_rope > 0 ? d - rot : 0; // (MLA: columns as the panel numbers them)
        snprintf(a0, sizeof a0, "%d", col + shown), snprintf(a1, sizeof a1, "%d", partner + shown);
        const char *args2[] = {recipe_symbol(tr, op[0], lang), a0, a1};
        tip_put(o, "\n");
        tip_key(o, lang, first ? "tip.rope_first" : "tip.rope_second", 3, args2);
        tip_step(o, x[col]);
        tip_put(o, " · ");
        tip_num(o, c, true);
        tip_put(o, first ? " − " : " + ");
        tip_num(o, x[partner], true);
        tip_put(o, " · ");
        tip_num(o, sn, true);
        tip_equals(o, val);
    }
}

static void tip_copy_split(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    const Stage *st = cell->st;
    Lang lang = cell->lang;
    const int *op = cell->st->operands;
    int b = cell->b, h = cell->h, row = cell->row, col = cell->col;
    const Tensor *t0 = cell->t0;
    char a1[32];
    if (t0) {
        int d = tip_last_dim(&st->t);
        snprintf(a1, sizeof a1, "%d,%d,%d", b, row, h * d + col);
        const char *args[] = {recipe_symbol(tr, op[0], lang), a1};
        tip_key(o, lang, "tip.copy", 2, args);
    }
}

static void tip_copy_concat(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    Lang lang = cell->lang;
    const int *op = cell->st->operands;
    int b = cell->b, row = cell->row, col = cell->col;
    const Tensor *t0 = cell->t0;
    char a1[32];
    if (t0) {
        int d = tip_last_dim(t0);
        snprintf(a1, sizeof a1, "%d,%d,%d,%d", b, col / d, row, col % d);
        const char *args[] = {recipe_symbol(tr, op[0], lang), a1};
        tip_key(o, lang, "tip.copy", 2, args);
    }
}

// GQA / MQA: how many query heads share a K/V head, and what the K/V cache saves.
static void note_split(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    const Stage *st = &tr->stages[s];
    if (!(st->t.shape[1] < tr->n_heads && st->t.shape[1] > 0)) return;
    char a[32], b[32], c[16], d[16];
    snprintf(a, sizeof a, "%d", st->t.shape[1]), snprintf(b, sizeof b, "%d", tr->n_heads);
    snprintf(c, sizeof c, "%d", tr->n_heads / st->t.shape[1]);
    snprintf(d, sizeof d, "%d", 100 - 100 * st->t.shape[1] / tr->n_heads);
    const char *args[] = {a, b, c, d};
    i18n_fmt(out, n, lang, "fx.gqa", 4, args);
}

// RoPE: which columns turn together, and how fast: "(0,2) 1, (1,3) 0.01".
static void note_rope(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    const Stage *st = &tr->stages[s];
    char t[32], pairs[96] = "";
    snprintf(t, sizeof t, "%g", (double)tr->rope_theta);
    const int d = st->t.shape[3], rot = tr->rotary_dim > 0 && tr->rotary_dim < d ? tr->rotary_dim : d, half = rot / 2;
    size_t len = 0;
    for (int p = 0; p < half && p < 3 && len + 32 < sizeof pairs; p++)
        len += (size_t)snprintf(pairs + len, sizeof pairs - len, "%s(%d,%d) %.3g", p ? ", " : "",
                                tr->rope == ROPE_HALF ? p : 2 * p, tr->rope == ROPE_HALF ? p + half : 2 * p + 1,
                                (double)(tr->rope_inv ? tr->rope_inv[p] : attn_rope_inv_freq(p, rot, tr->rope_theta)));
    if (half > 3) snprintf(pairs + len, sizeof pairs - len, ", …");
    if (tr->mla_rope > 0) { // multi-head latent attention: the last rot of d turn
        char r[16], dd[16];
        snprintf(r, sizeof r, "%d", rot), snprintf(dd, sizeof dd, "%d", d);
        const char *args[] = {r, dd, pairs};
        i18n_fmt(out, n, lang, "fx.rope_mla", 3, args);
        return;
    }
    if (rot < d) { // partial rotary
        char r[16], dd[16];
        snprintf(r, sizeof r, "%d", rot), snprintf(dd, sizeof dd, "%d", d);
        const char *args[] = {r, dd, pairs};
        i18n_fmt(out, n, lang, "fx.rope_partial", 3, args);
        return;
    }
    const char *args[] = {t, pairs};
    i18n_fmt(out, n, lang, "fx.rope", 2, args);
}

// Fewer K/V heads than query heads: grouped-query or multi-query attention.
static const char *narration_split(const Trace *tr, int s)
{
    const Stage *st = &tr->stages[s];
    return st->t.shape[1] < tr->n_heads ? (st->t.shape[1] == 1 ? "_mqa" : "_gqa") : "";
}

#define Q(k) QUIZ_BIT(QUIZ_##k)

const StageRecipe RECIPE_SPLIT = {
    .panels = panels_split, .formula = formula_split, .note = note_split, .tip = tip_copy_split,
    .narration = narration_split, .anim = ANIM_SPLIT, .quiz = Q(SHAPE), .view_of_operand = true,
};

const StageRecipe RECIPE_CONCAT = {
    .panels = panels_concat, .formula = formula_concat, .tip = tip_copy_concat, .anim = ANIM_CONCAT,
    .quiz = Q(SOURCE) | Q(SHAPE), .view_of_operand = true,
};

// Multi-head latent attention turns only the last dimensions (q_R, k_R).
static const char *narration_rope(const Trace *tr, int s)
{
    (void)s;
    return tr->mla_rope > 0 ? "_mla" : "";
}

const StageRecipe RECIPE_ROPE = {
    .panels = panels_rope, .formula = formula_rope, .note = note_rope, .tip = tip_rope, .anim = ANIM_ROWS,
    .narration = narration_rope,
    .quiz = Q(VALUE), .compared = recipe_compared_op0, // before and after the turn
};
