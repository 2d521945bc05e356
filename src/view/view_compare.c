// view_compare.c — the compare view (View.kind VIEW_COMPARE, its row of viewkind.c): the
// stage's result as its recipe shows it (the slice of View.batch, View.head), in A (the trace
// drawn), in B (View.cmp_b) and Δ = B − A (View.cmp, compare.h), side by side: A and B on one
// scale, B's cells that differ from A's marked as the what-if lab marks an edit's, Δ on a
// diverging scale around 0, "identical" said where it is. The panels are drawn as any stage's
// (render.c); the header's formula line is the compare's.
#include "viewkind.h"

#include <math.h>
#include <string.h>

#include "compare.h"
#include "compare_text.h"
#include "explain.h"
#include "i18n.h"
#include "json_out.h"
#include "layout.h"
#include "layout_inner.h"

// The compare's entry of A's stage s, or NULL.
static const CompareStage *entry_of(const Compare *c, int s)
{
    for (int i = 0; c && i < c->n; i++)
        if (c->st[i].a == s) return &c->st[i];
    return NULL;
}

// The same place in `to` as p in `from` (the stage of the same name, the same offset), or NULL.
static const float *same_in(const Trace *from, const Trace *to, const float *p)
{
    for (int i = 0; p && i < from->n; i++) {
        const Tensor *t = &from->stages[i].t;
        if (p < t->data || p >= t->data + t->size) continue;
        const int j = trace_find(to, from->stages[i].name);
        return j >= 0 && to->stages[j].t.size == t->size ? to->stages[j].t.data + (p - t->data) : NULL;
    }
    return NULL;
}

static float slice_absmax(const PanelSpec *p)
{
    float m = 0.0f;
    for (int r = 0; r < p->rows; r++)
        for (int c = 0; c < p->cols; c++) {
            const float x = fabsf(panel_value(p, r, c));
            if (isfinite(x) && x > m) m = x;
        }
    return m;
}

// The largest finite |Δ| of the stage: every batch and head, not only the slice on screen (the
// Δ panel's scale, so a colour means the same Δ on every head, and the header's max |Δ|).
static float stage_absmax(const CompareStage *e)
{
    float m = 0.0f;
    for (size_t i = 0; i < e->delta.size; i++) {
        const float x = fabsf(e->delta.data[i]);
        if (isfinite(x) && x > m) m = x;
    }
    return m;
}

static bool slice_identical(const PanelSpec *d)
{
    for (int r = 0; r < d->rows; r++)
        for (int c = 0; c < d->cols; c++)
            if (panel_value(d, r, c) != 0.0f) return false;
    return true;
}

static void panel_title(PanelSpec *p, Lang lang, const char *key, const char *name)
{
    char t[sizeof p->title];
    snprintf(t, sizeof t, "%s", name);
    const char *args[] = {t};
    i18n_fmt(p->title, sizeof p->title, lang, key, 1, args);
}

// The header's formula line: what Δ is at this stage (its max |Δ| over every head and batch),
// what B is and, where Δ is drawn, the ends of its colour scale (dm: that max, or the largest
// finite one where the max is ∞).
static void heading(Layout *L, const View *v, const CompareStage *e, float dm)
{
    char what[200], scale[32];
    if (e)
        compare_text_stage(e, v->lang, what, sizeof what);
    else
        snprintf(what, sizeof what, "%s", i18n_get(v->lang, "compare.only_a"));
    compare_text_delta(dm, scale, sizeof scale);
    const char *args[] = {what, v->cmp_spec ? v->cmp_spec : "", scale};
    i18n_fmt(L->formula, sizeof L->formula, v->lang, "formula.compare", 2, args);
    const char *note = !e || e->b < 0 || !e->n_diff || !(dm > 0.0f) ? "ui.cmp_b_is"
                       : isfinite(e->max_abs)                       ? "ui.cmp_b_is_scale"
                                                                    : "ui.cmp_b_is_scale_finite";
    i18n_fmt(L->formula_note, sizeof L->formula_note, v->lang, note, 3, args);
}

// The Δ panel (spec 2) shows B's shown number minus A's (specs 0 and 1), at the decimals all
// three then write: the fewest of theirs (a cell that can show its numbers at d decimals can at
// fewer). Where a panel shows no numbers, Δ keeps its own exact values.
static void delta_as_shown(Layout *L)
{
    PanelSpec *a = &L->spec[0], *b = &L->spec[1], *d = &L->spec[2];
    if (a->decimals < 0 || b->decimals < 0 || d->decimals < 0) return;
    int dec = a->decimals < b->decimals ? a->decimals : b->decimals;
    if (d->decimals < dec) dec = d->decimals;
    a->decimals = b->decimals = d->decimals = dec;
    d->diff_a = a->data, d->diff_b = b->data, d->diff_dec = dec;
}

