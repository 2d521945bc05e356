// recipe_loop.c — inside the loop: FlashAttention's running max and sum over key tiles and
// its output, the K/V cache, and decoding token by token.
// (recipe.h says what a recipe holds; each kind's whole recipe is here.)
#include "recipe.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "i18n.h"
#include "layout.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

// model.streaming_positions "cache" with RoPE: the cache holds the keys before RoPE (decode.c)
static bool decode_shifted(const Trace *tr) { return tr->stream_pos == STREAM_POS_CACHE && tr->rope != ROPE_NONE; }

// StreamingLLM's pos_shift: the cache's, the scores' and the output's own titles and narrations (*_shift)
static const char *narration_decode(const Trace *tr, int s)
{
    (void)s;
    return decode_shifted(tr) ? "_shift" : "";
}

// masked scores → m (or l) per key block: the tiles of each row, visited in order
static void panels_flash_stat(Layout *L, const Trace *tr, const View *v)
{
    PanelSpec *s = recipe_add_stage(L, tr, v, trace_find_near(tr, v->stage, "masked_scores"), v->head, "", READS_TILE);
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
    // (pos_shift's decode_output is not the full pass's: set beside it, not equal)
    recipe_add_stage(L, tr, v, v->stage, v->head, st->kind == STAGE_KIND_DECODE && decode_shifted(tr) ? "vs" : "=",
                     READS_NONE);
}

static void formula_flash(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)lang;
    const Stage *st = &tr->stages[s];
    if (st->kind == STAGE_KIND_FLASH_OUT)
        snprintf(out, n, "flash_out = acc / l = head_out");
    else if (st->id == STAGE_FLASH_MAX)
        snprintf(out, n, "m = max(m_old, rowmax(S_tile))");
    else if (tr->flash_acc == FLASH_ACC_FA1) // FlashAttention-1: the tile's sum against its own max m̃
        snprintf(out, n, "l = l_old·e^(m_old − m) + e^(m̃ − m)·Σ e^(S_tile − m̃)");
    else
        snprintf(out, n, "l = l_old·e^(m_old − m) + Σ e^(S_tile − m)");
}

// The largest score of row i's key block kb (the tile's own max m̃: FlashAttention-1's P and l).
static float tile_max(const Trace *tr, const float *srow, int kb)
{
    const int bk = tr->flash_block_k > 0 ? tr->flash_block_k : 1, j1 = imin(kb * bk + bk, tr->len_k);
    float mx = -INFINITY;
    for (int j = kb * bk; j < j1; j++) mx = srow[j] > mx || isnan(srow[j]) ? srow[j] : mx;
    return mx;
}

// "a×b", a in brackets when negative
static void put_times(TipOut *o, float a, float b)
{
    tip_num(o, a, true);
    tip_put(o, "×");
    tip_num(o, b, false);
}

static float check_inf(float m) { return isinf(m) && m < 0 ? 0.0f : m; } // FlashAttention's Check_inf

// model.flash_accumulator "fa1": titles and narrations of FlashAttention-1's loop (title.*_fa1, narr.*_fa1)
static const char *narration_flash(const Trace *tr, int s)
{
    (void)s;
    return tr->flash_acc == FLASH_ACC_FA1 ? "_fa1" : "";
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
        else {
            char t[24];
            snprintf(sc, sizeof sc, " / %s", recipe_scale_text(tr, t, sizeof t));
        }
        if (decode_shifted(tr)) // pos_shift: turned to their places in the cache
            snprintf(out, n, "decode_output[:, t] = softmax(RoPE(q_t, n−1)·RoPE(cache_k[%s], 0…n−1)ᵀ%s)·cache_v[%s]·W_Oᵀ",
                     span, sc, vspan);
        else
            snprintf(out, n, "decode_output[:, t] = softmax(q_t·cache_k[%s]ᵀ%s%s)·cache_v[%s]·W_Oᵀ", span, sc,
                     tr->alibi ? " + bias_t" : "", vspan);
    } else
        snprintf(out, n, "%s = cat(%s, %s_t) for t = 0 … %d", st->name, st->name, st->id == STAGE_CACHE_K ? "k" : "v",
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
    const int s = (int)(st - tr->stages);
    int ms = trace_find_near(tr, s, "masked_scores"), fm = trace_find_near(tr, s, "flash_max"),
        fl = trace_find_near(tr, s, "flash_sum");
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
    } else if (tr->flash_acc == FLASH_ACC_FA1) { // l_old·α + e^(m̃ − m)·Σ e^(s − m̃)
        const float ref = check_inf(m), mt = tile_max(tr, srow, col), tref = check_inf(mt);
        float sum = 0.0f;
        for (int j = j0; j <= j1; j++) sum += tensor_expf(srow[j] - tref);
        const float old = col > 0 ? lrow[col - 1] : 0.0f, alpha = tensor_expf(mold - ref), beta = tensor_expf(mt - ref);
        tip_number(old, x0, sizeof x0), tip_number(alpha, x1, sizeof x1), tip_number(sum, x2, sizeof x2);
        char x3[32];
        tip_number(beta, x3, sizeof x3);
        const char *args[] = {k0, k1, x0, x1, x2, x3};
        tip_key(o, lang, "tip.flash_sum_fa1", 6, args);
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
    tip_key(o, lang, st->kind == STAGE_KIND_FLASH_OUT ? "tip.flash_out" : decode_shifted(tr) ? "tip.decode_shifted" : "tip.decode",
            3, args);
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
    i18n_fmt(out, n, lang, tr->stream_pos == STREAM_POS_CACHE && tr->rope != ROPE_NONE && st->id == STAGE_CACHE_K
                               ? "fx.cache_shift" : "fx.cache", 2, args);
}

