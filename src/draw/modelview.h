// modelview.h — the model view: a small map of attention weights per layer and head
// (View.kind VIEW_MODEL), drawn where a stage's panels go (layout.c places the maps).
#ifndef ATTNVIZ_MODELVIEW_H
#define ATTNVIZ_MODELVIEW_H

#include "layout.h"
#include "paint.h"
#include "trace.h"
#include "view.h"

// The maps with their layer and head labels, the one on screen before framed, and the
// probability scale in the legend's place.
void modelview_draw(Canvas *cv, const Layout *L, const Trace *tr, const View *v);
// The head view: the query tokens left, the key tokens right, a line between each pair
// as opaque (and thick) as its weight, in the head's colour; the legend of the lines.
void headview_draw(Canvas *cv, const Layout *L, const Trace *tr, const View *v);

#endif
