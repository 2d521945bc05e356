// bench_train — training in C (src/core/train.c, issue 38 item 4), on one thread
// (parallel_set_threads(1)): a training step of the tiny character model (tiny-lm-fortunes:
// 64 windows of 20 characters of its corpus, forward, backward and AdamW; issue 38's goal
// ≤ 10 ms; it needs fortunes-min, else the row says so), and training the induction lesson's
// model from the script's initial weights (checkpoint 0, Adam lr 3e-3 with the script's cosine
// decay) until the induction head has formed: the held-out loss (every 25 steps) below 1.6,
// which the script's run passes between steps 250 and 400 (goal ≤ 60 s).
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_common.h"
#include "parallel.h"
#include "train.h"

#define REPS 41

static bool load(Lesson *ls, const char *path, int checkpoint, char *err, size_t n)
{
    const LessonOverride o = {NULL, true, checkpoint};
    if (lesson_load_with(ls, path, checkpoint >= 0 ? &o : NULL, err, n)) return true;
    fprintf(stderr, "bench_train: %s\n", err);
    return false;
}

static int step_row(void)
{
    Lesson ls;
    char err[LESSON_ERR_MAX];
    if (access(TASK_CORPUS_DIR "/fortunes", R_OK) != 0) {
        printf("| %-48s | %26s | (fortunes-min is not installed) |\n", "train: tiny-lm-fortunes step", "");
        return 0;
    }
    if (!load(&ls, "lessons/tiny-lm-fortunes.json", -1, err, sizeof err)) return 1;
    OptimConfig oc;
    optim_parse(&oc, "adamw:lr=3e-3,weight_decay=0.01", "--step", err, sizeof err);
    TrainRun r;
    if (!train_start(&r, &ls, &oc, 1000, false, 0, ls.path, err, sizeof err)) {
        fprintf(stderr, "bench_train: %s\n", err);
        return 1;
    }
    double t[REPS];
    for (int k = -3; k < REPS; k++) { // (3 to warm up)
        const double t0 = bench_now();
        if (!train_step(&r, &ls, err, sizeof err)) {
            fprintf(stderr, "bench_train: %s\n", err);
            return 1;
        }
        if (k >= 0) t[k] = (bench_now() - t0) * 1e3;
    }
    bench_row("train: tiny-lm-fortunes step (64×20, AdamW)", t, REPS, 10.0, "ms", 1);
    train_free(&r);
    lesson_free(&ls);
    return 0;
}

static int drop_row(void)
{
    Lesson ls;
    char err[LESSON_ERR_MAX];
    if (!load(&ls, "lessons/induction-heads.json", 0, err, sizeof err)) return 1;
    OptimConfig oc;
    optim_parse(&oc, "adamw:lr=3e-3,weight_decay=0,cosine=6000", "--step", err, sizeof err);
    TrainRun r;
    if (!train_start(&r, &ls, &oc, 6000, false, 0, ls.path, err, sizeof err)) {
        fprintf(stderr, "bench_train: %s\n", err);
        return 1;
    }
    const double t0 = bench_now();
    float held = 99.0f;
    while (held >= 1.6f && r.step < 6000) {
        if (!train_step(&r, &ls, err, sizeof err)) {
            fprintf(stderr, "bench_train: %s\n", err);
            return 1;
        }
        if (r.step % 25 == 0 && !train_checkpoint(&r, &ls, &held, err, sizeof err)) return 1;
    }
    double s[1] = {bench_now() - t0};
    bench_info("train: induction steps to its loss drop (< 1.6)", r.step, "");
    bench_row("train: induction to its loss drop (one core)", s, 1, 60.0, "s", 1);
    train_free(&r);
    lesson_free(&ls);
    return 0;
}

int main(void)
{
    parallel_set_threads(1);
    return step_row() || drop_row();
}
