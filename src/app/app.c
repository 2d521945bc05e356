// app.c — the interactive window: events in, playback, one render_frame per frame.
//
// Initialization: assets + strings, lesson + trace (computed once), SDL window,
// renderer, fonts. Update: events → UI state (Playback + View). Draw:
// render_frame. De-initialization in reverse order. The parts below it (window.h):
// app_events.c (keys, the mouse), app_lessons.c (the lesson on screen), app_quit.c,
// window.c; the parts with their own state (textbox, app_export, presenter, probe, …).
#include "app_train.h"
#include "app.h"

#include <SDL.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_compare.h"
#include "app_events.h"
#include "app_lessons.h"
#include "assets.h"
#include "cli.h"
#include "i18n.h"
#include "keys.h"
#include "optstep.h"
#include "render.h"
#include "scene.h"
#include "window.h"

// Before the lab changes the lesson: an export in progress borrows its trace, so it
// is finished first (edits during an E export would mix old and new frames).
static void lab_before_edit(void *ctx)
{
    App *a = ctx;
    export_ui_complete(&a->exp, a->v.lang, &a->toast);
}

bool app_fonts_reload(App *a)
{
    char err[MSG_MAX];
    Fonts *f = fonts_create(a->opt->font_path, a->v.lang, err, sizeof err);
    if (!f) {
        fprintf(stderr, "%s\n", err);
        return false;
    }
    fonts_destroy(a->screen.fonts);
    a->screen.fonts = f;
    a->screen.measure = (TextMeasure){text_measure, a->screen.fonts};
    a->v.measure = &a->screen.measure;
    a->layout.valid = false;
    return true;
}

void app_switch_lang(App *a) { app_lessons_switch_lang(a); }

bool app_open(App *a, const char *path) { return app_lessons_open(a, path); }

void app_resize(App *a, int w, int h) { SDL_SetWindowSize(a->screen.win, w, h); }

void app_set_reduced_motion(App *a, bool on) { a->screen.reduced_motion = on; }

void app_export_failed(App *a, const char *why)
{
    fprintf(stderr, "attnviz: export: %s\n", why);
    app_toast(a, "app.export_failed", why);
    a->toast.left = EXPORT_TOAST_SECONDS;
}

void app_lesson_fetch_failed(App *a, const char *path, int status, const char *why)
{
    app_lessons_fetch_failed(a, path, status, why);
}

void app_pinch(App *a, int x, int y, float factor, int dx, int dy)
{
    if (factor > 0.0f && factor != 1.0f) layout_zoom_at(&a->v, app_layout(a), x, y, factor);
    if ((dx != 0 || dy != 0) && a->v.zoom > 1.0f) layout_pan(&a->v, app_layout(a), dx, dy);
}

bool app_busy(const App *a)
{
    return (playback_animating(&a->pb) && !a->pb.held) || a->pb.playing || (a->toast.left > 0.0 && !a->quit.ask) ||
           a->exp.job || a->lab.animating || a->ex.train.running;
}

long app_frames_drawn(const App *a) { return a->probe.frames; }

size_t app_text_cache_bytes(const App *a) { return a->screen.fonts ? text_stats(a->screen.fonts).bytes : 0; }

AppStatus app_status(App *a)
{
    AppStatus s = {a->session, lab_trace(&a->lab, a->session), &a->v, app_layout(a), &a->study->st, a->opt->font_path,
                   a->pb.stage, app_busy(a), a->probe.frames, a->probe.events, 0, 0,
                   a->toast.left > 0.0 ? a->toast.text : NULL, a->pointer.in && a->ov.hover, 0, 0,
                   a->pointer.cell.on, a->pointer.cell.panel, a->pointer.cell.row, a->pointer.cell.col, a->ov.help,
                   NULL, false, a->ex.cmp.b, &a->text, &a->lab};
    const Training *t = &a->ex.train;
    if (t->on && t->session == a->session) s.train = &t->run, s.training = t->running;
    app_output_size(a, &s.width, &s.height);
    app_to_output(a, a->pointer.wx, a->pointer.wy, &s.mouse_x, &s.mouse_y);
    return s;
}

static void present_frame(App *a)
{
    if (!a->present.pres) return;
    int w, h;
    app_output_size(a, &w, &h);
    char t[LESSON_MAX_TEXT + 64];
    PresenterFrame f = {lab_trace(&a->lab, a->session), &a->v, &a->ov, w, h, a->present.black,
                        session_edited(a->session), a->lab.gen,
                        session_title(a->session, a->v.lang, t, sizeof t)};
    presenter_draw(a->present.pres, &f);
}


