// paint_vec.c — the vector backend of paint.h (see paint_vec.h): SVG written
// here, PDF through cairo.
#include "paint_vec.h"

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

struct PaintVec {
    PaintVecFormat fmt;
    int w, h;
    double scale;    // PDF: points a pixel
    Rect view;       // PDF: the area drawn in (paint_vec_viewport)
    // SVG
    FILE *out;
    bool clip_open;  // a <g clip-path> of paint_vec_clip is open
    int depth;       // groups of paint_vec_push open
    unsigned clip_id;
    // PDF
    cairo_surface_t *surf;
    cairo_t *cr;
    FILE *pdf_out;
    bool write_failed;
    int write_errno;
    Face faces[MAX_FACES];
    int n_faces;
};

static void vec_pop(PaintVec *v);

static cairo_status_t pdf_write(void *closure, const unsigned char *data, unsigned int len)
{
    PaintVec *v = closure;
    if (fwrite(data, 1, len, v->pdf_out) != len) {
        if (!v->write_failed) v->write_errno = errno;
        v->write_failed = true;
        return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
}

// cairo's matrix and clip for the viewport: pixels of the area, scaled to points.
static void pdf_apply_view(PaintVec *v)
{
    cairo_identity_matrix(v->cr);
    cairo_scale(v->cr, v->scale, v->scale);
    cairo_translate(v->cr, v->view.x, v->view.y);
    cairo_reset_clip(v->cr);
    cairo_rectangle(v->cr, 0, 0, v->view.w, v->view.h);
    cairo_clip(v->cr);
}

static PaintVec *create(PaintVecFormat fmt, FILE *pdf_out, double w_pt, double h_pt, int w, int h, char *err,
                        size_t n)
{
    PaintVec *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, n, "attnviz: out of memory");
        return NULL;
    }
    v->fmt = fmt, v->w = w, v->h = h;
    v->scale = w_pt / w, v->view = (Rect){0, 0, w, h};
    if (fmt == PAINT_VEC_PDF) {
        v->pdf_out = pdf_out;
        v->surf = cairo_pdf_surface_create_for_stream(pdf_write, v, w_pt, h_pt);
        cairo_pdf_surface_set_metadata(v->surf, CAIRO_PDF_METADATA_CREATOR, "attnviz");
        v->cr = cairo_create(v->surf);
        if (cairo_status(v->cr) != CAIRO_STATUS_SUCCESS) {
            snprintf(err, n, "attnviz: cannot start the PDF: %s", cairo_status_to_string(cairo_status(v->cr)));
            paint_vec_destroy(v);
            return NULL;
        }
        cairo_font_options_t *fo = cairo_font_options_create();
        cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
        cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
        cairo_set_font_options(v->cr, fo);
        cairo_font_options_destroy(fo);
        pdf_apply_view(v);
    }
    return v;
}

PaintVec *paint_vec_create(PaintVecFormat fmt, FILE *pdf_out, int w, int h, char *err, size_t n)
{
    return create(fmt, pdf_out, w, h, w, h, err, n);
}

PaintVec *paint_vec_create_pdf_pages(FILE *out, double w_pt, double h_pt, int w, int h, char *err, size_t n)
{
    return create(PAINT_VEC_PDF, out, w_pt, h_pt, w, h, err, n);
}

void paint_vec_viewport(PaintVec *v, const Rect *r)
{
    if (v->fmt != PAINT_VEC_PDF) return; // (SVG documents are one frame)
    v->view = r ? *r : (Rect){0, 0, v->w, v->h};
    pdf_apply_view(v);
}

PaintVecFormat paint_vec_format(const PaintVec *v) { return v->fmt; }

int paint_vec_errno(const PaintVec *v) { return v ? v->write_errno : 0; }

void paint_vec_destroy(PaintVec *v)
{
    if (!v) return;
    if (v->cr) cairo_destroy(v->cr);
    if (v->surf) {
        cairo_surface_finish(v->surf);
        cairo_surface_destroy(v->surf);
    }
    for (int i = 0; i < v->n_faces; i++) cairo_font_face_destroy(v->faces[i].cf);
    free(v);
}

