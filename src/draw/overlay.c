// overlay.c — the drawers of overlay.h: each feature's marks over the frame.
#include "overlay.h"

#include <math.h>
#include <stdio.h>

#include "anim.h"
#include "cellmark.h"
#include "cursor.h"
#include "explain.h"
#include "playback.h"
#include "study.h"
#include "viewkind.h"

#define TIP_MAX 2400 // (the compare view writes two derivations)

// A cell's tooltip: its view kind's (the compare view: both derivations), else the stage's.
static void cell_tip(const Layout *L, const Trace *tr, const View *v, int p, int row, int col, char *out, size_t n)
{
    const ViewKindInfo *vk = viewkind_of(v->kind);
    if (vk->tip)
        vk->tip(L, tr, v, p, row, col, out, n);
    else
        explain_cell(tr, v, L, p, row, col, out, n);
}

static void draw_tip(Canvas *cv, const Layout *L, const char *tip, Rect cell,
                     const Rect *avoid, int n_avoid)
{
    int wrap = L->w * 45 / 100, tw, th;
    if (!paint_text_block_size(cv, FONT_SANS, L->px_body, wrap, tip, &tw, &th)) return;
    int pad = paint_px(L->s, 10), bx = 0, by = 0;
    tip_place(L, cell, tw + 2 * pad, th + 2 * pad, avoid, n_avoid, &bx, &by); // beside the cell, covering least
    paint_fill(cv, THEME.black, 40, bx + 3, by + 3, tw + 2 * pad, th + 2 * pad);
    paint_fill(cv, THEME.tip_bg, 255, bx, by, tw + 2 * pad, th + 2 * pad);
    paint_frame(cv, THEME.ink, 255, bx, by, tw + 2 * pad, th + 2 * pad, 1);
    paint_text_block(cv, FONT_SANS, L->px_body, wrap, THEME.ink, 255, bx + pad, by + pad, tip);
}

// The what-if lab's selected cell, and the value being typed into it under it.
void overlay_selection(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    (void)tr;
    if (ov->help) return;
    Rect q;
    int t = paint_px(L->s, 4);
    bool cell = ov->sel && ov->sel_panel >= 0 && ov->sel_panel < L->n_panels &&
                layout_cell_rect(L, ov->sel_panel, ov->sel_row, ov->sel_col, &q);
    if (cell) {
        Rect pq = L->panel[ov->sel_panel];
        paint_clip(cv, &(Rect){pq.x - t, pq.y - t, pq.w + 2 * t, pq.h + 2 * t});
        paint_frame(cv, THEME.white, 255, q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t, t + 2);
        paint_frame(cv, THEME.selected, 255, q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t, t);
        paint_clip(cv, NULL);
    } else if (ov->edit_label) { // a switch's value (the scale): the box over the heatmaps
        q = (Rect){L->area.x + L->area.w / 2, L->area.y + L->area.h / 3, 0, 0};
    } else {
        return;
    }
    if (!ov->edit_label) return; // a selection alone: the frame (its keys are in the toast)
    char line[200];
    snprintf(line, sizeof line, "%s %s▏", ov->edit_label, ov->edit_text ? ov->edit_text : "");
    int pad = paint_px(L->s, 10), tw, th, hw = 0, hh = 0;
    paint_text_size(cv, FONT_MONO, L->px_body, line, &tw, &th);
    if (ov->edit_hint) paint_text_size(cv, FONT_SANS, L->px_small, ov->edit_hint, &hw, &hh);
    int bw = (tw > hw ? tw : hw) + 2 * pad, bh = th + hh + 2 * pad + (hh ? pad / 2 : 0);
    if (bw > L->w - 2 * pad) bw = L->w - 2 * pad;
    int bx = q.x + q.w / 2 - bw / 2, by = q.y + q.h + t + pad / 2;
    if (by + bh > L->h - pad) by = q.y - t - pad / 2 - bh; // no room below: above the cell
    if (bx < pad) bx = pad;
    if (bx + bw > L->w - pad) bx = L->w - pad - bw;
    paint_fill(cv, THEME.black, 50, bx + 3, by + 3, bw, bh);
    paint_fill(cv, THEME.white, 255, bx, by, bw, bh);
    paint_frame(cv, THEME.selected, 255, bx, by, bw, bh, paint_px(L->s, 2));
    paint_clip(cv, &(Rect){bx, by, bw, bh});
    paint_text(cv, FONT_MONO, L->px_body, THEME.ink, 255, bx + pad, by + pad, ALIGN_LEFT, line);
    if (ov->edit_hint)
        paint_text(cv, FONT_SANS, L->px_small, ov->edit_error ? THEME.error_ink : THEME.muted, 255, bx + pad,
                   by + pad + th + pad / 2, ALIGN_LEFT, ov->edit_hint);
    paint_clip(cv, NULL);
    (void)v;
}

