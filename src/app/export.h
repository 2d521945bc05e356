// export.h — headless export of frames to PNG: no display, no X server.
//
// The main thread draws each frame with render_frame on a software renderer;
// worker threads compress and write the PNGs. Every file is written under a
// temporary name and renamed, so an interrupted export (SIGINT, SIGTERM, a full
// disk) leaves only complete PNGs, and DIR/frames.json lists exactly those.
#ifndef ATTNVIZ_EXPORT_H
#define ATTNVIZ_EXPORT_H

#include <SDL.h>
#include <stdbool.h>
#include <stddef.h>

#include "lesson.h"
#include "text.h"
#include "trace.h"
#include "view.h"

typedef struct ExportOptions {
    const char *dir;           // output directory (created when its parent exists)
    const char *lesson_path;
    const char *font_path;     // --font or NULL
    int width, height;         // --size (default 1280x720)
    Lang lang;
    bool animate;              // every frame of every transition, else one still per stage
    int fps;                   // with animate (default 30)
    const char *stage;         // only this stage (name), or NULL for all
    int batch, head;           // slice shown (default 0, 0)
    int zlib_level;            // 0..9 (default 1: fast)
    int threads;               // PNG encoder threads (default: online CPUs)
    bool quiet;                // no progress bar or summary
} ExportOptions;

void export_options_init(ExportOptions *o);

// Runs the export; returns the process exit code (0 ok, 1 error, 130/143 when
// interrupted by SIGINT/SIGTERM after writing frames.json for what is complete).
int export_run(const ExportOptions *o);

// --- an export one frame at a time (the window's E key; export_run uses it too) ---

typedef struct ExportJob ExportJob;

// Creates o->dir (when its parent exists), plans the frames of tr (stage_filter
// -1 = every stage) and starts the PNG encoder threads. Frames are drawn at
// o->width × o->height, in o->batch / o->head; ls and tr are borrowed until the
// job is finished. NULL with one line in err on failure.
ExportJob *export_job_begin(const ExportOptions *o, const Lesson *ls, const Trace *tr, int stage_filter,
                            char *err, size_t n);
int export_job_total(const ExportJob *j);   // frames in the plan
int export_job_drawn(const ExportJob *j);   // frames drawn so far
int export_job_written(ExportJob *j);       // frames written to disk so far
// True when export_job_step would not wait for an encoder.
bool export_job_ready(ExportJob *j);
// Draws the next planned frame with render_frame on r (whose output must be the
// job's size) from base (palette, values, language, lesson, cache) with the
// plan's stage and progress and nothing else (no hover, help, zoom, toast), and
// hands its pixels to an encoder. False when no frame is left or on a failure
// (which export_job_finish reports).
bool export_job_step(ExportJob *j, SDL_Renderer *r, Fonts *f, const View *base);
// Waits for the encoders, writes frames.json (listing the PNGs written; complete
// unless interrupted, failed or stopped early) and frees j. *written = PNGs on
// disk. False with one line in err when a write failed.
bool export_job_finish(ExportJob *j, bool interrupted, int *written, char *err, size_t n);
// Stops and frees an unfinished job without writing frames.json (NULL is fine).
void export_job_free(ExportJob *j);

// The frames an export writes, for the window's E key and the tests.
typedef struct ExportFrame {
    int stage;       // trace index
    float anim;      // 0..1 transition progress (1 = settled)
    double time_s;   // time of the frame in the animation
} ExportFrame;

// Fills up to max frames for the plan (n_stages stages, stage_filter -1 = all);
// returns how many frames the plan has (which may exceed max).
int export_plan(ExportFrame *out, int max, int n_stages, int stage_filter, bool animate, int fps);

#endif
