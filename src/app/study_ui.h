// study_ui.h — the study mode in the window: T, the "Study" button or --study turn
// it on; the answer is typed (SDL_TEXTINPUT, any keyboard layout) or clicked (a key
// column), Enter checks it, H hints, N shows the answer, ↑ ↓ go through the
// feedback. The answers are kept in progress.json (progress.h) after every one, and
// a lesson opened again resumes at the stage it was left at.
//
// The state is study.h's (pure); this file is the SDL side and the progress file.
#ifndef ATTNVIZ_STUDY_UI_H
#define ATTNVIZ_STUDY_UI_H

#include <SDL.h>
#include <stdbool.h>

#include "layout.h"
#include "progress.h"
#include "session.h"
#include "study.h"
#include "view.h"

#define STUDY_MSG_MAX 1400

typedef struct StudyUI {
    Study st;
    Progress prog;
    bool prog_loaded;
    ProgressSaver *saver;          // writes progress.json off the frame (started at the first save)
    char key[PROGRESS_PATH_MAX];   // the lesson's key in the progress; "" while it is edited (not kept)
    char last_key[PROGRESS_PATH_MAX]; // the lesson st.last is about (study_ui_begin: the same lesson again)
    bool done_told;                // "every question answered" was said
    int shown_focus, shown_stage;  // the question whose (batch, head) the view was last given
    char msg[STUDY_MSG_MAX];       // a message for the toast (study_ui_take_message)
    bool msg_error, has_msg;
    bool too_long;                 // a typed character did not fit: Enter waits for Backspace
    Lang lang;                     // the language of the last key (the note of too_long)
} StudyUI;

StudyUI *study_ui_create(void);
void study_ui_destroy(StudyUI *u);

// Reads progress.json once (a corrupt one is set aside, with a message).
void study_ui_load_progress(StudyUI *u);

// Turns the study mode on for s (questions in lang, answers saved before): returns
// the stage to show, the one the student left the lesson at (else `stage`).
int study_ui_begin(StudyUI *u, const Session *s, Lang lang, int stage);
// Records the answers and the stage, and turns it off.
void study_ui_end(StudyUI *u, const Session *s, int stage);
// The questions anew in lang (the answers stay).
void study_ui_relang(StudyUI *u, const Session *s, Lang lang, int stage);
// Records the answers and the stage and has progress.json written, off the frame (a
// message when it fails, at a later study_ui_frame or study_ui_poll).
void study_ui_save(StudyUI *u, const Session *s, int stage);

// Once a frame: the stage that may be shown (≤ study_frontier: a later one would give an
// answer away), the focus on that stage's question, its (batch, head) in v when the focus
// moved, and v's study fields. *hold: the stage's result is hidden, its transition waits.
int study_ui_frame(StudyUI *u, const Session *s, int stage, View *v, bool *hold);

// Keys, text and clicks; true when the study mode used them.
bool study_ui_key(StudyUI *u, const Session *s, const SDL_KeyboardEvent *k, int stage, View *v);
bool study_ui_text(StudyUI *u, const char *text);
bool study_ui_press(StudyUI *u, const Layout *L, int x, int y);

// Takes the result of a save finished meanwhile (the message when it failed).
void study_ui_poll(StudyUI *u);

// The message for the toast, once (NULL when none).
const char *study_ui_take_message(StudyUI *u, bool *error);

#endif
