// headview.c — painting the head view (View.kind VIEW_HEADS, its row of viewdraw.c): one
// head's weights as lines from each query token to each key token, as opaque as the weight
// (BertViz's head view), and the legend of the lines. src/view/view_heads.c placed it.
#include "viewdraw.h"

#include <stdint.h>
#include <stdio.h>

#include "i18n.h"

static int imin_(int a, int b) { return a < b ? a : b; }
static int imax_(int a, int b) { return a > b ? a : b; }

void headview_draw(Canvas *cv, const Layout *L, const Trace *tr, const View *v)
{
    const HeadViewLayout *H = &L->view.heads;
    if (H->stage < 0 || H->n <= 0) return;
    const Tensor *t = &tr->stages[H->stage].t;
    const int Lq = t->shape[2], Lk = t->shape[3], nh = t->shape[1];
    const int b = v->batch < t->shape[0] ? v->batch : 0, h = v->head < nh ? v->head : 0;
    const float *a = t->data + (((size_t)b * nh + (size_t)h) * Lq) * Lk;
    const Rgb col = colormap_head(h);
    const int gap = paint_px(L->s, 10), px = imin_(L->px_body, imax_(H->dy * 3 / 4, 6));
    char lb[64];
    paint_text(cv, FONT_BOLD, L->px_small, THEME.muted, 255, H->xq, H->y0 - H->dy / 2 - L->col_label_h, ALIGN_RIGHT,
               i18n_get(v->lang, "ui.hv_queries"));
    paint_text(cv, FONT_BOLD, L->px_small, THEME.muted, 255, H->xk, H->y0 - H->dy / 2 - L->col_label_h, ALIGN_LEFT,
               i18n_get(v->lang, "ui.hv_keys"));
    // the lines: light ones first, so the strong ones are drawn over them
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < Lq; i++)
            for (int j = 0; j < Lk; j++) {
                const float w = a[(size_t)i * Lk + j];
                if (!(w >= 0.01f) || (pass == 0) != (w < 0.5f)) continue; // (NaN: no line)
                const int y1 = H->y0 + i * H->dy, y2 = H->y0 + j * H->dy;
                const uint8_t al = (uint8_t)(40.0f + 215.0f * (w < 1.0f ? w : 1.0f));
                const int thick = w >= 0.5f ? 3 : w >= 0.2f ? 2 : 1;
                for (int k = 0; k < thick; k++)
                    paint_line(cv, col, al, H->xq + gap, y1 + k - thick / 2, H->xk - gap, y2 + k - thick / 2);
            }
    for (int i = 0; i < Lq; i++) {
        const char *q = panel_axis_label(v, AXIS_QUERY, i, lb, sizeof lb);
        paint_text(cv, FONT_MONO, px, THEME.ink, 255, H->xq, H->y0 + i * H->dy - px / 2 - 1, ALIGN_RIGHT, q);
    }
    for (int j = 0; j < Lk; j++) {
        const char *k = panel_axis_label(v, AXIS_KEY, j, lb, sizeof lb);
        paint_text(cv, FONT_MONO, px, THEME.ink, 255, H->xk, H->y0 + j * H->dy - px / 2 - 1, ALIGN_LEFT, k);
    }
    // the legend: what a line's strength means
    Rect g = L->legend;
    paint_fill(cv, THEME.narr_bg, 255, g.x, g.y, g.w, g.h);
    const int pad = paint_px(L->s, 10), lx = g.x + pad, ly = g.y + pad + L->px_small * 2;
    paint_text(cv, FONT_BOLD, L->px_small, THEME.ink, 255, lx, g.y + pad, ALIGN_LEFT, i18n_get(v->lang, "ui.hv_legend"));
    static const float ws[] = {0.05f, 0.25f, 0.5f, 1.0f};
    const int seg = (g.w - 2 * pad) / 4;
    for (int k = 0; k < 4; k++) {
        const int thick = ws[k] >= 0.5f ? 3 : ws[k] >= 0.2f ? 2 : 1;
        for (int d = 0; d < thick; d++)
            paint_line(cv, col, (uint8_t)(40.0f + 215.0f * ws[k]), lx + k * seg, ly + d, lx + k * seg + seg * 2 / 3, ly + d);
        char wb[16];
        snprintf(wb, sizeof wb, "%.2f", (double)ws[k]);
        paint_text(cv, FONT_MONO, L->px_small, THEME.muted, 255, lx + k * seg, ly + paint_px(L->s, 8), ALIGN_LEFT, wb);
    }
}
