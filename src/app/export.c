// export.c — headless frames to PNG with a drawing thread and encoder threads.
#include "export.h"

#include <SDL.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "attention.h"
#include "cli.h"
#include "i18n.h"
#include "playback.h"
#include "png_write.h"
#include "render.h"
#include "text.h"
#include "view.h"

#define EXPORT_ERR_MAX 600

void export_options_init(ExportOptions *o)
{
    memset(o, 0, sizeof *o);
    o->width = 1280;
    o->height = 720;
    o->fps = 30;
    o->zlib_level = 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads = n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

int export_plan(ExportFrame *out, int max, int n_stages, int stage_filter, bool animate, int fps)
{
    // A transition lasts PLAYBACK_ANIM_SECONDS; its frames run at 1/fps steps and
    // end settled (anim = 1), so stills are the last frame of each transition.
    int per = animate ? (int)ceil(PLAYBACK_ANIM_SECONDS * fps) : 1;
    if (per < 1) per = 1;
    int n = 0;
    for (int s = 0; s < n_stages; s++) {
        if (stage_filter >= 0 && s != stage_filter) continue;
        for (int k = 0; k < per; k++, n++) {
            if (n >= max) continue;
            out[n].stage = s;
            out[n].anim = (float)(k + 1) / (float)per;
            out[n].time_s = animate ? (double)n / fps : (double)n;
        }
    }
    return n;
}

// --- signals ---------------------------------------------------------------------

static volatile sig_atomic_t g_signal;

static void on_signal(int sig) { g_signal = sig; }

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
    // pixel buffers
    int n_slots;
    unsigned char **pix;
    int *free_slots, n_free;
    // job ring
    Job *jobs;
    int cap, head, count;
    bool closing;
    // results
    bool *done;
    int n_done;
    char err[EXPORT_ERR_MAX];   // first write error
} Encoder;

static void frame_name(char *buf, size_t n, const char *dir, int index, const char *stage)
{
    snprintf(buf, n, "%s/%04d-%s.png", dir, index, stage);
}

static void *encoder_main(void *arg)
{
    Encoder *e = arg;
    for (;;) {
        pthread_mutex_lock(&e->mu);
        while (e->count == 0 && !e->closing) pthread_cond_wait(&e->cv_job, &e->mu);
        if (e->count == 0 && e->closing) {
            pthread_mutex_unlock(&e->mu);
            return NULL;
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
            frame_name(path, sizeof path, e->dir, j.frame, e->tr->stages[e->plan[j.frame].stage].name);
            ok = png_write_rgba(path, e->pix[j.slot], e->w, e->h, e->w * 4, e->level, err,
                                sizeof err);
        }
        pthread_mutex_lock(&e->mu);
        if (!skip && ok) {
            e->done[j.frame] = true;
            e->n_done++;
        } else if (!skip && !e->err[0]) {
            snprintf(e->err, sizeof e->err, "%s", err);
        }
        e->free_slots[e->n_free++] = j.slot;
        pthread_cond_signal(&e->cv_slot);
        pthread_mutex_unlock(&e->mu);
    }
}

// --- directory and frames.json -------------------------------------------------------

// Messages name a path and a reason; paths longer than the message are cut.
#define PATH_IN_MSG 400

static bool prepare_dir(const char *dir, char *err, size_t n)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            snprintf(err, n, "%.*s: not a directory", PATH_IN_MSG, dir);
            return false;
        }
    } else if (mkdir(dir, 0777) != 0) {
        snprintf(err, n, "%.*s: cannot create the export directory: %s%s", PATH_IN_MSG, dir, strerror(errno),
                 errno == ENOENT ? " (its parent does not exist)" : "");
        return false;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, n, "%.*s: export directory is not writable: %s", PATH_IN_MSG, dir, strerror(errno));
        return false;
    }
    return true;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

