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

#include "export_format.h"
#include "heatmap.h"
#include "lesson.h"
#include "paint.h"
#include "text.h"
#include "trace.h"
#include "view.h"

// What an export writes (ExportFormat, export_format.h's table): PNG frames (the
// default), one SVG a frame, one PDF (DIR/frames.pdf) with a page a frame, or one
// animation (DIR/frames.gif, DIR/frames.mp4: video.h). SVG and PDF replay each frame
// through the vector backend of paint.h (paint_vec.h): text stays text.

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
    const struct Trace *ckpt_prev; // at a checkpoint of training: the one before's trace (View.ckpt_prev), or NULL
    bool head_set;             // --head given: every stage in head, else a stage opens on the head its
                               // narration is about (scene_stage_head)
    int loop;                  // --loop: the step (tile) shown of a stage inside a loop, -1 the whole
                               // loop (View.loop); needs stage
    ExportFormat format;       // --format (default PNG)
    int zlib_level;            // 0..9 (default 1: fast)
    int threads;               // PNG encoder threads (default: online CPUs; 0, or none could start:
                               // each PNG is written by export_job_step itself)
    bool quiet;                // no progress bar or summary
    const struct SessionEdits *edits; // --set edits applied to the lesson first (NULL: none)
    bool edited;               // the lesson is edited (--set, the window's lab): frames say so
    int n_edits;
    const Trace *ref;          // the original's trace (changed cells marked), or NULL
    const char *title;         // the title frames.json gives (NULL: the lesson's)
    double hold;               // GIF, MP4: seconds each settled stage (and each further part) is held
                               // (--hold; export_options_init: -1 = EXPORT_DEFAULT_HOLD for GIF and MP4)
    bool split;                // GIF, MP4 (--split): one file a stage, NNNN-STAGE.gif / .mp4
    ViewKind view;             // --model-view: one frame, the model view (View.kind), NNNN-model-view.EXT;
                               // --head-view: the head view of --stage's layer (else the first), head
                               // --head, NNNN-head-view.EXT
    const char *experiment;    // --experiment NAME (expview.h): its view (View.kind, set in `view` too), one
    const char *corrupt;       // frame, NNNN-NAME.EXT; --corrupt TEXT: patching's corrupted text
    const struct ExpView *exp_view; // its numbers (export_run opens them), for frames.json
    const char *compare;       // --compare SPEC (compare.h): the compare view (View.kind VIEW_COMPARE) of
                               // the lesson (A) and B, a frame a stage; NULL: none
    bool projector;            // --projector: projector mode (View.projector), its palette; a
                               // stage shown in parts is a frame a part
    const int *parts;          // in how many parts each stage is shown (export_parts), or NULL:
                               // one each; read by export_job_begin only
    bool no_index;             // no frames.json (the page's GIF and MP4: the download is the file
                               // alone, and describing each of its ~600 frames took 6 s in one frame)
} ExportOptions;

void export_options_init(ExportOptions *o);

// Runs the export; returns the process exit code (0 ok, 1 error, 130/143 when
// interrupted by SIGINT/SIGTERM after writing frames.json for what is complete).
int export_run(const ExportOptions *o);

// --- where export frames are drawn ---

// An offscreen target of one frame's size: an RGBA surface, SDL's software
// renderer on it, and its own Fonts and HeatmapCache (both cache textures for
// one renderer). --export and the window's E draw there, so a frame has the
// same pixels whatever the window does meanwhile (resize, fullscreen) and the
// window's own caches are left alone.
typedef struct ExportTarget {
    SDL_Surface *surf;
    SDL_Renderer *r;
    Fonts *fonts;
    HeatmapCache *heatmaps;
    DrawList draw;
} ExportTarget;

// False with one line in err (and *t left empty) on failure.
bool export_target_create(ExportTarget *t, const char *font_path, Lang lang, int width, int height,
                          char *err, size_t n);
// Frees what export_target_create made (an empty or zeroed target is fine).
void export_target_destroy(ExportTarget *t);

// --- an export one frame at a time (the window's E key; export_run uses it too) ---

typedef struct ExportJob ExportJob;

// Plans the frames of tr (stage_filter -1 = every stage), starts the PNG
// encoder threads (SVG, PDF: the vector canvas, and for PDF the document under a
// temporary name) and, last, creates o->dir (when its parent exists), so a
// failure leaves no empty directory behind. Frames are drawn at o->width ×
// o->height, in o->batch / o->head; ls and tr are borrowed until the job is
// finished. NULL with one line in err on failure.
ExportJob *export_job_begin(const ExportOptions *o, const Lesson *ls, const Trace *tr, int stage_filter,
                            char *err, size_t n);
int export_job_total(const ExportJob *j);   // frames in the plan
int export_job_drawn(const ExportJob *j);   // frames drawn so far
int export_job_written(ExportJob *j);       // frames written to disk so far
// Frames the encoders are done with: written, failed, or skipped after a
// failure. Equals export_job_drawn once every frame handed over is settled.
int export_job_settled(ExportJob *j);
// True once a frame failed (drawing, reading or writing it); the job cannot
// complete and should be finished (export_job_finish reports the error).
bool export_job_failed(ExportJob *j);
// True when export_job_step would not wait for an encoder.
bool export_job_ready(ExportJob *j);
// Draws the next planned frame with render_frame on c (whose output must be the
// job's size) from base (palette, values, language, lesson) with the
// plan's stage and progress and nothing else (no hover, help, zoom, toast), and
// hands its pixels to an encoder, waiting (on a condition variable) for a free
// buffer. False when no frame is left or on a failure (which export_job_failed
// tells and export_job_finish reports).
bool export_job_step(ExportJob *j, Canvas *c, const View *base);
// Waits for the encoders, writes frames.json (listing the PNGs written; complete
// unless interrupted, failed or stopped early) and frees j. *written = PNGs on
// disk. False with one line in err when a write failed.
bool export_job_finish(ExportJob *j, bool interrupted, int *written, char *err, size_t n);
// Stops and frees an unfinished job without writing frames.json (NULL is fine).
void export_job_free(ExportJob *j);

// The frames an export writes, for the window's E key and the tests.
typedef struct ExportFrame {
    int stage;       // trace index
    int part;        // projector mode: the part of a stage shown in parts (View.part), else 0
    float anim;      // 0..1 transition progress (1 = settled)
    double time_s;   // time of the frame in the animation
    int ticks;       // how many 1/fps frames it lasts in a GIF or MP4 (1; more when held)
} ExportFrame;

#define EXPORT_DEFAULT_HOLD 2.0 // seconds a GIF or MP4 holds each settled stage (--hold)

// Fills up to max frames for the plan (n_stages stages, stage_filter -1 = all;
// parts: in how many parts each stage is shown, NULL = one each: the parts after
// the first follow the stage's settled frame; hold_ticks: 1/fps frames a settled
// frame is held for, each part's too); returns how many frames the plan has (which
// may exceed max).
int export_plan(ExportFrame *out, int max, int n_stages, int stage_filter, bool animate, int fps,
                const int *parts, int hold_ticks);
// The hold of o in 1/fps frames: 0 but for a GIF or MP4.
int export_hold_ticks(const ExportOptions *o);

// Projector mode: in how many parts each stage of tr is shown at w×h from base
// (projector mode off: 1 each). parts holds tr->n.
void export_parts(const Trace *tr, const View *base, int w, int h, int *parts);

#endif
