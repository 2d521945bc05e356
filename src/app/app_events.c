// app_events.c — the window's input: keys (a stack of modes, then the key table's
// action, keymap.h) and the mouse (clicks, the wheel, one drag at a time: Pointer.drag),
// and what they start: the study mode, presenting, projector mode, a saved frame.
#include "app_train.h"
#include "app_events.h"

#include <SDL.h>
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_compare.h"
#include "app_lessons.h"
#include "app_quit.h"
#include "cli.h"
#include "i18n.h"
#include "keys.h"
#include "overlay.h"
#include "png_write.h"
#include "render.h"
#include "sample.h"
#include "scene.h"
#include "viewkind.h"

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
    SDL_GetRendererOutputSize(a->screen.r, &w, &h);
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
    Canvas c = {a->screen.r, a->screen.fonts, a->screen.heatmaps, NULL, &a->screen.draw};
    render_frame_laid_out(&c, app_layout(a), lab_trace(&a->lab, a->session), &a->v, &ov);
    if (SDL_RenderReadPixels(a->screen.r, NULL, SDL_PIXELFORMAT_RGBA32, s->pixels, s->pitch) != 0) {
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

// Ctrl+Shift+↑ / Ctrl+Shift+↓: a language model's top-k / top-p one step along its ladder, round to off
// again, as a what-if edit (model.top_k, model.top_p: one undo step; the bars follow).
static void step_sampling(App *a, bool top_k)
{
    static const int K[] = {1, 3, 5, 10, 20};
    static const float P[] = {0.95f, 0.9f, 0.75f, 0.5f};
    if (!a->session->lesson.vocab) {
        app_toast(a, "app.no_text", NULL);
        return;
    }
    const AttnConfig *c = &a->session->lesson.cfg;
    char arg[48] = "";
    if (top_k) {
        snprintf(arg, sizeof arg, "model.top_k=off");
        for (size_t i = 0; i < sizeof K / sizeof K[0]; i++)
            if (K[i] > c->top_k) { snprintf(arg, sizeof arg, "model.top_k=%d", K[i]); break; }
    } else {
        snprintf(arg, sizeof arg, "model.top_p=1");
        for (size_t i = 0; i < sizeof P / sizeof P[0]; i++)
            if (P[i] < c->top_p) { snprintf(arg, sizeof arg, "model.top_p=%g", (double)P[i]); break; }
    }
    lab_begin(a);
    lab_apply_text(&a->lab, a->session, arg, a->v.lang);
    lab_after(a);
}

// R / Shift+R: each batch's next token after its last position (sample.h: the probs at the
// temperature, top-k and top-p; the most likely kept one, or the seeded draw: seed 1 at the
// position it goes to) appended, and everything computed again (session_append). At the
// model's context: a message, the text stays.
static void generate(App *a, bool draw)
{
    const Lesson *ls = &a->session->lesson;
    const Trace *tr = &a->session->trace;
    const int s = trace_find(tr, "probs");
    if (!ls->vocab || s < 0) {
        app_toast(a, "app.no_text", NULL);
        return;
    }
    const int most = ls->cfg.positions == POS_LEARNED && ls->cfg.max_positions < LESSON_MAX_LEN ? ls->cfg.max_positions
                                                                                                : LESSON_MAX_LEN;
    char n1[16], n2[16], n3[16];
    if (ls->len_q >= most) {
        snprintf(n1, sizeof n1, "%d", most);
        app_toast(a, "app.context_full", n1);
        return;
    }
    const Tensor *t = &tr->stages[s].t; // (B, L, V)
    const int B = t->shape[0], L = t->shape[1], V = t->shape[2], shown = a->v.batch < B ? a->v.batch : 0;
    assert(V <= SAMPLE_MAX_VOCAB && B <= LESSON_MAX_BATCH);
    int next[LESSON_MAX_BATCH];
    float kept[SAMPLE_MAX_VOCAB], p_shown = 0.0f;
    for (int b = 0; b < B; b++) {
        sample_filter(t->data + ((size_t)b * L + (size_t)(L - 1)) * V, V, ls->cfg.top_k, ls->cfg.top_p, kept);
        next[b] = sample_pick(kept, V, draw ? 1 : 0, L);
        if (b == shown) p_shown = kept[next[b]];
    }
    char err[LESSON_ERR_MAX];
    Session *n = session_append(a->session, next, err, sizeof err);
    if (!n) {
        app_toast(a, "app.edited", err);
        return;
    }
    const char *tok = lesson_vocab_label(ls, next[shown]);
    snprintf(n1, sizeof n1, "%.2f", (double)p_shown), snprintf(n2, sizeof n2, "%d", L + 1);
    snprintf(n3, sizeof n3, "%.4f", (double)sample_draw_u(1, L));
    char label[80];
    snprintf(label, sizeof label, "%s", tok && strcmp(tok, " ") ? tok : "\xE2\x90\xA3"); // (before the old session goes)
    app_replace_session(a, n, true);
    const char *args[] = {label, n1, n2, n3};
    toast_say(&a->toast, a->v.lang, draw ? "app.generated_draw" : "app.generated", 4, args, TOAST_SECONDS);
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
    if (a->pointer.in) app_to_output(a, a->pointer.wx, a->pointer.wy, &x, &y);
    layout_zoom_at(&a->v, Lp, x, y, factor);
}

static void pan_by(App *a, int dx, int dy)
{
    const Layout *Lp = app_layout(a);
    int step = (int)(120 * Lp->s);
    layout_pan(&a->v, Lp, dx * step, dy * step);
}

// Digits jump to a step of the timeline: 1–9 at once; a second digit typed
// within a second makes a two-digit step (1 then 0 → step 10, 1 then 1 → 11),
// as in presentation software. Returns false when the digit jumps nowhere.
static bool step_digit(App *a, int d)
{
    const Layout *Lp = app_layout(a);
    Uint64 now = probe_ms(&a->probe);
    int n = a->pointer.digit.n > 0 && now - a->pointer.digit.ms < 1000 ? a->pointer.digit.n * 10 + d : d;
    if (n < 1 || n > Lp->n_steps) n = d;
    a->pointer.digit.n = n <= 9 ? n : 0;
    a->pointer.digit.ms = now;
    if (n < 1 || n > Lp->n_steps) return false;
    goto_step(a, Lp->step_id[n - 1]);
    return true;
}

// Before the lab handles an event: which stage is on screen, by name.
static void lab_begin(App *a)
{
    const Trace *tr = &a->session->trace;
    if (a->pb.stage >= 0 && a->pb.stage < tr->n)
        snprintf(a->seen.stage_name, sizeof a->seen.stage_name, "%s", tr->stages[a->pb.stage].name);
}

// After the lab handled an event: its message as a toast, a requested save, the title.
static void lab_after(App *a)
{
    app_watch_session(a);
    if (lab_take_edit_start(&a->lab)) playback_start_edit(&a->pb); // the playback keeps every clock
    if (a->lab.save_requested) {
        a->lab.save_requested = false;
        app_save_lesson(a);
    }
    bool error = false;
    const char *m = lab_take_message(&a->lab, &error);
    if (m) {
        app_toast(a, "app.edited", m);
        if (error) a->toast.left = ERROR_TOAST_SECONDS;
    }
}

// ---- the study mode (T, the "Study" button) ---------------------------------------

// Its message (progress saved or not, the stage locked, the score) as a toast.
void app_study_after(App *a)
{
    bool error = false;
    const char *m = study_ui_take_message(a->study, &error);
    if (!m) return;
    app_toast(a, "app.edited", m);
    if (error) a->toast.left = ERROR_TOAST_SECONDS;
}

void app_toggle_study(App *a)
{
    if (a->study->st.on) {
        study_ui_end(a->study, a->session, a->pb.stage);
        app_toast(a, "study.off", NULL);
        app_study_after(a);
        return;
    }
    if (a->present.pres) { // the presenter window previews the next stage: it would give answers away
        app_toast(a, "study.not_with_presenter", NULL);
        return;
    }
    // the lab steps aside: its switches, selection and Δ view
    a->lab.menu.open = false;
    a->lab.delta = false;
    lab_deselect(&a->lab);
    a->pb.playing = false;
    playback_goto(&a->pb, study_ui_begin(a->study, a->session, a->v.lang, a->pb.stage), false);
    app_study_after(a);
}

// While studying, the lab's keys only say how to edit.
static bool lab_key_while_studying(const SDL_KeyboardEvent *k)
{
    SDL_Keycode sym = k->keysym.sym;
    bool ctrl = (k->keysym.mod & KMOD_CTRL) != 0;
    return sym == SDLK_w || (sym == SDLK_d && !(k->keysym.mod & KMOD_SHIFT)) || sym == SDLK_RETURN || sym == SDLK_KP_ENTER ||
           (ctrl && (sym == SDLK_z || sym == SDLK_y || sym == SDLK_r || sym == SDLK_s));
}

// ---- presenter mode (presenter.c): F5, ".", the second window ------------------

void app_present_from_start(App *a)
{
    if (a->study->st.on) {
        app_toast(a, "study.not_with_presenter", NULL);
        return;
    }
    if (!a->present.pres && a->opt->browser) { // one canvas: the page opens a second browser window
        if (!app_open_presenter || !app_open_presenter()) {
            app_toast(a, "app.presenter_failed", i18n_get(a->v.lang, "app.popup_blocked"));
            a->toast.left = ERROR_TOAST_SECONDS;
            return;
        }
        app_toast(a, "app.presenter_web", NULL);
        playback_goto(&a->pb, 0, false);
        return;
    }
    char err[MSG_MAX];
    if (!presenting_start(&a->present, a->screen.win, a->opt->font_path, a->v.lang, err, sizeof err)) {
        cli_error(stderr, "attnviz: %s", err);
        app_toast(a, "app.presenter_failed", err);
        a->toast.left = ERROR_TOAST_SECONDS;
        return;
    }
    playback_goto(&a->pb, 0, false);
}

// Projector mode: in how many parts stage st is shown at the window's size.
static int stage_parts(App *a, int st)
{
    // st: playback's stage, which an undo or a typed text earlier in the same frame's events
    // may have left past the trace's new end (app_watch_session catches up after them)
    if (!a->v.projector || st < 0 || st >= a->session->trace.n) return 1;
    View v = a->v;
    v.stage = st, v.anim = 1.0f;
    int w, h;
    SDL_GetRendererOutputSize(a->screen.r, &w, &h);
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
    if (a->pb.stage > 0) a->present.part_next = stage_parts(a, a->pb.stage - 1) - 1;
    playback_prev(&a->pb);
}

void app_toggle_projector(App *a)
{
    presenting_toggle_projector(&a->present, &a->v);
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
    case KEY_ACT_PROJECTOR: app_toggle_projector(a); break;
    case KEY_ACT_FIRST: playback_goto(&a->pb, 0, false); break;
    case KEY_ACT_LAST: playback_goto(&a->pb, a->session->trace.n - 1, false); break;
    case KEY_ACT_PLAY: playback_toggle(&a->pb); break;
    case KEY_ACT_HEAD_NEXT: set_head(a, a->v.head + 1); break;
    case KEY_ACT_MODEL_VIEW: // the stage's panels → the model view → the head view → the panels
        a->v.kind = viewkind_of(a->v.kind)->next;
        break;
    case KEY_ACT_TEXT: app_text_open(a); break;
    case KEY_ACT_TRAIN: app_train_toggle(a); break;
    case KEY_ACT_TRAIN_STEP: app_train_show_step(a); break;
    case KEY_ACT_COMPARE_NEXT: app_compare_step(a, 1); break;
    case KEY_ACT_COMPARE_PREV: app_compare_step(a, -1); break;
    case KEY_ACT_COMPARE_MENU: app_compare_menu(a); break;
    case KEY_ACT_BACKWARD: app_toggle_backward(a); break;
    case KEY_ACT_CKPT_NEXT: case KEY_ACT_CKPT_PREV: { // the training slider: the next / previous checkpoint
        const Lesson *ls = &a->session->lesson;
        int k = ls->checkpoint < 0 ? ls->n_checkpoints - 1 : ls->checkpoint; // ("weights": after the last)
        if (ls->checkpoint < 0 && act == KEY_ACT_CKPT_NEXT) break;
        app_set_checkpoint(a, act == KEY_ACT_CKPT_NEXT ? k + 1 : ls->checkpoint < 0 ? k : k - 1);
        break;
    }
    case KEY_ACT_WARMER: case KEY_ACT_COOLER: step_temperature(a, act == KEY_ACT_WARMER ? 1 : -1); break;
    case KEY_ACT_TOP_K: case KEY_ACT_TOP_P: step_sampling(a, act == KEY_ACT_TOP_K); break;
    case KEY_ACT_GENERATE: case KEY_ACT_GENERATE_DRAW: generate(a, act == KEY_ACT_GENERATE_DRAW); break;
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
        bool fs = (SDL_GetWindowFlags(a->screen.win) & SDL_WINDOW_FULLSCREEN_DESKTOP) != 0;
        SDL_SetWindowFullscreen(a->screen.win, fs ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP);
        break;
    }
    case KEY_ACT_SAVE: save_frame(a); break;
    case KEY_ACT_EXPORT: { // the formats, then a digit
        ExportFrom from = app_export_from(a);
        export_ui_ask(&a->exp, &from, &a->toast);
        break;
    }
    case KEY_ACT_ZOOM_IN: zoom_by(a, 1.5f); break;
    case KEY_ACT_ZOOM_OUT: zoom_by(a, 1.0f / 1.5f); break;
    case KEY_ACT_ZERO:
        if (!step_digit(a, 0)) view_reset_zoom(&a->v); // 0 alone: the whole heatmap again
        break;
    case KEY_ACT_DIGIT: step_digit(a, (int)(sym - SDLK_0)); break; // (its row binds "1" … "9" only)
    case KEY_ACT_LANG: app_lessons_switch_lang(a); break;
    case KEY_ACT_LASER: a->present.tools.laser = !a->present.tools.laser; break; // the laser dot
    case KEY_ACT_SPOTLIGHT: a->present.tools.spotlight = !a->present.tools.spotlight; break;
    case KEY_ACT_HOLD: playback_hold(&a->pb, !a->pb.held); break; // pause inside the transition / go on
    case KEY_ACT_LOOP_NEXT: step_loop(a, 1); break;
    case KEY_ACT_LOOP_PREV: step_loop(a, -1); break;
    case KEY_ACT_FRAME_BACK: playback_step_frame(&a->pb, -1); break; // the transition, frame by frame
    case KEY_ACT_FRAME_FORWARD: playback_step_frame(&a->pb, 1); break;
    case KEY_ACT_CLEAR_PINS: tools_clear(&a->present.tools); break;
    case KEY_ACT_OPEN: app_lessons_open_picker(a); break;
    case KEY_ACT_PRESENT: app_present_from_start(a); break;
    case KEY_ACT_BLACK: // black screen, as in presentation software
        a->present.black = !a->present.black;
        if (a->present.black) app_toast(a, "app.black", NULL);
        else a->toast.left = 0.0;
        break;
    case KEY_ACT_PAN:   // (taken before the modes: on_key)
    case KEY_ACT_CURSOR:
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

// Esc while an export runs: it stops (nothing kept); other keys work meanwhile.
static bool mode_export_running(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    (void)act;
    if (!a->exp.job || k->keysym.sym != SDLK_ESCAPE || (k->keysym.mod & (KMOD_CTRL | KMOD_SHIFT | KMOD_ALT | KMOD_GUI)))
        return false;
    export_ui_stop(&a->exp, a->v.lang, &a->toast);
    return true;
}

// After E: the next key picks the format.
static bool mode_export_choice(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    (void)act;
    if (!a->exp.choose || is_shift(k->keysym.sym)) return false;
    ExportFrom from = app_export_from(a);
    export_ui_choose_key(&a->exp, k->keysym.sym, &from, &a->toast);
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
    app_study_after(a);
    if (used) return true;
    if (act == KEY_ACT_STUDY) {
        app_toggle_study(a);
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
    app_toggle_study(a);
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

// Training running (R): Space and Esc pause it (app_train.c).
static bool mode_train(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    return app_train_key(a, k->keysym.sym, act == KEY_ACT_TRAIN_STEP);
}


// The cell cursor (Y, not while a value is typed): while on, the arrows move it, Tab /
// Shift+Tab change panel, Y or Esc leave; every other key does what it always does.
static bool mode_cursor(App *a, const SDL_KeyboardEvent *k, KeyAction act)
{
    if (act == KEY_ACT_CURSOR && !a->lab.typing) {
        if (a->pointer.cell.on) a->pointer.cell.on = false;
        else if (cursor_start(&a->pointer.cell, app_layout(a))) {
            lab_deselect(&a->lab);
            app_toast(a, "app.cursor_on", NULL);
        }
        return true;
    }
    if (!a->pointer.cell.on) return false;
    const Layout *L = app_layout(a);
    const SDL_Keycode sym = k->keysym.sym;
    const bool plain = !(k->keysym.mod & (KMOD_CTRL | KMOD_SHIFT | KMOD_ALT | KMOD_GUI));
    if (plain && (sym == SDLK_LEFT || sym == SDLK_RIGHT || sym == SDLK_UP || sym == SDLK_DOWN)) {
        cursor_move(&a->pointer.cell, L, sym == SDLK_UP ? -1 : sym == SDLK_DOWN ? 1 : 0,
                    sym == SDLK_LEFT ? -1 : sym == SDLK_RIGHT ? 1 : 0);
        return true;
    }
    if (sym == SDLK_TAB && !(k->keysym.mod & (KMOD_CTRL | KMOD_ALT | KMOD_GUI))) {
        cursor_next_panel(&a->pointer.cell, L, (k->keysym.mod & KMOD_SHIFT) ? -1 : 1);
        return true;
    }
    if (sym == SDLK_ESCAPE && plain) {
        a->pointer.cell.on = false;
        return true;
    }
    return false;
}

static const KeyMode KEY_MODES[] = {mode_quit_ask,      mode_text,          mode_pan,    mode_help,
                                    mode_export_running, mode_export_choice, mode_open_help, mode_cursor,
                                    mode_train,         mode_study,         mode_enter_study, mode_lab};

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
        a->pointer.drag = DRAG_SCRUB;
        playback_scrub(&a->pb, st.w > 0 ? (float)(x - st.x) / (float)st.w : 0.0f);
        return true;
    }
    if (a->v.loop >= 0 && a->ov.loop_steps > 0) {
        a->pointer.drag = DRAG_LOOP;
        a->v.loop = overlay_loop_step_at(Lp, a->ov.loop_steps, x);
        return true;
    }
    return false;
}

// The pointer moved to window coordinates (wx, wy) with the left button held: what it
// drags follows.
static void drag_to(App *a, int wx, int wy)
{
    if (a->pointer.drag == DRAG_NONE) return;
    int x, y, w, h;
    app_to_output(a, wx, wy, &x, &y);
    switch (a->pointer.drag) {
    case DRAG_SCRUB: { // the scrub bar's knob: the transition held there
        Rect sb, st;
        overlay_scrub_rect(app_layout(a), &sb, &st);
        playback_scrub(&a->pb, st.w > 0 ? (float)(x - st.x) / (float)st.w : 0.0f);
        break;
    }
    case DRAG_LOOP: a->v.loop = overlay_loop_step_at(app_layout(a), a->ov.loop_steps, x); break; // the step under it
    case DRAG_PIN: // a pinned tooltip's box follows the pointer (X may have cleared it meanwhile)
        app_output_size(a, &w, &h);
        tools_drag(&a->present.tools, x, y, w, h);
        break;
    case DRAG_LAB: // a press on a value: dragging scrubs it (unless the selection went meanwhile)
        if (!a->lab.press) break;
        lab_begin(a);
        lab_drag(&a->lab, a->session, y, (SDL_GetModState() & KMOD_SHIFT) != 0, a->v.lang);
        lab_after(a);
        break;
    case DRAG_PAN: // the zoomed heatmaps follow the pointer
        layout_pan(&a->v, app_layout(a), x - a->pointer.drag_x, y - a->pointer.drag_y);
        a->pointer.drag_x = x, a->pointer.drag_y = y;
        break;
    case DRAG_NONE: break;
    }
}

void app_handle_event(App *a, const SDL_Event *e)
{
    if (presenting_event(&a->present, e)) return; // its mouse and window events; its keys are ours
    if (e->type == SDL_WINDOWEVENT && e->window.event == SDL_WINDOWEVENT_CLOSE) { // the audience's
        app_request_quit(a);
        return;
    }
    if (bar_press(a, e)) return; // (drawn over the buttons of the status line: before them)
    const AppPick menu = app_compare_event(a, e); // (the compare menu, when open)
    if (menu == APP_PICK_LANG) app_lessons_switch_lang(a);
    if (menu != APP_PICK_NONE) return;
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
        a->pointer.in = true;
        a->pointer.wx = e->motion.x, a->pointer.wy = e->motion.y;
        drag_to(a, e->motion.x, e->motion.y);
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
            if (tools_press_box(&a->present.tools, a->v.stage, x, y)) {
                a->pointer.drag = DRAG_PIN;
                break;
            }
            if ((SDL_GetModState() & KMOD_CTRL) && tools_toggle_pin(&a->present.tools, Lp, a->v.stage, x, y)) break;
            bool used = false;
            if (study_button_rect(Lp, &stb) && rect_contains(stb, x, y)) {
                app_toggle_study(a);
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
                if (a->lab.press) a->pointer.drag = DRAG_LAB;
            }
            if (used) {
            } else if (a->v.zoom > 1.0f && layout_hit_panel(app_layout(a), x, y) >= 0) {
                a->pointer.drag = DRAG_PAN;
                a->pointer.drag_x = x, a->pointer.drag_y = y;
            } else if (!tools_toggle_pin(&a->present.tools, app_layout(a), a->v.stage, x, y)) { // a cell the lab
                on_click(a, e->button.x, e->button.y);                                     // does not edit: pinned
            }
        }
        break;
    case SDL_MOUSEBUTTONUP:
        if (e->button.button == SDL_BUTTON_LEFT)
            a->pointer.drag = DRAG_NONE, lab_release(&a->lab), tools_release(&a->present.tools);
        break;
    case SDL_MOUSEWHEEL: {
        if (a->ov.help) break;
        int dy = e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? -e->wheel.y : e->wheel.y;
        if (dy != 0) zoom_by(a, powf(1.25f, (float)dy));
        break;
    }
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_LEAVE) a->pointer.in = false;
        // a new size: the textures of the old one leave the caches as they are replaced;
        // give their pages back rather than keeping the largest size's footprint
        if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED) a->loop.trim_pending = true;
        break;
    default: break;
    }
}
