// study.h — the study mode: predict, then reveal. At a stage with questions
// (quiz.h) the stage's result stays hidden until every question of the stage is
// answered, then the transition plays. Each answer gets its feedback at once (right or
// not, the answer, the derivation, a common slip named). Stages after an unanswered one cannot be
// reached (their operands would give the answer away): study_frontier.
//
// Plain state and pure functions, no SDL: the window feeds it keys and clicks
// (app/study_ui.c), render_frame draws it (chrome_draw_study), the tests drive it
// directly. Answers are kept by question id, so a language switch (the questions
// written anew) and a saved progress (app/progress.h) find them again.
#ifndef ATTNVIZ_STUDY_H
#define ATTNVIZ_STUDY_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"
#include "quiz.h"

#define STUDY_TEXT_MAX 64
#define STUDY_NOTE_MAX 256
// The generated questions and the lesson's own ("quiz" in the lesson file).
#define STUDY_MAX (QUIZ_MAX_QUESTIONS + LESSON_MAX_QUIZ)
#define STUDY_SEED 1u   // every student of a lesson gets the same questions (a worksheet matches)

typedef struct StudyAnswer {
    bool answered;
    bool right;
    bool gave_up;                 // N: shown the answer without answering (counts as not right)
    bool hinted;                  // H was used before answering
    char given[STUDY_TEXT_MAX];   // what was typed ("" when gave_up)
} StudyAnswer;

typedef struct Study {
    bool on;
    int n;                        // questions of the lesson, in stage order
    QuizQuestion q[STUDY_MAX];
    StudyAnswer a[STUDY_MAX];
    int stage;                    // the stage study_enter was called for
    int focus;                    // the question asked, or the answered one whose feedback shows; -1: none here
    int last;                     // the question answered last (its feedback reopens with its stage), -1: none
    char text[STUDY_TEXT_MAX];    // the answer being typed
    bool hint;                    // H: the operands of the asked cell are highlighted
    char note[STUDY_NOTE_MAX];    // why the typed answer was not read, or "" (study_submit)
} Study;

// (Re)writes the questions for tr and ls in lang (with the lesson's own when
// `authored`: not for an edited lesson, whose numbers they are not about): answers
// given before to the same question ids stay. Then study_enter(stage).
void study_load(Study *s, const Trace *tr, const Lesson *ls, Lang lang, bool authored, int stage);
// Forgets every answer.
void study_clear(Study *s);

// The questions of stage: the index of the first, and how many (0: none).
int study_stage_questions(const Study *s, int stage, int *count);
// Whether a question of stage is still unanswered (its result is hidden).
bool study_pending(const Study *s, int stage);
// The last stage that may be shown: the first with an unanswered question, or the
// last stage (n_stages − 1) when every question is answered. Only when s->on.
int study_frontier(const Study *s, int n_stages);
// The stage on screen is now `stage`: the focus goes to its first unanswered
// question, else to the question answered last when it is of this stage, else to its
// first question; typing and the hint start over.
void study_enter(Study *s, int stage);
// Whether the focus is a question still to answer.
bool study_asking(const Study *s);

// Enter: reads s->text as an answer to the focused question. False (and s->note says
// why) when the text is not an answer of the asked form; true when it was recorded. The
// focus stays on it: its feedback shows at once (study_next goes on).
bool study_submit(Study *s, Lang lang);
// Enter after a feedback: the focus to the stage's next unanswered question (after the
// focused one, round the stage); false when every question of the stage is answered.
bool study_next(Study *s);
// N: gives the focused question up (recorded as not right, the answer shown).
void study_give_up(Study *s);
// ↑ / ↓ while a feedback shows: the previous / next question of the stage (its feedback,
// or the question itself when it is not answered yet).
void study_focus_step(Study *s, int delta);
// A click on key column col of query row `row` (argmax: that key is the answer
// typed; masked keys: toggles it in the list). False when the question takes no click.
bool study_pick_key(Study *s, int row, int col);

// Right answers and answered questions of the lesson.
void study_score(const Study *s, int *right, int *answered);

// The frame of the focused question: its batch and head (-1: leave as is).
void study_question_slice(const Study *s, int *batch, int *head);

// The "Study" button in the status row, left of "What if…"; false when the row is too narrow.
bool study_button_rect(const Layout *L, Rect *out);

#endif
