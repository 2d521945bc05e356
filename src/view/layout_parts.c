// layout_parts.c — projector mode's parts: a stage too large for the projector's numbers
// shown in parts (its operands, then its result), and the operators sized with the numbers;
// outside projector mode, two rows where one row would leave a panel without numbers.
// (layout.c places the panels; these choose which of them a frame shows.)
#include "layout.h"
#include "layout_inner.h"
#include "scene.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }
static int even(float px) { return imax(8, 2 * (int)lrintf(px * 0.5f)); }

// Projector mode: the operators between the panels (· + = →) as large as the numbers
// beside them (a quarter larger), as far as their columns allow (the widest symbol is
// about 0.9 em); words ("/1.41 =") stay at body size.
void layout_scale_operators(Layout *L)
{
    int num = 0, room = INT32_MAX;
    for (int i = 0; i < L->n_panels; i++) {
        num = imax(num, L->spec[i].px_cell);
        if (i > 0 && L->spec[i].op[0] && strlen(L->spec[i].op) <= 3 && !L->spec[i].stacked) room = imin(room, L->op[i].w);
    }
    int want = even(1.25f * (float)num);
    if (room != INT32_MAX) want = imin(want, even((float)room / 0.9f - 1.0f));
    L->px_op = imax(L->px_op, want);
}

// Projector mode: whether every panel with numbers keeps them (not drawn as an image,
// numbers not dropped) at the projector's minimum size.
static bool numbers_fit(const Layout *L)
{
    for (int i = 0; i < L->n_panels; i++) {
        const PanelSpec *p = &L->spec[i];
        if (L->image[i] || p->decimals < 0) return false;
        if (p->px_cell < layout_number_floor(L)) return false; // (the fallback size)
        // and with the digits they have at the usual size: fewer decimals would shrink
        // what the numbers say (layout_fit_numbers drops them to make room)
        float m = p->mask ? fmaxf(p->num_max, 9.9f) : p->num_max;
        int want = p->mask == p->data ? 0 : m >= 1000.0f ? 0 : m >= 100.0f ? 1 : 2;
        if (p->decimals < want) return false;
    }
    return true;
}

// The operand columns of L (a panel and the vectors stacked under it), not the result.
static int operand_columns(const Layout *L)
{
    int n = 0;
    for (int i = 0; i < L->n_panels; i++)
        if (i != L->result_panel && !(L->spec[i].stacked && i > 0)) n++;
    return n;
}

// Keeps one part of L's panels, in their order: with `each`, part k < the number of
// operand columns is operand column k alone; without, part 0 is every operand. The
// last part is the result alone.
void layout_keep_part(Layout *L, int part, bool each)
{
    int n_ops = each ? operand_columns(L) : 1, n = 0, col = -1;
    bool result_part = part >= n_ops;
    for (int i = 0; i < L->n_panels; i++) {
        bool result = i == L->result_panel;
        if (!result && !(L->spec[i].stacked && i > 0)) col++;
        bool keep = result_part ? result : !result && (!each || col == part);
        if (keep) L->spec[n++] = L->spec[i];
    }
    L->n_panels = n;
    L->result_panel = result_part && n > 0 ? 0 : -1;
}

// Whether part `part` of L (keep_part) keeps its numbers at the projector's size.
static bool part_fits(const Layout *L, const Trace *tr, const View *v, Layout *trial, int part, bool each)
{
    *trial = *L;
    layout_keep_part(trial, part, each);
    layout_place_panels(trial, tr, v);
    return numbers_fit(trial);
}

// Projector mode, laid out with every panel: when their numbers do not all fit at the
// projector's size but the result's alone do, the stage is shown in parts rather than
// shrunk: the operands, then the result; or, when the operands do not fit together
// either, each operand, then the result. True when L now holds part View.part of them
// (L->n_parts; to be placed again).
bool layout_projector_split(Layout *L, const Trace *tr, const View *v)
{
    if (!v->show_values || numbers_fit(L) || L->result_panel < 0 || L->n_panels < 2) return false;
    Layout *trial = malloc(sizeof *trial);
    if (!trial) return false;
    int n_ops = operand_columns(L);
    bool fits = part_fits(L, tr, v, trial, 1, false); // the result alone
    bool each = fits && n_ops > 1 && !part_fits(L, tr, v, trial, 0, false);
    // one by one only where each operand keeps its numbers alone (a 16×16 weight at
    // 1024×768 does not: its part would be a numberless image between two with numbers)
    for (int k = 0; each && fits && k < n_ops; k++) fits = part_fits(L, tr, v, trial, k, true);
    if (fits && n_ops == 1) fits = part_fits(L, tr, v, trial, 0, false); // (every part: the operand too)
    free(trial);
    if (!fits) return false; // too large even alone: as without projector mode (images, zoom)
    L->n_parts = each ? n_ops + 1 : 2;
    L->part = v->part < 0 ? 0 : v->part >= L->n_parts ? L->n_parts - 1 : v->part;
    layout_keep_part(L, L->part, each);
    L->split = true;
    return true;
}

