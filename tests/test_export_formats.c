// test_export_formats.c — walks the export-format table (src/app/export_format.h), so a
// row added without its writer, its file check or its place in the menus fails here:
//  - table: each row's id, name (--format parses it), writer with what its kind needs
//    (pixels, a drawing, a file opened and closed), unique E-menu digits beside the
//    handout's, every row the page makes reachable from the page's E menu;
//  - export: every format through export_run (--export --format EXT, --animate for
//    an animation) at 320×180: exit 0, exactly frames.json and its file(s) named
//    frames.EXT or 0000-attn.EXT, the format's file signature, frames.json complete and
//    naming the format;
//  - page: what the E menu offers in the page (browser) is exactly the table's rows
//    "in the page", and no handout; on the desktop every menu row and the handout;
//  - texts: the E prompt and the help line name each menu row ("3 MP4") in English and
//    Chinese, the page's prompt names exactly the page's formats, and --help, the man
//    page and src/app/README.md list every format (png|svg|…);
//  - window: in the window (in-process, offscreen), E then each menu row's digit writes
//    a new folder with that format's file(s), and E 2 the handout.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/export.h"
#include "file_support.h"
#include "i18n.h"
#include "window_driver.h"

#define L "lessons/arange-2x4x4.json"

static char tmp_dir[64];
static char bin[512]; // build/attnviz beside this test's directory

// Each format's file signature: a format without one here fails test_export_each.
static const struct {
    const char *ext;
    long offset;
    const char *magic;
} SIGNATURES[] = {
    {"png", 0, "\x89PNG\r\n\x1a\n"},
    {"svg", 0, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "},
    {"pdf", 0, "%PDF-"},
    {"gif", 0, "GIF89a"},
    {"mp4", 4, "ftyp"},
};

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void upper(char *out, const char *s)
{
    while ((*out++ = (char)toupper((unsigned char)*s++))) {}
}

// --- the table ----------------------------------------------------------------------------

static void test_table(void **state)
{
    (void)state;
    bool key_used[10] = {false};
    key_used[EXPORT_MENU_HANDOUT] = key_used[EXPORT_MENU_WORKSHEET] = true;
    for (int i = 0; i < EXPORT_FORMAT_COUNT; i++) {
        const ExportFormatInfo *f = export_format_info((ExportFormat)i);
        const ExportWriter *w = f->writer;
        assert_int_equal(f->format, i);
        assert_string_equal(export_format_name((ExportFormat)i), f->ext);
        ExportFormat parsed = EXPORT_FORMAT_COUNT;
        assert_true(export_format_parse(f->ext, &parsed));
        assert_int_equal(parsed, i);
        assert_non_null(w);
        switch (f->kind) {
        case EXPORT_RASTER: // encoder threads write each frame's file
            assert_non_null(w->pixels);
            assert_int_equal(f->files, EXPORT_FILE_A_FRAME);
            break;
        case EXPORT_VECTOR: assert_non_null(w->draw); break;
        case EXPORT_VIDEO: // frames in order into one file
            assert_non_null(w->pixels);
            assert_int_equal(f->files, EXPORT_ONE_FILE);
            break;
        }
        if (f->files == EXPORT_ONE_FILE) assert_true(w->open && w->close);
        assert_true((w->wants_observe == NULL) == (w->observe == NULL));
        if (w->open) assert_non_null(w->close); // what is opened is closed (kept or removed)
        assert_true(f->menu_key >= 0 && f->menu_key <= 9);
        if (f->menu_key) {
            assert_false(key_used[f->menu_key]); // one digit, one entry
            key_used[f->menu_key] = true;
        }
        if (f->in_page) assert_true(f->menu_key > 0); // the page reaches it only through E
    }
    ExportFormat none;
    assert_false(export_format_parse("jpeg", &none));
    assert_false(export_format_parse("", &none));
}

// --- every format exported ---------------------------------------------------------------

static void test_export_each(void **state)
{
    (void)state;
    bool have_ffprobe = system("command -v ffprobe >/dev/null 2>&1") == 0; // (FFmpeg: installed with it)
    int skipped = 0;
    for (int i = 0; i < EXPORT_FORMAT_COUNT; i++) {
        const ExportFormatInfo *f = export_format_info((ExportFormat)i);
        if (f->kind == EXPORT_VIDEO && !have_ffprobe) {
            print_message("%s: no FFmpeg here (make deps installs it), not checked\n", f->ext);
            skipped++;
            continue;
        }
        char dir[256], file[512], path[768];
        snprintf(dir, sizeof dir, "%s/cli-%s", tmp_dir, f->ext);
        ExportOptions o;
        export_options_init(&o);
        o.dir = dir, o.lesson_path = L, o.width = 320, o.height = 180, o.stage = "attn", o.quiet = true;
        o.format = (ExportFormat)i;
        o.animate = f->animated;
        int rc = export_run(&o);
        if (rc != 0) fail_msg("--export --format %s: exit %d", f->ext, rc);
        if (f->files == EXPORT_ONE_FILE)
            snprintf(file, sizeof file, "frames.%s", f->ext);
        else
            snprintf(file, sizeof file, "0000-attn.%s", f->ext);
        // exactly frames.json and the file
        DIR *d = opendir(dir);
        assert_non_null(d);
        int n = 0;
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
            if (strcmp(e->d_name, "frames.json") != 0 && strcmp(e->d_name, file) != 0)
                fail_msg("--format %s wrote %s; expected only frames.json and %s", f->ext, e->d_name, file);
            n++;
        }
        closedir(d);
        if (n != 2) fail_msg("--format %s: %d files in %s, expected frames.json and %s", f->ext, n, dir, file);
        // its signature
        int sig = -1;
        for (int k = 0; k < (int)(sizeof SIGNATURES / sizeof *SIGNATURES); k++)
            if (strcmp(SIGNATURES[k].ext, f->ext) == 0) sig = k;
        if (sig < 0) fail_msg("no file signature for format %s: add it to SIGNATURES", f->ext);
        char *data = NULL;
        snprintf(path, sizeof path, "%s/%s", dir, file);
        long len = slurp(path, &data);
        long end = SIGNATURES[sig].offset + (long)strlen(SIGNATURES[sig].magic);
        if (len < end || memcmp(data + SIGNATURES[sig].offset, SIGNATURES[sig].magic, strlen(SIGNATURES[sig].magic)))
            fail_msg("%s does not start as a %s file does", path, f->ext);
        free(data);
        // frames.json: complete, the format, the file
        snprintf(path, sizeof path, "%s/frames.json", dir);
        assert_true(slurp(path, &data) > 0);
        char want[640];
        snprintf(want, sizeof want, "\"format\": \"%s\", \"complete\": true", f->ext);
        if (!strstr(data, want)) fail_msg("%s lacks %s", path, want);
        snprintf(want, sizeof want, "{\"file\": \"%s\"", file);
        if (!strstr(data, want)) fail_msg("%s lacks %s", path, want);
        free(data);
    }
    if (skipped) print_message("%d of %d formats not checked\n", skipped, EXPORT_FORMAT_COUNT);
}

