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

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heatmap.h"
#include "i18n.h"
#include "json_out.h"
#include "layout.h"
#include "paint.h"
#include "playback.h"
#include "recipe.h"
#include "render.h"
#include "scene.h"
#include "text.h"

#define PRES_TEXT_MAX 4400
#define PRES_COPY_MAX_W 4096 // the small frames are drawn at the audience's size up to this width
#define PRES_TEXT_MIN_PX 12  // no text in the window is smaller (the copies are pictures)
#define PRES_BODY_MIN_PX 14  // nor the narration and the notes below this
#define PRES_WIDE_MIN_W 960  // narrower: one column (presenter.h)
#define PRES_SCAN_MAX 8      // what presenter_describe lists of the texts out of place

// base px at scale s, at least min
static int pres_px(float s, float base, int min)
{
    int p = paint_px(s, base);
    return p < min ? min : p;
}

// The narration's or the notes' box as last drawn: wrapped, scrolled by whole lines.
typedef struct PresText {
    Rect box, area;      // the box; where its lines are (whole lines only)
    int px;              // the text's size
    int scroll, max;     // lines scrolled down (the wheel over it), the most there is
    int lines_shown;     // lines of text visible
    int text_h;          // the whole text's height wrapped
} PresText;

// What presenter_describe reports of the last frame's text (drawn or not).
typedef struct PresScan {
    int texts, min_px;              // text commands visible, the smallest size among them
    int n_out, n_cut;               // outside the window; cropped by their own box
    char out[PRES_SCAN_MAX][120];   // the first of either, as "text @ x,y wxh"
    char cut[PRES_SCAN_MAX][120];
} PresScan;

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
    PresText narr, notes;      // their boxes as last drawn (the wheel scrolls them)
    const char *narr_text;     // the narration drawn (in text, or the lesson's)
    int text_stage;            // the stage they were scrolled on (another: back to the top)
    const Trace *text_tr;
    int mouse_x, mouse_y;      // the pointer (output pixels): where the wheel scrolls
    bool wide;                 // the last frame's layout: two columns
    Rect clock_box, title_box; // where the top line was drawn
    PresScan *scan;            // presenter_describe: the frame's text checked (else NULL)
};

static void thumb_free(Thumb *t)
{
    if (t->tex) SDL_DestroyTexture(t->tex);
    heatmap_cache_destroy(t->heatmaps);
    memset(t, 0, sizeof *t);
}