// Writes DIR/frames.json listing exactly the complete frames (temp name + rename).
static bool write_index(const Encoder *e, const ExportOptions *o, const Lesson *ls, int n_frames,
                        bool interrupted, char *err, size_t n)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/frames.json", o->dir);
    snprintf(tmp, sizeof tmp, "%s/.frames.json.tmp-%ld", o->dir, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, path, strerror(errno));
        return false;
    }
    fputs("{\"lesson\": ", f);
    json_str(f, o->lesson_path);
    fputs(", \"title\": ", f);
    json_str(f, lesson_title(ls, o->lang));
    fprintf(f, ", \"width\": %d, \"height\": %d, \"lang\": \"%s\", \"animate\": %s, \"fps\": %d,"
               " \"complete\": %s, \"frames\": [",
            o->width, o->height, o->lang == LANG_ZH ? "zh" : "en", o->animate ? "true" : "false",
            o->fps, interrupted ? "false" : "true");
    bool first = true;
    for (int i = 0; i < n_frames; i++) {
        if (!e->done[i]) continue;
        char name[4096];
        const char *stage = e->tr->stages[e->plan[i].stage].name;
        frame_name(name, sizeof name, ".", i, stage);
        fprintf(f, "%s\n  {\"file\": ", first ? "" : ",");
        json_str(f, name + 2);
        fprintf(f, ", \"stage\": \"%s\", \"batch\": %d, \"head\": %d, \"time\": %.4f, \"anim\": %.4f}",
                stage, o->batch, o->head, e->plan[i].time_s, (double)e->plan[i].anim);
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

// --- the export --------------------------------------------------------------------------

int export_run(const ExportOptions *o)
{
    char err[EXPORT_ERR_MAX] = "";
    Lesson ls;
    Trace tr;
    if (!cli_load_and_forward(o->lesson_path, &ls, &tr, stderr)) return 1;
    int code = 1, stage_filter = -1;
    if (o->stage) {
        stage_filter = trace_find(&tr, o->stage);
        if (stage_filter < 0) {
            fprintf(stderr, "attnviz: --stage: no stage \"%s\" in %s; stages are:", o->stage,
                    o->lesson_path);
            for (int i = 0; i < tr.n; i++) fprintf(stderr, " %s", tr.stages[i].name);
            fputc('\n', stderr);
            trace_free(&tr);
            lesson_free(&ls);
            return 2;
        }
    }
    if (o->batch < 0 || o->batch >= tr.batch || o->head < 0 || o->head >= tr.n_heads) {
        fprintf(stderr, "attnviz: --batch/--head: %s has batches 0..%d and heads 0..%d\n",
                o->lesson_path, tr.batch - 1, tr.n_heads - 1);
        trace_free(&tr);
        lesson_free(&ls);
        return 2;
    }

    int n_frames = export_plan(NULL, 0, tr.n, stage_filter, o->animate, o->fps);
    ExportFrame *plan = calloc((size_t)n_frames, sizeof *plan);
    Encoder e;
    memset(&e, 0, sizeof e);
    SDL_Surface *surf = NULL;
    SDL_Renderer *r = NULL;
    Fonts *fonts = NULL;
    pthread_t threads[8];
    int n_threads = 0;
    bool interrupted = false;
    bool tty = !o->quiet && isatty(STDERR_FILENO);
    double t0 = now_s(), last_bar = 0;
    struct sigaction sa, old_int, old_term;
    if (!plan) goto oom;
    export_plan(plan, n_frames, tr.n, stage_filter, o->animate, o->fps);

    char assets[1100];
    if (!app_find_assets(assets, sizeof assets, err, sizeof err) ||
        !i18n_load(assets, err, sizeof err))
        goto fail;
    if (!prepare_dir(o->dir, err, sizeof err)) goto fail;
    fonts = fonts_create(o->font_path, o->lang, err, sizeof err);
    if (!fonts) goto fail;
    surf = SDL_CreateRGBSurfaceWithFormat(0, o->width, o->height, 32, SDL_PIXELFORMAT_RGBA32);
    r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    if (!r) {
        snprintf(err, sizeof err, "attnviz: cannot create the offscreen renderer: %s", SDL_GetError());
        goto fail;
    }

    // encoder threads and their buffers
    e.w = o->width, e.h = o->height, e.level = o->zlib_level, e.dir = o->dir;
    e.plan = plan, e.tr = &tr;
    e.n_slots = o->threads * 2 + 1;
    e.cap = e.n_slots;
    e.pix = calloc((size_t)e.n_slots, sizeof *e.pix);
    e.free_slots = calloc((size_t)e.n_slots, sizeof *e.free_slots);
    e.jobs = calloc((size_t)e.cap, sizeof *e.jobs);
    e.done = calloc((size_t)n_frames, sizeof *e.done);
    if (!e.pix || !e.free_slots || !e.jobs || !e.done) goto oom;
    for (int i = 0; i < e.n_slots; i++) {
        e.pix[i] = malloc((size_t)o->width * o->height * 4);
        if (!e.pix[i]) goto oom;
        e.free_slots[e.n_free++] = i;
    }
    pthread_mutex_init(&e.mu, NULL);
    pthread_cond_init(&e.cv_job, NULL);
    pthread_cond_init(&e.cv_slot, NULL);
    for (int i = 0; i < o->threads && i < 8; i++)
        if (pthread_create(&threads[n_threads], NULL, encoder_main, &e) == 0) n_threads++;
    if (n_threads == 0) {
        snprintf(err, sizeof err, "attnviz: cannot start encoder threads");
        goto stop;
    }

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    g_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    t0 = now_s();
    View v;
    view_init(&v, &ls, fonts_usable_lang(fonts, o->lang, stderr)); // zh without a CJK font: English
    v.batch = o->batch, v.head = o->head;
    for (int i = 0; i < n_frames; i++) {
        if (g_signal) {
            interrupted = true;
            break;
        }
        v.stage = plan[i].stage;
        v.anim = plan[i].anim;
        render_frame(r, fonts, &tr, &v);
        // wait for a free buffer, then hand the pixels to an encoder
        pthread_mutex_lock(&e.mu);
        while (e.n_free == 0 && !e.err[0]) pthread_cond_wait(&e.cv_slot, &e.mu);
        bool failed = e.err[0] != '\0';
        int slot = failed ? -1 : e.free_slots[--e.n_free];
        pthread_mutex_unlock(&e.mu);
        if (failed) break;
        unsigned char *dst = e.pix[slot];
        for (int y = 0; y < o->height; y++)
            memcpy(dst + (size_t)y * o->width * 4, (unsigned char *)surf->pixels + (size_t)y * surf->pitch,
                   (size_t)o->width * 4);
        pthread_mutex_lock(&e.mu);
        e.jobs[(e.head + e.count) % e.cap] = (Job){i, slot};
        e.count++;
        pthread_cond_signal(&e.cv_job);
        int done = e.n_done;
        pthread_mutex_unlock(&e.mu);
        if (tty && now_s() - last_bar > 0.1) {
            progress(done, n_frames, t0);
            last_bar = now_s();
        }
    }
stop:
    // finish what was handed over, then stop the encoders
    pthread_mutex_lock(&e.mu);
    e.closing = true;
    pthread_cond_broadcast(&e.cv_job);
    pthread_mutex_unlock(&e.mu);
    for (int i = 0; i < n_threads; i++) pthread_join(threads[i], NULL);
    if (n_threads) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    if (g_signal) interrupted = true;
    if (tty) {
        progress(e.n_done, n_frames, t0);
        fputc('\n', stderr);
    }
    {
        double secs = now_s() - t0;
        char ierr[EXPORT_ERR_MAX] = "";
        bool index_ok = write_index(&e, o, &ls, n_frames, interrupted || e.err[0], ierr, sizeof ierr);
        if (e.err[0]) {
            snprintf(err, sizeof err, "%s", e.err);
        } else if (!err[0] && !index_ok) {
            snprintf(err, sizeof err, "%s", ierr);
        } else if (!err[0] && interrupted) {
            snprintf(err, sizeof err, "attnviz: export interrupted by %s: %d of %d frames written to %s (listed in frames.json)",
                     g_signal == SIGTERM ? "SIGTERM" : "SIGINT", e.n_done, n_frames, o->dir);
            code = g_signal == SIGTERM ? 143 : 130;
        } else if (!err[0]) {
            code = 0;
            if (!o->quiet)
                printf("exported %d frames to %s in %.2f s (%.1f frames/s)\n", e.n_done, o->dir, secs,
                       secs > 0 ? e.n_done / secs : 0.0);
        }
    }
    pthread_mutex_destroy(&e.mu);
    pthread_cond_destroy(&e.cv_job);
    pthread_cond_destroy(&e.cv_slot);
    goto fail;
oom:
    snprintf(err, sizeof err, "attnviz: out of memory preparing the export");
fail:
    if (err[0]) fprintf(stderr, "%s\n", err);
    if (e.pix)
        for (int i = 0; i < e.n_slots; i++) free(e.pix[i]);
    free(e.pix);
    free(e.free_slots);
    free(e.jobs);
    free(e.done);
    free(plan);
    if (fonts) fonts_flush(fonts);
    if (r) SDL_DestroyRenderer(r);
    if (surf) SDL_FreeSurface(surf);
    if (fonts) fonts_destroy(fonts);
    i18n_free();
    trace_free(&tr);
    lesson_free(&ls);
    return code;
}
