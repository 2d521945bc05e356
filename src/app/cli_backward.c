// cli_backward.c — --dump --backward: one training step's loss and gradients (backward.h)
// after the forward stages, in --dump's JSON.
#include "backward.h"
#include "cli.h"
#include "json_out.h"
#include "session.h"
#include "utf8.h"

#include <stdio.h>

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
    if (!attn_backward(&ses->lesson.cfg, ses->lesson.w, tr, ses->lesson.targets, &g, path, msg, sizeof msg)) {
        utf8_fputs_line(err, msg);
        session_destroy(ses);
        return 1;
    }
    char title[LESSON_MAX_TEXT + 64];
    fputs("{\"title\": ", out);
    json_write_string(out, session_title(ses, LANG_EN, title, sizeof title));
    fputs(", \"loss\": ", out);
    json_write_float(out, g.loss);
    fprintf(out, ", \"n_targets\": %d, \"targets\": [", g.n_targets);
    for (int b = 0; b < tr->batch; b++) {
        fputs(b ? ", [" : "[", out);
        for (int l = 0; l < tr->len_q; l++) fprintf(out, l ? ", %d" : "%d", g.targets[b * tr->len_q + l]);
        fputs("]", out);
    }
    fputs("], \"stages\": [", out);
    for (int i = 0; i < tr->n && !ferror(out); i++) cli_dump_tensor(out, i == 0, tr->stages[i].name, &tr->stages[i].t);
    for (int k = 0, n = grads_count(&g); k < n && !ferror(out); k++) {
        char name[GRAD_NAME_MAX];
        int stage, slot, layer;
        const Tensor *t = grads_item(&g, tr, k, name, &stage, &slot, &layer);
        cli_dump_tensor(out, false, name, t);
    }
    fputs("\n]}\n", out);
    grads_free(&g);
    session_destroy(ses);
    return cli_output_ok(out, "--dump --backward", err) ? 0 : 1;
}
