// render.c — one frame of the visualizer (see render.h).
//
// Draw order: background | timeline | tabs + status | header (title, shapes,
// formula) | heatmaps with operators, animated by View.anim | legend |
// narration | hover highlight + tooltip | help overlay | export progress | toast.
// Everything is filled rectangles and cached text textures, and heatmaps too
// large for cells are images (heatmap.h).
#include "render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "i18n.h"
#include "picker_draw.h"
#include "playback.h"

#define TIP_MAX 1024

static const Rgb BG = {248, 248, 246};
static const Rgb INK = {28, 28, 30};
static const Rgb MUTED = {96, 96, 100};
static const Rgb ACCENT = {0, 90, 170};
static const Rgb ACCENT_LIGHT = {214, 228, 244};
static const Rgb SLOT = {232, 232, 232};
static const Rgb EMPTY = {236, 236, 234};
static const Rgb GRID = {196, 200, 208};   // the lines between cells: a 0 (white) cell keeps its edges
static const Rgb NARR_BG = {238, 243, 250};
static const Rgb HILITE = {255, 176, 0};

Rgb render_background(void) { return BG; }

int render_cell_gap(int cell) { return cell >= 10 ? 1 : 0; }

static SDL_Color col(Rgb c, Uint8 a) { return (SDL_Color){c.r, c.g, c.b, a}; }

