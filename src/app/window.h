// window.h — the window's state, shared by the files of the window (app.c: events,
// the frame and the loop; app_export.c: E's exports; app_lessons.c: the language,
// the lesson picker and opening lessons). Private to src/app.
#ifndef ATTNVIZ_WINDOW_H
#define ATTNVIZ_WINDOW_H

#include <SDL.h>
#include <stdbool.h>

#include "app.h"
#include "export.h"
#include "heatmap.h"
#include "lab.h"
#include "layout.h"
#include "picker.h"
#include "pins.h"
#include "playback.h"
#include "presenter.h"
#include "session.h"
#include "study_ui.h"
#include "text.h"
#include "view.h"

struct AppOptions;

#define TOAST_SECONDS 3.0
#define MSG_MAX 1200
#define EXPORT_TOAST_SECONDS 8.0
#define ERROR_TOAST_SECONDS 8.0
#define QUIT_ASK_SECONDS 1.0 // (kept while the question is open)


struct App {
    const struct AppOptions *opt;
    Session *session;          // the lesson on screen, its trace and its path
    Session *ckpt_before;      // at a checkpoint of training: the one before (View.ckpt_prev), or NULL
    SDL_Window *win;
    SDL_Renderer *r;
    Fonts *fonts;
    TextMeasure measure;       // layout measures text with the window's fonts
    Overlays ov;               // what the window draws over the frame (tooltip, help, toast, picker, E)
    Layout layout;             // the frame's layout, for drawing and hit-testing (current_layout)
    View layout_view;          // the view and size it was computed for
    int layout_w, layout_h;
    bool layout_valid;
    bool trim_pending;         // return freed pages to the system after the next frame (a resize)
    TextMeasure export_measure; // and an E export with its own
    Playback pb;
    View v;
    char toast[MSG_MAX];
    double toast_left; // seconds
    int digit;          // the step number typed so far (1 then 0 → step 10), 0 = none
    Uint64 digit_ms;    // when it was typed (app_ms)
    double fake_ms_per_frame, fake_ms; // a fake clock (tests: app_test_hook, ATTNVIZ_TEST_CLOCK), 0: none
    bool quit;
    bool quit_ask;             // quitting would lose edits: save / discard / stay asked (request_quit)
    const Session *saved_session; // the session and version last saved (or opened): unsaved edits
    unsigned saved_version;    // are edits made since
    bool mouse_in;
    int mouse_wx, mouse_wy; // window coordinates
    // the lesson picker (O, the "Lessons…" button) and where lessons are listed from
    Picker picker;
    char lessons_dir[1200];    // lessons/ next to the assets
    // heatmaps drawn as images (large lessons), zoom/pan by dragging, export (E)
    HeatmapCache *heatmaps;
    DrawList draw;             // the frame's draw commands (paint.h), reused frame after frame
    bool dragging;
    int drag_x, drag_y;        // last drag position, renderer output pixels
    ExportJob *export_job;     // an export in progress, drawn a few frames per loop
    bool export_choose;        // E pressed: the next key picks the format
    ExportTarget export_target; // where it draws: its own surface, renderer, fonts and heatmap
                                // cache at the size of E, whatever the window does meanwhile
    View export_view;          // what it exports (the view when E was pressed)
    char export_dir[1200];
    char export_title[LESSON_MAX_TEXT + 64];
    Lab lab;                   // the what-if lab: selection, typing, switches, Δ, edit animation
    unsigned layout_gen;       // lab.gen the layout was computed for
    unsigned heatmap_gen;      // lab.gen the heatmap images were drawn for (values change in place)
    bool title_edited;         // the window's title says "(edited)"
    const Session *seen_session; // the session and version the window last showed (watch_session)
    unsigned seen_version;
    char stage_name[STAGE_NAME_MAX]; // the stage on screen, found again after an edit (sync_stage)
    StudyUI *study;            // the study mode (T, the "Study" button, --study) and progress.json
    Presenter *pres;           // the presenter window (--presenter, F5), NULL when closed
    bool black;                // "." : the audience window shows black
    PresentTools tools;        // pinned tooltips, spotlight, laser (pins.h)
    bool scrub_drag;           // the scrub bar's knob is being dragged
    bool loop_drag;            // the loop's step bar is being dragged (View.loop follows)
    int part_next;             // projector mode: the part the next stage starts with (← enters a result)
    // the text box (I): a language model's input typed in; every change that reads is
    // computed at once, one that does not keeps the last that did (text_error says why)
    bool text_open;
    bool text_skip;            // the I that opened it: its character (this frame's events) is not typed
    char text[LESSON_MAX_TEXT + 1];
    char text_error[LESSON_ERR_MAX + 200];
    Palette palette_before_projector; // M: the palette projector mode replaced, back when M turns it off
    // the loop (app_frame)
    bool sdl_up;               // SDL_Init succeeded (app_close quits it)
    bool no_wait;              // never wait or sleep inside a frame (a browser's main loop sets it; the
                               // desktop loop does not)
    Uint64 freq, last;         // the performance counter's ticks a second, and at the last frame
    bool software;             // a software renderer: a short sleep between frames
    bool quit_after_first;     // make bench: quit once the first frame is shown
    long frames_drawn, events, keyups; // (keyups: key releases handled, for the window tests)
    const char *state_path;    // ATTNVIZ_TEST_STATE: the window tests under Xvfb poll it
};

