// tip.h — the pieces a cell's tooltip is written with: a bounded text buffer,
// numbers as the screen writes them, the language's templates, sums written out
// term by term. explain.c writes the common part of every tooltip (the cell, its
// value, what it was before an edit); each stage kind's recipe writes how its
// result cell was computed (StageRecipe.tip) with these.
#ifndef ATTNVIZ_TIP_H
#define ATTNVIZ_TIP_H

#include <stdbool.h>
#include <stddef.h>

#include "i18n.h"
#include "panel.h"

#define TIP_MAX_TERMS 6  // terms written out before "… (n terms)"

#define TIP_DECIMALS 2     // a result's decimals in a tooltip (tip_number)
#define TIP_MAX_DECIMALS 6 // an operand's most decimals (a worked sum that needs them to add up)

// Appends to a bounded buffer (always NUL-terminated, cut when full). The operands of
// a worked sum (tip_num, tip_terms) are written with `dec` decimals: explain_cell picks
// the fewest (from TIP_DECIMALS) with which every worked sum adds up to its result as
// shown (tip_adds_up); exact whole numbers without any ("28×0.3467"). `cells`: written
// as the cells show them instead (fixed point, whole numbers too), for the interval of
// answers a student computing from the screen can reach (tip_bounds).
typedef struct TipOut {
    char *s;
    size_t n, len;
    int dec;
    bool cells;
    bool approx;   // no decimals make it add up: results say "≈" (tip_equals)
} TipOut;

// A buffer for a tooltip: operands at TIP_DECIMALS.
TipOut tip_out(char *s, size_t n);

// The result cell a recipe explains, and what it is read from.
typedef struct TipCell {
    const Trace *tr;
    const View *v;
    const PanelSpec *ps;   // the result panel
    const Stage *st;       // its stage
    Lang lang;
    int b, h;              // the batch and head shown
    int row, col;
    float val;             // the cell's value
    bool masked;           // it has the masked look
    const Tensor *t0, *t1; // the stage's first two operands' tensors (NULL: none)
} TipCell;

// Short number for text: 2 decimals, scientific when tiny or huge, −∞/∞/NaN.
void tip_number(float x, char *buf, size_t n);
// A number for inside a formula: negative ones in parentheses ("x − (−0.01)").
void tip_paren_number(float x, char *buf, size_t n);
// x with d decimals (tip_number's form otherwise: NaN, ∞, scientific when tiny or huge).
void tip_number_dec(float x, int d, char *buf, size_t n);
void tip_put(TipOut *o, const char *t);
// An operand of a worked sum, with o's decimals (see TipOut); paren_neg: a negative one
// in parentheses. Below 0.005 (what TIP_DECIMALS writes as 0.00) it is scientific, with no
// fewer significant digits than o's decimals would give it (0.00002 was 2.47e-05's step).
void tip_num(TipOut *o, float x, bool paren_neg);
// x as an operand of o, into buf (tip_num without the parentheses).
void tip_operand(const TipOut *o, float x, char *buf, size_t n);
// A new line "= x": the result a worked sum ends with (TIP_DECIMALS).
void tip_equals(TipOut *o, float x);
// A new line "= " then x as an operand (a step of a chain: "= exp(…) / Σ\n= 0.37 / 1.50").
void tip_step(TipOut *o, float x);

// ---- worked sums that add up -------------------------------------------------------------
// A worked sum is a chain of lines starting "= " (or pieces " = " on one line) ending in a
// number: "= 28×(−0.1034) + 29×0.3467 + (−0.46)\n= 10.06". Each piece that is arithmetic
// (numbers, + − × · /, parentheses, exp) is evaluated with its numbers as written.
//
// Evaluates one piece: its value with the numbers as written, and the interval it lies in
// when each number stands for anything that rounds to it (half a unit of its last digit;
// a whole number without a point is exact). False: not arithmetic.
bool tip_eval(const char *piece, double *val, double *lo, double *hi);
// Whether every worked sum in text adds up: each arithmetic piece of a chain, evaluated,
// lies within half a unit of the last digit of the number the chain ends with. why (may
// be NULL) names the first that does not.
bool tip_adds_up(const char *text, char *why, size_t n);
// The value (numbers as written) and interval (tip_eval) of the first arithmetic piece of
// text's last chain with at least two numbers: the worked sum with its operands; false
// when there is none.
bool tip_bounds(const char *text, double *val, double *lo, double *hi);
// The language's template key with its arguments.
void tip_key(TipOut *o, Lang lang, const char *key, int nargs, const char *const *args);
// "a0×b0 + a1×b1 + … (n terms)" for n terms with strides.
void tip_terms(TipOut *o, Lang lang, const float *a, int as, const float *b, int bs, int n);
// Row r of the (b, h) slice of a stage tensor.
const float *tip_row(const Tensor *t, int b, int h, int r);
int tip_last_dim(const Tensor *t);
// LayerNorm of one row, every term: mean, variance, the normalised value, ·γ + β.
void tip_norm(TipOut *o, Lang lang, const float *row, int n, int col, const Stage *st, float eps, float val);
// RMSNorm of one row: the mean of the squares, the normalised value, · γ.
void tip_rms_norm(TipOut *o, Lang lang, const float *row, int n, int col, const Stage *st, float eps, float val);

// ---- where the box goes ------------------------------------------------------------------
// What a tooltip box covers. hard: what it must not — the cells it explains (avoid: the
// hovered cell, the operands' rows and columns it reads, the strip that writes it out, pinned
// boxes), every panel's title, and a third of the result panel or more (all it covers of it,
// then); soft: the rest, weighted by what a reader loses (the result's numbers 4, an operand's
// 3, the header, timeline and tabs 2, the narration and legend 1), in pixels.
typedef struct TipCover {
    long hard, soft;
} TipCover;
TipCover tip_cover(const Layout *L, Rect box, const Rect *avoid, int n_avoid);
// The top-left corner of a bw×bh tooltip for `cell` in L's output: beside the cell (right,
// left) or below or above it, slid along it (always across its middle line), the place that
// covers least (tip_cover: nothing hard first, then the least soft, then the nearest); when
// each covers something hard, under or over the heatmaps, then the nearest place anywhere
// that does not (or covers least of it). Inside the output when the box fits in it.
void tip_place(const Layout *L, Rect cell, int bw, int bh, const Rect *avoid, int n_avoid, int *bx, int *by);

#endif
