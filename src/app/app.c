// app.c — the interactive window: events in, playback, one render_frame per frame.
//
// Initialization: assets + strings, lesson + trace (computed once), SDL window,
// renderer, fonts. Update: events → UI state (Playback + View). Draw:
// render_frame. De-initialization in reverse order.
#include "app.h"

#include <SDL.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "assets.h"
#include "cli.h"
#include "export.h"
#include "handout.h"
#include "i18n.h"
#include "lab.h"
#include "layout.h"
#include "picker.h"
#include "pins.h"
#include "playback.h"
#include "png_write.h"
#include "presenter.h"
#include "render.h"
#include "session.h"
#include "study_ui.h"
#include "text.h"
#include "view.h"

#define TOAST_SECONDS 3.0
#define MSG_MAX 1200

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

typedef struct App {
    const AppOptions *opt;
    Session *session;          // the lesson on screen, its trace and its path
    SDL_Window *win;
    SDL_Renderer *r;
    Fonts *fonts;
    TextMeasure measure;       // layout measures text with the window's fonts
    Overlays ov;               // what the window draws over the frame (tooltip, help, toast, picker, E)
    Layout layout;             // the frame's layout, for drawing and hit-testing (current_layout)
    View layout_view;          // the view and size it was computed for
    int layout_w, layout_h;
    bool layout_valid;
    bool trim_pending;         // return freed pages to the system after the next frame (a resize)
    TextMeasure export_measure; // and an E export with its own
    Playback pb;
    View v;
    char toast[MSG_MAX];
    double toast_left; // seconds
    int digit;          // the step number typed so far (1 then 0 → step 10), 0 = none
    Uint64 digit_ms;    // when it was typed (app_ms)
    double fake_ms_per_frame, fake_ms; // a fake clock (tests: app_test_hook, ATTNVIZ_TEST_CLOCK), 0: none
    bool quit;
    bool mouse_in;
    int mouse_wx, mouse_wy; // window coordinates
    // the lesson picker (O, the "Lessons…" button) and where lessons are listed from
    Picker picker;
    char lessons_dir[1200];    // lessons/ next to the assets
    // heatmaps drawn as images (large lessons), zoom/pan by dragging, export (E)
    HeatmapCache *heatmaps;
    bool dragging;
    int drag_x, drag_y;        // last drag position, renderer output pixels
    ExportJob *export_job;     // an export in progress, drawn a few frames per loop
    bool export_choose;        // E pressed: the next key picks the format
    ExportTarget export_target; // where it draws: its own surface, renderer, fonts and heatmap
                                // cache at the size of E, whatever the window does meanwhile
    View export_view;          // what it exports (the view when E was pressed)
    char export_dir[1200];
    char export_title[LESSON_MAX_TEXT + 64];
    Lab lab;                   // the what-if lab: selection, typing, switches, Δ, edit animation
    unsigned layout_gen;       // lab.gen the layout was computed for
    unsigned heatmap_gen;      // lab.gen the heatmap images were drawn for (values change in place)
    bool title_edited;         // the window's title says "(edited)"
    char stage_name[STAGE_NAME_MAX]; // the stage on screen, found again after an edit (sync_stage)
    StudyUI *study;            // the study mode (T, the "Study" button, --study) and progress.json
    Presenter *pres;           // the presenter window (--presenter, F5), NULL when closed
    bool black;                // "." : the audience window shows black
    PresentTools tools;        // pinned tooltips, spotlight, laser (pins.h)
    bool scrub_drag;           // the scrub bar's knob is being dragged
    int part_next;             // projector mode: the part the next stage starts with (← enters a result)
} App;

static void toast(App *a, const char *key, const char *arg)
{
    const char *args[] = {arg};
    i18n_fmt(a->toast, sizeof a->toast, a->v.lang, key, 1, args);
    a->toast_left = TOAST_SECONDS;
}

// The Layout of the frame on screen: computed once, drawn with, and hit-tested
// with until the view or the window size changes (then computed anew).
static const Layout *current_layout(App *a)
{
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    if (!a->layout_valid || w != a->layout_w || h != a->layout_h || a->layout_gen != a->lab.gen ||
        memcmp(&a->layout_view, &a->v, sizeof a->v) != 0) {
        if (a->heatmap_gen != a->lab.gen) { // an edit changes numbers at the same addresses
            heatmap_cache_flush(a->heatmaps);
            a->heatmap_gen = a->lab.gen;
        }
        layout_compute(&a->layout, lab_trace(&a->lab, a->session), &a->v, w, h);
        a->layout_view = a->v, a->layout_w = w, a->layout_h = h, a->layout_valid = true;
        a->layout_gen = a->lab.gen;
    }
    return &a->layout;
}

// Window coordinates → renderer output pixels (differ on HiDPI).
static void to_output(App *a, int x, int y, int *ox, int *oy)
{
    int ww, wh, ow, oh;
    SDL_GetWindowSize(a->win, &ww, &wh);
    SDL_GetRendererOutputSize(a->r, &ow, &oh);
    *ox = ww > 0 ? x * ow / ww : x;
    *oy = wh > 0 ? y * oh / wh : y;
}

static void save_frame(App *a)
{
    const char *dir = getenv("ATTNVIZ_SAVE_DIR");
    if (!dir || !*dir) dir = ".";
    const Stage *st = &a->session->trace.stages[a->pb.stage];
    char path[1100], err[MSG_MAX];
    snprintf(path, sizeof path, "%s/attnviz-%04d-%s.png", dir, a->pb.stage + 1, st->name);
    for (int k = 2; file_exists(path) && k < 1000; k++)
        snprintf(path, sizeof path, "%s/attnviz-%04d-%s-%d.png", dir, a->pb.stage + 1, st->name, k);
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGBA32);
    if (!s) {
        toast(a, "app.save_failed", SDL_GetError());
        return;
    }
    // the frame as shown (a tooltip, help), without the toast of an earlier save and
    // without the "Lessons…" and "What if…" buttons: otherwise the same pixels as an export
    Overlays ov = a->ov;
    ov.toast = NULL;
    ov.picker = NULL;
    ov.lab = NULL;
    Canvas c = {a->r, a->fonts, a->heatmaps, NULL};
    render_frame_laid_out(&c, current_layout(a), lab_trace(&a->lab, a->session), &a->v, &ov);
    if (SDL_RenderReadPixels(a->r, NULL, SDL_PIXELFORMAT_RGBA32, s->pixels, s->pitch) != 0) {
        snprintf(err, sizeof err, "%s: %s", path, SDL_GetError());
        toast(a, "app.save_failed", err);
    } else if (!png_write_rgba(path, s->pixels, w, h, s->pitch, 6, err, sizeof err)) {
        toast(a, "app.save_failed", err);
    } else {
        toast(a, "app.saved", path);
        printf("%s\n", path);
        fflush(stdout);
    }
    SDL_FreeSurface(s);
}

