// study_ui.c — the study mode in the window (see study_ui.h).
#include "study_ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "i18n.h"
#include "recipe.h"
#include "utf8.h"

StudyUI *study_ui_create(void)
{
    StudyUI *u = calloc(1, sizeof *u);
    if (u) u->shown_focus = u->shown_stage = -1;
    return u;
}

void study_ui_destroy(StudyUI *u)
{
    if (!u) return;
    progress_saver_stop(u->saver); // the answers queued are written first
    progress_free(&u->prog);
    free(u);
}

static void say(StudyUI *u, bool error, const char *text)
{
    snprintf(u->msg, sizeof u->msg, "%s", text);
    u->msg_error = error;
    u->has_msg = true;
}

void study_ui_load_progress(StudyUI *u)
{
    if (u->prog_loaded) return;
    char path[PROGRESS_PATH_MAX], note[STUDY_MSG_MAX];
    if (!progress_default_path(path, sizeof path)) {
        memset(&u->prog, 0, sizeof u->prog); // path empty: nothing is read or written
        u->prog_loaded = true;
        say(u, true, "attnviz: no place for the study progress: set XDG_DATA_HOME or HOME to an absolute path");
        fprintf(stderr, "%s\n", u->msg);
        return;
    }
    if (!progress_load(&u->prog, path, note, sizeof note)) {
        say(u, true, "attnviz: out of memory reading the study progress");
        return;
    }
    u->prog_loaded = true;
    if (note[0]) {
        fprintf(stderr, "attnviz: %s\n", note);
        say(u, true, note);
    }
}

// The lesson's key in the progress, "" when its answers are not kept (edited: the
// questions are about numbers no file holds).
static void lesson_key(StudyUI *u, const Session *s)
{
    if (session_edited(s)) u->key[0] = '\0';
    else progress_key(s->path, u->key, sizeof u->key);
}

int study_ui_begin(StudyUI *u, const Session *s, Lang lang, int stage)
{
    study_ui_load_progress(u);
    u->lang = lang;
    u->too_long = false;
    progress_saver_wait(u->saver); // (switching lessons: the answers just given are in u->prog)
    study_ui_poll(u);
    lesson_key(u, s);
    char last[sizeof u->st.q[0].id] = ""; // T off and on again: the feedback last read reopens
    if (u->st.last >= 0 && u->st.last < u->st.n && !strcmp(u->key, u->last_key))
        snprintf(last, sizeof last, "%s", u->st.q[u->st.last].id);
    snprintf(u->last_key, sizeof u->last_key, "%s", u->key);
    memset(u->st.a, 0, sizeof u->st.a);
    u->st.n = 0;
    study_load(&u->st, &s->trace, &s->lesson, lang, !session_edited(s), stage);
    u->st.on = true;
    u->done_told = false;
    u->shown_focus = u->shown_stage = -1;
    int resume = stage;
    if (u->key[0]) {
        const char *name = progress_restore(&u->prog, u->key, &u->st);
        int i = name ? trace_find(&s->trace, name) : -1;
        if (i >= 0) resume = i;
    }
    for (int i = 0; last[0] && i < u->st.n; i++)
        if (!strcmp(u->st.q[i].id, last) && u->st.a[i].answered) u->st.last = i;
    int right, answered;
    study_score(&u->st, &right, &answered);
    u->done_told = answered == u->st.n;
    char a[16], t[16], line[300];
    snprintf(a, sizeof a, "%d", answered);
    snprintf(t, sizeof t, "%d", u->st.n);
    const char *args[] = {a, t};
    i18n_fmt(line, sizeof line, lang, u->key[0] ? "study.on" : "study.not_saved", 2, args);
    if (!u->has_msg) say(u, false, line); // a corrupt progress file's message goes first
    study_enter(&u->st, resume);
    return resume;
}

static void save_failed(StudyUI *u, const char *err)
{
    char line[STUDY_MSG_MAX + 100];
    const char *args[] = {err};
    i18n_fmt(line, sizeof line, LANG_EN, "study.progress_failed", 1, args);
    fprintf(stderr, "attnviz: %s\n", line);
    say(u, true, err);
}

void study_ui_poll(StudyUI *u)
{
    char err[STUDY_MSG_MAX];
    bool failed;
    if (!progress_saver_poll(u->saver, &u->prog, err, sizeof err, &failed)) return;
    if (failed) save_failed(u, err);
    else if (err[0]) { // the file had been spoilt meanwhile: set aside, written anew
        fprintf(stderr, "attnviz: %s\n", err);
        say(u, true, err);
    }
}

