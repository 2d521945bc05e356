// keys.h — the key table of keymap.h as SDL keys: the names resolved once, and a
// key event looked up to its action.
#ifndef ATTNVIZ_KEYS_H
#define ATTNVIZ_KEYS_H

#include <SDL.h>
#include <stdbool.h>
#include <stddef.h>

#include "keymap.h"

// Resolves every key name of the table (SDL_GetKeyFromName); false with one line in
// err naming the first it does not know (a programmer error the tests catch).
bool keys_init(char *err, size_t n);
// The action of key sym with modifiers mod: a binding with Ctrl+ or Shift+ whose
// modifiers are held first, then a plain one (Shift may be held, Ctrl not).
// KEY_ACT_NONE when no binding takes it.
KeyAction keys_lookup(SDL_Keycode sym, Uint16 mod);

#endif
