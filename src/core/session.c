// session.c — load → forward, once; edits, undo and redo (see session.h).
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "backward.h"
#include "trace_ops.h"
#include "utf8.h"

// A fresh forward pass of ls into out (backward: and the backward view's stages after it,
// backward_trace_append), with the colour statistics; its sizes checked first
// (lesson_check_size: every path that changes the input or the model comes here).
// False with one line in err ("FILE: PATH: …", or out of memory).
static bool forward(const Lesson *ls, Trace *out, bool backward, char *err, size_t n)
{
    trace_init(out);
    const char *file = ls->path ? ls->path : "the lesson";
    if (!lesson_check_size(ls, ls->typed ? "--text" : file, ls->typed ? "input.text" : "input", err, n)) return false;
    if (!attn_forward(&ls->cfg, ls->w, &ls->in, out)) {
        snprintf(err, n, "%s: out of memory computing the forward pass", file);
        trace_free(out);
        return false;
    }
    if (backward && !backward_trace_append(&ls->cfg, ls->w, out, ls->targets, file, err, n)) {
        trace_free(out);
        return false;
    }
    trace_compute_stats(out); // the colour ranges, once per computation
    return true;
}

static Session *create(const char *path, const LessonOverride *o, char *err, size_t n);

Session *session_create(const char *path, char *err, size_t n) { return create(path, NULL, err, n); }

static Session *create(const char *path, const LessonOverride *o, char *err, size_t n)
{
    Session *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, n, "%s: out of memory loading the lesson", path);
        return NULL;
    }
    if (!lesson_load_with(&s->lesson, path, o, err, n)) {
        free(s);
        return NULL;
    }
    // the loader opened it, so it fits (a longer path fails with ENAMETOOLONG)
    if (strlen(path) >= sizeof s->path) {
        snprintf(err, n, "%.400s...: path too long", path);
        lesson_free(&s->lesson);
        free(s);
        return NULL;
    }
    memcpy(s->path, path, strlen(path) + 1);
    edit_log_init(&s->log);
    if (!forward(&s->lesson, &s->trace, false, err, n)) {
        session_destroy(s);
        return NULL;
    }
    if (!lesson_check_quiz(&s->lesson, &s->trace, err, n)) {
        session_destroy(s);
        return NULL;
    }
    return s;
}

// A new session of a copy of src (one of from's lessons) with text (NULL: its own) or, with
// next, one token more in each batch (lesson_append), computed.
static Session *copy_of(const Session *from, const Lesson *src, const char *text, const int *next, char *err,
                        size_t n)
{
    Session *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, n, "%s: out of memory", from->path);
        return NULL;
    }
    if (!lesson_clone(&s->lesson, src)) {
        snprintf(err, n, "%s: out of memory", from->path);
        free(s);
        return NULL;
    }
    if (text ? !lesson_retext(&s->lesson, text, err, n) : next && !lesson_append(&s->lesson, next, err, n)) {
        lesson_free(&s->lesson);
        free(s);
        return NULL;
    }
    memcpy(s->path, from->path, sizeof s->path);
    edit_log_init(&s->log);
    s->backward = from->backward; // (the backward view stays on)
    if (!forward(&s->lesson, &s->trace, s->backward, err, n)) {
        session_destroy(s);
        return NULL;
    }
    return s;
}

Session *session_retext(const Session *from, const char *text, char *err, size_t n)
{
    // (the lab's edits: not carried)
    return copy_of(from, from->has_original ? &from->original : &from->lesson, text, NULL, err, n);
}

Session *session_clone(const Session *from, char *err, size_t n) { return copy_of(from, &from->lesson, NULL, NULL, err, n); }

Session *session_clone_text(const Session *from, const char *text, char *err, size_t n)
{
    return copy_of(from, &from->lesson, text, NULL, err, n);
}

