// anim.h — the timing of a stage's transition: how far each result cell has appeared
// at View.anim, which cell is being computed, whether a cell shows its value yet.
// The view decides these; the renderer, the overlays and the tests read them (draw
// only paints what they say). Pure functions, no SDL, no allocation.
#ifndef ATTNVIZ_ANIM_H
#define ATTNVIZ_ANIM_H

#include <stdbool.h>

#include "layout.h"
#include "recipe.h"

// How the frame's stage animates and how far: its recipe's AnimKind and View.anim eased
// (ease_in_out_cubic), the two every cell's timing is read from.
typedef struct AnimFrame {
    AnimKind kind;
    float e;
} AnimFrame;
AnimFrame anim_frame(const Trace *tr, const View *v);

// How far cell (row, c) of a rows×cols result has appeared (0 … 1) at eased progress e.
float anim_cell_progress(AnimKind k, float e, int row, int c, int rows, int cols);
// The result cell being computed at eased progress e (row-wise and cell-wise animations:
// *c is -1 for a whole row); false for the other kinds.
bool anim_computing_cell(AnimKind k, float e, const PanelSpec *ps, int *row, int *c);
// Whether cell (row, col) of panel p shows its value in v's frame: false while the
// transition into the stage has not computed it yet (a result row, cell or Σ still to
// come: it has no tooltip either), or a loop's later step has not. col -1: the row's Σ.
bool anim_cell_shown(const Layout *L, const Trace *tr, const View *v, int p, int row, int col);

#endif
