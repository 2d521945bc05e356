// view_experiment.c — the experiments drawn (View.kind VIEW_ABLATION, VIEW_LENS,
// VIEW_ATTRIBUTION, VIEW_PATCHING; their rows of viewkind.c): each as panels that read
// View.exp's arrays (expview.h), drawn, hovered, exported and described as any stage's panels,
// with its own header (title, formula, the numbers it uses), narration from the numbers and
// tooltips whose worked numbers are the ones the cells show.
//   ablation:    Δloss of every head ranked (zeroed, mean-ablated), and the bars of the zeroed
//   logit lens:  layer × position, the top token written in the cell, its probability the colour
//   attribution: head × position, each head's direct part of the next token's logit; under it
//                Σ heads + the rest = the logit, at the decimals the cells show
//   patching:    layer (residual) and head × position, the fraction of the clean prediction back
#include "viewkind.h"

#include <math.h>
#include <string.h>

#include "expview.h"
#include "i18n.h"
#include "json_out.h"
#include "layout_inner.h"
#include "tip.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

static float absmax(const float *x, int rows, int cols, int rs)
{
    float m = 0.0f;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            const float a = fabsf(x[(size_t)r * (size_t)rs + (size_t)c]);
            if (isfinite(a) && a > m) m = a;
        }
    return m;
}

// A panel of rows × cols of data (row stride rs) on scale group g, titled by key (one arg).
static PanelSpec *add_panel(Layout *L, const View *v, const float *data, int rows, int cols, int rs, int g,
                            const char *key, const char *arg)
{
    PanelSpec *p = &L->spec[L->n_panels++];
    *p = (PanelSpec){0};
    p->data = data, p->rows = p->shown_rows = rows, p->cols = p->shown_cols = cols, p->rs = rs, p->cs = 1;
    p->stage = v->stage, p->group = g, p->scale = L->group[g].scale, p->head = -1, p->edit_tensor = -1;
    p->num_max = absmax(data, rows, cols, rs), p->row_axis = AXIS_EXP_ROW, p->col_axis = AXIS_QUERY;
    p->decimals = 2, p->diff_dec = -1;
    snprintf(p->source, sizeof p->source, "%s", v->exp ? v->exp->name : "");
    const char *args[] = {arg ? arg : ""};
    i18n_fmt(p->title, sizeof p->title, v->lang, key, 1, args);
    return p;
}

static void add_group(Layout *L, const View *v, bool sequential, float m, const char *key)
{
    ScaleGroup *g = &L->group[L->n_groups++];
    *g = (ScaleGroup){.scale = {.palette = v->palette, .sequential = sequential, .lo = sequential ? 0.0f : -m, .hi = m}};
    snprintf(g->label, sizeof g->label, "%s", i18n_get(v->lang, key));
}

// The panels' decimals made one (the fewest: a cell that can show d decimals can show fewer).
static int one_decimals(Layout *L)
{
    int d = 99;
    for (int p = 0; p < L->n_panels; p++) d = imin(d, L->spec[p].decimals);
    for (int p = 0; p < L->n_panels; p++) L->spec[p].decimals = d;
    return d;
}

// A number as the cells show it (d ≥ 0), else as a tooltip writes it.
static void shown(float x, int d, char *buf, size_t n)
{
    if (d >= 0) panel_format_number(x, d, buf, n);
    else tip_number(x, buf, n);
}

static void heading(Layout *L, const View *v, const char *title, const char *formula, const char *note, int nargs,
                    const char *const *args)
{
    i18n_fmt(L->title, sizeof L->title, v->lang, title, nargs, args);
    snprintf(L->formula, sizeof L->formula, "%s", i18n_get(v->lang, formula));
    i18n_fmt(L->formula_note, sizeof L->formula_note, v->lang, note, nargs, args);
}

