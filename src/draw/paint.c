// paint.c — the primitives of paint.h as commands on the canvas's DrawList:
// positions resolved here (text measured with the fonts, aligned, fitted), the
// drawing left to the replayers (paint_sdl.c, paint_vec.c) at paint_flush.
#include "paint.h"

#include "paint_vec.h"
#include "utf8.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const Theme THEME = {
    .bg = {248, 248, 246},
    .ink = {28, 28, 30},
    .muted = {96, 96, 100},
    .accent = {0, 90, 170},
    .accent_light = {214, 228, 244},
    .slot = {232, 232, 232},
    .empty = {236, 236, 234},
    .grid = {196, 200, 208},
    .narr_bg = {238, 243, 250},
    .hilite = {255, 176, 0},
    .pad_ink = {110, 110, 116}, // 4.8:1 on bg (WCAG AA text), lighter than muted, struck through
    .greyed = {150, 150, 152},
    .error_ink = {176, 40, 32},
    .invalid_bg = {236, 236, 236},
    .white = {255, 255, 255},
    .black = {0, 0, 0},
    .tip_bg = {255, 255, 250},
    .toast_bg = {30, 30, 34},
    .dot_here = {120, 160, 210},
    .dot_other = {160, 160, 160},
    .changed = {20, 20, 24},
    .selected = {0, 90, 170},
};

int paint_px(float s, float base)
{
    int p = (int)lrintf(base * s);
    return p < 1 ? 1 : p;
}

static void put(Canvas *cv, DrawCmd c) { draw_list_push(cv->list, c); }

bool paint_flush(Canvas *cv)
{
    DrawList *dl = cv->list;
    bool ok = !dl->oom;
    if (cv->vec) paint_vec_replay(cv->vec, cv->fonts, dl);
    else if (cv->r) paint_sdl_replay(cv->r, cv->fonts, dl);
    draw_list_clear(dl);
    return ok;
}

void paint_viewport(Canvas *cv, const Rect *r)
{
    assert(cv->vec); // a page of the vector backend
    paint_flush(cv);
    paint_vec_viewport(cv->vec, r);
}

void paint_fill(Canvas *cv, Rgb col, uint8_t a, int x, int y, int w, int h)
{
    if (w <= 0 || h <= 0) return;
    put(cv, (DrawCmd){.op = DRAW_FILL, .col = col, .a = a, .r = {x, y, w, h}});
}

void paint_frame(Canvas *cv, Rgb col, uint8_t a, int x, int y, int w, int h, int t)
{
    put(cv, (DrawCmd){.op = DRAW_FRAME, .col = col, .a = a, .r = {x, y, w, h}, .t = t});
}

void paint_line(Canvas *cv, Rgb col, uint8_t a, int x1, int y1, int x2, int y2)
{
    put(cv, (DrawCmd){.op = DRAW_LINE, .col = col, .a = a, .r = {x1, y1, 0, 0}, .x2 = x2, .y2 = y2, .t = 1});
}

void paint_corner_mark(Canvas *cv, int x, int y, int w, int n)
{
    // rows of a staircase: row k spans the right n − k pixels (white one pixel wider)
    for (int k = 0; k < n + 1; k++) paint_fill(cv, THEME.white, 255, x + w - (n + 1 - k), y + k, n + 1 - k, 1);
    for (int k = 0; k < n - 1; k++) paint_fill(cv, THEME.changed, 255, x + w - (n - 1 - k), y + k, n - 1 - k, 1);
}

void paint_hatch(Canvas *cv, int x, int y, int w, int h, uint8_t a, float s)
{
    if (w < 16 || h < 16) return;
    paint_push(cv, (Rect){x, y, w, h});
    Rgb hc = colormap_masked_hatch();
    int m = w < h ? w : h;
    int step = m / 5 < 5 ? 5 : m / 5;
    int th = s >= 1.5f ? 2 : 1;
    for (int t = (int)(0.4f * (float)m); t < w + h; t += step)
        for (int k = 0; k < th; k++) paint_line(cv, hc, a, x + t + k - h, y + h, x + t + k, y);
    paint_pop(cv);
}

void paint_clip(Canvas *cv, const Rect *q)
{
    put(cv, (DrawCmd){.op = DRAW_CLIP, .none = !q, .r = q ? *q : (Rect){0}});
}

void paint_push(Canvas *cv, Rect q) { put(cv, (DrawCmd){.op = DRAW_PUSH, .r = q}); }

void paint_pop(Canvas *cv) { put(cv, (DrawCmd){.op = DRAW_POP}); }

