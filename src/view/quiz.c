// quiz.c — questions from a trace (see quiz.h).
//
// Each kind is one function that picks its cell with the stage's own random
// stream, reads the answer from the trace, and writes the question and the
// explanation from i18n templates. A value's explanation is the cell's tooltip
// (explain_cell) of the frame the question is about, so the derivation a student
// reads after answering is the one the window shows on hover.
#include "quiz.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "i18n.h"
#include "layout.h"
#include "scene.h"

static const char *const KIND_NAMES[QUIZ_KIND_COUNT] = {"masked", "argmax", "sum",  "source",
                                                         "shape",  "value",  "authored", "rises"};

const char *quiz_kind_name(QuizKind k)
{
    assert((unsigned)k < QUIZ_KIND_COUNT); // a question's kind (authored ones too)
    return KIND_NAMES[k];
}

// ---- splitmix64 ---------------------------------------------------------------------------

typedef struct Rng {
    uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// A whole number in [0, n) (n ≥ 1; the modulo bias is below 2⁻³⁰ for any lesson size).
static int rng_below(Rng *r, int n) { return n <= 1 ? 0 : (int)(rng_next(r) % (uint64_t)n); }

// ---- one stage's context ------------------------------------------------------------------

typedef struct Ctx {
    const Trace *tr;
    const Lesson *ls;
    Lang lang;
    int stage;
    const Stage *st;
    Rng rng;
    int only_b, only_h; // the slice a printed page shows (a query head), the only one asked about; -1: any
    Layout L;   // the frame a question is about (explain_cell reads it)
    View v;
} Ctx;

static int n_heads_of(const Stage *st) { return st->t.rank == 4 ? st->t.shape[1] : 1; }

// The (batch, head) slice of stage s as a 2-D panel.
static PanelSpec slice_of(const Trace *tr, int s, int b, int h)
{
    PanelSpec p;
    memset(&p, 0, sizeof p);
    panel_slice(&p, &tr->stages[s].t, b, h < 0 ? 0 : h);
    return p;
}

// Lays out the frame of (stage, b, h), as the window shows it settled.
static void frame(Ctx *c, int b, int h)
{
    view_init(&c->v, c->ls, c->lang);
    c->v.stage = c->stage, c->v.batch = b < 0 ? 0 : b, c->v.head = h < 0 ? 0 : h;
    // a shared K/V head h (GQA / MQA) is the one the first of its query heads reads
    const Tensor *t = &c->st->t;
    if (h > 0 && t->rank == 4 && t->shape[1] > 0 && t->shape[1] < c->tr->n_heads && c->tr->n_heads % t->shape[1] == 0)
        c->v.head = h * (c->tr->n_heads / t->shape[1]);
    layout_compute(&c->L, c->tr, &c->v, 1280, 720);
}

// The fewest decimals the operands' cells show in the frame (at most TIP_DECIMALS):
// what a student computing from the screen reads.
static int operand_decimals(const Layout *L)
{
    int d = TIP_DECIMALS;
    for (int p = 0; p < L->n_panels; p++)
        if (p != L->result_panel && !L->image[p] && L->spec[p].decimals >= 0 && L->spec[p].decimals < d)
            d = L->spec[p].decimals;
    return d;
}

// A tolerance that accepts both the answer computed from the explanation (it adds up
// to the answer as shown: within base) and the one computed from the operands as the
// cells show them (cells_text, explain_*_as_cells): base beyond the latter's distance.
// The FFN's hidden layer applies its non-linearity to that sum, or multiplies it by the gate.
static float screen_tolerance(float x, float base, const char *cells_text, const Trace *tr, int stage)
{
    double v;
    if (!quiz_screen_value(tr, stage, cells_text, &v) || !isfinite(v)) return base;
    float t = (float)fabs(v - (double)x) + base;
    return t > base ? t : base;
}

bool quiz_screen_value(const Trace *tr, int stage, const char *text, double *val)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", text);
    // SwiGLU's "⊙ g[r,c] = s · g = h" line: the gate as written, and the sum above it
    char *gl = strstr(buf, "\n⊙ ");
    double g = 1.0, lo, hi;
    if (gl) {
        *gl = '\0';
        const char *last = NULL, *prev = NULL;
        for (const char *p = gl + 1; (p = strstr(p, " = ")) != NULL; p += 3) prev = last, last = p;
        const char *dot = prev ? strstr(prev, " · ") : NULL;
        if (!dot || dot > last) return false;
        g = strtod(dot + strlen(" · "), NULL);
    }
    if (!tip_bounds(buf, val, &lo, &hi)) return false;
    if (gl)
        *val *= g;
    else
        recipe_activate(tr, stage, val);
    return true;
}

static void fmt(char *out, size_t n, const Ctx *c, const char *key, int nargs, const char *const *args)
{
    i18n_fmt(out, n, c->lang, key, nargs, args);
}

static void append(char *out, size_t n, const char *s)
{
    size_t len = strlen(out);
    if (len + 1 < n) snprintf(out + len, n - len, "%s", s);
}

