// view.h — everything one frame depends on besides the trace: which stage,
// batch and head, how far its animation has run, palette, overlays, hover.
// The window fills it from events and playback; an export fills it directly.
// render_frame reads no clock: the same View gives the same pixels.
#ifndef ATTNVIZ_VIEW_H
#define ATTNVIZ_VIEW_H

#include <stdbool.h>

#include "colormap.h"
#include "lesson.h"

// How probabilities (attention weights) are coloured: linear [0, 1], or log
// (which shows the structure of long rows of small weights); auto = log when
// rows are longer than 32 keys. The legend says which.
// What a frame shows: the stage's panels (the walkthrough), or one of the glances over
// the whole model (View.kind).
// The experiments drawn (expview.h): the head-ablation table, the logit lens, direct logit
// attribution, activation patching.
typedef enum ViewKind {
    VIEW_PANELS, VIEW_MODEL, VIEW_HEADS, VIEW_COMPARE,
    VIEW_ABLATION, VIEW_LENS, VIEW_ATTRIBUTION, VIEW_PATCHING,
    VIEW_KIND_COUNT
} ViewKind;

typedef enum ProbScale { PROB_SCALE_AUTO, PROB_SCALE_LINEAR, PROB_SCALE_LOG, PROB_SCALE_COUNT } ProbScale;

// How wide a line of text is drawn, measured by the draw layer's fonts
// (text_measure of text.h); layout sizes label columns and operators with it.
typedef struct TextMeasure {
    int (*width)(void *ctx, bool bold, int px, const char *s);
    void *ctx;
} TextMeasure;

// A pinned tooltip (presenter mode): the derivation of one cell of one stage, kept on
// screen until cleared. x, y: its box's top-left as a fraction of the frame (so the
// presenter window's small copy places it alike), x < 0: placed automatically.
#define PINS_MAX 8
typedef struct Pin {
    int stage, panel, row, col;
    float x, y;
} Pin;
// Where render_frame drew a pin's box (output pixels), for dragging it.
typedef struct PinBox {
    int x, y, w, h;
} PinBox;

// What the window draws over a frame and an export never shows: the pointer's
// tooltip, help, the toast, the lesson picker and the progress of an E export.
// render_frame takes it separately (NULL: none), so a frame is the View alone.
typedef struct Overlays {
    bool hover;          // mouse_x/y valid (renderer output pixels): tooltip and highlights
    int mouse_x, mouse_y;
    bool help;           // the help overlay listing every key
    const char *toast;   // a short message at the bottom (NULL = none)
    float toast_alpha;   // 0..1
    const struct Picker *picker; // the "Lessons…" button and, when open, the lesson picker (picker.h)
    const struct Picker *cmp_menu; // when open, the compare menu (Shift+D, cmpmenu.h)
    int export_done, export_total; // an E export in progress: its progress box when export_total > 0
    // the what-if lab (app/lab.c): the selected cell (panel sel_panel of the frame's
    // Layout), the value being typed into it and why the last one was refused
    bool sel;
    int sel_panel, sel_row, sel_col;
    const char *edit_label;     // "weights.w_q[3,1] =" while typing, else NULL
    const char *edit_text;      // what is typed so far
    const char *edit_hint;      // keys, or why the last value was refused (edit_error)
    bool edit_error;
    const struct LabMenu *lab;  // the "What if…" button and, when open, the switches (labmenu.h)
    // the study mode (study.h): the "Study" button; when on, its question or feedback
    // instead of the narration, and the hint's frames
    const struct Study *study;
    // presenter tools (app/pins.c), on the audience window and in its S-saves: pinned
    // tooltips (those of View.stage are drawn; pin_boxes, when not NULL, receives where),
    // the spotlight (everything dimmed except the selected cell's row and column, else a
    // disc round point_x, point_y) and the laser dot at point_x, point_y. The point is a
    // fraction of the frame (< 0: none), so any size shows the same place.
    const Pin *pins;
    int n_pins;
    PinBox *pin_boxes;
    bool spotlight, laser;
    float point_x, point_y;
    // the scrub bar (K, Ctrl+←/→, dragged): shown while the transition is held, at
    // progress scrub_p, frame scrub_frame of PLAYBACK_SCRUB_FRAMES (playback.h)
    bool scrub;
    float scrub_p;
    int scrub_frame;
    // a language model's text typed in (I): the text so far and, when it cannot be read
    // (a character outside the vocab, too long, …), why; NULL: the box is closed
    const char *text_box;
    const char *text_error;
    bool text_box_b;  // the box holds B's text of a compare (its own title)
    // the step bar of a loop (N, dragged): shown, where the scrub bar goes, while View.loop
    // shows one of loop_steps steps (decoding, FlashAttention's tiles) and no transition is held
    int loop_steps;
    // the cell cursor (R, cursor.h): a cell chosen with the keys instead of the pointer; its
    // tooltip shows and it is framed for the eye (cursor_panel of the frame's Layout)
    bool cursor;
    int cursor_panel, cursor_row, cursor_col;
    // training runs (R, app_train.c): the trace changes every half second, so the narration's
    // size is the frames' before (only the text shown is measured, not every stage's: Frame)
    bool live;
} Overlays;

