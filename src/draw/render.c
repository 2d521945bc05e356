// render.c — one frame of the visualizer (see render.h).
//
// Draw order: background | timeline | tabs + status | header (title, shapes,
// formula) | heatmaps with operators, animated by View.anim | legend |
// narration | toast | hover highlight + tooltip | help overlay | picker |
// export progress. The timeline, tabs, header, legend, narration and the window's
// overlays are chrome.c's; what the view says about the frame (animation, texts, the
// strip) comes prepared in a Frame (view/frame.h), filled before the first paint; everything
// goes through paint.h (rectangles, text, and images for heatmaps too large
// for cells, heatmap.h).
#include "render.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bars.h"
#include "visiondraw.h"
#include "cellmark.h"
#include "chrome.h"
#include "derivation.h"
#include "explain.h"
#include "frame.h"
#include "scene.h"
#include "study.h"
#include "viewdraw.h"
#include "viewkind.h"
#include "i18n.h"
#include "overlay.h"
#include "picker_draw.h"
#include "playback.h"

Rgb render_background(void) { return THEME.bg; }

int render_cell_gap(int cell) { return cell >= 10 ? 1 : 0; }

// ---- cells ------------------------------------------------------------------

CellLook render_cell_look(const PanelSpec *ps, int row, int col)
{
    float v = panel_value(ps, row, col);
    if (ps->mask && ps->mask[(size_t)row * (size_t)ps->cols + (size_t)col] == 0.0f) return CELL_MASKED;
    if (ps->neg_inf_masked && isinf(v) && v < 0) return CELL_MASKED;
    if (isnan(v)) return CELL_NAN;
    return CELL_VALUE;
}

Rgb render_cell_color(const PanelSpec *ps, int row, int col)
{
    switch (render_cell_look(ps, row, col)) {
    case CELL_MASKED: return colormap_masked();
    case CELL_NAN: return colormap_nan();
    default: return colormap_value(&ps->scale, panel_value(ps, row, col));
    }
}

typedef struct CellDraw {
    int x, y, w, h;    // position and size
    Rgb color;         // background colour to show
    float show;        // 0..1 how far the cell has appeared
    bool masked, nan;
    const char *text;  // number to print, or NULL
    int px;
} CellDraw;

static void draw_cell(Canvas *cv, const CellDraw *d, float s)
{
    int g = render_cell_gap(d->w < d->h ? d->w : d->h);
    Rgb c = d->show >= 1.0f ? d->color : colormap_lerp(THEME.empty, d->color, d->show);
    paint_fill(cv, c, 255, d->x + g, d->y + g, d->w - 2 * g, d->h - 2 * g);
    if (d->masked && d->show > 0.5f)
        paint_hatch(cv, d->x + g, d->y + g, d->w - 2 * g, d->h - 2 * g, (uint8_t)(255 * (d->show - 0.5f) * 2), s);
    if (d->text && d->show > 0.55f) {
        Rgb tc = colormap_text_dark(c) ? THEME.black : THEME.white;
        uint8_t a = (uint8_t)(255.0f * ease_clamp01((d->show - 0.55f) / 0.45f));
        Rect box = {d->x, d->y, d->w, d->h};
        if (d->masked) { // keep the label readable over the hatching
            int tw, th;
            paint_text_size(cv, FONT_MONO, d->px, d->text, &tw, &th);
            paint_fill(cv, colormap_masked(), a, d->x + (d->w - tw) / 2 - 2, d->y + (d->h - th) / 2, tw + 4, th);
        }
        paint_text_centered(cv, FONT_MONO, d->px, tc, a, box, d->text);
    }
}

// ---- scene pieces -------------------------------------------------------------

// 1, 2, 5, 10, 20, 50, … : the smallest at least n (label spacing)
static int nice_step(int n)
{
    for (int d = 1;; d *= 10) {
        if (n <= d) return d;
        if (n <= 2 * d) return 2 * d;
        if (n <= 5 * d) return 5 * d;
        if (d > 100000) return 10 * d;
    }
}

// Which positions of [i0, i1] get a label: the multiples of `every`, and the last one
// (the length of the axis), which replaces its neighbour when they would collide
// (cell px apart, `need` px each). Returns how many, in out (at most max).
static int tick_positions(int i0, int i1, int every, float cell, float need, int *out, int max)
{
    int n = 0;
    for (int i = (i0 + every - 1) / every * every; i <= i1 && n < max; i += every) out[n++] = i;
    if (i1 >= i0 && (n == 0 || out[n - 1] != i1) && n < max) {
        if (n > 0 && (float)(i1 - out[n - 1]) * cell < need) n--; // the last one wins
        out[n++] = i1;
    }
    return n;
}

#define MAX_TICKS 200