int layout_projector_parts(const Trace *tr, const View *v, int w, int h)
{
    if (!v->projector) return 1;
    Layout *L = malloc(sizeof *L);
    if (!L) return 1;
    layout_compute(L, tr, v, w, h);
    int n = L->split ? L->n_parts : 1;
    free(L);
    return n;
}

// ---- the strip's decimals on the panels it writes out ----------------------------

static void mark_strip_decimals(Layout *L, const Derivation *d)
{
    for (int i = 0; i < d->n_lines; i++) {
        int p = scene_strip_line_panel(L, d, i);
        if (p >= 0 && L->spec[p].strip_dec < d->line[i].dec) L->spec[p].strip_dec = d->line[i].dec;
    }
}

void layout_mark_strip_decimals(Layout *L, const Trace *tr, const View *v)
{
    Derivation d;
    if (!v->hide_result && scene_derivation(L, tr, v, scene_derivation_row(L, tr, v), 0, &d)) mark_strip_decimals(L, &d);
}

void layout_match_strip_decimals(Layout *L, const Trace *tr, const View *v)
{
    Derivation d;
    if (scene_strip(L, tr, v, &d)) mark_strip_decimals(L, &d);
    float ns = L->num_s;
    for (int p = 0; p < L->n_panels; p++) {
        PanelSpec *ps = &L->spec[p];
        if (L->image[p] || ps->decimals < 0 || ps->decimals >= ps->strip_dec) continue;
        int w = L->cell_wq[p] / LAYOUT_Q, h = L->cell_hq[p] / LAYOUT_Q;
        float m = ps->mask ? fmaxf(ps->num_max, 9.9f) : ps->num_max;
        int px = layout_number_px_at_least(m, ps->strip_dec, w, h, ns, L->num_fill, layout_number_floor(L));
        if (px > 0) ps->decimals = ps->strip_dec, ps->px_cell = ps->px_cell < px ? ps->px_cell : px;
    }
}

// ---- two rows: a stage too wide for its numbers in one ---------------------------

// Whether every panel of L shows numbers (none drawn as an image, none without them).
static bool every_panel_numbered(const Layout *L)
{
    for (int i = 0; i < L->n_panels; i++)
        if (L->image[i] || L->spec[i].decimals < 0) return false;
    return true;
}

// The tallest column of L's panels from..to-1 in cells (a panel and the vectors under it).
static int row_cells(const Layout *L, int from, int to)
{
    int m = 0, col = 0;
    for (int i = from; i < to; i++) {
        col = L->spec[i].stacked && i > from ? col + L->spec[i].rows : L->spec[i].rows;
        m = imax(m, col);
    }
    return m;
}

// Panels from..to-1 of L (not yet placed) placed on their own in area a, in *row.
static void place_row(const Layout *L, const Trace *tr, const View *v, Layout *row, int from, int to, Rect a)
{
    *row = *L;
    row->n_panels = to - from;
    memmove(row->spec, L->spec + from, (size_t)(to - from) * sizeof L->spec[0]);
    row->result_panel = L->result_panel >= from && L->result_panel < to ? L->result_panel - from : -1;
    row->area = a;
    layout_place_panels(row, tr, v);
}

// Moves the rectangles of panels from..to-1 of L down by dy.
static void shift_row(Layout *L, int from, int to, int dy)
{
    for (int i = from; i < to; i++) L->panel[i].y += dy, L->caption[i].y += dy, L->op[i].y += dy;
}

// The top and bottom of the panels from..to-1 of L with their captions.
static void row_extent(const Layout *L, int from, int to, int *top, int *bottom)
{
    *top = INT32_MAX, *bottom = INT32_MIN;
    for (int i = from; i < to; i++) {
        *top = imin(*top, L->caption[i].y);
        *bottom = imax(*bottom, L->panel[i].y + L->panel[i].h);
    }
}

// Panel j of src as panel i of L: its spec and every geometry of it.
static void take_panel(Layout *L, int i, const Layout *src, int j)
{
    L->spec[i] = src->spec[j], L->panel[i] = src->panel[j], L->caption[i] = src->caption[j];
    L->op[i] = src->op[j], L->cell[i] = src->cell[j], L->cell_wq[i] = src->cell_wq[j];
    L->cell_hq[i] = src->cell_hq[j], L->off_xq[i] = src->off_xq[j], L->off_yq[i] = src->off_yq[j];
    L->zoom_x[i] = src->zoom_x[j], L->zoom_y[i] = src->zoom_y[j], L->image[i] = src->image[j];
    L->label_w[i] = src->label_w[j], L->row_labels[i] = src->row_labels[j], L->sum_w[i] = src->sum_w[j];
    L->sum_decimals[i] = src->sum_decimals[j], L->sum_px[i] = src->sum_px[j];
}