typedef struct View {
    int stage;           // index into Trace.stages
    int batch, head;     // which slice of (B, H, ...) tensors
    float anim;          // linear progress of the transition into `stage`: 0 start, 1 settled
    // Inside a loop (recipe_loop_steps: KV-cache decoding, FlashAttention): the step shown,
    // 0 … steps − 1 (what it computes framed, what comes later empty), or -1: the whole loop.
    int loop;
    Palette palette;
    ProbScale prob_scale;
    bool show_values;    // numbers printed in cells
    Lang lang;
    bool playing;        // status bar shows play/pause and the speed
    float speed;         // playback speed factor (1 = normal)
    const Lesson *lesson; // tokens, title, narration (may be NULL)
    // At a checkpoint of training: the trace of the checkpoint before (NULL: none), so the
    // narration can say which head changed since (story.h)
    const struct Trace *ckpt_prev;
    // Zoom and pan of the heatmaps (layout_zoom_at / layout_pan change them; reset
    // on stage change). The zoom follows one panel's axes: every panel whose rows
    // (columns) have the same count and kind as zoom_rows/zoom_row_axis
    // (zoom_cols/zoom_col_axis) is magnified in y (x), so aligned rows stay aligned.
    float zoom;                 // ≥ 1: cell size relative to the fitted one (1 = whole tensor)
    float zoom_x, zoom_y;       // content fraction (0..1) at the viewport's left / top edge
    int zoom_rows, zoom_cols;   // the followed axes' lengths
    int zoom_row_axis, zoom_col_axis; // their AxisKind (layout.h)
    // The fonts text is measured with; NULL (headless --describe, pure tests): an
    // estimate from DejaVu Sans' metrics that is never narrower than the drawn text.
    const TextMeasure *measure;
    // The what-if lab (edit.h, session.h). edited: the lesson differs from its file
    // (the header says so, narration is generated from the numbers, not the lesson's
    // text about the original ones). ref: the original's trace, whose values changed
    // cells are compared with (they get a corner mark), or NULL. delta: the trace
    // drawn is the difference edited − original (trace_diff): every panel on a
    // diverging scale around 0, no masked look, no derivations.
    bool edited;
    int n_edits;
    const struct Trace *ref;
    bool delta;
    // The study mode (study.h): the box under the heatmaps is taller (a question and its
    // feedback); hide_result: the stage's result is hidden until its questions are
    // answered (no numbers, shape, tooltip, derivation or range of it anywhere). The
    // header's badge counts the right answers.
    bool study;
    bool hide_result;
    int study_right, study_answered, study_total;
    // Projector mode (M, --projector): numbers at least LAYOUT_PROJECTOR_NUMBER_PX × the UI
    // scale; a stage whose numbers do not fit so is shown in two parts, the operands
    // (part 0) then the result (part 1), each a step of → (layout.h).
    bool projector;
    int part;
    // A printed frame (the handout): no window chrome (timeline, tabs, status, the
    // header and narration the page writes itself): the panels and the legend; with
    // hide_result, the result's cells drawn empty, to be filled in (a worksheet).
    bool print;
    // Printed in two frames, one above the other (the handout): part 0 the operands,
    // part 1 the result (View.part), each as large as the page's width allows.
    bool print_split;
    // What the frame shows (A cycles them): the stage's panels; the model view
    // (--model-view: every layer × head as a small map of its attention weights, BertViz's
    // model view, instead of the panels; a click opens one); or the head view (--head-view:
    // the stage's layer's head View.head as lines from each query token to each key token,
    // as strong as its weight, BertViz's head view); or the compare view (--compare: the
    // stage's result in A, in B and Δ = B − A side by side, view_compare.c).
    ViewKind kind;
    // The compare view's B (its trace, what made it: the spec) and the compare of A (the trace
    // drawn) with it (compare.h); NULL: none.
    const struct Trace *cmp_b;
    const struct Compare *cmp;
    const char *cmp_spec;
    // An experiment view's numbers (expview.h, View.kind VIEW_ABLATION … VIEW_PATCHING); NULL: none.
    const struct ExpView *exp;
} View;

// A View on stage 0, settled, default palette, values on, not zoomed.
void view_init(View *v, const Lesson *ls, Lang lang);
// Back to the whole tensor (zoom 1).
void view_reset_zoom(View *v);

#endif
