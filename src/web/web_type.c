// web_type.c — typing without a keyboard (issue 40, 4): on a phone or a tablet the study box,
// the lab's values and I's text need the device's on-screen keyboard, which opens only for a
// focused text field. The page (web_type.js) shows a real, labelled <input> while the window
// takes typing — what it is for and what is typed so far come with attnviz.state()'s
// "typing" — and hands what is typed there to the window as SDL_TEXTINPUT events
// (attnviz_text: as any keyboard's characters), Backspace and Enter as keys.
#include <emscripten.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "i18n.h"
#include "json_out.h"
#include "lab.h"
#include "study.h"
#include "textbox.h"
#include "web.h"

void web_write_typing(FILE *f, const AppStatus *st)
{
    const Lang lang = st->view->lang;
    const char *kind = NULL, *text = "", *label = "";
    if (st->text && st->text->open) { // I's box first: it takes the characters first (app_events.c)
        kind = "text", text = st->text->text, label = i18n_get(lang, "type.text");
    } else if (st->study->on) {
        if (study_asking(st->study))
            kind = "answer", text = st->study->text, label = st->study->q[st->study->focus].question;
    } else if (st->lab && (st->lab->typing || st->lab->sel)) {
        kind = "value", text = st->lab->typing ? st->lab->text : "";
        label = st->lab->typing ? st->lab->label : i18n_get(lang, "type.value");
    }
    fputs(", \"typing\": ", f);
    if (!kind) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"kind\": \"%s\", \"text\": ", kind);
    json_write_string(f, text);
    fputs(", \"label\": ", f);
    json_write_string(f, label);
    fputs(", \"enter\": ", f);
    json_write_string(f, i18n_get(lang, "type.enter"));
    fputs("}", f);
}

// Characters typed in the page's field, for the window as if typed on a keyboard: one
// SDL_TEXTINPUT event a character, as a keyboard sends them (the lab reads one at a time).
// 0: none sent (no window, nothing to send).
EMSCRIPTEN_KEEPALIVE int attnviz_text(const char *utf8)
{
    if (!web_app() || !utf8 || !*utf8) return 0;
    for (size_t at = 0, len; utf8[at]; at += len) {
        len = 1;
        while (((unsigned char)utf8[at + len] & 0xC0) == 0x80 && len < 4) len++; // (its continuation bytes)
        SDL_Event e = {.type = SDL_TEXTINPUT};
        memcpy(e.text.text, utf8 + at, len);
        e.text.text[len] = '\0';
        if (SDL_PushEvent(&e) != 1) return 0;
    }
    return 1;
}
