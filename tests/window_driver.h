// window_driver.h — the window in-process, as SDL's own tests drive it: SDL's
// offscreen video driver (no X), events pushed with SDL_PushEvent, a fake clock
// (16 ms a frame, whatever the machine's speed), frame by frame (app.h's
// app_test_hook). Included by tests/test_window.c and tests/test_export_formats.c.
//
// A script runs on its own thread in lock step with the window's loop (which keeps
// the main thread, as SDL wants): each wd_frames() lets the window draw frames and
// waits for them. Failures are counted (wd_fail), not asserted: cmocka's asserts
// cannot jump out of another thread. The test then asserts no failures and status 0.
#ifndef ATTNVIZ_WINDOW_DRIVER_H
#define ATTNVIZ_WINDOW_DRIVER_H

#include <SDL.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "draw/overlay.h"

#define WD_MS_PER_FRAME 16.0
#define WD_MAX_W 2000
#define WD_MAX_H 1200

typedef struct Driver Driver;
typedef void (*DriverScript)(Driver *d);
struct Driver {
    const char *name;
    SDL_sem *go, *done;         // the script lets a frame be drawn / the frame is drawn
    SDL_atomic_t script_over;   // the script has returned: frames no longer wait
    bool exited;                // app_run has returned
    long frame;                 // frames drawn so far
    bool busy;                  // the last frame: an animation, toast or export runs
    char stage[64];             // the stage on screen
    int loop;                   // its loop's step (View.loop), -1 the whole loop
    Rect bar, bar_track;        // where the scrub bar and the loop's step bar go (output pixels)
    int n_layer_tabs;           // a model of several layers: its layer tabs (output pixels)
    Rect layer_tab[8];
    int mv_layers, mv_heads;    // the model view on screen: its grid (0: not shown), the last map
    Rect mv_last;
    int head;                   // the head shown
    int hv_n;                   // the head view on screen: its query tokens (0: not shown)
    int kind;                   // the frame's ViewKind
    Rect panel1;                // its second panel (w 0: none): the compare view's B
    int checkpoint;             // the lesson's checkpoint computed (-1: its "weights")
    char compare[128];          // B's spec of the compare view ("": none)
    int result_rows;            // the rows of the frame's result panel (at probs: the tokens)
    Rect curve;                 // the loss curve (w 0: none)
    Uint32 window_id;
    bool want_pixels;           // the next frame copies its pixels into px
    Uint32 *px;                 // ARGB8888, w * h
    int w, h;
    int fails;
    DriverScript script;
};

static inline void wd_fail(Driver *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: FAIL: ", d->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    d->fails++;
}

// The hook, on the window's thread after each frame.
static inline void wd_hook(void *ctx, const AppTestFrame *f)
{
    Driver *d = ctx;
    d->frame = f->frame;
    d->busy = f->busy;
    snprintf(d->stage, sizeof d->stage, "%s", f->stage);
    d->loop = f->loop;
    overlay_scrub_rect(f->layout, &d->bar, &d->bar_track);
    d->n_layer_tabs = f->layout->n_layer_tabs < 8 ? f->layout->n_layer_tabs : 8;
    for (int i = 0; i < d->n_layer_tabs; i++) d->layer_tab[i] = f->layout->layer_tab[i];
    const bool model = f->layout->kind == VIEW_MODEL, heads = f->layout->kind == VIEW_HEADS;
    d->mv_layers = model ? f->layout->view.model.layers : 0, d->mv_heads = model ? f->layout->view.model.heads : 0;
    if (d->mv_layers > 0) d->mv_last = f->layout->view.model.map[d->mv_layers - 1][d->mv_heads - 1];
    d->head = f->head;
    d->checkpoint = f->checkpoint, d->curve = f->layout->curve;
    snprintf(d->compare, sizeof d->compare, "%s", f->compare ? f->compare : "");
    d->result_rows = f->layout->result_panel >= 0 ? f->layout->spec[f->layout->result_panel].rows : 0;
    d->hv_n = heads ? f->layout->view.heads.n : 0;
    d->kind = f->layout->kind;
    d->panel1 = f->layout->n_panels > 1 ? f->layout->panel[1] : (Rect){0, 0, 0, 0};
    d->window_id = SDL_GetWindowID(SDL_RenderGetWindow(f->r));
    if (d->want_pixels) {
        SDL_GetRendererOutputSize(f->r, &d->w, &d->h);
        if (d->w > WD_MAX_W || d->h > WD_MAX_H ||
            SDL_RenderReadPixels(f->r, NULL, SDL_PIXELFORMAT_ARGB8888, d->px, d->w * 4) != 0)
            d->w = d->h = 0;
        d->want_pixels = false;
    }
    if (SDL_AtomicGet(&d->script_over)) {
        SDL_Event q = {.type = SDL_QUIT};
        SDL_PushEvent(&q); // the script left the window open: close it
        return;
    }
    SDL_SemPost(d->done);
    SDL_SemWait(d->go);
}

// wd_frames N: N more frames drawn (N × 16 ms of the fake clock). False once the
// window has closed.
static inline bool wd_frames(Driver *d, int n)
{
    for (int i = 0; i < n; i++) {
        if (d->exited) return false;
        SDL_SemPost(d->go);
        SDL_SemWait(d->done);
    }
    return !d->exited;
}

// wd_wait SECONDS of the fake clock
static inline bool wd_wait(Driver *d, double seconds)
{
    return wd_frames(d, (int)(seconds * 1000.0 / WD_MS_PER_FRAME + 0.5));
}

