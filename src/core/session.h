// session.h — one lesson and its forward pass, loaded once, at stable addresses,
// and the what-if lab's edits of it (edit.h) with undo and redo.
//
// The Trace borrows the Lesson's weight tensors (trace.h); both live in one
// heap object that never moves, so those pointers stay valid for its lifetime.
// Edits never change a shape: they change numbers in place, so the pointers stay
// valid across edits too. Opening another lesson means creating a new Session
// (and destroying the old one only once the new one exists).
#ifndef ATTNVIZ_SESSION_H
#define ATTNVIZ_SESSION_H

#include <stddef.h>

#include "edit.h"
#include "lesson.h"
#include "trace.h"

#define SESSION_PATH_MAX 4096   // PATH_MAX: any path the loader can open fits

typedef struct Session {
    Lesson lesson;                 // owned: the lesson with the applied edits
    Trace trace;                   // owned; borrows weights from lesson.w[]
    char path[SESSION_PATH_MAX];   // the path it was loaded from, as given
    // The what-if lab. Until the first edit, `original` is empty (has_original false):
    // the lesson is the original. From then on it holds the lesson as loaded and its
    // trace (borrowing original.w), for undo, reset, the Δ view and the marks.
    EditLog log;
    bool has_original;
    Lesson original;
    Trace original_trace;
    // Changes whenever the lesson and its trace change (an edit, undo, redo, reset): what
    // shows them watches it (the window: the stage on screen, the title, the caches).
    unsigned version;
    // The backward view (Shift+B, --backward): the trace holds one training step's backward
    // pass after the forward stages (backward_trace_append), through every edit.
    bool backward;
} Session;

// Loads path (lesson_load) and runs the forward pass (attn_forward). NULL on
// failure with one line in err naming the file: the lesson loader's message,
// or "PATH: out of memory computing the forward pass".
Session *session_create(const char *path, char *err, size_t n);
// The --set edits of the command line (KEY=VALUE each, edit.h), applied in order.
typedef struct SessionEdits {
    const char *const *set;
    int n;
    const char *text;   // --text: a language model's input (lesson_load_with), NULL: the file's
    bool has_checkpoint; // --checkpoint: the checkpoint's weights are computed (the training slider)
    int checkpoint;
    bool backward;       // --backward: the backward view's stages too (session_set_backward)
} SessionEdits;
// session_create (with ed->text or ed->checkpoint: lesson_load_with), then every edit of ed (NULL: none). A bad edit fails with
// "attnviz: --set KEY=VALUE: what is wrong; expected ..." in err.
Session *session_open(const char *path, const SessionEdits *ed, char *err, size_t n);
// A new session of from's lesson (as loaded: the lab's edits are not carried over; the backward
// view is) with a
// language model's input `text` instead (lesson_retext): no file read. NULL with one line
// in err ("--text: input.text: …") when the text does not read.
Session *session_retext(const Session *from, const char *text, char *err, size_t n);
// A new session of from's lesson as it is now (its edits applied, its text, its checkpoint's
// weights; no edit log: it starts unedited): B of a compare. NULL with one line in err.
Session *session_clone(const Session *from, char *err, size_t n);
// A new session of from's lesson as it is now (as session_clone: its edits, its checkpoint's
// weights) with a language model's input `text` instead (lesson_retext): B of a compare's
// text:. NULL with one line in err ("--text: input.text: …") when the text does not read.
Session *session_clone_text(const Session *from, const char *text, char *err, size_t n);
// A new session of from's lesson as on screen (the lab's edits, a temperature, a top-k,
// carried into it as its lesson; no edit log) with one token more in each batch, next[b]
// (lesson_append: generating). NULL with one line in err ("generate: input.ids: …").
Session *session_append(const Session *from, const int *next, char *err, size_t n);
// The checkpoint of training before s's (its lesson's file, the file's input), for the
// narration's "since step …" (story.h); NULL when there is none: no checkpoints, the first,
// a typed text, or it cannot be read.
Session *session_checkpoint_before(const Session *s);
// The backward view on or off: the trace computed again with (or without) the backward
// pass's stages after the forward ones (backward.h), the original's too. False (nothing
// changed, one line in err naming the file) for a lesson that is not a language model, or
// when the backward pass fails.
bool session_set_backward(Session *s, bool on, char *err, size_t n);
// Frees the lesson, the trace and the session; NULL is fine.
void session_destroy(Session *s);

// Applies e and recomputes the trace. merge: e continues the newest edit (a drag
// scrubbing one value): one undo step. With previous non-NULL the trace before the
// edit is moved there (the caller frees it with trace_free), for an animation.
// False (nothing changed, one line in err) when e does not apply or memory runs out.
bool session_edit(Session *s, const Edit *e, bool merge, Trace *previous, char *err, size_t n);
// Undo / redo one edit; reset undoes every edit (itself one step: redo brings them
// back). False when there is nothing to undo / redo (err "") or on failure.
bool session_undo(Session *s, Trace *previous, char *err, size_t n);
bool session_redo(Session *s, Trace *previous, char *err, size_t n);
bool session_reset(Session *s, Trace *previous, char *err, size_t n);
// The lesson's numbers changed in place (training, train.h): its trace computed again (the
// version changes). False with one line in err when memory runs out (the trace as it was).
bool session_refresh(Session *s, char *err, size_t n);
// An experiment's ablation of one head (experiment.h; kind ABLATE_NONE: none) set in the model
// and the trace computed again. False with one line in err (out of memory).
bool session_ablate(Session *s, const AttnAblation *a, char *err, size_t n);
// Whether any edit is applied.
bool session_edited(const Session *s);
// The lesson's title in lang, marked " (edited)" / "（已修改）" once edited (a title
// that already ends so is not marked twice), into buf.
const char *session_title(const Session *s, Lang lang, char *buf, size_t n);
// The lesson file's name without ".json", safe in a file name (letters, digits, - and
// _; others become _; "lesson" when nothing is left), into out (at most n − 1 bytes).
const char *session_file_stem(const Session *s, char *out, size_t n);
// The trace of the lesson as loaded (the current one until the first edit).
const Trace *session_original_trace(const Session *s);

// The Δ view: out = this trace − the original's, stage by stage, with the weights'
// differences in w, layer by layer (both freed by the caller: trace_free, and
// attn_weights_free of each of the LESSON_MAX_LAYERS).
bool session_delta(const Session *s, Trace *out, AttnWeights w[LESSON_MAX_LAYERS]);

// Writes the edited lesson to path (lesson_save): every number explicit, its checkpoints,
// the title marked edited, and (when edited, typed or at another checkpoint) without the
// lesson's own narration, notes and questions, which described the file's numbers: the
// saved lesson shows what the window showed, with the generated narration.
// replace false: never over an existing file (lesson_save_new; errno EEXIST).
bool session_save(const Session *s, const char *path, bool replace, char *err, size_t n);

#endif