void study_ui_save(StudyUI *u, const Session *s, int stage)
{
    if (!u->st.on || !u->key[0] || !u->prog_loaded || !u->prog.path[0]) return; // (not kept: said once)
    const char *name = stage >= 0 && stage < s->trace.n ? s->trace.stages[stage].name : "";
    const char *title = lesson_title(&s->lesson, LANG_EN);
    if (!u->saver) u->saver = progress_saver_start();
    if (u->saver && progress_saver_submit(u->saver, u->prog.path, u->key, &u->st, name, title)) return;
    char err[STUDY_MSG_MAX]; // no thread (out of memory): written here
    err[0] = '\0';
    if (!progress_update(&u->prog, u->key, &u->st, name, title, err, sizeof err)) save_failed(u, err);
    else if (err[0]) fprintf(stderr, "attnviz: %s\n", err), say(u, true, err);
}

void study_ui_end(StudyUI *u, const Session *s, int stage)
{
    if (!u->st.on) return;
    study_ui_save(u, s, stage);
    u->st.on = false;
}

void study_ui_relang(StudyUI *u, const Session *s, Lang lang, int stage)
{
    if (!u->st.on) return;
    int focus = u->st.focus;
    bool hint = u->st.hint;
    char text[STUDY_TEXT_MAX];
    snprintf(text, sizeof text, "%s", u->st.text);
    study_load(&u->st, &s->trace, &s->lesson, lang, !session_edited(s), stage);
    if (focus >= 0 && focus < u->st.n && u->st.q[focus].stage == stage) { // the same list: where it was
        u->st.focus = focus;
        u->st.hint = hint;
        snprintf(u->st.text, sizeof u->st.text, "%s", text);
    }
}

int study_ui_frame(StudyUI *u, const Session *s, int stage, View *v, bool *hold)
{
    *hold = false;
    study_ui_poll(u);
    v->study = u->st.on;
    v->hide_result = false;
    if (!u->st.on) return stage;
    int frontier = study_frontier(&u->st, s->trace.n);
    if (stage > frontier) {
        stage = frontier;
        say(u, false, i18n_get(v->lang, "study.locked"));
    }
    if (stage != u->st.stage) study_enter(&u->st, stage);
    if (u->st.focus != u->shown_focus || stage != u->shown_stage) { // the question's slice on screen
        int b, h;
        study_question_slice(&u->st, &b, &h);
        if (b >= 0 && b < s->trace.batch) v->batch = b;
        if (h >= 0 && h < s->trace.n_heads) v->head = h;
        u->shown_focus = u->st.focus, u->shown_stage = stage;
    }
    *hold = v->hide_result = study_pending(&u->st, stage);
    study_score(&u->st, &v->study_right, &v->study_answered);
    v->study_total = u->st.n;
    return stage;
}

// After an answer: kept in progress.json; once every question is answered, the score.
static void answered(StudyUI *u, const Session *s, Lang lang)
{
    study_ui_save(u, s, u->st.stage);
    int right, done;
    study_score(&u->st, &right, &done);
    if (done == u->st.n && !u->done_told) {
        char r[16], t[16], line[300];
        snprintf(r, sizeof r, "%d", right);
        snprintf(t, sizeof t, "%d", u->st.n);
        const char *args[] = {r, t};
        i18n_fmt(line, sizeof line, lang, "study.done", 2, args);
        say(u, false, line);
        u->done_told = true;
    }
}

// While an answer is typed, the keys of its characters (they arrive as SDL_TEXTINPUT,
// study_ui_text) do nothing else: digits do not jump along the timeline, E (an
// exponent) does not export, X does not clear pins, and Q — in an answer box far more
// likely a slip than a wish to quit (Esc quits) — does nothing. Other letters keep
// their meaning (S saves the frame with the question, L switches the language and
// keeps the typed text…); H, N and T are the study mode's own.
static bool answer_key(SDL_Keycode k)
{
    return (k >= SDLK_0 && k <= SDLK_9) || (k >= SDLK_KP_1 && k <= SDLK_KP_0) || k == SDLK_PERIOD ||
           k == SDLK_KP_PERIOD || k == SDLK_MINUS || k == SDLK_KP_MINUS || k == SDLK_COMMA || k == SDLK_SPACE ||
           k == SDLK_LEFTPAREN || k == SDLK_RIGHTPAREN || k == SDLK_LEFTBRACKET || k == SDLK_RIGHTBRACKET ||
           k == SDLK_KP_MULTIPLY || k == SDLK_PLUS || k == SDLK_EQUALS || k == SDLK_KP_PLUS || k == SDLK_e ||
           k == SDLK_x || k == SDLK_q;
}

