// handout.c — the printable handout (see handout.h). Pages are laid out in
// pixels (1400 across, 1 px = the page's width / 1400) and drawn through the
// paint layer on the vector backend, the frame in a viewport of its own.
#include "handout.h"
#include "interrupt.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assets.h"
#include "cli.h"
#include "export.h"
#include "i18n.h"
#include "icon.h"
#include "layout.h"
#include "paint_vec.h"
#include "quiz.h"
#include "render.h"
#include "scene.h"
#include "session.h"
#include "temp_file.h"
#include "utf8.h"

#define PAGE_W 1400                 // page width in layout pixels
#define MARGIN 60
#define FRAME_W 1280                // the frame: the page's width inside the margins (1280 px, as exported)
#define FRAME_H 720                 // at least this tall; taller where the page has room
#define TEXT_ROOM 560               // under the frame: the formula, narration and shapes (or questions)
#define STUDY_MAX_Q (QUIZ_MAX_QUESTIONS + LESSON_MAX_QUIZ)
#define STUDY_SEED_HANDOUT 1u       // the study mode's questions (study.h's STUDY_SEED): a worksheet matches
#define PATH_IN_MSG 400


typedef struct Page {
    Canvas *cv;
    Lang lang;
    int h;              // page height in layout pixels
    const char *title;  // the lesson's
    int number, pages;
    bool worksheet;     // questions under each frame, its result's cells empty; answers at the end
    const QuizQuestion *q;
    int n_q;
} Page;

static void footer(const Page *pg)
{
    char n[16], of[16], line[600];
    snprintf(n, sizeof n, "%d", pg->number);
    snprintf(of, sizeof of, "%d", pg->pages);
    const char *args[] = {pg->title, n, of};
    i18n_fmt(line, sizeof line, pg->lang, "handout.page", 3, args);
    paint_fill(pg->cv, THEME.grid, 255, MARGIN, pg->h - 80, PAGE_W - 2 * MARGIN, 1);
    paint_text(pg->cv, FONT_SANS, 20, THEME.muted, 255, PAGE_W / 2, pg->h - 66, ALIGN_CENTER, line);
}

static void title_page(Page *pg, const Trace *tr, int batch, int head)
{
    Canvas *cv = pg->cv;
    paint_clear(cv, THEME.white);
    Rect icon = {MARGIN, MARGIN + 20, 128, 128};
    paint_viewport(cv, &icon);
    icon_draw(cv);
    paint_viewport(cv, NULL);
    int y = MARGIN + 200;
    y += paint_text_wrapped(cv, FONT_BOLD, 56, 32, THEME.ink, 255, (Rect){MARGIN, y, PAGE_W - 2 * MARGIN, 220}, pg->title);
    y += 24;
    y += paint_text_wrapped(cv, FONT_SANS, 28, 20, THEME.muted, 255, (Rect){MARGIN, y, PAGE_W - 2 * MARGIN, 120},
                            i18n_get(pg->lang, pg->worksheet ? "handout.worksheet" : "handout.subtitle"));
    char b[16], h[16], n[16], line[300];
    snprintf(b, sizeof b, "%d", batch);
    snprintf(h, sizeof h, "%d", head);
    snprintf(n, sizeof n, "%d", tr->n);
    const char *args[] = {b, h, n};
    i18n_fmt(line, sizeof line, pg->lang, "handout.slice", 3, args);
    y += 20;
    paint_text(cv, FONT_SANS, 26, THEME.ink, 255, MARGIN, y, ALIGN_LEFT, line);
    y += 80;
    paint_text(cv, FONT_BOLD, 30, THEME.accent, 255, MARGIN, y, ALIGN_LEFT, i18n_get(pg->lang, "handout.contents"));
    y += 50;
    // one line a stage: its number, title and page; smaller when they would not fit
    int row = (pg->h - 120 - y) / (tr->n > 0 ? tr->n : 1);
    if (row > 40) row = 40;
    int px = row * 2 / 3 < 14 ? 14 : row * 2 / 3 > 26 ? 26 : row * 2 / 3;
    for (int s = 0; s < tr->n; s++) {
        char num[16], page[16], buf[160];
        snprintf(num, sizeof num, "%d.", s + 1);
        snprintf(page, sizeof page, "%d", s + 2);
        paint_text(cv, FONT_SANS, px, THEME.muted, 255, MARGIN + 40, y, ALIGN_RIGHT, num);
        const char *t = paint_fit_text(cv, FONT_SANS, px, recipe_stage_text(tr, s, "title", true, pg->lang), PAGE_W - 2 * MARGIN - 160, buf, sizeof buf);
        paint_text(cv, FONT_SANS, px, THEME.ink, 255, MARGIN + 56, y, ALIGN_LEFT, t);
        paint_text(cv, FONT_SANS, px, THEME.muted, 255, PAGE_W - MARGIN, y, ALIGN_RIGHT, page);
        y += row;
    }
    footer(pg);
}

