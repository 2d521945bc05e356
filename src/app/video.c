// video.c — MP4 (libx264) and GIF through libavcodec / libavformat (see video.h).
#include "video.h"

#include <dlfcn.h>
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gif_palette.h"
#include "temp_file.h"

// ---- the FFmpeg libraries, opened when the first GIF or MP4 is written ------------
//
// Linked into the program, libavcodec and libavformat bring ~110 shared libraries
// into every start of the window (measured: start-up 55 → 85 ms, 23 → 43 MiB) for an
// export most sessions never make. They are opened here (dlopen, the sonames of the
// headers built against) and their functions called through AV(name).
#define AV_FUNCS(X) \
    X(AVUTIL, av_frame_alloc) \
    X(AVUTIL, av_frame_free) \
    X(AVUTIL, av_frame_get_buffer) \
    X(AVUTIL, av_frame_make_writable) \
    X(AVUTIL, av_free) \
    X(AVUTIL, av_freep) \
    X(AVUTIL, av_log_set_level) \
    X(AVUTIL, av_malloc) \
    X(AVUTIL, av_opt_set) \
    X(AVUTIL, av_strerror) \
    X(AVCODEC, av_packet_alloc) \
    X(AVCODEC, av_packet_free) \
    X(AVCODEC, av_packet_rescale_ts) \
    X(AVCODEC, avcodec_alloc_context3) \
    X(AVCODEC, avcodec_find_encoder_by_name) \
    X(AVCODEC, avcodec_free_context) \
    X(AVCODEC, avcodec_open2) \
    X(AVCODEC, avcodec_parameters_from_context) \
    X(AVCODEC, avcodec_receive_packet) \
    X(AVCODEC, avcodec_send_frame) \
    X(AVFORMAT, av_interleaved_write_frame) \
    X(AVFORMAT, av_write_trailer) \
    X(AVFORMAT, avformat_alloc_output_context2) \
    X(AVFORMAT, avformat_free_context) \
    X(AVFORMAT, avformat_new_stream) \
    X(AVFORMAT, avformat_write_header) \
    X(AVFORMAT, avio_alloc_context) \
    X(AVFORMAT, avio_context_free) \
    X(AVFORMAT, avio_flush) \
    X(SWSCALE, sws_freeContext) \
    X(SWSCALE, sws_getCoefficients) \
    X(SWSCALE, sws_getContext) \
    X(SWSCALE, sws_scale) \
    X(SWSCALE, sws_setColorspaceDetails)

enum { LIB_AVUTIL, LIB_AVCODEC, LIB_AVFORMAT, LIB_SWSCALE, LIB_COUNT };
#define AV_STR2(x) #x
#define AV_STR(x) AV_STR2(x)
static const char *const LIB_SONAME[LIB_COUNT] = {
    "libavutil.so." AV_STR(LIBAVUTIL_VERSION_MAJOR), "libavcodec.so." AV_STR(LIBAVCODEC_VERSION_MAJOR),
    "libavformat.so." AV_STR(LIBAVFORMAT_VERSION_MAJOR), "libswscale.so." AV_STR(LIBSWSCALE_VERSION_MAJOR)};

#define AV_DECLARE(lib, f) static __typeof__(f) *dl_##f;
AV_FUNCS(AV_DECLARE)
#define AV(f) (*dl_##f)

static pthread_once_t av_once = PTHREAD_ONCE_INIT;
static char av_error[600]; // why they could not be opened ("" when they were)

