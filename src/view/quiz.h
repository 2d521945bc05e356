// quiz.h — "predict, then reveal": questions generated from a trace, so every
// lesson has them (shipped, edited, converted). Each asks about one part of one
// stage's result and carries the answer exactly as the trace holds it, the
// tolerance it is accepted within, and the derivation with the real numbers
// (the tooltip's text, explain.h). `attnviz --quiz` prints them as JSON; the
// window's study mode asks them stage by stage.
//
// Which kinds a stage asks is a fact of its recipe (StageRecipe.quiz, scene.c).
// The cell, batch and head say where the hint is: scene_highlight of the cell in
// the frame of (stage, batch, head) frames the operands it reads.
//
// Deterministic: the same trace, lesson, language and seed give the same
// questions. The choices (batch, head, row, column) come from splitmix64
// (Steele, Lea & Flood 2014; the generator lesson_init_value uses), one stream per
// stage and kind, seeded with seed ^ (0x9E3779B97F4A7C15 · (stage + 1)) ^
// (0xD1B54A32D192ED03 · (kind + 1)): what one question draws never moves another's.
//
// Pure view code: no SDL, no allocation (the questions go into the caller's array;
// the explanations need i18n_load for their text, like every string of the view).
#ifndef ATTNVIZ_QUIZ_H
#define ATTNVIZ_QUIZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lesson.h"
#include "scene.h" // QuizKind: which a stage asks is its recipe's
#include "trace.h"

#define QUIZ_MAX_QUESTIONS 40     // a lesson's questions (any lesson: bounded)
#define QUIZ_MAX_PER_STAGE 3
#define QUIZ_MAX_LIST 32          // numbers in one answer (a list of rows or keys, a shape)
#define QUIZ_VALUE_TOLERANCE 0.005f
#define QUIZ_ASK_DECIMALS 2       // a value's or a sum's question asks for it "to 2 decimals" (quiz.value, quiz.sum)


typedef struct QuizQuestion {
    char id[64];          // "attn-argmax-b0-h1-2": unique in the lesson's list, the same for a seed
    int stage;            // index into Trace.stages
    int batch, head;      // the slice asked about; -1: none (a shape; a stage without heads)
    QuizKind kind;
    int n_cell;           // 0 (the whole slice or tensor), 1 [row] or 2 [row, col], in the (batch, head) slice
    int cell[2];
    bool list;            // the answer is a list (a shape, rows, keys, [head, column]), else one number
    int n_answer;
    float answer[QUIZ_MAX_LIST]; // exactly the trace's value(s); indices and sizes as whole numbers
    float tolerance;      // |given − answer| ≤ tolerance accepts a number; 0 for indices, lists and shapes
    bool unordered;       // a list of indices whose order does not matter (rows, keys)
    int decimals;         // the digits after the point its question asks for (QUIZ_ASK_DECIMALS); -1: none said
    char question[512];
    char explanation[1536];
} QuizQuestion;

// The stable English name of a kind ("shape", "value", "argmax", "masked", "sum", "source").
const char *quiz_kind_name(QuizKind k);

// The questions of one stage (at most QUIZ_MAX_PER_STAGE, at most max): returns how
// many were written into out. ls (tokens, may be NULL) names queries and keys.
int quiz_stage(const Trace *tr, const Lesson *ls, Lang lang, uint64_t seed, int stage, QuizQuestion *out, int max);
// Every stage's questions in trace order, at most min(max, QUIZ_MAX_QUESTIONS).
int quiz_generate(const Trace *tr, const Lesson *ls, Lang lang, uint64_t seed, QuizQuestion *out, int max);

// The lesson's own questions ("quiz", checked by lesson_check_quiz), at most max:
// the text in lang (zh falls back to en), the answer as the author wrote it.
int quiz_authored(const Trace *tr, const Lesson *ls, Lang lang, QuizQuestion *out, int max);
// What a student is asked: the generated questions and, when `authored`, the
// lesson's own, in stage order (a stage's generated ones first). At most max.
int quiz_all(const Trace *tr, const Lesson *ls, Lang lang, uint64_t seed, bool authored, QuizQuestion *out, int max);
// The same, asking only about batch `batch` and query head `head` (a printed worksheet's
// slice; a shared K/V stage: the K/V head it reads; -1: any): an author's question about
// another slice is left out.
int quiz_all_in_slice(const Trace *tr, const Lesson *ls, Lang lang, uint64_t seed, bool authored, int batch, int head,
                      QuizQuestion *out, int max);
// An answer as its question asks for it: a shape "2 × 4 × 4", a list "1, 3", "(head,
// column)", a value or a sum with the question's decimals ("0.00", never "7.154e-21"),
// an author's number with the digits its tolerance asks.
void quiz_answer_text(const QuizQuestion *q, char *out, size_t n);

// Whether the n numbers given answer q: one number within the tolerance; a list
// equal element by element (as a set when q->unordered).
bool quiz_check(const QuizQuestion *q, const float *given, int n);
// The value a student gets computing along a tooltip's text (explain_cell, or its
// as-the-cells-show-them form): its sum as written (tip_bounds), then what stage applies to
// it — the FFN's relu / gelu / silu, or SwiGLU's product with the gate as the text writes
// it ("⊙ g[r,c] = s · g = h"). stage -1: the sum. False when the text has no such sum.
bool quiz_screen_value(const Trace *tr, int stage, const char *text, double *val);
// Why a wrong answer to a shape question is wrong, when it is a slip students make: the
// batch dimension left out ("You left out the batch dimension B=2"), the heads dimension
// left out (a 4-D shape), the right sizes in another order. "" otherwise (right, another
// kind, another mistake).
void quiz_shape_mistake(const QuizQuestion *q, const float *given, int n, Lang lang, char *out, size_t len);
// Reads a typed answer: numbers separated by spaces, commas, "x", "×" or inside
// ( ) / [ ] ("2x2x4x2", "(2, 4, 4)", "3", "-0.25"); false when it is not that.
bool quiz_parse_answer(const char *text, float *out, int max, int *n);

#endif