Session *session_append(const Session *from, const int *next, char *err, size_t n)
{
    return copy_of(from, &from->lesson, NULL, next, err, n); // (the lab's edits: carried, as on screen)
}

Session *session_open(const char *path, const SessionEdits *ed, char *err, size_t n)
{
    const LessonOverride o = {ed ? ed->text : NULL, ed && ed->has_checkpoint, ed ? ed->checkpoint : 0};
    Session *s = o.text || o.has_checkpoint ? create(path, &o, err, n) : session_create(path, err, n);
    for (int i = 0; s && ed && i < ed->n; i++) {
        Edit e;
        char msg[EDIT_ERR_MAX + 200];
        if (!edit_parse(&s->lesson, ed->set[i], &e, msg, sizeof msg) ||
            !session_edit(s, &e, false, NULL, msg, sizeof msg)) {
            snprintf(err, n, "attnviz: --set %s", msg);
            session_destroy(s);
            return NULL;
        }
    }
    if (s && ed && ed->backward && !session_set_backward(s, true, err, n)) {
        session_destroy(s);
        return NULL;
    }
    return s;
}

bool session_set_backward(Session *s, bool on, char *err, size_t n)
{
    if (n) err[0] = '\0';
    if (on == s->backward) return true;
    Trace next, orig;
    trace_init(&orig);
    if (!forward(&s->lesson, &next, on, err, n)) return false;
    if (s->has_original && !forward(&s->original, &orig, on, err, n)) {
        trace_free(&next);
        return false;
    }
    trace_free(&s->trace);
    s->trace = next;
    if (s->has_original) {
        trace_free(&s->original_trace);
        s->original_trace = orig;
    }
    s->backward = on;
    s->version++;
    return true;
}

Session *session_checkpoint_before(const Session *s)
{
    const Lesson *ls = &s->lesson;
    const int k = ls->checkpoint >= 0 ? ls->checkpoint : ls->n_checkpoints - 1;
    if (ls->n_checkpoints < 2 || k < 1 || ls->typed) return NULL;
    char err[LESSON_ERR_MAX + 200];
    const SessionEdits ed = {NULL, 0, NULL, true, k - 1, s->backward};
    return session_open(s->path, &ed, err, sizeof err);
}

void session_destroy(Session *s)
{
    if (!s) return;
    trace_free(&s->trace);
    lesson_free(&s->lesson);
    if (s->has_original) {
        trace_free(&s->original_trace);
        lesson_free(&s->original);
    }
    edit_log_free(&s->log);
    free(s);
}

// Points every weight of tr that borrows from `from` (LESSON_MAX_LAYERS layers) at the
// same slot of the same layer of `to`.
static void rebase_weights(Trace *tr, AttnWeights *from, AttnWeights *to)
{
    for (int i = 0; i < tr->n; i++) {
        Stage *st = &tr->stages[i];
        for (int l = 0; l < LESSON_MAX_LAYERS; l++)
            for (int k = 0; k < LESSON_N_WEIGHTS; k++) {
                if (st->weight == lesson_weight(&from[l], k)) st->weight = lesson_weight(&to[l], k);
                if (st->bias == lesson_weight(&from[l], k)) st->bias = lesson_weight(&to[l], k);
            }
    }
}

// Before the first edit: keep the lesson as loaded and its trace.
static bool keep_original(Session *s)
{
    if (s->has_original) return true;
    if (!lesson_ensure_mask(&s->lesson)) return false;   // edits of the mask never allocate
    if (!lesson_clone(&s->original, &s->lesson)) return false;
    if (!trace_clone(&s->original_trace, &s->trace)) {
        lesson_free(&s->original);
        return false;
    }
    rebase_weights(&s->original_trace, s->lesson.w, s->original.w);
    s->has_original = true;
    return true;
}

