// modelview.c — the model view (View.model_view): every layer × head as a small map of
// its attention weights, the rows the queries and the columns the keys, on the
// probability palette from 0 to 1 (BertViz's model view, with attnviz's numbers). The
// layer and head on screen before are framed; the layout (layout.c) placed the maps.
#include "modelview.h"

#include <stdio.h>

#include "i18n.h"
#include "recipe.h"

// One map: cell (i, j) of attention slice (batch b, head h) of stage s.
static void draw_map(Canvas *cv, const Trace *tr, const View *v, int s, int h, Rect q)
{
    const Tensor *t = &tr->stages[s].t;
    if (t->rank != 4) return;
    const int Lq = t->shape[2], Lk = t->shape[3], b = v->batch < t->shape[0] ? v->batch : 0;
    const float *a = t->data + (((size_t)b * t->shape[1] + (size_t)h) * Lq) * Lk;
    ColorScale cs = {v->palette, true, false, 0.0f, 1.0f, 0.0f};
    for (int i = 0; i < Lq; i++) {
        const int y0 = q.y + q.h * i / Lq, y1 = q.y + q.h * (i + 1) / Lq;
        for (int j = 0; j < Lk; j++) {
            const int x0 = q.x + q.w * j / Lk, x1 = q.x + q.w * (j + 1) / Lk;
            paint_fill(cv, colormap_value(&cs, a[(size_t)i * Lk + j]), 255, x0, y0, x1 - x0, y1 - y0);
        }
    }
}

void modelview_draw(Canvas *cv, const Layout *L, const Trace *tr, const View *v)
{
    char b[48];
    const int here_l = trace_layer_at(tr, v->stage);
    for (int h = 0; h < L->mv_heads; h++) {
        const char *args[] = {b};
        char hb[12];
        snprintf(hb, sizeof hb, "%d", h);
        args[0] = hb;
        i18n_fmt(b, sizeof b, v->lang, "ui.mv_head", 1, args);
        paint_fill(cv, colormap_head(h), 255, L->mv_col_label[h].x, L->mv_col_label[h].y + L->mv_col_label[h].h - 3,
                   L->mv_col_label[h].w, 3);
        paint_text_centered(cv, FONT_SANS, L->px_small, THEME.ink, 255, L->mv_col_label[h], b);
    }
    for (int l = 0; l < L->mv_layers; l++) {
        char lb[12];
        snprintf(lb, sizeof lb, "%d", l);
        const char *args[] = {lb};
        i18n_fmt(b, sizeof b, v->lang, "ui.mv_layer", 1, args);
        Rect r = L->mv_row_label[l];
        paint_text(cv, l == here_l ? FONT_BOLD : FONT_SANS, L->px_small, THEME.ink, 255, r.x + r.w,
                   r.y + (r.h - L->px_small) / 2, ALIGN_RIGHT, b);
        for (int h = 0; h < L->mv_heads; h++) {
            Rect q = L->mv_map[l][h];
            draw_map(cv, tr, v, L->mv_stage[l], h, q);
            const int t = paint_px(L->s, 3);
            if (l == here_l && h == v->head) // the layer and head on screen before
                paint_frame(cv, THEME.accent, 255, q.x - t - 1, q.y - t - 1, q.w + 2 * t + 2, q.h + 2 * t + 2, t);
            else
                paint_frame(cv, THEME.grid, 255, q.x - 1, q.y - 1, q.w + 2, q.h + 2, 1);
        }
    }
    // the legend: the probability scale from 0 to 1
    Rect g = L->legend;
    paint_fill(cv, THEME.narr_bg, 255, g.x, g.y, g.w, g.h);
    const int pad = paint_px(L->s, 10), bar_h = paint_px(L->s, 14), bx = g.x + pad, bw = g.w - 2 * pad;
    paint_text(cv, FONT_BOLD, L->px_small, THEME.ink, 255, bx, g.y + pad, ALIGN_LEFT, i18n_get(v->lang, "name.attn"));
    const int by = g.y + pad + L->px_small * 3 / 2;
    ColorScale cs = {v->palette, true, false, 0.0f, 1.0f, 0.0f};
    for (int x = 0; x < bw; x++) paint_fill(cv, colormap_value(&cs, (float)x / (float)(bw > 1 ? bw - 1 : 1)), 255, bx + x, by, 1, bar_h);
    paint_text(cv, FONT_MONO, L->px_small, THEME.muted, 255, bx, by + bar_h + 2, ALIGN_LEFT, "0");
    paint_text(cv, FONT_MONO, L->px_small, THEME.muted, 255, bx + bw, by + bar_h + 2, ALIGN_RIGHT, "1");
}