// "2" or "2 (“sat”)": a query or key position with the lesson's token.
static void pos_label(const Ctx *c, bool key, int i, char *buf, size_t n)
{
    char ib[16];
    snprintf(ib, sizeof ib, "%d", i);
    char tmp[16];
    View v;
    view_init(&v, c->ls, c->lang);
    const char *tok = panel_axis_label(&v, key ? AXIS_KEY : AXIS_QUERY, i, tmp, sizeof tmp);
    if (tok == tmp) {
        snprintf(buf, n, "%s", ib);
    } else {
        const char *args[] = {ib, tok};
        fmt(buf, n, c, "quiz.token", 2, args);
    }
}

// "2, 3, 5"
static void list_text(const float *v, int n, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        char b[24];
        snprintf(b, sizeof b, i ? ", %d" : "%d", (int)v[i]);
        append(buf, len, b);
    }
}

static void index_text(const Stage *st, int b, int h, int r, int col, char *buf, size_t n)
{
    if (st->t.rank == 4)
        snprintf(buf, n, "%d,%d,%d,%d", b, h, r, col);
    else if (st->t.rank == 2) // (a weight's gradient, (out, in))
        snprintf(buf, n, "%d,%d", r, col);
    else
        snprintf(buf, n, "%d,%d,%d", b, r, col);
}

static void begin(Ctx *c, QuizQuestion *q, QuizKind k, int b, int h, int n_cell, int r, int col)
{
    memset(q, 0, sizeof *q);
    q->stage = c->stage, q->kind = k, q->batch = b, q->head = h;
    q->n_cell = n_cell, q->cell[0] = r, q->cell[1] = col;
    q->decimals = -1;
    int len = snprintf(q->id, sizeof q->id, "%s-%s", c->st->name, quiz_kind_name(k));
    if (b >= 0) len += snprintf(q->id + len, sizeof q->id - (size_t)len, "-b%d", b);
    if (h >= 0) len += snprintf(q->id + len, sizeof q->id - (size_t)len, "-h%d", h);
    for (int i = 0; i < n_cell; i++) len += snprintf(q->id + len, sizeof q->id - (size_t)len, "-%d", q->cell[i]);
}

// The stage's head that query head h shows (a shared K/V head: GQA / MQA).
static int stage_head(const Ctx *c, int h)
{
    int H = n_heads_of(c->st);
    return H < c->tr->n_heads && H > 0 && c->tr->n_heads % H == 0 ? h / (c->tr->n_heads / H) : h;
}

// A random slice, or the only one asked about (drawn all the same: the other choices
// stay those of the unrestricted questions).
static void pick_slice(Ctx *c, int *b, int *h)
{
    *b = rng_below(&c->rng, c->tr->batch);
    *h = c->st->t.rank == 4 ? rng_below(&c->rng, n_heads_of(c->st)) : -1;
    if (c->only_b >= 0) *b = c->only_b;
    if (c->only_h >= 0 && *h >= 0) *h = stage_head(c, c->only_h);
}

// Every (batch, head) slice of the stage once, from a random one on: where a question
// looks for a row that suits it (a clear argmax, a finite sum, NaN rows).
typedef struct SliceWalk {
    int b0, h0, H, n, k;
} SliceWalk;

static void walk_start(Ctx *c, SliceWalk *w)
{
    pick_slice(c, &w->b0, &w->h0);
    w->H = n_heads_of(c->st), w->n = c->tr->batch * w->H, w->k = 0;
    if (c->only_b >= 0 && (c->only_h >= 0 || w->H == 1)) w->n = 1; // the printed slice alone
}

// The next slice (b, h; h -1 without heads) and its panel; false when all were seen
// (the walk then starts over, for a second pass).
static bool walk_next(const Ctx *c, SliceWalk *w, int *b, int *h, PanelSpec *p)
{
    if (w->k >= w->n) {
        w->k = 0;
        return false;
    }
    int sl = (w->b0 * w->H + (w->h0 < 0 ? 0 : w->h0) + w->k++) % (c->tr->batch * w->H);
    *b = sl / w->H, *h = c->st->t.rank == 4 ? sl % w->H : -1;
    *p = slice_of(c->tr, c->stage, *b, *h);
    return true;
}

// Every row of every slice once, each slice's rows from a random one on (r0, drawn
// after the slice: the same draws as before there was a row walk); false when all were
// seen, and the walk starts over for a second pass.
typedef struct RowWalk {
    SliceWalk w;
    int r0, i, b, h;
    bool have;
    PanelSpec p;
} RowWalk;

static void rows_start(Ctx *c, RowWalk *rw)
{
    walk_start(c, &rw->w);
    rw->r0 = rng_below(&c->rng, c->tr->len_q);
    rw->have = false;
}

static bool rows_next(const Ctx *c, RowWalk *rw, int *b, int *h, int *r, const PanelSpec **p)
{
    while (!rw->have || rw->i >= rw->p.rows) {
        if (!walk_next(c, &rw->w, &rw->b, &rw->h, &rw->p)) {
            rw->have = false;
            return false;
        }
        rw->have = true, rw->i = 0;
    }
    *b = rw->b, *h = rw->h, *p = &rw->p;
    *r = (rw->r0 + rw->i++) % rw->p.rows;
    return true;
}

