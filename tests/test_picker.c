// test_picker.c — the lesson picker without a window: listing directories of
// good and bad lessons, titles in both languages, sorting, the current lesson,
// moving and scrolling the selection, the overlay's geometry and hit-testing,
// display paths.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmpmenu.h"
#include "compare.h"
#include "expview.h"
#include "i18n.h"
#include "picker.h"

static char tmp[64], tmp2[80];

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#define LESSON(title) \
    "{\"title\": " title ", \"model\": {\"d_model\": 4, \"n_heads\": 2}," \
    " \"input\": {\"query\": {\"shape\": [1, 2, 4], \"arange\": [0, 8]}}, \"weights\": {\"init\": {\"seed\": 1}}}"

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/attnviz-picker-XXXXXX");
    if (!mkdtemp(tmp)) return -1;
    snprintf(tmp2, sizeof tmp2, "%s/more", tmp);
    if (mkdir(tmp2, 0777) != 0) return -1;
    write_file(tmp, "b-second.json", LESSON("{\"en\": \"Second\", \"zh\": \"第二课\"}"));
    write_file(tmp, "a-first.json", LESSON("\"First (English only)\""));
    write_file(tmp, "c-bad-heads.json",
               "{\"title\": \"x\", \"model\": {\"d_model\": 4, \"n_heads\": 3}, \"input\": {\"query\": [[1, 2, 3, 4]]},"
               " \"weights\": {\"init\": {\"seed\": 1}}}");
    write_file(tmp, "d-not-json.json", "this is not JSON\n");
    write_file(tmp, "notes.txt", "not a lesson: ignored\n");
    write_file(tmp, ".hidden.json", LESSON("\"hidden\""));
    write_file(tmp2, "a-first.json", LESSON("{\"en\": \"First, again\", \"zh\": \"又是第一课\"}"));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_scan_sort_titles_errors(void **state)
{
    (void)state;
    Picker p;
    picker_init(&p);
    char cur[128];
    snprintf(cur, sizeof cur, "%s/b-second.json", tmp);
    // the same directory twice (and a missing one, and NULL) is listed once
    char again[128];
    snprintf(again, sizeof again, "%s/more/..", tmp);
    const char *dirs[] = {tmp, NULL, "/nonexistent-attnviz-dir", again, tmp2};
    int n = picker_scan(&p, dirs, 5, cur);
    assert_int_equal(n, 5);
    // sorted by file name, then path: a-first (tmp), a-first (tmp/more), b-second, c-bad, d-not-json
    assert_string_equal(p.items[0].name, "a-first.json");
    assert_string_equal(p.items[1].name, "a-first.json");
    assert_true(strcmp(p.items[0].path, p.items[1].path) < 0);
    assert_string_equal(p.items[2].name, "b-second.json");
    assert_string_equal(p.items[3].name, "c-bad-heads.json");
    assert_string_equal(p.items[4].name, "d-not-json.json");
    // titles in both languages; zh falls back to en
    assert_string_equal(picker_title(&p.items[0], LANG_EN), "First (English only)");
    assert_string_equal(picker_title(&p.items[0], LANG_ZH), "First (English only)");
    assert_string_equal(picker_title(&p.items[1], LANG_ZH), "又是第一课");
    assert_string_equal(picker_title(&p.items[2], LANG_EN), "Second");
    assert_string_equal(picker_title(&p.items[2], LANG_ZH), "第二课");
    // invalid lessons: listed with their one-line error, titled by file name
    assert_null(p.items[2].error);
    assert_non_null(p.items[3].error);
    assert_non_null(strstr(p.items[3].error, "model.n_heads"));
    assert_null(strchr(p.items[3].error, '\n'));
    assert_string_equal(picker_title(&p.items[3], LANG_ZH), "c-bad-heads.json");
    assert_non_null(strstr(p.items[4].error, "JSON"));
    // the current lesson is marked and selected
    assert_int_equal(p.current, 2);
    assert_int_equal(p.sel, 2);
    assert_non_null(strstr(p.looked_in, tmp));
    // rescanning replaces the list; an unknown current path selects the first item
    n = picker_scan(&p, dirs, 1, "/nowhere.json");
    assert_int_equal(n, 4);
    assert_int_equal(p.current, -1);
    assert_int_equal(p.sel, 0);
    picker_free(&p);
    assert_int_equal(p.n, 0);
    // nothing to list
    const char *none[] = {"/nonexistent-attnviz-dir"};
    assert_int_equal(picker_scan(&p, none, 1, NULL), 0);
    assert_int_equal(p.sel, -1);
    picker_move(&p, 1);
    assert_int_equal(p.sel, -1);
    picker_free(&p);
}