void overlay_hover(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    int p, row, c;
    if ((!ov->hover && !ov->cursor) || ov->help || ov->edit_label) return;
    char tip[TIP_MAX];
    int t = paint_px(L->s, 3);
    Rect avoid[LAYOUT_MAX_PANELS + 3 + PINS_MAX];
    int n = 0;
    if (!ov->cursor && layout_hit_sum(L, ov->mouse_x, ov->mouse_y, &p, &row)) { // the Σ column of a softmax
        if (cellmark_hidden(v, &L->spec[p]) || !anim_cell_shown(L, tr, v, p, row, -1)) return; // not yet summed
        Rect q = L->panel[p];
        int x = q.x + q.w + (int)(6 * L->s), y0 = layout_row_y(L, p, row), y1 = layout_row_y(L, p, row + 1);
        paint_frame(cv, THEME.ink, 255, x - t, y0 - t, L->sum_w[p] + 2 * t, y1 - y0 + 2 * t, t);
        cellmark_frame(cv, L, p, q.x, y0, q.w, y1 - y0, t, THEME.hilite);
        avoid[n++] = (Rect){q.x - t, y0 - t, x + L->sum_w[p] - q.x + 2 * t, y1 - y0 + 2 * t};
        if (L->deriv.w > 0) avoid[n++] = L->deriv; // the strip writes this row out too
        explain_row_sum(tr, v, L, p, row, tip, sizeof tip);
        draw_tip(cv, L, tip, avoid[0], avoid, n);
        return;
    }
    if (!cursor_pointed_cell(L, ov, &p, &row, &c)) return;
    const PanelSpec *ps = &L->spec[p];
    Rect q;
    bool on_screen = layout_cell_rect(L, p, row, c, &q);
    if (ov->cursor && on_screen) { // the cell cursor's focus: a white ring round the ink one, seen on any colour
        Rect pq = L->panel[p];
        int f = paint_px(L->s, 4);
        paint_clip(cv, &(Rect){pq.x - t - f, pq.y - t - f, pq.w + 2 * (t + f), pq.h + 2 * (t + f)});
        paint_frame(cv, THEME.white, 255, q.x - t - f, q.y - t - f, q.w + 2 * (t + f), q.h + 2 * (t + f), f);
        paint_clip(cv, NULL);
    }
    if (cellmark_hidden(v, ps) || !anim_cell_shown(L, tr, v, p, row, c)) { // not computed yet (the cursor: framed)
        if (ov->cursor && on_screen) paint_frame(cv, THEME.ink, 255, q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t, t);
        return;
    }
    // what it reads: the operands' rows, columns and cells (scene.h's rules)
    if (ps->result) n = cellmark_operands(cv, L, p, row, c, t, avoid, LAYOUT_MAX_PANELS);
    Rect pq = L->panel[p];
    paint_clip(cv, &(Rect){pq.x - t, pq.y - t, pq.w + 2 * t, pq.h + 2 * t});
    paint_frame(cv, THEME.ink, 255, q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t, t);
    paint_clip(cv, NULL);
    avoid[n++] = (Rect){q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t};
    if (ps->result && L->deriv.w > 0) avoid[n++] = L->deriv; // the strip writes out this cell too
    for (int i = 0; ov->pin_boxes && i < ov->n_pins && i < PINS_MAX; i++) // and the pinned tooltips
        if (ov->pin_boxes[i].w > 0)
            avoid[n++] = (Rect){ov->pin_boxes[i].x, ov->pin_boxes[i].y, ov->pin_boxes[i].w, ov->pin_boxes[i].h};
    cell_tip(L, tr, v, p, row, c, tip, sizeof tip);
    draw_tip(cv, L, tip, q, avoid, n);
}

