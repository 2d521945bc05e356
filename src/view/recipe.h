// recipe.h — a stage kind's recipe: everything the view knows about the kind,
// in one const struct written in the kind's family file —
//   recipe_data.c    the lesson's own numbers: input, mask
//   recipe_linear.c  x·Wᵀ + b and what follows it: projections, W_O, the FFN, add, LayerNorm,
//                    QK-norm, gated attention's gate
//   recipe_heads.c   the head axis: split, concat, RoPE
//   recipe_attend.c  attention itself: scores, the position bias, soft-capping, masking, softmax, attn·V
//   recipe_loop.c    inside the loop: FlashAttention's tiles, the K/V cache, decoding
//   recipe_lm.c      a language model's own: the token embedding, positions, the softmax over the vocabulary
//   recipe_latent.c  DeepSeek's: MLA's keys, latent cache and absorbed form, the sparse attention's indexer
//   recipe_delta.c   a linear layer's (Gated DeltaNet): q̂ and k̂, the gate α, the state S, o = q̂·S, the matrix form
//   recipe_grad.c    the backward view: the loss's gradient, dX = dY·W, dW, the softmax Jacobian, dQ, dK
// Each recipe says which panels a frame shows (operands, parameters, result) and
// how each reads a result cell, the formula and the numbers it uses, the tooltip
// of a result cell (how it was computed, with the numbers), the sub-steps of the
// derivation strip, the narration's variant, how the result appears (its
// motion), which study questions the stage asks and its extra beside the panels. Nothing else in the view
// switches on StageKind for these: scene.c, explain.c, quiz.c and the renderer
// read the recipe (recipe_of). (One exception left: quiz.c asks QUIZ_MASKED as two
// questions, masked keys at the masking stage, NaN / uniform rows at softmax.)
//
// Adding a stage kind: a row in stages.h (core), the forward code that fills it,
// a recipe in a family file (its extern below and its line in recipe.c's table),
// its language keys.
//
// Pure view code: no SDL, no allocation.
#ifndef ATTNVIZ_RECIPE_H
#define ATTNVIZ_RECIPE_H

#include <stdbool.h>
#include <stddef.h>

#include "panel.h"
#include "tip.h"

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

// The colour scale of a stage's values: diverging around 0, the 0/1 mask, or
// probabilities in [0, 1] (linear or log).
typedef enum ScaleKind { SCALE_DIVERGING, SCALE_MASK01, SCALE_PROBABILITY } ScaleKind;

// How a stage's own 0 cells look: as values, or masked (the mask: 0 = masked;
// the masked scores: where the lesson's mask is 0).
typedef enum MaskLook { MASK_LOOK_NONE, MASK_LOOK_SELF, MASK_LOOK_LESSON_MASK } MaskLook;

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
    QUIZ_RISES,    // the backward view's softmax: which key's score in row i rises most under gradient descent
    QUIZ_KIND_COUNT
} QuizKind;

#define QUIZ_BIT(k) (1u << (k))

// ---- where the numbers come from, inside a stage ----------------------------------
// The sub-steps of one result row or cell, with the numbers: softmax as
// max → x − max → exp → Σ → ÷ Σ; a score as the products q·k term by term, their
// sum, ÷ scale; LayerNorm as mean → variance → normalise → · γ + β. Shown in a
// strip under the panels (for rows up to SCENE_DERIV_MAX_VALUES wide, lessons up
// to 32 queries and keys), line by line while the transition runs.
#define SCENE_DERIV_MAX_LINES 6
#define SCENE_DERIV_MAX_VALUES 16

// How a line follows from the lines above it (a, b, c: their indices; k: a constant
// its label writes): scene_derivation gives each line the decimals with which every
// relation holds for the values as written (scene_derivation_adds_up).
typedef enum DerivRel {
    DERIV_GIVEN,      // read from a panel
    DERIV_PRODUCT,    // a[j] × b[j]
    DERIV_SUM,        // Σ a[j]
    DERIV_DIV_K,      // a[j] / k
    DERIV_ADD_K,      // a[j] + k
    DERIV_ADD,        // a[0] + b[0]
    DERIV_MAX,        // max a[j]
    DERIV_SUB,        // a[j] − b[0]
    DERIV_EXP,        // exp(a[j])
    DERIV_DIV,        // a[j] / b[0]
    DERIV_MEAN,       // Σ a[j] / n
    DERIV_VAR,        // Σ (a[j] − b[0])² / n
    DERIV_NORM,       // (a[j] − b[0]) / √(c[0] + k)
    DERIV_MEANSQ,     // Σ a[j]² / n
    DERIV_RMS,        // a[j] / √(b[0] + k)
} DerivRel;

