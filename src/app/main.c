// main.c — the command line: headless commands, or the window.
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "app.h"
#include "assets.h"
#include "cli.h"
#include "describe.h"
#include "export.h"
#include "handout.h"
#include "session.h"

#define ATTNVIZ_VERSION "0.1.0"
#define DEFAULT_LESSON "lessons/arange-2x4x4.json"

static void usage(FILE *f)
{
    fputs("usage: attnviz [options] [LESSON]         open LESSON (default " DEFAULT_LESSON ") in a window\n"
          "       attnviz --check LESSON...          validate lessons (exit 0 if all are valid)\n"
          "       attnviz --dump LESSON              every stage as JSON on stdout\n"
          "       attnviz --print STAGE LESSON       one stage as a table, like a PyTorch print\n"
          "       attnviz --describe LESSON          every stage frame as JSON: formula, narration, alt text,\n"
          "                                          panels with their colour ranges (--lang, --batch, --head, --size)\n"
          "       attnviz --export DIR LESSON [export options]\n"
          "                                          frames as PNG (or SVG, PDF) into DIR, headless (no display)\n"
          "       attnviz --quiz LESSON [--lang en|zh] [--seed N]\n"
          "                                          the study mode's questions as JSON: question, answer,\n"
          "                                          tolerance, explanation (the same N gives the same questions)\n"
          "       attnviz --handout FILE.pdf LESSON [--lang en|zh] [--paper a4|letter] [--batch N] [--head N]\n"
          "                                          a printable handout: a title page, then a page a stage with\n"
          "                                          the frame, the formula, the narration and the shapes\n"
          "       attnviz --icon FILE [--size N]     the application icon: FILE.svg, or an NxN PNG (default 256)\n"
          "       attnviz --set KEY=VALUE... --save FILE LESSON\n"
          "                                          write the edited lesson to FILE (every number explicit)\n"
          "\n"
          "options:\n"
          "  --font PATH        TrueType/OpenType font to use (default: found with fontconfig)\n"
          "  --lang en|zh       interface and narration language (default: from LANG)\n"
          "  --size WxH         initial window size (default 1280x720)\n"
          "  --fullscreen       start in fullscreen\n"
          "  --study            start in the study mode: predict each result before it shows (T)\n"
          "  --presenter        two windows: the audience's (the frame only; fullscreen on a second\n"
          "                     display) and the presenter's (next stage, narration, notes, timer)\n"
          "  --projector        projector mode: numbers readable from the back row, a stage's operands\n"
          "                     then its result when they do not fit together, high-contrast palette\n"
          "  --lessons DIR      also list the lessons in DIR in the lesson picker (O)\n"
          "  --set KEY=VALUE    edit the lesson first (repeatable; with the window, --dump, --print,\n"
          "                     --describe, --export, --save), e.g. 'input.query[0,1,2]=5',\n"
          "                     'weights.w_q[3,1]=-0.25', 'mask[0,2,3]=0', mask=causal, model.scale=1,\n"
          "                     model.mask_fill=-inf (see README, \"What-if lab\")\n"
          "  --save FILE        write the (edited) lesson to FILE; alone, saves and exits\n"
          "\n"
          "export options:\n"
          "  --size WxH         frame size (default 1280x720)\n"
          "  --lang en|zh       language of the frames\n"
          "  --format png|svg|pdf|gif|mp4\n"
          "                     PNG frames (default), one SVG a frame, DIR/frames.pdf with a page a\n"
          "                     frame (SVG and PDF: vector, text as text), or with --animate one\n"
          "                     DIR/frames.gif or DIR/frames.mp4 (H.264)\n"
          "  --animate          every frame of every transition (default: one still per stage)\n"
          "  --fps N            frames per second with --animate (default 30)\n"
          "  --stage NAME       only this stage (e.g. scores)\n"
          "  --batch N, --head N  the slice shown (default 0)\n"
          "  --help, --version\n"
          "\n"
          "exit codes: 0 ok, 1 invalid lesson or runtime error, 2 usage error\n",
          f);
}

