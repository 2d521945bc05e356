// viewdraw.h — the draw half of the view-kind table (src/view/viewkind.h): how each glance
// over the model is painted, where a stage's panels go (its view file placed it in L->area
// and its part of L->view), with the legend in the legend's place. One file each:
//   modelview.c   the model view's maps
//   headview.c    the head view's lines
// The stage's panels are render.c's own.
#ifndef ATTNVIZ_VIEWDRAW_H
#define ATTNVIZ_VIEWDRAW_H

#include "layout.h"
#include "paint.h"
#include "trace.h"
#include "view.h"

// Paints v's glance (View.kind, a row without the stage's panels) from L.
void viewdraw_glance(Canvas *cv, const Layout *L, const Trace *tr, const View *v);

// The rows (viewdraw.c's table points at them).
// The maps with their layer and head labels, the one on screen before framed, and the
// probability scale in the legend's place.
void modelview_draw(Canvas *cv, const Layout *L, const Trace *tr, const View *v);
// The head view: the query tokens left, the key tokens right, a line between each pair
// as opaque (and thick) as its weight, in the head's colour; the legend of the lines.
void headview_draw(Canvas *cv, const Layout *L, const Trace *tr, const View *v);

#endif
