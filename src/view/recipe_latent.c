// recipe_latent.c — DeepSeek's attention (mla.c): multi-head latent attention's keys (k_C of
// each head beside the shared k_R), the latent cache and its size against MHA's and GQA's, the
// absorbed form's query and scores, and the sparse attention's indexer scores and top-k mask.
// (recipe.h says what a recipe holds; each kind's whole recipe is here.)
#include "recipe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "i18n.h"

#define Q(k) QUIZ_BIT(QUIZ_##k)

// The scores this stage is compared with (absorbed_scores: the standard pass's).
static int compared_scores(const Trace *tr, int s) { return trace_find_near(tr, s, "scores"); }

// Two operands read row by row, then the result.
static void panels_two_rows(Layout *L, const Trace *tr, const View *v, const char *op)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    recipe_add_stage(L, tr, v, st->operands[1], st->t.rank == 4 ? v->head : 0, op, READS_ROW);
    recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
}

static void copied(TipOut *o, const TipCell *c, int op, const char *at)
{
    const char *args[] = {recipe_symbol(c->tr, c->st->operands[op], c->lang), at};
    tip_key(o, c->lang, "tip.copy", 2, args);
}

// ---- k = [k_C of head h ; k_R]: every head's own key part beside the one shared RoPE key ----

static void panels_mla_key(Layout *L, const Trace *tr, const View *v) { panels_two_rows(L, tr, v, ","); }

static void formula_mla_key(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Tensor *t = &tr->stages[s].t;
    snprintf(out, n, "%s = cat(%s.view(%d, %d, %d, %d).transpose(1, 2), %s.expand(%d))", recipe_name_of(tr, s).sym,
             recipe_op_sym(tr, s, 0), t->shape[0], t->shape[2], t->shape[1], t->shape[3] - tr->mla_rope,
             recipe_op_sym(tr, s, 1), t->shape[1]);
}

static void tip_mla_key(TipOut *o, const TipCell *c)
{
    const int dn = tip_last_dim(&c->st->t) - c->tr->mla_rope;
    char at[32];
    if (c->col < dn) {
        snprintf(at, sizeof at, "%d,%d,%d", c->b, c->row, c->h * dn + c->col);
        copied(o, c, 0, at);
        return;
    }
    snprintf(at, sizeof at, "%d,%d,%d", c->b, c->row, c->col - dn);
    copied(o, c, 1, at);
    tip_put(o, "\n");
    tip_key(o, c->lang, "tip.mla_shared", 0, NULL);
}

static const char *narration_mla(const Trace *tr, int s)
{
    (void)tr, (void)s;
    return "_mla";
}

const StageRecipe RECIPE_MLA_KEY = {
    .panels = panels_mla_key, .formula = formula_mla_key, .tip = tip_mla_key, .anim = ANIM_FADE, .quiz = Q(SHAPE),
    .narration = narration_mla, .one_scale = true,
};

// ---- the latent cache: [ĉ_KV ; k_R turned] per token, and its size against MHA's and GQA's ---

static void panels_mla_cache(Layout *L, const Trace *tr, const View *v) { panels_two_rows(L, tr, v, ","); }

static void formula_mla_cache(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s = cat(%s, %s[:, 0, :, %d:])", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0),
             recipe_op_sym(tr, s, 1), tr->d_k - tr->mla_rope);
}

static void tip_mla_cache(TipOut *o, const TipCell *c)
{
    char at[32];
    if (c->col < c->tr->mla_rank) {
        snprintf(at, sizeof at, "%d,%d,%d", c->b, c->row, c->col);
        copied(o, c, 0, at);
    } else {
        snprintf(at, sizeof at, "%d,0,%d,%d", c->b, c->row, c->tr->d_k - c->tr->mla_rope + c->col - c->tr->mla_rank);
        copied(o, c, 1, at);
    }
}