typedef struct DerivLine {
    char label[64];   // "max", "x − max", "exp(x − max)", "Σ", "÷ Σ = attn", "q·k"
    int n;            // values on the line (1: a scalar)
    float v[SCENE_DERIV_MAX_VALUES];
    bool result;      // the line is the result row (coloured with the result's scale)
    int dec;          // the decimals its values are written with (tip_number_dec)
    DerivRel rel;
    int a, b, c;
    double k;
} DerivLine;

// Sets how line l follows from lines a, b, c (indices above it) and the constant k.
void recipe_deriv_rel(DerivLine *l, DerivRel rel, int a, int b, int c, double k);

typedef struct Derivation {
    char title[64];   // "attn row 2", "scores[2, 3]"
    int row, col;     // the result cell it derives (col -1: the whole row)
    int n_lines;
    DerivLine line[SCENE_DERIV_MAX_LINES];
} Derivation;

typedef struct StageRecipe {
    // the panels (operands, parameters, result) and the operators between them
    void (*panels)(Layout *L, const Trace *tr, const View *v);
    // the formula, true for this lesson ("V = x·W_Vᵀ" without biases)
    void (*formula)(const Trace *tr, int stage, Lang lang, char *out, size_t n);
    // the numbers the formula uses, as a note after it ("√d_k = √2 = 1.414"); NULL: none
    void (*note)(const Trace *tr, int stage, Lang lang, char *out, size_t n);
    // how a result cell was computed, with the numbers; NULL: its value only
    void (*tip)(TipOut *o, const TipCell *c);
    // the derivation strip: the values on one line (0: none), and the lines of a result row / cell
    int (*deriv_width)(const Trace *tr, int stage);
    bool (*derive)(const Layout *L, const Trace *tr, const View *v, int row, int col, Derivation *d);
    // the generic narration's variant true for this lesson (a suffix of narr.NAME); NULL: ""
    const char *(*narration)(const Trace *tr, int stage);
    AnimKind anim;
    unsigned quiz;      // the QuizKinds the study mode asks at this stage, QUIZ_BIT(k) each
    bool key_cols;      // its columns are key positions (their labels are the keys' tokens)
    MaskLook mask_look;
    ScaleKind scale;
    bool view_of_operand; // a view of operand 0 (heads, concat, masked copy): coloured on its scale
    bool norm_affine;     // its weight and bias are LayerNorm's γ and β (γ's scale is around 1)
    bool one_scale;       // its result copies its operands' numbers: every panel on one colour scale
    // The tensor its result is compared with (the stage index, -1 none): the two share one
    // colour scale, so one value has one colour in both (RoPE's input and output, V and
    // the head outputs that copy or blend its rows, FlashAttention's running max and the
    // scores it reads). The rule: a stage whose narration compares two tensors shares
    // their scale. NULL: none.
    int (*compared)(const Trace *tr, int stage);
    // An extra beside the panels (a language model's next-token bars, Layout.bars): takes its
    // room from the right of L->area (and gap px between) and fills what it shows; NULL: none.
    // Not called for a printed frame, a hidden result or a glance (layout.c).
    void (*extra)(Layout *L, const Trace *tr, const View *v, int gap);
    // The backward view's stages (recipe_grad.c), named after the forward stage they belong to:
    // its title and panel name (family "title" / "name", recipe_stage_text), its symbol
    // (recipe_symbol: "∂L/∂Q") and a narration written from the numbers (NULL: the table's
    // title.NAME / name.NAME, symbol and narr.NAME).
    const char *(*text)(const Trace *tr, int s, const char *family, Lang lang);
    const char *(*symbol)(const Trace *tr, int s);
    const char *(*story)(const Trace *tr, const View *v, char *buf, size_t n);
} StageRecipe;

// The compared tensors of the recipes: operand 0, operand 1.
int recipe_compared_op0(const Trace *tr, int stage);
int recipe_compared_op1(const Trace *tr, int stage);

// The recipe of kind k (the input's for an unknown kind).
const StageRecipe *recipe_of(StageKind k);