// The bar chart right of the panels (as a language model's next-token bars), its room taken off
// the panels' area.
static BarChart *bars_beside(Layout *L)
{
    const int gap = (int)(12 * L->s), bw = imin(imax((int)(300 * L->s), L->area.w / 3), L->area.w / 2);
    BarChart *c = &L->bars;
    c->r = (Rect){L->area.x + L->area.w - bw, L->area.y, bw, L->area.h};
    L->area.w -= bw + gap;
    c->n = 0, c->title[0] = c->subtitle[0] = '\0';
    return c;
}

static void place_ablation(Layout *L, const Trace *tr, const View *v, const ExpView *e)
{
    char clean[32], first[EXPVIEW_LABEL + 4], num[32];
    snprintf(clean, sizeof clean, "%.2f", (double)e->clean_loss);
    snprintf(first, sizeof first, "%s", expview_row_label(e, 0));
    const char *hargs[] = {clean, first};
    heading(L, v, "title.exp_ablation", "formula.exp_ablation", "ui.exp_ablation_note", 2, hargs);
    BarChart *c = bars_beside(L); // the bars of the zeroed column
    const float m = fmaxf(absmax(e->delta[0], e->n_rank, 1, 1), absmax(e->delta[1], e->n_rank, 1, 1));
    const int group = L->n_groups;
    add_group(L, v, false, m > 0.0f ? m : 1.0f, "ui.exp_dloss");
    for (int k = 0; k < 2; k++) {
        PanelSpec *p = add_panel(L, v, e->delta[k], e->n_rank, 1, 1, 0, k ? "ui.exp_mean" : "ui.exp_zeroed", NULL);
        p->col_axis = AXIS_EXP_BLANK, p->diff_a = e->clean[k], p->diff_b = e->loss[k];
    }
    layout_place_panels(L, tr, v);
    const int d = one_decimals(L);
    for (int p = 0; p < L->n_panels; p++) L->spec[p].diff_dec = d >= 0 ? d : -1;
    if (d < 0) L->spec[0].diff_a = L->spec[0].diff_b = L->spec[1].diff_a = L->spec[1].diff_b = NULL;
    c->n = imin(e->n_rank, LAYOUT_MAX_BARS);
    const float top = e->delta[0][0] > 0.0f ? e->delta[0][0] : 1.0f;
    c->scaled = true, c->scale = L->group[group].scale; // (each bar the colour of its zeroed cell)
    for (int i = 0; i < c->n; i++) {
        c->label[i] = expview_row_label(e, i);
        c->value[i] = e->delta[0][i] / top, c->cut[i] = false;
        // the number the cell shows: the shown loss minus the shown clean loss
        const double dd = d >= 0 ? panel_shown_difference(e->clean[0][i], e->loss[0][i], d) : (double)e->delta[0][i];
        shown((float)dd, d, c->number[i], sizeof c->number[i]);
        c->shade[i] = (float)dd; // (the value its cell is coloured by: panel_value)
        if (dd > 0) memmove(c->number[i] + 1, c->number[i], strlen(c->number[i]) + 1), c->number[i][0] = '+';
    }
    snprintf(num, sizeof num, "%s", c->n ? c->number[0] : "");
    const char *bargs[] = {first, num};
    i18n_fmt(c->title, sizeof c->title, v->lang, "ui.exp_ablation_bars", 2, bargs);
    c->subtitle[0] = '\0';
}

static void place_lens(Layout *L, const Trace *tr, const View *v, const ExpView *e)
{
    const LogitLens *l = &e->lens;
    const int b = imin(imax(v->batch, 0), l->batch - 1), per = l->batch * l->len;
    char nl[12];
    snprintf(nl, sizeof nl, "%d", l->n_layers);
    const char *args[] = {nl};
    heading(L, v, "title.exp_lens", "formula.exp_lens", "ui.exp_lens_note", 1, args);
    add_group(L, v, true, 1.0f, "ui.exp_top_prob");
    PanelSpec *p = add_panel(L, v, l->top_prob + (size_t)b * l->len, l->n_layers, l->len, per, 0, "ui.exp_lens_panel", NULL);
    p->tokens = l->top + (size_t)b * l->len;
    layout_place_panels(L, tr, v);
}

