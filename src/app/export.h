// export.h — headless export of frames to PNG: no display, no X server.
//
// The main thread draws each frame with render_frame on a software renderer;
// worker threads compress and write the PNGs. Every file is written under a
// temporary name and renamed, so an interrupted export (SIGINT, SIGTERM, a full
// disk) leaves only complete PNGs, and DIR/frames.json lists exactly those.
#ifndef ATTNVIZ_EXPORT_H
#define ATTNVIZ_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "lesson.h"

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
