// cmpmenu.h — the compare menu (Shift+D): the B's a student can pick for the lesson on screen,
// listed in a Picker (picker.h; drawn by picker_draw with the menu's title and hint): each
// convention switch that changes this lesson's numbers, each head to ablate, each checkpoint of
// its training, each other lesson of the same shapes and (a language model) a text typed in. An item's path is its --compare SPEC,
// its title what B is in both languages. Last, a language model's experiments drawn
// ("experiment:NAME", expview.h): views of their own, not a B. Plain state, no SDL: the window fills it when the menu
// opens (app_compare.c) and makes B of the chosen spec as Ctrl+D does.
#ifndef ATTNVIZ_CMPMENU_H
#define ATTNVIZ_CMPMENU_H

#include "picker.h"
#include "session.h"

// The item of a typed text as B (a language model): the window opens the text box for B's text.
#define CMPMENU_TEXT "text:"

// Fills p (its items replaced; its title and hint keys set) with the specs for session a; the
// lessons of lessons_dir (NULL: none) of a's shapes. Returns the number of items.
int cmpmenu_fill(Picker *p, const Session *a, const char *lessons_dir);

#endif