// Recomputes the trace of the (changed) lesson; the old one goes to previous or is freed.
static bool recompute(Session *s, Trace *previous, char *err, size_t n)
{
    Trace next;
    if (!forward(&s->lesson, &next, s->backward, err, n)) return false;
    if (previous)
        *previous = s->trace;
    else
        trace_free(&s->trace);
    s->trace = next;
    s->version++;
    return true;
}

// The lesson as the original plus the first `applied` edits of the log.
static bool replay(Session *s, int applied, Trace *previous, char *err, size_t n)
{
    lesson_copy_values(&s->lesson, &s->original);
    for (int i = 0; i < applied; i++)
        if (!edit_apply(&s->lesson, &s->log.items[i], err, n)) return false;
    s->log.applied = applied;
    if (!recompute(s, previous, err, n)) return false;
    return true;
}

bool session_edit(Session *s, const Edit *e, bool merge, Trace *previous, char *err, size_t n)
{
    if (n) err[0] = '\0';
    if (previous) trace_init(previous);
    if (edit_is_noop(&s->lesson, e)) return true; // nothing changes, nothing is recorded
    if (!keep_original(s)) {
        snprintf(err, n, "%s: out of memory keeping the original lesson", e->text);
        return false;
    }
    // the numbers before, so that a failure changes nothing (edit_apply itself refuses
    // before changing anything; the forward pass or the log may run out of memory)
    Lesson before;
    bool merging = merge && s->log.applied > 0 && s->log.applied == s->log.n;
    if (!lesson_clone(&before, &s->lesson)) {
        snprintf(err, n, "%s: out of memory", e->text);
        return false;
    }
    Trace next;
    bool ok = edit_apply(&s->lesson, e, err, n);
    char why[LESSON_ERR_MAX];
    if (ok && !forward(&s->lesson, &next, s->backward, why, sizeof why)) {
        snprintf(err, n, "%s: %s", e->text, why);
        ok = false;
    } else if (ok && !edit_log_push(&s->log, e, merging)) {
        snprintf(err, n, "%s: out of memory", e->text);
        trace_free(&next);
        ok = false;
    }
    if (ok) { // committed: the new trace, the old one to previous (or freed)
        if (previous)
            *previous = s->trace;
        else
            trace_free(&s->trace);
        s->trace = next;
        s->version++;
    } else {
        lesson_copy_values(&s->lesson, &before);
    }
    lesson_free(&before);
    return ok;
}

bool session_undo(Session *s, Trace *previous, char *err, size_t n)
{
    if (n) err[0] = '\0';
    if (!s->has_original || s->log.applied == 0) return false;
    return replay(s, s->log.applied - 1, previous, err, n);
}

bool session_redo(Session *s, Trace *previous, char *err, size_t n)
{
    if (n) err[0] = '\0';
    if (!s->has_original || s->log.applied >= s->log.n) return false;
    int applied = s->log.applied;
    if (!edit_apply(&s->lesson, &s->log.items[applied], err, n)) return false;
    s->log.applied = applied + 1;
    if (!recompute(s, previous, err, n)) return false;
    return true;
}

bool session_reset(Session *s, Trace *previous, char *err, size_t n)
{
    if (n) err[0] = '\0';
    if (!s->has_original || s->log.applied == 0) return false;
    return replay(s, 0, previous, err, n);
}

bool session_refresh(Session *s, char *err, size_t n) { return recompute(s, NULL, err, n); }
bool session_ablate(Session *s, const AttnAblation *a, char *err, size_t n)
{
    s->lesson.cfg.ablate = *a;
    if (s->has_original) s->original.cfg.ablate = *a; // (an undo keeps it)
    return recompute(s, NULL, err, n);
}

bool session_edited(const Session *s)
{
    return s->has_original && s->log.applied > 0;
}

const char *session_file_stem(const Session *s, char *out, size_t n)
{
    const char *base = strrchr(s->path, '/');
    base = base ? base + 1 : s->path;
    size_t k = 0;
    for (const char *p = base; *p && k + 1 < n; p++) {
        if (strcmp(p, ".json") == 0) break;
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        out[k++] = ok ? c : '_';
    }
    if (n) out[k] = '\0';
    if (k == 0) snprintf(out, n, "lesson");
    return out;
}

