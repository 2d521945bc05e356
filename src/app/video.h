// video.h — frames to one animated file with libavcodec / libavformat: an
// H.264 MP4 (libx264, yuv420p, BT.709: what PowerPoint, Keynote and Google
// Slides play) or a GIF (one palette made from all its frames, chosen so the
// flat colours of the heatmap cells stay exact: no dithering, no banding in a
// cell; with one palette the encoder writes only what changed). Written under a temporary name (temp_file.h) and renamed by
// video_close only when every frame is in; otherwise the file is removed.
#ifndef ATTNVIZ_VIDEO_H
#define ATTNVIZ_VIDEO_H

#include <stdbool.h>
#include <stddef.h>

typedef enum VideoFormat { VIDEO_GIF, VIDEO_MP4 } VideoFormat;

typedef struct VideoWriter VideoWriter;

// Starts path (w×h, fps frames a second; MP4 needs an even w and h). NULL with
// one line naming path in err.
VideoWriter *video_open(const char *path, VideoFormat fmt, int w, int h, int fps, char *err, size_t n);
// GIF: the frames to come, shown once each before the first video_add_frame,
// so the palette suits them all (without, the first frame's colours make it).
bool video_wants_observe(const VideoWriter *v);
void video_observe(VideoWriter *v, const unsigned char *rgba, int pitch);
// Adds a frame: h rows of w RGBA8 pixels, rows pitch bytes apart, lasting `ticks`
// frames of 1/fps (a held stage: in a GIF the frame repeated, a few bytes; in an MP4 one
// frame that lasts, variable frame timing). False with one line in err.
bool video_add_frame(VideoWriter *v, const unsigned char *rgba, int pitch, int ticks, char *err, size_t n);
// keep: flushes the encoder, ends the file and renames it into place (false
// with one line in err when that fails, and nothing left); !keep: removes it.
// Frees v (NULL is fine).
bool video_close(VideoWriter *v, bool keep, char *err, size_t n);

// The encoder's name ("libx264", "gif"), for messages and the README.
const char *video_encoder_name(VideoFormat fmt);
// Whether fmt can be written here: the desktop always (a libavcodec without libx264 says so at
// video_open); the page, MP4 only where the browser has an H.264 encoder (web_export.js asks
// WebCodecs' VideoEncoder.isConfigSupported before the window opens).
bool video_available(VideoFormat fmt);

#endif
