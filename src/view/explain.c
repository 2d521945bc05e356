// explain.c — how each cell was computed, with the numbers (see explain.h).
#include "explain.h"

#include <assert.h>
#include <math.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "scene.h"
#include "tip.h"

static void index_str(const PanelSpec *ps, const Stage *st, int b, int r, int c, char *buf,
                      size_t n)
{
    if (ps->is_weight && ps->vector)
        snprintf(buf, n, "%d", c);
    else if (ps->is_weight)
        snprintf(buf, n, "%d,%d", r, c); // as shown: Wᵀ[in, out]
    else if (st->t.rank == 4)
        snprintf(buf, n, "%d,%d,%d,%d", st->t.shape[0] == 1 ? 0 : b, ps->head, ps->transposed ? c : r, ps->transposed ? r : c);
    else if (st->t.rank == 3)
        snprintf(buf, n, "%d,%d,%d", b, r, c);
    else
        snprintf(buf, n, "%d,%d", r, c);
}

static void write_cell(TipOut *to, const Trace *tr, const View *v, const Layout *L, int p, int row, int col)
{
    TipOut o = *to;
    char *out = o.s;
    size_t n = o.n;
    if (n) out[0] = '\0';
    if (p < 0) return; // a frame without a result panel (quiz.c passes L->result_panel)
    assert(p < L->n_panels); // a hit panel, a pin's (checked against the layout), the result
    const PanelSpec *ps = &L->spec[p];
    const Stage *st = &tr->stages[ps->stage];
    Lang lang = v->lang;
    int b = v->batch < tr->batch ? v->batch : 0, h = ps->head < 0 ? 0 : ps->head;
    float val = panel_value(ps, row, col);
    // a folded row: cell (r, c) is element r·cols + c of the stage's row fold_row
    const int trow = ps->folded ? ps->fold_row : row, tcol = ps->folded ? row * ps->cols + col : col;

    // header line: name[index] = value
    char idx[48], num[32];
    index_str(ps, st, b, trow, tcol, idx, sizeof idx);
    tip_number(val, num, sizeof num);
    if (v->delta && ps->neg_inf_masked && isinf(val) && val < 0.0f) // masked, not a difference of −∞
        snprintf(num, sizeof num, "%s", i18n_get(lang, "tip.masked_word"));
    bool masked = ps->mask && ps->mask[(size_t)row * (size_t)ps->cols + (size_t)col] == 0.0f;
    // the symbol, not the caption ("s", not "s = output + x"; Q[b,h,i,j], the head in the index)
    char sym[80];
    // (as the panel's title names it: the softmax reads "scores" when there is no mask)
    int named = ps->is_weight ? -1 : trace_find_near(tr, ps->stage, recipe_display_name(tr, ps->stage, ps->result));
    snprintf(sym, sizeof sym, "%s%s", v->delta ? "Δ" : "",
             ps->is_weight ? ps->title : recipe_symbol(tr, named >= 0 ? named : ps->stage, lang));
    const char *hdr[] = {sym, idx, num};
    tip_key(&o, lang, "tip.cell", 3, hdr);
    if (v->delta) { // a difference: no derivation of its own
        tip_put(&o, "\n");
        bool masked_delta = ps->neg_inf_masked && isinf(val) && val < 0.0f;
        tip_key(&o, lang, masked_delta ? "tip.delta_masked" : "tip.delta", 0, NULL);
        return;
    }
    if (scene_cell_changed(ps, row, col)) { // the what-if lab: what it was
        char was[32];
        tip_number(ps->ref_one ? 1.0f : ps->ref[(size_t)row * (size_t)ps->rs + (size_t)col * (size_t)ps->cs],
                       was, sizeof was);
        const char *args[] = {was};
        tip_put(&o, "\n");
        tip_key(&o, lang, "tip.was", 1, args);
    }
    if (masked && !ps->result) {
        tip_put(&o, "\n");
        tip_key(&o, lang, "tip.masked_cell", 0, NULL);
    }
    if (ps->row_axis == AXIS_KEY || ps->col_axis == AXIS_KEY) {
        int j = ps->row_axis == AXIS_KEY ? row : col;
        if (recipe_key_is_padding(tr, b, j)) {
            char jb[16];
            snprintf(jb, sizeof jb, "%d", j);
            const char *args[] = {jb};
            tip_put(&o, "\n");
            tip_key(&o, lang, "tip.padding", 1, args);
        }
    }
    if (!ps->result) return; // operands: their own stage explains them
    tip_put(&o, "\n");

    // how the result cell was computed: the recipe's
    const int *op = st->operands;
    TipCell cell = {tr, v, ps, st, lang, b, h, trow, tcol, val, masked,
                    op[0] >= 0 ? &tr->stages[op[0]].t : NULL, op[1] >= 0 ? &tr->stages[op[1]].t : NULL};
    const StageRecipe *r = recipe_of(st->kind);
    if (r->tip) r->tip(&o, &cell);
    while (o.len > 0 && o.s[o.len - 1] == '\n') o.s[--o.len] = '\0'; // no empty last line
}