static void draw_labels(Canvas *cv, const Layout *L, const Frame *F, const View *v, int p, int dx, int dy)
{
    int ticks[MAX_TICKS];
    const PanelSpec *ps = &L->spec[p];
    Rect q = L->panel[p];
    q.x += dx, q.y += dy;
    float row_h = (float)L->cell_hq[p] / LAYOUT_Q, col_w = (float)L->cell_wq[p] / LAYOUT_Q;
    int r0, r1, c0, c1;
    layout_visible(L, p, &r0, &r1, &c0, &c1);
    char b[24], fit[96];
    Rgb m = THEME.muted;
    // rows: every row while they are tall enough, else every 2nd, 5th, 10th, …
    int px = L->px_small;
    if (ps->row_axis == AXIS_NONE) px = 0;
    if (!L->image[p] && (float)px > row_h) px = row_h < (float)LAYOUT_MIN_TEXT_PX ? LAYOUT_MIN_TEXT_PX : (int)row_h & ~1;
    // a token axis: every row, its label as small as the rows need (not under 12 px), and
    // its index right of it (issue 35: every other row of 19 px rows was labelled)
    const bool tok_rows = layout_axis_has_tokens(v, ps->row_axis) && L->token_index;
    const int ipx = layout_index_px(L), igap = paint_px(L->s, 4);
    if (tok_rows && !L->image[p] && (float)(px * 13 / 10) > row_h)
        px = (int)(row_h * 10.0f / 13.0f) < LAYOUT_MIN_TEXT_PX ? LAYOUT_MIN_TEXT_PX : (int)(row_h * 10.0f / 13.0f);
    // the index no larger than the token beside it: rows that shrank the tokens (18 rows of
    // 17 px at 3840x2160) had 36 px indices piled on each other
    const int ripx = ipx < px ? ipx : px;
    int th = px * 13 / 10;
    int every = nice_step((int)ceilf((float)th / row_h));
    if (L->row_labels[p] && ps->row_axis != AXIS_NONE) {
        int iw = 0;
        if (tok_rows) paint_text_size(cv, FONT_SANS, ripx, panel_axis_label(NULL, AXIS_INDEX, ps->rows - 1, b, sizeof b), &iw, &(int){0});
        int ix = q.x - paint_px(L->s, 6); // the index's right edge; the token's, left of it
        int lx = tok_rows ? ix - iw - igap : ix;
        int lw = L->label_w[p] - paint_px(L->s, 6) - 3 - (tok_rows ? iw + igap : 0);
        int margin = L->zoom_y[p] ? 0 : th / 2;
        paint_clip(cv, &(Rect){q.x - L->label_w[p], q.y - margin, L->label_w[p] - 3, q.h + 2 * margin});
        int nt = tick_positions(r0, r1, every, row_h, (float)th, ticks, MAX_TICKS);
        for (int k = 0; k < nt; k++) {
            int i = ticks[k];
            const char *label = panel_axis_label(v, ps->row_axis, i, b, sizeof b);
            const char *t = paint_fit_text(cv, FONT_SANS, px, label, lw, fit, sizeof fit);
            int tw, hh;
            paint_text_size(cv, FONT_SANS, px, t, &tw, &hh);
            int y0 = layout_row_y(L, p, i) + dy, y1 = layout_row_y(L, p, i + 1) + dy;
            if ((y0 + y1 - hh) / 2 < q.y - margin || (y0 + y1 + hh) / 2 > q.y + q.h + margin) continue;
            bool pad = ps->row_axis == AXIS_KEY && frame_key_padded(F, i);
            if (!visiondraw_axis_tile(cv, v, ps->row_axis, i, (Rect){lx - hh, (y0 + y1 - hh) / 2, hh, hh}))
                paint_text(cv, FONT_SANS, px, pad ? THEME.pad_ink : m, 255, lx, (y0 + y1 - hh) / 2, ALIGN_RIGHT, t);
            if (pad) { // struck through, at least an em wide (a "." stays visibly struck)
                int sw = tw > px ? tw : px;
                paint_fill(cv, THEME.pad_ink, 255, lx - tw / 2 - sw / 2, (y0 + y1) / 2, sw, paint_px(L->s, 2));
            }
            if (tok_rows) { // the index, smaller and fainter, on the token's baseline
                int iw2, ih;
                const char *it = panel_axis_label(NULL, AXIS_INDEX, i, b, sizeof b);
                paint_text_size(cv, FONT_SANS, ripx, it, &iw2, &ih);
                paint_text(cv, FONT_SANS, ripx, m, 160, ix, (y0 + y1 + hh) / 2 - ih, ALIGN_RIGHT, it);
            }
        }
        paint_clip(cv, NULL);
    }
    // columns: as many as fit side by side
    const bool tok_cols = layout_axis_has_tokens(v, ps->col_axis);
    px = L->px_small;
    if (!L->image[p] && (float)px > col_w) px = col_w < (float)LAYOUT_MIN_TEXT_PX ? LAYOUT_MIN_TEXT_PX : (int)col_w & ~1;
    int wmax = 0, tw, hh;
    // a squeezed vocabulary axis (hundreds of columns under a pixel): its labels stay over the
    // panel, the first from its left edge, the last to its right edge, so they neither run off
    // the window nor over the next panel's (logits' "␣something" at 1280×720, V = 768); the
    // ticks a half label further apart for the ends moved in
    const bool squeezed = layout_squeezed(L, p, false);
    const View *lv = v; // whose labels: the lesson's tokens, or (NULL) the indices
    for (int pass = 0; pass < 2; pass++) {
        wmax = 0;
        for (int j = c0; j <= c1; j += c1 - c0 > 64 ? (c1 - c0) / 64 : 1) {
            paint_text_size(cv, FONT_SANS, px, panel_axis_label(lv, ps->col_axis, j, b, sizeof b), &tw, &hh);
            if (tw > wmax) wmax = tw;
        }
        paint_text_size(cv, FONT_SANS, px, panel_axis_label(lv, ps->col_axis, c1, b, sizeof b), &tw, &hh);
        if (tw > wmax) wmax = tw;
        every = nice_step((int)ceilf((float)(wmax + 4 + (squeezed ? wmax / 2 : 0)) / col_w));
        // a squeezed axis: the first and last tokens both over the panel (smaller: the last
        // wins over a neighbour nearer than its ticks' spacing)
        int w0 = 0;
        if (squeezed && lv) paint_text_size(cv, FONT_SANS, px, panel_axis_label(lv, ps->col_axis, c0, b, sizeof b), &w0, &hh);
        const bool ends_apart =
            !squeezed || !lv || (w0 + tw + 8 <= q.w && (float)(c1 - c0) * col_w >= (float)(wmax + 4 + wmax / 2));
        // a token axis: smaller tokens (not under 12 px) rather than every other one
        if (((every > 1 && c1 - c0 <= 64) || !ends_apart) && lv && tok_cols && px > LAYOUT_MIN_TEXT_PX) {
            px--;
            pass--;
            continue;
        }
        // tokens that do not all fit: indices instead (every other token left a repeated
        // one, "a … a", without a way to tell which key it is)
        if (every == 1 || lv == NULL || c1 - c0 > 64) break;
        lv = NULL;
    }
    // a token axis with its tokens shown: the index under each, smaller and fainter
    const bool col_index = tok_cols && lv != NULL && L->token_index;
    int every_i = 1, iwmax = 0;
    if (col_index) {
        paint_text_size(cv, FONT_SANS, ipx, panel_axis_label(NULL, AXIS_INDEX, c1, b, sizeof b), &iwmax, &hh);
        every_i = nice_step((int)ceilf((float)(iwmax + 2 + (squeezed ? iwmax / 2 : 0)) / col_w));
    }
    const int tok_h = col_index ? L->col_label_h - ipx * 6 / 5 : L->col_label_h; // the token line
    // labels may stick out past the ends, unless zoomed (scrolled-out labels) or the Σ column is there
    int margin = L->zoom_x[p] || squeezed ? 0 : (int)fmaxf(col_w, (float)wmax / 2 + 2);
    int right = ps->row_sums ? 2 : margin;
    paint_clip(cv, &(Rect){q.x - margin, q.y - L->col_label_h, q.w + margin + right, L->col_label_h});
    int nt = tick_positions(c0, c1, every, col_w, (float)(wmax + 4 + (squeezed ? wmax / 2 : 0)), ticks, MAX_TICKS);
    int drawn_right = INT_MIN; // (a squeezed axis's ends moved in: never over the label before)
    for (int k = 0; k < nt; k++) {
        int j = ticks[k];
        const char *t = panel_axis_label(lv, ps->col_axis, j, b, sizeof b);
        paint_text_size(cv, FONT_SANS, px, t, &tw, &hh);
        int x0 = layout_col_x(L, p, j) + dx, x1 = layout_col_x(L, p, j + 1) + dx;
        int cx = (x0 + x1) / 2;
        // the last label may end at the panel's edge instead of sticking out (never cut)
        if (j == c1 && cx + tw / 2 > q.x + q.w + right) cx = q.x + q.w + right - (tw + 1) / 2;
        if (squeezed && j == c0 && cx - tw / 2 < q.x) cx = q.x + tw / 2;
        if (cx - tw / 2 < q.x - margin || cx + (tw + 1) / 2 > q.x + q.w + right) continue;
        if (squeezed && cx - tw / 2 < drawn_right + 4) continue;
        drawn_right = cx + (tw + 1) / 2;
        bool pad = ps->col_axis == AXIS_KEY && frame_key_padded(F, j);
        int ty = q.y - L->col_label_h + (tok_h - hh) / 2;
        if (!visiondraw_axis_tile(cv, lv, ps->col_axis, j, (Rect){cx - hh / 2, ty, hh, hh}))
            paint_text(cv, FONT_SANS, px, pad ? THEME.pad_ink : m, 255, cx, ty, ALIGN_CENTER, t);
        if (pad) { // struck through, at least an em wide (a "." stays visibly struck)
            int sw = tw > px ? tw : px;
            paint_fill(cv, THEME.pad_ink, 255, cx - sw / 2, ty + hh / 2, sw, paint_px(L->s, 2));
        }
    }
    if (col_index) {
        nt = tick_positions(c0, c1, every_i, col_w, (float)(iwmax + 2 + (squeezed ? iwmax / 2 : 0)), ticks, MAX_TICKS);
        for (int k = 0; k < nt; k++) {
            int j = ticks[k];
            const char *t = panel_axis_label(NULL, AXIS_INDEX, j, b, sizeof b);
            paint_text_size(cv, FONT_SANS, ipx, t, &tw, &hh);
            int cx = (layout_col_x(L, p, j) + layout_col_x(L, p, j + 1)) / 2 + dx;
            if (j == c1 && cx + tw / 2 > q.x + q.w + right) cx = q.x + q.w + right - (tw + 1) / 2;
            if (squeezed && j == c0 && cx - tw / 2 < q.x) cx = q.x + tw / 2;
            if (cx - tw / 2 < q.x - margin || cx + (tw + 1) / 2 > q.x + q.w + right) continue;
            paint_text(cv, FONT_SANS, ipx, m, 160, cx, q.y - L->col_label_h + tok_h + (L->col_label_h - tok_h - hh) / 2,
                       ALIGN_CENTER, t);
        }
    }
    paint_clip(cv, NULL);
}