static bool open_window(App *a)
{
    const AppOptions *o = a->opt;
    char title[600];
    const char *args[] = {lesson_title(&a->session->lesson, (Lang)o->lang)};
    i18n_fmt(title, sizeof title, (Lang)o->lang, "app.title", 1, args);
    Uint32 flags = SDL_WINDOW_RESIZABLE | (o->browser ? 0 : SDL_WINDOW_ALLOW_HIGHDPI) |
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
    a->screen.win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, o->width, o->height, flags);
    if (!a->screen.win) return false;
    SDL_SetWindowMinimumSize(a->screen.win, 480, 320);
    a->screen.r = SDL_CreateRenderer(a->screen.win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!a->screen.r) a->screen.r = SDL_CreateRenderer(a->screen.win, -1, SDL_RENDERER_SOFTWARE);
    return a->screen.r != NULL;
}

// De-initialization, in the reverse order (a half-open App too).
void app_destroy(App *a)
{
    if (a->exp.job) export_ui_complete(&a->exp, a->v.lang, &a->toast);
    if (a->study) study_ui_end(a->study, a->session, a->pb.stage); // the answers are kept
    presenting_close(&a->present);
    heatmap_cache_flush(a->screen.heatmaps);
    if (a->screen.fonts) fonts_flush(a->screen.fonts);
    if (a->screen.r) SDL_DestroyRenderer(a->screen.r);
    if (a->screen.win) SDL_DestroyWindow(a->screen.win);
    fonts_destroy(a->screen.fonts);
    if (a->loop.sdl_up) SDL_Quit();
    app_compare_off(a);
    lab_free(&a->lab);
    if (a->ex.train.on) train_free(&a->ex.train.run), train_shown_free(&a->ex.train.step); // (quitting asked to save them)
    session_destroy(a->lessons.ckpt_before);
    session_destroy(a->session);
    picker_free(&a->lessons.picker);
    picker_free(&a->ex.cmp.menu);
    study_ui_destroy(a->study);
    heatmap_cache_destroy(a->screen.heatmaps);
    draw_list_free(&a->screen.draw);
    probe_close(&a->probe);
    i18n_free();
    SDL_free(a);
}

// --stage, --batch, --head (a link to a frame, in the browser): where the window opens.
static bool open_at(App *a, const AppOptions *opt)
{
    const Trace *tr = &a->session->trace;
    if (opt->batch < 0 || opt->batch >= tr->batch || opt->head < 0 || opt->head >= (tr->n_heads > 0 ? tr->n_heads : 1)) {
        cli_error(stderr, "attnviz: --batch/--head: %s has batches 0..%d and heads 0..%d", opt->lesson_path,
                  tr->batch - 1, tr->n_heads - 1);
        return false;
    }
    a->v.batch = opt->batch, a->v.head = opt->head;
    if (!opt->stage) return true;
    int s = trace_find(tr, opt->stage);
    if (s < 0) {
        cli_error(stderr, "attnviz: --stage: %s has no stage \"%s\" (its first is \"%s\")", opt->lesson_path,
                  opt->stage, tr->stages[0].name);
        return false;
    }
    playback_goto(&a->pb, s, false);
    View nv = a->v; // (a->v.stage follows pb.stage in the first frame, keeping this head)
    nv.stage = s;
    a->v.head = scene_stage_head(tr, &nv, opt->head_set ? opt->head : -1);
    a->v.stage = s;
    return true;
}

