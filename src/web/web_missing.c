// web_missing.c — what the browser build leaves out, saying so (only in `make web`).
//
// PDF (the PDF frames and the PDF handout and worksheet) is drawn by cairo, which is not
// in the page (cairo and pixman are not among the libraries built for it): paint_vec.c's
// SVG writer is, its PDF half (paint_pdf.c) is not. Their entry points fail here with one
// line that says so, which the window shows as its usual "Export failed: …" notice (the
// page's E menu does not offer them: export_format.h). GIF and MP4 are web_video.c's.
#include <stdio.h>

#include "handout.h"
#include "paint_pdf.h"

#define NOT_HERE "not in the browser version: use the desktop app (attnviz) for %s"

bool handout_write(const HandoutOptions *o, const struct Session *ses, volatile const int *stop, int *pages, char *err,
                   size_t n)
{
    (void)ses, (void)stop;
    if (pages) *pages = 0;
    snprintf(err, n, NOT_HERE, o->worksheet ? "the PDF worksheet" : "the PDF handout");
    return false;
}

PaintPdf *paint_pdf_create(FILE *out, double w_pt, double h_pt, double scale, char *err, size_t n)
{
    (void)out, (void)w_pt, (void)h_pt, (void)scale;
    snprintf(err, n, NOT_HERE, "PDF");
    return NULL;
}
// (never called without a PaintPdf, which paint_pdf_create never returns here; NULL on the
// paths paint_vec.c takes for every PaintVec)
void paint_pdf_view(PaintPdf *p, Rect view) { (void)p, (void)view; }
bool paint_pdf_ok(const PaintPdf *p) { (void)p; return false; }
bool paint_pdf_end_page(PaintPdf *p, Rect view) { (void)p, (void)view; return false; }
bool paint_pdf_finish(PaintPdf *p) { (void)p; return false; }
void paint_pdf_destroy(PaintPdf *p) { (void)p; }
int paint_pdf_errno(const PaintPdf *p) { (void)p; return 0; }
void paint_pdf_fill(PaintPdf *p, Rgb col, uint8_t a, int x, int y, int w, int h)
{
    (void)p, (void)col, (void)a, (void)x, (void)y, (void)w, (void)h;
}
void paint_pdf_line(PaintPdf *p, Rgb col, uint8_t a, int x1, int y1, int x2, int y2, int lw)
{
    (void)p, (void)col, (void)a, (void)x1, (void)y1, (void)x2, (void)y2, (void)lw;
}
void paint_pdf_clip(PaintPdf *p, Rect view, const Rect *q) { (void)p, (void)view, (void)q; }
void paint_pdf_push(PaintPdf *p, Rect q) { (void)p, (void)q; }
void paint_pdf_pop(PaintPdf *p) { (void)p; }
void paint_pdf_text(PaintPdf *p, const TextRun *r, int bx, int by, Rgb col, uint8_t a)
{
    (void)p, (void)r, (void)bx, (void)by, (void)col, (void)a;
}
void paint_pdf_image(PaintPdf *p, const unsigned char *rgba, int pitch, int w, int h, int x, int y)
{
    (void)p, (void)rgba, (void)pitch, (void)w, (void)h, (void)x, (void)y;
}