static void draw_caption(Canvas *cv, const Layout *L, const View *v, AnimKind anim, int p)
{
    const PanelSpec *ps = &L->spec[p];
    char name[96], dims[64];
    snprintf(name, sizeof name, "%s", ps->title);
    bool head_panel = ps->head >= 0 && !ps->head_blocks && (anim == ANIM_SPLIT || anim == ANIM_CONCAT);
    snprintf(dims, sizeof dims, "%d×%d", ps->rows, ps->cols);
    if (cellmark_hidden(v, ps)) snprintf(dims, sizeof dims, "?");
    if (!cellmark_hidden(v, ps) && (L->zoom_x[p] || L->zoom_y[p])) { // "256×256 · zoom 4×"
        char z[24], zt[48];
        snprintf(z, sizeof z, "%.3g", (double)fminf(v->zoom, layout_max_zoom(L, p)));
        const char *args[] = {z};
        i18n_fmt(zt, sizeof zt, v->lang, "ui.zoomed", 1, args);
        size_t len = strlen(dims);
        snprintf(dims + len, sizeof dims - len, " · %s", zt);
    }
    // centred over the cells, shifted to stay within half the gap to each neighbour;
    // what still does not fit loses its dimensions, then a head panel says "h1",
    // then it is ellipsized (never cut)
    Rect q = L->caption[p];
    // the neighbours in the row (a stacked vector has its column to itself)
    int before = p - 1, after = p + 1;
    while (before >= 0 && L->spec[before].stacked) before--;
    while (after < L->n_panels && L->spec[after].stacked) after++;
    int lo = before >= 0 ? (L->caption[before].x + L->caption[before].w + L->caption[p].x) / 2 + paint_px(L->s, 3)
                         : L->area.x;
    int hi = after < L->n_panels ? (L->caption[p].x + L->caption[p].w + L->caption[after].x) / 2 - paint_px(L->s, 3)
                                 : L->area.x + L->area.w;
    if (ps->stacked) lo = q.x, hi = q.x + q.w;
    if (lo > q.x + L->label_w[p]) lo = q.x + L->label_w[p];
    if (hi < q.x + q.w) hi = q.x + q.w;
    Rgb nc = head_panel && !ps->kv_group ? colormap_head(ps->head) : ps->result ? THEME.accent : THEME.ink;
    if (head_panel && !ps->kv_group) nc = colormap_lerp(nc, THEME.black, 0.25f); // head colours are light for some heads
    int tw, th, dw, dh, gap = paint_px(L->s, 8);
    paint_text_size(cv, FONT_BOLD, L->px_body, name, &tw, &th);
    paint_text_size(cv, FONT_SANS, L->px_small, dims, &dw, &dh);
    // a head panel that does not fit with its shape says "h1" ("K/V 1") and keeps the shape
    if (tw + gap + dw > hi - lo && head_panel)
        snprintf(name, sizeof name, ps->kv_group ? "K/V %d" : "h%d", ps->head % 1000);
    char fit[sizeof name];
    const char *shown = paint_fit_text(cv, FONT_BOLD, L->px_body, name, hi - lo, fit, sizeof fit);
    if (shown != name) snprintf(name, sizeof name, "%s", shown);
    paint_text_size(cv, FONT_BOLD, L->px_body, name, &tw, &th);
    paint_text_size(cv, FONT_SANS, L->px_small, dims, &dw, &dh);
    int total = tw + gap + dw;
    if (total > hi - lo) total = tw, dw = -1; // no room: the name alone
    int centre = L->panel[p].x + (L->panel[p].w + L->sum_w[p]) / 2;
    int x = centre - total / 2;
    if (x + total > hi) x = hi - total;
    if (x < lo) x = lo;
    paint_clip(cv, &(Rect){lo, q.y, hi - lo, q.h});
    paint_text(cv, FONT_BOLD, L->px_body, nc, 255, x, q.y + (q.h - th) / 2, ALIGN_LEFT, name);
    if (dw >= 0)
        paint_text(cv, FONT_SANS, L->px_small, THEME.muted, 255, x + tw + gap, q.y + (q.h - th) / 2 + (th - dh) * 2 / 3,
                   ALIGN_LEFT, dims);
    paint_clip(cv, NULL);
}

