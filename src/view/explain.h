// explain.h — the tooltip of a heatmap cell: its value and how it was computed
// from the real numbers (dot product term by term, softmax with its sum, …).
// Pure string building into a caller buffer; no SDL, no allocation.
#ifndef ATTNVIZ_EXPLAIN_H
#define ATTNVIZ_EXPLAIN_H

#include <stddef.h>

#include "panel.h"

#define EXPLAIN_MAX_TERMS 6  // terms written out before "… (n terms)"

// Text for cell (row, col) of panel p of L (lines separated by '\n').
void explain_cell(const Trace *tr, const View *v, const Layout *L, int p, int row, int col,
                  char *out, size_t n);
// Text for row `row` of the Σ column of softmax panel p: the sum, term by term.
void explain_row_sum(const Trace *tr, const View *v, const Layout *L, int p, int row, char *out, size_t n);
// Short number for text: 2 decimals, scientific when tiny or huge, −∞/∞/NaN.
void explain_number(float x, char *buf, size_t n);

#endif
