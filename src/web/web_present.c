// web_present.c — the presenter as a second browser window (issue 40, 5; the page's F5):
// what presenter.html shows of the audience page — the stage on screen and the next one,
// the narration, the teacher's notes, the step list and its own words — as the desktop's
// presenter window (presenter.c) writes them, in the window's language. The page
// (web_present.js) sends it over a BroadcastChannel after each drawn frame; the presenter
// window's keys come back as the window's keys (attnviz_key): either window steps both.
#include <emscripten.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "i18n.h"
#include "json_out.h"
#include "lesson.h"
#include "presenter.h"
#include "scene.h"
#include "session.h"
#include "study.h"
#include "view.h"
#include "web.h"

#define WEB_PRES_TEXT 4400 // a stage's narration (presenter.c's PRES_TEXT_MAX)

static void field(FILE *f, const char *name, const char *value)
{
    fprintf(f, ", \"%s\": ", name);
    json_write_string(f, value ? value : "");
}

// The presenter page's own words (pres.*, pres.web_*) in lang.
static void write_words(FILE *f, Lang lang)
{
    static const char *const keys[] = {"pres.title", "pres.steps", "pres.narration", "pres.notes", "pres.no_notes",
                                       "pres.time", "pres.black", "pres.web_waiting", "pres.web_closed",
                                       "pres.web_reopen", "pres.web_prev", "pres.web_next", "pres.web_head_prev",
                                       "pres.web_head_next", "pres.web_head", "pres.web_lang", "pres.web_restart",
                                       "pres.web_study", "pres.web_keys", "pres.web_controls"};
    fputs(", \"words\": {", f);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        fputs(i ? ", " : "", f);
        json_write_string(f, keys[i] + 5); // (without "pres.")
        fputs(": ", f);
        json_write_string(f, i18n_get(lang, keys[i]));
    }
    fputs("}", f);
}

// The step list as the desktop's (stages of one step listed once): [{label, on, past}].
static void write_steps(FILE *f, const Trace *tr, const View *v, int *k, int *n_steps)
{
    char key[64];
    StepId cur = tr->stages[v->stage].step;
    bool past = true;
    *k = *n_steps = 0;
    fputs(", \"steps\": [", f);
    for (int i = 0; i < tr->n; i++) {
        if (i > 0 && tr->stages[i].step == tr->stages[i - 1].step) continue;
        StepId id = tr->stages[i].step;
        if (id == cur) past = false;
        if (i <= v->stage) *k = *n_steps + 1;
        fputs((*n_steps)++ ? ", {\"label\": " : "{\"label\": ", f);
        json_write_string(f, i18n_get(v->lang, scene_step_key(tr, id, key, sizeof key)));
        fprintf(f, ", \"on\": %s, \"past\": %s}", id == cur ? "true" : "false", past && id != cur ? "true" : "false");
    }
    fputs("]", f);
}

static void write_presenter(FILE *f, App *app)
{
    const AppStatus st = app_status(app);
    const Trace *tr = &st.session->trace;
    View v = *st.view;
    v.stage = st.stage;
    const Lang lang = v.lang;
    static char text[WEB_PRES_TEXT], buf[WEB_PRES_TEXT + 200];
    char key[64], n1[16], n2[16];
    fprintf(f, "{\"lang\": \"%s\", \"index\": %d, \"stages\": %d, \"stage\": \"%s\", \"head\": %d, \"heads\": %d, "
               "\"batch\": %d, \"study\": %s",
            lang == LANG_ZH ? "zh" : "en", v.stage, tr->n, tr->stages[v.stage].name, v.head, tr->n_heads, v.batch,
            st.study->on ? "true" : "false");
    field(f, "lesson", lesson_title(&st.session->lesson, lang));
    int k, n_steps;
    write_steps(f, tr, &v, &k, &n_steps);
    snprintf(n1, sizeof n1, "%d", k), snprintf(n2, sizeof n2, "%d", n_steps);
    const char *na[] = {n1, n2, i18n_get(lang, scene_step_key(tr, tr->stages[v.stage].step, key, sizeof key))};
    i18n_fmt(buf, sizeof buf, lang, "pres.now", 3, na);
    field(f, "now", buf);
    field(f, "narration", scene_narration(tr, &v, text, sizeof text));
    field(f, "notes", presenter_notes(tr, &v));
    // the next stage, settled, on the head its narration is about (as playback shows it);
    // none while studying (it would give the answers away, as the desktop refuses)
    View nv = v;
    nv.stage = v.stage + 1, nv.part = 0, nv.anim = 1.0f, nv.playing = false;
    bool has_next = nv.stage < tr->n && !st.study->on;
    if (has_next) {
        nv.head = scene_stage_head(tr, &nv, -1);
        const char *xa[] = {i18n_get(lang, scene_step_key(tr, tr->stages[nv.stage].step, key, sizeof key))};
        i18n_fmt(buf, sizeof buf, lang, "pres.next", 1, xa);
    }
    field(f, "next", has_next ? buf : v.stage + 1 >= tr->n ? i18n_get(lang, "pres.end") : "");
    field(f, "next_narration", has_next ? scene_narration(tr, &nv, text, sizeof text) : "");
    write_words(f, lang);
    fputs("}", f);
}

// JSON for presenter.html (web.h); NULL before the window opens.
EMSCRIPTEN_KEEPALIVE char *attnviz_presenter(void)
{
    App *app = web_app();
    if (!app) return NULL;
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    if (!f) return NULL;
    write_presenter(f, app);
    fclose(f);
    return out;
}