// Initialization: assets and strings, the key table, the lesson and its trace, fonts,
// SDL, the window and its renderer, the view, the modes asked for on the command
// line. NULL (the reason on stderr) when the window cannot be opened.
App *app_create(const AppOptions *opt)
{
    App *a = SDL_calloc(1, sizeof *a);
    if (!a) {
        fprintf(stderr, "attnviz: out of memory\n");
        return NULL;
    }
    a->opt = opt;
    a->probe.state_fd = -1; // (probe_init below)
    // Initialization
    char assets[1100], err[MSG_MAX], msg[LESSON_ERR_MAX + 200];
    if (!assets_find(assets, sizeof assets, err, sizeof err) || !i18n_load(assets, err, sizeof err) ||
        !keys_init(err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        goto fail;
    }
    a->session = session_open(opt->lesson_path, opt->edits, msg, sizeof msg);
    if (!a->session) {
        cli_error(stderr, "%s", msg);
        goto fail;
    }
    if (a->session->trace.n == 0) {
        fprintf(stderr, "%s: the lesson has no stages\n", opt->lesson_path);
        goto fail;
    }
    a->screen.fonts = fonts_create(opt->font_path, (Lang)opt->lang, err, sizeof err);
    if (!a->screen.fonts) {
        fprintf(stderr, "%s\n", err);
        goto fail;
    }
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, "attnviz: cannot open a window: %s\n", SDL_GetError());
        goto fail;
    }
    a->loop.sdl_up = true;
    if (!open_window(a)) {
        fprintf(stderr, "attnviz: cannot open a window: %s\n", SDL_GetError());
        goto fail;
    }
    a->screen.heatmaps = heatmap_cache_create();
    if (!a->screen.heatmaps) {
        fprintf(stderr, "attnviz: out of memory\n");
        goto fail;
    }
    playback_init(&a->pb, a->session->trace.n);
    // zh without a Chinese font: English, with a warning on stderr and in the window
    Lang lang = fonts_usable_lang(a->screen.fonts, (Lang)opt->lang, stderr);
    view_init(&a->v, &a->session->lesson, lang);
    if (!open_at(a, opt)) goto fail;
    a->seen.title_edited = session_edited(a->session);
    a->seen.session = a->session, a->seen.version = a->session->version;
    a->quit.saved_session = a->session, a->quit.saved_version = a->session->version; // (--set: the edits asked for)
    a->screen.measure = (TextMeasure){text_measure, a->screen.fonts};
    a->v.measure = &a->screen.measure;
    app_lessons_set_title(a);
    if (lang != (Lang)opt->lang) {
        app_toast(a, "app.no_cjk_font", NULL);
        a->toast.left = ERROR_TOAST_SECONDS;
    }
    snprintf(a->lessons.dir, sizeof a->lessons.dir, "%s/../lessons", assets);
    picker_init(&a->lessons.picker);
    picker_init(&a->ex.cmp.menu);
    lab_init(&a->lab);
    presenting_init(&a->present);
    a->lab.before_edit = lab_before_edit, a->lab.ctx = a;
    a->study = study_ui_create();
    if (!a->study) {
        fprintf(stderr, "attnviz: out of memory\n");
        goto fail;
    }
    if (opt->study) app_toggle_study(a);
    if (opt->presenter) app_present_from_start(a);
    if (opt->projector) app_toggle_projector(a), a->toast.left = 0.0;
    a->v.kind = (ViewKind)opt->view;

    a->loop.freq = SDL_GetPerformanceFrequency(), a->loop.last = SDL_GetPerformanceCounter();
    SDL_RendererInfo info;
    if (SDL_GetRendererInfo(a->screen.r, &info) == 0) a->loop.software = (info.flags & SDL_RENDERER_SOFTWARE) != 0;
    probe_init(&a->probe); // the tests' clock and state file, make bench's first frame
    a->loop.no_wait = opt->browser;
    return a;
fail:
    app_destroy(a);
    return NULL;
}

