// presenter.c — the presenter window: what the audience sees (small), the next
// stage, narration + teacher's notes, the step list, elapsed time and the clock.
//
// Both small frames are drawn by render_frame into target textures of this
// window's renderer (the single drawing path) at the audience's size (up to
// PRES_COPY_MAX_W wide: a 4K projector's frame too; half a layout differs in a few
// decimals), then scaled down: the copy is the audience's frame, the same numbers
// with the same decimals, the same panels and parts, never a layout of its own that
// would round differently or drop a panel's numbers; the rest is paint primitives.
// Nothing here decides what a key does: the app does, for both windows.
#include "presenter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heatmap.h"
#include "i18n.h"
#include "layout.h"
#include "paint.h"
#include "playback.h"
#include "render.h"
#include "scene.h"
#include "text.h"

#define PRES_TEXT_MAX 4400
#define PRES_COPY_MAX_W 4096 // the small frames are drawn at the audience's size up to this width

typedef struct Presenter Presenter;
static bool presenter_init(Presenter *p, const char *font_path, Lang lang, char *err, size_t err_len);

typedef struct Thumb {
    SDL_Texture *tex;
    PaintImage img;      // tex, as paint.h draws it (not owned)
    int w, h;
    HeatmapCache *heatmaps;
    bool valid;          // tex holds `drawn` (drawn again only when it changes: a settled frame once)
    View drawn;
    const Trace *drawn_tr;
    Overlays drawn_ov;   // the audience's copy: its overlays, pins included, as drawn
    Pin drawn_pins[PINS_MAX];
} Thumb;

struct Presenter {
    SDL_Window *win;           // NULL: offscreen (presenter_create_offscreen)
    SDL_Renderer *r;
    bool own_renderer;
    Fonts *fonts;
    Thumb now, next;
    DrawList draw;             // the commands of the window's frame (paint.h)
    Uint64 start_ms;
    unsigned gen;
    Rect now_box;              // where the small frame was drawn (output pixels)
    bool point_in;             // the pointer is over it: the point of the laser / spotlight
    float point_x, point_y;    // as a fraction of the frame
    Rect scrub_box, scrub_track; // the scrub bar under the small frame
    bool click;                // a click on the small frame at (click_x, click_y) in it, to hit-test
    int click_x, click_y;
    bool pin;                  // the cell it hit, for the app to pin (presenter_take_pin)
    int pin_stage, pin_panel, pin_row, pin_col;
    bool scrub_drag, scrub_new;
    float scrub_p;
    char text[PRES_TEXT_MAX];  // narration of the stage on screen
};

static void thumb_free(Thumb *t)
{
    if (t->tex) SDL_DestroyTexture(t->tex);
    heatmap_cache_destroy(t->heatmaps);
    memset(t, 0, sizeof *t);
}

PresenterPlace presenter_place(int screen_w, int screen_h, int aw, int ah, int pw, int ph)
{
    enum { GAP = 8, MIN_W = 640, MIN_H = 400 };
    PresenterPlace pl = {0, 0, aw, ah, 0, 0, pw, ph};
    if (aw + GAP + pw > screen_w) pw = screen_w - aw - GAP; // the presenter window narrower
    if (pw < MIN_W) {                                       // still too narrow: the audience's too
        pw = screen_w >= 2 * MIN_W + GAP ? MIN_W : screen_w / 2 - GAP;
        int w = screen_w - pw - GAP;
        if (w < aw) pl.ah = (int)((long)ah * w / aw), pl.aw = w;
    }
    if (pl.ah > screen_h) pl.aw = (int)((long)pl.aw * screen_h / pl.ah), pl.ah = screen_h;
    ph = ph > screen_h ? screen_h : ph < MIN_H && screen_h >= MIN_H ? MIN_H : ph;
    pl.pw = pw, pl.ph = ph;
    int total = pl.aw + GAP + pl.pw; // the pair centred across the screen, each centred down it
    pl.ax = (screen_w - total) / 2, pl.ax = pl.ax < 0 ? 0 : pl.ax;
    pl.px = pl.ax + pl.aw + GAP;
    pl.ay = (screen_h - pl.ah) / 2, pl.py = (screen_h - pl.ph) / 2;
    return pl;
}

