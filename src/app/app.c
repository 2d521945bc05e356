// app.c — the interactive window: events in, playback, one render_frame per frame.
//
// Initialization: assets + strings, lesson + trace (computed once), SDL window,
// renderer, fonts. Update: events → UI state (Playback + View). Draw:
// render_frame. De-initialization in reverse order.
#include "app.h"
#include "window.h"
#include "user_dir.h"

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
#include "keys.h"
#include "lab.h"
#include "layout.h"
#include "picker.h"
#include "pins.h"
#include "playback.h"
#include "png_write.h"
#include "presenter.h"
#include "overlay.h"
#include "render.h"
#include "session.h"
#include "study_ui.h"
#include "text.h"
#include "view.h"
#include "viewkind.h"

void app_toast(App *a, const char *key, const char *arg)
{
    const char *args[] = {arg};
    i18n_fmt(a->toast, sizeof a->toast, a->v.lang, key, 1, args);
    a->toast_left = TOAST_SECONDS;
}

// The Layout of the frame on screen: computed once, drawn with, and hit-tested
// with until the view or the window size changes (then computed anew).
const Layout *app_layout(App *a)
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
void app_to_output(App *a, int x, int y, int *ox, int *oy)
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
    for (int k = 2; app_file_exists(path) && k < 1000; k++)
        snprintf(path, sizeof path, "%s/attnviz-%04d-%s-%d.png", dir, a->pb.stage + 1, st->name, k);
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGBA32);
    if (!s) {
        app_toast(a, "app.save_failed", SDL_GetError());
        return;
    }
    // the frame as shown (a tooltip, help), without the toast of an earlier save and
    // without the "Lessons…" and "What if…" buttons: otherwise the same pixels as an export
    Overlays ov = a->ov;
    ov.toast = NULL;
    ov.picker = NULL;
    ov.lab = NULL;
    Canvas c = {a->r, a->fonts, a->heatmaps, NULL, &a->draw};
    render_frame_laid_out(&c, app_layout(a), lab_trace(&a->lab, a->session), &a->v, &ov);
    if (SDL_RenderReadPixels(a->r, NULL, SDL_PIXELFORMAT_RGBA32, s->pixels, s->pitch) != 0) {
        snprintf(err, sizeof err, "%s: %s", path, SDL_GetError());
        app_toast(a, "app.save_failed", err);
    } else if (!png_write_rgba(path, s->pixels, w, h, s->pitch, 6, false, err, sizeof err)) {
        app_toast(a, "app.save_failed", err);
    } else {
        app_toast(a, "app.saved", path);
        printf("%s\n", path);
        fflush(stdout);
        if (app_on_saved) app_on_saved(path);
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

static void lab_begin(App *a);
static void lab_after(App *a);

// Ctrl+↑ / Ctrl+↓: a language model's temperature one step up or down the ladder below, as
// a what-if edit (model.temperature: one undo step, the probabilities animate).
static void step_temperature(App *a, int dir)
{
    static const float LADDER[] = {0.1f, 0.25f, 0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 3.0f, 5.0f, 10.0f};
    const int n = (int)(sizeof LADDER / sizeof LADDER[0]);
    if (!a->session->lesson.vocab) {
        app_toast(a, "app.no_text", NULL);
        return;
    }
    const float t = a->session->lesson.cfg.temperature;
    float next = t;
    for (int i = 0; i < n; i++) {
        const float c = LADDER[dir > 0 ? i : n - 1 - i];
        if (dir > 0 ? c > t : c < t) {
            next = c;
            break;
        }
    }
    if (next == t) return; // (the end of the ladder)
    char arg[48];
    snprintf(arg, sizeof arg, "model.temperature=%g", (double)next);
    lab_begin(a);
    lab_apply_text(&a->lab, a->session, arg, a->v.lang);
    lab_after(a); // (a refusal too: its message as a toast, the numbers as they were)
}

// The same stage in layer l (a model of several layers), wrapping around.
static void set_layer(App *a, int l)
{
    const Trace *tr = &a->session->trace;
    if (tr->n_layers <= 1) return;
    l = ((l % tr->n_layers) + tr->n_layers) % tr->n_layers;
    int s = trace_same_in_layer(tr, a->v.stage, l);
    if (s >= 0 && s != a->v.stage) playback_goto(&a->pb, s, true);
}

static void goto_step(App *a, StepId s)
{
    const Trace *tr = &a->session->trace;
    int first = trace_step_first(tr, trace_layer_at(tr, a->v.stage), s);
    if (first >= 0) playback_goto(&a->pb, first, true);
}

// Zoom by factor at the mouse (over a heatmap) or at the result's centre.
static void zoom_by(App *a, float factor)
{
    const Layout *Lp = app_layout(a);
    int x = -1, y = -1;
    if (a->mouse_in) app_to_output(a, a->mouse_wx, a->mouse_wy, &x, &y);
    layout_zoom_at(&a->v, Lp, x, y, factor);
}

static void pan_by(App *a, int dx, int dy)
{
    const Layout *Lp = app_layout(a);
    int step = (int)(120 * Lp->s);
    layout_pan(&a->v, Lp, dx * step, dy * step);
}

const AppTestHook *app_test_hook;
void (*app_on_saved)(const char *path);
bool (*app_fetch_font)(void);

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
    const Layout *Lp = app_layout(a);
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
    app_export_complete(ctx);
}

