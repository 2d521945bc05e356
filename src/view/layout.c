// layout.c — the scene of each stage (which heatmaps) and its geometry.
//
// Screen, top to bottom: timeline of steps | batch/head tabs + status |
// header (name, shapes, formula) | heatmaps in a row with operators between (two rows
// where only two keep every panel's numbers: layout_parts.c) |
// narration (left) and legend (right).
#include "layout.h"
#include "layout_inner.h"

#include "explain.h"
#include "i18n.h"
#include "scene.h"
#include "utf8.h"
#include "viewkind.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }
static int even(float px) { return imax(8, 2 * (int)lrintf(px * 0.5f)); }

// ---- numbers in cells: as many decimals as the cell allows -----------------

static int int_digits(float m)
{
    int d = 1;
    for (float x = 10.0f; m >= x && d < 12; x *= 10.0f) d++;
    return d;
}

int layout_min_number_px(float s)
{
    // 13 px at 1280×720; above it the floor grows at half the UI's rate (16 px at
    // 1920×1080): a large screen's cells keep 2 decimals where they hold 16 px digits
    float f = s <= 1.0f ? s : 1.0f + (s - 1.0f) * 0.5f;
    return imax(LAYOUT_MIN_TEXT_PX, (int)lrintf((float)LAYOUT_MIN_NUMBER_PX * f));
}

// The smallest number size in L's cells. Projector mode: LAYOUT_PROJECTOR_MIN_NUMBER_PX
// × the UI scale, the same part of the height at every resolution (a projected image is
// as large at 4K as at 720p); the numbers grow from it up to the projector's size where
// the cells allow.
int layout_number_floor(const Layout *L)
{
    if (L->num_s == L->s) return layout_min_number_px(L->s);
    return imax(LAYOUT_MIN_TEXT_PX, (int)lrintf((float)LAYOUT_PROJECTOR_MIN_NUMBER_PX * L->s));
}

// The size numbers up to m with d decimals get in a w × h cell: up to fill of the cell's
// smaller side; at the minimum size min_px they may fill half a cell (a 12×12 attention at
// 1920×1080 has 40 px tall cells: 14 px at the fill, under 16).
// bare: written without the 0 before the point (".43", "−.03"), a character fewer.
static int number_px_for(float m, int d, bool bare, int w, int h, float s, float fill, int min_px)
{
    int max_px = (int)fminf(fill * (float)imin(w, h), 26.0f * s);
    if (max_px < min_px && 2 * min_px <= imin(w, h)) max_px = min_px;
    int chars = 1 + int_digits(m) + (d > 0 ? d + 1 : 0) - (bare ? 1 : 0);
    if (chars < 3) chars = 3; // "NaN"
    int margin = w >= 60 ? w / 8 : 4; // large numbers get some air
    return imin(max_px, (int)((float)(w - margin) / (0.62f * (float)chars)));
}

// fill: the largest number size as a part of the cell's smaller side; min_px: the smallest
static void fit_numbers_in(float m, bool integers, int w, int h, float s, float fill, int min_px, int *decimals,
                           int *px)
{
    int d0 = integers ? 0 : m >= 1000.0f ? 0 : m >= 100.0f ? 1 : 2;
    *decimals = -1;
    *px = 0;
    for (int d = d0; d >= 0; d--) {
        int fit = number_px_for(m, d, false, w, h, s, fill, min_px);
        if (d == 0 && m < 10.0f && !integers) break; // 0 decimals would print 0.3 as "0": show no numbers
        if (d < 2 && m < 1.0f && !integers) break;   // 1 decimal would print −0.04 as "0.0": show no numbers
        if (fit >= min_px) {
            *decimals = d;
            *px = fit;
            return;
        }
    }
}

int layout_number_px_at_least(float m, int d, int w, int h, float s, float fill, int min_px)
{
    int px = number_px_for(m, d, false, w, h, s, fill, min_px);
    return px >= min_px ? px : 0;
}

void layout_fit_numbers(float m, bool integers, int w, int h, float s, int *decimals, int *px)
{
    fit_numbers_in(m, integers, w, h, s, LAYOUT_NUMBER_FILL, layout_min_number_px(s), decimals, px);
}

// The cell width at which p's numbers (2 decimals) reach the largest size an h px tall cell allows.
static int number_width(const PanelSpec *p, int h, float s, float fill)
{
    float m = p->num_max;
    if (p->mask) m = fmaxf(m, 9.9f);
    int chars = p->mask == p->data ? 3 : 1 + int_digits(m) + (m >= 1000.0f ? 0 : m >= 100.0f ? 2 : 3);
    float px = fminf(fill * (float)h, 26.0f * s);
    // (projector mode: with the air layout_fit_numbers leaves a wide cell, an eighth)
    if (fill != LAYOUT_NUMBER_FILL) return (int)ceilf(0.62f * (float)chars * px * 8.0f / 7.0f) + 2;
    return (int)ceilf(0.62f * (float)chars * px) + 9;
}

// min_px: the smallest size (min_number_px); projector: in projector mode
static void fit_numbers(PanelSpec *p, int w, int h, float s, float fill, int min_px, bool projector)
{
    float m = p->num_max;
    if (p->mask) m = fmaxf(m, 9.9f); // masked cells print short labels like −1e9
    bool integers = p->mask == p->data; // the 0/1 mask itself
    if (integers) m = 1.0f;
    fit_numbers_in(m, integers, w, h, s, fill, min_px, &p->decimals, &p->px_cell);
    // numbers all under 1 (a gradient's, most weights', probabilities under 1) where "−0.03" has no
    // room: their 2 decimals without the 0 before the point, "−.03", rather than colours alone (one
    // character fewer: a 12×12 gradient beside two operands at 1920×1080); the same rounding
    p->bare_point = false;
    if (p->decimals < 0 && !integers && m < 1.0f && !isnan(m)) {
        int px = number_px_for(m, 2, true, w, h, s, fill, min_px);
        if (px >= min_px) p->decimals = 2, p->px_cell = px, p->bare_point = true;
    }
    // (projector mode: its numbers are shown in parts, large; one decimal there rather than none)
    if (!projector && p->two_decimals && p->decimals >= 0 && p->decimals < 2 && m < 100.0f) p->decimals = -1, p->px_cell = 0;
}

