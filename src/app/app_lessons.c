// app_lessons.c — the lesson on screen: the window's language (L), the lesson picker (O,
// the "Lessons…" button), opening lessons (the picker, a file dropped on the window), what
// the window reads the lesson file again for (a language model's input typed in, I; a
// checkpoint of its training, U, the loss curve), and watching the session for edits.
#include "app_train.h"
#include "app_lessons.h"

#include "app_compare.h"
#include "app_picker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "i18n.h"
#include "scene.h"
#include "user_dir.h"

void app_lessons_set_title(App *a)
{
    char title[600], t[LESSON_MAX_TEXT + 64];
    const char *args[] = {session_title(a->session, a->v.lang, t, sizeof t)};
    i18n_fmt(title, sizeof title, a->v.lang, "app.title", 1, args);
    SDL_SetWindowTitle(a->screen.win, title);
}

// L: English ⇄ 中文. Every string is looked up per frame, so only the window
// title needs setting; the fonts draw both languages (text.h).
void app_lessons_switch_lang(App *a)
{
    Lang next = a->v.lang == LANG_ZH ? LANG_EN : LANG_ZH;
    if (next == LANG_ZH && !fonts_have_cjk(a->screen.fonts) && app_fetch_font && app_fetch_font()) {
        app_toast(a, "app.loading_font", NULL); // (the browser: it arrives, then app_fonts_reload)
        return;
    }
    if (fonts_usable_lang(a->screen.fonts, next, stderr) != next) {
        app_toast(a, "app.no_cjk_font", NULL);
        return;
    }
    a->v.lang = next;
    study_ui_relang(a->study, a->session, next, a->pb.stage);
    app_lessons_set_title(a);
    presenter_set_lang(a->present.pres, next);
    app_toast(a, "app.lang", NULL);
}

void app_checkpoint_before(App *a)
{
    session_destroy(a->lessons.ckpt_before);
    a->lessons.ckpt_before = session_checkpoint_before(a->session);
    a->v.ckpt_prev = a->lessons.ckpt_before ? &a->lessons.ckpt_before->trace : NULL;
}

void app_replace_session(App *a, Session *s, bool keep_place)
{
    app_train_stop(a); // (trained weights not saved: saved first)
    export_ui_complete(&a->exp, a->v.lang, &a->toast); // it borrows the session about to be destroyed
    lab_forget(&a->lab);
    bool studying = a->study->st.on;
    study_ui_end(a->study, a->session, a->pb.stage); // the old lesson's answers are kept
    session_destroy(a->session);
    a->session = s;
    a->seen.session = s, a->seen.version = s->version; // a new lesson starts at its first stage
    a->quit.saved_session = s, a->quit.saved_version = s->version; // (its edits: none yet, or the ones asked for)
    a->seen.title_edited = session_edited(s);
    // playback and view start over (or stay where they were: the same lesson, another text);
    // language, palette, numbers and speed stay
    float speed = a->pb.speed;
    int stage = a->pb.stage;
    View old = a->v;
    playback_init(&a->pb, a->session->trace.n);
    playback_set_speed(&a->pb, speed);
    view_init(&a->v, &a->session->lesson, old.lang);
    a->v.palette = old.palette, a->v.show_values = old.show_values, a->v.prob_scale = old.prob_scale;
    a->v.measure = old.measure, a->v.projector = old.projector;
    app_checkpoint_before(a); // at a checkpoint: the one before, for the narration's "since step …"
    if (keep_place && stage < a->session->trace.n) {
        playback_goto(&a->pb, stage, false);
        a->v.stage = stage, a->v.head = old.head, a->v.kind = old.kind;
        a->v.batch = old.batch < a->session->trace.batch ? old.batch : 0;
    }
    fonts_flush(a->screen.fonts); // cached texts of the old lesson (tokens, title, narration)
    heatmap_cache_flush(a->screen.heatmaps); // and its heatmap images
    presenter_flush(a->present.pres);         // the presenter window's too
    tools_clear(&a->present.tools);           // pins name cells of the old lesson's stages
    a->lessons.picker.open = false;
    app_lessons_set_title(a);
    if (studying) playback_goto(&a->pb, study_ui_begin(a->study, a->session, a->v.lang, 0), false); // resumes
}

// The name a lesson at path is known by: its title as the picker lists it (its folder's
// manifest's, for one the page has not fetched), else its file name.
static const char *known_as(const App *a, const char *path, char *out, size_t n)
{
    char dir[SESSION_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) return path;
    *slash = '\0';
    Picker scan;
    picker_init(&scan);
    const char *dirs[] = {dir};
    picker_scan(&scan, dirs, 1, NULL);
    snprintf(out, n, "%s", slash + 1);
    for (int i = 0; i < scan.n; i++)
        if (strcmp(scan.items[i].name, slash + 1) == 0) snprintf(out, n, "%s", picker_title(&scan.items[i], a->v.lang));
    picker_free(&scan);
    return out;
}

