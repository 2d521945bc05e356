// chrome.c — the chrome around the heatmaps: timeline, tabs + status, help, toast,
// export progress; the header, the legend and the narration (see chrome.h).
#include "chrome.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cellmark.h"
#include "i18n.h"
#include "keymap.h"
#include "labmenu.h"
#include "picker.h"
#include "playback.h"
#include "scene.h"
#include "study.h"
#include "tip.h"
#include "viewkind.h"

// An experiment's frame: one row in the timeline's place, lit as the current item, naming what is
// on screen (left) and how to go back to the stages (right, where it fits).
static void draw_view_row(Canvas *cv, const Layout *L, const Frame *F)
{
    const Rect q = L->timeline;
    const int pad = paint_px(L->s, 14);
    paint_fill(cv, THEME.accent, 255, q.x, q.y, q.w, q.h);
    paint_clip(cv, &q);
    int tw, th, bw, bh;
    paint_text_size(cv, FONT_BOLD, L->px_body, F->view_row, &tw, &th);
    paint_text(cv, FONT_BOLD, L->px_body, THEME.white, 255, q.x + pad, q.y + (q.h - th) / 2, ALIGN_LEFT, F->view_row);
    paint_text_size(cv, FONT_SANS, L->px_small, F->view_back, &bw, &bh);
    if (tw + bw + 3 * pad <= q.w)
        paint_text(cv, FONT_SANS, L->px_small, THEME.white, 255, q.x + q.w - pad - bw, q.y + (q.h - bh) / 2, ALIGN_LEFT,
                   F->view_back);
    paint_clip(cv, NULL);
}

void chrome_draw_timeline(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v)
{
    if (F->view_row[0]) {
        draw_view_row(cv, L, F);
        return;
    }
    StepId cur = v->stage >= 0 && v->stage < tr->n ? tr->stages[v->stage].step : STEP_INPUT;
    for (int i = 0; i < L->n_steps; i++) {
        Rect q = L->step_rect[i];
        StepId id = L->step_id[i];
        bool on = id == cur, past = id < cur;
        paint_fill(cv, on ? THEME.accent : past ? THEME.accent_light : THEME.slot, 255, q.x, q.y, q.w, q.h);
        char label[120], num[12];
        const char *name = i18n_get(v->lang, F->step_key[i]);
        snprintf(num, sizeof num, "%d", i + 1);
        snprintf(label, sizeof label, "%s  %s", num, name);
        Rgb tc = on ? THEME.white : THEME.ink;
        FontFace face = on ? FONT_BOLD : FONT_SANS;
        int dots_h = paint_px(L->s, 12), avail_w = q.w - paint_px(L->s, 8);
        Rect box = {q.x, q.y, q.w, q.h - dots_h + paint_px(L->s, 2)};
        paint_clip(cv, &(Rect){q.x, q.y, q.w, q.h});
        // "N  Name" on one line, from the body size down to the small size; then
        // "N Name"; then regular instead of bold; at last "N Name" on two lines. The
        // number always stays: it is the key that jumps there (two digits for 10, 11).
        // Text never gets smaller than px_small.
        int px = L->px_body, tw, th;
        paint_text_size(cv, face, px, label, &tw, &th);
        while (tw > avail_w && px > L->px_small) paint_text_size(cv, face, --px, label, &tw, &th);
        if (tw > avail_w) {
            snprintf(label, sizeof label, "%s %s", num, name);
            paint_text_size(cv, face, px, label, &tw, &th);
        }
        if (tw > avail_w && face == FONT_BOLD) { // the current step: regular is narrower than bold
            face = FONT_SANS;
            for (px = L->px_body, paint_text_size(cv, face, px, label, &tw, &th); tw > avail_w && px > L->px_small;)
                paint_text_size(cv, face, --px, label, &tw, &th);
        }
        if (tw <= avail_w) {
            paint_text_centered(cv, face, px, tc, 255, box, label);
        } else { // two lines, cut at the space nearest the middle, each centred
            char l1[96];
            size_t n = strlen(label), cut = 0;
            for (size_t k = 1; k < n && k < sizeof l1; k++)
                if (label[k] == ' ' && (cut == 0 || (k > n / 2 ? k - n / 2 : n / 2 - k) < (cut > n / 2 ? cut - n / 2 : n / 2 - cut)))
                    cut = k;
            if (cut == 0) cut = n < sizeof l1 ? n : sizeof l1 - 1;
            memcpy(l1, label, cut);
            l1[cut] = '\0';
            const char *l2 = label[cut] ? label + cut + 1 : "";
            while (px > LAYOUT_MIN_TEXT_PX && 2 * (px * 6 / 5) + dots_h > q.h) px--; // above the dots
            int lh = px * 6 / 5, y = q.y + (q.h - dots_h - 2 * lh) / 2;
            if (y < q.y) y = q.y;
            paint_text_centered(cv, face, px, tc, 255, (Rect){q.x, y, q.w, lh}, l1);
            paint_text_centered(cv, face, px, tc, 255, (Rect){q.x, y + lh, q.w, lh}, l2);
        }
        paint_clip(cv, NULL);
        // one dot per stage of the step, the current one filled
        const int layer = trace_layer_at(tr, v->stage);
        int first = trace_step_first(tr, layer, id), n = trace_step_count(tr, layer, id);
        int dot = paint_px(L->s, 7), gap = paint_px(L->s, 5);
        int x0 = q.x + (q.w - n * dot - (n - 1) * gap) / 2, y0 = q.y + q.h - dot - paint_px(L->s, 5);
        for (int k = 0; k < n; k++) {
            bool here = first + k == v->stage;
            Rgb dc = on ? (here ? THEME.white : THEME.dot_here) : THEME.dot_other;
            paint_fill(cv, dc, 255, x0 + k * (dot + gap), y0, dot, dot);
        }
    }
}

