// bars.h — a bar chart beside the panels (Layout.bars, filled by a stage recipe's extra:
// a language model's next-token bars).
#ifndef ATTNVIZ_BARS_H
#define ATTNVIZ_BARS_H

#include "layout.h"
#include "paint.h"
#include "view.h"

// L->bars (nothing when its width is 0): its title, then a row per label, longest first as
// the view ordered them, each bar as long as its value of 1 on the probability palette, the
// value as written at its end.
void bars_draw(Canvas *cv, const Layout *L, const View *v);

#endif