// One frame: the events that came, the clocks, the modes' updates, the frame drawn
// and shown. The desktop loop calls it until it returns false (quit); a browser's
// main loop calls it once a frame (with no_wait set: it never blocks).
bool app_frame(App *a)
{
    // Update (the first frame is drawn without waiting for an event)
    SDL_Event e;
    bool busy = a->probe.frames == 0 || app_busy(a);
    if (!busy && !probe_in_process(&a->probe) && !a->loop.no_wait && SDL_WaitEventTimeout(&e, 250))
        app_handle_event(a, &e), probe_event(&a->probe, &e);
    long events_before = a->probe.events;
    while (SDL_PollEvent(&e)) app_handle_event(a, &e), probe_event(&a->probe, &e);
    a->text.skip = false; // (the I that opened the text box came with this frame's events)
    // the browser calls every frame: one with no event, nothing moving and nothing
    // changed is not drawn (the page idles; the desktop loop waited above instead)
    if (a->loop.no_wait && !busy && a->probe.events == events_before && !a->quit.quit && a->seen.version == a->session->version &&
        a->seen.session == a->session && !a->exp.choose) {
        a->loop.last = SDL_GetPerformanceCounter();
        return true;
    }
    app_train_frame(a); // (R: a slice of training steps; the trace follows)
    app_watch_session(a);
    Uint64 now = SDL_GetPerformanceCounter();
    double dt = probe_frame_dt(&a->probe, (double)(now - a->loop.last) / (double)a->loop.freq);
    a->loop.last = now;
    playback_update(&a->pb, dt);
    if (a->screen.reduced_motion) playback_skip_motion(&a->pb);
    lab_update(&a->lab, a->session, playback_edit_progress(&a->pb));
    { // the study mode: no stage past an unanswered question; a hidden result waits
        bool hold;
        int allowed = study_ui_frame(a->study, a->session, a->pb.stage, &a->v, &hold);
        if (allowed != a->pb.stage) playback_goto(&a->pb, allowed, false);
        if (hold) a->pb.t = 0.0;
        app_study_after(a);
    }
    if (a->toast.left > 0.0 && !a->quit.ask) a->toast.left -= dt; // (the question stays until answered)
    if (a->v.stage != a->pb.stage) { // a new stage starts with the whole tensor
        view_reset_zoom(&a->v);
        View nv = a->v; // on the head its narration is about, if it names one (studying: the question's)
        nv.stage = a->pb.stage;
        if (!a->study->st.on) a->v.head = scene_stage_head(&a->session->trace, &nv, -1);
        // the same loop's stages keep the step (cache → scores → weights at step t)
        int n = recipe_loop_steps(&a->session->trace, a->pb.stage);
        if (a->v.loop >= n || a->v.stage < 0 || a->v.stage >= a->session->trace.n ||
            recipe_loop_steps(&a->session->trace, a->v.stage) != n)
            a->v.loop = -1;
        a->v.part = a->present.part_next; // (projector mode: its operands, or after ← its result)
        a->present.part_next = 0;
        if (a->pointer.drag == DRAG_PAN) a->pointer.drag = DRAG_NONE;
        lab_deselect(&a->lab);
    }
    a->v.stage = a->pb.stage;
    snprintf(a->seen.stage_name, sizeof a->seen.stage_name, "%s", a->session->trace.stages[a->pb.stage].name);
    a->v.anim = playback_progress(&a->pb);
    a->v.playing = a->pb.playing;
    a->v.speed = a->pb.speed;
    lab_view(&a->lab, a->session, &a->v);
    a->ov.toast = a->toast.left > 0.0 ? a->toast.text : NULL;
    a->ov.text_box = a->text.open ? a->text.text : NULL;
    a->ov.text_error = a->text.error;
    a->ov.text_box_b = a->text.for_b;
    a->ov.toast_alpha = (float)(a->toast.left > 0.5 ? 1.0 : a->toast.left / 0.5);
    a->ov.hover = a->pointer.in && !a->lessons.picker.open && !a->ex.cmp.menu.open;
    a->ov.picker = &a->lessons.picker;
    a->ov.cmp_menu = &a->ex.cmp.menu;
    a->ov.study = &a->study->st;
    a->ov.live = app_train_running(a); // (the narration's size kept while the trace changes)
    app_to_output(a, a->pointer.wx, a->pointer.wy, &a->ov.mouse_x, &a->ov.mouse_y);
    export_ui_update(&a->exp, 0.012, a->v.lang, &a->toast); // export frames first: the window's frame overwrites them
    a->ov.export_total = a->exp.job ? export_job_total(a->exp.job) : 0;
    a->ov.export_done = a->exp.job ? export_job_written(a->exp.job) : 0;
    // Draw: the frame's Layout is the one events are hit-tested with
    Canvas c = {a->screen.r, a->screen.fonts, a->screen.heatmaps, NULL, &a->screen.draw};
    const Layout *Lp = app_layout(a);
    cursor_clamp(&a->pointer.cell, Lp); // (a new stage, head or part: still on one of its cells)
    a->ov.cursor = a->pointer.cell.on && !a->lessons.picker.open && !a->ex.cmp.menu.open;
    a->ov.cursor_panel = a->pointer.cell.panel, a->ov.cursor_row = a->pointer.cell.row, a->ov.cursor_col = a->pointer.cell.col;
    lab_overlays(&a->lab, a->session, Lp, &a->v, &a->ov);
    a->ov.hover = a->ov.hover && !a->lab.menu.open && !a->lab.scrubbing && a->present.tools.drag < 0;
    int w, h;
    app_output_size(a, &w, &h);
    presenting_overlays(&a->present, &a->ov, &a->pb, &a->session->trace, a->v.stage, a->pointer.in, w, h);
    if (a->present.black) paint_clear(&c, (Rgb){0, 0, 0});
    else if (a->ex.train.show_step) optstep_draw(&c, w, h, Lp->s, &a->ex.train.step, a->session->lesson.vocab, // (Shift+R)
                                                a->session->lesson.n_vocab, a->v.lang, a->v.palette);
    else render_frame_laid_out(&c, Lp, lab_trace(&a->lab, a->session), &a->v, &a->ov);
    paint_flush(&c);
    SDL_RenderPresent(a->screen.r);
    present_frame(a);
    if (probe_frame_drawn(&a->probe)) a->quit.quit = true; // (make bench: the first frame shown)
    if (probe_watched(&a->probe)) {
        AppTestFrame f = {a->screen.r, a->probe.frames, app_busy(a), a->seen.stage_name, a->v.loop, app_layout(a),
                          a->v.head, a->session->lesson.checkpoint, a->v.cmp_spec};
        probe_report(&a->probe, &f);
    }
    if (a->loop.trim_pending) {
#ifdef __GLIBC__
        malloc_trim(0);
#endif
        a->loop.trim_pending = false;
    }
    if (a->loop.software && !a->quit.quit && !probe_fake_clock(&a->probe) && !a->loop.no_wait) SDL_Delay(10);
    return !a->quit.quit;
}

int app_run(const AppOptions *opt)
{
    App *a = app_create(opt);
    if (!a) return 1;
    while (app_frame(a)) {}
    app_destroy(a);
    return 0;
}
