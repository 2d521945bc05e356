// app_compare.h — the compare view in the window (app_compare.c): Ctrl+D / Ctrl+Shift+D set B to the
// lesson on screen with the next / previous head ablated (zeroed), one head after another and
// then off; the frame shows each stage's result in A, in B and Δ = B − A (view_compare.c).
#ifndef ATTNVIZ_APP_COMPARE_H
#define ATTNVIZ_APP_COMPARE_H

#include "window.h"

// R (dir 1), Shift+R (dir −1): the next / previous B; past the last (first), off.
void app_compare_step(App *a, int dir);
// After the lesson on screen changed (an edit, a typed text, a checkpoint): B made again from
// it (another lesson: off).
void app_compare_watch(App *a);
// Off: B freed, the stage's panels again.
void app_compare_off(App *a);

#endif
