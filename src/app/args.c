// args.c — the command line (see args.h).
#define _GNU_SOURCE // getopt_long
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "compare.h"

void args_usage(FILE *f)
{
    fputs("usage: attnviz [options] [LESSON]         open LESSON (default: the installed lessons/" DEFAULT_LESSON_NAME ")\n"
          "                                          in a window\n"
          "       attnviz --check LESSON...          validate lessons (exit 0 if all are valid)\n"
          "       attnviz --dump LESSON              every stage as JSON on stdout\n"
          "       attnviz --dump --backward LESSON   and one training step's loss and gradients (a language model)\n"
          "       attnviz --dump --backward --step adamw:lr=0.01[,steps=N] LESSON\n"
          "                                          N optimizer steps: the losses, the new weights and forward\n"
          "       attnviz --train STEPS --save FILE [--step SPEC] [--seed N] LESSON\n"
          "                                          train a lesson with a \"task\" on its task's batches, in C:\n"
          "                                          the loss every STEPS/20 steps, FILE the trained lesson\n"
          "                                          with its checkpoints\n"
          "       attnviz --print STAGE LESSON       one stage as a table, like a PyTorch print\n"
          "       attnviz --describe LESSON          every stage frame as JSON: formula, narration, alt text,\n"
          "                                          panels with their colour ranges and the size and decimals\n"
          "                                          of their numbers (--lang, --batch, --head, --size, --projector);\n"
          "                                          with --presenter: the presenter window at --size, each stage:\n"
          "                                          its text sizes, what is off the window or cut, narration, notes\n"
          "       attnviz --export DIR LESSON [export options]\n"
          "                                          frames as PNG (or SVG, PDF) into DIR, headless (no display)\n"
          "       attnviz --quiz LESSON [--lang en|zh] [--seed N]\n"
          "                                          the study mode's questions as JSON: question, answer,\n"
          "                                          tolerance, explanation (the same N gives the same questions)\n"
          "       attnviz --handout FILE.pdf LESSON [--lang en|zh] [--paper a4|letter] [--batch N] [--head N]\n"
          "                                          a printable handout: a title page, then a page a stage with\n"
          "                                          the frame, the formula, the narration and the shapes;\n"
          "                                          --worksheet: the study questions, the results' cells\n"
          "                                          empty, the answers on the last page\n"
          ,
          f);
    fputs("       attnviz --compare SPEC --dump|--describe|--export DIR LESSON\n"
          "                                          A (the LESSON) against B, A changed by SPEC: set:KEY=VALUE,\n"
          "                                          lesson:PATH, text:TEXT, checkpoint:N, ablate:lL.hH (a head's\n"
          "                                          output zeroed; ablate:lL every head of layer L) or\n"
          "                                          ablate-mean:lL.hH; Δ = B − A stage by stage,\n"
          "                                          which stages are identical (--dump: the Δ tensors; --export:\n"
          "                                          a frame a stage of its result in A, in B and Δ)\n"
          "       attnviz --experiment ablation|ablation-mean|logit-lens|logit-attribution LESSON\n"
          "       attnviz --experiment patching --corrupt TEXT LESSON\n"
          "                                          a language model's experiment as JSON: every head ranked by\n"
          "                                          the loss change when ablated; the logit lens (each layer's\n"
          "                                          residual through the final norm and unembedding); each head's\n"
          "                                          direct contribution to the next token's logit; activation\n"
          "                                          patching: TEXT (as long as the lesson's) run with each\n"
          "                                          layer's residual, and each head's output, at each position\n"
          "                                          taken from the lesson's text: how much of its prediction returns;\n"
          "                                          with --export DIR or --describe: the experiment drawn, one frame\n"
          "                                          (DIR/0000-NAME.png; --format svg|pdf, --size, --lang, --batch)\n"
          "       attnviz --icon FILE [--size N]     the application icon: FILE.svg, or an NxN PNG (default 256)\n"
          "       attnviz --set KEY=VALUE... --save FILE LESSON\n"
          "                                          write the edited lesson to FILE (every number explicit)\n"
          "\n"
          "Options go before or after the command and its operands, in any order; -- ends them.\n"
          "\n",
          f);
    fputs("options:\n"
          "  --font PATH        TrueType/OpenType font to use (default: found with fontconfig)\n"
          "  --lang en|zh       interface and narration language (default: from LANG)\n"
          "  --size WxH         initial window size (default 1280x720)\n"
          "  --fullscreen       start in fullscreen\n"
          "  --study            start in the study mode: predict each result before it shows (T)\n"
          "  --presenter        two windows: the audience's (the frame only; fullscreen on a second\n"
          "                     display) and the presenter's (next stage, narration, notes, timer)\n"
          "  --projector        projector mode: numbers readable from the back row, a stage's operands\n"
          "                     then its result when they do not fit together, high-contrast palette\n"
          "                     (also with --export: a frame a part)\n"
          "  --lessons DIR      also list the lessons in DIR in the lesson picker (O)\n"
          "  --set KEY=VALUE    edit the lesson first (repeatable; with the window, --dump, --print,\n"
          "                     --describe, --export, --quiz, --handout, --save), e.g. 'input.query[0,1,2]=5',\n"
          "                     'weights.w_q[3,1]=-0.25', 'mask[0,2,3]=0', mask=causal, model.scale=1,\n"
          "                     model.mask_fill=-inf (see README, \"What-if lab\")\n"
          "  --model-view       every layer and head at a glance (the window's A): with the window,\n"
          "                     --export (one frame, NNNN-model-view.png/svg/pdf) and --describe\n"
          "  --head-view        one head as lines from each query to each key (the window's A twice):\n"
          "                     --stage's layer (else the first), --head's head; with the window,\n"
          "                     --export (one frame, NNNN-head-view) and --describe\n"
          "  --text \"...\"       a language model's input (a lesson with a \"vocab\"): the text, split by its\n"
          "                     tokenizer, instead of the file's (with the window, --dump, --print,\n"
          "                     --describe, --export, --quiz, --handout, --save)\n"
          "  --backward         the backward view (the window's Ctrl+B): after the forward stages, one\n"
          "                     training step's gradients in reverse, from dL/dlogits to the embedding\n"
          "                     (a language model; with the window, --export, --describe, --quiz, --handout)\n"
          "  --checkpoint N     a lesson with checkpoints: compute checkpoint N's weights (a point of its\n"
          "                     training, from 0; the window's training slider) instead of the final ones\n"
          "  --save FILE        write the (edited) lesson to FILE (never the LESSON itself); alone, saves\n"
          "                     and exits; with --dump, --print, --describe, --export, --quiz or --handout,\n"
          "                     saves, then runs that command\n"
          "  --step SPEC        train a language model first: sgd or adamw as torch.optim's, then\n"
          "                     :key=value,… of lr, steps (1 to 10000; default 1), weight_decay, momentum\n"
          "                     (sgd), beta1, beta2, eps (adamw); torch's defaults otherwise (lr 0.001);\n"
          "                     with --dump --backward and/or --save (the lesson with the new weights);\n"
          "                     with --train, its optimizer (cosine=N: the lr decays to 0 over N steps)\n"
          "  --train STEPS      train for STEPS steps (1 to 1000000) on the lesson's task; --seed N: the\n"
          "                     data generator's seed instead of the task's\n"
          "\n",
          f);
    fputs("export options:\n"
          "  --size WxH         frame size (default 1280x720)\n"
          "  --lang en|zh       language of the frames\n"
          "  --format png|svg|pdf|gif|mp4\n"
          "                     PNG frames (default), one SVG a frame, DIR/frames.pdf with a page a\n"
          "                     frame (SVG and PDF: vector, text as text), or with --animate one\n"
          "                     DIR/frames.gif or DIR/frames.mp4 (H.264)\n"
          "  --animate          every frame of every transition (default: one still per stage)\n"
          "  --fps N            frames per second with --animate (default 30)\n"
          "  --stage NAME       only this stage (e.g. scores); with the window: open at it\n"
          "  --hold SECONDS     GIF, MP4: hold each settled stage (and each part, with --projector)\n"
          "                     this long (default 2; 0: no pause)\n"
          "  --split            GIF, MP4: one file a stage, NNNN-STAGE.gif / .mp4 (a slide each)\n"
          "  --batch N, --head N  the slice shown (default 0); also with the window\n"
          "  --loop N           with --stage (a decode, flash, linear state or MLA cache stage): step N,\n"
          "                     from 0; with --describe: every stage inside a loop at step N\n"
          "  --help, --version\n"
          "\n"
          "exit codes: 0 ok, 1 invalid lesson or runtime error, 2 usage error\n",
          f);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int usage_error(FILE *err, const char *fmt, ...)
{
    // arguments may hold newlines: the line is escaped (cli_error)
    char msg[1500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error(err, "attnviz: %s (see attnviz --help)", msg);
    return 2;
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

static bool parse_size(const char *s, int *w, int *h)
{
    const char *x = strchr(s, 'x');
    char wbuf[16];
    size_t wl = x ? (size_t)(x - s) : 0;
    if (!x || wl == 0 || wl >= sizeof wbuf) return false;
    memcpy(wbuf, s, wl);
    wbuf[wl] = '\0';
    return parse_int(wbuf, 64, 8192, w) && parse_int(x + 1, 64, 8192, h);
}

static int default_lang(void)
{
    const char *v = getenv("LC_ALL");
    if (!v || !*v) v = getenv("LC_MESSAGES");
    if (!v || !*v) v = getenv("LANG");
    return v && strncmp(v, "zh", 2) == 0 ? LANG_ZH : LANG_EN;
}

enum {
    O_CHECK = 256, O_DUMP, O_PRINT, O_DESCRIBE, O_QUIZ, O_HANDOUT, O_EXPORT, O_ICON, O_VERSION, O_HELP,
    O_PAPER, O_SEED, O_SET, O_SAVE, O_FONT, O_LANG, O_SIZE, O_LESSONS, O_FULLSCREEN, O_STUDY, O_PRESENTER,
    O_PROJECTOR, O_FORMAT, O_ANIMATE, O_FPS, O_STAGE, O_BATCH, O_HEAD, O_HOLD, O_SPLIT, O_WORKSHEET, O_LOOP, O_TEXT, O_MODEL_VIEW, O_HEAD_VIEW, O_CHECKPOINT, O_BACKWARD, O_STEP, O_TRAIN, O_COMPARE, O_EXPERIMENT, O_CORRUPT, O_END
};

static const struct option LONG[] = {
    {"check", no_argument, NULL, O_CHECK},         {"dump", no_argument, NULL, O_DUMP},
    {"print", required_argument, NULL, O_PRINT},   {"describe", no_argument, NULL, O_DESCRIBE},
    {"quiz", no_argument, NULL, O_QUIZ},           {"handout", required_argument, NULL, O_HANDOUT},
    {"export", required_argument, NULL, O_EXPORT}, {"icon", required_argument, NULL, O_ICON},
    {"version", no_argument, NULL, O_VERSION},     {"help", no_argument, NULL, O_HELP},
    {"paper", required_argument, NULL, O_PAPER},   {"seed", required_argument, NULL, O_SEED},
    {"compare", required_argument, NULL, O_COMPARE}, {"experiment", required_argument, NULL, O_EXPERIMENT},
    {"corrupt", required_argument, NULL, O_CORRUPT},
    {"set", required_argument, NULL, O_SET},       {"save", required_argument, NULL, O_SAVE},
    {"font", required_argument, NULL, O_FONT},     {"lang", required_argument, NULL, O_LANG},
    {"size", required_argument, NULL, O_SIZE},     {"lessons", required_argument, NULL, O_LESSONS},
    {"fullscreen", no_argument, NULL, O_FULLSCREEN}, {"study", no_argument, NULL, O_STUDY},
    {"presenter", no_argument, NULL, O_PRESENTER}, {"projector", no_argument, NULL, O_PROJECTOR},
    {"format", required_argument, NULL, O_FORMAT}, {"animate", no_argument, NULL, O_ANIMATE},
    {"fps", required_argument, NULL, O_FPS},       {"stage", required_argument, NULL, O_STAGE},
    {"batch", required_argument, NULL, O_BATCH},   {"head", required_argument, NULL, O_HEAD},
    {"hold", required_argument, NULL, O_HOLD},     {"split", no_argument, NULL, O_SPLIT},
    {"worksheet", no_argument, NULL, O_WORKSHEET}, {"loop", required_argument, NULL, O_LOOP},
    {"text", required_argument, NULL, O_TEXT},     {"model-view", no_argument, NULL, O_MODEL_VIEW},
    {"head-view", no_argument, NULL, O_HEAD_VIEW}, {"checkpoint", required_argument, NULL, O_CHECKPOINT},
    {"backward", no_argument, NULL, O_BACKWARD},    {"step", required_argument, NULL, O_STEP},
    {"train", required_argument, NULL, O_TRAIN},
    {NULL, 0, NULL, 0}};

// What an option's value is, for "--X needs ...".
static const char *needs(int id)
{
    switch (id) {
    case O_PRINT: return "STAGE and LESSON";
    case O_HANDOUT: return "FILE.pdf and LESSON";
    case O_EXPORT: return "DIR and LESSON";
    case O_ICON: return "a FILE (.svg or .png)";
    case O_PAPER: return "a4 or letter";
    case O_SEED: return "a whole number";
    case O_SET: return "KEY=VALUE";
    case O_COMPARE: return "a SPEC: set:KEY=VALUE, lesson:PATH, text:TEXT, checkpoint:N, ablate:lL.hH, ablate:lL or ablate-mean:lL.hH";
    case O_EXPERIMENT: return "ablation, ablation-mean, logit-lens, logit-attribution or patching";
    case O_CORRUPT: return "a TEXT (the corrupted run of --experiment patching)";
    case O_TEXT: return "a text";
    case O_CHECKPOINT: return "a checkpoint number";
    case O_STEP: return "an optimizer: sgd or adamw[:lr=X,steps=N,…]";
    case O_TRAIN: return "a number of steps";
    case O_SAVE: return "a FILE";
    case O_FONT: return "a PATH";
    case O_LANG: return "en or zh";
    case O_SIZE: return "WxH";
    case O_LESSONS: return "a DIR";
    case O_FORMAT: { // the export-format table's names
        static char names[128];
        export_format_list(names, sizeof names, false);
        return names;
    }
    case O_FPS: return "a number of frames per second";
    case O_STAGE: return "a stage NAME";
    case O_HOLD: return "a number of SECONDS";
    default: return "a whole number";
    }
}

static const char *name_of(int id)
{
    for (const struct option *o = LONG; o->name; o++)
        if (o->val == id) return o->name;
    return "?";
}

static int set_command(Args *a, Command c, int id, FILE *err)
{
    if (a->cmd == CMD_HELP || a->cmd == CMD_VERSION) return 0; // --help wins
    if (a->cmd != CMD_WINDOW && a->cmd != c)
        return usage_error(err, "give only one of --check, --dump, --print, --describe, --quiz, --handout, --export, "
                                "--experiment and --icon (--%s)", name_of(id));
    a->cmd = c;
    return 0;
}

// One option and its value into a; 0, or 2 after the usage error.
static int take(Args *a, int id, const char *v, bool seen[], FILE *err)
{
    // the options whose value is a file or a name: an option where it belongs is a slip
    if ((id == O_PRINT || id == O_HANDOUT || id == O_EXPORT || id == O_ICON || id == O_SAVE) &&
        (!v[0] || (v[0] == '-' && v[1] == '-')))
        return usage_error(err, "--%s needs %s", name_of(id), needs(id));
    // a second file for the same output is a slip (other options: the last one counts)
    if (seen[id - O_CHECK] && (id == O_SAVE || id == O_PRINT || id == O_HANDOUT || id == O_EXPORT || id == O_ICON))
        return usage_error(err, "--%s given twice", name_of(id));
    seen[id - O_CHECK] = true;
    switch (id) {
    case O_CHECK: return set_command(a, CMD_CHECK, id, err);
    case O_DUMP: return set_command(a, CMD_DUMP, id, err);
    case O_DESCRIBE: return set_command(a, CMD_DESCRIBE, id, err);
    case O_QUIZ: return set_command(a, CMD_QUIZ, id, err);
    case O_PRINT: a->print_stage = v; return set_command(a, CMD_PRINT, id, err);
    case O_HANDOUT: a->handout_path = v; return set_command(a, CMD_HANDOUT, id, err);
    case O_EXPORT: a->export_dir = v; return set_command(a, CMD_EXPORT, id, err);
    case O_ICON: a->icon_path = v; return set_command(a, CMD_ICON, id, err);
    case O_PAPER:
        if (strcmp(v, "a4") != 0 && strcmp(v, "letter") != 0) return usage_error(err, "--paper: expected a4 or letter");
        a->paper = v[0] == 'l' ? PAPER_LETTER : PAPER_A4;
        return 0;
    case O_SEED: {
        char *end;
        errno = 0;
        if (!isdigit((unsigned char)v[0]) || (a->seed = strtoull(v, &end, 10), *end || errno))
            return usage_error(err, "--seed: expected a whole number from 0 to 18446744073709551615");
        a->has_seed = true;
        return 0;
    }
    case O_SET: {
        enum { MAX_SETS = 4096 };
        if (a->n_sets == MAX_SETS) return usage_error(err, "more than %d --set edits", MAX_SETS);
        if (!a->sets && !(a->sets = malloc(MAX_SETS * sizeof *a->sets))) return usage_error(err, "out of memory");
        a->sets[a->n_sets++] = v;
        return 0;
    }
    case O_SAVE: a->save_path = v; return 0;
    case O_COMPARE: {
        CompareSpec sp;
        char msg[600];
        if (!compare_parse_spec(v, &sp, msg, sizeof msg)) return usage_error(err, "%s", msg);
        a->compare = v;
        return 0;
    }
    case O_EXPERIMENT:
        if (strcmp(v, "ablation") && strcmp(v, "ablation-mean") && strcmp(v, "logit-lens") && strcmp(v, "logit-attribution") &&
            strcmp(v, "patching"))
            return usage_error(err, "--experiment: expected ablation, ablation-mean, logit-lens, logit-attribution or "
                                    "patching, got \"%s\"", v);
        a->experiment = v; // (alone: the JSON, CMD_EXPERIMENT; with --export or --describe: drawn)
        return 0;
    case O_TEXT: a->edits.text = v; return 0;
    case O_CORRUPT: a->corrupt = v; return 0;
    case O_CHECKPOINT:
        if (!parse_int(v, 0, LESSON_MAX_CHECKPOINTS - 1, &a->edits.checkpoint))
            return usage_error(err, "--checkpoint: expected a whole number from 0 to %d", LESSON_MAX_CHECKPOINTS - 1);
        a->edits.has_checkpoint = true;
        return 0;
    case O_MODEL_VIEW: a->ex.view = a->opt.view = VIEW_MODEL; return 0;
    case O_HEAD_VIEW: // the model view wins when both are given
        if (a->opt.view != VIEW_MODEL) a->ex.view = a->opt.view = VIEW_HEADS;
        return 0;
    case O_FONT: a->opt.font_path = v; return 0;
    case O_LANG:
        if (strcmp(v, "en") == 0) a->opt.lang = LANG_EN;
        else if (strcmp(v, "zh") == 0) a->opt.lang = LANG_ZH;
        else return usage_error(err, "--lang: expected en or zh, got \"%s\"", v);
        return 0;
    case O_SIZE:
        // WxH (the window, --export, --describe) or N (--icon): checked once the command is known
        a->opt.width = a->opt.height = a->icon_size = 0; // (the last --size counts)
        if (parse_size(v, &a->opt.width, &a->opt.height) || parse_int(v, 16, 1024, &a->icon_size)) return 0;
        return usage_error(err, "--size: expected WxH from 64x64 to 8192x8192 (or N from 16 to 1024 with --icon), "
                                "got \"%s\"", v);
    case O_LESSONS: {
        struct stat st;
        if (stat(v, &st) != 0 || !S_ISDIR(st.st_mode)) return usage_error(err, "--lessons: \"%s\" is not a directory", v);
        a->opt.lessons_dir = v;
        return 0;
    }
    case O_FULLSCREEN: a->opt.fullscreen = true; return 0;
    case O_STUDY: a->opt.study = true; return 0;
    case O_PRESENTER: a->opt.presenter = true; return 0;
    case O_PROJECTOR: a->opt.projector = true; return 0;
    case O_FORMAT:
        if (!export_format_parse(v, &a->ex.format)) {
            char names[128];
            export_format_list(names, sizeof names, false);
            return usage_error(err, "--format: expected %s, got \"%s\"", names, v);
        }
        return 0;
    case O_ANIMATE: a->ex.animate = true; return 0;
    case O_FPS:
        if (!parse_int(v, 1, 240, &a->ex.fps))
            return usage_error(err, "--fps: expected a number of frames per second from 1 to 240");
        return 0;
    case O_STAGE: a->ex.stage = v; return 0;
    case O_HOLD: {
        char *end;
        errno = 0;
        double h = strtod(v, &end);
        if (end == v || *end || errno || !(h >= 0.0 && h <= 60.0))
            return usage_error(err, "--hold: expected SECONDS from 0 to 60, got \"%s\"", v);
        a->ex.hold = h;
        return 0;
    }
    case O_SPLIT: a->ex.split = true; return 0;
    case O_BACKWARD: a->backward = true; return 0;
    case O_STEP: {
        char msg[300];
        if (!optim_parse(&a->step, v, "--step", msg, sizeof msg)) return usage_error(err, "%s", msg);
        a->has_step = true;
        return 0;
    }
    case O_TRAIN:
        if (!parse_int(v, 1, OPTIM_MAX_TRAIN, &a->train_steps))
            return usage_error(err, "--train: %s: expected a whole number of steps from 1 to %d", v, OPTIM_MAX_TRAIN);
        return 0;
    case O_LOOP:
        if (!parse_int(v, 0, 1 << 20, &a->ex.loop)) return usage_error(err, "--loop: expected a whole number from 0");
        return 0;
    case O_WORKSHEET: a->worksheet = true; return 0;
    case O_BATCH:
    case O_HEAD:
        if (!parse_int(v, 0, 1 << 20, id == O_BATCH ? &a->ex.batch : &a->ex.head))
            return usage_error(err, "--%s: expected a whole number from 0", name_of(id));
        if (id == O_HEAD) a->ex.head_set = true;
        return 0;
    case O_VERSION: if (a->cmd != CMD_HELP) a->cmd = CMD_VERSION; return 0;
    case O_HELP: a->cmd = CMD_HELP; return 0;
    default: return usage_error(err, "unknown option");
    }
}

#define SEEN(id) seen[(id) - O_CHECK]

// Which options go with which command, once all are read.
static int check_combination(Args *a, const bool seen[], FILE *err)
{
    if (SEEN(O_EXPERIMENT)) { // alone: its JSON; with --export or --describe: drawn (expview.h), one frame
        if (a->cmd == CMD_WINDOW && !a->save_path) a->cmd = CMD_EXPERIMENT;
        else if (a->cmd != CMD_EXPORT && a->cmd != CMD_DESCRIBE)
            return usage_error(err, "--experiment goes alone (its JSON), with --export DIR or with --describe");
        if (a->cmd != CMD_EXPERIMENT &&
            (SEEN(O_STAGE) || SEEN(O_ANIMATE) || SEEN(O_HEAD) || SEEN(O_LOOP) || SEEN(O_MODEL_VIEW) || SEEN(O_HEAD_VIEW) ||
             SEEN(O_COMPARE) || SEEN(O_BACKWARD) || SEEN(O_PRESENTER)))
            return usage_error(err, "--experiment with --%s is one frame of the experiment: no --stage, --animate, --head, "
                                    "--loop, --model-view, --head-view, --compare, --backward or --presenter",
                               a->cmd == CMD_EXPORT ? "export" : "describe");
    }
    Command c = a->cmd;
    bool export_only = SEEN(O_FORMAT) || SEEN(O_ANIMATE) || SEEN(O_FPS);
    bool window = c == CMD_WINDOW && !a->save_path; // --stage, --batch, --head: where the window opens
    bool slice = SEEN(O_BATCH) || SEEN(O_HEAD);
    bool window_only = SEEN(O_STUDY) || SEEN(O_PRESENTER) || SEEN(O_FULLSCREEN) || SEEN(O_PROJECTOR) || SEEN(O_LESSONS);
    if (c == CMD_ICON) {
        for (int id = O_CHECK; id < O_END; id++)
            if (SEEN(id) && id != O_ICON && id != O_SIZE) return usage_error(err, "--icon takes only FILE and --size N");
        if (a->n_lessons) return usage_error(err, "--icon takes only FILE and --size N, got \"%s\"", a->lessons[0]);
        if (SEEN(O_SIZE) && !a->icon_size)
            return usage_error(err, "--icon --size: expected a number of pixels from 16 to 1024");
        if (!a->icon_size) a->icon_size = 256;
        return 0;
    }
    if (SEEN(O_SIZE) && a->icon_size && !a->opt.width)
        return usage_error(err, "--size: expected WxH from 64x64 to 8192x8192, got a single number");
    if (!a->opt.width) a->opt.width = 1280, a->opt.height = 720;
    if (c == CMD_CHECK) {
        if ((SEEN(O_SET) || SEEN(O_SAVE) || SEEN(O_TEXT) || SEEN(O_CHECKPOINT)))
            return usage_error(err, "--set, --text, --checkpoint and --save do not go with --check");
        if (!a->n_lessons) return usage_error(err, "--check needs at least one LESSON");
        return 0;
    }
    if (a->n_lessons > 1) return usage_error(err, "more than one LESSON: \"%s\"", a->lessons[1]);
    bool lesson = a->n_lessons == 1;
    if (lesson) a->opt.lesson_path = a->lessons[0];
    switch (c) {
    case CMD_DUMP: case CMD_QUIZ: case CMD_DESCRIBE: case CMD_EXPERIMENT:
        if (!lesson)
            return usage_error(err, "--%s needs exactly one LESSON", c == CMD_DUMP ? "dump" : c == CMD_QUIZ ? "quiz"
                                                                     : c == CMD_EXPERIMENT ? "experiment" : "describe");
        break;
    case CMD_PRINT: if (!lesson) return usage_error(err, "--print needs STAGE and LESSON"); break;
    case CMD_HANDOUT: if (!lesson) return usage_error(err, "--handout needs FILE.pdf and LESSON"); break;
    case CMD_EXPORT: if (!lesson) return usage_error(err, "--export needs DIR and LESSON"); break;
    default: break;
    }
    if (SEEN(O_SEED) && c != CMD_QUIZ && !SEEN(O_TRAIN)) return usage_error(err, "--seed goes with --quiz or --train");
    if (SEEN(O_TRAIN) && !(c == CMD_WINDOW && a->save_path && lesson))
        return usage_error(err, "--train goes with --save FILE and a LESSON (the trained lesson is written to FILE)");
    if (SEEN(O_COMPARE) && c != CMD_DUMP && c != CMD_DESCRIBE && c != CMD_EXPORT)
        return usage_error(err, "--compare goes with --dump, --describe and --export");
    if (SEEN(O_COMPARE) && (SEEN(O_BACKWARD) || SEEN(O_STEP) || SEEN(O_SAVE) || SEEN(O_MODEL_VIEW) || SEEN(O_HEAD_VIEW) ||
                            SEEN(O_PRESENTER) || SEEN(O_PROJECTOR) || SEEN(O_LOOP) || (slice && c != CMD_EXPORT)))
        return usage_error(err, "--compare compares every stage of A and B: no --backward, --step, --save, --model-view, "
                                "--head-view, --presenter, --projector or --loop (--batch and --head: with --export)");
    if (c == CMD_EXPERIMENT && (SEEN(O_SAVE) || SEEN(O_STEP) || SEEN(O_STAGE) || slice || window_only || export_only))
        return usage_error(err, "--experiment takes only --set, --text, --checkpoint, --corrupt and --lang");
    if (SEEN(O_CORRUPT) != (a->experiment && strcmp(a->experiment, "patching") == 0))
        return usage_error(err, SEEN(O_CORRUPT) ? "--corrupt goes with --experiment patching"
                                                : "--experiment patching needs --corrupt TEXT (the corrupted text)");
    if (SEEN(O_BACKWARD) && c != CMD_DUMP && c != CMD_WINDOW && c != CMD_EXPORT && c != CMD_DESCRIBE && c != CMD_QUIZ &&
        c != CMD_HANDOUT)
        return usage_error(err, "--backward goes with --dump, the window, --export, --describe, --quiz and --handout");
    a->edits.backward = a->backward && c != CMD_DUMP; // (--dump --backward: its own JSON, cli_backward.c)
    if (SEEN(O_STEP) && !(c == CMD_DUMP && a->backward) && !(c == CMD_WINDOW && a->save_path))
        return usage_error(err, "--step goes with --dump --backward and/or --save FILE");
    if (SEEN(O_STEP) && SEEN(O_TRAIN) && a->step.steps_given) // (not one of them silently)
        return usage_error(err, "--step: steps=%d: --train %d counts the steps; expected no steps= with --train",
                           a->step.steps, a->train_steps);
    if (SEEN(O_PAPER) && c != CMD_HANDOUT) return usage_error(err, "--paper goes with --handout");
    if (SEEN(O_WORKSHEET) && c != CMD_HANDOUT) return usage_error(err, "--worksheet goes with --handout");
    if (SEEN(O_PROJECTOR) && c != CMD_WINDOW && c != CMD_EXPORT && c != CMD_DESCRIBE) // (not silently ignored)
        return usage_error(err, "--projector goes with the window, --export and --describe");
    if (SEEN(O_PRESENTER) && c != CMD_WINDOW && c != CMD_DESCRIBE)
        return usage_error(err, "--presenter goes with the window and --describe");
    if (a->opt.study && a->opt.presenter)
        return usage_error(err, "--study and --presenter do not go together (the presenter window previews the next stage)");
    if (a->opt.study && (c != CMD_WINDOW || a->save_path))
        return usage_error(err, "--study goes with the window, not with --quiz, --dump, --print, --describe, --export, "
                                "--handout or --save");
    if (window_only && c == CMD_WINDOW && a->save_path)
        return usage_error(err, "--save without a command saves and exits: --presenter, --projector, --fullscreen and "
                                "--lessons go with the window");
    if (c == CMD_WINDOW && a->save_path && !lesson) return usage_error(err, "--save needs a LESSON");
    if ((export_only || SEEN(O_STAGE)) && c == CMD_QUIZ)
        return usage_error(err, "--animate, --fps, --stage, --format, --batch and --head do not go with --quiz");
    if (export_only && c != CMD_EXPORT) return usage_error(err, "--animate, --fps and --format go with --export");
    if (SEEN(O_STAGE) && c != CMD_EXPORT && !window)
        return usage_error(err, "--stage goes with --export and the window");
    if (slice && c != CMD_EXPORT && c != CMD_DESCRIBE && c != CMD_HANDOUT && !window) {
        if (c == CMD_QUIZ) return usage_error(err, "--animate, --fps, --stage, --format, --batch and --head do not go with --quiz");
        return usage_error(err, "--batch and --head go with --export, --describe, --handout and the window");
    }
    if (SEEN(O_MODEL_VIEW) && c != CMD_EXPORT && c != CMD_DESCRIBE && !window)
        return usage_error(err, "--model-view goes with the window, --export and --describe");
    if (SEEN(O_MODEL_VIEW) && (SEEN(O_LOOP) || SEEN(O_STAGE) || SEEN(O_ANIMATE) || SEEN(O_HEAD_VIEW)))
        return usage_error(err, "--model-view is one frame of every layer and head: no --stage, --loop, --animate or --head-view");
    if (SEEN(O_HEAD_VIEW) && c != CMD_EXPORT && c != CMD_DESCRIBE && !window)
        return usage_error(err, "--head-view goes with the window, --export and --describe");
    if (SEEN(O_HEAD_VIEW) && (SEEN(O_LOOP) || SEEN(O_ANIMATE)))
        return usage_error(err, "--head-view is one frame (its layer: --stage's, its head: --head): no --loop or --animate");
    if (SEEN(O_LOOP) && c != CMD_EXPORT && c != CMD_DESCRIBE)
        return usage_error(err, "--loop goes with --export (and --stage) and --describe");
    if (SEEN(O_LOOP) && c == CMD_EXPORT && !SEEN(O_STAGE))
        return usage_error(err, "--loop needs --stage: the stage inside the loop (decode_scores, flash_p, …)");
    const ExportFormatInfo *fmt = export_format_info(a->ex.format);
    if ((SEEN(O_HOLD) || SEEN(O_SPLIT)) && (c != CMD_EXPORT || !fmt->animated)) {
        char names[128];
        export_format_list(names, sizeof names, true);
        return usage_error(err, "--%s goes with --export --format %s", SEEN(O_HOLD) ? "hold" : "split", names);
    }
    if (window) a->opt.stage = a->ex.stage, a->opt.batch = a->ex.batch, a->opt.head = a->ex.head, a->opt.head_set = a->ex.head_set;
    if (c == CMD_EXPORT) {
        if (fmt->animated && !a->ex.animate)
            return usage_error(err, "--format %s needs --animate (an animation of the transitions)", fmt->ext);
        if (fmt->even_size && (a->opt.width % 2 || a->opt.height % 2))
            return usage_error(err, "--format %s: H.264 needs an even width and height (got %dx%d; try --size %dx%d)",
                               fmt->ext, a->opt.width, a->opt.height, a->opt.width + a->opt.width % 2,
                               a->opt.height + a->opt.height % 2);
    }
    // saving over the lesson itself would drop what --save does not write (steps, notes, quiz)
    struct stat s1, s2;
    if (a->save_path && lesson && stat(a->save_path, &s1) == 0 && stat(a->opt.lesson_path, &s2) == 0 &&
        s1.st_dev == s2.st_dev && s1.st_ino == s2.st_ino)
        return usage_error(err, "--save: \"%s\" is the LESSON itself; save to another file (the lesson's steps, notes "
                                "and questions would be lost)", a->save_path);
    return 0;
}

int args_parse(Args *a, int argc, char **argv, FILE *err)
{
    memset(a, 0, sizeof *a);
    a->opt.lang = default_lang();
    export_options_init(&a->ex);
    a->paper = PAPER_A4;
    a->seed = 1;
    bool seen[O_END - O_CHECK] = {0};
    if (!(a->lessons = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *a->lessons)))
        return usage_error(err, "out of memory");
    opterr = 0;
    optind = 0; // (0: getopt starts afresh, GNU rules: operands are moved after the options)
    for (;;) {
        int prev = optind ? optind : 1, idx = -1;
        // "-": operands come back in order as 1 (GNU order even with POSIXLY_CORRECT set)
        int id = getopt_long(argc, argv, "-:h", LONG, &idx);
        if (id == -1) break;
        if (id == 1) {
            a->lessons[a->n_lessons++] = optarg;
            continue;
        }
        if (id == 'h') id = O_HELP;
        if (id == '?' || id == ':') {
            const char *arg = optind - 1 >= prev ? argv[optind - 1] : argv[prev];
            if (id == ':' ) {
                for (const struct option *o = LONG; o->name; o++)
                    if (o->val == optopt || (strncmp(arg, "--", 2) == 0 && strcmp(arg + 2, o->name) == 0))
                        return usage_error(err, "--%s needs %s", o->name, needs(o->val));
                return usage_error(err, "\"%s\" needs a value", arg);
            }
            return usage_error(err, "unknown option \"%s\"", arg);
        }
        if (take(a, id, optarg ? optarg : "", seen, err)) return 2;
    }
    if (a->cmd == CMD_HELP || a->cmd == CMD_VERSION) return 0;
    while (optind < argc) a->lessons[a->n_lessons++] = argv[optind++]; // after "--"
    a->edits.set = a->sets;
    a->edits.n = a->n_sets;
    a->opt.edits = &a->edits;
    return check_combination(a, seen, err);
}

void args_free(Args *a)
{
    free(a->sets);
    free(a->lessons);
    a->sets = NULL;
    a->lessons = NULL;
}
