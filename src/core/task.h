// task.h — a lesson's training task (issue 38 item 4): the data its training script draws,
// batch by batch, made again in C with the same numbers for the same seed.
//
// The scripts in lessons/ draw their batches from a torch.Generator (CPU: Mersenne Twister
// MT19937 seeded as manual_seed(seed)); TorchRng is that generator, and torch.rand (float32:
// the low 24 bits of a 32-bit draw · 2⁻²⁴) and torch.randint(lo, hi) (a 32-bit draw mod
// (hi − lo) + lo) are its two draws the scripts use, one element after another in row-major
// order. The kinds (the lesson's "task", lessons/README.md "Training"):
//   induction  train_induction.py's make_batch: per row a random order of the vocab
//              (torch.rand(B, V).argsort), a block length n = randint(2, 8) (at most length/2),
//              m = floor(rand · (length − 2n + 1)) letters, then the n letters repeated
//   reversal   train_textbook.py's: N = (length − 1)/2 letters randint(0, V − 1) (the vocab but
//              the separator, which is the last token), "|", the letters reversed, "|"
//   corpus     train_tiny_lm.py's: windows of length + 1 characters at randint(0, n − length − 1)
//              of the training text (the sayings of Debian's fortunes-min as the script
//              normalises them, every tenth held out), read from /usr/share/games/fortunes
// A batch is (B, length) input ids and (B, length) targets: the next token of each position.
#ifndef ATTNVIZ_TASK_H
#define ATTNVIZ_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct TorchRng {
    uint32_t s[624];
    int next;
} TorchRng;

void torch_rng_seed(TorchRng *r, uint64_t seed);
uint32_t torch_rng_u32(TorchRng *r);
float torch_rng_rand(TorchRng *r);                          // torch.rand's float32 in [0, 1)
int64_t torch_rng_randint(TorchRng *r, int64_t lo, int64_t hi); // torch.randint(lo, hi): lo … hi − 1

typedef enum TaskKind { TASK_NONE, TASK_INDUCTION, TASK_REVERSAL, TASK_CORPUS, TASK_KIND_COUNT } TaskKind;
extern const char *const TASK_KIND_NAMES[TASK_KIND_COUNT]; // "", "induction", "reversal", "corpus"

#define TASK_MAX_BATCH 512
#define TASK_MAX_LENGTH 1024
#define TASK_CORPUS_DIR "/usr/share/games/fortunes"

// What a lesson's "task" says (lesson_task.c reads and writes it).
typedef struct TaskSpec {
    TaskKind kind;                 // TASK_NONE: the lesson has no task
    int length;                    // tokens a training row reads (≤ the model's context)
    int batch;                     // rows a step
    uint64_t seed;                 // the data generator's (the script's manual_seed(SEED + 1))
} TaskSpec;

// The generator of a task for a vocabulary of n_vocab tokens (vocab: their strings).
typedef struct Task {
    TaskSpec spec;
    int n_vocab;
    TorchRng rng;
    int *text;                     // corpus: the training text's token ids
    size_t n_text;
} Task;

// A task's generator at its seed (spec->seed). A corpus task reads its text (the vocab must
// hold every character the normalised text keeps). False with one line in err naming `file`
// and "task" (a vocab that does not fit, the corpus missing: how to install it).
bool task_init(Task *t, const TaskSpec *spec, char *const *vocab, int n_vocab, const char *file, char *err,
               size_t err_len);
void task_free(Task *t);
// The next batch: ids and targets, spec.batch × spec.length each, row-major.
void task_batch(Task *t, int *ids, int *targets);

#endif