static void test_move_scroll_layout_hit(void **state)
{
    (void)state;
    Picker p;
    picker_init(&p);
    const char *dirs[] = {"lessons", tmp};
    int n = picker_scan(&p, dirs, 2, "lessons/arange-2x4x4.json");
    assert_true(n >= 10);
    assert_string_equal(p.items[p.sel].name, "arange-2x4x4.json");
    assert_int_equal(p.sel, p.current);
    picker_select(&p, 0);
    picker_move(&p, -1);
    assert_int_equal(p.sel, 0); // clamped at the top
    picker_move(&p, 3);
    assert_int_equal(p.sel, 3);
    picker_move(&p, 1000);
    assert_int_equal(p.sel, n - 1); // and at the bottom
    picker_select(&p, -5);
    assert_int_equal(p.sel, 0);
    // scrolling keeps the selection among the rows shown
    picker_select(&p, n - 1);
    picker_scroll_to_sel(&p, 4);
    assert_int_equal(p.top, n - 4);
    picker_select(&p, 1);
    picker_scroll_to_sel(&p, 4);
    assert_int_equal(p.top, 1);
    // geometry: rows inside the box, one row per item up to what fits; hit-testing
    for (int size = 0; size < 3; size++) {
        int w = size == 0 ? 1280 : size == 1 ? 640 : 2560, h = size == 0 ? 720 : size == 1 ? 400 : 1440;
        float s = size == 0 ? 1.0f : size == 1 ? 0.5f : 2.0f;
        PickerLayout pl;
        p.top = 0;
        picker_layout(&p, &pl, w, h, s);
        assert_true(pl.rows_fit >= 1);
        assert_int_equal(pl.n_rows, n < pl.rows_fit ? n : pl.rows_fit);
        for (int i = 0; i < pl.n_rows; i++) {
            Rect q = pl.row[i];
            assert_true(q.x >= pl.box.x && q.x + q.w <= pl.box.x + pl.box.w);
            assert_true(q.y >= pl.title.y + pl.title.h && q.y + q.h <= pl.hint.y);
            assert_int_equal(picker_hit(&pl, &p, q.x + q.w / 2, q.y + q.h / 2), pl.first + i);
        }
        assert_int_equal(picker_hit(&pl, &p, pl.box.x - 5, pl.box.y - 5), -1);
        // the selection at the end scrolls the list
        picker_select(&p, n - 1);
        picker_scroll_to_sel(&p, pl.rows_fit);
        picker_layout(&p, &pl, w, h, s);
        assert_true(pl.first <= p.sel && p.sel < pl.first + pl.n_rows);
        // the Lessons… button lies in the status row
        Layout L;
        memset(&L, 0, sizeof L);
        L.s = s;
        L.status = (Rect){(int)(400 * s), (int)(70 * s), (int)(860 * s), (int)(36 * s)};
        Rect b;
        assert_true(picker_button_rect(&L, &b));
        assert_true(b.x >= L.status.x && b.x + b.w == L.status.x + L.status.w);
        assert_true(b.y >= L.status.y && b.y + b.h <= L.status.y + L.status.h);
        L.status.w = (int)(60 * s); // too narrow: no button
        assert_false(picker_button_rect(&L, &b));
    }
    picker_free(&p);
}

static void test_display_path(void **state)
{
    (void)state;
    char out[256];
    picker_display_path("/work/x/build/../assets/../lessons/a.json", "/work/x", out, sizeof out);
    assert_string_equal(out, "lessons/a.json");
    picker_display_path("/work/x/build/../assets/../lessons/a.json", "/elsewhere", out, sizeof out);
    assert_string_equal(out, "/work/x/lessons/a.json");
    picker_display_path("./lessons//a.json", NULL, out, sizeof out);
    assert_string_equal(out, "lessons/a.json");
    picker_display_path("../up/a.json", "/work", out, sizeof out);
    assert_string_equal(out, "../up/a.json");
    picker_display_path("/work/xy/a.json", "/work/x", out, sizeof out); // not under /work/x
    assert_string_equal(out, "/work/xy/a.json");
}