// wd_settle: frames until nothing moves (no transition, toast or export), at most
// 30 s of the fake clock; then one more frame.
static inline bool wd_settle(Driver *d)
{
    for (int i = 0; i < 2000 && !d->exited; i++) {
        wd_frames(d, 1);
        if (!d->busy) return wd_frames(d, 1);
    }
    if (!d->exited) wd_fail(d, "still busy after 30 s of frames (stage %s)", d->stage);
    return false;
}

static inline void wd_push(Driver *d, SDL_Event *e)
{
    if (SDL_PushEvent(e) != 1) wd_fail(d, "SDL_PushEvent: %s", SDL_GetError());
}

// wd_key NAME / wd_key_mod NAME MOD: a key pressed and released as a keyboard sends
// it (SDL's key names: "Right", "Return", "1", "S"…; a printable key also types its
// character, unless Ctrl is held), then one frame. wd_key_text: with TEXT typed.
static inline void wd_key_text(Driver *d, const char *name, Uint16 mod, const char *text)
{
    SDL_Keycode sym = SDL_GetKeyFromName(name);
    if (sym == SDLK_UNKNOWN) {
        wd_fail(d, "no key named %s", name);
        return;
    }
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.windowID = d->window_id;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = sym;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(sym);
    e.key.keysym.mod = mod;
    wd_push(d, &e);
    if (text && *text) {
        SDL_Event t;
        memset(&t, 0, sizeof t);
        t.type = SDL_TEXTINPUT;
        t.text.windowID = d->window_id;
        snprintf(t.text.text, sizeof t.text.text, "%s", text);
        wd_push(d, &t);
    }
    e.type = SDL_KEYUP;
    e.key.state = SDL_RELEASED;
    wd_push(d, &e);
    wd_frames(d, 1);
}
static inline void wd_key_mod(Driver *d, const char *name, Uint16 mod)
{
    char text[2] = {0, 0};
    if (strlen(name) == 1 && name[0] > ' ' && name[0] < 127 && !(mod & KMOD_CTRL))
        text[0] = (mod & KMOD_SHIFT) ? (char)SDL_toupper(name[0]) : (char)SDL_tolower(name[0]);
    wd_key_text(d, name, mod, text);
}
#define wd_key(d, name) wd_key_mod(d, name, KMOD_NONE)

// wd_type TEXT: each character's key (ASCII), as `xdotool type`
static inline void wd_type(Driver *d, const char *text)
{
    for (const char *c = text; *c; c++) {
        char k[2] = {*c, 0};
        wd_key_text(d, *c == ' ' ? "Space" : k, (*c >= 'A' && *c <= 'Z') ? KMOD_SHIFT : KMOD_NONE, k);
    }
}

// wd_mouse X Y [BUTTON]: the pointer moves there (window pixels); a button > 0 clicks
static inline void wd_mouse(Driver *d, int x, int y, int button)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEMOTION;
    e.motion.windowID = d->window_id;
    e.motion.x = x, e.motion.y = y;
    wd_push(d, &e);
    if (button > 0) {
        memset(&e, 0, sizeof e);
        e.type = SDL_MOUSEBUTTONDOWN;
        e.button.windowID = d->window_id;
        e.button.button = (Uint8)button;
        e.button.state = SDL_PRESSED;
        e.button.clicks = 1;
        e.button.x = x, e.button.y = y;
        wd_push(d, &e);
        e.type = SDL_MOUSEBUTTONUP;
        e.button.state = SDL_RELEASED;
        wd_push(d, &e);
    }
    wd_frames(d, 1);
}

// wd_shot OUT: the pixels of the next frame into OUT (a WD_MAX_W × WD_MAX_H buffer)
static inline bool wd_shot(Driver *d, Uint32 *out)
{
    d->px = out;
    d->want_pixels = true;
    wd_frames(d, 1);
    if (d->w == 0) wd_fail(d, "could not read the frame's pixels: %s", SDL_GetError());
    return d->w > 0;
}

static inline bool wd_same(const Driver *d, const Uint32 *a, const Uint32 *b)
{
    return memcmp(a, b, (size_t)d->w * (size_t)d->h * 4) == 0;
}

// wd_has_colour PX RGB: some pixel has that colour
static inline bool wd_has_colour(const Driver *d, const Uint32 *px, Uint32 rgb)
{
    for (long i = 0; i < (long)d->w * d->h; i++)
        if ((px[i] & 0xFFFFFF) == rgb) return true;
    return false;
}

static inline int wd_script_main(void *p)
{
    Driver *d = p;
    SDL_SemWait(d->done); // the first frame
    if (!d->exited) d->script(d);
    SDL_AtomicSet(&d->script_over, 1);
    SDL_SemPost(d->go);
    return 0;
}

// wd_run NAME SCRIPT OPTIONS: the window with OPTIONS driven by SCRIPT; returns the
// number of failures (the window's exit status not 0 is one).
static inline int wd_run(const char *name, DriverScript script, const AppOptions *opt)
{
    static Driver d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.script = script;
    d.go = SDL_CreateSemaphore(0);
    d.done = SDL_CreateSemaphore(0);
    AppTestHook hook = {WD_MS_PER_FRAME, wd_hook, &d};
    app_test_hook = &hook;
    SDL_Thread *th = SDL_CreateThread(wd_script_main, "script", &d);
    int rc = app_run(opt);
    d.exited = true;
    SDL_SemPost(d.done); // a script waiting for a frame sees the window gone
    SDL_WaitThread(th, NULL);
    app_test_hook = NULL;
    SDL_DestroySemaphore(d.go);
    SDL_DestroySemaphore(d.done);
    if (rc != 0) wd_fail(&d, "exit status %d", rc);
    return d.fails;
}

#endif
