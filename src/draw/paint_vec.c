// paint_vec.c — the vector backend of paint.h (see paint_vec.h): SVG written
// here (no cairo: the page links this file), PDF through paint_pdf.c (cairo).
#include "paint_vec.h"

#include <spng.h>
#include <stdlib.h>
#include <string.h>

#include "paint_pdf.h"

struct PaintVec {
    PaintVecFormat fmt;
    int w, h;
    Rect view;       // PDF: the area drawn in (paint_vec_viewport)
    // SVG
    FILE *out;
    bool clip_open;  // a <g clip-path> of paint_vec_clip is open
    int depth;       // groups of paint_vec_push open
    unsigned clip_id;
    // PDF
    PaintPdf *pdf;
};

static void vec_pop(PaintVec *v);

static PaintVec *create(PaintVecFormat fmt, FILE *pdf_out, double w_pt, double h_pt, int w, int h, char *err,
                        size_t n)
{
    PaintVec *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, n, "attnviz: out of memory");
        return NULL;
    }
    v->fmt = fmt, v->w = w, v->h = h;
    v->view = (Rect){0, 0, w, h};
    if (fmt == PAINT_VEC_PDF) {
        if (!(v->pdf = paint_pdf_create(pdf_out, w_pt, h_pt, w_pt / w, err, n))) {
            free(v);
            return NULL;
        }
        paint_pdf_view(v->pdf, v->view);
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
    paint_pdf_view(v->pdf, v->view);
}

PaintVecFormat paint_vec_format(const PaintVec *v) { return v->fmt; }

int paint_vec_errno(const PaintVec *v) { return v ? paint_pdf_errno(v->pdf) : 0; }

void paint_vec_destroy(PaintVec *v)
{
    if (!v) return;
    paint_pdf_destroy(v->pdf);
    free(v);
}

bool paint_vec_begin_page(PaintVec *v, FILE *out)
{
    if (v->fmt == PAINT_VEC_PDF) return paint_pdf_ok(v->pdf);
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
    while (v->depth > 0) vec_pop(v);
    if (v->fmt == PAINT_VEC_PDF) {
        v->view = (Rect){0, 0, v->w, v->h};
        return paint_pdf_end_page(v->pdf, v->view);
    }
    if (v->clip_open) fputs("</g>\n", v->out);
    v->clip_open = false;
    fputs("</svg>\n", v->out);
    bool ok = fflush(v->out) == 0 && !ferror(v->out);
    v->out = NULL;
    return ok;
}

bool paint_vec_finish(PaintVec *v) { return v->fmt != PAINT_VEC_PDF || paint_pdf_finish(v->pdf); }

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

static int b64_write(spng_ctx *ctx, void *user, void *data, size_t len)
{
    (void)ctx;
    B64 *b = user;
    const unsigned char *d = data;
    for (size_t i = 0; i < len; i++) {
        b->buf[b->n++] = d[i];
        if (b->n == 3) b64_flush(b);
    }
    return ferror(b->f) ? SPNG_IO_ERROR : 0;
}

