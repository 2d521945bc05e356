// describe.h — the scene of a frame as JSON: formula, narration, alt text and
// panels (title, source, shape, colour range, scale, scale group). --describe
// prints it for every stage; the export writes it into frames.json. The tests
// check the picture's rules through it (no "+ b" without a bias, shared ranges).
#ifndef ATTNVIZ_DESCRIBE_H
#define ATTNVIZ_DESCRIBE_H

#include <stdbool.h>
#include <stdio.h>

#include "layout.h"
#include "trace.h"
#include "view.h"

struct SessionEdits;

// Writes the fields of v's frame (w×h), without braces:
// "stage": …, "step": …, "formula": …, "note": …, "narration": …, "alt": …, "panels": […];
// a panel: title, source, shape, range, scale, scale_group, result, op, number_px (the
// font size in px of the numbers drawn in its cells, 0 when none are) and decimals
// (digits after the point in them, -1 when none are drawn)
void describe_frame_fields(FILE *f, const Trace *tr, const View *v, int w, int h);

// attnviz --describe LESSON [--lang] [--batch] [--head] [--size] [--projector]: one entry
// per settled stage frame (projector mode: its first part); glance 1: one frame, the
// model view (View.kind VIEW_MODEL) with every layer's and head's map described; glance 2: the
// head view (View.kind VIEW_HEADS) of the first layer, head `head`, with its lines. Returns the exit code (0, 1 bad
// lesson / assets / write error, 2 bad slice).
// glance DESCRIBE_PRESENTER (--presenter): one entry per stage, {"stage": …, "presenter": {…}}, the presenter window
// at w×h (presenter_describe) beside an audience frame of 1280×720.
// Text is measured with the fonts (font_path, NULL: found with fontconfig) as the export
// draws them; without fonts, with the layout's estimate.
// head -1: each stage on the head its narration is about (scene_stage_head), else head 0.
int describe_run(const char *path, const char *font_path, const struct SessionEdits *ed, Lang lang, int batch, int head,
                 int loop,
                 int w, int h, bool projector, int glance, FILE *out, FILE *err);
#define DESCRIBE_PRESENTER 3 // glance: the presenter window
// describe_run with --experiment NAME (and patching's --corrupt TEXT): one frame, the experiment
// drawn (expview.h; its view kind is the glance), its cells' numbers in the frame's "panel0"….
int describe_run_experiment(const char *path, const char *font_path, const struct SessionEdits *ed, Lang lang, int batch,
                            int w, int h, bool projector, const char *experiment, const char *corrupt, FILE *out,
                            FILE *err);

#endif