void chrome_draw_tabs(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v,
                      const Overlays *ov)
{
    Rgb ink = THEME.ink;
    if (L->n_batch_tabs) // (an experiment's frame may have neither)
        paint_text_centered(cv, FONT_SANS, L->px_body, ink, 255, L->batch_label, i18n_get(v->lang, "ui.batch"));
    if (L->n_head_tabs)
        paint_text_centered(cv, FONT_SANS, L->px_body, ink, 255, L->head_label, i18n_get(v->lang, "ui.head"));
    char b[16];
    for (int i = 0; i < L->n_batch_tabs; i++) {
        Rect q = L->batch_tab[i];
        bool on = i == v->batch;
        paint_fill(cv, on ? THEME.accent : THEME.slot, 255, q.x, q.y, q.w, q.h);
        snprintf(b, sizeof b, "%d", i);
        paint_text_centered(cv, on ? FONT_BOLD : FONT_SANS, L->px_body,
                            on ? THEME.white : ink, 255, q, b);
    }
    const Stage *st = v->stage >= 0 && v->stage < tr->n ? &tr->stages[v->stage] : NULL;
    bool heads_matter = st && (st->t.rank == 4 || F->anim.kind == ANIM_CONCAT);
    for (int i = 0; i < L->n_head_tabs; i++) {
        Rect q = L->head_tab[i];
        bool on = i == v->head;
        paint_fill(cv, on ? THEME.accent : THEME.slot, heads_matter ? 255 : 120, q.x, q.y, q.w, q.h);
        int bar = paint_px(L->s, 5);
        paint_fill(cv, colormap_head(i), 255, q.x, q.y + q.h - bar, q.w, bar);
        snprintf(b, sizeof b, "%d", i);
        paint_text_centered(cv, on ? FONT_BOLD : FONT_SANS, L->px_body,
                            on ? THEME.white : heads_matter ? THEME.ink : THEME.muted, 255,
                            (Rect){q.x, q.y, q.w, q.h - bar}, b);
    }
    if (L->n_layer_tabs) {
        paint_text_centered(cv, FONT_SANS, L->px_body, ink, 255, L->layer_label, i18n_get(v->lang, "ui.layer"));
        const int here = trace_layer_at(tr, v->stage);
        for (int i = 0; i < L->n_layer_tabs; i++) {
            Rect q = L->layer_tab[i];
            bool on = i == here;
            paint_fill(cv, on ? THEME.accent : THEME.slot, 255, q.x, q.y, q.w, q.h);
            snprintf(b, sizeof b, "%d", i);
            paint_text_centered(cv, on ? FONT_BOLD : FONT_SANS, L->px_body, on ? THEME.white : ink, 255, q, b);
        }
    }
    // status, right-aligned: play state, palette, help hint
    char sp[16], line[200], pal[96];
    snprintf(sp, sizeof sp, "%.2g", (double)v->speed);
    const char *a1[] = {sp};
    i18n_fmt(line, sizeof line, v->lang, v->playing ? "ui.playing" : "ui.paused", 1, a1);
    snprintf(pal, sizeof pal, "%s", i18n_get(v->lang, colormap_palette_key(v->palette)));
    Rect s = L->status;
    s.w -= picker_button_reserve(L, ov ? ov->picker : NULL); // the "Lessons…" button at the right end (window only)
    Rect lb;
    if (ov && ov->lab && lab_button_rect(L, &lb)) s.w = lb.x - paint_px(L->s, 16) - s.x; // and "What if…"
    if (ov && ov->study && ov->picker && study_button_rect(L, &lb)) s.w = lb.x - paint_px(L->s, 16) - s.x; // and "Study"
    // right to left, each whole or not at all (never cut): the help hint, the play state,
    // the palette's name (C names it in a toast too)
    const char *text[] = {i18n_get(v->lang, "ui.help_hint"), line, pal};
    const FontFace face[] = {FONT_BOLD, FONT_SANS, FONT_SANS};
    const Rgb col[] = {THEME.accent, v->playing ? THEME.accent : THEME.muted, THEME.muted};
    const int order[] = {0, 2, 1}; // drawn right to left: hint, palette, play state
    bool show[3];
    int x = s.x + s.w, room = s.w, tw, th;
    for (int k = 0; k < 3; k++) { // what fits, by importance: the hint, the play state, the palette
        paint_text_size(cv, face[k], L->px_small, text[k], &tw, &th);
        int need = tw + (k ? paint_px(L->s, 18) : 0);
        show[k] = need <= room;
        if (show[k]) room -= need;
    }
    for (int i = 0; i < 3; i++) {
        int k = order[i];
        if (!show[k]) continue;
        paint_text_size(cv, face[k], L->px_small, text[k], &tw, &th);
        x -= tw + (i ? paint_px(L->s, 18) : 0);
        paint_text(cv, face[k], L->px_small, col[k], 255, x, s.y + (s.h - th) / 2, ALIGN_LEFT, text[k]);
    }
}

// One "keys<TAB>meaning" row of the help at px (n bytes of row), the keys in the first
// 27 % of w (a longer key: its meaning on the next line); returns the height it takes.
static int help_row(Canvas *cv, const char *row, size_t n, int px, int x, int y, int w, bool draw)
{
    char line[400];
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, row, n);
    line[n] = '\0';
    char *tab = strchr(line, '\t');
    if (tab) *tab = '\0';
    int keyw = w * 27 / 100, used = px * 13 / 10, kw, kh, below = 0;
    paint_text_size(cv, FONT_BOLD, px, line, &kw, &kh);
    if (tab && kw > keyw - px / 2) below = px * 13 / 10;
    if (tab) {
        used = paint_text_wrapped_height(cv, FONT_SANS, px, w - keyw, tab + 1);
        if (used < px * 13 / 10) used = px * 13 / 10;
    }
    if (draw) {
        paint_text(cv, FONT_BOLD, px, THEME.ink, 255, x, y, ALIGN_LEFT, line);
        if (tab)
            paint_text_wrapped(cv, FONT_SANS, px, px, THEME.ink, 255, (Rect){x + keyw, y + below, w - keyw, used}, tab + 1);
    }
    return used + below + px / 4;
}

// The sections, each under its title: viewing; the what-if lab; the study mode; presenting.
enum { SECTIONS = 4, HELP_COLUMNS = 3 };
static const KeySection section[SECTIONS] = {KEYS_VIEW, KEYS_LAB, KEYS_STUDY, KEYS_PRESENT};
static const char *const title_key[SECTIONS] = {"help.title", "help.lab_title", "ui.study", "help.present_title"};

// The help's box and its rows at px, flowing down three columns like a newspaper's (a row
// that does not fit starts the next column; a title stays with its first row); draws
// them when draw. False when they do not fit in the three columns.
static bool help_flow(Canvas *cv, const Layout *L, const View *v, int px, bool draw)
{
    int bw = L->w * 92 / 100, bh = L->h * 90 / 100;
    int bx = (L->w - bw) / 2, by = (L->h - bh) / 2, pad = paint_px(L->s, 20);
    int colw = (bw - (HELP_COLUMNS + 1) * pad) / HELP_COLUMNS, head = L->px_title * 17 / 10, gap = L->px_title / 2;
    int top = by + pad, bottom = by + bh - pad - L->px_small * 2;
    int c = 0, y = top;
    for (int k = 0; k < SECTIONS; k++) {
        char body[2048]; // the section's rows of the key table (keymap.h)
        keymap_help(section[k], v->lang, body, sizeof body);
        bool titled = false;
        for (const char *p = body; *p;) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            int above = titled ? 0 : (y > top ? gap : 0) + head; // the title before the section's first row
            int h = help_row(cv, p, n, px, 0, 0, colw, false);
            if (y + above + h > bottom && y > top) { // the next column
                if (++c >= HELP_COLUMNS) return false;
                y = top;
                above = titled ? 0 : head;
            }
            if (y + above + h > bottom) return false; // taller than a column
            int x = bx + pad + c * (colw + pad);
            if (!titled && draw)
                paint_text(cv, FONT_BOLD, L->px_title, THEME.accent, 255, x, y + above - head, ALIGN_LEFT,
                           i18n_get(v->lang, title_key[k]));
            y += above;
            titled = true;
            if (draw) help_row(cv, p, n, px, x, y, colw, true);
            y += h;
            p = nl ? nl + 1 : p + n;
        }
    }
    return true;
}

