// app_train.c — the window's training mode (app_train.h).
#include "app_train.h"

#include <stdio.h>

#include "cli.h"

static double now_ms(void) { return (double)SDL_GetPerformanceCounter() * 1e3 / (double)SDL_GetPerformanceFrequency(); }

// The notice: a one-line error (for ERROR_TOAST_SECONDS), also on stderr.
static void say_error(App *a, const char *msg)
{
    const char *args[] = {msg};
    toast_say(&a->toast, a->v.lang, "train.error", 1, args, ERROR_TOAST_SECONDS);
    cli_error(stderr, "attnviz: %s", msg);
}

// The progress in the notice: running, paused or finished, the step, the loss, the keys.
static void say_progress(App *a)
{
    const Training *t = &a->ex.train;
    const TrainRun *r = &t->run;
    char step[16], total[16], loss[16], held[16], ms[16];
    snprintf(step, sizeof step, "%d", r->step), snprintf(total, sizeof total, "%d", r->total);
    snprintf(loss, sizeof loss, "%.3f", r->step ? (double)r->losses[r->step - 1] : 0.0);
    snprintf(held, sizeof held, "%.3f", r->n_ckpt ? (double)r->ckpt_loss[r->n_ckpt - 1] : 0.0);
    snprintf(ms, sizeof ms, "%.1f", t->step_ms);
    const char *args[] = {step, total, loss, held, ms};
    const char *key = t->running ? "train.running" : r->step >= r->total ? "train.done" : "train.paused";
    toast_say(&a->toast, a->v.lang, key, 5, args, t->running ? 1.0 : TOAST_SECONDS * 2);
}

// The run's checkpoints into the lesson (the header's loss curve), the trace of the new weights.
static bool show(App *a, char *err, size_t n)
{
    Training *t = &a->ex.train;
    Session *s = a->session;
    if (!train_apply(&t->run, &s->lesson, err, n) || !session_refresh(s, err, n)) return false;
    a->lab.gen++; // (the trace to draw changed: the layout and the heatmap images follow)
    t->shown = now_ms();
    return true;
}

// Paused (R, Space, Esc): the weights of this step are a checkpoint (the curve ends there, a save
// holds them) and the stages show their forward pass.
void app_train_pause(App *a)
{
    Training *t = &a->ex.train;
    if (!t->on || !t->running || t->session != a->session) return;
    char msg[LESSON_ERR_MAX + 300];
    t->running = t->show_due = false;
    if (!train_checkpoint(&t->run, &a->session->lesson, NULL, msg, sizeof msg) || !show(a, msg, sizeof msg)) {
        say_error(a, msg);
        return;
    }
    say_progress(a);
}

void app_train_toggle(App *a)
{
    Training *t = &a->ex.train;
    if (t->on && t->session == a->session) {
        if (t->running) {
            app_train_pause(a);
        } else {
            t->running = t->run.step < t->run.total;
            say_progress(a);
        }
        return;
    }
    app_train_begin(a, APP_TRAIN_STEPS);
}

bool app_train_begin(App *a, int steps)
{
    Training *t = &a->ex.train;
    app_train_stop(a);
    char msg[LESSON_ERR_MAX + 300];
    OptimConfig oc;
    optim_parse(&oc, APP_TRAIN_SPEC, "--step", msg, sizeof msg);
    if (!train_start(&t->run, &a->session->lesson, &oc, steps, false, 0, a->session->path, msg, sizeof msg)) {
        say_error(a, msg);
        return false;
    }
    t->on = t->running = true, t->session = a->session, t->show_due = false;
    t->step_ms = t->worst_ms = 0.0;
    if (!train_checkpoint(&t->run, &a->session->lesson, NULL, msg, sizeof msg) || !show(a, msg, sizeof msg)) {
        say_error(a, msg);
        train_free(&t->run);
        t->on = t->running = false;
        return false;
    }
    a->v.kind = VIEW_MODEL; // every layer and head, as they change
    say_progress(a);
    return true;
}

