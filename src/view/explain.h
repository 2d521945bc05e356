// explain.h — the tooltip of a heatmap cell: its value and how it was computed
// from the real numbers (dot product term by term, softmax with its sum, …): the
// common lines here, the computation of a result cell from its recipe (recipe.h).
// Pure string building into a caller buffer; no SDL, no allocation.
#ifndef ATTNVIZ_EXPLAIN_H
#define ATTNVIZ_EXPLAIN_H

#include <stddef.h>

#include "panel.h"
#include "tip.h" // tip_number: numbers as tooltips write them

// Text for cell (row, col) of panel p of L (lines separated by '\n'). Its worked sums
// add up as written: the operands get the fewest decimals (from TIP_DECIMALS) with
// which every worked sum of the frame's result panel does (tip_adds_up), the same in each
// of its tooltips: one value, one rounding in a frame (found once for the frame, kept);
// where none up to TIP_MAX_DECIMALS do, the result line says "≈" (the header line has the
// exact value). A result (the header's value, the last "= x") is written as the cells,
// TIP_DECIMALS: a worked sum's operands carry the digits it needs to add up to that.
void explain_cell(const Trace *tr, const View *v, const Layout *L, int p, int row, int col,
                  char *out, size_t n);
// Text for row `row` of the Σ column of softmax panel p: the sum, term by term (adding
// up as explain_cell's).
void explain_row_sum(const Trace *tr, const View *v, const Layout *L, int p, int row, char *out, size_t n);
// The same texts with the operands written as the cells show them, `dec` decimals
// (TipOut.cells): what a student computing from the screen reads (tip_bounds).
void explain_cell_as_cells(const Trace *tr, const View *v, const Layout *L, int p, int row, int col, int dec,
                           char *out, size_t n);
void explain_row_sum_as_cells(const Trace *tr, const View *v, const Layout *L, int p, int row, int dec, char *out,
                              size_t n);

#endif