// The study mode's frames: the cell (row) the focused question is about, and with
// the hint (H) what it reads, or the whole operands for a question about the tensor.
void overlay_study_marks(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    (void)tr;
    if (ov->help || !ov->study || !v->study) return;
    const Study *s = ov->study;
    if (!s->on || s->focus < 0 || s->focus >= s->n || s->q[s->focus].stage != v->stage) return;
    const QuizQuestion *q = &s->q[s->focus];
    if ((q->batch >= 0 && q->batch != v->batch) || (q->head >= 0 && q->head != v->head)) return;
    int p = -1;
    for (int i = 0; i < L->n_panels && p < 0; i++)
        if (L->spec[i].result && (L->spec[i].head < 0 || q->head < 0 || L->spec[i].head == q->head)) p = i;
    if (p < 0) return;
    bool asking = study_asking(s), hint = asking && s->hint;
    int t = paint_px(L->s, 3);
    Rect unused[LAYOUT_MAX_PANELS];
    const PanelSpec *ps = &L->spec[p];
    if (q->n_cell == 2 && q->cell[0] < ps->rows && q->cell[1] < ps->cols) {
        Rect hr = cellmark_rect(L, p, (Highlight){q->cell[0], q->cell[1], 0});
        cellmark_frame(cv, L, p, hr.x, hr.y, hr.w, hr.h, t, THEME.ink);
        if (hint) cellmark_operands(cv, L, p, q->cell[0], q->cell[1], t, unused, LAYOUT_MAX_PANELS);
    } else if (q->n_cell == 1 && q->cell[0] < ps->rows) {
        Rect hr = cellmark_rect(L, p, (Highlight){q->cell[0], -1, 0});
        cellmark_frame(cv, L, p, hr.x, hr.y, hr.w, hr.h, t, THEME.ink);
        for (int o = 0; hint && o < L->n_panels; o++) {
            Highlight h;
            if (o == p || !scene_highlight(L, p, q->cell[0], 0, o, &h) || L->spec[o].reads == READS_COL) continue;
            Rect oq = cellmark_rect(L, o, (Highlight){h.row, -1, 0});
            cellmark_frame(cv, L, o, oq.x, oq.y, oq.w, oq.h, t, THEME.hilite);
        }
    } else if (hint) {
        for (int o = 0; o < L->n_panels; o++)
            if (!L->spec[o].result)
                paint_frame(cv, THEME.hilite, 255, L->panel[o].x - t, L->panel[o].y - t, L->panel[o].w + 2 * t,
                            L->panel[o].h + 2 * t, t);
    }
}

// ---- presenter tools: spotlight, pinned tooltips, laser (Overlays) ----------------