int chrome_help_px(Canvas *cv, const Layout *L, const View *v)
{
    int px = L->px_help;
    while (px > 10 && !help_flow(cv, L, v, px, false)) px--; // the largest size at which every row fits
    return px;
}

void chrome_draw_help(Canvas *cv, const Layout *L, const View *v)
{
    paint_fill(cv, THEME.black, 150, 0, 0, L->w, L->h);
    int bw = L->w * 92 / 100, bh = L->h * 90 / 100;
    int bx = (L->w - bw) / 2, by = (L->h - bh) / 2, pad = paint_px(L->s, 20);
    paint_fill(cv, THEME.white, 255, bx, by, bw, bh);
    paint_frame(cv, THEME.accent, 255, bx, by, bw, bh, paint_px(L->s, 3));
    paint_clip(cv, &(Rect){bx, by, bw, bh});
    help_flow(cv, L, v, chrome_help_px(cv, L, v), true);
    paint_text(cv, FONT_SANS, L->px_small, THEME.muted, 255, bx + bw / 2, by + bh - pad - L->px_small * 13 / 10,
               ALIGN_CENTER, i18n_get(v->lang, "help.close"));
    paint_clip(cv, NULL);
}

void chrome_draw_button(Canvas *cv, const Layout *L, Rect b, bool on, const char *text)
{
    paint_fill(cv, on ? THEME.accent : THEME.accent_light, 255, b.x, b.y, b.w, b.h);
    paint_clip(cv, &b);
    paint_text_centered(cv, FONT_BOLD, L->px_small, on ? THEME.white : THEME.accent, 255, b, text);
    paint_clip(cv, NULL);
}

void chrome_draw_lab_button(Canvas *cv, const Layout *L, const View *v, const Overlays *ov)
{
    Rect b;
    if (ov && ov->lab && lab_button_rect(L, &b)) chrome_draw_button(cv, L, b, ov->lab->open, i18n_get(v->lang, "ui.whatif"));
}

void chrome_draw_lab_menu(Canvas *cv, const Layout *L, const View *v, const Overlays *ov)
{
    const LabMenu *m = ov ? ov->lab : NULL;
    if (!m || !m->open) return;
    LabMenuLayout ml;
    labmenu_layout(m, L, &ml);
    Rect b = ml.box;
    paint_fill(cv, THEME.black, 60, b.x + 5, b.y + 5, b.w, b.h);
    paint_fill(cv, THEME.white, 255, b.x, b.y, b.w, b.h);
    paint_frame(cv, THEME.accent, 255, b.x, b.y, b.w, b.h, paint_px(L->s, 3));
    paint_clip(cv, &b);
    paint_text(cv, FONT_BOLD, ml.px_title, THEME.accent, 255, ml.title.x, ml.title.y, ALIGN_LEFT,
               i18n_get(v->lang, "lab.title"));
    static const char *const rows[LAB_ROWS] = {"lab.row_scale", "lab.row_fill", "lab.row_mask", "lab.row_show",
                                               "lab.row_actions"};
    for (int r = 0; r < LAB_ROWS; r++) {
        Rect lr = ml.label[r];
        int tw, th;
        paint_text_size(cv, FONT_BOLD, ml.px, i18n_get(v->lang, rows[r]), &tw, &th);
        paint_text(cv, FONT_BOLD, ml.px, THEME.ink, 255, lr.x, lr.y + (lr.h - th) / 2, ALIGN_LEFT,
                   i18n_get(v->lang, rows[r]));
        for (int c = 0; c < m->n_opts[r]; c++) {
            Rect q = ml.button[r][c];
            bool cur = m->current[r] == c, focus = m->row == r && m->col == c, en = m->enabled[r][c];
            paint_fill(cv, cur ? THEME.accent : THEME.slot, 255, q.x, q.y, q.w, q.h);
            if (focus) paint_frame(cv, THEME.hilite, 255, q.x - 3, q.y - 3, q.w + 6, q.h + 6, paint_px(L->s, 3));
            paint_clip(cv, &q);
            paint_text_centered(cv, cur ? FONT_BOLD : FONT_SANS, ml.px,
                                cur ? THEME.white : en ? THEME.ink : THEME.greyed, 255, q, m->opt[r][c]);
            paint_clip(cv, &b);
        }
    }
    paint_text(cv, FONT_SANS, L->px_small, THEME.muted, 255, ml.hint.x, ml.hint.y, ALIGN_LEFT,
               i18n_get(v->lang, "lab.hint"));
    paint_clip(cv, NULL);
}

void chrome_draw_toast(Canvas *cv, const Layout *L, const Overlays *ov)
{
    if (!ov->toast || !ov->toast[0] || ov->toast_alpha <= 0.0f) return;
    uint8_t a = (uint8_t)(255.0f * ease_clamp01(ov->toast_alpha));
    int tw, th, pad = paint_px(L->s, 12);
    // over the narration box (for a few seconds): never over the numbers it is about;
    // in the study mode that box holds the question, so over the legend
    bool study = ov->study && ov->study->on;
    Rect nb = study ? L->legend : L->narration;
    int wrap = study ? nb.w - 2 * pad : L->w - 4 * pad;
    if (!paint_text_block_size(cv, FONT_SANS, L->px_body, wrap, ov->toast, &tw, &th)) return;
    int bx = nb.w > tw + 2 * pad ? nb.x + (nb.w - tw) / 2 - pad : (L->w - tw) / 2 - pad, by = nb.y + pad;
    if (by + th + 2 * pad > L->h) by = L->h - th - 2 * pad;
    if (by < 0) by = 0;
    paint_fill(cv, THEME.toast_bg, (uint8_t)(a * 9 / 10), bx, by, tw + 2 * pad, th + 2 * pad);
    paint_text_block(cv, FONT_SANS, L->px_body, wrap, THEME.white, a, bx + pad, by + pad, ov->toast);
}