static void write_row_sum(TipOut *to, const Trace *tr, const View *v, const Layout *L, int p, int row)
{
    TipOut o = *to;
    if (o.n) o.s[0] = '\0';
    if (p < 0) return; // a frame without a result panel (quiz.c passes L->result_panel)
    assert(p < L->n_panels); // a hit Σ column's panel, or the result
    const PanelSpec *ps = &L->spec[p];
    (void)tr;
    char rb[16];
    snprintf(rb, sizeof rb, "%d", row);
    const char *args[] = {rb};
    tip_key(&o, v->lang, "tip.rowsum", 1, args);
    tip_put(&o, "\n= ");
    float sum = 0.0f;
    for (int j = 0; j < ps->cols; j++) {
        float x = panel_value(ps, row, j);
        sum += x;
        if (j < TIP_MAX_TERMS) {
            if (j) tip_put(&o, " + ");
            tip_num(&o, x, false);
        }
    }
    if (ps->cols > TIP_MAX_TERMS) {
        char nb[16];
        snprintf(nb, sizeof nb, "%d", ps->cols);
        const char *a2[] = {nb};
        tip_put(&o, " + ");
        tip_key(&o, v->lang, "tip.terms", 1, a2);
    }
    tip_equals(&o, sum);
}

// Writes with the fewest operand decimals from `from` on that make every worked sum add up,
// and returns them (a sum near a rounding edge that adds up at none of those: its own fewest
// from TIP_DECIMALS). None up to TIP_MAX_DECIMALS: the result says "≈" (its other lines still
// add up: from `from` on, else at TIP_DECIMALS) and it returns -1.
typedef void (*WriteFn)(TipOut *o, const Trace *tr, const View *v, const Layout *L, int p, int row, int col);

static int write_adding_up(WriteFn fn, const Trace *tr, const View *v, const Layout *L, int p, int row, int col,
                           int from, char *out, size_t n)
{
    for (int pass = 0; pass < 3; pass++)
        for (int d = pass == 2 ? TIP_DECIMALS : from; d <= (pass == 2 ? from - 1 : TIP_MAX_DECIMALS); d++) {
            TipOut o = tip_out(out, n);
            o.dec = d, o.approx = pass == 1;
            fn(&o, tr, v, L, p, row, col);
            if (tip_adds_up(out, NULL, 0)) return pass == 1 ? -1 : d;
        }
    TipOut o = tip_out(out, n); // (as it was)
    o.approx = true;
    fn(&o, tr, v, L, p, row, col);
    return -1;
}

// Whether fn's text with d operand decimals adds up (written into out).
static bool adds_up_at(WriteFn fn, const Trace *tr, const View *v, const Layout *L, int p, int row, int col, int d,
                       char *out, size_t n)
{
    TipOut o = tip_out(out, n);
    o.dec = d;
    fn(&o, tr, v, L, p, row, col);
    return tip_adds_up(out, NULL, 0);
}

static void row_sum_fn(TipOut *o, const Trace *tr, const View *v, const Layout *L, int p, int row, int col)
{
    (void)col;
    write_row_sum(o, tr, v, L, p, row);
}

// ---- one value, one rounding in a frame ------------------------------------------------------
// An operand is read by the worked sums of a whole row or column of the result (concat's row 0
// by each cell of output's row 0): when each tooltip took its own fewest decimals, the same
// value was -10.5957 in one tooltip and -10.596 in the next (issue 40). So the worked sums of a
// frame's result panel (its cells and its Σ column) share one precision: the most decimals any
// of them needs to add up. Finding it writes every such tooltip once; it is kept for the
// frame (a few frames, per thread: exports draw on worker threads), keyed by the panel and a
// hash of its values (an edit in the lab changes them).
#define KEPT 16 // frames kept (the study mode's questions visit a lesson's stages in turn)

typedef struct FrameDec {
    const Trace *tr;
    const float *data;
    uint64_t hash;
    int stage, panel, batch, head, lang, rows, cols, dec;
} FrameDec;

static uint64_t panel_hash(const PanelSpec *ps)
{
    uint64_t h = 1469598103934665603u; // FNV-1a over the values' bits
    for (int r = 0; r < ps->rows; r++)
        for (int c = 0; c < ps->cols; c++) {
            float x = panel_value(ps, r, c);
            uint32_t u;
            memcpy(&u, &x, sizeof u);
            h = (h ^ u) * 1099511628211u;
        }
    return h;
}

