// window.h — the window's state: App, made of each part's own (private to src/app).
// The parts that hold their state themselves take it, not App, and know nothing of the
// window: the text box (textbox.h), E's exports (app_export.h), presenting
// (presenter.h), the layout cache (layout_cache.h), the notice (toast.h), the tests'
// probe (probe.h), the lab, the study mode. The files that work on App include this
// header and their own: window.c (the notice, the layout, coordinates), app_lessons.c
// (the lesson on screen), app_quit.c (saving, quitting), app_events.c (keys and the
// mouse), app.c (the loop and app.h); each calls only down that list.
#ifndef ATTNVIZ_WINDOW_H
#define ATTNVIZ_WINDOW_H

#include <SDL.h>
#include <stdbool.h>

#include "app_export.h"
#include "app_options.h"
#include "compare.h"
#include "cursor.h"
#include "heatmap.h"
#include "lab.h"
#include "layout_cache.h"
#include "picker.h"
#include "playback.h"
#include "presenter.h"
#include "probe.h"
#include "session.h"
#include "study_ui.h"
#include "text.h"
#include "textbox.h"
#include "train.h"
#include "toast.h"
#include "view.h"

// The audience window and what draws into it.
typedef struct Screen {
    SDL_Window *win;
    SDL_Renderer *r;
    Fonts *fonts;
    TextMeasure measure;       // layout measures text with the window's fonts
    HeatmapCache *heatmaps;    // heatmaps drawn as images (large lessons)
    unsigned heatmap_gen;      // lab.gen the heatmap images were drawn for (values change in place)
    DrawList draw;             // the frame's draw commands (paint.h), reused frame after frame
    bool reduced_motion;       // transitions shown at their end at once (app_set_reduced_motion)
} Screen;

// What a held left button drags (one at a time; the release ends it).
typedef enum DragKind {
    DRAG_NONE,
    DRAG_SCRUB, // the scrub bar's knob (a held transition)
    DRAG_LOOP,  // the loop's step bar (View.loop follows)
    DRAG_PIN,   // a pinned tooltip's box (PresentTools.drag)
    DRAG_LAB,   // a press on a value: dragging scrubs it (Lab.press)
    DRAG_PAN,   // a zoomed heatmap follows the pointer
} DragKind;

// Digits typed for a step of the timeline (1 then 0 → step 10).
typedef struct StepDigit {
    int n;                     // the step number typed so far, 0 = none
    Uint64 ms;                 // when it was typed (probe_ms)
} StepDigit;

// Where the user points: the mouse over the window, the keyboard's cell cursor, a step's digits.
typedef struct Pointer {
    bool in;                   // over the audience window
    int wx, wy;                // window coordinates
    DragKind drag;
    int drag_x, drag_y;        // DRAG_PAN: the last position, output pixels
    CellCursor cell;           // Y: the keyboard's pointer, the cell cursor (cursor.h)
    StepDigit digit;           // 1 then 0: step 10
} Pointer;

// The lesson on screen as the window last showed it (watch_session).
typedef struct Seen {
    const Session *session;    // the session and version the window last showed
    unsigned version;
    bool title_edited;         // the window's title says "(edited)"
    char stage_name[STAGE_NAME_MAX]; // the stage on screen, found again after an edit
} Seen;

// Quitting (app_quit.c).
typedef struct Quitting {
    bool quit;
    bool ask;                  // quitting would lose edits: save / discard / stay asked
    const Session *saved_session; // the session and version last saved (or opened): unsaved edits
    unsigned saved_version;    // are edits made since
} Quitting;

// Opening lessons (app_lessons.c).
typedef struct Lessons {
    Picker picker;             // the lesson picker (O, the "Lessons…" button)
    char dir[1200];            // lessons/ next to the assets
    Session *ckpt_before;      // at a checkpoint of training: the one before (View.ckpt_prev), or NULL
} Lessons;

// The loop (app_frame).
typedef struct Loop {
    bool sdl_up;               // SDL_Init succeeded (app_destroy quits it)
    bool no_wait;              // never wait or sleep inside a frame (a browser's main loop)
    bool software;             // a software renderer: a short sleep between frames
    bool trim_pending;         // return freed pages to the system after the next frame (a resize)
    Uint64 freq, last;         // the performance counter's ticks a second, and at the last frame
} Loop;

// The window's training mode (R; app_train.c): the lesson's model trained between frames.
typedef struct Training {
    bool on;                 // a run exists (the session's lesson is being trained)
    bool running;            // steps between frames; false: paused
    TrainRun run;
    const Session *session;  // the session trained
    double step_ms;          // the last step's time: the next slice's estimate
    double worst_ms;         // the longest slice so far
    double shown;            // when the trace last followed the weights (ms)
    bool show_due;           // the trace follows the weights in the next frame (one without steps)
    bool show_step;          // Shift+R: the last step's update drawn over the frame (optstep.h)
    TrainShown step;         // what it draws
} Training;
// The compare view (app_compare.c, Ctrl+D): B and its compare with the lesson on screen.
typedef struct CompareUI {
    Session *b;                // NULL: off
    Compare cmp;
    char spec[1200];           // what B is ("ablate:l1.h0", "lesson:PATH")
    int choice;                // the head ablated, layer·H + head (Ctrl+D); -1: a spec of the menu
    Picker menu;               // the compare menu (Shift+D, cmpmenu.h)
    const Session *session;    // the session and version B was made from
    unsigned version;
    struct ExpView *exp;       // an experiment drawn (the menu's "experiment:NAME", expview.h), or NULL
} CompareUI;

// The lesson's model run beside the screen: B of a compare (Ctrl+D, app_compare.c) and
// training live (R, app_train.c); each owned by its file.
typedef struct Experiments {
    CompareUI cmp;
    Training train;
} Experiments;

typedef struct App App; // (app.h names it too)
struct App {
    const AppOptions *opt;
    Session *session;          // the lesson on screen, its trace and its path
    Screen screen;
    Overlays ov;               // what the window draws over the frame (tooltip, help, toast, picker, E)
    LayoutCache layout;        // the frame's layout, for drawing and hit-testing (app_layout)
    Playback pb;
    View v;
    Toast toast;
    Quitting quit;
    Pointer pointer;
    Lessons lessons;
    ExportUI exp;              // E
    Lab lab;                   // the what-if lab: selection, typing, switches, Δ, edit animation
    Seen seen;
    StudyUI *study;            // the study mode (T, the "Study" button, --study) and progress.json
    Presenting present;        // the presenter window, black screen, tools, projector palette
    TextBox text;              // I: a language model's input
    Experiments ex;            // the lesson's model run beside the screen: compare's B, training
    Loop loop;
    Probe probe;               // the tests' clock and counters
};

// window.c. A notice over the frame for TOAST_SECONDS: the string key with arg.
void app_toast(App *a, const char *key, const char *arg);
// The frame's layout (computed again when the view, the size or the lesson changed).
const Layout *app_layout(App *a);
// Window coordinates to the renderer's output pixels.
void app_to_output(App *a, int x, int y, int *ox, int *oy);
// The renderer's output size.
void app_output_size(App *a, int *w, int *h);
// What E exports now: the lesson and view on screen at the output size.
ExportFrom app_export_from(App *a);
// Ctrl+S (and S when quitting asks, a training's weights kept): the lesson saved as a new
// file, its path on stdout and in a toast; false (a toast, stderr) when it was not.
bool app_save_lesson(App *a);

#endif
