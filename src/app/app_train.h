// app_train.h — the window's training mode (R; issue 38 item 4): the lesson's model trained on
// its task (train.h) between frames, a slice of whole steps a frame (APP_TRAIN_BUDGET_MS, so a
// frame stays within 16 ms when a step is that fast), the loss curve (the header's, from the
// run's checkpoints) and the model view following; R or Space pauses (and R goes on), Esc
// pauses; paused, the stages walk the forward pass of the weights of that step. The trained
// weights are never lost: quitting asks to save them (as unsaved edits are), and opening
// another lesson, text or checkpoint keeps a save of them first (lab_save's folder).
#ifndef ATTNVIZ_APP_TRAIN_H
#define ATTNVIZ_APP_TRAIN_H

#include <stdbool.h>

#include "window.h"

#define APP_TRAIN_STEPS 1000        // the steps a run plans (the checkpoints' spacing)
#define APP_TRAIN_SPEC "adamw:lr=3e-3,weight_decay=0" // the scripts' Adam, at a constant lr
#define APP_TRAIN_BUDGET_MS 8.0     // a frame's training time (the rest: drawing)
// the trace on screen follows the weights this often while running (and at every checkpoint
// and pause): a new trace lays the frame out again and regenerates its narration, 20–80 ms
#define APP_TRAIN_SHOW_MS 500.0


// R: starts training the lesson on screen (its weights as shown are step 0), pauses, goes on.
// A lesson that cannot train says why in a notice (no task, no vocab).
void app_train_toggle(App *a);
// A run of `steps` steps (its checkpoints spaced as --train STEPS's) started on the lesson on
// screen, as R starts one of APP_TRAIN_STEPS (the page's attnviz.train(n)); a run before it
// ends first (app_train_stop). False: a notice says why (no task, no vocab).
bool app_train_begin(App *a, int steps);
// Each frame: a running run's slice of steps, the lesson's trace and curve refreshed, the
// progress in the notice.
void app_train_frame(App *a);
// Pauses a running run: the weights of this step become a checkpoint, the trace shows them.
void app_train_pause(App *a);
// Shift+R: the last step's update of one weight (the stage's own, else its layer's W_Q) over
// the frame (optstep.h), training paused; again (or Esc, R) closes it.
void app_train_show_step(App *a);
// The keys of a running run: Space and Esc pause it; of the step shown: Esc and Shift+R close
// it (step_key: the key is Shift+R's). True: taken.
bool app_train_key(App *a, int sym, bool step_key);
// Before the session is replaced or the window closes: the run ends, its weights saved first
// when they were not (a notice says where).
void app_train_stop(App *a);
// Training runs on the lesson on screen (not paused, not finished).
bool app_train_running(const App *a);
// Trained weights not saved yet (quitting asks).
bool app_train_unsaved(const App *a);

#endif
