// app_compare.c — the compare view in the window (see app_compare.h).
#include "app_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_picker.h"
#include "cmpmenu.h"
#include "compare.h"
#include "expview.h"
#include "i18n.h"
#include "typed.h"

// The experiment's view closed (its numbers freed).
static void experiment_off(App *a)
{
    CompareUI *c = &a->ex.cmp;
    if (!c->exp) return;
    expview_free(c->exp);
    free(c->exp);
    c->exp = NULL, a->v.exp = NULL;
    if (a->v.kind >= VIEW_ABLATION) a->v.kind = VIEW_PANELS;
    a->layout.valid = false; // (its panels pointed into it)
}

// The menu's "experiment:NAME": its numbers computed for the lesson on screen (patching: the
// lesson's own text clean, the text typed with I corrupted) and its view opened; false with a toast.
static bool open_experiment(App *a, const char *name)
{
    char err[LESSON_ERR_MAX + 400];
    ExpView *x = malloc(sizeof *x);
    Session *clean = NULL;
    bool ok = x != NULL;
    if (!ok) snprintf(err, sizeof err, "out of memory");
    const bool patching = ok && strcmp(name, "patching") == 0;
    if (patching) { // (the file's text, at the checkpoint on screen)
        const Lesson *ls = &a->session->lesson;
        SessionEdits ed = {.has_checkpoint = ls->n_checkpoints > 0, .checkpoint = ls->checkpoint};
        ok = (clean = session_open(a->session->path, &ed, err, sizeof err)) != NULL;
    }
    ok = ok && expview_open(x, name, patching ? clean : a->session, patching ? a->text.text : NULL, err, sizeof err);
    session_destroy(clean);
    if (!ok) {
        free(x);
        app_toast(a, "app.experiment_failed", err);
        return false;
    }
    app_compare_off(a);
    experiment_off(a);
    x->index_cols = patching; // (the columns: the clean text's positions; the tokens on screen are the corrupted)
    a->ex.cmp.exp = x, a->ex.cmp.session = a->session, a->ex.cmp.version = a->session->version;
    a->v.kind = x->kind, a->v.exp = x;
    a->layout.valid = false;
    return true;
}

void app_compare_off(App *a)
{
    CompareUI *c = &a->ex.cmp;
    experiment_off(a);
    compare_free(&c->cmp);
    session_destroy(c->b);
    c->b = NULL, c->session = NULL;
    a->v.cmp = NULL, a->v.cmp_b = NULL, a->v.cmp_spec = NULL;
    if (a->v.kind == VIEW_COMPARE) a->v.kind = VIEW_PANELS;
    a->layout.valid = false; // (its panels pointed into B)
}

// B = the lesson on screen changed by spec (choice: the head of Ctrl+D's, -1: the menu's), on
// screen; false with one line in err (the compare on screen as it was).
static bool make_b(App *a, const char *spec, int choice, char *err, size_t n)
{
    const Trace *tr = &a->session->trace;
    CompareSpec sp;
    Session *b = NULL;
    Compare cmp = {0};
    if (!compare_parse_spec(spec, &sp, err, n) || !(b = compare_open_b(a->session, NULL, &sp, err, n)) ||
        !compare_traces(tr, &b->trace, &cmp, err, n)) {
        session_destroy(b);
        return false;
    }
    CompareUI *c = &a->ex.cmp;
    char keep[sizeof c->spec];
    snprintf(keep, sizeof keep, "%s", spec); // (spec may be c->spec)
    app_compare_off(a);
    c->b = b, c->cmp = cmp, c->choice = choice, c->session = a->session, c->version = a->session->version;
    snprintf(c->spec, sizeof c->spec, "%s", keep);
    a->v.kind = VIEW_COMPARE, a->v.cmp = &c->cmp, a->v.cmp_b = &b->trace, a->v.cmp_spec = c->spec;
    return true;
}

// As make_b; when B cannot be made, compare off with a toast saying why.
static bool open_spec(App *a, const char *spec, int choice)
{
    char err[LESSON_ERR_MAX + 1400];
    if (make_b(a, spec, choice, err, sizeof err)) return true;
    app_compare_off(a);
    app_toast(a, "app.compare_failed", err);
    return false;
}

// B = the lesson on screen with head k (layer k / H, head k % H) ablated.
static bool open_choice(App *a, int k)
{
    const Trace *tr = &a->session->trace;
    const int H = tr->n_heads;
    char spec[48];
    if (tr->n_layers > 1)
        snprintf(spec, sizeof spec, "ablate:l%d.h%d", k / H, k % H);
    else
        snprintf(spec, sizeof spec, "ablate:h%d", k % H);
    return open_spec(a, spec, k);
}