static bool row_has_nan(const PanelSpec *p, int r)
{
    for (int j = 0; j < p->cols; j++)
        if (isnan(panel_value(p, r, j))) return true;
    return false;
}

// ---- the kinds ----------------------------------------------------------------------------

// Whether a shape question at stage s would repeat: a projection keeps its input's shape
// (x·Wᵀ + b with a square W: nothing to work out), or an earlier stage of its kind
// makes the same shape from the same shapes (k_proj after q_proj, k_heads and v_heads after
// q_heads, layer 1 after layer 0): that shape was asked there. (Issue 35: 9 of the classic
// lesson's 19 questions asked a shape, most of them the same one again.)
static bool shape_repeats(const Trace *tr, int s)
{
    const Stage *st = &tr->stages[s];
    bool as_operands = true, any = false;
    for (int k = 0; k < TRACE_MAX_OPERANDS; k++) {
        int o = st->operands[k];
        if (o < 0 || !tensor_present(&tr->stages[o].t)) continue;
        any = true;
        as_operands &= tensor_same_shape(&tr->stages[o].t, &st->t);
    }
    if (any && as_operands && st->kind == STAGE_KIND_PROJECTION) return true;
    for (int e = 0; e < s; e++) {
        const Stage *ea = &tr->stages[e];
        if (ea->kind != st->kind || !tensor_present(&ea->t) || !tensor_same_shape(&ea->t, &st->t)) continue;
        bool same = true;
        for (int k = 0; k < TRACE_MAX_OPERANDS && same; k++) {
            int a = ea->operands[k], b = st->operands[k];
            if ((a < 0) != (b < 0)) same = false;
            else if (a >= 0) same = tensor_same_shape(&tr->stages[a].t, &tr->stages[b].t);
        }
        if (same) return true;
    }
    return false;
}

static bool ask_shape(Ctx *c, QuizQuestion *q)
{
    const Tensor *t = &c->st->t;
    if (!tensor_present(t) || shape_repeats(c->tr, c->stage)) return false;
    begin(c, q, QUIZ_SHAPE, -1, -1, 0, 0, 0);
    q->list = true, q->n_answer = t->rank;
    for (int d = 0; d < t->rank; d++) q->answer[d] = (float)t->shape[d];
    char fx[320], shape[64], ops[256] = "";
    scene_formula(c->tr, c->stage, c->lang, fx, sizeof fx);
    tensor_shape_str(t, shape, sizeof shape);
    for (int k = 0; k < TRACE_MAX_OPERANDS; k++) {
        int o = c->st->operands[k];
        if (o < 0 || !tensor_present(&c->tr->stages[o].t)) continue;
        char sh[64], one[128];
        tensor_shape_str(&c->tr->stages[o].t, sh, sizeof sh);
        snprintf(one, sizeof one, "%s%s %s", ops[0] ? ", " : "", c->tr->stages[o].name, sh);
        append(ops, sizeof ops, one);
    }
    const char *qa[] = {ops, c->st->name};   // not the formula: a view(…) or reshape(…) would give it away
    fmt(q->question, sizeof q->question, c, "quiz.shape", 2, qa);
    const char *ea[] = {fx, ops, c->st->name, shape};
    fmt(q->explanation, sizeof q->explanation, c, "quiz.shape_why", 4, ea);
    return true;
}

static bool ask_value(Ctx *c, QuizQuestion *q)
{
    int b, h;
    pick_slice(c, &b, &h);
    PanelSpec p = slice_of(c->tr, c->stage, b, h);
    long total = (long)p.rows * p.cols;
    if (total <= 0) return false;
    long start = rng_below(&c->rng, (int)total);
    for (long k = 0; k < total; k++) {
        long i = (start + k) % total;
        int r = (int)(i / p.cols), col = (int)(i % p.cols);
        float x = panel_value(&p, r, col);
        if (!isfinite(x)) continue; // NaN is asked about by the masked kind, never typed as a value
        begin(c, q, QUIZ_VALUE, b, h, 2, r, col);
        q->n_answer = 1, q->answer[0] = x, q->decimals = QUIZ_ASK_DECIMALS;
        q->tolerance = fmaxf(QUIZ_VALUE_TOLERANCE, QUIZ_VALUE_TOLERANCE * fabsf(x));
        char fx[320], idx[64];
        scene_formula(c->tr, c->stage, c->lang, fx, sizeof fx);
        index_text(c->st, b, h, r, col, idx, sizeof idx);
        const char *qa[] = {fx, recipe_symbol(c->tr, c->stage, c->lang), idx};
        fmt(q->question, sizeof q->question, c, "quiz.value", 3, qa);
        frame(c, b, h);
        explain_cell(c->tr, &c->v, &c->L, c->L.result_panel, r, col, q->explanation, sizeof q->explanation);
        char cells[sizeof q->explanation];
        explain_cell_as_cells(c->tr, &c->v, &c->L, c->L.result_panel, r, col, operand_decimals(&c->L), cells,
                              sizeof cells);
        q->tolerance = screen_tolerance(x, q->tolerance, cells, c->tr, c->stage);
        if (operand_decimals(&c->L) != 2) { // … and as 2 decimals read them (a panel too small for numbers: its tooltip's)
            explain_cell_as_cells(c->tr, &c->v, &c->L, c->L.result_panel, r, col, 2, cells, sizeof cells);
            q->tolerance = screen_tolerance(x, q->tolerance, cells, c->tr, c->stage);
        }
        return true;
    }
    return false;
}