// Positions attributed: up to the last with a target (the last token has no next one).
static int attributed_len(const LogitAttribution *a, int b)
{
    int n = a->len;
    while (n > 0 && a->token[(size_t)b * a->len + (size_t)(n - 1)] < 0) n--;
    return n > 0 ? n : a->len;
}

static void place_attribution(Layout *L, const Trace *tr, const View *v, const ExpView *e)
{
    const LogitAttribution *a = &e->dla;
    const int b = imin(imax(v->batch, 0), a->batch - 1), per = a->batch * a->len, n = attributed_len(a, b);
    heading(L, v, "title.exp_dla", "formula.exp_dla", "ui.exp_dla_note", 0, NULL);
    const float m = fmaxf(absmax(a->contrib + (size_t)b * a->len, a->n_layers * a->n_heads, n, per),
                          absmax(a->logit + (size_t)b * a->len, 1, n, per));
    add_group(L, v, false, m > 0.0f ? m : 1.0f, "ui.exp_logit");
    add_panel(L, v, a->contrib + (size_t)b * a->len, a->n_layers * a->n_heads, n, per, 0, "ui.exp_dla_heads", NULL);
    // Σ heads, the rest, the logit: its rows chosen below, once the cells' decimals are known
    PanelSpec *s = add_panel(L, v, e->dla_shown[EXPVIEW_DECIMALS] + (size_t)b * a->len, 3, n, per, 0, "ui.exp_dla_sum", NULL);
    s->row_axis = AXIS_EXP_SUM;
    s->num_max = fmaxf(s->num_max, absmax(e->dla_shown[EXPVIEW_DECIMALS] + (size_t)b * a->len, 3, n, per));
    layout_place_panels(L, tr, v);
    const int d = one_decimals(L);
    if (d >= 0 && d < EXPVIEW_DECIMALS) L->spec[1].data = e->dla_shown[d] + (size_t)b * a->len;
}

static void place_patching(Layout *L, const Trace *tr, const View *v, const ExpView *e)
{
    const Patching *p = &e->patch;
    char pc[32], px[32];
    snprintf(pc, sizeof pc, "%.4f", (double)p->p_clean), snprintf(px, sizeof px, "%.4f", (double)p->p_corrupt);
    const char *args[] = {e->corrupt_token_text, pc, px, e->corrupt};
    heading(L, v, "title.exp_patching", "formula.exp_patching", "ui.exp_patching_note", 4, args);
    const float m = fmaxf(1.0f, fmaxf(absmax(p->residual, p->n_layers, p->len, p->len),
                                      absmax(p->heads, p->n_layers * p->n_heads, p->len, p->len)));
    add_group(L, v, false, m, "ui.exp_recovered");
    add_panel(L, v, p->residual, p->n_layers, p->len, p->len, 0, "ui.exp_patch_residual", NULL);
    PanelSpec *h = add_panel(L, v, p->heads, p->n_layers * p->n_heads, p->len, p->len, 0, "ui.exp_patch_heads", NULL);
    h->row_axis = AXIS_EXP_ROW2;
    if (e->index_cols) L->spec[0].col_axis = h->col_axis = AXIS_INDEX;
    layout_place_panels(L, tr, v);
    one_decimals(L);
}

void view_experiment_place(Layout *L, const Trace *tr, const View *v)
{
    const ExpView *e = v->exp;
    L->n_panels = 0, L->n_groups = 0, L->result_panel = -1, L->input.rows = 0;
    L->formula_note[0] = '\0';
    if (!e || e->kind != v->kind) { // (nothing computed: an empty frame with its title)
        viewkind_heading(L, v, v->kind, 0);
        return;
    }
    switch (e->kind) {
    case VIEW_ABLATION: place_ablation(L, tr, v, e); break;
    case VIEW_LENS: place_lens(L, tr, v, e); break;
    case VIEW_ATTRIBUTION: place_attribution(L, tr, v, e); break;
    case VIEW_PATCHING: place_patching(L, tr, v, e); break;
    default: break;
    }
}