// --- the page's menu -----------------------------------------------------------------------

static void test_menu_page(void **state)
{
    (void)state;
    for (int browser = 0; browser <= 1; browser++) {
        bool offered[EXPORT_FORMAT_COUNT] = {false};
        int handouts = 0;
        for (int digit = 0; digit <= 9; digit++) {
            bool handout = false;
            const ExportFormatInfo *f = export_format_menu(digit, browser, &handout);
            if (f) {
                assert_int_equal(f->menu_key, digit);
                assert_false(handout);
                offered[f->format] = true;
            }
            if (handout) assert_true(digit == EXPORT_MENU_HANDOUT || digit == EXPORT_MENU_WORKSHEET);
            handouts += handout;
        }
        assert_int_equal(handouts, browser && !EXPORT_HANDOUT_IN_PAGE ? 0 : 2); // the handout, the worksheet
        for (int i = 0; i < EXPORT_FORMAT_COUNT; i++) {
            const ExportFormatInfo *f = export_format_info((ExportFormat)i);
            bool want = f->menu_key > 0 && (f->in_page || !browser);
            if (offered[i] != want)
                fail_msg("%s's E menu %s %s", browser ? "the page" : "the window", offered[i] ? "offers" : "lacks", f->ext);
        }
    }
}

// --- the texts -------------------------------------------------------------------------------

static void expect_in(const char *what, const char *text, const char *s, bool want)
{
    if ((strstr(text, s) != NULL) != want) fail_msg("%s \"%s\" %s \"%s\"", what, text, want ? "lacks" : "names", s);
}