bool paint_vec_begin_page(PaintVec *v, FILE *out)
{
    if (v->fmt == PAINT_VEC_PDF) return cairo_status(v->cr) == CAIRO_STATUS_SUCCESS && !v->write_failed;
    v->out = out, v->clip_open = false, v->depth = 0, v->clip_id = 0;
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
            "version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
            v->w, v->h, v->w, v->h);
    return !ferror(out);
}

bool paint_vec_end_page(PaintVec *v)
{
    if (v->fmt == PAINT_VEC_PDF) {
        while (v->depth > 0) vec_pop(v);
        cairo_show_page(v->cr);
        v->view = (Rect){0, 0, v->w, v->h};
        pdf_apply_view(v);
        return cairo_status(v->cr) == CAIRO_STATUS_SUCCESS && !v->write_failed;
    }
    while (v->depth > 0) vec_pop(v);
    if (v->clip_open) fputs("</g>\n", v->out);
    v->clip_open = false;
    fputs("</svg>\n", v->out);
    bool ok = fflush(v->out) == 0 && !ferror(v->out);
    v->out = NULL;
    return ok;
}

bool paint_vec_finish(PaintVec *v)
{
    if (v->fmt != PAINT_VEC_PDF) return true;
    cairo_destroy(v->cr);
    v->cr = NULL;
    cairo_surface_finish(v->surf);
    bool ok = cairo_surface_status(v->surf) == CAIRO_STATUS_SUCCESS && !v->write_failed;
    cairo_surface_destroy(v->surf);
    v->surf = NULL;
    return ok;
}

void paint_vec_size(const PaintVec *v, int *w, int *h) { *w = v->view.w, *h = v->view.h; }

// ---- SVG helpers ---------------------------------------------------------------

static void svg_colour(FILE *f, const char *attr, Rgb c, uint8_t a)
{
    fprintf(f, " %s=\"#%02x%02x%02x\"", attr, c.r, c.g, c.b);
    if (a != 255) fprintf(f, " %s-opacity=\"%.3f\"", attr, (double)a / 255.0);
}

// Text content: XML's five specials escaped, the control characters XML 1.0
// cannot hold dropped.
static void svg_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (*p >= 0x20 || *p == '\t') fputc(*p, f);
        }
    }
}