// The window watches the session's version: after an edit, undo, redo or reset the
// stage on screen is found again by name (an edit can add or remove the mask stage),
// else the nearest one (playback knows the count), and the title says "(edited)".
static void watch_session(App *a)
{
    if (a->seen_session == a->session && a->seen_version == a->session->version) return;
    if (a->seen_session != a->session) app_checkpoint_before(a); // (the first lesson)
    a->seen_session = a->session, a->seen_version = a->session->version;
    const Trace *tr = &a->session->trace;
    if (tr->n != a->pb.n_stages || a->pb.stage >= tr->n || strcmp(tr->stages[a->pb.stage].name, a->stage_name) != 0) {
        int i = trace_find(tr, a->stage_name);
        if (i < 0) i = a->pb.stage < tr->n ? a->pb.stage : tr->n - 1;
        if (tr->n != a->pb.n_stages) tools_clear(&a->tools); // the stages moved: pins name them by index
        a->pb.n_stages = tr->n;
        a->pb.stage = i;
        a->v.stage = i;
        snprintf(a->stage_name, sizeof a->stage_name, "%s", tr->stages[i].name);
    }
    if (session_edited(a->session) != a->title_edited) { // "(edited)" in the window's title
        a->title_edited = session_edited(a->session);
        app_lessons_set_title(a);
    }
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
    watch_session(a);
    if (lab_take_edit_start(&a->lab)) playback_start_edit(&a->pb); // the playback keeps every clock
    if (a->lab.save_requested) {
        a->lab.save_requested = false;
        app_save_lesson(a);
    }
    bool error = false;
    const char *m = lab_take_message(&a->lab, &error);
    if (m) {
        app_toast(a, "app.edited", m);
        if (error) a->toast_left = ERROR_TOAST_SECONDS;
    }
}

bool app_fonts_reload(App *a)
{
    char err[MSG_MAX];
    Fonts *f = fonts_create(a->opt->font_path, a->v.lang, err, sizeof err);
    if (!f) {
        fprintf(stderr, "%s\n", err);
        return false;
    }
    fonts_destroy(a->fonts);
    a->fonts = f;
    a->measure = (TextMeasure){text_measure, a->fonts};
    a->v.measure = &a->measure;
    a->layout_valid = false;
    return true;
}

// ---- the study mode (T, the "Study" button) ---------------------------------------

// Its message (progress saved or not, the stage locked, the score) as a toast.
static void study_after(App *a)
{
    bool error = false;
    const char *m = study_ui_take_message(a->study, &error);
    if (!m) return;
    app_toast(a, "app.edited", m);
    if (error) a->toast_left = ERROR_TOAST_SECONDS;
}

