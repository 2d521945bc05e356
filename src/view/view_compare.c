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

// The header's formula line: what Δ is at this stage, and what B is.
static void heading(Layout *L, const View *v, const CompareStage *e)
{
    char what[200];
    if (e)
        compare_text_stage(e, v->lang, what, sizeof what);
    else
        snprintf(what, sizeof what, "%s", i18n_get(v->lang, "compare.only_a"));
    const char *args[] = {what, v->cmp_spec ? v->cmp_spec : ""};
    i18n_fmt(L->formula, sizeof L->formula, v->lang, "formula.compare", 2, args);
    i18n_fmt(L->formula_note, sizeof L->formula_note, v->lang, "ui.cmp_b_is", 2, args);
}

void view_compare_place(Layout *L, const Trace *tr, const View *v)
{
    const CompareStage *e = entry_of(v->cmp, v->stage);
    heading(L, v, e);
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
    const float dm = slice_absmax(&d);
    ScaleGroup gd = {.scale = {.palette = v->palette, .lo = -(dm > 0.0f ? dm : 1.0f), .hi = dm > 0.0f ? dm : 1.0f}};
    snprintf(gd.label, sizeof gd.label, "%s", d.title);
    d.num_max = dm;
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
    explain_cell(tr, &pv, &side, side.result_panel, row, col, ta, sizeof ta);
    layout_compute(&side, v->cmp_b, &pv, L->w, L->h);
    const Trace *tb_tr = v->cmp_b;
    const Stage *st = &tb_tr->stages[e->b];
    if (tb_tr->ablate_kind != ABLATE_NONE && st->id == STAGE_HEAD_OUT && trace_layer_at(tb_tr, e->b) == tb_tr->ablate_layer &&
        side.result_panel >= 0 && side.spec[side.result_panel].head == tb_tr->ablate_head) {
        // the ablated head's output was replaced, not computed: no sum to write out
        char val[32], layer[12], head[12];
        tip_number(panel_value(&L->spec[1], row, col), val, sizeof val);
        snprintf(layer, sizeof layer, "%d", tb_tr->ablate_layer), snprintf(head, sizeof head, "%d", tb_tr->ablate_head);
        const char *args[] = {val, layer, head};
        i18n_fmt(tb, sizeof tb, v->lang, tb_tr->ablate_kind == ABLATE_MEAN ? "tip.ablated_mean" : "tip.ablated_zero", 3, args);
    } else {
        explain_cell(tb_tr, &pv, &side, side.result_panel, row, col, tb, sizeof tb);
    }
    char x[32], y[32], d[32];
    tip_number(panel_value(&L->spec[0], row, col), x, sizeof x);
    tip_number(panel_value(&L->spec[1], row, col), y, sizeof y);
    tip_number(panel_value(&L->spec[2], row, col), d, sizeof d);
    const char *args[] = {ta, tb, y, x, d};
    i18n_fmt(out, n, v->lang, "tip.compare", 5, args);
}
