// app_events.h — the window's input (app_events.c): keys through the stack of modes,
// then the key table's action; the mouse, one drag at a time.
#ifndef ATTNVIZ_APP_EVENTS_H
#define ATTNVIZ_APP_EVENTS_H

#include "window.h"

// One event of either window.
void app_handle_event(App *a, const SDL_Event *e);
// T, the "Study" button, --study: the study mode on / off.
void app_toggle_study(App *a);
// The study mode's message (progress saved or not, the stage locked, the score) as a toast.
void app_study_after(App *a);
// F5 (and --presenter): the presenter window opens (if it is not open), the lesson
// starts over from its first stage, settled, and the elapsed timer from 0.
void app_present_from_start(App *a);
// M (--projector): projector mode on / off, said in a toast.
void app_toggle_projector(App *a);

#endif