// Dims the whole w×h output except the rectangles keep[0..n): band by band between
// their top and bottom edges, the gaps between the kept spans of each band.
static void dim_except(Canvas *cv, int w, int h, const Rect *keep, int n, uint8_t a)
{
    int ys[2 + 2 * 4], ny = 0;
    ys[ny++] = 0, ys[ny++] = h;
    for (int k = 0; k < n && k < 4; k++) ys[ny++] = keep[k].y, ys[ny++] = keep[k].y + keep[k].h;
    for (int i = 1; i < ny; i++) // insertion sort: at most 10
        for (int j = i; j > 0 && ys[j - 1] > ys[j]; j--) { int t = ys[j]; ys[j] = ys[j - 1], ys[j - 1] = t; }
    for (int i = 0; i + 1 < ny; i++) {
        int y0 = ys[i] < 0 ? 0 : ys[i], y1 = ys[i + 1] > h ? h : ys[i + 1];
        if (y1 <= y0) continue;
        Rect span[4];
        int ns = 0;
        for (int k = 0; k < n && k < 4; k++)
            if (keep[k].w > 0 && keep[k].y <= y0 && keep[k].y + keep[k].h >= y1) span[ns++] = keep[k];
        for (int a1 = 1; a1 < ns; a1++)
            for (int j = a1; j > 0 && span[j - 1].x > span[j].x; j--) { Rect t = span[j]; span[j] = span[j - 1], span[j - 1] = t; }
        int x = 0;
        for (int k = 0; k < ns; k++) {
            if (span[k].x > x) paint_fill(cv, THEME.black, a, x, y0, span[k].x - x, y1 - y0);
            if (span[k].x + span[k].w > x) x = span[k].x + span[k].w;
        }
        if (x < w) paint_fill(cv, THEME.black, a, x, y0, w - x, y1 - y0);
    }
}

// A filled disc of radius r at (cx, cy), row by row (step px a row).
static void fill_disc(Canvas *cv, Rgb col, uint8_t a, int cx, int cy, int r, int step)
{
    for (int y = cy - r; y < cy + r; y += step) {
        float dy = (float)y + (float)step * 0.5f - (float)cy;
        float d = (float)r * (float)r - dy * dy;
        int half = d > 0.0f ? (int)lrintf(sqrtf(d)) : 0;
        paint_fill(cv, col, a, cx - half, y, 2 * half, step);
    }
}

#define SPOT_DIM 170

// The spotlight: the selected cell's row and column of its panel stay lit, else a
// disc round the point; everything else is dimmed.
void overlay_spotlight(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    (void)tr, (void)v;
    if (!ov->spotlight) return;
    Rect q;
    if (ov->sel && ov->sel_panel >= 0 && ov->sel_panel < L->n_panels &&
        layout_cell_rect(L, ov->sel_panel, ov->sel_row, ov->sel_col, &q)) {
        Rect pq = L->panel[ov->sel_panel];
        int t = paint_px(L->s, 4);
        Rect keep[2] = {{pq.x - t, q.y - t, pq.w + 2 * t, q.h + 2 * t}, {q.x - t, pq.y - t, q.w + 2 * t, pq.h + 2 * t}};
        dim_except(cv, L->w, L->h, keep, 2, SPOT_DIM);
        return;
    }
    if (ov->point_x < 0.0f || ov->point_y < 0.0f) return;
    int cx = (int)lrintf(ov->point_x * (float)L->w), cy = (int)lrintf(ov->point_y * (float)L->h);
    int r = paint_px(L->s, 150), step = paint_px(L->s, 2);
    Rect band = {0, cy - r, L->w, 2 * r};
    dim_except(cv, L->w, L->h, &band, 1, SPOT_DIM); // above and below the disc
    for (int y = cy - r; y < cy + r; y += step) {    // beside it, row by row
        float dy = (float)y + (float)step * 0.5f - (float)cy;
        float d = (float)r * (float)r - dy * dy;
        int half = d > 0.0f ? (int)lrintf(sqrtf(d)) : 0;
        paint_fill(cv, THEME.black, SPOT_DIM, 0, y, cx - half, step);
        paint_fill(cv, THEME.black, SPOT_DIM, cx + half, y, L->w - (cx + half), step);
    }
}

// A pin's number in a small accent square with its top-left at (x, y).
static void pin_badge(Canvas *cv, const Layout *L, int x, int y, int k)
{
    char b[8];
    snprintf(b, sizeof b, "%d", k);
    int side = L->px_small * 3 / 2;
    paint_fill(cv, THEME.accent, 255, x, y, side, side);
    paint_text_centered(cv, FONT_BOLD, L->px_small, THEME.white, 255, (Rect){x, y, side, side}, b);
}