// A running run's frame is a slice of steps or, when the trace is due to follow the weights
// (every APP_TRAIN_SHOW_MS, after a checkpoint), one step and that: a new trace is laid out and
// its heatmaps and narration made again in that frame, so it gets no slice (both in one frame
// were 25–35 ms under load); every frame still takes a step (the run's pace in frames).
void app_train_frame(App *a)
{
    Training *t = &a->ex.train;
    if (!t->on || !t->running) return;
    char msg[LESSON_ERR_MAX + 300];
    TrainRun *r = &t->run;
    Lesson *ls = &a->session->lesson;
    const bool show_now = t->show_due;
    t->show_due = false;
    const double t0 = now_ms();
    bool ok = true;
    do { // whole steps while the next one fits in the slice (one at least)
        const double s0 = now_ms();
        ok = train_step(r, ls, msg, sizeof msg);
        if (ok && train_at_checkpoint(r)) { // (the curve gains a point: shown in this frame or the next)
            ok = train_checkpoint(r, ls, NULL, msg, sizeof msg);
            t->show_due = true;
        }
        t->step_ms = now_ms() - s0;
    } while (ok && !show_now && !t->show_due && r->step < r->total && now_ms() - t0 + t->step_ms <= APP_TRAIN_BUDGET_MS);
    if (now_ms() - t0 > t->worst_ms) t->worst_ms = now_ms() - t0;
    if (!ok) { // not finite: the weights before that step are back (kept as a checkpoint)
        t->running = t->show_due = false;
        char why[LESSON_ERR_MAX + 300];
        if (train_checkpoint(r, ls, NULL, why, sizeof why)) show(a, why, sizeof why);
        say_error(a, msg);
        return;
    }
    if (r->step >= r->total) t->running = false;
    if (show_now || !t->running) {
        t->show_due = false;
        if (!show(a, msg, sizeof msg)) {
            t->running = false;
            say_error(a, msg);
            return;
        }
    }
    if (now_ms() - t->shown >= APP_TRAIN_SHOW_MS) t->show_due = true;
    say_progress(a);
}

// The weight whose step is shown: the stage on screen's own (the layer's W_Q when it has none).
static void shown_weight(const App *a, int *layer, int *slot)
{
    const Trace *tr = &a->session->trace;
    const Stage *st = a->v.stage >= 0 && a->v.stage < tr->n ? &tr->stages[a->v.stage] : NULL;
    *layer = st && st->layer > 0 ? st->layer : 0, *slot = WEIGHT_W_Q;
    for (int l = 0; st && st->weight && l < TRACE_MAX_LAYERS; l++)
        for (int k = 0; k < WEIGHT_COUNT; k++)
            if (st->weight == attn_weight((AttnWeights *)&a->session->lesson.w[l], k)) *layer = l, *slot = k;
}

void app_train_show_step(App *a)
{
    Training *t = &a->ex.train;
    if (t->show_step) {
        t->show_step = false;
        return;
    }
    if (!t->on || t->session != a->session || t->run.step == 0) {
        app_toast(a, "train.step_none", NULL);
        return;
    }
    app_train_pause(a);
    char msg[LESSON_ERR_MAX + 300];
    int layer, slot;
    shown_weight(a, &layer, &slot);
    train_shown_free(&t->step);
    if (!train_show_step(&t->run, &a->session->lesson, layer, slot, &t->step, msg, sizeof msg)) {
        say_error(a, msg);
        return;
    }
    t->show_step = true;
    a->toast.left = 0.0;
}

bool app_train_key(App *a, int sym, bool step_key)
{
    Training *t = &a->ex.train;
    if (t->show_step && (sym == SDLK_ESCAPE || step_key || sym == SDLK_r)) { // (R: closed, then R's own)
        t->show_step = false;
        return sym != SDLK_r || step_key;
    }
    if (!t->on || !t->running || t->session != a->session || (sym != SDLK_SPACE && sym != SDLK_ESCAPE)) return false;
    app_train_pause(a);
    return true;
}

bool app_train_running(const App *a)
{
    const Training *t = &a->ex.train;
    return t->on && t->running && t->session == a->session;
}

bool app_train_unsaved(const App *a)
{
    const Training *t = &a->ex.train;
    return t->on && t->session == a->session && t->run.step > 0 &&
           !(a->quit.saved_session == a->session && a->quit.saved_version == a->session->version);
}

void app_train_stop(App *a)
{
    Training *t = &a->ex.train;
    if (!t->on) return;
    app_train_pause(a);
    if (t->session == a->session && app_train_unsaved(a)) app_save_lesson(a); // (its notice says where)
    train_free(&t->run);
    train_shown_free(&t->step);
    t->on = t->running = t->show_step = false;
    t->session = NULL;
}