// An image's pixels as an opaque RGB PNG (libspng, as png_write.c), base64 into f.
static void svg_png(FILE *f, const unsigned char *rgba, int pitch, int w, int h)
{
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    unsigned char *rgb = malloc((size_t)w * (size_t)h * 3);
    B64 b = {f, {0}, 0};
    struct spng_ihdr ihdr = {.width = (uint32_t)w, .height = (uint32_t)h, .bit_depth = 8,
                             .color_type = SPNG_COLOR_TYPE_TRUECOLOR};
    if (ctx && rgb && spng_set_png_stream(ctx, b64_write, &b) == 0 && spng_set_ihdr(ctx, &ihdr) == 0) {
        for (int r = 0; r < h; r++)
            for (int c = 0; c < w; c++)
                memcpy(rgb + ((size_t)r * (size_t)w + (size_t)c) * 3, rgba + (size_t)r * (size_t)pitch + (size_t)c * 4, 3);
        spng_encode_image(ctx, rgb, (size_t)w * (size_t)h * 3, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
    }
    b64_flush(&b);
    free(rgb);
    spng_ctx_free(ctx);
}

// ---- primitives: SVG here, PDF in paint_pdf.c ---------------------------------------

static void vec_fill(PaintVec *v, Rgb col, uint8_t a, int x, int y, int w, int h)
{
    if (w <= 0 || h <= 0) return;
    if (v->fmt == PAINT_VEC_PDF) {
        paint_pdf_fill(v->pdf, col, a, x, y, w, h);
        return;
    }
    fprintf(v->out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"", x, y, w, h);
    svg_colour(v->out, "fill", col, a);
    fputs("/>\n", v->out);
}

static void vec_line(PaintVec *v, Rgb col, uint8_t a, int x1, int y1, int x2, int y2, int lw)
{
    if (v->fmt == PAINT_VEC_PDF) {
        paint_pdf_line(v->pdf, col, a, x1, y1, x2, y2, lw);
        return;
    }
    fprintf(v->out, "<line x1=\"%d.5\" y1=\"%d.5\" x2=\"%d.5\" y2=\"%d.5\" stroke-width=\"%d\"", x1, y1, x2, y2, lw);
    svg_colour(v->out, "stroke", col, a);
    fputs("/>\n", v->out);
}

static void vec_clip(PaintVec *v, const Rect *q)
{
    if (v->fmt == PAINT_VEC_PDF) {
        paint_pdf_clip(v->pdf, v->view, q); // the viewport's clip, then q
        return;
    }
    if (v->clip_open) fputs("</g>\n", v->out);
    v->clip_open = q != NULL;
    if (q) svg_clip_path(v, *q);
}

static void vec_push(PaintVec *v, Rect q)
{
    if (v->fmt == PAINT_VEC_PDF) paint_pdf_push(v->pdf, q);
    else svg_clip_path(v, q);
    v->depth++;
}

static void vec_pop(PaintVec *v)
{
    if (v->depth <= 0) return; // a pop without its push: nothing to end (cairo would fail the page)
    v->depth--;
    if (v->fmt == PAINT_VEC_PDF) paint_pdf_pop(v->pdf);
    else fputs("</g>\n", v->out);
}

static void vec_text(PaintVec *v, const TextRun *r, int x, int y, Rgb col, uint8_t a)
{
    int bx = x + r->x, by = y + r->baseline;
    if (v->fmt == PAINT_VEC_PDF) {
        paint_pdf_text(v->pdf, r, bx, by, col, a);
        return;
    }
    const char *generic = r->face == FONT_MONO ? "monospace" : "sans-serif";
    fprintf(v->out, "<text x=\"%d\" y=\"%d\" font-family=\"", bx, by);
    svg_text(v->out, r->family);
    fprintf(v->out, ", %s\" font-size=\"%d\"%s textLength=\"%d\" xml:space=\"preserve\"", generic, r->px,
            r->face == FONT_BOLD ? " font-weight=\"bold\"" : "", r->w);
    svg_colour(v->out, "fill", col, a);
    fputc('>', v->out);
    svg_text(v->out, r->utf8);
    fputs("</text>\n", v->out);
}

static void vec_image(PaintVec *v, const unsigned char *rgba, int pitch, int w, int h, int x, int y)
{
    if (w <= 0 || h <= 0) return;
    if (v->fmt == PAINT_VEC_PDF) {
        paint_pdf_image(v->pdf, rgba, pitch, w, h, x, y);
        return;
    }
    fprintf(v->out, "<image x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" image-rendering=\"pixelated\" "
                    "style=\"image-rendering:pixelated\" preserveAspectRatio=\"none\" "
                    "xlink:href=\"data:image/png;base64,",
            x, y, w, h);
    svg_png(v->out, rgba, pitch, w, h);
    fputs("\"/>\n", v->out);
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