// Floats cached per token and layer: MLA r + d_R; MHA H·(d_k + d_v); MQA (one K/V head) d_k + d_v.
static void cache_sizes(const Trace *tr, char *mla, char *mha, char *mqa, size_t n)
{
    snprintf(mla, n, "%d", tr->mla_rank + tr->mla_rope);
    snprintf(mha, n, "%d", tr->n_heads * (tr->d_k + tr->d_v));
    snprintf(mqa, n, "%d", tr->d_k + tr->d_v);
}

static void note_mla_cache(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)s;
    char a[16], b[16], d[16];
    cache_sizes(tr, a, b, d, sizeof a);
    const char *args[] = {a, b, d};
    i18n_fmt(out, n, lang, "fx.mla_cache", 3, args);
}

static const char *story_mla_cache(const Trace *tr, const View *v, char *buf, size_t n)
{
    char r[16], dr[16], h[16], dk[16], dv[16], mla[16], mha[16], mqa[16], x[16];
    cache_sizes(tr, mla, mha, mqa, sizeof mla);
    snprintf(r, sizeof r, "%d", tr->mla_rank), snprintf(dr, sizeof dr, "%d", tr->mla_rope);
    snprintf(h, sizeof h, "%d", tr->n_heads), snprintf(dk, sizeof dk, "%d", tr->d_k), snprintf(dv, sizeof dv, "%d", tr->d_v);
    snprintf(x, sizeof x, "%.1f", (double)(tr->n_heads * (tr->d_k + tr->d_v)) / (tr->mla_rank + tr->mla_rope));
    const char *args[] = {r, dr, mla, h, dk, dv, mha, mqa, x};
    i18n_fmt(buf, n, v->lang, "story.latent_cache", 9, args);
    return buf;
}

const StageRecipe RECIPE_MLA_CACHE = {
    .panels = panels_mla_cache, .formula = formula_mla_cache, .note = note_mla_cache, .tip = tip_mla_cache,
    .anim = ANIM_FADE, .quiz = Q(SHAPE), .story = story_mla_cache, .one_scale = true,
};

// ---- the absorbed form: q_A = q_nope·W_UK(h), then scores straight from the cache -----------

static void panels_mla_absorb(Layout *L, const Trace *tr, const View *v)
{
    recipe_add_stage(L, tr, v, tr->stages[v->stage].operands[0], v->head, "", READS_ROW);
    recipe_add_stage(L, tr, v, v->stage, v->head, "·W_UK(h) =", READS_NONE);
}

static void formula_mla_absorb(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s = %s[..., :%d]·W_UK(h)  (W_UK = %s, rows h·%d …)", recipe_name_of(tr, s).sym,
             recipe_op_sym(tr, s, 0), tr->d_k - tr->mla_rope, recipe_weight_plain(tr, s), tr->d_k - tr->mla_rope);
}

static void tip_mla_absorb(TipOut *o, const TipCell *c)
{
    const Tensor *q = c->t0, *w = c->st->weight;
    if (!q || !w) return;
    const int dn = c->tr->d_k - c->tr->mla_rope, r = c->tr->mla_rank;
    char a0[16], a1[16];
    snprintf(a0, sizeof a0, "%d", c->h), snprintf(a1, sizeof a1, "%d", c->col);
    const char *args[] = {a0, a1};
    tip_key(o, c->lang, "tip.mla_absorb", 2, args);
    tip_put(o, "\n= ");
    tip_terms(o, c->lang, tip_row(q, c->b, c->h, c->row), 1, w->data + (size_t)c->h * dn * r + c->col, r, dn);
    tip_equals(o, c->val);
}

const StageRecipe RECIPE_MLA_ABSORB = {
    .panels = panels_mla_absorb, .formula = formula_mla_absorb, .tip = tip_mla_absorb, .anim = ANIM_ROWS,
    .quiz = Q(SHAPE) | Q(VALUE),
};