// The page: a lesson not in its files yet (a shipped one, listed by the manifest) is fetched
// (app_fetch_lesson); "Downloading…" until the page opens it. False: not fetched (it is here,
// or nothing fetches): opened as a file.
static bool fetch_lesson(App *a, const char *path)
{
    struct stat st;
    if (!app_fetch_lesson || stat(path, &st) == 0 || errno != ENOENT || !app_fetch_lesson(path)) return false;
    char name[LESSON_MAX_TEXT];
    const char *args[] = {known_as(a, path, name, sizeof name)};
    toast_say(&a->toast, a->v.lang, "app.loading_lesson", 1, args, ERROR_TOAST_SECONDS);
    a->lessons.picker.open = false;
    return true;
}

void app_lessons_fetch_failed(App *a, const char *path, int status, const char *why)
{
    cli_error(stderr, "%.400s: could not be downloaded: %.200s", path, why ? why : "");
    char code[16];
    snprintf(code, sizeof code, "%d", status);
    char name[LESSON_MAX_TEXT];
    const char *args[] = {known_as(a, path, name, sizeof name), code};
    toast_say(&a->toast, a->v.lang, status ? "app.lesson_http" : "app.lesson_offline", 2, args, ERROR_TOAST_SECONDS);
}

// Replaces the lesson on screen by the one at path. The old session is
// destroyed only once the new one is complete; on failure the error is shown
// (toast and stderr) and the current lesson keeps running. In the page, a shipped lesson not
// fetched yet: its fetch begins (true), it opens when it arrives.
bool app_lessons_open(App *a, const char *path)
{
    if (fetch_lesson(a, path)) return true; // (the page: opened when it arrives)
    char msg[LESSON_ERR_MAX + 64];
    Session *s = session_create(path, msg, sizeof msg);
    if (!s) goto fail;
    if (s->trace.n == 0) {
        snprintf(msg, sizeof msg, "%.400s: the lesson has no stages", path);
        session_destroy(s);
        goto fail;
    }
    app_replace_session(a, s, false);
    app_toast(a, "app.loaded", lesson_title(&a->session->lesson, a->v.lang));
    return true;
fail:
    cli_error(stderr, "%s", msg);
    app_toast(a, "app.load_failed", msg);
    a->toast.left = ERROR_TOAST_SECONDS;
    return false;
}

// The window watches the session's version: after an edit, undo, redo or reset the
// stage on screen is found again by name (an edit can add or remove the mask stage),
// else the nearest one (playback knows the count), and the title says "(edited)".
void app_watch_session(App *a)
{
    app_compare_watch(a);
    if (a->seen.session == a->session && a->seen.version == a->session->version) return;
    if (a->seen.session != a->session) app_checkpoint_before(a); // (the first lesson)
    a->seen.session = a->session, a->seen.version = a->session->version;
    const Trace *tr = &a->session->trace;
    if (tr->n != a->pb.n_stages || a->pb.stage >= tr->n || strcmp(tr->stages[a->pb.stage].name, a->seen.stage_name) != 0) {
        int i = trace_find(tr, a->seen.stage_name);
        if (i < 0) i = a->pb.stage < tr->n ? a->pb.stage : tr->n - 1;
        if (tr->n != a->pb.n_stages) tools_clear(&a->present.tools); // the stages moved: pins name them by index
        a->pb.n_stages = tr->n;
        a->pb.stage = i;
        a->v.stage = i;
        snprintf(a->seen.stage_name, sizeof a->seen.stage_name, "%s", tr->stages[i].name);
    }
    if (session_edited(a->session) != a->seen.title_edited) { // "(edited)" in the window's title
        a->seen.title_edited = session_edited(a->session);
        app_lessons_set_title(a);
    }
}

// ---- read again: a typed text (I, textbox.c), a checkpoint (U) ---------------------------

bool app_set_checkpoint(App *a, int k)
{
    const Lesson *ls = &a->session->lesson;
    if (ls->n_checkpoints == 0) {
        app_toast(a, "app.no_checkpoints", NULL);
        return false;
    }
    if (k < 0 || k >= ls->n_checkpoints || k == ls->checkpoint) return false; // k: [ / ] past the first or last
    char msg[LESSON_ERR_MAX + 200];
    const SessionEdits ed = {NULL, 0, ls->typed ? a->text.text : NULL, true, k, a->session->backward}; // (a typed text, the backward view stay)
    Session *s = session_open(a->session->path, &ed, msg, sizeof msg);
    if (!s) {
        app_toast(a, "app.load_failed", msg);
        return false;
    }
    app_replace_session(a, s, true);
    a->v.head = scene_stage_head(&a->session->trace, &a->v, -1); // the head its narration names (a glance: kept)
    return true;
}

