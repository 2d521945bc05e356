// cellmark.h — frames drawn on a frame's cells: around a row, a column or a cell
// of a panel (clipped to it), and around what a result cell reads in the other
// panels (scene.h's reading rules). The heatmaps' own highlight, the hover, the
// study mode's marks and the pins use them.
#ifndef ATTNVIZ_CELLMARK_H
#define ATTNVIZ_CELLMARK_H

#include "layout.h"
#include "paint.h"
#include "scene.h"

// A frame of thickness t around [x, x + w) × [y, y + h), clipped to panel p (± t).
void cellmark_frame(Canvas *cv, const Layout *L, int p, int x, int y, int w, int h, int t, Rgb c);
// The rectangle a highlight covers in panel p: a row, a column or one cell.
Rect cellmark_rect(const Layout *L, int p, Highlight h);
// Frames what result cell (row, col) of panel res reads in every other panel;
// fills out[] (at most max) with the framed rectangles and returns how many.
int cellmark_operands(Canvas *cv, const Layout *L, int res, int row, int col, int t, Rect *out, int max);
// Whether panel ps is the study mode's hidden result (nothing of it may show).
static inline bool cellmark_hidden(const View *v, const PanelSpec *ps) { return v->hide_result && ps->result; }

#endif
