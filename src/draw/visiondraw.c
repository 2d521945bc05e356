// visiondraw.c — a vision transformer's pictures (see visiondraw.h): pixels as grey squares
// (0 white, the image's largest pixel the ink colour), patches on the attention panel's scale
// with their ink as dots, so a patch has the colour its cell has in the attention panel.
#include "visiondraw.h"

#include <math.h>

#include "lesson.h"

static int imin_(int a, int b) { return a < b ? a : b; }
static int imax_(int a, int b) { return a > b ? a : b; }

// q in [0, 1]: white to the ink colour
static Rgb grey(float q)
{
    q = q < 0.0f ? 0.0f : q > 1.0f ? 1.0f : q;
    const Rgb k = THEME.ink;
    return (Rgb){(uint8_t)lrintf(255.0f - q * (255.0f - k.r)), (uint8_t)lrintf(255.0f - q * (255.0f - k.g)),
                 (uint8_t)lrintf(255.0f - q * (255.0f - k.b))};
}

// The pixels of patch n (patch × patch of them) at (x, y), each cell px wide.
static void draw_patch_pixels(Canvas *cv, const float *pix, int width, int patch, int cols, int n, float pmax, int x,
                              int y, int cell)
{
    const int r0 = (n / cols) * patch, c0 = (n % cols) * patch;
    for (int i = 0; i < patch; i++)
        for (int j = 0; j < patch; j++)
            paint_fill(cv, grey(pmax > 0.0f ? pix[(r0 + i) * width + c0 + j] / pmax : 0.0f), 255, x + j * cell,
                       y + i * cell, cell, cell);
}

bool visiondraw_axis_tile(Canvas *cv, const View *v, AxisKind a, int i, Rect box)
{
    const Lesson *ls = v ? v->lesson : NULL;
    if (!ls || !ls->classes || ls->in.query.rank != 3 || (a != AXIS_PATCH && a != AXIS_QUERY && a != AXIS_KEY)) return false;
    const int n = a == AXIS_PATCH ? i : i - 1, p = ls->cfg.patch_size, W = ls->cfg.image_w, Hh = ls->cfg.image_h;
    const int cols = W / p, N = (Hh / p) * cols, b = v->batch >= 0 && v->batch < ls->batch ? v->batch : 0;
    const int cell = imin_(box.w, box.h) / p;
    if (n < 0 || n >= N || cell < 1) return false; // ([CLS], or too small: the label)
    const float *pix = ls->in.query.data + (size_t)b * Hh * W;
    float pmax = 0.0f;
    for (int k = 0; k < Hh * W; k++) pmax = fmaxf(pmax, pix[k]);
    const int x = box.x + (box.w - cell * p) / 2, y = box.y + (box.h - cell * p) / 2;
    draw_patch_pixels(cv, pix, W, p, cols, n, pmax, x, y, cell);
    paint_frame(cv, THEME.muted, 255, x - 1, y - 1, cell * p + 2, cell * p + 2, 1);
    return true;
}

// One picture of the image at (x, y), cell px a pixel: k 0 the pixels, 1 and 2 the patches
// coloured by [CLS]'s weight (head, mean) with each pixel's ink as a dot.
static void draw_picture(Canvas *cv, const VisionOverlay *o, int k, int x, int y, int cell)
{
    const int p = o->patch, cols = o->width / p, N = (o->height / p) * cols;
    if (k == 0) {
        for (int n = 0; n < N; n++)
            draw_patch_pixels(cv, o->pixels, o->width, p, cols, n, o->pix_max, x + (n % cols) * p * cell,
                              y + (n / cols) * p * cell, cell);
    } else {
        for (int n = 0; n < N; n++) {
            const Rgb c = colormap_value(&o->scale, o->att[k - 1][n]);
            const int px = x + (n % cols) * p * cell, py = y + (n / cols) * p * cell;
            paint_fill(cv, c, 255, px, py, p * cell, p * cell);
            const bool light = 0.299f * c.r + 0.587f * c.g + 0.114f * c.b > 140.0f;
            for (int i = 0; i < p; i++)
                for (int j = 0; j < p; j++) {
                    float q = o->pix_max > 0.0f ? o->pixels[((n / cols) * p + i) * o->width + (n % cols) * p + j] / o->pix_max : 0.0f;
                    int d = (int)lrintf((float)cell * 0.7f * sqrtf(q < 0.0f ? 0.0f : q > 1.0f ? 1.0f : q));
                    if (d > 0)
                        paint_fill(cv, light ? THEME.ink : (Rgb){255, 255, 255}, 255, px + j * cell + (cell - d) / 2,
                                   py + i * cell + (cell - d) / 2, d, d);
                }
        }
        for (int n = 1; n < cols; n++) // the patches' borders
            paint_fill(cv, THEME.bg, 255, x + n * p * cell, y, 1, o->height * cell);
        for (int n = 1; n < o->height / p; n++) paint_fill(cv, THEME.bg, 255, x, y + n * p * cell, o->width * cell, 1);
    }
    paint_frame(cv, THEME.muted, 255, x - 1, y - 1, o->width * cell + 2, o->height * cell + 2, 1);
}

void visiondraw_overlay(Canvas *cv, const Layout *L, const View *v)
{
    (void)v;
    const VisionOverlay *o = &L->vision;
    const Rect g = o->r;
    if (g.w <= 0) return;
    const int pad = paint_px(L->s, 10), line = L->px_small * 13 / 10, title_h = L->px_body * 3 / 2;
    paint_fill(cv, THEME.narr_bg, 255, g.x, g.y, g.w, g.h);
    paint_clip(cv, &g);
    paint_text(cv, FONT_BOLD, L->px_body, THEME.ink, 255, g.x + pad, g.y + pad, ALIGN_LEFT, o->title);
    // the image and head h's overlay side by side, the heads' mean under the image: a label line
    // above each picture, a note line under each overlay
    const int col_w = (g.w - 3 * pad) / 2, avail_h = g.h - 2 * pad - title_h - 6 * line - 2 * pad;
    const int cell = imax_(1, imin_(col_w / o->width, avail_h / 2 / o->height)), pic_h = o->height * cell + 3;
    const int y1 = g.y + pad + title_h, y2 = y1 + 3 * line + pic_h + pad;
    const int xs[3] = {g.x + pad, g.x + 2 * pad + col_w, g.x + pad}, ys[3] = {y1, y1, y2};
    for (int k = 0; k < 3; k++) {
        paint_text(cv, FONT_SANS, L->px_small, THEME.ink, 255, xs[k], ys[k], ALIGN_LEFT, o->label[k]);
        draw_picture(cv, o, k, xs[k] + 1, ys[k] + line + 1, cell);
        for (int j = 0; j < 2 && k > 0; j++)
            paint_text(cv, FONT_SANS, L->px_small, THEME.muted, 255, xs[k], ys[k] + line + pic_h + j * line, ALIGN_LEFT,
                       o->note[k - 1][j]);
    }
    paint_clip(cv, NULL);
}