// How cell (i, j) of panel p looks at eased progress e of the stage's transition.
typedef struct CellState {
    Rgb color;  // its colour once shown
    float show; // 0..1 how far it has appeared
    bool masked;
    float val;  // the number it shows
} CellState;

// The operand a masked / softmax result cell turns from: the same cell of panel 0.
static CellState cell_state(const Layout *L, AnimKind k, int p, int i, int j, float e, bool animate)
{
    const PanelSpec *ps = &L->spec[p];
    CellLook look = render_cell_look(ps, i, j);
    CellState cs = {render_cell_color(ps, i, j), 1.0f, look == CELL_MASKED, panel_value(ps, i, j)};
    if (!animate) return cs;
    cs.show = anim_cell_progress(k, e, i, j, ps->rows, ps->cols);
    if (k == ANIM_CONCAT && L->image[p] && ps->block_cols > 0) {
        // head blocks fade in one after another (cells fly in only when drawn as cells)
        cs.show = ease_in_out_cubic(ease_stagger(e, j / ps->block_cols, ps->head_blocks, 0.4f));
    } else if (k == ANIM_MASK && look == CELL_MASKED) {
        // fade from the score's colour to the masked look, row by row
        float m = ease_stagger(e, i, ps->rows, 0.5f);
        const PanelSpec *src = &L->spec[0];
        Rgb from = colormap_value(&src->scale, panel_value(src, i, j));
        cs.color = colormap_lerp(from, colormap_masked(), m);
        cs.masked = m > 0.5f;
        if (!cs.masked) cs.val = panel_value(src, i, j);
        cs.show = 1.0f;
    }
    // (softmax rows appear as they are computed, like other rows: the panel never shows
    // scores on the probabilities' scale; the strip under it writes the steps out)
    return cs;
}

