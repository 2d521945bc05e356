// web_main.c — the browser build's entry point (emscripten; only in `make web`).
//
// The page (web.js) turns the URL into a command line (?lesson=causal-decoder&
// stage=attn&lang=zh → --stage attn --lang zh /attnviz/lessons/causal-decoder.json),
// checked by the desktop's args.c, then the desktop's window runs one frame per
// browser callback: emscripten_set_main_loop calls app_frame, which never waits
// (AppOptions.browser) and draws nothing when nothing changed, so an idle page
// costs nothing. Everything else is the desktop app: the same core, view, drawing
// and window code. What the browser does differently is here and in web.js:
//
//   files the user asked for (S, Ctrl+S, E)  app_on_saved → a download (web.js)
//   the Chinese font                          fetched the first time Chinese is shown
//   the shipped lessons but the default       fetched when opened (the picker, a link)
//   the canvas size                           the page's size × devicePixelRatio
//   numbers for tests and tools               window.attnviz.{state,frame,dump,describe}()
//   assistive technology                      the layer beside the canvas (attnviz_a11y), the
//                                             keys only while the canvas has the focus, the
//                                             page's buttons as keys (attnviz_key), reduced motion
//
// Study progress and saved lessons are files in the user's data folder, which the
// page keeps in IndexedDB (IDBFS, synced after each write).
#include <emscripten.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_train.h"
#include "args.h"
#include "assets.h"
#include "cli.h"
#include "compare.h"
#include "compare_text.h"
#include "describe.h"
#include "describe_a11y.h"
#include "i18n.h"
#include "json_out.h"
#include "labmenu.h"
#include "picker.h"
#include "layout.h"
#include "session.h"
#include "study.h"
#include "train.h"
#include "url_args.h"
#include "view.h"
#include "video.h"
#include "viewkind.h"
#include "web.h"

static Args args;
static App *app;
static UrlArgs url; // the page's address, read by attnviz_url
static char default_lesson[1200];
// how long each drawn frame took (app_frame: events, update, draw), for make bench-web
#define FRAME_TIMES 2048
static float frame_ms[FRAME_TIMES];
static int n_frame_ms;

// Text the caller frees (free), written by fn to a memory stream; NULL without memory.
static char *to_string(void (*fn)(FILE *f))
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return NULL;
    fn(f);
    fclose(f);
    return buf;
}

// The address that opens the window where it is: the lesson (a shipped one by its
// name, the address's own lesson= file), stage, slice, language, study, projector. A
// lesson no address opens (a dropped file, one saved with Ctrl+S): the address as
// given, in the window's language.
static void write_here(char *out, size_t n)
{
    UrlArgs u = url;
    const AppStatus st = app_status(app);
    char real[PATH_MAX]; // (the default lesson is /attnviz/assets/../lessons/…)
    const char *path = realpath(st.session->path, real) ? real : st.session->path, *dir = "/attnviz/lessons/";
    size_t len = strlen(path), d = strlen(dir);
    bool here = strncmp(path, "/url/", 5) == 0; // (the address's lesson= file)
    if (strncmp(path, dir, d) == 0 && len > d + 5 && len - d - 5 < sizeof u.lesson &&
        strcmp(path + len - 5, ".json") == 0) { // a shipped lesson, maybe from the picker
        snprintf(u.lesson, sizeof u.lesson, "%.*s", (int)(len - d - 5), path + d);
        u.shipped = here = url_args_shipped_name(u.lesson);
    }
    if (!here) u = url;
    else {
        snprintf(u.stage, sizeof u.stage, "%s", st.session->trace.stages[st.stage].name);
        snprintf(u.batch, sizeof u.batch, "%d", st.view->batch);
        snprintf(u.head, sizeof u.head, "%d", st.view->head);
        u.has_stage = u.has_batch = u.has_head = true;
    }
    memcpy(u.lang, st.view->lang == LANG_ZH ? "zh" : "en", 3);
    u.study = st.study->on;
    u.projector = st.view->projector;
    url_args_query(&u, out, n);
}

// One browser frame. Nothing in the page ends the session (no key quits: the tab is
// closed instead); should the window end, the page says so and offers to start
// again where it was, never a blank canvas.
static void frame(void)
{
    if (!app) return;
    long drawn = app_frames_drawn(app);
    double t0 = emscripten_get_now();
    bool going = app_frame(app);
    if (going && app_frames_drawn(app) > drawn) {
        if (n_frame_ms < FRAME_TIMES) frame_ms[n_frame_ms++] = (float)(emscripten_get_now() - t0);
        EM_ASM({ attnvizPage.drawn(); }); // (the accessible layer follows the frame)
    }
    if (going) return;
    static char here[URL_ARGS_QUERY_MAX + 64];
    write_here(here, sizeof here);
    app_destroy(app);
    app = NULL;
    emscripten_cancel_main_loop();
    EM_ASM({ attnvizPage.closed(UTF8ToString($0)); }, here);
}