// How tall a printed frame of v needs to be, at most h: its panels (centred in their
// area: their captions to the derivation strip under them), then the legend.
static int frame_need(Layout *T, const Trace *tr, const View *v, int h)
{
    layout_compute(T, tr, v, FRAME_W, h);
    int top = h, end = 0;
    for (int p = 0; p < T->n_panels; p++) {
        if (T->caption[p].y < top) top = T->caption[p].y;
        if (T->panel[p].y + T->panel[p].h > end) end = T->panel[p].y + T->panel[p].h;
    }
    if (T->deriv.w > 0 && T->deriv.y + T->deriv.h > end) end = T->deriv.y + T->deriv.h;
    int need = T->area.y + (end - top) + 24 + (h - T->legend.y);
    return need < 300 ? 300 : need > h ? h : need;
}

static void stage_page(Page *pg, const Trace *tr, const View *base, int stage)
{
    Canvas *cv = pg->cv;
    View v = *base;
    v.stage = stage, v.anim = 1.0f, v.playing = false;
    v.print = true; // no window chrome: the page has its own header
    view_reset_zoom(&v);
    int n_here = 0;
    for (int i = 0; i < pg->n_q; i++) n_here += pg->q[i].stage == stage;
    v.hide_result = pg->worksheet && n_here > 0; // the result's cells empty, to be filled in
    paint_clear(cv, THEME.white);
    const Stage *st = &tr->stages[stage];
    char k[16], n[16], head[200];
    snprintf(k, sizeof k, "%d", stage + 1);
    snprintf(n, sizeof n, "%d", tr->n);
    const char *args[] = {k, n};
    i18n_fmt(head, sizeof head, pg->lang, "handout.step", 2, args);
    int y = MARGIN - 10;
    paint_text(cv, FONT_SANS, 24, THEME.muted, 255, MARGIN, y, ALIGN_LEFT, head);
    y += paint_text_wrapped(cv, FONT_BOLD, 34, 22, THEME.ink, 255, (Rect){MARGIN, y + 34, PAGE_W - 2 * MARGIN, 90},
                            recipe_stage_text(tr, (int)(st - tr->stages), "title", true, pg->lang)) + 50;
    // the frame across the page's width without the window's chrome: the operands in
    // one frame, the result in a second under it, each as large as the width allows and
    // as tall as it needs, together at most what the page leaves for them
    int bottom = pg->h - 100, avail = bottom - y - 40 - TEXT_ROOM;
    if (avail < FRAME_H) avail = FRAME_H;
    v.print_split = true, v.part = 0;
    int n_frames = 1, need[2] = {avail, 0}, gap = 24;
    Layout *T = malloc(sizeof *T);
    if (T) {
        layout_compute(T, tr, &v, FRAME_W, avail);
        n_frames = T->split ? 2 : 1;
        for (int f = 0; f < n_frames; f++) {
            v.part = f;
            need[f] = frame_need(T, tr, &v, avail);
        }
        free(T);
    }
    int sum = need[0] + (n_frames > 1 ? gap + need[1] : 0);
    if (sum > avail) // smaller, in proportion
        for (int f = 0; f < n_frames; f++) need[f] = (int)((long)need[f] * (avail - (n_frames - 1) * gap) / (sum - (n_frames - 1) * gap));
    int frame_h = need[n_frames - 1];
    for (int f = 0; f < n_frames; f++) {
        v.part = f;
        Rect fr = {(PAGE_W - FRAME_W) / 2, y, FRAME_W, need[f]};
        paint_viewport(cv, &fr);
        render_frame(cv, tr, &v, NULL);
        paint_viewport(cv, NULL);
        paint_frame(cv, THEME.grid, 255, fr.x - 2, fr.y - 2, fr.w + 4, fr.h + 4, 2);
        y += need[f] + (f + 1 < n_frames ? gap : 40);
    }
    // formula, narration and shapes, from the frame's own scene
    Layout L;
    v.print_split = false, v.part = 0; // (the whole stage's panels, for the shapes)
    layout_compute(&L, tr, &v, FRAME_W, frame_h);
    int w = PAGE_W - 2 * MARGIN;
    paint_text(cv, FONT_BOLD, 24, THEME.accent, 255, MARGIN, y, ALIGN_LEFT, i18n_get(pg->lang, "handout.formula"));
    y += 36;
    y += paint_text_wrapped(cv, FONT_SANS, 30, 18, THEME.ink, 255, (Rect){MARGIN, y, w, 90}, L.formula) + 6;
    if (L.formula_note[0])
        y += paint_text_wrapped(cv, FONT_SANS, 24, 16, THEME.muted, 255, (Rect){MARGIN, y, w, 60}, L.formula_note);
    y += 24;
    if (pg->worksheet) { // the stage's questions, numbered through the lesson, with room to answer
        if (n_here == 0) {
            footer(pg);
            return;
        }
        paint_text(cv, FONT_BOLD, 24, THEME.accent, 255, MARGIN, y, ALIGN_LEFT, i18n_get(pg->lang, "handout.questions"));
        y += 40;
        int room = (bottom - y) / n_here;
        for (int i = 0, no = 0; i < pg->n_q; i++) {
            if (pg->q[i].stage != stage) {
                no += pg->q[i].stage < stage;
                continue;
            }
            char line[600];
            snprintf(line, sizeof line, "%d. %s", ++no, pg->q[i].question);
            int th = paint_text_wrapped(cv, FONT_SANS, 26, 16, THEME.ink, 255, (Rect){MARGIN, y, w, room - 44},
                                        line);
            paint_fill(cv, THEME.muted, 255, MARGIN + 40, y + th + 34, w - 40, 1); // the line to write on
            y += room > th + 50 ? room : th + 50;
        }
        footer(pg);
        return;
    }
    char narr[600];
    paint_text(cv, FONT_BOLD, 24, THEME.accent, 255, MARGIN, y, ALIGN_LEFT, i18n_get(pg->lang, "ui.what"));
    y += 36;
    int shapes_h = 36 + ((L.n_panels + 1) / 2 + 1) * 32;
    int room = bottom - shapes_h - 24 - y;
    if (room > 40)
        y += paint_text_wrapped(cv, FONT_SANS, 26, 16, THEME.ink, 255, (Rect){MARGIN, y, w, room},
                                scene_narration(tr, &v, narr, sizeof narr)) + 24;
    paint_text(cv, FONT_BOLD, 24, THEME.accent, 255, MARGIN, y, ALIGN_LEFT, i18n_get(pg->lang, "handout.shapes"));
    y += 36;
    char shape[64], line[200];
    tensor_shape_str(&st->t, shape, sizeof shape);
    snprintf(line, sizeof line, "%s %s", recipe_stage_text(tr, (int)(st - tr->stages), "name", true, pg->lang), shape);
    paint_text(cv, FONT_MONO, 24, THEME.ink, 255, MARGIN, y, ALIGN_LEFT, line);
    y += 32;
    for (int p = 0; p < L.n_panels && y < bottom; p++) {
        const PanelSpec *ps = &L.spec[p];
        snprintf(line, sizeof line, "%s  %d×%d", ps->title, ps->rows, ps->cols);
        paint_text(cv, FONT_SANS, 24, ps->result ? THEME.accent : THEME.ink, 255, MARGIN + (p % 2) * (w / 2), y,
                   ALIGN_LEFT, line);
        if (p % 2 == 1) y += 32;
    }
    footer(pg);
}