typedef struct ImageCtx {
    const Layout *L;
    AnimKind k;
    int p;
    float e;
    bool animate;
} ImageCtx;

static Rgb image_color(const void *ctx, int row, int col)
{
    const ImageCtx *c = ctx;
    CellState cs = cell_state(c->L, c->k, c->p, row, col, c->e, c->animate);
    return cs.show >= 1.0f ? cs.color : colormap_lerp(THEME.empty, cs.color, cs.show);
}

// The Σ column of a softmax result: each row's sum, shown once the row is a distribution.
static void draw_row_sums(Canvas *cv, const Layout *L, const Trace *tr, const View *v, int p, AnimKind k, float e,
                          bool animate)
{
    const PanelSpec *ps = &L->spec[p];
    Rect q = L->panel[p];
    char num[32];
    int x = q.x + q.w + (int)(6 * L->s), sw = L->sum_w[p];
    paint_text_centered(cv, FONT_BOLD, L->px_small, THEME.muted, 255,
                        (Rect){x, q.y - L->col_label_h, sw, L->col_label_h}, i18n_get(v->lang, "ui.rowsum"));
    int r0, r1, c0, c1;
    layout_visible(L, p, &r0, &r1, &c0, &c1);
    Rect sclip = {x, q.y, sw, q.h};
    paint_clip(cv, &sclip);
    for (int i = r0; i <= r1; i++) {
        int y0 = layout_row_y(L, p, i), y1 = layout_row_y(L, p, i + 1);
        if (y1 <= y0) continue;
        // a row still showing scores has no sum yet: Σ appears with the distribution
        float pr = animate ? anim_cell_progress(k, e, i, 0, ps->rows, 1) : 1.0f;
        float show = ease_clamp01((pr - 0.5f) * 2.0f);
        if (v->loop >= 0 && recipe_loop_cell(tr, v, ps, i, 0) == LOOP_LATER) show = 0.0f; // a later step's row
        float sum = 0.0f;
        for (int j = 0; j < ps->cols; j++) sum += panel_value(ps, i, j);
        CellDraw d = {x, y0, sw, y1 - y0, colormap_value(&ps->scale, sum), show, false, isnan(sum), NULL,
                      L->sum_px[p]};
        if (L->sum_decimals[p] >= 0) {
            panel_format_number(sum, L->sum_decimals[p], num, sizeof num);
            d.text = num;
        }
        draw_cell(cv, &d, L->s);
    }
    paint_clip(cv, NULL);
}

