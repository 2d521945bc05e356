// export.c — the export job: each planned frame drawn and handed to its format's writer
// (export_format.h; PNG through encoder threads), the locked directory and frames.json.
#include "export.h"
#include "interrupt.h"

#include <SDL.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "assets.h"
#include "attention.h"
#include "cli.h"
#include "compare.h"
#include "expview.h"
#include "utf8.h"
#include "i18n.h"
#include "describe.h"
#include "json_out.h"
#include "recipe.h"
#include "scene.h"
#include "render.h"
#include "session.h"
#include "temp_file.h"
#include "text.h"
#include "view.h"
#include "viewkind.h"

#define EXPORT_ERR_MAX 600

// --- the encoder queue -------------------------------------------------------------

typedef struct Job {
    int frame;         // index into the plan
    int slot;          // pixel buffer
} Job;

typedef struct Encoder {
    pthread_mutex_t mu;
    pthread_cond_t cv_job, cv_slot;
    int w, h, level;
    const char *dir;
    const ExportFrame *plan;
    const Trace *tr;
    ViewKind view;        // the frame is the model view: named NNNN-model-view; the head view: NNNN-head-view
    const ExportFormatInfo *fmt;
    ExportSink *sink;     // the format's writer writes there
    // pixel buffers
    int n_slots;
    unsigned char **pix;
    int *free_slots, n_free;
    // job ring
    Job *jobs;
    int cap, head, count;
    bool closing;
    // results: every job taken settles (written, failed or skipped), so the
    // drawing side can tell when nothing is left in flight
    bool *done;
    int n_done, n_settled;
    char err[EXPORT_ERR_MAX];   // first error (writing, drawing or reading a frame)
} Encoder;

// A frame's file: NNNN-STAGE.EXT a frame (PNG, SVG); every frame of a format of one
// file is in frames.EXT (PDF; an animation: index -1, with --split a stage a file,
// NNNN-STAGE.gif / .mp4, index its place in the trace).
static void frame_name(char *buf, size_t n, const char *dir, int index, const char *stage, const ExportFormatInfo *f)
{
    if (f->files == EXPORT_ONE_FILE && (!f->animated || index < 0))
        snprintf(buf, n, "%s/frames.%s", dir, f->ext);
    else
        snprintf(buf, n, "%s/%04d-%s.%s", dir, index, stage, f->ext);
}

// The name a frame of stage s gives its file: the stage's, or the view's.
// Takes the next frame handed over and writes it; false when there is none (wait:
// first waits for one, and false once the export is closing and none is left).
static bool encode_next(Encoder *e, bool wait)
{
    pthread_mutex_lock(&e->mu);
    while (wait && e->count == 0 && !e->closing) pthread_cond_wait(&e->cv_job, &e->mu);
    if (e->count == 0) {
        pthread_mutex_unlock(&e->mu);
        return false;
    }
    Job j = e->jobs[e->head];
    e->head = (e->head + 1) % e->cap;
    e->count--;
    bool skip = e->err[0] != '\0';   // after a write error, stop writing
    pthread_mutex_unlock(&e->mu);

    bool ok = true;
    char err[EXPORT_ERR_MAX] = "";
    if (!skip) {
        char path[4096];
        frame_name(path, sizeof path, e->dir, j.frame, viewkind_frame_name(e->view, e->tr, e->plan[j.frame].stage), e->fmt);
        ok = e->fmt->writer->pixels(e->sink, path, e->pix[j.slot], e->w * 4, 1, err, sizeof err);
    }
    pthread_mutex_lock(&e->mu);
    if (!skip && ok) {
        e->done[j.frame] = true;
        e->n_done++;
    } else if (!skip && !e->err[0]) {
        snprintf(e->err, sizeof e->err, "%s", err);
    }
    e->n_settled++;
    e->free_slots[e->n_free++] = j.slot;
    pthread_cond_broadcast(&e->cv_slot);
    pthread_mutex_unlock(&e->mu);
    return true;
}

static void *encoder_main(void *arg)
{
    while (encode_next(arg, true)) {}
    return NULL;
}

// --- directory and frames.json -------------------------------------------------------

#define PATH_IN_MSG EXPORT_PATH_IN_MSG