static void saved(const char *path)
{
    EM_ASM({ attnvizPage.saved(UTF8ToString($0)); }, path);
}

static bool fetch_font(void)
{
    return EM_ASM_INT({ return attnvizPage.fetchFont(); }) != 0;
}

// A shipped lesson not in the page's files (only the default is in attnviz.data): web.js
// fetches it (lessons/NAME.json, issue 39) and opens it when it arrives; false: not a lesson
// the page fetches (the usual "cannot open" error follows)
static bool fetch_lesson(const char *path)
{
    return EM_ASM_INT({ return attnvizPage.fetchLesson(UTF8ToString($0)); }, path) != 0;
}

// F5: the presenter as a second browser window (web_present.js); false when the browser
// did not open it (pop-ups blocked)
static bool open_presenter(void)
{
    return EM_ASM_INT({ return window.attnvizPresent ? attnvizPresent.open() : 0; }) != 0;
}

App *web_app(void) { return app; }

int main(int argc, char **argv)
{
    int code = args_parse(&args, argc, argv, stderr);
    if (code == 0 && args.cmd != CMD_WINDOW) {
        fprintf(stderr, "attnviz: the page opens the window; --dump and the other commands are the desktop's\n");
        code = 2;
    }
    if (code != 0) {
        EM_ASM({ attnvizPage.failed(); });
        return code;
    }
    args.opt.browser = true;
    if (!args.opt.lesson_path) {
        if (!assets_default_lesson(default_lesson, sizeof default_lesson)) {
            fprintf(stderr, "%s\n", default_lesson);
            EM_ASM({ attnvizPage.failed(); });
            return 1;
        }
        args.opt.lesson_path = default_lesson;
    }
    // the help's E row and E's menu: what the page makes (no handout; MP4 only with an H.264 encoder)
    const bool mp4 = video_available(VIDEO_MP4);
    i18n_alias("keys.export", mp4 ? "keys.export_web" : "keys.export_web_no_mp4");
    if (!mp4) i18n_alias("app.export_choose_web", "app.export_choose_web_no_mp4");
    app_on_saved = saved;
    app_fetch_font = fetch_font;
    app_fetch_lesson = fetch_lesson;
    app_open_presenter = open_presenter;
    // keys go to the window only while the canvas has the focus: the page's links,
    // buttons and tables get theirs (Tab, arrows) as on any page
    SDL_SetHint(SDL_HINT_EMSCRIPTEN_KEYBOARD_ELEMENT, "#canvas");
    app = app_create(&args.opt);
    if (!app) {
        EM_ASM({ attnvizPage.failed(); });
        return 1;
    }
    emscripten_set_main_loop(frame, 0, 0); // (returns: the browser calls frame())
    return 0;
}

// ---- called by web.js -------------------------------------------------------------

static const char *url_query, *url_nav;
static void write_url(FILE *f)
{
    char err[256];
    bool ok = url_args_parse(&url, url_query, url_nav, err, sizeof err);
    fputs("{\"args\": [", f);
    for (int i = 0; ok && i < url.argc; i++) {
        if (i) fputs(", ", f);
        json_write_string(f, url.argv[i]);
    }
    fputs("], \"lesson\": ", f);
    json_write_string(f, url.lesson);
    fprintf(f, ", \"fetch\": %s, \"lang\": \"%s\", \"error\": ", ok && url.lesson[0] && !url.shipped ? "true" : "false",
            ok ? url.lang : "en");
    if (ok) fputs("null", f);
    else json_write_string(f, err);
    fputs("}", f);
}
// The page's address as the command line (url_args.h): JSON {args, lesson, fetch (lesson=
// is a file on the site to fetch first), lang, error (null, or why the address is refused)}.
EMSCRIPTEN_KEEPALIVE char *attnviz_url(const char *query, const char *nav_lang)
{
    url_query = query, url_nav = nav_lang;
    return to_string(write_url);
}