static void fill(SDL_Renderer *r, Rgb c, Uint8 a, int x, int y, int w, int h)
{
    if (w <= 0 || h <= 0) return;
    SDL_SetRenderDrawBlendMode(r, a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(r, c.r, c.g, c.b, a);
    SDL_Rect q = {x, y, w, h};
    SDL_RenderFillRect(r, &q);
}

static void frame(SDL_Renderer *r, Rgb c, Uint8 a, int x, int y, int w, int h, int t)
{
    fill(r, c, a, x, y, w, t);
    fill(r, c, a, x, y + h - t, w, t);
    fill(r, c, a, x, y + t, t, h - 2 * t);
    fill(r, c, a, x + w - t, y + t, t, h - 2 * t);
}

static SDL_Rect sdl(Rect q) { return (SDL_Rect){q.x, q.y, q.w, q.h}; }

static int px_i(float s, float base)
{
    int p = (int)lrintf(base * s);
    return p < 1 ? 1 : p;
}

// ---- cells ------------------------------------------------------------------

CellLook render_cell_look(const PanelSpec *ps, int row, int col)
{
    float v = panel_value(ps, row, col);
    if (ps->mask && ps->mask[(size_t)row * (size_t)ps->cols + (size_t)col] == 0.0f) return CELL_MASKED;
    if (isnan(v)) return CELL_NAN;
    return CELL_VALUE;
}

Rgb render_cell_color(const PanelSpec *ps, int row, int col)
{
    switch (render_cell_look(ps, row, col)) {
    case CELL_MASKED: return colormap_masked();
    case CELL_NAN: return colormap_nan();
    default: return colormap_value(&ps->scale, panel_value(ps, row, col));
    }
}

static void mask_label(const Trace *tr, char *buf, size_t n)
{
    float f = tr->mask_fill;
    if (isinf(f)) {
        snprintf(buf, n, f < 0 ? "−∞" : "∞");
        return;
    }
    // -1e+09 → -1e9
    char t[24];
    snprintf(t, sizeof t, "%.0e", (double)f);
    char *e = strchr(t, 'e');
    if (!e) {
        snprintf(buf, n, "%s", t);
        return;
    }
    int ex = atoi(e + 1) % 1000;
    *e = '\0';
    snprintf(buf, n, "%.8se%d", t, ex);
}

static void format_cell(float v, int d, char *buf, size_t n)
{
    if (isnan(v)) {
        snprintf(buf, n, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v < 0 ? "−∞" : "∞");
        return;
    }
    snprintf(buf, n, "%.*f", d, (double)v);
    // "-0.00" → "0.00"
    bool zero = true;
    for (const char *p = buf; *p; p++)
        if (*p >= '1' && *p <= '9') zero = false;
    if (zero && buf[0] == '-') memmove(buf, buf + 1, strlen(buf));
}

// Diagonal hatching inside the w×h box at (x, y); restores the clip rectangle `outer`.
static void hatch(SDL_Renderer *r, int x, int y, int w, int h, Uint8 a, float s, const SDL_Rect *outer)
{
    if (w < 16 || h < 16) return;
    SDL_Rect clip = {x, y, w, h};
    if (outer && !SDL_IntersectRect(&clip, outer, &clip)) return;
    SDL_RenderSetClipRect(r, &clip);
    SDL_SetRenderDrawBlendMode(r, a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    Rgb hc = colormap_masked_hatch();
    SDL_SetRenderDrawColor(r, hc.r, hc.g, hc.b, a);
    int m = w < h ? w : h;
    int step = m / 5 < 5 ? 5 : m / 5;
    int th = s >= 1.5f ? 2 : 1;
    for (int t = (int)(0.4f * (float)m); t < w + h; t += step)
        for (int k = 0; k < th; k++)
            SDL_RenderDrawLine(r, x + t + k - h, y + h, x + t + k, y);
    SDL_RenderSetClipRect(r, outer);
}

typedef struct CellDraw {
    int x, y, w, h;    // position and size
    Rgb color;         // background colour to show
    float show;        // 0..1 how far the cell has appeared
    bool masked, nan;
    const char *text;  // number to print, or NULL
    int px;
    const SDL_Rect *clip; // the panel's clip rectangle (zoomed), or NULL
} CellDraw;

static void draw_cell(SDL_Renderer *r, Fonts *f, const CellDraw *d, float s)
{
    int g = render_cell_gap(d->w < d->h ? d->w : d->h);
    Rgb c = d->show >= 1.0f ? d->color : colormap_lerp(EMPTY, d->color, d->show);
    fill(r, c, 255, d->x + g, d->y + g, d->w - 2 * g, d->h - 2 * g);
    if (d->masked && d->show > 0.5f)
        hatch(r, d->x + g, d->y + g, d->w - 2 * g, d->h - 2 * g, (Uint8)(255 * (d->show - 0.5f) * 2), s, d->clip);
    if (d->text && d->show > 0.55f) {
        Rgb tc = colormap_text_dark(c) ? (Rgb){0, 0, 0} : (Rgb){255, 255, 255};
        Uint8 a = (Uint8)(255.0f * ease_clamp01((d->show - 0.55f) / 0.45f));
        SDL_Rect box = {d->x, d->y, d->w, d->h};
        if (d->masked) { // keep the label readable over the hatching
            int tw, th;
            text_size(f, r, FONT_MONO, d->px, d->text, &tw, &th);
            fill(r, colormap_masked(), a, d->x + (d->w - tw) / 2 - 2, d->y + (d->h - th) / 2, tw + 4, th);
        }
        text_draw_centered(f, r, FONT_MONO, d->px, col(tc, a), box, d->text);
    }
}

// s shortened with "…" until it is at most max_w wide at px (whole code points).
static const char *fit_text(Fonts *f, SDL_Renderer *r, FontFace face, int px, const char *s, int max_w, char *buf,
                            size_t n)
{
    int tw, th;
    text_size(f, r, face, px, s, &tw, &th);
    if (tw <= max_w || n < 8) return s;
    size_t len = strlen(s);
    if (len > n - 4) len = n - 4;
    while (len > 0) {
        len--;
        while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80) len--;
        memcpy(buf, s, len);
        memcpy(buf + len, "…", sizeof "…");
        text_size(f, r, face, px, buf, &tw, &th);
        if (tw <= max_w) return buf;
    }
    return "…";
}

// ---- scene pieces -------------------------------------------------------------

static void draw_timeline(SDL_Renderer *r, Fonts *f, const Layout *L, const Trace *tr, const View *v)
{
    StepId cur = v->stage >= 0 && v->stage < tr->n ? tr->stages[v->stage].step : STEP_INPUT;
    for (int i = 0; i < L->n_steps; i++) {
        Rect q = L->step_rect[i];
        StepId id = L->step_id[i];
        bool on = id == cur, past = id < cur;
        fill(r, on ? ACCENT : past ? ACCENT_LIGHT : SLOT, 255, q.x, q.y, q.w, q.h);
        char key[40], label[120], num[12];
        snprintf(key, sizeof key, "step.%s", step_name(id));
        const char *name = i18n_get(v->lang, key);
        snprintf(num, sizeof num, "%d", i + 1);
        snprintf(label, sizeof label, "%s  %s", num, name);
        Rgb tc = on ? (Rgb){255, 255, 255} : INK;
        FontFace face = on ? FONT_BOLD : FONT_SANS;
        int dots_h = px_i(L->s, 12), avail_w = q.w - px_i(L->s, 8);
        SDL_Rect box = {q.x, q.y, q.w, q.h - dots_h + px_i(L->s, 2)};
        SDL_RenderSetClipRect(r, &(SDL_Rect){q.x, q.y, q.w, q.h});
        // "N  Name" on one line, from the body size down to the small size; then
        // "N Name"; then the name alone (keys 1–9 jump to the first nine steps, so a
        // narrow slot drops its number first); at last the name on two lines.
        // Text never gets smaller than px_small.
        int px = L->px_body, tw, th;
        const char *text = label;
        text_size(f, r, face, px, text, &tw, &th);
        while (tw > avail_w && px > L->px_small) {
            px -= 1;
            text_size(f, r, face, px, text, &tw, &th);
        }
        if (tw > avail_w) {
            snprintf(label, sizeof label, "%s %s", num, name);
            text_size(f, r, face, px, text, &tw, &th);
        }
        if (tw > avail_w) {
            text = name;
            for (px = L->px_body, text_size(f, r, face, px, text, &tw, &th); tw > avail_w && px > L->px_small;)
                text_size(f, r, face, --px, text, &tw, &th);
            if (tw > avail_w && face == FONT_BOLD) { // the current step: regular is narrower than bold
                face = FONT_SANS;
                for (px = L->px_body, text_size(f, r, face, px, text, &tw, &th); tw > avail_w && px > L->px_small;)
                    text_size(f, r, face, --px, text, &tw, &th);
            }
        }
        if (tw <= avail_w) {
            text_draw_centered(f, r, face, px, col(tc, 255), box, text);
        } else { // two lines, cut at the space nearest the middle, each centred
            char l1[96];
            size_t n = strlen(name), cut = 0;
            for (size_t k = 1; k < n && k < sizeof l1; k++)
                if (name[k] == ' ' && (cut == 0 || (k > n / 2 ? k - n / 2 : n / 2 - k) < (cut > n / 2 ? cut - n / 2 : n / 2 - cut)))
                    cut = k;
            if (cut == 0) cut = n < sizeof l1 ? n : sizeof l1 - 1;
            memcpy(l1, name, cut);
            l1[cut] = '\0';
            const char *l2 = name[cut] ? name + cut + 1 : "";
            int lh = px * 6 / 5, y = q.y + (q.h - dots_h - 2 * lh) / 2;
            if (y < q.y) y = q.y;
            text_draw_centered(f, r, face, px, col(tc, 255), (SDL_Rect){q.x, y, q.w, lh}, l1);
            text_draw_centered(f, r, face, px, col(tc, 255), (SDL_Rect){q.x, y + lh, q.w, lh}, l2);
        }
        SDL_RenderSetClipRect(r, NULL);
        // one dot per stage of the step, the current one filled
        int first = trace_step_first(tr, id), n = trace_step_count(tr, id);
        int dot = px_i(L->s, 7), gap = px_i(L->s, 5);
        int x0 = q.x + (q.w - n * dot - (n - 1) * gap) / 2, y0 = q.y + q.h - dot - px_i(L->s, 5);
        for (int k = 0; k < n; k++) {
            bool here = first + k == v->stage;
            Rgb dc = on ? (here ? (Rgb){255, 255, 255} : (Rgb){120, 160, 210}) : (Rgb){160, 160, 160};
            fill(r, dc, 255, x0 + k * (dot + gap), y0, dot, dot);
        }
    }
}

static void draw_tabs(SDL_Renderer *r, Fonts *f, const Layout *L, const Trace *tr, const View *v)
{
    SDL_Color ink = col(INK, 255);
    text_draw_centered(f, r, FONT_SANS, L->px_body, ink, sdl(L->batch_label), i18n_get(v->lang, "ui.batch"));
    text_draw_centered(f, r, FONT_SANS, L->px_body, ink, sdl(L->head_label), i18n_get(v->lang, "ui.head"));
    char b[16];
    for (int i = 0; i < L->n_batch_tabs; i++) {
        Rect q = L->batch_tab[i];
        bool on = i == v->batch;
        fill(r, on ? ACCENT : SLOT, 255, q.x, q.y, q.w, q.h);
        snprintf(b, sizeof b, "%d", i);
        text_draw_centered(f, r, on ? FONT_BOLD : FONT_SANS, L->px_body,
                           on ? col((Rgb){255, 255, 255}, 255) : ink, sdl(q), b);
    }
    const Stage *st = v->stage >= 0 && v->stage < tr->n ? &tr->stages[v->stage] : NULL;
    bool heads_matter = st && (st->t.rank == 4 || st->kind == STAGE_KIND_CONCAT);
    for (int i = 0; i < L->n_head_tabs; i++) {
        Rect q = L->head_tab[i];
        bool on = i == v->head;
        fill(r, on ? ACCENT : SLOT, heads_matter ? 255 : 120, q.x, q.y, q.w, q.h);
        int bar = px_i(L->s, 5);
        fill(r, colormap_head(i), 255, q.x, q.y + q.h - bar, q.w, bar);
        snprintf(b, sizeof b, "%d", i);
        text_draw_centered(f, r, on ? FONT_BOLD : FONT_SANS, L->px_body,
                           on ? col((Rgb){255, 255, 255}, 255) : col(heads_matter ? INK : MUTED, 255),
                           (SDL_Rect){q.x, q.y, q.w, q.h - bar}, b);
    }
    // status, right-aligned: play state, palette, help hint
    char sp[16], line[200], pal[96];
    snprintf(sp, sizeof sp, "%.2g", (double)v->speed);
    const char *a1[] = {sp};
    i18n_fmt(line, sizeof line, v->lang, v->playing ? "ui.playing" : "ui.paused", 1, a1);
    snprintf(pal, sizeof pal, "%s", i18n_get(v->lang, colormap_palette_key(v->palette)));
    Rect s = L->status;
    s.w -= picker_button_reserve(L, v); // the "Lessons…" button at the right end (window only)
    int x = s.x + s.w;
    SDL_RenderSetClipRect(r, &(SDL_Rect){s.x, s.y, s.w, s.h});
    int tw, th;
    const char *hint = i18n_get(v->lang, "ui.help_hint");
    text_size(f, r, FONT_BOLD, L->px_small, hint, &tw, &th);
    x -= tw;
    text_draw(f, r, FONT_BOLD, L->px_small, col(ACCENT, 255), x, s.y + (s.h - th) / 2, ALIGN_LEFT, hint);
    text_size(f, r, FONT_SANS, L->px_small, pal, &tw, &th);
    x -= tw + px_i(L->s, 18);
    text_draw(f, r, FONT_SANS, L->px_small, col(MUTED, 255), x, s.y + (s.h - th) / 2, ALIGN_LEFT, pal);
    text_size(f, r, FONT_SANS, L->px_small, line, &tw, &th);
    x -= tw + px_i(L->s, 18);
    text_draw(f, r, FONT_SANS, L->px_small, col(v->playing ? ACCENT : MUTED, 255), x,
              s.y + (s.h - th) / 2, ALIGN_LEFT, line);
    SDL_RenderSetClipRect(r, NULL);
}

static void draw_header(SDL_Renderer *r, Fonts *f, const Layout *L, const Trace *tr, const View *v)
{
    if (v->stage < 0 || v->stage >= tr->n) return;
    const Stage *st = &tr->stages[v->stage];
    Lang lang = v->lang;
    char key[48], title[200], shape[32], badge[200];
    snprintf(key, sizeof key, "title.%s", st->name);
    snprintf(title, sizeof title, "%d/%d  %s", v->stage + 1, tr->n, i18n_get(lang, key));
    Rect h = L->header;
    SDL_RenderSetClipRect(r, &(SDL_Rect){h.x, h.y, h.w, h.h});
    int tw = text_draw(f, r, FONT_BOLD, L->px_title, col(INK, 255), h.x, h.y, ALIGN_LEFT, title);
    // shape badge: "Q (2,4,4) → (2,2,4,2)"
    tensor_shape_str(&st->t, shape, sizeof shape);
    snprintf(key, sizeof key, "name.%s", st->name);
    int o = st->operands[0];
    if (o >= 0 && (st->kind == STAGE_KIND_SPLIT || st->kind == STAGE_KIND_CONCAT)) {
        char os[32], ok[48];
        tensor_shape_str(&tr->stages[o].t, os, sizeof os);
        snprintf(ok, sizeof ok, "name.%s", tr->stages[o].name);
        snprintf(badge, sizeof badge, "%s %s → %s", i18n_get(lang, ok), os, shape);
    } else {
        snprintf(badge, sizeof badge, "%s %s", i18n_get(lang, key), shape);
    }
    int bw, bh;
    text_size(f, r, FONT_MONO, L->px_body, badge, &bw, &bh);
    int bx = h.x + tw + px_i(L->s, 20), pad = px_i(L->s, 6);
    fill(r, ACCENT_LIGHT, 255, bx, h.y + (L->px_title * 13 / 10 - bh) / 2 - 2, bw + 2 * pad, bh + 4);
    text_draw(f, r, FONT_MONO, L->px_body, col(ACCENT, 255), bx + pad,
              h.y + (L->px_title * 13 / 10 - bh) / 2, ALIGN_LEFT, badge);
    // formula + the actual numbers it uses
    char extra[120] = "", a[32], b2[32], formula[300];
    if (st->kind == STAGE_KIND_SCORES) {
        float sq = sqrtf((float)tr->d_k);
        if (fabsf(tr->scale - sq) < 1e-5f * sq) {
            snprintf(a, sizeof a, "%d", tr->d_k);
            snprintf(b2, sizeof b2, "%.3f", (double)tr->scale);
            const char *args[] = {a, b2};
            i18n_fmt(extra, sizeof extra, lang, "fx.scale_sqrt", 2, args);
        } else if (tr->scale == 1.0f) {
            i18n_fmt(extra, sizeof extra, lang, "fx.scale_one", 0, NULL);
        } else {
            snprintf(a, sizeof a, "%g", (double)tr->scale);
            const char *args[] = {a};
            i18n_fmt(extra, sizeof extra, lang, "fx.scale_custom", 1, args);
        }
    } else if (st->kind == STAGE_KIND_MASKED) {
        if (tr->mask_kind != 0) {
            mask_label(tr, a, sizeof a);
            const char *args[] = {a};
            i18n_fmt(extra, sizeof extra, lang, "fx.fill", 1, args);
        } else {
            i18n_fmt(extra, sizeof extra, lang, "fx.no_mask", 0, NULL);
        }
    } else if (st->kind == STAGE_KIND_ADD_NORM || st->kind == STAGE_KIND_FFN_OUT) {
        snprintf(a, sizeof a, "%g", (double)tr->norm_eps);
        const char *args[] = {a};
        i18n_fmt(extra, sizeof extra, lang, "fx.eps", 1, args);
    }
    // formulas are code, but a few are words: formula.<stage> translates those
    snprintf(key, sizeof key, "formula.%s", st->name);
    const char *fx = i18n_lookup(lang, key);
    snprintf(formula, sizeof formula, "%s   %s", fx ? fx : st->formula ? st->formula : "", extra);
    text_draw(f, r, FONT_SANS, L->px_formula, col(INK, 255), h.x, h.y + L->px_title * 14 / 10,
              ALIGN_LEFT, formula);
    SDL_RenderSetClipRect(r, NULL);
}

// Overall eased progress and per-cell progress of the result's animation.
static float cell_progress(StageKind k, float e, int row, int c, int rows, int cols)
{
    switch (k) {
    case STAGE_KIND_PROJECTION:
    case STAGE_KIND_OUT_PROJ:
    case STAGE_KIND_FFN_HIDDEN:
    case STAGE_KIND_FFN_OUT:
    case STAGE_KIND_ADD_NORM:
    case STAGE_KIND_WEIGHTED_SUM:
    case STAGE_KIND_SOFTMAX:
        return ease_stagger(e, row, rows, 0.35f);
    case STAGE_KIND_SCORES:
        return ease_stagger(e, row * cols + c, rows * cols, 0.75f);
    case STAGE_KIND_SPLIT:
    case STAGE_KIND_CONCAT:
    case STAGE_KIND_MASKED:
        return 1.0f;
    default:
        return e;
    }
}

// 1, 2, 5, 10, 20, 50, … : the smallest at least n (label spacing)
static int nice_step(int n)
{
    for (int d = 1;; d *= 10) {
        if (n <= d) return d;
        if (n <= 2 * d) return 2 * d;
        if (n <= 5 * d) return 5 * d;
        if (d > 100000) return 10 * d;
    }
}

static void draw_labels(SDL_Renderer *r, Fonts *f, const Layout *L, const View *v, int p, int dx, int dy)
{
    const PanelSpec *ps = &L->spec[p];
    Rect q = L->panel[p];
    q.x += dx, q.y += dy;
    float row_h = (float)L->cell_hq[p] / LAYOUT_Q, col_w = (float)L->cell_wq[p] / LAYOUT_Q;
    int r0, r1, c0, c1;
    layout_visible(L, p, &r0, &r1, &c0, &c1);
    char b[24], fit[96];
    SDL_Color m = col(MUTED, 255);
    // rows: every row while they are tall enough, else every 2nd, 5th, 10th, …
    int px = L->px_small;
    if (!L->image[p] && (float)px > row_h) px = row_h < 10.0f ? 10 : (int)row_h & ~1;
    int th = px * 13 / 10;
    int every = nice_step((int)ceilf((float)th / row_h));
    if (L->row_labels[p]) {
        int lw = L->label_w[p] - px_i(L->s, 6) - 3;
        int margin = L->zoom_y[p] ? 0 : th / 2;
        SDL_RenderSetClipRect(r, &(SDL_Rect){q.x - L->label_w[p], q.y - margin, L->label_w[p] - 3, q.h + 2 * margin});
        for (int i = (r0 + every - 1) / every * every; i <= r1; i += every) {
            const char *t = fit_text(f, r, FONT_SANS, px, layout_axis_label(v, ps->row_axis, i, b, sizeof b), lw, fit,
                                     sizeof fit);
            int tw, hh;
            text_size(f, r, FONT_SANS, px, t, &tw, &hh);
            int y0 = layout_row_y(L, p, i) + dy, y1 = layout_row_y(L, p, i + 1) + dy;
            if ((y0 + y1 - hh) / 2 < q.y - margin || (y0 + y1 + hh) / 2 > q.y + q.h + margin) continue;
            text_draw(f, r, FONT_SANS, px, m, q.x - px_i(L->s, 6), (y0 + y1 - hh) / 2, ALIGN_RIGHT, t);
        }
        SDL_RenderSetClipRect(r, NULL);
    }
    // columns: as many as fit side by side
    px = L->px_small;
    if (!L->image[p] && (float)px > col_w) px = col_w < 10.0f ? 10 : (int)col_w & ~1;
    int wmax = 0, tw, hh;
    for (int j = c0; j <= c1; j += c1 - c0 > 64 ? (c1 - c0) / 64 : 1) {
        text_size(f, r, FONT_SANS, px, layout_axis_label(v, ps->col_axis, j, b, sizeof b), &tw, &hh);
        if (tw > wmax) wmax = tw;
    }
    text_size(f, r, FONT_SANS, px, layout_axis_label(v, ps->col_axis, c1, b, sizeof b), &tw, &hh);
    if (tw > wmax) wmax = tw;
    every = nice_step((int)ceilf((float)(wmax + 4) / col_w));
    // labels may stick out past the ends, unless zoomed (scrolled-out labels) or the Σ column is there
    int margin = L->zoom_x[p] ? 0 : (int)fmaxf(col_w, (float)wmax / 2 + 2);
    int right = ps->row_sums ? 2 : margin;
    SDL_RenderSetClipRect(r, &(SDL_Rect){q.x - margin, q.y - L->col_label_h, q.w + margin + right, L->col_label_h});
    for (int j = (c0 + every - 1) / every * every; j <= c1; j += every) {
        const char *t = layout_axis_label(v, ps->col_axis, j, b, sizeof b);
        text_size(f, r, FONT_SANS, px, t, &tw, &hh);
        int x0 = layout_col_x(L, p, j) + dx, x1 = layout_col_x(L, p, j + 1) + dx;
        if ((x0 + x1 - tw) / 2 < q.x - margin || (x0 + x1 + tw) / 2 > q.x + q.w + right) continue; // never cut a label
        text_draw(f, r, FONT_SANS, px, m, (x0 + x1) / 2, q.y - L->col_label_h + (L->col_label_h - hh) / 2,
                  ALIGN_CENTER, t);
    }
    SDL_RenderSetClipRect(r, NULL);
}

static void draw_caption(SDL_Renderer *r, Fonts *f, const Layout *L, const Trace *tr, const View *v, int p, int dx, int dy)
{
    const PanelSpec *ps = &L->spec[p];
    const Stage *st = &tr->stages[ps->stage];
    char key[48], name[96], dims[64];
    snprintf(key, sizeof key, "%s.%s", ps->is_weight ? "wname" : "name", st->name);
    const char *nm = i18n_get(v->lang, key);
    if (ps->transposed && !ps->is_weight && !strstr(nm, "ᵀ"))
        snprintf(name, sizeof name, "%sᵀ", nm);
    else
        snprintf(name, sizeof name, "%s", nm);
    bool head_panel = ps->head >= 0 && L->n_panels > 3 &&
                      (tr->stages[v->stage].kind == STAGE_KIND_SPLIT || tr->stages[v->stage].kind == STAGE_KIND_CONCAT);
    if (head_panel) {
        char hb[16];
        snprintf(hb, sizeof hb, "%d", ps->head);
        const char *args[] = {hb};
        i18n_fmt(name, sizeof name, v->lang, "name.head", 1, args);
    } else if (ps->head >= 0) {
        size_t len = strlen(name);
        snprintf(name + len, sizeof name - len, " · h%d", ps->head % 1000);
    }
    snprintf(dims, sizeof dims, "%d×%d", ps->rows, ps->cols);
    if (L->zoom_x[p] || L->zoom_y[p]) { // "256×256 · zoom 4×"
        char z[24], zt[48];
        snprintf(z, sizeof z, "%.3g", (double)fminf(v->zoom, layout_max_zoom(L, p)));
        const char *args[] = {z};
        i18n_fmt(zt, sizeof zt, v->lang, "ui.zoomed", 1, args);
        size_t len = strlen(dims);
        snprintf(dims + len, sizeof dims - len, " · %s", zt);
    }
    // centred over the cells, shifted to stay within half the gap to each neighbour;
    // what still does not fit loses its dimensions, then is ellipsized (never cut)
    Rect q = L->caption[p];
    q.x += dx, q.y += dy;
    int lo = p > 0 ? (L->caption[p - 1].x + L->caption[p - 1].w + L->caption[p].x) / 2 + px_i(L->s, 3) + dx
                   : L->area.x;
    int hi = p + 1 < L->n_panels ? (L->caption[p].x + L->caption[p].w + L->caption[p + 1].x) / 2 - px_i(L->s, 3) + dx
                                 : L->area.x + L->area.w;
    if (lo > q.x + L->label_w[p]) lo = q.x + L->label_w[p];
    if (hi < q.x + q.w) hi = q.x + q.w;
    Rgb nc = head_panel ? colormap_head(ps->head) : ps->result ? ACCENT : INK;
    if (head_panel) { // head colour is light for some heads: darken for text
        nc = colormap_lerp(nc, (Rgb){0, 0, 0}, 0.25f);
    }
    int tw, th, dw, dh, gap = px_i(L->s, 8);
    char fit[sizeof name];
    const char *shown = fit_text(f, r, FONT_BOLD, L->px_body, name, hi - lo, fit, sizeof fit);
    if (shown != name) snprintf(name, sizeof name, "%s", shown);
    text_size(f, r, FONT_BOLD, L->px_body, name, &tw, &th);
    text_size(f, r, FONT_SANS, L->px_small, dims, &dw, &dh);
    int total = tw + gap + dw;
    if (total > hi - lo) total = tw, dw = -1; // no room: the name alone
    int centre = L->panel[p].x + dx + (L->panel[p].w + L->sum_w[p]) / 2;
    int x = centre - total / 2;
    if (x + total > hi) x = hi - total;
    if (x < lo) x = lo;
    SDL_RenderSetClipRect(r, &(SDL_Rect){lo, q.y, hi - lo, q.h});
    text_draw(f, r, FONT_BOLD, L->px_body, col(nc, 255), x, q.y + (q.h - th) / 2, ALIGN_LEFT, name);
    if (dw >= 0)
        text_draw(f, r, FONT_SANS, L->px_small, col(MUTED, 255), x + tw + gap, q.y + (q.h - th) / 2 + (th - dh) * 2 / 3,
                  ALIGN_LEFT, dims);
    SDL_RenderSetClipRect(r, NULL);
}

// How cell (i, j) of panel p looks at eased progress e of the stage's transition.
typedef struct CellState {
    Rgb color;  // its colour once shown
    float show; // 0..1 how far it has appeared
    bool masked;
    float val;  // the number it shows
} CellState;

static CellState cell_state(const Layout *L, StageKind k, int p, int i, int j, float e, bool animate)
{
    const PanelSpec *ps = &L->spec[p];
    CellLook look = render_cell_look(ps, i, j);
    CellState cs = {render_cell_color(ps, i, j), 1.0f, look == CELL_MASKED, panel_value(ps, i, j)};
    if (!animate) return cs;
    cs.show = cell_progress(k, e, i, j, ps->rows, ps->cols);
    if (k == STAGE_KIND_CONCAT && L->image[p] && ps->block_cols > 0) {
        // head blocks fade in one after another (cells fly in only when drawn as cells)
        cs.show = ease_in_out_cubic(ease_stagger(e, j / ps->block_cols, ps->head_blocks, 0.4f));
    } else if (k == STAGE_KIND_MASKED && look == CELL_MASKED) {
        // fade from the score's colour to the masked look, row by row
        float m = ease_stagger(e, i, ps->rows, 0.5f);
        const PanelSpec *src = &L->spec[0];
        Rgb from = colormap_value(&src->scale, panel_value(src, i, j));
        cs.color = colormap_lerp(from, colormap_masked(), m);
        cs.masked = m > 0.5f;
        if (!cs.masked) cs.val = panel_value(src, i, j);
        cs.show = 1.0f;
    } else if (k == STAGE_KIND_SOFTMAX) {
        // each row turns from its scores' colours into a distribution
        const PanelSpec *src = &L->spec[0];
        float sv = panel_value(src, i, j);
        Rgb from = render_cell_look(src, i, j) == CELL_MASKED ? colormap_masked() : colormap_value(&src->scale, sv);
        cs.color = colormap_lerp(from, cs.color, cs.show);
        if (cs.show < 0.5f) cs.val = sv;
        cs.show = 1.0f;
    }
    return cs;
}

typedef struct ImageCtx {
    const Layout *L;
    StageKind k;
    int p;
    float e;
    bool animate;
} ImageCtx;

static Rgb image_color(const void *ctx, int row, int col)
{
    const ImageCtx *c = ctx;
    CellState cs = cell_state(c->L, c->k, c->p, row, col, c->e, c->animate);
    return cs.show >= 1.0f ? cs.color : colormap_lerp(EMPTY, cs.color, cs.show);
}

// A frame of thickness t around rows [y, y + h) or columns of panel p, clipped to the panel (± t).
static void frame_in_panel(SDL_Renderer *r, const Layout *L, int p, int x, int y, int w, int h, int t)
{
    Rect q = L->panel[p];
    SDL_Rect clip = {q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t};
    SDL_Rect band = {x - t, y - t, w + 2 * t, h + 2 * t};
    if (!SDL_HasIntersection(&clip, &band)) return;
    SDL_RenderSetClipRect(r, &clip);
    frame(r, HILITE, 255, band.x, band.y, band.w, band.h, t);
    SDL_RenderSetClipRect(r, NULL);
}

static void frame_row(SDL_Renderer *r, const Layout *L, int p, int row, int t)
{
    int y0 = layout_row_y(L, p, row), y1 = layout_row_y(L, p, row + 1);
    frame_in_panel(r, L, p, L->panel[p].x, y0, L->panel[p].w, y1 - y0, t);
}

static void frame_col(SDL_Renderer *r, const Layout *L, int p, int c, int t)
{
    int x0 = layout_col_x(L, p, c), x1 = layout_col_x(L, p, c + 1);
    frame_in_panel(r, L, p, x0, L->panel[p].y, x1 - x0, L->panel[p].h, t);
}

static void draw_panel(SDL_Renderer *r, Fonts *f, const Layout *L, const Trace *tr, const View *v,
                       int p, float e, char *mask_text)
{
    const PanelSpec *ps = &L->spec[p];
    const Stage *cur = &tr->stages[v->stage];
    StageKind k = cur->kind;
    Rect q = L->panel[p];
    bool animate = ps->result && e < 1.0f;
    // split / concat: slide whole head blocks between panels
    int dx = 0, dy = 0;
    int nh = 0;
    for (int i = 0; i < L->n_panels; i++) nh += L->spec[i].result && L->spec[i].head >= 0;
    if (animate && k == STAGE_KIND_SPLIT && L->n_panels > 1 && L->spec[0].head_blocks > 0) {
        float ek = ease_in_out_cubic(ease_stagger(e, ps->head, nh > 0 ? nh : 1, 0.4f));
        int sx = layout_col_x(L, 0, ps->head * L->spec[0].block_cols), sy = L->panel[0].y;
        dx = (int)lrintf((float)(sx - q.x) * (1.0f - ek));
        dy = (int)lrintf((float)(sy - q.y) * (1.0f - ek));
    }
    // operator symbol to the left
    if (ps->op_before && ps->op_before[0] && L->op[p].w > 0) {
        Rect o = L->op[p];
        text_draw_centered(f, r, FONT_SANS, L->px_op, col(MUTED, 255), (SDL_Rect){o.x, o.y, o.w, o.h}, ps->op_before);
    }
    draw_caption(r, f, L, tr, v, p, dx, dy);
    if (dx == 0 && dy == 0) draw_labels(r, f, L, v, p, dx, dy); // not while sliding

    // head-coloured blocks over the columns (split source, concat result)
    if (ps->head_blocks > 0 && ps->block_cols > 0) {
        int bar = px_i(L->s, 5);
        for (int h = 0; h < ps->head_blocks; h++) {
            int x0 = layout_col_x(L, p, h * ps->block_cols), x1 = layout_col_x(L, p, (h + 1) * ps->block_cols);
            if (x0 < q.x) x0 = q.x;
            if (x1 > q.x + q.w) x1 = q.x + q.w;
            if (x1 - x0 > 2) fill(r, colormap_head(h), 255, x0 + 1, q.y - bar - 1, x1 - x0 - 2, bar);
        }
    }
    SDL_Rect clip = {q.x + dx, q.y + dy, q.w, q.h};
    bool zoomed = L->zoom_x[p] || L->zoom_y[p];
    if (L->image[p]) {
        ImageCtx ic = {L, k, p, e, animate};
        const float key[4] = {animate ? e : 1.0f, (float)k, animate ? 1.0f : 0.0f, (float)v->stage};
        heatmap_draw_image(r, v->heatmaps, L, p, dx, dy, key, image_color, &ic);
    } else {
        char num[32];
        int r0, r1, c0, c1;
        layout_visible(L, p, &r0, &r1, &c0, &c1);
        if (zoomed) SDL_RenderSetClipRect(r, &clip);
        // the grid under the cells (shows through the 1 px gaps of cells >= 10 px)
        if (!animate || (k != STAGE_KIND_CONCAT && k != STAGE_KIND_SPLIT)) {
            int gx0 = layout_col_x(L, p, c0), gx1 = layout_col_x(L, p, c1 + 1);
            int gy0 = layout_row_y(L, p, r0), gy1 = layout_row_y(L, p, r1 + 1);
            int cw = gx1 - gx0, ch = gy1 - gy0, nc = c1 - c0 + 1, nr = r1 - r0 + 1;
            if (render_cell_gap(cw / (nc > 0 ? nc : 1) < ch / (nr > 0 ? nr : 1) ? cw / (nc > 0 ? nc : 1)
                                                                                : ch / (nr > 0 ? nr : 1)) > 0)
                fill(r, GRID, 255, gx0 + dx, gy0 + dy, cw, ch);
        }
        for (int i = r0; i <= r1; i++) {
            int y0 = layout_row_y(L, p, i), y1 = layout_row_y(L, p, i + 1);
            for (int j = c0; j <= c1; j++) {
                int x0 = layout_col_x(L, p, j), x1 = layout_col_x(L, p, j + 1);
                CellLook look = render_cell_look(ps, i, j);
                CellState cs = cell_state(L, k, p, i, j, e, animate);
                CellDraw d = {x0 + dx, y0 + dy, x1 - x0, y1 - y0, cs.color, cs.show, cs.masked, look == CELL_NAN,
                              NULL, ps->px_cell, zoomed ? &clip : NULL};
                if (animate && k == STAGE_KIND_CONCAT && ps->block_cols > 0) {
                    // block h of the result arrives from head panel h
                    int h = j / ps->block_cols;
                    if (h < L->n_panels - 1) {
                        float ek = ease_in_out_cubic(ease_stagger(e, h, ps->head_blocks, 0.4f));
                        d.x += (int)lrintf((float)(layout_col_x(L, h, j % ps->block_cols) - x0) * (1.0f - ek));
                        d.y += (int)lrintf((float)(layout_row_y(L, h, i) - y0) * (1.0f - ek));
                    }
                }
                if (look == CELL_MASKED && ps->mask != ps->data && (!animate || k != STAGE_KIND_MASKED || cs.masked)) {
                    d.text = ps->decimals >= 0 && v->show_values ? mask_text : NULL;
                } else if ((v->show_values && ps->decimals >= 0) || (isnan(cs.val) && ps->decimals >= 0)) {
                    format_cell(cs.val, ps->decimals, num, sizeof num);
                    d.text = num;
                }
                draw_cell(r, f, &d, L->s);
            }
        }
        if (zoomed) SDL_RenderSetClipRect(r, NULL);
    }
    // softmax: the Σ column, growing to 1 as each row is transformed
    if (ps->row_sums && L->sum_w[p] > 0) {
        char num[32];
        int x = q.x + q.w + (int)(6 * L->s) + dx, sw = L->sum_w[p];
        text_draw_centered(f, r, FONT_BOLD, L->px_small, col(MUTED, 255),
                           (SDL_Rect){x, q.y - L->col_label_h, sw, L->col_label_h}, i18n_get(v->lang, "ui.rowsum"));
        int r0, r1, c0, c1;
        layout_visible(L, p, &r0, &r1, &c0, &c1);
        SDL_Rect sclip = {x, q.y + dy, sw, q.h};
        SDL_RenderSetClipRect(r, &sclip);
        for (int i = r0; i <= r1; i++) {
            int y0 = layout_row_y(L, p, i), y1 = layout_row_y(L, p, i + 1);
            if (y1 <= y0) continue;
            float sum = 0.0f;
            for (int j = 0; j < ps->cols; j++) sum += panel_value(ps, i, j);
            float pr = animate ? cell_progress(k, e, i, 0, ps->rows, 1) : 1.0f;
            float shown = isnan(sum) ? sum : sum * pr;
            CellDraw d = {x, y0 + dy, sw, y1 - y0, colormap_value(&ps->scale, shown), 1.0f, false, isnan(sum), NULL,
                          L->sum_px[p], &sclip};
            if (L->sum_decimals[p] >= 0) {
                format_cell(shown, L->sum_decimals[p], num, sizeof num);
                d.text = num;
            }
            draw_cell(r, f, &d, L->s);
        }
        SDL_RenderSetClipRect(r, NULL);
    }
    // head frame for per-head panels of split / concat
    if (ps->head >= 0 && (k == STAGE_KIND_SPLIT || k == STAGE_KIND_CONCAT) && L->n_panels > 2) {
        int t = ps->head == v->head ? px_i(L->s, 4) : px_i(L->s, 2);
        frame(r, colormap_head(ps->head), 255, q.x + dx - t, q.y + dy - t, q.w + 2 * t, q.h + 2 * t, t);
    }
    // the row being computed, while animating
    if (animate && ps->rows > 0) {
        bool rows_kind = k == STAGE_KIND_PROJECTION || k == STAGE_KIND_OUT_PROJ || k == STAGE_KIND_FFN_HIDDEN ||
                         k == STAGE_KIND_FFN_OUT || k == STAGE_KIND_WEIGHTED_SUM || k == STAGE_KIND_SOFTMAX ||
                         k == STAGE_KIND_ADD_NORM || k == STAGE_KIND_SCORES;
        if (rows_kind) {
            int n = k == STAGE_KIND_SCORES ? ps->rows * ps->cols : ps->rows;
            int idx = (int)(e * (float)n);
            if (idx >= n) idx = n - 1;
            int row = k == STAGE_KIND_SCORES ? idx / ps->cols : idx;
            int t = px_i(L->s, 3);
            // result row, and the operand row it reads
            frame_row(r, L, p, row, t);
            const PanelSpec *a = &L->spec[0];
            if (!a->result && row < a->rows) frame_row(r, L, 0, row, t);
            if (k == STAGE_KIND_SCORES && L->n_panels >= 3 && !L->spec[1].result) {
                int colk = idx % ps->cols;
                if (colk < L->spec[1].cols) frame_col(r, L, 1, colk, t);
            }
        }
    }
}

static void draw_legend(SDL_Renderer *r, Fonts *f, const Layout *L, const Trace *tr, const View *v, const char *mask_text)
{
    Rect g = L->legend;
    int rp = L->result_panel >= 0 ? L->result_panel : 0;
    if (L->n_panels == 0) return;
    const PanelSpec *ps = &L->spec[rp];
    const Stage *st = &tr->stages[ps->stage];
    char key[48], line[160];
    snprintf(key, sizeof key, "name.%s", st->name);
    const char *args[] = {i18n_get(v->lang, key)};
    i18n_fmt(line, sizeof line, v->lang, "ui.legend", 1, args);
    int pad = px_i(L->s, 8);
    fill(r, NARR_BG, 255, g.x, g.y, g.w, g.h);
    SDL_RenderSetClipRect(r, &(SDL_Rect){g.x, g.y, g.w, g.h});
    text_draw(f, r, FONT_BOLD, L->px_small, col(INK, 255), g.x + pad, g.y + pad / 2, ALIGN_LEFT, line);
    int by = g.y + pad / 2 + L->px_small * 14 / 10, bh = px_i(L->s, 20), bw = g.w - 2 * pad;
    const int N = 48;
    for (int i = 0; i < N; i++) {
        float t = ((float)i + 0.5f) / (float)N;
        Rgb c = ps->scale.sequential ? colormap_sequential(ps->scale.palette, t)
                                     : colormap_diverging(ps->scale.palette, 2.0f * t - 1.0f);
        int x0 = g.x + pad + bw * i / N, x1 = g.x + pad + bw * (i + 1) / N;
        fill(r, c, 255, x0, by, x1 - x0, bh);
    }
    char lo[32], mid[32], hi[32];
    explain_number(ps->scale.lo, lo, sizeof lo);
    explain_number(ps->scale.sequential ? 0.5f * (ps->scale.lo + ps->scale.hi) : 0.0f, mid, sizeof mid);
    explain_number(ps->scale.hi, hi, sizeof hi);
    int ly = by + bh + 2;
    SDL_Color ink = col(INK, 255);
    text_draw(f, r, FONT_MONO, L->px_small, ink, g.x + pad, ly, ALIGN_LEFT, lo);
    text_draw(f, r, FONT_MONO, L->px_small, ink, g.x + pad + bw / 2, ly, ALIGN_CENTER, mid);
    text_draw(f, r, FONT_MONO, L->px_small, ink, g.x + pad + bw, ly, ALIGN_RIGHT, hi);
    // swatches for the special looks present in this frame
    bool any_mask = false, any_nan = false;
    for (int p = 0; p < L->n_panels; p++) any_mask |= L->spec[p].any_masked, any_nan |= L->spec[p].any_nan;
    int sy = ly + L->px_small * 13 / 10 + px_i(L->s, 2), sw = px_i(L->s, 22), x = g.x + pad;
    if (any_mask) {
        fill(r, colormap_masked(), 255, x, sy, sw, sw);
        int hs = sw < 16 ? 16 : sw;
        hatch(r, x, sy, hs, hs, 255, L->s, &(SDL_Rect){g.x, g.y, g.w, g.h});
        const char *a2[] = {mask_text};
        i18n_fmt(line, sizeof line, v->lang, "ui.masked", 1, a2);
        x += sw + pad / 2;
        x += text_draw(f, r, FONT_SANS, L->px_small, ink, x, sy, ALIGN_LEFT, line) + pad * 2;
    }
    if (any_nan) {
        snprintf(line, sizeof line, "NaN = %s", i18n_get(v->lang, "ui.nan"));
        int tw, th;
        text_size(f, r, FONT_SANS, L->px_small, line, &tw, &th);
        if (x + sw + pad / 2 + tw > g.x + g.w - pad && x > g.x + pad) { // next line
            x = g.x + pad;
            sy += sw + pad / 2;
        }
        fill(r, colormap_nan(), 255, x, sy, sw, sw);
        x += sw + pad / 2;
        text_draw(f, r, FONT_SANS, L->px_small, ink, x, sy, ALIGN_LEFT, line);
    }
    SDL_RenderSetClipRect(r, NULL);
}

static void draw_narration(SDL_Renderer *r, Fonts *f, const Layout *L, const Trace *tr, const View *v)
{
    if (v->stage < 0 || v->stage >= tr->n) return;
    const Stage *st = &tr->stages[v->stage];
    Rect g = L->narration;
    int pad = px_i(L->s, 10);
    fill(r, NARR_BG, 255, g.x, g.y, g.w, g.h);
    fill(r, ACCENT, 255, g.x, g.y, px_i(L->s, 4), g.h);
    const char *text = v->lesson ? lesson_step_text(v->lesson, st->name, v->lang) : NULL;
    if (!text && v->lesson) text = lesson_step_text(v->lesson, step_name(st->step), v->lang);
    char buf[600];
    if (!text) {
        char key[48], a[16], b[16], c[16];
        snprintf(key, sizeof key, "narr.%s", st->name);
        snprintf(a, sizeof a, "%d", st->kind == STAGE_KIND_SPLIT && st->operands[0] >= 0
                                        ? tr->stages[st->operands[0]].t.shape[2]
                                        : tr->d_model);
        snprintf(b, sizeof b, "%d", tr->n_heads);
        snprintf(c, sizeof c, "%d", st->t.rank == 4 ? st->t.shape[3] : tr->d_k);
        const char *args[] = {a, b, c};
        i18n_fmt(buf, sizeof buf, v->lang, key, 3, args);
        text = buf;
    }
    int x = g.x + pad + px_i(L->s, 4);
    int th = L->px_small * 13 / 10;
    text_draw(f, r, FONT_BOLD, L->px_small, col(ACCENT, 255), x, g.y + pad / 2, ALIGN_LEFT,
              i18n_get(v->lang, "ui.what"));
    SDL_Rect box = {x, g.y + pad / 2 + th, g.w - (x - g.x) - pad, g.h - pad - th};
    text_draw_wrapped(f, r, FONT_SANS, L->px_body, L->px_small - 2, col(INK, 255), box, text);
}

static void draw_hover(SDL_Renderer *r, Fonts *f, const Layout *L, const Trace *tr, const View *v)
{
    int p, row, c;
    if (!v->hover || !layout_hit_cell(L, v->mouse_x, v->mouse_y, &p, &row, &c)) return;
    const PanelSpec *ps = &L->spec[p];
    int t = px_i(L->s, 3);
    Rect q;
    layout_cell_rect(L, p, row, c, &q);
    // what it reads: operand row and weight/Kᵀ/V column
    if (ps->result && L->n_panels >= 2 && p > 0) {
        StageKind k = tr->stages[ps->stage].kind;
        const PanelSpec *a = &L->spec[0];
        bool rowwise = k != STAGE_KIND_SPLIT && k != STAGE_KIND_CONCAT;
        if (rowwise && !a->result && row < a->rows) frame_row(r, L, 0, row, t);
        if (rowwise && L->n_panels >= 3 && !L->spec[1].result && p == 2 && k != STAGE_KIND_ADD_NORM &&
            k != STAGE_KIND_MASKED && c < L->spec[1].cols)
            frame_col(r, L, 1, c, t);
    }
    Rect pq = L->panel[p];
    SDL_RenderSetClipRect(r, &(SDL_Rect){pq.x - t, pq.y - t, pq.w + 2 * t, pq.h + 2 * t});
    frame(r, INK, 255, q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t, t);
    SDL_RenderSetClipRect(r, NULL);
    char tip[TIP_MAX];
    explain_cell(tr, v, L, p, row, c, tip, sizeof tip);
    int wrap = L->w * 45 / 100, tw, th;
    SDL_Texture *tex = text_texture(f, r, FONT_SANS, L->px_body, wrap, tip, &tw, &th);
    if (!tex) return;
    int pad = px_i(L->s, 10);
    int bx = v->mouse_x + px_i(L->s, 18), by = v->mouse_y + px_i(L->s, 18);
    if (bx + tw + 2 * pad > L->w) bx = v->mouse_x - tw - 2 * pad - px_i(L->s, 10);
    if (by + th + 2 * pad > L->h) by = L->h - th - 2 * pad;
    if (bx < 0) bx = 0;
    if (by < 0) by = 0;
    fill(r, (Rgb){0, 0, 0}, 40, bx + 3, by + 3, tw + 2 * pad, th + 2 * pad);
    fill(r, (Rgb){255, 255, 250}, 255, bx, by, tw + 2 * pad, th + 2 * pad);
    frame(r, INK, 255, bx, by, tw + 2 * pad, th + 2 * pad, 1);
    SDL_SetTextureColorMod(tex, INK.r, INK.g, INK.b);
    SDL_SetTextureAlphaMod(tex, 255);
    SDL_RenderCopy(r, tex, NULL, &(SDL_Rect){bx + pad, by + pad, tw, th});
}

static void draw_help(SDL_Renderer *r, Fonts *f, const Layout *L, const View *v)
{
    fill(r, (Rgb){0, 0, 0}, 150, 0, 0, L->w, L->h);
    int bw = L->w * 78 / 100, bh = L->h * 86 / 100;
    int bx = (L->w - bw) / 2, by = (L->h - bh) / 2, pad = px_i(L->s, 20);
    fill(r, (Rgb){255, 255, 255}, 255, bx, by, bw, bh);
    frame(r, ACCENT, 255, bx, by, bw, bh, px_i(L->s, 3));
    int px = L->px_help;
    const char *body = i18n_get(v->lang, "help.body");
    // count lines to fit the box
    int lines = 1;
    for (const char *p = body; *p; p++) lines += *p == '\n';
    int avail = bh - 2 * pad - L->px_title * 2 - px * 2;
    while (px > 10 && lines * px * 13 / 10 > avail) px -= 2;
    text_draw(f, r, FONT_BOLD, L->px_title, col(ACCENT, 255), bx + pad, by + pad, ALIGN_LEFT, i18n_get(v->lang, "help.title"));
    int y = by + pad + L->px_title * 17 / 10, keyw = bw * 27 / 100;
    char line[400];
    SDL_RenderSetClipRect(r, &(SDL_Rect){bx, by, bw, bh});
    for (const char *p = body; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n >= sizeof line) n = sizeof line - 1;
        memcpy(line, p, n);
        line[n] = '\0';
        char *tab = strchr(line, '\t');
        if (tab) *tab = '\0';
        text_draw(f, r, FONT_BOLD, px, col(INK, 255), bx + pad, y, ALIGN_LEFT, line);
        if (tab) {
            SDL_Rect box = {bx + pad + keyw, y, bw - 2 * pad - keyw, px * 3};
            y += text_draw_wrapped(f, r, FONT_SANS, px, px, col(INK, 255), box, tab + 1) - px * 13 / 10;
        }
        y += px * 13 / 10;
        p = nl ? nl + 1 : p + n;
    }
    text_draw(f, r, FONT_SANS, L->px_small, col(MUTED, 255), bx + bw / 2, by + bh - pad - L->px_small * 13 / 10,
              ALIGN_CENTER, i18n_get(v->lang, "help.close"));
    SDL_RenderSetClipRect(r, NULL);
}

