// args.h — the command line (getopt_long, GNU style): every option in any order,
// before or after the command and its operands ("attnviz --quiz --lang zh L",
// "attnviz L --describe"); "--" ends the options. Everything is parsed and every
// combination checked before anything is done: a usage error writes nothing.
#ifndef ATTNVIZ_ARGS_H
#define ATTNVIZ_ARGS_H

#include <stdbool.h>
#include <stdio.h>

#include "app.h"
#include "export.h"
#include "handout.h"
#include "optim.h"
#include "session.h"

#define ATTNVIZ_VERSION "0.1.0"
#define DEFAULT_LESSON_NAME "arange-2x4x4.json"

typedef enum {
    CMD_WINDOW, CMD_CHECK, CMD_DUMP, CMD_PRINT, CMD_DESCRIBE, CMD_QUIZ, CMD_HANDOUT, CMD_EXPORT, CMD_ICON,
    CMD_EXPERIMENT,
    CMD_HELP, CMD_VERSION
} Command;

typedef struct Args {
    Command cmd;
    AppOptions opt;              // lesson_path: the LESSON operand (NULL: none given)
    ExportOptions ex;            // --format, --animate, --fps, --stage, --batch, --head
    const char *export_dir, *handout_path, *icon_path, *print_stage, *save_path;
    const char *compare;       // --compare SPEC (compare.h): B, with --dump, --describe
    const char *experiment;    // --experiment NAME: ablation, ablation-mean, logit-lens, logit-attribution, patching
    const char *corrupt;       // --corrupt TEXT: patching's corrupted text
    Paper paper;
    bool worksheet;            // --handout … --worksheet
    bool backward;             // --dump --backward: the loss and the gradients too
    bool has_step;             // --step SPEC: train the weights first (optim.h), then --dump --backward / --save
    OptimConfig step;
    int train_steps;           // --train STEPS (0: not given): train on the lesson's task, then --save
    int icon_size;
    unsigned long long seed;
    bool has_seed;               // --seed given
    char **lessons;              // the LESSON operands (--check takes several)
    int n_lessons;
    const char **sets;           // --set KEY=VALUE, in order
    int n_sets;
    SessionEdits edits;
} Args;

// Parses argv into a (argv is permuted, as getopt_long does). 0 when every option
// is valid and they go together; else 2 after one line on err (a usage error).
int args_parse(Args *a, int argc, char **argv, FILE *err);
// Frees what args_parse allocated.
void args_free(Args *a);

void args_usage(FILE *f);

#endif