// The running max m is the largest score read so far: on the scores' scale (l is a sum of exps).
static int compared_flash(const Trace *tr, int s)
{
    return tr->stages[s].id == STAGE_FLASH_MAX ? trace_find_near(tr, s, "masked_scores") : -1;
}

const StageRecipe RECIPE_FLASH_STAT = {
    .narration = narration_flash,
    .panels = panels_flash_stat, .formula = formula_flash, .note = note_flash, .tip = tip_flash, .anim = ANIM_CELLS,
    .compared = compared_flash,
};

#define Q(k) QUIZ_BIT(QUIZ_##k)
const StageRecipe RECIPE_FLASH_OUT = {
    .narration = narration_flash,
    .panels = panels_equal, .formula = formula_flash, .note = note_flash, .tip = tip_equal, .anim = ANIM_ROWS,
    .quiz = Q(VALUE),
};

const StageRecipe RECIPE_CACHE = {
    .narration = narration_decode,
    .panels = recipe_panels_self, .formula = formula_decode, .note = note_cache, .tip = tip_cache, .anim = ANIM_ROWS,
};

const StageRecipe RECIPE_DECODE = {
    .narration = narration_decode,
    .panels = panels_equal, .formula = formula_decode, .tip = tip_equal, .anim = ANIM_ROWS, .quiz = Q(VALUE),
};

// ---- step by step: decoding's one row of scores per step, FlashAttention's tiles ----------

// Whether step `row` of batch b reads key `col` (the lesson's causal / window / sinks mask).
static bool decode_reads(const Trace *tr, int b, int row, int col)
{
    int m = trace_find(tr, "mask");
    if (m < 0) return col <= row;
    const Tensor *t = &tr->stages[m].t;
    return t->data[((size_t)b * t->shape[1] + row) * t->shape[2] + col] != 0.0f;
}


// pos_shift's score: q_t and key j turned to their places in step t's cache, their dot ÷ scale
static void tip_decode_shift(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    const int b = cell->b, h = cell->h, t = cell->row, j = cell->col, dk = tr->d_k;
    const int qh = trace_find_near(tr, (int)(cell->st - tr->stages), "q_heads");
    if (qh < 0 || !cell->t1 || dk > 256) return;
    int place = 0, n = 0; // key j's place among the kept keys, and how many are kept
    for (int k = 0; k <= t; k++)
        if (decode_reads(tr, b, t, k)) place += k < j, n++;
    float qr[256], kr[256];
    attn_rope_row(qr, tip_row(&tr->stages[qh].t, b, h, t), dk, tr->rotary_dim, n - 1, (RopeStyle)tr->rope, tr->rope_inv,
                  tr->rope_att);
    attn_rope_row(kr, tip_row(cell->t1, b, trace_kv_head(tr, cell->t1, h), j), dk, tr->rotary_dim, place,
                  (RopeStyle)tr->rope, tr->rope_inv, tr->rope_att);
    char a0[16], a1[16], a2[16], a3[16], sc[24];
    snprintf(a0, sizeof a0, "%d", t), snprintf(a1, sizeof a1, "%d", j), snprintf(a2, sizeof a2, "%d", place);
    snprintf(a3, sizeof a3, "%d", n - 1);
    const char *args[] = {a0, a1, a2, a3};
    tip_key(o, cell->lang, "tip.decode_shift", 4, args);
    recipe_scale_text(tr, sc, sizeof sc);
    tip_put(o, "\n= (");
    tip_terms(o, cell->lang, qr, 1, kr, 1, dk);
    tip_put(o, ") / ");
    tip_put(o, sc);
    tip_equals(o, cell->val);
}

