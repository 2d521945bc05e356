// optim.h — the optimizer step after the backward pass (issue 38 item 3): SGD and AdamW as
// torch.optim.SGD and torch.optim.AdamW (PyTorch's single-tensor CPU code) define them,
// applied to every weight the backward pass gave a gradient (Grads.dw), and a few steps of
// training (forward, backward, step) from the lesson's weights on its input and targets.
//
// SGD (lr η, momentum μ, weight_decay λ; dampening 0, not Nesterov):
//   g ← dW + λ·W;  b ← g at the first step, else μ·b + g (μ > 0);  W ← W − η·(μ > 0 ? b : g)
// AdamW (lr η, beta1 β₁, beta2 β₂, eps ε, weight_decay λ decoupled), step t = 1, 2, …:
//   W ← W·(1 − η·λ);  m ← β₁·m + (1 − β₁)·dW;  v ← β₂·v + (1 − β₂)·dW²
//   W ← W − (η / (1 − β₁ᵗ))·m / (√v / √(1 − β₂ᵗ) + ε)
// The element-wise arithmetic is float32 in torch's order; the scalars (1 − η·λ, the bias
// corrections, the step size) in double as Python computes them, rounded once.
#ifndef ATTNVIZ_OPTIM_H
#define ATTNVIZ_OPTIM_H

#include <stdbool.h>
#include <stddef.h>

#include "attention.h"
#include "backward.h"
#include "trace.h"

#define OPTIM_MAX_STEPS 10000

typedef enum OptimKind { OPTIM_SGD, OPTIM_ADAMW } OptimKind;

typedef struct OptimConfig {
    OptimKind kind;
    // torch's defaults: lr 1e-3; SGD momentum 0, weight_decay 0; AdamW beta1 0.9, beta2 0.999,
    // eps 1e-8, weight_decay 1e-2. Doubles: the values Python holds.
    double lr, momentum, weight_decay, beta1, beta2, eps;
    int steps;              // training steps (forward, backward, step), 1 by default
    int cosine;             // 0: lr stays; N: after step s the lr is lr·(1 + cos(π·s/N))/2, the training
                            // scripts' cosine decay to 0 over N steps (optim_lr_at)
    bool steps_given;       // the spec said steps= (--train counts its own: args refuses both)
} OptimConfig;

// "sgd" or "adamw", then optionally ":" and key=value pairs separated by commas: lr, steps,
// weight_decay (both), momentum (sgd), beta1, beta2, eps (adamw), e.g. "adamw:lr=0.01,steps=5".
// False with one line in err naming `arg` (the option, "--step") and what was expected: an
// unknown optimizer or key, a value that is not a number, lr or eps not finite or ≤ 0,
// momentum or a beta outside [0, 1), weight_decay < 0, steps outside 1..OPTIM_MAX_STEPS, cosine
// (the decay's length in steps) outside 1..OPTIM_MAX_TRAIN, a key given twice.
bool optim_parse(OptimConfig *o, const char *spec, const char *arg, char *err, size_t err_len);
const char *optim_kind_name(OptimKind k);
#define OPTIM_MAX_TRAIN 1000000   // --train's steps, and cosine's
// The lr for the step after `done` steps: cfg->lr, or with cosine its decay as Python computes it.
double optim_lr_at(const OptimConfig *cfg, int done);

// An optimizer's state: SGD's momentum buffers, AdamW's m and v, one per weight, allocated
// at the first step and reused by the next.
typedef struct Optim {
    OptimConfig cfg;
    int t;                                      // steps taken
    Tensor m[TRACE_MAX_LAYERS][WEIGHT_COUNT];   // SGD: the momentum buffer; AdamW: exp_avg
    Tensor v[TRACE_MAX_LAYERS][WEIGHT_COUNT];   // AdamW: exp_avg_sq
} Optim;

void optim_init(Optim *o, const OptimConfig *cfg);
void optim_free(Optim *o);
// One step of o over the layers' weights w (g->n_layers of them) with the gradients g (the
// weights without a gradient are left as they are, as torch skips a parameter whose grad is
// None). False when out of memory (w unchanged).
bool optim_step(Optim *o, AttnWeights *w, const Grads *g);

// Training (forward, backward, step) of the weights w in place: everything one step needs,
// allocated by the first and reused by the next.
typedef struct Trainer {
    Optim opt;
    Grads g;
    Trace tr;                                   // the latest forward pass (borrows w)
    Tensor keep[TRACE_MAX_LAYERS][WEIGHT_COUNT]; // the weights before the latest step
    int steps_done;
} Trainer;

void trainer_init(Trainer *t, const OptimConfig *cfg);
void trainer_free(Trainer *t);
// One step: the forward and backward pass of w on in and targets (NULL: the default,
// backward.h), *loss (may be NULL) its loss, then the optimizer's update of w. The inputs may
// change from step to step (a new batch each: the buffers are reused while the shapes stay).
// A loss, gradient or weight that is not finite stops it: false with one line naming `file`,
// the step ("step 3: the loss is not finite after it …") and what went wrong, w back to the
// weights before the step that broke them. False too for a lesson the backward pass refuses,
// or out of memory.
bool trainer_step(Trainer *t, const AttnConfig *cfg, AttnWeights *w, const AttnInputs *in, const int *targets,
                  float *loss, const char *file, char *err, size_t err_len);
// t's optimizer's cfg.steps steps on the same inputs, then the forward and backward pass of the
// new weights (t->tr, t->g); losses (steps + 1 floats, may be NULL): the loss before each step,
// then after the last. False as trainer_step.
bool trainer_run(Trainer *t, const AttnConfig *cfg, AttnWeights *w, const AttnInputs *in, const int *targets,
                 float *losses, const char *file, char *err, size_t err_len);

#endif