// Creates dir when its parent exists, then locks it for this export: flock on
// the directory itself (nothing is left behind), non-blocking, so a second
// export into the same folder fails at once instead of mixing its frames in.
// Holding the lock, it removes the temporary files a killed export left.
// Returns the locked directory's descriptor, or -1 with one line in err.
static int prepare_dir(const char *dir, char *err, size_t n)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            snprintf(err, n, "%.*s: not a directory", PATH_IN_MSG, dir);
            return -1;
        }
    } else if (errno == ELOOP) {
        snprintf(err, n, "%.*s: a symbolic link loop (too many levels of symbolic links); expected a directory",
                 PATH_IN_MSG, dir);
        return -1;
    } else if (errno == ENOENT && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
        snprintf(err, n, "%.*s: a dangling symbolic link (what it points to does not exist); expected a directory",
                 PATH_IN_MSG, dir);
        return -1;
    } else if (mkdir(dir, 0777) != 0) {
        snprintf(err, n, "%.*s: cannot create the export directory: %s%s", PATH_IN_MSG, dir, strerror(errno),
                 errno == ENOENT ? " (its parent does not exist)" : "");
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, n, "%.*s: export directory is not writable: %s", PATH_IN_MSG, dir, strerror(errno));
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, n, "%.*s: cannot open the export directory: %s", PATH_IN_MSG, dir, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            snprintf(err, n, "%.*s is in use by another export", PATH_IN_MSG, dir);
        else
            snprintf(err, n, "%.*s: cannot lock the export directory: %s", PATH_IN_MSG, dir, strerror(errno));
        close(fd);
        return -1;
    }
    int scan = dup(fd);
    DIR *d = scan >= 0 ? fdopendir(scan) : NULL;
    if (d) {
        for (struct dirent *e; (e = readdir(d)) != NULL;)
            if (temp_file_is_export_leftover(e->d_name)) unlinkat(fd, e->d_name, 0);
        closedir(d);
    } else if (scan >= 0) {
        close(scan);
    }
    return fd;
}

// Writes DIR/frames.json listing exactly the complete frames (temp name + rename).
static bool write_index(const Encoder *e, const ExportOptions *o, const Lesson *ls, const TextMeasure *measure,
                        int n_frames, bool interrupted, char *err, size_t n)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/frames.json", o->dir);
    char hidden[4096];   // the temporary name starts with a dot: .frames.json.tmp-PID-XXXXXXXX
    snprintf(hidden, sizeof hidden, "%s/.frames.json", o->dir);
    FILE *f = temp_file_create(hidden, tmp, sizeof tmp);
    if (!f) {
        snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, path, strerror(errno));
        return false;
    }
    fputs("{\"lesson\": ", f);
    json_write_string(f, o->lesson_path);
    fputs(", \"title\": ", f);
    json_write_string(f, o->title ? o->title : lesson_title(ls, o->lang));
    fprintf(f, ", \"width\": %d, \"height\": %d, \"lang\": \"%s\", \"animate\": %s, \"fps\": %d,"
               " \"format\": \"%s\", \"complete\": %s, \"frames\": [",
            o->width, o->height, o->lang == LANG_ZH ? "zh" : "en", o->animate ? "true" : "false",
            o->fps, export_format_name(o->format), interrupted ? "false" : "true");
    bool first = true;
    int page = 0;
    const ExportFormatInfo *fmt = e->fmt;
    bool video = fmt->animated, pages = fmt->files == EXPORT_ONE_FILE && !video;
    for (int i = 0; i < n_frames; i++) {
        if (!e->done[i]) continue;
        char name[4096];
        frame_name(name, sizeof name, ".", video ? (o->split ? e->plan[i].stage : -1) : i,
                   viewkind_frame_name(e->view, e->tr, e->plan[i].stage), fmt);
        if (video && o->split && (i == 0 || e->plan[i - 1].stage != e->plan[i].stage)) page = 0; // a file a stage
        fprintf(f, "%s\n  {\"file\": ", first ? "" : ",");
        json_write_string(f, name + 2);
        if (pages) fprintf(f, ", \"page\": %d", ++page);
        if (video) { // its first video frame, how many it lasts
            fprintf(f, ", \"index\": %d", page);
            if (e->plan[i].ticks > 1) fprintf(f, ", \"frames\": %d", e->plan[i].ticks);
            page += e->plan[i].ticks;
        }
        // what the frame shows, for slides' alt text: formula, narration, alt, panels
        View v;
        view_init(&v, ls, o->lang);
        v.stage = e->plan[i].stage, v.batch = o->batch, v.head = o->head, v.loop = o->loop, v.kind = o->view;
        v.ckpt_prev = o->ckpt_prev, v.exp = o->exp_view;
        v.head = scene_stage_head(e->tr, &v, o->head_set ? o->head : -1);
        fprintf(f, ", \"batch\": %d, \"head\": %d, \"time\": %.4f, \"anim\": %.4f, ", o->batch, v.head,
                e->plan[i].time_s, (double)e->plan[i].anim);
        v.edited = o->edited, v.n_edits = o->n_edits, v.ref = o->ref;
        v.projector = o->projector, v.part = e->plan[i].part;
        if (o->projector) v.palette = PALETTE_HIGH_CONTRAST; // (describe_frame_fields gives the part)
        v.measure = measure;
        describe_frame_fields(f, e->tr, &v, o->width, o->height);
        fputs("}", f);
        first = false;
    }
    fputs("\n]}\n", f);
    bool ok = fflush(f) == 0 && !ferror(f);
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, path, strerror(errno));
        unlink(tmp);
        return false;
    }
    return true;
}