bool study_ui_key(StudyUI *u, const Session *s, const SDL_KeyboardEvent *k, int stage, View *v)
{
    Study *st = &u->st;
    u->lang = v->lang;
    if (!st->text[0]) u->too_long = false; // (another question: typing started over)
    if (!st->on) return false;
    // a key right after → (the same frame): the question of the stage it reached
    int f = study_frontier(st, s->trace.n);
    if (stage > f) stage = f;
    if (stage != st->stage) study_enter(st, stage);
    SDL_Keycode sym = k->keysym.sym;
    bool ctrl = (k->keysym.mod & (KMOD_CTRL | KMOD_ALT | KMOD_GUI)) != 0;
    if (ctrl) return false;
    if (study_asking(st)) {
        if (answer_key(sym)) return true;
        size_t n = strlen(st->text);
        switch (sym) {
        case SDLK_BACKSPACE: // one character (− and × are several bytes)
            if (n > 0) n = utf8_floor(st->text, n - 1);
            st->text[n] = '\0';
            st->note[0] = '\0';
            u->too_long = false;
            return true;
        case SDLK_RETURN:
        case SDLK_KP_ENTER:
            if (u->too_long) return true; // the note says why
            if (study_submit(st, v->lang)) answered(u, s, v->lang);
            return true;
        case SDLK_h:
            st->hint = !st->hint;
            return true;
        case SDLK_n:
            study_give_up(st);
            answered(u, s, v->lang);
            return true;
        case SDLK_ESCAPE:
            if (n == 0 && !st->note[0]) return false; // nothing typed: quits, as always
            st->text[0] = '\0';
            st->note[0] = '\0';
            u->too_long = false;
            return true;
        default: return false;
        }
    }
    if (sym == SDLK_UP || sym == SDLK_DOWN) {
        int first = study_stage_questions(st, stage, NULL);
        if (first < 0) return false;
        study_focus_step(st, sym == SDLK_UP ? -1 : 1);
        return true;
    }
    if (sym == SDLK_RETURN || sym == SDLK_KP_ENTER) return study_next(st); // the feedback read: the next question
    if (sym == SDLK_n && recipe_loop_steps(&s->trace, stage) == 0) {
        // nothing to show and no loop to step: said in the study box's key line, which
        // covers nothing (a toast would cover the legend), until the focus or stage moves
        snprintf(st->note, sizeof st->note, "%s", i18n_get(v->lang, "study.n_nothing"));
        return true;
    }
    return false;
}

bool study_ui_text(StudyUI *u, const char *text)
{
    Study *st = &u->st;
    if (!st->on || !study_asking(st)) return false;
    // what answers are written with: digits, signs, separators, "x" / "×" of a shape,
    // "e" of an exponent; a Chinese input method's full-width forms as their ASCII
    static const char *const wide[][2] = {{"０", "0"}, {"１", "1"}, {"２", "2"}, {"３", "3"}, {"４", "4"},
                                          {"５", "5"}, {"６", "6"}, {"７", "7"}, {"８", "8"}, {"９", "9"},
                                          {"，", ","}, {"．", "."}, {"。", "."}, {"－", "-"}, {"（", "("},
                                          {"）", ")"}, {"　", " "}, {"ｘ", "x"}, {"−", "−"}, {"×", "×"}};
    size_t n = strlen(st->text);
    for (const char *c = text; *c;) {
        const char *put = NULL;
        size_t len = 0;
        if (strchr("0123456789.-+,() []xXeE", *c)) put = c, len = 1;
        for (size_t i = 0; i < sizeof wide / sizeof *wide && !put; i++)
            if (strncmp(c, wide[i][0], strlen(wide[i][0])) == 0) put = wide[i][1], len = strlen(wide[i][0]);
        if (!put) { // not part of an answer: ignored (one UTF-8 character)
            c++;
            while (utf8_is_cont((unsigned char)*c)) c++;
            continue;
        }
        size_t plen = put == c ? 1 : strlen(put);
        if (n + plen < sizeof st->text) {
            memcpy(st->text + n, put, plen);
            n += plen;
            st->text[n] = '\0';
        } else { // no room: said, and Enter waits for Backspace (never a cut answer checked)
            u->too_long = true;
        }
        c += len;
    }
    st->note[0] = '\0';
    if (u->too_long) {
        char most[16];
        snprintf(most, sizeof most, "%zu", sizeof st->text - 1);
        const char *args[] = {most};
        i18n_fmt(st->note, sizeof st->note, u->lang, "lab.too_long", 1, args);
    }
    return true;
}

bool study_ui_press(StudyUI *u, const Layout *L, int x, int y)
{
    Study *st = &u->st;
    if (!st->on || !study_asking(st)) return false;
    int p, row, col;
    if (!layout_hit_cell(L, x, y, &p, &row, &col)) return false;
    const PanelSpec *ps = &L->spec[p];
    if (ps->col_axis != AXIS_KEY) return false;
    return study_pick_key(st, row, col);
}

const char *study_ui_take_message(StudyUI *u, bool *error)
{
    if (!u->has_msg) return NULL;
    u->has_msg = false;
    if (error) *error = u->msg_error;
    return u->msg;
}
