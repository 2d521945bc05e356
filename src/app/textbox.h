// textbox.h — the text box (I): a language model's input typed in. Every change that
// reads is computed at once, one that does not keeps the last that did (error says why).
#ifndef ATTNVIZ_TEXTBOX_H
#define ATTNVIZ_TEXTBOX_H

#include <SDL.h>
#include <stdbool.h>

#include "lesson.h"
#include "session.h"

typedef struct TextBox {
    bool open;
    bool skip;  // the I that opened it: its character (this frame's events) is not typed
    bool for_b; // B's text of a compare (the compare menu's "a typed text"): read by app_compare_text
    char text[LESSON_MAX_TEXT + 1];
    char error[LESSON_ERR_MAX + 200];
} TextBox;

// Opens the box on ls's text (batch 0), for the lesson's input or (for_b) B's text of a compare;
// false when ls is not a language model.
bool textbox_open(TextBox *t, const Lesson *ls, bool for_b);
// Its keys while it is open (true: taken; Enter, Esc close it); *changed: the text
// changed (read it: textbox_read).
bool textbox_key(TextBox *t, const SDL_KeyboardEvent *k, bool *changed);
// Characters typed while it is open (true: taken); *changed as above.
bool textbox_input(TextBox *t, const char *utf8, bool *changed);
// The text read with from's tokenizer: a new session (the checkpoint on screen stays),
// or NULL with t->error saying why in plain words of lang.
Session *textbox_read(TextBox *t, const Session *from, Lang lang);

#endif
