// app_export.c — E in the window (its state: ExportUI, app_export.h): the whole lesson
// as frames, a handout, a video, a few frames a loop on its own surface (export.h), with
// its progress over the frame.
#include "app_export.h"

#include "app_options.h" // app_on_saved

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "handout.h"
#include "text.h"
#include "video.h"

bool app_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

// DIR/attnviz-export-NAME-N: DIR = $ATTNVIZ_SAVE_DIR or ".", NAME the lesson file's
// name without .json (letters, digits, - and _), N the first number not taken.
static void export_dir_name(const Session *ses, char *out, size_t n)
{
    const char *dir = getenv("ATTNVIZ_SAVE_DIR");
    if (!dir || !*dir) dir = ".";
    char name[64];
    session_file_stem(ses, name, sizeof name);
    for (int i = 1; i < 10000; i++) {
        snprintf(out, n, "%.900s/attnviz-export-%s-%d", dir, name, i);
        if (!app_file_exists(out)) return;
    }
}

static void export_start(ExportUI *x, ExportFormat format, const ExportFrom *from, Toast *t)
{
    if (x->job) return; // one at a time
    const Session *ses = from->session;
    const View *v = from->view;
    if (from->studying) { // every stage's result, answered or not: not while studying
        toast_show(t, v->lang, "study.no_export", NULL);
        return;
    }
    ExportOptions o;
    export_options_init(&o);
    export_dir_name(ses, x->dir, sizeof x->dir);
    int w = from->w, h = from->h;
    // GIF, MP4: the animation of every transition (H.264: an even size)
    const ExportFormatInfo *fmt = export_format_info(format);
    o.format = format;
    o.animate = fmt->animated;
    if (fmt->even_size) w &= ~1, h &= ~1;
    o.dir = x->dir;
    o.lesson_path = ses->path;
    o.width = w, o.height = h;
    o.lang = v->lang;
    o.batch = v->batch, o.head = v->head;
    o.threads = o.threads > 2 ? 2 : o.threads; // leave the window a core
    // an edited lesson is exported as it is now (values, not the Δ view), marked edited
    o.edited = session_edited(ses), o.n_edits = ses->log.applied;
    o.ref = o.edited ? session_original_trace(ses) : NULL;
    o.title = session_title(ses, v->lang, x->title, sizeof x->title);
    o.no_index = from->browser && fmt->animated; // (the page downloads the GIF or MP4 alone: web.js)
    char err[MSG_MAX];
    // the frames are drawn offscreen, like --export at this size: a resize or F
    // during the export changes nothing in them, and the window's caches stay
    if (!export_target_create(&x->target, from->font_path, v->lang, w, h, err, sizeof err)) {
        toast_show(t, v->lang, "app.export_failed", err);
        t->left = EXPORT_TOAST_SECONDS;
        return;
    }
    x->view = *v;
    x->view.delta = false;
    x->view.cmp = NULL, x->view.cmp_b = NULL, x->view.cmp_spec = NULL; // (E writes the stage's panels; R may free B meanwhile)
    x->view.ref = o.ref;
    x->measure = (TextMeasure){text_measure, x->target.fonts};
    x->view.measure = &x->measure;
    // projector mode: every part of a stage shown in parts, each a frame
    int *parts = NULL;
    if (v->projector && (parts = malloc(sizeof *parts * (size_t)ses->trace.n))) {
        export_parts(&ses->trace, &x->view, w, h, parts);
        o.projector = true, o.parts = parts;
    }
    x->job = export_job_begin(&o, &ses->lesson, &ses->trace, -1, err, sizeof err);
    free(parts);
    if (!x->job) {
        export_target_destroy(&x->target);
        toast_show(t, v->lang, "app.export_failed", err);
        t->left = EXPORT_TOAST_SECONDS;
        return;
    }
}

// The handout (or the worksheet) of the lesson as it is now (edits included), in the
// window's language, batch and head: ATTNVIZ_SAVE_DIR (or .)/attnviz-handout-NAME-N.pdf
// (attnviz-worksheet-NAME-N.pdf).
static void handout_start(const ExportFrom *from, bool worksheet, Toast *t)
{
    const Session *ses = from->session;
    const View *v = from->view;
    const char *dir = getenv("ATTNVIZ_SAVE_DIR");
    if (!dir || !*dir) dir = ".";
    char name[64], path[1200], err[MSG_MAX];
    session_file_stem(ses, name, sizeof name);
    for (int i = 1; i < 10000; i++) {
        snprintf(path, sizeof path, "%.900s/attnviz-%s-%s-%d.pdf", dir, worksheet ? "worksheet" : "handout", name, i);
        if (!app_file_exists(path)) break;
    }
    HandoutOptions o = {path, ses->path, from->font_path, v->lang, PAPER_A4, v->batch, v->head, NULL, worksheet, false};
    int pages = 0;
    if (!handout_write(&o, ses, NULL, &pages, err, sizeof err)) {
        fprintf(stderr, "attnviz: handout: %s\n", err);
        toast_show(t, v->lang, "app.export_failed", err);
    } else {
        toast_show(t, v->lang, "app.saved", path);
        printf("%s\n", path);
        fflush(stdout);
        if (app_on_saved) app_on_saved(path);
    }
    t->left = EXPORT_TOAST_SECONDS;
}

