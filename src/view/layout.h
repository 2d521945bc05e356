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

#include "colormap.h"
#include "trace.h"
#include "view.h"

#define LAYOUT_MAX_PANELS 12
#define LAYOUT_MAX_HEAD_PANELS 8  // split/concat show at most this many heads
#define LAYOUT_MAX_TABS 16        // batch or head tabs
#define LAYOUT_IMAGE_CELL 10      // cells narrower or shorter than this (px) are drawn as an image
#define LAYOUT_MIN_NUMBER_PX 13   // numbers in cells are never smaller (× UI scale, at least 10 px)
#define LAYOUT_PROJECTOR_NUMBER_PX 35 // projector mode (View.projector): × UI scale (28 px at 1024×768)
#define LAYOUT_Q 256              // sub-pixel unit of cell sizes and offsets (1/256 px)

typedef struct Rect {
    int x, y, w, h;
} Rect;

typedef enum AxisKind { AXIS_INDEX, AXIS_QUERY, AXIS_KEY, AXIS_NONE } AxisKind; // NONE: no labels (a vector)

// How a panel relates to result cell (i, j) (hover and animation highlight it):
typedef enum Reads {
    READS_NONE,
    READS_ROW,        // row i (x in x·Wᵀ, Q in Q·Kᵀ, attn in attn·V, the sum a LayerNorm normalises)
    READS_COL,        // column j (Wᵀ, Kᵀ, V; a bias, γ or β: element j)
    READS_CELL,       // cell (i, j) (both terms of a sum, the score a mask fills)
    READS_HEAD_SRC,   // split: head panel h cell (i, j) comes from source cell (i, h·d + j)
    READS_HEAD_DST,   // concat: result cell (i, j) comes from head panel j / d, cell (i, j mod d)
    READS_TILE,       // flash: result cell (i, kb) reads row i, key block kb (tile_cols keys) of the scores
} Reads;

// Colour-scale groups: a tensor and every view of it share one scale in a frame
// (Q and its heads, head outputs and concat, scores and masked scores).
typedef struct ScaleGroup {
    ColorScale scale;
    bool mask01;           // the 0/1 mask: 1 = attend, 0 = masked (hatched)
    char label[96];        // what the legend calls it: the names of its panels
} ScaleGroup;

// One heatmap: a 2-D slice of a tensor. Element (r, c) is data[r*rs + c*cs].
typedef struct PanelSpec {
    const float *data;
    int rows, cols, rs, cs;     // full slice
    int shown_rows, shown_cols; // = rows, cols: every cell is drawn (zoom decides which are visible)
    const float *mask;          // (rows, cols) row-major, 0 → masked look; NULL = none
    int stage;                  // trace stage shown, or the stage whose parameter this is
    bool is_weight;             // a parameter of the stage (weight, bias, γ, β), not a stage tensor
    bool is_bias;               // with is_weight: the bias / β (Stage.bias), else the weight / γ
    bool vector;                // a 1-row parameter (bias, γ, β): one element per column
    bool stacked;               // placed under the panel before it (a bias under its weight, β under γ):
                                // the same columns, no width of its own
    char title[64];             // caption, as the lesson names it ("Q · h1", "W_Qᵀ", "b_Q", "γ")
    char source[24];            // stage name as in --dump, or the parameter's name ("w_q", "b_q")
    int group;                  // index into Layout.group: the colour scale it is drawn with
    float num_max;              // the largest |value| its numbers print (the shown batch's): their digits
    bool addend;                // a term added into the result (a bias, β, a residual): coloured on
                                // the result's scale, so the sum's parts compare by colour
    Reads reads;                // what it shows of a result cell's computation
    bool transposed;            // shown transposed (Kᵀ, Wᵀ)
    bool result;                // the current stage's own tensor
    bool row_sums;              // softmax: a Σ column to the right
    int head;                   // head of this slice, -1 none
    int head_blocks;            // >0: columns are this many head-coloured blocks
    int block_cols;             // columns per block
    bool neg_inf_masked;        // −∞ cells have the masked look (a running max before any key is seen)
    int tile_rows, tile_cols;   // >0: FlashAttention's tiles (block_q × block_k), outlined over the cells
    int kv_group;               // >0: shared K/V head(s) (GQA / MQA), each read by this many query
                                // heads: drawn in ink, not in one query head's colour
    AxisKind row_axis, col_axis;
    ColorScale scale;
    char op[16];                // operator left of the panel ("·", "+", "=", "/1.41 =", "→", "")
    int decimals;               // digits after the point in cells; -1 = no numbers
    int px_cell;                // font size of the numbers
    bool any_masked, any_nan;   // some cell has the masked / NaN look
    // The what-if lab: the same slice of the original lesson (View.ref), read with the
    // same strides, to mark the cells an edit changed; ref_one: the original had no
    // such tensor and means 1 everywhere (a mask added by an edit). Both unset: no marks.
    const float *ref;
    bool ref_one;
    bool any_changed;           // some cell differs from the original (the legend explains the mark)
} PanelSpec;