static void formula_decode_step(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    if (tr->stages[s].kind == STAGE_KIND_DECODE_ATTN) {
        float sink = 0.0f;
        snprintf(out, n, "%s   %s", recipe_sink(tr, s, 0, &sink) ? "a_t = softmax([s_t, sink_h])[…, :−1]" : "a_t = softmax(s_t)",
                 i18n_get(lang, "fx.decode_unread"));
        return;
    }
    char sc[32];
    if (tr->scale == 1.0f) sc[0] = '\0';
    else if (recipe_scale_is_sqrt_dk(tr)) snprintf(sc, sizeof sc, " / √d_k");
    else {
        char t[24];
        snprintf(sc, sizeof sc, " / %s", recipe_scale_text(tr, t, sizeof t));
    }
    const bool sinks = tr->mask_kind == MASK_SLIDING && tr->sink_tokens > 0;
    const char *span = tr->mask_kind != MASK_SLIDING ? ":t+1" : sinks ? ":S] ∪ cache_k[t−W+1:t+1" : "t−W+1:t+1";
    if (decode_shifted(tr)) // StreamingLLM's pos_shift: the n kept keys turned to 0 … n − 1, q_t to n − 1
        snprintf(out, n, "s_t = RoPE(q_t, n−1)·RoPE(cache_k[%s], 0…n−1)ᵀ%s", span, sc);
    else
        snprintf(out, n, "s_t = q_t·cache_k[%s]ᵀ%s%s", span, sc, tr->alibi ? " + bias_t" : "");
}

// A key step t does not read: not in the cache yet, or out of its window — the fill.
static void tip_decode_scores(TipOut *o, const TipCell *cell)
{
    int b = cell->b, row = cell->row, col = cell->col;
    if (decode_reads(cell->tr, b, row, col)) {
        if (decode_shifted(cell->tr)) tip_decode_shift(o, cell);
        else recipe_tip_dot(o, cell);
        return;
    }
    char t[16], j[16], f[32];
    snprintf(t, sizeof t, "%d", row), snprintf(j, sizeof j, "%d", col);
    recipe_fill_text(cell->tr->mask_fill, f, sizeof f);
    const char *args[] = {t, j, f};
    tip_key(o, cell->lang, col > row ? "tip.decode_future" : "tip.decode_evicted", 3, args);
}

static void tip_decode_attn(TipOut *o, const TipCell *cell)
{
    char t[16], n[16];
    int read = 0; // the keys step t reads: t + 1, or a window's (and its sinks)
    for (int j = 0; j <= cell->row; j++) read += decode_reads(cell->tr, cell->b, cell->row, j);
    snprintf(t, sizeof t, "%d", cell->row), snprintf(n, sizeof n, "%d", read);
    const char *args[] = {t, n};
    tip_key(o, cell->lang, "tip.decode_attn", 2, args);
    tip_put(o, "\n");
    recipe_tip_softmax(o, cell);
}

// The memory a step reads: the cache rows so far (a window keeps W of them, and the sinks).
static void note_decode_step(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)s;
    char a[16], b[16], c[16];
    snprintf(a, sizeof a, "%d", tr->len_q), snprintf(b, sizeof b, "%d", tr->window);
    snprintf(c, sizeof c, "%d", tr->sink_tokens);
    const char *args[] = {a, b, c};
    const char *key = tr->mask_kind != MASK_SLIDING ? "fx.decode_rows" : tr->sink_tokens > 0 ? "fx.decode_sinks" : "fx.decode_window";
    i18n_fmt(out, n, lang, key, 3, args);
}

// ---- FlashAttention's tiles -----------------------------------------------------------------

static void panels_flash_p(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    const int bq = tr->flash_block_q, bk = tr->flash_block_k;
    if (st->id == STAGE_FLASH_SCALE) { // α from m: this block's max against the one before
        PanelSpec *m = recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_CELL);
        if (m) m->neg_inf_masked = true, m->tile_rows = bq, m->tile_cols = 1;
        PanelSpec *r = recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
        if (r) r->tile_rows = bq, r->tile_cols = 1;
        return;
    }
    PanelSpec *s = recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_CELL);
    if (s) s->tile_rows = bq, s->tile_cols = bk;
    PanelSpec *m = recipe_add_stage(L, tr, v, st->operands[1], v->head, "−", READS_NONE);
    if (m) m->neg_inf_masked = true, m->tile_rows = bq, m->tile_cols = 1;
    PanelSpec *r = recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
    if (r) r->tile_rows = bq, r->tile_cols = bk;
}

static void panels_flash_acc(Layout *L, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    const int bq = tr->flash_block_q, bk = tr->flash_block_k;
    PanelSpec *p = recipe_add_stage(L, tr, v, st->operands[0], v->head, "", READS_ROW);
    if (p) p->tile_rows = bq, p->tile_cols = bk;
    PanelSpec *vv = recipe_add_stage(L, tr, v, st->operands[1], v->head, "·", READS_NONE);
    if (vv) vv->tile_rows = bk, vv->tile_cols = tr->d_v; // its key blocks
    PanelSpec *a = recipe_add_stage(L, tr, v, st->operands[2], v->head, "α", READS_NONE);
    if (a) a->tile_rows = bq, a->tile_cols = 1;
    PanelSpec *r = recipe_add_stage(L, tr, v, v->stage, v->head, "→", READS_NONE);
    if (r) r->tile_rows = bq, r->tile_cols = tr->d_v;
}

