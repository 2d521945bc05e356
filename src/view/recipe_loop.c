// recipe_loop.c — inside the loop: FlashAttention's running max and sum over key tiles and
// its output, the K/V cache, and decoding token by token.
// (recipe.h says what a recipe holds; each kind's whole recipe is here.)
#include "recipe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "i18n.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

// masked scores → m (or l) per key block: the tiles of each row, visited in order
static void panels_flash_stat(Layout *L, const Trace *tr, const View *v)
{
    PanelSpec *s = recipe_add_stage(L, tr, v, trace_find(tr, "masked_scores"), v->head, "", READS_TILE);
    if (s) s->tile_rows = tr->flash_block_q, s->tile_cols = tr->flash_block_k;
    PanelSpec *p = recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
    // m = −∞ while every key so far is masked with −∞: drawn as masked, not as a colour
    if (p) p->neg_inf_masked = true;
}

// flash_out = head_out (operand 0), decode_output = output (operand 2): the same numbers
static void panels_equal(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    recipe_add_stage(L, tr, v, st->kind == STAGE_KIND_FLASH_OUT ? st->operands[0] : st->operands[2], v->head, "", READS_CELL);
    recipe_add_stage(L, tr, v, v->stage, v->head, "=", READS_NONE);
}

static void formula_flash(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Stage *st = &tr->stages[s];
    if (st->kind == STAGE_KIND_FLASH_OUT)
        snprintf(out, n, "flash_out = acc / l = head_out");
    else if (st->id == STAGE_FLASH_MAX)
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
        // (StreamingLLM: and the first S, the attention sinks)
        const bool sinks = tr->mask_kind == MASK_SLIDING && tr->sink_tokens > 0;
        const char *span = tr->mask_kind != MASK_SLIDING ? ":t+1" : sinks ? ":S] ∪ cache_k[t−W+1:t+1" : "t−W+1:t+1";
        const char *vspan = sinks ? ":S] ∪ cache_v[t−W+1:t+1" : span;
        // the divisor as the scores' formula names it (was an undefined "s")
        char sc[32];
        if (tr->scale == 1.0f) sc[0] = '\0';
        else if (fabsf(tr->scale - sqrtf((float)tr->d_k)) < 1e-6f * tr->scale) snprintf(sc, sizeof sc, " / √d_k");
        else snprintf(sc, sizeof sc, " / %.4g", (double)tr->scale);
        snprintf(out, n, "decode_output[:, t] = softmax(q_t·cache_k[%s]ᵀ%s%s)·cache_v[%s]·W_Oᵀ", span, sc,
                 tr->alibi ? " + bias_t" : "", vspan);
    } else
        snprintf(out, n, "%s = cat(%s, %s_t) for t = 0 … %d", st->name, st->name, st->name[6] == 'k' ? "k" : "v",
                 st->t.shape[2] - 1);
}

static void tip_flash(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    const Stage *st = cell->st;
    Lang lang = cell->lang;
    float val = cell->val;
    int b = cell->b, h = cell->h, row = cell->row, col = cell->col;
    // the running value after key block col, from the one before and the tile's scores
    int ms = trace_find(tr, "masked_scores"), fm = trace_find(tr, "flash_max"), fl = trace_find(tr, "flash_sum");
    if (ms < 0 || fm < 0 || fl < 0 || tr->flash_block_k < 1) return;
    const Tensor *S = &tr->stages[ms].t, *M = &tr->stages[fm].t, *Ls = &tr->stages[fl].t;
    int bk = tr->flash_block_k, j0 = col * bk, j1 = imin(j0 + bk, tr->len_k) - 1;
    const float *srow = tip_row(S, b, h, row), *mrow = tip_row(M, b, h, row), *lrow = tip_row(Ls, b, h, row);
    float rmax = -INFINITY, m = mrow[col], mold = col > 0 ? mrow[col - 1] : -INFINITY;
    for (int j = j0; j <= j1; j++) rmax = srow[j] > rmax ? srow[j] : rmax;
    char k0[16], k1[16], x0[32], x1[32], x2[32];
    snprintf(k0, sizeof k0, "%d", j0), snprintf(k1, sizeof k1, "%d", j1);
    if (st->id == STAGE_FLASH_MAX) {
        tip_number(mold, x0, sizeof x0), tip_number(rmax, x1, sizeof x1);
        const char *args[] = {k0, k1, x0, x1};
        tip_key(o, lang, "tip.flash_max", 4, args);
    } else {
        float ref = isinf(m) && m < 0 ? 0.0f : m, sum = 0.0f;
        for (int j = j0; j <= j1; j++) sum += tensor_expf(srow[j] - ref);
        tip_number(col > 0 ? lrow[col - 1] : 0.0f, x0, sizeof x0), tip_number(tensor_expf(mold - ref), x1, sizeof x1);
        tip_number(sum, x2, sizeof x2);
        const char *args[] = {k0, k1, x0, x1, x2};
        tip_key(o, lang, "tip.flash_sum", 5, args);
    }
    tip_equals(o, val);
}

