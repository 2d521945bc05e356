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

// Appends to a bounded buffer (always NUL-terminated, cut when full).
typedef struct TipOut {
    char *s;
    size_t n, len;
} TipOut;

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
void tip_put(TipOut *o, const char *t);
// x as tip_number writes it; paren_neg: a negative one in parentheses.
void tip_num(TipOut *o, float x, bool paren_neg);
// A new line "= x": the result a derivation ends with.
void tip_equals(TipOut *o, float x);
// The language's template key with its arguments.
void tip_key(TipOut *o, Lang lang, const char *key, int nargs, const char *const *args);
// "a0×b0 + a1×b1 + … (n terms)" for n terms with strides.
void tip_terms(TipOut *o, Lang lang, const float *a, int as, const float *b, int bs, int n);
// Row r of the (b, h) slice of a stage tensor.
const float *tip_row(const Tensor *t, int b, int h, int r);
int tip_last_dim(const Tensor *t);
// LayerNorm of one row, every term: mean, variance, the normalised value, ·γ + β.
void tip_norm(TipOut *o, Lang lang, const float *row, int n, int col, const Stage *st, float eps, float val);

#endif
