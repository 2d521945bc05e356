// layout_inner.h — inside the layout, one module in three files that only they include:
// placing the panels (layout.c), choosing the part of a stage a frame shows
// (layout_parts.c: projector mode, the printed page's split, two rows; the strip's decimals) and
// the glances' geometry (view_model.c, view_heads.c: viewkind.h).
// Not for outside src/view: layout.h is the layout's interface.
#ifndef ATTNVIZ_LAYOUT_INNER_H
#define ATTNVIZ_LAYOUT_INNER_H

#include <stdbool.h>

#include "panel.h"

// Places L's panels (L->spec, n_panels) in L->area: cells, numbers, labels, the strip.
void layout_place_panels(Layout *L, const Trace *tr, const View *v);
// Outside projector mode and print: where L's panels (not yet placed) in one row would
// leave a panel without numbers but two rows give every panel numbers, places them in two
// (the split whose smallest numbers are largest; the second row starts with its operator
// and ends with the result and the strip) and returns true; else false (one row: place them).
bool layout_place_panels_in_rows(Layout *L, const Trace *tr, const View *v);
// The width of the column of the operator left of panel p (10 px × scale without one).
int layout_operator_w(const Layout *L, const View *v, const PanelSpec *p);
// The smallest number size in L's cells (projector mode: LAYOUT_PROJECTOR_MIN_NUMBER_PX × scale).
int layout_number_floor(const Layout *L);
// Keeps one part of L's panels, in their order: with `each`, part k < the number of
// operand columns is operand column k alone; without, part 0 is every operand. The last
// part is the result alone.
void layout_keep_part(Layout *L, int part, bool each);
// Projector mode, laid out with every panel: true when L now holds part View.part of the
// stage's parts (L->n_parts; to be placed again), false when it is shown whole.
bool layout_projector_split(Layout *L, const Trace *tr, const View *v);
// Projector mode: the operators as large as the numbers beside them (L->px_op).
void layout_scale_operators(Layout *L);
// One value, one rounding (once the numbers are sized): a panel whose numbers the shown
// strip writes out (its input row, a q or k row, the result) shows them with the strip's
// decimals where they fit at the minimum size (the scores' cells wrote 0.9 beside the
// strip's 0.85).
void layout_match_strip_decimals(Layout *L, const Trace *tr, const View *v);
// Before a stage is split into parts (the page, projector mode): marks the panels the
// strip writes out, so each part's cells keep the strip's decimals (the strip is under
// the result's part; the operands' part has none of its own).
void layout_mark_strip_decimals(Layout *L, const Trace *tr, const View *v);
// The width of s drawn at px: measured by the view's fonts when it has them, else estimated.
int layout_text_w(const View *v, const char *s, int px);
// The stage's panels in L->area (the place of VIEW_PANELS' row, viewkind.c): in one row or
// two, projector mode's and the printed page's parts, the strip's decimals.
void layout_place_stage(Layout *L, const Trace *tr, const View *v);

// The timeline (a slot per step; none on an experiment's frame, whose row names it) and the tabs
// with the status (layout_chrome.c); m: the margin, gap: between the rows.
void layout_place_chrome(Layout *L, const Trace *tr, const View *v, int m, int gap);

#endif
