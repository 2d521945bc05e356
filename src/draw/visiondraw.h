// visiondraw.h — a vision transformer's pictures: the image with [CLS]'s attention over its
// patches beside an attention stage (Layout.vision), and each patch's pixels as a small tile in
// place of its label on the token axes.
#ifndef ATTNVIZ_VISIONDRAW_H
#define ATTNVIZ_VISIONDRAW_H

#include <stdbool.h>

#include "paint.h"
#include "layout.h"
#include "view.h"

void visiondraw_overlay(Canvas *cv, const Layout *L, const View *v);
// Patch i's pixels (axis a: AXIS_PATCH row i is patch i; AXIS_QUERY / AXIS_KEY index i > 0 is patch
// i − 1's, 0 is [CLS]) drawn in box, a vision transformer's only. False: nothing drawn (the caller
// writes the label).
bool visiondraw_axis_tile(Canvas *cv, const View *v, AxisKind a, int i, Rect box);

#endif