static void formula_flash_tile(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    switch (tr->stages[s].id) {
    case STAGE_FLASH_SCALE: snprintf(out, n, "α = e^(m_old − m)   %s", i18n_get(lang, "fx.flash_first_block")); break;
    case STAGE_FLASH_P:
        snprintf(out, n, tr->flash_acc == FLASH_ACC_FA1 ? "P̃_tile = e^(S_tile − m̃)" : "P_tile = e^(S_tile − m)");
        break;
    default:
        snprintf(out, n, tr->flash_acc == FLASH_ACC_FA1 ? "O = (l_old·α·O_old + e^(m̃ − m)·P̃_tile·V_tile) / l"
                                                        : "acc = acc_old·α + P_tile·V_tile");
        break;
    }
}

// The running max of row i after key block kb, as the kernel takes it (Check_inf: −∞ as 0).
static float flash_ref(const Trace *tr, int s, int b, int h, int i, int kb, float *mold)
{
    const Tensor *M = &tr->stages[trace_find_near(tr, s, "flash_max")].t;
    const float *mrow = tip_row(M, b, h, i);
    if (mold) *mold = kb > 0 ? mrow[kb - 1] : -INFINITY;
    return isinf(mrow[kb]) && mrow[kb] < 0 ? 0.0f : mrow[kb];
}

// key's two-argument line, then "= exp(a − b)" and the cell's value
static void tip_exp_diff(TipOut *o, const TipCell *cell, const char *key, const char *const *args, float a, float b)
{
    tip_key(o, cell->lang, key, 2, args);
    tip_put(o, "\n= exp(");
    tip_num(o, a, false);
    tip_put(o, " − ");
    tip_num(o, b, true);
    tip_put(o, ")");
    tip_equals(o, cell->val);
}

static void tip_flash_tile(TipOut *o, const TipCell *cell)
{
    const Trace *tr = cell->tr;
    const Stage *st = cell->st;
    Lang lang = cell->lang;
    int b = cell->b, h = cell->h, row = cell->row, col = cell->col;
    const int bq = tr->flash_block_q > 0 ? tr->flash_block_q : 1, bk = tr->flash_block_k > 0 ? tr->flash_block_k : 1;
    const int si = (int)(st - tr->stages);
    if (trace_find_near(tr, si, "flash_max") < 0) return;
    char qb[16], kbs[16], k0[16], k1[16];
    if (st->id == STAGE_FLASH_SCALE) {
        float mold, ref = flash_ref(tr, si, b, h, row, col, &mold);
        snprintf(qb, sizeof qb, "%d", row / bq), snprintf(kbs, sizeof kbs, "%d", col);
        snprintf(k0, sizeof k0, "%d", col * bk), snprintf(k1, sizeof k1, "%d", imin(col * bk + bk, tr->len_k) - 1);
        const char *args[] = {k0, k1};
        if (isinf(mold) && mold < 0) {
            tip_key(o, lang, col == 0 ? "tip.flash_scale_first" : "tip.flash_scale_inf", 2, args);
            return;
        }
        tip_exp_diff(o, cell, "tip.flash_scale", args, mold, ref);
        return;
    }
    if (st->id == STAGE_FLASH_P) {
        const int kb = col / bk;
        float ref = flash_ref(tr, si, b, h, row, kb, NULL);
        float s = tip_row(cell->t0, b, h, row)[col];
        if (tr->flash_acc == FLASH_ACC_FA1) ref = check_inf(tile_max(tr, tip_row(cell->t0, b, h, row), kb)); // m̃
        snprintf(qb, sizeof qb, "%d", row / bq), snprintf(kbs, sizeof kbs, "%d", kb);
        const char *args[] = {qb, kbs};
        if (isinf(s) && s < 0) {
            tip_key(o, lang, "tip.flash_p_masked", 2, args);
            return;
        }
        tip_exp_diff(o, cell, tr->flash_acc == FLASH_ACC_FA1 ? "tip.flash_p_fa1" : "tip.flash_p", args, s, ref);
        return;
    }
    // acc[i, kb, d] = acc[i, kb − 1, d]·α + Σ_j P[i, j]·V[j, d] over the block's keys
    const int dv = tr->d_v, kb = col / dv, d = col % dv, j0 = kb * bk, nb = imin(j0 + bk, tr->len_k) - j0;
    const Stage *A = st, *S = &tr->stages[st->operands[2]];
    const Tensor *V = &tr->stages[st->operands[1]].t;
    const float *arow = tip_row(&A->t, b, h, row), *prow = tip_row(cell->t0, b, h, row);
    const float *vrow = tip_row(V, b, trace_kv_head(tr, V, h), 0);
    float alpha = tip_row(&S->t, b, h, row)[kb], old = kb > 0 ? arow[(kb - 1) * dv + d] : 0.0f;
    snprintf(qb, sizeof qb, "%d", row / bq), snprintf(kbs, sizeof kbs, "%d", kb);
    snprintf(k0, sizeof k0, "%d", j0), snprintf(k1, sizeof k1, "%d", j0 + nb - 1);
    const char *args[] = {qb, kbs, k0, k1};
    if (tr->flash_acc == FLASH_ACC_FA1) { // (l_old·α·O_old + e^(m̃ − m)·Σ P̃·v) / l
        const int ms = trace_find_near(tr, si, "masked_scores"), fl = trace_find_near(tr, si, "flash_sum");
        if (ms < 0 || fl < 0) return;
        const float *lrow = tip_row(&tr->stages[fl].t, b, h, row);
        const float mt = tile_max(tr, tip_row(&tr->stages[ms].t, b, h, row), kb);
        const float beta = tensor_expf(mt - flash_ref(tr, si, b, h, row, kb, NULL)), lold = kb > 0 ? lrow[kb - 1] : 0.0f;
        float pv = 0.0f;
        for (int j = 0; j < nb; j++) pv += prow[j0 + j] * vrow[(size_t)(j0 + j) * dv + d];
        tip_key(o, lang, "tip.flash_acc_fa1", 4, args);
        tip_put(o, "\n= (");
        put_times(o, lold, alpha);
        tip_put(o, "×");
        tip_num(o, old, true);
        tip_put(o, " + ");
        put_times(o, beta, pv);
        tip_put(o, ") / ");
        tip_num(o, lrow[kb], false);
        tip_equals(o, cell->val);
        return;
    }
    tip_key(o, lang, "tip.flash_acc", 4, args);
    tip_put(o, "\n= ");
    put_times(o, old, alpha);
    tip_put(o, " + ");
    tip_terms(o, lang, prow + j0, 1, vrow + (size_t)j0 * dv + d, dv, nb);
    tip_equals(o, cell->val);
}

