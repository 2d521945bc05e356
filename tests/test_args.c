#define _DEFAULT_SOURCE // realpath
// test_args.c — the command line (args.h), in-process (issue 21, issue 27 items 4, 5, 8):
//   - every form of the usage text parses, and options go anywhere: "--quiz --lang zh L",
//     "--print attn --lang zh L", "L --describe", "--export DIR L --format svg"…;
//   - every option is checked before anything is done: --save with --study, --seed or an
//     export option is a usage error (main then writes nothing), --save with a command
//     runs both; --save over the LESSON itself is refused;
//   - with no LESSON the window's lesson is the one beside the assets, never
//     ./lessons/ of the working directory;
//   - the page's address read as its command line (url_args.h, issue 36): each field
//     as a browser reads it, a value never taken for an option, written back the same.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/args.h"
#include "app/assets.h"
#include "app/url_args.h"

#define L "lessons/arange-2x4x4.json"

static char errbuf[4096];

// Parses the words of line (space-separated; no quoting needed here).
static int parse(Args *a, const char *line)
{
    static char buf[2048];
    static char *argv[64];
    snprintf(buf, sizeof buf, "attnviz %s", line);
    int argc = 0;
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;
    FILE *err = tmpfile();
    assert_non_null(err);
    int rc = args_parse(a, argc, argv, err);
    rewind(err);
    size_t n = fread(errbuf, 1, sizeof errbuf - 1, err);
    errbuf[n] = '\0';
    fclose(err);
    return rc;
}

static void ok(const char *line, Command cmd)
{
    Args a;
    int rc = parse(&a, line);
    if (rc != 0 || a.cmd != cmd) fail_msg("\"%s\": rc %d, command %d (expected %d): %s", line, rc, a.cmd, cmd, errbuf);
    args_free(&a);
}

static void usage(const char *line, const char *want)
{
    Args a;
    int rc = parse(&a, line);
    if (rc != 2 || !strstr(errbuf, want)) fail_msg("\"%s\": rc %d, \"%s\" (expected 2 and \"%s\")", line, rc, errbuf, want);
    if (strchr(errbuf, '\n') != strrchr(errbuf, '\n')) fail_msg("\"%s\": more than one line: %s", line, errbuf);
    args_free(&a);
}

