// layout.h — what each stage shows (its heatmaps: operands, weight, result) and
// where everything goes for a given output size. Pure geometry in fixed arrays:
// no SDL, no allocation; the renderer draws it and the app hit-tests with it.
//
// Every cell of every heatmap is laid out (up to the lesson limits). Cells are
// fitted to the area (square, or up to 1.5× wider when that enlarges the
// numbers); below LAYOUT_IMAGE_CELL px a panel is drawn as an image (heatmap.h)
// and cells may be a fraction of a pixel. View.zoom magnifies the panels that
// share the zoomed panel's axes inside their fixed viewports; View.zoom_x/y pan.
#ifndef ATTNVIZ_LAYOUT_H
#define ATTNVIZ_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "panel.h"


// In how many parts v's stage is shown in projector mode at w×h (View.part 0 … n − 1):
// 1, or when its numbers do not all fit at the projector's size, the operands then the
// result (2), or each operand then the result.
int layout_projector_parts(const Trace *tr, const View *v, int w, int h);
// The smallest size the narration is drawn at (never under 12 px); the narration box is
// made tall enough for every stage's text at it (up to a third of the window).
int layout_narration_min_px(const Layout *L);
// Fills L for a w×h output showing v's stage of tr (the panels come from scene.h).
void layout_compute(Layout *L, const Trace *tr, const View *v, int w, int h);
// The rectangle of cell (row, col) of panel p (not clipped to the viewport);
// false when out of range or no pixel of it is visible.
bool layout_cell_rect(const Layout *L, int p, int row, int col, Rect *out);
// Screen x of the left edge of column col of panel p (col = cols gives the right
// edge of the last one), and y of the top edge of row row.
int layout_col_x(const Layout *L, int p, int col);
int layout_row_y(const Layout *L, int p, int row);
// Column / row shown at screen x / y of panel p (may be out of range outside the viewport).
int layout_col_at(const Layout *L, int p, int x);
int layout_row_at(const Layout *L, int p, int y);
// The visible cell range of panel p: rows [*r0, *r1], columns [*c0, *c1].
void layout_visible(const Layout *L, int p, int *r0, int *r1, int *c0, int *c1);
// A vocabulary axis longer than LAYOUT_VOCAB_SQUEEZE (a BPE model's) is squeezed into the
// room of LAYOUT_VOCAB_ROOM cells: an image, its cells under a pixel, the stage's other
// panels keeping their numbers (E[token] beside E, logits' h beside W_Uᵀ).
#define LAYOUT_VOCAB_SQUEEZE 64
#define LAYOUT_VOCAB_ROOM 16
// Whether panel p's rows (rows) or columns are squeezed so.
bool layout_squeezed(const Layout *L, int p, bool rows);
// Which cell is under (x, y); false when none.
bool layout_hit_cell(const Layout *L, int x, int y, int *p, int *row, int *col);
// Which row of a softmax's Σ column is under (x, y); false when none.
bool layout_hit_sum(const Layout *L, int x, int y, int *p, int *row);
// Panel whose viewport contains (x, y), or -1.
int layout_hit_panel(const Layout *L, int x, int y);
// Zooms the heatmaps by factor around (x, y) (over a panel; elsewhere around the
// result panel's centre), clamped to [1, layout_max_zoom]. Starting on a panel
// whose axes the zoom does not follow restarts from zoom 1 on that panel's axes.
// Returns true when v changed.
bool layout_zoom_at(View *v, const Layout *L, int x, int y, float factor);
// Pans the zoomed heatmaps by (dx, dy) screen pixels (content follows the mouse).
bool layout_pan(View *v, const Layout *L, int dx, int dy);
// The largest useful zoom of panel p (its cells then are about 100 px × UI scale).
float layout_max_zoom(const Layout *L, int p);
// Whether axis a of v's lesson is labelled with tokens (its query / key tokens, a language
// model's text or vocabulary): its rows and columns then carry the index too, at
// layout_index_px, so "row 8, key 3" in a narration is found on screen.
bool layout_axis_has_tokens(const View *v, AxisKind a);
int layout_index_px(const Layout *L);
// A generous estimate of the width of s drawn at px (DejaVu Sans metrics; CJK
// full width). Layout uses it for label columns; the renderer ellipsizes the rare
// label that is wider still.
int layout_text_width_est(const char *s, int px);
// Digits after the point and font size for numbers of magnitude up to m in a
// w×h cell at UI scale s: 2 decimals, else 1, else none (decimals -1), never
// below LAYOUT_MIN_NUMBER_PX · s. integers: the values are whole numbers (0/1 mask).
void layout_fit_numbers(float m, bool integers, int w, int h, float s, int *decimals, int *px);
// The size of numbers up to m with d decimals in a w × h cell at numbers' scale s (fill:
// their largest part of the cell); 0 when that is under min_px (layout_number_floor).
int layout_number_px_at_least(float m, int d, int w, int h, float s, float fill, int min_px);
// The smallest numbers in cells at UI scale s (outside projector mode): 13 px at
// 1280×720 (LAYOUT_MIN_NUMBER_PX), with the UI below it (at least 10 px), at half its
// rate above it (16 px at 1920×1080).
int layout_min_number_px(float s);
// The step slot under (x, y) as a StepId, or -1.
int layout_hit_step(const Layout *L, int x, int y);
// Batch / head tab under (x, y), or -1.
int layout_hit_batch(const Layout *L, int x, int y);
int layout_hit_head(const Layout *L, int x, int y);
// The checkpoint whose point of the loss curve (Layout.curve) is nearest x, or -1 when
// (x, y) is not on the curve; and the x of checkpoint k's point between x0 and x1 (steps
// on a square-root axis, so the early, fast-changing checkpoints stand apart).
int layout_hit_checkpoint(const Layout *L, const View *v, int x, int y);
int layout_checkpoint_x(const Lesson *ls, int k, int x0, int x1);
// The layer tab at (x, y) (a model of several layers), or -1.
int layout_hit_layer(const Layout *L, int x, int y);
// Room a panel's legend rows need below the narration strip (legend height in px).
int layout_legend_height(const Layout *L);

#endif