static long peak_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

// issue 15, item 6: the picker reads what it shows cheaply. Four 16 MiB files
// froze the window 10 s at 693 MB: now a title comes from a file's first 16 KiB,
// files over 256 KiB are checked when opened, and a scan checks 8 MiB at most.
static void test_huge_files_cost_little(void **state)
{
    (void)state;
    char dir[128], path[200];
    snprintf(dir, sizeof dir, "%s/huge", tmp);
    assert_int_equal(mkdir(dir, 0777), 0);
    // 16 MiB of zeros after a title: invalid (an unknown key), and 8 M values
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/zeros-%d.json", dir, k);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "{\"title\": {\"en\": \"Zeros %d\", \"zh\": \"零 %d\"}, \"x\": [", k, k);
        static char chunk[1 << 16];
        for (size_t i = 0; i < sizeof chunk; i += 2) chunk[i] = '0', chunk[i + 1] = ',';
        for (int i = 0; i < 256; i++) fwrite(chunk, 1, sizeof chunk, f);
        fputs("0]}", f);
        assert_int_equal(fclose(f), 0);
    }
    // a title after 300 KiB: not read; the file name is shown
    snprintf(path, sizeof path, "%s/late-title.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"description\": \"", f);
    for (int i = 0; i < 300 * 1024; i++) fputc('a', f);
    fputs("\", \"title\": \"Late\"}", f);
    assert_int_equal(fclose(f), 0);
    write_file(dir, "small-bad.json", "{\"title\": \"Small\", \"model\": 1}");
    long before = peak_kib();
    Picker p;
    picker_init(&p);
    const char *dirs[] = {dir};
    assert_int_equal(picker_scan(&p, dirs, 1, NULL), 6);
    long grew = peak_kib() - before;
    if (grew > 32 * 1024) fail_msg("scanning four 16 MiB files raised the peak memory by %ld KiB", grew);
    assert_string_equal(p.items[0].name, "late-title.json");
    assert_null(p.items[0].title[LANG_EN]);
    assert_null(p.items[0].error);
    assert_true(p.items[0].unchecked);
    assert_string_equal(picker_title(&p.items[0], LANG_EN), "late-title.json");
    assert_string_equal(p.items[1].name, "small-bad.json");   // small: checked, its error shown
    assert_non_null(p.items[1].error);
    assert_false(p.items[1].unchecked);
    for (int k = 0; k < 4; k++) {
        const PickerItem *it = &p.items[2 + k];
        char want[32];
        snprintf(want, sizeof want, "零 %d", k);
        assert_string_equal(picker_title(it, LANG_ZH), want);
        assert_null(it->error);   // too large to check here: checked when opened
        assert_true(it->unchecked);
    }
    picker_free(&p);
    // a scan checks 8 MiB at most: of 40 files of 240 KiB, some are only peeked
    char many[140];
    snprintf(many, sizeof many, "%s/many", tmp);
    assert_int_equal(mkdir(many, 0777), 0);
    for (int k = 0; k < 40; k++) {
        snprintf(path, sizeof path, "%s/m%02d.json", many, k);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(LESSON("\"Many\""), f);
        for (int i = 0; i < 240 * 1024; i++) fputc(' ', f);
        assert_int_equal(fclose(f), 0);
    }
    const char *mdirs[] = {many};
    assert_int_equal(picker_scan(&p, mdirs, 1, NULL), 40);
    int checked = 0;
    for (int i = 0; i < p.n; i++) {
        assert_string_equal(picker_title(&p.items[i], LANG_EN), "Many");
        assert_null(p.items[i].error);
        checked += !p.items[i].unchecked;
    }
    assert_true(checked >= 30 && checked <= 34);   // 8 MiB / 240 KiB = 34
    picker_free(&p);
}