static void test_any_order(void **state)
{
    (void)state;
    Args a;
    // issue 21's three, and the options' values land where they belong
    assert_int_equal(parse(&a, "--quiz --lang zh " L), 0);
    assert_int_equal(a.cmd, CMD_QUIZ);
    assert_int_equal(a.opt.lang, LANG_ZH);
    assert_string_equal(a.opt.lesson_path, L);
    args_free(&a);
    assert_int_equal(parse(&a, "--print attn --lang zh " L), 0);
    assert_int_equal(a.cmd, CMD_PRINT);
    assert_string_equal(a.print_stage, "attn");
    assert_string_equal(a.opt.lesson_path, L);
    args_free(&a);
    assert_int_equal(parse(&a, L " --describe"), 0);
    assert_int_equal(a.cmd, CMD_DESCRIBE);
    assert_string_equal(a.opt.lesson_path, L);
    args_free(&a);
    assert_int_equal(parse(&a, L " --export out --batch 1 --format svg --size 640x480"), 0);
    assert_int_equal(a.cmd, CMD_EXPORT);
    assert_string_equal(a.export_dir, "out");
    assert_int_equal(a.ex.batch, 1);
    assert_int_equal(a.ex.format, EXPORT_SVG);
    assert_int_equal(a.opt.width, 640);
    args_free(&a);
    assert_int_equal(parse(&a, "--set model.scale=1 " L " --set mask=causal --dump"), 0);
    assert_int_equal(a.n_sets, 2);
    assert_string_equal(a.edits.set[1], "mask=causal");
    args_free(&a);
    // every form of the usage text
    ok(L, CMD_WINDOW);
    ok("", CMD_WINDOW);
    ok("--font x.ttf --lang en --size 800x600 --fullscreen --projector --lessons lessons " L, CMD_WINDOW);
    ok("--study " L, CMD_WINDOW);
    ok("--presenter " L, CMD_WINDOW);
    ok("--describe --presenter --size 640x720 " L, CMD_DESCRIBE);
    ok("--check " L " " L, CMD_CHECK);
    ok(L " " L " --check", CMD_CHECK);
    ok("--dump " L, CMD_DUMP);
    ok("--print scores " L, CMD_PRINT);
    ok("--describe " L " --lang zh --batch 1 --head 1 --size 1920x1080", CMD_DESCRIBE);
    ok("--export d " L " --animate --fps 12 --stage scores --format gif", CMD_EXPORT);
    ok("--quiz " L " --lang zh --seed 7", CMD_QUIZ);
    ok("--handout h.pdf " L " --lang zh --paper letter --batch 1 --head 0", CMD_HANDOUT);
    ok("--handout h.pdf " L " --worksheet", CMD_HANDOUT);
    ok("--export d " L " --projector --format mp4 --animate --hold 0.5 --split", CMD_EXPORT);
    ok("--describe " L " --projector --size 3840x2160", CMD_DESCRIBE);
    ok("--icon i.svg", CMD_ICON);
    ok("--icon i.png --size 64", CMD_ICON);
    ok("--size 64 --icon i.png", CMD_ICON);
    ok("--set model.scale=1 --save o.json " L, CMD_WINDOW);
    ok("--help", CMD_HELP);
    ok("-h", CMD_HELP);
    ok(L " --version", CMD_VERSION);
    ok("-- " L, CMD_WINDOW);
    // GNU order even when POSIXLY_CORRECT asks getopt to stop at the first operand
    setenv("POSIXLY_CORRECT", "1", 1);
    ok(L " --describe --lang zh", CMD_DESCRIBE);
    unsetenv("POSIXLY_CORRECT");
    assert_int_equal(parse(&a, "--dump -- " L), 0);
    assert_string_equal(a.opt.lesson_path, L);
    args_free(&a);
}

static void test_usage_errors(void **state)
{
    (void)state;
    usage("--bogus", "unknown option \"--bogus\"");
    usage("--lang", "--lang needs en or zh");
    usage("--lang fr " L, "expected en or zh");
    usage("--dump", "--dump needs exactly one LESSON");
    usage("--dump " L " " L, "more than one LESSON");
    usage("--print", "--print needs STAGE and LESSON");
    usage("--print attn", "--print needs STAGE and LESSON");
    usage("--handout x.pdf", "needs FILE.pdf and LESSON");
    usage("--handout --lang " L, "needs FILE.pdf and LESSON");
    usage("--paper a4 " L, "goes with --handout");
    usage("--dump --quiz " L, "give only one of");
    usage("--check", "needs at least one LESSON");
    usage("--check --set a=1 " L, "do not go with --check");
    usage("--animate " L, "go with --export");
    usage("--export d --format mp4 " L, "needs --animate");
    usage("--icon i.png --size 64x64", "--icon --size");
    usage("--icon i.png " L, "--icon takes only FILE and --size N");
    usage("--size 12x12 " L, "--size");
    usage("--quiz --batch 1 " L, "do not go with --quiz");
    usage("--study --presenter " L, "do not go together");
    usage("--export d --presenter " L, "--presenter goes with the window and --describe");
    usage("--quiz --presenter " L, "--presenter goes with the window and --describe");
    usage("--lessons /nonexistent-dir " L, "is not a directory");
    // issue 23: options that would be silently ignored
    usage("--handout h.pdf --projector " L, "--projector goes with the window, --export and --describe");
    usage("--quiz --projector " L, "--projector goes with");
    usage("--export d --hold 2 " L, "--hold goes with --export --format gif or mp4");
    usage("--export d --format pdf --split " L, "--split goes with --export --format gif or mp4");
    usage("--export d --worksheet " L, "--worksheet goes with --handout");
    usage("--export d --format mp4 --animate --hold 61 " L, "--hold: expected SECONDS from 0 to 60");
    usage("--print scores --backward " L, "--backward goes with --dump, the window, --export"); // issue 38: the gradients
    ok("--backward --dump " L, CMD_DUMP);
    ok("--describe --backward " L, CMD_DESCRIBE); // the backward view (its stages: session_set_backward)
    ok("--export d --backward " L, CMD_EXPORT);
}

