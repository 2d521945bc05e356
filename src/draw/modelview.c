// modelview.c — painting the model view (View.kind VIEW_MODEL, its row of viewdraw.c): every
// layer × head as a small map of its attention weights, the rows the queries and the columns
// the keys, on the probability palette from 0 to 1 (BertViz's model view, with attnviz's
// numbers), the layer and head on screen before framed. src/view/view_model.c placed it.
#include "viewdraw.h"

#include <stdio.h>

#include "i18n.h"

// One map: cell (i, j) of attention slice (batch b, head h) of stage s.
static void draw_map(Canvas *cv, const Trace *tr, const View *v, int s, int h, Rect q)
{
    const Tensor *t = &tr->stages[s].t;
    if (t->rank != 4) return;
    const int Lq = t->shape[2], Lk = t->shape[3], b = v->batch < t->shape[0] ? v->batch : 0;
    const float *a = t->data + (((size_t)b * t->shape[1] + (size_t)h) * Lq) * Lk;
    ColorScale cs = {v->palette, true, false, 0.0f, 1.0f, 0.0f};
    // (a run of cells of one colour is one rectangle: a causal row's masked keys, its near-0
    // weights; a row thinner than a pixel is not drawn under the next)
    for (int i = 0; i < Lq; i++) {
        const int y0 = q.y + q.h * i / Lq, y1 = q.y + q.h * (i + 1) / Lq;
        if (y1 <= y0) continue;
        int run = 0;
        Rgb col = colormap_value(&cs, a[(size_t)i * Lk]);
        for (int j = 1; j <= Lk; j++) {
            const Rgb c = j < Lk ? colormap_value(&cs, a[(size_t)i * Lk + j]) : col;
            if (j < Lk && c.r == col.r && c.g == col.g && c.b == col.b) continue;
            const int x0 = q.x + q.w * run / Lk, x1 = q.x + q.w * j / Lk;
            paint_fill(cv, col, 255, x0, y0, x1 - x0, y1 - y0);
            run = j, col = c;
        }
    }
}

// The tokens: the queries left of each layer's first map, the keys above each head's top
// map (every tok_step-th), at tok_px.
static void draw_tokens(Canvas *cv, const Layout *L, const Trace *tr, const View *v)
{
    const ModelViewLayout *M = &L->view.model;
    const Tensor *t = &tr->stages[M->stage[0]].t;
    const int Lk = t->shape[3], px = M->tok_px, step = M->tok_step, step_k = M->tok_step_k;
    if (px <= 0 || M->layers < 1 || M->heads < 1) return;
    char lb[64];
    for (int l = 0; l < M->layers; l++) { // (an encoder–decoder's rows: each block's own, source or target)
        const Rect q = M->map[l][0];
        const int Lq = tr->stages[M->stage[l]].t.shape[2];
        for (int i = 0; i < Lq; i += step) {
            const int y = q.y + (q.h * i + q.h * (i + 1)) / (2 * Lq) - px * 6 / 10;
            paint_text(cv, FONT_SANS, px, THEME.ink, 255, q.x - paint_px(L->s, 4), y, ALIGN_RIGHT,
                       panel_axis_label(v, panel_query_axis(tr, l), i, lb, sizeof lb));
        }
    }
    if (tr->encoder_blocks > 0) return; // its blocks' keys differ (the kind under each block's name says which)
    for (int h = 0; h < M->heads; h++) {
        const Rect q = M->map[0][h];
        for (int j = 0; j < Lk; j += step_k) {
            const int x = q.x + (q.w * j + q.w * (j + 1)) / (2 * Lk);
            paint_text(cv, FONT_SANS, px, THEME.ink, 255, x, q.y - px * 13 / 10, ALIGN_CENTER,
                       panel_axis_label(v, AXIS_KEY, j, lb, sizeof lb));
        }
    }
}