// The largest weight of row r and the gap to the second largest; false for a NaN row.
static bool row_argmax(const PanelSpec *p, int r, int *arg, float *gap)
{
    float best = -INFINITY, second = -INFINITY;
    *arg = -1;
    for (int j = 0; j < p->cols; j++) {
        float x = panel_value(p, r, j);
        if (isnan(x)) return false;
        if (*arg < 0 || x > best) {
            second = best, best = x, *arg = j;
        } else if (x > second) {
            second = x;
        }
    }
    *gap = p->cols > 1 ? best - second : INFINITY;
    return *arg >= 0;
}

// The scores the softmax reads as the frame names them (masked_scores only with a mask).
static int scores_stage(const Trace *tr, int softmax)
{
    int s = tr->stages[softmax].operands[0];
    if (!tr->mask_kind && s >= 0 && tr->stages[s].operands[0] >= 0) s = tr->stages[s].operands[0];
    return s;
}

static bool ask_argmax(Ctx *c, QuizQuestion *q)
{
    RowWalk w;
    rows_start(c, &w);
    int b, h, r;
    const PanelSpec *p;
    // a clear winner first (a gap a student can see in the scores), else any unique one
    for (int pass = 0; pass < 2; pass++)
        while (rows_next(c, &w, &b, &h, &r, &p)) {
            int arg;
            float gap;
            if (!row_argmax(p, r, &arg, &gap) || !(pass == 0 ? gap >= 0.01f : gap > 0.0f)) continue;
            begin(c, q, QUIZ_ARGMAX, b, h, 1, r, 0);
            q->n_answer = 1, q->answer[0] = (float)arg;
            char hb[16], bb[16], qb[160], kb[160], rb[16], wb[32], jb[16], sb[32];
            snprintf(hb, sizeof hb, "%d", h < 0 ? 0 : h), snprintf(bb, sizeof bb, "%d", b);
            snprintf(rb, sizeof rb, "%d", r), snprintf(jb, sizeof jb, "%d", arg);
            pos_label(c, false, r, qb, sizeof qb), pos_label(c, true, arg, kb, sizeof kb);
            const char *qa[] = {hb, bb, qb};
            fmt(q->question, sizeof q->question, c, "quiz.argmax", 3, qa);
            int so = scores_stage(c->tr, c->stage);
            PanelSpec sp = slice_of(c->tr, so, b, h);
            tip_number(panel_value(p, r, arg), wb, sizeof wb);
            tip_number(panel_value(&sp, r, arg), sb, sizeof sb);
            const char *ea[] = {rb, wb, kb, recipe_symbol(c->tr, so, c->lang), jb, sb};
            fmt(q->explanation, sizeof q->explanation, c, "quiz.argmax_why", 6, ea);
            return true;
        }
    return false;
}

static bool ask_sum(Ctx *c, QuizQuestion *q)
{
    RowWalk w;
    rows_start(c, &w);
    int b, h, r;
    const PanelSpec *p;
    while (rows_next(c, &w, &b, &h, &r, &p)) {
        if (row_has_nan(p, r)) continue;
        float sum = 0.0f; // in index order, as the Σ column adds them
        for (int j = 0; j < p->cols; j++) sum += panel_value(p, r, j);
        if (sum == 0.0f && c->tr->masked_rows == MASKED_ROWS_ZERO) continue; // a fully masked row's 0s: no softmax
        begin(c, q, QUIZ_SUM, b, h, 1, r, 0);
        q->n_answer = 1, q->answer[0] = sum, q->tolerance = QUIZ_VALUE_TOLERANCE, q->decimals = QUIZ_ASK_DECIMALS;
        char rb[16], bb[16], hb[16];
        snprintf(rb, sizeof rb, "%d", r), snprintf(bb, sizeof bb, "%d", b), snprintf(hb, sizeof hb, "%d", h < 0 ? 0 : h);
        const char *qa[] = {rb, bb, hb, c->st->name};
        fmt(q->question, sizeof q->question, c, "quiz.sum", 4, qa);
        frame(c, b, h);
        explain_row_sum(c->tr, &c->v, &c->L, c->L.result_panel, r, q->explanation, sizeof q->explanation);
        char cells[sizeof q->explanation]; // the row as its cells show it (the result's own decimals)
        int rd = c->L.spec[c->L.result_panel].decimals;
        explain_row_sum_as_cells(c->tr, &c->v, &c->L, c->L.result_panel, r, rd >= 0 && rd < TIP_DECIMALS ? rd : TIP_DECIMALS,
                                 cells, sizeof cells);
        q->tolerance = screen_tolerance(sum, q->tolerance, cells, NULL, -1);
        char why[512];
        fmt(why, sizeof why, c, "quiz.sum_why", 0, NULL);
        append(q->explanation, sizeof q->explanation, "\n");
        append(q->explanation, sizeof q->explanation, why);
        return true;
    }
    return false;
}

