// optstep.h — one optimizer step shown (issue 38 item 3; the window's Shift+R while training):
// the update of one weight as panels — W before, dW, AdamW's m̂ and v̂, W after — with the
// update's formula, the loss of the step's batch before and after it, and the attention row the
// step changed most (before and after, with their numbers), drawn over the whole frame.
#ifndef ATTNVIZ_OPTSTEP_H
#define ATTNVIZ_OPTSTEP_H

#include "colormap.h"
#include "lang.h"
#include "paint.h"
#include "train.h"

// s: the UI scale (layout's: the frame's height / 720); vocab (n_vocab strings): the tokens
// that label the attention row's keys (NULL: none).
void optstep_draw(Canvas *cv, int w, int h, float s, const TrainShown *st, char *const *vocab, int n_vocab, Lang lang,
                  Palette pal);

#endif
