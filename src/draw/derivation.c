// derivation.c — the derivation strip (see derivation.h).
#include "derivation.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "explain.h"

static void box(SDL_Renderer *r, Rgb c, int x, int y, int w, int h)
{
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
    SDL_SetRenderDrawColor(r, c.r, c.g, c.b, 255);
    SDL_RenderFillRect(r, &(SDL_Rect){x, y, w, h});
}

void derivation_draw(SDL_Renderer *r, Fonts *f, const Layout *L, const Derivation *d, float shown)
{
    Rect s = L->deriv;
    if (s.w <= 0 || d->n_lines <= 0 || L->result_panel < 0) return;
    const Rgb ink = {28, 28, 30}, muted = {96, 96, 100}, edge = {196, 200, 208}, paper = {255, 255, 255};
    const ColorScale *scale = &L->spec[L->result_panel].scale;
    int lh = L->deriv_line_h, px = L->px_small, gap = (int)lrintf(4 * L->s);
    // the label column fits the widest label; values get the rest, as wide as the result's cells at most
    int label_w = 0, n_max = 1, tw, th;
    for (int i = 0; i < d->n_lines; i++) {
        text_size(f, r, FONT_SANS, px, d->line[i].label, &tw, &th);
        if (tw > label_w) label_w = tw;
        if (d->line[i].n > n_max) n_max = d->line[i].n;
    }
    text_size(f, r, FONT_BOLD, px, d->title, &tw, &th);
    int title_w = tw + 2 * gap;
    label_w += 2 * gap;
    // a value box: as wide as the result's cells, and never narrower than its widest number
    char num[32];
    int need = 0;
    for (int i = 0; i < d->n_lines; i++)
        for (int j = 0; j < d->line[i].n; j++) {
            explain_number(d->line[i].v[j], num, sizeof num);
            text_size(f, r, FONT_MONO, px, num, &tw, &th);
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
    SDL_RenderSetClipRect(r, &(SDL_Rect){s.x, s.y, s.w, s.h});
    text_draw(f, r, FONT_BOLD, px, (SDL_Color){muted.r, muted.g, muted.b, 255}, x0, s.y + (lh - th) / 2, ALIGN_LEFT,
              d->title);
    int visible = (int)ceilf(shown * (float)d->n_lines - 1e-4f);
    for (int i = 0; i < d->n_lines && i < visible; i++) {
        const DerivLine *l = &d->line[i];
        int y = s.y + i * lh;
        int lx = x0 + title_w;
        text_draw(f, r, FONT_SANS, px, (SDL_Color){ink.r, ink.g, ink.b, 255}, lx + label_w - gap, y + (lh - th) / 2,
                  ALIGN_RIGHT, l->label);
        int vx = lx + label_w;
        for (int j = 0; j < l->n; j++) {
            int bx = vx + j * cw, bw = l->n == 1 && n_max > 1 ? 2 * cw : cw;
            Rgb c = l->result ? colormap_value(scale, l->v[j]) : paper;
            box(r, edge, bx, y + 1, bw, lh - 2);
            box(r, c, bx + 1, y + 2, bw - 2, lh - 4);
            explain_number(l->v[j], num, sizeof num);
            Rgb t = colormap_text_dark(c) ? (Rgb){0, 0, 0} : (Rgb){255, 255, 255};
            int nw, nh;
            text_size(f, r, FONT_MONO, px, num, &nw, &nh);
            int npx = px;
            while (nw > bw - 4 && npx > 9) text_size(f, r, FONT_MONO, --npx, num, &nw, &nh);
            text_draw_centered(f, r, FONT_MONO, npx, (SDL_Color){t.r, t.g, t.b, 255}, (SDL_Rect){bx, y + 1, bw, lh - 2},
                               num);
        }
    }
    SDL_RenderSetClipRect(r, NULL);
}