static void panels_mla_scores(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    PanelSpec *k = recipe_add_stage(L, tr, v, st->operands[1], 0, "·", READS_COL);
    if (k) panel_transpose(k);
    recipe_add_stage(L, tr, v, st->operands[2], v->head, "+ q_R·k_Rᵀ:", READS_ROW);
    char op[32], sc[24];
    snprintf(op, sizeof op, "/%s =", recipe_scale_text(tr, sc, sizeof sc));
    recipe_add_stage(L, tr, v, v->stage, v->head, op, READS_NONE);
}

static void formula_mla_scores(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    char sc[24];
    snprintf(out, n, "%s = (%s·ĉ_KVᵀ + q_R·k_Rᵀ) / %s", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0),
             recipe_scale_text(tr, sc, sizeof sc));
}

static void tip_mla_scores(TipOut *o, const TipCell *c)
{
    const Trace *tr = c->tr;
    const Tensor *qa = c->t0, *cache = c->t1, *qr = &tr->stages[c->st->operands[2]].t;
    if (!qa || !cache) return;
    const int r = tr->mla_rank, dr = tr->mla_rope;
    const float *row = tip_row(cache, c->b, 0, c->col);
    char a0[16], a1[16], sc[24];
    snprintf(a0, sizeof a0, "%d", c->row), snprintf(a1, sizeof a1, "%d", c->col);
    recipe_scale_text(tr, sc, sizeof sc);
    const char *args[] = {a0, a1, sc};
    tip_key(o, c->lang, "tip.mla_scores", 3, args);
    tip_put(o, "\n= (");
    tip_terms(o, c->lang, tip_row(qa, c->b, c->h, c->row), 1, row, 1, r);
    tip_put(o, " + ");
    tip_terms(o, c->lang, tip_row(qr, c->b, c->h, c->row) + (tr->d_k - dr), 1, row + r, 1, dr);
    tip_put(o, ") / ");
    tip_put(o, sc);
    tip_equals(o, c->val);
}

// The largest |absorbed − scores| over the lesson: the two forms' one difference, rounding.
static const char *story_mla_scores(const Trace *tr, const View *v, char *buf, size_t n)
{
    const int s = v->stage, sc = compared_scores(tr, s);
    double worst = 0.0;
    if (sc >= 0 && tr->stages[sc].t.size == tr->stages[s].t.size)
        for (size_t i = 0; i < tr->stages[s].t.size; i++) {
            const double d = fabs((double)tr->stages[s].t.data[i] - (double)tr->stages[sc].t.data[i]);
            if (d > worst) worst = d;
        }
    char r[16], dk[16], d[32], h[16], dn[16];
    snprintf(r, sizeof r, "%d", tr->mla_rank), snprintf(dk, sizeof dk, "%d", tr->d_k);
    snprintf(h, sizeof h, "%d", tr->n_heads), snprintf(dn, sizeof dn, "%d", tr->d_k - tr->mla_rope);
    snprintf(d, sizeof d, "%.1e", worst);
    const char *args[] = {r, dn, d, h, dk};
    i18n_fmt(buf, n, v->lang, "story.absorbed_scores", 5, args);
    return buf;
}

const StageRecipe RECIPE_MLA_SCORES = {
    .panels = panels_mla_scores, .formula = formula_mla_scores, .tip = tip_mla_scores, .anim = ANIM_CELLS,
    .quiz = Q(VALUE), .key_cols = true, .compared = compared_scores, .story = story_mla_scores,
};

// ---- the lightning indexer: I = Σ_j w_j·ReLU(q_j·k), then each query's top-k keys ----------

static void panels_index(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->operands[0], 0, "", READS_ROW);
    PanelSpec *k = recipe_add_stage(L, tr, v, st->operands[1], 0, "·", READS_COL);
    if (k) panel_transpose(k);
    recipe_add_stage(L, tr, v, st->operands[2], 0, "w:", READS_ROW);
    recipe_add_stage(L, tr, v, v->stage, 0, "→", READS_NONE);
}

static void formula_index(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s[i, s] = Σ_j %s[i, j]·ReLU(%s_j[i]·%s[s])  (j < %d)", recipe_name_of(tr, s).sym,
             recipe_op_sym(tr, s, 2), recipe_op_sym(tr, s, 0), recipe_op_sym(tr, s, 1), tr->index_heads);
}

