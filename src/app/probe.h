// probe.h — what the tests and make bench read from the window, apart from the frame:
// a fake clock, the frames and events counted, the state file, the hook of the
// in-process tests. The program itself never sets any of it (only the environment
// below does, or a test).
#ifndef ATTNVIZ_PROBE_H
#define ATTNVIZ_PROBE_H

#include <SDL.h>
#include <stdbool.h>

// Tests only. tests/test_window.c runs the window in-process (SDL's offscreen video
// driver) and drives it frame by frame: with app_test_hook set, app_run never waits
// for an event or sleeps between frames, takes the time between frames from
// ms_per_frame (a fake clock: transitions, toasts and the two-digit window follow
// it), and calls frame() after each frame is shown (it may push events and read the
// renderer's pixels). busy: the next frame would come without an event (a transition,
// a toast or an export is running). The program itself never sets it. The window
// tests under Xvfb get the same fake clock from ATTNVIZ_TEST_CLOCK=MS, and with
// ATTNVIZ_TEST_STATE=FILE the window rewrites FILE after each frame: "FRAMES EVENTS
// BUSY STAGE KEYUPS" (frames drawn, events handled, 1 or 0, the stage on screen, key
// releases handled).
struct SDL_Renderer;
typedef struct AppTestFrame {
    struct SDL_Renderer *r;
    long frame;              // frames drawn so far, this one included
    bool busy;
    const char *stage;       // the stage on screen
    int loop;                // its loop's step shown (View.loop), -1 the whole loop
    const struct Layout *layout; // the frame's layout (valid during the call)
    int head;                // the head shown (View.head)
    int checkpoint;          // the lesson's checkpoint computed (Lesson.checkpoint, -1: its "weights")
    const char *compare;     // B's spec of the compare view (View.cmp_spec; NULL: none)
} AppTestFrame;
typedef struct AppTestHook {
    double ms_per_frame;
    void (*frame)(void *ctx, const AppTestFrame *f);
    void *ctx;
} AppTestHook;
extern const AppTestHook *app_test_hook;

typedef struct Probe {
    double ms_per_frame, ms; // the fake clock (app_test_hook, ATTNVIZ_TEST_CLOCK); 0: none
    long frames, events, keyups; // frames drawn, events handled, key releases among them
    int state_fd;            // ATTNVIZ_TEST_STATE, open from probe_init on; -1: none
    bool quit_after_first;   // ATTNVIZ_QUIT_AFTER_FIRST_FRAME (make bench)
} Probe;

// From the environment and app_test_hook.
void probe_init(Probe *p);
void probe_close(Probe *p);
// Whether a test runs the window in-process (app_test_hook): no frame waits for an event.
bool probe_in_process(const Probe *p);
// Whether the clock is fake (no waiting, no sleeping between frames).
bool probe_fake_clock(const Probe *p);
// Milliseconds: SDL's clock, or the fake one.
Uint64 probe_ms(const Probe *p);
// The seconds this frame advances by: real_dt, or the fake clock's step (which it takes).
double probe_frame_dt(Probe *p, double real_dt);
// An event handled.
void probe_event(Probe *p, const SDL_Event *e);
// A frame drawn and shown: true when the window is to quit now (make bench's first frame).
bool probe_frame_drawn(Probe *p);
// Whether anyone reads the frames (a test hook, a state file): then probe_report.
bool probe_watched(const Probe *p);
// The frame to the test hook and the state file.
void probe_report(Probe *p, const AppTestFrame *f);

#endif
