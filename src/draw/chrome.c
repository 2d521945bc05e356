// chrome.c — the window's chrome: timeline, tabs + status, help, toast,
// export progress (see chrome.h).
#include "chrome.h"

#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "labmenu.h"
#include "picker_draw.h"
#include "playback.h"
#include "scene.h"

void chrome_draw_timeline(Canvas *cv, const Layout *L, const Trace *tr, const View *v)
{
    StepId cur = v->stage >= 0 && v->stage < tr->n ? tr->stages[v->stage].step : STEP_INPUT;
    for (int i = 0; i < L->n_steps; i++) {
        Rect q = L->step_rect[i];
        StepId id = L->step_id[i];
        bool on = id == cur, past = id < cur;
        paint_fill(cv, on ? THEME.accent : past ? THEME.accent_light : THEME.slot, 255, q.x, q.y, q.w, q.h);
        char key[40], label[120], num[12];
        const char *name = i18n_get(v->lang, scene_step_key(tr, id, key, sizeof key));
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
            int lh = px * 6 / 5, y = q.y + (q.h - dots_h - 2 * lh) / 2;
            if (y < q.y) y = q.y;
            paint_text_centered(cv, face, px, tc, 255, (Rect){q.x, y, q.w, lh}, l1);
            paint_text_centered(cv, face, px, tc, 255, (Rect){q.x, y + lh, q.w, lh}, l2);
        }
        paint_clip(cv, NULL);
        // one dot per stage of the step, the current one filled
        int first = trace_step_first(tr, id), n = trace_step_count(tr, id);
        int dot = paint_px(L->s, 7), gap = paint_px(L->s, 5);
        int x0 = q.x + (q.w - n * dot - (n - 1) * gap) / 2, y0 = q.y + q.h - dot - paint_px(L->s, 5);
        for (int k = 0; k < n; k++) {
            bool here = first + k == v->stage;
            Rgb dc = on ? (here ? THEME.white : THEME.dot_here) : THEME.dot_other;
            paint_fill(cv, dc, 255, x0 + k * (dot + gap), y0, dot, dot);
        }
    }
}

void chrome_draw_tabs(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    Rgb ink = THEME.ink;
    paint_text_centered(cv, FONT_SANS, L->px_body, ink, 255, L->batch_label, i18n_get(v->lang, "ui.batch"));
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
    bool heads_matter = st && (st->t.rank == 4 || scene_recipe(st->kind)->anim == ANIM_CONCAT);
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
    int x = s.x + s.w;
    paint_clip(cv, &(Rect){s.x, s.y, s.w, s.h});
    int tw, th;
    const char *hint = i18n_get(v->lang, "ui.help_hint");
    paint_text_size(cv, FONT_BOLD, L->px_small, hint, &tw, &th);
    x -= tw;
    paint_text(cv, FONT_BOLD, L->px_small, THEME.accent, 255, x, s.y + (s.h - th) / 2, ALIGN_LEFT, hint);
    paint_text_size(cv, FONT_SANS, L->px_small, pal, &tw, &th);
    x -= tw + paint_px(L->s, 18);
    paint_text(cv, FONT_SANS, L->px_small, THEME.muted, 255, x, s.y + (s.h - th) / 2, ALIGN_LEFT, pal);
    paint_text_size(cv, FONT_SANS, L->px_small, line, &tw, &th);
    x -= tw + paint_px(L->s, 18);
    paint_text(cv, FONT_SANS, L->px_small, v->playing ? THEME.accent : THEME.muted, 255, x,
               s.y + (s.h - th) / 2, ALIGN_LEFT, line);
    paint_clip(cv, NULL);
}