void export_ui_ask(ExportUI *x, const ExportFrom *from, Toast *t)
{
    if (x->job) return;
    if (from->studying) { // every stage's result, answered or not (frames, handout, video)
        toast_show(t, from->view->lang, "study.no_export", NULL);
        return;
    }
    x->choose = true; // (the page: only what it can make)
    toast_show(t, from->view->lang, from->browser ? "app.export_choose_web" : "app.export_choose", "");
    t->left = EXPORT_TOAST_SECONDS;
}

// The export-format table's menu rows (1 PNG frames, 3 MP4, 4 GIF, 5 SVG frames, 6 PDF
// frames), 2 the PDF handout and 7 the PDF worksheet; anything else cancels; in the page
// only what the page makes (all of them, MP4 where the browser encodes H.264:
// src/web/web_video.c).
void export_ui_choose_key(ExportUI *x, SDL_Keycode sym, const ExportFrom *from, Toast *t)
{
    x->choose = false;
    t->left = 0;
    int digit = sym >= SDLK_1 && sym <= SDLK_9       ? (int)(sym - SDLK_0)
                : sym >= SDLK_KP_1 && sym <= SDLK_KP_9 ? (int)(sym - SDLK_KP_1) + 1
                                                       : 0;
    bool handout;
    const ExportFormatInfo *fmt = export_format_menu(digit, from->browser, &handout);
    if (fmt && fmt->format == EXPORT_MP4 && !video_available(VIDEO_MP4)) { // (not in the page's menu then: why)
        toast_show(t, from->view->lang, "app.export_no_mp4", NULL);
        t->left = EXPORT_TOAST_SECONDS;
    } else if (fmt) {
        export_start(x, fmt->format, from, t);
    } else if (handout) {
        handout_start(from, digit == EXPORT_MENU_WORKSHEET, t);
    }
}

// Ends the export: waits for the encoders, writes frames.json (listing what is
// complete), frees the offscreen target, then a toast saying where the files are
// or what failed (one line naming the file and the cause, also on stderr).
static void export_end(ExportUI *x, Lang lang, Toast *t)
{
    int written = 0;
    char err[MSG_MAX], n[16];
    bool ok = export_job_finish(x->job, false, &written, err, sizeof err);
    x->job = NULL;
    export_target_destroy(&x->target);
#ifdef __GLIBC__
    // An export at 4K frees ~200 MB of frame buffers and a font set; give the
    // pages back so a long class session keeps the footprint it started with.
    malloc_trim(0);
#endif
    if (!ok) {
        fprintf(stderr, "attnviz: export to %s: %s\n", x->dir, err);
        toast_show(t, lang, "app.export_failed", err);
        t->left = EXPORT_TOAST_SECONDS;
        return;
    }
    snprintf(n, sizeof n, "%d", written);
    const char *args[] = {n, x->dir};
    toast_say(t, lang, "app.exported", 2, args, EXPORT_TOAST_SECONDS);
    printf("%s\n", x->dir);
    fflush(stdout);
    if (app_on_saved) app_on_saved(x->dir);
}

// Draws export frames offscreen for at most budget seconds, without waiting for
// an encoder; ends the export on a failure or once every frame is settled
// (written, or skipped after a failed write).
void export_ui_update(ExportUI *x, double budget, Lang lang, Toast *t)
{
    if (!x->job) return;
    ExportJob *j = x->job;
    ExportTarget *tg = &x->target;
    Canvas c = {tg->r, tg->fonts, tg->heatmaps, NULL, &tg->draw};
    Uint64 freq = SDL_GetPerformanceFrequency(), t0 = SDL_GetPerformanceCounter();
    while (export_job_drawn(j) < export_job_total(j) && export_job_ready(j)) {
        if (!export_job_step(j, &c, &x->view)) break; // a failure: export_job_failed
        if ((double)(SDL_GetPerformanceCounter() - t0) / (double)freq > budget) break;
    }
    if (export_job_failed(j) || export_job_settled(j) >= export_job_total(j)) export_end(x, lang, t);
}

// Esc during an export: the job ends as interrupted (its video removed, not renamed into
// place), then the folder it made, which holds only what it wrote, goes too.
void export_ui_stop(ExportUI *x, Lang lang, Toast *t)
{
    if (!x->job) return;
    int written = 0;
    char err[MSG_MAX];
    (void)export_job_finish(x->job, true, &written, err, sizeof err); // (an error: nothing is kept anyway)
    x->job = NULL;
    export_target_destroy(&x->target);
    DIR *d = opendir(x->dir);
    struct dirent *e;
    char path[sizeof x->dir + 300];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%.255s", x->dir, e->d_name);
            unlink(path);
        }
    if (d) closedir(d);
    rmdir(x->dir);
    toast_show(t, lang, "app.export_stopped", x->dir);
    t->left = EXPORT_TOAST_SECONDS;
}

// Finishes a running export now (before the lesson changes or the window closes):
// draws what is left, waiting on the encoders' condition variable for buffers,
// then export_end joins them. Nothing polls; a failure ends it early.
void export_ui_complete(ExportUI *x, Lang lang, Toast *t)
{
    if (!x->job) return;
    ExportJob *j = x->job;
    ExportTarget *tg = &x->target;
    Canvas c = {tg->r, tg->fonts, tg->heatmaps, NULL, &tg->draw};
    while (export_job_step(j, &c, &x->view)) {}
    export_end(x, lang, t);
}
