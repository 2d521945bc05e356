// picker_draw.h — the lesson picker's pieces of a frame: the "Lessons…"
// button in the status row and the overlay listing the lessons (picker.h).
// render_frame calls both with the window's picker (Overlays.picker; never export).
#ifndef ATTNVIZ_PICKER_DRAW_H
#define ATTNVIZ_PICKER_DRAW_H

#include "layout.h"
#include "paint.h"
#include "view.h"

// The "Lessons…" button (picker_button_rect), pressed while the picker is open.
void picker_draw_button(Canvas *cv, const Layout *L, const View *v, const struct Picker *picker);
// The overlay, when picker is open (NULL: nothing).
void picker_draw(Canvas *cv, const Layout *L, const View *v, const struct Picker *picker);

#endif