void paint_size(Canvas *cv, int *w, int *h)
{
    *w = 0, *h = 0;
    if (cv->vec) paint_vec_size(cv->vec, w, h);
    else if (cv->r) SDL_GetRendererOutputSize(cv->r, w, h);
}

void paint_clear(Canvas *cv, Rgb col)
{
    int w, h;
    paint_size(cv, &w, &h);
    put(cv, (DrawCmd){.op = DRAW_CLEAR, .col = col, .a = 255, .r = {0, 0, w, h}});
}

// ---- text ------------------------------------------------------------------------

// The size of s's block (wrapped at wrap_w) as it will be drawn. On the SDL
// backend the texture in col is made now, so the replay only copies it (one
// TTF render a string, not one to measure and one to draw).
static bool block_size(Canvas *cv, FontFace face, int px, int wrap_w, Rgb col, uint8_t a, const char *s,
                       int *w, int *h)
{
    *w = 0, *h = 0;
    if (cv->vec || !cv->r) return text_block_size(cv->fonts, cv->r, face, px, wrap_w, s, w, h);
    return text_texture(cv->fonts, cv->r, face, px, wrap_w, (SDL_Color){col.r, col.g, col.b, a}, s, w, h) != NULL;
}

static void put_text(Canvas *cv, FontFace face, int px, int wrap_w, Rgb col, uint8_t a, Rect r, const char *s)
{
    draw_list_push_text(cv->list, (DrawCmd){.col = col, .a = a, .r = r, .face = face, .px = px, .wrap_w = wrap_w},
                        s);
}

void paint_text_size(Canvas *cv, FontFace face, int px, const char *s, int *w, int *h)
{
    text_size(cv->fonts, cv->r, face, px, s, w, h);
}

int paint_text(Canvas *cv, FontFace face, int px, Rgb col, uint8_t a, int x, int y, TextAlign align,
               const char *s)
{
    int w, h;
    if (!block_size(cv, face, px, 0, col, a, s, &w, &h)) return 0;
    if (align == ALIGN_CENTER) x -= w / 2;
    if (align == ALIGN_RIGHT) x -= w;
    put_text(cv, face, px, 0, col, a, (Rect){x, y, 0, 0}, s);
    return w;
}

void paint_text_centered(Canvas *cv, FontFace face, int px, Rgb col, uint8_t a, Rect box, const char *s)
{
    int w, h;
    if (block_size(cv, face, px, 0, col, a, s, &w, &h))
        put_text(cv, face, px, 0, col, a, (Rect){box.x + (box.w - w) / 2, box.y + (box.h - h) / 2, 0, 0}, s);
}

int paint_text_wrapped(Canvas *cv, FontFace face, int px, int min_px, Rgb col, uint8_t a, Rect box,
                       const char *s)
{
    int w = 0, h = 0;
    if (px < min_px) return 0;
    // the size that fits, else min_px's step (sizes only: nothing made for the sizes tried)
    int fit = px;
    for (; px >= min_px; px -= 2) {
        fit = px;
        if (!text_block_size(cv->fonts, cv->r, face, px, box.w, s, &w, &h) || h <= box.h) break;
    }
    if (!block_size(cv, face, fit, box.w, col, a, s, &w, &h)) return 0;
    // never drawn past the box: cropped, not scaled
    int ch = h < box.h ? h : box.h;
    if (ch > 0 && box.w > 0) put_text(cv, face, fit, box.w, col, a, (Rect){box.x, box.y, box.w, ch}, s);
    return ch;
}

int paint_text_width(Canvas *cv, FontFace face, int px, const char *s)
{
    return text_width(cv->fonts, face, px, s);
}

int paint_text_wrapped_height(Canvas *cv, FontFace face, int px, int wrap_w, const char *s)
{
    return text_wrapped_height(cv->fonts, face, px, wrap_w, s);
}

bool paint_text_block_size(Canvas *cv, FontFace face, int px, int wrap_w, const char *s, int *w, int *h)
{
    return text_block_size(cv->fonts, cv->r, face, px, wrap_w, s, w, h);
}

void paint_text_block(Canvas *cv, FontFace face, int px, int wrap_w, Rgb col, uint8_t a, int x, int y,
                      const char *s)
{
    int w, h;
    if (block_size(cv, face, px, wrap_w, col, a, s, &w, &h))
        put_text(cv, face, px, wrap_w, col, a, (Rect){x, y, 0, 0}, s);
}