// The address's query that opens the window where it is now (the page keeps it in the
// address bar: a reload comes back here); NULL before the window opens.
EMSCRIPTEN_KEEPALIVE char *attnviz_here(void)
{
    if (!app) return NULL;
    char *out = malloc(URL_ARGS_QUERY_MAX + 64);
    if (out) write_here(out, URL_ARGS_QUERY_MAX + 64);
    return out;
}

// A file for the window as if dropped on it, opened now: a lesson opens (1), or its
// one-line error shows and the lesson on screen stays (0).
EMSCRIPTEN_KEEPALIVE int attnviz_open(const char *path)
{
    if (!app || !path) return 0;
    return app_open(app, path) ? 1 : 0;
}

// The canvas's new size in output pixels (its CSS size × devicePixelRatio).
EMSCRIPTEN_KEEPALIVE void attnviz_resize(int w, int h)
{
    if (app && w >= 64 && h >= 64) app_resize(app, w, h);
}

// The Chinese font is in place (fetchFont): load the fonts again and show Chinese.
EMSCRIPTEN_KEEPALIVE void attnviz_font_arrived(void)
{
    if (!app) return;
    if (app_fonts_reload(app) && app_status(app).view->lang != LANG_ZH) app_switch_lang(app);
    SDL_Event e = {.type = SDL_USEREVENT}; // a frame to show it
    SDL_PushEvent(&e);
}

EMSCRIPTEN_KEEPALIVE void attnviz_lesson_failed(const char *path, int status, const char *why)
{
    if (!app || !path) return;
    app_lesson_fetch_failed(app, path, status, why);
    SDL_Event e = {.type = SDL_USEREVENT}; // a frame to show it
    SDL_PushEvent(&e);
}

// The state's learning views: "backward" (Ctrl+B's stages), "train" (R's run: running, step,
// total, the last step's loss, the last checkpoint's held-out loss; null: none), "compare"
// (Ctrl+D's B: spec, stages identical and differing, the summary line; null: off).
static void write_learning(FILE *f, const AppStatus *st)
{
    fprintf(f, ", \"backward\": %s, \"train\": ", st->session->backward ? "true" : "false");
    const TrainRun *r = st->train;
    if (r) {
        fprintf(f, "{\"running\": %s, \"step\": %d, \"total\": %d, \"loss\": ", st->training ? "true" : "false",
                r->step, r->total);
        json_write_float(f, r->step ? r->losses[r->step - 1] : 0.0f);
        fputs(", \"held\": ", f);
        json_write_float(f, r->n_ckpt ? r->ckpt_loss[r->n_ckpt - 1] : 0.0f);
        fputs("}", f);
    } else {
        fputs("null", f);
    }
    fputs(", \"compare\": ", f);
    const Compare *c = st->view->cmp;
    if (st->compare_b && c) {
        static char summary[4096];
        compare_text_summary(c, &st->session->trace, &st->compare_b->trace, st->view->cmp_spec, true, st->view->lang,
                             summary, sizeof summary);
        fputs("{\"spec\": ", f);
        json_write_string(f, st->view->cmp_spec);
        fprintf(f, ", \"identical\": %d, \"differ\": %d, \"summary\": ", c->n_identical, c->n_differ);
        json_write_string(f, summary);
        fputs("}", f);
    } else {
        fputs("null", f);
    }
}

