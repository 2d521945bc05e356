// lesson.h — lesson files (JSON): parse, validate with JSON-path errors, and
// build the config, weights and inputs of one attention example. The only
// module that includes cJSON.
#ifndef ATTNVIZ_LESSON_H
#define ATTNVIZ_LESSON_H

#include <stdio.h>

#include "attention.h"
#include "attn_json.h"
#include "lang.h"
#include "task.h"

#define LESSON_ERR_MAX 1536

// Documented limits (README "Lesson format" → "Limits").
#define LESSON_MAX_FILE_BYTES (16u << 20)   // 16 MiB
// (the model's and tensors' limits: attn_json.h)
#define LESSON_MAX_NESTING 16
#define LESSON_MAX_VALUES (1u << 21)         // JSON values in one file (2,097,152), counted before parsing
#define LESSON_MAX_TEXT 4096                 // bytes of one title / narration / token
// All weights and all checkpoints together, in floats (64 MiB), counted from the model
// before any is read or generated (lessons/README.md, "Limits", says why this number).
#define LESSON_MAX_WEIGHT_FLOATS (1u << 24)


// A question the lesson's author adds to the generated ones ("quiz" in the file):
// asked at `stage` in the study mode, answered by a number or a list of numbers.
#define LESSON_MAX_QUIZ 16
#define LESSON_QUIZ_MAX_ANSWER 32
#define LESSON_QUIZ_MAX_QUESTION 500      // bytes (the study box; QuizQuestion.question holds 512)
#define LESSON_QUIZ_MAX_EXPLANATION 1500  // bytes (QuizQuestion.explanation holds 1536)
typedef struct LessonQuiz {
    char *id;                         // "authored-N" when the file gives none
    char *stage;                      // a stage name of the lesson's trace (lesson_check_quiz)
    char *question[LANG_COUNT];       // zh may be NULL (falls back to en)
    char *explanation[LANG_COUNT];    // both may be NULL
    bool list;                        // the answer is a list (written as an array)
    int n_answer;
    float answer[LESSON_QUIZ_MAX_ANSWER];
    float tolerance;                  // |given − answer| ≤ tolerance accepts a number
    bool has_tolerance;               // written in the file (else 0 for lists, 0.005 for a number)
    bool unordered;                   // a list whose order does not matter
    int batch, head;                  // the slice the hint shows; -1: not given
    int n_cell, cell[2];              // the cell in that slice the hint frames (0: none)
} LessonQuiz;

typedef struct Lesson {
    char *path;
    char *title[LANG_COUNT];          // zh may be NULL (falls back to en)
    char *description[LANG_COUNT];    // for authors; both NULL when absent, zh may be NULL
    AttnConfig cfg;
    AttnWeights w[LESSON_MAX_LAYERS]; // cfg.n_layers of them (one when n_layers ≤ 1)
    AttnInputs in;
    int batch, len_q, len_k;
    char **q_tokens;                  // len_q labels or NULL
    char **k_tokens;                  // len_k labels or NULL
    // A language model ("vocab"): its n_vocab token strings (cfg.vocab_size of them) and the
    // tokenizer of input.text (bpe: byte-pair encoding with the lesson's "merges", bpe.h;
    // words: split at spaces; else a character a token). The token labels are
    // lesson_vocab_label(in.ids[b, l]) (per batch: lesson_token_label).
    char **vocab;
    int n_vocab;
    // A vision transformer ("image", lesson_image.c): its cfg.n_classes class names (the
    // labels of logits and probs, lesson_vocab_label), else NULL.
    char **classes;
    bool word_tokens;
    struct Bpe *bpe;
    // "targets" (lesson_targets.c): (B, L) the token each position is trained to predict, -1:
    // not counted; NULL: the default, the input shifted by one (backward.h)
    int *targets;
    TaskSpec task;                    // "task" (lesson_task.c): the data its training draws; kind TASK_NONE: none
    bool typed;                       // its input is text typed in (not the file's): the narration is generated
                                      // (and the author's questions, about the file's input, are left out)
    // Checkpoints ("checkpoints"): the weights at n_checkpoints points of training, each
    // with its step and loss; the model computed is checkpoint `checkpoint` (the last when
    // the file has no "weights"), or -1: the file's "weights".
    int n_checkpoints;
    int checkpoint;
    bool other_weights;               // a checkpoint other than the file's default: the narration is generated
    int *ckpt_step;
    float *ckpt_loss;
    char **ckpt_weights;              // each checkpoint's "weights" as JSON text (as read: an "init" stays one), for lesson_write;
                                      // an entry is NULL while ckpt_trees holds it (lesson_checkpoint_json)
    struct LessonTrees *ckpt_trees;   // (NULL or) each checkpoint's "weights" as read, kept unprinted (printing
                                      // them all took ~40 % of loading induction-heads.json), shared by the clones
    // Narration keyed by stage or step name ("scores", "projection", ...).
    int n_steps;
    char **step_keys;
    char **step_text[LANG_COUNT];
    int *step_head;                   // the head a step's narration is about ("head"), the one its stage opens on; -1: any
    // The author's questions ("quiz"), next to the generated ones (quiz.h).
    int n_quiz;
    LessonQuiz *quiz;
    // The teacher's notes ("notes"), keyed the same way; shown only in the presenter window.
    int n_notes;
    char **note_keys;
    char **note_text[LANG_COUNT];
} Lesson;