// The text box (I): "Your text:", what is typed with a caret, and why it cannot be read
// (the lesson on screen stays the last text that could), over the header.
void chrome_draw_text_box(Canvas *cv, const Layout *L, const View *v, const Overlays *ov)
{
    if (!ov->text_box) return;
    const int pad = paint_px(L->s, 10), px = L->px_title;
    const bool bad = ov->text_error && ov->text_error[0];
    // why it cannot be read, wrapped to the box (a size limit's reason takes two lines or three)
    const int wrap = L->header.w - 2 * pad;
    const int why_h = bad ? paint_text_wrapped_height(cv, FONT_SANS, L->px_body, wrap, ov->text_error) : 0;
    const int bh = pad * 2 + 2 * px * 14 / 10 + why_h;
    Rect b = {L->header.x, L->header.y, L->header.w, bh};
    paint_fill(cv, THEME.black, 60, b.x + 3, b.y + 3, b.w, b.h);
    paint_fill(cv, THEME.white, 255, b.x, b.y, b.w, b.h);
    paint_frame(cv, THEME.accent, 255, b.x, b.y, b.w, b.h, paint_px(L->s, 2));
    int y = b.y + pad;
    paint_text(cv, FONT_BOLD, L->px_body, THEME.accent, 255, b.x + pad, y, ALIGN_LEFT, i18n_get(v->lang, ov->text_box_b ? "ui.text_box_b" : "ui.text_box"));
    y += px * 14 / 10;
    char line[4200]; // (a text of LESSON_MAX_TEXT bytes and the caret)
    snprintf(line, sizeof line, "%s\xE2\x96\x8F", ov->text_box); // ▏ the caret after the text
    paint_clip(cv, &b);
    paint_text(cv, FONT_MONO, px, THEME.ink, 255, b.x + pad, y, ALIGN_LEFT, line);
    paint_clip(cv, NULL);
    if (bad) paint_text_block(cv, FONT_SANS, L->px_body, wrap, THEME.error_ink, 255, b.x + pad, y + px * 14 / 10, ov->text_error);
}

// The window's export (E): frames done of total, over the heatmaps.
void chrome_draw_export_progress(Canvas *cv, const Layout *L, const View *v, const Overlays *ov)
{
    if (ov->export_total <= 0) return;
    char a[16], b[16], line[160];
    snprintf(a, sizeof a, "%d", ov->export_done);
    snprintf(b, sizeof b, "%d", ov->export_total);
    const char *args[] = {a, b};
    i18n_fmt(line, sizeof line, v->lang, "app.exporting", 2, args);
    int pad = paint_px(L->s, 16), tw, th;
    paint_text_size(cv, FONT_BOLD, L->px_body, line, &tw, &th);
    int bw = tw + 2 * pad, bar = paint_px(L->s, 12);
    if (bw < L->w / 3) bw = L->w / 3;
    int bh = th + bar + 3 * pad;
    int bx = (L->w - bw) / 2, by = L->area.y + (L->area.h - bh) / 2;
    paint_fill(cv, THEME.black, 40, bx + 4, by + 4, bw, bh);
    paint_fill(cv, THEME.white, 255, bx, by, bw, bh);
    paint_frame(cv, THEME.accent, 255, bx, by, bw, bh, paint_px(L->s, 2));
    paint_text(cv, FONT_BOLD, L->px_body, THEME.ink, 255, bx + bw / 2, by + pad, ALIGN_CENTER, line);
    int x = bx + pad, y = by + 2 * pad + th, w = bw - 2 * pad;
    paint_fill(cv, THEME.slot, 255, x, y, w, bar);
    int done = ov->export_done > ov->export_total ? ov->export_total : ov->export_done;
    paint_fill(cv, THEME.accent, 255, x, y, (int)((long)w * done / ov->export_total), bar);
}

void chrome_draw_study_button(Canvas *cv, const Layout *L, const View *v, const Overlays *ov)
{
    Rect b;
    if (ov && ov->study && ov->picker && study_button_rect(L, &b)) // the window's buttons (not in an S-save)
        chrome_draw_button(cv, L, b, ov->study->on, i18n_get(v->lang, "ui.study"));
}