// The pinned tooltips of this stage: the cell framed and numbered, its derivation in
// a box (where it was dragged to, else placed beside the cell, clear of the others).
void overlay_pins(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    Rect avoid[PINS_MAX * 2];
    int n = 0, t = paint_px(L->s, 3);
    char tip[TIP_MAX];
    for (int i = 0; i < ov->n_pins && i < PINS_MAX; i++) {
        const Pin *pin = &ov->pins[i];
        if (ov->pin_boxes) ov->pin_boxes[i] = (PinBox){0, 0, 0, 0};
        if (pin->stage != v->stage || pin->panel < 0 || pin->panel >= L->n_panels) continue;
        if (cellmark_hidden(v, &L->spec[pin->panel])) continue; // the study mode's hidden result: no derivation of it
        Rect q;
        if (!layout_cell_rect(L, pin->panel, pin->row, pin->col, &q)) continue;
        paint_frame(cv, THEME.accent, 255, q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t, t);
        pin_badge(cv, L, q.x - t, q.y - t, i + 1);
        avoid[n++] = (Rect){q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t};
        cell_tip(L, tr, v, pin->panel, pin->row, pin->col, tip, sizeof tip);
        int wrap = L->w * 40 / 100, tw, th;
        if (!paint_text_block_size(cv, FONT_SANS, L->px_body, wrap, tip, &tw, &th)) continue;
        int pad = paint_px(L->s, 10), bw = tw + 2 * pad, bh = th + 2 * pad + L->px_small, bx, by;
        if (pin->x >= 0.0f) {
            bx = (int)lrintf(pin->x * (float)L->w), by = (int)lrintf(pin->y * (float)L->h);
            bx = bx + bw > L->w ? L->w - bw : bx, by = by + bh > L->h ? L->h - bh : by;
            bx = bx < 0 ? 0 : bx, by = by < 0 ? 0 : by;
        } else {
            tip_place(L, q, bw, bh, avoid, n, &bx, &by);
        }
        avoid[n++] = (Rect){bx, by, bw, bh};
        paint_fill(cv, THEME.black, 40, bx + 3, by + 3, bw, bh);
        paint_fill(cv, THEME.tip_bg, 255, bx, by, bw, bh);
        paint_frame(cv, THEME.accent, 255, bx, by, bw, bh, paint_px(L->s, 2));
        pin_badge(cv, L, bx, by, i + 1);
        paint_text_block(cv, FONT_SANS, L->px_body, wrap, THEME.ink, 255, bx + pad, by + pad + L->px_small, tip);
        if (ov->pin_boxes) ov->pin_boxes[i] = (PinBox){bx, by, bw, bh};
    }
}

// The laser: a red dot with a soft halo at the point.
void overlay_laser(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    (void)tr, (void)v;
    if (!ov->laser || ov->point_x < 0.0f || ov->point_y < 0.0f) return;
    int cx = (int)lrintf(ov->point_x * (float)L->w), cy = (int)lrintf(ov->point_y * (float)L->h);
    const Rgb red = {230, 20, 30};
    fill_disc(cv, red, 70, cx, cy, paint_px(L->s, 16), 1);
    fill_disc(cv, red, 255, cx, cy, paint_px(L->s, 7), 1);
}

void overlay_scrub_rect(const Layout *L, Rect *box, Rect *track)
{
    // over the status line right of the tabs (paused, speed, palette: what a held
    // transition makes moot), else over the timeline: never over the panels, the
    // derivation strip under them or the narration, which a paused transition is for
    int gap = paint_px(L->s, 8), label = L->px_small * 9; // "❚❚ 48 / 48"
    Rect b = L->status;
    if (b.w < label + paint_px(L->s, 200)) b = L->timeline;
    *box = b;
    *track = (Rect){b.x + label, b.y + b.h / 2 - paint_px(L->s, 4), b.w - label - 2 * gap, paint_px(L->s, 8)};
}

