// train.h — training a lesson's model on its task (issue 38 item 4): the loop of --train and of
// the window's training mode. Each step draws the task's next batch (task.h), runs the forward
// and backward pass and the optimizer's update (optim.h: Trainer) on the lesson's weights in
// place, and the run keeps every step's loss and the checkpoints a trained lesson holds
// ("checkpoints": the weights at step 0, every `every` steps and at the last, each with the loss
// of a fixed held-out batch: the task's generator at seed + 2999, as train_induction.py's
// SEED + 3000 beside its SEED + 1).
#ifndef ATTNVIZ_TRAIN_H
#define ATTNVIZ_TRAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "lesson.h"
#include "optim.h"
#include "task.h"

typedef struct TrainRun {
    OptimConfig oc;          // the optimizer as given (oc.lr: the start of a cosine decay)
    Task task, held_task;
    Trainer tr;
    AttnInputs in, held;     // the latest batch and the held-out one: ids (B, L) and the lesson's mask
    int *targets, *held_targets;
    int total;               // the steps planned (the checkpoints' spacing)
    int every;               // a checkpoint every `every` steps (and at the last)
    int step;                // steps taken
    float *losses;           // each step's loss (before its update), `step` of them
    int cap;
    // the checkpoints so far (LESSON_MAX_CHECKPOINTS at most): step, held-out loss, weights' JSON
    int n_ckpt;
    int ckpt_step[LESSON_MAX_CHECKPOINTS];
    float ckpt_loss[LESSON_MAX_CHECKPOINTS];
    char *ckpt_json[LESSON_MAX_CHECKPOINTS];
    const char *file;        // for messages
} TrainRun;

// Starts training ls (its weights as they are: step 0) for `total` steps with the optimizer oc;
// seed (has_seed) instead of the task's. False with one line in err naming file: a lesson with
// no task, or one whose targets are its own (a lesson without "vocab" cannot be trained), a task
// the vocab does not fit, out of memory.
bool train_start(TrainRun *r, const Lesson *ls, const OptimConfig *oc, int total, bool has_seed,
                 unsigned long long seed, const char *file, char *err, size_t err_len);
void train_free(TrainRun *r);
// One step on ls (the lesson train_start was given): its weights updated. False with one line in
// err (a loss, gradient or weight not finite: the step and the stage named, the weights before
// the step kept; out of memory).
bool train_step(TrainRun *r, Lesson *ls, char *err, size_t err_len);
// Whether the step just taken is one of the checkpoints (step % every == 0, or the last planned).
bool train_at_checkpoint(const TrainRun *r);
// Records ls's weights as a checkpoint of the current step with its held-out loss (*loss, may be
// NULL); past LESSON_MAX_CHECKPOINTS the latest replaces the last. False when out of memory.
bool train_checkpoint(TrainRun *r, Lesson *ls, float *loss, char *err, size_t err_len);
// One optimizer step shown (issue 38 item 3): the latest step's update of one weight, the loss
// of its batch before and after it, and the attention row it changed most.
typedef struct TrainShown {
    int step;                // the step shown (1-based)
    int layer, slot;         // the weight: layer `layer`'s WeightSlot `slot`
    OptimConfig oc;          // the optimizer and the lr of that step
    double bc1, bc2;         // AdamW's bias corrections 1 − β₁ᵗ, 1 − β₂ᵗ (t = step)
    Tensor w_old, dw, w_new; // (rows, cols): a vector weight as one row
    Tensor m_hat, v_hat;     // AdamW: m / bc1, v / bc2 (the moments after the step); SGD: empty
    float loss_before, loss_after; // the batch's loss with the weights before and after the step
    // the attention row of the batch that changed most (Σ_j |after − before|): its layer, head,
    // batch row and query, and the two rows
    int att_layer, att_head, att_batch, att_row;
    float att_change;
    Tensor att_before, att_after; // (1, Lk)
    Tensor att_ids;          // (1, Lk): that text's token ids (the keys' labels)
} TrainShown;

// The latest step's update of layer `layer`'s weight `slot` (one the model trains) into *s
// (tensors allocated: train_shown_free), the batch's forward pass run again with the new
// weights. False with one line in err: no step taken yet, a weight without a gradient, out of
// memory.
bool train_show_step(const TrainRun *r, const Lesson *ls, int layer, int slot, TrainShown *s, char *err,
                     size_t err_len);
void train_shown_free(TrainShown *s);

// Puts the run's checkpoints into ls (replacing its own) with its weights as the file's
// "weights": what --save then writes. False when out of memory (ls unchanged).
bool train_apply(TrainRun *r, Lesson *ls, char *err, size_t err_len);

#endif