typedef struct Layout {
    int w, h;
    float s;                     // UI scale: 1 at 1280×720
    float num_s;                 // the scale numbers in cells are sized with: s, larger in projector mode
    bool split;                  // projector mode: the stage shows one part of its panels (part)
    int part, n_parts;           // which of n_parts: operands (together or one by one), the result last
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
    Rect panel[LAYOUT_MAX_PANELS];    // the viewport of the cells (all of them when not zoomed)
    Rect caption[LAYOUT_MAX_PANELS];  // name + shape above
    Rect op[LAYOUT_MAX_PANELS];       // the operator left of the panel
    int cell[LAYOUT_MAX_PANELS];      // nominal cell side in whole pixels (the smaller of w, h)
    // Cell geometry in 1/LAYOUT_Q px: column j spans screen x from
    // panel.x + ceil((j·cell_wq − off_xq) / Q) to that of j + 1 (rows likewise), so
    // pixel x shows column floor(((x − panel.x)·Q + off_xq) / cell_wq): exactly one
    // cell per pixel, cells narrower than a pixel are skipped (subsampled).
    int fit_wq, fit_hq;               // the fitted cell (all panels), before zoom: wider than tall
                                      // (up to 1.5×) when that makes the numbers larger
    int cell_wq[LAYOUT_MAX_PANELS], cell_hq[LAYOUT_MAX_PANELS];
    int off_xq[LAYOUT_MAX_PANELS], off_yq[LAYOUT_MAX_PANELS]; // content scrolled out at the left / top
    bool zoom_x[LAYOUT_MAX_PANELS], zoom_y[LAYOUT_MAX_PANELS]; // follows View.zoom in x / y
    bool image[LAYOUT_MAX_PANELS];    // drawn as an image: cells < LAYOUT_IMAGE_CELL px, no gaps, no numbers
    int label_w[LAYOUT_MAX_PANELS];   // width of the row-label column left of the panel
    bool row_labels[LAYOUT_MAX_PANELS]; // false: shares the labels of the panel to its left
    int sum_w[LAYOUT_MAX_PANELS];     // width of the Σ column (row_sums), 0 none
    int sum_decimals[LAYOUT_MAX_PANELS], sum_px[LAYOUT_MAX_PANELS]; // numbers in the Σ column
    int row_label_w, col_label_h;     // row_label_w: the widest label column
    int result_panel;                 // index of the result, -1 none
    int n_groups;                     // colour-scale groups of the panels (legend rows)
    ScaleGroup group[LAYOUT_MAX_PANELS];
    Rect deriv;                       // the derivation strip under the panels (scene.h), w = 0: none
    int deriv_line_h;                 // the height of one of its lines
    bool deriv_shrank;                // the strip made the cells smaller (only while they keep numbers)
    char formula[320];                // the stage's formula, true for this lesson (scene.h)
    char formula_note[400];           // the numbers it uses ("√d_k = √2 = 1.414")
    Rect narration, legend;
} Layout;

// In how many parts v's stage is shown in projector mode at w×h (View.part 0 … n − 1):
// 1, or when its numbers do not all fit at the projector's size, the operands then the
// result (2), or each operand then the result.
int layout_projector_parts(const Trace *tr, const View *v, int w, int h);
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
// Label of position i on an axis: the lesson's token, or the index.
const char *layout_axis_label(const View *v, AxisKind a, int i, char *buf, size_t n);
// A generous estimate of the width of s drawn at px (DejaVu Sans metrics; CJK
// full width). Layout uses it for label columns; the renderer ellipsizes the rare
// label that is wider still.
int layout_text_width_est(const char *s, int px);
// Digits after the point and font size for numbers of magnitude up to m in a
// w×h cell at UI scale s: 2 decimals, else 1, else none (decimals -1), never
// below LAYOUT_MIN_NUMBER_PX · s. integers: the values are whole numbers (0/1 mask).
void layout_fit_numbers(float m, bool integers, int w, int h, float s, int *decimals, int *px);
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
// A 2-D slice of t at batch b, head h into p (data, rows, cols, strides, head).
void layout_slice(PanelSpec *p, const Tensor *t, int b, int h);
// Swaps p's rows and columns (Kᵀ, Wᵀ).
void layout_transpose(PanelSpec *p);
// Room a panel's legend rows need below the narration strip (legend height in px).
int layout_legend_height(const Layout *L);

#endif
