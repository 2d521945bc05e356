// app.h — the interactive window.
#ifndef ATTNVIZ_APP_H
#define ATTNVIZ_APP_H

#include <stdbool.h>

typedef struct AppOptions {
    const char *lesson_path;   // lesson to open
    const char *font_path;     // --font, or NULL for fontconfig
    const char *lessons_dir;   // --lessons DIR for the picker, or NULL
    int lang;                  // Lang of lesson.h
    int width, height;         // initial window size
    bool fullscreen;
    bool study;                // --study: open in the study mode
    bool presenter;            // --presenter: open the presenter window too (presenter.h)
    bool projector;            // --projector: projector mode (View.projector)
    const struct SessionEdits *edits; // --set edits applied on opening (NULL: none)
} AppOptions;

// Runs the window until the user quits. Returns the process exit code.
int app_run(const AppOptions *opt);

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
} AppTestFrame;
typedef struct AppTestHook {
    double ms_per_frame;
    void (*frame)(void *ctx, const AppTestFrame *f);
    void *ctx;
} AppTestHook;
extern const AppTestHook *app_test_hook;

#endif