static void write_state(FILE *f)
{
    const AppStatus st = app_status(app);
    const Trace *tr = &st.session->trace;
    const View *v = st.view;
    fputs("{\"lesson\": ", f);
    json_write_string(f, st.session->path);
    fprintf(f, ", \"stage\": \"%s\", \"index\": %d, \"stages\": %d, \"lang\": \"%s\", \"batch\": %d, \"head\": %d, ",
            tr->stages[st.stage].name, st.stage, tr->n, v->lang == LANG_ZH ? "zh" : "en", v->batch, v->head);
    fprintf(f, "\"zoom\": %.4f, \"help\": %s, \"help_export\": ", (double)v->zoom, st.help ? "true" : "false");
    json_write_string(f, i18n_get(v->lang, "keys.export")); // (the help's E row: what E makes here)
    fputs(", ", f);
    fprintf(f, "\"busy\": %s, \"frames\": %ld, \"events\": %ld, \"width\": %d, \"height\": %d, \"edited\": %s, \"toast\": ",
            st.busy ? "true" : "false", st.frames, st.events, st.width, st.height,
            session_edited(st.session) ? "true" : "false");
    json_write_string(f, st.toast ? st.toast : "");
    int p = -1, row = -1, col = -1; // the cell under the mouse (its tooltip shows)
    if (st.hover && layout_hit_cell(st.layout, st.mouse_x, st.mouse_y, &p, &row, &col))
        fprintf(f, ", \"hover\": {\"panel\": %d, \"row\": %d, \"col\": %d}", p, row, col);
    else
        fputs(", \"hover\": null", f);
    // the window's own buttons (Study, What if…, Lessons…), which S and exports leave out
    Rect r[3], u = {0, 0, 0, 0};
    const Layout *Lp = st.layout;
    bool has[3] = {study_button_rect(Lp, &r[0]), lab_button_rect(Lp, &r[1]), picker_button_rect(Lp, &r[2])};
    for (int i = 0; i < 3; i++) {
        if (!has[i]) continue;
        if (u.w == 0) { u = r[i]; continue; }
        int x1 = u.x + u.w > r[i].x + r[i].w ? u.x + u.w : r[i].x + r[i].w;
        int y1 = u.y + u.h > r[i].y + r[i].h ? u.y + u.h : r[i].y + r[i].h;
        u.x = u.x < r[i].x ? u.x : r[i].x, u.y = u.y < r[i].y ? u.y : r[i].y;
        u.w = x1 - u.x, u.h = y1 - u.y;
    }
    fprintf(f, ", \"buttons\": [%d, %d, %d, %d]", u.x, u.y, u.w, u.h);
    // where a finger may tap (the touch tests): the result's cells, the timeline (output pixels)
    const Rect res = Lp->result_panel >= 0 ? Lp->panel[Lp->result_panel] : (Rect){0, 0, 0, 0};
    fprintf(f, ", \"result\": [%d, %d, %d, %d], \"timeline\": [%d, %d, %d, %d]", res.x, res.y, res.w, res.h,
            Lp->timeline.x, Lp->timeline.y, Lp->timeline.w, Lp->timeline.h);
    const Study *sd = st.study;
    int right = 0, answered = 0;
    for (int i = 0; i < sd->n; i++) answered += sd->a[i].answered, right += sd->a[i].right;
    fprintf(f, ", \"study\": {\"on\": %s, \"questions\": %d, \"answered\": %d, \"right\": %d, \"asking\": %s",
            sd->on ? "true" : "false", sd->n, answered, right, sd->on && study_asking(sd) ? "true" : "false");
    if (sd->on && study_asking(sd)) { // (for the page's tests: the question asked and its answer)
        const QuizQuestion *q = &sd->q[sd->focus];
        fputs(", \"question\": ", f);
        json_write_string(f, q->question);
        fprintf(f, ", \"list\": %s, \"answer\": [", q->list ? "true" : "false");
        for (int i = 0; i < q->n_answer; i++) {
            if (i) fputs(", ", f);
            json_write_float(f, q->answer[i]);
        }
        fputs("]", f);
    }
    fputs("}", f);
    write_learning(f, &st);
    web_write_typing(f, &st);
    fputs("}", f);
}

static void write_frame(FILE *f)
{
    const AppStatus st = app_status(app);
    fputc('{', f);
    describe_frame_fields(f, st.shown, st.view, st.width, st.height);
    fputc('}', f);
}

static void write_dump(FILE *f) { cli_dump_session(app_status(app).session, f); }

// window.attnviz.state(): where the window is (stage, language, slice, study, toast).
EMSCRIPTEN_KEEPALIVE char *attnviz_state(void) { return app ? to_string(write_state) : NULL; }
// window.attnviz.frame(): the frame on screen as --describe writes a frame.
EMSCRIPTEN_KEEPALIVE char *attnviz_frame(void) { return app ? to_string(write_frame) : NULL; }
// window.attnviz.dump(): the lesson on screen, edits applied, as --dump writes it.
EMSCRIPTEN_KEEPALIVE char *attnviz_dump(void) { return app ? to_string(write_dump) : NULL; }

static void write_frame_times(FILE *f)
{
    fputc('[', f);
    for (int i = 0; i < n_frame_ms; i++) fprintf(f, i ? ", %.4f" : "%.4f", (double)frame_ms[i]);
    fputc(']', f);
    n_frame_ms = 0;
}
// window.attnviz.frameTimes(): the milliseconds each frame drawn since the last call took.
EMSCRIPTEN_KEEPALIVE char *attnviz_frame_times(void) { return to_string(write_frame_times); }

// The text texture cache's bytes (make bench-web: malloc's bytes beyond it must not grow).
EMSCRIPTEN_KEEPALIVE double attnviz_text_cache_bytes(void) { return app ? (double)app_text_cache_bytes(app) : 0.0; }

