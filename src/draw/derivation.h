// derivation.h — the strip under the panels that writes out the sub-steps of
// one result row or cell with their numbers (scene.h's Derivation): softmax,
// a score's dot product, LayerNorm. Lines appear one by one as the row is
// computed in the transition.
#ifndef ATTNVIZ_DERIVATION_H
#define ATTNVIZ_DERIVATION_H

#include "layout.h"
#include "paint.h"
#include "scene.h"

// Draws d into L->deriv; `shown` in [0, 1] is how far its lines have appeared.
void derivation_draw(Canvas *cv, const Layout *L, const Derivation *d, float shown);

#endif