int overlay_loop_step_at(const Layout *L, int steps, int x)
{
    Rect b, t;
    overlay_scrub_rect(L, &b, &t);
    if (steps < 1 || t.w < 1) return 0;
    int k = (int)((long)(x - t.x) * steps / t.w);
    return k < 0 ? 0 : k >= steps ? steps - 1 : k;
}

void overlay_loop(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    (void)tr;
    if (ov->scrub || ov->help || v->loop < 0 || ov->loop_steps < 1 || v->loop >= ov->loop_steps) return;
    Rect b, t;
    overlay_scrub_rect(L, &b, &t);
    paint_fill(cv, THEME.black, 40, b.x + 3, b.y + 3, b.w, b.h);
    paint_fill(cv, THEME.white, 255, b.x, b.y, b.w, b.h);
    paint_frame(cv, THEME.accent, 255, b.x, b.y, b.w, b.h, paint_px(L->s, 2));
    char k[16], n[16], lab[64];
    snprintf(k, sizeof k, "%d", v->loop + 1), snprintf(n, sizeof n, "%d", ov->loop_steps); // (from 1, as the step text)
    const char *args[] = {k, n};
    i18n_fmt(lab, sizeof lab, v->lang, "loop.bar", 2, args);
    paint_text(cv, FONT_BOLD, L->px_small, THEME.ink, 255, b.x + paint_px(L->s, 10), b.y + (b.h - L->px_small * 5 / 4) / 2,
               ALIGN_LEFT, lab);
    // a segment per step (a gap between them while they are at least 4 px wide)
    int th = paint_px(L->s, 12), ty = b.y + (b.h - th) / 2;
    for (int i = 0; i < ov->loop_steps; i++) {
        int x0 = t.x + (int)((long)t.w * i / ov->loop_steps), x1 = t.x + (int)((long)t.w * (i + 1) / ov->loop_steps);
        int gap = x1 - x0 >= 4 ? 1 : 0;
        Rgb c = i < v->loop ? THEME.muted : i == v->loop ? THEME.accent : THEME.slot;
        paint_fill(cv, c, 255, x0, i == v->loop ? ty - paint_px(L->s, 3) : ty, x1 - x0 - gap,
                   i == v->loop ? th + 2 * paint_px(L->s, 3) : th);
    }
}

// The scrub bar: the transition held at scrub_p, its frame number, a knob to drag.
void overlay_scrub(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    (void)tr, (void)v;
    if (!ov->scrub || ov->help) return;
    Rect b, t;
    overlay_scrub_rect(L, &b, &t);
    paint_fill(cv, THEME.black, 40, b.x + 3, b.y + 3, b.w, b.h);
    paint_fill(cv, THEME.white, 255, b.x, b.y, b.w, b.h); // (opaque: the status under it does not show)
    paint_frame(cv, THEME.accent, 255, b.x, b.y, b.w, b.h, paint_px(L->s, 2));
    char lab[48];
    snprintf(lab, sizeof lab, "\u275A\u275A %d / %d", ov->scrub_frame, PLAYBACK_SCRUB_FRAMES);
    paint_text(cv, FONT_BOLD, L->px_small, THEME.ink, 255, b.x + paint_px(L->s, 10), b.y + (b.h - L->px_small * 5 / 4) / 2,
               ALIGN_LEFT, lab);
    paint_fill(cv, THEME.slot, 255, t.x, t.y, t.w, t.h);
    int fx = t.x + (int)lrintf(ease_clamp01(ov->scrub_p) * (float)t.w);
    paint_fill(cv, THEME.accent, 255, t.x, t.y, fx - t.x, t.h);
    int k = paint_px(L->s, 9);
    paint_fill(cv, THEME.ink, 255, fx - k / 2, b.y + paint_px(L->s, 5), k, b.h - 2 * paint_px(L->s, 5));
}
