// gif_write.h — frames to an animated GIF89a, written here (no FFmpeg): the page's GIF
// (the browser build has no libavcodec; src/web/web_video.c), and a second encoder the
// tests hold against FFmpeg's.
//
// The file is the desktop's GIF (video.h) made another way: one palette for all the
// frames (gif_palette.h, the same colours), a frame a tick of 1/fps (a tick's delay
// in hundredths of a second, rounded as FFmpeg's muxer rounds it: tick i lasts
// round((i+1)·100/fps) − round(i·100/fps)), each frame only the rectangle that changed
// with unchanged pixels transparent (a held frame: one transparent pixel), looping
// for ever. Written under a temporary name and renamed by gif_write_close only when
// every frame is in; otherwise the file is removed.
#ifndef ATTNVIZ_GIF_WRITE_H
#define ATTNVIZ_GIF_WRITE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct GifWriter GifWriter;

// Starts path (w×h, 1..65535; fps 1..100). NULL with one line naming path in err.
GifWriter *gif_write_open(const char *path, int w, int h, int fps, char *err, size_t n);
// The frames to come, shown once each before the first gif_write_frame, so the
// palette suits them all (without, the first frame's colours make it).
bool gif_write_wants_observe(const GifWriter *g);
void gif_write_observe(GifWriter *g, const unsigned char *rgba, int pitch);
// Adds a frame (h rows of w RGBA8 pixels, pitch bytes apart) lasting `ticks` of 1/fps.
// False with one line naming the file in err.
bool gif_write_frame(GifWriter *g, const unsigned char *rgba, int pitch, int ticks, char *err, size_t n);
// keep: ends the file and renames it into place (false with one line in err when that
// fails, and nothing left); !keep: removes it. Frees g (NULL is fine).
bool gif_write_close(GifWriter *g, bool keep, char *err, size_t n);

#endif