// ---- labels -------------------------------------------------------------------

bool layout_axis_has_tokens(const View *v, AxisKind a)
{
    const Lesson *ls = v ? v->lesson : NULL;
    if (!ls) return false;
    if (a == AXIS_VOCAB) return ls->vocab || ls->classes;
    if (a == AXIS_QUERY || a == AXIS_PATCH) return ls->vocab || ls->q_tokens;
    if (a == AXIS_KEY) return ls->vocab || ls->k_tokens;
    return false;
}

int layout_index_px(const Layout *L) { return imax(LAYOUT_MIN_TEXT_PX, L->px_small * 3 / 4); }

int layout_text_width_est(const char *s, int px)
{
    // advance widths of DejaVu Sans in em, rounded up by class
    float em = 0.0f;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned c = *p;
        if (c < 0x80) {
            p++;
            // (every printable ASCII character at or above its DejaVu Sans advance: a BPE
            // vocabulary labels its axes with any of them, "#" 0.838 em, ":" 0.337, "O" 0.787)
            if (strchr("ijlI.,'", (int)c)) em += 0.32f;
            else if (strchr(":;|", (int)c)) em += 0.34f;
            else if (strchr("frt ()[]-!", (int)c)) em += 0.42f;
            else if (strchr("mMW%@", (int)c)) em += 1.0f;
            else if (strchr("w#+=<>~^", (int)c)) em += 0.84f;
            else if (c == 'O' || c == 'Q') em += 0.79f;
            else if ((c >= 'A' && c <= 'Z') || c == '&') em += 0.78f;
            else em += 0.64f;
            continue;
        }
        size_t len;
        uint32_t cp = utf8_next((const char *)p, &len);
        p += len;
        em += cp >= 0x2E80 ? 1.0f : 0.8f; // CJK full width; accented Latin, Greek, …
    }
    return (int)ceilf(em * (float)px * 1.05f) + 1;
}

// Width of s drawn at px: measured by the fonts when the view has them.
int layout_text_w(const View *v, const char *s, int px)
{
    if (v && v->measure && v->measure->width) return v->measure->width(v->measure->ctx, false, px, s) + 1;
    return layout_text_width_est(s, px);
}

// The row-label column of panel p: its widest label plus the gap to the cells.
static int label_width(const Layout *L, const View *v, const PanelSpec *p)
{
    if (p->row_axis == AXIS_NONE) return (int)(8 * L->s);
    char b[24];
    int w = 0;
    if (layout_axis_has_tokens(v, p->row_axis)) { // the token, then its index (smaller)
        for (int i = 0; i < p->rows; i++)
            w = imax(w, layout_text_w(v, panel_axis_label(v, p->row_axis, i, b, sizeof b), L->px_small));
        if (L->token_index)
            w += (int)lrintf(4 * L->s) + layout_text_w(v, panel_axis_label(NULL, AXIS_INDEX, p->rows - 1, b, sizeof b), layout_index_px(L));
    } else if (p->row_axis >= AXIS_EXP_ROW) { // an experiment's layers and heads ("l1.h0", "Σ heads")
        for (int i = 0; i < p->rows; i++) w = imax(w, layout_text_w(v, panel_axis_label(v, p->row_axis, i, b, sizeof b), L->px_small));
    } else {
        w = layout_text_w(v, panel_axis_label(NULL, AXIS_INDEX, p->rows - 1, b, sizeof b), L->px_small);
    }
    int gap = (int)lrintf(6 * L->s) + 4;
    return imin(imax(w + gap, (int)(16 * L->s)), (int)(170 * L->s));
}

// ---- geometry --------------------------------------------------------------

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }
static int64_t lmin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t lmax(int64_t a, int64_t b) { return a > b ? a : b; }

int layout_operator_w(const Layout *L, const View *v, const PanelSpec *p)
{
    int opw = (int)(1.2f * (float)L->px_op), opw_long = (int)(2.6f * (float)L->px_op);
    if (!p->op[0]) return (int)(10 * L->s);
    return strlen(p->op) > 3 ? imax(opw_long, layout_text_w(v, p->op, L->px_body) + opw / 2) : opw;
}

// Does panel i read its rows from the panel to its left (same rows, no operator between)?
static bool shares_rows(const Layout *L, int i)
{
    if (i == 0) return false;
    const PanelSpec *p = &L->spec[i], *q = &L->spec[i - 1];
    return !p->op[0] && !q->row_sums && p->rows == q->rows && p->row_axis == q->row_axis;
}

// A vocabulary axis longer than LAYOUT_VOCAB_SQUEEZE (a BPE model's hundreds of tokens) takes
// the room of LAYOUT_VOCAB_ROOM cells: its cells are squeezed (an image, under a pixel each)
// so that the stage's other panels keep cells with readable numbers.
static int room_of(int n, AxisKind a) { return a == AXIS_VOCAB && n > LAYOUT_VOCAB_SQUEEZE ? LAYOUT_VOCAB_ROOM : n; }
static int room_rows(const PanelSpec *p) { return room_of(p->rows, p->row_axis); }
static int room_cols(const PanelSpec *p) { return room_of(p->cols, p->col_axis); }
// The cell side (1/LAYOUT_Q px) of n cells in the room of `room` cells of side fit.
static int squeezed(int fit, int n, int room) { return n > room ? (int)lmax(1, (int64_t)fit * room / n) : fit; }

bool layout_squeezed(const Layout *L, int p, bool rows)
{
    const PanelSpec *q = &L->spec[p];
    return rows ? room_rows(q) < q->rows : room_cols(q) < q->cols;
}

