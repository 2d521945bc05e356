// lab.h — the what-if lab in the window: select a cell (mouse or keys), type a
// value or drag to scrub it, toggle mask cells, the switches (W), the Δ view (D),
// undo / redo / reset / save (Ctrl+Z, Ctrl+Shift+Z or Ctrl+Y, Ctrl+R, Ctrl+S), and
// the animation from the old numbers to the new ones. Every edit goes through the
// engine of edit.h and session.h, the same one --set uses.
#ifndef ATTNVIZ_LAB_H
#define ATTNVIZ_LAB_H

#include <SDL.h>
#include <stdbool.h>

#include "edit.h"
#include "labmenu.h"
#include "layout.h"
#include "session.h"
#include "view.h"

#define LAB_MSG_MAX 1200

typedef struct Lab {
    LabMenu menu;                 // the switches (W, the "What if…" button)
    bool delta;                   // D: the Δ view
    // the selected cell: the panel (the stage it shows or whose parameter it is, which
    // tensor of it: 0 the stage's own, 1 its weight, 2 its bias; the head) and the cell
    bool sel;
    StageId sel_stage;
    int sel_param;
    int sel_head, sel_row, sel_col;
    // a value being typed into `target` (an element edit or model.scale; only the
    // number typed is parsed, edit_value), shown after `label` ("weights.w_q[3,1] =")
    bool typing;
    Edit target;
    char label[EDIT_TEXT_MAX + 8];
    char text[48];
    bool too_long;                // a character did not fit: Enter refuses (never a cut number)
    char hint[LAB_MSG_MAX];
    bool hint_error;
    // a press on the selected cell, which becomes a scrub once dragged vertically
    bool press, scrubbing;
    int press_y;
    float press_value, step;
    int tensor;
    size_t index;
    // the edit's animation: `mid` goes from `from` (the trace before) to the session's,
    // on the playback's edit clock (playback_start_edit when edit_started)
    bool animating, edit_started;
    Trace from, mid;
    // the Δ view's trace and the weights' differences (rebuilt after every edit)
    bool have_delta;
    Trace dtrace;
    AttnWeights dweights[LESSON_MAX_LAYERS];
    unsigned gen;                 // changes whenever the trace to draw changes
    // called before an edit changes the session (the window finishes an export that
    // borrows the trace), NULL: nothing
    void (*before_edit)(void *ctx);
    void *ctx;
    bool save_requested;          // Ctrl+S or "Save as…": the window saves (lab_save) and clears it
    char msg[LAB_MSG_MAX];        // a message for the toast (lab_take_message)
    bool msg_error;
} Lab;

void lab_init(Lab *lab);
void lab_free(Lab *lab);
// Another lesson is on screen: selection, typing, animation and Δ start over.
void lab_forget(Lab *lab);
// The stage, batch or head changed: the selection (a cell of the old frame) goes.
void lab_deselect(Lab *lab);

// The trace to draw: the Δ trace, the animation's in-between, or the session's.
const Trace *lab_trace(const Lab *lab, const Session *s);
// Fills v's lab fields (edited, n_edits, ref, delta) from the session.
void lab_view(const Lab *lab, const Session *s, View *v);
// Fills ov's lab fields for the frame laid out as L.
void lab_overlays(Lab *lab, const Session *s, const Layout *L, const View *v, Overlays *ov);
// Whether an edit's animation started since the last call (the window then starts the
// playback's edit clock: playback_start_edit).
bool lab_take_edit_start(Lab *lab);
// The animation at the playback's edit progress p (playback_edit_progress); true while it runs.
bool lab_update(Lab *lab, const Session *s, float p);

// Keys: true when the lab used the key. L is the frame's layout (hit-testing), v the view.
// The edit arg ("model.temperature=0.5", as --set writes it) applied as one undo step
// and animated; a refusal is the lab's message. False when refused.
bool lab_apply_text(Lab *lab, Session *s, const char *arg, Lang lang);
bool lab_key(Lab *lab, Session *s, const Layout *L, const View *v, const SDL_KeyboardEvent *k);
// A left press at output pixel (x, y): the "What if…" button, the switches, or a cell.
// True when the lab used it.
bool lab_press(Lab *lab, Session *s, const Layout *L, const View *v, int x, int y, bool shift);
// The mouse moved to y with the button held (a scrub), and the button was released.
void lab_drag(Lab *lab, Session *s, int y, bool shift, Lang lang);
// Text typed (SDL_TEXTINPUT, any keyboard layout): the characters of a number go into
// the value being typed, or start typing into the selected cell. True when used.
bool lab_text(Lab *lab, Session *s, const Layout *L, const View *v, const char *text);
void lab_release(Lab *lab);

// Ctrl+S: writes the edited lesson as a new file in dir (created when missing) named
// after the lesson ("NAME-edited-N.json", the first N not taken); the path in out.
bool lab_save(Lab *lab, Session *s, const char *dir, char *out, size_t n);
// Where Ctrl+S saves: $ATTNVIZ_SAVE_DIR, else $XDG_DATA_HOME/attnviz/lessons (default
// ~/.local/share/attnviz/lessons), the folder the lesson picker lists too.
void lab_save_dir(char *out, size_t n);

// The message of the last action for the toast (NULL: none); error: it says what failed.
const char *lab_take_message(Lab *lab, bool *error);

#endif