// --- progress --------------------------------------------------------------------------

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress(int done, int total, double t0)
{
    const int W = 30;
    int fill = total ? done * W / total : W;
    double el = now_s() - t0, eta = done ? el * (total - done) / done : 0;
    char bar[64];
    for (int i = 0; i < W; i++) bar[i] = i < fill ? '#' : '.';
    bar[W] = '\0';
    fprintf(stderr, "\r[%s] %d/%d frames  %3d%%  ETA %.1fs ", bar, done, total,
            total ? done * 100 / total : 100, eta);
}

// --- the offscreen target -----------------------------------------------------------------

bool export_target_create(ExportTarget *t, const char *font_path, Lang lang, int width, int height,
                          char *err, size_t n)
{
    memset(t, 0, sizeof *t);
    t->fonts = fonts_create(font_path, lang, err, n);
    if (!t->fonts) return false;
    // RGBA32: the format text.c makes its textures for on a surface (text_format)
    t->surf = SDL_CreateRGBSurfaceWithFormat(0, width, height, 32, SDL_PIXELFORMAT_RGBA32);
    t->r = t->surf ? SDL_CreateSoftwareRenderer(t->surf) : NULL;
    t->heatmaps = heatmap_cache_create();
    if (!t->r || !t->heatmaps) {
        snprintf(err, n, "attnviz: cannot create the offscreen renderer (%dx%d): %s", width, height,
                 SDL_GetError());
        export_target_destroy(t);
        return false;
    }
    return true;
}

void export_target_destroy(ExportTarget *t)
{
    // the caches' textures belong to the renderer: drop them first
    heatmap_cache_destroy(t->heatmaps);
    draw_list_free(&t->draw);
    if (t->fonts) fonts_flush(t->fonts);
    if (t->r) SDL_DestroyRenderer(t->r);
    if (t->surf) SDL_FreeSurface(t->surf);
    fonts_destroy(t->fonts);
    memset(t, 0, sizeof *t);
}

// --- the export job ---------------------------------------------------------------------

struct ExportJob {
    ExportOptions o;           // o.dir / o.lesson_path point into the arrays below
    char dir[4096], lesson_path[4096];
    const Lesson *ls;
    const Trace *tr;
    ExportFrame *plan;
    int n_frames, next;        // frames planned, frames handed to the encoders
    Encoder e;
    pthread_t threads[8];
    int n_threads;
    bool sync_ok;              // mutex and condition variables initialised
    int dir_fd;                // the export directory, locked (flock) until the job is freed; -1
    const ExportFormatInfo *fmt; // the format's row (export_format.h)
    ExportSink sink;           // its writer's (state set while a file is open: a PDF, a video, the vector canvas)
    // an animation: frames drawn like PNGs, encoded in order on the caller's thread
    unsigned char *rgba;       // the frame read back
    int observed;              // GIF: frames drawn for the palette so far
    int file_first;            // the plan's first frame in the open file (--split: its stage's)
    const TextMeasure *measure; // the fonts the frames were drawn with (export_job_step's View):
                                // frames.json describes the frames as drawn
};

// --split: an animation a file a stage.
static bool split_files(const ExportJob *j) { return j->o.split && j->fmt->animated; }

