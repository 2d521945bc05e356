// layout_parts.h — inside the layout: placing the panels (layout.c) and choosing the part
// of a stage a frame shows (layout_parts.c: projector mode, the printed page's split).
// Not for outside src/view: layout.h is the layout's interface.
#ifndef ATTNVIZ_LAYOUT_PARTS_H
#define ATTNVIZ_LAYOUT_PARTS_H

#include <stdbool.h>

#include "panel.h"

// Places L's panels (L->spec, n_panels) in L->area: cells, numbers, labels, the strip.
void layout_place_panels(Layout *L, const Trace *tr, const View *v);
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

#endif
