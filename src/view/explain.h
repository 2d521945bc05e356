// explain.h — the tooltip of a heatmap cell: its value and how it was computed
// from the real numbers (dot product term by term, softmax with its sum, …): the
// common lines here, the computation of a result cell from its recipe (recipe.h).
// Pure string building into a caller buffer; no SDL, no allocation.
#ifndef ATTNVIZ_EXPLAIN_H
#define ATTNVIZ_EXPLAIN_H

#include <stddef.h>

#include "panel.h"
#include "tip.h" // tip_number: numbers as tooltips write them

// Text for cell (row, col) of panel p of L (lines separated by '\n').
void explain_cell(const Trace *tr, const View *v, const Layout *L, int p, int row, int col,
                  char *out, size_t n);
// Text for row `row` of the Σ column of softmax panel p: the sum, term by term.
void explain_row_sum(const Trace *tr, const View *v, const Layout *L, int p, int row, char *out, size_t n);

#endif
