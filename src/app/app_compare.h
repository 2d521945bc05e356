// app_compare.h — the compare view in the window (app_compare.c): Ctrl+D / Ctrl+Shift+D set B to the
// lesson on screen with the next / previous head ablated (zeroed), one head after another and
// then off; Shift+D opens a menu of every B to pick; the frame shows each stage's result in A, in B and Δ = B − A (view_compare.c).
#ifndef ATTNVIZ_APP_COMPARE_H
#define ATTNVIZ_APP_COMPARE_H

#include "app_picker.h"
#include "window.h"

// Ctrl+D (dir 1), Ctrl+Shift+D (dir −1): the next / previous head ablated; past the last (first), off.
void app_compare_step(App *a, int dir);
// After the lesson on screen changed (an edit, a typed text, a checkpoint): B made again from
// it (another lesson: off).
void app_compare_watch(App *a);
// Off: B freed, the stage's panels again.
void app_compare_off(App *a);
// Shift+D: the compare menu (cmpmenu.h) listing the B's of the lesson on screen, opened.
void app_compare_menu(App *a);
// B's text typed (the menu's "a typed text", TextBox.for_b) changed: B = the lesson on screen
// with that text, on screen when it reads with as many tokens as A's; when not, the box says why
// (in the window's language) and the B before stays.
void app_compare_text(App *a);
// Its keys, clicks and wheel while open (a choice makes B, as Ctrl+D does): app_picker_event's
// answer (APP_PICK_LANG: the caller switches the language).
AppPick app_compare_event(App *a, const SDL_Event *e);

#endif