// One column of the help: "keys\tmeaning" lines at px; returns the height used.
static int help_column(Canvas *cv, const char *body, int px, int x, int y, int w, bool draw)
{
    int keyw = w * 34 / 100, y0 = y;
    char line[400];
    for (const char *p = body; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n >= sizeof line) n = sizeof line - 1;
        memcpy(line, p, n);
        line[n] = '\0';
        char *tab = strchr(line, '\t');
        if (tab) *tab = '\0';
        int used = px * 13 / 10, kw, kh, below = 0;
        paint_text_size(cv, FONT_BOLD, px, line, &kw, &kh);
        if (tab && kw > keyw - px / 2) below = px * 13 / 10; // a long key: its meaning on the next line
        if (tab) {
            used = paint_text_wrapped_height(cv, FONT_SANS, px, w - keyw, tab + 1);
            if (used < px * 13 / 10) used = px * 13 / 10;
        }
        if (draw) {
            paint_text(cv, FONT_BOLD, px, THEME.ink, 255, x, y, ALIGN_LEFT, line);
            if (tab)
                paint_text_wrapped(cv, FONT_SANS, px, px, THEME.ink, 255, (Rect){x + keyw, y + below, w - keyw, used},
                                   tab + 1);
        }
        y += used + below + px / 4;
        p = nl ? nl + 1 : p + n;
    }
    return y - y0;
}

void chrome_draw_help(Canvas *cv, const Layout *L, const View *v)
{
    paint_fill(cv, THEME.black, 150, 0, 0, L->w, L->h);
    int bw = L->w * 92 / 100, bh = L->h * 90 / 100;
    int bx = (L->w - bw) / 2, by = (L->h - bh) / 2, pad = paint_px(L->s, 20);
    paint_fill(cv, THEME.white, 255, bx, by, bw, bh);
    paint_frame(cv, THEME.accent, 255, bx, by, bw, bh, paint_px(L->s, 3));
    // two columns: viewing on the left; the what-if lab, then presenting, on the right
    const char *body = i18n_get(v->lang, "help.body"), *lab = i18n_get(v->lang, "help.lab");
    const char *pres = i18n_get(v->lang, "help.present");
    int colw = (bw - 3 * pad) / 2, head = L->px_title * 17 / 10;
    int top = by + pad + head, avail = by + bh - pad - L->px_small * 2 - top;
    int px = L->px_help;
    while (px > 10 && (help_column(cv, body, px, 0, 0, colw, false) > avail ||
                       help_column(cv, lab, px, 0, 0, colw, false) + help_column(cv, pres, px, 0, 0, colw, false) +
                               head + L->px_title / 2 > avail))
        px -= 1;
    paint_clip(cv, &(Rect){bx, by, bw, bh});
    paint_text(cv, FONT_BOLD, L->px_title, THEME.accent, 255, bx + pad, by + pad, ALIGN_LEFT,
               i18n_get(v->lang, "help.title"));
    paint_text(cv, FONT_BOLD, L->px_title, THEME.accent, 255, bx + 2 * pad + colw, by + pad, ALIGN_LEFT,
               i18n_get(v->lang, "help.lab_title"));
    help_column(cv, body, px, bx + pad, top, colw, true);
    int lab_h = help_column(cv, lab, px, bx + 2 * pad + colw, top, colw, true);
    int y1 = top + lab_h + L->px_title / 2; // presenting, under the lab
    paint_text(cv, FONT_BOLD, L->px_title, THEME.accent, 255, bx + 2 * pad + colw, y1, ALIGN_LEFT,
               i18n_get(v->lang, "help.present_title"));
    help_column(cv, pres, px, bx + 2 * pad + colw, y1 + head, colw, true);
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
    if (!paint_text_block_size(cv, FONT_SANS, L->px_body, L->w - 4 * pad, ov->toast, &tw, &th)) return;
    // over the narration box (for a few seconds): never over the numbers it is about
    Rect nb = L->narration;
    int bx = nb.w > tw + 2 * pad ? nb.x + (nb.w - tw) / 2 - pad : (L->w - tw) / 2 - pad, by = nb.y + pad;
    if (by + th + 2 * pad > L->h) by = L->h - th - 2 * pad;
    if (by < 0) by = 0;
    paint_fill(cv, THEME.toast_bg, (uint8_t)(a * 9 / 10), bx, by, tw + 2 * pad, th + 2 * pad);
    paint_text_block(cv, FONT_SANS, L->px_body, L->w - 4 * pad, THEME.white, a, bx + pad, by + pad, ov->toast);
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