bool app_toggle_backward(App *a)
{
    char msg[LESSON_ERR_MAX + 200];
    const bool on = !a->session->backward;
    if (!session_set_backward(a->session, on, msg, sizeof msg)) {
        app_toast(a, "app.backward_failed", msg);
        a->toast.left = ERROR_TOAST_SECONDS;
        return false;
    }
    app_watch_session(a); // (the stage on screen found again by name; a gradient's, when off: the last)
    if (on) {
        const int first = trace_find(&a->session->trace, "grad.target");
        if (first >= 0) {
            playback_goto(&a->pb, first, false);
            a->v.stage = first;
            snprintf(a->seen.stage_name, sizeof a->seen.stage_name, "%s", a->session->trace.stages[first].name);
        }
    }
    app_toast(a, on ? "app.backward_on" : "app.backward_off", NULL);
    return true;
}

bool app_text_open(App *a)
{
    if (textbox_open(&a->text, &a->session->lesson, false)) return true;
    app_toast(a, "app.no_text", NULL);
    return false;
}

// The text changed: when it reads, on screen in place of the session before (B's text of a
// compare: B made again).
static void text_changed(App *a, bool changed)
{
    if (changed && a->text.for_b) {
        app_compare_text(a);
        return;
    }
    Session *s = changed ? textbox_read(&a->text, a->session, a->v.lang) : NULL;
    if (s) app_replace_session(a, s, true);
}

bool app_text_key(App *a, const SDL_KeyboardEvent *k)
{
    bool changed, taken = textbox_key(&a->text, k, &changed);
    text_changed(a, changed);
    return taken;
}

bool app_text_input(App *a, const char *utf8)
{
    bool changed, taken = textbox_input(&a->text, utf8, &changed);
    text_changed(a, changed);
    return taken;
}

// O or the button: lists lessons/ (next to the assets: the installed ones after
// make install), the current lesson's directory, --lessons DIR, where Ctrl+S
// saves and $XDG_DATA_HOME/attnviz/lessons (listed once when they are the same).
void app_lessons_open_picker(App *a)
{
    char cur_dir[SESSION_PATH_MAX];
    snprintf(cur_dir, sizeof cur_dir, "%s", a->session->path);
    char *slash = strrchr(cur_dir, '/');
    if (slash) *slash = '\0';
    else snprintf(cur_dir, sizeof cur_dir, ".");
    char saved[1200], user[1200]; // where Ctrl+S puts edited lessons; the user's own lessons
    lab_save_dir(saved, sizeof saved);
    user_data_path("lessons", user, sizeof user); // ("" when there is none: skipped)
    const char *dirs[] = {a->lessons.dir, cur_dir, a->opt->lessons_dir, saved, user};
    picker_scan(&a->lessons.picker, dirs, 5, a->session->path);
    study_ui_load_progress(a->study); // each lesson's score in the study mode
    study_ui_poll(a->study);
    for (int i = 0; i < a->lessons.picker.n; i++) {
        char key[PROGRESS_PATH_MAX];
        PickerItem *it = &a->lessons.picker.items[i];
        progress_key(it->path, key, sizeof key);
        it->studied = progress_score(&a->study->prog, key, &it->study_right, &it->study_answered, &it->study_total);
    }
    a->lessons.picker.open = true;
    PickerLayout pl;
    app_picker_fit(a, &a->lessons.picker, &pl);
}

// Events for the picker and dropped files; true when consumed.
bool app_lessons_event(App *a, const SDL_Event *e)
{
    if (e->type == SDL_DROPFILE) {
        if (e->drop.file) app_lessons_open(a, e->drop.file);
        SDL_free(e->drop.file);
        return true;
    }
    switch (app_picker_event(a, &a->lessons.picker, e, SDLK_o)) {
    case APP_PICK_CHOOSE: {
        char path[1100];
        snprintf(path, sizeof path, "%s", a->lessons.picker.items[a->lessons.picker.sel].path);
        app_lessons_open(a, path); // closes the picker on success; on failure it stays open
        return true;
    }
    case APP_PICK_LANG: app_lessons_switch_lang(a); return true;
    case APP_PICK_TAKEN: return true;
    case APP_PICK_NONE: break;
    }
    if (e->type == SDL_MOUSEBUTTONDOWN && e->button.button == SDL_BUTTON_LEFT && !a->ov.help) {
        int x, y;
        app_to_output(a, e->button.x, e->button.y, &x, &y);
        Rect b;
        if (picker_button_rect(app_layout(a), &b) && rect_contains(b, x, y)) {
            app_lessons_open_picker(a);
            return true;
        }
    }
    return false;
}