ExportJob *export_job_begin(const ExportOptions *o, const Lesson *ls, const Trace *tr, int stage_filter,
                            char *err, size_t n)
{
    ExportJob *j = calloc(1, sizeof *j);
    if (!j) goto oom;
    j->dir_fd = -1;
    j->o = *o;
    snprintf(j->dir, sizeof j->dir, "%s", o->dir);
    snprintf(j->lesson_path, sizeof j->lesson_path, "%s", o->lesson_path ? o->lesson_path : "");
    j->o.dir = j->dir, j->o.lesson_path = j->lesson_path;
    j->o.stage = NULL;
    j->ls = ls, j->tr = tr;
    j->o.parts = NULL; // (borrowed until here)
    int hold = export_hold_ticks(o);
    j->n_frames = export_plan(NULL, 0, tr->n, stage_filter, o->animate, o->fps, o->parts, hold);
    j->plan = calloc((size_t)(j->n_frames > 0 ? j->n_frames : 1), sizeof *j->plan);
    if (!j->plan) goto oom;
    export_plan(j->plan, j->n_frames, tr->n, stage_filter, o->animate, o->fps, o->parts, hold);
    // encoder threads and their buffers
    Encoder *e = &j->e;
    int threads = o->threads < 0 ? 1 : o->threads > 8 ? 8 : o->threads; // 0: on the caller's thread
    e->w = o->width, e->h = o->height, e->level = o->zlib_level, e->dir = j->dir;
    e->plan = j->plan, e->tr = tr, e->view = o->view;
    const ExportFormatInfo *fmt = j->fmt = export_format_info(o->format);
    j->sink = (ExportSink){o->width, o->height, o->fps, o->zlib_level, NULL};
    e->fmt = fmt, e->sink = &j->sink;
    bool raster = fmt->kind == EXPORT_RASTER;
    if (!raster) threads = 0;   // drawn and written on the caller's thread
    e->n_slots = raster ? threads * 2 + 1 : 0; // (no thread: one buffer, written at once)
    e->cap = e->n_slots;
    e->pix = calloc((size_t)(e->n_slots > 0 ? e->n_slots : 1), sizeof *e->pix);
    e->free_slots = calloc((size_t)(e->n_slots > 0 ? e->n_slots : 1), sizeof *e->free_slots);
    e->jobs = calloc((size_t)(e->cap > 0 ? e->cap : 1), sizeof *e->jobs);
    e->done = calloc((size_t)(j->n_frames > 0 ? j->n_frames : 1), sizeof *e->done);
    if (!e->pix || !e->free_slots || !e->jobs || !e->done) goto oom;
    for (int i = 0; i < e->n_slots; i++) {
        e->pix[i] = malloc((size_t)o->width * (size_t)o->height * 4);
        if (!e->pix[i]) goto oom;
        e->free_slots[e->n_free++] = i;
    }
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv_job, NULL);
    pthread_cond_init(&e->cv_slot, NULL);
    j->sync_ok = true;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&j->threads[j->n_threads], NULL, encoder_main, e) == 0) j->n_threads++;
    if (fmt->kind == EXPORT_VIDEO && !(j->rgba = malloc((size_t)o->width * (size_t)o->height * 4))) goto oom;
    // no encoder thread could start (the browser without worker threads, a process
    // at its thread limit): export_job_step writes each PNG itself
    // the directory last: nothing above leaves an empty one behind
    if ((j->dir_fd = prepare_dir(j->dir, err, n)) < 0) {
        export_job_free(j);
        return NULL;
    }
    // Before the first PNG, the old frames.json goes: a re-export killed half-way
    // (SIGKILL) never leaves it saying "complete" over frames that are now another
    // lesson's, and frames.json appearing still means an export has ended.
    if (unlinkat(j->dir_fd, "frames.json", 0) != 0 && errno != ENOENT) {
        snprintf(err, n, "%.*s/frames.json: cannot remove the previous export's index: %s", PATH_IN_MSG, j->dir,
                 strerror(errno));
        export_job_free(j);
        return NULL;
    }
    // the file every frame goes to, or what a file a frame needs (--split: each
    // stage's file opened at its first frame)
    if (fmt->writer->open && !split_files(j)) {
        char path[4200];
        frame_name(path, sizeof path, j->dir, -1, "", fmt);
        if (!fmt->writer->open(&j->sink, fmt->files == EXPORT_ONE_FILE ? path : NULL, err, n)) {
            export_job_free(j);
            return NULL;
        }
    }
    return j;
oom:
    snprintf(err, n, "attnviz: out of memory preparing the export");
    export_job_free(j);
    return NULL;
}

int export_job_total(const ExportJob *j) { return j ? j->n_frames : 0; }

int export_job_drawn(const ExportJob *j) { return j ? j->next : 0; }

int export_job_written(ExportJob *j)
{
    if (!j) return 0;
    pthread_mutex_lock(&j->e.mu);
    int n = j->e.n_done;
    pthread_mutex_unlock(&j->e.mu);
    return n;
}

int export_job_settled(ExportJob *j)
{
    if (!j) return 0;
    pthread_mutex_lock(&j->e.mu);
    int n = j->e.n_settled;
    pthread_mutex_unlock(&j->e.mu);
    return n;
}

bool export_job_failed(ExportJob *j)
{
    if (!j) return false;
    pthread_mutex_lock(&j->e.mu);
    bool failed = j->e.err[0] != '\0';
    pthread_mutex_unlock(&j->e.mu);
    return failed;
}