// A folder's order.txt puts its lessons first, in its order (comments, blank lines, spaces
// and names of no lesson ignored); the rest follow by name. Each item's line under the title
// is its file name without ".json" (its path only where two share a name).
static void test_teaching_order(void **state)
{
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/ordered", tmp);
    assert_int_equal(mkdir(dir, 0777), 0);
    write_file(dir, "a-first.json", LESSON("\"A\""));
    write_file(dir, "b-second.json", LESSON("\"B\""));
    write_file(dir, "c-third.json", LESSON("\"C\""));
    write_file(dir, "d-fourth.json", LESSON("\"D\""));
    write_file(dir, "order.txt", "# the order we teach\n\n  c-third.json  \nzz-gone.json\na-first.json # then this\r\n");
    Picker p;
    picker_init(&p);
    const char *dirs[] = {dir, tmp2}; // tmp2 has an a-first.json too, and no order
    assert_int_equal(picker_scan(&p, dirs, 2, NULL), 5);
    assert_string_equal(p.items[0].name, "c-third.json");
    assert_int_equal(p.items[0].order, 1);
    assert_string_equal(p.items[1].name, "a-first.json");
    assert_int_equal(p.items[1].order, 2);
    assert_non_null(strstr(p.items[1].path, "/ordered/"));
    // then by name: a-first (tmp2), b-second, d-fourth
    assert_string_equal(p.items[2].name, "a-first.json");
    assert_non_null(strstr(p.items[2].path, "/more/"));
    assert_int_equal(p.items[2].order, 0);
    assert_string_equal(p.items[3].name, "b-second.json");
    assert_string_equal(p.items[4].name, "d-fourth.json");
    // short names: no path, no ".json"; two a-first.json: their paths
    assert_string_equal(p.items[0].short_name, "c-third");
    assert_string_equal(p.items[3].short_name, "b-second");
    assert_string_equal(p.items[1].short_name, p.items[1].shown);
    assert_string_equal(p.items[2].short_name, p.items[2].shown);
    assert_true(strcmp(p.items[1].short_name, p.items[2].short_name) != 0);
    picker_free(&p);
}

// The page's lessons folder (issue 39): the default lesson there, the others listed by the
// manifest with their titles (the lesson's own "title": a string or both languages), in the
// folder's teaching order, remote and unchecked; a file there is listed as itself (not twice);
// entries that are no plain NAME.json or have no title are left out, and so is a manifest that
// is not JSON (the files are listed all the same).
static void test_manifest_lists_lessons_not_here(void **state)
{
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/page", tmp);
    assert_int_equal(mkdir(dir, 0777), 0);
    write_file(dir, "b-default.json", LESSON("\"Here\""));
    write_file(dir, "order.txt", "c-remote.json\nb-default.json\n");
    write_file(dir, PICKER_MANIFEST_FILE,
               "{\"lessons\": [{\"file\": \"b-default.json\", \"title\": \"Here (the manifest's)\", \"bytes\": 9},"
               " {\"file\": \"c-remote.json\", \"title\": {\"en\": \"Far\", \"zh\": \"远处\"}, \"bytes\": 1700000},"
               " {\"file\": \"a-plain.json\", \"title\": \"Plain\"},"
               " {\"file\": \"../escape.json\", \"title\": \"x\"}, {\"file\": \"notes.txt\", \"title\": \"x\"},"
               " {\"file\": \"d-untitled.json\"}, {\"file\": \"e-bad-title.json\", \"title\": 7}, 5]}");
    Picker p;
    picker_init(&p);
    const char *dirs[] = {dir};
    char here[200];
    snprintf(here, sizeof here, "%s/b-default.json", dir);
    assert_int_equal(picker_scan(&p, dirs, 1, here), 3);
    assert_string_equal(p.items[0].name, "c-remote.json"); // the teaching order first
    assert_true(p.items[0].remote && p.items[0].unchecked && !p.items[0].error);
    assert_string_equal(picker_title(&p.items[0], LANG_EN), "Far");
    assert_string_equal(picker_title(&p.items[0], LANG_ZH), "远处");
    assert_string_equal(p.items[0].short_name, "c-remote");
    char want[200];
    snprintf(want, sizeof want, "%s/c-remote.json", dir);
    assert_string_equal(p.items[0].path, want);
    assert_string_equal(p.items[1].name, "b-default.json"); // the file itself, its own title
    assert_false(p.items[1].remote);
    assert_string_equal(picker_title(&p.items[1], LANG_EN), "Here");
    assert_int_equal(p.current, 1);
    assert_string_equal(p.items[2].name, "a-plain.json");
    assert_true(p.items[2].remote);
    assert_string_equal(picker_title(&p.items[2], LANG_ZH), "Plain"); // (zh: en's)
    write_file(dir, PICKER_MANIFEST_FILE, "{\"lessons\": [ not JSON");
    assert_int_equal(picker_scan(&p, dirs, 1, here), 1);
    assert_false(p.items[0].remote);
    picker_free(&p);
}