// --- narration, alt text, --describe, tooltips ------------------------------------------

static const char *tok(const View *v, int id)
{
    const char *t = v->lesson ? lesson_vocab_label(v->lesson, id) : NULL;
    return !t ? "?" : strcmp(t, " ") == 0 ? "\xE2\x90\xA3" : t;
}

const char *view_experiment_narration(const Trace *tr, const View *v, char *buf, size_t n)
{
    (void)tr;
    const ExpView *e = v->exp;
    buf[0] = '\0';
    if (!e || e->kind != v->kind) return buf;
    char a[9][64] = {{0}};
    const char *args[9];
    for (int i = 0; i < 9; i++) args[i] = a[i];
    if (e->kind == VIEW_ABLATION && e->n_rank > 0) { // the head that matters most, by how much, the next one
        snprintf(a[0], 64, "%s", expview_row_label(e, 0));
        // (at 2 decimals, as the cells and the tooltips write them: a Δ is the shown loss − the shown clean loss)
        snprintf(a[1], 64, "%.2f", (double)e->clean_loss), snprintf(a[2], 64, "%.2f", (double)e->loss[0][0]);
        snprintf(a[3], 64, "%+.2f", panel_shown_difference(e->clean[0][0], e->loss[0][0], 2));
        if (e->n_rank > 1)
            snprintf(a[4], 64, "%s", expview_row_label(e, 1)),
                snprintf(a[5], 64, "%+.2f", panel_shown_difference(e->clean[0][1], e->loss[0][1], 2));
        i18n_fmt(buf, n, v->lang, e->n_rank > 1 ? "exp.ablation_zero" : "exp.ablation_zero1", 6, args);
    } else if (e->kind == VIEW_LENS) { // after each layer, at how many positions the next token is the top one
        const LogitLens *l = &e->lens;
        char layers[600] = "";
        for (int k = 0; k < l->n_layers; k++) {
            int right = 0, counted = 0;
            for (int r = 0; r < l->batch * l->len; r++) {
                const size_t i = (size_t)k * l->batch * l->len + (size_t)r;
                counted += l->target[r] >= 0, right += l->target[r] >= 0 && l->top[i] == l->target[r];
            }
            char item[120];
            snprintf(a[0], 64, "%d", k), snprintf(a[1], 64, "%d", right), snprintf(a[2], 64, "%d", counted);
            i18n_fmt(item, sizeof item, v->lang, k ? "exp.lens_next" : "exp.lens_layer", 3, args);
            const size_t used = strlen(layers);
            snprintf(layers + used, sizeof layers - used, "%s", item);
        }
        const char *la[] = {layers};
        i18n_fmt(buf, n, v->lang, "exp.lens", 1, la);
    } else if (e->kind == VIEW_ATTRIBUTION) { // the head adding most on average
        const LogitAttribution *d = &e->dla;
        const size_t per = (size_t)d->batch * d->len;
        int best = 0;
        double mbest = -INFINITY;
        for (int k = 0; k < d->n_layers * d->n_heads; k++) {
            double m = 0.0;
            int counted = 0;
            for (size_t r = 0; r < per; r++)
                if (d->token[r] >= 0) m += (double)d->contrib[(size_t)k * per + r], counted++;
            m /= counted > 0 ? counted : 1;
            if (m > mbest) mbest = m, best = k;
        }
        snprintf(a[0], 64, "%s", expview_row_label(e, best)), snprintf(a[1], 64, "%+.2f", mbest);
        i18n_fmt(buf, n, v->lang, "exp.dla", 2, args);
    } else if (e->kind == VIEW_PATCHING) { // the clean prediction, where patching brings back most
        const Patching *p = &e->patch;
        int br = 0, bh = 0;
        for (int k = 1; k < p->n_layers * p->len; k++) br = p->residual[k] > p->residual[br] ? k : br;
        for (int k = 1; k < p->n_layers * p->n_heads * p->len; k++) bh = p->heads[k] > p->heads[bh] ? k : bh;
        snprintf(a[0], 64, "%s", e->corrupt_token_text);
        snprintf(a[1], 64, "%.4f", (double)p->p_clean), snprintf(a[2], 64, "%.4f", (double)p->p_corrupt);
        snprintf(a[3], 64, "%d", br / p->len), snprintf(a[4], 64, "%d", br % p->len);
        snprintf(a[5], 64, "%.2f", (double)p->residual[br]);
        snprintf(a[6], 64, "%s", expview_row_label(e, e->row2 + bh / p->len));
        snprintf(a[7], 64, "%d", bh % p->len), snprintf(a[8], 64, "%.2f", (double)p->heads[bh]);
        i18n_fmt(buf, n, v->lang, "exp.patching", 9, args);
    }
    return buf;
}

