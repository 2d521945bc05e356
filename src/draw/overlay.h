// overlay.h — what the window draws over a frame, one small drawer a feature:
// the hover (frames and tooltip), the what-if lab's selection and typed value,
// the study mode's marks, and the presenter's spotlight, pinned tooltips, laser
// and scrub bar. Each reads only the Overlays it is given and decides itself
// whether it shows; render.c calls them, in its layer table's order, after the
// frame. Each draws through paint.h like everything else.
#ifndef ATTNVIZ_OVERLAY_H
#define ATTNVIZ_OVERLAY_H

#include "layout.h"
#include "paint.h"
#include "trace.h"
#include "view.h"

// The shape every layer over the frame has (render.c's table).
typedef void (*OverlayDrawFn)(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);

// Dims all but the selected cell's row and column, or a disc round the point (H).
void overlay_spotlight(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);
// This stage's pinned tooltips (fills ov->pin_boxes with where their boxes went).
void overlay_pins(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);
// The hovered cell (or Σ entry): what it reads framed, its derivation in a tooltip.
void overlay_hover(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);
// The lab's selected cell, and the value being typed under it.
void overlay_selection(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);
// The study mode's frames: the cell a question is about (with the hint, what it reads).
void overlay_study_marks(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);
// The scrub bar (K): the transition held, its frame number, a knob to drag.
void overlay_scrub(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);
// The laser: a red dot at the point.
void overlay_laser(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);

// Where the scrub bar is drawn on a frame laid out as L, and the part of it that
// stands for the transition from 0 to 1 (for dragging).
void overlay_scrub_rect(const Layout *L, Rect *box, Rect *track);
// The loop's step bar (View.loop of Overlays.loop_steps), in the scrub bar's place: a
// segment per step, the steps done, this one, the ones to come; the step under x.
void overlay_loop(Canvas *cv, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);
int overlay_loop_step_at(const Layout *L, int steps, int x);

#endif
