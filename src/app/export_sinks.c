// export_sinks.c — one writer a format of the export-format table (export_format.h):
// PNG (pixels, a file a frame), SVG and PDF (the frame replayed through the vector
// backend, paint_vec.h), GIF and MP4 (pixels into one animation, video.h).
#include "export_format.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heatmap.h"
#include "paint_vec.h"
#include "png_write.h"
#include "temp_file.h"
#include "video.h"

#define PATH_IN_MSG EXPORT_PATH_IN_MSG

// --- PNG: each frame's pixels, its own file ----------------------------------------------

static bool png_pixels(ExportSink *s, const char *path, const unsigned char *rgba, int stride, int ticks, char *err,
                       size_t n)
{
    (void)ticks;
    return png_write_rgba(path, rgba, s->w, s->h, stride, s->zlib_level, false, err, n);
}

const ExportWriter export_writer_png = {.pixels = png_pixels};

// --- SVG, PDF: the frame drawn on the vector canvas ----------------------------------------

typedef struct VectorSink {
    PaintVec *vec;
    HeatmapCache *heatmaps;  // large heatmaps as images, for this backend
    FILE *pdf;               // PDF: the document, under a temporary name until it is complete
    char pdf_tmp[4200], pdf_path[4200];
} VectorSink;

static void vector_free(VectorSink *v)
{
    paint_vec_destroy(v->vec);
    heatmap_cache_destroy(v->heatmaps);
    free(v);
}

// path NULL: SVG (a file a frame); else the PDF, under a temporary name.
static bool vector_open(ExportSink *s, const char *path, char *err, size_t n)
{
    VectorSink *v = calloc(1, sizeof *v);
    if (!v || !(v->heatmaps = heatmap_cache_create())) {
        snprintf(err, n, "attnviz: out of memory preparing the export");
        free(v);
        return false;
    }
    if (path) {
        snprintf(v->pdf_path, sizeof v->pdf_path, "%s", path);
        if (!(v->pdf = temp_file_create(path, v->pdf_tmp, sizeof v->pdf_tmp))) {
            snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, path, strerror(errno));
            vector_free(v);
            return false;
        }
    }
    v->vec = paint_vec_create(path ? PAINT_VEC_PDF : PAINT_VEC_SVG, v->pdf, s->w, s->h, err, n);
    if (!v->vec) {
        if (v->pdf) fclose(v->pdf), unlink(v->pdf_tmp);
        vector_free(v);
        return false;
    }
    s->state = v;
    return true;
}

// An SVG file (temporary name, then renamed) or a page of the PDF. The frame is
// complete on disk when this returns true (a PDF's pages when the document is).
static bool vector_draw(ExportSink *s, const char *path, const Canvas *c, ExportDrawFn draw, void *ctx, char *err,
                        size_t n)
{
    VectorSink *v = s->state;
    Canvas vc = {c->r, c->fonts, v->heatmaps, v->vec, c->list};
    char tmp[4500] = "";
    FILE *f = NULL;
    bool svg = v->pdf == NULL;
    if (svg && !(f = temp_file_create(path, tmp, sizeof tmp))) {
        snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, path, strerror(errno));
        return false;
    }
    bool ok = paint_vec_begin_page(v->vec, f);
    draw(&vc, ctx);
    ok = paint_vec_end_page(v->vec) && ok;
    int e_no = ok ? 0 : svg ? errno : paint_vec_errno(v->vec);
    if (svg) {
        if (fclose(f) != 0 && ok) ok = false, e_no = errno;
        if (ok && rename(tmp, path) != 0) ok = false, e_no = errno;
        if (!ok) unlink(tmp);
    }
    if (!ok) snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, path, strerror(e_no ? e_no : EIO));
    return ok;
}

// PDF: ends the document and renames it into place when complete; otherwise
// removes it (an interrupted or failed export leaves no partial file).
static bool vector_close(ExportSink *s, bool complete, char *err, size_t n)
{
    VectorSink *v = s->state;
    s->state = NULL;
    bool ok = true;
    if (v->pdf) {
        ok = complete && paint_vec_finish(v->vec);
        int e_no = ok ? 0 : paint_vec_errno(v->vec);
        paint_vec_destroy(v->vec);
        v->vec = NULL;
        if (fclose(v->pdf) != 0 && ok) ok = false, e_no = errno;
        if (ok && rename(v->pdf_tmp, v->pdf_path) != 0) ok = false, e_no = errno;
        if (!ok) unlink(v->pdf_tmp);
        if (!ok && complete && err)
            snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, v->pdf_path, strerror(e_no ? e_no : EIO));
    }
    vector_free(v);
    return ok || !complete;
}

const ExportWriter export_writer_svg = {.open = vector_open, .draw = vector_draw, .close = vector_close};
const ExportWriter export_writer_pdf = {.open = vector_open, .draw = vector_draw, .close = vector_close};

// --- GIF, MP4: the pixels into one animation -------------------------------------------------

static bool video_open_as(ExportSink *s, const char *path, VideoFormat fmt, char *err, size_t n)
{
    s->state = video_open(path, fmt, s->w, s->h, s->fps, err, n);
    return s->state != NULL;
}
static bool gif_open(ExportSink *s, const char *path, char *err, size_t n) { return video_open_as(s, path, VIDEO_GIF, err, n); }
static bool mp4_open(ExportSink *s, const char *path, char *err, size_t n) { return video_open_as(s, path, VIDEO_MP4, err, n); }

static bool video_pixels(ExportSink *s, const char *path, const unsigned char *rgba, int stride, int ticks, char *err,
                         size_t n)
{
    (void)path;
    return video_add_frame(s->state, rgba, stride, ticks, err, n);
}

static bool video_sink_wants_observe(const ExportSink *s) { return video_wants_observe(s->state); }
static void video_sink_observe(ExportSink *s, const unsigned char *rgba, int stride) { video_observe(s->state, rgba, stride); }

static bool video_sink_close(ExportSink *s, bool complete, char *err, size_t n)
{
    VideoWriter *v = s->state;
    s->state = NULL;
    return video_close(v, complete, err, n) || !complete;
}

#define VIDEO_WRITER(open_fn)                                                                                        \
    {.open = open_fn, .pixels = video_pixels, .wants_observe = video_sink_wants_observe,                            \
     .observe = video_sink_observe, .close = video_sink_close}
const ExportWriter export_writer_gif = VIDEO_WRITER(gif_open);
const ExportWriter export_writer_mp4 = VIDEO_WRITER(mp4_open);
