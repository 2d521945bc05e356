// paint_sdl.c — the SDL backend of paint.h: replays a DrawList with an
// SDL_Renderer (text as the cached textures of text.h), and makes, fills and frees
// the streaming textures that hold paint.c's retained images. It calls nothing of
// paint.c: paint_flush calls it.
#include "paint.h"

#include <assert.h>
#include <stdlib.h>

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

// Whether r draws in memory with SDL's software renderer (asked once per renderer).
static bool paint_sdl_is_software(SDL_Renderer *r)
{
    static _Thread_local SDL_Renderer *asked;
    static _Thread_local bool software;
    if (r != asked) {
        SDL_RendererInfo info;
        software = SDL_GetRendererInfo(r, &info) == 0 && (info.flags & SDL_RENDERER_SOFTWARE);
        asked = r;
    }
    return software;
}

static void set_clip(Replay *p, Clip c)
{
    p->clip = c;
    SDL_RenderSetClipRect(p->r, c.on ? &c.q : NULL);
}

// SDL's software fill writes rows of 16 pixels or more with non-temporal stores, 16-byte
// aligned, then the row's rest with plain ones: its 64-byte blocks straddle cache lines and
// the plain stores land in lines the streamed ones half wrote, which costs the software
// renderer most of a compare frame (issue 41: 3 of 5 ms at 1280×720). An opaque fill there is
// drawn as columns narrower than 16 pixels (plain stores only; the same pixels).
#define FILL_STRIP_W 15

static void fill(SDL_Renderer *r, Rgb col, uint8_t a, int x, int y, int w, int h)
{
    if (w <= 0 || h <= 0) return;
    SDL_SetRenderDrawBlendMode(r, a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(r, col.r, col.g, col.b, a);
    if (a != 255 || w <= FILL_STRIP_W || !paint_sdl_is_software(r)) {
        SDL_RenderFillRect(r, &(SDL_Rect){x, y, w, h});
        return;
    }
    SDL_Rect strip[64];
    int n = 0;
    for (int sx = x; sx < x + w; sx += FILL_STRIP_W) {
        strip[n++] = (SDL_Rect){sx, y, x + w - sx < FILL_STRIP_W ? x + w - sx : FILL_STRIP_W, h};
        if (n == (int)(sizeof strip / sizeof strip[0])) SDL_RenderFillRects(r, strip, n), n = 0;
    }
    if (n) SDL_RenderFillRects(r, strip, n);
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

// ---- the textures of retained images (paint.c owns the images) -----------------------

void *paint_sdl_texture_create(SDL_Renderer *r, int w, int h)
{
    SDL_Texture *t = SDL_CreateTexture(r, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING, w, h);
    if (!t) return NULL;
    SDL_SetTextureBlendMode(t, SDL_BLENDMODE_NONE);
    SDL_SetTextureScaleMode(t, SDL_ScaleModeNearest);
    return t;
}

bool paint_sdl_texture_fill(void *tex, int w, int h, PaintPixelsFn fill_px, const void *ctx)
{
    void *px;
    int pitch;
    SDL_Rect area = {0, 0, w, h};
    if (!tex || SDL_LockTexture(tex, &area, &px, &pitch) != 0) return false;
    fill_px(px, pitch, ctx);
    SDL_UnlockTexture(tex);
    return true;
}

void paint_sdl_texture_free(void *tex) { SDL_DestroyTexture(tex); }