// Zoom: sizes and offsets of the cells of every panel that follows the View's zoom.
static void apply_zoom(Layout *L, const View *v)
{
    for (int i = 0; i < L->n_panels; i++) {
        const PanelSpec *p = &L->spec[i];
        float z = fminf(v->zoom, layout_max_zoom(L, i));
        bool zoomed = z > 1.0f;
        L->zoom_x[i] = zoomed && p->cols == v->zoom_cols && (int)p->col_axis == v->zoom_col_axis;
        L->zoom_y[i] = zoomed && p->rows == v->zoom_rows && (int)p->row_axis == v->zoom_row_axis;
        const int fw = squeezed(L->fit_wq, p->cols, room_cols(p)), fh = squeezed(L->fit_hq, p->rows, room_rows(p));
        L->cell_wq[i] = L->zoom_x[i] ? (int)((float)fw * z) : fw;
        L->cell_hq[i] = L->zoom_y[i] ? (int)((float)fh * z) : fh;
        int64_t cw = (int64_t)p->cols * L->cell_wq[i], chh = (int64_t)p->rows * L->cell_hq[i];
        int64_t mx = lmax(0, cw - (int64_t)L->panel[i].w * LAYOUT_Q);
        int64_t my = lmax(0, chh - (int64_t)L->panel[i].h * LAYOUT_Q);
        int64_t ox = lmin(mx, lmax(0, (int64_t)((double)v->zoom_x * (double)cw)));
        int64_t oy = lmin(my, lmax(0, (int64_t)((double)v->zoom_y * (double)chh)));
        if (mx - ox < LAYOUT_Q) ox = mx; // within a pixel of the end (float rounding): at the end
        if (my - oy < LAYOUT_Q) oy = my;
        L->off_xq[i] = L->zoom_x[i] ? (int)ox : 0;
        L->off_yq[i] = L->zoom_y[i] ? (int)oy : 0;
    }
}

// The cell height (1/LAYOUT_Q px) that every column of panels allows in a height hh:
// a column holds a panel and the vectors stacked under it, each with its caption.
static int64_t column_cell_h(int hh, int n_cols, const int *col_rows, const int *col_n, int caption, int gap)
{
    int64_t m = INT64_MAX;
    for (int k = 0; k < n_cols; k++)
        // (a pixel each: every panel's height is rounded up on its own, as the width keeps one a panel)
        m = lmin(m, (int64_t)(hh - col_n[k] * caption - (col_n[k] - 1) * gap - col_n[k]) * LAYOUT_Q / imax(1, col_rows[k]));
    return m == INT64_MAX ? 1 : m;
}

// The cell size the panels get in area a with or without stacking the vectors
// (the same arithmetic as place_panels, without placing anything).
static int64_t fitted_cell(const Layout *L, const View *v, Rect a, bool stack, int opw, int opw_long)
{
    float s = L->s;
    int cap = (int)(1.5f * (float)L->px_body), colh = L->col_label_h, stack_gap = (int)(8 * s);
    int n_cols = 0, col_rows[LAYOUT_MAX_PANELS], col_n[LAYOUT_MAX_PANELS], sum_cols = 0, fixed = 0;
    for (int i = 0; i < L->n_panels; i++) {
        const PanelSpec *p = &L->spec[i];
        if (stack && p->stacked && n_cols > 0) {
            col_rows[n_cols - 1] += room_rows(p), col_n[n_cols - 1]++;
            continue;
        }
        col_rows[n_cols] = room_rows(p), col_n[n_cols] = 1, n_cols++;
        bool labels = !shares_rows(L, i) && p->row_axis != AXIS_NONE;
        int op = p->op[0] ? (strlen(p->op) > 3 ? imax(opw_long, layout_text_w(v, p->op, L->px_body) + opw / 2) : opw)
                          : (int)(10 * s);
        fixed += (labels ? label_width(L, v, p) : (int)(8 * s)) + (i > 0 ? op : 0);
        sum_cols += room_cols(p) + (p->row_sums ? 1 : 0);
        if (p->row_sums) fixed += (int)(6 * s) + (int)(10 * s);
    }
    int64_t cw = sum_cols ? (int64_t)(a.w - fixed - L->n_panels) * LAYOUT_Q / sum_cols : 0;
    int64_t c = lmin(lmin(cw, column_cell_h(a.h, n_cols, col_rows, col_n, cap + colh, stack_gap)), (int64_t)((float)L->cell_cap * L->num_s) * LAYOUT_Q);
    if (!v->projector) return c;
    // projector mode: the size of its numbers, which cells up to 2.5 × as wide as tall
    // hold (a bias under its weight: fewer columns, wider cells, larger numbers)
    return lmin((int64_t)((float)c * L->num_fill), lmin(cw, c * 5 / 2) * 7 / (int64_t)(8 * 0.62f * 6));
}

// The height the derivation strip (sub-steps with their numbers) takes off the bottom of
// area a, lines of line_h: 0 unless it leaves the panels at least half of it and its
// numbers fit side by side (readable text only).
static int strip_height(const Layout *L, const Trace *tr, const View *v, Rect a, int line_h)
{
    Derivation d;
    if (L->px_small < 12 || !scene_derivation(L, tr, v, 0, 0, &d)) return 0;
    int strip = d.n_lines * line_h + (int)(12 * L->s);
    int label_w = 0, value_w = 0, n_max = 1;
    char num[32];
    for (int i = 0; i < d.n_lines; i++) {
        label_w = imax(label_w, layout_text_w(v, d.line[i].label, L->px_small));
        n_max = imax(n_max, d.line[i].n);
        for (int j = 0; j < d.line[i].n; j++) {
            scene_derivation_text(&d, i, j, num, sizeof num);
            value_w = imax(value_w, layout_text_w(v, num, L->px_small));
        }
    }
    int need = layout_text_w(v, d.title, L->px_small) + label_w + n_max * (value_w + (int)(10 * L->s)) + (int)(40 * L->s);
    return strip * 2 > a.h || need > a.w ? 0 : strip;
}

