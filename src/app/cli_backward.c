// cli_backward.c — --dump --backward: one training step's loss and gradients (backward.h)
// after the forward stages, in --dump's JSON; with --step, after training (optim.h).
#include "backward.h"
#include "cli.h"
#include "json_out.h"
#include "optim.h"
#include "session.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>

// What --step adds to the JSON: the optimizer, its losses and the weights it updated.
typedef struct StepReport {
    const OptimConfig *oc;
    const float *losses;   // oc->steps + 1
    const AttnWeights *w;  // the weights after training
} StepReport;

static void write_step(FILE *out, const StepReport *st)
{
    const OptimConfig *oc = st->oc;
    // (the settings as given: doubles, as Python holds them)
    fprintf(out, ", \"optimizer\": \"%s\", \"lr\": %.9g", optim_kind_name(oc->kind), oc->lr);
    if (oc->kind == OPTIM_SGD)
        fprintf(out, ", \"momentum\": %.9g", oc->momentum);
    else
        fprintf(out, ", \"beta1\": %.9g, \"beta2\": %.9g, \"eps\": %.9g", oc->beta1, oc->beta2, oc->eps);
    fprintf(out, ", \"weight_decay\": %.9g", oc->weight_decay);
    fprintf(out, ", \"steps\": %d, \"loss_before\": ", oc->steps);
    json_write_float(out, st->losses[0]);
    fputs(", \"losses\": [", out);
    for (int k = 0; k <= oc->steps; k++) {
        if (k) fputs(", ", out);
        json_write_float(out, st->losses[k]);
    }
    fputs("]", out);
}

// The JSON of --dump --backward for the trace tr and its gradients g (st: --step's, or NULL).
static int write_backward(FILE *out, Session *ses, const Trace *tr, const Grads *g, const StepReport *st, FILE *err)
{
    char title[LESSON_MAX_TEXT + 64];
    fputs("{\"title\": ", out);
    json_write_string(out, session_title(ses, LANG_EN, title, sizeof title));
    if (st) write_step(out, st);
    fputs(", \"loss\": ", out);
    json_write_float(out, g->loss);
    fprintf(out, ", \"n_targets\": %d, \"targets\": [", g->n_targets);
    for (int b = 0; b < tr->batch; b++) {
        fputs(b ? ", [" : "[", out);
        for (int l = 0; l < tr->len_q; l++) fprintf(out, l ? ", %d" : "%d", g->targets[b * tr->len_q + l]);
        fputs("]", out);
    }
    char name[GRAD_NAME_MAX];
    int stage, slot, layer, n = grads_count(g);
    if (st) { // the weights the steps changed, named as their gradients without "grad."
        fputs("], \"weights\": [", out);
        for (int k = 0, first = 1; k < n && !ferror(out); k++) {
            grads_item(g, tr, k, name, &stage, &slot, &layer);
            if (stage >= 0) continue;
            cli_dump_tensor(out, first, name + 5, attn_weight((AttnWeights *)&st->w[layer], slot));
            first = 0;
        }
    }
    fputs("], \"stages\": [", out);
    for (int i = 0; i < tr->n && !ferror(out); i++) cli_dump_tensor(out, i == 0, tr->stages[i].name, &tr->stages[i].t);
    for (int k = 0; k < n && !ferror(out); k++) cli_dump_tensor(out, false, name, grads_item(g, tr, k, name, &stage, &slot, &layer));
    fputs("\n]}\n", out);
    return cli_output_ok(out, "--dump --backward", err) ? 0 : 1;
}

int cli_dump_backward(const char *path, const SessionEdits *ed, FILE *out, FILE *err)
{
    char msg[LESSON_ERR_MAX + 200];
    Session *ses = session_open(path, ed, msg, sizeof msg);
    if (!ses) {
        utf8_fputs_line(err, msg);
        return 1;
    }
    const Trace *tr = &ses->trace;
    Grads g;
    grads_init(&g);
    int code = 1;
    if (attn_backward(&ses->lesson.cfg, ses->lesson.w, tr, ses->lesson.targets, &g, path, msg, sizeof msg))
        code = write_backward(out, ses, tr, &g, NULL, err);
    else
        utf8_fputs_line(err, msg);
    grads_free(&g);
    session_destroy(ses);
    return code;
}

int cli_train(const char *path, const SessionEdits *ed, const OptimConfig *oc, const char *save_path, bool dump,
              FILE *out, FILE *err)
{
    char msg[LESSON_ERR_MAX + 200];
    Session *ses = session_open(path, ed, msg, sizeof msg);
    if (!ses) {
        utf8_fputs_line(err, msg);
        return 1;
    }
    Lesson *ls = &ses->lesson;
    Trainer t;
    trainer_init(&t, oc);
    float *losses = malloc(((size_t)oc->steps + 1) * sizeof *losses);
    bool ok = losses && trainer_run(&t, &ls->cfg, ls->w, &ls->in, ls->targets, losses, path, msg, sizeof msg);
    if (!losses) snprintf(msg, sizeof msg, "%s: out of memory", path);
    // the new weights are "weights" (not a checkpoint's); the lesson's own narration, notes and
    // questions, written about the old numbers, are left out (session_save)
    ls->other_weights = true;
    if (ok && save_path) ok = session_save(ses, save_path, true, msg, sizeof msg);
    int code = ok ? 0 : 1;
    if (!ok) utf8_fputs_line(err, msg);
    StepReport st = {oc, losses, ls->w};
    if (ok && dump) code = write_backward(out, ses, &t.tr, &t.g, &st, err);
    free(losses);
    trainer_free(&t);
    session_destroy(ses);
    return code;
}