// The family files' recipes (recipe.c's table maps each StageKind to one).
extern const StageRecipe RECIPE_INPUT, RECIPE_MASK;
extern const StageRecipe RECIPE_PROJECTION, RECIPE_OUT_PROJ, RECIPE_FFN_HIDDEN, RECIPE_FFN_SUM, RECIPE_ADD, RECIPE_NORM;
extern const StageRecipe RECIPE_SPLIT, RECIPE_CONCAT, RECIPE_ROPE;
extern const StageRecipe RECIPE_SCORES, RECIPE_POS_BIAS, RECIPE_MASKED, RECIPE_SOFTMAX, RECIPE_WEIGHTED_SUM;
extern const StageRecipe RECIPE_FLASH_STAT, RECIPE_FLASH_OUT, RECIPE_CACHE, RECIPE_DECODE;
extern const StageRecipe RECIPE_DECODE_SCORES, RECIPE_DECODE_ATTN, RECIPE_FLASH_P, RECIPE_FLASH_ACC;
extern const StageRecipe RECIPE_EMBED, RECIPE_POS_EMBED, RECIPE_VOCAB_SOFTMAX;
extern const StageRecipe RECIPE_GRAD_TARGET, RECIPE_GRAD_LOSS, RECIPE_GRAD_LINEAR, RECIPE_GRAD_WEIGHT, RECIPE_GRAD_ATTN;
extern const StageRecipe RECIPE_GRAD_JACOBIAN, RECIPE_GRAD_SOFTMAX, RECIPE_GRAD_QK, RECIPE_GRAD_PASS,
    RECIPE_GRAD_PARAM;
extern const StageRecipe RECIPE_HEAD_NORM, RECIPE_GATE, RECIPE_GATED, RECIPE_SOFTCAP;
extern const StageRecipe RECIPE_MLA_KEY, RECIPE_MLA_CACHE, RECIPE_MLA_ABSORB, RECIPE_MLA_SCORES; // recipe_latent.c
extern const StageRecipe RECIPE_INDEX_SCORES, RECIPE_TOPK_MASK;
// A vision transformer's attention stage: [CLS]'s attention over the image beside the panels
// (recipe_vision.c; Layout.vision; nothing for another lesson).
void recipe_extra_cls_attention(Layout *L, const Trace *tr, const View *v, int gap);
extern const StageRecipe RECIPE_LIN_L2, RECIPE_LIN_GATE, RECIPE_LIN_STATE, RECIPE_LIN_OUT, RECIPE_LIN_ATTN, // recipe_delta.c
    RECIPE_LIN_U;
// Attention's own pieces, shared with the loops' copies of them (recipe_attend.c): Q·Kᵀ's
// panels and a score's dot product; softmax's panels, tooltip and derivation strip.
void recipe_panels_scores(Layout *L, const Trace *tr, const View *v);
void recipe_tip_dot(TipOut *o, const TipCell *c);
void recipe_panels_softmax(Layout *L, const Trace *tr, const View *v);
void recipe_tip_softmax(TipOut *o, const TipCell *c);
int recipe_deriv_width_softmax(const Trace *tr, int stage);
// gpt-oss: head h's sink logit of softmax stage s (attn, decode_attn) into *out; false: none.
bool recipe_sink(const Trace *tr, int s, int h, float *out);
bool recipe_derive_softmax(const Layout *L, const Trace *tr, const View *v, int row, int col, Derivation *d);

// ---- inside the loop, one step at a time (View.loop) ----------------------------------------
// KV-cache decoding step by step (the steps t = 0 … L−1) and FlashAttention tile by tile (the
// tiles in the kernel's order: query block by query block, each over the key blocks).
// How many steps stage s's loop has: 0 when it is not in one (steps "decode" and "flash").
int recipe_loop_steps(const Trace *tr, int stage);
// Where cell (row, col) of panel ps stands at v's step v->loop: computed before it, at this
// step, not yet, or (a window's cache) dropped again. LOOP_DONE when v->loop < 0, except
// LOOP_ABSENT: a decoding step's score or weight for a key not in the cache yet at that
// step (col > row), with or without a step shown: drawn empty, as a later step, not as a
// masked −∞ key (one the cache holds but the mask hides).
typedef enum LoopCell { LOOP_DONE, LOOP_NOW, LOOP_LATER, LOOP_GONE, LOOP_ABSENT } LoopCell;
LoopCell recipe_loop_cell(const Trace *tr, const View *v, const PanelSpec *ps, int row, int col);
// What happens at step v->loop, in v's language ("" when none): the keys a decoding step
// reads and the cache slot it writes; the tile's queries and keys and what is in fast memory.
void recipe_loop_text(const Trace *tr, const View *v, char *out, size_t n);
// The narration's first sentence at step v->loop ("" when none): a decoding step's query,
// how many cached keys it reads and the one it weighs most; a tile's queries and keys.
void recipe_loop_narration(const Trace *tr, const View *v, char *out, size_t n);