static void toggle_study(App *a)
{
    if (a->study->st.on) {
        study_ui_end(a->study, a->session, a->pb.stage);
        app_toast(a, "study.off", NULL);
        study_after(a);
        return;
    }
    if (a->pres) { // the presenter window previews the next stage: it would give answers away
        app_toast(a, "study.not_with_presenter", NULL);
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
        app_toast(a, "study.not_with_presenter", NULL);
        return;
    }
    if (!a->pres && a->opt->browser) { // one canvas, one window: the page has no second one
        app_toast(a, "app.presenter_failed", i18n_get(a->v.lang, "app.not_in_browser"));
        a->toast_left = ERROR_TOAST_SECONDS;
        return;
    }
    if (!a->pres) {
        int w, h;
        SDL_GetWindowSize(a->win, &w, &h);
        char err[MSG_MAX];
        a->pres = presenter_create(a->win, a->opt->font_path, a->v.lang, w, h, err, sizeof err);
        if (!a->pres) {
            cli_error(stderr, "attnviz: %s", err);
            app_toast(a, "app.presenter_failed", err);
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
    a->ov.loop_steps = recipe_loop_steps(&a->session->trace, a->pb.stage);
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

// M (--projector): projector mode on / off; on, it starts with the high-contrast palette;
// off, the palette from before comes back (unless C chose another meanwhile).
static void toggle_projector(App *a)
{
    a->v.projector = !a->v.projector;
    a->v.part = 0;
    if (a->v.projector) {
        a->palette_before_projector = a->v.palette;
        a->v.palette = PALETTE_HIGH_CONTRAST;
    } else if (a->v.palette == PALETTE_HIGH_CONTRAST) {
        a->v.palette = a->palette_before_projector;
    }
    app_toast(a, a->v.projector ? "app.projector_on" : "app.projector_off", NULL);
}

// N / Shift+N: the next (previous) step of the stage's loop — decoding's steps, FlashAttention's
// tiles —; past either end, the whole loop again. The stage settles and stays (no auto-advance).
static void step_loop(App *a, int dir)
{
    int n = recipe_loop_steps(&a->session->trace, a->pb.stage);
    if (n == 0) {
        app_toast(a, "app.loop_none", NULL);
        return;
    }
    int k = a->v.loop < 0 ? (dir > 0 ? 0 : n - 1) : a->v.loop + dir;
    a->v.loop = k >= 0 && k < n ? k : -1;
    playback_goto(&a->pb, a->pb.stage, false);
    if (a->pb.playing) playback_toggle(&a->pb);
    if (a->v.loop < 0) app_toast(a, "app.loop_all", NULL);
}

// A key the modes above passed on: its action in the key table (keymap.h).
static void key_action(App *a, KeyAction act, SDL_Keycode sym)
{
    switch (act) {
    case KEY_ACT_QUIT: app_request_quit(a); break;
    case KEY_ACT_ESCAPE: app_escape(a); break;
    case KEY_ACT_NEXT: step_forward(a); break;
    case KEY_ACT_PREV: step_back(a); break;
    case KEY_ACT_PROJECTOR: toggle_projector(a); break;
    case KEY_ACT_FIRST: playback_goto(&a->pb, 0, false); break;
    case KEY_ACT_LAST: playback_goto(&a->pb, a->session->trace.n - 1, false); break;
    case KEY_ACT_PLAY: playback_toggle(&a->pb); break;
    case KEY_ACT_HEAD_NEXT: set_head(a, a->v.head + 1); break;
    case KEY_ACT_MODEL_VIEW: // the stage's panels → the model view → the head view → the panels
        a->v.kind = viewkind_of(a->v.kind)->next;
        break;
    case KEY_ACT_TEXT: app_text_open(a); break;
    case KEY_ACT_CKPT_NEXT: case KEY_ACT_CKPT_PREV: { // the training slider: the next / previous checkpoint
        const Lesson *ls = &a->session->lesson;
        int k = ls->checkpoint < 0 ? ls->n_checkpoints - 1 : ls->checkpoint; // ("weights": after the last)
        if (ls->checkpoint < 0 && act == KEY_ACT_CKPT_NEXT) break;
        app_set_checkpoint(a, act == KEY_ACT_CKPT_NEXT ? k + 1 : ls->checkpoint < 0 ? k : k - 1);
        break;
    }
    case KEY_ACT_WARMER: case KEY_ACT_COOLER: step_temperature(a, act == KEY_ACT_WARMER ? 1 : -1); break;
    case KEY_ACT_LAYER_NEXT: set_layer(a, trace_layer_at(&a->session->trace, a->v.stage) + 1); break;
    case KEY_ACT_LAYER_PREV: set_layer(a, trace_layer_at(&a->session->trace, a->v.stage) - 1); break;
    case KEY_ACT_HEAD_PREV: set_head(a, a->v.head - 1); break;
    case KEY_ACT_BATCH_NEXT: set_batch(a, a->v.batch + 1); break;
    case KEY_ACT_BATCH_PREV: set_batch(a, a->v.batch - 1); break;
    case KEY_ACT_FASTER: playback_set_speed(&a->pb, a->pb.speed * 1.5f); break;
    case KEY_ACT_SLOWER: playback_set_speed(&a->pb, a->pb.speed / 1.5f); break;
    case KEY_ACT_VALUES: a->v.show_values = !a->v.show_values; break;
    case KEY_ACT_PALETTE:
        a->v.palette = (Palette)((a->v.palette + 1) % PALETTE_COUNT);
        app_toast(a, "app.palette", i18n_get(a->v.lang, colormap_palette_key(a->v.palette)));
        break;
    case KEY_ACT_PROB_SCALE: { // how attention weights are coloured: auto → linear → log
        static const char *const keys[PROB_SCALE_COUNT] = {"app.prob_scale_auto", "app.prob_scale_linear",
                                                          "app.prob_scale_log"};
        a->v.prob_scale = (ProbScale)((a->v.prob_scale + 1) % PROB_SCALE_COUNT);
        app_toast(a, keys[a->v.prob_scale], "");
        break;
    }
    case KEY_ACT_FULLSCREEN: {
        bool fs = (SDL_GetWindowFlags(a->win) & SDL_WINDOW_FULLSCREEN_DESKTOP) != 0;
        SDL_SetWindowFullscreen(a->win, fs ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP);
        break;
    }
    case KEY_ACT_SAVE: save_frame(a); break;
    case KEY_ACT_EXPORT: // the formats, then a digit
        if (a->export_job) break;
        if (a->study->st.on) { // every stage's result, answered or not (frames, handout, video)
            app_toast(a, "study.no_export", NULL);
            break;
        }
        a->export_choose = true; // (the page: only what it can make)
        app_toast(a, a->opt->browser ? "app.export_choose_web" : "app.export_choose", "");
        a->toast_left = EXPORT_TOAST_SECONDS;
        break;
    case KEY_ACT_ZOOM_IN: zoom_by(a, 1.5f); break;
    case KEY_ACT_ZOOM_OUT: zoom_by(a, 1.0f / 1.5f); break;
    case KEY_ACT_ZERO:
        if (!step_digit(a, 0)) view_reset_zoom(&a->v); // 0 alone: the whole heatmap again
        break;
    case KEY_ACT_DIGIT: step_digit(a, (int)(sym - SDLK_0)); break; // (its row binds "1" … "9" only)
    case KEY_ACT_LANG: app_lessons_switch_lang(a); break;
    case KEY_ACT_LASER: a->tools.laser = !a->tools.laser; break; // the laser dot
    case KEY_ACT_SPOTLIGHT: a->tools.spotlight = !a->tools.spotlight; break;
    case KEY_ACT_HOLD: playback_hold(&a->pb, !a->pb.held); break; // pause inside the transition / go on
    case KEY_ACT_LOOP_NEXT: step_loop(a, 1); break;
    case KEY_ACT_LOOP_PREV: step_loop(a, -1); break;
    case KEY_ACT_FRAME_BACK: playback_step_frame(&a->pb, -1); break; // the transition, frame by frame
    case KEY_ACT_FRAME_FORWARD: playback_step_frame(&a->pb, 1); break;
    case KEY_ACT_CLEAR_PINS: tools_clear(&a->tools); break;
    case KEY_ACT_OPEN: app_lessons_open_picker(a); break;
    case KEY_ACT_PRESENT: present_from_start(a); break;
    case KEY_ACT_BLACK: // black screen, as in presentation software
        a->black = !a->black;
        if (a->black) app_toast(a, "app.black", NULL);
        else a->toast_left = 0.0;
        break;
    case KEY_ACT_PAN:   // (taken before the modes: on_key)
    case KEY_ACT_HELP:
    case KEY_ACT_STUDY:
    case KEY_ACT_NONE:
    case KEY_ACTION_COUNT: break;
    }
}

// ---- keys: the modes as a stack of handlers, topmost first ------------------------------
// Each takes the key (true) or passes it down; what no mode takes is the key table's
// action (keymap.h). The key's action is looked up once, for every mode to read.

static bool is_shift(SDL_Keycode sym) { return sym == SDLK_LSHIFT || sym == SDLK_RSHIFT; }

// Shift + arrows pan a zoomed heatmap, over everything but the help.
static bool mode_pan(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    SDL_Keycode sym = k->keysym.sym;
    if (act != KEY_ACT_PAN || a->ov.help) return false;
    pan_by(a, sym == SDLK_LEFT ? 1 : sym == SDLK_RIGHT ? -1 : 0, sym == SDLK_UP ? 1 : sym == SDLK_DOWN ? -1 : 0);
    return true;
}

// The help overlay: any key but Shift closes it.
static bool mode_help(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    (void)act;
    if (!a->ov.help) return false;
    if (!is_shift(k->keysym.sym)) a->ov.help = false;
    return true;
}

// After E: the next key picks the format.
static bool mode_export_choice(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    (void)act;
    if (!a->export_choose || is_shift(k->keysym.sym)) return false;
    app_export_choose_key(a, k->keysym.sym);
    return true;
}

// ? F1 open the help (not while a value is typed).
static bool mode_open_help(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    (void)k;
    if (act != KEY_ACT_HELP || a->lab.typing) return false;
    a->ov.help = true;
    return true;
}

// The study mode: its box takes answers; T leaves; the lab's keys are refused.
static bool mode_study(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    if (!a->study->st.on) return false;
    bool used = study_ui_key(a->study, a->session, k, a->pb.stage, &a->v);
    study_after(a);
    if (used) return true;
    if (act == KEY_ACT_STUDY) {
        toggle_study(a);
        return true;
    }
    if (lab_key_while_studying(k)) {
        app_toast(a, "study.no_edit", NULL);
        return true;
    }
    return false;
}

// T enters the study mode (not while a value is typed).
static bool mode_enter_study(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    (void)k;
    if (a->study->st.on || act != KEY_ACT_STUDY || a->lab.typing) return false;
    toggle_study(a);
    return true;
}

// The what-if lab: the selection, a value typed, its switches.
static bool mode_lab(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    (void)act;
    if (a->study->st.on) return false;
    lab_begin(a);
    if (!lab_key(&a->lab, a->session, app_layout(a), &a->v, k)) return false;
    lab_after(a);
    return true;
}

typedef bool (*KeyMode)(App *a, const SDL_KeyboardEvent *k, KeyAction act);
// The text box (I) takes every key while it is open.
static bool mode_text(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    (void)act;
    return app_text_key(a, k);
}

// Quitting asked: its question takes every key (app_quit.c).
static bool mode_quit_ask(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    (void)act;
    return app_quit_ask_key(a, k);
}

static const KeyMode KEY_MODES[] = {mode_quit_ask, mode_text, mode_pan,  mode_help,        mode_export_choice, mode_open_help,
                                    mode_study, mode_enter_study, mode_lab};

static void on_key(App *a, const SDL_KeyboardEvent *k)
{
    KeyAction act = keys_lookup(k->keysym.sym, k->keysym.mod);
    for (size_t i = 0; i < sizeof KEY_MODES / sizeof KEY_MODES[0]; i++)
        if (KEY_MODES[i](a, k, act)) return;
    key_action(a, act, k->keysym.sym);
}

static void on_click(App *a, int wx, int wy)
{
    int x, y;
    app_to_output(a, wx, wy, &x, &y);
    const Layout *Lp = app_layout(a);
    int s = layout_hit_step(Lp, x, y), b = layout_hit_batch(Lp, x, y), h = layout_hit_head(Lp, x, y);
    int l = layout_hit_layer(Lp, x, y), hs, hh;
    const ViewKindInfo *vk = viewkind_of(a->v.kind);
    if (vk->hit && vk->hit(Lp, x, y, &hs, &hh)) { // a glance's map: open its walkthrough
        a->v.kind = VIEW_PANELS;
        a->v.head = hh;
        if (hs != a->v.stage) playback_goto(&a->pb, hs, true);
        return;
    }
    int ck = layout_hit_checkpoint(Lp, &a->v, x, y);
    if (ck >= 0) app_set_checkpoint(a, ck);
    if (s >= 0) goto_step(a, (StepId)s);
    if (b >= 0) set_batch(a, b);
    if (h >= 0) set_head(a, h);
    if (l >= 0) set_layer(a, l);
}

// A press on the scrub bar (a held transition) or on the loop's step bar: the knob, or the
// step, follows the pointer until the button is released.
static bool bar_press(App *a, const SDL_Event *e)
{
    if (e->type != SDL_MOUSEBUTTONDOWN || e->button.button != SDL_BUTTON_LEFT || a->ov.help) return false;
    int x, y;
    app_to_output(a, e->button.x, e->button.y, &x, &y);
    const Layout *Lp = app_layout(a);
    Rect sb, st;
    overlay_scrub_rect(Lp, &sb, &st);
    if (!rect_contains(sb, x, y)) return false;
    if (a->pb.held) {
        a->scrub_drag = true;
        playback_scrub(&a->pb, st.w > 0 ? (float)(x - st.x) / (float)st.w : 0.0f);
        return true;
    }
    if (a->v.loop >= 0 && a->ov.loop_steps > 0) {
        a->loop_drag = true;
        a->v.loop = overlay_loop_step_at(Lp, a->ov.loop_steps, x);
        return true;
    }
    return false;
}

static void handle_event(App *a, const SDL_Event *e)
{
    // the presenter window's mouse and window events are its own; its keys are ours
    if (a->pres && presenter_owns_event(a->pres, e)) {
        if (presenter_event(a->pres, e)) presenter_destroy(a->pres), a->pres = NULL;
        return;
    }
    if (e->type == SDL_WINDOWEVENT && e->window.event == SDL_WINDOWEVENT_CLOSE) { // the audience's
        app_request_quit(a);
        return;
    }
    if (bar_press(a, e)) return; // (drawn over the buttons of the status line: before them)
    if (app_lessons_event(a, e)) return;
    switch (e->type) {
    case SDL_QUIT: app_request_quit(a); break; // (Ctrl+C in the terminal: twice quits without asking)
    case SDL_KEYDOWN: on_key(a, &e->key); break;
    case SDL_TEXTINPUT: // the characters of a value typed into a cell (any keyboard layout)
        if (app_text_input(a, e->text.text)) break; // a language model's text (I)
        if (a->study->st.on) { // or of an answer
            if (!a->ov.help) study_ui_text(a->study, e->text.text);
            break;
        }
        lab_begin(a);
        if (!a->ov.help && lab_text(&a->lab, a->session, app_layout(a), &a->v, e->text.text)) lab_after(a);
        break;
    case SDL_MOUSEMOTION:
        a->mouse_in = true;
        a->mouse_wx = e->motion.x, a->mouse_wy = e->motion.y;
        if (a->scrub_drag) {
            int x, y;
            app_to_output(a, e->motion.x, e->motion.y, &x, &y);
            Rect sb, st;
            overlay_scrub_rect(app_layout(a), &sb, &st);
            playback_scrub(&a->pb, st.w > 0 ? (float)(x - st.x) / (float)st.w : 0.0f);
        } else if (a->loop_drag) { // the loop's step bar: the step under the pointer
            int x, y;
            app_to_output(a, e->motion.x, e->motion.y, &x, &y);
            a->v.loop = overlay_loop_step_at(app_layout(a), a->ov.loop_steps, x);
        } else if (a->tools.drag >= 0) { // a pinned tooltip's box follows the pointer
            int x, y, w, h;
            app_to_output(a, e->motion.x, e->motion.y, &x, &y);
            SDL_GetRendererOutputSize(a->r, &w, &h);
            tools_drag(&a->tools, x, y, w, h);
        } else if (a->lab.press) { // a press on a value: dragging scrubs it
            int x, y;
            app_to_output(a, e->motion.x, e->motion.y, &x, &y);
            lab_begin(a);
            lab_drag(&a->lab, a->session, y, (SDL_GetModState() & KMOD_SHIFT) != 0, a->v.lang);
            lab_after(a);
        } else if (a->dragging) { // drag: the zoomed heatmaps follow the mouse
            int x, y;
            app_to_output(a, e->motion.x, e->motion.y, &x, &y);
            const Layout *Lp = app_layout(a);
            layout_pan(&a->v, Lp, x - a->drag_x, y - a->drag_y);
            a->drag_x = x, a->drag_y = y;
        }
        break;
    case SDL_MOUSEBUTTONDOWN:
        if (a->ov.help) {
            a->ov.help = false;
        } else if (e->button.button == SDL_BUTTON_LEFT) {
            int x, y;
            app_to_output(a, e->button.x, e->button.y, &x, &y);
            const Layout *Lp = app_layout(a);
            Rect lb, stb;
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
                    app_toast(a, "study.no_edit", NULL);
                    used = true;
                }
            } else {
                lab_begin(a);
                used = lab_press(&a->lab, a->session, Lp, &a->v, x, y, (SDL_GetModState() & KMOD_SHIFT) != 0);
                lab_after(a); // Lp may be stale now: nothing below uses it after an edit
            }
            if (used) {
            } else if (a->v.zoom > 1.0f && layout_hit_panel(app_layout(a), x, y) >= 0) {
                a->dragging = true;
                a->drag_x = x, a->drag_y = y;
            } else if (!tools_toggle_pin(&a->tools, app_layout(a), a->v.stage, x, y)) { // a cell the lab
                on_click(a, e->button.x, e->button.y);                                     // does not edit: pinned
            }
        }
        break;
    case SDL_MOUSEBUTTONUP:
        if (e->button.button == SDL_BUTTON_LEFT) a->dragging = false, lab_release(&a->lab), tools_release(&a->tools),
            a->scrub_drag = a->loop_drag = false;
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
    a->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, o->width, o->height, flags);
    if (!a->win) return false;
    SDL_SetWindowMinimumSize(a->win, 480, 320);
    a->r = SDL_CreateRenderer(a->win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!a->r) a->r = SDL_CreateRenderer(a->win, -1, SDL_RENDERER_SOFTWARE);
    return a->r != NULL;
}

// De-initialization, in the reverse order (a half-open App too).
void app_destroy(App *a)
{
    if (a->export_job) app_export_complete(a);
    if (a->study) study_ui_end(a->study, a->session, a->pb.stage); // the answers are kept
    presenter_destroy(a->pres);
    heatmap_cache_flush(a->heatmaps);
    if (a->fonts) fonts_flush(a->fonts);
    if (a->r) SDL_DestroyRenderer(a->r);
    if (a->win) SDL_DestroyWindow(a->win);
    fonts_destroy(a->fonts);
    if (a->sdl_up) SDL_Quit();
    lab_free(&a->lab);
    session_destroy(a->ckpt_before);
    session_destroy(a->session);
    picker_free(&a->picker);
    study_ui_destroy(a->study);
    heatmap_cache_destroy(a->heatmaps);
    draw_list_free(&a->draw);
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
    a->fonts = fonts_create(opt->font_path, (Lang)opt->lang, err, sizeof err);
    if (!a->fonts) {
        fprintf(stderr, "%s\n", err);
        goto fail;
    }
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, "attnviz: cannot open a window: %s\n", SDL_GetError());
        goto fail;
    }
    a->sdl_up = true;
    if (!open_window(a)) {
        fprintf(stderr, "attnviz: cannot open a window: %s\n", SDL_GetError());
        goto fail;
    }
    a->heatmaps = heatmap_cache_create();
    if (!a->heatmaps) {
        fprintf(stderr, "attnviz: out of memory\n");
        goto fail;
    }
    playback_init(&a->pb, a->session->trace.n);
    // zh without a Chinese font: English, with a warning on stderr and in the window
    Lang lang = fonts_usable_lang(a->fonts, (Lang)opt->lang, stderr);
    view_init(&a->v, &a->session->lesson, lang);
    if (!open_at(a, opt)) goto fail;
    a->title_edited = session_edited(a->session);
    a->seen_session = a->session, a->seen_version = a->session->version;
    a->saved_session = a->session, a->saved_version = a->session->version; // (--set: the edits asked for)
    a->measure = (TextMeasure){text_measure, a->fonts};
    a->v.measure = &a->measure;
    app_lessons_set_title(a);
    if (lang != (Lang)opt->lang) {
        app_toast(a, "app.no_cjk_font", NULL);
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
        goto fail;
    }
    if (opt->study) toggle_study(a);
    if (opt->presenter) present_from_start(a);
    if (opt->projector) toggle_projector(a), a->toast_left = 0.0;
    a->v.kind = (ViewKind)opt->view;

    a->freq = SDL_GetPerformanceFrequency(), a->last = SDL_GetPerformanceCounter();
    SDL_RendererInfo info;
    if (SDL_GetRendererInfo(a->r, &info) == 0) a->software = (info.flags & SDL_RENDERER_SOFTWARE) != 0;
    // Benchmark hook (make bench): quit right after the first frame is shown.
    const char *bench_first = getenv("ATTNVIZ_QUIT_AFTER_FIRST_FRAME");
    a->quit_after_first = bench_first && *bench_first && strcmp(bench_first, "0") != 0;
    const char *clock = getenv("ATTNVIZ_TEST_CLOCK"), *state = getenv("ATTNVIZ_TEST_STATE");
    a->fake_ms_per_frame = app_test_hook ? app_test_hook->ms_per_frame : clock && *clock ? atof(clock) : 0.0;
    a->state_path = state && *state ? state : NULL;
    a->no_wait = opt->browser;
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
    bool busy = a->frames_drawn == 0 || (playback_animating(&a->pb) && !a->pb.held) || a->pb.playing ||
                (a->toast_left > 0.0 && !a->quit_ask) || a->export_job || a->lab.animating;
    if (!busy && !app_test_hook && !a->no_wait && SDL_WaitEventTimeout(&e, 250))
        handle_event(a, &e), a->events++, a->keyups += e.type == SDL_KEYUP;
    long events_before = a->events;
    while (SDL_PollEvent(&e)) handle_event(a, &e), a->events++, a->keyups += e.type == SDL_KEYUP;
    a->text_skip = false; // (the I that opened the text box came with this frame's events)
    // the browser calls every frame: one with no event, nothing moving and nothing
    // changed is not drawn (the page idles; the desktop loop waited above instead)
    if (a->no_wait && !busy && a->events == events_before && !a->quit && a->seen_version == a->session->version &&
        a->seen_session == a->session && !a->export_choose) {
        a->last = SDL_GetPerformanceCounter();
        return true;
    }
    watch_session(a);
    Uint64 now = SDL_GetPerformanceCounter();
    double dt = a->fake_ms_per_frame > 0.0 ? a->fake_ms_per_frame / 1000.0 : (double)(now - a->last) / (double)a->freq;
    a->last = now;
    a->fake_ms += a->fake_ms_per_frame;
    playback_update(&a->pb, dt);
    lab_update(&a->lab, a->session, playback_edit_progress(&a->pb));
    { // the study mode: no stage past an unanswered question; a hidden result waits
        bool hold;
        int allowed = study_ui_frame(a->study, a->session, a->pb.stage, &a->v, &hold);
        if (allowed != a->pb.stage) playback_goto(&a->pb, allowed, false);
        if (hold) a->pb.t = 0.0;
        study_after(a);
    }
    if (a->toast_left > 0.0 && !a->quit_ask) a->toast_left -= dt; // (the question stays until answered)
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
    a->ov.text_box = a->text_open ? a->text : NULL;
    a->ov.text_error = a->text_error;
    a->ov.toast_alpha = (float)(a->toast_left > 0.5 ? 1.0 : a->toast_left / 0.5);
    a->ov.hover = a->mouse_in && !a->picker.open;
    a->ov.picker = &a->picker;
    a->ov.study = &a->study->st;
    app_to_output(a, a->mouse_wx, a->mouse_wy, &a->ov.mouse_x, &a->ov.mouse_y);
    app_export_update(a, 0.012); // export frames first: the window's frame overwrites them
    a->ov.export_total = a->export_job ? export_job_total(a->export_job) : 0;
    a->ov.export_done = a->export_job ? export_job_written(a->export_job) : 0;
    // Draw: the frame's Layout is the one events are hit-tested with
    Canvas c = {a->r, a->fonts, a->heatmaps, NULL, &a->draw};
    const Layout *Lp = app_layout(a);
    lab_overlays(&a->lab, a->session, Lp, &a->v, &a->ov);
    a->ov.hover = a->ov.hover && !a->lab.menu.open && !a->lab.scrubbing && a->tools.drag < 0;
    present_tools(a);
    if (a->black) paint_clear(&c, (Rgb){0, 0, 0});
    else render_frame_laid_out(&c, Lp, lab_trace(&a->lab, a->session), &a->v, &a->ov);
    paint_flush(&c);
    SDL_RenderPresent(a->r);
    present_frame(a);
    if (++a->frames_drawn == 1 && a->quit_after_first) a->quit = true;
    if (app_test_hook || a->state_path) {
        busy = (playback_animating(&a->pb) && !a->pb.held) || a->pb.playing || (a->toast_left > 0.0 && !a->quit_ask) ||
               a->export_job || a->lab.animating;
        AppTestFrame f = {a->r, a->frames_drawn, busy, a->stage_name, a->v.loop, app_layout(a), a->v.head,
                          a->session->lesson.checkpoint};
        if (app_test_hook) app_test_hook->frame(app_test_hook->ctx, &f);
        FILE *sf = a->state_path ? fopen(a->state_path, "w") : NULL; // the Xvfb tests poll it
        if (sf) fprintf(sf, "%ld %ld %d %s %ld\n", a->frames_drawn, a->events, busy, a->stage_name, a->keyups), fclose(sf);
    }
    if (a->trim_pending) {
#ifdef __GLIBC__
        malloc_trim(0);
#endif
        a->trim_pending = false;
    }
    if (a->software && !a->quit && a->fake_ms_per_frame <= 0.0 && !a->no_wait) SDL_Delay(10);
    return !a->quit;
}

int app_run(const AppOptions *opt)
{
    App *a = app_create(opt);
    if (!a) return 1;
    while (app_frame(a)) {}
    app_destroy(a);
    return 0;
}