// The shipped lessons: order.txt names every one of them (a new lesson is given its place),
// the classic lesson first; each listed by its title with its short name, never a path.
static void test_shipped_order(void **state)
{
    (void)state;
    char cwd[1024];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char lessons[1100];
    snprintf(lessons, sizeof lessons, "%s/lessons", cwd); // absolute, as the installed lessons are
    Picker p;
    picker_init(&p);
    const char *dirs[] = {lessons};
    int n = picker_scan(&p, dirs, 1, NULL);
    assert_true(n >= 20);
    assert_string_equal(p.items[0].name, "arange-2x4x4.json");
    assert_string_equal(p.items[0].short_name, "arange-2x4x4");
    for (int i = 0; i < n; i++) {
        if (p.items[i].order != i + 1) fail_msg("%s is not in lessons/order.txt (place %d)", p.items[i].name, p.items[i].order);
        assert_null(p.items[i].error);
        assert_null(strchr(p.items[i].short_name, '/'));
        assert_null(strstr(p.items[i].short_name, ".json"));
        assert_true(strcmp(picker_title(&p.items[i], LANG_EN), p.items[i].name) != 0); // its title
    }
    picker_free(&p);
}

// The compare menu (Shift+D, cmpmenu.h): the B's of a lesson, each a spec that makes a B of the
// same shapes that differs from A; the conventions its own value or its model leaves unchanged are
// not listed; every head (zeroed and mean), every other checkpoint; other lessons of its shapes; a
// language model's typed text (first).
static const PickerItem *find_item(const Picker *p, const char *spec)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->items[i].path, spec)) return &p->items[i];
    return NULL;
}

static int menu_of_in(const char *path, const char *dir, Picker *p)
{
    char err[LESSON_ERR_MAX + 400];
    Session *a = session_create(path, err, sizeof err);
    if (!a) fail_msg("%s", err);
    picker_init(p);
    const int n = cmpmenu_fill(p, a, dir);
    assert_int_equal(n, p->n);
    assert_string_equal(p->title_key, "cmpmenu.title");
    for (int i = 0; i < p->n; i++) { // each one a B that differs, titled in both languages
        const PickerItem *it = &p->items[i];
        assert_true(it->title[LANG_EN] && it->title[LANG_EN][0] && it->title[LANG_ZH] && it->title[LANG_ZH][0]);
        assert_string_equal(it->short_name, it->path);
        if (strncmp(it->path, "experiment:", 11) == 0) { // (an experiment drawn: its numbers compute)
            ExpView x;
            if (!expview_open(&x, it->path + 11, a, NULL, err, sizeof err)) fail_msg("%s: %s: %s", path, it->path, err);
            expview_free(&x);
            continue;
        }
        if (!strcmp(it->path, CMPMENU_TEXT)) continue; // (the window asks for B's text: app_compare_text)
        CompareSpec sp;
        Session *b = NULL;
        Compare c = {0};
        if (!compare_parse_spec(it->path, &sp, err, sizeof err) || !(b = compare_open_b(a, NULL, &sp, err, sizeof err)) ||
            !compare_traces(&a->trace, &b->trace, &c, err, sizeof err))
            fail_msg("%s: %s: %s", path, it->path, err);
        if (c.n_differ == 0 && strncmp(it->path, "lesson:", 7) != 0) fail_msg("%s: %s changes nothing", path, it->path);
        compare_free(&c);
        session_destroy(b);
    }
    session_destroy(a);
    return n;
}

static int menu_of(const char *path, Picker *p) { return menu_of_in(path, "lessons", p); }