static void draw_toast(SDL_Renderer *r, Fonts *f, const Layout *L, const View *v)
{
    if (!v->toast || !v->toast[0] || v->toast_alpha <= 0.0f) return;
    Uint8 a = (Uint8)(255.0f * ease_clamp01(v->toast_alpha));
    int tw, th, pad = px_i(L->s, 12);
    SDL_Texture *t = text_texture(f, r, FONT_SANS, L->px_body, L->w - 4 * pad, v->toast, &tw, &th);
    if (!t) return;
    int bx = (L->w - tw) / 2 - pad, by = L->narration.y - th - 3 * pad;
    if (by < 0) by = 0;
    fill(r, (Rgb){30, 30, 34}, (Uint8)(a * 9 / 10), bx, by, tw + 2 * pad, th + 2 * pad);
    SDL_SetTextureColorMod(t, 255, 255, 255);
    SDL_SetTextureAlphaMod(t, a);
    SDL_RenderCopy(r, t, NULL, &(SDL_Rect){bx + pad, by + pad, tw, th});
}

// The window's export (E): frames done of total, over the heatmaps.
static void draw_export_progress(SDL_Renderer *r, Fonts *f, const Layout *L, const View *v)
{
    if (v->export_total <= 0) return;
    char a[16], b[16], line[160];
    snprintf(a, sizeof a, "%d", v->export_done);
    snprintf(b, sizeof b, "%d", v->export_total);
    const char *args[] = {a, b};
    i18n_fmt(line, sizeof line, v->lang, "app.exporting", 2, args);
    int pad = px_i(L->s, 16), tw, th;
    text_size(f, r, FONT_BOLD, L->px_body, line, &tw, &th);
    int bw = tw + 2 * pad, bar = px_i(L->s, 12);
    if (bw < L->w / 3) bw = L->w / 3;
    int bh = th + bar + 3 * pad;
    int bx = (L->w - bw) / 2, by = L->area.y + (L->area.h - bh) / 2;
    fill(r, (Rgb){0, 0, 0}, 40, bx + 4, by + 4, bw, bh);
    fill(r, (Rgb){255, 255, 255}, 255, bx, by, bw, bh);
    frame(r, ACCENT, 255, bx, by, bw, bh, px_i(L->s, 2));
    text_draw(f, r, FONT_BOLD, L->px_body, col(INK, 255), bx + bw / 2, by + pad, ALIGN_CENTER, line);
    int x = bx + pad, y = by + 2 * pad + th, w = bw - 2 * pad;
    fill(r, SLOT, 255, x, y, w, bar);
    int done = v->export_done > v->export_total ? v->export_total : v->export_done;
    fill(r, ACCENT, 255, x, y, (int)((long)w * done / v->export_total), bar);
}

void render_frame(SDL_Renderer *r, Fonts *f, const Trace *tr, const View *v)
{
    int w = 0, h = 0;
    SDL_GetRendererOutputSize(r, &w, &h);
    Layout L;
    layout_compute(&L, tr, v, w, h);
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
    SDL_SetRenderDrawColor(r, BG.r, BG.g, BG.b, 255);
    SDL_RenderClear(r);
    if (tr->n == 0) return;
    float e = ease_in_out_cubic(v->anim);
    char mask_text[32];
    mask_label(tr, mask_text, sizeof mask_text);
    draw_timeline(r, f, &L, tr, v);
    draw_tabs(r, f, &L, tr, v);
    picker_draw_button(r, f, &L, v);
    draw_header(r, f, &L, tr, v);
    for (int p = 0; p < L.n_panels; p++) draw_panel(r, f, &L, tr, v, p, e, mask_text);
    draw_legend(r, f, &L, tr, v, mask_text);
    draw_narration(r, f, &L, tr, v);
    if (!v->help) draw_hover(r, f, &L, tr, v);
    if (v->help) draw_help(r, f, &L, v);
    picker_draw(r, f, &L, v);
    draw_export_progress(r, f, &L, v);
    draw_toast(r, f, &L, v);
}