// The cells of panel p one by one (cells of at least LAYOUT_IMAGE_CELL px), shifted by
// (dx, dy) while sliding: their colours, numbers, loop states and the lab's marks.
static void draw_cells(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v, int p, int dx,
                       int dy)
{
    const AnimFrame a = F->anim;
    const PanelSpec *ps = &L->spec[p];
    const AnimKind k = a.kind;
    const float e = a.e;
    const bool animate = ps->result && e < 1.0f, zoomed = L->zoom_x[p] || L->zoom_y[p];
    const Rect q = L->panel[p], clip = {q.x + dx, q.y + dy, q.w, q.h};
    char num[32];
    int r0, r1, c0, c1;
    layout_visible(L, p, &r0, &r1, &c0, &c1);
    if (zoomed) paint_clip(cv, &clip);
    // the grid under the cells (shows through the 1 px gaps of cells >= 10 px)
    if (!animate || (k != ANIM_CONCAT && k != ANIM_SPLIT)) {
        int gx0 = layout_col_x(L, p, c0), gx1 = layout_col_x(L, p, c1 + 1);
        int gy0 = layout_row_y(L, p, r0), gy1 = layout_row_y(L, p, r1 + 1);
        int cw = gx1 - gx0, ch = gy1 - gy0, nc = c1 - c0 + 1, nr = r1 - r0 + 1;
        int cmin = cw / (nc > 0 ? nc : 1) < ch / (nr > 0 ? nr : 1) ? cw / (nc > 0 ? nc : 1) : ch / (nr > 0 ? nr : 1);
        if (render_cell_gap(cmin) > 0) paint_fill(cv, THEME.grid, 255, gx0 + dx, gy0 + dy, cw, ch);
    }
    // concat: the last head's block first, so a block that has landed is drawn over
    // one still flying in across it (a block at a time: the others are columns apart)
    bool back_first = animate && k == ANIM_CONCAT && ps->block_cols > 0;
    // inside a loop (View.loop): later steps' cells empty, this step's framed, a window's dropped rows hatched
    int nr0 = INT_MAX, nr1 = -1, nc0 = INT_MAX, nc1 = -1;
    int bc = back_first ? ps->block_cols : c1 - c0 + 1, n_blocks = back_first ? (ps->cols + bc - 1) / bc : 1;
    for (int b = n_blocks - 1; b >= 0; b--)
    for (int i = r0; i <= r1; i++) {
        int y0 = layout_row_y(L, p, i), y1 = layout_row_y(L, p, i + 1);
        int ja = back_first ? (b * bc > c0 ? b * bc : c0) : c0;
        int jb = back_first ? ((b + 1) * bc - 1 < c1 ? (b + 1) * bc - 1 : c1) : c1;
        for (int j = ja; j <= jb; j++) {
            int x0 = layout_col_x(L, p, j), x1 = layout_col_x(L, p, j + 1);
            CellLook look = render_cell_look(ps, i, j);
            CellState cs = cell_state(L, k, p, i, j, e, animate);
            CellDraw d = {x0 + dx, y0 + dy, x1 - x0, y1 - y0, cs.color, cs.show, cs.masked, look == CELL_NAN,
                          NULL, ps->px_cell};
            LoopCell lc = recipe_loop_cell(tr, v, ps, i, j);
            if (v->loop < 0 && lc != LOOP_ABSENT) lc = LOOP_DONE;
            if (lc == LOOP_LATER || lc == LOOP_ABSENT) { // (not computed yet; a key not in the cache yet)
                d.show = 0.0f, d.masked = d.nan = false;
                draw_cell(cv, &d, L->s);
                continue;
            }
            if (lc == LOOP_GONE) d.masked = true;
            if (lc == LOOP_NOW) nr0 = i < nr0 ? i : nr0, nr1 = i > nr1 ? i : nr1, nc0 = j < nc0 ? j : nc0, nc1 = j > nc1 ? j : nc1;
            if (animate && k == ANIM_CONCAT && ps->block_cols > 0) {
                // block h of the result arrives from the panel of head h (when shown)
                int h = j / ps->block_cols, hp = -1;
                for (int o = 0; o < L->n_panels; o++)
                    if (!L->spec[o].result && L->spec[o].head == h) hp = o;
                if (hp >= 0) {
                    float ek = ease_in_out_cubic(ease_stagger(e, h, ps->head_blocks, 0.4f));
                    d.x += (int)lrintf((float)(layout_col_x(L, hp, j % ps->block_cols) - x0) * (1.0f - ek));
                    d.y += (int)lrintf((float)(layout_row_y(L, hp, i) - y0) * (1.0f - ek));
                }
            }
            if (look == CELL_MASKED && ps->mask != ps->data && (!animate || k != ANIM_MASK || cs.masked)) {
                // (the Δ view: hatched only; the fill would read as a difference)
                d.text = ps->decimals >= 0 && v->show_values && !v->delta ? F->mask_text : NULL;
            } else if (ps->tokens && ps->decimals >= 0) { // (the logit lens: the cell's token)
                const char *t = lesson_vocab_label(v->lesson, ps->tokens[(size_t)i * (size_t)ps->rs + (size_t)j * (size_t)ps->cs]);
                d.text = !t ? "?" : strcmp(t, " ") == 0 ? "\xE2\x90\xA3" : t;
            } else if ((v->show_values && ps->decimals >= 0) || (isnan(cs.val) && ps->decimals >= 0)) {
                panel_format_cell(ps, cs.val, num, sizeof num);
                d.text = num;
            }
            draw_cell(cv, &d, L->s);
            if (ps->any_changed && d.show >= 1.0f && scene_cell_changed(ps, i, j)) {
                int side = d.w < d.h ? d.w : d.h, n = side / 4;
                if (n > paint_px(L->s, 14)) n = paint_px(L->s, 14);
                if (n >= 4) paint_corner_mark(cv, d.x, d.y + render_cell_gap(side), d.w - render_cell_gap(side), n);
            }
        }
    }
    if (zoomed) paint_clip(cv, NULL);
    if (nr1 >= 0) { // the cells this step computes or reads
        int t = paint_px(L->s, 3);
        int fx0 = layout_col_x(L, p, nc0) + dx, fx1 = layout_col_x(L, p, nc1 + 1) + dx;
        int fy0 = layout_row_y(L, p, nr0) + dy, fy1 = layout_row_y(L, p, nr1 + 1) + dy;
        paint_clip(cv, &clip);
        paint_frame(cv, THEME.hilite, 255, fx0 - t / 2, fy0 - t / 2, fx1 - fx0 + t, fy1 - fy0 + t, t);
        paint_clip(cv, NULL);
    }
}

// The row (or cell) being computed while the result animates, and what it reads.
static void draw_computing(Canvas *cv, const Layout *L, int p, AnimFrame a)
{
    int row, c;
    if (!anim_computing_cell(a.kind, a.e, &L->spec[p], &row, &c)) return;
    int t = paint_px(L->s, 3);
    Highlight me = {row, c, 1};
    Rect hr = cellmark_rect(L, p, me);
    cellmark_frame(cv, L, p, hr.x, hr.y, hr.w, hr.h, t, THEME.hilite);
    Rect unused[LAYOUT_MAX_PANELS];
    if (c >= 0) {
        cellmark_operands(cv, L, p, row, c, t, unused, LAYOUT_MAX_PANELS);
    } else { // a whole row: what its operands' rows are
        for (int o = 0; o < L->n_panels; o++) {
            Highlight h;
            if (o == p || !scene_highlight(L, p, row, 0, o, &h) || L->spec[o].reads == READS_COL) continue;
            Rect oq = cellmark_rect(L, o, (Highlight){h.row, -1, 1});
            cellmark_frame(cv, L, o, oq.x, oq.y, oq.w, oq.h, t, THEME.hilite);
        }
    }
}