// Issue 24: a link to a frame (the browser's URL) opens the window at a stage and slice.
static void test_window_at_stage(void **state)
{
    (void)state;
    Args a;
    assert_int_equal(parse(&a, "--stage attn --batch 1 --head 1 " L), 0);
    assert_int_equal(a.cmd, CMD_WINDOW);
    assert_string_equal(a.opt.stage, "attn");
    assert_int_equal(a.opt.batch, 1);
    assert_int_equal(a.opt.head, 1);
    args_free(&a);
    usage("--stage attn --dump " L, "--stage goes with --export and the window");
    usage("--head 1 --dump " L, "--batch and --head go with");
    usage("--stage attn --save o.json " L, "--stage goes with --export and the window");
}

// Issue 27 item 5: --save does not swallow the other commands, and every option is
// checked before the save (main saves only once args_parse returned 0).
static void test_save_with_commands(void **state)
{
    (void)state;
    ok("--set model.scale=1 --save o.json --quiz " L, CMD_QUIZ);
    ok("--save o.json --handout h.pdf " L, CMD_HANDOUT);
    ok("--save o.json --dump " L, CMD_DUMP);
    ok("--save o.json --export d " L, CMD_EXPORT);
    usage("--save o.json --study " L, "--study goes with the window");
    usage("--save o.json --seed 3 " L, "--seed goes with --quiz");
    usage("--save o.json --describe " L " --format svg", "go with --export");
    usage("--save o.json --presenter " L, "--save without a command");
    usage("--save o.json", "--save needs a LESSON");
    usage("--save o.json --check " L, "do not go with --check");
    usage("--save a.json --save b.json " L, "--save given twice");
}

// Issue 27 item 8: --save FILE where FILE is the lesson (by another name too).
static void test_save_over_lesson(void **state)
{
    (void)state;
    usage("--set model.scale=1 --save " L " " L, "is the LESSON itself");
    usage("--save ./" L " " L, "is the LESSON itself");
    char dir[] = "/tmp/attnviz-args-XXXXXX", line[600], link[300];
    assert_non_null(mkdtemp(dir));
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(link, sizeof link, "%s/l.json", dir);
    char target[PATH_MAX + 40];
    snprintf(target, sizeof target, "%s/%s", cwd, L);
    assert_int_equal(symlink(target, link), 0);
    snprintf(line, sizeof line, "--save %s %s", link, L);
    usage(line, "is the LESSON itself");
    unlink(link);
    rmdir(dir);
}