static void set_head(App *a, int h)
{
    int n = a->session->trace.n_heads > 0 ? a->session->trace.n_heads : 1;
    a->v.head = ((h % n) + n) % n;
}

static void set_batch(App *a, int b)
{
    int n = a->session->trace.batch > 0 ? a->session->trace.batch : 1;
    a->v.batch = ((b % n) + n) % n;
}

static void goto_step(App *a, StepId s)
{
    int first = trace_step_first(&a->session->trace, s);
    if (first >= 0) playback_goto(&a->pb, first, true);
}

// ---- export (E): the whole lesson as PNGs, a few frames per loop ----------------

#define EXPORT_TOAST_SECONDS 8.0

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
        if (!file_exists(out)) return;
    }
}

static void export_start(App *a, ExportFormat format)
{
    if (a->export_job) return; // one at a time
    if (a->study->st.on) { // every stage's result, answered or not: not while studying
        toast(a, "study.no_export", NULL);
        return;
    }
    ExportOptions o;
    export_options_init(&o);
    export_dir_name(a, a->export_dir, sizeof a->export_dir);
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    // GIF, MP4: the animation of every transition (H.264: an even size)
    o.format = format;
    o.animate = format == EXPORT_GIF || format == EXPORT_MP4;
    if (format == EXPORT_MP4) w &= ~1, h &= ~1;
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
        toast(a, "app.export_failed", err);
        a->toast_left = EXPORT_TOAST_SECONDS;
        return;
    }
    a->export_job = export_job_begin(&o, &a->session->lesson, &a->session->trace, -1, err, sizeof err);
    if (!a->export_job) {
        export_target_destroy(&a->export_target);
        toast(a, "app.export_failed", err);
        a->toast_left = EXPORT_TOAST_SECONDS;
        return;
    }
    a->export_view = a->v;
    a->export_view.delta = false;
    a->export_view.ref = o.ref;
    a->export_measure = (TextMeasure){text_measure, a->export_target.fonts};
    a->export_view.measure = &a->export_measure;
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
        if (!file_exists(path)) break;
    }
    HandoutOptions o = {path, a->session->path, a->opt->font_path, a->v.lang, PAPER_A4, a->v.batch, a->v.head, NULL};
    int pages = 0;
    if (!handout_write(&o, a->session, NULL, &pages, err, sizeof err)) {
        fprintf(stderr, "attnviz: handout: %s\n", err);
        toast(a, "app.export_failed", err);
    } else {
        toast(a, "app.saved", path);
        printf("%s\n", path);
        fflush(stdout);
    }
    a->toast_left = EXPORT_TOAST_SECONDS;
}

// E: the formats, chosen with the next key (1 PNG frames, 2 PDF handout, 3 MP4,
// 4 GIF; anything else cancels).
static void export_choose_key(App *a, SDL_Keycode sym)
{
    a->export_choose = false;
    a->toast_left = 0;
    switch (sym) {
    case SDLK_1: case SDLK_KP_1: export_start(a, EXPORT_PNG); break;
    case SDLK_2: case SDLK_KP_2: handout_start(a); break;
    case SDLK_3: case SDLK_KP_3: export_start(a, EXPORT_MP4); break;
    case SDLK_4: case SDLK_KP_4: export_start(a, EXPORT_GIF); break;
    default: break;
    }
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
        toast(a, "app.export_failed", err);
        a->toast_left = EXPORT_TOAST_SECONDS;
        return;
    }
    snprintf(n, sizeof n, "%d", written);
    const char *args[] = {n, a->export_dir};
    i18n_fmt(a->toast, sizeof a->toast, a->v.lang, "app.exported", 2, args);
    a->toast_left = EXPORT_TOAST_SECONDS;
    printf("%s\n", a->export_dir);
    fflush(stdout);
}

