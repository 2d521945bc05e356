// panel.h — what a frame shows, as types: a panel is a 2-D slice of a tensor
// (PanelSpec), a Layout is the frame's panels, their colour-scale groups and
// every place on screen. scene.c fills the panels from the stage's recipe,
// layout.c places them; the renderer, hover, --describe and the tests read
// them. Pure data and the few functions on a panel alone (no geometry).
#ifndef ATTNVIZ_PANEL_H
#define ATTNVIZ_PANEL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "colormap.h"
#include "geom.h" // Rect
#include "trace.h"
#include "view.h"

#define LAYOUT_MAX_PANELS 12
#define LAYOUT_MAX_HEAD_PANELS 8  // split/concat show at most this many heads
#define LAYOUT_MAX_TABS 16        // batch or head tabs
#define LAYOUT_IMAGE_CELL 10      // cells narrower or shorter than this (px) are drawn as an image
#define LAYOUT_MIN_NUMBER_PX 13   // numbers in cells are never smaller (× UI scale, at least 12 px)
#define LAYOUT_MIN_TEXT_PX 12     // no text is smaller, at any window size (800×600 included)
#define LAYOUT_PROJECTOR_NUMBER_PX 35 // projector mode (View.projector): × UI scale (28 px at 1024×768)
#define LAYOUT_PROJECTOR_MIN_NUMBER_PX 15 // and never smaller than this × UI scale: a stage is split below it
#define LAYOUT_NUMBER_FILL 0.36f    // numbers in cells at most this part of the cell's smaller side
#define LAYOUT_PROJECTOR_NUMBER_FILL 0.5f // in projector mode: 35 px in a 70 px cell (5 rows fit at 16:9)
#define LAYOUT_MAX_CELL 76           // cells are at most this large (px × the numbers' scale)
#define LAYOUT_Q 256              // sub-pixel unit of cell sizes and offsets (1/256 px)

// NONE: no labels (a vector); VOCAB: a language model's vocabulary (its token strings)
// AXIS_PATCH: a vision transformer's patches before [CLS] joins them (row i: patch i + 1)
// AXIS_EXP_ROW, AXIS_EXP_ROW2: an experiment's rows (View.exp: its layers or heads; ROW2 a second
// panel's); AXIS_EXP_SUM: the attribution's Σ heads, rest, logit
typedef enum AxisKind {
    AXIS_INDEX, AXIS_QUERY, AXIS_KEY, AXIS_NONE, AXIS_VOCAB, AXIS_PATCH, AXIS_EXP_ROW, AXIS_EXP_ROW2, AXIS_EXP_SUM,
    AXIS_EXP_BLANK // (no labels: a column its panel's title names)
} AxisKind;

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
    char title[64];             // caption, as the lesson names it ("Q (h1)", "W_Qᵀ", "b_Q", "γ")
    char source[32];            // (STAGE_NAME_MAX) stage name as in --dump, or the parameter's name ("w_q", "b_q")
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
    // What the what-if lab edits through cell (r, c): element edit_base + r·edit_rs + c·edit_cs
    // of the lesson's tensor edit_tensor (a LessonTensor of edit.h: an input, the mask, a
    // weight), or -1: the panel is computed (its stage's own numbers), not editable.
    int edit_tensor;
    size_t edit_base;
    int edit_rs, edit_cs;
    int kv_group;               // >0: shared K/V head(s) (GQA / MQA), each read by this many query
                                // heads: drawn in ink, not in one query head's colour
    AxisKind row_axis, col_axis;
    ColorScale scale;
    char op[16];                // operator left of the panel ("·", "+", "=", "/1.41421 =", "→", "")
    int decimals;               // digits after the point in cells; -1 = no numbers
    bool two_decimals;          // 2 decimals or none (ALiBi's bias: its 0.25 steps at 1 decimal
                                // read 0.0, 0.2, 0.5, 0.8 and hide the straight line it teaches)
    int px_cell;                // font size of the numbers
    bool bare_point;            // numbers under 1 written without their 0: ".43", "−.03" (where the 0
                                // leaves no room: layout.c), at the same `decimals`
    int strip_dec;              // the decimals the stage's derivation strip writes this panel's numbers
                                // with (0: none); its cells take them where they fit (one rounding)
    bool any_masked, any_nan;   // some cell has the masked / NaN look
    // The what-if lab: the same slice of the original lesson (View.ref), read with the
    // same strides, to mark the cells an edit changed; ref_one: the original had no
    // such tensor and means 1 everywhere (a mask added by an edit). Both unset: no marks.
    const float *ref;
    bool ref_one;
    bool any_changed;           // some cell differs from the original (the legend explains the mark)
    // A difference panel (the compare view's Δ = B − A, data its exact values): with diff_dec
    // ≥ 0 a cell's value is diff_b's number minus diff_a's (slices read with the same strides),
    // each rounded to diff_dec decimals as their panels show them, so the cell shows the
    // difference of the numbers on screen (a non-finite one: data's). NULL: data's values.
    const float *diff_a, *diff_b;
    int diff_dec;
    // A cell that writes a token, not its number (the logit lens: the top token, its probability
    // the colour): the vocabulary id of cell (r, c) at tokens[r*rs + c*cs]; NULL: numbers.
    const int *tokens;
    // A folded row (recipe_fold_row): the panel shows row fold_row of its stage's slice as a
    // rows × cols matrix (a linear layer's state S_t, d_k × d_v; k̂_t as a column): cell (r, c) is
    // that row's element r·cols + c, which the tooltip names and explains.
    bool folded;
    int fold_row;
} PanelSpec;

