// cursor.h — the cell cursor (Y): the keyboard's way to the tooltip a pointer gets by
// hovering. Arrows move it through a panel's cells, Tab / Shift+Tab to the next /
// previous panel, Y or Esc leave. While it is on, the cell it is on is the one "pointed
// at": its tooltip (the worked sum) shows and the derivation strip writes it out, as
// for the cell under the mouse; the page reads it out (app_describe_a11y).
// Pure view code: no SDL.
#ifndef ATTNVIZ_CURSOR_H
#define ATTNVIZ_CURSOR_H

#include <stdbool.h>

#include "panel.h"

typedef struct CellCursor {
    bool on;
    int panel, row, col; // a panel of the frame's Layout and one of its cells
} CellCursor;

// Turns the cursor on at the first cell of L's result panel (else its first panel);
// false (stays off) when the frame has no panel with cells.
bool cursor_start(CellCursor *c, const Layout *L);
// Keeps the cursor on a cell of L (a new stage, part or head: another set of panels):
// the same panel index and cell where they still exist, clamped otherwise; off when L
// has no panels.
void cursor_clamp(CellCursor *c, const Layout *L);
// Moves by (drow, dcol) cells, stopping at the panel's edges; false when it did not move.
bool cursor_move(CellCursor *c, const Layout *L, int drow, int dcol);
// The next (dir 1) or previous (dir −1) panel, round the frame; the row and column kept
// where the new panel has them.
void cursor_next_panel(CellCursor *c, const Layout *L, int dir);
// The cell the frame explains: the cursor's when it is on (ov->cursor), else the one
// under the pointer (ov->hover). False when there is none.
bool cursor_pointed_cell(const Layout *L, const Overlays *ov, int *p, int *row, int *col);

#endif
