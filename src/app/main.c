// main.c — the command line (args.c) checked in full, then one command: the
// headless ones, or the window.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "assets.h"
#include "cli.h"
#include "describe.h"
#include "expview.h"
#include "tensor.h"

// The last flush and close of stdout, for the commands that write there: a
// failed write (a full disk, /dev/full) exits 1 with one line, never 0.
static int finish_stdout(int code, const char *what)
{
    bool failed = ferror(stdout) != 0;
    errno = 0;
    if (fflush(stdout) != 0) failed = true;
    int e = errno;
    if (fclose(stdout) != 0 && !failed) failed = true, e = errno;
    if (failed && code == 0) {
        cli_error(stderr, "attnviz: %s: cannot write the output: %s", what, e ? strerror(e) : "write error");
        return 1;
    }
    return code;
}

// --save FILE: the (edited) lesson written; false after one line on stderr.
static bool save(const Args *a)
{
    char msg[LESSON_ERR_MAX + 200];
    Session *ses = session_open(a->opt.lesson_path, &a->edits, msg, sizeof msg);
    bool ok = ses && session_save(ses, a->save_path, true, msg, sizeof msg);
    if (!ok) cli_error(stderr, "%s", msg);
    session_destroy(ses);
    return ok;
}

static int run(Args *a)
{
    AppOptions *o = &a->opt;
    switch (a->cmd) {
    case CMD_HELP: args_usage(stdout); return finish_stdout(0, "--help");
    case CMD_VERSION:
        printf("attnviz %s\ncore kernels: %s\n", ATTNVIZ_VERSION, tensor_kernels());
        return finish_stdout(0, "--version");
    case CMD_ICON: return cli_icon(a->icon_path, a->icon_size, stderr);
    case CMD_CHECK: return finish_stdout(cli_check(a->n_lessons, a->lessons, stdout, stderr), "--check");
    default: break;
    }
    if (a->train_steps) { // train on the lesson's task, then save
        const CliTrain ct = {o->lesson_path, &a->edits, a->has_step ? &a->step : NULL, a->train_steps, a->has_seed,
                             a->seed, a->save_path};
        return finish_stdout(cli_train_task(&ct, stdout, stderr), "--train");
    }
    if (a->has_step) // train first, then save and/or dump the new weights
        return finish_stdout(cli_train(o->lesson_path, &a->edits, &a->step, a->save_path, a->cmd == CMD_DUMP, stdout,
                                       stderr), "--step");
    if (a->save_path) {
        if (!save(a)) return 1;
        if (a->cmd == CMD_WINDOW) return 0; // --save alone: saved, done
    }
    if (a->compare && a->cmd != CMD_EXPORT) // --dump or --describe (args.c)
        return finish_stdout(cli_compare(o->lesson_path, &a->edits, a->compare, a->cmd == CMD_DUMP, o->lang, stdout,
                                         stderr), a->cmd == CMD_DUMP ? "--dump" : "--describe");
    switch (a->cmd) {
    case CMD_EXPERIMENT:
        return finish_stdout(cli_experiment(o->lesson_path, &a->edits, a->experiment, a->corrupt, o->lang, stdout, stderr), "--experiment");
    case CMD_DUMP:
        return finish_stdout((a->backward ? cli_dump_backward : cli_dump)(o->lesson_path, &a->edits, stdout, stderr),
                             "--dump");
    case CMD_PRINT:
        return finish_stdout(cli_print(a->print_stage, o->lesson_path, &a->edits, stdout, stderr), "--print");
    case CMD_QUIZ:
        return finish_stdout(cli_quiz(o->lesson_path, &a->edits, o->lang, a->seed, stdout, stderr), "--quiz");
    case CMD_DESCRIBE:
        if (a->experiment)
            return finish_stdout(describe_run_experiment(o->lesson_path, o->font_path, &a->edits, (Lang)o->lang, a->ex.batch,
                                                         o->width, o->height, o->projector, a->experiment, a->corrupt,
                                                         stdout, stderr),
                                 "--describe");
        return finish_stdout(describe_run(o->lesson_path, o->font_path, &a->edits, (Lang)o->lang, a->ex.batch,
                                          a->ex.head_set ? a->ex.head : -1,
                                          a->ex.loop, o->width, o->height, o->projector, o->presenter ? DESCRIBE_PRESENTER : (int)o->view, stdout,
                                          stderr),
                             "--describe");
    case CMD_HANDOUT: {
        HandoutOptions ho = {a->handout_path, o->lesson_path, o->font_path, (Lang)o->lang, a->paper,
                             a->ex.batch, a->ex.head, &a->edits, a->worksheet, a->ex.head_set};
        return finish_stdout(handout_run(&ho), "--handout");
    }
    case CMD_EXPORT: {
        ExportOptions *ex = &a->ex;
        ex->dir = a->export_dir;
        ex->lesson_path = o->lesson_path;
        ex->font_path = o->font_path;
        ex->width = o->width, ex->height = o->height;
        ex->lang = (Lang)o->lang;
        ex->edits = &a->edits;
        ex->projector = o->projector;
        ex->compare = a->compare;
        ex->experiment = a->experiment, ex->corrupt = a->corrupt; // (one frame, of its view)
        if (a->experiment) ex->view = expview_kind(a->experiment);
        return finish_stdout(export_run(ex), "--export");
    }
    default: break;
    }
    // the window; no LESSON: the default one beside the assets (installed, or the checkout's)
    static char default_path[1200];
    if (!o->lesson_path) {
        if (!assets_default_lesson(default_path, sizeof default_path)) {
            cli_error(stderr, "%s", default_path);
            return 1;
        }
        o->lesson_path = default_path;
    }
    return app_run(o);
}

int main(int argc, char **argv)
{
    // Over a file-size limit (ulimit -f) a write fails with EFBIG and is reported
    // (export, S, E), instead of SIGXFSZ killing the process mid-file.
    signal(SIGXFSZ, SIG_IGN);
    Args a;
    int code = args_parse(&a, argc, argv, stderr);
    if (code == 0) code = run(&a);
    args_free(&a);
    return code;
}
