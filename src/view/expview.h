// expview.h — the experiments drawn (experiment.h's numbers as frames): what one of the four
// experiment views (View.kind VIEW_ABLATION, VIEW_LENS, VIEW_ATTRIBUTION, VIEW_PATCHING; their
// rows of viewkind.c, their hooks in view_experiment.c) reads, computed once when the view is
// opened (the window's Shift+D menu, --experiment NAME with --export or --describe) and kept
// until it is closed: View.exp points at it. The panels read its arrays directly.
//
// Pure view code: no SDL.
#ifndef ATTNVIZ_EXPVIEW_H
#define ATTNVIZ_EXPVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "experiment.h"
#include "session.h"
#include "view.h"

#define EXPVIEW_LABEL 32
#define EXPVIEW_DECIMALS 6 // the attribution's sums are kept for cells of 0 … 5 decimals

typedef struct ExpView {
    ViewKind kind;          // which of the four
    char name[24];          // its --experiment NAME ("ablation", "logit-lens", …)
    int n_layers, n_heads;  // the model's
    // ablation (both kinds): every head ranked by the Δloss of zeroing it; row k of each column
    // is head rank[k]: its loss with it zeroed (loss[0]) or mean-ablated (loss[1]), the clean
    // loss (clean[·], as many copies), their difference (delta[·])
    int n_rank;
    int *rank;              // layer·H + head, by rank
    float *loss[2], *clean[2], *delta[2];
    float clean_loss;
    LogitLens lens;
    LogitAttribution dla;
    // (3, B, L) for cells of d decimals (d < EXPVIEW_DECIMALS; [EXPVIEW_DECIMALS]: exact): the
    // heads' sum as their cells show it, the rest (the shown logit minus that sum) and the logit,
    // so Σ heads + rest = logit adds up on screen
    float *dla_shown[EXPVIEW_DECIMALS + 1];
    Patching patch;
    char corrupt[256];      // patching's corrupted text
    const char *corrupt_token_text; // (borrowed from the lesson: the clean run's top token)
    char (*row_label)[EXPVIEW_LABEL]; // the rows' labels: "l1.h0", "l0" (language-free)
    int n_row_labels;
    int row2;               // where a second panel's rows start in row_label (patching: the heads)
    bool index_cols;        // the columns labelled by position (the lesson on screen is not the one run)
} ExpView;

// The view kind of --experiment NAME (ablation and ablation-mean: the one table), or VIEW_PANELS.
ViewKind expview_kind(const char *name);
// The experiment `name` of session s (corrupt: patching's corrupted text, else NULL) into e
// (freed with expview_free). False with one line in err.
bool expview_open(ExpView *e, const char *name, const Session *s, const char *corrupt, char *err, size_t n);
void expview_free(ExpView *e);
// Row i's label (its layer and head), "?" out of range.
const char *expview_row_label(const ExpView *e, int i);

#endif