// What lives in fast memory for one tile: a block of Q, of K and V, the tile's S and P, and
// per query row m, l and acc.
static void note_flash_tile(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    (void)s;
    char a[16], b[16], c[16], d[24];
    snprintf(a, sizeof a, "%d", tr->flash_block_q), snprintf(b, sizeof b, "%d", tr->flash_block_k);
    snprintf(c, sizeof c, "%d", tr->d_v);
    long long fast = (long long)tr->flash_block_q * tr->d_k + (long long)tr->flash_block_k * (tr->d_k + tr->d_v) +
                     2LL * tr->flash_block_q * tr->flash_block_k + (long long)tr->flash_block_q * (tr->d_v + 2);
    snprintf(d, sizeof d, "%lld", fast);
    const char *args[] = {a, b, c, d};
    i18n_fmt(out, n, lang, "fx.flash_fast", 4, args);
}

const StageRecipe RECIPE_DECODE_SCORES = {
    .narration = narration_decode,
    .panels = recipe_panels_scores, .formula = formula_decode_step, .note = note_decode_step, .tip = tip_decode_scores,
    .anim = ANIM_ROWS, .quiz = Q(VALUE), .key_cols = true, .mask_look = MASK_LOOK_LESSON_MASK,
};

const StageRecipe RECIPE_DECODE_ATTN = {
    .panels = recipe_panels_softmax, .formula = formula_decode_step, .note = note_decode_step, .tip = tip_decode_attn,
    .deriv_width = recipe_deriv_width_softmax, .derive = recipe_derive_softmax, .anim = ANIM_SOFTMAX,
    .quiz = Q(ARGMAX) | Q(VALUE), .key_cols = true, .scale = SCALE_PROBABILITY,
};

const StageRecipe RECIPE_FLASH_P = {
    .narration = narration_flash,
    .panels = panels_flash_p, .formula = formula_flash_tile, .note = note_flash_tile, .tip = tip_flash_tile,
    .anim = ANIM_CELLS, .quiz = Q(VALUE), .scale = SCALE_PROBABILITY,
};

const StageRecipe RECIPE_FLASH_ACC = {
    .narration = narration_flash,
    .panels = panels_flash_acc, .formula = formula_flash_tile, .note = note_flash_tile, .tip = tip_flash_tile,
    .anim = ANIM_ROWS, .quiz = Q(VALUE),
};

// ---- the loop, one step at a time (View.loop) ---------------------------------------------

static int flash_key_blocks(const Trace *tr)
{
    return tr->flash_block_k > 0 ? (tr->len_k + tr->flash_block_k - 1) / tr->flash_block_k : 0;
}