// The mask stage a masking or softmax stage reads (through masked_scores), or -1.
static int mask_stage(const Trace *tr, int s)
{
    if (!tr->mask_kind || s < 0) return -1;
    if (tr->stages[s].kind == STAGE_KIND_SOFTMAX) s = tr->stages[s].operands[0];
    return s >= 0 && tr->stages[s].kind == STAGE_KIND_MASKED ? tr->stages[s].operands[1] : -1;
}

// masked_scores: which keys the mask removes for one query.
static bool ask_masked_row(Ctx *c, QuizQuestion *q, int mi)
{
    int b0, h;
    pick_slice(c, &b0, &h);
    int r0 = rng_below(&c->rng, c->tr->len_q);
    for (int k = 0; k < (c->only_b >= 0 ? 1 : c->tr->batch); k++) {
        int b = (b0 + k) % c->tr->batch;
        PanelSpec m = slice_of(c->tr, mi, b, 0);
        for (int i = 0; i < m.rows; i++) {
            int r = (r0 + i) % m.rows, n = 0;
            for (int j = 0; j < m.cols; j++) n += panel_value(&m, r, j) == 0.0f;
            if (n < 1 || n > QUIZ_MAX_LIST) continue;
            begin(c, q, QUIZ_MASKED, b, h, 1, r, 0);
            q->list = q->unordered = true;
            for (int j = 0; j < m.cols; j++)
                if (panel_value(&m, r, j) == 0.0f) q->answer[q->n_answer++] = (float)j;
            char bb[16], rb[16], qb[160], lb[256], fb[32];
            snprintf(bb, sizeof bb, "%d", b), snprintf(rb, sizeof rb, "%d", r);
            pos_label(c, false, r, qb, sizeof qb);
            list_text(q->answer, q->n_answer, lb, sizeof lb);
            recipe_fill_text(c->tr->mask_fill, fb, sizeof fb);
            const char *qa[] = {bb, qb};
            fmt(q->question, sizeof q->question, c, "quiz.masked_row", 2, qa);
            const char *ea[] = {bb, rb, lb, fb};
            fmt(q->explanation, sizeof q->explanation, c, "quiz.masked_row_why", 4, ea);
            return true;
        }
    }
    return false;
}

static bool mask_row_full(const PanelSpec *m, int r)
{
    for (int j = 0; j < m->cols; j++)
        if (panel_value(m, r, j) != 0.0f) return false;
    return true;
}

// attn: which rows come out NaN (every key masked with −∞, or a NaN upstream), else
// which rows come out uniform (every key masked with the same finite fill).
static bool ask_masked_rows(Ctx *c, QuizQuestion *q, int mi)
{
    SliceWalk w;
    walk_start(c, &w);
    int b, h;
    PanelSpec p;
    for (int pass = 0; pass < 2; pass++) { // NaN rows first, else uniform rows
        bool nan = pass == 0;
        // gpt-oss's sink, model.masked_rows "zero": a row masked whole is 0s, not uniform
        if (!nan && (c->st->weight || c->tr->masked_rows == MASKED_ROWS_ZERO)) break;
        while (walk_next(c, &w, &b, &h, &p)) {
            PanelSpec m = mi >= 0 ? slice_of(c->tr, mi, b, 0) : p;
            float rows[QUIZ_MAX_LIST];
            int n = 0;
            bool all_masked = true;
            for (int r = 0; r < p.rows && n <= QUIZ_MAX_LIST; r++) {
                bool hit = nan ? row_has_nan(&p, r) : mi >= 0 && mask_row_full(&m, r) && !row_has_nan(&p, r);
                if (!hit) continue;
                if (n < QUIZ_MAX_LIST) rows[n] = (float)r;
                n++;
                if (mi < 0 || !mask_row_full(&m, r)) all_masked = false;
            }
            if (n < 1 || n > QUIZ_MAX_LIST) continue;
            begin(c, q, QUIZ_MASKED, b, h, 0, 0, 0);
            q->list = q->unordered = true;
            q->n_answer = n;
            memcpy(q->answer, rows, (size_t)n * sizeof(float));
            char bb[16], hb[16], lk[16], lb[256], fb[32], ub[32];
            snprintf(bb, sizeof bb, "%d", b), snprintf(hb, sizeof hb, "%d", h < 0 ? 0 : h);
            snprintf(lk, sizeof lk, "%d", p.cols);
            list_text(rows, n, lb, sizeof lb);
            recipe_fill_text(c->tr->mask_fill, fb, sizeof fb);
            tip_number(1.0f / (float)p.cols, ub, sizeof ub);
            const char *qa[] = {bb, hb, lk, c->st->name};
            fmt(q->question, sizeof q->question, c, nan ? "quiz.masked_nan" : "quiz.masked_uniform", 4, qa);
            const char *ea[] = {lb, fb, lk, ub};
            const char *why = !nan ? "quiz.masked_uniform_why"
                              : all_masked && isinf(c->tr->mask_fill) ? "quiz.masked_nan_why"
                                                                      : "quiz.nan_other_why";
            fmt(q->explanation, sizeof q->explanation, c, why, 4, ea);
            return true;
        }
    }
    return false;
}