// A worksheet's answers, from question `from` on as many as fit; returns the next one.
// draw false: only measures (how many pages the answers take).
static int answers_page(Page *pg, const Trace *tr, int from, bool draw)
{
    Canvas *cv = pg->cv;
    int y = MARGIN, w = PAGE_W - 2 * MARGIN, bottom = pg->h - 110;
    if (draw) {
        paint_clear(cv, THEME.white);
        paint_text(cv, FONT_BOLD, 34, THEME.ink, 255, MARGIN, y, ALIGN_LEFT, i18n_get(pg->lang, "handout.answers"));
    }
    y += 64;
    int i = from;
    for (; i < pg->n_q; i++) {
        char no[16], ans[400], line[800];
        snprintf(no, sizeof no, "%d", i + 1);
        quiz_answer_text(&pg->q[i], ans, sizeof ans);
        const char *args[] = {no, recipe_stage_text(tr, pg->q[i].stage, "title", true, pg->lang), ans};
        i18n_fmt(line, sizeof line, pg->lang, "handout.answer_item", 3, args);
        int th = paint_text_wrapped_height(cv, FONT_SANS, 24, w, line);
        if (y + th > bottom && i > from) break;
        if (draw) paint_text_wrapped(cv, FONT_SANS, 24, 16, THEME.ink, 255, (Rect){MARGIN, y, w, bottom - y}, line);
        y += th + 12;
    }
    if (draw) footer(pg);
    return i;
}