#include <stdarg.h>

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int usage_error(const char *fmt, ...)
{
    // arguments may hold newlines: the line is escaped (cli_error)
    char msg[1500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error(stderr, "attnviz: %s (see attnviz --help)", msg);
    return 2;
}

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

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

static int default_lang(void)
{
    const char *v = getenv("LC_ALL");
    if (!v || !*v) v = getenv("LC_MESSAGES");
    if (!v || !*v) v = getenv("LANG");
    return v && strncmp(v, "zh", 2) == 0 ? LANG_ZH : LANG_EN;
}

int main(int argc, char **argv)
{
    // Over a file-size limit (ulimit -f) a write fails with EFBIG and is reported
    // (export, S, E), instead of SIGXFSZ killing the process mid-file.
    signal(SIGXFSZ, SIG_IGN);
    AppOptions opt = {DEFAULT_LESSON, NULL, NULL, default_lang(), 1280, 720, false, false, false, false, NULL};
    bool have_lesson = false;
    ExportOptions ex;
    export_options_init(&ex);
    const char *export_dir = NULL;
    bool export_only_opt = false;   // an export option given without --export
    // One command at a time: --check, --dump, --print and --export exclude each other.
    int modes = 0;
    for (int i = 1; i < argc; i++)
        modes += strcmp(argv[i], "--check") == 0 || strcmp(argv[i], "--dump") == 0 ||
                 strcmp(argv[i], "--print") == 0 || strcmp(argv[i], "--export") == 0 ||
                 strcmp(argv[i], "--describe") == 0 || strcmp(argv[i], "--quiz") == 0 ||
                 strcmp(argv[i], "--handout") == 0;
    if (modes > 1) return usage_error("give only one of --check, --dump, --print, --describe, --quiz, --handout and --export");
    for (int i = 1; i < argc; i++) // --check validates files as they are: edits would be ignored
        if ((strcmp(argv[i], "--set") == 0 || strcmp(argv[i], "--save") == 0) && modes == 1)
            for (int j = 1; j < argc; j++)
                if (strcmp(argv[j], "--check") == 0) return usage_error("--set and --save do not go with --check");
    bool describe = false;
    const char *dump_path = NULL, *print_stage = NULL, *save_path = NULL;
    bool dump = false, print = false, quiz = false, seed_opt = false;
    unsigned long long seed = 1;
    enum { MAX_SETS = 4096 };
    static const char *sets[MAX_SETS];
    int n_sets = 0;
    bool slice_opt = false;         // --batch / --head (export or describe)
    const char *handout_path = NULL;
    Paper paper = PAPER_A4;
    bool paper_opt = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return finish_stdout(0, "--help");
        } else if (strcmp(a, "--version") == 0) {
            puts("attnviz " ATTNVIZ_VERSION);
            return finish_stdout(0, "--version");
        } else if (strcmp(a, "--handout") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0] || argv[i + 1][0] == '-') return usage_error("%s needs FILE.pdf and LESSON", a);
            handout_path = argv[++i];
        } else if (strcmp(a, "--paper") == 0) {
            if (++i >= argc || (strcmp(argv[i], "a4") != 0 && strcmp(argv[i], "letter") != 0))
                return usage_error("--paper: expected a4 or letter");
            paper = argv[i][0] == 'l' ? PAPER_LETTER : PAPER_A4;
            paper_opt = true;
        } else if (strcmp(a, "--icon") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0]) return usage_error("%s needs a FILE (.svg or .png)", a);
            const char *icon = argv[++i];
            int size = 256;
            if (i + 2 < argc + 0 && strcmp(argv[i + 1], "--size") == 0) {
                if (!parse_int(argv[i + 2], 16, 1024, &size))
                    return usage_error("--icon --size: expected a number of pixels from 16 to 1024");
                i += 2;
            }
            if (i + 1 < argc) return usage_error("--icon takes only FILE and --size N");
            return cli_icon(icon, size, stderr);
        } else if (strcmp(a, "--check") == 0) {
            if (i + 1 >= argc) return usage_error("%s needs at least one LESSON", a);
            return finish_stdout(cli_check(argc - i - 1, argv + i + 1, stdout, stderr), "--check");
        } else if (strcmp(a, "--dump") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '-') return usage_error("%s needs exactly one LESSON", a);
            dump = true;
            dump_path = argv[++i];
        } else if (strcmp(a, "--print") == 0) {
            if (i + 2 >= argc || argv[i + 1][0] == '-' || argv[i + 2][0] == '-')
                return usage_error("%s needs STAGE and LESSON", a);
            print = true;
            print_stage = argv[++i];
            dump_path = argv[++i];
        } else if (strcmp(a, "--quiz") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '-') return usage_error("%s needs exactly one LESSON", a);
            quiz = true;
            dump_path = argv[++i];
        } else if (strcmp(a, "--seed") == 0) {
            char *end;
            errno = 0;
            if (++i >= argc || !isdigit((unsigned char)argv[i][0]) ||
                (seed = strtoull(argv[i], &end, 10), *end || errno))
                return usage_error("--seed: expected a whole number from 0 to 18446744073709551615");
            seed_opt = true;
        } else if (strcmp(a, "--set") == 0) {
            if (++i >= argc) return usage_error("%s needs KEY=VALUE", a);
            if (n_sets == MAX_SETS) return usage_error("more than %d --set edits", MAX_SETS);
            sets[n_sets++] = argv[i];
        } else if (strcmp(a, "--save") == 0) {
            if (++i >= argc || !argv[i][0]) return usage_error("%s needs a FILE", a);
            if (save_path) return usage_error("more than one --save");
            save_path = argv[i];
        } else if (strcmp(a, "--describe") == 0) {
            describe = true;
        } else if (strcmp(a, "--font") == 0) {
            if (++i >= argc) return usage_error("%s needs a PATH", a);
            opt.font_path = argv[i];
        } else if (strcmp(a, "--lang") == 0) {
            if (++i >= argc) return usage_error("%s needs en or zh", a);
            if (strcmp(argv[i], "en") == 0)
                opt.lang = LANG_EN;
            else if (strcmp(argv[i], "zh") == 0)
                opt.lang = LANG_ZH;
            else
                return usage_error("--lang: expected en or zh, got \"%s\"", argv[i]);
        } else if (strcmp(a, "--size") == 0) {
            if (++i >= argc) return usage_error("%s needs WxH", a);
            const char *x = strchr(argv[i], 'x');
            char wbuf[16];
            size_t wl = x ? (size_t)(x - argv[i]) : 0;
            if (wl > 0 && wl < sizeof wbuf) memcpy(wbuf, argv[i], wl);
            wbuf[wl < sizeof wbuf ? wl : 0] = '\0';
            if (!x || wl == 0 || wl >= sizeof wbuf || !parse_int(wbuf, 64, 8192, &opt.width) ||
                !parse_int(x + 1, 64, 8192, &opt.height))
                return usage_error("--size: expected WxH from 64x64 to 8192x8192, got \"%s\"",
                                   argv[i]);
        } else if (strcmp(a, "--lessons") == 0) {
            if (++i >= argc) return usage_error("%s needs a DIR", a);
            opt.lessons_dir = argv[i];
            struct stat st;
            if (stat(opt.lessons_dir, &st) != 0 || !S_ISDIR(st.st_mode))
                return usage_error("--lessons: \"%s\" is not a directory", opt.lessons_dir);
        } else if (strcmp(a, "--fullscreen") == 0) {
            opt.fullscreen = true;
        } else if (strcmp(a, "--study") == 0) {
            opt.study = true;
        } else if (strcmp(a, "--presenter") == 0) {
            opt.presenter = true;
        } else if (strcmp(a, "--projector") == 0) {
            opt.projector = true;
        } else if (strcmp(a, "--export") == 0) {
            if (++i >= argc) return usage_error("%s needs DIR and LESSON", a);
            export_dir = argv[i];
        } else if (strcmp(a, "--format") == 0) {
            if (++i >= argc || !export_format_parse(argv[i], &ex.format))
                return usage_error("--format: expected png, svg, pdf, gif or mp4%s%s%s", i < argc ? ", got \"" : "",
                                   i < argc ? argv[i] : "", i < argc ? "\"" : "");
            export_only_opt = true;
        } else if (strcmp(a, "--animate") == 0) {
            ex.animate = true;
            export_only_opt = true;
        } else if (strcmp(a, "--fps") == 0) {
            if (++i >= argc || !parse_int(argv[i], 1, 240, &ex.fps))
                return usage_error("--fps: expected a number of frames per second from 1 to 240");
            export_only_opt = true;
        } else if (strcmp(a, "--stage") == 0) {
            if (++i >= argc) return usage_error("%s needs a stage NAME", a);
            ex.stage = argv[i];
            export_only_opt = true;
        } else if (strcmp(a, "--batch") == 0 || strcmp(a, "--head") == 0) {
            int *dst = a[2] == 'b' ? &ex.batch : &ex.head;
            if (++i >= argc || !parse_int(argv[i], 0, 1 << 20, dst))
                return usage_error("%s: expected a whole number from 0", a);
            slice_opt = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option \"%s\"", a);
        } else {
            if (have_lesson) return usage_error("more than one LESSON: \"%s\"", a);
            opt.lesson_path = a;
            have_lesson = true;
        }
    }
    if (dump_path) {
        if (have_lesson) return usage_error("more than one LESSON: \"%s\"", opt.lesson_path);
        opt.lesson_path = dump_path;
        have_lesson = true;
    }
    SessionEdits edits = {sets, n_sets};
    opt.edits = &edits;
    // No LESSON given: the default lesson beside the assets, from any directory.
    static char default_path[1200];
    if (!have_lesson && access(DEFAULT_LESSON, R_OK) != 0) {
        char assets[1100], err[600];
        if (assets_find(assets, sizeof assets, err, sizeof err)) {
            snprintf(default_path, sizeof default_path, "%s/../%s", assets, DEFAULT_LESSON);
            opt.lesson_path = default_path;
        }
    }
    if (save_path) {
        if (!have_lesson) return usage_error("--save needs a LESSON");
        char msg[LESSON_ERR_MAX + 200];
        Session *ses = session_open(opt.lesson_path, &edits, msg, sizeof msg);
        if (!ses || !session_save(ses, save_path, true, msg, sizeof msg)) {
            cli_error(stderr, "%s", msg);
            session_destroy(ses);
            return 1;
        }
        session_destroy(ses);
        if (!dump && !print && !describe && !export_dir) return 0;   // --save alone: saved, done
    }
    if (seed_opt && !quiz) return usage_error("--seed goes with --quiz");
    if (opt.study && opt.presenter)
        return usage_error("--study and --presenter do not go together (the presenter window previews the next stage)");
    if (opt.study && (quiz || dump || print || describe || export_dir || save_path))
        return usage_error("--study goes with the window, not with --quiz, --dump, --print, --describe, --export or --save");
    if (quiz) {
        if (export_only_opt || slice_opt) return usage_error("--animate, --fps, --stage, --format, --batch and --head do not go with --quiz");
        return finish_stdout(cli_quiz(opt.lesson_path, &edits, opt.lang, seed, stdout, stderr), "--quiz");
    }
    if (paper_opt && !handout_path) return usage_error("--paper goes with --handout");
    if (handout_path) {
        if (!have_lesson) return usage_error("--handout needs FILE.pdf and LESSON");
        if (export_only_opt) return usage_error("--animate, --fps, --stage and --format go with --export");
        HandoutOptions ho = {handout_path, opt.lesson_path, opt.font_path, (Lang)opt.lang, paper, ex.batch, ex.head, &edits};
        return finish_stdout(handout_run(&ho), "--handout");
    }
    if (dump) return finish_stdout(cli_dump(opt.lesson_path, &edits, stdout, stderr), "--dump");
    if (print) return finish_stdout(cli_print(print_stage, opt.lesson_path, &edits, stdout, stderr), "--print");
    if (describe) {
        if (!have_lesson) return usage_error("--describe needs a LESSON");
        if (export_only_opt) return usage_error("--animate, --fps, --stage and --format go with --export");
        return finish_stdout(describe_run(opt.lesson_path, &edits, (Lang)opt.lang, ex.batch, ex.head, opt.width,
                                          opt.height, stdout, stderr),
                             "--describe");
    }
    if (export_dir) {
        if (!have_lesson) return usage_error("--export needs DIR and LESSON");
        ex.dir = export_dir;
        ex.lesson_path = opt.lesson_path;
        ex.font_path = opt.font_path;
        ex.width = opt.width, ex.height = opt.height;
        ex.lang = (Lang)opt.lang;
        ex.edits = &edits;
        if ((ex.format == EXPORT_GIF || ex.format == EXPORT_MP4) && !ex.animate)
            return usage_error("--format %s needs --animate (an animation of the transitions)", export_format_name(ex.format));
        if (ex.format == EXPORT_MP4 && (ex.width % 2 || ex.height % 2))
            return usage_error("--format mp4: H.264 needs an even width and height (got %dx%d; try --size %dx%d)", ex.width,
                               ex.height, ex.width + ex.width % 2, ex.height + ex.height % 2);
        return export_run(&ex);
    }
    if (export_only_opt || slice_opt)
        return usage_error("--animate, --fps, --stage, --format, --batch and --head go with --export (--batch, --head also with --describe)");
    return app_run(&opt);
}