bool export_job_ready(ExportJob *j)
{
    pthread_mutex_lock(&j->e.mu);
    // vector and video formats are written by the step itself: never waits
    bool ready = j->e.n_slots == 0 || j->e.n_free > 0 || j->e.err[0];
    pthread_mutex_unlock(&j->e.mu);
    return ready;
}

// The frame j->next settled: written (err empty; the next one is due) or failed (err,
// the export's first error kept). False on a failure.
static bool settle_frame(ExportJob *j, const char *err)
{
    Encoder *e = &j->e;
    pthread_mutex_lock(&e->mu);
    if (!err[0]) {
        e->done[j->next] = true;
        e->n_done++;
    } else if (!e->err[0]) {
        snprintf(e->err, sizeof e->err, "%s", err);
    }
    e->n_settled++;
    pthread_mutex_unlock(&e->mu);
    if (err[0]) return false;
    j->next++;
    return true;
}

typedef struct FrameDraw {
    const Trace *tr;
    const View *v;
} FrameDraw;

static void frame_draw(Canvas *c, void *ctx)
{
    const FrameDraw *d = ctx;
    render_frame(c, d->tr, d->v, NULL);
}

// A vector format: the frame drawn on its writer's canvas, into its file or a page.
static bool vector_step(ExportJob *j, Canvas *c, const View *v)
{
    char path[4400], err[EXPORT_ERR_MAX] = "";
    frame_name(path, sizeof path, j->dir, j->next, viewkind_frame_name(v->kind, j->tr, v->stage), j->fmt);
    FrameDraw d = {j->tr, v};
    j->fmt->writer->draw(&j->sink, path, c, frame_draw, &d, err, sizeof err);
    return settle_frame(j, err);
}

// An animation: the frame just drawn on c, read back and encoded into it.
static bool video_step(ExportJob *j, Canvas *c)
{
    Encoder *e = &j->e;
    char err[EXPORT_ERR_MAX] = "";
    if (SDL_RenderReadPixels(c->r, NULL, SDL_PIXELFORMAT_RGBA32, j->rgba, e->w * 4) != 0)
        snprintf(err, sizeof err, "cannot read the frame's pixels: %s", SDL_GetError());
    else
        j->fmt->writer->pixels(&j->sink, NULL, j->rgba, e->w * 4, j->plan[j->next].ticks, err, sizeof err);
    return settle_frame(j, err); // counted as written; undone if the file does not end well
}

// Ends the open file (a PDF, an animation: renamed into place when complete; SVG:
// its canvas); when it did not end well, the frames in it count as not written
// (--split: the files before it stay). False with e->err set when the write failed.
static bool file_close(ExportJob *j, bool complete)
{
    Encoder *e = &j->e;
    if (!j->sink.state) return true;
    char err[EXPORT_ERR_MAX] = "";
    bool ok = j->fmt->writer->close(&j->sink, complete, err, sizeof err) && complete;
    j->sink.state = NULL;
    if (!ok && j->fmt->files == EXPORT_ONE_FILE) {
        pthread_mutex_lock(&e->mu);
        for (int i = j->file_first; i < j->n_frames; i++)
            if (e->done[i]) e->done[i] = false, e->n_done--;
        if (err[0] && !e->err[0]) snprintf(e->err, sizeof e->err, "%s", err);
        pthread_mutex_unlock(&e->mu);
    }
    return ok || !complete;
}

// --split: the file of the stage of frame j->next, opened at its first frame (the
// stage before it closed and renamed into place). False on a failure.
static bool next_file(ExportJob *j)
{
    Encoder *e = &j->e;
    int k = j->next;
    if (j->sink.state && j->plan[k].stage == j->plan[j->file_first].stage) return true;
    if (j->sink.state && !file_close(j, true)) return false;
    char path[4200], err[EXPORT_ERR_MAX] = "";
    const char *stage = j->tr->stages[j->plan[k].stage].name;
    frame_name(path, sizeof path, j->dir, j->plan[k].stage, stage, j->fmt);
    bool ok = j->fmt->writer->open(&j->sink, path, err, sizeof err);
    j->file_first = j->observed = k;
    if (!ok) {
        pthread_mutex_lock(&e->mu);
        if (!e->err[0]) snprintf(e->err, sizeof e->err, "%s", err);
        pthread_mutex_unlock(&e->mu);
        return false;
    }
    return true;
}

// The plan's first frame after k of another stage (the end of k's file with --split).
static int stage_end(const ExportJob *j, int k)
{
    int s = j->plan[k].stage;
    while (k < j->n_frames && j->plan[k].stage == s) k++;
    return k;
}

