// paint_vec.h — the vector backend of paint.h: the same frame replayed as SVG
// or PDF. A Canvas whose `vec` is set sends every primitive here instead of to
// its SDL renderer (which then only measures text): rectangles stay rectangles,
// text stays text — SVG <text> elements, PDF text in the embedded fonts
// (selectable, searchable, pdftotext reads it) at the positions the fonts gave
// the PNG — and retained images (large heatmaps) are embedded as images.
//
// SVG is written directly (cairo's SVG surface draws text as glyph outlines);
// PDF goes through cairo, one page per frame.
#ifndef ATTNVIZ_PAINT_VEC_H
#define ATTNVIZ_PAINT_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "colormap.h"
#include "drawlist.h"
#include "layout.h"
#include "text.h"

typedef enum PaintVecFormat { PAINT_VEC_SVG, PAINT_VEC_PDF } PaintVecFormat;

typedef struct PaintVec PaintVec;

// A w×h (pixels = SVG user units = PDF points) output. PDF: the document is
// written to pdf_out as pages end (the caller closes it after
// paint_vec_finish). SVG: pdf_out is NULL, each page gets its own file.
// NULL with one line in err on failure.
PaintVec *paint_vec_create(PaintVecFormat fmt, FILE *pdf_out, int w, int h, char *err, size_t n);
// PDF pages of w_pt × h_pt points drawn in w × h pixels (1 px = w_pt / w points):
// a printed page (the handout) whose frame and text are laid out in pixels.
PaintVec *paint_vec_create_pdf_pages(FILE *out, double w_pt, double h_pt, int w, int h, char *err, size_t n);
// PDF: what follows is drawn in the r.w × r.h area at (r.x, r.y) of the page as if
// it were the whole output (paint_size, clear and clip(NULL) mean that area):
// a frame placed on a page. NULL: the whole page again.
void paint_vec_viewport(PaintVec *v, const Rect *r);
// Starts a page: SVG into out (one document), PDF a new page (out unused).
bool paint_vec_begin_page(PaintVec *v, FILE *out);
// Ends the page (SVG: the document is complete and flushed). False on a write error.
bool paint_vec_end_page(PaintVec *v);
// PDF: ends the document (every byte handed to the stream). False on an error.
bool paint_vec_finish(PaintVec *v);
void paint_vec_destroy(PaintVec *v);
// PDF: errno of the first failed write to the stream (0: none).
int paint_vec_errno(const PaintVec *v);
PaintVecFormat paint_vec_format(const PaintVec *v);

// Draws the commands of dl on the page (text laid out by fonts as text.h lays it out).
void paint_vec_replay(PaintVec *v, Fonts *fonts, const DrawList *dl);

// The output's size (the viewport's, when one is set).
void paint_vec_size(const PaintVec *v, int *w, int *h);

#endif