void view_compare_place(Layout *L, const Trace *tr, const View *v)
{
    const CompareStage *e = entry_of(v->cmp, v->stage);
    const float dm = e && e->b >= 0 ? stage_absmax(e) : 0.0f;
    heading(L, v, e, dm);
    const int rp = L->result_panel;
    if (rp < 0 || !e || e->b < 0 || !v->cmp_b) { // nothing to set beside it: A's result alone
        if (rp >= 0) L->spec[0] = L->spec[rp], L->n_panels = 1, L->spec[0].group = 0, L->group[0] = L->group[L->spec[rp].group];
        L->n_groups = L->n_panels;
        L->result_panel = -1;
        layout_place_panels(L, tr, v);
        return;
    }
    PanelSpec a = L->spec[rp], b = a, d = a;
    ScaleGroup ga = L->group[a.group];
    char name[64];
    snprintf(name, sizeof name, "%s", a.title);
    b.data = same_in(tr, v->cmp_b, a.data);
    b.mask = same_in(tr, v->cmp_b, a.mask);
    if (v->cmp_b->mask_fill != tr->mask_fill && !(isnan(tr->mask_fill) && isnan(v->cmp_b->mask_fill)))
        b.mask = NULL; // (a masked cell is written with A's fill: B's show their own numbers)
    b.ref = a.data, b.ref_one = false; // B's cells that differ from A's get the lab's mark
    b.any_changed = e->n_diff > 0;
    const Tensor *ta = &tr->stages[v->stage].t;
    d.data = e->delta.data + (a.data - ta->data);
    d.mask = NULL, d.neg_inf_masked = false, d.row_sums = false, d.ref = NULL;
    a.edit_tensor = b.edit_tensor = d.edit_tensor = -1;
    a.op[0] = b.op[0] = '\0';
    snprintf(d.op, sizeof d.op, "→");
    panel_title(&a, v->lang, "ui.cmp_a", name);
    panel_title(&b, v->lang, "ui.cmp_b", name);
    const bool same = slice_identical(&d);
    panel_title(&d, v->lang, same ? "ui.cmp_delta_same" : "ui.cmp_delta", name);
    // A and B on one scale (a diverging one widened to both), Δ on its own around 0
    b.num_max = fmaxf(a.num_max, slice_absmax(&b));
    a.num_max = b.num_max;
    if (!ga.scale.sequential && !ga.mask01) {
        const float m = fmaxf(fabsf(ga.scale.hi - ga.scale.mid), slice_absmax(&b));
        ga.scale.lo = ga.scale.mid - m, ga.scale.hi = ga.scale.mid + m;
    }
    ScaleGroup gd = {.scale = {.palette = v->palette, .lo = -(dm > 0.0f ? dm : 1.0f), .hi = dm > 0.0f ? dm : 1.0f}};
    snprintf(gd.label, sizeof gd.label, "%s", i18n_get(v->lang, "ui.cmp_delta_scale"));
    d.num_max = slice_absmax(&d);
    a.group = b.group = 0, d.group = 1;
    a.scale = b.scale = ga.scale, d.scale = gd.scale;
    a.result = b.result = d.result = false;
    b.any_nan = b.any_nan || a.any_nan;
    L->spec[0] = a, L->spec[1] = b, L->spec[2] = d;
    L->n_panels = 3;
    L->group[0] = ga, L->group[1] = gd;
    L->n_groups = 2;
    L->result_panel = -1; // (no derivation strip: two derivations of different numbers)
    layout_place_panels(L, tr, v);
    delta_as_shown(L);
}

const char *view_compare_narration(const Trace *tr, const View *v, char *buf, size_t n)
{
    if (!v->cmp || !v->cmp_b) {
        buf[0] = '\0';
        return buf;
    }
    compare_text_summary(v->cmp, tr, v->cmp_b, v->cmp_spec ? v->cmp_spec : "", false, v->lang, buf, n);
    return buf;
}

void view_compare_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n)
{
    (void)L;
    char what[200];
    const CompareStage *e = entry_of(v->cmp, v->stage);
    if (e)
        compare_text_stage(e, v->lang, what, sizeof what);
    else
        what[0] = '\0';
    const char *args[] = {tr->stages[v->stage].name, v->cmp_spec ? v->cmp_spec : "", what};
    i18n_fmt(out, n, v->lang, "alt.compare", 3, args);
}

