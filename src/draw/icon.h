// icon.h — the application icon, drawn through paint.h like every frame: a
// causal attention pattern (4 queries × 4 keys) on the accent colour. The
// same calls give the PNG sizes (SDL backend) and the scalable SVG (vector
// backend) that `make install` puts in the icon theme.
#ifndef ATTNVIZ_ICON_H
#define ATTNVIZ_ICON_H

#include "paint.h"

// Draws the icon filling the canvas (a square of paint_size's width).
void icon_draw(Canvas *cv);

#endif
