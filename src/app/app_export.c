// app_export.c — E in the window: the whole lesson as frames, a handout, a video, a few
// frames a loop on its own surface (export.h), with its progress over the frame.
#include "window.h"

#include "app.h" // AppOptions

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "i18n.h"
#include "handout.h"
#include "user_dir.h"

bool app_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

// DIR/attnviz-export-NAME-N: DIR = $ATTNVIZ_SAVE_DIR or ".", NAME the lesson file's
// name without .json (letters, digits, - and _), N the first number not taken.
static void export_dir_name(App *a, char *out, size_t n)
{
    const char *dir = getenv("ATTNVIZ_SAVE_DIR");
    if (!dir || !*dir) dir = ".";
    char name[64];
    session_file_stem(a->session, name, sizeof name);
    for (int i = 1; i < 10000; i++) {
        snprintf(out, n, "%.900s/attnviz-export-%s-%d", dir, name, i);
        if (!app_file_exists(out)) return;
    }
}

static void export_start(App *a, ExportFormat format)
{
    if (a->export_job) return; // one at a time
    if (a->study->st.on) { // every stage's result, answered or not: not while studying
        app_toast(a, "study.no_export", NULL);
        return;
    }
    ExportOptions o;
    export_options_init(&o);
    export_dir_name(a, a->export_dir, sizeof a->export_dir);
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    // GIF, MP4: the animation of every transition (H.264: an even size)
    const ExportFormatInfo *fmt = export_format_info(format);
    o.format = format;
    o.animate = fmt->animated;
    if (fmt->even_size) w &= ~1, h &= ~1;
    o.dir = a->export_dir;
    o.lesson_path = a->session->path;
    o.width = w, o.height = h;
    o.lang = a->v.lang;
    o.batch = a->v.batch, o.head = a->v.head;
    o.threads = o.threads > 2 ? 2 : o.threads; // leave the window a core
    // an edited lesson is exported as it is now (values, not the Δ view), marked edited
    o.edited = session_edited(a->session), o.n_edits = a->session->log.applied;
    o.ref = o.edited ? session_original_trace(a->session) : NULL;
    o.title = session_title(a->session, a->v.lang, a->export_title, sizeof a->export_title);
    char err[MSG_MAX];
    // the frames are drawn offscreen, like --export at this size: a resize or F
    // during the export changes nothing in them, and the window's caches stay
    if (!export_target_create(&a->export_target, a->opt->font_path, a->v.lang, w, h, err, sizeof err)) {
        app_toast(a, "app.export_failed", err);
        a->toast_left = EXPORT_TOAST_SECONDS;
        return;
    }
    a->export_view = a->v;
    a->export_view.delta = false;
    a->export_view.ref = o.ref;
    a->export_measure = (TextMeasure){text_measure, a->export_target.fonts};
    a->export_view.measure = &a->export_measure;
    // projector mode: every part of a stage shown in parts, each a frame
    int *parts = NULL;
    if (a->v.projector && (parts = malloc(sizeof *parts * (size_t)a->session->trace.n))) {
        export_parts(&a->session->trace, &a->export_view, w, h, parts);
        o.projector = true, o.parts = parts;
    }
    a->export_job = export_job_begin(&o, &a->session->lesson, &a->session->trace, -1, err, sizeof err);
    free(parts);
    if (!a->export_job) {
        export_target_destroy(&a->export_target);
        app_toast(a, "app.export_failed", err);
        a->toast_left = EXPORT_TOAST_SECONDS;
        return;
    }
}

// The handout of the lesson as it is now (edits included), in the window's
// language, batch and head: ATTNVIZ_SAVE_DIR (or .)/attnviz-handout-NAME-N.pdf.
static void handout_start(App *a)
{
    const char *dir = getenv("ATTNVIZ_SAVE_DIR");
    if (!dir || !*dir) dir = ".";
    char name[64], path[1200], err[MSG_MAX];
    session_file_stem(a->session, name, sizeof name);
    for (int i = 1; i < 10000; i++) {
        snprintf(path, sizeof path, "%.900s/attnviz-handout-%s-%d.pdf", dir, name, i);
        if (!app_file_exists(path)) break;
    }
    HandoutOptions o = {path, a->session->path, a->opt->font_path, a->v.lang, PAPER_A4, a->v.batch, a->v.head, NULL, false, false};
    int pages = 0;
    if (!handout_write(&o, a->session, NULL, &pages, err, sizeof err)) {
        fprintf(stderr, "attnviz: handout: %s\n", err);
        app_toast(a, "app.export_failed", err);
    } else {
        app_toast(a, "app.saved", path);
        printf("%s\n", path);
        fflush(stdout);
        if (app_on_saved) app_on_saved(path);
    }
    a->toast_left = EXPORT_TOAST_SECONDS;
}