bool handout_write(const HandoutOptions *o, const Session *ses, volatile const int *stop, int *pages, char *err,
                   size_t n)
{
    char tmp[4300] = "";
    bool ok = false;
    FILE *f = NULL;
    PaintVec *vec = NULL;
    ExportTarget t = {0};
    HeatmapCache *hc = NULL;
    QuizQuestion *qs = NULL;
    const Trace *tr = &ses->trace;
    *pages = 0;
    err[0] = '\0';
    if (!export_target_create(&t, o->font_path, o->lang, FRAME_W, FRAME_H, err, n)) goto done;
    if (!(hc = heatmap_cache_create())) {
        snprintf(err, n, "attnviz: out of memory");
        goto done;
    }
    Lang lang = fonts_usable_lang(t.fonts, o->lang, stderr);
    // A4 210 × 297 mm, letter 8.5 × 11 in, in points
    double w_pt = o->paper == PAPER_LETTER ? 612.0 : 595.2756, h_pt = o->paper == PAPER_LETTER ? 792.0 : 841.8898;
    int page_h = (int)(PAGE_W * h_pt / w_pt);
    if (!(f = temp_file_open_target(o->path, tmp, sizeof tmp))) {
        snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, o->path, temp_file_strerror(errno));
        tmp[0] = '\0';
        goto done;
    }
    if (!(vec = paint_vec_create_pdf_pages(f, w_pt, h_pt, PAGE_W, page_h, err, n))) goto done;
    Canvas cv = {t.r, t.fonts, hc, vec, &t.draw};
    View v;
    view_init(&v, &ses->lesson, lang);
    v.batch = o->batch, v.head = o->head;
    v.edited = session_edited(ses), v.n_edits = ses->log.applied;
    v.ref = v.edited ? session_original_trace(ses) : NULL;
    TextMeasure measure = {text_measure, t.fonts};
    v.measure = &measure;
    char title[LESSON_MAX_TEXT + 64];
    Page pg = {&cv, lang, page_h, session_title(ses, lang, title, sizeof title), 1, tr->n + 1, o->worksheet, NULL, 0};
    int answer_pages = 0;
    if (o->worksheet) { // the study mode's questions (the same seed): a stage's under its frame
        if (!(qs = malloc(sizeof *qs * STUDY_MAX_Q))) {
            snprintf(err, n, "attnviz: out of memory");
            goto done;
        }
        pg.q = qs;
        // (only about the slice the pages print)
        pg.n_q = quiz_all_in_slice(tr, &ses->lesson, lang, STUDY_SEED_HANDOUT, !session_edited(ses), o->batch, o->head, qs,
                                   STUDY_MAX_Q);
        for (int i = 0; i < pg.n_q; answer_pages++) i = answers_page(&pg, tr, i, false);
        if (answer_pages == 0) answer_pages = 1;
        pg.pages += answer_pages;
    }
    bool good = paint_vec_begin_page(vec, NULL);
    title_page(&pg, tr, o->batch, o->head);
    good = paint_flush(&cv) && good;
    good = paint_vec_end_page(vec) && good;
    for (int s = 0; s < tr->n && good && !(stop && *stop); s++) {
        pg.number = s + 2;
        good = paint_vec_begin_page(vec, NULL);
        View vs = v; // the stage on the head its narration is about (unless --head)
        vs.stage = s, vs.head = scene_stage_head(tr, &vs, o->head_set ? o->head : -1);
        stage_page(&pg, tr, &vs, s);
        good = paint_flush(&cv) && good;
        good = paint_vec_end_page(vec) && good;
    }
    for (int i = 0, k = 0; pg.worksheet && k < answer_pages && good && !(stop && *stop); k++) {
        pg.number = tr->n + 2 + k;
        good = paint_vec_begin_page(vec, NULL);
        i = answers_page(&pg, tr, i, true);
        good = paint_flush(&cv) && good;
        good = paint_vec_end_page(vec) && good;
    }
    if (stop && *stop) goto done; // the caller says why
    good = good && paint_vec_finish(vec);
    int e = good ? 0 : paint_vec_errno(vec);
    paint_vec_destroy(vec);
    vec = NULL;
    if (good) e = temp_file_finish(f, tmp, o->path), good = e == 0, tmp[0] = '\0'; // fsync, rename (tmp gone)
    else if (fclose(f) != 0 && !e) e = errno;
    f = NULL;
    if (!good) {
        snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, o->path, temp_file_strerror(e ? e : EIO));
        goto done;
    }
    tmp[0] = '\0';
    *pages = pg.pages;
    ok = true;
