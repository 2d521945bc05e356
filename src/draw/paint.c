// paint.c — the SDL backend of paint.h: every primitive is SDL_Renderer calls,
// text is the cached textures of text.h.
#include "paint.h"

#include "paint_vec.h"

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
    .pad_ink = {150, 150, 156},
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

void paint_corner_mark(Canvas *cv, int x, int y, int w, int n)
{
    // rows of a staircase: row k spans the right n − k pixels (white one pixel wider)
    for (int k = 0; k < n + 1; k++) paint_fill(cv, THEME.white, 255, x + w - (n + 1 - k), y + k, n + 1 - k, 1);
    for (int k = 0; k < n - 1; k++) paint_fill(cv, THEME.changed, 255, x + w - (n - 1 - k), y + k, n - 1 - k, 1);
}

#define IMAGE_ROUND 64 // images grow in steps of this many pixels

static SDL_Color sdl_color(Rgb c, uint8_t a) { return (SDL_Color){c.r, c.g, c.b, a}; }

static SDL_Rect sdl_rect(Rect q) { return (SDL_Rect){q.x, q.y, q.w, q.h}; }

int paint_px(float s, float base)
{
    int p = (int)lrintf(base * s);
    return p < 1 ? 1 : p;
}

void paint_fill(Canvas *cv, Rgb col, uint8_t a, int x, int y, int w, int h)
{
    if (w <= 0 || h <= 0) return;
    if (cv->vec) {
        paint_vec_fill(cv->vec, col, a, x, y, w, h);
        return;
    }
    SDL_SetRenderDrawBlendMode(cv->r, a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(cv->r, col.r, col.g, col.b, a);
    SDL_Rect q = {x, y, w, h};
    SDL_RenderFillRect(cv->r, &q);
}

void paint_frame(Canvas *cv, Rgb col, uint8_t a, int x, int y, int w, int h, int t)
{
    paint_fill(cv, col, a, x, y, w, t);
    paint_fill(cv, col, a, x, y + h - t, w, t);
    paint_fill(cv, col, a, x, y + t, t, h - 2 * t);
    paint_fill(cv, col, a, x + w - t, y + t, t, h - 2 * t);
}

void paint_hatch(Canvas *cv, int x, int y, int w, int h, uint8_t a, float s)
{
    if (w < 16 || h < 16) return;
    if (cv->vec) {
        paint_vec_push(cv->vec, (Rect){x, y, w, h});
        int m = w < h ? w : h;
        int step = m / 5 < 5 ? 5 : m / 5;
        int th = s >= 1.5f ? 2 : 1;
        for (int t = (int)(0.4f * (float)m); t < w + h; t += step)
            for (int k = 0; k < th; k++)
                paint_vec_line(cv->vec, colormap_masked_hatch(), a, x + t + k - h, y + h, x + t + k, y, 1);
        paint_vec_pop(cv->vec);
        return;
    }
    SDL_Rect outer, clip = {x, y, w, h};
    bool clipped = SDL_RenderIsClipEnabled(cv->r);
    if (clipped) {
        SDL_RenderGetClipRect(cv->r, &outer);
        if (!SDL_IntersectRect(&clip, &outer, &clip)) return;
    }
    SDL_RenderSetClipRect(cv->r, &clip);
    SDL_SetRenderDrawBlendMode(cv->r, a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    Rgb hc = colormap_masked_hatch();
    SDL_SetRenderDrawColor(cv->r, hc.r, hc.g, hc.b, a);
    int m = w < h ? w : h;
    int step = m / 5 < 5 ? 5 : m / 5;
    int th = s >= 1.5f ? 2 : 1;
    for (int t = (int)(0.4f * (float)m); t < w + h; t += step)
        for (int k = 0; k < th; k++) SDL_RenderDrawLine(cv->r, x + t + k - h, y + h, x + t + k, y);
    SDL_RenderSetClipRect(cv->r, clipped ? &outer : NULL);
}

void paint_clip(Canvas *cv, const Rect *q)
{
    if (cv->vec) {
        paint_vec_clip(cv->vec, q);
        return;
    }
    if (!q) {
        SDL_RenderSetClipRect(cv->r, NULL);
        return;
    }
    SDL_Rect s = sdl_rect(*q);
    SDL_RenderSetClipRect(cv->r, &s);
}

void paint_size(Canvas *cv, int *w, int *h)
{
    *w = 0, *h = 0;
    if (cv->vec) {
        paint_vec_size(cv->vec, w, h);
        return;
    }
    SDL_GetRendererOutputSize(cv->r, w, h);
}

void paint_clear(Canvas *cv, Rgb col)
{
    if (cv->vec) {
        int w, h;
        paint_vec_size(cv->vec, &w, &h);
        paint_vec_clip(cv->vec, NULL);
        paint_vec_fill(cv->vec, col, 255, 0, 0, w, h);
        return;
    }
    SDL_SetRenderDrawBlendMode(cv->r, SDL_BLENDMODE_NONE);
    SDL_SetRenderDrawColor(cv->r, col.r, col.g, col.b, 255);
    SDL_RenderClear(cv->r);
}

// ---- text ------------------------------------------------------------------------

void paint_text_size(Canvas *cv, FontFace face, int px, const char *s, int *w, int *h)
{
    text_size(cv->fonts, cv->r, face, px, s, w, h);
}

// ---- text through the vector backend: the runs text.c lays out, where the
// SDL path puts their texture.

typedef struct VecText {
    PaintVec *vec;
    int x, y;
    Rgb col;
    uint8_t a;
} VecText;

static void vec_run(const TextRun *run, void *ctx)
{
    const VecText *t = ctx;
    paint_vec_text(t->vec, run, t->x, t->y, t->col, t->a);
}

// The block of s (wrapped at wrap_w) with its top-left at (x, y).
static void vec_block(Canvas *cv, FontFace face, int px, int wrap_w, Rgb col, uint8_t a, int x, int y, const char *s)
{
    VecText t = {cv->vec, x, y, col, a};
    text_runs(cv->fonts, face, px, wrap_w, s, vec_run, &t);
}

int paint_text(Canvas *cv, FontFace face, int px, Rgb col, uint8_t a, int x, int y, TextAlign align,
               const char *s)
{
    if (cv->vec) {
        int w = 0, h = 0;
        if (!text_block_size(cv->fonts, cv->r, face, px, 0, s, &w, &h)) return 0;
        if (align == ALIGN_CENTER) x -= w / 2;
        if (align == ALIGN_RIGHT) x -= w;
        vec_block(cv, face, px, 0, col, a, x, y, s);
        return w;
    }
    return text_draw(cv->fonts, cv->r, face, px, sdl_color(col, a), x, y, align, s);
}

void paint_text_centered(Canvas *cv, FontFace face, int px, Rgb col, uint8_t a, Rect box, const char *s)
{
    if (cv->vec) {
        int w = 0, h = 0;
        if (text_block_size(cv->fonts, cv->r, face, px, 0, s, &w, &h))
            vec_block(cv, face, px, 0, col, a, box.x + (box.w - w) / 2, box.y + (box.h - h) / 2, s);
        return;
    }
    text_draw_centered(cv->fonts, cv->r, face, px, sdl_color(col, a), sdl_rect(box), s);
}

int paint_text_wrapped(Canvas *cv, FontFace face, int px, int min_px, Rgb col, uint8_t a, Rect box,
                       const char *s)
{
    if (cv->vec) { // as text_draw_wrapped: the size that fits, cropped to the box
        int w = 0, h = 0;
        if (px < min_px) return 0;
        int fit = px;
        for (; px >= min_px; px -= 2) {
            fit = px;
            if (!text_block_size(cv->fonts, cv->r, face, px, box.w, s, &w, &h) || h <= box.h) break;
        }
        if (!text_block_size(cv->fonts, cv->r, face, fit, box.w, s, &w, &h)) return 0;
        // cropped to the box's height; its lines were wrapped to its width, which a
        // viewer's own font metrics may stretch a little: not cropped there
        int ch = h < box.h ? h : box.h;
        paint_vec_push(cv->vec, (Rect){box.x, box.y, box.w + fit, ch});
        vec_block(cv, face, fit, box.w, col, a, box.x, box.y, s);
        paint_vec_pop(cv->vec);
        return ch;
    }
    return text_draw_wrapped(cv->fonts, cv->r, face, px, min_px, sdl_color(col, a), sdl_rect(box), s);
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
    if (cv->vec) {
        vec_block(cv, face, px, wrap_w, col, a, x, y, s);
        return;
    }
    text_draw_block(cv->fonts, cv->r, face, px, wrap_w, sdl_color(col, a), x, y, s);
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

static bool continuation(const char *s, size_t i) { return ((unsigned char)s[i] & 0xC0) == 0x80; }

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

int paint_image_reserve(Canvas *cv, PaintImage *img, int w, int h)
{
    if (img->handle && img->w >= w && img->h >= h) return 0;
    paint_image_free(img);
    int tw = (w + IMAGE_ROUND - 1) / IMAGE_ROUND * IMAGE_ROUND, th = (h + IMAGE_ROUND - 1) / IMAGE_ROUND * IMAGE_ROUND;
    // (a failed attempt left w = h = 0)
    if (img->w > tw) tw = img->w;
    if (img->h > th) th = img->h;
    if (cv->vec) { // pixels in memory, embedded when drawn
        void *px = malloc((size_t)tw * (size_t)th * 4);
        if (!px) {
            img->w = img->h = 0;
            return -1;
        }
        img->handle = px, img->w = tw, img->h = th, img->mem = true;
        return 1;
    }
    SDL_Texture *t = SDL_CreateTexture(cv->r, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING, tw, th);
    if (!t) {
        img->w = img->h = 0;
        return -1;
    }
    SDL_SetTextureBlendMode(t, SDL_BLENDMODE_NONE);
    SDL_SetTextureScaleMode(t, SDL_ScaleModeNearest);
    img->handle = t, img->w = tw, img->h = th, img->mem = false;
    return 1;
}

bool paint_image_fill(PaintImage *img, int w, int h, PaintPixelsFn fill, const void *ctx)
{
    if (img->mem) {
        if (!img->handle) return false;
        fill(img->handle, img->w * 4, ctx);
        return true;
    }
    void *px;
    int pitch;
    SDL_Rect area = {0, 0, w, h};
    if (!img->handle || SDL_LockTexture(img->handle, &area, &px, &pitch) != 0) return false;
    fill(px, pitch, ctx);
    SDL_UnlockTexture(img->handle);
    return true;
}

void paint_image_draw(Canvas *cv, const PaintImage *img, int w, int h, int x, int y)
{
    if (!img->handle) return;
    if (img->mem) {
        if (cv->vec) paint_vec_image(cv->vec, img->handle, img->w * 4, w, h, x, y);
        return;
    }
    SDL_RenderCopy(cv->r, img->handle, &(SDL_Rect){0, 0, w, h}, &(SDL_Rect){x, y, w, h});
}

void paint_image_free(PaintImage *img)
{
    if (img->handle && img->mem) free(img->handle);
    else if (img->handle) SDL_DestroyTexture(img->handle);
    img->handle = NULL;
}