static void av_load(void)
{
    void *h[LIB_COUNT];
    for (int i = 0; i < LIB_COUNT; i++) {
        // avutil first: the others need it; RTLD_LOCAL keeps their symbols to themselves
        h[i] = dlopen(LIB_SONAME[i], RTLD_NOW | RTLD_LOCAL);
        if (!h[i]) {
            const char *why = dlerror();
            snprintf(av_error, sizeof av_error, "cannot load %s (%.300s); install FFmpeg's libraries (make deps)",
                     LIB_SONAME[i], why ? why : "not found");
            return;
        }
    }
#define AV_RESOLVE(lib, f)                                                                               \
    {                                                                                                   \
        void *sym = dlsym(h[LIB_##lib], #f);                                                            \
        if (!sym) {                                                                                     \
            snprintf(av_error, sizeof av_error, "%s has no %s", LIB_SONAME[LIB_##lib], #f);              \
            return;                                                                                     \
        }                                                                                               \
        memcpy(&dl_##f, &sym, sizeof sym); /* (ISO C has no cast from void * to a function pointer) */ \
    }
    AV_FUNCS(AV_RESOLVE)
#undef AV_RESOLVE
}

// True when the libraries are open (once per process); else err says why.
static bool av_ready(char *err, size_t n)
{
    pthread_once(&av_once, av_load);
    if (!av_error[0]) return true;
    snprintf(err, n, "attnviz: %s", av_error);
    return false;
}

#define IO_BUF 65536
#define PATH_IN_MSG 400

// ---- the writer -------------------------------------------------------------------

struct VideoWriter {
    VideoFormat fmt;
    int w, h, fps;
    long frames;
    char path[4200], tmp[4300];
    FILE *f;
    int io_errno;
    AVFormatContext *oc;
    AVCodecContext *cc;
    AVStream *st;
    AVFrame *frame;
    AVPacket *pkt;
    struct SwsContext *sws;
    GifPalette pal;
    bool header_written, trailer_written;
    // MP4: each frame sent to the encoder once, its start (pts) and how many ticks it lasts,
    // in sending order (pts increasing): a packet's duration is its frame's (encode)
    struct { long pts; int ticks; } *sent;
    long n_sent, cap_sent;
};

void video_observe(VideoWriter *v, const unsigned char *rgba, int pitch)
{
    if (v->fmt == VIDEO_GIF && !v->pal.ready) gif_palette_observe(&v->pal, rgba, pitch, v->w, v->h);
}

bool video_wants_observe(const VideoWriter *v) { return v->fmt == VIDEO_GIF && !v->pal.ready; }

const char *video_encoder_name(VideoFormat fmt) { return fmt == VIDEO_MP4 ? "libx264" : "gif"; }

bool video_available(VideoFormat fmt)
{
    (void)fmt;
    return true;
}

static int io_write(void *opaque, uint8_t *buf, int size) // (const from FFmpeg 6.1)
{
    VideoWriter *v = opaque;
    if (size > 0 && fwrite(buf, 1, (size_t)size, v->f) != (size_t)size) {
        if (!v->io_errno) v->io_errno = errno ? errno : EIO;
        return AVERROR(v->io_errno);
    }
    return size;
}

static int64_t io_seek(void *opaque, int64_t offset, int whence)
{
    VideoWriter *v = opaque;
    if (whence == AVSEEK_SIZE) return -1;
    if (fflush(v->f) != 0 || fseeko(v->f, (off_t)offset, whence & ~AVSEEK_FORCE) != 0) {
        if (!v->io_errno) v->io_errno = errno ? errno : EIO;
        return AVERROR(v->io_errno);
    }
    return (int64_t)ftello(v->f);
}

static void av_msg(char *err, size_t n, const VideoWriter *v, const char *what, int rc)
{
    char e[AV_ERROR_MAX_STRING_SIZE] = "";
    if (v->io_errno)
        snprintf(e, sizeof e, "%s", strerror(v->io_errno));
    else
        AV(av_strerror)(rc, e, sizeof e);
    snprintf(err, n, "%.*s: %s: %s", PATH_IN_MSG, v->path, what, e);
}

static void writer_free(VideoWriter *v)
{
    if (!v) return;
    // A muxer frees some of its state only in its trailer (FFmpeg 5.1's GIF muxer
    // keeps the previous packet until then): an abandoned file gets one too,
    // into the temporary file about to be removed.
    if (v->oc && v->header_written && !v->trailer_written) AV(av_write_trailer)(v->oc);
    if (v->oc) {
        if (v->oc->pb) {
            AV(av_freep)(&v->oc->pb->buffer);
            AV(avio_context_free)(&v->oc->pb);
        }
        AV(avformat_free_context)(v->oc);
    }
    AV(avcodec_free_context)(&v->cc);
    AV(av_frame_free)(&v->frame);
    AV(av_packet_free)(&v->pkt);
    AV(sws_freeContext)(v->sws);
    gif_palette_free(&v->pal);
    free(v->sent);
    if (v->f) {
        fclose(v->f);
        unlink(v->tmp);
    }
    free(v);
}

VideoWriter *video_open(const char *path, VideoFormat fmt, int w, int h, int fps, char *err, size_t n)
{
    if (!av_ready(err, n)) return NULL;
    VideoWriter *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, n, "attnviz: out of memory");
        return NULL;
    }
    v->fmt = fmt, v->w = w, v->h = h, v->fps = fps;
    AV(av_log_set_level)(AV_LOG_ERROR); // errors come back as return codes: no encoder statistics on stderr
    snprintf(v->path, sizeof v->path, "%s", path);
    int rc = 0;
    const char *what = "cannot start the video";
    if (fmt == VIDEO_MP4 && (w % 2 || h % 2)) {
        snprintf(err, n, "%.*s: H.264 needs an even width and height (got %dx%d; try --size %dx%d)", PATH_IN_MSG, path, w,
                 h, w + w % 2, h + h % 2);
        free(v);
        return NULL;
    }
    const AVCodec *codec = AV(avcodec_find_encoder_by_name)(video_encoder_name(fmt));
    if (!codec) {
        snprintf(err, n, "%.*s: this libavcodec has no %s encoder", PATH_IN_MSG, path, video_encoder_name(fmt));
        free(v);
        return NULL;
    }
    if ((rc = AV(avformat_alloc_output_context2)(&v->oc, NULL, fmt == VIDEO_MP4 ? "mp4" : "gif", NULL)) < 0) goto fail;
    v->st = AV(avformat_new_stream)(v->oc, NULL);
    v->cc = AV(avcodec_alloc_context3)(codec);
    v->frame = AV(av_frame_alloc)();
    v->pkt = AV(av_packet_alloc)();
    if (!v->st || !v->cc || !v->frame || !v->pkt) {
        rc = AVERROR(ENOMEM);
        goto fail;
    }
    AVCodecContext *cc = v->cc;
    cc->width = w, cc->height = h;
    // GIF delays are in hundredths of a second; H.264 counts frames
    cc->time_base = fmt == VIDEO_GIF ? (AVRational){1, 100} : (AVRational){1, fps};
    cc->framerate = (AVRational){fps, 1};
    cc->pix_fmt = fmt == VIDEO_GIF ? AV_PIX_FMT_PAL8 : AV_PIX_FMT_YUV420P;
    if (fmt == VIDEO_MP4) {
        cc->color_range = AVCOL_RANGE_MPEG;
        cc->colorspace = AVCOL_SPC_BT709, cc->color_primaries = AVCOL_PRI_BT709, cc->color_trc = AVCOL_TRC_BT709;
        cc->gop_size = fps * 2; // a key frame every 2 s: slides can seek
        AV(av_opt_set)(cc->priv_data, "preset", "veryfast", 0);
        AV(av_opt_set)(cc->priv_data, "crf", "18", 0);   // text edges stay sharp
        AV(av_opt_set)(cc->priv_data, "profile", "high", 0);
        // no B-frames: with a held stage one frame long, x264 would decode a hold's frames 2 s
        // before they are shown (its decode times lag by frames, not by time), and the track's
        // sample times would add up to less than its length; without them each frame's
        // decode time is its show time and its length the hold's
        cc->max_b_frames = 0;
    }
    if (v->oc->oformat->flags & AVFMT_GLOBALHEADER) cc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    what = "cannot open the encoder";
    if ((rc = AV(avcodec_open2)(cc, codec, NULL)) < 0) goto fail;
    if ((rc = AV(avcodec_parameters_from_context)(v->st->codecpar, cc)) < 0) goto fail;
    v->st->time_base = cc->time_base;
    v->st->avg_frame_rate = (AVRational){fps, 1};
    v->frame->format = cc->pix_fmt, v->frame->width = w, v->frame->height = h;
    if ((rc = AV(av_frame_get_buffer)(v->frame, 0)) < 0) goto fail;
    if (fmt == VIDEO_MP4) {
        v->sws = AV(sws_getContext)(w, h, AV_PIX_FMT_RGBA, w, h, AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
        if (!v->sws) {
            rc = AVERROR(ENOMEM);
            goto fail;
        }
        const int *bt709 = AV(sws_getCoefficients)(SWS_CS_ITU709);
        AV(sws_setColorspaceDetails)(v->sws, bt709, 1, bt709, 0, 0, 1 << 16, 1 << 16);
    } else {
        if (!gif_palette_init(&v->pal)) {
            rc = AVERROR(ENOMEM);
            goto fail;
        }
    }
    // the file: created exclusively beside path, renamed by video_close
    v->f = temp_file_create(path, v->tmp, sizeof v->tmp);
    if (!v->f) {
        snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, path, strerror(errno));
        writer_free(v);
        return NULL;
    }
    unsigned char *buf = AV(av_malloc)(IO_BUF);
    if (!buf || !(v->oc->pb = AV(avio_alloc_context)(buf, IO_BUF, 1, v, NULL, io_write, io_seek))) {
        AV(av_free)(buf);
        rc = AVERROR(ENOMEM);
        goto fail;
    }
    v->oc->flags |= AVFMT_FLAG_CUSTOM_IO;
    what = "cannot write the header";
    if ((rc = AV(avformat_write_header)(v->oc, NULL)) < 0) goto fail;
    v->header_written = true;
    return v;
fail:
    av_msg(err, n, v, what, rc);
    writer_free(v);
    return NULL;
}

// Sends frame (NULL: flush) and writes every packet the encoder has ready.
static int encode(VideoWriter *v, AVFrame *frame)
{
    int rc = AV(avcodec_send_frame)(v->cc, frame);
    if (rc < 0) return rc;
    for (;;) {
        rc = AV(avcodec_receive_packet)(v->cc, v->pkt);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return 0;
        if (rc < 0) return rc;
        if (v->fmt == VIDEO_GIF) { // this frame's delay: up to the next frame's time
            long i = lround((double)v->pkt->pts * v->fps / 100.0);
            v->pkt->duration = lround((double)(i + 1) * 100.0 / v->fps) - v->pkt->pts;
        } else { // the frame's own length: a held stage is one frame lasting its hold
            long lo = 0, hi = v->n_sent - 1;
            while (lo < hi) {
                const long mid = (lo + hi) / 2;
                if (v->sent[mid].pts < v->pkt->pts) lo = mid + 1;
                else hi = mid;
            }
            v->pkt->duration = v->n_sent > 0 && v->sent[lo].pts == v->pkt->pts ? v->sent[lo].ticks : 1;
        }
        AV(av_packet_rescale_ts)(v->pkt, v->cc->time_base, v->st->time_base);
        v->pkt->stream_index = v->st->index;
        rc = AV(av_interleaved_write_frame)(v->oc, v->pkt); // takes the packet's data
        if (rc < 0) return rc;
    }
}

// MP4: sends v->frame to the encoder once, starting at tick pts and lasting `ticks` (its
// packet's duration, found by encode). False with one line in err.
static bool mp4_send(VideoWriter *v, long pts, int ticks, char *err, size_t n)
{
    if (v->n_sent == v->cap_sent) {
        const long cap = v->cap_sent ? 2 * v->cap_sent : 256;
        void *grown = realloc(v->sent, (size_t)cap * sizeof *v->sent);
        if (!grown) {
            snprintf(err, n, "%.*s: out of memory", PATH_IN_MSG, v->path);
            return false;
        }
        v->sent = grown, v->cap_sent = cap;
    }
    v->sent[v->n_sent].pts = pts, v->sent[v->n_sent++].ticks = ticks;
    v->frame->pts = pts;
    const int rc = encode(v, v->frame);
    if (rc < 0) av_msg(err, n, v, "cannot encode a frame", rc);
    return rc >= 0;
}

bool video_add_frame(VideoWriter *v, const unsigned char *rgba, int pitch, int ticks, char *err, size_t n)
{
    int rc = AV(av_frame_make_writable)(v->frame);
    if (rc < 0) {
        av_msg(err, n, v, "cannot encode a frame", rc);
        return false;
    }
    if (v->fmt == VIDEO_MP4) {
        const uint8_t *src[1] = {rgba};
        int stride[1] = {pitch};
        AV(sws_scale)(v->sws, src, stride, 0, v->h, v->frame->data, v->frame->linesize);
    } else {
        if (!v->pal.ready) { // nothing observed: this frame's colours make the palette
            if (v->pal.n == 0) gif_palette_observe(&v->pal, rgba, pitch, v->w, v->h);
            if (!gif_palette_make(&v->pal)) {
                snprintf(err, n, "%.*s: out of memory choosing the colours", PATH_IN_MSG, v->path);
                return false;
            }
        }
        gif_palette_map(&v->pal, rgba, pitch, v->w, v->h, v->frame->data[0], v->frame->linesize[0]);
        uint32_t *pal = (uint32_t *)(void *)v->frame->data[1];
        for (int i = 0; i < 256; i++) pal[i] = i < v->pal.n_pal ? 0xFF000000u | v->pal.pal[i] : 0; // 255: transparent
    }
    if (ticks < 1) ticks = 1;
    if (v->fmt == VIDEO_MP4) { // one frame lasting `ticks` (variable frame timing), not the frame repeated
        // (not made a key frame: coded from the transition before it, a held frame came out
        // 1.2 dB sharper than as a key frame, 38.4 against 37.1 dB PSNR at 1080p, and the file smaller)
        if (!mp4_send(v, v->frames, ticks, err, n)) return false;
        v->frames += ticks;
        return true;
    }
    for (int k = 0; k < ticks; k++) { // (the encoder keeps its own reference of the frame)
        v->frame->pts = lround((double)v->frames * 100.0 / v->fps);
        if ((rc = encode(v, v->frame)) < 0) {
            av_msg(err, n, v, "cannot encode a frame", rc);
            return false;
        }
        v->frames++;
    }
    return true;
}

bool video_close(VideoWriter *v, bool keep, char *err, size_t n)
{
    if (!v) return true;
    bool ok = keep, failed = false;
    // MP4: a last frame held is sent again at its last tick (the encoder still has it), so a
    // player or converter that ignores the last frame's length (ffmpeg -vsync cfr does)
    // still shows the whole hold
    if (keep && v->fmt == VIDEO_MP4 && v->n_sent > 0 && v->sent[v->n_sent - 1].ticks > 1) {
        v->sent[v->n_sent - 1].ticks--;
        if (!mp4_send(v, v->frames - 1, 1, err, n)) keep = ok = false, failed = true; // (err says why)
    }
    if (keep) {
        int rc = encode(v, NULL);
        if (rc >= 0) rc = AV(av_write_trailer)(v->oc);
        v->trailer_written = true;
        if (rc >= 0) AV(avio_flush)(v->oc->pb);
        if (rc < 0 || v->io_errno || v->oc->pb->error) {
            av_msg(err, n, v, "cannot write", rc < 0 ? rc : v->oc->pb->error);
            ok = false;
        }
        if (ok && (fflush(v->f) != 0 || ferror(v->f))) {
            snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, v->path, strerror(errno));
            ok = false;
        }
        FILE *f = v->f;
        v->f = NULL;
        if (fclose(f) != 0 && ok) {
            snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, v->path, strerror(errno));
            ok = false;
        }
        if (ok && rename(v->tmp, v->path) != 0) {
            snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, v->path, strerror(errno));
            ok = false;
        }
        if (!ok) unlink(v->tmp);
    }
    writer_free(v); // (!keep: closes and removes the temporary file)
    return !failed && (ok || !keep);
}