done:
    free(qs);
    paint_vec_destroy(vec);
    if (f) fclose(f);
    if (tmp[0]) unlink(tmp);
    heatmap_cache_destroy(hc);
    export_target_destroy(&t);
    return ok;
}

int handout_run(const HandoutOptions *o)
{
    Interrupt saved;
    interrupt_catch(&saved);
    char err[LESSON_ERR_MAX + 200] = "", msg[LESSON_ERR_MAX + 200], assets[1100];
    int code = 1, pages = 0;
    Session *ses = session_open(o->lesson_path, o->edits, msg, sizeof msg);
    if (!ses) {
        snprintf(err, sizeof err, "%s", msg);
    } else if (!assets_find(assets, sizeof assets, err, sizeof err) || !i18n_load(assets, err, sizeof err)) {
        // err says which
    } else if (o->batch < 0 || o->batch >= ses->trace.batch || o->head < 0 || o->head >= ses->trace.n_heads) {
        snprintf(err, sizeof err, "attnviz: --batch/--head: %.*s has batches 0..%d and heads 0..%d", PATH_IN_MSG,
                 o->lesson_path, ses->trace.batch - 1, ses->trace.n_heads - 1);
        code = 2;
    } else if (handout_write(o, ses, (volatile const int *)&interrupt_signal, &pages, err, sizeof err)) {
        code = 0;
        cli_error(stdout, "handout: %d pages to %s", pages, o->path);
    } else if (interrupt_signal) {
        snprintf(err, sizeof err, "attnviz: handout interrupted by %s: %.*s not written",
                 interrupt_name(interrupt_signal), PATH_IN_MSG, o->path);
        code = interrupt_exit_code(interrupt_signal);
    }
    if (err[0]) utf8_fputs_line(stderr, err);
    i18n_free();
    session_destroy(ses);
    interrupt_restore(&saved);
    return code;
}