const Trace *session_original_trace(const Session *s)
{
    return s->has_original ? &s->original_trace : &s->trace;
}

bool session_delta(const Session *s, Trace *out, AttnWeights w[LESSON_MAX_LAYERS])
{
    memset(w, 0, LESSON_MAX_LAYERS * sizeof *w);
    if (!trace_clone(out, &s->trace)) return false;
    trace_diff(out, session_original_trace(s), &s->trace);
    const AttnWeights *orig = s->has_original ? s->original.w : s->lesson.w;
    for (int l = 0; l < LESSON_MAX_LAYERS; l++)
        for (int k = 0; k < LESSON_N_WEIGHTS; k++) {
            const Tensor *cur = lesson_weight((AttnWeights *)&s->lesson.w[l], k);
            const Tensor *was = lesson_weight((AttnWeights *)&orig[l], k);
            Tensor *d = lesson_weight(&w[l], k);
            if (!tensor_present(cur)) continue;
            if (!tensor_copy(d, cur)) {
                for (int m = 0; m <= l; m++) attn_weights_free(&w[m]);
                trace_free(out);
                return false;
            }
            for (size_t i = 0; i < d->size; i++) d->data[i] = cur->data[i] - was->data[i];
        }
    rebase_weights(out, (AttnWeights *)s->lesson.w, w);
    return true;
}

static const char *const EDITED_MARK[LANG_COUNT] = {" (edited)", "（已修改）"};

static bool ends_with(const char *t, const char *m)
{
    size_t tl = strlen(t), ml = strlen(m);
    return tl >= ml && strcmp(t + tl - ml, m) == 0;
}

const char *session_title(const Session *s, Lang lang, char *buf, size_t n)
{
    const char *t = lesson_title(&s->lesson, lang);
    Lang l = s->lesson.title[lang] ? lang : LANG_EN;
    if (!session_edited(s) || ends_with(t, EDITED_MARK[l])) {
        snprintf(buf, n, "%s", t);
        return buf;
    }
    // the marked title stays within a lesson's text limit: cut at a character boundary
    size_t keep = strlen(t), room = LESSON_MAX_TEXT - strlen(EDITED_MARK[l]);
    if (keep > room) {
        keep = utf8_floor(t, room);
    }
    snprintf(buf, n, "%.*s%s", (int)keep, t, EDITED_MARK[l]);
    return buf;
}

bool session_save(const Session *s, const char *path, bool replace, char *err, size_t n)
{
    bool (*save)(const Lesson *, const char *, char *, size_t) = replace ? lesson_save : lesson_save_new;
    const bool edited = session_edited(s);
    // another input (--text, the text box) or other weights (--checkpoint, the slider) than the
    // file's: its narration, notes and questions were written about numbers this lesson no
    // longer computes
    const bool other = s->lesson.typed || s->lesson.other_weights;
    if (!edited && !other) return save(&s->lesson, path, err, n);
    // a shallow copy without the narration and the teacher's notes of the original (both
    // were written about its numbers; the generated narration, which reads the numbers,
    // stands in), the title marked when edited
    Lesson out = s->lesson;
    char title[LANG_COUNT][LESSON_MAX_TEXT + 64];
    if (edited) {
        for (int l = 0; l < LANG_COUNT; l++)
            if (s->lesson.title[l]) out.title[l] = (char *)session_title(s, (Lang)l, title[l], sizeof title[l]);
        out.checkpoint = -1; // the edited weights are written as "weights" (lesson_write)
    }
    out.n_steps = 0;
    out.n_quiz = 0; // the author's questions are about the original numbers too
    out.n_notes = 0;
    return save(&out, path, err, n);
}