// Once the panels are placed and zoomed: each one's cell side, whether it is drawn as an
// image, the size and decimals of its numbers and of its Σ column's.
static void size_numbers(Layout *L)
{
    const float s = L->s, ns = L->num_s;
    for (int i = 0; i < L->n_panels; i++) {
        PanelSpec *p = &L->spec[i];
        int w = L->cell_wq[i] / LAYOUT_Q, h = L->cell_hq[i] / LAYOUT_Q;
        L->cell[i] = imin(w, h);
        L->image[i] = L->cell_wq[i] < LAYOUT_IMAGE_CELL * LAYOUT_Q || L->cell_hq[i] < LAYOUT_IMAGE_CELL * LAYOUT_Q;
        p->decimals = -1;
        p->px_cell = 0;
        if (!L->image[i]) fit_numbers(p, w, h, ns, L->num_fill, layout_number_floor(L), ns != s);
        // projector mode, a panel too large even alone for its numbers at that size:
        // they keep the usual minimum rather than disappear, filling up to half a cell
        // as the projector's numbers may (a 16-row weight alone at 1024×768 has 28 px
        // tall cells: 10 px numbers at the usual fill, under the 12 px minimum)
        if (!L->image[i] && p->decimals < 0 && ns != s) fit_numbers(p, w, h, s, L->num_fill, layout_min_number_px(s), false);
        L->sum_decimals[i] = -1;
        L->sum_px[i] = 0;
        if (p->row_sums && L->zoom_x[i]) { // zoomed: the Σ column widens like the cells, as far as there is room
            int room = L->area.x + L->area.w - (L->panel[i].x + L->panel[i].w + (int)(6 * s));
            L->sum_w[i] = imax(L->sum_w[i], imin(imin(w, (int)((float)L->cell_cap * ns)), room));
            L->caption[i].w = L->panel[i].x + L->panel[i].w + (int)(6 * s) + L->sum_w[i] - L->caption[i].x;
        }
        if (p->row_sums && h >= LAYOUT_IMAGE_CELL) {
            fit_numbers_in(1.0f, false, L->sum_w[i], h, ns, L->num_fill, layout_number_floor(L),
                           &L->sum_decimals[i], &L->sum_px[i]);
            // projector mode, too small for its numbers: the usual minimum, as the cells
            // beside it (a Σ column without numbers is a column of one colour)
            if (L->sum_decimals[i] < 0 && ns != s)
                fit_numbers_in(1.0f, false, L->sum_w[i], h, s, L->num_fill, layout_min_number_px(s),
                               &L->sum_decimals[i], &L->sum_px[i]);
        }
    }
}

