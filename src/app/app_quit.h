// app_quit.h — saving the edited lesson, quitting and Esc in the window (app_quit.c):
// Esc never quits; Q, Ctrl+Q and closing the window ask first when edits are not saved.
#ifndef ATTNVIZ_APP_QUIT_H
#define ATTNVIZ_APP_QUIT_H

#include "window.h"

// Q, Ctrl+Q, closing the window: quits, or first asks (save / discard / stay) when edits
// would be lost; asked already (a second close, a second Ctrl+C): quits.
void app_request_quit(App *a);
// Esc: out of fullscreen, else a notice closes, else it says how to quit; never quits.
void app_escape(App *a);
// The question's keys while quitting asks (S, D, Esc; every other key does nothing): true
// while it is open.
bool app_quit_ask_key(App *a, const SDL_KeyboardEvent *k);

#endif