static bool ask_masked(Ctx *c, QuizQuestion *q)
{
    int mi = mask_stage(c->tr, c->stage);
    if (c->st->kind == STAGE_KIND_MASKED) return mi >= 0 && ask_masked_row(c, q, mi);
    return ask_masked_rows(c, q, mi);
}

static bool ask_source(Ctx *c, QuizQuestion *q)
{
    int o = c->st->operands[0];
    if (o < 0 || c->tr->stages[o].t.rank != 4 || c->st->t.rank != 3) return false;
    int dv = c->tr->stages[o].t.shape[3];
    int b = rng_below(&c->rng, c->tr->batch);
    int r = rng_below(&c->rng, c->st->t.shape[1]), col = rng_below(&c->rng, c->st->t.shape[2]);
    if (c->only_b >= 0) b = c->only_b;
    begin(c, q, QUIZ_SOURCE, b, -1, 2, r, col);
    q->list = true, q->n_answer = 2;
    q->answer[0] = (float)(col / dv), q->answer[1] = (float)(col % dv);
    char cb[16], bb[16], rb[16], db[16], hb[16], jb[16];
    snprintf(cb, sizeof cb, "%d", col), snprintf(bb, sizeof bb, "%d", b), snprintf(rb, sizeof rb, "%d", r);
    snprintf(db, sizeof db, "%d", dv), snprintf(hb, sizeof hb, "%d", col / dv), snprintf(jb, sizeof jb, "%d", col % dv);
    const char *qa[] = {cb, bb, rb, c->st->name, c->tr->stages[o].name};
    fmt(q->question, sizeof q->question, c, "quiz.source", 5, qa);
    frame(c, b, 0);
    explain_cell(c->tr, &c->v, &c->L, c->L.result_panel, r, col, q->explanation, sizeof q->explanation);
    char why[512];
    const char *ea[] = {db, cb, hb, jb, c->st->name};
    fmt(why, sizeof why, c, "quiz.source_why", 5, ea);
    append(q->explanation, sizeof q->explanation, "\n");
    append(q->explanation, sizeof q->explanation, why);
    return true;
}

typedef bool (*AskFn)(Ctx *c, QuizQuestion *q);
// The backward view's dS (recipe_grad.c): in row r, the key whose score gets the most negative
// gradient, so rises most under gradient descent (s ← s − η·∂L/∂s); a clear one first.
static bool ask_rises(Ctx *c, QuizQuestion *q)
{
    RowWalk w;
    rows_start(c, &w);
    int b, h, r;
    const PanelSpec *p;
    for (int pass = 0; pass < 2; pass++)
        while (rows_next(c, &w, &b, &h, &r, &p)) {
            int lo = -1;
            float second = INFINITY;
            for (int j = 0; j < p->cols; j++) {
                float x = panel_value(p, r, j);
                if (lo < 0 || x < panel_value(p, r, lo)) second = lo < 0 ? INFINITY : panel_value(p, r, lo), lo = j;
                else if (x < second) second = x;
            }
            const float g = lo >= 0 ? panel_value(p, r, lo) : NAN;
            if (!(g < 0.0f) || !(pass == 0 ? second - g >= 0.005f : second > g)) continue;
            begin(c, q, QUIZ_RISES, b, h, 1, r, 0);
            q->n_answer = 1, q->answer[0] = (float)lo;
            char hb[16], bb[16], qb[160], kb[160], rb[16], gb[32];
            snprintf(hb, sizeof hb, "%d", h < 0 ? 0 : h), snprintf(bb, sizeof bb, "%d", b), snprintf(rb, sizeof rb, "%d", r);
            pos_label(c, false, r, qb, sizeof qb), pos_label(c, true, lo, kb, sizeof kb);
            tip_number(g, gb, sizeof gb);
            const char *qa[] = {hb, bb, qb};
            fmt(q->question, sizeof q->question, c, "quiz.rises", 3, qa);
            const char *ea[] = {kb, gb, rb};
            fmt(q->explanation, sizeof q->explanation, c, "quiz.rises_why", 3, ea);
            return true;
        }
    return false;
}

static const AskFn ASK[QUIZ_KIND_COUNT] = {
    [QUIZ_MASKED] = ask_masked, [QUIZ_ARGMAX] = ask_argmax, [QUIZ_SUM] = ask_sum, [QUIZ_RISES] = ask_rises,
    [QUIZ_SOURCE] = ask_source, [QUIZ_SHAPE] = ask_shape,   [QUIZ_VALUE] = ask_value,
};

// ---- the list -----------------------------------------------------------------------------