int recipe_loop_steps(const Trace *tr, int stage)
{
    assert(stage >= 0 && stage < tr->n); // a view's stage, or --stage's found by name (export.c)
    StepId step = STAGE_INFO[tr->stages[stage].id].step;
    // a linear layer's state token by token (recipe_delta.c), MLA's cache growing token by token
    if (step == STEP_DECODE || step == STEP_STATE || tr->stages[stage].id == STAGE_LATENT_CACHE) return tr->len_q;
    if (step == STEP_FLASH && tr->flash_block_q > 0 && tr->flash_block_k > 0)
        return (tr->len_q + tr->flash_block_q - 1) / tr->flash_block_q * flash_key_blocks(tr);
    return 0;
}

static LoopCell order(int idx, int now) { return idx < now ? LOOP_DONE : idx == now ? LOOP_NOW : LOOP_LATER; }

// A loop over the tokens that is not decoding's: a linear layer's state, MLA's latent cache.
static bool token_loop(const Trace *tr, int stage)
{
    return STAGE_INFO[tr->stages[stage].id].step == STEP_STATE || tr->stages[stage].id == STAGE_LATENT_CACHE;
}

// Step t of a token loop: the state's formula at t, or the latent cache's size against MHA's, GQA's, MQA's.
static void token_loop_text(const Trace *tr, const View *v, const char *a, const char *b, char *out, size_t n)
{
    const int t = v->loop, H = tr->n_heads, per = tr->mla_rank + tr->mla_rope;
    char c[16], d[16], e[16], f[16], g[16], h[16];
    snprintf(c, sizeof c, "%d", t);
    if (tr->stages[v->stage].id == STAGE_LATENT_CACHE) {
        snprintf(d, sizeof d, "%d", per), snprintf(e, sizeof e, "%d", (t + 1) * per);
        snprintf(f, sizeof f, "%d", (t + 1) * H * (tr->d_k + tr->d_v));
        snprintf(g, sizeof g, "%d", (t + 1) * (tr->d_k + tr->d_v)), snprintf(h, sizeof h, "%d", t + 1);
        const char *args[] = {a, b, c, d, e, f, g, h};
        i18n_fmt(out, n, v->lang, "loop.mla", 8, args);
        return;
    }
    snprintf(d, sizeof d, "%d", tr->d_k), snprintf(e, sizeof e, "%d", tr->d_v);
    const char *args[] = {a, b, c, d, e};
    i18n_fmt(out, n, v->lang, tr->linear_rule == LINEAR_PLAIN ? "loop.lin_plain"
                              : tr->linear_rule == LINEAR_DELTA ? "loop.lin_delta" : "loop.lin", 5, args);
}

LoopCell recipe_loop_cell(const Trace *tr, const View *v, const PanelSpec *ps, int row, int col)
{
    assert(ps->stage >= 0 && ps->stage < tr->n); // a panel's stage: of the trace it was laid out from
    const StageId pid = tr->stages[ps->stage].id;
    if (!ps->is_weight && (pid == STAGE_DECODE_SCORES || pid == STAGE_DECODE_ATTN) && (ps->transposed ? row > col : col > row))
        return LOOP_ABSENT; // step t's cache holds keys 0 … t
    if (v->loop < 0 || ps->is_weight || v->loop >= recipe_loop_steps(tr, v->stage)) return LOOP_DONE; // (--loop, the L key)
    const int r = ps->transposed ? col : row, c = ps->transposed ? row : col, k = v->loop;
    const StageId id = tr->stages[ps->stage].id;
    if (ps->folded) return order(ps->fold_row, k); // (one token's row: S_{t−1} done, S_t, k̂_t, v_t now)
    if (token_loop(tr, v->stage)) // rows are tokens: those before t done, t's now (lin_attn: its keys up to t)
        return id == STAGE_LIN_ATTN && c > k ? LOOP_LATER : order(r, k);
    if (STAGE_INFO[tr->stages[v->stage].id].step == STEP_DECODE) { // step t = k
        switch (id) {
        case STAGE_CACHE_K:
        case STAGE_CACHE_V: // row r: token r's k (v), appended at step r; a window drops it again
            if (r == k) return LOOP_NOW;
            if (r > k) return LOOP_LATER;
            return decode_reads(tr, v->batch, k, r) ? LOOP_DONE : LOOP_GONE;
        case STAGE_MASK:
            return LOOP_DONE;
        default: // rows are steps: q_t, the step's scores, weights, output
            return order(r, k);
        }
    }
    const int bq = tr->flash_block_q, bk = tr->flash_block_k, nkb = flash_key_blocks(tr), dv = tr->d_v;
    const int kb = k % nkb, qrow = r / bq * nkb;
    switch (id) {
    case STAGE_MASKED_SCORES:
    case STAGE_FLASH_P: return order(qrow + c / bk, k);
    case STAGE_FLASH_MAX:
    case STAGE_FLASH_SCALE:
    case STAGE_FLASH_SUM: return order(qrow + c, k);
    case STAGE_FLASH_ACC: return order(qrow + c / dv, k);
    case STAGE_FLASH_OUT:
    case STAGE_HEAD_OUT: return order(qrow + nkb - 1, k);
    case STAGE_V_HEADS:
    case STAGE_K_HEADS:
    case STAGE_K_ROPE: return r / bk == kb ? LOOP_NOW : LOOP_DONE; // the block the tile reads
    default: return LOOP_DONE;
    }
}