// The model view's part of a Layout (View.kind VIEW_MODEL, view_model.c): a map per layer
// (row) and head (column) of its attention weights, batch View.batch; stage: each layer's attn.
typedef struct ModelViewLayout {
    int layers, heads;
    Rect map[TRACE_MAX_LAYERS][LAYOUT_MAX_TABS];
    Rect row_label[TRACE_MAX_LAYERS], col_label[LAYOUT_MAX_TABS];
    int stage[TRACE_MAX_LAYERS];
    // its token labels: the queries left of each layer's first map, the keys above each
    // head's top map, at tok_px (0: none), every tok_step-th query where a row is thinner and
    // every tok_step_k-th key where a column is narrower than the widest key's label
    int tok_px, tok_step, tok_step_k;
} ModelViewLayout;

// The head view's part (View.kind VIEW_HEADS, view_heads.c): layer `layer`'s attention
// (stage `stage`, -1: none), query token i at (xq, y0 + i·dy), key token j at (xk, …),
// n query tokens, labels beside.
typedef struct HeadViewLayout {
    int stage, layer, n;
    int xq, xk, y0, dy;
} HeadViewLayout;

// A bar chart beside the panels (Layout.bars): a bar per label, as long as its value of 1
// (on the probability palette), the value as written at its end; a cut one (sampling's
// top-k / top-p dropped it) drawn faint with no bar. Labels are borrowed (the lesson's
// strings).
#define LAYOUT_MAX_BARS 10
typedef struct BarChart {
    Rect r;
    char title[160];
    char subtitle[160]; // a second line under the title ("" none)
    int n;
    const char *label[LAYOUT_MAX_BARS];
    float value[LAYOUT_MAX_BARS];
    char number[LAYOUT_MAX_BARS][16];
    bool cut[LAYOUT_MAX_BARS];
    // scaled: bar i is coloured as its panel cell is (scale at shade[i]: one value, one colour);
    // else by its length on the palette's sequential scale (a probability)
    bool scaled;
    ColorScale scale;
    float shade[LAYOUT_MAX_BARS];
} BarChart;

// A vision transformer's attention stage: beside its panels, the image and [CLS]'s row of the
// attention over its patches, for the head shown and averaged over the heads (recipe_vision.c
// fills it, draw/visiondraw.c paints it); the patches coloured on the attention panel's scale.
#define LAYOUT_MAX_PATCHES 256
typedef struct VisionOverlay {
    Rect r;                      // w = 0: none
    char title[160];
    char label[3][96];           // the image, head h, the heads' mean
    char note[2][2][64];         // under each overlay: its largest weight, and where (two lines)
    int height, width, patch;
    const float *pixels;         // (height, width): the batch shown, borrowed from the lesson
    float pix_max;               // the image's largest pixel (the darkest grey)
    float att[2][LAYOUT_MAX_PATCHES]; // [CLS]'s weight on patch n: head h, the heads' mean
    ColorScale scale;            // the attention panel's (linear probabilities)
} VisionOverlay;