void view_experiment_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n)
{
    (void)tr;
    char rows[12], cols[12];
    snprintf(rows, sizeof rows, "%d", L->n_panels ? L->spec[0].rows : 0);
    snprintf(cols, sizeof cols, "%d", L->n_panels ? L->spec[0].cols : 0);
    const char *args[] = {L->title, rows, cols};
    i18n_fmt(out, n, v->lang, "alt.experiment", 3, args);
}

// The experiment, its rows' labels and what its cells hold (the numbers: "panels"' cells).
void view_experiment_describe(FILE *f, const Layout *L, const Trace *tr, const View *v)
{
    (void)tr;
    const ExpView *e = v->exp;
    if (!e) return;
    fputs(", \"experiment\": ", f);
    json_write_string(f, e->name);
    for (int p = 0; p < L->n_panels; p++) { // every cell as it is written
        const PanelSpec *ps = &L->spec[p];
        fprintf(f, ", \"panel%d\": {\"rows\": [", p);
        for (int r = 0; r < ps->rows; r++) {
            char lb[64];
            if (r) fputs(", ", f);
            json_write_string(f, panel_axis_label(v, ps->row_axis, r, lb, sizeof lb));
        }
        fputs("], \"values\": [", f); // (exact: the cells below write them as shown)
        for (int r = 0; r < ps->rows; r++) {
            fputs(r ? ", [" : "[", f);
            for (int c = 0; c < ps->cols; c++) {
                if (c) fputs(", ", f);
                json_write_float(f, ps->data[(size_t)r * (size_t)ps->rs + (size_t)c * (size_t)ps->cs]);
            }
            fputs("]", f);
        }
        fputs("], \"cells\": [", f);
        for (int r = 0; r < ps->rows; r++) {
            fputs(r ? ", [" : "[", f);
            for (int c = 0; c < ps->cols; c++) {
                char num[64];
                if (ps->tokens)
                    snprintf(num, sizeof num, "%s", tok(v, ps->tokens[(size_t)r * (size_t)ps->rs + (size_t)c * (size_t)ps->cs]));
                else
                    shown(panel_value(ps, r, c), ps->decimals, num, sizeof num);
                if (c) fputs(", ", f);
                json_write_string(f, num);
            }
            fputs("]", f);
        }
        fputs("]}", f);
    }
    if (L->bars.r.w > 0) {
        fputs(", \"bars\": {\"title\": ", f);
        json_write_string(f, L->bars.title);
        fputs(", \"labels\": [", f);
        for (int i = 0; i < L->bars.n; i++) fputs(i ? ", " : "", f), json_write_string(f, L->bars.label[i]);
        fputs("], \"numbers\": [", f);
        for (int i = 0; i < L->bars.n; i++) fputs(i ? ", " : "", f), json_write_string(f, L->bars.number[i]);
        fputs("]}", f);
    }
}

