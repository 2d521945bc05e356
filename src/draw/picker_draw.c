// picker_draw.c — the lesson picker overlay and its button (see picker_draw.h).
#include "picker_draw.h"

#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "chrome.h"
#include "picker.h"

void picker_draw_button(Canvas *cv, const Layout *L, const View *v, const Picker *picker)
{
    Rect b;
    if (!picker || !picker_button_rect(L, &b)) return;
    chrome_draw_button(cv, L, b, picker->open, i18n_get(v->lang, "ui.lessons"));
}

void picker_draw(Canvas *cv, const Layout *L, const View *v, const Picker *picker)
{
    const Picker *p = picker;
    if (!p || !p->open) return;
    PickerLayout pl;
    picker_layout(p, &pl, L->w, L->h, L->s);
    paint_fill(cv, THEME.black, 150, 0, 0, L->w, L->h);
    paint_fill(cv, THEME.white, 255, pl.box.x, pl.box.y, pl.box.w, pl.box.h);
    paint_frame(cv, THEME.accent, 255, pl.box.x, pl.box.y, pl.box.w, pl.box.h, paint_px(L->s, 3));
    paint_clip(cv, &pl.box);
    paint_text(cv, FONT_BOLD, pl.px_title, THEME.accent, 255, pl.title.x, pl.title.y, ALIGN_LEFT,
               i18n_get(v->lang, p->title_key ? p->title_key : "picker.title"));
    char line[1400], cut[1400];
    if (p->n == 0) {
        const char *args[] = {p->looked_in};
        i18n_fmt(line, sizeof line, v->lang, "picker.empty", 1, args);
        Rect box = {pl.title.x, pl.title.y + pl.title.h + paint_px(L->s, 10), pl.title.w, pl.row_h * 2};
        paint_text_wrapped(cv, FONT_SANS, pl.px_row, pl.px_small, THEME.muted, 255, box, line);
    }
    int pad = paint_px(L->s, 10);
    for (int i = 0; i < pl.n_rows; i++) {
        int k = pl.first + i;
        const PickerItem *it = &p->items[k];
        Rect q = pl.row[i];
        bool sel = k == p->sel, bad = it->error != NULL;
        if (sel) paint_fill(cv, bad ? THEME.invalid_bg : THEME.accent_light, 255, q.x, q.y, q.w, q.h);
        if (sel) paint_fill(cv, bad ? THEME.greyed : THEME.accent, 255, q.x, q.y, paint_px(L->s, 5), q.h);
        int x = q.x + pad + paint_px(L->s, 4), w = q.w - 2 * pad - paint_px(L->s, 4);
        int y1 = q.y + paint_px(L->s, 5), y2 = y1 + pl.px_row * 13 / 10;
        // line 1: the title (greyed when invalid), and "current" at the right
        int cw = 0;
        if (k == p->current) {
            int th;
            const char *cur = i18n_get(v->lang, "picker.current");
            paint_text_size(cv, FONT_SANS, pl.px_small, cur, &cw, &th);
            paint_text(cv, FONT_SANS, pl.px_small, THEME.accent, 255, x + w, y1 + (pl.px_row - pl.px_small) / 2,
                       ALIGN_RIGHT, cur);
            cw += pad;
        }
        // "3. Pitfall: …": a lesson of the suggested order with its place (they come first)
        char title[1200];
        if (it->order > 0) snprintf(title, sizeof title, "%d. %s", k + 1, picker_title(it, v->lang));
        else snprintf(title, sizeof title, "%s", picker_title(it, v->lang));
        FontFace face = sel && !bad ? FONT_BOLD : FONT_SANS;
        paint_text(cv, face, pl.px_row, bad ? THEME.greyed : THEME.ink, 255, x, y1, ALIGN_LEFT,
                   paint_fit_text(cv, face, pl.px_row, title, w - cw, cut, sizeof cut));
        // line 2: the file's short name, or the file and why it cannot be opened
        if (bad) {
            const char *args[] = {it->error};
            i18n_fmt(line, sizeof line, v->lang, "picker.invalid", 1, args);
            paint_text(cv, FONT_SANS, pl.px_small, THEME.error_ink, 255, x, y2, ALIGN_LEFT,
                       paint_fit_text(cv, FONT_SANS, pl.px_small, line, w, cut, sizeof cut));
        } else {
            int sw = 0; // the study mode's score at the right
            if (it->studied) {
                char r[16], n[16], t[16], score[160];
                snprintf(r, sizeof r, "%d", it->study_right);
                snprintf(n, sizeof n, "%d", it->study_answered);
                snprintf(t, sizeof t, "%d", it->study_total);
                const char *args[] = {r, n, t};
                i18n_fmt(score, sizeof score, v->lang, "picker.progress", 3, args);
                sw = paint_text(cv, FONT_BOLD, pl.px_small, THEME.accent, 255, x + w, y2, ALIGN_RIGHT, score) + pad;
            }
            paint_text(cv, FONT_SANS, pl.px_small, THEME.muted, 255, x, y2, ALIGN_LEFT,
                       paint_fit_text(cv, FONT_SANS, pl.px_small, it->short_name ? it->short_name : it->shown, w - sw,
                                      cut, sizeof cut));
        }
    }
    // scroll marks when there is more above / below
    if (pl.first > 0)
        paint_text(cv, FONT_SANS, pl.px_small, THEME.muted, 255, pl.box.x + pl.box.w - paint_px(L->s, 24), pl.title.y,
                   ALIGN_LEFT, "▲");
    if (pl.first + pl.n_rows < p->n)
        paint_text(cv, FONT_SANS, pl.px_small, THEME.muted, 255, pl.box.x + pl.box.w - paint_px(L->s, 24), pl.hint.y,
                   ALIGN_LEFT, "▼");
    paint_text(cv, FONT_SANS, pl.px_small, THEME.muted, 255, pl.hint.x, pl.hint.y, ALIGN_LEFT,
               paint_fit_text(cv, FONT_SANS, pl.px_small, i18n_get(v->lang, p->hint_key ? p->hint_key : "picker.hint"),
               pl.hint.w - paint_px(L->s, 30), cut, sizeof cut));
    paint_clip(cv, NULL);
}