// A notice over the frame for TOAST_SECONDS: the string key with arg.
void app_toast(App *a, const char *key, const char *arg);
// The frame's layout (computed again when the view, the size or the lesson changed).
const Layout *app_layout(App *a);
// Whether something is at path (a name already taken).
bool app_file_exists(const char *path);
// Window coordinates to the renderer's output pixels.
void app_to_output(App *a, int x, int y, int *ox, int *oy);

// app_quit.c. Ctrl+S (and S when quitting asks): the edited lesson saved as a new file, its
// path on stdout and in a toast; false (a toast, stderr) when it was not.
bool app_save_lesson(App *a);
// Q, Ctrl+Q, closing the window: quits, or first asks (save / discard / stay) when edits
// would be lost; asked already (a second close, a second Ctrl+C): quits.
void app_request_quit(App *a);
// Esc: out of fullscreen, else a notice closes, else it says how to quit; never quits.
void app_escape(App *a);
// The question's keys while quitting asks (S, D, Esc; every other key does nothing): true
// while it is open.
bool app_quit_ask_key(App *a, const SDL_KeyboardEvent *k);

// E: the key after E picks the format (1 PNG frames, 2 handout, 3 MP4, 4 GIF).
void app_export_choose_key(App *a, SDL_Keycode sym);
// Draws export frames for at most budget seconds; ends the export when it is done.
void app_export_update(App *a, double budget);
// Finishes a running export now (before the lesson changes or the window closes).
void app_export_complete(App *a);

// The window's title: the lesson's, "(edited)" after an edit.
void app_lessons_set_title(App *a);
// Puts session s (complete) on screen in place of the current one, which is destroyed;
// keep_place: the same stage, head, batch and model view (another text of the same
// lesson), else from the start.
void app_replace_session(App *a, Session *s, bool keep_place);
// At a checkpoint of training, opens the one before (App.ckpt_before, View.ckpt_prev) for
// the narration's "since step …"; else none.
void app_checkpoint_before(App *a);
// The text box (textbox.c, I): opens it on a language model's text (false, a toast, on
// another lesson); its keys and typed characters while it is open (false: closed).
bool app_text_open(App *a);
// The lesson's checkpoint k computed (U, Shift+U, a click on the loss curve), at the same
// stage, a typed text kept; false (nothing changed) when out of range or the same.
bool app_set_checkpoint(App *a, int k);
bool app_text_key(App *a, const SDL_KeyboardEvent *k);
bool app_text_input(App *a, const char *utf8);
// O, the "Lessons…" button: the picker.
void app_lessons_open_picker(App *a);
// Opens the lesson file at path in place of the one on screen (its title as a toast);
// false when it cannot be opened: its one-line error on stderr and as a toast, the
// lesson on screen stays.
bool app_lessons_open(App *a, const char *path);
// The picker's keys and clicks, and a .json file dropped on the window; true when taken.
bool app_lessons_event(App *a, const SDL_Event *e);

#endif