static void test_texts(void **state)
{
    (void)state;
    char err[512];
    if (!i18n_load("assets", err, sizeof err)) fail_msg("%s", err);
    for (int lang = LANG_EN; lang <= LANG_ZH; lang++) {
        const char *choose = i18n_get((Lang)lang, "app.export_choose");
        const char *help = i18n_get((Lang)lang, "keys.export");
        const char *web = i18n_get((Lang)lang, "app.export_choose_web");
        const char *web_help = i18n_get((Lang)lang, "keys.export_web");
        expect_in("app.export_choose", choose, "2 PDF", true); // the handout
        expect_in("keys.export", help, "2 PDF", true);
        expect_in("app.export_choose", choose, "7 PDF", true); // the worksheet
        expect_in("keys.export", help, "7 PDF", true);
        expect_in("app.export_choose_web", web, "PDF", EXPORT_HANDOUT_IN_PAGE); // (the page's PDFs need cairo)
        for (int i = 0; i < EXPORT_FORMAT_COUNT; i++) {
            const ExportFormatInfo *f = export_format_info((ExportFormat)i);
            char name[16], entry[32];
            upper(name, f->ext);
            snprintf(entry, sizeof entry, "%d %s", f->menu_key, name);
            expect_in("app.export_choose", choose, entry, f->menu_key > 0);
            expect_in("keys.export", help, entry, f->menu_key > 0);
            expect_in("app.export_choose_web", web, name, f->in_page);
            expect_in("keys.export_web", web_help, name, f->in_page);
            // a browser without an H.264 encoder: the same but MP4, and why it is missing (issue 40)
            const char *no = i18n_get((Lang)lang, "app.export_choose_web_no_mp4");
            const char *no_help = i18n_get((Lang)lang, "keys.export_web_no_mp4");
            expect_in("app.export_choose_web_no_mp4", no, f->format == EXPORT_MP4 ? entry : name,
                      f->in_page && f->format != EXPORT_MP4);
            expect_in("keys.export_web_no_mp4", no_help, f->format == EXPORT_MP4 ? entry : name,
                      f->in_page && f->format != EXPORT_MP4);
        }
        for (int k = 0; k < 3; k++) {
            const char *key = k == 0 ? "app.export_choose_web_no_mp4" : k == 1 ? "keys.export_web_no_mp4" : "app.export_no_mp4";
            expect_in(key, i18n_get((Lang)lang, key), "H.264", true);
        }
    }
    i18n_free();
    // --help, the man page and the README list every format
    char list[128] = "", cmd[700], *text = NULL;
    for (int i = 0; i < EXPORT_FORMAT_COUNT; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "|" : "", export_format_name((ExportFormat)i));
    snprintf(cmd, sizeof cmd, "%s --help > %s/help.txt 2>&1", bin, tmp_dir);
    assert_int_equal(system(cmd), 0);
    const char *files[] = {"help.txt", "assets/install/attnviz.1", "src/app/README.md"};
    for (int k = 0; k < 3; k++) {
        char path[256];
        if (k == 0) snprintf(path, sizeof path, "%s/%s", tmp_dir, files[k]);
        else snprintf(path, sizeof path, "%s", files[k]);
        assert_true(slurp(path, &text) > 0);
        if (!strstr(text, list)) fail_msg("%s does not list the formats as %s", files[k], list);
        free(text);
    }
}

// --- the window's E menu -------------------------------------------------------------------------

static char save_dir[128];
static int menu_folder[EXPORT_FORMAT_COUNT]; // the folder number E then each row's digit wrote

// The first N of ATTNVIZ_SAVE_DIR/attnviz-export-arange-2x4x4-N not taken (the window's rule).
static int next_folder(void)
{
    char p[256];
    for (int i = 1;; i++) {
        snprintf(p, sizeof p, "%s/attnviz-export-arange-2x4x4-%d", save_dir, i);
        if (!file_exists(p)) return i;
    }
}

