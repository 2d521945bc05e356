// paint_pdf.h — paint_vec's PDF half (cairo), private to the vector backend
// (paint_vec.c): each call is one primitive of paint_vec.h's replay, in the
// PaintVec's pixels. Its own file so that paint_vec.c (the SVG writer and the
// replay) builds without cairo: the page (src/web) links it alone until it has cairo.
#ifndef ATTNVIZ_PAINT_PDF_H
#define ATTNVIZ_PAINT_PDF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "colormap.h"
#include "layout.h"
#include "text.h"

typedef struct PaintPdf PaintPdf;

// A PDF document of w_pt × h_pt point pages written to out as pages end, drawn in
// pixels of scale points. NULL with one line in err on failure.
PaintPdf *paint_pdf_create(FILE *out, double w_pt, double h_pt, double scale, char *err, size_t n);
// The area drawn in: pixels of view, clipped to it.
void paint_pdf_view(PaintPdf *p, Rect view);
// No error so far (cairo's status and the stream's writes).
bool paint_pdf_ok(const PaintPdf *p);
// Ends the page; the next one is drawn in view.
bool paint_pdf_end_page(PaintPdf *p, Rect view);
// Ends the document (every byte handed to the stream).
bool paint_pdf_finish(PaintPdf *p);
void paint_pdf_destroy(PaintPdf *p);
// errno of the first failed write to the stream (0: none).
int paint_pdf_errno(const PaintPdf *p);

void paint_pdf_fill(PaintPdf *p, Rgb col, uint8_t a, int x, int y, int w, int h);
void paint_pdf_line(PaintPdf *p, Rgb col, uint8_t a, int x1, int y1, int x2, int y2, int lw);
// The view's clip, then q's (NULL: the view's alone).
void paint_pdf_clip(PaintPdf *p, Rect view, const Rect *q);
void paint_pdf_push(PaintPdf *p, Rect q);
void paint_pdf_pop(PaintPdf *p);
// A run with its baseline's start at (bx, by).
void paint_pdf_text(PaintPdf *p, const TextRun *r, int bx, int by, Rgb col, uint8_t a);
// h rows of w RGBA8 pixels, pitch bytes apart, at (x, y), opaque.
void paint_pdf_image(PaintPdf *p, const unsigned char *rgba, int pitch, int w, int h, int x, int y);

#endif
