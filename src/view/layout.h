// layout.h — what each stage shows (its heatmaps: operands, weight, result) and
// where everything goes for a given output size. Pure geometry in fixed arrays:
// no SDL, no allocation; the renderer draws it and the app hit-tests with it.
#ifndef ATTNVIZ_LAYOUT_H
#define ATTNVIZ_LAYOUT_H

#include <stdbool.h>

#include "colormap.h"
#include "trace.h"
#include "view.h"

#define LAYOUT_MAX_PANELS 10
#define LAYOUT_MAX_HEAD_PANELS 8  // split/concat show at most this many heads
#define LAYOUT_MAX_TABS 16        // batch or head tabs
#define LAYOUT_MAX_CELLS 64       // rows or columns drawn per heatmap (the rest is cut, marked …)

typedef struct Rect {
    int x, y, w, h;
} Rect;

typedef enum AxisKind { AXIS_INDEX, AXIS_QUERY, AXIS_KEY } AxisKind;

// One heatmap: a 2-D slice of a tensor. Element (r, c) is data[r*rs + c*cs].
typedef struct PanelSpec {
    const float *data;
    int rows, cols, rs, cs;     // full slice
    int shown_rows, shown_cols; // ≤ LAYOUT_MAX_CELLS
    const float *mask;          // (rows, cols) row-major, 0 → masked look; NULL = none
    int stage;                  // trace stage shown, or the stage whose weight this is
    bool is_weight;             // shows Stage.weight transposed (in, out)
    bool transposed;            // shown transposed (Kᵀ, Wᵀ)
    bool result;                // the current stage's own tensor
    bool row_sums;              // softmax: a Σ column to the right
    int head;                   // head of this slice, -1 none
    int head_blocks;            // >0: columns are this many head-coloured blocks
    int block_cols;             // columns per block
    AxisKind row_axis, col_axis;
    ColorScale scale;
    const char *op_before;      // operator symbol left of the panel ("·", "=", "→", "")
    int decimals;               // digits after the point in cells; -1 = no numbers
    int px_cell;                // font size of the numbers
} PanelSpec;

typedef struct Layout {
    int w, h;
    float s;                     // UI scale: 1 at 1280×720
    int px_title, px_body, px_small, px_formula, px_op, px_help;
    Rect timeline;
    int n_steps;
    StepId step_id[STEP_COUNT];
    Rect step_rect[STEP_COUNT];
    Rect tabs;
    int n_batch_tabs, n_head_tabs;
    Rect batch_label, head_label;
    Rect batch_tab[LAYOUT_MAX_TABS], head_tab[LAYOUT_MAX_TABS];
    Rect status;                 // play/speed/palette, right of the tabs
    Rect header;                 // stage name, shapes, formula
    Rect area;                   // where the heatmaps go
    int n_panels;
    PanelSpec spec[LAYOUT_MAX_PANELS];
    Rect panel[LAYOUT_MAX_PANELS];    // the cells
    Rect caption[LAYOUT_MAX_PANELS];  // name + shape above
    Rect op[LAYOUT_MAX_PANELS];       // the operator left of the panel
    int cell[LAYOUT_MAX_PANELS];      // cell side in pixels
    int row_label_w, col_label_h;
    int result_panel;                 // index of the result, -1 none
    Rect narration, legend;
} Layout;

// Fills L for a w×h output showing v's stage of tr.
void layout_compute(Layout *L, const Trace *tr, const View *v, int w, int h);
// The rectangle of cell (row, col) of panel p; false when out of range or not shown.
bool layout_cell_rect(const Layout *L, int p, int row, int col, Rect *out);
// Which cell is under (x, y); false when none.
bool layout_hit_cell(const Layout *L, int x, int y, int *p, int *row, int *col);
// The step slot under (x, y) as a StepId, or -1.
int layout_hit_step(const Layout *L, int x, int y);
// Batch / head tab under (x, y), or -1.
int layout_hit_batch(const Layout *L, int x, int y);
int layout_hit_head(const Layout *L, int x, int y);
bool rect_contains(Rect r, int x, int y);
bool rect_overlap(Rect a, Rect b);
// Value of element (r, c) of a panel (the weight or tensor slice).
float panel_value(const PanelSpec *ps, int r, int c);
// Slice helpers: number of head slices of a stage's tensor (1 when it has no head axis).
bool stage_has_heads(const Stage *st);

#endif