Presenter *presenter_create(SDL_Window *audience, const char *font_path, Lang lang, int w, int h, char *err,
                            size_t err_len)
{
    Presenter *p = SDL_calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    int displays = SDL_GetNumVideoDisplays();
    int here = audience ? SDL_GetWindowDisplayIndex(audience) : 0;
    if (here < 0) here = 0;
    int mine = displays >= 2 ? here : 0;   // the teacher keeps the display the app opened on
    if (displays >= 2 && audience) {
        // the audience on another display, fullscreen
        int other = mine == 0 ? 1 : 0;
        SDL_SetWindowFullscreen(audience, 0);
        SDL_SetWindowPosition(audience, (int)SDL_WINDOWPOS_CENTERED_DISPLAY(other),
                              (int)SDL_WINDOWPOS_CENTERED_DISPLAY(other));
        SDL_SetWindowFullscreen(audience, SDL_WINDOW_FULLSCREEN_DESKTOP);
    }
    int px = (int)SDL_WINDOWPOS_CENTERED_DISPLAY(mine), py = px;
    if (displays < 2 && audience) { // one display: the two windows side by side, never on top of each other
        int aw, ah;
        SDL_GetWindowSize(audience, &aw, &ah);
        SDL_Rect u;
        if (SDL_GetDisplayUsableBounds(0, &u) != 0) SDL_GetDisplayBounds(0, &u);
        if (!(SDL_GetWindowFlags(audience) & SDL_WINDOW_FULLSCREEN) && u.w > 0 && u.h > 0) {
            PresenterPlace pl = presenter_place(u.w, u.h, aw, ah, w, h);
            if (pl.aw != aw || pl.ah != ah) SDL_SetWindowSize(audience, pl.aw, pl.ah);
            SDL_SetWindowPosition(audience, u.x + pl.ax, u.y + pl.ay);
            px = u.x + pl.px, py = u.y + pl.py, w = pl.pw, h = pl.ph;
        }
    }
    p->win = SDL_CreateWindow(i18n_get(lang, "pres.title"), px, py, w, h, SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (p->win) {
        SDL_SetWindowMinimumSize(p->win, 640, 400);
        p->r = SDL_CreateRenderer(p->win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_TARGETTEXTURE);
        if (!p->r) p->r = SDL_CreateRenderer(p->win, -1, SDL_RENDERER_SOFTWARE);
    }
    if (!p->r) {
        snprintf(err, err_len, "cannot open the presenter window: %s", SDL_GetError());
        presenter_destroy(p);
        return NULL;
    }
    p->own_renderer = true;
    return presenter_init(p, font_path, lang, err, err_len) ? p : NULL;
}

// The fonts and caches of p, whose renderer is set; frees p on failure.
static bool presenter_init(Presenter *p, const char *font_path, Lang lang, char *err, size_t err_len)
{
    p->fonts = fonts_create(font_path, lang, err, err_len);
    p->now.heatmaps = heatmap_cache_create();
    p->next.heatmaps = heatmap_cache_create();
    if (!p->fonts || !p->now.heatmaps || !p->next.heatmaps) {
        if (p->fonts) snprintf(err, err_len, "out of memory");
        presenter_destroy(p);
        return false;
    }
    p->start_ms = SDL_GetTicks64();
    return true;
}

Presenter *presenter_create_offscreen(SDL_Renderer *r, const char *font_path, Lang lang, char *err, size_t err_len)
{
    Presenter *p = SDL_calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    p->r = r;
    return presenter_init(p, font_path, lang, err, err_len) ? p : NULL;
}


void presenter_destroy(Presenter *p)
{
    if (!p) return;
    // textures before their renderer, the renderer before its window
    if (p->now.heatmaps) heatmap_cache_flush(p->now.heatmaps);
    if (p->next.heatmaps) heatmap_cache_flush(p->next.heatmaps);
    thumb_free(&p->now);
    thumb_free(&p->next);
    draw_list_free(&p->draw);
    if (p->fonts) fonts_flush(p->fonts);
    if (p->r && p->own_renderer) SDL_DestroyRenderer(p->r);
    if (p->win) SDL_DestroyWindow(p->win);
    fonts_destroy(p->fonts);
    SDL_free(p);
}

static Uint32 event_window(const SDL_Event *e)
{
    switch (e->type) {
    case SDL_MOUSEMOTION: return e->motion.windowID;
    case SDL_MOUSEBUTTONDOWN:
    case SDL_MOUSEBUTTONUP: return e->button.windowID;
    case SDL_MOUSEWHEEL: return e->wheel.windowID;
    case SDL_WINDOWEVENT: return e->window.windowID;
    case SDL_DROPFILE:
    case SDL_DROPBEGIN:
    case SDL_DROPCOMPLETE: return e->drop.windowID;
    default: return 0;
    }
}

bool presenter_owns_event(const Presenter *p, const SDL_Event *e)
{
    Uint32 id = event_window(e);
    return p && p->win && id != 0 && id == SDL_GetWindowID(p->win);
}

bool presenter_event(Presenter *p, const SDL_Event *e)
{
    if (e->type == SDL_MOUSEMOTION) { // over the small frame: the point on the audience's
        int ww, wh, ow, oh;
        SDL_GetWindowSize(p->win, &ww, &wh);
        SDL_GetRendererOutputSize(p->r, &ow, &oh);
        int x = ww > 0 ? e->motion.x * ow / ww : e->motion.x, y = wh > 0 ? e->motion.y * oh / wh : e->motion.y;
        Rect b = p->now_box;
        p->point_in = b.w > 0 && b.h > 0 && rect_contains(b, x, y);
        if (p->point_in) p->point_x = (float)(x - b.x) / (float)b.w, p->point_y = (float)(y - b.y) / (float)b.h;
    }
    if (e->type == SDL_MOUSEBUTTONDOWN || e->type == SDL_MOUSEMOTION) {
        int ww, wh, ow, oh;
        SDL_GetWindowSize(p->win, &ww, &wh);
        SDL_GetRendererOutputSize(p->r, &ow, &oh);
        int ex = e->type == SDL_MOUSEMOTION ? e->motion.x : e->button.x, ey = e->type == SDL_MOUSEMOTION ? e->motion.y : e->button.y;
        int x = ww > 0 ? ex * ow / ww : ex, y = wh > 0 ? ey * oh / wh : ey;
        if (e->type == SDL_MOUSEBUTTONDOWN && e->button.button == SDL_BUTTON_LEFT && rect_contains(p->scrub_box, x, y))
            p->scrub_drag = true;
        else if (e->type == SDL_MOUSEBUTTONDOWN && e->button.button == SDL_BUTTON_LEFT && rect_contains(p->now_box, x, y))
            p->click = true, p->click_x = x - p->now_box.x, p->click_y = y - p->now_box.y; // hit-tested when drawn
        if (p->scrub_drag && p->scrub_track.w > 0) {
            p->scrub_p = (float)(x - p->scrub_track.x) / (float)p->scrub_track.w;
            p->scrub_new = true;
        }
    }
    if (e->type == SDL_MOUSEBUTTONUP) p->scrub_drag = false;
    if (e->type == SDL_WINDOWEVENT && e->window.event == SDL_WINDOWEVENT_LEAVE) p->point_in = false;
    if (e->type == SDL_DROPFILE) SDL_free(e->drop.file); // lessons are dropped on the audience window
    return e->type == SDL_WINDOWEVENT && e->window.event == SDL_WINDOWEVENT_CLOSE;
}

bool presenter_take_pin(Presenter *p, int *stage, int *panel, int *row, int *col)
{
    if (!p || !p->pin) return false;
    p->pin = false;
    *stage = p->pin_stage, *panel = p->pin_panel, *row = p->pin_row, *col = p->pin_col;
    return true;
}

bool presenter_take_scrub(Presenter *p, float *progress)
{
    if (!p || !p->scrub_new) return false;
    p->scrub_new = false;
    *progress = p->scrub_p < 0.0f ? 0.0f : p->scrub_p > 1.0f ? 1.0f : p->scrub_p;
    return true;
}

bool presenter_point(const Presenter *p, float *x, float *y)
{
    if (!p || !p->point_in) return false;
    *x = p->point_x, *y = p->point_y;
    return true;
}

void presenter_flush(Presenter *p)
{
    if (!p) return;
    heatmap_cache_flush(p->now.heatmaps);
    heatmap_cache_flush(p->next.heatmaps);
    p->now.valid = p->next.valid = false;
    fonts_flush(p->fonts);
}

void presenter_set_lang(Presenter *p, Lang lang)
{
    if (!p || !p->win) return;
    SDL_SetWindowTitle(p->win, i18n_get(lang, "pres.title"));
}

void presenter_restart_clock(Presenter *p)
{
    if (p) p->start_ms = SDL_GetTicks64();
}

const char *presenter_notes(const Trace *tr, const View *v)
{
    if (!v->lesson || v->stage < 0 || v->stage >= tr->n) return NULL;
    return lesson_stage_note(v->lesson, tr, v->stage, v->lang);
}

// Renders v (with ov) into t at w×h: the same render_frame as the audience window.
static void thumb_draw(Presenter *p, Thumb *t, int w, int h, const Trace *tr, const View *v, const Overlays *ov)
{
    if (w < 16 || h < 16) return;
    if (!t->tex || t->w != w || t->h != h) {
        if (t->tex) SDL_DestroyTexture(t->tex);
        heatmap_cache_flush(t->heatmaps); // its images were drawn for the old size
        t->tex = SDL_CreateTexture(p->r, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_TARGET, w, h);
        t->w = w, t->h = h;
        t->img = (PaintImage){t->tex, w, h, false};
        if (!t->tex) return;
        SDL_SetTextureScaleMode(t->tex, SDL_ScaleModeLinear); // scaled down smoothly: text stays legible
    }
    if (SDL_SetRenderTarget(p->r, t->tex) != 0) return;
    Canvas c = {p->r, p->fonts, t->heatmaps, NULL, &p->draw};
    render_frame(&c, tr, v, ov);
    SDL_SetRenderTarget(p->r, NULL);
}

// The largest rectangle of aspect aw:ah inside box, centred horizontally, at its top.
static Rect fit_aspect(Rect box, int aw, int ah)
{
    if (aw <= 0 || ah <= 0) aw = 16, ah = 9;
    int w = box.w, h = (int)((long)box.w * ah / aw);
    if (h > box.h) h = box.h, w = (int)((long)box.h * aw / ah);
    return (Rect){box.x + (box.w - w) / 2, box.y, w, h};
}

// The step label of StepId s as the timeline shows it.
static const char *step_label(const Trace *tr, StepId s, Lang lang, char *buf, size_t n)
{
    return i18n_get(lang, scene_step_key(tr, s, buf, n));
}

static void draw_steps(Canvas *cv, Rect box, const Trace *tr, const View *v, float s)
{
    int px = paint_px(s, 17), row = paint_px(s, 26);
    paint_text(cv, FONT_BOLD, paint_px(s, 15), THEME.muted, 255, box.x, box.y, ALIGN_LEFT, i18n_get(v->lang, "pres.steps"));
    int y = box.y + paint_px(s, 24), k = 0;
    StepId cur = tr->stages[v->stage].step;
    char key[64], line[160];
    bool past = true;
    for (int i = 0; i < tr->n && y + row <= box.y + box.h; i++) {
        if (i > 0 && tr->stages[i].step == tr->stages[i - 1].step) continue;
        StepId id = tr->stages[i].step;
        bool on = id == cur;
        if (on) past = false;
        snprintf(line, sizeof line, "%d  %s", ++k, step_label(tr, id, v->lang, key, sizeof key));
        if (on) paint_fill(cv, THEME.accent, 255, box.x, y, box.w, row);
        paint_text(cv, on ? FONT_BOLD : FONT_SANS, px, on ? THEME.white : past ? THEME.muted : THEME.ink, 255,
                   box.x + paint_px(s, 8), y + (row - px * 5 / 4) / 2, ALIGN_LEFT, line);
        y += row;
    }
}

void presenter_copy_size(int audience_w, int audience_h, int *w, int *h)
{
    *w = audience_w, *h = audience_h;
    while (*w > PRES_COPY_MAX_W && *w % 2 == 0 && *h % 2 == 0) *w /= 2, *h /= 2; // (8K: half)
    if (*w > PRES_COPY_MAX_W) *h = (int)((long)*h * PRES_COPY_MAX_W / *w), *w = PRES_COPY_MAX_W;
}

bool presenter_copy_rect(const Presenter *p, int *x, int *y, int *w, int *h)
{
    if (!p || p->now_box.w <= 0) return false;
    *x = p->now_box.x, *y = p->now_box.y, *w = p->now_box.w, *h = p->now_box.h;
    return true;
}

void presenter_draw(Presenter *p, const PresenterFrame *f)
{
    const Trace *tr = f->tr;
    const View *v = f->v;
    if (f->gen != p->gen) { // the numbers changed in place: images drawn from them are stale
        heatmap_cache_flush(p->now.heatmaps);
        heatmap_cache_flush(p->next.heatmaps);
        p->next.valid = p->now.valid = false;
        p->gen = f->gen;
    }
    int w, h;
    SDL_GetRendererOutputSize(p->r, &w, &h);
    float s = (float)w / 1280.0f < (float)h / 720.0f ? (float)w / 1280.0f : (float)h / 720.0f;
    if (s < 0.5f) s = 0.5f;
    int m = paint_px(s, 14), px_head = paint_px(s, 16), px_big = paint_px(s, 30);
    Lang lang = v->lang;
    char buf[256], a1[64], a2[64];

    // the small frames first: they switch the render target
    int left_w = (w - 3 * m) * 60 / 100, right_w = w - 3 * m - left_w;
    int top = m + px_big * 3 / 2;
    Rect now_box = fit_aspect((Rect){m, top + px_head * 3 / 2, left_w, (h - top) * 52 / 100}, f->audience_w, f->audience_h);
    Rect next_box = fit_aspect((Rect){2 * m + left_w, top + px_head * 3 / 2, right_w, (h - top) * 40 / 100},
                               f->audience_w, f->audience_h);
    p->now_box = now_box;
    Overlays ov = {0};
    if (f->ov) { // what the audience sees over the frame (never the toast, picker or help)
        ov = *f->ov;
        ov.hover = false, ov.help = false, ov.toast = NULL, ov.picker = NULL, ov.lab = NULL;
        ov.export_total = 0, ov.edit_label = NULL;
        ov.pin_boxes = NULL; // the audience frame's boxes are the ones dragged
    }
    int cw, ch;
    presenter_copy_size(f->audience_w, f->audience_h, &cw, &ch);
    // drawn again only when something in it changed (a settled stage: once)
    int n_pins = ov.pins && ov.n_pins > 0 ? (ov.n_pins < PINS_MAX ? ov.n_pins : PINS_MAX) : 0;
    bool same = p->now.valid && p->now.w == cw && p->now.h == ch && p->now.drawn_tr == tr &&
                memcmp(&p->now.drawn, v, sizeof *v) == 0 && memcmp(&p->now.drawn_ov, &ov, sizeof ov) == 0 &&
                (n_pins == 0 || memcmp(p->now.drawn_pins, ov.pins, sizeof *ov.pins * (size_t)n_pins) == 0);
    if (!f->black && !same) {
        thumb_draw(p, &p->now, cw, ch, tr, v, &ov);
        p->now.valid = p->now.tex != NULL, p->now.drawn = *v, p->now.drawn_tr = tr, p->now.drawn_ov = ov;
        if (n_pins) memcpy(p->now.drawn_pins, ov.pins, sizeof *ov.pins * (size_t)n_pins);
    }
    if (p->click && now_box.w > 0 && now_box.h > 0) { // a click on the small frame: the cell under it in the frame
        p->click = false;
        Layout *L = malloc(sizeof *L);
        if (L) {
            layout_compute(L, tr, v, cw, ch);
            if (layout_hit_cell(L, p->click_x * cw / now_box.w, p->click_y * ch / now_box.h, &p->pin_panel,
                                &p->pin_row, &p->pin_col))
                p->pin = true, p->pin_stage = v->stage;
            free(L);
        }
    }
    View nv = *v;
    nv.anim = 1.0f;
    // projector mode: after a split stage's operands comes its result, then the next stage
    bool next_part = v->projector && v->part + 1 < layout_projector_parts(tr, &nv, f->audience_w, f->audience_h);
    bool has_next = next_part || v->stage + 1 < tr->n;
    if (has_next) {
        nv.stage = next_part ? v->stage : v->stage + 1, nv.part = next_part ? v->part + 1 : 0, nv.playing = false;
        view_reset_zoom(&nv);
        nv.speed = 1.0f;
        if (!p->next.valid || p->next.w != cw || p->next.h != ch || p->next.drawn_tr != tr ||
            memcmp(&p->next.drawn, &nv, sizeof nv) != 0) {
            thumb_draw(p, &p->next, cw, ch, tr, &nv, NULL);
            p->next.valid = p->next.tex != NULL, p->next.drawn = nv, p->next.drawn_tr = tr;
        }
    }

    Canvas cv = {p->r, p->fonts, NULL, NULL, &p->draw};
    paint_clear(&cv, THEME.bg);
    // top line: the lesson, the elapsed time and the clock (large: read at a glance)
    Uint64 el = (SDL_GetTicks64() - p->start_ms) / 1000;
    snprintf(a1, sizeof a1, "%02u:%02u:%02u", (unsigned)(el / 3600), (unsigned)(el / 60 % 60), (unsigned)(el % 60));
    time_t now = time(NULL);
    struct tm tmv;
    if (localtime_r(&now, &tmv)) strftime(a2, sizeof a2, "%H:%M", &tmv);
    else snprintf(a2, sizeof a2, "--:--");
    const char *ta[] = {a1, a2};
    i18n_fmt(buf, sizeof buf, lang, "pres.time", 2, ta);
    int tw = paint_text_width(&cv, FONT_BOLD, px_big, buf);
    paint_text(&cv, FONT_BOLD, px_big, THEME.ink, 255, w - m - tw, m, ALIGN_LEFT, buf);
    char fit[600];
    paint_text(&cv, FONT_BOLD, px_head, THEME.muted, 255, m, m + (px_big - px_head) / 2, ALIGN_LEFT,
               paint_fit_text(&cv, FONT_BOLD, px_head, f->title ? f->title : "", w - 3 * m - tw, fit, sizeof fit));

    // now: the audience's frame, small
    char key[64], n1[16], n2[16];
    int k = 0, n_steps = 0;
    for (int i = 0; i < tr->n; i++) {
        if (i > 0 && tr->stages[i].step == tr->stages[i - 1].step) continue;
        n_steps++;
        if (i <= v->stage) k = n_steps;
    }
    snprintf(n1, sizeof n1, "%d", k), snprintf(n2, sizeof n2, "%d", n_steps);
    const char *na[] = {n1, n2, step_label(tr, tr->stages[v->stage].step, lang, key, sizeof key)};
    i18n_fmt(buf, sizeof buf, lang, "pres.now", 3, na);
    paint_text(&cv, FONT_BOLD, px_head, THEME.accent, 255, now_box.x, top, ALIGN_LEFT, buf);
    if (f->black) {
        paint_fill(&cv, (Rgb){0, 0, 0}, 255, now_box.x, now_box.y, now_box.w, now_box.h);
        paint_text_wrapped(&cv, FONT_BOLD, px_head, 10, THEME.white, 255,
                           (Rect){now_box.x + m, now_box.y + now_box.h / 2 - px_head, now_box.w - 2 * m, now_box.h / 2},
                           i18n_get(lang, "pres.black"));
    } else if (p->now.tex) {
        paint_image_draw_scaled(&cv, &p->now.img, p->now.w, p->now.h, now_box);
    }
    paint_frame(&cv, THEME.accent, 255, now_box.x - 2, now_box.y - 2, now_box.w + 4, now_box.h + 4, 2);
    // the scrub bar of the transition under it: drag it to hold the transition anywhere
    int bar_h = paint_px(s, 22);
    p->scrub_box = (Rect){now_box.x, now_box.y + now_box.h + paint_px(s, 6), now_box.w, bar_h};
    int lab_w = paint_px(s, 96);
    p->scrub_track = (Rect){p->scrub_box.x + lab_w, p->scrub_box.y + bar_h / 2 - paint_px(s, 3), p->scrub_box.w - lab_w,
                            paint_px(s, 6)};
    {
        float sp = f->ov ? f->ov->scrub_p : v->anim;
        int frame = f->ov ? f->ov->scrub_frame : 0;
        bool held = f->ov && f->ov->scrub;
        snprintf(buf, sizeof buf, "%s %d / %d", held ? "\u275A\u275A" : "\u25B6", frame, PLAYBACK_SCRUB_FRAMES);
        paint_text(&cv, FONT_BOLD, paint_px(s, 14), held ? THEME.accent : THEME.muted, 255, p->scrub_box.x,
                   p->scrub_box.y + (bar_h - paint_px(s, 14) * 5 / 4) / 2, ALIGN_LEFT, buf);
        Rect t = p->scrub_track;
        paint_fill(&cv, THEME.slot, 255, t.x, t.y, t.w, t.h);
        int fx = t.x + (int)((sp < 0.0f ? 0.0f : sp > 1.0f ? 1.0f : sp) * (float)t.w);
        paint_fill(&cv, THEME.accent, 255, t.x, t.y, fx - t.x, t.h);
        paint_fill(&cv, THEME.ink, 255, fx - paint_px(s, 4), p->scrub_box.y + 2, paint_px(s, 8), bar_h - 4);
    }

    // next: the following stage, settled
    int rx = 2 * m + left_w;
    if (has_next) {
        const char *xa[] = {step_label(tr, tr->stages[nv.stage].step, lang, key, sizeof key)};
        i18n_fmt(buf, sizeof buf, lang, "pres.next", 1, xa);
        paint_text(&cv, FONT_BOLD, px_head, THEME.muted, 255, rx, top, ALIGN_LEFT, buf);
        if (p->next.tex) paint_image_draw_scaled(&cv, &p->next.img, p->next.w, p->next.h, next_box);
        paint_frame(&cv, THEME.slot, 255, next_box.x - 1, next_box.y - 1, next_box.w + 2, next_box.h + 2, 1);
    } else {
        paint_text(&cv, FONT_BOLD, px_head, THEME.muted, 255, rx, top, ALIGN_LEFT, i18n_get(lang, "pres.end"));
        paint_fill(&cv, THEME.narr_bg, 255, next_box.x, next_box.y, next_box.w, next_box.h);
    }

    // the step list under the preview
    Rect steps = {rx, next_box.y + next_box.h + m, right_w, h - (next_box.y + next_box.h + m) - m};
    draw_steps(&cv, steps, tr, v, s);

    // narration, then the teacher's notes (only here, never on the audience's window)
    int y = p->scrub_box.y + p->scrub_box.h + m;
    int avail = h - m - y, gap = paint_px(s, 8);
    if (avail > 4 * px_head) {
        Rect nb = {m, y, left_w, avail * 42 / 100};
        paint_fill(&cv, THEME.narr_bg, 255, nb.x, nb.y, nb.w, nb.h);
        paint_text(&cv, FONT_BOLD, paint_px(s, 14), THEME.muted, 255, nb.x + gap, nb.y + gap / 2, ALIGN_LEFT,
                   i18n_get(lang, "pres.narration"));
        int hh = paint_px(s, 14) * 3 / 2;
        paint_text_wrapped(&cv, FONT_SANS, paint_px(s, 16), 10, THEME.ink, 255,
                           (Rect){nb.x + gap, nb.y + hh, nb.w - 2 * gap, nb.h - hh - gap / 2},
                           scene_narration(tr, v, p->text, sizeof p->text));
        Rect tb = {m, nb.y + nb.h + gap, left_w, h - m - (nb.y + nb.h + gap)};
        const Rgb note_bg = {255, 246, 214}, note_edge = {214, 160, 20};
        paint_fill(&cv, note_bg, 255, tb.x, tb.y, tb.w, tb.h);
        paint_fill(&cv, note_edge, 255, tb.x, tb.y, paint_px(s, 5), tb.h);
        const char *head = i18n_get(lang, "pres.notes");
        int hw = paint_text(&cv, FONT_BOLD, paint_px(s, 14), THEME.ink, 255, tb.x + 2 * gap, tb.y + gap / 2, ALIGN_LEFT, head);
        const char *notes = presenter_notes(tr, v);
        if (notes && f->edited)
            paint_text(&cv, FONT_SANS, paint_px(s, 14), THEME.error_ink, 255, tb.x + 3 * gap + hw, tb.y + gap / 2,
                       ALIGN_LEFT, i18n_get(lang, "pres.notes_original"));
        paint_text_wrapped(&cv, FONT_SANS, paint_px(s, 21), 11, notes ? THEME.ink : THEME.muted, 255,
                           (Rect){tb.x + 2 * gap, tb.y + hh, tb.w - 3 * gap, tb.h - hh - gap / 2},
                           notes ? notes : i18n_get(lang, "pres.no_notes"));
    }
    paint_flush(&cv);
    if (p->win) SDL_RenderPresent(p->r);
}