void chrome_draw_study(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v,
                       const Study *s)
{
    (void)tr;
    Rect g = L->narration;
    int pad = paint_px(L->s, 10), bar = paint_px(L->s, 4);
    paint_fill(cv, THEME.narr_bg, 255, g.x, g.y, g.w, g.h);
    int first = -1, count = 0;
    first = study_stage_questions(s, v->stage, &count);
    bool asking = study_asking(s) && s->q[s->focus].stage == v->stage;
    const StudyAnswer *a = s->focus >= 0 && s->focus < s->n ? &s->a[s->focus] : NULL;
    bool feedback = !asking && first >= 0 && s->focus >= first && s->focus < first + count && a && a->answered;
    Rgb mark = feedback && !a->right ? THEME.error_ink : THEME.accent;
    paint_fill(cv, mark, 255, g.x, g.y, bar, g.h);
    paint_clip(cv, &g);
    int x = g.x + pad + bar, w = g.w - (x - g.x) - pad;
    int y = g.y + pad / 2, th = L->px_small * 13 / 10, line_h = L->px_body * 14 / 10;
    char head[300], k1[16], k2[16], keys[300];
    snprintf(k1, sizeof k1, "%d", s->focus - first + 1);
    snprintf(k2, sizeof k2, "%d", count);
    const char *args[] = {k1, k2};
    if (first < 0) { // nothing asked here: the narration, under the study mode's line (or N's note)
        i18n_fmt(head, sizeof head, v->lang, "study.none_here", 0, NULL);
        paint_text(cv, FONT_BOLD, L->px_small, THEME.accent, 255, x, y, ALIGN_LEFT, s->note[0] ? s->note : head);
        const char *text = F->narration;
        Rect box = {x, y + th, w, g.h - pad - th - (y - g.y)};
        paint_text_wrapped(cv, FONT_SANS, L->px_body, L->px_small - 2, THEME.ink, 255, box, text);
        paint_clip(cv, NULL);
        return;
    }
    const QuizQuestion *q = &s->q[s->focus];
    if (asking) {
        i18n_fmt(head, sizeof head, v->lang, "study.asking", 2, args);
        paint_text(cv, FONT_BOLD, L->px_small, THEME.accent, 255, x, y, ALIGN_LEFT, head);
        y += th;
        // the keys (or why the answer was not read) at the bottom, the answer above them
        int ky = g.y + g.h - pad / 2 - th, ay = ky - line_h - pad / 2;
        Rect qbox = {x, y, w, ay - y - pad / 4};
        paint_text_wrapped(cv, FONT_SANS, L->px_body, L->px_small - 2, THEME.ink, 255, qbox, q->question);
        const char *label = i18n_get(v->lang, "study.your_answer");
        int lw = paint_text(cv, FONT_BOLD, L->px_body, THEME.ink, 255, x, ay + (line_h - L->px_body * 6 / 5) / 2,
                            ALIGN_LEFT, label);
        int fx = x + lw + pad, fw = w - lw - pad;
        if (fw > paint_px(L->s, 420)) fw = paint_px(L->s, 420);
        paint_fill(cv, THEME.white, 255, fx, ay, fw, line_h);
        paint_frame(cv, THEME.accent, 255, fx, ay, fw, line_h, paint_px(L->s, 2));
        char typed[STUDY_TEXT_MAX + 8];
        snprintf(typed, sizeof typed, "%s▏", s->text);
        paint_text(cv, FONT_MONO, L->px_body, THEME.ink, 255, fx + pad / 2, ay + (line_h - L->px_body * 6 / 5) / 2,
                   ALIGN_LEFT, typed);
        const char *hint = q->kind == QUIZ_ARGMAX || q->kind == QUIZ_RISES ? "study.keys_click"
                           : q->kind == QUIZ_MASKED && q->n_cell == 1 ? "study.keys_click_list"
                                                                      : "study.keys";
        char rowb[16];
        snprintf(rowb, sizeof rowb, "%d", q->n_cell > 0 ? q->cell[0] : 0);
        const char *ra[] = {rowb};
        if (s->note[0]) snprintf(keys, sizeof keys, "%s", s->note);
        else i18n_fmt(keys, sizeof keys, v->lang, hint, 1, ra);
        paint_text(cv, s->note[0] ? FONT_BOLD : FONT_SANS, L->px_small, s->note[0] ? THEME.error_ink : THEME.muted,
                   255, x, ky, ALIGN_LEFT, keys);
        paint_clip(cv, NULL);
        return;
    }
    // feedback: right or not, the question, both answers, the derivation
    const char *verdict = a->gave_up ? "study.shown" : a->right ? "study.right" : "study.wrong";
    i18n_fmt(head, sizeof head, v->lang, verdict, 2, args);
    paint_text(cv, FONT_BOLD, L->px_body, mark, 255, x, y, ALIGN_LEFT, head);
    y += L->px_body * 13 / 10;
    int qh = paint_text_wrapped(cv, FONT_SANS, L->px_small, L->px_small - 2, THEME.muted, 255,
                                (Rect){x, y, w, th * 2}, q->question);
    y += qh + pad / 4;
    char ans[200], line[400];
    quiz_answer_text(q, ans, sizeof ans);
    const char *a2[] = {a->gave_up ? "—" : a->given, ans};
    i18n_fmt(line, sizeof line, v->lang, a->hinted ? "study.answers_hinted" : "study.answers", 2, a2);
    paint_text(cv, FONT_BOLD, L->px_body, THEME.ink, 255, x, y, ALIGN_LEFT, line);
    y += L->px_body * 13 / 10;
    int ky = g.y + g.h - pad / 2 - th;
    float got[QUIZ_MAX_LIST];
    int n_got = 0;
    char slip[300] = ""; // a common slip named ("You left out the batch dimension B=2")
    if (!a->right && !a->gave_up && quiz_parse_answer(a->given, got, QUIZ_MAX_LIST, &n_got))
        quiz_shape_mistake(q, got, n_got, v->lang, slip, sizeof slip);
    if (slip[0])
        y += paint_text_wrapped(cv, FONT_BOLD, L->px_small, L->px_small - 2, THEME.error_ink, 255,
                                (Rect){x, y, w, th * 2}, slip) + pad / 4;
    Rect ebox = {x, y, w, ky - y - pad / 4};
    // the derivation once the stage's result shows: before, its numbers would answer the
    // stage's other questions (a row's weights, the largest of them)
    bool pending = study_pending(s, v->stage);
    if (pending)
        paint_text_wrapped(cv, FONT_SANS, L->px_small, L->px_small - 4, THEME.muted, 255, ebox,
                           i18n_get(v->lang, "study.derivation_later"));
    else if (q->explanation[0])
        paint_text_wrapped(cv, FONT_SANS, L->px_small, L->px_small - 4, THEME.ink, 255, ebox, q->explanation);
    // the keys: the next question while the stage has one, else the stage's others and the next stage
    const char *keys_key = pending ? "study.keys_next"
                           : count > 1                 ? "study.keys_feedback_more"
                                                       : "study.keys_feedback";
    if (s->note[0]) paint_text(cv, FONT_BOLD, L->px_small, THEME.accent, 255, x, ky, ALIGN_LEFT, s->note);
    else paint_text(cv, FONT_SANS, L->px_small, THEME.muted, 255, x, ky, ALIGN_LEFT, i18n_get(v->lang, keys_key));
    paint_clip(cv, NULL);
}

// ---- around the panels: the header, the legend, the narration -------------------------

// The study mode hides the stage's result until its questions are answered (study.h).

// "Q.view(2, 4, 2, 2)" → "Q.view(?)", "reshape(2, 4, 4)" → "reshape(?)": a hidden
// result's shape is a question of the study mode (transpose(1, 2) stays: it names dims).
static void hide_shapes(char *s)
{
    static const char *const calls[] = {"view(", "reshape("};
    for (size_t k = 0; k < sizeof calls / sizeof *calls; k++)
        for (char *p = strstr(s, calls[k]); p; p = strstr(p, calls[k])) {
            p += strlen(calls[k]);
            char *end = strchr(p, ')');
            if (!end) break;
            memmove(p + 1, end, strlen(end) + 1);
            *p = '?';
        }
}

