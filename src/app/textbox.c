// textbox.c — what the window reads the lesson file again for: a language model's input
// typed in (I), and a checkpoint of its training (U, the loss curve). The text box (I): the text box opens with
// the lesson's text; every change is read at once with the lesson's tokenizer
// (session_open with SessionEdits.text, as --text does) and, when it reads, put on screen
// in place of the session before, at the same stage (app_replace_session); when it does
// not (a character outside the vocabulary, an empty text, one longer than the model's
// context), the box says why and the last text that read stays on screen. Enter or Esc
// closes the box. Edits of the what-if lab are not carried over: the text starts from the
// lesson's file.
#include "window.h"

#include <stdio.h>
#include <string.h>

#include "scene.h"
#include "typed.h"
#include "utf8.h"

// The lesson's text of batch 0: its tokens, joined by a space for the word tokenizer.
static void current_text(const Lesson *ls, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    for (int l = 0; l < ls->len_q; l++) {
        const char *t = lesson_token_label(ls, 0, l);
        if (!t) break;
        int w = snprintf(out + k, n - k, "%s%s", ls->word_tokens && l ? " " : "", t);
        if (w < 0 || (size_t)w >= n - k) break;
        k += (size_t)w;
    }
}

static void apply(App *a)
{
    char msg[LESSON_ERR_MAX + 200];
    // what a student can fix, in plain words and the window's language (not the lesson
    // rules' JSON path); the last text that read stays on screen
    if (typed_text_problem(&a->session->lesson, a->text, a->v.lang, a->text_error, sizeof a->text_error)) return;
    Session *s = session_retext(a->session, a->text, msg, sizeof msg); // (the checkpoint on screen stays)
    if (!s) { // (anything else: the rules' message)
        const char *m = strncmp(msg, "--text: ", 8) == 0 ? msg + 8 : msg; // (the argument's name: not here)
        snprintf(a->text_error, sizeof a->text_error, "%s", m);
        return;
    }
    a->text_error[0] = '\0';
    app_replace_session(a, s, true);
}

bool app_set_checkpoint(App *a, int k)
{
    const Lesson *ls = &a->session->lesson;
    if (ls->n_checkpoints == 0) {
        app_toast(a, "app.no_checkpoints", NULL);
        return false;
    }
    if (k < 0 || k >= ls->n_checkpoints || k == ls->checkpoint) return false;
    char msg[LESSON_ERR_MAX + 200];
    const SessionEdits ed = {NULL, 0, ls->typed ? a->text : NULL, true, k}; // (a typed text stays)
    Session *s = session_open(a->session->path, &ed, msg, sizeof msg);
    if (!s) {
        app_toast(a, "app.load_failed", msg);
        return false;
    }
    app_replace_session(a, s, true);
    a->v.head = scene_stage_head(&a->session->trace, &a->v, -1); // the head its narration names (a glance: kept)
    return true;
}

bool app_text_open(App *a)
{
    const Lesson *ls = &a->session->lesson;
    if (!ls->vocab) {
        app_toast(a, "app.no_text", NULL);
        return false;
    }
    current_text(ls, a->text, sizeof a->text);
    a->text_error[0] = '\0';
    a->text_open = a->text_skip = true;
    return true;
}

bool app_text_key(App *a, const SDL_KeyboardEvent *k)
{
    if (!a->text_open) return false;
    switch (k->keysym.sym) {
    case SDLK_ESCAPE: case SDLK_RETURN: case SDLK_KP_ENTER: a->text_open = false; break;
    case SDLK_BACKSPACE: {
        size_t n = strlen(a->text);
        if (n == 0) break;
        a->text[utf8_floor(a->text, n - 1)] = '\0'; // the last character, whole
        apply(a);
        break;
    }
    default: break; // (the characters come as text input; no other key acts while typing)
    }
    return true;
}

bool app_text_input(App *a, const char *utf8)
{
    if (!a->text_open) return false;
    if (a->text_skip && (strcmp(utf8, "i") == 0 || strcmp(utf8, "I") == 0)) return a->text_skip = false, true;
    size_t n = strlen(a->text), add = strlen(utf8);
    if (n + add >= sizeof a->text) return true;
    memcpy(a->text + n, utf8, add + 1);
    apply(a);
    return true;
}