static void menu_script(Driver *d)
{
    for (int i = 0; i < EXPORT_FORMAT_COUNT; i++) {
        const ExportFormatInfo *f = export_format_info((ExportFormat)i);
        if (!f->menu_key) continue;
        int n = next_folder();
        char digit[2] = {(char)('0' + f->menu_key), 0}, done[320];
        snprintf(done, sizeof done, "%s/attnviz-export-arange-2x4x4-%d/frames.json", save_dir, n);
        wd_key(d, "E");
        wd_key(d, digit);
        for (int k = 0; k < 20000 && !file_exists(done); k++) wd_frames(d, 1); // the export ends
        if (!file_exists(done)) wd_fail(d, "E %s (%s): no %s", digit, f->ext, done);
        menu_folder[i] = n;
        wd_settle(d);
    }
    const int documents[] = {EXPORT_MENU_HANDOUT, EXPORT_MENU_WORKSHEET};
    for (int k = 0; k < 2; k++) {
        char digit[2] = {(char)('0' + documents[k]), 0};
        wd_key(d, "E");
        wd_key(d, digit); // the handout, the worksheet: written at once
        wd_settle(d);
    }
    wd_key_mod(d, "Q", KMOD_CTRL);
    wd_frames(d, 5);
}

static void test_menu_window(void **state)
{
    (void)state;
    if (system("command -v ffprobe >/dev/null 2>&1") != 0) skip(); // GIF, MP4: FFmpeg
    snprintf(save_dir, sizeof save_dir, "%s/window", tmp_dir);
    mkdir(save_dir, 0700);
    setenv("ATTNVIZ_SAVE_DIR", save_dir, 1);
    AppOptions o = {.lesson_path = L, .lang = LANG_EN, .width = 480, .height = 270};
    assert_int_equal(wd_run("menu", menu_script, &o), 0);
    for (int i = 0; i < EXPORT_FORMAT_COUNT; i++) {
        const ExportFormatInfo *f = export_format_info((ExportFormat)i);
        if (!f->menu_key) continue;
        char dir[256], path[512], *json = NULL;
        snprintf(dir, sizeof dir, "%s/attnviz-export-arange-2x4x4-%d", save_dir, menu_folder[i]);
        snprintf(path, sizeof path, "%s/frames.json", dir);
        assert_true(slurp(path, &json) > 0);
        char want[64];
        snprintf(want, sizeof want, "\"format\": \"%s\", \"complete\": true", f->ext);
        if (!strstr(json, want)) fail_msg("E %d wrote %s without %s", f->menu_key, path, want);
        free(json);
        if (f->files == EXPORT_ONE_FILE) snprintf(path, sizeof path, "%s/frames.%s", dir, f->ext);
        else snprintf(path, sizeof path, "%s/0000-input.%s", dir, f->ext);
        if (!file_exists(path)) fail_msg("E %d (%s) wrote no %s", f->menu_key, f->ext, path);
    }
    char path[256];
    snprintf(path, sizeof path, "%s/attnviz-handout-arange-2x4x4-1.pdf", save_dir);
    if (!file_exists(path)) fail_msg("E %d wrote no handout %s", EXPORT_MENU_HANDOUT, path);
    snprintf(path, sizeof path, "%s/attnviz-worksheet-arange-2x4x4-1.pdf", save_dir);
    if (!file_exists(path)) fail_msg("E %d wrote no worksheet %s", EXPORT_MENU_WORKSHEET, path);
    char cmd[1200]; // a worksheet, not a second handout: its subtitle (handout.worksheet) and the answers' page
    snprintf(cmd, sizeof cmd, "pdftotext %s - | grep -q 'A worksheet on multi-head attention' && pdftotext %s - | grep -q 'Answers'",
             path, path);
    if (system("command -v pdftotext >/dev/null 2>&1") == 0 && system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "pdftotext %s - | head -5 >&2", path);
        (void)!system(cmd);
        fail_msg("E %d: %s is not a worksheet", EXPORT_MENU_WORKSHEET, path);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    test_bin_path(bin, sizeof bin, argv[0]);
    setenv("SDL_VIDEODRIVER", "offscreen", 0);
    unsetenv("ATTNVIZ_TEST_CLOCK");
    setenv("ATTNVIZ_ASSETS", "assets", 0); // the tests run from the top of the tree
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/attnviz-formats-XXXXXX");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    char data[128];
    snprintf(data, sizeof data, "%s/data", tmp_dir);
    setenv("XDG_DATA_HOME", data, 1); // (the study mode's progress file, never the user's)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_export_each),
        cmocka_unit_test(test_menu_page),
        cmocka_unit_test(test_texts),
        cmocka_unit_test(test_menu_window),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_dir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
