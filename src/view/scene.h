// scene.h — what each stage shows, from one table of stage recipes.
//
// A recipe says, for one StageKind, which panels the stage shows (operands,
// parameters, result) and how each one relates to a result cell (the highlight
// and hover rule), how the result appears (its animation) and how its formula
// is written. Everything is derived from the trace and the lesson: a formula
// has "+ b" only when there is a bias, operands are named as the lesson names
// them, and a tensor and every view of it share one colour scale in a frame.
//
// Pure view code: no SDL, no allocation. layout_compute calls scene_build; the
// renderer, the tooltips (explain.h) and --describe read what it filled in.
#ifndef ATTNVIZ_SCENE_H
#define ATTNVIZ_SCENE_H

#include <stdbool.h>
#include <stddef.h>

#include "panel.h"
#include "recipe.h"


// Fills L's panels (spec, n_panels, result_panel) and colour-scale groups for
// v's stage, and L->formula.
void scene_build(Layout *L, const Trace *tr, const View *v);

// The formula of stage s, true for this trace (lesson), e.g.
// "V = x·W_Vᵀ" for a lesson without biases, "K = key·W_Kᵀ + b_K" for cross-attention.
void scene_formula(const Trace *tr, int s, Lang lang, char *out, size_t n);




// The cell of panel p that result cell (row, col) of panel r reads, by p's rule
// (PanelSpec.reads): a whole row, a column, one cell, or nothing. Returns false
// when p has no highlight for that cell.
typedef struct Highlight {
    int row, col;      // -1 = the whole column / row
    int cols;          // columns from col on (0 or 1: one; a tile's key block)
} Highlight;
bool scene_highlight(const Layout *L, int r, int row, int col, int p, Highlight *out);

// ---- where the numbers come from, inside a stage ----------------------------------
// The sub-steps of one result row or cell, with the numbers: softmax as
// max → x − max → exp → Σ → ÷ Σ; a score as the products q·k term by term, their
// sum, ÷ scale; LayerNorm as mean → variance → normalise → · γ + β. Shown in a
// strip under the panels (for rows up to SCENE_DERIV_MAX_VALUES wide, lessons up
// to 32 queries and keys), line by
// line while the transition runs.

// Whether stage s's frames have a derivation strip (its recipe has sub-steps and the
// rows are short enough to write out).
bool scene_has_derivation(const Trace *tr, int s);
// The row a settled frame writes out when nothing is hovered: inside a loop, the step's
// own row; else the first whose result has a NaN (the one a lesson about it is about),
// else row 0.
int scene_derivation_row(const Layout *L, const Trace *tr, const View *v);
// The strip a settled frame of L shows (nothing hovered): false when it shows none
// (no room, or its result hidden). The window, exports, --describe and the handout all
// write this one.
bool scene_strip(const Layout *L, const Trace *tr, const View *v, Derivation *d);
// The derivation of result cell (row, col) of L's result panel (col is ignored for
// row-wise stages). False when the stage has none.
// Each line's values are written with its own decimals (DerivLine.dec), enough for every
// line to follow from the lines it reads as written.
bool scene_derivation(const Layout *L, const Trace *tr, const View *v, int row, int col, Derivation *d);
// Element j of line i as the strip writes it (its decimals; a difference as that of its
// operands as written).
void scene_derivation_text(const Derivation *d, int i, int j, char *buf, size_t n);
// Whether every line of d follows from the lines it reads, the values as written (each
// within half a unit of its last digit); why (may be NULL) names the first that does not.
bool scene_derivation_adds_up(const Derivation *d, char *why, size_t n);

// The panel whose numbers line i of strip d writes out (its input row, a q or k row, the
// result), or -1.
int scene_strip_line_panel(const Layout *L, const Derivation *d, int i);
// What rounding leaves, said in the formula's note (called once at the end of
// layout_compute): a strip line with more digits than its panel's cells can hold; a Σ
// column beside cells whose row as shown does not add up to it (sentence-the-cat's
// "sat" row: 0.98 beside 1.00).
void scene_note_rounding(Layout *L, const Trace *tr, const View *v);

// One paragraph saying what the frame shows (alt text for exports and --describe).
void scene_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n);

// The narration of v's stage: the lesson's text for the stage or its step, else
// the generic one (written into buf). Never NULL.
const char *scene_narration(const Trace *tr, const View *v, char *buf, size_t n);
// The stages whose narrations may differ, [*from, *to): every stage, or v's alone where the
// view's narration is one text at every stage (the model view's: its 16 heads' patterns
// counted for each of the subword model's stages cost a frame ~5 ms).
void scene_narration_stages(const Trace *tr, const View *v, int *from, int *to);
// The head v's stage opens on: chosen when ≥ 0 (--head), else the head its narration is
// about (the lesson's text's "head", when that text is shown), else v->head.
int scene_stage_head(const Trace *tr, const View *v, int chosen);

// The i18n key of a timeline step's label, true for this lesson ("step.scores_noscale"
// reads QKᵀ when the scores are not divided). buf holds it.
const char *scene_step_key(const Trace *tr, StepId step, char *buf, size_t n);

// Name of the scale kind for --describe: "diverging", "sequential", "log", "mask".
const char *scene_scale_name(const ScaleGroup *g);

// Whether probability panels are coloured on a log scale in this view (View.prob_scale).
bool scene_log_probs(const Trace *tr, const View *v);


// ---- the what-if lab --------------------------------------------------------------------
// The lesson number that cell (row, col) of panel p shows, as an edit target: the
// tensor (LessonTensor of edit.h) and its flat index. Inputs, weights, biases, γ, β and
// the mask are editable; a cell of the masked scores stands for its mask cell (a click
// there toggles attend / masked). False for computed tensors and in the Δ view. Read
// from the panel (PanelSpec.edit_*), which its recipe filled when the frame was built.
bool scene_edit_target(const Layout *L, const Trace *tr, const View *v, int p, int row, int col, int *tensor,
                       size_t *index);
// Whether cell (row, col) of panel p differs from the original lesson's (PanelSpec.ref).
bool scene_cell_changed(const PanelSpec *ps, int row, int col);


#endif