// "0–3, 7" : the keys step t of batch b reads
static void keys_read(const Trace *tr, int b, int t, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int j = 0; j <= t && len + 24 < n; j++) {
        if (!decode_reads(tr, b, t, j) || (j > 0 && decode_reads(tr, b, t, j - 1))) continue;
        int e = j;
        while (e + 1 <= t && decode_reads(tr, b, t, e + 1)) e++;
        len += (size_t)snprintf(out + len, n - len, e > j ? "%s%d–%d" : "%s%d", len ? ", " : "", j, e);
    }
}

void recipe_loop_text(const Trace *tr, const View *v, char *out, size_t n)
{
    out[0] = '\0';
    int steps = recipe_loop_steps(tr, v->stage);
    if (v->loop < 0 || v->loop >= steps) return; // not stepping (-1), or a stage of other steps (--loop, the L key)
    const int k = v->loop;
    char a[16], b[16], c[16], d[16], e[16], f[16], g[16], t[16], keys[96], rep[64] = "";
    // steps and tiles count from 1, as the step bar does ("step 3 of 6"); tokens, keys
    // and queries keep their indices, as the axes label them
    snprintf(a, sizeof a, "%d", k + 1), snprintf(b, sizeof b, "%d", steps), snprintf(t, sizeof t, "%d", k);
    if (token_loop(tr, v->stage)) {
        token_loop_text(tr, v, a, b, out, n);
        return;
    }
    if (STAGE_INFO[tr->stages[v->stage].id].step == STEP_DECODE) {
        keys_read(tr, v->batch, k, keys, sizeof keys);
        if (tr->mask_kind != MASK_SLIDING) {
            snprintf(c, sizeof c, "%d", k + 1);
            const char *args[] = {a, b, c, keys, "", "", t};
            i18n_fmt(out, n, v->lang, "loop.decode", 7, args);
            return;
        }
        // the rolling buffer: S sink slots, then W slots reused in turn
        const int S = tr->sink_tokens, W = tr->window;
        int slot = k < S ? k : S + (k - S) % W, gone = k - W >= S ? k - W : -1;
        snprintf(c, sizeof c, "%d", slot + 1), snprintf(d, sizeof d, "%d", S + W); // (slot 1 of S + W)
        if (gone >= 0) {
            snprintf(e, sizeof e, "%d", gone);
            const char *ra[] = {e};
            rep[0] = ' '; // (the language file trims a value's leading space)
            i18n_fmt(rep + 1, sizeof rep - 1, v->lang, "loop.replaces", 1, ra);
        }
        const char *args[] = {a, b, c, keys, d, rep, t};
        i18n_fmt(out, n, v->lang, "loop.decode_slot", 7, args);
        return;
    }
    const int bq = tr->flash_block_q, bk = tr->flash_block_k, nkb = flash_key_blocks(tr);
    const int q0 = k / nkb * bq, k0 = k % nkb * bk;
    snprintf(c, sizeof c, "%d", q0), snprintf(d, sizeof d, "%d", imin(q0 + bq, tr->len_q) - 1);
    snprintf(e, sizeof e, "%d", k0), snprintf(f, sizeof f, "%d", imin(k0 + bk, tr->len_k) - 1);
    snprintf(g, sizeof g, "%d", imin(q0 + bq, tr->len_q) - q0);
    const char *args[] = {a, b, c, d, e, f, g};
    i18n_fmt(out, n, v->lang, k % nkb == nkb - 1 ? "loop.flash_last" : "loop.flash", 7, args);
}

