// picker_draw.c — the lesson picker overlay and its button (see picker_draw.h).
#include "picker_draw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "picker.h"

static const SDL_Color INK = {28, 28, 30, 255};
static const SDL_Color MUTED = {96, 96, 100, 255};
static const SDL_Color GREYED = {150, 150, 152, 255};
static const SDL_Color ERROR_INK = {176, 40, 32, 255};
static const SDL_Color ACCENT = {0, 90, 170, 255};
static const SDL_Color ACCENT_LIGHT = {214, 228, 244, 255};
static const SDL_Color WHITE = {255, 255, 255, 255};

static void fill(SDL_Renderer *r, SDL_Color c, Rect q)
{
    if (q.w <= 0 || q.h <= 0) return;
    SDL_SetRenderDrawBlendMode(r, c.a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(r, c.r, c.g, c.b, c.a);
    SDL_RenderFillRect(r, &(SDL_Rect){q.x, q.y, q.w, q.h});
}

static void frame(SDL_Renderer *r, SDL_Color c, Rect q, int t)
{
    fill(r, c, (Rect){q.x, q.y, q.w, t});
    fill(r, c, (Rect){q.x, q.y + q.h - t, q.w, t});
    fill(r, c, (Rect){q.x, q.y, t, q.h});
    fill(r, c, (Rect){q.x + q.w - t, q.y, t, q.h});
}

static int scaled(const Layout *L, float base)
{
    int v = (int)lrintf(base * L->s);
    return v < 1 ? 1 : v;
}

int picker_button_reserve(const Layout *L, const View *v)
{
    Rect b;
    if (!v->picker || !picker_button_rect(L, &b)) return 0;
    return b.w + scaled(L, 16);
}

void picker_draw_button(SDL_Renderer *r, Fonts *f, const Layout *L, const View *v)
{
    Rect b;
    if (!v->picker || !picker_button_rect(L, &b)) return;
    bool on = v->picker->open;
    fill(r, on ? ACCENT : ACCENT_LIGHT, b);
    SDL_Rect box = {b.x, b.y, b.w, b.h};
    SDL_RenderSetClipRect(r, &box);
    text_draw_centered(f, r, FONT_BOLD, L->px_small, on ? WHITE : ACCENT, box, i18n_get(v->lang, "ui.lessons"));
    SDL_RenderSetClipRect(r, NULL);
}

// Text cut to width w with "…" (UTF-8 safe), into buf.
static const char *fit(Fonts *f, SDL_Renderer *r, FontFace face, int px, int w, const char *s, char *buf,
                       size_t n)
{
    int tw, th;
    text_size(f, r, face, px, s, &tw, &th);
    if (tw <= w) return s;
    snprintf(buf, n, "%s", s);
    size_t len = strlen(buf);
    if (tw > 0 && (size_t)w < (size_t)tw) len = len * (size_t)w / (size_t)tw + 4; // a first guess
    if (len > strlen(buf)) len = strlen(buf);
    while (len > 0) {
        do len--; while (len > 0 && ((unsigned char)buf[len] & 0xC0) == 0x80);
        snprintf(buf + len, n - len, "…");
        text_size(f, r, face, px, buf, &tw, &th);
        if (tw <= w) break;
    }
    return buf;
}

void picker_draw(SDL_Renderer *r, Fonts *f, const Layout *L, const View *v)
{
    const Picker *p = v->picker;
    if (!p || !p->open) return;
    PickerLayout pl;
    picker_layout(p, &pl, L->w, L->h, L->s);
    fill(r, (SDL_Color){0, 0, 0, 150}, (Rect){0, 0, L->w, L->h});
    fill(r, WHITE, pl.box);
    frame(r, ACCENT, pl.box, scaled(L, 3));
    SDL_RenderSetClipRect(r, &(SDL_Rect){pl.box.x, pl.box.y, pl.box.w, pl.box.h});
    text_draw(f, r, FONT_BOLD, pl.px_title, ACCENT, pl.title.x, pl.title.y, ALIGN_LEFT,
              i18n_get(v->lang, "picker.title"));
    char line[1400], cut[1400];
    if (p->n == 0) {
        const char *args[] = {p->looked_in};
        i18n_fmt(line, sizeof line, v->lang, "picker.empty", 1, args);
        SDL_Rect box = {pl.title.x, pl.title.y + pl.title.h + scaled(L, 10), pl.title.w, pl.row_h * 2};
        text_draw_wrapped(f, r, FONT_SANS, pl.px_row, pl.px_small, MUTED, box, line);
    }
    int pad = scaled(L, 10);
    for (int i = 0; i < pl.n_rows; i++) {
        int k = pl.first + i;
        const PickerItem *it = &p->items[k];
        Rect q = pl.row[i];
        bool sel = k == p->sel, bad = it->error != NULL;
        if (sel) fill(r, bad ? (SDL_Color){236, 236, 236, 255} : ACCENT_LIGHT, q);
        if (sel) fill(r, bad ? GREYED : ACCENT, (Rect){q.x, q.y, scaled(L, 5), q.h});
        int x = q.x + pad + scaled(L, 4), w = q.w - 2 * pad - scaled(L, 4);
        int y1 = q.y + scaled(L, 5), y2 = y1 + pl.px_row * 13 / 10;
        // line 1: the title (greyed when invalid), and "current" at the right
        int cw = 0;
        if (k == p->current) {
            int th;
            const char *cur = i18n_get(v->lang, "picker.current");
            text_size(f, r, FONT_SANS, pl.px_small, cur, &cw, &th);
            text_draw(f, r, FONT_SANS, pl.px_small, ACCENT, x + w, y1 + (pl.px_row - pl.px_small) / 2, ALIGN_RIGHT,
                      cur);
            cw += pad;
        }
        const char *title = picker_title(it, v->lang);
        text_draw(f, r, sel && !bad ? FONT_BOLD : FONT_SANS, pl.px_row, bad ? GREYED : INK, x, y1, ALIGN_LEFT,
                  fit(f, r, sel && !bad ? FONT_BOLD : FONT_SANS, pl.px_row, w - cw, title, cut, sizeof cut));
        // line 2: the file, or the file and why it cannot be opened
        if (bad) {
            const char *args[] = {it->error};
            i18n_fmt(line, sizeof line, v->lang, "picker.invalid", 1, args);
            text_draw(f, r, FONT_SANS, pl.px_small, ERROR_INK, x, y2, ALIGN_LEFT,
                      fit(f, r, FONT_SANS, pl.px_small, w, line, cut, sizeof cut));
        } else {
            text_draw(f, r, FONT_SANS, pl.px_small, MUTED, x, y2, ALIGN_LEFT,
                      fit(f, r, FONT_SANS, pl.px_small, w, it->shown, cut, sizeof cut));
        }
    }
    // scroll marks when there is more above / below
    if (pl.first > 0)
        text_draw(f, r, FONT_SANS, pl.px_small, MUTED, pl.box.x + pl.box.w - scaled(L, 24), pl.title.y, ALIGN_LEFT, "▲");
    if (pl.first + pl.n_rows < p->n)
        text_draw(f, r, FONT_SANS, pl.px_small, MUTED, pl.box.x + pl.box.w - scaled(L, 24), pl.hint.y, ALIGN_LEFT, "▼");
    text_draw(f, r, FONT_SANS, pl.px_small, MUTED, pl.hint.x, pl.hint.y, ALIGN_LEFT,
              fit(f, r, FONT_SANS, pl.px_small, pl.hint.w - scaled(L, 30), i18n_get(v->lang, "picker.hint"), cut,
                  sizeof cut));
    SDL_RenderSetClipRect(r, NULL);
}