// Loads and validates path. On failure returns false and writes one line
// "path: json.path: what was expected" into err (no trailing newline).
bool lesson_load(Lesson *ls, const char *path, char *err, size_t err_len);
// What the command line or the window sets instead of the file: a language model's input
// typed (--text, the window's text box; NULL: the file's), tokenized as the lesson says,
// an error in it named "--text: input.text: ...", ls->typed set, a lesson without a vocab
// refused; the checkpoint whose weights are computed (--checkpoint, the training slider;
// has_checkpoint false: the file's default), one out of range refused naming --checkpoint.
typedef struct LessonOverride {
    const char *text;
    bool has_checkpoint;
    int checkpoint;
} LessonOverride;
#define LESSON_MAX_CHECKPOINTS 64
// ls (a language model) with `text` as its input instead: tokenized, batch 1, its mask
// (causal, sliding window or none) built for the new length, the author's questions left
// out, typed set — without reading the file again (the window's text box, as you type).
// False with one line "--text: input.text: ..." in err, ls unchanged.
bool lesson_retext(Lesson *ls, const char *text, char *err, size_t err_len);
// ls (a language model) with one token more in each batch, next[b] after batch b's (the
// window's generate keys): its mask of the new length, the author's questions left out,
// typed set. False with one line "generate: input.ids: …" in err (past the model's
// context: "… longer than the model's context (model.max_positions N)"), ls unchanged.
bool lesson_append(Lesson *ls, const int *next, char *err, size_t err_len);
bool lesson_load_with(Lesson *ls, const char *path, const LessonOverride *o, char *err, size_t err_len);
// Same, from a buffer in memory (name is used in messages).
bool lesson_parse(Lesson *ls, const char *name, const char *text, size_t len, char *err,
                  size_t err_len);
// lesson_parse with what the command line or the window sets instead (lesson_load_with).
bool lesson_parse_with(Lesson *ls, const char *name, const char *text, size_t len, const LessonOverride *o, char *err,
                       size_t err_len);
void lesson_free(Lesson *ls);
// Checkpoint k's "weights" as JSON text (what lesson_write writes), printed from the tree
// read when it was not printed yet; NULL when out of memory. The caller frees it.
char *lesson_checkpoint_json(const Lesson *ls, int k);
// Frees the checkpoints' steps, losses and weights (lesson_free; train.c replaces them).
void lesson_free_checkpoints(Lesson *ls);
// The checkpoints' weights as read (Lesson.ckpt_trees): read-only once loaded, so a clone
// shares them (share: one more owner; release: one less, the last frees them; NULL is fine).
typedef struct LessonTrees {
    _Atomic int refs;
    int n;
    struct cJSON *tree[]; // n (an entry NULL when ckpt_weights holds its text)
} LessonTrees;
LessonTrees *lesson_trees_share(LessonTrees *t);
void lesson_trees_release(LessonTrees *t);

// The titles of path's lesson from its first max bytes alone (for the lesson
// picker: no full parse, memory bounded by max): path must be a regular file
// (opened without blocking); *size is its size. True with title[LANG_EN] (and
// title[LANG_ZH], may be NULL) newly allocated when the top-level "title" lies
// within max bytes and is valid; false otherwise, with one line in err when the
// file cannot be opened or read (err empty when the title is just not there).
bool lesson_peek_title(const char *path, size_t max, char *title[LANG_COUNT], size_t *size, char *err,
                       size_t err_len);

const char *lesson_title(const Lesson *ls, Lang lang);
// The label of position l of batch b: a language model's token (its vocab string), the
// lesson's tokens (query side), or NULL when the lesson has none.
// Token id's label as drawn (a BPE token's spaces as ␣; else its vocab string), NULL out of range.
const char *lesson_vocab_label(const Lesson *ls, int id);
const char *lesson_token_label(const Lesson *ls, int b, int l);

// The sizes of the forward pass ls would run (its model and its input as they are now),
// checked before it runs: no stage over LESSON_MAX_ELEMS elements (the scores, heads,
// feed-forward layer, hidden states, a language model's logits, FlashAttention's
// accumulator), N layers' together within the limit of one. False with one line
// "FILE: PATH: the logits would have B·L·V = … elements, over the limit of …" in err;
// PATH is input_path ("input"; the text box's "input.text") when the input is the cause.
bool lesson_check_size(const Lesson *ls, const char *file, const char *input_path, char *err, size_t err_len);
// The weight budget: cfg's weights (attn_json_weight_floats) times the sets of them the
// file holds (each checkpoint, and "weights"), at most LESSON_MAX_WEIGHT_FLOATS; checked
// before any is generated. False with one line naming file and "weights" or "checkpoints".
bool lesson_check_weights(const AttnConfig *cfg, int n_checkpoints, bool has_weights, const char *file, char *err,
                          size_t err_len);