// Draws export frames offscreen for at most budget seconds, without waiting for
// an encoder; ends the export on a failure or once every frame is settled
// (written, or skipped after a failed write).
static void export_update(App *a, double budget)
{
    if (!a->export_job) return;
    ExportJob *j = a->export_job;
    ExportTarget *t = &a->export_target;
    Canvas c = {t->r, t->fonts, t->heatmaps, NULL};
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
static void export_complete(App *a)
{
    if (!a->export_job) return;
    ExportJob *j = a->export_job;
    ExportTarget *t = &a->export_target;
    Canvas c = {t->r, t->fonts, t->heatmaps, NULL};
    while (export_job_step(j, &c, &a->export_view)) {}
    export_end(a);
}

// ---- language (L), lesson picker (O, button), opening lessons (picker, drop) ----

#define ERROR_TOAST_SECONDS 8.0

static void set_window_title(App *a)
{
    char title[600], t[LESSON_MAX_TEXT + 64];
    const char *args[] = {session_title(a->session, a->v.lang, t, sizeof t)};
    i18n_fmt(title, sizeof title, a->v.lang, "app.title", 1, args);
    SDL_SetWindowTitle(a->win, title);
}

// L: English ⇄ 中文. Every string is looked up per frame, so only the window
// title needs setting; the fonts draw both languages (text.h).
static void switch_lang(App *a)
{
    Lang next = a->v.lang == LANG_ZH ? LANG_EN : LANG_ZH;
    if (fonts_usable_lang(a->fonts, next, stderr) != next) {
        toast(a, "app.no_cjk_font", NULL);
        return;
    }
    a->v.lang = next;
    study_ui_relang(a->study, a->session, next, a->pb.stage);
    set_window_title(a);
    presenter_set_lang(a->pres, next);
    toast(a, "app.lang", NULL);
}

// Replaces the lesson on screen by the one at path. The old session is
// destroyed only once the new one is complete; on failure the error is shown
// (toast and stderr) and the current lesson keeps running.
static bool open_lesson(App *a, const char *path)
{
    char msg[LESSON_ERR_MAX + 64];
    Session *s = session_create(path, msg, sizeof msg);
    if (!s) goto fail;
    if (s->trace.n == 0) {
        snprintf(msg, sizeof msg, "%.400s: the lesson has no stages", path);
        session_destroy(s);
        goto fail;
    }
    export_complete(a); // it borrows the session about to be destroyed
    lab_forget(&a->lab);
    bool studying = a->study->st.on;
    study_ui_end(a->study, a->session, a->pb.stage); // the old lesson's answers are kept
    session_destroy(a->session);
    a->session = s;
    a->title_edited = session_edited(s);
    // playback and view start over; language, palette, numbers and speed stay
    float speed = a->pb.speed;
    View old = a->v;
    playback_init(&a->pb, a->session->trace.n);
    playback_set_speed(&a->pb, speed);
    view_init(&a->v, &a->session->lesson, old.lang);
    a->v.palette = old.palette, a->v.show_values = old.show_values, a->v.prob_scale = old.prob_scale;
    a->v.measure = old.measure;
    fonts_flush(a->fonts); // cached texts of the old lesson (tokens, title, narration)
    heatmap_cache_flush(a->heatmaps); // and its heatmap images
    presenter_flush(a->pres);         // the presenter window's too
    tools_clear(&a->tools);           // pins name cells of the old lesson's stages
    a->picker.open = false;
    set_window_title(a);
    toast(a, "app.loaded", lesson_title(&a->session->lesson, a->v.lang));
    if (studying) playback_goto(&a->pb, study_ui_begin(a->study, a->session, a->v.lang, 0), false); // resumes
    return true;
fail:
    cli_error(stderr, "%s", msg);
    toast(a, "app.load_failed", msg);
    a->toast_left = ERROR_TOAST_SECONDS;
    return false;
}

static void picker_fit(App *a, PickerLayout *pl)
{
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    picker_layout(&a->picker, pl, w, h, current_layout(a)->s);
    picker_scroll_to_sel(&a->picker, pl->rows_fit);
}

// O or the button: lists lessons/ (next to the assets: the installed ones after
// make install), the current lesson's directory, --lessons DIR, where Ctrl+S
// saves and $XDG_DATA_HOME/attnviz/lessons (listed once when they are the same).
static void open_picker(App *a)
{
    char cur_dir[SESSION_PATH_MAX];
    snprintf(cur_dir, sizeof cur_dir, "%s", a->session->path);
    char *slash = strrchr(cur_dir, '/');
    if (slash) *slash = '\0';
    else snprintf(cur_dir, sizeof cur_dir, ".");
    char saved[1200], user[1200]; // where Ctrl+S puts edited lessons; the user's own lessons
    lab_save_dir(saved, sizeof saved);
    const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (x && *x == '/') snprintf(user, sizeof user, "%.1100s/attnviz/lessons", x);
    else snprintf(user, sizeof user, "%.1100s/.local/share/attnviz/lessons", home && *home ? home : ".");
    const char *dirs[] = {a->lessons_dir, cur_dir, a->opt->lessons_dir, saved, user};
    picker_scan(&a->picker, dirs, 5, a->session->path);
    study_ui_load_progress(a->study); // each lesson's score in the study mode
    for (int i = 0; i < a->picker.n; i++) {
        char key[PROGRESS_PATH_MAX];
        PickerItem *it = &a->picker.items[i];
        progress_key(it->path, key, sizeof key);
        it->studied = progress_score(&a->study->prog, key, &it->study_right, &it->study_answered, &it->study_total);
    }
    a->picker.open = true;
    PickerLayout pl;
    picker_fit(a, &pl);
}

static void picker_choose(App *a)
{
    if (a->picker.sel < 0 || a->picker.sel >= a->picker.n) return;
    char path[1100];
    snprintf(path, sizeof path, "%s", a->picker.items[a->picker.sel].path);
    open_lesson(a, path); // closes the picker on success; on failure it stays open
}

static void picker_key(App *a, SDL_Keycode sym)
{
    PickerLayout pl;
    picker_fit(a, &pl);
    switch (sym) {
    case SDLK_ESCAPE:
    case SDLK_o: a->picker.open = false; return;
    case SDLK_UP: picker_move(&a->picker, -1); break;
    case SDLK_DOWN: picker_move(&a->picker, 1); break;
    case SDLK_PAGEUP: picker_move(&a->picker, -pl.rows_fit); break;
    case SDLK_PAGEDOWN: picker_move(&a->picker, pl.rows_fit); break;
    case SDLK_HOME: picker_select(&a->picker, 0); break;
    case SDLK_END: picker_select(&a->picker, a->picker.n - 1); break;
    case SDLK_RETURN:
    case SDLK_KP_ENTER: picker_choose(a); return;
    case SDLK_l: switch_lang(a); break;
    default: return;
    }
    picker_scroll_to_sel(&a->picker, pl.rows_fit);
}

// Events for the picker and dropped files; true when consumed.
static bool lessons_event(App *a, const SDL_Event *e)
{
    if (e->type == SDL_DROPFILE) {
        if (e->drop.file) open_lesson(a, e->drop.file);
        SDL_free(e->drop.file);
        return true;
    }
    if (e->type == SDL_MOUSEBUTTONDOWN && e->button.button == SDL_BUTTON_LEFT && !a->ov.help) {
        int x, y;
        to_output(a, e->button.x, e->button.y, &x, &y);
        if (a->picker.open) {
            PickerLayout pl;
            picker_fit(a, &pl);
            int i = picker_hit(&pl, &a->picker, x, y);
            if (i >= 0) {
                picker_select(&a->picker, i);
                picker_choose(a);
            } else if (!rect_contains(pl.box, x, y)) {
                a->picker.open = false;
            }
            return true;
        }
        Rect b;
        if (picker_button_rect(current_layout(a), &b) && rect_contains(b, x, y)) {
            open_picker(a);
            return true;
        }
        return false;
    }
    if (!a->picker.open) return false;
    if (e->type == SDL_KEYDOWN) {
        picker_key(a, e->key.keysym.sym);
        return true;
    }
    if (e->type == SDL_MOUSEWHEEL) {
        PickerLayout pl;
        picker_fit(a, &pl);
        int dy = e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? -e->wheel.y : e->wheel.y;
        picker_move(&a->picker, -dy);
        picker_scroll_to_sel(&a->picker, pl.rows_fit);
        return true;
    }
    return e->type == SDL_MOUSEBUTTONDOWN || e->type == SDL_MOUSEBUTTONUP; // nothing under the overlay
}

// Zoom by factor at the mouse (over a heatmap) or at the result's centre.
static void zoom_by(App *a, float factor)
{
    const Layout *Lp = current_layout(a);
    int x = -1, y = -1;
    if (a->mouse_in) to_output(a, a->mouse_wx, a->mouse_wy, &x, &y);
    layout_zoom_at(&a->v, Lp, x, y, factor);
}

static void pan_by(App *a, int dx, int dy)
{
    const Layout *Lp = current_layout(a);
    int step = (int)(120 * Lp->s);
    layout_pan(&a->v, Lp, dx * step, dy * step);
}

const AppTestHook *app_test_hook;

// Milliseconds: SDL's clock, or the fake clock of the tests (ms_per_frame a frame).
static Uint64 app_ms(const App *a)
{
    return a->fake_ms_per_frame > 0.0 ? (Uint64)a->fake_ms : SDL_GetTicks64();
}

// Digits jump to a step of the timeline: 1–9 at once; a second digit typed
// within a second makes a two-digit step (1 then 0 → step 10, 1 then 1 → 11),
// as in presentation software. Returns false when the digit jumps nowhere.
static bool step_digit(App *a, int d)
{
    const Layout *Lp = current_layout(a);
    Uint64 now = app_ms(a);
    int n = a->digit > 0 && now - a->digit_ms < 1000 ? a->digit * 10 + d : d;
    if (n < 1 || n > Lp->n_steps) n = d;
    a->digit = n <= 9 ? n : 0;
    a->digit_ms = now;
    if (n < 1 || n > Lp->n_steps) return false;
    goto_step(a, Lp->step_id[n - 1]);
    return true;
}

// Before the lab changes the lesson: an export in progress borrows its trace, so it
// is finished first (edits during an E export would mix old and new frames).
static void lab_before_edit(void *ctx)
{
    export_complete(ctx);
}

// After an edit, undo or redo: the stage on screen is found again by name (an edit
// can add or remove the mask stage), else the nearest one; playback knows the count.
static void sync_stage(App *a)
{
    const Trace *tr = &a->session->trace;
    if (tr->n == a->pb.n_stages && a->pb.stage < tr->n && strcmp(tr->stages[a->pb.stage].name, a->stage_name) == 0)
        return;
    int i = trace_find(tr, a->stage_name);
    if (i < 0) i = a->pb.stage < tr->n ? a->pb.stage : tr->n - 1;
    if (tr->n != a->pb.n_stages) tools_clear(&a->tools); // the stages moved: pins name them by index
    a->pb.n_stages = tr->n;
    a->pb.stage = i;
    a->v.stage = i;
    snprintf(a->stage_name, sizeof a->stage_name, "%s", tr->stages[i].name);
}

// Before the lab handles an event: which stage is on screen, by name.
static void lab_begin(App *a)
{
    const Trace *tr = &a->session->trace;
    if (a->pb.stage >= 0 && a->pb.stage < tr->n)
        snprintf(a->stage_name, sizeof a->stage_name, "%s", tr->stages[a->pb.stage].name);
}

// After the lab handled an event: its message as a toast, a requested save, the title.
static void lab_after(App *a)
{
    sync_stage(a);
    if (a->lab.save_requested) {
        a->lab.save_requested = false;
        char dir[1200], path[1400];
        lab_save_dir(dir, sizeof dir);
        if (lab_save(&a->lab, a->session, dir, path, sizeof path)) {
            toast(a, "app.lesson_saved", path);
            printf("%s\n", path);
            fflush(stdout);
        } else {
            cli_error(stderr, "attnviz: %s", path);
            toast(a, "app.lesson_save_failed", path);
            a->toast_left = ERROR_TOAST_SECONDS;
        }
    }
    bool error = false;
    const char *m = lab_take_message(&a->lab, &error);
    if (m) {
        toast(a, "app.edited", m);
        if (error) a->toast_left = ERROR_TOAST_SECONDS;
    }
    if (session_edited(a->session) != a->title_edited) { // "(edited)" in the window's title
        a->title_edited = session_edited(a->session);
        set_window_title(a);
    }
}

// ---- the study mode (T, the "Study" button) ---------------------------------------

// Its message (progress saved or not, the stage locked, the score) as a toast.
static void study_after(App *a)
{
    bool error = false;
    const char *m = study_ui_take_message(a->study, &error);
    if (!m) return;
    toast(a, "app.edited", m);
    if (error) a->toast_left = ERROR_TOAST_SECONDS;
}

static void toggle_study(App *a)
{
    if (a->study->st.on) {
        study_ui_end(a->study, a->session, a->pb.stage);
        toast(a, "study.off", NULL);
        study_after(a);
        return;
    }
    if (a->pres) { // the presenter window previews the next stage: it would give answers away
        toast(a, "study.not_with_presenter", NULL);
        return;
    }
    // the lab steps aside: its switches, selection and Δ view
    a->lab.menu.open = false;
    a->lab.delta = false;
    lab_deselect(&a->lab);
    a->pb.playing = false;
    playback_goto(&a->pb, study_ui_begin(a->study, a->session, a->v.lang, a->pb.stage), false);
    study_after(a);
}

// While studying, the lab's keys only say how to edit.
static bool lab_key_while_studying(const SDL_KeyboardEvent *k)
{
    SDL_Keycode sym = k->keysym.sym;
    bool ctrl = (k->keysym.mod & KMOD_CTRL) != 0;
    return sym == SDLK_w || sym == SDLK_d || sym == SDLK_RETURN || sym == SDLK_KP_ENTER ||
           (ctrl && (sym == SDLK_z || sym == SDLK_y || sym == SDLK_r || sym == SDLK_s));
}

// ---- presenter mode (presenter.c): F5, ".", the second window ------------------

// F5 (and --presenter): the presenter window opens (if it is not open), the lesson
// starts over from its first stage, settled, and the elapsed timer from 0.
static void present_from_start(App *a)
{
    if (a->study->st.on) {
        toast(a, "study.not_with_presenter", NULL);
        return;
    }
    if (!a->pres) {
        int w, h;
        SDL_GetWindowSize(a->win, &w, &h);
        char err[MSG_MAX];
        a->pres = presenter_create(a->win, a->opt->font_path, a->v.lang, w, h, err, sizeof err);
        if (!a->pres) {
            cli_error(stderr, "attnviz: %s", err);
            toast(a, "app.presenter_failed", err);
            a->toast_left = ERROR_TOAST_SECONDS;
            return;
        }
        SDL_RaiseWindow(a->win);
    }
    playback_goto(&a->pb, 0, false);
    a->black = false;
    presenter_restart_clock(a->pres);
}

// The presenter tools into the overlays: the point is the pointer on the audience
// window, else on the presenter window's small frame.
static void present_tools(App *a)
{
    float px = -1.0f, py = -1.0f;
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    if (a->mouse_in && w > 0 && h > 0) px = (float)a->ov.mouse_x / (float)w, py = (float)a->ov.mouse_y / (float)h;
    else if (!presenter_point(a->pres, &px, &py)) px = py = -1.0f;
    int ps, pp, pr, pc;
    if (presenter_take_pin(a->pres, &ps, &pp, &pr, &pc) && ps == a->v.stage) // clicked on its small frame
        tools_toggle_cell(&a->tools, ps, pp, pr, pc);
    tools_overlays(&a->tools, &a->ov, px, py);
    float scrub; // dragged in the presenter window (shown from the next frame on)
    if (presenter_take_scrub(a->pres, &scrub)) playback_scrub(&a->pb, scrub);
    a->ov.scrub = a->pb.held;
    a->ov.scrub_p = playback_progress(&a->pb);
    a->ov.scrub_frame = playback_frame(&a->pb);
}

static void present_frame(App *a)
{
    if (!a->pres) return;
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    char t[LESSON_MAX_TEXT + 64];
    PresenterFrame f = {lab_trace(&a->lab, a->session), &a->v, &a->ov, w, h, a->black,
                        session_edited(a->session), a->lab.gen,
                        session_title(a->session, a->v.lang, t, sizeof t)};
    presenter_draw(a->pres, &f);
}

// Projector mode: in how many parts stage st is shown at the window's size.
static int stage_parts(App *a, int st)
{
    if (!a->v.projector || st < 0 || st >= a->session->trace.n) return 1;
    View v = a->v;
    v.stage = st, v.anim = 1.0f;
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    return layout_projector_parts(lab_trace(&a->lab, a->session), &v, w, h);
}

// → Space PgDn: the next stage, or in projector mode first the next part of a split stage.
static void step_forward(App *a)
{
    if (a->v.part + 1 < stage_parts(a, a->pb.stage)) {
        a->v.part++;
        return;
    }
    playback_next(&a->pb);
}

// ← PgUp: the previous stage settled (its result, when it is split), or the part before
// of a split stage.
static void step_back(App *a)
{
    if (a->v.part > 0) {
        a->v.part--;
        return;
    }
    if (a->pb.stage > 0) a->part_next = stage_parts(a, a->pb.stage - 1) - 1;
    playback_prev(&a->pb);
}

// M (--projector): projector mode on / off; on, it starts with the high-contrast palette.
static void toggle_projector(App *a)
{
    a->v.projector = !a->v.projector;
    a->v.part = 0;
    if (a->v.projector) a->v.palette = PALETTE_HIGH_CONTRAST;
    toast(a, a->v.projector ? "app.projector_on" : "app.projector_off", NULL);
}

static void on_key(App *a, const SDL_KeyboardEvent *k)
{
    SDL_Keycode sym = k->keysym.sym;
    bool shift = (k->keysym.mod & KMOD_SHIFT) != 0;
    if (shift && !a->ov.help && (sym == SDLK_LEFT || sym == SDLK_RIGHT || sym == SDLK_UP || sym == SDLK_DOWN)) {
        // Shift + arrows pan a zoomed heatmap (the content moves with the arrow)
        pan_by(a, sym == SDLK_LEFT ? 1 : sym == SDLK_RIGHT ? -1 : 0, sym == SDLK_UP ? 1 : sym == SDLK_DOWN ? -1 : 0);
        return;
    }
    bool question = sym == SDLK_QUESTION || (sym == SDLK_SLASH && shift);
    if (a->ov.help) { // any key closes the help
        if (sym != SDLK_LSHIFT && sym != SDLK_RSHIFT) a->ov.help = false;
        return;
    }
    if (a->export_choose && sym != SDLK_LSHIFT && sym != SDLK_RSHIFT) {
        export_choose_key(a, sym);
        return;
    }
    if ((question || sym == SDLK_F1) && !a->lab.typing) {
        a->ov.help = true;
        return;
    }
    if (a->study->st.on) {
        bool used = study_ui_key(a->study, a->session, k, a->pb.stage, &a->v);
        study_after(a);
        if (used) return;
        if (sym == SDLK_t && !(k->keysym.mod & KMOD_CTRL)) {
            toggle_study(a);
            return;
        }
        if (lab_key_while_studying(k)) {
            toast(a, "study.no_edit", NULL);
            return;
        }
    } else {
        if (sym == SDLK_t && !(k->keysym.mod & KMOD_CTRL) && !a->lab.typing) {
            toggle_study(a);
            return;
        }
        lab_begin(a);
        if (lab_key(&a->lab, a->session, current_layout(a), &a->v, k)) {
            lab_after(a);
            return;
        }
    }
    if ((k->keysym.mod & KMOD_CTRL) && (sym == SDLK_LEFT || sym == SDLK_RIGHT)) { // the transition, frame by frame
        playback_step_frame(&a->pb, sym == SDLK_RIGHT ? 1 : -1);
        return;
    }
    switch (sym) {
    case SDLK_ESCAPE:
    case SDLK_q: a->quit = true; break;
    case SDLK_RIGHT:
    case SDLK_SPACE:
    case SDLK_PAGEDOWN: step_forward(a); break;
    case SDLK_LEFT:
    case SDLK_PAGEUP: step_back(a); break;
    case SDLK_m: toggle_projector(a); break;
    case SDLK_HOME: playback_goto(&a->pb, 0, false); break;
    case SDLK_END: playback_goto(&a->pb, a->session->trace.n - 1, false); break;
    case SDLK_p: playback_toggle(&a->pb); break;
    case SDLK_TAB: set_head(a, a->v.head + (shift ? -1 : 1)); break;
    case SDLK_RIGHTBRACKET: set_head(a, a->v.head + 1); break;
    case SDLK_LEFTBRACKET: set_head(a, a->v.head - 1); break;
    case SDLK_b: set_batch(a, a->v.batch + (shift ? -1 : 1)); break;
    case SDLK_PLUS:
    case SDLK_EQUALS:
    case SDLK_KP_PLUS: playback_set_speed(&a->pb, a->pb.speed * 1.5f); break;
    case SDLK_MINUS:
    case SDLK_KP_MINUS: playback_set_speed(&a->pb, a->pb.speed / 1.5f); break;
    case SDLK_v: a->v.show_values = !a->v.show_values; break;
    case SDLK_c:
        a->v.palette = (Palette)((a->v.palette + 1) % PALETTE_COUNT);
        toast(a, "app.palette", i18n_get(a->v.lang, colormap_palette_key(a->v.palette)));
        break;
    case SDLK_g: { // how attention weights are coloured: auto → linear → log
        static const char *const keys[PROB_SCALE_COUNT] = {"app.prob_scale_auto", "app.prob_scale_linear",
                                                          "app.prob_scale_log"};
        a->v.prob_scale = (ProbScale)((a->v.prob_scale + 1) % PROB_SCALE_COUNT);
        toast(a, keys[a->v.prob_scale], "");
        break;
    }
    case SDLK_f: {
        bool fs = (SDL_GetWindowFlags(a->win) & SDL_WINDOW_FULLSCREEN_DESKTOP) != 0;
        SDL_SetWindowFullscreen(a->win, fs ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP);
        break;
    }
    case SDLK_s: save_frame(a); break;
    case SDLK_e: // the formats, then a digit
        if (a->export_job) break;
        if (a->study->st.on) { // every stage's result, answered or not (frames, handout, video)
            toast(a, "study.no_export", NULL);
            break;
        }
        a->export_choose = true;
        toast(a, "app.export_choose", "");
        a->toast_left = EXPORT_TOAST_SECONDS;
        break;
    case SDLK_z: zoom_by(a, shift ? 1.0f / 1.5f : 1.5f); break;
    case SDLK_0:
    case SDLK_KP_0:
        if (!step_digit(a, 0)) view_reset_zoom(&a->v); // 0 alone: the whole heatmap again
        break;
    case SDLK_l:
        if (k->keysym.mod & KMOD_CTRL) a->tools.laser = !a->tools.laser; // the laser dot
        else switch_lang(a);
        break;
    case SDLK_h: a->tools.spotlight = !a->tools.spotlight; break;
    case SDLK_k: playback_hold(&a->pb, !a->pb.held); break; // pause inside the transition / go on
    case SDLK_x: tools_clear(&a->tools); break;
    case SDLK_o: open_picker(a); break;
    case SDLK_F5: present_from_start(a); break;
    case SDLK_PERIOD: // black screen, as in presentation software
        a->black = !a->black;
        if (a->black) toast(a, "app.black", NULL);
        else a->toast_left = 0.0;
        break;
    default:
        if (sym >= SDLK_1 && sym <= SDLK_9) step_digit(a, (int)(sym - SDLK_0));
        break;
    }
}

static void on_click(App *a, int wx, int wy)
{
    int x, y;
    to_output(a, wx, wy, &x, &y);
    const Layout *Lp = current_layout(a);
    int s = layout_hit_step(Lp, x, y), b = layout_hit_batch(Lp, x, y), h = layout_hit_head(Lp, x, y);
    if (s >= 0) goto_step(a, (StepId)s);
    if (b >= 0) set_batch(a, b);
    if (h >= 0) set_head(a, h);
}

static void handle_event(App *a, const SDL_Event *e)
{
    // the presenter window's mouse and window events are its own; its keys are ours
    if (a->pres && presenter_owns_event(a->pres, e)) {
        if (presenter_event(a->pres, e)) presenter_destroy(a->pres), a->pres = NULL;
        return;
    }
    if (e->type == SDL_WINDOWEVENT && e->window.event == SDL_WINDOWEVENT_CLOSE) a->quit = true; // the audience's
    if (lessons_event(a, e)) return;
    switch (e->type) {
    case SDL_QUIT: a->quit = true; break;
    case SDL_KEYDOWN: on_key(a, &e->key); break;
    case SDL_TEXTINPUT: // the characters of a value typed into a cell (any keyboard layout)
        if (a->study->st.on) { // or of an answer
            if (!a->ov.help) study_ui_text(a->study, e->text.text);
            break;
        }
        lab_begin(a);
        if (!a->ov.help && lab_text(&a->lab, a->session, current_layout(a), &a->v, e->text.text)) lab_after(a);
        break;
    case SDL_MOUSEMOTION:
        a->mouse_in = true;
        a->mouse_wx = e->motion.x, a->mouse_wy = e->motion.y;
        if (a->scrub_drag) {
            int x, y;
            to_output(a, e->motion.x, e->motion.y, &x, &y);
            Rect sb, st;
            render_scrub_rect(current_layout(a), &sb, &st);
            playback_scrub(&a->pb, st.w > 0 ? (float)(x - st.x) / (float)st.w : 0.0f);
        } else if (a->tools.drag >= 0) { // a pinned tooltip's box follows the pointer
            int x, y, w, h;
            to_output(a, e->motion.x, e->motion.y, &x, &y);
            SDL_GetRendererOutputSize(a->r, &w, &h);
            tools_drag(&a->tools, x, y, w, h);
        } else if (a->lab.press) { // a press on a value: dragging scrubs it
            int x, y;
            to_output(a, e->motion.x, e->motion.y, &x, &y);
            lab_begin(a);
            lab_drag(&a->lab, a->session, y, (SDL_GetModState() & KMOD_SHIFT) != 0, a->v.lang);
            lab_after(a);
        } else if (a->dragging) { // drag: the zoomed heatmaps follow the mouse
            int x, y;
            to_output(a, e->motion.x, e->motion.y, &x, &y);
            const Layout *Lp = current_layout(a);
            layout_pan(&a->v, Lp, x - a->drag_x, y - a->drag_y);
            a->drag_x = x, a->drag_y = y;
        }
        break;
    case SDL_MOUSEBUTTONDOWN:
        if (a->ov.help) {
            a->ov.help = false;
        } else if (e->button.button == SDL_BUTTON_LEFT) {
            int x, y;
            to_output(a, e->button.x, e->button.y, &x, &y);
            const Layout *Lp = current_layout(a);
            Rect sb, st, lb, stb;
            render_scrub_rect(Lp, &sb, &st);
            if (a->pb.held && rect_contains(sb, x, y)) { // the scrub bar: the knob follows the pointer
                a->scrub_drag = true;
                playback_scrub(&a->pb, st.w > 0 ? (float)(x - st.x) / (float)st.w : 0.0f);
                break;
            }
            // a pinned tooltip's box is dragged; Ctrl+click pins any cell (editable ones too)
            if (tools_press_box(&a->tools, a->v.stage, x, y)) break;
            if ((SDL_GetModState() & KMOD_CTRL) && tools_toggle_pin(&a->tools, Lp, a->v.stage, x, y)) break;
            bool used = false;
            if (study_button_rect(Lp, &stb) && rect_contains(stb, x, y)) {
                toggle_study(a);
                used = true;
            } else if (a->study->st.on) { // a key column answers "which key"; the lab waits
                used = study_ui_press(a->study, Lp, x, y);
                if (!used && lab_button_rect(Lp, &lb) && rect_contains(lb, x, y)) {
                    toast(a, "study.no_edit", NULL);
                    used = true;
                }
            } else {
                lab_begin(a);
                used = lab_press(&a->lab, a->session, Lp, &a->v, x, y, (SDL_GetModState() & KMOD_SHIFT) != 0);
                lab_after(a); // Lp may be stale now: nothing below uses it after an edit
            }
            if (used) {
            } else if (a->v.zoom > 1.0f && layout_hit_panel(current_layout(a), x, y) >= 0) {
                a->dragging = true;
                a->drag_x = x, a->drag_y = y;
            } else if (!tools_toggle_pin(&a->tools, current_layout(a), a->v.stage, x, y)) { // a cell the lab
                on_click(a, e->button.x, e->button.y);                                     // does not edit: pinned
            }
        }
        break;
    case SDL_MOUSEBUTTONUP:
        if (e->button.button == SDL_BUTTON_LEFT) a->dragging = false, lab_release(&a->lab), tools_release(&a->tools),
            a->scrub_drag = false;
        break;
    case SDL_MOUSEWHEEL: {
        if (a->ov.help) break;
        int dy = e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? -e->wheel.y : e->wheel.y;
        if (dy != 0) zoom_by(a, powf(1.25f, (float)dy));
        break;
    }
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_LEAVE) a->mouse_in = false;
        // a new size: the textures of the old one leave the caches as they are replaced;
        // give their pages back rather than keeping the largest size's footprint
        if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED) a->trim_pending = true;
        break;
    default: break;
    }
}