static void svg_clip_path(PaintVec *v, Rect q)
{
    fprintf(v->out, "<clipPath id=\"c%u\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/></clipPath>\n",
            v->clip_id, q.x, q.y, q.w > 0 ? q.w : 0, q.h > 0 ? q.h : 0);
    fprintf(v->out, "<g clip-path=\"url(#c%u)\">\n", v->clip_id);
    v->clip_id++;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

typedef struct B64 {
    FILE *f;
    unsigned char buf[3];
    int n;
} B64;

static void b64_flush(B64 *b)
{
    if (!b->n) return;
    unsigned v = (unsigned)b->buf[0] << 16 | (b->n > 1 ? (unsigned)b->buf[1] << 8 : 0) | (b->n > 2 ? b->buf[2] : 0);
    char o[4] = {b64[v >> 18 & 63], b64[v >> 12 & 63], b->n > 1 ? b64[v >> 6 & 63] : '=', b->n > 2 ? b64[v & 63] : '='};
    fwrite(o, 1, 4, b->f);
    b->n = 0;
}

static cairo_status_t b64_write(void *closure, const unsigned char *data, unsigned int len)
{
    B64 *b = closure;
    for (unsigned i = 0; i < len; i++) {
        b->buf[b->n++] = data[i];
        if (b->n == 3) b64_flush(b);
    }
    return ferror(b->f) ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

// ---- cairo helpers -------------------------------------------------------------

static void cr_colour(cairo_t *cr, Rgb c, uint8_t a)
{
    if (a == 255)
        cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
    else
        cairo_set_source_rgba(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0, a / 255.0);
}

// One FreeType library for the process: cairo may keep faces made from it in
// its own cache after a PaintVec is gone (each face closes its FT_Face).
static FT_Library ft_lib;
static const cairo_user_data_key_t ft_key;

static void ft_face_done(void *face) { FT_Done_Face(face); }

// The cairo face of a run's font file (made once): exactly that file and index
// (cairo's fontconfig patterns would match again, and may embolden), emboldened
// only where the PNG's text is (a family without a bold face).
static cairo_font_face_t *face_of(PaintVec *v, const TextRun *r)
{
    for (int i = 0; i < v->n_faces; i++)
        if (v->faces[i].index == r->font_index && v->faces[i].synth == r->synth_bold &&
            strcmp(v->faces[i].path, r->font_path) == 0)
            return v->faces[i].cf;
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
    if (v->n_faces == MAX_FACES) { // (a handful of files in practice)
        cairo_font_face_destroy(v->faces[0].cf);
        memmove(v->faces, v->faces + 1, sizeof v->faces[0] * (MAX_FACES - 1));
        v->n_faces--;
    }
    Face *f = &v->faces[v->n_faces++];
    snprintf(f->path, sizeof f->path, "%s", r->font_path);
    f->index = r->font_index, f->synth = r->synth_bold, f->cf = cf;
    return cf;
}

// ---- primitives ----------------------------------------------------------------

static void vec_fill(PaintVec *v, Rgb col, uint8_t a, int x, int y, int w, int h)
{
    if (w <= 0 || h <= 0) return;
    if (v->fmt == PAINT_VEC_PDF) {
        cr_colour(v->cr, col, a);
        cairo_rectangle(v->cr, x, y, w, h);
        cairo_fill(v->cr);
        return;
    }
    fprintf(v->out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"", x, y, w, h);
    svg_colour(v->out, "fill", col, a);
    fputs("/>\n", v->out);
}

static void vec_line(PaintVec *v, Rgb col, uint8_t a, int x1, int y1, int x2, int y2, int lw)
{
    if (v->fmt == PAINT_VEC_PDF) {
        cr_colour(v->cr, col, a);
        cairo_set_line_width(v->cr, lw);
        cairo_move_to(v->cr, x1 + 0.5, y1 + 0.5);
        cairo_line_to(v->cr, x2 + 0.5, y2 + 0.5);
        cairo_stroke(v->cr);
        return;
    }
    fprintf(v->out, "<line x1=\"%d.5\" y1=\"%d.5\" x2=\"%d.5\" y2=\"%d.5\" stroke-width=\"%d\"", x1, y1, x2, y2, lw);
    svg_colour(v->out, "stroke", col, a);
    fputs("/>\n", v->out);
}

static void vec_clip(PaintVec *v, const Rect *q)
{
    if (v->fmt == PAINT_VEC_PDF) {
        pdf_apply_view(v); // the viewport's clip, then q
        if (q) {
            cairo_rectangle(v->cr, q->x, q->y, q->w > 0 ? q->w : 0, q->h > 0 ? q->h : 0);
            cairo_clip(v->cr);
        }
        return;
    }
    if (v->clip_open) fputs("</g>\n", v->out);
    v->clip_open = q != NULL;
    if (q) svg_clip_path(v, *q);
}

static void vec_push(PaintVec *v, Rect q)
{
    if (v->fmt == PAINT_VEC_PDF) {
        cairo_save(v->cr);
        cairo_rectangle(v->cr, q.x, q.y, q.w > 0 ? q.w : 0, q.h > 0 ? q.h : 0);
        cairo_clip(v->cr);
    } else {
        svg_clip_path(v, q);
    }
    v->depth++;
}

static void vec_pop(PaintVec *v)
{
    if (v->depth <= 0) return; // a pop without its push: nothing to end (cairo would fail the page)
    v->depth--;
    if (v->fmt == PAINT_VEC_PDF) cairo_restore(v->cr);
    else fputs("</g>\n", v->out);
}

static void vec_text(PaintVec *v, const TextRun *r, int x, int y, Rgb col, uint8_t a)
{
    int bx = x + r->x, by = y + r->baseline;
    if (v->fmt == PAINT_VEC_SVG) {
        const char *generic = r->face == FONT_MONO ? "monospace" : "sans-serif";
        fprintf(v->out, "<text x=\"%d\" y=\"%d\" font-family=\"", bx, by);
        svg_text(v->out, r->family);
        fprintf(v->out, ", %s\" font-size=\"%d\"%s textLength=\"%d\" xml:space=\"preserve\"", generic, r->px,
                r->face == FONT_BOLD ? " font-weight=\"bold\"" : "", r->w);
        svg_colour(v->out, "fill", col, a);
        fputc('>', v->out);
        svg_text(v->out, r->utf8);
        fputs("</text>\n", v->out);
        return;
    }
    cairo_font_face_t *cf = face_of(v, r);
    if (!cf) return;
    cairo_t *cr = v->cr;
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

static void vec_image(PaintVec *v, const unsigned char *rgba, int pitch, int w, int h, int x, int y)
{
    if (w <= 0 || h <= 0) return;
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
    if (v->fmt == PAINT_VEC_PDF) {
        cairo_save(v->cr);
        cairo_set_source_surface(v->cr, img, x, y);
        cairo_pattern_set_filter(cairo_get_source(v->cr), CAIRO_FILTER_NEAREST);
        cairo_rectangle(v->cr, x, y, w, h);
        cairo_fill(v->cr);
        cairo_restore(v->cr);
    } else {
        fprintf(v->out, "<image x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" image-rendering=\"pixelated\" "
                        "style=\"image-rendering:pixelated\" preserveAspectRatio=\"none\" "
                        "xlink:href=\"data:image/png;base64,",
                x, y, w, h);
        B64 b = {v->out, {0}, 0};
        cairo_surface_write_to_png_stream(img, b64_write, &b);
        b64_flush(&b);
        fputs("\"/>\n", v->out);
    }
    cairo_surface_destroy(img);
}

// ---- the replayer: a DrawList as SVG / PDF ---------------------------------------

typedef struct VecText {
    PaintVec *vec;
    int x, y;
    Rgb col;
    uint8_t a;
} VecText;

static void vec_run(const TextRun *run, void *ctx)
{
    const VecText *t = ctx;
    vec_text(t->vec, run, t->x, t->y, t->col, t->a);
}

void paint_vec_replay(PaintVec *v, Fonts *fonts, const DrawList *dl)
{
    for (size_t i = 0; i < dl->n; i++) {
        const DrawCmd *c = &dl->cmd[i];
        const Rect q = c->r;
        switch (c->op) {
        case DRAW_CLEAR:
            vec_clip(v, NULL);
            vec_fill(v, c->col, 255, 0, 0, q.w, q.h);
            break;
        case DRAW_CLIP: vec_clip(v, c->none ? NULL : &q); break;
        case DRAW_PUSH: vec_push(v, q); break;
        case DRAW_POP: vec_pop(v); break;
        case DRAW_FILL: vec_fill(v, c->col, c->a, q.x, q.y, q.w, q.h); break;
        case DRAW_FRAME:
            vec_fill(v, c->col, c->a, q.x, q.y, q.w, c->t);
            vec_fill(v, c->col, c->a, q.x, q.y + q.h - c->t, q.w, c->t);
            vec_fill(v, c->col, c->a, q.x, q.y + c->t, c->t, q.h - 2 * c->t);
            vec_fill(v, c->col, c->a, q.x + q.w - c->t, q.y + c->t, c->t, q.h - 2 * c->t);
            break;
        case DRAW_LINE: vec_line(v, c->col, c->a, q.x, q.y, c->x2, c->y2, c->t); break;
        case DRAW_TEXT: {
            // cropped text: to the box's height; its lines were wrapped to its width,
            // which a viewer's own font metrics may stretch a little: not cropped there
            bool crop = q.w > 0 && q.h > 0;
            if (crop) vec_push(v, (Rect){q.x, q.y, q.w + c->px, q.h});
            VecText t = {v, q.x, q.y, c->col, c->a};
            text_runs(fonts, c->face, c->px, c->wrap_w, draw_list_str(dl, c), vec_run, &t);
            if (crop) vec_pop(v);
            break;
        }
        case DRAW_IMAGE:
            if (c->img->handle && c->img->mem) // (unscaled: the vector backend's images are frames' heatmaps)
                vec_image(v, c->img->handle, c->img->w * 4, c->x2, c->y2, q.x, q.y);
            break;
        }
    }
}
