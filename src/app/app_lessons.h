// app_lessons.h — the lesson on screen (app_lessons.c): the language (L), the picker (O,
// the "Lessons…" button), opening lessons, a typed text (I) and a checkpoint (U) read
// again, and watching the session for edits.
#ifndef ATTNVIZ_APP_LESSONS_H
#define ATTNVIZ_APP_LESSONS_H

#include "window.h"

// The window's title: the lesson's, "(edited)" after an edit.
void app_lessons_set_title(App *a);
// L: English ⇄ 中文.
void app_lessons_switch_lang(App *a);
// The window watches the session's version: after an edit, undo, redo or reset the
// stage on screen is found again by name, and the title says "(edited)".
void app_watch_session(App *a);
// Puts session s (complete) on screen in place of the current one, which is destroyed;
// keep_place: the same stage, head, batch and model view (another text of the same
// lesson), else from the start.
void app_replace_session(App *a, Session *s, bool keep_place);
// At a checkpoint of training, opens the one before (Lessons.ckpt_before, View.ckpt_prev)
// for the narration's "since step …"; else none.
void app_checkpoint_before(App *a);
// The lesson's checkpoint k computed (U, Shift+U, a click on the loss curve), at the same
// stage, a typed text kept; false (nothing changed) when out of range or the same.
bool app_set_checkpoint(App *a, int k);
// Ctrl+B: the backward view on (opened at its first stage, the targets) or off (back on the
// forward stages); a lesson that is not a language model says so in the toast.
bool app_toggle_backward(App *a);
// I: the text box on a language model's text (false, a toast, on another lesson); its
// keys and typed characters while it is open (false: closed), each change read at once.
bool app_text_open(App *a);
bool app_text_key(App *a, const SDL_KeyboardEvent *k);
bool app_text_input(App *a, const char *utf8);
// O, the "Lessons…" button: the picker.
void app_lessons_open_picker(App *a);
// Opens the lesson file at path in place of the one on screen (its title as a toast);
// false when it cannot be opened: its one-line error on stderr and as a toast, the
// lesson on screen stays.
bool app_lessons_open(App *a, const char *path);
// app_lesson_fetch_failed (app.h)
void app_lessons_fetch_failed(App *a, const char *path, int status, const char *why);
// The picker's keys and clicks, and a .json file dropped on the window; true when taken.
bool app_lessons_event(App *a, const SDL_Event *e);

#endif