static bool open_window(App *a)
{
    const AppOptions *o = a->opt;
    char title[600];
    const char *args[] = {lesson_title(&a->session->lesson, (Lang)o->lang)};
    i18n_fmt(title, sizeof title, (Lang)o->lang, "app.title", 1, args);
    Uint32 flags = SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI |
                   (o->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
    // The window uses the same software renderer as the PNG export unless
    // SDL_RENDER_DRIVER says otherwise: identical pixels, a frame in under 1 ms at
    // 1280×720, and no GL start-up (measured: first frame 45 ms and 18 MiB vs
    // 95 ms and 112 MiB with Mesa's GL under X; see README "Speed").
    const char *driver = SDL_GetHint(SDL_HINT_RENDER_DRIVER);
    if (!driver || !*driver) {
        SDL_SetHint(SDL_HINT_RENDER_DRIVER, "software");
        SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0");
    }
    a->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, o->width, o->height, flags);
    if (!a->win) return false;
    SDL_SetWindowMinimumSize(a->win, 480, 320);
    a->r = SDL_CreateRenderer(a->win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!a->r) a->r = SDL_CreateRenderer(a->win, -1, SDL_RENDERER_SOFTWARE);
    return a->r != NULL;
}

int app_run(const AppOptions *opt)
{
    // Initialization
    App *a = SDL_calloc(1, sizeof *a);
    if (!a) {
        fprintf(stderr, "attnviz: out of memory\n");
        return 1;
    }
    a->opt = opt;
    int rc = 1;
    char assets[1100], err[MSG_MAX], msg[LESSON_ERR_MAX + 200];
    bool sdl_up = false;
    if (!assets_find(assets, sizeof assets, err, sizeof err) || !i18n_load(assets, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        goto done;
    }
    a->session = session_open(opt->lesson_path, opt->edits, msg, sizeof msg);
    if (!a->session) {
        cli_error(stderr, "%s", msg);
        goto done;
    }
    if (a->session->trace.n == 0) {
        fprintf(stderr, "%s: the lesson has no stages\n", opt->lesson_path);
        goto done;
    }
    a->fonts = fonts_create(opt->font_path, (Lang)opt->lang, err, sizeof err);
    if (!a->fonts) {
        fprintf(stderr, "%s\n", err);
        goto done;
    }
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, "attnviz: cannot open a window: %s\n", SDL_GetError());
        goto done;
    }
    sdl_up = true;
    if (!open_window(a)) {
        fprintf(stderr, "attnviz: cannot open a window: %s\n", SDL_GetError());
        goto done;
    }
    a->heatmaps = heatmap_cache_create();
    if (!a->heatmaps) {
        fprintf(stderr, "attnviz: out of memory\n");
        goto done;
    }
    playback_init(&a->pb, a->session->trace.n);
    // zh without a Chinese font: English, with a warning on stderr and in the window
    Lang lang = fonts_usable_lang(a->fonts, (Lang)opt->lang, stderr);
    view_init(&a->v, &a->session->lesson, lang);
    a->title_edited = session_edited(a->session);
    a->measure = (TextMeasure){text_measure, a->fonts};
    a->v.measure = &a->measure;
    set_window_title(a);
    if (lang != (Lang)opt->lang) {
        toast(a, "app.no_cjk_font", NULL);
        a->toast_left = ERROR_TOAST_SECONDS;
    }
    snprintf(a->lessons_dir, sizeof a->lessons_dir, "%s/../lessons", assets);
    picker_init(&a->picker);
    lab_init(&a->lab);
    tools_init(&a->tools);
    a->lab.before_edit = lab_before_edit, a->lab.ctx = a;
    a->study = study_ui_create();
    if (!a->study) {
        fprintf(stderr, "attnviz: out of memory\n");
        goto done;
    }
    if (opt->study) toggle_study(a);
    if (opt->presenter) present_from_start(a);
    if (opt->projector) toggle_projector(a), a->toast_left = 0.0;

    Uint64 freq = SDL_GetPerformanceFrequency(), last = SDL_GetPerformanceCounter();
    bool software = false;
    SDL_RendererInfo info;
    if (SDL_GetRendererInfo(a->r, &info) == 0) software = (info.flags & SDL_RENDERER_SOFTWARE) != 0;
    // Benchmark hook (make bench): quit right after the first frame is shown.
    const char *bench_first = getenv("ATTNVIZ_QUIT_AFTER_FIRST_FRAME");
    bool quit_after_first = bench_first && *bench_first && strcmp(bench_first, "0") != 0;
    long frames_drawn = 0;
    const char *clock = getenv("ATTNVIZ_TEST_CLOCK"), *state = getenv("ATTNVIZ_TEST_STATE");
    a->fake_ms_per_frame = app_test_hook ? app_test_hook->ms_per_frame : clock && *clock ? atof(clock) : 0.0;
    long events = 0, keyups = 0;
    while (!a->quit) {
        // Update (the first frame is drawn without waiting for an event)
        SDL_Event e;
        bool busy = frames_drawn == 0 || (playback_animating(&a->pb) && !a->pb.held) || a->pb.playing ||
                    a->toast_left > 0.0 || a->export_job || a->lab.animating;
        if (!busy && !app_test_hook && SDL_WaitEventTimeout(&e, 250))
            handle_event(a, &e), events++, keyups += e.type == SDL_KEYUP;
        while (SDL_PollEvent(&e)) handle_event(a, &e), events++, keyups += e.type == SDL_KEYUP;
        Uint64 now = SDL_GetPerformanceCounter();
        double dt = a->fake_ms_per_frame > 0.0 ? a->fake_ms_per_frame / 1000.0 : (double)(now - last) / (double)freq;
        last = now;
        a->fake_ms += a->fake_ms_per_frame;
        playback_update(&a->pb, dt);
        lab_update(&a->lab, a->session, dt);
        { // the study mode: no stage past an unanswered question; a hidden result waits
            bool hold;
            int allowed = study_ui_frame(a->study, a->session, a->pb.stage, &a->v, &hold);
            if (allowed != a->pb.stage) playback_goto(&a->pb, allowed, false);
            if (hold) a->pb.t = 0.0;
            study_after(a);
        }
        if (a->toast_left > 0.0) a->toast_left -= dt;
        if (a->v.stage != a->pb.stage) { // a new stage starts with the whole tensor
            view_reset_zoom(&a->v);
            a->v.part = a->part_next; // (projector mode: its operands, or after ← its result)
            a->part_next = 0;
            a->dragging = false;
            lab_deselect(&a->lab);
        }
        a->v.stage = a->pb.stage;
        snprintf(a->stage_name, sizeof a->stage_name, "%s", a->session->trace.stages[a->pb.stage].name);
        a->v.anim = playback_progress(&a->pb);
        a->v.playing = a->pb.playing;
        a->v.speed = a->pb.speed;
        lab_view(&a->lab, a->session, &a->v);
        a->ov.toast = a->toast_left > 0.0 ? a->toast : NULL;
        a->ov.toast_alpha = (float)(a->toast_left > 0.5 ? 1.0 : a->toast_left / 0.5);
        a->ov.hover = a->mouse_in && !a->picker.open;
        a->ov.picker = &a->picker;
        a->ov.study = &a->study->st;
        to_output(a, a->mouse_wx, a->mouse_wy, &a->ov.mouse_x, &a->ov.mouse_y);
        export_update(a, 0.012); // export frames first: the window's frame overwrites them
        a->ov.export_total = a->export_job ? export_job_total(a->export_job) : 0;
        a->ov.export_done = a->export_job ? export_job_written(a->export_job) : 0;
        // Draw: the frame's Layout is the one events are hit-tested with
        Canvas c = {a->r, a->fonts, a->heatmaps, NULL};
        const Layout *Lp = current_layout(a);
        lab_overlays(&a->lab, a->session, Lp, &a->v, &a->ov);
        a->ov.hover = a->ov.hover && !a->lab.menu.open && !a->lab.scrubbing && a->tools.drag < 0;
        present_tools(a);
        if (a->black) paint_clear(&c, (Rgb){0, 0, 0});
        else render_frame_laid_out(&c, Lp, lab_trace(&a->lab, a->session), &a->v, &a->ov);
        SDL_RenderPresent(a->r);
        present_frame(a);
        if (++frames_drawn == 1 && quit_after_first) a->quit = true;
        if (app_test_hook || (state && *state)) {
            busy = (playback_animating(&a->pb) && !a->pb.held) || a->pb.playing || a->toast_left > 0.0 ||
                   a->export_job || a->lab.animating;
            AppTestFrame f = {a->r, frames_drawn, busy, a->stage_name};
            if (app_test_hook) app_test_hook->frame(app_test_hook->ctx, &f);
            FILE *sf = state && *state ? fopen(state, "w") : NULL; // the Xvfb tests poll it
            if (sf) fprintf(sf, "%ld %ld %d %s %ld\n", frames_drawn, events, busy, a->stage_name, keyups), fclose(sf);
        }
        if (a->trim_pending) {
#ifdef __GLIBC__
            malloc_trim(0);
#endif
            a->trim_pending = false;
        }
        if (software && !a->quit && a->fake_ms_per_frame <= 0.0) SDL_Delay(10);
    }
    rc = 0;
done:
    // De-initialization
    if (a->export_job) export_complete(a);
    if (a->study) study_ui_end(a->study, a->session, a->pb.stage); // the answers are kept
    presenter_destroy(a->pres);
    heatmap_cache_flush(a->heatmaps);
    if (a->fonts) fonts_flush(a->fonts);
    if (a->r) SDL_DestroyRenderer(a->r);
    if (a->win) SDL_DestroyWindow(a->win);
    fonts_destroy(a->fonts);
    if (sdl_up) SDL_Quit();
    lab_free(&a->lab);
    session_destroy(a->session);
    picker_free(&a->picker);
    study_ui_destroy(a->study);
    heatmap_cache_destroy(a->heatmaps);
    i18n_free();
    SDL_free(a);
    return rc;
}
