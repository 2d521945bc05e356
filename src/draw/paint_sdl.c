// paint_sdl.c — the SDL backend of paint.h: replays a DrawList with an
// SDL_Renderer (text as the cached textures of text.h), and keeps retained
// images as streaming textures.
#include "paint.h"

#include <assert.h>
#include <stdlib.h>

#define IMAGE_ROUND 64 // images grow in steps of this many pixels

typedef struct Clip {
    bool on; // a clip rectangle is in force
    SDL_Rect q;
} Clip;

typedef struct Replay {
    SDL_Renderer *r;
    Clip clip;         // in force now
    DrawClips *open;   // the pushes open (kept in the list across flushes)
    int skip;          // how many open pushes left nothing to draw in
} Replay;

static void set_clip(Replay *p, Clip c)
{
    p->clip = c;
    SDL_RenderSetClipRect(p->r, c.on ? &c.q : NULL);
}

static void fill(SDL_Renderer *r, Rgb col, uint8_t a, int x, int y, int w, int h)
{
    if (w <= 0 || h <= 0) return;
    SDL_SetRenderDrawBlendMode(r, a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(r, col.r, col.g, col.b, a);
    SDL_RenderFillRect(r, &(SDL_Rect){x, y, w, h});
}

static void push(Replay *p, Rect q)
{
    bool empty = false;
    Clip c = {true, {q.x, q.y, q.w, q.h}};
    if (p->clip.on && !SDL_IntersectRect(&c.q, &p->clip.q, &c.q)) empty = true;
    DrawClips *o = p->open;
    assert(o->depth < DRAW_PUSH_MAX); // pushes nest a few deep (a crop inside a hatch at most)
    if (o->depth < DRAW_PUSH_MAX) {
        o->on[o->depth] = p->clip.on;
        o->before[o->depth] = (Rect){p->clip.q.x, p->clip.q.y, p->clip.q.w, p->clip.q.h};
        o->empty[o->depth] = empty;
    }
    o->depth++;
    if (empty) p->skip++;
    else set_clip(p, c);
}

static void pop(Replay *p)
{
    DrawClips *o = p->open;
    if (o->depth == 0) return;
    o->depth--;
    if (o->depth >= DRAW_PUSH_MAX) return;
    if (o->empty[o->depth]) p->skip--;
    else set_clip(p, (Clip){o->on[o->depth], {o->before[o->depth].x, o->before[o->depth].y, o->before[o->depth].w,
                                             o->before[o->depth].h}});
}

static void text(Replay *p, Fonts *fonts, const DrawCmd *c, const char *s)
{
    int w, h;
    SDL_Color sc = {c->col.r, c->col.g, c->col.b, c->a};
    SDL_Texture *t = text_texture(fonts, p->r, c->face, c->px, c->wrap_w, sc, s, &w, &h);
    if (!t) return;
    if (c->r.w > 0 && c->r.h > 0) { // cropped to the box, never scaled
        w = w < c->r.w ? w : c->r.w;
        h = h < c->r.h ? h : c->r.h;
    }
    // the colour is in the texture: only a translucent draw (a fade) modulates
    SDL_SetTextureAlphaMod(t, c->a);
    SDL_RenderCopy(p->r, t, &(SDL_Rect){0, 0, w, h}, &(SDL_Rect){c->r.x, c->r.y, w, h});
}

void paint_sdl_replay(SDL_Renderer *r, Fonts *fonts, DrawList *dl)
{
    Replay p = {.r = r, .open = &dl->clips};
    p.clip.on = SDL_RenderIsClipEnabled(r);
    if (p.clip.on) SDL_RenderGetClipRect(r, &p.clip.q);
    for (int k = 0; k < dl->clips.depth && k < DRAW_PUSH_MAX; k++) p.skip += dl->clips.empty[k];
    for (size_t i = 0; i < dl->n; i++) {
        const DrawCmd *c = &dl->cmd[i];
        if (p.skip > 0 && c->op != DRAW_PUSH && c->op != DRAW_POP) continue;
        switch (c->op) {
        case DRAW_CLEAR:
            SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
            SDL_SetRenderDrawColor(r, c->col.r, c->col.g, c->col.b, 255);
            SDL_RenderClear(r);
            break;
        case DRAW_CLIP: set_clip(&p, (Clip){!c->none, {c->r.x, c->r.y, c->r.w, c->r.h}}); break;
        case DRAW_PUSH: push(&p, c->r); break;
        case DRAW_POP: pop(&p); break;
        case DRAW_FILL: fill(r, c->col, c->a, c->r.x, c->r.y, c->r.w, c->r.h); break;
        case DRAW_FRAME: {
            const Rect q = c->r;
            int t = c->t;
            fill(r, c->col, c->a, q.x, q.y, q.w, t);
            fill(r, c->col, c->a, q.x, q.y + q.h - t, q.w, t);
            fill(r, c->col, c->a, q.x, q.y + t, t, q.h - 2 * t);
            fill(r, c->col, c->a, q.x + q.w - t, q.y + t, t, q.h - 2 * t);
            break;
        }
        case DRAW_LINE:
            SDL_SetRenderDrawBlendMode(r, c->a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
            SDL_SetRenderDrawColor(r, c->col.r, c->col.g, c->col.b, c->a);
            SDL_RenderDrawLine(r, c->r.x, c->r.y, c->x2, c->y2);
            break;
        case DRAW_TEXT: text(&p, fonts, c, draw_list_str(dl, c)); break;
        case DRAW_IMAGE:
            if (c->img->handle && !c->img->mem)
                SDL_RenderCopy(r, c->img->handle, &(SDL_Rect){0, 0, c->x2, c->y2},
                               &(SDL_Rect){c->r.x, c->r.y, c->r.w, c->r.h});
            break;
        }
    }
}

// ---- retained images -------------------------------------------------------------

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

bool paint_image_fill(Canvas *cv, PaintImage *img, int w, int h, PaintPixelsFn fill_px, const void *ctx)
{
    settle(cv, img);
    if (img->mem) {
        if (!img->handle) return false;
        fill_px(img->handle, img->w * 4, ctx);
        return true;
    }
    void *px;
    int pitch;
    SDL_Rect area = {0, 0, w, h};
    if (!img->handle || SDL_LockTexture(img->handle, &area, &px, &pitch) != 0) return false;
    fill_px(px, pitch, ctx);
    SDL_UnlockTexture(img->handle);
    return true;
}

void paint_image_free(PaintImage *img)
{
    if (img->handle && img->mem) free(img->handle);
    else if (img->handle) SDL_DestroyTexture(img->handle);
    img->handle = NULL;
}