static void draw_panel(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v, int p)
{
    const AnimFrame a = F->anim;
    const PanelSpec *ps = &L->spec[p];
    const AnimKind k = a.kind;
    const float e = a.e;
    Rect q = L->panel[p];
    bool animate = ps->result && e < 1.0f;
    // split: whole head blocks slide out of the source into their panels
    int dx = 0, dy = 0;
    int nh = 0, h0 = ps->head;
    for (int i = 0; i < L->n_panels; i++)
        if (L->spec[i].result && L->spec[i].head >= 0) nh++, h0 = L->spec[i].head < h0 ? L->spec[i].head : h0;
    if (animate && k == ANIM_SPLIT && L->n_panels > 1 && L->spec[0].head_blocks > 0) {
        float ek = ease_in_out_cubic(ease_stagger(e, ps->head - h0, nh > 0 ? nh : 1, 0.4f));
        int sx = layout_col_x(L, 0, ps->head * L->spec[0].block_cols), sy = L->panel[0].y;
        dx = (int)lrintf((float)(sx - q.x) * (1.0f - ek));
        dy = (int)lrintf((float)(sy - q.y) * (1.0f - ek));
    }
    // operator to the left: a symbol large, words ("/1.41 =", "LN·") at body size
    if (ps->op[0] && L->op[p].w > 0) {
        Rect o = L->op[p];
        int opx = strlen(ps->op) > 3 ? L->px_body : L->px_op, ow, oh;
        // projector mode: the product's "·", a dot a third of an em wide, twice the size
        // (at the operators' size it read as a speck beside 50 px numbers)
        if (v->projector && strcmp(ps->op, "\xC2\xB7") == 0) opx *= 2;
        paint_text_size(cv, FONT_SANS, opx, ps->op, &ow, &oh);
        if (ow > o.w) opx = L->px_body; // a narrow place (the label column beside a stacked vector)
        paint_text_centered(cv, FONT_SANS, opx, THEME.muted, 255, (Rect){o.x, o.y, o.w, o.h}, ps->op);
    }
    draw_caption(cv, L, v, k, p); // captions stay where their panel lands: no overlap while sliding
    if (cellmark_hidden(v, ps) && v->print) { // a worksheet: empty cells to write the answers in
        for (int i = 0; i < ps->rows; i++)
            for (int j = 0; j < ps->cols; j++) {
                Rect c;
                if (!layout_cell_rect(L, p, i, j, &c)) continue;
                paint_fill(cv, THEME.white, 255, c.x, c.y, c.w, c.h);
                paint_frame(cv, THEME.muted, 255, c.x, c.y, c.w + 1, c.h + 1, 1);
            }
        draw_labels(cv, L, F, v, p, 0, 0);
        return;
    }
    if (cellmark_hidden(v, ps)) { // the study mode: nothing of it shows until it is answered
        paint_fill(cv, THEME.empty, 255, q.x, q.y, q.w, q.h);
        paint_frame(cv, THEME.muted, 255, q.x, q.y, q.w, q.h, paint_px(L->s, 2));
        int px = q.h / 2 < L->px_title * 2 ? q.h / 2 : L->px_title * 2;
        if (px >= 8) paint_text_centered(cv, FONT_BOLD, px, THEME.muted, 255, q, "?");
        return;
    }
    if (dx == 0 && dy == 0) draw_labels(cv, L, F, v, p, dx, dy); // not while sliding

    // head-coloured blocks over the columns (split source, concat result)
    if (ps->head_blocks > 0 && ps->block_cols > 0) {
        int bar = paint_px(L->s, 5);
        for (int h = 0; h < ps->head_blocks; h++) {
            int x0 = layout_col_x(L, p, h * ps->block_cols), x1 = layout_col_x(L, p, (h + 1) * ps->block_cols);
            if (x0 < q.x) x0 = q.x;
            if (x1 > q.x + q.w) x1 = q.x + q.w;
            // shared K/V heads belong to no single query head: ink, not a head's colour
            if (x1 - x0 > 2)
                paint_fill(cv, ps->kv_group ? THEME.ink : colormap_head(h), 255, x0 + 1, q.y - bar - 1, x1 - x0 - 2, bar);
        }
    }
    Rect clip = {q.x + dx, q.y + dy, q.w, q.h};
    if (L->image[p]) {
        ImageCtx ic = {L, k, p, e, animate};
        const float key[4] = {animate ? e : 1.0f, (float)k, animate ? 1.0f : 0.0f, (float)v->stage};
        heatmap_draw_image(cv, L, p, dx, dy, key, image_color, &ic);
    } else {
        draw_cells(cv, L, F, tr, v, p, dx, dy);
    }
    if (ps->row_sums && L->sum_w[p] > 0) draw_row_sums(cv, L, tr, v, p, k, e, animate);
    // FlashAttention's tiles: block_q × block_k outlines over the scores
    if (ps->tile_rows > 0 && ps->tile_cols > 0) {
        int t = paint_px(L->s, 2);
        paint_clip(cv, &clip);
        for (int j = ps->tile_cols; j < ps->cols; j += ps->tile_cols)
            paint_fill(cv, THEME.ink, 255, layout_col_x(L, p, j) + dx - t / 2, clip.y, t, clip.h);
        for (int i = ps->tile_rows; i < ps->rows; i += ps->tile_rows)
            paint_fill(cv, THEME.ink, 255, clip.x, layout_row_y(L, p, i) + dy - t / 2, clip.w, t);
        paint_clip(cv, NULL);
    }
    // head frame for per-head panels of split / concat
    if (ps->head >= 0 && !ps->head_blocks && (k == ANIM_SPLIT || k == ANIM_CONCAT) && L->n_panels > 2) {
        // a shared K/V head: framed in ink, thick when the selected query head reads it
        bool sel = ps->kv_group ? ps->head == v->head / ps->kv_group : ps->head == v->head;
        int t = sel ? paint_px(L->s, 4) : paint_px(L->s, 2);
        paint_frame(cv, ps->kv_group ? THEME.ink : colormap_head(ps->head), 255, q.x + dx - t, q.y + dy - t, q.w + 2 * t,
                    q.h + 2 * t, t);
    }
    if (animate) draw_computing(cv, L, p, a);
}