// A lesson with checkpoints: its training's loss at each checkpoint as a curve (steps on a
// square-root axis), the checkpoint computed as a dot, "step S · loss X" under it.
static void draw_curve(Canvas *cv, const Layout *L, const View *v)
{
    const Lesson *ls = v->lesson;
    const Rect g = L->curve;
    if (!ls || g.w <= 0 || ls->n_checkpoints < 2) return;
    const int pad = paint_px(L->s, 8), x0 = g.x + pad, x1 = g.x + g.w - pad;
    const int lab = L->px_small * 13 / 10, y0 = g.y + pad / 2, y1 = g.y + g.h - 2 * lab - pad / 2; // two label lines
    float lo = ls->ckpt_loss[0], hi = lo;
    for (int k = 1; k < ls->n_checkpoints; k++) lo = fminf(lo, ls->ckpt_loss[k]), hi = fmaxf(hi, ls->ckpt_loss[k]);
    if (!(hi > lo)) hi = lo + 1.0f;
    paint_fill(cv, THEME.narr_bg, 255, g.x, g.y, g.w, g.h);
    int px = 0, py = 0;
    for (int k = 0; k < ls->n_checkpoints; k++) {
        const int x = layout_checkpoint_x(ls, k, x0, x1);
        const int y = y1 - (int)lroundf((ls->ckpt_loss[k] - lo) / (hi - lo) * (float)(y1 - y0));
        if (k) {
            paint_line(cv, THEME.accent, 255, px, py, x, y);
            paint_line(cv, THEME.accent, 255, px, py + 1, x, y + 1);
        }
        px = x, py = y;
    }
    const int sel = ls->checkpoint >= 0 ? ls->checkpoint : ls->n_checkpoints - 1;
    const int sx = layout_checkpoint_x(ls, sel, x0, x1);
    const int sy = y1 - (int)lroundf((ls->ckpt_loss[sel] - lo) / (hi - lo) * (float)(y1 - y0)), d = paint_px(L->s, 5);
    paint_fill(cv, THEME.hilite, 255, sx - d, sy - d, 2 * d + 1, 2 * d + 1);
    paint_frame(cv, THEME.ink, 255, sx - d, sy - d, 2 * d + 1, 2 * d + 1, 1);
    char sb[16], lb[16], kb[16], nb[16], last[16], line[160]; // "step 250 of 6000 (checkpoint 6 of 20)"
    snprintf(sb, sizeof sb, "%d", ls->ckpt_step[sel]), snprintf(lb, sizeof lb, "%.3f", (double)ls->ckpt_loss[sel]);
    snprintf(kb, sizeof kb, "%d", sel + 1), snprintf(nb, sizeof nb, "%d", ls->n_checkpoints);
    snprintf(last, sizeof last, "%d", ls->ckpt_step[ls->n_checkpoints - 1]);
    const char *args[] = {sb, lb, kb, nb, last};
    i18n_fmt(line, sizeof line, v->lang, ls->checkpoint >= 0 ? "ui.checkpoint" : "ui.checkpoint_final", 5, args);
    paint_clip(cv, &g);
    paint_text(cv, FONT_SANS, L->px_small, THEME.ink, 255, g.x + pad, y1 + pad / 2, ALIGN_LEFT, line);
    i18n_fmt(line, sizeof line, v->lang, "ui.checkpoint_loss", 5, args);
    paint_text(cv, FONT_SANS, L->px_small, THEME.ink, 255, g.x + pad, y1 + pad / 2 + lab, ALIGN_LEFT, line);
    paint_clip(cv, NULL);
}

// The header's second line: the formula, true for this lesson, and the numbers it uses; never
// cut at the right edge of h: smaller (down to the small text), then without the note.
static void draw_formula(Canvas *cv, const Layout *L, const View *v, Rect h)
{
    char formula[sizeof L->formula + sizeof L->formula_note + 4];
    snprintf(formula, sizeof formula, "%s   %s", L->formula, L->formula_note);
    if (v->hide_result) hide_shapes(formula);
    int fpx = L->px_formula, fw, fh;
    paint_text_size(cv, FONT_SANS, fpx, formula, &fw, &fh);
    while (fw > h.w && fpx > L->px_small) paint_text_size(cv, FONT_SANS, fpx -= 2, formula, &fw, &fh);
    if (fw > h.w) {
        snprintf(formula, sizeof formula, "%s", L->formula);
        if (v->hide_result) hide_shapes(formula);
    }
    paint_text(cv, FONT_SANS, fpx, THEME.ink, 255, h.x, h.y + L->px_title * 14 / 10, ALIGN_LEFT, formula);
}

void chrome_draw_header(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v)
{
    draw_curve(cv, L, v);
    if (v->stage < 0 || v->stage >= tr->n) return;
    const Stage *st = &tr->stages[v->stage];
    Lang lang = v->lang;
    char title[200], shape[32], badge[200];
    snprintf(title, sizeof title, "%s", F->title);
    Rect h = L->header;
    if (viewkind_of(v->kind)->one_frame) { // an experiment: its title, its formula and the numbers it uses
        paint_clip(cv, &(Rect){h.x, h.y, h.w, h.h});
        paint_text(cv, FONT_BOLD, L->px_title, THEME.ink, 255, h.x, h.y, ALIGN_LEFT, L->title);
        draw_formula(cv, L, v, h);
        paint_clip(cv, NULL);
        return;
    }
    if (!viewkind_of(v->kind)->panels) { // a glance: the title and formula its view wrote
        paint_text(cv, FONT_BOLD, L->px_title, THEME.ink, 255, h.x, h.y, ALIGN_LEFT, L->title);
        paint_text(cv, FONT_SANS, L->px_formula, THEME.ink, 255, h.x, h.y + L->px_title * 7 / 5, ALIGN_LEFT, L->formula);
        return;
    }
    paint_clip(cv, &(Rect){h.x, h.y, h.w, h.h});
    int tw = paint_text(cv, FONT_BOLD, L->px_title, THEME.ink, 255, h.x, h.y, ALIGN_LEFT, title);
    // shape badge: "Q (2,4,4) → (2,2,4,2)"
    tensor_shape_str(&st->t, shape, sizeof shape);
    if (v->hide_result) snprintf(shape, sizeof shape, "(?)"); // a question may ask it
    const char *own = F->name;
    int o = F->from_stage;
    if (o >= 0) {
        char os[32];
        tensor_shape_str(&tr->stages[o].t, os, sizeof os);
        snprintf(badge, sizeof badge, "%s %s → %s", F->from_name, os, shape);
    } else {
        snprintf(badge, sizeof badge, "%s %s", own, shape);
    }
    int bw, bh;
    paint_text_size(cv, FONT_MONO, L->px_body, badge, &bw, &bh);
    int bx = h.x + tw + paint_px(L->s, 20), pad = paint_px(L->s, 6);
    if (bx + bw + 2 * pad <= h.x + h.w) { // (a badge cut short would misstate the shape: left out)
        paint_fill(cv, THEME.accent_light, 255, bx, h.y + (L->px_title * 13 / 10 - bh) / 2 - 2, bw + 2 * pad, bh + 4);
        paint_text(cv, FONT_MONO, L->px_body, THEME.accent, 255, bx + pad,
                   h.y + (L->px_title * 13 / 10 - bh) / 2, ALIGN_LEFT, badge);
    }
    int ex = bx + bw + 2 * pad + paint_px(L->s, 12);
    if (v->study) { // the study mode: right answers so far
        char r[16], t[16], sb[120];
        snprintf(r, sizeof r, "%d", v->study_right);
        snprintf(t, sizeof t, "%d", v->study_total);
        const char *args[] = {r, t};
        i18n_fmt(sb, sizeof sb, lang, "ui.badge_study", 2, args);
        int sw2, sh2;
        paint_text_size(cv, FONT_BOLD, L->px_body, sb, &sw2, &sh2);
        if (ex + sw2 + 2 * pad > h.x + h.w) { // a long title: "study 7/19"
            i18n_fmt(sb, sizeof sb, lang, "ui.badge_study_short", 2, args);
            paint_text_size(cv, FONT_BOLD, L->px_body, sb, &sw2, &sh2);
        }
        paint_fill(cv, THEME.accent, 255, ex, h.y + (L->px_title * 13 / 10 - sh2) / 2 - 2, sw2 + 2 * pad, sh2 + 4);
        paint_text(cv, FONT_BOLD, L->px_body, THEME.white, 255, ex + pad, h.y + (L->px_title * 13 / 10 - sh2) / 2,
                   ALIGN_LEFT, sb);
        ex += sw2 + 2 * pad + paint_px(L->s, 12);
    }
    if (v->edited || v->delta) { // the what-if lab: these are not the lesson's numbers
        char n[16], ed[120];
        snprintf(n, sizeof n, "%d", v->n_edits);
        const char *args[] = {n};
        i18n_fmt(ed, sizeof ed, lang, v->delta ? "ui.badge_delta" : v->n_edits == 1 ? "ui.badge_edited1" : "ui.badge_edited",
                 1, args);
        int ew, eh;
        paint_text_size(cv, FONT_BOLD, L->px_body, ed, &ew, &eh);
        paint_fill(cv, THEME.changed, 255, ex, h.y + (L->px_title * 13 / 10 - eh) / 2 - 2, ew + 2 * pad, eh + 4);
        paint_text(cv, FONT_BOLD, L->px_body, THEME.white, 255, ex + pad, h.y + (L->px_title * 13 / 10 - eh) / 2,
                   ALIGN_LEFT, ed);
    }
    draw_formula(cv, L, v, h);
    paint_clip(cv, NULL);
}