// Step t's sentence: the token, and for a linear layer its gates and how much the state moved.
static void token_loop_narration(const Trace *tr, const View *v, const char *a, const char *b, char *out, size_t n)
{
    const int t = v->loop;
    char tq[48] = "", lb[24], c[16], d[16], e[16], f[16];
    const char *lq = panel_axis_label(v, AXIS_QUERY, t, lb, sizeof lb);
    if (layout_axis_has_tokens(v, AXIS_QUERY)) snprintf(tq, sizeof tq, " (\u201C%s\u201D)", lq);
    snprintf(c, sizeof c, "%d", t);
    const int s = trace_find_near(tr, v->stage, "lin_state");
    if (tr->stages[v->stage].id == STAGE_LATENT_CACHE || s < 0) {
        snprintf(d, sizeof d, "%d", (t + 1) * (tr->mla_rank + tr->mla_rope));
        const char *args[] = {a, b, c, tq, d};
        i18n_fmt(out, n, v->lang, "loop.narr_mla", 5, args);
        return;
    }
    // how far S moved at t (the head on screen): the largest |S_t − S_{t−1}|
    const Tensor *S = &tr->stages[s].t;
    const int bb = imin(imax(v->batch, 0), S->shape[0] - 1), h = imin(imax(v->head, 0), S->shape[1] - 1);
    const int w = S->shape[3];
    const float *cur = S->data + (((size_t)bb * S->shape[1] + h) * S->shape[2] + t) * w;
    float moved = 0.0f;
    for (int i = 0; i < w; i++) moved = fmaxf(moved, fabsf(cur[i] - (t > 0 ? cur[i - w] : 0.0f)));
    snprintf(d, sizeof d, "%.2f", (double)moved);
    e[0] = f[0] = '\0';
    const int be = trace_find_near(tr, v->stage, "lin_beta"), al = trace_find_near(tr, v->stage, "lin_alpha");
    if (be >= 0) snprintf(e, sizeof e, "%.2f", (double)tr->stages[be].t.data[((size_t)bb * tr->len_q + t) * tr->n_heads + h]);
    if (al >= 0) snprintf(f, sizeof f, "%.2f", (double)tr->stages[al].t.data[((size_t)bb * tr->len_q + t) * tr->n_heads + h]);
    const char *args[] = {a, b, c, tq, d, e, f};
    i18n_fmt(out, n, v->lang, al >= 0 ? "loop.narr_lin" : be >= 0 ? "loop.narr_lin_delta" : "loop.narr_lin_plain", 7,
             args);
}

void recipe_loop_narration(const Trace *tr, const View *v, char *out, size_t n)
{
    out[0] = '\0';
    const int steps = recipe_loop_steps(tr, v->stage), k = v->loop;
    if (k < 0 || k >= steps) return; // not stepping (-1), or a stage of other steps (--loop, the L key)
    char a[16], b[16], c[16], d[16], e[16], f[16], tq[48] = "", tk[48] = "", w[24], lb[24];
    snprintf(a, sizeof a, "%d", k + 1), snprintf(b, sizeof b, "%d", steps);
    if (token_loop(tr, v->stage)) {
        token_loop_narration(tr, v, a, b, out, n);
        return;
    }
    if (STAGE_INFO[tr->stages[v->stage].id].step != STEP_DECODE) { // a tile: its queries and keys
        const int bq = tr->flash_block_q, bk = tr->flash_block_k, nkb = flash_key_blocks(tr);
        const int q0 = k / nkb * bq, k0 = k % nkb * bk;
        snprintf(c, sizeof c, "%d", q0), snprintf(d, sizeof d, "%d", imin(q0 + bq, tr->len_q) - 1);
        snprintf(e, sizeof e, "%d", k0), snprintf(f, sizeof f, "%d", imin(k0 + bk, tr->len_k) - 1);
        const char *args[] = {a, b, c, d, e, f};
        i18n_fmt(out, n, v->lang, "loop.narr_flash", 6, args);
        return;
    }
    // step t = k: the weights q_t gives the cached keys (decode_attn, the head on screen)
    const int s = trace_find_near(tr, v->stage, "decode_attn");
    if (s < 0) return;
    const Tensor *t = &tr->stages[s].t;
    if (t->rank != 4 || k >= t->shape[2]) return;
    const int bb = imin(imax(v->batch, 0), t->shape[0] - 1), h = imin(imax(v->head, 0), t->shape[1] - 1);
    const float *row = t->data + (((size_t)bb * t->shape[1] + h) * t->shape[2] + k) * t->shape[3];
    int best = 0, read = 0;
    for (int j = 0; j <= k && j < t->shape[3]; j++) {
        read += decode_reads(tr, bb, k, j);
        if (row[j] > row[best]) best = j;
    }
    const char *lq = panel_axis_label(v, AXIS_QUERY, k, lb, sizeof lb);
    if (layout_axis_has_tokens(v, AXIS_QUERY)) snprintf(tq, sizeof tq, " (\u201C%s\u201D)", lq);
    const char *lk = panel_axis_label(v, AXIS_KEY, best, lb, sizeof lb);
    if (layout_axis_has_tokens(v, AXIS_KEY)) snprintf(tk, sizeof tk, " (\u201C%s\u201D)", lk);
    snprintf(c, sizeof c, "%d", k), snprintf(d, sizeof d, "%d", read), snprintf(e, sizeof e, "%d", best);
    snprintf(w, sizeof w, "%.2f", (double)row[best]);
    const char *args[] = {a, b, c, tq, d, w, e, tk};
    i18n_fmt(out, n, v->lang, "loop.narr_decode", 8, args);
}