PresenterPlace presenter_place(int screen_w, int screen_h, int aw, int ah, int pw, int ph)
{
    enum { GAP = 8 };
    PresenterPlace pl = {0, 0, aw, ah, 0, 0, pw, ph};
    if (pl.ah > screen_h) pl.ah = screen_h;
    int room = screen_w - pl.aw - GAP; // beside the audience window as it is
    if (room >= PRESENTER_MIN_W) {
        pl.pw = pw < room ? pw : room;
    } else { // the presenter window at its narrowest; the audience's narrower, its height kept
        pl.pw = PRESENTER_MIN_W;
        pl.aw = screen_w - GAP - pl.pw;
        if (pl.aw < PRESENTER_AUDIENCE_MIN_W) { // a small screen: a third for the presenter
            pl.pw = screen_w / 3 > 2 * GAP ? screen_w / 3 : 2 * GAP;
            pl.aw = screen_w - GAP - pl.pw > 1 ? screen_w - GAP - pl.pw : 1;
        }
    }
    pl.ph = ph > screen_h ? screen_h : ph < PRESENTER_MIN_H && screen_h >= PRESENTER_MIN_H ? PRESENTER_MIN_H : ph;
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
        SDL_SetWindowMinimumSize(p->win, w < PRESENTER_MIN_W ? w : PRESENTER_MIN_W, PRESENTER_MIN_H);
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
    if (e->type == SDL_MOUSEMOTION) { // where the wheel scrolls
        int ww, wh, ow, oh;
        SDL_GetWindowSize(p->win, &ww, &wh);
        SDL_GetRendererOutputSize(p->r, &ow, &oh);
        p->mouse_x = ww > 0 ? e->motion.x * ow / ww : e->motion.x, p->mouse_y = wh > 0 ? e->motion.y * oh / wh : e->motion.y;
    }
    if (e->type == SDL_MOUSEWHEEL) { // the narration or the notes under the pointer: 3 lines a notch
        int dy = e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? e->wheel.y : -e->wheel.y;
        PresText *t = rect_contains(p->narr.box, p->mouse_x, p->mouse_y)    ? &p->narr
                      : rect_contains(p->notes.box, p->mouse_x, p->mouse_y) ? &p->notes
                                                                            : NULL;
        if (t) t->scroll += 3 * dy; // (kept within the text when drawn)
    }
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
    assert(v->stage >= 0 && v->stage < tr->n); // the window's stage, or describe's loop over the stages
    if (!v->lesson) return NULL;
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
    int px = pres_px(s, 17, PRES_TEXT_MIN_PX), row = px * 3 / 2 > paint_px(s, 26) ? px * 3 / 2 : paint_px(s, 26);
    int head = pres_px(s, 15, PRES_TEXT_MIN_PX);
    paint_text(cv, FONT_BOLD, head, THEME.muted, 255, box.x, box.y, ALIGN_LEFT, i18n_get(v->lang, "pres.steps"));
    int y = box.y + head * 8 / 5, k = 0;
    StepId cur = tr->stages[v->stage].step;
    char key[64], line[160], fit[200];
    bool past = true;
    for (int i = 0; i < tr->n && y + row <= box.y + box.h; i++) {
        if (i > 0 && tr->stages[i].step == tr->stages[i - 1].step) continue;
        StepId id = tr->stages[i].step;
        bool on = id == cur;
        if (on) past = false;
        snprintf(line, sizeof line, "%d  %s", ++k, step_label(tr, id, v->lang, key, sizeof key));
        if (on) paint_fill(cv, THEME.accent, 255, box.x, y, box.w, row);
        int x = box.x + paint_px(s, 8);
        paint_text(cv, on ? FONT_BOLD : FONT_SANS, px, on ? THEME.white : past ? THEME.muted : THEME.ink, 255, x,
                   y + (row - px * 5 / 4) / 2, ALIGN_LEFT,
                   paint_fit_text(cv, on ? FONT_BOLD : FONT_SANS, px, line, box.x + box.w - x, fit, sizeof fit));
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

// Where the parts of the presenter window go (output pixels). Wide (two columns): the
// audience's copy, its scrub bar, the narration and the notes on the left; the next
// stage and the step list on the right. Narrow (one column: a presenter window beside
// the audience's on one laptop): the copy, the scrub bar, "Next: …" in words, the
// narration and the notes; no step list ("Now · step k of n" says where).
typedef struct PresGeom {
    bool wide;
    Lang lang;
    float s;
    int m, gap, px_head, px_big, px_narr, px_notes, px_label, bar_h;
    int left_w, top;        // the left column's width; where the labels above the copies are
    Rect title, clock;      // the top line (the clock on its own line when both do not fit)
    Rect now_box, next_box; // the copies (next_box empty: none drawn)
    int next_y;             // narrow: the line that names the next stage
    Rect steps, narr, notes;
} PresGeom;

static PresGeom pres_geom(Canvas *cv, Lang lang, int w, int h, int aw, int ah, const char *clock)
{
    PresGeom g = {.wide = w >= PRES_WIDE_MIN_W, .lang = lang};
    float s = (float)w / 1280.0f < (float)h / 720.0f ? (float)w / 1280.0f : (float)h / 720.0f;
    g.s = s < 0.5f ? 0.5f : s;
    g.m = paint_px(g.s, 14) > 6 ? paint_px(g.s, 14) : 6, g.gap = paint_px(g.s, 8) > 4 ? paint_px(g.s, 8) : 4;
    g.px_head = pres_px(g.s, 16, PRES_TEXT_MIN_PX), g.px_label = pres_px(g.s, 14, PRES_TEXT_MIN_PX);
    g.px_narr = pres_px(g.s, 16, PRES_BODY_MIN_PX), g.px_notes = pres_px(g.s, 21, PRES_BODY_MIN_PX);
    // the clock: large, whole; smaller (not below the heading) until it fits
    g.px_big = pres_px(g.s, 30, 16);
    int tw = paint_text_width(cv, FONT_BOLD, g.px_big, clock);
    while (tw > w - 2 * g.m && g.px_big > g.px_head) g.px_big--, tw = paint_text_width(cv, FONT_BOLD, g.px_big, clock);
    int line = g.px_big * 3 / 2, m = g.m;
    g.clock = (Rect){w - m - tw, m, tw, line};
    g.title = (Rect){m, m + (g.px_big - g.px_head) / 2, w - 3 * m - tw, g.px_head * 3 / 2};
    if (g.title.w < w / 3) g.title = (Rect){m, m + line, w - 2 * m, g.px_head * 3 / 2}; // under the clock
    g.top = g.title.y + g.title.h > m + line ? g.title.y + g.title.h : m + line;
    int label = g.px_head * 3 / 2, bar = g.px_label * 5 / 4 + 6;
    g.bar_h = bar = bar > paint_px(g.s, 22) ? bar : paint_px(g.s, 22);
    if (g.wide) {
        g.left_w = (w - 3 * m) * 60 / 100;
        int right_w = w - 3 * m - g.left_w;
        g.now_box = fit_aspect((Rect){m, g.top + label, g.left_w, (h - g.top) * 52 / 100}, aw, ah);
        g.next_box = fit_aspect((Rect){2 * m + g.left_w, g.top + label, right_w, (h - g.top) * 40 / 100}, aw, ah);
        g.steps = (Rect){2 * m + g.left_w, g.next_box.y + g.next_box.h + m, right_w, 0};
        g.steps.h = h - g.steps.y - m;
    } else { // the copy gets what the text boxes leave (each at least a heading and 4 lines)
        g.left_w = w - 2 * m;
        int text_min = 2 * (g.px_label * 3 / 2 + 4 * g.px_notes * 5 / 4 + g.gap) + g.gap;
        int room = h - (g.top + label) - paint_px(g.s, 6) - bar - label - m - text_min;
        int most = (h - g.top) * 45 / 100;
        g.now_box = fit_aspect((Rect){m, g.top + label, g.left_w, room < most ? (room > 40 ? room : 40) : most}, aw, ah);
        g.next_y = g.now_box.y + g.now_box.h + paint_px(g.s, 6) + bar + g.gap / 2;
    }
    int y = g.now_box.y + g.now_box.h + paint_px(g.s, 6) + bar + (g.wide ? m : label + g.gap / 2);
    int avail = h - m - y;
    g.narr = (Rect){m, y, g.left_w, (avail - g.gap) * 42 / 100};
    g.notes = (Rect){m, g.narr.y + g.narr.h + g.gap, g.left_w, h - m - (g.narr.y + g.narr.h + g.gap)};
    return g;
}

// A box of text wrapped to its width at t->px, scrolled t->scroll lines down (the wheel
// over it): the heading (and extra after it, in red), the text, "▼ scroll" when there is
// more than fits. The text area holds whole lines only: nothing is drawn cut.
static void draw_text_box(Canvas *cv, PresText *t, Rect box, const PresGeom *g, const char *head, const char *extra,
                          const char *text, Rgb ink, int indent)
{
    t->box = box;
    int hh = g->px_label * 3 / 2;
    Rect a = {box.x + indent, box.y + hh + g->gap / 2, box.w - indent - g->gap, box.h - hh - g->gap};
    int one = paint_text_wrapped_height(cv, FONT_SANS, t->px, 1 << 20, "Ag");
    int skip = paint_text_wrapped_height(cv, FONT_SANS, t->px, 1 << 20, "Ag\nAg") - one;
    if (skip <= 0) skip = one > 0 ? one : 1;
    int shown = a.h >= one && one > 0 ? 1 + (a.h - one) / skip : 0;
    t->text_h = text && *text && a.w > 0 ? paint_text_wrapped_height(cv, FONT_SANS, t->px, a.w, text) : 0;
    int lines = t->text_h > 0 ? 1 + (t->text_h - one + skip / 2) / skip : 0;
    t->max = lines > shown ? lines - shown : 0;
    t->scroll = t->scroll > t->max ? t->max : t->scroll < 0 ? 0 : t->scroll;
    t->lines_shown = shown < lines ? shown : lines;
    t->area = (Rect){a.x, a.y, a.w, shown > 0 ? one + (shown - 1) * skip : 0};
    char more[96] = "", fit[400];
    if (t->max > 0) { // there is more: which way, at the heading's right
        const char *arrows = t->scroll == 0 ? "\u25BC" : t->scroll >= t->max ? "\u25B2" : "\u25B2\u25BC";
        snprintf(more, sizeof more, "%s %s", arrows, i18n_get(g->lang, "pres.scroll"));
    }
    int right = box.x + box.w - g->gap, hy = box.y + g->gap / 2;
    int more_w = *more ? paint_text_width(cv, FONT_BOLD, g->px_label, more) + g->gap : 0;
    int x = box.x + indent;
    x += paint_text(cv, FONT_BOLD, g->px_label, THEME.muted, 255, x, hy, ALIGN_LEFT,
                    paint_fit_text(cv, FONT_BOLD, g->px_label, head, right - more_w - x, fit, sizeof fit));
    if (extra && right - more_w - x - g->gap > 2 * g->px_label)
        paint_text(cv, FONT_SANS, g->px_label, THEME.error_ink, 255, x + g->gap, hy, ALIGN_LEFT,
                   paint_fit_text(cv, FONT_SANS, g->px_label, extra, right - more_w - x - g->gap, fit, sizeof fit));
    if (*more) paint_text(cv, FONT_BOLD, g->px_label, THEME.accent, 255, right, hy, ALIGN_RIGHT, more);
    if (t->area.h <= 0 || !text || !*text) return;
    paint_push(cv, t->area);
    paint_text_block(cv, FONT_SANS, t->px, a.w, ink, 255, a.x, a.y - t->scroll * skip, text);
    paint_pop(cv);
}

// "Elapsed hh:mm:ss · HH:MM" into buf.
static void pres_clock(const Presenter *p, Lang lang, char *buf, size_t n)
{
    char a1[64], a2[64];
    Uint64 el = (SDL_GetTicks64() - p->start_ms) / 1000;
    snprintf(a1, sizeof a1, "%02u:%02u:%02u", (unsigned)(el / 3600), (unsigned)(el / 60 % 60), (unsigned)(el % 60));
    time_t now = time(NULL);
    struct tm tmv;
    if (localtime_r(&now, &tmv)) strftime(a2, sizeof a2, "%H:%M", &tmv);
    else snprintf(a2, sizeof a2, "--:--");
    const char *ta[] = {a1, a2};
    i18n_fmt(buf, n, lang, "pres.time", 2, ta);
}

// The copies: the audience's frame (drawn again only when something in it changed) and
// the next stage's (or part's), settled; a click on the copy hit-tested in the frame.
// Returns whether there is a next stage (then *nv is it).
static bool pres_copies(Presenter *p, const PresenterFrame *f, const PresGeom *g, View *nv)
{
    const Trace *tr = f->tr;
    const View *v = f->v;
    Overlays ov = {0};
    if (f->ov) { // what the audience sees over the frame (never the toast, picker or help)
        ov = *f->ov;
        ov.hover = false, ov.help = false, ov.toast = NULL, ov.picker = NULL, ov.lab = NULL;
        ov.export_total = 0, ov.edit_label = NULL;
        ov.pin_boxes = NULL; // the audience frame's boxes are the ones dragged
    }
    int cw, ch;
    presenter_copy_size(f->audience_w, f->audience_h, &cw, &ch);
    int n_pins = ov.pins && ov.n_pins > 0 ? (ov.n_pins < PINS_MAX ? ov.n_pins : PINS_MAX) : 0;
    bool same = p->now.valid && p->now.w == cw && p->now.h == ch && p->now.drawn_tr == tr &&
                memcmp(&p->now.drawn, v, sizeof *v) == 0 && memcmp(&p->now.drawn_ov, &ov, sizeof ov) == 0 &&
                (n_pins == 0 || memcmp(p->now.drawn_pins, ov.pins, sizeof *ov.pins * (size_t)n_pins) == 0);
    if (!f->black && !same) {
        thumb_draw(p, &p->now, cw, ch, tr, v, &ov);
        p->now.valid = p->now.tex != NULL, p->now.drawn = *v, p->now.drawn_tr = tr, p->now.drawn_ov = ov;
        if (n_pins) memcpy(p->now.drawn_pins, ov.pins, sizeof *ov.pins * (size_t)n_pins);
    }
    Rect nb = g->now_box;
    if (p->click && nb.w > 0 && nb.h > 0) { // a click on the small frame: the cell under it in the frame
        p->click = false;
        Layout *L = malloc(sizeof *L);
        if (L) {
            layout_compute(L, tr, v, cw, ch);
            if (layout_hit_cell(L, p->click_x * cw / nb.w, p->click_y * ch / nb.h, &p->pin_panel, &p->pin_row,
                                &p->pin_col))
                p->pin = true, p->pin_stage = v->stage;
            free(L);
        }
    }
    *nv = *v;
    nv->anim = 1.0f;
    // projector mode: after a split stage's operands comes its result, then the next stage
    bool next_part = v->projector && v->part + 1 < layout_projector_parts(tr, nv, f->audience_w, f->audience_h);
    if (!next_part && v->stage + 1 >= tr->n) return false;
    nv->stage = next_part ? v->stage : v->stage + 1, nv->part = next_part ? v->part + 1 : 0, nv->playing = false;
    view_reset_zoom(nv);
    nv->speed = 1.0f;
    if (g->next_box.w > 0 && (!p->next.valid || p->next.w != cw || p->next.h != ch || p->next.drawn_tr != tr ||
                              memcmp(&p->next.drawn, nv, sizeof *nv) != 0)) {
        thumb_draw(p, &p->next, cw, ch, tr, nv, NULL);
        p->next.valid = p->next.tex != NULL, p->next.drawn = *nv, p->next.drawn_tr = tr;
    }
    return true;
}

// The scrub bar of the transition under the copy: drag it to hold the transition anywhere.
static void pres_scrub(Presenter *p, Canvas *cv, const PresGeom *g, const PresenterFrame *f)
{
    float s = g->s;
    Rect nb = g->now_box;
    p->scrub_box = (Rect){nb.x, nb.y + nb.h + paint_px(s, 6), nb.w, g->bar_h};
    float sp = f->ov ? f->ov->scrub_p : f->v->anim;
    int frame = f->ov ? f->ov->scrub_frame : 0;
    bool held = f->ov && f->ov->scrub;
    char buf[64];
    snprintf(buf, sizeof buf, "%s %d / %d", held ? "\u275A\u275A" : "\u25B6", frame, PLAYBACK_SCRUB_FRAMES);
    int lab_w = paint_text_width(cv, FONT_BOLD, g->px_label, buf) + g->gap;
    lab_w = lab_w > paint_px(s, 96) ? lab_w : paint_px(s, 96);
    int bar_h = g->bar_h;
    p->scrub_track = (Rect){p->scrub_box.x + lab_w, p->scrub_box.y + bar_h / 2 - paint_px(s, 3), p->scrub_box.w - lab_w,
                            paint_px(s, 6)};
    paint_text(cv, FONT_BOLD, g->px_label, held ? THEME.accent : THEME.muted, 255, p->scrub_box.x,
               p->scrub_box.y + (bar_h - g->px_label * 5 / 4) / 2, ALIGN_LEFT, buf);
    Rect t = p->scrub_track;
    paint_fill(cv, THEME.slot, 255, t.x, t.y, t.w, t.h);
    int fx = t.x + (int)((sp < 0.0f ? 0.0f : sp > 1.0f ? 1.0f : sp) * (float)t.w);
    paint_fill(cv, THEME.accent, 255, t.x, t.y, fx - t.x, t.h);
    paint_fill(cv, THEME.ink, 255, fx - paint_px(s, 4), p->scrub_box.y + 2, paint_px(s, 8), bar_h - 4);
}

// The narration, then the teacher's notes (only here, never on the audience's window).
static void pres_texts(Presenter *p, Canvas *cv, const PresGeom *g, const PresenterFrame *f)
{
    const Trace *tr = f->tr;
    const View *v = f->v;
    if (p->text_stage != v->stage || p->text_tr != tr) // another stage: both from their top
        p->narr.scroll = p->notes.scroll = 0, p->text_stage = v->stage, p->text_tr = tr;
    Rect nb = g->narr, tb = g->notes;
    const char *notes = presenter_notes(tr, v), *notes_shown = notes ? notes : i18n_get(v->lang, "pres.no_notes");
    p->narr_text = scene_narration(tr, v, p->text, sizeof p->text);
    // the height between them shared by what each needs: the shorter whole, when it fits in half
    int both = tb.y + tb.h - nb.y - g->gap, frame = g->px_label * 3 / 2 + 2 * g->gap;
    int need_n = frame + paint_text_wrapped_height(cv, FONT_SANS, g->px_narr, nb.w - 2 * g->gap, p->narr_text);
    int need_t = frame + paint_text_wrapped_height(cv, FONT_SANS, g->px_notes, tb.w - 3 * g->gap, notes_shown);
    int hn = need_n + need_t <= both ? need_n + (both - need_n - need_t) * 2 / 5
             : need_n <= both / 2    ? need_n
             : need_t <= both / 2    ? both - need_t
                                     : both * 45 / 100;
    nb.h = hn, tb.y = nb.y + hn + g->gap, tb.h = both - hn;
    paint_fill(cv, THEME.narr_bg, 255, nb.x, nb.y, nb.w, nb.h);
    p->narr.px = g->px_narr;
    draw_text_box(cv, &p->narr, nb, g, i18n_get(v->lang, "pres.narration"), NULL, p->narr_text, THEME.ink, g->gap);
    const Rgb note_bg = {255, 246, 214}, note_edge = {214, 160, 20};
    paint_fill(cv, note_bg, 255, tb.x, tb.y, tb.w, tb.h);
    paint_fill(cv, note_edge, 255, tb.x, tb.y, paint_px(g->s, 5), tb.h);
    p->notes.px = g->px_notes;
    draw_text_box(cv, &p->notes, tb, g, i18n_get(v->lang, "pres.notes"),
                  notes && f->edited ? i18n_get(v->lang, "pres.notes_original") : NULL, notes_shown,
                  notes ? THEME.ink : THEME.muted, 2 * g->gap);
}

static Rect rect_meet(Rect a, Rect b)
{
    int x0 = a.x > b.x ? a.x : b.x, y0 = a.y > b.y ? a.y : b.y;
    int x1 = a.x + a.w < b.x + b.w ? a.x + a.w : b.x + b.w, y1 = a.y + a.h < b.y + b.h ? a.y + a.h : b.y + b.h;
    return x1 > x0 && y1 > y0 ? (Rect){x0, y0, x1 - x0, y1 - y0} : (Rect){x0, y0, 0, 0};
}

// The frame's text as recorded (before the replay): each visible piece (inside the
// boxes it is limited to) inside the w×h window, whole (never cropped by a box of its
// own) and at least PRES_TEXT_MIN_PX; what is not goes into p->scan.
static void pres_scan(Presenter *p, Canvas *cv, int w, int h)
{
    PresScan *sc = p->scan;
    Rect stack[DRAW_PUSH_MAX + 1], all = {-(1 << 20), -(1 << 20), 1 << 21, 1 << 21};
    int depth = 0;
    stack[0] = all;
    for (size_t i = 0; i < p->draw.n; i++) {
        const DrawCmd *c = &p->draw.cmd[i];
        if (c->op == DRAW_CLIP) stack[depth] = c->none ? all : c->r; // (the presenter pushes, never clips)
        if (c->op == DRAW_PUSH && depth < DRAW_PUSH_MAX) stack[depth + 1] = rect_meet(stack[depth], c->r), depth++;
        if (c->op == DRAW_POP && depth > 0) depth--;
        if (c->op != DRAW_TEXT) continue;
        const char *s = p->draw.text + c->text;
        int mw = 0, mh = 0;
        if (c->wrap_w > 0) paint_text_block_size(cv, c->face, c->px, c->wrap_w, s, &mw, &mh);
        else paint_text_size(cv, c->face, c->px, s, &mw, &mh);
        bool boxed = c->r.w > 0 && c->r.h > 0;
        Rect ext = rect_meet(stack[depth], (Rect){c->r.x, c->r.y, boxed ? c->r.w : mw, boxed ? c->r.h : mh});
        if (ext.w <= 0 || ext.h <= 0) continue; // scrolled out of its box
        sc->texts++;
        if (sc->min_px == 0 || c->px < sc->min_px) sc->min_px = c->px;
        char *slot = NULL;
        if (ext.x < 0 || ext.y < 0 || ext.x + ext.w > w || ext.y + ext.h > h)
            slot = sc->n_out < PRES_SCAN_MAX ? sc->out[sc->n_out] : NULL, sc->n_out++;
        else if (boxed && (mw > c->r.w + 1 || mh > c->r.h + 1))
            slot = sc->n_cut < PRES_SCAN_MAX ? sc->cut[sc->n_cut] : NULL, sc->n_cut++;
        if (slot) snprintf(slot, 120, "%.60s @ %d,%d %dx%d", s, ext.x, ext.y, ext.w, ext.h);
    }
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
    Lang lang = v->lang;
    char buf[256], clock[128], key[64], fit[600];
    pres_clock(p, lang, clock, sizeof clock);
    Canvas cv = {p->r, p->fonts, NULL, NULL, &p->draw};
    PresGeom g = pres_geom(&cv, lang, w, h, f->audience_w, f->audience_h, clock);
    p->wide = g.wide, p->clock_box = g.clock, p->title_box = g.title, p->now_box = g.now_box;
    View nv;
    bool has_next = pres_copies(p, f, &g, &nv); // first: they switch the render target

    paint_clear(&cv, THEME.bg);
    // the top line: the lesson, the elapsed time and the clock (large: read at a glance)
    paint_text(&cv, FONT_BOLD, g.px_big, THEME.ink, 255, g.clock.x, g.clock.y, ALIGN_LEFT, clock);
    paint_text(&cv, FONT_BOLD, g.px_head, THEME.muted, 255, g.title.x, g.title.y, ALIGN_LEFT,
               paint_fit_text(&cv, FONT_BOLD, g.px_head, f->title ? f->title : "", g.title.w, fit, sizeof fit));
    // now: the audience's frame, small
    int k = 0, n_steps = 0;
    for (int i = 0; i < tr->n; i++) {
        if (i > 0 && tr->stages[i].step == tr->stages[i - 1].step) continue;
        n_steps++;
        if (i <= v->stage) k = n_steps;
    }
    char n1[16], n2[16];
    snprintf(n1, sizeof n1, "%d", k), snprintf(n2, sizeof n2, "%d", n_steps);
    const char *na[] = {n1, n2, step_label(tr, tr->stages[v->stage].step, lang, key, sizeof key)};
    i18n_fmt(buf, sizeof buf, lang, "pres.now", 3, na);
    Rect nb = g.now_box;
    paint_text(&cv, FONT_BOLD, g.px_head, THEME.accent, 255, g.m, g.top, ALIGN_LEFT,
               paint_fit_text(&cv, FONT_BOLD, g.px_head, buf, g.left_w, fit, sizeof fit));
    if (f->black) {
        paint_fill(&cv, (Rgb){0, 0, 0}, 255, nb.x, nb.y, nb.w, nb.h);
        const char *msg = i18n_get(lang, "pres.black");
        int bw = nb.w - 2 * g.m, bh = paint_text_wrapped_height(&cv, FONT_BOLD, g.px_head, bw, msg);
        paint_push(&cv, nb);
        paint_text_block(&cv, FONT_BOLD, g.px_head, bw, THEME.white, 255, nb.x + g.m, nb.y + (nb.h - bh) / 2, msg);
        paint_pop(&cv);
    } else if (p->now.tex) {
        paint_image_draw_scaled(&cv, &p->now.img, p->now.w, p->now.h, nb);
    }
    paint_frame(&cv, THEME.accent, 255, nb.x - 2, nb.y - 2, nb.w + 4, nb.h + 4, 2);
    pres_scrub(p, &cv, &g, f);
    // next: the following stage, settled (one column: its name only)
    if (has_next) {
        const char *xa[] = {step_label(tr, tr->stages[nv.stage].step, lang, key, sizeof key)};
        i18n_fmt(buf, sizeof buf, lang, "pres.next", 1, xa);
    } else {
        snprintf(buf, sizeof buf, "%s", i18n_get(lang, "pres.end"));
    }
    int rx = g.wide ? 2 * g.m + g.left_w : g.m, ry = g.wide ? g.top : g.next_y;
    paint_text(&cv, FONT_BOLD, g.px_head, THEME.muted, 255, rx, ry, ALIGN_LEFT,
               paint_fit_text(&cv, FONT_BOLD, g.px_head, buf, w - g.m - rx, fit, sizeof fit));
    if (g.wide) {
        Rect xb = g.next_box;
        if (has_next && p->next.tex) paint_image_draw_scaled(&cv, &p->next.img, p->next.w, p->next.h, xb);
        if (has_next) paint_frame(&cv, THEME.slot, 255, xb.x - 1, xb.y - 1, xb.w + 2, xb.h + 2, 1);
        else paint_fill(&cv, THEME.narr_bg, 255, xb.x, xb.y, xb.w, xb.h);
        draw_steps(&cv, g.steps, tr, v, g.s);
    }
    pres_texts(p, &cv, &g, f);
    if (p->scan) pres_scan(p, &cv, w, h);
    paint_flush(&cv);
    if (p->win) SDL_RenderPresent(p->r);
}

static void json_rect(FILE *out, const char *name, Rect r)
{
    fprintf(out, ", \"%s\": [%d, %d, %d, %d]", name, r.x, r.y, r.w, r.h);
}

static void json_text_box(FILE *out, const char *name, const PresText *t, const char *text)
{
    fprintf(out, ", \"%s\": {\"px\": %d, \"lines_shown\": %d, \"more_lines\": %d", name, t->px, t->lines_shown, t->max);
    json_rect(out, "box", t->box);
    json_rect(out, "text_area", t->area);
    fputs(", \"text\": ", out);
    json_write_string(out, text ? text : "");
    fputc('}', out);
}

void presenter_describe(Presenter *p, const PresenterFrame *f, FILE *out)
{
    PresScan sc;
    memset(&sc, 0, sizeof sc);
    p->scan = &sc;
    presenter_draw(p, f);
    p->scan = NULL;
    int w, h;
    SDL_GetRendererOutputSize(p->r, &w, &h);
    fprintf(out, "\"presenter\": {\"width\": %d, \"height\": %d, \"layout\": \"%s\", \"texts\": %d, \"min_text_px\": %d",
            w, h, p->wide ? "two columns" : "one column", sc.texts, sc.min_px);
    const char *names[] = {"outside", "cropped"};
    for (int k = 0; k < 2; k++) {
        int n = k ? sc.n_cut : sc.n_out;
        fprintf(out, ", \"%s\": [", names[k]);
        for (int i = 0; i < n && i < PRES_SCAN_MAX; i++) {
            if (i) fputs(", ", out);
            json_write_string(out, k ? sc.cut[i] : sc.out[i]);
        }
        fputc(']', out);
    }
    json_rect(out, "clock", p->clock_box);
    json_rect(out, "title", p->title_box);
    json_rect(out, "now", p->now_box);
    json_rect(out, "scrub", p->scrub_box);
    json_text_box(out, "narration", &p->narr, p->narr_text);
    json_text_box(out, "notes", &p->notes, presenter_notes(f->tr, f->v));
    fputc('}', out);
}

// ---- presenting (presenter.h) ------------------------------------------------------------

void presenting_init(Presenting *p)
{
    memset(p, 0, sizeof *p);
    tools_init(&p->tools);
}

void presenting_close(Presenting *p)
{
    presenter_destroy(p->pres);
    p->pres = NULL;
}

bool presenting_start(Presenting *p, SDL_Window *audience, const char *font_path, Lang lang, char *err, size_t n)
{
    if (!p->pres) {
        int w, h;
        SDL_GetWindowSize(audience, &w, &h);
        p->pres = presenter_create(audience, font_path, lang, w, h, err, n);
        if (!p->pres) return false;
        SDL_RaiseWindow(audience);
    }
    p->black = false;
    presenter_restart_clock(p->pres);
    return true;
}

bool presenting_event(Presenting *p, const SDL_Event *e)
{
    if (!p->pres || !presenter_owns_event(p->pres, e)) return false;
    if (presenter_event(p->pres, e)) presenting_close(p);
    return true;
}

void presenting_toggle_projector(Presenting *p, View *v)
{
    v->projector = !v->projector;
    v->part = 0;
    if (v->projector) {
        p->palette_before = v->palette;
        v->palette = PALETTE_HIGH_CONTRAST;
    } else if (v->palette == PALETTE_HIGH_CONTRAST) {
        v->palette = p->palette_before;
    }
}

void presenting_overlays(Presenting *p, Overlays *ov, Playback *pb, const Trace *tr, int stage, bool mouse_in, int w,
                         int h)
{
    float px = -1.0f, py = -1.0f;
    if (mouse_in && w > 0 && h > 0) px = (float)ov->mouse_x / (float)w, py = (float)ov->mouse_y / (float)h;
    else if (!presenter_point(p->pres, &px, &py)) px = py = -1.0f;
    int ps, pp, pr, pc;
    if (presenter_take_pin(p->pres, &ps, &pp, &pr, &pc) && ps == stage) // clicked on its small frame
        tools_toggle_cell(&p->tools, ps, pp, pr, pc);
    tools_overlays(&p->tools, ov, px, py);
    float scrub; // dragged in the presenter window (shown from the next frame on)
    if (presenter_take_scrub(p->pres, &scrub)) playback_scrub(pb, scrub);
    ov->scrub = pb->held;
    ov->loop_steps = recipe_loop_steps(tr, pb->stage);
    ov->scrub_p = playback_progress(pb);
    ov->scrub_frame = playback_frame(pb);
}
