// app_picker.h — a list overlay in the window (app_picker.c): the lesson picker (O, app_lessons.c)
// and the compare menu (Shift+D, app_compare.c) take their keys, clicks and wheel here.
#ifndef ATTNVIZ_APP_PICKER_H
#define ATTNVIZ_APP_PICKER_H

#include "window.h"

// p's layout at the window's output size and scale, its selection scrolled into view.
void app_picker_fit(App *a, Picker *p, PickerLayout *pl);
// Keys, clicks and the wheel over an open list overlay p (the lesson picker, the compare menu):
// arrows, Page Up/Down, Home/End and the wheel move its selection, Enter or a click on an item
// chooses it (APP_PICK_CHOOSE: p->sel is to be opened), Esc, the toggle key or a click outside
// closes it, L asks for the other language (APP_PICK_LANG); APP_PICK_TAKEN when the event went to
// it, APP_PICK_NONE when p is closed or the event is not one of its.
typedef enum AppPick { APP_PICK_NONE, APP_PICK_TAKEN, APP_PICK_CHOOSE, APP_PICK_LANG } AppPick;
AppPick app_picker_event(App *a, Picker *p, const SDL_Event *e, SDL_Keycode toggle);

#endif