void layout_place_panels(Layout *L, const Trace *tr, const View *v)
{
    Rect a = L->area;
    // the derivation strip takes its lines off the bottom of the area (only where the
    // panels keep their numbers: below)
    const int line_h = (int)((float)L->px_small * 1.55f);
    int strip = strip_height(L, tr, v, a, line_h);
    float s = L->s, ns = L->num_s; // ns: the scale of the numbers (projector mode: larger)
    int cap = (int)(1.5f * (float)L->px_body), colh = L->col_label_h;
    int opw = (int)(1.2f * (float)L->px_op), opw_long = (int)(2.6f * (float)L->px_op);
    int sum_gap = (int)(6 * s), sum_min = (int)(10 * s), stack_gap = (int)(8 * s);
#define OPW(p) layout_operator_w(L, v, (p))
    // vectors go under their parameter only where that gives larger cells (a short
    // weight leaves room below it; a tall one is better beside its bias)
    bool any_stacked = false;
    for (int i = 0; i < L->n_panels; i++) any_stacked |= L->spec[i].stacked;
    if (any_stacked && fitted_cell(L, v, a, true, opw, opw_long) <= fitted_cell(L, v, a, false, opw, opw_long))
        for (int i = 0; i < L->n_panels; i++) L->spec[i].stacked = false;
    {
        // columns of the row: a panel and the vectors stacked under it
        int n_cols = 0, col_rows[LAYOUT_MAX_PANELS], col_n[LAYOUT_MAX_PANELS];
        int sum_cols = 0, fixed = 0;
        L->row_label_w = 0;
        for (int i = 0; i < L->n_panels; i++) {
            PanelSpec *p = &L->spec[i];
            if (p->stacked && n_cols > 0) {
                L->row_labels[i] = false;
                L->label_w[i] = 0;
                col_rows[n_cols - 1] += room_rows(p);
                col_n[n_cols - 1]++;
                continue;
            }
            col_rows[n_cols] = room_rows(p), col_n[n_cols] = 1, n_cols++;
            L->row_labels[i] = !shares_rows(L, i) && p->row_axis != AXIS_NONE;
            L->label_w[i] = L->row_labels[i] ? label_width(L, v, p) : (int)(8 * s);
            L->row_label_w = imax(L->row_label_w, L->label_w[i]);
            sum_cols += room_cols(p) + (p->row_sums ? 1 : 0);
            fixed += L->label_w[i] + (i > 0 ? OPW(p) : 0);
            if (p->row_sums) fixed += sum_gap + sum_min;
        }
        // (a pixel a panel kept free: each panel's width is rounded up)
        int64_t cw = sum_cols ? (int64_t)(a.w - fixed - L->n_panels) * LAYOUT_Q / sum_cols : 0;
        int64_t ch = column_cell_h(a.h, n_cols, col_rows, col_n, cap + colh, stack_gap);
        int64_t c = lmin(lmin(cw, ch), (int64_t)((float)L->cell_cap * ns) * LAYOUT_Q);
        if (strip > 0) { // the strip only where the cells keep their size or stay large
            int64_t ch2 = column_cell_h(a.h - strip, n_cols, col_rows, col_n, cap + colh, stack_gap);
            int64_t c2 = lmin(lmin(cw, ch2), (int64_t)((float)L->cell_cap * ns) * LAYOUT_Q);
            int dec = 0, npx = 0;
            if (c2 < c && L->result_panel >= 0) { // the result must keep its numbers
                const PanelSpec *rp = &L->spec[L->result_panel];
                // (projector mode: as wide as its cells may get, 2.5 × their height)
                int64_t c2w = v->projector ? lmin(cw, c2 * 5 / 2) : c2;
                fit_numbers_in(rp->num_max, false, (int)(c2w / LAYOUT_Q), (int)(c2 / LAYOUT_Q), ns,
                               L->num_fill, layout_number_floor(L), &dec, &npx);
            }
            // (projector mode: wherever the result keeps numbers of its minimum size)
            if (c2 < c && ((c2 < (int64_t)(40 * s) * LAYOUT_Q && !v->projector) || dec < 0)) {
                strip = 0;
            } else {
                L->deriv_shrank = c2 < c;
                a.h -= strip;
                ch = ch2, c = c2;
            }
        }
        if (c < 1) c = 1;
        int64_t cwide = c; // cell width
        if (c < LAYOUT_IMAGE_CELL * LAYOUT_Q) {
            // long sequences: cells drawn as pixels may be up to 4× wider than tall (or
            // taller than wide) so a tall, narrow tensor fills the area instead of a strip
            cwide = lmax(c, lmin(cw, c * 4));
            c = lmax(c, lmin(ch, c * 4));
        } else if (c >= 8 * LAYOUT_Q) { // whole pixels while cells look like cells
            c = c / LAYOUT_Q * LAYOUT_Q;
            // wider than tall where the width allows and the numbers then get larger
            // (their size is bound by the width): up to 1.5 × the height
            int want = 0, h = (int)(c / LAYOUT_Q);
            for (int i = 0; i < L->n_panels; i++) want = imax(want, number_width(&L->spec[i], h, ns, L->num_fill));
            // (projector mode: up to 2.5 ×, the large numbers' digits are what is wide)
            cwide = lmin(lmin(cw, v->projector ? c * 5 / 2 : c * 3 / 2), lmax(c, (int64_t)want * LAYOUT_Q));
            cwide = lmax(c, cwide / LAYOUT_Q * LAYOUT_Q);
        }
        L->fit_wq = (int)cwide, L->fit_hq = (int)c;
        int sum_w = (int)lmax(ceil_div(cwide, LAYOUT_Q), sum_min);
        int total = 0, max_h = 0, col_h = 0;
        for (int i = 0; i < L->n_panels; i++) {
            PanelSpec *p = &L->spec[i];
            int ph = (int)ceil_div((int64_t)p->rows * squeezed((int)c, p->rows, room_rows(p)), LAYOUT_Q);
            if (p->stacked && i > 0) { // below the one before: its caption and cells
                col_h += stack_gap + cap + colh + ph;
                max_h = imax(max_h, col_h);
                continue;
            }
            total += (i > 0 ? OPW(p) : 0) + L->label_w[i] +
                     (int)ceil_div((int64_t)p->cols * squeezed((int)cwide, p->cols, room_cols(p)), LAYOUT_Q);
            if (p->row_sums) total += sum_gap + sum_w;
            col_h = ph;
            max_h = imax(max_h, col_h);
        }
        int x = a.x + imax(0, (a.w - total) / 2);
        int block_h = cap + colh + max_h;
        int y0 = a.y + imax(0, (a.h - block_h) / 2);
        L->deriv = (Rect){0, 0, 0, 0};
        L->deriv_line_h = line_h;
        if (strip > 0) // the panels, then the strip under them
            L->deriv = (Rect){a.x, y0 + block_h + (int)(10 * L->s), a.w, strip - (int)(10 * L->s)};
        for (int i = 0; i < L->n_panels; i++) {
            PanelSpec *p = &L->spec[i];
            int pw = (int)ceil_div((int64_t)p->cols * squeezed((int)cwide, p->cols, room_cols(p)), LAYOUT_Q);
            int ph = (int)ceil_div((int64_t)p->rows * squeezed((int)c, p->rows, room_rows(p)), LAYOUT_Q);
            if (p->stacked && i > 0) { // under the panel before, the operator in that one's label column
                Rect above = L->panel[i - 1];
                int y = above.y + above.h + stack_gap + cap + colh, lab = L->label_w[i - 1];
                L->panel[i] = (Rect){above.x, y, pw, ph};
                L->caption[i] = (Rect){above.x, y - colh - cap, pw, cap};
                L->op[i] = (Rect){above.x - lab - (int)(4 * s), y, lab, ph};
                L->sum_w[i] = 0;
                continue;
            }
            int gap = i > 0 ? OPW(p) : 0, lab = L->label_w[i];
            L->op[i] = (Rect){x, y0 + cap + colh, gap, max_h};
            x += gap + lab;
            int extra = p->row_sums ? sum_gap + sum_w : 0;
            L->panel[i] = (Rect){x, y0 + cap + colh, pw, ph};
            L->caption[i] = (Rect){x - lab, y0, lab + pw + extra, cap};
            L->sum_w[i] = p->row_sums ? sum_w : 0;
            x += pw + extra;
        }
    }
#undef OPW
    apply_zoom(L, v);
    size_numbers(L);
    layout_match_strip_decimals(L, tr, v);
}

int layout_narration_min_px(const Layout *L)
{
    // (projector mode: from the usual small size, not its enlarged one: the larger
    // minimum grew the box into the panels' room, their numbers then under the projector's size)
    int small = L->num_s != L->s ? imax(even(16 * L->s), LAYOUT_MIN_TEXT_PX) : L->px_small;
    return imax(LAYOUT_MIN_TEXT_PX, small - 2);
}

// The narration box's height that holds every stage's narration at its smallest size
// (layout_narration_min_px) in a box w wide (the renderer's padding and heading).
static int narration_height(const Layout *L, const Trace *tr, const View *v, int w)
{
    char buf[600];
    View each = *v;
    int px = layout_narration_min_px(L), lh = px * 6 / 5 + 1, pad = (int)lrintf(10 * L->s), lines = 1;
    int inner = w - 2 * pad - (int)lrintf(4 * L->s), from, to;
    scene_narration_stages(tr, v, &from, &to);
    for (int st = from; st < to && inner > 0; st++) {
        each.stage = st;
        // the estimate (never narrower than the drawn text): no font work in every frame's layout
        int tw = layout_text_width_est(scene_narration(tr, &each, buf, sizeof buf), px);
        lines = imax(lines, (int)ceilf((float)tw / (0.88f * (float)inner)));
    }
    return lines * lh + pad + L->px_small * 13 / 10 + pad / 2 + 2;
}

