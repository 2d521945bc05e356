// web_video.c — video.h in the page (only in `make web`): the desktop writes GIF and MP4
// with libavcodec (video.c), which a page cannot dlopen. Here:
//
//   GIF  gif_write.c, attnviz's own GIF89a encoder, in the WebAssembly (the same
//        palette as the desktop's: gif_palette.c)
//   MP4  the browser's H.264 encoder (WebCodecs' VideoEncoder) and a small MP4 muxer,
//        in web_export.js: each frame is handed over as it is drawn; the file is
//        written into the page's file system when the encoder has flushed, after
//        video_close returns (the download waits for it: web.js)
#include <emscripten.h>
#include <stdio.h>
#include <stdlib.h>

#include "gif_write.h"
#include "video.h"

#define PATH_IN_MSG 400

struct VideoWriter {
    VideoFormat fmt;
    GifWriter *gif;
    int mp4;          // web_export.js's encoder (> 0)
    int w, h;
    char path[1200];
};

// web_export.js's one-line error for encoder id (or for the open that gave none), in err.
static void mp4_error(int id, const char *path, char *err, size_t n)
{
    char why[600];
    EM_ASM({ stringToUTF8(attnvizExport.mp4Error($0), $1, $2); }, id, why, (int)sizeof why);
    snprintf(err, n, "%.*s: %s", PATH_IN_MSG, path, why);
}

VideoWriter *video_open(const char *path, VideoFormat fmt, int w, int h, int fps, char *err, size_t n)
{
    VideoWriter *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, n, "%.*s: out of memory", PATH_IN_MSG, path);
        return NULL;
    }
    v->fmt = fmt, v->w = w, v->h = h;
    snprintf(v->path, sizeof v->path, "%s", path);
    if (fmt == VIDEO_GIF) v->gif = gif_write_open(path, w, h, fps, err, n);
    else v->mp4 = EM_ASM_INT({ return attnvizExport.mp4Open(UTF8ToString($0), $1, $2, $3); }, path, w, h, fps);
    if (fmt == VIDEO_MP4 && v->mp4 <= 0) mp4_error(0, path, err, n);
    if (!v->gif && v->mp4 <= 0) {
        free(v);
        return NULL;
    }
    return v;
}

bool video_wants_observe(const VideoWriter *v) { return v->gif && gif_write_wants_observe(v->gif); }

void video_observe(VideoWriter *v, const unsigned char *rgba, int pitch)
{
    if (v->gif) gif_write_observe(v->gif, rgba, pitch);
}

bool video_add_frame(VideoWriter *v, const unsigned char *rgba, int pitch, int ticks, char *err, size_t n)
{
    if (v->gif) return gif_write_frame(v->gif, rgba, pitch, ticks, err, n);
    if (EM_ASM_INT({ return attnvizExport.mp4Frame($0, HEAPU8, $1, $2, $3); }, v->mp4, rgba, pitch, ticks < 1 ? 1 : ticks))
        return true;
    mp4_error(v->mp4, v->path, err, n);
    return false;
}

bool video_close(VideoWriter *v, bool keep, char *err, size_t n)
{
    if (!v) return true;
    bool ok = true;
    if (v->gif) ok = gif_write_close(v->gif, keep, err, n);
    else if (!EM_ASM_INT({ return attnvizExport.mp4Close($0, $1); }, v->mp4, keep)) {
        mp4_error(v->mp4, v->path, err, n);
        ok = !keep;
    }
    free(v);
    return ok;
}

const char *video_encoder_name(VideoFormat fmt) { return fmt == VIDEO_MP4 ? "WebCodecs H.264" : "gif_write"; }

bool video_available(VideoFormat fmt)
{
    return fmt == VIDEO_GIF || EM_ASM_INT({ return attnvizExport.mp4Supported() ? 1 : 0; });
}
