// bars.c — a bar chart beside the panels (see bars.h).
#include "bars.h"

#include <math.h>

static int imax_(int a, int b) { return a > b ? a : b; }

void bars_draw(Canvas *cv, const Layout *L, const View *v)
{
    const BarChart *c = &L->bars;
    const Rect g = c->r;
    if (g.w <= 0) return;
    const int pad = paint_px(L->s, 10), row_h = L->px_body * 17 / 10;
    paint_fill(cv, THEME.narr_bg, 255, g.x, g.y, g.w, g.h);
    paint_clip(cv, &g);
    paint_text(cv, FONT_BOLD, L->px_body, THEME.ink, 255, g.x + pad, g.y + pad, ALIGN_LEFT, c->title);
    const int sub = c->subtitle[0] ? row_h : 0; // (sampling's line: what is kept)
    if (sub) paint_text(cv, FONT_SANS, L->px_small, THEME.ink, 255, g.x + pad, g.y + pad + row_h, ALIGN_LEFT, c->subtitle);
    // the labels' column: 48 px, or as wide as the widest label (a BPE token, "<0xE4>"), up
    // to a third of the chart
    int label_w = paint_px(L->s, 48);
    for (int i = 0; i < c->n; i++)
        label_w = imax_(label_w, paint_text_width(cv, FONT_MONO, L->px_body, c->label[i]) + paint_px(L->s, 12));
    label_w = label_w < g.w / 3 ? label_w : g.w / 3;
    const int num_w = paint_px(L->s, 52);
    const int bx = g.x + pad + label_w, bw = g.w - 2 * pad - label_w - num_w;
    ColorScale cs = {v->palette, true, false, 0.0f, 1.0f, 0.0f};
    for (int i = 0; i < c->n; i++) {
        const int y = g.y + pad + sub + row_h * 3 / 2 + i * row_h;
        if (y + row_h > g.y + g.h) break;
        const int ink = c->cut[i] ? 110 : 255; // (a token sampling cut: faint, no bar)
        paint_text(cv, FONT_MONO, L->px_body, THEME.ink, ink, bx - paint_px(L->s, 6), y + (row_h - L->px_body) / 2 - 2,
                   ALIGN_RIGHT, c->label[i]);
        const float q = c->value[i];
        const int w = bw > 0 && q > 0.0f ? (int)lrintf((float)bw * (q < 1.0f ? q : 1.0f)) : 0;
        paint_fill(cv, THEME.slot, 255, bx, y + row_h / 6, bw > 0 ? bw : 0, row_h * 2 / 3);
        if (w > 0)
            paint_fill(cv, c->scaled ? colormap_value(&c->scale, c->shade[i]) : colormap_value(&cs, q), 255, bx,
                       y + row_h / 6, w, row_h * 2 / 3);
        paint_text(cv, FONT_MONO, L->px_small, THEME.ink, ink, bx + bw + paint_px(L->s, 6), y + (row_h - L->px_small) / 2,
                   ALIGN_LEFT, c->number[i]);
    }
    paint_clip(cv, NULL);
}