// ---- names and symbols (stages.h's table, as formulas write them) ---------------------
// How stage s and its parameters are written (stages.h's table).
typedef struct StageName {
    const char *sym;           // its symbol in formulas
    const char *weight, *wsym; // the parameter it applies (lesson "weights" key) and its symbol (as shown: Wᵀ)
    const char *bias, *bsym;
    const char *wplain;        // the weight's symbol as PyTorch stores it, (out, in): W_Q
} StageName;
StageName recipe_name_of(const Trace *tr, int s);
// The symbol a stage is written with in formulas ("Q", "x", "key", "z", ...).
const char *recipe_symbol(const Trace *tr, int s, Lang lang);
// The symbol of stage s's weight ("W_Qᵀ", "γ") or bias ("b_Q", "β").
const char *recipe_param_symbol(const Trace *tr, int s, bool bias);
// Stage s's weight as PyTorch stores it, (out, in): "W_Q", "W₁" (γ for a LayerNorm).
const char *recipe_weight_plain(const Trace *tr, int s);
// The symbol of stage s's operand k ("?" when none).
const char *recipe_op_sym(const Trace *tr, int s, int k);
// The stage a panel of stage s is named after: masked_scores without a mask is the
// scores where it is read (softmax), but keeps its name as the masking stage's result.
const char *recipe_display_name(const Trace *tr, int s, bool result);
// The text of family ("title", "name") for stage s in lang: FAMILY.NAME + the recipe's variant
// for this lesson (narration's suffix: "_rms", "_gelu", ...) when the language has it, else
// FAMILY.NAME; name uses recipe_display_name (result: the stage's own panel).
const char *recipe_stage_text(const Trace *tr, int s, const char *family, bool result, Lang lang);
// The FFN's non-linearity of stage s applied to *x (a pre-activation sum): false when s has
// none (not the FFN's hidden layer, or SwiGLU's h, a product with the gate).
bool recipe_activate(const Trace *tr, int s, double *x);
// What the masked cells of stage s's frame hold: the lesson's fill, −∞ in the indexer's scores
// (DeepSeek-V3.2 adds the mask to them as −∞: a masked key is no candidate).
float recipe_masked_value(const Trace *tr, int s);
// The mask fill as the lesson writes it: "−1e9", "−∞".
void recipe_fill_text(float fill, char *buf, size_t n);
// Whether key position j of batch b is padding (a key_padding mask masks it for every query).
bool recipe_key_is_padding(const Trace *tr, int b, int j);
// The key_padding mask's row of batch b (0 = a padded key) and its *n_keys; NULL (0) when the
// lesson has no key_padding mask or b is not one of its batches.
const float *recipe_key_padding_row(const Trace *tr, int b, int *n_keys);
bool recipe_has_bias(const Stage *st);
// The scale is 1/√d_k's reciprocal: √d_k (what PyTorch uses by default).
bool recipe_scale_is_sqrt_dk(const Trace *tr);
// The scale as every text of a frame writes it (the operator, the formula and its note,
// the strip's ÷, the tooltip, the lab menu): one rounding, 6 significant digits ("1.41421"),
// what the strip's division needs to add up. Returns buf.
const char *recipe_scale_text(const Trace *tr, char *buf, size_t n);

// ---- building a frame's panels --------------------------------------------------------
PanelSpec *recipe_new_panel(Layout *L, const char *op, Reads reads);
// A slice of stage `stage` (batch v->batch, head `head`); NULL when there is none.
PanelSpec *recipe_add_stage(Layout *L, const Trace *tr, const View *v, int stage, int head, const char *op,
                            Reads reads);
// The weight (shown transposed, as in x·Wᵀ) or the bias of stage `stage`;
// γ and β of a LayerNorm. Vectors are one row.
PanelSpec *recipe_add_param(Layout *L, const Trace *tr, const View *v, int stage, bool bias, const char *op,
                            Reads reads);
// A term added into the result (its colours on the result's scale).
void recipe_mark_addend(PanelSpec *p, bool yes);
// The stage alone (inputs, the mask, the cache).
void recipe_panels_self(Layout *L, const Trace *tr, const View *v);
// The heads of a per-head stage: n_heads, or n_kv_heads for grouped K and V.
int recipe_heads_of(const Trace *tr, int stage);
// The per-head panels of split / concat: at most LAYOUT_MAX_HEAD_PANELS heads, the
// run of them (aligned to a multiple of that) that holds the selected head.
void recipe_add_head_panels(Layout *L, const Trace *tr, const View *v, int stage, const char *op_first, Reads reads);

// ---- the derivation strip ---------------------------------------------------------------
// A new line of d with n values.
DerivLine *recipe_deriv_line(Derivation *d, const char *label, int n);
// "attn (h0), row 2" / "scores (h0), cell [2, 3]" (col < 0: a row).
void recipe_deriv_title(Derivation *d, const View *v, const PanelSpec *res, int row, int col);

#endif
