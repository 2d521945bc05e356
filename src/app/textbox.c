// textbox.c — the text box (I, textbox.h): the text box opens with the lesson's text;
// every change is read at once with the lesson's tokenizer (session_retext, as --text
// does) and, when it reads, the window puts it on screen in place of the session before,
// at the same stage (app_lessons.c); when it does not (a character outside the
// vocabulary, an empty text, one longer than the model's context), the box says why and
// the last text that read stays on screen. Enter or Esc closes the box. Edits of the
// what-if lab are not carried over: the text starts from the lesson's file.
#include "textbox.h"

#include <stdio.h>
#include <string.h>

#include "attn_json.h"
#include "bpe.h"
#include "typed.h"
#include "utf8.h"

// The lesson's text of batch 0: its tokens, joined by a space for the word tokenizer
// (byte-pair encoding's: their bytes joined).
static void current_text(const Lesson *ls, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    if (ls->bpe) {
        int ids[LESSON_MAX_LEN];
        const int L = ls->len_q < LESSON_MAX_LEN ? ls->len_q : LESSON_MAX_LEN;
        for (int l = 0; l < L; l++) ids[l] = (int)ls->in.ids.data[l];
        k = bpe_decode(ls->bpe, ids, L, out, n);
        out[utf8_whole(out, k)] = '\0'; // (a character cut by the box's size: dropped whole)
        return;
    }
    for (int l = 0; l < ls->len_q; l++) {
        const char *t = lesson_token_label(ls, 0, l);
        if (!t) break;
        int w = snprintf(out + k, n - k, "%s%s", ls->word_tokens && l ? " " : "", t);
        if (w < 0 || (size_t)w >= n - k) break; // a lesson's tokens longer than the box: cut
        k += (size_t)w;
    }
}

Session *textbox_read(TextBox *t, const Session *from, Lang lang)
{
    char msg[LESSON_ERR_MAX + 200];
    // what a student can fix, in plain words and the window's language (not the lesson
    // rules' JSON path); the last text that read stays on screen
    if (typed_text_problem(&from->lesson, t->text, lang, t->error, sizeof t->error)) return NULL;
    Session *s = session_retext(from, t->text, msg, sizeof msg); // (the checkpoint on screen stays)
    if (!s) { // (anything else: the rules' message)
        const char *m = strncmp(msg, "--text: ", 8) == 0 ? msg + 8 : msg; // (the argument's name: not here)
        snprintf(t->error, sizeof t->error, "%s", m);
        return NULL;
    }
    t->error[0] = '\0';
    return s;
}

bool textbox_open(TextBox *t, const Lesson *ls, bool for_b)
{
    if (!ls->vocab) return false;
    current_text(ls, t->text, sizeof t->text);
    t->error[0] = '\0';
    t->open = true;
    t->skip = !for_b, t->for_b = for_b; // (the menu's Enter types nothing)
    return true;
}

bool textbox_key(TextBox *t, const SDL_KeyboardEvent *k, bool *changed)
{
    *changed = false;
    if (!t->open) return false;
    switch (k->keysym.sym) {
    case SDLK_ESCAPE: case SDLK_RETURN: case SDLK_KP_ENTER: t->open = false; break;
    case SDLK_BACKSPACE: {
        size_t n = strlen(t->text);
        if (n == 0) break;
        t->text[utf8_floor(t->text, n - 1)] = '\0'; // the last character, whole
        *changed = true;
        break;
    }
    default: break; // (the characters come as text input; no other key acts while typing)
    }
    return true;
}

bool textbox_input(TextBox *t, const char *utf8, bool *changed)
{
    *changed = false;
    if (!t->open) return false;
    if (t->skip && (strcmp(utf8, "i") == 0 || strcmp(utf8, "I") == 0)) return t->skip = false, true;
    size_t n = strlen(t->text), add = strlen(utf8);
    if (n + add >= sizeof t->text) return true;
    memcpy(t->text + n, utf8, add + 1);
    *changed = true;
    return true;
}