void modelview_draw(Canvas *cv, const Layout *L, const Trace *tr, const View *v)
{
    const ModelViewLayout *M = &L->view.model;
    char b[48];
    const int here_l = trace_layer_at(tr, v->stage);
    for (int h = 0; h < M->heads; h++) {
        const char *args[] = {b};
        char hb[12];
        snprintf(hb, sizeof hb, "%d", h);
        args[0] = hb;
        i18n_fmt(b, sizeof b, v->lang, "ui.mv_head", 1, args);
        paint_fill(cv, colormap_head(h), 255, M->col_label[h].x, M->col_label[h].y + M->col_label[h].h - 3,
                   M->col_label[h].w, 3);
        paint_text_centered(cv, FONT_SANS, L->px_small, THEME.ink, 255, M->col_label[h], b);
    }
    for (int l = 0; l < M->layers; l++) {
        char lb[12];
        snprintf(lb, sizeof lb, "%d", l);
        const char *args[] = {lb};
        i18n_fmt(b, sizeof b, v->lang, "ui.mv_layer", 1, args);
        Rect r = M->row_label[l];
        // a local/global (or linear/full) pattern or an encoder–decoder: each layer's kind below its name
        bool pattern = tr->sliding_window > 0 || tr->encoder_blocks > 0;
        for (int k = 0; k < M->layers && k < TRACE_MAX_LAYERS; k++) pattern = pattern || tr->layer_linear[k];
        const int ty = r.y + (r.h - (pattern ? L->px_small * 23 / 10 : L->px_small)) / 2;
        paint_text(cv, l == here_l ? FONT_BOLD : FONT_SANS, L->px_small, THEME.ink, 255, r.x + r.w, ty, ALIGN_RIGHT, b);
        if (tr->encoder_blocks > 0) { // encoder self, decoder causal self or cross-attention: a word and a colour each
            static const char *const KEY[] = {"ui.mv_encoder", "ui.mv_encoder", "ui.mv_decoder_self", "ui.mv_cross"};
            const TraceBlock k = trace_block(tr, l);
            const Rgb col = k == BLOCK_CROSS ? THEME.accent : k == BLOCK_DECODER_SELF ? THEME.hilite : THEME.muted;
            paint_text(cv, FONT_SANS, L->px_small, col, 255, r.x + r.w, ty + L->px_small * 13 / 10, ALIGN_RIGHT,
                       i18n_get(v->lang, KEY[k]));
            paint_fill(cv, col, 255, r.x + r.w + paint_px(L->s, 2), r.y, paint_px(L->s, 4), r.h);
        } else if (pattern) {
            char w[12], kind[48];
            snprintf(w, sizeof w, "%d", tr->sliding_window);
            const char *wargs[] = {w};
            const bool own = tr->layer_sliding[l] || tr->layer_linear[l];
            i18n_fmt(kind, sizeof kind, v->lang, tr->layer_linear[l] ? "ui.mv_linear" : tr->layer_sliding[l] ? "ui.mv_local"
                                                 : "ui.mv_global", 1, wargs);
            paint_text(cv, FONT_SANS, L->px_small, own ? THEME.accent : THEME.muted, 255, r.x + r.w,
                       ty + L->px_small * 13 / 10, ALIGN_RIGHT, kind);
        }
        for (int h = 0; h < M->heads; h++) {
            Rect q = M->map[l][h];
            draw_map(cv, tr, v, M->stage[l], h, q);
            const int t = paint_px(L->s, 3);
            if (l == here_l && h == v->head) // the layer and head on screen before
                paint_frame(cv, THEME.accent, 255, q.x - t - 1, q.y - t - 1, q.w + 2 * t + 2, q.h + 2 * t + 2, t);
            else
                paint_frame(cv, THEME.grid, 255, q.x - 1, q.y - 1, q.w + 2, q.h + 2, 1);
        }
    }
    draw_tokens(cv, L, tr, v);
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
