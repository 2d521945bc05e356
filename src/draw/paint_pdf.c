// paint_pdf.c — the PDF half of the vector backend, through cairo (see paint_pdf.h).
#include "paint_pdf.h"

#include <cairo-ft.h>
#include <cairo-pdf.h>
#include <cairo.h>
#include <errno.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include <stdlib.h>
#include <string.h>

#define MAX_FACES 16

typedef struct Face {
    char path[1024];
    int index;
    bool synth;
    cairo_font_face_t *cf;
} Face;

struct PaintPdf {
    double scale; // points a pixel
    cairo_surface_t *surf;
    cairo_t *cr;
    FILE *out;
    bool write_failed;
    int write_errno;
    Face faces[MAX_FACES];
    int n_faces;
};

static cairo_status_t pdf_write(void *closure, const unsigned char *data, unsigned int len)
{
    PaintPdf *p = closure;
    if (fwrite(data, 1, len, p->out) != len) {
        if (!p->write_failed) p->write_errno = errno;
        p->write_failed = true;
        return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
}

// cairo's matrix and clip for the viewport: pixels of the area, scaled to points.
void paint_pdf_view(PaintPdf *p, Rect view)
{
    cairo_identity_matrix(p->cr);
    cairo_scale(p->cr, p->scale, p->scale);
    cairo_translate(p->cr, view.x, view.y);
    cairo_reset_clip(p->cr);
    cairo_rectangle(p->cr, 0, 0, view.w, view.h);
    cairo_clip(p->cr);
}

PaintPdf *paint_pdf_create(FILE *out, double w_pt, double h_pt, double scale, char *err, size_t n)
{
    PaintPdf *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, n, "attnviz: out of memory");
        return NULL;
    }
    p->out = out, p->scale = scale;
    p->surf = cairo_pdf_surface_create_for_stream(pdf_write, p, w_pt, h_pt);
    cairo_pdf_surface_set_metadata(p->surf, CAIRO_PDF_METADATA_CREATOR, "attnviz");
    p->cr = cairo_create(p->surf);
    if (cairo_status(p->cr) != CAIRO_STATUS_SUCCESS) {
        snprintf(err, n, "attnviz: cannot start the PDF: %s", cairo_status_to_string(cairo_status(p->cr)));
        paint_pdf_destroy(p);
        return NULL;
    }
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_set_font_options(p->cr, fo);
    cairo_font_options_destroy(fo);
    return p;
}

bool paint_pdf_ok(const PaintPdf *p) { return cairo_status(p->cr) == CAIRO_STATUS_SUCCESS && !p->write_failed; }

int paint_pdf_errno(const PaintPdf *p) { return p ? p->write_errno : 0; }

void paint_pdf_destroy(PaintPdf *p)
{
    if (!p) return;
    if (p->cr) cairo_destroy(p->cr);
    if (p->surf) {
        cairo_surface_finish(p->surf);
        cairo_surface_destroy(p->surf);
    }
    for (int i = 0; i < p->n_faces; i++) cairo_font_face_destroy(p->faces[i].cf);
    free(p);
}

bool paint_pdf_end_page(PaintPdf *p, Rect view)
{
    cairo_show_page(p->cr);
    paint_pdf_view(p, view);
    return paint_pdf_ok(p);
}

bool paint_pdf_finish(PaintPdf *p)
{
    cairo_destroy(p->cr);
    p->cr = NULL;
    cairo_surface_finish(p->surf);
    bool ok = cairo_surface_status(p->surf) == CAIRO_STATUS_SUCCESS && !p->write_failed;
    cairo_surface_destroy(p->surf);
    p->surf = NULL;
    return ok;
}

static void cr_colour(cairo_t *cr, Rgb c, uint8_t a)
{
    if (a == 255)
        cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
    else
        cairo_set_source_rgba(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0, a / 255.0);
}

// One FreeType library for the process: cairo may keep faces made from it in
// its own cache after a PaintPdf is gone (each face closes its FT_Face).
static FT_Library ft_lib;
static const cairo_user_data_key_t ft_key;

static void ft_face_done(void *face) { FT_Done_Face(face); }

// The cairo face of a run's font file (made once): exactly that file and index
// (cairo's fontconfig patterns would match again, and may embolden), emboldened
// only where the PNG's text is (a family without a bold face).
static cairo_font_face_t *face_of(PaintPdf *p, const TextRun *r)
{
    for (int i = 0; i < p->n_faces; i++)
        if (p->faces[i].index == r->font_index && p->faces[i].synth == r->synth_bold &&
            strcmp(p->faces[i].path, r->font_path) == 0)
            return p->faces[i].cf;
    if (!ft_lib && FT_Init_FreeType(&ft_lib) != 0) return NULL;
    FT_Face ft;
    if (FT_New_Face(ft_lib, r->font_path, r->font_index, &ft) != 0) return NULL;
    cairo_font_face_t *cf = cairo_ft_font_face_create_for_ft_face(ft, 0);
    if (cairo_font_face_status(cf) != CAIRO_STATUS_SUCCESS ||
        cairo_font_face_set_user_data(cf, &ft_key, ft, ft_face_done) != CAIRO_STATUS_SUCCESS) {
        cairo_font_face_destroy(cf);
        FT_Done_Face(ft);
        return NULL;
    }
    if (r->synth_bold) cairo_ft_font_face_set_synthesize(cf, CAIRO_FT_SYNTHESIZE_BOLD);
    if (p->n_faces == MAX_FACES) { // (a handful of files in practice)
        cairo_font_face_destroy(p->faces[0].cf);
        memmove(p->faces, p->faces + 1, sizeof p->faces[0] * (MAX_FACES - 1));
        p->n_faces--;
    }
    Face *f = &p->faces[p->n_faces++];
    snprintf(f->path, sizeof f->path, "%s", r->font_path);
    f->index = r->font_index, f->synth = r->synth_bold, f->cf = cf;
    return cf;
}

