// app.h — the interactive window.
#ifndef ATTNVIZ_APP_H
#define ATTNVIZ_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "app_options.h" // AppOptions, app_on_saved, app_fetch_font
#include "probe.h"       // app_test_hook (tests only)

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

// The fonts looked up and opened again (a font file arrived); false: the old ones stay.
bool app_fonts_reload(App *a);
// L's switch between English and Chinese.
void app_switch_lang(App *a);
// Opens the lesson file at path in place of the one on screen (as if dropped on the
// window); false when it cannot: its one-line error shows, the lesson on screen stays.
bool app_open(App *a, const char *path);
// The window's new size (the page's canvas: output pixels).
void app_resize(App *a, int w, int h);
// Reduced motion (the browser's prefers-reduced-motion): every transition jumps to its end.
void app_set_reduced_motion(App *a, bool on);
// An export that failed after the window had ended it (the page's MP4, written when the
// browser's encoder has flushed): "Export failed: why" in the window.
void app_export_failed(App *a, const char *why);
// The lesson at path, asked for (app_fetch_lesson), could not be fetched: status, the site's
// HTTP answer (404), or 0 when there was none (offline, and no copy kept); why, its words for
// stderr. One line in the window; the lesson on screen stays.
void app_lesson_fetch_failed(App *a, const char *path, int status, const char *why);
// A pinch (the page's two fingers): zoom by factor at output pixel (x, y) — a heatmap
// there, else the result's — then pan the zoomed heatmaps by (dx, dy) output pixels.
void app_pinch(App *a, int x, int y, float factor, int dx, int dy);

// Whether the next frame would come without an event: a transition or the lesson
// playing, a notice shown, an export or an edit's animation running.
bool app_busy(const App *a);
// What the window shows now (the page's window.attnviz.state() and frame()); the
// pointers are valid until the next app_frame.
typedef struct AppStatus {
    const struct Session *session; // the lesson on screen (its path, its edits; --dump)
    const struct Trace *shown;     // the trace drawn (the lab's while an edit animates)
    const struct View *view;       // stage, slice, language, projector, view kind
    const struct Layout *layout;   // the frame's layout (hit-testing)
    const struct Study *study;     // the study mode
    const char *font_path;         // --font, or NULL
    int stage;                     // the stage on screen (its index in session's trace)
    bool busy;                     // app_busy
    long frames, events;           // frames drawn, events handled
    int width, height;             // the frame's size, output pixels
    const char *toast;             // the notice shown, NULL: none
    bool hover;                    // the pointer is over the frame and a tooltip may show
    int mouse_x, mouse_y;          // the pointer, output pixels
    bool cursor;                   // the cell cursor (Y) is on, at cell (cursor_row, cursor_col)
    int cursor_panel, cursor_row, cursor_col; // of the layout's panel cursor_panel
    bool help;                     // the help overlay is shown
    const struct TrainRun *train;  // training live (R): its run, NULL: none on this lesson
    bool training;                 // that run takes steps between frames (false: paused)
    const struct Session *compare_b; // the compare view's B (Ctrl+D), NULL: off
    const struct TextBox *text;    // I's text box (open or not)
    const struct Lab *lab;         // the what-if lab (its selected cell, the value typed)
} AppStatus;
AppStatus app_status(App *a);
// Frames drawn so far (a frame with nothing new is not drawn in the page).
long app_frames_drawn(const App *a);
// Bytes the text texture cache holds (capped: src/draw/text.c), for make bench-web's memory
// rows: what malloc holds beyond it must not grow.
size_t app_text_cache_bytes(const App *a);

#endif