bool export_job_step(ExportJob *j, Canvas *c, const View *base)
{
    Encoder *e = &j->e;
    if (j->next >= j->n_frames) return false;
    j->measure = base->measure;
    int w = 0, h = 0;
    SDL_GetRendererOutputSize(c->r, &w, &h);
    if (w != e->w || h != e->h) {
        pthread_mutex_lock(&e->mu);
        if (!e->err[0])
            snprintf(e->err, sizeof e->err, "the size changed during the export (%dx%d, was %dx%d)", w, h, e->w, e->h);
        pthread_mutex_unlock(&e->mu);
        return false;
    }
    // GIF: first every planned frame once, one a call (the window stays
    // responsive), for the palette of the whole animation (video_observe)
    const ExportWriter *wr = j->fmt->writer;
    if (split_files(j) && !next_file(j)) return false;
    int end = j->o.split ? stage_end(j, j->next) : j->n_frames; // the palette: of this file's frames
    bool observing = j->sink.state && wr->wants_observe && wr->wants_observe(&j->sink) && j->observed < end;
    int k = observing ? j->observed : j->next;
    // the frame alone (no overlays: render_frame gets none) at the plan's stage,
    // not zoomed, not playing
    View v = *base;
    v.stage = j->plan[k].stage;
    v.part = j->plan[k].part;
    v.anim = j->plan[k].anim;
    v.batch = j->o.batch, v.head = j->o.head, v.loop = j->o.loop, v.kind = j->o.view;
    v.head = scene_stage_head(j->tr, &v, j->o.head_set ? j->o.head : -1);
    v.playing = false;
    view_reset_zoom(&v);
    if (j->fmt->kind == EXPORT_VECTOR) return vector_step(j, c, &v);
    render_frame(c, j->tr, &v, NULL);
    if (observing) {
        if (SDL_RenderReadPixels(c->r, NULL, SDL_PIXELFORMAT_RGBA32, j->rgba, e->w * 4) != 0) {
            pthread_mutex_lock(&e->mu);
            if (!e->err[0]) snprintf(e->err, sizeof e->err, "cannot read the frame's pixels: %s", SDL_GetError());
            pthread_mutex_unlock(&e->mu);
            return false;
        }
        wr->observe(&j->sink, j->rgba, e->w * 4);
        j->observed++;
        return true;
    }
    if (j->fmt->kind == EXPORT_VIDEO) return video_step(j, c);
    // wait for a free buffer, then hand the pixels to an encoder
    pthread_mutex_lock(&e->mu);
    while (e->n_free == 0 && !e->err[0]) pthread_cond_wait(&e->cv_slot, &e->mu);
    bool failed = e->err[0] != '\0';
    int slot = failed ? -1 : e->free_slots[--e->n_free];
    pthread_mutex_unlock(&e->mu);
    if (failed) return false;
    if (SDL_RenderReadPixels(c->r, NULL, SDL_PIXELFORMAT_RGBA32, e->pix[slot], w * 4) != 0) {
        pthread_mutex_lock(&e->mu);
        e->free_slots[e->n_free++] = slot;
        if (!e->err[0]) snprintf(e->err, sizeof e->err, "cannot read the frame's pixels: %s", SDL_GetError());
        pthread_mutex_unlock(&e->mu);
        return false;
    }
    pthread_mutex_lock(&e->mu);
    e->jobs[(e->head + e->count) % e->cap] = (Job){j->next, slot};
    e->count++;
    pthread_cond_signal(&e->cv_job);
    pthread_mutex_unlock(&e->mu);
    if (j->n_threads == 0) encode_next(e, false);
    j->next++;
    return true;
}

// Lets the encoders settle every frame handed over, then joins them (blocking,
// no polling). Safe to call again: the second call has no thread to join.
static void encoders_stop(ExportJob *j)
{
    Encoder *e = &j->e;
    if (j->sync_ok) {
        pthread_mutex_lock(&e->mu);
        e->closing = true;
        pthread_cond_broadcast(&e->cv_job);
        pthread_mutex_unlock(&e->mu);
    }
    for (int i = 0; i < j->n_threads; i++) pthread_join(j->threads[i], NULL);
    j->n_threads = 0;
}

// Stops the encoders (after the frames handed over) and frees everything.
void export_job_free(ExportJob *j)
{
    if (!j) return;
    Encoder *e = &j->e;
    encoders_stop(j);
    if (j->sync_ok) {
        pthread_mutex_destroy(&e->mu);
        pthread_cond_destroy(&e->cv_job);
        pthread_cond_destroy(&e->cv_slot);
    }
    if (j->sink.state) j->fmt->writer->close(&j->sink, false, NULL, 0); // never finished: removed
    free(j->rgba);
    if (e->pix)
        for (int i = 0; i < e->n_slots; i++) free(e->pix[i]);
    free(e->pix);
    free(e->free_slots);
    free(e->jobs);
    free(e->done);
    free(j->plan);
    if (j->dir_fd >= 0) close(j->dir_fd);   // releases the lock
    free(j);
}