// ---- over the frame: the window's layers, bottom to top ---------------------------

static void layer_toast(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    (void)tr;
    if (!ov->help) chrome_draw_text_box(cv, L, v, ov);
    if (!ov->help) chrome_draw_toast(cv, L, ov);
}

static void layer_buttons(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    (void)tr;
    chrome_draw_lab_button(cv, L, v, ov);
    chrome_draw_study_button(cv, L, v, ov);
    if (!ov->help) chrome_draw_lab_menu(cv, L, v, ov);
}

static void layer_help(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    (void)tr;
    if (ov->help) chrome_draw_help(cv, L, v);
}

static void layer_picker(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    (void)tr;
    picker_draw(cv, L, v, ov->picker);
    picker_draw(cv, L, v, ov->cmp_menu);
    chrome_draw_export_progress(cv, L, v, ov);
}

// The presenter's spotlight and pins on the frame itself; then the notices under
// what the user is reading (the toast), the hover, the lab's selection, the study
// marks; the buttons, help and picker; the scrub bar and the laser on top.
static const OverlayDrawFn LAYERS[] = {
    overlay_spotlight, overlay_pins, layer_toast, overlay_hover, overlay_selection, overlay_study_marks,
    layer_buttons,     layer_help,   layer_picker, overlay_scrub, overlay_loop, overlay_laser,
};

void render_frame(Canvas *cv, const Trace *tr, const View *v, const Overlays *ov)
{
    int w, h;
    paint_size(cv, &w, &h);
    Layout L;
    layout_compute(&L, tr, v, w, h);
    render_frame_laid_out(cv, &L, tr, v, ov);
}

void render_frame_laid_out(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    render_frame_record(cv, L, tr, v, ov);
    paint_flush(cv);
}

void render_frame_record(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    paint_clear(cv, THEME.bg);
    if (tr->n == 0) return;
    Frame F; // everything the view says about this frame, before the first paint call
    frame_prepare(&F, L, tr, v, ov);
    const AnimFrame a = F.anim;
    if (!v->print) { // (printed: the page has its own header)
        chrome_draw_timeline(cv, L, &F, tr, v);
        chrome_draw_tabs(cv, L, &F, tr, v, ov);
        if (ov) picker_draw_button(cv, L, v, ov->picker);
        chrome_draw_header(cv, L, &F, tr, v);
    }
    if (!viewkind_of(v->kind)->panels) { // attention at a glance: the maps or the lines instead of the panels
        viewdraw_glance(cv, L, tr, v);
        if (!v->print) chrome_draw_narration(cv, L, &F, tr, v);
        if (!ov) return;
        for (size_t i = 0; i < sizeof LAYERS / sizeof LAYERS[0]; i++) LAYERS[i](cv, L, tr, v, ov);
        return;
    }
    // split: the panels of the heads last and the last head first, so a head that has
    // landed is drawn over one still sliding out across it
    bool split = a.kind == ANIM_SPLIT && a.e < 1.0f;
    for (int p = 0; p < L->n_panels; p++)
        if (!split || !L->spec[p].result || L->spec[p].head < 0) draw_panel(cv, L, &F, tr, v, p);
    for (int p = L->n_panels - 1; split && p >= 0; p--)
        if (L->spec[p].result && L->spec[p].head >= 0) draw_panel(cv, L, &F, tr, v, p);
    if (F.has_deriv) derivation_draw(cv, L, &F);
    bars_draw(cv, L, v);
    visiondraw_overlay(cv, L, v);
    chrome_draw_legend(cv, L, v, F.mask_text);
    if (ov && ov->study && ov->study->on && v->study) chrome_draw_study(cv, L, &F, tr, v, ov->study);
    else if (!v->print) chrome_draw_narration(cv, L, &F, tr, v);
    if (!ov) return;
    for (size_t i = 0; i < sizeof LAYERS / sizeof LAYERS[0]; i++) LAYERS[i](cv, L, tr, v, ov);
}
