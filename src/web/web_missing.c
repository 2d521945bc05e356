// web_missing.c — what the browser build leaves out, saying so (only in `make web`).
//
// The vector outputs (SVG and PDF frames, the PDF handout) are drawn by cairo, which is
// not in the page (cairo and pixman are not among the libraries built for it). Their
// entry points fail here with one line that says so, which the window shows as its
// usual "Export failed: …" notice. GIF and MP4 are web_video.c's.
#include <stdio.h>

#include "handout.h"
#include "paint_vec.h"

#define NOT_HERE "not in the browser version: use the desktop app (attnviz) for %s"

bool handout_write(const HandoutOptions *o, const struct Session *ses, volatile const int *stop, int *pages, char *err,
                   size_t n)
{
    (void)o, (void)ses, (void)stop;
    if (pages) *pages = 0;
    snprintf(err, n, NOT_HERE, "the PDF handout");
    return false;
}

PaintVec *paint_vec_create(PaintVecFormat fmt, FILE *pdf_out, int w, int h, char *err, size_t n)
{
    (void)pdf_out, (void)w, (void)h;
    snprintf(err, n, NOT_HERE, fmt == PAINT_VEC_PDF ? "PDF" : "SVG");
    return NULL;
}
// (never called without a PaintVec, which paint_vec_create never returns here)
bool paint_vec_begin_page(PaintVec *v, FILE *out) { (void)v, (void)out; return false; }
bool paint_vec_end_page(PaintVec *v) { (void)v; return false; }
bool paint_vec_finish(PaintVec *v) { (void)v; return false; }
void paint_vec_destroy(PaintVec *v) { (void)v; }
int paint_vec_errno(const PaintVec *v) { (void)v; return 0; }
void paint_vec_replay(PaintVec *v, Fonts *fonts, const DrawList *dl) { (void)v, (void)fonts, (void)dl; }
void paint_vec_viewport(PaintVec *v, const Rect *r) { (void)v, (void)r; }
void paint_vec_size(const PaintVec *v, int *w, int *h) { (void)v, *w = 0, *h = 0; }