static void tip_equal(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    const Stage *st = cell->st;
    Lang lang = cell->lang;
    const int *op = cell->st->operands;
    int b = cell->b, h = cell->h, row = cell->row, col = cell->col;
    // flash_out: head_out (operand 0); decode_output: output (operand 2)
    int other = st->kind == STAGE_KIND_FLASH_OUT ? op[0] : op[2];
    if (other < 0) return;
    const Tensor *t = &tr->stages[other].t;
    float x = tip_row(t, b, h, row)[col];
    char tb[16], xb[32];
    snprintf(tb, sizeof tb, "%d", row), tip_number(x, xb, sizeof xb);
    const char *args[] = {tb, recipe_symbol(tr, other, lang), xb};
    tip_key(o, lang, st->kind == STAGE_KIND_FLASH_OUT ? "tip.flash_out" : "tip.decode", 3, args);
}

static void tip_cache(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    Lang lang = cell->lang;
    int row = cell->row;
    char tb[16], lb[16];
    snprintf(tb, sizeof tb, "%d", row), snprintf(lb, sizeof lb, "%d", tr->len_q - 1);
    const char *args[] = {tb, lb};
    tip_key(o, lang, "tip.cache", 2, args);
}

// What each way writes to memory: the Lq×Lk matrix, or the tiles' outputs and m, l.
static void note_flash(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    const Stage *st = &tr->stages[s];
    char a[32], b[32], c[24], d[24], e[24], f[24];
    long long full = (long long)tr->batch * tr->n_heads * tr->len_q * tr->len_k;
    long long tiled = (long long)tr->batch * tr->n_heads * tr->len_q * (tr->d_v + 2);
    snprintf(a, sizeof a, "%d", tr->flash_block_q), snprintf(b, sizeof b, "%d", tr->flash_block_k);
    snprintf(c, sizeof c, "%d", (tr->len_q + tr->flash_block_q - 1) / imax(tr->flash_block_q, 1) *
                                    ((tr->len_k + tr->flash_block_k - 1) / imax(tr->flash_block_k, 1)));
    snprintf(d, sizeof d, "%lld", full), snprintf(e, sizeof e, "%lld", tiled);
    snprintf(f, sizeof f, "%d", tr->len_k);
    const char *args[] = {a, b, c, d, e, f};
    i18n_fmt(out, n, lang, st->kind == STAGE_KIND_FLASH_OUT ? "fx.flash_memory" : "fx.flash_tiles", 6, args);
}

// The cache's heads against the query heads.
static void note_cache(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    const Stage *st = &tr->stages[s];
    char a[32], b[32];
    snprintf(a, sizeof a, "%d", st->t.shape[1]), snprintf(b, sizeof b, "%d", tr->n_heads);
    const char *args[] = {a, b};
    i18n_fmt(out, n, lang, "fx.cache", 2, args);
}

// The running max m is the largest score read so far: on the scores' scale (l is a sum of exps).
static int compared_flash(const Trace *tr, int s)
{
    return tr->stages[s].id == STAGE_FLASH_MAX ? trace_find(tr, "masked_scores") : -1;
}

const StageRecipe RECIPE_FLASH_STAT = {
    .panels = panels_flash_stat, .formula = formula_flash, .note = note_flash, .tip = tip_flash, .anim = ANIM_CELLS,
    .compared = compared_flash,
};

#define Q(k) QUIZ_BIT(QUIZ_##k)
const StageRecipe RECIPE_FLASH_OUT = {
    .panels = panels_equal, .formula = formula_flash, .note = note_flash, .tip = tip_equal, .anim = ANIM_ROWS,
    .quiz = Q(VALUE),
};

const StageRecipe RECIPE_CACHE = {
    .panels = recipe_panels_self, .formula = formula_decode, .note = note_cache, .tip = tip_cache, .anim = ANIM_ROWS,
};

const StageRecipe RECIPE_DECODE = {
    .panels = panels_equal, .formula = formula_decode, .tip = tip_equal, .anim = ANIM_ROWS, .quiz = Q(VALUE),
};