// A panel of more worked sums than this (the subword model's logits: 18 × 768, each a sum of
// 64 products; the shipped lessons have at most 414) chooses its precision from this many of
// them, every stride-th in reading order (an odd stride, so the sample does not keep to a few
// columns): writing all of them took seconds a frame (12 s a slice of the worksheet's questions).
// A sum outside the sample that does not add up at the chosen precision finds its own.
#define FRAME_DEC_SAMPLE 4096

// How many of the worked sums of result panel p (its cells, its Σ column) do not add up with
// d decimals though they do with others (counted up to `enough`; of a sample in a large panel).
static int sums_not_adding_up(const Trace *tr, const View *v, const Layout *L, int p, int d, int enough)
{
    const PanelSpec *ps = &L->spec[p];
    char tip[4096];
    int k = 0, w = ps->cols + 1;
    long total = (long)ps->rows * w, stride = (total + FRAME_DEC_SAMPLE - 1) / FRAME_DEC_SAMPLE;
    stride += stride > 1 && stride % 2 == 0;
    for (long i = 0; i < total && k < enough; i += stride) {
        int r = (int)(i / w), c = (int)(i % w);
        if (c == ps->cols && !ps->row_sums) continue;
        WriteFn fn = c < ps->cols ? write_cell : row_sum_fn;
        if (adds_up_at(fn, tr, v, L, p, r, c, d, tip, sizeof tip)) continue;
        for (int e = TIP_DECIMALS; e <= TIP_MAX_DECIMALS; e++)
            if (e != d && adds_up_at(fn, tr, v, L, p, r, c, e, tip, sizeof tip)) {
                k++;
                break;
            }
    }
    return k;
}

// The operand decimals of the worked sums of panel p of L (TIP_DECIMALS for any other panel).
static int frame_decimals(const Trace *tr, const View *v, const Layout *L, int p)
{
    if (p < 0 || p >= L->n_panels || !L->spec[p].result || v->delta) return TIP_DECIMALS;
    static _Thread_local FrameDec kept[KEPT];
    static _Thread_local int next;
    const PanelSpec *ps = &L->spec[p];
    FrameDec key = {tr, ps->data, panel_hash(ps), v->stage, p, v->batch, ps->head, (int)v->lang, ps->rows, ps->cols, 0};
    for (int i = 0; i < KEPT; i++) {
        FrameDec *k = &kept[i];
        if (k->tr == key.tr && k->data == key.data && k->hash == key.hash && k->stage == key.stage &&
            k->panel == key.panel && k->batch == key.batch && k->head == key.head && k->lang == key.lang &&
            k->rows == key.rows && k->cols == key.cols)
            return k->dec;
    }
    // the fewest decimals with which every worked sum adds up (one that adds up at none, which
    // says "≈", aside; a sum near a rounding edge may add up at 3 and not at 4); when none
    // has them all, the decimals with which the fewest do not (those find their own)
    int dec = -1;
    for (int d = TIP_DECIMALS; d <= TIP_MAX_DECIMALS && dec < 0; d++)
        if (sums_not_adding_up(tr, v, L, p, d, 1) == 0) dec = d;
    for (int d = TIP_DECIMALS, fewest = INT_MAX, found = dec >= 0; !found && d <= TIP_MAX_DECIMALS; d++) {
        int k = sums_not_adding_up(tr, v, L, p, d, fewest);
        if (k < fewest) fewest = k, dec = d;
    }
    key.dec = dec;
    kept[next] = key;
    next = (next + 1) % KEPT;
    return dec;
}

void explain_cell(const Trace *tr, const View *v, const Layout *L, int p, int row, int col, char *out, size_t n)
{
    write_adding_up(write_cell, tr, v, L, p, row, col, frame_decimals(tr, v, L, p), out, n);
}

void explain_row_sum(const Trace *tr, const View *v, const Layout *L, int p, int row, char *out, size_t n)
{
    write_adding_up(row_sum_fn, tr, v, L, p, row, 0, frame_decimals(tr, v, L, p), out, n);
}

void explain_cell_as_cells(const Trace *tr, const View *v, const Layout *L, int p, int row, int col, int dec,
                           char *out, size_t n)
{
    TipOut o = tip_out(out, n);
    o.dec = dec, o.cells = true;
    write_cell(&o, tr, v, L, p, row, col);
}

void explain_row_sum_as_cells(const Trace *tr, const View *v, const Layout *L, int p, int row, int dec, char *out,
                              size_t n)
{
    TipOut o = tip_out(out, n);
    o.dec = dec, o.cells = true;
    write_row_sum(&o, tr, v, L, p, row);
}