static void tip_index(TipOut *o, const TipCell *c)
{
    const Trace *tr = c->tr;
    const Tensor *q = c->t0, *k = c->t1, *w = &tr->stages[c->st->operands[2]].t;
    if (!q || !k) return;
    if (c->masked) {
        char a0[32], a1[32];
        snprintf(a0, sizeof a0, "%d,%d,%d", c->b, c->row, c->col);
        recipe_fill_text(-INFINITY, a1, sizeof a1);
        const char *args[] = {a0, a1};
        tip_key(o, c->lang, "tip.masked_yes", 2, args);
        return;
    }
    const int HI = tr->index_heads, dI = tr->index_dim;
    const float *qr = tip_row(q, c->b, 0, c->row), *kr = tip_row(k, c->b, 0, c->col), *wr = tip_row(w, c->b, 0, c->row);
    for (int j = 0; j < HI; j++) { // each head's dot product, then ReLU
        char a0[16];
        snprintf(a0, sizeof a0, "%d", j);
        const char *args[] = {a0};
        tip_key(o, c->lang, "tip.index_dot", 1, args);
        tip_put(o, " = ");
        tip_terms(o, c->lang, qr + j * dI, 1, kr, 1, dI);
        float dot = 0.0f;
        for (int d = 0; d < dI; d++) dot += qr[j * dI + d] * kr[d];
        tip_equals(o, dot);
        tip_put(o, "\n");
    }
    tip_put(o, "= ");
    for (int j = 0; j < HI; j++) {
        float dot = 0.0f;
        for (int d = 0; d < dI; d++) dot += qr[j * dI + d] * kr[d];
        if (j) tip_put(o, " + ");
        tip_num(o, wr[j], true);
        tip_put(o, "×");
        tip_num(o, dot > 0.0f ? dot : 0.0f, false);
    }
    tip_equals(o, c->val);
}

const StageRecipe RECIPE_INDEX_SCORES = {
    .panels = panels_index, .formula = formula_index, .tip = tip_index, .anim = ANIM_CELLS, .quiz = Q(VALUE),
    .key_cols = true, .mask_look = MASK_LOOK_LESSON_MASK,
};

// The top-k mask: which keys query i keeps, from its row of index scores.
static const char *story_topk(const Trace *tr, const View *v, char *buf, size_t n)
{
    const Stage *st = &tr->stages[v->stage];
    const int Lq = st->t.shape[1], Lk = st->t.shape[2], i = Lq - 1;
    const float *row = st->t.data + ((size_t)v->batch * Lq + i) * Lk;
    char keys[96] = "", k[16], q[16], L[16];
    size_t len = 0;
    for (int j = 0; j < Lk && len + 8 < sizeof keys; j++)
        if (row[j] != 0.0f) len += (size_t)snprintf(keys + len, sizeof keys - len, "%s%d", len ? ", " : "", j);
    snprintf(k, sizeof k, "%d", tr->index_topk), snprintf(q, sizeof q, "%d", i), snprintf(L, sizeof L, "%d", Lk);
    const char *args[] = {k, q, keys, L};
    i18n_fmt(buf, n, v->lang, "story.topk_mask", 4, args);
    return buf;
}

static void formula_topk(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    snprintf(out, n, "%s = topk(%s, k = %d) ∧ mask", recipe_name_of(tr, s).sym, recipe_op_sym(tr, s, 0), tr->index_topk);
}

const StageRecipe RECIPE_TOPK_MASK = {
    .panels = recipe_panels_self, .formula = formula_topk, .anim = ANIM_FADE, .key_cols = true, .mask_look = MASK_LOOK_SELF,
    .scale = SCALE_MASK01, .story = story_topk,
};

float recipe_masked_value(const Trace *tr, int s)
{
    return s >= 0 && s < tr->n && tr->stages[s].kind == STAGE_KIND_INDEX_SCORES ? -INFINITY : tr->mask_fill;
}