static void test_compare_menu(void **state)
{
    (void)state;
    char err[300];
    if (!i18n_load("assets", err, sizeof err)) fail_msg("%s", err);
    Picker p;
    menu_of("lessons/induction-heads.json", &p);
    static const char *const want[] = {"ablate:l0.h0", "ablate:l1.h1", "ablate-mean:l0.h1", "checkpoint:0",
                                       "set:model.mask_fill=-inf"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!find_item(&p, want[i])) fail_msg("induction-heads: no %s in the menu", want[i]);
    assert_null(find_item(&p, "set:model.window_convention=flash")); // (no window: changes nothing)
    assert_string_equal(find_item(&p, "ablate:l1.h1")->title[LANG_EN], "Ablate layer 1's head 1: its output zeroed");
    assert_ptr_equal(find_item(&p, CMPMENU_TEXT), &p.items[0]); // a language model: a typed text, first
    assert_non_null(strstr(p.items[0].title[LANG_ZH], "输入一段文本"));
    // last, the experiments drawn (patching only with a text typed in: the corrupted run)
    assert_string_equal(p.items[p.n - 3].path, "experiment:ablation");
    assert_string_equal(p.items[p.n - 1].path, "experiment:logit-attribution");
    assert_null(find_item(&p, "experiment:patching"));
    picker_free(&p);
    Session *typed = session_create("lessons/induction-heads.json", err, sizeof err), *t2 = NULL;
    assert_non_null(typed);
    assert_non_null(t2 = session_retext(typed, "qkdmbxakdmbx", err, sizeof err));
    picker_init(&p);
    cmpmenu_fill(&p, t2, NULL);
    assert_string_equal(p.items[p.n - 1].path, "experiment:patching");
    assert_non_null(strstr(p.items[p.n - 1].title[LANG_ZH], "激活修补"));
    picker_free(&p);
    session_destroy(t2), session_destroy(typed);
    menu_of("lessons/arange-2x4x4.json", &p); // (not a language model: no experiment)
    for (int i = 0; i < p.n; i++) assert_true(strncmp(p.items[i].path, "experiment:", 11) != 0);
    picker_free(&p);
    menu_of("lessons/conventions.json", &p);
    static const char *const conv[] = {"set:model.window_convention=flash", "set:model.flash_accumulator=fa1",
                                       "set:model.streaming_positions=cache", "set:model.mask_fill=finfo_min"};
    for (size_t i = 0; i < sizeof conv / sizeof conv[0]; i++)
        if (!find_item(&p, conv[i])) fail_msg("conventions: no %s in the menu", conv[i]);
    assert_null(find_item(&p, "set:model.window_convention=inclusive")); // (its own value)
    picker_free(&p);
    int lessons = 0;
    menu_of("lessons/arange-2x4x4.json", &p);
    for (int i = 0; i < p.n; i++) lessons += !strncmp(p.items[i].path, "lesson:", 7);
    assert_null(find_item(&p, "lesson:lessons/arange-2x4x4.json")); // (itself)
    assert_null(find_item(&p, CMPMENU_TEXT)); // (numbers, not text)
    print_message("arange-2x4x4: %d items, %d lessons of its shapes\n", p.n, lessons);
    picker_free(&p);
    // a directory with another lesson of the same shapes (and some that are not, or are bad)
    char path[128], other[128];
    snprintf(path, sizeof path, "%s/b-second.json", tmp);
    snprintf(other, sizeof other, "lesson:%s/a-first.json", tmp);
    menu_of_in(path, tmp, &p);
    assert_non_null(find_item(&p, other));
    lessons = 0;
    for (int i = 0; i < p.n; i++) lessons += !strncmp(p.items[i].path, "lesson:", 7);
    assert_int_equal(lessons, 1);
    assert_string_equal(find_item(&p, other)->title[LANG_EN], "Another lesson of the same shapes: First (English only)");
    assert_non_null(strstr(find_item(&p, other)->title[LANG_ZH], "形状相同的另一课："));
    picker_free(&p);
    i18n_free();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_sort_titles_errors),
        cmocka_unit_test(test_move_scroll_layout_hit),
        cmocka_unit_test(test_display_path),
        cmocka_unit_test(test_huge_files_cost_little),
        cmocka_unit_test(test_teaching_order),
        cmocka_unit_test(test_shipped_order),
        cmocka_unit_test(test_manifest_lists_lessons_not_here),
        cmocka_unit_test(test_compare_menu),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