// A legend name that may not fit beside its ramp (draw_legend: the numbers up to 20 % of
// the box each, the ramp 30 %, the margins) goes on a line of its own ("scores, masked
// scores"), the band (bh) taller if need be; in projector mode only where the band has the
// room (the numbers' size first). Returns the band's height.
static int legend_stack_names(Layout *L, const View *v, int legend_w, int bh)
{
    int pad = (int)lrintf(8 * L->s);
    for (int k = 0; k < L->n_groups; k++) {
        const char *name = L->group[k].label;
        int bw = v->measure && v->measure->width ? v->measure->width(v->measure->ctx, true, L->px_small, name)
                                                 : layout_text_w(v, name, L->px_small) * 11 / 10;
        if (bw > legend_w * 30 / 100 - 3 * pad) L->legend_stacked = true;
    }
    if (L->legend_stacked && v->projector && layout_legend_height(L) > bh) L->legend_stacked = false;
    return imax(bh, layout_legend_height(L));
}

void layout_compute(Layout *L, const Trace *tr, const View *v, int w, int h)
{
    memset(L, 0, sizeof *L);
    L->w = w, L->h = h;
    float s = fminf((float)w / 1280.0f, (float)h / 720.0f);
    if (s < 0.5f) s = 0.5f;
    if (s > 4.0f) s = 4.0f;
    L->s = s;
    L->num_s = v->projector ? s * (float)LAYOUT_PROJECTOR_NUMBER_PX / (float)LAYOUT_MIN_NUMBER_PX : s;
    L->num_fill = v->projector ? LAYOUT_PROJECTOR_NUMBER_FILL : LAYOUT_NUMBER_FILL;
    L->cell_cap = v->print ? 2 * LAYOUT_MAX_CELL : LAYOUT_MAX_CELL; // printed: cells fill the page's width
    // (below 1280×720 the index's width and line took the last pixels of the tiny LM's
    // FFN cells, drawn as an image at 800×600)
    L->token_index = s >= 1.0f;
    // no text under 12 px (LAYOUT_MIN_TEXT_PX) on small screens: 800×600 scales by 0.625
    L->px_title = imax(even(24 * s), LAYOUT_MIN_TEXT_PX + 2);
    L->px_body = imax(even(20 * s), LAYOUT_MIN_TEXT_PX);
    L->px_small = imax(even((v->projector ? 18 : 16) * s), LAYOUT_MIN_TEXT_PX); // (projector: axis labels, legend larger)
    L->px_formula = imax(even(26 * s), LAYOUT_MIN_TEXT_PX + 2);
    L->px_op = even(34 * s);
    L->px_help = even(22 * s);
    int m = (int)lrintf(10 * s), gap = (int)lrintf(6 * s);

    layout_place_chrome(L, tr, v, m, gap); // the timeline (or the experiment's row) and the tabs

    // header: stage name + shapes, then the formula
    int hy = L->tabs.y + L->tabs.h + gap;
    L->header = (Rect){m, hy, w - 2 * m, (int)(L->px_title * 1.4f + L->px_formula * 1.4f)};
    if (v->lesson && v->lesson->n_checkpoints > 1 && !v->print) { // the training's loss curve, right
        char sample[160]; // the widest its label gets: "trained: step 000000 of 000000 (checkpoint 00 of 00)"
        const char *args[] = {"000000", "0.000", "00", "00", "000000"};
        i18n_fmt(sample, sizeof sample, v->lang, "ui.checkpoint_final", 5, args);
        const int cw = imin(imax((int)(300 * s), layout_text_w(v, sample, L->px_small) + (int)(20 * s)), L->header.w / 2);
        L->curve = (Rect){L->header.x + L->header.w - cw, hy, cw, L->header.h};
        L->header.w -= cw + gap;
    }
    if (v->print) { // printed (the handout): none of the window's chrome, the page has its own header
        L->timeline.h = L->tabs.h = L->header.h = 0;
        L->header.y = m;
        for (int i = 0; i < L->n_steps; i++) L->step_rect[i].h = 0;
        L->n_batch_tabs = L->n_head_tabs = L->n_layer_tabs = 0;
        L->status = L->batch_label = L->head_label = L->layer_label = (Rect){m, m, 0, 0};
    }

    // bottom: narration and legend (one row per colour scale, one for the masked / NaN looks)
    scene_build(L, tr, v);
    int legend_w = imin((int)(440 * s), (w - 2 * m) * 2 / 5);
    int bh = imax((int)((v->study ? 200 : 118) * s), layout_legend_height(L));
    if (v->print) { // (the page writes the narration)
        bh = layout_legend_height(L);
    } else if (!v->study) {
        // taller where the narration would otherwise be smaller than its minimum (up to a
        // third of the window: small screens had ~8 px text under an empty band)
        bh = imax(bh, imin(narration_height(L, tr, v, w - 2 * m - legend_w - gap), h / 3));
    }
    bh = legend_stack_names(L, v, legend_w, bh);
    int by = h - m - bh;
    L->narration = (Rect){m, by, v->print ? 0 : w - 2 * m - legend_w - gap, bh};
    L->legend = (Rect){w - m - legend_w, by, legend_w, bh};

    // heatmaps in between
    int ay = L->header.y + L->header.h + gap;
    L->area = (Rect){m, ay, w - 2 * m, imax(0, by - gap - ay)};
    L->col_label_h = (int)(L->px_small * 1.3f);
    for (int i = 0; i < L->n_panels && L->token_index; i++) // a token axis: a second line, the index
        if (layout_axis_has_tokens(v, L->spec[i].col_axis)) {
            L->col_label_h += layout_index_px(L) * 6 / 5;
            break;
        }
    // the stage's extra beside its panels (its recipe's: a language model's next-token bars),
    // not printed, nor while it would give away a hidden result
    const ViewKindInfo *vk = viewkind_of(v->kind);
    const StageRecipe *r = v->stage >= 0 && v->stage < tr->n ? recipe_of(tr->stages[v->stage].kind) : NULL;
    if (r && r->extra && vk->extra && !v->print && !(v->study && v->hide_result)) r->extra(L, tr, v, gap);
    L->kind = v->kind;
    vk->place(L, tr, v);
}

