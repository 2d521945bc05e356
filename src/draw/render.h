// render.h — the single drawing path. render_frame draws one whole frame of the
// visualizer for a View onto a Canvas (paint.h): the window's renderer, or a
// software renderer on an SDL_Surface (SDL_CreateSoftwareRenderer) for PNG
// export and tests. It reads the size from the canvas, reads no clock (time is
// View.anim) and allocates nothing once its texts are cached, so the same View
// gives the same pixels in the window and in a file. The chrome (header, legend,
// narration, timeline, tabs, help, toast, export progress) is chrome.h's; the cells'
// timing is view/anim.h's.
#ifndef ATTNVIZ_RENDER_H
#define ATTNVIZ_RENDER_H

#include "heatmap.h"
#include "layout.h"
#include "paint.h"
#include "trace.h"
#include "view.h"

// ov: the window's overlays (tooltip, help, toast, picker, export progress); NULL for
// a frame alone (exports, tests).
void render_frame(Canvas *cv, const Trace *tr, const View *v, const Overlays *ov);
// The same with the Layout of this frame computed by the caller (layout_compute for the
// canvas's size): the window keeps it for hit-testing until the next frame.
void render_frame_laid_out(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);

// The same frame recorded on cv's DrawList and not drawn (paint_flush draws it):
// what tests read commands from.
void render_frame_record(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);

// The rendering choice render_frame makes for one cell (tests check pixels against it).
typedef enum CellLook { CELL_VALUE, CELL_MASKED, CELL_NAN } CellLook;
CellLook render_cell_look(const PanelSpec *ps, int row, int col);
// The colour a settled cell's background has (its corners; text is drawn in the middle).
Rgb render_cell_color(const PanelSpec *ps, int row, int col);
// Inset from each cell edge that the renderer leaves as a gap (background).
int render_cell_gap(int cell);
// The page background colour.
Rgb render_background(void);

#endif
