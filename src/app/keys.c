// keys.c — keymap.h's table as SDL keys (see keys.h).
#include "keys.h"

#include <stdio.h>
#include <string.h>

enum { MOD_CTRL = 1, MOD_SHIFT = 2 };

typedef struct Resolved {
    SDL_Keycode sym;
    int mods;
    KeyAction action;
} Resolved;

static Resolved table[64 * KEYMAP_MAX_BINDINGS];
static size_t n_table;

bool keys_init(char *err, size_t n)
{
    n_table = 0;
    for (size_t r = 0; r < KEYMAP_N_ROWS; r++)
        for (int b = 0; b < KEYMAP_MAX_BINDINGS && KEYMAP_ROWS[r].bind[b].key; b++) {
            const char *k = KEYMAP_ROWS[r].bind[b].key;
            int mods = 0;
            for (;;) {
                if (strncmp(k, "Ctrl+", 5) == 0) mods |= MOD_CTRL, k += 5;
                else if (strncmp(k, "Shift+", 6) == 0 && k[6]) mods |= MOD_SHIFT, k += 6;
                else break;
            }
            // one letter: the lower-case keycode SDL sends ("P" is SDLK_p)
            char name[32];
            snprintf(name, sizeof name, "%s", k);
            if (name[0] >= 'A' && name[0] <= 'Z' && name[1] == '\0') name[0] = (char)(name[0] - 'A' + 'a');
            SDL_Keycode sym = SDL_GetKeyFromName(name);
            if (n_table >= sizeof table / sizeof table[0]) {
                snprintf(err, n, "attnviz: the key table has more bindings than keys.c holds (%zu)",
                         sizeof table / sizeof table[0]);
                return false;
            }
            if (sym == SDLK_UNKNOWN) {
                snprintf(err, n, "attnviz: the key table names a key SDL does not know: \"%s\" (%s)",
                         KEYMAP_ROWS[r].bind[b].key, KEYMAP_ROWS[r].text);
                return false;
            }
            table[n_table++] = (Resolved){sym, mods, KEYMAP_ROWS[r].bind[b].action};
        }
    return true;
}

KeyAction keys_lookup(SDL_Keycode sym, Uint16 mod)
{
    int held = ((mod & KMOD_CTRL) ? MOD_CTRL : 0) | ((mod & KMOD_SHIFT) ? MOD_SHIFT : 0);
    // with modifiers: all of them held, the binding that names the most of them first (Ctrl+Shift+↑
    // before Ctrl+↑, whatever the table's order)
    static const int by_count[] = {MOD_CTRL | MOD_SHIFT, MOD_CTRL, MOD_SHIFT};
    for (size_t k = 0; k < sizeof by_count / sizeof by_count[0]; k++)
        for (size_t i = 0; i < n_table; i++)
            if (table[i].mods == by_count[k] && table[i].sym == sym && (held & by_count[k]) == by_count[k])
                return table[i].action;
    for (size_t i = 0; i < n_table; i++) // plain: Shift may be held, Ctrl not
        if (!table[i].mods && table[i].sym == sym && !(held & MOD_CTRL)) return table[i].action;
    return KEY_ACT_NONE;
}