static int stage_questions(const Trace *tr, const Lesson *ls, Lang lang, uint64_t seed, int stage, int only_b, int only_h,
                           QuizQuestion *out, int max)
{
    assert(stage >= 0 && stage < tr->n); // generate's loop; quiz_stage's caller's stage
    if (max <= 0) return 0; // the list is full
    Ctx c; // ~7 KB with its frame: on the stack, nothing allocated
    c.tr = tr, c.ls = ls, c.lang = lang, c.stage = stage, c.st = &tr->stages[stage];
    c.only_b = only_b, c.only_h = only_h;
    unsigned kinds = recipe_of(c.st->kind)->quiz;
    int n = 0, cap = max < QUIZ_MAX_PER_STAGE ? max : QUIZ_MAX_PER_STAGE;
    for (int k = 0; k < QUIZ_KIND_COUNT && n < cap; k++) {
        if (!(kinds & QUIZ_BIT(k))) continue;
        // one stream per stage and kind: what one kind draws never moves another's choice
        c.rng.s = seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(stage + 1)) ^ (0xD1B54A32D192ED03ull * (uint64_t)(k + 1));
        if (ASK[k](&c, &out[n])) n++;
    }
    return n;
}

int quiz_stage(const Trace *tr, const Lesson *ls, Lang lang, uint64_t seed, int stage, QuizQuestion *out, int max)
{
    return stage_questions(tr, ls, lang, seed, stage, -1, -1, out, max);
}

static int generate(const Trace *tr, const Lesson *ls, Lang lang, uint64_t seed, int only_b, int only_h, QuizQuestion *out,
                    int max)
{
    if (max > QUIZ_MAX_QUESTIONS) max = QUIZ_MAX_QUESTIONS;
    int n = 0, first = 0;
    // with the backward view (backward_trace_append): its stages' questions (the forward's are the
    // lesson's without it)
    while (first < tr->n && tr->stages[first].step != STEP_BACKWARD) first++;
    if (first == tr->n) first = 0;
    for (int s = first; s < tr->n && n < max; s++) {
        // an encoder–decoder: each kind of block asked about once (its first: encoder, decoder self, cross), so that
        // the questions reach the decoder (the encoder's own output, enc_norm, too)
        const int l = tr->stages[s].layer;
        if (tr->encoder_blocks > 0 && l > 0 && tr->stages[s].id != STAGE_ENC_NORM &&
            trace_block(tr, l) == trace_block(tr, l - (trace_block(tr, l) == BLOCK_ENCODER ? 1 : 2)))
            continue;
        n += stage_questions(tr, ls, lang, seed, s, only_b, only_h, out + n, max - n);
    }
    return n;
}

int quiz_generate(const Trace *tr, const Lesson *ls, Lang lang, uint64_t seed, QuizQuestion *out, int max)
{
    return generate(tr, ls, lang, seed, -1, -1, out, max);
}

int quiz_authored(const Trace *tr, const Lesson *ls, Lang lang, QuizQuestion *out, int max)
{
    int n = 0;
    for (int i = 0; ls && i < ls->n_quiz && n < max; i++) {
        const LessonQuiz *a = &ls->quiz[i];
        int s = trace_find(tr, a->stage);
        if (s < 0) continue; // lesson_check_quiz refuses such a lesson
        QuizQuestion *q = &out[n++];
        memset(q, 0, sizeof *q);
        _Static_assert(LESSON_QUIZ_MAX_QUESTION < sizeof q->question && LESSON_QUIZ_MAX_EXPLANATION < sizeof q->explanation,
                       "a lesson's question fits whole");
        snprintf(q->id, sizeof q->id, "%s", a->id);
        q->stage = s;
        q->batch = a->batch, q->head = a->head;
        q->kind = QUIZ_AUTHORED;
        q->n_cell = a->n_cell, q->cell[0] = a->cell[0], q->cell[1] = a->cell[1];
        q->list = a->list;
        q->n_answer = a->n_answer < QUIZ_MAX_LIST ? a->n_answer : QUIZ_MAX_LIST;
        memcpy(q->answer, a->answer, (size_t)q->n_answer * sizeof(float));
        q->tolerance = a->tolerance;
        q->unordered = a->unordered;
        q->decimals = -1;
        const char *qt = a->question[lang] ? a->question[lang] : a->question[LANG_EN];
        const char *ex = a->explanation[lang] ? a->explanation[lang] : a->explanation[LANG_EN];
        snprintf(q->question, sizeof q->question, "%s", qt ? qt : "");
        snprintf(q->explanation, sizeof q->explanation, "%s", ex ? ex : "");
    }
    return n;
}

int quiz_all(const Trace *tr, const Lesson *ls, Lang lang, uint64_t seed, bool authored, QuizQuestion *out, int max)
{
    return quiz_all_in_slice(tr, ls, lang, seed, authored, -1, -1, out, max);
}

int quiz_all_in_slice(const Trace *tr, const Lesson *ls, Lang lang, uint64_t seed, bool authored, int batch, int head,
                      QuizQuestion *out, int max)
{
    int n = generate(tr, ls, lang, seed, batch, head, out, max);
    if (!authored || n >= max) return n;
    int k = quiz_authored(tr, ls, lang, out + n, max - n);
    int kept = 0;
    for (int i = n; i < n + k; i++) { // an author's question about another slice: not asked
        const QuizQuestion *a = &out[i];
        if ((batch < 0 || a->batch < 0 || a->batch == batch) && (head < 0 || a->head < 0 || a->head == head))
            out[n + kept++] = *a;
    }
    k = kept;
    // each authored question moves back to the end of its stage's (stable insertion)
    for (int i = n; i < n + k; i++) {
        QuizQuestion t = out[i];
        int j = i;
        while (j > 0 && out[j - 1].stage > t.stage) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = t;
    }
    return n + k;
}

