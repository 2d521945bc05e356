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

// How the result of a stage appears while its transition runs.
typedef enum AnimKind {
    ANIM_FADE,          // every cell at once
    ANIM_ROWS,          // row by row (a row of the result reads a row of operand 0)
    ANIM_CELLS,         // cell by cell (a dot product each)
    ANIM_SPLIT,         // head blocks slide out of the source into their panels
    ANIM_CONCAT,        // head panels slide into their blocks of the result
    ANIM_MASK,          // masked cells fade from the score to the masked look
    ANIM_SOFTMAX,       // each row turns from scores into a distribution
} AnimKind;

// Which derivation a result cell's tooltip writes out (explain.c writes each).
typedef enum TipKind {
    TIP_NONE,            // the value only (inputs, the mask)
    TIP_LINEAR,          // Σₖ x[i,k]·W[j,k] + b[j], term by term
    TIP_LINEAR_RELU,     // the same, then relu
    TIP_LINEAR_RESIDUAL, // the same, plus the residual term
    TIP_ADD,             // a + b
    TIP_NORM,            // mean, var, x̂, · γ + β
    TIP_DOT,             // (q·k) / scale, term by term
    TIP_MASK_FILL,       // mask = 0 → fill, else kept
    TIP_SOFTMAX,         // exp(x − max) / Σ
    TIP_WEIGHTED_SUM,    // Σⱼ attn[i,j]·v[j,c]
    TIP_COPY_SPLIT,      // copied from the source's column h·d + j
    TIP_COPY_CONCAT,     // copied from head j / d
    TIP_ROPE,            // the pair, its angle pos·θ_p, cos and sin
    TIP_POS_BIAS,        // −m_h·(i − j)
    TIP_FLASH,           // the running max / sum after a key block, from the one before
    TIP_EQUAL,           // the same number another way (flash_out = head_out, decode_output = output)
    TIP_CACHE,           // the step that wrote a cache row
} TipKind;

// The study mode's questions (quiz.h asks them).
// In the order a stage asks them when it could ask more than QUIZ_MAX_PER_STAGE.
typedef enum QuizKind {
    QUIZ_MASKED,   // which keys the mask removes in row i (masked_scores); which rows of attn come out NaN / uniform
    QUIZ_ARGMAX,   // which key query i attends to most in head h (attn)
    QUIZ_SUM,      // what row i of attn sums to
    QUIZ_SOURCE,   // which head and which column of it a concat column comes from
    QUIZ_SHAPE,    // the shape of the stage's result, PyTorch order
    QUIZ_VALUE,    // one cell's value, typed as a number
    QUIZ_AUTHORED, // the lesson's own question ("quiz" in the file): never generated
    QUIZ_KIND_COUNT
} QuizKind;

#define QUIZ_BIT(k) (1u << (k))

typedef struct StageRecipe {
    void (*panels)(Layout *L, const Trace *tr, const View *v); // adds the panels
    void (*formula)(const Trace *tr, int stage, Lang lang, char *out, size_t n);
    AnimKind anim;
    TipKind tip;
    unsigned quiz;   // the QuizKinds the study mode asks at this stage, QUIZ_BIT(k) each (quiz.h)
} StageRecipe;

const StageRecipe *scene_recipe(StageKind k);

// Fills L's panels (spec, n_panels, result_panel) and colour-scale groups for
// v's stage, and L->formula.
void scene_build(Layout *L, const Trace *tr, const View *v);

// The formula of stage s, true for this trace (lesson), e.g.
// "V = x·W_Vᵀ" for a lesson without biases, "K = key·W_Kᵀ + b_K" for cross-attention.
void scene_formula(const Trace *tr, int s, Lang lang, char *out, size_t n);

// The symbol a stage is written with in formulas ("Q", "x", "key", "z", ...).
const char *scene_symbol(const Trace *tr, int s, Lang lang);

// The symbol of stage s's weight ("W_Qᵀ", "γ") or bias ("b_Q", "β").
const char *scene_param_symbol(const Trace *tr, int s, bool bias);

// Stage s's weight as PyTorch stores it, (out, in): "W_Q", "W₁" (γ for a LayerNorm).
const char *scene_weight_plain(const Trace *tr, int s);

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
#define SCENE_DERIV_MAX_LINES 6
#define SCENE_DERIV_MAX_VALUES 16

typedef struct DerivLine {
    char label[64];   // "max", "x − max", "exp(x − max)", "Σ", "÷ Σ = attn", "q·k"
    int n;            // values on the line (1: a scalar)
    float v[SCENE_DERIV_MAX_VALUES];
    bool result;      // the line is the result row (coloured with the result's scale)
} DerivLine;

typedef struct Derivation {
    char title[64];   // "attn row 2", "scores[2, 3]"
    int row, col;     // the result cell it derives (col -1: the whole row)
    int n_lines;
    DerivLine line[SCENE_DERIV_MAX_LINES];
} Derivation;

// Whether stage s's frames have a derivation strip (its recipe has sub-steps and the
// rows are short enough to write out).
bool scene_has_derivation(const Trace *tr, int s);
// The derivation of result cell (row, col) of L's result panel (col is ignored for
// row-wise stages). False when the stage has none.
// The row a settled frame writes out when nothing is hovered: the first whose result
// has a NaN (the one a lesson about it is about), else row 0.
int scene_derivation_row(const Layout *L);
bool scene_derivation(const Layout *L, const Trace *tr, const View *v, int row, int col, Derivation *d);

// One paragraph saying what the frame shows (alt text for exports and --describe).
void scene_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n);

// The narration of v's stage: the lesson's text for the stage or its step, else
// the generic one (written into buf). Never NULL.
const char *scene_narration(const Trace *tr, const View *v, char *buf, size_t n);

// The i18n key of a timeline step's label, true for this lesson ("step.scores_noscale"
// reads QKᵀ when the scores are not divided). buf holds it.
const char *scene_step_key(const Trace *tr, StepId step, char *buf, size_t n);

// Name of the scale kind for --describe: "diverging", "sequential", "log", "mask".
const char *scene_scale_name(const ScaleGroup *g);

// Whether probability panels are coloured on a log scale in this view (View.prob_scale).
bool scene_log_probs(const Trace *tr, const View *v);

// The mask fill as the lesson writes it: "−1e9", "−∞".
void scene_fill_text(float fill, char *buf, size_t n);

// ---- the what-if lab --------------------------------------------------------------------
// The lesson number that cell (row, col) of panel p shows, as an edit target: the
// tensor (LessonTensor of edit.h) and its flat index. Inputs, weights, biases, γ, β and
// the mask are editable; a cell of the masked scores stands for its mask cell (a click
// there toggles attend / masked). False for computed tensors.
bool scene_edit_target(const Layout *L, const Trace *tr, const View *v, int p, int row, int col, int *tensor,
                       size_t *index);
// Whether cell (row, col) of panel p differs from the original lesson's (PanelSpec.ref).
bool scene_cell_changed(const PanelSpec *ps, int row, int col);

// Whether key position j of batch b is padding (a key_padding mask masks it for every query).
bool scene_key_is_padding(const Trace *tr, int b, int j);

#endif