typedef struct Layout {
    int w, h;
    float s;                     // UI scale: 1 at 1280×720
    float num_s;                 // the scale numbers in cells are sized with: s, larger in projector mode
    float num_fill;              // numbers at most this part of a cell's smaller side (LAYOUT_*NUMBER_FILL)
    int cell_cap;                // cells at most this × num_s px (LAYOUT_MAX_CELL; printed: twice that)
    bool split;                  // projector mode: the stage shows one part of its panels (part)
    int part, n_parts;           // which of n_parts: operands (together or one by one), the result last
    bool token_index;            // token axes show each row's and column's index beside its token
                                 // (from 1280×720 up; below, the room goes to the cells)
    int px_title, px_body, px_small, px_formula, px_op, px_help;
    Rect timeline;
    int n_steps;
    StepId step_id[STEP_COUNT];
    Rect step_rect[STEP_COUNT];
    Rect tabs;
    int n_batch_tabs, n_head_tabs, n_layer_tabs; // (layer tabs: a model of several layers only)
    Rect batch_label, head_label, layer_label;
    Rect batch_tab[LAYOUT_MAX_TABS], head_tab[LAYOUT_MAX_TABS], layer_tab[LAYOUT_MAX_TABS];
    Rect status;                 // play/speed/palette, right of the tabs
    Rect header;                 // stage name, shapes, formula
    Rect area;                   // where the heatmaps go
    int n_panels;
    PanelSpec spec[LAYOUT_MAX_PANELS];
    // The stage's first panel as its recipe builds it (its input: what a derivation strip's
    // first line reads), kept when only a part of the panels is shown (split): the strip
    // of the result's part is then the one the whole frame shows. rows 0: none.
    PanelSpec input;
    // A stage's extra beside its panels, placed and filled by its recipe's extra hook
    // (recipe.h; a language model's next-token bars), r.w = 0: none
    BarChart bars;
    VisionOverlay vision;        // a vision transformer's [CLS] attention over the image (r.w = 0: none)
    // a lesson with checkpoints: the loss curve of its training with the checkpoint computed,
    // right of the header (w = 0: none); a click picks the checkpoint nearest in x
    Rect curve;
    // The view L lays out (View.kind, viewkind.h): the stage's panels, or a glance over the
    // model in L->area (no panels then) with its own header (title, formula) and its own
    // part of the layout below.
    ViewKind kind;
    char title[200];                  // a glance's header title ("" for the stage's panels)
    union {
        ModelViewLayout model;        // VIEW_MODEL
        HeadViewLayout heads;         // VIEW_HEADS
    } view;
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
    char formula_note[400];           // the numbers it uses ("√d_k = √2 = 1.41421")
    Rect narration, legend;
    bool legend_stacked;              // a scale's name too long beside its ramp: each name on a
                                      // line of its own, the ramp and its range under it
} Layout;

bool rect_contains(Rect r, int x, int y);
bool rect_overlap(Rect a, Rect b);
// Value of element (r, c) of a panel (the weight or tensor slice).
float panel_value(const PanelSpec *ps, int r, int c);
// b − a as two cells show them at d decimals (each rounded as panel_format_number rounds).
double panel_shown_difference(float a, float b, int d);
// Whether a stage's tensor has a head axis (B, H, L, d).
bool stage_has_heads(const Stage *st);
// A 2-D slice of t at batch b, head h into p (data, rows, cols, strides, head).
void panel_slice(PanelSpec *p, const Tensor *t, int b, int h);
// Swaps p's rows and columns (Kᵀ, Wᵀ).
void panel_transpose(PanelSpec *p);

// Label of position i on an axis: the lesson's token (a language model's space drawn ␣),
// or the index.
const char *panel_axis_label(const View *v, AxisKind a, int i, char *buf, size_t n);
// The positions a stage's key columns are in layer `layer`: the keys' (AXIS_KEY), or the target's
// (AXIS_QUERY) in an encoder–decoder's decoder self-attention; the rows' likewise: the query's, or the
// source's (AXIS_KEY) in its encoder (trace.h's TraceBlock).
AxisKind panel_key_axis(const Trace *tr, int layer);
AxisKind panel_query_axis(const Trace *tr, int layer);
// A number as a cell shows it: d decimals, "−∞", "∞", "NaN", never "-0.00". (Inline: the
// renderer writes every cell's number with it, every frame.)
static inline void panel_format_number(float v, int d, char *buf, size_t n)
{
    if (isnan(v)) {
        snprintf(buf, n, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v < 0 ? "−∞" : "∞");
        return;
    }
    snprintf(buf, n, "%.*f", d, (double)v);
    // "-0.00" → "0.00"
    bool zero = true;
    for (const char *p = buf; *p; p++)
        if (*p >= '1' && *p <= '9') zero = false;
    if (zero && buf[0] == '-') memmove(buf, buf + 1, strlen(buf));
}

// A number as a cell of p shows it: panel_format_number at p's decimals, its 0 before the point
// dropped where p->bare_point ("−.03").
static inline void panel_format_cell(const PanelSpec *p, float v, char *buf, size_t n)
{
    panel_format_number(v, p->decimals, buf, n);
    char *z = buf[0] == '-' ? buf + 1 : buf;
    if (p->bare_point && z[0] == '0' && z[1] == '.') memmove(z, z + 1, strlen(z));
}

#endif
