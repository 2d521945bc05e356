// web.h — what the page (web.js) calls in the browser build (web_main.c). Each is
// exported to JavaScript as Module._NAME; strings returned are the caller's to free.
#ifndef ATTNVIZ_WEB_H
#define ATTNVIZ_WEB_H

#include <stdio.h>

// A file in the page's file system opened now as if dropped on the window: a lesson
// opens (1), or its one-line error shows and the lesson on screen stays (0).
int attnviz_open(const char *path);
// The page's address (location.search, navigator.language) as the command line:
// JSON {args, lesson, fetch, lang, error} (url_args.h).
char *attnviz_url(const char *query, const char *nav_lang);
// The address's query that opens the window where it is now (lesson, stage, slice,
// language, study, projector); NULL before the window opens.
char *attnviz_here(void);
// The canvas's new size in output pixels (the page's CSS size × devicePixelRatio).
void attnviz_resize(int w, int h);
// The Chinese font asked for (app_fetch_font) is in place: fonts reloaded, Chinese shown.
void attnviz_font_arrived(void);
// A lesson asked for (app_fetch_lesson: web.js's fetchLesson) could not be fetched: status, the
// site's HTTP answer, or 0 for none (offline, no copy kept); why for stderr. One line in the
// window, the lesson on screen stays. (One that arrives is opened with attnviz_open.)
void attnviz_lesson_failed(const char *path, int status, const char *why);
// JSON: where the window is — lesson, stage, index, stages, lang, batch, head, busy,
// zoom (1: the whole heatmap), help (the help overlay is shown), frames, events (handled so far), width, height, edited, toast, hover (the cell under the mouse: panel,
// row, col; or null), buttons (x, y, w, h around the window's own buttons),
// result and timeline (x, y, w, h: the result panel's cells, the timeline; output pixels), study {on, questions, answered, right,
// asking, and while asking: question, list, answer}, backward (Ctrl+B), train (R's run: running, step, total,
// loss, held; or null), compare (Ctrl+D: spec, identical, differ, summary; or null).
char *attnviz_state(void);
// JSON: the frame on screen, with the fields of one of --describe's frames.
char *attnviz_frame(void);
// JSON: the lesson on screen, its edits applied, exactly as --dump writes it.
char *attnviz_dump(void);
// JSON: the lesson's file, as `attnviz --describe --size WxH` in the window's language and slice.
char *attnviz_describe(int w, int h);
// make bench-web (web_bench.c): n forward passes of the lesson text json, their times in ms
// space-separated, or "error: …".
char *attnviz_bench_forward(const char *json, int n);
// make bench-web: the bytes malloc holds now (its memory row).
double attnviz_heap_used(void);

// JSON: the frame for the page's accessible layer (describe_a11y.h).
char *attnviz_a11y(void);
// A key for the window as if typed on the canvas (SDL's key name; mods 1: with Shift, 2: with Ctrl,
// 3: both): 1, or 0 when there is no such key.
int attnviz_key(const char *name, int mods);
// prefers-reduced-motion: every transition jumps to its end (1) or not (0).
void attnviz_reduced_motion(int on);

// A pinch (web_touch.js): zoom by factor at output pixel (x, y), then pan by (dx, dy) output pixels.
void attnviz_pinch(int x, int y, float factor, int dx, int dy);

// JSON: how long each frame drawn since the last call took, in ms (make bench-web).
char *attnviz_frame_times(void);
// make bench-web: the text texture cache's bytes (malloc's bytes beyond it must not grow).
double attnviz_text_cache_bytes(void);

// R's training started for `steps` steps (its checkpoints as --train STEPS's), paused at the last:
// 1, or 0 (a notice says why: a lesson without a task).
int attnviz_train(int steps);
// JSON: the compare view on screen (Ctrl+D) as `--compare SPEC --describe` (data 1: as --dump, with
// the Δ tensors); NULL when it is off.
char *attnviz_compare(int data);
// web_export.js: an MP4 failed as the encoder flushed, after E had ended (the window says so).
void attnviz_export_failed(const char *why);

// The presenter window (web_present.c): JSON {lang, index, stages, stage, head, heads, batch,
// study, lesson, steps [{label, on, past}], now, narration, notes, next, next_narration, words};
// NULL before the window opens.
char *attnviz_presenter(void);
// The window (web_main.c), NULL before it opens or after it ended.
struct App *web_app(void);

// Typing without a keyboard (web_type.c): state()'s "typing" — what the window takes typing
// for now: {kind (text: I's box, answer: the study box, value: the lab's selected cell), text
// (typed so far), label, enter (what Enter does)}, or null.
struct AppStatus;
void web_write_typing(FILE *f, const struct AppStatus *st);
// Characters for the window as typed on a keyboard (SDL_TEXTINPUT): 1, or 0 when none went.
int attnviz_text(const char *utf8);

#endif
