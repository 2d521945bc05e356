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
    int view;                  // ViewKind of view.h: --model-view, --head-view open in that view
    const struct SessionEdits *edits; // --set edits applied on opening (NULL: none)
    const char *stage;         // --stage NAME: open at this stage (NULL: the first)
    int batch, head;           // --batch, --head: the slice shown first
    bool head_set;             // --head given (else the stage opens on its narration's head)
    // The browser build (src/web): frames come from the browser's main loop, so a
    // frame never waits or sleeps, and one with nothing new to show is not drawn;
    // the window's size is in output pixels (the page scales the canvas for HiDPI
    // screens itself, so SDL does not).
    bool browser;
} AppOptions;

// Runs the window until the user quits. Returns the process exit code.
int app_run(const AppOptions *opt);

// The same window frame by frame, for a main loop that is not app_run's (the
// browser's): app_create opens it (NULL: the reason is on stderr), app_frame
// handles the events that came and draws one frame (false once the user quit),
// app_destroy closes it. opt must outlive the App.
typedef struct App App;
App *app_create(const AppOptions *opt);
bool app_frame(App *a);
void app_destroy(App *a);

// Called with the path of every file the user asked for once it is complete
// (S's frame, E's folder or handout, the lab's saved lesson); NULL: nothing. The
// browser build hands each to the browser as a download.
extern void (*app_on_saved)(const char *path);
// Called when Chinese is asked for (L) and no Chinese font is loaded; true when
// one is on its way (the browser fetches it only then; once it is in place the
// page calls app_fonts_reload and switches). NULL: the usual "no Chinese font".
extern bool (*app_fetch_font)(void);
// The fonts looked up and opened again (a font file arrived); false: the old ones stay.
bool app_fonts_reload(App *a);
// L's switch between English and Chinese.
void app_lessons_switch_lang(App *a);

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
} AppTestFrame;
typedef struct AppTestHook {
    double ms_per_frame;
    void (*frame)(void *ctx, const AppTestFrame *f);
    void *ctx;
} AppTestHook;
extern const AppTestHook *app_test_hook;

#endif