// E: the formats, chosen with the next key: the export-format table's menu rows (1 PNG
// frames, 3 MP4, 4 GIF) and 2 the PDF handout; anything else cancels; in the page only
// the rows the page makes (PNG frames).
void app_export_choose_key(App *a, SDL_Keycode sym)
{
    a->export_choose = false;
    a->toast_left = 0;
    int digit = sym >= SDLK_1 && sym <= SDLK_9       ? (int)(sym - SDLK_0)
                : sym >= SDLK_KP_1 && sym <= SDLK_KP_9 ? (int)(sym - SDLK_KP_1) + 1
                                                       : 0;
    bool handout;
    const ExportFormatInfo *fmt = export_format_menu(digit, a->opt->browser, &handout);
    if (fmt) export_start(a, fmt->format);
    else if (handout) handout_start(a);
}

// Ends the export: waits for the encoders, writes frames.json (listing what is
// complete), frees the offscreen target, then a toast saying where the files are
// or what failed (one line naming the file and the cause, also on stderr).
static void export_end(App *a)
{
    int written = 0;
    char err[MSG_MAX], n[16];
    bool ok = export_job_finish(a->export_job, false, &written, err, sizeof err);
    a->export_job = NULL;
    export_target_destroy(&a->export_target);
#ifdef __GLIBC__
    // An export at 4K frees ~200 MB of frame buffers and a font set; give the
    // pages back so a long class session keeps the footprint it started with.
    malloc_trim(0);
#endif
    if (!ok) {
        fprintf(stderr, "attnviz: export to %s: %s\n", a->export_dir, err);
        app_toast(a, "app.export_failed", err);
        a->toast_left = EXPORT_TOAST_SECONDS;
        return;
    }
    snprintf(n, sizeof n, "%d", written);
    const char *args[] = {n, a->export_dir};
    i18n_fmt(a->toast, sizeof a->toast, a->v.lang, "app.exported", 2, args);
    a->toast_left = EXPORT_TOAST_SECONDS;
    printf("%s\n", a->export_dir);
    fflush(stdout);
    if (app_on_saved) app_on_saved(a->export_dir);
}

// Draws export frames offscreen for at most budget seconds, without waiting for
// an encoder; ends the export on a failure or once every frame is settled
// (written, or skipped after a failed write).
void app_export_update(App *a, double budget)
{
    if (!a->export_job) return;
    ExportJob *j = a->export_job;
    ExportTarget *t = &a->export_target;
    Canvas c = {t->r, t->fonts, t->heatmaps, NULL, &t->draw};
    Uint64 freq = SDL_GetPerformanceFrequency(), t0 = SDL_GetPerformanceCounter();
    while (export_job_drawn(j) < export_job_total(j) && export_job_ready(j)) {
        if (!export_job_step(j, &c, &a->export_view)) break; // a failure: export_job_failed
        if ((double)(SDL_GetPerformanceCounter() - t0) / (double)freq > budget) break;
    }
    if (export_job_failed(j) || export_job_settled(j) >= export_job_total(j)) export_end(a);
}

// Finishes a running export now (before the lesson changes or the window closes):
// draws what is left, waiting on the encoders' condition variable for buffers,
// then export_end joins them. Nothing polls; a failure ends it early.
void app_export_complete(App *a)
{
    if (!a->export_job) return;
    ExportJob *j = a->export_job;
    ExportTarget *t = &a->export_target;
    Canvas c = {t->r, t->fonts, t->heatmaps, NULL, &t->draw};
    while (export_job_step(j, &c, &a->export_view)) {}
    export_end(a);
}