// The ends of a legend row: the range, or "≤1e-4 … 1 log" on a log scale.
static void legend_numbers(const ScaleGroup *G, char *lo, size_t nlo, char *hi, size_t nhi)
{
    if (G->scale.log) {
        snprintf(lo, nlo, "≤%g", (double)G->scale.lo);
        snprintf(hi, nhi, "%g log", (double)G->scale.hi);
    } else {
        tip_number(G->scale.lo, lo, nlo);
        tip_number(G->scale.hi, hi, nhi);
    }
}

// One row per colour scale of the frame: its name, lowest value, the colour ramp,
// highest value (a log scale says so); the mask row shows 1 = attend / 0 = masked;
// last, swatches for the masked and NaN looks the frame shows.
void chrome_draw_legend(Canvas *cv, const Layout *L, const View *v, const char *mask_text)
{
    Rect g = L->legend;
    if (L->n_panels == 0) return;
    int pad = paint_px(L->s, 8), row_h = (int)((float)L->px_small * 1.45f), sw = paint_px(L->s, 18);
    paint_fill(cv, THEME.narr_bg, 255, g.x, g.y, g.w, g.h);
    Rect gclip = {g.x, g.y, g.w, g.h};
    paint_clip(cv, &gclip);
    Rgb ink = THEME.ink;
    // the names get what they need (up to half the box), the numbers theirs, the ramp the rest
    int label_w = 0, num_w = 0, tw, th;
    char lo[32], hi[32];
    for (int k = 0; k < L->n_groups; k++) {
        paint_text_size(cv, FONT_BOLD, L->px_small, L->group[k].label, &tw, &th);
        if (tw + pad > label_w) label_w = tw + pad;
        legend_numbers(&L->group[k], lo, sizeof lo, hi, sizeof hi);
        paint_text_size(cv, FONT_MONO, L->px_small, lo, &tw, &th);
        if (tw + pad > num_w) num_w = tw + pad;
        paint_text_size(cv, FONT_MONO, L->px_small, hi, &tw, &th);
        if (tw + pad > num_w) num_w = tw + pad;
    }
    if (num_w > g.w / 5) num_w = g.w / 5;
    // the ramp keeps at least 15 % of the box (long names, "scores, masked scores", left it ~50 px;
    // those go on lines of their own: Layout.legend_stacked, and the ramp gets the whole width)
    int label_max = g.w - 2 * num_w - 2 * pad - g.w * 15 / 100;
    if (label_w > label_max) label_w = label_max;
    if (L->legend_stacked) label_w = pad; // each name on its own line, the ramp under it
    int y = g.y + pad;
    char line[160], fit[128];
    for (int k = 0; k < L->n_groups; k++, y += row_h) {
        const ScaleGroup *G = &L->group[k];
        bool here = false; // a stage shown in parts: only the scales of this part's panels
        for (int p = 0; p < L->n_panels; p++) here |= L->spec[p].group == k;
        if (L->split && !here) {
            y -= row_h;
            continue;
        }
        int ty = y + (row_h - L->px_small * 6 / 5) / 2;
        const char *name = paint_fit_text(cv, FONT_BOLD, L->px_small, G->label,
                                          L->legend_stacked ? g.w - 2 * pad : label_w - pad, fit, sizeof fit);
        paint_text(cv, FONT_BOLD, L->px_small, ink, 255, g.x + pad, ty, ALIGN_LEFT, name);
        if (L->legend_stacked) y += row_h, ty += row_h; // the ramp on the next line
        int x = g.x + pad + label_w, bar_h = row_h * 6 / 10, by = y + (row_h - bar_h) / 2;
        if (G->mask01) { // its meanings follow its own name (stacked: on the line under it)
            paint_text_size(cv, FONT_BOLD, L->px_small, name, &tw, &th);
            x = L->legend_stacked ? g.x + pad : g.x + 2 * pad + tw;
            paint_fill(cv, colormap_sequential(G->scale.palette, 1.0f), 255, x, by, sw, bar_h);
            x += sw + pad / 2;
            x += paint_text(cv, FONT_SANS, L->px_small, ink, 255, x, ty, ALIGN_LEFT, i18n_get(v->lang, "ui.mask_one"));
            x += pad;
            paint_fill(cv, colormap_masked(), 255, x, by, sw, bar_h);
            paint_hatch(cv, x, by, sw < 16 ? 16 : sw, bar_h < 16 ? 16 : bar_h, 255, L->s);
            x += sw + pad / 2;
            paint_text(cv, FONT_SANS, L->px_small, ink, 255, x, ty, ALIGN_LEFT, i18n_get(v->lang, "ui.mask_zero"));
            continue;
        }
        legend_numbers(G, lo, sizeof lo, hi, sizeof hi);
        bool shown = false; // the range of the hidden result alone is hidden (scene.c leaves it out of shared ones)
        for (int p = 0; p < L->n_panels; p++) shown |= L->spec[p].group == k && !cellmark_hidden(v, &L->spec[p]);
        if (!shown) snprintf(lo, sizeof lo, "?"), snprintf(hi, sizeof hi, "?");
        paint_text(cv, FONT_MONO, L->px_small, ink, 255, x + num_w - pad / 2, ty, ALIGN_RIGHT, lo);
        int bx = x + num_w, bw = g.x + g.w - pad - num_w - bx;
        const int N = 32;
        for (int i = 0; i < N && bw > 0; i++) {
            float t = ((float)i + 0.5f) / (float)N;
            Rgb c = G->scale.sequential ? colormap_sequential(G->scale.palette, t)
                                        : colormap_diverging(G->scale.palette, 2.0f * t - 1.0f);
            int x0 = bx + bw * i / N, x1 = bx + bw * (i + 1) / N;
            paint_fill(cv, c, 255, x0, by, x1 - x0, bar_h);
        }
        paint_text(cv, FONT_MONO, L->px_small, ink, 255, bx + bw + pad / 2, ty, ALIGN_LEFT, hi);
    }
    // swatches for the special looks present in this frame
    bool any_mask = false, any_nan = false, any_changed = false;
    for (int p = 0; p < L->n_panels; p++) {
        any_mask |= L->spec[p].any_masked && !L->group[L->spec[p].group].mask01 && !cellmark_hidden(v, &L->spec[p]);
        any_nan |= L->spec[p].any_nan && !cellmark_hidden(v, &L->spec[p]);
        any_changed |= L->spec[p].any_changed && !L->image[p];
    }
    int x = g.x + pad, ty = y + (row_h - L->px_small * 6 / 5) / 2, bar_h = row_h * 7 / 10;
    if (any_mask) {
        paint_fill(cv, colormap_masked(), 255, x, y, sw, bar_h);
        paint_hatch(cv, x, y, sw < 16 ? 16 : sw, bar_h < 16 ? 16 : bar_h, 255, L->s);
        const char *a2[] = {mask_text};
        i18n_fmt(line, sizeof line, v->lang, "ui.masked", 1, a2);
        x += sw + pad / 2;
        x += paint_text(cv, FONT_SANS, L->px_small, ink, 255, x, ty, ALIGN_LEFT, line) + pad * 2;
    }
    if (any_nan) {
        snprintf(line, sizeof line, "NaN = %s", i18n_get(v->lang, "ui.nan"));
        paint_fill(cv, colormap_nan(), 255, x, y, sw, bar_h);
        x += sw + pad / 2;
        x += paint_text(cv, FONT_SANS, L->px_small, ink, 255, x, ty, ALIGN_LEFT, line) + pad * 2;
    }
    if (any_changed) { // the what-if lab's mark
        paint_fill(cv, THEME.empty, 255, x, y, sw, bar_h);
        paint_corner_mark(cv, x, y, sw, bar_h);
        x += sw + pad / 2;
        paint_text(cv, FONT_SANS, L->px_small, ink, 255, x, ty, ALIGN_LEFT, i18n_get(v->lang, v->cmp ? "ui.cmp_changed" : "ui.changed"));
    }
    paint_clip(cv, NULL);
}