// Issue 27 item 4: no LESSON opens the lesson beside the assets, not ./lessons/.
static void test_default_lesson(void **state)
{
    (void)state;
    char cwd[PATH_MAX], want[PATH_MAX], got[1200], real[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_non_null(realpath(L, want));
    char dir[] = "/tmp/attnviz-args-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[300];
    snprintf(p, sizeof p, "%s/lessons", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/lessons/arange-2x4x4.json", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("{\"planted\": true}\n", f);
    fclose(f);
    assert_int_equal(chdir(dir), 0);
    bool found = assets_default_lesson(got, sizeof got);
    assert_int_equal(chdir(cwd), 0);
    assert_true(found);
    assert_non_null(realpath(got, real));
    assert_string_equal(real, want);
    unlink(p);
    snprintf(p, sizeof p, "%s/lessons", dir);
    rmdir(p);
    rmdir(dir);
}

// The address (nav: the browser's language) through url_args_parse, then args_parse.
static int parse_url(Args *a, UrlArgs *u, const char *query, const char *nav)
{
    char err[256];
    if (!url_args_parse(u, query, nav, err, sizeof err)) fail_msg("%s: refused: %s", query, err);
    char *argv[URL_ARGS_ARGV_MAX + 2] = {"attnviz"};
    for (int i = 0; i < u->argc; i++) argv[i + 1] = (char *)u->argv[i];
    FILE *f = tmpfile();
    assert_non_null(f);
    int rc = args_parse(a, u->argc + 1, argv, f);
    fclose(f);
    return rc;
}

static void url_refused(const char *query, const char *want)
{
    UrlArgs u;
    char err[256];
    assert_false(url_args_parse(&u, query, NULL, err, sizeof err));
    if (!strstr(err, want)) fail_msg("%s: \"%s\" (expected \"%s\")", query, err, want);
    assert_int_equal(u.argc, 0);
}

static void test_page_address(void **state)
{
    (void)state;
    Args a;
    static UrlArgs u;
    assert_int_equal(parse_url(&a, &u, "?lesson=causal-decoder&stage=attn&lang=zh&batch=1&head=0&projector=1&study=1", NULL), 0);
    assert_int_equal(a.cmd, CMD_WINDOW);
    assert_string_equal(a.opt.lesson_path, "/attnviz/lessons/causal-decoder.json");
    assert_string_equal(a.opt.stage, "attn");
    assert_int_equal(a.opt.batch, 1);
    assert_int_equal(a.opt.head, 0);
    assert_true(a.opt.lang == LANG_ZH && a.opt.projector && a.opt.study);
    args_free(&a);
    // a value is a value, never an option; '+' a space, %XX a byte, the first one counts
    assert_int_equal(parse_url(&a, &u, "stage=--help&stage=attn", "en-GB"), 0);
    assert_int_equal(a.cmd, CMD_WINDOW);
    assert_string_equal(a.opt.stage, "--help");
    args_free(&a);
    assert_int_equal(parse_url(&a, &u, "stage=a+b%20c%2&projector=0&study=no", NULL), 0);
    assert_string_equal(a.opt.stage, "a b c%2");
    assert_false(a.opt.projector || a.opt.study || a.opt.lesson_path);
    args_free(&a);
    // lesson=: a shipped name, else a file the page fetches (not on the command line)
    assert_int_equal(parse_url(&a, &u, "lesson=course1/lesson.json&projector", "zh-TW"), 0);
    assert_true(!u.shipped && strcmp(u.lesson, "course1/lesson.json") == 0 && !a.opt.lesson_path);
    assert_true(a.opt.projector && a.opt.lang == LANG_ZH);
    args_free(&a);
    assert_int_equal(parse_url(&a, &u, "lesson=..%2Fetc&lang=EN", "zh-CN"), 0);
    assert_true(!u.shipped && !a.opt.lesson_path && a.opt.lang == LANG_EN);
    args_free(&a);
    url_refused("stage=%00", "stage= holds a zero byte");
    char big[1200] = "lesson=";
    memset(big + 7, 'x', 1100);
    url_refused(big, "lesson= is too long");
    // written back: the same fields, percent-encoded where needed
    assert_true(url_args_parse(&u, "lesson=causal-decoder&stage=a%20b%26c&batch=1&head=0&lang=zh&study=1", NULL, errbuf,
                               sizeof errbuf));
    char q[URL_ARGS_QUERY_MAX + 1];
    assert_true(url_args_query(&u, q, sizeof q) > 0);
    assert_string_equal(q, "lesson=causal-decoder&stage=a%20b%26c&batch=1&head=0&lang=zh&study=1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_any_order),
        cmocka_unit_test(test_window_at_stage),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_save_with_commands),
        cmocka_unit_test(test_save_over_lesson),
        cmocka_unit_test(test_default_lesson),
        cmocka_unit_test(test_page_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