// The two rows of split k in rows[0] (panels 0…k−1) and rows[1] (k… with the result and the
// strip), the operator before panel k at the start of the second row; the area's height
// shared in proportion to the rows' cells.
static void place_two_rows(const Layout *L, const Trace *tr, const View *v, int k, Layout *rows)
{
    Rect a = L->area;
    int gap = (int)(12 * L->s), head = (int)(1.5f * (float)L->px_body) + L->col_label_h;
    int r0 = row_cells(L, 0, k), r1 = row_cells(L, k, L->n_panels);
    int h0 = head + (int)((int64_t)imax(0, a.h - gap - 2 * head) * r0 / imax(1, r0 + r1));
    place_row(L, tr, v, &rows[0], 0, k, (Rect){a.x, a.y, a.w, h0});
    int opw = L->spec[k].op[0] ? layout_operator_w(L, v, &L->spec[k]) : 0;
    place_row(L, tr, v, &rows[1], k, L->n_panels, (Rect){a.x + opw, a.y + h0 + gap, a.w - opw, a.h - h0 - gap});
    Layout *b = &rows[1];
    int ph = 0;
    for (int i = 0; i < b->n_panels; i++) ph = imax(ph, b->panel[i].h);
    b->op[0] = (Rect){b->panel[0].x - b->label_w[0] - opw, b->panel[0].y, opw, ph};
}

// The smallest numbers of rows[0] and rows[1], 0 when a panel of either has none.
static int rows_number_px(const Layout *rows)
{
    int m = INT32_MAX;
    for (int r = 0; r < 2; r++) {
        if (!every_panel_numbered(&rows[r])) return 0;
        for (int i = 0; i < rows[r].n_panels; i++) m = imin(m, rows[r].spec[i].px_cell);
    }
    return m;
}

bool layout_place_panels_in_rows(Layout *L, const Trace *tr, const View *v)
{
    if (v->projector || v->print || v->print_split || L->n_panels < 2) return false;
    // the stage in one row (at zoom 1: zooming in keeps the rows), then its two rows; the
    // panels as scene_build made them, the strip's decimals marked (the first row has no strip)
    Layout *t = malloc(4 * sizeof *t), *base = t + 3;
    if (!t) return false;
    View flat = *v;
    flat.zoom = 1.0f;
    *t = *L;
    layout_place_panels(t, tr, &flat);
    int best = 0, best_px = 0;
    if (!every_panel_numbered(t)) {
        *base = *L;
        layout_mark_strip_decimals(base, tr, v);
        // (from the operands above the result down: on a tie, the fewer panels beside the result)
        for (int k = L->n_panels - 1; k >= 1; k--) {
            if (L->spec[k].stacked) continue; // (a vector stays under its parameter)
            place_two_rows(base, tr, &flat, k, t + 1);
            int px = rows_number_px(t + 1);
            if (px > best_px) best = k, best_px = px;
        }
    }
    if (best == 0) {
        free(t);
        return false;
    }
    place_two_rows(base, tr, v, best, t + 1);
    const Layout *top = &t[1], *bottom = &t[2];
    int n = L->n_panels, result = L->result_panel;
    Rect area = L->area;
    *L = *top;
    L->n_panels = n, L->result_panel = result, L->area = area;
    for (int i = best; i < n; i++) take_panel(L, i, bottom, i - best);
    L->row_label_w = imax(top->row_label_w, bottom->row_label_w);
    L->fit_wq = bottom->fit_wq, L->fit_hq = bottom->fit_hq; // (the result's row: zoom's reference)
    L->deriv = bottom->deriv, L->deriv_line_h = bottom->deriv_line_h, L->deriv_shrank = bottom->deriv_shrank;
    free(t);
    // the two rows together in the middle of the area
    int t0, b0, t1, b1, gap = (int)(12 * L->s);
    row_extent(L, 0, best, &t0, &b0);
    row_extent(L, best, n, &t1, &b1);
    if (L->deriv.w > 0) b1 = imax(b1, L->deriv.y + L->deriv.h);
    int y = L->area.y + imax(0, (L->area.h - (b0 - t0) - gap - (b1 - t1)) / 2);
    shift_row(L, 0, best, y - t0);
    int dy1 = y + (b0 - t0) + gap - t1;
    shift_row(L, best, n, dy1);
    L->deriv.y += L->deriv.w > 0 ? dy1 : 0;
    return true;
}