void app_compare_step(App *a, int dir)
{
    const Trace *tr = &a->session->trace;
    const int n = (tr->n_layers > 1 ? tr->n_layers : 1) * tr->n_heads;
    if (a->v.delta) { // (the lab's Δ view shows differences already)
        app_toast(a, "app.compare_delta", NULL);
        return;
    }
    const int k = a->ex.cmp.b ? a->ex.cmp.choice + dir : dir > 0 ? 0 : n - 1;
    if (k < 0 || k >= n) {
        app_compare_off(a);
        app_toast(a, "app.compare_off", NULL);
        return;
    }
    if (open_choice(a, k)) app_toast(a, "app.compare_b", a->ex.cmp.spec);
}

void app_compare_watch(App *a)
{
    CompareUI *c = &a->ex.cmp;
    if (c->exp && (c->session != a->session || c->version != a->session->version)) { // (computed for another)
        experiment_off(a);
        return;
    }
    if (!c->b || (c->session == a->session && c->version == a->session->version)) return;
    if (c->session != a->session) { // another lesson
        app_compare_off(a);
        return;
    }
    // the same B, of the lesson as it is now
    if (c->choice >= 0) open_choice(a, c->choice);
    else open_spec(a, c->spec, -1);
}

void app_compare_menu(App *a)
{
    Picker *m = &a->ex.cmp.menu;
    if (a->v.delta) { // (as Ctrl+D)
        app_toast(a, "app.compare_delta", NULL);
        return;
    }
    a->lessons.picker.open = false;
    if (cmpmenu_fill(m, a->session, a->lessons.dir) == 0) {
        app_toast(a, "app.compare_menu_empty", NULL);
        return;
    }
    for (int i = 0; i < m->n; i++) // the B on screen, marked and selected
        if (a->ex.cmp.b && !strcmp(m->items[i].path, a->ex.cmp.spec)) m->current = m->sel = i;
    m->open = true;
}

void app_compare_text(App *a)
{
    TextBox *t = &a->text;
    const Lesson *ls = &a->session->lesson;
    // what a student can fix in plain words of the window's language, as I says it; B on screen
    // stays until a text reads
    if (typed_text_problem(ls, t->text, a->v.lang, t->error, sizeof t->error)) return;
    char spec[sizeof a->ex.cmp.spec], err[LESSON_ERR_MAX + 1400];
    if ((size_t)snprintf(spec, sizeof spec, "%s%s", CMPMENU_TEXT, t->text) >= sizeof spec) return; // (the box is shorter)
    if (make_b(a, spec, -1, err, sizeof err)) {
        t->error[0] = '\0';
        return;
    }
    Session *b = session_clone_text(a->session, t->text, err, sizeof err);
    if (b && b->lesson.len_q != ls->len_q) { // (the count of tokens: said in the window's language)
        char nb[16], na[16];
        snprintf(nb, sizeof nb, "%d", b->lesson.len_q), snprintf(na, sizeof na, "%d", ls->len_q);
        const char *args[] = {nb, na};
        i18n_fmt(t->error, sizeof t->error, a->v.lang, "app.compare_text_len", 2, args);
    } else { // (anything else: the rules' message, without the option's name)
        char said[sizeof spec + 40];
        snprintf(said, sizeof said, "attnviz: --compare %s: ", spec);
        snprintf(t->error, sizeof t->error, "%.*s", (int)sizeof t->error - 1, strncmp(err, said, strlen(said)) ? err : err + strlen(said));
    }
    session_destroy(b);
}

AppPick app_compare_event(App *a, const SDL_Event *e)
{
    Picker *m = &a->ex.cmp.menu;
    const AppPick r = app_picker_event(a, m, e, SDLK_d);
    if (r == APP_PICK_CHOOSE) {
        char spec[sizeof a->ex.cmp.spec];
        snprintf(spec, sizeof spec, "%s", m->items[m->sel].path);
        m->open = false;
        if (!strcmp(spec, CMPMENU_TEXT)) {
            textbox_open(&a->text, &a->session->lesson, true); // (B's text typed)
        } else if (strncmp(spec, "experiment:", 11) == 0) {
            if (open_experiment(a, spec + 11)) app_toast(a, "app.experiment_on", m->items[m->sel].title[a->v.lang]);
        } else if (open_spec(a, spec, -1)) {
            app_toast(a, "app.compare_b", a->ex.cmp.spec);
        }
    }
    return r;
}