void paint_pdf_fill(PaintPdf *p, Rgb col, uint8_t a, int x, int y, int w, int h)
{
    cr_colour(p->cr, col, a);
    cairo_rectangle(p->cr, x, y, w, h);
    cairo_fill(p->cr);
}

void paint_pdf_line(PaintPdf *p, Rgb col, uint8_t a, int x1, int y1, int x2, int y2, int lw)
{
    cr_colour(p->cr, col, a);
    cairo_set_line_width(p->cr, lw);
    cairo_move_to(p->cr, x1 + 0.5, y1 + 0.5);
    cairo_line_to(p->cr, x2 + 0.5, y2 + 0.5);
    cairo_stroke(p->cr);
}

void paint_pdf_clip(PaintPdf *p, Rect view, const Rect *q)
{
    paint_pdf_view(p, view);
    if (q) {
        cairo_rectangle(p->cr, q->x, q->y, q->w > 0 ? q->w : 0, q->h > 0 ? q->h : 0);
        cairo_clip(p->cr);
    }
}

void paint_pdf_push(PaintPdf *p, Rect q)
{
    cairo_save(p->cr);
    cairo_rectangle(p->cr, q.x, q.y, q.w > 0 ? q.w : 0, q.h > 0 ? q.h : 0);
    cairo_clip(p->cr);
}

void paint_pdf_pop(PaintPdf *p) { cairo_restore(p->cr); }

void paint_pdf_text(PaintPdf *p, const TextRun *r, int bx, int by, Rgb col, uint8_t a)
{
    cairo_font_face_t *cf = face_of(p, r);
    if (!cf) return;
    cairo_t *cr = p->cr;
    cairo_set_font_face(cr, cf);
    cairo_set_font_size(cr, r->px);
    cr_colour(cr, col, a);
    cairo_scaled_font_t *sf = cairo_get_scaled_font(cr);
    cairo_glyph_t *glyphs = NULL;
    cairo_text_cluster_t *clusters = NULL;
    int ng = 0, nc = 0;
    cairo_text_cluster_flags_t flags = 0;
    int len = (int)strlen(r->utf8);
    if (cairo_scaled_font_text_to_glyphs(sf, bx, by, r->utf8, len, &glyphs, &ng, &clusters, &nc, &flags) !=
        CAIRO_STATUS_SUCCESS)
        return;
    // The glyphs where the PNG has them: the run spans exactly the width the
    // fonts measured for the layout (hinted advances and kerning there).
    cairo_text_extents_t ext;
    cairo_scaled_font_glyph_extents(sf, glyphs, ng, &ext);
    if (ext.x_advance > 0 && r->w > 0) {
        double k = r->w / ext.x_advance;
        for (int i = 0; i < ng; i++) glyphs[i].x = bx + (glyphs[i].x - bx) * k;
    }
    cairo_show_text_glyphs(cr, r->utf8, len, glyphs, ng, clusters, nc, flags);
    cairo_glyph_free(glyphs);
    cairo_text_cluster_free(clusters);
}

void paint_pdf_image(PaintPdf *p, const unsigned char *rgba, int pitch, int w, int h, int x, int y)
{
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(img);
        return;
    }
    cairo_surface_flush(img);
    unsigned char *dst = cairo_image_surface_get_data(img);
    int dpitch = cairo_image_surface_get_stride(img);
    for (int r = 0; r < h; r++) {
        const unsigned char *s = rgba + (size_t)r * (size_t)pitch;
        uint32_t *d = (uint32_t *)(void *)(dst + (size_t)r * (size_t)dpitch);
        for (int c = 0; c < w; c++, s += 4) d[c] = 0xFF000000u | (uint32_t)s[0] << 16 | (uint32_t)s[1] << 8 | s[2];
    }
    cairo_surface_mark_dirty(img);
    cairo_save(p->cr);
    cairo_set_source_surface(p->cr, img, x, y);
    cairo_pattern_set_filter(cairo_get_source(p->cr), CAIRO_FILTER_NEAREST);
    cairo_rectangle(p->cr, x, y, w, h);
    cairo_fill(p->cr);
    cairo_restore(p->cr);
    cairo_surface_destroy(img);
}