// One narration size for the whole lesson at this size and language: the largest at
// which every stage's text fits its box, so the text does not jump between slides.
// Remembered for the last set of texts (a hash of them) and box: computed anew when
// either changes (one drawing thread per process: the window's, or the export's). While
// training runs (Frame.narration_live) the texts change every half second: the size stays,
// one smaller only when the text shown needs it (every stage's measured again cost such a
// frame 20–80 ms, 140–330 ms under load), and is computed anew once it pauses.
static int narration_px(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v, Rect box)
{
    static struct {
        unsigned long long hash;
        int w, h, px_body, px;
    } memo;
    const unsigned long long hash = F->narration_hash;
    const bool same_box = memo.px > 0 && memo.w == box.w && memo.h == box.h && memo.px_body == L->px_body;
    if (memo.hash == hash && same_box) return memo.px;
    if (F->narration_live) { // training: the size so far (this box's), smaller only if this text needs it
        int px = same_box ? memo.px : L->px_body;
        while (px > layout_narration_min_px(L) && paint_text_wrapped_height(cv, FONT_SANS, px, box.w, F->narration) > box.h)
            px--;
        memo.hash = hash, memo.w = box.w, memo.h = box.h, memo.px_body = L->px_body, memo.px = px;
        return px;
    }
    // a cheap estimate first (each text's one-line width over the box's width, with
    // the slack of wrapping at words), then the exact wrapped height at that size only:
    // measuring wrapped text at every size for every stage cost the first frame 20 ms
    // (a new lesson, size or language: every stage's text is measured, the view asked for each)
    char buf[sizeof F->narration_buf];
    View each = *v;
    int px = L->px_body, min_px = layout_narration_min_px(L);
    float w_body[TRACE_MAX_STAGES]; // one-line widths at the body size; text scales with its size
    const int from = F->narration_from, to = F->narration_to;
    for (int st = from; st < to; st++) {
        each.stage = st;
        w_body[st] = (float)paint_text_width(cv, FONT_SANS, px, scene_narration(tr, &each, buf, sizeof buf));
    }
    for (; px > min_px; px--) {
        int lh = px * 6 / 5 + 1, fits = 1;
        for (int st = from; st < to && fits; st++) {
            int lines = (int)ceilf(w_body[st] * (float)px / (float)L->px_body / (0.88f * (float)box.w));
            fits = lines * lh <= box.h;
        }
        if (fits) break;
    }
    for (int st = from; st < to; st++) { // exactly, at the size chosen (rarely one smaller)
        each.stage = st;
        const char *text = scene_narration(tr, &each, buf, sizeof buf);
        while (px > min_px && paint_text_wrapped_height(cv, FONT_SANS, px, box.w, text) > box.h) px--;
    }
    memo.hash = hash, memo.w = box.w, memo.h = box.h, memo.px_body = L->px_body, memo.px = px;
    return px;
}

void chrome_draw_narration(Canvas *cv, const Layout *L, const Frame *F, const Trace *tr, const View *v)
{
    if (v->stage < 0 || v->stage >= tr->n) return;
    Rect g = L->narration;
    int pad = paint_px(L->s, 10);
    paint_fill(cv, THEME.narr_bg, 255, g.x, g.y, g.w, g.h);
    paint_fill(cv, THEME.accent, 255, g.x, g.y, paint_px(L->s, 4), g.h);
    const char *text = F->narration;
    int x = g.x + pad + paint_px(L->s, 4);
    int th = L->px_small * 13 / 10;
    paint_text(cv, FONT_BOLD, L->px_small, THEME.accent, 255, x, g.y + pad / 2, ALIGN_LEFT,
               i18n_get(v->lang, "ui.what"));
    Rect box = {x, g.y + pad / 2 + th, g.w - (x - g.x) - pad, g.h - pad - th};
    int px = narration_px(cv, L, F, tr, v, box);
    paint_text_wrapped(cv, FONT_SANS, px, px, THEME.ink, 255, box, text);
}
