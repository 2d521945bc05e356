// derivation.c — the derivation strip (see derivation.h).
#include "derivation.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "explain.h"

void derivation_draw(Canvas *cv, const Layout *L, const Frame *F)
{
    const Derivation *d = &F->deriv;
    Rect s = L->deriv;
    if (s.w <= 0 || d->n_lines <= 0 || L->result_panel < 0) return;
    const ColorScale *scale = &L->spec[L->result_panel].scale;
    int lh = L->deriv_line_h, px = L->px_small, gap = paint_px(L->s, 4);
    // the label column fits the widest label; values get the rest
    int label_w = 0, n_max = 1, tw, th;
    for (int i = 0; i < d->n_lines; i++) {
        paint_text_size(cv, FONT_SANS, px, d->line[i].label, &tw, &th);
        if (tw > label_w) label_w = tw;
        if (d->line[i].n > n_max) n_max = d->line[i].n;
    }
    paint_text_size(cv, FONT_BOLD, px, d->title, &tw, &th);
    int title_w = tw + 2 * gap;
    label_w += 2 * gap;
    // a value box: as wide as the result's cells, and never narrower than its widest number
    int need = 0;
    for (int i = 0; i < d->n_lines; i++)
        for (int j = 0; j < d->line[i].n; j++) {
            const char *num = F->deriv_text[i][j];
            paint_text_size(cv, FONT_MONO, px, num, &tw, &th);
            if (tw > need) need = tw;
        }
    need += 2 * gap;
    int cw = L->cell_wq[L->result_panel] / LAYOUT_Q;
    if (cw < need) cw = need;
    int avail = (s.w - title_w - label_w) / n_max;
    if (cw > avail) cw = avail;
    if (cw < 8) return;
    int x0 = s.x + (s.w - title_w - label_w - n_max * cw) / 2;
    if (x0 < s.x) x0 = s.x;
    paint_clip(cv, &s);
    paint_text(cv, FONT_BOLD, px, THEME.muted, 255, x0, s.y + (lh - th) / 2, ALIGN_LEFT, d->title);
    int visible = (int)ceilf(F->deriv_shown * (float)d->n_lines - 1e-4f);
    for (int i = 0; i < d->n_lines && i < visible; i++) {
        const DerivLine *l = &d->line[i];
        int y = s.y + i * lh;
        int lx = x0 + title_w;
        paint_text(cv, FONT_SANS, px, THEME.ink, 255, lx + label_w - gap, y + (lh - th) / 2, ALIGN_RIGHT, l->label);
        int vx = lx + label_w;
        for (int j = 0; j < l->n; j++) {
            int bx = vx + j * cw, bw = l->n == 1 && n_max > 1 ? 2 * cw : cw;
            Rgb c = l->result ? colormap_value(scale, l->v[j]) : THEME.white;
            paint_fill(cv, THEME.grid, 255, bx, y + 1, bw, lh - 2);
            paint_fill(cv, c, 255, bx + 1, y + 2, bw - 2, lh - 4);
            const char *num = F->deriv_text[i][j];
            Rgb t = colormap_text_dark(c) ? THEME.black : THEME.white;
            int nw, nh, npx = px;
            paint_text_size(cv, FONT_MONO, npx, num, &nw, &nh);
            while (nw > bw - 4 && npx > LAYOUT_MIN_TEXT_PX) paint_text_size(cv, FONT_MONO, --npx, num, &nw, &nh);
            paint_text_centered(cv, FONT_MONO, npx, t, 255, (Rect){bx, y + 1, bw, lh - 2}, num);
        }
    }
    paint_clip(cv, NULL);
}