void view_experiment_tip(const Layout *L, const Trace *tr, const View *v, int p, int row, int col, char *out, size_t n)
{
    (void)tr;
    const ExpView *e = v->exp;
    out[0] = '\0';
    if (!e || p < 0 || p >= L->n_panels || row < 0 || col < 0 || row >= L->spec[p].rows || col >= L->spec[p].cols) return;
    const PanelSpec *ps = &L->spec[p];
    const int d = ps->decimals;
    char a[8][64] = {{0}}, lb[64];
    const char *args[8];
    for (int i = 0; i < 8; i++) args[i] = a[i];
    snprintf(a[0], 64, "%s", panel_axis_label(v, ps->row_axis, row, lb, sizeof lb));
    snprintf(a[1], 64, "%d", col);
    snprintf(a[2], 64, "%s", panel_axis_label(v, ps->col_axis, col, lb, sizeof lb));
    if (e->kind == VIEW_ABLATION) { // the loss with the head ablated − the clean loss = the cell
        shown(e->loss[p][row], d, a[1], 64), shown(e->clean[p][row], d, a[2], 64), shown(panel_value(ps, row, col), d, a[3], 64);
        i18n_fmt(out, n, v->lang, p ? "tip.exp_ablation_mean" : "tip.exp_ablation_zero", 4, args);
    } else if (e->kind == VIEW_LENS) {
        const LogitLens *l = &e->lens;
        const int b = imin(imax(v->batch, 0), l->batch - 1);
        const size_t i = ((size_t)row * l->batch + (size_t)b) * l->len + (size_t)col;
        const int t = l->target[(size_t)b * l->len + (size_t)col];
        snprintf(a[3], 64, "%s", tok(v, l->top[i])), shown(l->top_prob[i], d >= 2 ? d : 2, a[4], 64);
        snprintf(a[5], 64, "%s", t >= 0 ? tok(v, t) : "—"), shown(l->next_prob[i], d >= 2 ? d : 2, a[6], 64);
        i18n_fmt(out, n, v->lang, t >= 0 ? "tip.exp_lens" : "tip.exp_lens_last", 7, args);
    } else if (e->kind == VIEW_ATTRIBUTION) {
        const LogitAttribution *at = &e->dla;
        const int b = imin(imax(v->batch, 0), at->batch - 1);
        const int t = at->token[(size_t)b * at->len + (size_t)col];
        snprintf(a[3], 64, "%s", t >= 0 ? tok(v, t) : "—");
        if (p == 0) {
            shown(panel_value(ps, row, col), d, a[4], 64);
            i18n_fmt(out, n, v->lang, "tip.exp_dla_head", 5, args);
            return;
        }
        // Σ heads (each term as its cell shows it) + the rest = the logit
        const PanelSpec *hp = &L->spec[0];
        char terms[700] = "";
        for (int r = 0; r < hp->rows; r++) {
            char x[32];
            shown(panel_value(hp, r, col), d, x, sizeof x);
            const size_t used = strlen(terms);
            snprintf(terms + used, sizeof terms - used, r ? (x[0] == '-' ? " − %s" : " + %s") : "%s", r && x[0] == '-' ? x + 1 : x);
        }
        char sum[32], rest[32], logit[32];
        shown(panel_value(ps, 0, col), d, sum, sizeof sum), shown(panel_value(ps, 1, col), d, rest, sizeof rest);
        shown(panel_value(ps, 2, col), d, logit, sizeof logit);
        const char *sa[] = {a[0], a[1], a[2], a[3], terms, sum, rest, logit};
        i18n_fmt(out, n, v->lang, "tip.exp_dla_sum", 8, sa);
    } else if (e->kind == VIEW_PATCHING) { // recovered = (p_patched − p_corrupt) / (p_clean − p_corrupt)
        const Patching *pt = &e->patch;
        const float r = panel_value(ps, row, col);
        const float pp = pt->p_corrupt + r * (pt->p_clean - pt->p_corrupt);
        snprintf(a[3], 64, "%s", e->corrupt_token_text);
        snprintf(a[4], 64, "%.4f", (double)pp), snprintf(a[5], 64, "%.4f", (double)pt->p_corrupt);
        snprintf(a[6], 64, "%.4f", (double)pt->p_clean), shown(r, d, a[7], 64);
        i18n_fmt(out, n, v->lang, p ? "tip.exp_patch_head" : "tip.exp_patch_residual", 8, args);
    }
}
