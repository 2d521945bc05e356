// compare.h — two sessions of the same shapes, A and B, stage by stage: Δ = B − A per cell,
// its largest magnitude, and "identical" when every cell is equal (NaN equals NaN, −inf −inf:
// the same number shown). B is A changed by one thing, named by a spec (--compare SPEC):
//
//   set:KEY=VALUE      A with one more --set edit (edit.h's grammar: set:mask=causal,
//                      set:model.mask_fill=-1e9, set:weights.w_q[0,1]=0.5, set:causal_align=…)
//   lesson:PATH        another lesson of the same shapes
//   text:TEXT          a language model's other input text (of the same token length)
//   checkpoint:N       a lesson with checkpoints: checkpoint N's weights
//   ablate:l1.h0       A with head 0 of layer 1 zeroed (experiment.h; "h0" in a one-layer model)
//   ablate-mean:l1.h0  … replaced by its mean over every (batch, position)
#ifndef ATTNVIZ_COMPARE_H
#define ATTNVIZ_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "session.h"

typedef enum CompareKind {
    COMPARE_SET, COMPARE_LESSON, COMPARE_TEXT, COMPARE_CHECKPOINT, COMPARE_ABLATE, COMPARE_ABLATE_MEAN
} CompareKind;

typedef struct CompareSpec {
    CompareKind kind;
    const char *text;  // the whole spec (borrowed)
    const char *arg;   // after the colon (borrowed from the spec)
    int checkpoint;    // COMPARE_CHECKPOINT
} CompareSpec;

// Reads spec (only its form; what it names is checked when B is made). False with one line in
// err: "--compare: \"…\": expected set:KEY=VALUE, lesson:PATH, …".
bool compare_parse_spec(const char *spec, CompareSpec *out, char *err, size_t n);

// B of A's session a, changed as sp says: set:, ablate: and text: change a copy of A as it is (its
// edits, text and checkpoint: session_clone; text: as many tokens as A's, or an error saying both
// counts); checkpoint: reads A's file again with A's command line edits ed (NULL: none) and that
// checkpoint; lesson: reads the other file. NULL with one line in err naming --compare and what is
// wrong.
Session *compare_open_b(const Session *a, const SessionEdits *ed, const CompareSpec *sp, char *err, size_t n);

typedef struct CompareStage {
    int a, b;          // its index in A's trace and in B's (-1: not in that one)
    float max_abs;     // max |B − A| (INFINITY where a non-finite value differs; 0 when identical)
    size_t n_diff;     // cells that differ
    Tensor delta;      // B − A (0 where equal; present when in both)
} CompareStage;

typedef struct Compare {
    CompareStage *st;  // A's stages in order, then those only in B
    int n;
    int n_identical, n_differ, n_only;
} Compare;

// Compares every stage of A's trace with B's stage of the same name. False with one line in err
// when a stage of both has another shape ("--compare: stage \"l0.q_proj\" is (1, 12, 16) in A,
// (1, 10, 16) in B: …"), when they have no stage in common (another model), or out of memory.
bool compare_traces(const Trace *a, const Trace *b, Compare *c, char *err, size_t n);
void compare_free(Compare *c);

#endif