struct Trace;
// The reader's parts in other files: a text ("…" or {"en": …, "zh": …}) at path into out
// (multiline: newlines allowed); "quiz" (lesson_quiz.c) into ls->quiz. False with the error in c.
bool lesson_read_text(JsonCtx *c, const struct cJSON *j, const char *path, bool multiline, char *out[LANG_COUNT]);
bool lesson_read_quiz(JsonCtx *c, const struct cJSON *j, Lesson *ls);
// "targets" (lesson_targets.c) into ls->targets (after the input: its batch and length), and
// written by lesson_write when the lesson has them.
bool lesson_read_targets(JsonCtx *c, const struct cJSON *j, Lesson *ls);
// "checkpoints" (lesson_checkpoints.c): every checkpoint's step, loss and weights (checked),
// the model's weights from the one computed (the override's, else "weights", else the last).
bool lesson_read_checkpoints(JsonCtx *c, const struct cJSON *root, const LessonOverride *o, Lesson *ls);
void lesson_write_targets(FILE *f, const Lesson *ls);
// "task" (lesson_task.c) into ls->task, written by lesson_write when the lesson has one.
bool lesson_read_task(JsonCtx *c, const struct cJSON *j, Lesson *ls);
// "image" (lesson_image.c): a vision transformer's image size, patch and classes (from the
// root; none: not one), its "input" object's images, written by lesson_write.
bool lesson_read_image(JsonCtx *c, const struct cJSON *root, Lesson *ls);
bool lesson_read_image_input(JsonCtx *c, const struct cJSON *in, Lesson *ls);
void lesson_write_image(FILE *f, const Lesson *ls);
void lesson_write_task(FILE *f, const Lesson *ls);
// Whether the authored questions fit the lesson's trace: each stage exists, the batch,
// head and cell lie inside that stage's tensor. False with one line in err
// ("path: quiz[1].stage: ...") otherwise. session_create calls it after the forward pass.
bool lesson_check_quiz(const Lesson *ls, const struct Trace *tr, char *err, size_t err_len);
// Narration for a stage name or step name; NULL when the lesson has none.
const char *lesson_step_text(const Lesson *ls, const char *key, Lang lang);
// The teacher's notes for a stage or step name; NULL when the lesson has none.
const char *lesson_note_text(const Lesson *ls, const char *key, Lang lang);
// The narration (notes) for stage s of tr: keyed by its name ("l1.attn"), its layer's
// step ("l1.softmax"), its name in any layer ("attn"), or its step ("softmax"), the
// first the lesson has; NULL when none.
const char *lesson_stage_text(const Lesson *ls, const struct Trace *tr, int s, Lang lang);
// The head stage s's narration is about (its text's "head"), the head the stage opens on;
// -1 when the text names none (or there is no text).
int lesson_stage_head(const Lesson *ls, const struct Trace *tr, int s);
const char *lesson_stage_note(const Lesson *ls, const struct Trace *tr, int s, Lang lang);

// The weight tensors of a lesson, by slot: w_q b_q w_k b_k w_v b_v w_o b_o ffn_w1 ffn_b1
// ffn_w2 ffn_b2 norm_weight norm_bias ffn_norm_weight ffn_norm_bias ffn_w_gate ffn_b_gate sinks
// (the JSON names).
#define LESSON_N_WEIGHTS 47
const char *lesson_weight_name(int i);
Tensor *lesson_weight(AttnWeights *w, int i);

// Writes ls as a complete lesson file (every number explicit: no init, no arange; the
// checkpoints' weights as the file gave them), which lesson_load reads back to the same
// numbers bit for bit. "weights" are written unless they are the default checkpoint's
// (checkpoint = the last, not other_weights: the file had none). False on a write error.
bool lesson_write(const Lesson *ls, FILE *f);
// ls's model's weights w as the JSON object a checkpoint's "weights" holds (every number
// explicit, %.9g): newly allocated, NULL when out of memory.
char *lesson_weights_json(const Lesson *ls, const AttnWeights *w);
// Writes ls to path atomically: a temporary file created exclusively beside it, then
// renamed over it. False with one line in err ("path: cannot write: ...").
bool lesson_save(const Lesson *ls, const char *path, char *err, size_t err_len);
// The same, but never replacing a file: false with errno EEXIST (and the message)
// when path exists, even when it appeared while writing.
bool lesson_save_new(const Lesson *ls, const char *path, char *err, size_t err_len);


#endif