void layout_place_stage(Layout *L, const Trace *tr, const View *v)
{
    if (!layout_place_panels_in_rows(L, tr, v)) layout_place_panels(L, tr, v);
    if (v->projector || v->print_split) layout_mark_strip_decimals(L, tr, v); // (kept by a split's parts)
    if (v->projector && layout_projector_split(L, tr, v)) {
        layout_place_panels(L, tr, v);
        layout_scale_operators(L);
    } else if (v->projector) {
        layout_scale_operators(L);
    } else if (v->print_split && L->result_panel >= 0 && L->n_panels >= 2) { // the page: operands above the result
        L->n_parts = 2;
        L->part = v->part <= 0 ? 0 : 1;
        layout_keep_part(L, L->part, false);
        L->split = true;
        layout_place_panels(L, tr, v);
    }
    scene_note_rounding(L, tr, v);
}

int layout_legend_height(const Layout *L)
{
    bool special = false;
    for (int i = 0; i < L->n_panels; i++)
        special |= L->spec[i].any_nan || (L->spec[i].any_masked && !L->group[L->spec[i].group].mask01);
    int row = (int)((float)L->px_small * 1.45f), pad = (int)lrintf(8 * L->s);
    return 2 * pad + row * (L->n_groups * (L->legend_stacked ? 2 : 1) + (special ? 1 : 0));
}

// Where cell i of n (side q in 1/LAYOUT_Q px, offset off) starts, from the panel's edge:
// ceil((i·q − off) / Q), except that the last cell always owns the last pixel before the end.
// (Cells under a pixel, a squeezed vocabulary axis: with n·q a multiple of Q, V = 768, the
// last cell's start rounded up to the end and it had no pixel; the cells whose start is
// there now start a pixel before it, with no pixel, and the last cell gets that pixel.)
static int cell_start(int64_t i, int n, int q, int off)
{
    const int at = (int)ceil_div(i * q - off, LAYOUT_Q);
    if (i >= n) return at;
    return imin(at, (int)ceil_div((int64_t)n * q - off, LAYOUT_Q) - 1);
}

// The cell under pixel d from the panel's edge (cell_start's inverse): the last pixel
// before the end is the last cell's.
static int cell_at(int64_t d, int n, int q, int off)
{
    const int at = (int)floor_div(d * LAYOUT_Q + off, q);
    return at < n && d == cell_start(n, n, q, off) - 1 ? n - 1 : at;
}

int layout_col_x(const Layout *L, int p, int col)
{
    return L->panel[p].x + cell_start(col, L->spec[p].cols, L->cell_wq[p], L->off_xq[p]);
}

int layout_row_y(const Layout *L, int p, int row)
{
    return L->panel[p].y + cell_start(row, L->spec[p].rows, L->cell_hq[p], L->off_yq[p]);
}

int layout_col_at(const Layout *L, int p, int x)
{
    return cell_at(x - L->panel[p].x, L->spec[p].cols, L->cell_wq[p], L->off_xq[p]);
}

int layout_row_at(const Layout *L, int p, int y)
{
    return cell_at(y - L->panel[p].y, L->spec[p].rows, L->cell_hq[p], L->off_yq[p]);
}

void layout_visible(const Layout *L, int p, int *r0, int *r1, int *c0, int *c1)
{
    const PanelSpec *ps = &L->spec[p];
    Rect q = L->panel[p];
    *r0 = imax(0, layout_row_at(L, p, q.y));
    *r1 = imin(ps->rows - 1, layout_row_at(L, p, q.y + q.h - 1));
    *c0 = imax(0, layout_col_at(L, p, q.x));
    *c1 = imin(ps->cols - 1, layout_col_at(L, p, q.x + q.w - 1));
}

bool layout_cell_rect(const Layout *L, int p, int row, int col, Rect *out)
{
    // (p, row, col): a selection or a pin made on a stage whose panels an edit or the lab has
    // changed since (test_render asks for false past the last row)
    if (p < 0 || p >= L->n_panels) return false;
    const PanelSpec *ps = &L->spec[p];
    if (row < 0 || col < 0 || row >= ps->rows || col >= ps->cols) return false;
    int x0 = layout_col_x(L, p, col), x1 = layout_col_x(L, p, col + 1);
    int y0 = layout_row_y(L, p, row), y1 = layout_row_y(L, p, row + 1);
    *out = (Rect){x0, y0, x1 - x0, y1 - y0};
    Rect q = L->panel[p];
    return x1 > x0 && y1 > y0 && x1 > q.x && x0 < q.x + q.w && y1 > q.y && y0 < q.y + q.h;
}

bool layout_hit_sum(const Layout *L, int x, int y, int *p, int *row)
{
    for (int i = 0; i < L->n_panels; i++) {
        if (L->sum_w[i] <= 0) continue;
        Rect q = L->panel[i];
        Rect col = {q.x + q.w + (int)(6 * L->s), q.y, L->sum_w[i], q.h};
        if (!rect_contains(col, x, y)) continue;
        int r = layout_row_at(L, i, y);
        if (r < 0 || r >= L->spec[i].rows) return false; // y: the mouse, above or below the rows
        *p = i, *row = r;
        return true;
    }
    return false;
}

int layout_hit_panel(const Layout *L, int x, int y)
{
    for (int i = 0; i < L->n_panels; i++)
        if (rect_contains(L->panel[i], x, y) && L->cell_wq[i] > 0 && L->cell_hq[i] > 0) return i;
    return -1;
}