bool export_job_finish(ExportJob *j, bool interrupted, int *written, char *err, size_t n)
{
    Encoder *e = &j->e;
    encoders_stop(j); // finish what was handed over
    bool incomplete = interrupted || e->err[0] || j->next < j->n_frames;
    if (!file_close(j, !incomplete)) incomplete = true;
    char ierr[EXPORT_ERR_MAX] = "";
    bool index_ok = j->o.no_index || write_index(e, &j->o, j->ls, j->measure, j->n_frames, incomplete, ierr, sizeof ierr);
    *written = e->n_done;
    bool ok = true;
    if (e->err[0]) {
        snprintf(err, n, "%s", e->err);
        ok = false;
    } else if (!index_ok) {
        snprintf(err, n, "%s", ierr);
        ok = false;
    }
    export_job_free(j);
    return ok;
}

// --- the command line's export ---------------------------------------------------------------

static int export_run_handled(const ExportOptions *o);

// --compare: B of the spec and the compare of A's trace with it; false with one line in err.
static bool open_compare(const Session *a, const ExportOptions *o, Session **b, Compare *c, char *err, size_t n)
{
    CompareSpec sp;
    return compare_parse_spec(o->compare, &sp, err, n) && (*b = compare_open_b(a, o->edits, &sp, err, n)) &&
           compare_traces(&a->trace, &(*b)->trace, c, err, n);
}

// SIGINT and SIGTERM are caught from the first moment of an export (a signal
// before the directory exists: no directory, a message, 130/143; after: the
// frames written so far, frames.json with "complete": false) until it is over.
int export_run(const ExportOptions *o)
{
    Interrupt saved;
    interrupt_catch(&saved);
    int code = export_run_handled(o);
    interrupt_restore(&saved);
    return code;
}

