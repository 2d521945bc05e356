// story.h — narration generated from a model's own numbers, for the views a lesson's text
// cannot have been written for: the model view (what each head looks at) and a checkpoint
// of training other than the one the lesson describes (the step, the loss, which head
// changed most since the checkpoint before and what it now attends to).
#ifndef ATTNVIZ_STORY_H
#define ATTNVIZ_STORY_H

#include <stddef.h>

#include "trace.h"
#include "view.h"

// What head h of attention stage s (batch b) looks at: the pattern most of its rows'
// largest weights follow, a key at a fixed distance back (key i − back) or one key for
// every row (key), in `rows` of its `of` rows, with `weight` on it on average there.
typedef struct HeadPattern {
    int back;   // ≥ 0: key i − back; -1: a fixed key
    int key;    // the fixed key (back < 0)
    int rows, of;
    float weight;
} HeadPattern;
void story_head_pattern(const Trace *tr, int s, int b, int h, HeadPattern *p);

// The head of layer `layer` (-1: any) that changed most between prev and tr (the one a
// checkpoint's narration is about), or -1.
int story_changed_head(const Trace *tr, const View *v, const Trace *prev, int layer);
// The model view's narration: each layer's heads and what they look at (and, at a
// checkpoint, the step, the loss and the change since the checkpoint before: prev, its
// trace, may be NULL). Into buf; returns buf.
const char *story_model_view(const Trace *tr, const View *v, const Trace *prev, char *buf, size_t n);
// A stage's narration at a checkpoint other than the lesson's own weights: the step and
// loss, then (an attention stage; prev given) the head of its layer that changed most and
// what it attends to now, then generic, the stage's generic narration. Into buf.
const char *story_checkpoint(const Trace *tr, const View *v, const Trace *prev, const char *generic, char *buf,
                             size_t n);

#endif
