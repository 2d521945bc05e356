// keymap.h — every key of the window in one table: what it does (the action the
// window dispatches) and how the help overlay (?) lists it (a row of text in the
// language files: "keys.NAME = LABEL\tDESCRIPTION"). The window resolves the key
// names once (SDL's names, e.g. "Right", "PageDown", "Keypad +") and looks keys up
// here; the help overlay prints the rows of each section in the table's order.
// A row may have no keys (the mouse) or keys that its mode handles itself (the
// what-if lab's and the study box's keys, lab.c and study_ui.c): those rows are
// listed for the help, and the window passes the key on to that mode.
//
// Pure view code: no SDL.
#ifndef ATTNVIZ_KEYMAP_H
#define ATTNVIZ_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "lang.h"

// The help overlay's sections (its columns: viewing | what if…, study | presenting).
typedef enum KeySection { KEYS_VIEW, KEYS_LAB, KEYS_STUDY, KEYS_PRESENT, KEY_SECTION_COUNT } KeySection;

typedef enum KeyAction {
    KEY_ACT_NONE,      // listed for the help; the mode it belongs to handles it
    KEY_ACT_NEXT,
    KEY_ACT_PREV,
    KEY_ACT_FIRST,
    KEY_ACT_LAST,
    KEY_ACT_DIGIT,     // 1–9: a step of the timeline (two digits: 10, 11)
    KEY_ACT_ZERO,      // 0: the second digit of 10, else the whole heatmap again
    KEY_ACT_PLAY,
    KEY_ACT_FASTER,
    KEY_ACT_SLOWER,
    KEY_ACT_HEAD_NEXT,
    KEY_ACT_HEAD_PREV,
    KEY_ACT_BATCH_NEXT,
    KEY_ACT_LAYER_NEXT,
    KEY_ACT_LAYER_PREV,
    KEY_ACT_MODEL_VIEW,
    KEY_ACT_TEXT,
    KEY_ACT_WARMER,
    KEY_ACT_CKPT_NEXT,
    KEY_ACT_CKPT_PREV,
    KEY_ACT_COOLER,
    KEY_ACT_BATCH_PREV,
    KEY_ACT_VALUES,
    KEY_ACT_PALETTE,
    KEY_ACT_PROB_SCALE,
    KEY_ACT_LANG,
    KEY_ACT_OPEN,
    KEY_ACT_FULLSCREEN,
    KEY_ACT_SAVE,
    KEY_ACT_EXPORT,
    KEY_ACT_ZOOM_IN,
    KEY_ACT_ZOOM_OUT,
    KEY_ACT_PAN,       // Shift + an arrow: the content moves with the arrow
    KEY_ACT_HELP,
    KEY_ACT_QUIT,
    KEY_ACT_ESCAPE, // fullscreen off, what is open closed; never quits
    KEY_ACT_STUDY,
    KEY_ACT_PRESENT,
    KEY_ACT_BLACK,
    KEY_ACT_CLEAR_PINS,
    KEY_ACT_SPOTLIGHT,
    KEY_ACT_LASER,
    KEY_ACT_HOLD,
    KEY_ACT_LOOP_NEXT,
    KEY_ACT_LOOP_PREV,
    KEY_ACT_FRAME_BACK,
    KEY_ACT_FRAME_FORWARD,
    KEY_ACT_PROJECTOR,
    KEY_ACT_TRAIN,
    KEY_ACT_TRAIN_STEP,
    KEY_ACT_COMPARE_NEXT,
    KEY_ACT_COMPARE_PREV,
    KEY_ACT_COMPARE_MENU, // Shift+D: the compare menu (B to pick from a list)
    KEY_ACT_BACKWARD,  // the backward view on / off (a language model)
    KEY_ACT_CURSOR,    // R: the cell cursor on / off (cursor.h)
    KEY_ACT_TOP_K,         // a language model's top-k / top-p one step along their ladders (a lab edit)
    KEY_ACT_TOP_P,
    KEY_ACT_GENERATE,      // append the most likely kept next token (sample.h), or a seeded draw
    KEY_ACT_GENERATE_DRAW,
    KEY_ACTION_COUNT
} KeyAction;

#define KEYMAP_MAX_BINDINGS 9

// One key: an SDL key name with optional "Ctrl+" and "Shift+" in front. A
// binding without Shift+ also takes the key with Shift held unless an earlier
// binding with Shift+ takes it; one without Ctrl+ never takes a Ctrl key.
typedef struct KeyBinding {
    const char *key;
    KeyAction action;
} KeyBinding;

typedef struct KeyRow {
    KeySection section;
    const char *text;  // the language files' key of its help line: "keys.next"
    KeyBinding bind[KEYMAP_MAX_BINDINGS]; // up to the first with key NULL
} KeyRow;

extern const KeyRow KEYMAP_ROWS[];
extern const size_t KEYMAP_N_ROWS;

// The help text of a section: its rows' lines ("LABEL\tDESCRIPTION"), one a line.
void keymap_help(KeySection s, Lang lang, char *out, size_t n);

#endif