static int export_run_handled(const ExportOptions *o)
{
    char err[EXPORT_ERR_MAX] = "";
    char msg[LESSON_ERR_MAX + 200];
    Session *ses = session_open(o->lesson_path, o->edits, msg, sizeof msg);
    if (!ses) {
        utf8_fputs_line(stderr, msg);
        return 1;
    }
    const Lesson *ls = &ses->lesson;
    const Trace *tr = &ses->trace;
    Session *before = NULL;
    int code = 1, stage_filter = -1;
    if (o->stage) {
        stage_filter = trace_find(tr, o->stage);
        if (stage_filter < 0) {
            char names[1024] = "";
            for (int i = 0, used = 0; i < tr->n && used < (int)sizeof names; i++)
                used += snprintf(names + used, sizeof names - (size_t)used, " %s", tr->stages[i].name);
            cli_error(stderr, "attnviz: --stage: no stage \"%s\" in %s; stages are:%s", o->stage,
                      o->lesson_path, names);
            session_destroy(ses);
            return 2;
        }
    }
    if ((!viewkind_of(o->view)->panels || viewkind_of(o->view)->one_frame) && stage_filter < 0) // a glance: one frame
        for (int s = 0; s < tr->n && stage_filter < 0; s++)
            if (tr->stages[s].id == STAGE_ATTN) stage_filter = s;
    if (o->loop >= 0) { // (args: --loop comes with --stage)
        int n = stage_filter >= 0 ? recipe_loop_steps(tr, stage_filter) : 0;
        if (n == 0 || o->loop >= n) {
            if (n) cli_error(stderr, "attnviz: --loop: stage %s of %s has steps 0..%d", o->stage, o->lesson_path, n - 1);
            else cli_error(stderr, "attnviz: --loop: stage %s of %s is not inside a loop (the decode and flash stages are)",
                           o->stage ? o->stage : "?", o->lesson_path);
            session_destroy(ses);
            return 2;
        }
    }
    if (o->batch < 0 || o->batch >= tr->batch || o->head < 0 || o->head >= tr->n_heads) {
        cli_error(stderr, "attnviz: --batch/--head: %s has batches 0..%d and heads 0..%d",
                o->lesson_path, tr->batch - 1, tr->n_heads - 1);
        session_destroy(ses);
        return 2;
    }

    ExportTarget t = {0};
    ExportJob *job = NULL;
    Session *cmp_b = NULL; // --compare: B and the compare
    Compare cmp = {0};
    int *parts = NULL;
    bool tty = !o->quiet && isatty(STDERR_FILENO);
    double t0 = now_s(), last_bar = 0;

    ExpView xv = {0}; // --experiment: its numbers
    if (o->compare && !open_compare(ses, o, &cmp_b, &cmp, err, sizeof err)) goto fail;
    if (o->experiment && !expview_open(&xv, o->experiment, ses, o->corrupt, err, sizeof err)) goto fail;
    char assets[1100];
    if (!assets_find(assets, sizeof assets, err, sizeof err) ||
        !i18n_load(assets, err, sizeof err))
        goto fail;
    // fonts and renderer first: the job creates the directory only once they exist
    if (!export_target_create(&t, o->font_path, o->lang, o->width, o->height, err, sizeof err)) goto fail;
    // zh without a Chinese font draws English (one warning line): frames.json says so
    ExportOptions drawn = *o;
    drawn.lang = fonts_usable_lang(t.fonts, o->lang, stderr);
    before = session_checkpoint_before(ses); // a checkpoint's narration: "since step …"
    drawn.ckpt_prev = before ? &before->trace : NULL;
    char title[LESSON_MAX_TEXT + 64];
    drawn.edited = session_edited(ses), drawn.n_edits = ses->log.applied;
    drawn.ref = drawn.edited ? session_original_trace(ses) : NULL;
    drawn.title = session_title(ses, drawn.lang, title, sizeof title);
    if (interrupt_signal) {   // interrupted while loading: nothing written, no directory made
        snprintf(err, sizeof err, "attnviz: export interrupted by %s before anything was written (%.*s not touched)",
                 interrupt_name(interrupt_signal), PATH_IN_MSG, o->dir);
        code = interrupt_exit_code(interrupt_signal);
        goto fail;
    }
    View v;
    view_init(&v, ls, drawn.lang);
    v.edited = drawn.edited, v.n_edits = drawn.n_edits, v.ref = drawn.ref;
    TextMeasure measure = {text_measure, t.fonts};
    v.measure = &measure;
    v.batch = o->batch, v.head = o->head;
    v.ckpt_prev = drawn.ckpt_prev;
    if (cmp_b) drawn.view = v.kind = VIEW_COMPARE, v.cmp_b = &cmp_b->trace, v.cmp = &cmp, v.cmp_spec = o->compare;
    if (o->experiment) v.kind = o->view, v.exp = drawn.exp_view = &xv;
    if (o->projector) { // --projector: as M in the window, the high-contrast palette
        v.projector = true;
        v.palette = PALETTE_HIGH_CONTRAST;
        parts = malloc(sizeof *parts * (size_t)(tr->n > 0 ? tr->n : 1));
        if (!parts) {
            snprintf(err, sizeof err, "attnviz: out of memory");
            goto fail;
        }
        export_parts(tr, &v, o->width, o->height, parts);
        drawn.parts = parts;
    }
    job = export_job_begin(&drawn, ls, tr, stage_filter, err, sizeof err);
    if (!job) goto fail;
    int n_frames = export_job_total(job);

    t0 = now_s();
    Canvas c = {t.r, t.fonts, t.heatmaps, NULL, &t.draw};
    while (!interrupt_signal && export_job_step(job, &c, &v)) {
        if (tty && now_s() - last_bar > 0.1) {
            progress(export_job_written(job), n_frames, t0);
            last_bar = now_s();
        }
    }
    // Decided once, after the last PNG and before frames.json, so its "complete"
    // and the exit status agree: a signal after this point (until the handlers
    // are restored below) is caught and ignored, the export being done on disk.
    encoders_stop(job);
    int sig = interrupt_signal;
    bool interrupted = sig != 0;
    int written = 0;
    bool ok = export_job_finish(job, interrupted, &written, err, sizeof err);
    job = NULL;
    if (tty) {
        progress(written, n_frames, t0);
        fputc('\n', stderr);
    }
    double secs = now_s() - t0;
    if (!ok) {
        // err says what failed
    } else if (interrupted) {
        snprintf(err, sizeof err, "attnviz: export interrupted by %s: %d of %d frames written to %s (listed in frames.json)",
                 interrupt_name(sig), written, n_frames, o->dir);
        code = interrupt_exit_code(sig);
    } else {
        code = 0;
        if (!o->quiet)
            cli_error(stdout, "exported %d frames to %s in %.2f s (%.1f frames/s)", written, o->dir, secs,
                      secs > 0 ? written / secs : 0.0);
    }
fail:
    if (err[0]) utf8_fputs_line(stderr, err);
    free(parts);
    export_job_free(job);
    export_target_destroy(&t);
    i18n_free();
    session_destroy(before);
    compare_free(&cmp);
    expview_free(&xv);
    session_destroy(cmp_b);
    session_destroy(ses);
    return code;
}