// ---- answers ------------------------------------------------------------------------------

void quiz_answer_text(const QuizQuestion *q, char *out, size_t n)
{
    out[0] = '\0';
    for (int i = 0; i < q->n_answer; i++) {
        char b[48];
        float a = q->answer[i];
        if (isnan(a)) snprintf(b, sizeof b, "NaN");
        else if (q->decimals >= 0) snprintf(b, sizeof b, "%.*f", q->decimals, (double)a);
        else if (a == floorf(a) && fabsf(a) < 1e7f) snprintf(b, sizeof b, "%d", (int)a);
        else if (q->tolerance >= 0.005f) snprintf(b, sizeof b, "%.2f", (double)a);
        else snprintf(b, sizeof b, "%.6g", (double)a);
        if (b[0] == '-' && strspn(b + 1, "0.") == strlen(b + 1)) memmove(b, b + 1, strlen(b)); // "-0.00"
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", i == 0 ? "" : q->kind == QUIZ_SHAPE ? " × " : ", ", b);
    }
    size_t len = strlen(out);
    if ((q->kind == QUIZ_SOURCE || (q->list && q->kind == QUIZ_AUTHORED && !q->unordered)) && len + 3 <= n) {
        memmove(out + 1, out, len + 1); // "(head, column)"
        out[0] = '(', out[len + 1] = ')', out[len + 2] = '\0';
    }
}

static void sort_floats(float *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            float t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
}

bool quiz_check(const QuizQuestion *q, const float *given, int n)
{
    if (n != q->n_answer || n < 1 || n > QUIZ_MAX_LIST) return false;
    if (!q->list) return fabsf(given[0] - q->answer[0]) <= q->tolerance;
    float a[QUIZ_MAX_LIST], g[QUIZ_MAX_LIST];
    memcpy(a, q->answer, (size_t)n * sizeof(float));
    memcpy(g, given, (size_t)n * sizeof(float));
    if (q->unordered) sort_floats(a, n), sort_floats(g, n);
    for (int i = 0; i < n; i++)
        if (a[i] != g[i]) return false;
    return true;
}

void quiz_shape_mistake(const QuizQuestion *q, const float *given, int n, Lang lang, char *out, size_t len)
{
    out[0] = '\0';
    if (q->kind != QUIZ_SHAPE || n < 1 || n > QUIZ_MAX_LIST || quiz_check(q, given, n)) return;
    const int r = q->n_answer;
    // one size left out: the first such dimension (the batch before the heads)
    for (int d = 0; n == r - 1 && d < r; d++) {
        bool match = true;
        for (int i = 0, k = 0; i < r && match; i++)
            if (i != d) match = given[k++] == q->answer[i];
        if (!match) continue;
        if (d > 1 || (d == 1 && r != 4)) return; // (no common name to give it)
        char size[16];
        snprintf(size, sizeof size, "%d", (int)q->answer[d]);
        const char *args[] = {size};
        i18n_fmt(out, len, lang, d == 0 ? "quiz.shape_no_batch" : "quiz.shape_no_heads", 1, args);
        return;
    }
    if (n != r || (r != 3 && r != 4)) return;
    float a[QUIZ_MAX_LIST], g[QUIZ_MAX_LIST]; // the same sizes in another order
    memcpy(a, q->answer, (size_t)n * sizeof(float));
    memcpy(g, given, (size_t)n * sizeof(float));
    sort_floats(a, n), sort_floats(g, n);
    if (memcmp(a, g, (size_t)n * sizeof(float)) != 0) return;
    const char *args[] = {r == 4 ? "(B, H, L, d)" : "(B, L, C)"};
    i18n_fmt(out, len, lang, "quiz.shape_order", 1, args);
}

bool quiz_parse_answer(const char *text, float *out, int max, int *n)
{
    *n = 0;
    const char *p = text;
    while (*p) {
        // separators: space, comma, semicolon, brackets, x and × (U+00D7)
        if (strchr(" \t,;()[]xX", *p)) {
            p++;
            continue;
        }
        if ((unsigned char)p[0] == 0xC3 && (unsigned char)p[1] == 0x97) {
            p += 2;
            continue;
        }
        char num[48];
        size_t k = 0;
        if ((unsigned char)p[0] == 0xE2 && (unsigned char)p[1] == 0x88 && (unsigned char)p[2] == 0x92) // −
            num[k++] = '-', p += 3;
        while (*p && strchr("0123456789.eE+-", *p) && k + 1 < sizeof num) num[k++] = *p++;
        num[k] = '\0';
        if (*p && strchr("0123456789.eE+-", *p)) return false; // longer than any number: never cut in two
        char *end;
        float v = strtof(num, &end);
        if (k == 0 || *end || !isfinite(v) || *n >= max) return false;
        out[(*n)++] = v;
    }
    return *n > 0;
}
