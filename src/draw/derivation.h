// derivation.h — the strip under the panels that writes out the sub-steps of
// one result row or cell with their numbers (scene.h's Derivation): softmax,
// a score's dot product, LayerNorm. Lines appear one by one as the row is
// computed in the transition.
#ifndef ATTNVIZ_DERIVATION_H
#define ATTNVIZ_DERIVATION_H

#include "frame.h"
#include "layout.h"
#include "paint.h"

// Draws the frame's strip (F->deriv, its values as F->deriv_text writes them) into L->deriv;
// F->deriv_shown in [0, 1] is how far its lines have appeared.
void derivation_draw(Canvas *cv, const Layout *L, const Frame *F);

#endif
