// viewkind.h — what a frame shows, as a table: one row per ViewKind (view.h) with everything
// the view, the exports, --describe and the window need to know about it, in the manner of
// the stage recipes (recipe.h). Each glance over the model has one file of its own —
//   view_model.c   the model view: every layer × head as a small map of its attention
//   view_heads.c   the head view: one head's weights as lines from each query to each key
//   view_compare.c the compare view: the stage's result in A, in B and Δ = B − A (panels)
//   view_experiment.c the experiments drawn (expview.h): the head-ablation table, the logit
//                  lens, direct logit attribution, activation patching (panels, one frame each)
// — and its painter in the draw layer (src/draw/viewdraw.h's table). The stage's panels
// are layout.c's and scene.c's (its row has NULL hooks where the stage's own apply).
//
// Adding a view kind: its ViewKind (view.h), its row in viewkind.c, its file here (its
// Layout part in panel.h's union), its painter's row in src/draw/viewdraw.c and its file
// there, its language keys (title.*, formula.*, narr.*, alt.*).
//
// Pure view code: no SDL, no allocation.
#ifndef ATTNVIZ_VIEWKIND_H
#define ATTNVIZ_VIEWKIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "panel.h"

typedef struct ViewKindInfo {
    // its exported frames' file names ("model-view.png"); NULL: the stage's name
    const char *file_stem;
    ViewKind next;            // what A turns to from it
    // the stage's panels (the derivation strip, the legend, the recipe's extra, the study
    // box); false: a glance over the model in L->area, one frame at the first layer's
    // attention when exported or described
    bool panels;
    // the stage recipe's extra beside the panels (a language model's next-token bars)
    bool extra;
    // opening a stage turns to the head its narration names (false: View.head stays)
    bool narrated_head;
    // panels of its own, one frame (an experiment's): its header is its title and formula as a
    // glance's, and it is exported and described as one frame
    bool one_frame;
    // a glance's header: its title (args: the batch, the layer, the head) and formula
    const char *title_key, *formula_key;
    // an experiment's name in the row that replaces the timeline ("Experiment: head ablation")
    const char *row_key;
    // places it in L->area (L->n_panels …: the stage's panels; the glances their part of
    // L->view) and fills its header
    void (*place)(Layout *L, const Trace *tr, const View *v);
    // a click at (x, y): the stage and head it opens in the panels (false: none); NULL: none
    bool (*hit)(const Layout *L, int x, int y, int *stage, int *head);
    // its narration into buf; NULL: the stage's (scene_narration)
    const char *(*narration)(const Trace *tr, const View *v, char *buf, size_t n);
    // its narration is one text at every stage (the model view's): what reads every stage's
    // text (the box's height, the frame's hash, the text's size) reads it once
    bool narration_fixed;
    // its alt text (what the frame shows, for a screen reader); NULL: the panels' (scene_alt)
    void (*alt)(const Layout *L, const Trace *tr, const View *v, char *out, size_t n);
    // the tooltip of cell (row, col) of its panel p into out; NULL: the stage's (explain_cell)
    void (*tip)(const Layout *L, const Trace *tr, const View *v, int p, int row, int col, char *out, size_t n);
    // its own fields of a --describe frame (", \"maps\": […]"); NULL: none
    void (*describe)(FILE *f, const Layout *L, const Trace *tr, const View *v);
} ViewKindInfo;

// The row of kind k (asserted in range).
const ViewKindInfo *viewkind_of(ViewKind k);
// The name an exported frame of kind k at stage s is written under: its file stem, else
// the stage's name.
const char *viewkind_frame_name(ViewKind k, const Trace *tr, int s);
// A glance's header into L->title and L->formula (no note) from k's keys, with the layer.
void viewkind_heading(Layout *L, const View *v, ViewKind k, int layer);

// The rows' hooks (viewkind.c's table points at them).
void view_model_place(Layout *L, const Trace *tr, const View *v);
bool view_model_hit(const Layout *L, int x, int y, int *stage, int *head);
const char *view_model_narration(const Trace *tr, const View *v, char *buf, size_t n);
void view_model_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n);
void view_model_describe(FILE *f, const Layout *L, const Trace *tr, const View *v);
void view_heads_place(Layout *L, const Trace *tr, const View *v);
const char *view_heads_narration(const Trace *tr, const View *v, char *buf, size_t n);
void view_heads_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n);
void view_heads_describe(FILE *f, const Layout *L, const Trace *tr, const View *v);
void view_compare_place(Layout *L, const Trace *tr, const View *v);
const char *view_compare_narration(const Trace *tr, const View *v, char *buf, size_t n);
void view_compare_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n);
void view_compare_describe(FILE *f, const Layout *L, const Trace *tr, const View *v);
void view_compare_tip(const Layout *L, const Trace *tr, const View *v, int p, int row, int col, char *out, size_t n);
void view_experiment_place(Layout *L, const Trace *tr, const View *v);
const char *view_experiment_narration(const Trace *tr, const View *v, char *buf, size_t n);
void view_experiment_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n);
void view_experiment_describe(FILE *f, const Layout *L, const Trace *tr, const View *v);
void view_experiment_tip(const Layout *L, const Trace *tr, const View *v, int p, int row, int col, char *out, size_t n);

#endif
