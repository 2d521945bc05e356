// explain.c — how each cell was computed, with the numbers (see explain.h).
#include "explain.h"

#include <assert.h>
#include <math.h>
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

// Writes with the fewest operand decimals that make every worked sum add up.
typedef void (*WriteFn)(TipOut *o, const Trace *tr, const View *v, const Layout *L, int p, int row, int col);

static void write_adding_up(WriteFn fn, const Trace *tr, const View *v, const Layout *L, int p, int row, int col,
                            char *out, size_t n)
{
    for (int d = TIP_DECIMALS; d <= TIP_MAX_DECIMALS; d++) {
        TipOut o = tip_out(out, n);
        o.dec = d;
        fn(&o, tr, v, L, p, row, col);
        if (tip_adds_up(out, NULL, 0)) return;
    }
    TipOut o = tip_out(out, n); // none: the result says it is approximate
    o.approx = true;
    fn(&o, tr, v, L, p, row, col);
}

static void row_sum_fn(TipOut *o, const Trace *tr, const View *v, const Layout *L, int p, int row, int col)
{
    (void)col;
    write_row_sum(o, tr, v, L, p, row);
}

void explain_cell(const Trace *tr, const View *v, const Layout *L, int p, int row, int col, char *out, size_t n)
{
    write_adding_up(write_cell, tr, v, L, p, row, col, out, n);
}

void explain_row_sum(const Trace *tr, const View *v, const Layout *L, int p, int row, char *out, size_t n)
{
    write_adding_up(row_sum_fn, tr, v, L, p, row, 0, out, n);
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