// s cut after len bytes, with "…", into buf.
static void write_cut(char *buf, const char *s, size_t len)
{
    memcpy(buf, s, len);
    memcpy(buf + len, "…", sizeof "…");
}

// Whether s cut after len bytes, with "…", is at most max_w wide (buf holds it).
static bool cut_fits(Canvas *cv, FontFace face, int px, const char *s, size_t len, int max_w, char *buf)
{
    int tw, th;
    write_cut(buf, s, len);
    paint_text_size(cv, face, px, buf, &tw, &th);
    return tw <= max_w;
}

static bool continuation(const char *s, size_t i) { return utf8_is_cont((unsigned char)s[i]); }

const char *paint_fit_text(Canvas *cv, FontFace face, int px, const char *s, int max_w, char *buf, size_t n)
{
    int tw, th;
    paint_text_size(cv, face, px, s, &tw, &th);
    if (tw <= max_w || n < 8) return s;
    size_t cap = strlen(s); // the cuts tried are the code point starts before cap
    if (cap > n - 4) cap = n - 4;
    if (cap == 0) return "…";
    // Wider with every code point: start from a guess in proportion to the width,
    // then step down one code point at a time, or up while the next one fits.
    size_t len = cap - 1;
    if (tw > 0 && max_w < tw) {
        size_t guess = cap * (size_t)(max_w > 0 ? max_w : 0) / (size_t)tw + 4;
        if (guess < len) len = guess;
    }
    while (len > 0 && continuation(s, len)) len--;
    if (cut_fits(cv, face, px, s, len, max_w, buf)) {
        for (;;) {
            size_t next = len + 1;
            while (next < cap && continuation(s, next)) next++;
            if (next >= cap || !cut_fits(cv, face, px, s, next, max_w, buf)) break;
            len = next;
        }
        write_cut(buf, s, len);
        return len == 0 ? "…" : buf;
    }
    while (len > 0) {
        do len--; while (len > 0 && continuation(s, len));
        if (cut_fits(cv, face, px, s, len, max_w, buf)) return len == 0 ? "…" : buf;
    }
    return "…";
}

// ---- retained images -------------------------------------------------------------

#define IMAGE_ROUND 64 // images grow in steps of this many pixels

// An image about to be rewritten or freed is first drawn where the list wants it.
static void settle(Canvas *cv, const PaintImage *img)
{
    if (cv->list && draw_list_uses_image(cv->list, img)) paint_flush(cv);
}

int paint_image_reserve(Canvas *cv, PaintImage *img, int w, int h)
{
    if (img->handle && img->w >= w && img->h >= h) return 0;
    settle(cv, img);
    paint_image_free(img);
    int tw = (w + IMAGE_ROUND - 1) / IMAGE_ROUND * IMAGE_ROUND, th = (h + IMAGE_ROUND - 1) / IMAGE_ROUND * IMAGE_ROUND;
    // (a failed attempt left w = h = 0)
    if (img->w > tw) tw = img->w;
    if (img->h > th) th = img->h;
    // the vector backend: pixels in memory, embedded when drawn; SDL: a streaming texture
    void *px = cv->vec ? malloc((size_t)tw * (size_t)th * 4) : paint_sdl_texture_create(cv->r, tw, th);
    if (!px) {
        img->w = img->h = 0;
        return -1;
    }
    img->handle = px, img->w = tw, img->h = th, img->mem = cv->vec != NULL;
    return 1;
}

bool paint_image_fill(Canvas *cv, PaintImage *img, int w, int h, PaintPixelsFn fill_px, const void *ctx)
{
    settle(cv, img);
    if (!img->mem) return paint_sdl_texture_fill(img->handle, w, h, fill_px, ctx);
    if (!img->handle) return false;
    fill_px(img->handle, img->w * 4, ctx);
    return true;
}

void paint_image_free(PaintImage *img)
{
    if (img->handle && img->mem) free(img->handle);
    else if (img->handle) paint_sdl_texture_free(img->handle);
    img->handle = NULL;
}

void paint_image_draw(Canvas *cv, const PaintImage *img, int w, int h, int x, int y)
{
    if (!img->handle) return;
    paint_image_draw_scaled(cv, img, w, h, (Rect){x, y, w, h});
}

void paint_image_draw_scaled(Canvas *cv, const PaintImage *img, int w, int h, Rect dst)
{
    if (!img->handle) return;
    put(cv, (DrawCmd){.op = DRAW_IMAGE, .a = 255, .r = dst, .x2 = w, .y2 = h, .img = img});
}
