// experiment.h — the experiments interpretability courses run on a trained language model:
//
// - head ablation: one head's output (its head_out, before the concat) replaced by zeros or by
//   its mean over every (batch, position) (AttnConfig.ablate, applied inside the forward pass, so
//   every later stage follows); the ablation table ranks every head by the change of the loss
//   (backward.h's mean next-token cross-entropy) on the lesson's own text;
// - the logit lens (nostalgebraist 2020): the residual stream after each layer through the final
//   norm and the unembedding, as if the model stopped there: a layer × position map of the top
//   token, its probability and the probability of the next token. The last layer's row is the
//   model's own prediction (`probs`);
// - direct logit attribution: each head's output straight to the next token's logit (below).
//
// Each agrees with PyTorch hooks on lessons/lesson_torch.py's model (tests/gen_experiments.py,
// tests/test_experiment.c).
#ifndef ATTNVIZ_EXPERIMENT_H
#define ATTNVIZ_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "lesson.h"
#include "trace.h"

// "l1.h0" (or "h0" in a one-layer model) into a->layer, a->head of ls's model, or "l1" (every head
// of layer 1: a->head −1); the kind is left as it is. False with one line in err naming `what` (the
// option) when it does not read or the head or layer does not exist ("… has 2 layers of 2 heads:
// l0.h0 … l1.h1", "no such layer: the model has 2 layers (l0 … l1)").
bool experiment_parse_head(const Lesson *ls, const char *text, AttnAblation *a, const char *what, char *err,
                           size_t n);
// Whether ls's model can be ablated: not with model.flash or model.decode, whose stages recompute
// the attention apart from head_out. False with one line in err.
bool experiment_can_ablate(const Lesson *ls, const char *file, char *err, size_t n);

// The mean next-token loss of the forward trace tr (a language model's), against ls's targets (or
// the default ones: backward.h). False with one line in err naming `file`.
bool experiment_loss(const Lesson *ls, const Trace *tr, float *loss, const char *file, char *err, size_t n);

typedef struct HeadEffect {
    int layer, head;
    float loss;    // the loss with this head ablated
    float delta;   // loss − the clean loss
} HeadEffect;

// Every head of ls ablated in turn (kind ABLATE_ZERO or ABLATE_MEAN): out (n_layers·n_heads,
// allocated, freed by the caller) sorted by delta, largest first (ties: layer, head), *n_out its
// length, *clean the loss without ablation. False with one line in err.
bool experiment_ablation_table(const Lesson *ls, AblateKind kind, HeadEffect **out, int *n_out, float *clean,
                               const char *file, char *err, size_t n);

typedef struct LogitLens {
    int n_layers, batch, len, vocab;
    int *top;          // (n_layers, B, L): the most probable token after layer l (the first on a tie)
    float *top_prob;   // its probability
    float *next_prob;  // the probability of the position's target (the next token), NaN where none
    int *target;       // (B, L) the targets (-1: none)
} LogitLens;

// The logit lens of the forward trace tr of ls (a language model). False with one line in err.
bool experiment_logit_lens(const Lesson *ls, const Trace *tr, LogitLens *out, const char *file, char *err, size_t n);
void logit_lens_free(LogitLens *l);

typedef struct LogitAttribution {
    int n_layers, n_heads, batch, len;
    int *token;       // (B, L): the token attributed at each position, its target (-1: none)
    float *contrib;   // (n_layers, H, B, L): each head's direct contribution to that token's logit
                      // (NaN where there is none)
    float *logit;     // (B, L): the token's logit
} LogitAttribution;

// Direct logit attribution (a pre-norm language model): each head's output through its columns
// of W_O, the final norm frozen at the final residual (its mean and scale from the whole
// residual, γ applied, β not: a constant), and the token's row of the unembedding:
//   contrib = W_U[t] · (γ ⊙ (c − mean(c)) / σ(x)),  c = W_O[:, h] · head_out[b, h, i]
// (RMSNorm: γ ⊙ c / rms(x); no final norm: c). The heads' sum is the part of the logit the
// attention wrote directly; the rest comes from the embedding, the biases and the FFNs.
// False with one line in err for another model.
bool experiment_logit_attribution(const Lesson *ls, const Trace *tr, LogitAttribution *out, const char *file, char *err,
                                  size_t n);
void logit_attribution_free(LogitAttribution *a);

// Activation patching (experiment_patch.c; Vig et al. 2020, Meng et al. 2022): the lesson's text
// (clean) and another of the same token length (corrupted) are run; then the corrupted run again
// with one activation taken from the clean run: the residual stream after a layer at a position,
// or one head's output (head_out) at a position. How much of the clean prediction returns, at the
// last position of batch 0:  recovered = (p_patched − p_corrupt) / (p_clean − p_corrupt), p the
// probability of the clean run's top token there (1: all of it, 0: none).
typedef struct Patching {
    int n_layers, n_heads, batch, len;
    int token;           // the clean run's most probable next token at the last position (batch 0)
    float p_clean, p_corrupt;
    float *residual;     // (n_layers, len): recovered, the residual after layer l patched at position i
    float *heads;        // (n_layers, n_heads, len): recovered, head h of layer l patched at position i
} Patching;

// Checks a patch of clean's activation into the run of corrupt (ls: corrupt's lesson): layer,
// head (PATCH_HEAD) and pos must exist ("--experiment patching: position 12 is outside the text
// (positions 0 … 10)"), and the two runs have one shape. False with one line in err.
bool experiment_patch_check(const Lesson *ls, const Trace *clean, PatchKind kind, int layer, int head, int pos,
                            const char *what, char *err, size_t n);
// The corrupted run (ls, a language model) with the patch from the clean trace, into tr (freshly
// initialised). False with one line in err.
bool experiment_patch_run(const Lesson *ls, const Trace *clean, PatchKind kind, int layer, int head, int pos, Trace *tr,
                          const char *what, char *err, size_t n);
// The whole map: clean and corrupt are the lesson with each text (the same token length: else
// "--corrupt: … is 9 tokens, the lesson's text 11: patching needs texts of one length").
bool experiment_patching(const Lesson *clean, const Lesson *corrupt, Patching *out, const char *what, char *err,
                         size_t n);
void patching_free(Patching *p);

// The stage holding layer `layer`'s output (the residual stream after it) in tr, or -1.
int experiment_layer_output(const Trace *tr, int layer);

#endif