static void write_a11y(FILE *f) { describe_a11y_write(app, f); }
// window.attnviz.a11y(): the frame for the accessible layer (describe_a11y.h).
EMSCRIPTEN_KEEPALIVE char *attnviz_a11y(void) { return app ? to_string(write_a11y) : NULL; }

// A key for the window as if typed on the canvas (the layer's buttons): SDL's key name
// ("Right", "R", "]"), mods 1 with Shift held, 2 with Ctrl, 3 both. 0: no such key.
EMSCRIPTEN_KEEPALIVE int attnviz_key(const char *name, int mods)
{
    SDL_Keycode sym = name ? SDL_GetKeyFromName(name) : SDLK_UNKNOWN;
    if (!app || sym == SDLK_UNKNOWN) return 0;
    SDL_Event e = {.type = SDL_KEYDOWN};
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = sym;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(sym);
    e.key.keysym.mod = (Uint16)((mods & 1 ? KMOD_LSHIFT : KMOD_NONE) | (mods & 2 ? KMOD_LCTRL : KMOD_NONE));
    SDL_PushEvent(&e);
    e.type = SDL_KEYUP, e.key.state = SDL_RELEASED;
    SDL_PushEvent(&e);
    return 1;
}

// prefers-reduced-motion: every transition jumps to its end (on 1, off 0).
EMSCRIPTEN_KEEPALIVE void attnviz_reduced_motion(int on)
{
    if (app) app_set_reduced_motion(app, on != 0);
}

static int describe_w, describe_h;
static void write_describe(FILE *f)
{
    const AppStatus st = app_status(app);
    const View *v = st.view;
    // the head on screen, unless the view turns each stage to its narration's (-1), as --head does
    const int head = viewkind_of(v->kind)->narrated_head ? -1 : v->head;
    const SessionEdits ed = {.backward = st.session->backward}; // (Ctrl+B: as --describe --backward)
    describe_run(st.session->path, st.font_path, &ed, v->lang, v->batch, head, -1, describe_w, describe_h, false,
                 (int)v->kind, f, stderr);
    // (describe_run, a command of its own, loads the strings and frees them when done:
    // the window's are loaded again)
    char assets[1100], err[1200];
    if (!assets_find(assets, sizeof assets, err, sizeof err) || !i18n_load(assets, err, sizeof err))
        fprintf(stderr, "%s\n", err);
}
// window.attnviz.describe(w, h): the lesson's file described as `--describe --size WxH` (with
// --backward while the backward view is on).
EMSCRIPTEN_KEEPALIVE char *attnviz_describe(int w, int h)
{
    if (!app) return NULL;
    describe_w = w, describe_h = h;
    return to_string(write_describe);
}

// A pinch on the canvas (web_touch.js): zoom by factor at output pixel (x, y), pan by
// (dx, dy) output pixels; then a frame to show it.
EMSCRIPTEN_KEEPALIVE void attnviz_pinch(int x, int y, float factor, int dx, int dy)
{
    if (!app) return;
    app_pinch(app, x, y, factor, dx, dy);
    SDL_Event e = {.type = SDL_USEREVENT};
    SDL_PushEvent(&e);
}

// web_export.js: the MP4 could not be written after all (the encoder failed as it flushed).
EMSCRIPTEN_KEEPALIVE void attnviz_export_failed(const char *why)
{
    if (!app || !why) return;
    app_export_failed(app, why);
    SDL_Event e = {.type = SDL_USEREVENT}; // a frame to show it
    SDL_PushEvent(&e);
}

// window.attnviz.train(n): R's training for n steps (checkpoints as --train n's), then paused.
EMSCRIPTEN_KEEPALIVE int attnviz_train(int steps)
{
    if (!app || steps < 1 || steps > OPTIM_MAX_TRAIN) return 0;
    return app_train_begin(app, steps) ? 1 : 0;
}

static int compare_data;
static void write_compare(FILE *f)
{
    const AppStatus st = app_status(app);
    cli_compare_write(f, st.session, st.compare_b, st.view->cmp, st.view->cmp_spec, compare_data != 0, st.view->lang);
}
// window.attnviz.compare(data): the compare view on screen (Ctrl+D) as `--compare SPEC --describe`
// (data 1: --dump, with the Δ tensors); NULL when it is off.
EMSCRIPTEN_KEEPALIVE char *attnviz_compare(int data)
{
    if (!app || !app_status(app).compare_b || !app_status(app).view->cmp) return NULL;
    compare_data = data;
    return to_string(write_compare);
}