void view_compare_describe(FILE *f, const Layout *L, const Trace *tr, const View *v)
{
    (void)L, (void)tr;
    const CompareStage *e = entry_of(v->cmp, v->stage);
    fputs(", \"compare\": {\"spec\": ", f);
    json_write_string(f, v->cmp_spec ? v->cmp_spec : "");
    if (e && e->b >= 0) {
        fprintf(f, ", \"identical\": %s, \"n_diff\": %zu, \"max_abs_delta\": ", e->n_diff ? "false" : "true", e->n_diff);
        json_write_float(f, e->max_abs);
    }
    fputs("}", f);
}

// Whether the result panel of a stage's own layout has cell (row, col).
static bool has_cell(const Layout *L, int row, int col)
{
    const int p = L->result_panel;
    return p >= 0 && row >= 0 && col >= 0 && row < L->spec[p].rows && col < L->spec[p].cols;
}

// A number as the cells write it (cells: at d decimals) or as a tooltip does.
static void number_as(bool cells, int d, float x, char *buf, size_t n)
{
    if (cells)
        panel_format_number(x, d, buf, n);
    else
        tip_number(x, buf, n);
}

// Both derivations of the cell: A's from the stage's panels of A, B's from those of B, then Δ.
void view_compare_tip(const Layout *L, const Trace *tr, const View *v, int p, int row, int col, char *out, size_t n)
{
    static _Thread_local Layout side; // (a Layout is 11 kB: not on the stack, not allocated a frame)
    static _Thread_local char ta[1024], tb[1024];
    const CompareStage *e = entry_of(v->cmp, v->stage);
    out[0] = '\0';
    if (p < 0 || p >= L->n_panels || !e || e->b < 0 || !v->cmp_b) return;
    View pv = *v;
    pv.kind = VIEW_PANELS, pv.cmp = NULL, pv.cmp_b = NULL;
    layout_compute(&side, tr, &pv, L->w, L->h);
    ta[0] = tb[0] = '\0';
    if (has_cell(&side, row, col)) explain_cell(tr, &pv, &side, side.result_panel, row, col, ta, sizeof ta);
    pv.stage = e->b; // (B's index of the stage: an edit that adds a stage, a mask, moves the rest)
    layout_compute(&side, v->cmp_b, &pv, L->w, L->h);
    const Trace *tb_tr = v->cmp_b;
    const Stage *st = &tb_tr->stages[e->b];
    if (tb_tr->ablate_kind != ABLATE_NONE && st->id == STAGE_HEAD_OUT && trace_layer_at(tb_tr, e->b) == tb_tr->ablate_layer &&
        side.result_panel >= 0 && (tb_tr->ablate_head < 0 || side.spec[side.result_panel].head == tb_tr->ablate_head)) {
        // the ablated head's output was replaced, not computed: no sum to write out
        char val[32], layer[12], head[12];
        tip_number(panel_value(&L->spec[1], row, col), val, sizeof val);
        snprintf(layer, sizeof layer, "%d", tb_tr->ablate_layer);
        snprintf(head, sizeof head, "%d", tb_tr->ablate_head < 0 ? side.spec[side.result_panel].head : tb_tr->ablate_head);
        const char *args[] = {val, layer, head};
        i18n_fmt(tb, sizeof tb, v->lang, tb_tr->ablate_kind == ABLATE_MEAN ? "tip.ablated_mean" : "tip.ablated_zero", 3, args);
    } else if (has_cell(&side, row, col)) {
        explain_cell(tb_tr, &pv, &side, side.result_panel, row, col, tb, sizeof tb);
    }
    // Δ as its cell shows it: B's and A's numbers at the cells' decimals, their difference; where
    // that is not the unrounded Δ at those decimals, the unrounded one too
    const PanelSpec *pd = &L->spec[2];
    const bool cells = pd->diff_b && pd->diff_dec >= 0;
    const float exact = pd->data[(size_t)row * (size_t)pd->rs + (size_t)col * (size_t)pd->cs];
    char x[32], y[32], d[32], ex[32], ed[32], tail[160];
    number_as(cells, pd->diff_dec, panel_value(&L->spec[0], row, col), x, sizeof x);
    number_as(cells, pd->diff_dec, panel_value(&L->spec[1], row, col), y, sizeof y);
    number_as(cells, pd->diff_dec, panel_value(pd, row, col), d, sizeof d);
    const char *args[] = {ta, tb, y, x, d};
    i18n_fmt(out, n, v->lang, "tip.compare", 5, args);
    number_as(cells, pd->diff_dec, exact, ed, sizeof ed);
    if (strcmp(ed, d) != 0) {
        compare_text_delta(exact, ex, sizeof ex);
        const char *ea[] = {ex};
        i18n_fmt(tail, sizeof tail, v->lang, "tip.compare_unrounded", 1, ea);
        const size_t used = strlen(out);
        if (used + 1 < n) snprintf(out + used, n - used, "%s", tail);
    }
}
