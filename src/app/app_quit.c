// app_quit.c — saving the edited lesson, quitting and Esc in the window (app_quit.h):
// Esc never quits; Q, Ctrl+Q and closing the window ask first when edits are not saved.
#include "app_quit.h"

#include <stdio.h>

#include "app_train.h"
#include "cli.h"
#include "viewkind.h"

// Whether the lesson on screen has edits that were not saved since it was opened.
static bool unsaved_edits(const App *a)
{
    return (session_edited(a->session) && !(a->quit.saved_session == a->session && a->quit.saved_version == a->session->version)) ||
           app_train_unsaved(a);
}

// Q, Ctrl+Q, closing the window: quits, or first asks (save / discard / stay) when the
// edits would be lost. Asked already (a second close, a second Ctrl+C): quits.
void app_request_quit(App *a)
{
    if (a->opt->browser) { // the page never ends itself on a key: its tab is closed
        app_toast(a, "app.quit_in_browser", NULL);
        return;
    }
    if (a->quit.ask || !unsaved_edits(a)) {
        a->quit.quit = true;
        return;
    }
    a->quit.ask = true;
    a->ov.help = false, a->exp.choose = false;
    char n[16];
    const bool trained = app_train_unsaved(a); // (training pauses while asked)
    if (trained) app_train_pause(a);
    snprintf(n, sizeof n, "%d", trained ? a->ex.train.run.step : a->session->log.applied);
    const char *args[] = {n};
    toast_say(&a->toast, a->v.lang, trained ? "train.quit_ask" : a->session->log.applied == 1 ? "app.quit_ask1" : "app.quit_ask", 1, args,
              QUIT_ASK_SECONDS);
}

// Esc: out of fullscreen, else what is open closes (the modes before took theirs: the
// help, E's choice, the lab's typing and selection, the text box, the picker); it never
// quits, and says how to. (The page: the browser takes Esc for its own fullscreen.) An
// experiment's frame goes back to the stages, as A does (its row says so), in the page too.
void app_escape(App *a)
{
    if (viewkind_of(a->v.kind)->one_frame) {
        a->v.kind = viewkind_of(a->v.kind)->next;
        return;
    }
    if (a->opt->browser) return;
    if (SDL_GetWindowFlags(a->screen.win) & SDL_WINDOW_FULLSCREEN) {
        SDL_SetWindowFullscreen(a->screen.win, 0);
        return;
    }
    if (a->toast.left > 0.0) { // a notice: gone
        a->toast.left = 0.0;
        return;
    }
    app_toast(a, "app.esc_no_quit", NULL);
}

// Quitting asked (app_request_quit): S saves and quits (stays when the save fails), D
// discards the edits and quits, Esc (or N, C) stays; nothing else happens meanwhile.
bool app_quit_ask_key(App *a, const SDL_KeyboardEvent *k)
{
    if (!a->quit.ask) return false;
    SDL_Keycode sym = k->keysym.sym;
    if (sym == SDLK_s || sym == SDLK_d || sym == SDLK_ESCAPE || sym == SDLK_n || sym == SDLK_c) {
        a->quit.ask = false, a->toast.left = 0.0;
        if (sym == SDLK_d || (sym == SDLK_s && app_save_lesson(a))) a->quit.quit = true;
    }
    return true;
}

