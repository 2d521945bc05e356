// sample.h — the next token as students meet it in Hugging Face's generate(): the
// probabilities at the temperature (the `probs` stage), then top-k (model.top_k: the k
// most likely tokens; every token tied with the k-th is kept), then top-p (model.top_p,
// nucleus: of those, renormalised, the most likely ones whose probabilities add up to at
// least p — TopPLogitsWarper's rule: sorted from the least likely, the tokens whose running
// sum stays at or under 1 − p are dropped, the most likely always kept), the kept tokens'
// probabilities renormalised to sum 1. Then the choice (the window's generate keys): the
// most likely kept token (greedy) or a draw with the lessons' documented generator
// (attention.h's attn_init_value: u from its value for stream SAMPLE_STREAM, element = the
// position the token goes to), not torch.multinomial's.
#ifndef ATTNVIZ_SAMPLE_H
#define ATTNVIZ_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>

#include "attention.h"

#define SAMPLE_STREAM 3000     // the generator's tensor index of the draws
#define SAMPLE_MAX_VOCAB 1024  // the vocabulary sample_filter takes (the lesson's limit)

// Whether cfg filters the probabilities (a top-k or a top-p below 1).
bool sample_active(const AttnConfig *cfg);
// "top-k 5, top-p 0.9" (the ones set) into out.
void sample_settings_text(const AttnConfig *cfg, char *out, size_t n);
// probs (V ≤ SAMPLE_MAX_VOCAB, one position's, sum 1) filtered by top_k (0: off) and top_p
// (1: off) into kept (V: the renormalised probability of each kept token, 0 for a dropped
// one); returns how many are kept (≥ 1).
int sample_filter(const float *probs, int V, int top_k, float top_p, float *kept);
// The token chosen from kept (V values, sample_filter's): the largest (the lowest id of a
// tie) when seed is 0, else the draw u of the generator seeded `seed` at `position`:
// the first token whose running sum (in id order) passes u.
int sample_pick(const float *kept, int V, int seed, int position);
// The draw u in [0, 1) of the generator seeded `seed` (≥ 1) at `position`.
float sample_draw_u(int seed, int position);

#endif