bool layout_hit_cell(const Layout *L, int x, int y, int *p, int *row, int *col)
{
    int i = layout_hit_panel(L, x, y);
    if (i < 0) return false;
    *p = i;
    *row = layout_row_at(L, i, y);
    *col = layout_col_at(L, i, x);
    return *row >= 0 && *col >= 0 && *row < L->spec[i].rows && *col < L->spec[i].cols;
}

// ---- zoom and pan ---------------------------------------------------------------

float layout_max_zoom(const Layout *L, int p)
{
    (void)p; // every panel of a stage has the same fitted cell
    if (L->fit_hq <= 0) return 1.0f;
    return fmaxf(1.0f, 100.0f * L->s * (float)LAYOUT_Q / (float)L->fit_hq);
}

static float clampf(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; }

bool layout_zoom_at(View *v, const Layout *L, int x, int y, float factor)
{
    int p = layout_hit_panel(L, x, y);
    if (p < 0) {
        p = L->result_panel;
        assert(p < L->n_panels); // (layout's own index)
        if (p < 0) return false; // a stage without a result panel
        x = L->panel[p].x + L->panel[p].w / 2;
        y = L->panel[p].y + L->panel[p].h / 2;
    }
    const PanelSpec *ps = &L->spec[p];
    View old = *v;
    // the content point under (x, y), as a fraction of the panel's columns / rows
    double dx = (double)(x - L->panel[p].x) * LAYOUT_Q, dy = (double)(y - L->panel[p].y) * LAYOUT_Q;
    double fx, fy;
    if (v->zoom > 1.0f && L->zoom_x[p] && L->zoom_y[p]) {
        fx = (dx + L->off_xq[p]) / ((double)ps->cols * L->cell_wq[p]);
        fy = (dy + L->off_yq[p]) / ((double)ps->rows * L->cell_hq[p]);
    } else { // start over on this panel's axes
        view_reset_zoom(v);
        v->zoom_rows = ps->rows, v->zoom_cols = ps->cols;
        v->zoom_row_axis = (int)ps->row_axis, v->zoom_col_axis = (int)ps->col_axis;
        fx = dx / ((double)ps->cols * L->fit_wq);
        fy = dy / ((double)ps->rows * L->fit_hq);
    }
    float z = clampf(v->zoom * factor, 1.0f, layout_max_zoom(L, p));
    v->zoom = z;
    if (z <= 1.0f) {
        v->zoom_x = v->zoom_y = 0.0f;
    } else { // keep that point under (x, y)
        double cw = (double)ps->cols * (double)(int)((float)L->fit_wq * z);
        double chh = (double)ps->rows * (double)(int)((float)L->fit_hq * z);
        v->zoom_x = clampf((float)(fx - dx / cw), 0.0f, 1.0f);
        v->zoom_y = clampf((float)(fy - dy / chh), 0.0f, 1.0f);
    }
    return memcmp(&old, v, sizeof old) != 0;
}

bool layout_pan(View *v, const Layout *L, int dx, int dy)
{
    if (v->zoom <= 1.0f) return false;
    float ox = v->zoom_x, oy = v->zoom_y;
    for (int i = 0; i < L->n_panels; i++)
        if (L->zoom_x[i]) {
            double cw = (double)L->spec[i].cols * L->cell_wq[i];
            float mx = (float)fmax(0.0, 1.0 - (double)L->panel[i].w * LAYOUT_Q / cw);
            v->zoom_x = clampf(fminf(v->zoom_x, mx) - (float)((double)dx * LAYOUT_Q / cw), 0.0f, mx);
            break;
        }
    for (int i = 0; i < L->n_panels; i++)
        if (L->zoom_y[i]) {
            double chh = (double)L->spec[i].rows * L->cell_hq[i];
            float my = (float)fmax(0.0, 1.0 - (double)L->panel[i].h * LAYOUT_Q / chh);
            v->zoom_y = clampf(fminf(v->zoom_y, my) - (float)((double)dy * LAYOUT_Q / chh), 0.0f, my);
            break;
        }
    return ox != v->zoom_x || oy != v->zoom_y;
}

int layout_hit_step(const Layout *L, int x, int y)
{
    for (int i = 0; i < L->n_steps; i++)
        if (rect_contains(L->step_rect[i], x, y)) return (int)L->step_id[i];
    return -1;
}

int layout_hit_batch(const Layout *L, int x, int y)
{
    for (int i = 0; i < L->n_batch_tabs; i++)
        if (rect_contains(L->batch_tab[i], x, y)) return i;
    return -1;
}

int layout_hit_head(const Layout *L, int x, int y)
{
    for (int i = 0; i < L->n_head_tabs; i++)
        if (rect_contains(L->head_tab[i], x, y)) return i;
    return -1;
}

int layout_hit_checkpoint(const Layout *L, const View *v, int x, int y)
{
    const Lesson *ls = v ? v->lesson : NULL;
    if (!ls || L->curve.w <= 0 || !rect_contains(L->curve, x, y) || ls->n_checkpoints < 2) return -1;
    const int x0 = L->curve.x + (int)(8 * L->s), x1 = L->curve.x + L->curve.w - (int)(8 * L->s);
    int best = 0;
    for (int k = 1; k < ls->n_checkpoints; k++) // (steps on a square-root axis: the early ones apart)
        if (abs(layout_checkpoint_x(ls, k, x0, x1) - x) < abs(layout_checkpoint_x(ls, best, x0, x1) - x)) best = k;
    return best;
}

int layout_checkpoint_x(const Lesson *ls, int k, int x0, int x1)
{
    const double last = sqrt((double)ls->ckpt_step[ls->n_checkpoints - 1]), first = sqrt((double)ls->ckpt_step[0]);
    const double f = last > first ? (sqrt((double)ls->ckpt_step[k]) - first) / (last - first) : 0.0;
    return x0 + (int)lround(f * (x1 - x0));
}

int layout_hit_layer(const Layout *L, int x, int y)
{
    for (int i = 0; i < L->n_layer_tabs; i++)
        if (rect_contains(L->layer_tab[i], x, y)) return i;
    return -1;
}
