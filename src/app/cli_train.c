// cli_train.c — --train STEPS: a lesson's model trained on its task in C (train.h), the loss
// printed at every checkpoint, the trained lesson (its new weights and the checkpoints of this
// training) written to --save's FILE atomically.
#include "cli.h"
#include "session.h"
#include "train.h"
#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

// The checkpoint of the step just taken, and its line on out; false with err set.
static bool checkpoint(TrainRun *r, Lesson *ls, double t0, FILE *out, char *err, size_t n)
{
    float held;
    if (!train_checkpoint(r, ls, &held, err, n)) return false;
    char hb[32]; // (a step that broke the weights: "not finite", as the error line after it says, not "-nan")
    if (isfinite(held)) snprintf(hb, sizeof hb, "%.4f", (double)held);
    else snprintf(hb, sizeof hb, "not finite");
    if (r->step == 0)
        fprintf(out, "step %6d                        held-out loss %s\n", 0, hb);
    else
        fprintf(out, "step %6d  loss %.4f  lr %.3g  held-out loss %s  (%.1f s)\n", r->step,
                (double)r->losses[r->step - 1], optim_lr_at(&r->oc, r->step - 1), hb, now_s() - t0);
    fflush(out);
    return true;
}

int cli_train_task(const CliTrain *c, FILE *out, FILE *err)
{
    char msg[LESSON_ERR_MAX + 300];
    Session *ses = session_open(c->path, c->edits, msg, sizeof msg);
    if (!ses) {
        utf8_fputs_line(err, msg);
        return 1;
    }
    Lesson *ls = &ses->lesson;
    OptimConfig oc;
    if (c->oc)
        oc = *c->oc;
    else
        optim_parse(&oc, "adamw", "--step", msg, sizeof msg);
    TrainRun r;
    if (!train_start(&r, ls, &oc, c->steps, c->has_seed, c->seed, c->path, msg, sizeof msg)) {
        utf8_fputs_line(err, msg);
        session_destroy(ses);
        return 1;
    }
    fprintf(out, "training %s: %s, lr %.3g%s, %d steps of %d × %d tokens (task %s, seed %llu)\n", c->path,
            optim_kind_name(oc.kind), oc.lr, oc.cosine ? " with a cosine decay" : "", c->steps, r.task.spec.batch,
            r.task.spec.length, TASK_KIND_NAMES[r.task.spec.kind], (unsigned long long)r.task.spec.seed);
    const double t0 = now_s();
    bool ok = checkpoint(&r, ls, t0, out, msg, sizeof msg), broke = false;
    while (ok && r.step < c->steps) {
        if (!train_step(&r, ls, msg, sizeof msg)) {
            // not finite: the weights before the step are back; they are saved as the last checkpoint
            utf8_fputs_line(err, msg);
            broke = true;
            ok = train_checkpoint(&r, ls, NULL, msg, sizeof msg);
            break;
        }
        if (train_at_checkpoint(&r)) ok = checkpoint(&r, ls, t0, out, msg, sizeof msg);
    }
    ok = ok && train_apply(&r, ls, msg, sizeof msg) && session_save(ses, c->save_path, true, msg, sizeof msg);
    if (ok)
        fprintf(out, "%s: the lesson trained %d step%s, %d checkpoints%s\n", c->save_path, r.step, r.step == 1 ? "" : "s",
                r.n_ckpt, broke ? " (the weights before the step that broke them)" : "");
    else
        utf8_fputs_line(err, msg);
    train_free(&r);
    session_destroy(ses);
    return ok && !broke ? 0 : 1;
}
