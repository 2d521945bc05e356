// cli.h — the headless commands: --check, --dump, --print (no display needed).
#ifndef ATTNVIZ_CLI_H
#define ATTNVIZ_CLI_H

#include <stdbool.h>
#include <stdio.h>

struct SessionEdits;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
// Prints one error line: control characters and bytes that are not UTF-8 in
// it (from a file name, an argument) are escaped, so it stays one line.
void cli_error(FILE *err, const char *fmt, ...);
// Flushes out; false (and one line on err naming `what` and the cause) when a
// write to it failed: a full disk or /dev/full is an error, not exit 0.
bool cli_output_ok(FILE *out, const char *what, FILE *err);

// Validates each lesson; prints "ok: PATH" or the one-line error. Returns 0 if all valid, 1 otherwise.
int cli_check(int n, char **paths, FILE *out, FILE *err);
// --set edits (ed, may be NULL) are applied first.
// Writes every stage as JSON: {"title": ..., "stages": [{"name", "shape", "data"}]}.
int cli_dump(const char *path, const struct SessionEdits *ed, FILE *out, FILE *err);
// The same JSON for a session already open (its edits applied); stops at a failed write.
struct Session;
void cli_dump_session(const struct Session *ses, FILE *out);
// One {"name", "shape", "data"} object of that JSON (after a comma and a newline unless first).
struct Tensor;
void cli_dump_tensor(FILE *out, bool first, const char *name, const struct Tensor *t);
// --dump --backward (cli_backward.c): the same JSON with the loss, the targets and after the
// stages every gradient of backward.h ("grad.logits", …, "grad.l0.w_q"). Exit 1 with one
// line for a bad lesson or one that is not a language model.
int cli_dump_backward(const char *path, const struct SessionEdits *ed, FILE *out, FILE *err);
// --step (optim.h's spec, parsed): oc->steps steps of training the lesson's weights, then the
// lesson with the new weights saved to save_path (NULL: not) and/or (dump) the JSON of
// --dump --backward at the new weights, with "optimizer", its settings, "loss_before",
// "losses" (before each step, then after the last) and "weights" (those the steps changed).
// Exit 1 with one line, nothing written, for a lesson that cannot train or a step that makes
// a number infinite.
struct OptimConfig;
int cli_train(const char *path, const struct SessionEdits *ed, const struct OptimConfig *oc, const char *save_path,
              bool dump, FILE *out, FILE *err);
// --train STEPS --save FILE: the lesson's model trained on its "task" (train.h) with oc (NULL:
// adamw at torch's defaults), seed (has_seed) the data generator's instead of the task's; a
// line per checkpoint on out (the step, the batch's loss, the lr, the held-out loss, seconds),
// FILE the trained lesson with its checkpoints (atomically). Exit 1 with one line on err for a
// lesson that cannot train (no task, no vocab), or a step that makes a number not finite (the
// step and the stage named; FILE then holds the weights before that step).
typedef struct CliTrain {
    const char *path;
    const struct SessionEdits *edits;
    const struct OptimConfig *oc;
    int steps;
    bool has_seed;
    unsigned long long seed;
    const char *save_path;
} CliTrain;
int cli_train_task(const CliTrain *c, FILE *out, FILE *err);
// Prints one stage like a PyTorch tensor print. Exit 1 for a bad lesson, 2 for an unknown stage.
int cli_print(const char *stage, const char *path, const struct SessionEdits *ed, FILE *out, FILE *err);
// Writes the study mode's questions (quiz.h) of the lesson in lang (a Lang) for seed as a
// JSON array: [{"id", "stage", "batch", "head", "kind", "cell", "question", "answer",
// "tolerance", "explanation"}]. Exit 1 for a bad lesson or missing assets.
int cli_quiz(const char *path, const struct SessionEdits *ed, int lang, unsigned long long seed, FILE *out,
             FILE *err);

// Writes the application icon (icon.h) to path: an SVG when the name ends in
// .svg, else a size×size PNG. Exit 0, or 1 with one line on err.
int cli_icon(const char *path, int size, FILE *err);

// --compare SPEC (cli_compare.c, compare.h): A = the lesson with ed, B = A changed by spec;
// JSON {"a", "b", "spec", "n_identical", "n_differ", "n_only", "summary" (in lang), "stages": [{"name",
// "in", "identical", "n_diff", "max_abs_delta", "text", and with data (--dump) "delta"}]}. Exit 1
// with one line for a bad lesson, a B that cannot be made, or stages of other shapes.
int cli_compare(const char *path, const struct SessionEdits *ed, const char *spec, bool data, int lang, FILE *out,
                FILE *err);
// That JSON for A, B and their compare c (the window's, in the page: attnviz.compare()); the
// interface strings loaded.
struct Compare;
void cli_compare_write(FILE *out, const struct Session *a, const struct Session *b, const struct Compare *c,
                       const char *spec, bool data, int lang);
// --experiment ablation|ablation-mean|logit-lens (experiment.h) as JSON, with a "summary" of the
// numbers in words in lang. Exit 1 with one line for a lesson it does not apply to (not a language
// model, flash or decoding for an ablation).
int cli_experiment(const char *path, const struct SessionEdits *ed, const char *name, const char *corrupt, int lang,
                   FILE *out, FILE *err);

#endif
